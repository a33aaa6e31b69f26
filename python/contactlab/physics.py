"""physics.py — the laws and geometry the analyses evaluate independently of the C code.

Units and formulas of models/ipc_adhesion/README.md (Fang et al. 2023): the barrier
b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂) on (0, d̂) per unit κ, its pressure κ(−b′(d)); the adhesion
pressure a′(d) of eq. 10–12 (distance form) with its peak Y·ε_c at d̂_p and zero from d̂_a on.

The barrier pressure has two evaluations of the same formula: barrier_pressure (numpy,
elementwise) and barrier_pressure_float (one float, math.log). numpy's log differs from the C
library's in the last bit for some arguments, and the gaps computed by bisection on floats are
written into scenes (cube_wall, threshold_ablation) with all their digits: they keep math.log.
"""
import math

import numpy as np


def _barrier_shape(x, log):
    """−b′(x d̂) for d = x d̂ per unit κ: 2 (x − 1) ln x + (x − 1)²/x (> 0 on (0, 1))."""
    return 2 * (x - 1) * log(x) + (x - 1) ** 2 / x


def barrier_pressure(d, dhat, kappa):
    """κ(−b′(d)) per unit area, b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂): the IPC barrier of the models, in
    the units of models/ipc_adhesion/README.md; 0 at and beyond d̂ (elementwise)."""
    x = np.asarray(d, dtype=float) / dhat
    with np.errstate(divide="ignore", invalid="ignore"):
        p = kappa * _barrier_shape(x, np.log)
    return np.where(x < 1, p, 0.0)


def barrier_pressure_float(d, dhat, kappa):
    """barrier_pressure for one float d, in float arithmetic (math.log)."""
    x = d / dhat
    return kappa * _barrier_shape(x, math.log) if x < 1 else 0.0


def adhesion_pressure(d, yeps, dp, da):
    """a′(d) of Fang et al. 2023 eq. 10 with a₂ = Y·ε_c / (2(d̂_p − d̂_a)) (eq. 12): the attractive
    pressure (Pa, ≥ 0), 2a₁d below d̂_p (peak Y·ε_c at d̂_p), 2a₂d + b₂ on [d̂_p, d̂_a), 0 beyond
    (elementwise; yeps = Y·ε_c)."""
    d = np.asarray(d, dtype=float)
    a2 = yeps / (2 * (dp - da))
    a1 = a2 * (1 - da / dp)
    b2 = -2 * a2 * da
    return np.where(d < dp, 2 * a1 * d, np.where(d < da, 2 * a2 * d + b2, 0.0))


def bisect(above, lo, hi, n=200):
    """The point where the predicate above(x) turns from true (at lo) to false (at hi): n halvings
    of [lo, hi], then the midpoint of what is left."""
    for _ in range(n):
        mid = 0.5 * (lo + hi)
        if above(mid):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def balance_gap(kappa, yeps, dhat, dp, da):
    """The gap where the barrier pressure κ(−b′(d)) equals the adhesion pressure a′(d) (Fang et
    al. adhesion, yeps = Y·ε_c, peak at d̂_p = dp, zero from d̂_a = da on): below it the barrier
    wins. d̂ when there is no adhesion (the barrier's force vanishes from d̂ on; dp, da unused)."""
    if yeps == 0.0:
        return dhat
    repels = lambda d: barrier_pressure_float(d, dhat, kappa) > adhesion_pressure(d, yeps, dp, da)  # noqa: E731
    lo, hi = 1e-12 * dhat, min(dhat, dp)  # the barrier ~ d̂/d wins at lo; only adhesion is left at hi
    assert repels(lo) and not repels(hi)
    return bisect(repels, lo, hi)


def vertex_areas(X, tris):
    """The models' vertex quadrature weights (contact parameter quadrature = "vertex"): ⅓ of the
    incident surface triangles' areas (rim vertices of a face therefore also carry part of the side
    faces)."""
    tris = np.asarray(tris)
    w = np.zeros(len(X))
    a = 0.5 * np.linalg.norm(np.cross(X[tris[:, 1]] - X[tris[:, 0]], X[tris[:, 2]] - X[tris[:, 0]]), axis=1)
    for k in range(3):
        np.add.at(w, tris[:, k], a / 3.0)
    return w


QUAD_FLOOR = 1e-3  # CT_QUAD_FLOOR of core/include/contactlab/ct_collisions.h


def face_weights(X, tris, n, x=None):
    """The models' face-aware contact weights (quadrature = "face", the default; ct_collisions.h):
    for the unit contact direction n (from the partner towards the vertex; against a half-space its
    outward normal) vertex v carries Σ_{f∋v} (A_f/3) max(0, c_f)/c_max with c_f = −n_f·n and c_max
    the largest c_f over v's faces, A_f the rest area (from X) and n_f the outward unit normal at the
    positions x (the models lag them at the start of each step; default X), at least QUAD_FLOOR ×
    vertex_areas. A flat face in full contact sums to its area (the side faces of its rim vertices
    have c_f = 0), and a vertex whose faces are coplanar keeps its vertex area. 3D (triangles)."""
    tris = np.asarray(tris)
    x = X if x is None else x
    a = 0.5 * np.linalg.norm(np.cross(X[tris[:, 1]] - X[tris[:, 0]], X[tris[:, 2]] - X[tris[:, 0]]), axis=1)
    nf = np.cross(x[tris[:, 1]] - x[tris[:, 0]], x[tris[:, 2]] - x[tris[:, 0]])
    nf /= np.linalg.norm(nf, axis=1)[:, None]
    c = -(nf @ np.asarray(n, dtype=float))
    cmax = np.zeros(len(X))
    for k in range(3):
        np.maximum.at(cmax, tris[:, k], c)
    w = np.zeros(len(X))
    for k in range(3):
        cm = cmax[tris[:, k]]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(c <= 0, 0.0, np.where(c == cm, a / 3.0, a / 3.0 * (c / cm)))
        np.add.at(w, tris[:, k], share)
    return np.maximum(w, QUAD_FLOOR * vertex_areas(X, tris))


def contact_weights(quadrature, X, tris, n, x=None):
    """The models' contact weights of every vertex for the contact direction n under the run's
    quadrature parameter (params.choice(run, "quadrature", "vertex")): face_weights or
    vertex_areas."""
    if quadrature == "vertex":
        return vertex_areas(X, tris)
    if quadrature != "face":
        raise ValueError(f"unknown quadrature {quadrature!r}")
    return face_weights(X, tris, n, x)


def rotation_z(P0, P, m):
    """Angle (deg) about z of the best rigid rotation (mass-weighted, Kabsch) taking the centred
    rest shape P0 to P."""
    c0 = (m[:, None] * P0).sum(0) / m.sum()
    c = (m[:, None] * P).sum(0) / m.sum()
    H = ((P0 - c0) * m[:, None]).T @ (P - c)
    U, _, Vt = np.linalg.svd(H)
    D = np.diag([1.0, 1.0, np.sign(np.linalg.det(Vt.T @ U.T))])
    R = Vt.T @ D @ U.T
    return math.degrees(math.atan2(R[1, 0], R[0, 0]))
