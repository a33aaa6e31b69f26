/* ct_params.h — parameter tables: a model's (or any component's) named, typed parameters with
 * defaults, units, ranges and one line of documentation. The table drives scene validation,
 * `contactlab models` and the HDF5 attributes; a ct_params holds the values of one instance.
 * layer: base */
#ifndef CT_PARAMS_H
#define CT_PARAMS_H

#include <stddef.h>

#include "ct_status.h"

/* Every real number of a scene (and of a parameter table) is 0 or of magnitude in
 * [CT_NUMBER_TINY, CT_NUMBER_HUGE]: products and quotients of a few such inputs, as the solver
 * forms them (κ b(d), E·V, m v², 1/h²), stay far inside the double range, so no input can
 * overflow or underflow the arithmetic into inf or NaN. */
#define CT_NUMBER_HUGE 1e30
#define CT_NUMBER_TINY 1e-30

/* 0 if v is 0 or within those magnitudes; otherwise -1 and a message in msg. */
int ct_number_magnitude_check(double v, char *msg, size_t n);

typedef enum { CT_PARAM_REAL, CT_PARAM_INT, CT_PARAM_BOOL, CT_PARAM_CHOICE } ct_param_type;

enum {
    CT_PARAM_MIN_EXCL = 1u << 0, /* value must be > min (else >= min) */
    CT_PARAM_MAX_EXCL = 1u << 1, /* value must be < max (else <= max) */
    CT_PARAM_AUTO = 1u << 2,     /* the string "auto" is accepted (the model chooses) */
    CT_PARAM_PER_BODY = 1u << 3  /* a body may override it: "bodies[i].contact": {name: value} (the
                                    model states how the values of two bodies in contact combine) */
};

typedef struct ct_param_spec {
    const char *name;          /* JSON key inside "contact" */
    ct_param_type type;
    double def;                /* default (index into choices for CT_PARAM_CHOICE; 0/1 for bool) */
    const char *unit;          /* SI unit, "" for dimensionless */
    double min, max;           /* range for REAL/INT (use -INFINITY/INFINITY for none) */
    unsigned flags;
    const char *const *choices; /* NULL-terminated, for CT_PARAM_CHOICE */
    const char *doc;           /* one line */
    int def_auto;              /* default is "auto" (needs CT_PARAM_AUTO) */
} ct_param_spec;

/* Parameter values of one model instance, in the order of its spec table.
 *
 * Per-body values: when the scene has bodies (nbodies > 0), body_value and body_is_auto hold
 * nbodies × n entries, row-major (body b, parameter i at [b * n + i]): the body's override of a
 * CT_PARAM_PER_BODY parameter ("bodies[b].contact"), or else the scene-level value[i] /
 * is_auto[i] (so every parameter has a row entry, overridden or not). nbodies == 0 (and NULL
 * arrays) when no scene gave them, e.g. defaults: then every body has the scene-level values
 * (ct_params_body). ct_model_create sets the "auto" entries to NAN, as it does value[]. */
typedef struct ct_params {
    const ct_param_spec *spec;
    int n;
    double *value;           /* choice index for CHOICE, 0/1 for BOOL */
    unsigned char *is_auto;
    int nbodies;             /* rows of body_value (0: none) */
    double *body_value;      /* nbodies × n */
    unsigned char *body_is_auto; /* nbodies × n */
} ct_params;

int ct_param_spec_count(const ct_param_spec *spec); /* spec tables end with {NULL} */
ct_status ct_params_init_defaults(ct_params *p, const ct_param_spec *spec);
void ct_params_free(ct_params *p);
ct_status ct_params_copy(ct_params *dst, const ct_params *src);
int ct_params_index(const ct_params *p, const char *name); /* -1 if unknown */
double ct_params_get(const ct_params *p, const char *name); /* NAN if unknown */
/* Give p one row of per-body values per body (nbodies >= 0), each a copy of the scene-level
 * values; replaces existing rows. */
ct_status ct_params_set_bodies(ct_params *p, int nbodies);
/* Value of parameter i for body b: its row entry, or value[i] when p has no row for b. */
double ct_params_body(const ct_params *p, int b, int i);
/* Check a value against a spec; on failure writes a reason into msg (size n) and returns -1. */
int ct_param_check(const ct_param_spec *s, double v, char *msg, size_t n);

#endif
