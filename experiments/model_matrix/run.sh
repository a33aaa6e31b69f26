#!/usr/bin/env bash
# The model matrix (issue 18): five canonical scenes (incline sliding, energy-wall slide, pull-off, cube
# against a wall, drop stack) under every model of models.json, single-threaded, two runs at a time;
# then analyze.py prints the table (and writes table.md), plots model_matrix.png and checks the claims.
# Usage: experiments/model_matrix/run.sh [OUTDIR]          (default plots/out/model_matrix; ~1 min)
#        QUICK=1 experiments/model_matrix/run.sh [OUTDIR]  coarser meshes and shorter runs, the same claims,
#                                                          no plot (~20 s)
# A new model joins with its entry in models.json. MM_JOBS=N: N runs at a time (default 2).
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/model_matrix}
mkdir -p "$out"
find "$out" -maxdepth 1 \( -name '*__*.h5' -o -name '*__*.log' \) -delete  # a failed run must not leave an old file
. experiments/common.sh  # CL, PY, thread environment
E=experiments/model_matrix
scenes=(stack slide wall pulloff incline)  # the order of the runs: the longest first
# QUICK: the overrides of each scene (after the model's own)
declare -A quick=(
    [incline]="--set time.duration=0.5"
    [slide]="--set time.duration=0.5"
    [pulloff]=""
    [wall]="--set bodies.0.mesh.cells=[4,4,4]"
    [stack]="--set bodies.0.mesh.cells=[6,2,6] --set bodies.1.mesh.cells=[5,2,5] --set bodies.3.mesh.cells=[2,2,2]
             --set time.duration=1.5"
)
analyze_opts=()
[ "${QUICK:-0}" = 1 ] && analyze_opts=(--no-plot)
"$CL" models > "$out/models.txt"  # the registry: analyze.py checks that models.json covers it

run_pair() {  # SCENE LABEL ARG...: one single-threaded run into OUTDIR/SCENE__LABEL.h5, its messages in .log
    local scene=$1 label=$2 extra=() t0=$SECONDS
    shift 2
    # shellcheck disable=SC2206  # the QUICK overrides split into words (set -f: no globbing)
    [ "${QUICK:-0}" = 1 ] && extra=(${quick[$scene]})
    if "$CL" run "$E/$scene.json" --quiet --threads 1 -o "$out/${scene}__$label.h5" "$@" ${extra[@]+"${extra[@]}"} \
        > "$out/${scene}__$label.log" 2>&1; then
        echo "ran $scene × $label ($((SECONDS - t0)) s)"
    else
        echo "FAILED $scene × $label (see $out/${scene}__$label.log):" >&2
        tail -3 "$out/${scene}__$label.log" >&2
        return 1
    fi
}

job_lines=$("$PY" "$E/matrix.py" jobs "${scenes[@]}")  # (a bad models.json stops the script here)
mapfile -t jobs <<< "$job_lines"
fail=0 running=0 t_all=$SECONDS
for job in "${jobs[@]}"; do
    if [ "$running" -ge "${MM_JOBS:-2}" ]; then
        wait -n || fail=1
        running=$((running - 1))
    fi
    IFS=$'\t' read -r -a args <<< "$job"
    run_pair "${args[@]}" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || fail=1
    running=$((running - 1))
done
echo "${#jobs[@]} runs in $((SECONDS - t_all)) s"
"$PY" "$E/analyze.py" "$out" ${analyze_opts[@]+"${analyze_opts[@]}"} || fail=1
[ $fail = 0 ] || { echo "model_matrix: a simulation failed or a claim does not hold" >&2; exit 1; }
