/* fuzz_util.h — what the scene fuzz targets share: a scene text (with --set overrides) through the
 * parser and, when it parses, the simulation's set-up, as `contactlab check` does. Any crash, leak
 * or sanitizer report is a finding; a refused input is the expected outcome. */
#ifndef CT_FUZZ_UTIL_H
#define CT_FUZZ_UTIL_H

#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

static inline void fuzz_check_scene(const char *text, const char *name, const char *dir, const char *const *ov,
                                    int nov)
{
    ct_diag d;
    ct_diag_init(&d);
    d.max_msgs = 64;
    ct_scene sc;
    if (ct_scene_parse(&sc, text, name, dir, ov, nov, &d) == CT_OK) {
        ct_sim *sim = NULL;
        if (ct_sim_create(&sim, &sc, &d) == CT_OK) ct_sim_destroy(sim);
    }
    ct_scene_free(&sc);
    ct_diag_free(&d);
}

#endif
