#!/usr/bin/env bash
# Install Siconos numerics (Debian libsiconos-numerics-dev), needed only by `make bench-fclib`
# (bench/fclib_siconos.c: our block PGS against Siconos' fc3d NSGS on the FCLIB problems).
# Neither `make test` nor `make demo` needs it.
#   bench/install-siconos.sh          install it when missing (as root)
#   bench/install-siconos.sh --print  print the apt-get command and exit
set -eu
PKGS="libsiconos-numerics-dev"
if [ "${1:-}" = "--print" ]; then
    echo "apt-get update && apt-get install -y --no-install-recommends $PKGS"
    exit 0
fi
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then
    echo "install-siconos: all packages present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-siconos: missing:$missing" >&2
    echo "install-siconos: as root run: apt-get update && apt-get install -y --no-install-recommends$missing" >&2
    exit 1
fi
echo "install-siconos: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $missing
