#!/usr/bin/env python3
"""Writes experiments/rcc_vs_ours/blobs_ours.json and blobs_rcc.json: six soft 8 cm cubes thrown at a wall (x >= 0) above a
floor (y >= 0) under gravity. The blobs differ in density (weight vs adhesion capacity), throw
velocity and orientation (face-on or edge-on). The two files differ only in "contact":
ipc_adhesion (ours) and rcc_ipc (RCC), both with the tuned parameters below."""
import argparse
import json
import os

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("outdir", nargs="?", default="experiments/rcc_vs_ours", metavar="OUTDIR",
                help="where to write the two scenes (default experiments/rcc_vs_ours)")
outdir = ap.parse_args().outdir
# quadrature "vertex": the parameters were tuned with the vertex quadrature (before the face-aware
# weights of issue 15), under which a face of these 3³-cell cubes carries 1 + 2/3 of its area;
# with "face" it carries its area and the tuned agreement is lost (README, "Contact quadrature")
IPC = {"dhat": 1e-3, "kappa": "auto", "mu": 0.5, "eps_v": 1e-3, "quadrature": "vertex"}
OURS = dict(model="ipc_adhesion", **IPC, eps_c=0.1, mu_a=1.0)
RCC = dict(model="rcc_ipc", **IPC, c_n=5e6, c_t=2e7, w=5.0, eta=0.1, r=0.05, p0=1000, beta0=1.0)
L = 0.08
# name, origin (x, y, z), velocity (vx, vy), density, rotation about z (deg)
BLOBS = [
    ("a", (0.25, 1.20, -0.50), (-3.0, 1.0), 1000, 0),   # fast, face-on, light
    ("b", (0.25, 1.00, -0.30), (-1.5, 0.5), 1000, 0),   # slower, face-on
    ("c", (0.25, 0.80, -0.10), (-3.0, 0.0), 3000, 0),   # fast, heavy
    ("d", (0.25, 0.60, 0.10), (-0.8, 2.0), 1000, 0),    # lobbed: small normal speed
    ("e", (0.25, 1.10, 0.30), (-2.0, 0.5), 8000, 0),    # very heavy: weight > adhesion capacity
    ("f", (0.25, 0.90, 0.50), (-2.5, 0.5), 1000, 30),   # tilted 30 deg: hits edge-first
]
bodies, probes = [], []
for name, o, v, rho, rot in BLOBS:
    mesh = {"generator": "box", "size": [L, L, L], "cells": [3, 3, 3], "origin": list(o)}
    if rot:
        # rotate about the cube's own centre: build it centred at 0, rotate, move the centre to o + L/2
        mesh["origin"] = [-L / 2] * 3
        mesh["transform"] = {"rotate": {"angle_deg": rot, "axis": [0, 0, 1]},
                             "translate": [c + L / 2 for c in o]}
    bodies.append({"name": name, "mesh": mesh,
                   "material": {"model": "neo_hookean", "E": 1e5, "nu": 0.3, "density": rho},
                   "velocity": [v[0], v[1], 0]})
    probes.append({"name": "pos_" + name, "quantity": "mean_position", "select": {"body": name},
                   "component": "all"})
scene = {
    "name": "blobs",
    "description": "Six sticky soft cubes thrown at a wall: which stick with Fang et al. 2023's model and with RCC "
                   "in IPC (§5.1.1, Fig. 10)",
    "dim": 3,
    "time": {"dt": 0.01, "duration": 1.5},
    "gravity": [0, -9.81, 0],
    "solver": {"newton_tol": 1e-4},
    "bodies": bodies,
    "obstacles": [
        {"name": "wall", "type": "halfspace", "point": [0, 0, 0], "normal": [1, 0, 0]},
        {"name": "floor", "type": "halfspace", "point": [0, 0, 0], "normal": [0, 1, 0]}],
    "probes": probes,
    "output": {"frames_every": 10},
}
for tag, contact in (("ours", OURS), ("rcc", RCC)):
    out = os.path.join(outdir, f"blobs_{tag}.json")
    with open(out, "w") as f:
        json.dump(dict(scene, contact=contact), f, indent=1)
    print("wrote", out)
