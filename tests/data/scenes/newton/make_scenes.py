#!/usr/bin/python3
"""make_scenes.py — writes the Newton regression scenes of issue 15 (tests/newton_regression.sh)
into this folder. Run it again after editing; the JSON files are committed.

  impact_box_v{1,2.5,5,10}_mu{0,0.4}   3D: a 0.12 m box (E = 5e5, 6^3 cells, turned 35 deg so a corner
                                       leads) thrown along +x at a 0.2 m box (E = 1e6, 8^3 cells)
                                       carrying a 0.08 m box (E = 5e5, 4^3 cells), all over a floor
  impact_wall_v{1,2.5,5,10}_mu{0,0.4}  3D: the same thrown box at a wall (half-space x <= 0), floor below
  stack3                               3D: three boxes (0.2, 0.14, 0.08 m) settling on a floor, mu 0.4
  slope{2d,3d}_mu{0.2,0.8}             a 0.25 m box/square (E = 1e6) resting on a 26.565 deg incline
                                       (normal (0.5, 1): tan = 0.5), probes friction and barrier force
All: model ipc, convergent set, dhat 1 mm, kappa auto, eps_v default, dt 0.01, one thread.
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
GAP = 1.5e-3  # initial gaps (> dhat): the bodies start out of contact
THETA = math.degrees(math.atan(0.5))


def box(name, size, cells, origin, E, velocity=None, rotate=None, translate=None):
    mesh = {"generator": "box", "size": size, "cells": cells, "origin": origin}
    if rotate or translate:
        mesh["transform"] = {}
    if rotate:
        mesh["transform"]["rotate"] = rotate
    if translate:
        mesh["transform"]["translate"] = translate
    b = {"name": name, "mesh": mesh, "material": {"model": "neo_hookean", "E": E, "nu": 0.3, "density": 1000}}
    if velocity:
        b["velocity"] = velocity
    return b


def scene(name, dim, duration, mu, bodies, obstacles, probes):
    contact = {"model": "ipc", "dhat": 1e-3, "kappa": "auto", "mu": mu, "collision_set": "convergent"}
    return {"name": name, "dim": dim, "time": {"dt": 0.01, "duration": duration},
            "gravity": [0, -9.81] if dim == 2 else [0, -9.81, 0],
            "solver": {"threads": 1}, "contact": contact, "bodies": bodies, "obstacles": obstacles,
            "probes": probes, "output": {"frames_every": 5}}


# the thrown box A (0.12 m, centred) turned so that a corner and edges lead, its centre at
# (-0.12, 0.11, 0): 1.6 cm from B (or the wall) and 0.6 cm above the floor, in flight under gravity
ROT = {"axis": [0.3, 1, 0.5], "angle_deg": 35}
FLOOR = {"name": "floor", "type": "halfspace", "point": [0, 0, 0], "normal": [0, 1, 0]}


def vel(body):
    return {"name": "v_" + body, "quantity": "mean_velocity", "select": {"body": body}, "component": "all"}


def write(sc):
    with open(os.path.join(HERE, sc["name"] + ".json"), "w") as f:
        json.dump(sc, f, indent=1)
        f.write("\n")


def tag(x):
    return ("%g" % x)


for v in (1, 2.5, 5, 10):
    for mu in (0, 0.4):
        # box on box: A (0.12) thrown at B (0.2) carrying C (0.08)
        bodies = [
            box("B", [0.2, 0.2, 0.2], [8, 8, 8], [0, GAP, -0.1], 1e6),
            box("C", [0.08, 0.08, 0.08], [4, 4, 4], [0.06, 0.2 + 2 * GAP, -0.04], 5e5),
            box("A", [0.12, 0.12, 0.12], [6, 6, 6], [-0.06, -0.06, -0.06], 5e5, [v, 0, 0], ROT, [-0.12, 0.11, 0]),
        ]
        probes = [vel("A"), vel("B"),
                  {"name": "AB", "quantity": "force", "category": "barrier", "pair": ["A", "B"], "component": "all"}]
        write(scene("impact_box_v%s_mu%s" % (tag(v), tag(mu)), 3, 0.3, mu, bodies, [FLOOR], probes))
        # box at a wall
        bodies = [box("A", [0.12, 0.12, 0.12], [6, 6, 6], [-0.06, -0.06, -0.06], 5e5, [v, 0, 0], ROT,
                      [-0.12, 0.11, 0])]
        wall = {"name": "wall", "type": "halfspace", "point": [0, 0, 0], "normal": [-1, 0, 0]}
        probes = [vel("A"),
                  {"name": "wall_force", "quantity": "force", "category": "barrier", "pair": ["A", "wall"],
                   "component": "all"}]
        write(scene("impact_wall_v%s_mu%s" % (tag(v), tag(mu)), 3, 0.3, mu, bodies, [FLOOR, wall], probes))

bodies = [box("B0", [0.2, 0.1, 0.2], [4, 2, 4], [-0.1, GAP, -0.1], 1e6),
          box("B1", [0.14, 0.1, 0.14], [3, 2, 3], [-0.07, 0.1 + 2 * GAP, -0.07], 5e5),
          box("B2", [0.08, 0.08, 0.08], [2, 2, 2], [-0.04, 0.2 + 3 * GAP, -0.04], 5e5)]
probes = [vel("B2"), {"name": "floor_force", "quantity": "force", "category": "barrier", "pair": ["B0", "floor"],
                      "component": "all"}]
write(scene("stack3", 3, 0.5, 0.4, bodies, [FLOOR], probes))

# slopes: the box's bottom face at 0.5 mm from the incline (inside dhat), at rest
L, Y0 = 0.25, 5e-4
for mu in (0.2, 0.8):
    probes = [{"name": "velocity", "quantity": "mean_velocity", "select": {"body": "box"}, "component": "all"},
              {"name": "normal_force", "quantity": "force", "category": "barrier", "pair": ["box", "incline"],
               "component": "all"},
              {"name": "friction_force", "quantity": "force", "category": "friction", "pair": ["box", "incline"],
               "component": "all"}]
    b3 = box("box", [L, L, L], [2, 2, 2], [0, Y0, -L / 2], 1e6, rotate={"axis": [0, 0, 1], "angle_deg": -THETA})
    inc3 = {"name": "incline", "type": "halfspace", "point": [0, 0, 0], "normal": [0.5, 1, 0]}
    write(scene("slope3d_mu%s" % tag(mu), 3, 1.0, mu, [b3], [inc3], probes))
    b2 = {"name": "box", "mesh": {"generator": "rect", "size": [L, L], "cells": [4, 4], "origin": [0, Y0],
                                  "transform": {"rotate": {"angle_deg": -THETA}}},
          "material": {"model": "neo_hookean", "E": 1e6, "nu": 0.3, "density": 1000}}
    inc2 = {"name": "incline", "type": "halfspace", "point": [0, 0], "normal": [0.5, 1]}
    write(scene("slope2d_mu%s" % tag(mu), 2, 1.0, mu, [b2], [inc2], probes))
