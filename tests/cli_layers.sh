#!/usr/bin/env bash
# The layering check (scripts/check_layers.py, `make check-layers`): the tree passes, and a copy
# with one forbidden include of each kind fails with that include named.
set -u
cd "$(dirname "$0")/.."
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
expect() {  # NAME EXPECTED_RC GREP_PATTERN ROOT
    local out rc
    out=$("$PY" scripts/check_layers.py "$4" 2>&1); rc=$?
    if [ "$rc" = "$2" ] && grep -q -- "$3" <<<"$out"; then echo "ok    $1"; pass=$((pass + 1))
    else echo "FAIL  $1 (exit $rc)"; sed 's/^/      /' <<<"$out" | tail -5; fail=$((fail + 1)); fi
}
expect "the tree" 0 "no cycle" .
inject() {  # NAME FILE LINE PATTERN
    rm -rf "$tmp/r"; mkdir -p "$tmp/r"; cp -r core models "$tmp/r/"
    sed -i "1a $3" "$tmp/r/$2"
    expect "$1" 1 "$4" "$tmp/r"
}
inject "contact/ includes sim/"        core/contact/ccd.c     '#include "contactlab/ct_sim.h"'   "layer contact includes core/include/contactlab/ct_sim.h"
inject "fem/ includes contact/"        core/fem/mesh.c        '#include "contactlab/ct_bvh.h"'   "layer fem includes"
inject "sim/ includes io/"             core/sim/step.c        '#include "io/scene_json.h"'       "layer sim includes core/io/scene_json.h"
inject "core includes a model"         core/base/status.c     '#include "../../models/rcc_ipc/rcc_ipc.c"' "the core includes a model file"
inject "model includes a private one"  models/rcc_ipc/rcc_ipc.c '#include "sim/assemble.h"'      "private core header"
inject "a public header cycle"         core/include/contactlab/ct_status.h '#include "ct_params.h"' "include cycle"
echo "cli_layers: $pass passed, $fail failed"
[ $fail -eq 0 ]
