/* intersect.c — exact intersection tests, the verifier of DESIGN §9.
 *
 * Orientation predicates (Shewchuk, "Adaptive Precision Floating-Point Arithmetic and Fast
 * Robust Geometric Predicates", DCG 18, 1997): the determinant is first evaluated in plain
 * floating point and accepted when its magnitude exceeds Shewchuk's a-priori error bound
 * (ccwerrboundA / o3derrboundA times the permanent). Otherwise it is recomputed exactly as a
 * floating-point expansion: products are made exact with TwoProduct (fma) and the terms are
 * accumulated with Grow-Expansion (TwoSum), which keeps the expansion nonoverlapping with
 * increasing magnitudes; the sign of the sum is the sign of its largest (last nonzero)
 * component. When the coordinate differences happen to be exact (TwoSum tails all zero: the
 * usual degenerate case of grid or nearby points) the determinant of the differences is
 * expanded (24 terms in 3D); otherwise the determinant is expanded into products of the input
 * coordinates themselves (96 terms in 3D, 12 in 2D).
 * Exact as long as no product underflows (coordinates far above 1e-70 in magnitude or zero).
 *
 * Segment tests are built on these signs only (no division), closed primitives: touching
 * counts. Degenerate and coplanar configurations are decided in 2D projections: for a set of
 * points whose affine hull is at most a plane, two convex hulls meet in 3D iff their
 * projections meet in all three coordinate planes (at least one projection is injective on
 * the hull, and the projections of meeting sets always meet).
 *
 * The surface verifier runs these tests on the candidate pairs of a BVH box query (ct_bvh.h):
 * 3D edges against faces, 2D segments against segments, skipping pairs that share a vertex.
 *
 * This file needs C's strict evaluation of floating-point expressions (no contraction into
 * fma, no x87 extended precision, no -ffast-math): -std=c17 on x86-64 gives exactly that.
 */
#include "contactlab/ct_intersect.h"

#include "contactlab/ct_bvh.h"
#include "contactlab/ct_parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ expansion arithmetic */

/* x + y = a + b exactly, x = fl(a + b) (Knuth's TwoSum, no precondition on |a|, |b|). */
static inline void two_sum(double a, double b, double *x, double *y)
{
    double s = a + b;
    double bv = s - a;
    double av = s - bv;
    *x = s;
    *y = (a - av) + (b - bv);
}

/* x + y = a * b exactly, x = fl(a * b) (exact unless the product underflows). */
static inline void two_prod(double a, double b, double *x, double *y)
{
    double p = a * b;
    *x = p;
    *y = fma(a, b, -p);
}

/* Grow-Expansion with zero elimination: h = e + b for a nonoverlapping expansion e of
 * length elen (increasing magnitude). h may alias e. Returns the length of h. */
static int grow_expansion(int elen, const double *e, double b, double *h)
{
    double q = b;
    int hn = 0;
    for (int i = 0; i < elen; ++i) {
        double qn, hh;
        two_sum(q, e[i], &qn, &hh);
        q = qn;
        if (hh != 0.0) h[hn++] = hh;
    }
    if (q != 0.0 || hn == 0) h[hn++] = q;
    return hn;
}

/* Sign of an expansion: the sign of its largest-magnitude component (the last nonzero one). */
static int expansion_sign(int n, const double *e)
{
    for (int i = n - 1; i >= 0; --i)
        if (e[i] != 0.0) return e[i] > 0.0 ? 1 : -1;
    return 0;
}

/* Add sign * p * q * r exactly to the expansion (e, *n): p*q = x + y (TwoProduct), then
 * x*r and y*r are split again, four exact terms. */
static void add_triple(double *e, int *n, double sign, double p, double q, double r)
{
    double x, y, t[4];
    two_prod(p, q, &x, &y);
    two_prod(x, r, &t[0], &t[1]);
    two_prod(y, r, &t[2], &t[3]);
    for (int k = 0; k < 4; ++k)
        if (t[k] != 0.0) *n = grow_expansion(*n, e, sign * t[k], e);
}

/* ------------------------------------------------------------ orientation predicates */

/* Shewchuk's error-bound constants, epsilon = 2^-53 (half an ulp of 1). */
#define CT_EPS 0x1p-53
static const double ccwerrboundA = (3.0 + 16.0 * CT_EPS) * CT_EPS;
static const double o3derrboundA = (7.0 + 56.0 * CT_EPS) * CT_EPS;

/* Exact orient2d: det[[ax ay 1],[bx by 1],[cx cy 1]] expanded into its six products (the
 * ax*ay terms of the difference form cancel). */
static int orient2d_exact(const double *a, const double *b, const double *c)
{
    double e[16];
    int n = 0;
    const double terms[6][3] = {{1.0, a[0], b[1]}, {-1.0, a[0], c[1]}, {-1.0, b[0], a[1]},
                                {1.0, b[0], c[1]}, {1.0, c[0], a[1]},  {-1.0, c[0], b[1]}};
    for (int k = 0; k < 6; ++k) {
        double x, y;
        two_prod(terms[k][1], terms[k][2], &x, &y);
        if (x != 0.0) n = grow_expansion(n, e, terms[k][0] * x, e);
        if (y != 0.0) n = grow_expansion(n, e, terms[k][0] * y, e);
    }
    return expansion_sign(n, e);
}

/* Exact sign of l1*r1 - l2*r2 (four exact product terms). */
static int diff_of_products_sign(double l1, double r1, double l2, double r2)
{
    double e[4] = {0, 0, 0, 0}, x, y;
    int n = 0;
    two_prod(l1, r1, &x, &y);
    if (y != 0.0) n = grow_expansion(n, e, y, e);
    if (x != 0.0) n = grow_expansion(n, e, x, e);
    two_prod(l2, r2, &x, &y);
    if (y != 0.0) n = grow_expansion(n, e, -y, e);
    if (x != 0.0) n = grow_expansion(n, e, -x, e);
    return expansion_sign(n, e);
}

int ct_orient2d(const double *a, const double *b, const double *c)
{
    double l = (b[0] - a[0]) * (c[1] - a[1]);
    double r = (b[1] - a[1]) * (c[0] - a[0]);
    double det = l - r;
    double bound = ccwerrboundA * (fabs(l) + fabs(r));
    if (det > bound) return 1;
    if (-det > bound) return -1;
    /* Differences computed without round-off (the common degenerate case: nearby points,
     * grid coordinates) give the determinant exactly from two exact products. */
    double t[4], dd[4];
    two_sum(b[0], -a[0], &dd[0], &t[0]);
    two_sum(c[1], -a[1], &dd[1], &t[1]);
    two_sum(b[1], -a[1], &dd[2], &t[2]);
    two_sum(c[0], -a[0], &dd[3], &t[3]);
    if (t[0] == 0.0 && t[1] == 0.0 && t[2] == 0.0 && t[3] == 0.0)
        return diff_of_products_sign(dd[0], dd[1], dd[2], dd[3]);
    return orient2d_exact(a, b, c);
}

/* det3(p, q, r) = p · (q × r), accumulated exactly with sign `sg`. */
static void add_det3(double *e, int *n, double sg, const double *p, const double *q, const double *r)
{
    add_triple(e, n, sg, p[0], q[1], r[2]);
    add_triple(e, n, -sg, p[0], q[2], r[1]);
    add_triple(e, n, sg, p[1], q[2], r[0]);
    add_triple(e, n, -sg, p[1], q[0], r[2]);
    add_triple(e, n, sg, p[2], q[0], r[1]);
    add_triple(e, n, -sg, p[2], q[1], r[0]);
}

/* Exact orient3d. With rows (p, 1), det[b-a, c-a, d-a] = -det4[a; b; c; d], and expanding
 * det4 along its column of ones:
 *   det[b-a, c-a, d-a] = det3(b,c,d) - det3(a,c,d) + det3(a,b,d) - det3(a,b,c).
 * 24 triple products of 4 exact terms each: at most 96 components. */
static int orient3d_exact(const double *a, const double *b, const double *c, const double *d)
{
    double e[100];
    int n = 0;
    add_det3(e, &n, 1.0, b, c, d);
    add_det3(e, &n, -1.0, a, c, d);
    add_det3(e, &n, 1.0, a, b, d);
    add_det3(e, &n, -1.0, a, b, c);
    return expansion_sign(n, e);
}

int ct_orient3d(const double *a, const double *b, const double *c, const double *d)
{
    double ux = b[0] - a[0], uy = b[1] - a[1], uz = b[2] - a[2];
    double vx = c[0] - a[0], vy = c[1] - a[1], vz = c[2] - a[2];
    double wx = d[0] - a[0], wy = d[1] - a[1], wz = d[2] - a[2];
    double m1a = vy * wz, m1b = vz * wy; /* u · (v × w), cofactor by cofactor */
    double m2a = vz * wx, m2b = vx * wz;
    double m3a = vx * wy, m3b = vy * wx;
    double det = ux * (m1a - m1b) + uy * (m2a - m2b) + uz * (m3a - m3b);
    double perm = fabs(ux) * (fabs(m1a) + fabs(m1b)) + fabs(uy) * (fabs(m2a) + fabs(m2b)) +
                  fabs(uz) * (fabs(m3a) + fabs(m3b));
    double bound = o3derrboundA * perm;
    if (det > bound) return 1;
    if (-det > bound) return -1;
    /* Exact differences: u · (v × w) from 2×2 minors that are exact 4-term expansions,
     * each scaled exactly by a component of u (24 terms instead of the general 96). */
    double u[3], v[3], w[3], tl[9];
    for (int k = 0; k < 3; ++k) {
        two_sum(b[k], -a[k], &u[k], &tl[k]);
        two_sum(c[k], -a[k], &v[k], &tl[3 + k]);
        two_sum(d[k], -a[k], &w[k], &tl[6 + k]);
    }
    int exact_diff = 1;
    for (int k = 0; k < 9; ++k) exact_diff &= tl[k] == 0.0;
    if (exact_diff) {
        double e[28];
        int n = 0;
        for (int k = 0; k < 3; ++k) {
            const int k1 = (k + 1) % 3, k2 = (k + 2) % 3; /* minor: v_k1 w_k2 - v_k2 w_k1 */
            add_triple(e, &n, 1.0, v[k1], w[k2], u[k]);
            add_triple(e, &n, -1.0, v[k2], w[k1], u[k]);
        }
        return expansion_sign(n, e);
    }
    return orient3d_exact(a, b, c, d);
}

/* ------------------------------------------------------------ 2D tests */

/* Lexicographic (x, then y) comparison: the order along any line, used for collinear sets. */
static int lex_cmp2(const double *p, const double *q)
{
    if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
    if (p[1] != q[1]) return p[1] < q[1] ? -1 : 1;
    return 0;
}

int ct_segments_intersect_2d(const double *a0, const double *a1, const double *b0, const double *b1)
{
    int o1 = ct_orient2d(a0, a1, b0), o2 = ct_orient2d(a0, a1, b1);
    if (o1 * o2 > 0) return 0; /* b strictly on one side of line a */
    int o3 = ct_orient2d(b0, b1, a0), o4 = ct_orient2d(b0, b1, a1);
    if (o3 * o4 > 0) return 0;
    if (o1 || o2 || o3 || o4) return 1; /* a proper or touching crossing */
    /* All four points on one line (or degenerate segments): intervals in lexicographic order
     * along that line overlap iff max(lo) <= min(hi). */
    const double *alo = lex_cmp2(a0, a1) <= 0 ? a0 : a1, *ahi = alo == a0 ? a1 : a0;
    const double *blo = lex_cmp2(b0, b1) <= 0 ? b0 : b1, *bhi = blo == b0 ? b1 : b0;
    const double *lo = lex_cmp2(alo, blo) >= 0 ? alo : blo;
    const double *hi = lex_cmp2(ahi, bhi) <= 0 ? ahi : bhi;
    return lex_cmp2(lo, hi) <= 0;
}

/* Closed point-in-triangle in 2D; the triangle must be nondegenerate (orientation `o` ≠ 0). */
static int point_in_tri_2d(const double *p, const double *t0, const double *t1, const double *t2, int o)
{
    return ct_orient2d(t0, t1, p) * o >= 0 && ct_orient2d(t1, t2, p) * o >= 0 &&
           ct_orient2d(t2, t0, p) * o >= 0;
}

/* Closed segment against closed triangle in 2D (any degeneracy): the triangle is the union
 * of its edges when degenerate; otherwise they meet iff an end point is inside or the
 * segment crosses the boundary. */
static int seg_tri_2d(const double *a0, const double *a1, const double *t0, const double *t1,
                      const double *t2)
{
    int o = ct_orient2d(t0, t1, t2);
    if (o != 0 && (point_in_tri_2d(a0, t0, t1, t2, o) || point_in_tri_2d(a1, t0, t1, t2, o))) return 1;
    return ct_segments_intersect_2d(a0, a1, t0, t1) || ct_segments_intersect_2d(a0, a1, t1, t2) ||
           ct_segments_intersect_2d(a0, a1, t2, t0);
}

/* Projection dropping coordinate k. */
static void drop(const double *p, int k, double *q)
{
    q[0] = p[k == 0 ? 1 : 0];
    q[1] = p[k == 2 ? 1 : 2];
}

/* ------------------------------------------------------------ 3D tests */

/* Closed 3D segments p0–p1 and q0–q1. Noncoplanar segments never meet; coplanar ones meet
 * iff their projections meet in all three coordinate planes (see the file header). */
static int segments_intersect_3d(const double *p0, const double *p1, const double *q0, const double *q1)
{
    if (ct_orient3d(p0, p1, q0, q1) != 0) return 0;
    for (int k = 0; k < 3; ++k) {
        double a[2], b[2], c[2], d[2];
        drop(p0, k, a), drop(p1, k, b), drop(q0, k, c), drop(q1, k, d);
        if (!ct_segments_intersect_2d(a, b, c, d)) return 0;
    }
    return 1;
}

int ct_segment_triangle_intersect(const double *a0, const double *a1, const double *t0, const double *t1,
                                  const double *t2)
{
    int s0 = ct_orient3d(t0, t1, t2, a0), s1 = ct_orient3d(t0, t1, t2, a1);
    if (s0 * s1 > 0) return 0; /* both end points strictly on one side of the plane */
    if (s0 == 0 && s1 == 0) {
        /* Coplanar, or a degenerate triangle (orient3d vanishes for every point). */
        double n[3], p[3][2];
        for (int k = 0; k < 3; ++k) {
            drop(t0, k, p[0]), drop(t1, k, p[1]), drop(t2, k, p[2]);
            n[k] = ct_orient2d(p[0], p[1], p[2]); /* sign of the normal's k-th component */
        }
        if (n[0] == 0 && n[1] == 0 && n[2] == 0) /* collinear triangle: the union of its edges */
            return segments_intersect_3d(a0, a1, t0, t1) || segments_intersect_3d(a0, a1, t1, t2) ||
                   segments_intersect_3d(a0, a1, t2, t0);
        /* Nondegenerate and coplanar: a projection with nonzero normal component is injective
         * on the plane. */
        int k = n[0] != 0 ? 0 : n[1] != 0 ? 1 : 2;
        double q0[2], q1[2], r0[2], r1[2], r2[2];
        drop(a0, k, q0), drop(a1, k, q1), drop(t0, k, r0), drop(t1, k, r1), drop(t2, k, r2);
        return seg_tri_2d(q0, q1, r0, r1, r2);
    }
    /* The segment meets the plane in exactly one point X (s0 ≠ s1, s0·s1 ≤ 0); the triangle is
     * nondegenerate. X is in the closed triangle iff the line a0a1 passes every edge on the
     * same side: the three signed volumes have no two strictly opposite signs. */
    int v0 = ct_orient3d(a0, a1, t0, t1), v1 = ct_orient3d(a0, a1, t1, t2), v2 = ct_orient3d(a0, a1, t2, t0);
    int has_pos = v0 > 0 || v1 > 0 || v2 > 0, has_neg = v0 < 0 || v1 < 0 || v2 < 0;
    return !(has_pos && has_neg);
}

/* ------------------------------------------------------------ surface verifier */

typedef struct surf_ctx {
    const ct_surface *s;
} surf_ctx;

/* Cell vertices: 3D tree a holds edges, tree b faces; 2D both hold segments. */
static int share_vertex(const int *u, int nu, const int *v, int nv)
{
    for (int i = 0; i < nu; ++i)
        for (int j = 0; j < nv; ++j)
            if (u[i] == v[j]) return 1;
    return 0;
}

static int filter_3d(int i, int j, void *ctx)
{
    const ct_surface *s = ((const surf_ctx *)ctx)->s;
    return !share_vertex(s->edges + 2 * (size_t)i, 2, s->faces + 3 * (size_t)j, 3);
}

static int filter_2d(int i, int j, void *ctx)
{
    const ct_surface *s = ((const surf_ctx *)ctx)->s;
    return !share_vertex(s->edges + 2 * (size_t)i, 2, s->edges + 2 * (size_t)j, 2);
}

/* Boxes (lo, hi) of n cells of `nper` vertices each. Exact: min/max introduce no round-off. */
static void cell_boxes(const int *cells, int n, int nper, int dim, const double *x, double *boxes)
{
    for (int c = 0; c < n; ++c) {
        double *lo = boxes + 2 * (size_t)dim * (size_t)c, *hi = lo + dim;
        for (int k = 0; k < dim; ++k) lo[k] = hi[k] = x[(size_t)dim * (size_t)cells[nper * (size_t)c] + k];
        for (int v = 1; v < nper; ++v) {
            const double *p = x + (size_t)dim * (size_t)cells[nper * (size_t)c + v];
            for (int k = 0; k < dim; ++k) {
                if (p[k] < lo[k]) lo[k] = p[k];
                if (p[k] > hi[k]) hi[k] = p[k];
            }
        }
    }
}

long ct_surface_intersections(const ct_surface *s, const double *x, int threads, ct_intersection *out,
                              long cap)
{
    if (!s || !x || (s->dim != 2 && s->dim != 3)) return 0;
    const int dim = s->dim, three = dim == 3;
    const int na = s->ned, nb = three ? s->nf : s->ned;
    if (na <= 0 || nb <= 0) return 0;

    long result = -1;
    ct_bvh ta, tb;
    ct_bvh_init(&ta);
    ct_bvh_init(&tb);
    ct_pair_list pl;
    ct_pair_list_init(&pl);
    unsigned char *hit = NULL;
    double *boxes = malloc(2 * (size_t)dim * (size_t)(na > nb ? na : nb) * sizeof(double));
    if (!boxes) goto done;

    cell_boxes(s->edges, na, 2, dim, x, boxes);
    if (ct_bvh_build(&ta, dim, na, boxes) != CT_OK) goto done;
    if (three) {
        cell_boxes(s->faces, nb, 3, dim, x, boxes);
        if (ct_bvh_build(&tb, dim, nb, boxes) != CT_OK) goto done;
    }
    surf_ctx ctx = {s};
    if (ct_bvh_pairs(&ta, three ? &tb : &ta, three ? filter_3d : filter_2d, &ctx, threads, &pl) != CT_OK)
        goto done;

    /* Exact test of every candidate; flags then a serial compaction keep the order. */
    hit = malloc(pl.n > 0 ? (size_t)pl.n : 1);
    if (!hit) goto done;
    const long np = pl.n;
    const int *ij = pl.ij;
    const int nthr = ct_threads(threads);
#pragma omp parallel for schedule(dynamic, 256) num_threads(nthr) if (np > 4096)
    for (long k = 0; k < np; ++k) {
        const int *e = s->edges + 2 * (size_t)ij[2 * k];
        if (three) {
            const int *f = s->faces + 3 * (size_t)ij[2 * k + 1];
            hit[k] = (unsigned char)ct_segment_triangle_intersect(x + 3 * (size_t)e[0], x + 3 * (size_t)e[1],
                                                                  x + 3 * (size_t)f[0], x + 3 * (size_t)f[1],
                                                                  x + 3 * (size_t)f[2]);
        } else {
            const int *g = s->edges + 2 * (size_t)ij[2 * k + 1];
            hit[k] = (unsigned char)ct_segments_intersect_2d(x + 2 * (size_t)e[0], x + 2 * (size_t)e[1],
                                                             x + 2 * (size_t)g[0], x + 2 * (size_t)g[1]);
        }
    }
    long count = 0;
    for (long k = 0; k < np; ++k) {
        if (!hit[k]) continue;
        if (out && count < cap) {
            out[count].a = ij[2 * k];
            out[count].b = ij[2 * k + 1];
        }
        ++count;
    }
    result = count;

done:
    free(hit);
    free(boxes);
    ct_pair_list_free(&pl);
    ct_bvh_free(&ta);
    ct_bvh_free(&tb);
    return result;
}
