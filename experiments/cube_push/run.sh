#!/usr/bin/env bash
# Cube pushed over a frictionless triangulated floor (Du et al. 2023 Fig. 5), both IPC collision sets and imls:
# x_com(t) against F t²/(2m), a force sweep, an F = 0 control and an incommensurate floor.
# Usage: experiments/cube_push/run.sh [OUTDIR]           (default plots/out/cube_push; 14 runs of 1 s)
#        QUICK=1 experiments/cube_push/run.sh [OUTDIR]   6 runs of 0.8 s (no F = 1 N pair, no ipc2020
#                                                        control), their claims, no plot (~14 s on one core)
# Exit status 1 if a claim of README.md does not hold.
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/cube_push}
mkdir -p "$out"
set +f; rm -f "$out"/conv_*.h5 "$out"/conv2_*.h5 "$out"/ipc_*.h5 "$out"/imls_*.h5; set -f  # stale runs would be analysed too
. experiments/common.sh  # CL, PY, thread environment
S=experiments/cube_push/cube_push.json
# the incommensurate floor: 0.0429 m cells against the cube's 0.025 m
INCOMM="--set bodies.1.mesh.cells=[28,1,7] --set bodies.1.mesh.origin=[-0.2,-0.02,-0.15]"
CONV="--set contact.collision_set=convergent" IPC="--set contact.collision_set=ipc2020"
# the ablation: the floor's own vertex quadrature counted too (the symmetric two-sided average)
TWO="--set contact.kinematic_quadrature=two_sided"
# robust IMLS (Du et al.'s model) on a 5 cm floor instead of 2 cm: the floor's field must not reach its
# bottom samples from the top (kernel radius 3.9 cm; README.md, "IMLS rows")
IMLS="--set contact={\"model\":\"imls\",\"dhat\":1e-3,\"kappa\":\"auto\"} --set bodies.1.mesh.size=[1.2,0.05,0.3]"
IMLS_ORIGIN="--set bodies.1.mesh.origin=[-0.1925,-0.05,-0.14]"
IMLS_INCOMM="--set bodies.1.mesh.cells=[28,1,7] --set bodies.1.mesh.origin=[-0.2,-0.05,-0.15]"
if [ "${QUICK:-0}" = 1 ]; then
    jobs_=(
      "conv_F0.3  $CONV"
      "ipc_F0.3   $IPC"
      "conv_F0    $CONV --set bodies.0.loads.1.force=[0,0,0]"
      "conv_incomm_F0.3 $CONV $INCOMM"
      "ipc_incomm_F0.3  $IPC  $INCOMM"
      "imls_F0.3  $IMLS $IMLS_ORIGIN"
    )
    extra="--set time.duration=0.8"; analyze_opts=(--quick --no-plot)
else
    jobs_=(
      "conv_F0.3  $CONV"
      "ipc_F0.3   $IPC"
      "conv_F1    $CONV --set bodies.0.loads.1.force=[1,0,0]"
      "ipc_F1     $IPC  --set bodies.0.loads.1.force=[1,0,0]"
      "conv_F0    $CONV --set bodies.0.loads.1.force=[0,0,0]"
      "ipc_F0     $IPC  --set bodies.0.loads.1.force=[0,0,0]"
      "conv_incomm_F0.3 $CONV $INCOMM"
      "ipc_incomm_F0.3  $IPC  $INCOMM"
      "conv2_F0.3 $CONV $TWO"
      "conv2_F0   $CONV $TWO --set bodies.0.loads.1.force=[0,0,0]"
      "imls_F0.3  $IMLS $IMLS_ORIGIN"
      "imls_F1    $IMLS $IMLS_ORIGIN --set bodies.0.loads.1.force=[1,0,0]"
      "imls_F0    $IMLS $IMLS_ORIGIN --set bodies.0.loads.1.force=[0,0,0]"
      "imls_incomm_F0.3 $IMLS $IMLS_INCOMM"
    )
    extra=; analyze_opts=()
fi
run() {  # NAME ARGS...
    local name=$1; shift
    # shellcheck disable=SC2086
    "$CL" run "$S" --quiet --threads 1 -o "$out/$name.h5" "$@" $extra || { echo "run $name failed" >&2; return 1; }
}
# Two single-threaded runs side by side (the scenes are small; OpenMP threads only add
# barrier waits, and spinning waits are very slow on a loaded machine).
fail=0
for ((k = 0; k < ${#jobs_[@]}; k += 2)); do
    # shellcheck disable=SC2086
    run ${jobs_[k]} & p1=$!
    if ((k + 1 < ${#jobs_[@]})); then
        # shellcheck disable=SC2086
        run ${jobs_[k+1]} || fail=1
    fi
    wait $p1 || fail=1
done
[ $fail = 0 ] || { echo "cube_push: a simulation failed" >&2; exit 1; }
"$PY" experiments/cube_push/analyze.py "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
