#!/usr/bin/env bash
# End-to-end runs of the experiments whose full settings are cheap enough for `make test`:
# each run.sh asserts its README's claims and exits 1 if one fails (DESIGN §9).
# The experiments run CT_TEST_JOBS at a time (default: 2, or 1 on a one-core machine; every
# experiment runs single-threaded), the longest first; results are printed in the list's order.
set -u
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
jobs_max=${CT_TEST_JOBS:-$(( $(nproc 2>/dev/null || echo 1) > 1 ? 2 : 1 ))}
# "NAME" or "VAR=value NAME": the environment selects a cheap variant with the same claims;
# longest first (measured one at a time: pull_peel ~30 s, cube_push ~15 s, imls_drop ~17 s, rcc_curves ~15 s)
specs=("QUICK=1 pull_peel" "QUICK=1 model_matrix" "QUICK=1 cube_push" "QUICK=1 imls_drop" "QUICK=1 rcc_curves" "adhesion_curves" "QUICK=1 energy_wall"
       "QUICK=1 rcc_vs_ours" "QUICK=1 rcc_stability" "QUICK=1 cube_wall" "slope_2d" "QUICK=1 drop_stack"
       "incline_3d" "QUICK=1 candy_jello" "QUICK=1 gascon_ceiling" "QUICK=1 annulus_forward" "QUICK=1 annulus_inverse")
run_one() {  # INDEX SPEC: the run.sh's exit status into $tmp/INDEX.rc
    local e=${2##* } vars=${2% *}
    [ "$vars" = "$2" ] && vars=
    env $vars bash "experiments/$e/run.sh" "$tmp/$e" > "$tmp/$1.log" 2>&1
    echo $? > "$tmp/$1.rc"
}
running=0
for i in "${!specs[@]}"; do
    if [ "$running" -ge "$jobs_max" ]; then wait -n; running=$((running - 1)); fi
    run_one "$i" "${specs[$i]}" &
    running=$((running + 1))
done
wait
pass=0; fail=0
for i in "${!specs[@]}"; do
    spec=${specs[$i]}; e=${spec##* }; vars=${spec% *}; [ "$vars" = "$spec" ] && vars=
    if [ "$(cat "$tmp/$i.rc" 2>/dev/null)" = 0 ]; then
        echo "ok    $e${vars:+ ($vars)}"; pass=$((pass + 1))
    else
        echo "FAIL  $e${vars:+ ($vars)}"; sed 's/^/      /' "$tmp/$i.log" | tail -20; fail=$((fail + 1))
    fi
done
echo "cli_experiments: $pass passed, $fail failed"
[ $fail -eq 0 ]
