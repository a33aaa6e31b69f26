/* check_pairs.c — pair tracking (ct_pairs.h).
 *
 * Expected values are derived independently of the hash table:
 *   - key packing against the definition (a, b) -> a·2³² + b, and key order = (a, b) order;
 *   - 100 000 random insert/find/remove operations on a small key pool against a reference kept
 *     as a sorted array (binary search, memmove), compared in full every 1000 operations;
 *   - growth: capacity doubles from 16 exactly when an insert would pass half full, so after n
 *     inserts it is the smallest power of two >= max(16, 2n); records survive every doubling;
 *   - sorted listings against the sorted set of inserted keys, equal for different histories;
 *   - mark-and-sweep against the sets touched / inserted in the pass;
 *   - zero-filled creation in slots that are known to have held a removed entry.
 */
#include "ct_test_util.h"

#include "contactlab/ct_pairs.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Check's ck_assert records a checkpoint even when it passes; inside long loops use these. */
#define REQ(c)                                                                           \
    do {                                                                                 \
        if (!(c)) ck_abort_msg("%s:%d: assertion '%s' failed", __FILE__, __LINE__, #c); \
    } while (0)

static int irand(unsigned long long *r, int n) { return (int)(ct_test_lcg01(r) * n); }

static int all_zero(const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t k = 0; k < n; ++k)
        if (c[k]) return 0;
    return 1;
}

static int is_pow2(long n) { return n > 0 && (n & (n - 1)) == 0; }

/* The payload of the random test. */
typedef struct payload {
    double x, y;
    int id;
} payload;

static payload make_payload(uint64_t key, int op)
{
    payload p = {(double)ct_pair_key_a(key) + 0.25 * op, -(double)ct_pair_key_b(key) / 3.0 - op, op};
    return p;
}

static int same_payload(const payload *a, const payload *b) { return a->x == b->x && a->y == b->y && a->id == b->id; }

/* ---------------------------------------------------------------- reference: sorted array */

typedef struct ref_entry {
    uint64_t key;
    payload p;
} ref_entry;

typedef struct ref_map {
    long n;
    ref_entry *e;
} ref_map;

/* Index of key, or -(insertion point) - 1. */
static long ref_search(const ref_map *r, uint64_t key)
{
    long lo = 0, hi = r->n;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (r->e[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->n && r->e[lo].key == key ? lo : -lo - 1;
}

static void ref_insert(ref_map *r, long pos, uint64_t key, payload p)
{
    memmove(r->e + pos + 1, r->e + pos, (size_t)(r->n - pos) * sizeof *r->e);
    r->e[pos].key = key;
    r->e[pos].p = p;
    r->n++;
}

static void ref_remove(ref_map *r, long pos)
{
    memmove(r->e + pos, r->e + pos + 1, (size_t)(r->n - pos - 1) * sizeof *r->e);
    r->n--;
}

/* Full comparison: count, sorted listing, payloads, table shape. */
static void compare_with_ref(const ct_pair_map *m, const ref_map *r, uint64_t *keys, void **recs)
{
    REQ(ct_pair_map_count(m) == r->n);
    REQ(ct_pair_map_sorted(m, keys, recs) == r->n);
    for (long k = 0; k < r->n; ++k) {
        REQ(keys[k] == r->e[k].key);
        REQ(same_payload(recs[k], &r->e[k].p));
    }
    REQ(m->cap == 0 || (is_pow2(m->cap) && m->cap >= 16 && 2 * m->count <= m->cap));
}

/* ---------------------------------------------------------------- tests */

START_TEST(test_key_packing)
{
    static const int vals[] = {0, 1, 2, 7, 65535, 65536, 123456789, INT_MAX - 1, INT_MAX};
    const int nv = (int)(sizeof vals / sizeof vals[0]);
    for (int i = 0; i < nv; ++i)
        for (int j = 0; j < nv; ++j) {
            uint64_t k = ct_pair_key(vals[i], vals[j]);
            ck_assert_uint_eq(k, (uint64_t)vals[i] * 4294967296ull + (uint64_t)vals[j]);
            ck_assert_int_eq(ct_pair_key_a(k), vals[i]);
            ck_assert_int_eq(ct_pair_key_b(k), vals[j]);
            /* key order is the lexicographic order of (a, b) */
            for (int i2 = 0; i2 < nv; ++i2)
                for (int j2 = 0; j2 < nv; ++j2) {
                    uint64_t k2 = ct_pair_key(vals[i2], vals[j2]);
                    int lex = i < i2 || (i == i2 && j < j2); /* vals is increasing */
                    ck_assert_int_eq(k < k2, lex);
                }
        }
    ck_assert_uint_eq(ct_pair_key(0, 0), 0);
    ck_assert_uint_eq(ct_pair_key(INT_MAX, INT_MAX), 0x7fffffff7fffffffull);
    unsigned long long r = 1;
    for (int t = 0; t < 100000; ++t) {
        int a = irand(&r, INT_MAX), b = irand(&r, INT_MAX);
        uint64_t k = ct_pair_key(a, b);
        REQ(ct_pair_key_a(k) == a && ct_pair_key_b(k) == b);
    }
    printf("key packing: %d x %d extreme pairs and 100000 random pairs round-trip, key order = (a, b) "
           "order\n",
           nv, nv);
}
END_TEST

START_TEST(test_random_vs_reference)
{
    enum { POOL = 3000, OPS = 100000 };
    unsigned long long r = 12345;
    /* pool: structured keys (vertex, part) with small parts, some extremes */
    uint64_t *pool = malloc(POOL * sizeof *pool);
    for (int k = 0; k < POOL; ++k) pool[k] = ct_pair_key(k / 3, k % 3);
    pool[0] = ct_pair_key(0, 0);
    pool[1] = ct_pair_key(INT_MAX, INT_MAX);
    pool[2] = ct_pair_key(0, INT_MAX);
    pool[3] = ct_pair_key(INT_MAX, 0);
    ct_pair_map m;
    ck_assert_int_eq(ct_pair_map_init(&m, sizeof(payload)), CT_OK);
    ref_map ref = {0, malloc(POOL * sizeof(ref_entry))};
    uint64_t *keys = malloc(POOL * sizeof *keys);
    void **recs = malloc(POOL * sizeof *recs);
    long n_ins = 0, n_created = 0, n_upd = 0, n_find = 0, n_rm = 0, n_rm_absent = 0, max_count = 0, growths = 0;
    long last_cap = m.cap;
    for (int op = 1; op <= OPS; ++op) {
        uint64_t key = pool[irand(&r, POOL)];
        long pos = ref_search(&ref, key);
        double u = ct_test_lcg01(&r);
        if (u < 0.45) { /* insert (an existing key: update the payload half of the time) */
            int created = -1;
            payload *p = ct_pair_map_insert(&m, key, &created);
            REQ(p != NULL);
            REQ(created == (pos < 0));
            n_ins++;
            if (created) {
                REQ(all_zero(p, sizeof *p));
                *p = make_payload(key, op);
                ref_insert(&ref, -pos - 1, key, *p);
                n_created++;
            } else {
                REQ(same_payload(p, &ref.e[pos].p));
                if (ct_test_lcg01(&r) < 0.5) {
                    *p = make_payload(key, op);
                    ref.e[pos].p = *p;
                    n_upd++;
                }
            }
        } else if (u < 0.75) { /* remove */
            int rm = ct_pair_map_remove(&m, key);
            REQ(rm == (pos >= 0));
            if (pos >= 0) ref_remove(&ref, pos);
            else n_rm_absent++;
            n_rm += rm;
        } else { /* find */
            payload *p = ct_pair_map_find(&m, key);
            REQ((p != NULL) == (pos >= 0));
            if (p) REQ(same_payload(p, &ref.e[pos].p));
            n_find++;
        }
        if (m.cap != last_cap) {
            REQ(m.cap == (last_cap ? 2 * last_cap : 16));
            growths += last_cap > 0;
            last_cap = m.cap;
        }
        if (ref.n > max_count) max_count = ref.n;
        if (op % 1000 == 0) compare_with_ref(&m, &ref, keys, recs);
    }
    printf("random operations: %d (%ld inserts, %ld created, %ld updated; %ld finds; %ld removals + %ld of "
           "absent keys) on %d keys: max %ld entries, 16 slots doubled %ld times to %ld, final %ld entries — "
           "matches the reference at every 1000th\n",
           OPS, n_ins, n_created, n_upd, n_find, n_rm, n_rm_absent, POOL, max_count, growths, m.cap, ref.n);
    /* remove everything that is left, in random order */
    while (ref.n > 0) {
        long pos = irand(&r, (int)ref.n);
        REQ(ct_pair_map_remove(&m, ref.e[pos].key) == 1);
        ref_remove(&ref, pos);
        if (ref.n % 100 == 0) compare_with_ref(&m, &ref, keys, recs);
    }
    ck_assert_int_eq(ct_pair_map_count(&m), 0);
    for (int k = 0; k < POOL; ++k) REQ(ct_pair_map_find(&m, pool[k]) == NULL);
    ct_pair_map_free(&m);
    free(recs);
    free(keys);
    free(ref.e);
    free(pool);
}
END_TEST

START_TEST(test_growth_and_clear)
{
    enum { N = 20000 };
    ct_pair_map m;
    ck_assert_int_eq(ct_pair_map_init(&m, sizeof(payload)), CT_OK);
    ck_assert_int_eq(m.cap, 0);
    ck_assert_ptr_null(ct_pair_map_find(&m, 0));
    long last_cap = 0, doublings = 0;
    for (int i = 0; i < N; ++i) {
        uint64_t key = ct_pair_key(7 * i, i % 5);
        int created = 0;
        payload *p = ct_pair_map_insert(&m, key, &created);
        REQ(p && created && all_zero(p, sizeof *p));
        *p = make_payload(key, i);
        long n = i + 1;
        /* capacity: the smallest power of two >= max(16, 2n) */
        long want = 16;
        while (want < 2 * n) want *= 2;
        REQ(m.cap == want);
        if (m.cap != last_cap) {
            doublings += last_cap > 0;
            last_cap = m.cap;
            for (int j = 0; j <= i; ++j) { /* every record intact after the rehash */
                uint64_t kj = ct_pair_key(7 * j, j % 5);
                payload e = make_payload(kj, j);
                const payload *q = ct_pair_map_find(&m, kj);
                REQ(q && same_payload(q, &e));
            }
        }
    }
    ck_assert_int_eq(ct_pair_map_count(&m), N);
    const long cap = m.cap;
    printf("growth: %d inserts, %ld doublings 16 -> %ld slots, every record intact after each\n", N, doublings,
           cap);
    /* clear keeps the capacity and empties; re-inserting N keys does not grow and creates
     * zero-filled records */
    ct_pair_map_clear(&m);
    ck_assert_int_eq(ct_pair_map_count(&m), 0);
    ck_assert_int_eq(m.cap, cap);
    ck_assert_int_eq(ct_pair_map_sorted(&m, NULL, NULL), 0);
    for (int i = 0; i < N; ++i) REQ(ct_pair_map_find(&m, ct_pair_key(7 * i, i % 5)) == NULL);
    for (int i = 0; i < N; ++i) {
        int created = 0;
        payload *p = ct_pair_map_insert(&m, ct_pair_key(i, 9), &created);
        REQ(p && created && all_zero(p, sizeof *p));
    }
    ck_assert_int_eq(m.cap, cap);
    ck_assert_int_eq(ct_pair_map_count(&m), N);
    /* reserve: creating up to n entries moves no record */
    ct_pair_map_free(&m);
    ck_assert_int_eq(m.cap, 0);
    ck_assert_int_eq(ct_pair_map_reserve(&m, 1000), CT_OK);
    ck_assert_int_eq(m.cap, 2048);
    payload *first = ct_pair_map_insert(&m, ct_pair_key(1, 1), NULL);
    first->id = 42;
    for (int i = 2; i <= 1000; ++i) REQ(ct_pair_map_insert(&m, ct_pair_key(i, 1), NULL) != NULL);
    ck_assert_ptr_eq(ct_pair_map_find(&m, ct_pair_key(1, 1)), first);
    ck_assert_int_eq(first->id, 42);
    ck_assert_int_eq(m.cap, 2048);
    ck_assert_int_eq(ct_pair_map_reserve(&m, 10), CT_OK); /* never shrinks */
    ck_assert_int_eq(m.cap, 2048);
    ct_pair_map_free(&m);
    ct_pair_map_free(&m); /* twice: harmless */
    ct_pair_map_free(NULL);
    /* bad input */
    ck_assert_int_eq(ct_pair_map_init(&m, 0), CT_EINPUT);
    ck_assert_int_eq(ct_pair_map_init(&m, CT_PAIR_REC_MAX + 1), CT_EINPUT);
    ck_assert_int_eq(ct_pair_map_init(&m, (size_t)-1), CT_EINPUT);
    ck_assert_ptr_null(ct_pair_map_insert(&m, 1, NULL)); /* not initialised */
    ck_assert_int_eq(ct_pair_map_init(NULL, 8), CT_EINPUT);
    ck_assert_int_eq(ct_pair_map_init(&m, CT_PAIR_REC_MAX), CT_OK);
    ck_assert_ptr_nonnull(ct_pair_map_insert(&m, 1, NULL));
    ct_pair_map_free(&m);
}
END_TEST

/* Insert `n` keys in the order given by the permutation in keys[]; payload from the key. */
static void insert_all(ct_pair_map *m, const uint64_t *keys, int n)
{
    for (int i = 0; i < n; ++i) {
        payload *p = ct_pair_map_insert(m, keys[i], NULL);
        REQ(p != NULL);
        *p = make_payload(keys[i], 0);
    }
}

static void shuffle(uint64_t *a, int n, unsigned long long *r)
{
    for (int i = n - 1; i > 0; --i) {
        int j = irand(r, i + 1);
        uint64_t t = a[i];
        a[i] = a[j], a[j] = t;
    }
}

static int cmp_key(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

START_TEST(test_sorted_deterministic)
{
    enum { N = 5000, EXTRA = 3000 };
    unsigned long long r = 777;
    uint64_t *keys = malloc(N * sizeof *keys), *extra = malloc(EXTRA * sizeof *extra);
    /* distinct keys: vertex ids spread out, part ids 0..3 */
    for (int i = 0; i < N; ++i) keys[i] = ct_pair_key(13 * (i / 4) + irand(&r, 13), i % 4);
    qsort(keys, N, sizeof *keys, cmp_key);
    int nk = 0;
    for (int i = 0; i < N; ++i)
        if (i == 0 || keys[i] != keys[nk - 1]) keys[nk++] = keys[i];
    uint64_t *expect = malloc((size_t)nk * sizeof *expect);
    memcpy(expect, keys, (size_t)nk * sizeof *expect); /* the sorted set */
    for (int i = 0; i < EXTRA; ++i) extra[i] = ct_pair_key(1000000 + i, 5); /* not in keys */

    /* A: keys in one random order */
    ct_pair_map a, b;
    ck_assert_int_eq(ct_pair_map_init(&a, sizeof(payload)), CT_OK);
    ck_assert_int_eq(ct_pair_map_init(&b, sizeof(payload)), CT_OK);
    shuffle(keys, nk, &r);
    insert_all(&a, keys, nk);
    /* B: a large reserve (another capacity), extra keys interleaved, another order, then the
     * extras and a third of the keys removed and the keys re-inserted */
    ck_assert_int_eq(ct_pair_map_reserve(&b, 4 * N), CT_OK);
    shuffle(keys, nk, &r);
    for (int i = 0; i < nk; ++i) {
        insert_all(&b, keys + i, 1);
        if (i < EXTRA) insert_all(&b, extra + i, 1);
    }
    for (int i = 0; i < nk; i += 3) REQ(ct_pair_map_remove(&b, keys[i]) == 1);
    for (int i = 0; i < EXTRA; ++i) REQ(ct_pair_map_remove(&b, extra[i]) == 1);
    for (int i = nk - 1; i >= 0; i -= 3) insert_all(&b, keys + i, 1);
    for (int i = 0; i < nk; i += 3) insert_all(&b, keys + i, 1);
    ck_assert_int_ne(a.cap, b.cap);

    uint64_t *ka = malloc((size_t)nk * sizeof *ka), *kb = malloc((size_t)nk * sizeof *kb);
    void **ra = malloc((size_t)nk * sizeof *ra), **rb = malloc((size_t)nk * sizeof *rb);
    ck_assert_int_eq(ct_pair_map_sorted(&a, ka, ra), nk);
    ck_assert_int_eq(ct_pair_map_sorted(&b, kb, rb), nk);
    long differ_slot = 0;
    for (int i = 0; i < nk; ++i) {
        REQ(ka[i] == expect[i] && kb[i] == expect[i]);
        if (i > 0) REQ(ka[i - 1] < ka[i]);
        payload e = make_payload(expect[i], 0);
        REQ(same_payload(ra[i], &e) && same_payload(rb[i], &e));
        REQ(ra[i] == ct_pair_map_find(&a, ka[i]));
        differ_slot += (unsigned char *)ra[i] - a.recs != (unsigned char *)rb[i] - b.recs;
    }
    /* keys only, without records */
    ck_assert_int_eq(ct_pair_map_sorted(&b, kb, NULL), nk);
    ck_assert(memcmp(ka, kb, (size_t)nk * sizeof *ka) == 0);
    printf("sorted listing: %d keys, strictly increasing and identical for two histories (capacities %ld / "
           "%ld, %ld of the records in different slots)\n",
           nk, a.cap, b.cap, differ_slot);
    ct_pair_map_free(&a);
    ct_pair_map_free(&b);
    free(ra), free(rb), free(ka), free(kb), free(expect), free(extra), free(keys);
}
END_TEST

typedef struct bond {
    int bonded;
    double beta;
} bond;

typedef struct sweep_ctx {
    long calls;
    int dup;           /* an entry offered twice */
    unsigned char *offered; /* by vertex id */
} sweep_ctx;

static int drop_unbonded(uint64_t key, void *rec, void *ctx)
{
    sweep_ctx *c = ctx;
    c->calls++;
    int v = ct_pair_key_a(key);
    if (c->offered[v]) c->dup = 1;
    c->offered[v] = 1;
    return !((const bond *)rec)->bonded;
}

START_TEST(test_mark_sweep)
{
    enum { N = 512 }; /* exactly half of 1024 slots: long clusters, some wrapping round */
    unsigned long long r = 99;
    int wraps = 0;
    for (int trial = 0; trial < 20; ++trial) {
        ct_pair_map m;
        ck_assert_int_eq(ct_pair_map_init(&m, sizeof(bond)), CT_OK);
        unsigned char *touched = calloc(N, 1), *isbonded = calloc(N, 1);
        for (int v = 0; v < N; ++v) {
            bond *b = ct_pair_map_insert(&m, ct_pair_key(v, trial), NULL);
            b->bonded = isbonded[v] = ct_test_lcg01(&r) < 0.5;
            b->beta = v;
        }
        ck_assert_int_eq(m.cap, 2 * N);
        wraps += (m.flags[0] & CT_PAIR_USED) && (m.flags[m.cap - 1] & CT_PAIR_USED);
        /* no pass begun: everything inserted is seen, a sweep removes nothing */
        ck_assert_int_eq(ct_pair_map_sweep(&m), 0);

        /* pass 1: touch a random subset; absent keys are not created */
        ct_pair_map_begin_pass(&m);
        long nt = 0;
        for (int v = 0; v < N; ++v)
            if (ct_test_lcg01(&r) < 0.3) {
                bond *b = ct_pair_map_touch(&m, ct_pair_key(v, trial));
                REQ(b && b->beta == v);
                touched[v] = 1, nt++;
            }
        ck_assert_ptr_null(ct_pair_map_touch(&m, ct_pair_key(N + 1, trial)));
        ck_assert_int_eq(ct_pair_map_count(&m), N);
        /* sweep_if keeps unseen bonded entries: removes exactly the unseen unbonded ones,
         * offering each unseen entry once */
        long unseen = N - nt, unseen_unbonded = 0;
        for (int v = 0; v < N; ++v) unseen_unbonded += !touched[v] && !isbonded[v];
        sweep_ctx c = {0, 0, calloc(N, 1)};
        ck_assert_int_eq(ct_pair_map_sweep_if(&m, drop_unbonded, &c), unseen_unbonded);
        ck_assert_int_eq(c.calls, unseen);
        ck_assert_int_eq(c.dup, 0);
        for (int v = 0; v < N; ++v) {
            REQ(c.offered[v] == !touched[v]);
            const bond *b = ct_pair_map_find(&m, ct_pair_key(v, trial));
            REQ((b != NULL) == (touched[v] || isbonded[v]));
            if (b) REQ(b->beta == v && b->bonded == isbonded[v]);
        }
        ck_assert_int_eq(ct_pair_map_count(&m), N - unseen_unbonded);

        /* pass 2: touch another subset and insert new keys (inserted = seen); plain sweep
         * removes exactly the untouched old ones */
        ct_pair_map_begin_pass(&m);
        memset(touched, 0, N);
        long kept = 0;
        for (int v = 0; v < N; ++v)
            if (ct_pair_map_find(&m, ct_pair_key(v, trial)) && ct_test_lcg01(&r) < 0.5) {
                REQ(ct_pair_map_touch(&m, ct_pair_key(v, trial)) != NULL);
                touched[v] = 1, kept++;
            }
        for (int v = 0; v < 40; ++v) REQ(ct_pair_map_insert(&m, ct_pair_key(v, 1000 + trial), NULL));
        long before = ct_pair_map_count(&m);
        ck_assert_int_eq(ct_pair_map_sweep(&m), before - kept - 40);
        ck_assert_int_eq(ct_pair_map_count(&m), kept + 40);
        for (int v = 0; v < N; ++v) REQ((ct_pair_map_find(&m, ct_pair_key(v, trial)) != NULL) == touched[v]);
        for (int v = 0; v < 40; ++v) REQ(ct_pair_map_find(&m, ct_pair_key(v, 1000 + trial)) != NULL);
        ck_assert_int_eq(ct_pair_map_sweep(&m), 0); /* still seen */
        /* pass 3: nothing detected -> a sweep empties the map */
        ct_pair_map_begin_pass(&m);
        ck_assert_int_eq(ct_pair_map_sweep(&m), kept + 40);
        ck_assert_int_eq(ct_pair_map_count(&m), 0);
        if (trial == 0)
            printf("mark-and-sweep: %d entries, %ld touched; sweep_if removed the %ld unseen unbonded of %ld "
                   "unseen (each offered once); sweep removed the %ld untouched, kept %ld + 40 inserted\n",
                   N, nt, unseen_unbonded, unseen, before - kept - 40, kept);
        free(c.offered);
        free(touched), free(isbonded);
        ct_pair_map_free(&m);
    }
    printf("mark-and-sweep: 20 trials at load 1/2, %d with a cluster wrapping round the table end\n", wraps);
    /* empty map */
    ct_pair_map e;
    ck_assert_int_eq(ct_pair_map_init(&e, 4), CT_OK);
    ct_pair_map_begin_pass(&e);
    ck_assert_int_eq(ct_pair_map_sweep(&e), 0);
    ck_assert_int_eq(ct_pair_map_remove(&e, 5), 0);
    ct_pair_map_free(&e);
}
END_TEST

START_TEST(test_zero_fill_reuse)
{
    enum { RS = 40 };
    ct_pair_map m;
    ck_assert_int_eq(ct_pair_map_init(&m, RS), CT_OK);
    /* one key in an otherwise empty table goes to its home slot: the same record again */
    unsigned char *p = ct_pair_map_insert(&m, ct_pair_key(3, 4), NULL);
    memset(p, 0xa5, RS);
    ck_assert_int_eq(ct_pair_map_remove(&m, ct_pair_key(3, 4)), 1);
    int created = 0;
    unsigned char *q = ct_pair_map_insert(&m, ct_pair_key(3, 4), &created);
    ck_assert_ptr_eq(q, p);
    ck_assert_int_eq(created, 1);
    ck_assert(all_zero(q, RS));
    ct_pair_map_free(&m);

    /* rounds of filling the table to half (no growth) with fresh keys, dirtying the records,
     * and removing them all, until every slot has held a removed entry; then one more round:
     * every record created there sits in a dirty slot and must be zero */
    ck_assert_int_eq(ct_pair_map_init(&m, RS), CT_OK);
    ck_assert_int_eq(ct_pair_map_reserve(&m, 256), CT_OK);
    const long cap = m.cap, half = cap / 2;
    unsigned char *dirty = calloc((size_t)cap, 1);
    uint64_t *keys = malloc((size_t)half * sizeof *keys);
    long ndirty = 0, rounds = 0, reused = 0, created_n = 0;
    int last = 0;
    unsigned long long r = 5;
    for (int round = 0; round < 1000 && !last; ++round) {
        last = ndirty == cap;
        for (long i = 0; i < half; ++i) {
            keys[i] = ct_pair_key(irand(&r, INT_MAX), round);
            int c = 0;
            unsigned char *rec = ct_pair_map_insert(&m, keys[i], &c);
            if (!c) { /* a repeated random key: skip */
                keys[i] = UINT64_MAX;
                continue;
            }
            REQ(all_zero(rec, RS));
            long slot = (long)((rec - m.recs) / RS);
            REQ(slot >= 0 && slot < cap);
            if (last) REQ(dirty[slot]);
            reused += dirty[slot];
            created_n++;
            memset(rec, (0x5a + round) | 1, RS); /* never 0 */
        }
        ck_assert_int_eq(m.cap, cap);
        for (long s = 0; s < cap; ++s)
            if ((m.flags[s] & CT_PAIR_USED) && !dirty[s]) dirty[s] = 1, ndirty++;
        for (long i = 0; i < half; ++i)
            if (keys[i] != UINT64_MAX) REQ(ct_pair_map_remove(&m, keys[i]) == 1);
        ck_assert_int_eq(ct_pair_map_count(&m), 0);
        rounds++;
    }
    ck_assert(last);
    printf("zero fill: %ld slots all dirtied after %ld rounds; %ld records created, %ld of them in a slot "
           "that held a removed entry, all zero-filled\n",
           cap, rounds - 1, created_n, reused);
    free(keys);
    free(dirty);
    ct_pair_map_free(&m);
}
END_TEST

static Suite *pairs_suite(void)
{
    Suite *s = suite_create("pairs");
    TCase *tc = tcase_create("pairs");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_key_packing);
    tcase_add_test(tc, test_random_vs_reference);
    tcase_add_test(tc, test_growth_and_clear);
    tcase_add_test(tc, test_sorted_deterministic);
    tcase_add_test(tc, test_mark_sweep);
    tcase_add_test(tc, test_zero_fill_reuse);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(pairs_suite)
