/* assemble_slots.c — the slot path of the model's Hessian triplets into the Newton matrix
 * (every triplet's dofs map one to one onto free dofs): the slot in A of every triplet,
 * cached with the triplets' (row, col) sequence (the contract is in assemble.h), then the
 * values scattered in triplet order.
 *
 * The slot cache (as->cm_row, cm_col, cm_slot) records the (row, col) sequence of the last Hc
 * mapped this way with the slot of every triplet; ct_assembly_grow_pattern moves the slots
 * along. A new Hc equal to it takes its slots as they are. Otherwise the new Hc is walked chunk
 * by chunk, and a chunk whose (row, col) sequence equals a recorded chunk takes that chunk's slots (a slot
 * depends on (row, col) and the pattern only); the others are looked up (ct_slots_lookup_range).
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
 * from an equal (row, col) pair, looked-up ones are verified or searched. A Hc whose block table
 * covers most of it is mapped block by block instead (assemble_blocks.c; the state and the
 * shared parts are in assemble_cache.h). */
#include "sim/assemble_cache.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ct_assembly_cache_free(ct_assembly *as)
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
    free(x->rb);
    free(x->nb_key);
    free(x->nb_part);
    free(x->nb_len);
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
long ct_slots_chunk_find(const cache_aux *x, uint64_t key, size_t j)
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
int ct_slots_lookup_range(const ct_csc *A, const int *xf, const int *row, const int *col, size_t b, size_t e,
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

/* ---------- the parts of ct_assembly_map_slots ---------- */

/* Is Hc's (row, col) sequence the recorded one (as->cm_n == Hc->n)? Compared in parts of
 * n / nth, in parallel. */
static int same_sequence(const ct_assembly *as, const ct_triplets *Hc, int nth)
{
    const size_t n = Hc->n;
    const int *row = Hc->row, *col = Hc->col, *orow = as->cm_row, *ocol = as->cm_col;
    int diff = 0;
#pragma omp parallel num_threads(nth) reduction(| : diff)
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        const size_t a = n * t / nt, b = n * (t + 1) / nt;
        if (b > a)
            diff = memcmp(row + a, orow + a, (b - a) * sizeof *row) != 0 ||
                   memcmp(col + a, ocol + a, (b - a) * sizeof *col) != 0;
    }
    return !diff;
}


/* Without chunks, thread t of nt: the triplets [n t / nt, n (t + 1) / nt) copied and looked up. */
static void walk_plain(const slot_walk *w, size_t t, size_t nt, ct_triplets *miss, int *general, int *err,
                       long *nsearch)
{
    const size_t n = w->n, a = n * t / nt, b = n * (t + 1) / nt;
    memcpy(w->nrow + a, w->row + a, (b - a) * sizeof *w->row);
    memcpy(w->ncol + a, w->col + a, (b - a) * sizeof *w->col);
    const int r = ct_slots_lookup_range(w->A, w->xf, w->row, w->col, a, b, w->nslot, miss, nsearch);
    *general = r == 1, *err = r == 2;
}

/* The first recorded chunk starting at or after triplet pa. */
static size_t first_recorded_at(const slot_walk *w, size_t pa)
{
    size_t lo = 0, hi = w->onc;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (w->ocb[mid] < pa) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The length of recorded chunk j when the new triplets from i on repeat it (ending at pb or
 * at a chunk start: keeps the table canonical), else 0. */
static size_t expected_partner(const slot_walk *w, size_t j, size_t i, size_t pb)
{
    const size_t ob = w->ocb[j], len = w->ocb[j + 1] - ob;
    if (i + len <= pb && (i + len == pb || chunk_start(w->col, w->n, i + len)) &&
        memcmp(w->row + i, w->orow + ob, len * sizeof *w->row) == 0 &&
        memcmp(w->col + i, w->ocol + ob, len * sizeof *w->col) == 0)
        return len;
    return 0;
}

/* A recorded chunk equal to the new chunk [i, e) with this key: the next CHUNK_WINDOW chunks
 * from j, then the hash index; -1 if none. */
static long find_partner(const slot_walk *w, size_t j, size_t i, size_t e, uint64_t key)
{
    long p = -1;
    for (size_t q = j; q < w->onc && q <= j + CHUNK_WINDOW && p < 0; ++q)
        if (w->ock[q] == key) p = (long)q;
    if (p < 0) p = ct_slots_chunk_find(w->x, key, j);
    if (p >= 0 && !(w->ocb[p + 1] - w->ocb[p] == e - i &&
                    memcmp(w->row + i, w->orow + w->ocb[p], (e - i) * sizeof *w->row) == 0 &&
                    memcmp(w->col + i, w->ocol + w->ocb[p], (e - i) * sizeof *w->col) == 0))
        p = -1;
    return p;
}

/* With chunks, thread t of nt: the chunks starting in [n t / nt, n (t + 1) / nt) into l, each
 * with its recorded partner (slots copied later) or looked up. */
static void walk_chunks(const slot_walk *w, size_t t, size_t nt, chunk_list *l, ct_triplets *miss, int *general,
                        int *err, long *nsearch, long *nreused)
{
    const int *row = w->row, *col = w->col;
    const size_t n = w->n, onc = w->onc;
    const size_t pa = next_chunk_start(col, n, n * t / nt), pb = next_chunk_start(col, n, n * (t + 1) / nt);
    size_t j = onc ? 0 : 1, i = pa; /* j: the recorded chunk expected next */
    if (onc && pa > 0) j = first_recorded_at(w, pa);
    while (i < pb) {
        const size_t len = j < onc ? expected_partner(w, j, i, pb) : 0;
        if (len) {
            memcpy(w->nrow + i, row + i, len * sizeof *row);
            memcpy(w->ncol + i, col + i, len * sizeof *col);
            if (chunk_push(l, i, w->ock[j], (long)j)) *err = 1;
            *nreused += (long)len;
            i += len, ++j;
            if (*err) break;
            continue;
        }
        const size_t e = next_chunk_start(col, n, i + 1); /* <= pb, a chunk start */
        const uint64_t key = chunk_key(row, col, i, e);
        memcpy(w->nrow + i, row + i, (e - i) * sizeof *row);
        memcpy(w->ncol + i, col + i, (e - i) * sizeof *col);
        const long p = onc ? find_partner(w, j, i, e, key) : -1;
        if (chunk_push(l, i, key, p)) *err = 1;
        if (p >= 0) {
            *nreused += (long)(e - i);
            j = (size_t)p + 1;
        } else if (!*err) {
            const int r = ct_slots_lookup_range(w->A, w->xf, row, col, i, e, w->nslot, miss, nsearch);
            if (r == 1) *general = 1;
            if (r == 2) *err = 1;
        }
        i = e;
        int halt = *err || *general;
        if (halt) {
#pragma omp atomic write
            *w->stop = 1;
        } else if ((l->n & 63) == 0) {
#pragma omp atomic read
            halt = *w->stop;
        }
        if (halt) break;
    }
}

/* Walk the new sequence on nth threads (chunked or plain lookups): x->tl[t] receives thread t's
 * chunks, miss[t] its triplets missing from the pattern. *err: no memory; *general: a triplet
 * needs J. */
static void walk_sequence(const slot_walk *w, cache_aux *x, int chunked, int nth, ct_triplets *miss, int *err,
                          int *general, long *nsearch, long *nreused)
{
    int e_ = 0, g_ = 0;
    long ns = 0, nr = 0;
    for (int t = 0; t < nth; ++t) x->tl[t].n = 0;
#pragma omp parallel num_threads(nth) reduction(| : e_, g_) reduction(+ : ns, nr)
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        if (!chunked)
            walk_plain(w, t, nt, &miss[t], &g_, &e_, &ns);
        else
            walk_chunks(w, t, nt, &x->tl[t], &miss[t], &g_, &e_, &ns, &nr);
        if (e_ || g_) {
#pragma omp atomic write
            *w->stop = 1;
        }
    }
    *err = e_, *general = g_, *nsearch = ns, *nreused = nr;
}

/* The triplets missing from the pattern (miss[0..nth)) added to it; *remap: the old -> new
 * slot map when it grew, else NULL. */
static ct_status grow_missing(ct_assembly *as, const ct_triplets *miss, int nth, int **remap)
{
    size_t nmiss = 0;
    for (int t = 0; t < nth; ++t) nmiss += miss[t].n;
    if (!nmiss) return CT_OK;
    ct_status st = CT_OK;
    ct_triplets_clear(&as->tq);
    for (int t = 0; t < nth && st == CT_OK; ++t)
        if (miss[t].n) st = ct_triplets_append(&as->tq, &miss[t]);
    if (st == CT_OK) st = ct_assembly_grow_pattern(as, &as->tq, remap);
    return st;
}

/* Before a walk over n new triplets: room for their slots and the recorded chunks' key index
 * (else the slot path is declined: as->cm_valid = 0, *miss = NULL, CT_OK), and nth empty lists
 * of missing triplets in *miss (malloc'ed; CT_ENOMEM without). */
ct_status ct_slots_walk_begin(ct_assembly *as, cache_aux *x, size_t n, int nth, ct_triplets **miss)
{
    *miss = NULL;
    if (cache_reserve(x, n, nth) != CT_OK || (x->nc && chunk_index(x) != CT_OK)) {
        as->cm_valid = 0;
        return CT_OK;
    }
    if (!(*miss = malloc((size_t)nth * sizeof **miss))) {
        as->cm_valid = 0;
        return CT_ENOMEM;
    }
    for (int t = 0; t < nth; ++t) ct_triplets_init(&(*miss)[t]);
    return CT_OK;
}

/* After a walk (err: out of memory; general: a triplet needs J): the pattern grown by the
 * missing triplets (*remap: the old -> new slot map, or NULL), the lists freed. The recorded
 * slots are no longer valid as they are (they follow the growth as they are copied). */
ct_status ct_slots_walk_end(ct_assembly *as, ct_triplets *miss, int nth, int err, int general, int **remap)
{
    ct_status st = err ? CT_ENOMEM : CT_OK;
    *remap = NULL;
    as->cm_valid = 0;
    if (st == CT_OK && !general) st = grow_missing(as, miss, nth, remap);
    for (int t = 0; t < nth; ++t) ct_triplets_free(&miss[t]);
    free(miss);
    return st;
}

/* The final slots of the new triplets [b, e): a reused chunk or block copies its recorded
 * partner's slots (src; NULL if looked up); looked-up ones follow a growth (remap), and those
 * missing (-2) are found in the grown pattern (their rows and columns: row[k - b], col[k - b]).
 * Returns 1 if one is still missing (cannot happen). */
int ct_slots_settle_range_rows(const slot_walk *w, const int *remap, size_t b, size_t e, const int *src,
                               const int *row, const int *col)
{
    int *nslot = w->nslot, lost = 0;
    if (src) {
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
                nslot[k] = (int)ct_csc_find(w->A, w->xf[row[k - b]], w->xf[col[k - b]]);
                lost |= nslot[k] < 0;
            }
        }
    }
    return lost;
}

/* ct_slots_settle_range_rows with the triplets' own rows and columns. */
int ct_slots_settle_range(const slot_walk *w, const int *remap, size_t b, size_t e, const int *src)
{
    return ct_slots_settle_range_rows(w, remap, b, e, src, w->row + b, w->col + b);
}

/* ct_slots_settle_range over every chunk found by the walk (the chunk lists of threads t, t + nt, ...:
 * all of them even with fewer threads than the walk), or without chunks over the triplets
 * [n t / nt, n (t + 1) / nt) of each thread t. Returns 1 if a slot is still missing. */
static int settle_slots(const slot_walk *w, const cache_aux *x, int chunked, int nth, const int *remap)
{
    const size_t n = w->n;
    int lost = 0; /* cannot happen: the grown pattern holds every missing entry */
#pragma omp parallel num_threads(nth) reduction(| : lost)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        for (int u = t; u < (chunked ? nth : t + 1); u += nt) {
            const chunk_list *l = &x->tl[u];
            for (size_t c = 0, nr = chunked ? l->n : 1; c < nr; ++c) {
                const size_t b = chunked ? l->b[c] : n * (size_t)t / (size_t)nt;
                const size_t e = !chunked       ? n * (size_t)(t + 1) / (size_t)nt
                                 : c + 1 < l->n ? l->b[c + 1]
                                                : next_chunk_start(w->col, n, b + 1);
                const long p = chunked ? l->part[c] : -1;
                lost |= ct_slots_settle_range(w, remap, b, e, p >= 0 ? w->oslot + w->ocb[p] : NULL);
            }
        }
    }
    return lost;
}

/* Room for `need` chunk starts and keys (cb, ck), grown to `cap` when short; CT_ENOMEM (and
 * none) without memory. */
ct_status ct_slots_chunk_table_reserve(cache_aux *x, size_t need, size_t cap)
{
    if (need <= x->ccap) return CT_OK;
    free(x->cb);
    free(x->ck);
    x->ccap = cap;
    x->cb = malloc(cap * sizeof *x->cb);
    x->ck = malloc(cap * sizeof *x->ck);
    if (x->cb && x->ck) return CT_OK;
    free(x->cb);
    free(x->ck);
    x->cb = NULL;
    x->ck = NULL;
    x->ccap = 0;
    return CT_ENOMEM;
}

/* The chunk table of the new sequence (n triplets) from the threads' chunk lists; none if its
 * chunks are short (then the next CHUNK_PAUSE calls map without chunks) or without memory. */
static void record_chunk_table(cache_aux *x, size_t n, int nth, int chunked)
{
    size_t nnc = 0;
    for (int t = 0; chunked && t < nth; ++t) nnc += x->tl[t].n;
    if (!chunked || nnc * CHUNK_MIN_AVG > n) {
        if (chunked) x->pause = CHUNK_PAUSE;
        nnc = 0;
    } else if (ct_slots_chunk_table_reserve(x, nnc + 1, nnc + nnc / 8 + 1) != CT_OK) {
        nnc = 0;
    }
    if (nnc) {
        size_t c = 0;
        for (int t = 0; t < nth; ++t) {
            if (!x->tl[t].n) continue; /* an empty thread list may have no buffers (memcpy of NULL is UB) */
            memcpy(x->cb + c, x->tl[t].b, x->tl[t].n * sizeof *x->cb);
            memcpy(x->ck + c, x->tl[t].key, x->tl[t].n * sizeof *x->ck);
            c += x->tl[t].n;
        }
        x->cb[nnc] = n;
    }
    x->nc = nnc;
    x->rec_blocks = 0;
}

/* The new sequence (n triplets, in x's buffers) becomes the recorded one. */
void ct_slots_swap_recorded(ct_assembly *as, cache_aux *x, size_t n)
{
    int *tp;
    tp = as->cm_row, as->cm_row = x->row, x->row = tp;
    tp = as->cm_col, as->cm_col = x->col, x->col = tp;
    tp = as->cm_slot, as->cm_slot = x->slot, x->slot = tp;
    const size_t tc = as->cm_cap;
    as->cm_cap = x->cap, x->cap = tc;
    as->cm_n = n;
    as->cm_valid = 1;
}

/* ---------- the slot path ---------- */

/* The slot in A of every triplet of Hc, in as->cm_slot (-1: skipped, a fixed dof or the lower
 * triangle), the pattern grown first if some are missing. *ready = 1 on success; *ready = 0
 * (the caller takes the general path) when a triplet needs J or there is no memory for the
 * slots. When Hc's (row, col) sequence is the one recorded at the previous call (compared in
 * parts of n / nth, in parallel), the recorded slots are used as they are. Otherwise (see
 * above) each chunk takes a recorded chunk's slots or is looked up; then the pattern grows if
 * needed, and the recorded slots are copied (through the old -> new slot map after a growth:
 * one pass over the slots either way). Sequences with short chunks (< CHUNK_MIN_AVG triplets
 * on average) are mapped without chunks for the next CHUNK_PAUSE calls: plain lookups. */
ct_status ct_assembly_map_slots(ct_assembly *as, const ct_sim *s, ct_triplets *Hc, int *ready)
{
    *ready = 0;
    if (!as->xfree && ct_assembly_build_xfree(as, s) != CT_OK) return CT_ENOMEM;
    const size_t n = Hc->n;
    if (n == 0) return CT_OK;
    const int nth = omp_get_max_threads();
    as->cm_calls++;
    if (Hc->nblk) { /* blocks that cover most of the triplets drive the mapping (assemble_blocks.c) */
        int taken = 0;
        const ct_status st = ct_slots_map_blocks(as, Hc, ready, &taken);
        if (taken) return st;
    }
    cache_aux *x = as->cm_aux;
    ct_triplets_fill_rows(Hc); /* the chunks read the rows and columns */
    if (as->cm_valid && !(x && x->rec_blocks) && as->cm_n == n && same_sequence(as, Hc, nth)) {
        as->cm_hits++;
        *ready = 1;
        return CT_OK;
    }
    if (!x && !(x = as->cm_aux = calloc(1, sizeof(cache_aux)))) return CT_OK;
    if (!as->cm_valid || x->rec_blocks) x->nc = 0; /* nothing recorded to compare with */
    const int chunked = x->pause == 0;
    if (!chunked) x->pause--;
    ct_triplets *miss;
    ct_status st = ct_slots_walk_begin(as, x, n, nth, &miss);
    if (!miss) return st;
    int stop = 0;
    const slot_walk w = {.A = &as->A, .row = Hc->row, .col = Hc->col, .xf = as->xfree, .n = n,
                         .orow = as->cm_row, .ocol = as->cm_col, .oslot = as->cm_slot,
                         .ocb = x->cb, .ock = x->ck, .onc = x->nc,
                         .nrow = x->row, .ncol = x->col, .nslot = x->slot, .x = x, .stop = &stop};
    int err, general;
    long nsearch, nreused;
    walk_sequence(&w, x, chunked, nth, miss, &err, &general, &nsearch, &nreused);
    int *remap;
    st = ct_slots_walk_end(as, miss, nth, err, general, &remap);
    if (st == CT_OK && !general) general |= settle_slots(&w, x, chunked, nth, remap); /* then the general path */
    free(remap);
    as->cm_searches += nsearch;
    as->cm_reused += nreused;
    if (st != CT_OK || general) return st;
    record_chunk_table(x, n, nth, chunked);
    ct_slots_swap_recorded(as, x, n);
    *ready = 1;
    return CT_OK;
}


/* A->val[slot[k]] += w_c Hc->val[k] in triplet order. Thread t owns the slots
 * [nnz t / nth, nnz (t + 1) / nth) and scans all triplets: every entry receives its
 * contributions in triplet order whatever the thread count. */
void ct_assembly_scatter_slots(ct_assembly *as, const ct_triplets *Hc, double w_c)
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
