/* broadphase.c — contact candidates of a surface from BVHs over inflated AABBs (DESIGN §3).
 *
 * 3D: vertex–face (boundary vertex tree against face tree) and edge–edge (self query on the
 * edge tree); 2D: vertex–edge (boundary vertex tree against boundary-segment tree). This is
 * the usual IPC broad phase (Li et al., "Incremental Potential Contact", 2020, §4 and
 * supplement: AABBs of primitives inflated by the activation distance; for CCD the AABB of
 * the primitive's linear trajectory x -> x + dx).
 *
 * Inflation, chosen so that every pair at true distance <= inflate is a candidate:
 *   vertex–face / vertex–edge: the vertex box is inflated by `inflate`, the face/edge box is
 *     not. If |p - q| <= inflate with q on the face, then q lies in the face box and p is
 *     within `inflate` of it in every coordinate, so the boxes overlap.
 *   edge–edge (one tree queried against itself): every edge box is inflated by inflate/2, so
 *     two boxes whose points are within `inflate` in every coordinate overlap.
 * CCD: the same radii around the union of the boxes at x and x + dx; at any time t of the
 * linear motion the primitive lies in that union, so a pair that comes within `inflate` at
 * some t is a candidate. All box bounds are widened outward by two ulps of the coordinate so
 * that rounding never drops a pair exactly at the threshold.
 *
 * Trees are rebuilt at every call over the arrays of the previous call (kept in
 * ct_candidates.work, so a candidate list reused from iteration to iteration allocates nothing
 * once grown); the build is a Morton sort and a linear pass (ct_bvh.h), about a millisecond per
 * 10^4 primitives (tests/check_bvh.c prints timings).
 */
#include "contactlab/ct_broadphase.h"

#include "contactlab/ct_distance.h"
#include "contactlab/ct_parallel.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a query keeps for the next one: a tree per primitive kind (rebuilt at every call over
 * the same arrays), the box scratch and the per-thread lists of the parallel queries. */
struct ct_broadphase_work {
    ct_bvh tv, tp, te; /* vertices; faces (3D) or segments (2D); edges (3D) */
    double *boxes;
    size_t cap;        /* doubles in boxes */
    ct_bvh_scratch qs;
};

static void work_free(ct_broadphase_work *w)
{
    if (!w) return;
    ct_bvh_free(&w->tv);
    ct_bvh_free(&w->tp);
    ct_bvh_free(&w->te);
    free(w->boxes);
    ct_bvh_scratch_free(&w->qs);
    free(w);
}

void ct_candidates_init(ct_candidates *c)
{
    ct_pair_list_init(&c->vf);
    ct_pair_list_init(&c->ee);
    ct_pair_list_init(&c->ve);
    c->work = NULL;
}

void ct_candidates_clear(ct_candidates *c)
{
    c->vf.n = 0;
    c->ee.n = 0;
    c->ve.n = 0;
}

void ct_candidates_free(ct_candidates *c)
{
    if (!c) return;
    ct_pair_list_free(&c->vf);
    ct_pair_list_free(&c->ee);
    ct_pair_list_free(&c->ve);
    work_free(c->work);
    c->work = NULL;
}

/* ---------------------------------------------------------------- boxes */

/* Box of each primitive (nvp vertices listed in verts, stride nvp): bounds of its vertices
 * at x (and at x + dx if dx != NULL), widened by r plus two ulps outward. Layout as ct_bvh. */
static void prim_boxes(int d, const double *x, const double *dx, const int *verts, int nvp,
                       int nprim, double r, int nt, double *boxes)
{
#pragma omp parallel for schedule(static) num_threads(nt) if (nprim > 50000)
    for (int p = 0; p < nprim; ++p) {
        double *lo = boxes + 2 * (size_t)d * (size_t)p, *hi = lo + d;
        for (int c = 0; c < d; ++c) lo[c] = HUGE_VAL, hi[c] = -HUGE_VAL;
        for (int k = 0; k < nvp; ++k) {
            const size_t v = (size_t)verts[(size_t)nvp * (size_t)p + (size_t)k];
            for (int c = 0; c < d; ++c) {
                double a = x[(size_t)d * v + (size_t)c];
                lo[c] = a < lo[c] ? a : lo[c];
                hi[c] = a > hi[c] ? a : hi[c];
                if (dx) {
                    double e = a + dx[(size_t)d * v + (size_t)c];
                    lo[c] = e < lo[c] ? e : lo[c];
                    hi[c] = e > hi[c] ? e : hi[c];
                }
            }
        }
        for (int c = 0; c < d; ++c) {
            double l = lo[c] - r, h = hi[c] + r;
            lo[c] = l - 2.0 * DBL_EPSILON * fabs(l);
            hi[c] = h + 2.0 * DBL_EPSILON * fabs(h);
        }
    }
}

/* ---------------------------------------------------------------- filters */

typedef struct filt_ctx {
    const ct_surface *s;
    const unsigned char *movable; /* NULL: all movable */
} filt_ctx;

/* vertex (position k in bverts) against a primitive of nvp vertices */
static inline int vert_prim_keep(const filt_ctx *c, int v, const int *pv, int nvp)
{
    for (int k = 0; k < nvp; ++k)
        if (pv[k] == v) return 0; /* shares a vertex */
    if (!c->movable || c->movable[v]) return 1;
    for (int k = 0; k < nvp; ++k)
        if (c->movable[pv[k]]) return 1;
    return 0; /* every vertex kinematic */
}

static int vf_filter(int k, int f, void *ctx)
{
    const filt_ctx *c = ctx;
    return vert_prim_keep(c, c->s->bverts[k], c->s->faces + 3 * (size_t)f, 3);
}

static int ve_filter(int k, int e, void *ctx)
{
    const filt_ctx *c = ctx;
    return vert_prim_keep(c, c->s->bverts[k], c->s->edges + 2 * (size_t)e, 2);
}

static int ee_filter(int e1, int e2, void *ctx)
{
    const filt_ctx *c = ctx;
    const int *a = c->s->edges + 2 * (size_t)e1, *b = c->s->edges + 2 * (size_t)e2;
    if (a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1]) return 0;
    const unsigned char *m = c->movable;
    return !m || m[a[0]] || m[a[1]] || m[b[0]] || m[b[1]];
}

/* ---------------------------------------------------------------- queries */

static int surface_ok(const ct_surface *s)
{
    if (!s || (s->dim != 2 && s->dim != 3) || s->nv < 0 || s->nbv < 0 || s->ned < 0 || s->nf < 0)
        return 0;
    if ((s->nbv && !s->bverts) || (s->ned && !s->edges) || (s->dim == 3 && s->nf && !s->faces))
        return 0;
    return 1;
}

/* Build a tree over the boxes of nprim primitives. */
static ct_status tree_of(ct_bvh *t, ct_broadphase_work *w, const ct_surface *s, const double *x, const double *dx,
                         const int *verts, int nvp, int nprim, double r, int nt)
{
    const int d = s->dim;
    const size_t need = (size_t)(nprim > 0 ? nprim : 1) * 2 * (size_t)d;
    if (need > w->cap) {
        free(w->boxes);
        w->boxes = malloc(need * sizeof *w->boxes);
        w->cap = w->boxes ? need : 0;
        if (!w->boxes) return CT_ENOMEM;
    }
    prim_boxes(d, x, dx, verts, nvp, nprim, r, nt, w->boxes);
    return ct_bvh_build_threads(t, d, nprim, w->boxes, nt);
}

static ct_status broadphase(const ct_surface *s, const double *x, const double *dx,
                            const unsigned char *movable, double inflate, int threads,
                            ct_candidates *out)
{
    if (!surface_ok(s) || !x || !out || !isfinite(inflate) || inflate < 0.0) return CT_EINPUT;
    ct_candidates_clear(out);
    if (!out->work) {
        out->work = calloc(1, sizeof *out->work); /* zero: empty trees and lists (their init) */
        if (!out->work) return CT_ENOMEM;
    }
    ct_broadphase_work *w = out->work;
    const int nt = ct_threads(threads);
    filt_ctx fc = {s, movable};
    ct_status st;
    if (s->dim == 3) {
        /* vertex–face: vertices inflated by `inflate`, faces not */
        st = tree_of(&w->tv, w, s, x, dx, s->bverts, 1, s->nbv, inflate, nt);
        if (st == CT_OK) st = tree_of(&w->tp, w, s, x, dx, s->faces, 3, s->nf, 0.0, nt);
        if (st == CT_OK) st = ct_bvh_pairs_with(&w->tv, &w->tp, vf_filter, &fc, threads, &out->vf, &w->qs);
        /* edge–edge: self query, every edge inflated by inflate/2 */
        if (st == CT_OK) st = tree_of(&w->te, w, s, x, dx, s->edges, 2, s->ned, 0.5 * inflate, nt);
        if (st == CT_OK) st = ct_bvh_pairs_with(&w->te, &w->te, ee_filter, &fc, threads, &out->ee, &w->qs);
        if (st == CT_OK)
            for (long m = 0; m < out->vf.n; ++m) out->vf.ij[2 * m] = s->bverts[out->vf.ij[2 * m]];
    } else {
        /* vertex–edge: vertices inflated by `inflate`, boundary segments not */
        st = tree_of(&w->tv, w, s, x, dx, s->bverts, 1, s->nbv, inflate, nt);
        if (st == CT_OK) st = tree_of(&w->tp, w, s, x, dx, s->edges, 2, s->ned, 0.0, nt);
        if (st == CT_OK) st = ct_bvh_pairs_with(&w->tv, &w->tp, ve_filter, &fc, threads, &out->ve, &w->qs);
        if (st == CT_OK)
            for (long m = 0; m < out->ve.n; ++m) out->ve.ij[2 * m] = s->bverts[out->ve.ij[2 * m]];
    }
    /* bverts is increasing, so mapping the first index keeps the (vertex, primitive) order */
    if (st != CT_OK) ct_candidates_clear(out);
    return st;
}

ct_status ct_broadphase_proximity(const ct_surface *s, const double *x,
                                  const unsigned char *movable, double inflate, int threads,
                                  ct_candidates *out)
{
    return broadphase(s, x, NULL, movable, inflate, threads, out);
}

ct_status ct_broadphase_ccd(const ct_surface *s, const double *x, const double *dx,
                            const unsigned char *movable, double inflate, int threads,
                            ct_candidates *out)
{
    if (!dx) return CT_EINPUT;
    return broadphase(s, x, dx, movable, inflate, threads, out);
}

/* The nearest same-part pair among the candidates c, nearer than r (ct_broadphase_self_closest). */
static void self_closest_of(const ct_surface *s, const double *x, const int *part, const ct_candidates *c, double r,
                            ct_self_closest *out)
{
    const int dim = s->dim;
    double best = r * r;
    /* vertex–face (3D) or vertex–edge (2D): the candidate lists hold no pair sharing a vertex */
    const ct_pair_list *L = dim == 3 ? &c->vf : &c->ve;
    for (long i = 0; i < L->n; ++i) {
        const int v = L->ij[2 * i], q = L->ij[2 * i + 1];
        const int *pv = dim == 3 ? s->faces + 3 * (size_t)q : s->edges + 2 * (size_t)q;
        if (part[pv[0]] != part[v]) continue;
        double d2;
        if (dim == 3)
            ct_pt_classify_d2(x + 3 * (size_t)v, x + 3 * (size_t)pv[0], x + 3 * (size_t)pv[1], x + 3 * (size_t)pv[2],
                              &d2);
        else
            ct_pe_classify_d2(2, x + 2 * (size_t)v, x + 2 * (size_t)pv[0], x + 2 * (size_t)pv[1], &d2);
        if (d2 < best) {
            best = d2;
            *out = (ct_self_closest){dim == 3 ? CT_SELF_VF : CT_SELF_VE, v, q, part[v], sqrt(d2)};
        }
    }
    for (long i = 0; dim == 3 && i < c->ee.n; ++i) {
        const int *ea = s->edges + 2 * (size_t)c->ee.ij[2 * i], *eb = s->edges + 2 * (size_t)c->ee.ij[2 * i + 1];
        if (part[ea[0]] != part[eb[0]]) continue;
        double d2;
        ct_ee_classify_d2(x + 3 * (size_t)ea[0], x + 3 * (size_t)ea[1], x + 3 * (size_t)eb[0], x + 3 * (size_t)eb[1],
                          &d2, NULL, NULL);
        if (d2 < best) {
            best = d2;
            *out = (ct_self_closest){CT_SELF_EE, c->ee.ij[2 * i], c->ee.ij[2 * i + 1], part[ea[0]], sqrt(d2)};
        }
    }
}

ct_status ct_broadphase_self_closest(const ct_surface *s, const double *x, const int *part,
                                     const unsigned char *movable, double within, int threads,
                                     ct_self_closest *out)
{
    *out = (ct_self_closest){CT_SELF_NONE, -1, -1, -1, INFINITY};
    if (!part || !(within > 0.0)) return CT_EINPUT;
    /* A query within `within` may find a huge number of pairs when the surface is much finer than
     * that (every vertex against every face within it). So query first within a bound of the
     * nearest pair's distance: a vertex v of a face (v, u, w) is at most d(v, uw) from the face on
     * the other side of uw, which does not contain v (3D; 2D: v of a segment (v, u) is at most
     * |v − u| from the next segment at u). That bound holds where the surface is closed; if the
     * first query finds no pair of one part, a second one within `within` decides. */
    double bound = INFINITY;
    const int dim = s->dim;
    if (dim == 3) {
        for (int f = 0; f < s->nf; ++f) {
            const int *F = s->faces + 3 * (size_t)f;
            if (movable && !movable[F[0]] && !movable[F[1]] && !movable[F[2]]) continue;
            for (int k = 0; k < 3; ++k) {
                double d2;
                const double *v = x + 3 * (size_t)F[k], *u = x + 3 * (size_t)F[(k + 1) % 3],
                             *w = x + 3 * (size_t)F[(k + 2) % 3];
                ct_pe_classify_d2(3, v, u, w, &d2);
                bound = fmin(bound, d2);
            }
        }
    } else {
        for (int e = 0; e < s->ned; ++e) {
            const int *E = s->edges + 2 * (size_t)e;
            if (movable && !movable[E[0]] && !movable[E[1]]) continue;
            bound = fmin(bound, ct_pp_d2(2, x + 2 * (size_t)E[0], x + 2 * (size_t)E[1], NULL, NULL));
        }
    }
    bound = sqrt(bound) * (1.0 + 1e-9);
    ct_candidates c;
    ct_candidates_init(&c);
    ct_status st = CT_OK;
    for (int pass = bound < within ? 0 : 1; pass < 2 && st == CT_OK && out->kind == CT_SELF_NONE; ++pass) {
        const double r = pass == 0 ? bound : within;
        st = ct_broadphase_proximity(s, x, movable, r, threads, &c);
        if (st == CT_OK) self_closest_of(s, x, part, &c, r, out);
    }
    ct_candidates_free(&c);
    return st;
}
