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

# resume: the same sweep again runs nothing (every point done before, same hash) and gives the same table
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/s" --jobs 2 \
    --grid time.duration=0.003,0.005 --grid time.dt=0.001,0.0005 \
    --metric t_end=/steps/time:last --metric iters=/steps/newton_iters:sum > "$tmp/out2.txt" 2> "$tmp/err2.txt"
rc=$?
nd=$(grep -c "done before" "$tmp/err2.txt")
[ $rc -eq 0 ] && [ "$nd" = 4 ] && ok "sweep: resumed, 4 of 4 points done before, not run again" \
    || bad "sweep resume: rc=$rc, $nd done before: $(cat "$tmp/err2.txt")"
# one point by index (a job array's task) and --collect
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/i" --grid time.duration=0.003,0.005 --index 1 2> "$tmp/i.err"
rc=$?
[ $rc -eq 0 ] && [ -f "$tmp/i/run_001.h5" ] && [ ! -f "$tmp/i/run_000.h5" ] && ok "sweep --index 1: that point only" \
    || bad "sweep --index: rc=$rc $(cat "$tmp/i.err")"
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/i" --grid time.duration=0.003,0.005 --collect > "$tmp/c.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "not run" "$tmp/i/summary.csv" && ok "sweep --collect: the point not run is a failed row, exit 1" \
    || bad "sweep --collect: rc=$rc $(cat "$tmp/c.txt")"
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/i" --grid time.duration=0.003,0.005 --index 2 > /dev/null 2>&1
[ $? -eq 2 ] && ok "sweep --index out of the grid: exit 2" || bad "sweep --index 2 of 2 points"
# a missing dataset or a vector without a component is an error of the row, not a NaN
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/m" --grid time.duration=0.002 --metric a=/probes/nosuch:last \
    > /dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "no dataset /probes/nosuch" "$tmp/m/summary.csv" && ok "sweep: a missing dataset fails its row (exit 1)" \
    || bad "sweep missing dataset: rc=$rc $(cat "$tmp/m/summary.csv")"
"$PY" scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/m2" --grid time.duration=0.002 --metric b=/frames/x:last > /dev/null 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "is a vector" "$tmp/m2/summary.csv" && ok "sweep: a vector metric without #K fails its row (exit 1)" \
    || bad "sweep vector metric: rc=$rc $(cat "$tmp/m2/summary.csv")"

# The same 4-point sweep through a real single-node Slurm on this machine (Debian slurm-wlm + munge, started
# here as root on 127.0.0.1 with a private configuration): job array, collect, the table equals the local one.
slurm_sweep() {
    if [ "$(id -u)" != 0 ]; then
        echo "SKIP  sweep on Slurm: not root (the test starts munged, slurmctld and slurmd itself)"
        return
    fi
    if ! command -v sbatch >/dev/null || [ ! -x /usr/sbin/slurmctld ] || [ ! -x /usr/sbin/munged ]; then
        bash scripts/install-deps.sh slurm-wlm munge > "$tmp/apt.log" 2>&1 \
            || { bad "sweep on Slurm: cannot install slurm-wlm and munge: $(tail -2 "$tmp/apt.log")"; return; }
    fi
    local sd="$tmp/slurm" host port started_munge=0
    mkdir -p "$sd/state" "$sd/spool" "$sd/log"
    host=$(hostname -s)
    port=$((17000 + ($$ % 500) * 2))
    if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
        [ -f /etc/munge/munge.key ] || mungekey -c >/dev/null 2>&1
        mkdir -p /run/munge && chown munge:munge /run/munge 2>/dev/null
        runuser -u munge -- /usr/sbin/munged > "$sd/log/munged.txt" 2>&1 || /usr/sbin/munged --force > "$sd/log/munged.txt" 2>&1
        started_munge=1
        sleep 1
        munge -n 2>/dev/null | unmunge >/dev/null 2>&1 \
            || { bad "sweep on Slurm: munged cannot start: $(cat "$sd/log/munged.txt")"; return; }
    fi
    {
        echo "ClusterName=ctsweep"
        echo "SlurmctldHost=$host(127.0.0.1)"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "AuthType=auth/munge"
        echo "CredType=cred/munge"
        echo "SlurmctldPort=$port"
        echo "SlurmdPort=$((port + 1))"
        echo "StateSaveLocation=$sd/state"
        echo "SlurmdSpoolDir=$sd/spool"
        echo "SlurmctldPidFile=$sd/slurmctld.pid"
        echo "SlurmdPidFile=$sd/slurmd.pid"
        echo "SlurmctldLogFile=$sd/log/slurmctld.log"
        echo "SlurmdLogFile=$sd/log/slurmd.log"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "MpiDefault=none"
        echo "SchedulerType=sched/backfill"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "ReturnToService=2"
        echo "NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN"
        echo "PartitionName=ctsweep Nodes=$host Default=YES MaxTime=INFINITE State=UP"
    } > "$sd/slurm.conf"
    export SLURM_CONF="$sd/slurm.conf"
    /usr/sbin/slurmctld > "$sd/log/ctld.out" 2>&1 && /usr/sbin/slurmd -N "$host" > "$sd/log/d.out" 2>&1
    local state="" i
    for i in $(seq 1 40); do
        state=$(timeout 5 sinfo -h -o %T 2>/dev/null | head -1)
        [ "$state" = idle ] && break
        sleep 0.5
    done
    local rc=1 rc2=1 same="(not run)"
    if [ "$state" = idle ]; then
        local args=(scripts/sweep.py "$scene" --cl "$CL" --out "$tmp/sl" --grid time.duration=0.003,0.005
                    --grid time.dt=0.001,0.0005 --metric t_end=/steps/time:last --metric iters=/steps/newton_iters:sum)
        "$PY" "${args[@]}" --slurm "$sd/job.sh" > /dev/null 2>&1 && timeout 300 sbatch --wait "$sd/job.sh" > "$sd/sbatch.txt" 2>&1
        rc=$?
        "$PY" "${args[@]}" --collect > "$sd/collect.txt" 2>&1
        rc2=$?
        # the local run's table ($tmp/s) and Slurm's, without the wall times
        same=$("$PY" -c '
import csv, sys
a, b = (list(csv.DictReader(open(p))) for p in sys.argv[1:3])
drop = {"wall_s", "wall_per_step_s"}
strip = lambda rows: [{k: v for k, v in r.items() if k not in drop} for r in rows]
print("yes" if len(a) == 4 and strip(a) == strip(b) else f"no: {strip(a)} vs {strip(b)}")' "$tmp/s/summary.csv" "$tmp/sl/summary.csv" 2>&1)
    fi
    for f in "$sd/slurmd.pid" "$sd/slurmctld.pid"; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null; done
    [ $started_munge = 1 ] && pkill -x munged 2>/dev/null
    unset SLURM_CONF
    if [ "$state" != idle ]; then
        bad "sweep on Slurm: the cluster did not come up (node state '$state'): $(tail -3 "$sd/log/slurmctld.log" "$sd/log/slurmd.log" 2>/dev/null)"
    elif [ $rc -eq 0 ] && [ $rc2 -eq 0 ] && [ "$same" = yes ]; then
        ok "sweep on Slurm: a job array of 4 tasks on a single-node cluster, the collected table = the local run's"
    else
        bad "sweep on Slurm: sbatch rc=$rc, collect rc=$rc2, same: $same; $(cat "$sd/sbatch.txt" "$sd/collect.txt" 2>/dev/null | tail -5)"
    fi
}
slurm_sweep

echo "cli_sweep: $pass passed, $fail failed"
[ $fail -eq 0 ]
