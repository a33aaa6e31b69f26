#!/usr/bin/env python3
"""The model matrix of models.json: which (scene, model) pairs run, with which overrides, and what
their row claims. Shared by run.sh (the runs) and analyze.py (the claims and notes).

    matrix.py jobs SCENE...     one line per run, tab-separated: SCENE LABEL ARG... (the contactlab
                                run arguments of the pair: --set PATH=JSON ...), scenes in the order
                                given, models in the order of models.json

The run of (SCENE, LABEL) is OUTDIR/SCENE__LABEL.h5 (run.sh writes it, analyze.py reads it).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXPECTS = ("agrees", "differs", "n/a")


def load(path=os.path.join(HERE, "models.json")):
    """{label: {scene or '*': entry}} of models.json, in its order, every entry checked."""
    with open(path) as f:
        models = json.load(f)["models"]
    for label, scenes in models.items():
        for scene, entry in scenes.items():
            unknown = set(entry) - {"contact", "set", "expect", "why"}
            if unknown:
                raise ValueError(f"models.json: {label}.{scene}: unknown keys {sorted(unknown)}")
            if entry.get("expect", "agrees") not in EXPECTS:
                raise ValueError(f"models.json: {label}.{scene}: expect must be one of {EXPECTS}")
            if entry.get("expect", "agrees") != "agrees" and not entry.get("why"):
                raise ValueError(f"models.json: {label}.{scene}: a 'differs' or 'n/a' entry needs its 'why'")
    return models


def entry(models, label, scene):
    """The entry of (label, scene): the scene's own, else the label's '*', else None (not run)."""
    scenes = models[label]
    return scenes.get(scene, scenes.get("*"))


def run_args(e):
    """The contactlab run arguments of an entry: --set contact=... and its other overrides."""
    sets = {}
    if "contact" in e:
        sets["contact"] = e["contact"]
    sets.update(e.get("set", {}))
    args = []
    for path, value in sets.items():
        args += ["--set", f"{path}={json.dumps(value, separators=(',', ':'))}"]
    return args


def run_file(outdir, scene, label):
    """The run file of (scene, label) in outdir."""
    return os.path.join(outdir, f"{scene}__{label}.h5")


def main(argv):
    if len(argv) < 2 or argv[0] != "jobs":
        sys.exit(__doc__)
    models = load()
    for scene in argv[1:]:
        for label in models:
            e = entry(models, label, scene)
            if e is not None:
                print("\t".join([scene, label] + run_args(e)))


if __name__ == "__main__":
    main(sys.argv[1:])
