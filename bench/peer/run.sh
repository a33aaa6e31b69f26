#!/usr/bin/env bash
# bench/peer/run.sh — the side-by-side of `make bench-peer` (bench/peer/README.md): both collision
# sets, n = 20/50/100, 1 and 2 threads, cl_driver and ipctk_driver alternated, then the tables.
#   CL_DRIVER  contactlab's driver (the Makefile passes $(BUILD)/bench/peer/cl_driver)
#   WORK       the folder with ipctk_driver (bench/peer/build.sh; default bench/peer/work)
#   OUT        results folder (default bench/results/peer_<host>)
#   SIZES, THREADS, ROUNDS, CCD, CCD_CAP   passed to compare.py (defaults: 20,50,100  1,2  3  additive  60)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=${WORK:-$HERE/work}
CL_DRIVER=${CL_DRIVER:?set CL_DRIVER to the contactlab driver cl_driver}
OUT=${OUT:-$HERE/../results/peer_$(hostname)}
PY=python3; [ -x /usr/bin/python3 ] && PY=/usr/bin/python3
[ -x "$WORK/ipctk_driver" ] || { echo "run.sh: no $WORK/ipctk_driver (run bench/peer/build.sh)" >&2; exit 2; }
mkdir -p "$OUT" "$WORK/bin"
ln -sf "$(cd "$(dirname "$CL_DRIVER")" && pwd)/$(basename "$CL_DRIVER")" "$WORK/bin/cl_driver"
ln -sf "$WORK/ipctk_driver" "$WORK/bin/ipctk_driver"
args=(--sizes "${SIZES:-20,50,100}" --threads "${THREADS:-1,2}" --rounds "${ROUNDS:-3}" --ccd-cap "${CCD_CAP:-60}"
      --bin "$WORK/bin" --data "$WORK/data")
rm -f "$OUT/ipc2020.json" "$OUT/convergent.json"
$PY "$HERE/compare.py" "${args[@]}" --ccd "" --colset ipc2020 --out "$OUT/ipc2020.json"
$PY "$HERE/compare.py" "${args[@]}" --ccd "${CCD:-additive}" --colset convergent --out "$OUT/convergent.json"
$PY "$HERE/report.py" "$OUT/ipc2020.json" "$OUT/convergent.json" > "$OUT/report.md"
$PY "$HERE/compact.py" "$OUT/ipc2020.json" "$OUT/convergent.json" > "$OUT/compact.md"
echo "run.sh: $OUT/report.md, $OUT/compact.md"
