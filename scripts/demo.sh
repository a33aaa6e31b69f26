#!/usr/bin/env bash
# make demo: build (done by make), run the flagship experiment, write HDF5 and PNG.
# The flagship is experiments/pull_peel (Fang et al. 2023 Fig. 15): two adhesive plates pulled apart by a
# uniform load and peeled by a load linear in |x|, with ipc_adhesion, rcc_ipc (RCC in IPC, matched peak)
# and lcp_pgs (Gascón et al. 2010, the same peak traction and adhesion energy); its run.sh checks the claims of experiments/pull_peel/README.md (exit 1 if one
# fails).
set -eu
cd "$(dirname "$0")/.."
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3  # Debian's python3 (python3-h5py, python3-matplotlib)
if ! "$PY" -c 'import h5py, numpy, matplotlib' 2>/dev/null; then
    # the Makefile installs the build dependencies; the analysis needs the Python ones too
    if [ "$(id -u)" = 0 ]; then
        bash scripts/install-deps.sh
    else
        echo "demo: the analysis needs python3-h5py, python3-numpy, python3-matplotlib; as root run:" >&2
        echo "  $(bash scripts/install-deps.sh --print)" >&2
        exit 1
    fi
fi
out=plots/out/pull_peel
bash experiments/pull_peel/run.sh "$out"
# look at it: the peel as an animation and a still (side view), and every frame as VTK for ParaView
"$PY" scripts/animate.py "$out/peel.h5" "$out/peel.gif" --png "$out/peel_side.png" --axes x,y \
    --title "Peel (ipc_adhesion, Fang et al. 2023 Fig. 15)"
"${CT_BUILD:-build}/contactlab" export --vtk "$out/peel.h5" "$out/peel_vtk"
echo
echo "demo: experiments/pull_peel (Fang et al. 2023 Fig. 15); claims and measured numbers in experiments/pull_peel/README.md"
echo "  HDF5: $out/pull_ramp.h5, $out/pull.h5   (uniform pull: 10 ms ramp, 0.5 ms pass through the peak)"
echo "        $out/peel_ramp.h5, $out/peel.h5   (peel, same two passes)"
echo "        $out/pull_rcc.h5, $out/peel_rcc.h5   (the same with rcc_ipc, one 2 ms pass)"
echo "        $out/pull_lcp.h5, $out/peel_lcp.h5   (the same with lcp_pgs, one 2 ms pass)"
echo "  PNG:  $out/pull_peel.png, $out/pull_peel_rcc.png, $out/pull_peel_lcp.png (three models)"
echo "  look: $out/peel.gif (animation), $out/peel_side.png, $out/peel_vtk/run.pvd (ParaView)"
