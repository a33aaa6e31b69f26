#!/usr/bin/env python3
"""Analysis of experiments/gascon_ceiling: the gap of a cube adhered under a ceiling against the
adhesion law's equilibrium gap (m g + F(t))/(C A β²) at β = 1, and the debonding time against the
debonding law (Gascón et al. 2010 eq. 12) integrated independently of the simulation.
Reads OUTDIR/cells{2,4}.h5 (--quick: cells2.h5), writes OUTDIR/gascon_ceiling.dat and .png, prints
the table, exits 1 if a claim fails."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/gascon_ceiling", quick=True).parse_args()
out = args.outdir
names = ["cells2"] if args.quick else ["cells2", "cells4"]


def hand_debonding(p_of_t, C, W, eta, g_full, t_end, dt=1e-5):
    """β(t) of eq. 12, dβ/dt = min(W − C g² β, 0)/η with the gap of eq. 10 at the traction p(t),
    g = p/(C β²), i.e. dβ/dt = min(W − p²/(C β³), 0)/η, from β = 1 at t = 0 by classical RK4 with
    step dt; returns (onset time: the first t with p² /C > W, full debonding time: the first t with
    g > g_full, or nan, and the path (t, β) every 1000 steps)."""
    def rate(t, b):
        p = p_of_t(t)
        return min(W - p * p / (C * b ** 3), 0.0) / eta
    t, b, onset, path, k = 0.0, 1.0, math.nan, [], 0
    while t < t_end:
        p = p_of_t(t)
        if k % 1000 == 0:
            path.append((t, b))
        k += 1
        if math.isnan(onset) and p * p / C > W:
            onset = t
        if p / (C * b * b) > g_full:
            path.append((t, b))
            return onset, t, np.array(path)
        k1 = rate(t, b)
        k2 = rate(t + dt / 2, max(b + dt / 2 * k1, 1e-9))
        k3 = rate(t + dt / 2, max(b + dt / 2 * k2, 1e-9))
        k4 = rate(t + dt, max(b + dt * k3, 1e-9))
        b = max(b + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4), 1e-9)
        t += dt
    return onset, math.nan, np.array(path)


claims = Claims()
rows = {}
for n in names:
    path = os.path.join(out, n + ".h5")
    if not os.path.exists(path):
        claims.check(False, f"{n}: run present ({path})")
        continue
    r = runs.load(path)
    sc = r.scene
    prm = r.params
    C, W, eta = float(prm["c"]), float(prm["w"]), float(prm["eta"])
    g_full = float(prm["debond_gap"])
    size = sc["bodies"][0]["mesh"]["size"]
    A = size[0] * size[2]
    m = float(r.mesh["mass"][r.mesh["vertex_body"] == 0].sum())
    g0 = -sc["gravity"][1]
    rate = -sc["bodies"][0]["loads"][0]["force_rate"][1]
    t = r.steps["time"]
    gap = -r.probes["top"][:, 1]                      # the ceiling is y = 0, the cube below it
    contacts = r.model["lcp_contacts"]
    bmin = r.model["beta_min"]
    p_of_t = lambda tt: (m * g0 + rate * tt) / A      # noqa: E731  quasi-static traction
    # 1. the equilibrium gap while every contact is fully bonded (β = 1)
    full = bmin >= 1.0
    want = np.array([p_of_t(tt) / C for tt in t])
    err = np.abs(gap[full] / want[full] - 1.0)
    # 2. debonding: from the onset (p = sqrt(W C)) to full debonding (no contact left)
    on_h, td_h, bpath = hand_debonding(p_of_t, C, W, eta, g_full, t[-1])
    gone = np.nonzero(contacts == 0)[0]
    td_s = float(t[gone[0]] - 0.5 * (t[1] - t[0])) if len(gone) else math.nan  # between the last step with contacts and this
    fall = np.nonzero(bmin < 1.0)[0]
    on_s = float(t[fall[0]]) if len(fall) else math.nan
    rel = abs((td_s - on_h) / (td_h - on_h) - 1.0)
    rows[n] = dict(t=t, gap=gap, want=want, bmin=bmin, bmean=r.model["beta_mean"], m=m, A=A, C=C, W=W, eta=eta,
                   err=float(err.max()) if err.size else math.nan, nfull=int(full.sum()), gap0=float(gap[0]),
                   on_h=on_h, td_h=td_h, on_s=on_s, td_s=td_s, rel=rel, cells=sc["bodies"][0]["mesh"]["cells"][0],
                   pgs=r.model["pgs_iters"], contacts=contacts, inter=int(r.steps["intersections"].max()),
                   bpath=bpath, trac=r.probes["adhesion"][:, 1] / A)
    print(f"{n}: m = {m:.4f} kg, A = {A:g} m², C = {C:g} N/m³, W = {W:g} J/m², η = {eta:g} J s/m², "
          f"full debonding at gap {g_full:.4g} m, load rate {rate:g} N/s")
    print(f"  gap at t = {t[0]:.3f} s: {gap[0]:.6e} m (m g/(C A) = {m * g0 / (C * A):.6e} m); over the {full.sum()} "
          f"steps at β = 1: max |gap/((m g + F)/(C A)) − 1| = {rows[n]['err']:.2e}")
    print(f"  debonding: onset {on_s:.3f} s (law {on_h:.4f} s), full {td_s:.4f} s (law {td_h:.4f} s); duration "
          f"{td_s - on_h:.4f} s against {td_h - on_h:.4f} s ({rel:.1%}); PGS sweeps per step mean "
          f"{np.mean(rows[n]['pgs'][contacts > 0]):.1f}, max {int(np.max(rows[n]['pgs']))}")

for n, r in rows.items():
    claims.check(abs(r["gap0"] / 0.000981 - 1.0) < 0.03,
                 f"{n}: equilibrium gap at β = 1 within 3 % of 0.000981 m ({r['gap0']:.6e} m)")
    claims.check(r["nfull"] > 10 and r["err"] < 0.03,
                 f"{n}: the gap follows (m g + F(t))/(C A) within 3 % while β = 1 (max error {r['err']:.1e})")
    claims.check(r["rel"] < 0.05, f"{n}: debonding duration within 5 % of eq. 12 integrated by hand "
                                  f"({r['td_s'] - r['on_h']:.4f} s against {r['td_h'] - r['on_h']:.4f} s)")
if len(rows) == 2:
    a, b = rows["cells2"], rows["cells4"]
    claims.check(abs(a["gap0"] / b["gap0"] - 1.0) < 0.01 and abs(a["td_s"] - b["td_s"]) <= 1.01 * (a["t"][1] - a["t"][0]),
                 f"mesh-independent: 2³ and 4³ cells agree (gap {a['gap0']:.6e} / {b['gap0']:.6e} m, full debonding "
                 f"{a['td_s']:.4f} / {b['td_s']:.4f} s)")

with open(os.path.join(out, "gascon_ceiling.dat"), "w") as fo:
    fo.write("# run t_s gap_m gap_law_m beta_min beta_mean contacts\n")
    for n, r in rows.items():
        for i in range(len(r["t"])):
            fo.write(f"{n} {r['t'][i]:.5f} {r['gap'][i]:.8e} {r['want'][i]:.8e} {r['bmin'][i]:.6f} "
                     f"{r['bmean'][i]:.6f} {int(r['contacts'][i])}\n")

plt = None if args.no_plot else figures.pyplot()
if plt and rows:
    fig, axs = plt.subplots(1, 3, figsize=(15, 4.2))
    for n, r in rows.items():
        live = r["contacts"] > 0
        axs[0].plot(r["t"][live], 1e3 * r["gap"][live], label=f"gap, {r['cells']}³ cells")
        axs[1].plot(r["t"], r["bmean"], label=f"β mean, {r['cells']}³ cells")
        axs[2].plot(r["t"], r["trac"], label=f"adhesive traction, {r['cells']}³ cells")
    r = next(iter(rows.values()))
    axs[0].plot(r["t"], 1e3 * r["want"], "k:", lw=1, label="(m g + F(t))/(C A) at β = 1")
    axs[0].axhline(1e3 * float(runs.load(os.path.join(out, next(iter(rows)) + ".h5")).params["debond_gap"]),
                   color="grey", lw=0.8, ls="--", label="full debonding gap")
    axs[1].plot(r["bpath"][:, 0], r["bpath"][:, 1], "k:", lw=1, label="eq. 12 integrated by hand")
    axs[2].plot(r["t"], [p_of_t(tt) for tt in r["t"]], "k:", lw=1, label="(m g + F(t))/A")
    axs[2].axhline(math.sqrt(r["W"] * r["C"]), color="grey", lw=0.8, ls="--", label="√(W C)")
    axs[2].set_xlabel("t (s)"), axs[2].set_ylabel("traction (Pa)"), axs[2].legend(fontsize=8)
    axs[1].axvline(r["on_h"], color="grey", lw=0.8, ls=":", label="onset: p = √(W C)")
    axs[1].axvline(r["td_h"], color="k", lw=0.8, ls="--", label="full debonding, eq. 12 by hand")
    axs[0].set_xlabel("t (s)"), axs[0].set_ylabel("gap (mm)"), axs[0].legend(fontsize=8)
    axs[1].set_xlabel("t (s)"), axs[1].set_ylabel("β"), axs[1].legend(fontsize=8)
    fig.suptitle("cube adhered under a ceiling (Gascón et al. 2010 §6), lcp_pgs; load grows at "
                 f"{rate:g} N/s")
    figures.save(fig, out, "gascon_ceiling", rect=(0, 0, 1, 0.94))
sys.exit(claims.summary())
