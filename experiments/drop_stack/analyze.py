#!/usr/bin/env python3
"""Analysis of experiments/drop_stack: soft boxes dropped onto each other and onto a half-space.
Reads OUTDIR/drop_stack.h5 (or the file given as 2nd argument), prints per-step solver
statistics and the final stack against the stacked sizes (barrier gap and elastic compression
predicted independently), writes OUTDIR/drop_stack.png, exits 1 if a claim of README.md fails.
Usage: analyze.py OUTDIR [RUN.h5] [--no-plot]"""
import json
import math
import os
import sys

import h5py
import numpy as np

args = [a for a in sys.argv[1:] if not a.startswith("--")]
no_plot = "--no-plot" in sys.argv
out = args[0] if args else "plots/out/drop_stack"
path = args[1] if len(args) > 1 else os.path.join(out, "drop_stack.h5")

with h5py.File(path, "r") as f:
    scene = json.loads(f.attrs["scene_json"])
    st = {k: f["/steps/" + k][:] for k in ("time", "newton_iters", "line_search_iters", "intersections",
                                          "min_distance", "ccd_alpha_min", "wall_s", "n_active")}
    body = f["/mesh/vertex_body"][:]
    mass = f["/mesh/mass"][:]
    tf = f["/frames/time"][:]
    xf = f["/frames/x"][:]
    kappa_log = f["/model/ipc/kappa"][:] if "/model/ipc/kappa" in f else None

g = -scene["gravity"][1]
dhat = scene["contact"]["dhat"]
bodies = scene["bodies"]
nb = len(bodies)
E = [b["material"]["E"] for b in bodies]
kappa = scene["contact"]["kappa"]
if kappa == "auto":
    kappa = scene["contact"].get("kappa_scale", 0.1) * min(E)
if kappa_log is not None and np.ptp(kappa_log) > 0:
    print(f"note: kappa changed during the run ({kappa_log.min():g} .. {kappa_log.max():g} Pa)")

ok = True


def claim(cond, text):
    global ok
    print(("ok    " if cond else "FAIL  ") + text)
    ok &= bool(cond)


# ---- per-step solver statistics ----
ni = st["newton_iters"]
n_steps = len(ni)
expect_steps = int(round(scene["time"]["duration"] / scene["time"]["dt"]))
print(f"steps {n_steps}, dt = {scene['time']['dt']} s, {len(mass)} vertices, {int(np.sum(mass > 0))} with mass")
print(f"Newton iterations per step: mean {ni.mean():.2f}, max {ni.max()} (step at t = {st['time'][ni.argmax()]:.2f} s)"
      f"; line-search halvings: total {st['line_search_iters'].sum()}, max/step {st['line_search_iters'].max()}")
t_dyn = 1.0  # the boxes land within the first second; after it the stack is settling at rest
dyn = st["time"] <= t_dyn
print(f"  while landing (t <= {t_dyn:g} s): mean {ni[dyn].mean():.2f}; settled (t > {t_dyn:g} s): mean "
      f"{ni[~dyn].mean():.2f}, max {ni[~dyn].max()}")
print(f"smallest CCD step fraction {st['ccd_alpha_min'].min():.3f}; min distance over the run "
      f"{np.min(st['min_distance']):.3e} m ({np.min(st['min_distance']) / dhat:.3f} d̂); "
      f"max active pairs {st['n_active'].max()}; wall time {st['wall_s'].sum():.1f} s")
claim(n_steps == expect_steps, f"the run completed all {expect_steps} steps")
claim(int(st["intersections"].max()) == 0, "/steps/intersections is 0 for every step")
claim(np.min(st["min_distance"]) > 0, "min distance > 0 in every step")

# ---- the final stack ----
# Independent prediction: box k lies flat on box k-1 (on the floor for k = 0). The interface
# below box k carries the weight W_k of boxes k..n-1 over the bottom area A_k of box k (each
# box is smaller than the one below and lies within it), so its gap solves
# p = κ (−b'(g)), b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂) (the barrier's pressure law; convergent set
# and half-space both integrate it once over the contact area). Box k is shortened by
# uniaxial compression δ_k = (W_{k+1} + m_k g / 2) H_k / (E A_k) (mean stress over its height).


def barrier_pressure(gap):
    x = gap / dhat
    return kappa * (2 * (x - 1) * math.log(x) + (x - 1) ** 2 / x)


def gap_for(p):
    lo, hi = 1e-12 * dhat, dhat  # pressure decreases monotonically from +inf to 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if barrier_pressure(mid) > p:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


H, A, M = [], [], []
for k, b in enumerate(bodies):
    size = b["mesh"]["size"]
    H.append(size[1])
    A.append(size[0] * size[2])
    M.append(mass[body == k].sum())
W = [g * sum(M[k:]) for k in range(nb)]  # weight carried by the interface below box k
gaps, deltas = [], []
for k in range(nb):
    gaps.append(gap_for(W[k] / A[k]))
    deltas.append((W[k] - M[k] * g / 2) * H[k] / (E[k] * A[k]))

x_end = xf[-1]
speed = np.abs(xf[-1] - xf[-2]).max() / (tf[-1] - tf[-2])
# Measured gap below box k: mean height of its bottom layer of vertices minus the mean height
# of the top layer of box k-1 under it (within 0.45 side of box k's centre; the lower box's top
# is indented there by the load, so its rim stands higher and min/max would mislead).
print("\n box  size (m)            mass (kg)  gap below: meas. / pred. (m)   top (m)    Σ sizes (m)  "
      "top − Σ sizes   allowed: (k+1) d̂ + Σδ")
ok_heights, ok_gaps = True, True
prev = None
for k in range(nb):
    xs = x_end[body == k]
    bot = xs[xs[:, 1] < xs[:, 1].min() + 0.1 * H[k]]
    if prev is None:
        gap_meas = bot[:, 1].mean()  # the floor is y = 0
    else:
        top_prev = prev[prev[:, 1] > prev[:, 1].max() - 0.1 * H[k - 1]]
        c = bot[:, [0, 2]].mean(axis=0)
        r = np.hypot(top_prev[:, 0] - c[0], top_prev[:, 2] - c[1])
        side = min(bodies[k]["mesh"]["size"][0], bodies[k]["mesh"]["size"][2])
        gap_meas = bot[:, 1].mean() - top_prev[r < 0.45 * side, 1].mean()
    top = xs[:, 1].max()
    sizes = sum(H[: k + 1])
    allowed = (k + 1) * dhat + sum(deltas[: k + 1])
    print(f" {k}    {'x'.join(f'{s:g}' for s in bodies[k]['mesh']['size']):<20}  {M[k]:<9.3f}  "
          f"{gap_meas:.3e} / {gaps[k]:.3e}          {top:.6f}   {sizes:.3f}        {top - sizes:+.2e}       "
          f"{allowed:.2e}")
    ok_heights &= abs(top - sizes) <= allowed
    ok_gaps &= abs(gap_meas - gaps[k]) < 0.2 * dhat
    prev = xs
claim(speed < 1e-3, f"the stack is at rest at the end (max vertex speed {speed:.1e} m/s)")
claim(ok_heights, "each box's top is at the sum of the stacked sizes within (k+1) d̂ + the elastic compression")
claim(ok_gaps, "each interface gap is within 0.2 d̂ of the gap the barrier needs to carry the weight above")
com = [(x_end[body == k] * mass[body == k, None]).sum(0) / M[k] for k in range(nb)]
offs = [float(np.hypot(com[k][0] - com[k - 1][0], com[k][2] - com[k - 1][2])) for k in range(1, nb)]
print("horizontal offset of each box's centre from the one below (m): " + ", ".join(f"{o:.4f}" for o in offs))
claim(all(o < 0.5 * min(bodies[k]["mesh"]["size"][0], bodies[k]["mesh"]["size"][2]) for k, o in
          zip(range(nb - 1), offs)), "every box rests on the one below (centre inside its footprint)")

if no_plot:
    sys.exit(0 if ok else 1)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axs = plt.subplots(1, 3, figsize=(13, 3.8))
    ax = axs[0]
    for k in range(nb):
        com_y = (xf[:, body == k, 1] * mass[body == k][None, :]).sum(1) / M[k]
        ax.plot(tf, com_y, label=bodies[k]["name"])
    ax.set_xlabel("t (s)")
    ax.set_ylabel("centre-of-mass height (m)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    ax = axs[1]
    ax.plot(st["time"], ni, lw=0.8)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("Newton iterations per step")
    ax.set_title(f"mean {ni.mean():.2f}, max {ni.max()}", fontsize=10)
    ax.grid(alpha=0.3)
    ax = axs[2]
    md = np.where(np.isfinite(st["min_distance"]), st["min_distance"], np.nan)
    ax.semilogy(st["time"], md / dhat, lw=0.8)
    ax.set_xlabel("t (s)")
    ax.set_ylabel("min distance / d̂")
    ax.set_title(f"intersections: {int(st['intersections'].max())} in every step", fontsize=10)
    ax.grid(alpha=0.3)
    fig.suptitle("drop_stack: four soft boxes dropped onto a half-space (μ = %g)" % scene["contact"]["mu"])
    fig.tight_layout()
    fig.savefig(os.path.join(out, "drop_stack.png"), dpi=120)
    print("wrote", os.path.join(out, "drop_stack.png"))
except ImportError:
    print("matplotlib missing: no plot")
sys.exit(0 if ok else 1)
