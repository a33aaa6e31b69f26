#!/usr/bin/env bash
# Four soft boxes dropped onto each other and onto a half-space floor (μ = 0.3): no intersection
# in any step, Newton iterations per step, the final stack against the stacked sizes.
# Usage: experiments/drop_stack/run.sh [OUTDIR]   (default plots/out/drop_stack)
#        QUICK=1 experiments/drop_stack/run.sh [OUTDIR]   coarse meshes (~10 s), same claims, no plot
# Exit status 1 if a claim of README.md does not hold (or the simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/drop_stack}
mkdir -p "$out"
. experiments/common.sh  # CL, PY, thread environment
if [ "${QUICK:-0}" = 1 ]; then
    "$CL" run experiments/drop_stack/drop_stack.json --quiet --threads 1 -o "$out/drop_stack_quick.h5" \
        --set bodies.0.mesh.cells=[4,1,4] --set bodies.1.mesh.cells=[3,1,3] \
        --set bodies.2.mesh.cells=[2,2,2] --set bodies.3.mesh.cells=[2,2,2]
    "$PY" experiments/drop_stack/analyze.py "$out" "$out/drop_stack_quick.h5" --no-plot
else
    "$CL" run experiments/drop_stack/drop_stack.json --quiet --threads 1 -o "$out/drop_stack.h5"
    "$PY" experiments/drop_stack/analyze.py "$out"
fi
