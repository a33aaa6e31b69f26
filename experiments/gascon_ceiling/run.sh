#!/usr/bin/env bash
# A cube adhered under a ceiling (Gascón et al. 2010 §6), lcp_pgs: the equilibrium gap at β = 1
# under a slowly growing load, then debonding once the traction passes sqrt(W C), at two mesh
# resolutions. Usage: experiments/gascon_ceiling/run.sh [OUTDIR] (default plots/out/gascon_ceiling);
# QUICK=1: the coarse mesh only, no plot. Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/gascon_ceiling}
mkdir -p "$out"
rm -f "$out"/cells*.h5
. experiments/common.sh  # CL, PY, thread environment
scene=experiments/gascon_ceiling/ceiling.json
cells="2 4"
opts=()
[ "${QUICK:-0}" = 1 ] && { cells="2"; opts=(--quick --no-plot); }
for n in $cells; do
    "$CL" run "$scene" --quiet --threads 1 -o "$out/cells$n.h5" --set "bodies.0.mesh.cells=[$n,$n,$n]"
done
"$PY" experiments/gascon_ceiling/analyze.py "$out" ${opts[@]+"${opts[@]}"}
