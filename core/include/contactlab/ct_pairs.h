/* ct_pairs.h — pair tracking: per-pair state that persists across time steps (DESIGN §3).
 *
 * A contact pair is named by a stable 64-bit key, usually ct_pair_key(a, b) of two non-negative
 * ids (a surface vertex and a part, two vertices, ...). A ct_pair_map maps keys to fixed-size
 * records (rec_size bytes, e.g. the adhesion intensity β and bond anchors of the RCC model, or
 * warm-start impulses of an LCP model) held in one contiguous array, apart from the keys.
 *
 * Record pointers returned by find / insert / touch / sorted stay valid until the next insert
 * that creates an entry (it may grow the table and move every record; ct_pair_map_reserve(m, n)
 * makes room for n entries in all, and then creating entries moves nothing), remove or sweep
 * (they move records of the same probe cluster), clear or free. Keys are stable: to remove
 * entries while walking a sorted listing, use its keys (find again), not its record pointers.
 *
 * Per-step re-detection is mark-and-sweep: ct_pair_map_begin_pass clears every entry's "seen"
 * mark; ct_pair_map_insert and ct_pair_map_touch set it (find does not); ct_pair_map_sweep
 * removes the entries not seen since, ct_pair_map_sweep_if only those the model lets go (e.g.
 * an undetected pair whose bond is still intact is kept).
 *
 * Determinism: the slot layout depends on the insertion/removal history and the capacity. Any
 * reduction over pairs (sums, statistics, output) must go through ct_pair_map_sorted, which
 * lists the entries in increasing key order — increasing (a, b) for ct_pair_key(a, b).
 * layer: contact */
#ifndef CT_PAIRS_H
#define CT_PAIRS_H

#include "ct_status.h"

#include <stddef.h>
#include <stdint.h>

/* Largest accepted record (bytes). Larger per-pair state belongs in a model array, indexed
 * from a small record. */
#define CT_PAIR_REC_MAX 4096

/* Stable key of the pair (a, b); a and b must be >= 0. ct_pair_key_a / _b recover them. */
static inline uint64_t ct_pair_key(int a, int b) { return ((uint64_t)(uint32_t)a << 32) | (uint32_t)b; }
static inline int ct_pair_key_a(uint64_t key) { return (int)(uint32_t)(key >> 32); }
static inline int ct_pair_key_b(uint64_t key) { return (int)(uint32_t)(key & 0xffffffffu); }

/* Open addressing (see core/pairs.c). The fields are read-only for users. */
typedef struct ct_pair_map {
    size_t rec_size;      /* bytes per record */
    long count;           /* live entries */
    long cap;             /* slots: 0 or a power of two >= 16; count <= cap/2 */
    uint64_t *keys;       /* cap keys (meaningful where flags has CT_PAIR_USED) */
    unsigned char *flags; /* cap: CT_PAIR_USED | CT_PAIR_SEEN */
    unsigned char *recs;  /* cap * rec_size bytes: the record of slot i at recs + i*rec_size */
} ct_pair_map;

enum { CT_PAIR_USED = 1, CT_PAIR_SEEN = 2 };

/* An empty map of records of rec_size bytes (1..CT_PAIR_REC_MAX, else CT_EINPUT); allocates
 * nothing yet. Use sizeof of the record type, so records are aligned as malloc'd memory. */
ct_status ct_pair_map_init(ct_pair_map *m, size_t rec_size);
/* Release the memory; the map stays usable (empty, same rec_size). NULL is a no-op. */
void ct_pair_map_free(ct_pair_map *m);
/* Remove every entry, keep the memory (capacity unchanged). */
void ct_pair_map_clear(ct_pair_map *m);
/* Make room for n entries in all without growing (n <= count: nothing to do). CT_ENOMEM,
 * map unchanged, when the table cannot be allocated. */
ct_status ct_pair_map_reserve(ct_pair_map *m, long n);

/* Number of entries. */
long ct_pair_map_count(const ct_pair_map *m);
/* The record of key, or NULL if absent. Does not mark the entry seen. */
void *ct_pair_map_find(const ct_pair_map *m, uint64_t key);
/* The record of key, created zero-filled if absent (*created = 1, else 0; created may be
 * NULL); the entry is marked seen. May grow the table, which moves every record (see above).
 * NULL on allocation failure (map unchanged). */
void *ct_pair_map_insert(ct_pair_map *m, uint64_t key, int *created);
/* Remove key; 1 if it was present, 0 if not. Moves records of the same probe cluster. */
int ct_pair_map_remove(ct_pair_map *m, uint64_t key);

/* Start a detection pass: clear every entry's seen mark (O(capacity)). */
void ct_pair_map_begin_pass(ct_pair_map *m);
/* Mark key seen in this pass; returns its record, or NULL (nothing created) if absent. */
void *ct_pair_map_touch(ct_pair_map *m, uint64_t key);
/* Drop decision for an entry not seen in this pass: 1 removes it, 0 keeps it. Called in slot
 * order, which depends on the hash layout: it must not modify the map nor accumulate
 * order-dependent results (reduce over ct_pair_map_sorted before the sweep instead). */
typedef int (*ct_pair_drop_fn)(uint64_t key, void *rec, void *ctx);
/* Remove the unseen entries for which drop returns 1 (drop NULL: all unseen entries); each
 * unseen entry is offered once. Returns how many were removed. O(capacity). */
long ct_pair_map_sweep_if(ct_pair_map *m, ct_pair_drop_fn drop, void *ctx);
/* Remove every entry not seen since begin_pass; returns how many. */
long ct_pair_map_sweep(ct_pair_map *m);

/* The entries in increasing key order: keys_out (count entries) and, if recs_out is non-NULL,
 * their records (count pointers). Returns count. Independent of the insertion history and the
 * capacity. Cost O(capacity + count log count) (qsort of the keys, then one lookup per key),
 * no allocation. */
long ct_pair_map_sorted(const ct_pair_map *m, uint64_t *keys_out, void **recs_out);

#endif
