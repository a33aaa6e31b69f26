/* ccd.c — additive continuous collision detection (ACCD).
 *
 * Li, Kaufman, Jiang 2021, "Codimensional Incremental Potential Contact", §5, Algorithm 1.
 * A stencil moves linearly, x(t) = x + t·dx. Subtracting the mean displacement p̄ of the
 * stencil (a common translation changes no distance) leaves relative displacements p_i, and
 *   l_p = max_{i ∈ first primitive} |p_i| + max_{j ∈ second primitive} |p_j|
 * bounds the rate at which the distance d between the two primitives can shrink: the closest
 * points are convex combinations of their primitive's vertices, so they move apart or
 * together at most that fast. From a configuration at distance d > ξ (thickness ξ), the
 * interval [t, t + (d - ξ)/l_p) is therefore collision-free, and ACCD advances by
 *   t_l = (1 - s)·(d - ξ)/l_p,   (d - ξ) computed as (d² - ξ²)/(d + ξ),
 * re-evaluating the distance after each advance, until the distance drops below the gap
 *   g = s·(d0 - ξ)
 * (the iterate that fell below is rejected; the previous, safe t is returned) or t passes
 * tmax (no collision). The gap keeps the returned configuration a finite distance away from
 * contact, which also absorbs the round-off of the floating-point distance evaluations.
 *
 * Distances are the squared distances of ct_distance.h, with the closest-feature type chosen
 * by classification at every iterate (ct_xx_classify_d2: classification and distance in one
 * pass, bitwise the values of ct_xx_classify + ct_xx_d2).
 */
#include "contactlab/ct_ccd.h"

#include "contactlab/ct_distance.h"

#include <math.h>
#include <stddef.h>

ct_ccd_opts ct_ccd_default_opts(void)
{
    ct_ccd_opts o;
    o.s = 0.1;
    o.thickness = 0.0;
    o.max_iters = 1000000;
    return o;
}

/* Squared distance of the stencil at positions y (layout of ct_ccd.h). */
static double stencil_d2(ct_ccd_kind kind, int dim, const double *y)
{
    switch (kind) {
    case CT_CCD_PP: return ct_pp_d2(dim, y, y + dim, NULL, NULL);
    case CT_CCD_PE: {
        double d2;
        ct_pe_classify_d2(dim, y, y + dim, y + 2 * dim, &d2);
        return d2;
    }
    case CT_CCD_PT: {
        double d2;
        ct_pt_classify_d2(y, y + 3, y + 6, y + 9, &d2);
        return d2;
    }
    case CT_CCD_EE: {
        double d2;
        ct_ee_classify_d2(y, y + 3, y + 6, y + 9, &d2, NULL, NULL);
        return d2;
    }
    }
    return 0.0;
}

ct_ccd_opts ct_ccd_opts_resolved(const ct_ccd_opts *o)
{
    ct_ccd_opts r = o ? *o : ct_ccd_default_opts();
    r.thickness = r.thickness > 0.0 ? r.thickness : 0.0;
    r.s = r.s > 0.0 && r.s < 1.0 ? r.s : 0.1;
    r.max_iters = r.max_iters > 0 ? r.max_iters : 1;
    return r;
}

int ct_accd(ct_ccd_kind kind, int dim, const double *x, const double *dx, double tmax, const ct_ccd_opts *o,
            double *toi)
{
    const ct_ccd_opts opts = ct_ccd_opts_resolved(o);
    int nv, nfirst; /* vertices in the stencil, and in its first primitive */
    switch (kind) {
    case CT_CCD_PP: nv = 2, nfirst = 1; break;
    case CT_CCD_PE: nv = 3, nfirst = 1; break;
    case CT_CCD_PT: nv = 4, nfirst = 1; break;
    case CT_CCD_EE: nv = 4, nfirst = 2; break;
    default: *toi = 0.0; return 1; /* unknown stencil: allow no motion */
    }
    if (dim != 3 && (dim != 2 || kind == CT_CCD_PT || kind == CT_CCD_EE)) {
        *toi = 0.0; /* invalid dimension: allow no motion (conservative) */
        return 1;
    }
    const int n = nv * dim;
    const double xi = opts.thickness, xi2 = xi * xi, s = opts.s;
    const int max_iters = opts.max_iters;

    /* Start within the thickness (or a non-finite distance): no motion is safe. */
    double d2 = stencil_d2(kind, dim, x);
    if (!(d2 > xi2) || !isfinite(d2)) {
        *toi = 0.0;
        return 1;
    }
    if (!(tmax > 0.0)) { /* nothing to sweep */
        *toi = tmax > 0.0 ? tmax : 0.0;
        return 0;
    }

    /* Relative displacements p = dx - mean(dx) and the rate bound l_p. */
    double p[12], mean[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < nv; ++i)
        for (int k = 0; k < dim; ++k) mean[k] += dx[i * dim + k] / nv;
    double m1 = 0.0, m2 = 0.0; /* max squared norms over the first / second primitive */
    for (int i = 0; i < nv; ++i) {
        double q = 0.0;
        for (int k = 0; k < dim; ++k) {
            p[i * dim + k] = dx[i * dim + k] - mean[k];
            q += p[i * dim + k] * p[i * dim + k];
        }
        if (i < nfirst)
            m1 = q > m1 ? q : m1;
        else
            m2 = q > m2 ? q : m2;
    }
    const double lp = sqrt(m1) + sqrt(m2);
    if (!isfinite(lp)) {
        *toi = 0.0;
        return 1;
    }
    if (lp == 0.0) { /* a rigid translation: the distance never changes */
        *toi = tmax;
        return 0;
    }

    double d = sqrt(d2);
    const double gap = s * (d2 - xi2) / (d + xi); /* s·(d0 - ξ) */
    double t = 0.0;
    double tl = (1.0 - s) * (d2 - xi2) / ((d + xi) * lp);
    /* The first advance is safe (the distance cannot shrink faster than l_p): if it already passes
     * tmax, the sweep to tmax is, without another distance evaluation. (Most candidate pairs of a
     * Newton step end here; the loop below would evaluate the distance at t_l first.) */
    if (tl > tmax) {
        *toi = tmax;
        return 0;
    }
    double y[12];
    for (int it = 0; it < max_iters; ++it) {
        /* Evaluate at t + t_l from the start configuration (no drift from accumulation). */
        const double tn = t + tl;
        if (!(tn > t)) break; /* the advance vanished in round-off: stop at the safe t */
        for (int i = 0; i < n; ++i) y[i] = x[i] + tn * p[i];
        d2 = stencil_d2(kind, dim, y);
        d = sqrt(d2);
        const double dfree = (d2 - xi2) / (d + xi); /* d - ξ */
        /* Below the gap: reject this iterate and return the last safe t. The first advance
         * can only reach the gap in exact arithmetic (it covers (1 - s) of d0 - ξ), so it is
         * always taken unless round-off put the distance at or below ξ. */
        if ((t > 0.0 && dfree < gap) || !(dfree > 0.0)) {
            *toi = t;
            return 1;
        }
        t = tn;
        if (t > tmax) {
            *toi = tmax;
            return 0;
        }
        tl = (1.0 - s) * dfree / lp;
    }
    *toi = t; /* the budget is spent: the current t is still safe, but not resolved */
    return 2;
}
