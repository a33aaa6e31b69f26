#!/usr/bin/env python3
"""RCC counterpart of experiments/pull_peel: the same plates and loads with contact.model = rcc_ipc
(pull_rcc.json, peel_rcc.json; one pass each, h = 2 ms, QUICK 4 ms), compared with the
ipc_adhesion runs of the same OUTDIR (analyze.py's ramp + fine pass).

Parameters matched to ipc_adhesion (README.md, "RCC counterpart"): C_N = Y·ε_c/d̂_p,
W = Y·ε_c·d̂_p, so RCC's rate-independent peak √(C_N W) = Y·ε_c at d* = √(W/C_N) = d̂_p.

The total adhesion force of rcc_ipc is the y component of adhesion_normal + adhesion_tangential:
the rim pairs whose anchor lies on a side face of the other plate (README, "RCC observations" 1)
hold the plates together through their C_T term.

Checks the RCC claims of README.md (exit 1 if one fails), prints both models' numbers side by
side, writes OUTDIR/pull_peel_rcc.png."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params as logged  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from contactlab.physics import contact_weights  # noqa: E402
from analyze import Case, Run  # noqa: E402


def face_area_eff(run):
    """Σ of the contact weights over the lower plate's top face, bonded to the upper plate (contact
    direction −y, from the partner above), at rest: quadrature "face" (the default) the face area;
    "vertex" (⅓ of the incident surface triangles) the face area plus the rim's share of the side faces."""
    quad = logged.choice(run, "quadrature", "vertex")
    return contact_weights(quad, run.X, run.tris, (0.0, -1.0, 0.0))[run.pairs[:, 1]].sum()


class RccRun(Run):
    """One rcc_ipc run (single pass): total adhesion = normal + tangential (y), β statistics."""

    def __init__(self, path, name):
        super().__init__(path)
        self.name = name
        self.tris = self.mesh["surface_faces"]
        self.clamped = self.model["beta_clamped"]
        self.clamped0 = self.model["beta_clamped_0"]
        self.bonded = self.model["rcc_bonded"]
        self.adh_ty = self.adh_t[:, 1]
        self.tot = self.adh + self.adh_ty
        self.kp = int(np.argmax(self.tot))
        self.peak = float(self.tot[self.kp])
        self.t_peak = float(self.t[self.kp])


def main():
    args = cli.parser(__doc__, "plots/out/pull_peel", quick=True).parse_args()
    out = args.outdir
    sfx = "_quick" if args.quick else ""
    pull, peel = RccRun(os.path.join(out, f"pull_rcc{sfx}.h5"), "pull"), RccRun(os.path.join(out, f"peel_rcc{sfx}.h5"), "peel")
    ipull, ipeel = Case(out, "pull", sfx), Case(out, "peel", sfx)

    cn, ct, W, eta, rate, beta0 = logged.values(pull, "c_n", "c_t", "w", "eta", "r", "beta0")  # as the run logged them
    h = pull.scene["time"]["dt"]
    dstar = np.sqrt(W / cn)
    dd = logged.value(pull, "debond_dist")  # auto: twice d*
    size = pull.scene["bodies"][1]["mesh"]["size"]
    A = size[0] * size[2]
    A_eff = face_area_eff(pull)
    T = np.sqrt(cn * W)
    F_th = T * A_eff
    Y = min(b["material"]["E"] for b in ipull.R.scene["bodies"])
    ye = Y * logged.value(ipull.R, "eps_c")
    dp, da = logged.values(ipull.R, "dhat_p", "dhat_a")
    claims = Claims()
    
    print(f"rcc_ipc: C_N = {cn:g} N/m³, C_T = {ct:g} N/m³, W = {W:g} J/m², η = {eta:g} J·s/m², r = {rate:g}, "
          f"β0 = {beta0:g}; h = {h:g} s, h·W/η = {h * W / eta:.3g}")
    print(f"  √(C_N W) = {T:g} Pa (ipc_adhesion Y·ε_c = {ye:g} Pa) at d* = √(W/C_N) = {dstar * 1e3:g} mm "
          f"(d̂_p = {dp * 1e3:g} mm); debond_dist = {dd * 1e3:g} mm")
    print(f"  lower plate's top face: A = {A:g} m², contact-quadrature area A_eff = {A_eff:.5f} m² ({A_eff / A:.4f} A); "
          f"√(C_N W)·A_eff = {F_th:.2f} N")
    for r in (pull, peel):
        print(f"  {r.name}: {len(r.t)} steps of {h:g} s, Newton {r.newton.sum()} iters (mean {r.newton.mean():.2f}, "
              f"max {r.newton.max()}), wall {r.wall.sum():.1f} s ({1e3 * r.wall.mean():.1f} ms/step); β clamped "
              f"{int(r.clamped.sum())} pair-steps ({int(r.clamped0.sum())} at 0)")
    print()

    # ---- claims ----
    for r in (pull, peel):
        claims.check(r.inter.max() == 0 and r.inter.min() == 0,
                     f"rcc {r.name}: /steps/intersections is 0 in every step ({len(r.t)} steps)")
    g = pull.gaps(pull.kp + 1)  # frame kp+1 = end of step kp
    gi = g[~pull.rim]
    claims.check(abs(pull.peak / F_th - 1) <= 0.05,
                 f"rcc pull: peak total adhesion {pull.peak:.2f} N = √(C_N W)·A_eff = {F_th:.2f} N within 5 % "
                 f"({(pull.peak / F_th - 1) * 100:+.2f} %; {pull.peak / (T * A):.4f} × √(C_N W)·A) at t = {pull.t_peak:.3f} s")
    claims.check(abs(gi.mean() / dstar - 1) <= 0.05,
                 f"rcc pull: interior mean gap at the peak {gi.mean() / dstar:.4f} d* (within 5 %; min {gi.min() / dstar:.4f}, "
                 f"max {gi.max() / dstar:.4f}; rim pairs {g[pull.rim].mean() / dstar:.4f} d*)")
    for r in (pull, peel):
        gl = r.gaps(len(r.tf) - 1)
        claims.check(np.all(r.adh[-3:] == 0) and np.all(r.adh_t[-3:] == 0) and r.bonded[-1] == 0 and gl.min() > dd,
                     f"rcc {r.name}: the adhesion force drops to 0 (normal and tangential exactly 0 in the last 3 steps, "
                     f"no bonded pair, min gap {gl.min() * 1e3:.1f} mm > debond_dist at t = {r.t[-1]:.3f} s)")
    ratio = peel.peak / pull.peak
    claims.check(peel.peak < pull.peak, f"rcc peel: lower adhesion peak than the rcc pull ({peel.peak:.2f} N < "
                 f"{pull.peak:.2f} N, ratio {ratio:.3f})")
    tdp, tde = pull.debond_times(dd), peel.debond_times(dd)
    cols = pull.cols
    iend = [0, len(cols) - 1]
    icen = int(np.argmin(np.abs(cols)))
    iq = [int(np.argmin(np.abs(cols + 0.25 * size[0]))), int(np.argmin(np.abs(cols - 0.25 * size[0])))]
    prog = all(tde[e] < tde[q] < tde[icen] for e, q in zip(iend, iq))
    claims.check(prog, f"rcc peel: debonding progresses from the ends: on each side the end column passes debond_dist "
                 f"before the quarter point, which passes before the centre (ends {1e3 * (tde[0] - peel.t_peak):.1f} / "
                 f"{1e3 * (tde[-1] - peel.t_peak):.1f} ms, quarters {1e3 * (tde[iq[0]] - peel.t_peak):.1f} / "
                 f"{1e3 * (tde[iq[1]] - peel.t_peak):.1f} ms, centre {1e3 * (tde[icen] - peel.t_peak):.1f} ms after the peak)")

    # ---- both models side by side ----
    itdp, itde = ipull.debond_times(dd), ipeel.debond_times(dd)
    print("\nboth models (ipc_adhesion: ramp 10 ms + fine pass 0.5 ms; rcc_ipc: one pass of %g ms)" % (1e3 * h))
    print(f"{'':44s} {'ipc_adhesion':>14s} {'rcc_ipc':>14s}")

    def row(label, a, b, fmt):
        print(f"  {label:42s} {format(a, fmt):>14s} {format(b, fmt):>14s}")
    for nm, ic, rc in (("pull", ipull, pull), ("peel", ipeel, peel)):
        row(f"{nm}: peak total adhesion force (N)", ic.peak, rc.peak, ".2f")
        row(f"{nm}: peak / (Y·ε_c·A), A = {A:g} m²", ic.peak / (ye * A), rc.peak / (ye * A), ".4f")
        row(f"{nm}: peak / (Y·ε_c·A_eff)", ic.peak / (ye * A_eff), rc.peak / (ye * A_eff), ".4f")
        row(f"{nm}: time of the peak (s)", ic.t_peak, rc.t_peak, ".4f")
        nst = len(ic.R.t) + len(ic.F.t)
        row(f"{nm}: steps", nst, len(rc.t), "d")
        row(f"{nm}: Newton iterations per step, mean", (ic.R.newton.sum() + ic.F.newton.sum()) / nst, rc.newton.mean(), ".2f")
        row(f"{nm}: Newton iterations per step, max", max(ic.R.newton.max(), ic.F.newton.max()), rc.newton.max(), "d")
        row(f"{nm}: wall time per step (ms)", 1e3 * (ic.R.wall.sum() + ic.F.wall.sum()) / nst, 1e3 * rc.wall.mean(), ".1f")
        row(f"{nm}: wall time in all (s)", ic.R.wall.sum() + ic.F.wall.sum(), rc.wall.sum(), ".1f")
    gi_ipc = ipull.F.gaps(ipull.kp + 1)[~ipull.R.rim]
    row("pull: interior mean gap at the peak / d̂_p", gi_ipc.mean() / dp, gi.mean() / dstar, ".4f")
    row("peel / pull peak", ipeel.peak / ipull.peak, ratio, ".3f")
    # the rising branch: both laws are C_N·d = Y·ε_c·d/d̂_p below d̂_p
    for tt in (0.2, 0.5, 0.7):
        ki = int(np.argmin(np.abs(ipull.R.t - tt)))
        kr = int(np.argmin(np.abs(pull.t - tt)))
        row(f"pull: total adhesion at t = {tt:g} s (N)", ipull.R.adh[ki], pull.tot[kr], ".2f")
    kr = int(np.argmin(np.abs(pull.t - 0.7)))
    print(f"  (rcc at t = 0.7 s: normal part {pull.adh[kr]:.2f} N, tangential part (y) {pull.adh_ty[kr]:.2f} N)")
    print("\ntime at which a column of pairs passes 2 d̂_p (= debond_dist), after the peak (ms):")
    print("  x (mm)        " + " ".join(f"{1e3 * x:6.1f}" for x in cols))
    for nm, td, tp in (("ipc pull", itdp, ipull.t_peak), ("ipc peel", itde, ipeel.t_peak),
                       ("rcc pull", tdp, pull.t_peak), ("rcc peel", tde, peel.t_peak)):
        print(f"  {nm:12s}  " + " ".join(f"{1e3 * (v - tp):6.1f}" for v in td))

    if not args.no_plot:
        plot(out, ipull, ipeel, pull, peel, F_th, ye * A, dp, da, dstar, dd, cn, W, A_eff, itde, tde)
    return claims.summary()


def plot(out, ipull, ipeel, pull, peel, F_th, F_ipc, dp, da, dstar, dd, cn, W, A_eff, itde, tde):
    plt = figures.pyplot()
    if not plt:
        return
    fig, axs = plt.subplots(2, 2, figsize=(12.5, 9))
    col = {"pull": "C0", "peel": "C3"}
    ax = axs[0, 0]
    for ic, rc in ((ipull, pull), (ipeel, peel)):
        c = col[rc.name]
        ax.plot(ic.t, ic.adh, color=c, lw=1.2, label=f"ipc_adhesion {rc.name} (peak {ic.peak:.1f} N)")
        ax.plot(ic.t_peak, ic.peak, "o", color=c, ms=6)
        ax.plot(rc.t, rc.tot, "--", color=c, lw=1.2, label=f"rcc_ipc {rc.name} (peak {rc.peak:.1f} N)")
        ax.plot(rc.t_peak, rc.peak, "s", color=c, ms=6, mfc="none")
    ax.axhline(F_ipc, color="k", ls=":", lw=0.8, label=f"Y·ε_c·A = {F_ipc:g} N")
    ax.axhline(F_th, color="k", ls="--", lw=0.8, label=f"√(C_N W)·A_eff = {F_th:.0f} N")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("total adhesion force between the plates (N)")
    ax.set_title("total normal adhesion force vs time (rcc: normal + tangential part, y)")
    ax.legend(fontsize=7.5, loc="lower left")
    ax.grid(alpha=0.3)
    ax = axs[0, 1]
    for ic, rc in ((ipull, pull), (ipeel, peel)):
        c = col[rc.name]
        m = (ic.t >= ic.t_peak - 0.03) & (ic.t <= ic.t_peak + 0.04)
        ax.plot(1e3 * (ic.t[m] - ic.t_peak), ic.adh[m], ".-", color=c, ms=2, lw=1, label=f"ipc_adhesion {rc.name}")
        m = (rc.t >= rc.t_peak - 0.03) & (rc.t <= rc.t_peak + 0.04)
        ax.plot(1e3 * (rc.t[m] - rc.t_peak), rc.tot[m], "s--", color=c, ms=2.5, lw=1, mfc="none", label=f"rcc_ipc {rc.name}")
    ax.axhline(F_ipc, color="k", ls=":", lw=0.8)
    ax.axhline(F_th, color="k", ls="--", lw=0.8)
    ax.set_xlabel("t − t_peak (ms)  (ipc fine pass 0.5 ms; rcc %g ms)" % (1e3 * pull.scene["time"]["dt"]))
    ax.set_ylabel("total adhesion force (N)")
    ax.set_title(f"around the peak: peel/pull = {ipeel.peak / ipull.peak:.3f} (ipc), {peel.peak / pull.peak:.3f} (rcc)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = axs[1, 0]
    gi = np.array([run.gaps(j)[~run.rim].mean() for run, j in ipull.frames[1:]])
    adh_f = np.array([run.adh[j - 1] for run, j in ipull.frames[1:]])
    ax.plot(gi / dp, adh_f, ".-", color="C0", ms=2, lw=1, label="ipc_adhesion pull")
    gr = np.array([pull.gaps(j)[~pull.rim].mean() for j in range(1, len(pull.tf))])
    ax.plot(gr / dstar, pull.tot, "s--", color="C2", ms=2.5, lw=1, mfc="none", label="rcc_ipc pull")
    gg = np.linspace(1e-3, 2.0, 400)
    ax.plot(gg, F_ipc * np.where(gg <= 1, gg, np.maximum(da / dp - gg, 0.0) / (da / dp - 1)), "k:", lw=0.9, label="ipc_adhesion law × A (peak Y·ε_c at d̂_p)")
    lim = np.where(gg <= 1, gg, gg ** -3.0) * F_th
    ax.plot(gg, lim, "k--", lw=0.9, label="RCC η→0 limit × A_eff (C_N d, then W²/(C_N d³))")
    ax.axvline(dd / dstar, color="C2", ls=":", lw=0.8)
    k = pull.kp
    ax.plot(gr[k] / dstar, pull.peak, "s", color="C2", ms=7, mfc="none", label=f"rcc peak {pull.peak:.1f} N at {gr[k] / dstar:.3f} d*")
    ax.set_xlim(0, 2.5)
    ax.set_xlabel("interior mean gap / d̂_p  (= d* for rcc)")
    ax.set_ylabel("total adhesion force (N)")
    ax.set_title("pull: adhesion force vs gap (dotted vertical: debond_dist)")
    ax.legend(fontsize=7.5, loc="upper right")
    ax.grid(alpha=0.3)
    ax = axs[1, 1]
    ax.plot(1e3 * peel.cols, 1e3 * (itde - ipeel.t_peak), "o-", color="C3", label="ipc_adhesion peel")
    ax.plot(1e3 * peel.cols, 1e3 * (tde - peel.t_peak), "s--", color="C3", mfc="none", label="rcc_ipc peel")
    itdp = ipull.debond_times(dd)
    tdp = pull.debond_times(dd)
    ax.plot(1e3 * pull.cols, 1e3 * (itdp - ipull.t_peak), "o-", color="C0", label="ipc_adhesion pull")
    ax.plot(1e3 * pull.cols, 1e3 * (tdp - pull.t_peak), "s--", color="C0", mfc="none", label="rcc_ipc pull")
    ax.set_xlabel("x of the column of pairs (mm)")
    ax.set_ylabel("column mean gap passes 2 d̂_p: t − t_peak (ms)")
    ax.set_title("debonding order: from the ends to the centre in the peel")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.suptitle("pull_peel: ipc_adhesion (solid) vs rcc_ipc (dashed), matched C_N = Y·ε_c/d̂_p, W = Y·ε_c·d̂_p, C_T = C_N")
    figures.save(fig, out, "pull_peel_rcc.png")


if __name__ == "__main__":
    sys.exit(main())
