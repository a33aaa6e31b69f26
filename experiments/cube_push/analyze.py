#!/usr/bin/env python3
"""Analysis of experiments/cube_push: centre-of-mass travel of a cube pushed over a frictionless
triangulated floor against the ideal F t²/(2m), for the ipc2020 and convergent collision sets and imls.
Reads OUTDIR/*.h5 written by run.sh, writes OUTDIR/cube_push.dat and .png, prints the table,
exits 1 if a claim of README.md fails. With --quick: the runs of the QUICK variant (run.sh),
the claims that need only them."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, runs as runfiles  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/cube_push", quick=True).parse_args()
out = args.outdir
RUNS = ["conv_F0.3", "ipc_F0.3", "conv_F1", "ipc_F1", "conv_F0", "ipc_F0",
        "conv_incomm_F0.3", "ipc_incomm_F0.3", "conv2_F0.3", "conv2_F0",
        "imls_F0.3", "imls_F1", "imls_F0", "imls_incomm_F0.3"]
if args.quick:  # no F = 1 N pair, no ipc2020 control (README.md, "QUICK")
    RUNS = ["conv_F0.3", "ipc_F0.3", "conv_F0", "conv_incomm_F0.3", "ipc_incomm_F0.3", "imls_F0.3"]


def load(name):
    """The measurements of one run: centre-of-mass travel, its velocity, contact force, solver statistics."""
    run = runfiles.load(os.path.join(out, name + ".h5"))
    scene = run.scene
    mass = run.mesh["mass"]
    body = run.mesh["vertex_body"]
    t = run.frames["time"]
    x = run.frames["x"]
    steps = run.steps
    fc = run.probes["contact_force"]
    cube = body == 0
    m = mass[cube].sum()
    com = (x[:, cube, :] * mass[cube][None, :, None]).sum(axis=1) / m
    F = scene["bodies"][0]["loads"][1]["force"][0]
    h = scene["time"]["dt"]
    T = t[-1]
    dx = com[:, 0] - com[0, 0]
    ideal = F * T**2 / (2 * m)
    v = np.gradient(dx, t)
    # mean velocity over the last quarter of the run: whether the cube still travels (a stalled
    # cube rocks against its wall; the velocity of the last frame interval measures the rocking)
    k4 = int(np.searchsorted(t, 0.75 * T))
    v_last = (dx[-1] - dx[k4]) / (T - t[k4])
    return dict(v_last=v_last, name=name, set=scene["contact"].get("collision_set", scene["contact"]["model"]), F=F, m=m, h=h, T=T, t=t, dx=dx,
                dz=com[:, 2] - com[0, 2], ideal=ideal, ratio=dx[-1] / ideal if F else math.nan,
                v_end=v[-1], newton_mean=steps["newton_iters"].mean(), newton_max=int(steps["newton_iters"].max()),
                inter=int(steps["intersections"].max()), dmin=float(np.min(steps["min_distance"])),
                wall=float(steps["wall_s"].sum()), fx=float(fc[:, 0].mean()), fy=float(fc[len(fc) // 2:, 1].mean()),
                floor_cells=scene["bodies"][1]["mesh"]["cells"])


runs = {n: load(n) for n in RUNS if os.path.exists(os.path.join(out, n + ".h5"))}
missing = [n for n in RUNS if n not in runs]

claims = Claims()

hdr = (" run                F (N)  floor      Δx_com(T) (m)  F T²/2m (m)  ratio    v(T) (m/s)  Δz_com (m)  "
       "<f_x> contact (N)  Newton mean/max  min dist (m)  wall (s)")
print(hdr)
with open(os.path.join(out, "cube_push.dat"), "w") as fo:
    fo.write("# run F_N dx_com_m ideal_m ratio v_end newton_mean newton_max intersections min_distance wall_s "
             "mean_contact_fx_N\n")
    for n in RUNS:
        if n not in runs:
            continue
        r = runs[n]
        fl = "x".join(str(c) for c in r["floor_cells"])
        print(f" {n:<18} {r['F']:<5}  {fl:<9}  {r['dx'][-1]:+.5f}       {r['ideal']:.5f}      "
              f"{r['ratio']:7.4f}  {r['v_end']:+.4f}     {r['dz'][-1]:+.1e}    {r['fx']:+.2e}          "
              f"{r['newton_mean']:.2f} / {r['newton_max']:<3}       {r['dmin']:.2e}      {r['wall']:.1f}")
        fo.write(f"{n} {r['F']} {r['dx'][-1]:.6e} {r['ideal']:.6e} {r['ratio']:.5f} {r['v_end']:.5e} "
                 f"{r['newton_mean']:.3f} {r['newton_max']} {r['inter']} {r['dmin']:.4e} {r['wall']:.2f} "
                 f"{r['fx']:.4e}\n")

any_r = next(iter(runs.values()), None)
if any_r:
    print(f" m = {any_r['m']:.6f} kg, T = {any_r['T']:.3f} s, h = {any_r['h']} s: implicit Euler's exact "
          f"x_n = F t_n(t_n + h)/2m, i.e. ratio 1 + h/T = {1 + any_r['h'] / any_r['T']:.4f}; "
          f"normal load {runs[RUNS[0]]['fy'] if RUNS[0] in runs else float('nan'):.2f} N")

claims.check(not missing, "all runs present" + (f" (missing: {', '.join(missing)})" if missing else ""))
for n, r in runs.items():
    claims.check(r["inter"] == 0, f"{n}: no intersections in any step")
# The convergent set (README, "Tolerance"): a frictionless flat floor can only push vertically, so
# the cube must follow implicit Euler's exact x_n = F t_n(t_n + h)/2m, ratio 1 + h/T; allowed: 1 %
# of the travel (a mean horizontal contact force of 1 % of the push). And with no push it stays put.
for n in ("conv_F0.3", "conv_F1", "conv_incomm_F0.3"):
    if n in runs:
        r = runs[n]
        ie = 1 + r["h"] / r["T"]
        claims.check(abs(r["ratio"] - ie) <= 0.01,
                     f"{n}: convergent set follows implicit Euler's F t(t + h)/2m: |ratio − (1 + h/T)| = "
                     f"{abs(r['ratio'] - ie):.1e} <= 0.01")
# IMLS (the paper's claim, Fig. 5: the cube travels the ideal distance; acceptance: within 2 % of 1), and
# as for the convergent set, implicit Euler's closed form within 1 % of the travel
for n in ("imls_F0.3", "imls_F1", "imls_incomm_F0.3"):
    if n in runs:
        r = runs[n]
        ie = 1 + r["h"] / r["T"]
        claims.check(abs(r["ratio"] - 1) <= 0.02, f"{n}: imls travels the ideal distance: |ratio − 1| = "
                     f"{abs(r['ratio'] - 1):.1e} <= 0.02")
        claims.check(abs(r["ratio"] - ie) <= 0.01, f"{n}: imls follows implicit Euler's F t(t + h)/2m: "
                     f"|ratio − (1 + h/T)| = {abs(r['ratio'] - ie):.1e} <= 0.01")
if "imls_F0" in runs and "imls_F0.3" in runs:
    r, ideal = runs["imls_F0"], runs["imls_F0.3"]["ideal"]
    drift = max(abs(r["dx"][-1]), abs(r["dz"][-1]))
    claims.check(drift <= 1e-3 * ideal, f"imls_F0: with no push the cube stays put (drift {drift:.1e} m <= 1e-3 × "
                                        f"the F = 0.3 N travel = {1e-3 * ideal:.1e} m)")
if "conv_F0" in runs and "conv_F0.3" in runs:
    r, ideal = runs["conv_F0"], runs["conv_F0.3"]["ideal"]
    drift = max(abs(r["dx"][-1]), abs(r["dz"][-1]))
    claims.check(drift <= 1e-3 * ideal, f"conv_F0: with no push the cube stays put (drift {drift:.1e} m <= 1e-3 × "
                                        f"the F = 0.3 N travel = {1e-3 * ideal:.1e} m)")
if "conv2_F0.3" in runs:
    r = runs["conv2_F0.3"]
    print(f"info  conv2_F0.3 (kinematic_quadrature two_sided): ratio {r['ratio']:.4f}, |ratio − (1 + h/T)| = "
          f"{abs(r['ratio'] - 1 - r['h'] / r['T']):.1e}; mean contact x-force {r['fx']:+.2e} N")
if "ipc_F0.3" in runs:
    r = runs["ipc_F0.3"]
    claims.check(r["ratio"] < 0.5 and abs(r["v_last"]) < 1e-3,
                 f"ipc_F0.3: ipc2020 grinds to a halt (ratio {r['ratio']:.4f}; mean velocity over the last quarter "
                 f"{r['v_last']:+.1e} m/s, v(T) = {r['v_end']:+.1e} m/s)")
    if "conv_F0.3" in runs:
        claims.check(r["ratio"] < runs["conv_F0.3"]["ratio"] - 0.1, "F = 0.3 N: ipc2020 travels less than convergent")
if "ipc_incomm_F0.3" in runs and "conv_incomm_F0.3" in runs:
    a, b = runs["ipc_incomm_F0.3"]["ratio"], runs["conv_incomm_F0.3"]["ratio"]
    claims.check(a < b - 0.1, f"incommensurate floor, F = 0.3 N: ipc2020 slowed ({a:.3f}) against convergent ({b:.3f})")
for n in ("conv_F0", "ipc_F0", "conv2_F0", "imls_F0"):
    if n in runs and "conv_F0.3" in runs:
        r = runs[n]
        frac = abs(r["dx"][-1]) / runs["conv_F0.3"]["ideal"]
        print(f"info  {n}: drift with no push {r['dx'][-1]:+.2e} m in x, {r['dz'][-1]:+.2e} m in z "
              f"({frac:.1%} of the F = 0.3 N ideal travel); mean contact x-force {r['fx']:+.2e} N "
              f"= {r['fx'] / r['fy']:+.1e} of the normal force")

plt = None if args.no_plot else figures.pyplot()
if plt:
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, names, title in (
            (axs[0], ["conv_F0.3", "ipc_F0.3", "conv_F1", "ipc_F1", "conv2_F0.3", "imls_F0.3", "imls_F1"],
             "floor cells = cube cells, offset"),
            (axs[1], ["conv_incomm_F0.3", "ipc_incomm_F0.3", "imls_incomm_F0.3", "conv_F0", "ipc_F0", "imls_F0"],
             "incommensurate floor (F = 0.3 N); F = 0 controls")):
        for n in names:
            if n not in runs:
                continue
            r = runs[n]
            style = {"convergent": "-", "imls": "-."}.get(r["set"], "--")
            ax.plot(r["t"], r["dx"], style, label=f"{r['set']}{' (two-sided floor)' if n.startswith('conv2') else ''}, F = {r['F']} N")
            if r["F"]:
                ax.plot(r["t"], r["F"] * r["t"] ** 2 / (2 * r["m"]), "k:", lw=0.8)
        ax.set_xlabel("t (s)")
        ax.set_ylabel("x_com(t) − x_com(0) (m)")
        ax.set_title(title, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("cube pushed over a frictionless triangulated floor (dotted: F t²/2m)")
    figures.save(fig, out, "cube_push.png")
sys.exit(claims.summary())
