/* model.c — model registry lookup, force categories, force reports. */
#include "contactlab/ct_model.h"

#include <math.h>
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
