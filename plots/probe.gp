# probe.gp — plot two columns of a file written by `contactlab export` to PNG.
#
# Usage:
#   contactlab export RUN.h5 /steps/time /probes/gap > gap.dat
#   gnuplot plots/probe.gp                                  # gap.dat -> gap.png
#   gnuplot -e "in='gap.dat'; out='gap.png'" plots/probe.gp
#   gnuplot -e "in='f.dat'; xcol=3; ycol=4; title='force vs gap'" plots/probe.gp
#
# Variables (all optional, set with -e before the script name):
#   in     data file (default gap.dat)          out    PNG file (default: in with .png)
#   xcol   column for x (default 1)             ycol   column for y (default 2)
#   title  plot title (default: none)
#
# The export file starts with a header line "# name1 name2 ..." (a comment to gnuplot);
# the axis labels are taken from it. A vector probe gives one column per entry, named
# e.g. /probes/force[2]. Values are printed with 17 significant digits, so nothing is lost.
# With --csv the export has no '#' and uses commas: add `set datafile separator ","` and
# skip the header with `every ::1` if you plot such a file instead.

if (!exists("in"))    in = "gap.dat"
if (!exists("out"))   out = (strlen(in) > 4 && in[strlen(in) - 3:strlen(in)] eq ".dat" ? \
                             in[1:strlen(in) - 4] : in) . ".png"
if (!exists("xcol"))  xcol = 1
if (!exists("ycol"))  ycol = 2
if (!exists("title")) title = ""

# Column names from the header line: word 1 is '#', column k is word k+1.
header = system("head -n 1 '" . in . "'")
xname = word(header, xcol + 1)
yname = word(header, ycol + 1)
if (strlen(xname) == 0) xname = sprintf("column %d", xcol)
if (strlen(yname) == 0) yname = sprintf("column %d", ycol)

if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 900,560 enhanced font "sans,11"
} else {
    set terminal png size 900,560
}
set output out

set title title noenhanced
set xlabel xname noenhanced
set ylabel yname noenhanced
set grid lc rgb "#dddddd"
set key off
set format y "%g"

plot in using xcol:ycol with lines lw 2 lc rgb "#1f77b4"

set output
print "wrote " . out
