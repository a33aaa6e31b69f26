#!/usr/bin/env bash
# Issue 5: the stability limit of the explicit β update of RCC (Fang et al. 2023 §3.2, eq. 7–8) and what
# the clamp of eq. 7 hides beyond it. A plate bonded to a half-space by rcc_ipc (β = 1) is opened
# in one step to a gap d ≈ 1.5 mm (C_N d² > W) and held; the dimensionless step
# S = h·C_N·d²/η is swept (η at h = 10 ms, then h at η = 4.5e-4) with scripts/sweep.py; then the
# bonding law under compression (eq. 9) over S_b = h·r·p0.
# Usage: experiments/rcc_stability/run.sh [OUTDIR]          (default plots/out/rcc_stability; ~15 s)
#        QUICK=1 experiments/rcc_stability/run.sh [OUTDIR]  13 runs instead of 34 (~5 s), same claims, no plot
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing
cd "$(dirname "$0")/../.."
out=${1:-plots/out/rcc_stability}
. experiments/common.sh  # CL, PY, thread environment
E=experiments/rcc_stability
scene=$E/plate.json
# η = h·C_N·d_nom²/S_nom with h = 0.01 s, C_N = 2e4 N/m³, d_nom = 1.5 mm: η·S_nom = 4.5e-4.
# The S of each run is recomputed by analyze.py from the measured gap (S = 1.00001·S_nom).
# Samples bracket the two thresholds tightly: S = 1 (overshoot; the gaps spread by 0.5 % over the
# face, so the pairs cross it between S = 0.9987 and 1.0091) and S = a/(a−W) = 1.8 (clamp; the
# pairs cross it between 1.7957 and 1.8296).
if [ "${QUICK:-0}" = 1 ]; then
    S_list="0.5 0.98 1.02 1.79 1.81 1.86 2 5"
    H_list="0.005,0.02"
    R_list="0.6,1.5,6"
    analyze_opts=(--no-plot)
else
    S_list="0.2 0.35 0.5 0.65 0.8 0.9 0.98 1.02 1.1 1.25 1.5 1.7 1.79 1.81 1.83 1.86 2 2.5 3 5 10"
    H_list="0.005,0.02,0.05"
    R_list="0.3,0.6,0.9,1.1,1.5,1.9,3,4,6,8"
    analyze_opts=()
fi
etas=$(for s in $S_list; do awk -v s="$s" 'BEGIN { printf "%.6g,", 4.5e-4 / s }'; done)
rm -rf "$out/eta" "$out/dt" "$out/bond"  # stale runs would be analysed too
mkdir -p "$out"
metrics=(--metric beta_final=/model/rcc_ipc/beta_mean:last --metric clamped=/model/rcc_ipc/beta_clamped:max
         --metric pairs_final=/model/rcc_ipc/rcc_pairs:last --metric d_hold=/probes/bottom#1:first)
# 1. η sweep at h = 10 ms
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$out/eta" --grid "contact.eta=${etas%,}" "${metrics[@]}"
# 2. h sweep at η = 4.5e-4 (S = 100·h): the top face's one-step lift takes 1 ms, so the scene is
#    the same for every h ≥ 1 ms; time.duration 1 s (50 … 200 steps)
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$out/dt" --set contact.eta=4.5e-4 --grid "time.dt=$H_list" \
    "${metrics[@]}"
# 3. bonding under compression (eq. 9), S_b = h·r·p0 = r (h = 10 ms, p0 = 100 Pa): the plate starts
#    unbonded (beta0 = 0) 0.15 mm above the half-space and is pushed down by 0.106 mm in the first
#    step (bottom gap 51 µm, pressure ≈ 22 Pa, target β = p/p0 ≈ 0.22), then held for 20 steps
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$out/bond" --set contact.beta0=0 \
    --set 'bodies.0.mesh.origin=[-0.05, 1.5e-4, -0.05]' \
    --set 'bodies.0.fixed.motion=[{"until": 0.001, "velocity": [0, -0.106, 0]}, {"until": 1e9, "velocity": [0, 0, 0]}]' \
    --set time.duration=0.2 --grid "contact.r=$R_list" "${metrics[@]}"
"$PY" "$E/analyze.py" "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
