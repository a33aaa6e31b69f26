/* ct_neighbors.h — fixed-radius neighbours among sample points: every sample s_i with
 * |s_i − q| < R for a query point q (2D or 3D), for point-cloud contact models such as the robust
 * IMLS surface of Du et al., whose value at q is a weighted sum over the samples within the
 * kernel radius.
 *
 * The samples are the leaves of a ct_bvh of point boxes (ct_bvh.h: Morton-ordered, ≤ 4 samples per
 * leaf), built once; a query descends the nodes whose box is nearer than R. When the samples
 * move, ct_neighbors_refit updates the node bounds in O(n) with the topology kept (the queries
 * stay exact, only slower if the samples move far from their neighbours), and ct_neighbors_build
 * again rebuilds the tree for new positions or a new count (reusing the memory).
 *
 * Exactness and order: the test is |s − q|² < R², the squared distance summed over the
 * coordinates in order (x, y[, z]) as written in ct_neighbors_query; a node is skipped only when
 * its box's squared distance, computed the same way, is ≥ R², which in floating point never
 * exceeds the squared distance of a sample inside it (rounding is monotone). The result is
 * therefore exactly the brute-force answer, listed by increasing sample index, independent of
 * the tree and of the thread count. R ≤ 0 (or NaN) finds nothing; R = ∞ finds every sample.
 * Queries only read the structure: several threads may query at once, each with its own result
 * list.
 * layer: contact */
#ifndef CT_NEIGHBORS_H
#define CT_NEIGHBORS_H

#include "ct_bvh.h"
#include "ct_status.h"

#include <stddef.h>

typedef struct ct_neighbors {
    int dim, n;       /* dimension, number of samples */
    ct_bvh bvh;       /* over the samples' point boxes; bvh.box holds the positions in leaf order */
    int *slot;        /* n: the leaf-order position of each sample (bvh.order inverted) */
    double *boxes;    /* n·2·dim: the point boxes handed to the tree */
    size_t slot_cap, box_cap;
} ct_neighbors;

/* A result: n sample indices in increasing order, and their squared distances to q. */
typedef struct ct_neighbor_list {
    int n, cap;
    int *idx;
    double *d2;
} ct_neighbor_list;

void ct_neighbors_init(ct_neighbors *nb);
void ct_neighbors_free(ct_neighbors *nb);

/* Build (or rebuild) over the n samples pts (n·dim coordinates, finite; dim 2 or 3; n ≥ 0,
 * duplicates allowed). threads: the tree build's (ct_parallel.h); the tree does not depend on
 * it. CT_EINPUT for a bad dim, n < 0 or a non-finite coordinate. */
ct_status ct_neighbors_build(ct_neighbors *nb, int dim, int n, const double *pts, int threads);

/* The same n samples at new positions pts: node bounds refitted, topology kept. */
ct_status ct_neighbors_refit(ct_neighbors *nb, const double *pts);

void ct_neighbor_list_init(ct_neighbor_list *l);
void ct_neighbor_list_free(ct_neighbor_list *l);

/* Every sample i with |s_i − q|² < R² (q: dim coordinates) into out (emptied first), by
 * increasing i, with its squared distance. */
ct_status ct_neighbors_query(const ct_neighbors *nb, const double *q, double R, ct_neighbor_list *out);

#endif
