#!/usr/bin/env python3
"""Analysis of experiments/model_matrix: the canonical scenes under every model of models.json.
Reads OUTDIR/<scene>__<label>.h5 and OUTDIR/models.txt (`contactlab models`, written by run.sh),
prints the Markdown table (scene, model, key quantity, measured, analytic, error, intersections,
iterations and time per step) and writes it to OUTDIR/table.md, plots OUTDIR/model_matrix.png
(one panel per scene: the key quantity over time per model, the analytic value dashed), checks the
claims of README.md and exits 1 if one fails.

Every analytic value comes from the parameters in a run file (its resolved scene, its mesh, its
model's logged parameters). A model that has the physics the value needs (friction on the incline,
an adhesion law for the pull-off) gets the value of its own parameters, which must equal the
reference run's; a model without it gets the value of the scene's reference run (the run of the
scene file's own contact block)."""
import math
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, HERE)
from contactlab import cli, figures, params, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
import matrix  # noqa: E402


# ---- reading a run ----

def body_index(run, name):
    """Index of the body called name in the run's scene."""
    return [b["name"] for b in run.scene["bodies"]].index(name)


def com(run, body):
    """Mass-weighted centre of the body (index) in every frame (frames × dim)."""
    sel = run.mesh["vertex_body"] == body
    m = run.mesh["mass"][sel]
    return (run.frames["x"][:, sel, :] * m[None, :, None]).sum(axis=1) / m.sum()


def box_size(run, body):
    """The size [x, y, z] of a body made by the box generator (before its transform)."""
    return run.scene["bodies"][body]["mesh"]["size"]


def has(run, name):
    """Whether the run's model has the parameter name."""
    return name in run.params


def family(run):
    """The run's model family, "energy" or "constraint"."""
    f = run.params.get("family", b"energy")
    return f.decode() if isinstance(f, bytes) else str(f)


def solver_stats(run):
    """Mean iterations per step (Newton; lcp_pgs: its PGS sweeps) and their kind, the
    median wall time of a step without the intersection verifier (ms), the largest intersection
    count of a step, and the deepest penetration (m; 0 if none): the model's smallest contact
    distance and every vertex's signed distance to every half-space in every frame."""
    st = run.steps
    if family(run) == "constraint" and "pgs_iters" in run.model:
        iters, kind = float(np.mean(run.model["pgs_iters"])), "PGS"
    else:
        iters, kind = float(np.mean(st["newton_iters"])), "Newton"
    ms = 1e3 * float(np.median(st["wall_s"] - st["t_verify"]))
    depth = max(0.0, -float(np.min(st["min_distance"])))
    for ob in run.scene.get("obstacles", []):
        n = np.array(ob["normal"], float)
        n /= np.linalg.norm(n)
        depth = max(depth, -float(np.min((run.frames["x"] - np.array(ob["point"], float)) @ n)))
    return iters, kind, ms, int(np.max(st["intersections"])), depth


def registry(path):
    """From the output of `contactlab models`: the registered models (test models left out) and
    those that guarantee intersection-free steps."""
    names, free, name = [], set(), None
    with open(path) as f:
        for line in f:
            if line.strip() and not line.startswith(" ") and " — " in line:
                name, text = line.split(" — ", 1)
                name = None if text.startswith("test model") else name
                if name:
                    names.append(name)
            elif name and line.strip().startswith("family:") and "guarantees intersection-free" in line:
                free.add(name)
    return names, free


# ---- the scenes ----

class Scene:
    """A canonical scene. value(run): its key quantity measured on a run; series(run): (time, what the
    panel plots, described by ylabel); analytic(run): the analytic value from the run's parameters
    (None when the run's model lacks the physics it needs) and curve(run, t) over time;
    tolerance(run, ref): the largest error a model that has the physics may show (ref: the reference
    run). own_physics: the analytic value depends on the model's parameters, not only on the bodies,
    loads and motions."""
    name = quantity = unit = ylabel = ""
    error_kind = ""  # how the error is expressed when it is not relative
    own_physics = False

    def error(self, run, measured, expected):
        """The error the tolerance applies to: relative."""
        return (measured - expected) / expected

    def curve(self, run, t):
        """The analytic value over time t (the panel's dashed curve): constant unless overridden."""
        return np.full_like(t, self.analytic(run))


class Incline(Scene):
    """A stiff box released on a slope with μ < tanθ slides with a = g (sinθ − μ cosθ)."""
    name = "incline"
    quantity, unit = "sliding acceleration", "m/s²"
    ylabel = "velocity down the slope (m/s)"
    own_physics = True  # μ
    FIT_FROM = 0.1  # s: the least-squares line through the velocity starts after the release transient

    def geometry(self, run):
        """|g|, the unit vector down the slope, sinθ and cosθ, from gravity and the half-space."""
        n = np.array(run.scene["obstacles"][0]["normal"], float)
        n /= np.linalg.norm(n)
        g = np.array(run.scene["gravity"], float)
        g_along = g - (g @ n) * n
        return (np.linalg.norm(g), g_along / np.linalg.norm(g_along),
                np.linalg.norm(g_along) / np.linalg.norm(g), -(g @ n) / np.linalg.norm(g))

    def series(self, run):
        _, down, _, _ = self.geometry(run)
        return run.steps["time"], run.probes["velocity"] @ down

    def value(self, run):
        t, v = self.series(run)
        late = t > self.FIT_FROM
        return float(np.polyfit(t[late], v[late], 1)[0])

    def analytic(self, run):
        if not has(run, "mu"):
            return None
        g, _, sin, cos = self.geometry(run)
        return g * max(sin - params.value(run, "mu") * cos, 0.0)

    def curve(self, run, t):
        return self.analytic(run) * t  # implicit Euler: v_n = a t_n exactly under a constant force

    def tolerance(self, run, ref):
        # implicit Euler is exact for a rigid block under a constant force, and the mollified friction
        # is on its sliding branch once v > ε_v (within the first step): what is left is the elastic
        # settling of the contact in the fit window, for which issue 3 allows 2 %
        return 0.02


class Slide(Scene):
    """A cube pressed on a frictionless triangulated floor and pushed by F: its centre of mass follows
    implicit Euler's F t_n (t_n + h)/(2m) exactly unless the contact pushes sideways (energy walls)."""
    name = "slide"
    quantity, unit = "travel Δx_com(T)", "m"
    ylabel = "travel of the centre of mass (m)"

    def series(self, run):
        x = com(run, body_index(run, "cube"))[:, 0]
        return run.frames["time"], x - x[0]

    def value(self, run):
        return float(self.series(run)[1][-1])

    def curve(self, run, t):
        cube = body_index(run, "cube")
        F = sum(load["force"][0] for load in run.scene["bodies"][cube]["loads"])
        m = run.mesh["mass"][run.mesh["vertex_body"] == cube].sum()
        return F * t * (t + run.scene["time"]["dt"]) / (2 * m)

    def analytic(self, run):
        return float(self.curve(run, run.frames["time"][-1:])[0])

    def tolerance(self, run, ref):
        # a constant sideways contact force f moves the end point by f T²/(2m): 1 % of the travel is a
        # mean sideways contact force of 1 % of the push (experiments/cube_push)
        return 0.01


class Pulloff(Scene):
    """A soft plate bonded to a half-space, its top face pulled up at a constant speed: the largest
    tensile force is the adhesion law's peak traction times the bonded area."""
    name = "pulloff"
    quantity, unit = "peak pull-off force", "N"
    ylabel = "pull on the top face (N)"
    own_physics = True  # the adhesion law's peak traction

    def peak_traction(self, run):
        """σ_p (Pa) of the run's adhesion law, None without one: Fang et al. Y·ε_c (Y the plate's
        modulus: the half-space has none), RCC and Gascón et al. √(C W) (bonded at the start)."""
        if has(run, "eps_c") and params.value(run, "eps_c") > 0:
            return run.scene["bodies"][0]["material"]["E"] * params.value(run, "eps_c")
        for c in ("c_n", "c"):
            if has(run, c) and params.value(run, c) > 0 and params.value(run, "beta0") > 0:
                return math.sqrt(params.value(run, c) * params.value(run, "w"))
        return None

    def area(self, run):
        size = box_size(run, 0)
        return size[0] * size[2]

    def series(self, run):
        return run.steps["time"], run.probes["reaction"]

    def value(self, run):
        return float(np.max(run.probes["reaction"]))

    def analytic(self, run):
        sp = self.peak_traction(run)
        return None if sp is None else sp * self.area(run)

    def tolerance(self, run, ref):
        size = box_size(ref, 0)
        v = ref.scene["bodies"][0]["fixed"]["motion"][0]["velocity"][1]
        # the gap grows by v h per step: the step nearest the law's peak is within v h/2 of it, and the
        # law falls off its peak by at most σ_p/d̂_p per metre on either side
        sampling = v * ref.scene["time"]["dt"] / (2 * params.value(ref, "dhat_p"))
        # the vertex quadrature (⅓ of every incident triangle) also counts the bottom rim's half of the
        # side faces: perimeter × thickness / 2 over the face area
        rim = (size[0] + size[2]) * size[1] / self.area(ref)
        # a viscous debonding law (RCC, Gascón et al.) peaks later than the rate-independent law, by
        # η v/(8 W d*) of the peak (experiments/pull_peel, "Parameter mapping")
        lag = 0.0
        if has(run, "eta") and has(run, "w"):
            c, w = params.value(run, "c_n" if has(run, "c_n") else "c"), params.value(run, "w")
            lag = params.value(run, "eta") * v / (8 * w * math.sqrt(w / c))
        return sampling + rim + lag


class Wall(Scene):
    """A soft cube bonded to a vertical wall, gravity along the wall: large adhesion holds it, and
    its centre of mass drops only by the cube's elastic sag."""
    name = "wall"
    quantity, unit = "largest drop of the centre of mass", "m"
    ylabel = "drop of the centre of mass (m)"
    error_kind = " of free fall"

    def free_fall(self, run):
        """Implicit Euler's free-fall drop g T (T + h)/2 over the run."""
        T, h = run.frames["time"][-1], run.scene["time"]["dt"]
        return -run.scene["gravity"][1] * T * (T + h) / 2

    def series(self, run):
        y = com(run, 0)[:, 1]
        return run.frames["time"], y[0] - y

    def value(self, run):
        return float(np.max(self.series(run)[1]))

    def analytic(self, run):
        return 0.0  # held

    def error(self, run, measured, expected):
        return (measured - expected) / self.free_fall(run)

    def tolerance(self, run, ref):
        b = ref.scene["bodies"][0]
        rho, E, nu = b["material"]["density"], b["material"]["E"], b["material"]["nu"]
        L, g = box_size(ref, 0)[0], -ref.scene["gravity"][1]
        # the held cube sags like a cantilever of length L from the wall: mean shear deflection
        # ρgL²/(3G) plus mean bending deflection 3ρgL²/(5E); the weight comes on at once, so the
        # dynamic overshoot may reach twice that
        sag = rho * g * L ** 2 * (2 * (1 + nu) / (3 * E) + 3 / (5 * E))
        return 2 * sag / self.free_fall(ref)


class Stack(Scene):
    """Four soft boxes dropped onto each other and a floor: the top box's centre ends at the height
    of the rigid stack, up to one contact gap per interface and the boxes' compression."""
    name = "stack"
    quantity, unit = "top box's centre height", "m"
    ylabel = "top box's centre height (m)"

    def series(self, run):
        return run.frames["time"], com(run, len(run.scene["bodies"]) - 1)[:, 1]

    def value(self, run):
        return float(self.series(run)[1][-1])

    def analytic(self, run):
        heights = [box_size(run, k)[1] for k in range(len(run.scene["bodies"]))]
        return sum(heights[:-1]) + heights[-1] / 2

    def tolerance(self, run, ref):
        bodies, g = ref.scene["bodies"], -ref.scene["gravity"][1]
        mass = [ref.mesh["mass"][ref.mesh["vertex_body"] == k].sum() for k in range(len(bodies))]
        # each box shortens by less than the weight of itself and the boxes on it over its area, W H/(E A)
        squeeze = 0.0
        for k, b in enumerate(bodies):
            sx, sy, sz = b["mesh"]["size"]
            squeeze += g * sum(mass[k:]) * sy / (b["material"]["E"] * sx * sz)
        # and each interface (the floor's included) stands open by less than the reference's d̂
        gaps = len(bodies) * params.value(ref, "dhat")
        return (gaps + squeeze) / self.analytic(ref)


SCENES = [Incline(), Slide(), Pulloff(), Wall(), Stack()]


# ---- the matrix ----

def analyse_scene(scene, models, out, claims):
    """The rows of one scene (dicts) and its panel's data; None if its reference run is missing."""
    loaded, missing = {}, []
    for label in models:
        e = matrix.entry(models, label, scene.name)
        if e is None:
            continue
        path = matrix.run_file(out, scene.name, label)
        run = runs.load(path) if os.path.exists(path) else None
        if run is None or len(run.steps["time"]) != round(run.scene["time"]["duration"] / run.scene["time"]["dt"]):
            missing.append(label)
        else:
            loaded[label] = (run, e)
    claims.check(not missing, f"{scene.name}: every model's run is there and ran to the end"
                 + (f" (not: {', '.join(missing)})" if missing else f" ({len(loaded)} runs)"))
    ref = next((run for run, e in loaded.values() if "contact" not in e), None)
    if not claims.check(ref is not None, f"{scene.name}: the reference run (the scene's own contact block) is there"):
        return None
    expected_ref = scene.analytic(ref)
    rows, lines, own_values = [], [], {}
    for label, (run, e) in loaded.items():
        expect, why = e.get("expect", "agrees"), e.get("why", "")
        measured, own = scene.value(run), scene.analytic(run)
        if own is not None and run is not ref:
            own_values[label] = own
        expected = expected_ref if own is None else own
        err, tol = scene.error(run, measured, expected), scene.tolerance(run, ref)
        iters, kind, ms, inter, depth = solver_stats(run)
        text = (f"{scene.name} × {label}: {scene.quantity} {measured:.5g} {scene.unit}, analytic {expected:.5g}, "
                f"error {err:+.2e}{scene.error_kind or ' rel.'}")
        if expect == "agrees":
            claims.check(abs(err) <= tol, f"{text}, within {tol:.2e}")
        elif expect == "differs":
            claims.check(abs(err) > tol, f"{text}, outside {tol:.2e} ({why})")
        else:
            print(f"note  {text} (no claim: {why})")
        rows.append(dict(scene=scene, label=label, model=str(run.attrs["model"]), measured=measured, expected=expected,
                         err=err, expect=expect, why=why, inter=inter, depth=depth, iters=iters, kind=kind, ms=ms))
        lines.append((label, expect) + scene.series(run))
    if scene.own_physics:
        off = [f"{label}: {v:.9g}" for label, v in own_values.items()
               if abs(v - expected_ref) > 1e-9 * abs(expected_ref)]
        claims.check(not off, f"{scene.name}: the analytic value of every model with the physics, from its own "
                     f"parameters, is the reference's {expected_ref:.6g} {scene.unit} ({', '.join(own_values)})"
                     + (f"; not: {', '.join(off)}" if off else ""))
    t_ref = scene.series(ref)[0]
    return rows, dict(lines=lines, t=t_ref, analytic=scene.curve(ref, t_ref))


def markdown(rows):
    """The table of README.md: one row per (scene, model); errors of rows that claim no agreement in
    parentheses, their reason in the note."""
    lines = ["| scene | model | key quantity | measured | analytic | error | intersections | iterations / step "
             "| time / step (ms) | note |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s = r["scene"]
        err = f"{r['err']:+.1e}{s.error_kind}"
        if r["expect"] != "agrees":
            err = f"({err})"
        inter = str(r["inter"]) + (f", {r['depth']:.1e} m deep" if r["depth"] > 0 else "")
        note = "" if r["expect"] == "agrees" else f"{r['expect']}: {r['why']}"
        lines.append(f"| {s.name} | {r['label']} | {s.quantity} ({s.unit}) | {r['measured']:.4g} | {r['expected']:.4g} "
                     f"| {err} | {inter} | {r['iters']:.1f} {r['kind']} | {r['ms']:.2f} | {note} |")
    return "\n".join(lines)


def plot(panels, out):
    """model_matrix.png: one panel per scene. The y range fits the analytic curve and the runs that
    claim agreement; runs marked differs or n/a are dotted and may leave the panel."""
    plt = figures.pyplot()
    if plt is None:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(4.0 * len(panels), 3.9))
    colors = {}
    for ax, (scene, p) in zip(np.atleast_1d(axes), panels):
        shown = [p["analytic"]]
        for label, expect, t, y in p["lines"]:
            k = colors.setdefault(label, len(colors))
            # the first models widest, so that curves that coincide stay visible under the later ones
            ax.plot(t, y, color=f"C{k}", label=label, lw=max(3.2 - 0.4 * k, 0.8), ls="-" if expect == "agrees" else ":")
            if expect == "agrees":
                shown.append(y)
        ax.plot(p["t"], p["analytic"], "k--", lw=1, label="analytic")
        lo, hi = min(np.min(y) for y in shown), max(np.max(y) for y in shown)
        pad = 0.15 * (hi - lo) if hi > lo else 0.1 * max(abs(hi), 1e-3)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_title(scene.name, fontsize=10)
        ax.set_xlabel("t (s)")
        ax.set_ylabel(scene.ylabel)
    handles = {}
    for ax in np.atleast_1d(axes):
        for h, lbl in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lbl, h)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=len(handles), fontsize=9)
    figures.save(fig, out, "model_matrix.png", rect=(0, 0.07, 1, 1))


def main():
    args = cli.parser(__doc__, "plots/out/model_matrix").parse_args()
    out = args.outdir
    models = matrix.load()
    claims = Claims()
    registered, free = registry(os.path.join(out, "models.txt"))
    run_models = {e["contact"]["model"] for scenes in models.values() for e in scenes.values() if "contact" in e}
    claims.check(set(registered) <= set(models) | run_models,
                 f"every registered model ({', '.join(registered)}) has runs in models.json")
    rows, panels = [], []
    for scene in SCENES:
        result = analyse_scene(scene, models, out, claims)
        if result is not None:
            rows += result[0]
            panels.append((scene, result[1]))
    for model in sorted(free):
        mine = [r for r in rows if r["model"] == model]
        bad = [f"{r['scene'].name} × {r['label']}" for r in mine if r["inter"] != 0 or r["depth"] != 0.0]
        claims.check(mine and not bad, f"{model} guarantees intersection-free steps: no intersection in any step "
                     f"and no vertex behind a half-space in any frame, in all its {len(mine)} runs"
                     + (f" (not: {', '.join(bad)})" if bad else ""))
    table = markdown(rows)
    print()
    print(table)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(table + "\n")
    print("wrote", os.path.join(out, "table.md"))
    if panels and not args.no_plot:
        plot(panels, out)
    return claims.summary()


if __name__ == "__main__":
    sys.exit(main())
