#!/usr/bin/env python3
"""animate.py — a run's frames as a picture and an animation: the bodies' surface edges (3D) or boundary
edges (2D) projected on two axes, one colour per body, the time in the title.

    scripts/animate.py RUN.h5 OUT.gif [--png OUT.png] [--axes x,y] [--every K] [--fps F] [--title TEXT]

OUT.gif: every K-th frame (Pillow, which Debian's python3-matplotlib depends on); --png: the last frame
as a still (for READMEs). Needs python3-h5py, python3-numpy, python3-matplotlib.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from contactlab import figures, runs  # noqa: E402

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run")
    ap.add_argument("gif")
    ap.add_argument("--png")
    ap.add_argument("--axes", default="x,y", help="the two axes shown (x, y or z), default x,y")
    ap.add_argument("--every", type=int, default=1, help="every K-th frame (default 1)")
    ap.add_argument("--fps", type=float, default=10.0)
    ap.add_argument("--title", default=None, help="title prefix (default: the run's name and model)")
    a = ap.parse_args()
    plt = figures.pyplot()
    from matplotlib import animation
    from matplotlib.collections import LineCollection
    import numpy as np

    r = runs.load(a.run)
    x, t = r.frames.get("x"), r.frames.get("time")
    if x is None or len(x) == 0:
        sys.exit(f"animate: {a.run}: no frames (/frames/x)")
    dim = x.shape[2]
    ax_ids = ["xyz".index(c) for c in a.axes.split(",")]
    if len(ax_ids) != 2 or max(ax_ids) >= dim:
        sys.exit(f"animate: --axes {a.axes}: two of {'xyz'[:dim]}")
    edges = r.mesh["surface_edges"].astype(int)
    body = r.mesh["vertex_body"].astype(int)
    ebody = body[edges[:, 0]]
    frames = list(range(0, len(x), max(1, a.every)))
    if frames[-1] != len(x) - 1:
        frames.append(len(x) - 1)
    P = x[:, :, ax_ids]
    lo, hi = P[frames].reshape(-1, 2).min(axis=0), P[frames].reshape(-1, 2).max(axis=0)
    pad = 0.05 * (hi - lo).max()
    title = a.title or f"{r.name} ({r.attrs.get('model', '?')})"

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    ax.set_xlim(lo[0] - pad, hi[0] + pad)
    ax.set_ylim(lo[1] - pad, hi[1] + pad)
    ax.set_aspect("equal")
    ax.set_xlabel(f"${'xyz'[ax_ids[0]]}$ (m)")
    ax.set_ylabel(f"${'xyz'[ax_ids[1]]}$ (m)")
    lc = LineCollection([], linewidths=0.6, colors=[COLOURS[b % len(COLOURS)] for b in ebody])
    ax.add_collection(lc)
    head = ax.set_title(f"{title}, t = {t[-1] * 1e3:.2f} ms")  # the longest, for the layout

    def draw(k):
        lc.set_segments(P[k][edges])
        head.set_text(f"{title}, t = {t[k] * 1e3:.2f} ms")
        return lc, head

    fig.tight_layout()
    if a.png:
        draw(frames[-1])
        fig.savefig(a.png, dpi=120)
    anim = animation.FuncAnimation(fig, draw, frames=frames, blit=False)
    anim.save(a.gif, writer=animation.PillowWriter(fps=a.fps), dpi=80)
    print(f"animate: {len(frames)} frames of {a.run} -> {a.gif}" + (f", {a.png}" if a.png else ""))


if __name__ == "__main__":
    main()
