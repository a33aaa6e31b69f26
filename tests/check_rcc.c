/* check_rcc.c — the RCC adhesion law (core/rcc.c; paper 000 eq. 5–9): β evolution against the
 * closed-form solutions of eq. 8 at constant gap and eq. 9 at constant pressure (the explicit
 * Euler recursion exactly, the ODE solution to first order in h), the clamp of eq. 7, and the
 * rate-independent limit η → 0 (peak, opening at the peak, dissipated energy). */
#include <math.h>
#include <stdio.h>

#include "contactlab/ct_rcc.h"
#include "ct_test_util.h"

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

static Suite *rcc_suite(void)
{
    Suite *s = suite_create("rcc");
    TCase *tc = tcase_create("rcc");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_debonding_constant_gap);
    tcase_add_test(tc, test_bonding_constant_pressure);
    tcase_add_test(tc, test_clamp_below);
    tcase_add_test(tc, test_rate_independent_limit);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(rcc_suite)
