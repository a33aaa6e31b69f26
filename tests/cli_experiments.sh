#!/usr/bin/env bash
# End-to-end runs of the experiments whose full settings are cheap enough for `make test`:
# each run.sh asserts its README's claims and exits 1 if one fails (DESIGN §9).
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
# "NAME" or "VAR=value NAME": the environment selects a cheap variant with the same claims
for spec in "slope_2d" "incline_3d" "QUICK=1 energy_wall" "QUICK=1 cube_push" "QUICK=1 drop_stack" "QUICK=1 cube_wall" "adhesion_curves" "QUICK=1 pull_peel" "QUICK=1 rcc_curves" "QUICK=1 rcc_stability" "QUICK=1 rcc_vs_ours"; do
    e=${spec##* }; vars=${spec% *}; [ "$vars" = "$spec" ] && vars=
    if env $vars bash "experiments/$e/run.sh" "$tmp/$e" > "$tmp/$e.log" 2>&1; then
        echo "ok    $e${vars:+ ($vars)}"; pass=$((pass + 1))
    else
        echo "FAIL  $e${vars:+ ($vars)}"; sed 's/^/      /' "$tmp/$e.log" | tail -20; fail=$((fail + 1))
    fi
done
echo "cli_experiments: $pass passed, $fail failed"
[ $fail -eq 0 ]
