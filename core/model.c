/* model.c — model registry lookup, parameter tables, force reports. */
#include "contactlab/ct_model.h"
#include "contactlab/ct_ipc_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ct_ipc_colset_choices[] = {"convergent", "ipc2020", NULL};
const char *const ct_ipc_eew_choices[] = {"dhat2", "area", NULL};

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

int ct_param_spec_count(const ct_param_spec *spec)
{
    int n = 0;
    if (spec)
        while (spec[n].name) ++n;
    return n;
}

ct_status ct_params_init_defaults(ct_params *p, const ct_param_spec *spec)
{
    memset(p, 0, sizeof *p);
    p->spec = spec;
    p->n = ct_param_spec_count(spec);
    if (p->n == 0) return CT_OK;
    p->value = calloc((size_t)p->n, sizeof *p->value);
    p->is_auto = calloc((size_t)p->n, sizeof *p->is_auto);
    if (!p->value || !p->is_auto) {
        ct_params_free(p);
        return CT_ENOMEM;
    }
    for (int i = 0; i < p->n; ++i) {
        p->value[i] = spec[i].def;
        p->is_auto[i] = (unsigned char)(spec[i].def_auto && (spec[i].flags & CT_PARAM_AUTO));
    }
    return CT_OK;
}

void ct_params_free(ct_params *p)
{
    if (!p) return;
    free(p->value);
    free(p->is_auto);
    p->value = NULL;
    p->is_auto = NULL;
    p->n = 0;
}

ct_status ct_params_copy(ct_params *dst, const ct_params *src)
{
    ct_status st = ct_params_init_defaults(dst, src->spec);
    if (st != CT_OK) return st;
    if (src->n) {
        memcpy(dst->value, src->value, (size_t)src->n * sizeof *dst->value);
        memcpy(dst->is_auto, src->is_auto, (size_t)src->n * sizeof *dst->is_auto);
    }
    return CT_OK;
}

int ct_params_index(const ct_params *p, const char *name)
{
    for (int i = 0; i < p->n; ++i)
        if (strcmp(p->spec[i].name, name) == 0) return i;
    return -1;
}

double ct_params_get(const ct_params *p, const char *name)
{
    int i = ct_params_index(p, name);
    return i < 0 ? NAN : p->value[i];
}

int ct_param_check(const ct_param_spec *s, double v, char *msg, size_t n)
{
    if (s->type == CT_PARAM_BOOL) {
        if (v != 0.0 && v != 1.0) {
            snprintf(msg, n, "must be true or false");
            return -1;
        }
        return 0;
    }
    if (s->type == CT_PARAM_CHOICE) {
        int nc = 0;
        while (s->choices && s->choices[nc]) ++nc;
        if (v < 0 || v >= nc || v != floor(v)) {
            snprintf(msg, n, "not one of the choices");
            return -1;
        }
        return 0;
    }
    if (!isfinite(v)) {
        snprintf(msg, n, "must be a finite number");
        return -1;
    }
    if (s->type == CT_PARAM_INT && v != floor(v)) {
        snprintf(msg, n, "must be an integer (got %g)", v);
        return -1;
    }
    int lo_bad = (s->flags & CT_PARAM_MIN_EXCL) ? !(v > s->min) : !(v >= s->min);
    int hi_bad = (s->flags & CT_PARAM_MAX_EXCL) ? !(v < s->max) : !(v <= s->max);
    if (lo_bad) {
        snprintf(msg, n, "must be %s %g (got %g)", (s->flags & CT_PARAM_MIN_EXCL) ? ">" : ">=", s->min, v);
        return -1;
    }
    if (hi_bad) {
        snprintf(msg, n, "must be %s %g (got %g)", (s->flags & CT_PARAM_MAX_EXCL) ? "<" : "<=", s->max, v);
        return -1;
    }
    return 0;
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
