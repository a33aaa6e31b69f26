#!/usr/bin/env python3
"""Analysis of experiments/slope_2d: sliding acceleration vs g(sin t - mu cos t), stopping,
creep after stopping. Reads OUTDIR/slope_mu*.h5, writes OUTDIR/slope_2d.dat and .png, prints
the table, exits 1 if a claim fails."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/slope_2d").parse_args()
out = args.outdir
g = 9.81
theta = math.atan(0.1)               # slope normal (0.1, 1)
tang = np.array([math.cos(theta), -math.sin(theta)])  # down the slope


def mu_of(path):
    """The friction coefficient in the file name slope_mu<mu>.h5."""
    return float(os.path.basename(path)[len("slope_mu"):-3])


rows = []
for path in runs.paths(out, "slope_mu*.h5", key=mu_of):
    run = runs.load(path)
    mu = mu_of(path)
    t = run.steps["time"]
    vt = run.probes["velocity"] @ tang
    st = run.probes["position"] @ tang
    expect = g * (math.sin(theta) - mu * math.cos(theta))
    if abs(expect) < 1e-12:
        expect = 0.0  # mu = tan(theta): round-off of sin - mu cos
    sliding = (t > 0.1) & (vt > 0.02)       # skip the first steps (normal force settling)
    a = np.polyfit(t[sliding], vt[sliding], 1)[0]
    stopped = np.nonzero(vt < 1e-4)[0]
    t_stop = t[stopped[0]] if len(stopped) else math.inf
    creep = st[-1] - st[stopped[0]] if len(stopped) else math.nan
    rows.append(dict(mu=mu, a=a, expect=expect, t_stop=t_stop, creep=creep, v_end=vt[-1],
                     newton=run.steps["newton_iters"].mean(), inter=int(run.steps["intersections"].max()), t=t, vt=vt))

claims = Claims()
with open(os.path.join(out, "slope_2d.dat"), "w") as f:
    f.write("# mu a_measured a_expected rel_err t_stop creep_after_stop v_end newton_mean\n")
    print(" mu     a (m/s²)    g(sinθ−μcosθ)   rel. err    stops at   creep after stop   Newton/step")
    for r in rows:
        rel = (r["a"] - r["expect"]) / abs(r["expect"]) if r["expect"] != 0 else math.nan
        r["rel"] = rel
        print(f" {r['mu']:<5} {r['a']:+.5f}    {r['expect']:+.5f}        {rel:+.1e}    "
              f"{r['t_stop']:6.2f} s    {r['creep']:.2e} m         {r['newton']:.1f}")
        f.write(f"{r['mu']} {r['a']:.6e} {r['expect']:.6e} {rel:.3e} {r['t_stop']} {r['creep']:.3e} "
                f"{r['v_end']:.6e} {r['newton']:.2f}\n")

by = {r["mu"]: r for r in rows}
for r in rows:
    if r["expect"] != 0:
        claims.check(abs(r["rel"]) < 0.02, f"mu = {r['mu']}: sliding acceleration within 2 % of g(sinθ − μcosθ) "
                                          f"({r['rel']:+.1e})")
    claims.check(r["inter"] == 0, f"mu = {r['mu']}: no intersections in any step")
if 0.1 in by:
    r = by[0.1]
    claims.check(math.isinf(r["t_stop"]) and abs(r["a"]) < 1e-2 * g * math.sin(theta),
                 f"mu = 0.1 (= tanθ) keeps sliding at constant speed (a = {r['a']:+.1e}, v_end = {r['v_end']:.3f} m/s)")
if 0.11 in by and 0.2 in by:
    for mu in (0.11, 0.2):
        t_pred = 0.5 / abs(by[mu]["expect"])      # launched at 0.5 m/s, constant deceleration
        claims.check(abs(by[mu]["t_stop"] - t_pred) < 0.02 * t_pred,
                     f"mu = {mu}: stops at {by[mu]['t_stop']:.2f} s = v0 / |g(sinθ − μcosθ)| = {t_pred:.3f} s within 2 %")
    claims.check(by[0.2]["t_stop"] < by[0.11]["t_stop"] < math.inf,
                 f"mu = 0.11 and 0.2 stop, 0.2 sooner ({by[0.2]['t_stop']:.2f} s < {by[0.11]['t_stop']:.2f} s)")
    for mu in (0.11, 0.2):
        claims.check(abs(by[mu]["creep"]) < 1e-3, f"mu = {mu}: creep after stopping {by[mu]['creep']:.1e} m "
                                                 f"< 1e-3 × box size")

plt = None if args.no_plot else figures.pyplot()
if plt:
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for r in rows:
        ax.plot(r["t"], r["vt"], label=f"μ = {r['mu']}")
        ax.plot(r["t"], np.maximum(r["vt"][0] + r["expect"] * (r["t"] - r["t"][0]), 0), "k:", lw=0.8)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("velocity down the slope (m/s)")
    ax.set_title("square on a slope (tanθ = 0.1); dotted: v0 + g(sinθ − μcosθ) t")
    ax.set_ylim(0, 1.5)
    ax.legend()
    ax.grid(alpha=0.3)
    figures.save(fig, out, "slope_2d.png")
sys.exit(claims.summary())
