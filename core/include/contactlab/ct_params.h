/* ct_params.h — parameter tables: a model's (or any component's) named, typed parameters with
 * defaults, units, ranges and one line of documentation. The table drives scene validation,
 * `contactlab models` and the HDF5 attributes; a ct_params holds the values of one instance.
 * layer: base */
#ifndef CT_PARAMS_H
#define CT_PARAMS_H

#include <stddef.h>

#include "ct_status.h"

typedef enum { CT_PARAM_REAL, CT_PARAM_INT, CT_PARAM_BOOL, CT_PARAM_CHOICE } ct_param_type;

enum {
    CT_PARAM_MIN_EXCL = 1u << 0, /* value must be > min (else >= min) */
    CT_PARAM_MAX_EXCL = 1u << 1, /* value must be < max (else <= max) */
    CT_PARAM_AUTO = 1u << 2      /* the string "auto" is accepted (the model chooses) */
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

/* Parameter values of one model instance, in the order of its spec table. */
typedef struct ct_params {
    const ct_param_spec *spec;
    int n;
    double *value;           /* choice index for CHOICE, 0/1 for BOOL */
    unsigned char *is_auto;
} ct_params;

int ct_param_spec_count(const ct_param_spec *spec); /* spec tables end with {NULL} */
ct_status ct_params_init_defaults(ct_params *p, const ct_param_spec *spec);
void ct_params_free(ct_params *p);
ct_status ct_params_copy(ct_params *dst, const ct_params *src);
int ct_params_index(const ct_params *p, const char *name); /* -1 if unknown */
double ct_params_get(const ct_params *p, const char *name); /* NAN if unknown */
/* Check a value against a spec; on failure writes a reason into msg (size n) and returns -1. */
int ct_param_check(const ct_param_spec *s, double v, char *msg, size_t n);

#endif
