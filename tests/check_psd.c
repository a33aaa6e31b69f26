/* check_psd.c — the small symmetric eigensolvers and PSD projections of ct_psd.h.
 *
 * Expected values come from LAPACK (LAPACKE_dsyev, an independent eigensolver, called here) or
 * from construction:
 *   - ct_psd_jacobi_eig (2×2, 3×3): eigenvalues against dsyev's within 16ε‖A‖_F, V orthonormal
 *     (8ε) and A V = V diag(λ) within 16ε‖A‖_F, on random, PSD rank-deficient, repeated-eigenvalue
 *     and tiny-eigenvalue matrices;
 *   - ct_psd_project_small (r = 1..9) against the projection formed from dsyev's eigenpairs,
 *     Σ_{λ>0} λ z zᵀ, within 64 r ε‖M‖ (max norm), on matrices Q diag(λ) Qᵀ with chosen spectra:
 *     mixed signs, a double negative eigenvalue, rank-deficient (zero eigenvalues), one negative,
 *     all negative; exactly symmetric results;
 *   - a PSD input is returned bitwise (mirrored from its lower triangle);
 *   - scaling by 2^±600 commutes with the projection bitwise (the power-of-2 scaling of
 *     ct_psd_begin), so matrices near underflow and overflow are projected as well as others;
 *   - grouping: ct_psd_begin / ct_psd_ql on four works at once / ct_psd_end gives bitwise the
 *     same matrices as one at a time (the QL lanes perform the same operations);
 *   - a non-finite entry gives CT_ELIB, like ct_psd_project.
 */
#include "ct_test_util.h"

#include "contactlab/ct_psd.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

static unsigned long long seed = 12345;

static double rnd(void) { return 2.0 * ct_test_lcg01(&seed) - 1.0; }

/* Random orthogonal Q (n×n) by Gram–Schmidt on random columns. */
static void random_orthogonal(int n, double *Q)
{
    for (int j = 0; j < n; ++j) {
        for (;;) {
            double *q = Q + n * j, nn = 0.0;
            for (int i = 0; i < n; ++i) q[i] = rnd();
            for (int pass = 0; pass < 2; ++pass)
                for (int k = 0; k < j; ++k) {
                    const double *p = Q + n * k;
                    double d = 0.0;
                    for (int i = 0; i < n; ++i) d += p[i] * q[i];
                    for (int i = 0; i < n; ++i) q[i] -= d * p[i];
                }
            for (int i = 0; i < n; ++i) nn += q[i] * q[i];
            if (nn < 1e-6) continue;
            for (int i = 0; i < n; ++i) q[i] /= sqrt(nn);
            break;
        }
    }
}

/* A = Q diag(lam) Qᵀ, both triangles. */
static void with_spectrum(int n, const double *lam, double *A)
{
    double Q[81];
    random_orthogonal(n, Q);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = 0.0;
            for (int k = 0; k < n; ++k) s += Q[i + n * k] * lam[k] * Q[j + n * k];
            A[i + n * j] = s;
        }
    for (int j = 0; j < n; ++j)
        for (int i = j + 1; i < n; ++i) A[j + n * i] = A[i + n * j];
}

static double frobenius(int n, const double *A)
{
    double s = 0.0;
    for (int i = 0; i < n * n; ++i) s += A[i] * A[i];
    return sqrt(s);
}

static double max_abs(int n, const double *A)
{
    double m = 0.0;
    for (int i = 0; i < n * n; ++i) m = fmax(m, fabs(A[i]));
    return m;
}

/* The projection from dsyev's eigenpairs (the reference). */
static void reference_projection(int n, const double *A, double *P)
{
    double V[81], w[9];
    memcpy(V, A, (size_t)n * n * sizeof *V);
    ck_assert_int_eq(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', n, V, n, w), 0);
    memset(P, 0, (size_t)n * n * sizeof *P);
    for (int k = 0; k < n; ++k)
        if (w[k] > 0.0)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) P[i + n * j] += w[k] * V[i + n * k] * V[j + n * k];
}

START_TEST(test_jacobi_eig)
{
    double worst = 0.0;
    for (int t = 0; t < 4000; ++t) {
        const int n = 2 + t % 2, kind = (t / 2) % 4;
        double A[9], lam[3], V[9], ref[3], W[9];
        if (kind == 0) { /* random symmetric */
            for (int j = 0; j < n; ++j)
                for (int i = j; i < n; ++i) A[i + n * j] = A[j + n * i] = rnd();
        } else {
            double l[3] = {rnd(), rnd(), rnd()};
            if (kind == 1) l[0] = 0.0, l[1] = fabs(l[1]), l[2] = fabs(l[2]); /* PSD, rank-deficient */
            if (kind == 2) l[1] = l[0];                                        /* repeated */
            if (kind == 3) l[0] = 1e-12 * fabs(l[0]), l[1] = 1.0, l[2] = 2.0;  /* tiny eigenvalue */
            with_spectrum(n, l, A);
        }
        ct_psd_jacobi_eig(n, A, lam, V);
        memcpy(W, A, sizeof W);
        ck_assert_int_eq(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, W, n, ref), 0);
        /* sort ours ascending like LAPACK's */
        for (int i = 0; i < n; ++i)
            for (int j = i + 1; j < n; ++j)
                if (lam[j] < lam[i]) {
                    double s = lam[i];
                    lam[i] = lam[j];
                    lam[j] = s;
                }
        const double tol = 16.0 * DBL_EPSILON * fmax(frobenius(n, A), DBL_MIN);
        for (int i = 0; i < n; ++i) {
            ck_assert_msg(fabs(lam[i] - ref[i]) <= tol, "n %d kind %d: λ%d %.17g vs %.17g", n, kind, i, lam[i], ref[i]);
            worst = fmax(worst, fabs(lam[i] - ref[i]) / tol);
        }
        /* A V = V Λ and VᵀV = I (with V's own eigenvalue order) */
        double l2[3];
        ct_psd_jacobi_eig(n, A, l2, V);
        for (int k = 0; k < n; ++k)
            for (int i = 0; i < n; ++i) {
                double av = 0.0, vv = 0.0;
                for (int j = 0; j < n; ++j) {
                    av += A[i + n * j] * V[j + n * k];
                    vv += V[j + n * i] * V[j + n * k];
                }
                ck_assert(fabs(av - l2[k] * V[i + n * k]) <= tol);
                ck_assert(fabs(vv - (i == k)) <= 8.0 * DBL_EPSILON);
            }
    }
    printf("jacobi: 4000 matrices, worst eigenvalue error %.2f of the tolerance\n", worst);
}
END_TEST

START_TEST(test_staged_projection)
{
    double worst = 0.0;
    for (int t = 0; t < 3000; ++t) {
        const int r = 1 + t % 9, kind = (t / 9) % 6;
        double l[9], A[81], M[81], P[81];
        for (int k = 0; k < r; ++k) l[k] = rnd();
        if (kind == 1 && r > 2) l[0] = l[1] = -fabs(l[0]) - 0.1; /* double negative eigenvalue */
        if (kind == 2)                                              /* rank-deficient, mixed signs */
            for (int k = 0; k < r; k += 2) l[k] = 0.0;
        if (kind == 3)
            for (int k = 0; k < r; ++k) l[k] = k == 0 ? -fabs(l[k]) - 0.1 : fabs(l[k]); /* one negative */
        if (kind == 4)
            for (int k = 0; k < r; ++k) l[k] = -fabs(l[k]) - 1e-3; /* negative definite: 0 */
        with_spectrum(r, l, A);
        memcpy(M, A, sizeof A);
        ck_assert_int_eq(ct_psd_project_small(M, r), CT_OK);
        reference_projection(r, A, P);
        const double tol = 64.0 * r * DBL_EPSILON * fmax(max_abs(r, A), DBL_MIN);
        for (int j = 0; j < r; ++j)
            for (int i = 0; i < r; ++i) {
                const double e = fabs(M[i + r * j] - P[i + r * j]);
                ck_assert_msg(e <= tol, "r %d kind %d: entry (%d, %d) off by %g (tolerance %g)", r, kind, i, j, e, tol);
                ck_assert(M[i + r * j] == M[j + r * i]);
                worst = fmax(worst, e / tol);
            }
    }
    printf("staged projection: 3000 matrices, worst error %.3f of the tolerance\n", worst);
}
END_TEST

START_TEST(test_psd_kept_and_scaling)
{
    for (int t = 0; t < 500; ++t) {
        const int r = 1 + t % 9;
        double l[9], A[81], M[81], S[81], B[81];
        /* a PSD matrix (eigenvalues well above the round-off band) is returned as it is */
        for (int k = 0; k < r; ++k) l[k] = 0.5 + fabs(rnd());
        with_spectrum(r, l, A);
        memcpy(M, A, sizeof A);
        for (int j = 0; j < r; ++j) /* garbage in the upper triangle: only the lower one is read */
            for (int i = 0; i < j; ++i) M[i + r * j] = 1e300;
        ck_assert_int_eq(ct_psd_project_small(M, r), CT_OK);
        ck_assert(memcmp(M, A, (size_t)r * r * sizeof *M) == 0);
        /* an indefinite matrix scaled by 2^±600 (beyond 2^±300, where ct_psd_begin scales by a
         * power of 2; entries and results stay normal numbers): the same bits, scaled */
        for (int k = 0; k < r; ++k) l[k] = rnd();
        with_spectrum(r, l, A);
        memcpy(B, A, sizeof A);
        ck_assert_int_eq(ct_psd_project_small(B, r), CT_OK);
        for (int e = -600; e <= 600; e += 1200) {
            for (int i = 0; i < r * r; ++i) S[i] = ldexp(A[i], e);
            ck_assert_int_eq(ct_psd_project_small(S, r), CT_OK);
            for (int i = 0; i < r * r; ++i) ck_assert(S[i] == ldexp(B[i], e));
        }
    }
    double N[4] = {1.0, NAN, NAN, 1.0};
    ck_assert_int_eq(ct_psd_project_small(N, 2), CT_ELIB);
    double Inf[4] = {1.0, INFINITY, INFINITY, -1.0};
    ck_assert_int_eq(ct_psd_project_small(Inf, 2), CT_ELIB);
}
END_TEST

START_TEST(test_grouping_bitwise)
{
    for (int t = 0; t < 300; ++t) {
        double A[4][81], G[4][81], O[4][81];
        int r[4];
        ct_psd_work w[4], *pw[4];
        for (int q = 0; q < 4; ++q) {
            double l[9];
            r[q] = 1 + (t + 3 * q) % 9;
            for (int k = 0; k < r[q]; ++k) l[k] = (q + t) % 5 == 0 ? fabs(rnd()) + 0.5 : rnd(); /* some PSD */
            with_spectrum(r[q], l, A[q]);
            memcpy(G[q], A[q], sizeof A[q]);
            memcpy(O[q], A[q], sizeof A[q]);
            ct_psd_begin(&w[q], G[q], r[q]);
            pw[q] = (t + q) % 7 == 0 ? NULL : &w[q]; /* NULL entries are skipped */
        }
        ct_psd_ql(pw, 4);
        for (int q = 0; q < 4; ++q) {
            if (!pw[q]) { /* skipped by the group: iterated alone */
                ct_psd_work *one = &w[q];
                ct_psd_ql(&one, 1);
            }
            ck_assert_int_eq(ct_psd_end(&w[q], G[q]), CT_OK);
            ck_assert_int_eq(ct_psd_project_small(O[q], r[q]), CT_OK);
            ck_assert(memcmp(G[q], O[q], (size_t)r[q] * r[q] * sizeof(double)) == 0);
        }
    }
}
END_TEST

static Suite *psd_suite(void)
{
    Suite *s = suite_create("psd");
    TCase *tc = tcase_create("psd");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_jacobi_eig);
    tcase_add_test(tc, test_staged_projection);
    tcase_add_test(tc, test_psd_kept_and_scaling);
    tcase_add_test(tc, test_grouping_bitwise);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(psd_suite)
