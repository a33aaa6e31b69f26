#!/bin/sh
# newton_regression.sh — the Newton regression scenes of issue 15 (tests/data/scenes/newton/,
# written by make_scenes.py there) at solver.newton_tol = the default (1e-2) and 1e-5, the slope
# scenes also at 1e-7 and 1e-8; one run at a time, one thread. One table row per run: exit status,
# steps done, Newton iterations per step (mean, max), line-search halvings (total), smallest CCD
# alpha, and for the slopes the last step's friction / (m g sin th) and normal / (m g cos th), with
# m = density x volume (2D: per metre of thickness) and tan th = 0.5.
# Each run is also checked against issue 15's acceptance: it converges (exit 0) with the default
# caps, its worst step takes <= 60 Newton iterations and the mean is <= 10, and on the slopes the
# last step's friction and normal forces are within 1 % of their static (mu 0.8: friction =
# m g sin th, normal = m g cos th) or sliding (mu 0.2: friction = mu m g cos th) values. The
# script exits 1 when any run fails a check (FAIL lines name the run and the check).
# `make test` runs the fast subset (tests/cli_newton.sh); `make newton-table` all of them.
#
#   tests/newton_regression.sh TABLE.md [SCENE-NAME-GLOB]
# Environment: CONTACTLAB (default build/contactlab), PYTHON (default /usr/bin/python3, needs h5py),
# OUT (run files, default a temporary folder, removed at the end unless OUT is given).
set -u
cd "$(dirname "$0")/.." || exit 2
[ $# -ge 1 ] || { echo "usage: $0 TABLE.md [SCENE-NAME-GLOB]" >&2; exit 2; }
TABLE=$1
GLOB=${2:-*}
BIN=${CONTACTLAB:-build/contactlab}
PY=${PYTHON:-/usr/bin/python3}
[ -x "$BIN" ] || { echo "$0: $BIN not built (make all)" >&2; exit 2; }
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT"; KEEP=1; else OUT=$(mktemp -d); KEEP=0; fi
TOLS_SLOPE=${TOLS_SLOPE:-default 1e-5 1e-7 1e-8}
TOLS_OTHER=${TOLS_OTHER:-default 1e-5}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
fails=0
{
    echo "| scene | newton_tol | exit | steps | iters mean | iters max | LS halvings | min CCD alpha | friction/(m g sin) | normal/(m g cos) | wall s |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
} | tee "$TABLE"
for f in tests/data/scenes/newton/$GLOB.json; do
    name=$(basename "$f" .json)
    case $name in slope*) tols=$TOLS_SLOPE ;; *) tols=$TOLS_OTHER ;; esac
    for tol in $tols; do
        h5=$OUT/${name}_$tol.h5
        rm -f "$h5"
        set -- run "$f" -o "$h5" --threads 1
        [ "$tol" = default ] || set -- "$@" --set solver.newton_tol="$tol"
        t0=$(date +%s.%N)
        "$BIN" "$@" >"$OUT/${name}_$tol.log" 2>&1
        rc=$?
        t1=$(date +%s.%N)
        "$PY" - "$h5" "$name" "$tol" "$rc" "$t0" "$t1" "$OUT/verdict" <<'PYEOF' | tee -a "$TABLE"
import math, sys
sys.path.insert(0, "python")
from contactlab import runs
h5, name, tol, rc, t0, t1, verdict = sys.argv[1:8]
bad = []
def check(ok, what):
    if not ok:
        bad.append(what)
def done():
    with open(verdict, "w") as f:
        f.write("".join("FAIL %s newton_tol=%s: %s\n" % (name, tol, b) for b in bad))
check(rc == "0", "exit %s" % rc)
try:
    r = runs.load(h5)
except Exception as e:  # no run file (bad input)
    print("| %s | %s | %s | - | - | - | - | - | - | - | %.1f |" % (name, tol, rc, float(t1) - float(t0)))
    done()
    sys.exit(0)
it = r.steps["newton_iters"]
n = len(it)
if n:
    check(it.max() <= 60, "worst step %d > 60 Newton iterations" % it.max())
    check(it.mean() <= 10, "mean %.2f > 10 Newton iterations per step" % it.mean())
row = [name, tol, rc, str(n), "%.1f" % it.mean() if n else "-", "%d" % it.max() if n else "-",
       "%d" % r.steps["line_search_iters"].sum() if n else "-",
       "%.3g" % r.steps["ccd_alpha_min"].min() if n else "-"]
if name.startswith("slope") and n:
    b = r.scene["bodies"][0]
    vol = 1.0
    for s in b["mesh"]["size"]:
        vol *= s
    m = b["material"]["density"] * vol
    g = abs(r.scene["gravity"][1])
    th = math.atan(0.5)
    fr = r.probes["friction_force"][-1]
    no = r.probes["normal_force"][-1]
    rf = math.sqrt((fr ** 2).sum()) / (m * g * math.sin(th))
    rn = math.sqrt((no ** 2).sum()) / (m * g * math.cos(th))
    mu = r.scene["contact"]["mu"]
    ef = 1.0 if mu >= math.tan(th) else mu / math.tan(th)  # holding / sliding: mu N / (m g sin)
    check(abs(rf / ef - 1) <= 0.01, "friction %.4f of its %s value" % (rf / ef, "static" if ef == 1 else "sliding"))
    check(abs(rn - 1) <= 0.01, "normal %.4f of m g cos th" % rn)
    row += ["%.4f" % rf, "%.4f" % rn]
else:
    row += ["", ""]
row.append("%.1f" % (float(t1) - float(t0)))
print("| " + " | ".join(row) + " |")
done()
PYEOF
        if [ -s "$OUT/verdict" ]; then
            cat "$OUT/verdict" >&2
            fails=$((fails + 1))
        fi
    done
done
echo "$fails run(s) failed a check" | tee -a "$TABLE"
[ $KEEP -eq 1 ] || rm -rf "$OUT"
[ $fails -eq 0 ]
