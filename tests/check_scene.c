/* check_scene.c — the strict scene parser: struct values, defaults, selectors, overrides,
 * error reporting (several at once, with JSON paths), resolved-JSON round trips and the
 * malformed-scene corpus (tests/data/scenes/bad). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contactlab/ct_scene.h"
#include "ct_test_util.h"
#include "io/scene_json.h"

#define EPS 1e-12
#define PI 3.14159265358979323846

/* ---------- helpers ---------- */

static char *data_path(const char *name) { return strdup(ct_test_data(name)); }

/* Number of messages containing `sub`. */
static int diag_count_sub(const ct_diag *d, const char *sub)
{
    int n = 0;
    for (size_t i = 0; i < d->count; ++i)
        if (strstr(d->msgs[i].text, sub)) n++;
    return n;
}

static int diag_has_exact(const ct_diag *d, const char *text)
{
    for (size_t i = 0; i < d->count; ++i)
        if (strcmp(d->msgs[i].text, text) == 0) return 1;
    return 0;
}

static void print_diag(const ct_diag *d) { ct_diag_print(d, stderr, "  diag: "); }

/* Parse text as "t.json" with mesh paths relative to tests/data/scenes. */
static ct_status parse_text(ct_scene *sc, const char *text, const char *const *ov, int nov, ct_diag *d)
{
    char *dir = data_path("scenes");
    ct_status st = ct_scene_parse(sc, text, "t.json", dir, ov, nov, d);
    free(dir);
    return st;
}

static ct_status load_scene(ct_scene *sc, const char *name, const char *const *ov, int nov, ct_diag *d)
{
    char *path = data_path(name);
    ct_status st = ct_scene_load(sc, path, ov, nov, d);
    free(path);
    return st;
}

static void assert_vec(const double *a, double x, double y, double z)
{
    ck_assert_double_eq_tol(a[0], x, EPS);
    ck_assert_double_eq_tol(a[1], y, EPS);
    ck_assert_double_eq_tol(a[2], z, EPS);
}

/* Value at a JSON pointer-like dotted path in the resolved scene. */
static json_t *resolved_get(json_t *root, const char *dotted)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", dotted);
    json_t *v = root;
    for (char *tok = strtok(buf, "."); tok && v; tok = strtok(NULL, ".")) {
        if (json_is_array(v)) v = json_array_get(v, (size_t)atoi(tok));
        else v = json_object_get(v, tok);
    }
    return v;
}

static const char *MINIMAL3D =
    "{\"dim\": 3, \"time\": {\"dt\": 0.1, \"duration\": 1},\n"
    " \"bodies\": [{\"name\": \"b\", \"mesh\": {\"generator\": \"box\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]},\n"
    "              \"material\": {\"E\": 100000, \"nu\": 0, \"density\": 1}}]}";

/* ---------- a full 3D scene ---------- */

START_TEST(test_full3d)
{
    const char *ov[] = {"bodies.0.material.E=2e5", "contact.model=none", "output.frames_every=3",
                        "bodies.1.velocity.2=-2", "solver.project_psd=false", "name=renamed"};
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = load_scene(&sc, "scenes/full3d.json", ov, 6, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_uint_eq(d.count, 0);

    ck_assert_str_eq(sc.name, "renamed");
    ck_assert_int_eq(sc.dim, 3);
    ck_assert_double_eq_tol(sc.dt, 0.01, EPS);
    ck_assert_double_eq_tol(sc.duration, 2.0, EPS);
    ck_assert_int_eq(sc.integrator, CT_INTEGRATOR_IMPLICIT_EULER);
    assert_vec(sc.gravity, 0, -9.81, 0);
    ck_assert_double_eq_tol(sc.solver.newton_tol, 1e-3, EPS);
    ck_assert_int_eq(sc.solver.max_newton_iters, 50);
    ck_assert_int_eq(sc.solver.friction_iters, -1);
    ck_assert_double_eq_tol(sc.solver.friction_tol, 1e-4, EPS);
    ck_assert_int_eq(sc.solver.threads, 1);
    ck_assert_int_eq(sc.solver.project_psd, 0);
    ck_assert_int_eq(sc.solver.max_line_search, 40);
    ck_assert_ptr_eq(sc.model, &ct_model_none);
    ck_assert_str_eq(sc.model_name, "none");
    ck_assert_int_eq(sc.params.n, 0);

    ck_assert_int_eq(sc.nbodies, 2);
    const ct_body_spec *top = &sc.bodies[0], *bot = &sc.bodies[1];
    ck_assert_str_eq(top->name, "top");
    ck_assert_int_eq(top->mesh.source, CT_MESH_BOX);
    assert_vec(top->mesh.size, 1, 0.1, 1);
    ck_assert_int_eq(top->mesh.cells[0], 4);
    ck_assert_int_eq(top->mesh.cells[1], 1);
    ck_assert_int_eq(top->mesh.cells[2], 4);
    assert_vec(top->mesh.origin, 0, 0.2, 0);
    assert_vec(top->mesh.scale, 2, 2, 2);
    assert_vec(top->mesh.rot_axis, 0, 1, 0);
    ck_assert_double_eq_tol(top->mesh.rot_angle, PI / 2, EPS);
    assert_vec(top->mesh.translate, 1, 2, 3);
    ck_assert_str_eq(top->mesh.json_path, "/bodies/0/mesh");
    ck_assert_int_eq(top->dofs, CT_DOFS_EMBEDDED);
    ck_assert_int_eq(top->coarse.source, CT_MESH_BOX);
    ck_assert_str_eq(top->coarse.json_path, "/bodies/0/dofs/coarse");
    ck_assert_int_eq(top->coarse.cells[0], 2);
    assert_vec(top->coarse.scale, 2, 2, 2);
    ck_assert_int_eq(top->has_material, 1);
    ck_assert_int_eq(top->kinematic, 0);
    ck_assert_int_eq(top->material.kind, CT_MAT_NEO_HOOKEAN);
    ck_assert_double_eq_tol(top->material.E, 2e5, EPS);
    ck_assert_double_eq_tol(top->material.nu, 0.4, EPS);
    ck_assert_double_eq_tol(top->material.density, 1000, EPS);
    assert_vec(top->v0, 0, 0, 0);
    ck_assert_int_eq(top->nfixed, 1);
    const ct_dirichlet *fx = &top->fixed[0];
    ck_assert_int_eq(fx->sel.kind, CT_SEL_SIDE);
    ck_assert_int_eq(fx->sel.body, 0);
    ck_assert_int_eq(fx->sel.axis, 1);
    ck_assert_int_eq(fx->sel.sign, 1);
    ck_assert_double_eq_tol(fx->sel.tol, 1e-6, 1e-18);
    ck_assert_int_eq(fx->nseg, 2);
    ck_assert_double_eq_tol(fx->seg[0].until, 1.0, EPS);
    assert_vec(fx->seg[0].velocity, 0, 0.1, 0);
    ck_assert_double_eq(fx->seg[0].omega, 0.0);
    assert_vec(fx->seg[0].axis, 0, 0, 1);
    assert_vec(fx->seg[0].center, 0, 0, 0);
    ck_assert_double_eq_tol(fx->seg[1].until, 1.5, EPS);
    ck_assert_double_eq_tol(fx->seg[1].omega, 0.5, EPS);
    assert_vec(fx->seg[1].axis, 0, 0, 1); /* [0, 0, 3] normalised */
    assert_vec(fx->seg[1].center, 0.5, 0.25, 0.5);
    assert_vec(fx->seg[1].velocity, 0, 0, 0);
    ck_assert_int_eq(top->nloads, 0);

    ck_assert_str_eq(bot->name, "bottom");
    ck_assert_int_eq(bot->mesh.source, CT_MESH_FILE);
    char *expect_path = data_path("scenes/meshes/tet.msh");
    ck_assert_str_eq(bot->mesh.path, expect_path);
    free(expect_path);
    assert_vec(bot->mesh.scale, 1, 2, 3);
    ck_assert_int_eq(bot->dofs, CT_DOFS_FULL);
    ck_assert_int_eq(bot->material.kind, CT_MAT_STVK);
    ck_assert_double_eq_tol(bot->material.E, 2e4, EPS);
    assert_vec(bot->v0, 0, 0, -2);
    ck_assert_int_eq(bot->nfixed, 1);
    ck_assert_int_eq(bot->fixed[0].sel.kind, CT_SEL_SIDE);
    ck_assert_int_eq(bot->fixed[0].sel.sign, -1);
    ck_assert_int_eq(bot->fixed[0].sel.body, 1);
    ck_assert_double_eq_tol(bot->fixed[0].sel.tol, 0.01, EPS);
    ck_assert_int_eq(bot->fixed[0].nseg, 0);
    ck_assert_int_eq(bot->nloads, 2);
    const ct_load *l0 = &bot->loads[0], *l1 = &bot->loads[1];
    ck_assert_int_eq(l0->sel.kind, CT_SEL_BOX);
    ck_assert_int_eq(l0->sel.body, 1);
    assert_vec(l0->sel.lo, 0, 0, 0);
    assert_vec(l0->sel.hi, 1, 0.5, 1);
    assert_vec(l0->force, 0, 0, 0);
    assert_vec(l0->force_rate, 0, -50, 0);
    ck_assert_double_eq_tol(l0->ramp_until, 1.5, EPS);
    ck_assert_int_eq(l0->dist, CT_LOAD_LINEAR);
    ck_assert_int_eq(l0->axis, 0);
    ck_assert_double_eq_tol(l0->center, 0.5, EPS);
    ck_assert_double_eq_tol(l0->length, 1.0, EPS);
    ck_assert_int_eq(l0->weight, CT_WEIGHT_AREA);
    ck_assert_int_eq(l1->sel.kind, CT_SEL_INDICES);
    ck_assert_int_eq(l1->sel.nindices, 2);
    ck_assert_int_eq(l1->sel.indices[0], 0);
    ck_assert_int_eq(l1->sel.indices[1], 3);
    assert_vec(l1->force, 1, 0, 0);
    ck_assert(isinf(l1->ramp_until));
    ck_assert_int_eq(l1->dist, CT_LOAD_UNIFORM);
    ck_assert_int_eq(l1->weight, CT_WEIGHT_VOLUME);

    ck_assert_int_eq(sc.nobstacles, 1);
    ck_assert_str_eq(sc.obstacles[0].name, "ground");
    assert_vec(sc.obstacles[0].point, 0, -1, 0);
    assert_vec(sc.obstacles[0].normal, 0, 1, 0);
    ck_assert_int_eq(ct_scene_participant(&sc, "top"), 0);
    ck_assert_int_eq(ct_scene_participant(&sc, "ground"), 2);
    ck_assert_int_eq(ct_scene_participant(&sc, "nobody"), -1);

    ck_assert_int_eq(sc.nprobes, 7);
    const ct_probe_spec *p = sc.probes;
    ck_assert_str_eq(p[0].name, "adhesion_force");
    ck_assert_int_eq(p[0].kind, CT_PROBE_FORCE);
    ck_assert_int_eq(p[0].category, CT_FORCE_ADHESION_NORMAL);
    ck_assert_int_eq(p[0].pair[0], 0);
    ck_assert_int_eq(p[0].pair[1], 1);
    ck_assert_int_eq(p[0].component, 1);
    ck_assert_int_eq(p[1].kind, CT_PROBE_MEAN_DISPLACEMENT);
    ck_assert_int_eq(p[1].sel.body, 1);
    ck_assert_int_eq(p[1].sel.kind, CT_SEL_ALL);
    ck_assert_int_eq(p[1].component, 1);
    ck_assert_int_eq(p[2].kind, CT_PROBE_REACTION);
    ck_assert_int_eq(p[2].sel.body, 0);
    ck_assert_int_eq(p[2].sel.kind, CT_SEL_SIDE);
    ck_assert_int_eq(p[2].component, CT_COMPONENT_NORM);
    ck_assert_int_eq(p[3].category, CT_FORCE_BARRIER);
    ck_assert_int_eq(p[3].pair[0], 1);
    ck_assert_int_eq(p[3].pair[1], 2);
    ck_assert_int_eq(p[3].component, CT_COMPONENT_ALL);
    ck_assert_int_eq(p[4].kind, CT_PROBE_MEAN_VELOCITY);
    ck_assert_int_eq(p[4].sel.body, -1);
    ck_assert_int_eq(p[4].sel.kind, CT_SEL_ALL);
    ck_assert_int_eq(p[5].kind, CT_PROBE_MEAN_POSITION);
    ck_assert_int_eq(p[5].sel.kind, CT_SEL_INDICES);
    ck_assert_int_eq(p[5].sel.nindices, 2);
    ck_assert_int_eq(p[5].component, 2);
    ck_assert_int_eq(p[6].kind, CT_PROBE_ENERGY);
    ck_assert_int_eq(p[6].energy, CT_ENERGY_TOTAL);

    ck_assert_str_eq(sc.output_file, "out/full3d.h5");
    ck_assert_int_eq(sc.frames_every, 3);
    ck_assert_int_eq(sc.flush_every, 2);

    /* the overrides are in the resolved scene */
    ck_assert_ptr_nonnull(sc.resolved_json);
    json_t *r = json_loads(sc.resolved_json, 0, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(json_number_value(resolved_get(r, "bodies.0.material.E")), 2e5);
    ck_assert_int_eq(json_integer_value(resolved_get(r, "output.frames_every")), 3);
    ck_assert(json_is_false(resolved_get(r, "solver.project_psd")));
    json_decref(r);

    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- defaults ---------- */

START_TEST(test_defaults)
{
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = ct_scene_parse(&sc, MINIMAL3D, "some/dir/minimal.json", "some/dir", NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_str_eq(sc.name, "minimal");
    ck_assert_str_eq(sc.path, "some/dir/minimal.json");
    ck_assert_str_eq(sc.dir, "some/dir");
    ck_assert_int_eq(sc.integrator, CT_INTEGRATOR_IMPLICIT_EULER);
    assert_vec(sc.gravity, 0, 0, 0);
    ck_assert_double_eq_tol(sc.solver.newton_tol, 1e-2, EPS);
    ck_assert_int_eq(sc.solver.max_newton_iters, 200);
    ck_assert_int_eq(sc.solver.friction_iters, 1);
    ck_assert_double_eq_tol(sc.solver.friction_tol, 1e-4, EPS);
    ck_assert_int_eq(sc.solver.threads, 0);
    ck_assert_int_eq(sc.solver.project_psd, 1);
    ck_assert_int_eq(sc.solver.max_line_search, 40);
    ck_assert_str_eq(sc.model_name, "none");
    ck_assert_ptr_eq(sc.model, &ct_model_none);
    ck_assert_int_eq(sc.nobstacles, 0);
    ck_assert_int_eq(sc.nprobes, 0);
    ck_assert_ptr_null(sc.output_file);
    ck_assert_int_eq(sc.frames_every, 10);
    ck_assert_int_eq(sc.flush_every, 10);
    const ct_body_spec *b = &sc.bodies[0];
    ck_assert_int_eq(b->material.kind, CT_MAT_NEO_HOOKEAN);
    ck_assert_double_eq(b->material.E, 1e5); /* an integer where a real is expected */
    ck_assert_int_eq(b->dofs, CT_DOFS_FULL);
    ck_assert_int_eq(b->kinematic, 0);
    ck_assert_int_eq(b->nfixed, 0);
    ck_assert_int_eq(b->nloads, 0);
    assert_vec(b->v0, 0, 0, 0);
    assert_vec(b->mesh.origin, 0, 0, 0);
    assert_vec(b->mesh.scale, 1, 1, 1);
    assert_vec(b->mesh.rot_axis, 0, 0, 1);
    ck_assert_double_eq(b->mesh.rot_angle, 0.0);
    assert_vec(b->mesh.translate, 0, 0, 0);

    /* every default is written into the resolved scene */
    json_t *r = json_loads(sc.resolved_json, 0, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_str_eq(json_string_value(resolved_get(r, "name")), "minimal");
    ck_assert_str_eq(json_string_value(resolved_get(r, "time.integrator")), "implicit_euler");
    ck_assert_uint_eq(json_array_size(resolved_get(r, "gravity")), 3);
    ck_assert_double_eq(json_number_value(resolved_get(r, "solver.newton_tol")), 1e-2);
    ck_assert_int_eq(json_integer_value(resolved_get(r, "solver.max_line_search")), 40);
    ck_assert(json_is_true(resolved_get(r, "solver.project_psd")));
    ck_assert_str_eq(json_string_value(resolved_get(r, "contact.model")), "none");
    ck_assert_str_eq(json_string_value(resolved_get(r, "bodies.0.material.model")), "neo_hookean");
    ck_assert_str_eq(json_string_value(resolved_get(r, "bodies.0.dofs.mode")), "full");
    ck_assert(json_is_false(resolved_get(r, "bodies.0.kinematic")));
    ck_assert_uint_eq(json_array_size(resolved_get(r, "bodies.0.fixed")), 0);
    ck_assert_double_eq(json_number_value(resolved_get(r, "bodies.0.mesh.transform.scale")), 1.0);
    ck_assert_uint_eq(json_array_size(resolved_get(r, "bodies.0.mesh.origin")), 3);
    ck_assert_uint_eq(json_array_size(resolved_get(r, "obstacles")), 0);
    ck_assert_int_eq(json_integer_value(resolved_get(r, "output.frames_every")), 10);
    ck_assert_ptr_null(resolved_get(r, "output.file")); /* default: none */
    json_decref(r);
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- 2D ---------- */

START_TEST(test_plate2d)
{
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = load_scene(&sc, "scenes/plate2d.json", NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_str_eq(sc.name, "plate2d");
    ck_assert_int_eq(sc.dim, 2);
    assert_vec(sc.gravity, 0, -9.81, 0);
    ck_assert_int_eq(sc.nbodies, 3);
    const ct_body_spec *plate = &sc.bodies[0], *floor_ = &sc.bodies[1], *bowl = &sc.bodies[2];
    ck_assert_int_eq(plate->mesh.source, CT_MESH_RECT);
    ck_assert_double_eq_tol(plate->mesh.size[0], 1, EPS);
    ck_assert_double_eq_tol(plate->mesh.size[1], 0.2, EPS);
    ck_assert_int_eq(plate->mesh.cells[0], 5);
    ck_assert_int_eq(plate->mesh.cells[1], 1);
    ck_assert_double_eq_tol(plate->mesh.origin[1], 0.1, EPS);
    ck_assert_double_eq_tol(plate->mesh.rot_angle, PI / 6, EPS);
    assert_vec(plate->mesh.rot_axis, 0, 0, 1);
    assert_vec(plate->mesh.translate, 0.5, 0, 0);
    ck_assert_int_eq(plate->material.kind, CT_MAT_FIXED_COROTATED);
    ck_assert_int_eq(plate->nloads, 1);
    ck_assert_int_eq(plate->loads[0].sel.kind, CT_SEL_SIDE);
    ck_assert_int_eq(plate->loads[0].sel.axis, 0);
    ck_assert_int_eq(plate->loads[0].sel.sign, 1);
    ck_assert_int_eq(plate->loads[0].dist, CT_LOAD_LINEAR);
    ck_assert_int_eq(plate->loads[0].axis, 1);
    ck_assert_double_eq(plate->loads[0].length, 0.0); /* automatic */
    assert_vec(plate->loads[0].force, 0, -1, 0);

    ck_assert_int_eq(floor_->mesh.source, CT_MESH_POLYLINE);
    ck_assert_int_eq(floor_->mesh.npoints, 3);
    ck_assert_int_eq(floor_->mesh.closed, 1);
    ck_assert_double_eq(floor_->mesh.points[0], -1);
    ck_assert_double_eq(floor_->mesh.points[5], -1);
    ck_assert_int_eq(floor_->kinematic, 1);
    ck_assert_int_eq(floor_->has_material, 0);
    ck_assert_int_eq(floor_->nfixed, 1);
    ck_assert_int_eq(floor_->fixed[0].sel.kind, CT_SEL_ALL);

    ck_assert_int_eq(bowl->mesh.source, CT_MESH_ARC);
    ck_assert_double_eq_tol(bowl->mesh.center[0], 0.5, EPS);
    ck_assert_double_eq_tol(bowl->mesh.radius, 0.8, EPS);
    ck_assert_double_eq_tol(bowl->mesh.angle0, 200 * PI / 180, EPS);
    ck_assert_double_eq_tol(bowl->mesh.angle1, 340 * PI / 180, EPS);
    ck_assert_int_eq(bowl->mesh.segments, 16);
    ck_assert_int_eq(bowl->kinematic, 1);
    const ct_motion_segment *s = &bowl->fixed[0].seg[0];
    ck_assert_int_eq(bowl->fixed[0].nseg, 1);
    ck_assert_double_eq_tol(s->omega, 1.0, EPS);
    assert_vec(s->axis, 0, 0, 1);
    assert_vec(s->velocity, 0, -0.1, 0);
    assert_vec(s->center, 0.5, 1, 0);

    ck_assert_int_eq(sc.probes[0].sel.kind, CT_SEL_SIDE);
    ck_assert_int_eq(sc.probes[0].sel.axis, 1);
    ck_assert_int_eq(sc.probes[0].sel.sign, -1);
    ck_assert_int_eq(sc.probes[0].component, 0);
    ck_assert_int_eq(sc.probes[1].category, CT_FORCE_FRICTION);
    ck_assert_int_eq(sc.probes[1].component, CT_COMPONENT_NORM);
    json_t *r = json_loads(sc.resolved_json, 0, NULL);
    ck_assert(json_is_true(resolved_get(r, "bodies.1.kinematic")));
    ck_assert_uint_eq(json_array_size(resolved_get(r, "gravity")), 2);
    json_decref(r);
    ct_scene_free(&sc);

    /* 2D-only rules: no z side, no z component, no rotation axis */
    ct_diag_clear(&d);
    const char *bad2d =
        "{\"dim\": 2, \"time\": {\"dt\": 0.1, \"duration\": 1},\n"
        " \"bodies\": [{\"name\": \"p\", \"mesh\": {\"generator\": \"rect\", \"size\": [1, 1], \"cells\": [1, 1],\n"
        "   \"transform\": {\"rotate\": {\"axis\": [0, 0, 1], \"angle_deg\": 3}}},\n"
        "   \"material\": {\"E\": 1, \"nu\": 0, \"density\": 1}, \"fixed\": {\"select\": {\"side\": \"-z\"}}}],\n"
        " \"probes\": [{\"name\": \"q\", \"quantity\": \"mean_position\", \"select\": {\"body\": \"p\"}, "
        "\"component\": \"z\"}]}";
    ck_assert_int_eq(parse_text(&sc, bad2d, NULL, 0, &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 3);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /bodies/0/mesh/transform/rotate/axis: unknown key"), 1);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /bodies/0/fixed/select/side: must be one of: +x, -x, +y, -y"), 1);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /probes/0/component: must be one of: x, y, all, norm"), 1);
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

START_TEST(test_kinematic3d)
{
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = load_scene(&sc, "scenes/kinematic3d.json", NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_int_eq(sc.integrator, CT_INTEGRATOR_STATIC);
    ck_assert_int_eq(sc.bodies[0].mesh.source, CT_MESH_FILE);
    ck_assert_int_eq(sc.bodies[0].kinematic, 1);
    ck_assert_int_eq(sc.bodies[0].has_material, 0);
    ck_assert_int_eq(sc.bodies[1].kinematic, 1);
    ck_assert_int_eq(sc.bodies[1].has_material, 0);
    ck_assert_int_eq(sc.bodies[1].nfixed, 2);
    ck_assert_int_eq(sc.bodies[1].fixed[1].sel.kind, CT_SEL_ALL);
    ck_assert_int_eq(sc.bodies[2].kinematic, 0);
    ck_assert_int_eq(sc.bodies[2].has_material, 1);
    ct_scene_free(&sc);

    /* a kinematic body takes no material, must be fully fixed, cannot be embedded */
    ct_diag_clear(&d);
    const char *bad =
        "{\"dim\": 3, \"time\": {\"dt\": 0.1, \"duration\": 1}, \"bodies\": [\n"
        " {\"name\": \"a\", \"kinematic\": true, \"mesh\": {\"generator\": \"box\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]},\n"
        "  \"material\": {\"E\": 1, \"nu\": 0, \"density\": 1}, \"fixed\": {\"select\": \"all\"}},\n"
        " {\"name\": \"b\", \"mesh\": {\"file\": \"meshes/square.obj\"}, \"kinematic\": false, \"fixed\": {\"select\": \"all\"}},\n"
        " {\"name\": \"c\", \"mesh\": {\"file\": \"meshes/square.obj\"}, \"fixed\": {\"select\": {\"side\": \"+x\"}}},\n"
        " {\"name\": \"e\", \"kinematic\": true, \"mesh\": {\"generator\": \"box\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]},\n"
        "  \"dofs\": {\"mode\": \"embedded\", \"coarse\": {\"file\": \"meshes/square.obj\"}}, \"fixed\": {\"select\": \"all\"}}]}";
    ck_assert_int_eq(parse_text(&sc, bad, NULL, 0, &d), CT_EINPUT);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /bodies/0/material: not allowed for a kinematic body"), 1);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /bodies/1/kinematic: an .obj surface mesh is surface-only"), 1);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /bodies/2: a kinematic body (an .obj surface mesh) must be fully fixed"), 1);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /bodies/3/dofs/coarse: must be a volumetric mesh"), 1);
    ck_assert_int_eq(diag_count_sub(&d, "t.json: /bodies/3/dofs: a kinematic body cannot be embedded"), 1);
    ck_assert_uint_eq(d.count, 5);
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- selectors ---------- */

START_TEST(test_selectors)
{
    const char *text =
        "{\"dim\": 3, \"time\": {\"dt\": 0.1, \"duration\": 1},\n"
        " \"bodies\": [{\"name\": \"b\", \"mesh\": {\"generator\": \"box\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]},\n"
        "   \"material\": {\"E\": 1, \"nu\": 0, \"density\": 1},\n"
        "   \"loads\": [{\"force\": [0, 0, 1]},\n"
        "             {\"select\": \"all\", \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"side\": \"+x\"}, \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"side\": \"-x\", \"tol\": 0}, \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"side\": \"+y\"}, \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"side\": \"-y\"}, \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"side\": \"+z\"}, \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"side\": \"-z\", \"tol\": 0.5}, \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"box\": {\"min\": [-1, -2, -3], \"max\": [1, 2, 3]}}, \"force\": [0, 0, 1]},\n"
        "             {\"select\": {\"indices\": [5, 0, 7.0]}, \"force\": [0, 0, 1]}]}],\n"
        " \"probes\": [{\"name\": \"p0\", \"quantity\": \"mean_velocity\", \"select\": {\"body\": \"b\"}},\n"
        "            {\"name\": \"p1\", \"quantity\": \"mean_velocity\", \"select\": {\"body\": \"all\"}},\n"
        "            {\"name\": \"p2\", \"quantity\": \"mean_velocity\", \"select\": {\"body\": \"b\", \"side\": \"-z\"}},\n"
        "            {\"name\": \"p3\", \"quantity\": \"mean_velocity\",\n"
        "             \"select\": {\"body\": \"b\", \"box\": {\"min\": [0, 0, 0], \"max\": [0, 0, 0]}}},\n"
        "            {\"name\": \"p4\", \"quantity\": \"reaction\", \"select\": {\"body\": \"b\", \"indices\": [2]}}]}";
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = parse_text(&sc, text, NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    const ct_load *L = sc.bodies[0].loads;
    ck_assert_int_eq(sc.bodies[0].nloads, 10);
    ck_assert_int_eq(L[0].sel.kind, CT_SEL_ALL);
    ck_assert_int_eq(L[0].sel.body, 0);
    ck_assert_int_eq(L[1].sel.kind, CT_SEL_ALL);
    for (int k = 0; k < 6; ++k) {
        const ct_selector *s = &L[2 + k].sel;
        ck_assert_int_eq(s->kind, CT_SEL_SIDE);
        ck_assert_int_eq(s->axis, k / 2);
        ck_assert_int_eq(s->sign, k % 2 ? -1 : 1);
        ck_assert_int_eq(s->body, 0);
    }
    ck_assert_double_eq(L[3].sel.tol, 0.0);
    ck_assert_double_eq(L[7].sel.tol, 0.5);
    ck_assert_double_eq(L[4].sel.tol, 1e-6);
    ck_assert_int_eq(L[8].sel.kind, CT_SEL_BOX);
    assert_vec(L[8].sel.lo, -1, -2, -3);
    assert_vec(L[8].sel.hi, 1, 2, 3);
    ck_assert_int_eq(L[9].sel.kind, CT_SEL_INDICES);
    ck_assert_int_eq(L[9].sel.nindices, 3);
    ck_assert_int_eq(L[9].sel.indices[0], 5);
    ck_assert_int_eq(L[9].sel.indices[2], 7);
    const ct_probe_spec *P = sc.probes;
    ck_assert_int_eq(P[0].sel.body, 0);
    ck_assert_int_eq(P[0].sel.kind, CT_SEL_ALL);
    ck_assert_int_eq(P[1].sel.body, -1);
    ck_assert_int_eq(P[1].sel.kind, CT_SEL_ALL);
    ck_assert_int_eq(P[2].sel.kind, CT_SEL_SIDE);
    ck_assert_int_eq(P[2].sel.axis, 2);
    ck_assert_int_eq(P[2].sel.sign, -1);
    ck_assert_int_eq(P[3].sel.kind, CT_SEL_BOX);
    ck_assert_int_eq(P[4].kind, CT_PROBE_REACTION);
    ck_assert_int_eq(P[4].sel.kind, CT_SEL_INDICES);
    ck_assert_int_eq(P[4].sel.indices[0], 2);
    ct_scene_free(&sc);

    /* selector mistakes, all reported */
    const char *bad =
        "{\"dim\": 3, \"time\": {\"dt\": 0.1, \"duration\": 1},\n"
        " \"bodies\": [{\"name\": \"b\", \"mesh\": {\"generator\": \"box\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]},\n"
        "   \"material\": {\"E\": 1, \"nu\": 0, \"density\": 1},\n"
        "   \"fixed\": [{\"select\": \"everything\"}, {\"select\": {}}, {\"select\": {\"side\": \"+x\", \"indices\": [1]}},\n"
        "             {\"select\": {\"tol\": 1, \"indices\": [1]}}, {\"select\": {\"indices\": []}},\n"
        "             {\"select\": {\"side\": \"+x\", \"tol\": -1}}, {\"select\": {\"body\": \"b\"}}]}],\n"
        " \"probes\": [{\"name\": \"p0\", \"quantity\": \"mean_velocity\", \"select\": \"all\"},\n"
        "            {\"name\": \"p1\", \"quantity\": \"mean_velocity\", \"select\": {\"body\": \"all\", \"side\": \"+x\"}},\n"
        "            {\"name\": \"p2\", \"quantity\": \"mean_velocity\"}]}";
    ct_diag_clear(&d);
    ck_assert_int_eq(parse_text(&sc, bad, NULL, 0, &d), CT_EINPUT);
    const char *expect[] = {
        "t.json: /bodies/0/fixed/0/select: expected \"all\" or an object with one of: side, box, indices (got \"everything\")",
        "t.json: /bodies/0/fixed/1/select: expected one of: side, box, indices (or the string \"all\")",
        "t.json: /bodies/0/fixed/2/select: give only one of: side, box, indices",
        "t.json: /bodies/0/fixed/3/select/tol: only used with \"side\"",
        "t.json: /bodies/0/fixed/4/select/indices: expected at least 1 element (got 0)",
        "t.json: /bodies/0/fixed/5/select/tol: must be >= 0 (got -1)",
        "t.json: /bodies/0/fixed/6/select/body: unknown key (expected one of: side, tol, box, indices, allow_empty)",
        "t.json: /probes/0/select: expected an object with \"body\" (got string)",
        "t.json: /probes/1/select: \"body\": \"all\" selects every vertex; it takes no side, box or indices",
        "t.json: /probes/2: missing required key \"select\"",
    };
    size_t ne = sizeof expect / sizeof *expect;
    for (size_t i = 0; i < ne; ++i) {
        if (!diag_has_exact(&d, expect[i])) {
            print_diag(&d);
            ck_abort_msg("missing message: %s", expect[i]);
        }
    }
    /* fixed/6 also lacks a selector kind */
    ck_assert_uint_eq(d.count, ne + 1);
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- overrides ---------- */

START_TEST(test_overrides)
{
    const char *ov[] = {
        "time.dt=0.02",                      /* a number */
        "bodies.0.name=renamed",             /* a plain string */
        "bodies.0.material.model=\"stvk\"",  /* a JSON string */
        "output.file=run.h5",                /* creates the missing "output" object */
        "solver.threads=4",                  /* creates "solver" */
        "gravity=[0, -1, 0]",                /* a JSON array */
        "gravity.2=-3",                      /* an array element */
        "bodies.0.mesh.cells.2=3",           /* nested array element */
        "bodies.0.velocity={\"x\": 1}",      /* replaced below */
        "bodies.0.velocity=[1, 2, 3]",       /* later overrides win */
        "contact.model=none",
    };
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = parse_text(&sc, MINIMAL3D, ov, (int)(sizeof ov / sizeof *ov), &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_double_eq_tol(sc.dt, 0.02, EPS);
    ck_assert_str_eq(sc.bodies[0].name, "renamed");
    ck_assert_int_eq(sc.bodies[0].material.kind, CT_MAT_STVK);
    ck_assert_str_eq(sc.output_file, "run.h5");
    ck_assert_int_eq(sc.solver.threads, 4);
    assert_vec(sc.gravity, 0, -1, -3);
    ck_assert_int_eq(sc.bodies[0].mesh.cells[2], 3);
    assert_vec(sc.bodies[0].v0, 1, 2, 3);
    ct_scene_free(&sc);

    /* bad overrides: each reported, exit status 2 */
    const char *bad[] = {"bodies.7.name=x", "time.dt.x=1", "nodot", "a..b=1", "bodies.x=1", "=3",
                         "bodies.0.material.E=-1"};
    ct_diag_clear(&d);
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, bad, 7, &d), CT_EINPUT);
    ck_assert_int_eq(ct_status_exit_code(ct_diag_status(&d)), 2);
    const char *expect[] = {
        "--set bodies.7.name=x: /bodies/7: no such element",
        "--set time.dt.x=1: /time/dt/x: no such element (/time/dt is a number, not an object or array)",
        "--set nodot: expected key.path=value",
        "--set a..b=1: empty key in path",
        "--set bodies.x=1: /bodies/x: no such element",
        "--set =3: expected key.path=value",
        "t.json: /bodies/0/material/E: must be > 0 (got -1)",
    };
    for (size_t i = 0; i < sizeof expect / sizeof *expect; ++i) {
        if (!diag_has_exact(&d, expect[i])) {
            print_diag(&d);
            ck_abort_msg("missing message: %s", expect[i]);
        }
    }
    if (d.count != 7) print_diag(&d);
    ck_assert_uint_eq(d.count, 7);
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- several errors at once ---------- */

START_TEST(test_four_errors)
{
    const char *text =
        "{\"dim\": 3, \"colour\": \"red\", \"time\": {\"dt\": -1, \"duration\": 1},\n"
        " \"bodies\": [{\"name\": \"b\", \"mesh\": {\"generator\": \"box\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]},\n"
        "              \"material\": {\"E\": \"big\", \"nu\": 0, \"density\": 1}}],\n"
        " \"probes\": [{\"name\": \"g\", \"quantity\": \"mean_position\", \"select\": {\"body\": \"ghost\"}}]}";
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ck_assert_int_eq(parse_text(&sc, text, NULL, 0, &d), CT_EINPUT);
    if (d.count != 4) print_diag(&d);
    ck_assert_uint_eq(d.count, 4);
    ck_assert(diag_has_exact(&d, "t.json: /colour: unknown key (expected one of: name, description, dim, time, gravity, "
                                 "solver, contact, bodies, obstacles, springs, probes, output, initial_state)"));
    ck_assert(diag_has_exact(&d, "t.json: /time/dt: must be > 0 (got -1)"));
    ck_assert(diag_has_exact(&d, "t.json: /bodies/0/material/E: expected a number (got string)"));
    ck_assert(diag_has_exact(&d, "t.json: /probes/0/select/body: no body named \"ghost\""));
    ck_assert_ptr_null(sc.resolved_json);
    ct_scene_free(&sc);
    ct_scene_free(&sc); /* freeing twice is harmless */

    /* message formats: missing key names the parent; unknown key lists the schema */
    ct_diag_clear(&d);
    const char *text2 =
        "{\"dim\": 3, \"time\": {\"duration\": 1},\n"
        " \"bodies\": [{\"name\": \"b\", \"foo\": 1, \"mesh\": {\"generator\": \"box\", \"size\": [1, 1], \"cells\": [1, 1, 0]},\n"
        "              \"material\": {\"E\": 1, \"nu\": -1, \"density\": 1}}]}";
    ck_assert_int_eq(parse_text(&sc, text2, NULL, 0, &d), CT_EINPUT);
    const char *expect[] = {
        "t.json: /time: missing required key \"dt\"",
        "t.json: /bodies/0/foo: unknown key (expected one of: name, mesh, dofs, kinematic, material, velocity, "
        "fixed, loads, contact)",
        "t.json: /bodies/0/mesh/size: expected 3 numbers (got 2)",
        "t.json: /bodies/0/mesh/cells/2: must be >= 1 (got 0)",
        "t.json: /bodies/0/material/nu: must be > -1 (got -1)",
    };
    for (size_t i = 0; i < sizeof expect / sizeof *expect; ++i) {
        if (!diag_has_exact(&d, expect[i])) {
            print_diag(&d);
            ck_abort_msg("missing message: %s", expect[i]);
        }
    }
    ck_assert_uint_eq(d.count, 5);
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- numbers ---------- */

START_TEST(test_numbers)
{
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    /* 2.0 is an integer; 1.5 is not; integers are fine as reals; huge ints are out of range */
    const char *ov[] = {"bodies.0.mesh.cells.0=2.0", "solver.max_newton_iters=1.5", "time.duration=3",
                        "solver.threads=4294967297", "bodies.0.material.nu=0.49999"};
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, ov, 5, &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 2);
    ck_assert(diag_has_exact(&d, "t.json: /solver/max_newton_iters: must be an integer (got 1.5)"));
    ck_assert(diag_has_exact(&d, "t.json: /solver/threads: must be <= 4096 (got 4294967297)"));
    ck_assert_int_eq(sc.bodies[0].mesh.cells[0], 2);
    ck_assert_double_eq(sc.duration, 3.0);
    ct_scene_free(&sc);

    /* a value that is not valid JSON becomes a string (and then fails the type check) */
    const char *ov2[] = {"time.dt=1e999", "time.duration=NaN"};
    ct_diag_clear(&d);
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, ov2, 2, &d), CT_EINPUT);
    ck_assert(diag_has_exact(&d, "t.json: /time/dt: expected a number (got string)"));
    ck_assert(diag_has_exact(&d, "t.json: /time/duration: expected a number (got string)"));
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- files and syntax ---------- */

START_TEST(test_syntax_and_files)
{
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ck_assert_int_eq(ct_scene_parse(&sc, "{\n  \"dim\": 3,,\n}", "x.json", ".", NULL, 0, &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 1);
    ck_assert_msg(strncmp(ct_diag_last(&d), "x.json:2:", 9) == 0, "%s", ct_diag_last(&d));
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), ": JSON syntax error: "));
    ct_scene_free(&sc);

    ct_diag_clear(&d);
    ck_assert_int_eq(ct_scene_load(&sc, "/nonexistent/scene.json", NULL, 0, &d), CT_EINPUT);
    ck_assert_str_eq(ct_diag_last(&d), "/nonexistent/scene.json: cannot open: No such file or directory");
    ct_scene_free(&sc);

    ct_diag_clear(&d);
    char *dir = data_path("scenes");
    ck_assert_int_eq(ct_scene_load(&sc, dir, NULL, 0, &d), CT_EINPUT);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), ": cannot open: Is a directory"));
    free(dir);
    ct_scene_free(&sc);

    /* mesh files: relative to the scene folder, must exist, .msh or .obj only */
    ct_diag_clear(&d);
    const char *ov[] = {"bodies.0.mesh={\"file\": \"meshes/nope.msh\"}"};
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, ov, 1, &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 1);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "t.json: /bodies/0/mesh/file: cannot open \""));
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "meshes/nope.msh\": No such file or directory"));
    ct_scene_free(&sc);
    ct_diag_clear(&d);
    const char *ov2[] = {"bodies.0.mesh={\"file\": \"meshes\"}"};
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, ov2, 1, &d), CT_EINPUT);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "unsupported mesh format"));
    ct_scene_free(&sc);
    ct_diag_clear(&d);
    const char *ov3[] = {"bodies.0.mesh={\"file\": \"meshes/tet.msh\", \"generator\": \"box\"}"};
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, ov3, 1, &d), CT_EINPUT);
    ck_assert_str_eq(ct_diag_last(&d), "t.json: /bodies/0/mesh: give either \"file\" or \"generator\", not both");
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- resolved JSON round trip ---------- */

/* tidy: no real needs 17 digits, so none is printed with them */
static void roundtrip(const char *name, const char *const *ov, int nov, int tidy)
{
    ct_scene a, b;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = load_scene(&a, name, ov, nov, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    st = ct_scene_parse(&b, a.resolved_json, a.path, a.dir, NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_str_eq(a.resolved_json, b.resolved_json);
    ck_assert_str_eq(a.name, b.name);
    ck_assert_int_eq(a.nbodies, b.nbodies);
    ck_assert_int_eq(a.nprobes, b.nprobes);
    ck_assert_double_eq(a.dt, b.dt);
    for (int i = 0; i < a.nbodies; ++i) {
        ck_assert_double_eq(a.bodies[i].material.E, b.bodies[i].material.E);
        ck_assert_int_eq(a.bodies[i].nfixed, b.bodies[i].nfixed);
        ck_assert_int_eq(a.bodies[i].kinematic, b.bodies[i].kinematic);
        ck_assert_double_eq(a.bodies[i].mesh.rot_angle, b.bodies[i].mesh.rot_angle);
    }
    /* reals are printed with no more digits than they need */
    ck_assert_ptr_nonnull(strstr(a.resolved_json, "\"dt\": 0.0"));
    if (tidy) ck_assert_ptr_null(strstr(a.resolved_json, "0000000001"));
    ct_scene_free(&a);
    ct_scene_free(&b);
    ct_diag_free(&d);
}

START_TEST(test_roundtrip)
{
    const char *ov[] = {"bodies.0.material.E=2e5", "output.frames_every=0", "solver.newton_tol=0.1"};
    roundtrip("scenes/full3d.json", ov, 3, 1);
    roundtrip("scenes/full3d.json", NULL, 0, 1);
    /* a value that needs all 17 digits survives exactly */
    const char *ov17[] = {"time.dt=0.010000000000000002"};
    roundtrip("scenes/full3d.json", ov17, 1, 0);
    roundtrip("scenes/plate2d.json", NULL, 0, 1);
    roundtrip("scenes/kinematic3d.json", NULL, 0, 1);
}
END_TEST

/* ---------- model parameters (a model table of every kind) ---------- */

static const char *const test_modes[] = {"fast", "exact", NULL};
static const ct_param_spec test_spec[] = {
    {"dhat", CT_PARAM_REAL, 1e-3, "m", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL, "distance", 0},
    {"kappa", CT_PARAM_REAL, 0, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL, "stiffness", 1},
    {"iters", CT_PARAM_INT, 10, "", 1, 100, 0, NULL, "iterations", 0},
    {"squared", CT_PARAM_BOOL, 0, "", 0, 1, 0, NULL, "variant", 0},
    {"mode", CT_PARAM_CHOICE, 1, "", 0, 0, 0, test_modes, "mode", 0},
    {NULL, CT_PARAM_REAL, 0, NULL, 0, 0, 0, NULL, NULL, 0},
};

static int read_params(const char *text, ct_params *p, ct_diag *d, char **resolved)
{
    static const char *const own[] = {"model", NULL};
    json_t *o = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(o);
    sj c;
    ct_sj_init(&c, "t.json", d);
    ct_sj_push(&c, "contact");
    ct_sj_read_params(&c, o, test_spec, own, p);
    if (resolved) *resolved = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(o);
    return c.nerr;
}

START_TEST(test_params)
{
    ct_params p;
    ct_diag d;
    ct_diag_init(&d);
    char *res = NULL;
    ck_assert_int_eq(read_params("{\"model\": \"m\"}", &p, &d, &res), 0);
    ck_assert_double_eq(p.value[0], 1e-3);
    ck_assert_int_eq(p.is_auto[1], 1);
    ck_assert_double_eq(p.value[2], 10);
    ck_assert_double_eq(p.value[3], 0);
    ck_assert_double_eq(p.value[4], 1);
    ck_assert_str_eq(res, "{\"dhat\":0.001,\"iters\":10,\"kappa\":\"auto\",\"mode\":\"exact\",\"model\":\"m\","
                          "\"squared\":false}");
    free(res);
    ct_params_free(&p);

    ck_assert_int_eq(read_params("{\"dhat\": 2e-3, \"kappa\": 5, \"iters\": 3, \"squared\": true, \"mode\": \"fast\"}",
                                 &p, &d, NULL), 0);
    ck_assert_double_eq(p.value[0], 2e-3);
    ck_assert_double_eq(p.value[1], 5);
    ck_assert_int_eq(p.is_auto[1], 0);
    ck_assert_double_eq(p.value[2], 3);
    ck_assert_double_eq(p.value[3], 1);
    ck_assert_double_eq(p.value[4], 0);
    ct_params_free(&p);

    ck_assert_int_eq(read_params("{\"dhat\": -1, \"kappa\": \"big\", \"iters\": 2.5, \"squared\": 1, \"mode\": \"slow\","
                                 " \"foo\": 1}", &p, &d, NULL), 6);
    const char *expect[] = {
        "t.json: /contact/dhat: must be > 0 (got -1)",
        "t.json: /contact/kappa: expected a number or \"auto\" (got string)",
        "t.json: /contact/iters: must be an integer (got 2.5)",
        "t.json: /contact/squared: expected true or false (got number)",
        "t.json: /contact/mode: must be one of: fast, exact (got \"slow\")",
        "t.json: /contact/foo: unknown key (expected one of: model, dhat, kappa, iters, squared, mode)",
    };
    for (size_t i = 0; i < sizeof expect / sizeof *expect; ++i) {
        if (!diag_has_exact(&d, expect[i])) {
            print_diag(&d);
            ck_abort_msg("missing message: %s", expect[i]);
        }
    }
    ct_params_free(&p);
    ct_diag_clear(&d);
    ck_assert_int_eq(read_params("{\"dhat\": \"auto\", \"iters\": 101}", &p, &d, NULL), 2);
    ck_assert(diag_has_exact(&d, "t.json: /contact/dhat: expected a number (got string)"));
    ck_assert(diag_has_exact(&d, "t.json: /contact/iters: must be <= 100 (got 101)"));
    ct_params_free(&p);

    /* through the scene: an unknown model, and the parameters of "none" */
    ct_scene sc;
    ct_diag_clear(&d);
    const char *ov[] = {"contact.model=magic"};
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, ov, 1, &d), CT_EINPUT);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "t.json: /contact/model: unknown contact model \"magic\" (registered: none"));
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- per-body parameters (CT_PARAM_PER_BODY) ---------- */

static const ct_param_spec body_spec[] = {
    {"k", CT_PARAM_REAL, 2, "N/m", 0, INFINITY, CT_PARAM_PER_BODY | CT_PARAM_AUTO, NULL, "stiffness", 0},
    {"n", CT_PARAM_INT, 3, "", 1, 10, CT_PARAM_PER_BODY, NULL, "count", 0},
    {"g", CT_PARAM_REAL, 0.5, "", 0, 1, 0, NULL, "scene-wide only", 0},
    {NULL, CT_PARAM_REAL, 0, NULL, 0, 0, 0, NULL, NULL, 0},
};

/* Read text as "bodies[b].contact" of model "m" into p; returns the error count. */
static int read_body_params(const char *text, ct_params *p, int b, ct_diag *d)
{
    json_t *o = json_loads(text, 0, NULL);
    ck_assert_ptr_nonnull(o);
    sj c;
    ct_sj_init(&c, "t.json", d);
    ct_sj_push(&c, "bodies");
    ct_sj_push_index(&c, (size_t)b);
    ct_sj_push(&c, "contact");
    ct_sj_read_body_params(&c, o, "m", p, b);
    json_decref(o);
    return c.nerr;
}

START_TEST(test_body_params)
{
    ct_params p, q;
    ct_diag d;
    ct_diag_init(&d);
    ck_assert_int_eq(ct_params_init_defaults(&p, body_spec), CT_OK);
    p.value[0] = 5; /* the scene-level k */
    ck_assert_int_eq(ct_params_set_bodies(&p, 3), CT_OK);
    ck_assert_int_eq(p.nbodies, 3);
    ck_assert_int_eq(read_body_params("{\"k\": \"auto\", \"n\": 7}", &p, 1, &d), 0);
    /* body 1: its overrides; bodies 0 and 2: the scene-level values (row-major, n = 3 per row) */
    ck_assert_int_eq(p.body_is_auto[1 * 3 + 0], 1);
    ck_assert_double_eq(p.body_value[1 * 3 + 1], 7);
    ck_assert_double_eq(p.body_value[1 * 3 + 2], 0.5);
    for (int b = 0; b < 3; b += 2) {
        ck_assert_double_eq(p.body_value[b * 3 + 0], 5);
        ck_assert_int_eq(p.body_is_auto[b * 3 + 0], 0);
        ck_assert_double_eq(p.body_value[b * 3 + 1], 3);
    }
    ck_assert_double_eq(ct_params_body(&p, 1, 1), 7);
    ck_assert_double_eq(ct_params_body(&p, 2, 1), 3);
    ck_assert_double_eq(ct_params_body(&p, 9, 0), 5); /* no row: the scene-level value */
    ck_assert(isnan(ct_params_body(&p, 0, 7)));
    /* errors name the path; a rejected value leaves the row as it was */
    ck_assert_int_eq(read_body_params("{\"g\": 0.1, \"n\": 11, \"x\": 1, \"k\": true}", &p, 1, &d), 4);
    const char *expect[] = {
        "t.json: /bodies/1/contact/g: not a per-body parameter of m (its per-body parameters: k, n)",
        "t.json: /bodies/1/contact/n: must be <= 10 (got 11)",
        "t.json: /bodies/1/contact/x: unknown key: not a parameter of m (its per-body parameters: k, n)",
        "t.json: /bodies/1/contact/k: expected a number or \"auto\" (got boolean)",
    };
    for (size_t i = 0; i < sizeof expect / sizeof *expect; ++i) {
        if (!diag_has_exact(&d, expect[i])) {
            print_diag(&d);
            ck_abort_msg("missing message: %s", expect[i]);
        }
    }
    ck_assert_double_eq(p.body_value[1 * 3 + 1], 7);
    ck_assert_double_eq(p.body_value[1 * 3 + 2], 0.5);
    /* deep copy */
    ck_assert_int_eq(ct_params_copy(&q, &p), CT_OK);
    ck_assert_int_eq(q.nbodies, 3);
    ck_assert_ptr_ne(q.body_value, p.body_value);
    for (int i = 0; i < 9; ++i) {
        ck_assert_double_eq(q.body_value[i], p.body_value[i]);
        ck_assert_int_eq(q.body_is_auto[i], p.body_is_auto[i]);
    }
    ct_params_free(&q);
    ct_params_free(&p);
    ck_assert_int_eq(p.nbodies, 0);
    ck_assert_ptr_null(p.body_value);

    /* through the scene: lcp_pgs's c and w per body, from --set; the resolved scene shows them */
    ct_scene sc;
    ct_diag_clear(&d);
    const char *ov[] = {"contact.model=lcp_pgs", "contact.c=1e6", "bodies.0.contact.c=4e6", "bodies.0.contact.w=2"};
    ct_status st = parse_text(&sc, MINIMAL3D, ov, 4, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_int_eq(sc.params.nbodies, 1);
    const int ic = ct_params_index(&sc.params, "c"), iw = ct_params_index(&sc.params, "w"),
              ie = ct_params_index(&sc.params, "eta");
    ck_assert_double_eq(sc.params.value[ic], 1e6);
    ck_assert_double_eq(ct_params_body(&sc.params, 0, ic), 4e6);
    ck_assert_double_eq(ct_params_body(&sc.params, 0, iw), 2);
    ck_assert_double_eq(ct_params_body(&sc.params, 0, ie), sc.params.value[ie]);
    json_t *r = json_loads(sc.resolved_json, 0, NULL);
    ck_assert_ptr_nonnull(r);
    ck_assert_double_eq(json_number_value(resolved_get(r, "bodies.0.contact.c")), 4e6);
    ck_assert_double_eq(json_number_value(resolved_get(r, "bodies.0.contact.w")), 2);
    ck_assert_ptr_null(resolved_get(r, "bodies.0.contact.eta")); /* nothing filled in */
    json_decref(r);
    ct_scene_free(&sc);
    /* a scene without overrides writes no "contact" into its bodies */
    const char *ov2[] = {"contact.model=lcp_pgs"};
    ck_assert_int_eq(parse_text(&sc, MINIMAL3D, ov2, 1, &d), CT_OK);
    r = json_loads(sc.resolved_json, 0, NULL);
    ck_assert_ptr_null(resolved_get(r, "bodies.0.contact"));
    json_decref(r);
    ct_scene_free(&sc);
    ct_diag_free(&d);
}
END_TEST

/* ---------- springs: parsed ends, defaults, names, the spring_force probe, the round trip ---------- */

START_TEST(test_springs)
{
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = load_scene(&sc, "scenes/sensitivity/spring_series.json", NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_int_eq(sc.nsprings, 2);
    const ct_spring_spec *s0 = &sc.springs[0], *s1 = &sc.springs[1];
    ck_assert_str_eq(s0->name, "low");
    ck_assert_int_eq(s0->end[0].body, 0);
    ck_assert_int_eq(s0->end[0].vertex, -1);
    ck_assert_int_eq(s0->end[0].sel.kind, CT_SEL_BOX);
    ck_assert_int_eq(s0->end[0].sel.body, 0);
    ck_assert_int_eq(s0->end[1].body, 1);
    ck_assert_int_eq(s0->end[1].vertex, 0);
    ck_assert_double_eq(s0->k, 1.5e4);
    ck_assert_double_eq(s0->rest_length, 0.0);
    ck_assert_int_eq(s1->end[1].sel.body, 1);
    ck_assert_ptr_nonnull(strstr(sc.resolved_json, "\"rest_length\": 0.0"));
    ck_assert_int_eq(sc.probes[1].kind, CT_PROBE_SPRING_FORCE);
    ck_assert_int_eq(sc.probes[1].spring, 0);
    ck_assert_int_eq(sc.probes[2].energy, CT_ENERGY_SPRING);
    ct_scene_free(&sc);
    /* body by index, default name, rest length given */
    const char *text =
        "{\"dim\":2,\"time\":{\"dt\":1,\"duration\":1},\"bodies\":[{\"name\":\"a\",\"mesh\":{\"generator\":\"rect\","
        "\"size\":[1,1],\"cells\":[1,1]},\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1}}],"
        "\"springs\":[{\"a\":{\"body\":0,\"vertex\":0},\"b\":{\"body\":\"a\",\"vertex\":3},\"stiffness\":2,"
        "\"rest_length\":0.5}],\"probes\":[{\"name\":\"f\",\"quantity\":\"spring_force\",\"spring\":0,"
        "\"component\":\"norm\"}]}";
    st = parse_text(&sc, text, NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_str_eq(sc.springs[0].name, "spring0");
    ck_assert_double_eq(sc.springs[0].rest_length, 0.5);
    ck_assert_int_eq(sc.springs[0].end[1].vertex, 3);
    ck_assert_int_eq(sc.probes[0].component, CT_COMPONENT_NORM);
    ct_scene_free(&sc);
    /* the resolved scene parses to itself */
    ct_scene a, b;
    ck_assert_int_eq(load_scene(&a, "scenes/sensitivity/spring_series.json", NULL, 0, &d), CT_OK);
    st = ct_scene_parse(&b, a.resolved_json, a.path, a.dir, NULL, 0, &d);
    if (st != CT_OK) print_diag(&d);
    ck_assert_int_eq(st, CT_OK);
    ck_assert_str_eq(a.resolved_json, b.resolved_json);
    ck_assert_int_eq(b.nsprings, 2);
    ct_scene_free(&a);
    ct_scene_free(&b);
    ct_diag_free(&d);
}
END_TEST

/* ---------- the malformed corpus (parser half; mesh contents are the CLI's) ---------- */

START_TEST(test_corpus)
{
    char *expect_path = data_path("scenes/bad/EXPECT");
    FILE *f = fopen(expect_path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", expect_path);
    char line[1024];
    int n = 0, mesh_cases = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *tab = strchr(line, '\t');
        if (!tab) continue;
        *tab = '\0';
        const char *file = line, *sub = tab + 1;
        char rel[1100];
        snprintf(rel, sizeof rel, "scenes/bad/%s", file);
        ct_scene sc;
        ct_diag d;
        ct_diag_init(&d);
        ct_status st = load_scene(&sc, rel, NULL, 0, &d);
        if (strncmp(file, "mesh_content_", 13) == 0 || strncmp(file, "spring_build_", 13) == 0 ||
            strncmp(file, "build_", 6) == 0) {
            /* valid for the parser; the CLI finds the error when it reads the mesh or when it builds
             * the simulation (a spring end's vertex, a selection's vertices, the model's init) */
            if (st != CT_OK) print_diag(&d);
            ck_assert_msg(st == CT_OK, "%s: parser should accept it", file);
            mesh_cases++;
        } else {
            ck_assert_msg(st == CT_EINPUT, "%s: expected CT_EINPUT, got %s", file, ct_status_str(st));
            if (d.count != 1 || !strstr(d.msgs[0].text, sub) || !strstr(d.msgs[0].text, file)) {
                print_diag(&d);
                ck_abort_msg("%s: expected exactly one message containing \"%s\"", file, sub);
            }
        }
        ct_scene_free(&sc);
        ct_diag_free(&d);
        n++;
    }
    fclose(f);
    free(expect_path);
    ck_assert_int_ge(n, 25);
    ck_assert_int_ge(mesh_cases, 1);
}
END_TEST

static Suite *scene_suite(void)
{
    Suite *s = suite_create("scene");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, test_full3d);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_plate2d);
    tcase_add_test(tc, test_kinematic3d);
    tcase_add_test(tc, test_selectors);
    tcase_add_test(tc, test_overrides);
    tcase_add_test(tc, test_four_errors);
    tcase_add_test(tc, test_numbers);
    tcase_add_test(tc, test_syntax_and_files);
    tcase_add_test(tc, test_roundtrip);
    tcase_add_test(tc, test_params);
    tcase_add_test(tc, test_body_params);
    tcase_add_test(tc, test_corpus);
    tcase_add_test(tc, test_springs);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(scene_suite)
