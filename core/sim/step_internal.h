/* step_internal.h — what the stages of a time step share (private to core/sim: step.c, the
 * Newton solve of the energy family in newton.c, the linearized solve of the constraint family
 * in constraint.c). */
#ifndef CT_STEP_INTERNAL_H
#define CT_STEP_INTERNAL_H

#include "contactlab/ct_sim.h"

/* solver.integrator is "static" (no inertia, no velocities) */
int ct_step_is_static(const ct_sim *s);
/* weight of the potentials in the incremental potential: h^2 (dynamic) or 1 (static) */
double ct_step_pot_weight(const ct_sim *s);
double ct_step_now(void);

/* The incremental potential E(q) = 1/2 |q - q~|^2_M + w (Psi(q) - f_ext . x + P_c(x) + E_s(x)) at
 * (q, x = x(q)) (with *mag, if not NULL, the summed magnitudes of its parts), and its gradient
 * over all q-dofs (prescribed ones too: they give the reactions; it also sets s->force_scale). The model's terms come through the ct_model wrappers. */
ct_status ct_step_ip_energy(ct_sim *s, const double *q, const double *x, double *E, double *mag);
ct_status ct_step_ip_gradient(ct_sim *s, const double *q, const double *x, double *g);

/* The springs (springs.c): their energy, gradient added into the full-space gx, Hessian
 * triplets appended to H (full-space dofs; exact, or PSD-projected per spring with `project`). */
double ct_step_springs_energy(const ct_sim *s, const double *x);
void ct_step_springs_gradient(const ct_sim *s, const double *x, double *gx);
ct_status ct_step_springs_hessian(const ct_sim *s, const double *x, int project, ct_triplets *H);
/* The full-space Hessian triplets of the incremental potential's x-space terms at x: the model's
 * (ct_step_ctx.exact_hessian = exact for the call) and the springs' (projected when
 * project_springs && !exact). Every matrix of the core is built from these: the Newton matrix,
 * ct_sim_ip_hessian, the sensitivities' exact Hessian and its H_fD products. */
ct_status ct_step_hessian_triplets(ct_sim *s, const double *x, int exact, int project_springs, ct_triplets *H);

/* The Newton matrix at the current (q, x) on the free dofs (M_q + w K + w J^T H_c J, element
 * Hessians PSD-projected when solver.project_psd, the model's contact terms projected per term)
 * assembled and factored, with s->g the gradient there. With `exact`, first the exact matrix
 * (no projection, ct_step_ctx.exact_hessian): if it is not positive definite, the projected one
 * (counted in s->last.exact_fallbacks). `it` names the iteration in messages. Times go into
 * s->last. */
ct_status ct_step_assemble_factor(ct_sim *s, int it, int exact, ct_diag *diag);

/* The solve stage of each family: on entry the predictor is in place (q, x at the start
 * point, prescribed dofs at their end-of-step targets, f_ext at the end time, the model's
 * begin_step done); on return q, x are the end-of-step state. */
ct_status ct_step_solve_newton(ct_sim *s, int start_exact, ct_diag *diag);
ct_status ct_step_solve_constraint(ct_sim *s, ct_diag *diag);

#endif
