#!/usr/bin/env python3
"""Meshes of experiments/annulus_forward (Du et al. 2023, "No Free Slide", Fig. 6), as Gmsh 2.2
ASCII files that core/fem/mesh_gmsh.c reads (2D: z = 0, triangles):

  annulus.msh  the rigid quarter annulus r1 <= r <= r2, 0 <= theta <= 90 deg: its inner arc is the
               polygon of SEGMENTS straight segments with vertices ON the circle r = r1 (the faceted
               track of A); its outer arc has 4 x SEGMENTS segments with vertices on r = r2. Between them
               rings of graded segment counts, about one inner segment apart, zipped into
               triangles (the body is kinematic; the rings keep the radial ends' samples as dense as
               the inner arc's, for the IMLS model).
  tri_a.msh    point A's body: an isosceles triangle (height H, base W) at theta = 0 whose apex
               (vertex 0) points outward along +x at r = r1 cos(pi / (4 SEGMENTS)) - GAP0, i.e. GAP0
               inside the facets' innermost point (the middle of a segment), so it starts
               intersection-free at any angle; vertices 1, 2 are the base corners.
  tri_b.msh    point B's body: the same triangle shifted radially (+x) by r2 - r1, so its apex lies
               just inside the outer track r = r2, inside the annulus's material (never crossing
               its outer boundary: checked below).

The scene rotates tri_a/tri_b to the start angle (mesh transform). Vertex order is kept by the
reader: 0 apex, 1 base corner at +y, 2 base corner at -y (at theta = 0).

Usage: make_mesh.py [--segments N] [--outdir DIR]   (default 16 segments, this script's folder)
"""
import argparse
import math
import os
import sys

R1, R2 = 1.0, 1.5          # inner and outer radius (m)
H, W = 0.01, 0.04          # triangle height and base (m)
GAP0 = 0.5e-3              # initial apex clearance below the facets' innermost point (m)
OUTER_FACTOR = 4           # outer arc segments per inner segment


def write_msh(path, pts, tris):
    with open(path, "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n" % len(pts))
        for i, (x, y) in enumerate(pts):
            f.write("%d %.17g %.17g 0\n" % (i + 1, x, y))
        f.write("$EndNodes\n$Elements\n%d\n" % len(tris))
        for i, t in enumerate(tris):
            f.write("%d 2 2 1 1 %d %d %d\n" % (i + 1, t[0] + 1, t[1] + 1, t[2] + 1))
        f.write("$EndElements\n")


def ccw(pts, t):
    (ax, ay), (bx, by), (cx, cy) = (pts[k] for k in t)
    return t if (bx - ax) * (cy - ay) - (by - ay) * (cx - ax) > 0 else (t[0], t[2], t[1])


def annulus(n):
    """Points and triangles of the quarter annulus: inner polygon (n segments), outer (4n), and
    LAYERS - 1 rings between them (segment counts graded from n to 4n), so the radial ends are cut
    into LAYERS pieces about as long as the inner segments: an IMLS field needs its samples spread
    evenly (a 0.5 m end segment would force a kernel radius above 0.25 m onto the whole body)."""
    m = OUTER_FACTOR * n
    layers = max(1, round((R2 - R1) / (R1 * 0.5 * math.pi / n)))
    rings = []
    for l in range(layers + 1):
        r = R1 + (R2 - R1) * l / layers
        k = round(n + (m - n) * l / layers)
        rings.append([(r * math.cos(0.5 * math.pi * i / k), r * math.sin(0.5 * math.pi * i / k)) for i in range(k + 1)])
    pts, base = [], []
    for ring in rings:
        base.append(len(pts))
        pts += ring
    tris = []
    for l in range(layers):  # zip consecutive rings by angle
        a, b = base[l], base[l + 1]
        na, nb = len(rings[l]) - 1, len(rings[l + 1]) - 1
        i = j = 0
        while i < na or j < nb:
            ai = (i + 1) / na if i < na else math.inf
            aj = (j + 1) / nb if j < nb else math.inf
            if ai <= aj:
                tris.append(ccw(pts, (a + i, b + j, a + i + 1)))
                i += 1
            else:
                tris.append(ccw(pts, (a + i, b + j, b + j + 1)))
                j += 1
    return pts, tris


def triangle(shift):
    ra = R1 * math.cos(0.25 * math.pi / SEG) - GAP0 + shift
    return [(ra, 0.0), (ra - H, 0.5 * W), (ra - H, -0.5 * W)], [(0, 1, 2)]


ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--segments", type=int, default=16, help="segments of the inner arc over the quarter (default 16)")
ap.add_argument("--outdir", default=os.path.dirname(os.path.abspath(__file__)))
args = ap.parse_args()
SEG = args.segments
if SEG < 2:
    sys.exit("make_mesh.py: --segments must be >= 2")
os.makedirs(args.outdir, exist_ok=True)
pa, ta = triangle(0.0)
pb, tb = triangle(R2 - R1)
# B's apex must stay inside the outer polygon (its chords' innermost radius) at every angle
if not pb[0][0] < R2 * math.cos(0.25 * math.pi / (OUTER_FACTOR * SEG)):
    sys.exit("make_mesh.py: B's apex would cross the annulus's outer boundary")
write_msh(os.path.join(args.outdir, "annulus.msh"), *annulus(SEG))
write_msh(os.path.join(args.outdir, "tri_a.msh"), pa, ta)
write_msh(os.path.join(args.outdir, "tri_b.msh"), pb, tb)
