"""runs.py — one contactlab run file (HDF5, DESIGN §6) as numpy arrays.

    run = runs.load("plots/out/slope_2d/slope_mu0.1.h5")
    run.steps["time"], run.steps["newton_iters"]      # /steps/*, one row per step
    run.probes["velocity"]                              # /probes/*, one row per step
    run.mesh["X"], run.mesh["mass"]                     # /mesh/*
    run.frames["time"], run.frames["x"]                 # /frames/*, one row per frame
    run.model["kappa"], run.params["dhat"]              # /model/<model>/ datasets and attributes
    run.scene["contact"]["mu"]                          # the resolved scene (root attribute scene_json)
    run.attrs["model"], run.attrs["threads"]            # every root attribute

The whole file is read when it is loaded (the experiments' files are a few MB); read() takes a
few datasets by path without the rest. run.params holds every parameter of the model as the run
used it: those the scene leaves "auto" as the numbers the model resolved (NaN where it resolves
none), their names in run.params["auto"] (comma-separated; absent if none), the model's family ("energy" or
"constraint") in run.params["family"]; params.value(run, name) reads one as a float. The scene
(run.scene) keeps "auto" as given.
"""
import glob
import json
import os

import h5py


def open_file(path):
    """The HDF5 file read-only; a file whose writer is still running, or was killed, is opened
    for SWMR reading (HDF5 refuses it to a plain reader)."""
    try:
        return h5py.File(path, "r")
    except OSError:
        return h5py.File(path, "r", swmr=True)


def _datasets(f, group):
    """{name: array} of the datasets directly in group (empty if the file has no such group)."""
    if group not in f:
        return {}
    return {k: v[()] for k, v in f[group].items() if isinstance(v, h5py.Dataset)}


class Run:
    """Everything one run file holds: steps, probes, mesh, frames and model series as
    {name: numpy array}; params: the attributes of the model's group (its parameters as the
    model ran with them, "auto" ones resolved, and the attributes auto and family); attrs: the
    root attributes; scene: the resolved scene, parsed (with "auto" as given)."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        with open_file(path) as f:
            self.attrs = dict(f.attrs)
            self.scene = json.loads(self.attrs["scene_json"])
            self.steps = _datasets(f, "steps")
            self.probes = _datasets(f, "probes")
            self.mesh = _datasets(f, "mesh")
            self.frames = _datasets(f, "frames")
            group = self.attrs.get("model_group", "/model/" + str(self.attrs.get("model", "")))
            self.model = _datasets(f, group)
            self.params = dict(f[group].attrs) if group in f else {}


def load(path):
    """The run file at path, read whole (a Run)."""
    return Run(path)


def read(path, names):
    """{name: array} of the datasets named by their paths in the run file (e.g. "/steps/time",
    "/model/rcc_ipc/beta_mean"), None for those it does not have; nothing else is read."""
    with open_file(path) as f:
        return {n: f[n][()] if isinstance(f.get(n), h5py.Dataset) else None for n in names}


def paths(outdir, pattern, key=None):
    """The files in outdir matching the glob pattern, sorted (by key(path) if given)."""
    return sorted(glob.glob(os.path.join(outdir, pattern)), key=key)
