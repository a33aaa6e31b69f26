"""analysis_common.py — helpers shared by the experiments' analysis scripts.

Import from an experiment folder with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from analysis_common import barrier_pressure, vertex_areas, rotation_z
"""
import math

import numpy as np


def barrier_pressure(d, dhat, kappa):
    """κ(−b′(d)) per unit area, b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂): the IPC barrier of the models, in
    the units of models/ipc_adhesion/README.md; 0 at and beyond d̂ (elementwise)."""
    x = np.asarray(d, dtype=float) / dhat
    with np.errstate(divide="ignore", invalid="ignore"):
        p = kappa * (2 * (x - 1) * np.log(x) + (x - 1) ** 2 / x)
    return np.where(x < 1, p, 0.0)


def vertex_areas(X, tris):
    """The models' vertex quadrature weights: ⅓ of the incident surface triangles' areas (rim
    vertices of a face therefore also carry part of the side faces)."""
    tris = np.asarray(tris)
    w = np.zeros(len(X))
    a = 0.5 * np.linalg.norm(np.cross(X[tris[:, 1]] - X[tris[:, 0]], X[tris[:, 2]] - X[tris[:, 0]]), axis=1)
    for k in range(3):
        np.add.at(w, tris[:, k], a / 3.0)
    return w


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
