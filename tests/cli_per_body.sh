#!/usr/bin/env bash
# Per-body contact parameters end to end (lcp_pgs marks c, w, eta, r, p0 as CT_PARAM_PER_BODY):
# `contactlab models` marks them, --set reaches a body's "contact" object, and the physics of
# tests/data/scenes/run/per_body_ceiling.json, where three 0.1 m cubes (ρ = 1000 kg/m³: m = 1 kg,
# top face A = 0.01 m²) hang by adhesion at β0 = 1 (W = 100 J/m²: no debonding):
#   soft_glue   (C = 1e6 N/m³) under the ceiling half-space: gap m g/(A C) + δ
#   stiff_glue  (C = 4e6 N/m³) under the ceiling half-space: gap m g/(A C) + δ, a quarter of it
#   under_plate (C = 4e6) under a kinematic plate with C = 1e6: the pair takes the smaller C, so it
#               hangs at the soft gap, not the stiff one
# with δ the contact thickness (auto: 1e-3 × margin = 1e-6 m). All three start at a gap of 0.5 mm
# and must settle (implicit Euler damps the oscillation: 60 steps of 5 ms) within 3 % of their gap;
# the gaps are the mean of the last 10 steps.
set -u
cd "$(dirname "$0")/.."
CL=${CT_BUILD:-build}/contactlab
scene=tests/data/scenes/run/per_body_ceiling.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0; fail=0
ok() { echo "ok    $1"; pass=$((pass + 1)); }
bad() { echo "FAIL  $1"; fail=$((fail + 1)); }

# 1. `contactlab models` marks the per-body parameters of lcp_pgs (and not mu)
"$CL" models > "$tmp/models.txt" 2>&1
c_line=$(awk '/^lcp_pgs/ {m = 1} m && $1 == "c" {print; exit}' "$tmp/models.txt")
mu_line=$(awk '/^lcp_pgs/ {m = 1} m && $1 == "mu" {print; exit}' "$tmp/models.txt")
case "$c_line" in *"(per body)"*) ok "models: lcp_pgs c is marked (per body)" ;; *) bad "models: c line: $c_line" ;; esac
case "$mu_line" in *"(per body)"*) bad "models: mu marked per body: $mu_line" ;; "") bad "models: no mu line" ;;
    *) ok "models: lcp_pgs mu is not per body" ;; esac

# 2. --set on a body's contact object: accepted and in the resolved scene; a bad one is exit 2
"$CL" check "$scene" --set bodies.1.contact.w=7.5 </dev/null > "$tmp/res.json" 2>"$tmp/err"
rc=$?
if [ $rc -eq 0 ] && tr -d ' \n' < "$tmp/res.json" | grep -q '"contact":{"c":4e6,"w":7.5}'; then
    ok "--set bodies.1.contact.w=7.5: in the resolved scene"
else bad "--set bodies.1.contact.w: rc=$rc $(head -3 "$tmp/err")"; fi
"$CL" check "$scene" --set bodies.1.contact.mu=0.5 </dev/null >/dev/null 2>"$tmp/err"
rc=$?
if [ $rc -eq 2 ] && grep -q '/bodies/1/contact/mu: not a per-body parameter of lcp_pgs' "$tmp/err"; then
    ok "--set bodies.1.contact.mu: exit 2, not a per-body parameter"
else bad "--set bodies.1.contact.mu: rc=$rc $(head -3 "$tmp/err")"; fi

# 3. the physics
if ! "$CL" run "$scene" --quiet --threads 1 -o "$tmp/run.h5" </dev/null 2>"$tmp/err"; then
    bad "run: $(head -3 "$tmp/err")"
else
    "$CL" export "$tmp/run.h5" /probes/top_soft /probes/top_stiff /probes/top_under > "$tmp/gaps.dat" 2>/dev/null
    # expected gaps by hand: m g/(A C) + δ, m = 1000 * 0.1^3 kg, A = 0.1^2 m², g = 9.81 m/s², δ = 1e-6 m;
    # measured: the ceiling is y = 0, the plate's underside y = -0.32
    awk -v ok=0 '
        !/^#/ { n++; y[n % 10, 1] = $1; y[n % 10, 2] = $2; y[n % 10, 3] = $3 }
        END {
            m = 1000 * 0.1^3; A = 0.1^2; g = 9.81; d = 1e-6
            want[1] = m * g / (A * 1e6) + d; want[2] = m * g / (A * 4e6) + d; want[3] = m * g / (A * 1e6) + d
            name[1] = "soft_glue (C = 1e6) under the ceiling"; name[2] = "stiff_glue (C = 4e6) under the ceiling"
            name[3] = "under_plate (C = 4e6) under a plate with C = 1e6 (pair: the smaller)"
            for (k = 1; k <= 3; ++k) {
                s = 0; for (i = 0; i < 10; ++i) s += y[i, k]
                gap = (k == 3 ? -0.32 : 0) - s / 10
                rel = gap / want[k] - 1
                printf "%s %s: gap %.6e m, m g/(A C) + δ = %.6e m (%+.2f %%)\n",
                       (rel < 0.03 && rel > -0.03) ? "ok  " : "FAIL", name[k], gap, want[k], 100 * rel
            }
        }' "$tmp/gaps.dat" > "$tmp/res.txt"
    while read -r st rest; do
        if [ "$st" = ok ]; then ok "$rest"; else bad "$rest"; fi
    done < "$tmp/res.txt"
    [ "$(wc -l < "$tmp/res.txt")" = 3 ] || bad "gaps: $(cat "$tmp/gaps.dat" | head -3)"
fi
echo "cli_per_body: $pass passed, $fail failed"
[ $fail -eq 0 ]
