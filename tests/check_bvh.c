/* check_bvh.c — BVH and broad phase.
 *
 * Expected values are derived independently:
 *   - ct_bvh_pairs against the O(n^2) brute-force box-overlap test (2D/3D, cross and self,
 *     empty and single-box trees, duplicate and exactly touching boxes, a filter, refits);
 *   - the broad phase against brute force over all primitive pairs: (1) the candidate set
 *     equals the set of pairs whose inflated boxes overlap (box logic written again here),
 *     and (2) every pair whose exact distance (point–triangle, segment–segment and
 *     point–segment distances written here from scratch) is <= inflate is a candidate; for
 *     CCD, every pair whose distance at some sampled time of the motion is <= inflate;
 *   - determinism: 1, 2 and 3 threads give identical lists.
 *   - ct_neighbors (fixed-radius point neighbours) against the O(n) brute-force test
 *     |s - q|² < R² (the squared distance summed over the coordinates in order, as documented in
 *     ct_neighbors.h, so the comparison is exact): 2D and 3D clouds (continuous, integer grids with
 *     duplicates and exact ties at distance R, all samples equal), n = 0 .. 3000, R = 0, negative,
 *     tiny, typical, beyond the cloud's diameter and infinite, queries at samples, inside and
 *     outside the cloud; after refits (small and large motions) and rebuilds (other n, other dim).
 * A timing case prints build + query time for two 50x50-cell plates in near contact.
 */
#include "ct_test_util.h"

#include "contactlab/ct_broadphase.h"
#include "contactlab/ct_bvh.h"
#include "contactlab/ct_distance.h"
#include "contactlab/ct_mesh.h"
#include "contactlab/ct_neighbors.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* Check's ck_assert records a checkpoint (a write to its log) even when it passes; inside
 * loops over thousands of primitives use these, which only call Check on failure. */
#define REQ(c)                                                                   \
    do {                                                                         \
        if (!(c)) ck_abort_msg("%s:%d: assertion '%s' failed", __FILE__, __LINE__, #c); \
    } while (0)
#define REQ_MSG(c, ...)                      \
    do {                                     \
        if (!(c)) ck_abort_msg(__VA_ARGS__); \
    } while (0)

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double urand(void) /* uniform in [0, 1) (xorshift64*) */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-53;
}

static int irand(int n) { return (int)(urand() * n); }

/* Random boxes; kind 0: continuous, 1: integer grid (duplicates and exact touching),
 * 2: all identical, 3: points (zero-size boxes) on a coarse grid, 4: continuous with about
 * one overlap per box. */
static double *random_boxes(int dim, int n, int kind)
{
    double *b = malloc((size_t)(n > 0 ? n : 1) * 2 * (size_t)dim * sizeof *b);
    double scale = kind == 0 || kind == 4 ? cbrt((double)(n > 0 ? n : 1)) : 1.0;
    for (int i = 0; i < n; ++i)
        for (int c = 0; c < dim; ++c) {
            double lo, hi;
            if (kind == 0 || kind == 4) {
                lo = scale * urand();
                hi = lo + (kind == 0 ? 0.3 * urand() * urand() : urand());
            } else if (kind == 1) {
                lo = irand(8);
                hi = lo + irand(3);
            } else if (kind == 2) {
                lo = 1.0, hi = 2.5;
            } else {
                lo = hi = irand(4);
            }
            b[2 * dim * i + c] = lo;
            b[2 * dim * i + dim + c] = hi;
        }
    return b;
}

static int box_overlap(int dim, const double *a, int i, const double *b, int j)
{
    const double *p = a + 2 * dim * i, *q = b + 2 * dim * j;
    for (int c = 0; c < dim; ++c)
        if (p[c] > q[dim + c] || q[c] > p[dim + c]) return 0;
    return 1;
}

typedef struct filt_check {
    int dim;
    const double *a, *b;
    int bad; /* set if the filter sees a non-overlapping pair or i >= j in a self query */
    int self;
} filt_check;

static int test_filter_rule(int i, int j) { return (7 * i + 3 * j) % 5 != 0; }

static int test_filter(int i, int j, void *ctx)
{
    filt_check *fc = ctx;
    if (!box_overlap(fc->dim, fc->a, i, fc->b, j) || (fc->self && i >= j)) {
#pragma omp atomic write
        fc->bad = 1;
    }
    return test_filter_rule(i, j);
}

/* Brute-force expected pairs, in (i, j) order. */
static void brute_pairs(int dim, const double *a, int na, const double *b, int nb, int self,
                        int use_filter, ct_pair_list *out)
{
    out->n = 0;
    for (int i = 0; i < na; ++i)
        for (int j = self ? i + 1 : 0; j < nb; ++j)
            if (box_overlap(dim, a, i, b, j) && (!use_filter || test_filter_rule(i, j)))
                REQ(ct_pair_list_push(out, i, j) == CT_OK);
}

static int same_list(const ct_pair_list *x, const ct_pair_list *y)
{
    return x->n == y->n && (x->n == 0 || memcmp(x->ij, y->ij, (size_t)x->n * 2 * sizeof(int)) == 0);
}

/* Structural invariants of a built tree. */
static void check_tree(const ct_bvh *t, const double *boxes)
{
    const int n = t->n, d = t->dim;
    if (n == 0) {
        ck_assert_int_eq(t->nnodes, 0);
        return;
    }
    ck_assert_int_le(t->nnodes, 2 * n - 1);
    int *seen = calloc((size_t)n, sizeof *seen);
    for (int k = 0; k < n; ++k) {
        REQ(t->order[k] >= 0 && t->order[k] < n);
        REQ(seen[t->order[k]]++ == 0); /* a permutation */
    }
    free(seen);
    int maxdepth = 0;
    int *depth = calloc((size_t)t->nnodes, sizeof *depth);
    for (int i = 0; i < t->nnodes; ++i) {
        const ct_bvh_node *nd = &t->nodes[i];
        maxdepth = depth[i] > maxdepth ? depth[i] : maxdepth;
        if (nd->left < 0) {
            REQ(nd->count >= 1 && nd->count <= 4);
            for (int k = nd->first; k < nd->first + nd->count; ++k) {
                const double *bx = boxes + 2 * d * t->order[k];
                for (int c = 0; c < d; ++c) REQ(nd->lo[c] <= bx[c] && bx[d + c] <= nd->hi[c]);
            }
        } else {
            const ct_bvh_node *l = &t->nodes[nd->left], *r = &t->nodes[nd->right];
            REQ(nd->left > i && nd->right > i); /* pre-order */
            REQ(l->first == nd->first && r->first == nd->first + l->count &&
                l->count + r->count == nd->count);
            depth[nd->left] = depth[nd->right] = depth[i] + 1;
            for (int c = 0; c < 3; ++c)
                REQ(nd->lo[c] <= l->lo[c] && nd->lo[c] <= r->lo[c] && l->hi[c] <= nd->hi[c] &&
                          r->hi[c] <= nd->hi[c]);
        }
    }
    /* Morton splits: every split on a code bit lowers the highest differing bit (63 bits), and
     * ranges of equal codes are halved: depth <= 63 + ceil(log2(n / 4)) + 1 */
    int bound = 1;
    while ((4L << (bound - 1)) < n) ++bound;
    ck_assert_int_le(maxdepth, 63 + bound);
    free(depth);
}

/* ---------------------------------------------------------------- BVH tests */

START_TEST(test_pair_list)
{
    ct_pair_list l;
    ct_pair_list_init(&l);
    for (int i = 0; i < 10000; ++i) REQ(ct_pair_list_push(&l, i, 2 * i + 1) == CT_OK);
    ck_assert_int_eq(l.n, 10000);
    ck_assert_int_ge(l.cap, 10000);
    for (int i = 0; i < 10000; ++i) REQ(l.ij[2 * i] == i && l.ij[2 * i + 1] == 2 * i + 1);
    ck_assert_int_eq(ct_pair_list_reserve(&l, 50000), CT_OK);
    ck_assert_int_ge(l.cap, 50000);
    ck_assert_int_eq(l.n, 10000);
    ct_pair_list_free(&l);
    ck_assert_int_eq(l.n, 0);
    ck_assert_ptr_null(l.ij);
}
END_TEST

START_TEST(test_bvh_vs_brute)
{
    static const int sizes[] = {0, 1, 2, 3, 5, 8, 17, 64, 300, 1500};
    const int ns = (int)(sizeof sizes / sizeof *sizes);
    long checked = 0, total_pairs = 0;
    ct_pair_list got, want;
    ct_pair_list_init(&got);
    ct_pair_list_init(&want);
    for (int dim = 2; dim <= 3; ++dim)
        for (int kind = 0; kind < 4; ++kind)
            for (int s = 0; s < ns; ++s) {
                int na = sizes[s], nb = sizes[(s * 7 + kind + dim) % ns];
                double *A = random_boxes(dim, na, kind), *B = random_boxes(dim, nb, kind);
                ct_bvh ta, tb;
                ct_bvh_init(&ta);
                ct_bvh_init(&tb);
                ck_assert_int_eq(ct_bvh_build(&ta, dim, na, A), CT_OK);
                ck_assert_int_eq(ct_bvh_build(&tb, dim, nb, B), CT_OK);
                check_tree(&ta, A);
                check_tree(&tb, B);
                for (int refit = 0; refit < 2; ++refit) {
                    if (refit) { /* move every box a little, keep the topology */
                        for (int i = 0; i < 2 * dim * na; i += 2 * dim)
                            for (int c = 0; c < dim; ++c) {
                                double sh = 0.2 * (urand() - 0.5), gr = 0.1 * urand();
                                A[i + c] += sh - gr;
                                A[i + dim + c] += sh + gr;
                            }
                        ct_bvh_refit(&ta, A);
                        check_tree(&ta, A);
                    }
                    for (int self = 0; self < 2; ++self)
                        for (int filt = 0; filt < 2; ++filt) {
                            const double *Bx = self ? A : B;
                            int nbx = self ? na : nb;
                            brute_pairs(dim, A, na, Bx, nbx, self, filt, &want);
                            for (int th = 1; th <= 2; ++th) {
                                filt_check fc = {dim, A, Bx, 0, self};
                                got.n = 0;
                                ck_assert_int_eq(ct_bvh_pairs(&ta, self ? &ta : &tb, filt ? test_filter : NULL,
                                                              &fc, th, &got),
                                                 CT_OK);
                                ck_assert_int_eq(fc.bad, 0);
                                ck_assert_msg(same_list(&got, &want),
                                              "dim %d kind %d na %d nb %d self %d filt %d refit %d threads %d: "
                                              "%ld pairs, brute force %ld",
                                              dim, kind, na, nbx, self, filt, refit, th, got.n, want.n);
                                checked++;
                            }
                            total_pairs += want.n;
                        }
                }
                ct_bvh_free(&ta);
                ct_bvh_free(&tb);
                free(A);
                free(B);
            }
    /* appending: pairs go after what out already holds */
    {
        double *A = random_boxes(3, 200, 0);
        ct_bvh t;
        ct_bvh_init(&t);
        ck_assert_int_eq(ct_bvh_build(&t, 3, 200, A), CT_OK);
        brute_pairs(3, A, 200, A, 200, 1, 0, &want);
        got.n = 0;
        ck_assert_int_eq(ct_pair_list_push(&got, -5, -7), CT_OK);
        ck_assert_int_eq(ct_bvh_pairs(&t, &t, NULL, NULL, 2, &got), CT_OK);
        ck_assert_int_eq(got.n, want.n + 1);
        ck_assert(got.ij[0] == -5 && got.ij[1] == -7);
        ck_assert(memcmp(got.ij + 2, want.ij, (size_t)want.n * 2 * sizeof(int)) == 0);
        /* rebuild in place with fewer boxes reuses the memory */
        ck_assert_int_eq(ct_bvh_build(&t, 3, 50, A), CT_OK);
        check_tree(&t, A);
        brute_pairs(3, A, 50, A, 50, 1, 0, &want);
        got.n = 0;
        ck_assert_int_eq(ct_bvh_pairs(&t, &t, NULL, NULL, 2, &got), CT_OK);
        ck_assert(same_list(&got, &want));
        /* bad input */
        A[0] = NAN;
        ck_assert_int_eq(ct_bvh_build(&t, 3, 50, A), CT_EINPUT);
        ck_assert_int_eq(ct_bvh_build(&t, 4, 50, A), CT_EINPUT);
        A[0] = 2.0, A[3] = 1.0; /* lo > hi */
        ck_assert_int_eq(ct_bvh_build(&t, 3, 50, A), CT_EINPUT);
        ct_bvh_free(&t);
        free(A);
    }
    printf("bvh: %ld queries equal to brute force (%ld pairs in all)\n", checked, total_pairs);
    ct_pair_list_free(&got);
    ct_pair_list_free(&want);
}
END_TEST

/* Large self query: parallel path (many tasks), 1 vs 2 vs 3 threads identical; timings. */
START_TEST(test_bvh_large)
{
    const int n = 200000;
    double *A = random_boxes(3, n, 4);
    ct_bvh t;
    ct_bvh_init(&t);
    double t0 = omp_get_wtime();
    ck_assert_int_eq(ct_bvh_build(&t, 3, n, A), CT_OK);
    double tb = omp_get_wtime() - t0, tw = INFINITY; /* first build, then rebuilds in its memory */
    for (int rep = 0; rep < 3; ++rep) {
        t0 = omp_get_wtime();
        ck_assert_int_eq(ct_bvh_build_threads(&t, 3, n, A, 1), CT_OK);
        tw = fmin(tw, omp_get_wtime() - t0);
    }
    check_tree(&t, A);
    /* the tree does not depend on the build's thread count */
    for (int th = 1; th <= 3; ++th) {
        ct_bvh u;
        ct_bvh_init(&u);
        ck_assert_int_eq(ct_bvh_build_threads(&u, 3, n, A, th), CT_OK);
        ck_assert_int_eq(u.nnodes, t.nnodes);
        ck_assert(memcmp(u.nodes, t.nodes, (size_t)t.nnodes * sizeof *t.nodes) == 0);
        ck_assert(memcmp(u.order, t.order, (size_t)n * sizeof *t.order) == 0);
        ct_bvh_free(&u);
    }
    ct_pair_list l[3];
    double tq[3];
    for (int k = 0; k < 3; ++k) {
        ct_pair_list_init(&l[k]);
        tq[k] = INFINITY;
        for (int rep = 0; rep < 3; ++rep) { /* best of 3 */
            l[k].n = 0;
            t0 = omp_get_wtime();
            ck_assert_int_eq(ct_bvh_pairs(&t, &t, NULL, NULL, k + 1, &l[k]), CT_OK);
            tq[k] = fmin(tq[k], omp_get_wtime() - t0);
        }
    }
    ck_assert(same_list(&l[0], &l[1]) && same_list(&l[0], &l[2]));
    /* spot-check against brute force: the pairs of the first 300 boxes */
    long expect = 0, found = 0;
    for (int i = 0; i < 300; ++i)
        for (int j = i + 1; j < n; ++j) expect += box_overlap(3, A, i, A, j);
    for (long m = 0; m < l[0].n && l[0].ij[2 * m] < 300; ++m) found++;
    ck_assert_int_eq(found, expect);
    printf("bvh: %d random boxes: build %.1f ms (rebuild, 1 thread: %.1f ms), self query %ld pairs in %.1f / %.1f / "
           "%.1f ms (1/2/3 threads)\n",
           n, 1e3 * tb, 1e3 * tw, l[0].n, 1e3 * tq[0], 1e3 * tq[1], 1e3 * tq[2]);
    for (int k = 0; k < 3; ++k) ct_pair_list_free(&l[k]);
    ct_bvh_free(&t);
    free(A);
}
END_TEST

/* ---------------------------------------------------------------- exact distances */

static double dot(int d, const double *a, const double *b)
{
    double s = 0.0;
    for (int c = 0; c < d; ++c) s += a[c] * b[c];
    return s;
}

static double point_seg(int d, const double *p, const double *a, const double *b)
{
    double u[3] = {0}, w[3] = {0}, q[3] = {0};
    for (int c = 0; c < d; ++c) u[c] = b[c] - a[c], w[c] = p[c] - a[c];
    double uu = dot(d, u, u), t = uu > 0.0 ? dot(d, w, u) / uu : 0.0;
    t = t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
    for (int c = 0; c < d; ++c) q[c] = w[c] - t * u[c];
    return sqrt(dot(d, q, q));
}

static void cross3(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

/* If the projection of p onto the plane lies in the triangle, the plane distance; otherwise
 * the closest point is on the boundary (the triangle is convex). */
static double point_tri(const double *p, const double *a, const double *b, const double *c)
{
    double e1[3], e2[3], n[3], w[3];
    for (int k = 0; k < 3; ++k) e1[k] = b[k] - a[k], e2[k] = c[k] - a[k], w[k] = p[k] - a[k];
    cross3(e1, e2, n);
    double nn = dot(3, n, n);
    if (nn > 0.0) {
        double h = dot(3, w, n) / nn, q[3];
        for (int k = 0; k < 3; ++k) q[k] = p[k] - h * n[k];
        /* barycentric signs via sub-triangle orientations */
        const double *V[3] = {a, b, c};
        int inside = 1;
        for (int k = 0; k < 3; ++k) {
            const double *s = V[(k + 1) % 3], *t = V[(k + 2) % 3];
            double st[3], sq[3], cr[3];
            for (int m = 0; m < 3; ++m) st[m] = t[m] - s[m], sq[m] = q[m] - s[m];
            cross3(st, sq, cr);
            if (dot(3, cr, n) < 0.0) inside = 0;
        }
        if (inside) return fabs(h) * sqrt(nn);
    }
    double d0 = point_seg(3, p, a, b), d1 = point_seg(3, p, b, c), d2 = point_seg(3, p, c, a);
    return fmin(d0, fmin(d1, d2));
}

/* Minimum of a convex quadratic over [0,1]^2: the interior stationary point if feasible,
 * else on the boundary, i.e. one of the four endpoint–segment distances. */
static double seg_seg(const double *a0, const double *a1, const double *b0, const double *b1)
{
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; ++k) u[k] = a1[k] - a0[k], v[k] = b1[k] - b0[k], w[k] = a0[k] - b0[k];
    double A = dot(3, u, u), B = dot(3, u, v), C = dot(3, v, v), D = dot(3, u, w), E = dot(3, v, w);
    double best = fmin(fmin(point_seg(3, a0, b0, b1), point_seg(3, a1, b0, b1)),
                       fmin(point_seg(3, b0, a0, a1), point_seg(3, b1, a0, a1)));
    double den = A * C - B * B;
    if (den > 1e-14 * A * C) {
        double s = (B * E - C * D) / den, t = (A * E - B * D) / den;
        if (s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) {
            double r[3];
            for (int k = 0; k < 3; ++k) r[k] = w[k] + s * u[k] - t * v[k];
            best = fmin(best, sqrt(dot(3, r, r)));
        }
    }
    return best;
}

/* ---------------------------------------------------------------- broad-phase brute force */

/* Box of a primitive at x (and x + dx), inflated by r (layout lo[d], hi[d]). */
static void prim_box(int d, const double *x, const double *dx, const int *v, int nv, double r, double *bx)
{
    for (int c = 0; c < d; ++c) bx[c] = INFINITY, bx[d + c] = -INFINITY;
    for (int k = 0; k < nv; ++k)
        for (int c = 0; c < d; ++c) {
            double p = x[d * v[k] + c], q = dx ? p + dx[d * v[k] + c] : p;
            bx[c] = fmin(bx[c], fmin(p, q));
            bx[d + c] = fmax(bx[d + c], fmax(p, q));
        }
    for (int c = 0; c < d; ++c) bx[c] -= r, bx[d + c] += r;
}

static int boxes_meet(int d, const double *p, const double *q)
{
    for (int c = 0; c < d; ++c)
        if (p[c] > q[d + c] || q[c] > p[d + c]) return 0;
    return 1;
}

/* Distance between two primitives (vertex count na / nb) at x + t dx. */
static double prim_dist(int d, const double *x, const double *dx, double t, const int *va, int na,
                        const int *vb, int nb)
{
    double P[4][3];
    const int *vs[2] = {va, vb};
    int ns[2] = {na, nb}, m = 0;
    for (int s = 0; s < 2; ++s)
        for (int k = 0; k < ns[s]; ++k, ++m)
            for (int c = 0; c < d; ++c)
                P[m][c] = x[d * vs[s][k] + c] + (dx ? t * dx[d * vs[s][k] + c] : 0.0);
    if (d == 2) return point_seg(2, P[0], P[1], P[2]);
    if (na == 1) return point_tri(P[0], P[1], P[2], P[3]);
    return seg_seg(P[0], P[1], P[2], P[3]);
}

static int in_list(const ct_pair_list *l, int i, int j) /* binary search in a sorted list */
{
    long lo = 0, hi = l->n - 1;
    while (lo <= hi) {
        long m = (lo + hi) / 2;
        int a = l->ij[2 * m], b = l->ij[2 * m + 1];
        if (a == i && b == j) return 1;
        if (a < i || (a == i && b < j)) lo = m + 1;
        else hi = m - 1;
    }
    return 0;
}

static void assert_sorted_unique(const ct_pair_list *l)
{
    for (long m = 1; m < l->n; ++m) {
        const int *p = l->ij + 2 * (m - 1), *q = l->ij + 2 * m;
        REQ(p[0] < q[0] || (p[0] == q[0] && p[1] < q[1]));
    }
}

typedef struct bp_stats {
    long cand, near, far_near; /* candidates; pairs within inflate; those between two bodies
                                  (or, for one body, far apart at rest: self-contact) */
} bp_stats;

/* Check one primitive family: first list `got` of (a-index, b-index) against brute force.
 * va(i) gives the vertex list of primitive i of family a (size na), likewise b. */
static void check_family(int d, const ct_surface *s, const double *X, const double *x, const double *dx,
                         const unsigned char *mov, double inflate, int nsplit,
                         int kind /* 0 vf, 1 ee, 2 ve */, const ct_pair_list *got, bp_stats *st)
{
    int nA = kind == 1 ? s->ned : s->nbv, nB = kind == 0 ? s->nf : s->ned;
    int szA = kind == 1 ? 2 : 1, szB = kind == 0 ? 3 : 2;
    double rA = kind == 1 ? 0.5 * inflate : inflate, rB = kind == 1 ? 0.5 * inflate : 0.0;
    double *bA = malloc((size_t)(nA > 0 ? nA : 1) * 2 * d * sizeof *bA);
    double *bB = malloc((size_t)(nB > 0 ? nB : 1) * 2 * d * sizeof *bB);
    for (int i = 0; i < nA; ++i) {
        const int *v = kind == 1 ? s->edges + 2 * i : s->bverts + i;
        prim_box(d, x, dx, v, szA, rA, bA + 2 * d * i);
    }
    for (int j = 0; j < nB; ++j) {
        const int *v = kind == 0 ? s->faces + 3 * j : s->edges + 2 * j;
        prim_box(d, x, dx, v, szB, rB, bB + 2 * d * j);
    }
    assert_sorted_unique(got);
    long want = 0;
    for (int i = 0; i < nA; ++i) {
        const int *va = kind == 1 ? s->edges + 2 * i : s->bverts + i;
        for (int j = kind == 1 ? i + 1 : 0; j < nB; ++j) {
            const int *vb = kind == 0 ? s->faces + 3 * j : s->edges + 2 * j;
            int share = 0, anymov = !mov;
            for (int p = 0; p < szA; ++p) {
                anymov |= mov && mov[va[p]];
                for (int q = 0; q < szB; ++q) share |= va[p] == vb[q];
            }
            for (int q = 0; q < szB; ++q) anymov |= mov && mov[vb[q]];
            if (share || !anymov) {
                REQ(!in_list(got, kind == 1 ? i : va[0], j));
                continue;
            }
            int box = boxes_meet(d, bA + 2 * d * i, bB + 2 * d * j);
            int found = in_list(got, kind == 1 ? i : va[0], j);
            REQ_MSG(box == found, "kind %d pair (%d, %d): box overlap %d, candidate %d", kind, i, j,
                          box, found);
            want += box;
            /* exact distance (CCD: the minimum over 33 sampled times) */
            double dist = INFINITY;
            for (int k = 0; k <= (dx ? 32 : 0); ++k)
                dist = fmin(dist, prim_dist(d, x, dx, k / 32.0, va, szA, vb, szB));
            if (dist <= inflate) {
                REQ_MSG(found, "kind %d pair (%d, %d) at distance %g <= %g is not a candidate", kind,
                              i, j, dist, inflate);
                st->near++;
                if (nsplit > 0) /* two bodies: vertices [0, nsplit) and [nsplit, nv) */
                    st->far_near += (va[0] < nsplit) != (vb[0] < nsplit);
                else /* one body: far apart at rest means self-contact of distant parts */
                    st->far_near += prim_dist(d, X, NULL, 0.0, va, szA, vb, szB) > 10.0 * inflate;
            }
        }
    }
    ck_assert_int_eq(got->n, want);
    st->cand += got->n;
    free(bA);
    free(bB);
}

static bp_stats check_broadphase(const ct_surface *s, const double *X, const double *x, const double *dx,
                                 const unsigned char *mov, double inflate, int nsplit)
{
    bp_stats st = {0, 0, 0};
    ct_candidates c[2];
    for (int k = 0; k < 2; ++k) {
        ct_candidates_init(&c[k]);
        ct_status r = dx ? ct_broadphase_ccd(s, x, dx, mov, inflate, k + 1, &c[k])
                         : ct_broadphase_proximity(s, x, mov, inflate, k + 1, &c[k]);
        ck_assert_int_eq(r, CT_OK);
    }
    ck_assert(same_list(&c[0].vf, &c[1].vf) && same_list(&c[0].ee, &c[1].ee) && same_list(&c[0].ve, &c[1].ve));
    /* a candidate object reused across every call of the test (other surfaces, dimensions,
     * proximity and CCD, 1 and 2 threads): its kept trees and lists give the same answer */
    static ct_candidates reused;
    static int reused_init = 0, calls = 0;
    if (!reused_init) ct_candidates_init(&reused), reused_init = 1;
    const int th = 1 + (calls++ % 2);
    ck_assert_int_eq(dx ? ct_broadphase_ccd(s, x, dx, mov, inflate, th, &reused)
                        : ct_broadphase_proximity(s, x, mov, inflate, th, &reused),
                     CT_OK);
    ck_assert(same_list(&c[0].vf, &reused.vf) && same_list(&c[0].ee, &reused.ee) && same_list(&c[0].ve, &reused.ve));
    if (s->dim == 3) {
        ck_assert_int_eq(c[0].ve.n, 0);
        check_family(3, s, X, x, dx, mov, inflate, nsplit, 0, &c[0].vf, &st);
        check_family(3, s, X, x, dx, mov, inflate, nsplit, 1, &c[0].ee, &st);
    } else {
        ck_assert(c[0].vf.n == 0 && c[0].ee.n == 0);
        check_family(2, s, X, x, dx, mov, inflate, nsplit, 2, &c[0].ve, &st);
    }
    for (int k = 0; k < 2; ++k) ct_candidates_free(&c[k]);
    return st;
}

/* ---------------------------------------------------------------- scenes */

/* m = m1 ∪ m2 (vertices of m2 renumbered after those of m1). */
static void mesh_concat(ct_mesh *m, const ct_mesh *m1, const ct_mesh *m2)
{
    const int d = m1->dim, nvt = d + 1;
    ct_mesh_init(m);
    m->dim = d;
    m->nv = m1->nv + m2->nv;
    m->ne = m1->ne + m2->ne;
    m->X = malloc((size_t)m->nv * d * sizeof(double));
    m->elem = malloc((size_t)m->ne * nvt * sizeof(int));
    memcpy(m->X, m1->X, (size_t)m1->nv * d * sizeof(double));
    memcpy(m->X + (size_t)m1->nv * d, m2->X, (size_t)m2->nv * d * sizeof(double));
    memcpy(m->elem, m1->elem, (size_t)m1->ne * nvt * sizeof(int));
    for (int k = 0; k < m2->ne * nvt; ++k) m->elem[m1->ne * nvt + k] = m2->elem[k] + m1->nv;
}

/* Two bodies: the first at origin o1, the second at o2. */
static void two_bodies(ct_mesh *m, int d, const double *o1, const double *s1, const double *o2,
                       const double *s2, const int *c1, const int *c2)
{
    ct_mesh a, b;
    if (d == 3) {
        ck_assert_int_eq(ct_mesh_box(&a, o1, s1, c1), CT_OK);
        ck_assert_int_eq(ct_mesh_box(&b, o2, s2, c2), CT_OK);
    } else {
        ck_assert_int_eq(ct_mesh_rect(&a, o1, s1, c1[0], c1[1]), CT_OK);
        ck_assert_int_eq(ct_mesh_rect(&b, o2, s2, c2[0], c2[1]), CT_OK);
    }
    mesh_concat(m, &a, &b);
    ct_mesh_free(&a);
    ct_mesh_free(&b);
}

static double *jittered(const ct_mesh *m, double amp)
{
    size_t n = (size_t)m->nv * m->dim;
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; ++i) x[i] = m->X[i] + amp * (2.0 * urand() - 1.0);
    return x;
}

START_TEST(test_broadphase_two_boxes)
{
    /* two 4x4x4 tet boxes, the second above the first at gap 0.05, shifted sideways so that
     * vertices do not line up; every vertex jittered by up to 0.01 */
    const double o1[3] = {0, 0, 0}, s1[3] = {1, 1, 1}, o2[3] = {0.07, 1.05, -0.03}, s2[3] = {1, 0.8, 1};
    const int c1[3] = {4, 4, 4}, c2[3] = {4, 3, 4};
    ct_mesh m;
    two_bodies(&m, 3, o1, s1, o2, s2, c1, c2);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    double *x = jittered(&m, 0.01);
    const int nv1 = (c1[0] + 1) * (c1[1] + 1) * (c1[2] + 1);
    static const double inflates[] = {0.0, 0.02, 0.06, 0.3};
    for (int k = 0; k < 4; ++k) {
        bp_stats st = check_broadphase(&s, m.X, x, NULL, NULL, inflates[k], nv1);
        printf("two boxes, inflate %.2f: %ld candidates, %ld pairs within inflate (%ld between the "
               "bodies), all found\n",
               inflates[k], st.cand, st.near, st.far_near);
        if (inflates[k] >= 0.06) ck_assert_int_gt(st.far_near, 0); /* the gap is 0.05 +- 0.02 */
    }
    /* kinematic lower box: pairs among its own primitives disappear */
    unsigned char *mov = malloc((size_t)m.nv);
    for (int v = 0; v < m.nv; ++v) mov[v] = v >= nv1;
    bp_stats all = check_broadphase(&s, m.X, x, NULL, NULL, 0.06, nv1);
    bp_stats part = check_broadphase(&s, m.X, x, NULL, mov, 0.06, nv1);
    ck_assert_int_lt(part.cand, all.cand);
    ck_assert_int_eq(part.far_near, all.far_near); /* body–body pairs all kept */
    printf("two boxes, lower one kinematic: %ld candidates (all movable: %ld)\n", part.cand, all.cand);
    free(mov);
    free(x);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

START_TEST(test_broadphase_rect_pair)
{
    const double o1[2] = {0, 0}, s1[2] = {1, 0.5}, o2[2] = {0.06, 0.53}, s2[2] = {0.8, 0.4};
    const int c1[2] = {10, 5}, c2[2] = {7, 4};
    ct_mesh m;
    two_bodies(&m, 2, o1, s1, o2, s2, c1, c2);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    double *x = jittered(&m, 0.01);
    static const double inflates[] = {0.0, 0.02, 0.05, 0.2};
    for (int k = 0; k < 4; ++k) {
        bp_stats st = check_broadphase(&s, m.X, x, NULL, NULL, inflates[k], (c1[0] + 1) * (c1[1] + 1));
        printf("rectangle pair, inflate %.2f: %ld candidates, %ld within inflate (%ld between the "
               "bodies)\n",
               inflates[k], st.cand, st.near, st.far_near);
        if (inflates[k] >= 0.05) ck_assert_int_gt(st.far_near, 0);
    }
    free(x);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

/* U-fold of a strip along x (thickness along y from 0 to h): the part beyond s0 is bent around
 * the centre (s0, -R) with radius R + y and comes back underneath, at y = -2R - y0. The two
 * arms face each other across a gap 2R. */
static void fold(int d, const double *X, int nv, double s0, double R, double *x)
{
    const double pi = 3.14159265358979323846;
    for (int v = 0; v < nv; ++v) {
        const double *p = X + d * v;
        double *q = x + d * v;
        memcpy(q, p, (size_t)d * sizeof *q);
        double s = p[0], y = p[1], r = R + y;
        if (s <= s0) continue;
        double phi = (s - s0) / R;
        if (phi <= pi) {
            q[0] = s0 + r * sin(phi);
            q[1] = -R + r * cos(phi);
        } else {
            q[0] = s0 - (s - s0 - pi * R);
            q[1] = -2.0 * R - y;
        }
    }
}

START_TEST(test_broadphase_folded)
{
    for (int d = 2; d <= 3; ++d) {
        ct_mesh m;
        if (d == 3) {
            const double o[3] = {0, 0, 0}, sz[3] = {2, 0.1, 0.2};
            const int c[3] = {24, 1, 2};
            ck_assert_int_eq(ct_mesh_box(&m, o, sz, c), CT_OK);
        } else {
            const double o[2] = {0, 0}, sz[2] = {2, 0.1};
            ck_assert_int_eq(ct_mesh_rect(&m, o, sz, 40, 2), CT_OK);
        }
        ct_surface s;
        ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
        double *x = malloc((size_t)m.nv * d * sizeof *x);
        fold(d, m.X, m.nv, 0.9, 0.02, x); /* gap between the arms: 0.04 */
        for (int k = 0; k < m.nv * d; ++k) x[k] += 0.002 * (2.0 * urand() - 1.0);
        bp_stats st = check_broadphase(&s, m.X, x, NULL, NULL, 0.05, 0);
        printf("folded strip %dD, inflate 0.05: %ld candidates, %ld within inflate, %ld self-contact "
               "pairs between the arms\n",
               d, st.cand, st.near, st.far_near);
        ck_assert_int_gt(st.far_near, 0);
        free(x);
        ct_surface_free(&s);
        ct_mesh_free(&m);
    }
}
END_TEST

START_TEST(test_broadphase_ccd)
{
    for (int d = 2; d <= 3; ++d) {
        ct_mesh m;
        if (d == 3) {
            const double o1[3] = {0, 0, 0}, s1[3] = {1, 0.5, 1}, o2[3] = {0.11, 0.6, 0.05}, s2[3] = {0.7, 0.5, 0.7};
            const int c1[3] = {4, 2, 4}, c2[3] = {3, 2, 3};
            two_bodies(&m, 3, o1, s1, o2, s2, c1, c2);
        } else {
            const double o1[2] = {0, 0}, s1[2] = {1, 0.5}, o2[2] = {0.11, 0.6}, s2[2] = {0.7, 0.5};
            const int c1[2] = {8, 4}, c2[2] = {6, 4};
            two_bodies(&m, 2, o1, s1, o2, s2, c1, c2);
        }
        ct_surface s;
        ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
        double *x = jittered(&m, 0.005);
        /* the upper body falls by 0.3 (through the 0.1 gap) and turns a little */
        int nv1 = d == 3 ? 5 * 3 * 5 : 9 * 5;
        double *dx = calloc((size_t)m.nv * d, sizeof *dx);
        for (int v = nv1; v < m.nv; ++v) {
            const double *p = x + d * v;
            dx[d * v + 0] = 0.1 * (p[1] - 0.85);
            dx[d * v + 1] = -0.3 - 0.1 * (p[0] - 0.45);
            if (d == 3) dx[d * v + 2] = 0.02 * urand();
        }
        /* (at inflate 0 the box check still runs, but sampled distances are never exactly 0) */
        static const double inflates[] = {0.0, 0.01, 0.03};
        for (int k = 0; k < 3; ++k) {
            double inflate = inflates[k];
            bp_stats st = check_broadphase(&s, m.X, x, dx, NULL, inflate, nv1);
            printf("CCD %dD, falling body, inflate %.2f: %ld candidates, %ld within inflate at some of "
                   "33 sampled times (%ld between the bodies)\n",
                   d, inflate, st.cand, st.near, st.far_near);
            if (inflate > 0.0) ck_assert_int_gt(st.far_near, 0);
            /* proximity at the start finds no pair between the bodies (gap 0.1 > inflate) */
            bp_stats st0 = check_broadphase(&s, m.X, x, NULL, NULL, inflate, nv1);
            ck_assert_int_eq(st0.far_near, 0);
            ck_assert_int_lt(st0.cand, st.cand);
        }
        free(dx);
        free(x);
        ct_surface_free(&s);
        ct_mesh_free(&m);
    }
}
END_TEST

START_TEST(test_broadphase_edge_cases)
{
    ct_candidates c;
    ct_candidates_init(&c);
    ct_mesh m;
    const double o[3] = {0, 0, 0}, sz[3] = {1, 1, 1};
    const int cells[3] = {1, 1, 1};
    ck_assert_int_eq(ct_mesh_box(&m, o, sz, cells), CT_OK);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    /* one cube: every vertex is on a face or edge of its neighbours, so candidates exist only
     * between primitives that do not share a vertex */
    ck_assert_int_eq(ct_broadphase_proximity(&s, m.X, NULL, 0.1, 2, &c), CT_OK);
    for (long k = 0; k < c.vf.n; ++k) {
        const int *f = s.faces + 3 * c.vf.ij[2 * k + 1];
        int v = c.vf.ij[2 * k];
        ck_assert(v != f[0] && v != f[1] && v != f[2]);
    }
    for (long k = 0; k < c.ee.n; ++k) ck_assert_int_lt(c.ee.ij[2 * k], c.ee.ij[2 * k + 1]);
    /* everything kinematic: nothing */
    unsigned char mov[8] = {0};
    ck_assert_int_eq(ct_broadphase_proximity(&s, m.X, mov, 0.1, 1, &c), CT_OK);
    ck_assert(c.vf.n == 0 && c.ee.n == 0 && c.ve.n == 0);
    /* bad input */
    ck_assert_int_eq(ct_broadphase_proximity(&s, m.X, NULL, -1.0, 1, &c), CT_EINPUT);
    ck_assert_int_eq(ct_broadphase_proximity(&s, m.X, NULL, NAN, 1, &c), CT_EINPUT);
    ck_assert_int_eq(ct_broadphase_proximity(NULL, m.X, NULL, 0.1, 1, &c), CT_EINPUT);
    ck_assert_int_eq(ct_broadphase_ccd(&s, m.X, NULL, NULL, 0.1, 1, &c), CT_EINPUT);
    double *x = malloc(sizeof(double) * 24);
    memcpy(x, m.X, sizeof(double) * 24);
    x[4] = NAN;
    ck_assert_int_eq(ct_broadphase_proximity(&s, x, NULL, 0.1, 1, &c), CT_EINPUT);
    free(x);
    /* an empty surface (no faces, edges, vertices) gives no candidates */
    ct_surface e = s;
    e.nf = e.ned = e.nbv = 0;
    ck_assert_int_eq(ct_broadphase_proximity(&e, m.X, NULL, 0.1, 2, &c), CT_OK);
    ck_assert(c.vf.n == 0 && c.ee.n == 0);
    ct_candidates_clear(&c);
    ct_candidates_free(&c);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

/* ct_broadphase_self_closest: the nearest pair of a part's own surface primitives that share no
 * vertex. 2D: a 1 x 0.5 rectangle of one cell (its boundary: 4 segments): a vertex and a segment
 * without it are 0.5 (across the short side) or 1 apart, so the nearest is 0.5; a second
 * rectangle 0.1 away is another part and does not count. 3D: a box of 2 x 1 x 1 cells with
 * perturbed vertices against every vertex–face and edge–edge pair by brute force. */
START_TEST(test_broadphase_self_closest)
{
    ct_mesh m;
    ct_surface s;
    ct_self_closest sc;
    {
        const double o[2] = {0, 0}, sz[2] = {1, 0.5};
        ck_assert_int_eq(ct_mesh_rect(&m, o, sz, 1, 1), CT_OK);
        /* a second copy 0.1 above: vertices 4..7 */
        double *X = malloc(sizeof(double) * 16);
        for (int i = 0; i < 4; ++i) {
            X[2 * i] = m.X[2 * i], X[2 * i + 1] = m.X[2 * i + 1];
            X[8 + 2 * i] = m.X[2 * i], X[8 + 2 * i + 1] = m.X[2 * i + 1] + 0.6;
        }
        ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
        ck_assert_int_eq(s.ned, 4);
        /* the two copies' surfaces as one: edges of the second shifted by 4 */
        ct_surface two = s;
        int *edges = malloc(sizeof(int) * 16), *bv = malloc(sizeof(int) * 8), part[8];
        for (int e = 0; e < 8; ++e) edges[2 * e] = s.edges[2 * (e % 4)] + 4 * (e / 4),
                                    edges[2 * e + 1] = s.edges[2 * (e % 4) + 1] + 4 * (e / 4);
        for (int v = 0; v < 8; ++v) bv[v] = v, part[v] = v / 4;
        two.nv = 8, two.ned = 8, two.nbv = 8, two.edges = edges, two.bverts = bv;
        ck_assert_int_eq(ct_broadphase_self_closest(&two, X, part, NULL, 0.6, 1, &sc), CT_OK);
        ck_assert_int_eq(sc.kind, CT_SELF_VE);
        ck_assert_double_eq_tol(sc.d, 0.5, 1e-15);
        ck_assert_int_eq(part[sc.a], part[edges[2 * sc.b]]);
        for (int k = 0; k < 2; ++k) ck_assert(sc.a != edges[2 * sc.b + k]);
        /* nothing within 0.5 (the bound is strict); nothing movable: nothing */
        ck_assert_int_eq(ct_broadphase_self_closest(&two, X, part, NULL, 0.5, 1, &sc), CT_OK);
        ck_assert_int_eq(sc.kind, CT_SELF_NONE);
        unsigned char mov[8] = {0};
        ck_assert_int_eq(ct_broadphase_self_closest(&two, X, part, mov, 0.6, 1, &sc), CT_OK);
        ck_assert_int_eq(sc.kind, CT_SELF_NONE);
        ck_assert_int_eq(ct_broadphase_self_closest(&two, X, NULL, NULL, 0.6, 1, &sc), CT_EINPUT);
        free(edges), free(bv), free(X);
        ct_surface_free(&s);
        ct_mesh_free(&m);
    }
    {
        const double o[3] = {0, 0, 0}, sz[3] = {2, 1, 1};
        const int cells[3] = {2, 1, 1};
        ck_assert_int_eq(ct_mesh_box(&m, o, sz, cells), CT_OK);
        uint64_t r = 12345;
        for (int i = 0; i < 3 * m.nv; ++i) {
            r = r * 6364136223846793005ULL + 1442695040888963407ULL;
            m.X[i] += 0.1 * ((double)(r >> 11) / 9007199254740992.0 - 0.5);
        }
        ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
        int *part = calloc((size_t)m.nv, sizeof *part);
        double best = INFINITY, d2;
        for (int k = 0; k < s.nbv; ++k)
            for (int f = 0; f < s.nf; ++f) {
                const int v = s.bverts[k], *F = s.faces + 3 * f;
                if (v == F[0] || v == F[1] || v == F[2]) continue;
                ct_pt_classify_d2(m.X + 3 * v, m.X + 3 * F[0], m.X + 3 * F[1], m.X + 3 * F[2], &d2);
                best = fmin(best, d2);
            }
        for (int a = 0; a < s.ned; ++a)
            for (int b = a + 1; b < s.ned; ++b) {
                const int *A = s.edges + 2 * a, *B = s.edges + 2 * b;
                if (A[0] == B[0] || A[0] == B[1] || A[1] == B[0] || A[1] == B[1]) continue;
                ct_ee_classify_d2(m.X + 3 * A[0], m.X + 3 * A[1], m.X + 3 * B[0], m.X + 3 * B[1], &d2, NULL, NULL);
                best = fmin(best, d2);
            }
        best = sqrt(best);
        ck_assert(best > 0.1 && best < 1.0);
        ck_assert_int_eq(ct_broadphase_self_closest(&s, m.X, part, NULL, 10.0, 2, &sc), CT_OK);
        ck_assert(sc.kind == CT_SELF_VF || sc.kind == CT_SELF_EE);
        ck_assert_double_eq_tol(sc.d, best, 1e-14);
        ck_assert_int_eq(ct_broadphase_self_closest(&s, m.X, part, NULL, best * (1 - 1e-12), 2, &sc), CT_OK);
        ck_assert_int_eq(sc.kind, CT_SELF_NONE);
        free(part);
        ct_surface_free(&s);
        ct_mesh_free(&m);
    }
    {
        /* a surface far finer than `within` (a 1 x 1 x 1 box of 2 x 200 x 2 cells, cell height
         * 0.005, within 1): the nearest pair is found without listing every pair within 1 (the
         * first query runs within the bound of ct_broadphase_self_closest); a vertex and the
         * triangle across its face's opposite edge are at most 0.005 apart */
        const double o[3] = {0, 0, 0}, sz[3] = {1, 1, 1};
        const int cells[3] = {2, 200, 2};
        ck_assert_int_eq(ct_mesh_box(&m, o, sz, cells), CT_OK);
        ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
        int *part = calloc((size_t)m.nv, sizeof *part);
        ck_assert_int_eq(ct_broadphase_self_closest(&s, m.X, part, NULL, 1.0, 2, &sc), CT_OK);
        ck_assert(sc.kind == CT_SELF_VF || sc.kind == CT_SELF_EE);
        ck_assert(sc.d > 0.0 && sc.d <= 0.005 * (1 + 1e-12));
        /* the same answer as a query within the bound itself */
        ct_self_closest sc2;
        ck_assert_int_eq(ct_broadphase_self_closest(&s, m.X, part, NULL, 0.0051, 2, &sc2), CT_OK);
        ck_assert_double_eq(sc.d, sc2.d);
        free(part);
        ct_surface_free(&s);
        ct_mesh_free(&m);
    }
}
END_TEST

/* Two 50x1x50-cell plates, gap 1e-3, inflate 2e-3: timings and a contact sanity check. */
START_TEST(test_broadphase_plates_timing)
{
    const double o1[3] = {0, 0, 0}, s1[3] = {1, 0.1, 1}, o2[3] = {0, 0.101, 0}, s2[3] = {1, 0.1, 1};
    const int c[3] = {50, 1, 50};
    ct_mesh m;
    two_bodies(&m, 3, o1, s1, o2, s2, c, c);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    const double inflate = 2e-3;
    ct_candidates cand[3];
    double best[3];
    for (int th = 1; th <= 3; ++th) {
        ct_candidates_init(&cand[th - 1]);
        best[th - 1] = INFINITY;
        for (int rep = 0; rep < 3; ++rep) {
            double t0 = omp_get_wtime();
            ck_assert_int_eq(ct_broadphase_proximity(&s, m.X, NULL, inflate, th, &cand[th - 1]), CT_OK);
            best[th - 1] = fmin(best[th - 1], omp_get_wtime() - t0);
        }
    }
    for (int k = 1; k < 3; ++k)
        ck_assert(same_list(&cand[0].vf, &cand[k].vf) && same_list(&cand[0].ee, &cand[k].ee));
    /* tree build alone, for the face boxes */
    double *fb = malloc((size_t)s.nf * 6 * sizeof *fb);
    for (int f = 0; f < s.nf; ++f) prim_box(3, m.X, NULL, s.faces + 3 * f, 3, 0.0, fb + 6 * f);
    ct_bvh t;
    ct_bvh_init(&t);
    double tb = INFINITY;
    for (int rep = 0; rep < 3; ++rep) {
        double t0 = omp_get_wtime();
        ck_assert_int_eq(ct_bvh_build_threads(&t, 3, s.nf, fb, 1), CT_OK);
        tb = fmin(tb, omp_get_wtime() - t0);
    }
    /* each vertex of the lower plate's top face (y = 0.1) lies 1e-3 below the upper plate's
     * bottom face, so it has a vertex–face candidate with a face of the upper plate */
    const int nv1 = 51 * 2 * 51;
    long cross_vf = 0, cross_ee = 0, with = 0, top = 0;
    char *has = calloc((size_t)m.nv, 1);
    for (long k = 0; k < cand[0].vf.n; ++k) {
        int v = cand[0].vf.ij[2 * k], f = cand[0].vf.ij[2 * k + 1];
        if ((v < nv1) != (s.faces[3 * f] < nv1)) {
            cross_vf++;
            has[v] = 1;
        }
    }
    for (long k = 0; k < cand[0].ee.n; ++k)
        cross_ee += (s.edges[2 * cand[0].ee.ij[2 * k]] < nv1) != (s.edges[2 * cand[0].ee.ij[2 * k + 1]] < nv1);
    for (int v = 0; v < nv1; ++v)
        if (fabs(m.X[3 * v + 1] - 0.1) < 1e-12) top++, with += has[v];
    ck_assert_int_eq(top, 51 * 51);
    ck_assert_int_eq(with, top);
    printf("plates 2 x 50x1x50 cells (%d faces, %d edges, %d surface vertices), gap 1e-3, inflate 2e-3:\n"
           "  %ld vf + %ld ee candidates (%ld vf + %ld ee between the plates)\n"
           "  build + query %.1f / %.1f / %.1f ms (1/2/3 threads); face-tree build alone (1 thread) %.2f ms\n",
           s.nf, s.ned, s.nbv, cand[0].vf.n, cand[0].ee.n, cross_vf, cross_ee, 1e3 * best[0], 1e3 * best[1],
           1e3 * best[2], 1e3 * tb);
    free(has);
    ct_bvh_free(&t);
    free(fb);
    for (int k = 0; k < 3; ++k) ct_candidates_free(&cand[k]);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

/* ---------------------------------------------------------------- point neighbours */

/* Random samples; kind 0: continuous in [0, scale)^dim, 1: integer grid of side 6 (duplicates,
 * exact distances), 2: all at one point. */
static double *random_samples(int dim, int n, int kind, double scale)
{
    double *p = malloc((size_t)(n > 0 ? n : 1) * (size_t)dim * sizeof *p);
    for (int i = 0; i < n * dim; ++i) p[i] = kind == 0 ? scale * urand() : kind == 1 ? (double)irand(6) : 0.75;
    return p;
}

/* The brute-force answer: i with Σ_c (s_c − q_c)² < R², summed in coordinate order. */
static int brute_neighbors(int dim, int n, const double *pts, const double *q, double R, int *idx, double *d2)
{
    int m = 0;
    if (!(R > 0.0)) return 0;
    for (int i = 0; i < n; ++i) {
        double s = 0.0;
        for (int c = 0; c < dim; ++c) {
            const double d = pts[dim * i + c] - q[c];
            s += d * d;
        }
        if (s < R * R) idx[m] = i, d2[m++] = s;
    }
    return m;
}

/* Every query of a set (samples, random points in and around the cloud) at every radius equals the
 * brute force, index for index and bit for bit; returns the number of neighbours found. */
static long check_neighbors(const ct_neighbors *nb, int dim, int n, const double *pts, double scale, const char *what)
{
    const double radii[] = {0.0, -1.0, 1e-9, 0.05 * scale, 0.2 * scale, 1.0, 2.0, 3.0 * scale + 10.0, INFINITY, NAN};
    const int nr = (int)(sizeof radii / sizeof *radii);
    int *want = malloc((size_t)(n > 0 ? n : 1) * sizeof *want);
    double *wd2 = malloc((size_t)(n > 0 ? n : 1) * sizeof *wd2);
    ct_neighbor_list got;
    ct_neighbor_list_init(&got);
    long found = 0;
    for (int t = 0; t < 40; ++t) {
        double q[3];
        if (t < 10 && n > 0) /* at a sample */
            for (int c = 0; c < dim; ++c) q[c] = pts[dim * irand(n) + c];
        else if (t < 20) /* on the integer grid (exact ties with grid samples) */
            for (int c = 0; c < dim; ++c) q[c] = (double)irand(7);
        else /* in and around the cloud */
            for (int c = 0; c < dim; ++c) q[c] = (1.4 * urand() - 0.2) * (scale > 6.0 ? scale : 6.0);
        for (int r = 0; r < nr; ++r) {
            const int m = brute_neighbors(dim, n, pts, q, radii[r], want, wd2);
            ck_assert_int_eq(ct_neighbors_query(nb, q, radii[r], &got), CT_OK);
            REQ_MSG(got.n == m, "%s: dim %d n %d query %d R %g: %d neighbours, brute force %d", what, dim, n, t,
                    radii[r], got.n, m);
            for (int k = 0; k < m; ++k)
                REQ_MSG(got.idx[k] == want[k] && got.d2[k] == wd2[k], "%s: dim %d n %d query %d R %g: entry %d",
                        what, dim, n, t, radii[r], k);
            found += m;
        }
    }
    ct_neighbor_list_free(&got);
    free(want);
    free(wd2);
    return found;
}

START_TEST(test_neighbors_vs_brute)
{
    static const int sizes[] = {0, 1, 2, 4, 5, 9, 33, 300, 3000};
    const int ns = (int)(sizeof sizes / sizeof *sizes);
    long found = 0, clouds = 0;
    ct_neighbors nb;
    ct_neighbors_init(&nb);
    for (int dim = 2; dim <= 3; ++dim)
        for (int kind = 0; kind < 3; ++kind)
            for (int s = 0; s < ns; ++s) {
                const int n = sizes[s];
                const double scale = kind == 0 ? 4.0 : 1.0;
                double *P = random_samples(dim, n, kind, scale);
                /* the same answers whatever the build's thread count (the tree does not depend on it) */
                ck_assert_int_eq(ct_neighbors_build(&nb, dim, n, P, 1 + s % 3), CT_OK);
                found += check_neighbors(&nb, dim, n, P, scale, "build");
                /* small motion, refit */
                for (int i = 0; i < n * dim; ++i) P[i] += 0.01 * (urand() - 0.5);
                ck_assert_int_eq(ct_neighbors_refit(&nb, P), CT_OK);
                found += check_neighbors(&nb, dim, n, P, scale, "small refit");
                /* large motion (the samples shuffled across the cloud), refit: slower, still exact */
                for (int i = 0; i < n * dim; ++i) P[i] = scale * urand();
                ck_assert_int_eq(ct_neighbors_refit(&nb, P), CT_OK);
                found += check_neighbors(&nb, dim, n, P, scale, "large refit");
                free(P);
                clouds++;
            }
    /* rebuild in place: fewer samples, more samples, 3D -> 2D -> 3D */
    for (int r = 0; r < 4; ++r) {
        const int dim = r % 2 ? 2 : 3, n = r == 1 ? 10 : 500 + 700 * r;
        double *P = random_samples(dim, n, 0, 3.0);
        ck_assert_int_eq(ct_neighbors_build(&nb, dim, n, P, 2), CT_OK);
        found += check_neighbors(&nb, dim, n, P, 3.0, "rebuild");
        free(P);
    }
    /* bad input; an empty set */
    double bad[6] = {0, 0, 0, NAN, 1, 1};
    ck_assert_int_eq(ct_neighbors_build(&nb, 3, 2, bad, 1), CT_EINPUT);
    ck_assert_int_eq(ct_neighbors_build(&nb, 4, 1, bad, 1), CT_EINPUT);
    ck_assert_int_eq(ct_neighbors_build(&nb, 3, -1, bad, 1), CT_EINPUT);
    ck_assert_int_eq(ct_neighbors_build(&nb, 2, 0, NULL, 1), CT_OK);
    ck_assert_int_eq(ct_neighbors_refit(&nb, NULL), CT_OK);
    ct_neighbor_list l;
    ct_neighbor_list_init(&l);
    const double q[2] = {0, 0};
    ck_assert_int_eq(ct_neighbors_query(&nb, q, INFINITY, &l), CT_OK);
    ck_assert_int_eq(l.n, 0);
    ct_neighbor_list_free(&l);
    ct_neighbors_free(&nb);
    printf("neighbors: %ld clouds, %ld neighbours, all equal to brute force\n", clouds, found);
}
END_TEST

static Suite *bvh_suite(void)
{
    Suite *s = suite_create("bvh");
    TCase *tc = tcase_create("bvh");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_pair_list);
    tcase_add_test(tc, test_bvh_vs_brute);
    tcase_add_test(tc, test_bvh_large);
    tcase_add_test(tc, test_broadphase_two_boxes);
    tcase_add_test(tc, test_broadphase_rect_pair);
    tcase_add_test(tc, test_broadphase_folded);
    tcase_add_test(tc, test_broadphase_ccd);
    tcase_add_test(tc, test_broadphase_edge_cases);
    tcase_add_test(tc, test_broadphase_self_closest);
    tcase_add_test(tc, test_broadphase_plates_timing);
    tcase_add_test(tc, test_neighbors_vs_brute);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(bvh_suite)
