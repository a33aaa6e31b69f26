/* check_vertex_normals.c — vertex normals from one-rings, their derivatives, and the chain from
 * the IMLS stencil (x, p, n) to vertex positions (ct_vertex_normals.h).
 *
 * Expected values, derived here independently of core/contact/vertex_normals.c:
 * - the normal itself: 3D the normalised sum of the incident faces' cross products, 2D the
 *   normalised sum of the segments' (dy, −dx), recomputed here from the cells;
 * - first derivatives: central differences of n (h = 1e-6); second: central differences of the
 *   analytic gradient aᵀ∂n/∂X (h = 1e-5); closed fan: ∂n/∂x_v = 0; translation: the blocks sum to 0;
 * - orientation: on a box and on a sphere made of it, nᵀ(x_v − centre) > 0 at every vertex;
 * - the chain: ψ(X) = ct_imls ψ(x_q; x_{s_i}; n_{s_i}(X)) composed here, gradient and Hessian over
 *   the whole stencil against central differences of ψ (gradient) and of the chained gradient
 *   (Hessian), with robust weights away from 1; translation invariance (Σ blocks of g_X = 0).
 */
#include "ct_test_util.h"

#include "contactlab/ct_imls.h"
#include "contactlab/ct_mesh.h"
#include "contactlab/ct_vertex_normals.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const double PI = 3.14159265358979323846;

static unsigned long long rng = 0x243f6a8885a308d3ull;

/* the reference normal from the cells, computed directly */
static void ref_normal(int dim, int ncell, const int *cells, const double *x, int v, double *n)
{
    double N[3] = {0, 0, 0};
    for (int f = 0; f < ncell; ++f) {
        const int *c = cells + dim * f;
        int has = 0;
        for (int a = 0; a < dim; ++a) has |= c[a] == v;
        if (!has) continue;
        if (dim == 3) {
            const double *A = x + 3 * c[0], *B = x + 3 * c[1], *C = x + 3 * c[2];
            double u[3], w[3];
            for (int a = 0; a < 3; ++a) u[a] = B[a] - A[a], w[a] = C[a] - A[a];
            N[0] += 0.5 * (u[1] * w[2] - u[2] * w[1]);
            N[1] += 0.5 * (u[2] * w[0] - u[0] * w[2]);
            N[2] += 0.5 * (u[0] * w[1] - u[1] * w[0]);
        } else {
            N[0] += x[2 * c[1] + 1] - x[2 * c[0] + 1];
            N[1] -= x[2 * c[1]] - x[2 * c[0]];
        }
    }
    const double r = ct_test_norm(N, (size_t)dim);
    for (int a = 0; a < dim; ++a) n[a] = N[a] / r;
}

/* FD check of one vertex's normal: first derivatives and the Hessian of aᵀn. Returns the max of
 * the two relative errors; prints them. */
static double fd_vertex(const ct_vnormal_topo *t, int ncell, const int *cells, double *x, int v,
                        const char *what, double *dv_block)
{
    const int d = t->dim;
    int m;
    const int *ring = ct_vnormal_ring(t, v, &m);
    const int L = m * d;
    double n[3], nr[3], a[3];
    double *dn = calloc((size_t)d * L, sizeof *dn), *dfd = calloc((size_t)d * L, sizeof *dfd);
    double *H = calloc((size_t)L * L, sizeof *H), *Hfd = calloc((size_t)L * L, sizeof *Hfd);
    double *dn2 = calloc((size_t)d * L, sizeof *dn2), *H2 = calloc((size_t)L * L, sizeof *H2);
    for (int i = 0; i < d; ++i) a[i] = ct_test_xs_pm1(&rng);
    ck_assert_int_eq(ct_vnormal_eval(t, x, v, n, dn, a, H), CT_OK);
    ref_normal(d, ncell, cells, x, v, nr);
    ck_assert(ct_test_diffnorm(n, nr, (size_t)d) < 1e-14);
    /* dn without the Hessian is the same */
    ck_assert_int_eq(ct_vnormal_eval(t, x, v, n, dn2, NULL, NULL), CT_OK);
    ck_assert(ct_test_diffnorm(dn, dn2, (size_t)d * L) == 0.0);
    const double h1 = 1e-6, h2 = 1e-5;
    for (int j = 0; j < L; ++j) {
        double *xj = x + d * ring[j / d] + j % d;
        const double x0 = *xj;
        double np[3], nm[3];
        *xj = x0 + h1;
        ct_vnormal_eval(t, x, v, np, NULL, NULL, NULL);
        *xj = x0 - h1;
        ct_vnormal_eval(t, x, v, nm, NULL, NULL, NULL);
        for (int i = 0; i < d; ++i) dfd[i * L + j] = (np[i] - nm[i]) / (2 * h1);
        /* Hessian column j: FD of the gradient aᵀ dn */
        double gp[64 * 3], gm[64 * 3];
        ck_assert(L <= 64 * 3);
        *xj = x0 + h2;
        ct_vnormal_eval(t, x, v, np, dn2, NULL, NULL);
        for (int c = 0; c < L; ++c) {
            gp[c] = 0.0;
            for (int i = 0; i < d; ++i) gp[c] += a[i] * dn2[i * L + c];
        }
        *xj = x0 - h2;
        ct_vnormal_eval(t, x, v, nm, dn2, NULL, NULL);
        for (int c = 0; c < L; ++c) {
            gm[c] = 0.0;
            for (int i = 0; i < d; ++i) gm[c] += a[i] * dn2[i * L + c];
        }
        *xj = x0;
        for (int c = 0; c < L; ++c) Hfd[c * L + j] = (gp[c] - gm[c]) / (2 * h2);
    }
    const double e1 = ct_test_diffnorm(dn, dfd, (size_t)d * L) / ct_test_norm(dfd, (size_t)d * L);
    const double e2 = ct_test_diffnorm(H, Hfd, (size_t)L * L) / ct_test_norm(Hfd, (size_t)L * L);
    /* symmetry, translation (the ring blocks of dn sum to 0; Hessian block rows too) */
    double asym = 0.0, tr = 0.0;
    for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j) asym = fmax(asym, fabs(H[i * L + j] - H[j * L + i]));
    for (int i = 0; i < d; ++i)
        for (int b = 0; b < d; ++b) {
            double s = 0.0;
            for (int j = 0; j < m; ++j) s += dn[i * L + d * j + b];
            tr = fmax(tr, fabs(s));
        }
    if (dv_block) { /* the derivative with respect to x_v itself (slot 0) */
        double s = 0.0;
        for (int i = 0; i < d; ++i)
            for (int b = 0; b < d; ++b) s += dn[i * L + b] * dn[i * L + b];
        *dv_block = sqrt(s) / ct_test_norm(dn, (size_t)d * L);
    }
    printf("vertex normal %s (m = %d): dn rel err %.2e, Hessian of a.n rel err %.2e, asym %.1e, "
           "translation %.1e%s", what, m, e1, e2, asym, tr, dv_block ? "" : "\n");
    if (dv_block) printf(", |dn/dx_v|/|dn| %.1e\n", *dv_block);
    ck_assert(asym == 0.0);
    ck_assert(tr < 1e-12 * ct_test_norm(dn, (size_t)d * L));
    free(dn), free(dfd), free(H), free(Hfd), free(dn2), free(H2);
    return fmax(e1, e2);
}

/* a random fan around v = 0: ring vertices 1..r at angles around, faces (0, a, a+1), closed or
 * open; each face written starting at a random corner (cyclic order kept) */
static int make_fan(int r, int closed, double *x, int *cells)
{
    x[0] = 0.1 * ct_test_xs_pm1(&rng), x[1] = 0.1 * ct_test_xs_pm1(&rng), x[2] = 0.1 * ct_test_xs_pm1(&rng);
    const double span = closed ? 2 * PI : 1.4 * PI;
    for (int a = 0; a < r; ++a) {
        const double th = span * (a + 0.3 * ct_test_xs_pm1(&rng)) / (closed ? r : r - 1);
        const double rad = 1.0 + 0.3 * ct_test_xs_pm1(&rng);
        x[3 * (a + 1) + 0] = rad * cos(th);
        x[3 * (a + 1) + 1] = rad * sin(th);
        x[3 * (a + 1) + 2] = 0.4 * ct_test_xs_pm1(&rng);
    }
    const int nf = closed ? r : r - 1;
    for (int f = 0; f < nf; ++f) {
        int c[3] = {0, 1 + f, 1 + (f + 1) % r};
        const int s = (int)((ct_test_xs_pm1(&rng) + 1.0) * 1.5) % 3;
        for (int a = 0; a < 3; ++a) cells[3 * f + a] = c[(a + s) % 3];
    }
    return nf;
}

START_TEST(test_fd_normals_3d)
{
    rng = 0x243f6a8885a308d3ull + 0u; /* the same stream with or without fork */
    double worst = 0.0, x[3 * 12];
    int cells[3 * 12];
    for (int trial = 0; trial < 12; ++trial) {
        const int r = 4 + trial % 5, closed = trial % 2 == 0;
        const int nf = make_fan(r, closed, x, cells);
        ct_vnormal_topo t;
        ck_assert_int_eq(ct_vnormal_topo_init(&t, 3, r + 1, nf, cells), CT_OK);
        char what[64];
        snprintf(what, sizeof what, "3D %s fan, valence %d", closed ? "closed" : "open (border)", r);
        double dv;
        worst = fmax(worst, fd_vertex(&t, nf, cells, x, 0, what, &dv));
        if (closed) ck_assert(dv < 1e-14);
        else ck_assert(dv > 1e-3);
        /* a ring vertex of the fan (border of this open patch: one or two faces) */
        snprintf(what, sizeof what, "3D %s fan, ring vertex", closed ? "closed" : "open");
        worst = fmax(worst, fd_vertex(&t, nf, cells, x, 1 + trial % r, what, NULL));
        ct_vnormal_topo_free(&t);
    }
    printf("3D normals: worst FD rel err %.2e\n", worst);
    ck_assert(worst < 1e-6);
}
END_TEST

START_TEST(test_fd_normals_2d)
{
    rng = 0x243f6a8885a308d3ull + 1u; /* the same stream with or without fork */
    double worst = 0.0;
    for (int trial = 0; trial < 8; ++trial) {
        /* an open polyline of 5 vertices, ccw arc; its end vertices have one segment */
        const int np = 5;
        double x[2 * 5];
        int cells[2 * 4];
        for (int i = 0; i < np; ++i) {
            const double th = 0.3 * (i + 0.3 * ct_test_xs_pm1(&rng));
            x[2 * i] = cos(th) + 0.05 * ct_test_xs_pm1(&rng);
            x[2 * i + 1] = sin(th) + 0.05 * ct_test_xs_pm1(&rng);
        }
        for (int s = 0; s < np - 1; ++s) cells[2 * s] = s, cells[2 * s + 1] = s + 1;
        ct_vnormal_topo t;
        ck_assert_int_eq(ct_vnormal_topo_init(&t, 2, np, np - 1, cells), CT_OK);
        double dv;
        worst = fmax(worst, fd_vertex(&t, np - 1, cells, x, 2, "2D interior", &dv));
        ck_assert(dv < 1e-14); /* J(x_next − x_prev): independent of x_v */
        worst = fmax(worst, fd_vertex(&t, np - 1, cells, x, 0, "2D polyline start", &dv));
        ck_assert(dv > 0.1);
        worst = fmax(worst, fd_vertex(&t, np - 1, cells, x, np - 1, "2D polyline end", &dv));
        ck_assert(dv > 0.1);
        /* outward for a ccw arc around the origin */
        double n[2];
        for (int v = 0; v < np; ++v) {
            ct_vnormal_eval(&t, x, v, n, NULL, NULL, NULL);
            ck_assert(n[0] * x[2 * v] + n[1] * x[2 * v + 1] > 0.7 * ct_test_norm(x + 2 * v, 2));
        }
        ct_vnormal_topo_free(&t);
    }
    printf("2D normals: worst FD rel err %.2e\n", worst);
    ck_assert(worst < 1e-6);
}
END_TEST

START_TEST(test_degenerate)
{
    rng = 0x243f6a8885a308d3ull + 2u; /* the same stream with or without fork */
    /* a vertex without cells, and a zero-area fan */
    double x[3 * 4] = {0, 0, 0, 1, 0, 0, 2, 0, 0, 5, 5, 5};
    int cells[3] = {0, 1, 2};
    ct_vnormal_topo t;
    ck_assert_int_eq(ct_vnormal_topo_init(&t, 3, 4, 1, cells), CT_OK);
    double n[3];
    ck_assert_int_eq(ct_vnormal_eval(&t, x, 0, n, NULL, NULL, NULL), CT_EINVERTED);
    ck_assert_int_eq(ct_vnormal_eval(&t, x, 3, n, NULL, NULL, NULL), CT_EINVERTED);
    ck_assert(n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0);
    ck_assert_int_eq(ct_vnormal_eval(&t, x, 4, n, NULL, NULL, NULL), CT_EINPUT);
    double nrm[12];
    ck_assert_int_eq(ct_vnormal_all(&t, x, nrm), 3);
    ct_vnormal_topo_free(&t);
    int bad[3] = {0, 1, 1};
    ck_assert_int_eq(ct_vnormal_topo_init(&t, 3, 4, 1, bad), CT_EINPUT);
    int oob[3] = {0, 1, 7};
    ck_assert_int_eq(ct_vnormal_topo_init(&t, 3, 4, 1, oob), CT_EINPUT);
}
END_TEST

START_TEST(test_chain_errors)
{
    rng = 0x243f6a8885a308d3ull + 99u;
    /* a closed fan of 6 around vertex 0, vertex 7 off the surface as the query */
    double x[3 * 8];
    int cells[3 * 6];
    const int nf = make_fan(6, 1, x, cells);
    x[21] = 0.1, x[22] = 0.2, x[23] = 0.5;
    ct_vnormal_topo t;
    ck_assert_int_eq(ct_vnormal_topo_init(&t, 3, 8, nf, cells), CT_OK);
    ck_assert_int_eq(t.max_ring, 7);
    const int samples[2] = {0, 3};
    int verts[16];
    const int n = ct_vnormal_stencil(&t, 7, 2, samples, verts, 16);
    ck_assert_int_eq(n, 8); /* q, 0, 3, then the ring of 0 (1..6 without 3) */
    ck_assert_int_eq(verts[0], 7);
    ck_assert_int_eq(verts[1], 0);
    ck_assert_int_eq(verts[2], 3);
    ck_assert_int_eq(ct_vnormal_stencil(&t, 7, 2, samples, NULL, 0), 8);
    ck_assert_int_eq(ct_vnormal_stencil(&t, 8, 2, samples, verts, 16), -1);
    const int p = ct_imls_nvars(3, 2);
    double gz[15], Hz[15 * 15], gX[24], HX[24 * 24];
    for (int i = 0; i < p; ++i) gz[i] = ct_test_xs_pm1(&rng);
    for (int i = 0; i < p * p; ++i) Hz[i] = 0.0;
    const size_t nw = ct_vnormal_chain_work_size(&t, 2, n);
    double *w = malloc(nw * sizeof *w);
    ck_assert_int_eq(ct_vnormal_chain(&t, x, 7, 2, samples, n, verts, gz, Hz, w, nw, gX, HX), CT_OK);
    ck_assert_int_eq(ct_vnormal_chain(&t, x, 7, 2, samples, n, verts, gz, Hz, w, nw - 1, gX, HX), CT_EINPUT);
    ck_assert_int_eq(ct_vnormal_chain(&t, x, 7, 2, samples, n - 1, verts, gz, Hz, w, nw, gX, HX), CT_EINPUT);
    ck_assert_int_eq(ct_vnormal_chain(&t, x, 7, 2, samples, n, verts, gz, Hz, w, nw, gX, NULL), CT_EINPUT);
    /* a degenerate sample normal: flatten vertex 3's two faces onto a line */
    for (int a = 0; a < 3; ++a) x[3 * 3 + a] = x[a], x[3 * 2 + a] = x[a], x[3 * 4 + a] = x[a];
    ck_assert_int_eq(ct_vnormal_chain(&t, x, 7, 2, samples, n, verts, gz, Hz, w, nw, gX, HX), CT_EINVERTED);
    free(w);
    ct_vnormal_topo_free(&t);
}
END_TEST

/* ---- meshes: a box surface, optionally blown up to a sphere of radius 1 around its centre ---- */

typedef struct body {
    ct_mesh m;
    ct_surface s;
    ct_vnormal_topo t;
    double *x; /* nv·dim current positions */
    double c[3];
} body;

static void body_box(body *B, int cells, int sphere, double jitter)
{
    ct_mesh_init(&B->m);
    const double o[3] = {-1, -1, -1}, sz[3] = {2, 2, 2};
    const int c[3] = {cells, cells, cells};
    ck_assert_int_eq(ct_mesh_box(&B->m, o, sz, c), CT_OK);
    ck_assert_int_eq(ct_surface_build(&B->s, &B->m, NULL), CT_OK);
    ck_assert_int_eq(ct_vnormal_topo_from_surface(&B->t, &B->s), CT_OK);
    B->x = malloc((size_t)B->m.nv * 3 * sizeof *B->x);
    memcpy(B->x, B->m.X, (size_t)B->m.nv * 3 * sizeof *B->x);
    B->c[0] = B->c[1] = B->c[2] = 0.0;
    const double h = 2.0 / cells;
    for (int i = 0; i < B->s.nbv; ++i) {
        double *p = B->x + 3 * B->s.bverts[i];
        if (sphere) {
            const double r = ct_test_norm(p, 3);
            for (int a = 0; a < 3; ++a) p[a] /= r;
        }
        for (int a = 0; a < 3; ++a) p[a] += jitter * h * ct_test_xs_pm1(&rng);
    }
}

static void body_rect(body *B, int cells, int circle, double jitter)
{
    ct_mesh_init(&B->m);
    const double o[2] = {-1, -1}, sz[2] = {2, 2};
    ck_assert_int_eq(ct_mesh_rect(&B->m, o, sz, cells, cells), CT_OK);
    ck_assert_int_eq(ct_surface_build(&B->s, &B->m, NULL), CT_OK);
    ck_assert_int_eq(ct_vnormal_topo_from_surface(&B->t, &B->s), CT_OK);
    B->x = malloc((size_t)B->m.nv * 2 * sizeof *B->x);
    memcpy(B->x, B->m.X, (size_t)B->m.nv * 2 * sizeof *B->x);
    B->c[0] = B->c[1] = B->c[2] = 0.0;
    const double h = 2.0 / cells;
    for (int i = 0; i < B->s.nbv; ++i) {
        double *p = B->x + 2 * B->s.bverts[i];
        if (circle) {
            const double r = ct_test_norm(p, 2);
            for (int a = 0; a < 2; ++a) p[a] /= r;
        }
        for (int a = 0; a < 2; ++a) p[a] += jitter * h * ct_test_xs_pm1(&rng);
    }
}

static void body_free(body *B)
{
    free(B->x);
    ct_vnormal_topo_free(&B->t);
    ct_surface_free(&B->s);
    ct_mesh_free(&B->m);
}

START_TEST(test_orientation)
{
    rng = 0x243f6a8885a308d3ull + 3u; /* the same stream with or without fork */
    for (int dim = 2; dim <= 3; ++dim)
        for (int sphere = 0; sphere <= 1; ++sphere) {
            body B;
            if (dim == 3) body_box(&B, 3, sphere, 0.0);
            else body_rect(&B, 6, sphere, 0.0);
            double *nrm = malloc((size_t)B.m.nv * dim * sizeof *nrm);
            ck_assert_int_eq(ct_vnormal_all(&B.t, B.x, nrm), 0);
            double worst = 1.0;
            for (int i = 0; i < B.s.nbv; ++i) {
                const int v = B.s.bverts[i];
                const double *p = B.x + dim * v, *n = nrm + dim * v;
                double s = 0.0;
                for (int a = 0; a < dim; ++a) s += n[a] * p[a];
                s /= ct_test_norm(p, (size_t)dim);
                worst = fmin(worst, s);
                ck_assert(fabs(ct_test_norm(n, (size_t)dim) - 1.0) < 1e-14);
            }
            printf("orientation %dD %s (%d surface vertices): min n.(x - c)/|x - c| = %.4f\n", dim,
                   sphere ? (dim == 3 ? "sphere" : "circle") : (dim == 3 ? "box" : "square"), B.s.nbv, worst);
            ck_assert(worst > (sphere ? 0.95 : 0.5));
            free(nrm);
            body_free(&B);
        }
}
END_TEST

/* ---- the composed field ψ(X) ---- */

typedef struct comp {
    const ct_vnormal_topo *t;
    ct_imls_params prm;
    int q, k, n, dim, p;
    const int *samples;
    int *verts;
    double *pos, *nrm, *gz, *Hz, *wi, *wc;
    size_t nwi, nwc;
    ct_imls_result res;
} comp;

static void comp_init(comp *C, const ct_vnormal_topo *t, double R, int q, int k, const int *samples)
{
    const int d = t->dim;
    C->t = t;
    ct_imls_params_default(&C->prm, d, R);
    C->q = q, C->k = k, C->samples = samples, C->dim = d;
    C->p = ct_imls_nvars(d, k);
    C->n = ct_vnormal_stencil(t, q, k, samples, NULL, 0);
    ck_assert_int_gt(C->n, 0);
    C->verts = malloc((size_t)C->n * sizeof *C->verts);
    ck_assert_int_eq(ct_vnormal_stencil(t, q, k, samples, C->verts, C->n), C->n);
    /* the sizing call without memory agrees with a bound-sized call */
    int *v2 = malloc((size_t)(1 + k * t->max_ring) * sizeof *v2);
    ck_assert_int_eq(ct_vnormal_stencil(t, q, k, samples, v2, 1 + k * t->max_ring), C->n);
    ck_assert(memcmp(v2, C->verts, (size_t)C->n * sizeof *v2) == 0);
    free(v2);
    C->pos = malloc((size_t)k * d * sizeof *C->pos);
    C->nrm = malloc((size_t)k * d * sizeof *C->nrm);
    C->gz = malloc((size_t)C->p * sizeof *C->gz);
    C->Hz = malloc((size_t)C->p * C->p * sizeof *C->Hz);
    C->nwi = ct_imls_work_size(d, k, CT_IMLS_HESSIAN);
    C->wi = malloc(C->nwi * sizeof *C->wi);
    C->nwc = ct_vnormal_chain_work_size(t, k, C->n);
    C->wc = malloc(C->nwc * sizeof *C->wc);
}

static void comp_free(comp *C)
{
    free(C->verts), free(C->pos), free(C->nrm), free(C->gz), free(C->Hz), free(C->wi), free(C->wc);
}

/* ψ at global positions x; with gX (and HX) the chained derivatives */
static double comp_eval(comp *C, const double *x, double *gX, double *HX)
{
    const int d = C->dim;
    for (int i = 0; i < C->k; ++i) {
        memcpy(C->pos + d * i, x + d * C->samples[i], (size_t)d * sizeof *x);
        ck_assert_int_eq(ct_vnormal_eval(C->t, x, C->samples[i], C->nrm + d * i, NULL, NULL, NULL), CT_OK);
    }
    const ct_imls_mode mode = HX ? CT_IMLS_HESSIAN : gX ? CT_IMLS_GRADIENT : CT_IMLS_VALUE;
    ck_assert_int_eq(ct_imls_eval(&C->prm, C->k, x + d * C->q, C->pos, C->nrm, mode, C->wi, C->nwi, &C->res,
                                  gX ? C->gz : NULL, HX ? C->Hz : NULL),
                     CT_OK);
    ck_assert(C->res.term);
    if (gX)
        ck_assert_int_eq(ct_vnormal_chain(C->t, x, C->q, C->k, C->samples, C->n, C->verts, C->gz,
                                          HX ? C->Hz : NULL, C->wc, C->nwc, gX, HX),
                         CT_OK);
    return C->res.psi;
}

/* FD of the composed ψ over all stencil coordinates; returns max(grad err, Hessian err) */
static double comp_fd(comp *C, double *x, const char *what)
{
    const int d = C->dim, NX = d * C->n;
    double *g = malloc((size_t)NX * sizeof *g), *H = malloc((size_t)NX * NX * sizeof *H);
    double *gfd = malloc((size_t)NX * sizeof *gfd), *Hfd = malloc((size_t)NX * NX * sizeof *Hfd);
    double *gp = malloc((size_t)NX * sizeof *gp), *gm = malloc((size_t)NX * sizeof *gm);
    const double psi = comp_eval(C, x, g, H);
    const double amin = C->res.a_min, amax = C->res.a_max;
    const int ns = C->res.n_support;
    const double h1 = 1e-6, h2 = 1e-5;
    for (int j = 0; j < NX; ++j) {
        double *xj = x + d * C->verts[j / d] + j % d;
        const double x0 = *xj;
        *xj = x0 + h1;
        const double fp = comp_eval(C, x, NULL, NULL);
        *xj = x0 - h1;
        const double fm = comp_eval(C, x, NULL, NULL);
        gfd[j] = (fp - fm) / (2 * h1);
        *xj = x0 + h2;
        comp_eval(C, x, gp, NULL);
        *xj = x0 - h2;
        comp_eval(C, x, gm, NULL);
        *xj = x0;
        for (int i = 0; i < NX; ++i) Hfd[i * NX + j] = (gp[i] - gm[i]) / (2 * h2);
    }
    const double eg = ct_test_diffnorm(g, gfd, (size_t)NX) / ct_test_norm(gfd, (size_t)NX);
    const double eh = ct_test_diffnorm(H, Hfd, (size_t)NX * NX) / ct_test_norm(Hfd, (size_t)NX * NX);
    /* translation invariance: Σ over the stencil's vertices of the gradient blocks, and of the
     * Hessian's block rows */
    double ts = 0.0, th = 0.0;
    for (int a = 0; a < d; ++a) {
        double s = 0.0;
        for (int u = 0; u < C->n; ++u) s += g[d * u + a];
        ts = fmax(ts, fabs(s));
        for (int r = 0; r < NX; ++r) {
            double sh = 0.0;
            for (int u = 0; u < C->n; ++u) sh += H[(size_t)r * NX + d * u + a];
            th = fmax(th, fabs(sh));
        }
    }
    ts /= ct_test_norm(g, (size_t)NX);
    th /= ct_test_norm(H, (size_t)NX * NX);
    double asym = 0.0;
    for (int i = 0; i < NX; ++i)
        for (int j = 0; j < NX; ++j) asym = fmax(asym, fabs(H[(size_t)i * NX + j] - H[(size_t)j * NX + i]));
    printf("chain %s: k = %d (support %d), stencil %d vertices, psi = %.4f, robust weights %.3f..%.3f; "
           "gradient rel err %.2e, Hessian rel err %.2e; translation: sum grad %.1e, sum Hessian rows %.1e\n",
           what, C->k, ns, C->n, psi, amin, amax, eg, eh, ts, th);
    ck_assert(asym == 0.0);
    ck_assert(ts < 1e-12 && th < 1e-12);
    free(g), free(H), free(gfd), free(Hfd), free(gp), free(gm);
    return fmax(eg, eh);
}

/* the surface vertices of B within R of y (excluding `skip`), into s; returns k */
static int gather(const body *B, int dim, const double *y, double R, int skip, int *s, int cap)
{
    int k = 0;
    for (int i = 0; i < B->s.nbv && k < cap; ++i) {
        const int v = B->s.bverts[i];
        if (v == skip) continue;
        double r2 = 0.0;
        for (int a = 0; a < dim; ++a) r2 += (B->x[dim * v + a] - y[a]) * (B->x[dim * v + a] - y[a]);
        if (r2 < R * R) s[k++] = v;
    }
    return k;
}

START_TEST(test_chain_fd_3d)
{
    rng = 0x243f6a8885a308d3ull + 4u; /* the same stream with or without fork */
    double worst = 0.0, wmin = 1.0;
    body B;
    body_box(&B, 4, 1, 0.15); /* a jittered sphere, ē ≈ 0.4 */
    int samples[64];
    for (int trial = 0; trial < 4; ++trial) {
        const double R = 0.8 + 0.1 * trial;
        /* (a) a query vertex off the surface: an interior mesh vertex moved outside */
        int q = -1;
        for (int v = 0; v < B.m.nv && q < 0; ++v)
            if (B.s.vert_area[v] == 0.0) q = v;
        ck_assert_int_ge(q, 0);
        const int anchor = B.s.bverts[(7 * trial + 3) % B.s.nbv];
        for (int a = 0; a < 3; ++a) B.x[3 * q + a] = 1.08 * B.x[3 * anchor + a] + 0.05 * ct_test_xs_pm1(&rng);
        int k = gather(&B, 3, B.x + 3 * q, R, -1, samples, 64);
        comp C;
        comp_init(&C, &B.t, R, q, k, samples);
        char what[64];
        snprintf(what, sizeof what, "3D off-surface query, R = %.1f", R);
        worst = fmax(worst, comp_fd(&C, B.x, what));
        wmin = fmin(wmin, C.res.a_min);
        comp_free(&C);
        /* (b) the body samples itself: q a surface vertex pushed out, in its neighbours' rings */
        const int qs = anchor;
        double saved[3];
        memcpy(saved, B.x + 3 * qs, sizeof saved);
        for (int a = 0; a < 3; ++a) B.x[3 * qs + a] *= 1.06;
        k = gather(&B, 3, B.x + 3 * qs, R, qs, samples, 64);
        comp_init(&C, &B.t, R, qs, k, samples);
        snprintf(what, sizeof what, "3D self (q in rings), R = %.1f", R);
        worst = fmax(worst, comp_fd(&C, B.x, what));
        wmin = fmin(wmin, C.res.a_min);
        comp_free(&C);
        if (trial == 0) { /* (c) q is also one of the samples (x and p_i the same vertex) */
            k = gather(&B, 3, B.x + 3 * qs, R, -1, samples, 64);
            comp_init(&C, &B.t, R, qs, k, samples);
            worst = fmax(worst, comp_fd(&C, B.x, "3D self, q also a sample"));
            comp_free(&C);
        }
        memcpy(B.x + 3 * qs, saved, sizeof saved);
    }
    body_free(&B);
    printf("3D chain: worst FD rel err %.2e, smallest robust weight %.3f\n", worst, wmin);
    ck_assert(worst < 1e-6);
    ck_assert(wmin < 0.9);
}
END_TEST

START_TEST(test_chain_fd_3d_open)
{
    rng = 0x243f6a8885a308d3ull + 5u; /* the same stream with or without fork */
    /* an open cap: the jittered sphere's faces with centroid z > −0.2; query near the border */
    body B;
    body_box(&B, 4, 1, 0.15);
    int *cells = malloc((size_t)B.s.nf * 3 * sizeof *cells), nf = 0;
    for (int f = 0; f < B.s.nf; ++f) {
        double zc = 0.0;
        for (int a = 0; a < 3; ++a) zc += B.x[3 * B.s.faces[3 * f + a] + 2] / 3.0;
        if (zc > -0.2) {
            memcpy(cells + 3 * nf, B.s.faces + 3 * f, 3 * sizeof *cells);
            ++nf;
        }
    }
    ct_vnormal_topo t;
    ck_assert_int_eq(ct_vnormal_topo_init(&t, 3, B.m.nv, nf, cells), CT_OK);
    int q = -1;
    for (int v = 0; v < B.m.nv && q < 0; ++v)
        if (B.s.vert_area[v] == 0.0) q = v;
    B.x[3 * q] = 1.1, B.x[3 * q + 1] = 0.05, B.x[3 * q + 2] = -0.25;
    int samples[64], k = 0, border = 0;
    for (int v = 0; v < B.m.nv; ++v) {
        int m;
        ct_vnormal_ring(&t, v, &m);
        if (m < 2) continue;
        if (ct_test_diffnorm(B.x + 3 * v, B.x + 3 * q, 3) < 1.0 && k < 64) {
            samples[k++] = v;
            border += m - 1 > t.cell_ptr[v + 1] - t.cell_ptr[v]; /* open fan: one ring vertex more */
        }
    }
    printf("open cap: %d of the %d samples on the border\n", border, k);
    ck_assert_int_ge(border, 3);
    comp C;
    comp_init(&C, &t, 1.0, q, k, samples);
    const double e = comp_fd(&C, B.x, "3D open cap, border samples");
    comp_free(&C);
    ct_vnormal_topo_free(&t);
    free(cells);
    body_free(&B);
    ck_assert(e < 1e-6);
}
END_TEST

/* The cache (ct_vnormal_cache): its normals are ct_vnormal_eval's bitwise; the chain with the cache at
 * level 1 (gradient) and 2 (Hessian) against the chain without, for random ∇_z ψ / ∇²_z ψ (the Hessian
 * of μᵀn summed from the cached component Hessians: equal to rounding); filling raises the level of the
 * earlier entries, skips duplicates and grows past its first capacity (256 entries). */
static void cache_case(body *B, int dim, double R)
{
    ct_vnormal_cache c;
    ct_vnormal_cache_init(&c);
    int samples[64];
    const int q = B->s.bverts[0];
    double y[3];
    for (int a = 0; a < dim; ++a) y[a] = B->x[dim * q + a];
    const int k = gather(B, dim, y, R, q, samples, 64);
    ck_assert_int_gt(k, 2);
    /* level 0 for every surface vertex (more than 256: growth), with duplicates */
    ck_assert_int_eq(ct_vnormal_cache_fill(&c, &B->t, B->x, B->s.nbv, B->s.bverts, 0, 1), CT_OK);
    ck_assert_int_eq(ct_vnormal_cache_fill(&c, &B->t, B->x, k, samples, 0, 1), CT_OK);
    ck_assert_int_eq(c.n, B->s.nbv);
    for (int i = 0; i < B->s.nbv; ++i) {
        double n[3];
        ck_assert_int_eq(ct_vnormal_eval(&B->t, B->x, B->s.bverts[i], n, NULL, NULL, NULL), CT_OK);
        ck_assert(memcmp(n, ct_vnormal_cache_normal(&c, B->s.bverts[i]), (size_t)dim * sizeof *n) == 0);
    }
    const int n = ct_vnormal_stencil(&B->t, q, k, samples, NULL, 0);
    int *verts = malloc((size_t)n * sizeof *verts);
    ct_vnormal_stencil(&B->t, q, k, samples, verts, n);
    const int p = dim * (1 + 2 * k), NX = dim * n;
    double *gz = malloc((size_t)p * sizeof *gz), *Hz = malloc((size_t)p * p * sizeof *Hz);
    for (int i = 0; i < p; ++i) gz[i] = ct_test_xs_pm1(&rng);
    for (int i = 0; i < p; ++i)
        for (int j = 0; j <= i; ++j) Hz[(size_t)i * p + j] = Hz[(size_t)j * p + i] = ct_test_xs_pm1(&rng);
    const size_t nw = ct_vnormal_chain_work_size(&B->t, k, n);
    double *w = malloc(nw * sizeof *w), *g0 = malloc((size_t)NX * sizeof *g0), *g1 = malloc((size_t)NX * sizeof *g1);
    double *H0 = malloc((size_t)NX * NX * sizeof *H0), *H1 = malloc((size_t)NX * NX * sizeof *H1);
    ck_assert_int_eq(ct_vnormal_chain(&B->t, B->x, q, k, samples, n, verts, gz, Hz, w, nw, g0, H0), CT_OK);
    /* level 1 for the samples: the gradient from the cache, the Hessian (level 2 needed) not */
    ck_assert_int_eq(ct_vnormal_cache_fill(&c, &B->t, B->x, k, samples, 1, 1), CT_OK);
    ck_assert_int_eq(c.level, 1);
    ck_assert_int_eq(ct_vnormal_chain_cached(&B->t, &c, B->x, q, k, samples, n, verts, gz, NULL, w, nw, g1, NULL), CT_OK);
    const double eg1 = ct_test_diffnorm(g0, g1, (size_t)NX) / ct_test_norm(g0, (size_t)NX);
    ck_assert_int_eq(ct_vnormal_chain_cached(&B->t, &c, B->x, q, k, samples, n, verts, gz, Hz, w, nw, g1, H1), CT_OK);
    const double eh1 = ct_test_diffnorm(H0, H1, (size_t)NX * NX);
    /* level 2 (raises every entry) */
    ck_assert_int_eq(ct_vnormal_cache_fill(&c, &B->t, B->x, k, samples, 2, 1), CT_OK);
    ck_assert_int_eq(c.level, 2);
    ck_assert_int_eq(ct_vnormal_chain_cached(&B->t, &c, B->x, q, k, samples, n, verts, gz, Hz, w, nw, g1, H1), CT_OK);
    const double eg2 = ct_test_diffnorm(g0, g1, (size_t)NX) / ct_test_norm(g0, (size_t)NX);
    const double eh2 = ct_test_diffnorm(H0, H1, (size_t)NX * NX) / ct_test_norm(H0, (size_t)NX * NX);
    printf("%dD cache: %d entries, k = %d, stencil %d: gradient level 1 %.1e, level 2 %.1e; Hessian below level 2 "
           "%.1e (computed), level 2 %.1e\n", dim, c.n, k, n, eg1, eg2, eh1, eh2);
    ck_assert(eg1 == 0.0 && eg2 == 0.0 && eh1 == 0.0);
    ck_assert_double_lt(eh2, 1e-14);
    ct_vnormal_cache_clear(&c);
    ck_assert(c.n == 0 && c.level == -1 && ct_vnormal_cache_normal(&c, q) == NULL);
    free(verts), free(gz), free(Hz), free(w), free(g0), free(g1), free(H0), free(H1);
    ct_vnormal_cache_free(&c);
}

START_TEST(test_cache)
{
    rng = 0x243f6a8885a308d3ull + 9u;
    body B;
    body_box(&B, 6, 1, 0.15);
    cache_case(&B, 3, 0.6);
    body_free(&B);
    body_rect(&B, 80, 1, 0.15);
    cache_case(&B, 2, 0.2);
    body_free(&B);
}
END_TEST

START_TEST(test_chain_fd_2d)
{
    rng = 0x243f6a8885a308d3ull + 6u; /* the same stream with or without fork */
    double worst = 0.0, wmin = 1.0;
    body B;
    body_rect(&B, 8, 1, 0.15); /* a jittered circle, ē ≈ 0.2 */
    int samples[64];
    for (int trial = 0; trial < 4; ++trial) {
        const double R = 0.5 + 0.1 * trial;
        int q = -1;
        for (int v = 0; v < B.m.nv && q < 0; ++v)
            if (B.s.vert_area[v] == 0.0) q = v;
        const int anchor = B.s.bverts[(5 * trial + 1) % B.s.nbv];
        for (int a = 0; a < 2; ++a) B.x[2 * q + a] = 1.08 * B.x[2 * anchor + a] + 0.04 * ct_test_xs_pm1(&rng);
        int k = gather(&B, 2, B.x + 2 * q, R, -1, samples, 64);
        comp C;
        comp_init(&C, &B.t, R, q, k, samples);
        char what[64];
        snprintf(what, sizeof what, "2D off-surface query, R = %.1f", R);
        worst = fmax(worst, comp_fd(&C, B.x, what));
        wmin = fmin(wmin, C.res.a_min);
        comp_free(&C);
        const int qs = anchor;
        double saved[2];
        memcpy(saved, B.x + 2 * qs, sizeof saved);
        for (int a = 0; a < 2; ++a) B.x[2 * qs + a] *= 1.05;
        k = gather(&B, 2, B.x + 2 * qs, R, qs, samples, 64);
        comp_init(&C, &B.t, R, qs, k, samples);
        snprintf(what, sizeof what, "2D self (q in rings), R = %.1f", R);
        worst = fmax(worst, comp_fd(&C, B.x, what));
        wmin = fmin(wmin, C.res.a_min);
        comp_free(&C);
        memcpy(B.x + 2 * qs, saved, sizeof saved);
    }
    /* an open polyline: the circle's segments with y > −0.3 (two end vertices), query near an end */
    int *cells = malloc((size_t)B.s.ned * 2 * sizeof *cells), ns = 0;
    for (int e = 0; e < B.s.ned; ++e) {
        const int a = B.s.edges[2 * e], b = B.s.edges[2 * e + 1];
        if (B.x[2 * a + 1] > -0.3 && B.x[2 * b + 1] > -0.3) {
            cells[2 * ns] = a, cells[2 * ns + 1] = b;
            ++ns;
        }
    }
    ct_vnormal_topo t;
    ck_assert_int_eq(ct_vnormal_topo_init(&t, 2, B.m.nv, ns, cells), CT_OK);
    int q = -1;
    for (int v = 0; v < B.m.nv && q < 0; ++v)
        if (B.s.vert_area[v] == 0.0) q = v;
    B.x[2 * q] = 1.05, B.x[2 * q + 1] = -0.35;
    int k = 0, ends = 0;
    for (int v = 0; v < B.m.nv; ++v) {
        int m;
        ct_vnormal_ring(&t, v, &m);
        if (m >= 2 && ct_test_diffnorm(B.x + 2 * v, B.x + 2 * q, 2) < 0.9 && k < 64) {
            samples[k++] = v;
            ends += t.cell_ptr[v + 1] - t.cell_ptr[v] == 1;
        }
    }
    ck_assert_int_ge(ends, 1);
    comp C;
    comp_init(&C, &t, 0.9, q, k, samples);
    worst = fmax(worst, comp_fd(&C, B.x, "2D open polyline, end samples"));
    comp_free(&C);
    ct_vnormal_topo_free(&t);
    free(cells);
    body_free(&B);
    printf("2D chain: worst FD rel err %.2e, smallest robust weight %.3f\n", worst, wmin);
    ck_assert(worst < 1e-6);
    ck_assert(wmin < 0.9);
}
END_TEST

START_TEST(test_timing)
{
    rng = 0x243f6a8885a308d3ull + 7u; /* the same stream with or without fork */
    body B;
    body_box(&B, 8, 1, 0.1); /* sphere, ē ≈ 0.2 (valence 6 away from the cube's corners) */
    const int ktarget[3] = {7, 11, 15};
    for (int c = 0; c < 3; ++c) {
        int q = -1;
        for (int v = 0; v < B.m.nv && q < 0; ++v)
            if (B.s.vert_area[v] == 0.0) q = v;
        /* a face-centre vertex of the +x side: valence 6 around */
        int anchor = -1;
        double best = 1e9;
        for (int i = 0; i < B.s.nbv; ++i) {
            const double *p = B.x + 3 * B.s.bverts[i];
            const double dd = fabs(p[1] - 0.2) + fabs(p[2] - 0.1) + fabs(p[0] - 1.0);
            if (dd < best) best = dd, anchor = B.s.bverts[i];
        }
        for (int a = 0; a < 3; ++a) B.x[3 * q + a] = 1.03 * B.x[3 * anchor + a];
        int samples[64], k = 0;
        double R = 0.2; /* the smallest radius (steps of 0.005) with at least ktarget samples */
        while ((k = gather(&B, 3, B.x + 3 * q, R, -1, samples, 64)) < ktarget[c]) R += 0.005;
        comp C;
        comp_init(&C, &B.t, R, q, k, samples);
        int msum = 0;
        for (int i = 0; i < k; ++i) {
            int m;
            ct_vnormal_ring(&B.t, samples[i], &m);
            msum += m - 1;
        }
        const int NX = 3 * C.n;
        double *g = malloc((size_t)NX * sizeof *g), *H = malloc((size_t)NX * NX * sizeof *H);
        comp_eval(&C, B.x, g, H);
        /* each timing: the fastest of 7 batches of 200 (the machine is shared) */
        const int reps = 200, batches = 7;
        double t_imls = 1e30, t_nrm = 1e30, t_chain = 1e30, t_chain_g = 1e30, t_st = 1e30;
        for (int bt = 0; bt < batches; ++bt) {
            double t0 = ct_test_now();
            for (int r = 0; r < reps; ++r)
                ct_imls_eval(&C.prm, k, B.x + 3 * q, C.pos, C.nrm, CT_IMLS_HESSIAN, C.wi, C.nwi, &C.res, C.gz,
                             C.Hz);
            t_imls = fmin(t_imls, (ct_test_now() - t0) / reps * 1e6);
            t0 = ct_test_now();
            double nn[3];
            for (int r = 0; r < reps; ++r)
                for (int i = 0; i < k; ++i) ct_vnormal_eval(&B.t, B.x, samples[i], nn, NULL, NULL, NULL);
            t_nrm = fmin(t_nrm, (ct_test_now() - t0) / reps * 1e6);
            t0 = ct_test_now();
            for (int r = 0; r < reps; ++r)
                ct_vnormal_chain(&B.t, B.x, q, k, samples, C.n, C.verts, C.gz, C.Hz, C.wc, C.nwc, g, H);
            t_chain = fmin(t_chain, (ct_test_now() - t0) / reps * 1e6);
            t0 = ct_test_now();
            for (int r = 0; r < reps; ++r)
                ct_vnormal_chain(&B.t, B.x, q, k, samples, C.n, C.verts, C.gz, NULL, C.wc, C.nwc, g, NULL);
            t_chain_g = fmin(t_chain_g, (ct_test_now() - t0) / reps * 1e6);
            t0 = ct_test_now();
            for (int r = 0; r < reps; ++r) ct_vnormal_stencil(&B.t, q, k, samples, C.verts, C.n);
            t_st = fmin(t_st, (ct_test_now() - t0) / reps * 1e6);
        }
        printf("timing 3D R = %.3f, k = %d (mean one-ring %.1f + 1), stencil %d vertices (%d dofs): normals %.2f us, "
               "stencil list %.2f us, imls value+grad+Hessian %.1f us, chain gradient %.2f us, "
               "chain gradient+Hessian %.1f us; total %.1f us per chained evaluation\n",
               R, k, (double)msum / k, C.n, NX, t_nrm, t_st, t_imls, t_chain_g, t_chain,
               t_nrm + t_st + t_imls + t_chain);
        free(g), free(H);
        comp_free(&C);
    }
    body_free(&B);
}
END_TEST

static Suite *vertex_normals_suite(void)
{
    Suite *s = suite_create("vertex_normals");
    TCase *tc = tcase_create("vertex_normals");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_fd_normals_3d);
    tcase_add_test(tc, test_fd_normals_2d);
    tcase_add_test(tc, test_degenerate);
    tcase_add_test(tc, test_chain_errors);
    tcase_add_test(tc, test_orientation);
    tcase_add_test(tc, test_chain_fd_3d);
    tcase_add_test(tc, test_chain_fd_3d_open);
    tcase_add_test(tc, test_chain_fd_2d);
    tcase_add_test(tc, test_cache);
    tcase_add_test(tc, test_timing);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(vertex_normals_suite)
