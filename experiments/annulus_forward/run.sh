#!/usr/bin/env bash
# Annulus forward problem (Du et al. 2023, "No Free Slide", Fig. 6): point A (apex of a stiff
# triangle) on the faceted inner arc of a rigid quarter annulus, pulled by springs to B, which is
# prescribed along the outer track; one static run per row of ROWS sweeps B over the targets, and
# analyze.py compares A's angle with the ground truth θ_A = θ_B.
# Usage: experiments/annulus_forward/run.sh [OUTDIR]          (default plots/out/annulus_forward)
#        QUICK=1 experiments/annulus_forward/run.sh [OUTDIR]  2 segments' worth of targets, no plot
#        SEGMENTS=N ...                                       inner arc segments over the quarter (16)
# Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/annulus_forward}
mkdir -p "$out/mesh"
rm -f "$out"/*.h5  # stale rows would be analysed too
. experiments/common.sh  # CL, PY, thread environment
D=experiments/annulus_forward
S=$D/annulus_forward.json

# The model configurations: one row each, "LABEL CONTACT-JSON" (the JSON replaces the scene's
# "contact" object; the label names OUTDIR/LABEL.h5). Frictionless, d̂ = 1 mm, κ = 10 kPa. RADIUS: the
# IMLS kernel radius, two inner-arc segments (README.md, "IMLS radius").
ROWS=(
  'ipc2020     {"model": "ipc", "dhat": 1e-3, "kappa": 1e4, "mu": 0, "collision_set": "ipc2020"}'
  'convergent  {"model": "ipc", "dhat": 1e-3, "kappa": 1e4, "mu": 0, "collision_set": "convergent"}'
  'imls        {"model": "imls", "dhat": 1e-3, "kappa": 1e4, "radius": RADIUS}'
)

SEGMENTS=${SEGMENTS:-16}
"$PY" $D/make_mesh.py --segments "$SEGMENTS" --outdir "$out/mesh"
mesh=$(cd "$out/mesh" && pwd)
RADIUS=$("$PY" -c "import math; print(repr(2 * 2 * math.sin(math.pi / (4 * $SEGMENTS))))")  # 2 chords of r1 = 1
# The targets: θ_B from the first to the last arc vertex within [10°, 80°], in steps of 1/12 of a
# segment (every vertex, every mid-segment and the points Δ/6 from a vertex are targets); QUICK:
# the first two segments only. Step t = 1..N of the static run is target t; B starts one step
# before the first target and turns by one step per unit time.
read -r N START OMEGA <<<"$("$PY" - "$SEGMENTS" "${QUICK:-0}" <<'EOF'
import math, sys
seg, quick = int(sys.argv[1]), sys.argv[2] == "1"
delta = 90.0 / seg
lo, hi = math.ceil(10.0 / delta - 1e-9), math.floor(80.0 / delta + 1e-9)
if quick:
    hi = min(hi, lo + 2)
step = delta / 12
print(12 * (hi - lo) + 1, repr(lo * delta - step), repr(math.radians(step)))
EOF
)"
common=(--set "time.duration=$N"
        --set "bodies.0.mesh.file=$mesh/annulus.msh"
        --set "bodies.1.mesh.file=$mesh/tri_a.msh" --set "bodies.1.mesh.transform.rotate.angle_deg=$START"
        --set "bodies.2.mesh.file=$mesh/tri_b.msh" --set "bodies.2.mesh.transform.rotate.angle_deg=$START"
        --set "bodies.2.fixed.motion.0.angular_velocity=$OMEGA")
run() {  # ROW: "LABEL CONTACT-JSON"
    local label json
    read -r label json <<<"$1"
    json=${json//RADIUS/$RADIUS}
    "$CL" run "$S" --quiet --threads 1 -o "$out/$label.h5" "${common[@]}" --set "contact=$json" \
        || { echo "run $label failed" >&2; return 1; }
}
# Two single-threaded runs side by side.
fail=0
for ((k = 0; k < ${#ROWS[@]}; k += 2)); do
    run "${ROWS[k]}" & p1=$!
    if ((k + 1 < ${#ROWS[@]})); then
        run "${ROWS[k+1]}" || fail=1
    fi
    wait $p1 || fail=1
done
[ $fail = 0 ] || { echo "annulus_forward: a simulation failed" >&2; exit 1; }
labels=(); for row in "${ROWS[@]}"; do labels+=("${row%% *}"); done
opts=(); [ "${QUICK:-0}" = 1 ] && opts=(--no-plot)
"$PY" $D/analyze.py "$out" --rows "${labels[@]}" ${opts[@]+"${opts[@]}"}
