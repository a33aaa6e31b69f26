#!/usr/bin/env python3
"""Analysis of experiments/rcc_vs_ours: classifies every blob of every run (classify.py: stuck /
sliding / floor / free), checks the claims of README.md, prints the table (fraction stuck, ms and
Newton iterations per step, intersections, RCC clamps) and the RCC/ours time ratio next to the
paper's, writes OUTDIR/rcc_vs_ours.dat and (not with --quick) OUTDIR/rcc_vs_ours.png (y of every
blob's centre against t, one panel per model and h). Exit 1 if a claim fails."""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from contactlab import cli, figures, runs  # noqa: E402
from contactlab.claims import Claims  # noqa: E402
from classify import classify  # noqa: E402

args = cli.parser(__doc__, "plots/out/rcc_vs_ours", quick=True).parse_args()
out, quick = args.outdir, args.quick
claims = Claims()


RUNS = [("ours", "0.01", "ours_h0.01.h5"), ("RCC", "0.01", "rcc_h0.01.h5")]
if not quick:
    RUNS += [("ours v*0.9", "0.01", "ours_h0.01_v0.9.h5"), ("RCC v*0.9", "0.01", "rcc_h0.01_v0.9.h5"),
             ("ours v*1.1", "0.01", "ours_h0.01_v1.1.h5"), ("RCC v*1.1", "0.01", "rcc_h0.01_v1.1.h5"),
             ("ours", "0.005", "ours_h0.005.h5"), ("RCC", "0.005", "rcc_h0.005.h5"),
             ("ours", "0.001", "ours_h0.001.h5"), ("RCC", "0.001", "rcc_h0.001.h5"),
             ("RCC eta=0.01", "0.001", "rcc_h0.001_eta0.01.h5")]
R = {}
for model, h, fn in RUNS:
    run = runs.load(os.path.join(out, fn))
    res, st = classify(run)
    st["inter_max"] = int(run.steps["intersections"].max())
    st["t"] = run.steps["time"]
    st["pos"] = {n: run.probes["pos_" + n] for n in res}
    R[(model, h)] = (res, st)

names = list(R[("ours", "0.01")][0])
print(f"{'model':14s} {'h':>6s} {'stuck':>6s} {'ms/step':>8s} {'iters':>6s} {'inter':>5s} {'clamp0':>6s}  "
      + " ".join(f"{n:>8s}" for n in names))
rows = []
for (model, h), (res, st) in R.items():
    ns = sum(v["cls"] == "stuck" for v in res.values())
    print(f"{model:14s} {h:>6s} {ns:>2d}/{len(res):<3d} {st['ms']:8.2f} {st['iters']:6.2f} {st['inter']:5d} "
          f"{'' if st['clamped0'] is None else st['clamped0']:>6}  " + " ".join(f"{res[n]['cls']:>8s}" for n in names))
    rows.append((model.replace(" ", "_"), h, ns / len(res), st["ms"], st["iters"], st["inter"]))
for (model, h), (res, st) in R.items():
    print(f"  {model} h={h}: " + ", ".join(f"{n} y={v['y']:.3f} x={v['x']:.3f}" for n, v in res.items()))
with open(os.path.join(out, "rcc_vs_ours.dat"), "w") as f:
    f.write("# model h frac_stuck ms_per_step newton_per_step intersections\n")
    for r in rows:
        f.write("%s %s %.4f %.3f %.3f %d\n" % r)

for h in ("0.01", "0.001"):
    if ("ours", h) in R:
        ratio = R[("RCC", h)][1]["ms"] / R[("ours", h)][1]["ms"]
        print(f"time per step RCC/ours at h = {h}: {ratio:.2f} (paper, Table 1 and §5.1.1: "
              f"0.88/0.92 = {0.88 / 0.92:.2f}; machine shared, single thread)")

claims.check(all(st["inter_max"] == 0 for _, st in R.values()),
             f"0 intersections in every step of all {len(R)} runs")
cls = {m: {n: v["cls"] == "stuck" for n, v in R[(m, "0.01")][0].items()} for m in ("ours", "RCC")}
claims.check(cls["ours"] == cls["RCC"],
             "h = 0.01: the stuck/fallen classification of ours and RCC agrees blob by blob "
             f"(ours stuck: {[n for n in names if cls['ours'][n]]}, RCC stuck: {[n for n in names if cls['RCC'][n]]})")
claims.check(0 < sum(cls["ours"].values()) < len(names),
             f"h = 0.01: some blobs stick and some fall ({sum(cls['ours'].values())}/{len(names)} stuck)")
if not quick:
    for v in ("0.9", "1.1"):
        a = {n: x["cls"] == "stuck" for n, x in R[(f"ours v*{v}", "0.01")][0].items()}
        b = {n: x["cls"] == "stuck" for n, x in R[(f"RCC v*{v}", "0.01")][0].items()}
        claims.check(a == b, f"h = 0.01, throw velocities x{v}: the classification of ours and RCC agrees "
                     f"(ours stuck: {[n for n in names if a[n]]}, RCC stuck: {[n for n in names if b[n]]})")
    for h in ("0.005", "0.001"):
        a = {n: v["cls"] == "stuck" for n, v in R[("ours", h)][0].items()}
        b = {n: v["cls"] == "stuck" for n, v in R[("RCC", h)][0].items()}
        print(f"report h = {h}: ours stuck {[n for n in names if a[n]]}, RCC stuck {[n for n in names if b[n]]}, "
              f"{'agree' if a == b else 'differ'}")

plt = None if quick or args.no_plot else figures.pyplot()
if plt:
    keys = [k for k in R if "v*" not in k[0]]
    fig, axs = plt.subplots(2, len(keys), figsize=(3.2 * len(keys), 6.4), sharey="row", squeeze=False)
    for j, k in enumerate(keys):
        res, st = R[k]
        for n in names:
            pos = st["pos"][n]
            lab = f"{n}: {res[n]['cls']}"
            axs[0, j].plot(st["t"], pos[:, 1], label=lab)
            axs[1, j].plot(pos[:, 0], pos[:, 1], label=lab)
        axs[0, j].set_title(f"{k[0]}, h = {k[1]} s")
        axs[0, j].set_xlabel("t (s)")
        axs[1, j].set_xlabel("x of centre (m)")
        axs[0, j].legend(fontsize=7)
    axs[0, 0].set_ylabel("y of centre (m)")
    axs[1, 0].set_ylabel("y of centre (m)")
    figures.save(fig, out, "rcc_vs_ours.png", dpi=110)
sys.exit(claims.summary())
