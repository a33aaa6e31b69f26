#!/usr/bin/env bash
# Box on a slope with tanθ = 0.5 (issue 3): settle it (μ = 1), then from the settled state
# μ = 0.49 slides and μ = 0.5 holds; from the undeformed rest state μ = 0.6 holds and μ = 0.5 is
# kicked into constant-speed sliding. Usage: experiments/incline_3d/run.sh [OUTDIR]
# (default plots/out/incline_3d). Exit status 1 if a claim of README.md does not hold.
set -eu
cd "$(dirname "$0")/../.."
out=${1:-plots/out/incline_3d}
mkdir -p "$out"
. experiments/common.sh  # CL, PY, thread environment
scene=experiments/incline_3d/incline.json
"$CL" run "$scene" --quiet -o "$out/settle.h5" --set contact.mu=1 --set time.duration=0.5 \
      --set output.frames_every=50
settled="$(cd "$out" && pwd)/settle.h5"
for mu in 0.49 0.5; do
    "$CL" run "$scene" --quiet -o "$out/settled_mu$mu.h5" --set contact.mu=$mu \
          --set "initial_state={\"file\": \"$settled\"}"
done
for mu in 0.5 0.6; do
    "$CL" run "$scene" --quiet -o "$out/rest_mu$mu.h5" --set contact.mu=$mu
done
"$PY" experiments/incline_3d/analyze.py "$out"
