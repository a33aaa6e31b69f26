/* check_springs.c — springs between two vertices (scene "springs", core/sim/springs.c; issue 17):
 * the kernel E = 1/2 k (|x_a - x_b| - L)^2 against central differences (gradient and Hessian, L = 0
 * and L > 0 stretched and compressed, 2D and 3D) and its PSD projection; the spring's part of the
 * whole incremental potential through the embedding (gradient and Hessian-vector products); and
 * physics with closed forms derived below: a bar and a spring in series (static displacement,
 * spring force, clamp reaction, and the sensitivity du/dd = k/(k + EA/L_b)), the static stretch of
 * a body hung on springs (Σ k Δ = m g, 2D and 3D), the implicit-Euler oscillation of a body on a
 * zero-length spring (the discrete recurrence and its period 2π h / atan(ω h)), and dx/dθ through a
 * spring of rest length L > 0 to an anchor on a circular track against central differences. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contactlab/ct_scene.h"
#include "contactlab/ct_sensitivity.h"
#include "contactlab/ct_sim.h"
#include "sim/assemble.h"
#include "ct_test_util.h"

static void run_steps(ct_sim *sim, int n)
{
    ct_diag d;
    ct_diag_init(&d);
    for (int i = 0; i < n; ++i) {
        ct_status st = ct_sim_step(sim, &d);
        if (st != CT_OK) ct_diag_print(&d, stderr, "step: ");
        ck_assert_int_eq(st, CT_OK);
    }
    ct_diag_free(&d);
}

/* ---------- the kernel ---------- */

typedef struct {
    int dim;
    double k, L;
} spring_ctx;

static double kern_E(const double *x, void *c)
{
    const spring_ctx *s = c;
    return ct_spring_eval(s->dim, x, x + s->dim, s->k, s->L, 0, NULL, NULL);
}

static void kern_g(const double *x, void *c, double *g)
{
    const spring_ctx *s = c;
    ct_spring_eval(s->dim, x, x + s->dim, s->k, s->L, 0, g, NULL);
}

/* y = H v, H n x n column-major */
static void matvec(const double *H, int n, const double *v, double *y)
{
    for (int i = 0; i < n; ++i) {
        y[i] = 0.0;
        for (int j = 0; j < n; ++j) y[i] += H[i + n * j] * v[j];
    }
}

/* Gradient and Hessian against central differences (ε = 1e-6 m on points 1 m apart: truncation
 * ε² |E'''| ~ 1e-12 k, round-off 1e-16 E / ε ~ 1e-10 k); points at random, r = |x_a - x_b| about
 * 1 m, L = 0, 0.6 (stretched) and 1.7 (compressed: the exact Hessian is indefinite there). The
 * projected Hessian: exact when r >= L; when r < L its eigenvectors [n; -n], [t; -t] (t ⟂ n) and
 * [u; u] have the eigenvalues 2k, 0 and 0 (the analytic eigen-decomposition in springs.c). */
START_TEST(test_kernel_fd)
{
    unsigned long long seed = 17;
    double worst_g = 0.0, worst_h = 0.0, worst_p = 0.0;
    int ncase = 0;
    for (int dim = 2; dim <= 3; ++dim)
        for (int li = 0; li < 3; ++li)
            for (int rep = 0; rep < 4; ++rep) {
                const int n = 2 * dim;
                spring_ctx c = {dim, 1e3 * (1.0 + rep), li == 0 ? 0.0 : li == 1 ? 0.6 : 1.7};
                double x[6], d[3], r2 = 0.0;
                for (int i = 0; i < n; ++i) x[i] = ct_test_lcg01(&seed) - 0.5;
                for (int i = 0; i < dim; ++i) { /* x_b = x_a + a random vector of length about 1 */
                    d[i] = ct_test_lcg01(&seed) - 0.5;
                    r2 += d[i] * d[i];
                }
                const double r = 0.9 + 0.2 * ct_test_lcg01(&seed);
                for (int i = 0; i < dim; ++i) x[dim + i] = x[i] + d[i] * r / sqrt(r2);
                double g[6], gfd[6], H[36], Hfd[36], P[36];
                const double E = ct_spring_eval(dim, x, x + dim, c.k, c.L, 0, g, H);
                ck_assert_double_lt(fabs(E - 0.5 * c.k * (r - c.L) * (r - c.L)), 1e-12 * c.k);
                ct_fd_gradient(kern_E, x, (size_t)n, 1e-6, &c, gfd);
                ct_fd_hessian(kern_g, x, (size_t)n, 1e-6, &c, Hfd);
                worst_g = fmax(worst_g, ct_rel_err_vec(g, gfd, (size_t)n, c.k * 1e-3));
                worst_h = fmax(worst_h, ct_rel_err_vec(H, Hfd, (size_t)n * n, c.k));
                ct_spring_eval(dim, x, x + dim, c.k, c.L, 1, NULL, P);
                if (r >= c.L) {
                    worst_p = fmax(worst_p, ct_rel_err_vec(P, H, (size_t)n * n, c.k));
                } else { /* eigenvectors of the projected Hessian */
                    double nn[3], t[3] = {0, 0, 0}, v[6], y[6];
                    for (int i = 0; i < dim; ++i) nn[i] = (x[i] - x[dim + i]) / r;
                    const double tn = hypot(nn[0], nn[1]);
                    t[0] = -nn[1] / tn, t[1] = nn[0] / tn; /* a unit vector ⟂ n */
                    for (int i = 0; i < dim; ++i) v[i] = nn[i], v[dim + i] = -nn[i];
                    matvec(P, n, v, y);
                    for (int i = 0; i < n; ++i) worst_p = fmax(worst_p, fabs(y[i] - 2 * c.k * v[i]) / c.k);
                    for (int i = 0; i < dim; ++i) v[i] = t[i], v[dim + i] = -t[i];
                    matvec(P, n, v, y);
                    for (int i = 0; i < n; ++i) worst_p = fmax(worst_p, fabs(y[i]) / c.k);
                    for (int i = 0; i < dim; ++i) v[i] = v[dim + i] = ct_test_lcg01(&seed);
                    matvec(P, n, v, y);
                    for (int i = 0; i < n; ++i) worst_p = fmax(worst_p, fabs(y[i]) / c.k);
                    /* and the exact one is indefinite there: [t; -t] has 2k (1 - L/r) < 0 */
                    for (int i = 0; i < dim; ++i) v[i] = t[i], v[dim + i] = -t[i];
                    matvec(H, n, v, y);
                    double vy = 0.0;
                    for (int i = 0; i < n; ++i) vy += v[i] * y[i];
                    ck_assert_double_lt(fabs(vy - 2 * 2 * c.k * (1 - c.L / r)) / c.k, 1e-12);
                }
                ++ncase;
            }
    /* r = 0: L = 0 is smooth (g = 0, H = k [I -I; -I I]); L > 0 regularised the same way */
    double x0[4] = {0.3, -0.2, 0.3, -0.2}, g0[4], H0[16];
    ct_spring_eval(2, x0, x0 + 2, 5.0, 0.5, 0, g0, H0);
    for (int i = 0; i < 4; ++i) ck_assert(g0[i] == 0.0);
    ck_assert(H0[0] == 5.0 && H0[2 + 4 * 0] == -5.0 && H0[1 + 4 * 0] == 0.0);
    printf("spring kernel, %d cases (2D/3D, L = 0, stretched, compressed): gradient rel. err %.2e, Hessian rel. err "
           "%.2e (of k), projection %.2e\n", ncase, worst_g, worst_h, worst_p);
    ck_assert_double_lt(worst_g, 1e-8);
    ck_assert_double_lt(worst_h, 1e-7);
    ck_assert_double_lt(worst_p, 1e-12);
}
END_TEST

/* ---------- the spring part of the whole incremental potential, through the embedding ---------- */

/* Two bodies: an embedded one (fine mesh on a coarse one: x = J q) clamped at -x and a full one;
 * springs between the fine vertices of both (L > 0), to a clamped vertex (L = 0) and within the
 * embedded body (L > 0, compressed). The spring part of E, J^T g and J^T H J is the difference of
 * the same scene with and without "springs" at the same q. */
static void ip_scene(char *buf, size_t n, int dim, int with_springs)
{
    const char *springs2 =
        ",\"springs\":[{\"a\":{\"body\":\"e\",\"vertex\":20},\"b\":{\"body\":\"f\",\"vertex\":3},\"stiffness\":300,"
        "\"rest_length\":0.2},{\"a\":{\"body\":\"e\",\"vertex\":0},\"b\":{\"body\":\"e\",\"vertex\":13},\"stiffness\":200},"
        "{\"a\":{\"body\":\"e\",\"vertex\":5},\"b\":{\"body\":\"e\",\"vertex\":22},\"stiffness\":500,\"rest_length\":1.5}]";
    const char *springs3 =
        ",\"springs\":[{\"a\":{\"body\":\"e\",\"vertex\":40},\"b\":{\"body\":\"f\",\"vertex\":5},\"stiffness\":300,"
        "\"rest_length\":0.2},{\"a\":{\"body\":\"e\",\"vertex\":0},\"b\":{\"body\":\"e\",\"vertex\":30},\"stiffness\":200},"
        "{\"a\":{\"body\":\"e\",\"vertex\":7},\"b\":{\"body\":\"e\",\"vertex\":44},\"stiffness\":500,\"rest_length\":1.5}]";
    if (dim == 3)
        snprintf(buf, n,
                 "{\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":0.01},\"gravity\":[0,-9.81,0],"
                 "\"bodies\":[{\"name\":\"e\",\"mesh\":{\"generator\":\"box\",\"size\":[1,0.4,0.4],\"cells\":[4,2,2]},"
                 "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"box\",\"size\":[1.1,0.5,0.5],"
                 "\"cells\":[2,1,1],\"transform\":{\"translate\":[-0.05,-0.05,-0.05]}}},"
                 "\"material\":{\"model\":\"fixed_corotated\",\"E\":1e4,\"nu\":0.3,\"density\":100},"
                 "\"fixed\":{\"select\":{\"side\":\"-x\"}}},"
                 "{\"name\":\"f\",\"mesh\":{\"generator\":\"box\",\"origin\":[1.2,0,0],\"size\":[0.2,0.2,0.2],"
                 "\"cells\":[1,1,1]},\"material\":{\"model\":\"neo_hookean\",\"E\":1e4,\"nu\":0.3,\"density\":100}}]%s}",
                 with_springs ? springs3 : "");
    else
        snprintf(buf, n,
                 "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.01},\"gravity\":[0,-9.81],"
                 "\"bodies\":[{\"name\":\"e\",\"mesh\":{\"generator\":\"rect\",\"size\":[1,0.4],\"cells\":[6,3]},"
                 "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"rect\",\"size\":[1.1,0.5],"
                 "\"cells\":[3,1],\"transform\":{\"translate\":[-0.05,-0.05]}}},"
                 "\"material\":{\"model\":\"neo_hookean\",\"E\":1e4,\"nu\":0.3,\"density\":100},"
                 "\"fixed\":{\"select\":{\"side\":\"-x\"}}},"
                 "{\"name\":\"f\",\"mesh\":{\"generator\":\"rect\",\"origin\":[1.2,0],\"size\":[0.2,0.2],\"cells\":[1,1]},"
                 "\"material\":{\"model\":\"neo_hookean\",\"E\":1e4,\"nu\":0.3,\"density\":100}}]%s}",
                 with_springs ? springs2 : "");
}

static void ip_fd(int dim)
{
    char json[4096];
    ct_scene sc[2];
    ct_sim *sim[2];
    for (int w = 0; w < 2; ++w) {
        ip_scene(json, sizeof json, dim, w);
        sim[w] = ct_test_make_sim(&sc[w], json, NULL);
        run_steps(sim[w], 1);
    }
    ck_assert_int_eq(sim[1]->dofs.identity, 0);
    ck_assert_int_eq(sim[1]->nsprings, 3);
    const int n = sim[1]->ndof;
    ck_assert_int_eq(n, sim[0]->ndof);
    double *q = malloc(n * sizeof *q), *qp = malloc(n * sizeof *qp), *dir = malloc(n * sizeof *dir);
    double *g[2], *gp[2], *gm[2];
    for (int w = 0; w < 2; ++w) {
        g[w] = malloc(n * sizeof *g[w]);
        gp[w] = malloc(n * sizeof *gp[w]);
        gm[w] = malloc(n * sizeof *gm[w]);
    }
    unsigned long long seed = 5;
    for (int i = 0; i < n; ++i) q[i] = sim[1]->q[i] + (sim[1]->fixed[i] ? 0.0 : 0.1 * (ct_test_lcg01(&seed) - 0.5));
    double E[2];
    for (int w = 0; w < 2; ++w) ck_assert_int_eq(ct_sim_ip_eval(sim[w], q, &E[w], g[w]), CT_OK);
    /* E_s itself: h^2 × the springs' energy at x(q) */
    ct_sim *s1 = sim[1];
    double *x = malloc((size_t)s1->nx * dim * sizeof *x);
    ct_dofs_map(&s1->dofs, q, x);
    double Es = 0.0;
    for (int i = 0; i < 3; ++i)
        Es += ct_spring_eval(dim, x + (size_t)s1->spring_v[2 * i] * dim, x + (size_t)s1->spring_v[2 * i + 1] * dim,
                             sc[1].springs[i].k, sc[1].springs[i].rest_length, 0, NULL, NULL);
    const double h2 = 0.01 * 0.01;
    const double eerr = fabs((E[1] - E[0]) - h2 * Es) / (h2 * Es);
    /* gradient of the spring part: central differences on every free dof */
    double num = 0, den = 0;
    const double eps = 1e-6;
    for (int i = 0; i < n; ++i) {
        if (s1->fixed[i]) continue;
        double Ep[2], Em[2];
        memcpy(qp, q, n * sizeof *q);
        for (int w = 0; w < 2; ++w) {
            qp[i] = q[i] + eps;
            ct_sim_ip_eval(sim[w], qp, &Ep[w], NULL);
            qp[i] = q[i] - eps;
            ct_sim_ip_eval(sim[w], qp, &Em[w], NULL);
        }
        const double fd = ((Ep[1] - Ep[0]) - (Em[1] - Em[0])) / (2 * eps), an = g[1][i] - g[0][i];
        num += (fd - an) * (fd - an);
        den += an * an;
    }
    const double gerr = sqrt(num / den);
    /* Hessian-vector products of the spring part (exact Hessians: project = 0) */
    const ct_csc *A[2];
    ct_diag d;
    ct_diag_init(&d);
    const int nf = s1->as->nfree;
    double *df = malloc(nf * sizeof *df), *Hd[2], herr = 0.0;
    for (int w = 0; w < 2; ++w) Hd[w] = malloc(nf * sizeof *Hd[w]);
    for (int trial = 0; trial < 3; ++trial) {
        memset(dir, 0, n * sizeof *dir);
        for (int k = 0; k < nf; ++k) df[k] = dir[s1->as->free_dof[k]] = ct_test_lcg01(&seed) - 0.5;
        for (int w = 0; w < 2; ++w) {
            ck_assert_int_eq(ct_sim_ip_hessian(sim[w], q, 0, &A[w], &d), CT_OK);
            ct_csc_mult(A[w], 1, df, Hd[w]);
            for (int i = 0; i < n; ++i) qp[i] = q[i] + eps * dir[i];
            ct_sim_ip_eval(sim[w], qp, &E[w], gp[w]);
            for (int i = 0; i < n; ++i) qp[i] = q[i] - eps * dir[i];
            ct_sim_ip_eval(sim[w], qp, &E[w], gm[w]);
        }
        num = den = 0;
        for (int k = 0; k < nf; ++k) {
            const int i = s1->as->free_dof[k];
            const double fd = ((gp[1][i] - gm[1][i]) - (gp[0][i] - gm[0][i])) / (2 * eps), an = Hd[1][k] - Hd[0][k];
            num += (fd - an) * (fd - an);
            den += an * an;
        }
        herr = fmax(herr, sqrt(num / den));
    }
    printf("springs in the incremental potential (%dD, embedded body, %d fine vertices on %d q-vertices): E_s rel. "
           "err %.2e, J^T g rel. err %.2e, J^T H J v rel. err %.2e\n", dim, s1->nx, s1->nq, eerr, gerr, herr);
    ck_assert_double_lt(eerr, 1e-9);
    ck_assert_double_lt(gerr, 1e-6);
    ck_assert_double_lt(herr, 1e-6);
    for (int w = 0; w < 2; ++w) {
        free(g[w]);
        free(gp[w]);
        free(gm[w]);
        free(Hd[w]);
        ct_sim_destroy(sim[w]);
        ct_scene_free(&sc[w]);
    }
    free(q);
    free(qp);
    free(dir);
    free(x);
    free(df);
    ct_diag_free(&d);
}

START_TEST(test_ip_fd_2d) { ip_fd(2); }
END_TEST
START_TEST(test_ip_fd_3d) { ip_fd(3); }
END_TEST

/* ---------- a bar and a spring in series ----------
 * A bar (2D, L_b = 1 m, A = 0.1 m² at unit thickness, E = 1e6 Pa, ν = 0, 20 × 1 cells) clamped
 * at x = 0; its two end vertices at x = 1 m are tied by zero-length springs of stiffness k/2 each to
 * the two vertices of an anchor body (held entirely) that sit on them at rest and are moved by
 * d = 1e-6 m along x. Equal springs on the end segment's two vertices load it like a uniform
 * traction (each vertex carries half the segment), and with ν = 0 the bar's P1 solution under a
 * uniform end traction is the uniform strain u(X) = u_end X / L_b. Equilibrium of the end:
 * k (d − u_end) = (EA/L_b) u_end, so
 *     u_end = k d / (k + EA/L_b),  each spring's force on the bar = (k/2)(d − u_end),
 *     the clamp's reaction = −k (d − u_end),  du_end/dd = k / (k + EA/L_b),
 * up to the neo-Hookean nonlinearity at strain 1e-6 (relative 1e-6; tolerance 1e-5). */
static const double SER_EA_L = 1e6 * 0.1 / 1.0, SER_D = 1e-6;

static void series_json(char *buf, size_t n, double k, double dd)
{
    snprintf(buf, n,
             "{\"dim\":2,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},"
             "\"solver\":{\"newton_tol\":1e-13,\"force_tol\":1e-12,\"threads\":1},"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"rect\",\"size\":[1,0.1],\"cells\":[20,1]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0,\"density\":1000},"
             "\"fixed\":{\"select\":{\"side\":\"-x\"}}},"
             "{\"name\":\"anchor\",\"mesh\":{\"generator\":\"rect\",\"origin\":[1,0],\"size\":[0.05,0.1],\"cells\":[1,1]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0,\"density\":1000},"
             "\"fixed\":{\"select\":\"all\",\"motion\":[{\"until\":1,\"velocity\":[%.17g,0]}]}}],"
             "\"springs\":["
             "{\"name\":\"low\",\"a\":{\"body\":\"bar\",\"select\":{\"box\":{\"min\":[0.99,-0.01],\"max\":[1.01,0.01]}}},"
             "\"b\":{\"body\":\"anchor\",\"select\":{\"box\":{\"min\":[0.99,-0.01],\"max\":[1.01,0.01]}}},"
             "\"stiffness\":%.17g},"
             "{\"name\":\"high\",\"a\":{\"body\":\"bar\",\"select\":{\"box\":{\"min\":[0.99,0.09],\"max\":[1.01,0.11]}}},"
             "\"b\":{\"body\":1,\"select\":{\"box\":{\"min\":[0.99,0.09],\"max\":[1.01,0.11]}}},\"stiffness\":%.17g}]}",
             dd, k / 2, k / 2);
}

START_TEST(test_series)
{
    const double ks[] = {1e5, 3e4, 1e7};
    for (int c = 0; c < 3; ++c) {
        const double k = ks[c], want = k * SER_D / (k + SER_EA_L), dwant = k / (k + SER_EA_L);
        char json[4096];
        series_json(json, sizeof json, k, SER_D);
        ct_scene sc;
        ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
        run_steps(sim, 1);
        /* the bar's end vertices, their mean x displacement */
        double u = 0.0, worst_lin = 0.0;
        int nend = 0;
        for (int v = sim->bodies[0].x_off; v < sim->bodies[0].x_off + sim->bodies[0].nx; ++v) {
            const double X = sim->X[2 * v], uv = sim->x[2 * v] - X;
            worst_lin = fmax(worst_lin, fabs(uv - want * X) / want); /* u(X) = u_end X / L_b */
            if (X == 1.0) u += uv, nend++;
        }
        ck_assert_int_eq(nend, 2);
        u /= nend;
        double f[2][2], R[2];
        ct_sim_spring_force(sim, 0, f[0]);
        ct_sim_spring_force(sim, 1, f[1]);
        ct_selector clamp = {.body = 0, .kind = CT_SEL_SIDE, .axis = 0, .sign = -1, .tol = 1e-6};
        ct_sim_reaction(sim, &clamp, R);
        const double fwant = 0.5 * k * (SER_D - u);
        /* the sensitivity to the anchor's displacement (its motion velocity over the unit step) */
        const size_t nqd = (size_t)sim->ndof, nxd = (size_t)sim->nx * 2;
        double *dqf = calloc(nqd, sizeof *dqf), *dfe = calloc(nxd, sizeof *dfe), *dq = calloc(nqd, sizeof *dq);
        ct_diag d;
        ct_diag_init(&d);
        ct_sens_kind kind;
        ck_assert_int_eq(ct_sensitivity_param(sim, "bodies.anchor.fixed.0.motion.0.velocity.x", dqf, dfe, &kind, &d),
                         CT_OK);
        ct_sens_info info;
        ck_assert_int_eq(ct_sensitivity_solve(sim, 1, dqf, dfe, 0, dq, &info, &d), CT_OK);
        double du = 0.0;
        for (int v = 0; v < sim->bodies[0].nx; ++v)
            if (sim->X[2 * v] == 1.0) du += dq[2 * v] / nend;
        printf("series bar + spring, k = %g N/m, EA/L = %g N/m: u_end = %.10e m, k d/(k + EA/L) = %.10e (rel. err "
               "%.2e; linear field %.2e); spring forces %.6e, %.6e N vs k(d - u)/2 = %.6e; clamp reaction %.6e N; "
               "du/dd = %.12f vs k/(k + EA/L) = %.12f (rel. err %.2e, factor %s)\n",
               k, SER_EA_L, u, want, fabs(u / want - 1), worst_lin, f[0][0], f[1][0], fwant, R[0], du, dwant,
               fabs(du / dwant - 1), info.reused_factor ? "reused" : "new");
        ck_assert_double_lt(fabs(u / want - 1), 1e-5);
        ck_assert_double_lt(worst_lin, 1e-5);
        for (int e = 0; e < 2; ++e) {
            ck_assert_double_lt(fabs(f[e][0] / fwant - 1), 1e-5);
            ck_assert_double_lt(fabs(f[e][1]) / fwant, 1e-5);
        }
        ck_assert_double_lt(fabs(R[0] / (-2 * fwant) - 1), 1e-5);
        ck_assert_double_lt(fabs(du / dwant - 1), 1e-5);
        ck_assert_int_eq(info.reused_factor, 1);
        /* the same with a new factorization of the exact Hessian (sensitivity.c's own assembly) */
        double du2 = 0.0;
        ck_assert_int_eq(ct_sensitivity_solve(sim, 1, dqf, dfe, CT_SENS_REFACTOR, dq, &info, &d), CT_OK);
        for (int v = 0; v < sim->bodies[0].nx; ++v)
            if (sim->X[2 * v] == 1.0) du2 += dq[2 * v] / nend;
        ck_assert_double_lt(fabs(du2 - du), 1e-12);
        ct_diag_free(&d);
        free(dqf);
        free(dfe);
        free(dq);
        ct_sim_destroy(sim);
        ct_scene_free(&sc);
    }
}
END_TEST

/* ---------- a body hung on springs: the static stretch ----------
 * A block (2D: 0.1 × 0.1 m, 2 × 2 cells; 3D: 0.1 m cube, one cell) of density 1000 hangs under
 * gravity g = 9.81 from zero-length springs (stiffness k each) between its top vertices (2D: the two
 * corners; 3D: the four corners) and the coinciding vertices of a held "pin" body. The elastic
 * forces are internal (they sum to zero), so at equilibrium the springs carry the weight:
 *     Σ_i k (y_pin,i − y_a,i) = m g,   m = ρ × the block's area (volume),
 * however the block deforms (2D: by symmetry each spring stretches m g / 2k). */
static void hang(int dim)
{
    char json[8192];
    const double k = 2e3, rho = 1000.0, g = 9.81;
    if (dim == 2) {
        snprintf(json, sizeof json,
                 "{\"dim\":2,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},\"gravity\":[0,%g],"
                 "\"solver\":{\"newton_tol\":1e-12,\"force_tol\":1e-12,\"threads\":1},"
                 "\"bodies\":[{\"name\":\"block\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.1,0.1],\"cells\":[2,2]},"
                 "\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.3,\"density\":%g}},"
                 "{\"name\":\"pin\",\"mesh\":{\"generator\":\"rect\",\"origin\":[0,0.1],\"size\":[0.1,0.02],"
                 "\"cells\":[1,1]},\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.3,\"density\":%g},"
                 "\"fixed\":{\"select\":\"all\"}}],"
                 "\"springs\":[{\"a\":{\"body\":\"block\",\"select\":{\"box\":{\"min\":[-0.01,0.09],\"max\":[0.01,0.11]}}},"
                 "\"b\":{\"body\":\"pin\",\"vertex\":0},\"stiffness\":%g},"
                 "{\"a\":{\"body\":\"block\",\"select\":{\"box\":{\"min\":[0.09,0.09],\"max\":[0.11,0.11]}}},"
                 "\"b\":{\"body\":\"pin\",\"vertex\":1},\"stiffness\":%g}]}",
                 -g, rho, rho, k, k);
    } else {
        char springs[4096];
        size_t off = 0;
        for (int i = 0; i < 4; ++i) {
            const double cx = i & 1 ? 0.1 : 0.0, cz = i & 2 ? 0.1 : 0.0;
            off += (size_t)snprintf(springs + off, sizeof springs - off,
                                    "%s{\"a\":{\"body\":\"block\",\"select\":{\"box\":{\"min\":[%g,0.09,%g],"
                                    "\"max\":[%g,0.11,%g]}}},\"b\":{\"body\":\"pin\",\"select\":{\"box\":{\"min\":"
                                    "[%g,0.09,%g],\"max\":[%g,0.11,%g]}}},\"stiffness\":%g}",
                                    i ? "," : "", cx - 0.01, cz - 0.01, cx + 0.01, cz + 0.01, cx - 0.01, cz - 0.01,
                                    cx + 0.01, cz + 0.01, k);
        }
        snprintf(json, sizeof json,
                 "{\"dim\":3,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},\"gravity\":[0,%g,0],"
                 "\"solver\":{\"newton_tol\":1e-12,\"force_tol\":1e-12,\"threads\":1},"
                 "\"bodies\":[{\"name\":\"block\",\"mesh\":{\"generator\":\"box\",\"size\":[0.1,0.1,0.1],"
                 "\"cells\":[1,1,1]},\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.3,\"density\":%g}},"
                 "{\"name\":\"pin\",\"mesh\":{\"generator\":\"box\",\"origin\":[0,0.1,0],\"size\":[0.1,0.02,0.1],"
                 "\"cells\":[1,1,1]},\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.3,\"density\":%g},"
                 "\"fixed\":{\"select\":\"all\"}}],\"springs\":[%s]}",
                 -g, rho, rho, springs);
    }
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    ck_assert_int_eq(sim->nsprings, dim == 2 ? 2 : 4);
    run_steps(sim, 1);
    const double m = rho * (dim == 2 ? 0.01 : 1e-3);
    double sum = 0.0, st[4];
    for (int i = 0; i < sim->nsprings; ++i) {
        const int a = sim->spring_v[2 * i], b = sim->spring_v[2 * i + 1];
        st[i] = sim->x[(size_t)b * dim + 1] - sim->x[(size_t)a * dim + 1];
        sum += k * st[i];
    }
    double mass = 0.0;
    for (int v = 0; v < sim->bodies[0].nx; ++v) mass += sim->mass_x[sim->bodies[0].x_off + v];
    printf("block hung on %d springs (%dD): sum k stretch = %.12e N, m g = %.12e N (rel. err %.2e; lumped mass %.12g "
           "kg)%s", sim->nsprings, dim, sum, m * g, fabs(sum / (m * g) - 1), mass, dim == 2 ? "" : "\n");
    if (dim == 2) printf("; stretches %.10e, %.10e m vs m g/2k = %.10e\n", st[0], st[1], m * g / (2 * k));
    ck_assert_double_lt(fabs(mass / m - 1), 1e-12);
    ck_assert_double_lt(fabs(sum / (m * g) - 1), 1e-9);
    if (dim == 2)
        for (int i = 0; i < 2; ++i) ck_assert_double_lt(fabs(st[i] / (m * g / (2 * k)) - 1), 1e-9);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}

START_TEST(test_hang_2d) { hang(2); }
END_TEST
START_TEST(test_hang_3d) { hang(3); }
END_TEST

/* ---------- oscillation on a zero-length spring (implicit Euler) ----------
 * The 2D block (m = 10 kg, E = 1e8 Pa: its first elastic mode ~ 3e3 rad/s) hangs on the same two
 * zero-length springs (k/2 each, k = 1000 N/m: ω = √(k/m) = 10 rad/s), without gravity, from a pin
 * raised by a0 = 0.01 m: the block starts at rest with the springs stretched by a0 and moves
 * vertically (the scene is symmetric about x = 0.05). For the centre of mass (elastic forces are
 * internal) implicit Euler gives, with e_n = y_cm,n − y_eq and a rigid block,
 *     m (e_{n+1} − 2 e_n + e_{n−1}) / h² = −k e_{n+1}  ⇒  e_{n+1} = (2 e_n − e_{n−1}) / (1 + ω²h²),
 * e_0 = e_{−1} = −a0 (at rest): the roots z = 1/(1 ∓ iωh) turn by atan(ωh) per step and shrink by
 * (1 + ω²h²)^(−1/2): the period is T_h = 2π h / atan(ωh) (→ 2π/ω as h → 0). The block's elastic
 * stretch under the spring force (k a0 / (E · 0.1 m) ~ 1e-7 of a0) makes it a slightly softer spring:
 * tolerance 1e-4 of a0 on the trajectory, 1e-4 on the period. */
START_TEST(test_oscillation)
{
    const double k = 1000.0, a0 = 0.01, h = 1e-3, rho = 1000.0, m = rho * 0.01, w = sqrt(k / m);
    const int nsteps = 1000;
    char json[4096];
    snprintf(json, sizeof json,
             "{\"dim\":2,\"time\":{\"dt\":%g,\"duration\":%g},\"gravity\":[0,0],"
             "\"solver\":{\"newton_tol\":1e-9,\"force_tol\":1e-10,\"threads\":1},"
             "\"bodies\":[{\"name\":\"block\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.1,0.1],\"cells\":[2,2]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e8,\"nu\":0.3,\"density\":%g}},"
             "{\"name\":\"pin\",\"mesh\":{\"generator\":\"rect\",\"origin\":[0,%.17g],\"size\":[0.1,0.02],"
             "\"cells\":[1,1]},\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.3,\"density\":1000},"
             "\"fixed\":{\"select\":\"all\"}}],"
             "\"springs\":[{\"a\":{\"body\":\"block\",\"select\":{\"box\":{\"min\":[-0.01,0.09],\"max\":[0.01,0.11]}}},"
             "\"b\":{\"body\":\"pin\",\"vertex\":0},\"stiffness\":%g},"
             "{\"a\":{\"body\":\"block\",\"select\":{\"box\":{\"min\":[0.09,0.09],\"max\":[0.11,0.11]}}},"
             "\"b\":{\"body\":\"pin\",\"vertex\":1},\"stiffness\":%g}]}",
             h, h * nsteps, rho, 0.1 + a0, k / 2, k / 2);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    const ct_body *B = &sim->bodies[0];
    double mass = 0.0, y0 = 0.0;
    for (int v = B->x_off; v < B->x_off + B->nx; ++v) {
        mass += sim->mass_x[v];
        y0 += sim->mass_x[v] * sim->X[2 * v + 1];
    }
    y0 /= mass;
    ck_assert_double_lt(fabs(mass / m - 1), 1e-12);
    const double yeq = y0 + a0, c = 1.0 + w * w * h * h;
    double e_prev = -a0, e = -a0, worst = 0.0, xdrift = 0.0;
    double cross[4];
    int ncross = 0;
    double last = -a0;
    ct_diag d;
    ct_diag_init(&d);
    for (int n = 1; n <= nsteps; ++n) {
        ck_assert_int_eq(ct_sim_step(sim, &d), CT_OK);
        const double e_next = (2 * e - e_prev) / c;
        e_prev = e;
        e = e_next;
        double ycm = 0.0, xcm = 0.0;
        for (int v = B->x_off; v < B->x_off + B->nx; ++v) {
            ycm += sim->mass_x[v] * sim->x[2 * v + 1];
            xcm += sim->mass_x[v] * sim->x[2 * v];
        }
        ycm /= mass;
        xcm /= mass;
        const double es = ycm - yeq;
        worst = fmax(worst, fabs(es - e) / a0);
        xdrift = fmax(xdrift, fabs(xcm - 0.05) / a0);
        if (ncross < 4 && (last < 0) != (es < 0)) /* zero crossing between steps n-1 and n */
            cross[ncross++] = h * (n - 1 + last / (last - es));
        last = es;
    }
    ct_diag_free(&d);
    ck_assert_int_eq(ncross, 3);
    const double T = cross[2] - cross[0], Th = 2 * acos(-1.0) * h / atan(w * h), T0 = 2 * acos(-1.0) / w;
    printf("block on a zero-length spring, omega = %g rad/s, h = %g s: max |e - e_recurrence| = %.2e a0, x drift %.2e "
           "a0; period from zero crossings %.8f s vs 2 pi h / atan(omega h) = %.8f s (rel. err %.2e), 2 pi/omega = "
           "%.8f s\n", w, h, worst, xdrift, T, Th, fabs(T / Th - 1), T0);
    ck_assert_double_lt(worst, 1e-4);
    ck_assert_double_lt(xdrift, 1e-9);
    ck_assert_double_lt(fabs(T / Th - 1), 1e-4);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

/* ---------- dx/dθ through a spring of rest length L > 0 to an anchor on a circular track ----------
 * As in the IMLS paper's §6.1 (B on an outer track, A joined to it by a spring), but with L = 0.05 m
 * and a soft bar, in the nonlinear regime: a bar (1 × 0.1 m, E = 1e4 Pa, neo-Hookean) clamped at
 * -x; its end vertex (1, 0.05) is tied by a spring (k = 40 N/m, L = 0.05) to a pin vertex starting
 * at (1.1, 0.05), rotated about (0, 0.05) by θ = ω × 1 s (the pin's motion angular_velocity, a
 * prescribed dof: the spring's H_fD). ct_sensitivity's dx/dθ against central differences of two
 * converged solves (δ = 1e-4 θ, relative truncation ~1e-8, tolerance 1e-6). */
static void track_json(char *buf, size_t n, double wz)
{
    snprintf(buf, n,
             "{\"dim\":2,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},"
             "\"solver\":{\"newton_tol\":1e-13,\"force_tol\":1e-12,\"threads\":1},"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"rect\",\"size\":[1,0.1],\"cells\":[20,2]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e4,\"nu\":0.3,\"density\":1000},"
             "\"fixed\":{\"select\":{\"side\":\"-x\"}}},"
             "{\"name\":\"pin\",\"mesh\":{\"generator\":\"rect\",\"origin\":[1.1,0.05],\"size\":[0.02,0.02],\"cells\":[1,1]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e4,\"nu\":0.3,\"density\":1000},"
             "\"fixed\":{\"select\":\"all\",\"motion\":[{\"until\":1,\"angular_velocity\":%.17g,\"center\":[0,0.05]}]}}],"
             "\"springs\":[{\"a\":{\"body\":\"bar\",\"select\":{\"box\":{\"min\":[0.99,0.04],\"max\":[1.01,0.06]}}},"
             "\"b\":{\"body\":\"pin\",\"vertex\":0},\"stiffness\":40,\"rest_length\":0.05}]}",
             wz);
}

static double *track_positions(double wz, size_t *nxd)
{
    char json[4096];
    track_json(json, sizeof json, wz);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    run_steps(sim, 1);
    *nxd = (size_t)sim->nx * 2;
    double *x = malloc(*nxd * sizeof *x);
    memcpy(x, sim->x, *nxd * sizeof *x);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    return x;
}

START_TEST(test_track_fd)
{
    const double theta = 0.15, delta = 1e-4 * theta;
    char json[4096];
    track_json(json, sizeof json, theta);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    run_steps(sim, 1);
    const size_t nqd = (size_t)sim->ndof, nxd = (size_t)sim->nx * 2;
    double *dqf = calloc(nqd, sizeof *dqf), *dfe = calloc(nxd, sizeof *dfe), *dq = calloc(nqd, sizeof *dq);
    ct_diag d;
    ct_diag_init(&d);
    ct_sens_kind kind;
    ck_assert_int_eq(ct_sensitivity_param(sim, "bodies.pin.fixed.0.motion.0.angular_velocity", dqf, dfe, &kind, &d),
                     CT_OK);
    ct_sens_info info;
    ck_assert_int_eq(ct_sensitivity_solve(sim, 1, dqf, dfe, 0, dq, &info, &d), CT_OK);
    size_t n1, n2;
    double *xp = track_positions(theta + delta, &n1), *xm = track_positions(theta - delta, &n2);
    ck_assert(n1 == nxd && n2 == nxd);
    double nn = 0.0, ee = 0.0;
    for (size_t i = 0; i < nxd; ++i) {
        if (sim->fixed[i]) continue;
        const double fd = (xp[i] - xm[i]) / (2 * delta);
        nn += fd * fd;
        ee += (dq[i] - fd) * (dq[i] - fd);
    }
    const int a = sim->spring_v[0], b = sim->spring_v[1];
    const double r = hypot(sim->x[2 * a] - sim->x[2 * b], sim->x[2 * a + 1] - sim->x[2 * b + 1]);
    printf("bar tied by a spring (L = 0.05 m, stretched to %.4f m) to a pin rotated by %g rad: dx/dtheta against "
           "central differences: rel. err %.2e (|dx/dtheta| = %.4f m/rad; A: dx/dtheta = (%.6f, %.6f); factor %s)\n",
           r, theta, sqrt(ee / nn), sqrt(nn), dq[2 * a], dq[2 * a + 1], info.reused_factor ? "reused" : "new");
    ck_assert_double_lt(sqrt(ee / nn), 1e-6);
    ck_assert_double_gt(r, 0.06); /* the spring is stretched: its H_fD is not the L = 0 one */
    free(xp);
    free(xm);
    free(dqf);
    free(dfe);
    free(dq);
    ct_diag_free(&d);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

static Suite *springs_suite(void)
{
    Suite *s = suite_create("springs");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_kernel_fd);
    tcase_add_test(tc, test_ip_fd_2d);
    tcase_add_test(tc, test_ip_fd_3d);
    tcase_add_test(tc, test_series);
    tcase_add_test(tc, test_hang_2d);
    tcase_add_test(tc, test_hang_3d);
    tcase_add_test(tc, test_oscillation);
    tcase_add_test(tc, test_track_fd);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(springs_suite)
