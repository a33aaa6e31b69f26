/* distance.c — squared distances between contact primitives (PP, PE, PT, EE): closest-feature
 * classification, value, exact gradient and Hessian, closest-point coordinates, and the
 * edge–edge mollifier (DESIGN §3, header ct_distance.h).
 *
 * Method.
 *  - Classification follows the usual closest-point-on-primitive case analysis (Ericson,
 *    "Real-Time Collision Detection", 2005, §5.1.2, §5.1.5, §5.1.9; the distance types of
 *    Li et al., "Incremental Potential Contact", ACM TOG 39(4) 2020, and its supplement): the
 *    unconstrained minimiser over the barycentric parameters (point–line, point–plane,
 *    line–line) is used when it lies inside the primitive; otherwise the minimum of the convex
 *    quadratic over the parameter domain lies on its boundary, which is the nearest of a few
 *    point–edge sub-problems (3 edges of a triangle; 4 point–edge pairs for two edges). This
 *    boundary search is also the fallback for degenerate input (zero-length edges, collinear
 *    triangles, (nearly) parallel edges), so a classification never divides by zero.
 *  - Vertex and edge types are a PP / PE distance on a sub-stencil scattered into the full
 *    stencil. The interior types use the envelope (implicit-function) theorem: with
 *    d²(x) = min_β φ(x, β), φ = |r|², r = Σ_i c_i(β) x_i linear in β,
 *        ∇d² = φ_x,   ∇²d² = φ_xx − φ_xβ φ_ββ⁻¹ φ_βx          (at the unclamped β*),
 *    which gives exact derivatives from one small generic routine (envelope()).
 *  - The mollifier is the parallel edge–edge mollifier of the IPC paper: c = |(a1−a0)×(b1−b0)|²,
 *    m(c) = −c²/ε² + 2c/ε below ε, ε = 1e-3 |a1r−a0r|² |b1r−b0r|².
 * No allocation: every kernel works on small fixed-size stack arrays.
 */
#include "contactlab/ct_distance.h"

#include "ee_cross.h"

#include <math.h>
#include <string.h>

/* |e_a × e_b|² <= PARALLEL_TOL · |e_a|² |e_b|² (sin² of the angle below 1e-20): the two edges
 * are parallel, or the triangle is degenerate (collinear vertices). */
#define PARALLEL_TOL 1e-20

/* ---- small vector helpers ---- */

static inline double dotn(int dim, const double *a, const double *b)
{
    double s = 0.0;
    for (int i = 0; i < dim; ++i) s += a[i] * b[i];
    return s;
}

static inline void subn(int dim, const double *a, const double *b, double *out)
{
    for (int i = 0; i < dim; ++i) out[i] = a[i] - b[i];
}

static inline double dot3(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static inline void cross3(const double *a, const double *b, double *out)
{
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* The interior test shared by the point–plane and line–line classifications: n = a × b and
 * *nn = |n|² always; unless a and b are (nearly) parallel (then 0 is returned),
 * *u = (w × b)·n and *v = (a × w)·n, |n|² times the coordinates of the stationary point (for a
 * line pair the first one is −*u: (b × w) = −(w × b) exactly). */
static inline int cross_coords(const double *a, const double *b, const double *w, double *n, double *nn, double *u,
                               double *v)
{
    double q[3];
    cross3(a, b, n);
    *nn = dot3(n, n);
    if (!(*nn > PARALLEL_TOL * dot3(a, a) * dot3(b, b))) return 0;
    cross3(w, b, q);
    *u = dot3(q, n);
    cross3(a, w, q);
    *v = dot3(q, n);
    return 1;
}

/* ---- envelope-theorem derivatives of an interior distance ----
 *
 * d²(x) = |r|² with r = Σ_i c_i x_i the residual at the stationary β* of φ = |r(x, β)|².
 * Inputs: n vertices of dimension dim, k parameters (1 or 2); c[i] the coefficients at β*,
 * D[l][i] = ∂c_i/∂β_l, u[l] = ∂r/∂β_l, and the lower Cholesky factor R = (R11, R21, R22) of
 * the Gram matrix A_lm = u_l·u_m (φ_ββ = 2A). Then φ_{x_i} = 2 c_i r, φ_{x_i x_j} = 2 c_i c_j I,
 * φ_{x_i β_l} = 2 v_{l,i} with v_{l,i} = D_{l,i} r + c_i u_l, and
 *     ∇²d²_{ij} = 2 c_i c_j I − 2 Σ_{lm} (A⁻¹)_lm v_{l,i} v_{m,j}ᵀ = 2 c_i c_j I − 2 Σ_l y_l y_lᵀ,
 * with y = R⁻¹ v (A⁻¹ = R⁻ᵀR⁻¹): a rank-k update, exactly symmetric and cheap to form. */
static inline double envelope(int n, int dim, int k, const double *r, const double *c,
                              const double D[2][4], const double u[2][3], const double R[3],
                              double *g, double *H)
{
    const int N = n * dim;
    if (g)
        for (int i = 0; i < n; ++i)
            for (int a = 0; a < dim; ++a) g[i * dim + a] = 2.0 * c[i] * r[a];
    if (H) {
        /* y_l = √2 R⁻¹ v (forward substitution; y_1 = 0 when k = 1), so that
         * H_IJ = 2 δ_ab c_i c_j − y_0I y_0J − y_1I y_1J */
        double y[2][12] = {{0}};
        for (int l = 0; l < k; ++l)
            for (int i = 0; i < n; ++i)
                for (int a = 0; a < dim; ++a) y[l][i * dim + a] = D[l][i] * r[a] + c[i] * u[l][a];
        const double i11 = sqrt(2.0) / R[0];
        if (k == 2) {
            const double i22 = 1.0 / R[2];
            for (int I = 0; I < N; ++I) {
                y[0][I] *= i11;
                y[1][I] = (sqrt(2.0) * y[1][I] - R[1] * y[0][I]) * i22;
            }
        } else
            for (int I = 0; I < N; ++I) y[0][I] *= i11;
        for (int I = 0; I < N; ++I) {
            const double y0 = y[0][I], y1 = y[1][I];
            double *h = H + I * N;
            for (int J = 0; J < N; ++J) h[J] = -(y0 * y[0][J] + y1 * y[1][J]);
        }
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < n; ++j) {
                const double cc = 2.0 * c[i] * c[j];
                for (int a = 0; a < dim; ++a) H[(i * dim + a) * N + j * dim + a] += cc;
            }
    }
    return dotn(dim, r, r);
}

/* Copy a sub-stencil gradient / Hessian (nsub vertices, listed by map) into the full stencil
 * of nfull vertices, zeros elsewhere. */
static void scatter(int dim, int nsub, const int *map, int nfull, const double *gs,
                    const double *Hs, double *g, double *H)
{
    const int Ns = nsub * dim, Nf = nfull * dim;
    if (g) {
        memset(g, 0, sizeof(double) * (size_t)Nf);
        for (int i = 0; i < nsub; ++i)
            for (int a = 0; a < dim; ++a) g[map[i] * dim + a] = gs[i * dim + a];
    }
    if (H) {
        memset(H, 0, sizeof(double) * (size_t)(Nf * Nf));
        for (int i = 0; i < nsub; ++i)
            for (int a = 0; a < dim; ++a) {
                const double *hs = Hs + (i * dim + a) * Ns;
                double *hf = H + (map[i] * dim + a) * Nf;
                for (int j = 0; j < nsub; ++j)
                    for (int b = 0; b < dim; ++b) hf[map[j] * dim + b] = hs[j * dim + b];
            }
    }
}

/* ---- point–edge ---- */

/* Closest point of edge (e0, e1) to p: type, clamped parameter s and squared distance.
 * The tests compare w·e against 0 and |e|² without dividing, so a zero-length edge is P_E0. */
static ct_pe_type pe_closest_full(int dim, const double *p, const double *e0, const double *e1,
                                  double *s, double *d2)
{
    double w[3], e[3], r[3];
    subn(dim, p, e0, w);
    subn(dim, e1, e0, e);
    const double we = dotn(dim, w, e), ee = dotn(dim, e, e);
    if (!(we > 0.0)) {
        *s = 0.0;
        *d2 = dotn(dim, w, w);
        return CT_PE_P_E0;
    }
    if (we >= ee) {
        subn(dim, p, e1, r);
        *s = 1.0;
        *d2 = dotn(dim, r, r);
        return CT_PE_P_E1;
    }
    *s = we / ee;
    for (int a = 0; a < dim; ++a) r[a] = w[a] - *s * e[a];
    *d2 = dotn(dim, r, r);
    return CT_PE_P_E;
}

ct_pe_type ct_pe_classify(int dim, const double *p, const double *e0, const double *e1)
{
    double s, d2;
    return pe_closest_full(dim, p, e0, e1, &s, &d2);
}

void ct_pe_closest(int dim, const double *p, const double *e0, const double *e1, double *s)
{
    double d2;
    pe_closest_full(dim, p, e0, e1, s, &d2);
}

double ct_pp_d2(int dim, const double *a, const double *b, double *g, double *H)
{
    double d[3];
    subn(dim, a, b, d);
    if (g)
        for (int i = 0; i < dim; ++i) {
            g[i] = 2.0 * d[i];
            g[dim + i] = -2.0 * d[i];
        }
    if (H) { /* 2 [I −I; −I I] */
        const int N = 2 * dim;
        memset(H, 0, sizeof(double) * (size_t)(N * N));
        for (int i = 0; i < dim; ++i) {
            H[i * N + i] = H[(dim + i) * N + dim + i] = 2.0;
            H[i * N + dim + i] = H[(dim + i) * N + i] = -2.0;
        }
    }
    return dotn(dim, d, d);
}

/* PP between stencil vertices ia and ib of an nfull-vertex stencil */
static double pp_sub(int dim, const double *a, const double *b, int ia, int ib, int nfull,
                     double *g, double *H)
{
    double gs[6], Hs[36];
    const int map[2] = {ia, ib};
    const double d2 = ct_pp_d2(dim, a, b, g ? gs : NULL, H ? Hs : NULL);
    scatter(dim, 2, map, nfull, gs, Hs, g, H);
    return d2;
}

/* point–line distance (the P_E type), x = (p, e0, e1): r = w − s e, w = p − e0, e = e1 − e0,
 * c = (1, s − 1, −s), ∂c/∂s = (0, 1, −1), ∂r/∂s = −e. Requires |e| > 0. */
static double point_line_d2(int dim, const double *p, const double *e0, const double *e1,
                            double *g, double *H)
{
    double w[3], e[3], r[3];
    subn(dim, p, e0, w);
    subn(dim, e1, e0, e);
    const double ee = dotn(dim, e, e), s = dotn(dim, w, e) / ee;
    for (int a = 0; a < dim; ++a) r[a] = w[a] - s * e[a];
    const double c[4] = {1.0, s - 1.0, -s, 0.0};
    const double D[2][4] = {{0.0, 1.0, -1.0, 0.0}, {0}};
    const double u[2][3] = {{-e[0], -e[1], dim == 3 ? -e[2] : 0.0}, {0}};
    const double R[3] = {sqrt(ee), 0.0, 0.0}; /* Cholesky factor of the 1x1 Gram matrix */
    /* literal dims let the compiler specialise the inlined loops */
    return dim == 2 ? envelope(3, 2, 1, r, c, D, u, R, g, H)
                    : envelope(3, 3, 1, r, c, D, u, R, g, H);
}

double ct_pe_d2(int dim, const double *p, const double *e0, const double *e1, ct_pe_type t,
                double *g, double *H)
{
    switch (t) {
    case CT_PE_P_E0: return pp_sub(dim, p, e0, 0, 1, 3, g, H);
    case CT_PE_P_E1: return pp_sub(dim, p, e1, 0, 2, 3, g, H);
    case CT_PE_P_E: {
        double e[3];
        subn(dim, e1, e0, e);
        if (dotn(dim, e, e) > 0.0) return point_line_d2(dim, p, e0, e1, g, H);
        return pp_sub(dim, p, e0, 0, 1, 3, g, H); /* zero-length edge: the line is a point */
    }
    }
    return ct_pe_d2(dim, p, e0, e1, ct_pe_classify(dim, p, e0, e1), g, H); /* invalid type */
}

/* ---- point–triangle ---- */

/* (b1, b2) of the point t_k + s (t_(k+1) − t_k) on edge k */
static void pt_edge_coords(int k, double s, double *b1, double *b2)
{
    switch (k) {
    case 0: *b1 = s, *b2 = 0.0; break;
    case 1: *b1 = 1.0 - s, *b2 = s; break;
    default: *b1 = 0.0, *b2 = 1.0 - s; break;
    }
}

/* Nearest point of the triangle's boundary: the nearest of its three edges (first wins ties). */
static ct_pt_type pt_boundary(const double *p, const double *const t[3], double *b1, double *b2,
                              double *d2)
{
    static const ct_pt_type vert[3] = {CT_PT_P_T0, CT_PT_P_T1, CT_PT_P_T2};
    static const ct_pt_type edge[3] = {CT_PT_P_E0, CT_PT_P_E1, CT_PT_P_E2};
    ct_pt_type best = CT_PT_P_T0;
    double bd = INFINITY, bs = 0.0;
    int bk = 0;
    for (int k = 0; k < 3; ++k) {
        double s, d;
        const ct_pe_type pe = pe_closest_full(3, p, t[k], t[(k + 1) % 3], &s, &d);
        if (d < bd) {
            bd = d, bs = s, bk = k;
            best = pe == CT_PE_P_E0 ? vert[k] : pe == CT_PE_P_E1 ? vert[(k + 1) % 3] : edge[k];
        }
    }
    pt_edge_coords(bk, bs, b1, b2);
    *d2 = bd;
    return best;
}

/* Classification with closest-point coordinates: P_T if p projects into the (non-degenerate)
 * triangle, otherwise the nearest boundary feature. The barycentric coordinates of the
 * projection use the Lagrange identity, b1 = ((w×e2)·n)/|n|², b2 = ((e1×w)·n)/|n|², with
 * n = e1×e2 computed directly (accurate for thin triangles). */
static ct_pt_type pt_closest_full(const double *p, const double *t0, const double *t1,
                                  const double *t2, double *b1, double *b2, double *d2)
{
    double e1[3], e2[3], w[3], n[3], nn, u, v;
    subn(3, t1, t0, e1);
    subn(3, t2, t0, e2);
    subn(3, p, t0, w);
    if (cross_coords(e1, e2, w, n, &nn, &u, &v) && u > 0.0 && v > 0.0 && u + v < nn) {
        const double wn = dot3(w, n);
        *b1 = u / nn, *b2 = v / nn;
        *d2 = wn * wn / nn;
        return CT_PT_P_T;
    }
    const double *const t[3] = {t0, t1, t2};
    return pt_boundary(p, t, b1, b2, d2);
}

ct_pt_type ct_pt_classify(const double *p, const double *t0, const double *t1, const double *t2)
{
    double b1, b2, d2;
    return pt_closest_full(p, t0, t1, t2, &b1, &b2, &d2);
}

void ct_pt_closest(const double *p, const double *t0, const double *t1, const double *t2,
                   double *b1, double *b2)
{
    double d2;
    pt_closest_full(p, t0, t1, t2, b1, b2, &d2);
}

/* point–plane distance, x = (p, t0, t1, t2): r = w − b1 e1 − b2 e2 at the projection, i.e. the
 * normal component ((w·n)/|n|²) n; c = (1, b1 + b2 − 1, −b1, −b2), ∂r/∂b_l = −e_l.
 * Returns a negative value (and nothing else) for a degenerate triangle. */
static double point_plane_d2(const double *p, const double *t0, const double *t1,
                             const double *t2, double *g, double *H)
{
    double e1[3], e2[3], w[3], n[3], q[3], r[3];
    subn(3, t1, t0, e1);
    subn(3, t2, t0, e2);
    subn(3, p, t0, w);
    cross3(e1, e2, n);
    const double nn = dot3(n, n), l1 = dot3(e1, e1), l2 = dot3(e2, e2);
    if (!(nn > PARALLEL_TOL * l1 * l2)) return -1.0;
    cross3(w, e2, q);
    const double b1 = dot3(q, n) / nn;
    cross3(e1, w, q);
    const double b2 = dot3(q, n) / nn;
    const double wn = dot3(w, n) / nn, e12 = dot3(e1, e2);
    for (int a = 0; a < 3; ++a) r[a] = wn * n[a];
    const double c[4] = {1.0, b1 + b2 - 1.0, -b1, -b2};
    const double D[2][4] = {{0.0, 1.0, -1.0, 0.0}, {0.0, 1.0, 0.0, -1.0}};
    const double u[2][3] = {{-e1[0], -e1[1], -e1[2]}, {-e2[0], -e2[1], -e2[2]}};
    /* Cholesky factor of the Gram matrix [l1, e12; e12, l2]; R22² = |n|²/l1 */
    const double R11 = sqrt(l1), R[3] = {R11, e12 / R11, sqrt(nn / l1)};
    return envelope(4, 3, 2, r, c, D, u, R, g, H);
}

double ct_pt_d2(const double *p, const double *t0, const double *t1, const double *t2,
                ct_pt_type t, double *g, double *H)
{
    const double *const tv[3] = {t0, t1, t2};
    switch (t) {
    case CT_PT_P_T0:
    case CT_PT_P_T1:
    case CT_PT_P_T2: {
        const int k = (int)t - (int)CT_PT_P_T0;
        return pp_sub(3, p, tv[k], 0, k + 1, 4, g, H);
    }
    case CT_PT_P_E0:
    case CT_PT_P_E1:
    case CT_PT_P_E2: {
        const int k = (int)t - (int)CT_PT_P_E0, k1 = (k + 1) % 3;
        double gs[9], Hs[81];
        const int map[3] = {0, k + 1, k1 + 1};
        const double d2 = ct_pe_d2(3, p, tv[k], tv[k1], CT_PE_P_E, g ? gs : NULL, H ? Hs : NULL);
        scatter(3, 3, map, 4, gs, Hs, g, H);
        return d2;
    }
    case CT_PT_P_T: {
        const double d2 = point_plane_d2(p, t0, t1, t2, g, H);
        if (d2 >= 0.0) return d2;
        /* degenerate triangle: no plane; use the nearest boundary feature */
        double b1, b2, db;
        return ct_pt_d2(p, t0, t1, t2, pt_boundary(p, tv, &b1, &b2, &db), g, H);
    }
    }
    return ct_pt_d2(p, t0, t1, t2, ct_pt_classify(p, t0, t1, t2), g, H); /* invalid type */
}

/* ---- edge–edge ---- */

/* Nearest pair on the boundary of the parameter square [0,1]²: the nearest of the four
 * point–edge problems a0–b, a1–b, b0–a, b1–a (first wins ties). */
static ct_ee_type ee_boundary(const double *a0, const double *a1, const double *b0,
                              const double *b1, double *s, double *r, double *d2)
{
    /* type by candidate and by point–edge type (P_E0, P_E1, P_E) */
    static const ct_ee_type map[4][3] = {{CT_EE_A0_B0, CT_EE_A0_B1, CT_EE_A0_B},
                                         {CT_EE_A1_B0, CT_EE_A1_B1, CT_EE_A1_B},
                                         {CT_EE_A0_B0, CT_EE_A1_B0, CT_EE_A_B0},
                                         {CT_EE_A0_B1, CT_EE_A1_B1, CT_EE_A_B1}};
    const double *const pt[4] = {a0, a1, b0, b1};
    ct_ee_type best = CT_EE_A0_B0;
    double bd = INFINITY;
    *s = *r = 0.0;
    for (int k = 0; k < 4; ++k) {
        double sk, d;
        const ct_pe_type pe = k < 2 ? pe_closest_full(3, pt[k], b0, b1, &sk, &d)
                                    : pe_closest_full(3, pt[k], a0, a1, &sk, &d);
        if (d < bd) {
            bd = d;
            best = map[k][pe];
            if (k < 2) *s = (double)k, *r = sk;
            else *s = sk, *r = (double)(k - 2);
        }
    }
    *d2 = bd;
    return best;
}

/* Classification with closest-point parameters. Lines a0 + s ea and b0 + r eb, w = a0 − b0,
 * n = ea × eb: the stationary point is s = ((eb×w)·n)/|n|², r = ((ea×w)·n)/|n|². */
static ct_ee_type ee_closest_full(const double *a0, const double *a1, const double *b0,
                                  const double *b1, double *s, double *r, double *d2)
{
    double ea[3], eb[3], w[3], n[3], nn, u, rn;
    subn(3, a1, a0, ea);
    subn(3, b1, b0, eb);
    subn(3, a0, b0, w);
    if (cross_coords(ea, eb, w, n, &nn, &u, &rn)) {
        const double sn = -u;
        if (sn > 0.0 && sn < nn && rn > 0.0 && rn < nn) {
            const double wn = dot3(w, n);
            *s = sn / nn, *r = rn / nn;
            *d2 = wn * wn / nn;
            return CT_EE_A_B;
        }
    }
    return ee_boundary(a0, a1, b0, b1, s, r, d2);
}

ct_ee_type ct_ee_classify(const double *a0, const double *a1, const double *b0, const double *b1)
{
    double s, r, d2;
    return ee_closest_full(a0, a1, b0, b1, &s, &r, &d2);
}

void ct_ee_closest(const double *a0, const double *a1, const double *b0, const double *b1,
                   double *s, double *r)
{
    double d2;
    ee_closest_full(a0, a1, b0, b1, s, r, &d2);
}

/* line–line distance, x = (a0, a1, b0, b1): residual a0 + s ea − b0 − r eb = ((w·n)/|n|²) n,
 * c = (1 − s, s, r − 1, −r), ∂res/∂s = ea, ∂res/∂r = −eb. Negative return: parallel lines. */
static double line_line_d2(const double *a0, const double *a1, const double *b0,
                           const double *b1, double *g, double *H)
{
    double ea[3], eb[3], w[3], n[3], q[3], res[3];
    subn(3, a1, a0, ea);
    subn(3, b1, b0, eb);
    subn(3, a0, b0, w);
    cross3(ea, eb, n);
    const double nn = dot3(n, n), la = dot3(ea, ea), lb = dot3(eb, eb);
    if (!(nn > PARALLEL_TOL * la * lb)) return -1.0;
    cross3(eb, w, q);
    const double s = dot3(q, n) / nn;
    cross3(ea, w, q);
    const double r = dot3(q, n) / nn;
    const double wn = dot3(w, n) / nn, eab = dot3(ea, eb);
    for (int a = 0; a < 3; ++a) res[a] = wn * n[a];
    const double c[4] = {1.0 - s, s, r - 1.0, -r};
    const double D[2][4] = {{-1.0, 1.0, 0.0, 0.0}, {0.0, 0.0, 1.0, -1.0}};
    const double u[2][3] = {{ea[0], ea[1], ea[2]}, {-eb[0], -eb[1], -eb[2]}};
    /* Cholesky factor of the Gram matrix [la, −eab; −eab, lb]; R22² = |n|²/la */
    const double R11 = sqrt(la), R[3] = {R11, -eab / R11, sqrt(nn / la)};
    return envelope(4, 3, 2, res, c, D, u, R, g, H);
}

double ct_ee_d2(const double *a0, const double *a1, const double *b0, const double *b1,
                ct_ee_type t, double *g, double *H)
{
    const double *const v[4] = {a0, a1, b0, b1};
    switch (t) {
    case CT_EE_A0_B0: return pp_sub(3, a0, b0, 0, 2, 4, g, H);
    case CT_EE_A0_B1: return pp_sub(3, a0, b1, 0, 3, 4, g, H);
    case CT_EE_A1_B0: return pp_sub(3, a1, b0, 1, 2, 4, g, H);
    case CT_EE_A1_B1: return pp_sub(3, a1, b1, 1, 3, 4, g, H);
    case CT_EE_A_B0:
    case CT_EE_A_B1:
    case CT_EE_A0_B:
    case CT_EE_A1_B: {
        /* (point, edge start, edge end) as stencil indices */
        static const int maps[4][3] = {{2, 0, 1}, {3, 0, 1}, {0, 2, 3}, {1, 2, 3}};
        const int *m = maps[(int)t - (int)CT_EE_A_B0];
        double gs[9], Hs[81];
        const double d2 =
            ct_pe_d2(3, v[m[0]], v[m[1]], v[m[2]], CT_PE_P_E, g ? gs : NULL, H ? Hs : NULL);
        scatter(3, 3, m, 4, gs, Hs, g, H);
        return d2;
    }
    case CT_EE_A_B: {
        const double d2 = line_line_d2(a0, a1, b0, b1, g, H);
        if (d2 >= 0.0) return d2;
        /* parallel edges: the line–line distance is not defined; use the end-point types */
        double s, r, db;
        return ct_ee_d2(a0, a1, b0, b1, ee_boundary(a0, a1, b0, b1, &s, &r, &db), g, H);
    }
    }
    return ct_ee_d2(a0, a1, b0, b1, ct_ee_classify(a0, a1, b0, b1), g, H); /* invalid type */
}

/* ---- edge–edge mollifier ---- */

double ct_ee_mollifier_eps(const double *a0r, const double *a1r, const double *b0r,
                           const double *b1r)
{
    double ea[3], eb[3];
    subn(3, a1r, a0r, ea);
    subn(3, b1r, b0r, eb);
    return 1e-3 * dot3(ea, ea) * dot3(eb, eb);
}

/* c = |n|², n = ea × eb. ∂c/∂ea = 2 eb × n, ∂c/∂eb = 2 n × ea (cross-product form: accurate for
 * nearly parallel edges). Second derivatives from c = |ea|²|eb|² − (ea·eb)²:
 *   ∂²c/∂ea² = 2|eb|² I − 2 eb ebᵀ,  ∂²c/∂eb² = 2|ea|² I − 2 ea eaᵀ,
 *   ∂²c/∂ea∂eb = 4 ea ebᵀ − 2 eb eaᵀ − 2 (ea·eb) I,
 * mapped to (a0, a1, b0, b1) with ∂ea/∂a0 = −I, ∂ea/∂a1 = I (same for b). */
double ct_ee_cross2_blocks(const double *a0, const double *a1, const double *b0, const double *b1,
                           double *g, double B[2][2][9])
{
    const double c = ee_cross2_grad(a0, a1, b0, b1, g);
    double ea[3], eb[3];
    subn(3, a1, a0, ea);
    subn(3, b1, b0, eb);
    const double la = dot3(ea, ea), lb = dot3(eb, eb), eab = dot3(ea, eb);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            const double d = i == j ? 1.0 : 0.0;
            B[0][0][3 * i + j] = 2.0 * lb * d - 2.0 * eb[i] * eb[j];
            B[1][1][3 * i + j] = 2.0 * la * d - 2.0 * ea[i] * ea[j];
            B[0][1][3 * i + j] = 4.0 * ea[i] * eb[j] - 2.0 * eb[i] * ea[j] - 2.0 * eab * d;
            B[1][0][3 * j + i] = B[0][1][3 * i + j];
        }
    return c;
}

double ct_ee_cross2(const double *a0, const double *a1, const double *b0, const double *b1,
                    double *g, double *H)
{
    if (!H) return ee_cross2_grad(a0, a1, b0, b1, g);
    double B[2][2][9];
    const double c = ct_ee_cross2_blocks(a0, a1, b0, b1, g, B);
    for (int vi = 0; vi < 4; ++vi)
        for (int vj = 0; vj < 4; ++vj) {
            const double sg = ((vi & 1) ? 1.0 : -1.0) * ((vj & 1) ? 1.0 : -1.0);
            const double *blk = B[vi / 2][vj / 2];
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) H[(3 * vi + i) * 12 + 3 * vj + j] = sg * blk[3 * i + j];
        }
    return c;
}

double ct_ee_mollifier(double c, double eps, double *dm, double *d2m) { return ee_mollifier_of(c, eps, dm, d2m); }

/* ---- classification and distance in one pass (for the collision-set construction) ----
 * Each returns the type of ct_xx_classify and stores in *d2 the value ct_xx_d2 returns for that
 * type, bitwise: the same operations on the same operands, so the set built from them is the one
 * built from ct_xx_classify + ct_xx_d2. They repeat the classification code above (pe_closest_full,
 * pt_closest_full, ee_closest_full with pt_boundary / ee_boundary), written out for speed: a change
 * there must be mirrored here (test_classify_d2_bitwise in tests/check_contact.c compares them).
 *  - Vertex and edge types: the closest-feature distances the classification computes,
 *    |p − e0|², |p − e1|² or |w − s e|² with s = (w·e)/|e|², which are pp_sub's and
 *    point_line_d2's values (ct_pe_d2's zero-length fallback is never taken: P_E implies
 *    0 < w·e < |e|²). The EE end-point pairs compute b − a where ct_ee_d2 computes a − b: the
 *    differences round to opposite values and the squares agree. Edge vectors and their squared
 *    lengths are shared between sub-problems; dotn and dot3 agree on sums of squares (0 + x = x).
 *  - Interior types: r = ((w·n)/|n|²) n and |r|² from the classification's w and n, as
 *    point_plane_d2 / line_line_d2 compute them (they pass the same PARALLEL_TOL test, so they do
 *    not fall back).
 * pe_closest_d2 forms all three candidate values and selects one (a zero-length edge gives
 * s = ±inf or NaN in an unused candidate; no floating-point traps are enabled). */

/* dotn(3, a, b) written out (the same operations, from 0.0) */
static inline double dotn3(const double *a, const double *b)
{
    double s = 0.0;
    s += a[0] * b[0];
    s += a[1] * b[1];
    s += a[2] * b[2];
    return s;
}

/* pe_closest_full's type and d² with e = e1 − e0 and ee = |e|² given (the same operations; the
 * three candidate values are all formed and the classified one selected). */
static inline ct_pe_type pe_closest_d2(int dim, const double *p, const double *e0, const double *e1,
                                       const double *e, double ee, double *d2)
{
    double we, dw, dq, dr;
    if (dim == 3) {
        const double w[3] = {p[0] - e0[0], p[1] - e0[1], p[2] - e0[2]};
        const double q[3] = {p[0] - e1[0], p[1] - e1[1], p[2] - e1[2]};
        we = dotn3(w, e);
        const double s = we / ee, r[3] = {w[0] - s * e[0], w[1] - s * e[1], w[2] - s * e[2]};
        dw = dotn3(w, w), dq = dotn3(q, q), dr = dotn3(r, r);
    } else {
        double w[3], q[3], r[3];
        subn(dim, p, e0, w);
        subn(dim, p, e1, q);
        we = dotn(dim, w, e);
        const double s = we / ee;
        for (int a = 0; a < dim; ++a) r[a] = w[a] - s * e[a];
        dw = dotn(dim, w, w), dq = dotn(dim, q, q), dr = dotn(dim, r, r);
    }
    const int t0 = !(we > 0.0), t1 = we >= ee;
    *d2 = t0 ? dw : t1 ? dq : dr;
    return t0 ? CT_PE_P_E0 : t1 ? CT_PE_P_E1 : CT_PE_P_E;
}

ct_pe_type ct_pe_classify_d2(int dim, const double *p, const double *e0, const double *e1, double *d2)
{
    double e[3];
    subn(dim, e1, e0, e);
    const double ee = dotn(dim, e, e);
    return dim == 2 ? pe_closest_d2(2, p, e0, e1, e, ee, d2) : pe_closest_d2(3, p, e0, e1, e, ee, d2);
}

ct_pt_type ct_pt_classify_d2(const double *p, const double *t0, const double *t1, const double *t2,
                             double *d2)
{
    const double e1[3] = {t1[0] - t0[0], t1[1] - t0[1], t1[2] - t0[2]};
    const double e2[3] = {t2[0] - t0[0], t2[1] - t0[1], t2[2] - t0[2]};
    const double w[3] = {p[0] - t0[0], p[1] - t0[1], p[2] - t0[2]};
    double n[3], nn, u, v;
    if (cross_coords(e1, e2, w, n, &nn, &u, &v) && u > 0.0 && v > 0.0 && u + v < nn) {
        const double wn = dot3(w, n) / nn; /* point_plane_d2's residual and |r|² */
        const double r[3] = {wn * n[0], wn * n[1], wn * n[2]};
        *d2 = dotn3(r, r);
        return CT_PT_P_T;
    }
    /* pt_boundary: the nearest of the edges t0–t1, t1–t2, t2–t0 (first wins ties) */
    static const ct_pt_type vert[3] = {CT_PT_P_T0, CT_PT_P_T1, CT_PT_P_T2};
    static const ct_pt_type edge[3] = {CT_PT_P_E0, CT_PT_P_E1, CT_PT_P_E2};
    const double e12[3] = {t2[0] - t1[0], t2[1] - t1[1], t2[2] - t1[2]};
    const double e20[3] = {t0[0] - t2[0], t0[1] - t2[1], t0[2] - t2[2]};
    double d[3];
    ct_pe_type pe[3];
    pe[0] = pe_closest_d2(3, p, t0, t1, e1, dotn3(e1, e1), &d[0]);
    pe[1] = pe_closest_d2(3, p, t1, t2, e12, dotn3(e12, e12), &d[1]);
    pe[2] = pe_closest_d2(3, p, t2, t0, e20, dotn3(e20, e20), &d[2]);
    ct_pt_type best = CT_PT_P_T0;
    double bd = INFINITY;
    for (int k = 0; k < 3; ++k)
        if (d[k] < bd)
            bd = d[k], best = pe[k] == CT_PE_P_E0 ? vert[k] : pe[k] == CT_PE_P_E1 ? vert[(k + 1) % 3] : edge[k];
    *d2 = bd;
    return best;
}

/* ee_boundary's point–edge problems a0–b, a1–b, b0–a, b1–a, sharing the edge vectors and their
 * squared lengths (dotn of a sum of squares is dot3: the terms are >= 0); each is
 * ct_pe_classify_d2 of that point and edge */
static inline void ee_point_edges(const double *a0, const double *a1, const double *b0, const double *b1,
                                  const double *ea, const double *eb, ct_pe_type t[4], double d[4])
{
    const double la = dot3(ea, ea), lb = dot3(eb, eb);
    t[0] = pe_closest_d2(3, a0, b0, b1, eb, lb, &d[0]);
    t[1] = pe_closest_d2(3, a1, b0, b1, eb, lb, &d[1]);
    t[2] = pe_closest_d2(3, b0, a0, a1, ea, la, &d[2]);
    t[3] = pe_closest_d2(3, b1, a0, a1, ea, la, &d[3]);
}

ct_ee_type ct_ee_classify_d2(const double *a0, const double *a1, const double *b0, const double *b1,
                             double *d2, double *c2, double *pe)
{
    const double ea[3] = {a1[0] - a0[0], a1[1] - a0[1], a1[2] - a0[2]};
    const double eb[3] = {b1[0] - b0[0], b1[1] - b0[1], b1[2] - b0[2]};
    const double w[3] = {a0[0] - b0[0], a0[1] - b0[1], a0[2] - b0[2]};
    double n[3], nn, u, rn, d[4];
    ct_pe_type t[4];
    const int skew = cross_coords(ea, eb, w, n, &nn, &u, &rn);
    if (c2) *c2 = nn; /* = ct_ee_cross2 (same operations) */
    if (pe) {
        ee_point_edges(a0, a1, b0, b1, ea, eb, t, d);
        memcpy(pe, d, sizeof d);
    }
    if (skew && -u > 0.0 && -u < nn && rn > 0.0 && rn < nn) {
        const double wn = dot3(w, n) / nn; /* line_line_d2's residual and |r|² */
        const double r[3] = {wn * n[0], wn * n[1], wn * n[2]};
        *d2 = dotn3(r, r);
        return CT_EE_A_B;
    }
    /* ee_boundary: the nearest of the four (first wins ties) */
    static const ct_ee_type map[4][3] = {{CT_EE_A0_B0, CT_EE_A0_B1, CT_EE_A0_B},
                                         {CT_EE_A1_B0, CT_EE_A1_B1, CT_EE_A1_B},
                                         {CT_EE_A0_B0, CT_EE_A1_B0, CT_EE_A_B0},
                                         {CT_EE_A0_B1, CT_EE_A1_B1, CT_EE_A_B1}};
    if (!pe) ee_point_edges(a0, a1, b0, b1, ea, eb, t, d);
    ct_ee_type best = CT_EE_A0_B0;
    double bd = INFINITY;
    for (int k = 0; k < 4; ++k)
        if (d[k] < bd) bd = d[k], best = map[k][t[k]];
    *d2 = bd;
    return best;
}
