/* check_rcc.c — the RCC adhesion law (core/contact/rcc.c; Fang et al. 2023 eq. 5–9): β evolution against the
 * closed-form solutions of eq. 8 at constant gap and eq. 9 at constant pressure (the explicit
 * Euler recursion exactly, the ODE solution to first order in h), the clamp of eq. 7, and the
 * rate-independent limit η → 0 (peak, opening at the peak, dissipated energy); the rcc_ipc model:
 * a resting bonded plate keeps its pairs and their β over 100 steps, and a bond carried through a
 * rigid rotation reads no slip. */
#include <math.h>
#include <stdio.h>

#include "contactlab/ct_model.h"
#include "contactlab/ct_rcc.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"
#include "ct_test_util.h"

#include <stdlib.h>
#include <string.h>

static const ct_rcc_law law = {1e6, 5e5, 2.0, 1.0, 1e-3, 1e3}; /* C_N, C_T, η, W, r, p_0 */

/* Eq. 8 at a constant gap d and slip u (traction): with a = C_N d² + C_T u² > W, β falls from 1
 * towards β∞ = W / a. Explicit Euler: β_n = β∞ + (1 − β∞)(1 − h a/η)^n exactly (the rate is
 * (W − a β)/η while β > β∞, and the recursion never crosses β∞ for h a/η ≤ 1); the ODE:
 * β(t) = β∞ + (1 − β∞) e^{−a t/η}, approached to first order in h. */
START_TEST(test_debonding_constant_gap)
{
    const double d = 1.5e-3, u2 = 1e-6, a = law.cn * d * d + law.ct * u2, binf = law.w / a, T = 0.02;
    ck_assert(a > law.w);
    double err_prev = 0.0;
    for (int level = 0; level < 4; ++level) {
        const int n = 50 << level;
        const double h = T / n, q = 1.0 - h * a / law.eta;
        ck_assert(q >= 0.0 && q < 1.0);
        double beta = 1.0, worst = 0.0;
        for (int k = 1; k <= n; ++k) {
            int clamp = 7;
            beta = ct_rcc_beta_step(&law, beta, d, u2, -1.0, h, &clamp);
            ck_assert_int_eq(clamp, 0);
            const double exact_rec = binf + (1.0 - binf) * pow(q, k);
            worst = fmax(worst, fabs(beta - exact_rec));
        }
        ck_assert(worst <= 1e-13);
        const double err = fabs(beta - (binf + (1.0 - binf) * exp(-a * T / law.eta)));
        printf("eq. 8, constant gap: n = %d, |beta - recursion| = %.1e, |beta(T) - ODE| = %.3e%s\n", n, worst, err,
               level ? "" : " (then halving h)");
        if (level) ck_assert(fabs(err_prev / err - 2.0) < 0.1); /* first order */
        err_prev = err;
    }
    /* below the threshold nothing happens: C_N d² < W at β = 1 */
    const double dsmall = 0.5 * sqrt(law.w / law.cn);
    ck_assert(ct_rcc_beta_rate(&law, 1.0, dsmall, 0.0, -1.0) == 0.0);
    ck_assert(ct_rcc_beta_step(&law, 1.0, dsmall, 0.0, -5.0, 0.01, NULL) == 1.0);
}
END_TEST

/* Eq. 9 at a constant pressure p > 0 without slip: β rises from β0 towards p/p_0 with
 * β_n = p/p_0 + (β0 − p/p_0)(1 − h r p_0)^n; with p > p_0 the recursion aims above 1 and the
 * clamp of eq. 7 holds β at 1 (clamp flag +1 on the step that crosses). */
START_TEST(test_bonding_constant_pressure)
{
    const double h = 1e-2, q = 1.0 - h * law.r * law.p0;
    {
        const double p = 0.6 * law.p0, bs = p / law.p0;
        double beta = 0.0;
        for (int k = 1; k <= 400; ++k) {
            int clamp = 7;
            beta = ct_rcc_beta_step(&law, beta, 1e-4, 0.0, p, h, &clamp);
            ck_assert_int_eq(clamp, 0);
            ck_assert(fabs(beta - (bs + (0.0 - bs) * pow(q, k))) <= 1e-14);
        }
        printf("eq. 9, p = 0.6 p0: beta after 400 steps %.6f (saturation %.6f)\n", beta, bs);
        ck_assert(beta < bs);
    }
    {
        const double p = 2.0 * law.p0, bs = p / law.p0;
        double beta = 0.2;
        int k = 0, clamp = 0;
        for (; k < 100000 && clamp == 0; ++k) {
            const double before = beta;
            beta = ct_rcc_beta_step(&law, beta, 1e-4, 0.0, p, h, &clamp);
            if (clamp == 0) ck_assert(fabs(beta - (bs + (0.2 - bs) * pow(q, k + 1))) <= 1e-14);
            else ck_assert(before + h * law.r * (p - before * law.p0) > 1.0);
        }
        ck_assert_int_eq(clamp, 1);
        ck_assert(beta == 1.0);
        /* predicted crossing: first n with bs + (0.2 − bs) q^n > 1 */
        const int n_pred = (int)ceil(log((1.0 - bs) / (0.2 - bs)) / log(q));
        printf("eq. 9, p = 2 p0: clamped at 1 on step %d (predicted %d)\n", k, n_pred);
        ck_assert_int_eq(k, n_pred);
        ck_assert(ct_rcc_beta_step(&law, 1.0, 1e-4, 0.0, p, h, NULL) == 1.0);
    }
    /* slip under compression debonds: rate = r (p − β p0) + (W − β C_T u²)/η */
    const double u2 = 4.0 * law.w / law.ct, rate = ct_rcc_beta_rate(&law, 1.0, 1e-4, u2, 0.5 * law.p0);
    ck_assert(fabs(rate - (law.r * 0.0 + (law.w - law.ct * u2) / law.eta)) <= 1e-12 * fabs(rate));
}
END_TEST

/* Clamp at 0: from β = 1 at a constant gap, one step of size h overshoots below 0 exactly when
 * h (a − W)/η > 1. */
START_TEST(test_clamp_below)
{
    const double d = 3e-3, a = law.cn * d * d, hcrit = law.eta / (a - law.w);
    int clamp = 0;
    double b = ct_rcc_beta_step(&law, 1.0, d, 0.0, -1.0, 0.999 * hcrit, &clamp);
    ck_assert_int_eq(clamp, 0);
    ck_assert(b > 0.0);
    b = ct_rcc_beta_step(&law, 1.0, d, 0.0, -1.0, 1.001 * hcrit, &clamp);
    ck_assert_int_eq(clamp, -1);
    ck_assert(b == 0.0);
}
END_TEST

/* The η → 0 limit: traction C_N d up to d* = √(W/C_N), W²/(C_N d³) beyond; peak √(C_N W) at d*;
 * ∫_0^∞ traction = W/2 + W/2 = W (midpoint rule on a log grid against the closed form). Also:
 * a simulated quasi-static opening with small η and small h approaches it. */
START_TEST(test_rate_independent_limit)
{
    const double ds = sqrt(law.w / law.cn), peak = sqrt(law.cn * law.w);
    ck_assert(fabs(ct_rcc_normal_traction_limit(&law, ds) - peak) <= 1e-12 * peak);
    ck_assert(fabs(ct_rcc_normal_traction_limit(&law, 0.5 * ds) - 0.5 * peak) <= 1e-12 * peak);
    ck_assert(fabs(ct_rcc_normal_traction_limit(&law, 2.0 * ds) - peak / 8.0) <= 1e-12 * peak);
    /* ∫_0^D traction dd by the midpoint rule (fine grid) + the tail W²/(2 C_N D²) */
    const double D = 50.0 * ds;
    const int n = 200000;
    double work = 0.0;
    for (int i = 0; i < n; ++i) {
        const double dm = (i + 0.5) * D / n;
        work += ct_rcc_normal_traction_limit(&law, dm) * D / n;
    }
    work += law.w * law.w / (2.0 * law.cn * D * D);
    printf("eta -> 0: peak %.6g Pa at %.6g m, dissipated %.8f J/m^2 (W = %g)\n", peak, ds, work, law.w);
    ck_assert(fabs(work - law.w) <= 1e-6 * law.w);
    /* explicit Euler at a slow opening and a small η (relaxation time η/a ≈ 1e-4 s, during which
     * the gap opens by 1e-6 m, 0.1 % of d*; h a/η ≤ 0.4 up to 2 d*): peak within 1 % */
    ct_rcc_law fast = law;
    fast.eta = 1e-4;
    const double v = 1e-2, h = 1e-5;
    double beta = 1.0, best = 0.0, dbest = 0.0;
    for (int k = 0; k < 20000; ++k) {
        const double d = v * h * k;
        beta = ct_rcc_beta_step(&fast, beta, d, 0.0, -1.0, h, NULL);
        const double tr = fast.cn * beta * beta * d;
        if (tr > best) best = tr, dbest = d;
    }
    printf("explicit Euler, eta = 1e-4, v = 1 cm/s: peak %.6g Pa at %.6g m (limit %.6g at %.6g)\n", best, dbest, peak,
           ds);
    ck_assert(fabs(best / peak - 1.0) < 0.01);
    ck_assert(fabs(dbest / ds - 1.0) < 0.01);
}
END_TEST

/* The LCP model's traction form of the laws (ct_lcp_beta_rate; Gascón et al. eq. 11, 12, §5.3),
 * explicit Euler as the model steps it, against the discrete closed forms:
 *  - debonding at a constant gap g (the caller passes the traction pn = C β² g of eq. 10):
 *    β̇ = (W − C g² β)/η while C g² β > W, so β_n = β∞ + (1 − β∞)(1 − h C g²/η)^n, β∞ = W/(C g²);
 *  - bonding at a constant compression P (pn = −P, no tangential traction):
 *    β̇ = r (P − β p₀), so β_n = (P/p₀)(1 − (1 − h r p₀)^n) from β = 0;
 *  - the tangential traction alone debonds under compression as it does under traction (the
 *    total traction of §5.3 is √(pn² + pt²) in traction, pt alone in compression).
 * Both recursions to round-off (1e-14). */
START_TEST(test_lcp_beta_laws)
{
    const ct_rcc_law L = {1e6, 0.0, 0.5, 1.0, 2e-4, 1e3}; /* C, (C_T unused), η, W, r, p₀ */
    const double g = 1.5e-3, a = L.cn * g * g, binf = L.w / a, h = 1e-3;
    const double q = 1.0 - h * a / L.eta;
    ck_assert(a > L.w && q > 0.0 && q < 1.0);
    double beta = 1.0, worst = 0.0;
    for (int k = 1; k <= 300; ++k) {
        beta += h * ct_lcp_beta_rate(&L, beta, L.cn * beta * beta * g, 0.0);
        worst = fmax(worst, fabs(beta - (binf + (1.0 - binf) * pow(q, k))));
    }
    const double P = 800.0, qb = 1.0 - h * L.r * L.p0;
    double b2 = 0.0, worst2 = 0.0;
    for (int k = 1; k <= 300; ++k) {
        b2 += h * ct_lcp_beta_rate(&L, b2, -P, 0.0);
        worst2 = fmax(worst2, fabs(b2 - (P / L.p0) * (1.0 - pow(qb, k))));
    }
    /* pt alone: the same rate under compression (no bonding once β p₀ ≥ P) as in traction with pn = 0+ */
    const double pt = 1500.0, bb = 0.9;
    const double r_comp = ct_lcp_beta_rate(&L, bb, -100.0, pt), want = fmin(L.w - pt * pt / (L.cn * bb * bb * bb), 0.0) / L.eta;
    const double r_trac = ct_lcp_beta_rate(&L, bb, 1e-300, pt);
    printf("lcp β laws: debonding at constant gap %.1e from the recursion (β after 300 steps %.6f, β∞ %.6f); bonding at "
           "constant compression %.1e (β %.6f, P/p₀ %.3f); tangential traction alone: %.6g /s under compression, %.6g "
           "in traction, closed form %.6g\n", worst, beta, binf, worst2, b2, P / L.p0, r_comp, r_trac, want);
    fflush(stdout);
    ck_assert(worst < 1e-14 && worst2 < 1e-14);
    ck_assert(fabs(r_comp - want) < 1e-12 * fabs(want) && fabs(r_trac - want) < 1e-12 * fabs(want));
    ck_assert(ct_lcp_beta_rate(&L, 0.0, 1e4, 0.0) == 0.0); /* β = 0: nothing to debond */
    ck_assert(ct_lcp_beta_rate(&L, 0.5, 100.0, 0.0) == 0.0); /* C g² β = p²/(Cβ³) = 0.08 < W: no change */
}
END_TEST

/* A plate bonded to a fixed block (model rcc_ipc, β₀ = 1, no bonding rate, W far above the
 * elastic energy of the rest gap) rests under gravity for 100 steps: the pairs are re-detected
 * every step under the same keys and keep β = 1 (a new pair would start at 0: beta_min would
 * fall; a lost one would change the count). Read from the model's force-report scalars. */
static const char resting_json[] =
    "{\"dim\": 3, \"time\": {\"dt\": 0.01, \"duration\": 1.0}, \"gravity\": [0, -9.81, 0],"
    " \"contact\": {\"model\": \"rcc_ipc\", \"dhat\": 1e-3, \"kappa\": 1e3, \"mu\": 0.2, \"c_n\": 1e5, \"c_t\": 1e5,"
    "  \"w\": 1.0, \"eta\": 1.0, \"r\": 0, \"p0\": 1e3},"
    " \"bodies\": ["
    "  {\"name\": \"base\", \"mesh\": {\"generator\": \"box\", \"size\": [0.1, 0.01, 0.1], \"cells\": [4, 1, 4],"
    "   \"origin\": [0, -0.01, 0]}, \"material\": {\"model\": \"neo_hookean\", \"E\": 1e5, \"nu\": 0.3,"
    "   \"density\": 1000}, \"fixed\": [{\"select\": {\"side\": \"-y\"}}]},"
    "  {\"name\": \"plate\", \"mesh\": {\"generator\": \"box\", \"size\": [0.1, 0.005, 0.1], \"cells\": [5, 1, 5],"
    "   \"origin\": [0, 0.0004, 0]}, \"material\": {\"model\": \"neo_hookean\", \"E\": 1e5, \"nu\": 0.3,"
    "   \"density\": 1000}}]}";

static void rcc_scalars(ct_sim *sim, double *bmin, double *bmax, double *npairs)
{
    ct_force_report fr;
    ck_assert_int_eq(ct_force_report_init(&fr, sim->nb + sim->ctx.nobstacles, 16), CT_OK);
    ct_force_report_zero(&fr);
    ck_assert_int_eq(ct_model_forces(sim->model, &sim->ctx, sim->x, &fr), CT_OK);
    *bmin = *bmax = *npairs = NAN;
    for (int k = 0; k < fr.nscalars; ++k) {
        if (strcmp(fr.scalar_names[k], "beta_min") == 0) *bmin = fr.scalars[k];
        if (strcmp(fr.scalar_names[k], "beta_max") == 0) *bmax = fr.scalars[k];
        if (strcmp(fr.scalar_names[k], "rcc_pairs") == 0) *npairs = fr.scalars[k];
    }
    ct_force_report_free(&fr);
}

START_TEST(test_resting_plate_keeps_beta)
{
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, resting_json, NULL);
    ck_assert_ptr_nonnull(sim);
    ct_diag d;
    ct_diag_init(&d);
    double b0, b1, n0 = NAN, bmin, bmax, np;
    for (int k = 0; k < 100; ++k) {
        ck_assert_int_eq(ct_sim_step(sim, &d), CT_OK);
        rcc_scalars(sim, &bmin, &bmax, &np);
        if (k == 0) {
            n0 = np;
            b0 = bmin, b1 = bmax;
            (void)b0, (void)b1;
        }
        ck_assert(np == n0);
        ck_assert(bmin == 1.0 && bmax == 1.0);
    }
    /* both faces bond: 36 plate vertices to the base, 25 base-top vertices to the plate */
    printf("resting bonded plate: %g pairs, beta in [%g, %g] after 100 steps (t = %g s)\n", n0, bmin, bmax, sim->t);
    ck_assert(n0 == 36.0 + 25.0);
    ct_diag_free(&d);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

/* A bond carried through a rigid rotation reads no slip: lag the model at x (pairs created, β₀),
 * take the energy there, then lag the same instance at R x + t (0.3 rad about an oblique axis):
 * the anchors' offsets are kept in the anchor's frame, so the energy is the same (a world-frame
 * offset would read the rotation as a slip of |R r0 − r0| ≈ 0.3 |r0| and add C_T/2 β² u²). */
START_TEST(test_bond_rotation_no_slip)
{
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, resting_json, NULL);
    ck_assert_ptr_nonnull(sim);
    const int nx = sim->nx;
    double *x = malloc((size_t)nx * 3 * sizeof *x), *y = malloc((size_t)nx * 3 * sizeof *y);
    memcpy(x, sim->x, (size_t)nx * 3 * sizeof *x);
    /* lagged at x (x_prev = x) */
    memcpy(sim->x_prev, x, (size_t)nx * 3 * sizeof *x);
    ck_assert_int_eq(ct_model_begin_step(sim->model, &sim->ctx), CT_OK);
    double E0 = 0.0, E1 = 0.0;
    ck_assert_int_eq(ct_model_energy(sim->model, &sim->ctx, x, &E0), CT_OK);
    /* rotation about (1, 2, 3)/|.| by 0.3 rad (Rodrigues), then a translation */
    const double ax[3] = {1 / sqrt(14.0), 2 / sqrt(14.0), 3 / sqrt(14.0)}, th = 0.3, cth = cos(th), sth = sin(th);
    for (int v = 0; v < nx; ++v) {
        const double *p = x + 3 * v;
        const double dot = ax[0] * p[0] + ax[1] * p[1] + ax[2] * p[2];
        const double cr[3] = {ax[1] * p[2] - ax[2] * p[1], ax[2] * p[0] - ax[0] * p[2], ax[0] * p[1] - ax[1] * p[0]};
        for (int k = 0; k < 3; ++k) y[3 * v + k] = p[k] * cth + cr[k] * sth + ax[k] * dot * (1 - cth) + 0.01 * (k + 1);
    }
    memcpy(sim->x_prev, y, (size_t)nx * 3 * sizeof *y);
    ck_assert_int_eq(ct_model_begin_step(sim->model, &sim->ctx), CT_OK);
    ck_assert_int_eq(ct_model_energy(sim->model, &sim->ctx, y, &E1), CT_OK);
    double bmin, bmax, np;
    memcpy(sim->x, y, (size_t)nx * 3 * sizeof *y);
    rcc_scalars(sim, &bmin, &bmax, &np);
    printf("bond through a 0.3 rad rotation: E %.12g -> %.12g J (rel. %.1e), %g pairs, beta in [%g, %g]\n", E0, E1,
           fabs(E1 - E0) / fabs(E0), np, bmin, bmax);
    ck_assert(fabs(E1 - E0) <= 1e-10 * fabs(E0));
    ck_assert(np == 61.0 && bmin == 1.0);
    free(x);
    free(y);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

static Suite *rcc_suite(void)
{
    Suite *s = suite_create("rcc");
    TCase *tc = tcase_create("rcc");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_debonding_constant_gap);
    tcase_add_test(tc, test_bonding_constant_pressure);
    tcase_add_test(tc, test_clamp_below);
    tcase_add_test(tc, test_rate_independent_limit);
    tcase_add_test(tc, test_lcp_beta_laws);
    tcase_add_test(tc, test_resting_plate_keeps_beta);
    tcase_add_test(tc, test_bond_rotation_no_slip);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(rcc_suite)
