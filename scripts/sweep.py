#!/usr/bin/env python3
"""sweep.py — run one scene over a grid of --set values, in parallel, and collect one table.

Usage:
  scripts/sweep.py SCENE.json --grid KEY=V1,V2,... [--grid KEY=...]... [--set KEY=V]...
                   [--metric NAME=DATASET:REDUCTION]... [--jobs N] [--out DIR] [--cl PATH]

Every combination of the --grid values (their Cartesian product, in the order given) is one run
of `contactlab run SCENE --quiet --threads 1 -o DIR/run_<k>.h5 --set KEY=V ...` (the fixed --set
values first). Runs go N at a time (default: the number of cores). Each metric reduces one HDF5
dataset of the run to a number: REDUCTION is one of last, first, mean, max, min, sum, absmax,
or frac_gt:X (the fraction of entries > X), and DATASET a path such as /steps/newton_iters or
/model/rcc_ipc/beta_mean (for a vector probe, `/probes/name#1` takes component 1). Always
reported: the exit status, steps, mean Newton iterations per step, the wall time per step, and
the total intersections.

The table goes to stdout (aligned text) and to DIR/summary.csv. A run that fails keeps its row,
with its exit status and empty metrics; the script exits 1 if any run failed, 2 on bad usage.
"""
import argparse
import csv
import itertools
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))  # contactlab

REDUCTIONS = ("last", "first", "mean", "max", "min", "sum", "absmax")


def parse_kv(text, what):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"{what} '{text}': expected KEY=VALUE")
    k, v = text.split("=", 1)
    if not k:
        raise argparse.ArgumentTypeError(f"{what} '{text}': empty key")
    return k, v


def split_grid_values(v):
    """Split on commas that are not inside brackets (so [1,2,3] stays one value)."""
    out, depth, cur = [], 0, ""
    for ch in v:
        if ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x for x in out if x != ""]


def parse_metric(text):
    name, spec = parse_kv(text, "--metric")
    if ":frac_gt:" in spec:
        ds, x = spec.split(":frac_gt:", 1)
        red = "frac_gt:" + x
        try:
            float(x)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--metric '{text}': frac_gt needs a number")
    elif ":" in spec:
        ds, red = spec.rsplit(":", 1)
    else:
        raise argparse.ArgumentTypeError(f"--metric '{text}': expected NAME=DATASET:REDUCTION")
    if red not in REDUCTIONS and not red.startswith("frac_gt:"):
        raise argparse.ArgumentTypeError(f"--metric '{text}': unknown reduction '{red}'")
    return name, ds, red


def reduce(values, red):
    import numpy as np

    a = np.asarray(values, dtype=float).ravel()
    a = a[np.isfinite(a)]
    if a.size == 0:
        return float("nan")
    if red == "last":
        return float(a[-1])
    if red == "first":
        return float(a[0])
    if red == "mean":
        return float(a.mean())
    if red == "max":
        return float(a.max())
    if red == "min":
        return float(a.min())
    if red == "sum":
        return float(a.sum())
    if red == "absmax":
        return float(abs(a).max())
    x = float(red.split(":", 1)[1])
    return float((a > x).mean())


def read_metrics(path, metrics):
    from contactlab import runs  # h5py is only needed once a run is read

    always = ["/steps/newton_iters", "/steps/wall_s", "/steps/intersections"]
    data = runs.read(path, always + [ds.split("#", 1)[0] for _, ds, _ in metrics])
    steps, wall, inter = ([] if data[k] is None else data[k] for k in always)
    out = {"steps": len(steps)}
    out["newton_per_step"] = float(sum(steps)) / len(steps) if len(steps) else float("nan")
    out["wall_per_step_s"] = float(sum(wall)) / len(wall) if len(wall) else float("nan")
    out["intersections"] = int(sum(inter))
    for name, ds, red in metrics:
        v = data[ds.split("#", 1)[0]]
        if v is None:
            out[name] = float("nan")
            continue
        if "#" in ds:  # one component of a vector probe
            v = v[:, int(ds.split("#", 1)[1])]
        out[name] = reduce(v, red)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scene")
    ap.add_argument("--grid", action="append", default=[], type=lambda t: parse_kv(t, "--grid"))
    ap.add_argument("--set", action="append", default=[], type=lambda t: parse_kv(t, "--set"))
    ap.add_argument("--metric", action="append", default=[], type=parse_metric)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="plots/out/sweep")
    ap.add_argument("--cl", default=os.environ.get("CL", "build/contactlab"))
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    if not args.grid:
        print("sweep.py: at least one --grid KEY=V1,V2,... is needed", file=sys.stderr)
        sys.exit(2)
    if not os.path.isfile(args.scene):
        print(f"sweep.py: {args.scene}: no such file", file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.out, exist_ok=True)
    keys = [k for k, _ in args.grid]
    values = [split_grid_values(v) for _, v in args.grid]
    combos = list(itertools.product(*values))
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OPENBLAS_NUM_THREADS="1")

    def run(k_combo):
        k, combo = k_combo
        out = os.path.join(args.out, f"run_{k:03d}.h5")
        cmd = [args.cl, "run", args.scene, "--quiet", "--threads", "1", "-o", out]
        for key, v in list(args.set) + list(zip(keys, combo)):
            cmd += ["--set", f"{key}={v}"]
        t0 = time.time()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        row = {"run": k, **dict(zip(keys, combo)), "exit": p.returncode, "wall_s": round(time.time() - t0, 3)}
        if p.returncode == 0 or os.path.isfile(out):
            try:
                row.update(read_metrics(out, args.metric))
            except (OSError, KeyError) as e:
                row["error"] = str(e)
        if p.returncode != 0:
            row["error"] = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        return row

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        rows = list(ex.map(run, enumerate(combos)))
    cols = ["run"] + keys + ["exit", "steps", "newton_per_step", "wall_per_step_s", "intersections"]
    cols += [m[0] for m in args.metric] + ["wall_s", "error"]
    with open(os.path.join(args.out, "summary.csv"), "w", newline="") as fcsv:
        w = csv.DictWriter(fcsv, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)

    def fmt(v):
        if isinstance(v, float):
            return f"{v:.6g}"
        return "" if v is None else str(v)

    table = [[fmt(r.get(c)) for c in cols] for r in rows]
    widths = [max(len(c), *(len(t[i]) for t in table)) for i, c in enumerate(cols)]
    print("  ".join(c.ljust(wd) for c, wd in zip(cols, widths)))
    for t in table:
        print("  ".join(x.ljust(wd) for x, wd in zip(t, widths)))
    print(f"sweep.py: {len(rows)} runs, summary in {os.path.join(args.out, 'summary.csv')}")
    sys.exit(1 if any(r["exit"] != 0 for r in rows) else 0)


if __name__ == "__main__":
    main()
