#!/usr/bin/env python3
"""lcp_pgs counterpart of experiments/cube_wall: the six runs with contact.model = lcp_pgs
(cube_wall_lcp.json, Gascón et al. 2010; OUTDIR/lcp_mu{0,LARGE}_{none,small,large}.h5), classified
with the rules of analyze.py (classify.py) and compared with the ipc_adhesion (mu*_*.h5) and rcc_ipc
(rcc_mu*_*.h5) runs of the same OUTDIR: the three tables side by side, per run the penetration
(min over the steps of /steps/min_distance, which is /model/lcp_pgs/min_gap for lcp_pgs; the max of
/steps/intersections) and the median time per step (/steps/wall_s).

Parameters matched by the peak traction (README.md, "lcp_pgs counterpart"): Gascón's normal law is
RCC's linear law, so c = C_N = Y·ε_c/d̂_p, w = W = Y·ε_c·d̂_p (the peak √(C W) = Y·ε_c at
d* = √(W/C) = d̂_p), η = 2 h W, r = 0, β0 = 1; "none" is β0 = 0 with the small run's C, W, η.

Also reads the side runs lcp_push_mu{1,LARGE}.h5 ("none" started 1 nm inside the contact thickness:
the Painlevé jam) and, when present (STUDY=1), the h = 1 ms runs h1ms_{,rcc_,lcp_}mu0_large.h5 and
h1ms_{,rcc_,lcp_}muLARGE_small.h5. Checks the lcp claims of README.md (exit 1 if one fails), writes
OUTDIR/cube_wall_lcp.png."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, params as logged  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from classify import A_TOL, ADH, G, PAPER, ROT_SMALL, classify, figure, load, load_six, print_table  # noqa: E402

ap = cli.parser(__doc__, "plots/out/cube_wall")
ap.add_argument("mu_large", nargs="?", default="5", metavar="MU_LARGE", help="the large friction coefficient (default 5)")
args = ap.parse_args()
out, mu_large, plot = args.outdir, args.mu_large, not args.no_plot
claims = Claims()
KW = dict(detaches=True, creeps=True)  # the same classes for the three models
MODELS = (("ipc", ""), ("rcc", "rcc_"), ("lcp", "lcp_"))
runs, cls = {}, {}
for nm, prefix in MODELS:
    runs[nm], cls[nm] = load_six(out, mu_large, prefix, **KW)
lcp = runs["lcp"]


def mu_of(mk):
    return "0" if mk == "0" else mu_large


# ---- parameters and the model's own predictions ----
r0 = lcp["0", "small"]
Y = r0["scene"]["bodies"][0]["material"]["E"]
M, L = r0["M"], r0["L"]
mg = M * G
h = r0["scene"]["time"]["dt"]
A = r0["A_eff"]              # lcp_pgs: the face-aware contact areas of the face (= L² for a flat face)
thick = logged.value(r0["run"], "thickness")
print(f"lcp_pgs (matched by the peak traction: C = C_N = Yε_c/d̂_p, W = Yε_c d̂_p, η = 2 h W): m g = {mg:.0f} N, "
      f"face area A = {A:.4f} m², h = {h:g} s, thickness δ = {thick:g} m")
print(f"{'':7} {'C':>8} {'W':>6} {'η':>5} {'h W/η':>6} {'β0':>3} {'√(C W)':>8} {'d*':>8} {'debond':>8} {'start gap':>10} "
      f"{'A√(CW)/mg':>10} {'h A C (N s/m)':>14} {'mg/(hAC) (m/s)':>15}")
pred = {}
for adh in ADH:
    r = lcp["0", adh]
    c = r["con"]
    cap = A * np.sqrt(c["c"] * c["w"]) / mg
    damp = h * A * c["c"]
    pred[adh] = dict(cap=cap, damp=damp, v=mg / damp)
    print(f"{adh:7} {c['c']:8g} {c['w']:6g} {c['eta']:5g} {h * c['w'] / c['eta']:6.2f} {c['beta0']:3g} "
          f"{np.sqrt(c['c'] * c['w']):8g} {np.sqrt(c['w'] / c['c']):8.2e} {r['reach']:8.2e} {r['gap0']:10.2e} "
          f"{cap:10.3f} {damp:14.4g} {mg / damp:15.4e}")
# Painlevé: a rigid cube sliding down on the bottom edge of its face, r = (−L/2, −L/2) from the centre of
# mass, I = m L²/6: the normal velocity change per normal impulse λ_n with sliding friction μ λ_n is
# (1/m)(1 + (L/2)²/(I/m)·(1 − μ)) = (2.5 − 1.5 μ)/m: negative (a push into the wall) for μ > 5/3
mu_p = 5.0 / 3.0
print(f"tangential adhesion of the lcp model: |λ_t| ≤ a|u_t| with a = h² A C β² (eq. 16, steps 6–7): a force h A C β² v_t "
      f"(a damper), no static hold; the held face creeps at mg/(h A C β²). Rigid-body Painlevé threshold of the "
      f"cube's bottom edge μ_P = {mu_p:.3f}")
print()
print_table(mu_large, [(nm, cls[nm]) for nm, _ in MODELS])
print()


def row(nm, key, r, window=None):
    """The numbers of one run (window: only the steps/frames with t ≤ window)."""
    ks = slice(None) if window is None else r["t"] <= window + 1e-9
    mind = float(np.min(r["min_dist"][ks]))
    return dict(mind=mind, pen=max(0.0, -mind), inter=int(np.max(r["inter"][ks])),
                ms=1e3 * float(np.median(r["wall_s"][ks])), n=int(np.size(r["wall_s"][ks])),
                wall=float(np.sum(r["wall_s"][ks])))


def until(r, x):
    nz = np.nonzero(x > 0)[0]
    return f"{r['t'][nz[-1]]:6.2f}" if len(nz) else f"{'—':>6}"


print(f"{'run':<18} {'class':<22} {'Δy_end':>8} {'θ_end°':>8} {'face min/mean/max at end (m)':>30} {'slip (m)':>9} "
      f"{'F_an>0 / F_at>0 until':>21} {'min dist (m)':>12} {'pen. (m)':>8} {'inter':>5} {'ms/step':>7} "
      f"{'iters':>9} {'wall s':>6}")
for (mk, adh) in lcp:
    for nm, _ in MODELS:
        r = runs[nm][mk, adh]
        q = row(nm, (mk, adh), r)
        it = r["pgs"] if nm == "lcp" else r["newton"]     # PGS sweeps (lcp_pgs), Newton iterations (the others)
        print(f"{nm + ' μ=' + mu_of(mk) + ' ' + adh:<18} {cls[nm][mk, adh]:<22} {r['dy'][-1]:+8.4f} "
              f"{r['theta'][-1]:+8.2f} {r['fmin'][-1]:9.3e}/{r['fmean'][-1]:9.3e}/{r['fmax'][-1]:9.3e} "
              f"{r['slip'][-1]:+9.2e} {until(r, r['an_abs'])} / {until(r, r['at_abs'])}     {q['mind']:12.4e} "
              f"{q['pen']:8.1e} {q['inter']:5d} {q['ms']:7.1f} {it.mean():5.1f}/{int(it.max()):<3d} {q['wall']:6.1f}")
tot = {nm: sum(r["wall"] for r in runs[nm].values()) for nm, _ in MODELS}
print("total wall time of the six runs (sum of /steps/wall_s): " + ", ".join(f"{nm} {t:.1f} s" for nm, t in tot.items()))
print("lcp_pgs time per step (medians over the six runs' steps): "
      + ", ".join(f"{k} {1e3 * np.median(np.concatenate([r['run'].model[k] for r in lcp.values()])):.2f} ms"
                  for k in ("t_contacts", "t_delassus", "t_pgs")))
print()

# ---- h = 1 ms against h = 10 ms (STUDY=1 only): penetration and time per step over t ≤ 0.3 s ----
HCASES = (("0", "large"), ("L", "small"))
hfiles = {(nm, key): os.path.join(out, f"h1ms_{prefix}mu{mu_of(key[0])}_{key[1]}.h5")
          for nm, prefix in MODELS for key in HCASES}
have_h = all(os.path.exists(f) for f in hfiles.values())
hr = {}
if have_h:
    hr = {k: load(f) for k, f in hfiles.items()}
    T1 = min(r["t"][-1] for r in hr.values())
    print(f"h = 10 ms (the runs above) against h = 1 ms (t ≤ {T1:.2f} s in both):")
    print(f"{'run':<18} {'h (ms)':>6} {'steps':>5} {'min dist (m)':>12} {'pen. (m)':>8} {'inter':>5} {'ms/step':>7} "
          f"{'wall s':>6} {'Δy_end':>8} {'θ_end°':>8} {'slip (m)':>9}")
    for key in HCASES:
        for nm, _ in MODELS:
            for hh, r in ((10, runs[nm][key]), (1, hr[nm, key])):
                q = row(nm, key, r, T1)
                k = np.nonzero(r["ft"] <= T1 + 1e-9)[0][-1]
                print(f"{nm + ' μ=' + mu_of(key[0]) + ' ' + key[1]:<18} {hh:6d} {q['n']:5d} {q['mind']:12.4e} "
                      f"{q['pen']:8.1e} {q['inter']:5d} {q['ms']:7.1f} {q['wall']:6.1f} {r['dy'][k]:+8.4f} "
                      f"{r['theta'][k]:+8.2f} {r['slip'][k]:+9.2e}")
    print()
else:
    print("no h = 1 ms runs in OUTDIR: the h comparison needs STUDY=1 (make figures)")
    print()

# ---- side runs: "none" pushed 1 nm into the thickness ----
push = {mu: load(os.path.join(out, f"lcp_push_mu{mu}.h5")) for mu in ("1", mu_large)}
pcls = {mu: classify(r, r0["reach"], **KW) for mu, r in push.items()}
for mu, r in push.items():
    fn = np.linalg.norm(r["bar"], axis=1) + np.linalg.norm(r["fr"], axis=1) + r["an_abs"] + r["at_abs"]
    last = until(r, fn)
    print(f"lcp none pushed 1 nm, μ = {mu}: {pcls[mu]}; gap0 {r['gap0']:.4e} m, a = {r['a']:.4f} m/s², "
          f"θ_end {r['theta'][-1]:+.2f}°, max|θ| {np.abs(r['theta']).max():.2f}°, contact forces ≠ 0 until t = {last.strip()} s, "
          f"largest contact force {fn.max():.2e} N")
print()

# ---- claims (lcp part) ----
for (mk, adh), r in lcp.items():
    mu = mu_of(mk)
    gap_rule = 2 * thick if adh == "none" else thick
    claims.check(abs(r["gap0"] - gap_rule) < 1e-3 * thick, f"lcp μ = {mu}, {adh}: started at the gap {r['gap0']:.4e} m = "
                 f"{'2δ (contacts inactive)' if adh == 'none' else 'δ (the rest gap of the relaxed adhesive constraint)'}")
    q = row("lcp", (mk, adh), r)
    mg_ = float(np.nanmin(r["min_gap"]))
    claims.check(q["inter"] == 0 and mg_ > 0.0, f"lcp μ = {mu}, {adh}: no penetration: min_gap > 0 in every step "
                 f"(min {mg_:.4e} m = {mg_ / thick:.4f} δ; the half-space's gap is linear in x, so the constraint is exact "
                 f"up to the PGS tolerance) and 0 intersections")
for key in (("0", "none"), ("L", "none"), ("L", "small")):
    claims.check(cls["lcp"][key] == PAPER[key], f"lcp μ = {mu_of(key[0])}, {key[1]}: '{cls['lcp'][key]}', as the paper "
                 f"(ipc_adhesion '{cls['ipc'][key]}', rcc_ipc '{cls['rcc'][key]}')")
s0 = lcp["0", "small"]
t_adh = max(s0["t"][np.nonzero(s0[k] > 0)[0][-1]] for k in ("an_abs", "at_abs"))
claims.check(pred["small"]["cap"] < 1.0 and s0["at_abs"].max() < mg,
             f"lcp μ = 0, small: the tangential adhesion cannot carry the weight: the debonding threshold (eq. 12, β = 1) "
             f"caps it at A√(C W) = {pred['small']['cap']:.2f} mg; its largest force {s0['at_abs'].max():.0f} N = "
             f"{s0['at_abs'].max() / mg:.2f} mg (β is updated after the step)")
claims.check(cls["lcp"]["0", "small"] == "detaches and falls" and t_adh <= 0.2,
             f"lcp μ = 0, small: 'detaches and falls' (paper: '{PAPER['0', 'small']}'): one β for the normal and the "
             f"tangential traction (§5.3), so the slip debonds the normal bond too: both adhesion forces are 0 after "
             f"t = {t_adh:.2f} s (claim ≤ 0.2 s) and the whole face is beyond debond_gap at the end (min distance "
             f"{s0['fmin'][-1]:.3f} m; rcc_ipc: '{cls['rcc']['0', 'small']}')")
for mk in ("0", "L"):
    r = lcp[mk, "large"]
    claims.check(cls["lcp"][mk, "large"] == "creeps down attached" and float(np.min(r["beta_min"])) == 1.0,
                 f"lcp μ = {mu_of(mk)}, large: 'creeps down attached' (paper: '{PAPER[mk, 'large']}'): the face slips by "
                 f"{-r['slip'][-1]:.2e} m > {1e-3 * L:g} m, held (β = 1 at every contact in every step: the traction "
                 f"stays below √(C W) = {np.sqrt(r['con']['c'] * r['con']['w']):.0f} Pa)")
l0 = lcp["0", "large"]


def creep_check(r, tag):
    """μ = 0, large: the tangential adhesion is the damper h A C v (β = 1), so over the run
    h C A slip(T) = −(m g T + M v_y(T)) (its impulse balances gravity's and the momentum)."""
    hh, c = r["scene"]["time"]["dt"], r["con"]["c"]
    T = r["ft"][-1]
    s_pred = -(mg * T + r["M"] * r["vy"][-1]) / (hh * c * r["A_eff"])
    e = r["slip"][-1] / s_pred - 1
    late = r["ft"] > 0.5 * T
    v = -np.polyfit(r["ft"][late], r["slip"][late], 1)[0]
    claims.check(abs(e) < 0.02, f"lcp μ = 0, large, {tag}: the face creeps as the damper h A C: slip at T = {T:.2f} s "
                 f"{r['slip'][-1]:+.4e} m = −(m g T + M v_y(T))/(h C A) = {s_pred:+.4e} m within 2 % ({e:+.2%}); mean "
                 f"speed mg/(h A C) = {mg / (hh * c * r['A_eff']):.3e} m/s (fitted over the second half {v:.3e} m/s)")


creep_check(l0, f"h = {h * 1e3:g} ms")
l5 = lcp["L", "large"]
claims.check(abs(l5["slip"][-1]) < abs(l0["slip"][-1]),
             f"lcp μ = {mu_large}, large: friction at the compressed bottom (bound max(μλ_n, a|u_t|) ≥ the damper's) slows "
             f"the creep: slip {l5['slip'][-1]:+.2e} m against {l0['slip'][-1]:+.2e} m at μ = 0")
p1, pL = push["1"], push[mu_large]
fn1 = np.linalg.norm(p1["bar"], axis=1) + np.linalg.norm(p1["fr"], axis=1)
claims.check(abs(p1["a"] / G - 1) < A_TOL and np.abs(p1["theta"]).max() < ROT_SMALL,
             f"lcp none pushed 1 nm, μ = 1 < μ_P = {mu_p:.2f}: falls (a = {p1['a']:.4f} m/s² = g within {A_TOL:.0%}, "
             f"max|θ| {np.abs(p1['theta']).max():.3f}° < {ROT_SMALL:g}°; contact force at most {fn1.max():.2e} N)")
claims.check(pcls[mu_large] == "rotates and detaches",
             f"lcp none pushed 1 nm, μ = {mu_large} > μ_P: the hard contact jams (Painlevé): friction at the pressed bottom "
             f"edge carries the cube, which 'rotates and detaches' (θ_end {pL['theta'][-1]:+.1f}°) like the small-adhesion "
             f"run, without any adhesion")
if have_h:
    creep_check(hr["lcp", ("0", "large")], "h = 1 ms")
    for key in HCASES:
        for nm, _ in MODELS:
            r = hr[nm, key]
            q = row(nm, key, r)
            claims.check(q["inter"] == 0 and q["mind"] > 0.0, f"h = 1 ms, {nm} μ = {mu_of(key[0])}, {key[1]}: no penetration "
                         f"(min distance {q['mind']:.4e} m, 0 intersections)")

if plot:
    figure(out, "cube_wall_lcp.png", mu_large, [("ipc_adhesion", "ipc", runs["ipc"], cls["ipc"]),
                                                ("rcc_ipc", "rcc", runs["rcc"], cls["rcc"]),
                                                ("lcp_pgs", "lcp", lcp, cls["lcp"])],
           "cube_wall (Fang et al. 2023 Fig. 14): ipc_adhesion (solid), rcc_ipc (dashed), lcp_pgs (dotted); "
           "C = C_N = Yε_c/d̂_p, W = Yε_c d̂_p")
sys.exit(claims.summary())
