/* ct_bvh.h — bounding volume hierarchy over axis-aligned boxes (2D or 3D), and box-overlap
 * pair queries. Used by the broad phase (ct_broadphase.h) and the intersection verifier.
 *
 * Boxes are given as n*2*dim doubles: box i is lo = boxes[2*dim*i .. +dim), hi = the next dim.
 * Overlap is closed (touching boxes overlap). Results are deterministic: independent of the
 * thread count and sorted.
 * layer: contact */
#ifndef CT_BVH_H
#define CT_BVH_H

#include "ct_status.h"

#include <stdint.h>

typedef struct ct_bvh_node {
    double lo[3], hi[3];
    int left, right; /* children (node indices), or -1 for a leaf */
    int first, count;/* leaf: range in ct_bvh.order (internal nodes: the range of their
                        subtree, which is contiguous too) */
} ct_bvh_node;

typedef struct ct_bvh {
    int dim, n;         /* n boxes */
    int nnodes;
    ct_bvh_node *nodes; /* nodes[0] is the root (when n > 0) */
    int *order;         /* box indices, leaf ranges point into it */
    double *box;        /* n*6: box order[k] as lo[3], hi[3] (unused axes 0), in leaf order;
                           kept so pair queries need only the trees */
    int cap;            /* allocated boxes (a rebuild reuses the arrays) */
    uint64_t *code;     /* build scratch, cap each: Morton codes, the sort's second buffer */
    uint64_t *code2;
    int *id2;
} ct_bvh;

void ct_bvh_init(ct_bvh *b);
/* b must have been initialised (ct_bvh_init) or built before; a rebuild reuses its memory.
 * Boxes must be finite with lo <= hi. */
ct_status ct_bvh_build(ct_bvh *b, int dim, int n, const double *boxes);
/* The same with a thread count for the Morton codes of large inputs (<= 0: the OpenMP default;
 * the sort and the splits are serial); the tree does not depend on it. */
ct_status ct_bvh_build_threads(ct_bvh *b, int dim, int n, const double *boxes, int threads);
/* New boxes for the same primitives (same n): recompute node bounds bottom-up, keep the
 * topology. Cheaper than a rebuild when the primitives moved a little. */
void ct_bvh_refit(ct_bvh *b, const double *boxes);
void ct_bvh_free(ct_bvh *b);

/* A growable list of index pairs. */
typedef struct ct_pair_list {
    long n, cap;
    int *ij; /* 2*n */
} ct_pair_list;

void ct_pair_list_init(ct_pair_list *l);
void ct_pair_list_free(ct_pair_list *l);
ct_status ct_pair_list_push(ct_pair_list *l, int i, int j);
ct_status ct_pair_list_reserve(ct_pair_list *l, long cap); /* capacity >= cap pairs */

/* Keep a candidate pair (i from tree a, j from tree b)? 1 = keep. Called from several
 * threads at once: it must only read shared state. */
typedef int (*ct_pair_filter)(int i, int j, void *ctx);

/* Every pair (i, j), box i of tree a overlapping box j of tree b, that passes the filter
 * (NULL = keep all), appended to out in increasing (i, j) order. With b == a (self query)
 * only i < j is reported. `threads` ≤ 0 means the OpenMP default. */
ct_status ct_bvh_pairs(const ct_bvh *a, const ct_bvh *b, ct_pair_filter f, void *ctx,
                       int threads, ct_pair_list *out);

/* The per-thread lists of a parallel pair query, kept between queries so that repeated
 * queries (one per Newton iteration) allocate nothing once the lists have grown. */
typedef struct ct_bvh_scratch {
    int n;
    ct_pair_list *list;
} ct_bvh_scratch;
void ct_bvh_scratch_init(ct_bvh_scratch *w);
void ct_bvh_scratch_free(ct_bvh_scratch *w);
/* ct_bvh_pairs with its scratch (NULL: a temporary one). */
ct_status ct_bvh_pairs_with(const ct_bvh *a, const ct_bvh *b, ct_pair_filter f, void *ctx,
                            int threads, ct_pair_list *out, ct_bvh_scratch *w);

#endif
