#!/usr/bin/env python3
"""Analysis of experiments/rcc_stability: a plate bonded by rcc_ipc (β = 1), opened in one step to
d ≈ 1.5 mm and held, for a sweep of the dimensionless step S = h·C_N·d²/η of the explicit β update
(Fang et al. 2023 eq. 7–8), and of the bonding law under compression (eq. 9, S_b = h·r·p0). Reads
OUTDIR/eta/, OUTDIR/dt/ and OUTDIR/bond/ (scripts/sweep.py: summary.csv and run_<k>.h5), replays the β update per pair from the logged frames (eq. 7–9, evaluated here
independently of the C code), compares with the logged β statistics, the closed forms and the ODE,
prints the tables of README.md, writes OUTDIR/rcc_stability.png (unless --no-plot) and exits 1 if
a claim of README.md fails."""
import csv
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params as logged, physics, runs as runfiles  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/rcc_stability").parse_args()
out = args.outdir
TOL = 1e-12  # round-off on β (values O(1), a few hundred flops per pair and step)
claims = Claims()


# ---------------------------------------------------------------- reading a run
def load(path):
    run = runfiles.load(path)
    sc = run.scene
    r = dict(scene=sc, X=run.mesh["X"], faces=run.mesh["surface_faces"], x=run.frames["x"],
             t=run.steps["time"], inter=run.steps["intersections"], newton=run.steps["newton_iters"],
             wall=run.steps["wall_s"], adh=run.probes["adhesion_normal"][:, 1],
             bottom=run.probes["bottom"][:, 1], reaction=run.probes["reaction"][:, 1])
    g = run.model
    for k in ("beta_mean", "beta_min", "beta_max", "beta_clamped", "rcc_pairs", "rcc_bonded"):
        r[k] = g[k]
    r["hist"] = np.stack([g[f"beta_hist_{i}"] for i in range(10)], axis=1)
    # the law's parameters as the run logged them (/model/<model>: bond_dist, debond_dist as resolved)
    names = dict(cn="c_n", ct="c_t", W="w", eta="eta", r="r", p0="p0", dhat="dhat", kappa="kappa",
                 bond="bond_dist", debond="debond_dist", beta0="beta0")
    r.update({k: logged.value(run, n) for k, n in names.items()}, h=sc["time"]["dt"])
    # the contact quadrature against the half-space (normal +y): quadrature "face" (the default) the
    # area a vertex presents to it, Σ (A_f/3) max(0, c_f)/c_max over its surface triangles with
    # c_f = −n_f·ŷ at the start of each step (rcc_ipc lags them with n̄ in begin_step): the bottom
    # face's own area; "vertex" 1/3 of all its triangles (the rim vertices of the bottom face also
    # carry side faces). w: at rest; w_step[n]: step n's, from frame n.
    X = r["X"]
    quad = logged.choice(run, "quadrature", "vertex")
    r["bidx"] = np.where(X[:, 1] < X[:, 1].min() + 1e-9)[0]
    r["w"] = physics.contact_weights(quad, X, r["faces"], (0.0, 1.0, 0.0))[r["bidx"]]
    r["w_step"] = np.array([physics.contact_weights(quad, X, r["faces"], (0.0, 1.0, 0.0), x=xf)[r["bidx"]]
                            for xf in r["x"][:-1]])
    r["A"] = r["w"].sum()
    size = sc["bodies"][0]["mesh"]["size"]
    r["A_nom"] = size[0] * size[2]
    # frames every step, frame 0 = initial state: row n of /steps (and of the probes) ↔ frame n+1;
    # the β logged in row n was updated at the start of step n from frame n
    assert len(r["x"]) == len(r["t"]) + 1
    r["d1"] = r["bottom"][0]  # mean bottom height after the lift (frame 1): the gap of the hold
    r["a"] = r["cn"] * r["d1"] ** 2
    r["S"] = r["h"] * r["a"] / r["eta"]
    return r


def barrier_pressure(d, P):
    """κ(−b′(d)) per unit area (the ipc model's barrier)."""
    return physics.barrier_pressure(d, P["dhat"], P["kappa"])


def replay(P):
    """Eq. 7–9 per pair (bottom vertex v against the half-space y ≥ 0), from the logged frames:
    at the start of step n, from frame n: gap d = y_v, slip u = lateral displacement since the
    bond formed, pressure p = barrier − C_N β² d; β ← clamp(β + h β̇). Pairs are dropped when
    β = 0 and v is beyond the detection distance (or beyond debond_dist). Returns per step the
    statistics the model logs, the per-pair β and its unclamped value, and the per-pair target W/a."""
    x, b = P["x"], P["bidx"]
    nst = len(P["t"])
    x0 = x[0, b]
    beta = np.where(x0[:, 1] < P["bond"], P["beta0"], 0.0)  # beta0 within bond_dist at t = 0
    alive = np.ones(len(b), bool)
    detect = max(P["dhat"], P["bond"])
    debond = P["debond"]
    R = {k: np.zeros(nst) for k in ("mean", "min", "max", "pairs", "clamped")}
    R["beta"] = np.zeros((nst, len(b)))
    R["raw"] = np.zeros((nst, len(b)))  # the unclamped β + h β̇
    R["target"] = np.zeros((nst, len(b)))  # W / (C_N d² + C_T u²) at the gap of the update
    R["alive"] = np.zeros((nst, len(b)), bool)
    R["p"] = np.zeros((nst, len(b)))  # the pressure of the update (positive in compression)
    R["prev"] = np.zeros((nst, len(b)))  # β before the update
    for n in range(nst):
        d = x[n, b, 1]
        lat = x[n, b][:, [0, 2]] - x0[:, [0, 2]]
        u2 = (lat ** 2).sum(axis=1)
        aa = P["cn"] * d ** 2 + P["ct"] * u2
        p = barrier_pressure(d, P) - P["cn"] * beta ** 2 * d
        rate = np.where(p < 0, np.minimum(P["W"] - beta * aa, 0.0) / P["eta"],
                        P["r"] * np.maximum(p - beta * P["p0"], 0.0)
                        + np.minimum(P["W"] - beta * P["ct"] * u2, 0.0) / P["eta"])
        raw = beta + P["h"] * rate
        R["p"][n], R["prev"][n] = p, beta
        clamped = alive & ((raw < 0) | (raw > 1))
        beta = np.where(alive, np.clip(raw, 0.0, 1.0), 0.0)
        sep = np.sqrt(d ** 2 + u2)
        alive &= ~(((beta <= 0) & (d >= detect)) | (sep > debond))
        bl = beta[alive]
        R["mean"][n] = bl.mean() if bl.size else 0.0
        R["min"][n] = bl.min() if bl.size else 0.0
        R["max"][n] = bl.max() if bl.size else 0.0
        R["pairs"][n] = alive.sum()
        R["clamped"][n] = clamped.sum()
        R["beta"][n] = np.where(alive, beta, 0.0)
        R["raw"][n] = raw
        R["alive"][n] = alive
        R["target"][n] = P["W"] / aa
    return R


def load_sweep(sub):
    path = os.path.join(out, sub)
    with open(os.path.join(path, "summary.csv")) as f:
        rows = list(csv.DictReader(f))
    runs = []
    for row in rows:
        claims.check(row["exit"] == "0", f"{sub}/run_{int(row['run']):03d} exits 0 ({row.get('error') or 'no error'})")
        if row["exit"] != "0":
            continue
        P = load(os.path.join(path, f"run_{int(row['run']):03d}.h5"))
        P["name"] = f"{sub}/run_{int(row['run']):03d}"
        P["sweep"] = sub
        P["R"] = replay(P)
        runs.append(P)
    return runs


runs_eta = load_sweep("eta")
runs_dt = load_sweep("dt")
runs_bond = load_sweep("bond")
runs = runs_eta + runs_dt
if not runs:
    sys.exit("no runs")
P0 = runs_eta[0]
W, cn = P0["W"], P0["cn"]

# ---------------------------------------------------------------- the hold gap
d1 = np.array([P["d1"] for P in runs])
b = P0["bidx"]
yv = P0["x"][1, b, 1]  # per-pair gaps after the lift (the same in every run: β = 1 until then)
a_mean = cn * d1[0] ** 2
u2v = ((P0["x"][1, b][:, [0, 2]] - P0["x"][0, b][:, [0, 2]]) ** 2).sum(axis=1)  # slip since bonding
av = cn * yv ** 2 + P0["ct"] * u2v  # a_v = C_N d_v² + C_T u_v² per pair
wa = W / a_mean
S_clamp = a_mean / (a_mean - W)  # derivation: S > a/(a−W) ⇔ β₁ = 1 − S(1 − W/a) < 0
print(f"\nhold gap after the one-step lift: d = {d1[0]:.7e} m (mean of the {len(b)} bottom vertices), "
      f"spread {yv.min():.7e} … {yv.max():.7e} m; W/a = {wa:.6f}, a/(a−W) = {S_clamp:.6f}")
print(f"effective contact area A = Σ w_v = {P0['A']:.6f} m² ({P0['A'] / P0['A_nom']:.4f} × the nominal "
      f"{P0['A_nom']:.4f} m²)")
print(f"per pair (S of the mean gap): overshoot for S > {a_mean / av.max():.6f} … {a_mean / av.min():.6f}, "
      f"clamp for S > {a_mean / (av.max() - W):.6f} … {a_mean / (av.min() - W):.6f}")
claims.check(np.ptp(d1) < 1e-15, f"the gap after the lift is the same in every run (spread {np.ptp(d1):.1e} m: "
             "the static step with β = 1 does not see η or h)")
claims.check(all(P["inter"].sum() == 0 for P in runs + runs_bond), f"no intersection in any of the {len(runs + runs_bond)} runs")

# ---------------------------------------------------------------- replay vs the model's log
d1_all = d1[0]
worst = 0.0
worst_cnt = 0
for P in runs + runs_bond:
    R = P["R"]
    e = max(np.abs(R["mean"] - P["beta_mean"]).max(), np.abs(R["min"] - P["beta_min"]).max(),
            np.abs(R["max"] - P["beta_max"]).max())
    c = max(np.abs(R["pairs"] - P["rcc_pairs"]).max(), np.abs(R["clamped"] - P["beta_clamped"]).max())
    hist_rows = np.isfinite(P["hist"][:, 0])
    hb = np.zeros((len(R["beta"]), 10))
    for n in range(len(hb)):
        bl = R["beta"][n][R["alive"][n]]
        hb[n] = np.bincount(np.clip((bl * 10).astype(int), 0, 9), minlength=10)
    c = max(c, np.abs(hb[hist_rows] - P["hist"][hist_rows]).max() if hist_rows.any() else 0)
    # the adhesion force report: Σ_v w_v C_N β_v² d_v at the end of step n (frame n+1, β of row n)
    dn = P["x"][1:, b, 1]
    Fr = (P["w_step"] * P["cn"] * R["beta"] ** 2 * dn * R["alive"]).sum(axis=1)
    P["force_err"] = np.abs(Fr + P["adh"]).max() / (P["cn"] * max(d1_all, P["d1"]) * P["A"])
    P["replay_err"] = e
    worst, worst_cnt = max(worst, e), max(worst_cnt, c)
ferr = max(P["force_err"] for P in runs + runs_bond)
claims.check(ferr < 1e-12, f"the logged adhesion_normal force is Σ_v w_v C_N β_v² d_v of the replayed β in every step "
             f"(largest difference {ferr:.1e} of C_N d A)")
claims.check(worst < TOL and worst_cnt == 0,
             f"the per-pair replay of eq. 7–9 from the logged gaps reproduces beta_mean/min/max in every step of "
             f"every run ({len(runs + runs_bond)}) within {worst:.1e} (claim {TOL:g}), and rcc_pairs, beta_clamped and the histogram exactly "
             f"(max count difference {worst_cnt:g})")

# ---------------------------------------------------------------- the table
print(f"\n{'run':<13} {'S':>8} {'h (s)':>6} {'eta':>10} {'beta_1 (mean)':>13} {'raw beta_1':>11} "
      f"{'beta_end (log)':>14} {'beta_end/121':>12} {'closed form':>11} {'clamped':>7} {'pairs end':>9} "
      f"{'overshoot':>10} {'T_end (Pa)':>10} {'newton':>6} {'wall (s)':>8}")
for P in sorted(runs, key=lambda P: (P["S"], P["sweep"])):
    R = P["R"]
    raw1 = R["raw"][1].mean()  # the first update in traction (from frame 1): raw = unclamped
    # overshoot: how far below its target W/a_v (at the gap of the update) a pair lands, relative,
    # over the debonding updates of the hold (n ≥ 1)
    deb = R["raw"][1:] < 1.0
    os_rel = ((R["target"][1:] - R["raw"][1:]) / R["target"][1:])[deb]
    P["overshoot"] = os_rel.max() if os_rel.size else -np.inf
    P["clamped_pairs"] = P["beta_clamped"].max()
    P["beta_end_all"] = P["beta_mean"][-1] * P["rcc_pairs"][-1] / len(b)  # dropped pairs have β = 0
    S = P["S"]
    P["closed"] = wa if S <= 1 else max(0.0, 1 - S * (1 - wa))
    P["T"] = -P["adh"] / P["A"]
    print(f"{P['name']:<13} {S:8.4f} {P['h']:6.3f} {P['eta']:10.4g} {P['beta_mean'][1]:13.6f} {raw1:11.4f} "
          f"{P['beta_mean'][-1]:14.8f} {P['beta_end_all']:12.8f} {P['closed']:11.6f} {P['clamped_pairs']:7.0f} "
          f"{P['rcc_pairs'][-1]:9.0f} {P['overshoot']:10.2e} {P['T'][-1] + 0.0:10.5f} {P['newton'].mean():6.2f} "
          f"{P['wall'].sum():8.3f}")
print("(beta_1: after the first update of the hold; raw beta_1: its unclamped value, mean over pairs; "
      "beta_end (log): the logged beta_mean, over the tracked pairs; beta_end/121: over all bonds (dropped = 0); "
      "closed form at the mean gap: W/a for S ≤ 1, max(0, 1 − S(1 − W/a)) beyond; "
      "overshoot: max over pairs and steps of (W/a_v − β_v)/(W/a_v) after a debonding update)")

# ---------------------------------------------------------------- claims: thresholds
srt = sorted(runs_eta, key=lambda P: P["S"])
S_all = np.array([P["S"] for P in srt])
cl = np.array([P["clamped_pairs"] > 0 for P in srt])
ov = np.array([P["overshoot"] > TOL for P in srt])
k = int(np.argmax(cl)) if cl.any() else len(srt)
claims.check(cl.any() and not cl[:k].any() and cl[k:].all() and k > 0,
             "the clamp acts in every run from one S on and in none below (η sweep)")
if 0 < k < len(srt):
    lo, hi = S_all[k - 1], S_all[k]
    print(f"      largest S without clamping: {lo:.5f}; smallest with: {hi:.5f} "
          f"({srt[k]['clamped_pairs']:.0f} of {len(b)} pairs); derivation a/(a−W) = {S_clamp:.5f} "
          f"(first pair: {a_mean / (av.max() - W):.5f}, last: {a_mean / (av.min() - W):.5f})")
    claims.check(lo < S_clamp < hi and lo < a_mean / (av.max() - W) < hi,
                 f"the clamp first acts between the sampled S = {lo:.4f} and {hi:.4f}, which bracket a/(a−W) = "
                 f"{S_clamp:.4f} (and the first pair's threshold {a_mean / (av.max() - W):.4f})")
    full = [P for P in srt if P["S"] > a_mean / (av.min() - W)]
    claims.check(all(P["clamped_pairs"] == len(b) for P in full),
                 f"beyond the last pair's threshold ({a_mean / (av.min() - W):.4f}) every pair is clamped in the first "
                 f"update ({len(full)} runs)")
# the per-pair prediction: pair v is clamped iff h(a_v − W)/η > 1, at the first update of the hold
pred_ok = all(P["clamped_pairs"] == np.sum(P["h"] * (av - W) / P["eta"] > 1)
              and P["beta_clamped"][1] == P["clamped_pairs"] for P in runs)
claims.check(pred_ok, "in every run the clamp acts only in the first update of the hold, on exactly the pairs with "
             "h(C_N d_v² − W)/η > 1")
ko = int(np.argmax(ov)) if ov.any() else len(srt)
claims.check(ov.any() and not ov[:ko].any() and ov[ko:].all(), "the overshoot below W/a appears from one S on and "
             "never below (η sweep)")
below1 = [P for P in runs if P["S"] < 1]
claims.check(below1 and all(P["overshoot"] <= TOL for P in below1),
             f"no run with S < 1 lands below W/a by more than {TOL:g} (relative; largest: "
             f"{max(P['overshoot'] for P in below1):.1e}, {len(below1)} runs)")
if 0 < ko < len(srt):
    claims.check(S_all[ko - 1] < 1 < S_all[ko], f"the overshoot threshold lies between the sampled S = {S_all[ko - 1]:.4f} "
                 f"and {S_all[ko]:.4f}, which bracket S = 1 (per pair: {a_mean / av.max():.4f} … {a_mean / av.min():.4f})")

# ---------------------------------------------------------------- claims: end values
full_cl = [P for P in runs if P["clamped_pairs"] == len(b)]
claims.check(full_cl and all(P["beta_max"][-1] == 0 and P["rcc_pairs"][-1] == 0 and P["adh"][-1] == 0 for P in full_cl),
             f"the {len(full_cl)} runs where every pair was clamped end with β = 0 exactly, no pair left and no adhesion "
             "force")
uncl = [P for P in runs if P["clamped_pairs"] == 0]
e_end = max(abs(P["beta_mean"][-1] - P["R"]["mean"][-1]) for P in uncl)
claims.check(uncl and e_end < 1e-6, f"the {len(uncl)} unclamped runs end at the recursion's value within 1e-6 "
             f"(largest difference {e_end:.1e})")
# the closed form with the gap of the hold held constant: the remaining difference is the plate's
# relaxation (less traction → less stretch → a wider gap)
e_cf = max(abs(P["beta_end_all"] - P["closed"]) for P in runs)
print(f"      closed form at the constant mean gap vs the end β (over all bonds): largest difference {e_cf:.2e} "
      "(the gap widens by the plate's relaxation)")
part = [P for P in runs if 0 < P["clamped_pairs"] < len(b)]
for P in part:
    print(f"      {P['name']} (S = {P['S']:.4f}): {P['clamped_pairs']:.0f} pairs clamped to 0 and dropped, "
          f"{P['rcc_pairs'][-1]:.0f} left with β = {P['beta_min'][-1]:.6f} … {P['beta_max'][-1]:.6f}: the logged "
          f"beta_mean {P['beta_mean'][-1]:.6f} is their mean, {P['beta_end_all']:.6f} over all {len(b)} bonds")

# ---------------------------------------------------------------- claims: only S matters
pairs_S = []
for Q in runs_dt:
    mates = [P for P in runs_eta if abs(P["S"] / Q["S"] - 1) < 1e-9]
    if not mates:
        print(f"      {Q['name']} (h = {Q['h']}, S = {Q['S']:.4f}): no η-sweep run at the same S")
        continue
    P = mates[0]
    n = min(len(P["beta_mean"]), len(Q["beta_mean"]))
    e = max(np.abs(P[k][:n] - Q[k][:n]).max() for k in ("beta_mean", "beta_min", "beta_max"))
    eb = np.abs(P["bottom"][:n] - Q["bottom"][:n]).max()
    pairs_S.append((Q, P, e, eb, n))
    print(f"      S = {Q['S']:.4f}: (h = {Q['h']}, η = {Q['eta']:g}) vs (h = {P['h']}, η = {P['eta']:g}): "
          f"β per step differs by {e:.1e}, the gap by {eb:.1e} m over {n} steps")
claims.check(pairs_S and all(e < TOL for _, _, e, _, _ in pairs_S),
             f"only S matters: the h-sweep runs step for step as the η-sweep runs of the same S ({len(pairs_S)} pairs, "
             f"β within {max(e for _, _, e, _, _ in pairs_S):.1e})" if pairs_S else "only S matters: no pairs to compare")

# ---------------------------------------------------------------- ODE vs recursion (reported)
print("\nβ (logged beta_mean) after n updates vs: the scalar recursion at the logged mean gap d̄_n "
      "(β ← β + h/η·min(W − C_N d̄_n² β, 0)), the closed form W/a + (1 − S)^n (1 − W/a) at the gap of the "
      "hold, and the ODE W/a + (1 − W/a) exp(−τ), τ = a t/η = n S:")
print(f"  {'S':>7} {'|β − scalar rec.|':>17} {'|β − closed form|':>17} {'|β − ODE|':>10} {'|closed form − ODE|':>19}"
      f" {'β_end':>10} {'W/a(d_end)':>10} {'1−S(1−W/a)':>10}")
for P in sorted(runs_eta, key=lambda P: P["S"]):
    if P["clamped_pairs"] > 0:
        continue
    nn = np.arange(len(P["beta_mean"]))
    S = P["S"]
    ode = wa + (1 - wa) * np.exp(-nn * S)
    cf = wa + (1 - S) ** nn * (1 - wa) if S <= 1 else np.where(nn == 0, 1.0, 1 - S * (1 - wa))
    sc = np.ones(len(nn))
    for n in range(1, len(nn)):  # row n updated from frame n = probe row n − 1
        dn = P["bottom"][n - 1]
        sc[n] = sc[n - 1] + P["h"] / P["eta"] * min(W - cn * dn ** 2 * sc[n - 1], 0.0)
    sim = P["beta_mean"]
    P["err_scalar"] = np.abs(sim - sc).max()
    d_end = P["bottom"][-1]
    print(f"  {S:7.4f} {P['err_scalar']:17.2e} {np.abs(sim - cf).max():17.2e} {np.abs(sim - ode).max():10.4f} "
          f"{np.abs(cf - ode).max():19.4f} {sim[-1]:10.6f} {W / (cn * d_end ** 2):10.6f} "
          f"{max(0.0, 1 - S * (1 - wa)):10.6f}")
print(f"  (the gap of the hold: d = {d1[0] * 1e3:.6f} mm with β = 1; the plate relaxes as the traction falls: "
      f"d_end = {min(P['bottom'][-1] for P in runs_eta) * 1e3:.6f} … {max(P['bottom'][-1] for P in runs_eta) * 1e3:.6f} mm)")

# ---------------------------------------------------------------- bonding under compression (eq. 9)
if runs_bond:
    print("\nbonding under compression (eq. 9): β from 0 towards p/p0 at S_b = h·r·p0 (per pair; p = the update's "
          "pressure, from the replay):")
    print(f"  {'S_b':>5} {'p (Pa)':>15} {'β_1 mean':>9} {'p/p0 mean':>9} {'β_end min … max':>17} {'clamped':>7} "
          f"{'above p/p0 (rel.)':>17} {'updates after the 1st':>21}")
    for P in sorted(runs_bond, key=lambda P: P["r"]):
        R = P["R"]
        P["Sb"] = P["h"] * P["r"] * P["p0"]
        comp = R["p"] > 0  # compression updates of pairs with a positive target
        tgt = np.where(comp, R["p"] / P["p0"], np.nan)
        with np.errstate(invalid="ignore"):
            above = (R["raw"] - tgt) / tgt
        P["above"] = np.nanmax(np.where(comp & (R["raw"] > R["prev"]), above, np.nan)) if comp.any() else np.nan
        n1 = int(np.argmax(comp.any(axis=1)))  # the first compression update (row 1: after the push)
        P["n1"] = n1
        P["later"] = int((np.abs(np.diff(R["beta"][n1:], axis=0)) > 0).sum())
        P["dec"] = float(np.min(np.diff(R["beta"], axis=0)))
        P["clamped_pairs"] = P["beta_clamped"].max()
        P["pred_clamp"] = int(np.sum(R["prev"][n1] + P["Sb"] * (R["p"][n1] / P["p0"] - R["prev"][n1]) > 1))
        print(f"  {P['Sb']:5.2f} {R['p'][n1].min():6.2f} … {R['p'][n1].max():6.2f} {P['beta_mean'][n1]:9.5f} "
              f"{(R['p'][n1] / P['p0']).mean():9.5f} {P['beta_min'][-1]:8.5f} … {P['beta_max'][-1]:7.5f} "
              f"{P['clamped_pairs']:7.0f} {P['above']:17.2e} {P['later']:21d}")
    sub = [P for P in runs_bond if P["Sb"] <= 1]
    claims.check(sub and all(P["above"] <= TOL and P["dec"] >= 0 for P in sub),
                 f"bonding, S_b ≤ 1 ({len(sub)} runs): β rises monotonically and no update lands above its target p/p0 "
                 f"(largest relative excess {max(P['above'] for P in sub):.1e})")
    sup = [P for P in runs_bond if P["Sb"] > 1 and P["clamped_pairs"] == 0]
    claims.check(sup and all(abs(P["above"] - (P["Sb"] - 1)) < 1e-9 and P["later"] == 0 for P in sup),
                 f"bonding, S_b > 1 without clamp ({len(sup)} runs, S_b up to {max(P['Sb'] for P in sup):g}): the first update "
                 "lands at S_b·p/p0, (S_b − 1)·p/p0 above the target, and β never changes again (no oscillation, no "
                 "divergence: max(·, 0) of eq. 9 stops the rate)")
    claims.check(any(P["clamped_pairs"] > 0 for P in runs_bond) and
                 all(P["clamped_pairs"] == P["pred_clamp"] and P["beta_clamped"][P["n1"]] == P["clamped_pairs"]
                     for P in runs_bond),
                 "bonding: the clamp at 1 acts in the first update on exactly the pairs with S_b·p/p0 > 1 "
                 f"(runs with a clamp: S_b = {', '.join('%g' % P['Sb'] for P in runs_bond if P['clamped_pairs'] > 0)}; "
                 f"p0/p of the pairs: {min(P['p0'] / P['R']['p'][P['n1']].max() for P in runs_bond):.3f} … "
                 f"{max(P['p0'] / P['R']['p'][P['n1']].min() for P in runs_bond):.3f})")

# ---------------------------------------------------------------- figure
plt = None if args.no_plot else figures.pyplot()
if plt:
    fig, axs = plt.subplots(2, 2, figsize=(13, 10))
    ax = axs.ravel()
    want = [0.2, 0.5, 0.98, 1.25, 1.5, 1.79, 2.5, 10]
    show = []
    for s in want:
        c = min(runs_eta, key=lambda P: abs(P["S"] - s))
        if c not in show:
            show.append(c)
    tau = np.linspace(0, 12, 400)
    colors = plt.cm.viridis(np.linspace(0, 0.92, len(show)))
    ax[0].plot(tau, wa + (1 - wa) * np.exp(-tau), "k-", lw=2, label="ODE  W/a + (1−W/a) e$^{-τ}$")
    ax[0].axhline(wa, color="k", ls=":", lw=1)
    ax[0].axhline(0, color="grey", lw=0.8)
    ax[1].plot(tau, cn * (wa + (1 - wa) * np.exp(-tau)) ** 2 * d1[0], "k-", lw=2, label="ODE  C$_N$β²d")
    ax[1].axhline(W ** 2 / (cn * d1[0] ** 3), color="k", ls=":", lw=1)
    for c, P in zip(colors, show):
        nn = np.arange(len(P["beta_mean"]))
        tt = nn * P["S"]  # row 0: β = 1 during the lift; row n ≥ 1: after n updates in traction
        m = tt <= 12.5
        tag = "S < 1" if P["S"] < 1 else ("1 < S < a/(a−W)" if P["clamped_pairs"] == 0 else "S > a/(a−W): clamped")
        ax[0].plot(tt[m], P["beta_mean"][m] * P["rcc_pairs"][m] / len(b), "o-", color=c, ms=4, lw=1,
                   drawstyle="steps-post", label=f"S = {P['S']:.2f} ({tag})")
        if P["clamped_pairs"] > 0:  # the hidden value: the unclamped first update
            raw1 = P["R"]["raw"][1].mean()
            ax[0].plot([P["S"]], [max(raw1, -1.45)], "x" if raw1 > -1.45 else "v", color=c, ms=9, mew=2)
            if raw1 < -1.45:
                ax[0].annotate(f"unclamped {raw1:.2f}", (P["S"], -1.45), (P["S"] - 4.0, -0.8), fontsize=8,
                               color=c, arrowprops=dict(arrowstyle="->", color=c))
        tr = np.concatenate([[P["T"][0]], P["T"]])  # traction at frame 1 (β = 1), then row n at frame n+1
        tt2 = np.concatenate([[0], nn * P["S"]])
        ax[1].plot(tt2[tt2 <= 12.5], tr[tt2 <= 12.5], "o-", color=c, ms=4, lw=1, drawstyle="steps-post",
                   label=f"S = {P['S']:.2f}")
    ax[0].set_xlim(0, 12.5)
    ax[0].set_ylim(-1.5, 1.05)
    ax[0].set_xlabel("τ = a t / η  (t from the lift; one step = S)")
    ax[0].set_ylabel("β (mean over the 121 bonds)")
    ax[0].set_title(f"(a) β, opened to d = {d1[0] * 1e3:.4f} mm (W/a = {wa:.3f}); ×: before the clamp", fontsize=10)
    ax[0].legend(fontsize=7, loc="lower left")
    ax[1].set_xlim(0, 12.5)
    ax[1].set_xlabel("τ = a t / η")
    ax[1].set_ylabel("adhesion traction (Pa) = adhesion_normal / A")
    ax[1].set_title("(b) traction; dotted: the η → 0 limit W²/(C$_N$d³)", fontsize=10)
    ax[1].legend(fontsize=7)
    Ss = np.array([P["S"] for P in runs_eta])
    sg = np.linspace(0.1, 11, 2000)
    ax[2].plot(sg, np.where(sg <= 1, wa, np.maximum(0, 1 - sg * (1 - wa))), "k-", lw=1.5,
               label="closed form, end β (constant d)")
    ax[2].plot(sg, 1 - sg * (1 - wa), "k--", lw=1, label="unclamped first update 1 − S(1 − W/a)")
    ax[2].plot(Ss, [P["beta_end_all"] for P in runs_eta], "o", ms=6, label="end β, η sweep (h = 10 ms)")
    ax[2].plot([P["S"] for P in runs_dt], [P["beta_end_all"] for P in runs_dt], "^", ms=9, mfc="none",
               label="end β, h sweep (η = 4.5e-4)")
    ax[2].plot(Ss, [P["R"]["raw"][1].mean() for P in runs_eta], "x", ms=6, label="unclamped first update (replay)")
    ax[2].axvline(1, color="tab:orange", ls=":", label="S = 1 (overshoot)")
    ax[2].axvline(S_clamp, color="tab:red", ls=":", label=f"S = a/(a−W) = {S_clamp:.3f} (clamp)")
    ax[2].axhline(wa, color="grey", lw=0.8)
    ax[2].set_xscale("log")
    ax[2].set_ylim(-1.5, 1.05)
    ax[2].set_xlabel("S = h C$_N$ d² / η")
    ax[2].set_ylabel("β")
    ax[2].set_title("(c) β at the end of the hold (the ODE: W/a for every S)", fontsize=10)
    ax[2].legend(fontsize=7, loc="lower left")
    if runs_bond:
        cols = plt.cm.plasma(np.linspace(0, 0.85, len(runs_bond)))
        for c, P in zip(cols, sorted(runs_bond, key=lambda P: P["Sb"])):
            n1 = P["n1"]
            nn = np.arange(len(P["beta_mean"]) - n1 + 1)
            bm = np.concatenate([[0.0], P["beta_mean"][n1:]])
            ax[3].plot(nn, bm, "o-", color=c, ms=3, lw=1, drawstyle="steps-post", label=f"S_b = {P['Sb']:g}")
            raw1 = P["R"]["raw"][n1].mean()
            if P["clamped_pairs"] > 0:
                ax[3].plot([1], [raw1], "x", color=c, ms=9, mew=2)
        P = runs_bond[0]
        ax[3].axhline((P["R"]["p"][-1] / P["p0"]).mean(), color="k", ls=":", lw=1, label="p/p$_0$ (mean over pairs)")
        ax[3].axhline(1, color="grey", lw=0.8)
        ax[3].set_xlabel("updates since the push (n)")
        ax[3].set_ylabel("β (mean over the 121 pairs)")
        ax[3].set_title("(d) bonding under compression, eq. 9: S_b = h r p$_0$; ×: before the clamp", fontsize=10)
        ax[3].legend(fontsize=7, ncol=2)
        ax[3].set_xlim(0, 12)
    else:
        ax[3].axis("off")
    figures.save(fig, out, "rcc_stability.png")
sys.exit(claims.summary())
