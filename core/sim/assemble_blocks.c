/* assemble_blocks.c — the slot path of Hessian triplets that carry a block table (ct_sparse.h).
 *
 * When Hc's blocks cover at least half of its triplets, they are the chunks of the slot cache
 * (assemble_slots.c): a block whose stencil (nv, dim, v) equals a recorded block's takes that
 * block's slots (the same stencil with the same `upper` writes the same (row, col) sequence),
 * found as the chunks are (the expected block, the next CHUNK_WINDOW, then the key index),
 * without reading the triplets' rows and columns, which may be lazy; the other blocks are looked
 * up from rows generated from their stencils, and the plain triplets between blocks from their
 * own. The recorded sequence is the block table with the slots (cm_row / cm_col are not kept).
 * Every slot is exact and the values keep their triplet order: the same matrix as the chunk
 * path's. */
#include "sim/assemble_cache.h"

#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t block_key(const ct_triplet_block *b)
{
    uint64_t h = 0x9E3779B97F4A7C15u * (uint64_t)(8 * b->nv + b->dim);
    for (int a = 0; a < 4; ++a) {
        h ^= (uint32_t)b->v[a];
        h *= 0xFF51AFD7ED558CCDu;
        h ^= h >> 31;
    }
    return h;
}

static inline int same_stencil(const ct_triplet_block *a, const ct_triplet_block *b)
{
    return a->nv == b->nv && a->dim == b->dim && a->v[0] == b->v[0] && a->v[1] == b->v[1] && a->v[2] == b->v[2] &&
           a->v[3] == b->v[3];
}

/* Whether Hc's block table can drive the mapping (blocks ascending, disjoint, inside the n
 * triplets); len[i]: block i's triplet count, *covered: the triplets in blocks. */
static int blocks_usable(const ct_triplets *Hc, size_t *len_out, size_t *covered)
{
    size_t end = 0, cov = 0;
    for (size_t i = 0; i < Hc->nblk; ++i) {
        const ct_triplet_block *b = &Hc->blk[i];
        if (b->k0 < end || b->nv < 1 || b->nv > 4 || b->dim < 1 || b->dim > 3) return 0;
        const size_t len = len_out[i] = ct_triplet_block_count(b->v, b->nv, b->dim, Hc->upper);
        if (len > Hc->n - b->k0) return 0;
        end = b->k0 + len;
        cov += len;
    }
    *covered = cov;
    return Hc->nblk > 0;
}

/* What the block walk reads and writes besides the slot walk's (w: A, row, col, xf, n, oslot,
 * nslot): Hc's blocks and their lengths, the recorded ones (rb[0..onc)), each new block's key
 * and partner. */
typedef struct block_walk {
    slot_walk w;
    int upper;
    const ct_triplet_block *blk, *rb;
    const size_t *len;
    size_t nblk, onc;
    uint64_t *key;
    long *part;
} block_walk;

/* The first recorded block whose slots start at or after triplet k. */
static size_t first_block_at(const block_walk *bw, size_t k)
{
    size_t lo = 0, hi = bw->onc;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (bw->rb[mid].k0 < k) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* A recorded block with b's stencil (key: its key): j, the next CHUNK_WINDOW, then the key
 * index; -1 if none. */
static long block_partner(const block_walk *bw, size_t j, const ct_triplet_block *b, uint64_t key)
{
    for (size_t q = j; q < bw->onc && q <= j + CHUNK_WINDOW; ++q)
        if (same_stencil(b, &bw->rb[q])) return (long)q;
    const long p = ct_slots_chunk_find(bw->w.x, key, j);
    return p >= 0 && same_stencil(b, &bw->rb[p]) ? p : -1;
}

/* The end of the blocks before block i (0 for the first). */
static size_t blocks_end(const block_walk *bw, size_t i)
{
    return i ? bw->blk[i - 1].k0 + bw->len[i - 1] : 0;
}

/* Thread t of nt: the blocks [nblk t / nt, nblk (t + 1) / nt), each with the plain triplets
 * before it (the last thread also those after the last block). */
static void walk_blocks(const block_walk *bw, size_t t, size_t nt, ct_triplets *miss, int *general, int *err,
                        long *nsearch, long *nreused)
{
    const slot_walk *w = &bw->w;
    const size_t i0 = bw->nblk * t / nt, i1 = bw->nblk * (t + 1) / nt;
    size_t j = bw->onc && i0 < i1 ? first_block_at(bw, bw->blk[i0].k0) : 0, end = blocks_end(bw, i0);
    for (size_t i = i0; i <= i1; ++i) {
        const int tail = i == i1;
        if (tail && t + 1 < nt) break;
        const size_t b = tail ? w->n : bw->blk[i].k0;
        int r = b > end ? ct_slots_lookup_range(w->A, w->xf, w->row, w->col, end, b, w->nslot, miss, nsearch) : 0;
        if (!tail && r == 0) {
            const ct_triplet_block *bl = &bw->blk[i];
            const size_t len = bw->len[i];
            const uint64_t key = block_key(bl);
            const long p = bw->onc ? block_partner(bw, j, bl, key) : -1;
            bw->key[i] = key, bw->part[i] = p;
            if (p >= 0) {
                *nreused += (long)len;
                j = (size_t)p + 1;
            } else { /* rows and columns from the stencil (the triplets' may be lazy) */
                int brow[144], bcol[144];
                ct_triplet_block_rows(bl, bw->upper, brow, bcol);
                r = ct_slots_lookup_range(w->A, w->xf, brow, bcol, 0, len, w->nslot + b, miss, nsearch);
            }
            end = b + len;
        }
        *general |= r == 1, *err |= r == 2;
        int halt = *err || *general;
        if (halt) {
#pragma omp atomic write
            *w->stop = 1;
        } else if ((i & 63) == 0) {
#pragma omp atomic read
            halt = *w->stop;
        }
        if (halt) break;
    }
}

/* ct_slots_settle_range over the blocks and the plain triplets between them, in the walk's partition.
 * Returns 1 if a slot is still missing. */
static int settle_blocks(const block_walk *bw, const int *remap, int nth)
{
    const slot_walk *w = &bw->w;
    int lost = 0;
#pragma omp parallel num_threads(nth) reduction(| : lost)
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        const size_t i0 = bw->nblk * t / nt, i1 = bw->nblk * (t + 1) / nt;
        size_t end = blocks_end(bw, i0);
        for (size_t i = i0; i < i1; ++i) {
            const size_t b = bw->blk[i].k0, len = bw->len[i];
            if (b > end) lost |= ct_slots_settle_range(w, remap, end, b, NULL);
            const long p = bw->part[i];
            if (p >= 0) {
                lost |= ct_slots_settle_range_rows(w, remap, b, b + len, w->oslot + bw->rb[p].k0, NULL, NULL);
            } else if (remap) { /* (without a growth the looked-up slots are final) */
                int brow[144], bcol[144];
                ct_triplet_block_rows(&bw->blk[i], bw->upper, brow, bcol);
                lost |= ct_slots_settle_range_rows(w, remap, b, b + len, NULL, brow, bcol);
            }
            end = b + len;
        }
        if (t + 1 == nt && w->n > end) lost |= ct_slots_settle_range(w, remap, end, w->n, NULL);
    }
    return lost;
}

/* Room for nb new blocks' keys, partners and lengths. */
static ct_status block_reserve(cache_aux *x, size_t nb)
{
    if (nb > x->nbcap) {
        free(x->nb_key);
        free(x->nb_part);
        free(x->nb_len);
        x->nbcap = nb + nb / 2 + 1;
        x->nb_key = malloc(x->nbcap * sizeof *x->nb_key);
        x->nb_part = malloc(x->nbcap * sizeof *x->nb_part);
        x->nb_len = malloc(x->nbcap * sizeof *x->nb_len);
        if (!x->nb_key || !x->nb_part || !x->nb_len) {
            x->nbcap = 0;
            return CT_ENOMEM;
        }
    }
    return CT_OK;
}

/* The new block table (Hc's blocks, keys in x->nb_key) becomes the recorded chunk table; on
 * failure nothing is recorded (x->nc = 0). */
static void record_blocks(cache_aux *x, const ct_triplets *Hc)
{
    const size_t nb = Hc->nblk;
    x->nc = 0;
    x->rec_blocks = 1;
    x->rec_upper = Hc->upper;
    if (nb > x->rbcap) {
        free(x->rb);
        x->rbcap = nb + nb / 2 + 1;
        x->rb = malloc(x->rbcap * sizeof *x->rb);
        if (!x->rb) {
            x->rbcap = 0;
            return;
        }
    }
    if (ct_slots_chunk_table_reserve(x, nb + 1, nb + nb / 2 + 1) != CT_OK) return; /* (cb: not used by blocks) */
    memcpy(x->rb, Hc->blk, nb * sizeof *x->rb);
    memcpy(x->ck, x->nb_key, nb * sizeof *x->ck);
    x->nc = nb;
}

/* The slot path with Hc's block table (checked, the blocks' lengths in x->nb_len). */
static ct_status map_blocks(ct_assembly *as, const ct_triplets *Hc, size_t covered, int *ready)
{
    const size_t n = Hc->n, nb = Hc->nblk;
    const int nth = omp_get_max_threads();
    cache_aux *x = as->cm_aux;
    const int comparable = as->cm_valid && x->rec_blocks && x->rec_upper == Hc->upper;
    if (comparable && covered == n && as->cm_n == n && x->nc == nb &&
        memcmp(x->rb, Hc->blk, nb * sizeof *Hc->blk) == 0) {
        as->cm_hits++;
        *ready = 1;
        return CT_OK;
    }
    if (!comparable) x->nc = 0;
    ct_triplets *miss;
    ct_status st = ct_slots_walk_begin(as, x, n, nth, &miss);
    if (!miss) return st;
    int stop = 0;
    const block_walk bw = {.w = {.A = &as->A, .row = Hc->row, .col = Hc->col, .xf = as->xfree, .n = n,
                                 .oslot = as->cm_slot, .nslot = x->slot, .x = x, .stop = &stop},
                           .upper = Hc->upper, .blk = Hc->blk, .rb = x->rb, .len = x->nb_len, .nblk = nb,
                           .onc = x->nc, .key = x->nb_key, .part = x->nb_part};
    int e_ = 0, g_ = 0;
    long ns = 0, nr = 0;
#pragma omp parallel num_threads(nth) reduction(| : e_, g_) reduction(+ : ns, nr)
    {
        const size_t t = (size_t)omp_get_thread_num(), nt = (size_t)omp_get_num_threads();
        walk_blocks(&bw, t, nt, &miss[t], &g_, &e_, &ns, &nr);
    }
    int general = g_, *remap;
    st = ct_slots_walk_end(as, miss, nth, e_, general, &remap);
    if (st == CT_OK && !general) general |= settle_blocks(&bw, remap, nth); /* then the general path */
    free(remap);
    as->cm_searches += ns;
    as->cm_reused += nr;
    if (st != CT_OK || general) return st;
    record_blocks(x, Hc);
    ct_slots_swap_recorded(as, x, n);
    *ready = 1;
    return CT_OK;
}

ct_status ct_slots_map_blocks(ct_assembly *as, ct_triplets *Hc, int *ready, int *taken)
{
    *ready = 0, *taken = 1;
    cache_aux *x = as->cm_aux;
    if (!x && !(x = as->cm_aux = calloc(1, sizeof(cache_aux)))) return CT_OK;
    size_t covered = 0;
    if (block_reserve(x, Hc->nblk) == CT_OK && blocks_usable(Hc, x->nb_len, &covered) && 2 * covered >= Hc->n)
        return map_blocks(as, Hc, covered, ready);
    *taken = 0;
    return CT_OK;
}
