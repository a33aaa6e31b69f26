#!/usr/bin/env python3
"""Analysis of experiments/candy_jello: candies with per-body adhesion coefficients fall on a soft
Jell-O block and are then pulled upwards (Gascón et al. 2010 §6, Fig. 1 and 4). Checks, against
numbers derived by hand from the scene: the non-adhesive candies fly off with the closed-form rise
of a free body under gravity and the pull; a candy whose interface strength √(W C) A is below the
net pull debonds (its adhesive force never exceeds that strength); candies at least twice as strong
stay bonded and carry exactly the net pull; with adhesion there are more contacts than without.
Reads OUTDIR/adhesion.h5 and OUTDIR/no_adhesion.h5, writes OUTDIR/candy_jello.dat (and .png),
prints the tables, exits 1 if a claim fails."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/candy_jello", quick=True).parse_args()
out = args.outdir
claims = Claims()
PAPER = dict(mean_adh=151, max_adh=531, mean_no=97, max_no=330, s_step_adh=0.4, minutes_adh=20, minutes_no=13)
ADH_KEYS = ("c", "w", "eta", "r", "p0")


def body_coef(scene, b):
    """The adhesion coefficients of body b: its per-body overrides, else the scene-level values."""
    own = scene["bodies"][b].get("contact", {})
    return {k: float(own.get(k, scene["contact"][k])) for k in ADH_KEYS}


def free_rise(t, T1, T2, rate, m, g0):
    """Rise at time t (from its rest at T1) of a free body of mass m under gravity g0 and the upward
    load F(t) = rate (min(t, T2) − T1) for t > T1 (0 before), once F exceeds m g0 (lift-off at
    t0 = T1 + m g0/rate): a(t) = (rate/m)(t − t0) until T2, then the constant F(T2)/m − g0.
    Integrated in closed form; 0 before lift-off."""
    t0 = T1 + m * g0 / rate
    if t <= t0:
        return 0.0
    k = rate / m
    if t <= T2:
        return k * (t - t0) ** 3 / 6.0
    v2, y2 = k * (T2 - t0) ** 2 / 2.0, k * (T2 - t0) ** 3 / 6.0
    a2 = rate * (T2 - T1) / m - g0
    s = t - T2
    return y2 + v2 * s + 0.5 * a2 * s * s


def load_run(name):
    path = os.path.join(out, name + ".h5")
    if not os.path.exists(path):
        claims.check(False, f"{name}: run present ({path})")
        return None
    return runs.load(path)


rows = {}
for name in ("adhesion", "no_adhesion"):
    r = load_run(name)
    if r is None:
        continue
    sc, t = r.scene, r.steps["time"]
    g0 = -sc["gravity"][1]
    jello = body_coef(sc, 0)
    top = float(sc["bodies"][0]["mesh"]["origin"][1] + sc["bodies"][0]["mesh"]["size"][1])  # the block's top
    candies = []
    for b in range(1, len(sc["bodies"])):
        bs = sc["bodies"][b]
        own = body_coef(sc, b)
        pair = {k: min(own[k], jello[k]) for k in ADH_KEYS}  # the pair rule (README.md)
        size = bs["mesh"]["size"]
        A = size[0] * size[2]
        m = float(r.mesh["mass"][r.mesh["vertex_body"] == b].sum())
        ld = bs["loads"]
        rate = ld[0]["force_rate"][1]
        T2, T1 = ld[0]["ramp_until"], ld[1]["ramp_until"]
        F = rate * (T2 - T1)
        P = F - m * g0                         # the net pull once F is at its plateau
        # β when the pull starts, by the bonding law (eq. 11) at the resting pressure p = m g/A from the
        # landing (free fall from the start height onto the block's top) to T1: β̇ = r (p − β p₀),
        # β = (p/p₀)(1 − exp(−r p₀ τ)), at most 1
        p = m * g0 / A
        fall = float(bs["mesh"]["origin"][1]) - top
        tau = T1 - math.sqrt(2.0 * max(fall, 0.0) / g0)
        beta = min(1.0, p / pair["p0"] * (1.0 - math.exp(-pair["r"] * pair["p0"] * tau))) if pair["r"] > 0 else 0.0
        # the interface strength: the traction where debonding starts (C g² β = W with C β² g = p, so
        # p = √(W C β³)), × A
        S = math.sqrt(pair["w"] * pair["c"] * beta ** 3) * A
        y = r.probes[bs["name"] + "_y"]
        i1 = int(np.argmin(np.abs(t - T1)))
        rise = float(y[-1] - y[i1])
        want = free_rise(float(t[-1]), T1, T2, rate, m, g0)
        adh = -r.probes[bs["name"] + "_adh"]  # the block's adhesive pull on the candy (downward: −y)
        cls = "free" if pair["c"] == 0 else ("debonds" if S < 0.5 * P else ("holds" if S > 2.0 * P else "marginal"))
        candies.append(dict(name=bs["name"], m=m, A=A, pair=pair, S=S, beta=beta, P=P, rise=rise, want=want, cls=cls,
                            adh_max=float(np.max(adh)), adh_end=float(adh[-1]), y=y - y[i1]))
    mdl = r.model
    cont, wall = mdl["lcp_contacts"], r.steps["wall_s"]
    inter = r.steps["intersections"]
    rows[name] = dict(t=t, contacts=cont, bonded=mdl["lcp_bonded"], wall=wall, candies=candies,
                      mean=float(cont.mean()), max=int(cont.max()), end=int(cont[-1]), bonded_end=int(mdl["lcp_bonded"][-1]),
                      min_gap=float(np.nanmin(mdl["min_gap"])), inter_max=int(inter.max()),
                      inter_steps=int((inter > 0).sum()), pgs_mean=float(mdl["pgs_iters"].mean()),
                      pgs_cap=int((mdl["pgs_converged"] == 0).sum()), T1=T1, T2=T2, F=F,
                      t_model=float((mdl["t_contacts"] + mdl["t_delassus"] + mdl["t_pgs"]).mean()),
                      # the PGS's work, independent of the machine's load: block updates per step,
                      # sweeps × dim×dim blocks of W
                      work=float((mdl["pgs_iters"] * mdl["w_blocks"]).mean()))
    R = rows[name]
    print(f"{name}: {len(t)} steps of {t[1] - t[0]:g} s to t = {t[-1]:.3f} s; pull 0 -> {F:g} N per candy over "
          f"t = {T1:g}..{T2:g} s")
    print(f"  contacts mean {R['mean']:.1f}, max {R['max']}, at the end {R['end']} (bonded {R['bonded_end']}); "
          f"time per step mean {1e3 * wall.mean():.1f} ms (model's contact phases {1e3 * R['t_model']:.1f} ms); PGS "
          f"sweeps mean {R['pgs_mean']:.0f}, {R['pgs_cap']} steps at the cap; PGS block updates per step mean "
          f"{R['work']:.3g}")
    print(f"  penetration: min_gap {R['min_gap']:.3g} m; intersecting pairs (verifier) max {R['inter_max']}, in "
          f"{R['inter_steps']} of {len(t)} steps")
    print("  candy      pair C (N/m³)  pair W  β(T1)  √(WCβ³)A (N)  net pull (N)  class     rise (m)  free rise (m)  "
          "adhesive force max / end (N)")
    for c in candies:
        print(f"  {c['name']:<9}  {c['pair']['c']:12.3g}  {c['pair']['w']:6.3g}  {c['beta']:5.3f}  {c['S']:12.4f}  {c['P']:12.4f}  "
              f"{c['cls']:<8}  {c['rise']:8.4f}  {c['want']:13.4f}  {c['adh_max']:.4f} / {c['adh_end']:.4f}")

# ---------------------------------------------------------------------------------------------
for name, R in rows.items():
    for c in R["candies"]:
        if c["cls"] == "free":
            rel = c["rise"] / c["want"] - 1.0
            claims.check(abs(rel) < 0.05, f"{name}: {c['name']} (no adhesion) flies off with the rise of a free body "
                         f"under gravity and the pull within 5 % ({c['rise']:.3f} m against {c['want']:.3f} m, {rel:+.1%})")
        elif c["cls"] == "debonds":
            claims.check(c["rise"] > 0.5 and c["adh_max"] <= 1.1 * c["S"],
                         f"{name}: {c['name']} (√(WCβ³)A = {c['S']:.3f} N < net pull {c['P']:.3f} N) debonds and leaves "
                         f"(rise {c['rise']:.2f} m > 0.5 m), its adhesive force at most 1.1 √(WCβ³)A "
                         f"(max {c['adh_max']:.4f} N)")
        elif c["cls"] == "holds":
            rel = c["adh_end"] / c["P"] - 1.0
            claims.check(abs(c["rise"]) < 2e-3 and abs(rel) < 0.03,
                         f"{name}: {c['name']} (√(WCβ³)A = {c['S']:.3f} N > 2 × net pull) stays bonded (rise "
                         f"{1e3 * c['rise']:.2f} mm < 2 mm) and its adhesion carries the net pull F − m g = "
                         f"{c['P']:.4f} N within 3 % ({c['adh_end']:.4f} N, {rel:+.1%})")
        else:
            claims.report(True, f"{name}: {c['name']} is marginal (√(WCβ³)A = {c['S']:.3f} N against a net pull of "
                          f"{c['P']:.3f} N; not claimed): rise {c['rise']:.3f} m, adhesive force max {c['adh_max']:.4f} N")
if len(rows) == 2:
    a, n = rows["adhesion"], rows["no_adhesion"]
    claims.check(a["mean"] > n["mean"] and a["end"] > 0 and n["end"] == 0 and a["bonded_end"] > 0,
                 f"with adhesion more contacts than without: mean {a['mean']:.1f} against {n['mean']:.1f} "
                 f"(ratio {a['mean'] / n['mean']:.2f}; paper {PAPER['mean_adh']}/{PAPER['mean_no']} = "
                 f"{PAPER['mean_adh'] / PAPER['mean_no']:.2f}); at the end {a['end']} ({a['bonded_end']} bonded) "
                 f"against {n['end']}")
    claims.report(a["max"] >= n["max"], f"max contacts {a['max']} with adhesion, {n['max']} without (ratio "
                  f"{a['max'] / max(n['max'], 1):.2f}; paper {PAPER['max_adh']}/{PAPER['max_no']} = "
                  f"{PAPER['max_adh'] / PAPER['max_no']:.2f}; not claimed: both land the same way)")
    cc = np.concatenate([a["contacts"], n["contacts"]])
    ww = np.concatenate([a["wall"], n["wall"]])
    slope, icpt = np.polyfit(cc, ww, 1)
    r2 = float(np.corrcoef(cc, ww)[0, 1] ** 2) if np.std(cc) > 0 else math.nan
    claims.report(True, f"time per step: mean {1e3 * a['wall'].mean():.1f} ms with adhesion, "
                  f"{1e3 * n['wall'].mean():.1f} ms without (ratio {a['wall'].mean() / n['wall'].mean():.2f}, "
                  f"contacts ratio {a['mean'] / n['mean']:.2f}; paper 20/13 min = {20 / 13:.2f}); over both runs "
                  f"wall ≈ {1e3 * icpt:.1f} ms + {1e6 * slope:.0f} µs × contacts (R² {r2:.2f}); not claimed "
                  f"(shared machine)")
    claims.report(True, f"PGS block updates per step (sweeps × W blocks, machine-independent): mean "
                  f"{a['work']:.3g} with adhesion, {n['work']:.3g} without (ratio {a['work'] / n['work']:.2f}); not claimed")

    with open(os.path.join(out, "candy_jello.dat"), "w") as fo:
        fo.write("# run t_s contacts bonded wall_s\n")
        for name, R in rows.items():
            for i in range(len(R["t"])):
                fo.write(f"{name} {R['t'][i]:.4f} {int(R['contacts'][i])} {int(R['bonded'][i])} {R['wall'][i]:.6f}\n")

plt = None if args.no_plot else figures.pyplot()
if plt and len(rows) == 2:
    fig, axs = plt.subplots(1, 3, figsize=(16, 4.4))
    for name, R in rows.items():
        lab = name.replace("_", " ")
        axs[0].plot(R["t"], R["contacts"], label=f"contacts, {lab}")
        axs[1].plot(R["t"], 1e3 * R["wall"], label=lab, lw=0.8)
    axs[0].plot(rows["adhesion"]["t"], rows["adhesion"]["bonded"], "k:", lw=1, label="bonded (β > 0), adhesion")
    for ax in axs[:2]:
        ax.axvspan(rows["adhesion"]["T1"], rows["adhesion"]["T2"], color="grey", alpha=0.12, lw=0)
        ax.set_xlabel("t (s)")
    axs[0].set_ylabel("contacts"), axs[0].legend(fontsize=8)
    axs[1].set_ylabel("time per step (ms)"), axs[1].legend(fontsize=8)
    for c in rows["adhesion"]["candies"]:
        axs[2].plot(rows["adhesion"]["t"], c["y"], label=f"{c['name']} ({c['cls']})")
    axs[2].set_yscale("symlog", linthresh=1e-3)
    axs[2].set_xlabel("t (s)"), axs[2].set_ylabel("height − height at pull start (m)"), axs[2].legend(fontsize=7)
    fig.suptitle("candies on Jell-O (Gascón et al. 2010 Fig. 1, 4), lcp_pgs with per-body adhesion; grey: the "
                 "pull ramps up")
    figures.save(fig, out, "candy_jello", rect=(0, 0, 1, 0.93))
sys.exit(claims.summary())
