"""vtk_check.py RUN.h5 DIR — the VTK series `contactlab export --vtk RUN.h5 DIR` wrote parses as VTK XML and
holds the run: run.pvd lists every frame with its time; each frame_*.vtu is an UnstructuredGrid with the
run's vertices and elements, points = /frames/x (z = 0 in 2D), displacement = x − X, velocity = /frames/v,
connectivity within range, offsets and cell types of tetrahedra (3D) or triangles (2D). With python3-vtk
installed, VTK's own reader must read the frames too. Exit status 1 on a mismatch."""
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

run, d = sys.argv[1], sys.argv[2]
with h5py.File(run, "r") as f:
    X, el, t = f["/mesh/X"][()], f["/mesh/elements"][()], f["/frames/time"][()]
    x, v = f["/frames/x"][()], f["/frames/v"][()]
nx, dim = X.shape
pad = lambda a: np.hstack([a, np.zeros((a.shape[0], 3 - dim))])

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
    val = lambda name, dt=float: np.array(arrays[name].text.split(), dtype=dt)
    pts = val("position").reshape(nx, 3)
    assert np.array_equal(pts, pad(x[k])), f"frame {k}: points differ from /frames/x"
    assert np.allclose(val("displacement").reshape(nx, 3), pad(x[k] - X), rtol=0, atol=1e-15 * (1 + abs(X).max()))
    assert np.array_equal(val("velocity").reshape(nx, 3), pad(v[k]))
    conn = val("connectivity", np.int64)
    assert np.array_equal(conn.reshape(el.shape), el.astype(np.int64)) and conn.max() < nx
    assert np.array_equal(val("offsets", np.int64), (np.arange(len(el)) + 1) * el.shape[1])
    assert set(val("types", np.int64)) == {10 if dim == 3 else 5}
msg = f"{len(sets)} frames, {nx} points, {len(el)} cells: XML parsed, points, displacement, velocity, cells match the run"
try:
    import vtk  # python3-vtk9, when installed
    r = vtk.vtkXMLUnstructuredGridReader()
    r.SetFileName(os.path.join(d, sets[-1].get("file")))
    r.Update()
    g = r.GetOutput()
    assert g.GetNumberOfPoints() == nx and g.GetNumberOfCells() == len(el)
    msg += "; VTK's reader reads them"
except ImportError:
    msg += " (python3-vtk not installed: VTK's own reader not tried)"
print(msg)
