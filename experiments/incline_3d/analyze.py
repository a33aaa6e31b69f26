#!/usr/bin/env python3
"""Analysis of experiments/incline_3d: sliding acceleration vs g(sinθ − μcosθ), holding (displacement
over the run vs 1e-3 of the box size), creep velocity vs the friction mollifier's prediction.
Reads OUTDIR/{settle,settled_mu*,rest_mu*}.h5, writes OUTDIR/incline_3d.dat and .png, prints the
table, exits 1 if a claim fails."""
import math
import os
import sys

import h5py
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "plots/out/incline_3d"
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
    with h5py.File(os.path.join(out, name), "r", swmr=True) as f:
        return dict(t=f["/steps/time"][:], v=f["/probes/velocity"][:] @ tang,
                    s=(f["/probes/position"][:] - f["/probes/position"][0]) @ tang,
                    fn=f["/probes/normal_force"][:] @ normal, ft=-(f["/probes/friction_force"][:] @ tang),
                    newton=f["/steps/newton_iters"][:], inter=int(f["/steps/intersections"][:].max()))


ok = True
def claim(cond, text):
    global ok
    print(("ok    " if cond else "FAIL  ") + text)
    ok &= bool(cond)

runs = {"settle (μ = 1)": load("settle.h5"),
        "settled, μ = 0.49": load("settled_mu0.49.h5"), "settled, μ = 0.5": load("settled_mu0.5.h5"),
        "rest, μ = 0.5": load("rest_mu0.5.h5"), "rest, μ = 0.6": load("rest_mu0.6.h5")}
mus = {"settle (μ = 1)": 1.0, "settled, μ = 0.49": 0.49, "settled, μ = 0.5": 0.5, "rest, μ = 0.5": 0.5,
       "rest, μ = 0.6": 0.6}

print(f"{'run':<20} {'a (m/s²)':>11} {'g(sinθ−μcosθ)':>14} {'travel (m)':>11} {'v_end (m/s)':>12} "
      f"{'v_creep pred.':>13} {'Ft/Fn end':>9} {'Newton':>6}")
rows = []
for name, r in runs.items():
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

s49, s50 = runs["settled, μ = 0.49"], runs["settled, μ = 0.5"]
r50, r60 = runs["rest, μ = 0.5"], runs["rest, μ = 0.6"]
rel = (s49["a"] - s49["expect"]) / s49["expect"]
claim(abs(rel) < 0.02, f"μ = 0.49 slides with a = g(sinθ − μcosθ) within 2 % ({rel:+.1e})")
claim(abs(s49["ratio"] - 0.49) < 0.49 * 0.01, f"μ = 0.49: friction / normal force = {s49['ratio']:.4f} (μ within 1 %)")
claim(abs(s50["travel"]) < 1e-3 * L, f"μ = 0.5 (= tanθ) from the settled state holds: travel "
      f"{s50['travel']:.2e} m < 1e-3 × box size")
claim(abs(r60["travel"]) < 1e-3 * L, f"μ = 0.6 from rest holds: travel {r60['travel']:.2e} m < 1e-3 × box size")
for name, r in (("settled, μ = 0.5", s50), ("rest, μ = 0.6", r60)):
    e = (r["v_end"] - r["vc"]) / r["vc"]
    claim(abs(e) < 0.15, f"{name}: creep {r['v_end']:.2e} m/s = mollifier prediction "
          f"ε_v(1 − √(1 − tanθ/μ)) = {r['vc']:.2e} within 15 % ({e:+.0%})")
claim(abs(r50["a"]) < 1e-3 * g * math.sin(theta) and r50["v_end"] > 10 * eps_v,
      f"μ = 0.5 from the undeformed rest state: kicked to {r50['v_end']:.2e} m/s by the settling transient, "
      f"then constant speed (a = {r50['a']:+.1e} m/s²)")
for name, r in runs.items():
    claim(r["inter"] == 0, f"{name}: no intersections in any step")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for name, r in runs.items():
        ax[0].plot(r["t"], r["v"], label=name)
        ax[1].semilogy(r["t"], np.maximum(np.abs(r["s"]), 1e-9), label=name)
    ax[0].set_xlabel("t (s)"); ax[0].set_ylabel("velocity down the slope (m/s)")
    ax[1].axhline(1e-3 * L, color="k", ls=":", label="1e-3 × box size")
    ax[1].set_xlabel("t (s)"); ax[1].set_ylabel("|travel| (m)")
    ax[1].legend(fontsize=7)
    fig.suptitle("incline_3d: box on a slope tanθ = 0.5 (IPC friction, ε_v = 1e-4 m/s)")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "incline_3d.png"), dpi=120)
except ImportError:
    print("matplotlib not available: no plot")
sys.exit(0 if ok else 1)
