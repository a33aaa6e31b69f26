#!/usr/bin/env python3
"""Analysis of experiments/drop_stack: soft boxes dropped onto each other and onto a half-space.
Reads OUTDIR/drop_stack.h5 (or the run file given after OUTDIR), prints per-step solver
statistics and the final stack against the stacked sizes (barrier gap and elastic compression
predicted independently), writes OUTDIR/drop_stack.png, exits 1 if a claim of README.md fails."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from contactlab.physics import barrier_pressure_float, bisect  # noqa: E402

args = cli.parser(__doc__, "plots/out/drop_stack", runs=True).parse_args()
out = args.outdir
if len(args.runs) > 1:
    sys.exit("analyze.py: one run file at most")
run = runs.load(args.runs[0] if args.runs else os.path.join(out, "drop_stack.h5"))
scene = run.scene
st = {k: run.steps[k] for k in ("time", "newton_iters", "line_search_iters", "intersections",
                                "min_distance", "ccd_alpha_min", "wall_s", "n_active")}
body = run.mesh["vertex_body"]
mass = run.mesh["mass"]
tf = run.frames["time"]
xf = run.frames["x"]
kappa_log = run.model.get("kappa")

g = -scene["gravity"][1]
dhat = scene["contact"]["dhat"]
bodies = scene["bodies"]
nb = len(bodies)
E = [b["material"]["E"] for b in bodies]
kappa = params.value(run, "kappa")  # at the start of the run (as resolved, if the scene leaves it "auto")
if kappa_log is not None and np.ptp(kappa_log) > 0:
    print(f"note: kappa changed during the run ({kappa_log.min():g} .. {kappa_log.max():g} Pa)")

claims = Claims()


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
claims.check(n_steps == expect_steps, f"the run completed all {expect_steps} steps")
claims.check(int(st["intersections"].max()) == 0, "/steps/intersections is 0 for every step")
claims.check(np.min(st["min_distance"]) > 0, "min distance > 0 in every step")

# ---- the final stack ----
# Independent prediction: box k lies flat on box k-1 (on the floor for k = 0). The interface
# below box k carries the weight W_k of boxes k..n-1 over the bottom area A_k of box k (each
# box is smaller than the one below and lies within it), so its gap solves
# p = κ (−b'(g)), b(d) = −d̂ (d/d̂ − 1)² ln(d/d̂) (the barrier's pressure law; convergent set
# and half-space both integrate it once over the contact area). Box k is shortened by
# uniaxial compression δ_k = (W_{k+1} + m_k g / 2) H_k / (E A_k) (mean stress over its height).


def gap_for(p):
    """The gap where the barrier pressure is p (it decreases monotonically from +inf to 0 on (0, d̂))."""
    return bisect(lambda gap: barrier_pressure_float(gap, dhat, kappa) > p, 1e-12 * dhat, dhat)


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
claims.check(speed < 1e-3, f"the stack is at rest at the end (max vertex speed {speed:.1e} m/s)")
claims.check(ok_heights, "each box's top is at the sum of the stacked sizes within (k+1) d̂ + the elastic compression")
claims.check(ok_gaps, "each interface gap is within 0.2 d̂ of the gap the barrier needs to carry the weight above")
com = [(x_end[body == k] * mass[body == k, None]).sum(0) / M[k] for k in range(nb)]
offs = [float(np.hypot(com[k][0] - com[k - 1][0], com[k][2] - com[k - 1][2])) for k in range(1, nb)]
print("horizontal offset of each box's centre from the one below (m): " + ", ".join(f"{o:.4f}" for o in offs))
claims.check(all(o < 0.5 * min(bodies[k]["mesh"]["size"][0], bodies[k]["mesh"]["size"][2]) for k, o in
                 zip(range(nb - 1), offs)), "every box rests on the one below (centre inside its footprint)")

plt = None if args.no_plot else figures.pyplot()
if plt:
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
    figures.save(fig, out, "drop_stack.png")
sys.exit(claims.summary())
