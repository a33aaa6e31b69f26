"""classify.py — measuring and classifying the cube_wall runs, shared by analyze.py (ipc_adhesion),
analyze_rcc.py (rcc_ipc) and analyze_lcp.py (lcp_pgs): the same measurements and the same
classification rules for all models (the classes and thresholds are listed in analyze.py's
docstring; two more classes, asked for by the counterparts, in classify's)."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import params as logged, runs  # noqa: E402
from contactlab.physics import contact_weights, rotation_z  # noqa: E402

STICK_DY, STICK_SLIP = 0.05, 1e-3     # × L
ROT_MIN, ROT_SMALL = 10.0, 1.0        # degrees
A_TOL = 0.01
G = 9.81

ADH = ("none", "small", "large")
# the adhesion's reach as each model logs it: ipc_adhesion's d̂_a, rcc_ipc's debond_dist, lcp_pgs's debond_gap
REACH = {"ipc_adhesion": "dhat_a", "rcc_ipc": "debond_dist", "lcp_pgs": "debond_gap"}

PAPER = {("0", "none"): "falls free", ("0", "small"): "slides down attached", ("0", "large"): "sticks",
         ("L", "none"): "falls free", ("L", "small"): "rotates and detaches", ("L", "large"): "sticks"}


def load(path):
    """The logged data of one run and the measurements of analyze.py's docstring."""
    run = runs.load(path)
    sc = run.scene
    X, m = run.mesh["X"], run.mesh["mass"]
    tris = run.mesh["surface_faces"]
    ft, fx, fv = run.frames["time"], run.frames["x"], run.frames["v"]
    r = dict(run=run, prm=run.params, scene=sc, con=sc["contact"], X=X, m=m, tris=tris, ft=ft,
             t=run.steps["time"], an=run.probes["adhesion_normal"], at=run.probes["adhesion_tangential"],
             bar=run.probes["barrier"], fr=run.probes["friction"],
             newton=run.steps["newton_iters"], inter=run.steps["intersections"],
             wall_s=run.steps["wall_s"], nsteps=len(run.steps["time"]))
    if run.attrs["model"] == "rcc_ipc":
        r.update(clamped=run.model["beta_clamped"], bonded=run.model["rcc_bonded"])
    if run.attrs["model"] == "lcp_pgs":
        r.update(min_gap=run.model["min_gap"], beta_min=run.model["beta_min"], pgs=run.model["pgs_iters"],
                 pgs_conv=run.model["pgs_converged"])
    r["min_dist"] = run.steps["min_distance"]
    r["wall"] = float(r["wall_s"].sum())
    M = m.sum()
    com = (fx * m[None, :, None]).sum(1) / M
    vcom = (fv * m[None, :, None]).sum(1) / M
    L = X[:, 1].max() - X[:, 1].min()
    face = np.where(X[:, 0] < X[:, 0].min() + 1e-9 * L)[0]
    edge = np.where((X[:, 1] > X[:, 1].max() - 1e-9 * L) & (X[:, 2] < X[:, 2].min() + 1e-9 * L))[0]
    near, far = edge[np.argmin(X[edge, 0])], edge[np.argmax(X[edge, 0])]
    fd = fx[:, face, 0]                      # wall: x = 0, normal +x
    # the model's contact weights of the vertices against the wall (normal +x) at rest: quadrature
    # "face" the face's area, "vertex" plus the rim's share of the side faces. The face's mean
    # distance and slip are means weighted by them (the face's area-weighted means: with "face" a
    # rim vertex carries only its share of the face, and at 4³ 16 of the 25 face vertices are rim)
    # lcp_pgs has no choice: its contact areas are always the face-aware weights (models/lcp_pgs/README.md)
    quad = "face" if run.attrs["model"] == "lcp_pgs" else logged.choice(run, "quadrature", "vertex")
    w = contact_weights(quad, X, tris, (1.0, 0.0, 0.0))
    wf = w[face] / w[face].sum()
    r.update(M=M, L=L, face=face, quad=quad, w=w, A_eff=w[face].sum(), dy=com[:, 1] - com[0, 1], vy=vcom[:, 1],
             theta=np.array([rotation_z(fx[0], x, m) for x in fx]),
             theta_edge=np.degrees(np.arctan2(fx[:, far, 1] - fx[:, near, 1], fx[:, far, 0] - fx[:, near, 0])),
             fmin=fd.min(1), fmean=fd @ wf, fmax=fd.max(1),
             slip=(fx[:, face, 1] - X[face, 1]) @ wf, gap0=float(X[face, 0].mean()))
    return r


def classify(r, reach, g=G, detaches=False, creeps=False):
    """The class of a run (analyze.py's rules; reach = d̂_a for ipc_adhesion, debond_dist for
    rcc_ipc, debond_gap for lcp_pgs). Two more classes that ipc_adhesion never needs, tested last:
    with detaches, 'detaches and falls' (the whole face beyond reach at the end, no rotation beyond
    ROT_MIN); with creeps, 'creeps down attached' (not 'sticks': the face slips by more than
    STICK_SLIP·L, but the centre of mass stays above −½·(½gT²), every face vertex within reach in
    every frame and the normal adhesion force ≠ 0 in every step)."""
    T = r["ft"][-1]
    late = r["ft"] > 0.1
    a = -np.polyfit(r["ft"][late], r["vy"][late], 1)[0]
    an = np.linalg.norm(r["an"], axis=1)
    at = np.linalg.norm(r["at"], axis=1)
    r.update(a=a, an_abs=an, at_abs=at)
    L = r["L"]
    if np.abs(r["dy"]).max() < STICK_DY * L and np.abs(r["slip"]).max() < STICK_SLIP * L:
        return "sticks"
    if abs(r["theta"][-1]) > ROT_MIN and r["fmin"][-1] > reach:
        return "rotates and detaches"
    if (r["dy"][-1] < -0.5 * 0.5 * g * T * T and np.abs(r["theta"]).max() < ROT_SMALL
            and r["fmax"].max() <= reach and an.min() > 0.0):
        return "slides down attached"
    if abs(a / g - 1.0) < A_TOL and an.max() == 0.0 and at.max() == 0.0:
        return "falls free"
    if detaches and r["fmin"][-1] > reach:
        return "detaches and falls"
    if (creeps and np.abs(r["slip"]).max() >= STICK_SLIP * L and r["dy"][-1] >= -0.5 * 0.5 * g * T * T
            and r["fmax"].max() <= reach and an.min() > 0.0):
        return "creeps down attached"
    return "unclassified"


def load_six(out, mu_large, prefix="", **kw):
    """The six runs OUTDIR/{prefix}mu{0,LARGE}_{none,small,large}.h5 of one model, measured (load)
    and classified (classify, kw: detaches, creeps), keyed by (mk, adh) with mk "0" or "L". Each
    r["reach"] is the adhesion's reach as the run logged it (REACH); a run without adhesion that
    logs NaN there (ipc_adhesion with ε_c = 0) takes that of the small run of the same μ.
    Returns (runs, classes)."""
    runs, cls = {}, {}
    for mk, mu in (("0", "0"), ("L", mu_large)):
        for adh in ADH:
            runs[mk, adh] = load(os.path.join(out, f"{prefix}mu{mu}_{adh}.h5"))
    for (mk, adh), r in runs.items():
        reach = logged.value(r["run"], REACH[r["run"].attrs["model"]])
        if np.isnan(reach):
            reach = logged.value(runs[mk, "small"]["run"], REACH[r["run"].attrs["model"]])
        r["reach"] = reach
        cls[mk, adh] = classify(r, reach, **kw)
    return runs, cls


def print_table(mu_large, rows, first="paper"):
    """The 2×3 outcome table, one line per (label, classes) of rows for each μ; the paper's line
    first (first="paper") or last (first=None, as analyze.py prints it after "computed")."""
    print(f"{'':>14} | {'no adhesion':^24} | {'small adhesion':^24} | {'large adhesion':^24}")
    for mk, label in (("0", "μ = 0"), ("L", f"μ = {mu_large}")):
        lines = [(f"{label} {nm}", c) for nm, c in rows]
        paper = (f"{label} paper", PAPER)
        for name, c in ([paper] + lines if first == "paper" else lines + [paper]):
            print(f"{name:>14} | " + " | ".join(f"{c[mk, a]:^24}" for a in ADH))


def figure(out, fname, mu_large, models, title):
    """OUTDIR/fname: the outcome table of the models side by side (green where all agree), then Δy and
    θ against t for the six cells, one line style per model. models: [(name, short, runs, classes)]."""
    from contactlab import figures
    plt = figures.pyplot()
    if not plt:
        return
    styles = ("-", "--", ":")
    fig = plt.figure(figsize=(14, 9.5 + 0.4 * (len(models) - 2)))
    gs = fig.add_gridspec(3, 3, height_ratios=[0.55 + 0.2 * (len(models) - 2), 1, 1])
    axt = fig.add_subplot(gs[0, :])
    axt.axis("off")
    cells = [["\n".join(f"{s}: {c[mk, a]}" for _, s, _, c in models) for a in ADH] for mk in ("0", "L")]
    colors = [["#dff0d8" if len({c[mk, a] for *_, c in models}) == 1 else "#f8d7da" for a in ADH] for mk in ("0", "L")]
    tb = axt.table(cellText=cells, cellColours=colors, rowLabels=["μ = 0", f"μ = {mu_large}"],
                   colLabels=["no adhesion", "small adhesion (Yε_c = 5 kPa)", "large adhesion (Yε_c = 100 kPa)"],
                   loc="center", cellLoc="center")
    tb.scale(1, 2.6 + 1.0 * (len(models) - 2))
    tb.set_fontsize(9)
    axt.set_title(f"outcome table, {' vs '.join(m[0] for m in models)} (green: same class)", fontsize=10)
    for i, (mk, mlabel) in enumerate((("0", "μ = 0"), ("L", f"μ = {mu_large}"))):
        for j, adh in enumerate(ADH):
            ax = fig.add_subplot(gs[i + 1, j])
            ax2 = ax.twinx()
            for (nm, _, rr, _), ls in zip(models, styles):
                r = rr[mk, adh]
                ax.plot(r["ft"], r["dy"], "C0" + ls, lw=1.2, label=f"Δy, {nm}")
                ax2.plot(r["ft"], r["theta"], "C3" + ls, lw=1.2, label=f"θ, {nm}")
            ax.set_ylabel("Δy centre of mass (m)", color="C0")
            ax2.set_ylabel("rotation θ (deg)", color="C3")
            if adh == "large":
                ax.set_ylim(-0.04, 0.005)
            if max(np.abs(m[2][mk, adh]["theta"]).max() for m in models) < 3:
                ax2.set_ylim(-3, 3)
            ax.set_title(f"{mlabel}, {adh}: " + ", ".join(f"{s} {c[mk, adh]}" for _, s, _, c in models),
                         fontsize=8.5 if len(models) == 2 else 7.5)
            if i == 1:
                ax.set_xlabel("t (s)")
            if i == 0 and j == 0:
                h1, l1 = ax.get_legend_handles_labels()
                h2, l2 = ax2.get_legend_handles_labels()
                ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower left")
    fig.suptitle(title, fontsize=10)
    figures.save(fig, out, fname, dpi=110)
