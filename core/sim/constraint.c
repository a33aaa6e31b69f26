/* constraint.c — the solve stage of the constraint family (DESIGN §3; Gascón et al. eq. 4-6):
 * the linearized implicit Euler step
 *     (M_q + h^2 K(x^n)) v^{n+1} = M_q v^n + h f(x^n) + r
 * with the contact impulse r from the model's step op.
 *
 * It is one Newton step on the incremental potential from the predictor: with the free dofs
 * at q^n and the prescribed ones at their targets, the gradient there is
 *     g = M_q (q - q~) + h^2 (grad Psi - f) = -h (M_q v^n + h f)   on the free dofs
 * (plus the coupling to the moved prescribed dofs), so b = -g / h, A = the Newton matrix, and
 * q^{n+1} = q^n + h v^{n+1}. The factor of A serves every solve of the step: b, the model's
 * Delassus columns (ct_linear_system.solve), and b + r. */
#include "sim/step_internal.h"

#include <math.h>
#include <string.h>

#include "sim/assemble.h"

typedef struct {
    ct_sim *s;
    ct_diag *diag;
} solve_ctx;

/* ct_linear_system.solve: Y = A^-1 B against the step's factor. */
static ct_status sys_solve(const ct_linear_system *sys, int nrhs, const double *B, double *Y)
{
    const solve_ctx *sc = sys->impl;
    ct_step_stats *S = &sc->s->last;
    if (nrhs < 0) return ct_diag_add(sc->diag, CT_EINPUT, "linear system: %d right-hand sides", nrhs);
    ct_status st = ct_linsolve_solve_many(sc->s->ls, nrhs, B, Y, sc->diag);
    double ts;
    ct_linsolve_times(sc->s->ls, NULL, NULL, &ts);
    S->t_solve += ts;
    return st;
}

ct_status ct_step_solve_constraint(ct_sim *s, ct_diag *diag)
{
    const ct_assembly *as = s->as;
    const int nf = as->nfree;
    const size_t nqd = (size_t)s->ndof;
    const double h = s->sc->dt;
    ct_status st = ct_step_assemble_factor(s, 0, 0, diag);
    if (st != CT_OK) return st;
    /* b on the free dofs, v_free = A^-1 b; the Newton loop's work vectors serve here (no line
     * search in this family): b in q_trial, v in pq, the velocities without contact in p, px */
    double *b = s->q_trial, *v = s->pq;
    double *vq_free = s->p, *vx_free = s->px;
    for (int i = 0; i < nf; ++i) b[i] = -s->g[as->free_dof[i]] / h;
    solve_ctx ctx = {s, diag};
    ct_linear_system sys = {
        .ndof = s->ndof, .nfree = nf, .free_dof = as->free_dof, .free_index = as->free_index, .A = &as->A,
        .b = b, .v_free = v, .vq_free = vq_free, .vx_free = vx_free, .solve = sys_solve, .impl = &ctx,
        .diag = diag,
    };
    if ((st = sys_solve(&sys, 1, b, v)) != CT_OK) return st;
    for (size_t i = 0; i < nqd; ++i) vq_free[i] = (s->q[i] - s->q_prev[i]) / h; /* prescribed dofs */
    for (int i = 0; i < nf; ++i) vq_free[as->free_dof[i]] = v[i];
    ct_dofs_map_lin(&s->dofs, vq_free, vx_free);
    /* the model's impulse */
    memset(s->r_contact, 0, nqd * sizeof *s->r_contact);
    if ((st = ct_model_step(s->model, &s->ctx, &sys, s->r_contact)) != CT_OK) {
        return ct_diag_add(diag, st, "step %d (t = %g): model %s: step failed", s->step, s->t,
                           ct_model_name(s->model));
    }
    for (size_t i = 0; i < nqd; ++i)
        if (!isfinite(s->r_contact[i]))
            return ct_diag_add(diag, CT_ENOCONV, "step %d (t = %g): model %s returned a non-finite impulse at q-dof "
                               "%zu", s->step, s->t, ct_model_name(s->model), i);
    /* v^{n+1} = A^-1 (b + r), q^{n+1} = q^n + h v^{n+1} on the free dofs */
    double *rhs = b;
    for (int i = 0; i < nf; ++i) rhs[i] = b[i] + s->r_contact[as->free_dof[i]];
    if ((st = sys_solve(&sys, 1, rhs, v)) != CT_OK) return st;
    for (int i = 0; i < nf; ++i) {
        int k = as->free_dof[i];
        s->q[k] = s->q_prev[k] + h * v[i];
    }
    ct_dofs_map(&s->dofs, s->q, s->x);
    s->last.newton_iters = 1; /* one linearized solve */
    s->last.friction_iters = 1;
    s->last.residual = 0.0;
    return CT_OK;
}
