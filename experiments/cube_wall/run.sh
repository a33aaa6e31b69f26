#!/usr/bin/env bash
# A 1 m soft cube next to a vertical wall (half-space), gravity along the wall, started at the gap
# where barrier and adhesion pressures balance (Fang et al. 2023 §5.3, Fig. 14): six runs, μ ∈ {0, 5} ×
# adhesion ∈ {none (ε_c = 0), small (ε_c = 0.005), large (ε_c = 0.1)}, μ_a = 1; each run is
# classified from its logged data and the 2×3 table is compared with the paper's.
# Then the RCC counterpart (issue 5): the same six runs with contact.model = rcc_ipc
# (cube_wall_rcc.json), C_N = Y eps_c/d̂_p, W = Y eps_c d̂_p, C_T = (mu_a Y eps_c)²/W, eta = 2 h W
# (h W/eta = 0.5), r = 0, beta0 = 1 (none: beta0 = 0), compared by analyze_rcc.py.
# Then the lcp_pgs counterpart (issue 16, Gascón et al. 2010; cube_wall_lcp.json): the same six runs
# with c = C_N, w = W, eta as rcc_ipc's, r = 0, beta0 = 1 (none: beta0 = 0), each adhesion run started
# at the contact thickness delta (the rest gap of the relaxed adhesive constraint), none at 2 delta
# (contacts inactive); two side runs of "none" pushed 1 nm into delta (mu = 1 and MU_LARGE: the
# Painlevé jam of the hard constraint); and (STUDY=1, set by make figures) mu = 0 large and mu = MU_LARGE small with
# all three models at h = 1 ms for 0.3 s (penetration and time per step); compared by analyze_lcp.py.
# Usage: experiments/cube_wall/run.sh [OUTDIR]            (default plots/out/cube_wall; 8³ cells, 1 s)
#        QUICK=1 experiments/cube_wall/run.sh [OUTDIR]    4³ cells, 0.6 s, same claims, no plot, no h = 1 ms
#        STUDY=1 experiments/cube_wall/run.sh [OUTDIR]    also the h = 1 ms runs (make figures sets it)
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/cube_wall}
mkdir -p "$out"
. experiments/common.sh  # CL, PY, thread environment
scene=experiments/cube_wall/cube_wall.json
E=1e6 KAPPA=1e5 DHAT=1e-3           # must match cube_wall.json (the gap depends on them)
MU_LARGE=5 MU_A=1 EPS_SMALL=0.005 EPS_LARGE=0.1
extra=(); plot=(); quick=0
if [ "${QUICK:-0}" = 1 ]; then
    extra=(--set "bodies.0.mesh.cells=[4,4,4]" --set time.duration=0.6); plot=(--no-plot); quick=1
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
# lcp_pgs counterpart (issue 16): no barrier; the non-penetration constraint keeps the end-of-step gap
# >= delta and the adhesion spring C beta² (g - delta) pulls only beyond it, so with no normal load a
# bonded face rests at g = delta with zero force: the adhesion runs start there. Without adhesion every
# gap >= delta is at rest; "none" starts at 2 delta, where the constraints are inactive (at exactly
# delta the round-off of the elastic solve decides whether the mu = MU_LARGE cube jams: README)
THICK=1e-6  # must match cube_wall_lcp.json (contact.thickness)
SECONDS=0
lcp_run() {  # OUTFILE MU EPS BETA0 GAP [--set ...]: one lcp_pgs run with C = Y eps/d̂_p, W = Y eps d̂_p, eta = 2 h W
    local f=$1 mu=$2 eps=$3 beta0=$4 gap=$5 c w eta
    shift 5
    read -r c w eta < <("$PY" -c "ye = $E * $eps; dp = $DHAT; w = ye * dp
print(ye / dp, w, 2 * $DT * w)")
    "$CL" run experiments/cube_wall/cube_wall_lcp.json --quiet --threads 1 -o "$out/$f.h5" \
        --set contact.mu=$mu --set contact.c=$c --set contact.w=$w --set contact.eta=$eta --set contact.beta0=$beta0 \
        --set "bodies.0.mesh.origin=[$gap,0,-0.5]" ${extra[@]+"${extra[@]}"} "$@"
    echo "lcp run $f (mu = $mu, C = $c, W = $w, eta = $eta, beta0 = $beta0) from the gap $gap m: done at ${SECONDS} s"
}
gap_on=$THICK gap_off=$("$PY" -c "print(2 * $THICK)") gap_push=$("$PY" -c "print($THICK - 1e-9)")
for mu in 0 $MU_LARGE; do
    lcp_run lcp_mu${mu}_none $mu $EPS_SMALL 0 "$gap_off"   # none: beta0 = 0, r = 0: no bond, ever
    lcp_run lcp_mu${mu}_small $mu $EPS_SMALL 1 "$gap_on"
    lcp_run lcp_mu${mu}_large $mu $EPS_LARGE 1 "$gap_on"
done
for mu in 1 $MU_LARGE; do  # Painlevé: "none" pushed 1 nm into the thickness, friction below / above the jam
    lcp_run lcp_push_mu$mu $mu $EPS_SMALL 0 "$gap_push"
done
if [ $quick = 0 ] && [ "${STUDY:-0}" = 1 ]; then  # h = 1 ms, 0.3 s: mu = 0 large and mu = MU_LARGE small, all three models (eta as at h = 10 ms)
    hx=(--set time.dt=0.001 --set time.duration=0.3)
    for spec in "0 large $EPS_LARGE" "$MU_LARGE small $EPS_SMALL"; do
        read -r mu adh eps <<< "$spec"
        gap=$("$PY" experiments/cube_wall/gap.py $KAPPA $E $eps $DHAT)
        "$CL" run "$scene" --quiet --threads 1 -o "$out/h1ms_mu${mu}_$adh.h5" ${hx[@]} \
            --set contact.mu=$mu --set contact.eps_c=$eps --set contact.mu_a=$MU_A --set "bodies.0.mesh.origin=[$gap,0,-0.5]"
        read -r cn ct w eta < <("$PY" -c "ye = $E * $eps; dp = $DHAT; w = ye * dp
print(ye / dp, ($MU_A * ye) ** 2 / w, w, 2 * $DT * w)")
        "$CL" run experiments/cube_wall/cube_wall_rcc.json --quiet --threads 1 -o "$out/h1ms_rcc_mu${mu}_$adh.h5" ${hx[@]} \
            --set contact.mu=$mu --set contact.c_n=$cn --set contact.c_t=$ct --set contact.w=$w \
            --set contact.eta=$eta --set contact.beta0=1 --set "bodies.0.mesh.origin=[$gap,0,-0.5]"
        lcp_run h1ms_lcp_mu${mu}_$adh $mu $eps 1 "$gap_on" ${hx[@]}
        echo "h = 1 ms: mu = $mu $adh, three models: done at ${SECONDS} s"
    done
fi
echo "lcp runs: ${SECONDS} s"
"$PY" experiments/cube_wall/analyze_lcp.py "$out" $MU_LARGE ${plot[@]+"${plot[@]}"}
