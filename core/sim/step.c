/* step.c — one time step as named stages (DESIGN §2):
 *     predict -> begin_step -> solve -> end_step -> verify -> log
 * where solve is the Newton minimisation of the incremental potential for the energy family
 * (newton.c) or the linearized step with the model's contact impulse for the constraint
 * family (constraint.c); plus the incremental potential itself, energies and reactions. */
#include "sim/step_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "contactlab/ct_intersect.h"
#include "sim/assemble.h"

int ct_step_is_static(const ct_sim *s) { return s->sc->integrator == CT_INTEGRATOR_STATIC; }
double ct_step_pot_weight(const ct_sim *s) { return ct_step_is_static(s) ? 1.0 : s->sc->dt * s->sc->dt; }
double ct_step_now(void) { return omp_get_wtime(); }

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

/* Incremental potential at (q, x = x(q)); *mag (if not NULL) receives the sum of the
 * magnitudes of its parts (inertial term, elastic energy and its terms' scale, |f_ext,i x_i|
 * summed, |P_c|): the size of the numbers that cancel in E, whose round-off bounds which
 * changes of E mean anything (the line search of newton.c). */
ct_status ct_step_ip_energy(ct_sim *s, const double *q, const double *x, double *E, double *mag)
{
    double w = ct_step_pot_weight(s), Ec = 0.0;
    double Ee = ct_elastic_energy(&s->el, q);
    double Wext = 0.0, Wabs = 0.0;
    size_t nxd = (size_t)s->nx * s->dim;
    for (size_t i = 0; i < nxd; ++i) {
        Wext += s->f_ext[i] * x[i];
        Wabs += fabs(s->f_ext[i] * x[i]);
    }
    ct_status st = ct_model_energy(s->model, &s->ctx, x, &Ec);
    if (st != CT_OK) return st;
    const double Es = ct_step_springs_energy(s, x);
    double Ei = ct_step_is_static(s) ? 0.0 : mass_quadratic(s, q, s->q_tilde);
    *E = Ei + w * (Ee - Wext + Ec + Es);
    if (mag) *mag = Ei + w * (fabs(Ee) + s->elastic_scale + Wabs + fabs(Ec) + Es);
    return CT_OK;
}

/* Euclidean norm of the dim-vector at v. */
static double vnorm(const double *v, int dim)
{
    double n2 = 0.0;
    for (int c = 0; c < dim; ++c) n2 += v[c] * v[c];
    return sqrt(n2);
}

/* Gradient over all q dofs (fixed ones too: they give the reaction forces). As a by-product,
 * for the force test of newton.c, the force scale s->force_scale (N): the sum over vertices of
 * the magnitudes of the external forces, the contact forces and the inertial forces M a, plus
 * the reactions at held dofs. */
/* The gradient, and with H (not NULL) the model's Hessian triplets at the same x in the same call
 * (ct_model_gradient_hessian; s->ctx.exact_hessian set by the caller). */
static ct_status ip_gradient(ct_sim *s, const double *q, const double *x, double *g, ct_triplets *H)
{
    int dim = s->dim;
    size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * dim;
    double w = ct_step_pot_weight(s);
    double F = 0.0;
    memset(g, 0, nqd * sizeof *g);
    if (!ct_step_is_static(s)) {
        const ct_csc *M = &s->Mq_csc;
        for (int b = 0; b < M->ncol; ++b)
            for (int k = M->colptr[b]; k < M->colptr[b + 1]; ++k) {
                int a = M->rowind[k];
                for (int c = 0; c < dim; ++c)
                    g[(size_t)a * dim + c] += M->val[k] * (q[(size_t)b * dim + c] - s->q_tilde[(size_t)b * dim + c]);
            }
        for (int a = 0; a < s->nq; ++a) F += vnorm(g + (size_t)a * dim, dim);
        F /= w;
    }
    /* w * (grad Psi(q) + J^T (-f_ext + grad E_s(x) + grad P_c(x))); the spring forces count in the
     * force scale F with the contact forces (the |f_c| below) */
    double *ge = s->rhs;
    memset(ge, 0, nqd * sizeof *ge);
    ct_elastic_gradient(&s->el, q, ge);
    for (size_t i = 0; i < nxd; ++i) s->gx[i] = -s->f_ext[i];
    ct_step_springs_gradient(s, x, s->gx);
    ct_status st = H ? ct_model_gradient_hessian(s->model, &s->ctx, x, s->gx, H) : ct_model_gradient(s->model, &s->ctx, x, s->gx);
    if (st != CT_OK) return st;
    for (int k = 0; k < s->nx; ++k) {
        const double *fe = s->f_ext + (size_t)k * dim, *gk = s->gx + (size_t)k * dim;
        double fc[3];
        for (int c = 0; c < dim; ++c) fc[c] = gk[c] + fe[c];
        F += vnorm(fe, dim) + vnorm(fc, dim);
    }
    ct_dofs_pull(&s->dofs, s->gx, ge);
    for (size_t i = 0; i < nqd; ++i) g[i] += w * ge[i];
    for (int a = 0; a < s->nq; ++a) {
        double r2 = 0.0;
        for (int c = 0; c < dim; ++c)
            if (s->fixed[(size_t)a * dim + c]) r2 += g[(size_t)a * dim + c] * g[(size_t)a * dim + c];
        F += sqrt(r2) / w;
    }
    s->force_scale = F;
    return CT_OK;
}

ct_status ct_step_ip_gradient(ct_sim *s, const double *q, const double *x, double *g)
{
    return ip_gradient(s, q, x, g, NULL);
}

/* ---------- the Newton matrix ---------- */

ct_status ct_step_assemble_factor(ct_sim *s, int it, int exact, ct_diag *diag)
{
    ct_step_stats *S = &s->last;
    ct_assembly *as = s->as;
    ct_triplets *Hc = &as->hc; /* kept across steps: its pages stay mapped */
    const double w = ct_step_pot_weight(s);
    double ta = ct_step_now(), tm0 = s->model->time.contact;
    s->factor_exact = 0;
    /* the gradient and the first matrix's contact Hessian in one model call (ct_model_gradient_hessian) */
    ct_triplets_clear(Hc);
    Hc->upper = s->dofs.identity; /* the mapping reads row <= col only when x = q */
    Hc->rows_lazy = 1;            /* ... and blocks from their stencils (ct_assembly_fill) */
    s->ctx.exact_hessian = exact ? 1 : 0;
    ct_status st = ip_gradient(s, s->q, s->x, s->g, Hc);
    s->ctx.exact_hessian = 0;
    if (st != CT_OK)
        return ct_diag_add(diag, st, "step %d (t = %g): model %s: gradient or hessian failed (%s)", s->step, s->t,
                           ct_model_name(s->model), ct_status_str(st));
    for (int ex = exact ? 1 : 0, first = 1;; ex = 0, first = 0) {
        if (first) {
            st = ct_step_springs_hessian(s, s->x, s->sc->solver.project_psd && !ex, Hc);
        } else {
            ct_triplets_clear(Hc);
            Hc->upper = s->dofs.identity;
            Hc->rows_lazy = 1;
            st = ct_step_hessian_triplets(s, s->x, ex, s->sc->solver.project_psd, Hc);
        }
        if (st != CT_OK)
            return ct_diag_add(diag, st, "step %d: model %s: hessian failed", s->step, ct_model_name(s->model));
        double tloc = 0.0, tmap = 0.0;
        st = ct_assembly_fill(as, s, s->q, ct_step_is_static(s) ? 0.0 : 1.0, w, Hc, w,
                              s->sc->solver.project_psd && !ex, &tloc, &tmap, diag);
        if (st != CT_OK) return st;
        S->t_projection += tloc;
        S->t_contact_assembly += tmap;
        S->t_assembly += ct_step_now() - ta - tloc - tmap - (s->model->time.contact - tm0);
        /* an exact matrix that is not positive definite is no error: the projected one follows */
        st = ct_linsolve_factor(s->ls, &as->A, as->pattern_changed, ex ? NULL : diag);
        as->pattern_changed = 0;
        double tan_, tf;
        ct_linsolve_times(s->ls, &tan_, &tf, NULL);
        S->t_analysis += tan_;
        S->t_factor += tf;
        if (ex && st == CT_ENOTPD) {
            S->exact_fallbacks++;
            ta = ct_step_now();
            tm0 = s->model->time.contact;
            continue;
        }
        if (st != CT_OK)
            return ct_diag_add(diag, st, "step %d (t = %g), Newton iteration %d: factorization failed", s->step,
                               s->t, it);
        S->exact_iters += ex;
        s->factor_exact = ex;
        s->matrix_exact = ex;
        return CT_OK;
    }
}

/* ---------- the stages of a step ---------- */

/* predict: remember x^n, form the inertial target q~ = q^n + h v^n, move the prescribed dofs
 * to their targets at the end of the step, external forces at the end time, and the context. */
static void stage_predict(ct_sim *s, double t1)
{
    const int dim = s->dim;
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * dim;
    const double h = s->sc->dt;
    memcpy(s->q_prev, s->q, nqd * sizeof *s->q);
    memcpy(s->x_prev, s->x, nxd * sizeof *s->x);
    for (size_t i = 0; i < nqd; ++i) s->q_tilde[i] = s->q[i] + h * s->vq[i];
    for (int a = 0; a < s->nq; ++a) {
        int f = s->qv_dirichlet[a];
        if (f < 0) continue;
        const ct_dirichlet *dd = &s->sc->bodies[s->qv_body[a]].fixed[f];
        ct_motion_eval(dd, dim, s->Q + (size_t)a * dim, t1, s->q + (size_t)a * dim);
    }
    compute_fext(s, t1);
    ct_dofs_map(&s->dofs, s->q, s->x);
    s->ctx.step = s->step;
    s->ctx.t = s->t;
    s->ctx.h = h;
}

/* begin_step: the model lags its state at x^n (friction, bonds, candidates). */
static ct_status stage_begin_step(ct_sim *s, ct_diag *diag)
{
    ct_status st = ct_model_begin_step(s->model, &s->ctx);
    if (st != CT_OK)
        ct_diag_add(diag, st, "step %d (t = %g): model %s: begin_step failed", s->step, s->t, ct_model_name(s->model));
    return st;
}

/* end_step: velocities, the gradient at the solution (reactions), the energy, the model's own
 * end of step (per-pair state, statistics). */
static ct_status stage_end_step(ct_sim *s, double t1, ct_diag *diag)
{
    ct_step_stats *S = &s->last;
    const size_t nqd = (size_t)s->ndof;
    const double h = s->sc->dt;
    if (ct_step_is_static(s)) memset(s->vq, 0, nqd * sizeof *s->vq);
    else
        for (size_t i = 0; i < nqd; ++i) s->vq[i] = (s->q[i] - s->q_prev[i]) / h;
    ct_dofs_map_lin(&s->dofs, s->vq, s->vx);
    ct_status st = ct_step_ip_gradient(s, s->q, s->x, s->g);
    if (st != CT_OK) return st;
    if (s->model->type->family == CT_FAMILY_CONSTRAINT) /* R = g / h^2 - r / h (ct_sim_reaction) */
        for (size_t i = 0; i < nqd; ++i) s->g[i] -= h * s->r_contact[i];
    if (s->end_energy_known) S->energy = s->end_energy; /* (the solve's value at this q: the same bits) */
    else if ((st = ct_step_ip_energy(s, s->q, s->x, &S->energy, NULL)) != CT_OK) return st;
    s->ctx.t = t1;
    ct_model_stats ms = {0, 0, INFINITY, 1.0, 0, 0, 0};
    if ((st = ct_model_end_step(s->model, &s->ctx, s->x, &ms)) != CT_OK)
        return ct_diag_add(diag, st, "step %d: model %s: end_step failed", s->step, ct_model_name(s->model));
    if (s->model->type->end_step) {
        S->n_candidates = ms.n_candidates;
        S->n_active = ms.n_active;
        S->min_distance = ms.min_distance;
        S->t_broadphase = ms.t_broadphase;
        S->t_model = ms.t_pairs;
    }
    return CT_OK;
}

/* verify: the exact intersection test of the surfaces after the step (DESIGN §9); -1 when
 * solver.verify is off. */
static ct_status stage_verify(ct_sim *s, ct_diag *diag)
{
    ct_step_stats *S = &s->last;
    S->intersections = -1;
    if (!s->sc->solver.verify || !(s->surf.nf > 0 || (s->dim == 2 && s->surf.ned > 0))) return CT_OK;
    double tv = ct_step_now();
    long ni = ct_surface_intersections(&s->surf, s->x, s->threads, NULL, 0);
    S->t_verify = ct_step_now() - tv;
    if (ni < 0) return ct_diag_add(diag, CT_ENOMEM, "step %d: intersection verifier: out of memory", s->step);
    S->intersections = (int)ni;
    return CT_OK;
}

/* log: the step's statistics for the run log (ct_step_stats; the run loop writes them), also
 * after a failed stage. */
static void stage_log(ct_sim *s, double wall0, const ct_model_timing *m0)
{
    ct_step_stats *S = &s->last;
    const ct_model_timing *m1 = &s->model->time;
    S->t_contact = (m1->contact - m0->contact) + (m1->step - m0->step);
    S->t_ccd = m1->ccd - m0->ccd;
    S->n_analyses = ct_linsolve_analyses(s->ls);
    S->wall = ct_step_now() - wall0;
}

ct_status ct_sim_step(ct_sim *s, ct_diag *diag)
{
    const double t1 = s->t + s->sc->dt, wall0 = ct_step_now();
    const ct_model_timing m0 = s->model->time;
    ct_step_stats *S = &s->last;
    memset(S, 0, sizeof *S);
    S->ccd_alpha_min = 1.0;
    S->min_distance = INFINITY;
    const int start_exact = s->last_ok && s->matrix_exact && s->newton_whole; /* (newton.c) */
    s->last_ok = 0;
    s->factor_exact = 0;
    s->end_energy_known = 0;
    const size_t nmsg = ct_diag_count(diag);
    stage_predict(s, t1);
    ct_status st = stage_begin_step(s, diag);
    if (st == CT_OK)
        st = s->model->type->family == CT_FAMILY_CONSTRAINT ? ct_step_solve_constraint(s, diag)
                                                            : ct_step_solve_newton(s, start_exact, diag);
    if (st == CT_OK) st = stage_end_step(s, t1, diag);
    if (st == CT_OK) st = stage_verify(s, diag);
    if (st == CT_OK) {
        s->t = t1;
        s->step++;
    }
    s->last_ok = st == CT_OK;
    stage_log(s, wall0, &m0);
    if (st != CT_OK && ct_diag_count(diag) == nmsg) /* a failure no stage explained: at least say where */
        ct_diag_add(diag, st, "step %d (t = %g): model %s: %s", s->step, s->t, ct_model_name(s->model),
                    ct_status_str(st));
    return st;
}

/* ---------- the incremental potential at any q (tests, drivers) ---------- */

ct_status ct_sim_ip_eval(ct_sim *s, const double *q, double *E, double *g)
{
    double *x = malloc(((size_t)s->nx * s->dim + 1) * sizeof *x);
    if (!x) return CT_ENOMEM;
    ct_dofs_map(&s->dofs, q, x);
    ct_status st = ct_step_ip_energy(s, q, x, E, NULL);
    if (st == CT_OK && g) st = ct_step_ip_gradient(s, q, x, g);
    free(x);
    return st;
}

ct_status ct_sim_ip_hessian(ct_sim *s, const double *q, int project, const ct_csc **A, ct_diag *diag)
{
    double *x = malloc(((size_t)s->nx * s->dim + 1) * sizeof *x);
    if (!x) return CT_ENOMEM;
    ct_dofs_map(&s->dofs, q, x);
    s->factor_exact = 0; /* the matrix and the element Hessians are overwritten */
    ct_triplets Hc;
    ct_triplets_init(&Hc);
    Hc.upper = s->dofs.identity;
    ct_status st = ct_step_hessian_triplets(s, x, 0, project, &Hc);
    double w = ct_step_pot_weight(s);
    if (st == CT_OK)
        st = ct_assembly_fill(s->as, s, q, ct_step_is_static(s) ? 0.0 : 1.0, w, &Hc, w, project, NULL, NULL, diag);
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
    if (ct_model_energy(s->model, &s->ctx, s->x, &E) != CT_OK) return NAN;
    return E;
}

void ct_sim_reaction(ct_sim *s, const ct_selector *sel, double *out)
{
    int dim = s->dim;
    double w = ct_step_pot_weight(s);
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
