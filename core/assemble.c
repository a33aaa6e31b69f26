/* assemble.c — assembling the Newton matrix.
 *
 * The pattern of mass + elasticity is fixed for a run: it is built once, and every entry
 * ("base entry") keeps the list of local element-Hessian values that sum into it. Filling
 * the matrix is then a parallel gather over base entries in a fixed order (deterministic
 * for any thread count). Model (contact) Hessian triplets are mapped through J and added in
 * triplet order; if one falls outside the pattern, the pattern grows (never shrinks), which
 * keeps CHOLMOD's symbolic analysis valid for as long as possible.
 *
 * Model triplets whose dofs all map one to one (every body but embedded ones) take the slot
 * path: first the slot in A of every triplet (map_slots: pattern growth happens there, before
 * any value is added), then the base gather, then the triplets' values are scattered in
 * triplet order (scatter_slots). The slots are cached with the triplets' (row, col) sequence:
 * when the next Hc has the same sequence (between Newton iterations once the collision set
 * has settled), no lookup is needed. Other triplets take the general path (map_contact:
 * lookups per triplet, through J). Both add the same values in the same order. */
#include "assemble.h"

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

/* Grow the pattern by the (row, col) pairs in `extra` (values ignored; duplicates, pairs
 * already stored and lower-triangle pairs are dropped). The extra rows are bucketed by column,
 * deduplicated, sorted and merged into A's columns: the same pattern as rebuilding it from all
 * pairs, without sorting what is already sorted. With remap_out, *remap_out receives the old
 * slot -> new slot map (malloc'ed). A valid slot cache is moved to the new pattern. */
static ct_status grow_pattern(ct_assembly *as, const ct_triplets *extra, int **remap_out)
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

/* ---------- the general path ---------- */

/* The model's triplets, mapped through J onto the free dofs. Each thread owns a range of
 * matrix columns (balanced by stored entries), reads every triplet and adds those that land in
 * its columns straight into A: every entry receives its contributions in triplet order, so
 * the sums are the same for any thread count, and no buffer is needed. A full-space dof
 * whose vertex has the single weight 1 in J (every vertex of an ordinary body) maps to its
 * free index through xfree[] directly; others (embedded bodies) expand through J.
 * Entries missing from the pattern are collected per thread (their order does not matter:
 * grow_pattern sorts them). */
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
        if (miss[t].n && ct_triplets_append(&as->tq, &miss[t]) != CT_OK) err = 1;
    for (int t = 0; t < nth; ++t) ct_triplets_free(&miss[t]);
    free(miss);
    free(cbnd);
    return err ? CT_ENOMEM : CT_OK;
}

/* ---------- the slot path ---------- */

/* Room for n triplets in the slot cache (left invalid); CT_ENOMEM leaves it empty. */
static ct_status cache_reserve(ct_assembly *as, size_t n)
{
    as->cm_valid = 0;
    if (as->cm_slot && n <= as->cm_cap) return CT_OK;
    free(as->cm_row);
    free(as->cm_col);
    free(as->cm_slot);
    const size_t cap = n + n / 8 + 1;
    as->cm_row = malloc(cap * sizeof *as->cm_row);
    as->cm_col = malloc(cap * sizeof *as->cm_col);
    as->cm_slot = malloc(cap * sizeof *as->cm_slot);
    as->cm_cap = cap;
    if (!as->cm_row || !as->cm_col || !as->cm_slot) {
        free(as->cm_row);
        free(as->cm_col);
        free(as->cm_slot);
        as->cm_row = as->cm_col = as->cm_slot = NULL;
        as->cm_cap = 0;
        return CT_ENOMEM;
    }
    return CT_OK;
}

/* The slot in A of every triplet of Hc, in as->cm_slot (-1: skipped, a fixed dof or the lower
 * triangle), the pattern grown first if some are missing. *ready = 1 on success; *ready = 0
 * (the caller takes the general path) when a triplet needs J or there is no memory for the
 * slots. When Hc's (row, col) sequence is the one recorded at the previous call (compared in
 * chunks, in parallel), the recorded slots are used as they are; otherwise thread t looks up
 * the triplets [n t / nth, n (t + 1) / nth) and records them with their slots. */
static ct_status map_slots(ct_assembly *as, const ct_sim *s, const ct_triplets *Hc, int *ready)
{
    *ready = 0;
    if (!as->xfree && build_xfree(as, s) != CT_OK) return CT_ENOMEM;
    const size_t n = Hc->n;
    if (n == 0) return CT_OK;
    const int nth = omp_get_max_threads();
    const int *row = Hc->row, *col = Hc->col, *xf = as->xfree;
    as->cm_calls++;
    if (as->cm_valid && as->cm_n == n) {
        const int *orow = as->cm_row, *ocol = as->cm_col;
        int diff = 0;
#pragma omp parallel num_threads(nth) reduction(| : diff)
        {
            const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
            const size_t a = n * t / nt, b = n * (t + 1) / nt;
            if (b > a)
                diff = memcmp(row + a, orow + a, (b - a) * sizeof *row) != 0 ||
                       memcmp(col + a, ocol + a, (b - a) * sizeof *col) != 0;
        }
        if (!diff) {
            as->cm_hits++;
            *ready = 1;
            return CT_OK;
        }
    }
    if (cache_reserve(as, n) != CT_OK) return CT_OK;
    ct_triplets *miss = malloc((size_t)nth * sizeof *miss);
    if (!miss) return CT_ENOMEM;
    for (int t = 0; t < nth; ++t) ct_triplets_init(&miss[t]);
    const ct_csc *A = &as->A;
    int *crow = as->cm_row, *ccol = as->cm_col, *slot = as->cm_slot;
    int err = 0, general = 0, stop = 0;
#pragma omp parallel num_threads(nth) reduction(| : err, general)
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        const size_t a = n * t / nt, b = n * (t + 1) / nt;
        ct_triplets *mt = &miss[t];
        memcpy(crow + a, row + a, (b - a) * sizeof *row);
        memcpy(ccol + a, col + a, (b - a) * sizeof *col);
        long hint = -1;
        int hint_col = -1;
        for (size_t k = a; k < b; ++k) {
            const int xc = xf[col[k]], xr = xf[row[k]];
            int sl = -1;
            if (xc >= 0 && xr >= 0) {
                if (xr <= xc) {
                    const long f = find_hinted(A, xr, xc, xc == hint_col ? hint : -1);
                    if (f >= 0) {
                        sl = (int)f;
                        hint = f, hint_col = xc;
                    } else {
                        sl = -2; /* missing: looked up again after the growth */
                        if (ct_triplets_add(mt, xr, xc, 0.0) != CT_OK) err = 1;
                    }
                }
            } else if (xc != -1 && xr != -1) {
                general = 1; /* through J */
            }
            slot[k] = sl;
            int halt = err || general;
            if (halt) {
#pragma omp atomic write
                stop = 1;
            } else if ((k & 4095) == 0) {
#pragma omp atomic read
                halt = stop;
            }
            if (halt) break;
        }
    }
    size_t nmiss = 0;
    for (int t = 0; t < nth; ++t) nmiss += miss[t].n;
    ct_status st = err ? CT_ENOMEM : CT_OK;
    if (st == CT_OK && !general && nmiss) {
        ct_triplets_clear(&as->tq);
        for (int t = 0; t < nth && st == CT_OK; ++t)
            if (miss[t].n) st = ct_triplets_append(&as->tq, &miss[t]);
        int *remap = NULL;
        if (st == CT_OK) st = grow_pattern(as, &as->tq, &remap);
        if (st == CT_OK) {
            const ct_csc *B = &as->A;
            int lost = 0; /* cannot happen: the grown pattern holds every missing entry */
#pragma omp parallel for num_threads(nth) schedule(static) reduction(| : lost)
            for (size_t k = 0; k < n; ++k) {
                const int sl = slot[k];
                if (sl >= 0) {
                    slot[k] = remap[sl];
                } else if (sl == -2) {
                    slot[k] = (int)ct_csc_find(B, xf[row[k]], xf[col[k]]);
                    lost |= slot[k] < 0;
                }
            }
            general |= lost; /* then the general path maps them */
        }
        free(remap);
    }
    for (int t = 0; t < nth; ++t) ct_triplets_free(&miss[t]);
    free(miss);
    if (st != CT_OK || general) return st;
    as->cm_n = n;
    as->cm_valid = 1;
    *ready = 1;
    return CT_OK;
}

/* A->val[slot[k]] += w_c Hc->val[k] in triplet order. Thread t owns the slots
 * [nnz t / nth, nnz (t + 1) / nth) and scans all triplets: every entry receives its
 * contributions in triplet order whatever the thread count. */
static void scatter_slots(ct_assembly *as, const ct_triplets *Hc, double w_c)
{
    const int nth = omp_get_max_threads();
    const long nnz = (long)ct_csc_nnz(&as->A);
    const int *slot = as->cm_slot;
    const double *hv = Hc->val;
    double *av = as->A.val;
    const size_t n = Hc->n;
#pragma omp parallel num_threads(nth)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int lo = (int)(nnz * t / nt);
        const unsigned len = (unsigned)(nnz * (t + 1) / nt - lo);
        for (size_t k = 0; k < n; ++k) {
            const int sl = slot[k];
            if ((unsigned)(sl - lo) < len) av[sl] += w_c * hv[k];
        }
    }
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
                           const ct_triplets *Hc, double w_c, int project, double *t_local, double *t_contact,
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
        st = map_slots(as, s, Hc, &ready);
        if (t_contact) *t_contact += omp_get_wtime() - tc;
        if (st != CT_OK) return ct_diag_add(diag, st, "assembly: cannot map the contact Hessian (out of memory)");
        if (ready) {
            base_gather(as, w_mass, w_el);
            tc = omp_get_wtime();
            scatter_slots(as, Hc, w_c);
            if (t_contact) *t_contact += omp_get_wtime() - tc;
            return CT_OK;
        }
    }
    for (;;) { /* the general path */
        base_gather(as, w_mass, w_el);
        if (!Hc || Hc->n == 0) return CT_OK;
        const double tc = omp_get_wtime();
        ct_triplets_clear(&as->tq);
        st = map_contact(as, s, Hc, w_c);
        if (st == CT_OK && as->tq.n) st = grow_pattern(as, &as->tq, NULL);
        if (t_contact) *t_contact += omp_get_wtime() - tc;
        if (st != CT_OK) return ct_diag_add(diag, st, "assembly: cannot map the contact Hessian (out of memory)");
        if (as->tq.n == 0) return CT_OK;
    }
}
