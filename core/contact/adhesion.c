/* adhesion.c — Fang et al. normal and tangential adhesion laws. See ct_adhesion.h. */
#include "contactlab/ct_adhesion.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ct_adhesion_law ct_adhesion_law_make(ct_adhesion_variant variant, double dp, double da, double y_eps)
{
    ct_adhesion_law L;
    memset(&L, 0, sizeof L);
    L.variant = variant;
    L.dp = dp;
    L.da = da;
    /* the law is the same piecewise quadratic in its variable (d or s = d²) */
    L.p = variant == CT_ADH_SQUARED ? dp * dp : dp;
    L.a = variant == CT_ADH_SQUARED ? da * da : da;
    if (!(y_eps > 0.0)) return L; /* zero law: every coefficient 0 */
    L.y_eps = y_eps;
    /* a'(d̂_p) = Yε_c: distance form 2 a₂ (d̂_p − d̂_a); squared form 2 d̂_p · 2 a₂ (d̂_p² − d̂_a²) */
    L.a2 = variant == CT_ADH_SQUARED ? y_eps / (4.0 * dp * (L.p - L.a)) : y_eps / (2.0 * (L.p - L.a));
    L.a1 = L.a2 * (1.0 - L.a / L.p);
    L.c1 = L.a2 * (L.a - L.p) * (L.a - L.p) - L.a1 * L.p * L.p;
    L.b2 = -2.0 * L.a2 * L.a;
    L.c2 = L.a2 * L.a * L.a;
    return L;
}

/* The piecewise quadratic q(z) in the law's own variable z, with q', q''. */
static double quad(const ct_adhesion_law *L, double z, double *q1, double *q2)
{
    if (z >= L->a) {
        if (q1) *q1 = 0.0;
        if (q2) *q2 = 0.0;
        return 0.0;
    }
    if (z < L->p) {
        if (q1) *q1 = 2.0 * L->a1 * z;
        if (q2) *q2 = 2.0 * L->a1;
        return L->a1 * z * z + L->c1;
    }
    if (q1) *q1 = 2.0 * L->a2 * z + L->b2;
    if (q2) *q2 = 2.0 * L->a2;
    return (L->a2 * z + L->b2) * z + L->c2;
}

double ct_adhesion(const ct_adhesion_law *L, double d, double *d1, double *d2)
{
    if (L->variant == CT_ADH_DISTANCE) return quad(L, d, d1, d2);
    /* A(s) with s = d²: a' = 2d A', a'' = 2 A' + 4 d² A'' */
    double q1, q2;
    const double v = quad(L, d * d, &q1, &q2);
    if (d1) *d1 = 2.0 * d * q1;
    if (d2) *d2 = 2.0 * q1 + 4.0 * d * d * q2;
    return v;
}

double ct_adhesion_s(const ct_adhesion_law *L, double s, double *as, double *ass)
{
    if (L->variant == CT_ADH_SQUARED) return quad(L, s, as, ass);
    if (s >= L->a * L->a) {
        if (as) *as = 0.0;
        if (ass) *ass = 0.0;
        return 0.0;
    }
    if (s < L->p * L->p) { /* a₁ d² + c₁ = a₁ s + c₁: linear in s */
        if (as) *as = L->a1;
        if (ass) *ass = 0.0;
        return L->a1 * s + L->c1;
    }
    /* a₂ s + b₂ √s + c₂ */
    const double d = sqrt(s);
    if (as) *as = L->a2 + 0.5 * L->b2 / d;
    if (ass) *ass = -0.25 * L->b2 / (s * d);
    return L->a2 * s + L->b2 * d + L->c2;
}

double ct_adhesion_ft0(double y, double eps)
{
    if (y >= 2.0 * eps) return 4.0 * eps / 3.0;
    return y * y / eps - y * y * y / (3.0 * eps * eps);
}

double ct_adhesion_ft(double y, double eps)
{
    if (y >= 2.0 * eps) return 0.0;
    return 2.0 * y / eps - y * y / (eps * eps);
}

double ct_adhesion_ft_over_y(double y, double eps)
{
    if (y >= 2.0 * eps) return 0.0;
    return 2.0 / eps - y / (eps * eps);
}

double ct_adhesion_ft_prime(double y, double eps)
{
    if (y >= 2.0 * eps) return 0.0;
    return 2.0 / eps - 2.0 * y / (eps * eps);
}

ct_status ct_adhesion_pair_laws(ct_adhesion_law **out, int np, const double *part_young, double y_obs,
                                ct_adhesion_variant variant, double dp, double da, double eps_c)
{
    ct_adhesion_law *law = malloc(((size_t)np * (size_t)np + 1) * sizeof *law);
    *out = law;
    if (!law) return CT_ENOMEM;
    for (int a = 0; a < np; ++a)
        for (int b = 0; b < np; ++b) {
            double ya = part_young ? part_young[a] : NAN, yb = part_young ? part_young[b] : NAN;
            if (!isfinite(ya)) ya = y_obs;
            if (!isfinite(yb)) yb = y_obs;
            const double y = isfinite(ya) && isfinite(yb) ? fmin(ya, yb) : isfinite(ya) ? ya : isfinite(yb) ? yb : 0.0;
            law[a * np + b] = ct_adhesion_law_make(variant, dp, da, y * eps_c);
        }
    return CT_OK;
}
