/* step.c — one implicit Euler step as incremental-potential minimisation (projected Newton,
 * CHOLMOD, filter line search), plus energies and reaction forces. */
#include "contactlab/ct_sim.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sim/assemble.h"
#include "contactlab/ct_intersect.h"

static int is_static(const ct_sim *s) { return s->sc->integrator == CT_INTEGRATOR_STATIC; }
/* weight of the potentials in E: h^2 (dynamic) or 1 (static) */
static double pot_weight(const ct_sim *s) { return is_static(s) ? 1.0 : s->sc->dt * s->sc->dt; }

/* External forces at time t: gravity m g plus the scripted loads. */
static void compute_fext(ct_sim *s, double t)
{
    const ct_scene *sc = s->sc;
    int dim = s->dim;
    for (int k = 0; k < s->nx; ++k)
        for (int c = 0; c < dim; ++c) s->f_ext[(size_t)k * dim + c] = s->mass_x[k] * sc->gravity[c];
    for (int b = 0, l = 0; b < s->nb; ++b) {
        const ct_body *B = &s->bodies[b];
        for (int j = 0; j < sc->bodies[b].nloads; ++j, ++l) {
            const ct_load *ld = &sc->bodies[b].loads[j];
            double F[3];
            double tr = fmin(t, ld->ramp_until);
            for (int c = 0; c < dim; ++c) F[c] = ld->force[c] + ld->force_rate[c] * tr;
            const double *w = s->load_w + s->load_off[l];
            for (int k = 0; k < B->nx; ++k)
                if (w[k] != 0.0)
                    for (int c = 0; c < dim; ++c) s->f_ext[(size_t)(B->x_off + k) * dim + c] += F[c] * w[k];
        }
    }
}

/* 1/2 (a - b)^T M_q (a - b), M_q at vertex level applied per component (b may be NULL). */
static double mass_quadratic(const ct_sim *s, const double *a, const double *b)
{
    const ct_csc *M = &s->Mq_csc;
    int dim = s->dim;
    double E = 0.0;
    for (int j = 0; j < M->ncol; ++j)
        for (int k = M->colptr[j]; k < M->colptr[j + 1]; ++k) {
            size_t i = (size_t)M->rowind[k] * dim, jj = (size_t)j * dim;
            double dot = 0.0;
            for (int c = 0; c < dim; ++c)
                dot += (a[i + c] - (b ? b[i + c] : 0.0)) * (a[jj + c] - (b ? b[jj + c] : 0.0));
            E += 0.5 * M->val[k] * dot;
        }
    return E;
}

/* Model calls are timed into s->last.t_contact (the step subtracts that time from the core's
 * phases it happens in, so the columns of ct_step_stats partition the step). */
static ct_status model_energy(ct_sim *s, const double *x, double *E)
{
    *E = 0.0;
    if (!s->model->energy) return CT_OK;
    double t0 = omp_get_wtime();
    ct_status st = s->model->energy(s->mstate, &s->ctx, x, E);
    s->last.t_contact += omp_get_wtime() - t0;
    return st;
}

/* Incremental potential at (q, x = x(q)). */
static ct_status ip_energy(ct_sim *s, const double *q, const double *x, double *E)
{
    double w = pot_weight(s), Ec = 0.0;
    double Ee = ct_elastic_energy(&s->el, q);
    double Wext = 0.0;
    size_t nxd = (size_t)s->nx * s->dim;
    for (size_t i = 0; i < nxd; ++i) Wext += s->f_ext[i] * x[i];
    ct_status st = model_energy(s, x, &Ec);
    if (st != CT_OK) return st;
    *E = (is_static(s) ? 0.0 : mass_quadratic(s, q, s->q_tilde)) + w * (Ee - Wext + Ec);
    return CT_OK;
}

/* Gradient over all q dofs (fixed ones too: they give the reaction forces). */
static ct_status ip_gradient(ct_sim *s, const double *q, const double *x, double *g)
{
    int dim = s->dim;
    size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * dim;
    double w = pot_weight(s);
    memset(g, 0, nqd * sizeof *g);
    if (!is_static(s)) {
        const ct_csc *M = &s->Mq_csc;
        for (int b = 0; b < M->ncol; ++b)
            for (int k = M->colptr[b]; k < M->colptr[b + 1]; ++k) {
                int a = M->rowind[k];
                for (int c = 0; c < dim; ++c)
                    g[(size_t)a * dim + c] += M->val[k] * (q[(size_t)b * dim + c] - s->q_tilde[(size_t)b * dim + c]);
            }
    }
    /* w * (grad Psi(q) + J^T (-f_ext + grad P_c(x))) */
    double *ge = s->rhs;
    memset(ge, 0, nqd * sizeof *ge);
    ct_elastic_gradient(&s->el, q, ge);
    for (size_t i = 0; i < nxd; ++i) s->gx[i] = -s->f_ext[i];
    if (s->model->gradient) {
        double t0 = omp_get_wtime();
        ct_status st = s->model->gradient(s->mstate, &s->ctx, x, s->gx);
        s->last.t_contact += omp_get_wtime() - t0;
        if (st != CT_OK) return st;
    }
    ct_dofs_pull(&s->dofs, s->gx, ge);
    for (size_t i = 0; i < nqd; ++i) g[i] += w * ge[i];
    return CT_OK;
}

static double now(void) { return omp_get_wtime(); }

ct_status ct_sim_step(ct_sim *s, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    const ct_solver_spec *so = &sc->solver;
    int dim = s->dim;
    size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * dim;
    double h = sc->dt, t1 = s->t + h, w = pot_weight(s);
    double tol = so->newton_tol * s->bbox_diag;
    double wall0 = now();
    ct_step_stats *S = &s->last;
    memset(S, 0, sizeof *S);
    S->ccd_alpha_min = 1.0;
    S->min_distance = INFINITY;
    ct_assembly *as = s->as;
    ct_triplets *Hc = &as->hc; /* kept across steps: its pages stay mapped */
    ct_status st = CT_OK;

    /* lagged quantities and the predictor */
    memcpy(s->q_prev, s->q, nqd * sizeof *s->q);
    memcpy(s->x_prev, s->x, nxd * sizeof *s->x);
    for (size_t i = 0; i < nqd; ++i) s->q_tilde[i] = s->q[i] + h * s->vq[i];
    /* Dirichlet targets at the end of the step */
    for (int a = 0; a < s->nq; ++a) {
        int f = s->qv_dirichlet[a];
        if (f < 0) continue;
        const ct_dirichlet *dd = &sc->bodies[s->qv_body[a]].fixed[f];
        ct_motion_eval(dd, dim, s->Q + (size_t)a * dim, t1, s->q + (size_t)a * dim);
    }
    compute_fext(s, t1);
    ct_dofs_map(&s->dofs, s->q, s->x);
    s->ctx.step = s->step;
    s->ctx.t = s->t;
    s->ctx.h = h;
    double tb = now();
    if (s->model->begin_step) st = s->model->begin_step(s->mstate, &s->ctx);
    S->t_contact += now() - tb;
    if (st != CT_OK) {
        ct_diag_add(diag, st, "step %d (t = %g): model %s: begin_step failed", s->step, s->t, s->model->name);
        goto done;
    }
    int outer_max = so->friction_iters < 0 ? 100 : so->friction_iters;
    if (!s->model->update_lagged) outer_max = 1;
    double *pf = s->pq; /* free-dof solution */
    for (int outer = 0; outer < outer_max; ++outer) {
        S->friction_iters = outer + 1;
        int converged = 0;
        /* The incremental potential at the current q, once known: the accepted trial's value is the
         * next iteration's E0 (the same q, so the same number; the lagged quantities change only
         * between outer iterations), which spares one energy evaluation per Newton iteration. */
        double E_cur = 0.0;
        int E_known = 0;
        for (int it = 0; it < so->max_newton_iters; ++it) {
            double ta = now(), tm0 = S->t_contact;
            st = ip_gradient(s, s->q, s->x, s->g);
            if (st != CT_OK) {
                ct_diag_add(diag, st, "step %d: model %s: gradient failed", s->step, s->model->name);
                goto done;
            }
            ct_triplets_clear(Hc);
            Hc->upper = s->dofs.identity; /* the mapping reads row <= col only when x = q */
            double th = now();
            if (s->model->hessian) st = s->model->hessian(s->mstate, &s->ctx, s->x, Hc);
            S->t_contact += now() - th;
            if (st != CT_OK) {
                ct_diag_add(diag, st, "step %d: model %s: hessian failed", s->step, s->model->name);
                goto done;
            }
            double tloc = 0.0, tmap = 0.0;
            st = ct_assembly_fill(as, s, s->q, is_static(s) ? 0.0 : 1.0, w, Hc, w, so->project_psd, &tloc, &tmap,
                                  diag);
            if (st != CT_OK) goto done;
            S->t_projection += tloc;
            S->t_contact_assembly += tmap;
            S->t_assembly += now() - ta - tloc - tmap - (S->t_contact - tm0);
            int changed = as->pattern_changed;
            st = ct_linsolve_factor(s->ls, &as->A, changed, diag);
            as->pattern_changed = 0;
            double tan_, tf, ts;
            ct_linsolve_times(s->ls, &tan_, &tf, &ts);
            S->t_analysis += tan_;
            S->t_factor += tf;
            if (st != CT_OK) {
                ct_diag_add(diag, st, "step %d (t = %g), Newton iteration %d: factorization failed", s->step,
                            s->t, it);
                goto done;
            }
            for (int i = 0; i < as->nfree; ++i) pf[i] = -s->g[as->free_dof[i]];
            st = ct_linsolve_solve(s->ls, pf, pf, diag);
            ct_linsolve_times(s->ls, NULL, NULL, &ts);
            S->t_solve += ts;
            if (st != CT_OK) goto done;
            S->newton_iters = it + 1;
            memset(s->p, 0, nqd * sizeof *s->p);
            double pmax = 0.0;
            for (int i = 0; i < as->nfree; ++i) {
                s->p[as->free_dof[i]] = pf[i];
                pmax = fmax(pmax, fabs(pf[i]));
            }
            S->residual = is_static(s) ? pmax : pmax / h;
            if (S->residual < tol) {
                converged = 1;
                break;
            }
            /* filter line search: never beyond what the model calls safe */
            double tl = now(), tm1 = S->t_contact, tccd = S->t_ccd;
            double alpha = 1.0;
            ct_dofs_map_lin(&s->dofs, s->p, s->px);
            if (s->model->max_step) {
                double tc = now();
                st = s->model->max_step(s->mstate, &s->ctx, s->x, s->px, &alpha);
                S->t_ccd += now() - tc;
                if (st != CT_OK) {
                    ct_diag_add(diag, st, "step %d: model %s: max_step failed", s->step, s->model->name);
                    goto done;
                }
                alpha = fmin(alpha, 1.0);
                S->ccd_alpha_min = fmin(S->ccd_alpha_min, alpha);
            }
            double E0 = E_cur;
            if (!E_known && (st = ip_energy(s, s->q, s->x, &E0)) != CT_OK) goto done;
            int ls_ok = 0;
            for (int k = 0; k < so->max_line_search; ++k) {
                for (size_t i = 0; i < nqd; ++i) s->q_trial[i] = s->q[i] + alpha * s->p[i];
                ct_dofs_map(&s->dofs, s->q_trial, s->x_trial);
                double E1;
                if ((st = ip_energy(s, s->q_trial, s->x_trial, &E1)) != CT_OK) goto done;
                if (E1 <= E0) {
                    ls_ok = 1;
                    E_cur = E1;
                    break;
                }
                alpha *= 0.5;
                S->line_search_iters++;
            }
            S->t_line_search += now() - tl - (S->t_contact - tm1) - (S->t_ccd - tccd);
            if (!ls_ok) {
                st = ct_diag_add(diag, CT_ENOCONV,
                                 "step %d (t = %g), Newton iteration %d: line search found no decrease after %d "
                                 "halvings (|p|inf/h = %.3e, tol = %.3e)",
                                 s->step, s->t, it, so->max_line_search, S->residual, tol);
                goto done;
            }
            memcpy(s->q, s->q_trial, nqd * sizeof *s->q);
            memcpy(s->x, s->x_trial, nxd * sizeof *s->x);
            E_known = 1;
        }
        if (!converged) {
            st = ct_diag_add(diag, CT_ENOCONV,
                             "step %d (t = %g): Newton did not converge in %d iterations (|p|inf%s = %.3e, tol = "
                             "%.3e)", s->step, s->t, so->max_newton_iters, is_static(s) ? "" : "/h",
                             S->residual, tol);
            goto done;
        }
        if (outer_max > 1) {
            double delta = 0.0, tu = now();
            st = s->model->update_lagged(s->mstate, &s->ctx, s->x, &delta);
            S->t_contact += now() - tu;
            if (st != CT_OK) goto done;
            if (delta < so->friction_tol) break;
        }
    }
    /* velocities, energies, reaction data (gradient at the solution, all dofs) */
    if (is_static(s)) memset(s->vq, 0, nqd * sizeof *s->vq);
    else
        for (size_t i = 0; i < nqd; ++i) s->vq[i] = (s->q[i] - s->q_prev[i]) / h;
    ct_dofs_map_lin(&s->dofs, s->vq, s->vx);
    if ((st = ip_gradient(s, s->q, s->x, s->g)) != CT_OK) goto done;
    if ((st = ip_energy(s, s->q, s->x, &S->energy)) != CT_OK) goto done;
    s->ctx.t = t1;
    if (s->model->end_step) {
        ct_model_stats ms = {0, 0, INFINITY, 1.0, 0, 0, 0};
        if ((st = s->model->end_step(s->mstate, &s->ctx, s->x, &ms)) != CT_OK) {
            ct_diag_add(diag, st, "step %d: model %s: end_step failed", s->step, s->model->name);
            goto done;
        }
        S->n_candidates = ms.n_candidates;
        S->n_active = ms.n_active;
        S->min_distance = ms.min_distance;
        S->t_broadphase = ms.t_broadphase;
        S->t_model = ms.t_pairs;
    }
    /* the exact verifier: intersecting surface primitives after the step (DESIGN §9) */
    S->intersections = -1;
    if (so->verify && (s->surf.nf > 0 || (dim == 2 && s->surf.ned > 0))) {
        double tv = now();
        long ni = ct_surface_intersections(&s->surf, s->x, s->threads, NULL, 0);
        S->t_verify = now() - tv;
        if (ni < 0) {
            st = ct_diag_add(diag, CT_ENOMEM, "step %d: intersection verifier: out of memory", s->step);
            goto done;
        }
        S->intersections = (int)ni;
    }
    s->t = t1;
    s->step++;
done:
    S->n_analyses = ct_linsolve_analyses(s->ls);
    S->wall = now() - wall0;
    return st;
}

/* ---------- the incremental potential at any q (tests, drivers) ---------- */

ct_status ct_sim_ip_eval(ct_sim *s, const double *q, double *E, double *g)
{
    double *x = malloc(((size_t)s->nx * s->dim + 1) * sizeof *x);
    if (!x) return CT_ENOMEM;
    ct_dofs_map(&s->dofs, q, x);
    ct_status st = ip_energy(s, q, x, E);
    if (st == CT_OK && g) st = ip_gradient(s, q, x, g);
    free(x);
    return st;
}

ct_status ct_sim_ip_hessian(ct_sim *s, const double *q, int project, const ct_csc **A, ct_diag *diag)
{
    double *x = malloc(((size_t)s->nx * s->dim + 1) * sizeof *x);
    if (!x) return CT_ENOMEM;
    ct_dofs_map(&s->dofs, q, x);
    ct_triplets Hc;
    ct_triplets_init(&Hc);
    Hc.upper = s->dofs.identity;
    ct_status st = CT_OK;
    if (s->model->hessian) st = s->model->hessian(s->mstate, &s->ctx, x, &Hc);
    double w = pot_weight(s);
    if (st == CT_OK)
        st = ct_assembly_fill(s->as, s, q, is_static(s) ? 0.0 : 1.0, w, &Hc, w, project, NULL, NULL, diag);
    ct_triplets_free(&Hc);
    free(x);
    *A = &s->as->A;
    return st;
}

/* ---------- energies and reactions ---------- */

double ct_sim_kinetic_energy(const ct_sim *s) { return mass_quadratic(s, s->vq, NULL); }

double ct_sim_elastic_energy(const ct_sim *s) { return ct_elastic_energy(&s->el, s->q); }

double ct_sim_gravity_energy(const ct_sim *s)
{
    double E = 0.0;
    for (int k = 0; k < s->nx; ++k)
        for (int c = 0; c < s->dim; ++c) E -= s->mass_x[k] * s->sc->gravity[c] * s->x[(size_t)k * s->dim + c];
    return E;
}

double ct_sim_external_energy(const ct_sim *s)
{
    /* f_ext holds gravity + loads at the current time; subtract the gravity part */
    double E = 0.0;
    for (int k = 0; k < s->nx; ++k)
        for (int c = 0; c < s->dim; ++c) {
            size_t i = (size_t)k * s->dim + c;
            E -= (s->f_ext[i] - s->mass_x[k] * s->sc->gravity[c]) * s->x[i];
        }
    return E;
}

double ct_sim_contact_energy(ct_sim *s)
{
    double E = 0.0;
    if (model_energy(s, s->x, &E) != CT_OK) return NAN;
    return E;
}

void ct_sim_reaction(ct_sim *s, const ct_selector *sel, double *out)
{
    int dim = s->dim;
    double w = pot_weight(s);
    for (int c = 0; c < dim; ++c) out[c] = 0.0;
    int *idx = NULL, n = 0;
    if (sel) {
        if (ct_sim_select(s, sel, 1, &idx, &n) != CT_OK) return;
    } else {
        idx = malloc(((size_t)s->nq + 1) * sizeof *idx);
        if (!idx) return;
        for (int a = 0; a < s->nq; ++a) idx[n++] = a;
    }
    /* At a fixed dof the equation of motion reads M a = -grad Psi + f - grad P + R, and
     * g = M (q - q~) + w (grad Psi - f + grad P) with M (q - q~) = w M a, so R = g / w. */
    for (int i = 0; i < n; ++i) {
        int a = idx[i];
        for (int c = 0; c < dim; ++c)
            if (s->fixed[(size_t)a * dim + c]) out[c] += s->g[(size_t)a * dim + c] / w;
    }
    free(idx);
}
