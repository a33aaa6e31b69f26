/* newton.c — the solve stage of the energy family: projected Newton on the incremental
 * potential (DESIGN §2) with the filter line search of IPC (Li et al. 2020, paper 003 §4:
 * the first trial capped by the model's collision-free step size, then backtracking on E),
 * inside optional fixed-point passes over the model's lagged state (friction). */
#include "sim/step_internal.h"

#include <math.h>
#include <string.h>

#include "sim/assemble.h"

/* The Newton stopping test: the step's size |p|_inf / h (dynamic, m/s) or |p|_inf (static, m)
 * below tol (solver.newton_tol x the scene's bounding-box diagonal). */
static int newton_converged(ct_sim *s, double pmax, double tol)
{
    s->last.residual = ct_step_is_static(s) ? pmax : pmax / s->sc->dt;
    return s->last.residual < tol;
}

/* The Newton direction p (all q-dofs, 0 at prescribed ones) from H p = -g with the factor of
 * ct_step_assemble_factor; returns |p|_inf through *pmax. */
static ct_status newton_direction(ct_sim *s, double *pmax, ct_diag *diag)
{
    const ct_assembly *as = s->as;
    double *pf = s->pq; /* free-dof solution */
    for (int i = 0; i < as->nfree; ++i) pf[i] = -s->g[as->free_dof[i]];
    ct_status st = ct_linsolve_solve(s->ls, pf, pf, diag);
    double ts;
    ct_linsolve_times(s->ls, NULL, NULL, &ts);
    s->last.t_solve += ts;
    if (st != CT_OK) return st;
    memset(s->p, 0, (size_t)s->ndof * sizeof *s->p);
    *pmax = 0.0;
    for (int i = 0; i < as->nfree; ++i) {
        s->p[as->free_dof[i]] = pf[i];
        *pmax = fmax(*pmax, fabs(pf[i]));
    }
    return CT_OK;
}

/* The filter line search along s->p from (q, x) with energy *E (known when *E_known): the
 * first trial is alpha = min(1, the model's max_step), never beyond what the model calls
 * safe; then alpha halves until E does not increase, at most solver.max_line_search times.
 * On success q, x move to the accepted point and *E is its energy. */
static ct_status filter_line_search(ct_sim *s, int it, double tol, double *E, int *E_known, ct_diag *diag)
{
    ct_step_stats *S = &s->last;
    const ct_model_timing *mt = &s->model->time;
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * s->dim;
    double tl = ct_step_now(), tm1 = mt->contact, tccd = mt->ccd;
    double alpha = 1.0;
    ct_dofs_map_lin(&s->dofs, s->p, s->px);
    ct_status st = ct_model_max_step(s->model, &s->ctx, s->x, s->px, &alpha);
    if (st != CT_OK)
        return ct_diag_add(diag, st, "step %d: model %s: max_step failed", s->step, ct_model_name(s->model));
    alpha = fmin(alpha, 1.0);
    S->ccd_alpha_min = fmin(S->ccd_alpha_min, alpha);
    double E0 = *E;
    if (!*E_known && (st = ct_step_ip_energy(s, s->q, s->x, &E0)) != CT_OK) return st;
    int ls_ok = 0;
    for (int k = 0; k < s->sc->solver.max_line_search; ++k) {
        for (size_t i = 0; i < nqd; ++i) s->q_trial[i] = s->q[i] + alpha * s->p[i];
        ct_dofs_map(&s->dofs, s->q_trial, s->x_trial);
        double E1;
        if ((st = ct_step_ip_energy(s, s->q_trial, s->x_trial, &E1)) != CT_OK) return st;
        if (E1 <= E0) {
            ls_ok = 1;
            *E = E1;
            break;
        }
        alpha *= 0.5;
        S->line_search_iters++;
    }
    S->t_line_search += ct_step_now() - tl - (mt->contact - tm1) - (mt->ccd - tccd);
    if (!ls_ok)
        return ct_diag_add(diag, CT_ENOCONV,
                           "step %d (t = %g), Newton iteration %d: line search found no decrease after %d "
                           "halvings (|p|inf/h = %.3e, tol = %.3e)",
                           s->step, s->t, it, s->sc->solver.max_line_search, S->residual, tol);
    memcpy(s->q, s->q_trial, nqd * sizeof *s->q);
    memcpy(s->x, s->x_trial, nxd * sizeof *s->x);
    *E_known = 1;
    return CT_OK;
}

/* Newton iterations at fixed lagged state until the stopping test holds. */
static ct_status newton_solve(ct_sim *s, double tol, ct_diag *diag)
{
    const ct_solver_spec *so = &s->sc->solver;
    /* The incremental potential at the current q, once known: the accepted trial's value is the
     * next iteration's E0 (the same q, so the same number; the lagged quantities change only
     * between outer iterations), which spares one energy evaluation per Newton iteration. */
    double E_cur = 0.0;
    int E_known = 0;
    for (int it = 0; it < so->max_newton_iters; ++it) {
        ct_status st = ct_step_assemble_factor(s, it, diag);
        if (st != CT_OK) return st;
        double pmax;
        if ((st = newton_direction(s, &pmax, diag)) != CT_OK) return st;
        s->last.newton_iters = it + 1;
        if (newton_converged(s, pmax, tol)) return CT_OK;
        if ((st = filter_line_search(s, it, tol, &E_cur, &E_known, diag)) != CT_OK) return st;
    }
    return ct_diag_add(diag, CT_ENOCONV,
                       "step %d (t = %g): Newton did not converge in %d iterations (|p|inf%s = %.3e, tol = %.3e)",
                       s->step, s->t, so->max_newton_iters, ct_step_is_static(s) ? "" : "/h", s->last.residual,
                       tol);
}

ct_status ct_step_solve_newton(ct_sim *s, ct_diag *diag)
{
    const ct_solver_spec *so = &s->sc->solver;
    const double tol = so->newton_tol * s->bbox_diag;
    int outer_max = so->friction_iters < 0 ? 100 : so->friction_iters;
    if (!ct_model_has_lagged(s->model)) outer_max = 1;
    for (int outer = 0; outer < outer_max; ++outer) {
        s->last.friction_iters = outer + 1;
        ct_status st = newton_solve(s, tol, diag);
        if (st != CT_OK) return st;
        if (outer_max > 1) {
            double delta = 0.0;
            if ((st = ct_model_update_lagged(s->model, &s->ctx, s->x, &delta)) != CT_OK) return st;
            if (delta < so->friction_tol) break;
        }
    }
    return CT_OK;
}
