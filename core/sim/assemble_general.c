/* assemble_general.c — the general path of the model's Hessian triplets into the Newton
 * matrix: triplet by triplet, each looked up in the pattern, through the embedding J where a
 * vertex does not map one to one (embedded bodies); the map of the one-to-one dofs (xfree),
 * which the slot path uses too. */
#include "sim/assemble_internal.h"

#include <omp.h>
#include <stdlib.h>

/* Slot of (r, c) in A; `hint` is the previous slot found in column c (or -1): the triplets of
 * one stencil block come column by column with consecutive rows, so it is usually hint + 1. */
static inline long find_hinted(const ct_csc *A, int r, int c, long hint)
{
    if (hint >= 0 && hint + 1 < A->colptr[c + 1] && A->rowind[hint + 1] == r) return hint + 1;
    return ct_csc_find(A, r, c);
}

/* The map of full-space dofs to free indices (assemble_internal.h). */
ct_status ct_assembly_build_xfree(ct_assembly *as, const ct_sim *s)
{
    const int dim = s->dim;
    const ct_dofs *D = &s->dofs;
    free(as->xfree);
    as->xfree = malloc(((size_t)D->nx * dim + 1) * sizeof *as->xfree);
    if (!as->xfree) return CT_ENOMEM;
    for (int v = 0; v < D->nx; ++v) {
        const int single = D->jptr[v + 1] - D->jptr[v] == 1 && D->jw[D->jptr[v]] == 1.0;
        for (int k = 0; k < dim; ++k)
            as->xfree[(size_t)v * dim + k] = single ? as->free_index[D->jcol[D->jptr[v]] * dim + k] : -2;
    }
    return CT_OK;
}

/* The model's triplets, mapped through J onto the free dofs. Each thread owns a range of
 * matrix columns (balanced by stored entries), reads every triplet and adds those that land in
 * its columns straight into A: every entry receives its contributions in triplet order, so
 * the sums are the same for any thread count, and no buffer is needed. A full-space dof
 * whose vertex has the single weight 1 in J (every vertex of an ordinary body) maps to its
 * free index through xfree[] directly; others (embedded bodies) expand through J.
 * Entries missing from the pattern are collected per thread (their order does not matter:
 * ct_assembly_grow_pattern sorts them). */
ct_status ct_assembly_map_general(ct_assembly *as, const ct_sim *s, const ct_triplets *Hc, double w_c)
{
    const int dim = s->dim;
    const ct_dofs *D = &s->dofs;
    ct_csc *A = &as->A;
    if (!as->xfree && ct_assembly_build_xfree(as, s) != CT_OK) return CT_ENOMEM;
    const int *xf = as->xfree;
    const int nth = omp_get_max_threads();
    ct_triplets *miss = malloc((size_t)nth * sizeof *miss);
    int *cbnd = malloc(((size_t)nth + 1) * sizeof *cbnd);
    if (!miss || !cbnd) {
        free(miss);
        free(cbnd);
        return CT_ENOMEM;
    }
    /* column ranges with about equal numbers of stored entries */
    const long nnz = (long)ct_csc_nnz(A);
    cbnd[0] = 0;
    for (int t = 1, c = 0; t < nth; ++t) {
        const long target = nnz * t / nth;
        while (c < A->ncol && A->colptr[c] < target) ++c;
        cbnd[t] = c;
    }
    cbnd[nth] = A->ncol;
    for (int t = 0; t < nth; ++t) ct_triplets_init(&miss[t]);
    int err = 0;
#pragma omp parallel num_threads(nth) reduction(| : err)
    {
        const int t = omp_get_thread_num();
        const int c_lo = cbnd[t], c_hi = cbnd[t + 1];
        ct_triplets *mt = &miss[t];
        long hint = -1;
        int hint_col = -1;
        for (size_t k = 0; k < Hc->n && !err; ++k) {
            const int xc = xf[Hc->col[k]], xr = xf[Hc->row[k]];
            if (xc >= 0 && xr >= 0) { /* the common case: both vertices map one to one */
                if (xc < c_lo || xc >= c_hi || xr > xc) continue;
                const long sl = find_hinted(A, xr, xc, xc == hint_col ? hint : -1);
                if (sl >= 0) {
                    A->val[sl] += w_c * Hc->val[k];
                    hint = sl, hint_col = xc;
                } else if (ct_triplets_add(mt, xr, xc, 0.0) != CT_OK) {
                    err = 1;
                }
                continue;
            }
            if (xc == -1 || xr == -1) continue; /* a fixed dof */
            const int vi = Hc->row[k] / dim, ci = Hc->row[k] % dim, vj = Hc->col[k] / dim, cj = Hc->col[k] % dim;
            for (int t2 = D->jptr[vj]; t2 < D->jptr[vj + 1]; ++t2) {
                const int c = as->free_index[D->jcol[t2] * dim + cj];
                if (c < c_lo || c >= c_hi) continue; /* also c < 0 (c_lo >= 0) */
                for (int t1 = D->jptr[vi]; t1 < D->jptr[vi + 1]; ++t1) {
                    const int r = as->free_index[D->jcol[t1] * dim + ci];
                    if (r < 0 || r > c) continue;
                    const long sl = ct_csc_find(A, r, c);
                    if (sl >= 0) A->val[sl] += w_c * (D->jw[t1] * Hc->val[k] * D->jw[t2]);
                    else if (ct_triplets_add(mt, r, c, 0.0) != CT_OK) err = 1;
                }
            }
        }
    }
    for (int t = 0; t < nth && !err; ++t)
        if (miss[t].n && ct_triplets_append(&as->tq, &miss[t]) != CT_OK) err = 1;
    for (int t = 0; t < nth; ++t) ct_triplets_free(&miss[t]);
    free(miss);
    free(cbnd);
    return err ? CT_ENOMEM : CT_OK;
}
