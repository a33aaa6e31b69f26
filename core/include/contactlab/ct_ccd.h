/* ct_ccd.h — additive continuous collision detection (Li, Kaufman, Jiang 2021, "Codimensional
 * Incremental Potential Contact", §5 ACCD).
 *
 * A stencil moves linearly from x to x + t·dx, t ∈ [0, tmax]. ACCD advances t in steps that
 * are provably safe from a lower bound on the distance rate (the sum of the largest relative
 * displacement norms of the two primitives), and stops once the distance has shrunk to the
 * fraction `s` of its start value (minus the thickness). The returned time is therefore
 * *conservative*: at every t' ∈ [0, toi] the primitives are at distance > thickness
 * (in exact arithmetic; in floating point the stop gap s·d0 absorbs round-off).
 *
 * Stencils (x and dx hold n*dim numbers, vertex after vertex):
 *   CT_CCD_PP: a, b          (dim 2 or 3)
 *   CT_CCD_PE: p, e0, e1     (dim 2 or 3)
 *   CT_CCD_PT: p, t0, t1, t2 (dim 3)
 *   CT_CCD_EE: a0, a1, b0, b1 (dim 3)
 * layer: contact */
#ifndef CT_CCD_H
#define CT_CCD_H

typedef enum { CT_CCD_PP, CT_CCD_PE, CT_CCD_PT, CT_CCD_EE } ct_ccd_kind;

typedef struct ct_ccd_opts {
    double s;         /* stop when the distance reaches s·(d0 - thickness) + thickness; (0,1), default 0.1 */
    double thickness; /* ξ ≥ 0 (m), default 0 */
    int max_iters;    /* work budget of one query (default 10^6 iterations); on reaching it
                         the current (still safe) t is returned, and ct_accd returns 2 */
} ct_ccd_opts;

ct_ccd_opts ct_ccd_default_opts(void);
/* The options as ct_accd reads them: thickness below 0 as 0, s outside (0, 1) as 0.1, max_iters
 * below 1 as 1 (o NULL: the defaults). */
ct_ccd_opts ct_ccd_opts_resolved(const ct_ccd_opts *o);

/* Returns 1 if the stencil comes within the stop gap before tmax, with *toi ∈ [0, tmax) the
 * conservative time; returns 0 if the whole interval [0, tmax] is safe (*toi = tmax); returns 2
 * when the query ran out of its budget (o->max_iters) first: *toi is safe but not resolved (the
 * motion is too fast for its gap: the advance per iteration is below (1 - s)·s·d0/l_p).
 * If the stencil starts at distance ≤ thickness, returns 1 with *toi = 0. An invalid kind/dim
 * pair (PT and EE need dim 3) or non-finite input also gives 1 with *toi = 0 (nothing is
 * certified safe). o may be NULL (defaults). */
int ct_accd(ct_ccd_kind kind, int dim, const double *x, const double *dx, double tmax,
            const ct_ccd_opts *o, double *toi);

#endif
