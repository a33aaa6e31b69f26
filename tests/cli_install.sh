#!/usr/bin/env bash
# cli_install.sh — the installed library is usable from outside the tree: `make install` into a
# temporary prefix, then a small program compiled and linked with nothing but
# `pkg-config --cflags --libs contactlab` runs a scene through the public API (ct_scene_parse,
# ct_sim_create, ct_sim_step) and checks implicit Euler free fall against its closed form:
# after n steps of size h from rest, v_n = n g h and u_n = g h² n (n + 1) / 2.
set -u
cd "$(dirname "$0")/.."
BUILD=${CT_BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! make -s install BUILD="$BUILD" PREFIX="$tmp/prefix" > "$tmp/install.log" 2>&1; then
    echo "FAIL  make install PREFIX=$tmp/prefix"; tail -5 "$tmp/install.log"; exit 1
fi
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs contactlab 2>&1) || { echo "FAIL  pkg-config contactlab: $flags"; exit 1; }
cat > "$tmp/fall.c" <<'CEND'
#include <contactlab/ct_scene.h>
#include <contactlab/ct_sim.h>
#include <math.h>
#include <stdio.h>

int main(void)
{
    const char *text =
        "{\"dim\": 3, \"time\": {\"dt\": 0.01, \"duration\": 0.1}, \"gravity\": [0, -9.81, 0],"
        " \"solver\": {\"newton_tol\": 1e-10},"
        " \"bodies\": [{\"name\": \"cube\", \"mesh\": {\"generator\": \"box\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
        "  \"material\": {\"E\": 1e5, \"nu\": 0.3, \"density\": 1000}}]}";
    ct_diag d;
    ct_diag_init(&d);
    ct_scene sc;
    ct_sim *sim = NULL;
    ct_status st = ct_scene_parse(&sc, text, "fall.json", ".", NULL, 0, &d);
    if (st == CT_OK) st = ct_sim_create(&sim, &sc, &d);
    for (int n = 0; st == CT_OK && n < 10; ++n) st = ct_sim_step(sim, &d);
    int ok = 0;
    if (st == CT_OK) {
        double u = 0.0;
        for (int i = 0; i < sim->nx; ++i) u += (sim->x[3 * i + 1] - sim->X[3 * i + 1]) / sim->nx;
        const double g = -9.81, h = 0.01, n = 10, want = g * h * h * n * (n + 1) / 2;
        printf("free fall after %d steps: u_y = %.15g m, closed form %.15g m, relative error %.2e\n", sim->step, u,
               want, fabs(u - want) / fabs(want));
        ok = fabs(u - want) <= 1e-9 * fabs(want);
    } else {
        ct_diag_print(&d, stderr, "fall: ");
    }
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    ct_diag_free(&d);
    return ok ? 0 : 1;
}
CEND
# shellcheck disable=SC2086
if ! cc -std=c17 -Wall -Wextra -Wpedantic "$tmp/fall.c" -o "$tmp/fall" $flags > "$tmp/cc.log" 2>&1; then
    echo "FAIL  cc fall.c \$(pkg-config --cflags --libs contactlab)"; head -20 "$tmp/cc.log"; exit 1
fi
echo "ok    linked with: pkg-config --cflags --libs contactlab"
if OMP_NUM_THREADS=1 "$tmp/fall"; then
    echo "ok    the installed library runs a scene: free fall matches its closed form"
    echo "cli_install: 2 passed, 0 failed"
else
    echo "FAIL  the installed library's free fall"
    echo "cli_install: 1 passed, 1 failed"
    exit 1
fi
