/* collisions_hessian.c — the PSD-projected Hessian blocks of collision terms (ct_collision_hessian).
 *
 * The Hessian of a point–point, point–line, point–plane or line–line term is formed in factored
 * form U C Uᵀ of rank ≤ 5 from the envelope theorem and projected through an eigenproblem of size
 * ≤ 5 (see "factored barrier Hessians" below); the others (mollified edge–edge, half-space,
 * degenerate cases) are projected in the complement of the translations ((m−1)·dim unknowns, see
 * "per-term PSD projection"). Both eigenproblems go to the staged projector of ct_psd.h, whose QL
 * iterations run for four terms at a time.
 */
#include "collisions_internal.h"

#include "contactlab/ct_distance.h"
#include "contactlab/ct_parallel.h"
#include "contactlab/ct_psd.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* per-term PSD projection                                                                      */

/* The Hessian H of a term is replaced by its projection onto the PSD cone, Σ_{λ>0} λ z zᵀ (what
 * ct_psd_project computes with LAPACK), in two steps.
 *
 * 1. Reduction. Every stencil except the half-space one is translation invariant (its distance
 *    and mollifier depend on differences of positions only), so H vanishes on the translations
 *    1_m ⊗ e_k and H = Q M Qᵀ with M = QᵀHQ for any orthonormal basis Q of their complement; the
 *    projection keeps that invariance, so it is Q M⁺ Qᵀ with M⁺ the projection of M:
 *    r = (m−1)·dim unknowns instead of m·dim (9 instead of 12 for point–triangle and edge–edge,
 *    6 for point–edge, 3 for point–point in 3D).
 *
 * 2. M⁺ by the staged projector of ct_psd.h (Householder tridiagonalisation, implicit QL, the
 *    eigenvectors of the smaller side of the spectrum only; LAPACK as the fallback), whose QL
 *    iterations run for four terms at a time (ct_collision_hessian).
 */

/* The 4-vertex stencils in 3D (n = 12, r = 9): Q = S ⊗ I₃ / 2 with S the columns (1, 1, −1, −1),
 * (1, −1, 1, −1), (1, −1, −1, 1) of the 4×4 Hadamard matrix (orthogonal, orthogonal to 1₄, norm 2),
 * so that the products with Q are sums and differences (Walsh–Hadamard butterflies) and the
 * factors 1/4 are exact. M = QᵀHQ (9×9), both triangles. */
static void reduce_4x3(const double *H, double *M)
{
    double T[12 * 9]; /* T = H (S ⊗ I₃) */
    for (int l = 0; l < 3; ++l) {
        const double *x0 = H + 12 * l, *x1 = x0 + 36, *x2 = x1 + 36, *x3 = x2 + 36;
        double *y1 = T + 12 * l, *y2 = y1 + 36, *y3 = y2 + 36;
        for (int q = 0; q < 12; ++q) {
            const double s01 = x0[q] + x1[q], s23 = x2[q] + x3[q], d01 = x0[q] - x1[q], d23 = x2[q] - x3[q];
            y1[q] = s01 - s23;
            y2[q] = d01 + d23;
            y3[q] = d01 - d23;
        }
    }
    for (int c = 0; c < 9; ++c) { /* M = (S ⊗ I₃)ᵀ T / 4 */
        const double *t = T + 12 * c;
        double *y = M + 9 * c;
        for (int k = 0; k < 3; ++k) {
            const double s01 = t[k] + t[3 + k], s23 = t[6 + k] + t[9 + k];
            const double d01 = t[k] - t[3 + k], d23 = t[6 + k] - t[9 + k];
            y[k] = 0.25 * (s01 - s23);
            y[3 + k] = 0.25 * (d01 + d23);
            y[6 + k] = 0.25 * (d01 - d23);
        }
    }
}

/* H = Q M Qᵀ (12×12) for the Q of reduce_4x3, M symmetric (both triangles); H is made exactly
 * symmetric (upper triangle copied from the lower one). */
static void expand_4x3(const double *M, double *H)
{
    double T[9 * 12]; /* T = M (S ⊗ I₃)ᵀ / 4 */
    for (int l = 0; l < 3; ++l) {
        const double *y1 = M + 9 * l, *y2 = y1 + 27, *y3 = y2 + 27;
        double *x0 = T + 9 * l, *x1 = x0 + 27, *x2 = x1 + 27, *x3 = x2 + 27;
        for (int q = 0; q < 9; ++q) {
            const double a = 0.25 * y1[q], p = 0.25 * (y2[q] + y3[q]), d = 0.25 * (y2[q] - y3[q]);
            x0[q] = a + p;
            x1[q] = a - p;
            x2[q] = d - a;
            x3[q] = -(d + a);
        }
    }
    for (int c = 0; c < 12; ++c) { /* H = (S ⊗ I₃) T */
        const double *t = T + 9 * c;
        double *x = H + 12 * c;
        for (int k = 0; k < 3; ++k) {
            const double a = t[k], p = t[3 + k] + t[6 + k], d = t[3 + k] - t[6 + k];
            x[k] = a + p;
            x[3 + k] = a - p;
            x[6 + k] = d - a;
            x[9 + k] = -(d + a);
        }
    }
    for (int j = 0; j < 12; ++j)
        for (int i = j + 1; i < 12; ++i) H[j + 12 * i] = H[i + 12 * j];
}

/* PSD projection of a translation-invariant term Hessian H (n×n, n = m·dim, column-major), see
 * the comment at the top of this section. The 4-vertex stencils use the Hadamard basis of
 * reduce_4x3; the others Q = h ⊗ I_dim with the Helmert basis h_a (a = 1..m−1) of the vectors
 * orthogonal to 1_m:
 *     h_a(i) = 1/√(a(a+1)) for i < a,  −a/√(a(a+1)) for i = a,  0 for i > a.
 * (In floating point the computed H carries round-off-sized translation components, which this
 * drops; the result agrees with the full-size projection to round-off.) */
static void helmert_basis(int m, double h[4][3])
{
    for (int i = 0; i < m; ++i)
        for (int a = 1; a < m; ++a) {
            double c = 1.0 / sqrt((double)(a * (a + 1)));
            h[i][a - 1] = i < a ? c : (i == a ? -a * c : 0.0);
        }
}

/* M = QᵀHQ (r × r, r = (m−1)·dim) for the Helmert basis: T = H Q (n × r), M = Qᵀ T. */
static void reduce_helmert(const double *H, int m, int dim, double *M)
{
    const int n = m * dim, r = (m - 1) * dim;
    double h[4][3], T[12 * 9];
    helmert_basis(m, h);
    for (int b = 0; b < m - 1; ++b)
        for (int l = 0; l < dim; ++l) {
            double *Tc = T + (size_t)n * (b * dim + l);
            for (int q = 0; q < n; ++q) Tc[q] = 0.0;
            for (int j = 0; j <= b + 1; ++j) {
                const double hj = h[j][b];
                const double *Hc = H + (size_t)n * (j * dim + l);
                for (int q = 0; q < n; ++q) Tc[q] += hj * Hc[q];
            }
        }
    for (int c = 0; c < r; ++c)
        for (int a = 0; a < m - 1; ++a)
            for (int k = 0; k < dim; ++k) {
                double v = 0.0;
                for (int i = 0; i <= a + 1; ++i) v += h[i][a] * T[(i * dim + k) + (size_t)n * c];
                M[(a * dim + k) + (size_t)r * c] = v;
            }
}

/* H = Q M Qᵀ for the Helmert basis: T = Q M (n × r), then H = T Qᵀ. */
static void expand_helmert(const double *M, int m, int dim, double *H)
{
    const int n = m * dim, r = (m - 1) * dim;
    double h[4][3], T[12 * 9];
    helmert_basis(m, h);
    for (int c = 0; c < r; ++c)
        for (int i = 0; i < m; ++i)
            for (int k = 0; k < dim; ++k) {
                double v = 0.0;
                for (int a = i > 0 ? i - 1 : 0; a < m - 1; ++a) v += h[i][a] * M[(a * dim + k) + (size_t)r * c];
                T[(i * dim + k) + (size_t)n * c] = v;
            }
    for (int j = 0; j < m; ++j)
        for (int l = 0; l < dim; ++l) {
            double *Hc = H + (size_t)n * (j * dim + l);
            for (int q = 0; q < n; ++q) Hc[q] = 0.0;
            for (int b = j > 0 ? j - 1 : 0; b < m - 1; ++b) {
                const double hj = h[j][b];
                const double *Tc = T + (size_t)n * (b * dim + l);
                for (int q = 0; q < n; ++q) Hc[q] += hj * Tc[q];
            }
        }
}

/* ------------------------------------------------------------------------------------------ */
/* factored barrier Hessians of the distance-type stencils                                      */

/* For the point–point, point–line, point–plane and line–line stencils (kinds PP, PE, PT and the
 * unmollified EE, whose distance types are the unconstrained ones), the squared distance is
 *     s(x) = min_β L(x, β),   L = |r|²,   r(x, β) = Σ_i c_i(β) x_i,
 * with coefficients c_i affine in the k closest-point parameters β (k = 0, 1, 2):
 *     PP  r = x_0 − x_1                                  c = (1, −1)
 *     PE  r = p − (1−t) a − t b                          c = (1, −(1−t), −t),              ∂c/∂t = (0, 1, −1)
 *     PT  r = p − (1−β₁−β₂) x_1 − β₁ x_2 − β₂ x_3          c = (1, −(1−β₁−β₂), −β₁, −β₂),  ∂c/∂β₁ = (0, 1, −1, 0),
 *                                                                                           ∂c/∂β₂ = (0, 1, 0, −1)
 *     EE  r = (1−α) a_0 + α a_1 − (1−β) b_0 − β b_1       c = (1−α, α, −(1−β), −β),        ∂c/∂α = (−1, 1, 0, 0),
 *                                                                                           ∂c/∂β = (0, 0, 1, −1).
 * With J = ∂r/∂x = (c_i I) (dim × n), E_j = ∂r/∂β_j = Σ_i (∂c_i/∂β_j) x_i and G = EᵀE (k × k), the
 * minimiser satisfies Eᵀr = 0, and the envelope theorem gives ∇s = 2Jᵀr and
 *     ∇²s = L_xx − L_xβ L_ββ⁻¹ L_βx = 2JᵀJ − 2 K G⁻¹ Kᵀ,   K_j = ∂(E_jᵀ r)/∂x = Jᵀ E_j + V_j,
 * where V_j has the blocks (∂c_i/∂β_j) r. A term w ψ(s) therefore has the Hessian
 *     H = w (ψ'' ∇s ∇sᵀ + ψ' ∇²s) = U C Uᵀ,   U = [Jᵀ | V̂]   (n × (dim + k)),  V̂ = V / |r|,
 *     C = w [ 4ψ'' r rᵀ + 2ψ' (I − E G⁻¹ Eᵀ)    −2ψ' |r| E G⁻¹ ]
 *           [ −2ψ' |r| G⁻¹ Eᵀ                     −2ψ' |r|² G⁻¹  ],
 * a matrix of rank ≤ dim + k (5 of 12 for PT and EE, 4 of 9 for PE, 3 of 6 for PP). The Gram
 * matrix of U is known in closed form, Γ = [ (Σc_i²) I   (Σ c_i ∂c_i/∂β) r̂ ; ·   (Σ ∂c_i/∂β_j ∂c_i/∂β_l) ],
 * and with Γ = L Lᵀ (Cholesky) the columns of Y = U L⁻ᵀ are orthonormal, H = Y S Yᵀ with
 * S = Lᵀ C L, and the PSD projection of H is Y S⁺ Yᵀ: an eigenproblem of size ≤ 5 instead of
 * 9 (and no 12×12 Hessian of the distance). The closest-point vector r is taken along the
 * normal n̂ ∝ E₁ × E₂ for PT and EE (r = (r₀·n̂) n̂, accurate to round-off relative to |r| even
 * when |r| ≪ the edge lengths). Degenerate input (r = 0, G or Γ not safely positive definite,
 * a non-finite value) returns −1 and the caller uses the general path. */
/* A term's Hessian between the stages of its evaluation (term_begin, the QL iterations of a group
 * of terms, term_end): the small matrix to project and what turns its projection into the
 * stencil's Hessian. */
enum { TW_DONE, TW_ENVELOPE, TW_HADAMARD, TW_HELMERT };

typedef struct {
    int mode, m, dim, nb; /* nb: size of the envelope's S */
    double M[81];         /* S (envelope, nb × nb) or QᵀHQ (r × r) */
    double Y[12 * 5];     /* envelope: Yᵀ = L⁻¹ Uᵀ, column p at Y + nb·p */
    ct_psd_work pw;
} term_work;

/* The closest-point geometry of a factored stencil at x (the notation above): k parameters β,
 * r (taken along n̂ for PT and EE), |r| and r̂ = r/|r|, the E_j, G⁻¹ and the coefficients c_i(β)
 * with their derivatives ∂c_i/∂β_j. */
typedef struct {
    int m, k, dim, nb; /* stencil vertices, parameters, dimension, nb = dim + k */
    double r[3], rn, rh[3], E[2][3], Gi[2][2];
    double cf[4], dc[2][4];
} envelope;

/* r₀ = r(β = 0), E_j, c(0) and ∂c/∂β of the stencil of c (kinds PP, PE, PT, EE). */
static void envelope_stencil(const ct_collision *c, const double *x, int dim, envelope *ev)
{
    const double *P[4];
    double *r = ev->r, (*E)[3] = ev->E, *cf = ev->cf, (*dc)[4] = ev->dc;
    ev->m = ct_collision_nverts(c);
    ev->dim = dim;
    for (int i = 0; i < ev->m; ++i) P[i] = x + (size_t)dim * (size_t)c->v[i];
    for (int d = 0; d < 3; ++d) r[d] = 0.0, E[0][d] = 0.0, E[1][d] = 0.0;
    switch (c->kind) {
    case CT_COL_PP:
        ev->k = 0;
        for (int d = 0; d < dim; ++d) r[d] = P[0][d] - P[1][d];
        cf[0] = 1.0, cf[1] = -1.0;
        break;
    case CT_COL_PE:
        ev->k = 1;
        for (int d = 0; d < dim; ++d) r[d] = P[0][d] - P[1][d], E[0][d] = P[1][d] - P[2][d];
        dc[0][0] = 0.0, dc[0][1] = 1.0, dc[0][2] = -1.0;
        break;
    case CT_COL_PT:
        ev->k = 2;
        for (int d = 0; d < 3; ++d)
            r[d] = P[0][d] - P[1][d], E[0][d] = P[1][d] - P[2][d], E[1][d] = P[1][d] - P[3][d];
        dc[0][0] = 0.0, dc[0][1] = 1.0, dc[0][2] = -1.0, dc[0][3] = 0.0;
        dc[1][0] = 0.0, dc[1][1] = 1.0, dc[1][2] = 0.0, dc[1][3] = -1.0;
        break;
    default: /* CT_COL_EE */
        ev->k = 2;
        for (int d = 0; d < 3; ++d)
            r[d] = P[0][d] - P[2][d], E[0][d] = P[1][d] - P[0][d], E[1][d] = P[2][d] - P[3][d];
        dc[0][0] = -1.0, dc[0][1] = 1.0, dc[0][2] = 0.0, dc[0][3] = 0.0;
        dc[1][0] = 0.0, dc[1][1] = 0.0, dc[1][2] = 1.0, dc[1][3] = -1.0;
        break;
    }
    ev->nb = dim + ev->k;
}

/* β from G β = −Eᵀ r₀, then r = r(β) (along n̂ for k = 2), c(β) = c(0) + Σ_j β_j ∂c/∂β_j, |r| and
 * r̂. −1 if G is not safely positive definite (near-parallel edges) or r is 0 or not finite. */
static int envelope_closest(const ct_collision *c, envelope *ev)
{
    const int k = ev->k, dim = ev->dim;
    double *r = ev->r, (*E)[3] = ev->E, (*Gi)[2] = ev->Gi, *cf = ev->cf;
    double G[2][2] = {{0, 0}, {0, 0}}, beta[2] = {0, 0};
    Gi[0][0] = Gi[0][1] = Gi[1][0] = Gi[1][1] = 0.0;
    if (k > 0) {
        double b[2] = {0, 0};
        for (int j = 0; j < k; ++j) {
            for (int l = 0; l < k; ++l)
                for (int d = 0; d < dim; ++d) G[j][l] += E[j][d] * E[l][d];
            for (int d = 0; d < dim; ++d) b[j] -= E[j][d] * r[d];
        }
        if (k == 1) {
            if (!(G[0][0] > 0.0)) return -1;
            Gi[0][0] = 1.0 / G[0][0];
        } else {
            const double det = G[0][0] * G[1][1] - G[0][1] * G[1][0];
            if (!(det > 1e-12 * G[0][0] * G[1][1])) return -1; /* (near-)parallel: general path */
            Gi[0][0] = G[1][1] / det, Gi[1][1] = G[0][0] / det, Gi[0][1] = Gi[1][0] = -G[0][1] / det;
        }
        for (int j = 0; j < k; ++j) beta[j] = Gi[j][0] * b[0] + (k > 1 ? Gi[j][1] * b[1] : 0.0);
        if (k == 2) { /* r = (r₀·n̂) n̂ */
            double nv[3] = {E[0][1] * E[1][2] - E[0][2] * E[1][1], E[0][2] * E[1][0] - E[0][0] * E[1][2],
                            E[0][0] * E[1][1] - E[0][1] * E[1][0]};
            const double nn = nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2];
            const double t = (r[0] * nv[0] + r[1] * nv[1] + r[2] * nv[2]) / nn;
            for (int d = 0; d < 3; ++d) r[d] = t * nv[d];
        } else {
            for (int d = 0; d < dim; ++d) r[d] += beta[0] * E[0][d];
        }
        if (c->kind == CT_COL_PE) cf[0] = 1.0, cf[1] = -1.0 + beta[0], cf[2] = -beta[0];
        else if (c->kind == CT_COL_PT)
            cf[0] = 1.0, cf[1] = -1.0 + beta[0] + beta[1], cf[2] = -beta[0], cf[3] = -beta[1];
        else cf[0] = 1.0 - beta[0], cf[1] = beta[0], cf[2] = -1.0 + beta[1], cf[3] = -beta[1];
    }
    double rn = 0.0;
    for (int d = 0; d < dim; ++d) rn += r[d] * r[d];
    rn = sqrt(rn);
    if (!(rn > 0.0) || !(rn <= DBL_MAX)) return -1;
    ev->rn = rn;
    for (int d = 0; d < dim; ++d) ev->rh[d] = r[d] / rn;
    return 0;
}

/* C (nb × nb, column-major) of the term w ψ(s) with ψ' = ps, ψ'' = pss. */
static void envelope_middle(const envelope *ev, double w, double ps, double pss, double *C)
{
    const int dim = ev->dim, k = ev->k, nb = ev->nb;
    const double *r = ev->r, rn = ev->rn;
    double EGi[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    for (int d = 0; d < dim; ++d)
        for (int j = 0; j < k; ++j)
            for (int l = 0; l < k; ++l) EGi[d][j] += ev->E[l][d] * ev->Gi[l][j];
    for (int a = 0; a < dim; ++a)
        for (int b = 0; b < dim; ++b) {
            double p = a == b ? 1.0 : 0.0;
            for (int j = 0; j < k; ++j) p -= EGi[a][j] * ev->E[j][b];
            C[a + nb * b] = w * (4.0 * pss * r[a] * r[b] + 2.0 * ps * p);
        }
    for (int j = 0; j < k; ++j) {
        for (int a = 0; a < dim; ++a) C[a + nb * (dim + j)] = C[(dim + j) + nb * a] = -2.0 * w * ps * rn * EGi[a][j];
        for (int l = 0; l < k; ++l) C[(dim + j) + nb * (dim + l)] = -2.0 * w * ps * rn * rn * ev->Gi[j][l];
    }
}

/* The Gram matrix Γ of U and its Cholesky factor L (lower, column-major, nb × nb, zero above the
 * diagonal); −1 if Γ's columns are nearly dependent. */
static int envelope_gram_factor(const envelope *ev, double *L)
{
    const int m = ev->m, dim = ev->dim, k = ev->k, nb = ev->nb;
    double cc = 0.0;
    for (int q = 0; q < nb * nb; ++q) L[q] = 0.0;
    for (int i = 0; i < m; ++i) cc += ev->cf[i] * ev->cf[i];
    for (int a = 0; a < dim; ++a) L[a + nb * a] = cc;
    for (int j = 0; j < k; ++j) {
        double cd = 0.0;
        for (int i = 0; i < m; ++i) cd += ev->cf[i] * ev->dc[j][i];
        for (int a = 0; a < dim; ++a) L[(dim + j) + nb * a] = cd * ev->rh[a];
        for (int l = 0; l <= j; ++l) {
            double dd = 0.0;
            for (int i = 0; i < m; ++i) dd += ev->dc[j][i] * ev->dc[l][i];
            L[(dim + j) + nb * (dim + l)] = dd;
        }
    }
    for (int j = 0; j < nb; ++j) {
        double djj = L[j + nb * j];
        for (int q = 0; q < j; ++q) djj -= L[j + nb * q] * L[j + nb * q];
        if (!(djj > 1e-8 * L[j + nb * j])) return -1; /* Γ's columns nearly dependent */
        const double ljj = sqrt(djj);
        L[j + nb * j] = ljj;
        for (int i = j + 1; i < nb; ++i) {
            double v = L[i + nb * j];
            for (int q = 0; q < j; ++q) v -= L[i + nb * q] * L[j + nb * q];
            L[i + nb * j] = v / ljj;
        }
    }
    return 0;
}

/* S = Lᵀ C L (both triangles) into S; −1 if an entry is not finite. */
static int envelope_congruence(int nb, const double *C, const double *L, double *S)
{
    double CL[25];
    for (int b = 0; b < nb; ++b)
        for (int a = 0; a < nb; ++a) {
            double v = 0.0;
            for (int q = b; q < nb; ++q) v += C[a + nb * q] * L[q + nb * b];
            CL[a + nb * b] = v;
        }
    for (int b = 0; b < nb; ++b)
        for (int a = b; a < nb; ++a) {
            double v = 0.0;
            for (int q = a; q < nb; ++q) v += L[q + nb * a] * CL[q + nb * b];
            S[a + nb * b] = S[b + nb * a] = v;
        }
    for (int q = 0; q < nb * nb; ++q)
        if (!(fabs(S[q]) <= DBL_MAX)) return -1;
    return 0;
}

/* Yᵀ = L⁻¹ Uᵀ, column by column of Uᵀ (row q = vertex i, coordinate d of U), into Y. */
static void envelope_basis(const envelope *ev, const double *L, double *Y)
{
    const int nb = ev->nb, dim = ev->dim, k = ev->k;
    for (int i = 0; i < ev->m; ++i)
        for (int d = 0; d < dim; ++d) {
            double u[5];
            for (int a = 0; a < dim; ++a) u[a] = a == d ? ev->cf[i] : 0.0;
            for (int j = 0; j < k; ++j) u[dim + j] = ev->dc[j][i] * ev->rh[d];
            double *y = Y + (size_t)nb * (i * dim + d); /* y = L⁻¹ u */
            for (int a = 0; a < nb; ++a) {
                double v = u[a];
                for (int q = 0; q < a; ++q) v -= L[a + nb * q] * y[q];
                y[a] = v / L[a + nb * a];
            }
        }
}

/* First stage of the factored Hessian of term c (ψ' = ps, ψ'' = pss at its s): S and Y in tw, up
 * to ct_psd_begin. −1 on degenerate input (tw unusable: the caller takes the general path). */
static int envelope_hessian(const ct_collision *c, const double *x, int dim, double ps, double pss, term_work *tw)
{
    envelope ev;
    double C[25], L[25];
    envelope_stencil(c, x, dim, &ev);
    if (envelope_closest(c, &ev) != 0) return -1;
    envelope_middle(&ev, c->w, ps, pss, C);
    if (envelope_gram_factor(&ev, L) != 0) return -1;
    if (envelope_congruence(ev.nb, C, L, tw->M) != 0) return -1;
    envelope_basis(&ev, L, tw->Y);
    tw->mode = TW_ENVELOPE, tw->m = ev.m, tw->dim = dim, tw->nb = ev.nb;
    ct_psd_begin(&tw->pw, tw->M, ev.nb);
    return 0;
}

/* H = Y S⁺ Yᵀ (n × n, both triangles, exactly symmetric) from the projected S of tw. */
static void envelope_expand(const term_work *tw, double *H)
{
    const int nb = tw->nb, n = tw->m * tw->dim;
    const double *S = tw->M, *Y = tw->Y;
    double Z[12 * 5]; /* Z row p = S⁺ y_p */
    for (int p = 0; p < n; ++p)
        for (int a = 0; a < nb; ++a) {
            double v = 0.0;
            for (int q = 0; q < nb; ++q) v += S[a + nb * q] * Y[nb * p + q];
            Z[nb * p + a] = v;
        }
    for (int b = 0; b < n; ++b)
        for (int a = b; a < n; ++a) {
            double v = 0.0;
            for (int q = 0; q < nb; ++q) v += Y[nb * a + q] * Z[nb * b + q];
            H[a + n * b] = H[b + n * a] = v;
        }
}

/* 1 if every entry of H[0, nn) is finite, the test !(fabs(h) <= DBL_MAX) on the high words: the
 * exponent bits plus one carry into bit 31 exactly when they are all set (infinity, NaN). Inlined
 * with a literal nn, the loop is vectorised. */
static inline int block_finite(const double *H, int nn)
{
    uint32_t bad = 0;
    for (int k = 0; k < nn; ++k) {
        uint64_t u;
        memcpy(&u, &H[k], sizeof u);
        bad |= ((uint32_t)(u >> 32) & 0x7ff00000u) + 0x00100000u;
    }
    return !(bad & 0x80000000u);
}

/* H = a g gᵀ + b Hs (n×n column-major), in the operation order of the general path; inlined with
 * a literal n, so the compiler vectorises the columns (restrict: the three arrays are apart). */
static inline void rank1_plus(int n, double a, double b, const double *restrict g, const double *restrict Hs,
                              double *restrict H)
{
    for (int j = 0; j < n; ++j) {
        const double agj = a * g[j];
        for (int i = 0; i < n; ++i) H[i + n * j] = agj * g[i] + b * Hs[i + n * j];
    }
}

/* The mollified edge–edge Hessian (12×12): H = a g gᵀ + b Hs + cg (g gmᵀ + gm gᵀ) + ch Hm with
 * gm = m1 gc and Hm = m2 gc gcᵀ + m1 Hc (the mollifier's gradient and Hessian, formed on the fly
 * from the blocks B of Hc = ∇²c, ct_ee_cross2_blocks; each entry with the operations of the
 * separate matrices: the same bits). */
static void moll_hessian(double a, double b, double cg, double ch, double m1, double m2, const double *restrict g,
                         const double *restrict Hs, const double *restrict gc, double B[2][2][9],
                         double *restrict H)
{
    double gm[12];
    for (int i = 0; i < 12; ++i) gm[i] = m1 * gc[i];
    for (int j = 0; j < 12; ++j) {
        /* column j of Hc: the (vi, vj) blocks ± B[vj/2][vi/2] read along row jj (B's blocks are
         * symmetric in their pair), then the column in one loop the compiler vectorises */
        const int vj = j / 3, jj = j % 3;
        double hc[12];
        for (int vi = 0; vi < 4; ++vi) {
            const double sg = ((vi & 1) ? 1.0 : -1.0) * ((vj & 1) ? 1.0 : -1.0);
            for (int ii = 0; ii < 3; ++ii) hc[3 * vi + ii] = sg * B[vj / 2][vi / 2][3 * jj + ii];
        }
        for (int i = 0; i < 12; ++i) {
            const double hm = m2 * gc[i] * gc[j] + m1 * hc[i];
            H[i + 12 * j] = a * g[i] * g[j] + b * Hs[i + 12 * j] + cg * (g[i] * gm[j] + gm[i] * g[j]) + ch * hm;
        }
    }
}

/* The unprojected Hessian H (n×n column-major, n = stencil dofs) of a term on the general path
 * (no factored form: mollified edge–edge terms, the half-space, degenerate stencils); 0 if an
 * entry is not finite. */
static int general_hessian(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                           ct_density_fn f, const void *ctx, double *H)
{
    const int n = ct_collision_nverts(c) * cm->dim;
    const int moll = c->kind == CT_COL_EE && c->eps_x > 0;
    double gs[12], Hs[144], ps, pss;
    double s = ct_collision_d2(c, cm, obs, x, gs, Hs);
    double psi = f(ctx, c, s, &ps, &pss);
    if (!moll) {
        /* H = w ψ'' g gᵀ + w ψ' ∇²s */
        const double a = c->w * pss, b = c->w * ps;
        switch (n) { /* (literal sizes for the compiler) */
        case 12: rank1_plus(12, a, b, gs, Hs, H); return block_finite(H, 144);
        case 9: rank1_plus(9, a, b, gs, Hs, H); return block_finite(H, 81);
        case 6: rank1_plus(6, a, b, gs, Hs, H); return block_finite(H, 36);
        default: rank1_plus(n, a, b, gs, Hs, H); return block_finite(H, n * n);
        }
    } else {
        /* H = w (m ψ'' g gᵀ + m ψ' ∇²s + ψ' (g ∇mᵀ + ∇m gᵀ) + ψ ∇²m), ∇m = m'(c) ∇c,
         * ∇²m = m''(c) ∇c ∇cᵀ + m'(c) ∇²c with c = |ea × eb|² */
        const int *v = c->v;
        double gc[12], B[2][2][9], m1, m2;
        const double cc = ct_ee_cross2_blocks(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), gc, B);
        const double m = ee_mollifier_of(cc, c->eps_x, &m1, &m2);
        moll_hessian(c->w * m * pss, c->w * m * ps, c->w * ps, c->w * psi, m1, m2, gs, Hs, gc, B, H);
        return block_finite(H, 144);
    }
}

/* The general path's reduction of a translation-invariant term Hessian H (m vertices) to the
 * complement of the translations (Hadamard basis for the 4-vertex stencils in 3D, Helmert
 * otherwise), up to ct_psd_begin. */
static void reduce_begin(term_work *tw, const double *H, int m, int dim)
{
    tw->m = m, tw->dim = dim;
    if (m == 4 && dim == 3) {
        reduce_4x3(H, tw->M);
        tw->mode = TW_HADAMARD;
        ct_psd_begin(&tw->pw, tw->M, 9);
    } else {
        reduce_helmert(H, m, dim, tw->M);
        tw->mode = TW_HELMERT;
        ct_psd_begin(&tw->pw, tw->M, (m - 1) * dim);
    }
}

/* First stage of a term's PSD-projected Hessian (n×n column-major in H, n = stencil dofs): the
 * factored form or the general Hessian, reduced to the complement of the translations, up to
 * ct_psd_begin. The half-space term (not translation invariant) and failures are finished here
 * (tw->mode = TW_DONE; a failure sets *status). */
static void term_begin(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                       ct_density_fn f, const void *ctx, int project, double *H, term_work *tw, int *status)
{
    const int nv = ct_collision_nverts(c), n = nv * cm->dim;
    const int moll = c->kind == CT_COL_EE && c->eps_x > 0;
    tw->mode = TW_DONE;
    if (!project) { /* the exact Hessian, as it is */
        if (!general_hessian(c, cm, obs, x, f, ctx, H)) *status = CT_ELIB;
        return;
    }
    if (!moll && (c->kind == CT_COL_PP || (c->kind == CT_COL_PE && c->type == CT_PE_P_E) ||
                  (c->kind == CT_COL_PT && c->type == CT_PT_P_T) || (c->kind == CT_COL_EE && c->type == CT_EE_A_B))) {
        double ps, pss;
        const double s = ct_collision_d2(c, cm, obs, x, NULL, NULL);
        f(ctx, c, s, &ps, &pss);
        if (envelope_hessian(c, x, cm->dim, ps, pss, tw) == 0) return;
    }
    if (!general_hessian(c, cm, obs, x, f, ctx, H)) {
        *status = CT_ELIB;
        return;
    }
    if (c->kind == CT_COL_PH) {
        if (ct_psd_project(H, n) != CT_OK) *status = CT_ELIB;
        return;
    }
    reduce_begin(tw, H, nv, cm->dim);
}

/* Last stage, after the QL iteration (ct_psd_ql) of tw->pw: the projected Hessian in H. */
static void term_end(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                     ct_density_fn f, const void *ctx, double *H, term_work *tw, int *status)
{
    switch (tw->mode) {
    case TW_ENVELOPE:
        if (ct_psd_end(&tw->pw, tw->M) == CT_OK) {
            envelope_expand(tw, H);
            return;
        }
        /* the factored form failed (LAPACK's verdict too): the general path, on its own */
        if (!general_hessian(c, cm, obs, x, f, ctx, H)) {
            *status = CT_ELIB;
            return;
        }
        reduce_begin(tw, H, ct_collision_nverts(c), cm->dim);
        ct_psd_work *one = &tw->pw;
        ct_psd_ql(&one, 1);
        term_end(c, cm, obs, x, f, ctx, H, tw, status);
        return;
    case TW_HADAMARD:
        if (ct_psd_end(&tw->pw, tw->M) != CT_OK) *status = CT_ELIB;
        else expand_4x3(tw->M, H);
        return;
    case TW_HELMERT:
        if (ct_psd_end(&tw->pw, tw->M) != CT_OK) *status = CT_ELIB;
        else expand_helmert(tw->M, tw->m, tw->dim, H);
        return;
    default: return;
    }
}

static ct_status collision_hessian(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                   const double *x, ct_density_fn f, const void *ctx, int threads, int project,
                                   ct_triplets *H)
{
    const int dim = cm->dim;
    if (cs->n == 0) return CT_OK;
    /* Term i's (nv·dim)² entries (with H->upper only those with row <= col) go to H at off[i]
     * (the order of ct_triplets_add_block, term after term), so the terms are evaluated in
     * parallel straight into the triplet arrays: the result is the same as appending the blocks
     * one by one, for any thread count. */
    size_t *off = malloc(((size_t)cs->n + 1) * sizeof *off);
    if (!off) return CT_ENOMEM;
    off[0] = H->n;
    const size_t nblk0 = H->nblk; /* (the blocks noted below are dropped again on failure) */
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        const int nv = ct_collision_nverts(c);
        if (ct_triplets_note_block(H, off[i], c->v, nv, dim, (size_t)(cs->n - i)) != CT_OK) {
            H->nblk = nblk0;
            free(off);
            return CT_ENOMEM;
        }
        off[i + 1] = off[i] + ct_triplet_block_count(c->v, nv, dim, H->upper);
    }
    ct_status st = ct_triplets_reserve(H, off[cs->n]);
    if (st != CT_OK) {
        H->nblk = nblk0;
        free(off);
        return st;
    }
    /* Terms go in groups of HESS_GROUP: their QL iterations run together (ct_psd_ql). */
    enum { HESS_GROUP = 4 };
    const long ngroups = (cs->n + HESS_GROUP - 1) / HESS_GROUP;
    int status = CT_OK;
#pragma omp parallel for schedule(dynamic, 4) num_threads(ct_threads(threads))
    for (long gi = 0; gi < ngroups; ++gi) {
        const long i0 = gi * HESS_GROUP, i1 = i0 + HESS_GROUP < cs->n ? i0 + HESS_GROUP : cs->n;
        const int ng = (int)(i1 - i0);
        term_work tw[HESS_GROUP];
        ct_psd_work *pw[HESS_GROUP];
        double loc[HESS_GROUP][144];
        int sti = CT_OK;
        for (int q = 0; q < ng; ++q) {
            term_begin(&cs->c[i0 + q], cm, obs, x, f, ctx, project, loc[q], &tw[q], &sti);
            pw[q] = tw[q].mode == TW_DONE ? NULL : &tw[q].pw; /* (NULL: skipped by ct_psd_ql) */
        }
        ct_psd_ql(pw, ng);
        for (int q = 0; q < ng; ++q) {
            const ct_collision *c = &cs->c[i0 + q];
            term_end(c, cm, obs, x, f, ctx, loc[q], &tw[q], &sti);
            ct_triplets_put_block(H, off[i0 + q], c->v, ct_collision_nverts(c), dim, loc[q]); /* (lazy: values) */
        }
        if (sti != CT_OK) {
#pragma omp atomic write
            status = sti;
        }
    }
    if (status == CT_OK) H->n = off[cs->n];
    else H->nblk = nblk0;
    free(off);
    return (ct_status)status;
}

ct_status ct_collision_hessian(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                               const double *x, ct_density_fn f, const void *ctx, int threads, ct_triplets *H)
{
    return collision_hessian(cs, cm, obs, x, f, ctx, threads, 1, H);
}

ct_status ct_collision_hessian_exact(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                     const double *x, ct_density_fn f, const void *ctx, int threads, ct_triplets *H)
{
    return collision_hessian(cs, cm, obs, x, f, ctx, threads, 0, H);
}
