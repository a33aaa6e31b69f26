#!/usr/bin/env python3
"""Analysis of experiments/adhesion_curves: a soft plate bonded to a half-space, driven by its
scripted top face. Reads OUTDIR/normal.h5 (compress, then open until debonded) and
OUTDIR/shear_r*.h5 (shear at v = r·ε_a at the balance gap), compares the tractions with the
paper's laws (eq. 10–14, evaluated here independently of the C code) and with a rate-independent
RCC reference (eq. 5–8 with η → 0), writes OUTDIR/normal.png, OUTDIR/tangential.png and
OUTDIR/adhesion_curves.dat, exits 1 if a claim of README.md fails."""
import os
import re
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, params as logged, physics, runs as runfiles  # noqa: E402
from contactlab.claims import Claims  # noqa: E402

args = cli.parser(__doc__, "plots/out/adhesion_curves").parse_args()
out = args.outdir
claims = Claims()


# ---------------------------------------------------------------- the laws (Fang et al. 2023)
def params(run):
    """The law's parameters as the run logged them (/model/<model>: d̂_p, d̂_a, ε_a as resolved)."""
    scene = run.scene
    dhat, dp, da, eps_c, kappa, mu_a, eps_a = logged.values(run, "dhat", "dhat_p", "dhat_a", "eps_c", "kappa",
                                                            "mu_a", "eps_a")
    E = scene["bodies"][0]["material"]["E"]  # the half-space has no material: Y = the plate's
    return dict(dhat=dhat, dp=dp, da=da, yeps=E * eps_c, kappa=kappa, mu_a=mu_a,
                eps=eps_a * scene["time"]["dt"], eps_a=eps_a, h=scene["time"]["dt"])


def adhesion_pressure(d, P):
    """a'(d) of eq. 10 with a2 of eq. 12: the attractive pressure (Pa), >= 0."""
    return physics.adhesion_pressure(d, P["yeps"], P["dp"], P["da"])


def barrier_pressure(d, P):
    """-κ b'(d) (eq. 2 in the units of the model README)."""
    return physics.barrier_pressure(d, P["dhat"], P["kappa"])


def f_t(y, eps):
    """eq. 14 (with ε_a): 2y/ε - y²/ε² below 2ε, 0 beyond."""
    y = np.asarray(y, dtype=float)
    return np.where(y < 2 * eps, 2 * y / eps - (y / eps) ** 2, 0.0)


def rcc_force(u, C, W):
    """RCC with η -> 0 (eq. 8): β = min(β_prev, W/(C u²)), force C β² u, along the path u."""
    beta, F = 1.0, []
    for ui in u:
        if C * ui * ui > W:
            beta = min(beta, W / (C * ui * ui))
        F.append(C * beta * beta * max(ui, 0.0))
    return np.array(F)


def balance_gap(P):
    """The gap where barrier and adhesion pressure balance."""
    return physics.balance_gap(P["kappa"], P["yeps"], P["dhat"], P["dp"], P["da"])


# ---------------------------------------------------------------- reading a run
def load(path):
    run = runfiles.load(path)
    r = dict(run=run, scene=run.scene, X=run.mesh["X"], faces=run.mesh["surface_faces"], x=run.frames["x"],
             tf=run.frames["time"], t=run.steps["time"], newton=run.steps["newton_iters"],
             inter=run.steps["intersections"], wall=run.steps["wall_s"])
    for k in ("adhesion_normal", "adhesion_tangential", "barrier", "friction", "reaction"):
        r[k] = run.probes[k]
    # frames are logged every step (frame 0 = the initial state): row n of /steps ↔ frame n + 1
    assert len(r["tf"]) == len(r["t"]) + 1 and np.allclose(r["tf"][1:], r["t"])
    # the contact quadrature of the model: against a half-space each surface vertex is one term
    # w_v·(κb + a). quadrature "face" (the default): w_v = Σ (A_f/3) max(0, −n_f·ŷ) over its surface
    # triangles (rest areas A_f, normals n_f lagged at the start of each step, i.e. at frame n for
    # the step of row n): the bottom face's own area; "vertex": ⅓ of all its triangles, so the rim
    # vertices also carry part of the side faces. w[n] holds step n's weights of the bottom vertices.
    X = r["X"]
    bottom = X[:, 1] < X[:, 1].min() + 1e-9
    r["quad"] = logged.choice(run, "quadrature", "vertex")
    r["w"] = np.array([physics.contact_weights(r["quad"], X, r["faces"], (0.0, 1.0, 0.0), x=xf)[bottom]
                       for xf in r["x"][:-1]])
    r["bottom"] = bottom
    r["A"] = r["w"].sum(1)
    size = r["scene"]["bodies"][0]["mesh"]["size"]
    r["A_nom"] = size[0] * size[2]
    return r


# ================================================================ (a) normal: compress, open
normal = load(os.path.join(out, "normal.h5"))
P = params(normal["run"])
A = normal["A"]
yb = normal["x"][1:, normal["bottom"], 1]  # bottom-vertex heights above the half-space (y = 0)
gap = (yb * normal["w"]).sum(1) / A         # area-weighted mean gap (each step's weights)
gap_plain = yb.mean(1)                      # plain mean (what a mean_position probe reports)
spread = yb.max(1) - yb.min(1)
trac = -normal["adhesion_normal"][:, 1] / A  # attractive pressure (the force on the plate is -y)
p_bar = normal["barrier"][:, 1] / A
p_net = p_bar - trac                          # net normal pressure, > 0 repulsive
quad = (adhesion_pressure(yb, P) * normal["w"]).sum(1) / A  # Σ w_v a'(d_v) / A: the exact quadrature
pred = adhesion_pressure(gap, P)
d0 = balance_gap(P)
origin_y = normal["scene"]["bodies"][0]["mesh"]["origin"][1]
motion = normal["scene"]["bodies"][0]["fixed"]["motion"]
t_turn = motion[0]["until"]
opening = normal["t"] > t_turn + 1e-9
bonded = opening & (gap < P["da"])
Y = P["yeps"]
print(f"plate: {A[0]:.6f} m² contact quadrature area ({normal['quad']}: Σ w_v of the bottom face; nominal "
      f"{normal['A_nom']:.4f} m², {100 * (A[0] / normal['A_nom'] - 1):+.2f} %"
      + (" from the rim vertices' share of the side faces" if normal["quad"] == "vertex" else "")
      + f"; over the steps {A.min():.6f} .. {A.max():.6f} m²)")
print(f"law: d̂ = {P['dhat']:g}, d̂_p = {P['dp']:g}, d̂_a = {P['da']:g} m, Y·ε_c = {Y:g} Pa, κ = {P['kappa']:g} Pa")
print(f"balance gap (barrier = adhesion pressure): {d0:.6e} m; the plate starts at {origin_y:.6e} m")
claims.check(abs(origin_y - d0) < 1e-6 * P["dhat"], "the plate starts at the balance gap")
print(f"gap over the run: {gap.min():.4e} .. {gap.max():.4e} m; largest spread of the bottom-vertex gaps "
      f"{spread.max():.2e} m ({spread.max() / P['dhat']:.3f} d̂), while bonded in the opening "
      f"{spread[bonded].max():.2e} m")
err = np.abs(trac - pred) / Y
err_q = np.abs(trac - quad) / Y
loc = bonded & (pred > 0.2 * Y)
rel_loc = np.abs(trac[loc] / pred[loc] - 1)
print(f"opening, bonded ({int(bonded.sum())} steps): max |traction - a'(d̄)| = {err[bonded].max() * 100:.1e} % of Y·ε_c "
      f"(d̄: area-weighted mean gap); where a' > 0.2 Y·ε_c: max relative error {rel_loc.max() * 100:.1e} %; "
      f"against Σ w_v a'(d_v)/A: {err_q[bonded].max() * 100:.2e} %")
err_plain = np.abs(trac - adhesion_pressure(gap_plain, P)) / Y
print(f"  (with the plain mean gap of the bottom vertices instead: max {err_plain[bonded].max() * 100:.3f} % of Y·ε_c)")
claims.check(err[bonded].max() < 0.02, "the normal traction follows a'(d) within 2 % of Y·ε_c over the whole opening")
claims.check(rel_loc.max() < 0.02, "... and within 2 % of a'(d) itself wherever a'(d) > 0.2 Y·ε_c")
ipk = np.argmax(np.where(opening, trac, -np.inf))
print(f"peak traction {trac[ipk]:.5f} Pa = {trac[ipk] / Y:.4f} Y·ε_c at d̄ = {gap[ipk]:.5e} m = {gap[ipk] / P['dp']:.4f} d̂_p "
      f"(step {ipk + 1}); nominal-area traction there {-normal['adhesion_normal'][ipk, 1] / normal['A_nom']:.4f} Pa")
claims.check(abs(trac[ipk] / Y - 1) < 0.03, "peak traction = Y·ε_c within 3 %")
claims.check(abs(gap[ipk] / P["dp"] - 1) < 0.03, "the peak is at d = d̂_p (within 3 %)")
net_err = np.abs(p_net - (barrier_pressure(gap, P) - pred))
claims.check(net_err[bonded].max() < 0.02 * Y, f"net (barrier + adhesion) pressure follows κ(-b'(d)) - a'(d) within 2 % of Y·ε_c "
             f"over the opening (max {net_err[bonded].max() / Y * 100:.3f} %)")
deb = opening & (gap >= P["da"])
claims.check(deb.any() and np.abs(normal["adhesion_normal"][deb]).max() == 0.0,
             f"fully debonded beyond d̂_a (adhesion force exactly 0 in the last {int(deb.sum())} steps)")
bal = np.abs(normal["reaction"][:, 1] + normal["adhesion_normal"][:, 1] + normal["barrier"][:, 1]) / (Y * A)
claims.check(bal.max() < 1e-3, f"the top face's Dirichlet reaction balances the contact forces (max mismatch {bal.max():.1e} "
             f"Y·ε_c·A: static equilibrium, Newton tolerance)")
claims.check(normal["inter"].max() == 0, "no intersection in any step of the normal run")
print(f"normal run: {len(normal['t'])} steps, Newton iterations per step mean {normal['newton'].mean():.2f}, "
      f"max {normal['newton'].max()}; wall {normal['wall'].sum():.1f} s")

# RCC reference with the same peak: C_N d̂_p = Y·ε_c and √(W C_N) = Y·ε_c (β starts to fall at d̂_p)
C_N = Y / P["dp"]
W_N = C_N * P["dp"] ** 2
rcc_n = rcc_force(gap, C_N, W_N)
dd = np.linspace(0, 1.3 * P["da"], 1000)

# ================================================================ (b) shear at the balance gap
runs = []
for path in runfiles.paths(out, "shear_*.h5", key=lambda p: float(re.findall(r"r([0-9.]+)\.h5$", p)[0])):
    r = load(path)
    Ps = params(r["run"])
    v = r["scene"]["bodies"][0]["fixed"]["motion"][0]["velocity"][0]
    dxb = np.diff(r["x"][:, r["bottom"], 0], axis=0)
    slip = (dxb * r["w"]).sum(1) / r["A"]  # per step, area-weighted (the step's weights)
    xb = np.concatenate(([0.0], np.cumsum(slip)))
    T = -r["adhesion_tangential"][:, 0] / r["A"] + 0.0  # opposes the motion (+x); + 0.0: no -0
    n_tail = 10
    T_ss, y_ss = T[-n_tail:].mean(), slip[-n_tail:].mean()
    expect = Ps["mu_a"] * Ps["yeps"] * float(f_t(v * Ps["h"], Ps["eps"]))
    runs.append(dict(path=os.path.basename(path), P=Ps, v=v, r=v / Ps["eps_a"], xb=xb - xb[0], slip=slip, T=T,
                     T_ss=T_ss, y_ss=y_ss, expect=expect, newton=r["newton"], inter=r["inter"].max(),
                     wall=r["wall"].sum(), tail_ptp=np.ptp(T[-n_tail:]),
                     gap=(r["x"][-1, r["bottom"], 1] @ r["w"][-1]) / r["A"][-1]))
main = [q for q in runs if q["P"]["eps_a"] == P["eps_a"]]
other = [q for q in runs if q["P"]["eps_a"] != P["eps_a"]]
Tmax = P["mu_a"] * Y
print(f"\nshear at the balance gap, ε = ε_a h = {P['eps']:g} m, μ_a Y ε_c = {Tmax:g} Pa "
      f"(steady state: mean of the last 10 of {len(main[0]['T']) if main else 0} steps)")
print("  v/ε_a   v (m/s)   slip/step/ε   traction (Pa)   μ_a Yε_c f_t(vh)   rel. error   Newton mean/max   "
      "max |T - μ_aYε_c f_t(slip)| all steps")
all_ok_ss, all_ok_steps = True, True
for q in main:
    rel = (q["T_ss"] - q["expect"]) / q["expect"] if q["expect"] > 0 else (q["T_ss"] - q["expect"]) / Tmax
    step_err = np.abs(q["T"] - Tmax * f_t(q["slip"], P["eps"])).max() / Tmax
    q["rel"], q["step_err"] = rel, step_err
    print(f"  {q['r']:5.2f}  {q['v']:.2e}   {q['y_ss'] / P['eps']:.6f}      {q['T_ss']:10.5f}      {q['expect']:10.5f}"
          f"       {rel * 100:+9.1e} %{' (of μ_aYε_c)' if q['expect'] == 0 else ''}    {q['newton'].mean():5.2f} / {q['newton'].max():2d}"
          f"          {step_err * 100:.1e} %")
    all_ok_ss &= abs(rel) < 0.05
    all_ok_steps &= step_err < 0.05
claims.check(len(main) >= 5 and all_ok_ss,
             f"steady tangential traction = μ_a·Y·ε_c·f_t(v·h) within 5 % for each of the {len(main)} shear velocities")
claims.check(all_ok_steps, "every step's (slip, traction) pair lies on μ_a·Y·ε_c·f_t within 5 % of μ_a·Y·ε_c (transients too)")
claims.check(all(q["inter"] == 0 for q in runs), "no intersection in any step of the shear runs")
for q in other:
    n = len(q["T"])
    print(f"\nnote (not a claim): ε_a = {q['P']['eps_a']:g} m/s (ε = {q['P']['eps']:g} m), v = {q['r']:g} ε_a: "
          f"traction over the last 12 steps {q['T'][-12:].min():.3f} .. {q['T'][-12:].max():.3f} Pa (mean {q['T'][n - 12:].mean():.3f}; "
          f"f_t predicts {q['expect']:.3f}), slip/step {q['slip'][-12:].min() / q['P']['eps']:.2f} .. "
          f"{q['slip'][-12:].max() / q['P']['eps']:.2f} ε; Newton mean {q['newton'].mean():.1f}, max {q['newton'].max()}")
C_T = Tmax / P["eps"]
W_T = C_T * P["eps"] ** 2

# ================================================================ (c) sticky IMLS: the normal opening on a meshed slab
# The same plate and law (model imls, eps_c = 0.002, d̂ = 1 mm, d̂_p, d̂_a auto, κ = 20 Pa), bonded to the flat
# top face (y = 0) of a kinematic meshed slab: every bottom vertex of the plate queries the slab's IMLS field.
# Over a flat sampled surface every sample in support has s_i = n_i·(x − p_i) = the height of x, whatever the
# weights, so ψ is the exact distance and the same analytic a'(d) must come out; imls integrates with
# w_q = ⅓ of all the vertex's surface triangles (the "vertex" quadrature: A = 1.06 × nominal).
def load_imls(path):
    run = runfiles.load(path)
    X, vb, faces = run.mesh["X"], run.mesh["vertex_body"], run.mesh["surface_faces"]
    sc = run.scene
    plate = vb == 0
    r = dict(run=run, scene=sc, X=X, x=run.frames["x"], t=run.steps["time"], newton=run.steps["newton_iters"],
             inter=run.steps["intersections"], wall=run.steps["wall_s"], psi_min=run.model["min_distance"])
    for k in ("adhesion_normal", "barrier", "reaction"):
        r[k] = run.probes[k]
    assert len(run.frames["time"]) == len(r["t"]) + 1 and np.allclose(run.frames["time"][1:], r["t"])
    r["bottom"] = plate & (X[:, 1] < X[plate, 1].min() + 1e-9)
    r["w"] = physics.vertex_areas(X, faces)[r["bottom"]]  # rest weights, constant over the run
    r["A"] = r["w"].sum()
    r["slab_top"] = X[vb == 1, 1].max()
    dhat, dp, da, eps_c, kappa, R, y_obs = logged.values(run, "dhat", "dhat_p", "dhat_a", "eps_c", "kappa", "radius",
                                                         "young_obstacle")
    E = sc["bodies"][0]["material"]["E"]  # the slab is kinematic (no Young's modulus): Y = young_obstacle or the plate's
    r["P"] = dict(dhat=dhat, dp=dp, da=da, kappa=kappa, R=R, yeps=(E if np.isnan(y_obs) else min(E, y_obs)) * eps_c)
    return r


im = load_imls(os.path.join(out, "normal_imls.h5"))
Pi, Ai = im["P"], im["A"]
slab = im["scene"]["bodies"][1]
ps = im["scene"]["bodies"][0]["mesh"]
margin = min(abs(slab["mesh"]["origin"][k]) - abs(ps["origin"][k]) for k in (0, 2))
print(f"\nsticky IMLS (model imls) on a kinematic meshed slab {slab['mesh']['size']} m, {slab['mesh']['cells']} cells, "
      f"kernel radius R = {Pi['R']:g} m; plate: {Ai:.6f} m² contact quadrature area (⅓ of every surface triangle of the "
      f"bottom vertices, {100 * (Ai / normal['A_nom'] - 1):+.2f} % over the nominal area: the rim's side faces)")
claims.check(slab.get("kinematic") and slab["mesh"]["size"][1] > Pi["R"] + Pi["da"] and margin > Pi["R"],
             f"imls: the slab is kinematic, thicker than R + d̂_a ({slab['mesh']['size'][1]:g} > {Pi['R'] + Pi['da']:g} m) "
             f"and its rim {margin:g} m > R beyond the plate's: the field the plate sees is the slab's flat top")
claims.check(Pi["yeps"] == Y and Pi["kappa"] == P["kappa"] and (Pi["dhat"], Pi["dp"], Pi["da"]) == (P["dhat"], P["dp"], P["da"]),
             f"imls: the same law as the ipc_adhesion row (Y·ε_c = {Pi['yeps']:g} Pa with Y = the plate's E for the "
             f"kinematic slab, κ, d̂, d̂_p, d̂_a)")
ybi = im["x"][1:, im["bottom"], 1] - im["slab_top"]
gap_i = ybi @ im["w"] / Ai
spread_i = ybi.max(1) - ybi.min(1)
reach = np.isfinite(im["psi_min"])  # min_distance: the smallest ψ within reach (d̂_a), +inf once debonded
psi_err = np.abs(im["psi_min"][reach] - ybi.min(1)[reach])
claims.check(reach.sum() > 100 and psi_err.max() < 1e-12,
             f"imls: ψ is the exact distance over the slab's flat top (the model's smallest ψ = the lowest bottom "
             f"vertex's height in each of the {int(reach.sum())} steps within reach, max difference {psi_err.max():.1e} m)")
trac_i = -im["adhesion_normal"][:, 1] / Ai
pnet_i = im["barrier"][:, 1] / Ai - trac_i
pred_i = adhesion_pressure(gap_i, Pi)
open_i = im["t"] > im["scene"]["bodies"][0]["fixed"]["motion"][0]["until"] + 1e-9
bond_i = open_i & (gap_i < Pi["da"])
err_i = np.abs(trac_i - pred_i) / Y
loc_i = bond_i & (pred_i > 0.2 * Y)
rel_i = np.abs(trac_i[loc_i] / pred_i[loc_i] - 1)
print(f"imls opening, bonded ({int(bond_i.sum())} steps): max |traction - a'(d̄)| = {err_i[bond_i].max() * 100:.1e} % of Y·ε_c; "
      f"where a' > 0.2 Y·ε_c: max relative error {rel_i.max() * 100:.1e} %; largest spread of the bottom-vertex gaps "
      f"{spread_i.max():.2e} m ({spread_i.max() / Pi['dhat']:.3f} d̂)")
claims.check(err_i[bond_i].max() < 0.02 and rel_i.max() < 0.02,
             "imls: the normal traction follows a'(d) within 2 % of Y·ε_c over the opening, and within 2 % of a'(d) "
             "wherever a'(d) > 0.2 Y·ε_c")
ipk_i = np.argmax(np.where(open_i, trac_i, -np.inf))
print(f"imls peak traction {trac_i[ipk_i]:.5f} Pa = {trac_i[ipk_i] / Y:.4f} Y·ε_c at d̄ = {gap_i[ipk_i] / Pi['dp']:.4f} d̂_p "
      f"(step {ipk_i + 1}); nominal-area traction there {-im['adhesion_normal'][ipk_i, 1] / normal['A_nom']:.4f} Pa")
claims.check(abs(trac_i[ipk_i] / Y - 1) < 0.03 and abs(gap_i[ipk_i] / Pi["dp"] - 1) < 0.03,
             "imls: peak traction = Y·ε_c within 3 % at d = d̂_p within 3 %")
net_i = np.abs(pnet_i - (barrier_pressure(gap_i, Pi) - pred_i))
claims.check(net_i[bond_i].max() < 0.02 * Y, f"imls: net pressure follows κ(-b'(d)) - a'(d) within 2 % of Y·ε_c over the "
             f"opening (max {net_i[bond_i].max() / Y * 100:.3f} %)")
deb_i = open_i & (gap_i >= Pi["da"])
claims.check(deb_i.any() and np.abs(im["adhesion_normal"][deb_i]).max() == 0.0,
             f"imls: fully debonded beyond d̂_a (adhesion force exactly 0 in the last {int(deb_i.sum())} steps)")
bal_i = np.abs(im["reaction"][:, 1] + im["adhesion_normal"][:, 1] + im["barrier"][:, 1]) / (Y * Ai)
claims.check(bal_i.max() < 1e-3, f"imls: the Dirichlet reaction balances the contact forces (max mismatch {bal_i.max():.1e} "
             f"Y·ε_c·A)")
claims.check(im["inter"].max() == 0, "imls: no intersection in any step (measured: imls guarantees none)")
print(f"imls normal run: {len(im['t'])} steps, Newton iterations per step mean {im['newton'].mean():.2f}, max "
      f"{im['newton'].max()}; wall {im['wall'].sum():.1f} s ({1e3 * im['wall'].mean():.1f} ms per step; ipc_adhesion "
      f"{1e3 * normal['wall'].mean():.1f} ms)")

# ================================================================ table + plots
with open(os.path.join(out, "adhesion_curves.dat"), "w") as fo:
    fo.write("# normal run: t gap_w(m) adhesion_traction(Pa) a'(gap)(Pa) barrier(Pa) net(Pa) rcc(Pa)\n")
    for i in range(len(gap)):
        fo.write(f"{normal['t'][i]:.4f} {gap[i]:.9e} {trac[i]:.9e} {pred[i]:.9e} {p_bar[i]:.9e} {p_net[i]:.9e} "
                 f"{rcc_n[i]:.9e}\n")
    fo.write("\n\n# shear runs: v/eps_a v(m/s) slip_per_step(m) traction(Pa) mu_a*Y*eps_c*f_t(v h)(Pa)\n")
    for q in main:
        fo.write(f"{q['r']:.4f} {q['v']:.6e} {q['y_ss']:.9e} {q['T_ss']:.9e} {q['expect']:.9e}\n")

plt = None if args.no_plot else figures.pyplot()
if not plt:
    sys.exit(claims.summary())

mm = 1e3
fig, axs = plt.subplots(1, 2, figsize=(13, 4.8))
ax = axs[0]
ax.plot(dd * mm, adhesion_pressure(dd, P) / Y, "k-", lw=1.2, label="ours, analytic a'(d) (eq. 10–12)")
ax.plot(dd * mm, rcc_force(dd, C_N, W_N) / Y, "C3--", lw=1.2,
        label="RCC, η→0: C_N β² d, β = min(1, W/(C_N d²))")
comp = ~opening
ax.plot(gap[comp] * mm, trac[comp] / Y, "C0v", ms=3, mfc="none", label="simulated, compression leg")
ax.plot(gap[opening] * mm, trac[opening] / Y, "C1o", ms=3, mfc="none", label="simulated, opening leg")
ax.plot(gap_i * mm, trac_i / Y, "C2x", ms=3, label="sticky IMLS on a meshed slab, both legs")
for xv, lab in ((P["dp"], "d̂_p"), (P["da"], "d̂_a")):
    ax.axvline(xv * mm, color="0.6", lw=0.8, ls=":")
    ax.text(xv * mm, 1.06, lab, ha="center", fontsize=9, color="0.4")
ax.set_xlabel("gap d (mm): area-weighted mean of the bottom face")
ax.set_ylabel("adhesion traction / (Y·ε_c)")
ax.set_ylim(-0.02, 1.12)
ax.set_title(f"normal adhesion: adhesion_normal / area (peak {trac[ipk] / Y:.4f} Y·ε_c at {gap[ipk] / P['dp']:.3f} d̂_p)",
             fontsize=10)
ax.legend(fontsize=8, loc="upper right")
ax.grid(alpha=0.3)
ax = axs[1]
dn = dd[dd > 0.12 * P["dhat"]]
ax.plot(dn * mm, (barrier_pressure(dn, P) - adhesion_pressure(dn, P)) / Y, "k-", lw=1.2,
        label="analytic κ(−b′(d)) − a′(d)")
ax.plot(dn * mm, barrier_pressure(dn, P) / Y, "0.6", lw=0.8, ls="--", label="analytic barrier κ(−b′(d))")
ax.plot(gap[comp] * mm, p_net[comp] / Y, "C0v", ms=3, mfc="none", label="simulated net, compression leg")
ax.plot(gap[opening] * mm, p_net[opening] / Y, "C1o", ms=3, mfc="none", label="simulated net, opening leg")
ax.plot(gap_i * mm, pnet_i / Y, "C2x", ms=3, label="sticky IMLS net, both legs")
ax.axhline(0, color="0.3", lw=0.6)
ax.axvline(d0 * mm, color="C2", lw=0.8, ls=":")
ax.text(d0 * mm, 0.3 * ax.get_ylim()[1] if ax.get_ylim()[1] > 0 else 1, " balance gap", color="C2", fontsize=9)
ax.set_ylim(-1.3, max(3.0, float(np.nanmax(p_net / Y)) * 1.05))
ax.set_xlabel("gap d (mm)")
ax.set_ylabel("net normal pressure / (Y·ε_c)  (> 0: repulsive)")
ax.set_title("barrier + adhesion (Fig. 7 right, as pressures)", fontsize=10)
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
fig.suptitle(f"adhesion_curves (a): soft plate (E = {normal['scene']['bodies'][0]['material']['E']:g} Pa) on a half-space, "
             f"top face compressed then opened at 1e-3 m/s, static steps of {P['h']:g} s")
figures.save(fig, out, "normal.png")

fig, axs = plt.subplots(1, 3, figsize=(18, 4.8), gridspec_kw={"width_ratios": [1, 1, 0.8]})
ax = axs[0]
yy = np.linspace(0, 3 * P["eps"], 600)
ax.plot(yy / P["eps"], Tmax * f_t(yy, P["eps"]) / Tmax, "k-", lw=1.2, label="ours, analytic f_t(y), y = slip per step")
ax.plot(yy / P["eps"], rcc_force(yy, C_T, W_T) / Tmax, "C3--", lw=1.2,
        label="RCC, η→0: C_T β² u vs total displacement u")
for q in main:
    ax.plot(q["slip"] / P["eps"], q["T"] / Tmax, ".", color="0.7", ms=2)
ax.plot([], [], ".", color="0.7", label="simulated, every step (transients)")
ax.plot([q["y_ss"] / P["eps"] for q in main], [q["T_ss"] / Tmax for q in main], "C1o", ms=6, mfc="none",
        label="simulated, steady state, one per shear velocity")
ax.set_xlabel("y / (ε_a h)   (ours: slip per step; RCC: displacement since bonding)")
ax.set_ylabel("tangential adhesion traction / (μ_a·Y·ε_c)")
ax.set_title("tangential adhesion (Fig. 9): a function of slip per step, i.e. of slip rate", fontsize=10)
ax.legend(fontsize=8)
ax.grid(alpha=0.3)
ax = axs[1]
uu = np.logspace(-2, 4, 400) * P["eps"]
ax.semilogx(uu / P["eps"], rcc_force(uu, C_T, W_T) / Tmax, "C3--", lw=1.2, label="RCC (rate-independent)")
cmap = plt.get_cmap("viridis")
for k, q in enumerate(main):
    ax.semilogx(np.maximum(q["xb"][1:], 1e-30) / P["eps"], q["T"] / Tmax, "-", color=cmap(k / max(1, len(main) - 1)),
                lw=1, label=f"ours, v = {q['r']:g} ε_a")
ax.set_xlim(1e-2, 1e4)
ax.set_xlabel("tangential displacement of the bottom face since the start / (ε_a h)")
ax.set_ylabel("traction / (μ_a·Y·ε_c)")
ax.set_title("vs displacement: ours holds a velocity-dependent level, RCC debonds", fontsize=10)
ax.legend(fontsize=7, loc="center right")
ax.grid(alpha=0.3)
ax = axs[2]
ref = [q for q in main if abs(q["r"] - 1.5) < 1e-9]
for q, st in [(q, "C0o-") for q in ref] + [(q, "C3s-") for q in other]:
    ax.plot(np.arange(1, len(q["T"]) + 1), q["T"] / Tmax, st, ms=3, lw=0.8,
            label=f"ε_a = {q['P']['eps_a']:g} m/s (ε_a h = {q['P']['eps']:g} m), v = {q['r']:g} ε_a")
    ax.axhline(q["expect"] / Tmax, color=st[:2], lw=0.6, ls=":")
ax.set_xlabel("step")
ax.set_ylabel("traction / (μ_a·Y·ε_c)")
ax.set_title("descending branch: steady only if G/H > 4 μ_a Y ε_c/(ε_a h)", fontsize=10)
ax.legend(fontsize=7, loc="lower right")
ax.grid(alpha=0.3)
fig.suptitle(f"adhesion_curves (b): shear at the balance gap, ε_a = {P['eps_a']:g} m/s, h = {P['h']:g} s, "
             f"μ_a = {P['mu_a']:g}")
figures.save(fig, out, "tangential.png")
sys.exit(claims.summary())
