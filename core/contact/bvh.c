/* bvh.c — bounding volume hierarchy over axis-aligned boxes and box-overlap pair queries.
 *
 * Build: top-down, median split on the longest axis of the centroid bounds (the classic
 * "object median" split; see Ericson, Real-Time Collision Detection, §6.2, and Wald,
 * "On fast construction of SAH-based BVHs", 2007, for the SAH alternative). We use the
 * median rather than binned SAH because the trees are rebuilt at every time step over
 * fairly uniform surface meshes: the median split is cheaper to build (an O(n) selection
 * per level, O(n log n) in all), always balanced (depth ceil(log2(n/4)) + 1, so the
 * traversal stacks are small and bounded), and SAH's better trees pay off mainly for very
 * irregular primitive sizes (ray tracing), not for overlap queries between two near-uniform
 * contact surfaces. Ties in the centroid coordinate are broken by the box index, so every key
 * is distinct: duplicate boxes still split evenly and the tree depends only on the input.
 *
 * Layout: nodes in one array, pre-order (a parent precedes its children), so a refit is one
 * reverse sweep. Every subtree covers a contiguous range of `order`; leaves hold <= 4 boxes.
 * The boxes are kept in leaf order (6 doubles each) for cache-friendly leaf tests. Because a
 * node over c boxes always splits into c/2 and c - c/2, the topology depends on n only: node
 * indices are known in advance and large subtrees are built as independent OpenMP tasks, with
 * a result identical to the serial build. Measured (tests/check_bvh.c): ~130-180 ns per box on
 * one thread (20800 triangles: ~3 ms).
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
    ct_bvh_init(b);
}

/* Build items: centroid and box index, permuted together during the build so that the
 * selection reads contiguous memory. */
typedef struct item {
    double c[3];
    int id;
} item;

/* Key order for the selection: (centroid coordinate, box index); all keys distinct. */
static inline int key_less(const item *a, const item *b, int axis)
{
    return a->c[axis] < b->c[axis] || (a->c[axis] == b->c[axis] && a->id < b->id);
}

static inline void swap_item(item *a, item *b)
{
    item t = *a;
    *a = *b;
    *b = t;
}

/* Partial sort (nth_element): afterwards o[k] has the key it would have in sorted order,
 * keys in o[0..k) are smaller and keys in o(k..n) larger. Quickselect with a median-of-3
 * pivot (branch-free Lomuto partition), insertion sort on short ranges; expected O(n). */
static void select_kth(item *o, int n, int k, int axis)
{
    int lo = 0, hi = n - 1;
    while (hi > lo) {
        if (hi - lo < 16) {
            for (int i = lo + 1; i <= hi; ++i) {
                item v = o[i];
                int j = i - 1;
                while (j >= lo && key_less(&v, &o[j], axis)) {
                    o[j + 1] = o[j];
                    --j;
                }
                o[j + 1] = v;
            }
            return;
        }
        /* median-of-3 pivot, parked at hi */
        int ia = lo, ib = lo + (hi - lo) / 2, ic = hi, ip;
        if (key_less(&o[ia], &o[ib], axis))
            ip = key_less(&o[ib], &o[ic], axis) ? ib : (key_less(&o[ia], &o[ic], axis) ? ic : ia);
        else
            ip = key_less(&o[ia], &o[ic], axis) ? ia : (key_less(&o[ib], &o[ic], axis) ? ic : ib);
        swap_item(&o[ip], &o[hi]);
        const double pk = o[hi].c[axis];
        const int pid = o[hi].id;
        /* branchless Lomuto partition of o[lo..hi): keys < pivot to the front. Quickselect's
         * comparisons are unpredictable, so avoiding the branch is what makes this fast. */
        int i = lo;
        for (int q = lo; q < hi; ++q) {
            item t = o[q];
            int lt = (t.c[axis] < pk) | ((t.c[axis] == pk) & (t.id < pid));
            o[q] = o[i];
            o[i] = t;
            i += lt;
        }
        swap_item(&o[i], &o[hi]); /* o[lo..i) < o[i] = pivot < o(i..hi] */
        if (k < i)
            hi = i - 1;
        else if (k > i)
            lo = i + 1;
        else
            return;
    }
}

/* Number of leaves of the subtree over `count` boxes. The topology depends on the count
 * only (halves count/2 and count - count/2, leaves of <= LEAF_SIZE), so node indices can be
 * assigned before the subtrees are built, which lets subtrees be built in parallel. Computed
 * as the pair (L(m), L(m+1)): halving maps it to the pair at m/2, so this is O(log m). */
static void leaves_pair(long m, long *Lm, long *Lm1)
{
    if (m + 1 <= LEAF_SIZE) {
        *Lm = 1, *Lm1 = 1;
        return;
    }
    if (m <= LEAF_SIZE) { /* m = LEAF_SIZE: m + 1 splits into two leaves */
        *Lm = 1, *Lm1 = 2;
        return;
    }
    long h = m / 2, a, b;
    leaves_pair(h, &a, &b);
    if (m % 2 == 0)
        *Lm = 2 * a, *Lm1 = a + b;
    else
        *Lm = a + b, *Lm1 = 2 * b;
}

static int subtree_nodes(int count)
{
    long a, b;
    leaves_pair(count, &a, &b);
    return (int)(2 * a - 1);
}

/* Build the subtree of node `node` over items[first .. first+count). Nodes are in pre-order:
 * the left child is node + 1, the right child follows the left subtree. Large subtrees are
 * built as OpenMP tasks (each writes only its own node and item ranges). */
static void build_rec(ct_bvh *b, item *items, int node, int first, int count, int par)
{
    ct_bvh_node *nd = &b->nodes[node];
    nd->first = first;
    nd->count = count;
    if (count <= LEAF_SIZE) {
        nd->left = nd->right = -1;
        for (int k = first; k < first + count; ++k) b->order[k] = items[k].id;
        return;
    }
    /* longest axis of the centroid bounds */
    item *o = items + first;
    double l0 = HUGE_VAL, l1 = HUGE_VAL, l2 = HUGE_VAL, h0 = -HUGE_VAL, h1 = -HUGE_VAL, h2 = -HUGE_VAL;
    for (int k = 0; k < count; ++k) { /* scalars: no store-to-load chain through an array */
        const double *c = o[k].c;
        l0 = c[0] < l0 ? c[0] : l0, h0 = c[0] > h0 ? c[0] : h0;
        l1 = c[1] < l1 ? c[1] : l1, h1 = c[1] > h1 ? c[1] : h1;
        l2 = c[2] < l2 ? c[2] : l2, h2 = c[2] > h2 ? c[2] : h2;
    }
    const double ext[3] = {h0 - l0, h1 - l1, h2 - l2};
    int axis = 0;
    for (int a = 1; a < b->dim; ++a)
        if (ext[a] > ext[axis]) axis = a;
    int half = count / 2;
    select_kth(o, count, half, axis);
    nd->left = node + 1;
    nd->right = node + 1 + subtree_nodes(half);
    if (par && count >= 4096) {
#pragma omp task default(none) firstprivate(b, items, node, first, half)
        build_rec(b, items, node + 1, first, half, 1);
    } else {
        build_rec(b, items, node + 1, first, half, par);
    }
    build_rec(b, items, nd->right, first + half, count - half, par);
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
    if (n > b->cap) {
        size_t nn = 2 * (size_t)n; /* a binary tree with n >= 1 non-empty leaves: <= 2n-1 nodes */
        ct_bvh_node *nodes = realloc(b->nodes, nn * sizeof *nodes);
        if (nodes) b->nodes = nodes;
        int *order = realloc(b->order, (size_t)n * sizeof *order);
        if (order) b->order = order;
        double *box = realloc(b->box, (size_t)n * 6 * sizeof *box);
        if (box) b->box = box;
        if (!nodes || !order || !box) return CT_ENOMEM;
        b->cap = n;
    }
    b->dim = dim;
    b->n = n;
    b->nnodes = 0;
    if (n == 0) return CT_OK;

    item *items = malloc((size_t)n * sizeof *items);
    if (!items) return CT_ENOMEM;
    for (size_t i = 0; i < (size_t)n; ++i) {
        for (int c = 0; c < 3; ++c)
            items[i].c[c] = c < d ? 0.5 * (boxes[2 * d * i + (size_t)c] + boxes[2 * d * i + (size_t)(d + c)]) : 0.0;
        items[i].id = (int)i;
    }
    b->nnodes = subtree_nodes(n);
    const int nt = ct_threads(threads);
    if (n >= 8192 && nt > 1 && !omp_in_parallel()) {
#pragma omp parallel num_threads(nt)
#pragma omp single
        build_rec(b, items, 0, 0, n, 1); /* the tasks end at the region's closing barrier */
    } else {
        build_rec(b, items, 0, 0, n, 0);
    }
    free(items);
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
 * most 3, and the path length is at most depth(a) + depth(b) <= 2 * 31 for balanced trees
 * of int-indexed boxes, so the stack stays below 3 * 64 entries. */
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
        if (top + k > STACK_MAX) return CT_ENOMEM; /* cannot happen for balanced trees */
        for (int c = k - 1; c >= 0; --c) stack[top++] = ch[c];
    }
    return CT_OK;
}

/* Sort pairs by (i, j): LSD radix sort on 64-bit keys with 16-bit digits, skipping the
 * digits that are equal in every key (qsort for short lists). */
static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return (a > b) - (a < b);
}

static ct_status sort_pairs(int *ij, long n)
{
    if (n < 2) return CT_OK;
    uint64_t *key = malloc((size_t)n * sizeof *key);
    if (!key) return CT_ENOMEM;
    for (long m = 0; m < n; ++m)
        key[m] = (uint64_t)(uint32_t)ij[2 * m] << 32 | (uint64_t)(uint32_t)ij[2 * m + 1];
    if (n < 2048) {
        qsort(key, (size_t)n, sizeof *key, cmp_u64);
    } else {
        uint64_t *tmp = malloc((size_t)n * sizeof *tmp);
        size_t *cnt = malloc(65536 * sizeof *cnt);
        if (!tmp || !cnt) {
            free(tmp), free(cnt), free(key);
            return CT_ENOMEM;
        }
        for (int shift = 0; shift < 64; shift += 16) {
            memset(cnt, 0, 65536 * sizeof *cnt);
            for (long m = 0; m < n; ++m) cnt[(key[m] >> shift) & 0xffff]++;
            if (cnt[(key[0] >> shift) & 0xffff] == (size_t)n) continue; /* digit constant */
            size_t s = 0;
            for (int v = 0; v < 65536; ++v) {
                size_t c = cnt[v];
                cnt[v] = s;
                s += c;
            }
            for (long m = 0; m < n; ++m) tmp[cnt[(key[m] >> shift) & 0xffff]++] = key[m];
            uint64_t *t = key;
            key = tmp;
            tmp = t;
        }
        free(tmp);
        free(cnt);
    }
    for (long m = 0; m < n; ++m) {
        ij[2 * m] = (int)(key[m] >> 32);
        ij[2 * m + 1] = (int)(uint32_t)key[m];
    }
    free(key);
    return CT_OK;
}

ct_status ct_bvh_pairs(const ct_bvh *a, const ct_bvh *b, ct_pair_filter f, void *ctx,
                       int threads, ct_pair_list *out)
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
        if (st == CT_OK && out->n > n0) st = sort_pairs(out->ij + 2 * n0, out->n - n0);
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

    ct_pair_list *buf = calloc((size_t)nt, sizeof *buf);
    if (!buf) {
        free(front);
        return CT_ENOMEM;
    }
    int failed = 0;
#pragma omp parallel num_threads(nt)
    {
        ct_pair_list *mine = &buf[omp_get_thread_num()];
#pragma omp for schedule(dynamic, 1)
        for (long t = 0; t < nf; ++t) {
            if (descend(&q, front[t], mine) != CT_OK) {
#pragma omp atomic write
                failed = 1;
            }
        }
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
        if (out->n > n0) st = sort_pairs(out->ij + 2 * n0, out->n - n0);
    }
    for (int t = 0; t < nt; ++t) ct_pair_list_free(&buf[t]);
    free(buf);
    if (st != CT_OK) out->n = n0;
    return st;
}
