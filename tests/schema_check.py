#!/usr/bin/env python3
"""schema_check.py — the JSON Schema of `contactlab schema` against the parser.

    tests/schema_check.py SCHEMA.json CONTACTLAB REPO_ROOT

1. The schema is a valid JSON Schema (draft 2020-12).
2. Every scene in the repository (a .json file whose top level has "bodies", outside build
   folders and the bad-input corpus) is accepted by `contactlab check` and by the schema, and so is
   the resolved scene `contactlab check` prints.
3. Defaults: wherever the resolved scene holds a key the file left out and the schema states a
   default for it, the two agree (the parser's defaults are written in its reader calls, the
   schema's in scene_schema.c: this is what keeps them together).
4. Every file of the bad-input corpus (tests/data/scenes/bad) that is valid JSON is rejected by
   the schema, except those listed in tests/data/scenes/bad/SEMANTIC: mistakes a schema cannot
   see (a name that must exist, a file that must be readable, an order between two values).
Exit status 0 when all hold; the failures are printed.
"""
import json
import math
import os
import subprocess
import sys

import jsonschema

SKIP_DIRS = {".git", "plots", "out", "results", "__pycache__"}


def scene_files(root):
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith("build")
                         and os.path.join(rel, x) != os.path.join("tests", "data", "scenes", "bad"))
        for f in sorted(files):
            if not f.endswith(".json"):
                continue
            p = os.path.join(d, f)
            try:
                with open(p) as fh:
                    doc = json.load(fh)
            except (ValueError, UnicodeDecodeError):
                continue
            if isinstance(doc, dict) and "bodies" in doc:
                yield p, doc


class Checker:
    def __init__(self, schema):
        self.schema = schema
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        self.cls = cls
        self.resolver = jsonschema.RefResolver.from_schema(schema)
        self.validator = cls(schema, resolver=self.resolver)

    def valid(self, sub, inst):
        return self.cls(sub, resolver=self.resolver).is_valid(inst)

    def resolve(self, sub):
        while "$ref" in sub:
            sub = self.resolver.resolve(sub["$ref"])[1]
        return sub

    def branches(self, sub, inst):
        """The object schemas that apply to inst: $ref, allOf, and the anyOf/oneOf branch it matches."""
        sub = self.resolve(sub)
        out = [sub]
        for s in sub.get("allOf", []):
            out += self.branches(s, inst)
        for key in ("anyOf", "oneOf"):
            for s in sub.get(key, []):
                if self.valid(s, inst):
                    out += self.branches(s, inst)
                    break
        return out

    def defaults(self, sub, given, resolved, path, errors):
        """Compare the schema's defaults with the values the parser filled in."""
        for s in self.branches(sub, resolved):
            if isinstance(resolved, dict):
                for k, ps in s.get("properties", {}).items():
                    if k not in resolved:
                        continue
                    g = given.get(k) if isinstance(given, dict) else None
                    p = f"{path}/{k}"
                    if g is None:
                        want = default_of(ps)
                        if want is not None and not same(want, resolved[k]):
                            errors.append(f"{p}: the parser filled in {json.dumps(resolved[k])}, "
                                          f"the schema's default is {json.dumps(want)}")
                    self.defaults(ps, g if g is not None else {}, resolved[k], p, errors)
            if isinstance(resolved, list) and "items" in s:
                for i, r in enumerate(resolved):
                    g = given[i] if isinstance(given, list) and i < len(given) else {}
                    self.defaults(s["items"], g, r, f"{path}/{i}", errors)


def strict_json(text):
    """JSON as RFC 8259 (and jansson) read it: no NaN or Infinity, no number beyond a double,
    no key twice in an object."""
    def no_constant(c):
        raise ValueError(f"{c} is not JSON")

    def finite(t):
        v = float(t)
        if math.isinf(v):
            raise ValueError(f"{t} overflows a double")
        return v

    def unique(pairs):
        keys = [k for k, _ in pairs]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            raise ValueError(f"duplicate key {sorted(dup)[0]!r}")
        return dict(pairs)
    return json.loads(text, parse_constant=no_constant, parse_float=finite, object_pairs_hook=unique)


def default_of(ps):
    for s in [ps] + ps.get("allOf", []):
        if "default" in s:
            return s["default"]
    return None


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-15, abs_tol=0.0) or a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def main():
    schema_path, cli, root = sys.argv[1:4]
    with open(schema_path) as f:
        schema = json.load(f)
    ch = Checker(schema)
    fails = 0
    nscenes = 0
    for path, doc in scene_files(root):
        rel = os.path.relpath(path, root)
        r = subprocess.run([cli, "check", path], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"FAIL  {rel}: contactlab check exits {r.returncode}: {r.stderr.strip()[:300]}")
            fails += 1
            continue
        resolved = json.loads(r.stdout)
        problems = []
        for what, inst in (("scene", doc), ("resolved scene", resolved)):
            for e in sorted(ch.validator.iter_errors(inst), key=lambda e: list(e.absolute_path)):
                where = "/" + "/".join(str(x) for x in e.absolute_path)
                problems.append(f"{what}: {where}: {e.message[:200]}")
        ch.defaults(schema, doc, resolved, "", problems)
        nscenes += 1
        if problems:
            fails += 1
            print(f"FAIL  {rel}")
            for p in problems[:10]:
                print(f"      {p}")
        else:
            print(f"ok    {rel}")

    bad = os.path.join(root, "tests", "data", "scenes", "bad")
    semantic = {}
    with open(os.path.join(bad, "SEMANTIC")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                name, _, why = line.rstrip("\n").partition("\t")
                semantic[name] = why
    nbad = 0
    for name in sorted(os.listdir(bad)):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(bad, name)) as f:
                doc = strict_json(f.read())
        except (ValueError, UnicodeDecodeError) as e:
            print(f"ok    bad/{name}: not JSON ({str(e)[:60]}): the parser's syntax error")
            continue
        nbad += 1
        rejected = not ch.validator.is_valid(doc)
        if name in semantic:
            if rejected:
                print(f"FAIL  bad/{name}: listed in SEMANTIC, but the schema rejects it (remove it from the list)")
                fails += 1
            else:
                print(f"ok    bad/{name}: accepted by the schema ({semantic[name]}); the parser rejects it")
        elif rejected:
            e = jsonschema.exceptions.best_match(ch.validator.iter_errors(doc))
            where = "/" + "/".join(str(x) for x in e.absolute_path)
            print(f"ok    bad/{name}: rejected at {where}")
        else:
            print(f"FAIL  bad/{name}: the schema accepts it")
            fails += 1
    print(f"schema_check: {nscenes} scenes, {nbad} bad inputs, {fails} failed")
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
