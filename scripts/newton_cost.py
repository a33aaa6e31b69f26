#!/usr/bin/env python3
"""newton_cost.py — what a solver change costs on every experiment: Newton iterations and wall
time per experiment, from the /steps tables of two output trees of the experiments (e.g. the
output of `make figures` before and after the change, or scripts/same_output.sh's caches).

    scripts/newton_cost.py BEFORE_DIR AFTER_DIR [--md]

Each DIR holds one folder per experiment (DIR/<experiment>/**/*.h5, as plots/out/ after
`make figures`); runs are matched by their path below DIR. Per experiment: runs found in both,
steps, Newton iterations (total, mean and max per step) and the summed step wall times, before ->
after, with ratios. Runs present in one tree only are counted and listed apart."""
import os
import sys

import h5py
import numpy as np


def runs(root):
    out = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith(".h5"):
                continue
            p = os.path.join(dirpath, f)
            try:
                with h5py.File(p, "r") as h:
                    if "steps" not in h or "newton_iters" not in h["steps"]:
                        continue
                    it = h["steps/newton_iters"][:]
                    wall = h["steps/wall_s"][:] if "wall_s" in h["steps"] else np.zeros(len(it))
                    ok = len(it) > 0
            except OSError:
                continue
            if ok:
                out[os.path.relpath(p, root)] = (it.astype(float), wall.astype(float))
    return out


def main(argv):
    md = "--md" in argv
    args = [a for a in argv if a != "--md"]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    before, after = runs(args[0]), runs(args[1])
    exps = sorted({k.split(os.sep)[0] for k in list(before) + list(after)})
    head = ["experiment", "runs", "steps", "Newton iters (before -> after)", "ratio",
            "mean/step", "max/step", "wall s (before -> after)", "ratio"]
    rows = []
    tot = np.zeros(4)
    for e in exps:
        keys = sorted(k for k in before if k.split(os.sep)[0] == e and k in after)
        only = sorted(k for k in set(before) ^ set(after) if k.split(os.sep)[0] == e)
        if not keys:
            rows.append([e, "0", "-", "-", "-", "-", "-", "-", "-"] + (["(only in one tree: %d)" % len(only)] if only else []))
            continue
        ib = np.concatenate([before[k][0] for k in keys])
        ia = np.concatenate([after[k][0] for k in keys])
        wb = sum(before[k][1].sum() for k in keys)
        wa = sum(after[k][1].sum() for k in keys)
        tot += [ib.sum(), ia.sum(), wb, wa]
        rows.append([e, str(len(keys)), "%d / %d" % (len(ib), len(ia)), "%d -> %d" % (ib.sum(), ia.sum()),
                     "%.2f" % (ia.sum() / ib.sum()), "%.2f -> %.2f" % (ib.mean(), ia.mean()),
                     "%d -> %d" % (ib.max(), ia.max()), "%.1f -> %.1f" % (wb, wa),
                     "%.2f" % (wa / wb if wb > 0 else float("nan"))]
                    + (["(+%d run(s) in one tree only)" % len(only)] if only else []))
    rows.append(["all", "", "", "%d -> %d" % (tot[0], tot[1]), "%.2f" % (tot[1] / tot[0]), "", "",
                 "%.1f -> %.1f" % (tot[2], tot[3]), "%.2f" % (tot[3] / tot[2] if tot[2] > 0 else float("nan"))])
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r[:len(head)]) + " |" + (" " + r[len(head)] if len(r) > len(head) else ""))
    else:
        w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
        for r in [head] + rows:
            print("  ".join(str(c).ljust(w[i]) for i, c in enumerate(r[:len(head)])) + ("  " + r[len(head)] if len(r) > len(head) else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
