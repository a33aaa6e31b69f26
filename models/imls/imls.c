/* imls.c — the imls model: smooth contact on robust IMLS surfaces (Du et al. 2023, "No Free
 * Slide", §4–5): every surface vertex of a movable body i feels the field ψ_j of every other body j
 * (the robust IMLS surface of j's surface vertices with their vertex normals, ct_imls.h) through
 * w·κ·b(ψ_j(x)), and every half-space through w·κ·b(distance). Frictionless; self-contact off.
 * Parameters, resolved values, Hessian modes and the step-size rule: README.md. The terms and
 * their passes live in imls_terms.c. */
#include "imls_model.h"

#include "contactlab/ct_barrier.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const hess_choices[] = {"auto", "gn", "project", "exact", NULL};
static const char *const variant_choices[] = {"distance", "squared", NULL};

enum { P_DHAT, P_KAPPA, P_KAPPA_SCALE, P_RADIUS, P_RFACTOR, P_SIGMA_F, P_SIGMA_N, P_ITERS, P_HESS, P_MARGIN, P_CCD_S,
       P_FADE, P_EPS_C, P_DHAT_P, P_DHAT_A, P_VARIANT, P_Y_OBS, P_NPARAMS };

static const ct_param_spec imls_params[] = {
    [P_DHAT] = {"dhat", CT_PARAM_REAL, 1e-3, "m", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
                "barrier activation distance d̂ on the IMLS distance ψ", 0},
    [P_KAPPA] = {"kappa", CT_PARAM_REAL, 0, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                 "barrier stiffness κ (a pressure); auto: kappa_scale × the smaller Young's modulus, doubled while "
                 "contacts keep closing below 1e-9·bbox (as IPC)",
                 1},
    [P_KAPPA_SCALE] = {"kappa_scale", CT_PARAM_REAL, 0.1, "", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
                       "auto κ = kappa_scale × min Young's modulus of the bodies", 0},
    [P_RADIUS] = {"radius", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO | CT_PARAM_PER_BODY,
                  NULL,
                  "kernel support radius R of a body's field (per body; auto: radius_factor × the body's mean rest "
                  "edge length, at least 1.25·√(d̂² + h²), h its largest face circumradius (3D) / half segment (2D))",
                  1},
    [P_RFACTOR] = {"radius_factor", CT_PARAM_REAL, 0, "", 0, INFINITY,
                   CT_PARAM_MIN_EXCL | CT_PARAM_AUTO | CT_PARAM_PER_BODY, NULL,
                   "R as a multiple of the mean edge length when radius is auto (per body; auto: 2 in 2D, 1.5 in 3D; "
                   "the paper uses 1.4–4)",
                   1},
    [P_SIGMA_F] = {"sigma_f", CT_PARAM_REAL, 0.5, "", 0, INFINITY, 0, NULL,
                   "robust residual weight scale σ_f (σ_r = σ_f·R; 0: off)", 0},
    [P_SIGMA_N] = {"sigma_n", CT_PARAM_REAL, 1.0, "", 0, INFINITY, 0, NULL, "robust normal weight scale σ_n (0: off)",
                   0},
    [P_ITERS] = {"iterations", CT_PARAM_INT, 1, "", 0, 1, 0, NULL,
                 "robust re-weighting iterations: 0 (plain IMLS) or 1", 0},
    [P_HESS] = {"hessian", CT_PARAM_CHOICE, 0, "", 0, 0, 0, hess_choices,
                "term Hessian outside the core's exact iterations: gn (Gauss–Newton rank-1 over the whole stencil + "
                "the projected query block), project (the exact term Hessian projected, dense eigensolve), exact "
                "(unprojected; the core falls back to gn when the sum is not positive definite); auto: project in "
                "2D, gn in 3D",
                0},
    [P_MARGIN] = {"nb_margin", CT_PARAM_REAL, 0.25, "", 0, INFINITY, 0, NULL,
                  "candidate samples are searched within R + nb_margin·R_min and reused until a surface vertex moves "
                  "nb_margin·R_min/2 (same results for any value)",
                  0},
    [P_CCD_S] = {"ccd_s", CT_PARAM_REAL, 0.1, "", 0, 1, CT_PARAM_MIN_EXCL | CT_PARAM_MAX_EXCL, NULL,
                 "step-size rule: a step may close a query's distance bound to this fraction", 0},
    [P_FADE] = {"fade", CT_PARAM_REAL, 0.05, "", 0, INFINITY, 0, NULL,
                "a term whose kernel sum B = Σ φ_i is below fade is multiplied by a C² smoothstep of B/fade, so it "
                "vanishes smoothly where the query leaves the field's support (0: the term jumps to 0 there)",
                0},
    [P_EPS_C] = {"eps_c", CT_PARAM_REAL, 0, "", 0, INFINITY, 0, NULL,
                 "sticky IMLS: Fang et al.'s normal adhesion a(ψ) on the IMLS distance, critical strain ε_c: peak "
                 "pressure Y·ε_c at d̂_p, Y the smaller Young's modulus of the pair (0: no adhesion)",
                 0},
    [P_DHAT_P] = {"dhat_p", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                  "distance of the peak adhesion pressure d̂_p (auto: d̂)", 1},
    [P_DHAT_A] = {"dhat_a", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                  "adhesion activation distance d̂_a > d̂_p (auto: 2 d̂)", 1},
    [P_VARIANT] = {"adhesion_variant", CT_PARAM_CHOICE, 0, "", 0, 0, 0, variant_choices,
                   "distance: a(ψ) piecewise quadratic in ψ (the paper); squared: in ψ² (models/ipc_adhesion)", 0},
    [P_Y_OBS] = {"young_obstacle", CT_PARAM_REAL, 0, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                 "Y of participants without a material (half-spaces, kinematic bodies) for adhesion (auto: the "
                 "other participant's)",
                 1},
    [P_NPARAMS] = {NULL},
};

/* Sticky IMLS: the laws of every participant pair (as models/ipc_adhesion: Y the smaller of the two
 * Young's moduli, a participant without a material takes young_obstacle or the other's). */
static ct_status adhesion_init(imls_state *st, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    const double eps_c = prm->value[P_EPS_C];
    st->reach = st->dhat;
    st->np = c->nbodies + c->nobstacles;
    if (!(eps_c > 0.0)) return CT_OK;
    const double da = prm->is_auto[P_DHAT_A] ? 2.0 * st->dhat : prm->value[P_DHAT_A];
    const double dp = prm->is_auto[P_DHAT_P] ? st->dhat : prm->value[P_DHAT_P];
    if (!(dp < da))
        return ct_diag_add(diag, CT_EINPUT, "/contact/dhat_p: d̂_p = %g m must be below d̂_a = %g m", dp, da);
    prm->value[P_DHAT_A] = da;
    prm->value[P_DHAT_P] = dp;
    const ct_adhesion_variant var = (int)prm->value[P_VARIANT] == 1 ? CT_ADH_SQUARED : CT_ADH_DISTANCE;
    const double y_obs = prm->is_auto[P_Y_OBS] ? NAN : prm->value[P_Y_OBS];
    if (ct_adhesion_pair_laws(&st->law, st->np, c->part_young, y_obs, var, dp, da, eps_c) != CT_OK) return CT_ENOMEM;
    st->reach = fmax(st->dhat, da);
    return CT_OK;
}

static void imls_destroy(void *p)
{
    imls_state *st = p;
    imls_fields_free(st);
    free(st->law);
}

static ct_status imls_init(void *p, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    imls_state *st = p;
    st->dim = c->dim;
    st->nx = c->nx;
    st->nbodies = c->nbodies;
    st->nobs = c->nobstacles;
    st->dhat = prm->value[P_DHAT];
    st->ccd_s = prm->value[P_CCD_S];
    st->margin_frac = prm->value[P_MARGIN];
    ct_status sa = adhesion_init(st, c, prm, diag);
    if (sa != CT_OK) return sa;
    st->kappa_auto = prm->is_auto[P_KAPPA];
    if (st->kappa_auto) {
        double Emin = INFINITY;
        for (int b = 0; b < c->nbodies; ++b)
            if (c->part_young && isfinite(c->part_young[b])) Emin = fmin(Emin, c->part_young[b]);
        if (!isfinite(Emin))
            return ct_diag_add(diag, CT_EINPUT,
                               "/contact/kappa: \"auto\" needs at least one body with a material (give a value in Pa)");
        st->kappa = prm->value[P_KAPPA_SCALE] * Emin;
        st->kappa_max = 100.0 * st->kappa;
        prm->value[P_KAPPA] = st->kappa;
    } else {
        st->kappa = st->kappa_max = prm->value[P_KAPPA];
    }
    int hm = (int)prm->value[P_HESS];
    st->safe_mode = hm == 1 ? CT_IMLS_HESS_GN
                  : hm == 2 ? CT_IMLS_HESS_PROJECT
                  : hm == 3 ? CT_IMLS_HESS_EXACT
                            : (c->dim == 2 ? CT_IMLS_HESS_PROJECT : CT_IMLS_HESS_GN);
    const double factor_auto = c->dim == 2 ? 2.0 : 1.5;
    double *Rg = malloc(((size_t)c->nbodies + 1) * sizeof *Rg), *fac = malloc(((size_t)c->nbodies + 1) * sizeof *fac);
    if (!Rg || !fac) {
        free(Rg), free(fac);
        return CT_ENOMEM;
    }
    for (int b = 0; b < c->nbodies; ++b) { /* each body's own values (bodies[b].contact), else the scene's */
        const int rows = prm->nbodies > b && prm->body_is_auto;
        const int ra = rows ? prm->body_is_auto[b * prm->n + P_RADIUS] : prm->is_auto[P_RADIUS];
        const int fa = rows ? prm->body_is_auto[b * prm->n + P_RFACTOR] : prm->is_auto[P_RFACTOR];
        Rg[b] = ra ? NAN : ct_params_body(prm, b, P_RADIUS);
        fac[b] = fa ? factor_auto : ct_params_body(prm, b, P_RFACTOR);
    }
    if (prm->is_auto[P_RFACTOR]) prm->value[P_RFACTOR] = factor_auto;
    ct_imls_params fp;
    ct_imls_params_default(&fp, c->dim, 1.0);
    fp.sigma_f = prm->value[P_SIGMA_F];
    fp.sigma_n = prm->value[P_SIGMA_N];
    fp.iters = (int)prm->value[P_ITERS];
    st->fade = prm->value[P_FADE];
    ct_status s = imls_fields_init(st, c, Rg, fac, &fp, st->safe_mode, diag);
    free(Rg), free(fac);
    if (s != CT_OK) return s;
    /* the resolved radius: one number when every body with samples has the same */
    double R = NAN;
    for (int b = 0; b < st->nbodies; ++b) {
        if (st->field[b].n == 0) continue;
        if (isnan(R)) R = st->field[b].R;
        else if (R != st->field[b].R) {
            R = NAN;
            break;
        }
    }
    prm->value[P_RADIUS] = R;
    /* the start must be feasible: no surface vertex inside another body's IMLS surface (ψ ≤ 0) or
       behind a half-space (the barrier is +∞ there and Newton cannot start) */
    s = imls_eval_value(st, c, c->x_prev);
    if (s != CT_OK) return ct_diag_add(diag, s, "imls: evaluating the contact terms at the start");
    if (!isfinite(st->E_eval)) {
        for (long t = 0; t < st->nterm; ++t)
            if (st->tstate[t] == CT_IMLS_TERM_INFEASIBLE)
                return ct_diag_add(diag, CT_EINPUT,
                                   "/contact: imls: at the start, vertex %d of body \"%s\" is inside the IMLS surface of "
                                   "body \"%s\" (ψ = %.3g m; kernel radius %.3g m): the smooth surface fitted to a coarse "
                                   "mesh bulges past its edges and corners by a fraction of R; separate the bodies, "
                                   "refine the mesh or lower radius / radius_factor",
                                   st->term[t].q, c->part_names[st->term[t].qb], c->part_names[st->term[t].fb],
                                   st->psi[t], st->field[st->term[t].fb].R);
        return ct_diag_add(diag, CT_EINPUT, "/obstacles: imls: at the start a surface vertex is on or behind a half-space");
    }
    st->prev_min_dist = INFINITY;
    st->scalar_names[0] = "kappa";
    st->scalar_names[1] = "min_distance";
    st->scalar_names[2] = "active_terms";
    st->scalar_names[3] = "max_support";
    st->scalar_names[4] = "mean_support";
    st->scalar_names[5] = "list_builds";
    return CT_OK;
}

static ct_status imls_begin_step(void *p, const ct_step_ctx *c)
{
    (void)c;
    imls_state *st = p;
    st->t_nb = st->t_terms = st->t_step = 0.0;
    st->n_list_builds = 0;
    return CT_OK;
}

/* κ into every field's term parameters (after an adaptive update) */
static void set_kappa(imls_state *st, double kappa)
{
    st->kappa = kappa;
    for (int b = 0; b < st->nbodies; ++b) st->field[b].prm.kappa = kappa;
    st->eval_valid = 0;
}

static ct_status imls_energy(void *p, const ct_step_ctx *c, const double *x, double *E)
{
    imls_state *st = p;
    ct_status s = imls_eval_value(st, c, x);
    if (s == CT_OK) *E = st->E_eval;
    return s;
}

static ct_status imls_gradient(void *p, const ct_step_ctx *c, const double *x, double *g)
{
    return imls_eval_gradient(p, c, x, g);
}

static ct_status imls_hessian(void *p, const ct_step_ctx *c, const double *x, ct_triplets *H)
{
    imls_state *st = p;
    return imls_eval_hessian(st, c, x, c->exact_hessian ? CT_IMLS_HESS_EXACT : st->safe_mode, H, NULL);
}

/* the gradient on the way of the Hessian pass (each active term's derivatives once) */
static ct_status imls_gradient_hessian(void *p, const ct_step_ctx *c, const double *x, double *g, ct_triplets *H)
{
    imls_state *st = p;
    return imls_eval_hessian(st, c, x, c->exact_hessian ? CT_IMLS_HESS_EXACT : st->safe_mode, H, g);
}

static ct_status imls_max_step_op(void *p, const ct_step_ctx *c, const double *x, const double *dx, double *alpha)
{
    imls_state *st = p;
    const double t0 = imls_now();
    ct_status s = imls_max_step(st, c, x, dx, alpha);
    st->t_step += imls_now() - t0;

    return s;
}

/* the smallest ψ of the terms within reach and the smallest half-space distance at x */
static double min_distance(const imls_state *st, const ct_step_ctx *c, const double *x)
{
    double dmin = INFINITY;
    for (long t = 0; t < st->nterm; ++t)
        if (st->tstate[t] != CT_IMLS_TERM_OFF) dmin = fmin(dmin, st->psi[t]);
    for (int o = 0; o < st->nobs; ++o)
        for (int k = 0; k < st->nq; ++k) {
            const double d = imls_halfspace_dist(st, c, x, k, o);
            if (d < st->reach) dmin = fmin(dmin, d);
        }
    return dmin;
}

static ct_status imls_end_step(void *p, const ct_step_ctx *c, const double *x, ct_model_stats *ms)
{
    imls_state *st = p;
    ct_status s = imls_eval_value(st, c, x);
    if (s != CT_OK) return s;
    const double dmin = min_distance(st, c, x);
    long nact = 0;
    for (long t = 0; t < st->nterm; ++t) nact += st->tstate[t] == CT_IMLS_TERM_ACTIVE;
    ms->n_candidates = st->nterm;
    ms->n_active = nact;
    ms->min_distance = dmin;
    ms->t_broadphase = st->t_nb;
    ms->t_ccd = st->t_step;
    ms->t_pairs = st->t_terms;
    if (st->kappa_auto) { /* IPC's adaptive stiffness */
        const double eps_d = 1e-9 * c->bbox_diag;
        if (st->prev_min_dist < eps_d && dmin < eps_d && dmin < st->prev_min_dist)
            set_kappa(st, fmin(st->kappa_max, 2.0 * st->kappa));
    }
    st->prev_min_dist = dmin;
    return CT_OK;
}

/* Book the force fa on A from B (and its reaction) in category cat; count the pair in `count` (NULL:
 * no count). */
static void book(ct_force_report *r, int A, int B, const double *fa, int dim, ct_force_category cat, int *count)
{
    double *FA = ct_force_report_at(r, A, B, cat), *FB = ct_force_report_at(r, B, A, cat);
    for (int d = 0; d < dim; ++d) FA[d] += fa[d], FB[d] -= fa[d];
    if (count) {
        count[A * r->np + B]++;
        if (A != B) count[B * r->np + A]++;
    }
}

/* The force of a term's gradient (over its stencil) on the query's body A: −Σ over A's vertices */
static void query_force(const ct_step_ctx *c, const imls_work *w, int n, int A, int dim, double *fa)
{
    fa[0] = fa[1] = fa[2] = 0.0;
    for (int u = 0; u < n; ++u)
        if (c->vert_part[w->verts[u]] == A)
            for (int d = 0; d < dim; ++d) fa[d] -= w->grad[u * dim + d];
}

/* The forces between participants by category: a body–body term's gradient over its stencil splits into
 * the query's body (the query vertex) and the field's body (the samples and their rings); the two parts
 * are opposite (the term is translation invariant), booked as the force on the query's body and its
 * reaction. With adhesion the term's barrier part (ψ < d̂) is evaluated alone and the adhesion's is the
 * rest (the gradient is linear in the density). Active pairs: the barrier acts (ψ < d̂); bonded: the
 * adhesion's law is nonzero there (ψ < d̂_a). A half-space takes the reaction of the vertex. */
static ct_status imls_forces(void *p, const ct_step_ctx *c, const double *x, ct_force_report *out)
{
    imls_state *st = p;
    ct_status s = imls_eval_value(st, c, x);
    if (s != CT_OK) return s;
    const int dim = st->dim;
    int kmax = 1;
    long nact = 0, nsum = 0;
    int smax = 0;
    for (long t = 0; t < st->nterm; ++t)
        if (st->tstate[t] == CT_IMLS_TERM_ACTIVE) {
            kmax = st->nsup[t] > kmax ? st->nsup[t] : kmax;
            smax = st->nsup[t] > smax ? st->nsup[t] : smax;
            nsum += st->nsup[t];
            nact++;
        }
    /* the first thread's work of the pool (reserved by the value pass), grown as needed */
    imls_work *w = &st->pool[0];
    s = imls_work_ensure(w, st, kmax, CT_IMLS_GRADIENT, CT_IMLS_HESS_GN);
    if (s != CT_OK) return s;
    for (long t = 0; t < st->nterm && s == CT_OK; ++t) {
        if (st->tstate[t] != CT_IMLS_TERM_ACTIVE) continue;
        const int A = st->term[t].qb, B = st->term[t].fb;
        const int sticky = imls_law(st, A, B) != NULL;
        int n = 0;
        double ftot[3], fbar[3] = {0, 0, 0};
        s = imls_term_gradient(st, x, t, 1, w, &n);
        query_force(c, w, n, A, dim, ftot);
        if (s == CT_OK && sticky && st->psi[t] < st->dhat) { /* the barrier alone */
            s = imls_term_gradient(st, x, t, 0, w, &n);
            query_force(c, w, n, A, dim, fbar);
        } else if (!sticky) {
            memcpy(fbar, ftot, sizeof fbar);
        }
        if (st->psi[t] < st->dhat) book(out, A, B, fbar, dim, CT_FORCE_BARRIER, out->active_pairs);
        if (sticky) {
            const double fadh[3] = {ftot[0] - fbar[0], ftot[1] - fbar[1], ftot[2] - fbar[2]};
            book(out, A, B, fadh, dim, CT_FORCE_ADHESION_NORMAL, out->bonded_pairs);
        }
    }
    if (s != CT_OK) return s;
    for (int o = 0; o < st->nobs; ++o)
        for (int k = 0; k < st->nq; ++k) {
            double fb[3] = {0, 0, 0}, fa[3] = {0, 0, 0};
            if (!imls_halfspace_force(st, c, x, k, o, fb, fa)) continue;
            const int A = st->qbody[k], B = st->nbodies + o;
            const double d = fabs(fb[0]) + fabs(fb[1]) + fabs(fb[2]);
            if (d > 0.0) book(out, A, B, fb, dim, CT_FORCE_BARRIER, out->active_pairs);
            if (imls_law(st, A, B)) book(out, A, B, fa, dim, CT_FORCE_ADHESION_NORMAL, out->bonded_pairs);
        }
    int ns = out->nscalars < 6 ? out->nscalars : 6;
    out->nscalars = ns;
    const double vals[6] = {st->kappa, min_distance(st, c, x), (double)nact, (double)smax,
                            nact ? (double)nsum / (double)nact : 0.0, (double)st->n_list_builds};
    for (int k = 0; k < ns; ++k) {
        out->scalar_names[k] = st->scalar_names[k];
        out->scalars[k] = vals[k];
    }
    return CT_OK;
}

/* Per-vertex fields: the gap of a query vertex is the smallest ψ of its terms that are not OFF at x (ψ below
 * the reach, d̂ or d̂_a) and of its half-space distances below the reach (as min_distance); the samples of a
 * field get none from it (they carry its force through the stencil). The force is the core's −∇E. */
static ct_status imls_vertex_fields(void *p, const ct_step_ctx *c, const double *x, ct_vertex_fields *out)
{
    imls_state *st = p;
    ct_status s = imls_eval_value(st, c, x);
    if (s != CT_OK) return s;
    for (long t = 0; t < st->nterm; ++t)
        if (st->tstate[t] != CT_IMLS_TERM_OFF) ct_vertex_fields_gap_min(out, st->term[t].q, st->psi[t]);
    for (int o = 0; o < st->nobs; ++o)
        for (int k = 0; k < st->nq; ++k) {
            const double d = imls_halfspace_dist(st, c, x, k, o);
            if (d < st->reach) ct_vertex_fields_gap_min(out, st->qv[k], d);
        }
    out->filled |= CT_VF_GAP;
    return CT_OK;
}

const ct_model_type ct_model_imls = {
    .name = "imls",
    .summary = "smooth contact on robust IMLS surfaces (Du et al. 2023): barrier b(ψ) of every surface vertex in the "
               "other bodies' IMLS distance fields, optional Fang et al. normal adhesion a(ψ) (eps_c, sticky IMLS); "
               "frictionless, no self-contact",
    .family = CT_FAMILY_ENERGY,
    .guarantees = 0, /* not intersection-free by construction: edges may cross between samples */
    .state_size = sizeof(imls_state),
    .params = imls_params,
    .init = imls_init,
    .destroy = imls_destroy,
    .begin_step = imls_begin_step,
    .energy = imls_energy,
    .gradient = imls_gradient,
    .hessian = imls_hessian,
    .gradient_hessian = imls_gradient_hessian,
    .max_step = imls_max_step_op,
    .end_step = imls_end_step,
    .forces = imls_forces,
    .vertex_fields = imls_vertex_fields,
};
