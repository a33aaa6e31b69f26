#!/usr/bin/env python3
"""Driver and analysis of experiments/annulus_inverse (Du et al. 2023, "No Free Slide", Fig. 7,
eq. 10): the inverse problem on the annulus_forward scene. Find B's angle θ_B such that the static
equilibrium angle of A, θ_A(θ_B), reaches a target θ_A*, by gradient descent on
L(θ_B) = ½ (θ_A(θ_B) − θ_A*)²:

    θ_B ← θ_B − η (θ_A − θ_A*) dθ_A/dθ_B,

dθ_A/dθ_B from `contactlab sensitivity --param bodies.B.fixed.0.motion.0.angular_velocity` (the
static integrator with dt = duration = 1: B is turned by its angular velocity ω about the origin,
θ_B = θ_B⁰ + ω, d/dω = d/dθ_B), from the derivative of A's apex position (probe apex_a):
dθ_A/dθ_B = (x dy − y dx)/(x² + y²).

Every iteration is one `contactlab sensitivity` run: a fresh one-step static solve from the same
initial state (A and B placed at the start angle θ_B⁰ by their meshes' rotation; B then turned by
ω = θ_B − θ_B⁰). Rows (model configurations) and targets come from run.sh; the jobs (a row and a
target: its iterations in sequence) run JOBS processes at a time. Prints every iteration, a table
per row and target, checks the claims of README.md (exit 1 if one fails), writes
OUTDIR/annulus_inverse.dat and, unless --no-plot, OUTDIR/annulus_inverse.png."""
import concurrent.futures as cf
import json
import math
import os
import subprocess
import sys
import time

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

PARAM = "bodies.B.fixed.0.motion.0.angular_velocity"
DEG = 180.0 / math.pi

ap = cli.parser(__doc__, "plots/out/annulus_inverse")
ap.add_argument("--cl", required=True, help="the contactlab CLI")
ap.add_argument("--scene", required=True, help="the annulus_forward scene")
ap.add_argument("--mesh", required=True, help="folder of annulus.msh, tri_a.msh, tri_b.msh (make_mesh.py)")
ap.add_argument("--row", nargs=2, action="append", required=True, metavar=("LABEL", "CONTACT_JSON"),
                help="a model configuration: label and the scene's contact object")
ap.add_argument("--targets", nargs="+", type=float, required=True, help="targets θ_A* (degrees)")
ap.add_argument("--offsets", nargs="+", type=float, required=True,
                help="start θ_B⁰ = θ_A* + offset (degrees), one per target")
ap.add_argument("--eta", type=float, default=0.5, help="gradient-descent step η (default 0.5)")
ap.add_argument("--max-runs", type=int, default=20, help="sensitivity runs per row and target (default 20)")
ap.add_argument("--tol", type=float, default=1e-4, help="|θ_A − θ_A*| to reach (rad, default 1e-4)")
ap.add_argument("--fd-point", nargs=2, type=float, action="append", metavar=("START_DEG", "OMEGA_DEG"),
                help="a finite-difference check: start angle and ω (degrees); the first is claimed, the others "
                     "reported (default: 30.9375 0.5)")
ap.add_argument("--fd-h", type=float, default=1e-5, help="finite-difference step in ω (rad, default 1e-5)")
ap.add_argument("--jobs", type=int, default=2, help="processes at a time (default 2)")
args = ap.parse_args()
args.fd_point = args.fd_point or [[30.9375, 0.5]]
if len(args.offsets) != len(args.targets):
    sys.exit("inverse.py: one --offsets value per target")
out = args.outdir
os.makedirs(out, exist_ok=True)


def solve(contact, start_deg, omega):
    """One `contactlab sensitivity` run: A and B start at start_deg, B turned by omega (rad).
    Returns dict(ok, thA, thB, dthA, r, wall, err_msg)."""
    cmd = [args.cl, "sensitivity", args.scene, "--param", PARAM, "--threads", "1", "--quiet",
           "--set", "time.duration=1",
           "--set", f"bodies.0.mesh.file={args.mesh}/annulus.msh",
           "--set", f"bodies.1.mesh.file={args.mesh}/tri_a.msh",
           "--set", f"bodies.1.mesh.transform.rotate.angle_deg={start_deg!r}",
           "--set", f"bodies.2.mesh.file={args.mesh}/tri_b.msh",
           "--set", f"bodies.2.mesh.transform.rotate.angle_deg={start_deg!r}",
           "--set", f"bodies.2.fixed.motion.0.angular_velocity={omega!r}",
           "--set", "contact=" + contact]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        return dict(ok=False, wall=wall, msg=(p.stderr.strip().splitlines() or ["?"])[-1])
    val, der = {}, {}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 6 and f[0] == PARAM and f[2] in ("apex_a", "apex_b"):
            val[f[2], f[3]], der[f[2], f[3]] = float(f[4]), float(f[5])
    x, y = val["apex_a", "x"], val["apex_a", "y"]
    dx, dy = der["apex_a", "x"], der["apex_a", "y"]
    return dict(ok=True, wall=wall, thA=math.atan2(y, x), thB=math.atan2(val["apex_b", "y"], val["apex_b", "x"]),
                dthA=(x * dy - y * dx) / (x * x + y * y), r=math.hypot(x, y))


def descend(label, contact, target_deg, offset_deg):
    """Gradient descent for one row and target: up to max_runs sensitivity runs."""
    tgt = math.radians(target_deg)
    start = target_deg + offset_deg  # θ_B⁰ (degrees): the initial state of every run
    thB = math.radians(start)
    hist = []
    for k in range(args.max_runs):
        s = solve(contact, start, thB - math.radians(start))
        s["thB_set"] = thB
        hist.append(s)
        if not s["ok"]:
            break
        e = s["thA"] - tgt
        s["err"] = e
        if abs(e) <= args.tol:
            break
        thB -= args.eta * e * s["dthA"]
    return dict(label=label, target=tgt, start=math.radians(start), hist=hist)


def fd_check(label, contact, st, om):
    """dθ_A/dθ_B of the sensitivity run against the central difference of two runs at ω ± h."""
    om = math.radians(om)
    c = solve(contact, st, om)
    m, p = solve(contact, st, om - args.fd_h), solve(contact, st, om + args.fd_h)
    if not (c["ok"] and m["ok"] and p["ok"]):
        return dict(label=label, ok=False)
    fd = (p["thA"] - m["thA"]) / (2 * args.fd_h)
    return dict(label=label, ok=True, d=c["dthA"], fd=fd, rel=abs(c["dthA"] - fd) / max(abs(fd), 1e-300),
                thA=c["thA"], thB=c["thB"])


rows = [(lab, js) for lab, js in args.row]
t_all = time.perf_counter()
with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
    fut_d = {(lab, i): pool.submit(descend, lab, js, t, o)
             for lab, js in rows for i, (t, o) in enumerate(zip(args.targets, args.offsets))}
    fut_fd = {(lab, j): pool.submit(fd_check, lab, js, *pt) for lab, js in rows for j, pt in enumerate(args.fd_point)}
    res = {key: f.result() for key, f in fut_d.items()}
    fds = {key: f.result() for key, f in fut_fd.items()}
t_all = time.perf_counter() - t_all

# ---- every iteration
print(f" gradient descent on ½(θ_A − θ_A*)², η = {args.eta:g}, at most {args.max_runs} sensitivity runs, "
      f"tolerance |θ_A − θ_A*| ≤ {args.tol:g} rad; each run a fresh one-step static solve from the start state")
with open(os.path.join(out, "annulus_inverse.dat"), "w") as fo:
    fo.write("# row target_deg run theta_B_deg theta_A_deg err_rad dthetaA_dthetaB wall_s\n")
    for (lab, i), r in res.items():
        print(f"\n {lab}: θ_A* = {DEG * r['target']:.4f}°, start θ_B⁰ = {DEG * r['start']:.4f}°")
        print("   run   θ_B (°)      θ_A (°)      θ_A − θ_A* (rad)  dθ_A/dθ_B   wall (s)")
        for k, s in enumerate(r["hist"]):
            if not s["ok"]:
                print(f"   {k + 1:3d}   {DEG * s['thB_set']:10.5f}   run failed: {s['msg']}")
                continue
            print(f"   {k + 1:3d}   {DEG * s['thB']:10.5f}   {DEG * s['thA']:10.5f}   {s['err']:+.3e}        "
                  f"{s['dthA']:+.4e}  {s['wall']:.3f}")
            fo.write(f"{lab} {DEG * r['target']:.6f} {k + 1} {DEG * s['thB']:.9f} {DEG * s['thA']:.9f} {s['err']:.9e} "
                     f"{s['dthA']:.9e} {s['wall']:.4f}\n")

# ---- summary per row and target
print("\n row          θ_A* (°)   θ_B⁰ (°)   runs  converged  final θ_B (°)  final |θ_A − θ_A*| (rad)  "
      "min |err| (rad)  final dθ_A/dθ_B  s/run")
summary = {}
for (lab, i), r in res.items():
    h = [s for s in r["hist"] if s["ok"]]
    failed = len(h) < len(r["hist"])
    errs = np.array([abs(s["err"]) for s in h]) if h else np.array([math.inf])
    conv = bool(h) and errs[-1] <= args.tol
    summary[lab, i] = dict(conv=conv, runs=len(r["hist"]), final=errs[-1], minerr=errs.min(), failed=failed,
                           dthA=h[-1]["dthA"] if h else math.nan, thB=h[-1]["thB"] if h else math.nan,
                           wall=np.mean([s["wall"] for s in r["hist"]]))
    m = summary[lab, i]
    print(f" {lab:<12} {DEG * r['target']:8.4f}  {DEG * r['start']:8.4f}  {m['runs']:5d}  "
          f"{'yes' if conv else ('FAILED RUN' if failed else 'no'):>9}  {DEG * m['thB']:13.5f}  {m['final']:24.3e}  "
          f"{m['minerr']:15.3e}  {m['dthA']:+15.4e}  {m['wall']:.3f}")
walls = [s["wall"] for r in res.values() for s in r["hist"]]
print(f"\n {len(walls)} sensitivity runs, {np.mean(walls):.3f} s each on average (max {np.max(walls):.3f} s), "
      f"{t_all:.1f} s in all with {args.jobs} at a time (FD checks included)")

print(f"\n dθ_A/dθ_B against the central difference of two runs at ω ± h, h = {args.fd_h:g} rad")
for (lab, j), f in fds.items():
    st, om = args.fd_point[j]
    if f["ok"]:
        print(f" {lab:<12} start {st:g}°, ω = {om:g}°: θ_B = {DEG * f['thB']:.5f}°, θ_A = {DEG * f['thA']:.5f}°  "
              f"sensitivity {f['d']:+.10e}  FD {f['fd']:+.10e}  relative {f['rel']:.2e}")
    else:
        print(f" {lab:<12} start {st:g}°, ω = {om:g}°: a run failed")

# ---- claims (README.md, "Claims")
claims = Claims()
for lab, js in rows:
    model = json.loads(js)["model"]
    for j, (st, om) in enumerate(args.fd_point):
        f = fds[lab, j]
        txt = (f"{lab}: dθ_A/dθ_B of the sensitivity run = the central difference of two forward runs "
               f"(start {st:g}°, ω = {om:g}°)")
        if j == 0:
            claims.check(f["ok"] and f["rel"] <= 1e-4, txt,
                         measured=f"relative {f['rel']:.1e}" if f["ok"] else "a run failed", expected="<= 1e-4")
        else:
            claims.report(f["ok"] and f["rel"] <= 1e-4, txt + (f": relative {f['rel']:.1e}" if f["ok"] else ": a run failed"))
    mine = [(i, summary[lab, i]) for i in range(len(args.targets))]
    nconv = sum(m["conv"] for _, m in mine)
    text = (f"{lab}: converged to |θ_A − θ_A*| ≤ {args.tol:g} rad within {args.max_runs} runs for {nconv} of "
            f"{len(mine)} targets (runs: " + ", ".join(str(m["runs"]) if m["conv"] else "—" for _, m in mine) + ")")
    if model == "imls":  # the paper's claim: IMLS converges (in 8 steps)
        claims.check(nconv == len(mine), text, measured=f"{nconv} of {len(mine)}", expected="all")
    else:
        claims.report(nconv == len(mine), text)
        stalled = [(i, m) for i, m in mine if not m["conv"]]
        for i, m in stalled:
            claims.report(False, f"{lab}: θ_A* = {args.targets[i]:g}°: stopped at |θ_A − θ_A*| = {m['final']:.2e} rad "
                                 f"({DEG * m['final']:.3f}°) after {m['runs']} runs, dθ_A/dθ_B = {m['dthA']:+.2e}"
                                 + (" (a run failed)" if m["failed"] else ""))

plt = None if args.no_plot else figures.pyplot()
if plt:
    fig, axs = plt.subplots(1, len(rows), figsize=(4.6 * len(rows), 4.2), sharey=True, squeeze=False)
    for ax, (lab, js) in zip(axs[0], rows):
        for i, t in enumerate(args.targets):
            h = [s for s in res[lab, i]["hist"] if s["ok"]]
            ax.semilogy(range(1, len(h) + 1), [max(abs(s["err"]), 1e-12) for s in h], "o-", ms=3, lw=1.2,
                        label=f"θ_A* = {t:g}°")
        ax.axhline(args.tol, color="k", ls=":", lw=1, label=f"tolerance {args.tol:g} rad")
        ax.set_title(f"{lab} ({json.loads(js)['model']})", fontsize=10)
        ax.set_xlabel("sensitivity run (iteration)")
        ax.set_xlim(0.5, args.max_runs + 0.5)
        ax.set_xticks(range(1, args.max_runs + 1, 2 if args.max_runs > 10 else 1))
        ax.grid(alpha=0.3, which="both")
    axs[0][0].set_ylabel("|θ_A − θ_A*| (rad)")
    axs[0][0].legend(fontsize=8)
    fig.suptitle(f"annulus inverse problem: gradient descent on ½(θ_A − θ_A*)², η = {args.eta:g}")
    figures.save(fig, out, "annulus_inverse.png")
sys.exit(claims.summary())
