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
typedef struct ct_triplets ct_triplets;

/* A run of triplets that one dense block wrote: the entries ct_triplets_add_block writes for
 * (v[0..nv), nv, dim) with the list's `upper`, in its order, starting at triplet k0 (v[a] = -1
 * for a >= nv, so that equal blocks compare equal as memory from nv on). */
typedef struct ct_triplet_block {
    size_t k0;
    int nv, dim;
    int v[4];
} ct_triplet_block;

/* The block table (blk[0..nblk), k0 ascending, runs disjoint) describes some of the triplets
 * by their stencils; the others are plain. It lets a consumer find where each block goes
 * without reading its rows and columns (the core's slot cache, core/sim/assemble_slots.c).
 * ct_triplets_add_block records its blocks (nv <= 4), ct_triplets_append shifts the source's,
 * clear() empties it; a producer writing the arrays itself may record with
 * ct_triplets_note_block. Every recorded block must match the triplets it names.
 * `rows_lazy` is set by a consumer that reads blocks from the table (after clear(), which
 * resets it, as init() does): a producer may then leave the rows and columns of the blocks it
 * notes unwritten, and ct_triplets_fill_rows writes them when they are needed after all. */
struct ct_triplets {
    int *row, *col;
    double *val;
    size_t n, cap;
    int upper;
    ct_triplet_block *blk;
    size_t nblk, blk_cap;
    int rows_lazy;
};

void ct_triplets_init(ct_triplets *t);
void ct_triplets_free(ct_triplets *t);
void ct_triplets_clear(ct_triplets *t);
ct_status ct_triplets_reserve(ct_triplets *t, size_t cap);
ct_status ct_triplets_add(ct_triplets *t, int r, int c, double v);
/* Add a dense symmetric block over vertices idx[0..nv) with `dim` components each:
 * H is (nv*dim) x (nv*dim) column-major, local dof a*dim+i maps to global idx[a]*dim+i.
 * With t->upper only the entries with global row <= col are added. */
ct_status ct_triplets_add_block(ct_triplets *t, const int *idx, int nv, int dim, const double *H);
/* Append all entries of `src` (e.g. merge per-thread lists in a fixed order), and its blocks. */
ct_status ct_triplets_append(ct_triplets *t, const ct_triplets *src);
/* The number of triplets a block over v[0..nv) with `dim` components writes (with `upper`: the
 * entries with row <= col). */
size_t ct_triplet_block_count(const int *v, int nv, int dim, int upper);
/* The order in which a producer with `upper` writes the values of a dense block over nv
 * distinct vertices v[0..nv) (1 <= nv <= 4, dim 2 or 3): the positions in the column-major
 * (nv·dim)² block of its *count triplets (ct_triplet_block_count), in the order of
 * ct_triplets_add_block, so that value t is H[order[t]]. NULL when vertices repeat or the sizes
 * are out of range (the producer then walks the block itself). Without `upper` the order is the
 * block's own, column after column. */
const unsigned char *ct_triplet_block_order(const int *v, int nv, int dim, size_t *count);
/* Write the block H over v[0..nv) (as ct_triplets_add_block: `dim` components per vertex, with
 * t->upper only row <= col) at triplets k0.. of room the caller reserved and counted with
 * ct_triplet_block_count; with t->rows_lazy only the values (by ct_triplet_block_order), unless
 * nv > 4. Writes nothing else in t, so threads may fill disjoint ranges of one list. */
void ct_triplets_put_block(ct_triplets *t, size_t k0, const int *v, int nv, int dim, const double *H);
/* Record that the triplets from k0 on are the block over v[0..nv) (nv <= 4; larger blocks are
 * not recorded: they stay plain, so their rows must be written even with rows_lazy). Blocks are
 * noted in ascending k0; room for `more` blocks is kept when growing (the caller's count of what
 * follows). */
ct_status ct_triplets_note_block(ct_triplets *t, size_t k0, const int *v, int nv, int dim, size_t more);
/* The rows and columns of block b (the order of ct_triplets_add_block with `upper`) into
 * row[0..count), col[0..count); returns the count. */
size_t ct_triplet_block_rows(const ct_triplet_block *b, int upper, int *row, int *col);
/* Write the rows and columns of every noted block (t->rows_lazy becomes 0). */
void ct_triplets_fill_rows(ct_triplets *t);

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
