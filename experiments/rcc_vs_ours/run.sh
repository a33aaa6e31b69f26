#!/usr/bin/env bash
# Sticky blobs thrown at a wall (Fang et al. 2023 §5.1.1, Fig. 10, Table 1 "Sticky Toys"): the same six
# soft cubes with ipc_adhesion ("ours") and rcc_ipc ("RCC"), tuned to the same stuck/fallen
# outcome at h = 0.01 s, then run unchanged at h = 0.001 s. Fraction stuck, time and Newton
# iterations per step of both models at both h.
# Usage: experiments/rcc_vs_ours/run.sh [OUTDIR]   (default plots/out/rcc_vs_ours; ~3 min)
#        QUICK=1 experiments/rcc_vs_ours/run.sh OUTDIR   (only the two h = 0.01 runs, ~10 s, no plot)
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf
cd "$(dirname "$0")/../.."
out=${1:-plots/out/rcc_vs_ours}
mkdir -p "$out"
rm -f "$out"/ours_h*.h5 "$out"/rcc_h*.h5  # stale runs would be analysed too
. experiments/common.sh  # CL, PY, thread environment
d=experiments/rcc_vs_ours
for m in ours rcc; do
    "$CL" run "$d/blobs_$m.json" --quiet --threads 1 -o "$out/${m}_h0.01.h5"
done
if [ "${QUICK:-0}" != 1 ]; then
    # robustness at h = 0.01: every throw velocity scaled by 0.9 and 1.1
    for sc in 0.9 1.1; do
        vel=$("$PY" -c "
import json; s = json.load(open('$d/blobs_ours.json'))
print(' '.join('--set bodies.%d.velocity=[%.6g,%.6g,0]' % (i, b['velocity'][0] * $sc, b['velocity'][1] * $sc)
               for i, b in enumerate(s['bodies'])))")
        for m in ours rcc; do
            # shellcheck disable=SC2086
            "$CL" run "$d/blobs_$m.json" --quiet --threads 1 -o "$out/${m}_h0.01_v$sc.h5" $vel
        done
    done
    # h = 0.005 (reported)
    for m in ours rcc; do
        "$CL" run "$d/blobs_$m.json" --quiet --threads 1 -o "$out/${m}_h0.005.h5" \
            --set time.dt=0.005 --set output.frames_every=20
    done
    # the same parameters at h = 0.001 (RCC: h·W/η = 0.05, frames every 0.1 s)
    for m in ours rcc; do
        "$CL" run "$d/blobs_$m.json" --quiet --threads 1 -o "$out/${m}_h0.001.h5" \
            --set time.dt=0.001 --set output.frames_every=100
    done
    # RCC with η scaled with h (h·W/η = 0.5 as at h = 0.01): reported, not a claim
    "$CL" run "$d/blobs_rcc.json" --quiet --threads 1 -o "$out/rcc_h0.001_eta0.01.h5" \
        --set time.dt=0.001 --set output.frames_every=100 --set contact.eta=0.01
fi
"$PY" "$d/analyze.py" "$out" $([ "${QUICK:-0}" = 1 ] && echo --quick)
