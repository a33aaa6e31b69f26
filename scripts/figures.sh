#!/usr/bin/env bash
# make figures: every experiment's figure script (fast settings; FULL=1 for paper resolution).
# Every experiment runs even when an earlier one fails a claim; the failing ones are listed at
# the end and the exit status is 1 if any failed. STUDY=1 (set here) also runs the longer studies
# an experiment has (pull_peel: the pull of the three models at h = 10 ms and 1 ms), which
# `make demo` leaves out.
set -u
cd "$(dirname "$0")/.."
failed=()
summary=()
t_all=$SECONDS
for d in experiments/*/; do
    if [ -x "$d/run.sh" ]; then
        name=$(basename "$d")
        echo "== $d"
        t0=$SECONDS
        if STUDY=1 bash "$d/run.sh" "plots/out/$name"; then res=ok; else res=FAILED; failed+=("$name"); fi
        summary+=("$(printf '  %-20s %-7s %5d s' "$name" "$res" $((SECONDS - t0)))")
        echo "== $name: $res in $((SECONDS - t0)) s"
    fi
done
echo
echo "figures: ${#summary[@]} experiments in $((SECONDS - t_all)) s (outputs in plots/out/)"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
    echo "figures: a claim failed or a run stopped in: ${failed[*]} (see the lines above and their README.md)" >&2
    exit 1
fi
echo "figures: every experiment's claims hold"
