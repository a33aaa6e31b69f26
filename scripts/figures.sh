#!/usr/bin/env bash
# make figures: every experiment's figure script (fast settings; FULL=1 for paper resolution).
# Every experiment runs even when an earlier one fails a claim; the failing ones are listed at
# the end and the exit status is 1 if any failed.
set -u
cd "$(dirname "$0")/.."
failed=()
for d in experiments/*/; do
    if [ -x "$d/run.sh" ]; then
        echo "== $d"
        bash "$d/run.sh" "plots/out/$(basename "$d")" || failed+=("$(basename "$d")")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "figures: a claim failed or a run stopped in: ${failed[*]} (see the lines above and their README.md)" >&2
    exit 1
fi
echo "figures: every experiment's claims hold"
