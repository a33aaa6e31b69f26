#!/usr/bin/env bash
# make figures: every experiment's figure script (fast settings; FULL=1 for paper resolution).
set -eu
cd "$(dirname "$0")/.."
for d in experiments/*/; do
    if [ -x "$d/run.sh" ]; then
        echo "== $d"
        bash "$d/run.sh" "plots/out/$(basename "$d")"
    fi
done
