#!/usr/bin/env bash
# bench/peer/build.sh — build ipc-toolkit (Release, its defaults) and ipctk_driver, offline, for
# `make bench-peer` (bench/peer/README.md). contactlab's side, cl_driver, is built by the Makefile.
#
#   MIRROR  a folder of bare git mirrors of the repositories in bench/peer/README.md, named
#           OWNER+NAME/repo (the layout of a mirror folder; nothing is downloaded);
#   WORK    the work folder (default bench/peer/work): src/ (ipc-toolkit), deps/, build/,
#           ipctk_driver. A second run reuses the extracted sources and the CMake build.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
MIRROR=${MIRROR:?set MIRROR to the folder of bare repository mirrors (bench/peer/README.md)}
WORK=${WORK:-$HERE/work}
mkdir -p "$WORK/deps" "$WORK/data"

# ipc-toolkit's Debian dependencies (bench only, like Siconos for make bench-fclib)
bash "$HERE/../../scripts/install-deps.sh" libeigen3-dev libtbb-dev libabsl-dev cmake g++

ex() { # ex MIRROR_NAME DEST REV [git-archive pathspecs...]: extract once
    local name="$1" dest="$2" rev="$3"; shift 3
    local g="$MIRROR/$name/repo" want
    want=$(git --git-dir="$g" rev-parse "$rev^{commit}")
    if [ -f "$dest/.peer-rev" ] && [ "$(cat "$dest/.peer-rev")" = "$want" ]; then return 0; fi
    rm -rf "$dest"; mkdir -p "$dest"
    git --git-dir="$g" archive "$rev" -- "${@:-.}" | tar -x -C "$dest"
    echo "$want" > "$dest/.peer-rev"
    echo "$dest <- $name @ $want"
}
# ipc-toolkit: notebooks/ and docs/ left out (some of their blobs may be absent from a mirror)
ex ipc-sim+ipc-toolkit "$WORK/src" b40e9c078639f947a2b631723f595231add59373 . ':!notebooks' ':!docs'
ex cpm-cmake+CPM.cmake                              "$WORK/deps/cpm"             v0.42.0
ex Continuous-Collision-Detection+Tight-Inclusion   "$WORK/deps/tight_inclusion" v1.0.6
ex Continuous-Collision-Detection+Scalable-CCD      "$WORK/deps/scalable_ccd"    c80af01cab083b3eeb8dac80312ec9cfe479a5cf
ex patr-schm+TinyAD                                 "$WORK/deps/tinyad"          4b48d1a1a588874556a692a3abbdecd0db4c23e1
ex zfergus+filib                                    "$WORK/deps/filib"           7cf13519b0db72df2493c9c8997a8bef9e372848
ex Tessil+robin-map                                 "$WORK/deps/robin_map"       v1.4.1
ex xtensor-stack+xsimd                              "$WORK/deps/xsimd"           14.0.0
ex libigl+libigl                                    "$WORK/deps/libigl"          v2.6.0
ex libigl+libigl-predicates                         "$WORK/deps/predicates"      decb7bc1260e689cbe008109e3cc5d3a5a433aea
ex gabime+spdlog                                    "$WORK/deps/spdlog"          v1.13.0
python3 "$HERE/tinyad_compat.py" "$WORK/deps/tinyad"

# ipc-toolkit + ipctk_driver (the wrapper CMakeLists.txt of this folder)
cmake -S "$HERE" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DIPCTK_SRC="$WORK/src" -DIPCTK_DEPS="$WORK/deps" >/dev/null
nice -n 10 cmake --build "$WORK/build" --target ipctk_driver -j2
cp "$WORK/build/ipctk_driver" "$WORK/ipctk_driver"
echo "built $WORK/ipctk_driver"
