#!/usr/bin/env bash
# Threshold ablation of the Fang et al. adhesion (Fang et al. 2023 §5.1.2, Fig. 12, 18): a soft gel block
# is pressed by its scripted top face onto four loose cubes of graded weight lying on a fixed plate
# (half-space), then lifted; the cubes that come up with the gel are counted, for
#   d̂_a ∈ {1e-3, 1e-4, 1e-5} with d̂ = d̂_p = 0.5 d̂_a, and s_p ∈ {0.25, 0.5, 0.75} at d̂ = 0.25 d̂_a,
#   d̂_a = 1e-3 (d̂_p = s_p d̂_a),
# plus d̂_a = 1e-5 with a 10x tighter Newton tolerance (reported, to show the tolerance is not the
# limit). Newton iterations per step are reported for each.
# Usage: experiments/threshold_ablation/run.sh [OUTDIR]   (default plots/out/threshold_ablation; ~3-4 min)
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/threshold_ablation}
mkdir -p "$out"
find "$out" -maxdepth 1 -name 'run_*.h5' -delete  # stale runs would be analysed too
. experiments/common.sh  # CL, PY, thread environment
scene=experiments/threshold_ablation/gel.json
one() {  # NAME DHAT DHAT_A [--set ...]: the cubes start where the barrier carries their weight
    local name=$1 dhat=$2 da=$3
    shift 3
    # shellcheck disable=SC2046  # one --set per line
    "$CL" run "$scene" --quiet --threads 1 -o "$out/run_$name.h5" \
        --set contact.dhat="$dhat" --set contact.dhat_a="$da" "$@" \
        $("$PY" experiments/threshold_ablation/gaps.py "$scene" "$dhat")
}
one da1e-3 5e-4 1e-3
one da1e-4 5e-5 1e-4
one da1e-5 5e-6 1e-5
one sp0.25 2.5e-4 1e-3 --set contact.s_p=0.25
one sp0.5 2.5e-4 1e-3 --set contact.s_p=0.5
one sp0.75 2.5e-4 1e-3 --set contact.s_p=0.75
one da1e-5_tol1e-5 5e-6 1e-5 --set solver.newton_tol=1e-5
"$PY" experiments/threshold_ablation/analyze.py "$out"
