/* check_sensitivity.c — dq/dθ of static equilibria (ct_sensitivity.h, issue 17) against closed
 * forms (a linear-elastic bar: du/dF = L/(EA), u(X) = X/L under a prescribed end displacement),
 * against central finite differences of two converged static solves (a bar in the nonlinear
 * regime: load, prescribed displacement, an end rotated on a circular track, gravity, and in 3D;
 * a block pressed onto a half-space, onto a deformable slab, a kinematic block onto the slab with
 * the IPC barrier, and pulled against Fang et al. adhesion), the exact derivative of the scripted
 * motion against differences of ct_motion_eval, and the error paths. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contactlab/ct_scene.h"
#include "contactlab/ct_sensitivity.h"
#include "contactlab/ct_sim.h"
#include "ct_test_util.h"

/* Build the scene and run it to its end (every step must converge). */
static ct_sim *solved(ct_scene *sc, const char *json)
{
    ct_sim *sim = ct_test_make_sim(sc, json, NULL);
    ct_diag d;
    ct_diag_init(&d);
    for (int k = 0; k < sim->nsteps; ++k) {
        ct_status st = ct_sim_step(sim, &d);
        if (st != CT_OK) ct_diag_print(&d, stderr, "step: ");
        ck_assert_int_eq(st, CT_OK);
    }
    ct_diag_free(&d);
    return sim;
}

static void destroy(ct_sim *sim, ct_scene *sc)
{
    ct_sim_destroy(sim);
    ct_scene_free(sc);
}

/* dx/dθ (nx*dim per parameter) of the named parameters at the solved state. */
static double *sensitivities(ct_sim *sim, int np, const char *const *paths, unsigned flags, ct_sens_info *info)
{
    const size_t nqd = (size_t)sim->ndof, nxd = (size_t)sim->nx * sim->dim;
    double *dqf = calloc(nqd * np, sizeof *dqf), *dfe = calloc(nxd * np, sizeof *dfe);
    double *dq = calloc(nqd * np, sizeof *dq), *dx = calloc(nxd * np, sizeof *dx);
    ck_assert(dqf && dfe && dq && dx);
    ct_diag d;
    ct_diag_init(&d);
    for (int k = 0; k < np; ++k) {
        ct_sens_kind kind;
        ct_status st = ct_sensitivity_param(sim, paths[k], dqf + nqd * k, dfe + nxd * k, &kind, &d);
        if (st != CT_OK) ct_diag_print(&d, stderr, "param: ");
        ck_assert_int_eq(st, CT_OK);
    }
    ct_status st = ct_sensitivity_solve(sim, np, dqf, dfe, flags, dq, info, &d);
    if (st != CT_OK) ct_diag_print(&d, stderr, "sensitivity: ");
    ck_assert_int_eq(st, CT_OK);
    ct_diag_free(&d);
    for (int k = 0; k < np; ++k) ct_dofs_map_lin(&sim->dofs, dq + nqd * k, dx + nxd * k);
    free(dqf);
    free(dfe);
    free(dq);
    return dx;
}

/* The equilibrium positions of the scene made by fmt(theta) (a copy, nx*dim). */
typedef void (*scene_fn)(char *buf, size_t n, double theta);

static double *positions(scene_fn make, double theta, size_t *nxd)
{
    char json[4096];
    make(json, sizeof json, theta);
    ct_scene sc;
    ct_sim *sim = solved(&sc, json);
    *nxd = (size_t)sim->nx * sim->dim;
    double *x = malloc(*nxd * sizeof *x);
    ck_assert_ptr_nonnull(x);
    memcpy(x, sim->x, *nxd * sizeof *x);
    destroy(sim, &sc);
    return x;
}

/* Relative 2-norm error of dx (nxd) against the central difference (x(θ+δ) − x(θ−δ)) / 2δ over the
 * free dofs (free[i] != 0; the scenes have full dofs: x = q), whose norm goes to *fd_norm. */
static double fd_error(scene_fn make, double theta, double delta, const double *dx, size_t nxd,
                       const unsigned char *free_, double *fd_norm)
{
    size_t n1, n2;
    double *xp = positions(make, theta + delta, &n1), *xm = positions(make, theta - delta, &n2);
    ck_assert(n1 == nxd && n2 == nxd);
    double nn = 0.0, ee = 0.0;
    for (size_t i = 0; i < nxd; ++i) {
        if (!free_[i]) continue;
        const double fd = (xp[i] - xm[i]) / (2.0 * delta);
        nn += fd * fd;
        ee += (dx[i] - fd) * (dx[i] - fd);
    }
    *fd_norm = sqrt(nn);
    const double err = sqrt(ee) / sqrt(nn);
    free(xp);
    free(xm);
    return err;
}

/* ---- a bar in 2D: L = 1 m, A = 0.1 m² (unit thickness), E = 1e6 Pa, ν = 0, clamped at -x ----
 * The right end carries a uniform traction (load force [F, 0] on the +x face, weight "area") or is
 * moved by a prescribed displacement [u, 0] (motion velocity [u, 0] until t = 1, the step's end)
 * or rotated about the clamp's centre (0, 0.05) by ω (angular_velocity, until t = 1). */
static const double BAR_L = 1.0, BAR_H = 0.1, BAR_E = 1e6;

static void bar_json(char *buf, size_t n, const char *right_end, const char *gravity)
{
    snprintf(buf, n,
             "{\"dim\":2,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},\"gravity\":%s,"
             "\"solver\":{\"newton_tol\":1e-13,\"force_tol\":1e-12,\"threads\":1},"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"rect\",\"size\":[%g,%g],\"cells\":[20,2]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":%g,\"nu\":0,\"density\":1000},%s}]}",
             gravity, BAR_L, BAR_H, BAR_E, right_end);
}

static void bar_load(char *buf, size_t n, double F)
{
    char end[512];
    snprintf(end, sizeof end,
             "\"fixed\":{\"select\":{\"side\":\"-x\"}},"
             "\"loads\":[{\"select\":{\"side\":\"+x\"},\"force\":[%.17g,0],\"weight\":\"area\"}]", F);
    bar_json(buf, n, end, "[0,0]");
}

static void bar_pull(char *buf, size_t n, double u)
{
    char end[512];
    snprintf(end, sizeof end,
             "\"fixed\":[{\"select\":{\"side\":\"-x\"}},"
             "{\"select\":{\"side\":\"+x\"},\"motion\":[{\"until\":1,\"velocity\":[%.17g,0]}]}]", u);
    bar_json(buf, n, end, "[0,0]");
}

static void bar_rotate(char *buf, size_t n, double w)
{
    char end[512];
    snprintf(end, sizeof end,
             "\"fixed\":[{\"select\":{\"side\":\"-x\"}},"
             "{\"select\":{\"side\":\"+x\"},\"motion\":[{\"until\":1,\"angular_velocity\":%.17g,\"center\":[0,0.05]}]}]",
             w);
    bar_json(buf, n, end, "[0,-9.81]");
}

static void bar_gravity(char *buf, size_t n, double gy)
{
    char end[512], g[64];
    snprintf(end, sizeof end, "\"fixed\":{\"select\":{\"side\":\"-x\"}}");
    snprintf(g, sizeof g, "[0,%.17g]", gy);
    bar_json(buf, n, end, g);
}

/* The same bar in 3D (a 1 x 0.1 x 0.1 m box, ν = 0.3), the end load F along x and z (tension and
 * bending): tetrahedra, 12-dof element blocks. */
static double bar3_fx = 1e3, bar3_fz = 20.0;
static int bar3_which; /* 0: vary Fx, 1: vary Fz */
static void bar3_load(char *buf, size_t n, double theta)
{
    const double fx = bar3_which == 0 ? theta : bar3_fx, fz = bar3_which == 1 ? theta : bar3_fz;
    snprintf(buf, n,
             "{\"dim\":3,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},\"gravity\":[0,0,0],"
             "\"solver\":{\"newton_tol\":1e-13,\"force_tol\":1e-12,\"threads\":1},"
             "\"bodies\":[{\"name\":\"bar\",\"mesh\":{\"generator\":\"box\",\"size\":[1,0.1,0.1],\"cells\":[8,1,1]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.3,\"density\":1000},"
             "\"fixed\":{\"select\":{\"side\":\"-x\"}},"
             "\"loads\":[{\"select\":{\"side\":\"+x\"},\"force\":[%.17g,0,%.17g],\"weight\":\"area\"}]}]}",
             fx, fz);
}
static void bar3_load_x(char *buf, size_t n, double theta)
{
    bar3_which = 0;
    bar3_load(buf, n, theta);
}
static void bar3_load_z(char *buf, size_t n, double theta)
{
    bar3_which = 1;
    bar3_load(buf, n, theta);
}

/* Linear regime (strain 1e-6: the geometric and material nonlinearity of the neo-Hookean bar are
 * O(strain) relative): du/dF = X/(E A) at every vertex for the traction, du/du_end = X/L for the
 * prescribed end (the P1 elements represent the linear field exactly; ν = 0: no lateral motion),
 * dv = 0. Tolerance 1e-5: ten times the nonlinearity. */
START_TEST(test_bar_closed_form)
{
    const double A = BAR_H, eps = 1e-6, F = BAR_E * A * eps;
    char json[4096];
    ct_scene sc;
    bar_load(json, sizeof json, F);
    ct_sim *sim = solved(&sc, json);
    const char *p1[] = {"bodies.bar.loads.0.force.x"};
    ct_sens_info info;
    double *dx = sensitivities(sim, 1, p1, 0, &info);
    double worst = 0.0, end = 0.0;
    int nend = 0;
    for (int v = 0; v < sim->nx; ++v) {
        const double X = sim->X[2 * v], want = X / (BAR_E * A);
        worst = fmax(worst, fabs(dx[2 * v] - want) / (BAR_L / (BAR_E * A)));
        worst = fmax(worst, fabs(dx[2 * v + 1]) / (BAR_L / (BAR_E * A)));
        if (X == BAR_L) end += dx[2 * v], nend++;
    }
    end /= nend;
    printf("bar, load F = %g N (strain %g): du_end/dF = %.10e m/N, L/(EA) = %.10e m/N, relative error %.2e; worst "
           "vertex error %.2e of L/(EA) (factor %s)\n",
           F, eps, end, BAR_L / (BAR_E * A), fabs(end / (BAR_L / (BAR_E * A)) - 1.0), worst,
           info.reused_factor ? "reused" : "new");
    ck_assert_double_lt(fabs(end / (BAR_L / (BAR_E * A)) - 1.0), 1e-5);
    ck_assert_double_lt(worst, 1e-5);
    ck_assert_int_eq(info.reused_factor, 1);
    free(dx);
    destroy(sim, &sc);

    bar_pull(json, sizeof json, eps * BAR_L);
    sim = solved(&sc, json);
    const char *p2[] = {"bodies.0.fixed.1.motion.0.velocity.0"};
    dx = sensitivities(sim, 1, p2, 0, &info);
    worst = 0.0;
    for (int v = 0; v < sim->nx; ++v) {
        worst = fmax(worst, fabs(dx[2 * v] - sim->X[2 * v] / BAR_L));
        worst = fmax(worst, fabs(dx[2 * v + 1]));
    }
    printf("bar, prescribed end displacement %g m: max |du/du_end - X/L| = %.2e\n", eps * BAR_L, worst);
    ck_assert_double_lt(worst, 1e-5);
    free(dx);
    destroy(sim, &sc);
}
END_TEST

/* Nonlinear regime against central differences of two converged solves (Newton to |p| < 1e-13 ×
 * the diagonal and the forces to 1e-12 of their scale). δ = 1e-4 θ: the truncation error
 * (δ/θ)² × the relative size of x''' is ~1e-8, the round-off of the positions (1 m, ulp 2e-16)
 * over δ·|dx/dθ| ~1e-7·... below 1e-9; tolerance 1e-6. */
static void bar_fd_case(const char *what, scene_fn make, double theta, const char *path, double tol)
{
    char json[4096];
    make(json, sizeof json, theta);
    ct_scene sc;
    ct_sim *sim = solved(&sc, json);
    const char *p[] = {path};
    ct_sens_info info, info2;
    double *dx = sensitivities(sim, 1, p, 0, &info);
    double *dx2 = sensitivities(sim, 1, p, CT_SENS_REFACTOR, &info2);
    const size_t nxd = (size_t)sim->nx * sim->dim;
    const double same = ct_rel_err_vec(dx2, dx, nxd, 1e-300);
    unsigned char *free_ = malloc(nxd);
    ck_assert(free_ && sim->dofs.identity);
    for (size_t i = 0; i < nxd; ++i) free_[i] = !sim->fixed[i];
    destroy(sim, &sc);
    double fdn;
    const double delta = 1e-4 * fabs(theta);
    double err = fd_error(make, theta, delta, dx, nxd, free_, &fdn);
    free(free_);
    printf("%-44s theta %-9g |dx_free/dtheta| %.6e, vs central FD (delta %.1e): relative error %.2e; factor %s, "
           "refactored: %.1e apart\n",
           what, theta, fdn, delta, err, info.reused_factor ? "reused" : "new", same);
    ck_assert_double_lt(err, tol);
    ck_assert_double_lt(same, 1e-10);
    free(dx);
    free(dx2);
}

START_TEST(test_bar_fd)
{
    /* strain 1e-2 under the load, 2e-2 by the prescribed end */
    bar_fd_case("bar, end load (strain 1e-2)", bar_load, BAR_E * BAR_H * 1e-2, "bodies.0.loads.0.force.0", 1e-6);
    bar_fd_case("bar, prescribed end displacement", bar_pull, 2e-2, "bodies.0.fixed.1.motion.0.velocity.0", 1e-6);
    bar_fd_case("bar, end on a circular track (angle omega)", bar_rotate, 0.05,
                "bodies.0.fixed.1.motion.0.angular_velocity", 1e-6);
    bar_fd_case("bar, gravity (cantilever bending)", bar_gravity, -0.5, "gravity.y", 1e-6);
    bar_fd_case("3D bar, end load x (tension)", bar3_load_x, bar3_fx, "bodies.0.loads.0.force.x", 1e-6);
    bar_fd_case("3D bar, end load z (bending)", bar3_load_z, bar3_fz, "bodies.0.loads.0.force.z", 1e-6);
}
END_TEST

/* ---- a block pressed onto a half-space by its top face (IPC barrier, frictionless) ----
 * 0.1 x 0.05 m, E = 1e5 Pa, ν = 0.3, bottom 0.5 mm above the floor (inside d̂ = 1 mm); the top
 * face moves by (s, -p) in the step (motion velocity), a side load f pushes on the +x face. At
 * the equilibrium the block is compressed between its top and the barrier, its bottom ~0.63 mm
 * above the floor (the "auto" κ is stiff against E = 1e5 Pa). Parameters: p, s, f.
 * `contact` is the scene's contact block: another energy model (e.g. IMLS) is one more call with
 * its own block, nothing else. `solver` is added to the solver block. */
static const char *press_contact, *press_solver;
static int press_on_slab; /* 1: the block is pressed onto a deformable slab (0.2 x 0.02 m, its bottom
                             clamped, 0.5 mm below the block) instead of the half-space; 2: the same
                             with a kinematic block (every vertex prescribed: the contact terms
                             couple the free dofs to prescribed ones, H_fD through the model's
                             Hessian), pressed by less than the gap (one static step: the
                             prescribed move itself must not cross the slab) */
static double press_p = 2e-3, press_s = 2e-4, press_f = -1.0;
static int press_which; /* the parameter the scene function varies: 0 p, 1 s, 2 f */

static void press_json(char *buf, size_t n, double theta)
{
    double p = press_p, s = press_s, f = press_f;
    if (press_which == 0) p = theta;
    else if (press_which == 1) s = theta;
    else f = theta;
    char loads[160] = ""; /* a kinematic block takes no load */
    if (press_on_slab != 2)
        snprintf(loads, sizeof loads,
                 ",\"loads\":[{\"select\":{\"side\":\"+x\"},\"force\":[%.17g,0],\"weight\":\"area\"}]", f);
    snprintf(buf, n,
             "{\"dim\":2,\"time\":{\"dt\":1,\"duration\":1,\"integrator\":\"static\"},"
             "\"solver\":{\"newton_tol\":1e-13,\"force_tol\":1e-12,\"threads\":1%s},\"contact\":%s,%s"
             "\"bodies\":[{\"name\":\"block\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.1,0.05],\"cells\":[4,2],"
             "\"transform\":{\"translate\":[0,0.0005]}},"
             "%s\"fixed\":{\"select\":%s,\"motion\":[{\"until\":1,\"velocity\":[%.17g,%.17g]}]}"
             "%s}%s]}",
             press_solver, press_contact,
             press_on_slab ? ""
                           : "\"obstacles\":[{\"name\":\"floor\",\"type\":\"halfspace\",\"point\":[0,0],"
                             "\"normal\":[0,1]}],",
             press_on_slab == 2 ? "\"kinematic\":true,"
                                : "\"material\":{\"model\":\"neo_hookean\",\"E\":1e5,\"nu\":0.3,\"density\":1000},",
             press_on_slab == 2 ? "\"all\"" : "{\"side\":\"+y\"}", s, -p,
             loads,
             press_on_slab ? ",{\"name\":\"slab\",\"mesh\":{\"generator\":\"rect\",\"size\":[0.2,0.02],"
                             "\"cells\":[8,2],\"transform\":{\"translate\":[-0.05,-0.02]}},"
                             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e5,\"nu\":0.3,\"density\":1000},"
                             "\"fixed\":{\"select\":{\"side\":\"-y\"}}}"
                           : "");
}

static void press_case(const char *contact, const char *solver, int on_slab, double press, int expect_reuse)
{
    press_contact = contact;
    press_solver = solver;
    press_on_slab = on_slab;
    char json[4096];
    press_which = 0;
    press_p = press;
    const double p0 = press_p;
    press_json(json, sizeof json, p0);
    ct_scene sc;
    ct_sim *sim = solved(&sc, json);
    double gap = INFINITY; /* the block's lowest vertex above y = 0 (the floor, or the slab's rest top) */
    for (int v = 0; v < sim->bodies[0].nx; ++v) gap = fmin(gap, sim->x[2 * v + 1]);
    ck_assert(gap < (press > 0 ? 1e-3 : 2e-3)); /* on the barrier (the slab's top sinks below y = 0), or
                                                    within the adhesion's reach d̂_a = 2 d̂ when pulled */
    if (on_slab == 2) ck_assert(gap > 0.0); /* the kinematic block stays above the slab's rest top */
    /* θ = p enters as velocity -p: d/dp = -d/dvelocity */
    const char *paths[] = {"bodies.0.fixed.0.motion.0.velocity.y", "bodies.block.fixed.0.motion.0.velocity.0",
                           "bodies.0.loads.0.force.x"};
    const int np = on_slab == 2 ? 2 : 3; /* the kinematic block's load moves nothing */
    ct_sens_info info, info2;
    double *dx = sensitivities(sim, np, paths, 0, &info);
    double *dx2 = sensitivities(sim, np, paths, CT_SENS_REFACTOR, &info2);
    const size_t nxd = (size_t)sim->nx * sim->dim;
    const double same = ct_rel_err_vec(dx2, dx, np * nxd, 1e-300);
    printf("press (%s%s)%s: block's lowest y %.4e m, %d free dofs, factor %s, refactored: %.1e apart\n", contact, solver, on_slab == 2 ? " kinematic on a slab" : on_slab ? " on a slab" : "", gap,
           info.nfree, info.reused_factor ? "reused" : "new", same);
    ck_assert_double_lt(same, 1e-9);
    ck_assert_int_eq(info.reused_factor, expect_reuse);
    ck_assert_int_eq(info2.reused_factor, 0);
    unsigned char *free_ = malloc(nxd);
    ck_assert(free_ && sim->dofs.identity);
    for (size_t i = 0; i < nxd; ++i) free_[i] = !sim->fixed[i];
    destroy(sim, &sc);
    for (size_t i = 0; i < nxd; ++i) dx[i] = -dx[i];
    /* δ: 1e-7 m of press (the barrier's length scale is the gap, 6e-4 m: (δ/gap)² ~ 3e-8), 1e-7 m
     * of shift, 1e-4 N of load (the response is linear to (δ/f)² = 1e-8) */
    const double theta[3] = {p0, press_s, press_f}, delta[3] = {1e-7, 1e-7, 1e-4};
    const char *name[3] = {"press depth p", "shift s", "side load f"};
    for (int k = 0; k < np; ++k) {
        press_which = k;
        double fdn;
        double err = fd_error(press_json, theta[k], delta[k], dx + nxd * k, nxd, free_, &fdn);
        printf("press (%s%s)%s, %-13s: |dx_free/dtheta| %.6e, vs central FD (delta %.0e): relative error %.2e\n", contact,
               solver, on_slab == 2 ? " kinematic on a slab" : on_slab ? " on a slab" : "", name[k], fdn, delta[k], err);
        ck_assert_double_lt(err, 1e-5);
    }
    free(free_);
    free(dx);
    free(dx2);
}

/* IPC; then the same with Newton on the safe (projected) matrix to the end, whose last factor
 * cannot serve: the exact Hessian is assembled and factored anew; then the block on a deformable
 * slab (point-edge pairs between two bodies' free dofs), and a kinematic block on it (the contact
 * terms carry the whole coupling to the prescribed motion). Tolerance 1e-5 (measured ~1e-10:
 * the estimate of the FD truncation above, with margin). */
START_TEST(test_ipc_press_fd)
{
    press_case("{\"model\":\"ipc\",\"dhat\":1e-3,\"mu\":0}", "", 0, 2e-3, 1);
    press_case("{\"model\":\"ipc\",\"dhat\":1e-3,\"mu\":0}", ",\"exact_hessian\":false", 0, 2e-3, 0);
    press_case("{\"model\":\"ipc\",\"dhat\":1e-3,\"mu\":0}", "", 1, 2e-3, 1);
    press_case("{\"model\":\"ipc\",\"dhat\":1e-3,\"mu\":0}", "", 2, 3e-4, 1);
    /* Fang et al. adhesion: the top pulled up by 0.8 mm, the bottom held at 1.27 mm by the adhesion
     * (between d̂ and d̂_a = 2 d̂: the softening branch, d(gap)/d(pull) > 1) */
    press_case("{\"model\":\"ipc_adhesion\",\"dhat\":1e-3,\"mu\":0,\"eps_c\":1e-3}", "", 0, -8e-4, 1);
}
END_TEST

/* The robust IMLS model (issue 17 item 4): the block on the deformable slab (each body's vertices in the
 * other's IMLS field: the terms couple the query, the samples and their normals' one-rings), and the
 * kinematic block on it (the field of a body with prescribed motion). radius_factor 1 (R = one 2.5 cm
 * cell): with the default 2 the block's field bulges past its corners by more than the 0.5 mm start gap
 * (the model refuses that start). The kinematic block moves 0.1 mm, not 0.3: its prescribed move is not
 * step-limited (the core's predictor places it), and 0.3 mm brings its field to ψ = 7e-12 at a slab
 * vertex near its corner, where Newton crawls up the barrier. */
START_TEST(test_imls_press_fd)
{
    press_case("{\"model\":\"imls\",\"dhat\":1e-3,\"radius_factor\":1}", "", 1, 2e-3, 1);
    press_case("{\"model\":\"imls\",\"dhat\":1e-3,\"radius_factor\":1}", "", 2, 1e-4, 1);
}
END_TEST

/* ---- the scripted motion's derivative: ct_motion_eval_tangent against central differences of
 * ct_motion_eval (3D: a rotation with a translating centre, then a translation with a second
 * rotation); the motion is smooth in each of these numbers, δ = 1e-6: truncation ~1e-12 ---- */
START_TEST(test_motion_tangent)
{
    ct_motion_segment seg[2] = {{0.5, {0.3, -0.2, 0.1}, 1.3, {0.2, 0.4, 1.0}, {0.1, 0.0, -0.2}},
                                {1.5, {-0.1, 0.5, 0.2}, -0.7, {1.0, 0.0, 0.3}, {0.0, 0.3, 0.1}}};
    ct_dirichlet d = {.nseg = 2, .seg = seg};
    const double X[3] = {0.4, -0.3, 0.25}, t = 1.1, h = 1e-6;
    double worst = 0.0;
    for (int s = 0; s < 2; ++s)
        for (int f = 0; f < 3; ++f)
            for (int c = 0; c < (f == CT_MOTION_OMEGA ? 1 : 3); ++c) {
                double *v = f == CT_MOTION_VELOCITY ? &seg[s].velocity[c] : f == CT_MOTION_OMEGA ? &seg[s].omega
                                                                                                  : &seg[s].center[c];
                double dt[3], xp[3], xm[3];
                ct_motion_eval_tangent(&d, 3, X, t, s, (ct_motion_field)f, c, dt);
                const double v0 = *v;
                *v = v0 + h;
                ct_motion_eval(&d, 3, X, t, xp);
                *v = v0 - h;
                ct_motion_eval(&d, 3, X, t, xm);
                *v = v0;
                for (int k = 0; k < 3; ++k) worst = fmax(worst, fabs(dt[k] - (xp[k] - xm[k]) / (2 * h)));
            }
    /* at ω = 0 the derivative in ω is still the rotation's rate: τ k × (X - c) */
    ct_motion_segment z = {1.0, {0, 0, 0}, 0.0, {0, 0, 2.0}, {0, 0, 0}};
    ct_dirichlet dz = {.nseg = 1, .seg = &z};
    double dw[3];
    ct_motion_eval_tangent(&dz, 3, X, 0.5, 0, CT_MOTION_OMEGA, 0, dw);
    printf("motion tangent: max |exact - central FD| %.2e; at omega = 0: (%g, %g, %g), want tau k x X = (%g, %g, 0)\n",
           worst, dw[0], dw[1], dw[2], -0.5 * X[1], 0.5 * X[0]);
    ck_assert_double_lt(worst, 1e-8);
    ck_assert_double_lt(fabs(dw[0] + 0.5 * X[1]) + fabs(dw[1] - 0.5 * X[0]) + fabs(dw[2]), 1e-15);
}
END_TEST

/* ---- bad requests: CT_EINPUT with a message, nothing computed ---- */
START_TEST(test_errors)
{
    char json[4096];
    bar_pull(json, sizeof json, 1e-3);
    ct_scene sc;
    ct_sim *sim = ct_test_make_sim(&sc, json, NULL);
    const size_t nqd = (size_t)sim->ndof, nxd = (size_t)sim->nx * 2;
    double *dqf = calloc(nqd, sizeof *dqf), *dfe = calloc(nxd, sizeof *dfe), *dq = calloc(nqd, sizeof *dq);
    ct_diag d;
    ct_diag_init(&d);
    ct_sens_kind kind;
    const char *bad[] = {"", "bodies", "bodies.0.material.E", "bodies.7.loads.0.force.0", "bodies.bar.loads.0.force.0",
                         "bodies.0.fixed.1.motion.0.until", "bodies.0.fixed.1.motion.3.velocity.0",
                         "bodies.0.fixed.1.motion.0.velocity.z", "gravity.2", "gravity.", "bodies.0.fixed.9.motion.0.velocity.0"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; ++k) {
        ct_diag_clear(&d);
        ck_assert_int_eq(ct_sensitivity_param(sim, bad[k], dqf, dfe, &kind, &d), CT_EINPUT);
        printf("  '%s': %s\n", bad[k], ct_diag_last(&d));
    }
    /* before any step: no equilibrium */
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_sensitivity_param(sim, "bodies.0.fixed.1.motion.0.velocity.x", dqf, dfe, &kind, &d), CT_OK);
    ck_assert_int_eq(kind, CT_SENS_PRESCRIBED);
    ck_assert_int_eq(ct_sensitivity_solve(sim, 1, dqf, dfe, 0, dq, NULL, &d), CT_EINPUT);
    printf("  no step: %s\n", ct_diag_last(&d));
    destroy(sim, &sc);
    /* a dynamic scene */
    ct_diag_clear(&d);
    char *p = strstr(json, ",\"integrator\":\"static\"");
    ck_assert_ptr_nonnull(p);
    memmove(p, p + strlen(",\"integrator\":\"static\""), strlen(p + strlen(",\"integrator\":\"static\"")) + 1);
    sim = solved(&sc, json);
    ck_assert_int_eq(ct_sensitivity_solve(sim, 1, dqf, dfe, 0, dq, NULL, &d), CT_EINPUT);
    printf("  dynamic: %s\n", ct_diag_last(&d));
    destroy(sim, &sc);
    ct_diag_free(&d);
    free(dqf);
    free(dfe);
    free(dq);
}
END_TEST

static Suite *sensitivity_suite(void)
{
    Suite *s = suite_create("sensitivity");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_motion_tangent);
    tcase_add_test(tc, test_errors);
    tcase_add_test(tc, test_bar_closed_form);
    tcase_add_test(tc, test_bar_fd);
    tcase_add_test(tc, test_ipc_press_fd);
    tcase_add_test(tc, test_imls_press_fd);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(sensitivity_suite)
