#!/usr/bin/env bash
# make demo: build (done by make), run the flagship experiment, write HDF5 and PNG.
# Until the contact models land (issues 3-5) the flagship is the core's own validation:
# the hanging-bar refinement study (HDF5 per run, convergence table and PNG).
set -eu
cd "$(dirname "$0")/.."
bash experiments/hanging_bar/run.sh plots/out/hanging_bar
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import h5py, matplotlib' 2>/dev/null; then
    /usr/bin/python3 plots/probe.py plots/out/hanging_bar/bar_16.h5 clamp_force -o plots/out/hanging_bar/clamp_force.png
fi
echo
echo "demo: results in plots/out/hanging_bar/ (convergence.dat, convergence.png, bar_*.h5)"
