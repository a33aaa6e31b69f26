/* ct_friction.h — IPC friction with lagged normal forces and tangent bases (paper 003).
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
 */
#ifndef CT_FRICTION_H
#define CT_FRICTION_H

#include "ct_collisions.h"

double ct_friction_f0(double y, double eps);
double ct_friction_f1(double y, double eps);
/* f1(y)/y (finite at y = 0: 2/ε) and (f1'(y) y − f1(y))/y³ (finite: −1/(ε² y) → use with u uᵀ). */
double ct_friction_f1_over_y(double y, double eps);

typedef struct ct_friction_pair {
    ct_collision c;   /* stencil at the lag point */
    double lambda;    /* lagged normal force magnitude (N), signed by the term weight */
    double mu;        /* friction coefficient of the pair */
    double coef[4];   /* closest-point coefficients (first primitive +, second −) */
    double T[6];      /* tangent basis, dim × (dim-1), column-major */
} ct_friction_pair;

/* What a tangent set integrates: friction (f0, f1 above) or the tangential adhesion of
 * ct_adhesion.h (f_t0, f_t; ε = ε_a h), whose λ is the pair's maximum normal adhesion force and
 * whose Hessian blocks are projected to PSD: μλ (c cᵀ) ⊗ T P(M) Tᵀ with P(M) keeping the positive
 * parts of μλ f_t' (along u) and μλ f_t/y (across it). */
typedef enum { CT_TANGENT_FRICTION, CT_TANGENT_ADHESION } ct_tangent_profile;

typedef struct ct_friction_set {
    long n, cap;
    ct_friction_pair *p;
    int profile; /* ct_tangent_profile; 0 (friction) after init */
} ct_friction_set;

void ct_friction_set_init(ct_friction_set *fs);
void ct_friction_set_free(ct_friction_set *fs);

/* Per-pair friction coefficient (return 0 to skip the pair). */
typedef double (*ct_mu_fn)(const void *ctx, const ct_collision *c);

/* Lag: λ_k = −∂(w m ψ_N)/∂d at x_lag for every term of cs (ψ_N the density whose force is the
 * normal force, e.g. the barrier alone), with c_k and T_k at x_lag. Terms with μ = 0 or λ = 0 are
 * left out. */
ct_status ct_friction_set_build(ct_friction_set *fs, const ct_collision_set *cs, const ct_contact_mesh *cm,
                                const ct_obstacle *obs, const double *x_lag, ct_density_fn normal,
                                const void *nctx, ct_mu_fn mu, const void *muctx);

/* u_k (dim-1 entries) of pair p at x relative to x_prev. */
void ct_friction_u(const ct_friction_pair *p, int dim, const double *x, const double *x_prev, double *u);

double ct_friction_energy(const ct_friction_set *fs, int dim, const double *x, const double *x_prev, double eps,
                          int threads);
ct_status ct_friction_gradient(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                               double eps, int threads, double *g);
ct_status ct_friction_hessian(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                              double eps, int threads, ct_triplets *H);
/* Gradient of one pair's potential under the set's profile (nverts*dim entries). */
void ct_friction_term_grad(const ct_friction_pair *p, int profile, int dim, const double *x, const double *x_prev,
                           double eps, double *g);

#endif
