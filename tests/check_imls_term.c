/* check_imls_term.c — one IMLS contact term w κ b(ψ) over its vertex stencil (ct_imls_term.h).
 *
 * Expected values, derived here independently of core/contact/imls_term.c:
 * - the gradient: central differences of the energy over every stencil coordinate (h = 1e-6);
 *   the exact Hessian: central differences of the analytic gradient (h = 1e-5);
 * - the exact Hessian against c2 ∇ψ∇ψᵀ + c1 ∇²ψ with ∇ψ, ∇²ψ composed here from ct_imls and
 *   ct_vnormal_chain; GN: H_GN v = c2 (∇ψᵀv) ∇ψ for v vanishing on the query block (the exact
 *   Hessian's rank-1 part, = H_exact v − c1 ∇²ψ v), its query block − c2 g_q g_qᵀ = [c1 ∇²ₓₓψ]⁺;
 *   GN and PROJECT PSD (LAPACK eigenvalues ≥ −1e-12 ‖H‖) and exactly symmetric;
 * - a flat sampled plane (in-plane jitter): ψ = h, E = w κ b(h), ∇_q E = w κ b'(h) n, the GN query
 *   block equal to the exact one (∇²ₓₓψ = 0);
 * - translation invariance: the gradient blocks sum to 0 over the stencil;
 * - the states: no support, ψ ≥ d̂ (OFF, E = 0, n = 0), ψ ≤ 0 (INFEASIBLE, E = +∞).
 */
#include "ct_test_util.h"

#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_barrier.h"
#include "contactlab/ct_imls.h"
#include "contactlab/ct_imls_term.h"
#include "contactlab/ct_mesh.h"
#include "contactlab/ct_psd.h"
#include "contactlab/ct_vertex_normals.h"

#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

/* ---- bodies (as in check_vertex_normals): a box surface, optionally blown up to a sphere ---- */

typedef struct body {
    ct_mesh m;
    ct_surface s;
    ct_vnormal_topo t;
    double *x;
    int dim;
} body;

static void body_make(body *B, int dim, const double *o, const double *sz, const int *cells, int round,
                      double jitter)
{
    ct_mesh_init(&B->m);
    B->dim = dim;
    if (dim == 3) ck_assert_int_eq(ct_mesh_box(&B->m, o, sz, cells), CT_OK);
    else ck_assert_int_eq(ct_mesh_rect(&B->m, o, sz, cells[0], cells[1]), CT_OK);
    ck_assert_int_eq(ct_surface_build(&B->s, &B->m, NULL), CT_OK);
    ck_assert_int_eq(ct_vnormal_topo_from_surface(&B->t, &B->s), CT_OK);
    B->x = malloc((size_t)B->m.nv * dim * sizeof *B->x);
    memcpy(B->x, B->m.X, (size_t)B->m.nv * dim * sizeof *B->x);
    const double h = sz[0] / cells[0];
    for (int i = 0; i < B->s.nbv; ++i) {
        double *p = B->x + dim * B->s.bverts[i];
        if (round) {
            const double r = ct_test_norm(p, (size_t)dim);
            for (int a = 0; a < dim; ++a) p[a] /= r;
        }
        for (int a = 0; a < dim; ++a) p[a] += jitter * h * ct_test_xs_pm1(&rng);
    }
}

static void body_free(body *B)
{
    free(B->x);
    ct_vnormal_topo_free(&B->t);
    ct_surface_free(&B->s);
    ct_mesh_free(&B->m);
}

static int interior_vertex(const body *B)
{
    for (int v = 0; v < B->m.nv; ++v)
        if (B->s.vert_area[v] == 0.0) return v;
    ck_abort_msg("no interior vertex");
    return -1;
}

static int gather(const body *B, const double *y, double R, int *s, int cap)
{
    const int d = B->dim;
    int k = 0;
    for (int i = 0; i < B->s.nbv && k < cap; ++i) {
        const int v = B->s.bverts[i];
        if (ct_test_diffnorm(B->x + d * v, y, (size_t)d) < R) s[k++] = v;
    }
    return k;
}

/* ---- one term with its buffers ---- */

typedef struct term {
    ct_imls_term_params prm;
    const ct_vnormal_topo *t;
    int q, k, cap, d;
    const int *samples;
    double w;
    int *verts;
    double *g, *H, *work;
    size_t nw;
    ct_imls_term_result res;
} term;

static void term_init(term *T, const ct_vnormal_topo *t, double R, double dhat, double kappa, int q, double w,
                      int k, const int *samples)
{
    T->d = t->dim;
    ct_imls_term_params_default(&T->prm, t->dim, R, dhat, kappa);
    T->t = t, T->q = q, T->k = k, T->samples = samples, T->w = w;
    T->cap = ct_imls_term_stencil_cap(t, k);
    const size_t N = (size_t)T->cap * T->d;
    T->verts = malloc((size_t)T->cap * sizeof *T->verts);
    T->g = malloc(N * sizeof *T->g);
    T->H = malloc(N * N * sizeof *T->H);
    T->nw = ct_imls_term_work_size(t, k, T->cap, CT_IMLS_HESSIAN, CT_IMLS_HESS_PROJECT);
    T->work = malloc(T->nw * sizeof *T->work);
}

static void term_free(term *T) { free(T->verts), free(T->g), free(T->H), free(T->work); }

static ct_status term_eval(term *T, const double *x, ct_imls_mode what, ct_imls_hess_mode mode)
{
    T->prm.hess = mode;
    return ct_imls_term_eval(&T->prm, T->t, x, T->q, T->w, T->k, T->samples, what, T->work, T->nw, &T->res,
                             T->verts, T->cap, T->g, T->H);
}

/* Central differences over the stencil verts (n vertices) of the term's energy (step 1e-6) into gfd and of
 * its gradient (1e-5) into Hfd (row-major), x restored afterwards. */
static void term_fd(term *T, double *x, int n, const int *verts, double *gfd, double *Hfd)
{
    const int d = T->d, NX = d * n;
    const double h1 = 1e-6, h2 = 1e-5;
    for (int j = 0; j < NX; ++j) {
        double *xj = x + d * verts[j / d] + j % d;
        const double x0 = *xj;
        *xj = x0 + h1;
        term_eval(T, x, CT_IMLS_VALUE, CT_IMLS_HESS_EXACT);
        const double ep = T->res.energy;
        *xj = x0 - h1;
        term_eval(T, x, CT_IMLS_VALUE, CT_IMLS_HESS_EXACT);
        gfd[j] = (ep - T->res.energy) / (2 * h1);
        *xj = x0 + h2;
        ck_assert_int_eq(term_eval(T, x, CT_IMLS_GRADIENT, CT_IMLS_HESS_EXACT), CT_OK);
        ck_assert_int_eq(T->res.n, n);
        for (int i = 0; i < NX; ++i) Hfd[(size_t)i * NX + j] = T->g[i];
        *xj = x0 - h2;
        ck_assert_int_eq(term_eval(T, x, CT_IMLS_GRADIENT, CT_IMLS_HESS_EXACT), CT_OK);
        for (int i = 0; i < NX; ++i) Hfd[(size_t)i * NX + j] = (Hfd[(size_t)i * NX + j] - T->g[i]) / (2 * h2);
        *xj = x0;
    }
}

/* ∇ψ and ∇²ψ over the stencil, composed here from ct_imls and the chain (independent of the term) */
static void psi_derivs(const term *T, const double *x, int n, const int *verts, double *gX, double *HX)
{
    const int d = T->d, k = T->k, p = ct_imls_nvars(d, k);
    double *pos = malloc((size_t)k * d * sizeof *pos), *nrm = malloc((size_t)k * d * sizeof *nrm);
    double *gz = malloc((size_t)p * sizeof *gz), *Hz = malloc((size_t)p * p * sizeof *Hz);
    const size_t nwi = ct_imls_work_size(d, k, CT_IMLS_HESSIAN), nwc = ct_vnormal_chain_work_size(T->t, k, n);
    double *wi = malloc(nwi * sizeof *wi), *wc = malloc(nwc * sizeof *wc);
    for (int i = 0; i < k; ++i) {
        memcpy(pos + d * i, x + d * T->samples[i], (size_t)d * sizeof *x);
        ck_assert_int_eq(ct_vnormal_eval(T->t, x, T->samples[i], nrm + d * i, NULL, NULL, NULL), CT_OK);
    }
    ct_imls_result r;
    ck_assert_int_eq(ct_imls_eval(&T->prm.field, k, x + d * T->q, pos, nrm, CT_IMLS_HESSIAN, wi, nwi, &r, gz, Hz),
                     CT_OK);
    ck_assert_int_eq(ct_vnormal_chain(T->t, x, T->q, k, T->samples, n, verts, gz, Hz, wc, nwc, gX, HX), CT_OK);
    free(pos), free(nrm), free(gz), free(Hz), free(wi), free(wc);
}

static double min_eig(const double *H, int N)
{
    double *A = malloc((size_t)N * N * sizeof *A), *w = malloc((size_t)N * sizeof *w);
    memcpy(A, H, (size_t)N * N * sizeof *A);
    ck_assert_int_eq(LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'L', N, A, N, w), 0);
    const double m = w[0];
    free(A), free(w);
    return m;
}

static double asym(const double *H, int N)
{
    double a = 0.0;
    for (int i = 0; i < N; ++i)
        for (int j = 0; j < N; ++j) a = fmax(a, fabs(H[(size_t)i * N + j] - H[(size_t)j * N + i]));
    return a;
}

/* Everything on one active term: FD of the energy and the gradient, the modes' identities.
 * Returns the worst FD relative error. */
static double check_term(term *T, double *x, const char *what)
{
    const int d = T->d;
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
    ck_assert_int_eq(T->res.state, CT_IMLS_TERM_ACTIVE);
    const int n = T->res.n, NX = d * n;
    const double E = T->res.energy, psi = T->res.psi, c1 = T->res.c1, c2 = T->res.c2;
    const double amin = T->res.field.a_min, amax = T->res.field.a_max;
    int *verts = malloc((size_t)n * sizeof *verts);
    memcpy(verts, T->verts, (size_t)n * sizeof *verts);
    double *g = malloc((size_t)NX * sizeof *g), *H = malloc((size_t)NX * NX * sizeof *H);
    memcpy(g, T->g, (size_t)NX * sizeof *g);
    memcpy(H, T->H, (size_t)NX * NX * sizeof *H);
    /* value-only and gradient-only calls agree */
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_VALUE, CT_IMLS_HESS_EXACT), CT_OK);
    ck_assert(T->res.energy == E && T->res.n == 0);
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_GRADIENT, CT_IMLS_HESS_EXACT), CT_OK);
    ck_assert(ct_test_diffnorm(T->g, g, (size_t)NX) == 0.0);

    double *gfd = malloc((size_t)NX * sizeof *gfd), *Hfd = malloc((size_t)NX * NX * sizeof *Hfd);
    term_fd(T, x, n, verts, gfd, Hfd);
    const double eg = ct_test_diffnorm(g, gfd, (size_t)NX) / ct_test_norm(gfd, (size_t)NX);
    const double eh = ct_test_diffnorm(H, Hfd, (size_t)NX * NX) / ct_test_norm(Hfd, (size_t)NX * NX);
    /* translation */
    double tr = 0.0;
    for (int a = 0; a < d; ++a) {
        double s = 0.0;
        for (int u = 0; u < n; ++u) s += g[d * u + a];
        tr = fmax(tr, fabs(s));
    }
    tr /= ct_test_norm(g, (size_t)NX);
    /* the exact Hessian against c2 ∇ψ∇ψᵀ + c1 ∇²ψ composed here */
    double *gp = malloc((size_t)NX * sizeof *gp), *Hp = malloc((size_t)NX * NX * sizeof *Hp);
    psi_derivs(T, x, n, verts, gp, Hp);
    double *ref = malloc((size_t)NX * NX * sizeof *ref);
    for (int i = 0; i < NX; ++i)
        for (int j = 0; j < NX; ++j) ref[(size_t)i * NX + j] = c2 * gp[i] * gp[j] + c1 * Hp[(size_t)i * NX + j];
    const double eref = ct_test_diffnorm(H, ref, (size_t)NX * NX) / ct_test_norm(ref, (size_t)NX * NX);
    const double Hn = ct_test_norm(H, (size_t)NX * NX);
    const double mexact = min_eig(H, NX);

    /* GN */
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_HESSIAN, CT_IMLS_HESS_GN), CT_OK);
    ck_assert(ct_test_diffnorm(T->g, g, (size_t)NX) == 0.0);
    double *HG = malloc((size_t)NX * NX * sizeof *HG);
    memcpy(HG, T->H, (size_t)NX * NX * sizeof *HG);
    const double HGn = ct_test_norm(HG, (size_t)NX * NX), mgn = min_eig(HG, NX);
    /* v = ∇ψ with the query block (slot 0) zeroed: H_GN v = c2 (gᵀv) g = (H_exact − c1 ∇²ψ) v */
    double *v = malloc((size_t)NX * sizeof *v), *a1 = malloc((size_t)NX * sizeof *a1),
           *a2 = malloc((size_t)NX * sizeof *a2);
    double gv = 0.0;
    for (int i = 0; i < NX; ++i) v[i] = i < d ? 0.0 : gp[i], gv += gp[i] * v[i];
    for (int i = 0; i < NX; ++i) {
        double s1 = 0.0, s2 = 0.0;
        for (int j = 0; j < NX; ++j) {
            s1 += HG[(size_t)i * NX + j] * v[j];
            s2 += (H[(size_t)i * NX + j] - c1 * Hp[(size_t)i * NX + j]) * v[j];
        }
        a1[i] = s1, a2[i] = s2;
    }
    const double eact = ct_test_diffnorm(a1, a2, (size_t)NX) / ct_test_norm(a2, (size_t)NX);
    double eact2 = 0.0;
    for (int i = 0; i < NX; ++i) eact2 = fmax(eact2, fabs(a1[i] - c2 * gv * gp[i]));
    eact2 /= fabs(c2 * gv) * ct_test_norm(gp, (size_t)NX);
    /* the query block: HG_qq − c2 g_q g_qᵀ = [c1 ∇²ψ_qq]⁺ (q is in no ring here) */
    double A[9], lam[3], V[9], P[9];
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) A[i + d * j] = c1 * Hp[(size_t)i * NX + j];
    ct_psd_jacobi_eig(d, A, lam, V);
    double eq = 0.0, Pn = 0.0;
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) {
            P[i + d * j] = 0.0;
            for (int m = 0; m < d; ++m) P[i + d * j] += fmax(lam[m], 0.0) * V[i + d * m] * V[j + d * m];
            eq = fmax(eq, fabs(HG[(size_t)i * NX + j] - c2 * gp[i] * gp[j] - P[i + d * j]));
            Pn = fmax(Pn, fabs(c2 * gp[i] * gp[j]));
        }
    eq /= Pn;
    /* the GN matrix outside the query block is c2 g gᵀ exactly (up to rounding) */
    double eoff = 0.0;
    for (int i = 0; i < NX; ++i)
        for (int j = 0; j < NX; ++j)
            if (i >= d || j >= d) eoff = fmax(eoff, fabs(HG[(size_t)i * NX + j] - c2 * gp[i] * gp[j]));
    eoff /= HGn;

    /* PROJECT */
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_HESSIAN, CT_IMLS_HESS_PROJECT), CT_OK);
    const double mpr = min_eig(T->H, NX), HPn = ct_test_norm(T->H, (size_t)NX * NX);
    const double dproj = ct_test_diffnorm(T->H, H, (size_t)NX * NX) / Hn; /* how much was removed */
    /* against the reference projection (ct_psd_project: its own LAPACKE driver, positive side) */
    double *Hr = malloc((size_t)NX * NX * sizeof *Hr);
    memcpy(Hr, H, (size_t)NX * NX * sizeof *Hr);
    ck_assert_int_eq(ct_psd_project(Hr, NX), CT_OK);
    const double epr = ct_test_diffnorm(T->H, Hr, (size_t)NX * NX) / ct_test_norm(Hr, (size_t)NX * NX);
    free(Hr);
    const double aspr = asym(T->H, NX), asgn = asym(HG, NX), asex = asym(H, NX);

    printf("%s: k = %d (support %d), stencil %d vertices (%d dofs), psi = %.4f (dhat %.2f), E = %.4e, "
           "robust weights %.3f..%.3f\n"
           "  FD: gradient rel err %.2e, exact Hessian rel err %.2e; translation %.1e; exact vs c2 gg' + c1 H_psi %.1e\n"
           "  exact: min eig %.3e (|H| %.3e); GN: min eig %.3e (|H| %.3e), action on g (query block 0) vs exact "
           "rank-1 part %.1e / vs c2 (g'v) g %.1e, query block vs [c1 H_xx]+ %.1e, off-block vs c2 gg' %.1e; "
           "PROJECT: min eig %.3e (|H| %.3e), |H_proj - H|/|H| %.3f, vs ct_psd_project %.1e; asym %.0e %.0e %.0e\n",
           what, T->k, T->res.field.n_support, n, NX, psi, T->prm.dhat, E, amin, amax, eg, eh, tr, eref, mexact, Hn,
           mgn, HGn, eact, eact2, eq, eoff, mpr, HPn, dproj, epr, asex, asgn, aspr);
    ck_assert(eg < 1e-6 && eh < 1e-6);
    ck_assert(tr < 1e-12);
    ck_assert(eref < 1e-12);
    ck_assert(asex == 0.0 && asgn == 0.0 && aspr == 0.0);
    ck_assert(mgn >= -1e-12 * HGn);
    ck_assert(mpr >= -1e-12 * HPn);
    ck_assert(epr < 1e-12);
    ck_assert(eact < 1e-10 && eact2 < 1e-12 && eq < 1e-12 && eoff < 1e-14);
    free(verts), free(g), free(H), free(gfd), free(Hfd), free(gp), free(Hp), free(ref), free(HG), free(v), free(a1),
        free(a2);
    return fmax(eg, eh);
}

/* Put query vertex q about gap outside the surface vertex `anchor` of the unit sphere / circle (radially,
 * jittered by ±0.02) and gather its samples within R (at most 128); returns their number. */
static int place_query(body *B, int q, int anchor, double gap, double R, int *samples)
{
    const int dim = B->t.dim;
    const double r = ct_test_norm(B->x + dim * anchor, (size_t)dim);
    for (int a = 0; a < dim; ++a) B->x[dim * q + a] = B->x[dim * anchor + a] * (1.0 + gap / r) + 0.02 * ct_test_xs_pm1(&rng);
    return gather(B, B->x + dim * q, R, samples, 128);
}

/* a query near a jittered sphere (3D) / circle (2D) of radius 1, at gap ≈ gap along an anchor */
static void curved_case(int dim, int cells, double R, double gap, double dhat, int trials, double *worst,
                        double *wmin)
{
    body B;
    const double o[3] = {-1, -1, -1}, sz[3] = {2, 2, 2};
    const int c[3] = {cells, cells, cells};
    body_make(&B, dim, o, sz, c, 1, 0.15);
    const int q = interior_vertex(&B);
    int samples[128];
    for (int trial = 0; trial < trials; ++trial) {
        const int k = place_query(&B, q, B.s.bverts[(7 * trial + 3) % B.s.nbv], gap, R, samples);
        term T;
        term_init(&T, &B.t, R, dhat, 1e4, q, 0.05 + 0.01 * trial, k, samples);
        ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_VALUE, CT_IMLS_HESS_EXACT), CT_OK);
        char what[96];
        snprintf(what, sizeof what, "%dD curved, R = %.2f, trial %d", dim, R, trial);
        if (T.res.state != CT_IMLS_TERM_ACTIVE) {
            printf("%s: psi = %.4f not active, skipped\n", what, T.res.psi);
            term_free(&T);
            continue;
        }
        *worst = fmax(*worst, check_term(&T, B.x, what));
        *wmin = fmin(*wmin, T.res.field.a_min);
        term_free(&T);
    }
    body_free(&B);
}

START_TEST(test_curved_3d)
{
    rng = 0x9e3779b97f4a7c15ull + 1u;
    double worst = 0.0, wmin = 1.0;
    curved_case(3, 4, 0.9, 0.15, 0.3, 3, &worst, &wmin);
    printf("3D curved: worst FD rel err %.2e, smallest robust weight %.3f\n", worst, wmin);
    ck_assert(worst > 0.0 && worst < 1e-6);
    ck_assert(wmin < 0.9);
}
END_TEST

START_TEST(test_curved_2d)
{
    rng = 0x9e3779b97f4a7c15ull + 2u;
    double worst = 0.0, wmin = 1.0;
    curved_case(2, 8, 0.55, 0.08, 0.2, 4, &worst, &wmin);
    printf("2D curved: worst FD rel err %.2e, smallest robust weight %.3f\n", worst, wmin);
    ck_assert(worst > 0.0 && worst < 1e-6);
    ck_assert(wmin < 0.9);
}
END_TEST

/* ---- the Hessian from the factored ∇²_z ψ and cached normals against the dense chain ---- */

static double adh_law(const void *ctx, double psi, double *d1, double *d2);

/* max |H_cached − H_dense| / max |H_dense| (and the same for the gradients) over trials near a jittered
 * sphere / circle: with the normals' derivatives cached the term maps the factors of ∇²_z ψ to the
 * stencil (hess_factored), without it the dense ∇²_z ψ through ct_vnormal_chain; the two are the same
 * matrix in exact arithmetic. */
static double factored_case(int dim, int cells, double R, double gap, int iters, int law, ct_imls_hess_mode mode,
                            int trials)
{
    body B;
    const double o[3] = {-1, -1, -1}, sz[3] = {2, 2, 2};
    const int c[3] = {cells, cells, cells};
    body_make(&B, dim, o, sz, c, 1, 0.15);
    const int q = interior_vertex(&B);
    int samples[128], done = 0;
    double worst = 0.0;
    const ct_adhesion_law L = ct_adhesion_law_make(CT_ADH_DISTANCE, 2.0 * gap, 4.0 * gap, 5e3);
    for (int trial = 0; trial < trials; ++trial) {
        const int k = place_query(&B, q, B.s.bverts[(5 * trial + 1) % B.s.nbv], gap, R, samples);
        term T;
        term_init(&T, &B.t, R, 2.0 * gap, 1e4, q, 0.05, k, samples);
        T.prm.field.iters = iters;
        if (law) T.prm.extra = adh_law, T.prm.extra_ctx = &L, T.prm.extra_reach = 4.0 * gap;
        ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, mode), CT_OK);
        if (T.res.state != CT_IMLS_TERM_ACTIVE || T.res.chi < 1.0) {
            term_free(&T);
            continue;
        }
        const int N = dim * T.res.n;
        double *H0 = malloc((size_t)N * N * sizeof *H0), *g0 = malloc((size_t)N * sizeof *g0);
        memcpy(H0, T.H, (size_t)N * N * sizeof *H0);
        memcpy(g0, T.g, (size_t)N * sizeof *g0);
        ct_vnormal_cache nc;
        ct_vnormal_cache_init(&nc);
        ck_assert_int_eq(ct_vnormal_cache_fill(&nc, &B.t, B.x, k, samples, 2, 1), CT_OK);
        T.prm.normals = &nc;
        ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, mode), CT_OK);
        ck_assert_int_eq(dim * T.res.n, N);
        double hm = 0.0, hd = 0.0, gm = 0.0, gd = 0.0;
        for (int i = 0; i < N * N; ++i) hm = fmax(hm, fabs(H0[i])), hd = fmax(hd, fabs(T.H[i] - H0[i]));
        for (int i = 0; i < N; ++i) gm = fmax(gm, fabs(g0[i])), gd = fmax(gd, fabs(T.g[i] - g0[i]));
        ck_assert(asym(T.H, N) == 0.0);
        worst = fmax(worst, fmax(hd / hm, gd / gm));
        ++done;
        ct_vnormal_cache_free(&nc);
        free(H0), free(g0);
        term_free(&T);
    }
    body_free(&B);
    ck_assert_int_ge(done, 1);
    return worst;
}

START_TEST(test_factored)
{
    rng = 0x9e3779b97f4a7c15ull + 7u;
    double worst = 0.0;
    for (int law = 0; law < 2; ++law)
        for (int iters = 0; iters < 2; ++iters) {
            worst = fmax(worst, factored_case(3, 4, 0.9, 0.15, iters, law, CT_IMLS_HESS_EXACT, 3));
            worst = fmax(worst, factored_case(2, 8, 0.55, 0.08, iters, law, CT_IMLS_HESS_EXACT, 4));
        }
    worst = fmax(worst, factored_case(3, 4, 0.9, 0.15, 1, 0, CT_IMLS_HESS_PROJECT, 2));
    printf("factored Hessian with cached normals against the dense chain: worst rel difference %.2e\n", worst);
    ck_assert(worst < 1e-12);
}
END_TEST

/* ---- the fade and an extra law (sticky IMLS) ---- */

static double adh_law(const void *ctx, double psi, double *d1, double *d2) { return ct_adhesion(ctx, psi, d1, d2); }

/* FD of the energy and the gradient of a term with the fade active (β = B/u, u the wanted B/β) and, if
 * L, Fang et al.'s adhesion added; EXACT symmetric, GN and PROJECT PSD, translation invariance. Returns
 * the worst FD relative error. */
static double check_faded(term *T, double *x, double u, const ct_adhesion_law *L, const char *what)
{
    const int d = T->d;
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_VALUE, CT_IMLS_HESS_EXACT), CT_OK);
    T->prm.fade = T->res.field.B / u;
    if (L) {
        T->prm.extra = adh_law;
        T->prm.extra_ctx = L;
        T->prm.extra_reach = L->da;
    }
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
    ck_assert_int_eq(T->res.state, CT_IMLS_TERM_ACTIVE);
    const int n = T->res.n, NX = d * n;
    const double chi = T->res.chi, E = T->res.energy;
    int *verts = malloc((size_t)n * sizeof *verts);
    memcpy(verts, T->verts, (size_t)n * sizeof *verts);
    double *g = malloc((size_t)NX * sizeof *g), *H = malloc((size_t)NX * NX * sizeof *H);
    memcpy(g, T->g, (size_t)NX * sizeof *g);
    memcpy(H, T->H, (size_t)NX * NX * sizeof *H);
    double *gfd = malloc((size_t)NX * sizeof *gfd), *Hfd = malloc((size_t)NX * NX * sizeof *Hfd);
    term_fd(T, x, n, verts, gfd, Hfd);
    const double eg = ct_test_diffnorm(g, gfd, (size_t)NX) / ct_test_norm(gfd, (size_t)NX);
    const double eh = ct_test_diffnorm(H, Hfd, (size_t)NX * NX) / ct_test_norm(Hfd, (size_t)NX * NX);
    double tr = 0.0;
    for (int a = 0; a < d; ++a) {
        double sm = 0.0;
        for (int v = 0; v < n; ++v) sm += g[d * v + a];
        tr = fmax(tr, fabs(sm));
    }
    tr /= ct_test_norm(g, (size_t)NX);
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_HESSIAN, CT_IMLS_HESS_GN), CT_OK);
    ck_assert(ct_test_diffnorm(T->g, g, (size_t)NX) == 0.0);
    const double mgn = min_eig(T->H, NX), HGn = ct_test_norm(T->H, (size_t)NX * NX), asgn = asym(T->H, NX);
    ck_assert_int_eq(term_eval(T, x, CT_IMLS_HESSIAN, CT_IMLS_HESS_PROJECT), CT_OK);
    const double mpr = min_eig(T->H, NX), HPn = ct_test_norm(T->H, (size_t)NX * NX), aspr = asym(T->H, NX);
    printf("%s: B/beta = %.2f, chi = %.4f, psi = %.4f, E = %.4e, %d dofs: FD gradient %.2e, exact Hessian %.2e; "
           "translation %.1e; GN min eig %.2e (|H| %.2e), PROJECT min eig %.2e (|H| %.2e)\n",
           what, u, chi, T->res.psi, E, NX, eg, eh, tr, mgn, HGn, mpr, HPn);
    ck_assert(chi > 0.0 && chi < 1.0);
    ck_assert(eg < 1e-6 && eh < 1e-6);
    ck_assert(tr < 1e-12);
    ck_assert(asym(H, NX) == 0.0 && asgn == 0.0 && aspr == 0.0);
    ck_assert(mgn >= -1e-12 * HGn && mpr >= -1e-12 * HPn);
    free(verts), free(g), free(H), free(gfd), free(Hfd);
    return fmax(eg, eh);
}

/* The faded term (B/β = 0.3 and 0.8) in 2D and 3D, with and without Fang et al.'s adhesion (d̂_p = d̂,
 * d̂_a = 3 d̂, so ψ lies on its softening branch), near the curved bodies of test_curved_*; and the fade is
 * the identity where B ≥ β (bitwise the unfaded term). */
START_TEST(test_fade)
{
    rng = 0x9e3779b97f4a7c15ull + 7u;
    double worst = 0.0;
    for (int dim = 2; dim <= 3; ++dim) {
        body B;
        const double o[3] = {-1, -1, -1}, sz[3] = {2, 2, 2};
        const int cells = dim == 2 ? 8 : 4, c[3] = {cells, cells, cells};
        const double R = dim == 2 ? 0.55 : 0.9, gap = dim == 2 ? 0.08 : 0.15, dhat = dim == 2 ? 0.15 : 0.25;
        body_make(&B, dim, o, sz, c, 1, 0.15);
        const int q = interior_vertex(&B);
        int samples[128];
        const int anchor = B.s.bverts[3 % B.s.nbv];
        const double r = ct_test_norm(B.x + dim * anchor, (size_t)dim);
        for (int a = 0; a < dim; ++a) B.x[dim * q + a] = B.x[dim * anchor + a] * (1.0 + gap / r);
        const int k = gather(&B, B.x + dim * q, R, samples, 128);
        const ct_adhesion_law L = ct_adhesion_law_make(CT_ADH_DISTANCE, dhat, 3.0 * dhat, 5e3);
        for (int variant = 0; variant < 4; ++variant) {
            term T;
            term_init(&T, &B.t, R, dhat, 1e4, q, 0.05, k, samples);
            char what[96];
            snprintf(what, sizeof what, "%dD fade%s", dim, variant & 2 ? " + adhesion" : "");
            worst = fmax(worst, check_faded(&T, B.x, variant & 1 ? 0.8 : 0.3, variant & 2 ? &L : NULL, what));
            term_free(&T);
        }
        /* β below B: bitwise the unfaded term */
        term T0, T1;
        term_init(&T0, &B.t, R, 0.3, 1e4, q, 0.05, k, samples);
        term_init(&T1, &B.t, R, 0.3, 1e4, q, 0.05, k, samples);
        ck_assert_int_eq(term_eval(&T0, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
        T1.prm.fade = 0.5 * T0.res.field.B;
        ck_assert_int_eq(term_eval(&T1, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
        const int NX = dim * T0.res.n;
        ck_assert(T0.res.state == CT_IMLS_TERM_ACTIVE && T1.res.chi == 1.0 && T0.res.energy == T1.res.energy);
        ck_assert(memcmp(T0.g, T1.g, (size_t)NX * sizeof *T0.g) == 0 && memcmp(T0.H, T1.H, (size_t)NX * NX * sizeof *T0.H) == 0);
        term_free(&T0), term_free(&T1);
        body_free(&B);
    }
    printf("fade: worst FD rel err %.2e\n", worst);
    ck_assert(worst > 0.0 && worst < 1e-6);
}
END_TEST

/* a flat top face (z = 0.5 in 3D, y = 0.5 in 2D) jittered in its plane, a query at height h above
 * its middle; R small enough that every sample's ring lies in the face */
static void flat_setup(body *B, int dim)
{
    const double o[3] = {-2, -2, -0.5}, sz[3] = {4, 4, 1};
    const int c3[3] = {8, 8, 2};
    if (dim == 3) {
        body_make(B, 3, o, sz, c3, 0, 0.0);
    } else {
        const double o2[2] = {-2, -0.5}, sz2[2] = {4, 1};
        const int c2[2] = {8, 2};
        body_make(B, 2, o2, sz2, c2, 0, 0.0);
    }
    for (int i = 0; i < B->s.nbv; ++i) { /* in-plane jitter of the top face's inner vertices */
        double *p = B->x + dim * B->s.bverts[i];
        if (fabs(p[dim - 1] - 0.5) < 1e-12 && fabs(p[0]) < 1.9 && (dim == 2 || fabs(p[1]) < 1.9))
            for (int a = 0; a < dim - 1; ++a) p[a] += 0.15 * 0.5 * ct_test_xs_pm1(&rng);
    }
}

START_TEST(test_flat_plane)
{
    rng = 0x9e3779b97f4a7c15ull + 3u;
    for (int dim = 2; dim <= 3; ++dim) {
        body B;
        flat_setup(&B, dim);
        const int q = interior_vertex(&B);
        const double R = 1.0, dhat = 0.2, kappa = 3e3, w = 0.07;
        double worst_e = 0.0, worst_g = 0.0, worst_t = 0.0, worst_b = 0.0;
        for (int trial = 0; trial < 6; ++trial) {
            const double h = 0.01 + 0.03 * trial;
            B.x[dim * q] = 0.1 + 0.2 * ct_test_xs_pm1(&rng);
            if (dim == 3) B.x[dim * q + 1] = 0.1 + 0.2 * ct_test_xs_pm1(&rng);
            B.x[dim * q + dim - 1] = 0.5 + h;
            int samples[128];
            const int k = gather(&B, B.x + dim * q, R, samples, 128);
            term T;
            term_init(&T, &B.t, R, dhat, kappa, q, w, k, samples);
            T.prm.field.sigma_f = trial % 3 == 2 ? 0.0 : 0.5;
            ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
            ck_assert_int_eq(T.res.state, CT_IMLS_TERM_ACTIVE);
            double b1, b2;
            const double Eref = w * kappa * ct_barrier(h, dhat, &b1, &b2);
            const int n = T.res.n, NX = dim * n;
            ck_assert_int_eq(T.verts[0], q);
            worst_e = fmax(worst_e, fabs(T.res.energy - Eref) / Eref);
            double eg = 0.0;
            for (int a = 0; a < dim; ++a) eg = fmax(eg, fabs(T.g[a] - (a == dim - 1 ? w * kappa * b1 : 0.0)));
            worst_g = fmax(worst_g, eg / fabs(w * kappa * b1));
            double tr = 0.0;
            for (int a = 0; a < dim; ++a) {
                double s = 0.0;
                for (int u = 0; u < n; ++u) s += T.g[dim * u + a];
                tr = fmax(tr, fabs(s));
            }
            worst_t = fmax(worst_t, tr / ct_test_norm(T.g, (size_t)NX));
            /* the exact query block is w κ b'' n nᵀ (∇²ₓₓψ = 0), and GN's is the same */
            double qb[9];
            for (int a = 0; a < dim; ++a)
                for (int c = 0; c < dim; ++c) qb[a * dim + c] = T.H[(size_t)a * NX + c];
            ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_GN), CT_OK);
            double eb = 0.0;
            for (int a = 0; a < dim; ++a)
                for (int c = 0; c < dim; ++c) {
                    const double ref = a == dim - 1 && c == dim - 1 ? w * kappa * b2 : 0.0;
                    eb = fmax(eb, fabs(qb[a * dim + c] - ref));
                    eb = fmax(eb, fabs(T.H[(size_t)a * NX + c] - ref));
                }
            worst_b = fmax(worst_b, eb / (w * kappa * b2));
            term_free(&T);
        }
        printf("flat plane %dD (in-plane jitter, h = 0.01..0.16, dhat %.2f): E vs w k b(h) %.1e, "
               "grad_q vs w k b'(h) n %.1e, translation %.1e, query block (exact and GN) vs w k b''(h) n n' %.1e\n",
               dim, dhat, worst_e, worst_g, worst_t, worst_b);
        ck_assert(worst_e < 1e-13 && worst_g < 1e-12 && worst_t < 1e-12 && worst_b < 1e-10);
        body_free(&B);
    }
}
END_TEST

START_TEST(test_states)
{
    rng = 0x9e3779b97f4a7c15ull + 4u;
    for (int dim = 2; dim <= 3; ++dim) {
        body B;
        flat_setup(&B, dim);
        const int q = interior_vertex(&B);
        const double R = 1.0, dhat = 0.2;
        int samples[128];
        B.x[dim * q] = 0.05, B.x[dim * q + 1] = 0.05;
        B.x[dim * q + dim - 1] = 0.6;
        const int k = gather(&B, B.x + dim * q, R, samples, 128);
        term T;
        term_init(&T, &B.t, R, dhat, 1e3, q, 0.1, k, samples);
        /* active, then ψ ≥ d̂ (at d̂ exactly and above), no support, ψ = 0, ψ < 0 */
        ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_GN), CT_OK);
        ck_assert_int_eq(T.res.state, CT_IMLS_TERM_ACTIVE);
        ck_assert(T.res.energy > 0.0 && T.res.n > 0);
        const double heights[4] = {0.5 + dhat + 1e-12, 0.5 + 0.3, 0.5, 0.45}; /* ψ = h − 0.5 */
        const ct_imls_term_state expect[4] = {CT_IMLS_TERM_OFF, CT_IMLS_TERM_OFF, CT_IMLS_TERM_INFEASIBLE,
                                              CT_IMLS_TERM_INFEASIBLE};
        for (int c = 0; c < 4; ++c) {
            B.x[dim * q + dim - 1] = heights[c];
            for (ct_imls_mode m = CT_IMLS_VALUE; m <= CT_IMLS_HESSIAN; ++m) {
                ck_assert_int_eq(term_eval(&T, B.x, m, CT_IMLS_HESS_EXACT), CT_OK);
                ck_assert_int_eq(T.res.state, expect[c]);
                ck_assert_int_eq(T.res.n, 0);
                if (expect[c] == CT_IMLS_TERM_OFF) ck_assert(T.res.energy == 0.0);
                else ck_assert(isinf(T.res.energy) && T.res.energy > 0.0);
            }
        }
        B.x[dim * q + dim - 1] = 0.5 + 0.5 * R + 2.0 * R; /* no sample within R */
        ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
        ck_assert_int_eq(T.res.state, CT_IMLS_TERM_OFF);
        ck_assert_int_eq(T.res.field.flag, CT_IMLS_NO_SUPPORT);
        ck_assert(T.res.energy == 0.0 && T.res.n == 0);
        /* k = 0 */
        B.x[dim * q + dim - 1] = 0.6;
        T.k = 0;
        ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
        ck_assert_int_eq(T.res.state, CT_IMLS_TERM_OFF);
        T.k = k;
        /* input errors: a too small cap (res.n the size needed), work, params, indices */
        ct_imls_term_result r;
        ck_assert_int_eq(ct_imls_term_eval(&T.prm, &B.t, B.x, q, 0.1, k, samples, CT_IMLS_GRADIENT, T.work, T.nw,
                                           &r, T.verts, 2, T.g, NULL),
                         CT_EINPUT);
        ck_assert_int_gt(r.n, 2);
        const int need = r.n;
        ck_assert_int_eq(ct_imls_term_eval(&T.prm, &B.t, B.x, q, 0.1, k, samples, CT_IMLS_GRADIENT, T.work, T.nw,
                                           &r, T.verts, need, T.g, NULL),
                         CT_OK);
        ck_assert_int_eq(r.n, need);
        const size_t nw_exact = ct_imls_term_work_size(&B.t, k, need, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT);
        T.prm.hess = CT_IMLS_HESS_EXACT;
        ck_assert_int_eq(ct_imls_term_eval(&T.prm, &B.t, B.x, q, 0.1, k, samples, CT_IMLS_HESSIAN, T.work, nw_exact,
                                           &r, T.verts, need, T.g, T.H),
                         CT_OK);
        ck_assert_int_eq(ct_imls_term_eval(&T.prm, &B.t, B.x, q, 0.1, k, samples, CT_IMLS_HESSIAN, T.work,
                                           nw_exact - 1, &r, T.verts, need, T.g, T.H),
                         CT_EINPUT);
        ck_assert_int_eq(ct_imls_term_eval(&T.prm, &B.t, B.x, q, 0.1, k, samples, CT_IMLS_HESSIAN, T.work, T.nw, &r,
                                           T.verts, T.cap, T.g, NULL),
                         CT_EINPUT);
        ck_assert_int_eq(ct_imls_term_eval(&T.prm, &B.t, B.x, B.m.nv, 0.1, k, samples, CT_IMLS_VALUE, T.work, T.nw,
                                           &r, NULL, 0, NULL, NULL),
                         CT_EINPUT);
        ck_assert_int_eq(ct_imls_term_eval(&T.prm, &B.t, B.x, q, -1.0, k, samples, CT_IMLS_VALUE, T.work, T.nw, &r,
                                           NULL, 0, NULL, NULL),
                         CT_EINPUT);
        ct_imls_term_params bad = T.prm;
        bad.dhat = 0.0;
        ck_assert_int_eq(ct_imls_term_params_check(&bad), CT_EINPUT);
        bad = T.prm, bad.kappa = -1.0;
        ck_assert_int_eq(ct_imls_term_params_check(&bad), CT_EINPUT);
        bad = T.prm, bad.hess = (ct_imls_hess_mode)7;
        ck_assert_int_eq(ct_imls_term_params_check(&bad), CT_EINPUT);
        bad = T.prm, bad.field.dim = 5 - dim; /* the topology's dim differs */
        ck_assert_int_eq(ct_imls_term_eval(&bad, &B.t, B.x, q, 0.1, k, samples, CT_IMLS_VALUE, T.work, T.nw, &r, NULL,
                                           0, NULL, NULL),
                         CT_EINPUT);
        term_free(&T);
        body_free(&B);
    }
    printf("states: OFF (psi = dhat, psi > dhat, no support, k = 0), INFEASIBLE (psi = 0, psi < 0: E = +inf), "
           "input errors: ok\n");
}
END_TEST

START_TEST(test_timing)
{
    rng = 0x9e3779b97f4a7c15ull + 5u;
    body B;
    const double o[3] = {-1, -1, -1}, sz[3] = {2, 2, 2};
    const int c[3] = {8, 8, 8};
    body_make(&B, 3, o, sz, c, 1, 0.1); /* sphere, ē ≈ 0.2 */
    const int q = interior_vertex(&B);
    const int ktarget[2] = {7, 15};
    for (int ct = 0; ct < 2; ++ct) {
        int anchor = -1;
        double best = 1e9;
        for (int i = 0; i < B.s.nbv; ++i) {
            const double *p = B.x + 3 * B.s.bverts[i];
            const double dd = fabs(p[1] - 0.2) + fabs(p[2] - 0.1) + fabs(p[0] - 1.0);
            if (dd < best) best = dd, anchor = B.s.bverts[i];
        }
        int samples[64], k = 0;
        double R = 0.2;
        for (int shift = 0; shift < 20; ++shift) { /* a query position where R can reach k exactly */
            for (int a = 0; a < 3; ++a) B.x[3 * q + a] = 1.03 * B.x[3 * anchor + a] + 0.004 * shift * (a == 1);
            R = 0.2;
            while ((k = gather(&B, B.x + 3 * q, R, samples, 64)) < ktarget[ct]) R += 0.001;
            if (k == ktarget[ct]) break;
        }
        term T;
        term_init(&T, &B.t, R, 0.1, 1e4, q, 0.04, k, samples);
        ck_assert_int_eq(term_eval(&T, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT), CT_OK);
        ck_assert_int_eq(T.res.state, CT_IMLS_TERM_ACTIVE);
        const int n = T.res.n;
        double t[5];
        const ct_imls_mode what[5] = {CT_IMLS_VALUE, CT_IMLS_GRADIENT, CT_IMLS_HESSIAN, CT_IMLS_HESSIAN,
                                      CT_IMLS_HESSIAN};
        const ct_imls_hess_mode mode[5] = {CT_IMLS_HESS_EXACT, CT_IMLS_HESS_EXACT, CT_IMLS_HESS_EXACT,
                                           CT_IMLS_HESS_GN, CT_IMLS_HESS_PROJECT};
        for (int m = 0; m < 5; ++m) {
            const int reps = m == 4 ? 5 : 100, batches = m == 4 ? 3 : 5; /* fastest batch: shared machine */
            t[m] = 1e30;
            for (int bt = 0; bt < batches; ++bt) {
                const double t0 = ct_test_now();
                for (int r = 0; r < reps; ++r) term_eval(&T, B.x, what[m], mode[m]);
                t[m] = fmin(t[m], (ct_test_now() - t0) / reps * 1e6);
            }
        }
        /* EXACT with the samples' normal derivatives cached (the model's case): the factored path */
        ct_vnormal_cache nc;
        ct_vnormal_cache_init(&nc);
        ck_assert_int_eq(ct_vnormal_cache_fill(&nc, &B.t, B.x, k, samples, 2, 1), CT_OK);
        T.prm.normals = &nc;
        double tc = 1e30;
        for (int bt = 0; bt < 5; ++bt) {
            const double t0 = ct_test_now();
            for (int r = 0; r < 100; ++r) term_eval(&T, B.x, CT_IMLS_HESSIAN, CT_IMLS_HESS_EXACT);
            tc = fmin(tc, (ct_test_now() - t0) / 100 * 1e6);
        }
        ct_vnormal_cache_free(&nc);
        printf("timing 3D k = %d (R = %.3f), stencil %d vertices (%d dofs), psi = %.4f: energy %.2f us, "
               "+gradient %.1f us, +Hessian EXACT %.1f us (normals cached: %.1f us), GN %.1f us, PROJECT %.0f us "
               "per term\n",
               k, R, n, 3 * n, T.res.psi, t[0], t[1], t[2], tc, t[3], t[4]);
        term_free(&T);
    }
    body_free(&B);
}
END_TEST

static Suite *imls_term_suite(void)
{
    Suite *s = suite_create("imls_term");
    TCase *tc = tcase_create("imls_term");
    tcase_set_timeout(tc, 30); /* ≈ 0.1 s each here; sanitizer runs are slower */
    tcase_add_test(tc, test_states);
    tcase_add_test(tc, test_flat_plane);
    tcase_add_test(tc, test_curved_2d);
    tcase_add_test(tc, test_curved_3d);
    tcase_add_test(tc, test_fade);
    tcase_add_test(tc, test_factored);
    tcase_add_test(tc, test_timing);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(imls_term_suite)
