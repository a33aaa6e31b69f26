#!/usr/bin/env bash
# Square on a slope (Li, Friction (CMU 15-763)): one run per friction coefficient, then the analysis (table,
# claims, plot). Usage: experiments/slope_2d/run.sh [OUTDIR]   (default plots/out/slope_2d)
# Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/slope_2d}
mkdir -p "$out"
. experiments/common.sh  # CL, PY, thread environment
for mu in 0 0.05 0.1 0.11 0.2; do
    "$CL" run experiments/slope_2d/slope.json --quiet -o "$out/slope_mu$mu.h5" --set contact.mu=$mu
done
"$PY" experiments/slope_2d/analyze.py "$out"
