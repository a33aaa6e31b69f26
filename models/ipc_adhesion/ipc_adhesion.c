/* ipc_adhesion.c — the IPC model: area-weighted log barrier + lagged mollified friction
 * (paper 000 §3.1, paper 003) + the normal and tangential adhesion of Fang et al. (paper 000 §4,
 * eq. 10–14), on the core's contact machinery. Registered as "ipc_adhesion" and as "ipc". With
 * eps_c = 0 and mu_a = 0 (the defaults) it is plain IPC, bitwise: the adhesion code paths are not
 * taken. Formulas: models/ipc_adhesion/README.md.
 *
 * Per step: begin_step lags the friction and tangential adhesion state (λ, λ_a, T, closest
 * points) at x^n; every energy, gradient and Hessian call builds the collision set at its x
 * (pairs within the reach: d̂, or d̂_a with adhesion; broad phase cached while x does not change);
 * a pair's normal energy density is κ b(d) + a(d), its Hessian projected as a whole; max_step
 * runs additive CCD on the swept candidates and the half-space obstacles; end_step updates the
 * adaptive stiffness and the statistics.
 */
#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_barrier.h"
#include "contactlab/ct_broadphase.h"
#include "contactlab/ct_ccd.h"
#include "contactlab/ct_collisions.h"
#include "contactlab/ct_friction.h"
#include "contactlab/ct_ipc_params.h"
#include "contactlab/ct_model.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------- parameters ---------- */

static const char *const variant_choices[] = {"distance", "squared", NULL};

enum {
    P_DHAT = CT_IPC_P_DHAT, P_KAPPA = CT_IPC_P_KAPPA, P_MU = CT_IPC_P_MU, P_EPS_V = CT_IPC_P_EPS_V,
    P_COLSET = CT_IPC_P_COLSET, P_EEW = CT_IPC_P_EEW, P_CCD_S = CT_IPC_P_CCD_S, P_KAPPA_SCALE = CT_IPC_P_KAPPA_SCALE,
    P_BP_MARGIN = CT_IPC_P_BP_MARGIN, P_EPS_C = CT_IPC_NPARAMS, P_MU_A, P_DHAT_P, P_DHAT_A, P_S_P, P_EPS_A, P_VARIANT,
    P_Y_OBS, P_NPARAMS
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
    ct_candidates cand;
    ct_collision_set cs;
    ct_candidates ccd_cand; /* max_step's swept candidates (kept: the lists are reused) */
    double *sweep_box;      /* filter_swept's boxes: 2·dim per vertex, then per edge, then per face */
    size_t sweep_cap;
    double *x_cached;
    int cache_valid;
    /* the terms' gradients at x_cached, left by the energy call (a Newton iteration asks for the
     * gradient where the line search last evaluated the energy): 12 per term */
    double *gloc;
    size_t gloc_cap;
    int gloc_valid;
    /* proximity candidates are queried with boxes inflated by d̂ + margin at x_bp and reused
     * while no surface vertex has moved more than margin/2 from x_bp */
    double *x_bp, bp_margin;
    int bp_valid;
    /* the candidates nearer than reach + margin at x_bp (marked by the first build after the
     * query): the later builds from the same query read only these (the same sets, less work) */
    ct_candidates cand_near;
    int near_valid;
    /* friction lagged at x_lag (x^n, or the last converged iterate) */
    ct_friction_set fs;
    double *x_step0; /* x^n: friction displacements are measured from it */
    /* adhesion (paper 000 §4); adh_on = ε_c > 0 */
    int adh_on, np;
    double reach;              /* activation distance of the collision set: d̂, or max(d̂, d̂_a) */
    double mu_a, eps_a;
    ct_adhesion_law *law;      /* np*np: the normal law of each participant pair (Y differs) */
    /* statistics */
    double t_bp, t_ccd, t_pairs;
    double prev_min_dist;
    const char *scalar_names[6];
    long n_queries;    /* proximity broad-phase queries this step */
    long n_ccd_reused; /* max_step calls served from the proximity candidates this step */
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
 * is a point-contact correction with the weight d̂² that keeps creases from crossing; the face
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
    ct_contact_mesh_free(&st->cm);
    ct_candidates_free(&st->cand);
    ct_candidates_free(&st->ccd_cand);
    ct_candidates_free(&st->cand_near);
    free(st->sweep_box);
    free(st->gloc);
    ct_collision_set_free(&st->cs);
    ct_friction_set_free(&st->fs);
    free(st->law);
    free(st->x_cached);
    free(st->x_bp);
    free(st->x_step0);
}

/* Adhesion parameters: d̂_p, d̂_a, the per-pair laws (Y = the smaller Young's modulus of the two
 * participants; participants without a material take young_obstacle, or the other's Y). */
static ct_status adhesion_init(ipc_state *st, const ct_step_ctx *c, const ct_params *prm, ct_diag *diag)
{
    const double eps_c = prm->value[P_EPS_C];
    st->np = c->nbodies + c->nobstacles;
    st->adh_on = eps_c > 0.0;
    st->reach = st->dhat;
    st->mu_a = prm->value[P_MU_A];
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
    const ct_adhesion_variant var = (int)prm->value[P_VARIANT] == 1 ? CT_ADH_SQUARED : CT_ADH_DISTANCE;
    const double y_obs = prm->is_auto[P_Y_OBS] ? NAN : prm->value[P_Y_OBS];
    const int np = st->np;
    st->law = malloc((size_t)np * (size_t)np * sizeof *st->law);
    if (!st->law) return CT_ENOMEM;
    for (int a = 0; a < np; ++a)
        for (int b = 0; b < np; ++b) {
            double ya = c->part_young ? c->part_young[a] : NAN, yb = c->part_young ? c->part_young[b] : NAN;
            if (!isfinite(ya)) ya = y_obs;
            if (!isfinite(yb)) yb = y_obs;
            double y = isfinite(ya) && isfinite(yb) ? fmin(ya, yb) : isfinite(ya) ? ya : isfinite(yb) ? yb : 0.0;
            st->law[a * np + b] = ct_adhesion_law_make(var, dp, da, y * eps_c);
        }
    if (st->mu_a > 0.0 && c->newton_tol_v > 0.0 && st->eps_a < 2.0 * c->newton_tol_v)
        ct_diag_add(diag, CT_OK,
                    "warning: /contact/eps_a: %g m/s is below 2 x the Newton velocity tolerance (%g m/s): Newton may "
                    "stop before the tangential adhesion is resolved (as for eps_v, models/ipc_adhesion/README.md)",
                    st->eps_a, c->newton_tol_v);
    return CT_OK;
}

static ct_status ipc_init(void *p, const ct_step_ctx *c, const ct_params *prm, ct_diag *diag)
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
    st->x_bp = malloc((nxd + 1) * sizeof(double));
    st->bp_margin = prm->value[P_BP_MARGIN] * st->dhat;
    if (!st->x_bp) return CT_ENOMEM;
    st->x_step0 = malloc((nxd + 1) * sizeof(double));
    if (!st->movable || !st->x_cached || !st->x_step0) return CT_ENOMEM;
    for (int v = 0; v < c->nx; ++v) st->movable[v] = !(c->vert_kinematic && c->vert_kinematic[v]);
    ct_status s = ct_contact_mesh_init(&st->cm, c->dim, c->surf, c->x_rest, c->vert_part, st->movable);
    if (s != CT_OK) return s;
    ct_candidates_init(&st->cand);
    ct_candidates_init(&st->ccd_cand);
    ct_candidates_init(&st->cand_near);
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

/* The candidates queried at x_bp (boxes inflated by d̂ + m) still hold every pair within d̂ at x
 * if no surface vertex moved more than m/2: a distance changes by at most twice the largest
 * displacement. Extra candidates are filtered by the set construction (it keeps d < d̂), and
 * the candidate lists are sorted, so the collision set is the same as with a fresh query. */
static int candidates_valid(const ipc_state *st, const ct_surface *s, const double *x)
{
    if (!st->bp_valid) return 0;
    const double lim2 = 0.25 * st->bp_margin * st->bp_margin;
    const int dim = st->dim;
    for (int i = 0; i < s->nbv; ++i) {
        const int v = s->bverts[i];
        double d2 = 0.0;
        for (int k = 0; k < dim; ++k) {
            const double d = x[(size_t)v * dim + k] - st->x_bp[(size_t)v * dim + k];
            d2 += d * d;
        }
        if (!(d2 <= lim2)) return 0;
    }
    return 1;
}

/* Make st->cs the collision set at x. */
static ct_status ensure_collisions(ipc_state *st, const ct_step_ctx *c, const double *x)
{
    size_t nxd = (size_t)st->nx * (size_t)st->dim;
    if (st->cache_valid && memcmp(st->x_cached, x, nxd * sizeof *x) == 0) return CT_OK;
    double t0 = now();
    ct_status s = CT_OK;
    int queried = 0;
    if (!candidates_valid(st, c->surf, x)) {
        st->near_valid = 0;
        s = ct_broadphase_proximity(c->surf, x, st->movable, st->reach + st->bp_margin, c->threads, &st->cand);
        st->n_queries++;
        if (s == CT_OK) {
            memcpy(st->x_bp, x, nxd * sizeof *x);
            st->bp_valid = 1;
            queried = 1;
        }
    }
    double t1 = now();
    st->gloc_valid = 0;
    if (s == CT_OK && queried && st->bp_margin > 0.0) {
        /* d̂ + m, widened by 1e-6 relative: room for the round-off of the distances */
        s = ct_collision_set_build_near(&st->cs, &st->cm, &st->cand, c->obstacles, c->nobstacles, x, &st->colset,
                                        (st->reach + st->bp_margin) * (1.0 + 1e-6), &st->cand_near);
        st->near_valid = s == CT_OK;
    } else if (s == CT_OK) {
        s = ct_collision_set_build(&st->cs, &st->cm, st->near_valid ? &st->cand_near : &st->cand, c->obstacles,
                                   c->nobstacles, x, &st->colset);
    }
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
    st->n_queries = 0;
    st->n_ccd_reused = 0;
    memcpy(st->x_step0, c->x_prev, (size_t)st->nx * st->dim * sizeof(double));
    return lag_friction(st, c, c->x_prev);
}

static ct_status ipc_energy(void *p, const ct_step_ctx *c, const double *x, double *E)
{
    ipc_state *st = p;
    ct_status s = ensure_collisions(st, c, x);
    if (s != CT_OK) return s;
    double t0 = now();
    double e;
    const size_t need = (size_t)st->cs.n * 12 + 1;
    if (need > st->gloc_cap) {
        free(st->gloc);
        st->gloc = malloc(need * sizeof *st->gloc);
        st->gloc_cap = st->gloc ? need : 0;
    }
    if (st->gloc) { /* the energy, and the terms' gradients on the way */
        e = ct_collision_energy_grad(&st->cs, &st->cm, c->obstacles, x, normal_density(st), st, c->threads, st->gloc);
        st->gloc_valid = 1;
    } else {
        e = ct_collision_energy(&st->cs, &st->cm, c->obstacles, x, normal_density(st), st, c->threads);
    }
    if (st->fs.n) e += ct_friction_energy(&st->fs, st->dim, x, st->x_step0, friction_eps(st, c), c->threads);
    st->t_pairs += now() - t0;
    *E = e;
    return isnan(e) ? CT_ENOMEM : CT_OK;
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
    s = ct_collision_hessian(&st->cs, &st->cm, c->obstacles, x, normal_density(st), st, c->threads, H);
    if (s == CT_OK && st->fs.n)
        s = ct_friction_hessian(&st->fs, st->dim, x, st->x_step0, friction_eps(st, c), c->threads, H);

    st->t_pairs += now() - t0;
    return s;
}

/* ---- CCD candidates from the proximity candidates ----
 * The swept-box query of max_step (boxes of x -> x + dx, not inflated) returns the pairs whose
 * swept boxes overlap. If no surface vertex gets farther than r/2 from x_bp during the sweep
 * (r = reach + bp_margin, the inflation of the proximity query at x_bp), two overlapping swept boxes
 * come from primitives whose boxes at x_bp are within r of each other, so the pair is a
 * proximity candidate: filtering those by the same swept-box test (same bounds, same two-ulp
 * widening, same closed overlap test as core/broadphase.c and core/bvh.c) gives the same sorted
 * list as a new query, hence the same step size, without building trees. */
static int sweep_within_margin(const ipc_state *st, const ct_surface *s, const double *x, const double *dx)
{
    if (!st->bp_valid || !(st->bp_margin > 0.0)) return 0; /* bp_margin = 0: always a new query */
    const double lim = 0.49 * (st->reach + st->bp_margin); /* < r/2: room for rounding */
    const int dim = st->dim;
    for (int i = 0; i < s->nbv; ++i) {
        const size_t v = (size_t)s->bverts[i] * (size_t)dim;
        double a = 0.0, b = 0.0;
        for (int k = 0; k < dim; ++k) {
            a += (x[v + k] - st->x_bp[v + k]) * (x[v + k] - st->x_bp[v + k]);
            b += dx[v + k] * dx[v + k];
        }
        if (!(sqrt(a) + sqrt(b) <= lim)) return 0;
    }
    return 1;
}

/* Swept boxes (of x -> x + dx, bounds widened by two ulps outward, as core/broadphase.c) of the
 * surface's vertices, edges and faces, computed once per max_step: a primitive's box is the union
 * of its vertices' unwidened boxes (in stencil order: the same comparisons as taking the bounds
 * vertex by vertex), then widened. Layout: lo[dim] hi[dim] per box; vertex v at box v, edge e at
 * box nx + e, face f at box nx + ned + f. */
static ct_status sweep_boxes(ipc_state *st, const ct_surface *s, const double *x, const double *dx)
{
    const int dim = st->dim, w = 2 * dim;
    const size_t nbox = (size_t)st->nx + (size_t)s->ned + (size_t)(dim == 3 ? s->nf : 0);
    if (nbox * w > st->sweep_cap) {
        double *b = realloc(st->sweep_box, nbox * w * sizeof *b);
        if (!b) return CT_ENOMEM;
        st->sweep_box = b;
        st->sweep_cap = nbox * w;
    }
    double *B = st->sweep_box;
    for (int i = 0; i < s->nbv; ++i) { /* unwidened vertex boxes */
        const size_t v = (size_t)s->bverts[i];
        double *lo = B + w * v, *hi = lo + dim;
        for (int c = 0; c < dim; ++c) {
            const double a = x[dim * v + c], e = a + dx[dim * v + c];
            lo[c] = a < e ? a : e; /* not fmin/fmax: libm calls */
            hi[c] = a > e ? a : e;
        }
    }
    const int *prims[2] = {s->edges, s->faces};
    const size_t first[2] = {(size_t)st->nx, (size_t)st->nx + (size_t)s->ned};
    const int count[2] = {s->ned, dim == 3 ? s->nf : 0}, nvp[2] = {2, 3};
    for (int t = 0; t < 2; ++t)
        for (int p = 0; p < count[t]; ++p) {
            double *lo = B + w * (first[t] + (size_t)p), *hi = lo + dim;
            for (int c = 0; c < dim; ++c) lo[c] = HUGE_VAL, hi[c] = -HUGE_VAL;
            for (int k = 0; k < nvp[t]; ++k) {
                const double *vl = B + w * (size_t)prims[t][nvp[t] * p + k], *vh = vl + dim;
                for (int c = 0; c < dim; ++c) {
                    lo[c] = vl[c] < lo[c] ? vl[c] : lo[c];
                    hi[c] = vh[c] > hi[c] ? vh[c] : hi[c];
                }
            }
            for (int c = 0; c < dim; ++c) {
                lo[c] -= 2.0 * DBL_EPSILON * fabs(lo[c]);
                hi[c] += 2.0 * DBL_EPSILON * fabs(hi[c]);
            }
        }
    for (int i = 0; i < s->nbv; ++i) { /* the vertex boxes widened last (the unions read them raw) */
        double *lo = B + w * (size_t)s->bverts[i], *hi = lo + dim;
        for (int c = 0; c < dim; ++c) {
            lo[c] -= 2.0 * DBL_EPSILON * fabs(lo[c]);
            hi[c] += 2.0 * DBL_EPSILON * fabs(hi[c]);
        }
    }
    return CT_OK;
}

static inline int boxes_overlap(int dim, const double *a, const double *b)
{
    for (int c = 0; c < dim; ++c)
        if (!(a[c] <= b[dim + c] && b[c] <= a[dim + c])) return 0;
    return 1;
}

/* The pairs of `in` whose swept boxes overlap; kind 0 vertex–face, 1 edge–edge, 2 vertex–edge (2D). */
static ct_status filter_swept(const ipc_state *st, const ct_pair_list *in, ct_pair_list *out, const ct_surface *s,
                              int kind)
{
    const int dim = st->dim, w = 2 * dim;
    const double *B = st->sweep_box;
    const size_t off_a = kind == 1 ? (size_t)st->nx : 0;
    const size_t off_b = kind == 0 ? (size_t)st->nx + (size_t)s->ned : (size_t)st->nx;
    out->n = 0;
    if (ct_pair_list_reserve(out, in->n) != CT_OK) return CT_ENOMEM;
    for (long i = 0; i < in->n; ++i) {
        const int a = in->ij[2 * i], b = in->ij[2 * i + 1];
        if (boxes_overlap(dim, B + w * (off_a + (size_t)a), B + w * (off_b + (size_t)b))) {
            out->ij[2 * out->n] = a;
            out->ij[2 * out->n + 1] = b;
            out->n++;
        }
    }
    return CT_OK;
}

static ct_status ccd_from_proximity(ipc_state *st, const ct_surface *s, const double *x, const double *dx,
                                    ct_candidates *cc)
{
    ct_status r = sweep_boxes(st, s, x, dx);
    if (r == CT_OK && st->dim == 3) {
        r = filter_swept(st, &st->cand.vf, &cc->vf, s, 0);
        if (r == CT_OK) r = filter_swept(st, &st->cand.ee, &cc->ee, s, 1);
    } else if (r == CT_OK) {
        r = filter_swept(st, &st->cand.ve, &cc->ve, s, 2);
    }
    st->n_ccd_reused++;
    return r;
}

/* Largest safe step along dx: ACCD on the swept candidates, closed form for half-spaces. */
static ct_status ipc_max_step(void *p, const ct_step_ctx *c, const double *x, const double *dx, double *alpha)
{
    ipc_state *st = p;
    const int dim = st->dim;
    const ct_surface *s = c->surf;
    double t0 = now();
    ct_candidates *cc = &st->ccd_cand;
    ct_status rs = sweep_within_margin(st, s, x, dx) ? ccd_from_proximity(st, s, x, dx, cc)
                                                    : ct_broadphase_ccd(s, x, dx, st->movable, 0.0, c->threads, cc);
    double t1 = now();
    st->t_bp += t1 - t0;
    if (rs != CT_OK) return rs;
    double amin = 1.0;
    const ct_pair_list *lists[2];
    ct_ccd_kind kinds[2];
    int nl = 0;
    if (dim == 3) {
        lists[nl] = &cc->vf, kinds[nl++] = CT_CCD_PT;
        lists[nl] = &cc->ee, kinds[nl++] = CT_CCD_EE;
    } else {
        lists[nl] = &cc->ve, kinds[nl++] = CT_CCD_PE;
    }
    for (int l = 0; l < nl; ++l) {
        const ct_pair_list *L = lists[l];
        ct_ccd_kind kind = kinds[l];
        double lmin = 1.0;
#pragma omp parallel for schedule(dynamic, 64) reduction(min : lmin) num_threads(c->threads > 0 ? c->threads : omp_get_max_threads())
        for (long i = 0; i < L->n; ++i) {
            int a = L->ij[2 * i], b = L->ij[2 * i + 1];
            int v[4], n = 0;
            if (kind == CT_CCD_PT) {
                v[0] = a, v[1] = s->faces[3 * b], v[2] = s->faces[3 * b + 1], v[3] = s->faces[3 * b + 2], n = 4;
            } else if (kind == CT_CCD_EE) {
                v[0] = s->edges[2 * a], v[1] = s->edges[2 * a + 1], v[2] = s->edges[2 * b], v[3] = s->edges[2 * b + 1];
                n = 4;
            } else {
                v[0] = a, v[1] = s->edges[2 * b], v[2] = s->edges[2 * b + 1], n = 3;
            }
            double xs[12], ds[12];
            for (int k = 0; k < n; ++k)
                for (int d = 0; d < dim; ++d) {
                    xs[dim * k + d] = x[(size_t)dim * v[k] + d];
                    ds[dim * k + d] = dx[(size_t)dim * v[k] + d];
                }
            double toi = 1.0;
            if (ct_accd(kind, dim, xs, ds, fmin(lmin, 1.0), &st->ccd, &toi)) lmin = fmin(lmin, toi);
        }
        amin = fmin(amin, fmin(lmin, 1.0));
    }
    /* half-spaces: distance n·(x − o) may shrink to the fraction s of itself */
    for (int o = 0; o < c->nobstacles; ++o) {
        const ct_obstacle *ob = &c->obstacles[o];
        for (int k = 0; k < s->nbv; ++k) {
            int v = s->bverts[k];
            if (!st->movable[v]) continue;
            double d = 0.0, dd = 0.0;
            for (int i = 0; i < dim; ++i) {
                d += ob->normal[i] * (x[(size_t)dim * v + i] - ob->point[i]);
                dd += ob->normal[i] * dx[(size_t)dim * v + i];
            }
            if (dd < 0.0) amin = fmin(amin, (1.0 - st->ccd.s) * d / -dd);
        }
    }
    st->t_ccd += now() - t1;
    *alpha = amin > 0.0 ? amin : 0.0;
    return CT_OK;
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
    ms->n_candidates = st->cand.vf.n + st->cand.ee.n + st->cand.ve.n;
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
                      (double)st->n_queries, (double)st->n_ccd_reused, (double)n_adh};
    for (int k = 0; k < ns; ++k) {
        out->scalar_names[k] = st->scalar_names[k];
        out->scalars[k] = vals[k];
    }
    return CT_OK;
}

#define IPC_OPS                                                                                              \
    .state_size = sizeof(ipc_state), .params = ipc_params, .init = ipc_init, .destroy = ipc_destroy,          \
    .begin_step = ipc_begin_step, .energy = ipc_energy, .gradient = ipc_gradient, .hessian = ipc_hessian,    \
    .max_step = ipc_max_step, .update_lagged = ipc_update_lagged, .end_step = ipc_end_step,                   \
    .forces = ipc_forces

const ct_model_type ct_model_ipc_adhesion = {
    .name = "ipc_adhesion",
    .summary = "IPC barrier (area-weighted, d̂) + lagged mollified friction + Fang et al. normal (ε_c) and "
               "tangential (μ_a) adhesion",
    IPC_OPS,
};

const ct_model_type ct_model_ipc = {
    .name = "ipc",
    .summary = "plain IPC: the ipc_adhesion model (adhesion off by default: eps_c = mu_a = 0)",
    IPC_OPS,
};
