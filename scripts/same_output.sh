#!/usr/bin/env bash
# same_output.sh — do two builds write the same experiment outputs? Runs every experiment's run.sh
# (experiments/*/run.sh) with CT_BUILD=REF_BUILD and with CT_BUILD=NEW_BUILD, each into its own
# output directory, on 1 and/or 2 threads, then compares each pair of output trees with
# scripts/same_output.py (HDF5 bitwise except timing datasets; csv/txt/dat/mesh byte for byte).
#
# Usage:
#   scripts/same_output.sh REF_BUILD NEW_BUILD [--threads 1|2|both] [--full] [--only EXP1,EXP2]
#                          [--ref-cache DIR] [--work DIR] [--keep] [--timeout SEC]
#                          [--ref-src DIR] [--new-src DIR] [--expect REGEX]...
#   scripts/same_output.sh --ref-only REF_BUILD --ref-cache DIR [--threads ...] [--full] [--only ...]
#
#   --threads     1, 2 or both (default both)
#   --full        the full run.sh of every experiment (default: QUICK=1 where run.sh has a QUICK
#                 mode, else the full run, except the slow ones listed in SLOW_NO_QUICK below)
#   --only        these experiments only (comma-separated; an experiment of SLOW_NO_QUICK named
#                 here is run, in full)
#   --ref-cache   reference outputs in DIR/<threads>/<exp>: an entry that exists (with its
#                 DIR/<threads>/<exp>.status, written when the run ended) is reused instead of
#                 running REF_BUILD again; a missing one is run and stored there. The variant
#                 (quick/full) recorded in .status must match, so keep one cache per variant
#                 (e.g. out/ for the default set, out_full/ for --full).
#   --ref-only    only fill the reference cache (no NEW_BUILD, no comparison)
#   --work        where the non-cached outputs go (default: a new ${TMPDIR:-/tmp}/same_output.XXXXXX,
#                 removed at the end if everything is the same, unless --keep)
#   --timeout     kill a run.sh after SEC seconds (reported as exit 124)
#   --expect      passed to same_output.py: differences at places matching REGEX are intended
#                 changes (listed, not counted), e.g. --expect '^/model' for the model's attributes
#   --ref-src, --new-src   the source tree whose experiments/ is run with each build (default: the
#                 build directory's parent if it has experiments/, else this script's repository)
#
# Threads: the 1-thread pass sets OMP_NUM_THREADS=1 (the experiments pass --threads 1, or nothing
# and get OMP_NUM_THREADS). The 2-thread pass sets OMP_NUM_THREADS=2 (energy_wall's driver and the
# runs without --threads follow it) and points CT_BUILD at a wrapper directory whose `contactlab`
# execs the real binary with every `--threads N` replaced by `--threads 2`; everything else in the
# build directory is symlinked into it. Experiments run one after the other, never in parallel.
# A run.sh that exits non-zero (a failed claim, a missing plotting module) is reported and its
# outputs are compared all the same.
#
# Exit status: 0 if every (experiment, threads) pair is the same and REF and NEW run.sh exit
# statuses agree; 1 otherwise; 2 on bad usage.
set -u
set -o pipefail

# Experiments with no QUICK mode whose full run is too slow for the default set (over ~60 s on one
# thread). Measured with the frozen pre-restructuring build (2 cores, other jobs running):
# threshold_ablation 149 s full. The default set keeps the other experiments without a QUICK mode:
# adhesion_curves 10 s, cube_push 28 s, energy_wall 8 s, hanging_bar 1 s, incline_3d 1.5 s, slope_2d 3 s.
SLOW_NO_QUICK=" threshold_ablation "

here=$(cd "$(dirname "$0")/.." && pwd)
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

usage() {
    sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2
    exit 2
}
die() { echo "same_output.sh: $*" >&2; exit 2; }

threads_opt=both full=0 only="" cache="" work="" keep=0 timeout_s="" ref_only=0 ref_src="" new_src=""
expect=()
pos=()
while [ $# -gt 0 ]; do
    case $1 in
        --threads) [ $# -ge 2 ] || die "--threads needs a value"; threads_opt=$2; shift 2 ;;
        --full) full=1; shift ;;
        --only) [ $# -ge 2 ] || die "--only needs a value"; only=$2; shift 2 ;;
        --ref-cache) [ $# -ge 2 ] || die "--ref-cache needs a directory"; cache=$2; shift 2 ;;
        --work) [ $# -ge 2 ] || die "--work needs a directory"; work=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        --expect) [ $# -ge 2 ] || die "--expect needs a value"; expect+=(--expect "$2"); shift 2 ;;
        --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; timeout_s=$2; shift 2 ;;
        --ref-only) ref_only=1; shift ;;
        --ref-src) [ $# -ge 2 ] || die "--ref-src needs a directory"; ref_src=$2; shift 2 ;;
        --new-src) [ $# -ge 2 ] || die "--new-src needs a directory"; new_src=$2; shift 2 ;;
        -h|--help) usage ;;
        -*) die "unknown option '$1' (--help for usage)" ;;
        *) pos+=("$1"); shift ;;
    esac
done
case $threads_opt in
    1) thread_list=(1) ;; 2) thread_list=(2) ;; both) thread_list=(1 2) ;;
    *) die "--threads: expected 1, 2 or both (got '$threads_opt')" ;;
esac
if [ $ref_only = 1 ]; then
    [ ${#pos[@]} = 1 ] || die "--ref-only takes one build directory (REF_BUILD)"
    [ -n "$cache" ] || die "--ref-only needs --ref-cache DIR"
else
    [ ${#pos[@]} = 2 ] || usage
fi
if [ -n "$timeout_s" ]; then
    case $timeout_s in ''|*[!0-9]*) die "--timeout: expected whole seconds (got '$timeout_s')" ;; esac
fi

absdir() { (cd "$1" 2>/dev/null && pwd) || die "$1: no such directory"; }
src_for() {  # BUILD [OVERRIDE]: the source tree whose experiments/ runs with BUILD
    if [ -n "${2:-}" ]; then absdir "$2"
    elif [ -d "$1/../experiments" ]; then absdir "$1/.."
    else echo "$here"; fi
}
ref_build=$(absdir "${pos[0]}")
[ -x "$ref_build/contactlab" ] || die "$ref_build/contactlab: not an executable"
ref_src=$(src_for "$ref_build" "$ref_src")
if [ $ref_only = 0 ]; then
    new_build=$(absdir "${pos[1]}")
    [ -x "$new_build/contactlab" ] || die "$new_build/contactlab: not an executable"
    new_src=$(src_for "$new_build" "$new_src")
fi
if [ -n "$cache" ]; then
    mkdir -p "$cache" || die "$cache: cannot create"
    cache=$(absdir "$cache")
fi
if [ -z "$work" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/same_output.XXXXXX") || die "mktemp failed"
    made_work=1
else
    mkdir -p "$work" || die "$work: cannot create"
    work=$(absdir "$work")
    made_work=0
fi

# ---- the experiments: every experiments/*/run.sh of the tree(s), filtered
main_src=${new_src:-$ref_src}
declare -A seen=()
all=()
for s in "$main_src" "$ref_src"; do
    for f in "$s"/experiments/*/run.sh; do
        [ -f "$f" ] || continue
        e=$(basename "$(dirname "$f")")
        [ -n "${seen[$e]:-}" ] && continue
        seen[$e]=1
        all+=("$e")
    done
done
[ ${#all[@]} -gt 0 ] || die "no experiments/*/run.sh under $main_src"
mapfile -t all < <(printf '%s\n' "${all[@]}" | sort)
declare -A want=()
if [ -n "$only" ]; then
    IFS=, read -r -a only_list <<<"$only"
    for e in "${only_list[@]}"; do
        [ -n "$e" ] || continue
        [ -n "${seen[$e]:-}" ] || die "--only: no experiment '$e' (have: ${all[*]})"
        want[$e]=1
    done
fi
exps=() variants=() skipped=()
for e in "${all[@]}"; do
    if [ -n "$only" ] && [ -z "${want[$e]:-}" ]; then continue; fi
    rs="$main_src/experiments/$e/run.sh"
    [ -f "$rs" ] || rs="$ref_src/experiments/$e/run.sh"
    if [ $full = 1 ]; then v=full
    elif grep -q 'QUICK' "$rs"; then v=quick
    elif [[ "$SLOW_NO_QUICK" == *" $e "* ]] && [ -z "$only" ]; then skipped+=("$e"); continue
    else v=full; fi
    exps+=("$e"); variants+=("$v")
done
[ ${#exps[@]} -gt 0 ] || die "no experiment selected"

echo "same_output.sh: reference $ref_build (experiments of $ref_src)"
[ $ref_only = 0 ] && echo "same_output.sh: new       $new_build (experiments of $new_src)"
echo "same_output.sh: threads ${thread_list[*]}; outputs under $work${cache:+; reference cache $cache}"
line=""
for i in "${!exps[@]}"; do line+=" ${exps[i]}(${variants[i]})"; done
echo "same_output.sh: experiments:$line"
[ ${#skipped[@]} -gt 0 ] && echo "same_output.sh: skipped (no QUICK mode, slow; use --full or --only): ${skipped[*]}"

# ---- the 2-thread wrapper directory of a build
wrapper() {  # BUILD DIR: DIR/contactlab forces --threads 2, the rest of BUILD symlinked
    local build=$1 dir=$2 e
    rm -rf "$dir"
    mkdir -p "$dir"
    for e in "$build"/* "$build"/.[!.]*; do
        [ -e "$e" ] || continue
        [ "$(basename "$e")" = contactlab ] && continue
        ln -s "$e" "$dir/$(basename "$e")"
    done
    {
        echo '#!/usr/bin/env bash'
        echo '# written by scripts/same_output.sh: the real contactlab with every "--threads N" made "--threads 2"'
        printf 'real=%q\n' "$build/contactlab"
        cat <<'EOF'
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --threads) if [ $# -ge 2 ]; then args+=(--threads 2); shift 2; else args+=("$1"); shift; fi ;;
        --set|-o) args+=("$1"); shift; if [ $# -gt 0 ]; then args+=("$1"); shift; fi ;;
        *) args+=("$1"); shift ;;
    esac
done
exec "$real" ${args[@]+"${args[@]}"}
EOF
    } >"$dir/contactlab"
    chmod +x "$dir/contactlab"
}

# ---- one run.sh
status_get() {  # FILE KEY
    sed -n "s/^$2=//p" "$1" 2>/dev/null | head -n 1
}
run_exp() {  # CT_BUILD SRC EXP THREADS VARIANT OUTDIR REAL_BUILD LABEL: runs, writes OUTDIR.status and .log
    local ctb=$1 src=$2 e=$3 t=$4 v=$5 out=$6 real=$7 rc wall tu ts
    local rs="$src/experiments/$e/run.sh"
    [ -n "$e" ] || die "internal: empty experiment name"
    rm -rf "$out" "$out.status" "$out.log"
    mkdir -p "$out"
    local envv=(-u QUICK -u FULL -u OPENBLAS_NUM_THREADS -u GOTO_NUM_THREADS -u MKL_NUM_THREADS
                -u OMP_PROC_BIND -u OMP_PLACES -u OMP_DYNAMIC
                CT_BUILD="$ctb" OMP_NUM_THREADS="$t" OMP_WAIT_POLICY=passive MPLBACKEND=Agg)
    [ "$v" = quick ] && envv+=(QUICK=1)
    local to=()
    [ -n "$timeout_s" ] && to=(timeout -k 10 "$timeout_s")
    local TIMEFORMAT='%R %U %S' cpu=-
    if [ -f "$rs" ]; then
        { time env "${envv[@]}" ${to[@]+"${to[@]}"} bash "$rs" "$out" >"$out.log" 2>&1 </dev/null; } 2>"$out.time"
        rc=$?
        read -r wall tu ts <"$out.time"
        cpu=$(awk -v u="$tu" -v s="$ts" 'BEGIN { printf "%.1f", u + s }')
        wall=$(awk -v w="$wall" 'BEGIN { printf "%.1f", w }')
        rm -f "$out.time"
    else
        echo "no $rs" >"$out.log"
        rc=127 wall=0
    fi
    {
        echo "experiment=$e"
        echo "threads=$t"
        echo "variant=$v"
        echo "rc=$rc"
        echo "wall_s=$wall"
        echo "cpu_s=$cpu"
        echo "load_avg=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
        echo "build=$real"
        echo "src=$src"
        echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "host=$(hostname 2>/dev/null || echo unknown)"
    } >"$out.status"
    printf '  %-7s %-20s %d thread(s) %-5s exit %-3s %7s s (cpu %s s)  -> %s\n' \
        "$8" "$e" "$t" "$v" "$rc" "$wall" "$cpu" "$out"
    if [ "$rc" != 0 ]; then
        echo "    run.sh exit $rc; last lines of $out.log:"
        tail -n 5 "$out.log" | sed 's/^/      | /'
    fi
}

# ---- the passes
declare -A R_RC=() R_WALL=() N_RC=() N_WALL=() VERDICT=() NFILES=() CACHED=()
fail=0
for t in "${thread_list[@]}"; do
    ref_ct=$ref_build new_ct=${new_build:-}
    if [ "$t" = 2 ]; then
        wrapper "$ref_build" "$work/wrap2/ref"; ref_ct="$work/wrap2/ref"
        if [ $ref_only = 0 ]; then wrapper "$new_build" "$work/wrap2/new"; new_ct="$work/wrap2/new"; fi
    fi
    echo
    echo "=== $t thread(s)"
    for i in "${!exps[@]}"; do
        e=${exps[i]} v=${variants[i]} k="$e/$t"
        # reference
        if [ -n "$cache" ]; then
            rdir="$cache/$t/$e"
            if [ -d "$rdir" ] && [ -f "$rdir.status" ]; then
                cv=$(status_get "$rdir.status" variant)
                if [ "$cv" != "$v" ]; then
                    echo "  ref     $e: cache $rdir is variant '$cv', this pass wants '$v' (use another --ref-cache)"
                    VERDICT[$k]="CACHE-MISMATCH"; fail=1; continue
                fi
                cb=$(status_get "$rdir.status" build)
                [ "$cb" = "$ref_build" ] || echo "  ref     $e: note: cache written by $cb, not $ref_build"
                CACHED[$k]=1
                printf '  %-7s %-20s %d thread(s) %-5s exit %-3s %7s s  (cached: %s)\n' ref "$e" "$t" "$v" \
                    "$(status_get "$rdir.status" rc)" "$(status_get "$rdir.status" wall_s)" "$rdir"
            else
                mkdir -p "$cache/$t"
                run_exp "$ref_ct" "$ref_src" "$e" "$t" "$v" "$rdir" "$ref_build" ref
            fi
        else
            rdir="$work/ref/$t/$e"
            mkdir -p "$work/ref/$t"
            run_exp "$ref_ct" "$ref_src" "$e" "$t" "$v" "$rdir" "$ref_build" ref
        fi
        R_RC[$k]=$(status_get "$rdir.status" rc)
        R_WALL[$k]=$(status_get "$rdir.status" wall_s)
        [ $ref_only = 1 ] && continue
        # new
        ndir="$work/new/$t/$e"
        mkdir -p "$work/new/$t"
        run_exp "$new_ct" "$new_src" "$e" "$t" "$v" "$ndir" "$new_build" new
        N_RC[$k]=$(status_get "$ndir.status" rc)
        N_WALL[$k]=$(status_get "$ndir.status" wall_s)
        # compare
        mkdir -p "$work/cmp/$t"
        cmp="$work/cmp/$t/$e.txt"
        "$PY" "$here/scripts/same_output.py" ${expect[@]+"${expect[@]}"} "$rdir" "$ndir" >"$cmp" 2>&1
        prc=$?
        sed 's/^/    /' "$cmp"
        summ=$(grep '^same_output: ' "$cmp" | tail -n 1)
        ns=$(sed -n 's/^same_output: \([0-9]*\) same, \([0-9]*\) different, \([0-9]*\) missing$/\1 \2 \3/p' <<<"$summ")
        read -r c_same c_diff c_miss <<<"${ns:-0 0 0}"
        NFILES[$k]=$((c_same + c_diff + c_miss))
        if [ "$prc" = 0 ]; then VERDICT[$k]=same
        elif [ "${NFILES[$k]}" = 0 ]; then VERDICT[$k]="NO FILES"
        elif [ -z "$ns" ]; then VERDICT[$k]="ERROR (same_output.py exit $prc)"
        else VERDICT[$k]="DIFFERENT ($c_diff diff, $c_miss missing)"; fi
        if [ "${R_RC[$k]}" != "${N_RC[$k]}" ]; then
            VERDICT[$k]+="; run.sh exit differs"
        fi
        [ "${VERDICT[$k]}" = same ] || fail=1
    done
done

# ---- the table
echo
if [ $ref_only = 1 ]; then
    printf '%-20s %-7s %-7s %-9s %-10s %s\n' experiment threads variant "exit" "wall (s)" "cache dir"
    for t in "${thread_list[@]}"; do
        for i in "${!exps[@]}"; do
            e=${exps[i]} k="${exps[i]}/$t"
            printf '%-20s %-7s %-7s %-9s %-10s %s\n' "$e" "$t" "${variants[i]}" "${R_RC[$k]:--}" \
                "${R_WALL[$k]:--}${CACHED[$k]:+ (cached)}" "$cache/$t/$e"
        done
    done
    echo "experiments run: ${exps[*]}"
    [ $made_work = 1 ] && [ $keep = 0 ] && rm -rf "$work"  # only the 2-thread wrappers
    exit 0
fi
printf '%-20s %-7s %-7s %-6s %-13s %-15s %s\n' experiment threads variant files "exit ref/new" "wall ref/new s" verdict
for t in "${thread_list[@]}"; do
    for i in "${!exps[@]}"; do
        e=${exps[i]} k="${exps[i]}/$t"
        printf '%-20s %-7s %-7s %-6s %-13s %-15s %s\n' "$e" "$t" "${variants[i]}" "${NFILES[$k]:--}" \
            "${R_RC[$k]:--}/${N_RC[$k]:--}" "${R_WALL[$k]:--}${CACHED[$k]:+c}/${N_WALL[$k]:--}" "${VERDICT[$k]:-?}"
    done
done
echo "(c: reference taken from the cache; its wall time is the cached run's)"
echo "experiments compared: ${exps[*]} (threads: ${thread_list[*]})"
[ ${#skipped[@]} -gt 0 ] && echo "not compared (slow, no QUICK mode): ${skipped[*]}"
if [ $fail = 0 ]; then
    echo "same_output.sh: ALL SAME"
    if [ $made_work = 1 ] && [ $keep = 0 ]; then rm -rf "$work"; else echo "outputs kept in $work"; fi
    exit 0
fi
echo "same_output.sh: DIFFERENCES (outputs and comparisons kept in $work; logs next to each output dir)"
exit 1
