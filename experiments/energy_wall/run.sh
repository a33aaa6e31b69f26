#!/usr/bin/env bash
# Energy walls (Du et al. 2023 Fig. 3): the C driver evaluates every row of its model table (the ipc
# model with both collision sets, imls, and the adhesive rows of ipc_adhesion and sticky imls) along the
# paths over flat planes and faceted circles / cylinders, then the analysis recomputes the ipc and
# ipc_adhesion rows independently, checks the claims and plots. Builds nothing (make figures builds first).
# Usage: experiments/energy_wall/run.sh [OUTDIR]          (default plots/out/energy_wall; ~25 s)
#        QUICK=1 experiments/energy_wall/run.sh [OUTDIR]  the same claims, no plot, adhesive rows on fewer samples
# Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/energy_wall}
mkdir -p "$out"
. experiments/common.sh  # DRIVERS, PY
analyze_opts=()
driver_opts=()
# QUICK: no plot; the adhesive rows on every 5th sample, their forces not recomputed by FD
[ "${QUICK:-0}" = 1 ] && analyze_opts=(--no-plot --quick) && driver_opts=(--quick)
"$DRIVERS/energy_wall/energy_wall" "$out" ${driver_opts[@]+"${driver_opts[@]}"}
"$PY" experiments/energy_wall/analyze.py "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
