/* ct_friction.h — IPC friction with lagged normal forces and tangent bases (Li, Friction (CMU 15-763)).
 *
 * For every contact term k at the lag point x^L (the start of the step, or the last converged
 * iterate in fixed-point iterations) we keep its normal force magnitude λ_k (N; it carries the
 * term's signed weight), closest-point coefficients c_k (the relative displacement of the two
 * closest points is Σ_i c_ki Δx_i) and an orthonormal tangent basis T_k (dim × (dim-1)) of the
 * plane normal to the closest-point vector. With u_k = T_kᵀ Σ_i c_ki (x_i − x_i^n) the tangential
 * relative displacement over the step, the friction potential is
 *
 *     D(x) = Σ_k μ_k λ_k f0(|u_k|),  f0' = f1,  f1(y) = 2y/ε − y²/ε² for y < ε, 1 otherwise,
 *
 * with ε = ε_v h (a slip velocity threshold times the time step). −∇D is the mollified Coulomb
 * force −μλ f1(|u|) T û; the IP adds h² D like every other potential. D's Hessian blocks are
 * μλ (c cᵀ) ⊗ T M Tᵀ with M = (f1/y) I + ((f1' y − f1)/y³) u uᵀ, which is PSD for λ > 0 (its
 * eigenvalues are f1' ≥ 0 and f1/y ≥ 0); terms with λ ≤ 0 (inclusion–exclusion corrections)
 * have an NSD block whose projection is zero, so their Hessian is skipped.
 * layer: contact */
#ifndef CT_FRICTION_H
#define CT_FRICTION_H

#include "ct_collisions.h"

double ct_friction_f0(double y, double eps);
double ct_friction_f1(double y, double eps);
/* f1(y)/y (finite at y = 0: 2/ε) and (f1'(y) y − f1(y))/y³ (finite: −1/(ε² y) → use with u uᵀ). */
double ct_friction_f1_over_y(double y, double eps);

typedef struct ct_friction_pair {
    ct_collision c;   /* stencil at the lag point */
    double lambda;    /* lagged normal force magnitude (N), signed by the term weight; 0: no friction */
    double mu;        /* friction coefficient of the pair */
    double lambda_a;  /* tangential adhesion: the pair's largest normal adhesion force (N), signed
                         by the term weight; 0: none */
    double mu_a;      /* tangential adhesion coefficient of the pair */
    double coef[4];   /* closest-point coefficients (first primitive +, second −) */
    double T[6];      /* tangent basis, dim × (dim-1), column-major */
} ct_friction_pair;

/* The lagged tangential set: friction, and (when built with ct_tangent_adhesion) the tangential
 * adhesion of Fang et al. (Fang et al. 2023 eq. 13–14, ct_adhesion.h) on the same pairs. A pair's
 * potential is one function of its slip,
 *
 *     μλ f0(|u|; ε) + μ_a λ_a f_t0(|u|; ε_a),     ε = ε_v h, ε_a = ε_a h,
 *
 * and its Hessian block (c cᵀ) ⊗ T M Tᵀ is projected as a whole: M has the eigenvector û with
 * eigenvalue μλ f1'(y) + μ_aλ_a f_t'(y) and (3D) the one across it with μλ f1/y + μ_aλ_a f_t/y;
 * the projection keeps their positive parts (f_t' < 0 beyond ε_a: the falling branch). Pairs with
 * λ_a = 0 keep the friction-only block above, bitwise. */
typedef struct ct_friction_set {
    long n, cap;
    ct_friction_pair *p;
    double eps_a; /* ε_a h (m) of the tangential adhesion, set by ct_tangent_set_build */
} ct_friction_set;

void ct_friction_set_init(ct_friction_set *fs);
void ct_friction_set_free(ct_friction_set *fs);

/* Per-pair friction coefficient (return 0 to skip the pair). */
typedef double (*ct_mu_fn)(const void *ctx, const ct_collision *c);

/* A pair's λ (λ_a) counts as no normal force when |λ| <= this × the set's largest |λ|. */
#define CT_FRICTION_NEGLIGIBLE 1e-14

/* Lag: λ_k = −∂(w m ψ_N)/∂d at x_lag for every term of cs (ψ_N the density whose force is the
 * normal force, e.g. the barrier alone), with c_k and T_k at x_lag. Terms with μ = 0 or without
 * normal force (λ = 0 or negligible: CT_FRICTION_NEGLIGIBLE) are left out. */
ct_status ct_friction_set_build(ct_friction_set *fs, const ct_collision_set *cs, const ct_contact_mesh *cm,
                                const ct_obstacle *obs, const double *x_lag, ct_density_fn normal,
                                const void *nctx, ct_mu_fn mu, const void *muctx);

/* The tangential adhesion of a tangent set: λ_a = −∂(w m ψ_A)/∂d at the lag point (ψ_A a density
 * whose force is the pair's largest adhesion force), coefficient μ_a per pair, ε_a h. */
typedef struct ct_tangent_adhesion {
    ct_density_fn lambda;
    const void *lctx;
    ct_mu_fn mu_a;
    const void *mctx;
    double eps_a; /* ε_a h (m) */
} ct_tangent_adhesion;

/* ct_friction_set_build with tangential adhesion (adh may be NULL: friction only): a term is kept
 * when it has friction (μ > 0, λ ≠ 0) or tangential adhesion (μ_a > 0, λ_a ≠ 0). */
ct_status ct_tangent_set_build(ct_friction_set *fs, const ct_collision_set *cs, const ct_contact_mesh *cm,
                               const ct_obstacle *obs, const double *x_lag, ct_density_fn normal, const void *nctx,
                               ct_mu_fn mu, const void *muctx, const ct_tangent_adhesion *adh);

/* u_k (dim-1 entries) of pair p at x relative to x_prev. */
void ct_friction_u(const ct_friction_pair *p, int dim, const double *x, const double *x_prev, double *u);

double ct_friction_energy(const ct_friction_set *fs, int dim, const double *x, const double *x_prev, double eps,
                          int threads);
ct_status ct_friction_gradient(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                               double eps, int threads, double *g);
ct_status ct_friction_hessian(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                              double eps, int threads, ct_triplets *H);
/* The isotropic majorizer of the same blocks: M = (f1/y) I, the curvature across the slip used
 * along it too (where the exact M has f1' ≤ f1/y, 0 on the sliding branch). Since f0(√t) is
 * concave in t (f1/y does not increase), for every change Δu of the slip
 *     f0(|u + Δu|) ≤ f0(y) + f1(y) û·Δu + (f1(y)/y) |Δu|²/2
 * (the half-quadratic bound of iteratively reweighted least squares; equality at Δu = 0): a
 * Newton model built on it never underestimates the friction potential, so its step does not
 * overshoot a slip reversal or the stick branch, where the exact model, linear along a sliding
 * slip, sends the step far past u = 0. With tangential adhesion the along-slip eigenvalue is
 * raised to the across-slip one before the projection. For the Newton iterations that cannot
 * take the whole exact step (ct_step_ctx.exact_hessian = 0, core/sim/newton.c). */
ct_status ct_friction_hessian_majorizer(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                                        double eps, int threads, ct_triplets *H);
/* The exact Hessian: the blocks of every pair with λ ≠ 0 or tangential adhesion, nothing
 * projected (the pairs of negative λ, the convergent set's inclusion–exclusion corrections, are
 * NSD; the falling branch of tangential adhesion is concave), for Newton's exact mode
 * (ct_step_ctx.exact_hessian = 1; the core checks that the assembled matrix is positive
 * definite). Without these blocks the exact mode's Newton converged linearly (0.82 per
 * iteration) on two slabs in frictional face contact. */
ct_status ct_friction_hessian_exact(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                                    double eps, int threads, ct_triplets *H);

/* Which parts of a pair's potential ct_friction_term_grad differentiates. */
enum { CT_TANGENT_FRICTION = 1u, CT_TANGENT_ADHESION = 2u, CT_TANGENT_ALL = 3u };

/* Gradient of the selected parts of one pair's potential (nverts*dim entries); eps_a: ε_a h. */
void ct_friction_term_grad(const ct_friction_pair *p, int dim, const double *x, const double *x_prev, double eps,
                           double eps_a, unsigned parts, double *g);

#endif
