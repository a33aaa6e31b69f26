/* scene_json.c — strict reading helpers for the scene parser (see scene_json.h). */
#include "io/scene_json.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ct_sj_init(sj *c, const char *file, ct_diag *diag)
{
    memset(c, 0, sizeof *c);
    c->file = file;
    c->diag = diag;
}

/* ---------------- the path ---------------- */

void ct_sj_pointer_append(char *buf, size_t size, const char *key)
{
    size_t n = strlen(buf);
    if (n + 1 >= size) return;
    buf[n++] = '/';
    for (const unsigned char *p = (const unsigned char *)key; *p && n + 5 < size; ++p) {
        if (*p == '~' || *p == '/') {
            buf[n++] = '~';
            buf[n++] = *p == '~' ? '0' : '1';
        } else if (*p < 0x20 || *p == 0x7f) {
            n += (size_t)snprintf(buf + n, size - n, "\\x%02x", *p);
        } else {
            buf[n++] = (char)*p;
        }
    }
    buf[n] = '\0';
}

void ct_sj_push(sj *c, const char *key)
{
    if (c->depth < SJ_MAX_DEPTH) c->mark[c->depth] = strlen(c->path);
    c->depth++;
    ct_sj_pointer_append(c->path, sizeof c->path, key);
}

void ct_sj_push_index(sj *c, size_t i)
{
    char tok[32];
    snprintf(tok, sizeof tok, "%zu", i);
    ct_sj_push(c, tok);
}

void ct_sj_pop(sj *c)
{
    if (c->depth <= 0) return;
    c->depth--;
    if (c->depth < SJ_MAX_DEPTH) c->path[c->mark[c->depth]] = '\0';
}

const char *ct_sj_path(const sj *c) { return c->path[0] ? c->path : "/"; }

void ct_sj_error(sj *c, const char *key, const char *fmt, ...)
{
    char where[1200];
    snprintf(where, sizeof where, "%s", c->path);
    if (key) ct_sj_pointer_append(where, sizeof where, key);
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->nerr++;
    ct_diag_add(c->diag, CT_EINPUT, "%s: %s: %s", c->file, where[0] ? where : "/", msg);
}

const char *ct_sj_type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "object";
    case JSON_ARRAY: return "array";
    case JSON_STRING: return "string";
    case JSON_INTEGER:
    case JSON_REAL: return "number";
    case JSON_TRUE:
    case JSON_FALSE: return "boolean";
    case JSON_NULL: return "null";
    }
    return "unknown";
}

char *ct_sj_strdup(sj *c, const char *s)
{
    if (!s) return NULL;
    char *d = strdup(s);
    if (!d) c->oom = 1;
    return d;
}

/* Set obj[key] = v (steals v); records an allocation failure. */
static void fill(sj *c, json_t *obj, const char *key, json_t *v)
{
    if (!v || json_object_set_new(obj, key, v) != 0) c->oom = 1;
}

/* "a, b, c" from a NULL-terminated list. */
static void join_names(char *buf, size_t size, const char *const *names)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; names && names[i] && n < size; ++i)
        n += (size_t)snprintf(buf + n, size - n, "%s%s", i ? ", " : "", names[i]);
}

static int in_list(const char *key, const char *const *names)
{
    for (int i = 0; names && names[i]; ++i)
        if (strcmp(key, names[i]) == 0) return 1;
    return 0;
}

/* ---------------- objects and arrays ---------------- */

/* Does the table o have the key in a scene of dimension c->dim? */
static int has_field(const sj *c, const ct_sk_object *o, const char *key)
{
    const ct_sk_field *f = ct_sk_find(o, key);
    return f && !(c->dim == 2 && (f->flags & SK_3D));
}

int ct_sj_check_keys(sj *c, json_t *obj, const ct_sk_object *o)
{
    int bad = 0;
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (has_field(c, o, key)) continue;
        char list[1024];
        size_t n = 0;
        list[0] = '\0';
        for (const ct_sk_field *f = o->fields; f->key && n < sizeof list; ++f)
            if (has_field(c, o, f->key)) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", f->key);
        ct_sj_error(c, key, "unknown key (expected one of: %s)", list);
        bad++;
    }
    return bad;
}

/* obj[key], or NULL after reporting a missing required key. */
static json_t *get(sj *c, json_t *obj, const char *key, int required)
{
    json_t *v = json_object_get(obj, key);
    if (!v && required) ct_sj_error(c, NULL, "missing required key \"%s\"", key);
    return v;
}

json_t *ct_sj_enter(sj *c, json_t *obj, const char *key, int required, const ct_sk_object *o)
{
    json_t *v = get(c, obj, key, required);
    if (!v) {
        if (required) return NULL;
        v = json_object();
        fill(c, obj, key, v);
        if (c->oom) return NULL;
    }
    if (!json_is_object(v)) {
        ct_sj_error(c, key, "expected an object (got %s)", ct_sj_type_name(v));
        return NULL;
    }
    ct_sj_push(c, key);
    if (o) ct_sj_check_keys(c, v, o);
    return v;
}

json_t *ct_sj_enter_array(sj *c, json_t *obj, const char *key, int required, size_t min_len)
{
    json_t *v = get(c, obj, key, required);
    if (!v) {
        if (required) return NULL;
        v = json_array();
        fill(c, obj, key, v);
        if (c->oom) return NULL;
    }
    if (!json_is_array(v)) {
        ct_sj_error(c, key, "expected an array (got %s)", ct_sj_type_name(v));
        return NULL;
    }
    if (json_array_size(v) < min_len) {
        ct_sj_error(c, key, "expected at least %zu element%s (got %zu)", min_len, min_len == 1 ? "" : "s",
                 json_array_size(v));
        return NULL;
    }
    ct_sj_push(c, key);
    return v;
}

json_t *ct_sj_enter_elem(sj *c, json_t *arr, size_t i, const ct_sk_object *o)
{
    json_t *v = json_array_get(arr, i);
    ct_sj_push_index(c, i);
    if (!json_is_object(v)) {
        ct_sj_error(c, NULL, "expected an object (got %s)", v ? ct_sj_type_name(v) : "nothing");
        ct_sj_pop(c);
        return NULL;
    }
    if (o) ct_sj_check_keys(c, v, o);
    return v;
}

/* ---------------- values ---------------- */

static int range_ok(sj *c, const char *key, double v, sj_range r)
{
    int lo_bad = (r.excl & SJ_LO_EXCL) ? !(v > r.lo) : !(v >= r.lo);
    int hi_bad = (r.excl & SJ_HI_EXCL) ? !(v < r.hi) : !(v <= r.hi);
    if (lo_bad) {
        ct_sj_error(c, key, "must be %s %g (got %g)", (r.excl & SJ_LO_EXCL) ? ">" : ">=", r.lo, v);
        return 0;
    }
    if (hi_bad) {
        ct_sj_error(c, key, "must be %s %g (got %g)", (r.excl & SJ_HI_EXCL) ? "<" : "<=", r.hi, v);
        return 0;
    }
    return 1;
}

int ct_sj_value_real(sj *c, const json_t *v, const char *key, sj_range r, double *out)
{
    if (!json_is_number(v)) {
        ct_sj_error(c, key, "expected a number (got %s)", ct_sj_type_name(v));
        return 0;
    }
    double x = json_number_value(v);
    if (!isfinite(x)) {
        ct_sj_error(c, key, "must be a finite number");
        return 0;
    }
    char msg[192];
    if (ct_number_magnitude_check(x, msg, sizeof msg) != 0) {
        ct_sj_error(c, key, "%s", msg);
        return 0;
    }
    if (!range_ok(c, key, x, r)) return 0;
    *out = x;
    return 1;
}

int ct_sj_value_int(sj *c, const json_t *v, const char *key, int lo, int hi, int *out)
{
    long long i;
    if (json_is_integer(v)) {
        i = json_integer_value(v);
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        if (!isfinite(x) || x != floor(x) || fabs(x) > 1e15) {
            ct_sj_error(c, key, "must be an integer (got %g)", x);
            return 0;
        }
        i = (long long)x;
    } else {
        ct_sj_error(c, key, "expected an integer (got %s)", ct_sj_type_name(v));
        return 0;
    }
    if (i < lo) {
        ct_sj_error(c, key, "must be >= %d (got %lld)", lo, i);
        return 0;
    }
    if (i > hi) {
        ct_sj_error(c, key, "must be <= %d (got %lld)", hi, i);
        return 0;
    }
    *out = (int)i;
    return 1;
}

int ct_sj_value_vec(sj *c, const json_t *v, const char *key, int n, sj_range r, double *out)
{
    if (!json_is_array(v)) {
        ct_sj_error(c, key, "expected an array of numbers (got %s)", ct_sj_type_name(v));
        return 0;
    }
    size_t len = json_array_size(v);
    if (n > 0 ? len != (size_t)n : (len < 2 || len > 3)) {
        if (n > 0)
            ct_sj_error(c, key, "expected %d numbers (got %zu)", n, len);
        else
            ct_sj_error(c, key, "expected 2 or 3 numbers (got %zu)", len);
        return 0;
    }
    int ok = 1;
    if (key) ct_sj_push(c, key);
    for (size_t i = 0; i < len; ++i) {
        char tok[32];
        snprintf(tok, sizeof tok, "%zu", i);
        double x = 0.0;
        ok &= ct_sj_value_real(c, json_array_get(v, i), tok, r, &x);
        out[i] = x;
    }
    if (key) ct_sj_pop(c);
    return ok;
}

int ct_sj_real(sj *c, json_t *obj, const char *key, int required, double def, sj_range r, double *out)
{
    json_t *v = get(c, obj, key, required);
    if (!v) {
        if (required) return 0;
        *out = def;
        fill(c, obj, key, json_real(def));
        return 1;
    }
    return ct_sj_value_real(c, v, key, r, out);
}

int ct_sj_int(sj *c, json_t *obj, const char *key, int required, int def, int lo, int hi, int *out)
{
    json_t *v = get(c, obj, key, required);
    if (!v) {
        if (required) return 0;
        *out = def;
        fill(c, obj, key, json_integer(def));
        return 1;
    }
    return ct_sj_value_int(c, v, key, lo, hi, out);
}

int ct_sj_bool(sj *c, json_t *obj, const char *key, int required, int def, int *out)
{
    json_t *v = get(c, obj, key, required);
    if (!v) {
        if (required) return 0;
        *out = def != 0;
        fill(c, obj, key, json_boolean(def));
        return 1;
    }
    if (!json_is_boolean(v)) {
        ct_sj_error(c, key, "expected true or false (got %s)", ct_sj_type_name(v));
        return 0;
    }
    *out = json_is_true(v);
    return 1;
}

int ct_sj_string(sj *c, json_t *obj, const char *key, int required, const char *def, const char **out)
{
    json_t *v = get(c, obj, key, required);
    if (!v) {
        if (required) return 0;
        *out = def;
        if (def) fill(c, obj, key, json_string(def));
        return 1;
    }
    if (!json_is_string(v)) {
        ct_sj_error(c, key, "expected a string (got %s)", ct_sj_type_name(v));
        return 0;
    }
    *out = json_string_value(v);
    return 1;
}

int ct_sj_enum(sj *c, json_t *obj, const char *key, int required, const char *const *names, int def,
            int *out)
{
    const char *s = NULL;
    if (!ct_sj_string(c, obj, key, required, required ? NULL : names[def], &s)) return 0;
    for (int i = 0; names[i]; ++i)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 1;
        }
    char list[512];
    join_names(list, sizeof list, names);
    ct_sj_error(c, key, "must be one of: %s (got \"%s\")", list, s);
    return 0;
}

int ct_sj_vec(sj *c, json_t *obj, const char *key, int required, int n, const double *def, sj_range r,
           double *out)
{
    json_t *v = get(c, obj, key, required);
    if (!v) {
        if (required) return 0;
        json_t *a = json_array();
        for (int i = 0; i < n; ++i) {
            out[i] = def ? def[i] : 0.0;
            if (a && json_array_append_new(a, json_real(out[i])) != 0) c->oom = 1;
        }
        fill(c, obj, key, a);
        return 1;
    }
    return ct_sj_value_vec(c, v, key, n, r, out);
}

int ct_sj_ivec(sj *c, json_t *obj, const char *key, int required, int n, int lo, int *out)
{
    json_t *v = get(c, obj, key, required);
    if (!v) return !required; /* no optional integer vectors with defaults so far */
    if (!json_is_array(v)) {
        ct_sj_error(c, key, "expected an array of integers (got %s)", ct_sj_type_name(v));
        return 0;
    }
    if (json_array_size(v) != (size_t)n) {
        ct_sj_error(c, key, "expected %d integers (got %zu)", n, json_array_size(v));
        return 0;
    }
    int ok = 1;
    ct_sj_push(c, key);
    for (int i = 0; i < n; ++i) {
        char tok[32];
        snprintf(tok, sizeof tok, "%d", i);
        ok &= ct_sj_value_int(c, json_array_get(v, (size_t)i), tok, lo, INT_MAX, &out[i]);
    }
    ct_sj_pop(c);
    return ok;
}

/* ---------------- model parameters ---------------- */

/* Value of one parameter given as JSON; returns 1 and sets *val / *is_auto on success. */
static int read_param(sj *c, const ct_param_spec *s, const json_t *v, double *val, int *is_auto)
{
    *is_auto = 0;
    if ((s->flags & CT_PARAM_AUTO) && json_is_string(v) && strcmp(json_string_value(v), "auto") == 0) {
        *is_auto = 1;
        return 1;
    }
    const char *or_auto = (s->flags & CT_PARAM_AUTO) ? " or \"auto\"" : "";
    switch (s->type) {
    case CT_PARAM_REAL:
    case CT_PARAM_INT: {
        if (!json_is_number(v)) {
            ct_sj_error(c, s->name, "expected a number%s (got %s)", or_auto, ct_sj_type_name(v));
            return 0;
        }
        double x = json_number_value(v);
        char msg[256];
        if (ct_param_check(s, x, msg, sizeof msg) != 0) {
            ct_sj_error(c, s->name, "%s", msg);
            return 0;
        }
        *val = x;
        return 1;
    }
    case CT_PARAM_BOOL:
        if (!json_is_boolean(v)) {
            ct_sj_error(c, s->name, "expected true or false%s (got %s)", or_auto, ct_sj_type_name(v));
            return 0;
        }
        *val = json_is_true(v) ? 1.0 : 0.0;
        return 1;
    case CT_PARAM_CHOICE: {
        char list[512];
        join_names(list, sizeof list, s->choices);
        if (json_is_string(v)) {
            for (int i = 0; s->choices && s->choices[i]; ++i)
                if (strcmp(json_string_value(v), s->choices[i]) == 0) {
                    *val = i;
                    return 1;
                }
            ct_sj_error(c, s->name, "must be one of: %s%s (got \"%s\")", list, or_auto, json_string_value(v));
        } else {
            ct_sj_error(c, s->name, "expected a string, one of: %s%s (got %s)", list, or_auto, ct_sj_type_name(v));
        }
        return 0;
    }
    }
    return 0;
}

/* The default of a parameter as JSON. */
static json_t *param_default_json(const ct_param_spec *s)
{
    if (s->def_auto && (s->flags & CT_PARAM_AUTO)) return json_string("auto");
    switch (s->type) {
    case CT_PARAM_REAL: return json_real(s->def);
    case CT_PARAM_INT: return json_integer((json_int_t)s->def);
    case CT_PARAM_BOOL: return json_boolean(s->def != 0.0);
    case CT_PARAM_CHOICE: {
        int nc = 0;
        while (s->choices && s->choices[nc]) ++nc;
        int i = (int)s->def;
        return json_string(i >= 0 && i < nc ? s->choices[i] : "");
    }
    }
    return json_null();
}

void ct_sj_read_params(sj *c, json_t *obj, const ct_param_spec *spec, const char *const *extra_keys,
                    ct_params *out)
{
    if (ct_params_init_defaults(out, spec) != CT_OK) {
        c->oom = 1;
        return;
    }
    /* unknown keys: list the caller's keys and the model's parameter names */
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        if (in_list(key, extra_keys) || ct_params_index(out, key) >= 0) continue;
        char list[1024];
        size_t n = 0;
        list[0] = '\0';
        for (int i = 0; extra_keys && extra_keys[i] && n < sizeof list; ++i)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", extra_keys[i]);
        for (int i = 0; i < out->n && n < sizeof list; ++i)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", spec[i].name);
        ct_sj_error(c, key, "unknown key (expected one of: %s)", list);
    }
    for (int i = 0; i < out->n; ++i) {
        const ct_param_spec *s = &spec[i];
        json_t *pv = json_object_get(obj, s->name);
        if (!pv) {
            fill(c, obj, s->name, param_default_json(s));
            continue;
        }
        double val = 0.0;
        int is_auto = 0;
        if (read_param(c, s, pv, &val, &is_auto)) {
            if (!is_auto) out->value[i] = val;
            out->is_auto[i] = (unsigned char)is_auto;
        }
    }
}

/* The names of the CT_PARAM_PER_BODY parameters of spec, ", "-separated ("none" if it has none). */
static void per_body_names(char *buf, size_t size, const ct_param_spec *spec)
{
    size_t n = 0;
    buf[0] = '\0';
    for (int i = 0; spec && spec[i].name && n < size; ++i)
        if (spec[i].flags & CT_PARAM_PER_BODY)
            n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? ", " : "", spec[i].name);
    if (!buf[0]) snprintf(buf, size, "none");
}

void ct_sj_read_body_params(sj *c, json_t *obj, const char *model, ct_params *p, int b)
{
    if (b < 0 || b >= p->nbodies) return; /* no rows (an allocation failure is already recorded) */
    char list[512];
    per_body_names(list, sizeof list, p->spec);
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v) {
        const int i = ct_params_index(p, key);
        if (i < 0) {
            ct_sj_error(c, key, "unknown key: not a parameter of %s (its per-body parameters: %s)", model, list);
            continue;
        }
        const ct_param_spec *s = &p->spec[i];
        if (!(s->flags & CT_PARAM_PER_BODY)) {
            ct_sj_error(c, key, "not a per-body parameter of %s (its per-body parameters: %s)", model, list);
            continue;
        }
        double val = 0.0;
        int is_auto = 0;
        if (read_param(c, s, v, &val, &is_auto)) { /* the checks of the scene-level value */
            const size_t k = (size_t)b * (size_t)p->n + (size_t)i;
            if (!is_auto) p->body_value[k] = val;
            p->body_is_auto[k] = (unsigned char)is_auto;
        }
    }
}

/* ---------------- output ---------------- */

/* Largest number of significant digits any real in v needs to read back exactly. */
static int digits_needed(const json_t *v)
{
    int p = 1;
    if (json_is_real(v)) {
        double x = json_real_value(v);
        char buf[40];
        for (p = 1; p < 17; ++p) {
            snprintf(buf, sizeof buf, "%.*g", p, x);
            if (strtod(buf, NULL) == x) break;
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); ++i) {
            int q = digits_needed(json_array_get(v, i));
            if (q > p) p = q;
        }
    } else if (json_is_object(v)) {
        const char *key;
        json_t *child;
        json_object_foreach((json_t *)v, key, child) {
            int q = digits_needed(child);
            if (q > p) p = q;
        }
    }
    return p;
}

char *ct_sj_dump(const json_t *root)
{
    return json_dumps(root, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(digits_needed(root)));
}

/* ---------------- overrides ---------------- */

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; ++s)
        if (!isdigit((unsigned char)*s)) return 0;
    return 1;
}

int ct_sj_apply_override(json_t *root, const char *ov, ct_diag *diag)
{
    const char *eq = strchr(ov, '=');
    if (!eq || eq == ov) {
        ct_diag_add(diag, CT_EINPUT, "--set %s: expected key.path=value", ov);
        return -1;
    }
    size_t klen = (size_t)(eq - ov);
    char *keys = malloc(klen + 1);
    if (!keys) {
        ct_diag_add(diag, CT_ENOMEM, "--set %s: out of memory", ov);
        return -1;
    }
    memcpy(keys, ov, klen);
    keys[klen] = '\0';
    /* check for empty keys first, so that a failed override changes nothing */
    if (keys[0] == '.' || keys[klen - 1] == '.' || strstr(keys, "..")) {
        ct_diag_add(diag, CT_EINPUT, "--set %s: empty key in path", ov);
        free(keys);
        return -1;
    }

    /* the value: JSON if it parses, else a plain string */
    const char *text = eq + 1;
    json_error_t jerr;
    json_t *value = json_loads(text, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!value) value = json_string(text);
    if (!value) {
        ct_diag_add(diag, CT_EINPUT, "--set %s: value is not valid UTF-8", ov);
        free(keys);
        return -1;
    }

    char where[1024] = "";
    json_t *node = root;
    int rc = 0;
    char *tok = keys;
    for (;;) {
        char *dot = strchr(tok, '.');
        if (dot) *dot = '\0';
        int last = dot == NULL;
        char parent[1024];
        snprintf(parent, sizeof parent, "%s", where[0] ? where : "/");
        ct_sj_pointer_append(where, sizeof where, tok);
        if (json_is_object(node)) {
            json_t *child = json_object_get(node, tok);
            if (last) {
                rc = json_object_set(node, tok, value) == 0 ? 0 : -1;
                if (rc) ct_diag_add(diag, CT_ENOMEM, "--set %s: out of memory", ov);
                break;
            }
            if (!child) { /* create the missing object */
                child = json_object();
                if (!child || json_object_set_new(node, tok, child) != 0) {
                    ct_diag_add(diag, CT_ENOMEM, "--set %s: out of memory", ov);
                    rc = -1;
                    break;
                }
            }
            node = child;
        } else if (json_is_array(node)) {
            size_t idx = 0;
            int ok = all_digits(tok) && strlen(tok) < 10;
            if (ok) idx = (size_t)strtoul(tok, NULL, 10);
            if (!ok || idx >= json_array_size(node)) {
                ct_diag_add(diag, CT_EINPUT, "--set %s: %s: no such element", ov, where);
                rc = -1;
                break;
            }
            if (last) {
                json_array_set(node, idx, value);
                break;
            }
            node = json_array_get(node, idx);
        } else {
            ct_diag_add(diag, CT_EINPUT, "--set %s: %s: no such element (%s is a %s, not an object or array)",
                        ov, where, parent, ct_sj_type_name(node));
            rc = -1;
            break;
        }
        tok = dot + 1;
    }
    json_decref(value);
    free(keys);
    return rc;
}
