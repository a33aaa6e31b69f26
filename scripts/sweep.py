#!/usr/bin/env python3
"""sweep.py — run one scene over a grid of --set values, locally in parallel or as a Slurm job array, and
collect one table.

Usage:
  scripts/sweep.py SCENE.json --grid KEY=V1,V2,... [--grid KEY=...]... [--set KEY=V]...
                   [--metric NAME=DATASET:REDUCTION]... [--jobs N] [--out DIR] [--cl PATH]
                   [--index K | --slurm FILE [--sbatch-opt OPT]... | --collect] [--force]

Every combination of the --grid values (their Cartesian product, in the order given; point K is the
K-th, from 0) is one run of `contactlab run SCENE --quiet --threads 1 -o DIR/run_<K>.h5 --set KEY=V ...`
(the fixed --set values first). The binary is --cl, else $CL, else build/contactlab next to this
script ($CT_BUILD for another build directory).

  (default)   every point, N at a time (default: the number of cores), then the table;
  --index K   point K only (what one task of a job array runs); no table;
  --slurm F   write F, an sbatch script of a job array with one task per point (`--index
              $SLURM_ARRAY_TASK_ID`, logs DIR/slurm_<K>.log; --sbatch-opt adds #SBATCH lines such as
              --partition=debug), and print how to submit it and collect; runs nothing;
  --collect   no run: the table of the points already run (a missing point is a failed row).

A point that finished before (DIR/point_<K>.json with exit 0 and the same hash of the scene file's bytes
and the point's --set values, and its run file present) is not run again (--force runs it again); its
metrics are read from its run file again, so a new --metric applies. Each finished run prints one
progress line to stderr. Each metric reduces one HDF5 dataset of the run to a number: REDUCTION is
one of last, first, mean, max, min, sum, absmax, or frac_gt:X (the fraction of entries > X), and
DATASET a path such as /steps/newton_iters or /model/rcc_ipc/beta_mean (for a vector probe,
`/probes/name#1` takes component 1: a vector without #K, or a dataset the run does not have, is an
error of that row, not a NaN). Always reported: the exit status, steps, mean Newton iterations per
step, the wall time per step, and the total intersections.

The table goes to stdout (aligned text) and to DIR/summary.csv. A run that fails keeps its row, with
its exit status, the error and empty metrics; the script exits 1 if any row failed, 2 on bad usage
(also when python3-numpy or python3-h5py are missing).
"""
import argparse
import csv
import hashlib
import itertools
import json
import os
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

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


class MetricError(Exception):
    """A metric the run file cannot give (a missing dataset, a vector without #component)."""


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
        path_ds = ds.split("#", 1)[0]
        v = data[path_ds]
        if v is None:
            raise MetricError(f"metric {name}: {path}: no dataset {path_ds}")
        if "#" in ds:  # one component of a vector probe
            c = int(ds.split("#", 1)[1])
            if v.ndim != 2 or not 0 <= c < v.shape[1]:
                raise MetricError(f"metric {name}: {path_ds} has no component {c} (shape {v.shape})")
            v = v[:, c]
        elif v.ndim > 1 and v.shape[1] > 1:
            raise MetricError(f"metric {name}: {path_ds} is a vector ({v.shape[1]} components): name one as "
                              f"{path_ds}#K")
        out[name] = reduce(v, red)
    return out


def check_modules():
    """numpy and h5py, which reading the runs needs; exit 2 with the packages to install if missing."""
    missing = []
    for m in ("numpy", "h5py"):
        try:
            __import__(m)
        except ImportError:
            missing.append(m)
    if missing:
        print(f"sweep.py: missing Python modules {', '.join(missing)}: apt-get install "
              + " ".join("python3-" + m for m in missing), file=sys.stderr)
        sys.exit(2)


def point_hash(scene_bytes, sets):
    """The identity of a point's run: the scene file's bytes and its --set values, in order."""
    h = hashlib.sha256(scene_bytes)
    for k, v in sets:
        h.update(b"\0" + k.encode() + b"=" + v.encode())
    return h.hexdigest()[:16]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_cl = os.environ.get("CL") or os.path.join(here, "..", os.environ.get("CT_BUILD", "build"), "contactlab")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scene")
    ap.add_argument("--grid", action="append", default=[], type=lambda t: parse_kv(t, "--grid"))
    ap.add_argument("--set", action="append", default=[], type=lambda t: parse_kv(t, "--set"))
    ap.add_argument("--metric", action="append", default=[], type=parse_metric)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="plots/out/sweep")
    ap.add_argument("--cl", default=default_cl)
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--index", type=int, default=None)
    mode.add_argument("--slurm", default=None, metavar="FILE")
    mode.add_argument("--collect", action="store_true")
    ap.add_argument("--sbatch-opt", action="append", default=[])
    ap.add_argument("--force", action="store_true")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    check_modules()
    if not args.grid:
        print("sweep.py: at least one --grid KEY=V1,V2,... is needed", file=sys.stderr)
        sys.exit(2)
    if not os.path.isfile(args.scene):
        print(f"sweep.py: {args.scene}: no such file", file=sys.stderr)
        sys.exit(2)
    if not args.collect and not args.slurm and not os.access(args.cl, os.X_OK):
        print(f"sweep.py: {args.cl}: no contactlab binary there (build it with make, or give --cl)", file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.out, exist_ok=True)
    keys = [k for k, _ in args.grid]
    values = [split_grid_values(v) for _, v in args.grid]
    combos = list(itertools.product(*values))
    if args.index is not None and not 0 <= args.index < len(combos):
        print(f"sweep.py: --index {args.index}: the grid has points 0..{len(combos) - 1}", file=sys.stderr)
        sys.exit(2)
    with open(args.scene, "rb") as f:
        scene_bytes = f.read()
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OPENBLAS_NUM_THREADS="1")

    if args.slurm:  # the job array script: each task runs this script with the same arguments and --index
        argv = [a for a in sys.argv[1:]]
        i = argv.index("--slurm")
        del argv[i:i + 2]
        argv = [x for j, x in enumerate(argv) if not (x == "--sbatch-opt" or (j > 0 and argv[j - 1] == "--sbatch-opt"))]
        cmd = [sys.executable, os.path.abspath(__file__)] + argv + ["--cl", os.path.abspath(args.cl),
                                                                     "--out", os.path.abspath(args.out)]
        lines = ["#!/bin/bash", f"#SBATCH --array=0-{len(combos) - 1}", "#SBATCH --cpus-per-task=1",
                 f"#SBATCH --output={os.path.abspath(args.out)}/slurm_%a.log",
                 f"#SBATCH --job-name=sweep_{os.path.splitext(os.path.basename(args.scene))[0]}"]
        lines += [f"#SBATCH {o}" for o in args.sbatch_opt]
        lines += [f"cd {shlex.quote(os.getcwd())}", " ".join(shlex.quote(c) for c in cmd) + ' --index "$SLURM_ARRAY_TASK_ID"']
        with open(args.slurm, "w") as f:
            f.write("\n".join(lines) + "\n")
        print(f"sweep.py: {args.slurm}: a job array of {len(combos)} tasks. Submit with\n"
              f"  sbatch {args.slurm}\nthen collect with the same arguments and --collect instead of --slurm")
        return

    def sets_of(combo):
        return list(args.set) + list(zip(keys, combo))

    def point_files(k):
        return os.path.join(args.out, f"run_{k:03d}.h5"), os.path.join(args.out, f"point_{k:03d}.json")

    def finish_row(k, combo, rc, wall, err):
        out, _ = point_files(k)
        row = {"run": k, **dict(zip(keys, combo)), "exit": rc, "wall_s": wall}
        if rc == 0 or os.path.isfile(out):
            try:
                row.update(read_metrics(out, args.metric))
            except (OSError, KeyError, MetricError) as e:
                row["error"] = str(e)
        if err:
            row["error"] = err
        return row

    def run(k_combo):
        k, combo = k_combo
        out, pj = point_files(k)
        h = point_hash(scene_bytes, sets_of(combo))
        if not args.force and os.path.isfile(pj) and os.path.isfile(out):
            with open(pj) as f:
                old = json.load(f)
            if old.get("hash") == h and old.get("exit") == 0:
                return finish_row(k, combo, 0, old.get("wall_s"), None), "done before"
        # a point's file is rewritten when its scene changed or the last try failed (or --force)
        cmd = [args.cl, "run", args.scene, "--quiet", "--threads", "1", "--force", "-o", out]
        for key, v in sets_of(combo):
            cmd += ["--set", f"{key}={v}"]
        t0 = time.time()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = round(time.time() - t0, 3)
        err = None if p.returncode == 0 else (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        with open(pj, "w") as f:
            json.dump({"run": k, "sets": sets_of(combo), "hash": h, "exit": p.returncode, "wall_s": wall,
                       "error": err}, f)
        return finish_row(k, combo, p.returncode, wall, err), f"exit {p.returncode} in {wall:.1f} s"

    def collected(k_combo):
        k, combo = k_combo
        _, pj = point_files(k)
        if not os.path.isfile(pj):
            return {"run": k, **dict(zip(keys, combo)), "exit": -1, "error": f"not run ({pj} missing)"}
        with open(pj) as f:
            old = json.load(f)
        if old.get("hash") != point_hash(scene_bytes, sets_of(combo)):
            return {"run": k, **dict(zip(keys, combo)), "exit": -1, "error": f"{pj}: run with other inputs"}
        return finish_row(k, combo, old.get("exit", -1), old.get("wall_s"), old.get("error"))

    points = list(enumerate(combos))
    if args.index is not None:
        row, how = run(points[args.index])
        print(f"sweep.py: point {args.index} of {len(combos)}: {how}" + (f": {row['error']}" if row.get("error") else ""),
              file=sys.stderr)
        sys.exit(0 if row["exit"] == 0 and not row.get("error") else 1)
    if args.collect:
        rows = [collected(p) for p in points]
    else:
        rows = [None] * len(points)
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            futs = {ex.submit(run, p): p[0] for p in points}
            for n, fu in enumerate(as_completed(futs), 1):
                k = futs[fu]
                rows[k], how = fu.result()
                print(f"sweep.py: [{n}/{len(points)}] point {k}: {how}", file=sys.stderr, flush=True)
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
    sys.exit(1 if any(r["exit"] != 0 or r.get("error") for r in rows) else 0)


if __name__ == "__main__":
    main()
