/* check_fclib.c — the FCLIB reader (ct_fclib.h): the three problems of data/fclib/ against their
 * raw datasets read here with the HDF5 API (sizes, μ, q, W entry by entry and as W·x), the three
 * storages of W (triplets with duplicates, CSC, CSR) of one small problem written by the test, a
 * missing diagonal block, a 2D problem, and malformed files (CT_EINPUT naming file and dataset). */
#include "contactlab/ct_fclib.h"
#include "ct_test_util.h"

#include <hdf5.h>

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ raw reading (test side) */

/* Every element of `ds` converted to `mtype` (H5T_NATIVE_INT or H5T_NATIVE_DOUBLE); *n its count. */
static void *raw_read(hid_t f, const char *ds, hid_t mtype, size_t esz, size_t *n)
{
    hid_t d = H5Dopen2(f, ds, H5P_DEFAULT);
    ck_assert_msg(d >= 0, "%s: cannot open", ds);
    hid_t sp = H5Dget_space(d);
    ck_assert_int_ge(sp, 0);
    hssize_t np = H5Sget_simple_extent_npoints(sp);
    ck_assert_int_gt(np, 0);
    void *buf = malloc((size_t)np * esz);
    ck_assert_ptr_nonnull(buf);
    ck_assert_int_ge(H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), 0);
    ck_assert_int_ge(H5Sclose(sp), 0);
    ck_assert_int_ge(H5Dclose(d), 0);
    *n = (size_t)np;
    return buf;
}

static int raw_int(hid_t f, const char *ds)
{
    size_t n;
    int *v = raw_read(f, ds, H5T_NATIVE_INT, sizeof(int), &n);
    ck_assert_uint_eq(n, 1);
    int x = v[0];
    free(v);
    return x;
}

/* The file's W as a dense n × n row-major matrix (duplicates summed), its stored-entry mask, and the
 * stored-entry count; the test's own decoding of the three FCLIB storages. */
typedef struct {
    int n, nnz, dim, nmu;
    double *A;      /* n·n */
    char *stored;   /* n·n: 1 where the file stores an entry */
    double *q, *mu; /* n, nmu */
} raw_problem;

static void raw_problem_read(const char *file, raw_problem *R)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_msg(f >= 0, "%s: cannot open", file);
    int m = raw_int(f, "/fclib_local/W/m"), n = raw_int(f, "/fclib_local/W/n"), nz = raw_int(f, "/fclib_local/W/nz");
    ck_assert_int_eq(m, n);
    R->n = n;
    R->dim = raw_int(f, "/fclib_local/spacedim");
    size_t np, ni, nx, nq, nmu;
    int *p = raw_read(f, "/fclib_local/W/p", H5T_NATIVE_INT, sizeof(int), &np);
    int *ix = raw_read(f, "/fclib_local/W/i", H5T_NATIVE_INT, sizeof(int), &ni);
    double *x = raw_read(f, "/fclib_local/W/x", H5T_NATIVE_DOUBLE, sizeof(double), &nx);
    R->q = raw_read(f, "/fclib_local/vectors/q", H5T_NATIVE_DOUBLE, sizeof(double), &nq);
    R->mu = raw_read(f, "/fclib_local/vectors/mu", H5T_NATIVE_DOUBLE, sizeof(double), &nmu);
    ck_assert_uint_eq(nq, (size_t)n);
    R->nmu = (int)nmu;
    R->A = calloc((size_t)n * n, sizeof *R->A);
    R->stored = calloc((size_t)n * n, 1);
    ck_assert(R->A && R->stored);
    if (nz >= 0) {
        for (int k = 0; k < nz; ++k) {
            R->A[(size_t)ix[k] * n + p[k]] += x[k];
            R->stored[(size_t)ix[k] * n + p[k]] = 1;
        }
        R->nnz = nz;
    } else {
        ck_assert_uint_eq(np, (size_t)n + 1);
        for (int a = 0; a < n; ++a)
            for (int k = p[a]; k < p[a + 1]; ++k) {
                size_t at = nz == -1 ? (size_t)ix[k] * n + a : (size_t)a * n + ix[k];
                R->A[at] += x[k];
                R->stored[at] = 1;
            }
        R->nnz = p[n];
    }
    free(p);
    free(ix);
    free(x);
    ck_assert_int_ge(H5Fclose(f), 0);
}

static void raw_problem_free(raw_problem *R)
{
    free(R->A);
    free(R->stored);
    free(R->q);
    free(R->mu);
}

/* The reader's block rows as a dense row-major matrix, checking the block-row invariants on the
 * way: pointers from 0 and non-decreasing, columns strictly increasing and in range, diagonal
 * present. */
static double *blocks_to_dense(const ct_fclib_problem *fp)
{
    const int d = fp->dim, n = fp->m * d;
    double *B = calloc((size_t)n * n, sizeof *B);
    ck_assert_ptr_nonnull(B);
    ck_assert_int_eq(fp->ptr[0], 0);
    for (int i = 0; i < fp->m; ++i) {
        ck_assert_int_le(fp->ptr[i], fp->ptr[i + 1]);
        int diag = 0;
        for (int k = fp->ptr[i]; k < fp->ptr[i + 1]; ++k) {
            int j = fp->col[k];
            ck_assert(j >= 0 && j < fp->m);
            if (k > fp->ptr[i]) ck_assert_int_lt(fp->col[k - 1], j);
            if (j == i) diag = 1;
            for (int r = 0; r < d; ++r)
                for (int c = 0; c < d; ++c)
                    B[(size_t)(i * d + r) * n + j * d + c] = fp->val[(size_t)k * d * d + r * d + c];
        }
        ck_assert_msg(diag, "block row %d has no diagonal block", i);
    }
    return B;
}

/* ------------------------------------------------------------------ the three data files */

static const struct {
    const char *file;
    int contacts;           /* data/fclib/README.md */
    double mu_a, mu_b;      /* the μ values the README states */
    double asym_lo, asym_hi; /* max|W − Wᵀ| / max|W| bracket: symmetric up to round-off, or "slightly" not */
} files[] = {
    {"data/fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5", 60, 0.3, 0.5, 0.0, 1e-14},
    {"data/fclib/BoxesStack-local_problem_test.hdf5", 48, 0.7, 0.7, 0.0, 1e-14},
    {"data/fclib/Capsules-i125-1213.hdf5", 286, 0.7, 0.7, 1e-5, 1e-1},
};

START_TEST(test_data_file)
{
    const char *file = files[_i].file;
    raw_problem R;
    raw_problem_read(file, &R);
    ct_diag d;
    ct_diag_init(&d);
    ct_fclib_problem fp;
    ct_status st = ct_fclib_read(file, &fp, &d);
    ck_assert_msg(st == CT_OK, "%s: %s", file, ct_diag_last(&d));
    /* sizes and μ against the raw datasets and the README */
    ck_assert_int_eq(fp.m, R.nmu);
    ck_assert_int_eq(fp.m, files[_i].contacts);
    ck_assert_int_eq(fp.dim, R.dim);
    ck_assert_int_eq(fp.dim, 3);
    ck_assert_int_eq(fp.m * fp.dim, R.n);
    ck_assert_int_eq(fp.nnz, R.nnz);
    ck_assert_int_eq(fp.format, -2); /* all three store W as CSR */
    for (int c = 0; c < fp.m; ++c) {
        ck_assert(fp.mu[c] == R.mu[c]);
        ck_assert(fp.mu[c] == files[_i].mu_a || fp.mu[c] == files[_i].mu_b);
    }
    for (int k = 0; k < R.n; ++k) ck_assert(fp.q[k] == R.q[k]);
    /* W entry by entry (no duplicates in these files, so the sums are the stored values) */
    double *B = blocks_to_dense(&fp);
    const int n = R.n, dim = fp.dim;
    for (size_t k = 0; k < (size_t)n * n; ++k)
        ck_assert_msg(B[k] == R.A[k], "%s: W[%zu][%zu] = %.17g, file %.17g", file, k / n, k % n, B[k], R.A[k]);
    /* every block holds a stored entry, or is a diagonal block; every stored entry is in a block */
    int blocks = 0;
    for (int bi = 0; bi < fp.m; ++bi)
        for (int bj = 0; bj < fp.m; ++bj) {
            int any = 0;
            for (int r = 0; r < dim; ++r)
                for (int c = 0; c < dim; ++c) any |= R.stored[(size_t)(bi * dim + r) * n + bj * dim + c];
            blocks += any || bi == bj;
        }
    ck_assert_int_eq(fp.ptr[fp.m], blocks);
    /* W x + q through the solver's product against the dense product, for a random x */
    unsigned long long rng = 12345 + (unsigned long long)_i;
    double *xv = malloc((size_t)n * sizeof *xv), *u = malloc((size_t)n * sizeof *u);
    double *ref = malloc((size_t)n * sizeof *ref);
    ck_assert(xv && u && ref);
    for (int k = 0; k < n; ++k) xv[k] = 2.0 * ct_test_lcg01(&rng) - 1.0;
    for (int r = 0; r < n; ++r) {
        double s = R.q[r];
        for (int c = 0; c < n; ++c) s += R.A[(size_t)r * n + c] * xv[c];
        ref[r] = s;
    }
    ct_pgs_problem P = ct_fclib_view(&fp);
    ck_assert_int_eq(P.m, fp.m);
    ck_assert_ptr_null(P.adh);
    ct_pgs_velocity(&P, xv, u);
    double err = ct_rel_err_vec(u, ref, (size_t)n, 1e-300);
    ck_assert_msg(err < 1e-13, "%s: |Wx + q - ref| / |ref| = %g", file, err);
    /* asymmetry, against the dense matrix */
    double big = 0, diff = 0;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            big = fmax(big, fabs(R.A[(size_t)r * n + c]));
            diff = fmax(diff, fabs(R.A[(size_t)r * n + c] - R.A[(size_t)c * n + r]));
        }
    double asym = ct_fclib_asymmetry(&fp);
    ck_assert_msg(fabs(asym - diff / big) <= 1e-15, "%s: asymmetry %g, dense %g", file, asym, diff / big);
    ck_assert(asym >= files[_i].asym_lo && asym <= files[_i].asym_hi);
    free(xv);
    free(u);
    free(ref);
    free(B);
    ct_fclib_free(&fp);
    ck_assert_ptr_null(fp.ptr);
    ct_diag_free(&d);
    raw_problem_free(&R);
}
END_TEST

/* ------------------------------------------------------------------ files written by the test */

/* A small problem to write: every dataset optional (omit by path), W in any storage. */
typedef struct {
    int spacedim, wm, wn, nz;
    const int *p, *i;
    const double *x, *q, *mu;
    int np, ni, nx, nq, nmu;
    int x_as_int;     /* store x as an integer dataset */
    const char *omit; /* a dataset or group path to leave out (NULL: none) */
} spec;

static void put(hid_t f, hid_t lcpl, const spec *s, const char *path, hid_t ftype, hid_t mtype, const void *data,
                int n)
{
    if (s->omit && strncmp(path, s->omit, strlen(s->omit)) == 0) return;
    hsize_t dims[1] = {(hsize_t)n};
    hid_t sp = H5Screate_simple(1, dims, NULL);
    ck_assert_int_ge(sp, 0);
    hid_t d = H5Dcreate2(f, path, ftype, sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_msg(d >= 0, "%s: create", path);
    if (n > 0) ck_assert_int_ge(H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    ck_assert_int_ge(H5Dclose(d), 0);
    ck_assert_int_ge(H5Sclose(sp), 0);
}

static void write_spec(const char *file, const spec *s)
{
    hid_t f = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    ck_assert_int_ge(lcpl, 0);
    ck_assert_int_ge(H5Pset_create_intermediate_group(lcpl, 1), 0);
    const hid_t I = H5T_STD_I32LE, D = H5T_IEEE_F64LE, MI = H5T_NATIVE_INT, MD = H5T_NATIVE_DOUBLE;
    put(f, lcpl, s, "/fclib_local/spacedim", I, MI, &s->spacedim, 1);
    put(f, lcpl, s, "/fclib_local/W/m", I, MI, &s->wm, 1);
    put(f, lcpl, s, "/fclib_local/W/n", I, MI, &s->wn, 1);
    put(f, lcpl, s, "/fclib_local/W/nz", I, MI, &s->nz, 1);
    int nzmax = s->nx;
    put(f, lcpl, s, "/fclib_local/W/nzmax", I, MI, &nzmax, 1);
    put(f, lcpl, s, "/fclib_local/W/p", I, MI, s->p, s->np);
    put(f, lcpl, s, "/fclib_local/W/i", I, MI, s->i, s->ni);
    if (s->x_as_int) {
        int *xi = malloc((size_t)s->nx * sizeof *xi + 1);
        ck_assert_ptr_nonnull(xi);
        for (int k = 0; k < s->nx; ++k) xi[k] = (int)s->x[k];
        put(f, lcpl, s, "/fclib_local/W/x", I, MI, xi, s->nx);
        free(xi);
    } else {
        put(f, lcpl, s, "/fclib_local/W/x", D, MD, s->x, s->nx);
    }
    put(f, lcpl, s, "/fclib_local/vectors/q", D, MD, s->q, s->nq);
    put(f, lcpl, s, "/fclib_local/vectors/mu", D, MD, s->mu, s->nmu);
    ck_assert_int_ge(H5Pclose(lcpl), 0);
    ck_assert_int_ge(H5Fclose(f), 0);
}

/* The small problem: 3 contacts in 3D (n = 9), W dense-ish with blocks (0,0), (0,2), (1,1), (2,0),
 * (2,2) (none at (0,1), (1,0), (1,2), (2,1)), in three storages. In the triplets one entry is split
 * into two duplicates and one zero is stored explicitly. */
enum { SM = 3, SD = 3, SN = SM * SD, SMAX = 128 };
typedef struct {
    double A[SN * SN];
    int tp[SMAX], ti[SMAX]; /* triplets: column, row */
    double tx[SMAX];
    int ntrip;
    int cp[SN + 1], ci[SMAX]; /* CSC */
    double cx[SMAX];
    int rp[SN + 1], ri[SMAX]; /* CSR */
    double rx[SMAX];
    int nnz;
    double q[SN], mu[SM];
} small;

static int small_has_block(int bi, int bj) { return bi == bj || (bi == 0 && bj == 2) || (bi == 2 && bj == 0); }

static void small_make(small *S)
{
    memset(S, 0, sizeof *S);
    for (int r = 0; r < SN; ++r)
        for (int c = 0; c < SN; ++c)
            if (small_has_block(r / SD, c / SD)) S->A[r * SN + c] = r == c ? 4.0 + r : 0.25 / (1.0 + r + c);
    S->A[1 * SN + 2] = 0.0; /* an explicit zero, stored */
    /* triplets in column order, the entry (4, 4) split in two */
    for (int c = 0; c < SN; ++c)
        for (int r = 0; r < SN; ++r) {
            if (!small_has_block(r / SD, c / SD)) continue;
            if (r == 4 && c == 4) {
                S->tp[S->ntrip] = c, S->ti[S->ntrip] = r, S->tx[S->ntrip++] = 3.0;
                S->tp[S->ntrip] = c, S->ti[S->ntrip] = r, S->tx[S->ntrip++] = S->A[r * SN + c] - 3.0;
            } else {
                S->tp[S->ntrip] = c, S->ti[S->ntrip] = r, S->tx[S->ntrip++] = S->A[r * SN + c];
            }
        }
    int k = 0;
    for (int c = 0; c < SN; ++c) {
        S->cp[c] = k;
        for (int r = 0; r < SN; ++r)
            if (small_has_block(r / SD, c / SD)) S->ci[k] = r, S->cx[k++] = S->A[r * SN + c];
    }
    S->cp[SN] = k;
    S->nnz = k;
    k = 0;
    for (int r = 0; r < SN; ++r) {
        S->rp[r] = k;
        for (int c = SN - 1; c >= 0; --c) /* columns decreasing within a row: the reader sorts */
            if (small_has_block(r / SD, c / SD)) S->ri[k] = c, S->rx[k++] = S->A[r * SN + c];
    }
    S->rp[SN] = k;
    for (int r = 0; r < SN; ++r) S->q[r] = r % SD == 0 ? -1.0 - r : 0.1 * r;
    S->mu[0] = 0.2, S->mu[1] = 0.5, S->mu[2] = 0.0;
}

static spec small_spec(const small *S, int storage) /* 0 triplets, 1 CSC, 2 CSR */
{
    spec s = {.spacedim = SD, .wm = SN, .wn = SN, .q = S->q, .mu = S->mu, .nq = SN, .nmu = SM};
    if (storage == 0) {
        s.nz = S->ntrip, s.p = S->tp, s.i = S->ti, s.x = S->tx, s.np = s.ni = s.nx = S->ntrip;
    } else if (storage == 1) {
        s.nz = -1, s.p = S->cp, s.i = S->ci, s.x = S->cx, s.np = SN + 1, s.ni = s.nx = S->nnz;
    } else {
        s.nz = -2, s.p = S->rp, s.i = S->ri, s.x = S->rx, s.np = SN + 1, s.ni = s.nx = S->nnz;
    }
    return s;
}

/* A fresh temporary folder with one file name in it; tmp_done removes both. */
static char *tmp_file(void)
{
    char *dir = ct_test_tmpdir();
    ck_assert_ptr_nonnull(dir);
    size_t n = strlen(dir) + 32;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/problem.hdf5", dir);
    free(dir);
    return p;
}

static void tmp_done(char *file)
{
    remove(file);
    char *slash = strrchr(file, '/');
    if (slash) {
        *slash = '\0';
        rmdir(file);
    }
    free(file);
}

/* The three storages of the small problem give the same blocks, equal to the dense matrix. */
START_TEST(test_storages)
{
    small S;
    small_make(&S);
    ct_fclib_problem got[3];
    for (int storage = 0; storage < 3; ++storage) {
        char *file = tmp_file();
        spec s = small_spec(&S, storage);
        write_spec(file, &s);
        ct_diag d;
        ct_diag_init(&d);
        ct_status st = ct_fclib_read(file, &got[storage], &d);
        ck_assert_msg(st == CT_OK, "storage %d: %s", storage, ct_diag_last(&d));
        ct_fclib_problem *fp = &got[storage];
        ck_assert_int_eq(fp->m, SM);
        ck_assert_int_eq(fp->dim, SD);
        ck_assert_int_eq(fp->format, storage == 0 ? S.ntrip : -storage);
        ck_assert_int_eq(fp->nnz, storage == 0 ? S.ntrip : S.nnz);
        ck_assert_int_eq(fp->ptr[SM], 5); /* (0,0) (0,2) (1,1) (2,0) (2,2) */
        double *B = blocks_to_dense(fp);
        for (int k = 0; k < SN * SN; ++k)
            ck_assert_msg(fabs(B[k] - S.A[k]) <= 1e-15 * fabs(S.A[k]), "storage %d: W[%d][%d] = %g, expected %g",
                          storage, k / SN, k % SN, B[k], S.A[k]);
        free(B);
        for (int c = 0; c < SM; ++c) ck_assert(fp->mu[c] == S.mu[c]);
        ct_diag_free(&d);
        tmp_done(file);
    }
    for (int storage = 1; storage < 3; ++storage) {
        ck_assert_mem_eq(got[storage].ptr, got[0].ptr, (SM + 1) * sizeof(int));
        ck_assert_mem_eq(got[storage].col, got[0].col, 5 * sizeof(int));
        ck_assert_mem_eq(got[storage].val, got[1].val, 5 * SD * SD * sizeof(double)); /* CSC = CSR bitwise */
    }
    for (int storage = 0; storage < 3; ++storage) ct_fclib_free(&got[storage]);
}
END_TEST

/* A contact with no stored diagonal block gets a zero block; the solver refuses the problem. */
START_TEST(test_missing_diagonal_block)
{
    small S;
    small_make(&S);
    /* CSR without the entries of block (1,1): contact 1 has no entries at all */
    int rp[SN + 1], ri[SMAX], k = 0;
    double rx[SMAX];
    for (int r = 0; r < SN; ++r) {
        rp[r] = k;
        for (int c = 0; c < SN; ++c)
            if (small_has_block(r / SD, c / SD) && !(r / SD == 1 && c / SD == 1)) ri[k] = c, rx[k++] = S.A[r * SN + c];
    }
    rp[SN] = k;
    spec s = small_spec(&S, 2);
    s.p = rp, s.i = ri, s.x = rx, s.ni = s.nx = k;
    char *file = tmp_file();
    write_spec(file, &s);
    ct_diag d;
    ct_diag_init(&d);
    ct_fclib_problem fp;
    ck_assert_int_eq(ct_fclib_read(file, &fp, &d), CT_OK);
    ck_assert_int_eq(fp.ptr[SM], 5);
    ck_assert_int_eq(fp.ptr[2] - fp.ptr[1], 1);
    ck_assert_int_eq(fp.col[fp.ptr[1]], 1);
    for (int e = 0; e < SD * SD; ++e) ck_assert(fp.val[(size_t)fp.ptr[1] * SD * SD + e] == 0.0);
    ct_pgs_problem P = ct_fclib_view(&fp);
    ct_pgs_opts o = ct_pgs_default_opts();
    o.law = CT_PGS_COULOMB_DISK;
    double lambda[SN] = {0}, hist[1000];
    ct_pgs_result res;
    ck_assert_int_eq(ct_pgs_solve(&P, &o, lambda, NULL, hist, &res, &d), CT_EINPUT);
    ct_fclib_free(&fp);
    ct_diag_free(&d);
    tmp_done(file);
}
END_TEST

/* A 2D problem (spacedim 2): 2 contacts, W 4 × 4 in triplets. */
START_TEST(test_2d)
{
    const int p[] = {0, 1, 1, 2, 3, 3, 0}, i[] = {0, 1, 0, 2, 3, 2, 3};
    const double x[] = {2.0, 3.0, 0.5, 4.0, 5.0, -0.25, 0.75}, q[] = {-1, 0.5, -2, 0.25}, mu[] = {0.3, 0.6};
    spec s = {.spacedim = 2, .wm = 4, .wn = 4, .nz = 7, .p = p, .i = i, .x = x, .q = q, .mu = mu,
              .np = 7, .ni = 7, .nx = 7, .nq = 4, .nmu = 2};
    char *file = tmp_file();
    write_spec(file, &s);
    ct_diag d;
    ct_diag_init(&d);
    ct_fclib_problem fp;
    ck_assert_int_eq(ct_fclib_read(file, &fp, &d), CT_OK);
    ck_assert_int_eq(fp.m, 2);
    ck_assert_int_eq(fp.dim, 2);
    ck_assert_int_eq(fp.ptr[2], 3); /* (0,0) (1,0) (1,1) */
    double *B = blocks_to_dense(&fp), A[16] = {0};
    for (int k = 0; k < 7; ++k) A[i[k] * 4 + p[k]] += x[k];
    for (int k = 0; k < 16; ++k) ck_assert(B[k] == A[k]);
    free(B);
    ct_fclib_free(&fp);
    ct_diag_free(&d);
    tmp_done(file);
}
END_TEST

/* ------------------------------------------------------------------ malformed input */

/* Some message names both the file and `what`. */
static int diag_names(const ct_diag *d, const char *file, const char *what)
{
    for (size_t k = 0; k < d->count; ++k)
        if (strstr(d->msgs[k].text, file) && strstr(d->msgs[k].text, what)) return 1;
    return 0;
}

static void expect_einput(const char *file, const char *what)
{
    H5E_auto2_t f0 = NULL, f1 = NULL;
    void *d0 = NULL, *d1 = NULL;
    ck_assert_int_ge(H5Eget_auto2(H5E_DEFAULT, &f0, &d0), 0);
    ct_diag d;
    ct_diag_init(&d);
    ct_fclib_problem fp;
    ct_status st = ct_fclib_read(file, &fp, &d);
    ck_assert_msg(st == CT_EINPUT, "expected CT_EINPUT for '%s', got %s (%s)", what, ct_status_str(st),
                  ct_diag_last(&d));
    ck_assert_msg(diag_names(&d, file, what), "no message names %s and %s; last: %s", file, what, ct_diag_last(&d));
    ck_assert_ptr_null(fp.ptr);
    ck_assert_ptr_null(fp.q);
    ct_fclib_free(&fp);
    ct_diag_free(&d);
    /* HDF5's automatic error printing is as before */
    ck_assert_int_ge(H5Eget_auto2(H5E_DEFAULT, &f1, &d1), 0);
    ck_assert(f0 == f1 && d0 == d1);
}

START_TEST(test_nonexistent_file)
{
    expect_einput("/nonexistent/dir/problem.hdf5", "No such file");
}
END_TEST

START_TEST(test_not_hdf5)
{
    char *file = tmp_file();
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not an HDF5 file\n", f);
    ck_assert_int_eq(fclose(f), 0);
    expect_einput(file, "cannot open as HDF5");
    tmp_done(file);
}
END_TEST

/* One malformed variant of the small CSR problem per loop index; the message must name `ds`. */
START_TEST(test_malformed)
{
    small S;
    small_make(&S);
    spec s = small_spec(&S, 2);
    int rp[SN + 1], ri[SMAX], bad_int = 0;
    double rx[SMAX], q[SN], mu[SM];
    memcpy(rp, S.rp, sizeof rp);
    memcpy(ri, S.ri, sizeof ri);
    memcpy(rx, S.rx, sizeof rx);
    memcpy(q, S.q, sizeof q);
    memcpy(mu, S.mu, sizeof mu);
    s.p = rp, s.i = ri, s.x = rx, s.q = q, s.mu = mu;
    const char *ds = NULL;
    switch (_i) {
    case 0: s.omit = ds = "/fclib_local/vectors/mu"; break;
    case 1: s.omit = "/fclib_local/W", ds = "/fclib_local/W/m"; break; /* the whole matrix group */
    case 2: s.omit = ds = "/fclib_local/W/x"; break;
    case 3: s.omit = ds = "/fclib_local/spacedim"; break;
    case 4: s.nmu = SM - 1, ds = "/fclib_local/W/n"; break;          /* n != contacts × dim */
    case 5: s.nq = SN - 1, ds = "/fclib_local/vectors/q"; break;     /* q too short */
    case 6: s.wm = SN + 3, ds = "/fclib_local/W/m"; break;            /* not square */
    case 7: ri[5] = SN, ds = "/fclib_local/W/i"; break;               /* index out of range */
    case 8: ri[0] = -1, ds = "/fclib_local/W/i"; break;
    case 9: rx[3] = NAN, ds = "/fclib_local/W/x"; break;
    case 10: q[2] = INFINITY, ds = "/fclib_local/vectors/q"; break;
    case 11: mu[1] = NAN, ds = "/fclib_local/vectors/mu"; break;
    case 12: mu[1] = -0.1, ds = "/fclib_local/vectors/mu"; break;
    case 13: s.np = SN, ds = "/fclib_local/W/p"; break;               /* pointer array too short */
    case 14: rp[4] = rp[3] - 1, ds = "/fclib_local/W/p"; break;       /* decreasing */
    case 15: s.ni = S.nnz - 2, s.nx = S.nnz - 2, ds = "/fclib_local/W/p"; break; /* p[n] beyond i, x */
    case 16: s.spacedim = 4, s.wm = s.wn = SM * 4, ds = "/fclib_local/spacedim"; break;
    case 17: s.nz = -3, ds = "/fclib_local/W/nz"; break;
    case 18: s.x_as_int = 1, ds = "/fclib_local/W/x"; break;          /* wrong kind */
    case 19: s.nmu = 0, s.nq = 0, s.wm = s.wn = 0, ds = "/fclib_local/vectors/mu"; break; /* no contacts */
    case 20: { /* triplets with nz larger than the arrays */
        s = small_spec(&S, 0);
        s.nz = S.ntrip + 1, ds = "/fclib_local/W/p";
        break;
    }
    case 21: { /* triplets with a column out of range */
        static int tp[SMAX];
        s = small_spec(&S, 0);
        memcpy(tp, S.tp, sizeof tp);
        tp[2] = SN + 7, s.p = tp, ds = "/fclib_local/W/p";
        break;
    }
    default: bad_int = 1;
    }
    ck_assert(!bad_int && ds);
    char *file = tmp_file();
    write_spec(file, &s);
    expect_einput(file, ds);
    tmp_done(file);
}
END_TEST

static Suite *fclib_suite(void)
{
    Suite *s = suite_create("fclib");
    TCase *tc = tcase_create("data");
    tcase_set_timeout(tc, 30);
    tcase_add_loop_test(tc, test_data_file, 0, (int)(sizeof files / sizeof files[0]));
    suite_add_tcase(s, tc);
    TCase *tw = tcase_create("written");
    tcase_add_test(tw, test_storages);
    tcase_add_test(tw, test_missing_diagonal_block);
    tcase_add_test(tw, test_2d);
    tcase_add_test(tw, test_nonexistent_file);
    tcase_add_test(tw, test_not_hdf5);
    tcase_add_loop_test(tw, test_malformed, 0, 22);
    suite_add_tcase(s, tw);
    return s;
}

CT_TEST_MAIN(fclib_suite)
