#!/usr/bin/env bash
# A soft cube dropped on a soft clamped plate, both deformable, with model imls (Du et al. 2023's robust IMLS
# surfaces) and with model ipc (convergent set, the same d̂ and κ): the body's landing and rest, and the contact
# work per Newton iteration of the two models (the issue's acceptance: imls ≤ 2 × ipc).
# Usage: experiments/imls_drop/run.sh [OUTDIR]           (default plots/out/imls_drop; ROUNDS rounds (default 2) of
#                                                         imls then ipc, one process at a time, for the timings)
#        QUICK=1 experiments/imls_drop/run.sh [OUTDIR]   a coarser scene, one run per model side by side, the
#                                                         physical claims only, no plot (~15 s on two cores)
# Exit status 1 if a claim of README.md does not hold.
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/imls_drop}
mkdir -p "$out"
set +f; rm -f "$out"/imls_r*.h5 "$out"/ipc_r*.h5; set -f  # stale runs would be analysed too
. experiments/common.sh  # CL, PY, thread environment
S=experiments/imls_drop/imls_drop.json
# the same d̂ and κ (auto: 0.1 × the smaller Young's modulus = 10 kPa in both models), frictionless
IPC='--set contact={"model":"ipc","dhat":1e-3,"kappa":"auto","mu":0,"collision_set":"convergent"}'
run() {  # NAME ARGS...: one single-threaded run into $out/NAME.h5
    local name=$1; shift
    # shellcheck disable=SC2086
    "$CL" run "$S" --quiet --threads 1 -o "$out/$name.h5" "$@" || { echo "run $name failed" >&2; return 1; }
}
fail=0
if [ "${QUICK:-0}" = 1 ]; then
    # body 6³ cells, plate 12 × 4 × 12 (cells of 1/30 m in the plane, the body's size); the two runs side by side
    Q="--set bodies.0.mesh.cells=[6,6,6] --set bodies.1.mesh.cells=[12,4,12]"
    # shellcheck disable=SC2086
    run imls_r1 $Q & p1=$!
    # shellcheck disable=SC2086
    run ipc_r1 $Q $IPC || fail=1
    wait $p1 || fail=1
    analyze_opts=(--quick --no-plot)
else
    # alternating, one process at a time: the per-iteration timings of a round's two runs see the same machine
    for ((k = 1; k <= ${ROUNDS:-2}; ++k)); do
        run "imls_r$k" || fail=1
        # shellcheck disable=SC2086
        run "ipc_r$k" $IPC || fail=1
    done
    analyze_opts=()
fi
[ $fail = 0 ] || { echo "imls_drop: a simulation failed" >&2; exit 1; }
"$PY" experiments/imls_drop/analyze.py "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
