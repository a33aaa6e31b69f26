/* ct_stepsize.h — the collision-free step size: the largest α ∈ [0, 1] such that the surface
 * moving linearly from x to x + α·dx neither crosses itself nor a half-space obstacle (DESIGN §2:
 * the line search starts from min(1, α); IPC's filtered line search, Li et al. 2020, "Incremental
 * Potential Contact", §4.3 and §5).
 *
 *   1. Swept candidates: the primitive pairs whose swept boxes (of x → x + dx, not inflated)
 *      overlap — vertex–face and edge–edge pairs in 3D, vertex–edge in 2D — from a broad-phase
 *      query of the swept boxes (ct_broadphase_ccd), or, when a ct_candidate_cache covers the
 *      whole sweep (ct_candidate_cache_covers_sweep), by filtering its proximity candidates with
 *      the same swept-box test (same bounds, same two-ulp widening, same closed overlap test as
 *      core/contact/broadphase.c and core/contact/bvh.c): the same sorted list without building
 *      trees, hence the same step.
 *   2. Additive CCD (ct_accd, ct_ccd.h) on every swept candidate, in parallel, each pair's time
 *      bounded by the smallest found so far by its thread (any bound ≥ the final minimum leaves
 *      the minimum unchanged). From a cache, the candidates that were farther than its reach +
 *      margin where it was queried are left out when no motion since then and along dx can bring
 *      one within ACCD's reach of a collision (core/contact/stepsize.c: their ACCD would return
 *      the whole step at its first advance): the same step without their work.
 *   3. Half-spaces in closed form: a movable surface vertex approaching an obstacle, at distance
 *      d = n·(x − o) with rate n·dx < 0, may close the fraction 1 − s of that distance (s the
 *      ACCD stop fraction of the options): α ≤ (1 − s) d / (−n·dx).
 * The result does not depend on the thread count.
 * layer: contact */
#ifndef CT_STEPSIZE_H
#define CT_STEPSIZE_H

#include "ct_broadphase.h"
#include "ct_candidate_cache.h"
#include "ct_ccd.h"
#include "ct_mesh.h"
#include "ct_obstacle.h"
#include "ct_status.h"

#include <stddef.h>

/* Work memory kept between calls (the lists and boxes are reused). */
typedef struct ct_stepsize {
    ct_candidates swept; /* the last call's swept candidates */
    double *box;         /* swept boxes of the cache filter: 2·dim per vertex, edge, face */
    size_t box_cap;
} ct_stepsize;

/* What one call did, for the models' statistics. */
typedef struct ct_stepsize_info {
    double t_candidates; /* s: the swept candidates (broad-phase query or cache filter) */
    double t_ccd;        /* s: ACCD and the half-spaces */
    int from_cache;      /* 1: the candidates were filtered from the cache's */
    int far_left;        /* 1: and the far ones were left out (step 2 above) */
    long n_swept;        /* swept candidate pairs given to ACCD */
    long n_unresolved;   /* pairs whose ACCD ran out of its budget (the call then fails) */
} ct_stepsize_info;

void ct_stepsize_init(ct_stepsize *ws);
void ct_stepsize_free(ct_stepsize *ws);

/* The largest safe α ∈ [0, 1] for the step x → x + α·dx (nv·dim coordinates each) of the surface
 * s against itself and the nobs half-spaces obs. movable: nv flags, 0 for fully prescribed
 * vertices (NULL = all movable; pairs of prescribed vertices only are skipped, as in the broad
 * phase). cache: proximity candidates to reuse when they cover the sweep (NULL: always a
 * swept-box query). ccd: the ACCD options (NULL: defaults; s also sets the half-spaces' fraction).
 * threads: ct_parallel.h. info may be NULL. CT_ENOCONV when the ACCD of a pair ran out of its
 * budget (ccd->max_iters; info->n_unresolved pairs): *alpha is then safe but unresolved, and the
 * step cannot be resolved in bounded work. On other failures *alpha is left unchanged. */
ct_status ct_stepsize_max(ct_stepsize *ws, const ct_surface *s, const unsigned char *movable, const ct_obstacle *obs,
                          int nobs, const ct_candidate_cache *cache, const double *x, const double *dx,
                          const ct_ccd_opts *ccd, int threads, double *alpha, ct_stepsize_info *info);

#endif
