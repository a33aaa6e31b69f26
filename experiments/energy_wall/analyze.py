#!/usr/bin/env python3
"""Analysis of experiments/energy_wall (Du et al. 2023 Fig. 3): reads OUTDIR/*.dat and *.mesh written by
build/experiments/energy_wall/energy_wall, recomputes every energy of the ipc rows (ipc2020, convergent) and
of the ipc_adhesion rows (ipcadh: the convergent set with κ b + a in its vertex quadrature, at both probe
heights) independently from the collision-set formulas of models/ipc_adhesion/README.md with brute-force
geometry (numpy), on the flat planes and on the faceted circle / cylinder, checks the claims of README.md,
prints the tables (every row of the driver's model table, ipc or not; the adhesive rows in their own) and
writes OUTDIR/energy_wall.png, OUTDIR/energy_wall_curved.png, energy_wall_summary.txt and
energy_wall_adhesion_summary.txt. --quick (QUICK=1): the ipcadh forces are not recomputed by finite
differences (their energies are). Exit status 1 if a claim fails."""
import glob
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from contactlab.physics import barrier_pressure  # noqa: E402

args = cli.parser(__doc__, "plots/out/energy_wall", quick=True).parse_args()  # --quick: no FD forces for ipcadh
out = args.outdir
claims = Claims()


# ------------------------------------------------------------------ barrier and distances
def bar(d, dhat):
    """b(d) = -dhat (d/dhat - 1)^2 ln(d/dhat) on (0, dhat), 0 beyond (Fang et al. 2023 eq. 2)."""
    d = np.asarray(d, dtype=float)
    r = np.clip(d / dhat, 1e-300, 1.0)
    return np.where(d < dhat, -dhat * (r - 1.0) ** 2 * np.log(r), 0.0)


def adh(d, yeps, dp, da):
    """Fang et al.'s normal adhesion a(d), distance form (models/ipc_adhesion/README.md, "Adhesion"):
    a₁ d² + c₁ below d̂_p, a₂ d² + b₂ d + c₂ up to d̂_a, 0 beyond, a₂ = Yε_c / (2 (d̂_p − d̂_a))."""
    d = np.asarray(d, dtype=float)
    a2 = yeps / (2.0 * (dp - da))
    a1, b2, c2 = a2 * (1.0 - da / dp), -2.0 * a2 * da, a2 * da * da
    c1 = a2 * (da - dp) ** 2 - a1 * dp * dp
    return np.where(d < dp, a1 * d * d + c1, np.where(d < da, a2 * d * d + b2 * d + c2, 0.0))


def density(kappa, dhat, law):
    """The density of a vertex-quadrature term divided by κ: b(d), plus a(d)/κ for an adhesive row (law =
    (Yε_c, d̂_p, d̂_a)), and the largest distance at which it acts."""
    if law is None:
        return (lambda d: bar(d, dhat)), dhat
    return (lambda d: bar(d, dhat) + adh(d, *law) / kappa), max(dhat, law[2])


def d_point_seg(p, a, b):
    """|p - segment ab| for points p (n, k) and one segment."""
    ab = b - a
    t = np.clip(((p - a) @ ab) / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(p - a - t[:, None] * ab, axis=1)


def d_point_tri(p, a, b, c):
    """|p - triangle abc| (3D): the plane distance if the projection is inside, else the edges."""
    n = np.cross(b - a, c - a)
    n = n / np.linalg.norm(n)
    q = p - ((p - a) @ n)[:, None] * n
    inside = np.ones(len(p), bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= (np.cross(v - u, q - u) @ n) >= 0
    de = np.minimum(np.minimum(d_point_seg(p, a, b), d_point_seg(p, b, c)), d_point_seg(p, c, a))
    return np.where(inside, np.abs((p - a) @ n), de)


def d_seg_seg(p0, p1, q0, q1):
    """|segment p0p1 - segment q0q1| for segments p (arrays (n, 3)) and one segment q, not parallel:
    the interior critical point if it lies in [0,1]^2, else the best endpoint-to-segment distance."""
    u, v = p1 - p0, q1 - q0
    w = p0 - q0
    a, b, c = np.sum(u * u, 1), np.sum(u * v, 1), v @ v
    d, e = np.sum(u * w, 1), w @ v
    den = a * c - b * b
    s = (b * e - c * d) / den
    t = (a * e - b * d) / den
    inner = (s >= 0) & (s <= 1) & (t >= 0) & (t <= 1)
    di = np.linalg.norm(w + s[:, None] * u - t[:, None] * v, axis=1)
    de = np.minimum(d_point_seg(p0, q0, q1), d_point_seg(p1, q0, q1))
    for qq in (q0, q1):  # endpoints of q against the (moving) segment p: per-row segments
        tt = np.clip(np.sum((qq - p0) * u, 1) / a, 0, 1)
        de = np.minimum(de, np.linalg.norm(qq - p0 - tt[:, None] * u, axis=1))
    return np.where(inner, np.minimum(di, de), de)


# ------------------------------------------------------------------ inputs
def read_mesh(path):
    with open(path) as f:
        lines = [l for l in f if not l.startswith("#")]
    dim, nv, nc = map(int, lines[0].split())
    X = np.array([list(map(float, l.split())) for l in lines[1:1 + nv]])
    C = np.array([list(map(int, l.split())) for l in lines[1 + nv:1 + nv + nc]])
    return dim, X, C


def read_dat(path):
    meta = {}
    with open(path) as f:
        for line in f:
            if not line.startswith("#"):
                break
            tok = line[1:].split()
            if tok and tok[0] == "dim":
                for k, v in zip(tok[0::2], tok[1::2]):
                    meta[k] = v
    return meta, np.loadtxt(path)


_areas_cache = {}


def areas(dim, X, C):
    """Vertex weights (1/3 of the incident triangles / 1/2 of the incident segments), edge list with
    edge areas (3D: 1/3 of the incident triangles) and the number of edges at each vertex (cached per
    mesh)."""
    key = (dim, X.tobytes(), C.tobytes())
    if key not in _areas_cache:
        _areas_cache[key] = _areas(dim, X, C)
    return _areas_cache[key]


def _areas(dim, X, C):
    nv = len(X)
    wv = np.zeros(nv)
    edges = {}
    for c in C:
        if dim == 3:
            A = 0.5 * np.linalg.norm(np.cross(X[c[1]] - X[c[0]], X[c[2]] - X[c[0]]))
            wv[c] += A / 3
            for k in range(3):
                e = tuple(sorted((c[k], c[(k + 1) % 3])))
                edges[e] = edges.get(e, 0.0) + A / 3
        else:
            L = np.linalg.norm(X[c[1]] - X[c[0]])
            wv[c] += L / 2
            edges[tuple(sorted(c))] = L
    val = np.zeros(nv, int)
    for e in edges:
        val[list(e)] += 1
    return wv, edges, val


def creases(X, C):
    """3D: the crease s_e = max(1e-3, min(1, max over the edge's face pairs of (1 - n_i.n_j)/2)) of every
    edge (a face that runs along the edge the same way as the other is flipped first; a free edge: 1),
    the factor of the convergent set's edge-edge weight (models/ipc_adhesion/README.md), cached."""
    key = ("crease", X.tobytes(), C.tobytes())
    if key not in _areas_cache:
        faces = {}
        for c in C:
            n = np.cross(X[c[1]] - X[c[0]], X[c[2]] - X[c[0]])
            n = n / np.linalg.norm(n)
            for k in range(3):
                a, b = c[k], c[(k + 1) % 3]
                faces.setdefault(tuple(sorted((a, b))), []).append((n, a < b))
        s = {}
        for e, fl in faces.items():
            v = 1.0 if len(fl) < 2 else 0.0
            for i in range(len(fl)):
                for j in range(i + 1, len(fl)):
                    sg = -1.0 if fl[i][1] == fl[j][1] else 1.0
                    v = max(v, 0.5 * (1.0 - sg * float(np.dot(fl[i][0], fl[j][0]))))
            s[e] = max(1e-3, min(1.0, v))
        _areas_cache[key] = s
    return _areas_cache[key]


# ------------------------------------------------------------------ predictions (README formulas)
_rows_cache = {}


def rows_near(P, pts, reach, full=False):
    """Rows of P (tip positions) whose horizontal distance (full: the distance) to the bounding box of
    pts is < reach: only there can a term involving those plane points be active. Cached per (plane
    points, reach) for the current run: the finite-difference shifts (1e-9 m) are far inside the 1e-6 m
    margin."""
    key = (pts.tobytes(), reach)
    if key not in _rows_cache:
        k = P.shape[1] if full else P.shape[1] - 1
        lo, hi = pts[:, :k].min(0), pts[:, :k].max(0)
        gap = np.maximum(np.maximum(lo - P[:, :k], 0.0), P[:, :k] - hi)
        _rows_cache[key] = np.nonzero(np.linalg.norm(gap, axis=1) < reach + 1e-6)[0]
    return _rows_cache[key]


def psi_full(dim, Xp, Cp, P, dhat, g=None):
    """The convergent set's Ψ of a point P (rows) against a surface, term by term as the README states it
    (no assumption about which feature is closest): 3D Σ_t b(d_t) − Σ_e (k_e − 1) b(d_e) + Σ_u c_u b(d_u)
    with c_u = 1 − n_t(u) + Σ_{e∋u} (k_e − 1); 2D Σ_e b(d_e) + Σ_u (1 − k_u) b(d_u). Used for the curved
    surfaces, where it is not the max of b on the concave side. g: the density (default b), acting up to
    the distance passed as dhat."""
    g = g or (lambda d: bar(d, dhat))
    n = len(P)
    psi = np.zeros(n)
    nv = len(Xp)
    if dim == 3:
        ke, nt = {}, np.zeros(nv, int)
        for c in Cp:
            nt[c] += 1
            for k in range(3):
                e = tuple(sorted((c[k], c[(k + 1) % 3])))
                ke[e] = ke.get(e, 0) + 1
        cu = 1.0 - nt
        for (a, b_), k in ke.items():
            cu[a] += k - 1
            cu[b_] += k - 1
        for c in Cp:
            i = rows_near(P, Xp[c], 1.01 * dhat, True)
            if len(i):
                psi[i] += g(d_point_tri(P[i], *Xp[c]))
        for (a, b_), k in ke.items():
            i = rows_near(P, Xp[[a, b_]], 1.01 * dhat, True)
            if len(i) and k != 1:
                psi[i] -= (k - 1) * g(d_point_seg(P[i], Xp[a], Xp[b_]))
    else:
        cu = np.ones(nv)
        for c in Cp:
            cu[c] -= 1
            i = rows_near(P, Xp[c], 1.01 * dhat, True)
            if len(i):
                psi[i] += g(d_point_seg(P[i], *Xp[c]))
    for u in range(nv):
        i = rows_near(P, Xp[u][None, :], 1.01 * dhat, True)
        if len(i) and cu[u] != 0:
            psi[i] += cu[u] * g(np.linalg.norm(P[i] - Xp[u], axis=1))
    return psi


def predict(dim, setname, probe, plane, body, P, dhat, kappa, wpoint, h, rot=None, law=None):
    """Contact energy for tip positions P (n, dim) by the README's collision-set formulas, evaluated by
    brute force over all primitives (each only on the rows where it can be within d̂). The plane is
    kinematic (its own pairs are skipped). rot (n, dim, dim), curved surfaces: the body's local frame
    (tip at the origin, up = the last axis) in world coordinates per row, x = P + rot @ local; then the
    rows are filtered by distance (not horizontal distance) and the tip's convergent Ψ is summed term by
    term (psi_full). law = (Yε_c, d̂_p, d̂_a): an adhesive row (ipc_adhesion, convergent set): the
    vertex-quadrature terms carry κ b + a and act up to d̂_a, the edge–edge family keeps the barrier alone
    (models/ipc_adhesion/README.md, "Adhesion is integrated by the vertex quadrature only")."""
    Xp, Cp = plane
    wpl, epl, val = areas(dim, Xp, Cp)
    conv = setname == "convergent" or setname.startswith("ipcadh")
    g, act = density(kappa, dhat, law)
    curved = rot is not None
    n = len(P)
    dist = d_point_tri if dim == 3 else d_point_seg
    # the probe's own quadrature: its distance to every plane cell
    wtip = wpoint if probe == "point" else areas(dim, *body)[0][0]
    if conv and curved:
        E = 0.5 * wtip * psi_full(dim, Xp, Cp, P, act, g)
    else:
        dmin, bsum = np.full(n, np.inf), np.zeros(n)
        for c in Cp:
            i = rows_near(P, Xp[c], 1.01 * act, curved)
            if len(i):
                d = dist(P[i], *Xp[c])
                dmin[i] = np.minimum(dmin[i], d)
                bsum[i] += bar(d, dhat)
        if conv:  # faces - edges + vertices (2D: edges - vertices) = one copy of the max for a flat plane
            E = 0.5 * wtip * g(dmin)
        else:
            E = (0.25 if dim == 3 else 0.5) * wtip * bsum
    if probe == "point":
        return kappa * E
    Xb, Cb = body
    _, eb, _ = areas(dim, Xb, Cb)
    # Every body cell/edge at the tip rises at >= 63 degrees, so within d̂ of the plane a body point is
    # at most 0.5 d̂ from the tip horizontally: 2 d̂ bounds the horizontal reach of every body term.
    # Curved (R = 16 d̂): a body point t from the tip is 0.5 d̂ + 0.89 t above the tangent plane at the
    # tip and 0.45 t off the tip's normal, where the concave surface rises by (0.45 t)²/2R: its gap
    # exceeds d̂ beyond t = 0.6 d̂, so 2 d̂ bounds the distance from the tip to an active primitive.
    # Adhesive rows (terms up to d̂_a): a body point within d̂_a of the plane is at most 0.51 (d̂_a − h)
    # from the tip horizontally, so d̂_a + 2 d̂ bounds the reach with room for the curvature.
    reach = 2.0 * dhat if law is None else act + 2.0 * dhat
    lowc = [c for c in Cb if np.min(Xb[c][:, dim - 1]) + h < act]
    world = (lambda i, X: P[i] + np.einsum("nij,j->ni", rot[i], X)) if curved else (lambda i, X: P[i] + X)
    for u in range(len(Xp)):  # plane vertices against the body's cells (the body moves with the tip)
        i = rows_near(P, Xp[u][None, :], reach, curved)
        if not len(i):
            continue
        rel = Xp[u][None, :] - P[i]
        if curved:  # into the body's frame
            rel = np.einsum("nji,nj->ni", rot[i], rel)
        du = [dist(rel, *Xb[c]) for c in lowc]
        if conv:  # the body is convex: inclusion-exclusion gives b(distance to the body)
            E[i] += 0.5 * wpl[u] * g(np.min(du, 0))
        else:
            E[i] += (0.25 if dim == 3 else 0.5) * wpl[u] * sum(bar(d, dhat) for d in du)
    if dim == 2:
        return kappa * E
    # 3D edge-edge terms: ½(Ω_a + Ω_b) with Ω_e = s_e d̂² (convergent: the edge's crease) or (A_a + A_b)/4
    # (ipc2020), unmollified (the body's edges are far from parallel to the plane)
    sp, sb = creases(Xp, Cp), creases(Xb, Cb)
    lowe = [e for e in eb if min(Xb[e[0]][2], Xb[e[1]][2]) + h < dhat]
    for (k, l), Ap in epl.items():
        i = rows_near(P, Xp[[k, l]], reach, curved)
        if not len(i):
            continue
        for (a, b_) in lowe:
            d = d_seg_seg(world(i, Xb[a]), world(i, Xb[b_]), Xp[k], Xp[l])
            w = 0.5 * (sb[(a, b_)] + sp[(k, l)]) * dhat ** 2 if conv else 0.25 * (eb[(a, b_)] + Ap)
            E[i] += w * bar(d, dhat)
        if conv:  # plane edge against the tip: -(n_tip - 1) Ω/2, n_tip = body edges at the tip
            ntip = sum(1 for e in eb if 0 in e)
            E[i] -= (ntip - 1) * 0.5 * sp[(k, l)] * dhat ** 2 * bar(d_point_seg(P[i], Xp[k], Xp[l]), dhat)
    if conv:  # body edges against plane vertices: -(n_p - 1) Ω/2, n_p = plane edges at p
        for p in range(len(Xp)):
            i = rows_near(P, Xp[p][None, :], reach, curved)
            if not len(i):
                continue
            rel = Xp[p][None, :] - P[i]
            if curved:
                rel = np.einsum("nji,nj->ni", rot[i], rel)
            for (a, b_) in lowe:
                E[i] -= (val[p] - 1) * 0.5 * sb[(a, b_)] * dhat ** 2 * bar(d_point_seg(rel, Xb[a], Xb[b_]), dhat)
    return kappa * E


# ------------------------------------------------------------------ load and check
meshes = {os.path.basename(p)[:-5]: read_mesh(p) for p in glob.glob(os.path.join(out, "*.mesh"))}
files = sorted(glob.glob(os.path.join(out, "*.dat")))
if not files:
    sys.exit(f"no .dat files in {out}")
PREDICTED = ("ipc2020", "convergent", "ipcadh", "ipcadh-h1.5")  # rows whose formulas predict() knows (ipc models)
ADHESIVE = ("ipcadh", "imlsadh")  # adhesive rows (their set names: the label, "-h1.5" at the band height)
runs = {}
for path in files:
    name = os.path.basename(path)[:-4]
    meta, A = read_dat(path)
    dimtag, plane, probe, pathname, setname = name.split("_")
    dim = int(dimtag[0])
    dhat, kappa, h = float(meta["dhat"]), float(meta["kappa"]), float(meta["h"])
    wv, Ef = float(meta["w_v"]), float(meta["E_flat"])
    s, px, py = A[:, 0], A[:, 1], A[:, 2]
    curved = "R" in meta
    pm = meshes[f"{dim}d_{plane}"][1:]
    bm = meshes[f"{dim}d_body"][1:] if probe == "body" else None
    extra = {}
    law = (float(meta["yeps"]), float(meta["dhat_p"]), float(meta["dhat_a"])) if "yeps" in meta else None
    if law is not None and meta.get("variant") != "distance":
        claims.check(False, f"{name}: adhesion variant {meta.get('variant')}: analyze.py knows the distance form only")
    if curved:
        # tip on the arc; the body's frame (tip at the origin, up = the last axis) rotated to the normal
        # n = side e_r: 2D columns (u, n), u = (n_y, -n_x); 3D columns (e_z × n, e_z, n) (energy_wall.c)
        side, R, nseg = int(meta["side"]), float(meta["R"]), int(meta["nseg"])
        # the angle of sample i exactly as the driver computes it (px, py have 11 digits only)
        th0, th1 = float(meta["th0"]), float(meta["th1"])
        th = th0 + (th1 - th0) * np.arange(len(px)) / (len(px) - 1)
        rho = R + side * h
        dev = np.max(np.hypot(px - rho * np.cos(th), py - rho * np.sin(th)))
        if dev > 1e-12:  # the written positions (11 digits) are these to 1e-14 m
            claims.check(False, f"{name}: the tip is {dev:.1e} m off the arc of the path")
        px, py = rho * np.cos(th), rho * np.sin(th)
        sg = 1.0 if float(meta["th1"]) > float(meta["th0"]) else -1.0
        nx, ny = side * np.cos(th), side * np.sin(th)
        n0 = np.zeros_like(nx)
        if dim == 3:
            P = np.column_stack([px, py, np.full_like(px, float(meta["z"]))])
            rot = np.stack([np.column_stack([-ny, nx, n0]), np.column_stack([n0, n0, n0 + 1]),
                            np.column_stack([nx, ny, n0])], axis=2)
            nrm = np.column_stack([nx, ny, n0])
            tng = sg * np.column_stack([-np.sin(th), np.cos(th), n0])
        else:
            P = np.column_stack([px, py])
            rot = np.stack([np.column_stack([ny, -nx]), np.column_stack([nx, ny])], axis=2)
            nrm = np.column_stack([nx, ny])
            tng = sg * np.column_stack([-np.sin(th), np.cos(th)])
        extra = dict(side=side, R=R, nseg=nseg, th=th)
    else:
        P = np.column_stack([px, py, np.full_like(px, h)]) if dim == 3 else np.column_stack([px, np.full_like(px, h)])
        rot = None
        dirv = (P[-1, :dim - 1] - P[0, :dim - 1]) / np.linalg.norm(P[-1, :dim - 1] - P[0, :dim - 1])
        tng, nrm = np.zeros(dim), np.zeros(dim)
        tng[:dim - 1], nrm[dim - 1] = dirv, 1.0
    Epred = Ftp_pred = Fn_pred = None
    if setname in PREDICTED:
        _rows_cache.clear()
        Epred = predict(dim, setname, probe, pm, bm, P, dhat, kappa, wv, h, rot, law)
    if Epred is not None and not (args.quick and law is not None):
        # forces: -dE/d(translation of the probe) along the path and the normal, central differences
        step = 1e-6 * dhat
        fd = []
        for dP in (step * tng, step * nrm):
            fd.append(-(predict(dim, setname, probe, pm, bm, P + dP, dhat, kappa, wv, h, rot, law)
                        - predict(dim, setname, probe, pm, bm, P - dP, dhat, kappa, wv, h, rot, law)) / (2 * step))
        Ftp_pred, Fn_pred = fd
    runs[name] = dict(dim=dim, plane=plane, probe=probe, path=pathname, set=setname, s=s, e=A[:, 3], E=A[:, 4],
                      ftp=A[:, 5], ft=A[:, 6], fn=A[:, 7], fbtp=A[:, 8], fbn=A[:, 10], de=A[:, 11], dv=A[:, 12],
                      Ef=Ef, wv=wv, dhat=dhat, h=h, kappa=kappa, Epred=Epred, ftp_pred=Ftp_pred, fn_pred=Fn_pred,
                      val=areas(dim, *pm)[2], curved=curved, law=law, adhesive=setname.split("-")[0] in ADHESIVE,
                      **extra)

b = lambda d, r: bar(np.array(d), r)
print("\n== every run: energy and force equal the README formulas evaluated independently (brute force)")
worstE = worstF = 0.0
worst_adh = [0.0, 0.0]
for name, r in runs.items():
    if r["Epred"] is None:
        continue
    errE = np.max(np.abs(r["E"] - r["Epred"])) / abs(r["Ef"])
    fscale = np.max(np.abs(r["fn"]))
    errF = 0.0 if r["ftp_pred"] is None else max(np.max(np.abs(r["fbtp"] - r["ftp_pred"])),
                                                 np.max(np.abs(r["fbn"] - r["fn_pred"]))) / fscale
    if r["adhesive"]:
        worst_adh = [max(worst_adh[0], errE), max(worst_adh[1], errF)]
    else:
        worstE, worstF = max(worstE, errE), max(worstF, errF)
    if errE > 1e-9 or errF > 1e-6:
        claims.check(False, f"{name}: |E - E_pred|/E_flat = {errE:.1e}, |F - F_pred|/max|Fn| = {errF:.1e}")
npred = sum(r["Epred"] is not None and not r["adhesive"] for r in runs.values())
claims.check(worstE < 1e-9, f"all {npred} runs: max |E - E_pred| / E_flat = {worstE:.1e} (< 1e-9)")
claims.check(worstF < 1e-6, f"all {npred} runs: max |F - F_pred| / max|F_n| = {worstF:.1e} (< 1e-6; central differences)")
nadh = sum(r["Epred"] is not None and r["adhesive"] for r in runs.values())
if nadh:
    claims.check(worst_adh[0] < 1e-9 and worst_adh[1] < 1e-6,
                 f"all {nadh} ipc_adhesion runs (κ b + a in the vertex quadrature, the edge–edge family barrier-only): "
                 f"max |E - E_pred| / |E_ideal| = {worst_adh[0]:.1e} (< 1e-9), max |F - F_pred| / max|F_n| = "
                 + (f"{worst_adh[1]:.1e} (< 1e-6)" if not args.quick else "not recomputed (--quick)"))

print("\n== point probe, convergent: flat energy, no tangential force")
for name, r in runs.items():
    if r["probe"] == "point" and r["set"] == "convergent" and not r["curved"]:
        dev = np.max(np.abs(r["e"] - 1.0))
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        claims.check(dev < 1e-12 and rat < 1e-12, f"{name}: max|E/E_flat - 1| = {dev:.1e}, max|F_t|/|F_n| = {rat:.1e} (< 1e-12)")

print("\n== point probe, ipc2020: walls of the counted-again distance")
hh, dh = 0.5, 1.0  # in units of dhat
r_ = np.linspace(0, 1, 200001)
rho = np.sqrt(hh ** 2 + r_ ** 2)
db = lambda d: -barrier_pressure(d, 1.0, 1.0)  # b'(d), dhat = 1  # noqa: E731
ratio_edge = np.max(np.abs(db(rho) * r_ / rho) / np.abs(db(hh) + db(rho) * hh / rho))
print(f"   closed form, one shared edge (E ∝ b(h) + b(√(h²+r²))): max|F_t|/|F_n| = {ratio_edge:.5f}")
for name, r in runs.items():
    if r["probe"] != "point" or r["set"] != "ipc2020" or r["curved"]:
        continue
    ds = r["s"][1] - r["s"][0]
    if r["path"] in ("x",) or (r["path"] == "xmid" and r["plane"] != "jitter"):
        # isolated crossings of shared edges (3D) / vertices of the line (2D): E = 2 E_flat on top,
        # and the tangential force of the closed form
        top = np.max(r["e"])
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        claims.check(abs(top - 2.0) < 1e-4 and abs(rat - ratio_edge) < 1e-3 * ratio_edge,
                     f"{name}: max E/E_flat = {top:.6f} (2 + tail of a neighbour within d̂), max|F_t|/|F_n| = {rat:.5f} "
                     f"(closed form {ratio_edge:.5f})")
    if r["path"] == "diag" and r["plane"] != "jitter":
        onv = r["dv"] <= ds
        vmax = np.max(r["e"][onv])
        k = np.max(r["val"])  # triangles at a grid vertex = edges at it for an interior vertex
        claims.check(abs(vmax - k) < 1e-9, f"{name}: above a vertex E/E_flat = {vmax:.9f} = its {k} triangles")
print("   walls (local maxima of E) on the regular planes lie on edges/vertices:")
for name, r in runs.items():
    if r["probe"] != "point" or r["set"] != "ipc2020" or r["plane"] == "jitter" or r["path"] == "xnear" or r["curved"]:
        continue
    e, ds = r["E"], r["s"][1] - r["s"][0]
    i = np.nonzero((e[1:-1] > e[:-2]) & (e[1:-1] >= e[2:]))[0] + 1
    w = int(math.ceil(r["dhat"] / ds))  # ±d̂ neighbourhood, as in the driver
    i = [j for j in i if e[j] - np.min(e[max(0, j - w):j + w + 1]) > 1e-6 * r["Ef"]]
    feat = np.minimum(r["de"], r["dv"])[i]
    claims.check(len(i) > 0 and np.all(feat <= ds), f"{name}: {len(i)} walls, all within one sample ({ds / r['dhat']:.4f} d̂) "
                 f"of an edge or vertex")

print("\n== body probe, convergent: the walls are other quadrature points' terms (derived closed forms)")
for name, r in runs.items():
    if r["probe"] != "body" or r["set"] != "convergent":
        continue
    dhat, wv = r["dhat"], r["wv"]
    if r["dim"] == 2 and r["plane"] == "line":
        # above a vertex u of the line: + (w_u/2) b(h) from u's own quadrature; w_u = a
        a = 4 * dhat
        pred = 1 + a / wv
        claims.check(abs(np.max(r["e"]) - pred) < 1e-6, f"{name}: max E/E_flat = {np.max(r['e']):.6f} = 1 + w_u/w_tip "
                     f"= {pred:.6f}")
    if r["dim"] == 3:
        # edge-edge weights Ω = s d̂²: the tip's three edges (creases S_t in all, the body's dihedral angles)
        # and the flat plane's interior edges (s_p = 1e-3, the floor)
        Xb, Cb = meshes["3d_body"][1:]
        S_t = sum(v for e, v in creases(Xb, Cb).items() if 0 in e)
        s_p = 1e-3
    if r["dim"] == 3 and r["plane"] in ("grid", "alt") and r["path"] == "xmid":
        # over an edge, no vertex near: edge-edge pairs Σ_t ½(s_t + s_p) d̂² − (3 − 1)·½ s_p d̂² (the plane
        # edge against the tip) = ½ (S_t + s_p) d̂² per plane edge
        ee = 0.5 * (S_t + s_p) * dhat ** 2
        pred = 1 + ee / (0.5 * wv)
        claims.check(abs(np.max(r["e"]) - pred) < 2e-4, f"{name}: max E/E_flat = {np.max(r['e']):.6f}; over an edge "
                     f"1 + ½(S_t + s_p) d̂²/(w_v/2) = {pred:.6f} (S_t = {S_t:.4f})")
    if r["dim"] == 3 and r["plane"] == "grid" and r["path"] == "diag":
        # over a grid vertex u (6 edges, w_u = a²): pairs 6·Σ_t ½(s_t + s_p) d̂², the plane edges against the tip
        # −6·(3 − 1)·½ s_p d̂², the tip edges against u −Σ_t (6 − 1)·½ s_t d̂²: (S_t/2 + 3 s_p) d̂²; and u's own
        # vertex quadrature w_u/2
        a = 4 * dhat
        ee = (0.5 * S_t + 3 * s_p) * dhat ** 2
        pred = 1 + (ee + 0.5 * a * a) / (0.5 * wv)
        claims.check(abs(np.max(r["e"]) - pred) < 1e-6, f"{name}: max E/E_flat = {np.max(r['e']):.6f}; over a grid vertex "
                     f"1 + ((S_t/2 + 3 s_p) d̂² + a²/2)/(w_v/2) = {pred:.6f}")

# ------------------------------------------------------------------ curved surfaces
print("\n== curved surfaces (faceted circle / cylinder, probe on the arc at h above the circle): walls of the sagitta")
curved_runs = {k: r for k, r in runs.items() if r["curved"]}
if curved_runs:
    r0 = next(iter(curved_runs.values()))
    R, N, dhat, h = r0["R"], r0["nseg"], r0["dhat"], r0["h"]
    al = math.pi / N
    sag = R * (1 - math.cos(al))
    bh = b(h, dhat)
    e_out = b(h + sag, dhat) / bh  # convex: facet middle at h + s
    e_in = b(h - sag, dhat) / bh  # concave: facet middle at h - s
    e_in_v = (2 * b(h * math.cos(al), dhat) - bh) / bh  # concave vertex: edges - vertex
    e_in_vmax = b(h * math.cos(al), dhat) / bh  # what the max of b would give there
    tphi = R * math.sin(al) / math.sqrt((R + h) ** 2 - (R * math.sin(al)) ** 2)
    print(f"   N = {N}, R = {R / dhat:g} d̂, α = π/N, sagitta s = R(1 − cos α) = {sag / dhat:.6f} d̂, facet "
          f"2R sin α = {2 * R * math.sin(al) / dhat:.6f} d̂")
    print(f"   convex, facet middle: b(h + s)/b(h) = {e_out:.6f}; concave, facet middle: b(h − s)/b(h) = {e_in:.6f}; "
          f"concave vertex (convergent): (2 b(h cos α) − b(h))/b(h) = {e_in_v:.6f} (max of b: {e_in_vmax:.6f})")
    print(f"   convex, largest tangential ratio where the closest point leaves the facet for the vertex: "
          f"tan φ_t = R sin α / √((R + h)² − R² sin² α) = {tphi:.6f}")
    for name, r in curved_runs.items():
        if r["set"] not in ("ipc2020", "convergent"):
            continue
        e, th = r["e"], r["th"]
        dth = abs(th[1] - th[0])
        D = 2 * math.pi / N
        # samples over a vertex (θ = π/2 + (k + ½)Δ) and over a facet middle (θ = π/2 + kΔ)
        ph = (th - math.pi / 2) / D
        atv = np.abs(ph - np.round(ph - 0.5) - 0.5) < 1e-9
        atm = np.abs(ph - np.round(ph)) < 1e-9
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        conv, pt, out_ = r["set"] == "convergent", r["probe"] == "point", r["side"] > 0
        if conv and pt and out_:
            claims.check(abs(np.max(e) - 1) < 1e-9 and np.max(np.abs(e[atv] - 1)) < 1e-9
                         and np.max(np.abs(e[atm] - e_out)) < 1e-9 and abs(np.min(e) - e_out) < 1e-9,
                         f"{name}: E/E_ideal = 1 over the {atv.sum()} vertices (= max {np.max(e):.9f}) and "
                         f"b(h + s)/b(h) = {e_out:.6f} over the {atm.sum()} facet middles (= min {np.min(e):.9f})")
            claims.check(math.tan(math.atan(tphi) - dth) - 1e-12 <= rat <= tphi + 1e-12,
                         f"{name}: max|F_t|/|F_n| = {rat:.6f} in [tan(φ_t − δθ), tan φ_t] = "
                         f"[{math.tan(math.atan(tphi) - dth):.6f}, {tphi:.6f}] (δθ the sample spacing)")
        if conv and pt and not out_:
            claims.check(np.max(np.abs(e[atm] - e_in)) < 1e-9 and abs(np.max(e) - e_in) < 1e-9
                         and np.max(np.abs(e[atv] - e_in_v)) < 1e-9,
                         f"{name}: E/E_ideal = b(h − s)/b(h) = {e_in:.6f} over the facet middles (= max "
                         f"{np.max(e):.6f}), (2 b(h cos α) − b(h))/b(h) = {e_in_v:.6f} over the vertices")
        if not conv and pt and r["dim"] == 2:
            pv = 2.0 if out_ else 2 * b(h * math.cos(al), dhat) / bh
            claims.check(np.max(np.abs(e[atv] - pv)) < 1e-9,
                         f"{name}: over a vertex E/E_ideal = {'2' if out_ else '2 b(h cos α)/b(h)'} = {pv:.6f} "
                         f"(both segments counted)")
        if conv and not pt and out_ and r["dim"] == 2:
            pv = 1 + 2 * R * math.sin(al) / r["wv"]
            claims.check(abs(np.max(e) - pv) < 1e-6 and np.max(np.abs(e[atv] - pv)) < 1e-6
                         and np.max(np.abs(e[atm] - e_out)) < 1e-9,
                         f"{name}: max E/E_ideal = {np.max(e):.6f} = 1 + w_u/w_tip = {pv:.6f} over a vertex (w_u = "
                         f"2R sin α), b(h + s)/b(h) over a facet middle")

print("\n== imls: flat planes exact, curved surfaces below the convergent set's tangential force")
# On a sampled plane every sample has the plane's normal n and s_i = n·(x − p_i) is the same for all, so the
# (robust) weighted average ψ is exactly the distance whatever the weights: E = E_flat, F_t = 0 (any plane,
# any probe: the kinematic plane's side is not integrated). On the faceted circle and cylinder ψ is a smooth
# fit: E is not constant, but its tangential force stays below the convergent set's, whose E follows the facets.
for name, r in runs.items():
    if r["set"] != "imls":
        continue
    rat = np.max(r["ft"] / np.abs(r["fn"]))
    if not r["curved"]:
        dev = np.max(np.abs(r["e"] - 1.0))
        claims.check(dev < 1e-12 and rat < 1e-12,
                     f"{name}: max|E/E_flat - 1| = {dev:.1e}, max|F_t|/|F_n| = {rat:.1e} (< 1e-12)")
    else:
        ref = runs.get(name[: -len("imls")] + "convergent")
        rc = np.max(ref["ft"] / np.abs(ref["fn"])) if ref else math.nan
        claims.check(ref is not None and rat < rc,
                     f"{name}: max|F_t|/|F_n| = {rat:.4f} < convergent's {rc:.4f} (E_max/E_min {np.max(r['e']) / np.min(r['e']):.4f})")


# ------------------------------------------------------------------ adhesive rows
adh_runs = {k: r for k, r in runs.items() if r["adhesive"]}
if adh_runs:
    print("\n== adhesive rows (Fang et al.'s a(d): ipcadh = ipc_adhesion's convergent set, imlsadh = sticky IMLS; "
          "'-h1.5': probe at 1.5 d̂, where only a acts)")
    # e = E/E_ideal, E_ideal = the row's energy at the constant distance h from the smooth surface (negative:
    # adhesion dominates): e > 1 more adhesive than ideal, e < 1 less; F_n keeps one sign on every path.
    bad = [k for k, r in adh_runs.items() if not (r["Ef"] < 0 and np.all(r["E"] < 0)
                                                   and (np.all(r["fn"] < 0) or np.all(r["fn"] > 0)))]
    fnr = min(np.min(np.abs(r["fn"])) / np.max(np.abs(r["fn"])) for r in adh_runs.values())
    claims.check(not bad, f"all {len(adh_runs)} adhesive runs: E < 0 and F_n of one sign along every path "
                 f"(min |F_n| / max |F_n| over a path ≥ {fnr:.3f}), so E/E_ideal and |F_t|/|F_n| are well defined"
                 + (f"; fails: {bad[:4]}" if bad else ""))
    # flat planes: the point probe of ipc_adhesion (the convergent set counts the closest point once, for any
    # density) and every probe of sticky IMLS (ψ = the distance on a sampled plane): exactly the ideal
    for name, r in adh_runs.items():
        if r["curved"] or (r["set"].startswith("ipcadh") and r["probe"] != "point"):
            continue
        dev = np.max(np.abs(r["e"] - 1.0))
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        claims.check(dev < 1e-12 and rat < 1e-12,
                     f"{name}: max|E/E_ideal - 1| = {dev:.1e}, max|F_t|/|F_n| = {rat:.1e} (< 1e-12)")
    # body probe, ipc_adhesion, 2D line: above a vertex u the plane's quadrature adds (w_u/2) g(h), g = κb + a
    for name, r in adh_runs.items():
        if r["set"].startswith("ipcadh") and r["probe"] == "body" and r["dim"] == 2 and r["plane"] == "line":
            pred = 1 + 4 * r["dhat"] / r["wv"]
            claims.check(abs(np.max(r["e"]) - pred) < 1e-6,
                         f"{name}: max E/E_ideal = {np.max(r['e']):.6f} = 1 + w_u/w_tip = {pred:.6f} (as the barrier)")
    # 3D grid, body probe, ipc_adhesion at 1.5 d̂ (only a acts; the barrier-only edge–edge family is beyond d̂):
    # over a grid vertex its own quadrature adds (w_u/2) a(h), w_u = a² (the cell), plus the tails of the
    # neighbouring vertices within d̂_a of the body's faces (~1e-4)
    for name, r in adh_runs.items():
        if r["set"] == "ipcadh-h1.5" and r["probe"] == "body" and r["plane"] == "grid" and r["path"] == "diag":
            pred = 1 + (4 * r["dhat"]) ** 2 / r["wv"]
            claims.check(abs(np.max(r["e"]) - pred) < 5e-4,
                         f"{name}: max E/E_ideal = {np.max(r['e']):.6f} = 1 + a²/w_tip = {pred:.6f} (to the tails "
                         f"of the neighbouring vertices, < 5e-4)")
    # curved, ipc_adhesion point probe: the barrier's closed forms with g = κb + a in place of b
    for name, r in adh_runs.items():
        if not (r["curved"] and r["set"].startswith("ipcadh")):
            continue
        R, N, dhat, h = r["R"], r["nseg"], r["dhat"], r["h"]
        gfun, _ = density(r["kappa"], dhat, r["law"])
        gg = lambda d: float(gfun(np.array(d)))  # noqa: E731
        al = math.pi / N
        sag = R * (1 - math.cos(al))
        D = 2 * math.pi / N
        e, th = r["e"], r["th"]
        ph = (th - math.pi / 2) / D
        atv = np.abs(ph - np.round(ph - 0.5) - 0.5) < 1e-9
        atm = np.abs(ph - np.round(ph)) < 1e-9
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        dth = abs(th[1] - th[0])
        if r["probe"] == "point" and r["side"] > 0:
            em = gg(h + sag) / gg(h)
            tphi = R * math.sin(al) / math.sqrt((R + h) ** 2 - (R * math.sin(al)) ** 2)
            claims.check(abs(np.max(e) - 1) < 1e-9 and np.max(np.abs(e[atv] - 1)) < 1e-9
                         and np.max(np.abs(e[atm] - em)) < 1e-9 and abs(np.min(e) - em) < 1e-9
                         and math.tan(math.atan(tphi) - dth) - 1e-12 <= rat <= tphi + 1e-12,
                         f"{name}: E/E_ideal = 1 over the vertices (max), g(h + s)/g(h) = {em:.6f} over the facet "
                         f"middles (min); max|F_t|/|F_n| = {rat:.6f} ≤ tan φ_t = {tphi:.6f}")
        if r["probe"] == "point" and r["side"] < 0:
            em, ev = gg(h - sag) / gg(h), (2 * gg(h * math.cos(al)) - gg(h)) / gg(h)
            claims.check(np.max(np.abs(e[atm] - em)) < 1e-9 and abs(np.max(e) - em) < 1e-9
                         and np.max(np.abs(e[atv] - ev)) < 1e-9,
                         f"{name}: E/E_ideal = g(h − s)/g(h) = {em:.6f} over the facet middles (max), "
                         f"(2 g(h cos α) − g(h))/g(h) = {ev:.6f} over the vertices")
    # sticky IMLS at 0.5 d̂ is the imls row's field with a(ψ) added: ψ recovered from the imls row's
    # E = w κ b(ψ) (b decreasing on (0, d̂): bisection) predicts E = w (κ b(ψ) + a(ψ)) of the imlsadh row
    worst = 0.0
    nchk = 0
    for name, r in adh_runs.items():
        ref = runs.get(name.replace("_imlsadh", "_imls")) if r["set"] == "imlsadh" else None
        if ref is None or (len(ref["E"]) - 1) % (len(r["E"]) - 1):
            continue
        Eref = ref["E"][::(len(ref["E"]) - 1) // (len(r["E"]) - 1)]  # QUICK: the adhesive rows' every 5th sample
        w, kap, dh = ref["wv"], ref["kappa"], ref["dhat"]
        lo, hi = np.full(len(Eref), 1e-9 * dh), np.full(len(Eref), dh)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            big = w * kap * bar(mid, dh) > Eref
            lo, hi = np.where(big, mid, lo), np.where(big, hi, mid)
        psi = 0.5 * (lo + hi)
        pred = w * (kap * bar(psi, dh) + adh(psi, *r["law"]))
        worst = max(worst, np.max(np.abs(r["E"] - pred)) / abs(r["Ef"]))
        nchk += 1
    if nchk:
        claims.check(worst < 1e-9, f"{nchk} imlsadh runs at h = 0.5 d̂: E = w (κ b(ψ) + a(ψ)) with ψ from the imls row's "
                     f"E = w κ b(ψ), to {worst:.1e} |E_ideal| (< 1e-9): the same field, a(ψ) added")
    # curved: sticky IMLS's largest tangential ratio against ipc_adhesion's, same surface, probe, path, height
    print("   curved surfaces: max|F_t|/|F_n| of imlsadh against ipcadh (same surface, probe, path and height)")
    for name, r in adh_runs.items():
        if not (r["curved"] and r["set"].startswith("imlsadh")):
            continue
        ref = runs.get(name.replace("_imlsadh", "_ipcadh"))
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        rc = np.max(ref["ft"] / np.abs(ref["fn"])) if ref else math.nan
        claims.check(ref is not None and rat < rc, f"{name}: max|F_t|/|F_n| = {rat:.4f} < ipc_adhesion's {rc:.4f}")


# ------------------------------------------------------------------ tables
def walls(r):
    e, ds = r["E"], r["s"][1] - r["s"][0]
    i = np.nonzero((e[1:-1] > e[:-2]) & (e[1:-1] >= e[2:]))[0] + 1
    w = int(math.ceil(r["dhat"] / ds))  # ±d̂ neighbourhood, as in the driver
    i = [j for j in i if e[j] - np.min(e[max(0, j - w):j + w + 1]) > 1e-6 * abs(r["Ef"])]
    onv = sum(r["dv"][j] <= ds for j in i)
    one = sum(r["de"][j] <= ds and r["dv"][j] > ds for j in i)
    return len(i), onv, one


print("\n| run | E_max/E_flat | E_min/E_flat | max abs(F_t)/abs(F_n) | walls (on vertex / on edge / elsewhere) |")
print("|---|---|---|---|---|")
with open(os.path.join(out, "energy_wall_summary.txt"), "w") as f:
    f.write("# run Emax/Eflat Emin/Eflat max|Ft|/|Fn| walls on_vertex on_edge  (curved: E_flat = E_ideal)\n")
    for name, r in runs.items():
        if r["adhesive"]:
            continue
        nw, onv, one = walls(r)
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        if not r["curved"]:
            print(f"| {name} | {np.max(r['e']):.5f} | {np.min(r['e']):.5f} | {rat:.3g} | {nw} ({onv}/{one}/{nw - onv - one}) |")
        f.write(f"{name} {np.max(r['e']):.9g} {np.min(r['e']):.9g} {rat:.6g} {nw} {onv} {one}\n")
if curved_runs:
    print("\ncurved surfaces (E_ideal = E_flat: the row's energy at the constant distance h from the smooth surface):")
    print("\n| run | E_max/E_ideal | E_min/E_ideal | E_max/E_min | max abs(F_t)/abs(F_n) | walls (on vertex / on edge / elsewhere) |")
    print("|---|---|---|---|---|---|")
    for name, r in curved_runs.items():
        if r["adhesive"]:
            continue
        nw, onv, one = walls(r)
        rat = np.max(r["ft"] / np.abs(r["fn"]))
        print(f"| {name} | {np.max(r['e']):.5f} | {np.min(r['e']):.5f} | {np.max(r['e']) / np.min(r['e']):.4f} | "
              f"{rat:.3g} | {nw} ({onv}/{one}/{nw - onv - one}) |")
if adh_runs:
    print("\nadhesive rows (E_ideal = the row's energy at the constant distance h from the plane / smooth surface, "
          "negative; e = E/E_ideal: 1 ideal, > 1 more adhesive, < 1 less; E_max/E_min on |E| = e_max/e_min; walls: "
          "local maxima of E, i.e. of least adhesion):")
    print("\n| run | e_max | e_min | abs(E)_max/abs(E)_min | max abs(F_t)/abs(F_n) | walls (on vertex / on edge / elsewhere) |")
    print("|---|---|---|---|---|---|")
    with open(os.path.join(out, "energy_wall_adhesion_summary.txt"), "w") as f:
        f.write("# run e_max e_min max|Ft|/|Fn| walls on_vertex on_edge  (e = E/E_ideal, E_ideal < 0)\n")
        for name, r in adh_runs.items():
            nw, onv, one = walls(r)
            rat = np.max(r["ft"] / np.abs(r["fn"]))
            print(f"| {name} | {np.max(r['e']):.5f} | {np.min(r['e']):.5f} | {np.max(r['e']) / np.min(r['e']):.4f} | "
                  f"{rat:.3g} | {nw} ({onv}/{one}/{nw - onv - one}) |")
            f.write(f"{name} {np.max(r['e']):.9g} {np.min(r['e']):.9g} {rat:.6g} {nw} {onv} {one}\n")
    print("\nthe same side by side (e range e_min–e_max and max abs(F_t)/abs(F_n); flat point probes and every flat "
          "imlsadh run: e = 1 and F_t = 0 to round-off, checked above):")
    print("\n| surface, probe, path | h/d̂ | ipcadh e | ipcadh F_t/F_n | imlsadh e | imlsadh F_t/F_n |")
    print("|---|---|---|---|---|---|")
    for name, r in sorted(adh_runs.items(), key=lambda kv: (kv[0].rsplit("_", 1)[0], kv[1]["h"])):
        if not r["set"].startswith("ipcadh") or (not r["curved"] and r["probe"] == "point"):
            continue
        q = runs.get(name.replace("_ipcadh", "_imlsadh"))
        cell = [f"{np.min(x['e']):.4f}–{np.max(x['e']):.4f} | {np.max(x['ft'] / np.abs(x['fn'])):.3g}" if x else "– | –"
                for x in (r, q)]
        print(f"| {name.rsplit('_', 1)[0]} | {r['h'] / r['dhat']:g} | {cell[0]} | {cell[1]} |")

# ------------------------------------------------------------------ figure
plt = None if args.no_plot else figures.pyplot()
if plt:
    cols = [("3d_grid", "diag", "3D grid, diagonal through vertices"), ("3d_grid", "xmid", "3D grid, along x"),
            ("3d_jitter", "xmid", "3D jittered, along x"), ("2d_line", "x", "2D segmented line")]
    fig, ax = plt.subplots(2, len(cols), figsize=(4.2 * len(cols), 6.5), sharex="col")
    style = {("point", "ipc2020"): ("C1", "-"), ("point", "convergent"): ("C0", "-"),
             ("body", "ipc2020"): ("C1", ":"), ("body", "convergent"): ("C0", ":")}
    for c, (pl, pa, title) in enumerate(cols):
        for (probe, st), (colr, ls) in style.items():
            key = f"{pl}_{probe}_{pa}_{st}"
            if key not in runs:
                continue
            r = runs[key]
            x = r["s"] / r["dhat"]
            ax[0, c].plot(x, r["e"], color=colr, ls=ls, lw=1.2, label=f"{st}, {probe}")
            ax[1, c].plot(x, r["ftp"] / np.abs(r["fn"]), color=colr, ls=ls, lw=1.2)
        ax[0, c].set_title(title, fontsize=10)
        ax[0, c].set_yscale("log")
        ax[1, c].set_xlabel("position along the path s / d̂")
    ax[0, 0].set_ylabel("E / E_flat")
    ax[1, 0].set_ylabel("F_t (along path) / |F_n|")
    ax[0, 0].legend(fontsize=8)
    fig.suptitle("energy walls: vertex at 0.5 d̂ over a flat plane (Du et al. 2023 Fig. 3), model ipc", fontsize=11)
    print()
    figures.save(fig, out, "energy_wall.png", dpi=110)
    cols = [("2d_circle", "arc", "2D faceted circle, outside"), ("2d_circlein", "arc", "2D faceted circle, inside"),
            ("3d_cyl", "mid", "3D faceted cylinder, outside (mid)"), ("3d_cylin", "mid", "3D faceted cylinder, inside (mid)")]
    cols = [c for c in cols if f"{c[0]}_point_{c[1]}_convergent" in runs]
    if cols:
        fig, ax = plt.subplots(2, len(cols), figsize=(4.2 * len(cols), 6.5), sharex="col", squeeze=False)
        for c, (pl, pa, title) in enumerate(cols):
            for (probe, st), (colr, ls) in style.items():
                key = f"{pl}_{probe}_{pa}_{st}"
                if key not in runs:
                    continue
                r = runs[key]
                x = np.degrees(r["th"] - math.pi / 2)
                ax[0, c].plot(x, r["e"], color=colr, ls=ls, lw=1.2, label=f"{st}, {probe}")
                ax[1, c].plot(x, r["ftp"] / np.abs(r["fn"]), color=colr, ls=ls, lw=1.2)
            for k in range(-2, 2):  # the polygon's vertices
                for a_ in ax[:, c]:
                    a_.axvline(np.degrees((k + 0.5) * 2 * math.pi / N), color="0.8", lw=0.6, zorder=0)
            ax[0, c].set_title(title, fontsize=10)
            ax[0, c].set_yscale("log")
            ax[1, c].set_xlabel("angle from the top θ − 90° (grey: polygon vertices)")
        ax[0, 0].set_ylabel("E / E_ideal")
        ax[1, 0].set_ylabel("F_t (along path) / |F_n|")
        ax[0, 0].legend(fontsize=8)
        fig.suptitle(f"energy walls on a curved surface: {N}-gon in R = {R / dhat:g} d̂, probe at h = 0.5 d̂ above the "
                     f"circle, model ipc", fontsize=11)
        figures.save(fig, out, "energy_wall_curved.png", dpi=110)
    cols = [("2d_circle_point", "arc", "2D circle, outside, point"), ("3d_cylin_point", "mid", "3D cylinder, inside, point"),
            ("2d_line_body", "x", "2D line, body"), ("3d_grid_body", "diag", "3D grid, body, diagonal")]
    cols = [c for c in cols if f"{c[0]}_{c[1]}_ipcadh" in runs]
    if cols:
        fig, ax = plt.subplots(2, len(cols), figsize=(4.2 * len(cols), 6.5), sharex="col", squeeze=False)
        style = {"ipcadh": ("C0", "-"), "ipcadh-h1.5": ("C0", ":"), "imlsadh": ("C2", "-"), "imlsadh-h1.5": ("C2", ":")}
        for c, (pre, pa, title) in enumerate(cols):
            for st, (colr, ls) in style.items():
                r = runs.get(f"{pre}_{pa}_{st}")
                if r is None:
                    continue
                x = r["s"] / r["dhat"]
                lab = f"{'ipc_adhesion' if st.startswith('ipc') else 'sticky imls'}, h = {r['h'] / r['dhat']:g} d̂"
                ax[0, c].plot(x, r["e"], color=colr, ls=ls, lw=1.2, label=lab)
                ax[1, c].plot(x, r["ftp"] / np.abs(r["fn"]), color=colr, ls=ls, lw=1.2)
            ax[0, c].set_title(title, fontsize=10)
            ax[1, c].set_xlabel("position along the path s / d̂")
        ax[0, 0].set_ylabel("E / E_ideal (E_ideal < 0)")
        ax[1, 0].set_ylabel("F_t (along path) / |F_n|")
        ax[0, 0].legend(fontsize=8)
        fig.suptitle("adhesive potential (Fang et al. a(d), Yε_c = 20 κ): barrier + adhesion at 0.5 d̂, adhesion alone "
                     "at 1.5 d̂", fontsize=11)
        figures.save(fig, out, "energy_wall_adhesion.png", dpi=110)
sys.exit(claims.summary())
