#!/usr/bin/env python3
"""Analysis of experiments/slope_2d: sliding acceleration vs g(sin t - mu cos t), stopping,
creep after stopping. Reads OUTDIR/slope_mu*.h5, writes OUTDIR/slope_2d.dat and .png, prints
the table, exits 1 if a claim fails."""
import glob
import math
import os
import sys

import h5py
import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "plots/out/slope_2d"
g = 9.81
theta = math.atan(0.1)               # slope normal (0.1, 1)
tang = np.array([math.cos(theta), -math.sin(theta)])  # down the slope
runs = []
paths = glob.glob(os.path.join(out, "slope_mu*.h5"))
for path in sorted(paths, key=lambda p: float(os.path.basename(p)[len("slope_mu"):-3])):
    mu = float(os.path.basename(path)[len("slope_mu"):-3])
    with h5py.File(path, "r", swmr=True) as f:
        t = f["/steps/time"][:]
        vt = f["/probes/velocity"][:] @ tang
        st = f["/probes/position"][:] @ tang
        newton = f["/steps/newton_iters"][:]
        inter = f["/steps/intersections"][:]
    expect = g * (math.sin(theta) - mu * math.cos(theta))
    if abs(expect) < 1e-12:
        expect = 0.0  # mu = tan(theta): round-off of sin - mu cos
    sliding = (t > 0.1) & (vt > 0.02)       # skip the first steps (normal force settling)
    a = np.polyfit(t[sliding], vt[sliding], 1)[0]
    stopped = np.nonzero(vt < 1e-4)[0]
    t_stop = t[stopped[0]] if len(stopped) else math.inf
    creep = st[-1] - st[stopped[0]] if len(stopped) else math.nan
    runs.append(dict(mu=mu, a=a, expect=expect, t_stop=t_stop, creep=creep, v_end=vt[-1],
                     newton=newton.mean(), inter=int(inter.max()), t=t, vt=vt))

ok = True
def claim(cond, text):
    global ok
    print(("ok    " if cond else "FAIL  ") + text)
    ok &= bool(cond)

with open(os.path.join(out, "slope_2d.dat"), "w") as f:
    f.write("# mu a_measured a_expected rel_err t_stop creep_after_stop v_end newton_mean\n")
    print(" mu     a (m/s²)    g(sinθ−μcosθ)   rel. err    stops at   creep after stop   Newton/step")
    for r in runs:
        rel = (r["a"] - r["expect"]) / abs(r["expect"]) if r["expect"] != 0 else math.nan
        r["rel"] = rel
        print(f" {r['mu']:<5} {r['a']:+.5f}    {r['expect']:+.5f}        {rel:+.1e}    "
              f"{r['t_stop']:6.2f} s    {r['creep']:.2e} m         {r['newton']:.1f}")
        f.write(f"{r['mu']} {r['a']:.6e} {r['expect']:.6e} {rel:.3e} {r['t_stop']} {r['creep']:.3e} "
                f"{r['v_end']:.6e} {r['newton']:.2f}\n")

by = {r["mu"]: r for r in runs}
for r in runs:
    if r["expect"] != 0:
        claim(abs(r["rel"]) < 0.02, f"mu = {r['mu']}: sliding acceleration within 2 % of g(sinθ − μcosθ) "
                                   f"({r['rel']:+.1e})")
    claim(r["inter"] == 0, f"mu = {r['mu']}: no intersections in any step")
if 0.1 in by:
    r = by[0.1]
    claim(math.isinf(r["t_stop"]) and abs(r["a"]) < 1e-2 * g * math.sin(theta),
          f"mu = 0.1 (= tanθ) keeps sliding at constant speed (a = {r['a']:+.1e}, v_end = {r['v_end']:.3f} m/s)")
if 0.11 in by and 0.2 in by:
    for mu in (0.11, 0.2):
        t_pred = 0.5 / abs(by[mu]["expect"])      # launched at 0.5 m/s, constant deceleration
        claim(abs(by[mu]["t_stop"] - t_pred) < 0.02 * t_pred,
              f"mu = {mu}: stops at {by[mu]['t_stop']:.2f} s = v0 / |g(sinθ − μcosθ)| = {t_pred:.3f} s within 2 %")
    claim(by[0.2]["t_stop"] < by[0.11]["t_stop"] < math.inf,
          f"mu = 0.11 and 0.2 stop, 0.2 sooner ({by[0.2]['t_stop']:.2f} s < {by[0.11]['t_stop']:.2f} s)")
    for mu in (0.11, 0.2):
        claim(abs(by[mu]["creep"]) < 1e-3, f"mu = {mu}: creep after stopping {by[mu]['creep']:.1e} m "
                                          f"< 1e-3 × box size")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for r in runs:
        ax.plot(r["t"], r["vt"], label=f"μ = {r['mu']}")
        ax.plot(r["t"], np.maximum(r["vt"][0] + r["expect"] * (r["t"] - r["t"][0]), 0), "k:", lw=0.8)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("velocity down the slope (m/s)")
    ax.set_title("square on a slope (tanθ = 0.1); dotted: v0 + g(sinθ − μcosθ) t")
    ax.set_ylim(0, 1.5)
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "slope_2d.png"), dpi=120)
    print("wrote", os.path.join(out, "slope_2d.png"))
except ImportError:
    print("matplotlib missing: no plot")
sys.exit(0 if ok else 1)
