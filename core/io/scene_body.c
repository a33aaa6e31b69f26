/* scene_body.c — the body half of the scene schema (DESIGN §5): selectors, mesh specs,
 * scripted motion, loads, materials, bodies and obstacles. scene.c reads the rest
 * (time, solver, contact, probes, output) and owns the entry points. */
#include "io/scene_body.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "contactlab/ct_sim.h"

#define DEG2RAD (3.14159265358979323846 / 180.0)

/* ---------------- names ---------------- */


static const char *const *by_dim(int dim, const char *const *two, const char *const *three)
{
    return dim == 2 ? two : three;
}

static double norm3(const double *v) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/* A nonzero vector of n numbers at obj[key], normalised (n <= 3, rest zero). */
static int read_direction(sj *c, json_t *obj, const char *key, int required, int n, const double *def,
                          double out[3])
{
    double v[3] = {0, 0, 0};
    if (!ct_sj_vec(c, obj, key, required, n, def, SJ_ANY, v)) return 0;
    double len = norm3(v);
    if (!(len > 0.0)) {
        ct_sj_error(c, key, "must be a nonzero vector");
        return 0;
    }
    for (int i = 0; i < 3; ++i) out[i] = v[i] / len;
    return 1;
}

/* ---------------- selectors ---------------- */

static int find_body(const ct_scene *sc, const char *name)
{
    for (int b = 0; b < sc->nbodies; ++b)
        if (sc->bodies[b].name && strcmp(sc->bodies[b].name, name) == 0) return b;
    return -1;
}

/* The "body" of a probe selector: a body's name, or "all" (sel->body = -1). */
static int selector_probe_body(sj *c, json_t *v, const ct_scene *sc, ct_selector *sel)
{
    const char *name;
    if (!ct_sj_string(c, v, "body", SJ_REQUIRED, NULL, &name)) return 0;
    if (strcmp(name, "all") == 0) {
        sel->body = -1;
    } else if ((sel->body = find_body(sc, name)) < 0) {
        ct_sj_error(c, "body", "no body named \"%s\"", name);
        return 0;
    }
    return 1;
}

/* At most one of side, box, indices (exactly one in a body's selector, none with a probe's
 * "body": "all"); "tol" only with "side". */
static int selector_check_kind(sj *c, json_t *v, int probe, const ct_selector *sel)
{
    int ok = 1;
    json_t *side = json_object_get(v, "side");
    int nkinds = (side != NULL) + (json_object_get(v, "box") != NULL) + (json_object_get(v, "indices") != NULL);
    if (nkinds > 1) {
        ct_sj_error(c, NULL, "give only one of: side, box, indices");
        ok = 0;
    } else if (nkinds == 0 && !probe) {
        ct_sj_error(c, NULL, "expected one of: side, box, indices (or the string \"all\")");
        ok = 0;
    } else if (nkinds == 1 && probe && sel->body == -1 && json_is_string(json_object_get(v, "body"))) {
        ct_sj_error(c, NULL, "\"body\": \"all\" selects every vertex; it takes no side, box or indices");
        ok = 0;
    }
    if (json_object_get(v, "tol") && !side) {
        ct_sj_error(c, "tol", "only used with \"side\"");
        ok = 0;
    }
    return ok;
}

/* {"side": "+y", "tol": t} */
static int selector_side(sj *c, json_t *v, int dim, ct_selector *sel)
{
    int ok = 1, s = 0;
    sel->kind = CT_SEL_SIDE;
    if (ct_sj_enum(c, v, "side", SJ_REQUIRED, by_dim(dim, ct_sk_sides2, ct_sk_sides3), 0, &s)) {
        sel->axis = s / 2;
        sel->sign = s % 2 == 0 ? 1 : -1;
    } else {
        ok = 0;
    }
    ok &= ct_sj_real(c, v, "tol", SJ_OPTIONAL, 1e-6, SJ_GE(0), &sel->tol);
    return ok;
}

/* {"box": {"min": [...], "max": [...]}} with min <= max */
static int selector_box(sj *c, json_t *v, int dim, ct_selector *sel)
{
    sel->kind = CT_SEL_BOX;
    json_t *b = ct_sj_enter(c, v, "box", SJ_REQUIRED, &ct_sk_box);
    if (!b) return 0;
    int vok = ct_sj_vec(c, b, "min", SJ_REQUIRED, dim, NULL, SJ_ANY, sel->lo);
    vok &= ct_sj_vec(c, b, "max", SJ_REQUIRED, dim, NULL, SJ_ANY, sel->hi);
    for (int i = 0; vok && i < dim; ++i)
        if (sel->lo[i] > sel->hi[i]) {
            char tok[24];
            snprintf(tok, sizeof tok, "%d", i);
            ct_sj_push(c, "max");
            ct_sj_error(c, tok, "must be >= min (got %g < %g)", sel->hi[i], sel->lo[i]);
            ct_sj_pop(c);
            vok = 0;
        }
    ct_sj_pop(c);
    return vok;
}

/* {"indices": [i, ...]} (non-empty, each >= 0) */
static int selector_indices(sj *c, json_t *v, ct_selector *sel)
{
    int ok = 1;
    sel->kind = CT_SEL_INDICES;
    json_t *a = ct_sj_enter_array(c, v, "indices", SJ_REQUIRED, 1);
    if (!a) return 0;
    size_t n = json_array_size(a);
    sel->indices = calloc(n, sizeof *sel->indices);
    if (!sel->indices) {
        c->oom = 1;
    } else {
        sel->nindices = (int)n;
        for (size_t i = 0; i < n; ++i) {
            char tok[32];
            snprintf(tok, sizeof tok, "%zu", i);
            ok &= ct_sj_value_int(c, json_array_get(a, i), tok, 0, INT_MAX, &sel->indices[i]);
        }
    }
    ct_sj_pop(c);
    return ok;
}

/* SELECTOR at obj[key]. Inside body `body` (>= 0) it defaults to "all"; a probe selector
 * (body < 0) is required and must name its body ("body": name or "all"). */
int ct_scene_read_selector(sj *c, json_t *obj, const char *key, const ct_scene *sc, int body,
                        ct_selector *sel)
{
    int probe = body < 0;
    memset(sel, 0, sizeof *sel);
    sel->body = body;
    sel->kind = CT_SEL_ALL;

    json_t *v = json_object_get(obj, key);
    if (!v && probe) {
        ct_sj_error(c, NULL, "missing required key \"%s\"", key);
        return 0;
    }
    if (!v) {
        const char *s;
        return ct_sj_string(c, obj, key, SJ_OPTIONAL, "all", &s);
    }
    if (json_is_string(v) && !probe) {
        if (strcmp(json_string_value(v), "all") == 0) return 1;
        ct_sj_error(c, key, "expected \"all\" or an object with one of: side, box, indices (got \"%s\")",
                 json_string_value(v));
        return 0;
    }
    if (!json_is_object(v)) {
        ct_sj_error(c, key, "expected %s (got %s)",
                 probe ? "an object with \"body\"" : "\"all\" or an object", ct_sj_type_name(v));
        return 0;
    }

    ct_sj_push(c, key);
    int ok = ct_sj_check_keys(c, v, probe ? &ct_sk_probe_selector : &ct_sk_selector) == 0;
    ok &= ct_sj_bool(c, v, "allow_empty", SJ_OPTIONAL, 0, &sel->allow_empty);
    if (probe) ok &= selector_probe_body(c, v, sc, sel);
    ok &= selector_check_kind(c, v, probe, sel);
    if (json_object_get(v, "side"))
        ok &= selector_side(c, v, sc->dim, sel);
    else if (json_object_get(v, "box"))
        ok &= selector_box(c, v, sc->dim, sel);
    else if (json_object_get(v, "indices"))
        ok &= selector_indices(c, v, sel);
    ct_sj_pop(c);
    return ok;
}

/* ---------------- meshes ---------------- */

typedef enum { MESH_VOLUME, MESH_SURFACE, MESH_UNKNOWN } mesh_kind;

/* "transform": {"scale", "rotate": {"axis", "angle_deg"}, "translate"} */
static void read_transform(sj *c, json_t *o, int dim, ct_mesh_spec *m)
{
    json_t *t = ct_sj_enter(c, o, "transform", SJ_OPTIONAL, &ct_sk_transform);
    if (!t) return;
    json_t *s = json_object_get(t, "scale");
    if (!s) {
        json_object_set_new(t, "scale", json_real(1.0));
    } else if (json_is_number(s)) {
        double k = 1.0;
        if (ct_sj_value_real(c, s, "scale", SJ_GT(0), &k))
            for (int i = 0; i < 3; ++i) m->scale[i] = k;
    } else if (json_is_array(s)) {
        ct_sj_value_vec(c, s, "scale", dim, SJ_GT(0), m->scale);
    } else {
        ct_sj_error(c, "scale", "expected a number or an array of %d numbers (got %s)", dim, ct_sj_type_name(s));
    }
    json_t *r = ct_sj_enter(c, t, "rotate", SJ_OPTIONAL, &ct_sk_rotate);
    if (r) {
        static const double z[3] = {0, 0, 1};
        double deg = 0.0;
        if (dim == 3) read_direction(c, r, "axis", SJ_OPTIONAL, 3, z, m->rot_axis);
        if (ct_sj_real(c, r, "angle_deg", SJ_OPTIONAL, 0.0, SJ_ANY, &deg)) m->rot_angle = deg * DEG2RAD;
        ct_sj_pop(c);
    }
    ct_sj_vec(c, t, "translate", SJ_OPTIONAL, dim, NULL, SJ_ANY, m->translate);
    ct_sj_pop(c);
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

/* dir + "/" + file, or file when it is absolute or dir is empty. */
char *ct_scene_join_path(const char *dir, const char *file)
{
    if (file[0] == '/' || !dir || !dir[0]) return strdup(file);
    size_t n = strlen(dir) + strlen(file) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/", file);
    return p;
}

/* {"file": "x.msh" | "x.obj"}: the file must exist and be readable. */
static mesh_kind read_mesh_file(sj *c, json_t *o, const ct_scene *sc, ct_mesh_spec *m, int *ok)
{
    const char *file;
    m->source = CT_MESH_FILE;
    if (!ct_sj_string(c, o, "file", SJ_REQUIRED, NULL, &file)) return *ok = 0, MESH_UNKNOWN;
    int is_obj = has_suffix(file, ".obj");
    if (!is_obj && !has_suffix(file, ".msh")) {
        ct_sj_error(c, "file", "unsupported mesh format \"%s\" (expected a .msh or .obj file)", file);
        return *ok = 0, MESH_UNKNOWN;
    }
    m->path = ct_scene_join_path(sc->dir, file);
    if (!m->path) return c->oom = 1, *ok = 0, MESH_UNKNOWN;
    struct stat st;
    FILE *f = NULL;
    if (stat(m->path, &st) != 0) {
        ct_sj_error(c, "file", "cannot open \"%s\": %s", m->path, strerror(errno));
        *ok = 0;
    } else if (S_ISDIR(st.st_mode)) {
        ct_sj_error(c, "file", "cannot open \"%s\": %s", m->path, strerror(EISDIR));
        *ok = 0;
    } else if (!(f = fopen(m->path, "r"))) {
        ct_sj_error(c, "file", "cannot open \"%s\": %s", m->path, strerror(errno));
        *ok = 0;
    }
    if (f) fclose(f);
    if (is_obj && sc->dim == 2) {
        ct_sj_error(c, "file", ".obj meshes are 3D surfaces (dim is 2)");
        *ok = 0;
    }
    return is_obj ? MESH_SURFACE : MESH_UNKNOWN;
}

/* A mesh spec at parent[key]: {"file": ...} or {"generator": ..., ...}, plus "transform".
 * Returns 1 if valid; *kind says whether it is volumetric. */
static int read_mesh(sj *c, json_t *parent, const char *key, const ct_scene *sc, ct_mesh_spec *m,
                     mesh_kind *kind)
{
    const char *const *generators = ct_sk_mesh_generators;
    for (int i = 0; i < 3; ++i) m->scale[i] = 1.0;
    m->rot_axis[2] = 1.0;
    *kind = MESH_UNKNOWN;

    json_t *o = ct_sj_enter(c, parent, key, SJ_REQUIRED, NULL);
    if (!o) return 0;
    m->json_path = ct_sj_strdup(c, c->path);
    int ok = 1, dim = sc->dim;
    int has_file = json_object_get(o, "file") != NULL, has_gen = json_object_get(o, "generator") != NULL;
    if (has_file && has_gen) {
        ct_sj_error(c, NULL, "give either \"file\" or \"generator\", not both");
        ok = 0;
    } else if (!has_file && !has_gen) {
        ct_sj_error(c, NULL, "missing required key \"file\" or \"generator\"");
        ok = 0;
    } else if (has_file) {
        ct_sj_check_keys(c, o, &ct_sk_mesh_file);
        *kind = read_mesh_file(c, o, sc, m, &ok);
    } else {
        int g = 0;
        if (!ct_sj_enum(c, o, "generator", SJ_REQUIRED, generators, 0, &g)) {
            ct_sj_pop(c);
            return 0;
        }
        const char *const needs = g == 0 ? "3" : "2";
        if (dim && dim != (g == 0 ? 3 : 2)) {
            ct_sj_error(c, "generator", "\"%s\" needs dim %s (dim is %d)", generators[g], needs, dim);
            ok = 0;
        }
        if (g <= 1) { /* box (3D) and rect (2D) grids */
            int n = g == 0 ? 3 : 2;
            m->source = g == 0 ? CT_MESH_BOX : CT_MESH_RECT;
            ct_sj_check_keys(c, o, &ct_sk_mesh_grid);
            ok &= ct_sj_vec(c, o, "size", SJ_REQUIRED, n, NULL, SJ_GT(0), m->size);
            if (ct_sj_ivec(c, o, "cells", SJ_REQUIRED, n, 1, m->cells)) {
                double cells = 1.0; /* the element and vertex counts are ints */
                for (int i = 0; i < n; ++i) cells *= m->cells[i];
                /* the memory the elements will need (ct_sim.h), before generating them */
                double need = cells * (n == 3 ? 6.0 * CT_SIM_BYTES_PER_TET : 2.0 * CT_SIM_BYTES_PER_TRI);
                double have = ct_machine_memory();
                if (cells > CT_SCENE_MAX_GRID_CELLS) {
                    ct_sj_error(c, "cells", "%.3g cells; at most %g", cells, (double)CT_SCENE_MAX_GRID_CELLS);
                    ok = 0;
                } else if (have > 0.0 && need > have) {
                    ct_sj_error(c, "cells", "%.3g cells need about %.1f GB; this machine has %.1f GB", cells,
                                need / 1e9, have / 1e9);
                    ok = 0;
                }
            } else {
                ok = 0;
            }
            ok &= ct_sj_vec(c, o, "origin", SJ_OPTIONAL, n, NULL, SJ_ANY, m->origin);
            *kind = MESH_VOLUME;
        } else if (g == 2) { /* polyline */
            m->source = CT_MESH_POLYLINE;
            ct_sj_check_keys(c, o, &ct_sk_mesh_polyline);
            json_t *pts = ct_sj_enter_array(c, o, "points", SJ_REQUIRED, 2);
            if (pts) {
                size_t n = json_array_size(pts);
                m->points = calloc(2 * n, sizeof *m->points);
                if (!m->points) {
                    c->oom = 1;
                } else {
                    m->npoints = (int)n;
                    for (size_t i = 0; i < n; ++i) {
                        char tok[32];
                        snprintf(tok, sizeof tok, "%zu", i);
                        ok &= ct_sj_value_vec(c, json_array_get(pts, i), tok, 2, SJ_ANY, m->points + 2 * i);
                    }
                }
                ct_sj_pop(c);
            } else {
                ok = 0;
            }
            ok &= ct_sj_bool(c, o, "closed", SJ_OPTIONAL, 0, &m->closed);
            if (m->closed && pts && json_array_size(pts) < 3) {
                ct_sj_error(c, "points", "a closed polyline needs at least 3 points");
                ok = 0;
            }
            *kind = MESH_SURFACE;
        } else { /* arc */
            double ang[2] = {0, 0};
            m->source = CT_MESH_ARC;
            ct_sj_check_keys(c, o, &ct_sk_mesh_arc);
            ok &= ct_sj_vec(c, o, "center", SJ_REQUIRED, 2, NULL, SJ_ANY, m->center);
            ok &= ct_sj_real(c, o, "radius", SJ_REQUIRED, 0, SJ_GT(0), &m->radius);
            if (ct_sj_vec(c, o, "angles_deg", SJ_REQUIRED, 2, NULL, SJ_ANY, ang)) {
                if (ang[0] == ang[1]) {
                    ct_sj_error(c, "angles_deg", "the two angles must differ (got %g twice)", ang[0]);
                    ok = 0;
                } else if (fabs(ang[1] - ang[0]) > 360.0 * (1.0 + 1e-12)) { /* (the tolerance of ct_mesh_arc) */
                    ct_sj_error(c, "angles_deg", "the arc spans %g degrees: at most 360 (a longer arc would lie on "
                                "itself)", fabs(ang[1] - ang[0]));
                    ok = 0;
                }
                m->angle0 = ang[0] * DEG2RAD;
                m->angle1 = ang[1] * DEG2RAD;
            } else {
                ok = 0;
            }
            ok &= ct_sj_int(c, o, "segments", SJ_REQUIRED, 0, 1, CT_SCENE_MAX_SEGMENTS, &m->segments);
            if (ok && fabs(fabs(ang[1] - ang[0]) - 360.0) <= 1e-12 * 360.0 && m->segments < 3) {
                ct_sj_error(c, "segments", "a full circle needs at least 3 segments (got %d)", m->segments);
                ok = 0;
            }
            *kind = MESH_SURFACE;
        }
    }
    if (dim) read_transform(c, o, dim, m);
    ct_sj_pop(c);
    return ok;
}

/* ---------------- bodies ---------------- */

/* One segment of scripted motion; prev_until is the end of the previous one (or 0). */
static void read_segment(sj *c, json_t *o, int dim, double prev_until, ct_motion_segment *s)
{
    if (ct_sj_real(c, o, "until", SJ_REQUIRED, 0, SJ_GT(0), &s->until) && !(s->until > prev_until))
        ct_sj_error(c, "until", "must be > %g, the previous segment's \"until\" (got %g)", prev_until, s->until);
    ct_sj_vec(c, o, "velocity", SJ_OPTIONAL, dim, NULL, SJ_ANY, s->velocity);
    ct_sj_real(c, o, "angular_velocity", SJ_OPTIONAL, 0.0, SJ_ANY, &s->omega);
    s->axis[2] = 1.0;
    if (dim == 3 && (s->omega != 0.0 || json_object_get(o, "axis")))
        read_direction(c, o, "axis", SJ_REQUIRED, 3, NULL, s->axis);
    ct_sj_vec(c, o, "center", SJ_OPTIONAL, dim, NULL, SJ_ANY, s->center);
}

/* One "fixed" entry: {"select", "motion": [SEGMENT, ...]}. */
static void read_dirichlet(sj *c, json_t *o, const ct_scene *sc, int body, ct_dirichlet *d)
{
    ct_scene_read_selector(c, o, "select", sc, body, &d->sel);
    json_t *a = ct_sj_enter_array(c, o, "motion", SJ_OPTIONAL, 0);
    if (!a) return;
    size_t n = json_array_size(a);
    d->seg = calloc(n + 1, sizeof *d->seg);
    if (!d->seg) {
        c->oom = 1;
        ct_sj_pop(c);
        return;
    }
    d->nseg = (int)n;
    double prev = 0.0;
    for (size_t k = 0; k < n; ++k) {
        json_t *s = ct_sj_enter_elem(c, a, k, &ct_sk_segment);
        if (!s) continue;
        read_segment(c, s, sc->dim, prev, &d->seg[k]);
        if (d->seg[k].until > prev) prev = d->seg[k].until;
        ct_sj_pop(c);
    }
    ct_sj_pop(c);
}

/* "fixed": one entry object or an array of them. */
static void read_fixed(sj *c, json_t *b, const ct_scene *sc, int body, ct_body_spec *bs)
{
    json_t *v = json_object_get(b, "fixed");
    if (!v) {
        json_object_set_new(b, "fixed", json_array());
        return;
    }
    if (json_is_object(v)) {
        if (!(bs->fixed = calloc(1, sizeof *bs->fixed))) {
            c->oom = 1;
            return;
        }
        bs->nfixed = 1;
        ct_sj_push(c, "fixed");
        ct_sj_check_keys(c, v, &ct_sk_fixed);
        read_dirichlet(c, v, sc, body, &bs->fixed[0]);
        ct_sj_pop(c);
        return;
    }
    json_t *a = ct_sj_enter_array(c, b, "fixed", SJ_OPTIONAL, 0);
    if (!a) return; /* reported: not an object or array */
    size_t n = json_array_size(a);
    if (!(bs->fixed = calloc(n + 1, sizeof *bs->fixed))) {
        c->oom = 1;
        ct_sj_pop(c);
        return;
    }
    bs->nfixed = (int)n;
    for (size_t k = 0; k < n; ++k) {
        json_t *o = ct_sj_enter_elem(c, a, k, &ct_sk_fixed);
        if (!o) continue;
        read_dirichlet(c, o, sc, body, &bs->fixed[k]);
        ct_sj_pop(c);
    }
    ct_sj_pop(c);
}

/* One load: {"select", "force", "force_rate", "ramp_until", "distribution", "weight"}. */
static void read_load(sj *c, json_t *o, const ct_scene *sc, int body, ct_load *l)
{
    int dim = sc->dim;
    ct_scene_read_selector(c, o, "select", sc, body, &l->sel);
    if (!json_object_get(o, "force") && !json_object_get(o, "force_rate"))
        ct_sj_error(c, NULL, "give at least one of \"force\", \"force_rate\"");
    ct_sj_vec(c, o, "force", SJ_OPTIONAL, dim, NULL, SJ_ANY, l->force);
    ct_sj_vec(c, o, "force_rate", SJ_OPTIONAL, dim, NULL, SJ_ANY, l->force_rate);
    l->ramp_until = INFINITY; /* absent: ramps forever */
    if (json_object_get(o, "ramp_until")) ct_sj_real(c, o, "ramp_until", SJ_REQUIRED, 0, SJ_GT(0), &l->ramp_until);

    json_t *d = json_object_get(o, "distribution");
    l->dist = CT_LOAD_UNIFORM;
    if (!d) {
        json_object_set_new(o, "distribution", json_string("uniform"));
    } else if (json_is_string(d)) {
        if (strcmp(json_string_value(d), "uniform") != 0)
            ct_sj_error(c, "distribution",
                     "expected \"uniform\" or an object {\"type\": \"linear\", ...} (got \"%s\")",
                     json_string_value(d));
    } else if (json_is_object(d)) {
        json_t *lin = ct_sj_enter(c, o, "distribution", SJ_REQUIRED, &ct_sk_linear);
        int type = 0;
        l->dist = CT_LOAD_LINEAR;
        ct_sj_enum(c, lin, "type", SJ_REQUIRED, ct_sk_linear_types, 0, &type);
        ct_sj_enum(c, lin, "axis", SJ_REQUIRED, by_dim(dim, ct_sk_axes2, ct_sk_axes3), 0, &l->axis);
        ct_sj_real(c, lin, "center", SJ_REQUIRED, 0, SJ_ANY, &l->center);
        l->length = 0.0; /* absent: automatic */
        if (json_object_get(lin, "length")) ct_sj_real(c, lin, "length", SJ_REQUIRED, 0, SJ_GT(0), &l->length);
        ct_sj_pop(c);
    } else {
        ct_sj_error(c, "distribution", "expected \"uniform\" or an object (got %s)", ct_sj_type_name(d));
    }
    int w = 0;
    ct_sj_enum(c, o, "weight", SJ_OPTIONAL, ct_sk_load_weights, 0, &w);
    l->weight = (ct_load_weight)w;
}

static void read_loads(sj *c, json_t *b, const ct_scene *sc, int body, ct_body_spec *bs)
{
    json_t *a = ct_sj_enter_array(c, b, "loads", SJ_OPTIONAL, 0);
    if (!a) return;
    size_t n = json_array_size(a);
    if (!(bs->loads = calloc(n + 1, sizeof *bs->loads))) {
        c->oom = 1;
        ct_sj_pop(c);
        return;
    }
    bs->nloads = (int)n;
    for (size_t k = 0; k < n; ++k) {
        json_t *o = ct_sj_enter_elem(c, a, k, &ct_sk_load);
        if (!o) continue;
        read_load(c, o, sc, body, &bs->loads[k]);
        ct_sj_pop(c);
    }
    ct_sj_pop(c);
}

/* "material": {"model", "E", "nu", "density"}; the ranges are those of ct_material_init. */
static void read_material(sj *c, json_t *b, ct_body_spec *bs)
{
    json_t *o = ct_sj_enter(c, b, "material", SJ_REQUIRED, &ct_sk_material);
    if (!o) return;
    int kind = 0, ok = 1;
    double E = 0, nu = 0, rho = 0;
    ok &= ct_sj_enum(c, o, "model", SJ_OPTIONAL, ct_sk_material_models, CT_MAT_NEO_HOOKEAN, &kind);
    ok &= ct_sj_real(c, o, "E", SJ_REQUIRED, 0, SJ_GT(0), &E);
    ok &= ct_sj_real(c, o, "nu", SJ_REQUIRED, 0, ((sj_range){-1.0, 0.5, SJ_LO_EXCL | SJ_HI_EXCL}), &nu);
    ok &= ct_sj_real(c, o, "density", SJ_REQUIRED, 0, SJ_GT(0), &rho);
    if (ok) {
        ct_diag d;
        ct_diag_init(&d);
        if (ct_material_init(&bs->material, (ct_material_kind)kind, E, nu, rho, &d) == CT_OK)
            bs->has_material = 1;
        else
            ct_sj_error(c, NULL, "%s", ct_diag_last(&d));
        ct_diag_free(&d);
    }
    ct_sj_pop(c);
}

static const char *mesh_what(const ct_mesh_spec *m)
{
    switch (m->source) {
    case CT_MESH_POLYLINE: return "a polyline mesh";
    case CT_MESH_ARC: return "an arc mesh";
    case CT_MESH_FILE: return "an .obj surface mesh";
    default: return "a mesh";
    }
}

static void read_body(sj *c, json_t *b, ct_scene *sc, int i)
{
    ct_body_spec *bs = &sc->bodies[i];
    const char *name;
    if (ct_sj_string(c, b, "name", SJ_REQUIRED, NULL, &name)) {
        if (!name[0]) ct_sj_error(c, "name", "must not be empty");
        bs->name = ct_sj_strdup(c, name);
    }
    mesh_kind kind = MESH_UNKNOWN;
    int mesh_ok = read_mesh(c, b, "mesh", sc, &bs->mesh, &kind);

    json_t *d = ct_sj_enter(c, b, "dofs", SJ_OPTIONAL, &ct_sk_dofs);
    if (d) {
        int mode = 0;
        ct_sj_enum(c, d, "mode", SJ_OPTIONAL, ct_sk_dofs_modes, 0, &mode);
        bs->dofs = (ct_dofs_mode)mode;
        if (mode == CT_DOFS_EMBEDDED) {
            ct_sj_real(c, d, "outside_tol", SJ_OPTIONAL, 1e-6, SJ_GE(0), &bs->outside_tol);
            mesh_kind ck;
            if (read_mesh(c, d, "coarse", sc, &bs->coarse, &ck) && ck == MESH_SURFACE)
                ct_sj_error(c, "coarse", "must be a volumetric mesh (got %s)", mesh_what(&bs->coarse));
        } else if (json_object_get(d, "coarse") || json_object_get(d, "outside_tol")) {
            ct_sj_error(c, json_object_get(d, "coarse") ? "coarse" : "outside_tol",
                        "only used with \"mode\": \"embedded\"");
        }
        ct_sj_pop(c);
    }

    /* kinematic: explicit, or implied by a surface-only mesh */
    int surface = kind == MESH_SURFACE;
    if (ct_sj_bool(c, b, "kinematic", SJ_OPTIONAL, surface, &bs->kinematic) && surface && !bs->kinematic) {
        ct_sj_error(c, "kinematic", "%s is surface-only: the body must be kinematic", mesh_what(&bs->mesh));
        bs->kinematic = 1;
    }
    if (bs->kinematic) {
        if (json_object_get(b, "material"))
            ct_sj_error(c, "material", "not allowed for a kinematic body (%s)",
                     surface ? mesh_what(&bs->mesh) : "\"kinematic\": true");
        if (bs->dofs == CT_DOFS_EMBEDDED) ct_sj_error(c, "dofs", "a kinematic body cannot be embedded");
    } else if (mesh_ok || kind != MESH_UNKNOWN || json_object_get(b, "material")) {
        read_material(c, b, bs); /* (not demanded when a broken mesh spec hides the mesh kind) */
    }
    /* a prescribed body moves by its motion alone; statics has no velocities (a zero velocity and
     * an empty list of loads, as the resolved scene states the defaults, are fine) */
    ct_sj_vec(c, b, "velocity", SJ_OPTIONAL, sc->dim, NULL, SJ_ANY, bs->v0);
    int given_v = 0;
    for (int k = 0; k < sc->dim; ++k) given_v |= bs->v0[k] != 0.0;
    if (given_v && bs->kinematic)
        ct_sj_error(c, "velocity", "a kinematic body moves by its \"fixed\" motion alone (give the velocity there)");
    else if (given_v && sc->integrator == CT_INTEGRATOR_STATIC)
        ct_sj_error(c, "velocity", "the static integrator has no velocities (time.integrator is \"static\")");
    if (json_array_size(json_object_get(b, "loads")) > 0 && bs->kinematic)
        ct_sj_error(c, "loads", "a kinematic body's vertices are all prescribed: a load on them does nothing");

    /* per-body contact parameters (overrides of the model's CT_PARAM_PER_BODY parameters); with an
     * unknown model (already reported) they cannot be checked */
    if (json_object_get(b, "contact") && sc->model) {
        json_t *o = ct_sj_enter(c, b, "contact", SJ_OPTIONAL, NULL);
        if (o) {
            ct_sj_read_body_params(c, o, sc->model->name, &sc->params, i);
            ct_sj_pop(c);
        }
    }

    int nerr = c->nerr;
    read_fixed(c, b, sc, i, bs);
    read_loads(c, b, sc, i, bs);
    if (bs->kinematic && c->nerr == nerr) {
        int all = 0;
        for (int k = 0; k < bs->nfixed; ++k) all |= bs->fixed[k].sel.kind == CT_SEL_ALL;
        if (!all)
            ct_sj_error(c, NULL, "a kinematic body (%s) must be fully fixed: add \"fixed\": {\"select\": \"all\"}",
                     surface ? mesh_what(&bs->mesh) : "\"kinematic\": true");
    }
}

void ct_scene_read_bodies(sj *c, json_t *root, ct_scene *sc)
{
    json_t *a = ct_sj_enter_array(c, root, "bodies", SJ_REQUIRED, 1);
    if (!a) return;
    size_t n = json_array_size(a);
    if (!(sc->bodies = calloc(n, sizeof *sc->bodies))) {
        c->oom = 1;
        ct_sj_pop(c);
        return;
    }
    sc->nbodies = (int)n;
    /* a row of per-body contact parameters per body, the scene-level values until a body
     * overrides them (read_body) */
    if (sc->model && ct_params_set_bodies(&sc->params, (int)n) != CT_OK) c->oom = 1;
    for (size_t i = 0; i < n; ++i) {
        ct_mesh_spec *m = &sc->bodies[i].mesh;
        for (int k = 0; k < 3; ++k) m->scale[k] = sc->bodies[i].coarse.scale[k] = 1.0;
        json_t *b = ct_sj_enter_elem(c, a, i, &ct_sk_body);
        if (!b) continue;
        read_body(c, b, sc, (int)i);
        ct_sj_pop(c);
    }
    ct_sj_pop(c);
}

/* ---------------- obstacles and participant names ---------------- */

void ct_scene_read_obstacles(sj *c, json_t *root, ct_scene *sc)
{
    json_t *a = ct_sj_enter_array(c, root, "obstacles", SJ_OPTIONAL, 0);
    if (!a) return;
    size_t n = json_array_size(a);
    if (!(sc->obstacles = calloc(n + 1, sizeof *sc->obstacles))) {
        c->oom = 1;
        ct_sj_pop(c);
        return;
    }
    sc->nobstacles = (int)n;
    for (size_t i = 0; i < n; ++i) {
        ct_obstacle_spec *ob = &sc->obstacles[i];
        json_t *o = ct_sj_enter_elem(c, a, i, &ct_sk_obstacle);
        if (!o) continue;
        const char *name;
        int type = 0;
        if (ct_sj_string(c, o, "name", SJ_REQUIRED, NULL, &name)) {
            if (!name[0]) ct_sj_error(c, "name", "must not be empty");
            ob->name = ct_sj_strdup(c, name);
        }
        ct_sj_enum(c, o, "type", SJ_REQUIRED, ct_sk_obstacle_types, 0, &type);
        ct_sj_vec(c, o, "point", SJ_REQUIRED, sc->dim, NULL, SJ_ANY, ob->point);
        read_direction(c, o, "normal", SJ_REQUIRED, sc->dim, NULL, ob->normal);
        ct_sj_pop(c);
    }
    ct_sj_pop(c);
}

/* Body and obstacle names must be unique together. */
void ct_scene_check_participant_names(sj *c, const ct_scene *sc)
{
    int np = sc->nbodies + sc->nobstacles;
    for (int j = 0; j < np; ++j) {
        const char *nj = j < sc->nbodies ? sc->bodies[j].name : sc->obstacles[j - sc->nbodies].name;
        for (int i = 0; nj && i < j; ++i) {
            const char *ni = i < sc->nbodies ? sc->bodies[i].name : sc->obstacles[i - sc->nbodies].name;
            if (!ni || strcmp(ni, nj) != 0) continue;
            char where[64];
            snprintf(where, sizeof where, "/%s/%d/name", i < sc->nbodies ? "bodies" : "obstacles",
                     i < sc->nbodies ? i : i - sc->nbodies);
            ct_sj_push(c, j < sc->nbodies ? "bodies" : "obstacles");
            ct_sj_push_index(c, (size_t)(j < sc->nbodies ? j : j - sc->nbodies));
            ct_sj_error(c, "name", "duplicate name \"%s\" (also at %s)", nj, where);
            ct_sj_pop(c);
            ct_sj_pop(c);
            break;
        }
    }
}

int ct_scene_participant(const ct_scene *sc, const char *name)
{
    int b = find_body(sc, name);
    if (b >= 0) return b;
    for (int k = 0; k < sc->nobstacles; ++k)
        if (sc->obstacles[k].name && strcmp(sc->obstacles[k].name, name) == 0) return sc->nbodies + k;
    return -1;
}
