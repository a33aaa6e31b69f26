/* stepsize.c — the collision-free step size (see ct_stepsize.h): swept candidates (a swept-box
 * query, or the proximity candidates of a cache filtered by swept boxes), additive CCD on each,
 * half-spaces in closed form.
 */
#include "contactlab/ct_stepsize.h"

#include "contactlab/ct_parallel.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void ct_stepsize_init(ct_stepsize *ws)
{
    memset(ws, 0, sizeof *ws);
    ct_candidates_init(&ws->swept);
}

void ct_stepsize_free(ct_stepsize *ws)
{
    ct_candidates_free(&ws->swept);
    free(ws->box);
    memset(ws, 0, sizeof *ws);
}

/* ---------------------------------------------------------------- swept candidates from a cache */

/* Swept boxes (of x -> x + dx, bounds widened by two ulps outward, as core/contact/broadphase.c)
 * of the surface's vertices, edges and faces, computed once per call: a primitive's box is the
 * union of its vertices' unwidened boxes (in stencil order: the same comparisons as taking the
 * bounds vertex by vertex), then widened. Layout: lo[dim] hi[dim] per box; vertex v at box v,
 * edge e at box nv + e, face f at box nv + ned + f. */
static ct_status sweep_boxes(ct_stepsize *ws, const ct_surface *s, const double *x, const double *dx)
{
    const int dim = s->dim, w = 2 * dim;
    const size_t nbox = (size_t)s->nv + (size_t)s->ned + (size_t)(dim == 3 ? s->nf : 0);
    if (nbox * w > ws->box_cap) {
        double *b = realloc(ws->box, nbox * w * sizeof *b);
        if (!b) return CT_ENOMEM;
        ws->box = b;
        ws->box_cap = nbox * w;
    }
    double *B = ws->box;
    for (int i = 0; i < s->nbv; ++i) { /* unwidened vertex boxes */
        const size_t v = (size_t)s->bverts[i];
        double *lo = B + w * v, *hi = lo + dim;
        for (int c = 0; c < dim; ++c) {
            const double a = x[dim * v + c], e = a + dx[dim * v + c];
            lo[c] = a < e ? a : e; /* not fmin/fmax: libm calls */
            hi[c] = a > e ? a : e;
        }
    }
    const int *prims[2] = {s->edges, s->faces};
    const size_t first[2] = {(size_t)s->nv, (size_t)s->nv + (size_t)s->ned};
    const int count[2] = {s->ned, dim == 3 ? s->nf : 0}, nvp[2] = {2, 3};
    for (int t = 0; t < 2; ++t)
        for (int p = 0; p < count[t]; ++p) {
            double *lo = B + w * (first[t] + (size_t)p), *hi = lo + dim;
            for (int c = 0; c < dim; ++c) lo[c] = HUGE_VAL, hi[c] = -HUGE_VAL;
            for (int k = 0; k < nvp[t]; ++k) {
                const double *vl = B + w * (size_t)prims[t][nvp[t] * p + k], *vh = vl + dim;
                for (int c = 0; c < dim; ++c) {
                    lo[c] = vl[c] < lo[c] ? vl[c] : lo[c];
                    hi[c] = vh[c] > hi[c] ? vh[c] : hi[c];
                }
            }
            for (int c = 0; c < dim; ++c) {
                lo[c] -= 2.0 * DBL_EPSILON * fabs(lo[c]);
                hi[c] += 2.0 * DBL_EPSILON * fabs(hi[c]);
            }
        }
    for (int i = 0; i < s->nbv; ++i) { /* the vertex boxes widened last (the unions read them raw) */
        double *lo = B + w * (size_t)s->bverts[i], *hi = lo + dim;
        for (int c = 0; c < dim; ++c) {
            lo[c] -= 2.0 * DBL_EPSILON * fabs(lo[c]);
            hi[c] += 2.0 * DBL_EPSILON * fabs(hi[c]);
        }
    }
    return CT_OK;
}

static inline int boxes_overlap(int dim, const double *a, const double *b)
{
    for (int c = 0; c < dim; ++c)
        if (!(a[c] <= b[dim + c] && b[c] <= a[dim + c])) return 0;
    return 1;
}

/* The pairs of `in` (one of the cache's candidate lists, `all` or its ordered sublist `near`) whose
 * swept boxes overlap; kind 0 vertex–face, 1 edge–edge, 2 vertex–edge (2D). */
static ct_status filter_swept(const ct_stepsize *ws, const ct_surface *s, const ct_pair_list *in, ct_pair_list *out,
                              int kind)
{
    const int dim = s->dim, w = 2 * dim;
    const double *B = ws->box;
    const size_t off_a = kind == 1 ? (size_t)s->nv : 0;
    const size_t off_b = kind == 0 ? (size_t)s->nv + (size_t)s->ned : (size_t)s->nv;
    out->n = 0;
    if (ct_pair_list_reserve(out, in->n) != CT_OK) return CT_ENOMEM;
    for (long i = 0; i < in->n; ++i) {
        const int a = in->ij[2 * i], b = in->ij[2 * i + 1];
        if (boxes_overlap(dim, B + w * (off_a + (size_t)a), B + w * (off_b + (size_t)b))) {
            out->ij[2 * out->n] = a;
            out->ij[2 * out->n + 1] = b;
            out->n++;
        }
    }
    return CT_OK;
}

/* The cache's proximity candidates whose swept boxes overlap, into ws->swept.
 *
 * The far pairs. A pair outside the cache's near list was at distance >= r = reach + margin at
 * x_near (as its classification computed it), so at x it is at d >= D = r − 2δ, δ the largest
 * displacement of a surface vertex since x_near. Its ACCD rate bound l_p is at most 4M, M the
 * largest |dx| of a surface vertex (each relative displacement dx_i − mean is at most 2M). When
 * (1 − s)(D − ξ) > 4M (1 + 10⁻⁶), ACCD's first advance (1 − s)(d − ξ)/l_p passes t = 1 for every
 * such pair, so it would return the whole interval without a collision: the pairs are left out,
 * and the step is the same. On a Newton step that moves the surface much less than the margin,
 * most swept candidates are such pairs: primitives of one surface whose boxes touch (neighbours
 * in a plane) but which are far apart. */
static ct_status swept_from_cache(ct_stepsize *ws, const ct_surface *s, const ct_candidate_cache *cache,
                                  const double *x, const double *dx, const ct_ccd_opts *ccd, int *far_left)
{
    ct_candidates *cc = &ws->swept;
    const ct_candidates *all = &cache->all;
    *far_left = 0;
    if (cache->near_valid) {
        const int dim = s->dim;
        double d2max = 0.0, m2max = 0.0;
        for (int i = 0; i < s->nbv; ++i) {
            const size_t o = (size_t)s->bverts[i] * (size_t)dim;
            double a = 0.0, b = 0.0;
            for (int k = 0; k < dim; ++k) {
                a += (x[o + k] - cache->x_near[o + k]) * (x[o + k] - cache->x_near[o + k]);
                b += dx[o + k] * dx[o + k];
            }
            d2max = a > d2max ? a : d2max;
            m2max = b > m2max ? b : m2max;
        }
        const ct_ccd_opts o = ct_ccd_opts_resolved(ccd); /* (as ct_accd reads them) */
        const double xi = o.thickness, sf = o.s;
        const double D = (cache->reach + cache->margin) - 2.0 * (1.0 + 1e-6) * sqrt(d2max);
        *far_left = D > xi && (1.0 - sf) * (D - xi) > 4.0 * sqrt(m2max) * (1.0 + 1e-6);
    }
    const ct_candidates *in = *far_left ? &cache->near : all; /* (near: all's pairs in all's order) */
    ct_status r = sweep_boxes(ws, s, x, dx);
    if (r == CT_OK && s->dim == 3) {
        r = filter_swept(ws, s, &in->vf, &cc->vf, 0);
        if (r == CT_OK) r = filter_swept(ws, s, &in->ee, &cc->ee, 1);
    } else if (r == CT_OK) {
        r = filter_swept(ws, s, &in->ve, &cc->ve, 2);
    }
    return r;
}

/* ---------------------------------------------------------------- ACCD and half-spaces */

/* The smallest ACCD time (at most 1) over the pairs of L (kind PT: vertex–face, EE: edge–edge,
 * PE: vertex–edge in 2D). */
static double accd_list(const ct_surface *s, const ct_pair_list *L, ct_ccd_kind kind, const double *x,
                        const double *dx, const ct_ccd_opts *ccd, int threads, long *unresolved)
{
    const int dim = s->dim;
    double lmin = 1.0;
    long nun = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(min : lmin) reduction(+ : nun) num_threads(ct_threads(threads))
    for (long i = 0; i < L->n; ++i) {
        int a = L->ij[2 * i], b = L->ij[2 * i + 1];
        int v[4], n = 0;
        if (kind == CT_CCD_PT) {
            v[0] = a, v[1] = s->faces[3 * b], v[2] = s->faces[3 * b + 1], v[3] = s->faces[3 * b + 2], n = 4;
        } else if (kind == CT_CCD_EE) {
            v[0] = s->edges[2 * a], v[1] = s->edges[2 * a + 1], v[2] = s->edges[2 * b], v[3] = s->edges[2 * b + 1];
            n = 4;
        } else {
            v[0] = a, v[1] = s->edges[2 * b], v[2] = s->edges[2 * b + 1], n = 3;
        }
        double xs[12], ds[12];
        for (int k = 0; k < n; ++k)
            for (int d = 0; d < dim; ++d) {
                xs[dim * k + d] = x[(size_t)dim * v[k] + d];
                ds[dim * k + d] = dx[(size_t)dim * v[k] + d];
            }
        double toi = 1.0;
        int r = ct_accd(kind, dim, xs, ds, fmin(lmin, 1.0), ccd, &toi);
        if (r) lmin = fmin(lmin, toi);
        nun += r == 2;
    }
    *unresolved += nun;
    return fmin(lmin, 1.0);
}

/* amin lowered by the half-spaces: distance n·(x − o) may shrink to the fraction s of itself. */
static double halfspace_step(const ct_surface *s, const unsigned char *movable, const ct_obstacle *obs, int nobs,
                             const double *x, const double *dx, double frac, double amin)
{
    const int dim = s->dim;
    for (int o = 0; o < nobs; ++o) {
        const ct_obstacle *ob = &obs[o];
        for (int k = 0; k < s->nbv; ++k) {
            int v = s->bverts[k];
            if (movable && !movable[v]) continue;
            double d = 0.0, dd = 0.0;
            for (int i = 0; i < dim; ++i) {
                d += ob->normal[i] * (x[(size_t)dim * v + i] - ob->point[i]);
                dd += ob->normal[i] * dx[(size_t)dim * v + i];
            }
            if (dd < 0.0) amin = fmin(amin, (1.0 - frac) * d / -dd);
        }
    }
    return amin;
}

ct_status ct_stepsize_max(ct_stepsize *ws, const ct_surface *s, const unsigned char *movable, const ct_obstacle *obs,
                          int nobs, const ct_candidate_cache *cache, const double *x, const double *dx,
                          const ct_ccd_opts *ccd, int threads, double *alpha, ct_stepsize_info *info)
{
    const ct_ccd_opts def = ct_ccd_default_opts();
    if (!ccd) ccd = &def;
    ct_stepsize_info inf = {0};
    double t0 = now();
    ct_candidates *cc = &ws->swept;
    inf.from_cache = cache && ct_candidate_cache_covers_sweep(cache, s, x, dx);
    ct_status rs = inf.from_cache ? swept_from_cache(ws, s, cache, x, dx, ccd, &inf.far_left)
                                  : ct_broadphase_ccd(s, x, dx, movable, 0.0, threads, cc);
    double t1 = now();
    inf.t_candidates = t1 - t0;
    if (rs != CT_OK) {
        if (info) *info = inf;
        return rs;
    }
    double amin = 1.0;
    if (s->dim == 3) {
        amin = fmin(amin, accd_list(s, &cc->vf, CT_CCD_PT, x, dx, ccd, threads, &inf.n_unresolved));
        amin = fmin(amin, accd_list(s, &cc->ee, CT_CCD_EE, x, dx, ccd, threads, &inf.n_unresolved));
        inf.n_swept = cc->vf.n + cc->ee.n;
    } else {
        amin = fmin(amin, accd_list(s, &cc->ve, CT_CCD_PE, x, dx, ccd, threads, &inf.n_unresolved));
        inf.n_swept = cc->ve.n;
    }
    amin = halfspace_step(s, movable, obs, nobs, x, dx, ccd->s, amin);
    inf.t_ccd = now() - t1;
    if (info) *info = inf;
    *alpha = amin > 0.0 ? amin : 0.0;
    /* a pair that moves too fast for its gap to be resolved within the budget: the step cannot be
     * taken safely in bounded work (a clear failure instead of Newton iterating on ever smaller
     * steps) */
    return inf.n_unresolved ? CT_ENOCONV : CT_OK;
}
