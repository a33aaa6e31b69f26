"""vtk_check.py RUN.h5 DIR [--rest BODY [--bonded]] — the VTK series `contactlab export --vtk RUN.h5 DIR` wrote
parses as VTK XML and holds the run: run.pvd lists every frame with its time; each frame_*.vtu is an UnstructuredGrid
with the run's vertices and elements, points = /frames/x (z = 0 in 2D), displacement = x − X, velocity = /frames/v,
connectivity within range, offsets and cell types of tetrahedra (3D) or triangles (2D). The model's per-vertex contact
fields (/frames/contact_force, gap, beta) are point data contact_force, gap, beta (inline binary: base64 of a UInt64
byte count and little-endian Float64) equal to the run's, NaN where the run has NaN, when the run has them, and absent
when it has not (a run without contact, or written before the fields existed). With python3-vtk installed, VTK's own
reader must read the frames too, and the contact fields with them.

--rest BODY: BODY rests on its support at the last frame (frames_every 1, so the last two frames are consecutive
steps), and the contact fields must show it:
  force balance  Σ over BODY's vertices of contact_force + m g = Σ m_i a_i (a_i = (v_i − v_i') / h from the last two
                 frames: implicit Euler's momentum balance of the step, summed over the body, where elastic forces
                 cancel). An energy model's Newton stops with the forces balanced to |r|_1 = Σ_i |r_i|
                 (/steps/force_residual × /steps/force_scale: it bounds the norm of any summed force,
                 core/sim/newton.c); a constraint model's step is a direct solve, exact to round-off. So
                 |F + m g − M a| <= |r|_1 + 1e-9 m|g|. Printed: the vertical contact force
                 against m g, their relative difference and |M a|.
  gaps           BODY's gaps are in (0, reach], reach the model's activation distance (d̂; with adhesion d̂_a; lcp_pgs:
                 its margin), and some vertex touches: it has a gap and a contact force (above 1e-9 of the largest).
                 A vertex may carry force without a gap of its own (imls: a sample of a field, in another vertex's
                 term).
  beta           in [0, 1] in every frame; with --bonded, > 0 on every touching vertex at the last frame.
Exit status 1 on a mismatch."""
import base64
import json
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

args = sys.argv[1:]
rest = bonded = None
if "--rest" in args:
    i = args.index("--rest")
    rest = args[i + 1]
    del args[i : i + 2]
if "--bonded" in args:
    args.remove("--bonded")
    bonded = True
run, d = args[0], args[1]
FIELDS = ("contact_force", "gap", "beta")
with h5py.File(run, "r") as f:
    X, el, t = f["/mesh/X"][()], f["/mesh/elements"][()], f["/frames/time"][()]
    x, v = f["/frames/x"][()], f["/frames/v"][()]
    fields = {k: f["/frames/" + k][()] for k in FIELDS if "/frames/" + k in f}
    mass, body = f["/mesh/mass"][()], f["/mesh/vertex_body"][()]
    attrs = dict(f.attrs)
    group = attrs.get("model_group", "/model/" + str(attrs.get("model", "")))
    params = dict(f[group].attrs) if group in f else {}
    r1 = float(f["/steps/force_residual"][-1] * f["/steps/force_scale"][-1]) if "/steps/force_residual" in f else 0.0
nx, dim = X.shape
pad = lambda a: np.hstack([a, np.zeros((a.shape[0], 3 - dim))])


def values(a, dtype=float):
    """The numbers of a DataArray element: ascii, or inline binary (header UInt64 byte count)."""
    if a.get("format") == "binary":
        raw = base64.b64decode("".join(a.text.split()))
        n = int.from_bytes(raw[:8], "little")
        assert len(raw) == 8 + n and a.get("type") == "Float64", (a.get("Name"), len(raw), n, a.get("type"))
        return np.frombuffer(raw[8:], "<f8")
    return np.array(a.text.split(), dtype=dtype)


def same(a, b):
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


col = ET.parse(os.path.join(d, "run.pvd")).getroot()
assert col.get("type") == "Collection", col.get("type")
sets = col.find("Collection").findall("DataSet")
assert len(sets) == len(t), (len(sets), len(t))
for k, ds in enumerate(sets):
    assert abs(float(ds.get("timestep")) - t[k]) <= 1e-15 * max(1.0, abs(t[k])), (k, ds.get("timestep"), t[k])
    root = ET.parse(os.path.join(d, ds.get("file"))).getroot()
    assert root.get("type") == "UnstructuredGrid"
    piece = root.find("UnstructuredGrid").find("Piece")
    assert int(piece.get("NumberOfPoints")) == nx and int(piece.get("NumberOfCells")) == len(el)
    arrays = {a.get("Name"): a for a in piece.iter("DataArray")}
    val = lambda name, dt=float: values(arrays[name], dt)
    pts = val("position").reshape(nx, 3)
    assert np.array_equal(pts, pad(x[k])), f"frame {k}: points differ from /frames/x"
    assert np.allclose(val("displacement").reshape(nx, 3), pad(x[k] - X), rtol=0, atol=1e-15 * (1 + abs(X).max()))
    assert np.array_equal(val("velocity").reshape(nx, 3), pad(v[k]))
    conn = val("connectivity", np.int64)
    assert np.array_equal(conn.reshape(el.shape), el.astype(np.int64)) and conn.max() < nx
    assert np.array_equal(val("offsets", np.int64), (np.arange(len(el)) + 1) * el.shape[1])
    assert set(val("types", np.int64)) == {10 if dim == 3 else 5}
    for name in FIELDS:
        assert (name in arrays) == (name in fields), f"frame {k}: point data {name} present {name in arrays}, in the run {name in fields}"
    if "contact_force" in fields:
        assert same(val("contact_force").reshape(nx, 3), pad(fields["contact_force"][k])), f"frame {k}: contact_force"
    for name in ("gap", "beta"):
        if name in fields:
            assert same(val(name), fields[name][k]), f"frame {k}: {name} differs from /frames/{name}"
msg = f"{len(sets)} frames, {nx} points, {len(el)} cells: XML parsed, points, displacement, velocity, cells match the run"
msg += f"; contact fields {', '.join(fields)} match" if fields else "; no contact fields (none in the run)"
if "beta" in fields:
    b = fields["beta"]
    assert np.all((b >= 0.0) & (b <= 1.0)), f"beta outside [0, 1]: [{b.min()}, {b.max()}]"

if rest is not None:
    assert "contact_force" in fields and "gap" in fields, "--rest: the run has no contact_force / gap"
    scene = json.loads(attrs["scene_json"])
    names = [bd["name"] for bd in scene["bodies"]]
    on = body == names.index(rest)
    h = t[-1] - t[-2]
    assert len(t) >= 2 and abs(h - float(attrs["dt"])) <= 1e-9 * h, "--rest: the last two frames must be one step apart"
    g = np.array(scene["gravity"][:dim], dtype=float)
    m = mass[on].sum()
    F = fields["contact_force"][-1][on].sum(axis=0)
    Ma = (mass[on, None] * (v[-1][on] - v[-2][on]) / h).sum(axis=0)
    err = np.linalg.norm(F + m * g - Ma)
    tol = r1 + 1e-9 * m * np.linalg.norm(g)
    up = -g / np.linalg.norm(g)
    W = m * np.linalg.norm(g)
    rel = abs(F @ up - W) / W
    assert err <= tol, f"--rest {rest}: |F + m g - M a| = {err:.3e} N > {tol:.3e} N (F = {F}, m g = {m * g}, M a = {Ma})"
    mag = np.linalg.norm(fields["contact_force"][-1][on], axis=1)
    gap_all = fields["gap"][-1][on]
    loaded = mag > 1e-9 * mag.max()
    touch = loaded & np.isfinite(gap_all)
    gap = gap_all[touch]
    reach = next((float(params[k]) for k in ("dhat_a", "dhat", "margin") if k in params and np.isfinite(params[k])), None)
    assert reach is not None, f"--rest: no activation distance among the model's parameters {sorted(params)}"
    assert touch.any() and np.all((gap > 0.0) & (gap <= reach)), f"--rest {rest}: touching vertices' gaps {gap} not all in (0, {reach}]"
    assert np.all(np.isnan(gap_all) | ((gap_all > 0.0) & (gap_all <= reach))), f"--rest {rest}: gaps {gap_all} outside (0, {reach}]"
    msg += (f"; {rest} at rest: vertical contact force {F @ up:.9g} N vs m g = {W:.9g} N (rel. error {rel:.2e}; "
            f"|F + m g - M a| = {err:.2e} N <= |r|_1 + round-off = {tol:.2e} N; |M a| = {np.linalg.norm(Ma):.2e} N), "
            f"{touch.sum()} touching vertices with gaps in [{gap.min():.4g}, {gap.max():.4g}] m <= reach {reach:.4g} m"
            + (f" ({(loaded & ~touch).sum()} more with a force and no gap of their own)" if (loaded & ~touch).any() else ""))
    if "beta" in fields:
        bt = fields["beta"][-1][on][touch]
        msg += f", beta in [{bt.min():.4g}, {bt.max():.4g}] there"
        if bonded:
            assert np.all(bt > 0.0), f"--bonded: touching vertices without a bond: beta {bt}"
    elif bonded:
        raise AssertionError("--bonded: the run has no /frames/beta")
try:
    import vtk  # python3-vtk9, when installed
    from vtk.util.numpy_support import vtk_to_numpy

    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(os.path.join(d, sets[-1].get("file")))
    r.Update()
    gr = r.GetOutput()
    assert gr.GetNumberOfPoints() == nx and gr.GetNumberOfCells() == len(el)
    pd = gr.GetPointData()
    for name in fields:
        a = pd.GetArray(name)
        assert a is not None, f"VTK's reader: no point data {name}"
        want = pad(fields[name][-1]) if name == "contact_force" else fields[name][-1]
        assert same(vtk_to_numpy(a).reshape(want.shape), want), f"VTK's reader: {name} differs"
    msg += "; VTK's reader reads them" + (" with the contact fields" if fields else "")
except ImportError:
    msg += " (python3-vtk not installed: VTK's own reader not tried)"
print(msg)
