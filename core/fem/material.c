/* material.c — hyperelastic energy densities Psi(F), PK1 stress P = dPsi/dF, dP/dF and its
 * PSD projection, for 2D (plane strain) and 3D.
 *
 * Conventions: F column-major (F[i + d*j] = F_ij), vec(F) stacks columns, dPdF[r + d*d*c] =
 * d vec(P)_r / d vec(F)_c. Lame parameters mu = E / (2 (1 + nu)), lambda = E nu /
 * ((1 + nu)(1 - 2 nu)), the same formulas in plane strain. All four energies are defined for
 * every F, inverted ones included, and linearise at F = I to linear elasticity:
 * dP/dF(I) : H = 2 mu sym(H) + lambda tr(H) I.
 *
 * The energies that need singular values use the rotation-variant SVD F = U diag(s) V^T
 * (det U = det V = +1, s0 >= s1 >= |s_{d-1}|, the last one negative for inverted F). Every
 * energy here is isotropic, so dP/dF has the analytic eigensystem of Smith et al. 2019
 * ("Analytic eigensystems for isotropic distortion energies"), which gives the PSD projection
 * without a numerical eigensolver.
 */
#include "contactlab/ct_material.h"

#include "contactlab/ct_psd.h"
#include "base/dense.h"

#include <math.h>
#include <string.h>

static const char *const material_names[] = {
#define CT_X_NAME(k, n) n,
    CT_MATERIAL_LIST(CT_X_NAME)
#undef CT_X_NAME
};

const char *ct_material_name(ct_material_kind k)
{
    if ((int)k < 0 || k >= CT_MAT_COUNT) return "unknown";
    return material_names[k];
}

int ct_material_from_name(const char *name, ct_material_kind *k)
{
    for (int i = 0; name && i < CT_MAT_COUNT; ++i)
        if (strcmp(name, material_names[i]) == 0) {
            *k = (ct_material_kind)i;
            return 0;
        }
    return -1;
}

ct_status ct_material_init(ct_material *m, ct_material_kind kind, double E, double nu,
                           double density, ct_diag *diag)
{
    ct_status st = CT_OK;
    if ((int)kind < 0 || kind >= CT_MAT_COUNT)
        st = ct_diag_add(diag, CT_EINPUT, "material: unknown kind %d", (int)kind);
    if (!(E > 0.0 && isfinite(E)))
        st = ct_diag_add(diag, CT_EINPUT, "material: E must be > 0 (got %g)", E);
    if (!(nu > -1.0 && nu < 0.5))
        st = ct_diag_add(diag, CT_EINPUT, "material: nu must be in (-1, 0.5) (got %g)", nu);
    if (!(density > 0.0 && isfinite(density)))
        st = ct_diag_add(diag, CT_EINPUT, "material: density must be > 0 (got %g)", density);
    if (st != CT_OK) return st;
    m->kind = kind;
    m->E = E;
    m->nu = nu;
    m->density = density;
    m->mu = E / (2.0 * (1.0 + nu));
    m->lambda = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    return CT_OK;
}

/* ---- energies in signed singular values ----
 *
 * Psi(F) = Psi^(s). sv_derivs holds g = dPsi^/ds, H = d2Psi^/ds2 (d x d, column-major) and,
 * per pair (i, j), the eigenvalues of the 2x2 block that couples the off-diagonal directions:
 *   flip  (g_i - g_j) / (s_i - s_j)   (symmetric direction),
 *   twist (g_i + g_j) / (s_i + s_j)   (antisymmetric direction),
 * written out per energy so that the removable division by s_i - s_j never happens.
 * Pairs are (0,1) in 2D and (0,1), (0,2), (1,2) in 3D; k is the third index. With
 * J = prod s and pi_i = prod_{l != i} s_l = dJ/ds_i, d2J/ds_i ds_j = (d == 2 ? 1 : s_k). */
typedef struct {
    double g[3], H[9], flip[3], twist[3];
} sv_derivs;

static const int pair_i[3] = {0, 0, 1}, pair_j[3] = {1, 2, 2};

/* Twist eigenvalues of the rotation-based energies divide by s_i + s_j >= 0, which vanishes
 * only where the polar rotation itself is singular; there the eigenvalue tends to -inf and
 * is clamped at a large finite value (the projection sets it to 0 anyway). */
#define SV_SUM_FLOOR 1e-12

static double sv_energy(const ct_material *m, int d, const double *s, sv_derivs *o)
{
    const double mu = m->mu, la = m->lambda;
    double J = 1.0, tr = 0.0, q = 0.0, pi[3];
    for (int i = 0; i < d; ++i) J *= s[i], tr += s[i], q += s[i] * s[i];
    if (d == 2)
        pi[0] = s[1], pi[1] = s[0];
    else
        pi[0] = s[1] * s[2], pi[1] = s[0] * s[2], pi[2] = s[0] * s[1];
    double dev = 0.0; /* sum (s_i - 1)^2 */
    for (int i = 0; i < d; ++i) dev += (s[i] - 1.0) * (s[i] - 1.0);
    const int np = d == 2 ? 1 : 3;
    double psi = 0.0;

    switch (m->kind) {
    case CT_MAT_NEO_HOOKEAN: {
        /* Psi = mu/2 (|s|^2 - d) - mu (J - 1) + lp/2 (J - 1)^2, lp = lambda + mu */
        const double lp = la + mu, c = lp * (J - 1.0) - mu;
        psi = 0.5 * mu * (q - d) - mu * (J - 1.0) + 0.5 * lp * (J - 1.0) * (J - 1.0);
        if (!o) break;
        for (int i = 0; i < d; ++i) {
            o->g[i] = mu * s[i] + c * pi[i];
            for (int j = 0; j < d; ++j) o->H[i + d * j] = lp * pi[i] * pi[j];
            o->H[i + d * i] += mu;
        }
        for (int p = 0; p < np; ++p) {
            int i = pair_i[p], j = pair_j[p];
            double Jij = d == 2 ? 1.0 : s[3 - i - j];
            o->H[i + d * j] += c * Jij;
            o->H[j + d * i] += c * Jij;
            o->flip[p] = mu - c * Jij;
            o->twist[p] = mu + c * Jij;
        }
        break;
    }
    case CT_MAT_FIXED_COROTATED: {
        /* Psi = mu sum (s_i - 1)^2 + lambda/2 (J - 1)^2 */
        psi = mu * dev + 0.5 * la * (J - 1.0) * (J - 1.0);
        if (!o) break;
        for (int i = 0; i < d; ++i) {
            o->g[i] = 2.0 * mu * (s[i] - 1.0) + la * (J - 1.0) * pi[i];
            for (int j = 0; j < d; ++j) o->H[i + d * j] = la * pi[i] * pi[j];
            o->H[i + d * i] += 2.0 * mu;
        }
        for (int p = 0; p < np; ++p) {
            int i = pair_i[p], j = pair_j[p];
            double Jij = d == 2 ? 1.0 : s[3 - i - j];
            o->H[i + d * j] += la * (J - 1.0) * Jij;
            o->H[j + d * i] += la * (J - 1.0) * Jij;
            o->flip[p] = 2.0 * mu - la * (J - 1.0) * Jij;
            o->twist[p] = 2.0 * mu - 4.0 * mu / fmax(s[i] + s[j], SV_SUM_FLOOR) + la * (J - 1.0) * Jij;
        }
        break;
    }
    case CT_MAT_LINEAR_COROTATED: {
        /* "Linear corotated" here is the corotated linear energy with the rotation taken
         * from the current F (not lagged): with S = V diag(s) V^T the symmetric polar
         * factor, Psi = mu |S - I|^2 + lambda/2 tr(S - I)^2
         *             = mu sum (s_i - 1)^2 + lambda/2 (sum s_i - d)^2. */
        psi = mu * dev + 0.5 * la * (tr - d) * (tr - d);
        if (!o) break;
        for (int i = 0; i < d; ++i) {
            o->g[i] = 2.0 * mu * (s[i] - 1.0) + la * (tr - d);
            for (int j = 0; j < d; ++j) o->H[i + d * j] = la;
            o->H[i + d * i] += 2.0 * mu;
        }
        for (int p = 0; p < np; ++p) {
            int i = pair_i[p], j = pair_j[p];
            o->flip[p] = 2.0 * mu;
            o->twist[p] = 2.0 * mu + (2.0 * la * (tr - d) - 4.0 * mu) / fmax(s[i] + s[j], SV_SUM_FLOOR);
        }
        break;
    }
    case CT_MAT_STVK: {
        /* Psi = mu/4 sum (s_i^2 - 1)^2 + lambda/8 (|s|^2 - d)^2 */
        double e2 = 0.0;
        for (int i = 0; i < d; ++i) e2 += (s[i] * s[i] - 1.0) * (s[i] * s[i] - 1.0);
        const double t = 0.5 * la * (q - d);
        psi = 0.25 * mu * e2 + 0.125 * la * (q - d) * (q - d);
        if (!o) break;
        for (int i = 0; i < d; ++i) {
            o->g[i] = mu * s[i] * (s[i] * s[i] - 1.0) + t * s[i];
            for (int j = 0; j < d; ++j) o->H[i + d * j] = la * s[i] * s[j];
            o->H[i + d * i] += mu * (3.0 * s[i] * s[i] - 1.0) + t;
        }
        for (int p = 0; p < np; ++p) {
            double a = s[pair_i[p]], b = s[pair_j[p]];
            o->flip[p] = mu * (a * a + a * b + b * b - 1.0) + t;
            o->twist[p] = mu * (a * a - a * b + b * b - 1.0) + t;
        }
        break;
    }
    default:
        return NAN;
    }
    return psi;
}

/* A += lam vec(Q) vec(Q)^T on the upper triangle (n = d*d). */
CT_DENSE_INLINE void add_mode(const int n, double *A, double lam, const double *Q)
{
    for (int j = 0; j < n; ++j)
        for (int i = 0; i <= j; ++i) A[i + n * j] += lam * Q[i] * Q[j];
}

/* dP/dF = sum over the d*d eigenpairs lam vec(Q) vec(Q)^T, F = U diag(s) V^T:
 *   scaling  Q = U diag(w) V^T        (lam, w) eigenpairs of H,
 *   flip     Q = (u_i v_j^T + u_j v_i^T) / sqrt 2,
 *   twist    Q = (u_i v_j^T - u_j v_i^T) / sqrt 2.
 * With project != 0 negative eigenvalues are dropped (the PSD projection). */
CT_DENSE_INLINE void sv_dpdf(const int d, const double *U, const double *V, const sv_derivs *sd, int project,
                    double *A)
{
    const int n = d * d;
    double lam[3], W[9], Q[9];
    memset(A, 0, (size_t)n * n * sizeof *A);
    ct_psd_jacobi_eig(d, sd->H, lam, W);
    for (int k = 0; k < d; ++k) {
        if (project && lam[k] <= 0.0) continue;
        for (int b = 0; b < d; ++b)
            for (int a = 0; a < d; ++a) {
                double v = 0.0;
                for (int i = 0; i < d; ++i) v += U[a + d * i] * W[i + d * k] * V[b + d * i];
                Q[a + d * b] = v;
            }
        add_mode(n, A, lam[k], Q);
    }
    const double r = sqrt(0.5);
    for (int p = 0; p < (d == 2 ? 1 : 3); ++p) {
        const double *ui = U + d * pair_i[p], *uj = U + d * pair_j[p];
        const double *vi = V + d * pair_i[p], *vj = V + d * pair_j[p];
        for (int sign = 1; sign >= -1; sign -= 2) {
            double l = sign > 0 ? sd->flip[p] : sd->twist[p];
            if (project && l <= 0.0) continue;
            for (int b = 0; b < d; ++b)
                for (int a = 0; a < d; ++a) Q[a + d * b] = r * (ui[a] * vj[b] + sign * uj[a] * vi[b]);
            add_mode(n, A, l, Q);
        }
    }
    for (int j = 0; j < n; ++j)
        for (int i = j + 1; i < n; ++i) A[i + n * j] = A[j + n * i];
}

/* ---- direct formulas in F (no SVD) for stable neo-Hookean and StVK ---- */

/* Stable neo-Hookean: Psi = mu/2 (|F|^2 - d) - mu (J - 1) + lp/2 (J - 1)^2, lp = lambda + mu,
 * so that P(I) = 0 and dP/dF(I) is the linear-elasticity tensor with (mu, lambda). */
static double nh_psi(const ct_material *m, int d, const double *F)
{
    const double lp = m->lambda + m->mu, J = ct_dense_det(d, F);
    double ic = 0.0;
    for (int k = 0; k < d * d; ++k) ic += F[k] * F[k];
    return 0.5 * m->mu * (ic - d) - m->mu * (J - 1.0) + 0.5 * lp * (J - 1.0) * (J - 1.0);
}

/* P = mu F + (lp (J - 1) - mu) cof F */
static void nh_pk1(const ct_material *m, int d, const double *F, double *P)
{
    double C[9];
    const double lp = m->lambda + m->mu, c = lp * (ct_dense_det(d, F) - 1.0) - m->mu;
    ct_dense_cof(d, F, C);
    for (int k = 0; k < d * d; ++k) P[k] = m->mu * F[k] + c * C[k];
}

/* dP/dF = mu I + lp vec(cof F) vec(cof F)^T + (lp (J - 1) - mu) d2J/dF2, where d2J/dF2 has,
 * in 3D, the 3x3 block -eps_pqr [f_r]x between columns f_p, f_q of F (d(f1 x f2)/df1 =
 * -[f2]x, and so on); in 2D dJ = F22 dF11 + F11 dF22 - F12 dF21 - F21 dF12. */
static void nh_dpdf(const ct_material *m, int d, const double *F, double *A)
{
    const int n = d * d;
    double C[9];
    const double lp = m->lambda + m->mu, c = lp * (ct_dense_det(d, F) - 1.0) - m->mu;
    ct_dense_cof(d, F, C);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) A[i + n * j] = lp * C[i] * C[j] + (i == j ? m->mu : 0.0);
    if (d == 2) {
        A[0 + 4 * 3] += c, A[3 + 4 * 0] += c;
        A[1 + 4 * 2] -= c, A[2 + 4 * 1] -= c;
        return;
    }
    for (int p = 0; p < 3; ++p)
        for (int q = 0; q < 3; ++q) {
            if (p == q) continue;
            const int r = 3 - p - q;
            const double eps = (q == (p + 1) % 3) ? 1.0 : -1.0; /* eps_pqr */
            const double *f = F + 3 * r;
            /* [f]x = [0 -f2 f1; f2 0 -f0; -f1 f0 0] */
            const double X[9] = {0.0, f[2], -f[1], -f[2], 0.0, f[0], f[1], -f[0], 0.0};
            for (int b = 0; b < 3; ++b)
                for (int a = 0; a < 3; ++a) A[(3 * p + a) + n * (3 * q + b)] -= c * eps * X[a + 3 * b];
        }
}

/* StVK: E = (F^T F - I)/2, S = 2 mu E + lambda tr(E) I, Psi = mu |E|^2 + lambda/2 tr(E)^2. */
static void stvk_S(const ct_material *m, int d, const double *F, double *Es, double *S)
{
    double tr = 0.0;
    for (int j = 0; j < d; ++j)
        for (int i = 0; i < d; ++i) {
            double c = 0.0;
            for (int k = 0; k < d; ++k) c += F[k + d * i] * F[k + d * j];
            Es[i + d * j] = 0.5 * (c - (i == j));
        }
    for (int i = 0; i < d; ++i) tr += Es[i + d * i];
    for (int k = 0; k < d * d; ++k) S[k] = 2.0 * m->mu * Es[k];
    for (int i = 0; i < d; ++i) S[i + d * i] += m->lambda * tr;
}

static double stvk_psi(const ct_material *m, int d, const double *F)
{
    double Es[9], S[9], e2 = 0.0, tr = 0.0;
    stvk_S(m, d, F, Es, S);
    for (int k = 0; k < d * d; ++k) e2 += Es[k] * Es[k];
    for (int i = 0; i < d; ++i) tr += Es[i + d * i];
    return m->mu * e2 + 0.5 * m->lambda * tr * tr;
}

/* P = F S */
static void stvk_pk1(const ct_material *m, int d, const double *F, double *P)
{
    double Es[9], S[9];
    stvk_S(m, d, F, Es, S);
    ct_dense_matmul(d, F, S, P);
}

/* dP = dF S + F dS, dS = mu (dF^T F + F^T dF) + lambda tr(F^T dF) I; column (a, b) of dP/dF
 * is dP for dF = e_a e_b^T. */
static void stvk_dpdf(const ct_material *m, int d, const double *F, double *A)
{
    const int n = d * d;
    double Es[9], S[9], dS[9];
    stvk_S(m, d, F, Es, S);
    for (int b = 0; b < d; ++b)
        for (int a = 0; a < d; ++a) {
            /* (dF^T F)_ij = delta_ib F_aj, (F^T dF)_ij = F_ai delta_jb */
            for (int j = 0; j < d; ++j)
                for (int i = 0; i < d; ++i)
                    dS[i + d * j] = m->mu * ((i == b ? F[a + d * j] : 0.0) + (j == b ? F[a + d * i] : 0.0)) +
                                    (i == j ? m->lambda * F[a + d * b] : 0.0);
            double *col = A + n * (a + d * b);
            for (int j = 0; j < d; ++j)
                for (int i = 0; i < d; ++i) {
                    double v = i == a ? S[b + d * j] : 0.0;
                    for (int k = 0; k < d; ++k) v += F[i + d * k] * dS[k + d * j];
                    col[i + d * j] = v;
                }
        }
}

/* ---- public entry points ---- */

static int dim_ok(int dim) { return dim == 2 || dim == 3; }

double ct_material_psi(const ct_material *m, int dim, const double *F)
{
    if (!dim_ok(dim)) return NAN;
    if (m->kind == CT_MAT_NEO_HOOKEAN) return nh_psi(m, dim, F);
    if (m->kind == CT_MAT_STVK) return stvk_psi(m, dim, F);
    double U[9], s[3], V[9];
    ct_dense_svd(dim, F, U, s, V);
    return sv_energy(m, dim, s, NULL);
}

void ct_material_pk1(const ct_material *m, int dim, const double *F, double *P)
{
    if (!dim_ok(dim)) return;
    if (m->kind == CT_MAT_NEO_HOOKEAN) {
        nh_pk1(m, dim, F, P);
        return;
    }
    if (m->kind == CT_MAT_STVK) {
        stvk_pk1(m, dim, F, P);
        return;
    }
    /* P = U diag(g) V^T */
    double U[9], s[3], V[9];
    sv_derivs sd;
    ct_dense_svd(dim, F, U, s, V);
    sv_energy(m, dim, s, &sd);
    for (int b = 0; b < dim; ++b)
        for (int a = 0; a < dim; ++a) {
            double v = 0.0;
            for (int i = 0; i < dim; ++i) v += U[a + dim * i] * sd.g[i] * V[b + dim * i];
            P[a + dim * b] = v;
        }
}

ct_status ct_material_dpdf(const ct_material *m, int dim, const double *F, double *dPdF, int project)
{
    if (!dim_ok(dim) || (int)m->kind < 0 || m->kind >= CT_MAT_COUNT) return CT_EINPUT;
    if (!project && m->kind == CT_MAT_NEO_HOOKEAN) {
        nh_dpdf(m, dim, F, dPdF);
        return CT_OK;
    }
    if (!project && m->kind == CT_MAT_STVK) {
        stvk_dpdf(m, dim, F, dPdF);
        return CT_OK;
    }
    double U[9], s[3], V[9];
    sv_derivs sd;
    ct_dense_svd(dim, F, U, s, V);
    sv_energy(m, dim, s, &sd);
    if (dim == 2) /* constant d: lets the compiler unroll the small loops */
        sv_dpdf(2, U, V, &sd, project, dPdF);
    else
        sv_dpdf(3, U, V, &sd, project, dPdF);
    return CT_OK;
}
