/* newton.c — the solve stage of the energy family: projected Newton on the incremental
 * potential (DESIGN §2) with the filter line search of IPC (Li et al. 2020, Li, Friction (CMU 15-763) §4:
 * the first trial capped by the model's collision-free step size, then backtracking on E),
 * inside optional fixed-point passes over the model's lagged state (friction). */
#include "sim/step_internal.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "sim/assemble.h"

/* The force residual |r|_1 (N): the sum over q-vertices of the Euclidean norm of the gradient's
 * free components, divided by the potentials' weight w (h^2; static: 1), i.e. the unbalanced
 * force M a + grad Psi - f_ext + grad P_c at each vertex. Any total force that a probe sums over
 * a set of vertices is off by at most |r|_1. */
static double force_residual(const ct_sim *s, const double *g)
{
    const int dim = s->dim;
    double r = 0.0;
    for (int a = 0; a < s->nq; ++a) {
        double r2 = 0.0;
        for (int c = 0; c < dim; ++c)
            if (!s->fixed[(size_t)a * dim + c]) r2 += g[(size_t)a * dim + c] * g[(size_t)a * dim + c];
        r += sqrt(r2);
    }
    return r / ct_step_pot_weight(s);
}

/* The Newton stopping test at the current iterate, both of
 *   step:  |p|_inf / h < tol (dynamic, m/s; static: |p|_inf < tol, m), tol = solver.newton_tol x
 *          the scene's bounding-box diagonal: the next Newton step would not move it;
 *   force: |r|_1 <= solver.force_tol x F: the forces balance to a fraction force_tol of the
 *          scene's force scale F = sum over vertices of |f_ext| + |f_contact| + |M a| + the
 *          reactions at held dofs (ct_step_ip_gradient); or |p|_inf is below the round-off of the
 *          positions (16 eps |q|_inf), so that no Newton step can change the iterate any more
 *          (a state without forces, whose residual is round-off only).
 * The step test alone can stop where a stiff branch (a sticking friction contact:
 * mu N / (eps_v h) N/m, a barrier near contact) turns a small |p| into large forces; the force
 * test alone could stop where a soft mode is still moving. Sets s->last.residual and the
 * force fields; returns 1 when both hold, and in *step_ok whether the step test does. */
static int newton_converged(ct_sim *s, double pmax, double tol, double rnorm, int *step_ok)
{
    ct_step_stats *S = &s->last;
    const double F = s->force_scale, ftol = s->sc->solver.force_tol;
    S->residual = ct_step_is_static(s) ? pmax : pmax / s->sc->dt;
    S->force_scale = F;
    S->force_residual = F > 0.0 ? rnorm / F : (rnorm > 0.0 ? INFINITY : 0.0);
    *step_ok = S->residual < tol;
    if (!*step_ok) return 0;
    if (ftol <= 0.0 || rnorm <= ftol * F) return 1;
    double qmax = 0.0;
    for (int i = 0; i < s->ndof; ++i) qmax = fmax(qmax, fabs(s->q[i]));
    return pmax <= 16.0 * DBL_EPSILON * qmax;
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

/* The largest safe fraction alpha <= 1 of the step pq (q-space) from (q, x): the model's max_step
 * along px = J pq (written). */
static ct_status max_step_along(ct_sim *s, const double *pq, double *px, double *alpha, ct_diag *diag)
{
    *alpha = 1.0;
    ct_dofs_map_lin(&s->dofs, pq, px);
    ct_status st = ct_model_max_step(s->model, &s->ctx, s->x, px, alpha);
    if (st == CT_ENOCONV)
        return ct_diag_add(diag, st, "step %d: model %s: max_step could not resolve a safe step size within its work "
                           "budget (a contact moving too fast for its gap: a smaller time step or slower motion)",
                           s->step, ct_model_name(s->model));
    if (st != CT_OK)
        return ct_diag_add(diag, st, "step %d: model %s: max_step failed (%s)", s->step, ct_model_name(s->model),
                           ct_status_str(st));
    *alpha = fmin(*alpha, 1.0);
    return CT_OK;
}

/* The same for the Newton step s->p; s->px holds it in x-space afterwards. */
static ct_status max_step(ct_sim *s, double *alpha, ct_diag *diag) { return max_step_along(s, s->p, s->px, alpha, diag); }

/* The model's second-order correction of the line-search trial (q_trial, x_trial) = (q, x) +
 * alpha p (ct_model_correct_trial; why: core/contact/collisions_correct.c). The model moves the
 * trial in x-space by dx; the free q-dofs move by J^T dx (exact for ordinary bodies, J = I; for
 * embedded ones an approximation, which the energy test judges), the prescribed ones stay. The
 * corrected point replaces the trial, with its energy in *E1, *mag1, and *used = 1, if the
 * straight path from q to it is safe as a whole (max_step = 1) and its incremental potential is
 * below the trial's. */
static ct_status try_correction(ct_sim *s, double alpha, double *E1, double *mag1, int *used, ct_diag *diag)
{
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * s->dim;
    *used = 0;
    memcpy(s->x_soc, s->x_trial, nxd * sizeof *s->x_soc);
    int changed;
    ct_status st = ct_model_correct_trial(s->model, &s->ctx, s->x, s->px, alpha, s->x_soc, &changed);
    if (st != CT_OK)
        return ct_diag_add(diag, st, "step %d: model %s: correct_trial failed", s->step, ct_model_name(s->model));
    if (!changed) return CT_OK;
    for (size_t i = 0; i < nxd; ++i) s->x_soc[i] -= s->x_trial[i];
    memset(s->q_soc, 0, nqd * sizeof *s->q_soc);
    ct_dofs_pull(&s->dofs, s->x_soc, s->q_soc);
    for (size_t i = 0; i < nqd; ++i) {
        s->q_soc[i] = s->q_trial[i] + (s->fixed[i] ? 0.0 : s->q_soc[i]);
        s->dq_soc[i] = s->q_soc[i] - s->q[i];
    }
    double a;
    if ((st = max_step_along(s, s->dq_soc, s->x_soc, &a, diag)) != CT_OK || a < 1.0) return st;
    ct_dofs_map(&s->dofs, s->q_soc, s->x_soc);
    double E2, mag2;
    if ((st = ct_step_ip_energy(s, s->q_soc, s->x_soc, &E2, &mag2)) != CT_OK) return st;
    if (!(E2 < *E1)) return CT_OK;
    memcpy(s->q_trial, s->q_soc, nqd * sizeof *s->q_trial);
    memcpy(s->x_trial, s->x_soc, nxd * sizeof *s->x_trial);
    *E1 = E2;
    *mag1 = mag2;
    *used = 1;
    return CT_OK;
}

typedef struct {
    double E, mag; /* incremental potential and the magnitude of its parts (ct_step_ip_energy) */
    int known;
} ip_value;

/* After a whole Newton step whose decrease of E is more than twice the quadratic model's (-g.p/2,
 * the model's minimum along p), i.e. more than the linear term -g.p alone, E curves downward
 * along p: a direction of negative curvature that the matrix does not have (near a saddle of E,
 * where the exact Hessian is indefinite and the PSD projection stiffens that direction to the
 * mass matrix). (A threshold of 1.5 times, E merely flatter than the model, also fires on steps
 * that open barrier gaps and cost 0.4 iterations per step on the 10 m/s impacts.) Newton would
 * then creep along it by one model step per iteration (measured: 146 iterations of |p|/h ~ 1e-3
 * m/s in one step of experiments/rcc_vs_ours, ours at h = 0.005, E falling by the same 4e-12 J
 * each time). Instead the step is doubled while E keeps decreasing and the model's max_step
 * allows the whole longer step, at most 2^10 times the Newton step. On return (q_trial, x_trial)
 * and *E1, *mag1 hold the last point kept. */
static ct_status extrapolate(ct_sim *s, double E0, double gp, double *E1, double *mag1, ct_diag *diag)
{
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * s->dim;
    if (!(*E1 - E0 < gp) || !(E0 - *E1 > 1e3 * DBL_EPSILON * *mag1)) return CT_OK;
    double a = 1.0;
    for (int k = 0; k < 10; ++k) {
        const double a2 = 2.0 * a;
        for (size_t i = 0; i < nqd; ++i) s->dq_soc[i] = a2 * s->p[i];
        double am;
        ct_status st = max_step_along(s, s->dq_soc, s->x_soc, &am, diag);
        if (st != CT_OK) return st;
        if (am < 1.0) break;
        for (size_t i = 0; i < nqd; ++i) s->q_soc[i] = s->q[i] + s->dq_soc[i];
        ct_dofs_map(&s->dofs, s->q_soc, s->x_soc);
        double E2, mag2;
        if ((st = ct_step_ip_energy(s, s->q_soc, s->x_soc, &E2, &mag2)) != CT_OK) return st;
        if (!(E2 < *E1)) break;
        memcpy(s->q_trial, s->q_soc, nqd * sizeof *s->q_trial);
        memcpy(s->x_trial, s->x_soc, nxd * sizeof *s->x_trial);
        *E1 = E2;
        *mag1 = mag2;
        a = a2;
        s->last.line_search_doublings++;
    }
    return CT_OK;
}

/* The filter line search along s->p from (q, x) with its energy in *cur (computed here unless
 * known) and force residual rnorm: the first trial is alpha = min(1, the model's max_step), never
 * beyond what the model calls safe; then alpha halves until E does not increase, at most
 * solver.max_line_search times. Where E cannot tell, a trial is accepted when it lowers the force
 * residual instead (a gradient-norm line search): when the step test already holds (force_merit:
 * only the force test keeps Newton going, and the decrease of E, about |p|^2 times the
 * stiffness, is below E's round-off), and when E1 - E0 is within E's round-off level, 1e3 eps
 * times the sum of the magnitudes of E's parts (ct_step_ip_energy). With
 * solver.second_order_correction each trial is also tried with the model's correction of the gaps
 * that the step's curvature closed (try_correction), and the lower of the two is the trial. On
 * success q, x move to the accepted point, *cur holds its energy and *full says whether the whole
 * Newton step was taken (alpha = 1 at the first trial). */
static ct_status filter_line_search(ct_sim *s, int it, double tol, double rnorm, int force_merit, ip_value *cur,
                                    int *full, ct_diag *diag)
{
    ct_step_stats *S = &s->last;
    const ct_model_timing *mt = &s->model->time;
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * s->dim;
    double tl = ct_step_now(), tm1 = mt->contact, tccd = mt->ccd;
    double alpha;
    ct_status st = max_step(s, &alpha, diag);
    if (st != CT_OK) return st;
    S->ccd_alpha_min = fmin(S->ccd_alpha_min, alpha);
    if (!cur->known && (st = ct_step_ip_energy(s, s->q, s->x, &cur->E, &cur->mag)) != CT_OK) return st;
    const double E0 = cur->E, mag0 = cur->mag;
    double gp = 0.0; /* g.p over the free dofs: the quadratic model's decrease at alpha = 1 is -gp/2 */
    for (int i = 0; i < s->as->nfree; ++i) gp += s->g[s->as->free_dof[i]] * s->p[s->as->free_dof[i]];
    int ls_ok = 0, corrected = 0;
    for (int k = 0; k < s->sc->solver.max_line_search; ++k) {
        for (size_t i = 0; i < nqd; ++i) s->q_trial[i] = s->q[i] + alpha * s->p[i];
        ct_dofs_map(&s->dofs, s->q_trial, s->x_trial);
        double E1, mag1;
        if ((st = ct_step_ip_energy(s, s->q_trial, s->x_trial, &E1, &mag1)) != CT_OK) return st;
        if (s->sc->solver.second_order_correction && (st = try_correction(s, alpha, &E1, &mag1, &corrected, diag)) != CT_OK)
            return st;
        if (E1 <= E0) {
            ls_ok = 1;
        } else if (force_merit || E1 - E0 <= 1e3 * DBL_EPSILON * fmax(mag0, mag1)) {
            if ((st = ct_step_ip_gradient(s, s->q_trial, s->x_trial, s->g_trial)) != CT_OK) return st;
            ls_ok = force_residual(s, s->g_trial) < rnorm;
        }
        if (ls_ok) {
            if (alpha == 1.0 && !corrected && (st = extrapolate(s, E0, gp, &E1, &mag1, diag)) != CT_OK) return st;
            cur->E = E1;
            cur->mag = mag1;
            *full = alpha == 1.0;
            S->corrections += corrected;
            break;
        }
        alpha *= 0.5;
        S->line_search_iters++;
    }
    S->t_line_search += ct_step_now() - tl - (mt->contact - tm1) - (mt->ccd - tccd);
    if (!ls_ok)
        return ct_diag_add(diag, CT_ENOCONV,
                           "step %d (t = %g), Newton iteration %d: line search found no decrease after %d "
                           "halvings (|p|inf/h = %.3e, tol = %.3e; force residual %.3e of F = %.3e N)",
                           s->step, s->t, it, s->sc->solver.max_line_search, S->residual, tol, S->force_residual,
                           S->force_scale);
    memcpy(s->q, s->q_trial, nqd * sizeof *s->q);
    memcpy(s->x, s->x_trial, nxd * sizeof *s->x);
    s->factor_exact = 0;
    cur->known = 1;
    return CT_OK;
}

/* The start of the Newton iterations: the inertial predictor q~ = q^n + h v^n (on the free dofs)
 * when the model lets the whole step be taken (no contact closes along it: max_step = 1) and it
 * lowers E; otherwise q^n. From q^n every sliding contact starts at zero slip, on the stiff
 * stick branch of the friction potential (mu lambda / (eps_v h) N/m), and the first Newton step,
 * taken on that linearization, tends to drive the sliding bodies into their barriers, which
 * costs about log2 of the force overshoot in iterations to undo; from q~ the slip is about
 * h v_T already (tests/README.md, issue 15). A predictor that the CCD would shorten is not
 * taken: its shortened step ends close to a contact, which is worse than q^n. A predictor taken
 * (*taken = 1) counts as a whole step for the choice of the matrix (newton_solve). */
static ct_status predictor_start(ct_sim *s, ip_value *cur, int *taken, ct_diag *diag)
{
    *taken = 0;
    const ct_assembly *as = s->as;
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * s->dim;
    memset(s->p, 0, nqd * sizeof *s->p);
    for (int i = 0; i < as->nfree; ++i) {
        int d = as->free_dof[i];
        s->p[d] = s->q_tilde[d] - s->q[d];
    }
    double alpha;
    ct_status st = max_step(s, &alpha, diag);
    if (st != CT_OK || alpha < 1.0) return st;
    if ((st = ct_step_ip_energy(s, s->q, s->x, &cur->E, &cur->mag)) != CT_OK) return st;
    for (size_t i = 0; i < nqd; ++i) s->q_trial[i] = s->q[i] + s->p[i];
    ct_dofs_map(&s->dofs, s->q_trial, s->x_trial);
    double E1, mag1;
    if ((st = ct_step_ip_energy(s, s->q_trial, s->x_trial, &E1, &mag1)) != CT_OK) return st;
    cur->known = 1; /* (E at the start, or at the predictor if taken) */
    if (E1 < cur->E) {
        cur->E = E1, cur->mag = mag1;
        memcpy(s->q, s->q_trial, nqd * sizeof *s->q);
        memcpy(s->x, s->x_trial, nxd * sizeof *s->x);
        s->factor_exact = 0;
        *taken = 1;
    }
    return CT_OK;
}

/* Newton iterations at fixed lagged state until the stopping test holds. The matrix is the
 * safe model (every element and contact term's Hessian made PSD on its own, so any direction is
 * a descent direction, and friction's majorizer, which never underestimates the friction
 * potential) until an iteration takes the whole Newton step (full0: the start, the predictor,
 * was such a step, or the exact start holds, see ct_step_solve_newton); from then on
 * (solver.exact_hessian) the exact Hessian while it is positive definite and full steps are
 * taken. Near the solution the projection is what keeps Newton
 * from converging quadratically: it zeroes the Hessians of the negative-weight terms of the
 * convergent collision set and the curvature of point-triangle and edge-edge distances, and
 * the majorizer stiffens sliding contacts along their slip (tests/README.md, issue 15). Far
 * from it the exact model's linear friction along a sliding slip sends the step across u = 0
 * into the stick branch, and the line search halves it four times, iteration after iteration. */
static ct_status newton_solve(ct_sim *s, double tol, int full0, ip_value *cur_io, ct_diag *diag)
{
    const ct_solver_spec *so = &s->sc->solver;
    /* The incremental potential at the current q, once known: the accepted trial's value is the
     * next iteration's E0 (the same q, so the same number; the lagged quantities change only
     * between outer iterations), which spares one energy evaluation per Newton iteration. On entry
     * *cur_io is the value at the start if known (the predictor's), on return the value at the
     * solution if known. */
    ip_value cur = *cur_io;
    int full = full0; /* the last iteration took the whole Newton step */
    for (int it = 0; it < so->max_newton_iters; ++it) {
        ct_status st = ct_step_assemble_factor(s, it, so->exact_hessian && full, diag);
        if (st != CT_OK) return st;
        double pmax;
        if ((st = newton_direction(s, &pmax, diag)) != CT_OK) return st;
        s->last.newton_iters = it + 1;
        const double rnorm = force_residual(s, s->g);
        int step_ok;
        if (newton_converged(s, pmax, tol, rnorm, &step_ok)) {
            *cur_io = cur;
            return CT_OK;
        }
        full = 0;
        if ((st = filter_line_search(s, it, tol, rnorm, step_ok, &cur, &full, diag)) != CT_OK) return st;
        s->newton_whole &= full;
    }
    return ct_diag_add(diag, CT_ENOCONV,
                       "step %d (t = %g): Newton did not converge in %d iterations (|p|inf%s = %.3e, tol = %.3e; "
                       "force residual %.3e of F = %.3e N, force_tol = %.3e)",
                       s->step, s->t, so->max_newton_iters, ct_step_is_static(s) ? "" : "/h", s->last.residual,
                       tol, s->last.force_residual, s->last.force_scale, so->force_tol);
}

/* The exact start. When the predictor is not taken, the iterations start where the last step
 * stopped; if that step converged on the exact Hessian and every one of its line searches took
 * the whole Newton step (start_exact, from ct_sim_step), its quadratic model held throughout, and
 * the iterations start on the exact Hessian (newton_solve's full0): the same point, and the same
 * matrix but for the targets moved at the step's start and the lagged state. On the bench's slabs
 * this saves the safe model's first matrix (its per-term projections cost 4-6 times the exact
 * contact Hessian). Where a line search was cut (the CCD shortening every step of a fold of
 * crossing edges, tests/cli_newton.sh), the start stays on the safe model: there the exact
 * Hessian at the start is mostly not positive definite, and where it is, its path into the fold
 * crawled longer (measured: 65 iterations against 43 in the fold's last step). */
ct_status ct_step_solve_newton(ct_sim *s, int start_exact, ct_diag *diag)
{
    const ct_solver_spec *so = &s->sc->solver;
    s->newton_whole = 1;
    const double tol = so->newton_tol * s->bbox_diag;
    int outer_max = so->friction_iters < 0 ? 100 : so->friction_iters;
    if (!ct_model_has_lagged(s->model)) outer_max = 1;
    int taken = 0;
    ip_value cur = {0.0, 0.0, 0}; /* E at the current q, if known */
    if (so->predictor && !ct_step_is_static(s)) {
        ct_status st = predictor_start(s, &cur, &taken, diag);
        if (st != CT_OK) return st;
    }
    for (int outer = 0; outer < outer_max; ++outer) {
        s->last.friction_iters = outer + 1;
        ct_status st = newton_solve(s, tol, outer == 0 && (taken || start_exact), &cur, diag);
        if (st != CT_OK) return st;
        if (outer_max > 1) {
            double delta = 0.0;
            s->factor_exact = 0; /* the lagged state changes the Hessian */
            cur.known = 0;       /* and E */
            if ((st = ct_model_update_lagged(s->model, &s->ctx, s->x, &delta)) != CT_OK) return st;
            if (delta < so->friction_tol) break;
        }
    }
    s->end_energy = cur.E;
    s->end_energy_known = cur.known;
    return CT_OK;
}
