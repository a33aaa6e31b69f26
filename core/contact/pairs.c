/* pairs.c — pair tracking: a hash map from 64-bit pair keys to fixed-size records.
 *
 * Method: open addressing with linear probing (Knuth, TAOCP vol. 3, §6.4, algorithm L) in a
 * table of power-of-two capacity, kept at most half full, so an unsuccessful search probes
 * about (1 + 1/(1 - α)²)/2 <= 2.5 slots on average. The home slot of a key is the low bits of
 * the splitmix64 finalizer (Steele, Lea & Flood, "Fast splittable pseudorandom number
 * generators", 2014): pair keys are highly structured (vertex ids in the high word, small part
 * ids in the low word), and the finalizer's avalanche spreads them over every slot.
 *
 * Deletion is by backward shift (Knuth's algorithm R): after emptying slot i, each later entry
 * j of the same cluster moves into the hole when i lies cyclically on its probe path from its
 * home slot h to j, and the hole moves to j. The table then looks exactly as if the removed key
 * had never been inserted, so no tombstones are needed and probe lengths never degrade under
 * the insert/remove churn of contact pairs.
 *
 * Layout: keys, one flag byte per slot (used, seen) and the records in three separate arrays;
 * the records (rec_size bytes each) are contiguous, slot i at recs + i*rec_size. Growth doubles
 * the capacity and re-inserts every entry (records copied), so record pointers move.
 *
 * Sweeps remove entries while scanning the table. The scan starts just after an empty slot (a
 * half-full table always has one) and goes once round the table: a backward shift only moves
 * entries of the current cluster, which all lie ahead in the scan, so every entry is offered to
 * the drop callback exactly once.
 */
#include "contactlab/ct_pairs.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

enum { MIN_CAP = 16 };

static uint64_t mix64(uint64_t x) /* splitmix64 finalizer */
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

static inline size_t home(const ct_pair_map *m, uint64_t key)
{
    return (size_t)(mix64(key) & (uint64_t)(m->cap - 1));
}

static inline unsigned char *rec_at(const ct_pair_map *m, size_t i) { return m->recs + i * m->rec_size; }

/* Slot of key, or -1 if absent. */
static long find_slot(const ct_pair_map *m, uint64_t key)
{
    if (m->cap == 0) return -1;
    const size_t mask = (size_t)m->cap - 1;
    for (size_t i = home(m, key);; i = (i + 1) & mask) {
        if (!(m->flags[i] & CT_PAIR_USED)) return -1;
        if (m->keys[i] == key) return (long)i;
    }
}

/* Rehash into a table of ncap slots (a power of two > 2*count). */
static ct_status rehash(ct_pair_map *m, long ncap)
{
    if ((size_t)ncap > SIZE_MAX / m->rec_size || (size_t)ncap > SIZE_MAX / sizeof(uint64_t))
        return CT_ENOMEM;
    uint64_t *keys = malloc((size_t)ncap * sizeof *keys);
    unsigned char *flags = calloc((size_t)ncap, 1);
    unsigned char *recs = malloc((size_t)ncap * m->rec_size);
    if (!keys || !flags || !recs) {
        free(keys), free(flags), free(recs);
        return CT_ENOMEM;
    }
    ct_pair_map n = *m;
    n.cap = ncap, n.keys = keys, n.flags = flags, n.recs = recs;
    const size_t mask = (size_t)ncap - 1;
    for (long s = 0; s < m->cap; ++s) {
        if (!(m->flags[s] & CT_PAIR_USED)) continue;
        size_t i = home(&n, m->keys[s]);
        while (flags[i] & CT_PAIR_USED) i = (i + 1) & mask;
        keys[i] = m->keys[s];
        flags[i] = m->flags[s];
        memcpy(rec_at(&n, i), rec_at(m, (size_t)s), m->rec_size);
    }
    free(m->keys), free(m->flags), free(m->recs);
    *m = n;
    return CT_OK;
}

/* Empty slot i and close the hole by backward shift. */
static void remove_slot(ct_pair_map *m, size_t i)
{
    const size_t mask = (size_t)m->cap - 1;
    for (size_t j = (i + 1) & mask; m->flags[j] & CT_PAIR_USED; j = (j + 1) & mask) {
        size_t h = home(m, m->keys[j]);
        /* the entry at j may move to i iff i is on its probe path h .. j */
        if (((j - h) & mask) < ((j - i) & mask)) continue;
        m->keys[i] = m->keys[j];
        m->flags[i] = m->flags[j];
        memcpy(rec_at(m, i), rec_at(m, j), m->rec_size);
        i = j;
    }
    m->flags[i] = 0;
    m->count--;
}

ct_status ct_pair_map_init(ct_pair_map *m, size_t rec_size)
{
    if (!m) return CT_EINPUT;
    memset(m, 0, sizeof *m);
    if (rec_size == 0 || rec_size > CT_PAIR_REC_MAX) return CT_EINPUT;
    m->rec_size = rec_size;
    return CT_OK;
}

void ct_pair_map_free(ct_pair_map *m)
{
    if (!m) return;
    free(m->keys), free(m->flags), free(m->recs);
    size_t rs = m->rec_size;
    memset(m, 0, sizeof *m);
    m->rec_size = rs;
}

void ct_pair_map_clear(ct_pair_map *m)
{
    if (m->cap > 0) memset(m->flags, 0, (size_t)m->cap);
    m->count = 0;
}

ct_status ct_pair_map_reserve(ct_pair_map *m, long n)
{
    if (m->rec_size == 0 || m->rec_size > CT_PAIR_REC_MAX) return CT_EINPUT;
    if (n <= m->count || 2 * (size_t)n <= (size_t)m->cap) return CT_OK;
    if (n > LONG_MAX / 4) return CT_ENOMEM;
    long ncap = m->cap > 0 ? m->cap : MIN_CAP;
    while (ncap < 2 * n) ncap *= 2;
    return rehash(m, ncap);
}

long ct_pair_map_count(const ct_pair_map *m) { return m ? m->count : 0; }

void *ct_pair_map_find(const ct_pair_map *m, uint64_t key)
{
    long s = find_slot(m, key);
    return s < 0 ? NULL : rec_at(m, (size_t)s);
}

void *ct_pair_map_insert(ct_pair_map *m, uint64_t key, int *created)
{
    if (created) *created = 0;
    long s = find_slot(m, key);
    if (s >= 0) {
        m->flags[s] |= CT_PAIR_SEEN;
        return rec_at(m, (size_t)s);
    }
    if (2 * (m->count + 1) > m->cap && ct_pair_map_reserve(m, m->count + 1) != CT_OK) return NULL;
    const size_t mask = (size_t)m->cap - 1;
    size_t i = home(m, key);
    while (m->flags[i] & CT_PAIR_USED) i = (i + 1) & mask;
    m->keys[i] = key;
    m->flags[i] = CT_PAIR_USED | CT_PAIR_SEEN;
    memset(rec_at(m, i), 0, m->rec_size);
    m->count++;
    if (created) *created = 1;
    return rec_at(m, i);
}

int ct_pair_map_remove(ct_pair_map *m, uint64_t key)
{
    long s = find_slot(m, key);
    if (s < 0) return 0;
    remove_slot(m, (size_t)s);
    return 1;
}

void ct_pair_map_begin_pass(ct_pair_map *m)
{
    for (long i = 0; i < m->cap; ++i) m->flags[i] &= (unsigned char)~CT_PAIR_SEEN;
}

void *ct_pair_map_touch(ct_pair_map *m, uint64_t key)
{
    long s = find_slot(m, key);
    if (s < 0) return NULL;
    m->flags[s] |= CT_PAIR_SEEN;
    return rec_at(m, (size_t)s);
}

long ct_pair_map_sweep_if(ct_pair_map *m, ct_pair_drop_fn drop, void *ctx)
{
    if (m->count == 0) return 0;
    const size_t cap = (size_t)m->cap, mask = cap - 1;
    size_t start = 0;
    while (m->flags[start] & CT_PAIR_USED) start++; /* exists: count <= cap/2 */
    long removed = 0;
    /* scan slots start+1 .. start+cap-1; after a removal at i, slot i holds the next
     * (not yet offered) entry of the cluster or is empty, so look at it again */
    for (size_t k = 1; k < cap;) {
        size_t i = (start + k) & mask;
        unsigned char f = m->flags[i];
        if ((f & CT_PAIR_USED) && !(f & CT_PAIR_SEEN) && (!drop || drop(m->keys[i], rec_at(m, i), ctx))) {
            remove_slot(m, i);
            removed++;
            continue;
        }
        k++;
    }
    return removed;
}

long ct_pair_map_sweep(ct_pair_map *m) { return ct_pair_map_sweep_if(m, NULL, NULL); }

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

long ct_pair_map_sorted(const ct_pair_map *m, uint64_t *keys_out, void **recs_out)
{
    long n = 0;
    for (long i = 0; i < m->cap; ++i)
        if (m->flags[i] & CT_PAIR_USED) keys_out[n++] = m->keys[i];
    if (n > 1) qsort(keys_out, (size_t)n, sizeof *keys_out, cmp_u64);
    if (recs_out)
        for (long k = 0; k < n; ++k) recs_out[k] = ct_pair_map_find(m, keys_out[k]);
    return n;
}
