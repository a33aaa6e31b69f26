/* check_material.c — hyperelastic materials and the element elastic energy.
 *
 * Expected values are derived: finite differences of the code's own energies, the closed-form
 * energies in singular values written out again here, the linear-elasticity tensor at F = I,
 * rigid-motion invariance, and eigenvalues from LAPACK dsyev (not the dsyevd the library uses).
 */
#include "ct_test_util.h"

#include "contactlab/ct_material.h"

#include <lapacke.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const ct_material_kind kinds[CT_MAT_COUNT] = {CT_MAT_NEO_HOOKEAN, CT_MAT_FIXED_COROTATED,
                                                     CT_MAT_LINEAR_COROTATED, CT_MAT_STVK};

static ct_material make_mat(ct_material_kind k, double E, double nu)
{
    ct_material m;
    ck_assert_int_eq(ct_material_init(&m, k, E, nu, 1000.0, NULL), CT_OK);
    return m;
}

/* ---- random numbers, rotations, deformation gradients ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(void) /* uniform in [-1, 1) (xorshift64*) */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-52 - 1.0;
}

static void random_rotation(int d, double *R)
{
    if (d == 2) {
        double t = 3.14159265358979323846 * urand();
        R[0] = cos(t), R[1] = sin(t), R[2] = -sin(t), R[3] = cos(t);
        return;
    }
    double q[4], n = 0.0;
    for (int i = 0; i < 4; ++i) {
        q[i] = urand();
        n += q[i] * q[i];
    }
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z),     2 * (x * z - w * y),
                   2 * (x * y - w * z),     1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
                   2 * (x * z + w * y),     2 * (y * z - w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

/* F = R diag(s) Q^T with random rotations R, Q (Q = I when rotate_right is 0) */
static void F_from_sv(int d, const double *s, int rotate_right, double *F)
{
    double R[9], Q[9], T[9];
    random_rotation(d, R);
    random_rotation(d, Q);
    for (int j = 0; j < d; ++j)
        for (int i = 0; i < d; ++i) T[i + d * j] = R[i + d * j] * s[j];
    if (!rotate_right) {
        memcpy(F, T, sizeof(double) * d * d);
        return;
    }
    for (int j = 0; j < d; ++j)
        for (int i = 0; i < d; ++i) {
            double v = 0.0;
            for (int k = 0; k < d; ++k) v += T[i + d * k] * Q[j + d * k];
            F[i + d * j] = v;
        }
}

/* The test deformation gradients: near identity, det F = 0.31 (just above 0.3), a rotated
 * large stretch, a general random one, an inverted one (det F < 0), and one with a repeated
 * singular value. */
#define NSAMPLE 6
static const char *const sample_name[NSAMPLE] = {"near-I",   "det~0.31", "rot-stretch",
                                                 "random",   "inverted", "repeated-sv"};
/* singular values of the samples built from them (all but 0 and 3) */
static const double sv3[NSAMPLE][3] = {{0}, {1.1, 0.6, 0.47}, {2.5, 1.6, 0.9}, {0}, {1.2, 0.9, -0.5}, {1.3, 1.3, 0.8}};
static const double sv2[NSAMPLE][2] = {{0}, {0.8, 0.3875}, {2.5, 0.9}, {0}, {1.2, -0.5}, {1.3, 1.3}};

static void sample_F(int d, int which, double *F)
{
    if (which == 0 || which == 3) {
        double a = which == 0 ? 0.3 : 0.7;
        for (int j = 0; j < d; ++j)
            for (int i = 0; i < d; ++i) F[i + d * j] = (i == j) + a * urand();
        return;
    }
    F_from_sv(d, d == 2 ? sv2[which] : sv3[which], which != 2, F);
}

static double det(int d, const double *F)
{
    if (d == 2) return F[0] * F[3] - F[1] * F[2];
    return F[0] * (F[4] * F[8] - F[5] * F[7]) - F[3] * (F[1] * F[8] - F[2] * F[7]) +
           F[6] * (F[1] * F[5] - F[2] * F[4]);
}

static double frob(const double *A, int n)
{
    double s = 0.0;
    for (int k = 0; k < n; ++k) s += A[k] * A[k];
    return sqrt(s);
}

/* smallest eigenvalue of a symmetric n x n matrix (LAPACK dsyev) */
static double min_eig(const double *A, int n)
{
    double *B = malloc(sizeof *B * n * n), *w = malloc(sizeof *w * n);
    memcpy(B, A, sizeof *B * n * n);
    ck_assert_int_eq(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', n, B, n, w), 0);
    double m = w[0];
    free(B);
    free(w);
    return m;
}

/* ---- psi -> P -> dP/dF by central differences ---- */

typedef struct {
    const ct_material *m;
    int d;
} mat_ctx;

static double fd_psi(const double *F, void *c)
{
    const mat_ctx *mc = c;
    return ct_material_psi(mc->m, mc->d, F);
}

static void fd_pk1(const double *F, void *c, double *P)
{
    const mat_ctx *mc = c;
    ct_material_pk1(mc->m, mc->d, F, P);
}

START_TEST(test_fd_material)
{
    for (int d = 2; d <= 3; ++d)
        for (int ki = 0; ki < CT_MAT_COUNT; ++ki) {
            ct_material m = make_mat(kinds[ki], 1e5, 0.3);
            mat_ctx c = {&m, d};
            const int n = d * d;
            for (int s = 0; s < NSAMPLE; ++s) {
                double F[9], P[9], Pfd[9], A[81], Afd[81];
                sample_F(d, s, F);
                if (s == 1) ck_assert(det(d, F) > 0.3 && det(d, F) < 0.32);
                ct_material_pk1(&m, d, F, P);
                ck_assert_int_eq(ct_material_dpdf(&m, d, F, A, 0), CT_OK);
                ct_fd_gradient(fd_psi, F, n, 1e-6, &c, Pfd);
                ct_fd_hessian(fd_pk1, F, n, 1e-6, &c, Afd);
                double eP = ct_rel_err_vec(P, Pfd, n, 1e-6 * m.mu);
                double eA = ct_rel_err_vec(A, Afd, n * n, 1e-6 * m.mu);
                printf("fd %dD %-16s %-11s  det %+.3f  P %.2e  dPdF %.2e\n", d,
                       ct_material_name(kinds[ki]), sample_name[s], det(d, F), eP, eA);
                ck_assert_msg(eP < 1e-6, "P: %g", eP);
                ck_assert_msg(eA < 1e-5, "dPdF: %g", eA);
            }
        }
}
END_TEST

/* ---- energies against their singular-value formulas, written out here ---- */

static double psi_closed_form(const ct_material *m, int d, const double *s)
{
    const double mu = m->mu, la = m->lambda;
    double J = 1.0, tr = 0.0, q = 0.0, dev = 0.0, e2 = 0.0;
    for (int i = 0; i < d; ++i) {
        J *= s[i], tr += s[i], q += s[i] * s[i];
        dev += (s[i] - 1) * (s[i] - 1);
        e2 += 0.25 * (s[i] * s[i] - 1) * (s[i] * s[i] - 1); /* |E|^2, E = diag(s^2 - 1)/2 */
    }
    switch (m->kind) {
    case CT_MAT_NEO_HOOKEAN:
        return 0.5 * mu * (q - d) - mu * (J - 1) + 0.5 * (la + mu) * (J - 1) * (J - 1);
    case CT_MAT_FIXED_COROTATED: return mu * dev + 0.5 * la * (J - 1) * (J - 1);
    case CT_MAT_LINEAR_COROTATED: return mu * dev + 0.5 * la * (tr - d) * (tr - d);
    default: return mu * e2 + 0.5 * la * (0.5 * (q - d)) * (0.5 * (q - d));
    }
}

START_TEST(test_energy_values)
{
    for (int d = 2; d <= 3; ++d)
        for (int ki = 0; ki < CT_MAT_COUNT; ++ki) {
            ct_material m = make_mat(kinds[ki], 3e4, 0.4);
            for (int s = 1; s < NSAMPLE; ++s) {
                if (s == 3) continue; /* no known singular values */
                double F[9];
                sample_F(d, s, F);
                double want = psi_closed_form(&m, d, d == 2 ? sv2[s] : sv3[s]);
                double got = ct_material_psi(&m, d, F);
                ck_assert_msg(ct_rel_err(got, want, 1e-12) < 1e-12, "%dD %s %s: %.17g vs %.17g", d,
                              ct_material_name(kinds[ki]), sample_name[s], got, want);
            }
        }
}
END_TEST

/* ---- rest state: P(I) = 0, dP/dF(I) = C : H = 2 mu sym(H) + lambda tr(H) I ---- */

START_TEST(test_rest_state)
{
    for (int d = 2; d <= 3; ++d)
        for (int ki = 0; ki < CT_MAT_COUNT; ++ki) {
            ct_material m = make_mat(kinds[ki], 2e5, 0.3);
            const int n = d * d;
            double Id[9] = {0}, P[9], A[81], C[81];
            for (int i = 0; i < d; ++i) Id[i + d * i] = 1.0;
            ct_material_pk1(&m, d, Id, P);
            ck_assert_double_eq_tol(ct_material_psi(&m, d, Id), 0.0, 1e-12 * m.mu);
            ck_assert_double_le(frob(P, n), 1e-12 * m.mu);
            /* C_{(a,b),(c,e)} = mu (d_ac d_be + d_ae d_bc) + lambda d_ab d_ce */
            for (int e = 0; e < d; ++e)
                for (int c = 0; c < d; ++c)
                    for (int b = 0; b < d; ++b)
                        for (int a = 0; a < d; ++a)
                            C[(a + d * b) + n * (c + d * e)] =
                                m.mu * ((a == c && b == e) + (a == e && b == c)) + m.lambda * (a == b && c == e);
            for (int project = 0; project <= 1; ++project) {
                ck_assert_int_eq(ct_material_dpdf(&m, d, Id, A, project), CT_OK);
                double err = ct_rel_err_vec(A, C, n * n, 0.0);
                ck_assert_msg(err < 1e-12, "%dD %s project %d: %g", d, ct_material_name(kinds[ki]),
                              project, err);
            }
        }
}
END_TEST

/* ---- PSD projection ---- */

START_TEST(test_psd_projection)
{
    double worst_min = 0.0, worst_match = 0.0;
    for (int d = 2; d <= 3; ++d)
        for (int ki = 0; ki < CT_MAT_COUNT; ++ki) {
            ct_material m = make_mat(kinds[ki], 1e5, 0.45);
            const int n = d * d;
            for (int rep = 0; rep < 40; ++rep) {
                double F[9], A[81], Ap[81], Aref[81];
                if (rep < NSAMPLE)
                    sample_F(d, rep, F);
                else
                    for (int k = 0; k < n; ++k) F[k] = 1.5 * urand(); /* either orientation */
                ck_assert_int_eq(ct_material_dpdf(&m, d, F, Ap, 1), CT_OK);
                ck_assert_int_eq(ct_material_dpdf(&m, d, F, A, 0), CT_OK);
                double nrm = frob(Ap, n * n), lmin = min_eig(Ap, n);
                ck_assert_msg(lmin >= -1e-12 * nrm, "%dD %s: min eig %g (norm %g)", d,
                              ct_material_name(kinds[ki]), lmin, nrm);
                if (-lmin / nrm > worst_min) worst_min = -lmin / nrm;
                /* analytic projection == dsyevd projection of the unprojected matrix */
                memcpy(Aref, A, sizeof A);
                ck_assert_int_eq(ct_psd_project(Aref, n), CT_OK);
                double err = ct_rel_err_vec(Ap, Aref, n * n, 1e-12 * frob(A, n * n));
                if (err > worst_match) worst_match = err;
                ck_assert_msg(err < 1e-8, "%dD %s det %g: analytic vs dsyevd %g", d,
                              ct_material_name(kinds[ki]), det(d, F), err);
            }
        }
    printf("psd: worst -min eig / norm %.2e, analytic vs dsyevd %.2e\n", worst_min, worst_match);
}
END_TEST

START_TEST(test_psd_project_fixed_points)
{
    /* dP/dF(I) is PSD for nu in (-1, 0.5): unchanged */
    for (int d = 2; d <= 3; ++d)
        for (int ki = 0; ki < CT_MAT_COUNT; ++ki) {
            ct_material m = make_mat(kinds[ki], 1e5, 0.3);
            double Id[9] = {0}, A[81], B[81];
            for (int i = 0; i < d; ++i) Id[i + d * i] = 1.0;
            ct_material_dpdf(&m, d, Id, A, 0);
            memcpy(B, A, sizeof A);
            ck_assert_int_eq(ct_psd_project(B, d * d), CT_OK);
            ck_assert_double_le(ct_rel_err_vec(B, A, d * d * d * d, 0.0), 1e-12);
        }
    /* random SPD matrices M M^T + I/10, n = 12 and n = 30 (heap path) */
    for (int n = 12; n <= 30; n += 18) {
        double *M = malloc(sizeof *M * n * n), *A = malloc(sizeof *A * n * n), *B = malloc(sizeof *B * n * n);
        for (int k = 0; k < n * n; ++k) M[k] = urand();
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                double s = i == j ? 0.1 : 0.0;
                for (int k = 0; k < n; ++k) s += M[i + n * k] * M[j + n * k];
                A[i + n * j] = s;
            }
        memcpy(B, A, sizeof *A * n * n);
        ck_assert_int_eq(ct_psd_project(B, n), CT_OK);
        ck_assert_double_le(ct_rel_err_vec(B, A, (size_t)n * n, 0.0), 1e-12);
        free(M);
        free(A);
        free(B);
    }
    /* Q diag(1, -2, 3) Q^T projects to Q diag(1, 0, 3) Q^T */
    double Q[9], A[9], W[9];
    random_rotation(3, Q);
    const double lam[3] = {1, -2, 3}, lamp[3] = {1, 0, 3};
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i) {
            A[i + 3 * j] = W[i + 3 * j] = 0.0;
            for (int k = 0; k < 3; ++k) {
                A[i + 3 * j] += Q[i + 3 * k] * lam[k] * Q[j + 3 * k];
                W[i + 3 * j] += Q[i + 3 * k] * lamp[k] * Q[j + 3 * k];
            }
        }
    ck_assert_int_eq(ct_psd_project(A, 3), CT_OK);
    ck_assert_double_le(ct_rel_err_vec(A, W, 9, 0.0), 1e-13);
    /* non-finite input is reported, not projected */
    A[4] = NAN;
    ck_assert_int_eq(ct_psd_project(A, 3), CT_ELIB);
}
END_TEST

/* ---- element sets ---- */

/* Swap the last two vertices of elements with negative orientation. */
static void orient(int d, int ne, int *elem, const double *X)
{
    for (int e = 0; e < ne; ++e) {
        int *v = elem + e * (d + 1);
        double Dm[9];
        for (int k = 1; k <= d; ++k)
            for (int a = 0; a < d; ++a) Dm[a + d * (k - 1)] = X[v[k] * d + a] - X[v[0] * d + a];
        if (det(d, Dm) < 0) {
            int t = v[d];
            v[d] = v[d - 1];
            v[d - 1] = t;
        }
    }
}

/* A few elements of two bodies: body 0 with material m0 (all but the last element), body 1
 * (the last element, its own vertex block added with index_offset) with m1. */
typedef struct {
    ct_elastic el;
    int nvert;
} small_mesh;

static void small_mesh_build(small_mesh *sm, int d, const ct_material *m0, const ct_material *m1,
                             double *X)
{
    static const double X2[] = {0, 0, 1, 0, 0, 1, 1, 1, 0.5, 1.6, /* body 1: */ 2, 0, 3, 0.2, 2.4, 1};
    static const double X3[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, -0.8,
                                /* body 1: */ 2, 0, 0, 3, 0.1, 0, 2.2, 1, 0, 2.1, 0.2, 1.1};
    int e2[] = {0, 1, 2, 1, 3, 2, 2, 3, 4}, b2[] = {0, 1, 2};
    int e3[] = {0, 1, 2, 3, 1, 2, 3, 4, 0, 1, 2, 5}, b3[] = {0, 1, 2, 3};
    const int nv0 = d == 2 ? 5 : 6;
    sm->nvert = nv0 + d + 1;
    memcpy(X, d == 2 ? X2 : X3, sizeof(double) * sm->nvert * d);
    int *e = d == 2 ? e2 : e3, *b = d == 2 ? b2 : b3;
    orient(d, 3, e, X);
    orient(d, 1, b, X + nv0 * d);
    ct_elastic_init(&sm->el);
    ck_assert_int_eq(ct_elastic_add(&sm->el, d, 3, e, X, 0, NULL, m0, NULL), CT_OK);
    ck_assert_int_eq(ct_elastic_add(&sm->el, d, 1, b, X + nv0 * d, nv0, NULL, m1, NULL), CT_OK);
}

/* y = R diag(stretch) X + t + noise */
static void deform(int d, int nvert, const double *X, double noise, double *y)
{
    double R[9], S[9] = {0};
    random_rotation(d, R);
    const double st[3] = {1.3, 0.8, 1.1};
    for (int j = 0; j < d; ++j)
        for (int i = 0; i < d; ++i) S[i + d * j] = R[i + d * j] * st[j];
    for (int v = 0; v < nvert; ++v)
        for (int a = 0; a < d; ++a) {
            double s = 0.3 * a + noise * urand();
            for (int b = 0; b < d; ++b) s += S[a + d * b] * X[v * d + b];
            y[v * d + a] = s;
        }
}

static double fd_energy(const double *y, void *c) { return ct_elastic_energy(c, y); }

static void fd_gradient(const double *y, void *c, double *g)
{
    const ct_elastic *el = c;
    int n = 0;
    for (int k = 0; k < el->ne * (el->dim + 1); ++k) n = el->elem[k] + 1 > n ? el->elem[k] + 1 : n;
    memset(g, 0, sizeof *g * n * el->dim);
    ct_elastic_gradient(el, y, g);
}

/* dense global Hessian from the local blocks */
static void assemble(const ct_elastic *el, const double *Hloc, int n, double *H)
{
    const int d = el->dim, nd = d * (d + 1);
    memset(H, 0, sizeof *H * n * n);
    for (int e = 0; e < el->ne; ++e)
        for (int j = 0; j < nd; ++j)
            for (int i = 0; i < nd; ++i) {
                int gi = el->elem[e * (d + 1) + i / d] * d + i % d;
                int gj = el->elem[e * (d + 1) + j / d] * d + j % d;
                H[gi + n * gj] += Hloc[(size_t)e * nd * nd + i + nd * j];
            }
}

START_TEST(test_fd_elastic)
{
    for (int d = 2; d <= 3; ++d)
        for (int ki = 0; ki < CT_MAT_COUNT; ++ki) {
            ct_material m0 = make_mat(kinds[ki], 1e5, 0.3), m1 = make_mat(kinds[ki], 3e5, 0.45);
            small_mesh sm;
            double X[30], y[30], g[30], gfd[30], H[900], Hfd[900];
            small_mesh_build(&sm, d, &m0, &m1, X);
            const int n = sm.nvert * d, nd = d * (d + 1);
            deform(d, sm.nvert, X, 0.1, y);
            fd_gradient(y, &sm.el, g);
            ct_fd_gradient(fd_energy, y, n, 1e-6, &sm.el, gfd);
            double *Hloc = malloc(sizeof *Hloc * sm.el.ne * nd * nd);
            ck_assert_int_eq(ct_elastic_hessian_local(&sm.el, y, Hloc, 0), CT_OK);
            assemble(&sm.el, Hloc, n, H);
            ct_fd_hessian(fd_gradient, y, n, 1e-6, &sm.el, Hfd);
            double eg = ct_rel_err_vec(g, gfd, n, 0.0), eh = ct_rel_err_vec(H, Hfd, n * n, 0.0);
            /* the projected local Hessians are PSD */
            ck_assert_int_eq(ct_elastic_hessian_local(&sm.el, y, Hloc, 1), CT_OK);
            double worst = 0.0;
            for (int e = 0; e < sm.el.ne; ++e) {
                const double *He = Hloc + (size_t)e * nd * nd;
                double r = -min_eig(He, nd) / frob(He, nd * nd);
                worst = r > worst ? r : worst;
            }
            printf("fd elastic %dD %-16s  gradient %.2e  Hessian %.2e  projected -min eig/norm %.1e\n", d,
                   ct_material_name(kinds[ki]), eg, eh, worst);
            ck_assert_msg(eg < 1e-6, "gradient %g", eg);
            ck_assert_msg(eh < 1e-5, "Hessian %g", eh);
            ck_assert_double_le(worst, 1e-12);
            free(Hloc);
            ct_elastic_free(&sm.el);
        }
}
END_TEST

START_TEST(test_rigid_invariance)
{
    for (int d = 2; d <= 3; ++d)
        for (int ki = 0; ki < CT_MAT_COUNT; ++ki) {
            ct_material m = make_mat(kinds[ki], 1e5, 0.3);
            small_mesh sm;
            double X[30], y[30], z[30], R[9], t[3];
            small_mesh_build(&sm, d, &m, &m, X);
            deform(d, sm.nvert, X, 0.2, y);
            random_rotation(d, R);
            for (int a = 0; a < d; ++a) t[a] = 5.0 * urand();
            for (int v = 0; v < sm.nvert; ++v)
                for (int a = 0; a < d; ++a) {
                    double s = t[a];
                    for (int b = 0; b < d; ++b) s += R[a + d * b] * y[v * d + b];
                    z[v * d + a] = s;
                }
            double E0 = ct_elastic_energy(&sm.el, y), E1 = ct_elastic_energy(&sm.el, z);
            ck_assert_double_gt(E0, 0.0);
            ck_assert_msg(ct_rel_err(E1, E0, 0.0) < 1e-12, "%dD %s: %.17g vs %.17g", d,
                          ct_material_name(kinds[ki]), E1, E0);
            ct_elastic_free(&sm.el);
        }
}
END_TEST

/* A structured grid: n^d cells, 2 triangles or 6 tetrahedra (Kuhn subdivision) each. */
static int grid_mesh(int d, int n, double **X, int **elem)
{
    const int nv1 = n + 1, nvert = d == 2 ? nv1 * nv1 : nv1 * nv1 * nv1;
    const int ne = d == 2 ? 2 * n * n : 6 * n * n * n;
    *X = malloc(sizeof **X * nvert * d);
    *elem = malloc(sizeof **elem * ne * (d + 1));
    for (int v = 0; v < nvert; ++v) {
        (*X)[v * d] = (double)(v % nv1) / n;
        (*X)[v * d + 1] = (double)(v / nv1 % nv1) / n;
        if (d == 3) (*X)[v * d + 2] = (double)(v / (nv1 * nv1)) / n;
    }
    int e = 0;
    if (d == 2) {
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                int v00 = i + nv1 * j, v10 = v00 + 1, v01 = v00 + nv1, v11 = v01 + 1;
                int t[6] = {v00, v10, v11, v00, v11, v01};
                memcpy(*elem + 3 * e, t, sizeof t);
                e += 2;
            }
    } else {
        static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
        for (int k = 0; k < n; ++k)
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i)
                    for (int p = 0; p < 6; ++p) { /* path from corner 000 to 111 along axes perm[p] */
                        int c[3] = {i, j, k}, *v = *elem + 4 * e++;
                        v[0] = c[0] + nv1 * (c[1] + nv1 * c[2]);
                        for (int s = 0; s < 3; ++s) {
                            c[perm[p][s]]++;
                            v[s + 1] = c[0] + nv1 * (c[1] + nv1 * c[2]);
                        }
                    }
    }
    orient(d, ne, *elem, *X);
    return ne;
}

START_TEST(test_determinism)
{
    for (int d = 2; d <= 3; ++d) {
        double *X;
        int *elem;
        const int n = d == 2 ? 60 : 12;
        const int ne = grid_mesh(d, n, &X, &elem), nvert = d == 2 ? (n + 1) * (n + 1) : (n + 1) * (n + 1) * (n + 1);
        ct_material m = make_mat(CT_MAT_FIXED_COROTATED, 1e5, 0.3);
        ct_elastic el;
        ct_elastic_init(&el);
        ck_assert_int_eq(ct_elastic_add(&el, d, ne, elem, X, 0, NULL, &m, NULL), CT_OK);
        double *y = malloc(sizeof *y * nvert * d), *g[3];
        deform(d, nvert, X, 0.02, y);
        double E[3];
        const int threads[3] = {1, 2, 3};
        for (int t = 0; t < 3; ++t) {
            omp_set_num_threads(threads[t]);
            E[t] = ct_elastic_energy(&el, y);
            g[t] = calloc((size_t)nvert * d, sizeof *g[t]);
            ct_elastic_gradient(&el, y, g[t]);
        }
        for (int t = 1; t < 3; ++t) {
            ck_assert_msg(memcmp(&E[0], &E[t], sizeof E[0]) == 0, "%dD energy %d threads: %.17g vs %.17g", d,
                          threads[t], E[t], E[0]);
            ck_assert_msg(memcmp(g[0], g[t], sizeof *g[0] * nvert * d) == 0, "%dD gradient %d threads", d,
                          threads[t]);
        }
        for (int t = 0; t < 3; ++t) free(g[t]);
        free(y);
        free(X);
        free(elem);
        ct_elastic_free(&el);
    }
}
END_TEST

/* ---- bad input ---- */

START_TEST(test_bad_input)
{
    static const struct {
        double E, nu, rho;
        const char *what;
    } bad[] = {{0, 0.3, 1000, "E"},       {-1e5, 0.3, 1000, "E"},   {NAN, 0.3, 1000, "E"},
               {1e5, 0.5, 1000, "nu"},    {1e5, 0.7, 1000, "nu"},   {1e5, -1.0, 1000, "nu"},
               {1e5, 0.3, 0, "density"},  {1e5, 0.3, -2, "density"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ct_diag dg;
        ct_diag_init(&dg);
        ct_material m;
        ck_assert_int_eq(ct_material_init(&m, CT_MAT_STVK, bad[i].E, bad[i].nu, bad[i].rho, &dg), CT_EINPUT);
        ck_assert_uint_eq(ct_diag_count(&dg), 1);
        ck_assert_ptr_nonnull(strstr(ct_diag_last(&dg), bad[i].what));
        ct_diag_free(&dg);
    }
    /* all three wrong: three messages */
    ct_diag dg;
    ct_diag_init(&dg);
    ct_material m;
    ck_assert_int_eq(ct_material_init(&m, CT_MAT_NEO_HOOKEAN, -1, 0.5, 0, &dg), CT_EINPUT);
    ck_assert_uint_eq(ct_diag_count(&dg), 3);
    ct_diag_clear(&dg);

    /* Lame parameters: E = 1, nu = 1/4 gives mu = 1/2.5 = 0.4, lambda = 0.25/(1.25*0.5) = 0.4 */
    ck_assert_int_eq(ct_material_init(&m, CT_MAT_STVK, 1.0, 0.25, 1.0, &dg), CT_OK);
    ck_assert_double_eq_tol(m.mu, 0.4, 1e-15);
    ck_assert_double_eq_tol(m.lambda, 0.4, 1e-15);

    /* names round-trip */
    for (int k = 0; k < CT_MAT_COUNT; ++k) {
        ct_material_kind kk;
        ck_assert_int_eq(ct_material_from_name(ct_material_name(kinds[k]), &kk), 0);
        ck_assert_int_eq(kk, kinds[k]);
    }
    ct_material_kind kk;
    ck_assert_int_eq(ct_material_from_name("mooney_rivlin", &kk), -1);

    /* an inverted and a degenerate rest element are named; the set is left unchanged */
    static const double X[] = {0, 0, 1, 0, 0, 1, 2, 0};
    const int elem[] = {0, 1, 2, /* inverted */ 0, 2, 1, /* collinear */ 0, 1, 3};
    ct_elastic el;
    ct_elastic_init(&el);
    ck_assert_int_eq(ct_elastic_add(&el, 2, 1, elem, X, 0, NULL, &m, &dg), CT_OK);
    ck_assert_int_eq(ct_elastic_add(&el, 2, 3, elem, X, 0, NULL, &m, &dg), CT_EINVERTED);
    ck_assert_uint_eq(ct_diag_count(&dg), 2);
    ck_assert_ptr_nonnull(strstr(dg.msgs[0].text, "element 1"));
    ck_assert_ptr_nonnull(strstr(dg.msgs[1].text, "element 2"));
    ck_assert_int_eq(el.ne, 1);
    ck_assert_int_eq(el.nmat, 1);
    ck_assert_int_eq(ct_elastic_add(&el, 3, 1, elem, X, 0, NULL, &m, &dg), CT_EINPUT);
    ct_elastic_free(&el);
    ct_diag_free(&dg);
}
END_TEST

static Suite *material_suite(void)
{
    Suite *s = suite_create("material");
    TCase *tc = tcase_create("material");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fd_material);
    tcase_add_test(tc, test_energy_values);
    tcase_add_test(tc, test_rest_state);
    tcase_add_test(tc, test_psd_projection);
    tcase_add_test(tc, test_psd_project_fixed_points);
    tcase_add_test(tc, test_fd_elastic);
    tcase_add_test(tc, test_rigid_invariance);
    tcase_add_test(tc, test_determinism);
    tcase_add_test(tc, test_bad_input);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(material_suite)
