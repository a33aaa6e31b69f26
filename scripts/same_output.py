#!/usr/bin/env python3
"""same_output.py — are two trees of contactlab run outputs the same, bit for bit?

Usage:
  scripts/same_output.py DIR_A DIR_B [-v] [--max-items N] [--no-path-normalization]
  scripts/same_output.py FILE_A.h5 FILE_B.h5 [...]

Every *.h5 file present in either tree (matched by path relative to DIR_A / DIR_B) is compared:
the same groups, datasets, links and attributes; each dataset with the same dtype, shape and
storage layout (maxshape, chunks, filters, fill value) and the same raw bytes (bitwise: 0.0 and
-0.0, or two NaN payloads, differ; the report says when values are equal but bits are not); each
attribute with the same dtype, shape and value. Text outputs of the experiments (*.csv, *.txt,
*.dat, and energy_wall's *.mesh) are compared byte for byte (after the path normalisation below;
when the bytes differ, token by token with the volatile columns below masked). Everything else
(PNG, PDF, logs, ...) is ignored.

Volatile items — skipped because they are wall-clock dependent, not simulation results:
  * /steps/wall_s (and /steps/wall) and every /steps/t_* dataset (t_assembly, t_factor, t_ccd,
    t_pairs, ...): per-step wall times measured with omp_get_wtime / clock_gettime. Their presence,
    dtype, shape, layout and attributes (unit, definition) are still compared, only the values not.
  * root attributes created_utc (time the file was created), git_describe and contactlab_version
    (the build that wrote the file, not what it computed).
  * text-table columns named wall_s, wall_per_step_s or ms_per_step (the same wall times,
    aggregated by an analysis script: cube_push.dat, cube_wall.dat, threshold_ablation.dat,
    rcc_vs_ours.dat, scripts/sweep.py's summary.csv). A column is recognised by exact name in a
    CSV header row or in a '#' comment header line of a whitespace-separated table; the rest of
    the file must still match token for token. These columns are only masked when the bytes differ.
Everything else is compared, including /steps/n_analyses (a count of CHOLMOD symbolic analyses,
driven by sparsity-pattern changes, not by time), the model's counters under /model/<name>/, the
`threads` attribute and the `command` and `scene_json` attributes.

Path normalisation: string values (attributes, string datasets, text files) have the absolute
path of their own tree (DIR_A resp. DIR_B, as given and as resolved) replaced by "<DIR>" before
they are compared, because some runs record where their outputs live (the `-o` path in the
`command` attribute; restart files in `initial_state`, hence in `scene_json`). The output
location is not a simulation result. --no-path-normalization turns this off.

Output: one line per file, `same`, `DIFFERENT` (with the first differing dataset — else the first
differing attribute or structure item —, its max abs difference, and how many more items differ;
-v lists them) or `MISSING` (present in one tree only), then the summary line
`same_output: N same, N different, N missing`.
Exit status: 0 if every file is the same (and at least one was compared), 1 otherwise, 2 on bad
usage.
"""
import argparse
import re
import csv
import io
import os
import signal
import sys

import h5py
import numpy as np

H5_EXT = (".h5", ".hdf5")
TEXT_EXT = (".csv", ".txt", ".dat", ".mesh")
VOLATILE_ROOT_ATTRS = frozenset({"created_utc", "git_describe", "contactlab_version"})
VOLATILE_STEP_NAMES = frozenset({"wall", "wall_s"})
VOLATILE_COLUMNS = frozenset({"wall_s", "wall_per_step_s", "ms_per_step"})


def volatile_dataset(path):
    """True for the per-step timing datasets: /steps/wall_s, /steps/wall, /steps/t_*."""
    parent, _, name = path.rpartition("/")
    return parent == "/steps" and (name in VOLATILE_STEP_NAMES or name.startswith("t_"))


class Side:
    """One tree: its root and the path normalisation of its strings."""

    def __init__(self, root, normalize):
        self.root = root
        roots = set()
        if normalize:
            for r in (root, os.path.abspath(root), os.path.realpath(root)):
                r = r.rstrip("/")
                if len(r) > 1:
                    roots.add(r)
        self.roots = sorted(roots, key=len, reverse=True)  # longest first

    def norm(self, s):
        for r in self.roots:
            s = s.replace(r, "<DIR>")
        return s

    def norm_bytes(self, b):
        for r in self.roots:
            b = b.replace(r.encode(), b"<DIR>")
        return b


class Diff:
    def __init__(self, where, what, maxabs=None):
        self.where, self.what, self.maxabs = where, what, maxabs

    def __str__(self):
        s = f"{self.where}: {self.what}"
        if self.maxabs is not None:
            s += f"; max abs diff {self.maxabs:.6g}"
        return s


# ------------------------------------------------------------------ values


def string_info(dt):
    return h5py.check_string_dtype(dt) if dt is not None else None


def as_str_list(v):
    """Strings (str / bytes, scalar or array) as a flat list of str."""
    a = np.asarray(v, dtype=object).ravel()
    return [x.decode("utf-8", "surrogateescape") if isinstance(x, bytes) else str(x) for x in a]


def numeric_summary(a, b):
    """Arrays of the same shape, numeric dtypes, different bytes: (text, max abs difference)."""
    kind = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
    aa, bb = np.atleast_1d(a).astype(kind), np.atleast_1d(b).astype(kind)
    if a.dtype.kind in "iub" and b.dtype.kind in "iub":
        eq = np.atleast_1d(a == b)
    else:
        eq = (aa == bb) | (np.isnan(aa) & np.isnan(bb))
    bad = ~eq
    n = int(np.count_nonzero(bad))
    if n == 0:
        return "values equal but bits differ (signed zero or NaN payload)", 0.0
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if np.ndim(a) else ()
    with np.errstate(invalid="ignore", over="ignore"):
        d = np.abs(aa[bad] - bb[bad])
    nonfinite = int(np.count_nonzero(~np.isfinite(d)))
    maxabs = float("inf") if nonfinite else float(d.max())
    va, vb = np.atleast_1d(a)[bad][0], np.atleast_1d(b)[bad][0]
    txt = f"values differ at {n} of {eq.size} elements, first at index {first} ({va!r} vs {vb!r})"
    if nonfinite:
        txt += f", {nonfinite} of them NaN/inf against a different value"
    return txt, maxabs


def compare_values(va, vb, dt, sa, sb):
    """None if equal, else (text, maxabs). dt: the (common) HDF5 dtype of both."""
    if string_info(dt) is not None or (dt is not None and dt.kind == "S"):
        la, lb = [sa.norm(x) for x in as_str_list(va)], [sb.norm(x) for x in as_str_list(vb)]
        if la == lb:
            return None
        k = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
        x = la[k] if k < len(la) else "<none>"
        y = lb[k] if k < len(lb) else "<none>"
        # show where the strings part
        p = next((i for i, (c, e) in enumerate(zip(x, y)) if c != e), min(len(x), len(y)))
        lo = max(0, p - 30)
        return f"strings differ (element {k}, char {p}: ...{x[lo:p + 40]!r} vs ...{y[lo:p + 40]!r})", None
    a, b = np.asarray(va), np.asarray(vb)
    if a.shape != b.shape:
        return f"shape {a.shape} vs {b.shape}", None
    if a.dtype.kind == "O":  # variable-length non-string data: element by element
        for i, (x, y) in enumerate(zip(a.ravel(), b.ravel())):
            if np.asarray(x).tobytes() != np.asarray(y).tobytes() or np.asarray(x).dtype != np.asarray(y).dtype:
                return f"variable-length element {i} differs", None
        return None
    if a.tobytes() == b.tobytes():
        return None
    if a.dtype.kind in "fciub" and b.dtype.kind in "fciub":
        return numeric_summary(a, b)
    return "raw bytes differ", None


# ------------------------------------------------------------------ HDF5


def dtype_text(dt):
    si = string_info(dt)
    if si is not None:
        return f"string({si.encoding}, length={si.length})"
    return str(dt)


def same_dtype(da, db):
    sa, sb = string_info(da), string_info(db)
    if sa is not None or sb is not None:
        return sa == sb
    return da == db


def read_attr(obj, k):
    try:
        return obj.attrs[k], None
    except (OSError, TypeError, ValueError) as e:
        return None, str(e)


def compare_attrs(oa, ob, path, sa, sb, out):
    for k in sorted(set(oa.attrs.keys()) | set(ob.attrs.keys())):
        where = f"{path}@{k}"
        if path == "/" and k in VOLATILE_ROOT_ATTRS:
            continue
        if k not in oa.attrs or k not in ob.attrs:
            out.append(Diff(where, "attribute only in " + ("A" if k in oa.attrs else "B")))
            continue
        ia, ib = oa.attrs.get_id(k), ob.attrs.get_id(k)
        if not same_dtype(ia.dtype, ib.dtype):
            out.append(Diff(where, f"attribute dtype {dtype_text(ia.dtype)} vs {dtype_text(ib.dtype)}"))
            continue
        if ia.shape != ib.shape:
            out.append(Diff(where, f"attribute shape {ia.shape} vs {ib.shape}"))
            continue
        (va, ea), (vb, eb) = read_attr(oa, k), read_attr(ob, k)
        if ea or eb:
            if (ea is None) != (eb is None):
                out.append(Diff(where, f"attribute unreadable in {'A' if ea else 'B'}: {ea or eb}"))
            continue
        if isinstance(va, h5py.Empty) or isinstance(vb, h5py.Empty):
            if not (isinstance(va, h5py.Empty) and isinstance(vb, h5py.Empty)):
                out.append(Diff(where, "attribute empty in one file only"))
            continue
        r = compare_values(va, vb, ia.dtype, sa, sb)
        if r:
            out.append(Diff(where, "attribute " + r[0], r[1]))


def layout(ds):
    return {
        "maxshape": ds.maxshape,
        "chunks": ds.chunks,
        "compression": ds.compression,
        "compression_opts": ds.compression_opts,
        "shuffle": ds.shuffle,
        "fletcher32": ds.fletcher32,
        "scaleoffset": ds.scaleoffset,
        "fillvalue": np.asarray(ds.fillvalue).tobytes() if ds.dtype.kind != "O" else None,
    }


def compare_dataset(da, db, path, sa, sb, out):
    compare_attrs(da, db, path, sa, sb, out)
    if not same_dtype(da.dtype, db.dtype):
        out.append(Diff(path, f"dtype {dtype_text(da.dtype)} vs {dtype_text(db.dtype)}"))
        return
    if da.shape != db.shape:
        out.append(Diff(path, f"shape {da.shape} vs {db.shape}"))
        return
    la, lb = layout(da), layout(db)
    for key in la:
        if la[key] != lb[key]:
            out.append(Diff(path, f"layout: {key} {la[key]!r} vs {lb[key]!r}"))
    if volatile_dataset(path) or da.shape is None:  # timing values; or an empty (null) dataset
        return
    if string_info(da.dtype) is not None:
        va, vb = da.asstr(errors="surrogateescape")[()], db.asstr(errors="surrogateescape")[()]
    else:
        va, vb = da[()], db[()]
    r = compare_values(va, vb, da.dtype, sa, sb)
    if r:
        out.append(Diff(path, r[0], r[1]))


def compare_group(ga, gb, path, sa, sb, out):
    compare_attrs(ga, gb, path, sa, sb, out)
    names = sorted(set(ga.keys()) | set(gb.keys()))
    for n in names:
        p = path.rstrip("/") + "/" + n
        la, lb = ga.get(n, getlink=True), gb.get(n, getlink=True)
        if la is None or lb is None:
            kind = "group" if isinstance(ga.get(n) if la is not None else gb.get(n), h5py.Group) else "dataset"
            out.append(Diff(p, f"{kind} only in " + ("A" if la is not None else "B")))
            continue
        if type(la) is not type(lb):
            out.append(Diff(p, f"link {type(la).__name__} vs {type(lb).__name__}"))
            continue
        if isinstance(la, h5py.SoftLink):
            if la.path != lb.path:
                out.append(Diff(p, f"soft link to {la.path} vs {lb.path}"))
            continue
        if isinstance(la, h5py.ExternalLink):
            if (sa.norm(la.filename), la.path) != (sb.norm(lb.filename), lb.path):
                out.append(Diff(p, "external link targets differ"))
            continue
        oa, ob = ga[n], gb[n]
        if isinstance(oa, h5py.Group) and isinstance(ob, h5py.Group):
            compare_group(oa, ob, p, sa, sb, out)
        elif isinstance(oa, h5py.Dataset) and isinstance(ob, h5py.Dataset):
            compare_dataset(oa, ob, p, sa, sb, out)
        elif isinstance(oa, h5py.Datatype) and isinstance(ob, h5py.Datatype):
            if not same_dtype(oa.dtype, ob.dtype):
                out.append(Diff(p, "named datatypes differ"))
        else:
            out.append(Diff(p, f"object kind {type(oa).__name__} vs {type(ob).__name__}"))


def compare_h5(fa, fb, sa, sb):
    out = []
    try:
        with h5py.File(fa, "r") as ha, h5py.File(fb, "r") as hb:
            compare_group(ha, hb, "/", sa, sb, out)
    except OSError as e:
        out.append(Diff("(file)", f"cannot be read: {e}"))
    return out, []


# ------------------------------------------------------------------ text


def token_diff(x, y):
    try:
        d = abs(float(x) - float(y))
    except ValueError:
        return None
    return d if d == d else None


def text_rows(text, is_csv):
    """Per line: (line number, tokens or None for a '#' line, verbatim text, volatile token
    indices, the header tokens that named them).

    CSV: the first row is the header; its columns named in VOLATILE_COLUMNS are volatile in the
    rows below. Whitespace tables: '#' lines are compared verbatim, and a '#' line naming a volatile
    column makes that token index volatile in the data lines below it."""
    rows = []
    if is_csv:
        recs = list(csv.reader(io.StringIO(text)))
        hdr = recs[0] if recs else []
        vol = {i for i, c in enumerate(hdr) if c.strip() in VOLATILE_COLUMNS}
        for k, r in enumerate(recs):
            rows.append((k + 1, r, ",".join(r), vol if k else set(), hdr))
        return rows
    vol, hdr = set(), []
    for k, line in enumerate(text.splitlines()):
        if line.lstrip().startswith("#"):
            toks = line.lstrip().lstrip("#").split()
            hits = {i for i, t in enumerate(toks) if t in VOLATILE_COLUMNS}
            if hits:
                vol, hdr = hits, toks
            rows.append((k + 1, None, line, set(), hdr))
        else:
            rows.append((k + 1, line.split(), line, vol, hdr))
    return rows


def compare_text(fa, fb, sa, sb):
    with open(fa, "rb") as f:
        ba = sa.norm_bytes(f.read())
    with open(fb, "rb") as f:
        bb = sb.norm_bytes(f.read())
    if ba == bb:
        return [], []
    is_csv = fa.lower().endswith(".csv")
    ra = text_rows(ba.decode("utf-8", "surrogateescape"), is_csv)
    rb = text_rows(bb.decode("utf-8", "surrogateescape"), is_csv)
    out, masked, ndiff, first, maxabs = [], set(), 0, None, 0.0
    if len(ra) != len(rb):
        out.append(Diff("(file)", f"{len(ra)} vs {len(rb)} lines"))
    for (ln, tx, lx, vol, hdr), (_, ty, ly, _, _) in zip(ra, rb):
        if tx is None or ty is None or len(tx) != len(ty):  # comment line, or a different token count
            differs = lx != ly
        else:
            differs = False
            for i, (x, y) in enumerate(zip(tx, ty)):
                if x == y:
                    continue
                if i in vol:
                    masked.add(hdr[i] if i < len(hdr) else f"column {i + 1}")
                    continue
                differs = True
                d = token_diff(x, y)
                if d is not None:
                    maxabs = max(maxabs, d)
        if differs:
            ndiff += 1
            first = first or (ln, lx, ly)
    if ndiff:
        ln, x, y = first
        out.append(Diff(f"line {ln}", f"{ndiff} line(s) differ, first {x.strip()[:100]!r} vs {y.strip()[:100]!r}",
                        maxabs if maxabs else None))
    if out:
        return out, []
    if not masked:  # the bytes differ, no token does: whitespace or line endings
        return [Diff("(file)", "whitespace or line endings differ")], []
    return [], ["volatile columns ignored: " + ", ".join(sorted(masked))]


# ------------------------------------------------------------------ driver


def collect(root):
    files = set()
    for dp, dn, fn in os.walk(root):
        dn.sort()
        for f in fn:
            if f.lower().endswith(H5_EXT + TEXT_EXT):
                files.add(os.path.relpath(os.path.join(dp, f), root))
    return files


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", metavar="DIR_A", help="reference tree (or one .h5/text file)")
    ap.add_argument("b", metavar="DIR_B", help="tree to check (or one file)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every differing item of a file")
    ap.add_argument("--max-items", type=int, default=20, help="with -v, at most this many items per file")
    ap.add_argument("--expect", metavar="REGEX", action="append", default=[],
                    help="a difference whose place (e.g. /model/ipc@kappa, /@scene_json, /model) matches REGEX "
                         "is an intended change: listed as expected, not counted (repeatable)")
    ap.add_argument("--no-path-normalization", action="store_true",
                    help="compare strings verbatim (do not replace each tree's own path by <DIR>)")
    try:
        args = ap.parse_args()
    except SystemExit as e:
        sys.exit(2 if e.code else 0)
    norm = not args.no_path_normalization
    if os.path.isfile(args.a) and os.path.isfile(args.b):
        pairs = [(os.path.basename(args.b), args.a, args.b)]
        sa = Side(os.path.dirname(os.path.abspath(args.a)), norm)
        sb = Side(os.path.dirname(os.path.abspath(args.b)), norm)
        only_a = only_b = []
    else:
        for d in (args.a, args.b):
            if not os.path.isdir(d):
                print(f"same_output.py: {d}: not a directory", file=sys.stderr)
                sys.exit(2)
        fa, fb = collect(args.a), collect(args.b)
        pairs = [(r, os.path.join(args.a, r), os.path.join(args.b, r)) for r in sorted(fa & fb)]
        only_a, only_b = sorted(fa - fb), sorted(fb - fa)
        sa, sb = Side(args.a, norm), Side(args.b, norm)
    n_same = n_diff = 0
    w = max([len(p[0]) for p in pairs] + [len(x) for x in list(only_a) + list(only_b)] + [1])
    for rel, pa, pb in pairs:
        if rel.lower().endswith(H5_EXT):
            diffs, notes = compare_h5(pa, pb, sa, sb)
        else:
            diffs, notes = compare_text(pa, pb, sa, sb)
        expected = [d for d in diffs if any(re.search(x, d.where) for x in args.expect)]
        diffs = [d for d in diffs if d not in expected]
        if expected:
            notes = list(notes) + [f"{len(expected)} expected difference(s): "
                                   + ", ".join(sorted({d.where for d in expected}))]
        if not diffs:
            n_same += 1
            print(f"same       {rel}" + (f"  ({'; '.join(notes)})" if notes else ""))
            continue
        n_diff += 1
        # headline: the first differing dataset (else the first difference of any kind)
        head = next((d for d in diffs if d.where.startswith("/") and "@" not in d.where), diffs[0])
        more = f" (+{len(diffs) - 1} more differing items)" if len(diffs) > 1 else ""
        print(f"DIFFERENT  {rel.ljust(w)}  {head}{more}")
        if args.verbose:
            rest = [d for d in diffs if d is not head]
            for d in rest[:args.max_items]:
                print(f"             {d}")
            if len(rest) > args.max_items:
                print(f"             ... {len(rest) - args.max_items} more")
    for rel in only_a:
        print(f"MISSING    {rel.ljust(w)}  only in {args.a}")
    for rel in only_b:
        print(f"MISSING    {rel.ljust(w)}  only in {args.b}")
    n_miss = len(only_a) + len(only_b)
    print(f"same_output: {n_same} same, {n_diff} different, {n_miss} missing")
    if n_same + n_diff + n_miss == 0:
        print("same_output.py: no *.h5 or text outputs in either tree: nothing compared", file=sys.stderr)
        sys.exit(1)
    sys.exit(0 if n_diff == 0 and n_miss == 0 else 1)


if __name__ == "__main__":
    main()
