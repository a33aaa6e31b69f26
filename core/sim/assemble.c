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
 * has settled), no lookup is needed; when it differs, its terms (chunks) equal to recorded ones
 * take their slots, and only the others are looked up, mostly by verified predictions from the
 * block structure of the terms (lookup_range). Other triplets take the general path
 * (map_contact: lookups per triplet, through J). Both add the same values in the same order. */
#include "sim/assemble.h"

#include <omp.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void cache_aux_free(ct_assembly *as);

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
    cache_aux_free(as);
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

/* The slot cache (as->cm_row, cm_col, cm_slot) records the (row, col) sequence of the last Hc
 * mapped this way with the slot of every triplet; grow_pattern moves the slots along. A new Hc
 * equal to it takes its slots as they are. Otherwise the new Hc is walked chunk by chunk, and
 * a chunk whose (row, col) sequence equals a recorded chunk takes that chunk's slots (a slot
 * depends on (row, col) and the pattern only); the others are looked up (lookup_range).
 * Chunks: one starts at triplet 0 and at every triplet alone in its column run (of the
 * full-space col sequence). The model emits each term block by block, column by column, and
 * with upper-triangle triplets the first column of a term's lowest vertex holds its diagonal
 * entry alone: chunks are terms. Between Newton iterations the collision set changes a little
 * (on the bench's contact scene 82-98 % of the triplets are in unchanged terms, in the same
 * order), so the walk compares each new chunk with the recorded chunk after the previous
 * partner first (reading the data once); only where that fails it finds the new chunk's end,
 * its key, and a recorded chunk with that key (next CHUNK_WINDOW chunks, then a hash index).
 * Thread t walks the chunks starting in [n t / nth, n (t + 1) / nth). The sequence being
 * recorded goes to a second set of buffers (cache_aux), swapped with the recorded one at the
 * end, with its chunk table. Every slot is exact whatever the thread count: reused ones come
 * from an equal (row, col) pair, looked-up ones are verified or searched. */
enum {
    CHUNK_WINDOW = 8,   /* recorded chunks tried after the expected one before the hash index */
    CHUNK_MIN_AVG = 8,  /* fewer triplets per chunk on average: not term by term ... */
    CHUNK_PAUSE = 15    /* ... then this many calls map without chunks */
};

typedef struct chunk_list { /* chunks found by one thread: start, key, recorded partner or -1 */
    size_t *b;
    uint64_t *key;
    long *part;
    size_t n, cap;
} chunk_list;

typedef struct cache_aux {
    int *row, *col, *slot;  /* the sequence being recorded (capacity cap) */
    size_t cap;
    size_t *cb;             /* recorded chunks: starts, then cm_n (nc + 1 entries) */
    uint64_t *ck;           /* their keys */
    size_t nc, ccap;        /* nc valid with as->cm_valid (0: no chunks recorded) */
    long *hidx, *hnext;     /* hash index of ck (chunk_index) */
    size_t hcap, hncap, hmask;
    chunk_list *tl;         /* per thread */
    int ntl;
    int pause;              /* calls left without chunks */
} cache_aux;

static void cache_aux_free(ct_assembly *as)
{
    cache_aux *x = as->cm_aux;
    if (!x) return;
    free(x->row);
    free(x->col);
    free(x->slot);
    free(x->cb);
    free(x->ck);
    free(x->hidx);
    free(x->hnext);
    for (int t = 0; t < x->ntl; ++t) {
        free(x->tl[t].b);
        free(x->tl[t].key);
        free(x->tl[t].part);
    }
    free(x->tl);
    free(x);
    as->cm_aux = NULL;
}

/* Room for n triplets in the buffers of the sequence being recorded, and nth chunk lists. */
static ct_status cache_reserve(cache_aux *x, size_t n, int nth)
{
    if (x->ntl < nth) {
        chunk_list *tl = realloc(x->tl, (size_t)nth * sizeof *tl);
        if (!tl) return CT_ENOMEM;
        memset(tl + x->ntl, 0, (size_t)(nth - x->ntl) * sizeof *tl);
        x->tl = tl;
        x->ntl = nth;
    }
    if (x->slot && n <= x->cap) return CT_OK;
    free(x->row);
    free(x->col);
    free(x->slot);
    const size_t cap = n + n / 2 + 1; /* the next Hessians differ by a few terms: rarely regrown */
    x->row = malloc(cap * sizeof *x->row);
    x->col = malloc(cap * sizeof *x->col);
    x->slot = malloc(cap * sizeof *x->slot);
    x->cap = cap;
    if (!x->row || !x->col || !x->slot) {
        free(x->row);
        free(x->col);
        free(x->slot);
        x->row = x->col = x->slot = NULL;
        x->cap = 0;
        return CT_ENOMEM;
    }
    return CT_OK;
}

static int chunk_push(chunk_list *l, size_t b, uint64_t key, long part)
{
    if (l->n == l->cap) {
        const size_t cap = 2 * l->cap + 1024;
        size_t *nb = realloc(l->b, cap * sizeof *nb);
        if (nb) l->b = nb;
        uint64_t *nk = realloc(l->key, cap * sizeof *nk);
        if (nk) l->key = nk;
        long *np = realloc(l->part, cap * sizeof *np);
        if (np) l->part = np;
        if (!nb || !nk || !np) return 1;
        l->cap = cap;
    }
    l->b[l->n] = b;
    l->key[l->n] = key;
    l->part[l->n++] = part;
    return 0;
}

static inline int chunk_start(const int *col, size_t n, size_t k)
{
    return k == 0 || (col[k] != col[k - 1] && (k + 1 == n || col[k + 1] != col[k]));
}

/* First chunk start at or after p (n if none). */
static size_t next_chunk_start(const int *col, size_t n, size_t p)
{
    while (p < n && !chunk_start(col, n, p)) ++p;
    return p;
}

/* Key of the chunk [b, e): its length, first triplet and last 16 triplets (a term's last column
 * has a row of each of its vertices). Equal keys only propose a partner: contents are compared. */
static uint64_t chunk_key(const int *row, const int *col, size_t b, size_t e)
{
    uint64_t h = 0x9E3779B97F4A7C15u * (uint64_t)(e - b);
    for (size_t k = b, s = e - b > 17 ? e - 16 : b + 1;; k = s++) {
        h ^= (uint64_t)(uint32_t)row[k] << 32 | (uint32_t)col[k];
        h *= 0xFF51AFD7ED558CCDu;
        h ^= h >> 31;
        if (s >= e) break;
    }
    return h;
}

/* The hash index of the recorded chunk keys (open addressing, hmask + 1 slots; the chunks with
 * one key chained in ascending order). */
static ct_status chunk_index(cache_aux *x)
{
    size_t hsize = 16;
    while (hsize < 2 * x->nc) hsize *= 2;
    if (hsize > x->hcap) {
        free(x->hidx);
        x->hidx = malloc(hsize * sizeof *x->hidx);
        x->hcap = x->hidx ? hsize : 0;
    }
    if (x->nc > x->hncap) {
        free(x->hnext);
        x->hncap = x->nc + x->nc / 8 + 1;
        x->hnext = malloc(x->hncap * sizeof *x->hnext);
        if (!x->hnext) x->hncap = 0;
    }
    if (!x->hidx || !x->hnext) return CT_ENOMEM;
    x->hmask = hsize - 1;
    for (size_t h = 0; h < hsize; ++h) x->hidx[h] = -1;
    for (size_t j = x->nc; j-- > 0;) {
        size_t h = (size_t)(x->ck[j] >> 17) & x->hmask;
        while (x->hidx[h] >= 0 && x->ck[x->hidx[h]] != x->ck[j]) h = (h + 1) & x->hmask;
        x->hnext[j] = x->hidx[h];
        x->hidx[h] = (long)j;
    }
    return CT_OK;
}

/* A recorded chunk with this key: the first at or after j, else the first; -1 if none. */
static long chunk_find(const cache_aux *x, uint64_t key, size_t j)
{
    size_t h = (size_t)(key >> 17) & x->hmask;
    while (x->hidx[h] >= 0 && x->ck[x->hidx[h]] != key) h = (h + 1) & x->hmask;
    long p = x->hidx[h];
    while (p >= 0 && (size_t)p < j) p = x->hnext[p];
    return p >= 0 ? p : x->hidx[h];
}

/* Slot of row r among ri[lo, hi) (sorted, unique), -1 if absent: a binary search without
 * data-dependent branches. */
static inline int search_row(const int *ri, int lo, int hi, int r)
{
    int len = hi - lo;
    if (len <= 0) return -1;
    const int *p = ri + lo;
    while (len > 1) {
        const int half = len >> 1;
        p = p[half] <= r ? p + half : p;
        len -= half;
    }
    return *p == r ? (int)(p - ri) : -1;
}

/* The slots in A of the triplets [b, e) into slot[]: -1 skipped (a fixed dof or the lower
 * triangle), -2 missing from the pattern (then added to miss). A term's triplets come column by
 * column, each column as runs of consecutive rows (one per vertex), and the next column of the
 * same vertex has the same rows below its diagonal block, so most slots are predicted, and
 * every prediction is verified (inside the column, same row):
 *  - the entry after the previous triplet's one, in the same column (the next row of a run);
 *  - for a run start, the offset the same row had in the previous column (when that column is
 *    this one - 1, i.e. the same vertex), else the place the column's last rows take (the
 *    diagonal block ends the column: row r at hi - 1 - (c - r));
 *  - else a binary search (counted in *nsearch).
 * Returns 1 when a triplet needs J (the general path), 2 without memory, else 0. */
static int lookup_range(const ct_csc *A, const int *xf, const int *row, const int *col, size_t b, size_t e,
                        int *slot, ct_triplets *miss, long *nsearch)
{
    enum { RUNS = 16 };
    const int *cp = A->colptr, *ri = A->rowind;
    int rs_row[2][RUNS], rs_slot[2][RUNS];
    int *cur_row = rs_row[0], *cur_slot = rs_slot[0], *prv_row = rs_row[1], *prv_slot = rs_slot[1];
    int ncur = 0, nprv = 0, pc = -2, lo = 0, hi = 0, plo = 0, last = -1;
    long ns = 0;
    int ret = 0;
    for (size_t k = b; k < e; ++k) {
        const int xc = xf[col[k]], xr = xf[row[k]];
        int sl = -1;
        if (xc >= 0 && xr >= 0) {
            if (xr <= xc) {
                if (xc != pc) { /* a new column: the run starts of pc become the previous ones */
                    int *tr = prv_row, *ts = prv_slot;
                    prv_row = cur_row, prv_slot = cur_slot, cur_row = tr, cur_slot = ts;
                    nprv = xc == pc + 1 ? ncur : 0;
                    plo = lo;
                    ncur = 0, pc = xc, lo = cp[xc], hi = cp[xc + 1], last = -1;
                }
                int f = -1;
                if (last >= 0 && last + 1 < hi && ri[last + 1] == xr) {
                    f = last + 1;
                } else {
                    int i = ncur < nprv && prv_row[ncur] == xr ? ncur : -1;
                    for (int q = 0; i < 0 && q < nprv; ++q)
                        if (prv_row[q] == xr) i = q;
                    if (i >= 0) {
                        const int g = prv_slot[i] - plo + lo;
                        if (g < hi && ri[g] == xr) f = g;
                    }
                    if (f < 0 && xc - xr < hi - lo && ri[hi - 1 - (xc - xr)] == xr) f = hi - 1 - (xc - xr);
                    if (f < 0) {
                        f = search_row(ri, lo, hi, xr);
                        ++ns;
                    }
                    if (f >= 0 && ncur < RUNS) cur_row[ncur] = xr, cur_slot[ncur++] = f;
                }
                last = f;
                if (f >= 0) {
                    sl = f;
                } else {
                    sl = -2; /* missing: looked up again after the growth */
                    if (ct_triplets_add(miss, xr, xc, 0.0) != CT_OK) {
                        ret = 2;
                        break;
                    }
                }
            }
        } else if (xc != -1 && xr != -1) {
            ret = 1; /* through J */
            break;
        }
        slot[k] = sl;
    }
    *nsearch += ns;
    return ret;
}

/* The slot in A of every triplet of Hc, in as->cm_slot (-1: skipped, a fixed dof or the lower
 * triangle), the pattern grown first if some are missing. *ready = 1 on success; *ready = 0
 * (the caller takes the general path) when a triplet needs J or there is no memory for the
 * slots. When Hc's (row, col) sequence is the one recorded at the previous call (compared in
 * parts of n / nth, in parallel), the recorded slots are used as they are. Otherwise (see
 * above) each chunk takes a recorded chunk's slots or is looked up; then the pattern grows if
 * needed, and the recorded slots are copied (through the old -> new slot map after a growth:
 * one pass over the slots either way). Sequences with short chunks (< CHUNK_MIN_AVG triplets
 * on average) are mapped without chunks for the next CHUNK_PAUSE calls: plain lookups. */
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
    if (!as->cm_aux && !(as->cm_aux = calloc(1, sizeof(cache_aux)))) return CT_OK;
    cache_aux *x = as->cm_aux;
    if (!as->cm_valid) x->nc = 0; /* nothing recorded to compare with */
    const int chunked = x->pause == 0;
    if (!chunked) x->pause--;
    if (cache_reserve(x, n, nth) != CT_OK || (x->nc && chunk_index(x) != CT_OK)) {
        as->cm_valid = 0;
        return CT_OK;
    }
    ct_triplets *miss = malloc((size_t)nth * sizeof *miss);
    if (!miss) {
        as->cm_valid = 0;
        return CT_ENOMEM;
    }
    for (int t = 0; t < nth; ++t) ct_triplets_init(&miss[t]);
    const size_t onc = x->nc, *ocb = x->cb;
    const uint64_t *ock = x->ck;
    const int *orow = as->cm_row, *ocol = as->cm_col, *oslot = as->cm_slot;
    int *nrow = x->row, *ncol = x->col, *nslot = x->slot;
    int err = 0, general = 0, stop = 0;
    long nsearch = 0, nreused = 0;
    for (int t = 0; t < nth; ++t) x->tl[t].n = 0;
#pragma omp parallel num_threads(nth) reduction(| : err, general) reduction(+ : nsearch, nreused)
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        chunk_list *l = &x->tl[t];
        if (!chunked) { /* plain lookups */
            const size_t a = n * t / nt, b = n * (t + 1) / nt;
            memcpy(nrow + a, row + a, (b - a) * sizeof *row);
            memcpy(ncol + a, col + a, (b - a) * sizeof *col);
            const int r = lookup_range(&as->A, xf, row, col, a, b, nslot, &miss[t], &nsearch);
            general = r == 1, err = r == 2;
        } else {
            const size_t pa = next_chunk_start(col, n, n * t / nt), pb = next_chunk_start(col, n, n * (t + 1) / nt);
            size_t j = onc ? 0 : 1, i = pa; /* j: the recorded chunk expected next */
            if (onc && pa > 0) {
                size_t lo = 0, hi = onc; /* the first recorded chunk starting at or after pa */
                while (lo < hi) {
                    const size_t mid = lo + (hi - lo) / 2;
                    if (ocb[mid] < pa) lo = mid + 1;
                    else hi = mid;
                }
                j = lo;
            }
            while (i < pb) {
                if (j < onc) { /* the expected partner (ending at a chunk start: keeps the table canonical) */
                    const size_t ob = ocb[j], len = ocb[j + 1] - ob;
                    if (i + len <= pb && (i + len == pb || chunk_start(col, n, i + len)) &&
                        memcmp(row + i, orow + ob, len * sizeof *row) == 0 &&
                        memcmp(col + i, ocol + ob, len * sizeof *col) == 0) {
                        memcpy(nrow + i, row + i, len * sizeof *row);
                        memcpy(ncol + i, col + i, len * sizeof *col);
                        if (chunk_push(l, i, ock[j], (long)j)) err = 1;
                        nreused += (long)len;
                        i += len, ++j;
                        if (err) break;
                        continue;
                    }
                }
                const size_t e = next_chunk_start(col, n, i + 1); /* <= pb, a chunk start */
                const uint64_t key = chunk_key(row, col, i, e);
                memcpy(nrow + i, row + i, (e - i) * sizeof *row);
                memcpy(ncol + i, col + i, (e - i) * sizeof *col);
                long p = -1;
                if (onc) {
                    for (size_t q = j; q < onc && q <= j + CHUNK_WINDOW && p < 0; ++q)
                        if (ock[q] == key) p = (long)q;
                    if (p < 0) p = chunk_find(x, key, j);
                    if (p >= 0 && !(ocb[p + 1] - ocb[p] == e - i &&
                                    memcmp(row + i, orow + ocb[p], (e - i) * sizeof *row) == 0 &&
                                    memcmp(col + i, ocol + ocb[p], (e - i) * sizeof *col) == 0))
                        p = -1;
                }
                if (chunk_push(l, i, key, p)) err = 1;
                if (p >= 0) {
                    nreused += (long)(e - i);
                    j = (size_t)p + 1;
                } else if (!err) {
                    const int r = lookup_range(&as->A, xf, row, col, i, e, nslot, &miss[t], &nsearch);
                    if (r == 1) general = 1;
                    if (r == 2) err = 1;
                }
                i = e;
                int halt = err || general;
                if (halt) {
#pragma omp atomic write
                    stop = 1;
                } else if ((l->n & 63) == 0) {
#pragma omp atomic read
                    halt = stop;
                }
                if (halt) break;
            }
        }
        if (err || general) {
#pragma omp atomic write
            stop = 1;
        }
    }
    size_t nmiss = 0;
    for (int t = 0; t < nth; ++t) nmiss += miss[t].n;
    ct_status st = err ? CT_ENOMEM : CT_OK;
    int *remap = NULL;
    as->cm_valid = 0; /* the recorded slots follow a growth below, as they are copied */
    if (st == CT_OK && !general && nmiss) {
        ct_triplets_clear(&as->tq);
        for (int t = 0; t < nth && st == CT_OK; ++t)
            if (miss[t].n) st = ct_triplets_append(&as->tq, &miss[t]);
        if (st == CT_OK) st = grow_pattern(as, &as->tq, &remap);
    }
    for (int t = 0; t < nth; ++t) ct_triplets_free(&miss[t]);
    free(miss);
    if (st == CT_OK && !general) {
        const ct_csc *B = &as->A;
        int lost = 0; /* cannot happen: the grown pattern holds every missing entry */
#pragma omp parallel num_threads(nth) reduction(| : lost)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            /* the chunk lists of threads t, t + nt, ... (all of them even with fewer threads
             * than above); without chunks, the triplets [n t / nt, n (t + 1) / nt) */
            for (int u = t; u < (chunked ? nth : t + 1); u += nt) {
                const chunk_list *l = &x->tl[u];
                for (size_t c = 0, nr = chunked ? l->n : 1; c < nr; ++c) {
                    const size_t b = chunked ? l->b[c] : n * (size_t)t / (size_t)nt;
                    const size_t e = !chunked       ? n * (size_t)(t + 1) / (size_t)nt
                                     : c + 1 < l->n ? l->b[c + 1]
                                                    : next_chunk_start(col, n, b + 1);
                    const long p = chunked ? l->part[c] : -1;
                    if (p >= 0) {
                        const int *src = oslot + ocb[p];
                        if (!remap) {
                            memcpy(nslot + b, src, (e - b) * sizeof *src);
                        } else {
                            for (size_t k = b; k < e; ++k) {
                                const int sl = src[k - b];
                                nslot[k] = sl >= 0 ? remap[sl] : sl;
                            }
                        }
                    } else if (remap) {
                        for (size_t k = b; k < e; ++k) {
                            const int sl = nslot[k];
                            if (sl >= 0) {
                                nslot[k] = remap[sl];
                            } else if (sl == -2) {
                                nslot[k] = (int)ct_csc_find(B, xf[row[k]], xf[col[k]]);
                                lost |= nslot[k] < 0;
                            }
                        }
                    }
                }
            }
        }
        general |= lost; /* then the general path maps them */
    }
    free(remap);
    as->cm_searches += nsearch;
    as->cm_reused += nreused;
    if (st != CT_OK || general) return st;
    /* the chunk table of the new sequence (none if its chunks are short) */
    size_t nnc = 0;
    for (int t = 0; chunked && t < nth; ++t) nnc += x->tl[t].n;
    if (!chunked || nnc * CHUNK_MIN_AVG > n) {
        if (chunked) x->pause = CHUNK_PAUSE;
        nnc = 0;
    } else if (nnc + 1 > x->ccap) {
        free(x->cb);
        free(x->ck);
        x->ccap = nnc + nnc / 8 + 1;
        x->cb = malloc(x->ccap * sizeof *x->cb);
        x->ck = malloc(x->ccap * sizeof *x->ck);
        if (!x->cb || !x->ck) {
            free(x->cb);
            free(x->ck);
            x->cb = NULL;
            x->ck = NULL;
            x->ccap = 0;
            nnc = 0;
        }
    }
    if (nnc) {
        size_t c = 0;
        for (int t = 0; t < nth; ++t) {
            memcpy(x->cb + c, x->tl[t].b, x->tl[t].n * sizeof *x->cb);
            memcpy(x->ck + c, x->tl[t].key, x->tl[t].n * sizeof *x->ck);
            c += x->tl[t].n;
        }
        x->cb[nnc] = n;
    }
    x->nc = nnc;
    /* the new sequence becomes the recorded one */
    int *tp;
    tp = as->cm_row, as->cm_row = x->row, x->row = tp;
    tp = as->cm_col, as->cm_col = x->col, x->col = tp;
    tp = as->cm_slot, as->cm_slot = x->slot, x->slot = tp;
    const size_t tc = as->cm_cap;
    as->cm_cap = x->cap, x->cap = tc;
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
