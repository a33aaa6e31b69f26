#!/usr/bin/env bash
# Replays the tuning history of README.md ("Tuning history") at h = 0.01 and prints the
# classification of every run. Not part of run.sh or the tests.
# Usage: experiments/rcc_vs_ours/tune.sh [OUTDIR]   (default plots/out/rcc_vs_ours/tune; 14 runs, ~1.5 min)
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/rcc_vs_ours/tune}
mkdir -p "$out/ours1" "$out/ours2" "$out/rcc"
. experiments/common.sh  # CL, PY, thread environment
d=experiments/rcc_vs_ours
# ours: 8 + 2 runs over eps_c (and mu_a)
"$PY" scripts/sweep.py "$d/blobs_ours.json" --grid contact.eps_c=0.05,0.1,0.2,0.4 --grid contact.mu_a=0,1 \
    --jobs 1 --out "$out/ours1" > /dev/null
"$PY" scripts/sweep.py "$d/blobs_ours.json" --grid contact.eps_c=0.07,0.085 --jobs 1 --out "$out/ours2" > /dev/null
# RCC: the matched start (C_T = C_N = 5e6), then three single changes
i=0
for spec in "5e6 5e6 5 0.1" "5e6 2e7 5 0.1" "2e7 2e7 5 0.1" "5e6 5e6 10 0.2"; do
    set -- $spec
    "$CL" run "$d/blobs_rcc.json" --quiet --threads 1 -o "$out/rcc/run_$i.h5" \
        --set contact.c_n="$1" --set contact.c_t="$2" --set contact.w="$3" --set contact.eta="$4"
    echo "rcc/run_$i: c_n=$1 c_t=$2 w=$3 eta=$4"
    i=$((i + 1))
done
for s in "$out/ours1/summary.csv" "$out/ours2/summary.csv"; do echo "== $s"; cat "$s"; done
"$PY" "$d/classify.py" "$out"/ours1/run_*.h5 "$out"/ours2/run_*.h5 "$out"/rcc/run_*.h5
