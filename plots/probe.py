#!/usr/bin/python3
"""Plot probes (or any dataset) of contactlab run files against time or another probe.

Usage:
  plots/probe.py RUN.h5 [RUN.h5 ...] PROBE [PROBE ...] [options]
  plots/probe.py RUN.h5 [RUN.h5 ...] --probe PROBE [--probe PROBE ...] [options]

Positional arguments that name existing files (or end in .h5/.hdf5) are run files; the
others are probes. Every probe is drawn for every file, so giving several files overlays
runs (e.g. two models on the same scene).

A PROBE is
  gap               /probes/gap if it exists, else /steps/gap (e.g. "time", "energy")
  /model/ipc/beta   any dataset path
  force[2]          one entry of each row of a vector probe (rows of shape (3,))
  /frames/x[12,2]   one entry of each row of a larger row shape (vertex 12, z)
Without brackets, --component k selects entry k of each row for every vector probe;
without either, all entries of a vector probe are drawn (and --component norm draws the
Euclidean norm of each row).

The x axis is --x (default "time": /steps/time, or the "time" dataset next to the probe
such as /frames/time for /frames/x); --x step uses the row number, and any probe may
serve as x (e.g. --x gap for a force-gap curve). The "unit" attributes label the axes.

Options: -o OUT.png (default: <first file>_<first probe>.png), --title TEXT, --logy,
--dpi N. Exit status: 0 ok, 2 bad input (missing file or dataset, bad component, row
counts that differ).

Examples:
  plots/probe.py run.h5 gap
  plots/probe.py ipc.h5 penalty.h5 --probe gap --x time -o gap.png --title "gap, two models"
  plots/probe.py run.h5 force --component 2 --x gap
  plots/probe.py run.h5 /frames/x[0,1] --x /frames/time

Reads files a writer still has open, or left behind when killed (SWMR read).
Runs with Debian's python3-h5py, python3-numpy and python3-matplotlib (Agg backend).
"""

import argparse
import os
import re
import sys

import h5py
import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from contactlab import figures, runs  # noqa: E402


class InputError(Exception):
    """Bad input: reported on stderr, exit status 2."""


def open_run(path):
    """Open a run file read-only (contactlab.runs.open_file: SWMR read for files whose writer is
    still running or was killed)."""
    if not os.path.isfile(path):
        raise InputError(f"{path}: no such file")
    try:
        return runs.open_file(path)
    except OSError as e:
        raise InputError(f"{path}: cannot read as HDF5 ({e})") from None


def parse_probe(spec):
    """'force[2]' -> ('force', (2,)); 'gap' -> ('gap', None)."""
    m = re.fullmatch(r"(.+?)\[([0-9,\s]+)\]", spec)
    if not m:
        return spec, None
    return m.group(1), tuple(int(k) for k in m.group(2).split(",") if k.strip())


def resolve(f, name):
    """Dataset path for a probe name in file f."""
    cands = [name] if "/" in name else [f"/probes/{name}", f"/steps/{name}"]
    for c in cands:
        if c in f and isinstance(f[c], h5py.Dataset):
            return c
    raise InputError(f"{f.filename}: no dataset for '{name}' (tried {', '.join(cands)})")


def unit_of(ds):
    u = ds.attrs.get("unit")
    if isinstance(u, bytes):
        u = u.decode("utf-8", "replace")
    return str(u) if u is not None and str(u) else None


def columns(f, spec, component):
    """[(label, values)] for one probe spec in file f, plus its dataset path and unit."""
    name, idx = parse_probe(spec)
    path = resolve(f, name)
    ds = f[path]
    data = np.asarray(ds[()], dtype=float)
    if data.ndim == 0:
        raise InputError(f"{f.filename}: {path} is a single value, not a series")
    row_shape = data.shape[1:]
    if idx is None and row_shape and component is not None:
        idx = component
    if not row_shape:
        if idx not in (None, ()) and idx != "norm":
            raise InputError(f"{f.filename}: {path} has scalar rows; no component {idx}")
        return [(name, data)], path, unit_of(ds)
    if idx == "norm":
        flat = data.reshape(data.shape[0], -1)
        return [(f"|{name}|", np.linalg.norm(flat, axis=1))], path, unit_of(ds)
    if idx is None:
        if len(row_shape) != 1:
            raise InputError(f"{f.filename}: {path} has rows of shape {row_shape}; "
                             f"pick an entry, e.g. {name}[{','.join('0' * len(row_shape))}]")
        return [(f"{name}[{k}]", data[:, k]) for k in range(row_shape[0])], path, unit_of(ds)
    if len(idx) != len(row_shape) or any(k < 0 or k >= n for k, n in zip(idx, row_shape)):
        raise InputError(f"{f.filename}: {path} has rows of shape {row_shape}; "
                         f"component {','.join(map(str, idx))} is out of range")
    label = f"{name}[{','.join(map(str, idx))}]"
    return [(label, data[(slice(None),) + idx])], path, unit_of(ds)


def x_axis(f, xspec, probe_path):
    """(label, values, unit) of the x axis for a probe stored at probe_path."""
    if xspec == "step":
        return "step", None, None
    if xspec == "time":
        group = probe_path.rsplit("/", 1)[0]
        for c in (f"{group}/time", "/steps/time"):
            if c != probe_path and c in f and isinstance(f[c], h5py.Dataset):
                ds = f[c]
                return "time", np.asarray(ds[()], dtype=float).reshape(ds.shape[0], -1)[:, 0], unit_of(ds)
        raise InputError(f"{f.filename}: no time dataset for {probe_path} (tried {group}/time, /steps/time)")
    cols, _, unit = columns(f, xspec, None)
    if len(cols) != 1:
        raise InputError(f"{f.filename}: x '{xspec}' is a vector; pick one entry, e.g. {xspec}[0]")
    return cols[0][0], cols[0][1], unit


def axis_label(name, unit):
    return f"{name} [{unit}]" if unit else name


def parse_component(text):
    if text is None or text == "all":
        return None
    if text == "norm":
        return "norm"
    try:
        return tuple(int(k) for k in text.split(","))
    except ValueError:
        raise InputError(f"--component: expected k, i,j, norm or all (got '{text}')") from None


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="probe.py",
        description="Plot probes of contactlab run files (HDF5) against time or another probe.",
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument("args", nargs="*", metavar="RUN.h5|PROBE", help="run files, then probes")
    ap.add_argument("-p", "--probe", action="append", default=[], help="a probe (repeatable)")
    ap.add_argument("--x", default="time", help="x axis: time (default), step, or a probe")
    ap.add_argument("--component", help="entry of vector rows: k, i,j, norm, or all (default)")
    ap.add_argument("-o", "--output", help="output PNG (default: <first file>_<first probe>.png)")
    ap.add_argument("--title", help="plot title")
    ap.add_argument("--logy", action="store_true", help="logarithmic y axis")
    ap.add_argument("--dpi", type=int, default=150)
    a = ap.parse_args(argv)

    def is_file(s):
        return os.path.isfile(s) or s.endswith((".h5", ".hdf5"))

    files = [s for s in a.args if is_file(s)]
    probes = [s for s in a.args if not is_file(s)] + a.probe
    try:
        if not files:
            raise InputError("no run file given (RUN.h5)")
        if not probes:
            raise InputError("no probe given (e.g. gap, /steps/energy, force[2])")
        component = parse_component(a.component)
        plt = figures.pyplot()
        if plt is None:
            raise InputError("matplotlib is needed (Debian: python3-matplotlib)")
        fig, ax = plt.subplots(figsize=(7, 4.5))
        y_units, x_labels, y_labels = set(), set(), set()
        for path in files:
            with open_run(path) as f:
                tag = os.path.splitext(os.path.basename(path))[0]
                for spec in probes:
                    cols, dpath, unit = columns(f, spec, component)
                    xname, x, xunit = x_axis(f, a.x, dpath)
                    x_labels.add(axis_label(xname, xunit))
                    y_units.add(unit)
                    for label, y in cols:
                        y_labels.add(label)
                        xv = np.arange(len(y)) if x is None else x
                        if len(xv) != len(y):
                            # a live writer may be one row ahead in one series
                            if abs(len(xv) - len(y)) > 1:
                                raise InputError(f"{path}: {label} has {len(y)} rows but x "
                                                 f"'{xname}' has {len(xv)}")
                            n = min(len(xv), len(y))
                            xv, y = xv[:n], y[:n]
                        name = f"{tag}: {label}" if len(files) > 1 else label
                        if len(y) == 1:
                            ax.plot(xv, y, "o", label=name)
                        else:
                            ax.plot(xv, y, label=name)
        ax.set_xlabel(" / ".join(sorted(x_labels)))
        if len(y_labels) == 1 and len(y_units) == 1:
            ax.set_ylabel(axis_label(next(iter(y_labels)), next(iter(y_units))))
        elif len(y_units) == 1 and None not in y_units:
            ax.set_ylabel(f"[{next(iter(y_units))}]")
        if a.logy:
            ax.set_yscale("log")
        if a.title:
            ax.set_title(a.title)
        if len(ax.get_lines()) > 1:
            ax.legend()
        ax.grid(True, alpha=0.3)
        figures.render_symbols(fig)
        fig.tight_layout()
        out = a.output
        if not out:
            first = re.sub(r"[^A-Za-z0-9_.-]+", "_", parse_probe(probes[0])[0].strip("/"))
            out = f"{os.path.splitext(os.path.basename(files[0]))[0]}_{first}.png"
        fig.savefig(out, dpi=a.dpi)
        print(out)
        return 0
    except InputError as e:
        print(f"probe.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
