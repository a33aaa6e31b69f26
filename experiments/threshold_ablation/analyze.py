#!/usr/bin/env python3
"""Analysis of experiments/threshold_ablation: counts the cubes that came up with the gel in each
run OUTDIR/run_*.h5 (cube centre more than RISE above its start at the end), reports the peak
gel–cube adhesion force per cube against its weight, Newton iterations per step (mean, max),
the smallest distance and the wall time; writes OUTDIR/threshold_ablation.png and .dat; exits 1 if
a claim of README.md fails."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params as logged, runs as runfiles  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/threshold_ablation").parse_args()
out = args.outdir
RISE = 3e-3  # m: the gel lifts by 6 mm after the hold; a cube left on the plate does not move up
ORDER = ["da1e-3", "da1e-4", "da1e-5", "sp0.25", "sp0.5", "sp0.75", "da1e-5_tol1e-5"]
MAIN = ORDER[:6]
claims = Claims()

runs = {}
for name in ORDER:
    path = os.path.join(out, f"run_{name}.h5")
    if not os.path.exists(path):
        print(f"missing {path}")
        continue
    run = runfiles.load(path)
    sc = run.scene
    r = dict(scene=sc, t=run.steps["time"], newton=run.steps["newton_iters"],
             inter=run.steps["intersections"], wall=run.steps["wall_s"],
             dmin=run.steps["min_distance"], body=run.mesh["vertex_body"], mass=run.mesh["mass"],
             x0=run.frames["x"][0], X=run.mesh["X"])
    names = [b["name"] for b in sc["bodies"]]
    cubes = [i for i, n in enumerate(names) if n.startswith("cube")]
    r["cubes"] = cubes
    r["y"] = np.array([run.probes[f"c{k}"][:, 1] for k in range(len(cubes))])
    r["adh"] = np.array([run.probes[f"adh{k}"] for k in range(len(cubes))])
    r["lift"] = run.probes["lift_force"]
    dhat, dp, da = logged.values(run, "dhat", "dhat_p", "dhat_a")  # as the run logged them
    r.update(name=name, dhat=dhat, da=da, dp=dp, tol=sc["solver"]["newton_tol"])
    g = -sc["gravity"][1]
    r["m"] = np.array([r["mass"][r["body"] == i].sum() for i in cubes])
    r["W"] = r["m"] * g
    r["y_start"] = np.array([(r["x0"][r["body"] == i, 1] * r["mass"][r["body"] == i]).sum() / r["m"][k]
                             for k, i in enumerate(cubes)])
    r["rise"] = r["y"][:, -1] - r["y_start"]
    r["lifted"] = r["rise"] > RISE
    motion = sc["bodies"][0]["fixed"]["motion"]
    r["t_lift"] = motion[1]["until"]
    lift = r["t"] > r["t_lift"]
    r["peak"] = r["adh"][:, lift].max(1)  # largest gel–cube adhesion force while lifting
    r["expected_steps"] = int(round(sc["time"]["duration"] / sc["time"]["dt"]))
    runs[name] = r

if not runs:
    sys.exit("no runs")
any_r = next(iter(runs.values()))
sc = any_r["scene"]
E_gel = sc["bodies"][0]["material"]["E"]
yeps = E_gel * sc["contact"]["eps_c"]
L = [sc["bodies"][i]["mesh"]["size"] for i in any_r["cubes"]]
cap = np.array([yeps * s[0] * s[2] for s in L])  # Y·ε_c × top area: the nominal adhesion capacity
print(f"gel E = {E_gel:g} Pa, ε_c = {sc['contact']['eps_c']:g}: Y·ε_c = {yeps:g} Pa; cubes "
      + ", ".join(f"{sc['bodies'][i]['name']} ρ = {sc['bodies'][i]['material']['density']:g} "
                  f"(m g = {W * 1e3:.2f} mN, Y·ε_c·A_top/(m g) = {c / W:.2f})"
                  for i, W, c in zip(any_r["cubes"], any_r["W"], cap)))
print(f"lifted: cube centre > {RISE * 1e3:g} mm above its start at t = {any_r['t'][-1]:.2f} s "
      f"(the gel's top rises {0.02 * (any_r['t'][-1] - any_r['t_lift']) * 1e3:.0f} mm after the hold)\n")
hdr = (f"{'run':<16} {'d̂ (m)':>8} {'d̂_p (m)':>9} {'d̂_a (m)':>8} {'tol':>6}  lifted  rise per cube (mm)"
       f"{'':14} peak adhesion / m g per cube{'':6} Newton mean  max   min d / d̂   wall (s)")
print(hdr)
for name in ORDER:
    if name not in runs:
        continue
    r = runs[name]
    r["n_lifted"] = int(r["lifted"].sum())
    print(f"{name:<16} {r['dhat']:8.1e} {r['dp']:9.2e} {r['da']:8.1e} {r['tol']:6.0e}  {r['n_lifted']:4d}    "
          + " ".join(f"{v * 1e3:6.2f}" for v in r["rise"]) + "    "
          + " ".join(f"{v:5.2f}" for v in r["peak"] / r["W"])
          + f"     {r['newton'].mean():6.2f}  {r['newton'].max():4d}   {np.nanmin(r['dmin']) / r['dhat']:9.2e}   "
          f"{r['wall'].sum():6.1f}")
main = [runs[n] for n in MAIN if n in runs]
claims.check(len(main) == 6 and all(len(r["t"]) == r["expected_steps"] for r in main), "all six settings ran to the end")
claims.check(all(r["inter"].max() == 0 for r in runs.values()), "no intersection in any step of any run")
counts = [r["n_lifted"] for r in main]
print(f"cubes lifted over the six settings: {counts}")
claims.check(max(counts) - min(counts) <= 1, "the number of cubes lifted is the same or within one across the six settings")
same = max(counts) == min(counts)
claims.report(same, f"the number of cubes lifted is {'exactly the same' if same else 'NOT exactly the same'} "
                    f"across the six settings")
mono = all(all(not r["lifted"][k] or all(r["lifted"][j] for j in range(len(r["W"])) if r["W"][j] < r["W"][k])
               for k in range(len(r["W"]))) for r in main)
claims.check(mono, "in every run the lifted cubes are the lightest ones (a lighter cube never stays when a heavier one lifts)")
if "da1e-5" in runs and "da1e-5_tol1e-5" in runs:
    a, b = runs["da1e-5"], runs["da1e-5_tol1e-5"]
    print(f"d̂_a = 1e-5 with Newton tolerance {b['tol']:g} instead of {a['tol']:g}: lifted {b['n_lifted']} vs "
          f"{a['n_lifted']}, peak adhesion / m g {np.round(b['peak'] / b['W'], 3).tolist()} vs "
          f"{np.round(a['peak'] / a['W'], 3).tolist()}; Newton mean {b['newton'].mean():.2f} vs {a['newton'].mean():.2f}")
total = sum(r["wall"].sum() for r in main)
print(f"wall time of the six settings: {total:.0f} s (single thread)")

with open(os.path.join(out, "threshold_ablation.dat"), "w") as fo:
    fo.write("# run dhat dhat_p dhat_a newton_tol n_lifted newton_mean newton_max wall_s rise_mm(per cube) "
             "peak_adhesion_over_weight(per cube)\n")
    for name in ORDER:
        if name in runs:
            r = runs[name]
            fo.write(f"{name} {r['dhat']:.3e} {r['dp']:.3e} {r['da']:.3e} {r['tol']:.0e} {r['n_lifted']} "
                     f"{r['newton'].mean():.3f} {r['newton'].max()} {r['wall'].sum():.2f} "
                     + " ".join(f"{v * 1e3:.4f}" for v in r["rise"]) + " "
                     + " ".join(f"{v:.4f}" for v in r["peak"] / r["W"]) + "\n")

plt = None if args.no_plot else figures.pyplot()
if not plt:
    sys.exit(claims.summary())

labels = {"da1e-3": "d̂_a=1e-3", "da1e-4": "d̂_a=1e-4", "da1e-5": "d̂_a=1e-5",
          "sp0.25": "s_p=0.25", "sp0.5": "s_p=0.5", "sp0.75": "s_p=0.75", "da1e-5_tol1e-5": "d̂_a=1e-5, tol 1e-5"}
fig, axs = plt.subplots(1, 3, figsize=(17, 4.8))
ax = axs[0]
nc = len(any_r["W"])
w = 0.8 / len(main)
for j, r in enumerate(main):
    ax.bar(np.arange(nc) + (j - (len(main) - 1) / 2) * w, r["rise"] * 1e3, w,
           label=f"{labels[r['name']]}: {r['n_lifted']} lifted")
ax.axhline(RISE * 1e3, color="0.3", lw=0.8, ls="--")
ax.set_xticks(range(nc))
ax.set_xticklabels([f"{sc['bodies'][i]['name']}\nρ={sc['bodies'][i]['material']['density']:g}\n"
                    f"Yε_cA/mg={c / W:.2f}" for i, c, W in zip(any_r["cubes"], cap, any_r["W"])], fontsize=8)
ax.set_ylabel("rise of the cube centre at the end (mm)")
ax.set_title("cubes taken up by the gel (dashed: 'lifted' threshold)", fontsize=10)
ax.legend(fontsize=8)
ax.grid(alpha=0.3, axis="y")
ax = axs[1]
for j, r in enumerate(main):
    ax.bar(np.arange(nc) + (j - (len(main) - 1) / 2) * w, r["peak"] / r["W"], w, label=labels[r["name"]])
ax.axhline(1, color="0.3", lw=0.8, ls="--")
ax.set_yscale("log")
ax.set_xticks(range(nc))
ax.set_xticklabels([sc["bodies"][i]["name"] for i in any_r["cubes"]])
ax.set_ylabel("peak gel–cube adhesion force while lifting / m g")
ax.set_title("peak adhesion while lifting / weight (cubes left behind: the bond's strength)", fontsize=10)
ax.grid(alpha=0.3, axis="y")
ax = axs[2]
for r in [runs[n] for n in ORDER if n in runs]:
    ax.plot(r["t"], r["newton"], lw=1 if r["name"] in MAIN else 0.8, ls="-" if r["name"] in MAIN else ":",
            label=f"{labels[r['name']]} (mean {r['newton'].mean():.1f}, max {r['newton'].max()})")
ax.axvline(any_r["t_lift"], color="0.5", lw=0.6)
ax.set_yscale("log")
ax.set_xlabel("t (s)   (press until 0.2 s, hold, lift from 0.3 s)")
ax.set_ylabel("Newton iterations per step")
ax.set_title("Newton iterations per step (Fig. 18)", fontsize=10)
ax.legend(fontsize=7)
ax.grid(alpha=0.3)
fig.suptitle("threshold_ablation: gel (E = %g Pa, ε_c = %g, μ_a = %g) pressed on four cubes and lifted, six threshold settings"
             % (E_gel, sc["contact"]["eps_c"], sc["contact"]["mu_a"]))
figures.save(fig, out, "threshold_ablation.png")
sys.exit(claims.summary())
