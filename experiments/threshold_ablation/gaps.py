#!/usr/bin/env python3
"""--set arguments placing each cube of gel.json at the gap where the barrier carries its weight:
κ(−b'(d)) = ρ g L with b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂) (the plate's adhesion is negligible:
young_obstacle). Usage: gaps.py SCENE DHAT  → one --set per line."""
import json
import math
import sys

scene = json.load(open(sys.argv[1]))
dhat = float(sys.argv[2])
kappa = scene["contact"]["kappa"]
g = -scene["gravity"][1]


def p(x):  # barrier pressure / κ at the gap x·d̂
    return 2 * (x - 1) * math.log(x) + (x - 1) ** 2 / x


for i, b in enumerate(scene["bodies"]):
    if not b["name"].startswith("cube"):
        continue
    L = b["mesh"]["size"][1]
    target = b["material"]["density"] * g * L / kappa
    lo, hi = 1e-9, 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if p(mid) > target else (lo, mid)
    o = b["mesh"]["origin"]
    print(f"--set bodies.{i}.mesh.origin=[{o[0]!r},{0.5 * (lo + hi) * dhat!r},{o[2]!r}]")
