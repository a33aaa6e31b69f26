/* assemble.c — assembling the Newton matrix: the fixed pattern of mass + elasticity, its
 * growth, the gather of the base values and ct_assembly_fill, which adds the model's triplets
 * by one of two paths (assemble_slots.c, assemble_general.c).
 *
 * The pattern of mass + elasticity is fixed for a run: it is built once, and every entry
 * ("base entry") keeps the list of local element-Hessian values that sum into it. Filling
 * the matrix is then a parallel gather over base entries in a fixed order (deterministic
 * for any thread count). Model (contact) Hessian triplets are mapped through J and added in
 * triplet order; if one falls outside the pattern, the pattern grows (never shrinks), which
 * keeps CHOLMOD's symbolic analysis valid for as long as possible.
 *
 * Model triplets whose dofs all map one to one (every body but embedded ones) take the slot
 * path (assemble_slots.c): first the slot in A of every triplet (ct_assembly_map_slots:
 * pattern growth happens there, before any value is added), then the base gather, then the
 * triplets' values are scattered in triplet order (ct_assembly_scatter_slots). The slots are
 * cached with the triplets' (row, col) sequence: when the next Hc has the same sequence
 * (between Newton iterations once the collision set has settled), no lookup is needed; when
 * it differs, its terms (chunks) equal to recorded ones take their slots, and only the others
 * are looked up, mostly by verified predictions from the block structure of the terms. Other
 * triplets take the general path (assemble_general.c: lookups per triplet, through J). Both
 * add the same values in the same order. */
#include "sim/assemble_internal.h"

#include <omp.h>
#include <limits.h>
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
    free(as->cm_row);
    free(as->cm_col);
    free(as->cm_slot);
    ct_assembly_cache_free(as);
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
static int cmp_int(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The pattern grown by the pairs of `extra` (assemble_internal.h). */
ct_status ct_assembly_grow_pattern(ct_assembly *as, const ct_triplets *extra, int **remap_out)
{
    const ct_csc *A = &as->A;
    const int ncol = A->ncol;
    const size_t nnz = ct_csc_nnz(A), m = extra->n;
    size_t *beg = malloc(((size_t)2 * ncol + 2) * sizeof *beg); /* beg[0..ncol], then end[0..ncol) */
    int *rows = malloc((m + 1) * sizeof *rows);
    int *mark = malloc(((size_t)A->nrow + 1) * sizeof *mark);
    int *remap = malloc((nnz + 1) * sizeof *remap);
    ct_csc B;
    ct_csc_init(&B);
    ct_status st = CT_ENOMEM;
    if (!beg || !rows || !mark || !remap) goto out;
    size_t *end = beg + ncol + 1;
    memset(beg, 0, ((size_t)ncol + 1) * sizeof *beg);
    for (size_t k = 0; k < m; ++k)
        if (extra->row[k] <= extra->col[k]) beg[extra->col[k] + 1]++;
    for (int c = 0; c < ncol; ++c) beg[c + 1] += beg[c];
    for (int c = 0; c < ncol; ++c) end[c] = beg[c];
    for (size_t k = 0; k < m; ++k)
        if (extra->row[k] <= extra->col[k]) rows[end[extra->col[k]]++] = extra->row[k];
    for (int r = 0; r < A->nrow; ++r) mark[r] = -1;
    size_t add = 0;
    for (int c = 0; c < ncol; ++c) {
        if (end[c] == beg[c]) continue; /* nothing for this column */
        for (int k = A->colptr[c]; k < A->colptr[c + 1]; ++k) mark[A->rowind[k]] = c;
        size_t u = beg[c];
        for (size_t k = beg[c]; k < end[c]; ++k)
            if (mark[rows[k]] != c) {
                mark[rows[k]] = c;
                rows[u++] = rows[k];
            }
        end[c] = u;
        if (u - beg[c] > 1) qsort(rows + beg[c], u - beg[c], sizeof *rows, cmp_int);
        add += u - beg[c];
    }
    if (nnz + add >= (size_t)INT_MAX) goto out;
    B.nrow = A->nrow;
    B.ncol = ncol;
    B.colptr = malloc(((size_t)ncol + 1) * sizeof *B.colptr);
    B.rowind = malloc((nnz + add + 1) * sizeof *B.rowind);
    B.val = calloc(nnz + add + 1, sizeof *B.val);
    if (!B.colptr || !B.rowind || !B.val) goto out;
    int z = 0;
    for (int c = 0; c < ncol; ++c) {
        B.colptr[c] = z;
        int i = A->colptr[c];
        const int e = A->colptr[c + 1];
        size_t x = beg[c];
        const size_t xe = end[c];
        if (x == xe) { /* the column as it is, shifted */
            memcpy(B.rowind + z, A->rowind + i, (size_t)(e - i) * sizeof *B.rowind);
            const int shift = z - i;
            for (; i < e; ++i) remap[i] = i + shift;
            z += e - A->colptr[c];
            continue;
        }
        while (i < e || x < xe) {
            if (x >= xe || (i < e && A->rowind[i] < rows[x])) {
                remap[i] = z;
                B.rowind[z++] = A->rowind[i++];
            } else {
                B.rowind[z++] = rows[x++];
            }
        }
    }
    B.colptr[ncol] = z;
    for (int i = 0; i < as->nbase; ++i) as->base_slot[i] = remap[as->base_slot[i]];
    if (as->cm_valid) {
        int *sl = as->cm_slot;
        for (size_t k = 0; k < as->cm_n; ++k)
            if (sl[k] >= 0) sl[k] = remap[sl[k]];
    }
    ct_csc_free(&as->A);
    as->A = B;
    ct_csc_init(&B);
    as->pattern_changed = 1;
    if (remap_out) {
        *remap_out = remap;
        remap = NULL;
    }
    st = CT_OK;
out:
    free(beg);
    free(rows);
    free(mark);
    free(remap);
    ct_csc_free(&B);
    return st;
}

/* A = w_mass M_q + w_el K on the current pattern (zero elsewhere). */
static void base_gather(ct_assembly *as, double w_mass, double w_el)
{
    memset(as->A.val, 0, ct_csc_nnz(&as->A) * sizeof *as->A.val);
    const double *H = as->Hloc;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < as->nbase; ++i) {
        double sum = 0.0;
        for (int t = as->gptr[i]; t < as->gptr[i + 1]; ++t) sum += H[as->gsrc[t]];
        as->A.val[as->base_slot[i]] = w_mass * as->base_mass[i] + w_el * sum;
    }
}

ct_status ct_assembly_fill(ct_assembly *as, const ct_sim *s, const double *q, double w_mass, double w_el,
                           ct_triplets *Hc, double w_c, int project, double *t_local, double *t_contact,
                           ct_diag *diag)
{
    double t0 = omp_get_wtime();
    ct_status st = s->el.ne ? ct_elastic_hessian_local(&s->el, q, as->Hloc, project) : CT_OK;
    if (t_local) *t_local = omp_get_wtime() - t0;
    if (t_contact) *t_contact = 0.0;
    if (st != CT_OK) return ct_diag_add(diag, st, "assembly: element Hessians failed");
    if (Hc && Hc->n) { /* the slot path */
        double tc = omp_get_wtime();
        int ready = 0;
        st = ct_assembly_map_slots(as, s, Hc, &ready);
        if (t_contact) *t_contact += omp_get_wtime() - tc;
        if (st != CT_OK) return ct_diag_add(diag, st, "assembly: cannot map the contact Hessian (out of memory)");
        if (ready) {
            base_gather(as, w_mass, w_el);
            tc = omp_get_wtime();
            ct_assembly_scatter_slots(as, Hc, w_c);
            if (t_contact) *t_contact += omp_get_wtime() - tc;
            return CT_OK;
        }
    }
    if (Hc) ct_triplets_fill_rows(Hc); /* the general path reads them */
    for (;;) { /* the general path */
        base_gather(as, w_mass, w_el);
        if (!Hc || Hc->n == 0) return CT_OK;
        const double tc = omp_get_wtime();
        ct_triplets_clear(&as->tq);
        st = ct_assembly_map_general(as, s, Hc, w_c);
        if (st == CT_OK && as->tq.n) st = ct_assembly_grow_pattern(as, &as->tq, NULL);
        if (t_contact) *t_contact += omp_get_wtime() - tc;
        if (st != CT_OK) return ct_diag_add(diag, st, "assembly: cannot map the contact Hessian (out of memory)");
        if (as->tq.n == 0) return CT_OK;
    }
}
