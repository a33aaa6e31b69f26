#!/usr/bin/env bash
# Install the Debian packages contactlab needs (DESIGN §10).
#   scripts/install-deps.sh                install what is missing (as root)
#   scripts/install-deps.sh --print        print the apt-get command and exit
#   scripts/install-deps.sh --check        exit 0 when every package is installed, 1 otherwise
#   scripts/install-deps.sh [--print] PKG  the same for the packages named instead (a bench-only
#                                          dependency: make bench-fclib installs Siconos this way)
set -eu
print=0 check=0
[ "${1:-}" = "--print" ] && { print=1; shift; }
[ "${1:-}" = "--check" ] && { check=1; shift; }
PKGS="libsuitesparse-dev liblapacke-dev libopenblas-dev libgsl-dev libhdf5-dev hdf5-tools \
libjansson-dev check libsubunit-dev pkg-config gnuplot-nox python3-matplotlib python3-h5py python3-numpy \
python3-jsonschema clang libclang-rt-dev libomp-dev"
[ $# -gt 0 ] && PKGS="$*"
if [ $print = 1 ]; then
    echo "apt-get update && apt-get install -y $PKGS"
    exit 0
fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ $check = 1 ]; then
    [ -z "$missing" ] || { echo "install-deps: missing:$missing" >&2; exit 1; }
    exit 0
fi
if [ -z "$missing" ]; then
    echo "install-deps: all packages present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing:$missing" >&2
    echo "install-deps: as root run: apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $missing
