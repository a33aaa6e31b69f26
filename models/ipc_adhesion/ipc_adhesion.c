/* ipc_adhesion.c — the IPC model: area-weighted log barrier + lagged mollified friction
 * (Fang et al. 2023 §3.1, Li, Friction (CMU 15-763)) + the normal and tangential adhesion of Fang et al. (Fang et al. 2023 §4,
 * eq. 10–14), on the core's contact machinery. Registered as "ipc_adhesion" and as "ipc". With
 * eps_c = 0 and mu_a = 0 (the defaults) it is plain IPC, bitwise: the adhesion code paths are not
 * taken. Formulas: models/ipc_adhesion/README.md.
 *
 * Per step: begin_step lags the face-aware contact weights (ct_contact_mesh_lag: the face normals
 * and contact directions at x^n, so every term's weight is a constant of the step) and the
 * friction and tangential adhesion state (λ, λ_a, T, closest points) at x^n; every energy,
 * gradient and Hessian call builds the collision set at its x
 * (pairs within the reach: d̂, or d̂_a with adhesion; from the core's candidate cache,
 * ct_candidate_cache.h, reused while x stays within bp_margin; the set itself cached while x does
 * not change); a pair's normal energy density is κ b(d) + a(d), its Hessian projected as a whole;
 * max_step is the core's collision-free step size (ct_stepsize.h: additive CCD on the swept
 * candidates, the half-space obstacles in closed form); end_step updates the adaptive stiffness
 * and the statistics.
 */
#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_barrier.h"
#include "contactlab/ct_candidate_cache.h"
#include "contactlab/ct_ccd.h"
#include "contactlab/ct_collisions.h"
#include "contactlab/ct_friction.h"
#include "contactlab/ct_ipc_params.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_stepsize.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------- parameters ---------- */

static const char *const variant_choices[] = {"distance", "squared", NULL};

enum {
    P_DHAT = CT_IPC_P_DHAT, P_KAPPA = CT_IPC_P_KAPPA, P_MU = CT_IPC_P_MU, P_EPS_V = CT_IPC_P_EPS_V,
    P_COLSET = CT_IPC_P_COLSET, P_EEW = CT_IPC_P_EEW, P_CCD_S = CT_IPC_P_CCD_S, P_KAPPA_SCALE = CT_IPC_P_KAPPA_SCALE,
    P_BP_MARGIN = CT_IPC_P_BP_MARGIN, P_QUAD = CT_IPC_P_QUADRATURE, P_EPS_C = CT_IPC_NPARAMS, P_MU_A, P_DHAT_P,
    P_DHAT_A, P_S_P, P_EPS_A, P_VARIANT, P_Y_OBS, P_NPARAMS
};

static const ct_param_spec ipc_params[] = {
    CT_IPC_PARAM_SPECS,
    [P_EPS_C] = {"eps_c", CT_PARAM_REAL, 0, "", 0, INFINITY, 0, NULL,
                 "adhesion critical strain ε_c: peak normal adhesion pressure Y·ε_c at d̂_p, Y the smaller Young's "
                 "modulus of the pair (0: no adhesion)",
                 0},
    [P_MU_A] = {"mu_a", CT_PARAM_REAL, 0, "", 0, INFINITY, 0, NULL,
                "tangential adhesion coefficient μ_a: largest tangential adhesion force μ_a × area × Y·ε_c "
                "(0: none; needs eps_c > 0)",
                0},
    [P_DHAT_P] = {"dhat_p", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                  "distance of the peak adhesion pressure d̂_p (auto: d̂, or s_p·d̂_a when s_p is given)", 1},
    [P_DHAT_A] = {"dhat_a", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                  "adhesion activation distance d̂_a > d̂_p (auto: 2 d̂)", 1},
    [P_S_P] = {"s_p", CT_PARAM_REAL, 0, "", 0, 1, CT_PARAM_MIN_EXCL | CT_PARAM_MAX_EXCL | CT_PARAM_AUTO, NULL,
               "d̂_p as a fraction of d̂_a (d̂_p = s_p·d̂_a; instead of dhat_p)", 1},
    [P_EPS_A] = {"eps_a", CT_PARAM_REAL, 0, "m/s", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                 "tangential adhesion slip-velocity scale ε_a: the force peaks at slip ε_a·h and vanishes at 2ε_a·h "
                 "(auto: eps_v)",
                 1},
    [P_VARIANT] = {"adhesion_variant", CT_PARAM_CHOICE, 0, "", 0, 0, 0, variant_choices,
                   "distance: a(d) piecewise quadratic in d, peak pressure exactly Y·ε_c at d̂_p (the paper); "
                   "squared: piecewise quadratic in d² (public IPC code), pressure Y·ε_c at d̂_p",
                   0},
    [P_Y_OBS] = {"young_obstacle", CT_PARAM_REAL, 0, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                 "Y of participants without a material (half-spaces, scripted bodies) for adhesion "
                 "(auto: the other participant's)",
                 1},
    [P_NPARAMS] = {NULL},
};

/* ---------- state ---------- */

typedef struct ipc_state {
    int dim, nx, nbodies, nobs;
    double dhat, kappa, kappa_max, mu, eps_v;
    int kappa_auto;
    ct_colset_opts colset;
    ct_ccd_opts ccd;
    unsigned char *movable;
    ct_contact_mesh cm;
    /* collision set at the cached x */
    ct_collision_set cs;
    ct_stepsize step;       /* max_step's work memory (swept candidates and boxes, reused) */
    double *x_cached;
    int cache_valid;
    /* the terms' gradients at x_cached, left by the energy call (a Newton iteration asks for the
     * gradient where the line search last evaluated the energy): 12 per term */
    double *gloc;
    size_t gloc_cap;
    int gloc_valid;
    /* proximity candidates queried with boxes inflated by reach + margin (margin = bp_margin·d̂)
     * and reused while no surface vertex has moved more than margin/2; the first set built after
     * a query marks the near ones, which the later builds read (ct_candidate_cache.h) */
    ct_candidate_cache cache;
    /* friction lagged at x_lag (x^n, or the last converged iterate) */
    ct_friction_set fs;
    double *x_step0; /* x^n: friction displacements are measured from it */
    /* adhesion (Fang et al. 2023 §4); adh_on = ε_c > 0 */
    int adh_on, np;
    double reach;              /* activation distance of the collision set: d̂, or max(d̂, d̂_a) */
    double mu_a, eps_a;
    ct_adhesion_law *law;      /* np*np: the normal law of each participant pair (Y differs) */
    /* statistics */
    double t_bp, t_ccd, t_pairs;
    double prev_min_dist;
    const char *scalar_names[6];
    double *soc_work; /* ct_collision_correct_trial's work memory, kept across trials */
    size_t soc_cap;
    long n_ccd_reused; /* max_step calls served from the proximity candidates this step (the
                          proximity queries this step: cache.n_queries) */
} ipc_state;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* barrier density κ b(√s) */
static double barrier_density(const void *ctx, const ct_collision *c, double s, double *ps, double *pss)
{
    (void)c;
    const ipc_state *st = ctx;
    double b = ct_barrier_s(s, st->dhat, ps, pss);
    if (ps) *ps *= st->kappa;
    if (pss) *pss *= st->kappa;
    return st->kappa * b;
}

static double pair_mu(const void *ctx, const ct_collision *c)
{
    (void)c;
    return ((const ipc_state *)ctx)->mu;
}

/* ---------- adhesion densities ---------- */

/* Index of the participant pair of a collision into the np × np tables. */
static int pair_index(const ipc_state *st, const ct_collision *c)
{
    const int A = ct_collision_part(c, &st->cm, st->nbodies, 0);
    const int B = c->kind == CT_COL_PH ? st->nbodies + c->v[1] : ct_collision_part(c, &st->cm, st->nbodies, c->side);
    return A * st->np + B;
}

/* Whether a term carries adhesion: its participants have Y·ε_c > 0, and it is part of the surface
 * integral. The convergent set's edge–edge family (flagged when the set is built with split_ee)
 * is a point-contact correction with the weight s_e d̂² that keeps creases from crossing; the face
 * integral is the vertex quadrature's. Adhesion on those terms would add nothing to the integral
 * but a torque: their energy m(x)·ψ with the edge–edge mollifier m (0 for parallel edges) and an
 * adhesive ψ < 0 is lowest when edges turn away from parallel, which twisted a frictionless plate
 * bonded on aligned grids by 0.012 rad in one step (experiments/pull_peel, μ_a = 0). */
static int adhesive(const ipc_state *st, const ct_collision *c)
{
    return !(c->flags & CT_COL_EDGE_FAMILY) && st->law[pair_index(st, c)].y_eps > 0.0;
}

/* adhesion alone, a(√s) (the force report's adhesion_normal) */
static double adhesion_density(const void *ctx, const ct_collision *c, double s, double *ps, double *pss)
{
    const ipc_state *st = ctx;
    if (c->flags & CT_COL_EDGE_FAMILY) {
        if (ps) *ps = 0.0;
        if (pss) *pss = 0.0;
        return 0.0;
    }
    return ct_adhesion_s(&st->law[pair_index(st, c)], s, ps, pss);
}

/* the normal density of a pair with adhesion on: κ b(√s) + a(√s), one energy, so its Hessian is
 * projected as a whole */
static double contact_density(const void *ctx, const ct_collision *c, double s, double *ps, double *pss)
{
    double bs = 0.0, bss = 0.0, as = 0.0, ass = 0.0;
    const double b = barrier_density(ctx, c, s, ps ? &bs : NULL, pss ? &bss : NULL);
    const double a = adhesion_density(ctx, c, s, ps ? &as : NULL, pss ? &ass : NULL);
    if (ps) *ps = bs + as;
    if (pss) *pss = bss + ass;
    return b + a;
}

/* The friction's normal force with adhesion on: the compressive part of the net pressure,
 * −min(0, ψ'(d)) with ψ = κb + a. Only ψ_s is used (by ct_collision_normal_force). A pair held at
 * the balance gap (barrier and adhesion pressures equal) carries no friction; one pressed
 * further does (the paper's reading of Fig. 14: friction needs a normal contact force). */
static double friction_normal_density(const void *ctx, const ct_collision *c, double s, double *ps, double *pss)
{
    double t = 0.0;
    const double v = contact_density(ctx, c, s, &t, NULL);
    if (ps) *ps = t < 0.0 ? t : 0.0;
    if (pss) *pss = 0.0;
    return v;
}

/* λ_a of the tangential adhesion: the pair's largest normal adhesion force w·m·Y·ε_c, written as
 * the density whose −∂/∂d is Y·ε_c (ψ_s = −Yε_c / (2d)). */
static double adhesion_lambda_density(const void *ctx, const ct_collision *c, double s, double *ps, double *pss)
{
    const ipc_state *st = ctx;
    if (ps) *ps = s > 0.0 && adhesive(st, c) ? -0.5 * st->law[pair_index(st, c)].y_eps / sqrt(s) : 0.0;
    if (pss) *pss = 0.0;
    return 0.0;
}

static double pair_mu_a(const void *ctx, const ct_collision *c)
{
    const ipc_state *st = ctx;
    return adhesive(st, c) ? st->mu_a : 0.0;
}

/* The normal density in use and the one friction takes λ from. */
static ct_density_fn normal_density(const ipc_state *st) { return st->adh_on ? contact_density : barrier_density; }
static ct_density_fn friction_density(const ipc_state *st)
{
    return st->adh_on ? friction_normal_density : barrier_density;
}

static void ipc_destroy(void *p)
{
    ipc_state *st = p;
    free(st->movable);
    free(st->soc_work);
    ct_contact_mesh_free(&st->cm);
    ct_candidate_cache_free(&st->cache);
    ct_stepsize_free(&st->step);
    free(st->gloc);
    ct_collision_set_free(&st->cs);
    ct_friction_set_free(&st->fs);
    free(st->law);
    free(st->x_cached);
    free(st->x_step0);
}

/* Adhesion parameters: d̂_p, d̂_a, the per-pair laws (Y = the smaller Young's modulus of the two
 * participants; participants without a material take young_obstacle, or the other's Y). */
static ct_status adhesion_init(ipc_state *st, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    /* the plain `ipc` model's table ends with the IPC parameters: no adhesion */
    const int has_adhesion = prm->n > P_EPS_C;
    const double eps_c = has_adhesion ? prm->value[P_EPS_C] : 0.0;
    st->np = c->nbodies + c->nobstacles;
    st->adh_on = eps_c > 0.0;
    st->reach = st->dhat;
    st->mu_a = has_adhesion ? prm->value[P_MU_A] : 0.0;
    if (!st->adh_on) {
        if (st->mu_a > 0.0)
            ct_diag_add(diag, CT_OK, "warning: /contact/mu_a: %g has no effect with eps_c = 0 (no adhesion)", st->mu_a);
        st->mu_a = 0.0;
        return CT_OK;
    }
    const double da = prm->is_auto[P_DHAT_A] ? 2.0 * st->dhat : prm->value[P_DHAT_A];
    double dp = st->dhat;
    if (!prm->is_auto[P_S_P] && !prm->is_auto[P_DHAT_P]) {
        ct_diag_add(diag, CT_EINPUT, "/contact/s_p: give either dhat_p or s_p, not both");
        return CT_EINPUT;
    }
    if (!prm->is_auto[P_S_P]) dp = prm->value[P_S_P] * da;
    if (!prm->is_auto[P_DHAT_P]) dp = prm->value[P_DHAT_P];
    if (!(dp < da)) {
        ct_diag_add(diag, CT_EINPUT, "/contact/dhat_p: d̂_p = %g m must be below d̂_a = %g m", dp, da);
        return CT_EINPUT;
    }
    st->reach = fmax(st->dhat, da);
    st->eps_a = prm->is_auto[P_EPS_A] ? st->eps_v : prm->value[P_EPS_A];
    prm->value[P_DHAT_A] = da; /* the "auto" entries as resolved */
    prm->value[P_DHAT_P] = dp;
    prm->value[P_S_P] = dp / da;
    prm->value[P_EPS_A] = st->eps_a;
    const ct_adhesion_variant var = (int)prm->value[P_VARIANT] == 1 ? CT_ADH_SQUARED : CT_ADH_DISTANCE;
    const double y_obs = prm->is_auto[P_Y_OBS] ? NAN : prm->value[P_Y_OBS];
    if (ct_adhesion_pair_laws(&st->law, st->np, c->part_young, y_obs, var, dp, da, eps_c) != CT_OK) return CT_ENOMEM;
    if (st->mu_a > 0.0 && c->newton_tol_v > 0.0 && st->eps_a < 2.0 * c->newton_tol_v)
        ct_diag_add(diag, CT_OK,
                    "warning: /contact/eps_a: %g m/s is below 2 x the Newton velocity tolerance (%g m/s): Newton may "
                    "stop before the tangential adhesion is resolved (as for eps_v, models/ipc_adhesion/README.md)",
                    st->eps_a, c->newton_tol_v);
    return CT_OK;
}

/* The energy acts between a body's own surface features too (self-contact), so a body's rest
 * shape must keep every two features that share no vertex farther apart than the reach (d̂, or
 * d̂_a with adhesion): otherwise the barrier pushes them apart (adhesion pulls them together)
 * before anything touches, the rest shape is not at rest, and a d̂ beyond the mesh's feature size
 * crushes the body. */
static ct_status check_rest_shape(const ipc_state *st, const ct_step_ctx *c, ct_diag *diag)
{
    ct_self_closest sc;
    ct_status s = ct_broadphase_self_closest(c->surf, c->x_rest, c->vert_part, st->movable, st->reach, c->threads, &sc);
    if (s != CT_OK || sc.kind == CT_SELF_NONE) return s;
    char pair[96];
    if (sc.kind == CT_SELF_EE) snprintf(pair, sizeof pair, "edges %d and %d", sc.a, sc.b);
    else snprintf(pair, sizeof pair, "vertex %d and %s %d", sc.a, sc.kind == CT_SELF_VF ? "face" : "edge", sc.b);
    const int adh = st->reach > st->dhat;
    return ct_diag_add(diag, CT_EINPUT,
                       "/contact/%s: %g m reaches across body '%s' at rest: its surface's %s share no vertex and "
                       "are %.3g m apart, so the %s acts on the rest shape; use a %s below %.3g m (a contact distance: "
                       "typically 1e-3 of the scene's size) or a coarser surface",
                       adh ? "dhat_a" : "dhat", st->reach,
                       c->part_names && sc.part >= 0 ? c->part_names[sc.part] : "?", pair, sc.d,
                       adh ? "adhesion" : "barrier", adh ? "dhat_a" : "dhat", sc.d);
}

static ct_status ipc_init(void *p, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    ipc_state *st = p;
    st->dim = c->dim;
    st->nx = c->nx;
    st->nbodies = c->nbodies;
    st->nobs = c->nobstacles;
    st->dhat = prm->value[P_DHAT];
    st->mu = prm->value[P_MU];
    st->eps_v = prm->value[P_EPS_V];
    /* In the stick branch the friction stiffness is ~2μλ/(ε_v h), so a Newton step against an
     * unbalanced tangential force F ~ μλ is |p|/h ~ ε_v F/(2μλ) ~ ε_v/2: with a Newton tolerance
     * above that, Newton may stop inside the stick branch and a block that should start sliding
     * sticks. A warning, not an error: sliding contacts (v >> ε_v) are unaffected. */
    if (st->mu > 0.0 && c->newton_tol_v > 0.0 && st->eps_v < 2.0 * c->newton_tol_v)
        ct_diag_add(diag, CT_OK,
                    "warning: /contact/eps_v: %g m/s is below 2 x the Newton velocity tolerance (solver.newton_tol "
                    "x bounding-box diagonal = %g m/s): Newton may stop inside the stick branch of friction, so "
                    "contacts at rest may fail to start sliding; lower solver.newton_tol or raise eps_v "
                    "(models/ipc_adhesion/README.md, friction)", st->eps_v, c->newton_tol_v);
    st->kappa_auto = prm->is_auto[P_KAPPA];
    if (st->kappa_auto) {
        double Emin = INFINITY;
        for (int b = 0; b < c->nbodies; ++b)
            if (c->part_young && isfinite(c->part_young[b])) Emin = fmin(Emin, c->part_young[b]);
        if (!isfinite(Emin)) {
            ct_diag_add(diag, CT_EINPUT,
                        "/contact/kappa: \"auto\" needs at least one body with a material (give a value in Pa)");
            return CT_EINPUT;
        }
        st->kappa = prm->value[P_KAPPA_SCALE] * Emin;
        st->kappa_max = 100.0 * st->kappa;
        prm->value[P_KAPPA] = st->kappa; /* the initial value; the adaptive update may double it */
    } else {
        st->kappa = st->kappa_max = prm->value[P_KAPPA];
    }
    ct_status sa = adhesion_init(st, c, prm, diag);
    if (sa != CT_OK) return sa;
    st->colset.kind = (int)prm->value[P_COLSET] == 0 ? CT_COLSET_CONVERGENT : CT_COLSET_IPC2020;
    st->colset.ee_weight = (int)prm->value[P_EEW] == 0 ? CT_EEW_DHAT2 : CT_EEW_AREA;
    st->colset.dhat = st->reach;
    st->colset.ee_dhat = st->dhat; /* ω_e = d̂² whether adhesion reaches farther or not */
    /* adhesion on the surface integral only: the d̂²-weighted edge–edge family apart (adhesive()) */
    st->colset.split_ee = st->adh_on && st->colset.kind == CT_COLSET_CONVERGENT && st->colset.ee_weight == CT_EEW_DHAT2;
    st->colset.threads = c->threads;
    st->ccd = ct_ccd_default_opts();
    st->ccd.s = prm->value[P_CCD_S];
    size_t nxd = (size_t)c->nx * (size_t)c->dim;
    st->movable = malloc((size_t)c->nx + 1);
    st->x_cached = malloc((nxd + 1) * sizeof(double));
    ct_status sc = ct_candidate_cache_init(&st->cache, c->dim, c->nx, st->reach, prm->value[P_BP_MARGIN] * st->dhat);
    if (sc != CT_OK) return sc;
    st->x_step0 = malloc((nxd + 1) * sizeof(double));
    if (!st->movable || !st->x_cached || !st->x_step0) return CT_ENOMEM;
    for (int v = 0; v < c->nx; ++v) st->movable[v] = !(c->vert_kinematic && c->vert_kinematic[v]);
    ct_status s = check_rest_shape(st, c, diag);
    if (s != CT_OK) return s;
    s = ct_contact_mesh_init(&st->cm, c->dim, c->surf, c->x_rest, c->vert_part, st->movable);
    if (s != CT_OK) return s;
    st->cm.quadrature = (int)prm->value[P_QUAD] == 1 ? CT_QUAD_VERTEX : CT_QUAD_FACE;
    st->cm.kin_sides = (int)prm->value[CT_IPC_P_KIN_QUAD] == 1 ? CT_KIN_TWO_SIDED : CT_KIN_ONE_SIDED;
    s = ct_contact_mesh_lag(&st->cm, c->x_prev, NULL, 0.0, 0); /* (begin_step lags again at every step) */
    if (s != CT_OK) return s;
    ct_stepsize_init(&st->step);
    ct_collision_set_init(&st->cs);
    ct_friction_set_init(&st->fs);
    memcpy(st->x_step0, c->x_prev, nxd * sizeof(double));
    st->prev_min_dist = INFINITY;
    st->scalar_names[0] = "kappa";
    st->scalar_names[1] = "min_distance";
    st->scalar_names[2] = "friction_pairs";
    st->scalar_names[3] = "proximity_queries";
    st->scalar_names[4] = "ccd_from_proximity";
    st->scalar_names[5] = "adhesion_pairs";
    return CT_OK;
}

/* The terms' d² at the x of the last energy evaluation, kept after their gradients in gloc. */
static double *gloc_d2(const ipc_state *st) { return st->gloc + (size_t)st->cs.n * 12; }

/* Make st->cs the collision set at x. */
static ct_status ensure_collisions(ipc_state *st, const ct_step_ctx *c, const double *x)
{
    size_t nxd = (size_t)st->nx * (size_t)st->dim;
    if (st->cache_valid && memcmp(st->x_cached, x, nxd * sizeof *x) == 0) return CT_OK;
    double t0 = now();
    ct_status s = ct_candidate_cache_update(&st->cache, c->surf, x, st->movable, c->threads, NULL);
    double t1 = now();
    st->gloc_valid = 0;
    if (s == CT_OK)
        s = ct_candidate_cache_collisions(&st->cache, &st->cs, &st->cm, c->obstacles, c->nobstacles, x, &st->colset);
    st->t_bp += t1 - t0;
    st->t_pairs += now() - t1;
    if (s != CT_OK) return s;
    memcpy(st->x_cached, x, nxd * sizeof *x);
    st->cache_valid = 1;
    return CT_OK;
}

static double friction_eps(const ipc_state *st, const ct_step_ctx *c) { return st->eps_v * c->h; }

static double adhesion_eps(const ipc_state *st, const ct_step_ctx *c) { return st->eps_a * c->h; }

/* Lag the tangential set at x: friction (λ from the compressive normal force) and tangential
 * adhesion (λ_a = w·m·Yε_c) on the same pairs, one potential per pair. */
static ct_status lag_friction(ipc_state *st, const ct_step_ctx *c, const double *x)
{
    st->fs.n = 0;
    if (!(st->mu > 0.0) && !(st->mu_a > 0.0)) return CT_OK;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    const ct_tangent_adhesion adh = {adhesion_lambda_density, st, pair_mu_a, st, adhesion_eps(st, c)};
    return ct_tangent_set_build(&st->fs, &st->cs, &st->cm, c->obstacles, x, friction_density(st), st,
                                st->mu > 0.0 ? pair_mu : NULL, st, st->mu_a > 0.0 ? &adh : NULL);
}

static ct_status ipc_begin_step(void *p, const ct_step_ctx *c)
{
    ipc_state *st = p;
    st->gloc_valid = 0; /* (κ may have changed at the end of the last step) */
    st->t_bp = st->t_ccd = st->t_pairs = 0.0;
    st->cache.n_queries = 0;
    st->n_ccd_reused = 0;
    memcpy(st->x_step0, c->x_prev, (size_t)st->nx * st->dim * sizeof(double));
    if (st->cm.quadrature == CT_QUAD_FACE) {
        /* the terms' weights are lagged at x^n, with the contact directions from the candidates
         * within reach there; a set built before (at the same x, at the end of the last step) has
         * the old weights */
        const double t0 = now();
        ct_status s = ct_candidate_cache_update(&st->cache, c->surf, c->x_prev, st->movable, c->threads, NULL);
        const int edges = st->colset.kind == CT_COLSET_IPC2020 || st->colset.ee_weight == CT_EEW_AREA;
        if (s == CT_OK) s = ct_contact_mesh_lag(&st->cm, c->x_prev, &st->cache.all, st->reach, edges);
        st->t_pairs += now() - t0;
        if (s != CT_OK) return s;
        st->cache_valid = 0;
    } else if (c->dim == 3 && st->colset.kind == CT_COLSET_CONVERGENT) {
        /* the edges' creases (their edge–edge weights) are lagged at x^n too */
        ct_status s = ct_contact_mesh_lag(&st->cm, c->x_prev, NULL, 0.0, 0);
        if (s != CT_OK) return s;
        st->cache_valid = 0;
    }
    return lag_friction(st, c, c->x_prev);
}

static ct_status ipc_energy(void *p, const ct_step_ctx *c, const double *x, double *E)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    double t0 = now();
    double e;
    const size_t need = (size_t)st->cs.n * 13 + 1; /* (12 per term for the gradients, then the d²) */
    if (need > st->gloc_cap) {
        free(st->gloc);
        st->gloc = malloc(need * sizeof *st->gloc);
        st->gloc_cap = st->gloc ? need : 0;
    }
    if (st->gloc) { /* the energy, and the terms' gradients on the way */
        e = ct_collision_energy_grad(&st->cs, &st->cm, c->obstacles, x, normal_density(st), st, c->threads, st->gloc,
                                     gloc_d2(st));
        st->gloc_valid = 1;
    } else {
        e = ct_collision_energy(&st->cs, &st->cm, c->obstacles, x, normal_density(st), st, c->threads);
    }
    if (st->fs.n) e += ct_friction_energy(&st->fs, st->dim, x, st->x_step0, friction_eps(st, c), c->threads);
    st->t_pairs += now() - t0;
    *E = e;
    return isnan(e) ? CT_ENONFINITE : CT_OK; /* (also what an allocation failure of the sum gives) */
}

static ct_status ipc_gradient(void *p, const ct_step_ctx *c, const double *x, double *g)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    double t0 = now();
    if (st->gloc_valid) /* ensure_collisions kept the set: x is where the energy left them */
        ct_collision_gradient_add(&st->cs, &st->cm, st->gloc, g);
    else
        s = ct_collision_gradient(&st->cs, &st->cm, c->obstacles, x, normal_density(st), st, c->threads, g);
    if (s == CT_OK && st->fs.n)
        s = ct_friction_gradient(&st->fs, st->dim, x, st->x_step0, friction_eps(st, c), c->threads, g);

    st->t_pairs += now() - t0;
    return s;
}

static ct_status ipc_hessian(void *p, const ct_step_ctx *c, const double *x, ct_triplets *H)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    double t0 = now();
    s = (c->exact_hessian ? ct_collision_hessian_exact : ct_collision_hessian)(&st->cs, &st->cm, c->obstacles, x,
                                                                               normal_density(st), st, c->threads, H);
    if (s == CT_OK && st->fs.n) /* outside the exact mode, the majorizer: no overshoot of a slip reversal */
        s = (c->exact_hessian ? ct_friction_hessian_exact : ct_friction_hessian_majorizer)(
            &st->fs, st->dim, x, st->x_step0, friction_eps(st, c), c->threads, H);

    st->t_pairs += now() - t0;
    return s;
}

/* Largest safe step along dx: the core's collision-free step size (ct_stepsize.h), with the
 * swept candidates filtered from the proximity candidates when the sweep stays within bp_margin
 * (the same list as a new swept-box query, hence the same step). */
static ct_status ipc_max_step(void *p, const ct_step_ctx *c, const double *x, const double *dx, double *alpha)
{
    ipc_state *st = p;
    ct_stepsize_info info;
    ct_status s = ct_stepsize_max(&st->step, c->surf, st->movable, c->obstacles, c->nobstacles, &st->cache, x, dx,
                                  &st->ccd, c->threads, alpha, &info);
    st->t_bp += info.t_candidates;
    st->t_ccd += info.t_ccd;
    st->n_ccd_reused += info.from_cache;
    return s;
}

/* Second-order correction of a line-search trial (ct_collision_correct_trial): the terms of the
 * set at the trial whose gap the step's curvature closed again, opened to their linear
 * prediction (at most d̂, the barrier's reach; adhesion beyond it needs no gap restored). */
static ct_status ipc_correct_trial(void *p, const ct_step_ctx *c, const double *x, const double *dx, double alpha,
                                   double *x_trial, int *changed)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x_trial);
    if (s != CT_OK) return s;
    double t0 = now();
    long n;
    /* the terms' d² at the trial, from its energy evaluation when that came first (it does in the
     * line search) */
    const double *s1 = st->gloc_valid ? gloc_d2(st) : NULL;
    s = ct_collision_correct_trial(&st->cs, &st->cm, c->obstacles, x, dx, alpha, CT_SOC_RATIO, st->dhat, s1, c->threads,
                                   x_trial, &st->soc_work, &st->soc_cap, &n);
    st->t_pairs += now() - t0;
    *changed = n > 0;
    return s;
}

/* Fixed-point friction: re-lag at the converged x; the change is measured on the friction
 * forces at x (max-norm relative to the largest). */
static ct_status ipc_update_lagged(void *p, const ct_step_ctx *c, const double *x, double *delta)
{
    ipc_state *st = p;
    *delta = 0.0;
    if (!(st->mu > 0.0) && !(st->mu_a > 0.0)) return CT_OK;
    size_t nxd = (size_t)st->nx * st->dim;
    double *g0 = calloc(nxd + 1, sizeof *g0), *g1 = calloc(nxd + 1, sizeof *g1);
    if (!g0 || !g1) {
        free(g0);
        free(g1);
        return CT_ENOMEM;
    }
    double eps = friction_eps(st, c);
    ct_status s = ct_friction_gradient(&st->fs, st->dim, x, st->x_step0, eps, c->threads, g0);
    if (s == CT_OK) s = lag_friction(st, c, x);
    if (s == CT_OK) s = ct_friction_gradient(&st->fs, st->dim, x, st->x_step0, eps, c->threads, g1);
    double dmax = 0.0, gmax = 0.0;
    for (size_t i = 0; i < nxd; ++i) {
        dmax = fmax(dmax, fabs(g1[i] - g0[i]));
        gmax = fmax(gmax, fabs(g1[i]));
    }
    *delta = gmax > 0.0 ? dmax / gmax : 0.0;
    free(g0);
    free(g1);
    return s;
}

static ct_status ipc_end_step(void *p, const ct_step_ctx *c, const double *x, ct_model_stats *ms)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    double dmin = ct_collision_min_distance(&st->cs, &st->cm, c->obstacles, x);
    ms->n_candidates = st->cache.all.vf.n + st->cache.all.ee.n + st->cache.all.ve.n;
    ms->n_active = st->cs.n;
    ms->min_distance = dmin;
    ms->t_broadphase = st->t_bp;
    ms->t_ccd = st->t_ccd;
    ms->t_pairs = st->t_pairs;
    /* IPC adaptive stiffness: double κ while the closest contact keeps closing below ε_d */
    if (st->kappa_auto) {
        double eps_d = 1e-9 * c->bbox_diag;
        if (st->prev_min_dist < eps_d && dmin < eps_d && dmin < st->prev_min_dist)
            st->kappa = fmin(st->kappa_max, 2.0 * st->kappa);
        st->gloc_valid = 0;
    }
    st->prev_min_dist = dmin;
    return CT_OK;
}

/* Book one term's gradient g (its stencil, n vertices) as forces between the participants of its
 * two primitives; a half-space takes the reaction of the vertex. */
static void report_term(ct_force_report *r, const ipc_state *st, const ct_collision *col, const double *g,
                        ct_force_category cat)
{
    const int dim = st->dim, nb = st->nbodies;
    int A = ct_collision_part(col, &st->cm, nb, 0);
    int B = col->kind == CT_COL_PH ? nb + col->v[1] : ct_collision_part(col, &st->cm, nb, col->side);
    double fa[3] = {0, 0, 0}, fb[3] = {0, 0, 0};
    for (int k = 0; k < ct_collision_nverts(col); ++k)
        for (int d = 0; d < dim; ++d) (k < col->side ? fa : fb)[d] -= g[dim * k + d];
    if (col->kind == CT_COL_PH)
        for (int d = 0; d < dim; ++d) fb[d] = -fa[d];
    double *FA = ct_force_report_at(r, A, B, cat), *FB = ct_force_report_at(r, B, A, cat);
    for (int d = 0; d < dim; ++d) FA[d] += fa[d], FB[d] += fb[d];
    int *count = cat == CT_FORCE_BARRIER ? r->active_pairs : cat == CT_FORCE_ADHESION_NORMAL ? r->bonded_pairs : NULL;
    if (count && col->w > 0.0) {
        count[A * r->np + B]++;
        if (A != B) count[B * r->np + A]++;
    }
}

static ct_status ipc_forces(void *p, const ct_step_ctx *c, const double *x, ct_force_report *out)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    double g[12];
    /* the barrier and the adhesion of a pair are one energy; their forces are booked apart
     * (the gradient is linear in the density). Active: a barrier force; bonded: an adhesion
     * force (positive-weight terms). */
    for (long i = 0; i < st->cs.n; ++i) {
        const ct_collision *col = &st->cs.c[i];
        const double s2 = ct_collision_d2(col, &st->cm, c->obstacles, x, NULL, NULL);
        if (s2 < st->dhat * st->dhat) {
            ct_collision_term_grad(col, &st->cm, c->obstacles, x, barrier_density, st, g);
            report_term(out, st, col, g, CT_FORCE_BARRIER);
        }
        if (st->adh_on && adhesive(st, col)) {
            ct_collision_term_grad(col, &st->cm, c->obstacles, x, adhesion_density, st, g);
            report_term(out, st, col, g, CT_FORCE_ADHESION_NORMAL);
        }
    }
    double eps = friction_eps(st, c), epa = adhesion_eps(st, c);
    long n_adh = 0, n_fric = 0;
    for (long i = 0; i < st->fs.n; ++i) {
        const ct_friction_pair *fp = &st->fs.p[i];
        if (fp->lambda != 0.0) {
            n_fric++;
            ct_friction_term_grad(fp, st->dim, x, st->x_step0, eps, epa, CT_TANGENT_FRICTION, g);
            report_term(out, st, &fp->c, g, CT_FORCE_FRICTION);
        }
        if (fp->lambda_a != 0.0) {
            ct_friction_term_grad(fp, st->dim, x, st->x_step0, eps, epa, CT_TANGENT_ADHESION, g);
            report_term(out, st, &fp->c, g, CT_FORCE_ADHESION_TANGENTIAL);
            n_adh++;
        }
    }
    int ns = out->nscalars < 6 ? out->nscalars : 6;
    out->nscalars = ns;
    double vals[6] = {st->kappa, ct_collision_min_distance(&st->cs, &st->cm, c->obstacles, x), (double)n_fric,
                      (double)st->cache.n_queries, (double)st->n_ccd_reused, (double)n_adh};
    for (int k = 0; k < ns; ++k) {
        out->scalar_names[k] = st->scalar_names[k];
        out->scalars[k] = vals[k];
    }
    return CT_OK;
}

/* Per-vertex fields: the gap of every stencil vertex of every term of the collision set at x (the
 * pairs within the reach: d̂, or d̂_a with adhesion; a half-space term's vertex alone), the
 * smallest over its terms; the force is the core's −∇E (barrier, adhesion, friction). */
static ct_status ipc_vertex_fields(void *p, const ct_step_ctx *c, const double *x, ct_vertex_fields *out)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    for (long i = 0; i < st->cs.n; ++i) {
        const ct_collision *col = &st->cs.c[i];
        const double d = sqrt(ct_collision_d2(col, &st->cm, c->obstacles, x, NULL, NULL));
        for (int k = 0; k < ct_collision_nverts(col); ++k) ct_vertex_fields_gap_min(out, col->v[k], d);
    }
    out->filled |= CT_VF_GAP;
    return CT_OK;
}

#define IPC_OPS                                                                                              \
    .state_size = sizeof(ipc_state), .init = ipc_init, .destroy = ipc_destroy,          \
    .begin_step = ipc_begin_step, .energy = ipc_energy, .gradient = ipc_gradient, .hessian = ipc_hessian,    \
    .max_step = ipc_max_step, .update_lagged = ipc_update_lagged, .correct_trial = ipc_correct_trial,         \
    .end_step = ipc_end_step, .forces = ipc_forces, .vertex_fields = ipc_vertex_fields

/* the plain model takes the IPC parameters alone */
static const ct_param_spec ipc_plain_params[] = {CT_IPC_PARAM_SPECS, {NULL}};

const ct_model_type ct_model_ipc_adhesion = {
    .name = "ipc_adhesion",
    .family = CT_FAMILY_ENERGY,
    .guarantees = CT_GUARANTEE_INTERSECTION_FREE,
    .params = ipc_params,
    .summary = "IPC barrier (area-weighted, d̂) + lagged mollified friction + Fang et al. normal (ε_c) and "
               "tangential (μ_a) adhesion",
    IPC_OPS,
};

const ct_model_type ct_model_ipc = {
    .name = "ipc",
    .summary = "plain IPC: barrier (area-weighted, d̂) + lagged mollified friction; the ipc_adhesion model without "
               "its adhesion parameters",
    .family = CT_FAMILY_ENERGY,
    .guarantees = CT_GUARANTEE_INTERSECTION_FREE,
    .params = ipc_plain_params,
    IPC_OPS,
};
