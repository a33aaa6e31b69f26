/* ct_pgs.h — block projected Gauss–Seidel for local contact problems (Gascón et al. 2010 §3.2,
 * §5.1–5.2; the Coulomb-disk variant for the FCLIB benchmark problems).
 *
 * A local problem of m contacts with `dim` rows each (3D: normal n, tangent t, binormal b;
 * 2D: n, t), in the FCLIB convention
 *     u = W λ + q,
 * λ the contact impulses (N s), u the relative velocities in the contact frames (m/s; u_n the
 * rate of the gap, positive when separating). W = J A⁻¹ Jᵀ (the Delassus operator, Gascón et al. 2010's
 * B) is symmetric positive semidefinite, stored block-sparse: block row i holds the dim × dim
 * blocks (i, col[k]) for k in [ptr[i], ptr[i+1]), row-major at val + k·dim², columns increasing,
 * the diagonal block present. (Gascón et al. 2010 write 0 ≤ λ ⊥ Bλ ≥ d: B = W, d = −q.)
 *
 * Laws (ct_pgs_law):
 *   CT_PGS_ADHESIVE_BOX   Gascón et al. 2010 steps 1–8 of §5.2: per contact, the rows in the order n, t, b,
 *       each a scalar Gauss–Seidel update λ* = λ_r − u_r/W_rr (u_r with the current λ) followed by
 *       its projection:
 *         n:  λ_n = max(λ*_n, min(−a ũ_n/(1 + a W_nn), 0))                      (eq. 16, step 3)
 *         t:  λ*_t < 0: λ_t = max(λ*_t, −L_t);  λ*_t ≥ 0: λ_t = min(λ*_t, L_t)  (steps 6, 7)
 *         b:  the same as t (step 8)
 *       with ũ_r = u_r − W_rr λ_r (the row's velocity without its own impulse; paper's −d̃),
 *       a = adh[i] = h² A_i C_i β_i² (kg; 0: no adhesion), the tangential adhesion bound
 *       L_a = |a ũ_t|/(1 + a W_tt) and the friction bound L_f = μ_i max(λ_n, 0) (4-sided pyramid:
 *       t and b bounded separately), combined as L_t = max(L_f, L_a) (ct_pgs_opts.tangential =
 *       CT_PGS_TANGENTIAL_MAX, the default: the law that holds the contact most firmly, so that
 *       tangential adhesion also acts under normal traction, where μλ_n ≤ 0) or min(L_f, L_a)
 *       (CT_PGS_TANGENTIAL_MIN, the literal "most restrictive projection"; with a = 0 it is
 *       frictionless). With a = 0 the law is the LCP with a friction pyramid.
 *   CT_PGS_COULOMB_DISK   the Coulomb friction problem (FCLIB): per contact, normal
 *       λ_n = max(0, λ_n − u_n/W_nn); then with the updated u_T, λ_T = P_D(λ_T − ρ u_T), P_D the
 *       projection on the disk ‖λ_T‖ ≤ μ_i λ_n and ρ = (dim − 1)/tr(W_TT), the inverse of the mean
 *       tangential diagonal entry: 2/(W_tt + W_bb) in 3D, 1/W_tt in 2D (a scalar step, so that a
 *       fixed point satisfies maximal dissipation: u_T ∈ −N_D(λ_T)). adh is ignored.
 * Every update is relaxed: λ ← λ_old + ω (λ_new − λ_old), then the same projection again (SOR,
 * ω ∈ (0, 2); ω = 1 is plain Gauss–Seidel).
 *
 * Residual (ct_pgs_result.residual, and per iteration in `hist`), computed after each sweep:
 *   CT_PGS_COULOMB_DISK   the natural-map residual of FCLIB,
 *         sqrt(Σ_i |λ_i − P_K(λ_i − (u_i + μ_i ‖u_iT‖ e_n))|²) / max(‖q‖, ‖λ‖, ‖u‖, tiny)
 *       (K the second-order cone ‖λ_T‖ ≤ μ λ_n; ct_pgs_natural_map_residual);
 *   CT_PGS_ADHESIVE_BOX   the largest change of an impulse in the sweep relative to the largest
 *       impulse, max_r |λ_r − λ_r^prev| / max(max_r |λ_r|, tiny) (the fixed-point residual of the
 *       sweep: the projections depend on u, so there is no fixed complementarity function).
 * The solve stops when the residual is ≤ tol (converged = 1) or after max_iter sweeps.
 * layer: contact */
#ifndef CT_PGS_H
#define CT_PGS_H

#include "ct_status.h"

typedef struct ct_pgs_problem {
    int m, dim;         /* contacts, rows per contact (2 or 3) */
    const int *ptr;     /* m+1: block row pointers */
    const int *col;     /* ptr[m]: block columns, increasing in each row, diagonal present */
    const double *val;  /* ptr[m]·dim²: the blocks, row-major */
    const double *q;    /* m·dim */
    const double *mu;   /* m friction coefficients (NULL: all 0) */
    const double *adh;  /* m implicit adhesion factors a_i = h² A_i C_i β_i² (kg), ADHESIVE_BOX only (NULL: 0) */
} ct_pgs_problem;

typedef enum { CT_PGS_ADHESIVE_BOX, CT_PGS_COULOMB_DISK } ct_pgs_law;
typedef enum { CT_PGS_TANGENTIAL_MAX, CT_PGS_TANGENTIAL_MIN } ct_pgs_tangential;

typedef struct ct_pgs_opts {
    ct_pgs_law law;
    ct_pgs_tangential tangential;
    int max_iter;        /* sweeps (>= 1) */
    double tol;          /* stop when the residual (above) is <= tol */
    double omega;        /* SOR factor, in (0, 2) */
    int shuffle;         /* 1: visit the contacts in a new random order every sweep */
    unsigned long seed;  /* the shuffle's seed (deterministic for a given seed) */
} ct_pgs_opts;

/* law ADHESIVE_BOX, tangential MAX, 1000 sweeps, tol 1e-8, ω = 1, no shuffle, seed 1 */
ct_pgs_opts ct_pgs_default_opts(void);

typedef struct ct_pgs_result {
    int iters;           /* sweeps done */
    int converged;       /* residual <= tol */
    double residual;     /* after the last sweep */
} ct_pgs_result;

/* Solve P. lambda (m·dim): on entry the start (warm start; zeros for a cold one), on exit the
 * impulses. u (m·dim, may be NULL): on exit W λ + q. hist (may be NULL): the residual after
 * each sweep, room for opts->max_iter. CT_EINPUT (with a message in diag, which may be NULL) for
 * a malformed problem (dim not 2 or 3, a block pattern not as above, a missing, non-positive or
 * non-finite diagonal entry W_rr, ω outside (0, 2), max_iter < 1, a negative or non-finite μ or
 * adhesion factor); CT_ENOMEM. Not converging is not an
 * error: see res->converged. Deterministic: the same input gives the same bits. */
ct_status ct_pgs_solve(const ct_pgs_problem *P, const ct_pgs_opts *opts, double *lambda, double *u, double *hist,
                       ct_pgs_result *res, ct_diag *diag);

/* u = W λ + q (m·dim). */
void ct_pgs_velocity(const ct_pgs_problem *P, const double *lambda, double *u);

/* The FCLIB natural-map residual of (λ, u) for the Coulomb cone (formula above); dim 2 uses the
 * 2D cone |λ_t| ≤ μ λ_n. */
double ct_pgs_natural_map_residual(const ct_pgs_problem *P, const double *lambda, const double *u);

#endif
