#!/usr/bin/env bash
# The thread default measured (bench/README.md, "Thread default"): wall time of
#   contactlab run SCENE --steps STEPS --quiet
# with the default (every core; passive waiting set by the program), --threads 1, --threads 2 and the
# spinning default before (CT_KEEP_ENV=1), REPS rounds alternating the four; with BUSY=1 a `yes` process
# holds one core meanwhile. Prints the median, min and max of each.
# Usage: [BUSY=1] [CT_BUILD=build] scripts/thread_default.sh SCENE STEPS [REPS]
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: [BUSY=1] scripts/thread_default.sh SCENE STEPS [REPS]" >&2; exit 2; }
scene=$1 steps=$2 reps=${3:-3}
CL=${CT_BUILD:-build}/contactlab
out=$(mktemp -d)
yp=
trap '[ -n "$yp" ] && kill $yp 2>/dev/null; rm -rf "$out"' EXIT
if [ "${BUSY:-0}" = 1 ]; then yes > /dev/null & yp=$!; fi
modes=(default t1 t2 spin)
declare -A T
for ((r = 0; r < reps; ++r)); do
    for m in "${modes[@]}"; do
        case $m in
            default) e=(); a=() ;;
            t1) e=(); a=(--threads 1) ;;
            t2) e=(); a=(--threads 2) ;;
            spin) e=(CT_KEEP_ENV=1); a=() ;;
        esac
        s=$(date +%s.%N)
        env -u OMP_WAIT_POLICY -u OPENBLAS_NUM_THREADS "${e[@]}" "$CL" run "$scene" --steps "$steps" --quiet \
            ${a[@]+"${a[@]}"} -o "$out/$m.h5" --force >/dev/null
        T[$m]="${T[$m]:-} $(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$s" "$(date +%s.%N)")"
    done
done
for m in "${modes[@]}"; do
    python3 -c "import sys, statistics as S; v = sorted(map(float, sys.argv[2:]))
print(f'{sys.argv[1]:8s} median {S.median(v):.2f} s (min {v[0]:.2f}, max {v[-1]:.2f})')" "$m" ${T[$m]}
done
