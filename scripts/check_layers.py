#!/usr/bin/env python3
"""Check the include layering of core/ and models/ (README "Layout"; `make check-layers`).

Layers, lowest first:  base < fem < contact < sim < io,  and models above sim.

* A file in core/<layer>/ may include the public headers (core/include/contactlab/ct_*.h) and
  the private headers (core/<folder>/*.h) of its own layer and of the layers below it, never
  of a layer above: contact/ never includes sim/, sim/ never includes io/, and so on.
* Every public header states its layer in its first comment ("layer: NAME"); the same rule
  applies to it.
* models/ (and the test models of tests/models/) talk to the core through public headers only (no core/<folder>/ private header)
  and never includes io/ (the run loop, the HDF5 log, the CLI). Nothing in core/ includes a
  file under models/.
* The include graph of core/ and models/ has no cycle.

Usage: scripts/check_layers.py [ROOT]   (ROOT: the repository, default: this script's parent)
Prints every violation as FILE:LINE: message and exits 1 if there is one, else prints a
one-line summary and exits 0.
"""
import argparse
import os
import re
import sys

LAYERS = ["base", "fem", "contact", "sim", "io"]
RANK = {name: k for k, name in enumerate(LAYERS)}
RANK["models"] = RANK["sim"] + 0.5  # above sim, beside io: may not include io
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
MARKER = re.compile(r"\blayer:\s*([a-z]+)")


def public_layer(path):
    """The layer a public header declares in its first comment, or None."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    end = text.find("*/")
    m = MARKER.search(text[: end if end >= 0 else 0])
    return m.group(1) if m else None


def collect(root):
    """Every checked file: relative path -> (layer, kind) with kind public/private/model."""
    files = {}
    pub = os.path.join(root, "core", "include", "contactlab")
    errors = []
    for name in sorted(os.listdir(pub)):
        if name.endswith(".h"):
            rel = os.path.join("core", "include", "contactlab", name)
            lay = public_layer(os.path.join(root, rel))
            if lay not in RANK or lay == "models":
                errors.append(f"{rel}:1: public header without a valid 'layer: NAME' marker in its first comment")
                continue
            files[rel] = (lay, "public")
    for lay in LAYERS:
        d = os.path.join(root, "core", lay)
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if name.endswith((".c", ".h")):
                files[os.path.join("core", lay, name)] = (lay, "private")
    stray = [n for n in sorted(os.listdir(os.path.join(root, "core"))) if n.endswith((".c", ".h"))]
    for n in stray:
        errors.append(f"core/{n}:1: source outside the layer folders ({', '.join(LAYERS)})")
    for top in ("models", os.path.join("tests", "models")):  # test models are models too
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    files[os.path.relpath(os.path.join(dirpath, name), root)] = ("models", "model")
    return files, errors


def resolve(root, src, inc):
    """The repository-relative file an include names (the build's -Icore/include -Icore, then
    the including file's folder), or None for a header outside the project."""
    for base in (os.path.join("core", "include"), "core", os.path.dirname(src)):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def check(root):
    files, errors = collect(root)
    graph = {f: [] for f in files}
    for src, (lay, kind) in files.items():
        with open(os.path.join(root, src), encoding="utf-8") as f:
            lines = f.readlines()
        for ln, line in enumerate(lines, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            dst = resolve(root, src, m.group(1))
            if dst is None:
                continue
            if dst.startswith(("models" + os.sep, os.path.join("tests", "models") + os.sep)) and kind != "model":
                errors.append(f"{src}:{ln}: the core includes a model file ({dst})")
                continue
            if dst not in files:
                continue
            graph[src].append(dst)
            dlay, dkind = files[dst]
            if kind == "model" and dkind == "private":
                errors.append(f"{src}:{ln}: a model includes a private core header ({dst}); "
                              "models use the public headers")
            elif kind == "model" and dlay == "io":
                errors.append(f"{src}:{ln}: a model includes {dst} (layer io)")
            elif kind == "model" and dlay == "models" and os.path.dirname(dst) != os.path.dirname(src):
                errors.append(f"{src}:{ln}: a model includes another model's file ({dst})")
            elif RANK[dlay] > RANK[lay]:
                errors.append(f"{src}:{ln}: layer {lay} includes {dst} (layer {dlay}, higher)")
    # cycles: iterative depth-first search, white/grey/black
    state = {f: 0 for f in graph}
    for start in sorted(graph):
        if state[start]:
            continue
        stack = [(start, iter(graph[start]))]
        path = [start]
        state[start] = 1
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state[nxt] == 1:
                cyc = path[path.index(nxt):] + [nxt]
                errors.append(f"{node}:1: include cycle: {' -> '.join(cyc)}")
            elif state[nxt] == 0:
                state[nxt] = 1
                stack.append((nxt, iter(graph[nxt])))
                path.append(nxt)
    return files, graph, errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", nargs="?", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    files, graph, errors = check(a.root)
    for e in errors:
        print(e)
    nedges = sum(len(v) for v in graph.values())
    if errors:
        print(f"check-layers: {len(errors)} violation(s)")
        return 1
    print(f"check-layers: {len(files)} files, {nedges} includes, layering {' < '.join(LAYERS)} (models above sim), "
          "no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
