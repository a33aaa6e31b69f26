#!/usr/bin/env bash
# fuzz.sh — libFuzzer (clang, with ASan + UBSan + LeakSanitizer) on the scene loader, the --set
# overrides and the mesh readers (tests/fuzz/fuzz_*.c).
#   scripts/fuzz.sh [SECONDS]     each target runs SECONDS (default 300; make fuzz), seeded with the
#                                 repository's scenes and meshes and tests/fuzz/corpus/<target>/
# The library is built with clang into build-fuzz/ (CT_FUZZ_BUILD). Exit 1 if a target finds a
# crash, a leak or a sanitizer report: the input is copied to tests/fuzz/found/<target>-<hash>
# (keep it: it becomes a seed, and the fix gets a regression case). New corpus entries the runs
# found are kept in the work folder only (FUZZ_KEEP=1: merged into tests/fuzz/corpus/).
# FUZZ_TARGETS="scene set" runs only those targets (default: scene set mesh).
set -u
cd "$(dirname "$0")/.."
secs=${1:-300}
B=${CT_FUZZ_BUILD:-build-fuzz}
if ! command -v clang > /dev/null; then
    echo "fuzz: clang not found (Debian: clang libclang-rt-dev libomp-dev; scripts/install-deps.sh)" >&2
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if ! make -s BUILD="$B" CC=clang OPT=-O1 EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $SAN -Wno-pass-failed" \
        EXTRA_LDFLAGS="$SAN" "$B/libcontactlab.a" > "$work/build.log" 2>&1; then
    echo "fuzz: building the library with clang failed:" >&2
    tail -20 "$work/build.log" >&2
    exit 1
fi
LIBS="$(pkg-config --libs-only-L --libs-only-other hdf5) -lhdf5 -ljansson -lgsl -lcholmod -lsuitesparseconfig \
-llapacke -llapack -lblas -lm"
INC="-Icore/include -Icore -I/usr/include/suitesparse $(pkg-config --cflags hdf5 jansson gsl lapacke)"
fail=0
for t in ${FUZZ_TARGETS:-scene set mesh}; do
    bin=$B/fuzz_$t
    # shellcheck disable=SC2086
    if ! clang -std=c17 -O1 -g -fopenmp -fsanitize=fuzzer $SAN $INC tests/fuzz/fuzz_$t.c "$B/libcontactlab.a" \
            $LIBS -o "$bin" > "$work/$t.cc" 2>&1; then
        echo "fuzz: linking fuzz_$t failed:" >&2; tail -20 "$work/$t.cc" >&2; exit 1
    fi
    seeds=$work/seeds_$t
    mkdir -p "$seeds" "tests/fuzz/corpus/$t"
    case $t in
        scene) find experiments tests/data/scenes -name '*.json' -size -64k -exec cp {} "$seeds/" \; 2>/dev/null ;;
        set) printf 'time.dt=0.001\n' > "$seeds/a"; printf 'bodies.0.mesh.cells=[3,1,2]\ncontact.model="none"\n' > "$seeds/b"
             printf 'solver.threads=2\nprobes.0.select.side="-y"\n' > "$seeds/c" ;;
        mesh) for f in tests/data/meshes/* tests/data/bad_meshes/* experiments/*/*.msh; do
                  [ -f "$f" ] && [ "$(stat -c %s "$f")" -lt 65536 ] || continue
                  case $f in *.obj) k='\x01' ;; *) k='\x00' ;; esac
                  { printf "$k"; cat "$f"; } > "$seeds/$(basename "$f")"
              done ;;
    esac
    newc=$work/new_$t
    mkdir -p "$newc"
    echo "fuzz: fuzz_$t for ${secs} s"
    ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp \
    OMP_NUM_THREADS=1 OMP_THREAD_LIMIT=1 OPENBLAS_NUM_THREADS=1 \
    "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=4096 -timeout=20 -print_final_stats=1 \
        -artifact_prefix="$work/$t-" "$newc" "tests/fuzz/corpus/$t" "$seeds" > "$work/$t.log" 2>&1
    rc=$?
    # executions, new inputs, and the coverage reached (libFuzzer's last status line: cov = edges
    # of the instrumented code covered, ft = features, corp = inputs in the corpus)
    grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$work/$t.log" | sed 's/^/      /'
    grep -E "^#[0-9]+[[:space:]]+(DONE|INITED)" "$work/$t.log" | tail -1 | sed 's/^/      /'
    if [ $rc -ne 0 ]; then
        fail=1
        mkdir -p tests/fuzz/found
        for a in "$work/$t"-*; do
            [ -f "$a" ] || continue
            cp "$a" "tests/fuzz/found/$(basename "$a")"
            echo "fuzz: fuzz_$t: FINDING kept as tests/fuzz/found/$(basename "$a")"
        done
        grep -E "ERROR|SUMMARY|runtime error" "$work/$t.log" | head -5 | sed 's/^/      /'
    fi
    if [ "${FUZZ_KEEP:-0}" = 1 ]; then
        # keep only the new inputs that add coverage to what corpus/<target>/ and the seeds reach
        before=$(find "tests/fuzz/corpus/$t" -type f | wc -l)
        ASAN_OPTIONS=detect_leaks=0 OMP_NUM_THREADS=1 OMP_THREAD_LIMIT=1 \
        "$bin" -merge=1 -max_len=65536 -rss_limit_mb=4096 -timeout=20 \
            "tests/fuzz/corpus/$t" "$seeds" "$newc" > "$work/$t.merge" 2>&1 || true
        # inputs that came from the seeds stay out: they are in the repository already
        for f in "$seeds"/*; do rm -f "tests/fuzz/corpus/$t/$(sha1sum < "$f" | cut -c1-40)"; done
        echo "      corpus/$t: $before -> $(find "tests/fuzz/corpus/$t" -type f | wc -l) inputs"
    fi
done
[ $fail -eq 0 ] && echo "fuzz: no crash, leak or sanitizer report"
exit $fail
