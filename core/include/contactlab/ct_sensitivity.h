/* ct_sensitivity.h — sensitivities of a static equilibrium (issue 17): dq/dθ for a scripted
 * parameter θ, by the implicit function theorem on the converged step.
 *
 * A converged static step (time.integrator "static") satisfies, on the free dofs q_f,
 *     g_f(q, θ) = [∇Ψ(q) + Jᵀ(∇P_c(x) − f_ext(θ))]_f = 0,   x = J q + x0,
 * with the prescribed dofs q_D = q_D(θ) (Dirichlet motion) and the loads f_ext(θ). Differentiating,
 *     H_ff dq_f/dθ = [Jᵀ df_ext/dθ]_f − H_fD dq_D/dθ,
 * H the exact Hessian of E = Ψ − f_ext·x + P_c at the solution: elements unprojected, the model's
 * exact contact Hessian (ct_step_ctx.exact_hessian = 1: no per-term PSD projection, friction's
 * exact Hessian instead of its majorizer). H_ff is the Newton matrix on the free dofs; when the
 * step's last Newton iteration factored exactly that matrix at the solution (solver.exact_hessian,
 * the usual case after a whole Newton step) its CHOLMOD factor is reused, otherwise the exact
 * matrix is assembled and factored once. H_fD dq_D/dθ is the product of the same element and
 * contact Hessians with dq_D/dθ (never assembled). Several parameters are several right-hand
 * sides of one factor.
 *
 * What is held fixed: the model's lagged state of the step (xⁿ, friction's λ and tangent bases,
 * the face-aware contact weights lagged at xⁿ, adhesion bonds, an "auto" κ as it was), so the
 * result is the derivative of the last step's equilibrium with respect to θ in that step's data.
 * For a one-step static scene, or any frictionless energy model whose lagged state does not move,
 * this is dx/dθ of the equilibrium itself.
 * layer: sim */
#ifndef CT_SENSITIVITY_H
#define CT_SENSITIVITY_H

#include "ct_sim.h"

/* What a parameter moves. */
typedef enum {
    CT_SENS_PRESCRIBED, /* prescribed (Dirichlet / kinematic) positions: dq_D/dθ */
    CT_SENS_LOAD        /* external forces: df_ext/dθ */
} ct_sens_kind;

/* The derivative data of the parameter named by a scene path, at the sim's current time t (the
 * time of the last step's equilibrium). Paths are the keys of `--set` (dots; a leading "/" and
 * slashes are accepted too); a body may be named by index or by name, a vector component by
 * index or x|y|z:
 *     bodies.B.fixed.F.motion.S.velocity.C     prescribed: the segment's translation velocity
 *     bodies.B.fixed.F.motion.S.angular_velocity    prescribed: the segment's angular velocity
 *     bodies.B.fixed.F.motion.S.center.C       prescribed: the segment's rotation centre
 *     bodies.B.loads.L.force.C                  load: the load's constant force
 *     bodies.B.loads.L.force_rate.C             load: its rate (× min(t, ramp_until))
 *     gravity.C                                 load: gravity (m_k e_C on every vertex)
 * dq_fixed (ndof, q-space) receives dq_D/dθ at the prescribed dofs the entry holds (0 elsewhere)
 * and df_ext (nx*dim, full space) df_ext/dθ; both are overwritten (either may be NULL if not
 * wanted). A prescribed position follows ct_motion_eval exactly: the derivative is that of the
 * piecewise rigid motion at time t (ct_motion_eval_tangent), exact, no differencing. An unknown
 * or unsupported path (e.g. "until", "axis", a material constant) is CT_EINPUT with a message. */
ct_status ct_sensitivity_param(const ct_sim *sim, const char *path, double *dq_fixed, double *df_ext,
                               ct_sens_kind *kind, ct_diag *diag);

enum {
    CT_SENS_REFACTOR = 1 /* assemble and factor the exact Hessian even if the last factor could be reused */
};

typedef struct ct_sens_info {
    int reused_factor;    /* 1: the step's last Newton factorization (the exact Hessian at the
                             solution) served; 0: the exact Hessian was assembled and factored */
    int nfree;            /* free dofs (the size of H_ff) */
    double residual;      /* the step's last |p|_inf (m) and force residual |r|_1/F: how well */
    double force_residual;/* the equilibrium that the sensitivities linearize is converged */
    double t_factor, t_solve; /* seconds: assembly + factorization (0 when reused), solves */
} ct_sens_info;

/* dq/dθ for nparam parameters at the sim's current state, which must be a converged static
 * equilibrium of an energy-family model (the last ct_sim_step of a "static" scene returned
 * CT_OK; otherwise CT_EINPUT with a message). dq_fixed (ndof x nparam, column-major; NULL: no
 * prescribed motion) and df_ext (nx*dim x nparam; NULL: no load) are the parameters' data
 * (ct_sensitivity_param); dq (ndof x nparam) receives dq/dθ on every dof: the solution on the
 * free dofs, dq_fixed on the prescribed ones. The full-space dx/dθ is ct_dofs_map_lin(&sim->dofs,
 * dq_k, dx_k). A Hessian that is not positive definite at the solution (not a strict local
 * minimum: no unique dq/dθ that CHOLMOD's LLᵀ can give) is CT_ENOTPD with the failing column;
 * flags: CT_SENS_REFACTOR. info may be NULL. */
ct_status ct_sensitivity_solve(ct_sim *sim, int nparam, const double *dq_fixed, const double *df_ext, unsigned flags,
                               double *dq, ct_sens_info *info, ct_diag *diag);

#endif
