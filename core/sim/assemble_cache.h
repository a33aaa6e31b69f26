/* assemble_cache.h — the slot cache's state and the parts its two paths share (private to
 * assemble_slots.c, the chunk path and the cache, and assemble_blocks.c, the block path). */
#ifndef CT_ASSEMBLE_CACHE_H
#define CT_ASSEMBLE_CACHE_H

#include "sim/assemble_internal.h"

#include <stdint.h>

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
    /* the block path: the recorded sequence was Hc's block table (rec_blocks; its `upper` in
     * rec_upper): rb[0..nc) are its blocks (rb[j].k0: where block j's slots start in cm_slot),
     * ck their keys; nb_key / nb_part: each new block's key and recorded partner (or -1) */
    int rec_blocks, rec_upper;
    ct_triplet_block *rb;
    uint64_t *nb_key;
    long *nb_part;
    size_t *nb_len;         /* each new block's triplet count */
    size_t rbcap, nbcap;
} cache_aux;

/* What the walk over a new sequence reads and writes: the new triplets (row, col; n), the
 * full-space -> free map xf, the recorded sequence (orow, ocol, oslot) and its chunk table
 * (ocb, ock; onc chunks), the buffers of the sequence being recorded (nrow, ncol, nslot),
 * the chunk index x, and a flag raised by the first thread that stops (no memory, or a
 * triplet through J). */
typedef struct slot_walk {
    const ct_csc *A; /* &as->A: the pattern grown between the walk and the slot copy */
    const int *row, *col, *xf;
    size_t n;
    const int *orow, *ocol, *oslot;
    const size_t *ocb;
    const uint64_t *ock;
    size_t onc;
    int *nrow, *ncol, *nslot;
    const cache_aux *x;
    int *stop;
} slot_walk;

/* The recorded chunk with this key: the first at or after j, else the first; -1 if none. */
long ct_slots_chunk_find(const cache_aux *x, uint64_t key, size_t j);
/* The slots in A of the triplets [b, e) (rows row[k], columns col[k]) into slot[k]: -1 skipped,
 * -2 missing from the pattern (then added to miss). Returns 1 when a triplet needs J, 2 without
 * memory, else 0. */
int ct_slots_lookup_range(const ct_csc *A, const int *xf, const int *row, const int *col, size_t b, size_t e,
                          int *slot, ct_triplets *miss, long *nsearch);
/* Before a walk over n new triplets (see assemble_slots.c); *miss = NULL: the path is declined. */
ct_status ct_slots_walk_begin(ct_assembly *as, cache_aux *x, size_t n, int nth, ct_triplets **miss);
/* After a walk: the pattern grown by the missing triplets (*remap: old -> new slots, or NULL). */
ct_status ct_slots_walk_end(ct_assembly *as, ct_triplets *miss, int nth, int err, int general, int **remap);
/* The final slots of the new triplets [b, e): copied from src (a recorded partner's) or, when
 * looked up, moved by remap; missing ones found with rows row[k - b], columns col[k - b]. */
int ct_slots_settle_range_rows(const slot_walk *w, const int *remap, size_t b, size_t e, const int *src,
                               const int *row, const int *col);
/* ct_slots_settle_range_rows with the triplets' own rows and columns. */
int ct_slots_settle_range(const slot_walk *w, const int *remap, size_t b, size_t e, const int *src);
/* Room for `need` chunk starts and keys, grown to `cap` when short. */
ct_status ct_slots_chunk_table_reserve(cache_aux *x, size_t need, size_t cap);
/* The new sequence (n triplets, in x's buffers) becomes the recorded one. */
void ct_slots_swap_recorded(ct_assembly *as, cache_aux *x, size_t n);
/* The block path (assemble_blocks.c): *taken = 0 when Hc's blocks cannot drive the mapping
 * (then the chunk path maps it), else the result of ct_assembly_map_slots. */
ct_status ct_slots_map_blocks(ct_assembly *as, ct_triplets *Hc, int *ready, int *taken);

#endif
