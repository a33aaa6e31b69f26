#!/usr/bin/env bash
# Fang et al. adhesion laws traced by a soft plate bonded to a half-space (Fang et al. 2023 Fig. 5, 7, 9):
# (a) the plate's top face is pushed down 0.5 mm, then pulled up until the plate has debonded;
# (b) at the balance gap the top face is sheared at several constant velocities v = r·ε_a.
# Tractions against a'(d), κ(−b′) − a′ and μ_a·Y·ε_c·f_t(v·h), and a rate-independent RCC reference.
# (c) sticky IMLS (model imls, no tangential adhesion): the normal run (a) against a kinematic meshed slab.
# Usage: experiments/adhesion_curves/run.sh [OUTDIR]   (default plots/out/adhesion_curves; ~30 s)
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/adhesion_curves}
mkdir -p "$out"
find "$out" -maxdepth 1 -name 'shear_*.h5' -delete  # stale runs would be analysed too
. experiments/common.sh  # CL, PY, thread environment
scene=experiments/adhesion_curves/plate.json
"$CL" run "$scene" --quiet --threads 1 -o "$out/normal.h5"
# shear: v = r·ε_a (ε_a = contact.eps_a of the scene), 40 static steps at the balance gap
eps_a=$("$PY" -c "import json; print(json.load(open('$scene'))['contact']['eps_a'])")
shear() {  # r eps_a file
    local v
    v=$("$PY" -c "print($1 * $2)")
    "$CL" run "$scene" --quiet --threads 1 -o "$out/$3" --set contact.eps_a="$2" --set time.duration=0.4 \
        --set "bodies.0.fixed.motion=[{\"until\": 1e9, \"velocity\": [$v, 0, 0]}]"
}
for r in 0.1 0.25 0.5 0.75 1.0 1.25 1.5 1.75 1.9 2.5; do
    shear "$r" "$eps_a" "shear_r$r.h5"
done
# the same plate with ε_a = 1e-3 m/s (ε_a h below the plate's shear compliance): reported, not a claim
shear 1.5 0.001 "shear_eps_a_1e-3_r1.5.h5"
# sticky IMLS (model imls): the normal run of the same plate against the flat top of a kinematic meshed slab
"$CL" run experiments/adhesion_curves/plate_imls.json --quiet --threads 1 -o "$out/normal_imls.h5"
"$PY" experiments/adhesion_curves/analyze.py "$out"
