/* ct_sparse.h — triplet lists and compressed sparse column matrices.
 * layer: base */
#ifndef CT_SPARSE_H
#define CT_SPARSE_H

#include <stddef.h>
#include "ct_status.h"

/* A growable list of (row, col, value) entries; duplicates are summed on assembly.
 * Models add full symmetric blocks; the core keeps what it needs. `upper` is set by the
 * consumer of a symmetric matrix: 1 means it reads only the entries with row <= col, so a
 * producer may leave out the others (ct_triplets_add_block does; the core sets it for model
 * Hessians when x = q). clear() keeps it; init() sets it to 0. */
typedef struct ct_triplets {
    int *row, *col;
    double *val;
    size_t n, cap;
    int upper;
} ct_triplets;

void ct_triplets_init(ct_triplets *t);
void ct_triplets_free(ct_triplets *t);
void ct_triplets_clear(ct_triplets *t);
ct_status ct_triplets_reserve(ct_triplets *t, size_t cap);
ct_status ct_triplets_add(ct_triplets *t, int r, int c, double v);
/* Add a dense symmetric block over vertices idx[0..nv) with `dim` components each:
 * H is (nv*dim) x (nv*dim) column-major, local dof a*dim+i maps to global idx[a]*dim+i.
 * With t->upper only the entries with global row <= col are added. */
ct_status ct_triplets_add_block(ct_triplets *t, const int *idx, int nv, int dim, const double *H);
/* Append all entries of `src` (e.g. merge per-thread lists in a fixed order). */
ct_status ct_triplets_append(ct_triplets *t, const ct_triplets *src);

/* Compressed sparse column matrix, 0-based, rows sorted and unique within each column. */
typedef struct ct_csc {
    int nrow, ncol;
    int *colptr; /* ncol+1 */
    int *rowind; /* nnz */
    double *val; /* nnz */
} ct_csc;

void ct_csc_init(ct_csc *A);
void ct_csc_free(ct_csc *A);
static inline size_t ct_csc_nnz(const ct_csc *A) { return A->colptr ? (size_t)A->colptr[A->ncol] : 0; }
/* Index of entry (r, c) in rowind/val, or -1 if not in the pattern (binary search). */
long ct_csc_find(const ct_csc *A, int r, int c);
/* y = A x (y overwritten). If `sym_upper`, A stores only the upper triangle of a symmetric matrix. */
/* Compress triplets into A (A is reset). Duplicates are summed in input order, so the
 * result does not depend on anything but the triplet order. upper_only keeps r <= c. */
ct_status ct_csc_from_triplets(ct_csc *A, int nrow, int ncol, const ct_triplets *t, int upper_only);
void ct_csc_mult(const ct_csc *A, int sym_upper, const double *x, double *y);

#endif
