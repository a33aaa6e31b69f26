/* rcc.c — the Raous–Cangemi–Cocou adhesion law (header ct_rcc.h; Fang et al. 2023 eq. 5–9). */
#include "contactlab/ct_rcc.h"

#include <math.h>

double ct_rcc_beta_rate(const ct_rcc_law *L, double beta, double d, double u2, double p)
{
    if (p < 0.0) /* traction: debonding (eq. 8) */
        return fmin(L->w - beta * (L->cn * d * d + L->ct * u2), 0.0) / L->eta;
    /* compression: bonding up to the saturation β p_0 = p, tangential debonding (eq. 9) */
    return L->r * fmax(p - beta * L->p0, 0.0) + fmin(L->w - beta * L->ct * u2, 0.0) / L->eta;
}

double ct_rcc_beta_step(const ct_rcc_law *L, double beta, double d, double u2, double p, double h, int *clamp)
{
    const double b = beta + h * ct_rcc_beta_rate(L, beta, d, u2, p);
    int c = 0;
    double out = b;
    if (b < 0.0) out = 0.0, c = -1;
    else if (b > 1.0) out = 1.0, c = 1;
    if (clamp) *clamp = c;
    return out;
}

double ct_rcc_beta_limit(const ct_rcc_law *L, double d, double u2)
{
    const double a = L->cn * d * d + L->ct * u2;
    return a > L->w ? L->w / a : 1.0;
}

double ct_rcc_normal_traction_limit(const ct_rcc_law *L, double d)
{
    const double b = ct_rcc_beta_limit(L, d, 0.0);
    return L->cn * b * b * d;
}

double ct_rcc_energy_density(const ct_rcc_law *L, double beta, double d, double u2)
{
    return 0.5 * beta * beta * (L->cn * d * d + L->ct * u2);
}

double ct_lcp_beta_rate(const ct_rcc_law *L, double beta, double pn, double pt)
{
    double rate = 0.0, p2 = pt * pt;
    if (pn > 0.0) p2 += pn * pn;
    else rate += L->r * fmax(-pn - beta * L->p0, 0.0);
    if (beta > 0.0 && p2 > 0.0 && L->cn > 0.0) rate += fmin(L->w - p2 / (L->cn * beta * beta * beta), 0.0) / L->eta;
    return rate;
}
