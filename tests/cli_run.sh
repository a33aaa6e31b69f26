#!/usr/bin/env bash
# End-to-end runs of the CLI: a normal run (exit 0, readable output, export), a run that
# cannot converge (exit 1 with a message naming step and iteration), and a run killed
# with SIGKILL that leaves a readable file with every flushed step.
set -u
cd "$(dirname "$0")/.."
CL=${CT_BUILD:-build}/contactlab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "ok    $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }

# 1. a short run: exit 0, /steps/time has one row per step, export works
"$CL" run tests/data/scenes/run/long_box.json -o "$tmp/a.h5" --quiet --set time.duration=0.005 </dev/null
rc=$?
rows=$("$CL" export "$tmp/a.h5" /steps/time /probes/bottom 2>/dev/null | grep -vc '^#')
[ $rc -eq 0 ] && [ "$rows" = 5 ] && ok "run: exit 0, 5 steps logged" || bad "run: rc=$rc rows=$rows"
"$CL" export "$tmp/a.h5" /steps/time /probes/bottom 2>/dev/null | head -1 | grep -q '^# /steps/time(s) /probes/bottom(m)$' \
    && ok "export: the header carries the units" || bad "export header: $("$CL" export "$tmp/a.h5" /steps/time /probes/bottom | head -1)"
"$CL" export "$tmp/a.h5" /steps/time --csv > "$tmp/a.csv" 2>/dev/null && head -1 "$tmp/a.csv" | grep -q time \
    && ok "export --csv" || bad "export --csv"

# 2. cannot converge: one Newton iteration and an impossible tolerance -> exit 1
"$CL" run tests/data/scenes/run/long_box.json -o "$tmp/b.h5" --quiet --set time.duration=0.002 \
    --set solver.max_newton_iters=1 --set solver.newton_tol=1e-30 </dev/null 2> "$tmp/b.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "step 0" "$tmp/b.err" && grep -q "did not converge" "$tmp/b.err"; then
    ok "non-convergence: exit 1 with step and residual"
else
    bad "non-convergence: rc=$rc: $(cat "$tmp/b.err")"
fi

# 3. bad command-line input -> exit 2
"$CL" run tests/data/scenes/run/long_box.json --set bodies.7.material.E=1 -o "$tmp/c.h5" </dev/null 2>/dev/null
[ $? -eq 2 ] && ok "bad --set: exit 2" || bad "bad --set"
# a parameter of another model: "ipc" has only the IPC parameters (eps_c is ipc_adhesion's)
"$CL" run tests/data/scenes/run/long_box.json -o "$tmp/e.h5" --set 'contact={"model": "ipc"}' \
    --set contact.eps_c=0.5 </dev/null 2> "$tmp/e.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "/contact/eps_c" "$tmp/e.err"; then ok "ipc with --set contact.eps_c: exit 2 naming /contact/eps_c"
else bad "ipc with --set contact.eps_c: rc=$rc: $(cat "$tmp/e.err")"; fi
"$CL" check tests/data/scenes/run/long_box.json --set 'contact={"model": "ipc_adhesion"}' --set contact.eps_c=0.5 \
    </dev/null >/dev/null 2>&1
[ $? -eq 0 ] && ok "ipc_adhesion with --set contact.eps_c: accepted" || bad "ipc_adhesion with --set contact.eps_c"
# a constraint-family model takes dynamic steps only: refused at ct_sim_create, naming the scene key
"$CL" check tests/data/scenes/run/long_box.json --set 'contact={"model": "lcp_halfspace"}' \
    --set 'time.integrator="static"' </dev/null >/dev/null 2> "$tmp/s.err"
rc=$?
if [ $rc -eq 2 ] && grep -q "/time/integrator: model lcp_halfspace (constraint family)" "$tmp/s.err"; then
    ok "lcp_halfspace with the static integrator: exit 2 naming /time/integrator"
else bad "lcp_halfspace static: rc=$rc: $(cat "$tmp/s.err")"; fi
"$CL" run /nonexistent/scene.json </dev/null 2>/dev/null
[ $? -eq 2 ] && ok "missing scene: exit 2" || bad "missing scene"
"$CL" export "$tmp/a.h5" /probes/nope </dev/null >/dev/null 2>&1
[ $? -eq 2 ] && ok "export of a missing dataset: exit 2" || bad "export missing dataset"

# 4. SIGKILL after some steps: the file stays readable with every flushed step
"$CL" run tests/data/scenes/run/long_box.json -o "$tmp/k.h5" --quiet </dev/null &
pid=$!
for _ in $(seq 1 100); do
    sleep 0.1
    n=$("$CL" export "$tmp/k.h5" /steps/time 2>/dev/null | grep -vc '^#')
    [ "${n:-0}" -ge 10 ] && break
done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
n=$("$CL" export "$tmp/k.h5" /steps/time /probes/bottom 2>/dev/null | grep -vc '^#')
last=$("$CL" export "$tmp/k.h5" /steps/time 2>/dev/null | tail -1)
if [ "${n:-0}" -ge 10 ] && [ $((n % 5)) -eq 0 ]; then ok "SIGKILL: $n flushed steps readable (last t = $last)"
else bad "SIGKILL: $n rows"; fi
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import h5py' 2>/dev/null; then
    /usr/bin/python3 - "$tmp/k.h5" "$n" <<'PY' && ok "SIGKILL: h5py (swmr=True) reads every flushed step" || bad "SIGKILL: h5py"
import sys, h5py
with h5py.File(sys.argv[1], "r", libver="latest", swmr=True) as f:
    t = f["/steps/time"][:]
    assert len(t) >= int(sys.argv[2]), (len(t), sys.argv[2])
    assert abs(t[0] - 0.001) < 1e-12 and all(t[1:] > t[:-1])
    assert f["/frames/x"].shape[1:] == (729, 3)
PY
fi
if command -v h5clear >/dev/null && command -v h5dump >/dev/null; then
    cp "$tmp/k.h5" "$tmp/k2.h5"
    h5clear -s "$tmp/k2.h5" && h5dump -H "$tmp/k2.h5" >/dev/null && ok "SIGKILL: h5dump reads it after h5clear -s" \
        || bad "SIGKILL: h5dump"
fi
# 6. safe threads (ct_cli_safe_threads): with the variables unset the program runs with passive waiting and
#    one BLAS thread (it re-executes itself), the run file records them; a value the user set is kept
attr() { h5dump -a "/$2" "$1" 2>/dev/null | grep -o '"[^"]*"' | tail -1; }
if command -v h5dump >/dev/null; then
    env -u OMP_WAIT_POLICY -u OPENBLAS_NUM_THREADS -u CT_KEEP_ENV "$CL" run tests/data/scenes/run/long_box.json \
        -o "$tmp/t1.h5" --quiet --set time.duration=0.002 </dev/null
    w=$(attr "$tmp/t1.h5" omp_wait_policy) b=$(attr "$tmp/t1.h5" openblas_num_threads)
    [ "$w" = '"passive"' ] && [ "$b" = '"1"' ] && ok "threads: unset -> OMP_WAIT_POLICY passive, OPENBLAS_NUM_THREADS 1" \
        || bad "threads: unset gave wait policy $w, BLAS threads $b"
    env -u CT_KEEP_ENV OMP_WAIT_POLICY=active OPENBLAS_NUM_THREADS=2 "$CL" run tests/data/scenes/run/long_box.json \
        -o "$tmp/t2.h5" --quiet --set time.duration=0.002 </dev/null
    w=$(attr "$tmp/t2.h5" omp_wait_policy) b=$(attr "$tmp/t2.h5" openblas_num_threads)
    [ "$w" = '"active"' ] && [ "$b" = '"2"' ] && ok "threads: the user's OMP_WAIT_POLICY / OPENBLAS_NUM_THREADS kept" \
        || bad "threads: set by the user, got wait policy $w, BLAS threads $b"
fi
# 8. export --vtk: the frames as VTK XML + run.pvd, parsed and compared with the run (tests/vtk_check.py), 3D and 2D
PYV=${CT_PYTHON:-/usr/bin/python3}
if "$PYV" -c "import h5py, numpy" 2>/dev/null; then
    "$CL" export --vtk "$tmp/a.h5" "$tmp/vtk3" 2>/dev/null && out=$("$PYV" tests/vtk_check.py "$tmp/a.h5" "$tmp/vtk3" 2>&1) \
        && ok "export --vtk 3D: $out" || bad "export --vtk 3D: $out"
    "$CL" run tests/data/scenes/newton/slope2d_mu0.2.json -o "$tmp/s2.h5" --quiet --steps 3 </dev/null \
        && "$CL" export --vtk "$tmp/s2.h5" "$tmp/vtk2" 2>/dev/null && out=$("$PYV" tests/vtk_check.py "$tmp/s2.h5" "$tmp/vtk2" 2>&1) \
        && ok "export --vtk 2D: $out" || bad "export --vtk 2D: $out"
    "$CL" export --vtk "$tmp/none.h5" "$tmp/vtk4" 2>/dev/null
    rc=$?
    [ $rc -eq 2 ] && ok "export --vtk of a missing file: exit 2" || bad "export --vtk of a missing file: rc=$rc"
    # the model's per-vertex contact fields (/frames/contact_force, gap, beta -> point data): a block resting on
    # its support at the end, by an IPC model (3D), rcc_ipc (3D, beta from bonding under compression), lcp_pgs
    # (2D, adhesive) and imls (2D, on a fixed base); vtk_check --rest: the contact forces balance the weight
    # (with M a, to Newton's force residual), the touching vertices' gaps are in (0, reach], beta in [0, 1]
    for m in ipc:"" rcc:--bonded lcp:--bonded imls:""; do
        sc=tests/data/scenes/run/rest_${m%%:*}.json
        if "$CL" run "$sc" -o "$tmp/r_${m%%:*}.h5" --quiet </dev/null && "$CL" export --vtk "$tmp/r_${m%%:*}.h5" \
            "$tmp/vtk_${m%%:*}" >/dev/null 2>&1 && out=$("$PYV" tests/vtk_check.py "$tmp/r_${m%%:*}.h5" "$tmp/vtk_${m%%:*}" \
            --rest block ${m#*:} 2>&1); then ok "export --vtk contact fields (${m%%:*}): $out"
        else bad "export --vtk contact fields (${m%%:*}): $out"; fi
    done
    # a run written before the fields existed (here: the ipc run without them) still exports, without them
    cp "$tmp/r_ipc.h5" "$tmp/old.h5"
    if "$PYV" -c "import h5py, sys
with h5py.File(sys.argv[1], 'a') as f:
    del f['/frames/contact_force'], f['/frames/gap']" "$tmp/old.h5" && "$CL" export --vtk "$tmp/old.h5" "$tmp/vtk_old" \
        >/dev/null 2>&1 && out=$("$PYV" tests/vtk_check.py "$tmp/old.h5" "$tmp/vtk_old" 2>&1) && ! grep -q contact_force \
        "$tmp/vtk_old/frame_00000.vtu"; then ok "export --vtk of a run without contact fields: $out"
    else bad "export --vtk of a run without contact fields: $out"; fi
fi
# 9. the picture and the animation of a run (scripts/animate.py): a GIF with every frame and a PNG that
#    shows the body (pixels of body 0's colour, #1f77b4, in the axes)
if "$PYV" -c "import h5py, numpy, matplotlib" 2>/dev/null; then
    if out=$("$PYV" scripts/animate.py "$tmp/a.h5" "$tmp/a.gif" --png "$tmp/a.png" 2>&1) && [ -s "$tmp/a.gif" ]; then
        px=$("$PYV" -c "
import sys, numpy as np, matplotlib.image as mi
im = mi.imread(sys.argv[1])[..., :3]
c = np.array([0x1f, 0x77, 0xb4]) / 255.0
print(int((np.abs(im - c).max(axis=2) < 0.02).sum()))" "$tmp/a.png")
        [ "${px:-0}" -gt 200 ] && ok "animate: GIF and PNG written, $px pixels of the body's colour" \
            || bad "animate: the PNG shows no body ($px pixels of its colour)"
    else
        bad "animate: $out"
    fi
fi
# 10. progress in batch logs (stderr not a terminal): a whole line every CT_PROGRESS_EVERY s (default 30)
CT_PROGRESS_EVERY=1e-6 "$CL" run tests/data/scenes/run/long_box.json -o "$tmp/p.h5" --set time.duration=0.005 \
    </dev/null 2> "$tmp/p.err" >/dev/null
n=$(grep -c "step [0-9]*/5 .*elapsed, ETA" "$tmp/p.err")
[ "$n" = 5 ] && ok "progress: a line per interval in a batch log (5 of 5 steps)" || bad "progress: $n lines: $(head -3 "$tmp/p.err")"
# 11. the set-up's warnings come before step 1 (here: mu_a without adhesion), not after the run
CT_PROGRESS_EVERY=1e-6 "$CL" run tests/data/scenes/run/long_box.json -o "$tmp/w.h5" --set time.duration=0.002 \
    --set 'contact={"model":"ipc_adhesion","mu_a":0.5}' </dev/null 2> "$tmp/w.err" >/dev/null
wl=$(grep -n "mu_a" "$tmp/w.err" | head -1 | cut -d: -f1) sl=$(grep -n "step 1/" "$tmp/w.err" | head -1 | cut -d: -f1)
[ -n "$wl" ] && [ -n "$sl" ] && [ "$wl" -lt "$sl" ] && ok "warnings before step 1 (line $wl, step 1 at line $sl)" \
    || bad "warnings before step 1: $(cat "$tmp/w.err")"
# 7. --version and --help: exit 0 on stdout
v=$("$CL" --version 2>/dev/null) && echo "$v" | grep -Eq '^contactlab [0-9]+\.[0-9]+\.[0-9]+ \(' \
    && ok "--version: $v" || bad "--version: '$v'"
"$CL" --help 2>/dev/null | grep -q "contactlab run SCENE.json" && ok "--help: the usage on stdout" || bad "--help"
# a body thrown at 1e10 m/s: the CCD cannot resolve the step within its work budget -> exit 1 naming
# the step and the reason, at once (it used to iterate Newton for minutes on ever smaller steps)
timeout 120 "$CL" run tests/data/scenes/run/rest_ipc.json -o "$tmp/fast.h5" --quiet --threads 1 --steps 3 \
    --set 'bodies.0.velocity=[0,-1e10,0]' </dev/null 2> "$tmp/fast.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "step 0: model ipc: max_step could not resolve a safe step size within its work budget" "$tmp/fast.err"; then
    ok "1e10 m/s: exit 1 at step 0, the CCD work budget named"
else
    bad "1e10 m/s: rc=$rc $(tail -c 300 "$tmp/fast.err")"
fi
# an output folder that does not exist: run refuses it at set-up (exit 2, naming -o or /output/file);
# check warns (the run may happen in another working directory)
"$CL" run tests/data/scenes/run/rest_ipc.json -o "$tmp/no/such/dir/x.h5" --quiet </dev/null 2> "$tmp/od.err"
rc=$?
[ $rc -eq 2 ] && grep -q -- "-o $tmp/no/such/dir/x.h5: cannot write the output file in \"$tmp/no/such/dir\"" "$tmp/od.err" \
    && ok "-o in a missing folder: exit 2 before the run" || bad "-o in a missing folder: rc=$rc $(cat "$tmp/od.err")"
"$CL" run tests/data/scenes/run/rest_ipc.json --set "output.file=\"$tmp/no/x.h5\"" --quiet </dev/null 2> "$tmp/od.err"
rc=$?
[ $rc -eq 2 ] && grep -q "rest_ipc.json: /output/file: cannot write the output file" "$tmp/od.err" \
    && ok "output.file in a missing folder: exit 2 naming /output/file" || bad "output.file: rc=$rc $(cat "$tmp/od.err")"
"$CL" check tests/data/scenes/run/rest_ipc.json --set "output.file=\"$tmp/no/x.h5\"" </dev/null >/dev/null 2> "$tmp/od.err"
rc=$?
[ $rc -eq 0 ] && grep -q "warning: .*/output/file: the folder" "$tmp/od.err" \
    && ok "check: a warning for the missing output folder" || bad "check output folder: rc=$rc $(cat "$tmp/od.err")"
# a failure inside a step that no stage explains still names the step and the model (here the
# contact energy overflows: every term is infinite at 1e20 m/s)
timeout 120 "$CL" run tests/data/scenes/run/rest_ipc.json -o "$tmp/nf.h5" --quiet --threads 1 --steps 3 \
    --set 'bodies.0.velocity=[1e20,0,0]' </dev/null 2> "$tmp/nf.err"
rc=$?
[ $rc -eq 1 ] && grep -q "step 0 (t = 0): model ipc: non-finite value" "$tmp/nf.err" \
    && ok "1e20 m/s: exit 1 naming step 0, the model and the non-finite value" || bad "1e20 m/s: rc=$rc $(cat "$tmp/nf.err")"
echo "cli_run: $pass passed, $fail failed"
[ $fail -eq 0 ]
