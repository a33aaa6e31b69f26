/* ct_adhesion.h — the normal and tangential adhesion of Fang et al. (Fang et al. 2023 §4, eq. 10–14).
 *
 * Normal adhesion, distance form (the paper's): with 0 < d̂_p < d̂_a and a₂ < 0,
 *
 *     a(d) = a₁ d² + c₁             0 < d < d̂_p
 *            a₂ d² + b₂ d + c₂      d̂_p ≤ d < d̂_a
 *            0                      d ≥ d̂_a
 *     a₁ = a₂ (1 − d̂_a/d̂_p),  c₁ = a₂ (d̂_a − d̂_p)² − a₁ d̂_p²,  b₂ = −2 a₂ d̂_a,  c₂ = a₂ d̂_a²,
 *
 * C¹ with a'(0) = a(d̂_a) = a'(d̂_a) = 0; a'(d) ≥ 0 is the adhesive (attractive) pressure, largest
 * at d̂_p where it equals 2 a₂ (d̂_p − d̂_a). Choosing a₂ = Yε_c / (2 (d̂_p − d̂_a)) (eq. 12) makes the
 * peak pressure exactly Y·ε_c. Like the barrier, a has units of Pa·m: a pair's energy is w·a(d).
 * Through s = d²: a = a₁ s + c₁ below d̂_p (exactly linear in s), a₂ s + b₂ √s + c₂ above.
 *
 * "Squared" variant (public IPC code): the same piecewise quadratic in s = d² with the thresholds
 * d̂_p², d̂_a² and a₂ = Yε_c / (4 d̂_p (d̂_p² − d̂_a²)), so that the pressure a'(d) = 2d A'(s) is Yε_c
 * at d = d̂_p too; but it is not the peak: the pressure keeps rising to d̂_a/√3 (for d̂_a > √3 d̂_p),
 * where it is 2/(3√3)·d̂_a³/(d̂_p (d̂_a² − d̂_p²))·Yε_c (16/(9√3) = 1.026 Yε_c at d̂_a = 2 d̂_p).
 *
 * Tangential adhesion (eq. 13–14, with the eq. 14 slip corrected: ε_a, not ε_v): the lagged
 * potential μ_a λ_a f_t0(|u|) with
 *
 *     f_t(y) = 2y/ε − y²/ε²  (y < 2ε),  0 beyond;     f_t0(y) = y²/ε − y³/(3ε²) (y < 2ε), 4ε/3 beyond,
 *
 * ε = ε_a h: the force rises to its maximum μ_a λ_a at y = ε and returns to 0 at 2ε. f_t is not
 * monotone, so the potential's Hessian needs the PSD projection (ct_friction.h, the adhesion
 * profile of a tangent set).
 * layer: contact */
#ifndef CT_ADHESION_H
#define CT_ADHESION_H

#include "ct_status.h"

typedef enum { CT_ADH_DISTANCE, CT_ADH_SQUARED } ct_adhesion_variant;

/* The constants of one normal adhesion law (one per pair of participants: Y differs). */
typedef struct ct_adhesion_law {
    ct_adhesion_variant variant;
    double dp, da;          /* d̂_p, d̂_a (m) */
    double p, a;            /* the thresholds in the variable of the law: d̂ or d̂² */
    double y_eps;           /* Y·ε_c (Pa): the pressure at d̂_p; λ_a = area · y_eps */
    double a1, c1, a2, b2, c2;
} ct_adhesion_law;

/* The law with peak (distance form) or d̂_p (squared form) pressure y_eps = Y·ε_c (Pa);
 * y_eps = 0 gives the zero law. Needs 0 < dp < da. */
ct_adhesion_law ct_adhesion_law_make(ct_adhesion_variant variant, double dp, double da, double y_eps);

/* The np × np table of the laws of every participant pair (a, b) at [a·np + b], malloc'ed into *out: Y the
 * smaller of the two Young's moduli part_young[a], part_young[b] (np entries, NULL: none; a participant
 * without a material (not finite) takes y_obs, or when y_obs is not finite the other's; 0 if neither has
 * one), the pressure y·eps_c. CT_ENOMEM. */
ct_status ct_adhesion_pair_laws(ct_adhesion_law **out, int np, const double *part_young, double y_obs,
                                ct_adhesion_variant variant, double dp, double da, double eps_c);

/* a(d) with a'(d), a''(d) (pointers may be NULL). */
double ct_adhesion(const ct_adhesion_law *L, double d, double *d1, double *d2);

/* The same as a function of s = d² (derivatives in s; pointers may be NULL). */
double ct_adhesion_s(const ct_adhesion_law *L, double s, double *as, double *ass);

/* Tangential adhesion profile, ε = ε_a h (m). */
double ct_adhesion_ft0(double y, double eps);
double ct_adhesion_ft(double y, double eps);
double ct_adhesion_ft_over_y(double y, double eps); /* f_t(y)/y, finite at 0 (2/ε) */
double ct_adhesion_ft_prime(double y, double eps);  /* f_t'(y): 2/ε − 2y/ε² below 2ε, 0 beyond */

#endif
