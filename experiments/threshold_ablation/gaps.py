#!/usr/bin/env python3
"""--set arguments placing each cube of gel.json at the gap where the barrier carries its weight:
κ(−b'(d)) = ρ g L with b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂) (the plate's adhesion is negligible:
young_obstacle). Prints one --set per line."""
import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab.physics import barrier_pressure_float, bisect  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("scene", metavar="SCENE", help="the scene (gel.json)")
ap.add_argument("dhat", type=float, metavar="DHAT", help="the barrier distance d̂ of the run (m)")
args = ap.parse_args()
with open(args.scene) as f:
    scene = json.load(f)
# computed before the run: the scene's κ as given (a run file would log the resolved number, but
# there is none yet); "auto" has no value here
kappa = scene["contact"].get("kappa", "auto")
if not isinstance(kappa, (int, float)):
    sys.exit(f"gaps.py: {args.scene}: contact.kappa is {kappa!r}: the gaps need the scene to give κ as a number "
             f"(an \"auto\" κ is resolved by the model only when the run starts)")
g = -scene["gravity"][1]

for i, b in enumerate(scene["bodies"]):
    if not b["name"].startswith("cube"):
        continue
    L = b["mesh"]["size"][1]
    target = b["material"]["density"] * g * L / kappa
    # the gap x·d̂ where the barrier pressure per κ (at d̂ = 1) is the target
    x = bisect(lambda x: barrier_pressure_float(x, 1.0, 1.0) > target, 1e-9, 1.0)
    o = b["mesh"]["origin"]
    print(f"--set bodies.{i}.mesh.origin=[{o[0]!r},{x * args.dhat!r},{o[2]!r}]")
