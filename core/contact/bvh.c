/* bvh.c — bounding volume hierarchy over axis-aligned boxes and box-overlap pair queries.
 *
 * Build: the boxes are sorted along a Morton (Z-order) curve of their centres, quantised to
 * 21 bits per axis on the cube around the centres' bounds (one stable radix sort, so equal codes
 * keep their index order), and every range is split where its first and last codes first
 * differ: the spatial midpoint of the Morton cell the range fills, the split of a linear BVH
 * (Karras, "Maximizing parallelism in the construction of BVHs, octrees, and k-d trees", 2012;
 * a range of equal codes is halved). A range of <= 4 boxes is a leaf. O(n) after the sort, and
 * the tree depends only on the input. Depth: every split on a code lowers the highest differing
 * bit, so depth <= 63 + ceil(log2(n / 4)) + 1.
 *   Why not the object-median split on the longest axis (Ericson, Real-Time Collision
 * Detection, §6.2), which this replaced: on the aligned grids of contact surfaces whole rows of
 * centres share a coordinate, the median cuts through such a row, and the quickselect on many
 * equal coordinates is slow. Measured on the two aligned 50 × 50 slabs of bench/peer (cl_driver
 * --only bp_prox,ccd_bp), the Morton tree made the whole broad phase about 3 times faster (build
 * and queries, the same candidates); on 200 000 random boxes (tests/check_bvh.c, test_bvh_large)
 * its self query costs the same (36 ms) and a rebuild about a third (12 against 34 ms).
 *
 * Layout: nodes in one array, pre-order (a parent precedes its children), so a refit is one
 * reverse sweep. Every subtree covers a contiguous range of `order`. The boxes are kept in leaf
 * order (6 doubles each) for cache-friendly leaf tests.
 *
 * Pair query: simultaneous descent of the two trees (Gottschalk et al., "OBBTree", 1996,
 * descend into the larger node), or self-descent for a == b: (N,N) -> (L,L), (R,R), (L,R).
 * In parallel, the descent is first expanded breadth-first until there are enough independent
 * node pairs, which the threads then process with dynamic scheduling into per-thread
 * buffers. The buffers are concatenated and radix-sorted on the key (i << 32 | j), so the
 * output is identical for any thread count.
 */
#include "contactlab/ct_bvh.h"

#include "contactlab/ct_parallel.h"

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { LEAF_SIZE = 4, STACK_MAX = 512 };

/* ---------------------------------------------------------------- pair lists */

void ct_pair_list_init(ct_pair_list *l) { memset(l, 0, sizeof *l); }

void ct_pair_list_free(ct_pair_list *l)
{
    if (!l) return;
    free(l->ij);
    ct_pair_list_init(l);
}

ct_status ct_pair_list_reserve(ct_pair_list *l, long cap)
{
    if (cap <= l->cap) return CT_OK;
    long nc = l->cap > 0 ? l->cap : 16;
    while (nc < cap) nc = nc > LONG_MAX / 4 ? cap : 2 * nc;
    if ((size_t)nc > SIZE_MAX / (2 * sizeof(int))) return CT_ENOMEM;
    int *p = realloc(l->ij, (size_t)nc * 2 * sizeof(int));
    if (!p) return CT_ENOMEM;
    l->ij = p;
    l->cap = nc;
    return CT_OK;
}

ct_status ct_pair_list_push(ct_pair_list *l, int i, int j)
{
    if (l->n == l->cap) {
        ct_status st = ct_pair_list_reserve(l, l->n + 1);
        if (st != CT_OK) return st;
    }
    l->ij[2 * l->n] = i;
    l->ij[2 * l->n + 1] = j;
    l->n++;
    return CT_OK;
}

/* ---------------------------------------------------------------- build */

void ct_bvh_init(ct_bvh *b) { memset(b, 0, sizeof *b); }

void ct_bvh_free(ct_bvh *b)
{
    if (!b) return;
    free(b->nodes);
    free(b->order);
    free(b->box);
    free(b->code);
    free(b->code2);
    free(b->id2);
    ct_bvh_init(b);
}

/* Morton code of a point: 21 bits per axis, interleaved (x, y, z from the highest bit down). */
static inline uint64_t spread3(uint64_t v)
{
    v &= 0x1fffffULL;
    v = (v | v << 32) & 0x1f00000000ffffULL;
    v = (v | v << 16) & 0x1f0000ff0000ffULL;
    v = (v | v << 8) & 0x100f00f00f00f00fULL;
    v = (v | v << 4) & 0x10c30c30c30c30c3ULL;
    v = (v | v << 2) & 0x1249249249249249ULL;
    return v;
}

/* The radix sorts below (codes of the build, pairs of the queries) use 11-bit digits: the counts
 * stay in L1. */
enum { RADIX_BITS = 11, RADIX = 1 << RADIX_BITS };

/* Digit counts -> the first output position of each digit (exclusive prefix sum). */
static void counts_to_offsets(uint32_t cnt[RADIX])
{
    uint32_t sum = 0;
    for (int v = 0; v < RADIX; ++v) {
        const uint32_t k = cnt[v];
        cnt[v] = sum;
        sum += k;
    }
}

/* Stable LSD radix sort of (code, id) on the code, 11-bit digits (the counts stay in L1),
 * skipping the digits that are equal in every code; stable, so equal codes keep the order of
 * their ids. c2, d2: buffers of n. The result is in (c, d) or (c2, d2): returns which (0, 1). */
static int sort_codes(uint64_t *c, int *d, uint64_t *c2, int *d2, long n)
{
    enum { BITS = RADIX_BITS, R = RADIX };
    uint32_t cnt[R];
    int side = 0;
    for (int shift = 0; shift < 64; shift += BITS) {
        memset(cnt, 0, sizeof cnt);
        for (long m = 0; m < n; ++m) cnt[(c[m] >> shift) & (R - 1)]++;
        if (cnt[(c[0] >> shift) & (R - 1)] == (uint32_t)n) continue; /* digit constant */
        counts_to_offsets(cnt);
        for (long m = 0; m < n; ++m) {
            uint32_t to = cnt[(c[m] >> shift) & (R - 1)]++;
            c2[to] = c[m];
            d2[to] = d[m];
        }
        uint64_t *t = c;
        c = c2, c2 = t;
        int *u = d;
        d = d2, d2 = u;
        side ^= 1;
    }
    return side;
}

/* Where the sorted codes c[0 .. count) split: at the first code with the highest bit in which
 * the first and last codes differ (the spatial midpoint of the Morton cell they share), or in
 * the middle when all codes are equal. Both halves are non-empty. */
static int split_of(const uint64_t *c, int count)
{
    const uint64_t a = c[0], z = c[count - 1];
    if (a == z) return count / 2;
    const uint64_t bit = (uint64_t)1 << (63 - __builtin_clzll(a ^ z));
    int lo = 1, hi = count - 1; /* c[hi] has the bit, c[0] has not: find the first that has */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (c[mid] & bit)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Build the subtree over the sorted range [first, first + count) as node *next (pre-order:
 * the left subtree follows its parent, the right subtree follows the left one). */
static int build_rec(ct_bvh *b, const uint64_t *code, int first, int count, int *next)
{
    const int node = (*next)++;
    ct_bvh_node *nd = &b->nodes[node];
    nd->first = first;
    nd->count = count;
    if (count <= LEAF_SIZE) {
        nd->left = nd->right = -1;
        return node;
    }
    const int half = split_of(code + first, count);
    nd->left = build_rec(b, code, first, half, next);
    nd->right = build_rec(b, code, first + half, count - half, next);
    return node;
}

ct_status ct_bvh_build(ct_bvh *b, int dim, int n, const double *boxes)
{
    return ct_bvh_build_threads(b, dim, n, boxes, 0);
}

ct_status ct_bvh_build_threads(ct_bvh *b, int dim, int n, const double *boxes, int threads)
{
    if (!b || (dim != 2 && dim != 3) || n < 0 || (n > 0 && !boxes) || n > INT_MAX / 2)
        return CT_EINPUT;
    const int d = dim;
    for (size_t i = 0; i < (size_t)n; ++i)
        for (int c = 0; c < d; ++c) {
            double l = boxes[2 * d * i + (size_t)c], h = boxes[2 * d * i + (size_t)(d + c)];
            if (!(l <= h) || !isfinite(l) || !isfinite(h)) return CT_EINPUT;
        }
    if (n > b->cap) { /* fresh arrays: nothing in them is kept, so nothing is copied */
        ct_bvh_free(b);
        b->nodes = malloc(2 * (size_t)n * sizeof *b->nodes); /* n >= 1 non-empty leaves: <= 2n-1 nodes */
        b->order = malloc((size_t)n * sizeof *b->order);
        b->box = malloc((size_t)n * 6 * sizeof *b->box);
        b->code = malloc((size_t)n * sizeof *b->code);
        b->code2 = malloc((size_t)n * sizeof *b->code2);
        b->id2 = malloc((size_t)n * sizeof *b->id2);
        if (!b->nodes || !b->order || !b->box || !b->code || !b->code2 || !b->id2) {
            ct_bvh_free(b);
            return CT_ENOMEM;
        }
        b->cap = n;
    }
    b->dim = dim;
    b->n = n;
    b->nnodes = 0;
    if (n == 0) return CT_OK;

    /* centroids (doubled: lo + hi) quantised on the cube around their bounds */
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int c = 0; c < d; ++c) lo[c] = HUGE_VAL, hi[c] = -HUGE_VAL;
    for (size_t i = 0; i < (size_t)n; ++i)
        for (int c = 0; c < d; ++c) {
            double m = boxes[2 * d * i + (size_t)c] + boxes[2 * d * i + (size_t)(d + c)];
            lo[c] = m < lo[c] ? m : lo[c];
            hi[c] = m > hi[c] ? m : hi[c];
        }
    double ext = 0.0;
    for (int c = 0; c < d; ++c) ext = hi[c] - lo[c] > ext ? hi[c] - lo[c] : ext;
    const double scale = ext > 0.0 && isfinite(ext) ? 2097151.0 / ext : 0.0; /* 2^21 - 1 */
    uint64_t *code = b->code;
    int *id = b->order;
    const int nt = ct_threads(threads);
#pragma omp parallel for schedule(static) num_threads(nt) if (n >= 50000 && nt > 1 && !omp_in_parallel())
    for (long i = 0; i < (long)n; ++i) {
        uint64_t q[3] = {0, 0, 0};
        for (int c = 0; c < d; ++c) {
            double m = boxes[2 * d * i + (size_t)c] + boxes[2 * d * i + (size_t)(d + c)];
            double t = (m - lo[c]) * scale; /* in [0, 2^21 - 1] up to rounding */
            q[c] = t <= 0.0 ? 0 : t >= 2097151.0 ? 2097151 : (uint64_t)t;
        }
        code[i] = spread3(q[0]) << 2 | spread3(q[1]) << 1 | spread3(q[2]);
        id[i] = (int)i;
    }
    if (sort_codes(code, id, b->code2, b->id2, n)) {
        code = b->code2;
        memcpy(b->order, b->id2, (size_t)n * sizeof *b->order);
    }
    int next = 0;
    build_rec(b, code, 0, n, &next);
    b->nnodes = next;
    ct_bvh_refit(b, boxes);
    return CT_OK;
}

void ct_bvh_refit(ct_bvh *b, const double *boxes)
{
    if (!b || b->n == 0) return;
    const int d = b->dim;
    /* boxes in leaf order, padded to 3D with zeros */
    for (size_t k = 0; k < (size_t)b->n; ++k) {
        const double *src = boxes + 2 * (size_t)d * (size_t)b->order[k];
        double *dst = b->box + 6 * k;
        for (int c = 0; c < 3; ++c) {
            dst[c] = c < d ? src[c] : 0.0;
            dst[3 + c] = c < d ? src[d + c] : 0.0;
        }
    }
    /* children follow their parent: a reverse sweep sees children first */
    for (int i = b->nnodes - 1; i >= 0; --i) {
        ct_bvh_node *nd = &b->nodes[i];
        if (nd->left < 0) {
            const double *bx = b->box + 6 * (size_t)nd->first;
            for (int c = 0; c < 3; ++c) nd->lo[c] = bx[c], nd->hi[c] = bx[3 + c];
            for (int k = 1; k < nd->count; ++k) {
                bx += 6;
                for (int c = 0; c < 3; ++c) {
                    nd->lo[c] = bx[c] < nd->lo[c] ? bx[c] : nd->lo[c];
                    nd->hi[c] = bx[3 + c] > nd->hi[c] ? bx[3 + c] : nd->hi[c];
                }
            }
        } else {
            const ct_bvh_node *l = &b->nodes[nd->left], *r = &b->nodes[nd->right];
            for (int c = 0; c < 3; ++c) {
                nd->lo[c] = l->lo[c] < r->lo[c] ? l->lo[c] : r->lo[c];
                nd->hi[c] = l->hi[c] > r->hi[c] ? l->hi[c] : r->hi[c];
            }
        }
    }
}

/* ---------------------------------------------------------------- pair query */

typedef struct node_pair {
    int a, b;
} node_pair;

typedef struct query {
    const ct_bvh *ta, *tb;
    int self;
    ct_pair_filter f;
    void *ctx;
} query;

static inline int nodes_overlap(const ct_bvh_node *p, const ct_bvh_node *q)
{
    return p->lo[0] <= q->hi[0] && q->lo[0] <= p->hi[0] && p->lo[1] <= q->hi[1] &&
           q->lo[1] <= p->hi[1] && p->lo[2] <= q->hi[2] && q->lo[2] <= p->hi[2];
}

/* branch-free: at the leaves the outcome is unpredictable */
static inline int boxes_overlap(const double *p, const double *q)
{
    return (p[0] <= q[3]) & (q[0] <= p[3]) & (p[1] <= q[4]) & (q[1] <= p[4]) & (p[2] <= q[5]) &
           (q[2] <= p[5]);
}

static inline int is_leaf(const ct_bvh_node *n) { return n->left < 0; }

/* Report the overlapping box pairs of two leaves (or of one leaf with itself). */
static ct_status leaf_pairs(const query *q, int na, int nb, ct_pair_list *out)
{
    const ct_bvh_node *A = &q->ta->nodes[na], *B = &q->tb->nodes[nb];
    const double *ba = q->ta->box, *bb = q->tb->box;
    const int *oa = q->ta->order, *ob = q->tb->order;
    const int same = q->self && na == nb;
    const double nbx[6] = {B->lo[0], B->lo[1], B->lo[2], B->hi[0], B->hi[1], B->hi[2]};
    for (int p = A->first; p < A->first + A->count; ++p) {
        const double *bp = ba + 6 * (size_t)p;
        if (!same && !boxes_overlap(bp, nbx)) continue; /* p meets none of B's boxes */
        for (int r = same ? p + 1 : B->first; r < B->first + B->count; ++r) {
            if (!boxes_overlap(bp, bb + 6 * (size_t)r)) continue;
            int i = oa[p], j = ob[r];
            if (q->self && i > j) {
                int t = i;
                i = j;
                j = t;
            }
            if (q->f && !q->f(i, j, q->ctx)) continue;
            if (ct_pair_list_push(out, i, j) != CT_OK) return CT_ENOMEM;
        }
    }
    return CT_OK;
}

/* One descent step: the child pairs of (na, nb) whose bounds overlap, written to ch[0..3).
 * Returns their count, or -1 when (na, nb) is terminal (leaf against leaf). */
static int expand(const query *q, int na, int nb, node_pair ch[3])
{
    const ct_bvh_node *A = &q->ta->nodes[na], *B = &q->tb->nodes[nb];
    int k = 0;
    if (q->self && na == nb) {
        if (is_leaf(A)) return -1;
        ch[k++] = (node_pair){A->left, A->left};
        ch[k++] = (node_pair){A->right, A->right};
        if (nodes_overlap(&q->ta->nodes[A->left], &q->ta->nodes[A->right]))
            ch[k++] = (node_pair){A->left, A->right};
        return k;
    }
    if (is_leaf(A) && is_leaf(B)) return -1;
    /* descend into the larger node (by box count; a on ties) */
    if (is_leaf(B) || (!is_leaf(A) && A->count >= B->count)) {
        if (nodes_overlap(&q->ta->nodes[A->left], B)) ch[k++] = (node_pair){A->left, nb};
        if (nodes_overlap(&q->ta->nodes[A->right], B)) ch[k++] = (node_pair){A->right, nb};
    } else {
        if (nodes_overlap(A, &q->tb->nodes[B->left])) ch[k++] = (node_pair){na, B->left};
        if (nodes_overlap(A, &q->tb->nodes[B->right])) ch[k++] = (node_pair){na, B->right};
    }
    return k;
}

/* Depth-first descent from an overlapping node pair. Each step pops one pair and pushes at
 * most 3 (a net gain of 2), and a path descends at most depth(a) + depth(b) <= 2 * (63 + 31)
 * times for int-indexed boxes, so the stack stays below 2 * 188 + 1 < STACK_MAX entries. */
static ct_status descend(const query *q, node_pair start, ct_pair_list *out)
{
    node_pair stack[STACK_MAX];
    int top = 0;
    stack[top++] = start;
    while (top > 0) {
        node_pair p = stack[--top];
        node_pair ch[3];
        int k = expand(q, p.a, p.b, ch);
        if (k < 0) {
            if (leaf_pairs(q, p.a, p.b, out) != CT_OK) return CT_ENOMEM;
            continue;
        }
        if (top + k > STACK_MAX) return CT_ENOMEM; /* cannot happen (depth bound above) */
        for (int c = k - 1; c >= 0; --c) stack[top++] = ch[c];
    }
    return CT_OK;
}

/* Sort the pairs of out from n0 on by (i, j): an LSD radix sort, 11-bit digits (the counts stay
 * in L1), of the keys i << bj | j (bj: the bit width of the largest j), which take the pairs'
 * own 8 bytes; the second buffer is the list's spare capacity, so a list reused from query to
 * query sorts without allocating. Keys are moved with memcpy: the bytes hold ints before and
 * after. */
static inline uint64_t load_key(const int *p)
{
    uint64_t k;
    memcpy(&k, p, sizeof k);
    return k;
}

static inline void store_key(int *p, uint64_t k) { memcpy(p, &k, sizeof k); }

static ct_status sort_pairs(ct_pair_list *out, long n0)
{
    enum { BITS = RADIX_BITS, R = RADIX };
    const long n = out->n - n0;
    if (n < 2) return CT_OK;
    ct_status st = ct_pair_list_reserve(out, out->n + n);
    if (st != CT_OK) return st;
    int *a = out->ij + 2 * n0, *t = out->ij + 2 * out->n;
    uint32_t mi = 0, mj = 0;
    for (long m = 0; m < n; ++m) mi |= (uint32_t)a[2 * m], mj |= (uint32_t)a[2 * m + 1];
    const int bj = mj ? 32 - __builtin_clz(mj) : 0, bits = bj + (mi ? 32 - __builtin_clz(mi) : 0);
    for (long m = 0; m < n; ++m)
        store_key(a + 2 * m, (uint64_t)(uint32_t)a[2 * m] << bj | (uint32_t)a[2 * m + 1]);
    uint32_t cnt[R];
    for (int shift = 0; shift < bits; shift += BITS) {
        memset(cnt, 0, sizeof cnt);
        for (long m = 0; m < n; ++m) cnt[(load_key(a + 2 * m) >> shift) & (R - 1)]++;
        counts_to_offsets(cnt);
        for (long m = 0; m < n; ++m) {
            const uint64_t k = load_key(a + 2 * m);
            store_key(t + 2 * (size_t)cnt[(k >> shift) & (R - 1)]++, k);
        }
        int *u = a;
        a = t, t = u;
    }
    int *dst = out->ij + 2 * n0;
    if (a != dst) memcpy(dst, a, (size_t)n * 2 * sizeof *dst);
    const uint64_t low = bj ? ((uint64_t)1 << bj) - 1 : 0;
    for (long m = 0; m < n; ++m) {
        const uint64_t k = load_key(dst + 2 * m);
        dst[2 * m] = (int)(k >> bj);
        dst[2 * m + 1] = (int)(k & low);
    }
    return CT_OK;
}

void ct_bvh_scratch_init(ct_bvh_scratch *w) { memset(w, 0, sizeof *w); }

void ct_bvh_scratch_free(ct_bvh_scratch *w)
{
    if (!w) return;
    for (int t = 0; t < w->n; ++t) ct_pair_list_free(&w->list[t]);
    free(w->list);
    ct_bvh_scratch_init(w);
}

ct_status ct_bvh_pairs(const ct_bvh *a, const ct_bvh *b, ct_pair_filter f, void *ctx,
                       int threads, ct_pair_list *out)
{
    return ct_bvh_pairs_with(a, b, f, ctx, threads, out, NULL);
}

ct_status ct_bvh_pairs_with(const ct_bvh *a, const ct_bvh *b, ct_pair_filter f, void *ctx,
                            int threads, ct_pair_list *out, ct_bvh_scratch *w)
{
    if (!a || !b || !out) return CT_EINPUT;
    if (a->n == 0 || b->n == 0) return CT_OK;
    if (a->dim != b->dim) return CT_EINPUT;
    query q = {a, b, a == b, f, ctx};
    const long n0 = out->n;
    int nt = ct_threads(threads);
    if (nt < 1) nt = 1;

    /* serial: one depth-first descent straight into out */
    if (nt == 1 || (long)a->n + (long)b->n < 256) {
        ct_status st = CT_OK;
        if (q.self || nodes_overlap(&a->nodes[0], &b->nodes[0]))
            st = descend(&q, (node_pair){0, 0}, out);
        /* no pairs: out->ij may be NULL, and NULL + 0 is undefined */
        if (st == CT_OK && out->n > n0) st = sort_pairs(out, n0);
        if (st != CT_OK) out->n = n0;
        return st;
    }

    /* breadth-first expansion until there are enough independent tasks for the threads */
    const long target = 64L * nt;
    long nf = 0, cap = 64;
    node_pair *front = malloc((size_t)cap * sizeof *front), *next = NULL;
    if (!front) return CT_ENOMEM;
    if (q.self || nodes_overlap(&a->nodes[0], &b->nodes[0])) front[nf++] = (node_pair){0, 0};
    for (int grew = 1; grew && nf > 0 && nf < target;) {
        grew = 0;
        next = malloc((size_t)(3 * nf) * sizeof *next);
        if (!next) {
            free(front);
            return CT_ENOMEM;
        }
        long nn = 0;
        for (long t = 0; t < nf; ++t) {
            node_pair ch[3];
            int k = expand(&q, front[t].a, front[t].b, ch);
            if (k < 0)
                next[nn++] = front[t];
            else {
                for (int c = 0; c < k; ++c) next[nn++] = ch[c];
                grew = 1;
            }
        }
        free(front);
        front = next;
        nf = nn;
    }

    ct_bvh_scratch tmp;
    ct_bvh_scratch_init(&tmp);
    if (!w) w = &tmp;
    if (w->n < nt) {
        ct_pair_list *l = realloc(w->list, (size_t)nt * sizeof *l);
        if (!l) {
            free(front);
            return CT_ENOMEM;
        }
        for (int t = w->n; t < nt; ++t) ct_pair_list_init(&l[t]);
        w->list = l;
        w->n = nt;
    }
    ct_pair_list *buf = w->list;
    for (int t = 0; t < nt; ++t) buf[t].n = 0;
    int failed = 0;
#pragma omp parallel num_threads(nt)
    {
        /* a private copy of the thread's list: the list heads share cache lines, and every push
         * writes its count */
        const int me = omp_get_thread_num();
        ct_pair_list mine = buf[me];
#pragma omp for schedule(dynamic, 1)
        for (long t = 0; t < nf; ++t) {
            if (descend(&q, front[t], &mine) != CT_OK) {
#pragma omp atomic write
                failed = 1;
            }
        }
        buf[me] = mine;
    }
    free(front);
    long total = out->n;
    for (int t = 0; t < nt; ++t) total += buf[t].n;
    ct_status st = failed ? CT_ENOMEM : ct_pair_list_reserve(out, total);
    if (st == CT_OK) {
        for (int t = 0; t < nt; ++t) {
            if (buf[t].n) memcpy(out->ij + 2 * out->n, buf[t].ij, (size_t)buf[t].n * 2 * sizeof(int));
            out->n += buf[t].n;
        }
        if (out->n > n0) st = sort_pairs(out, n0);
    }
    ct_bvh_scratch_free(&tmp);
    if (st != CT_OK) out->n = n0;
    return st;
}
