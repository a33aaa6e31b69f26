#!/usr/bin/env bash
# Annulus inverse problem (Du et al. 2023, "No Free Slide", Fig. 7, eq. 10): find B's angle θ_B such
# that A's static equilibrium angle reaches a target θ_A*, by gradient descent on ½(θ_A − θ_A*)² with
# dθ_A/dθ_B from `contactlab sensitivity`, on the scene of experiments/annulus_forward (its scene and
# mesh generator, reused with --set overrides), for the same model configurations (ROWS).
# Usage: experiments/annulus_inverse/run.sh [OUTDIR]          (default plots/out/annulus_inverse)
#        QUICK=1 experiments/annulus_inverse/run.sh [OUTDIR]  two targets, no plot (make test)
#        ETA=x ...                                           the gradient-descent step η (0.5)
#        SEGMENTS=N ...                                      inner arc segments over the quarter (16)
# Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/annulus_inverse}
mkdir -p "$out/mesh"
. experiments/common.sh  # CL, PY, thread environment
F=experiments/annulus_forward
S=$F/annulus_forward.json

# The model configurations: annulus_forward's ROWS ("LABEL CONTACT-JSON"; RADIUS: the IMLS kernel
# radius, two inner-arc chords).
ROWS=(
  'ipc2020     {"model": "ipc", "dhat": 1e-3, "kappa": 1e4, "mu": 0, "collision_set": "ipc2020"}'
  'convergent  {"model": "ipc", "dhat": 1e-3, "kappa": 1e4, "mu": 0, "collision_set": "convergent"}'
  'imls        {"model": "imls", "dhat": 1e-3, "kappa": 1e4, "radius": RADIUS}'
)
# The targets θ_A* (degrees; 16 segments: Δ = 5.625°): arc vertices 22.5° (4Δ) and 45° (8Δ),
# mid-segments 30.9375° (5.5Δ) and 53.4375° (9.5Δ), and 60° (2/3 of segment 10Δ–11Δ); start
# θ_B⁰ = θ_A* + OFFSET, 3° above or below (more than half a segment away).
TARGETS=(22.5 30.9375 45 53.4375 60)
OFFSETS=(3 -3 -2 2 3)
if [ "${QUICK:-0}" = 1 ]; then TARGETS=(22.5 30.9375); OFFSETS=(3 -3); fi

SEGMENTS=${SEGMENTS:-16}
"$PY" $F/make_mesh.py --segments "$SEGMENTS" --outdir "$out/mesh"
mesh=$(cd "$out/mesh" && pwd)
RADIUS=$("$PY" -c "import math; print(repr(2 * 2 * math.sin(math.pi / (4 * $SEGMENTS))))")  # 2 chords of r1 = 1
rows=()
for row in "${ROWS[@]}"; do
    read -r label json <<<"$row"
    rows+=(--row "$label" "${json//RADIUS/$RADIUS}")
done
opts=(); [ "${QUICK:-0}" = 1 ] && opts=(--no-plot)
# two sensitivity runs at a time, each single-threaded
"$PY" experiments/annulus_inverse/inverse.py "$out" --cl "$CL" --scene "$S" --mesh "$mesh" "${rows[@]}" \
    --targets "${TARGETS[@]}" --offsets "${OFFSETS[@]}" --eta "${ETA:-0.5}" --max-runs 20 --tol 1e-4 --jobs 2 \
    --fd-point 30.9375 0.5 --fd-point 25.5 -2.32 \
    ${opts[@]+"${opts[@]}"}
