#!/usr/bin/env python3
"""RCC counterpart of experiments/cube_wall: the six runs with contact.model = rcc_ipc
(cube_wall_rcc.json; OUTDIR/rcc_mu{0,LARGE}_{none,small,large}.h5), classified with the rules of
analyze.py and compared with the ipc_adhesion runs of the same OUTDIR (mu*_*.h5).

Parameters matched to ipc_adhesion (README.md, "RCC counterpart"): C_N = Y·ε_c/d̂_p,
W = Y·ε_c·d̂_p, C_T = (μ_a Y·ε_c)²/W (= C_N for μ_a = 1): RCC's rate-independent peaks
√(C_N W) = Y·ε_c at d* = d̂_p and √(C_T W) = μ_a·Y·ε_c at u* = √(W/C_T); "none" is β0 = 0.

Prints both tables side by side and the numbers, checks the RCC claims of README.md (exit 1 if
one fails), writes OUTDIR/cube_wall_rcc.png."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, params as logged  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from contactlab.physics import balance_gap  # noqa: E402
from classify import ADH, G, figure, load_six, print_table  # noqa: E402

# the RCC cells claimed to agree with ipc_adhesion (verified in the full and the QUICK runs, README)
RCC_AGREE = [("0", "none"), ("L", "none"), ("0", "large"), ("L", "large"), ("L", "small")]

ap = cli.parser(__doc__, "plots/out/cube_wall")
ap.add_argument("mu_large", nargs="?", default="5", metavar="MU_LARGE", help="the large friction coefficient (default 5)")
args = ap.parse_args()
out, mu_large, plot = args.outdir, args.mu_large, not args.no_plot
claims = Claims()


# classified with the reach of the adhesion as the runs logged it: ipc_adhesion's d̂_a (that of the
# runs with adhesion, as in analyze.py: a run without adhesion logs NaN), rcc_ipc's debond_dist
ipc, cls_ipc = load_six(out, mu_large, detaches=True)
rcc, cls_rcc = load_six(out, mu_large, "rcc_", detaches=True)
cls = {**{("ipc", k): c for k, c in cls_ipc.items()}, **{("rcc", k): c for k, c in cls_rcc.items()}}
for r in rcc.values():
    r["debond_dist"] = r["reach"]

r0 = rcc["0", "small"]
Y = r0["scene"]["bodies"][0]["material"]["E"]
M = r0["m"].sum()
mg = M * G
h = r0["scene"]["time"]["dt"]
print("rcc_ipc parameters (matched to ipc_adhesion: C_N = Yε_c/d̂_p, W = Yε_c d̂_p, C_T = (μ_a Yε_c)²/W):")
print(f"{'':7} {'ε_c':>6} {'μ_a':>4} {'Yε_c':>7} {'C_N':>8} {'C_T':>8} {'W':>6} {'η':>5} {'h W/η':>6} {'β0':>3} "
      f"{'√(C_N W)':>9} {'d*':>8} {'√(C_T W)':>9} {'u*':>8} {'debond':>8}")
for adh in ADH:
    ci, c = ipc["0", adh]["con"], rcc["0", adh]["con"]
    print(f"{adh:7} {ci['eps_c']:6g} {ci['mu_a']:4g} {Y * ci['eps_c']:7g} {c['c_n']:8g} {c['c_t']:8g} {c['w']:6g} "
          f"{c['eta']:5g} {h * c['w'] / c['eta']:6.2f} {c['beta0']:3g} {math.sqrt(c['c_n'] * c['w']):9g} "
          f"{math.sqrt(c['w'] / c['c_n']):8.2e} {math.sqrt(c['c_t'] * c['w']):9g} {math.sqrt(c['w'] / c['c_t']):8.2e} "
          f"{rcc['0', adh]['debond_dist']:8.2e}")
print()
print_table(mu_large, [("ipc", cls_ipc), ("rcc", cls_rcc)])
print()
print(f"{'run':<20} {'class':<22} {'Δy_end':>9} {'max|Δy|':>8} {'a':>7} {'θ_end°':>8} {'max|θ|°':>8} "
      f"{'face min/mean/max at end (m)':>30} {'slip (m)':>9} {'F_an0 (N)':>9} {'F_an>0 until':>12} {'F_at>0 until':>12} "
      f"{'beyond at':>9} {'Newton':>10} {'ms/step':>7} {'wall s':>6} {'clamped':>7}")
for (mk, adh) in ipc:
    mu = "0" if mk == "0" else mu_large
    for nm, rr in (("ipc", ipc), ("rcc", rcc)):
        r = rr[mk, adh]
        reach = r["reach"]

        def until(x):
            nz = np.nonzero(x > 0)[0]
            return f"{r['t'][nz[-1]]:12.2f}" if len(nz) else f"{'—':>12}"
        det = np.nonzero(r["fmin"] > reach)[0]
        t_det = f"{r['ft'][det[0]]:9.2f}" if len(det) and adh != "none" else f"{'—':>9}"
        name = f"{nm} μ={mu} {adh}"
        print(f"{name:<20} {cls[nm, (mk, adh)]:<22} {r['dy'][-1]:+9.4f} {np.abs(r['dy']).max():8.4f} {r['a']:7.3f} "
              f"{r['theta'][-1]:+8.2f} {np.abs(r['theta']).max():8.2f} "
              f"{r['fmin'][-1]:9.3e}/{r['fmean'][-1]:9.3e}/{r['fmax'][-1]:9.3e} {r['slip'][-1]:+9.2e} "
              f"{r['an_abs'][0]:9.1f} {until(r['an_abs'])} {until(r['at_abs'])} {t_det} "
              f"{r['newton'].mean():4.2f}/{r['newton'].max():<5d} {1e3 * r['wall'] / r['nsteps']:7.1f} {r['wall']:6.1f} "
              f"{int(r['clamped'].sum()) if 'clamped' in r else '':>7}")
print(f"total wall time (sum of /steps/wall_s): ipc_adhesion {sum(r['wall'] for r in ipc.values()):.1f} s, "
      f"rcc_ipc {sum(r['wall'] for r in rcc.values()):.1f} s")
print()

# ---- claims (RCC part) ----
for (mk, adh), r in rcc.items():
    mu = "0" if mk == "0" else mu_large
    claims.check(int(r["inter"].max()) == 0, f"rcc μ = {mu}, {adh}: 0 intersections in all {r['nsteps']} steps")
    if adh != "none":
        ri = ipc[mk, adh]["run"]
        kappa, eps_c, dhat, dp, da = logged.values(ri, "kappa", "eps_c", "dhat", "dhat_p", "dhat_a")
        gp = balance_gap(kappa, Y * eps_c, dhat, dp, da)
        claims.check(abs(r["gap0"] - gp) < 1e-9 * r["L"], f"rcc μ = {mu}, {adh}: started at the balance gap {gp:.6e} m "
                     f"(the same as ipc_adhesion's: C_N β² d = Yε_c d/d̂_p below d̂_p)")
        dev = abs(r["an_abs"][0] / ipc[mk, adh]["an_abs"][0] - 1)
        claims.check(dev < 0.01, f"rcc μ = {mu}, {adh}: normal adhesion force in the first step {r['an_abs'][0]:.1f} N = "
                     f"ipc_adhesion's {ipc[mk, adh]['an_abs'][0]:.1f} N within 1 % (same law below d*, same A_eff)")
s0 = rcc["0", "small"]
claims.check(cls["rcc", ("0", "small")] == "detaches and falls" and s0["t"][np.nonzero(s0["an_abs"] > 0)[0][-1]] <= 0.1,
             f"rcc μ = 0, small adhesion: 'detaches and falls' (ipc_adhesion: '{cls['ipc', ('0', 'small')]}'): the slip "
             f"debonds the pairs (one β for the normal and the tangential part), both adhesion forces are 0 after "
             f"t = {s0['t'][np.nonzero(s0['an_abs'] > 0)[0][-1]]:.2f} s (claim ≤ 0.1 s), and the face leaves the wall "
             f"(min distance {s0['fmin'][-1]:.3f} m at the end)")
l0 = rcc["0", "large"]
late = l0["ft"] > 0.5 * l0["ft"][-1]
s_pred = mg / (l0["con"]["c_t"] * l0["A_eff"])
s_meas = -l0["slip"][late].mean()
claims.check(abs(s_meas / s_pred - 1) < 0.05, f"rcc μ = 0, large: the face is held elastically: mean slip over the second half "
             f"{s_meas:.3e} m = mg/(C_T·A_eff) = {s_pred:.3e} m within 5 % ({s_meas / s_pred - 1:+.1%}; A_eff = "
             f"{l0['A_eff']:.3f} m²; downward creep there {-np.polyfit(l0['ft'][late], l0['slip'][late], 1)[0]:+.2e} m/s)")
for key in RCC_AGREE:
    mu = "0" if key[0] == "0" else mu_large
    claims.check(cls["rcc", key] == cls["ipc", key], f"rcc μ = {mu}, {key[1]} adhesion: '{cls['rcc', key]}', as ipc_adhesion")

if plot:
    figure(out, "cube_wall_rcc.png", mu_large, [("ipc_adhesion", "ipc", ipc, cls_ipc), ("rcc_ipc", "rcc", rcc, cls_rcc)],
           "cube_wall (Fang et al. 2023 Fig. 14): ipc_adhesion (solid) vs rcc_ipc (dashed), "
           "C_N = Yε_c/d̂_p, W = Yε_c d̂_p, C_T = (μ_a Yε_c)²/W")
sys.exit(claims.summary())
