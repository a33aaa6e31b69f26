#!/usr/bin/env bash
# Energy walls (Du et al. 2023 Fig. 3): the C driver evaluates every row of its model table (today the ipc
# model with both collision sets) along the paths over flat planes and faceted circles / cylinders, then
# the analysis recomputes the ipc rows independently, checks the claims and plots. Builds nothing (make
# figures builds first).
# Usage: experiments/energy_wall/run.sh [OUTDIR]          (default plots/out/energy_wall; ~10 s)
#        QUICK=1 experiments/energy_wall/run.sh [OUTDIR]  the same 68 paths and claims, no plot (~8 s)
# Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/energy_wall}
mkdir -p "$out"
. experiments/common.sh  # DRIVERS, PY
analyze_opts=()
[ "${QUICK:-0}" = 1 ] && analyze_opts=(--no-plot)
"$DRIVERS/energy_wall/energy_wall" "$out"
"$PY" experiments/energy_wall/analyze.py "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
