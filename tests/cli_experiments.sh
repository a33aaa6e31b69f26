#!/usr/bin/env bash
# End-to-end runs of the experiments whose full settings are cheap enough for `make test`:
# each run.sh asserts its README's claims and exits 1 if one fails (DESIGN §9).
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
for e in slope_2d incline_3d; do
    if bash "experiments/$e/run.sh" "$tmp/$e" > "$tmp/$e.log" 2>&1; then
        echo "ok    $e"; pass=$((pass + 1))
    else
        echo "FAIL  $e"; sed 's/^/      /' "$tmp/$e.log" | tail -20; fail=$((fail + 1))
    fi
done
echo "cli_experiments: $pass passed, $fail failed"
[ $fail -eq 0 ]
