/* model.c — model instances and the wrappers of their ops (defaults of NULL ops, timing),
 * family checks, registry lookup, force categories, force reports. */
#include "contactlab/ct_model.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const ct_model_type *ct_model_find(const char *name)
{
    if (!name) return NULL;
    for (int i = 0; ct_model_registry[i]; ++i)
        if (strcmp(ct_model_registry[i]->name, name) == 0) return ct_model_registry[i];
    return NULL;
}

static const char *const category_names[] = {
#define CT_X_NAME(k, n) n,
    CT_FORCE_CATEGORY_LIST(CT_X_NAME)
#undef CT_X_NAME
};

const char *ct_force_category_name(ct_force_category c)
{
    if ((int)c < 0 || c >= CT_FORCE_NCAT) return "unknown";
    return category_names[c];
}

int ct_force_category_from_name(const char *name, ct_force_category *c)
{
    for (int i = 0; i < CT_FORCE_NCAT; ++i)
        if (strcmp(name, category_names[i]) == 0) {
            *c = (ct_force_category)i;
            return 0;
        }
    return -1;
}

ct_status ct_force_report_init(ct_force_report *r, int np, int nscalars)
{
    memset(r, 0, sizeof *r);
    r->np = np;
    size_t npp = (size_t)np * (size_t)np;
    r->force = calloc(npp * CT_FORCE_NCAT + 1, sizeof *r->force);
    r->active_pairs = calloc(npp + 1, sizeof *r->active_pairs);
    r->bonded_pairs = calloc(npp + 1, sizeof *r->bonded_pairs);
    r->nscalars = nscalars;
    r->scalar_names = calloc((size_t)nscalars + 1, sizeof *r->scalar_names);
    r->scalars = calloc((size_t)nscalars + 1, sizeof *r->scalars);
    if (!r->force || !r->active_pairs || !r->bonded_pairs || !r->scalar_names || !r->scalars) {
        ct_force_report_free(r);
        return CT_ENOMEM;
    }
    return CT_OK;
}

void ct_force_report_free(ct_force_report *r)
{
    if (!r) return;
    free(r->force);
    free(r->active_pairs);
    free(r->bonded_pairs);
    free(r->scalar_names);
    free(r->scalars);
    memset(r, 0, sizeof *r);
}

void ct_force_report_zero(ct_force_report *r)
{
    size_t npp = (size_t)r->np * (size_t)r->np;
    memset(r->force, 0, npp * CT_FORCE_NCAT * sizeof *r->force);
    memset(r->active_pairs, 0, npp * sizeof *r->active_pairs);
    memset(r->bonded_pairs, 0, npp * sizeof *r->bonded_pairs);
    for (int i = 0; i < r->nscalars; ++i) r->scalars[i] = 0.0;
}

double *ct_force_report_at(ct_force_report *r, int a, int b, ct_force_category cat)
{
    return r->force[((size_t)a * (size_t)r->np + (size_t)b) * CT_FORCE_NCAT + (size_t)cat];
}

/* ---------- families ---------- */

const char *ct_model_family_name(ct_model_family f)
{
    return f == CT_FAMILY_CONSTRAINT ? "constraint" : f == CT_FAMILY_ENERGY ? "energy" : "unknown";
}

ct_status ct_model_type_check(const ct_model_type *t, ct_diag *diag)
{
    const char *n = t->name ? t->name : "(unnamed)";
    if (t->family == CT_FAMILY_ENERGY) {
        if (t->step)
            return ct_diag_add(diag, CT_EINPUT, "model %s: an energy-family model sets no step op", n);
        int ops = !!t->energy + !!t->gradient + !!t->hessian;
        if (ops != 0 && ops != 3)
            return ct_diag_add(diag, CT_EINPUT, "model %s: energy, gradient and hessian come together (%s is "
                               "missing)", n, !t->energy ? "energy" : !t->gradient ? "gradient" : "hessian");
        if (t->gradient_hessian && ops != 3)
            return ct_diag_add(diag, CT_EINPUT, "model %s: gradient_hessian needs energy, gradient and hessian", n);
        return CT_OK;
    }
    if (t->family == CT_FAMILY_CONSTRAINT) {
        if (!t->step) return ct_diag_add(diag, CT_EINPUT, "model %s: a constraint-family model needs a step op", n);
        const char *extra = t->energy ? "energy" : t->gradient ? "gradient" : t->hessian ? "hessian"
                            : t->gradient_hessian ? "gradient_hessian"
                            : t->max_step ? "max_step" : t->update_lagged ? "update_lagged"
                            : t->correct_trial ? "correct_trial" : NULL;
        if (extra)
            return ct_diag_add(diag, CT_EINPUT, "model %s: a constraint-family model sets no %s op (the core "
                               "never calls it)", n, extra);
        return CT_OK;
    }
    return ct_diag_add(diag, CT_EINPUT, "model %s: unknown family %d", n, (int)t->family);
}

/* ---------- instances ---------- */

ct_status ct_model_create(ct_model **out, const ct_model_type *t, const ct_params *p, const ct_step_ctx *c,
                          ct_diag *diag)
{
    *out = NULL;
    ct_status st = ct_model_type_check(t, diag);
    if (st != CT_OK) return st;
    ct_model *m = calloc(1, sizeof *m);
    if (!m) return CT_ENOMEM;
    m->type = t;
    st = p ? ct_params_copy(&m->params, p) : ct_params_init_defaults(&m->params, t->params);
    if (st == CT_OK && t->state_size && !(m->state = calloc(1, t->state_size))) st = CT_ENOMEM;
    /* "auto" entries are the model's to resolve: NAN unless its init does */
    for (int i = 0; st == CT_OK && i < m->params.n; ++i)
        if (m->params.is_auto[i]) m->params.value[i] = NAN;
    for (long i = 0; st == CT_OK && i < (long)m->params.nbodies * m->params.n; ++i)
        if (m->params.body_is_auto[i]) m->params.body_value[i] = NAN;
    if (st == CT_OK && t->init) {
        double t0 = omp_get_wtime();
        st = t->init(m->state, c, &m->params, diag);
        m->time.contact += omp_get_wtime() - t0;
        if (st != CT_OK && ct_diag_status(diag) == CT_OK) ct_diag_add(diag, st, "model %s: init failed", t->name);
    }

    if (st != CT_OK) {
        ct_model_destroy(m);
        return st;
    }
    m->ready = 1;
    *out = m;
    return CT_OK;
}

void ct_model_destroy(ct_model *m)
{
    if (!m) return;
    if (m->state && m->type->destroy) m->type->destroy(m->state);
    free(m->state);
    ct_params_free(&m->params);
    free(m);
}

const char *ct_model_name(const ct_model *m) { return m->type->name; }

int ct_model_has_lagged(const ct_model *m) { return m->type->update_lagged != NULL; }

/* Call op (if set) and add its wall time to the counter. */
#define CT_TIMED(m, field, call)                    \
    do {                                            \
        double t0_ = omp_get_wtime();               \
        st = (call);                                \
        (m)->time.field += omp_get_wtime() - t0_;   \
    } while (0)

ct_status ct_model_begin_step(ct_model *m, const ct_step_ctx *c)
{
    ct_status st = CT_OK;
    if (m->type->begin_step) CT_TIMED(m, contact, m->type->begin_step(m->state, c));
    return st;
}

ct_status ct_model_energy(ct_model *m, const ct_step_ctx *c, const double *x, double *E)
{
    ct_status st = CT_OK;
    *E = 0.0;
    if (m->type->energy) CT_TIMED(m, contact, m->type->energy(m->state, c, x, E));
    return st;
}

ct_status ct_model_gradient(ct_model *m, const ct_step_ctx *c, const double *x, double *g)
{
    ct_status st = CT_OK;
    if (m->type->gradient) CT_TIMED(m, contact, m->type->gradient(m->state, c, x, g));
    return st;
}

ct_status ct_model_hessian(ct_model *m, const ct_step_ctx *c, const double *x, ct_triplets *H)
{
    ct_status st = CT_OK;
    if (m->type->hessian) CT_TIMED(m, contact, m->type->hessian(m->state, c, x, H));
    return st;
}

ct_status ct_model_gradient_hessian(ct_model *m, const ct_step_ctx *c, const double *x, double *g, ct_triplets *H)
{
    if (!m->type->gradient_hessian) {
        ct_status st = ct_model_gradient(m, c, x, g);
        return st == CT_OK ? ct_model_hessian(m, c, x, H) : st;
    }
    ct_status st = CT_OK;
    CT_TIMED(m, contact, m->type->gradient_hessian(m->state, c, x, g, H));
    return st;
}

ct_status ct_model_max_step(ct_model *m, const ct_step_ctx *c, const double *x, const double *dx, double *alpha)
{
    ct_status st = CT_OK;
    *alpha = 1.0;
    if (m->type->max_step) CT_TIMED(m, ccd, m->type->max_step(m->state, c, x, dx, alpha));
    return st;
}

ct_status ct_model_update_lagged(ct_model *m, const ct_step_ctx *c, const double *x, double *delta)
{
    ct_status st = CT_OK;
    *delta = 0.0;
    if (m->type->update_lagged) CT_TIMED(m, contact, m->type->update_lagged(m->state, c, x, delta));
    return st;
}

ct_status ct_model_correct_trial(ct_model *m, const ct_step_ctx *c, const double *x, const double *dx, double alpha,
                                 double *x_trial, int *changed)
{
    ct_status st = CT_OK;
    *changed = 0;
    if (m->type->correct_trial) CT_TIMED(m, contact, m->type->correct_trial(m->state, c, x, dx, alpha, x_trial, changed));
    return st;
}

ct_status ct_model_step(ct_model *m, const ct_step_ctx *c, const ct_linear_system *sys, double *r)
{
    ct_status st = CT_OK;
    if (!m->type->step) return CT_ENOTSUP;
    CT_TIMED(m, step, m->type->step(m->state, c, sys, r));
    return st;
}

ct_status ct_model_end_step(ct_model *m, const ct_step_ctx *c, const double *x_next, ct_model_stats *stats)
{
    ct_status st = CT_OK;
    if (m->type->end_step) st = m->type->end_step(m->state, c, x_next, stats); /* timed by its stats */
    return st;
}

ct_status ct_model_forces(ct_model *m, const ct_step_ctx *c, const double *x, ct_force_report *out)
{
    if (!m->type->forces) {
        ct_force_report_zero(out);
        out->nscalars = 0;
        return CT_OK;
    }
    ct_status st = CT_OK;
    CT_TIMED(m, output, m->type->forces(m->state, c, x, out));
    return st;
}

/* ---------- per-vertex contact fields ---------- */

ct_status ct_vertex_fields_init(ct_vertex_fields *f, int nx)
{
    memset(f, 0, sizeof *f);
    f->nx = nx;
    const size_t n = (size_t)(nx > 0 ? nx : 0) + 1;
    f->force = malloc(n * sizeof *f->force);
    f->gap = malloc(n * sizeof *f->gap);
    f->beta = malloc(n * sizeof *f->beta);
    f->work = malloc(3 * n * sizeof *f->work);
    if (!f->force || !f->gap || !f->beta || !f->work) {
        ct_vertex_fields_free(f);
        return CT_ENOMEM;
    }
    ct_vertex_fields_reset(f);
    return CT_OK;
}

void ct_vertex_fields_free(ct_vertex_fields *f)
{
    if (!f) return;
    free(f->force);
    free(f->gap);
    free(f->beta);
    free(f->work);
    memset(f, 0, sizeof *f);
}

void ct_vertex_fields_reset(ct_vertex_fields *f)
{
    f->filled = 0;
    for (int v = 0; v < f->nx; ++v) {
        f->force[v][0] = f->force[v][1] = f->force[v][2] = 0.0;
        f->gap[v] = NAN;
        f->beta[v] = 0.0;
    }
}

void ct_vertex_fields_gap_min(ct_vertex_fields *f, int v, double d)
{
    if (isnan(f->gap[v]) || d < f->gap[v]) f->gap[v] = d;
}

ct_status ct_model_vertex_fields(ct_model *m, const ct_step_ctx *c, const double *x, ct_vertex_fields *out)
{
    if (out->nx != c->nx) return CT_EINPUT;
    ct_vertex_fields_reset(out);
    ct_status st = CT_OK;
    if (m->type->vertex_fields) CT_TIMED(m, output, m->type->vertex_fields(m->state, c, x, out));
    if (st != CT_OK) return st;
    /* an energy model's force: −∇E_contact at x, from its own gradient op */
    if (!(out->filled & CT_VF_FORCE) && m->type->family == CT_FAMILY_ENERGY && m->type->gradient) {
        const int dim = c->dim;
        memset(out->work, 0, (size_t)c->nx * (size_t)dim * sizeof *out->work);
        CT_TIMED(m, output, m->type->gradient(m->state, c, x, out->work));
        if (st != CT_OK) return st;
        for (int v = 0; v < c->nx; ++v) /* (+ 0.0: no −0 where there is no contact) */
            for (int k = 0; k < dim; ++k) out->force[v][k] = -out->work[(size_t)v * dim + k] + 0.0;
        out->filled |= CT_VF_FORCE;
    }
    return CT_OK;
}
