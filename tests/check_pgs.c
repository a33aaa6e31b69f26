/* check_pgs.c — block projected Gauss–Seidel (ct_pgs.h).
 *
 * Expected values are derived independently of the solver:
 *   - LCPs (law ADHESIVE_BOX, μ = 0, a = 0, full dense SPD W = GᵀG + εI of 3m rows): the normal
 *     impulses against brute-force enumeration of the 2^m active sets of the normal LCP
 *     0 ≤ λ_N ⊥ W_NN λ_N + q_N ≥ 0 (m = 1..6; the tangential impulses are 0: the box has L = 0),
 *     also with SOR and with shuffle (the LCP's solution is unique);
 *   - the coupled adhesive normal problem (per row 0 ≤ λ + a u ⊥ u ≥ 0, the fixed point of eq. 16;
 *     a = 0 on a third of the rows) against enumeration of its 2^m branch sets, with decoupled
 *     tangential rows bounded by max(μ max(λ_n, 0), a|q_t|/(1 + a W_tt));
 *   - the implicit adhesion projection (Gascón et al. 2010 eq. 16) against a direct solve of the 1D adhesive
 *     problem 0 ≤ λ + a u ⊥ u ≥ 0, u = w λ + q, by enumerating its two branches (3D and 2D);
 *   - the 4-sided friction pyramid with a decoupled W: clamp(−q_t/w_t, ±μλ_n) per direction
 *     (tangential MAX), 0 (MIN, a = 0), the tangential spring λ_t = −a u_t under normal traction
 *     (MAX) and the larger of the friction and adhesion bounds under compression;
 *   - the Coulomb disk with W = w I: stick λ = (v_n, −q_T)/w, slip λ_T = −μ λ_n q_T/‖q_T‖ (3D, 2D);
 *   - the natural-map residual: 0 for hand-built solutions of the Coulomb law (stick, slip,
 *     separation, μ = 0) with arbitrary SPD W, a closed-form value (1) for λ = 0 and an approaching
 *     u, > 0 for a wrong λ_T;
 *   - a random 20-contact block-sparse Coulomb problem (W = J Jᵀ + εI, J with 3m rows and 6 columns
 *     per body): natural-map residual ≤ 1e-10 plain, with SOR, with shuffle; 2D too;
 *   - determinism (memcmp of two solves), input errors (CT_EINPUT with a message).
 * A timing case prints µs per sweep for a banded 2000-contact problem.
 */
#include "ct_test_util.h"

#include "contactlab/ct_pgs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- helpers */

#define REQ(c)                                                                          \
    do {                                                                                \
        if (!(c)) ck_abort_msg("%s:%d: assertion '%s' failed", __FILE__, __LINE__, #c); \
    } while (0)

static double urand(unsigned long long *r, double lo, double hi) { return lo + (hi - lo) * ct_test_lcg01(r); }

/* A block-sparse problem built from a dense row-major W (n = m·dim): every block with a nonzero
 * entry is kept, the diagonal block always. */
typedef struct bsr {
    int m, dim;
    int *ptr, *col;
    double *val, *q, *mu, *adh;
    ct_pgs_problem P;
} bsr;

static void bsr_from_dense(bsr *B, int m, int dim, const double *W, const double *q, const double *mu,
                           const double *adh)
{
    const int n = m * dim, d2 = dim * dim;
    memset(B, 0, sizeof *B);
    B->m = m, B->dim = dim;
    B->ptr = malloc((size_t)(m + 1) * sizeof(int));
    B->col = malloc((size_t)m * m * sizeof(int) + 1);
    B->val = malloc((size_t)m * m * d2 * sizeof(double) + 1);
    B->q = malloc((size_t)n * sizeof(double) + 1);
    memcpy(B->q, q, (size_t)n * sizeof(double));
    if (mu) {
        B->mu = malloc((size_t)m * sizeof(double));
        memcpy(B->mu, mu, (size_t)m * sizeof(double));
    }
    if (adh) {
        B->adh = malloc((size_t)m * sizeof(double));
        memcpy(B->adh, adh, (size_t)m * sizeof(double));
    }
    int nb = 0;
    B->ptr[0] = 0;
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < m; ++j) {
            int nz = i == j;
            for (int r = 0; r < dim; ++r)
                for (int c = 0; c < dim; ++c) nz |= W[(size_t)(i * dim + r) * n + j * dim + c] != 0.0;
            if (!nz) continue;
            for (int r = 0; r < dim; ++r)
                for (int c = 0; c < dim; ++c) B->val[(size_t)nb * d2 + r * dim + c] = W[(size_t)(i * dim + r) * n + j * dim + c];
            B->col[nb++] = j;
        }
        B->ptr[i + 1] = nb;
    }
    B->P = (ct_pgs_problem){.m = m, .dim = dim, .ptr = B->ptr, .col = B->col, .val = B->val, .q = B->q,
                            .mu = B->mu, .adh = B->adh};
}

static void bsr_free(bsr *B)
{
    free(B->ptr), free(B->col), free(B->val), free(B->q), free(B->mu), free(B->adh);
    memset(B, 0, sizeof *B);
}

/* W = GᵀG/k + eps I, G k × n uniform in [−1, 1] (row-major n × n). */
static void random_spd(unsigned long long *r, int n, int k, double eps, double *W)
{
    double *G = malloc((size_t)k * n * sizeof(double));
    for (int i = 0; i < k * n; ++i) G[i] = urand(r, -1.0, 1.0);
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int l = 0; l < k; ++l) s += G[l * n + i] * G[l * n + j];
            W[i * n + j] = s / k + (i == j ? eps : 0.0);
        }
    free(G);
}

/* Solve A x = b (s × s, row-major, overwritten), partial pivoting; returns 0 if singular. */
static int dense_solve(int s, double *A, double *b)
{
    for (int c = 0; c < s; ++c) {
        int p = c;
        for (int r = c + 1; r < s; ++r)
            if (fabs(A[r * s + c]) > fabs(A[p * s + c])) p = r;
        if (A[p * s + c] == 0.0) return 0;
        if (p != c) {
            for (int j = 0; j < s; ++j) {
                double t = A[c * s + j];
                A[c * s + j] = A[p * s + j], A[p * s + j] = t;
            }
            double t = b[c];
            b[c] = b[p], b[p] = t;
        }
        for (int r = c + 1; r < s; ++r) {
            const double f = A[r * s + c] / A[c * s + c];
            for (int j = c; j < s; ++j) A[r * s + j] -= f * A[c * s + j];
            b[r] -= f * b[c];
        }
    }
    for (int c = s - 1; c >= 0; --c) {
        double t = b[c];
        for (int j = c + 1; j < s; ++j) t -= A[c * s + j] * b[j];
        b[c] = t / A[c * s + c];
    }
    return 1;
}

/* y = W x + q, dense (n × n row-major). */
static void dense_velocity(int n, const double *W, const double *x, const double *q, double *y)
{
    for (int i = 0; i < n; ++i) {
        double s = q[i];
        for (int j = 0; j < n; ++j) s += W[i * n + j] * x[j];
        y[i] = s;
    }
}

static ct_pgs_opts opts_of(ct_pgs_law law, double tol, int max_iter)
{
    ct_pgs_opts o = ct_pgs_default_opts();
    o.law = law, o.tol = tol, o.max_iter = max_iter;
    return o;
}

/* A one-contact problem with a dense dim × dim W. */
static void one_contact(bsr *B, int dim, const double *W, const double *q, double mu, double a)
{
    bsr_from_dense(B, 1, dim, W, q, &mu, &a);
}

static void diag3(double *W, int dim, double a, double b, double c)
{
    memset(W, 0, (size_t)dim * dim * sizeof(double));
    W[0] = a, W[dim + 1] = b;
    if (dim == 3) W[8] = c;
}

/* ---------------------------------------------------------------- defaults */

START_TEST(test_defaults)
{
    ct_pgs_opts o = ct_pgs_default_opts();
    ck_assert_int_eq(o.law, CT_PGS_ADHESIVE_BOX);
    ck_assert_int_eq(o.tangential, CT_PGS_TANGENTIAL_MAX);
    ck_assert_int_eq(o.max_iter, 1000);
    ck_assert(o.tol == 1e-8 && o.omega == 1.0 && o.shuffle == 0 && o.seed == 1);
}
END_TEST

static double clampd(double x, double L) { return x < -L ? -L : x > L ? L : x; }

/* ---------------------------------------------------------------- 1. LCP vs enumeration */

/* The normal LCP 0 ≤ x ⊥ A x + b ≥ 0 (m × m) by enumerating the active sets; returns the number of
 * active sets that solve it (x from the first). */
static int lcp_enumerate(int m, const double *A, const double *b, double *x)
{
    int found = 0;
    double As[36], bs[6], xs[6];
    int idx[6];
    for (unsigned mask = 0; mask < (1u << m); ++mask) {
        int s = 0;
        for (int i = 0; i < m; ++i)
            if (mask & (1u << i)) idx[s++] = i;
        for (int p = 0; p < s; ++p) {
            for (int r = 0; r < s; ++r) As[p * s + r] = A[idx[p] * m + idx[r]];
            bs[p] = -b[idx[p]];
        }
        if (s && !dense_solve(s, As, bs)) continue;
        for (int i = 0; i < m; ++i) xs[i] = 0.0;
        for (int p = 0; p < s; ++p) xs[idx[p]] = bs[p];
        int ok = 1;
        for (int i = 0; i < m && ok; ++i) {
            double w = b[i];
            for (int j = 0; j < m; ++j) w += A[i * m + j] * xs[j];
            if (xs[i] < -1e-12 || w < -1e-12) ok = 0;
        }
        if (ok && found++ == 0) memcpy(x, xs, (size_t)m * sizeof(double));
    }
    return found;
}

START_TEST(test_lcp_enumeration)
{
    unsigned long long r = 12345;
    double worst[3] = {0, 0, 0}, worst_u = 0.0, worst_c = 0.0;
    int max_it[3] = {0, 0, 0}, nsolves = 0, nactive = 0;
    for (int m = 1; m <= 6; ++m)
        for (int trial = 0; trial < 20; ++trial) {
            const int dim = 3, n = m * dim;
            double *W = malloc((size_t)n * n * sizeof(double));
            double q[18], A[36], b[6], xe[6];
            /* odd trials: G square and ε = 1e-3 (ill-conditioned, slow Gauss–Seidel) */
            if (trial % 2) random_spd(&r, n, n, 1e-3, W);
            else random_spd(&r, n, 2 * n, 0.1, W);
            for (int i = 0; i < n; ++i) q[i] = urand(&r, -1.0, 1.0);
            for (int i = 0; i < m; ++i) {
                b[i] = q[i * dim];
                for (int j = 0; j < m; ++j) A[i * m + j] = W[(i * dim) * n + j * dim];
            }
            ck_assert_int_ge(lcp_enumerate(m, A, b, xe), 1);
            for (int i = 0; i < m; ++i) nactive += xe[i] > 0.0;
            bsr B;
            bsr_from_dense(&B, m, dim, W, q, NULL, NULL);
            for (int v = 0; v < 3; ++v) { /* plain, SOR 1.3, shuffle */
                ct_pgs_opts o = opts_of(CT_PGS_ADHESIVE_BOX, 1e-15, 200000);
                if (v == 1) o.omega = 1.3;
                if (v == 2) o.shuffle = 1, o.seed = 99 + (unsigned long)trial;
                double lam[18] = {0}, u[18], ln[6];
                ct_pgs_result res;
                ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, u, NULL, &res, NULL), CT_OK);
                ck_assert(res.converged);
                for (int i = 0; i < m; ++i) {
                    ln[i] = lam[i * dim];
                    REQ(lam[i * dim + 1] == 0.0 && lam[i * dim + 2] == 0.0); /* μ = 0, a = 0: L = 0 */
                }
                const double e = ct_rel_err_vec(ln, xe, (size_t)m, 1e-12);
                if (e > worst[v]) worst[v] = e;
                if (res.iters > max_it[v]) max_it[v] = res.iters;
                ck_assert_msg(e <= 1e-9, "m = %d trial %d variant %d: rel err %.3g", m, trial, v, e);
                /* u returned = W λ + q; feasibility and complementarity of the normal rows */
                double ud[18];
                dense_velocity(n, W, lam, q, ud);
                for (int i = 0; i < n; ++i) REQ(fabs(u[i] - ud[i]) <= 1e-13);
                for (int i = 0; i < m; ++i) {
                    worst_u = fmax(worst_u, -u[i * dim]);
                    worst_c = fmax(worst_c, fabs(lam[i * dim] * u[i * dim]));
                    REQ(u[i * dim] >= -1e-10);
                    REQ(fabs(lam[i * dim] * u[i * dim]) <= 1e-10);
                }
                ++nsolves;
            }
            bsr_free(&B);
            free(W);
        }
    printf("LCP vs enumeration: %d solves (m = 1..6, %d active of %d normal rows), max rel err "
           "plain %.2e (max %d sweeps), SOR 1.3 %.2e (%d), shuffle %.2e (%d); min u_n %.1e, max |λ_n u_n| %.1e\n",
           nsolves, nactive, 20 * 21, worst[0], max_it[0], worst[1], max_it[1], worst[2], max_it[2], -worst_u, worst_c);
    fflush(stdout);
}
END_TEST

/* The adhesive normal problem of m coupled contacts, per row 0 ≤ λ_i + a_i u_i ⊥ u_i ≥ 0 with
 * u = A λ + b (the fixed point of eq. 16: u_i = 0 and λ_i ≥ 0, or the spring λ_i = −a_i u_i with
 * u_i ≥ 0; a_i = 0: the LCP), by enumerating the branches: bit i set, u_i = 0; clear,
 * λ_i + a_i u_i = 0. Returns the number of branch sets that solve it (x from the first). */
static int adhesive_enumerate(int m, const double *A, const double *b, const double *a, double *x)
{
    int found = 0;
    double M[36], xs[6];
    for (unsigned mask = 0; mask < (1u << m); ++mask) {
        for (int i = 0; i < m; ++i) {
            const int on = (mask >> i) & 1u;
            for (int j = 0; j < m; ++j) M[i * m + j] = on ? A[i * m + j] : a[i] * A[i * m + j] + (i == j);
            xs[i] = on ? -b[i] : -a[i] * b[i];
        }
        if (!dense_solve(m, M, xs)) continue;
        int ok = 1;
        for (int i = 0; i < m && ok; ++i) {
            double u = b[i];
            for (int j = 0; j < m; ++j) u += A[i * m + j] * xs[j];
            if (((mask >> i) & 1u) ? xs[i] < -1e-12 : u < -1e-12) ok = 0;
        }
        if (ok && found++ == 0) memcpy(x, xs, (size_t)m * sizeof(double));
    }
    return found;
}

/* m coupled normal rows with adhesion; the tangential rows decoupled (W_tt, W_bb only), so
 * λ_t = clamp(−q_t/W_tt, ±max(μ max(λ_n, 0), a|q_t|/(1 + a W_tt))) with λ_n from the enumeration. */
START_TEST(test_adhesive_enumeration)
{
    unsigned long long r = 2468;
    double worst_n = 0.0, worst_t = 0.0;
    int max_it = 0, nsolves = 0, nspring = 0, ncontact = 0;
    for (int m = 1; m <= 6; ++m)
        for (int trial = 0; trial < 20; ++trial) {
            const int dim = 3, n = m * dim;
            double A[36], W[324] = {0}, q[18], b[6], a[6], mu[6], xe[6], ex[18];
            random_spd(&r, m, trial % 2 ? m : 2 * m, trial % 2 ? 1e-2 : 0.1, A);
            for (int i = 0; i < m; ++i) {
                for (int j = 0; j < m; ++j) W[(i * dim) * n + j * dim] = A[i * m + j];
                for (int k = 1; k < dim; ++k) W[(i * dim + k) * n + i * dim + k] = urand(&r, 0.5, 2.0);
                for (int k = 0; k < dim; ++k) q[i * dim + k] = urand(&r, -1.0, 1.0);
                b[i] = q[i * dim];
                a[i] = (trial + i) % 3 == 0 ? 0.0 : urand(&r, 0.05, 5.0);
                mu[i] = urand(&r, 0.0, 1.0);
            }
            ck_assert_int_ge(adhesive_enumerate(m, A, b, a, xe), 1);
            for (int i = 0; i < m; ++i) {
                ex[i * dim] = xe[i];
                nspring += xe[i] < 0.0, ncontact += xe[i] > 0.0;
                for (int k = 1; k < dim; ++k) {
                    const double wt = W[(i * dim + k) * n + i * dim + k], qt = q[i * dim + k];
                    const double L = fmax(mu[i] * fmax(xe[i], 0.0), fabs(a[i] * qt) / (1.0 + a[i] * wt));
                    ex[i * dim + k] = clampd(-qt / wt, L);
                }
            }
            bsr B;
            bsr_from_dense(&B, m, dim, W, q, mu, a);
            for (int v = 0; v < 3; ++v) { /* plain, SOR 1.3, shuffle */
                ct_pgs_opts o = opts_of(CT_PGS_ADHESIVE_BOX, 1e-15, 200000);
                if (v == 1) o.omega = 1.3;
                if (v == 2) o.shuffle = 1, o.seed = 3 + (unsigned long)trial;
                double lam[18] = {0}, ln[6];
                ct_pgs_result res;
                ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, NULL, NULL, &res, NULL), CT_OK);
                ck_assert(res.converged);
                max_it = res.iters > max_it ? res.iters : max_it;
                for (int i = 0; i < m; ++i) ln[i] = lam[i * dim];
                const double e = ct_rel_err_vec(ln, xe, (size_t)m, 1e-12);
                worst_n = fmax(worst_n, e);
                ck_assert_msg(e <= 1e-9, "m = %d trial %d variant %d: normal rel err %.3g", m, trial, v, e);
                for (int i = 0; i < m; ++i)
                    for (int k = 1; k < dim; ++k) {
                        const double et = fabs(lam[i * dim + k] - ex[i * dim + k]);
                        worst_t = fmax(worst_t, et);
                        REQ(et <= 1e-9);
                    }
                ++nsolves;
            }
            bsr_free(&B);
        }
    printf("adhesive normal problem vs branch enumeration: %d solves (m = 1..6; %d spring, %d contact of 420 rows), "
           "max rel err λ_n %.2e, max |Δλ_T| %.2e (max %d sweeps)\n",
           nsolves, nspring, ncontact, worst_n, worst_t, max_it);
    fflush(stdout);
}
END_TEST

/* ---------------------------------------------------------------- 2. 1D adhesion (eq. 16) */

/* The 1D adhesive problem 0 ≤ λ + a u ⊥ u ≥ 0, u = w λ + q, solved by its two branches:
 * u = 0 (λ = −q/w, needs λ ≥ 0) or λ + a u = 0 (u = q/(1 + a w), needs u ≥ 0). */
static double adhesion_1d(double w, double q, double a)
{
    const double lam_contact = -q / w;
    if (lam_contact >= 0.0) return lam_contact;
    const double u = q / (1.0 + a * w);
    ck_assert(u >= 0.0);
    return -a * u;
}

static void run_adhesion_1d(int dim, double *worst)
{
    const double ws[] = {1.0, 0.37, 2.5e3};
    const double qs[] = {-1.3, -1e-3, 0.0, 2e-4, 0.8};
    const double as[] = {0.0, 0.1, 1.0, 40.0};
    for (int iw = 0; iw < 3; ++iw)
        for (int iq = 0; iq < 5; ++iq)
            for (int ia = 0; ia < 4; ++ia) {
                const double w = ws[iw], q = qs[iq], a = as[ia];
                double W[9], qq[3] = {q, 0.0, 0.0}, lam[3] = {0, 0, 0}, u[3];
                diag3(W, dim, w, 1.7, 0.9);
                bsr B;
                one_contact(&B, dim, W, qq, 0.0, a);
                ct_pgs_opts o = opts_of(CT_PGS_ADHESIVE_BOX, 1e-14, 10);
                ct_pgs_result res;
                ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, u, NULL, &res, NULL), CT_OK);
                ck_assert(res.converged);
                const double ex = adhesion_1d(w, q, a);
                const double e = ct_rel_err(lam[0], ex, 1e-300);
                *worst = fmax(*worst, e);
                ck_assert_msg(e <= 1e-12, "dim %d w %g q %g a %g: λ %.17g expected %.17g", dim, w, q, a, lam[0], ex);
                for (int k = 1; k < dim; ++k) ck_assert(lam[k] == 0.0);
                /* the returned velocity: u = 0 on contact, the spring λ = −a u when separating */
                if (q <= 0.0) ck_assert(fabs(u[0]) <= 1e-12 * fabs(q) + 1e-300);
                else ck_assert(fabs(lam[0] + a * u[0]) <= 1e-12 * q * fmax(a, 1e-300));
                bsr_free(&B);
            }
}

START_TEST(test_adhesion_1d)
{
    double w3 = 0.0, w2 = 0.0;
    run_adhesion_1d(3, &w3);
    run_adhesion_1d(2, &w2);
    printf("1D adhesion (eq. 16 vs the direct solve, 60 (w, q, a) each): max rel err 3D %.2e, 2D %.2e\n", w3, w2);
    fflush(stdout);
}
END_TEST

/* ---------------------------------------------------------------- 3. friction pyramid */

START_TEST(test_pyramid)
{
    /* W = diag(wn, wt, wb), q = (qn, qt, qb), μ, a */
    const struct {
        double wn, wt, wb, qn, qt, qb, mu, a;
    } C[] = {
        {1.0, 1.0, 1.0, -1.0, 0.1, -0.2, 0.5, 0.0},   /* stick both */
        {2.0, 0.5, 3.0, -1.0, 0.9, 0.05, 0.3, 0.0},   /* slip t, stick b */
        {0.7, 1.3, 0.4, -2.0, -3.0, 2.5, 0.2, 0.0},   /* slip both */
        {1.0, 1.0, 1.0, 0.5, 0.4, -0.3, 0.6, 0.0},    /* separating: all 0 */
        {1.5, 0.8, 1.1, 0.6, 0.4, -0.3, 0.6, 2.0},    /* traction with adhesion */
        {1.5, 0.8, 1.1, 0.6, 0.0, 0.7, 0.0, 0.5},     /* traction with adhesion, μ = 0 */
        {1.0, 2.0, 0.5, -0.2, 3.0, -1.0, 0.5, 3.0},   /* compression, adhesion bound wins */
        {1.0, 2.0, 0.5, -4.0, 3.0, -1.0, 0.5, 0.05},  /* compression, friction bound wins */
    };
    const int nc = (int)(sizeof C / sizeof C[0]);
    double worst = 0.0;
    for (int c = 0; c < nc; ++c)
        for (int mode = 0; mode < 2; ++mode) {
            double W[9], q[3] = {C[c].qn, C[c].qt, C[c].qb}, lam[3] = {0, 0, 0}, ex[3];
            diag3(W, 3, C[c].wn, C[c].wt, C[c].wb);
            const double wd[3] = {C[c].wn, C[c].wt, C[c].wb}, a = C[c].a, mu = C[c].mu;
            /* normal: the 1D adhesive problem (test 2) */
            ex[0] = adhesion_1d(wd[0], q[0], a);
            for (int k = 1; k < 3; ++k) {
                const double Lf = mu * fmax(ex[0], 0.0);
                /* the tangential spring of the adhesion alone: λ = −a u, u = w λ + q */
                const double La = fabs(-a * q[k] / (1.0 + a * wd[k]));
                const double L = mode == 0 ? fmax(Lf, La) : fmin(Lf, La);
                ex[k] = clampd(-q[k] / wd[k], L);
                if (a == 0.0 && mode == 1) REQ(ex[k] == 0.0); /* MIN without adhesion: frictionless */
            }
            bsr B;
            one_contact(&B, 3, W, q, mu, a);
            ct_pgs_opts o = opts_of(CT_PGS_ADHESIVE_BOX, 1e-14, 10);
            o.tangential = mode == 0 ? CT_PGS_TANGENTIAL_MAX : CT_PGS_TANGENTIAL_MIN;
            ct_pgs_result res;
            ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, NULL, NULL, &res, NULL), CT_OK);
            /* decoupled rows: exact after one sweep, the second one changes nothing (an all-zero λ
             * has residual 0 after the first) */
            ck_assert(res.converged && res.iters <= 2 && res.residual == 0.0);
            for (int k = 0; k < 3; ++k) {
                const double e = ct_rel_err(lam[k], ex[k], 1e-300);
                worst = fmax(worst, e);
                ck_assert_msg(e <= 1e-12, "case %d mode %d row %d: %.17g expected %.17g", c, mode, k, lam[k], ex[k]);
            }
            bsr_free(&B);
        }
    /* the adhesive traction case with MAX: the tangential impulse is the spring's, not 0 */
    {
        double W[9], q[3] = {0.6, 0.4, -0.3}, lam[3] = {0, 0, 0};
        diag3(W, 3, 1.5, 0.8, 1.1);
        bsr B;
        one_contact(&B, 3, W, q, 0.6, 2.0);
        ct_pgs_opts o = opts_of(CT_PGS_ADHESIVE_BOX, 1e-14, 10);
        ct_pgs_result res;
        ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, NULL, NULL, &res, NULL), CT_OK);
        const double ut = 0.8 * lam[1] + 0.4;
        ck_assert(lam[0] < 0.0 && lam[1] < 0.0 && fabs(lam[1] + 2.0 * ut) <= 1e-14);
        bsr_free(&B);
    }
    printf("friction pyramid (%d cases × MAX/MIN, decoupled W): max rel err vs closed form %.2e\n", nc, worst);
    fflush(stdout);
}
END_TEST

/* ---------------------------------------------------------------- 4. Coulomb disk */

/* λ_T rotated by 90° (2D: reversed). */
static void rotate_tangential(int dim, double *l)
{
    if (dim == 3) {
        const double t = l[1];
        l[1] = -l[2], l[2] = t;
    } else {
        l[1] = -l[1];
    }
}

static void run_disk_isotropic(int dim, double *worst_err, double *worst_res, double *min_wrong)
{
    const struct {
        double w, vn, qt, qb, mu;
    } C[] = {
        {1.0, 1.0, 0.2, -0.1, 0.5},  /* stick (2D: a tangential step 2/W_tt would oscillate 0, −0.4, 0, ...) */
        {2.5, 0.3, -0.05, 0.0, 0.4}, /* stick */
        {1.0, 1.0, 0.9, 0.8, 0.5},   /* slip */
        {0.3, 2.0, -4.0, 1.0, 0.25}, /* slip */
        {1.0, 1.0, 0.7, 0.0, 0.0},   /* μ = 0: frictionless */
    };
    for (int c = 0; c < 5; ++c) {
        const double w = C[c].w, mu = C[c].mu;
        const double qT[2] = {C[c].qt, dim == 3 ? C[c].qb : 0.0};
        const double nqT = hypot(qT[0], qT[1]);
        double W[9], q[3] = {-C[c].vn, qT[0], qT[1]}, lam[3] = {0, 0, 0}, u[3], ex[3];
        diag3(W, dim, w, w, w);
        ex[0] = C[c].vn / w;
        const int stick = nqT / w <= mu * C[c].vn / w;
        for (int k = 0; k < dim - 1; ++k) ex[1 + k] = stick ? -qT[k] / w : -mu * ex[0] * qT[k] / nqT;
        bsr B;
        one_contact(&B, dim, W, q, mu, 0.0);
        ct_pgs_opts o = opts_of(CT_PGS_COULOMB_DISK, 1e-13, 50);
        ct_pgs_result res;
        ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, u, NULL, &res, NULL), CT_OK);
        ck_assert(res.converged);
        const double e = ct_rel_err_vec(lam, ex, (size_t)dim, 1e-300);
        *worst_err = fmax(*worst_err, e);
        ck_assert_msg(e <= 1e-12, "dim %d case %d: rel err %.3g", dim, c, e);
        const double r0 = ct_pgs_natural_map_residual(&B.P, lam, u);
        *worst_res = fmax(*worst_res, r0);
        ck_assert(r0 < 1e-12 && res.residual == r0);
        /* a wrong λ_T (rotated, or reversed in 2D) is not a solution */
        if (hypot(lam[1], dim == 3 ? lam[2] : 0.0) > 0.0) {
            rotate_tangential(dim, lam);
            ct_pgs_velocity(&B.P, lam, u);
            const double r1 = ct_pgs_natural_map_residual(&B.P, lam, u);
            *min_wrong = fmin(*min_wrong, r1);
            ck_assert_msg(r1 > 1e-2, "dim %d case %d: wrong λ_T has residual %.3g", dim, c, r1);
        }
        bsr_free(&B);
    }
}

START_TEST(test_disk_isotropic)
{
    double e3 = 0, r3 = 0, w3 = INFINITY, e2 = 0, r2 = 0, w2 = INFINITY;
    run_disk_isotropic(3, &e3, &r3, &w3);
    run_disk_isotropic(2, &e2, &r2, &w2);
    printf("Coulomb disk, W = w I (stick/slip/μ = 0): 3D max rel err %.2e, natural map %.2e (wrong λ_T: >= %.3f); "
           "2D %.2e, %.2e (reversed λ_t: >= %.3f)\n", e3, r3, w3, e2, r2, w2);
    fflush(stdout);
}
END_TEST

/* The natural map on hand-built (λ, u) that satisfy the Coulomb law, with q = u − W λ for a random
 * SPD W: stick (u = 0, λ inside the cone), slip (u_n = 0, λ_T = −μ λ_n u_T/‖u_T‖), separation
 * (λ = 0, u_n > 0), μ = 0 (λ_T = 0, u_T arbitrary); and a closed-form value for a non-solution. */
START_TEST(test_natural_map)
{
    unsigned long long r = 777;
    double worst = 0.0;
    for (int dim = 2; dim <= 3; ++dim)
        for (int trial = 0; trial < 50; ++trial) {
            const int m = 4, n = m * dim;
            double W[144], lam[12], u[12], q[12], mu[4];
            random_spd(&r, n, n, 0.2, W);
            for (int i = 0; i < m; ++i) {
                double *l = lam + i * dim, *v = u + i * dim;
                const int kind = (trial + i) % 4;
                mu[i] = kind == 3 ? 0.0 : urand(&r, 0.1, 1.0);
                double d[2] = {urand(&r, -1, 1), dim == 3 ? urand(&r, -1, 1) : 0.0};
                const double nd = hypot(d[0], d[1]);
                if (kind == 0) { /* stick */
                    l[0] = urand(&r, 0.1, 2.0), v[0] = 0.0;
                    const double s = urand(&r, 0.0, 0.99) * mu[i] * l[0] / nd;
                    for (int k = 1; k < dim; ++k) l[k] = s * d[k - 1], v[k] = 0.0;
                } else if (kind == 1) { /* slip */
                    l[0] = urand(&r, 0.1, 2.0), v[0] = 0.0;
                    const double s = urand(&r, 0.1, 3.0);
                    for (int k = 1; k < dim; ++k) v[k] = s * d[k - 1], l[k] = -mu[i] * l[0] * d[k - 1] / nd;
                } else if (kind == 2) { /* separation */
                    v[0] = urand(&r, 0.1, 2.0);
                    for (int k = 0; k < dim; ++k) l[k] = 0.0;
                    for (int k = 1; k < dim; ++k) v[k] = urand(&r, -1, 1);
                } else { /* μ = 0: contact, sliding freely */
                    l[0] = urand(&r, 0.1, 2.0), v[0] = 0.0;
                    for (int k = 1; k < dim; ++k) l[k] = 0.0, v[k] = urand(&r, -1, 1);
                }
            }
            for (int i = 0; i < n; ++i) {
                double s = 0.0;
                for (int j = 0; j < n; ++j) s += W[i * n + j] * lam[j];
                q[i] = u[i] - s;
            }
            bsr B;
            bsr_from_dense(&B, m, dim, W, q, mu, NULL);
            double uu[12];
            ct_pgs_velocity(&B.P, lam, uu);
            for (int i = 0; i < n; ++i) REQ(fabs(uu[i] - u[i]) <= 1e-13);
            const double res = ct_pgs_natural_map_residual(&B.P, lam, u);
            worst = fmax(worst, res);
            ck_assert_msg(res <= 1e-15, "dim %d trial %d: residual %.3g", dim, trial, res);
            bsr_free(&B);
        }
    /* λ = 0 with an approaching u = (−v, 0, 0): z = −u ∈ K, residual |u_n| / ‖u‖ = 1 (q = u) */
    {
        double W[9], q[3] = {-0.7, 0.0, 0.0}, lam[3] = {0, 0, 0}, u[3];
        diag3(W, 3, 1.0, 1.0, 1.0);
        bsr B;
        one_contact(&B, 3, W, q, 0.4, 0.0);
        ct_pgs_velocity(&B.P, lam, u);
        ck_assert(fabs(ct_pgs_natural_map_residual(&B.P, lam, u) - 1.0) <= 1e-15);
        bsr_free(&B);
    }
    printf("natural map on 400 hand-built Coulomb solutions (stick, slip, separation, μ = 0; 2D, 3D): max %.2e\n",
           worst);
    fflush(stdout);
}
END_TEST

/* ---------------------------------------------------------------- 5, 6. random multi-contact */

/* W = J Jᵀ + eps I for m contacts over nb bodies of 6 columns (each contact's dim rows have random
 * entries in the columns of two bodies): block-sparse, SPD. Row-major (m·dim)². */
static double *random_delassus(unsigned long long *r, int m, int dim, int nb, double eps)
{
    const int n = m * dim, nc = 6 * nb;
    double *J = calloc((size_t)n * nc, sizeof(double)), *W = malloc((size_t)n * n * sizeof(double));
    for (int i = 0; i < m; ++i) {
        const int b0 = (int)(ct_test_lcg01(r) * nb);
        int b1 = (int)(ct_test_lcg01(r) * (nb - 1));
        if (b1 >= b0) ++b1;
        for (int k = 0; k < dim; ++k)
            for (int c = 0; c < 6; ++c) {
                J[(size_t)(i * dim + k) * nc + b0 * 6 + c] = urand(r, -1, 1);
                J[(size_t)(i * dim + k) * nc + b1 * 6 + c] = urand(r, -1, 1);
            }
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int c = 0; c < nc; ++c) s += J[(size_t)i * nc + c] * J[(size_t)j * nc + c];
            W[i * n + j] = s + (i == j ? eps : 0.0);
        }
    free(J);
    return W;
}

static void random_coulomb(bsr *B, int m, int dim, unsigned long long seed, double **Wout)
{
    unsigned long long r = seed;
    const int n = m * dim;
    double *W = random_delassus(&r, m, dim, (m + 1) / 2 + 2, 0.05);
    double *q = malloc((size_t)n * sizeof(double)), *mu = malloc((size_t)m * sizeof(double));
    for (int i = 0; i < m; ++i) {
        q[i * dim] = urand(&r, -1.0, 0.3);
        for (int k = 1; k < dim; ++k) q[i * dim + k] = urand(&r, -1.0, 1.0);
        mu[i] = urand(&r, 0.1, 0.9);
    }
    bsr_from_dense(B, m, dim, W, q, mu, NULL);
    free(q), free(mu);
    if (Wout) *Wout = W;
    else free(W);
}

START_TEST(test_random_coulomb)
{
    const int m = 20, maxit = 20000;
    double *hist = malloc((size_t)maxit * sizeof(double));
    for (int dim = 3; dim >= 2; --dim) {
        bsr B;
        double *W;
        random_coulomb(&B, m, dim, 4242 + (unsigned long long)dim, &W);
        const int n = m * dim;
        int nblk = B.ptr[m], nstick = 0, nslip = 0, nsep = 0;
        printf("random Coulomb, %dD, m = %d, %d of %d blocks:", dim, m, nblk, m * m);
        for (int v = 0; v < 3; ++v) {
            ct_pgs_opts o = opts_of(CT_PGS_COULOMB_DISK, 1e-10, maxit);
            if (v == 1) o.omega = 1.3;
            if (v == 2) o.shuffle = 1, o.seed = 5;
            double lam[60] = {0}, u[60], ud[60];
            ct_pgs_result res;
            ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, u, hist, &res, NULL), CT_OK);
            ck_assert_msg(res.converged && res.residual <= 1e-10, "dim %d variant %d: %d sweeps, residual %.3g", dim,
                          v, res.iters, res.residual);
            ck_assert(hist[res.iters - 1] == res.residual);
            ck_assert(res.iters == 1 || hist[res.iters - 2] > 1e-10);
            /* u = W λ + q of the final λ (dense product), and the residual of it */
            dense_velocity(n, W, lam, B.q, ud);
            for (int i = 0; i < n; ++i) REQ(fabs(u[i] - ud[i]) <= 1e-12);
            ck_assert(ct_pgs_natural_map_residual(&B.P, lam, ud) <= 2e-10);
            if (v == 0) {
                for (int i = 0; i < m; ++i) {
                    const double *l = lam + i * dim;
                    const double lt = hypot(l[1], dim == 3 ? l[2] : 0.0);
                    REQ(l[0] >= 0.0 && lt <= B.mu[i] * l[0] * (1 + 1e-12));
                    if (l[0] == 0.0) ++nsep;
                    else if (lt < B.mu[i] * l[0] * (1 - 1e-9)) ++nstick;
                    else ++nslip;
                }
            }
            printf(" %s %d sweeps (residual %.2e)", v == 0 ? "plain" : v == 1 ? "SOR 1.3" : "shuffle", res.iters,
                   res.residual);
        }
        printf("; contacts: %d stick, %d slip, %d separate\n", nstick, nslip, nsep);
        fflush(stdout);
        ck_assert(nstick > 0 && nslip > 0);
        free(W);
        bsr_free(&B);
    }
    free(hist);
}
END_TEST

START_TEST(test_determinism)
{
    bsr B;
    random_coulomb(&B, 20, 3, 99, NULL);
    const size_t bytes = 60 * sizeof(double);
    for (int law = 0; law < 2; ++law) {
        double l[4][60];
        for (int run = 0; run < 4; ++run) {
            ct_pgs_opts o = opts_of(law ? CT_PGS_COULOMB_DISK : CT_PGS_ADHESIVE_BOX, 1e-10, 20000);
            o.shuffle = run >= 1;
            o.seed = run == 3 ? 8 : 7;
            memset(l[run], 0, bytes);
            ct_pgs_result res;
            ck_assert_int_eq(ct_pgs_solve(&B.P, &o, l[run], NULL, NULL, &res, NULL), CT_OK);
            ck_assert(res.converged);
            if (run == 0) { /* the same solve twice */
                double l2[60] = {0};
                ck_assert_int_eq(ct_pgs_solve(&B.P, &o, l2, NULL, NULL, &res, NULL), CT_OK);
                ck_assert(memcmp(l[0], l2, bytes) == 0);
            }
        }
        ck_assert(memcmp(l[1], l[2], bytes) == 0); /* shuffle, same seed */
        double d = 0.0;
        for (int k = 0; k < 60; ++k) d = fmax(d, fabs(l[3][k] - l[1][k]));
        printf("determinism (%s): same input -> same bits; seeds 7 and 8 %s (max |Δλ| %.1e, both converged)\n",
               law ? "Coulomb disk" : "adhesive box", memcmp(l[1], l[3], bytes) ? "differ" : "agree bitwise", d);
        fflush(stdout);
    }
    bsr_free(&B);
}
END_TEST

/* A warm start at the solution converges in one sweep. */
START_TEST(test_warm_start)
{
    bsr B;
    random_coulomb(&B, 20, 3, 31, NULL);
    double lam[60] = {0};
    ct_pgs_opts o = opts_of(CT_PGS_COULOMB_DISK, 1e-12, 50000);
    ct_pgs_result res;
    ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, NULL, NULL, &res, NULL), CT_OK);
    ck_assert(res.converged);
    const int cold = res.iters;
    o.tol = 1e-10;
    ck_assert_int_eq(ct_pgs_solve(&B.P, &o, lam, NULL, NULL, &res, NULL), CT_OK);
    ck_assert(res.converged && res.iters == 1);
    printf("warm start: cold %d sweeps to 1e-12, warm 1 sweep (residual %.2e)\n", cold, res.residual);
    fflush(stdout);
    bsr_free(&B);
}
END_TEST

/* ---------------------------------------------------------------- 7. input errors */

static void expect_einput(const ct_pgs_problem *P, const ct_pgs_opts *o, const char *what)
{
    double lam[9] = {0}, u[9], hist[4];
    ct_pgs_result res;
    ct_diag d;
    ct_diag_init(&d);
    ck_assert_msg(ct_pgs_solve(P, o, lam, u, hist, &res, &d) == CT_EINPUT, "%s: not CT_EINPUT", what);
    ck_assert_msg(ct_diag_count(&d) == 1 && strlen(ct_diag_last(&d)) > 0, "%s: no message", what);
    printf("  %-24s -> %s\n", what, ct_diag_last(&d));
    ct_diag_free(&d);
    ck_assert(ct_pgs_solve(P, o, lam, u, hist, &res, NULL) == CT_EINPUT); /* diag NULL */
}

START_TEST(test_input_errors)
{
    /* two contacts, 3D, blocks (0,0), (0,1), (1,1) */
    int ptr[3] = {0, 2, 3}, col[3] = {0, 1, 1};
    double val[27] = {0}, q[6] = {-1, 0, 0, -1, 0, 0}, mu[2] = {0.5, 0.5}, adh[2] = {0, 0};
    for (int b = 0; b < 3; ++b)
        if (b != 1)
            for (int r = 0; r < 3; ++r) val[b * 9 + r * 4] = 1.0;
    const ct_pgs_problem good = {.m = 2, .dim = 3, .ptr = ptr, .col = col, .val = val, .q = q, .mu = mu, .adh = adh};
    const ct_pgs_opts og = ct_pgs_default_opts();
    {
        double lam[6] = {0};
        ct_pgs_result res;
        ck_assert_int_eq(ct_pgs_solve(&good, &og, lam, NULL, NULL, &res, NULL), CT_OK);
        ck_assert(res.converged && lam[0] == 1.0 && lam[3] == 1.0);
    }
    printf("input errors:\n");
    ct_pgs_problem P = good;
    ct_pgs_opts o = og;
    P.dim = 4, expect_einput(&P, &o, "dim 4"), P = good;
    P.dim = 1, expect_einput(&P, &o, "dim 1"), P = good;
    P.m = -1, expect_einput(&P, &o, "m -1"), P = good;
    {
        int col2[3] = {1, 0, 1}; /* row 0: columns not increasing */
        P.col = col2, expect_einput(&P, &o, "columns not increasing"), P = good;
        int ptr2[3] = {0, 1, 2}, col3[2] = {1, 1}; /* row 0 has no diagonal block */
        P.ptr = ptr2, P.col = col3, expect_einput(&P, &o, "missing diagonal block"), P = good;
        int col4[3] = {0, 2, 1};
        P.col = col4, expect_einput(&P, &o, "column out of range"), P = good;
        int ptr3[3] = {1, 2, 3};
        P.ptr = ptr3, expect_einput(&P, &o, "ptr[0] != 0"), P = good;
    }
    double v2[27];
    memcpy(v2, val, sizeof v2);
    v2[2 * 9 + 4] = 0.0, P.val = v2, expect_einput(&P, &o, "W_tt = 0"), P = good;
    memcpy(v2, val, sizeof v2);
    v2[0] = -1.0, P.val = v2, expect_einput(&P, &o, "W_nn < 0"), P = good;
    v2[0] = NAN, expect_einput(&(ct_pgs_problem){.m = 2, .dim = 3, .ptr = ptr, .col = col, .val = v2, .q = q}, &o,
                               "W_nn NaN");
    double mub[2] = {0.5, -0.1};
    P.mu = mub, expect_einput(&P, &o, "mu < 0"), P = good;
    mub[1] = INFINITY, P.mu = mub, expect_einput(&P, &o, "mu inf"), P = good;
    double adb[2] = {-1.0, 0.0};
    P.adh = adb, expect_einput(&P, &o, "adhesion < 0"), P = good;
    o.omega = 2.0, expect_einput(&P, &o, "omega 2"), o = og;
    o.omega = 0.0, expect_einput(&P, &o, "omega 0"), o = og;
    o.omega = NAN, expect_einput(&P, &o, "omega NaN"), o = og;
    o.max_iter = 0, expect_einput(&P, &o, "max_iter 0"), o = og;
    o.law = (ct_pgs_law)7, expect_einput(&P, &o, "unknown law"), o = og;
    P.q = NULL, expect_einput(&P, &o, "q NULL"), P = good;
    expect_einput(NULL, &o, "problem NULL");
    fflush(stdout);
    /* the Coulomb law ignores adh (a negative one is not read) */
    {
        double lam[6] = {0};
        ct_pgs_result res;
        P.adh = adb, o.law = CT_PGS_COULOMB_DISK;
        ck_assert_int_eq(ct_pgs_solve(&P, &o, lam, NULL, NULL, &res, NULL), CT_OK);
    }
    /* no contacts: nothing to do, converged */
    {
        ct_pgs_problem E = {.m = 0, .dim = 3, .ptr = ptr};
        ct_pgs_result res;
        double lam[1] = {0};
        for (int law = 0; law < 2; ++law) {
            o = opts_of(law ? CT_PGS_COULOMB_DISK : CT_PGS_ADHESIVE_BOX, 1e-8, 10);
            ck_assert_int_eq(ct_pgs_solve(&E, &o, lam, NULL, NULL, &res, NULL), CT_OK);
            ck_assert(res.converged && res.iters == 1 && res.residual == 0.0);
        }
    }
}
END_TEST

/* ---------------------------------------------------------------- timing */

START_TEST(test_timing)
{
    /* m contacts in a chain, each coupled to i±1 and i±2 (5 blocks per row, W = 4 I on the diagonal,
     * −0.3 I off it: diagonally dominant) */
    const int m = 2000, dim = 3, d2 = 9, nb = 5;
    int *ptr = malloc((size_t)(m + 1) * sizeof(int)), *col = malloc((size_t)m * nb * sizeof(int));
    double *val = malloc((size_t)m * nb * d2 * sizeof(double)), *q = malloc((size_t)m * dim * sizeof(double));
    double *mu = malloc((size_t)m * sizeof(double)), *lam = malloc((size_t)m * dim * sizeof(double));
    unsigned long long r = 5;
    int k = 0;
    ptr[0] = 0;
    for (int i = 0; i < m; ++i) {
        for (int j = i - 2; j <= i + 2; ++j) {
            if (j < 0 || j >= m) continue;
            for (int e = 0; e < d2; ++e) val[k * d2 + e] = 0.0;
            for (int c = 0; c < dim; ++c) val[k * d2 + c * dim + c] = i == j ? 4.0 : -0.3;
            col[k++] = j;
        }
        ptr[i + 1] = k;
        q[i * dim] = urand(&r, -1, 0.3), q[i * dim + 1] = urand(&r, -1, 1), q[i * dim + 2] = urand(&r, -1, 1);
        mu[i] = 0.4;
    }
    const ct_pgs_problem P = {.m = m, .dim = dim, .ptr = ptr, .col = col, .val = val, .q = q, .mu = mu};
    printf("timing, m = %d, %d blocks, 100 sweeps:", m, k);
    for (int law = 0; law < 2; ++law) {
        ct_pgs_opts o = opts_of(law ? CT_PGS_COULOMB_DISK : CT_PGS_ADHESIVE_BOX, 0.0, 100);
        memset(lam, 0, (size_t)m * dim * sizeof(double));
        ct_pgs_result res;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ck_assert_int_eq(ct_pgs_solve(&P, &o, lam, NULL, NULL, &res, NULL), CT_OK);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        const double s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        ck_assert_int_eq(res.iters, 100);
        printf(" %s %.1f µs/sweep (%.1f ns/block, residual %.1e)", law ? "Coulomb disk" : "adhesive box",
               1e6 * s / 100, 1e9 * s / (100.0 * k), res.residual);
    }
    printf("\n");
    fflush(stdout);
    free(ptr), free(col), free(val), free(q), free(mu), free(lam);
}
END_TEST

static Suite *pgs_suite(void)
{
    Suite *s = suite_create("pgs");
    TCase *tc = tcase_create("pgs");
    tcase_set_timeout(tc, 10); /* 0.3 s at -O2; margin for the sanitizer build */
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_lcp_enumeration);
    tcase_add_test(tc, test_adhesive_enumeration);
    tcase_add_test(tc, test_adhesion_1d);
    tcase_add_test(tc, test_pyramid);
    tcase_add_test(tc, test_disk_isotropic);
    tcase_add_test(tc, test_natural_map);
    tcase_add_test(tc, test_random_coulomb);
    tcase_add_test(tc, test_determinism);
    tcase_add_test(tc, test_warm_start);
    tcase_add_test(tc, test_input_errors);
    tcase_add_test(tc, test_timing);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(pgs_suite)
