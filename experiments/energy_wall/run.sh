#!/usr/bin/env bash
# Energy walls (paper 002 Fig. 3): the C driver evaluates the ipc model's energy and gradient along
# the paths (both collision sets), then the analysis recomputes everything independently, checks the
# claims and plots. Usage: experiments/energy_wall/run.sh [OUTDIR]   (default plots/out/energy_wall)
# Builds nothing (make figures builds first). Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/energy_wall}
mkdir -p "$out"
"${CT_BUILD:-build}/experiments/energy_wall/energy_wall" "$out"
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3  # Debian's python3 has numpy and matplotlib
"$PY" experiments/energy_wall/analyze.py "$out"
