#!/usr/bin/env bash
# The RCC law of rcc_ipc (Fang et al. 2023 §3.2, eq. 5–9) traced by a plate bonded to a half-space and
# driven quasi-statically (static steps, h = 0.01 s) by its scripted top face at 2e-4 m/s:
#   normal_eta<η>.h5      normal opening for several η, until the pairs are dropped (debond_dist, auto 2 d*)
#   long_eta<η>.h5        the smallest η, opened to 5 mm (debond_dist = 5e-3): the dissipated energy -> W
#   note_eta2e-5.h5       η with h·W/η = 10 (explicit-update regime; reported, not a claim; full mode only)
#   shear_rest_eta<η>.h5  tangential shear at the resting (compressed, eq. 9) gap
#   shear_open_eta<η>.h5  opened to ~0.5 mm first, then sheared at that gap (eq. 8 with C_N d0²)
# Traction vs gap / slip against the rate-independent limit η -> 0 (README.md).
# Usage: experiments/rcc_curves/run.sh [OUTDIR]           (default plots/out/rcc_curves; ~1.5 min)
#        QUICK=1 experiments/rcc_curves/run.sh [OUTDIR]   5×1×5 cells, 2 η, same claims, no plot (~15 s)
# Exit status 1 if a claim of README.md does not hold (or a simulation fails).
set -euf  # -f: no globbing of the [..] in --set values
cd "$(dirname "$0")/../.."
out=${1:-plots/out/rcc_curves}
mkdir -p "$out"
. experiments/common.sh  # CL, PY, thread environment
E=experiments/rcc_curves
scene=$E/plate.json
V=2e-4          # opening / shear rate of the top face (m/s)
T_OPEN=2.25     # shear_open: opening time before the shear (gap ~0.5 mm)
if [ "${QUICK:-0}" = 1 ]; then
    etas=(5e-4 5e-2); shear_etas=(5e-4); note=
    extra=(--set "bodies.0.mesh.cells=[5,1,5]"); analyze_opts=(--no-plot)
else
    etas=(5e-4 5e-3 5e-2 2e-1); shear_etas=(5e-4 5e-3 5e-2 2e-1); note=2e-5
    extra=(); analyze_opts=()
fi
find "$out" -maxdepth 1 \( -name 'normal_*.h5' -o -name 'long_*.h5' -o -name 'note_*.h5' -o -name 'shear_*.h5' \) -delete
SECONDS=0
run() {  # file eta [--set ...]
    local f=$1 eta=$2
    shift 2
    "$CL" run "$scene" --quiet --threads 1 -o "$out/$f" --set contact.eta="$eta" ${extra[@]+"${extra[@]}"} "$@"
    echo "$f: done at ${SECONDS} s"
}
for eta in "${etas[@]}"; do
    run "normal_eta$eta.h5" "$eta"   # plate.json: up at V for 10.5 s (gap to ~2.1 mm)
done
run "long_eta${etas[0]}.h5" "${etas[0]}" --set contact.debond_dist=5e-3 --set time.duration=25.5
if [ -n "$note" ]; then run "note_eta$note.h5" "$note"; fi
for eta in "${shear_etas[@]}"; do
    run "shear_open_eta$eta.h5" "$eta" --set time.duration=12.75 \
        --set "bodies.0.fixed.motion=[{\"until\": $T_OPEN, \"velocity\": [0, $V, 0]}, {\"until\": 1e9, \"velocity\": [$V, 0, 0]}]"
done
run "shear_rest_eta${shear_etas[0]}.h5" "${shear_etas[0]}" --set time.duration=10.5 \
    --set "bodies.0.fixed.motion=[{\"until\": 1e9, \"velocity\": [$V, 0, 0]}]"
echo "all runs: ${SECONDS} s"
"$PY" $E/analyze.py "$out" ${analyze_opts[@]+"${analyze_opts[@]}"}
