/* check_constraint.c — the constraint family's path through the core (ct_model.h,
 * core/sim/constraint.c) and the model-instance machinery (core/sim/model.c), with the test model
 * lcp_halfspace (tests/models/lcp_halfspace.c: frictionless vertex–half-space contact, the LCP of the
 * linearized step solved exactly) and tiny model types defined here.
 *
 *   family         ct_model_type_check refuses an energy model with `step`, a constraint model
 *                  without `step` and one with any energy op (the message names the op); a
 *                  constraint model with the static integrator fails at ct_sim_create, naming
 *                  /time/integrator.
 *   life cycle     init fails -> destroy exactly once, nothing returned; ct_model_destroy(NULL);
 *                  "auto" parameters are NAN on entry to init; the wrappers' defaults of NULL ops.
 *   free fall      lcp_halfspace, the ground far away: r = 0 exactly and the implicit Euler closed
 *                  form x_n = x_0 + n h v_0 + h^2 g n(n+1)/2 (the linearized step is exact here:
 *                  K times a uniform velocity is 0 and a translated rest state has no stress).
 *   drop           a box thrown down and sideways onto a tilted half-space (J = I), every step:
 *                  per surface vertex k with impulse r_k (its q-dofs): lambda_k = n.r_k >= 0,
 *                  r_k - lambda_k n = 0, gap_k(x^{n+1}) >= 0, lambda_k gap_k = 0; momentum
 *                  sum_q M_q (v^{n+1} - v^n) = h m g + sum r (elastic forces sum to zero); the force
 *                  report (box, ground, barrier) = sum r / h.
 *   reactions      an embedded cantilever (coarse mesh held at x = 0) resting on the half-space, so
 *                  that r has entries at prescribed dofs: ct_sim_reaction against the momentum
 *                  equation at the prescribed dofs, and the steady state's force balance.
 *   embedded       the drop with x = J q (coarse cell around a fine box): no penetration of the fine
 *                  surface, momentum balance, report = sum r / h.
 *   auto           ipc with "kappa": "auto": the instance's kappa = kappa_scale x min E of the scene,
 *                  and `contactlab run` logs it as the number (attribute "auto" = "kappa").
 * Tolerances are stated where they are used, relative to the scale of the quantity. */
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contactlab/ct_h5log.h"
#include "contactlab/ct_material.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"
#include "ct_test_util.h"

/* ------------------------------------------------------------------------------------------ */
/* helpers                                                                                      */

static double *dalloc(size_t n)
{
    double *p = calloc(n + 1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

static void step_ok(ct_sim *sim)
{
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = ct_sim_step(sim, &d);
    if (st != CT_OK) ct_diag_print(&d, stderr, "step: ");
    ck_assert_int_eq(st, CT_OK);
    ct_diag_free(&d);
}

/* out = M_q v over the q-dofs (M_q vertex-level, applied per component). */
static void mass_times(const ct_sim *s, const double *v, double *out)
{
    const ct_csc *M = &s->Mq_csc;
    const int dim = s->dim;
    memset(out, 0, (size_t)s->ndof * sizeof *out);
    for (int j = 0; j < M->ncol; ++j)
        for (int k = M->colptr[j]; k < M->colptr[j + 1]; ++k)
            for (int c = 0; c < dim; ++c) out[(size_t)M->rowind[k] * dim + c] += M->val[k] * v[(size_t)j * dim + c];
}

/* Signed distance of x-vertex k to obstacle o (positive in front). */
static double vertex_gap(const ct_sim *s, int o, const double *x, int k)
{
    const ct_obstacle *ob = &s->obstacles[o];
    double g = 0.0;
    for (int c = 0; c < s->dim; ++c) g += ob->normal[c] * (x[(size_t)k * s->dim + c] - ob->point[c]);
    return g;
}

/* The model's force report at the current state (np = bodies + obstacles). */
static void report_now(ct_sim *s, ct_force_report *fr)
{
    ck_assert_int_eq(ct_force_report_init(fr, s->nb + s->ctx.nobstacles, 8), CT_OK);
    ck_assert_int_eq(ct_model_forces(s->model, &s->ctx, s->x, fr), CT_OK);
}

static int diag_has(const ct_diag *d, const char *needle)
{
    for (size_t i = 0; i < d->count; ++i)
        if (strstr(d->msgs[i].text, needle)) return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* family checks                                                                                */

static ct_status op_energy(void *st, const ct_step_ctx *c, const double *x, double *E)
{
    (void)st, (void)c, (void)x;
    *E = 1.0;
    return CT_OK;
}
static ct_status op_gradient(void *st, const ct_step_ctx *c, const double *x, double *g)
{
    (void)st, (void)c, (void)x, (void)g;
    return CT_OK;
}
static ct_status op_hessian(void *st, const ct_step_ctx *c, const double *x, ct_triplets *H)
{
    (void)st, (void)c, (void)x, (void)H;
    return CT_OK;
}
static ct_status op_max_step(void *st, const ct_step_ctx *c, const double *x, const double *dx, double *a)
{
    (void)st, (void)c, (void)x, (void)dx;
    *a = 0.5;
    return CT_OK;
}
static ct_status op_update_lagged(void *st, const ct_step_ctx *c, const double *x, double *delta)
{
    (void)st, (void)c, (void)x;
    *delta = 1.0;
    return CT_OK;
}
static ct_status op_step(void *st, const ct_step_ctx *c, const ct_linear_system *sys, double *r)
{
    (void)st, (void)c, (void)sys, (void)r;
    return CT_OK;
}

/* The check refuses t with CT_EINPUT and a message containing `op`. */
static void expect_refused(const ct_model_type *t, const char *op)
{
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = ct_model_type_check(t, &d);
    printf("type check %-34s -> %s: %s\n", t->name, ct_status_str(st), ct_diag_last(&d));
    ck_assert_int_eq(st, CT_EINPUT);
    ck_assert_msg(strstr(ct_diag_last(&d), op) != NULL, "message does not name %s: %s", op, ct_diag_last(&d));
    ck_assert_msg(strstr(ct_diag_last(&d), t->name) != NULL, "message does not name the model");
    /* create refuses it the same way, before any init */
    ct_model *m = (ct_model *)&d; /* non-NULL: create must set it to NULL */
    ct_step_ctx c;
    memset(&c, 0, sizeof c);
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_model_create(&m, t, NULL, &c, &d), CT_EINPUT);
    ck_assert_ptr_null(m);
    ct_diag_free(&d);
}

START_TEST(test_family_check)
{
    ct_model_type t = {.name = "energy_with_step", .family = CT_FAMILY_ENERGY, .step = op_step};
    expect_refused(&t, "step");
    t = (ct_model_type){.name = "constraint_without_step", .family = CT_FAMILY_CONSTRAINT};
    expect_refused(&t, "step");
    static const char *const ops[] = {"energy", "gradient", "hessian", "max_step", "update_lagged"};
    for (int k = 0; k < 5; ++k) {
        char name[64];
        snprintf(name, sizeof name, "constraint_with_%s", ops[k]);
        t = (ct_model_type){.name = name, .family = CT_FAMILY_CONSTRAINT, .step = op_step};
        if (k == 0) t.energy = op_energy;
        if (k == 1) t.gradient = op_gradient;
        if (k == 2) t.hessian = op_hessian;
        if (k == 3) t.max_step = op_max_step;
        if (k == 4) t.update_lagged = op_update_lagged;
        expect_refused(&t, ops[k]);
    }
    /* energy ops come together */
    t = (ct_model_type){.name = "energy_without_hessian", .family = CT_FAMILY_ENERGY, .energy = op_energy,
                        .gradient = op_gradient};
    expect_refused(&t, "hessian");
    /* accepted: a constraint model with step only (and the hooks both families may set), an energy
     * model with its ops, and every registered model */
    ct_diag d;
    ct_diag_init(&d);
    t = (ct_model_type){.name = "constraint_ok", .family = CT_FAMILY_CONSTRAINT, .step = op_step};
    ck_assert_int_eq(ct_model_type_check(&t, &d), CT_OK);
    t = (ct_model_type){.name = "energy_ok", .family = CT_FAMILY_ENERGY, .energy = op_energy, .gradient = op_gradient,
                        .hessian = op_hessian, .max_step = op_max_step, .update_lagged = op_update_lagged};
    ck_assert_int_eq(ct_model_type_check(&t, &d), CT_OK);
    for (int k = 0; ct_model_registry[k]; ++k) {
        ck_assert_int_eq(ct_model_type_check(ct_model_registry[k], &d), CT_OK);
        printf("registered %-14s family %-10s guarantees %s\n", ct_model_registry[k]->name,
               ct_model_family_name(ct_model_registry[k]->family),
               ct_model_registry[k]->guarantees & CT_GUARANTEE_INTERSECTION_FREE ? "intersection_free" : "-");
    }
    const ct_model_type *lcp = ct_model_find("lcp_halfspace");
    ck_assert_ptr_nonnull(lcp);
    ck_assert_int_eq(lcp->family, CT_FAMILY_CONSTRAINT);
    ck_assert_int_eq(ct_diag_count(&d), 0);
    ct_diag_free(&d);
}
END_TEST

/* A constraint model takes dynamic steps only: the static integrator is refused at create. */
START_TEST(test_static_refused)
{
    const char *json = "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.01,\"integrator\":\"static\"},"
                       "\"contact\":{\"model\":\"lcp_halfspace\"},"
                       "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.1,0.1],\"cells\":[1,1]},"
                       "\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000}}]}";
    ct_scene sc;
    ct_diag d;
    ct_diag_init(&d);
    ct_scene_init(&sc);
    ck_assert_int_eq(ct_scene_parse(&sc, json, "static.json", ".", NULL, 0, &d), CT_OK);
    ct_sim *sim = NULL;
    ct_status st = ct_sim_create(&sim, &sc, &d);
    printf("static integrator with lcp_halfspace: %s: %s\n", ct_status_str(st), ct_diag_last(&d));
    ck_assert_int_eq(st, CT_EINPUT);
    ck_assert_ptr_null(sim);
    ck_assert(diag_has(&d, "/time/integrator")); /* the scene's key: "time": {"integrator": ...} */
    ck_assert(diag_has(&d, "lcp_halfspace"));
    ct_diag_free(&d);
    ct_scene_free(&sc);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* life cycle and the wrappers' defaults                                                        */

static struct {
    int init_calls, destroy_calls, fail, fail_silently;
    double auto_on_entry, fixed_on_entry;
    void *init_state, *destroy_state;
} life;

typedef struct {
    double *buf; /* allocated by init, freed by destroy (NULL when init failed before it) */
} life_state;

static const ct_param_spec life_params[] = {
    {"a", CT_PARAM_REAL, 2.0, "m", 0, INFINITY, CT_PARAM_AUTO, NULL, "resolved by init", 1},
    {"b", CT_PARAM_REAL, 3.0, "", 0, INFINITY, 0, NULL, "plain", 0},
    {NULL},
};

static ct_status life_init(void *p, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    (void)c;
    life_state *st = p;
    life.init_calls++;
    life.init_state = p;
    life.auto_on_entry = prm->value[0];
    life.fixed_on_entry = prm->value[1];
    if (life.fail_silently) return CT_ENOTPD;
    if (life.fail) return ct_diag_add(diag, CT_EINPUT, "/contact/a: life refuses");
    st->buf = malloc(16 * sizeof *st->buf);
    prm->value[0] = 7.5; /* "auto" resolved */
    return st->buf ? CT_OK : CT_ENOMEM;
}

static void life_destroy(void *p)
{
    life_state *st = p;
    life.destroy_calls++;
    life.destroy_state = p;
    free(st->buf);
}

static const ct_model_type life_constraint = {
    .name = "life", .family = CT_FAMILY_CONSTRAINT, .state_size = sizeof(life_state), .params = life_params,
    .init = life_init, .destroy = life_destroy, .step = op_step,
};

START_TEST(test_life_cycle)
{
    ct_step_ctx c;
    memset(&c, 0, sizeof c);
    ct_diag d;
    ct_diag_init(&d);
    /* init fails with a message: destroy exactly once, on the state init saw; nothing returned */
    memset(&life, 0, sizeof life);
    life.fail = 1;
    ct_model *m = (ct_model *)&c;
    ck_assert_int_eq(ct_model_create(&m, &life_constraint, NULL, &c, &d), CT_EINPUT);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(life.init_calls, 1);
    ck_assert_int_eq(life.destroy_calls, 1);
    ck_assert_ptr_nonnull(life.init_state);
    ck_assert_ptr_eq(life.init_state, life.destroy_state);
    ck_assert(isnan(life.auto_on_entry)); /* "auto" entries are NAN until init resolves them */
    ck_assert(life.fixed_on_entry == 3.0);
    ck_assert(diag_has(&d, "life refuses"));
    /* init fails without a message: the core adds one naming the model */
    memset(&life, 0, sizeof life);
    life.fail_silently = 1;
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_model_create(&m, &life_constraint, NULL, &c, &d), CT_ENOTPD);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(life.destroy_calls, 1);
    ck_assert(diag_has(&d, "life") && diag_has(&d, "init failed"));
    /* success: destroy once, at ct_model_destroy; the instance owns its parameter copy */
    memset(&life, 0, sizeof life);
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_model_create(&m, &life_constraint, NULL, &c, &d), CT_OK);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(m->ready, 1);
    ck_assert_int_eq(life.destroy_calls, 0);
    ck_assert(m->params.value[0] == 7.5 && m->params.is_auto[0] == 1);
    ck_assert(m->params.value[1] == 3.0 && m->params.is_auto[1] == 0);
    ct_model_destroy(m);
    ck_assert_int_eq(life.init_calls, 1);
    ck_assert_int_eq(life.destroy_calls, 1);
    ct_model_destroy(NULL); /* safe */
    printf("life cycle: failed init -> destroy called once, instance NULL; success -> destroy once at "
           "ct_model_destroy; auto entry NAN on entry, resolved 7.5 kept; ct_model_destroy(NULL) safe\n");
    ct_diag_free(&d);
}
END_TEST

START_TEST(test_wrapper_defaults)
{
    ct_step_ctx c;
    memset(&c, 0, sizeof c);
    c.dim = 2;
    c.nx = 2;
    c.h = 0.01;
    ct_diag d;
    ct_diag_init(&d);
    /* an energy-family type without any op, and a constraint type with only `step` */
    static const ct_model_type bare = {.name = "bare", .family = CT_FAMILY_ENERGY};
    static const ct_model_type only_step = {.name = "only_step", .family = CT_FAMILY_CONSTRAINT, .step = op_step};
    const ct_model_type *types[2] = {&bare, &only_step};
    for (int k = 0; k < 2; ++k) {
        ct_model *m = NULL;
        ck_assert_int_eq(ct_model_create(&m, types[k], NULL, &c, &d), CT_OK);
        ck_assert_ptr_null(m->state); /* state_size 0 */
        double x[4] = {0, 0, 1, 1}, dx[4] = {1, 1, 1, 1}, g[4] = {5, 6, 7, 8};
        double E = 123.0, alpha = -1.0, delta = -1.0;
        ck_assert_int_eq(ct_model_begin_step(m, &c), CT_OK);
        ck_assert_int_eq(ct_model_energy(m, &c, x, &E), CT_OK);
        ck_assert(E == 0.0);
        ck_assert_int_eq(ct_model_gradient(m, &c, x, g), CT_OK);
        ck_assert(g[0] == 5 && g[1] == 6 && g[2] == 7 && g[3] == 8); /* nothing added */
        ct_triplets H;
        ct_triplets_init(&H);
        ck_assert_int_eq(ct_model_hessian(m, &c, x, &H), CT_OK);
        ck_assert_uint_eq(H.n, 0);
        ct_triplets_free(&H);
        ck_assert_int_eq(ct_model_max_step(m, &c, x, dx, &alpha), CT_OK);
        ck_assert(alpha == 1.0);
        ck_assert_int_eq(ct_model_update_lagged(m, &c, x, &delta), CT_OK);
        ck_assert(delta == 0.0);
        ck_assert_int_eq(ct_model_has_lagged(m), 0);
        ct_model_stats ms = {0, 0, INFINITY, 1.0, 0, 0, 0};
        ck_assert_int_eq(ct_model_end_step(m, &c, x, &ms), CT_OK);
        /* forces: a report full of garbage comes back zero, with no scalars */
        ct_force_report fr;
        ck_assert_int_eq(ct_force_report_init(&fr, 2, 4), CT_OK);
        for (int i = 0; i < 2 * 2 * CT_FORCE_NCAT; ++i) fr.force[i][0] = fr.force[i][1] = fr.force[i][2] = 9.0;
        for (int i = 0; i < 4; ++i) fr.active_pairs[i] = fr.bonded_pairs[i] = 3;
        ck_assert_int_eq(ct_model_forces(m, &c, x, &fr), CT_OK);
        for (int i = 0; i < 2 * 2 * CT_FORCE_NCAT; ++i)
            ck_assert(fr.force[i][0] == 0.0 && fr.force[i][1] == 0.0 && fr.force[i][2] == 0.0);
        for (int i = 0; i < 4; ++i) ck_assert(fr.active_pairs[i] == 0 && fr.bonded_pairs[i] == 0);
        ck_assert_int_eq(fr.nscalars, 0);
        ct_force_report_free(&fr);
        /* step: CT_ENOTSUP without the op */
        double r[4] = {0, 0, 0, 0};
        ct_linear_system sys;
        memset(&sys, 0, sizeof sys);
        ck_assert_int_eq(ct_model_step(m, &c, &sys, r), k == 0 ? CT_ENOTSUP : CT_OK);
        ct_model_destroy(m);
    }
    printf("wrapper defaults: energy 0, gradient untouched, no Hessian triplets, alpha 1, delta 0, zero forces "
           "and no scalars, step without the op CT_ENOTSUP\n");
    ck_assert_int_eq(ct_diag_count(&d), 0);
    ct_diag_free(&d);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* free fall through the constraint path                                                        */

static void free_fall(int dim)
{
    char json[2048];
    const double v0[3] = {1, 2, -0.5};
    if (dim == 3)
        snprintf(json, sizeof json,
                 "{\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":0.5},\"gravity\":[0.5,-9.81,0.25],"
                 "\"contact\":{\"model\":\"lcp_halfspace\"},"
                 "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"box\",\"size\":[0.3,0.2,0.1],"
                 "\"cells\":[3,2,2]},\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000},"
                 "\"velocity\":[%g,%g,%g]}],"
                 "\"obstacles\":[{\"name\":\"ground\",\"type\":\"halfspace\",\"point\":[0,-100,0],\"normal\":[0.1,1,0]}]}",
                 v0[0], v0[1], v0[2]);
    else
        snprintf(json, sizeof json,
                 "{\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.5},\"gravity\":[0.5,-9.81],"
                 "\"contact\":{\"model\":\"lcp_halfspace\"},"
                 "\"bodies\":[{\"name\":\"b\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.3,0.2],"
                 "\"cells\":[3,2]},\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000},"
                 "\"velocity\":[%g,%g]}],"
                 "\"obstacles\":[{\"name\":\"ground\",\"type\":\"halfspace\",\"point\":[0,-100],\"normal\":[0.1,1]}]}",
                 v0[0], v0[1]);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    ck_assert_int_eq(sim->model->type->family, CT_FAMILY_CONSTRAINT);
    const int n = sim->nsteps;
    const double h = sc.dt;
    double worst = 0.0, dmax = 0.0;
    for (int s = 1; s <= n; ++s) {
        step_ok(sim);
        for (int i = 0; i < sim->ndof; ++i) ck_assert(sim->r_contact[i] == 0.0); /* no contact: r = 0 exactly */
        for (int k = 0; k < sim->nx; ++k)
            for (int c = 0; c < dim; ++c) {
                const double X = sim->X[k * dim + c];
                const double disp = s * h * v0[c] + h * h * sc.gravity[c] * s * (s + 1) / 2.0;
                worst = fmax(worst, fabs(sim->x[k * dim + c] - (X + disp)));
                dmax = fmax(dmax, fabs(disp));
            }
    }
    /* the error relative to the largest displacement (1.6 m): round-off of n = 50 additions of
     * h v ~ 1e-2 m to positions ~1 m is ~50 eps ~ 1e-14 */
    printf("free fall %dD through the constraint path: %d steps, r = 0 exactly, max |x - closed form| = %.3e m "
           "(%.3e of the largest displacement %.3g m)\n",
           dim, n, worst, worst / dmax, dmax);
    ck_assert_double_lt(worst / dmax, 1e-12);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}

START_TEST(test_free_fall_2d) { free_fall(2); }
END_TEST
START_TEST(test_free_fall_3d) { free_fall(3); }
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* the drop on a tilted half-space                                                              */

#define DROP_DT 0.005
#define DROP_STEPS 30
#define DROP_GAP0 3e-3 /* the box's lowest corner above the ground at t = 0 (m) */
#define DROP_SIZE 0.1  /* fine box edge (m) */
#define DROP_RHO 1000.0

static const double DROP_V0[3] = {0.5, -1.0, 0.3};

static void drop_normal(int dim, double *n)
{
    double v[3] = {0.2, 1.0, dim == 3 ? 0.1 : 0.0}, l = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    for (int i = 0; i < 3; ++i) n[i] = v[i] / l;
}

/* A box of edge DROP_SIZE (its lowest corner DROP_GAP0 in front of the tilted ground through the
 * origin) thrown with DROP_V0; with `embedded`, simulated on one coarse cell 1 cm larger on every
 * side. */
static void drop_json(char *buf, size_t len, int dim, int embedded, int cells)
{
    double n[3], o[3];
    drop_normal(dim, n);
    /* n has positive components: the corner with the smallest n.x is the origin corner o */
    o[0] = -0.05, o[2] = dim == 3 ? -0.05 : 0.0;
    o[1] = (DROP_GAP0 - n[0] * o[0] - n[2] * o[2]) / n[1];
    char mesh[512], dofs[512] = "", vel[128], nrm[128], pt[64];
    if (dim == 2) {
        snprintf(mesh, sizeof mesh, "{\"generator\":\"rect\",\"size\":[%g,%g],\"cells\":[%d,%d],\"origin\":[%.17g,%.17g]}",
                 DROP_SIZE, DROP_SIZE, cells, cells, o[0], o[1]);
        if (embedded)
            snprintf(dofs, sizeof dofs, "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"rect\",\"size\":"
                     "[%g,%g],\"cells\":[1,1],\"origin\":[%.17g,%.17g]}},", DROP_SIZE + 0.02, DROP_SIZE + 0.02,
                     o[0] - 0.01, o[1] - 0.01);
        snprintf(vel, sizeof vel, "[%g,%g]", DROP_V0[0], DROP_V0[1]);
        snprintf(nrm, sizeof nrm, "[%.17g,%.17g]", n[0], n[1]);
        snprintf(pt, sizeof pt, "[0,0]");
    } else {
        snprintf(mesh, sizeof mesh, "{\"generator\":\"box\",\"size\":[%g,%g,%g],\"cells\":[%d,%d,%d],"
                 "\"origin\":[%.17g,%.17g,%.17g]}", DROP_SIZE, DROP_SIZE, DROP_SIZE, cells, cells, cells, o[0], o[1], o[2]);
        if (embedded)
            snprintf(dofs, sizeof dofs, "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"box\",\"size\":"
                     "[%g,%g,%g],\"cells\":[1,1,1],\"origin\":[%.17g,%.17g,%.17g]}},", DROP_SIZE + 0.02,
                     DROP_SIZE + 0.02, DROP_SIZE + 0.02, o[0] - 0.01, o[1] - 0.01, o[2] - 0.01);
        snprintf(vel, sizeof vel, "[%g,%g,%g]", DROP_V0[0], DROP_V0[1], DROP_V0[2]);
        snprintf(nrm, sizeof nrm, "[%.17g,%.17g,%.17g]", n[0], n[1], n[2]);
        snprintf(pt, sizeof pt, "[0,0,0]");
    }
    snprintf(buf, len,
             "{\"dim\":%d,\"time\":{\"dt\":%g,\"duration\":%g},\"gravity\":%s,"
             "\"contact\":{\"model\":\"lcp_halfspace\"},"
             "\"bodies\":[{\"name\":\"box\",\"mesh\":%s,%s\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":%g},"
             "\"velocity\":%s}],"
             "\"obstacles\":[{\"name\":\"ground\",\"type\":\"halfspace\",\"point\":%s,\"normal\":%s}]}",
             dim, DROP_DT, DROP_STEPS * DROP_DT, dim == 2 ? "[0,-9.81]" : "[0,-9.81,0]", mesh, dofs, DROP_RHO, vel, pt,
             nrm);
}

/* Worst relative errors over the steps of a drop. */
typedef struct drop_stats {
    double lam_neg;   /* max(-lambda_k) / Lambda */
    double tang;      /* max |r_k - lambda_k n| / Lambda */
    double gap_neg;   /* max(-gap_k) / G */
    double compl;     /* max |lambda_k gap_k| / (Lambda G) */
    double mom;       /* max over components |sum M dv - h m g - sum r| / S */
    double report;    /* |F_report - sum r / h| / |sum r / h| */
    double lam_sum;   /* total normal impulse over the run (N s) */
    int contact_steps, max_contacts, first_contact;
} drop_stats;

/* The checks after one step (module comment): vq_old = v^n. Scales: Lambda = the largest vertex
 * impulse of the step, G = h |v0| + h^2 |g| (the motion of one step), S = sum |M dv| + h m |g| +
 * sum |r|. per_vertex: J = I, so r_k sits at vertex k's q-dofs. */
static void drop_step_check(ct_sim *s, const double *vq_old, double mtot, int per_vertex, drop_stats *ds)
{
    const int dim = s->dim;
    const double h = s->sc->dt, *g = s->sc->gravity, *r = s->r_contact;
    const double *n = s->obstacles[0].normal;
    double gn = 0.0, vn = 0.0;
    for (int c = 0; c < dim; ++c) gn += g[c] * g[c], vn += DROP_V0[c] * DROP_V0[c];
    const double G = h * sqrt(vn) + h * h * sqrt(gn);
    /* momentum */
    double *dv = dalloc((size_t)s->ndof), *Mdv = dalloc((size_t)s->ndof);
    for (int i = 0; i < s->ndof; ++i) dv[i] = s->vq[i] - vq_old[i];
    mass_times(s, dv, Mdv);
    double res[3] = {0, 0, 0}, rsum[3] = {0, 0, 0}, S = h * mtot * sqrt(gn);
    for (int a = 0; a < s->nq; ++a)
        for (int c = 0; c < dim; ++c) {
            res[c] += Mdv[(size_t)a * dim + c] - r[(size_t)a * dim + c];
            rsum[c] += r[(size_t)a * dim + c];
            S += fabs(Mdv[(size_t)a * dim + c]) + fabs(r[(size_t)a * dim + c]);
        }
    for (int c = 0; c < dim; ++c) ds->mom = fmax(ds->mom, fabs(res[c] - h * mtot * g[c]) / S);
    free(dv);
    free(Mdv);
    /* the report */
    ct_force_report fr;
    report_now(s, &fr);
    const double *F = ct_force_report_at(&fr, 0, s->nb, CT_FORCE_BARRIER);
    double e = 0.0, m = 0.0, rn = 0.0;
    for (int c = 0; c < dim; ++c) {
        e += (F[c] - rsum[c] / h) * (F[c] - rsum[c] / h);
        m += rsum[c] * rsum[c] / (h * h);
        rn += n[c] * rsum[c];
    }
    ds->report = fmax(ds->report, m > 0.0 ? sqrt(e / m) : e > 0.0 ? INFINITY : 0.0); /* a report without r */
    ct_force_report_free(&fr);
    ds->lam_sum += rn;
    /* per surface vertex */
    double Lambda = 0.0;
    int ncontact = 0;
    if (per_vertex)
        for (int i = 0; i < s->surf.nbv; ++i) {
            const int k = s->surf.bverts[i];
            double l = 0.0;
            for (int c = 0; c < dim; ++c) l += r[(size_t)k * dim + c] * r[(size_t)k * dim + c];
            Lambda = fmax(Lambda, sqrt(l));
        }
    for (int i = 0; i < s->surf.nbv; ++i) {
        const int k = s->surf.bverts[i];
        const double gap = vertex_gap(s, 0, s->x, k);
        ds->gap_neg = fmax(ds->gap_neg, -gap / G);
        if (!per_vertex || Lambda == 0.0) continue;
        const double *rk = r + (size_t)k * dim;
        double lam = 0.0, t2 = 0.0;
        for (int c = 0; c < dim; ++c) lam += n[c] * rk[c];
        for (int c = 0; c < dim; ++c) t2 += (rk[c] - lam * n[c]) * (rk[c] - lam * n[c]);
        ds->lam_neg = fmax(ds->lam_neg, -lam / Lambda);
        ds->tang = fmax(ds->tang, sqrt(t2) / Lambda);
        ds->compl = fmax(ds->compl, fabs(lam * gap) / (Lambda * G));
        ncontact += lam > 0.0;
    }
    if (per_vertex) {
        /* the impulse sits on surface vertices only */
        unsigned char *on = calloc((size_t)s->nx + 1, 1);
        ck_assert_ptr_nonnull(on);
        for (int i = 0; i < s->surf.nbv; ++i) on[s->surf.bverts[i]] = 1;
        for (int k = 0; k < s->nx; ++k)
            if (!on[k])
                for (int c = 0; c < dim; ++c) ck_assert(r[(size_t)k * dim + c] == 0.0);
        free(on);
        ds->max_contacts = ncontact > ds->max_contacts ? ncontact : ds->max_contacts;
    }
    if (rn > 0.0 && ds->contact_steps++ == 0) ds->first_contact = s->step - 1;
}

static void drop(int dim, int embedded)
{
    char json[4096];
    drop_json(json, sizeof json, dim, embedded, dim == 2 ? 5 : 3);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    ck_assert_int_eq(sim->dofs.identity, !embedded);
    const double mtot = DROP_RHO * pow(DROP_SIZE, dim); /* per unit thickness in 2D */
    /* the throw reaches the ground within the first steps: its lowest corner would be behind the
     * ground after step s without contact once GAP0 + s h v0.n + h^2 g.n s(s+1)/2 < 0 */
    double n[3], v0n = 0.0, gn;
    drop_normal(dim, n);
    for (int c = 0; c < dim; ++c) v0n += DROP_V0[c] * n[c];
    gn = -9.81 * n[1];
    int s_hit = 1;
    while (DROP_GAP0 + s_hit * DROP_DT * v0n + DROP_DT * DROP_DT * gn * s_hit * (s_hit + 1) / 2.0 >= 0.0) s_hit++;
    ck_assert_int_lt(s_hit, DROP_STEPS / 3);
    drop_stats ds;
    memset(&ds, 0, sizeof ds);
    double *vq_old = dalloc((size_t)sim->ndof);
    for (int s = 0; s < sim->nsteps; ++s) {
        memcpy(vq_old, sim->vq, (size_t)sim->ndof * sizeof *vq_old);
        step_ok(sim);
        drop_step_check(sim, vq_old, mtot, !embedded, &ds);
    }
    /* the box slid along the ground: its tangential velocity is not stopped (frictionless) */
    double vt = 0.0, vnorm = 0.0;
    for (int c = 0; c < dim; ++c) {
        double vc = 0.0;
        for (int k = 0; k < sim->nq; ++k) vc += sim->vq[(size_t)k * dim + c] / sim->nq;
        vnorm += vc * n[c];
        vt += vc * vc;
    }
    vt = sqrt(vt - vnorm * vnorm);
    printf("drop %dD%s on the tilted half-space (%d steps of %g s; first contact in step %d, the unconstrained "
           "motion would penetrate in step %d): %d steps with contact, total normal impulse %.6g N s, tangential "
           "velocity at the end %.4g m/s; worst: penetration %.2e, momentum balance %.2e, report vs sum r/h %.2e\n",
           dim, embedded ? " (embedded in one coarse cell)" : "", sim->nsteps, DROP_DT, ds.first_contact, s_hit - 1,
           ds.contact_steps, ds.lam_sum, vt, ds.gap_neg, ds.mom, ds.report);
    if (!embedded)
        printf("drop %dD per vertex: up to %d vertices with lambda > 0; worst lambda < 0 %.2e, tangential impulse "
               "%.2e, lambda gap %.2e\n",
               dim, ds.max_contacts, ds.lam_neg, ds.tang, ds.compl);
    fflush(stdout); /* before the assertions: a failing test keeps its line */
    ck_assert_int_ge(ds.contact_steps, DROP_STEPS / 2);
    ck_assert_double_gt(ds.lam_sum, 0.0);
    /* tolerances: lambda >= 0 and r_k || n exactly up to one rounding per component (1e-14 of the largest
     * vertex impulse); the gaps at the end of the step to 1e-12 of the motion of one step (the LCP is solved
     * by pivoting to 1e-13 of its right-hand side, then v = A^-1 (b + r) by a second solve); momentum
     * and the report to round-off (1e-12 of the sum of the terms' magnitudes) */
    if (!embedded) {
        ck_assert_int_gt(ds.max_contacts, 0);
        ck_assert_double_le(ds.lam_neg, 1e-14);
        ck_assert_double_le(ds.tang, 1e-14);
        ck_assert_double_le(ds.compl, 1e-12);
    }
    ck_assert_double_le(ds.gap_neg, 1e-12);
    ck_assert_double_le(ds.mom, 1e-12);
    ck_assert_double_le(ds.report, 1e-12);
    free(vq_old);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}

START_TEST(test_drop_2d) { drop(2, 0); }
END_TEST
START_TEST(test_drop_3d) { drop(3, 0); }
END_TEST
START_TEST(test_drop_embedded_2d) { drop(2, 1); }
END_TEST
START_TEST(test_drop_embedded_3d) { drop(3, 1); }
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* reactions: contact impulses at prescribed dofs                                               */

/* An embedded cantilever: a fine beam 0.15 x 0.02 (6 x 1 cells), rotated by -6 degrees, inside ONE
 * coarse cell [0, 0.2] x [0, 0.05] whose vertices at x = 0 are held. Its lowest vertex, the fine
 * bottom-right corner at (0.154, 0.0093), rests on the ground 2 mm below; its weights on the held
 * coarse vertices are about 0.23 (1 - x/0.2), so r has entries at prescribed dofs. (The tilt keeps
 * the next fine vertex 2.6 mm higher: lcp_halfspace needs independent contact rows, and the rows of
 * fine vertices on one coarse edge next to held vertices are parallel on the free dofs.) */
START_TEST(test_reactions)
{
    const double E = 5e4, rho = 1000.0, h = 0.02, gy = -9.81;
    const double a = -6.0 * 3.14159265358979323846 / 180.0;
    const double tip_y = 0.025 + 0.15 * sin(a); /* the fine bottom-right corner, rotated and translated */
    char json[2048];
    snprintf(json, sizeof json,
             "{\"dim\":2,\"time\":{\"dt\":%g,\"duration\":3},\"gravity\":[0,%g],\"contact\":{\"model\":\"lcp_halfspace\"},"
             "\"bodies\":[{\"name\":\"beam\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.15,0.02],\"cells\":[6,1],"
             "\"transform\":{\"rotate\":{\"angle_deg\":-6},\"translate\":[0.005,0.025]}},"
             "\"dofs\":{\"mode\":\"embedded\",\"coarse\":{\"generator\":\"rect\",\"size\":[0.2,0.05],\"cells\":[1,1]}},"
             "\"material\":{\"E\":%g,\"nu\":0.3,\"density\":%g},\"velocity\":[0,-0.1],"
             "\"fixed\":{\"select\":{\"side\":\"-x\"}}}],"
             "\"obstacles\":[{\"name\":\"ground\",\"type\":\"halfspace\",\"point\":[0,%.17g],\"normal\":[0,1]}]}",
             h, gy, E, rho, tip_y - 0.002);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    const int dim = 2, nd = sim->ndof;
    ck_assert_int_eq(sim->nq, 4);
    int nfixed = 0;
    for (int i = 0; i < nd; ++i) nfixed += sim->fixed[i];
    ck_assert_int_eq(nfixed, 4); /* the two coarse vertices at x = 0 */
    const double W = rho * 0.15 * 0.02 * gy;
    double *vq_old = dalloc((size_t)nd), *dv = dalloc((size_t)nd), *Mdv = dalloc((size_t)nd);
    double *ge = dalloc((size_t)nd), *fq = dalloc((size_t)nd), *fx = dalloc((size_t)sim->nx * dim);
    for (int k = 0; k < sim->nx; ++k) fx[(size_t)k * dim + 1] = sim->mass_x[k] * gy;
    ct_dofs_pull(&sim->dofs, fx, fq); /* J^T m g (no loads) */
    double worst = 0.0, rp_share = 0.0, bal = NAN, vmax_end = 0.0;
    int steps_rp = 0;
    double R[3], Rsum_r[2] = {0, 0};
    for (int s = 0; s < sim->nsteps; ++s) {
        memcpy(vq_old, sim->vq, (size_t)nd * sizeof *vq_old);
        step_ok(sim);
        for (int i = 0; i < nd; ++i) dv[i] = sim->vq[i] - vq_old[i];
        mass_times(sim, dv, Mdv);
        memset(ge, 0, (size_t)nd * sizeof *ge);
        ct_elastic_gradient(&sim->el, sim->q, ge);
        /* At a prescribed dof the equation of motion of the step reads
         *     M_q (v^{n+1} - v^n) / h = J^T m g - grad Psi(q^{n+1}) + r / h + R,
         * the reaction R being the force that holds the dof where it is prescribed; r / h is the
         * contact force the model applied there. Summed over the held dofs per component: */
        double Rexp[2] = {0, 0}, scale = 0.0, rp[2] = {0, 0};
        for (int i = 0; i < nd; ++i) {
            if (!sim->fixed[i]) continue;
            const double *r = sim->r_contact;
            Rexp[i % dim] += Mdv[i] / h + ge[i] - fq[i] - r[i] / h;
            rp[i % dim] += r[i] / h;
            scale += fabs(Mdv[i] / h) + fabs(ge[i]) + fabs(fq[i]) + fabs(r[i] / h);
        }
        ct_sim_reaction(sim, NULL, R);
        for (int c = 0; c < dim; ++c) worst = fmax(worst, fabs(R[c] - Rexp[c]) / scale);
        if (rp[1] != 0.0) {
            steps_rp++;
            rp_share = fmax(rp_share, fabs(rp[1]) / fabs(R[1]));
        }
        if (s == sim->nsteps - 1) {
            /* steady state: the supports (R and the contact) carry the weight; the residual is the
             * inertia M dv / h summed (the step's linearization error vanishes with v) */
            double rs[2] = {0, 0}, in[2] = {0, 0};
            for (int a = 0; a < sim->nq; ++a)
                for (int c = 0; c < dim; ++c) {
                    rs[c] += sim->r_contact[(size_t)a * dim + c] / h;
                    in[c] += Mdv[(size_t)a * dim + c] / h;
                }
            for (int i = 0; i < nd; ++i) vmax_end = fmax(vmax_end, fabs(sim->vq[i]));
            bal = 0.0;
            for (int c = 0; c < dim; ++c) bal = fmax(bal, fabs(R[c] + rs[c] + (c == 1 ? W : 0.0) - in[c]));
            Rsum_r[0] = rs[0], Rsum_r[1] = rs[1];
        }
    }
    printf("reactions (embedded cantilever on the ground, %d steps): ct_sim_reaction vs M dv/h + grad Psi - J^T m g - "
           "r/h at the held dofs: worst %.2e of the terms' magnitude; r at held dofs in %d steps (up to %.3g of |R_y|); "
           "at the end R = (%.9g, %.9g) N, contact sum r/h = (%.9g, %.9g) N, weight %.9g N: |R + r/h + W - M dv/h| = "
           "%.2e N (max |v| %.2e m/s)\n",
           sim->nsteps, worst, steps_rp, rp_share, R[0], R[1], Rsum_r[0], Rsum_r[1], W, bal, vmax_end);
    ck_assert_double_lt(worst, 1e-13);
    ck_assert_int_ge(steps_rp, sim->nsteps / 2); /* the contact rests at the tip, the held dofs share it */
    ck_assert_double_gt(rp_share, 1e-3);         /* omitting r would be a visible error */
    ck_assert_double_lt(bal, 1e-6 * fabs(W));
    free(vq_old);
    free(dv);
    free(Mdv);
    free(ge);
    free(fq);
    free(fx);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* resolved "auto" parameters                                                                   */

static const char *auto_scene =
    "{\"name\":\"auto_kappa\",\"dim\":2,\"time\":{\"dt\":0.01,\"duration\":0.01},\"gravity\":[0,-9.81],"
    "\"contact\":{\"model\":\"ipc\",\"kappa\":\"auto\",\"kappa_scale\":0.25},"
    "\"bodies\":[{\"name\":\"a\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.1,0.1],\"cells\":[1,1]},"
    "\"material\":{\"E\":1e5,\"nu\":0.3,\"density\":1000}},"
    "{\"name\":\"b\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.1,0.1],\"cells\":[1,1],\"origin\":[1,0]},"
    "\"material\":{\"E\":3.7e4,\"nu\":0.3,\"density\":1000}}]}";

START_TEST(test_auto_kappa)
{
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, auto_scene, NULL);
    /* the rule (ct_ipc_params.h): kappa = kappa_scale x the smallest Young's modulus of the bodies */
    double Emin = INFINITY;
    for (int b = 0; b < sc.nbodies; ++b) Emin = fmin(Emin, sc.bodies[b].material.E);
    const double expect = ct_params_get(&sc.params, "kappa_scale") * Emin;
    const ct_params *p = &sim->model->params;
    const int ik = ct_params_index(p, "kappa");
    ck_assert_int_ge(ik, 0);
    ck_assert(sc.params.is_auto[ik]);
    printf("auto kappa: instance kappa = %.17g (kappa_scale %g x min E %g = %.17g), is_auto %d\n", p->value[ik],
           ct_params_get(&sc.params, "kappa_scale"), Emin, expect, p->is_auto[ik]);
    ck_assert(expect == 0.25 * 3.7e4);
    ck_assert(p->value[ik] == expect);
    ck_assert_int_eq(p->is_auto[ik], 1);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);

    /* `contactlab run` logs the resolved number as attribute kappa of /model/ipc, and "auto" = "kappa" */
    const char *build = getenv("CT_BUILD");
    char cli[1024], *dir = ct_test_tmpdir(), path[1200], out[1200], cmd[4096];
    snprintf(cli, sizeof cli, "%s/contactlab", build && *build ? build : "build");
    ck_assert_msg(access(cli, X_OK) == 0, "%s not found (CT_BUILD)", cli);
    ck_assert_ptr_nonnull(dir);
    snprintf(path, sizeof path, "%s/auto.json", dir);
    snprintf(out, sizeof out, "%s/auto.h5", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(auto_scene, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' run '%s' -o '%s' --quiet </dev/null", cli, path, out);
    ck_assert_int_eq(system(cmd), 0);
    hid_t h = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(h, 0);
    hid_t a = H5Aopen_by_name(h, "/model/ipc", "kappa", H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(a, 0);
    hid_t t = H5Aget_type(a);
    ck_assert_int_eq(H5Tget_class(t), H5T_FLOAT);
    double kappa = NAN;
    ck_assert_int_ge(H5Aread(a, H5T_NATIVE_DOUBLE, &kappa), 0);
    H5Tclose(t);
    H5Aclose(a);
    H5Fclose(h);
    char *autos = NULL;
    ck_assert_int_eq(ct_h5_read_attr_str(out, "/model/ipc", "auto", &autos, NULL), CT_OK);
    printf("auto kappa: contactlab run wrote /model/ipc kappa = %.17g, auto = \"%s\"\n", kappa, autos);
    ck_assert(kappa == expect);
    ck_assert_str_eq(autos, "kappa");
    free(autos);
    remove(out);
    remove(path);
    rmdir(dir);
    free(dir);
}
END_TEST

static Suite *constraint_suite(void)
{
    Suite *s = suite_create("constraint");
    TCase *tc = tcase_create("family");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_family_check);
    tcase_add_test(tc, test_static_refused);
    tcase_add_test(tc, test_life_cycle);
    tcase_add_test(tc, test_wrapper_defaults);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("physics");
    tcase_set_timeout(tp, 60);
    tcase_add_test(tp, test_free_fall_2d);
    tcase_add_test(tp, test_free_fall_3d);
    tcase_add_test(tp, test_drop_2d);
    tcase_add_test(tp, test_drop_3d);
    tcase_add_test(tp, test_reactions);
    tcase_add_test(tp, test_drop_embedded_2d);
    tcase_add_test(tp, test_drop_embedded_3d);
    tcase_add_test(tp, test_auto_kappa);
    suite_add_tcase(s, tp);
    return s;
}

CT_TEST_MAIN(constraint_suite)
