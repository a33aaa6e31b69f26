#!/usr/bin/env bash
# Fang et al. 2023, Fig. 15: two adhesive plates (ipc_adhesion, eps_c = 0.05) pulled apart by a uniform
# load (pull) or by a load linear in |x - centre| (peel), both growing linearly in time.
# Each case runs twice: a ramp (h = 10 ms) from the paper's initial gap 0.25 d̂_p until the plates
# come apart, then a fine pass (h = 0.5 ms) restarted from the ramp's frame 20 ms before its last
# bonded step, which resolves the peak and the debonding (load step 0.06 % of the peak).
# Then the RCC counterpart (issue 5): the same scenes with contact.model = rcc_ipc (pull_rcc.json,
# peel_rcc.json; C_N, W matched so that RCC's peak sqrt(C_N W) = Y eps_c at d* = d̂_p), one pass
# each with h = 2 ms (QUICK: 4 ms and eta doubled, h W/eta = 0.5 in both), compared by analyze_rcc.py.
# Then the lcp_pgs counterpart (issue 16): pull_lcp.json, peel_lcp.json (Gascón et al. 2010 with rcc_ipc's
# C = C_N, W and eta), one pass each like the RCC runs, and (STUDY=1, set by make figures) the pull of all
# three models at h = 10 ms and h = 1 ms (same eta) for penetration and time per step; compared by
# analyze_lcp.py.
# Usage: experiments/pull_peel/run.sh [OUTDIR]          (default plots/out/pull_peel; ~50 s + ~40 s RCC
#                                                         + ~90 s lcp_pgs; STUDY=1: + ~4 min)
#        QUICK=1 experiments/pull_peel/run.sh [OUTDIR]  coarse meshes, same claims, no plot, no study
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/pull_peel}
mkdir -p "$out"
. experiments/common.sh  # CL, PY, thread environment
E=experiments/pull_peel
DT_FINE=5e-4  # fine pass: h = 0.5 ms (load step 0.125 N; h = 1 ms is the hardest for Newton, README obs. 3)
BACK=0.02     # the fine pass starts 20 ms before the ramp's last bonded step
if [ "${QUICK:-0}" = 1 ]; then
    sfx=_quick
    mesh=(--set "bodies.0.mesh.cells=[8,2,4]" --set "bodies.1.mesh.cells=[8,2,4]")
    rcc_opts=(--set time.dt=0.004 --set contact.eta=0.04)  # h W/eta = 0.5 as in the full runs
    lcp_opts=(--set time.dt=0.004)  # eta unchanged (h W/eta = 1): doubled, its lag puts the peak at 1.21 d*
    analyze_opts=(--quick --no-plot)
else
    sfx=
    mesh=()
    rcc_opts=()
    lcp_opts=()
    analyze_opts=()
fi
for case in pull peel; do
    case $case in
        pull) window=0.05 ;;  # fine pass length (s): the peak ~28 ms in, adhesion 0 ~11 ms later
        peel) window=0.06 ;;  # the peel front needs ~20 ms to cross from the ends to the centre
    esac
    ramp="$out/${case}${sfx}_ramp.h5"
    "$CL" run "$E/$case.json" --quiet --threads 1 -o "$ramp" ${mesh[@]+"${mesh[@]}"}
    # restart frame and the load offsets F0 + dF/dt t0 at its time, as --set arguments
    mapfile -t restart < <("$PY" "$E/analyze.py" --restart-args "$ramp" "$BACK")
    "$CL" run "$E/$case.json" --quiet --threads 1 -o "$out/${case}${sfx}.h5" ${mesh[@]+"${mesh[@]}"} \
        --set time.dt=$DT_FINE --set time.duration=$window "${restart[@]}"
done
"$PY" "$E/analyze.py" "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
# RCC counterpart: one pass per case from t = 0 (rcc_ipc's bonds cannot be carried over a restart)
for case in pull peel; do
    "$CL" run "$E/${case}_rcc.json" --quiet --threads 1 -o "$out/${case}_rcc${sfx}.h5" ${mesh[@]+"${mesh[@]}"} \
        ${rcc_opts[@]+"${rcc_opts[@]}"}
done
"$PY" "$E/analyze_rcc.py" "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
# lcp_pgs counterpart: one pass per case from t = 0, the RCC runs' h (eta of the full runs)
for case in pull peel; do
    "$CL" run "$E/${case}_lcp.json" --quiet --threads 1 -o "$out/${case}_lcp${sfx}.h5" ${mesh[@]+"${mesh[@]}"} \
        ${lcp_opts[@]+"${lcp_opts[@]}"}
done
if [ "${QUICK:-0}" != 1 ] && [ "${STUDY:-0}" = 1 ]; then
    # the pull of the three models at h = 10 ms and 1 ms, from t = 0 to the end of the scenes (eta unchanged:
    # the same law; at 10 ms h W/eta = 2.5 and a debonding pair's beta reaches 0 within one step)
    for h in 10 1; do
        for m in ipc:pull lcp:pull_lcp rcc:pull_rcc; do
            "$CL" run "$E/${m#*:}.json" --quiet --threads 1 -o "$out/pull_${m%%:*}_h${h}ms.h5" \
                --set time.dt=$(echo "$h" | awk '{print $1 / 1000}') --set output.frames_every=$((10 / h))
        done
    done
fi
"$PY" "$E/analyze_lcp.py" "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
