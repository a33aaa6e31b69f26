#!/usr/bin/env python3
"""gallery.py — docs/gallery.md: every experiment's scene with one picture and one line (issue 18).

    scripts/gallery.py [--bin PATH] [--only NAME]    run, draw and write docs/gallery.md + docs/gallery/*.png
    scripts/gallery.py --check                       is the gallery up to date? (nothing is run; exit 1 if not)

Every scene experiments/<name>/<scene>.json with a top-level "description" (one line, docs/scenes.md) is an
entry, sorted by experiment, then scene file. Each is run for one step,

    contactlab run SCENE --steps 1 -o TMP.h5 --threads 1 --quiet --set output.frames_every=1

and its first frame (t = 0, the initial configuration) is drawn to docs/gallery/<experiment>__<scene>.png
(about 480 x 320 px): 2D, the bodies' boundary edges (one colour per body, as scripts/animate.py) over a light
fill of their triangles, springs dashed, half-spaces as a thick grey line hatched on the solid side, and a
zoomed inset of each body smaller than 3 % of the scene (at most two); 3D, a perspective view of the bodies'
surface triangles (one colour per body, shaded by their normals), equal aspect, with the half-spaces as
translucent grey rectangles sized to the scene's bounding box, the camera on the free side of every
half-space (CAMERA: a fixed camera for a scene).
Experiments with no scene of their own are listed from the table EXTRA below (a C driver that builds its
scene, or a folder that reuses another experiment's scene).

The binary: --bin PATH, else $CT_BUILD/contactlab (CT_BUILD relative to the repository root, as
experiments/common.sh), else build/contactlab; the C drivers are found under the same build folder
(experiments/<name>/<prog>). --only NAME redraws one experiment's pictures (docs/gallery.md is always
rewritten whole: it depends on the scene files only).

--check (fast: reads the scene files, docs/gallery.md and the file names under docs/gallery/, runs nothing)
exits 1 when a scene with a description has no picture or no entry, when docs/gallery.md differs from what
this script writes (an entry whose description changed, a scene that lost its description or is gone, a
picture whose geometry changed: each entry records a fingerprint of the scene's dim, bodies' meshes (and
the mesh files they read), obstacles and initial state), or when docs/gallery/ has a picture of no entry.
Needs python3-h5py, python3-numpy, python3-matplotlib (not for --check).
"""
import argparse
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "python"))

DOCS = os.path.join(ROOT, "docs")
MD = os.path.join(DOCS, "gallery.md")
PNG_DIR = os.path.join(DOCS, "gallery")
RUN_CMD = "contactlab run SCENE --steps 1 -o TMP.h5 --threads 1 --quiet --set output.frames_every=1"
# the colours of scripts/animate.py, then the rest of matplotlib's tab10
COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f"]
SIZE_IN, DPI = (6.0, 4.0), 80  # 480 x 320 px
ZOOM = 0.9  # of the 3D axes box (1: the default; less leaves room for the axis labels)

# Experiments without a scene file of their own (a C driver that builds its scene, or a run.sh that reuses
# another experiment's scene with --set overrides): experiment -> file (what the entry links to), heading (a
# remark after the file name), description (the one line), note (markdown), draw (the name of a function
# (plt, binary, entry, tmpdir) -> (figure, summary) that draws the picture, or None: no picture). An
# experiment that has a scene with a description is listed from that instead.
EXTRA = {
    "energy_wall": {
        "file": "energy_wall.c",
        "heading": "C driver",
        "description": "A vertex moved at constant height over flat and faceted surfaces: IPC's energy walls "
                       "(Du et al. 2023 Fig. 3)",
        "note": "No scene file: the C driver `energy_wall.c` builds its planes, faceted circles and cylinders and "
                "the probes itself and calls the models directly. The picture is drawn from the driver's own "
                "output (`energy_wall OUTDIR --quick`): the flat `grid` plane (`3d_grid.mesh`), the probe "
                "body (`3d_body.mesh`) with its tip at h = 0.5 d̂ at the start of the path `xnear`, and the "
                "three 3D paths (dashed).",
        "draw": "draw_energy_wall",
    },
    "annulus_inverse": {
        "file": "run.sh",
        "heading": "reuses annulus_forward.json",
        "description": "Steer B so that A reaches a target angle on the annulus: gradient descent on "
                       "sensitivities (Du et al. 2023 Fig. 7)",
        "note": "No scene file: `run.sh` reuses "
                "[annulus_forward.json](../experiments/annulus_forward/annulus_forward.json) (picture: "
                "[annulus_forward](#annulus_forward-annulus_forwardjson)) with `--set` overrides, one "
                "`contactlab sensitivity` run per gradient step.",
        "draw": None,
    },
}
# Camera (elevation, azimuth in degrees, matplotlib's, with the scene's vertical axis up) where the automatic
# choice hides what matters: the incline's tilt is seen from along z.
CAMERA = {"incline_3d/incline.json": (15, 20)}
SKIP_EXPERIMENTS = set()  # experiments never listed (none: model_matrix enters once its scenes have descriptions)


# ---------------------------------------------------------------------------------------------------------
# Entries (no numpy / matplotlib here: --check uses only this part)

def _fingerprint(scene, scene_dir):
    """A short hash of what the picture shows: dim, the bodies' names and meshes (with the bytes of the
    mesh files they read), obstacles and initial state."""
    h = hashlib.sha1()
    bodies = [{"name": b.get("name"), "mesh": b.get("mesh"), "dofs": b.get("dofs")} for b in scene.get("bodies", [])]
    key = {"dim": scene.get("dim"), "bodies": bodies, "obstacles": scene.get("obstacles"),
           "initial_state": scene.get("initial_state")}
    h.update(json.dumps(key, sort_keys=True).encode())
    for b in scene.get("bodies", []):
        for m in (b.get("mesh"), (b.get("dofs") or {}).get("coarse")):
            if isinstance(m, dict) and isinstance(m.get("file"), str):
                try:
                    with open(os.path.join(scene_dir, m["file"]), "rb") as f:
                        h.update(f.read())
                except OSError:
                    h.update(b"missing:" + m["file"].encode())
    return h.hexdigest()[:12]


def entries():
    """Every gallery entry, sorted by experiment, then file: dicts with exp, file, kind ("scene" or "extra"),
    description, png (file name under docs/gallery, or None), note, fingerprint."""
    out, described = [], set()
    exp_root = os.path.join(ROOT, "experiments")
    for exp in sorted(os.listdir(exp_root)):
        d = os.path.join(exp_root, exp)
        if not os.path.isdir(d) or exp in SKIP_EXPERIMENTS:
            continue
        for fn in sorted(os.listdir(d)):
            if not fn.endswith(".json"):
                continue
            try:
                with open(os.path.join(d, fn), encoding="utf-8") as f:
                    scene = json.load(f)
            except (OSError, ValueError):
                continue  # not a scene (or broken: contactlab check says so)
            if not isinstance(scene, dict) or not isinstance(scene.get("description"), str):
                continue
            described.add(exp)
            stem = fn[:-len(".json")]
            out.append({"exp": exp, "file": fn, "kind": "scene", "description": scene["description"].strip(),
                        "png": f"{exp}__{stem}.png", "note": None, "fingerprint": _fingerprint(scene, d)})
    for exp, x in EXTRA.items():
        if exp in described or not os.path.isdir(os.path.join(exp_root, exp)):
            continue
        stem = os.path.splitext(x["file"])[0]
        out.append({"exp": exp, "file": x["file"], "kind": "extra", "description": x["description"],
                    "png": f"{exp}__{stem}.png" if x["draw"] else None, "note": x["note"],
                    "fingerprint": "extra"})
    out.sort(key=lambda e: (e["exp"], e["file"]))
    return out


def undescribed():
    """Experiment folders with neither a described scene nor an EXTRA entry."""
    have = {e["exp"] for e in entries()}
    exp_root = os.path.join(ROOT, "experiments")
    return [e for e in sorted(os.listdir(exp_root))
            if os.path.isdir(os.path.join(exp_root, e)) and e not in have and e not in SKIP_EXPERIMENTS]


def heading(e):
    extra = EXTRA[e["exp"]].get("heading") if e["kind"] == "extra" else None
    return f"{e['exp']}: {e['file']}" + (f" ({extra})" if extra else "")


def anchor(text):
    """GitHub's heading anchor: lower case, punctuation other than - and _ dropped, spaces to -."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def markdown(ents):
    """The text of docs/gallery.md for these entries."""
    L = ["# Scene gallery", "",
         "<!-- generated by scripts/gallery.py (make gallery); do not edit: `scripts/gallery.py --check` fails when "
         "it is stale -->", "",
         "Each experiment's scene in its initial configuration, with one line on what it shows (the scene's "
         "`\"description\"`, docs/scenes.md). Made by `scripts/gallery.py` (`make gallery`): every scene "
         "`experiments/*/*.json` that has a description is run for one step, "
         f"`{RUN_CMD}`, and its first frame (t = 0) is drawn to `docs/gallery/<experiment>__<scene>.png`; "
         "`scripts/gallery.py --only NAME` redraws one experiment, `scripts/gallery.py --check` tells whether "
         "this page is up to date (after a scene's description or geometry changed, or a scene got a "
         "description). 2D: the bodies' boundary edges, one colour per body, half-spaces as a grey line hatched "
         "on the solid side; 3D: the bodies' surface triangles in perspective, half-spaces as translucent grey "
         "rectangles. Experiments without a scene file of their own are listed with a note.", "",
         f"## Index ({len(ents)} entries)", ""]
    seen = {}
    anchors = []
    for e in ents:
        a = anchor(heading(e))
        n = seen.get(a, 0)
        seen[a] = n + 1
        anchors.append(a if n == 0 else f"{a}-{n}")
    for e, a in zip(ents, anchors):
        L.append(f"- [{heading(e)}](#{a})")
    L += ["", "## Entries", ""]
    for e in ents:
        L.append(entry_markdown(e))
    return "\n".join(L)


def entry_markdown(e):
    """One entry's section of docs/gallery.md."""
    exp_rel = f"../experiments/{e['exp']}"
    L = [f"### {heading(e)}", ""]
    if e["png"]:
        L += [f"![{e['exp']}: {e['file']}](gallery/{e['png']})", ""]
    L += [e["description"], ""]
    if e["note"]:
        L += [e["note"], ""]
    what = "driver" if e["file"].endswith(".c") else "scene" if e["kind"] == "scene" else "script"
    L += [f"[{what}: experiments/{e['exp']}/{e['file']}]({exp_rel}/{e['file']}) · "
          f"[README]({exp_rel}/README.md)", "",
          f"<!-- gallery entry {e['exp']}/{e['file']} {e['fingerprint']} -->", ""]
    return "\n".join(L)


ENTRY_RE = re.compile(r"<!-- gallery entry (\S+) (\S+) -->")


def check(ents):
    """The problems of the gallery as it is on disk (a list of strings; empty: up to date)."""
    problems = []
    for e in ents:
        if e["png"] and not os.path.isfile(os.path.join(PNG_DIR, e["png"])):
            problems.append(f"{e['exp']}/{e['file']}: no picture docs/gallery/{e['png']}")
    try:
        with open(MD, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return problems + ["docs/gallery.md is missing"]
    have = dict(ENTRY_RE.findall(text))
    want = {f"{e['exp']}/{e['file']}": e["fingerprint"] for e in ents}
    for e in ents:
        k, fp = f"{e['exp']}/{e['file']}", e["fingerprint"]
        if k not in have:
            problems.append(f"{k}: no entry in docs/gallery.md")
        elif have[k] != fp:
            problems.append(f"{k}: stale picture (the scene's geometry changed since it was drawn)")
        elif entry_markdown(e) not in text:
            problems.append(f"{k}: stale entry in docs/gallery.md (its description changed)")
    for k in have:
        if k not in want:
            problems.append(f"{k}: stale entry in docs/gallery.md (no such scene with a description)")
    if not problems and text != markdown(ents):
        problems.append("docs/gallery.md differs from what scripts/gallery.py writes")
    pngs = {e["png"] for e in ents if e["png"]}
    if os.path.isdir(PNG_DIR):
        for fn in sorted(os.listdir(PNG_DIR)):
            if fn.endswith(".png") and fn not in pngs:
                problems.append(f"docs/gallery/{fn}: stale picture (no entry)")
    return problems


# ---------------------------------------------------------------------------------------------------------
# Drawing

def _unit(v):
    import numpy as np
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def _halfspaces(scene):
    """[(point, unit outward normal)] of the scene's half-spaces (the normal points into the free side)."""
    import numpy as np
    return [(np.asarray(o["point"], float), _unit(o["normal"])) for o in scene.get("obstacles", []) or []
            if o.get("type", "halfspace") == "halfspace"]


def _clip(poly, p, n):
    """The part of polygon poly (k x 2) with (x − p)·n <= 0 (Sutherland–Hodgman, one plane)."""
    import numpy as np
    out = []
    k = len(poly)
    for i in range(k):
        a, b = poly[i], poly[(i + 1) % k]
        da, db = (a - p) @ n, (b - p) @ n
        if da <= 0:
            out.append(a)
        if (da < 0 < db) or (db < 0 < da):
            out.append(a + (b - a) * (da / (da - db)))
    return np.array(out)


def _shade(colour, normals, light):
    """RGBA per face: the body colour times 0.55 + 0.45 |n·l|."""
    import numpy as np
    from matplotlib.colors import to_rgb
    c = np.array(to_rgb(colour))
    k = 0.55 + 0.45 * np.abs(normals @ light)
    rgb = np.clip(c[None, :] * k[:, None], 0, 1)
    return np.hstack([rgb, np.ones((len(rgb), 1))])


def _title(ax, text):
    ax.set_title(text, fontsize=8, pad=2)


def _springs(scene, body):
    """[(i, j)]: the global vertex indices of the scene's springs given by body and vertex index."""
    import numpy as np
    names = [b.get("name") for b in scene.get("bodies", [])]
    out = []
    for sp in scene.get("springs", []) or []:
        ends = []
        for end in (sp.get("a", {}), sp.get("b", {})):
            b, v = end.get("body"), end.get("vertex")
            b = names.index(b) if isinstance(b, str) and b in names else b
            idx = np.flatnonzero(body == b) if isinstance(b, int) else []
            if not isinstance(v, int) or v >= len(idx):
                break
            ends.append(int(idx[v]))
        if len(ends) == 2:
            out.append(tuple(ends))
    return out


def _draw_2d_bodies(ax, x, mesh, hs, springs, lo, hi, lw):
    """Bodies (a light fill of their triangles, their boundary edges), springs and half-spaces, in the
    window lo..hi."""
    import numpy as np
    from matplotlib.collections import LineCollection, PolyCollection
    from matplotlib.patches import Polygon

    body = mesh["vertex_body"].astype(int)
    edges = mesh["surface_edges"].astype(int)
    el = mesh.get("elements")
    if el is not None and el.ndim == 2 and el.shape[1] == 3 and len(el):
        el = el.astype(int)
        ax.add_collection(PolyCollection(x[el], facecolors=[COLOURS[b % len(COLOURS)] for b in body[el[:, 0]]],
                                         edgecolors="none", alpha=0.18))
    ax.add_collection(LineCollection(x[edges], linewidths=lw,
                                     colors=[COLOURS[b % len(COLOURS)] for b in body[edges[:, 0]]]))
    if springs:
        ax.add_collection(LineCollection([x[[a, b]] for a, b in springs], linewidths=0.6 * lw, colors="k",
                                         linestyles="--"))
    w = (hi - lo).max()
    big = np.array([[lo[0] - w, lo[1] - w], [hi[0] + w, lo[1] - w], [hi[0] + w, hi[1] + w], [lo[0] - w, hi[1] + w]])
    c = 0.5 * (lo + hi)
    for p, n in hs:
        solid = _clip(big, p, n)
        if len(solid) >= 3:
            ax.add_patch(Polygon(solid, closed=True, facecolor="none", edgecolor="0.6", hatch="///", lw=0))
        q = c - ((c - p) @ n) * n
        t = 4 * w * np.array([-n[1], n[0]])
        ax.plot([q[0] - t[0], q[0] + t[0]], [q[1] - t[1], q[1] + t[1]], color="0.45", lw=3 * lw,
                solid_capstyle="butt")
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_aspect("equal")


def draw_2d(plt, x, mesh, scene, title):
    """The 2D picture; a body smaller than 3 % of the scene gets a zoomed inset (at most two), placed
    where the main view has the fewest vertices."""
    import numpy as np

    body = mesh["vertex_body"].astype(int)
    lo, hi = x.min(axis=0), x.max(axis=0)
    span = max((hi - lo).max(), 1e-12)
    pad = 0.08 * span
    hs = _halfspaces(scene)
    springs = _springs(scene, body)
    pts = [lo, hi]
    c = 0.5 * (lo + hi)
    for p, n in hs:  # the plane's foot under the bodies' centre and a band of the solid side
        q = c - ((c - p) @ n) * n
        pts += [q, q - 1.5 * pad * n]
    pts = np.array(pts)
    lo, hi = pts.min(axis=0) - pad, pts.max(axis=0) + pad
    w, h = hi - lo  # widen the shorter side to the axes' shape (about 3:2): the picture is filled
    if w < 1.5 * h:
        lo[0], hi[0] = lo[0] - (1.5 * h - w) / 2, hi[0] + (1.5 * h - w) / 2
    else:
        lo[1], hi[1] = lo[1] - (w / 1.5 - h) / 2, hi[1] + (w / 1.5 - h) / 2

    fig, ax = plt.subplots(figsize=SIZE_IN)
    _draw_2d_bodies(ax, x, mesh, hs, springs, lo, hi, 1.0)
    ax.set_xlabel("$x$ (m)", fontsize=8)
    ax.set_ylabel("$y$ (m)", fontsize=8)
    ax.tick_params(labelsize=7)
    _title(ax, title)

    tiny = []
    for b in np.unique(body):
        xb = x[body == b]
        size = (xb.max(axis=0) - xb.min(axis=0)).max()
        if size < 0.03 * span:
            tiny.append((b, xb.min(axis=0), xb.max(axis=0), size))
    slots = [(0.03, 0.56), (0.63, 0.56), (0.03, 0.04), (0.63, 0.04)]  # lower-left corners, axes fraction
    iw, ih = 0.34, 0.40
    for b, blo, bhi, size in tiny[:2]:
        def crowd(sl):
            a0 = lo + np.array(sl) * (hi - lo)
            a1 = a0 + np.array([iw, ih]) * (hi - lo)
            return np.count_nonzero(np.all((x >= a0) & (x <= a1), axis=1))
        sl = min(slots, key=crowd)
        slots.remove(sl)
        cb = 0.5 * (blo + bhi)
        half = 1.5 * size * np.array([1.3, 1.0])  # about the inset's shape
        ins = ax.inset_axes([sl[0], sl[1], iw, ih])
        _draw_2d_bodies(ins, x, mesh, hs, springs, cb - half, cb + half, 0.8)
        ins.set_xticks([])
        ins.set_yticks([])
        names = [bb.get("name", str(k)) for k, bb in enumerate(scene.get("bodies", []))]
        ins.set_title(f"{names[b] if b < len(names) else b} (zoomed)", fontsize=6, pad=1)
        ax.indicate_inset_zoom(ins, edgecolor="0.3")
    fig.tight_layout(pad=0.4)
    return fig


def _camera(hs, elev0=30):
    """(elev, azim) of a camera on the free side of every half-space (normals in display coordinates, z up),
    as near (elev0, −60°) (matplotlib's default: 30°) as that allows."""
    import numpy as np
    cands = [(e, a) for e in (30, 15, 20, 40, 50, -15, -20, -35) for a in range(-180, 180, 15)]

    def score(ea):
        e, a = np.radians(ea[0]), np.radians(ea[1])
        eye = np.array([np.cos(e) * np.cos(a), np.cos(e) * np.sin(a), np.sin(e)])
        return min((eye @ n for _, n in hs), default=1.0)

    ok = [ea for ea in cands if score(ea) >= 0.25] or [max(cands, key=score)]
    return min(ok, key=lambda ea: abs(ea[0] - elev0) / 10 + abs(((ea[1] + 60 + 180) % 360) - 180) / 15)


def draw_3d(plt, x, faces, face_body, hs, title, up=1, lines=(), camera=None):
    """x (n x 3), faces (m x 3) with the body of each, half-spaces [(p, n)], extra dashed polylines; up:
    the index of the vertical axis (1: y, 2: z). Drawn with the vertical axis as matplotlib's z: the axes
    are permuted cyclically (a rotation, not a mirror), (z, x, y) for up = y."""
    import numpy as np
    from matplotlib.ticker import MaxNLocator
    from mpl_toolkits.mplot3d.art3d import Poly3DCollection

    perm = [2, 0, 1] if up == 1 else [0, 1, 2]
    x = np.asarray(x, float)[:, perm]
    hs = [(p[perm], n[perm]) for p, n in hs]
    lines = [np.asarray(ln, float)[:, perm] for ln in lines]
    names = ["xyz"[k] for k in perm]

    lo, hi = x.min(axis=0), x.max(axis=0)
    span = max((hi - lo).max(), 1e-12)
    c = 0.5 * (lo + hi)
    feet = [c - ((c - p) @ n) * n for p, n in hs]  # each plane's foot under the bodies' centre
    if feet:  # the patches cover the bodies and reach each other (a wall meets the floor)
        lo, hi = np.minimum(lo, np.min(feet, axis=0)), np.maximum(hi, np.max(feet, axis=0))
    corners = np.array([[a, b, d] for a in (lo[0], hi[0]) for b in (lo[1], hi[1]) for d in (lo[2], hi[2])])
    patches = []
    for (p, n), q in zip(hs, feet):
        e = np.eye(3)[np.argmin(np.abs(n))]
        u = _unit(np.cross(n, e))
        v = np.cross(n, u)
        cu, cv = (corners - q) @ u, (corners - q) @ v
        m = 0.12 * span
        ru = (cu.min() - m, cu.max() + m)
        rv = (cv.min() - m, cv.max() + m)
        patches.append(np.array([q + a * u + b * v for a, b in ((ru[0], rv[0]), (ru[1], rv[0]),
                                                               (ru[1], rv[1]), (ru[0], rv[1]))]))
    allp = np.vstack([x] + patches + lines)
    lo, hi = allp.min(axis=0), allp.max(axis=0)
    rng = np.maximum(hi - lo, 1e-3 * span)
    mid = 0.5 * (lo + hi)
    lo, hi = mid - 0.5 * rng, mid + 0.5 * rng

    fig = plt.figure(figsize=SIZE_IN)
    ax = fig.add_subplot(projection="3d", computed_zorder=False)
    flat = rng[2] < 0.15 * rng[:2].max()
    elev, azim = camera or _camera(hs, 15 if flat else 30)  # a flat scene from lower down
    ax.view_init(elev=elev, azim=azim)
    for P in patches:  # drawn first: the camera is on their free side, the bodies in front
        ax.add_collection3d(Poly3DCollection([P], facecolors=[(0.5, 0.5, 0.5, 0.28)], edgecolors=["0.35"],
                                             linewidths=1.5))
    tri = x[faces]
    nrm = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    nrm /= np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-300)
    lt = _unit([0.45, 0.3, 0.9])  # from above, a little to the side
    fc = np.zeros((len(faces), 4))
    for b in np.unique(face_body):
        sel = face_body == b
        fc[sel] = _shade(COLOURS[b % len(COLOURS)], nrm[sel], lt)
    ec = fc.copy()
    ec[:, :3] *= 0.6
    ax.add_collection3d(Poly3DCollection(tri, facecolors=fc, edgecolors=ec, linewidths=0.25))
    for ln in lines:
        ax.plot(ln[:, 0], ln[:, 1], ln[:, 2], "k--", lw=0.8)
    ax.set_xlim(lo[0], hi[0])
    ax.set_ylim(lo[1], hi[1])
    ax.set_zlim(lo[2], hi[2])
    ax.set_box_aspect(tuple(rng / rng.max()), zoom=ZOOM * (1.35 if flat else 1.0))  # flat: the height is free
    for k, (a, name, setl) in enumerate(zip((ax.xaxis, ax.yaxis, ax.zaxis), names,
                                            (ax.set_xlabel, ax.set_ylabel, ax.set_zlabel))):
        if rng[k] < 0.15 * rng.max():  # a short axis: one tick, or its labels overlap
            t = 0.0 if lo[k] <= 0.0 <= hi[k] else float(f"{mid[k]:.2g}")
            a.set_ticks([t] if lo[k] <= t <= hi[k] else [])
        else:
            a.set_major_locator(MaxNLocator(3))
        a.set_tick_params(labelsize=6, pad=0)
        setl(f"${name}$ (m)", fontsize=7, labelpad=-3)
    _title(ax, title)
    fig.subplots_adjust(left=0, right=1, bottom=0, top=0.95)
    return fig


def save_png(fig, path):
    """The figure as a PNG of at most 256 colours (small files)."""
    import matplotlib.pyplot as plt
    buf = io.BytesIO()
    fig.savefig(buf, dpi=DPI, format="png")
    plt.close(fig)
    try:
        from PIL import Image
        buf.seek(0)
        im = Image.open(buf).convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
        im.save(path, optimize=True)
    except ImportError:
        with open(path, "wb") as f:
            f.write(buf.getvalue())
    return os.path.getsize(path)


def run_scene(binary, exp, fn, tmp):
    """Runs the scene one step; returns the run (contactlab.runs.Run)."""
    from contactlab import runs
    out = os.path.join(tmp, f"{exp}__{fn}.h5")
    cmd = [binary, "run", f"experiments/{exp}/{fn}", "--steps", "1", "-o", out, "--threads", "1", "--quiet",
           "--set", "output.frames_every=1"]
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0 and not os.path.isfile(out):
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    if p.returncode != 0:
        print(f"gallery: {exp}/{fn}: the step failed (exit {p.returncode}); drawing frame 0 anyway", file=sys.stderr)
    r = runs.load(out)
    os.remove(out)
    return r


def draw_scene(plt, binary, e, tmp):
    import numpy as np
    r = run_scene(binary, e["exp"], e["file"], tmp)
    xs = r.frames.get("x")
    if xs is None or len(xs) == 0:
        raise RuntimeError(f"{e['exp']}/{e['file']}: no frames in the run file")
    t0 = float(r.frames["time"][0])
    if t0 != 0.0:
        print(f"gallery: {e['exp']}/{e['file']}: first frame at t = {t0} s, not 0", file=sys.stderr)
    x = xs[0]
    title = f"{e['exp']}: {e['file']} (t = 0)"
    if x.shape[1] == 2:
        fig = draw_2d(plt, x, r.mesh, r.scene, title)
    else:
        body = r.mesh["vertex_body"].astype(int)
        faces = r.mesh.get("surface_faces")
        if faces is None or len(faces) == 0:
            raise RuntimeError(f"{e['exp']}/{e['file']}: no /mesh/surface_faces")
        faces = faces.astype(int)
        g = np.abs(np.asarray(r.scene.get("gravity") or [0, 0, 0], float))
        up = 2 if g[2] > g[1] else 1  # the scenes' vertical is y (gravity along −y), unless it is along z
        springs = [x[[a, b]] for a, b in _springs(r.scene, body)]  # dashed, as the driver's paths
        fig = draw_3d(plt, x, faces, body[faces[:, 0]], _halfspaces(r.scene), title, up=up, lines=springs,
                      camera=CAMERA.get(f"{e['exp']}/{e['file']}"))
    nb = len(np.unique(r.mesh["vertex_body"]))
    return fig, f"{nb} bodies, {len(x)} vertices"


def _read_mesh(path):
    import numpy as np
    with open(path) as f:
        rows = [ln.split() for ln in f if not ln.startswith("#") and ln.strip()]
    dim, nv, nc = (int(v) for v in rows[0])
    X = np.array(rows[1:1 + nv], float)
    C = np.array(rows[1 + nv:1 + nv + nc], int)
    return X, C


def _dat_path(path):
    """(h, samples (k x 2) of px, py) of a driver .dat file."""
    import numpy as np
    h = None
    with open(path) as f:
        for ln in f:
            if ln.startswith("# dim "):
                w = ln.split()
                h = float(w[w.index("h") + 1])
            if not ln.startswith("#"):
                break
    d = np.loadtxt(path, usecols=(1, 2))
    return h, d


def draw_energy_wall(plt, binary, e, tmp):
    """The driver's flat 3D grid plane, the probe body at its start on xnear, and the three 3D paths."""
    import numpy as np
    prog = os.path.join(os.path.dirname(binary), "experiments", "energy_wall", "energy_wall")
    if not os.access(prog, os.X_OK):
        raise RuntimeError(f"{prog}: not built (make)")
    out = os.path.join(tmp, "energy_wall")
    env = dict(os.environ)
    env.setdefault("OMP_WAIT_POLICY", "passive")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env.setdefault("OMP_NUM_THREADS", "1")
    p = subprocess.run([prog, out, "--quick"], cwd=ROOT, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{prog} {out} --quick: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    Xp, Cp = _read_mesh(os.path.join(out, "3d_grid.mesh"))
    Xb, Cb = _read_mesh(os.path.join(out, "3d_body.mesh"))
    lines = []
    h = start = None
    for name in ("xnear", "xmid", "diag"):
        hh, d = _dat_path(os.path.join(out, f"3d_grid_body_{name}_convergent.dat"))
        lines.append(np.column_stack([d, np.full(len(d), hh)]))
        if name == "xnear":
            h, start = hh, d[0]
    tip = np.array([start[0], start[1], h])
    x = np.vstack([Xp, Xb + tip])
    faces = np.vstack([Cp, Cb + len(Xp)])
    fb = np.r_[np.zeros(len(Cp), int), np.ones(len(Cb), int)]
    shutil.rmtree(out, ignore_errors=True)
    fig = draw_3d(plt, x, faces, fb, [], f"{e['exp']}: driver geometry (grid plane, body probe)", up=2,
                  lines=lines)
    return fig, f"plane {len(Xp)} vertices, probe {len(Xb)}"


# ---------------------------------------------------------------------------------------------------------

def find_binary(arg):
    if arg:
        return os.path.abspath(arg)
    build = os.environ.get("CT_BUILD") or "build"
    return os.path.join(ROOT, build, "contactlab") if not os.path.isabs(build) else os.path.join(build, "contactlab")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", help="the contactlab binary (default: $CT_BUILD/contactlab, else build/contactlab)")
    ap.add_argument("--only", metavar="NAME", help="redraw the pictures of experiment NAME only")
    ap.add_argument("--check", action="store_true", help="is the gallery up to date? (runs nothing; exit 1 if not)")
    a = ap.parse_args()

    ents = entries()
    if a.check:
        problems = check(ents)
        for p in problems:
            print("gallery:", p, file=sys.stderr)
        if problems:
            print("gallery: out of date; run scripts/gallery.py (make gallery; --only NAME: one experiment)",
                  file=sys.stderr)
            return 1
        print(f"gallery: docs/gallery.md up to date ({len(ents)} entries)")
        return 0

    todo = [e for e in ents if e["png"] and (a.only is None or e["exp"] == a.only)]
    if a.only and not any(e["exp"] == a.only for e in ents):
        print(f"gallery: --only {a.only}: no such experiment with a described scene", file=sys.stderr)
        return 2
    binary = find_binary(a.bin)
    if todo and not os.access(binary, os.X_OK):
        print(f"gallery: {binary}: no such program (make, or --bin / CT_BUILD)", file=sys.stderr)
        return 2
    from contactlab import figures
    plt = figures.pyplot()
    if plt is None:
        return 2
    os.makedirs(PNG_DIR, exist_ok=True)
    t_all = time.time()
    fail = 0
    tmp = tempfile.mkdtemp(prefix="gallery_")
    try:
        for e in todo:
            t = time.time()
            try:
                if e["kind"] == "scene":
                    fig, what = draw_scene(plt, binary, e, tmp)
                else:
                    fig, what = globals()[EXTRA[e["exp"]]["draw"]](plt, binary, e, tmp)
            except (RuntimeError, OSError, KeyError, ValueError) as err:
                print(f"gallery: {e['exp']}/{e['file']}: FAILED: {err}", file=sys.stderr)
                fail = 1
                continue
            size = save_png(fig, os.path.join(PNG_DIR, e["png"]))
            print(f"gallery: {e['exp']}/{e['file']}: {what}, {time.time() - t:.1f} s -> docs/gallery/{e['png']} "
                  f"({size / 1024:.0f} kB)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    with open(MD, "w", encoding="utf-8") as f:
        f.write(markdown(ents))
    if a.only is None:  # pictures of no entry are stale
        keep = {e["png"] for e in ents if e["png"]}
        for fn in sorted(os.listdir(PNG_DIR)):
            if fn.endswith(".png") and fn not in keep:
                os.remove(os.path.join(PNG_DIR, fn))
                print(f"gallery: removed the stale docs/gallery/{fn}")
    for exp in undescribed():
        print(f"gallery: note: experiments/{exp} has no scene with a \"description\": not listed")
    total = sum(os.path.getsize(os.path.join(PNG_DIR, fn)) for fn in os.listdir(PNG_DIR))
    print(f"gallery: wrote docs/gallery.md ({len(ents)} entries; {len(todo)} pictures drawn in "
          f"{time.time() - t_all:.1f} s; docs/gallery/ {total / 1024:.0f} kB)")
    problems = check(ents)
    for p in problems:
        print("gallery:", p, file=sys.stderr)
    return 1 if fail or problems else 0


if __name__ == "__main__":
    sys.exit(main())
