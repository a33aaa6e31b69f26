"""cli.py — the command line every experiment analysis takes.

    args = cli.parser(__doc__, "plots/out/slope_2d").parse_args()
    args.outdir, args.no_plot            # + args.runs (runs=True), args.quick (quick=True)

OUTDIR is where run.sh wrote the runs and where the analysis writes its tables and figures; a
script adds its own arguments to the parser it gets.
"""
import argparse


def parser(doc, outdir, runs=False, quick=False):
    """An ArgumentParser described by doc (the script's docstring) with the common arguments:
    OUTDIR (optional, default outdir), --no-plot; with runs, RUN.h5 files after OUTDIR (default:
    the script's own choice in OUTDIR); with quick, --quick (the files of the QUICK variant)."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("outdir", nargs="?", default=outdir, metavar="OUTDIR",
                   help=f"folder of the runs and of what the analysis writes (default {outdir})")
    if runs:
        p.add_argument("runs", nargs="*", metavar="RUN.h5", help="run files (default: those run.sh writes in OUTDIR)")
    p.add_argument("--no-plot", action="store_true", help="write no figure")
    if quick:
        p.add_argument("--quick", action="store_true", help="analyse the QUICK variant's runs")
    return p
