#!/usr/bin/env bash
# Candies with different adhesion coefficients fall on a soft Jell-O block, then an upward pull
# (Gascón et al. 2010 §6, Fig. 1 and 4), lcp_pgs with per-body adhesion parameters: the run with
# adhesion and the same run without (every body's c = 0). Usage:
# experiments/candy_jello/run.sh [OUTDIR] (default plots/out/candy_jello); QUICK=1: coarse meshes,
# no plot. Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/candy_jello}
mkdir -p "$out"
rm -f "$out"/adhesion.h5 "$out"/no_adhesion.h5
. experiments/common.sh  # CL, PY, thread environment
scene=experiments/candy_jello/candy_jello.json
nb=$("$PY" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["bodies"]))' "$scene")
mesh=()
opts=()
if [ "${QUICK:-0}" = 1 ]; then  # the block 5 x 3 x 5 cells, each candy one cell
    mesh=(--set 'bodies.0.mesh.cells=[5,3,5]')
    for ((i = 1; i < nb; ++i)); do mesh+=(--set "bodies.$i.mesh.cells=[1,1,1]"); done
    opts=(--quick --no-plot)
fi
off=()
for ((i = 0; i < nb; ++i)); do off+=(--set "bodies.$i.contact.c=0"); done
"$CL" run "$scene" --quiet --threads 1 -o "$out/adhesion.h5" ${mesh[@]+"${mesh[@]}"}
"$CL" run "$scene" --quiet --threads 1 -o "$out/no_adhesion.h5" ${mesh[@]+"${mesh[@]}"} "${off[@]}"
"$PY" experiments/candy_jello/analyze.py "$out" ${opts[@]+"${opts[@]}"}
