#!/usr/bin/env bash
# `contactlab sensitivity` end to end on tests/data/scenes/sensitivity/press.json (a 2D block pressed
# onto a half-space by its prescribed top face, IPC, frictionless): the printed d(gap)/dθ of the press
# (the top's velocity y, = its displacement in the one-second static step) against the central
# difference of two runs at θ ± 1e-7 m (the same numbers check_sensitivity asserts to 1e-5; here
# 1e-5 too), the HDF5 file of -o, the exit codes of bad input (2).
set -u
cd "$(dirname "$0")/.."
CL=${CT_BUILD:-build}/contactlab
scene=tests/data/scenes/sensitivity/press.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "ok    $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }
P=bodies.0.fixed.0.motion.0.velocity.y

# 1. the derivative against a central difference of two runs (the gap probe's value column)
if "$CL" sensitivity "$scene" --param "$P" --param bodies.block.loads.0.force.x -o "$tmp/s.h5" --threads 1 \
        </dev/null > "$tmp/out.txt" 2>"$tmp/err"; then
    d=$(awk -v p="$P" '$1 == p && $3 == "gap" {print $6}' "$tmp/out.txt")
    vals=()
    for v in -0.0020001 -0.0019999; do
        vals+=("$("$CL" sensitivity "$scene" --set "bodies.0.fixed.motion.0.velocity=[0.0002,$v]" --param "$P" \
                 --quiet --threads 1 </dev/null 2>/dev/null | awk -v p="$P" '$1 == p && $3 == "gap" {print $5}')")
    done
    if awk -v d="$d" -v a="${vals[0]}" -v b="${vals[1]}" 'BEGIN {
            fd = (b - a) / 2e-7; e = (d - fd) / fd; if (e < 0) e = -e
            printf "  d(gap)/dtheta %.10g, central FD %.10g, relative error %.2e\n", d, fd, e
            exit !(d != "" && e < 1e-5) }'; then
        ok "sensitivity: d(gap)/d(velocity.y) matches the central difference of two runs"
    else bad "sensitivity vs FD: d='$d' runs: ${vals[*]}"; fi
    grep -q '^# exact Hessian: the last Newton factorization, reused' "$tmp/out.txt" \
        && ok "sensitivity: the last Newton factorization reused" || bad "factor line: $(sed -n 2p "$tmp/out.txt")"
    if "$CL" export "$tmp/s.h5" /sensitivity/probes/gap > "$tmp/gap.dat" 2>"$tmp/err2" \
            && awk -v d="$d" '!/^#/ {n++; if (n == 1) v = $1} END {e = (v - d) / d; if (e < 0) e = -e; exit !(n == 2 && e < 1e-12)}' "$tmp/gap.dat"; then
        ok "-o: /sensitivity/probes/gap holds the printed derivatives (2 parameters)"
    else bad "-o: $(cat "$tmp/gap.dat" "$tmp/err2" | head -5)"; fi
else
    bad "sensitivity run: $(head -3 "$tmp/err")"
fi

# 3. springs (scene "springs"): a bar (EA/L = 1e5 N/m) in series with two zero-length springs (k/2 each,
# k = 3e4 N/m) to an anchor moved by d: du_tip/dd = k/(k + EA/L) = 3/13 (check_springs derives it); the
# spring_force and spring-energy probes and the resolved scene's "springs" in the HDF5 file
sp=tests/data/scenes/sensitivity/spring_series.json
if "$CL" sensitivity "$sp" --param bodies.anchor.fixed.0.motion.0.velocity.x -o "$tmp/sp.h5" --threads 1 \
        </dev/null > "$tmp/sp.txt" 2>"$tmp/err"; then
    d=$(awk '$3 == "tip" {print $6}' "$tmp/sp.txt")
    if awk -v d="$d" 'BEGIN { w = 3e4 / (3e4 + 1e5); e = (d - w) / w; if (e < 0) e = -e
            printf "  du_tip/dd %.12g, k/(k + EA/L) %.12g, relative error %.2e\n", d, w, e; exit !(d != "" && e < 1e-5) }'; then
        ok "springs: du_tip/dd of a bar and a spring in series = k/(k + EA/L)"
    else bad "springs: du_tip/dd = '$d'"; fi
else
    bad "springs: sensitivity run: $(head -3 "$tmp/err")"
fi
if "$CL" run "$sp" -o "$tmp/spr.h5" --threads 1 </dev/null >/dev/null 2>"$tmp/err" \
        && "$CL" export "$tmp/spr.h5" /probes/tip /probes/f_low /probes/e_springs > "$tmp/spr.dat" 2>>"$tmp/err"; then
    # u = k d/(k + EA/L), f_low = (k/2)(d - u), E = 2 (1/2)(k/2)(d - u)^2
    if awk '!/^#/ { u = $1; f = $2; E = $3 } END { k = 3e4; d = 1e-6; wu = k * d / (k + 1e5); wf = k / 2 * (d - wu)
            wE = k / 2 * (d - wu) ^ 2; eu = (u - wu) / wu; ef = (f - wf) / wf; eE = (E - wE) / wE
            if (eu < 0) eu = -eu; if (ef < 0) ef = -ef; if (eE < 0) eE = -eE
            printf "  u %.8g (%.8g), f_low %.8g N (%.8g), spring energy %.8g J (%.8g)\n", u, wu, f, wf, E, wE
            exit !(eu < 1e-5 && ef < 1e-5 && eE < 1e-5) }' "$tmp/spr.dat"; then
        ok "springs: the tip, spring_force and spring-energy probes of the run"
    else bad "springs: probes $(cat "$tmp/spr.dat")"; fi
    if h5dump -a /scene_json "$tmp/spr.h5" 2>/dev/null | grep -q '"rest_length"'; then
        ok "springs: the resolved scene in the HDF5 file lists them (rest_length filled in)"
    else bad "springs: /scene_json has no springs"; fi
else
    bad "springs: run/export: $(head -3 "$tmp/err")"
fi

# 2. bad input: exit 2 with the path named
expect2() { # what, args...
    local what=$1; shift
    "$CL" sensitivity "$@" --quiet </dev/null >/dev/null 2>"$tmp/err"
    local rc=$?
    if [ $rc -eq 2 ]; then ok "exit 2: $what ($(head -1 "$tmp/err" | cut -c1-110))"; else bad "$what: rc=$rc $(head -2 "$tmp/err")"; fi
}
expect2 "no --param" "$scene"
expect2 "a material constant" "$scene" --param bodies.0.material.E
expect2 "no such load" "$scene" --param bodies.0.loads.3.force.x
expect2 "a dynamic scene" "$scene" --param "$P" --set time.integrator=implicit_euler
expect2 "--steps" "$scene" --param "$P" --steps 1

echo "cli_sensitivity: $pass passed, $fail failed"
[ $fail -eq 0 ]
