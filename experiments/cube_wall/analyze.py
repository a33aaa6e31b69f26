#!/usr/bin/env python3
"""Analysis of experiments/cube_wall (Fang et al. 2023 §5.3, Fig. 14): classifies each of the six runs
mu{0,LARGE}_{none,small,large}.h5 of OUTDIR from its logged data alone, prints the 2×3 table next
to the paper's, the measured numbers and the capacity estimates, checks the claims of README.md,
writes OUTDIR/cube_wall.dat and (unless --no-plot) OUTDIR/cube_wall.png; exit status 1 if a claim
fails (in particular if the computed table differs from the paper's).

Measured per run (wall: the half-space x ≥ 0, gravity −g ŷ, cube face x = gap at rest):
  Δy     vertical displacement of the centre of mass (mass-weighted, /frames/x and /mesh/mass)
  a      −slope of a least-squares line through the centre of mass's vertical velocity after 0.1 s
  θ      rotation about z of the best rigid fit (Kabsch, mass-weighted) of the frame to the rest
         shape; negative = top away from the wall. θ_edge: angle of the top front edge (z = −L/2).
  face   distances of the wall-face vertices (rest x = min) from the wall: min / mean / max (the mean
         weighted by the model's contact weights of the face vertices, i.e. by area)
  slip   mean vertical displacement of the wall-face vertices (weighted the same way)
  F_an, F_at  normal / tangential adhesion force on the cube (/probes/adhesion_*)
Classes (tested in this order; thresholds in the constants below):
  sticks                max |Δy| < STICK_DY·L and |slip| < STICK_SLIP·L over the whole run
  rotates and detaches  |θ_end| > ROT_MIN and every face vertex beyond d̂_a at the end
  slides down attached  Δy_end < −½·(½gT²), |θ| < ROT_SMALL all along, every face vertex within
                        d̂_a all along and F_an ≠ 0 in every step
  falls free            |a/g − 1| < A_TOL and F_an = F_at = 0 in every step
  unclassified          none of the above
"""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params as logged  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from contactlab.physics import balance_gap  # noqa: E402
from classify import A_TOL, PAPER, load, classify  # noqa: E402

ap = cli.parser(__doc__, "plots/out/cube_wall")
ap.add_argument("mu_large", nargs="?", default="5", metavar="MU_LARGE", help="the large friction coefficient (default 5)")
args = ap.parse_args()
out, mu_large, plot = args.outdir, args.mu_large, not args.no_plot
claims = Claims()


runs, cls = {}, {}
for mk, mu in (("0", "0"), ("L", mu_large)):
    for adh in ("none", "small", "large"):
        r = load(os.path.join(out, f"mu{mu}_{adh}.h5"))
        runs[mk, adh] = r
g = 9.81
r0 = runs["0", "small"]
sc = r0["scene"]
dhat, dhat_p, dhat_a, kappa = logged.values(r0["run"], "dhat", "dhat_p", "dhat_a", "kappa")  # as the run logged them
Y = sc["bodies"][0]["material"]["E"]
for key, r in runs.items():
    cls[key] = classify(r, dhat_a, g)

# ---- capacities (independent of the runs: mesh weights and the parameters) ----
X, L, M = r0["X"], r0["L"], r0["M"]
w, quad = r0["w"], r0["quad"]                           # the model's contact weights against the wall
face = r0["face"]
A_eff = w[face].sum()        # the quadrature of the face: its area ("face"), + the rim's side strips ("vertex")
arm = X[face, 1] - X[:, 1].min()                        # lever about the bottom edge of the face
W = M * g
print(f"cube: L = {L:g} m, m = {M:g} kg, weight m g = {W:.0f} N, gravity torque about the bottom edge "
      f"m g L/2 = {W * L / 2:.0f} N m; Y = {Y:g} Pa, κ = {kappa:g} Pa, d̂ = {dhat:g} m, d̂_a = {dhat_a:g} m")
print(f"wall face: area {L * L:g} m², contact quadrature ({quad}) area A_eff = {A_eff:.4f} m² "
      + ("(face-aware weights: the face's area)" if quad == "face" else "(rim vertices carry ⅓ of the side triangles too)"))
print(f"{'ε_c':>7} {'μ_a':>4} {'Yε_c (Pa)':>10} {'gap (m)':>11} {'μ_a A Yε_c / mg':>16} {'A_eff:':>7} "
      f"{'M_adh / (mgL/2)':>16} {'A_eff:':>7}")
caps = {}
for adh in ("small", "large"):
    ra = runs["0", adh]["run"]
    ec, mua = logged.values(ra, "eps_c", "mu_a")
    ye = Y * ec
    gp = balance_gap(kappa, ye, *logged.values(ra, "dhat", "dhat_p", "dhat_a"))
    ft_geo, ft_eff = mua * L * L * ye / W, mua * A_eff * ye / W
    mom_geo, mom_eff = (L * L * ye * L / 2) / (W * L / 2), (ye * (w[face] * arm).sum()) / (W * L / 2)
    caps[adh] = dict(ec=ec, mua=mua, ye=ye, gap=gp, ft_geo=ft_geo, ft_eff=ft_eff, mom_geo=mom_geo,
                     mom_eff=mom_eff, fmax=mua * A_eff * ye)
    print(f"{ec:7g} {mua:4g} {ye:10.0f} {gp:11.6e} {ft_geo:16.3f} {ft_eff:7.3f} {mom_geo:16.3f} {mom_eff:7.3f}")
mul = float(mu_large)
print(f"large μ = {mul:g}: μ A Yε_c(small) / mg = {mul * caps['small']['ye'] * L * L / W:.2f} "
      f"(A_eff: {mul * caps['small']['ye'] * A_eff / W:.2f}): friction at the pressed bottom, loaded by the "
      f"adhesive pull, can carry the weight")

# ---- the table ----
print()
print(f"{'':>14} | {'no adhesion':^24} | {'small adhesion':^24} | {'large adhesion':^24}")
for mk, label in (("0", "μ = 0"), ("L", f"μ = {mu_large}")):
    print(f"{label + ' computed':>14} | " + " | ".join(f"{cls[mk, a]:^24}" for a in ("none", "small", "large")))
    print(f"{label + ' paper':>14} | " + " | ".join(f"{PAPER[mk, a]:^24}" for a in ("none", "small", "large")))
print()
hdr = (f"{'run':<16} {'class':<22} {'Δy_end':>9} {'max|Δy|':>9} {'a (m/s²)':>9} {'θ_end°':>8} {'max|θ|°':>8} "
       f"{'θedge°':>8} {'face min/mean/max at end (m)':>30} {'max face':>9} {'slip (m)':>9} {'F_an_end':>9} "
       f"{'F_at>0 until':>12} {'detached':>8} {'Newton':>11} {'inter':>5} {'wall s':>6}")
print(hdr)
rows = []
for (mk, adh), r in runs.items():
    mu = "0" if mk == "0" else mu_large
    nz = np.nonzero(r["at_abs"] > 0)[0]
    at_until = r["t"][nz[-1]] if len(nz) else 0.0
    det = np.nonzero(r["fmin"] > dhat_a)[0]
    t_det = f"{r['ft'][det[0]]:8.2f}" if len(det) and adh != "none" else f"{'—':>8}"
    name = f"μ={mu} {adh}"
    print(f"{name:<16} {cls[mk, adh]:<22} {r['dy'][-1]:+9.4f} {np.abs(r['dy']).max():9.4f} {r['a']:9.4f} "
          f"{r['theta'][-1]:+8.2f} {np.abs(r['theta']).max():8.2f} {r['theta_edge'][-1]:+8.2f} "
          f"{r['fmin'][-1]:9.3e}/{r['fmean'][-1]:9.3e}/{r['fmax'][-1]:9.3e} {r['fmax'].max():9.3e} "
          f"{r['slip'][-1]:+9.2e} {r['an_abs'][-1]:9.1f} {at_until:12.2f} {t_det} "
          f"{r['newton'].mean():5.2f}/{r['newton'].max():<5d} {int(r['inter'].max()):5d} {r['wall']:6.1f}")
    r.update(at_until=at_until)
    rows.append(f"{mu} {adh} {r['prm']['eps_c']} {r['dy'][-1]:.6e} {r['a']:.6e} {r['theta'][-1]:.4f} "
                f"{r['fmin'][-1]:.6e} {r['fmean'][-1]:.6e} {r['fmax'][-1]:.6e} {r['slip'][-1]:.6e} "
                f"{r['newton'].mean():.3f} {int(r['inter'].max())} {r['wall']:.2f}  # {cls[mk, adh]}")
with open(os.path.join(out, "cube_wall.dat"), "w") as f:
    f.write("# mu adhesion eps_c dy_end a theta_end_deg face_min face_mean face_max slip newton_mean "
            "max_intersections wall_s  # class\n" + "\n".join(rows) + "\n")
print(f"total wall time of the six runs (sum of /steps/wall_s): {sum(r['wall'] for r in runs.values()):.1f} s")
print()

# ---- claims ----
for key in runs:
    mu = "0" if key[0] == "0" else mu_large
    claims.check(cls[key] == PAPER[key], f"μ = {mu}, {key[1]} adhesion: computed '{cls[key]}', paper '{PAPER[key]}'")
for (mk, adh), r in runs.items():
    mu = "0" if mk == "0" else mu_large
    claims.check(int(r["inter"].max()) == 0, f"μ = {mu}, {adh}: 0 intersections in all {r['nsteps']} steps")
    if adh != "none":
        gp = caps[adh]["gap"]
        claims.check(abs(r["gap0"] - gp) < 1e-9 * L, f"μ = {mu}, {adh}: started at the computed balance gap "
                     f"{gp:.6e} m (face at {r['gap0']:.6e} m)")
claims.check(caps["small"]["ft_eff"] < 1.0 < caps["large"]["ft_eff"] and caps["small"]["mom_eff"] < 1.0 < caps["large"]["mom_eff"],
             f"small adhesion cannot hold the weight tangentially ({caps['small']['ft_eff']:.2f} mg) nor the gravity "
             f"torque about the bottom edge ({caps['small']['mom_eff']:.2f}); large can ({caps['large']['ft_eff']:.1f}, "
             f"{caps['large']['mom_eff']:.1f}) (A_eff)")
s0 = runs["0", "small"]
# after the debonding of the tangential adhesion (its last step is claimed ≤ 0.1 s below; it lets go in
# the first steps): the release of the sheared face is a transient in which the corners, each holding
# a quarter cell of the face (quadrature "face"), briefly lift; measured from t = 0.05 s on
T_SLIDE = 0.05
sl = s0["ft"] >= T_SLIDE - 1e-12
devs = np.abs(s0["fmean"] - caps["small"]["gap"]) / caps["small"]["gap"]
dev, dev_tr = devs[sl].max(), devs[~sl].max()
claims.check(dev < 0.02, f"μ = 0, small: the sliding face stays at the balance gap (area-weighted mean distance within "
             f"{dev:.1%} of {caps['small']['gap']:.4e} m from t = {T_SLIDE:g} s on; claim 2 %; the release transient "
             f"before: {dev_tr:.1%}, largest vertex distance {s0['fmax'][~sl].max() / caps['small']['gap']:.2f} × the gap)")
fan = s0["an_abs"][len(s0["an_abs"]) // 2]
pred = caps["small"]["ye"] * caps["small"]["gap"] / dhat_p * A_eff        # a'(gap) = Yε_c gap/d̂_p below d̂_p
claims.check(abs(fan / pred - 1.0) < 0.01, f"μ = 0, small: normal adhesion force while sliding {fan:.1f} N = A_eff·a'(gap) "
             f"= {pred:.1f} N within 1 % (= {fan / (pred / A_eff * L * L):.3f} × the face area's A·a'(gap))")
claims.check(s0["at_until"] <= 0.1, f"μ = 0, small: the tangential adhesion debonds at once (last nonzero at "
             f"t = {s0['at_until']:.2f} s; claim ≤ 0.1 s)")
claims.check(abs(s0["a"] / g - 1.0) < A_TOL, f"μ = 0, small: slides with a = {s0['a']:.4f} m/s² ≈ g (within {A_TOL:.0%})")
l0 = runs["0", "large"]
ratio = W / caps["large"]["fmax"]
v_creep = logged.value(l0["run"], "eps_a") * (1 - math.sqrt(1 - ratio))
late = l0["ft"] > 0.5 * l0["ft"][-1]
v_meas = -np.polyfit(l0["ft"][late], l0["slip"][late], 1)[0]
e = (v_meas - v_creep) / v_creep
claims.check(abs(e) < 0.15, f"μ = 0, large: the held face creeps at {v_meas:.3e} m/s = the tangential-adhesion mollifier's "
             f"ε_a(1 − √(1 − mg/(μ_a A_eff Yε_c))) = {v_creep:.3e} m/s within 15 % ({e:+.1%})")

plt = figures.pyplot() if plot else None
if plt:
    fig, axes = plt.subplots(2, 3, figsize=(14, 7.5), sharex=True)
    for i, (mk, mlabel) in enumerate((("0", "μ = 0"), ("L", f"μ = {mu_large}"))):
        for j, adh in enumerate(("none", "small", "large")):
            r = runs[mk, adh]
            ax = axes[i, j]
            ax.plot(r["ft"], r["dy"], "C0", label="Δy centre of mass (m)")
            ax.set_ylabel("Δy (m)", color="C0")
            if adh == "large":
                ax.set_ylim(min(-0.03, r["dy"].min() * 1.2), 0.005)
            ax2 = ax.twinx()
            ax2.plot(r["ft"], r["theta"], "C3", label="rotation θ (deg)")
            ax2.plot(r["ft"], r["theta_edge"], "C3:", label="top edge angle (deg)")
            ax2.set_ylabel("θ (deg)", color="C3")
            det = np.nonzero(r["fmin"] > dhat_a)[0]
            if len(det) and adh != "none":
                ax.axvline(r["ft"][det[0]], color="k", ls="--", lw=0.8)
                ax.text(r["ft"][det[0]], 0.5, " whole face\n beyond d̂_a", transform=ax.get_xaxis_transform(),
                        fontsize=7)
            if abs(r["theta"]).max() < 3:
                ax2.set_ylim(-3, 3)
            ec = r["prm"]["eps_c"]
            good = cls[mk, adh] == PAPER[mk, adh]
            ax.set_title(f"{mlabel}, ε_c = {ec} ({adh})\ncomputed: {cls[mk, adh]}"
                         f"{'' if good else '  (paper: ' + PAPER[mk, adh] + ')'}",
                         fontsize=9, color="k" if good else "r")
            if i == 1:
                ax.set_xlabel("t (s)")
            if i == 0 and j == 0:
                h1, l1 = ax.get_legend_handles_labels()
                h2, l2 = ax2.get_legend_handles_labels()
                ax.legend(h1 + h2, l1 + l2, fontsize=7, loc="lower left")
    fig.suptitle("cube_wall (Fang et al. 2023 Fig. 14): 1 m cube next to a wall, gravity along the wall; "
                 f"ipc_adhesion, μ_a = {caps['small']['mua']:g}", fontsize=10)
    figures.save(fig, out, "cube_wall.png", dpi=110)
sys.exit(claims.summary())
