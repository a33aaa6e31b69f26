/* params.c — parameter tables: defaults, copies, lookup, range checks (ct_params.h). */
#include "contactlab/ct_params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    free(p->body_value);
    free(p->body_is_auto);
    p->value = NULL;
    p->is_auto = NULL;
    p->body_value = NULL;
    p->body_is_auto = NULL;
    p->n = 0;
    p->nbodies = 0;
}

ct_status ct_params_copy(ct_params *dst, const ct_params *src)
{
    ct_status st = ct_params_init_defaults(dst, src->spec);
    if (st != CT_OK) return st;
    if (src->n) {
        memcpy(dst->value, src->value, (size_t)src->n * sizeof *dst->value);
        memcpy(dst->is_auto, src->is_auto, (size_t)src->n * sizeof *dst->is_auto);
    }
    if (src->nbodies > 0 && src->n > 0) {
        if ((st = ct_params_set_bodies(dst, src->nbodies)) != CT_OK) {
            ct_params_free(dst);
            return st;
        }
        const size_t ne = (size_t)src->nbodies * (size_t)src->n;
        memcpy(dst->body_value, src->body_value, ne * sizeof *dst->body_value);
        memcpy(dst->body_is_auto, src->body_is_auto, ne * sizeof *dst->body_is_auto);
    }
    return CT_OK;
}

ct_status ct_params_set_bodies(ct_params *p, int nbodies)
{
    free(p->body_value);
    free(p->body_is_auto);
    p->body_value = NULL;
    p->body_is_auto = NULL;
    p->nbodies = 0;
    if (nbodies <= 0 || p->n == 0) return CT_OK;
    const size_t ne = (size_t)nbodies * (size_t)p->n;
    p->body_value = malloc(ne * sizeof *p->body_value);
    p->body_is_auto = malloc(ne * sizeof *p->body_is_auto);
    if (!p->body_value || !p->body_is_auto) {
        free(p->body_value);
        free(p->body_is_auto);
        p->body_value = NULL;
        p->body_is_auto = NULL;
        return CT_ENOMEM;
    }
    for (int b = 0; b < nbodies; ++b) {
        memcpy(p->body_value + (size_t)b * p->n, p->value, (size_t)p->n * sizeof *p->value);
        memcpy(p->body_is_auto + (size_t)b * p->n, p->is_auto, (size_t)p->n * sizeof *p->is_auto);
    }
    p->nbodies = nbodies;
    return CT_OK;
}

double ct_params_body(const ct_params *p, int b, int i)
{
    if (i < 0 || i >= p->n) return NAN;
    if (b >= 0 && b < p->nbodies && p->body_value) return p->body_value[(size_t)b * p->n + i];
    return p->value[i];
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

int ct_number_magnitude_check(double v, char *msg, size_t n)
{
    const double a = fabs(v);
    if (v == 0.0 || (a >= CT_NUMBER_TINY && a <= CT_NUMBER_HUGE)) return 0;
    snprintf(msg, n, "must be 0 or of magnitude between %g and %g (got %g): a number %s cannot be computed with",
             CT_NUMBER_TINY, CT_NUMBER_HUGE, v, a > CT_NUMBER_HUGE ? "this large" : "this small");
    return -1;
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
    if (s->type == CT_PARAM_REAL && ct_number_magnitude_check(v, msg, n) != 0) return -1;
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
