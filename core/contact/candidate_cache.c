/* candidate_cache.c — proximity candidates reused within a margin, and the collision sets built
 * from them (see ct_candidate_cache.h).
 */
#include "contactlab/ct_candidate_cache.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ct_status ct_candidate_cache_init(ct_candidate_cache *cc, int dim, int nv, double reach, double margin)
{
    memset(cc, 0, sizeof *cc);
    if ((dim != 2 && dim != 3) || nv < 0 || !(reach > 0.0) || !(margin >= 0.0)) return CT_EINPUT;
    cc->dim = dim;
    cc->nxd = (size_t)nv * (size_t)dim;
    cc->reach = reach;
    cc->margin = margin;
    ct_candidates_init(&cc->all);
    ct_candidates_init(&cc->near);
    cc->x_q = malloc((cc->nxd + 1) * sizeof *cc->x_q);
    cc->x_near = malloc((cc->nxd + 1) * sizeof *cc->x_near);
    return cc->x_q && cc->x_near ? CT_OK : CT_ENOMEM;
}

void ct_candidate_cache_free(ct_candidate_cache *cc)
{
    ct_candidates_free(&cc->all);
    ct_candidates_free(&cc->near);
    free(cc->x_q);
    free(cc->x_near);
    memset(cc, 0, sizeof *cc);
}

int ct_candidate_cache_covers(const ct_candidate_cache *cc, const ct_surface *s, const double *x)
{
    if (!cc->valid) return 0;
    const double lim2 = 0.25 * cc->margin * cc->margin;
    const int dim = cc->dim;
    for (int i = 0; i < s->nbv; ++i) {
        const int v = s->bverts[i];
        double d2 = 0.0;
        for (int k = 0; k < dim; ++k) {
            const double d = x[(size_t)v * dim + k] - cc->x_q[(size_t)v * dim + k];
            d2 += d * d;
        }
        if (!(d2 <= lim2)) return 0;
    }
    return 1;
}

ct_status ct_candidate_cache_update(ct_candidate_cache *cc, const ct_surface *s, const double *x,
                                    const unsigned char *movable, int threads, int *queried)
{
    if (queried) *queried = 0;
    if (ct_candidate_cache_covers(cc, s, x)) return CT_OK;
    cc->valid = cc->near_valid = cc->fresh = 0;
    cc->n_queries++;
    ct_status st = ct_broadphase_proximity(s, x, movable, cc->reach + cc->margin, threads, &cc->all);
    if (st != CT_OK) return st;
    memcpy(cc->x_q, x, cc->nxd * sizeof *x);
    cc->valid = cc->fresh = 1;
    if (queried) *queried = 1;
    return CT_OK;
}

ct_status ct_candidate_cache_collisions(ct_candidate_cache *cc, ct_collision_set *cs, const ct_contact_mesh *cm,
                                        const ct_obstacle *obs, int nobs, const double *x,
                                        const ct_colset_opts *o)
{
    if (!cc->valid) return CT_EINPUT;
    if (cc->fresh && cc->margin > 0.0) {
        cc->fresh = 0;
        /* reach + m, widened by 1e-6 relative: room for the round-off of the distances */
        ct_status st = ct_collision_set_build_near(cs, cm, &cc->all, obs, nobs, x, o,
                                                   (cc->reach + cc->margin) * (1.0 + 1e-6), &cc->near);
        cc->near_valid = st == CT_OK;
        if (cc->near_valid) memcpy(cc->x_near, x, cc->nxd * sizeof *x);
        return st;
    }
    cc->fresh = 0;
    return ct_collision_set_build(cs, cm, cc->near_valid ? &cc->near : &cc->all, obs, nobs, x, o);
}

int ct_candidate_cache_covers_sweep(const ct_candidate_cache *cc, const ct_surface *s, const double *x,
                                    const double *dx)
{
    if (!cc->valid || !(cc->margin > 0.0)) return 0; /* margin = 0: always a new query */
    const double lim = 0.49 * (cc->reach + cc->margin); /* < r/2: room for rounding */
    const int dim = cc->dim;
    for (int i = 0; i < s->nbv; ++i) {
        const size_t v = (size_t)s->bverts[i] * (size_t)dim;
        double a = 0.0, b = 0.0;
        for (int k = 0; k < dim; ++k) {
            a += (x[v + k] - cc->x_q[v + k]) * (x[v + k] - cc->x_q[v + k]);
            b += dx[v + k] * dx[v + k];
        }
        if (!(sqrt(a) + sqrt(b) <= lim)) return 0;
    }
    return 1;
}
