/* ct_candidate_cache.h — proximity candidates reused while the surface moves little, and the
 * collision sets built from them (DESIGN §3, issue 3).
 *
 * A model evaluates its contact energy at many x per time step (Newton iterates, line-search
 * trials), mostly close to each other. The cache queries the broad phase at some x_q with boxes
 * inflated by reach + m (reach: the largest distance at which the model's energy acts, its d̂;
 * m: a margin) and reuses the candidates at every x where no surface vertex has moved more than
 * m/2 from x_q: a distance changes by at most twice the largest displacement, so every pair
 * within reach at x is still a candidate. Extra candidates are filtered by the set construction
 * (it keeps d < d̂), and the lists are sorted, so a collision set built from the cache is the same,
 * term for term and bit for bit, as one built from a new query.
 *
 * The first set built after a query also marks the candidates nearer than reach + m at x_q
 * (ct_collision_set_build_near); the later sets from the same query read only those (the same
 * sets, less work). A step-size query (ct_stepsize.h) may filter the cached candidates by swept
 * boxes instead of querying the swept boxes again, when the whole sweep stays within the margin
 * (ct_candidate_cache_covers_sweep).
 *
 * m = 0 turns the reuse off: a query at every new x (and no near marking).
 * layer: contact */
#ifndef CT_CANDIDATE_CACHE_H
#define CT_CANDIDATE_CACHE_H

#include "ct_broadphase.h"
#include "ct_collisions.h"
#include "ct_mesh.h"
#include "ct_obstacle.h"
#include "ct_status.h"

#include <stddef.h>

typedef struct ct_candidate_cache {
    int dim;
    size_t nxd;          /* coordinates of x: nv·dim */
    double reach;        /* the distance every candidate set must cover (m) */
    double margin;       /* m ≥ 0 (m) */
    ct_candidates all;   /* queried at x_q with boxes inflated by reach + margin */
    ct_candidates near;  /* those nearer than reach + margin at x_near (valid when near_valid) */
    double *x_q;         /* nv·dim: where `all` was queried (valid when `valid`) */
    double *x_near;      /* nv·dim: where `near` was marked, the first set built after the query
                            (x_q for a caller that builds it at the x it updated the cache at) */
    int valid, near_valid;
    int fresh;           /* queried, and no set built from the query yet */
    long n_queries;      /* proximity queries since the last reset (the caller may set it to 0) */
} ct_candidate_cache;

/* An empty cache for positions of nv vertices in dim dimensions (nothing valid yet); reach > 0,
 * margin >= 0. ct_candidate_cache_free is safe on a zeroed or failed cache. */
ct_status ct_candidate_cache_init(ct_candidate_cache *cc, int dim, int nv, double reach, double margin);
void ct_candidate_cache_free(ct_candidate_cache *cc);

/* Whether the cached candidates hold every pair of s within reach at x: every surface vertex is
 * within margin/2 of x_q (0 if nothing is cached). */
int ct_candidate_cache_covers(const ct_candidate_cache *cc, const ct_surface *s, const double *x);

/* Make the cache cover x: a new proximity query at x (boxes inflated by reach + margin, the
 * movable mask and thread count of ct_broadphase_proximity) unless ct_candidate_cache_covers.
 * *queried (may be NULL) tells whether it queried. On failure nothing is cached. */
ct_status ct_candidate_cache_update(ct_candidate_cache *cc, const ct_surface *s, const double *x,
                                    const unsigned char *movable, int threads, int *queried);

/* The collision set at x (ct_collision_set_build with the cached candidates; o->dhat must not
 * exceed reach). Call after ct_candidate_cache_update at the same x. The first set after a query
 * marks the near candidates (threshold (reach + margin)(1 + 10⁻⁶): room for the round-off of the
 * distances), the later ones are built from them. */
ct_status ct_candidate_cache_collisions(ct_candidate_cache *cc, ct_collision_set *cs, const ct_contact_mesh *cm,
                                        const ct_obstacle *obs, int nobs, const double *x,
                                        const ct_colset_opts *o);

/* Whether the sweep x → x + dx of the surface's vertices stays within the cached candidates:
 * every surface vertex's |x − x_q| + |dx| is at most 0.49 (reach + margin) (< half of the
 * inflation: room for rounding). Then two primitives whose swept boxes overlap had boxes at x_q
 * within reach + margin of each other, so the pair is a cached candidate. 0 if nothing is cached
 * or margin = 0. */
int ct_candidate_cache_covers_sweep(const ct_candidate_cache *cc, const ct_surface *s, const double *x,
                                    const double *dx);

#endif
