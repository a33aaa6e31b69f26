#!/usr/bin/env python3
"""Analysis of experiments/imls_drop: a soft cube dropped on a soft clamped plate with models imls and ipc
(convergent set). Reads OUTDIR/{imls,ipc}_rK.h5 written by run.sh (K = 1, 2, ...: rounds of imls then ipc,
one process at a time), prints the table of README.md (DoF, time and contact work per Newton iteration,
active terms, Newton iterations, samples in support) beside Du et al. 2023's Table 1 row, checks the claims
(exit 1 if one fails) and writes OUTDIR/imls_drop.dat and imls_drop.png. With --quick: the QUICK variant's
two runs (run side by side: the physical claims, no timing claim)."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, runs as runfiles  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/imls_drop", quick=True).parse_args()
out = args.outdir
MODELS = ("imls", "ipc")
# Du et al. 2023, Table 1, the row of Fig. 8 (8-core desktop)
PAPER = dict(dof=51978, s_per_newton=13.3, newton_per_step=13.6)
REST_WINDOW = 0.2   # s: the last 0.2 s of the run are "at rest"
TOL_WEIGHT = 0.02   # contact force over the rest window within 2 % of the weight
TOL_KE = 0.01       # kinetic energy at the end <= 1 % of its peak
TOL_MOMENTUM = 1e-4 # momentum balance, relative to m g T
RATIO_MAX = 2.0     # the issue's acceptance: imls contact work per Newton iteration <= 2 x ipc's


def per_iter(steps, cols):
    """Per step: the summed columns / the step's Newton iterations (s); and the run's mean (sum / sum)."""
    it = np.maximum(steps["newton_iters"], 1)
    t = sum(steps[c] for c in cols)
    return t / it, float(t.sum() / steps["newton_iters"].sum())


WORK = ("t_contact", "t_ccd", "t_contact_assembly")  # the model's ops + mapping its Hessian (bench/README.md)


def load(path):
    run = runfiles.load(path)
    st, pr, mesh = run.steps, run.probes, run.mesh
    body = mesh["vertex_body"] == 0
    mass, X = mesh["mass"], mesh["X"]
    m = float(mass[body].sum())
    g = -run.scene["gravity"][1]
    h, T = run.scene["time"]["dt"], run.scene["time"]["duration"]
    t = st["time"]
    W = m * g
    fc = pr["contact_force"]  # force on the body from the plate (N)
    # fixed dofs: the plate's rim (sides ±x, ±z)
    pl = ~body
    Xp = X[pl]
    rim = (np.isclose(Xp[:, 0], Xp[:, 0].min()) | np.isclose(Xp[:, 0], Xp[:, 0].max())
           | np.isclose(Xp[:, 2], Xp[:, 2].min()) | np.isclose(Xp[:, 2], Xp[:, 2].max()))
    nv = len(X)
    # kinetic energies and momentum of the body from the frames (every few steps)
    ft, fv, fx = run.frames["time"], run.frames["v"], run.frames["x"]
    ke = np.array([0.5 * float((mass[:, None] * v ** 2).sum()) for v in fv])
    P = np.array([(mass[body, None] * v[body]).sum(axis=0) for v in fv])
    # implicit Euler for the body's momentum: P(T) - P(0) = sum_n h (f_c(x^{n+1}) + m gvec)
    imp = h * (fc.sum(axis=0) + len(t) * m * np.array(run.scene["gravity"]))
    mom_err = float(np.max(np.abs((P[-1] - P[0]) - imp))) if np.isclose(ft[-1], t[-1]) else math.nan
    rest = t > t[-1] - REST_WINDOW + 1e-9
    ypos = pr["position"][:, 1]
    com_x = (mass[body, None] * fx[-1][body]).sum(axis=0) / m
    wk, wk_mean = per_iter(st, WORK)
    tot, tot_mean = per_iter(st, ("wall_s",))
    parts = {c: per_iter(st, (c,)) for c in ("t_contact", "t_ccd", "t_contact_assembly", "t_broadphase", "t_pairs",
                                              "t_factor", "t_analysis")}
    md = run.model
    r = dict(name=os.path.basename(path)[:-3], model=run.attrs["model"], t=t, h=h, T=T, m=m, W=W, fc=fc, ypos=ypos,
             plate=pr["plate_center"].ravel(), ft=ft, ke=ke, mom_err=mom_err, mgT=W * T,
             dof=3 * nv, dof_free=3 * (nv - int(rim.sum())), nsteps=len(t), steps_expected=int(round(T / h)),
             newton=st["newton_iters"], exact=int(st["exact_iters"].sum()), inter=int(st["intersections"].max()),
             dmin=float(np.min(st["min_distance"])), f_rest=float(fc[rest, 1].mean()),
             vy_rest=float(np.abs(pr["velocity"][rest, 1]).max()), ke_end=float(ke[-1]), ke_max=float(ke.max()),
             com_end=com_x, y_end=float(ypos[-1]), work=wk, work_med=float(np.median(wk)), work_mean=wk_mean,
             tot=tot, tot_med=float(np.median(tot)), tot_mean=tot_mean,
             parts={c: (float(np.median(v[0])), v[1]) for c, v in parts.items()},
             active_max=int(st["n_active"].max()), analyses=int(st["n_analyses"][-1]), wall=float(st["wall_s"].sum()))
    if "active_terms" in md:
        r.update(terms_max=int(np.max(md["active_terms"])), sup_max=int(np.max(md["max_support"])),
                 sup_mean=float(np.sum(md["mean_support"] * md["active_terms"]) / max(np.sum(md["active_terms"]), 1)),
                 list_builds=int(np.sum(md["list_builds"])))
    return r


files = {mo: runfiles.paths(out, f"{mo}_r*.h5", key=lambda p: int(p.rsplit("_r", 1)[1][:-3])) for mo in MODELS}
runs = {mo: [load(p) for p in files[mo]] for mo in MODELS}
claims = Claims()
claims.check(all(runs[mo] for mo in MODELS) and len(runs["imls"]) == len(runs["ipc"]),
             "runs present: " + ", ".join(f"{mo} × {len(runs[mo])}" for mo in MODELS))
if not all(runs[mo] for mo in MODELS):
    sys.exit(claims.summary())
first = {mo: runs[mo][0] for mo in MODELS}

# ---- the table
print(f" body mass {first['imls']['m']:.3f} kg, weight {first['imls']['W']:.2f} N; h = {first['imls']['h']} s, "
      f"T = {first['imls']['T']} s; {len(runs['imls'])} round(s) of imls then ipc"
      + (" (QUICK: side by side, timings indicative only)" if args.quick else " (one process at a time)"))
hdr = (" model  DoF (free)      Newton/step mean/max  total ms/it  contact work ms/it median (mean)  "
       "active max  support mean/max  intersections  min dist (m)")
print(hdr)
print(f" paper  {PAPER['dof']:<15} {PAPER['newton_per_step']:<4} / -            {1e3 * PAPER['s_per_newton']:.0f}        "
      "-  (Du et al. 2023 Table 1, Fig. 8: 8-core desktop)")
for mo in MODELS:
    r = first[mo]
    tm = np.median([x["tot_med"] for x in runs[mo]])
    wm = np.median([x["work_med"] for x in runs[mo]])
    wmean = np.median([x["work_mean"] for x in runs[mo]])
    sup = f"{r['sup_mean']:.1f} / {r['sup_max']}" if "sup_max" in r else "-"
    act = f"{r['terms_max']} terms" if "terms_max" in r else f"{r['active_max']} pairs"
    print(f" {mo:<6} {r['dof']} ({r['dof_free']})  {r['newton'].mean():5.2f} / {r['newton'].max():<3}          "
          f"{1e3 * tm:7.2f}      {1e3 * wm:6.2f} ({1e3 * wmean:5.2f})                   {act:<11} {sup:<17} "
          f"{r['inter']:<14} {r['dmin']:.2e}")

# ---- where the contact time goes (medians over the steps of ms per Newton iteration; the run's means in brackets)
print(" per Newton iteration, ms, median over steps (run mean): t_contact = the model's energy/gradient/Hessian "
      "calls, t_ccd = max_step, t_contact_assembly = mapping its Hessian triplets; t_broadphase, t_pairs: the "
      "model's own accounts inside them")
for mo in MODELS:
    for x in runs[mo]:
        print(f"   {x['name']:<8} " + "  ".join(f"{c[2:]} {1e3 * v[0]:.2f} ({1e3 * v[1]:.2f})" for c, v in x["parts"].items())
              + f"  analyses {x['analyses']}  wall {x['wall']:.1f} s")

with open(os.path.join(out, "imls_drop.dat"), "w") as fo:
    fo.write("# run model dof dof_free newton_mean newton_max total_ms_per_it_median contact_work_ms_per_it_median "
             "contact_work_ms_per_it_mean active_max terms_max support_mean support_max intersections min_distance_m "
             "f_rest_over_weight ke_end_J ke_max_J\n")
    for mo in MODELS:
        for x in runs[mo]:
            fo.write(f"{x['name']} {mo} {x['dof']} {x['dof_free']} {x['newton'].mean():.3f} {x['newton'].max()} "
                     f"{1e3 * x['tot_med']:.3f} {1e3 * x['work_med']:.3f} {1e3 * x['work_mean']:.3f} {x['active_max']} "
                     f"{x.get('terms_max', -1)} {x.get('sup_mean', math.nan):.3f} {x.get('sup_max', -1)} {x['inter']} "
                     f"{x['dmin']:.4e} {x['f_rest'] / x['W']:.5f} {x['ke_end']:.4e} {x['ke_max']:.4e}\n")

# ---- claims
for mo in MODELS:
    for x in runs[mo]:
        claims.check(x["nsteps"] == x["steps_expected"], f"{x['name']}: every step done ({x['nsteps']} of "
                                                         f"{x['steps_expected']})")
for mo in MODELS:
    r = first[mo]
    same = all(np.array_equal(x["newton"], r["newton"]) for x in runs[mo])
    claims.report(same, f"{mo}: the rounds take the same Newton iterations in every step (the same trajectory)")
    claims.check(r["inter"] == 0, f"{mo}: no intersections in any step (exact verifier)", measured=r["inter"])
    claims.check(r["mom_err"] <= TOL_MOMENTUM * r["mgT"],
                 f"{mo}: momentum balance of the body, |ΔP − Σ h (f_contact + m g)| = {r['mom_err']:.1e} N s "
                 f"<= {TOL_MOMENTUM:g} m g T = {TOL_MOMENTUM * r['mgT']:.1e} N s (the force report is the force the "
                 f"step applied)")
    claims.check(abs(r["f_rest"] / r["W"] - 1) <= TOL_WEIGHT,
                 f"{mo}: at rest the contact force carries the weight: mean f_y over the last {REST_WINDOW} s "
                 f"{r['f_rest']:.2f} N = {r['f_rest'] / r['W']:.4f} m g (within {TOL_WEIGHT:.0%})")
    claims.check(r["ke_end"] <= TOL_KE * r["ke_max"],
                 f"{mo}: the bodies come to rest: kinetic energy at T {r['ke_end']:.1e} J <= {TOL_KE:g} × its peak "
                 f"{r['ke_max']:.2f} J (max |v_y| of the body's mean velocity over the last {REST_WINDOW} s: "
                 f"{r['vy_rest']:.1e} m/s)")
a, b = first["imls"], first["ipc"]
print(f"info  at T: body centre imls ({a['com_end'][0]:+.4f}, {a['com_end'][1]:.4f}, {a['com_end'][2]:+.4f}) m, ipc "
      f"({b['com_end'][0]:+.4f}, {b['com_end'][1]:.4f}, {b['com_end'][2]:+.4f}) m (start (0.0100, 0.1400, 0.0200)); "
      f"plate centre sag imls {a['plate'][-1]:.5f} m, ipc {b['plate'][-1]:.5f} m")
ratios_med = [x["work_med"] / y["work_med"] for x, y in zip(runs["imls"], runs["ipc"])]
ratios_mean = [x["work_mean"] / y["work_mean"] for x, y in zip(runs["imls"], runs["ipc"])]
rmed = float(np.median(ratios_med))
txt = (f"contact work per Newton iteration imls / ipc (t_contact + t_ccd + t_contact_assembly): median over steps "
       f"{rmed:.2f} (rounds: {', '.join(f'{v:.2f}' for v in ratios_med)}), run means "
       f"{np.median(ratios_mean):.2f} (rounds: {', '.join(f'{v:.2f}' for v in ratios_mean)}) <= {RATIO_MAX:g}")
if args.quick:
    claims.report(rmed <= RATIO_MAX, txt + " (QUICK: runs side by side, not a claim)")
else:
    claims.check(rmed <= RATIO_MAX, txt)

plt = None if args.no_plot else figures.pyplot()
if plt:
    fig, axs = plt.subplots(1, 3, figsize=(14, 4.0))
    for mo, style, col in (("imls", "-", "C0"), ("ipc", "--", "C1")):
        r = first[mo]
        axs[0].plot(r["t"], r["ypos"], style, color=col, label=f"{mo}: body (mean of its vertices)")
        axs[0].plot(r["t"], r["plate"], style, color=col, lw=0.8, label=f"{mo}: plate centre (top)")
        axs[1].plot(r["t"], r["fc"][:, 1] / r["W"], style, color=col, label=mo)
        for k, x in enumerate(runs[mo]):
            axs[2].plot(x["t"], 1e3 * x["work"], style, lw=0.8, color=col,
                        label=f"{mo} (each round)" if k == 0 else None)
    axs[0].set_ylabel("y (m)")
    axs[1].set_ylabel("contact force f_y / m g")
    axs[1].axhline(1.0, color="k", lw=0.6, ls=":")
    axs[2].set_ylabel("contact work per Newton iteration (ms)")
    axs[2].set_yscale("log")
    for ax in axs:
        ax.set_xlabel("t (s)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("soft cube dropped on a soft clamped plate: imls vs ipc (convergent), d̂ = 1 mm, κ = 10 kPa")
    figures.save(fig, out, "imls_drop.png")
sys.exit(claims.summary())
