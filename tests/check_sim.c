/* check_sim.c — the time-stepping core against closed forms: free fall (implicit Euler
 * recurrence), a bar hanging under gravity (rho g L^2 / 2E), rigid-motion invariance,
 * the embedding (J = I bitwise, coinciding permuted fine mesh), determinism; the run log's
 * per-vertex contact fields in the frames (a block at rest: contact force = weight). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contactlab/ct_h5log.h"
#include "contactlab/ct_run.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"
#include "contactlab/ct_vtk.h"
#include "ct_test_util.h"
#include "sim/assemble.h" /* white-box: the assembly internals */

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

/* ---- free fall: x_n = x_0 + n h v0 + h^2 g n(n+1)/2 exactly for implicit Euler ---- */
static void free_fall(int dim)
{
    char json[2048];
    if (dim == 3)
        snprintf(json, sizeof json,
                 "{\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":0.5},\"gravity\":[0.5,-9.81,0.25],"
                 "\"solver\":{\"newton_tol\":1e-9},"
                 "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"box\",\"size\":[0.3,0.2,0.1],"
                 "\"cells\":[3,2,2]},\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000},"
                 "\"velocity\":[1,2,-0.5]}]}");
    else
        snprintf(json, sizeof json,
                 "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.5},\"gravity\":[0.5,-9.81],"
                 "\"solver\":{\"newton_tol\":1e-9},"
                 "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.3,0.2],"
                 "\"cells\":[3,2]},\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000},"
                 "\"velocity\":[1,2]}]}");
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    int n = sim->nsteps;
    run_steps(sim, n);
    double h = sc.dt, worst = 0.0;
    double v0[3] = {1, 2, -0.5};
    for (int k = 0; k < sim->nx; ++k)
        for (int c = 0; c < dim; ++c) {
            double X = sim->X[k * dim + c];
            double expect = X + n * h * v0[c] + h * h * sc.gravity[c] * n * (n + 1) / 2.0;
            double disp = expect - X;
            double err = fabs(sim->x[k * dim + c] - expect) / fmax(fabs(disp), 1e-3);
            worst = fmax(worst, err);
        }
    printf("free fall %dD: %d steps, max relative error %.3e\n", dim, n, worst);
    ck_assert_double_lt(worst, 1e-10);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}

START_TEST(test_free_fall_2d) { free_fall(2); }
END_TEST
START_TEST(test_free_fall_3d) { free_fall(3); }
END_TEST

/* ---- hanging bar, static, small strain: tip displacement -> rho g L^2 / (2E) ----
 * With nu = 0 the exact linear-elastic solution is uniaxial (u_y quadratic in y, no
 * lateral motion), so clamping the top face does not perturb it; the strain rho g L / E
 * is 1e-5, so geometric nonlinearity contributes ~1e-5 relative. */
START_TEST(test_hanging_bar)
{
    const double rho = 1000, g = 9.81, L = 1.0, E = 1e9;
    const double exact = rho * g * L * L / (2 * E);
    int ns[] = {2, 4, 8, 16};
    double err[4];
    printf("hanging bar (3D, neo-Hookean, nu = 0): exact tip displacement %.6e m\n", exact);
    printf("  cells along L   tip displacement   relative error\n");
    for (int i = 0; i < 4; ++i) {
        char json[2048];
        snprintf(json, sizeof json,
                 "{\"dim\":3,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},\"gravity\":[0,-%g,0],"
                 "\"solver\":{\"newton_tol\":1e-12},"
                 "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"box\",\"size\":[0.1,%g,0.1],"
                 "\"cells\":[2,%d,2]},\"material\":{\"E\":%g,\"nu\":0,\"density\":%g},"
                 "\"fixed\":{\"select\":{\"side\":\"+y\"}}}]}",
                 g, L, ns[i], E, rho);
        ct_scene sc;
        ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
        run_steps(sim, 1);
        /* mean y-displacement of the free end (-y face) */
        ct_selector sel = {.body = 0, .kind = CT_SEL_SIDE, .axis = 1, .sign = -1, .tol = 1e-6};
        int *idx, m;
        ck_assert_int_eq(ct_sim_select(sim, &sel, 0, &idx, &m), CT_OK);
        double u = 0;
        for (int k = 0; k < m; ++k) u += sim->x[idx[k] * 3 + 1] - sim->X[idx[k] * 3 + 1];
        u = -u / m;
        free(idx);
        err[i] = fabs(u - exact) / exact;
        printf("  %13d   %.9e    %.3e\n", ns[i], u, err[i]);
        ct_sim_destroy(sim);
        ct_scene_free(&sc);
    }
    /* converges toward the analytic value */
    ck_assert_double_lt(err[3], 0.01);
    ck_assert_double_lt(err[3], err[0]);
}
END_TEST

/* ---- reaction force of the clamp equals the weight (static equilibrium) ---- */
START_TEST(test_reaction_equals_weight)
{
    const char *json = "{\"dim\":2,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},"
                       "\"gravity\":[0,-9.81],\"solver\":{\"newton_tol\":1e-12},"
                       "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.2,1],"
                       "\"cells\":[2,8]},\"material\":{\"E\":1e7,\"nu\":0.3,\"density\":500},"
                       "\"fixed\":{\"select\":{\"side\":\"+y\"}}}]}";
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    run_steps(sim, 1);
    double R[3];
    ct_sim_reaction(sim, NULL, R);
    double W = 500 * 0.2 * 1.0 * 9.81; /* mass per unit thickness times g */
    printf("reaction: (%.12g, %.12g), weight %.12g\n", R[0], R[1], W);
    ck_assert_double_lt(fabs(R[1] - W) / W, 1e-9);
    ck_assert_double_lt(fabs(R[0]) / W, 1e-9);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

/* ---- elastic energy invariant under rigid motion of a whole deformed mesh ---- */
START_TEST(test_energy_rigid_invariance)
{
    static const char *mats[] = {"neo_hookean", "fixed_corotated", "linear_corotated", "stvk"};
    for (int mi = 0; mi < 4; ++mi) {
        char json[1024];
        snprintf(json, sizeof json,
                 "{\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":0.01},\"bodies\":[{\"name\":\"b\","
                 "\"mesh\":{\"generator\":\"box\",\"size\":[1,0.5,0.25],\"cells\":[4,2,2]},"
                 "\"material\":{\"model\":\"%s\",\"E\":1e6,\"nu\":0.35,\"density\":1000}}]}",
                 mats[mi]);
        ct_scene sc;
        ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
        int n = sim->nq * 3;
        double *q = malloc(n * sizeof *q), *r = malloc(n * sizeof *r);
        srand(7);
        for (int i = 0; i < n; ++i) q[i] = sim->Q[i] * (1.0 + 0.2 * (i % 3)) + 0.02 * ((double)rand() / RAND_MAX - 0.5);
        /* rotation about (1,2,3)/|.| by 0.7 rad, then translation */
        double k[3] = {1, 2, 3}, nk = sqrt(14.0), a = 0.7, c = cos(a), s = sin(a);
        for (int j = 0; j < 3; ++j) k[j] /= nk;
        for (int v = 0; v < sim->nq; ++v) {
            double *p = q + 3 * v, *o = r + 3 * v;
            double kp = k[0] * p[0] + k[1] * p[1] + k[2] * p[2];
            double cx[3] = {k[1] * p[2] - k[2] * p[1], k[2] * p[0] - k[0] * p[2], k[0] * p[1] - k[1] * p[0]};
            for (int j = 0; j < 3; ++j) o[j] = p[j] * c + cx[j] * s + k[j] * kp * (1 - c) + (j + 1) * 3.5;
        }
        double E0 = ct_elastic_energy(&sim->el, q), E1 = ct_elastic_energy(&sim->el, r);
        double rel = fabs(E1 - E0) / E0;
        printf("rigid invariance %s: E = %.15g, rel. change %.3e\n", mats[mi], E0, rel);
        ck_assert_double_gt(E0, 0);
        ck_assert_double_lt(rel, 1e-12);
        free(q);
        free(r);
        ct_sim_destroy(sim);
        ct_scene_free(&sc);
    }
}
END_TEST

/* ---- embedding: coarse = fine gives J = I and bitwise the same trajectory ---- */
static const char *bar_scene(char *buf, size_t n, const char *dofs)
{
    snprintf(buf, n,
             "{\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":0.1},\"gravity\":[0,-9.81,0],"
             "\"solver\":{\"newton_tol\":1e-6},"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"box\",\"size\":[1,0.2,0.2],"
             "\"cells\":[6,2,2]},%s\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000},"
             "\"fixed\":{\"select\":{\"side\":\"-x\"}},"
             "\"loads\":[{\"select\":{\"side\":\"+x\"},\"force_rate\":[0,0,-200]}]}]}",
             dofs);
    return buf;
}

START_TEST(test_embedded_identity_bitwise)
{
    char j1[2048], j2[2048];
    bar_scene(j1, sizeof j1, "");
    bar_scene(j2, sizeof j2,
              "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"box\",\"size\":[1,0.2,0.2],"
              "\"cells\":[6,2,2]}},");
    ct_scene s1, s2;
    ct_sim *a = ct_test_make_sim(&s1, j1, NULL), *b = ct_test_make_sim(&s2, j2, NULL);
    ck_assert_int_eq(b->dofs.identity, 1);
    for (int k = 0; k < a->nsteps; ++k) {
        run_steps(a, 1);
        run_steps(b, 1);
        ck_assert_int_eq(memcmp(a->x, b->x, (size_t)a->nx * 3 * sizeof(double)), 0);
    }
    double tip = a->x[(a->nx - 1) * 3 + 2] - a->X[(a->nx - 1) * 3 + 2];
    printf("embedded J = I: %d steps bitwise identical (a vertex moved %.3e m)\n", a->nsteps, tip);
    ck_assert_double_ne(tip, 0.0);
    ct_sim_destroy(a);
    ct_sim_destroy(b);
    ct_scene_free(&s1);
    ct_scene_free(&s2);
}
END_TEST

/* A fine mesh coinciding with the coarse one but numbered differently (written to a .msh
 * file in reverse vertex order) follows the coarse mesh's trajectory. */
START_TEST(test_embedded_coinciding_permuted)
{
    ct_mesh m;
    ct_mesh_init(&m);
    double o[3] = {0, 0, 0}, sz[3] = {1, 0.2, 0.2};
    int cells[3] = {6, 2, 2};
    ck_assert_int_eq(ct_mesh_box(&m, o, sz, cells), CT_OK);
    char *dir = ct_test_tmpdir();
    char path[512];
    snprintf(path, sizeof path, "%s/fine.msh", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n", m.nv);
    for (int i = 0; i < m.nv; ++i) { /* node tag i+1 holds vertex nv-1-i */
        const double *p = m.X + 3 * (m.nv - 1 - i);
        fprintf(f, "%d %.17g %.17g %.17g\n", i + 1, p[0], p[1], p[2]);
    }
    fprintf(f, "$EndNodes\n$Elements\n%d\n", m.ne);
    for (int e = 0; e < m.ne; ++e) {
        fprintf(f, "%d 4 2 0 1", e + 1);
        for (int a = 0; a < 4; ++a) fprintf(f, " %d", m.nv - m.elem[e * 4 + a]);
        fprintf(f, "\n");
    }
    fprintf(f, "$EndElements\n");
    fclose(f);
    char j1[2048], j2[4096], dofs[1024];
    bar_scene(j1, sizeof j1, "");
    snprintf(dofs, sizeof dofs,
             "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"box\",\"size\":[1,0.2,0.2],"
             "\"cells\":[6,2,2]}},");
    bar_scene(j2, sizeof j2, dofs);
    /* swap the generated fine mesh for the file */
    char *gen = strstr(j2, "\"mesh\":{\"generator\":\"box\",\"size\":[1,0.2,0.2],\"cells\":[6,2,2]}");
    ck_assert_ptr_nonnull(gen);
    char rest[4096];
    snprintf(rest, sizeof rest, "%s", gen + strlen("\"mesh\":{\"generator\":\"box\",\"size\":[1,0.2,0.2],\"cells\":[6,2,2]}"));
    snprintf(gen, sizeof j2 - (size_t)(gen - j2), "\"mesh\":{\"file\":\"%s\"}%s", path, rest);
    ct_scene s1, s2;
    ct_sim *a = ct_test_make_sim(&s1, j1, NULL), *b = ct_test_make_sim(&s2, j2, NULL);
    ck_assert_int_eq(b->nx, a->nx);
    run_steps(a, a->nsteps);
    run_steps(b, b->nsteps);
    /* the file's reader may renumber; match vertices by rest position */
    double worst = 0, scale = 0;
    for (int k = 0; k < b->nx; ++k) {
        int match = -1;
        for (int i = 0; i < a->nx && match < 0; ++i) {
            double d2 = 0;
            for (int c = 0; c < 3; ++c) d2 += pow(a->X[i * 3 + c] - b->X[k * 3 + c], 2);
            if (d2 < 1e-24) match = i;
        }
        ck_assert_int_ge(match, 0);
        for (int c = 0; c < 3; ++c) {
            worst = fmax(worst, fabs(a->x[match * 3 + c] - b->x[k * 3 + c]));
            scale = fmax(scale, fabs(a->x[match * 3 + c] - a->X[match * 3 + c]));
        }
    }
    printf("embedded, permuted coinciding fine mesh: max |x_fine - x_coarse| = %.3e (max displacement %.3e)\n",
           worst, scale);
    ck_assert_double_lt(worst / scale, 1e-9);
    ct_sim_destroy(a);
    ct_sim_destroy(b);
    ct_scene_free(&s1);
    ct_scene_free(&s2);
    remove(path);
    rmdir(dir);
    free(dir);
    ct_mesh_free(&m);
}
END_TEST

/* ---- a genuinely reduced body: fine mesh in a coarse one; M_q = J^T M J conserves mass
 * and momentum of free flight is exact ---- */
START_TEST(test_embedded_reduced_mass)
{
    const char *json =
        "{\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":0.05},\"gravity\":[0,-9.81,0],"
        "\"solver\":{\"newton_tol\":1e-9},"
        "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"box\",\"size\":[1,0.5,0.5],\"cells\":[8,4,4]},"
        "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"box\",\"size\":[1,0.5,0.5],\"cells\":[2,1,1]}},"
        "\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000},\"velocity\":[0.5,0,0]}]}";
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    ck_assert_int_eq(sim->dofs.identity, 0);
    ck_assert_int_lt(sim->nq, sim->nx);
    /* total mass: 1^T M_q 1 = sum of fine masses = rho * volume */
    double Mtot = 0;
    for (size_t k = 0; k < ct_csc_nnz(&sim->Mq_csc); ++k) Mtot += sim->Mq_csc.val[k];
    double expect = 1000 * 1 * 0.5 * 0.5;
    printf("embedded: %d fine vertices on %d coarse; total mass %.15g (expected %.15g)\n", sim->nx, sim->nq, Mtot,
           expect);
    ck_assert_double_lt(fabs(Mtot - expect) / expect, 1e-12);
    /* gathered elastic volume equals the fine volume */
    double V = 0;
    for (int e = 0; e < sim->el.ne; ++e) V += sim->el.vol[e];
    ck_assert_double_lt(fabs(V - 0.25) / 0.25, 1e-12);
    run_steps(sim, sim->nsteps);
    int n = sim->nsteps;
    double h = sc.dt, worst = 0;
    for (int k = 0; k < sim->nx; ++k) {
        double ex = sim->X[k * 3] + n * h * 0.5;
        double ey = sim->X[k * 3 + 1] - 9.81 * h * h * n * (n + 1) / 2.0;
        worst = fmax(worst, fmax(fabs(sim->x[k * 3] - ex), fabs(sim->x[k * 3 + 1] - ey)));
    }
    printf("embedded free flight: max position error %.3e m\n", worst);
    ck_assert_double_lt(worst, 1e-10);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

/* ---- results do not depend on the thread count ---- */
START_TEST(test_threads_deterministic)
{
    char j[2048];
    bar_scene(j, sizeof j, "");
    double *xs[2];
    for (int r = 0; r < 2; ++r) {
        omp_set_num_threads(r + 1);
        ct_scene sc;
        ct_sim *sim = ct_test_make_sim(&sc, j, NULL);
        run_steps(sim, sim->nsteps);
        xs[r] = malloc((size_t)sim->nx * 3 * sizeof(double));
        memcpy(xs[r], sim->x, (size_t)sim->nx * 3 * sizeof(double));
        if (r == 1) {
            ck_assert_int_eq(memcmp(xs[0], xs[1], (size_t)sim->nx * 3 * sizeof(double)), 0);
            printf("1 and 2 threads: bitwise identical trajectories\n");
        }
        ct_sim_destroy(sim);
        ct_scene_free(&sc);
    }
    free(xs[0]);
    free(xs[1]);
}
END_TEST

/* ---- one symbolic analysis while the pattern is fixed ---- */
START_TEST(test_single_analysis)
{
    char j[2048];
    bar_scene(j, sizeof j, "");
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, j, NULL);
    run_steps(sim, sim->nsteps);
    printf("analyses: %ld, factorizations: %ld\n", ct_linsolve_analyses(sim->ls), ct_linsolve_factorizations(sim->ls));
    ck_assert_int_eq(ct_linsolve_analyses(sim->ls), 1);
    ck_assert_int_gt(ct_linsolve_factorizations(sim->ls), sim->nsteps);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

/* ---- scripted motion: rotation about an axis then translation, piecewise ---- */
START_TEST(test_motion_eval)
{
    ct_motion_segment seg[2] = {{.until = 1.0, .omega = 1.5707963267948966, .axis = {0, 0, 1}, .center = {0, 0, 0}},
                                {.until = 3.0, .velocity = {1, 0, 0}}};
    ct_dirichlet d = {.nseg = 2, .seg = seg};
    double X[3] = {1, 0, 0}, out[3];
    ct_motion_eval(&d, 3, X, 0.5, out); /* 45 degrees */
    ck_assert_double_lt(fabs(out[0] - sqrt(0.5)), 1e-14);
    ck_assert_double_lt(fabs(out[1] - sqrt(0.5)), 1e-14);
    ct_motion_eval(&d, 3, X, 2.0, out); /* (0,1,0) then moved +1 in x */
    ck_assert_double_lt(fabs(out[0] - 1.0), 1e-14);
    ck_assert_double_lt(fabs(out[1] - 1.0), 1e-14);
    ct_motion_eval(&d, 3, X, 10.0, out); /* stays after the last segment */
    ck_assert_double_lt(fabs(out[0] - 2.0), 1e-14);
}
END_TEST

/* ---- finite differences of the whole incremental potential through the embedding map:
 * E -> J^T g (all free dofs) and g -> J^T H J (Hessian-vector products), 2D and 3D ---- */
static void fd_embedded(int dim)
{
    char json[2048];
    if (dim == 3)
        snprintf(json, sizeof json,
                 "{\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":0.01},\"gravity\":[0,-9.81,0],"
                 "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"box\",\"size\":[1,0.4,0.4],\"cells\":[5,2,2]},"
                 "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"box\",\"size\":[1.1,0.5,0.5],"
                 "\"cells\":[2,1,1],\"transform\":{\"translate\":[-0.05,-0.05,-0.05]}}},"
                 "\"material\":{\"model\":\"fixed_corotated\",\"E\":1e4,\"nu\":0.3,\"density\":100},"
                 "\"fixed\":{\"select\":{\"side\":\"-x\"}},"
                 "\"loads\":[{\"select\":{\"side\":\"+x\"},\"force\":[0,-5,1]}]}]}");
    else
        snprintf(json, sizeof json,
                 "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.01},\"gravity\":[0,-9.81],"
                 "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"rect\",\"size\":[1,0.4],\"cells\":[6,3]},"
                 "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"rect\",\"size\":[1.1,0.5],"
                 "\"cells\":[3,1],\"transform\":{\"translate\":[-0.05,-0.05]}}},"
                 "\"material\":{\"model\":\"neo_hookean\",\"E\":1e4,\"nu\":0.3,\"density\":100},"
                 "\"fixed\":{\"select\":{\"side\":\"-x\"}},"
                 "\"loads\":[{\"select\":{\"side\":\"+x\"},\"force\":[0,-5]}]}]}");
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    ck_assert_int_eq(sim->dofs.identity, 0);
    run_steps(sim, 1);
    int n = sim->ndof;
    double *q = malloc(n * sizeof *q), *g = malloc(n * sizeof *g), *gp = malloc(n * sizeof *gp),
           *gm = malloc(n * sizeof *gm), *qp = malloc(n * sizeof *qp), *dir = malloc(n * sizeof *dir);
    srand(11);
    for (int i = 0; i < n; ++i) q[i] = sim->q[i] + (sim->fixed[i] ? 0.0 : 0.03 * ((double)rand() / RAND_MAX - 0.5));
    double E;
    ck_assert_int_eq(ct_sim_ip_eval(sim, q, &E, g), CT_OK);
    /* gradient: central differences on every free dof */
    double num = 0, den = 0, eps = 1e-6;
    for (int i = 0; i < n; ++i) {
        if (sim->fixed[i]) continue;
        double Ep, Em;
        memcpy(qp, q, n * sizeof *q);
        qp[i] = q[i] + eps;
        ct_sim_ip_eval(sim, qp, &Ep, NULL);
        qp[i] = q[i] - eps;
        ct_sim_ip_eval(sim, qp, &Em, NULL);
        double fd = (Ep - Em) / (2 * eps);
        num += (fd - g[i]) * (fd - g[i]);
        den += g[i] * g[i];
    }
    double gerr = sqrt(num / den);
    /* Hessian: H d against (g(q + eps d) - g(q - eps d)) / 2 eps for random directions */
    const ct_csc *A;
    ct_diag d;
    ct_diag_init(&d);
    ck_assert_int_eq(ct_sim_ip_hessian(sim, q, 0, &A, &d), CT_OK);
    int nf = sim->as->nfree;
    double *df = malloc(nf * sizeof *df), *Hd = malloc(nf * sizeof *Hd), herr = 0;
    for (int trial = 0; trial < 3; ++trial) {
        memset(dir, 0, n * sizeof *dir);
        for (int k = 0; k < nf; ++k) df[k] = dir[sim->as->free_dof[k]] = (double)rand() / RAND_MAX - 0.5;
        ct_csc_mult(A, 1, df, Hd);
        for (int i = 0; i < n; ++i) qp[i] = q[i] + eps * dir[i];
        ct_sim_ip_eval(sim, qp, &E, gp);
        for (int i = 0; i < n; ++i) qp[i] = q[i] - eps * dir[i];
        ct_sim_ip_eval(sim, qp, &E, gm);
        num = den = 0;
        for (int k = 0; k < nf; ++k) {
            int i = sim->as->free_dof[k];
            double fd = (gp[i] - gm[i]) / (2 * eps);
            num += (fd - Hd[k]) * (fd - Hd[k]);
            den += Hd[k] * Hd[k];
        }
        herr = fmax(herr, sqrt(num / den));
    }
    printf("FD through the embedding (%dD, %d fine vertices on %d coarse): gradient rel. err %.3e, "
           "Hessian-vector rel. err %.3e\n", dim, sim->nx, sim->nq, gerr, herr);
    ck_assert_double_lt(gerr, 1e-6);
    ck_assert_double_lt(herr, 1e-5);
    free(q); free(g); free(gp); free(gm); free(qp); free(dir); free(df); free(Hd);
    ct_diag_free(&d);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}

START_TEST(test_fd_embedded_2d) { fd_embedded(2); }
END_TEST
START_TEST(test_fd_embedded_3d) { fd_embedded(3); }
END_TEST

/* ---- restart: "initial_state" from the last frame of a run continues it exactly ----
 * A cantilever (clamped left end) swinging under gravity: 10 steps logged with frames, then a
 * scene starting from the last frame (positions and velocities) runs 10 more; a third run takes
 * all 20 steps at once. No load depends on time, so the two must agree to the last bit. */
static const char *cantilever(char *buf, size_t n, const char *extra)
{
    snprintf(buf, n,
             "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.1},\"gravity\":[0,-9.81],"
             "\"solver\":{\"newton_tol\":1e-6},%s"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"rect\",\"size\":[1,0.1],\"cells\":[10,2]},"
             "\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":100},"
             "\"fixed\":[{\"select\":{\"side\":\"-x\"}}]}]}",
             extra);
    return buf;
}

static ct_status try_scene(const char *json, const char *dir)
{
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_scene_init(&sc);
    ct_status st = ct_scene_parse(&sc, json, "test.json", dir, NULL, 0, &d);
    ct_sim *sim = NULL;
    if (st == CT_OK) st = ct_sim_create(&sim, &sc, &d);
    if (st != CT_OK) ct_diag_print(&d, stdout, "expected error: ");
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    ct_diag_free(&d);
    return st;
}

START_TEST(test_restart_continues)
{
    char *dir = ct_test_tmpdir();
    char json[2048], extra[512], file[1024];
    snprintf(file, sizeof file, "%s/first.h5", dir);
    /* first half, logged */
    ct_scene sc1;
    ct_sim *s1 = ct_test_make_sim(&sc1, cantilever(json, sizeof json, "\"output\":{\"frames_every\":1},"), dir);
    ct_run_opts ro = {.output = file};
    ct_diag d;
    ct_diag_init(&d);
    ct_status rs = ct_run(s1, &ro, &d);
    if (rs != CT_OK) ct_diag_print(&d, stderr, "run: ");
    ck_assert_int_eq(rs, CT_OK);
    ck_assert_int_eq(s1->step, 10);
    /* second half from the last frame */
    snprintf(extra, sizeof extra, "\"initial_state\":{\"file\":\"first.h5\",\"velocity\":\"frame\"},");
    ct_scene sc2;
    ct_sim *s2 = ct_test_make_sim(&sc2, cantilever(json, sizeof json, extra), dir);
    double dx0 = 0.0;
    for (int i = 0; i < s1->nx * 2; ++i) dx0 = fmax(dx0, fabs(s2->x[i] - s1->x[i]));
    ck_assert_double_eq(dx0, 0.0);
    run_steps(s2, 10);
    /* all 20 steps at once */
    ct_scene sc3;
    ct_sim *s3 = ct_test_make_sim(&sc3, cantilever(json, sizeof json, ""), dir);
    run_steps(s3, 20);
    double diff = 0.0, tip = 0.0;
    for (int i = 0; i < s3->nx * 2; ++i) {
        diff = fmax(diff, fabs(s2->x[i] - s3->x[i]));
        tip = fmax(tip, fabs(s3->x[i] - s3->X[i]));
    }
    printf("restart: 10 + 10 steps vs 20 steps: max |dx| = %.3e (max displacement %.3e m)\n", diff, tip);
    ck_assert_double_gt(tip, 1e-3); /* the bar did move */
    ck_assert_double_eq(diff, 0.0);
    /* velocity "zero" (the default) starts at rest: differs from the continued run */
    snprintf(extra, sizeof extra, "\"initial_state\":{\"file\":\"first.h5\",\"frame\":-1},");
    ct_scene sc4;
    ct_sim *s4 = ct_test_make_sim(&sc4, cantilever(json, sizeof json, extra), dir);
    for (int i = 0; i < s4->nx * 2; ++i) ck_assert_double_eq(s4->vx[i], 0.0);
    /* bad input: frame out of range, missing file, a scene with a different mesh */
    snprintf(extra, sizeof extra, "\"initial_state\":{\"file\":\"first.h5\",\"frame\":11},");
    ck_assert_int_eq(try_scene(cantilever(json, sizeof json, extra), dir), CT_EINPUT);
    snprintf(extra, sizeof extra, "\"initial_state\":{\"file\":\"missing.h5\"},");
    ck_assert_int_eq(try_scene(cantilever(json, sizeof json, extra), dir), CT_EINPUT);
    snprintf(json, sizeof json,
             "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.1},\"initial_state\":{\"file\":\"first.h5\"},"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"rect\",\"size\":[1,0.1],\"cells\":[5,2]},"
             "\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":100}}]}");
    ck_assert_int_eq(try_scene(json, dir), CT_EINPUT);
    /* a clamped vertex moved by the frame is refused: clamp the right end instead */
    snprintf(json, sizeof json,
             "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.1},\"initial_state\":{\"file\":\"first.h5\"},"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"rect\",\"size\":[1,0.1],\"cells\":[10,2]},"
             "\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":100},\"fixed\":[{\"select\":{\"side\":\"+x\"}}]}]}");
    ck_assert_int_eq(try_scene(json, dir), CT_EINPUT);
    ct_diag_free(&d);
    ct_sim_destroy(s1);
    ct_sim_destroy(s2);
    ct_sim_destroy(s3);
    ct_sim_destroy(s4);
    ct_scene_free(&sc1);
    ct_scene_free(&sc2);
    ct_scene_free(&sc3);
    ct_scene_free(&sc4);
    free(dir);
}
END_TEST

/* ---- contact Hessian mapping: the slot cache gives bitwise the matrix of a plain sum ---- */

static unsigned cache_rng(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return *s >> 8;
}

/* n triplets over element stencils (inside the base pattern) and, one in far_every, over
 * arbitrary vertex pairs (outside it: pattern growth); both triangles and fixed dofs occur. */
static void cache_triplets(const ct_sim *sim, ct_triplets *T, size_t n, unsigned seed, int far_every)
{
    ct_triplets_clear(T);
    unsigned s = seed;
    const int nv = sim->dim + 1;
    for (size_t k = 0; k < n; ++k) {
        int va, vb;
        if (far_every && k % (size_t)far_every == 0) {
            va = (int)(cache_rng(&s) % (unsigned)sim->nq);
            vb = (int)(cache_rng(&s) % (unsigned)sim->nq);
        } else {
            const int *v = sim->el.elem + (size_t)(cache_rng(&s) % (unsigned)sim->el.ne) * nv;
            va = v[cache_rng(&s) % (unsigned)nv];
            vb = v[cache_rng(&s) % (unsigned)nv];
        }
        const int r = va * sim->dim + (int)(cache_rng(&s) % 3u), c = vb * sim->dim + (int)(cache_rng(&s) % 3u);
        ck_assert_int_eq(ct_triplets_add(T, r, c, ((int)(cache_rng(&s) % 2001u) - 1000) / 997.0), CT_OK);
    }
}

static void cache_values(ct_triplets *T, unsigned seed)
{
    unsigned s = seed;
    for (size_t k = 0; k < T->n; ++k) T->val[k] = ((int)(cache_rng(&s) % 2001u) - 1000) / 991.0;
}

/* A against E = base + the triplets summed in order (dense, free dofs, upper triangle):
 * every stored entry bitwise equal, every entry of E that received something stored. */
static void cache_check(const ct_sim *sim, const ct_csc *A, const double *base, const ct_triplets *T, double w)
{
    const int nf = sim->as->nfree;
    const int *fi = sim->as->free_index;
    double *E = malloc((size_t)nf * nf * sizeof *E);
    unsigned char *hit = calloc((size_t)nf * nf, 1);
    ck_assert(E && hit);
    memcpy(E, base, (size_t)nf * nf * sizeof *E);
    for (size_t k = 0; k < T->n; ++k) {
        const int r = fi[T->row[k]], c = fi[T->col[k]];
        if (r < 0 || c < 0 || r > c) continue;
        E[r + (size_t)nf * c] += w * T->val[k];
        hit[r + (size_t)nf * c] = 1;
    }
    for (int c = 0; c < A->ncol; ++c)
        for (int k = A->colptr[c]; k < A->colptr[c + 1]; ++k)
            ck_assert_int_eq(memcmp(&A->val[k], &E[A->rowind[k] + (size_t)nf * c], sizeof(double)), 0);
    for (int c = 0; c < nf; ++c)
        for (int r = 0; r <= c; ++r)
            if (hit[r + (size_t)nf * c]) ck_assert_int_ge(ct_csc_find(A, r, c), 0);
    free(E);
    free(hit);
}

/* The same triplets through a freshly built assembly (nothing cached) must match too. */
static void cache_check_fresh(ct_sim *sim, const double *base, ct_triplets *T, double w)
{
    ct_diag d;
    ct_diag_init(&d);
    ct_assembly fresh;
    ck_assert_int_eq(ct_assembly_build(&fresh, sim, &d), CT_OK);
    ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, T, w, 0, NULL, NULL, &d), CT_OK);
    ck_assert_int_eq(fresh.cm_hits, 0);
    cache_check(sim, &fresh.A, base, T, w);
    ct_assembly_free(&fresh);
    ct_diag_free(&d);
}

/* ---- the frames' per-vertex contact fields (ct_model_vertex_fields, run.c, vtk.c) ---- */

/* A text file contains `what`. */
static int file_has(const char *path, const char *what)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[4096];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, what) != NULL;
    fclose(f);
    return found;
}

/* A 2D block dropped 0.5 d̂ onto a half-space under IPC, 20 steps logged with every frame: the run file has
 * /frames/contact_force (frames × vertices × dim, N) and /frames/gap (frames × vertices, m), frame 0 included,
 * no /frames/beta; frame 0's gaps are the bottom vertices' 0.5 d̂, NaN elsewhere; the last frame is what the
 * model gives at the final state; the block rests: Σ contact force + m g = Σ m a to Newton's force residual
 * |r|_1; the VTK export carries contact_force and gap. A run without contact (the cantilever, model "none")
 * has none of them. */
START_TEST(test_frames_contact_fields)
{
    char *dir = ct_test_tmpdir();
    ck_assert_ptr_nonnull(dir);
    char file[1024], none_file[1024], vdir[1024], vtu[1100], json[2048];
    snprintf(file, sizeof file, "%s/rest.h5", dir);
    snprintf(none_file, sizeof none_file, "%s/none.h5", dir);
    snprintf(vdir, sizeof vdir, "%s/vtk", dir);
    const double dhat = 1e-3, g = 9.81;
    snprintf(json, sizeof json,
             "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.2},\"gravity\":[0,%g],"
             "\"solver\":{\"force_tol\":1e-9},\"contact\":{\"model\":\"ipc\",\"dhat\":%g},"
             "\"bodies\":[{\"name\":\"block\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.1,0.05],"
             "\"cells\":[4,2],\"origin\":[-0.05,%g]},\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000}}],"
             "\"obstacles\":[{\"name\":\"floor\",\"type\":\"halfspace\",\"point\":[0,0],\"normal\":[0,1]}],"
             "\"output\":{\"frames_every\":1}}",
             -g, dhat, 0.5 * dhat);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, dir);
    ct_run_opts ro = {.output = file};
    ct_diag d;
    ct_diag_init(&d);
    ct_status rs = ct_run(sim, &ro, &d);
    if (rs != CT_OK) ct_diag_print(&d, stderr, "run: ");
    ck_assert_int_eq(rs, CT_OK);
    const int nx = sim->nx, dim = 2, nf = sim->step + 1;
    /* the datasets: shapes, units, no beta (ipc has none) */
    double *F = NULL, *G = NULL, *V = NULL;
    int rank = 0, there = -1;
    size_t dims[4];
    ck_assert_int_eq(ct_h5_read(file, "/frames/contact_force", &F, &rank, dims, &d), CT_OK);
    ck_assert(rank == 3 && dims[0] == (size_t)nf && dims[1] == (size_t)nx && dims[2] == (size_t)dim);
    ck_assert_int_eq(ct_h5_read(file, "/frames/gap", &G, &rank, dims, &d), CT_OK);
    ck_assert(rank == 2 && dims[0] == (size_t)nf && dims[1] == (size_t)nx);
    ck_assert_int_eq(ct_h5_read(file, "/frames/v", &V, &rank, dims, &d), CT_OK);
    ck_assert_int_eq(ct_h5_exists(file, "/frames/beta", &there, &d), CT_OK);
    ck_assert_int_eq(there, 0);
    char *unit = NULL;
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/frames/contact_force", "unit", &unit, &d), CT_OK);
    ck_assert_str_eq(unit, "N");
    free(unit);
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/frames/gap", "unit", &unit, &d), CT_OK);
    ck_assert_str_eq(unit, "m");
    free(unit);
    /* frame 0: the bottom vertices 0.5 d̂ above the floor, pushed up; the others without contact */
    int nbottom = 0;
    for (int v = 0; v < nx; ++v) {
        const int bottom = sim->X[(size_t)v * dim + 1] < dhat;
        nbottom += bottom;
        if (bottom) {
            ck_assert_double_le(fabs(G[v] - 0.5 * dhat), 1e-15);
            ck_assert_double_gt(F[(size_t)v * dim + 1], 0.0);
        } else {
            ck_assert(isnan(G[v]) && F[(size_t)v * dim] == 0.0 && F[(size_t)v * dim + 1] == 0.0);
        }
    }
    ck_assert_int_eq(nbottom, 5);
    /* the last frame: the model's fields at the final state, bitwise */
    ct_vertex_fields vf;
    ck_assert_int_eq(ct_vertex_fields_init(&vf, nx), CT_OK);
    ck_assert_int_eq(ct_model_vertex_fields(sim->model, &sim->ctx, sim->x, &vf), CT_OK);
    ck_assert_uint_eq(vf.filled, CT_VF_FORCE | CT_VF_GAP);
    const double *FL = F + (size_t)(nf - 1) * nx * dim, *GL = G + (size_t)(nf - 1) * nx;
    double Fsum[2] = {0, 0}, Ma[2] = {0, 0}, m = 0.0, gmin = INFINITY, gmax = 0.0;
    for (int v = 0; v < nx; ++v) {
        ck_assert(memcmp(&vf.gap[v], &GL[v], sizeof(double)) == 0);
        for (int k = 0; k < dim; ++k) {
            ck_assert(memcmp(&vf.force[v][k], &FL[(size_t)v * dim + k], sizeof(double)) == 0);
            Fsum[k] += FL[(size_t)v * dim + k];
            const size_t i1 = ((size_t)(nf - 1) * nx + v) * dim + k, i0 = ((size_t)(nf - 2) * nx + v) * dim + k;
            Ma[k] += sim->mass_x[v] * (V[i1] - V[i0]) / sc.dt;
        }
        m += sim->mass_x[v];
        if (!isnan(GL[v])) gmin = fmin(gmin, GL[v]), gmax = fmax(gmax, GL[v]);
    }
    /* at rest: Σ F + m g = Σ m a, to |r|_1 (the bound of any summed force at Newton's stop) */
    const double r1 = sim->last.force_residual * sim->last.force_scale;
    const double err = hypot(Fsum[0] - Ma[0], Fsum[1] - m * g - Ma[1]);
    printf("frames' contact fields: %d frames x %d vertices; at rest: vertical contact force %.9g N vs m g = %.9g N "
           "(rel. error %.2e), |F + m g - M a| = %.2e N <= |r|_1 = %.2e N; gaps in [%.4g, %.4g] m\n",
           nf, nx, Fsum[1], m * g, fabs(Fsum[1] - m * g) / (m * g), err, r1, gmin, gmax);
    ck_assert_double_le(err, r1 + 1e-9 * m * g);
    ck_assert_double_le(fabs(Fsum[1] - m * g), 1e-6 * m * g);
    ck_assert(gmin > 0.0 && gmax < dhat);
    /* the VTK export carries them */
    int nvtk = 0;
    ck_assert_int_eq(ct_vtk_export(file, vdir, &nvtk, &d), CT_OK);
    ck_assert_int_eq(nvtk, nf);
    snprintf(vtu, sizeof vtu, "%s/frame_%05d.vtu", vdir, nf - 1);
    ck_assert(file_has(vtu, "Name=\"contact_force\"") && file_has(vtu, "Name=\"gap\""));
    ck_assert(!file_has(vtu, "Name=\"beta\""));
    for (int k = 0; k < nf; ++k) {
        snprintf(vtu, sizeof vtu, "%s/frame_%05d.vtu", vdir, k);
        remove(vtu);
    }
    snprintf(vtu, sizeof vtu, "%s/run.pvd", vdir);
    remove(vtu);
    rmdir(vdir);
    /* no contact, no fields */
    ct_scene sc2;
    ct_sim *s2 = ct_test_make_sim(&sc2, cantilever(json, sizeof json, "\"output\":{\"frames_every\":5},"), dir);
    ro.output = none_file;
    ck_assert_int_eq(ct_run(s2, &ro, &d), CT_OK);
    ck_assert_int_eq(ct_h5_exists(none_file, "/frames/x", &there, &d), CT_OK);
    ck_assert_int_eq(there, 1);
    ck_assert_int_eq(ct_h5_exists(none_file, "/frames/contact_force", &there, &d), CT_OK);
    ck_assert_int_eq(there, 0);
    ck_assert_int_eq(ct_h5_exists(none_file, "/frames/gap", &there, &d), CT_OK);
    ck_assert_int_eq(there, 0);
    ct_vertex_fields_free(&vf);
    free(F), free(G), free(V);
    ct_sim_destroy(s2);
    ct_scene_free(&sc2);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    ct_diag_free(&d);
    remove(file);
    remove(none_file);
    rmdir(dir);
    free(dir);
}
END_TEST

START_TEST(test_contact_slot_cache)
{
    char j[2048];
    bar_scene(j, sizeof j, "");
    for (int nth = 1; nth <= 2; ++nth) {
        omp_set_num_threads(nth);
        ct_scene sc;
        ct_sim *sim = ct_test_make_sim(&sc, j, NULL);
        ck_assert_int_eq(sim->dofs.identity, 1);
        ct_assembly *as = sim->as;
        const int nf = as->nfree;
        ct_diag d;
        ct_diag_init(&d);
        /* the base matrix (mass + elasticity) from an assembly without model triplets */
        double *base = calloc((size_t)nf * nf, sizeof *base);
        ck_assert_ptr_nonnull(base);
        {
            ct_assembly b0;
            ck_assert_int_eq(ct_assembly_build(&b0, sim, &d), CT_OK);
            ck_assert_int_eq(ct_assembly_fill(&b0, sim, sim->q, 1.0, 1e-4, NULL, 0.0, 0, NULL, NULL, &d), CT_OK);
            for (int c = 0; c < nf; ++c)
                for (int k = b0.A.colptr[c]; k < b0.A.colptr[c + 1]; ++k)
                    base[b0.A.rowind[k] + (size_t)nf * c] = b0.A.val[k];
            ct_assembly_free(&b0);
        }
        ck_assert_int_lt(nf, sim->ndof); /* some dofs are fixed */
        ct_triplets T;
        ct_triplets_init(&T);
        const size_t n = 30000;
        cache_triplets(sim, &T, n, 12345u, 40);
        const long nnz0 = (long)ct_csc_nnz(&as->A);
        const double ws[6] = {0.7, 1.3, 0.7, 2.1, 0.9, 1.7};
        for (int step = 0; step < 6; ++step) {
            long hits0 = as->cm_hits;
            int expect_hit = 0;
            if (step == 1 || step == 2) { /* the same (row, col) sequence, new values */
                cache_values(&T, 100u + (unsigned)step);
                expect_hit = 1;
            } else if (step == 3) { /* one column index changed, same length */
                T.col[n / 2] = T.col[n / 2] == 0 ? 1 : T.col[n / 2] - 1;
            } else if (step == 4) { /* more triplets, some outside the pattern */
                ct_triplets extra;
                ct_triplets_init(&extra);
                cache_triplets(sim, &extra, 600, 777u, 3);
                ck_assert_int_eq(ct_triplets_append(&T, &extra), CT_OK);
                ct_triplets_free(&extra);
            } else if (step == 5) {
                cache_values(&T, 500u);
                expect_hit = 1;
            }
            const long nnz_before = (long)ct_csc_nnz(&as->A);
            ck_assert_int_eq(ct_assembly_fill(as, sim, sim->q, 1.0, 1e-4, &T, ws[step], 0, NULL, NULL, &d), CT_OK);
            ck_assert_int_eq(as->cm_hits - hits0, expect_hit);
            if (step == 0 || step == 4) ck_assert_int_gt((long)ct_csc_nnz(&as->A), nnz_before); /* grown */
            cache_check(sim, &as->A, base, &T, ws[step]);
            cache_check_fresh(sim, base, &T, ws[step]);
        }
        ck_assert_int_eq(as->cm_calls, 6);
        ck_assert_int_eq(as->cm_hits, 3);
        printf("slot cache, %d thread(s): %ld mappings, %ld from the cache, pattern %ld -> %ld entries; "
               "bitwise equal to the plain sums\n", nth, as->cm_calls, as->cm_hits, nnz0, (long)ct_csc_nnz(&as->A));
        ct_triplets_free(&T);
        free(base);
        ct_diag_free(&d);
        ct_sim_destroy(sim);
        ct_scene_free(&sc);
    }
    omp_set_num_threads(1);
}
END_TEST

/* ---- contact Hessian mapping: chunks reused from the recorded sequence, block lookups ---- */

/* A term: 1-4 distinct vertices and how its triplets are emitted. */
typedef struct reuse_term {
    int nv, v[4], mode;
} reuse_term;

enum { RT_MODEL, RT_FULL, RT_SHUFFLED, RT_TWICE, RT_SHIFTED, RT_NMODES };

/* A term over the vertices of one element (inside the base pattern) or over random vertices
 * (mostly outside it: pattern growth). */
static reuse_term reuse_make_term(const ct_sim *sim, unsigned *s, int far, int mode)
{
    reuse_term t = {.nv = 1 + (int)(cache_rng(s) % 4u), .mode = mode};
    const int *ev = sim->el.elem + (size_t)(cache_rng(s) % (unsigned)sim->el.ne) * (size_t)(sim->dim + 1);
    for (int a = 0; a < t.nv; ++a) {
        int v, dup;
        do {
            v = far ? (int)(cache_rng(s) % (unsigned)sim->nq) : ev[cache_rng(s) % 4u];
            dup = 0;
            for (int b = 0; b < a; ++b) dup |= t.v[b] == v;
        } while (dup);
        t.v[a] = v;
    }
    return t;
}

/* The triplets of a term, as the model emits them (RT_MODEL: per column vertex b and
 * component j, the rows of every vertex a, upper triangle only; the vertices in term order,
 * not sorted) or with the block structure broken: full blocks (lower-triangle triplets too),
 * shuffled, every triplet twice, rows shifted by one dof (across vertex blocks). */
static void reuse_emit(const reuse_term *t, ct_triplets *T, unsigned *s)
{
    const size_t first = T->n;
    for (int b = 0; b < t->nv; ++b)
        for (int j = 0; j < 3; ++j) {
            const int col = 3 * t->v[b] + j;
            for (int a = 0; a < t->nv; ++a)
                for (int k = 0; k < 3; ++k) {
                    int row = 3 * t->v[a] + k;
                    if (t->mode == RT_SHIFTED) row = row + 1 < col ? row + 1 : row;
                    if (t->mode != RT_FULL && row > col) continue;
                    const double v = ((int)(cache_rng(s) % 2001u) - 1000) / 997.0;
                    ck_assert_int_eq(ct_triplets_add(T, row, col, v), CT_OK);
                    if (t->mode == RT_TWICE) ck_assert_int_eq(ct_triplets_add(T, row, col, -0.5 * v), CT_OK);
                }
        }
    if (t->mode == RT_SHUFFLED)
        for (size_t k = T->n - 1; k > first; --k) {
            const size_t q = first + cache_rng(s) % (unsigned)(k - first + 1);
            const int r = T->row[k], c = T->col[k];
            const double v = T->val[k];
            T->row[k] = T->row[q], T->col[k] = T->col[q], T->val[k] = T->val[q];
            T->row[q] = r, T->col[q] = c, T->val[q] = v;
        }
}

static void reuse_sequence(const reuse_term *L, int m, ct_triplets *T, unsigned seed, size_t *off)
{
    ct_triplets_clear(T);
    unsigned s = seed;
    for (int i = 0; i < m; ++i) {
        if (off) off[i] = T->n;
        reuse_emit(&L[i], T, &s);
    }
}

/* The bar scene's sim with single fixed components inside vertex blocks (besides the fixed
 * side), and its base matrix (mass + elasticity on the free dofs, dense, malloc'ed) in *base. */
static ct_sim *slot_sim(ct_scene *sc, const char *json, double **base)
{
    ct_sim *sim = ct_test_make_sim(sc, json, NULL);
    for (int v = 3; v < sim->nq; v += 7) sim->fixed[3 * v + v % 3] = 1;
    ct_diag d;
    ct_diag_init(&d);
    ct_assembly b0;
    ck_assert_int_eq(ct_assembly_build(&b0, sim, &d), CT_OK);
    const int nf = b0.nfree;
    ck_assert_int_eq(ct_assembly_fill(&b0, sim, sim->q, 1.0, 1e-4, NULL, 0.0, 0, NULL, NULL, &d), CT_OK);
    *base = calloc((size_t)nf * nf, sizeof **base);
    ck_assert_ptr_nonnull(*base);
    for (int c = 0; c < nf; ++c)
        for (int k = b0.A.colptr[c]; k < b0.A.colptr[c + 1]; ++k) (*base)[b0.A.rowind[k] + (size_t)nf * c] = b0.A.val[k];
    ct_assembly_free(&b0);
    ct_diag_free(&d);
    return sim;
}

/* The recorded slots are those of a plain search in the final pattern (-1: a fixed dof or the
 * lower triangle), and A = base + the triplets summed in order (dense, bitwise). */
static void reuse_check_rows(const ct_assembly *as, const double *base, const ct_triplets *T, double w,
                             int rows_recorded)
{
    const int nf = as->nfree;
    const int *fi = as->free_index;
    const ct_csc *A = &as->A;
    ck_assert_int_eq(as->cm_valid, 1);
    ck_assert_uint_eq(as->cm_n, T->n);
    double *E = malloc((size_t)nf * nf * sizeof *E);
    ck_assert_ptr_nonnull(E);
    memcpy(E, base, (size_t)nf * nf * sizeof *E);
    for (size_t k = 0; k < T->n; ++k) {
        ck_assert(!rows_recorded || (as->cm_row[k] == T->row[k] && as->cm_col[k] == T->col[k]));
        const int r = fi[T->row[k]], c = fi[T->col[k]];
        const long want = r >= 0 && c >= 0 && r <= c ? ct_csc_find(A, r, c) : -1;
        if (r >= 0 && c >= 0 && r <= c) ck_assert_int_ge(want, 0); /* the pattern grew */
        ck_assert_int_eq(as->cm_slot[k], want);
        if (want >= 0) E[r + (size_t)nf * c] += w * T->val[k];
    }
    for (int c = 0; c < A->ncol; ++c)
        for (int k = A->colptr[c]; k < A->colptr[c + 1]; ++k)
            ck_assert_int_eq(memcmp(&A->val[k], &E[A->rowind[k] + (size_t)nf * c], sizeof(double)), 0);
    free(E);
}

static void reuse_check(const ct_assembly *as, const double *base, const ct_triplets *T, double w)
{
    reuse_check_rows(as, base, T, w, 1);
}

START_TEST(test_contact_slot_reuse)
{
    char j[2048];
    bar_scene(j, sizeof j, "");
    for (int nth = 1; nth <= 3; ++nth) {
        omp_set_num_threads(nth);
        ct_scene sc;
        double *base;
        ct_sim *sim = slot_sim(&sc, j, &base);
        ck_assert_int_eq(sim->dofs.identity, 1);
        ct_diag d;
        ct_diag_init(&d);
        ct_assembly as;
        ck_assert_int_eq(ct_assembly_build(&as, sim, &d), CT_OK);
        ck_assert_int_lt(as.nfree + 3 * (sim->nq / 7), sim->ndof); /* the fixed side too */
        ct_triplets T;
        ct_triplets_init(&T);
        unsigned s = 4242u;

        /* 1. model-ordered element terms: lookups by verified predictions, few searches */
        enum { M = 600 };
        reuse_term L0[M], L1[M + 200];
        for (int i = 0; i < M; ++i) L0[i] = reuse_make_term(sim, &s, 0, RT_MODEL);
        reuse_sequence(L0, M, &T, 1u, NULL);
        ck_assert_int_eq(ct_assembly_fill(&as, sim, sim->q, 1.0, 1e-4, &T, 0.8, 0, NULL, NULL, &d), CT_OK);
        reuse_check(&as, base, &T, 0.8);
        ck_assert_int_eq(as.cm_reused, 0);
        ck_assert_int_lt(as.cm_searches * 4, (long)T.n);
        const long searches_model = as.cm_searches;
        const size_t n_model = T.n;

        /* 2. the block structure broken: full blocks, shuffled, duplicates, shifted rows, and
         *    terms outside the pattern; the fallbacks give the plain search's slots */
        ct_assembly fresh;
        ck_assert_int_eq(ct_assembly_build(&fresh, sim, &d), CT_OK);
        for (int i = 0; i < M; ++i) L0[i] = reuse_make_term(sim, &s, i % 9 == 4, i % 3 ? (int)(cache_rng(&s) % RT_NMODES) : RT_MODEL);
        reuse_sequence(L0, M, &T, 2u, NULL);
        const long nnz0 = (long)ct_csc_nnz(&fresh.A);
        ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, &T, 1.1, 0, NULL, NULL, &d), CT_OK);
        ck_assert_int_gt((long)ct_csc_nnz(&fresh.A), nnz0);
        reuse_check(&fresh, base, &T, 1.1);
        ck_assert_int_gt(fresh.cm_searches, 0);

        /* 3. model-ordered terms, some outside the pattern, then the same terms edited as between
         *    Newton iterations: runs of dropped and of new terms
         *    longer than the window, scattered ones, changed vertices, a term moved to the front,
         *    new terms outside the pattern (growth while slots are reused) */
        for (int i = 0; i < M; ++i) { /* vertices sorted (as the contact model's terms): chunks = terms */
            L0[i] = reuse_make_term(sim, &s, i % 9 == 4, RT_MODEL);
            for (int a = 1; a < L0[i].nv; ++a)
                for (int b = a; b > 0 && L0[i].v[b - 1] > L0[i].v[b]; --b) {
                    const int v = L0[i].v[b];
                    L0[i].v[b] = L0[i].v[b - 1], L0[i].v[b - 1] = v;
                }
        }
        reuse_sequence(L0, M, &T, 4u, NULL);
        ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, &T, 1.4, 0, NULL, NULL, &d), CT_OK);
        reuse_check(&fresh, base, &T, 1.4);
        int m1 = 0;
        L1[m1++] = L0[M - 3];
        for (int i = 0; i < M; ++i) {
            if (i >= 40 && i < 90) continue;           /* 50 dropped */
            if (i % 37 == 5 || i == M - 3) continue;    /* scattered drops, the moved term */
            if (i == 200)
                for (int q = 0; q < 30; ++q) L1[m1++] = reuse_make_term(sim, &s, q % 3 == 0, RT_MODEL);
            if (i % 53 == 7) L1[m1++] = reuse_make_term(sim, &s, 1, RT_MODEL);
            reuse_term t = L0[i];
            if (i % 41 == 11) t.v[0] = (t.v[0] + 1) % sim->nq; /* changed (may repeat a vertex) */
            L1[m1++] = t;
        }
        ck_assert_int_le(m1, M + 200);
        size_t off[M + 200];
        reuse_sequence(L1, m1, &T, 3u, off);
        /* two unchanged 4-vertex terms (one chunk of 78 triplets each) altered in their middle:
         * one row (same chunk key: length, first and last 16 triplets), one column (same rows) */
        int altered = 0;
        for (int i = 3 * m1 / 4; i < m1 - 1 && altered < 2; ++i)
            if (L1[i].nv == 4 && off[i + 1] - off[i] == 78 && T.row[off[i] + 30] > 0) {
                if (altered++ == 0) T.row[off[i] + 30] -= 1;
                else T.col[off[i] + 30] += 1;
            }
        ck_assert_int_eq(altered, 2);
        long reused0 = fresh.cm_reused, hits0 = fresh.cm_hits;
        const long nnz1 = (long)ct_csc_nnz(&fresh.A);
        ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, &T, 0.9, 0, NULL, NULL, &d), CT_OK);
        ck_assert_int_gt((long)ct_csc_nnz(&fresh.A), nnz1);
        ck_assert_int_eq(fresh.cm_hits, hits0);
        ck_assert_int_gt(2 * (fresh.cm_reused - reused0), (long)T.n); /* most triplets reused */
        ck_assert_int_lt(fresh.cm_reused - reused0, (long)T.n);
        reuse_check(&fresh, base, &T, 0.9);

        /* 4. the same sequence, new values: the whole recorded sequence */
        cache_values(&T, 77u);
        ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, &T, 1.3, 0, NULL, NULL, &d), CT_OK);
        ck_assert_int_eq(fresh.cm_hits, hits0 + 1);
        reuse_check(&fresh, base, &T, 1.3);

        /* 5. the terms in reverse order: the chunks found through the key index */
        for (int i = 0; i < m1 / 2; ++i) {
            const reuse_term t = L1[i];
            L1[i] = L1[m1 - 1 - i], L1[m1 - 1 - i] = t;
        }
        reuse_sequence(L1, m1, &T, 3u, NULL);
        reused0 = fresh.cm_reused;
        ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, &T, 0.7, 0, NULL, NULL, &d), CT_OK);
        ck_assert_int_gt(2 * (fresh.cm_reused - reused0), (long)T.n);
        reuse_check(&fresh, base, &T, 0.7);

        /* 6. short chunks (arbitrary triplets): mapped without chunks for a while, same slots */
        cache_triplets(sim, &T, 5000, 99u, 7);
        ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, &T, 1.2, 0, NULL, NULL, &d), CT_OK);
        reuse_check(&fresh, base, &T, 1.2);
        for (int rep = 0; rep < 3; ++rep) {
            reuse_sequence(L1, m1 - rep, &T, 5u + (unsigned)rep, NULL);
            reused0 = fresh.cm_reused;
            ck_assert_int_eq(ct_assembly_fill(&fresh, sim, sim->q, 1.0, 1e-4, &T, 0.6, 0, NULL, NULL, &d), CT_OK);
            ck_assert_int_eq(fresh.cm_reused, reused0); /* no chunks compared */
            reuse_check(&fresh, base, &T, 0.6);
        }
        printf("slot reuse, %d thread(s): %ld searches for %zu model-ordered triplets; %ld mappings, %ld reused "
               "triplets, %ld searches; slots = plain search, sums bitwise\n",
               nth, searches_model, n_model, fresh.cm_calls, fresh.cm_reused, fresh.cm_searches);
        ct_triplets_free(&T);
        free(base);
        ct_assembly_free(&fresh);
        ct_assembly_free(&as);
        ct_diag_free(&d);
        ct_sim_destroy(sim);
        ct_scene_free(&sc);
    }
    omp_set_num_threads(1);
}
END_TEST

/* A block sequence as a contact model emits it: each term one ct_triplets_add_block (random
 * values; upper triangle; its block noted), and before every plain_every-th term a few plain
 * triplets (a gap in the block table). With lazy the blocks' rows and columns are overwritten
 * with -5 (a producer that left them unwritten) and T->rows_lazy is set: the mapping must take
 * them from the block table, or write them first. */
static void block_sequence(const reuse_term *L, int m, ct_triplets *T, unsigned seed, int plain_every, int lazy)
{
    ct_triplets_clear(T);
    T->upper = 1;
    unsigned s = seed;
    for (int i = 0; i < m; ++i) {
        if (plain_every && i % plain_every == 0)
            for (int q = 0; q < 3; ++q) {
                const int r = 3 * L[i].v[0] + q, c = 3 * L[i].v[L[i].nv - 1] + 2;
                ck_assert_int_eq(ct_triplets_add(T, r < c ? r : c, r < c ? c : r, 0.25 * (q + 1)), CT_OK);
            }
        const int nd = 3 * L[i].nv;
        double H[144];
        for (int j = 0; j < nd; ++j)
            for (int k = 0; k <= j; ++k)
                H[k + nd * j] = H[j + nd * k] = ((int)(cache_rng(&s) % 2001u) - 1000) / 997.0;
        ck_assert_int_eq(ct_triplets_add_block(T, L[i].v, L[i].nv, 3, H), CT_OK);
    }
    if (lazy) {
        for (size_t b = 0; b < T->nblk; ++b) {
            const size_t k0 = T->blk[b].k0, len = ct_triplet_block_count(T->blk[b].v, T->blk[b].nv, 3, 1);
            for (size_t k = k0; k < k0 + len; ++k) T->row[k] = T->col[k] = -5;
        }
        T->rows_lazy = 1;
    }
}

/* fill, then the rows written back (lazy) and the slots and sums checked */
static void block_fill_check(ct_assembly *as, const ct_sim *sim, const double *base, ct_triplets *T, double w,
                             int rows_recorded)
{
    ct_diag d;
    ct_diag_init(&d);
    ck_assert_int_eq(ct_assembly_fill(as, sim, sim->q, 1.0, 1e-4, T, w, 0, NULL, NULL, &d), CT_OK);
    ct_diag_free(&d);
    ct_triplets_fill_rows(T);
    reuse_check_rows(as, base, T, w, rows_recorded);
}

/* The block path of the slot cache (a block table drives the mapping): the slots are those of
 * a plain search and the sums bitwise those in triplet order, whether the blocks' rows were
 * written or not, with gaps of plain triplets, pattern growth, edits between calls, the terms
 * reversed, and switches to and from the chunk path (a sequence without blocks, one with
 * blocks that cover too little). */
START_TEST(test_contact_slot_blocks)
{
    char j[2048];
    bar_scene(j, sizeof j, "");
    for (int nth = 1; nth <= 3; ++nth) {
        omp_set_num_threads(nth);
        ct_scene sc;
        double *base;
        ct_sim *sim = slot_sim(&sc, j, &base);
        ct_diag d;
        ct_diag_init(&d);
        ct_assembly as;
        ck_assert_int_eq(ct_assembly_build(&as, sim, &d), CT_OK);
        ct_triplets T;
        ct_triplets_init(&T);
        unsigned s = 777u;
        enum { M = 500 };
        reuse_term L0[M], L1[M + 100];
        for (int i = 0; i < M; ++i) L0[i] = reuse_make_term(sim, &s, i % 11 == 4, RT_MODEL);

        /* 1. lazy rows, gaps, growth: everything looked up from the stencils */
        block_sequence(L0, M, &T, 1u, 7, 1);
        const long nnz0 = (long)ct_csc_nnz(&as.A);
        block_fill_check(&as, sim, base, &T, 0.8, 0);
        ck_assert_int_gt((long)ct_csc_nnz(&as.A), nnz0);
        ck_assert_int_eq(as.cm_reused, 0);

        /* 2. edited as between Newton iterations (drops, new terms outside the pattern, a
         *    changed vertex, a term moved to the front): most blocks reuse their slots */
        int m1 = 0;
        L1[m1++] = L0[M - 2];
        for (int i = 0; i < M; ++i) {
            if ((i >= 30 && i < 60) || i % 29 == 3 || i == M - 2) continue;
            if (i % 47 == 9) L1[m1++] = reuse_make_term(sim, &s, 1, RT_MODEL);
            reuse_term t = L0[i];
            if (i % 43 == 13) t.v[0] = (t.v[0] + 1) % sim->nq;
            L1[m1++] = t;
        }
        block_sequence(L1, m1, &T, 2u, 7, 1);
        long reused0 = as.cm_reused, hits0 = as.cm_hits;
        const long nnz1 = (long)ct_csc_nnz(&as.A);
        block_fill_check(&as, sim, base, &T, 1.1, 0);
        ck_assert_int_gt((long)ct_csc_nnz(&as.A), nnz1);
        ck_assert_int_gt(2 * (as.cm_reused - reused0), (long)T.n);
        ck_assert_int_lt(as.cm_reused - reused0, (long)T.n);
        ck_assert_int_eq(as.cm_hits, hits0);

        /* 3. without gaps, the same blocks twice: the second is a hit (no walk) */
        block_sequence(L1, m1, &T, 3u, 0, 1);
        block_fill_check(&as, sim, base, &T, 0.9, 0);
        block_sequence(L1, m1, &T, 4u, 0, 0);
        block_fill_check(&as, sim, base, &T, 1.3, 0);
        ck_assert_int_eq(as.cm_hits, hits0 + 1);

        /* 4. reversed: the partners found through the key index */
        for (int i = 0; i < m1 / 2; ++i) {
            const reuse_term t = L1[i];
            L1[i] = L1[m1 - 1 - i], L1[m1 - 1 - i] = t;
        }
        block_sequence(L1, m1, &T, 5u, 5, 1);
        reused0 = as.cm_reused;
        block_fill_check(&as, sim, base, &T, 0.7, 0);
        ck_assert_int_gt(2 * (as.cm_reused - reused0), (long)T.n);

        /* 5. the chunk path in between (no blocks), then blocks again: nothing reused across */
        reuse_sequence(L1, m1, &T, 6u, NULL);
        ck_assert_uint_eq(T.nblk, 0);
        block_fill_check(&as, sim, base, &T, 1.2, 1);
        block_sequence(L1, m1, &T, 7u, 5, 1);
        reused0 = as.cm_reused;
        block_fill_check(&as, sim, base, &T, 0.6, 0);
        ck_assert_int_eq(as.cm_reused, reused0);

        /* 6. blocks covering less than half the triplets: the chunk path, the lazy rows written */
        block_sequence(L1, 40, &T, 8u, 0, 1);
        {
            ct_triplets P;
            ct_triplets_init(&P);
            cache_triplets(sim, &P, 6000, 31u, 9);
            P.upper = 1;
            ck_assert_int_eq(ct_triplets_append(&T, &P), CT_OK);
            ct_triplets_free(&P);
        }
        ck_assert_int_eq(T.rows_lazy, 1);
        block_fill_check(&as, sim, base, &T, 1.05, 1);

        printf("block slots, %d thread(s): %ld mappings, %ld hits, %ld reused triplets, %ld searches; slots = "
               "plain search, sums bitwise\n", nth, as.cm_calls, as.cm_hits, as.cm_reused, as.cm_searches);
        ct_triplets_free(&T);
        free(base);
        ct_assembly_free(&as);
        ct_diag_free(&d);
        ct_sim_destroy(sim);
        ct_scene_free(&sc);
    }
    omp_set_num_threads(1);
}
END_TEST

static Suite *sim_suite(void)
{
    Suite *s = suite_create("sim");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_motion_eval);
    tcase_add_test(tc, test_free_fall_2d);
    tcase_add_test(tc, test_free_fall_3d);
    tcase_add_test(tc, test_reaction_equals_weight);
    tcase_add_test(tc, test_hanging_bar);
    tcase_add_test(tc, test_energy_rigid_invariance);
    tcase_add_test(tc, test_embedded_identity_bitwise);
    tcase_add_test(tc, test_embedded_coinciding_permuted);
    tcase_add_test(tc, test_embedded_reduced_mass);
    tcase_add_test(tc, test_fd_embedded_2d);
    tcase_add_test(tc, test_fd_embedded_3d);
    tcase_add_test(tc, test_threads_deterministic);
    tcase_add_test(tc, test_single_analysis);
    tcase_add_test(tc, test_restart_continues);
    tcase_add_test(tc, test_contact_slot_cache);
    tcase_add_test(tc, test_contact_slot_blocks);
    tcase_add_test(tc, test_contact_slot_reuse);
    suite_add_tcase(s, tc);
    TCase *tf = tcase_create("frames");
    tcase_set_timeout(tf, 60);
    tcase_add_test(tf, test_frames_contact_fields);
    suite_add_tcase(s, tf);
    return s;
}

CT_TEST_MAIN(sim_suite)
