/* sparse.c — triplet lists and CSC helpers. */
#include "contactlab/ct_sparse.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void ct_triplets_init(ct_triplets *t) { memset(t, 0, sizeof *t); }

void ct_triplets_free(ct_triplets *t)
{
    free(t->row);
    free(t->col);
    free(t->val);
    free(t->blk);
    memset(t, 0, sizeof *t);
}

void ct_triplets_clear(ct_triplets *t) { t->n = 0, t->nblk = 0, t->rows_lazy = 0; }

size_t ct_triplet_block_rows(const ct_triplet_block *b, int upper, int *row, int *col)
{
    const int nv = b->nv, dim = b->dim;
    size_t k = 0;
    for (int vb = 0; vb < nv; ++vb)
        for (int j = 0; j < dim; ++j) {
            const int c = b->v[vb] * dim + j;
            for (int a = 0; a < nv; ++a)
                for (int i = 0; i < dim; ++i) {
                    const int r = b->v[a] * dim + i;
                    if (upper && r > c) continue;
                    row[k] = r;
                    col[k++] = c;
                }
        }
    return k;
}

void ct_triplets_fill_rows(ct_triplets *t)
{
    if (t->rows_lazy)
        for (size_t b = 0; b < t->nblk; ++b)
            ct_triplet_block_rows(&t->blk[b], t->upper, t->row + t->blk[b].k0, t->col + t->blk[b].k0);
    t->rows_lazy = 0;
}

/* The orders of ct_triplet_block_order, one per (dim, nv, vertex ranks): ranks r[a] (the place
 * of v[a] among the stencil's vertices) coded as Σ r[a]·nv^a. Filled once (pthread_once). */
enum { ORDER_MAX = 78 }; /* nv = 4, dim = 3: 4 diagonal blocks of 6 and 6 off-diagonal of 9 */
typedef struct {
    unsigned char n, idx[ORDER_MAX];
} block_order;
static block_order g_order[2][4][256];
static pthread_once_t g_order_once = PTHREAD_ONCE_INIT;

static void order_init(void)
{
    for (int dim = 2; dim <= 3; ++dim)
        for (int nv = 1; nv <= 4; ++nv) {
            int ncode = 1;
            for (int a = 0; a < nv; ++a) ncode *= nv;
            for (int code = 0; code < ncode; ++code) {
                int r[4], seen = 0;
                for (int a = 0, q = code; a < nv; ++a, q /= nv) {
                    r[a] = q % nv;
                    seen |= 1 << r[a];
                }
                if (seen != (1 << nv) - 1) continue; /* not a permutation */
                block_order *o = &g_order[dim - 2][nv - 1][code];
                const int nd = nv * dim;
                for (int b = 0; b < nv; ++b)
                    for (int j = 0; j < dim; ++j)
                        for (int a = 0; a < nv; ++a)
                            for (int k = 0; k < dim; ++k)
                                if (r[a] < r[b] || (a == b && k <= j))
                                    o->idx[o->n++] = (unsigned char)(a * dim + k + nd * (b * dim + j));
            }
        }
}

const unsigned char *ct_triplet_block_order(const int *v, int nv, int dim, size_t *count)
{
    if (nv < 1 || nv > 4 || dim < 2 || dim > 3) return NULL;
    int code = 0;
    for (int a = nv - 1; a >= 0; --a) {
        int r = 0;
        for (int b = 0; b < nv; ++b) {
            if (b != a && v[b] == v[a]) return NULL;
            r += v[b] < v[a];
        }
        code = code * nv + r;
    }
    pthread_once(&g_order_once, order_init);
    *count = g_order[dim - 2][nv - 1][code].n;
    return g_order[dim - 2][nv - 1][code].idx;
}

size_t ct_triplet_block_count(const int *v, int nv, int dim, int upper)
{
    if (!upper) return (size_t)(nv * dim) * (size_t)(nv * dim);
    int distinct = 1;
    for (int a = 1; a < nv; ++a)
        for (int b = 0; b < a; ++b) distinct &= v[a] != v[b];
    if (distinct) /* nv diagonal vertex blocks and nv(nv - 1)/2 above them */
        return (size_t)(nv * dim * (dim + 1) / 2) + (size_t)(nv * (nv - 1) / 2) * (size_t)(dim * dim);
    size_t cnt = 0; /* per vertex block: dim² above the diagonal, dim(dim+1)/2 on it, 0 below */
    for (int a = 0; a < nv; ++a)
        for (int b = 0; b < nv; ++b)
            cnt += v[a] < v[b] ? (size_t)(dim * dim) : v[a] == v[b] ? (size_t)(dim * (dim + 1) / 2) : 0;
    return cnt;
}

ct_status ct_triplets_note_block(ct_triplets *t, size_t k0, const int *v, int nv, int dim, size_t more)
{
    if (nv < 1 || nv > 4) return CT_OK;
    if (t->nblk == t->blk_cap) {
        size_t cap = t->blk_cap + t->blk_cap / 2 + more + 16;
        ct_triplet_block *b = realloc(t->blk, cap * sizeof *b);
        if (!b) return CT_ENOMEM;
        t->blk = b;
        t->blk_cap = cap;
    }
    ct_triplet_block *b = &t->blk[t->nblk++];
    b->k0 = k0, b->nv = nv, b->dim = dim;
    for (int a = 0; a < 4; ++a) b->v[a] = a < nv ? v[a] : -1;
    return CT_OK;
}

ct_status ct_triplets_reserve(ct_triplets *t, size_t cap)
{
    if (cap <= t->cap) return CT_OK;
    /* at least 1.5x: contact Hessians grow by a few terms between Newton iterations, and each
     * reallocation of their arrays (tens of MB) costs a copy and fresh pages */
    if (t->cap && cap < t->cap + t->cap / 2) cap = t->cap + t->cap / 2;
    int *r = realloc(t->row, cap * sizeof *r);
    if (!r) return CT_ENOMEM;
    t->row = r;
    int *c = realloc(t->col, cap * sizeof *c);
    if (!c) return CT_ENOMEM;
    t->col = c;
    double *v = realloc(t->val, cap * sizeof *v);
    if (!v) return CT_ENOMEM;
    t->val = v;
    t->cap = cap;
    return CT_OK;
}

static ct_status grow(ct_triplets *t, size_t extra)
{
    if (t->n + extra <= t->cap) return CT_OK;
    size_t cap = t->cap ? t->cap : 64;
    while (cap < t->n + extra) cap *= 2;
    return ct_triplets_reserve(t, cap);
}

ct_status ct_triplets_add(ct_triplets *t, int r, int c, double v)
{
    ct_status st = grow(t, 1);
    if (st != CT_OK) return st;
    t->row[t->n] = r;
    t->col[t->n] = c;
    t->val[t->n] = v;
    t->n++;
    return CT_OK;
}

/* The triplets of the dense block H over v[0..nv) in the order of ct_triplets_add_block (with
 * `upper` only row <= col) into val[0..) and, unless row is NULL, row[0..), col[0..); returns
 * their number. */
static size_t block_walk(const int *v, int nv, int dim, int upper, const double *H, int *row, int *col,
                         double *val)
{
    const int nd = nv * dim;
    size_t k = 0;
    for (int b = 0; b < nv; ++b)
        for (int j = 0; j < dim; ++j) {
            const int c = v[b] * dim + j, lj = b * dim + j;
            for (int a = 0; a < nv; ++a)
                for (int i = 0; i < dim; ++i) {
                    if (upper && v[a] * dim + i > c) continue;
                    if (row) {
                        row[k] = v[a] * dim + i;
                        col[k] = c;
                    }
                    val[k++] = H[(a * dim + i) + (size_t)nd * lj];
                }
        }
    return k;
}

ct_status ct_triplets_add_block(ct_triplets *t, const int *idx, int nv, int dim, const double *H)
{
    int nd = nv * dim;
    ct_status st = grow(t, (size_t)nd * (size_t)nd);
    if (st == CT_OK) st = ct_triplets_note_block(t, t->n, idx, nv, dim, 0);
    if (st != CT_OK) return st;
    t->n += block_walk(idx, nv, dim, t->upper, H, t->row + t->n, t->col + t->n, t->val + t->n);
    return CT_OK;
}

void ct_triplets_put_block(ct_triplets *t, size_t k0, const int *v, int nv, int dim, const double *H)
{
    double *val = t->val + k0;
    if (!t->rows_lazy || nv > 4) { /* (a block too large to note keeps its rows) */
        block_walk(v, nv, dim, t->upper, H, t->row + k0, t->col + k0, val);
        return;
    }
    if (!t->upper) { /* the block's own order */
        memcpy(val, H, (size_t)(nv * dim) * (size_t)(nv * dim) * sizeof *H);
        return;
    }
    size_t cnt;
    const unsigned char *ord = ct_triplet_block_order(v, nv, dim, &cnt);
    if (!ord) {
        block_walk(v, nv, dim, 1, H, NULL, NULL, val);
        return;
    }
    for (size_t k = 0; k < cnt; ++k) val[k] = H[ord[k]];
}

ct_status ct_triplets_append(ct_triplets *t, const ct_triplets *src)
{
    ct_status st = grow(t, src->n);
    if (st != CT_OK) return st;
    memcpy(t->row + t->n, src->row, src->n * sizeof *t->row);
    memcpy(t->col + t->n, src->col, src->n * sizeof *t->col);
    memcpy(t->val + t->n, src->val, src->n * sizeof *t->val);
    /* the blocks stay blocks under the same `upper` (else plain); lazy rows are written unless
     * t's reader takes them from the table */
    const int same = src->upper == t->upper;
    for (size_t b = 0; b < src->nblk && st == CT_OK; ++b) {
        const ct_triplet_block *sb = &src->blk[b];
        if (same) st = ct_triplets_note_block(t, t->n + sb->k0, sb->v, sb->nv, sb->dim, src->nblk - b);
        if (src->rows_lazy && !(same && t->rows_lazy))
            ct_triplet_block_rows(sb, src->upper, t->row + t->n + sb->k0, t->col + t->n + sb->k0);
    }
    t->n += src->n;
    return st;
}

void ct_csc_init(ct_csc *A) { memset(A, 0, sizeof *A); }

void ct_csc_free(ct_csc *A)
{
    free(A->colptr);
    free(A->rowind);
    free(A->val);
    memset(A, 0, sizeof *A);
}

long ct_csc_find(const ct_csc *A, int r, int c)
{
    if (c < 0 || c >= A->ncol) return -1;
    int lo = A->colptr[c], hi = A->colptr[c + 1] - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int rm = A->rowind[mid];
        if (rm == r) return mid;
        if (rm < r) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

void ct_csc_mult(const ct_csc *A, int sym_upper, const double *x, double *y)
{
    memset(y, 0, (size_t)A->nrow * sizeof *y);
    for (int c = 0; c < A->ncol; ++c)
        for (int k = A->colptr[c]; k < A->colptr[c + 1]; ++k) {
            int r = A->rowind[k];
            y[r] += A->val[k] * x[c];
            if (sym_upper && r != c) y[c] += A->val[k] * x[r];
        }
}

/* Order of entries within a column: by row, then by position in the triplet list. */
typedef struct {
    int row;
    size_t pos;
} row_pos;

static int cmp_row_pos(const void *a, const void *b)
{
    const row_pos *x = a, *y = b;
    if (x->row != y->row) return x->row < y->row ? -1 : 1;
    return x->pos < y->pos ? -1 : (x->pos > y->pos);
}

ct_status ct_csc_from_triplets(ct_csc *A, int nrow, int ncol, const ct_triplets *t, int upper_only)
{
    ct_csc_free(A);
    A->nrow = nrow;
    A->ncol = ncol;
    size_t *cnt = calloc((size_t)ncol + 1, sizeof *cnt);
    if (!cnt) return CT_ENOMEM;
    for (size_t k = 0; k < t->n; ++k) {
        if (upper_only && t->row[k] > t->col[k]) continue;
        cnt[t->col[k] + 1]++;
    }
    for (int c = 0; c < ncol; ++c) cnt[c + 1] += cnt[c];
    size_t m = cnt[ncol];
    row_pos *rp = malloc((m + 1) * sizeof *rp);
    size_t *next = malloc(((size_t)ncol + 1) * sizeof *next);
    A->colptr = calloc((size_t)ncol + 1, sizeof *A->colptr);
    if (!rp || !next || !A->colptr) {
        free(cnt);
        free(rp);
        free(next);
        return CT_ENOMEM;
    }
    memcpy(next, cnt, ((size_t)ncol + 1) * sizeof *next);
    for (size_t k = 0; k < t->n; ++k) {
        if (upper_only && t->row[k] > t->col[k]) continue;
        rp[next[t->col[k]]++] = (row_pos){t->row[k], k};
    }
    free(next);
    /* sort each column, count unique rows */
    size_t nnz = 0;
    for (int c = 0; c < ncol; ++c) {
        qsort(rp + cnt[c], cnt[c + 1] - cnt[c], sizeof *rp, cmp_row_pos);
        for (size_t k = cnt[c]; k < cnt[c + 1]; ++k)
            if (k == cnt[c] || rp[k].row != rp[k - 1].row) nnz++;
    }
    A->rowind = malloc((nnz + 1) * sizeof *A->rowind);
    A->val = calloc(nnz + 1, sizeof *A->val);
    if (!A->rowind || !A->val) {
        free(cnt);
        free(rp);
        return CT_ENOMEM;
    }
    size_t z = 0;
    for (int c = 0; c < ncol; ++c) {
        A->colptr[c] = (int)z;
        for (size_t k = cnt[c]; k < cnt[c + 1]; ++k) {
            if (k == cnt[c] || rp[k].row != rp[k - 1].row) {
                A->rowind[z] = rp[k].row;
                A->val[z] = 0.0;
                z++;
            }
            A->val[z - 1] += t->val[rp[k].pos];
        }
    }
    A->colptr[ncol] = (int)z;
    free(cnt);
    free(rp);
    return CT_OK;
}
