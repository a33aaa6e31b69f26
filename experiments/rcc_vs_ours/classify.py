#!/usr/bin/env python3
"""Stuck/fallen classification of the blobs of one run (used by analyze.py; also a CLI for tuning).

A blob is **stuck** at the end of the run if (1) it touches the wall: the smallest x of its
vertices in the last frame is below 2 d̂; (2) it is off the floor: the smallest y of its vertices
is above 2 d̂; (3) it is at rest on the wall: the mean vertical speed of its centre (probe
pos_<name>) over the last 0.2 s is below 0.02 m/s. Otherwise it is **sliding** (on the wall, not
on the floor, still moving down), **floor** (smallest y below 2 d̂) or **free** (neither wall nor
floor: still in flight). Everything that is not stuck counts as fallen.
Usage: classify.py RUN.h5 [RUN.h5 ...]"""
import json
import sys

import h5py
import numpy as np

VSTUCK = 0.02  # m/s
TLAST = 0.2  # s


def classify(path):
    with h5py.File(path, "r") as f:
        scene = json.loads(f.attrs["scene_json"])
        dhat = scene["contact"]["dhat"]
        names = [b["name"] for b in scene["bodies"]]
        vb = f["mesh/vertex_body"][:]
        x = f["frames/x"][-1]
        t_end = f["frames/time"][-1]
        ts = f["steps/time"][:]
        res = {}
        for i, n in enumerate(names):
            xi = x[vb == i]
            xmin, ymin = xi[:, 0].min(), xi[:, 1].min()
            pos = f["probes/pos_" + n][:]
            sel = ts >= ts[-1] - TLAST - 1e-12
            tt, yy = ts[sel], pos[sel, 1]
            vy = (yy[-1] - yy[0]) / (tt[-1] - tt[0])
            wall, floor = xmin < 2 * dhat, ymin < 2 * dhat
            if floor:
                c = "floor"
            elif wall and abs(vy) < VSTUCK:
                c = "stuck"
            elif wall:
                c = "sliding"
            else:
                c = "free"
            res[n] = dict(cls=c, xmin=float(xmin), ymin=float(ymin), vy=float(vy),
                          y=float(pos[-1, 1]), x=float(pos[-1, 0]))
        st = dict(iters=float(np.mean(f["steps/newton_iters"][:])),
                  ms=1e3 * float(np.mean(f["steps/wall_s"][:])),
                  inter=int(np.sum(f["steps/intersections"][:])), steps=len(ts), t_end=float(t_end))
        g = "/model/rcc_ipc/beta_clamped_0"
        st["clamped0"] = int(np.nansum(f[g][:])) if g in f else None
    return res, st


if __name__ == "__main__":
    for p in sys.argv[1:]:
        r, st = classify(p)
        s = " ".join(f"{n}:{v['cls']}(y={v['y']:.3f},x={v['x']:.3f},vy={v['vy']:+.3f})" for n, v in r.items())
        print(f"{p}: stuck {sum(v['cls'] == 'stuck' for v in r.values())}/{len(r)}  iters {st['iters']:.2f}"
              f"  {st['ms']:.1f} ms/step  inter {st['inter']}  clamp0 {st['clamped0']}\n   {s}")
