#!/usr/bin/env python3
"""Analysis of experiments/incline_3d: sliding acceleration vs g(sinθ − μcosθ), holding (displacement
over the run vs 1e-3 of the box size), creep velocity vs the friction mollifier's prediction.
Reads OUTDIR/{settle,settled_mu*,rest_mu*}.h5, writes OUTDIR/incline_3d.dat and .png, prints the
table, exits 1 if a claim fails."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/incline_3d").parse_args()
out = args.outdir
g, L, m = 9.81, 0.5, 1000 * 0.5 ** 3           # box edge (m), mass (kg)
theta = math.atan(0.5)                          # slope normal (0.5, 1, 0)
tang = np.array([math.cos(theta), -math.sin(theta), 0.0])   # down the slope
normal = np.array([math.sin(theta), math.cos(theta), 0.0])
eps_v = 1e-4                                    # contact.eps_v of incline.json


def creep_velocity(mu):
    """Steady sliding speed of a block held by mollified friction: every contact slips at v with
    f1(v h / (eps_v h)) = tanθ/μ, f1(y) = 2y − y² on [0, 1]  ->  v = eps_v (1 − sqrt(1 − tanθ/μ))."""
    r = math.tan(theta) / mu
    return eps_v * (1.0 - math.sqrt(1.0 - r)) if r <= 1.0 else math.inf


def load(name):
    """The series of one run: velocity and travel down the slope, normal and friction force."""
    run = runs.load(os.path.join(out, name))
    pos = run.probes["position"]
    return dict(t=run.steps["time"], v=run.probes["velocity"] @ tang, s=(pos - pos[0]) @ tang,
                fn=run.probes["normal_force"] @ normal, ft=-(run.probes["friction_force"] @ tang),
                newton=run.steps["newton_iters"], inter=int(run.steps["intersections"].max()))


claims = Claims()
rs = {"settle (μ = 1)": load("settle.h5"),
      "settled, μ = 0.49": load("settled_mu0.49.h5"), "settled, μ = 0.5": load("settled_mu0.5.h5"),
      "rest, μ = 0.5": load("rest_mu0.5.h5"), "rest, μ = 0.6": load("rest_mu0.6.h5")}
mus = {"settle (μ = 1)": 1.0, "settled, μ = 0.49": 0.49, "settled, μ = 0.5": 0.5, "rest, μ = 0.5": 0.5,
       "rest, μ = 0.6": 0.6}

print(f"{'run':<20} {'a (m/s²)':>11} {'g(sinθ−μcosθ)':>14} {'travel (m)':>11} {'v_end (m/s)':>12} "
      f"{'v_creep pred.':>13} {'Ft/Fn end':>9} {'Newton':>6}")
rows = []
for name, r in rs.items():
    mu = mus[name]
    t, v = r["t"], r["v"]
    late = t > 0.1
    a = np.polyfit(t[late], v[late], 1)[0]
    expect = g * (math.sin(theta) - mu * math.cos(theta))
    vc = creep_velocity(mu)
    ratio = r["ft"][-1] / r["fn"][-1]
    r.update(a=a, expect=expect, vc=vc, ratio=ratio, travel=r["s"][-1], v_end=v[-1])
    print(f"{name:<20} {a:+11.5f} {expect:+14.5f} {r['s'][-1]:11.3e} {v[-1]:12.3e} {vc:13.3e} {ratio:9.4f} "
          f"{r['newton'].mean():6.1f}")
    rows.append(f"{mu} {a:.6e} {expect:.6e} {r['s'][-1]:.6e} {v[-1]:.6e} {vc:.6e} {ratio:.6f} "
                f"{r['newton'].mean():.2f} {r['inter']}  # {name}")
with open(os.path.join(out, "incline_3d.dat"), "w") as f:
    f.write("# mu a_measured a_expected travel_m v_end v_creep_predicted Ft/Fn_end newton_mean "
            "max_intersections  # run\n" + "\n".join(rows) + "\n")

s49, s50 = rs["settled, μ = 0.49"], rs["settled, μ = 0.5"]
r50, r60 = rs["rest, μ = 0.5"], rs["rest, μ = 0.6"]
rel = (s49["a"] - s49["expect"]) / s49["expect"]
claims.check(abs(rel) < 0.02, f"μ = 0.49 slides with a = g(sinθ − μcosθ) within 2 % ({rel:+.1e})")
claims.check(abs(s49["ratio"] - 0.49) < 0.49 * 0.01,
             f"μ = 0.49: friction / normal force = {s49['ratio']:.4f} (μ within 1 %)")
claims.check(abs(s50["travel"]) < 1e-3 * L, f"μ = 0.5 (= tanθ) from the settled state holds: travel "
             f"{s50['travel']:.2e} m < 1e-3 × box size")
claims.check(abs(r60["travel"]) < 1e-3 * L, f"μ = 0.6 from rest holds: travel {r60['travel']:.2e} m < 1e-3 × box size")
for name, r in (("settled, μ = 0.5", s50), ("rest, μ = 0.6", r60)):
    e = (r["v_end"] - r["vc"]) / r["vc"]
    claims.check(abs(e) < 0.15, f"{name}: creep {r['v_end']:.2e} m/s = mollifier prediction "
                 f"ε_v(1 − √(1 − tanθ/μ)) = {r['vc']:.2e} within 15 % ({e:+.0%})")
claims.check(abs(r50["a"]) < 1e-3 * g * math.sin(theta) and r50["v_end"] > 10 * eps_v,
             f"μ = 0.5 from the undeformed rest state: kicked to {r50['v_end']:.2e} m/s by the settling transient, "
             f"then constant speed (a = {r50['a']:+.1e} m/s²)")
for name, r in rs.items():
    claims.check(r["inter"] == 0, f"{name}: no intersections in any step")

plt = None if args.no_plot else figures.pyplot()
if plt:
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for name, r in rs.items():
        ax[0].plot(r["t"], r["v"], label=name)
        ax[1].semilogy(r["t"], np.maximum(np.abs(r["s"]), 1e-9), label=name)
    ax[0].set_xlabel("t (s)"); ax[0].set_ylabel("velocity down the slope (m/s)")
    ax[1].axhline(1e-3 * L, color="k", ls=":", label="1e-3 × box size")
    ax[1].set_xlabel("t (s)"); ax[1].set_ylabel("|travel| (m)")
    ax[1].legend(fontsize=7)
    fig.suptitle("incline_3d: box on a slope tanθ = 0.5 (IPC friction, ε_v = 1e-4 m/s)")
    figures.save(fig, out, "incline_3d.png")
sys.exit(claims.summary())
