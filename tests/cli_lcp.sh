#!/usr/bin/env bash
# lcp_pgs end to end: bonding under compression with friction (Gascón et al. 2010 §5.3: "in case of
# normal compression, we compute the tangential adhesive traction"; friction does not debond).
# tests/data/scenes/run/lcp_bonding_floor.json: a 2D square, 0.1 m, one cell (two bottom contacts of
# length L/2 each), ρ = 1000 kg/m³ (m = 10 kg per m of depth), resting on a floor half-space with
# μ = 1, pushed sideways by F = 2 N/m < μ m g (it sticks: friction carries F), β0 = 0, bonding rate
# r = 1e-3 /(Pa s), saturation p0 = 1962 Pa. Each contact's β follows the explicit Euler recursion of
# eq. 11, β_{n+1} = β_n + h r (p_i − β_n p0), towards p_i/p0; the push's moment makes the two p_i
# differ, but their mean is m g/L = 981 Pa (Σλ_n = m g h, equal areas), and the recursion is linear
# in p_i, so the mean β after n steps is (m g/(L p0)) (1 − (1 − h r p0)^n), computed here.
# Also: the tangential force is friction (−F), none of it tangential adhesion, and the square stays.
set -u
cd "$(dirname "$0")/.."
CL=${CT_BUILD:-build}/contactlab
scene=tests/data/scenes/run/lcp_bonding_floor.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "ok    $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }

if ! "$CL" run "$scene" --quiet --threads 1 -o "$tmp/run.h5" </dev/null 2>"$tmp/err"; then
    bad "run: $(head -3 "$tmp/err")"
else
    "$CL" export "$tmp/run.h5" /model/lcp_pgs/beta_mean /probes/friction /probes/adhesion_t /probes/x > "$tmp/s.dat" 2>/dev/null
    awk '
        !/^#/ { n++; b = $1; fr = $2; if ($3 > at) at = $3; if (-$3 > at) at = -$3; if (n == 1) x0 = $4; x = $4 }
        END {
            h = 0.005; r = 1e-3; p0 = 1962; m = 1000 * 0.1 * 0.1; g = 9.81; L = 0.1; F = 2
            want = m * g / (L * p0) * (1 - (1 - h * r * p0) ^ n)
            rel = b / want - 1
            printf "%s mean beta after %d steps %.8f, closed form %.8f (%+.2e)\n", (rel < 1e-4 && rel > -1e-4) ? "ok  " : "FAIL", n, b, want, rel
            printf "%s friction force %.9f N/m = -F (%g)\n", (fr + F < 1e-6 * F && fr + F > -1e-6 * F) ? "ok  " : "FAIL", fr, -F
            printf "%s tangential adhesion force 0 in every step (max |.| %g)\n", at == 0 ? "ok  " : "FAIL", at
            printf "%s the square sticks: moved %.3e m\n", (x - x0 < 1e-6 && x0 - x < 1e-6) ? "ok  " : "FAIL", x - x0
        }' "$tmp/s.dat" > "$tmp/res.txt"
    while read -r st rest; do
        if [ "$st" = ok ]; then ok "$rest"; else bad "$rest"; fi
    done < "$tmp/res.txt"
    [ "$(wc -l < "$tmp/res.txt")" = 4 ] || bad "export: $(head -3 "$tmp/s.dat")"
fi
echo "cli_lcp: $pass passed, $fail failed"
[ $fail -eq 0 ]
