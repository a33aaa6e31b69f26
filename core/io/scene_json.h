/* scene_json.h — internal to the scene parser: strict reading of a jansson tree.
 *
 * A reader (sj) tracks the JSON pointer of the object being read and reports every
 * problem as "FILE: /json/pointer: message" into a ct_diag, counting errors instead of
 * stopping, so one pass reports all mistakes. Readers of optional keys write the default
 * back into the tree, so that after a successful pass the tree is the resolved scene.
 */
#ifndef CT_SCENE_JSON_H
#define CT_SCENE_JSON_H

#include <jansson.h>
#include <math.h>
#include <stddef.h>

#include "contactlab/ct_model.h"
#include "contactlab/ct_status.h"
#include "io/scene_schema.h"

#define SJ_MAX_DEPTH 32

typedef struct sj {
    const char *file;            /* for messages */
    ct_diag *diag;
    int nerr;                    /* input errors reported so far */
    int oom;                     /* an allocation failed */
    char path[1024];             /* current JSON pointer ("" = root) */
    size_t mark[SJ_MAX_DEPTH];   /* path lengths to restore on ct_sj_pop */
    int depth;
    int dim;                     /* the scene's dim once read (0: not known): keys marked SK_3D are
                                    unknown keys in 2D */
} sj;

enum { SJ_OPTIONAL = 0, SJ_REQUIRED = 1 };
enum { SJ_LO_EXCL = 1u, SJ_HI_EXCL = 2u };

/* Allowed range of a number: lo <= v <= hi, with strict bounds per `excl`. */
typedef struct sj_range {
    double lo, hi;
    unsigned excl;
} sj_range;

#define SJ_ANY ((sj_range){-HUGE_VAL, HUGE_VAL, 0u})
#define SJ_GT(x) ((sj_range){(x), HUGE_VAL, SJ_LO_EXCL})
#define SJ_GE(x) ((sj_range){(x), HUGE_VAL, 0u})

void ct_sj_init(sj *c, const char *file, ct_diag *diag);

/* ---- the path ---- */
void ct_sj_push(sj *c, const char *key);
void ct_sj_push_index(sj *c, size_t i);
void ct_sj_pop(sj *c);
const char *ct_sj_path(const sj *c); /* "/" for the root */
/* Report an input error at the current path, or at its child `key` when key != NULL. */
void ct_sj_error(sj *c, const char *key, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Append `key` to buf as one JSON-pointer token ("~" -> "~0", "/" -> "~1", control bytes
 * as \xNN so that a message stays on one line). */
void ct_sj_pointer_append(char *buf, size_t size, const char *key);
const char *ct_sj_type_name(const json_t *v);
/* strdup that records an allocation failure in c */
char *ct_sj_strdup(sj *c, const char *s);

/* ---- objects and arrays ---- */
/* Report every key of obj that is not a field of the table o (scene_schema.h); returns the count. */
int ct_sj_check_keys(sj *c, json_t *obj, const ct_sk_object *o);
/* Child object obj[key]: checked to be an object with only the keys of o (NULL: any keys).
 * A missing optional object is created empty (so its defaults get filled). On success
 * the path is pushed (leave with ct_sj_pop); NULL if missing (required) or not an object. */
json_t *ct_sj_enter(sj *c, json_t *obj, const char *key, int required, const ct_sk_object *o);
/* Child array obj[key] with at least min_len elements; a missing optional array is
 * created empty. Pushes the path on success. */
json_t *ct_sj_enter_array(sj *c, json_t *obj, const char *key, int required, size_t min_len);
/* Element i of an array, which must be an object with only the keys of o (NULL: any keys).
 * Pushes the index on success. */
json_t *ct_sj_enter_elem(sj *c, json_t *arr, size_t i, const ct_sk_object *o);

/* ---- scalar values ----
 * Each reads obj[key]. Missing: required -> error "missing required key"; optional ->
 * *out = default and the default is written into obj. Returns 1 when *out holds a
 * valid value (read or default), 0 after an error. */
int ct_sj_real(sj *c, json_t *obj, const char *key, int required, double def, sj_range r, double *out);
int ct_sj_int(sj *c, json_t *obj, const char *key, int required, int def, int lo, int hi, int *out);
int ct_sj_bool(sj *c, json_t *obj, const char *key, int required, int def, int *out);
/* A string (borrowed from the tree); def may be NULL (then nothing is filled in). */
int ct_sj_string(sj *c, json_t *obj, const char *key, int required, const char *def, const char **out);
/* A string among the NULL-terminated `names`; *out = its index; def is an index. */
int ct_sj_enum(sj *c, json_t *obj, const char *key, int required, const char *const *names, int def,
            int *out);
/* A vector of n numbers in range r (n == 0: 2 or 3, the dimension being unknown);
 * def (n values, NULL = zeros) when optional and missing. */
int ct_sj_vec(sj *c, json_t *obj, const char *key, int required, int n, const double *def, sj_range r,
           double *out);
/* A vector of n integers >= lo. */
int ct_sj_ivec(sj *c, json_t *obj, const char *key, int required, int n, int lo, int *out);

/* The same checks on a value already in hand; errors at the current path (+ key). */
int ct_sj_value_real(sj *c, const json_t *v, const char *key, sj_range r, double *out);
int ct_sj_value_int(sj *c, const json_t *v, const char *key, int lo, int hi, int *out);
int ct_sj_value_vec(sj *c, const json_t *v, const char *key, int n, sj_range r, double *out);

/* ---- model parameters ----
 * Read the parameters of a spec table from obj (keys in `spec`, plus `extra_keys` which
 * the caller reads itself) into out (defaults first, then the given values). REAL/INT:
 * numbers checked by ct_param_check; BOOL: true/false; CHOICE: a string among choices;
 * "auto" where CT_PARAM_AUTO is set. Missing parameters are filled in with defaults. */
void ct_sj_read_params(sj *c, json_t *obj, const ct_param_spec *spec, const char *const *extra_keys,
                    ct_params *out);

/* Read the per-body overrides of one body, obj = "bodies[b].contact" (entered: the current path
 * is its pointer), into row b of p (rows made by ct_params_set_bodies): every key must be a
 * CT_PARAM_PER_BODY parameter of the spec (an unknown key, or a parameter that is not per-body,
 * is an error naming the model `model`); each value is checked as the scene-level one
 * (ct_sj_read_params). Nothing is filled in: the tree keeps the body's keys as given. */
void ct_sj_read_body_params(sj *c, json_t *obj, const char *model, ct_params *p, int b);

/* ---- output ----
 * Pretty-print a tree (sorted keys, 2-space indent) with the fewest significant digits
 * that still reproduce every real exactly (so 0.3 prints as 0.3, not 0.29999999999999999). */
char *ct_sj_dump(const json_t *root);

/* ---- overrides ----
 * Apply one "key.path=value" to root. Errors are reported as
 * "--set OVERRIDE: /json/pointer: message"; returns 0 on success, -1 on error. */
int ct_sj_apply_override(json_t *root, const char *ov, ct_diag *diag);

#endif
