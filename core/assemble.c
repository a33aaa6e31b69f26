/* assemble.c — assembling the Newton matrix.
 *
 * The pattern of mass + elasticity is fixed for a run: it is built once, and every entry
 * ("base entry") keeps the list of local element-Hessian values that sum into it. Filling
 * the matrix is then a parallel gather over base entries in a fixed order (deterministic
 * for any thread count). Model (contact) Hessian triplets are mapped through J and added
 * serially; if one falls outside the pattern, the pattern grows (never shrinks), which
 * keeps CHOLMOD's symbolic analysis valid for as long as possible. */
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
    ct_triplets_free(&as->tq);
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

ct_status ct_assembly_fill(ct_assembly *as, const ct_sim *s, const double *q, double w_mass, double w_el,
                           const ct_triplets *Hc, double w_c, int project, double *t_local, ct_diag *diag)
{
    int dim = s->dim;
    double t0 = omp_get_wtime();
    ct_status st = s->el.ne ? ct_elastic_hessian_local(&s->el, q, as->Hloc, project) : CT_OK;
    if (t_local) *t_local = omp_get_wtime() - t0;
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
        ct_triplets_clear(&as->tq);
        const ct_dofs *D = &s->dofs;
        for (size_t k = 0; k < Hc->n; ++k) {
            int vi = Hc->row[k] / dim, ci = Hc->row[k] % dim, vj = Hc->col[k] / dim, cj = Hc->col[k] % dim;
            for (int t1 = D->jptr[vi]; t1 < D->jptr[vi + 1]; ++t1) {
                int r = as->free_index[D->jcol[t1] * dim + ci];
                if (r < 0) continue;
                for (int t2 = D->jptr[vj]; t2 < D->jptr[vj + 1]; ++t2) {
                    int c = as->free_index[D->jcol[t2] * dim + cj];
                    if (c < 0 || r > c) continue;
                    long slot = ct_csc_find(&as->A, r, c);
                    if (slot >= 0) as->A.val[slot] += w_c * (D->jw[t1] * Hc->val[k] * D->jw[t2]);
                    else if (ct_triplets_add(&as->tq, r, c, 0.0) != CT_OK)
                        return ct_diag_add(diag, CT_ENOMEM, "assembly: out of memory");
                }
            }
        }
        if (as->tq.n == 0) return CT_OK;
        st = grow_pattern(as, &as->tq);
        if (st != CT_OK) return ct_diag_add(diag, st, "assembly: cannot grow the sparsity pattern");
    }
}
