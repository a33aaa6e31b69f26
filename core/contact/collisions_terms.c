/* collisions_terms.c — the term records of a collision-set build: their lists, the sort by key,
 * the merge of equal stencils and the set written from them (collisions_terms.h).
 */
#include "collisions_terms.h"

#include "contactlab/ct_parallel.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void ct_term_list_free(term_list *L)
{
    for (int k = 0; k < NBUCKET; ++k) free(L->b[k].t);
    memset(L, 0, sizeof *L);
}

int ct_term_buf_grow(term_buf *B)
{
    long nc = B->cap ? 2 * B->cap : 256;
    term *t = realloc(B->t, (size_t)nc * sizeof *t);
    if (!t) return -1;
    B->t = t;
    B->cap = nc;
    return 0;
}

/* The collision of record (bucket, key, w). */
static void term_collision(ct_collision *c, int bucket, uint64_t key, double w, const ct_contact_mesh *cm, int split)
{
    const ct_surface *s = cm->s;
    const int k0 = (int)(uint32_t)(key >> 32), k1 = (int)(uint32_t)key;
    memset(c, 0, sizeof *c);
    c->side = 1;
    c->w = w;
    c->v[0] = k0;
    if (split && (bucket == B_PP_E || bucket == B_PE_E || (bucket >= B_EE && bucket < B_PH))) {
        c->flags = CT_COL_EDGE_FAMILY;
        if (bucket == B_PP_E) bucket = B_PP;
        if (bucket == B_PE_E) bucket = B_PE;
    }
    switch (bucket) {
    case B_PP: c->kind = CT_COL_PP, c->v[1] = k1; break;
    case B_PE:
        c->kind = CT_COL_PE, c->type = CT_PE_P_E;
        c->v[1] = s->edges[2 * k1], c->v[2] = s->edges[2 * k1 + 1];
        break;
    case B_PT:
        c->kind = CT_COL_PT, c->type = CT_PT_P_T;
        for (int k = 0; k < 3; ++k) c->v[1 + k] = s->faces[3 * k1 + k];
        break;
    case B_PH: c->kind = CT_COL_PH, c->v[1] = k1; break;
    default: {
        c->kind = CT_COL_EE;
        c->side = 2;
        c->v[0] = s->edges[2 * k0], c->v[1] = s->edges[2 * k0 + 1];
        c->v[2] = s->edges[2 * k1], c->v[3] = s->edges[2 * k1 + 1];
        if (bucket == B_EE) {
            c->type = CT_EE_A_B;
        } else {
            c->type = (unsigned char)(bucket - B_EE_MOLL);
            c->eps_x = ee_eps(cm, k0, k1);
        }
    }
    }
}

/* Stable sort of n records by key: LSD radix sort on the bytes that vary (one counting pass for
 * all eight byte histograms, then one scatter per varying byte); a sorted input is returned as is.
 * Returns the array holding the result (a or tmp; tmp has room for n records), NULL if tmp is
 * needed but NULL. */
static term *radix_sort(term *a, term *tmp, long n)
{
    long i = 1;
    while (i < n && a[i - 1].key <= a[i].key) ++i;
    if (i >= n) return a;
    if (!tmp) return NULL;
    long (*cnt)[256] = calloc(8, sizeof *cnt);
    if (!cnt) return NULL;
    for (long j = 0; j < n; ++j) {
        uint64_t k = a[j].key;
        for (int d = 0; d < 8; ++d) cnt[d][(k >> (8 * d)) & 255]++;
    }
    term *src = a, *dst = tmp;
    for (int d = 0; d < 8; ++d) {
        long *c = cnt[d];
        if (c[(src[0].key >> (8 * d)) & 255] == n) continue; /* this byte is the same everywhere */
        long acc = 0;
        for (int v = 0; v < 256; ++v) {
            long m = c[v];
            c[v] = acc;
            acc += m;
        }
        for (long j = 0; j < n; ++j) dst[c[(src[j].key >> (8 * d)) & 255]++] = src[j];
        term *t = src;
        src = dst;
        dst = t;
    }
    free(cnt);
    return src;
}

/* Stable sort of n records by key into tmp (room for n records; a is then scratch): a counting
 * sort on k0 (the key's high word, over its range), then each run of equal k0 by k1 (insertion sort,
 * radix_sort for long runs). The same order as radix_sort (keys ascending, equal keys in input
 * order) in one pass over the records where radix_sort makes one per varying byte (four for the
 * indices of a mesh under 65 536 primitives). Returns the array holding the result (a or tmp),
 * NULL if out of memory. */
static term *sort_terms(term *a, term *tmp, long n)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (long j = 0; j < n; ++j) {
        const uint32_t k0 = (uint32_t)(a[j].key >> 32);
        lo = k0 < lo ? k0 : lo;
        hi = k0 > hi ? k0 : hi;
    }
    const size_t range = (size_t)(hi - lo) + 1;
    if (range > (size_t)4 * (size_t)n + 1024) return radix_sort(a, tmp, n); /* sparse high words */
    long *start = calloc(range + 1, sizeof *start);
    if (!start) return NULL;
    for (long j = 0; j < n; ++j) start[(uint32_t)(a[j].key >> 32) - lo + 1]++;
    for (size_t r = 0; r < range; ++r) start[r + 1] += start[r];
    for (long j = 0; j < n; ++j) tmp[start[(uint32_t)(a[j].key >> 32) - lo]++] = a[j];
    /* start[r] is now the end of run r (the beginning of run r + 1) */
    long b = 0;
    for (size_t r = 0; r < range; ++r) {
        const long e = start[r], m = e - b;
        if (m > 64) {
            term *run = radix_sort(tmp + b, a + b, m); /* (a's slice is free: scratch) */
            if (run != tmp + b) memcpy(tmp + b, run, (size_t)m * sizeof *run);
        } else {
            for (long i = b + 1; i < e; ++i) {
                const term t = tmp[i];
                long j = i - 1;
                for (; j >= b && tmp[j].key > t.key; --j) tmp[j + 1] = tmp[j];
                tmp[j + 1] = t;
            }
        }
        b = e;
    }
    free(start);
    return tmp;
}

term_list *ct_terms_new_parts(part_list *P, int k)
{
    if (P->n + k > P->cap) {
        int nc = P->cap ? P->cap : 64;
        while (nc < P->n + k) nc *= 2;
        term_list *p = realloc(P->p, (size_t)nc * sizeof *p);
        if (!p) return NULL;
        P->p = p;
        P->cap = nc;
    }
    term_list *r = P->p + P->n;
    memset(r, 0, (size_t)k * sizeof *r);
    P->n += k;
    return r;
}


/* (collisions_terms.h) */
ct_status ct_terms_write_set(ct_collision_set *cs, const ct_contact_mesh *cm, part_list *P, int threads, int split,
                            int face)
{
    term *arr[NBUCKET] = {0};
    long cnt[NBUCKET] = {0};
    int err = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ct_threads(threads)) reduction(| : err)
    for (int k = 0; k < NBUCKET; ++k) {
        long n = 0;
        for (int q = 0; q < P->n; ++q) n += P->p[q].b[k].n;
        term *a = n ? malloc((size_t)n * sizeof *a) : NULL;
        if (n && !a) err = 1;
        long m = 0;
        for (int q = 0; q < P->n; ++q) {
            term_buf *B = &P->p[q].b[k];
            if (a && B->n) memcpy(a + m, B->t, (size_t)B->n * sizeof *a);
            m += B->n;
            free(B->t);
            B->t = NULL;
            B->n = B->cap = 0;
        }
        if (!a) continue;
        term *tmp = NULL, *s = radix_sort(a, NULL, n); /* (a sorted input as is) */
        if (!s) {
            tmp = malloc((size_t)n * sizeof *tmp);
            s = tmp ? sort_terms(a, tmp, n) : NULL;
        }
        if (!s) {
            err = 1;
            free(a);
            free(tmp);
            continue;
        }
        /* merge equal keys (weights summed in generation order), compacting into a */
        m = 0;
        for (long i = 0; i < n;) {
            long j = i;
            double w = 0.0, wabs = 0.0;
            for (; j < n && s[j].key == s[i].key; ++j) w += s[j].w, wabs += fabs(s[j].w);
            if (w != 0.0 && !(face && fabs(w) <= 1e-12 * wabs)) {
                a[m].key = s[i].key;
                a[m].w = w;
                m++;
            }
            i = j;
        }
        free(tmp);
        arr[k] = a;
        cnt[k] = m;
    }
    long total = 0, off[NBUCKET];
    for (int k = 0; k < NBUCKET; ++k) off[k] = total, total += cnt[k];
    if (!err && cs->cap < total) {
        ct_collision *c = realloc(cs->c, (size_t)(total ? total : 1) * sizeof *c);
        if (!c) err = 1;
        else {
            cs->c = c;
            cs->cap = total;
        }
    }
    if (!err) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(ct_threads(threads))
        for (int k = 0; k < NBUCKET; ++k)
            for (long i = 0; i < cnt[k]; ++i) term_collision(&cs->c[off[k] + i], k, arr[k][i].key, arr[k][i].w, cm, split);
        cs->n = total;
    }
    for (int k = 0; k < NBUCKET; ++k) free(arr[k]);
    return err ? CT_ENOMEM : CT_OK;
}

