/* scene.c — the scene schema (DESIGN §5): a JSON file -> struct ct_scene.
 *
 * Reading goes through the strict helpers of scene_json.h, which report every problem
 * with its JSON pointer and write defaults back into the tree; after a clean pass the
 * tree, pretty-printed, is the resolved scene. The functions follow the schema top-down,
 * one per JSON object type; bodies and obstacles are in scene_body.c.
 */
#include "contactlab/ct_scene.h"
#include "contactlab/ct_h5log.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/scene_body.h"
#include "io/scene_json.h"


/* ---------------- probes ---------------- */

static int valid_probe_name(const char *s)
{
    if (!*s || strlen(s) > CT_SCENE_MAX_NAME) return 0; /* a dataset name: /probes/<name> */
    for (; *s; ++s)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '.' || *s == '-')) return 0;
    return 1;
}

/* "pair": [name, name] -> two distinct participant indices. */
static void read_pair(sj *c, json_t *o, const ct_scene *sc, int pair[2])
{
    json_t *a = json_object_get(o, "pair");
    if (!a) {
        ct_sj_error(c, NULL, "missing required key \"pair\"");
        return;
    }
    if (!json_is_array(a) || json_array_size(a) != 2) {
        ct_sj_error(c, "pair", "expected an array of two body or obstacle names");
        return;
    }
    ct_sj_push(c, "pair");
    int ok = 1;
    for (size_t k = 0; k < 2; ++k) {
        json_t *v = json_array_get(a, k);
        char tok[24];
        snprintf(tok, sizeof tok, "%zu", k);
        if (!json_is_string(v)) {
            ct_sj_error(c, tok, "expected a body or obstacle name (got %s)", ct_sj_type_name(v));
            ok = 0;
        } else if ((pair[k] = ct_scene_participant(sc, json_string_value(v))) < 0) {
            ct_sj_error(c, tok, "no body or obstacle named \"%s\"", json_string_value(v));
            ok = 0;
        }
    }
    if (ok && pair[0] == pair[1]) ct_sj_error(c, NULL, "the two participants must differ");
    else if (ok && pair[0] >= sc->nbodies && pair[1] >= sc->nbodies)
        ct_sj_error(c, NULL, "at least one participant must be a body (obstacles do not interact)");
    ct_sj_pop(c);
}

/* ---------------- springs ---------------- */

/* A spring end {"body": NAME|index, "vertex": i} or {"body": ..., "select": SELECTOR}. */
static void read_spring_end(sj *c, json_t *o, const char *key, const ct_scene *sc, ct_spring_end *e)
{
    e->body = -1;
    e->vertex = -1;
    json_t *v = ct_sj_enter(c, o, key, SJ_REQUIRED, &ct_sk_spring_end);
    if (!v) return;
    json_t *b = json_object_get(v, "body");
    if (!b) {
        ct_sj_error(c, NULL, "missing required key \"body\"");
    } else if (json_is_string(b)) {
        for (int k = 0; k < sc->nbodies; ++k)
            if (sc->bodies[k].name && strcmp(sc->bodies[k].name, json_string_value(b)) == 0) e->body = k;
        if (e->body < 0) ct_sj_error(c, "body", "no body named \"%s\"", json_string_value(b));
    } else if (json_is_integer(b)) {
        json_int_t i = json_integer_value(b);
        if (i >= 0 && i < sc->nbodies)
            e->body = (int)i;
        else
            ct_sj_error(c, "body", "no body %lld (the scene has %d)", (long long)i, sc->nbodies);
    } else {
        ct_sj_error(c, "body", "expected a body name or index (got %s)", ct_sj_type_name(b));
    }
    const int has_v = json_object_get(v, "vertex") != NULL, has_s = json_object_get(v, "select") != NULL;
    if (has_v == has_s) {
        ct_sj_error(c, NULL, "give exactly one of \"vertex\" (an index of the body's mesh) and \"select\" "
                    "(a selector that picks one vertex)");
    } else if (has_v) {
        ct_sj_int(c, v, "vertex", SJ_REQUIRED, 0, 0, INT_MAX, &e->vertex);
    } else {
        ct_scene_read_selector(c, v, "select", sc, e->body < 0 ? 0 : e->body, &e->sel);
        e->sel.body = e->body;
    }
    ct_sj_pop(c);
}

static void read_springs(sj *c, json_t *root, ct_scene *sc)
{
    json_t *a = ct_sj_enter_array(c, root, "springs", SJ_OPTIONAL, 0);
    if (!a) return;
    size_t n = json_array_size(a);
    if (!(sc->springs = calloc(n + 1, sizeof *sc->springs))) {
        c->oom = 1;
        ct_sj_pop(c);
        return;
    }
    sc->nsprings = (int)n;
    for (size_t i = 0; i < n; ++i) {
        ct_spring_spec *sp = &sc->springs[i];
        sp->end[0].body = sp->end[1].body = -1;
        sp->end[0].vertex = sp->end[1].vertex = -1;
        json_t *o = ct_sj_enter_elem(c, a, i, &ct_sk_spring);
        if (!o) continue;
        char def[32];
        snprintf(def, sizeof def, "spring%zu", i);
        const char *name;
        if (ct_sj_string(c, o, "name", SJ_OPTIONAL, def, &name)) {
            if (!valid_probe_name(name))
                ct_sj_error(c, "name", "must be a name of 1 to %d letters, digits, '_', '.', '-' (got \"%.60s%s\")",
                            CT_SCENE_MAX_NAME, name, strlen(name) > 60 ? "..." : "");
            for (size_t k = 0; k < i; ++k)
                if (sc->springs[k].name && strcmp(sc->springs[k].name, name) == 0) {
                    ct_sj_error(c, "name", "duplicate spring name \"%s\" (also at /springs/%zu/name)", name, k);
                    break;
                }
            sp->name = ct_sj_strdup(c, name);
        }
        read_spring_end(c, o, "a", sc, &sp->end[0]);
        read_spring_end(c, o, "b", sc, &sp->end[1]);
        ct_sj_real(c, o, "stiffness", SJ_REQUIRED, 0.0, SJ_GT(0.0), &sp->k);
        if (ct_sj_real(c, o, "rest_length", SJ_OPTIONAL, 0.0, SJ_GE(0.0), &sp->rest_length) &&
            !isfinite(sp->rest_length))
            ct_sj_error(c, "rest_length", "must be finite");
        if (!isfinite(sp->k)) ct_sj_error(c, "stiffness", "must be finite");
        ct_sj_pop(c);
    }
    ct_sj_pop(c);
}

static void read_probe(sj *c, json_t *o, ct_scene *sc, int i)
{
    static const ct_probe_kind kinds[] = {CT_PROBE_MEAN_DISPLACEMENT, CT_PROBE_MEAN_POSITION,
                                          CT_PROBE_MEAN_VELOCITY, CT_PROBE_REACTION, CT_PROBE_FORCE,
                                          CT_PROBE_ENERGY, CT_PROBE_SPRING_FORCE};
    ct_probe_spec *p = &sc->probes[i];
    const char *name;
    if (ct_sj_string(c, o, "name", SJ_REQUIRED, NULL, &name)) {
        if (!valid_probe_name(name))
            ct_sj_error(c, "name", "must be a name of 1 to %d letters, digits, '_', '.', '-' (got \"%.60s%s\")",
                        CT_SCENE_MAX_NAME, name, strlen(name) > 60 ? "..." : "");
        for (int k = 0; k < i; ++k)
            if (sc->probes[k].name && strcmp(sc->probes[k].name, name) == 0) {
                ct_sj_error(c, "name", "duplicate probe name \"%s\" (also at /probes/%d/name)", name, k);
                break;
            }
        p->name = ct_sj_strdup(c, name);
    }
    int q = 0;
    if (!ct_sj_enum(c, o, "quantity", SJ_REQUIRED, ct_sk_probe_quantities, 0, &q)) return;
    p->kind = kinds[q];
    p->component = CT_COMPONENT_ALL;
    if (p->kind == CT_PROBE_ENERGY) {
        int e = 0;
        ct_sj_check_keys(c, o, &ct_sk_probe_energy);
        if (ct_sj_enum(c, o, "energy", SJ_REQUIRED, ct_sk_energies, 0, &e)) p->energy = (ct_energy_kind)e;
        return;
    }
    if (p->kind == CT_PROBE_FORCE) {
        ct_sj_check_keys(c, o, &ct_sk_probe_force);
        const char *cat;
        if (ct_sj_string(c, o, "category", SJ_REQUIRED, NULL, &cat) &&
            ct_force_category_from_name(cat, &p->category) != 0) {
            char list[256] = "";
            size_t n = 0;
            for (int k = 0; k < CT_FORCE_NCAT && n < sizeof list; ++k)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "",
                                      ct_force_category_name((ct_force_category)k));
            ct_sj_error(c, "category", "must be one of: %s (got \"%s\")", list, cat);
        }
        read_pair(c, o, sc, p->pair);
    } else if (p->kind == CT_PROBE_SPRING_FORCE) {
        ct_sj_check_keys(c, o, &ct_sk_probe_spring);
        json_t *v = json_object_get(o, "spring");
        p->spring = -1;
        if (!v) {
            ct_sj_error(c, NULL, "missing required key \"spring\"");
        } else if (json_is_string(v)) {
            for (int k = 0; k < sc->nsprings; ++k)
                if (sc->springs[k].name && strcmp(sc->springs[k].name, json_string_value(v)) == 0) p->spring = k;
            if (p->spring < 0) ct_sj_error(c, "spring", "no spring named \"%s\" in /springs", json_string_value(v));
        } else if (json_is_integer(v)) {
            json_int_t k = json_integer_value(v);
            if (k >= 0 && k < sc->nsprings)
                p->spring = (int)k;
            else
                ct_sj_error(c, "spring", "no spring %lld (/springs has %d)", (long long)k, sc->nsprings);
        } else {
            ct_sj_error(c, "spring", "expected a spring name or index (got %s)", ct_sj_type_name(v));
        }
    } else {
        ct_sj_check_keys(c, o, &ct_sk_probe_select);
        ct_scene_read_selector(c, o, "select", sc, -1, &p->sel);
    }
    int comp = 0;
    const char *const *names = sc->dim == 2 ? ct_sk_components2 : ct_sk_components3;
    if (ct_sj_enum(c, o, "component", SJ_OPTIONAL, names, sc->dim == 2 ? 2 : 3, &comp)) {
        const char *s = names[comp];
        p->component = strcmp(s, "all") == 0 ? CT_COMPONENT_ALL : strcmp(s, "norm") == 0 ? CT_COMPONENT_NORM : comp;
    }
}

static void read_probes(sj *c, json_t *root, ct_scene *sc)
{
    json_t *a = ct_sj_enter_array(c, root, "probes", SJ_OPTIONAL, 0);
    if (!a) return;
    size_t n = json_array_size(a);
    if (!(sc->probes = calloc(n + 1, sizeof *sc->probes))) {
        c->oom = 1;
        ct_sj_pop(c);
        return;
    }
    sc->nprobes = (int)n;
    for (size_t i = 0; i < n; ++i) {
        json_t *o = ct_sj_enter_elem(c, a, i, NULL); /* keys depend on the quantity */
        if (!o) continue;
        read_probe(c, o, sc, (int)i);
        ct_sj_pop(c);
    }
    ct_sj_pop(c);
}

/* ---------------- top level ---------------- */

static void read_time(sj *c, json_t *root, ct_scene *sc)
{
    json_t *t = ct_sj_enter(c, root, "time", SJ_REQUIRED, &ct_sk_time);
    if (!t) return;
    int dt_ok = ct_sj_real(c, t, "dt", SJ_REQUIRED, 0, SJ_GT(0), &sc->dt);
    if (ct_sj_real(c, t, "duration", SJ_REQUIRED, 0, SJ_GT(0), &sc->duration) && dt_ok) {
        if (sc->duration < sc->dt)
            ct_sj_error(c, "duration", "must be >= dt (got %g < %g)", sc->duration, sc->dt);
        else if (!(sc->duration / sc->dt <= CT_SCENE_MAX_STEPS)) /* the step count is an int */
            ct_sj_error(c, "duration", "duration / dt = %.3g steps; at most %g", sc->duration / sc->dt,
                        (double)CT_SCENE_MAX_STEPS);
    }
    int integ = 0;
    ct_sj_enum(c, t, "integrator", SJ_OPTIONAL, ct_sk_integrators, 0, &integ);
    sc->integrator = (ct_integrator)integ;
    ct_sj_pop(c);
}

static void read_solver(sj *c, json_t *root, ct_solver_spec *s)
{
    json_t *o = ct_sj_enter(c, root, "solver", SJ_OPTIONAL, &ct_sk_solver);
    if (!o) return;
    ct_sj_real(c, o, "newton_tol", SJ_OPTIONAL, 1e-2, SJ_GT(0), &s->newton_tol);
    ct_sj_real(c, o, "force_tol", SJ_OPTIONAL, 1e-4, SJ_GE(0), &s->force_tol);
    ct_sj_int(c, o, "max_newton_iters", SJ_OPTIONAL, 200, 1, CT_SCENE_MAX_NEWTON_ITERS, &s->max_newton_iters);
    if (ct_sj_int(c, o, "friction_iters", SJ_OPTIONAL, 1, -1, CT_SCENE_MAX_FRICTION_ITERS, &s->friction_iters) &&
        s->friction_iters == 0)
        ct_sj_error(c, "friction_iters", "must be -1 (until converged) or >= 1 (got 0)");
    ct_sj_real(c, o, "friction_tol", SJ_OPTIONAL, 1e-4, SJ_GT(0), &s->friction_tol);
    ct_sj_int(c, o, "threads", SJ_OPTIONAL, 0, 0, CT_SCENE_MAX_THREADS, &s->threads);
    ct_sj_bool(c, o, "project_psd", SJ_OPTIONAL, 1, &s->project_psd);
    ct_sj_bool(c, o, "exact_hessian", SJ_OPTIONAL, 1, &s->exact_hessian);
    ct_sj_bool(c, o, "predictor", SJ_OPTIONAL, 1, &s->predictor);
    ct_sj_bool(c, o, "second_order_correction", SJ_OPTIONAL, 1, &s->second_order_correction);
    ct_sj_int(c, o, "max_line_search", SJ_OPTIONAL, 40, 1, CT_SCENE_MAX_LINE_SEARCH, &s->max_line_search);
    ct_sj_bool(c, o, "verify", SJ_OPTIONAL, 1, &s->verify);
    ct_sj_pop(c);
}

static void read_contact(sj *c, json_t *root, ct_scene *sc)
{
    static const char *const own_keys[] = {"model", NULL};
    json_t *o = ct_sj_enter(c, root, "contact", SJ_OPTIONAL, NULL); /* keys: the model's parameters */
    if (!o) return;
    const char *name;
    if (ct_sj_string(c, o, "model", SJ_OPTIONAL, "none", &name)) {
        const ct_model_type *m = ct_model_find(name);
        if (!m) {
            char list[512] = "";
            size_t n = 0;
            for (int k = 0; ct_model_registry[k] && n < sizeof list; ++k)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "", ct_model_registry[k]->name);
            ct_sj_error(c, "model", "unknown contact model \"%s\" (registered: %s)", name, list);
        } else {
            sc->model = m;
            sc->model_name = ct_sj_strdup(c, m->name);
            ct_sj_read_params(c, o, m->params, own_keys, &sc->params);
        }
    }
    ct_sj_pop(c);
}

static void read_output(sj *c, json_t *root, ct_scene *sc)
{
    json_t *o = ct_sj_enter(c, root, "output", SJ_OPTIONAL, &ct_sk_output);
    if (!o) return;
    const char *file = NULL;
    if (ct_sj_string(c, o, "file", SJ_OPTIONAL, NULL, &file) && file) {
        if (!file[0]) ct_sj_error(c, "file", "must not be empty");
        sc->output_file = ct_sj_strdup(c, file);
    }
    ct_sj_int(c, o, "frames_every", SJ_OPTIONAL, 10, 0, INT_MAX, &sc->frames_every);
    ct_sj_int(c, o, "flush_every", SJ_OPTIONAL, 10, 1, INT_MAX, &sc->flush_every);
    ct_sj_int(c, o, "compress", SJ_OPTIONAL, 0, 0, 9, &sc->frames_compress);
    ct_sj_pop(c);
}

static void read_initial_state(sj *c, json_t *root, ct_scene *sc)
{
    if (!json_object_get(root, "initial_state")) return; /* absent: the rest state (no default filled in) */
    json_t *o = ct_sj_enter(c, root, "initial_state", SJ_OPTIONAL, &ct_sk_initial_state);
    if (!o) return;
    const char *file = NULL;
    if (ct_sj_string(c, o, "file", SJ_REQUIRED, NULL, &file) && file) {
        if (!file[0])
            ct_sj_error(c, "file", "must not be empty");
        else if (!(sc->init_file = ct_scene_join_path(sc->dir, file)))
            c->oom = 1;
        else if (access(sc->init_file, R_OK) != 0)
            ct_sj_error(c, "file", "cannot open \"%s\": %s", sc->init_file, strerror(errno));
    }
    ct_sj_int(c, o, "frame", SJ_OPTIONAL, -1, INT_MIN, INT_MAX, &sc->init_frame);
    ct_sj_enum(c, o, "velocity", SJ_OPTIONAL, ct_sk_velocity_sources, 0, &sc->init_velocity);
    if (sc->init_velocity && sc->integrator == CT_INTEGRATOR_STATIC)
        ct_sj_error(c, "velocity", "the static integrator has no velocities (time.integrator is \"static\")");
    ct_sj_pop(c);
}

/* The frame "initial_state" names, read from the earlier run's file: /frames/x (and /frames/v)
 * of that frame into sc->init_x (sc->init_v). Whether it fits this scene's vertices is checked
 * when the simulator is built (ct_sim_create). */
static ct_status read_initial_frame(ct_scene *sc, ct_diag *diag)
{
    const char *file = sc->init_file;
    double *X = NULL, *V = NULL;
    int rank = 0;
    size_t dims[4] = {0, 0, 0, 0};
    ct_diag sub;
    ct_diag_init(&sub);
    ct_status st = ct_h5_read(file, "/frames/x", &X, &rank, dims, &sub);
    ct_diag_free(&sub);
    if (st != CT_OK) {
        st = ct_diag_add(diag, CT_EINPUT, "%s: /initial_state/file: \"%s\" has no readable /frames/x (run the "
                         "earlier scene with output.frames_every > 0)", sc->path, file);
        goto done;
    }
    sc->init_dims[0] = rank == 3 ? (long)dims[0] : 0;
    sc->init_dims[1] = rank == 3 ? (long)dims[1] : 0;
    sc->init_dims[2] = rank == 3 ? (long)dims[2] : 0;
    if (rank != 3 || dims[0] == 0) return CT_OK; /* ct_sim_create names the mismatch */
    long nf = (long)dims[0], f = sc->init_frame < 0 ? nf + sc->init_frame : sc->init_frame;
    size_t frame = dims[1] * dims[2];
    if (f < 0 || f >= nf) {
        st = ct_diag_add(diag, CT_EINPUT, "%s: /initial_state/frame: %d is out of range (\"%s\" has %ld frames)",
                         sc->path, sc->init_frame, file, nf);
        goto done;
    }
    if (sc->init_velocity) {
        size_t vd[4] = {0, 0, 0, 0};
        int vr = 0;
        ct_diag_init(&sub);
        st = ct_h5_read(file, "/frames/v", &V, &vr, vd, &sub);
        ct_diag_free(&sub);
        if (st != CT_OK || vr != 3 || vd[0] != dims[0] || vd[1] != dims[1] || vd[2] != dims[2]) {
            st = ct_diag_add(diag, CT_EINPUT, "%s: /initial_state/velocity: \"%s\" has no /frames/v matching "
                             "/frames/x", sc->path, file);
            goto done;
        }
    }
    sc->init_frame_index = f;
    /* the frame's time in the earlier run: this run's time offset */
    double *T = NULL;
    int tr = 0;
    size_t td[4] = {0, 0, 0, 0};
    sc->init_time = NAN;
    ct_diag_init(&sub);
    if (ct_h5_read(file, "/frames/time", &T, &tr, td, &sub) == CT_OK && tr == 1 && td[0] == dims[0]) sc->init_time = T[f];
    ct_diag_free(&sub);
    free(T);
    if (!(sc->init_x = malloc(frame * sizeof *sc->init_x)) || (V && !(sc->init_v = malloc(frame * sizeof *sc->init_v)))) {
        st = CT_ENOMEM;
        goto done;
    }
    memcpy(sc->init_x, X + (size_t)f * frame, frame * sizeof *X);
    if (V) memcpy(sc->init_v, V + (size_t)f * frame, frame * sizeof *V);
done:
    free(X);
    free(V);
    return st;
}

static void read_scene(sj *c, json_t *root, ct_scene *sc, const char *default_name)
{
    if (!json_is_object(root)) {
        ct_sj_error(c, NULL, "expected an object (got %s)", ct_sj_type_name(root));
        return;
    }
    ct_sj_check_keys(c, root, &ct_sk_scene);
    const char *name;
    if (ct_sj_string(c, root, "name", SJ_OPTIONAL, default_name, &name)) {
        if (!name[0] || strchr(name, '/'))
            ct_sj_error(c, "name", "must be a non-empty name without '/' (got \"%s\")", name);
        sc->name = ct_sj_strdup(c, name);
    }
    int dim = 0;
    if (ct_sj_int(c, root, "dim", SJ_REQUIRED, 0, INT_MIN, INT_MAX, &dim)) {
        if (dim == 2 || dim == 3)
            sc->dim = dim;
        else
            ct_sj_error(c, "dim", "must be 2 or 3 (got %d)", dim);
    }
    c->dim = sc->dim;
    const char *description;
    ct_sj_string(c, root, "description", SJ_OPTIONAL, NULL, &description);
    /* with a bad dim, vectors are checked for 2 or 3 components only */
    read_time(c, root, sc);
    ct_sj_vec(c, root, "gravity", SJ_OPTIONAL, sc->dim, NULL, SJ_ANY, sc->gravity);
    read_solver(c, root, &sc->solver);
    read_contact(c, root, sc);
    ct_scene_read_bodies(c, root, sc);
    ct_scene_read_obstacles(c, root, sc);
    ct_scene_check_participant_names(c, sc);
    read_springs(c, root, sc);
    read_probes(c, root, sc);
    read_output(c, root, sc);
    read_initial_state(c, root, sc);
}

/* ---------------- entry points ---------------- */

void ct_scene_init(ct_scene *sc) { memset(sc, 0, sizeof *sc); }

static void free_mesh_spec(ct_mesh_spec *m)
{
    free(m->path);
    free(m->points);
    free(m->json_path);
}

void ct_scene_free(ct_scene *sc)
{
    if (!sc) return;
    for (int b = 0; b < sc->nbodies && sc->bodies; ++b) {
        ct_body_spec *bs = &sc->bodies[b];
        free(bs->name);
        free_mesh_spec(&bs->mesh);
        free_mesh_spec(&bs->coarse);
        for (int k = 0; k < bs->nfixed && bs->fixed; ++k) {
            free(bs->fixed[k].sel.indices);
            free(bs->fixed[k].seg);
        }
        free(bs->fixed);
        for (int k = 0; k < bs->nloads && bs->loads; ++k) free(bs->loads[k].sel.indices);
        free(bs->loads);
    }
    free(sc->bodies);
    for (int k = 0; k < sc->nobstacles && sc->obstacles; ++k) free(sc->obstacles[k].name);
    free(sc->obstacles);
    for (int k = 0; k < sc->nprobes && sc->probes; ++k) {
        free(sc->probes[k].name);
        free(sc->probes[k].sel.indices);
    }
    free(sc->probes);
    for (int k = 0; k < sc->nsprings && sc->springs; ++k) {
        free(sc->springs[k].name);
        free(sc->springs[k].end[0].sel.indices);
        free(sc->springs[k].end[1].sel.indices);
    }
    free(sc->springs);
    ct_params_free(&sc->params);
    free(sc->path);
    free(sc->dir);
    free(sc->name);
    free(sc->model_name);
    free(sc->output_file);
    free(sc->init_file);
    free(sc->init_x);
    free(sc->init_v);
    free(sc->resolved_json);
    ct_scene_init(sc);
}

/* Base name of path without a ".json" suffix (caller frees). */
static char *default_scene_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(base);
    if (n > 5 && strcmp(base + n - 5, ".json") == 0) n -= 5;
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, base, n);
        s[n] = '\0';
    }
    return s;
}

/* Parse `len` bytes of JSON text and validate them into sc (already holding path/dir). */
static ct_status parse_buffer(ct_scene *sc, const char *text, size_t len, const char *const *overrides,
                              int noverrides, ct_diag *diag)
{
    json_error_t jerr;
    json_t *root = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return ct_diag_add(diag, CT_EINPUT, "%s:%d:%d: JSON syntax error: %s", sc->path, jerr.line, jerr.column,
                           jerr.text);
    int bad_overrides = 0;
    for (int i = 0; i < noverrides; ++i) {
        if (!json_is_object(root)) break;
        if (overrides[i] && ct_sj_apply_override(root, overrides[i], diag) != 0) bad_overrides++;
    }

    sj c;
    ct_sj_init(&c, sc->path, diag);
    char *default_name = default_scene_name(sc->path);
    if (!default_name) c.oom = 1;
    else read_scene(&c, root, sc, default_name);
    free(default_name);

    ct_status st = CT_OK;
    if (c.oom) st = ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", sc->path);
    else if (c.nerr || bad_overrides) st = CT_EINPUT;
    if (st == CT_OK) {
        sc->resolved_json = ct_sj_dump(root);
        if (!sc->resolved_json) st = ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", sc->path);
    }
    json_decref(root);
    if (st == CT_OK && sc->init_file) st = read_initial_frame(sc, diag);
    return st;
}

static ct_status set_origin(ct_scene *sc, const char *path, const char *dir, ct_diag *diag)
{
    ct_scene_init(sc);
    sc->path = strdup(path);
    sc->dir = strdup(dir);
    if (!sc->path || !sc->dir) return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
    return CT_OK;
}

ct_status ct_scene_parse(ct_scene *sc, const char *text, const char *name, const char *base_dir,
                         const char *const *overrides, int noverrides, ct_diag *diag)
{
    ct_status st = set_origin(sc, name ? name : "<string>", base_dir ? base_dir : ".", diag);
    if (st != CT_OK) return st;
    if (!text) return ct_diag_add(diag, CT_EINPUT, "%s: no scene text", sc->path);
    return parse_buffer(sc, text, strlen(text), overrides, noverrides, diag);
}

ct_status ct_scene_load(ct_scene *sc, const char *path, const char *const *overrides, int noverrides,
                        ct_diag *diag)
{
    /* the folder of the scene file, for relative mesh paths */
    const char *slash = strrchr(path, '/');
    size_t dlen = slash ? (size_t)(slash - path) : 1;
    char *dir = malloc(dlen + 1);
    if (!dir) return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
    if (!slash) strcpy(dir, ".");
    else if (dlen == 0) strcpy(dir, "/");
    else {
        memcpy(dir, path, dlen);
        dir[dlen] = '\0';
    }
    ct_status st = set_origin(sc, path, dir, diag);
    free(dir);
    if (st != CT_OK) return st;

    /* read the whole file */
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return ct_diag_add(diag, CT_EINPUT, "%s: cannot open: %s", path, strerror(EISDIR));
    FILE *f = fopen(path, "rb");
    if (!f) return ct_diag_add(diag, CT_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int read_error = ferror(f);
    int err = errno;
    fclose(f);
    if (!buf) return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
    if (read_error) {
        free(buf);
        return ct_diag_add(diag, CT_EINPUT, "%s: cannot read: %s", path, strerror(err));
    }
    st = parse_buffer(sc, buf, len, overrides, noverrides, diag);
    free(buf);
    return st;
}
