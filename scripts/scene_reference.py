#!/usr/bin/env python3
"""scene_reference.py — docs/scenes.md from the JSON Schema that `contactlab schema` prints.

    contactlab schema | scripts/scene_reference.py > docs/scenes.md
    scripts/scene_reference.py SCHEMA.json > docs/scenes.md

One section per object of the scene format (the schema's dimension-free definitions, in the
order the top level reaches them), a table of its keys, then the value forms and every
contact model's parameters. tests/cli_schema.sh regenerates it and fails when docs/scenes.md
differs, so the reference cannot drift from the parser's tables.
"""
import json
import sys

FORMS_DOC = {
    "selector": "`\"all\"`, or an object with exactly one of `side`, `box`, `indices` "
                "([selector_object](#selector_object))",
    "mesh": "one of [mesh_file](#mesh_file), [mesh_grid](#mesh_grid), [mesh_polyline](#mesh_polyline) (2D), "
            "[mesh_arc](#mesh_arc) (2D)",
    "fixed_list": "one [fixed](#fixed) entry, or an array of them",
    "distribution": "`\"uniform\"`, or a [linear_distribution](#linear_distribution)",
    "scale": "a number > 0, or one per axis",
    "indices": "a non-empty array of integers ≥ 0",
    "points": "an array of at least 2 points `[x, y]`",
    "pair": "`[NAME, NAME]`: two body or obstacle names",
    "name_or_index": "a name (string) or an index (integer ≥ 0)",
    "probes": "an array of probes: [probe_vertices](#probe_vertices), [probe_force](#probe_force), "
              "[probe_energy](#probe_energy), [probe_spring](#probe_spring) (by `quantity`)",
    "contact": "`{\"model\": NAME, parameters...}` — see [Contact models](#contact-models)",
    "body_contact": "per-body parameter values — see [Contact models](#contact-models) (\"per body\")",
}


def num(x):
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x) if isinstance(x, float) else str(x)


def ref_name(s):
    for part in [s] + s.get("allOf", []):
        if "$ref" in part:
            return part["$ref"].rsplit("/", 1)[1]
    return None


HUGE = 1e30  # every number's magnitude bound (CT_NUMBER_HUGE), stated once in the introduction


def range_text(s):
    parts = []
    if "minimum" in s and s["minimum"] != -HUGE:
        parts.append(f"≥ {num(s['minimum'])}")
    if "exclusiveMinimum" in s:
        parts.append(f"> {num(s['exclusiveMinimum'])}")
    if "maximum" in s and s["maximum"] != HUGE:
        parts.append(f"≤ {num(s['maximum'])}")
    if "exclusiveMaximum" in s:
        parts.append(f"< {num(s['exclusiveMaximum'])}")
    if "not" in s and s["not"].get("const") == 0:
        parts.append("≠ 0")
    return ", ".join(parts)


def type_text(s, objects):
    """A short description of a value's type, with links to object sections."""
    r = ref_name(s)
    if r:
        if r in objects:
            return f"[{r}](#{r})"
        return FORMS_DOC.get(r, r)
    if "enum" in s:
        return "one of " + ", ".join(f"`{v}`" for v in s["enum"])
    if "anyOf" in s:
        return " or ".join(type_text(a, objects) if "const" not in a else f"`\"{a['const']}\"`" for a in s["anyOf"])
    t = s.get("type")
    if t == "array":
        it = s.get("items", {})
        lo, hi = s.get("minItems"), s.get("maxItems")
        n = f"{lo}" if lo == hi and lo else (f"{lo}–{hi}" if lo and hi else (f"≥ {lo}" if lo else ""))
        if it.get("type") in ("number", "integer") and lo == 2 and hi == 3:
            base = "vector (dim numbers)" if it.get("type") == "number" else "dim integers"
            rng = range_text(it)
            extra = " nonzero" if "not" in s else ""
            return base + (f", each {rng}" if rng else "") + extra
        inner = type_text(it, objects)
        return f"array of {n + ' ' if n else ''}{inner}".rstrip()
    if t in ("number", "integer"):
        rng = range_text(s)
        return t + (f" {rng}" if rng else "")
    if t == "string":
        return "string"
    if t == "boolean":
        return "boolean"
    return t or "?"


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def object_section(name, s, objects, out):
    out.append(f"### {name}\n")
    out.append(s.get("description", "") + "\n")
    req = set(s.get("required", []))
    out.append("| key | type | required | default | description |")
    out.append("|---|---|---|---|---|")
    for k, ps in s.get("properties", {}).items():
        default = ""
        for part in [ps] + ps.get("allOf", []):
            if "default" in part:
                default = f"`{json.dumps(part['default'])}`"
        out.append(f"| `{k}` | {cell(type_text(ps, objects))} | {'yes' if k in req else ''} | {cell(default)} | "
                   f"{cell(ps.get('description', ''))} |")
    rules = []
    if "oneOf" in s and all("required" in a for a in s["oneOf"]):
        rules.append("exactly one of " + ", ".join(f"`{a['required'][0]}`" for a in s["oneOf"]))
    if "anyOf" in s and all("required" in a for a in s["anyOf"]):
        rules.append("at least one of " + ", ".join(f"`{a['required'][0]}`" for a in s["anyOf"]))
    if rules:
        out.append("\nThe object has " + "; ".join(rules) + ".")
    out.append("")


def reachable(defs, start):
    """Object definitions in the order a depth-first walk from `start` meets them."""
    order, seen = [], set()

    def walk(s):
        if isinstance(s, dict):
            if "$ref" in s:
                r = s["$ref"].rsplit("/", 1)[1]
                if r not in seen and r in defs and not r.endswith(("_2d", "_3d")):
                    seen.add(r)
                    if defs[r].get("type") == "object" and "properties" in defs[r] and not r.startswith("contact"):
                        order.append(r)
                    walk(defs[r])
            for k, v in s.items():
                if k not in ("$ref", "if", "then", "else"):
                    walk(v)
        elif isinstance(s, list):
            for v in s:
                walk(v)
    walk(start)
    return order


def main():
    schema = json.load(open(sys.argv[1]) if len(sys.argv) > 1 else sys.stdin)
    defs = schema["$defs"]
    scene = defs["scene"]
    objects = ["scene"] + [n for n in reachable(defs, scene) if n not in ("scene", "body_contact")]
    out = ["# Scene reference", "",
           "<!-- generated by scripts/scene_reference.py from `contactlab schema`; do not edit: "
           "tests/cli_schema.sh fails when it differs -->", "",
           "A scene is one strict JSON object: unknown keys, wrong types and out-of-range values are errors",
           "(`contactlab check SCENE.json` names each with its JSON pointer and prints the resolved scene, every",
           "default filled in). `contactlab schema` prints the format as a JSON Schema (draft 2020-12) for",
           "editors and validators; this page is generated from it. Vectors have `dim` entries; keys and",
           "values marked 3D do not exist in 2D scenes (the schema's `scene_2d` / `scene_3d` definitions say",
           "so exactly). Units are SI. Rules that tie a value to another part of the scene (names that must",
           "exist, `duration` ≥ `dt`, a selector that must pick a vertex, a file that must be readable) are",
           "checked by `contactlab check`, not by the schema. Every number is 0 or of magnitude between 1e-30",
           "and 1e30 (so that no input can overflow the solver's arithmetic); the tables state narrower ranges.", "",
           "## Objects", ""]
    for n in objects:
        object_section(n, defs[n], set(objects), out)
    out += ["## Contact models", "",
            "`\"contact\": {\"model\": NAME, ...}` takes the model's parameters (`contactlab models` prints the same",
            "tables). `\"auto\"` lets the model choose where allowed; the numbers a run used are in its HDF5 file",
            "under `/model`. Parameters marked *per body* may also be given per body in `bodies[].contact`.", ""]
    for alt in defs["contact"]["oneOf"]:
        name = alt["$ref"].rsplit("/", 1)[1]
        m = defs[name]
        model = m["properties"]["model"]["const"]
        out.append(f"### {model}\n")
        out.append(m.get("description", "") + "\n")
        params = {k: v for k, v in m["properties"].items() if k != "model"}
        if not params:
            out.append("No parameters.\n")
            continue
        out.append("| parameter | type | default | description |")
        out.append("|---|---|---|---|")
        for k, ps in params.items():
            out.append(f"| `{k}` | {cell(type_text(ps, set()))} | `{json.dumps(ps.get('default'))}` | "
                       f"{cell(ps.get('description', ''))} |")
        out.append("")
    sys.stdout.write("\n".join(out).rstrip("\n") + "\n")


if __name__ == "__main__":
    main()
