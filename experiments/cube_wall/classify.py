"""classify.py — measuring and classifying the cube_wall runs, shared by analyze.py (ipc_adhesion)
and analyze_rcc.py (rcc_ipc): the same measurements and the same classification rules for both
models (the classes and thresholds are listed in analyze.py's docstring)."""
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
    quad = logged.choice(run, "quadrature", "vertex")
    w = contact_weights(quad, X, tris, (1.0, 0.0, 0.0))
    wf = w[face] / w[face].sum()
    r.update(M=M, L=L, face=face, quad=quad, w=w, A_eff=w[face].sum(), dy=com[:, 1] - com[0, 1], vy=vcom[:, 1],
             theta=np.array([rotation_z(fx[0], x, m) for x in fx]),
             theta_edge=np.degrees(np.arctan2(fx[:, far, 1] - fx[:, near, 1], fx[:, far, 0] - fx[:, near, 0])),
             fmin=fd.min(1), fmean=fd @ wf, fmax=fd.max(1),
             slip=(fx[:, face, 1] - X[face, 1]) @ wf, gap0=float(X[face, 0].mean()))
    return r


def classify(r, reach, g=G, detaches=False):
    """The class of a run (analyze.py's rules; reach = d̂_a for ipc_adhesion, debond_dist for
    rcc_ipc). With detaches, one more class that ipc_adhesion never needs: 'detaches and falls'
    (the whole face beyond reach at the end, no rotation beyond ROT_MIN)."""
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
    return "unclassified"
