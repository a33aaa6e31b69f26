#!/usr/bin/env bash
# Cube pushed over a frictionless triangulated floor (paper 002 Fig. 5), both collision sets:
# x_com(t) against F t²/(2m), a force sweep, an F = 0 control and an incommensurate floor.
# Usage: experiments/cube_push/run.sh [OUTDIR]   (default plots/out/cube_push)
# Exit status 1 if a claim of README.md does not hold.
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/cube_push}
mkdir -p "$out"
CL=${CT_BUILD:-build}/contactlab
S=experiments/cube_push/cube_push.json
# Two single-threaded runs side by side (the scenes are small; OpenMP threads only add
# barrier waits, and spinning waits are very slow on a loaded machine).
export OMP_WAIT_POLICY=passive OPENBLAS_NUM_THREADS=1
# the incommensurate floor: 0.0429 m cells against the cube's 0.025 m
INCOMM="--set bodies.1.mesh.cells=[28,1,7] --set bodies.1.mesh.origin=[-0.2,-0.02,-0.15]"
jobs_=(
  "conv_F0.3  --set contact.collision_set=convergent"
  "ipc_F0.3   --set contact.collision_set=ipc2020"
  "conv_F1    --set contact.collision_set=convergent --set bodies.0.loads.1.force=[1,0,0]"
  "ipc_F1     --set contact.collision_set=ipc2020    --set bodies.0.loads.1.force=[1,0,0]"
  "conv_F0    --set contact.collision_set=convergent --set bodies.0.loads.1.force=[0,0,0]"
  "ipc_F0     --set contact.collision_set=ipc2020    --set bodies.0.loads.1.force=[0,0,0]"
  "conv_incomm_F0.3 --set contact.collision_set=convergent $INCOMM"
  "ipc_incomm_F0.3  --set contact.collision_set=ipc2020    $INCOMM"
)
run() {  # NAME ARGS...
    local name=$1; shift
    "$CL" run "$S" --quiet --threads 1 -o "$out/$name.h5" "$@" || { echo "run $name failed" >&2; return 1; }
}
fail=0
for ((k = 0; k < ${#jobs_[@]}; k += 2)); do
    # shellcheck disable=SC2086
    run ${jobs_[k]} & p1=$!
    # shellcheck disable=SC2086
    run ${jobs_[k+1]} & p2=$!
    wait $p1 || fail=1
    wait $p2 || fail=1
done
[ $fail = 0 ] || { echo "cube_push: a simulation failed" >&2; exit 1; }
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3  # Debian's python3 has h5py
"$PY" experiments/cube_push/analyze.py "$out"
