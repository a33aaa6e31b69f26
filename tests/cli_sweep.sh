#!/usr/bin/env bash
# scripts/sweep.py: a 2 x 2 grid of a short run, in parallel; the summary has one row per
# combination, in grid order, and its metrics are the reductions of the runs' datasets: the last
# /steps/time equals the duration that was set, the step count duration / dt, and a failing
# combination keeps its row and makes the script exit 1; bad usage exits 2.
set -u
cd "$(dirname "$0")/.."
CL=${CT_BUILD:-build}/contactlab
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "ok    $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }
scene=tests/data/scenes/run/long_box.json

"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/s" --jobs 2 \
    --grid time.duration=0.003,0.005 --grid time.dt=0.001,0.0005 \
    --metric t_end=/steps/time:last --metric iters=/steps/newton_iters:sum > "$tmp/out.txt" 2>&1
rc=$?
check=$("$PY" - "$tmp/s/summary.csv" <<'PYEOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = [(0.003, 0.001), (0.003, 0.0005), (0.005, 0.001), (0.005, 0.0005)]
ok = len(rows) == 4
for r, (T, dt) in zip(rows, want):
    ok &= float(r["time.duration"]) == T and float(r["time.dt"]) == dt and r["exit"] == "0"
    ok &= abs(float(r["t_end"]) - T) < 1e-12 and int(r["steps"]) == round(T / dt)
    ok &= float(r["iters"]) >= int(r["steps"])
print("yes" if ok else "no: " + repr(rows))
PYEOF
)
[ $rc -eq 0 ] && [ "$check" = yes ] && ok "sweep: 4 runs in grid order, t_end = duration, steps = duration/dt" \
    || bad "sweep: rc=$rc $check $(cat "$tmp/out.txt")"

"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/f" --grid solver.max_newton_iters=1,50 \
    --set solver.newton_tol=1e-30 --set time.duration=0.002 > "$tmp/f.txt" 2>&1
rc=$?
rows=$(tail -n +2 "$tmp/f/summary.csv" | wc -l)
[ $rc -eq 1 ] && [ "$rows" = 2 ] && ok "sweep: failing runs keep their rows, exit 1" || bad "sweep failing: rc=$rc rows=$rows"

"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/g" > /dev/null 2>&1
[ $? -eq 2 ] && ok "sweep: no --grid: exit 2" || bad "sweep without --grid"
"$PY" scripts/sweep.py "$scene" --grid time.dt=0.01 --metric x=/steps/time:median > /dev/null 2>&1
[ $? -eq 2 ] && ok "sweep: unknown reduction: exit 2" || bad "sweep unknown reduction"

echo "cli_sweep: $pass passed, $fail failed"
[ $fail -eq 0 ]
