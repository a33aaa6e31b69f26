/* fclib.c — FCLIB local problems (HDF5) → the block-sparse problem of the block PGS (ct_fclib.h).
 *
 * Every dataset is read whole with HDF5 converting to long long (index data) or double (values);
 * then the sizes are checked against each other, the scalar entries of W gathered as (row, col,
 * value) whatever the storage, bucketed by block row and summed into the dim × dim blocks. */
#include "contactlab/ct_fclib.h"
#include "contactlab/ct_h5log.h"

#include <hdf5.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DS_SPACEDIM "/fclib_local/spacedim"
#define DS_WM "/fclib_local/W/m"
#define DS_WN "/fclib_local/W/n"
#define DS_WNZ "/fclib_local/W/nz"
#define DS_WP "/fclib_local/W/p"
#define DS_WI "/fclib_local/W/i"
#define DS_WX "/fclib_local/W/x"
#define DS_Q "/fclib_local/vectors/q"
#define DS_MU "/fclib_local/vectors/mu"

typedef struct {
    hid_t f;
    const char *path;
    ct_diag *diag;
} reader;

/* A failed HDF5 call on `obj`, with the innermost message of HDF5's error stack (ct_h5_fail). */
static ct_status h5_fail(const reader *r, ct_status s, const char *obj, const char *what)
{
    return ct_h5_fail(r->diag, s, r->path, obj, what);
}

/* Does every component of the absolute path `ds` exist, the inner ones as groups? CT_OK, or a
 * CT_EINPUT message naming `ds`. */
static ct_status check_path(const reader *r, const char *ds)
{
    char buf[256];
    size_t n = strlen(ds);
    if (n >= sizeof buf) return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: path too long", r->path, ds);
    memcpy(buf, ds, n + 1);
    for (size_t i = 1; i <= n; ++i) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        htri_t e = H5Lexists(r->f, buf, H5P_DEFAULT);
        if (e < 0) return h5_fail(r, CT_EINPUT, ds, "looking up the path failed");
        if (e == 0) {
            if (c == '\0') return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: missing", r->path, ds);
            return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: missing (no %s)", r->path, ds, buf);
        }
        if (c == '/') { /* an inner component must be a group */
            hid_t o = H5Oopen(r->f, buf, H5P_DEFAULT);
            if (o < 0) return h5_fail(r, CT_EINPUT, ds, "looking up the path failed");
            H5I_type_t t = H5Iget_type(o);
            if (H5Oclose(o) < 0 || t == H5I_BADID) return h5_fail(r, CT_ELIB, ds, "looking up the path failed");
            if (t != H5I_GROUP)
                return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: %s is not a group", r->path, ds, buf);
        }
        buf[i] = c;
    }
    return CT_OK;
}

/* Read every element of dataset `ds` (any rank, storage order): real = 0: an integer dataset into
 * long long, real = 1: a floating-point one into double. *data (malloc'ed, NULL when empty). */
static ct_status read_ds(const reader *r, const char *ds, int real, void **data, size_t *count)
{
    *data = NULL;
    *count = 0;
    ct_status st = check_path(r, ds);
    if (st != CT_OK) return st;
    hid_t d = H5Dopen2(r->f, ds, H5P_DEFAULT);
    if (d < 0) return h5_fail(r, CT_EINPUT, ds, "cannot open as a dataset");
    hid_t t = -1, sp = -1;
    if ((t = H5Dget_type(d)) < 0) {
        st = h5_fail(r, CT_EINPUT, ds, "cannot read the data type");
        goto done;
    }
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_NO_CLASS) {
        st = h5_fail(r, CT_EINPUT, ds, "cannot read the data type");
        goto done;
    }
    if (cls != (real ? H5T_FLOAT : H5T_INTEGER)) {
        st = ct_diag_add(r->diag, CT_EINPUT, "%s: %s: expected %s data", r->path, ds,
                         real ? "floating-point" : "integer");
        goto done;
    }
    if ((sp = H5Dget_space(d)) < 0) {
        st = h5_fail(r, CT_EINPUT, ds, "cannot read the dataspace");
        goto done;
    }
    H5S_class_t scls = H5Sget_simple_extent_type(sp);
    if (scls == H5S_NO_CLASS) {
        st = h5_fail(r, CT_EINPUT, ds, "cannot read the dataspace");
        goto done;
    }
    hssize_t np = scls == H5S_NULL ? 0 : H5Sget_simple_extent_npoints(sp);
    if (np < 0) {
        st = h5_fail(r, CT_EINPUT, ds, "cannot read the dataspace");
        goto done;
    }
    if ((unsigned long long)np > (unsigned long long)INT_MAX) {
        st = ct_diag_add(r->diag, CT_EINPUT, "%s: %s: too many elements (%lld)", r->path, ds, (long long)np);
        goto done;
    }
    if (np > 0) {
        size_t esz = real ? sizeof(double) : sizeof(long long);
        *data = malloc((size_t)np * esz);
        if (!*data) {
            st = ct_diag_add(r->diag, CT_ENOMEM, "%s: %s: out of memory", r->path, ds);
            goto done;
        }
        if (H5Dread(d, real ? H5T_NATIVE_DOUBLE : H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) {
            st = h5_fail(r, CT_EINPUT, ds, "reading failed");
            goto done;
        }
    }
    *count = (size_t)np;
done:
    if (sp >= 0 && H5Sclose(sp) < 0 && st == CT_OK) st = h5_fail(r, CT_ELIB, ds, "closing the dataspace failed");
    if (t >= 0 && H5Tclose(t) < 0 && st == CT_OK) st = h5_fail(r, CT_ELIB, ds, "closing the data type failed");
    if (H5Dclose(d) < 0 && st == CT_OK) st = h5_fail(r, CT_ELIB, ds, "closing failed");
    if (st != CT_OK) {
        free(*data);
        *data = NULL;
        *count = 0;
    }
    return st;
}

/* One integer in int range (a 1-element dataset, any rank). */
static ct_status read_int(const reader *r, const char *ds, int *v)
{
    void *data;
    size_t n;
    ct_status st = read_ds(r, ds, 0, &data, &n);
    if (st != CT_OK) return st;
    long long x = n == 1 ? *(long long *)data : 0;
    free(data);
    if (n != 1) return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: expected one value (got %zu)", r->path, ds, n);
    if (x < INT_MIN || x > INT_MAX)
        return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: %lld is out of range", r->path, ds, x);
    *v = (int)x;
    return CT_OK;
}

/* The first non-finite element of a[0..n), or -1; *count: how many there are. */
static long first_nonfinite(const double *a, size_t n, size_t *count)
{
    long first = -1;
    *count = 0;
    for (size_t k = 0; k < n; ++k)
        if (!isfinite(a[k])) {
            if (first < 0) first = (long)k;
            ++*count;
        }
    return first;
}

static ct_status check_finite(const reader *r, const char *ds, const double *a, size_t n)
{
    size_t bad;
    long k = first_nonfinite(a, n, &bad);
    if (k < 0) return CT_OK;
    return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: %zu non-finite value%s (the first: element %ld = %g)", r->path,
                       ds, bad, bad == 1 ? "" : "s", k, a[k]);
}

/* Every index of a[0..n) in [0, hi)? */
static ct_status check_range(const reader *r, const char *ds, const long long *a, size_t n, int hi)
{
    size_t bad = 0;
    long first = -1;
    for (size_t k = 0; k < n; ++k)
        if (a[k] < 0 || a[k] >= hi) {
            if (first < 0) first = (long)k;
            ++bad;
        }
    if (!bad) return CT_OK;
    return ct_diag_add(r->diag, CT_EINPUT, "%s: %s: %zu ind%s outside [0, %d) (the first: element %ld = %lld)",
                       r->path, ds, bad, bad == 1 ? "ex" : "ices", hi, first, a[first]);
}

/* Compressed pointers: len + 1 of them, p[0] = 0, non-decreasing, p[len] <= room (the lengths of
 * the index and value arrays). */
static ct_status check_pointers(const reader *r, const long long *p, size_t np, int len, size_t ni, size_t nx,
                                const char *what)
{
    if (np != (size_t)len + 1)
        return ct_diag_add(r->diag, CT_EINPUT, "%s: " DS_WP ": %zu pointers, expected %d (%s + 1)", r->path, np,
                           len + 1, what);
    if (p[0] != 0) return ct_diag_add(r->diag, CT_EINPUT, "%s: " DS_WP ": p[0] = %lld, expected 0", r->path, p[0]);
    for (int k = 0; k < len; ++k)
        if (p[k + 1] < p[k])
            return ct_diag_add(r->diag, CT_EINPUT, "%s: " DS_WP ": decreasing at element %d (%lld after %lld)",
                               r->path, k + 1, p[k + 1], p[k]);
    if ((unsigned long long)p[len] > ni)
        return ct_diag_add(r->diag, CT_EINPUT, "%s: " DS_WP ": %lld entries but " DS_WI " holds %zu", r->path, p[len],
                           ni);
    if ((unsigned long long)p[len] > nx)
        return ct_diag_add(r->diag, CT_EINPUT, "%s: " DS_WP ": %lld entries but " DS_WX " holds %zu", r->path, p[len],
                           nx);
    return CT_OK;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The block rows of the nnz scalar entries (er[k], ec[k], x[k]) of an n × n matrix, n = m·d. */
static ct_status build_blocks(const reader *r, ct_fclib_problem *out, const int *er, const int *ec,
                              const double *x, int nnz)
{
    const int m = out->m, d = out->dim;
    ct_status st = CT_OK;
    int *cnt = calloc((size_t)m + 1, sizeof *cnt), *order = malloc(((size_t)nnz + 1) * sizeof *order);
    int *mark = malloc((size_t)m * sizeof *mark), *pos = malloc((size_t)m * sizeof *pos);
    out->ptr = calloc((size_t)m + 1, sizeof *out->ptr);
    if (!cnt || !order || !mark || !pos || !out->ptr) goto oom;
    /* bucket the entries by block row (stable counting sort) */
    for (int k = 0; k < nnz; ++k) cnt[er[k] / d + 1]++;
    for (int i = 0; i < m; ++i) cnt[i + 1] += cnt[i];
    for (int k = 0; k < nnz; ++k) order[cnt[er[k] / d]++] = k;
    for (int i = m; i > 0; --i) cnt[i] = cnt[i - 1]; /* back to the bucket starts */
    cnt[0] = 0;
    /* pass 1: distinct block columns per block row, the diagonal included */
    for (int i = 0; i < m; ++i) mark[i] = -1;
    size_t total = 0;
    for (int i = 0; i < m; ++i) {
        int nb = 0;
        for (int t = cnt[i]; t < cnt[i + 1]; ++t) {
            int bc = ec[order[t]] / d;
            if (mark[bc] != i) mark[bc] = i, ++nb;
        }
        if (mark[i] != i) mark[i] = i, ++nb;
        total += (size_t)nb;
        if (total > (size_t)INT_MAX / ((size_t)d * (size_t)d)) {
            st = ct_diag_add(r->diag, CT_EINPUT, "%s: " DS_WX ": too many blocks", r->path);
            goto done;
        }
        out->ptr[i + 1] = (int)total;
    }
    out->col = malloc((total ? total : 1) * sizeof *out->col);
    out->val = calloc((total ? total : 1) * (size_t)d * (size_t)d, sizeof *out->val);
    if (!out->col || !out->val) goto oom;
    /* pass 2: the sorted columns, then the entries summed into their blocks */
    for (int i = 0; i < m; ++i) mark[i] = -1;
    for (int i = 0; i < m; ++i) {
        int j0 = out->ptr[i], nb = 0;
        for (int t = cnt[i]; t < cnt[i + 1]; ++t) {
            int bc = ec[order[t]] / d;
            if (mark[bc] != i) mark[bc] = i, out->col[j0 + nb++] = bc;
        }
        if (mark[i] != i) mark[i] = i, out->col[j0 + nb++] = i;
        qsort(out->col + j0, (size_t)nb, sizeof *out->col, cmp_int);
        for (int t = 0; t < nb; ++t) pos[out->col[j0 + t]] = j0 + t;
        for (int t = cnt[i]; t < cnt[i + 1]; ++t) {
            int k = order[t];
            size_t at = (size_t)pos[ec[k] / d] * (size_t)(d * d) + (size_t)(er[k] % d) * (size_t)d +
                        (size_t)(ec[k] % d);
            out->val[at] += x[k];
        }
    }
    goto done;
oom:
    st = ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
done:
    free(cnt);
    free(order);
    free(mark);
    free(pos);
    return st;
}

/* Everything after the file is open. */
static ct_status read_problem(const reader *r, ct_fclib_problem *out)
{
    int dim = 0, wm = 0, wn = 0, nz = 0;
    long long *p = NULL, *ix = NULL;
    double *x = NULL, *q = NULL, *mu = NULL;
    size_t np = 0, ni = 0, nx = 0, nq = 0, nmu = 0;
    int *er = NULL, *ec = NULL;
    ct_status st = CT_OK, s;
    /* read everything first, so that every missing or mistyped dataset is reported */
    void *buf;
    if ((s = read_int(r, DS_SPACEDIM, &dim)) != CT_OK) st = s;
    if ((s = read_int(r, DS_WM, &wm)) != CT_OK) st = s;
    if ((s = read_int(r, DS_WN, &wn)) != CT_OK) st = s;
    if ((s = read_int(r, DS_WNZ, &nz)) != CT_OK) st = s;
    if ((s = read_ds(r, DS_WP, 0, &buf, &np)) != CT_OK) st = s;
    p = buf;
    if ((s = read_ds(r, DS_WI, 0, &buf, &ni)) != CT_OK) st = s;
    ix = buf;
    if ((s = read_ds(r, DS_WX, 1, &buf, &nx)) != CT_OK) st = s;
    x = buf;
    if ((s = read_ds(r, DS_Q, 1, &buf, &nq)) != CT_OK) st = s;
    q = buf;
    if ((s = read_ds(r, DS_MU, 1, &buf, &nmu)) != CT_OK) st = s;
    mu = buf;
    if (st != CT_OK) goto done;

#define BAD(...)                                                     \
    do {                                                             \
        st = ct_diag_add(r->diag, CT_EINPUT, __VA_ARGS__);           \
        goto done;                                                   \
    } while (0)
    if (dim != 2 && dim != 3) BAD("%s: " DS_SPACEDIM ": must be 2 or 3 (got %d)", r->path, dim);
    if (nmu == 0) BAD("%s: " DS_MU ": empty (no contacts)", r->path);
    if (wm != wn) BAD("%s: " DS_WM ": W must be square (m = %d, n = %d)", r->path, wm, wn);
    if ((size_t)wn != nmu * (size_t)dim)
        BAD("%s: " DS_WN ": %d is not contacts × spacedim = %zu × %d (contacts: the length of " DS_MU ")", r->path,
            wn, nmu, dim);
    if (nq != (size_t)wn) BAD("%s: " DS_Q ": length %zu, expected %d (W's n)", r->path, nq, wn);
    int nnz;
    if (nz >= 0) {
        if (np < (size_t)nz) BAD("%s: " DS_WP ": %zu column indices, fewer than nz = %d", r->path, np, nz);
        if (ni < (size_t)nz) BAD("%s: " DS_WI ": %zu row indices, fewer than nz = %d", r->path, ni, nz);
        if (nx < (size_t)nz) BAD("%s: " DS_WX ": %zu values, fewer than nz = %d", r->path, nx, nz);
        if ((st = check_range(r, DS_WI, ix, (size_t)nz, wn)) != CT_OK) goto done;
        if ((st = check_range(r, DS_WP, p, (size_t)nz, wn)) != CT_OK) goto done;
        nnz = nz;
    } else if (nz == -1 || nz == -2) {
        if ((st = check_pointers(r, p, np, wn, ni, nx, nz == -1 ? "columns" : "rows")) != CT_OK) goto done;
        nnz = (int)p[wn];
        if ((st = check_range(r, DS_WI, ix, (size_t)nnz, wn)) != CT_OK) goto done;
    } else {
        BAD("%s: " DS_WNZ ": %d is no FCLIB storage (>= 0 triplets, -1 CSC, -2 CSR)", r->path, nz);
    }
    if ((st = check_finite(r, DS_WX, x, (size_t)nnz)) != CT_OK) goto done;
    if ((st = check_finite(r, DS_Q, q, nq)) != CT_OK) goto done;
    if ((st = check_finite(r, DS_MU, mu, nmu)) != CT_OK) goto done;
    for (size_t c = 0; c < nmu; ++c)
        if (mu[c] < 0) BAD("%s: " DS_MU ": element %zu is negative (%g)", r->path, c, mu[c]);
#undef BAD

    /* the entries as (row, col) */
    er = malloc(((size_t)nnz + 1) * sizeof *er);
    ec = malloc(((size_t)nnz + 1) * sizeof *ec);
    if (!er || !ec) {
        st = ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
        goto done;
    }
    if (nz >= 0) {
        for (int k = 0; k < nnz; ++k) er[k] = (int)ix[k], ec[k] = (int)p[k];
    } else {
        for (int a = 0; a < wn; ++a)
            for (long long k = p[a]; k < p[a + 1]; ++k) {
                if (nz == -1) er[k] = (int)ix[k], ec[k] = a; /* CSC: a is the column */
                else er[k] = a, ec[k] = (int)ix[k];         /* CSR: a is the row */
            }
    }
    out->m = (int)nmu;
    out->dim = dim;
    out->format = nz;
    out->nnz = nnz;
    if ((st = build_blocks(r, out, er, ec, x, nnz)) != CT_OK) goto done;
    out->q = q, q = NULL;
    out->mu = mu, mu = NULL;
done:
    free(p);
    free(ix);
    free(x);
    free(q);
    free(mu);
    free(er);
    free(ec);
    return st;
}

ct_status ct_fclib_read(const char *path, ct_fclib_problem *out, ct_diag *diag)
{
    if (!out) return ct_diag_add(diag, CT_EINPUT, "ct_fclib_read: no output");
    memset(out, 0, sizeof *out);
    if (!path || !*path) return ct_diag_add(diag, CT_EINPUT, "no FCLIB file given");
    if (access(path, R_OK) != 0) return ct_diag_add(diag, CT_EINPUT, "%s: %s", path, strerror(errno));
    /* HDF5's own error printing off for the read (every failure is reported here), restored after */
    H5E_auto2_t old_func = NULL;
    void *old_data = NULL;
    int saved = H5Eget_auto2(H5E_DEFAULT, &old_func, &old_data) >= 0;
    if (H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0) saved = 0; /* then HDF5 merely prints its stack too */
    reader r = {-1, path, diag};
    ct_status st;
    r.f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (r.f < 0) {
        st = h5_fail(&r, CT_EINPUT, "/", "cannot open as HDF5");
    } else {
        st = read_problem(&r, out);
        if (H5Fclose(r.f) < 0 && st == CT_OK) st = h5_fail(&r, CT_ELIB, "/", "closing failed");
    }
    if (saved && H5Eset_auto2(H5E_DEFAULT, old_func, old_data) < 0 && st == CT_OK)
        st = ct_diag_add(diag, CT_ELIB, "%s: restoring HDF5's error printing failed", path);
    if (st != CT_OK) ct_fclib_free(out);
    return st;
}

void ct_fclib_free(ct_fclib_problem *p)
{
    if (!p) return;
    free(p->ptr);
    free(p->col);
    free(p->val);
    free(p->q);
    free(p->mu);
    memset(p, 0, sizeof *p);
}

ct_pgs_problem ct_fclib_view(const ct_fclib_problem *p)
{
    ct_pgs_problem v = {p->m, p->dim, p->ptr, p->col, p->val, p->q, p->mu, NULL};
    return v;
}

double ct_fclib_asymmetry(const ct_fclib_problem *p)
{
    const int d = p->dim, dd = d * d;
    double big = 0, diff = 0;
    if (!p->ptr) return 0;
    for (int i = 0; i < p->m; ++i)
        for (int k = p->ptr[i]; k < p->ptr[i + 1]; ++k) {
            int j = p->col[k];
            const int *lo = p->col + p->ptr[j], *hi = p->col + p->ptr[j + 1];
            const int *f = bsearch(&i, lo, (size_t)(hi - lo), sizeof *lo, cmp_int);
            const double *a = p->val + (size_t)k * (size_t)dd;
            const double *b = f ? p->val + (size_t)(f - p->col) * (size_t)dd : NULL;
            for (int r = 0; r < d; ++r)
                for (int c = 0; c < d; ++c) {
                    double wrc = a[r * d + c], wcr = b ? b[c * d + r] : 0.0;
                    if (fabs(wrc) > big) big = fabs(wrc);
                    if (fabs(wrc - wcr) > diff) diff = fabs(wrc - wcr);
                }
        }
    return big > 0 ? diff / big : 0.0;
}
