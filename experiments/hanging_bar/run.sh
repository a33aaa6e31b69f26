#!/usr/bin/env bash
# Refinement study of a bar hanging under its own weight: tip displacement vs rho g L^2/(2E).
# Usage: experiments/hanging_bar/run.sh [OUTDIR]   (default plots/out/hanging_bar)
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/hanging_bar}
mkdir -p "$out"
. experiments/common.sh  # CL, thread environment
exact=$(awk 'BEGIN{printf "%.9e", 1000*9.81*1.0*1.0/(2*1e9)}')
table="$out/convergence.dat"
echo "# cells_along_L tip_displacement_m relative_error (exact $exact m)" > "$table"
for n in 2 4 8 16 32; do
    "$CL" run experiments/hanging_bar/bar.json --quiet -o "$out/bar_$n.h5" --set bodies.0.mesh.cells="[2,$n,2]"
    tip=$("$CL" export "$out/bar_$n.h5" /probes/tip | awk '!/^#/{v=$1} END{printf "%.9e", -v}')
    err=$(awk -v u="$tip" -v e="$exact" 'BEGIN{d=u-e; if(d<0)d=-d; printf "%.3e", d/e}')
    echo "$n $tip $err" | tee -a "$table"
done
if command -v gnuplot >/dev/null; then
    gnuplot -e "set terminal pngcairo size 640,480 noenhanced; set output '$out/convergence.png';
      set logscale xy; set xlabel 'cells along the bar'; set ylabel 'relative error of tip displacement';
      set title 'hanging bar: |u - rho g L^2/2E| / (rho g L^2/2E)'; set grid;
      plot '$table' using 1:3 with linespoints lw 2 title 'contactlab (neo-Hookean, nu = 0)'" \
      || echo "gnuplot failed; table in $table"
fi
echo "wrote $table"
