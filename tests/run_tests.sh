#!/usr/bin/env bash
# Run every Check suite binary given on the command line, then the command-line tests
# (tests/cli_*.sh). Prints one closing line "tests: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
export CT_BUILD="${CT_BUILD:-build}"
export CT_TEST_DATA="${CT_TEST_DATA:-tests/data}"
# OpenBLAS threads inside OpenMP loops (dsyevd in the PSD projections) oversubscribe the cores.
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
# idle OpenMP threads sleep instead of spinning: on a shared machine spinning threads of one
# test starve the others (a 2-thread run measured 137 s instead of 8 s under load)
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-passive}"
export CK_DEFAULT_TIMEOUT="${CK_DEFAULT_TIMEOUT:-4}"
pass=0; fail=0; failed=()
for t in "$@"; do
    echo "== $t"
    if "$t"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$t"); fi
done
for s in tests/cli_*.sh; do
    [ -f "$s" ] || continue
    echo "== $s"
    if bash "$s"; then pass=$((pass + 1)); else fail=$((fail + 1)); failed+=("$s"); fi
done
echo
if [ $fail -gt 0 ]; then printf 'failed: %s\n' "${failed[@]}"; fi
echo "tests: $pass passed, $fail failed"
[ $fail -eq 0 ]
