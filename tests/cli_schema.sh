#!/usr/bin/env bash
# cli_schema.sh — `contactlab schema` (the scene format as a JSON Schema, core/io/scene_schema.c):
# it validates every scene of the repository and its resolved form, states the parser's defaults,
# rejects the bad-input corpus except the mistakes only the parser can see (tests/schema_check.py),
# and docs/scenes.md is what scripts/scene_reference.py makes of it; docs/gallery.md is current.
set -u
cd "$(dirname "$0")/.."
bin="${CT_BUILD:-build}/contactlab"
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
if ! "$bin" schema > "$tmp/schema.json"; then
    echo "FAIL  contactlab schema exits $?"
    exit 1
fi
if ! "$PY" -c 'import jsonschema' 2>/dev/null; then
    echo "FAIL  python3-jsonschema is missing (scripts/install-deps.sh installs it)"
    exit 1
fi
"$PY" tests/schema_check.py "$tmp/schema.json" "$bin" . > "$tmp/check.log" 2>&1 || fail=1
grep -v '^ok' "$tmp/check.log"
"$PY" scripts/scene_reference.py "$tmp/schema.json" > "$tmp/scenes.md" || fail=1
if cmp -s "$tmp/scenes.md" docs/scenes.md; then
    echo "ok    docs/scenes.md is up to date"
else
    echo "FAIL  docs/scenes.md differs from the schema: run  $bin schema | scripts/scene_reference.py > docs/scenes.md"
    diff "$tmp/scenes.md" docs/scenes.md | head -20
    fail=1
fi
# the scene gallery (docs/gallery.md) shows every scene that has a description, as it is now
if ! "$PY" scripts/gallery.py --check; then echo "FAIL  docs/gallery.md is stale: run  make gallery"; fail=1; fi
# an argument is refused
"$bin" schema extra > /dev/null 2>&1
rc=$?
if [ $rc -ne 2 ]; then echo "FAIL  contactlab schema extra: exit $rc, expected 2"; fail=1; fi
[ $fail -eq 0 ] && echo "cli_schema: ok"
exit $fail
