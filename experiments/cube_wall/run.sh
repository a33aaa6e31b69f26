#!/usr/bin/env bash
# A 1 m soft cube next to a vertical wall (half-space), gravity along the wall, started at the gap
# where barrier and adhesion pressures balance (Fang et al. 2023 §5.3, Fig. 14): six runs, μ ∈ {0, 5} ×
# adhesion ∈ {none (ε_c = 0), small (ε_c = 0.005), large (ε_c = 0.1)}, μ_a = 1; each run is
# classified from its logged data and the 2×3 table is compared with the paper's.
# Then the RCC counterpart (issue 5): the same six runs with contact.model = rcc_ipc
# (cube_wall_rcc.json), C_N = Y eps_c/d̂_p, W = Y eps_c d̂_p, C_T = (mu_a Y eps_c)²/W, eta = 2 h W
# (h W/eta = 0.5), r = 0, beta0 = 1 (none: beta0 = 0), compared by analyze_rcc.py.
# Usage: experiments/cube_wall/run.sh [OUTDIR]            (default plots/out/cube_wall; 8³ cells, 1 s)
#        QUICK=1 experiments/cube_wall/run.sh [OUTDIR]    4³ cells, 0.6 s, same claims, no plot
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/cube_wall}
mkdir -p "$out"
. experiments/common.sh  # CL, PY, thread environment
scene=experiments/cube_wall/cube_wall.json
E=1e6 KAPPA=1e5 DHAT=1e-3           # must match cube_wall.json (the gap depends on them)
MU_LARGE=5 MU_A=1 EPS_SMALL=0.005 EPS_LARGE=0.1
extra=(); plot=()
if [ "${QUICK:-0}" = 1 ]; then
    extra=(--set "bodies.0.mesh.cells=[4,4,4]" --set time.duration=0.6); plot=(--no-plot)
fi
SECONDS=0
for mu in 0 $MU_LARGE; do
    for adh in none small large; do
        case $adh in none) eps=0 mua=0 ;; small) eps=$EPS_SMALL mua=$MU_A ;; large) eps=$EPS_LARGE mua=$MU_A ;; esac
        # the balance gap: root of κ b'(d) + a'(d) = 0 (gap.py, independent of contactlab); d̂ without adhesion
        gap=$("$PY" experiments/cube_wall/gap.py $KAPPA $E $eps $DHAT)
        "$CL" run "$scene" --quiet --threads 1 -o "$out/mu${mu}_$adh.h5" \
            --set contact.mu=$mu --set contact.eps_c=$eps --set contact.mu_a=$mua \
            --set "bodies.0.mesh.origin=[$gap,0,-0.5]" ${extra[@]+"${extra[@]}"}
        echo "run mu=$mu $adh (eps_c = $eps, mu_a = $mua) from the gap $gap m: done at ${SECONDS} s"
    done
done
echo "six runs: ${SECONDS} s"
"$PY" experiments/cube_wall/analyze.py "$out" $MU_LARGE ${plot[@]+"${plot[@]}"}
# RCC counterpart, from the same balance gaps (below d̂_p = d* both laws are the same C_N d)
DT=0.01  # must match cube_wall_rcc.json
SECONDS=0
for mu in 0 $MU_LARGE; do
    for adh in none small large; do
        case $adh in none) eps=$EPS_SMALL mua=$MU_A beta0=0 ;; small) eps=$EPS_SMALL mua=$MU_A beta0=1 ;;
                     large) eps=$EPS_LARGE mua=$MU_A beta0=1 ;; esac  # none: no bonded pair (r = 0: none ever)
        read -r cn ct w eta < <("$PY" -c "ye = $E * $eps; dp = $DHAT; w = ye * dp
print(ye / dp, ($mua * ye) ** 2 / w, w, 2 * $DT * w)")
        [ $adh = none ] && gap=$DHAT || gap=$("$PY" experiments/cube_wall/gap.py $KAPPA $E $eps $DHAT)
        "$CL" run experiments/cube_wall/cube_wall_rcc.json --quiet --threads 1 -o "$out/rcc_mu${mu}_$adh.h5" \
            --set contact.mu=$mu --set contact.c_n=$cn --set contact.c_t=$ct --set contact.w=$w \
            --set contact.eta=$eta --set contact.beta0=$beta0 \
            --set "bodies.0.mesh.origin=[$gap,0,-0.5]" ${extra[@]+"${extra[@]}"}
        echo "rcc run mu=$mu $adh (C_N = $cn, C_T = $ct, W = $w, eta = $eta, beta0 = $beta0) from the gap $gap m: done at ${SECONDS} s"
    done
done
echo "six rcc runs: ${SECONDS} s"
"$PY" experiments/cube_wall/analyze_rcc.py "$out" $MU_LARGE ${plot[@]+"${plot[@]}"}
