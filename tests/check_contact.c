/* check_contact.c — the barrier, the collision-set constructions and friction against closed
 * forms.
 *
 * - barrier: finite differences of b(d) and of its squared-distance form, C² at d̂;
 * - pressure: two plates face to face at a uniform gap d < d̂ carry the force A·κ(−b'(d)) for
 *   meshes 4×4, 8×8, 16×16 and 7×7 against 12×12 (issue 3 acceptance: within 3 %);
 * - friction: a block sliding on a half-space feels μ·(normal force) opposite to its slip.
 */
#include "ct_test_util.h"

#include "contactlab/ct_barrier.h"
#include "contactlab/ct_friction.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void free_sim(ct_sim *sim, ct_scene *sc)
{
    ct_sim_destroy(sim);
    ct_scene_free(sc);
}

/* ---- barrier ---- */

START_TEST(test_barrier_derivatives)
{
    const double dhat = 1e-3;
    double worst1 = 0, worst2 = 0, worsts1 = 0, worsts2 = 0;
    for (int k = 1; k < 40; ++k) {
        double d = dhat * k / 40.0, h = 1e-7 * dhat;
        double b1, b2, bp1, bm1;
        ct_barrier(d, dhat, &b1, &b2);
        double fd1 = (ct_barrier(d + h, dhat, NULL, NULL) - ct_barrier(d - h, dhat, NULL, NULL)) / (2 * h);
        ct_barrier(d + h, dhat, &bp1, NULL);
        ct_barrier(d - h, dhat, &bm1, NULL);
        double fd2 = (bp1 - bm1) / (2 * h);
        worst1 = fmax(worst1, ct_rel_err(b1, fd1, 1e-6));
        worst2 = fmax(worst2, ct_rel_err(b2, fd2, 1.0));
        /* squared-distance form */
        double s = d * d, hs = 1e-7 * s, bs, bss, bsp, bsm;
        ct_barrier_s(s, dhat, &bs, &bss);
        double fs1 = (ct_barrier_s(s + hs, dhat, NULL, NULL) - ct_barrier_s(s - hs, dhat, NULL, NULL)) / (2 * hs);
        ct_barrier_s(s + hs, dhat, &bsp, NULL);
        ct_barrier_s(s - hs, dhat, &bsm, NULL);
        worsts1 = fmax(worsts1, ct_rel_err(bs, fs1, 1e-6 * fabs(bs) + 1e-300));
        worsts2 = fmax(worsts2, ct_rel_err(bss, (bsp - bsm) / (2 * hs), 1e-6 * fabs(bss) + 1e-300));
        /* the same function of d */
        ck_assert_double_eq_tol(ct_barrier_s(s, dhat, NULL, NULL), ct_barrier(d, dhat, NULL, NULL),
                                1e-15 * fabs(ct_barrier(d, dhat, NULL, NULL)) + 1e-30);
    }
    printf("barrier FD rel. err: b' %.2e, b'' %.2e; squared form: b_s %.2e, b_ss %.2e\n", worst1, worst2, worsts1,
           worsts2);
    ck_assert(worst1 < 1e-6 && worst2 < 1e-5 && worsts1 < 1e-6 && worsts2 < 1e-5);
    /* C² at d̂: value, slope and curvature vanish from below */
    double b1, b2;
    double b = ct_barrier(dhat * (1 - 1e-6), dhat, &b1, &b2);
    ck_assert(fabs(b) < 1e-20 && fabs(b1) < 1e-10 && fabs(b2) < 1e-2 / dhat);
    ck_assert(ct_barrier(dhat, dhat, &b1, &b2) == 0.0 && b1 == 0.0 && b2 == 0.0);
    /* closed form: b(d̂/2) = −d̂ (1/4) ln(1/2) */
    ck_assert_double_eq_tol(ct_barrier(0.5 * dhat, dhat, NULL, NULL), 0.25 * dhat * log(2.0), 1e-18);
    ck_assert(ct_barrier_pressure(0.5 * dhat, dhat, 1e4) > 0);
}
END_TEST

/* ---- pressure: plates face to face ---- */

/* Total barrier force on the top plate (bodies "bottom", "top") for the given meshes. */
static double plate_force(int nb, int nt, double gap, double dhat, double kappa, const char *colset,
                          const char *eew, double *lateral)
{
    const double L = 1.0, t = 4e-3;
    char json[2048];
    snprintf(json, sizeof json,
             "{\"dim\": 3, \"time\": {\"dt\": 0.01, \"duration\": 0.01}, \"gravity\": [0, 0, 0],"
             " \"contact\": {\"model\": \"ipc\", \"dhat\": %.17g, \"kappa\": %.17g, \"collision_set\": \"%s\","
             " \"ee_weight\": \"%s\"},"
             " \"bodies\": ["
             "  {\"name\": \"bottom\", \"mesh\": {\"generator\": \"box\", \"size\": [%g, %g, %g], \"cells\": [%d, 1, %d],"
             "   \"origin\": [0, %.17g, 0]}, \"material\": {\"model\": \"neo_hookean\", \"E\": 1e6, \"nu\": 0.3,"
             "   \"density\": 1000}},"
             "  {\"name\": \"top\", \"mesh\": {\"generator\": \"box\", \"size\": [%g, %g, %g], \"cells\": [%d, 1, %d],"
             "   \"origin\": [0, %.17g, 0]}, \"material\": {\"model\": \"neo_hookean\", \"E\": 1e6, \"nu\": 0.3,"
             "   \"density\": 1000}}]}",
             dhat, kappa, colset, eew, L, t, L, nb, nb, -t, L, t, L, nt, nt, gap);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    ct_force_report fr;
    ck_assert_int_eq(ct_force_report_init(&fr, 2, 8), CT_OK);
    ck_assert_int_eq(sim->model->forces(sim->mstate, &sim->ctx, sim->x, &fr), CT_OK);
    const double *Ft = ct_force_report_at(&fr, 1, 0, CT_FORCE_BARRIER);
    const double *Fb = ct_force_report_at(&fr, 0, 1, CT_FORCE_BARRIER);
    /* action = −reaction */
    for (int i = 0; i < 3; ++i) ck_assert(fabs(Ft[i] + Fb[i]) <= 1e-12 * fabs(Ft[1]) + 1e-300);
    *lateral = hypot(Ft[0], Ft[2]);
    double fy = Ft[1];
    ct_force_report_free(&fr);
    free_sim(sim, &sc);
    return fy;
}

START_TEST(test_pressure_plates)
{
    const double dhat = 1e-3, kappa = 1e4, gap = 0.5 * dhat;
    const double expect = 1.0 * ct_barrier_pressure(gap, dhat, kappa); /* A = 1 m² */
    const int meshes[4][2] = {{4, 4}, {8, 8}, {16, 16}, {7, 12}};
    printf("pressure test: A·p(d) = %.6g N (d = d̂/2, κ = %g Pa)\n", expect, kappa);
    printf("  mesh      convergent   conv.+area-EE   ipc2020   (total normal force / A·p(d))\n");
    for (int m = 0; m < 4; ++m) {
        double lat, lat2, lat3;
        double fc = plate_force(meshes[m][0], meshes[m][1], gap, dhat, kappa, "convergent", "dhat2", &lat);
        double fa = plate_force(meshes[m][0], meshes[m][1], gap, dhat, kappa, "convergent", "area", &lat2);
        double fo = plate_force(meshes[m][0], meshes[m][1], gap, dhat, kappa, "ipc2020", "area", &lat3);
        printf("  %2dx%-2d/%2dx%-2d  %8.4f      %8.4f       %8.4f     (lateral/normal %.1e)\n", meshes[m][0],
               meshes[m][0], meshes[m][1], meshes[m][1], fc / expect, fa / expect, fo / expect, lat / fc);
        fflush(stdout);
    }
    for (int m = 0; m < 4; ++m) {
        double lat;
        double fc = plate_force(meshes[m][0], meshes[m][1], gap, dhat, kappa, "convergent", "dhat2", &lat);
        ck_assert_msg(fabs(fc / expect - 1.0) < 0.03, "convergent set: force ratio %g", fc / expect);
        ck_assert(lat < 1e-6 * fabs(fc)); /* a uniform gap pushes straight apart (round-off only) */
    }
}
END_TEST

/* ---- friction: a block sliding on a half-space ---- */

START_TEST(test_friction_sliding_block)
{
    /* A 2D square resting on the ground at gap d < d̂; pushed so that in one step its bottom
     * slides far beyond ε_v h. The friction force must be −μ·(barrier normal force) along the
     * slip direction. */
    const char *json =
        "{\"dim\": 2, \"time\": {\"dt\": 0.01, \"duration\": 0.01}, \"gravity\": [0, 0],"
        " \"contact\": {\"model\": \"ipc\", \"dhat\": 1e-3, \"kappa\": 1e5, \"mu\": 0.4, \"eps_v\": 1e-3},"
        " \"bodies\": [{\"name\": \"block\", \"mesh\": {\"generator\": \"rect\", \"size\": [0.2, 0.2], \"cells\": [4, 4],"
        "  \"origin\": [0, 0.0004]}, \"material\": {\"model\": \"neo_hookean\", \"E\": 1e6, \"nu\": 0.3,"
        "  \"density\": 1000}}],"
        " \"obstacles\": [{\"name\": \"ground\", \"type\": \"halfspace\", \"point\": [0, 0], \"normal\": [0, 1]}]}";
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    int n = sim->nx;
    /* the step started 1 cm to the left: slip velocity 1 m/s ≫ ε_v */
    for (int v = 0; v < n; ++v) {
        sim->x_prev[2 * v] = sim->x[2 * v] - 0.01;
        sim->x_prev[2 * v + 1] = sim->x[2 * v + 1];
    }
    ct_force_report fr;
    ck_assert_int_eq(ct_force_report_init(&fr, 2, 8), CT_OK);
    /* lag at x_prev: the same heights as x, so λ is the barrier force at x */
    ck_assert_int_eq(sim->model->begin_step(sim->mstate, &sim->ctx), CT_OK);
    ck_assert_int_eq(sim->model->forces(sim->mstate, &sim->ctx, sim->x, &fr), CT_OK);
    const double *Fn = ct_force_report_at(&fr, 0, 1, CT_FORCE_BARRIER);
    const double *Ff = ct_force_report_at(&fr, 0, 1, CT_FORCE_FRICTION);
    printf("sliding block: normal %.6g N, friction (%.6g, %.6g) N, ratio %.12f (mu = 0.4)\n", Fn[1], Ff[0], Ff[1],
           -Ff[0] / Fn[1]);
    ck_assert(Fn[1] > 0);
    ck_assert_double_eq_tol(-Ff[0] / Fn[1], 0.4, 1e-12);
    ck_assert(fabs(Ff[1]) < 1e-12 * fabs(Ff[0]));
    ct_force_report_free(&fr);
    free_sim(sim, &sc);
}
END_TEST

/* ---- friction scalar functions ---- */

START_TEST(test_friction_mollifier)
{
    const double eps = 1e-4;
    double worst = 0;
    for (int k = 1; k < 60; ++k) {
        double y = eps * k / 30.0, h = 1e-7 * eps;
        double fd = (ct_friction_f0(y + h, eps) - ct_friction_f0(y - h, eps)) / (2 * h);
        worst = fmax(worst, fabs(fd - ct_friction_f1(y, eps)));
        ck_assert_double_eq_tol(ct_friction_f1_over_y(y, eps) * y, ct_friction_f1(y, eps), 1e-14);
    }
    printf("friction f0' = f1: max abs err %.2e\n", worst);
    ck_assert(worst < 1e-7);
    /* continuity at ε and the limits */
    ck_assert_double_eq_tol(ct_friction_f0(eps * (1 - 1e-12), eps), eps, 1e-15);
    ck_assert_double_eq_tol(ct_friction_f1(eps * (1 - 1e-12), eps), 1.0, 1e-10);
    ck_assert_double_eq_tol(ct_friction_f1_over_y(0.0, eps), 2.0 / eps, 1e-9);
    ck_assert_double_eq_tol(ct_friction_f0(0.0, eps), eps / 3.0, 1e-18);
}
END_TEST

static Suite *contact_suite(void)
{
    Suite *s = suite_create("contact");
    TCase *tc = tcase_create("contact");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_barrier_derivatives);
    tcase_add_test(tc, test_friction_mollifier);
    tcase_add_test(tc, test_pressure_plates);
    tcase_add_test(tc, test_friction_sliding_block);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(contact_suite)
