#!/usr/bin/env python3
"""lcp_pgs counterpart of experiments/pull_peel: the same plates and loads with contact.model =
lcp_pgs (pull_lcp.json, peel_lcp.json; Gascón et al. 2010), compared with the ipc_adhesion runs
(analyze.py's ramp + fine pass) and the rcc_ipc runs (analyze_rcc.py) of the same OUTDIR.

What is compared is the net normal force the interface transmits, adhesion + barrier (+ rcc_ipc's
tangential part in y): in the barrier models the interface rests at the gap where the barrier
balances the adhesion (0.7 d̂_p), so their adhesion force alone includes a pre-stress that the
barrier cancels (in the peel, the centre never opens and keeps it); lcp_pgs has no barrier and
rests at its contact thickness. Quasi-static, the net force is the applied load.

Parameters matched by the peak traction and the adhesion energy (README.md, "lcp_pgs counterpart"):
lcp_pgs takes rcc_ipc's C = C_N = Y·ε_c/d̂_p and W = Y·ε_c·d̂_p and η: Gascón's normal law is the
linear RCC law (eq. 10, 12), with the rate-independent peak √(C W) = Y·ε_c at d* = √(W/C) = d̂_p.

Also reads the pull of the three models at h = 10 ms and h = 1 ms (pull_{ipc,rcc,lcp}_h{10,1}ms.h5,
full run only): penetration and time per step. Checks the lcp_pgs claims of README.md (exit 1 if one fails), prints the three
models side by side, writes OUTDIR/pull_peel_lcp.png."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params as logged  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from analyze import Case, Run  # noqa: E402
from analyze_rcc import RccRun  # noqa: E402


class LcpRun(Run):
    """One lcp_pgs run: total adhesion = normal + tangential (y), its contact statistics."""

    def __init__(self, path, name):
        super().__init__(path)
        self.name = name
        self.tris = self.mesh["surface_faces"]
        self.tot = self.adh + self.adh_t[:, 1]
        self.net = self.tot + self.bar
        self.kp = int(np.argmax(self.net))
        self.peak = float(self.net[self.kp])
        self.t_peak = float(self.t[self.kp])
        self.contacts = self.model["lcp_contacts"]
        self.bonded = self.model["lcp_bonded"]
        self.min_gap = self.model["min_gap"]
        self.pgs = self.model["pgs_iters"]
        self.pgs_conv = self.model["pgs_converged"]


def main():
    args = cli.parser(__doc__, "plots/out/pull_peel", quick=True).parse_args()
    out = args.outdir
    sfx = "_quick" if args.quick else ""
    pull, peel = (LcpRun(os.path.join(out, f"{c}_lcp{sfx}.h5"), c) for c in ("pull", "peel"))
    ipull, ipeel = Case(out, "pull", sfx), Case(out, "peel", sfx)
    rpull, rpeel = RccRun(os.path.join(out, f"pull_rcc{sfx}.h5"), "pull"), RccRun(os.path.join(out, f"peel_rcc{sfx}.h5"), "peel")
    def net_peak(t, net):
        k = int(np.argmax(net))
        return float(net[k]), float(t[k])
    inet = {}
    for nm, ic in (("pull", ipull), ("peel", ipeel)):
        keep = ic.R.t <= ic.t0 + 1e-9
        t = np.concatenate([ic.R.t[keep], ic.F.t + ic.t0])
        net = np.concatenate([ic.R.adh[keep] + ic.R.bar[keep], ic.F.adh + ic.F.bar])
        inet[nm] = net_peak(t, net)
    rnet = {r.name: net_peak(r.t, r.tot + r.bar) for r in (rpull, rpeel)}
    # the pull of the three models at h = 10 ms and 1 ms (full run only): model -> {tag: run}
    hruns = {}
    for tag in ("h10ms", "h1ms"):
        for key, cls in (("ipc", Run), ("rcc", RccRun), ("lcp", LcpRun)):
            p = os.path.join(out, f"pull_{key}_{tag}.h5")
            if os.path.exists(p):
                hruns.setdefault(key, {})[tag] = cls(p) if cls is Run else cls(p, f"pull {tag}")

    C, W, eta = logged.values(pull, "c", "w", "eta")
    dd = logged.value(pull, "debond_gap")
    thick = logged.value(pull, "thickness")
    h = pull.scene["time"]["dt"]
    dstar = np.sqrt(W / C)
    size = pull.scene["bodies"][1]["mesh"]["size"]
    A = size[0] * size[2]
    A_eff = A  # lcp_pgs's contact areas are the face-aware weights: a flat face carries its area
    T = np.sqrt(C * W)
    F_th = T * A_eff
    Y = min(b["material"]["E"] for b in ipull.R.scene["bodies"])
    ye = Y * logged.value(ipull.R, "eps_c")
    dp = logged.value(ipull.R, "dhat_p")
    claims = Claims()
    print(f"lcp_pgs: C = {C:g} N/m³, W = {W:g} J/m², η = {eta:g} J·s/m²; √(C W) = {T:g} Pa (ipc_adhesion Y·ε_c = "
          f"{ye:g} Pa) at d* = √(W/C) = {dstar * 1e3:g} mm (d̂_p = {dp * 1e3:g} mm); debond_gap {dd * 1e3:g} mm, "
          f"thickness {thick * 1e6:g} µm; h = {h:g} s; A = {A:g} m², √(C W)·A = {F_th:.2f} N")

    # ---- claims ----
    for r in (pull, peel):  # reported, not claimed (README "lcp_pgs counterpart": PGS stalls after debonding)
        live = r.contacts > 0
        claims.report(np.all(r.pgs_conv[live] == 1),
                      f"lcp {r.name}: PGS converged in {int(np.sum(r.pgs_conv[live] == 1))} of {int(np.sum(live))} steps "
                      f"with contacts (tol {logged.value(r, 'pgs_tol'):g}; sweeps mean {r.pgs[live].mean():.1f}, max "
                      f"{int(r.pgs.max())})")
    g = pull.gaps(pull.kp + 1)
    gi = g[~pull.rim]
    claims.check(abs(pull.peak / F_th - 1) <= 0.05,
                 f"lcp pull: peak net interface force {pull.peak:.2f} N = √(C W)·A = {F_th:.2f} N within 5 % "
                 f"({(pull.peak / F_th - 1) * 100:+.2f} %) at t = {pull.t_peak:.3f} s")
    claims.check(abs(gi.mean() / dstar - 1) <= 0.05,
                 f"lcp pull: interior mean gap at the peak {gi.mean() / dstar:.4f} d* (within 5 %; min "
                 f"{gi.min() / dstar:.4f}, max {gi.max() / dstar:.4f}; rim pairs {g[pull.rim].mean() / dstar:.4f} d*)")
    for r in (pull, peel):
        gl = r.gaps(len(r.tf) - 1)
        claims.check(np.all(r.adh[-3:] == 0) and r.bonded[-1] == 0 and gl.min() > dd,
                     f"lcp {r.name}: the adhesion force drops to 0 (0 in the last 3 steps, no bonded contact, min gap "
                     f"{gl.min() * 1e3:.1f} mm > debond_gap at t = {r.t[-1]:.3f} s)")
    ratio = peel.peak / pull.peak
    claims.check(peel.peak < pull.peak, f"lcp peel: lower peak net force than the lcp pull ({peel.peak:.2f} N < "
                 f"{pull.peak:.2f} N, ratio {ratio:.3f})")
    tde = peel.debond_times(dd)
    cols = pull.cols
    iend = [0, len(cols) - 1]
    icen = int(np.argmin(np.abs(cols)))
    iq = [int(np.argmin(np.abs(cols + 0.25 * size[0]))), int(np.argmin(np.abs(cols - 0.25 * size[0])))]
    prog = all(tde[e] < tde[q] < tde[icen] for e, q in zip(iend, iq))
    claims.check(prog, f"lcp peel: debonding progresses from the ends: on each side the end column passes debond_gap "
                 f"before the quarter point, which passes before the centre (ends {1e3 * (tde[0] - peel.t_peak):.1f} / "
                 f"{1e3 * (tde[-1] - peel.t_peak):.1f} ms, quarters {1e3 * (tde[iq[0]] - peel.t_peak):.1f} / "
                 f"{1e3 * (tde[iq[1]] - peel.t_peak):.1f} ms, centre {1e3 * (tde[icen] - peel.t_peak):.1f} ms after the peak)")
    for r in [pull, peel] + list(hruns.get("lcp", {}).values()):
        pen = -min(0.0, float(np.nanmin(r.min_gap)))
        print(f"  lcp {r.name}: deepest penetration {pen * 1e3:.4f} mm (min end-of-step gap "
              f"{np.nanmin(r.min_gap) * 1e3:+.4f} mm), intersecting pairs at most {int(r.inter.max())} "
              "(a metric: lcp_pgs is not intersection-free)")
    for key in ("ipc", "rcc"):  # the barrier models: intersection-free by construction, checked
        for tag, r in hruns.get(key, {}).items():
            claims.check(int(r.inter.max()) == 0 and float(np.min(r.steps["min_distance"])) > 0.0,
                         f"{key} pull {tag}: no intersecting pair and a positive minimum distance in every step "
                         f"(min {float(np.min(r.steps['min_distance'])) * 1e6:.3f} µm)")

    # ---- three models side by side ----
    print("\nthree models (ipc_adhesion: ramp 10 ms + fine pass 0.5 ms; rcc_ipc: %g ms; lcp_pgs: %g ms)"
          % (1e3 * rpull.scene["time"]["dt"], 1e3 * h))
    print(f"{'':44s} {'ipc_adhesion':>14s} {'rcc_ipc':>14s} {'lcp_pgs':>14s}")

    def row(label, a, b, c, fmt):
        print(f"  {label:42s} {format(a, fmt):>14s} {format(b, fmt):>14s} {format(c, fmt):>14s}")
    rows = []
    for nm, ic, rc, lc in (("pull", ipull, rpull, pull), ("peel", ipeel, rpeel, peel)):
        nst = len(ic.R.t) + len(ic.F.t)
        row(f"{nm}: peak net interface force (N)", inet[nm][0], rnet[nm][0], lc.peak, ".2f")
        row(f"{nm}: net peak / (Y·ε_c·A)", inet[nm][0] / (ye * A), rnet[nm][0] / (ye * A), lc.peak / (ye * A), ".4f")
        row(f"{nm}: time of the net peak (s)", inet[nm][1], rnet[nm][1], lc.t_peak, ".4f")
        row(f"{nm}: peak adhesion force alone (N)", ic.peak, rc.peak, float(lc.tot.max()), ".2f")
        row(f"{nm}: steps", nst, len(rc.t), len(lc.t), "d")
        row(f"{nm}: wall time per step (ms)", 1e3 * (ic.R.wall.sum() + ic.F.wall.sum()) / nst, 1e3 * rc.wall.mean(),
            1e3 * lc.wall.mean(), ".1f")
        row(f"{nm}: wall time in all (s)", ic.R.wall.sum() + ic.F.wall.sum(), rc.wall.sum(), lc.wall.sum(), ".1f")
        pen = [max(0.0, -float(np.min(x))) for x in (ic.R.steps["min_distance"], rc.steps["min_distance"])]
        row(f"{nm}: deepest penetration (mm)", 1e3 * pen[0], 1e3 * pen[1], 1e3 * max(0.0, -float(np.nanmin(lc.min_gap))), ".4f")
        row(f"{nm}: intersecting pairs, max", int(ic.R.inter.max()), int(rc.inter.max()), int(lc.inter.max()), "d")
    row("peel / pull net peak", inet["peel"][0] / inet["pull"][0], rnet["peel"][0] / rnet["pull"][0], ratio, ".3f")
    if hruns:
        print("\nthe pull at other time steps (same scenes and η; ipc_adhesion one pass from t = 0, no fine pass):")
        print("  (penetration and intersections: max over the steps while bonded / after the last bonded step; lcp_pgs's "
              "penetration is its deepest vertex behind a face, min_gap)")
        print(f"  {'model':13s} {'h':>7s} {'steps':>6s} {'net peak/(Y·ε_c·A)':>19s} {'penetration (mm)':>19s} "
              f"{'intersections':>13s} {'ms/step':>8s} {'iterations mean/max':>20s}")
        base = {"ipc": None, "rcc": rpull, "lcp": pull}
        for key, model in (("ipc", "ipc_adhesion"), ("rcc", "rcc_ipc"), ("lcp", "lcp_pgs")):
            rs = ([base[key]] if base[key] is not None else []) + list(hruns.get(key, {}).values())
            for r in rs:
                hh = r.scene["time"]["dt"]
                if key == "lcp":
                    net, gap, it = r.net, r.min_gap, r.pgs[r.contacts > 0]
                else:
                    net = (r.tot if key == "rcc" else r.adh) + r.bar
                    gap, it = r.steps["min_distance"], r.newton
                # bonded: up to the last step with a bonded pair (lcp, rcc) or adhesion force (ipc)
                live = r.bonded > 0 if key != "ipc" else r.adh > 0
                kb = int(np.nonzero(live)[0].max()) + 1 if np.any(live) else len(r.t)
                def worst(sl):
                    g = gap[sl]
                    g = g[np.isfinite(g)]
                    return (1e3 * max(0.0, -float(g.min())) if len(g) else 0.0), (int(r.inter[sl].max()) if len(r.inter[sl]) else 0)
                (pb, ib), (pa, ia) = worst(slice(0, kb)), worst(slice(kb, None))
                print(f"  {model:13s} {hh * 1e3:5.1f}ms {len(r.t):6d} {float(net.max()) / (ye * A):19.4f} "
                      f"{pb:9.4f} / {pa:<7.4f} {ib:5d} / {ia:<5d} {1e3 * float(np.median(r.wall)):8.1f} "
                      f"{it.mean():10.1f} / {int(it.max()):<6d}")
        print("  (iterations: Newton per step for the barrier models, PGS sweeps per step with contacts for "
              "lcp_pgs; ms/step: median wall time)")

    if not args.no_plot:
        plt = figures.pyplot()
        if plt:
            fig, axs = plt.subplots(1, 2, figsize=(12.5, 4.6))
            col = {"pull": "C0", "peel": "C3"}
            for ic, rc, lc in ((ipull, rpull, pull), (ipeel, rpeel, peel)):
                c = col[lc.name]
                axs[0].plot(ic.t, ic.adh + ic.bar, color=c, lw=1.2, label=f"ipc_adhesion {lc.name}")
                axs[0].plot(rc.t, rc.tot + rc.bar, "--", color=c, lw=1.2, label=f"rcc_ipc {lc.name}")
                axs[0].plot(lc.t, lc.net, ":", color=c, lw=1.6, label=f"lcp_pgs {lc.name}")
            axs[0].axhline(F_th, color="k", lw=0.8, ls="--", label=f"√(C W)·A = {F_th:.0f} N")
            axs[0].set_xlabel("t (s)"), axs[0].set_ylabel("net normal interface force, adhesion + barrier (N)")
            axs[0].set_title("three models, matched peak traction and adhesion energy")
            axs[0].legend(fontsize=7.5, loc="lower left"), axs[0].grid(alpha=0.3)
            td = {"ipc_adhesion": ipeel.debond_times(2 * dp), "rcc_ipc": rpeel.debond_times(dd), "lcp_pgs": tde}
            tp = {"ipc_adhesion": ipeel.t_peak, "rcc_ipc": rpeel.t_peak, "lcp_pgs": peel.t_peak}
            for k, mk in (("ipc_adhesion", "o-"), ("rcc_ipc", "s--"), ("lcp_pgs", "^:")):
                axs[1].plot(1e3 * cols, 1e3 * (td[k] - tp[k]), mk, label=f"{k} peel")
            axs[1].set_xlabel("x of the column of pairs (mm)")
            axs[1].set_ylabel("column mean gap passes 2 d̂_p: t − t_peak (ms)")
            axs[1].set_title("peel: debonding from the ends to the centre")
            axs[1].legend(fontsize=8), axs[1].grid(alpha=0.3)
            fig.suptitle("pull_peel: ipc_adhesion (Fang et al.), rcc_ipc and lcp_pgs (Gascón et al.)")
            figures.save(fig, out, "pull_peel_lcp.png")
    return claims.summary()


if __name__ == "__main__":
    sys.exit(main())
