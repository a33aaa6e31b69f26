/* ct_rcc.h — the Raous–Cangemi–Cocou adhesion law as the RCC-in-IPC model and the LCP model use it
 * (Fang et al. 2023 §3.2, eq. 5–9; Gascón et al. 2010 §4, eq. 10–12): energy densities per unit area and the
 * evolution of the adhesion intensity β of a contact pair, and the LCP model's traction form of the
 * same laws (ct_lcp_beta_rate).
 *
 *   normal adhesion      P_N = C_N/2 · β² d²        (eq. 5, d the gap)
 *   tangential adhesion  P_T = C_T/2 · β² ‖u‖²      (eq. 6, u the tangential relative displacement
 *                                                    of the bonded material points)
 *   β^{n+1} = min(1, max(0, β^n + h β̇^n))            (eq. 7, explicit Euler before each step)
 *   p < 0 (traction):     β̇ = 1/η · min(W − β (C_N d² + C_T ‖u‖²), 0)                   (eq. 8)
 *   p ≥ 0 (compression):  β̇ = r · max(p − β p_0, 0) + 1/η · min(W − β C_T ‖u‖², 0)      (eq. 9)
 * with p the total normal pressure at the pair (barrier pressure minus adhesive traction,
 * positive in compression). The parameters (C_N, C_T, η, W, r, p_0) in SI units: N/m³, N/m³,
 * J·s/m² (η divides an energy per area to give a rate), J/m², 1/(Pa·s), Pa.
 * layer: contact */
#ifndef CT_RCC_H
#define CT_RCC_H

typedef struct ct_rcc_law {
    double cn, ct; /* C_N, C_T: adhesion stiffnesses (N/m³) */
    double eta;    /* η: debonding viscosity (J·s/m²); β̇ = (W − ...)/η */
    double w;      /* W: adhesion energy (J/m²) */
    double r;      /* bonding rate (1/(Pa·s)) */
    double p0;     /* saturation pressure (Pa) */
} ct_rcc_law;

/* β̇ of eq. 8 (p < 0) or eq. 9 (p >= 0) at intensity beta, gap d, squared tangential
 * displacement u2 = ‖u‖², total normal pressure p. */
double ct_rcc_beta_rate(const ct_rcc_law *L, double beta, double d, double u2, double p);

/* One explicit Euler step of eq. 7 over h: the clamped value; *clamp (if not NULL) is set to
 * −1 when the unclamped value fell below 0, +1 when it rose above 1, 0 otherwise. */
double ct_rcc_beta_step(const ct_rcc_law *L, double beta, double d, double u2, double p, double h, int *clamp);

/* The rate-independent limit η → 0 of eq. 8 under a monotone opening from β = 1: β can only
 * fall, and it falls just enough to keep W − β (C_N d² + C_T u2) ≥ 0, so
 *     β(d, u2) = min(1, W / (C_N d² + C_T u2)).
 * ct_rcc_normal_traction_limit is the resulting normal traction C_N β² d for u = 0: linear up to
 * the peak √(C_N W) at d* = √(W / C_N), then W² / (C_N d³); its integral over (0, ∞) is W. */
double ct_rcc_beta_limit(const ct_rcc_law *L, double d, double u2);
double ct_rcc_normal_traction_limit(const ct_rcc_law *L, double d);

/* The energy density C_N/2 β² d² + C_T/2 β² u2 (J/m²) of a pair. */
double ct_rcc_energy_density(const ct_rcc_law *L, double beta, double d, double u2);

/* β̇ of the LCP model (Gascón et al. 2010 eq. 11, 12, §5.3) for a contact whose impulse gives the
 * normal traction pn (Pa, positive in tension: −λ_n/(hA)) and the tangential adhesive traction
 * pt ≥ 0 (|λ_T|/(hA)), with C = L->cn, W, η, r, p_0 of L (L->ct unused):
 *   pn > 0 (traction):      β̇ = min(W − C g² β, 0)/η with the total traction p = √(pn² + pt²)
 *   pn ≤ 0 (compression):   β̇ = r max(−pn − β p_0, 0) + min(W − C g² β, 0)/η with p = pt
 * where the gap is that of eq. 10 at the traction p, g = p/(C β²), so C g² β = p²/(C β³) (the
 * debonding term is 0 for β = 0 or p = 0). At constant gap g a caller passing pn = C β² g gets
 * eq. 12 exactly: β̇ = min(W − C g² β, 0)/η. */
double ct_lcp_beta_rate(const ct_rcc_law *L, double beta, double pn, double pt);

#endif
