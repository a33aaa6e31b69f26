/* assemble.c — assembling the Newton matrix.
 *
 * The pattern of mass + elasticity is fixed for a run: it is built once, and every entry
 * ("base entry") keeps the list of local element-Hessian values that sum into it. Filling
 * the matrix is then a parallel gather over base entries in a fixed order (deterministic
 * for any thread count). Model (contact) Hessian triplets are mapped through J and added in
 * triplet order (map_contact); if one falls outside the pattern, the pattern grows (never
 * shrinks), which keeps CHOLMOD's symbolic analysis valid for as long as possible. */
#include "assemble.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

void ct_assembly_free(ct_assembly *as)
{
    free(as->free_index);
    free(as->free_dof);
    ct_csc_free(&as->A);
    free(as->base_slot);
    free(as->base_mass);
    free(as->gptr);
    free(as->gsrc);
    free(as->Hloc);
    free(as->xfree);
    ct_triplets_free(&as->tq);
    ct_triplets_free(&as->hc);
    memset(as, 0, sizeof *as);
}

ct_status ct_assembly_build(ct_assembly *as, const ct_sim *s, ct_diag *diag)
{
    memset(as, 0, sizeof *as);
    int dim = s->dim, ndof = s->ndof;
    as->ndof = ndof;
    as->free_index = malloc(((size_t)ndof + 1) * sizeof *as->free_index);
    as->free_dof = malloc(((size_t)ndof + 1) * sizeof *as->free_dof);
    if (!as->free_index || !as->free_dof) return ct_diag_add(diag, CT_ENOMEM, "assembly: out of memory");
    for (int i = 0; i < ndof; ++i) {
        as->free_index[i] = s->fixed[i] ? -1 : as->nfree;
        if (!s->fixed[i]) as->free_dof[as->nfree++] = i;
    }
    const int *fi = as->free_index;
    const ct_elastic *el = &s->el;
    int nv = dim + 1, nd = dim * nv;
    /* pattern, with the mass values already summed into it (elastic entries add 0) */
    ct_triplets pat;
    ct_triplets_init(&pat);
    const ct_csc *M = &s->Mq_csc;
    for (int b = 0; b < M->ncol; ++b)
        for (int k = M->colptr[b]; k < M->colptr[b + 1]; ++k)
            for (int c = 0; c < dim; ++c) {
                int r = fi[M->rowind[k] * dim + c], cc = fi[b * dim + c];
                if (r >= 0 && cc >= 0 && r <= cc && ct_triplets_add(&pat, r, cc, M->val[k]) != CT_OK) goto oom;
            }
    for (int e = 0; e < el->ne; ++e) {
        const int *v = el->elem + (size_t)e * nv;
        for (int lb = 0; lb < nd; ++lb) {
            int cc = fi[v[lb / dim] * dim + lb % dim];
            if (cc < 0) continue;
            for (int la = 0; la < nd; ++la) {
                int r = fi[v[la / dim] * dim + la % dim];
                if (r >= 0 && r <= cc && ct_triplets_add(&pat, r, cc, 0.0) != CT_OK) goto oom;
            }
        }
    }
    if (ct_csc_from_triplets(&as->A, as->nfree, as->nfree, &pat, 1) != CT_OK) goto oom;
    ct_triplets_free(&pat);
    as->nbase = (int)ct_csc_nnz(&as->A);
    as->base_slot = malloc(((size_t)as->nbase + 1) * sizeof *as->base_slot);
    as->base_mass = calloc((size_t)as->nbase + 1, sizeof *as->base_mass);
    as->gptr = calloc((size_t)as->nbase + 2, sizeof *as->gptr);
    if (!as->base_slot || !as->base_mass || !as->gptr) goto oom;
    for (int i = 0; i < as->nbase; ++i) as->base_slot[i] = i;
    memcpy(as->base_mass, as->A.val, (size_t)as->nbase * sizeof *as->base_mass);
    /* gather lists: two passes over the elements (count, fill) in element order */
    for (int pass = 0; pass < 2; ++pass) {
        for (int e = 0; e < el->ne; ++e) {
            const int *v = el->elem + (size_t)e * nv;
            for (int lb = 0; lb < nd; ++lb) {
                int cc = fi[v[lb / dim] * dim + lb % dim];
                if (cc < 0) continue;
                for (int la = 0; la < nd; ++la) {
                    int r = fi[v[la / dim] * dim + la % dim];
                    if (r < 0 || r > cc) continue;
                    long slot = ct_csc_find(&as->A, r, cc);
                    if (pass == 0) as->gptr[slot + 1]++;
                    else as->gsrc[as->gptr[slot]++] = (int)((size_t)e * nd * nd + (size_t)la + (size_t)nd * lb);
                }
            }
        }
        if (pass == 0) {
            for (int i = 0; i < as->nbase; ++i) as->gptr[i + 1] += as->gptr[i];
            as->gsrc = malloc(((size_t)as->gptr[as->nbase] + 1) * sizeof *as->gsrc);
            if (!as->gsrc) goto oom;
        } else {
            for (int i = as->nbase; i > 0; --i) as->gptr[i] = as->gptr[i - 1];
            as->gptr[0] = 0;
        }
    }
    as->Hloc = malloc(((size_t)el->ne * nd * nd + 1) * sizeof *as->Hloc);
    if (!as->Hloc) goto oom;
    ct_triplets_init(&as->tq);
    ct_triplets_init(&as->hc);
    as->pattern_changed = 1;
    return CT_OK;
oom:
    ct_triplets_free(&pat);
    return ct_diag_add(diag, CT_ENOMEM, "assembly: out of memory (%d dofs, %d elements)", ndof, el->ne);
}

/* Grow the pattern by the (row, col) pairs in `extra` (values ignored). */
static ct_status grow_pattern(ct_assembly *as, const ct_triplets *extra)
{
    ct_triplets all;
    ct_triplets_init(&all);
    size_t nnz = ct_csc_nnz(&as->A);
    if (ct_triplets_reserve(&all, nnz + extra->n) != CT_OK) return CT_ENOMEM;
    for (int c = 0; c < as->A.ncol; ++c)
        for (int k = as->A.colptr[c]; k < as->A.colptr[c + 1]; ++k) ct_triplets_add(&all, as->A.rowind[k], c, 0.0);
    for (size_t k = 0; k < extra->n; ++k) ct_triplets_add(&all, extra->row[k], extra->col[k], 0.0);
    ct_csc B;
    ct_csc_init(&B);
    ct_status st = ct_csc_from_triplets(&B, as->A.nrow, as->A.ncol, &all, 1);
    ct_triplets_free(&all);
    if (st != CT_OK) return st;
    /* old slot -> new slot, column by column */
    int *remap = malloc((nnz + 1) * sizeof *remap);
    if (!remap) {
        ct_csc_free(&B);
        return CT_ENOMEM;
    }
    for (int c = 0; c < as->A.ncol; ++c)
        for (int k = as->A.colptr[c]; k < as->A.colptr[c + 1]; ++k) remap[k] = (int)ct_csc_find(&B, as->A.rowind[k], c);
    for (int i = 0; i < as->nbase; ++i) as->base_slot[i] = remap[as->base_slot[i]];
    free(remap);
    ct_csc_free(&as->A);
    as->A = B;
    as->pattern_changed = 1;
    return CT_OK;
}

/* The model's triplets, mapped through J onto the free dofs. Each thread owns a range of
 * matrix columns (balanced by stored entries), reads every triplet and adds those that land in
 * its columns straight into A: every entry receives its contributions in triplet order, so
 * the sums are the same for any thread count, and no buffer is needed. A full-space dof
 * whose vertex has the single weight 1 in J (every vertex of an ordinary body) maps to its
 * free index through xfree[] directly; others (embedded bodies) expand through J.
 * Entries missing from the pattern are collected per thread (their order does not matter:
 * grow_pattern sorts them). */

/* Slot of (r, c) in A; `hint` is the previous slot found in column c (or -1): the triplets of
 * one stencil block come column by column with consecutive rows, so it is usually hint + 1. */
static inline long find_hinted(const ct_csc *A, int r, int c, long hint)
{
    if (hint >= 0 && hint + 1 < A->colptr[c + 1] && A->rowind[hint + 1] == r) return hint + 1;
    return ct_csc_find(A, r, c);
}

/* xfree[i] for every full-space dof i: the free index of its q dof when its vertex maps with
 * the single weight 1 (−1 if that dof is fixed), −2 when the vertex needs the general path. */
static ct_status build_xfree(ct_assembly *as, const ct_sim *s)
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

static ct_status map_contact(ct_assembly *as, const ct_sim *s, const ct_triplets *Hc, double w_c)
{
    const int dim = s->dim;
    const ct_dofs *D = &s->dofs;
    ct_csc *A = &as->A;
    if (!as->xfree && build_xfree(as, s) != CT_OK) return CT_ENOMEM;
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
        if (ct_triplets_append(&as->tq, &miss[t]) != CT_OK) err = 1;
    for (int t = 0; t < nth; ++t) ct_triplets_free(&miss[t]);
    free(miss);
    free(cbnd);
    return err ? CT_ENOMEM : CT_OK;
}

ct_status ct_assembly_fill(ct_assembly *as, const ct_sim *s, const double *q, double w_mass, double w_el,
                           const ct_triplets *Hc, double w_c, int project, double *t_local, double *t_contact,
                           ct_diag *diag)
{
    double t0 = omp_get_wtime();
    ct_status st = s->el.ne ? ct_elastic_hessian_local(&s->el, q, as->Hloc, project) : CT_OK;
    if (t_local) *t_local = omp_get_wtime() - t0;
    if (t_contact) *t_contact = 0.0;
    if (st != CT_OK) return ct_diag_add(diag, st, "assembly: element Hessians failed");
    for (;;) {
        memset(as->A.val, 0, ct_csc_nnz(&as->A) * sizeof *as->A.val);
        const double *H = as->Hloc;
#pragma omp parallel for schedule(static)
        for (int i = 0; i < as->nbase; ++i) {
            double sum = 0.0;
            for (int t = as->gptr[i]; t < as->gptr[i + 1]; ++t) sum += H[as->gsrc[t]];
            as->A.val[as->base_slot[i]] = w_mass * as->base_mass[i] + w_el * sum;
        }
        if (!Hc || Hc->n == 0) return CT_OK;
        const double tc = omp_get_wtime();
        ct_triplets_clear(&as->tq);
        st = map_contact(as, s, Hc, w_c);
        if (st == CT_OK && as->tq.n) st = grow_pattern(as, &as->tq);
        if (t_contact) *t_contact += omp_get_wtime() - tc;
        if (st != CT_OK) return ct_diag_add(diag, st, "assembly: cannot map the contact Hessian (out of memory)");
        if (as->tq.n == 0) return CT_OK;
    }
}
