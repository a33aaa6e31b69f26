#!/usr/bin/env python3
"""Analysis of experiments/pull_peel (Fang et al. 2023 Fig. 15): two adhesive plates pulled apart by a
uniform load (pull) or a load linear in |x - centre| (peel), both growing linearly in time.

Each case has two files: CASE_ramp.h5 (h = 10 ms from the initial gap 0.25 d̂_p until the plates
come apart) and CASE.h5 (h = 0.5 ms, restarted from a ramp frame shortly before the peak). The
series are stitched at the restart time. Gaps are measured from the frames: every top-face vertex
of the lower plate faces the bottom-face vertex of the upper plate with the same rest (x, z)
(aligned grids), and the pair's gap is the difference of their heights.

Checks the claims of README.md (exit 1 if one fails), prints the numbers, writes
OUTDIR/pull_peel.png. With --restart-args RAMP.h5 BACK it only prints the --set arguments of the
fine pass: the ramp frame BACK seconds before its last bonded step and the load offsets
F0 + dF/dt t0 at its time."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params as logged, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402


def last_bonded_step(adh):
    """Index of the last step whose adhesion force is at least half the run's maximum."""
    return int(np.nonzero(adh >= 0.5 * adh.max())[0][-1])


def restart_args(ramp, back):
    run = runs.load(ramp)
    scene, t, tf = run.scene, run.steps["time"], run.frames["time"]
    adh = run.probes["adhesion"].ravel()
    kb = last_bonded_step(adh)
    j = int(np.argmin(np.abs(tf - (t[kb] - back))))
    t0 = float(tf[j])
    args = ["--set", 'initial_state={"file": "%s", "frame": %d, "velocity": "frame"}' % (os.path.abspath(ramp), j)]
    for b, body in enumerate(scene["bodies"]):
        for l, load in enumerate(body.get("loads", [])):
            tt = min(t0, load.get("ramp_until", np.inf))
            F = [f0 + r * tt for f0, r in zip(load.get("force", [0, 0, 0]), load.get("force_rate", [0, 0, 0]))]
            args += ["--set", "bodies.%d.loads.%d.force=[%s]" % (b, l, ", ".join("%.17g" % v for v in F))]
    print("\n".join(args))


class Run(runs.Run):
    """One run file (contactlab.runs.Run) with the series used here and the interface pairs."""

    def __init__(self, path):
        super().__init__(path)
        self.t = self.steps["time"]
        self.newton = self.steps["newton_iters"]
        self.wall = self.steps["wall_s"]
        self.inter = self.steps["intersections"]
        self.adh = self.probes["adhesion"].ravel()
        self.bar = self.probes["barrier"].ravel()
        self.adh_t = self.probes["adhesion_tangential"]
        self.mean_gap = (self.probes["upper_bottom"] - self.probes["lower_top"]).ravel()
        self.tf = self.frames["time"]
        self.xf = self.frames["x"]
        self.X = self.mesh["X"]
        self.vb = self.mesh["vertex_body"]
        self.mass = self.mesh["mass"]
        X, vb = self.X, self.vb
        top = np.nonzero((vb == 1) & (X[:, 1] > X[vb == 1, 1].max() - 1e-9))[0]  # lower plate, top face
        bot = np.nonzero((vb == 0) & (X[:, 1] < X[vb == 0, 1].min() + 1e-9))[0]  # upper plate, bottom face
        key = {(round(X[i, 0], 9), round(X[i, 2], 9)): i for i in bot}
        self.pairs = np.array([(key[(round(X[i, 0], 9), round(X[i, 2], 9))], i) for i in top])
        px, pz = X[self.pairs[:, 1], 0], X[self.pairs[:, 1], 2]
        self.px = px
        self.rim = (np.abs(px - px.min()) < 1e-9) | (np.abs(px - px.max()) < 1e-9) | \
                   (np.abs(pz - pz.min()) < 1e-9) | (np.abs(pz - pz.max()) < 1e-9)
        self.cols = np.unique(np.round(px, 9))

    def gaps(self, j):
        """Gap of every interface pair in frame j."""
        x = self.xf[j]
        return x[self.pairs[:, 0], 1] - x[self.pairs[:, 1], 1]

    def column_gaps(self, j):
        g = self.gaps(j)
        return np.array([g[np.abs(self.px - c) < 1e-9].mean() for c in self.cols])

    def debond_times(self, dd):
        """Per column of pairs (rest x), the first frame time at which its mean gap exceeds dd (NaN: never)."""
        out = np.full(len(self.cols), np.nan)
        for j in range(1, len(self.tf)):
            new = np.isnan(out) & (self.column_gaps(j) > dd)
            out[new] = self.tf[j]
        return out

    def load(self, t):
        """Total applied force (y) on the lower plate at time t: per-vertex weights as core/sim/sim.c
        (lumped volume, normalised over the selection, times (X - c)/L if linear)."""
        X = self.X
        body = self.scene["bodies"][1]
        low = np.nonzero(self.vb == 1)[0]
        total = 0.0
        for ld in body.get("loads", []):
            sel = ld["select"]
            idx = low
            if isinstance(sel, dict) and "box" in sel:
                lo, hi = np.array(sel["box"]["min"]), np.array(sel["box"]["max"])
                idx = low[np.all((X[low] >= lo) & (X[low] <= hi), axis=1)]
            w = self.mass[idx] / self.mass[idx].sum()
            d = ld.get("distribution", "uniform")
            if isinstance(d, dict):
                ax = "xyz".index(d["axis"])
                L = d.get("length") or np.abs(X[idx, ax] - d["center"]).max()
                w = w * (X[idx, ax] - d["center"]) / L
            tt = min(t, ld.get("ramp_until", np.inf))
            Fy = ld.get("force", [0, 0, 0])[1] + ld.get("force_rate", [0, 0, 0])[1] * tt
            total += Fy * w.sum()
        return total


class Case:
    """A ramp file and its fine pass, stitched at the restart time t0."""

    def __init__(self, out, name, sfx):
        self.name = name
        self.R = Run(os.path.join(out, f"{name}{sfx}_ramp.h5"))
        self.F = Run(os.path.join(out, f"{name}{sfx}.h5"))
        j0 = self.F.scene["initial_state"]["frame"]
        self.t0 = float(self.R.tf[j0])
        keep = self.R.t <= self.t0 + 1e-9
        self.t = np.concatenate([self.R.t[keep], self.F.t + self.t0])
        self.adh = np.concatenate([self.R.adh[keep], self.F.adh])
        self.bar = np.concatenate([self.R.bar[keep], self.F.bar])
        # frames: the ramp's up to t0, then the fine pass's (its frame 0 is the restart state)
        self.frames = [(self.R, j) for j in range(len(self.R.tf)) if self.R.tf[j] <= self.t0 + 1e-9] + \
                      [(self.F, j) for j in range(1, len(self.F.tf))]
        self.tframes = np.array([run.tf[j] + (self.t0 if run is self.F else 0.0) for run, j in self.frames])
        self.kp = int(np.argmax(self.F.adh))          # peak step of the fine pass
        self.peak = float(self.F.adh[self.kp])
        self.t_peak = float(self.F.t[self.kp] + self.t0)

    def debond_times(self, da):
        """Per column of pairs (rest x), the first time its mean gap exceeds d̂_a in the fine pass (NaN: never)."""
        return self.F.debond_times(da) + self.t0


def main():
    ap = cli.parser(__doc__, "plots/out/pull_peel", quick=True)
    ap.add_argument("--restart-args", nargs=2, metavar=("RAMP.h5", "BACK"),
                    help="print the --set arguments of the fine pass started BACK s before the ramp's last bonded step")
    args = ap.parse_args()
    if args.restart_args:
        restart_args(args.restart_args[0], float(args.restart_args[1]))
        return 0
    out = args.outdir
    sfx = "_quick" if args.quick else ""
    pull, peel = Case(out, "pull", sfx), Case(out, "peel", sfx)

    sc = pull.R.scene
    dp, da, eps_c, mu_a = logged.values(pull.R, "dhat_p", "dhat_a", "eps_c", "mu_a")  # as the run logged them
    Y = min(b["material"]["E"] for b in sc["bodies"])
    size = sc["bodies"][1]["mesh"]["size"]
    assert sc["bodies"][0]["mesh"]["size"] == size, "the plates must have the same size"
    A = size[0] * size[2]
    F_th = Y * eps_c * A
    claims = Claims()
    
    print(f"plates {size[0]:g} x {size[1]:g} x {size[2]:g} m, cells {sc['bodies'][1]['mesh']['cells']}, "
          f"{len(pull.R.X)} vertices, {len(pull.R.pairs)} interface pairs ({int(pull.R.rim.sum())} on the rim); "
          f"E = {Y:g} Pa, eps_c = {eps_c:g}, mu_a = {mu_a:g}; d̂ = d̂_p = {dp:g} m, d̂_a = {da:g} m")
    print(f"Y·eps_c = {Y * eps_c:g} Pa, contact face area A = {A:g} m², Y·eps_c·A = {F_th:g} N")
    for c in (pull, peel):
        print(f"{c.name}: ramp {len(c.R.t)} steps of {c.R.scene['time']['dt']:g} s (Newton {c.R.newton.sum()} iters, "
              f"max {c.R.newton.max()}, {c.R.wall.sum():.1f} s); fine pass from t0 = {c.t0:.3f} s, {len(c.F.t)} steps "
              f"of {c.F.scene['time']['dt']:g} s (Newton {c.F.newton.sum()}, max {c.F.newton.max()}, {c.F.wall.sum():.1f} s)")

    # ---- both runs: intersection-free, quasi-static before the peak ----
    for c in (pull, peel):
        n_int = int(max(c.R.inter.max(), c.F.inter.max()))
        claims.check(n_int == 0 and c.R.inter.min() == 0 and c.F.inter.min() == 0,
                     f"{c.name}: /steps/intersections is 0 in every step ({len(c.R.t)} ramp + {len(c.F.t)} fine steps)")
        # equilibrium after the initial transient: net interface force = applied load
        m = (c.R.t >= 0.1) & (c.R.t <= c.t0 + 1e-9)
        err = np.abs(c.R.adh[m] + c.R.bar[m] + np.array([c.R.load(t) for t in c.R.t[m]]))
        claims.check(err.max() < 0.005 * F_th, f"{c.name}: quasi-static ramp: |adhesion + barrier − applied load| ≤ "
                     f"{err.max():.3g} N (< 0.5 % of Y·eps_c·A) for 0.1 s ≤ t ≤ t0")
        claims.check(0 < c.kp < len(c.F.t) - 1 and c.peak >= c.R.adh[c.R.t <= c.t0 + 1e-9].max(),
                     f"{c.name}: the peak lies inside the fine pass (t = {c.t_peak:.4f} s; the ramp's own largest value "
                     f"{c.R.adh.max():.2f} N, fine {c.peak:.2f} N)")

    # ---- pull: peak value and the gap at the peak ----
    print()
    g = pull.F.gaps(pull.kp + 1)  # frame kp+1 = end of fine step kp
    gi = g[~pull.R.rim]
    gprev = pull.F.gaps(pull.kp)[~pull.R.rim].mean()
    step_gap = gi.mean() - gprev
    load_pk = -pull.F.load(pull.F.t[pull.kp])
    print(f"pull peak: {pull.peak:.2f} N at t = {pull.t_peak:.4f} s (applied load {load_pk:.2f} N, barrier "
          f"{pull.F.bar[pull.kp]:.2f} N); ratio to Y·eps_c·A {pull.peak / F_th:.4f}")
    print(f"  gaps at the peak step: interior pairs mean {gi.mean() / dp:.4f} d̂_p (min {gi.min() / dp:.4f}, max "
          f"{gi.max() / dp:.4f}); rim pairs mean {g[pull.R.rim].mean() / dp:.4f} d̂_p; all pairs mean "
          f"{g.mean() / dp:.4f} d̂_p (mean-position probe {pull.F.mean_gap[pull.kp] / dp:.4f} d̂_p)")
    print(f"  load step {abs(pull.F.load(pull.F.t[1]) - pull.F.load(pull.F.t[0])):.4g} N "
          f"({abs(pull.F.load(pull.F.t[1]) - pull.F.load(pull.F.t[0])) / F_th * 100:.3f} % of Y·eps_c·A); "
          f"interior gap increment in the peak step {step_gap / dp:.5f} d̂_p")
    claims.check(abs(pull.peak / F_th - 1) <= 0.05,
                 f"pull: peak total adhesion {pull.peak:.2f} N = Y·eps_c·A within 5 % ({(pull.peak / F_th - 1) * 100:+.2f} %)")
    # with the face-aware contact weights (the default) every pair carries its share of the face and
    # the rim pairs are no longer held closer by their side faces (quadrature "vertex": the rim
    # vertices' weights include a strip of the side faces), so all pairs are compared; with
    # "vertex" the interior pairs, as before
    quad = logged.choice(pull.R, "quadrature", "vertex")
    gc, which = (g, "all") if quad == "face" else (gi, "interior")
    claims.check(abs(gc.mean() / dp - 1) <= 0.01 and gc.min() <= dp <= gc.max(),
                 f"pull: the peak is where the gap reaches d̂_p: {which} pairs' mean gap {gc.mean() / dp:.4f} d̂_p (within "
                 f"1 %), d̂_p inside the {which} pairs' range [{gc.min() / dp:.4f}, {gc.max() / dp:.4f}] d̂_p "
                 f"(quadrature {quad})")

    # ---- debonding ----
    tdp = pull.debond_times(da)
    tde = peel.debond_times(da)
    for c, td in ((pull, tdp), (peel, tde)):
        gl = c.F.gaps(len(c.F.tf) - 1)
        claims.check(np.all(c.F.adh[-3:] == 0) and gl.min() > da and np.all(np.isfinite(td)),
                     f"{c.name}: full debonding after the peak: adhesion force 0 in the last steps (from {c.peak:.1f} N), "
                     f"every pair beyond d̂_a (min gap {gl.min() * 1e3:.1f} mm at t = {c.t[-1]:.3f} s)")
    cols = pull.F.cols
    iend = [0, len(cols) - 1]
    icen = int(np.argmin(np.abs(cols)))
    iq = [int(np.argmin(np.abs(cols + 0.25 * size[0]))), int(np.argmin(np.abs(cols - 0.25 * size[0])))]
    print("\ntime at which a column of pairs (mean over z) passes d̂_a, after the peak (ms):")
    print("  x (mm)  " + " ".join(f"{1e3 * x:7.1f}" for x in cols))
    for c, td in ((pull, tdp), (peel, tde)):
        print(f"  {c.name:5s}   " + " ".join(f"{1e3 * (v - c.t_peak):7.2f}" for v in td))
    spread_pull = np.nanmax(tdp) - np.nanmin(tdp)
    spread_peel = tde[icen] - max(tde[iend])
    print(f"  pull: all columns within {1e3 * spread_pull:.2f} ms; peel: centre {1e3 * spread_peel:.2f} ms after the "
          f"later end")

    # ---- peel ----
    print()
    ratio = peel.peak / pull.peak
    print(f"peel peak: {peel.peak:.2f} N at t = {peel.t_peak:.4f} s (applied load {-peel.F.load(peel.F.t[peel.kp]):.2f} N); "
          f"peel / pull = {ratio:.3f}")
    claims.check(peel.peak < pull.peak, f"peel: lower adhesion peak than the pull ({peel.peak:.2f} N < {pull.peak:.2f} N, "
                 f"ratio {ratio:.3f})")
    prog = all(tde[e] < tde[q] < tde[icen] for e, q in zip(iend, iq))
    claims.check(prog and spread_peel > 0,
                 f"peel: debonding progresses from the ends: on each side the end column passes d̂_a before the quarter "
                 f"point, which passes before the centre (ends {1e3 * (tde[0] - peel.t_peak):.2f} / "
                 f"{1e3 * (tde[-1] - peel.t_peak):.2f} ms, quarters {1e3 * (tde[iq[0]] - peel.t_peak):.2f} / "
                 f"{1e3 * (tde[iq[1]] - peel.t_peak):.2f} ms, centre {1e3 * (tde[icen] - peel.t_peak):.2f} ms after the peak)")
    ta = max(np.abs(c.F.adh_t).max() for c in (pull, peel))
    print(f"largest tangential adhesion force in the fine passes: {ta:.3g} N")

    if not args.no_plot:
        plot(out, pull, peel, F_th, dp, da, tdp, tde)
    return claims.summary()


def plot(out, pull, peel, F_th, dp, da, tdp, tde):
    plt = figures.pyplot()
    if not plt:
        return
    fig, axs = plt.subplots(2, 2, figsize=(12, 8.5))
    col = {"pull": "C0", "peel": "C3"}
    ax = axs[0, 0]
    for c in (pull, peel):
        ax.plot(c.t, c.adh, color=col[c.name], lw=1.2, label=f"{c.name} (peak {c.peak:.1f} N)")
        ax.plot(c.t_peak, c.peak, "o", color=col[c.name], ms=5)
        ax.plot(c.t, -c.bar, ":", color=col[c.name], lw=1, label=f"{c.name}: barrier force (repulsive)")
    ax.axhline(F_th, color="k", ls="--", lw=0.8, label=f"Y·ε_c·A = {F_th:g} N")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("total force between the plates (N)")
    ax.set_title("total normal adhesion force vs time")
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(alpha=0.3)
    ax = axs[0, 1]
    for c in (pull, peel):
        m = c.t >= c.t_peak - 0.03
        ax.plot(1e3 * (c.t[m] - c.t_peak), c.adh[m], ".-", color=col[c.name], ms=2.5, lw=1,
                label=f"{c.name}: peak {c.peak:.1f} N at t = {c.t_peak:.3f} s")
    ax.axhline(F_th, color="k", ls="--", lw=0.8)
    ax.set_xlabel("t − t_peak (ms)   (fine pass, h = %g ms)" % (1e3 * pull.F.scene["time"]["dt"]))
    ax.set_ylabel("total adhesion force (N)")
    ax.set_title(f"around the peak: peel / pull = {peel.peak / pull.peak:.3f}")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = axs[1, 0]
    gi = np.array([run.gaps(j)[~run.rim].mean() for run, j in pull.frames[1:]])
    adh_f = np.array([run.adh[j - 1] for run, j in pull.frames[1:]])
    ax.plot(gi / dp, adh_f, ".-", color=col["pull"], ms=2.5, lw=1, label="pull: mean gap of the interior pairs (rim pairs sit closer)")
    gg = np.linspace(0, da / dp, 200)
    law = F_th * np.where(gg <= 1, gg, (da / dp - gg) / (da / dp - 1))
    ax.plot(gg, law, "k--", lw=0.8, label="A × adhesion pressure law, peak Y·ε_c at d̂_p")
    k = pull.frames.index((pull.F, pull.kp + 1))
    ax.plot(gi[k - 1] / dp, pull.peak, "o", color=col["pull"], ms=6,
            label=f"peak: {pull.peak:.1f} N at gap {gi[k - 1] / dp:.4f} d̂_p")
    ax.set_xlim(0, da / dp * 1.05)
    ax.set_xlabel("gap / d̂_p")
    ax.set_ylabel("total adhesion force (N)")
    ax.set_title("pull: adhesion force vs gap")
    ax.legend(fontsize=8, loc="lower center")
    ax.grid(alpha=0.3)
    ax = axs[1, 1]
    F = peel.F
    times = np.linspace(peel.t_peak - 0.004, np.nanmax(tde) + 0.001, 8)
    cmap = plt.get_cmap("viridis")
    for i, tt in enumerate(times):
        j = int(np.argmin(np.abs(F.tf + peel.t0 - tt)))
        ax.semilogy(1e3 * F.cols, F.column_gaps(j) / dp, ".-", color=cmap(i / (len(times) - 1)), lw=1,
                    label=f"t − t_peak = {1e3 * (F.tf[j] + peel.t0 - peel.t_peak):+.1f} ms")
    ax.axhline(1, color="k", ls="--", lw=0.8)
    ax.axhline(da / dp, color="k", ls=":", lw=0.8)
    ax.set_ylim(0.5, 3000)
    ax.set_xlabel("x (mm)")
    ax.set_ylabel("gap / d̂_p (mean over z)")
    ax.set_title("peel: gap profile (dashed d̂_p, dotted d̂_a)")
    ax.legend(fontsize=7, ncol=3, loc="upper center")
    ax.grid(alpha=0.3, which="both")
    fig.suptitle("pull_peel (Fang et al. 2023 Fig. 15): adhesive plates under a uniform (pull) and a linear-in-|x| (peel) load")
    figures.save(fig, out, "pull_peel.png")


if __name__ == "__main__":
    sys.exit(main())
