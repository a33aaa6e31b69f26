/* fuzz_util.h — what the scene fuzz targets share: a scene text (with --set overrides) through the
 * parser and, when it parses, the simulation's set-up, as `contactlab check` does. Any crash, leak
 * or sanitizer report is a finding; a refused input is the expected outcome. */
#ifndef CT_FUZZ_UTIL_H
#define CT_FUZZ_UTIL_H

#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

/* Scenes whose generated grids have more elements than this are parsed but not built: their set-up
 * is correct but slower than the fuzzer's per-input timeout (a box of 1 x 99995 x 4 cells, 2.4
 * million tetrahedra, takes a minute and 9 GB to build), so a timeout would report size, not a hang.
 * Building large scenes, and refusing those that do not fit in memory, is tested outside the
 * fuzzer (tests/cli_run.sh, tests/data/scenes/bad/build_*). */
enum { FUZZ_MAX_GRID_ELEMENTS = 50000 }; /* (48,000 tetrahedra: 2.7 s with ASan + UBSan) */

static inline double fuzz_grid_elements(const ct_mesh_spec *m)
{
    if (m->source == CT_MESH_BOX) return 6.0 * m->cells[0] * m->cells[1] * m->cells[2];
    if (m->source == CT_MESH_RECT) return 2.0 * m->cells[0] * m->cells[1];
    return 0.0;
}

static inline void fuzz_check_scene(const char *text, const char *name, const char *dir, const char *const *ov,
                                    int nov)
{
    ct_diag d;
    ct_diag_init(&d);
    d.max_msgs = 64;
    ct_scene sc;
    if (ct_scene_parse(&sc, text, name, dir, ov, nov, &d) == CT_OK) {
        double n = 0.0;
        for (int b = 0; b < sc.nbodies; ++b)
            n += fuzz_grid_elements(&sc.bodies[b].mesh) + fuzz_grid_elements(&sc.bodies[b].coarse);
        ct_sim *sim = NULL;
        if (n <= FUZZ_MAX_GRID_ELEMENTS && ct_sim_create(&sim, &sc, &d) == CT_OK) ct_sim_destroy(sim);
    }
    ct_scene_free(&sc);
    ct_diag_free(&d);
}

#endif
