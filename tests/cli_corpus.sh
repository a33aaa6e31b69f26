#!/usr/bin/env bash
# cli_corpus.sh — every malformed scene in tests/data/scenes/bad must make `contactlab check`
# exit with status 2 (bad input; >= 128 would be a crash) and name the file and the expected
# JSON path (or FILE:LINE) on stderr. tests/data/scenes/bad/EXPECT lists
# "<file.json><TAB><expected substring>", one case per line.
set -u
cd "$(dirname "$0")/.."
bin="${CT_BUILD:-build}/contactlab"
dir=tests/data/scenes/bad
if [ ! -x "$bin" ]; then
    echo "cli_corpus: $bin not found (build it with make)" >&2
    exit 1
fi
err=$(mktemp)
trap 'rm -f "$err"' EXIT
pass=0; fail=0
while IFS=$'\t' read -r file expect; do
    [ -n "$file" ] || continue
    "$bin" check "$dir/$file" <&- >/dev/null 2>"$err"
    rc=$?
    why=""
    if [ $rc -ge 128 ]; then
        why="CRASH (exit $rc, signal $((rc - 128)))"
    elif [ $rc -ne 2 ]; then
        why="exit $rc, expected 2"
    elif ! grep -qF -- "$file" "$err"; then
        why="stderr does not name the file"
    elif ! grep -qF -- "$expect" "$err"; then
        why="stderr lacks: $expect"
    fi
    if [ -z "$why" ]; then
        pass=$((pass + 1))
        echo "ok    $file"
    else
        fail=$((fail + 1))
        echo "FAIL  $file: $why"
        sed 's/^/      | /' "$err" | head -n 5
    fi
done < "$dir/EXPECT"
# the empty selection that empty_fixed_selection.json is refused for, said to be meant, is accepted
sed 's/"max": \[/"max": [/; s/"box": {/"allow_empty": true, "box": {/' "$dir/build_empty_fixed_selection.json" > "$err.json"
if "$bin" check "$err.json" <&- > /dev/null 2>&1; then
    pass=$((pass + 1)); echo "ok    build_empty_fixed_selection.json with \"allow_empty\": true is accepted"
else
    fail=$((fail + 1)); echo "FAIL  \"allow_empty\": true: still refused"
fi
rm -f "$err.json"
echo "corpus: $pass passed, $fail failed"
[ $fail -eq 0 ]
