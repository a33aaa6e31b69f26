/* neighbors.c — fixed-radius neighbours among sample points on a BVH of point boxes (see
 * ct_neighbors.h).
 */
#include "contactlab/ct_neighbors.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { STACK_MAX = 128 }; /* one child pushed per level: depth ≤ 63 + log2(n/4) + 1 ≤ 95 (ct_bvh) */

void ct_neighbors_init(ct_neighbors *nb)
{
    memset(nb, 0, sizeof *nb);
    ct_bvh_init(&nb->bvh);
}

void ct_neighbors_free(ct_neighbors *nb)
{
    ct_bvh_free(&nb->bvh);
    free(nb->boxes);
    free(nb->slot);
    ct_neighbors_init(nb);
}

/* The point boxes (lo = hi = the sample) of pts into nb->boxes. */
static void point_boxes(ct_neighbors *nb, const double *pts)
{
    const int d = nb->dim;
    for (size_t i = 0; i < (size_t)nb->n; ++i)
        for (int c = 0; c < d; ++c) nb->boxes[2 * d * i + (size_t)c] = nb->boxes[2 * d * i + (size_t)(d + c)] = pts[d * i + (size_t)c];
}

ct_status ct_neighbors_build(ct_neighbors *nb, int dim, int n, const double *pts, int threads)
{
    if ((dim != 2 && dim != 3) || n < 0 || n > INT_MAX / 6 || (n > 0 && !pts)) return CT_EINPUT;
    const size_t nbox = (size_t)n * 2 * (size_t)dim;
    if (nbox > nb->box_cap) {
        double *b = realloc(nb->boxes, nbox * sizeof *b);
        if (!b) return CT_ENOMEM;
        nb->boxes = b;
        nb->box_cap = nbox;
    }
    if ((size_t)n > nb->slot_cap) {
        int *s = realloc(nb->slot, (size_t)n * sizeof *s);
        if (!s) return CT_ENOMEM;
        nb->slot = s;
        nb->slot_cap = (size_t)n;
    }
    nb->dim = dim;
    nb->n = n;
    point_boxes(nb, pts);
    ct_status st = ct_bvh_build_threads(&nb->bvh, dim, n, nb->boxes, threads);
    if (st != CT_OK) {
        nb->n = 0;
        return st;
    }
    for (int k = 0; k < n; ++k) nb->slot[nb->bvh.order[k]] = k;
    return CT_OK;
}

ct_status ct_neighbors_refit(ct_neighbors *nb, const double *pts)
{
    if (nb->n == 0) return CT_OK;
    if (!pts) return CT_EINPUT;
    for (size_t i = 0; i < (size_t)nb->n * (size_t)nb->dim; ++i)
        if (!isfinite(pts[i])) return CT_EINPUT;
    point_boxes(nb, pts);
    ct_bvh_refit(&nb->bvh, nb->boxes);
    return CT_OK;
}

void ct_neighbor_list_init(ct_neighbor_list *l) { memset(l, 0, sizeof *l); }

void ct_neighbor_list_free(ct_neighbor_list *l)
{
    free(l->idx);
    free(l->d2);
    ct_neighbor_list_init(l);
}

static int push(ct_neighbor_list *l, int i)
{
    if (l->n == l->cap) {
        int nc = l->cap ? 2 * l->cap : 64;
        int *p = realloc(l->idx, (size_t)nc * sizeof *p);
        if (!p) return -1;
        l->idx = p;
        double *q = realloc(l->d2, (size_t)nc * sizeof *q);
        if (!q) return -1;
        l->d2 = q;
        l->cap = nc;
    }
    l->idx[l->n++] = i;
    return 0;
}

/* |p − q|² over the first dim coordinates, in order (the test of ct_neighbors.h). */
static inline double dist2(const double *p, const double *q, int dim)
{
    double s = 0.0;
    for (int c = 0; c < dim; ++c) {
        const double d = p[c] - q[c];
        s += d * d;
    }
    return s;
}

/* Squared distance from q to the box [lo, hi], per coordinate the gap lo − q or q − hi (0 inside),
 * summed in the same order as dist2: never above dist2 of a point of the box. */
static inline double box_dist2(const double *lo, const double *hi, const double *q, int dim)
{
    double s = 0.0;
    for (int c = 0; c < dim; ++c) {
        double d = 0.0;
        if (q[c] < lo[c]) d = lo[c] - q[c];
        else if (q[c] > hi[c]) d = q[c] - hi[c];
        s += d * d;
    }
    return s;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

ct_status ct_neighbors_query(const ct_neighbors *nb, const double *q, double R, ct_neighbor_list *out)
{
    out->n = 0;
    const double R2 = R * R;
    if (!(R > 0.0) || nb->n == 0) return CT_OK;
    const int dim = nb->dim;
    const ct_bvh *t = &nb->bvh;
    int stack[STACK_MAX], top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const ct_bvh_node *nd = &t->nodes[stack[--top]];
        if (!(box_dist2(nd->lo, nd->hi, q, dim) < R2)) continue;
        if (nd->left >= 0) {
            if (top + 2 > STACK_MAX) return CT_ENOMEM; /* (cannot happen: depth bound above) */
            stack[top++] = nd->right;
            stack[top++] = nd->left;
            continue;
        }
        for (int k = nd->first; k < nd->first + nd->count; ++k)
            if (dist2(t->box + 6 * (size_t)k, q, dim) < R2 && push(out, t->order[k])) return CT_ENOMEM;
    }
    /* by increasing index; the distances read again from the leaf-ordered positions */
    int sorted = 1;
    for (int k = 1; k < out->n && sorted; ++k) sorted = out->idx[k - 1] < out->idx[k];
    if (!sorted) qsort(out->idx, (size_t)out->n, sizeof *out->idx, cmp_int);
    for (int k = 0; k < out->n; ++k) out->d2[k] = dist2(t->box + 6 * (size_t)nb->slot[out->idx[k]], q, dim);
    return CT_OK;
}
