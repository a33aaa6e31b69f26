#!/usr/bin/env bash
# cli_output.sh — what a run writes and when: an existing output file is kept unless the command
# says --force (or CT_OVERWRITE=1); compressed frames; a restart's time offset; a run stopped by
# SIGTERM / SIGINT closes its file.
set -u
cd "$(dirname "$0")/.."
CL=${CT_BUILD:-build}/contactlab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "ok    $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }
unset CT_OVERWRITE
scene=tests/data/scenes/run/long_box.json
run() { "$CL" run "$scene" --quiet --set time.duration=0.002 "$@" </dev/null; }

# 1. a first run writes the file; a second one into the same file is refused (exit 2, file kept)
run -o "$tmp/a.h5" && ok "first run: exit 0" || bad "first run failed"
sum=$(md5sum < "$tmp/a.h5")
run -o "$tmp/a.h5" --set time.duration=0.001 2> "$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "a.h5 exists: --force overwrites it" "$tmp/err" && [ "$(md5sum < "$tmp/a.h5")" = "$sum" ]; then
    ok "existing output: exit 2, named, file unchanged"
else
    bad "existing output: rc=$rc, $(cat "$tmp/err")"
fi
# 2. --force and CT_OVERWRITE=1 overwrite it (the new run has 1 step)
run -o "$tmp/a.h5" --set time.duration=0.001 --force
rows=$("$CL" export "$tmp/a.h5" /steps/time 2>/dev/null | grep -vc '^#')
[ "$rows" = 1 ] && ok "--force overwrites (1 step)" || bad "--force: $rows rows"
CT_OVERWRITE=1 run -o "$tmp/a.h5"
rows=$("$CL" export "$tmp/a.h5" /steps/time 2>/dev/null | grep -vc '^#')
[ "$rows" = 2 ] && ok "CT_OVERWRITE=1 overwrites (2 steps)" || bad "CT_OVERWRITE=1: $rows rows"
# 3. the default output (<name>.h5 in the working directory) is guarded too
( cd "$tmp" && touch long_box.h5 && "$OLDPWD/$CL" run "$OLDPWD/$scene" --quiet --set time.duration=0.001 </dev/null 2> err2 )

rc=$?
[ $rc -eq 2 ] && grep -q "long_box.h5 exists" "$tmp/err2" && ok "default output name guarded" || bad "default output: rc=$rc"
# 4. the scene's output.file is guarded as well
touch "$tmp/scene_out.h5"
run --set "output.file=\"$tmp/scene_out.h5\"" 2> "$tmp/err3"
rc=$?
[ $rc -eq 2 ] && grep -q "scene_out.h5 exists" "$tmp/err3" && ok "output.file guarded" || bad "output.file: rc=$rc $(cat "$tmp/err3")"

# 5. compressed frames (output.compress): the same numbers, gzip-filtered, a smaller file
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
run -o "$tmp/plain.h5" --set time.duration=0.01 --set output.frames_every=1
run -o "$tmp/gz.h5" --set time.duration=0.01 --set output.frames_every=1 --set output.compress=6
if "$PY" - "$tmp/plain.h5" "$tmp/gz.h5" <<'PYCHK'
import os, sys
import h5py, numpy as np
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
for d in ("/frames/x", "/frames/v"):
    assert b[d].compression == "gzip" and a[d].compression is None, d
    assert np.array_equal(a[d][()], b[d][()]), d
sa, sb = (os.path.getsize(p) for p in sys.argv[1:3])
assert sb < sa, (sa, sb)
print(f"      frames bitwise equal; file {sa} -> {sb} bytes")
PYCHK
then ok "output.compress: gzip frames, same numbers, smaller file"; else bad "output.compress"; fi
run -o "$tmp/bad.h5" --set output.compress=10 2> "$tmp/err4"
rc=$?
[ $rc -eq 2 ] && grep -q "/output/compress" "$tmp/err4" && ok "output.compress=10 refused (exit 2)" || bad "compress=10: rc=$rc"

# 6. a restart (initial_state) records where it starts and its clock's offset: the frame's time
run -o "$tmp/first.h5" --set time.duration=0.004 --set output.frames_every=1
run -o "$tmp/second.h5" --set "initial_state={\"file\": \"$tmp/first.h5\", \"frame\": -2}"
if "$PY" - "$tmp/first.h5" "$tmp/second.h5" <<'PYCHK'
import sys
import h5py
a, b = (h5py.File(p, "r") for p in sys.argv[1:3])
t = a["/frames/time"][()]
assert b.attrs["time_offset"] == t[-2], (b.attrs["time_offset"], t)
assert int(b.attrs["initial_state_frame"]) == len(t) - 2
assert str(b.attrs["initial_state_file"]).endswith("first.h5")
print(f"      time_offset {b.attrs['time_offset']} s = /frames/time[-2] of the first run")
PYCHK
then ok "restart: time_offset and the frame stored"; else bad "restart attributes"; fi

# 7. SIGTERM / SIGINT during a run (experiments/drop_stack made long): the step in progress ends, a
#    last frame, the file closed (h5dump and a plain h5py reader open it, /steps and /probes the same
#    length), the message, exit 128 + signal
stop_run() {  # SIGNAL OUT: start a long run, signal it once it writes its file, print its exit status
    "$CL" run experiments/drop_stack/drop_stack.json -o "$2" --threads 1 --set time.duration=100 \
        --set output.frames_every=7 </dev/null 2> "$2.err" &
    local pid=$! n=0
    while [ ! -s "$2" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
    sleep 1
    kill -"$1" $pid
    wait $pid
    echo $?
}
for sig in TERM INT; do
    rc=$(stop_run $sig "$tmp/stop_$sig.h5")
    want=$([ $sig = TERM ] && echo 143 || echo 130)
    if [ "$rc" = "$want" ] && grep -q "interrupted by SIG$sig at step [0-9]* (t = .*); output closed: .*stop_$sig.h5" "$tmp/stop_$sig.h5.err" &&
       h5dump -H "$tmp/stop_$sig.h5" > /dev/null && "$PY" - "$tmp/stop_$sig.h5" <<'PYCHK'
import sys
import h5py
f = h5py.File(sys.argv[1], "r")  # not swmr=True: the file is closed, no consistency flag left
n = len(f["/steps/time"])
assert n > 0 and all(len(f["/probes/" + k]) == n for k in f["/probes"]), "series of different lengths"
assert f["/frames/time"][-1] == f["/steps/time"][-1], "the last frame is not the last step"
print(f"      {n} steps, last frame at t = {f['/frames/time'][-1]:g} s")
PYCHK
    then ok "SIG$sig: exit $want, message, file closed (h5dump, h5py), series equal, last frame = last step"
    else bad "SIG$sig: rc=$rc (want $want): $(tail -c 300 "$tmp/stop_$sig.h5.err")"
    fi
done
# a second signal ends the program at once
"$CL" run "$scene" -o "$tmp/stop2.h5" --threads 1 --set time.duration=100 </dev/null 2>/dev/null &
pid=$!
n=0; while [ ! -s "$tmp/stop2.h5" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
kill -TERM $pid; kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] && ok "two SIGTERMs: exit 143 at once" || bad "two SIGTERMs: rc=$rc"

echo "cli_output: $pass passed, $fail failed"
[ $fail -eq 0 ]
