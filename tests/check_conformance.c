/* check_conformance.c — the model conformance suite (DESIGN §3): one set of checks that every
 * registered contact model must pass, in the style of SUNDIALS' test_sunlinsol.c (one generic
 * test driver run against every implementation). A model joins with ONE line in MODELS[]; a
 * registered model without a line fails test_registry_covered. Further lines for the same model
 * test other parameter configurations (labelled name#k in the output). test_registry_covered prints
 * the table with each line's family (ct_model_type.family: energy | constraint) and guarantee
 * (ct_model_type.guarantees: intersection_free or -), which decide the checks that apply below.
 *
 * The same scenes are used for every model, in 2D and 3D: a block "bottom" just above a tilted
 * half-space "ground" (its lowest vertex at 0.4 D̂, D̂ = 1 cm; only part of its bottom face is
 * within D̂), and a smaller rotated block "top" whose lowest corner is 0.5 D̂ above the bottom
 * block, just beyond its corner. Two orientations of the top block: "tilted" (edges yawed by 25°,
 * so point–point, point–edge, point–triangle and edge–edge closest features all occur) and
 * "parallel" (edges within ~1° of the bottom block's, so edge–edge pairs are mollified);
 * test_scene_census counts them independently by brute force. Friction is exercised by lagging the
 * model at x_prev = x − s(x) with per-vertex tangential slips s of 0.2–3 × 1e-4 m (the friction
 * threshold ε_v·dt of the table's lines is 1e-4 m: both the sticking and the sliding branch).
 *
 * For every line of MODELS[] and both dimensions:
 *   derivatives    Gradient vs central differences of the energy (all terms, friction lagged),
 *                  1e-6 relative. The Hessian: symmetric, PSD (dsyev). Its exactness cannot be
 *                  tested term by term from outside, and pair terms are never convex in x (b' < 0
 *                  bends the barrier down across the contact normal), so their per-stencil PSD
 *                  projection is always active. What holds in general: projecting each stencil
 *                  block only adds curvature, H_model − H_true = Σ_k (P(H_k) − H_k) ⪰ 0, checked
 *                  against the finite-difference Hessian of the gradient. Exactness is tested
 *                  where every term is convex: only vertex–half-space contacts (distance linear in
 *                  x, b convex) plus friction with λ > 0, where the Hessian of the exact mode
 *                  (ct_step_ctx.exact_hessian = 1) must equal H_fd (1e-6) and that of the safe
 *                  mode (0, the default above; friction's majorizer) may only add curvature;
 *                  for lines flagged nonconvex (adhesion: a'' < 0 on (d̂_p, d̂_a), f_t' < 0
 *                  beyond ε_a h) H_model − H_fd ⪰ 0 there too.
 *                  Vertices farther than 2·reach from every partner must get exactly zero rows.
 *   max_step       Large displacement directions (blocks driven into each other and into the
 *                  ground, a rotation, random per-vertex motion up to 0.3 m) from two starts (the
 *                  second: the top block 0.05 D̂ above the bottom one; for a line with its own
 *                  contact distance (far > 0), lowered by 0.05 D̂ while the energy stays finite):
 *                  alpha ∈ (0, 1], and x + t dx for 64 t ∈ [0, alpha] has no surface
 *                  intersection (exact verifier; a model without the intersection-free guarantee:
 *                  finite energy instead) and every surface vertex in front of the ground.
 *   reach          Blocks 1.02·far apart and from the ground (far: the line's, default its reach),
 *                  friction lagged there and evaluated at a slipped x: energy, gradient, Hessian and
 *                  force report exactly zero; at 0.9·reach the energy is positive (the declared
 *                  reach is tight).
 *   action/reaction The force report is antisymmetric per category and participant pair
 *                  (obstacles included), 1e-12; each body's resultant −Σ_v g_v equals the sum of
 *                  the forces the report says it receives; Σ g = −(obstacle forces).
 *   vertex fields  Per-vertex contact fields (ct_model_vertex_fields) in the action/reaction
 *                  configuration: force = −∇E (1e-12 of Σ|∇E|); gaps only on surface vertices, in
 *                  (0, reach), and every surface vertex within reach of the ground has one, at most
 *                  its ground distance; β ∈ [0, 1] (> 0 somewhere for a model that has β); "none"
 *                  fills nothing. Far apart (reach): no force and no gap on any vertex.
 *   invariance     Energy (1e-12) and gradient (covariant, 1e-10) under a translation along the
 *                  ground, and under a rotation + translation of a scene without obstacles
 *                  (half-spaces are fixed in space); x and x_prev move together.
 *   determinism    Energy, gradient and Hessian triplets bitwise equal with 1 and 2 threads; two
 *                  simulations (1 and 2 threads) stepped 5 times (CONF_MOVING) give bitwise equal
 *                  positions and contact impulses (sim->r_contact; a constraint model must return a
 *                  nonzero one), intersection-free after every step for models that declare
 *                  CT_GUARANTEE_INTERSECTION_FREE (today: the energy models with max_step); for the
 *                  others the intersection count is a metric (printed).
 *   constraint     Constraint-family models only, through the real ct_sim_step, CONF_CSTEPS = 10 steps
 *                  of the CONF_PUSH scene: the bottom block thrown into the tilted ground (without
 *                  contact its lowest vertex would end the first step ~4.8 mm behind it), the top block
 *                  CONF_LIFT = 0.2 m higher, out of reach (so a vertex–half-space model and a future
 *                  body–body one see the same contacts: the ground's). J = I, so the impulse on surface
 *                  vertex k is r_k, r at its q-dofs; n the ground normal, lambda_k = n.r_k,
 *                  r_t = r_k − lambda_k n, gap_k the ground distance after the step; scales Lambda =
 *                  max_k |r_k| of the step, G = h |v0| + h² |g| (one step's motion); tol = the line's
 *                  ctol (default CONF_CTOL = 1e-12, an exact solve). After every step:
 *                    complementarity  lambda_k ≥ −tol Lambda, gap_k ≥ −tol G, |lambda_k gap_k| ≤
 *                                     tol Lambda G;
 *                    friction cone    |r_t| ≤ mu lambda_k + tol Lambda (mu: the model's "mu"
 *                                     parameter, 0 without one);
 *                    away from contact r = 0 exactly on interior vertices and on the top block;
 *                    report vs r      per body, the sum over partners and categories of the force
 *                                     report = Σ of r over its q-dofs / h, and the report is
 *                                     antisymmetric (1e-12 of Σ|r|/h);
 *                    vertex fields    per vertex, contact_force = r_k / h (1e-12 of Lambda / h), and
 *                                     a vertex with an impulse has a gap, its ground distance
 *                                     (1e-12 G); β ∈ [0, 1];
 *                    contact acts     the bottom block gets a nonzero normal impulse in the first step
 *                                     and, by the gap check, does not penetrate: a model returning r = 0
 *                                     fails (the block ends the first step 4.8 mm behind the ground).
 * Checks needing ops a model lacks are skipped with a message naming the family: constraint-family
 * models have no energy ops (derivatives, max_step, invariance, determinism (a)), and their force
 * report is that of the last step's impulses, not a function of x, so reach and action/reaction are
 * checked on real steps (constraint) instead. "none" only takes the determinism check.
 */
#include "ct_test_util.h"

#include "contactlab/ct_distance.h"
#include "contactlab/ct_intersect.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"
#include "sim/motion.h" /* ct_rotate_point */

#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------ */
/* the models under test                                                                        */

typedef struct conf_model {
    const char *name;    /* registered model name */
    const char *contact; /* JSON members of the scene's "contact" object besides "model"; the
                            activation distance should be CONF_DHAT and the friction threshold
                            eps_v·dt about CONF_SLIP (dt = 0.01 s) */
    double reach;        /* m: beyond this distance the model must exert no force at all */
    int nonconvex;       /* 1: pair energies are not convex even where the distance is linear in x
                            (adhesion: a'' < 0 on (d̂_p, d̂_a), f_t' < 0 beyond ε_a h), so the
                            body–ground configuration checks H − H_fd ⪰ 0 instead of H = H_fd */
    double ctol;         /* constraint family: relative accuracy of the returned impulses (sign, cone,
                            gap, complementarity; 0: CONF_CTOL, that of an exact solve) */
    double far;          /* m: no force at all with the bodies this far apart (0: reach). A model whose
                            contact distance is not the Euclidean one states it (imls: ψ, see its line) */
    double lift;         /* m: the top block this much higher in 3D (0: its lowest corner CONF_GAP above the
                            bottom block); imls: see its line */
    int refine;          /* cells of both blocks × refine (0: 1): a model whose surface is a smooth fit of the
                            mesh needs the suite's corners resolved (imls) */
    int approx;          /* 1: the safe Hessian approximates the curvature (imls' Gauss–Newton mode) instead of
                            projecting each term: PSD, but H − H_fd ⪰ 0 is not claimed */
    double stencil;      /* m: how far beyond 2·far a vertex may still get gradient rows (0: none; imls:
                            the samples within R of a query and their one-rings carry its term) */
} conf_model;

static const conf_model MODELS[] = {
    {"none", "", 0.0, 0, 0, 0, 0, 0, 0, 0},
    {"ipc", "\"dhat\": 1e-2, \"kappa\": 1e4, \"mu\": 0.3, \"eps_v\": 1e-2", 1e-2, 0, 0, 0, 0, 0, 0, 0},
    {"ipc_adhesion", "\"dhat\": 1e-2, \"kappa\": 1e4, \"mu\": 0.3, \"eps_v\": 1e-2", 1e-2, 0, 0, 0, 0, 0, 0, 0},
    /* further configurations of a registered model: one line each */
    {"ipc", "\"dhat\": 1e-2, \"kappa\": 1e4, \"mu\": 0.3, \"eps_v\": 1e-2, \"collision_set\": \"ipc2020\"", 1e-2, 0, 0, 0, 0, 0, 0, 0},
    {"ipc", "\"dhat\": 1e-2, \"kappa\": 1e4, \"mu\": 0.3, \"eps_v\": 1e-2, \"ee_weight\": \"area\"", 1e-2, 0, 0, 0, 0, 0, 0, 0},
    /* adhesion on: normal (Y ε_c = 5e4 Pa with the suite's E = 1e5 Pa) and tangential; reach d̂_a = 2 d̂ */
    {"ipc_adhesion", "\"dhat\": 1e-2, \"kappa\": 1e4, \"mu\": 0.3, \"eps_v\": 1e-2, \"eps_c\": 0.5, \"mu_a\": 1.0", 2e-2, 1, 0, 0, 0, 0, 0, 0},
    {"ipc_adhesion", "\"dhat\": 1e-2, \"kappa\": 1e4, \"mu\": 0.3, \"eps_v\": 1e-2, \"eps_c\": 0.5, \"mu_a\": 0.5, "
                     "\"adhesion_variant\": \"squared\", \"s_p\": 0.6, \"eps_a\": 2e-2", 2e-2, 1, 0, 0, 0, 0, 0, 0},
    /* RCC on IPC: pairs within d̂ at x_prev bond with β₀ = 1 (C_N d̂ = 1e4 Pa, reference gap 7 mm);
     * debond_dist = d̂, so that bonds made at 0.9 reach are dropped at 1.02 reach */
    {"rcc_ipc", "\"dhat\": 1e-2, \"kappa\": 1e4, \"mu\": 0.3, \"eps_v\": 1e-2, \"c_n\": 1e6, \"c_t\": 5e5, "
                "\"w\": 50, \"eta\": 1, \"r\": 1e-3, \"p0\": 1e4, \"debond_dist\": 1e-2", 1e-2, 0, 0, 0, 0, 0, 0, 0},
    /* the constraint family's test model: frictionless vertex–half-space contact, the LCP solved exactly;
     * contacts form within the margin (at the start or at the end of the unconstrained step) */
    {"lcp_halfspace", "\"margin\": 1e-3", 1e-3, 0, 0, 0, 0, 0, 0, 0},
    /* Gascón et al.'s block PGS: the Coulomb-disk law (the suite's friction cone), and the paper's box law
     * without friction; PGS to 1e-13, so the impulses' accuracy is the solve's (ctol 1e-8); thickness 0: the
     * checks' complementarity is against the gap itself */
    {"lcp_pgs", "\"margin\": 1e-3, \"thickness\": 0, \"law\": \"disk\", \"mu\": 0.3, \"pgs_tol\": 1e-13, "
                "\"pgs_max_iter\": 100000", 1e-3, 0, 1e-8, 0, 0, 0, 0, 0},
    {"lcp_pgs", "\"margin\": 1e-3, \"thickness\": 0, \"pgs_tol\": 1e-13, \"pgs_max_iter\": 100000", 1e-3, 0, 1e-8, 0, 0, 0, 0, 0},
    /* robust IMLS surfaces on blocks with twice the cells (2.5–3 cm), R = max(one mean edge, 1.25·√(d̂² + h²)):
     * the default Hessian (project in 2D, Gauss–Newton in 3D: approx) and the projected one. ψ is a smooth fit
     * of the coarse blocks, not the Euclidean distance: near their edges and corners the side samples' s =
     * n·(x − p) < 0 pull it down, so (measured here) the default 1.5 edges makes the suite's start infeasible
     * (ψ < 0 with the top's corner 5 mm above the bottom one), the 3D start needs the top block 4 mm higher, and
     * at 3 d̂ apart some query still has ψ < d̂: no force from 5 d̂ on. The stencil reaches R + one edge (≤ 8 cm)
     * beyond the queries. */
    {"imls", "\"dhat\": 1e-2, \"kappa\": 1e4, \"radius_factor\": 1", 1e-2, 0, 0, 5e-2, 4e-3, 2, 1, 0.15},
    {"imls", "\"dhat\": 1e-2, \"kappa\": 1e4, \"radius_factor\": 1, \"hessian\": \"project\"", 1e-2, 0, 0, 5e-2, 4e-3,
     2, 0, 0.15},
    /* sticky IMLS: Fang et al.'s adhesion on ψ (Y ε_c = 5e4 Pa, reach d̂_a = 2 d̂; nonconvex: a'' < 0 on
     * (d̂_p, d̂_a)); the field's deviation from the Euclidean distance as above, so no force from 6 d̂ on */
    {"imls", "\"dhat\": 1e-2, \"kappa\": 1e4, \"radius_factor\": 1, \"eps_c\": 0.5", 2e-2, 1, 0, 6e-2, 4e-3, 2, 1,
     0.15},
};
enum { NMODELS = (int)(sizeof MODELS / sizeof MODELS[0]), NCASES = 2 * NMODELS };

/* ------------------------------------------------------------------------------------------ */
/* scenes                                                                                       */

#define CONF_DHAT 1e-2                 /* length scale of the contact scenes (m) */
#define CONF_GAP (0.5 * CONF_DHAT)     /* top block's lowest vertex above the bottom block */
#define CONF_GROUND (0.4 * CONF_DHAT)  /* bottom block's closest vertex above the ground */
#define CONF_SLIP 1e-4                 /* tangential slip scale of the friction tests (m) */
#define CONF_DT 0.01
#define CONF_LIFT 0.2                  /* CONF_PUSH: the top block this much higher (m) */
#define CONF_CTOL 1e-12                /* default conf_model.ctol */
#define CONF_CSTEPS 10                 /* steps of the constraint checks */
#define CONF_PI 3.14159265358979323846

/* CONF_MOVING: gravity, the top block thrown down and sideways onto the bottom one. CONF_PUSH:
 * gravity, the bottom block thrown into the ground (CONF_PUSH_V), the top block CONF_LIFT higher and
 * at rest, far from everything during the constraint checks' steps. */
enum { CONF_OBSTACLE = 1u << 0, CONF_MOVING = 1u << 1, CONF_PARALLEL = 1u << 2, CONF_PUSH = 1u << 3 };
static const double CONF_PUSH_V[3] = {0.3, -0.8, 0.2};
enum { BOTTOM = 0, TOP = 1 };

/* Geometries of the top block: rotated (about the origin, before its translation) by
 * R = Rz(a_z) Rx(a_x) Ry(a_y) in 3D, by a_z in 2D. GEOM_TILTED yaws its edges well away from the
 * bottom block's and tilts it so one corner is lowest; GEOM_PARALLEL keeps its bottom edges within
 * about one degree of the bottom block's top edges, so edge–edge pairs use the mollifier. */
enum { GEOM_TILTED, GEOM_PARALLEL, NGEOM };
static const double GEOM_DEG[NGEOM][3] = {{-4.0, 3.0, 25.0}, {-0.6, 0.4, 0.7}}; /* a_z, a_x, a_y */
static const char *const GEOM_NAME[NGEOM] = {"tilted", "parallel"};

/* the top block's lowest corner is placed here: just beyond the bottom block's corner */
static const double CORNER_TARGET[3] = {0.1031, CONF_GAP, 0.1027};

/* out = R(axis, angle) p (2D: counter-clockwise about the origin), with the rotation the scene's
 * transforms use (ct_rotate_point): the cases rotate blocks, they do not test the rotation. */
static void rotate_point(int dim, const double *axis, double angle, const double *p, double *out)
{
    memcpy(out, p, (size_t)dim * sizeof *out);
    ct_rotate_point(dim, axis, angle, out);
}

/* Unit normal of the ground: tilted by a few degrees so only part of the bottom face is within D̂. */
static void ground_normal(int dim, double *n)
{
    double v[3] = {0.035, 1.0, 0.02}, l = 0.0;
    if (dim == 2) v[2] = 0.0;
    for (int i = 0; i < 3; ++i) l += v[i] * v[i];
    for (int i = 0; i < 3; ++i) n[i] = v[i] / sqrt(l);
}

/* Axis and angle (rad) of R = Rz(a_z) Rx(a_x) Ry(a_y) (angles in degrees). */
static void geom_rotation(int geom, double *axis, double *angle)
{
    const double *a = GEOM_DEG[geom];
    double ez[3] = {0, 0, 1}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, R[9];
    for (int j = 0; j < 3; ++j) { /* column j: R e_j */
        double e[3] = {0, 0, 0}, u[3], w[3];
        e[j] = 1.0;
        rotate_point(3, ey, a[2] * CONF_PI / 180.0, e, u);
        rotate_point(3, ex, a[1] * CONF_PI / 180.0, u, w);
        rotate_point(3, ez, a[0] * CONF_PI / 180.0, w, u);
        for (int i = 0; i < 3; ++i) R[i + 3 * j] = u[i];
    }
    *angle = acos(0.5 * (R[0] + R[4] + R[8] - 1.0));
    double s = 2.0 * sin(*angle);
    axis[0] = (R[5] - R[7]) / s, axis[1] = (R[6] - R[2]) / s, axis[2] = (R[1] - R[3]) / s;
}

/* Scene text: bottom block [-0.1, 0.1] x [-0.1, 0] (x [-0.1, 0.1]), top block 0.1 x 0.06 (x 0.1)
 * rotated and placed with its lowest corner at CORNER_TARGET; ground under the bottom block. */
static void scene_json(char *buf, size_t n, int dim, const conf_model *cm, unsigned flags, int threads)
{
    const int geom = (flags & CONF_PARALLEL) ? GEOM_PARALLEL : GEOM_TILTED;
    const int rf = cm->refine > 1 ? cm->refine : 1;
    double axis[3] = {0, 0, 1}, angle = GEOM_DEG[geom][0] * CONF_PI / 180.0, tr[3], nrm[3], gp[3];
    if (dim == 3) geom_rotation(geom, axis, &angle);
    /* the lowest corner of the rotated block */
    double low[3] = {0, INFINITY, 0};
    for (int k = 0; k < 8; ++k) {
        double p[3] = {k & 1 ? 0.05 : -0.05, k & 2 ? 0.06 : 0.0, dim == 2 ? 0.0 : (k & 4 ? 0.05 : -0.05)}, q[3] = {0, 0, 0};
        rotate_point(dim, axis, angle, p, q);
        if (q[1] < low[1]) memcpy(low, q, sizeof low);
    }
    for (int i = 0; i < 3; ++i) tr[i] = CORNER_TARGET[i] - low[i];
    if (dim == 3) tr[1] += cm->lift;
    const int push = (flags & CONF_PUSH) != 0;
    if (push) tr[1] += CONF_LIFT;
    ground_normal(dim, nrm);
    /* the bottom face corner with the smallest n.x is (-0.1, -0.1, -0.1): put it at CONF_GROUND */
    for (int i = 0; i < 3; ++i) gp[i] = -0.1 - CONF_GROUND * nrm[i];
    const int moving = (flags & CONF_MOVING) != 0;
    char contact[512], obst[512] = "", top_mesh[512], vel[128] = "", bvel[128] = "";
    if (push && dim == 2) snprintf(bvel, sizeof bvel, ", \"velocity\": [%g, %g]", CONF_PUSH_V[0], CONF_PUSH_V[1]);
    if (push && dim == 3)
        snprintf(bvel, sizeof bvel, ", \"velocity\": [%g, %g, %g]", CONF_PUSH_V[0], CONF_PUSH_V[1], CONF_PUSH_V[2]);
    snprintf(contact, sizeof contact, "\"model\": \"%s\"%s%s", cm->name, cm->contact[0] ? ", " : "", cm->contact);
    if (flags & CONF_OBSTACLE) {
        if (dim == 2)
            snprintf(obst, sizeof obst,
                     ", \"obstacles\": [{\"name\": \"ground\", \"type\": \"halfspace\", \"point\": [%.17g, %.17g], "
                     "\"normal\": [%.17g, %.17g]}]",
                     gp[0], gp[1], nrm[0], nrm[1]);
        else
            snprintf(obst, sizeof obst,
                     ", \"obstacles\": [{\"name\": \"ground\", \"type\": \"halfspace\", \"point\": [%.17g, %.17g, "
                     "%.17g], \"normal\": [%.17g, %.17g, %.17g]}]",
                     gp[0], gp[1], gp[2], nrm[0], nrm[1], nrm[2]);
    }
    if (dim == 2) {
        snprintf(top_mesh, sizeof top_mesh,
                 "{\"generator\": \"rect\", \"size\": [0.1, 0.06], \"cells\": [%d, %d], \"origin\": [-0.05, 0], "
                 "\"transform\": {\"rotate\": {\"angle_deg\": %.17g}, \"translate\": [%.17g, %.17g]}}",
                 2 * rf, rf, angle * 180.0 / CONF_PI, tr[0], tr[1]);
        if (moving) snprintf(vel, sizeof vel, ", \"velocity\": [0.3, -0.5]");
    } else {
        snprintf(top_mesh, sizeof top_mesh,
                 "{\"generator\": \"box\", \"size\": [0.1, 0.06, 0.1], \"cells\": [%d, %d, %d], \"origin\": [-0.05, 0, "
                 "-0.05], \"transform\": {\"rotate\": {\"axis\": [%.17g, %.17g, %.17g], \"angle_deg\": %.17g}, "
                 "\"translate\": [%.17g, %.17g, %.17g]}}",
                 2 * rf, rf, 2 * rf, axis[0], axis[1], axis[2], angle * 180.0 / CONF_PI, tr[0], tr[1], tr[2]);
        if (moving) snprintf(vel, sizeof vel, ", \"velocity\": [0.3, -0.5, -0.2]");
    }
    const char *mat = "\"material\": {\"E\": 1e5, \"nu\": 0.3, \"density\": 1000}";
    char bottom_mesh[256];
    if (dim == 2)
        snprintf(bottom_mesh, sizeof bottom_mesh,
                 "{\"generator\": \"rect\", \"size\": [0.2, 0.1], \"cells\": [%d, %d], \"origin\": [-0.1, -0.1]}", 4 * rf,
                 rf);
    else
        snprintf(bottom_mesh, sizeof bottom_mesh,
                 "{\"generator\": \"box\", \"size\": [0.2, 0.1, 0.2], \"cells\": [%d, %d, %d], \"origin\": "
                 "[-0.1, -0.1, -0.1]}",
                 4 * rf, rf, 4 * rf);
    snprintf(buf, n,
             "{\"name\": \"conformance\", \"dim\": %d, \"time\": {\"dt\": %g, \"duration\": %g}, "
             "\"gravity\": %s, \"solver\": {\"threads\": %d}, \"contact\": {%s}, \"bodies\": ["
             "{\"name\": \"bottom\", \"mesh\": %s, %s%s}, "
             "{\"name\": \"top\", \"mesh\": %s, %s%s}]%s}",
             dim, CONF_DT, (push ? CONF_CSTEPS : 5) * CONF_DT,
             moving || push ? (dim == 2 ? "[0, -9.81]" : "[0, -9.81, 0]") : (dim == 2 ? "[0, 0]" : "[0, 0, 0]"),
             threads, contact,
             bottom_mesh, mat, bvel, top_mesh, mat, vel, obst);
}

/* One model in one dimension on one scene. */
typedef struct conf_case {
    const conf_model *cm;
    const ct_model_type *m;
    int dim;
    size_t nd; /* nx*dim */
    char label[64];
    ct_scene sc;
    ct_sim *sim;
} conf_case;

static void case_open(conf_case *c, int model_index, int dim, unsigned flags, int threads)
{
    memset(c, 0, sizeof *c);
    c->cm = &MODELS[model_index];
    c->dim = dim;
    int same = 0; /* rows testing another configuration of the same model are labelled name#k */
    for (int k = 0; k < model_index; ++k) same += strcmp(MODELS[k].name, c->cm->name) == 0;
    if (same)
        snprintf(c->label, sizeof c->label, "%s#%d %dD%s", c->cm->name, same, dim, flags & CONF_PARALLEL ? " parallel" : "");
    else
        snprintf(c->label, sizeof c->label, "%s %dD%s", c->cm->name, dim, flags & CONF_PARALLEL ? " parallel" : "");
    char json[8192];
    scene_json(json, sizeof json, dim, c->cm, flags, threads);
    ct_diag d;
    ct_diag_init(&d);
    ct_scene_init(&c->sc);
    ct_status st = ct_scene_parse(&c->sc, json, "conformance.json", ".", NULL, 0, &d);
    if (st != CT_OK) {
        ct_diag_print(&d, stderr, "scene: ");
        fprintf(stderr, "%s\n", json);
    }
    ck_assert_int_eq(st, CT_OK);
    st = ct_sim_create(&c->sim, &c->sc, &d);
    if (st != CT_OK) ct_diag_print(&d, stderr, "sim: ");
    ck_assert_int_eq(st, CT_OK);
    ct_diag_free(&d);
    c->m = c->sim->model->type;
    ck_assert_str_eq(c->m->name, c->cm->name);
    c->nd = (size_t)c->sim->nx * (size_t)dim;
}

static void case_close(conf_case *c)
{
    ct_sim_destroy(c->sim);
    ct_scene_free(&c->sc);
}

/* Loop index -> (model, dimension). */
static int case_model(int i) { return i / 2; }
static int case_dim(int i) { return 2 + i % 2; }

static int has_energy_ops(const ct_model_type *m) { return m->energy && m->gradient && m->hessian; }

static double *dalloc(size_t n)
{
    double *p = calloc(n + 1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    return p;
}

/* ---- model calls ---- */

/* Lag the model at x_lag (the start of a step): x_prev := x_lag, then begin_step. */
static void lag_at(conf_case *c, const double *x_lag)
{
    memcpy(c->sim->x_prev, x_lag, c->nd * sizeof *x_lag);
    if (c->m->begin_step) ck_assert_int_eq(ct_model_begin_step(c->sim->model, &c->sim->ctx), CT_OK);
}

static double model_energy(conf_case *c, const double *x)
{
    double E = NAN;
    ck_assert_int_eq(ct_model_energy(c->sim->model, &c->sim->ctx, x, &E), CT_OK);
    return E;
}

static void model_gradient(conf_case *c, const double *x, double *g)
{
    memset(g, 0, c->nd * sizeof *g);
    ck_assert_int_eq(ct_model_gradient(c->sim->model, &c->sim->ctx, x, g), CT_OK);
}

static void model_hessian(conf_case *c, const double *x, ct_triplets *t)
{
    ct_triplets_init(t);
    ck_assert_int_eq(ct_model_hessian(c->sim->model, &c->sim->ctx, x, t), CT_OK);
    for (size_t k = 0; k < t->n; ++k) {
        ck_assert(t->row[k] >= 0 && (size_t)t->row[k] < c->nd);
        ck_assert(t->col[k] >= 0 && (size_t)t->col[k] < c->nd);
        ck_assert(isfinite(t->val[k]));
    }
}

/* Dense nd x nd (column-major) Hessian, duplicates summed. */
static void model_hessian_dense(conf_case *c, const double *x, double *H)
{
    ct_triplets t;
    model_hessian(c, x, &t);
    memset(H, 0, c->nd * c->nd * sizeof *H);
    for (size_t k = 0; k < t.n; ++k) H[(size_t)t.row[k] + c->nd * (size_t)t.col[k]] += t.val[k];
    ct_triplets_free(&t);
}

/* ---- configurations ---- */

/* The tangential slip field s(x) of each body (per-vertex, varying, never near zero, where
 * |u|^3 terms would spoil central differences; the bottom block slips 0.2–0.9 CONF_SLIP against
 * the ground, the top block about 1.5–3 CONF_SLIP against the bottom one): x_prev = x − s(x). */
static void slipped_prev(const conf_case *c, const double *x, double *xp)
{
    const int dim = c->dim;
    for (int v = 0; v < c->sim->nx; ++v) {
        const double *p = x + (size_t)dim * v;
        double s[3];
        if (c->sim->xv_body[v] == BOTTOM) {
            s[0] = 0.5 + 3.0 * p[0], s[1] = 0.0, s[2] = 0.2 + 1.0 * (dim == 3 ? p[2] : 0.0);
        } else {
            s[0] = -1.5 + 5.0 * p[0], s[1] = 0.0, s[2] = 1.0 + 8.0 * (dim == 3 ? p[2] : 0.0);
        }
        for (int i = 0; i < dim; ++i) xp[(size_t)dim * v + i] = p[i] - CONF_SLIP * s[i];
    }
}

static void translate_body(const conf_case *c, double *x, int body, const double *t)
{
    for (int v = 0; v < c->sim->nx; ++v)
        if (body < 0 || c->sim->xv_body[v] == body)
            for (int i = 0; i < c->dim; ++i) x[(size_t)c->dim * v + i] += t[i];
}

/* Signed distance of surface vertex positions to obstacle o: the minimum over the surface. */
static double min_obstacle_distance(const conf_case *c, const double *x, int o)
{
    const ct_obstacle *ob = &c->sim->obstacles[o];
    double dmin = INFINITY;
    for (int k = 0; k < c->sim->surf.nbv; ++k) {
        int v = c->sim->surf.bverts[k];
        double d = 0.0;
        for (int i = 0; i < c->dim; ++i) d += ob->normal[i] * (x[(size_t)c->dim * v + i] - ob->point[i]);
        dmin = fmin(dmin, d);
    }
    return dmin;
}

/* Extreme y of a body's vertices. */
static double body_y(const conf_case *c, const double *x, int body, int want_max)
{
    double r = want_max ? -INFINITY : INFINITY;
    for (int v = 0; v < c->sim->nx; ++v)
        if (c->sim->xv_body[v] == body) r = want_max ? fmax(r, x[(size_t)c->dim * v + 1]) : fmin(r, x[(size_t)c->dim * v + 1]);
    return r;
}

/* Smallest eigenvalue and largest |eigenvalue| of the symmetric part of A (n x n), LAPACK dsyev. */
static void sym_eig(const double *A, size_t n, double *lmin, double *lmax)
{
    double *W = dalloc(n * n), *w = dalloc(n);
    for (size_t j = 0; j < n; ++j)
        for (size_t i = 0; i < n; ++i) W[i + n * j] = 0.5 * (A[i + n * j] + A[j + n * i]);
    lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', (lapack_int)n, W, (lapack_int)n, w);
    ck_assert_int_eq(info, 0);
    *lmin = w[0];
    *lmax = fmax(fabs(w[0]), fabs(w[n - 1]));
    free(W);
    free(w);
}

/* uniform in [-1, 1) (xorshift64*), deterministic */
static double urand(uint64_t *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-52 - 1.0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------------ */
/* registry and scenes                                                                          */

/* Every registered model is in MODELS[] (a new model must add its line), and vice versa. */
START_TEST(test_registry_covered)
{
    int missing = 0;
    for (int k = 0; ct_model_registry[k]; ++k) {
        int found = 0;
        for (int i = 0; i < NMODELS; ++i) found |= strcmp(MODELS[i].name, ct_model_registry[k]->name) == 0;
        if (!found) {
            fprintf(stderr, "conformance: registered model \"%s\" has no line in MODELS[]\n",
                    ct_model_registry[k]->name);
            missing++;
        }
    }
    for (int i = 0; i < NMODELS; ++i) ck_assert_ptr_nonnull(ct_model_find(MODELS[i].name));
    printf("conformance: %d models in the table, all registered; registry fully covered\n", NMODELS);
    /* the table: which checks apply follows from the family and the guarantees */
    printf("  %-3s %-14s %-10s %-17s %-8s %s\n", "#", "model", "family", "guarantee", "reach", "contact");
    for (int i = 0; i < NMODELS; ++i) {
        const ct_model_type *t = ct_model_find(MODELS[i].name);
        printf("  %-3d %-14s %-10s %-17s %-8.3g {%s}\n", i, t->name, ct_model_family_name(t->family),
               t->guarantees & CT_GUARANTEE_INTERSECTION_FREE ? "intersection_free" : "-", MODELS[i].reach,
               MODELS[i].contact);
    }
    ck_assert_int_eq(missing, 0);
}
END_TEST

/* The scene is what the other checks assume: separated, in front of the ground, and with every
 * closest-feature type among the pairs within D̂ (brute force over all primitive pairs of the two
 * blocks, classified by the core's distance code). */
START_TEST(test_scene_census)
{
    const int dim = 2 + _i % 2, geom = _i / 2;
    conf_case c;
    case_open(&c, 0, dim, CONF_OBSTACLE | (geom == GEOM_PARALLEL ? CONF_PARALLEL : 0u), 1);
    const ct_surface *s = &c.sim->surf;
    const double *x = c.sim->x;
    const int *body = c.sim->xv_body;
    const double d2max = CONF_DHAT * CONF_DHAT;
    long pp = 0, pe = 0, pt = 0, ee = 0, ph = 0, moll = 0;
#define XV(v) (x + (size_t)dim * (v))
    if (dim == 2) {
        for (int k = 0; k < s->nbv; ++k)
            for (int e = 0; e < s->ned; ++e) {
                int p = s->bverts[k], a = s->edges[2 * e], b = s->edges[2 * e + 1];
                if (body[p] == body[a]) continue;
                ct_pe_type t = ct_pe_classify(2, XV(p), XV(a), XV(b));
                if (ct_pe_d2(2, XV(p), XV(a), XV(b), t, NULL, NULL) >= d2max) continue;
                if (t == CT_PE_P_E) pe++;
                else pp++;
            }
    } else {
        for (int k = 0; k < s->nbv; ++k)
            for (int f = 0; f < s->nf; ++f) {
                int p = s->bverts[k];
                const int *F = s->faces + 3 * f;
                if (body[p] == body[F[0]]) continue;
                ct_pt_type t = ct_pt_classify(XV(p), XV(F[0]), XV(F[1]), XV(F[2]));
                if (ct_pt_d2(XV(p), XV(F[0]), XV(F[1]), XV(F[2]), t, NULL, NULL) >= d2max) continue;
                if (t <= CT_PT_P_T2) pp++;
                else if (t <= CT_PT_P_E2) pe++;
                else pt++;
            }
        for (int e1 = 0; e1 < s->ned; ++e1)
            for (int e2 = e1 + 1; e2 < s->ned; ++e2) {
                const int *A = s->edges + 2 * e1, *B = s->edges + 2 * e2;
                if (body[A[0]] == body[B[0]]) continue;
                ct_ee_type t = ct_ee_classify(XV(A[0]), XV(A[1]), XV(B[0]), XV(B[1]));
                if (ct_ee_d2(XV(A[0]), XV(A[1]), XV(B[0]), XV(B[1]), t, NULL, NULL) >= d2max) continue;
                if (t == CT_EE_A_B) ee++;
                else if (t <= CT_EE_A1_B1) pp++;
                else pe++;
                /* nearly parallel: the edge–edge mollifier is active (IPC 2020 §4.3) */
                const double *X = c.sim->X;
                double eps_x = ct_ee_mollifier_eps(X + 3 * A[0], X + 3 * A[1], X + 3 * B[0], X + 3 * B[1]);
                moll += ct_ee_cross2(XV(A[0]), XV(A[1]), XV(B[0]), XV(B[1]), NULL, NULL) < eps_x;
            }
    }
#undef XV
    const ct_obstacle *ob = &c.sim->obstacles[0];
    double gmin = INFINITY;
    long far_bottom = 0;
    for (int k = 0; k < s->nbv; ++k) {
        int v = s->bverts[k];
        double d = 0.0;
        for (int i = 0; i < dim; ++i) d += ob->normal[i] * (x[(size_t)dim * v + i] - ob->point[i]);
        gmin = fmin(gmin, d);
        ph += d < CONF_DHAT;
        far_bottom += body[v] == BOTTOM && x[(size_t)dim * v + 1] < -0.1 + 1e-12 && d >= CONF_DHAT;
    }
    long nint = ct_surface_intersections(s, x, 1, NULL, 0);
    double gap = body_y(&c, x, TOP, 0) - body_y(&c, x, BOTTOM, 1);
    printf("scene %dD %s: %d vertices; pairs within D̂ by closest features: PP %ld, PE %ld, PT %ld, EE %ld "
           "(mollified edge–edge %ld); vertex–ground %ld (%d surface vertices); body gap %.4g D̂, ground gap %.4g D̂; "
           "intersections %ld\n",
           dim, GEOM_NAME[geom], c.sim->nx, pp, pe, pt, ee, moll, ph, s->nbv, gap / CONF_DHAT, gmin / CONF_DHAT, nint);
    ck_assert_int_eq(nint, 0);
    ck_assert_double_gt(gap, 0.0);
    ck_assert_double_lt(fabs(gap - CONF_GAP), 1e-9);
    ck_assert_double_lt(fabs(gmin - CONF_GROUND), 1e-9);
    ck_assert_int_gt(pp, 0);
    ck_assert_int_gt(pe, 0);
    if (dim == 3) {
        ck_assert_int_gt(pt, 0);
        ck_assert_int_gt(ee + (geom == GEOM_PARALLEL ? moll : 0), 0);
        if (geom == GEOM_PARALLEL) ck_assert_int_gt(moll, 0);
    }
    ck_assert_int_gt(ph, 0);
    ck_assert_int_gt(far_bottom, 0); /* only part of the bottom face is within D̂ of the ground */
    case_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 1. derivatives                                                                               */

/* Finite-difference steps (m), both 1e-8. At these scales (D̂ = 1e-2, gaps ≥ 2e-3, slips ≥ 2e-5
 * and a friction threshold of 1e-4) the truncation error ~h²·(third derivative) and the round-off
 * ~1e-16·|f|/h both stay below ~1e-8 relative; the largest third derivatives are those of the
 * sticking friction potential in 3D (~μλ/(ε²|u|)), which is why h is not larger. */
#define FD_H_ENERGY 1e-8
#define FD_H_GRAD 1e-8

typedef struct fd_result {
    double gerr;    /* |g - g_fd| / |g_fd| over the near dofs */
    double sym;     /* max |H - H^T| / max |H| */
    double lmin;    /* smallest eigenvalue of H / largest |eigenvalue| */
    double dmin;    /* smallest eigenvalue of H - H_fd / largest |eigenvalue of H| */
    double herr;    /* |H - H_fd|_F / |H_fd|_F */
    double E, hnorm;
    size_t na;      /* near dofs */
} fd_result;

/* Finite differences run over the "near" dofs only. The blocks are separated by horizontal planes
 * (the bottom block lies in y <= max y(bottom), the top one in y >= min y(top)), so a surface
 * primitive can come within 2·reach of the other block or of the ground only if one of its
 * vertices is in the band: y >= min y(top) − 2·reach (bottom block), y <= max y(bottom) + 2·reach
 * (top block), or ground distance <= 2·reach (distances along a primitive are bounded by those of
 * its vertices, both being linear). Every vertex of such a primitive is near; in these blocks the
 * self-contact distances exceed 2·reach too. The energy does not depend on the other vertices, so
 * their gradient rows and Hessian rows/columns must be exactly zero. */
typedef struct fd_ctx {
    conf_case *c;
    size_t *act, na;
    double *xf, *gf; /* full-space scratch */
} fd_ctx;

static void fd_ctx_init(fd_ctx *f, conf_case *c, const double *x)
{
    const int dim = c->dim;
    const double far = 2.0 * (c->cm->far > 0.0 ? c->cm->far : c->cm->reach) + c->cm->stencil;
    const double ytop = body_y(c, x, TOP, 0), ybot = body_y(c, x, BOTTOM, 1);
    f->c = c;
    f->act = malloc((c->nd + 1) * sizeof *f->act);
    ck_assert_ptr_nonnull(f->act);
    f->na = 0;
    f->xf = dalloc(c->nd);
    f->gf = dalloc(c->nd);
    memcpy(f->xf, x, c->nd * sizeof *x);
    unsigned char *band = calloc((size_t)c->sim->nx + 1, 1), *near = calloc((size_t)c->sim->nx + 1, 1);
    ck_assert(band && near);
    for (int v = 0; v < c->sim->nx; ++v) {
        const double *p = x + (size_t)dim * v;
        int in = c->sim->xv_body[v] == BOTTOM ? ytop - p[1] <= far : p[1] - ybot <= far;
        for (int o = 0; o < c->sim->ctx.nobstacles; ++o) {
            const ct_obstacle *ob = &c->sim->obstacles[o];
            double d = 0.0;
            for (int i = 0; i < dim; ++i) d += ob->normal[i] * (p[i] - ob->point[i]);
            in |= d <= far;
        }
        band[v] = near[v] = (unsigned char)in;
    }
    /* the vertices of a surface face share a surface edge pairwise, so edges suffice */
    const ct_surface *s = &c->sim->surf;
    for (int e = 0; e < s->ned; ++e) {
        int a = s->edges[2 * e], b = s->edges[2 * e + 1];
        if (band[a] || band[b]) near[a] = near[b] = 1;
    }
    for (int v = 0; v < c->sim->nx; ++v)
        if (near[v])
            for (int i = 0; i < dim; ++i) f->act[f->na++] = (size_t)dim * v + i;
    free(band);
    free(near);
}

static void fd_ctx_free(fd_ctx *f)
{
    free(f->act);
    free(f->xf);
    free(f->gf);
}

static double fd_energy(const double *y, void *ctx)
{
    fd_ctx *f = ctx;
    for (size_t k = 0; k < f->na; ++k) f->xf[f->act[k]] = y[k];
    return model_energy(f->c, f->xf);
}

static void fd_grad(const double *y, void *ctx, double *g)
{
    fd_ctx *f = ctx;
    for (size_t k = 0; k < f->na; ++k) f->xf[f->act[k]] = y[k];
    model_gradient(f->c, f->xf, f->gf);
    for (size_t k = 0; k < f->na; ++k) g[k] = f->gf[f->act[k]];
}

static void fd_check_at(conf_case *c, const double *x, fd_result *r)
{
    const size_t nd = c->nd;
    fd_ctx f;
    fd_ctx_init(&f, c, x);
    const size_t na = f.na;
    r->na = na;
    double *g = dalloc(nd), *y = dalloc(na), *ga = dalloc(na), *gfd = dalloc(na);
    double *H = dalloc(nd * nd), *Ha = dalloc(na * na), *Hfd = dalloc(na * na);
    unsigned char *is_act = calloc(nd + 1, 1);
    ck_assert_ptr_nonnull(is_act);
    for (size_t k = 0; k < na; ++k) {
        y[k] = x[f.act[k]];
        is_act[f.act[k]] = 1;
    }
    /* energy -> gradient */
    r->E = model_energy(c, x);
    model_gradient(c, x, g);
    for (size_t i = 0; i < nd; ++i)
        if (!is_act[i]) ck_assert_msg(g[i] == 0.0, "gradient entry %zu of a far vertex is %g", i, g[i]);
    for (size_t k = 0; k < na; ++k) ga[k] = g[f.act[k]];
    ct_fd_gradient(fd_energy, y, na, FD_H_ENERGY, &f, gfd);
    r->gerr = ct_rel_err_vec(ga, gfd, na, 1e-300);
    /* the assembled Hessian: symmetric, PSD, zero on far dofs */
    model_hessian_dense(c, x, H);
    double hmax = 0.0, asym = 0.0;
    for (size_t j = 0; j < nd; ++j)
        for (size_t i = 0; i < nd; ++i) {
            double h = H[i + nd * j];
            hmax = fmax(hmax, fabs(h));
            asym = fmax(asym, fabs(h - H[j + nd * i]));
            if (!is_act[i] || !is_act[j]) ck_assert_msg(h == 0.0, "Hessian entry (%zu, %zu) of a far vertex is %g", i, j, h);
        }
    r->sym = hmax > 0 ? asym / hmax : 0.0;
    if (c->m->gradient_hessian) { /* the one-call op gives the two calls' results */
        double *g2 = dalloc(nd), *H2 = dalloc(nd * nd);
        ct_triplets t2;
        ct_triplets_init(&t2);
        ck_assert_int_eq(ct_model_gradient_hessian(c->sim->model, &c->sim->ctx, x, g2, &t2), CT_OK);
        for (size_t k = 0; k < t2.n; ++k) H2[(size_t)t2.row[k] + nd * (size_t)t2.col[k]] += t2.val[k];
        double dh = 0.0;
        for (size_t i = 0; i < nd; ++i) ck_assert_msg(g2[i] == g[i], "gradient_hessian: gradient entry %zu %.17g != %.17g", i, g2[i], g[i]);
        for (size_t k = 0; k < nd * nd; ++k) dh = fmax(dh, fabs(H2[k] - H[k]));
        ck_assert_msg(dh <= 1e-14 * hmax, "gradient_hessian: Hessian differs by %g of %g", dh, hmax);
        ct_triplets_free(&t2);
        free(g2), free(H2);
    }
    double lmin, lmax;
    sym_eig(H, nd, &lmin, &lmax);
    r->lmin = lmax > 0 ? lmin / lmax : 0.0;
    r->hnorm = lmax;
    /* gradient -> Hessian on the near dofs */
    for (size_t b = 0; b < na; ++b)
        for (size_t a = 0; a < na; ++a) Ha[a + na * b] = H[f.act[a] + nd * f.act[b]];
    ct_fd_hessian(fd_grad, y, na, FD_H_GRAD, &f, Hfd);
    double num = 0.0, den = 0.0;
    for (size_t j = 0; j < na; ++j)
        for (size_t i = 0; i < na; ++i) {
            double hs = 0.5 * (Hfd[i + na * j] + Hfd[j + na * i]);
            num += (Ha[i + na * j] - hs) * (Ha[i + na * j] - hs);
            den += hs * hs;
        }
    r->herr = den > 0 ? sqrt(num / den) : sqrt(num);
    for (size_t k = 0; k < na * na; ++k) Hfd[k] = Ha[k] - Hfd[k]; /* sym_eig symmetrizes */
    double dmin, dmax;
    sym_eig(Hfd, na, &dmin, &dmax);
    r->dmin = lmax > 0 ? dmin / lmax : 0.0;
    free(g);
    free(y);
    free(ga);
    free(gfd);
    free(H);
    free(Ha);
    free(Hfd);
    free(is_act);
    fd_ctx_free(&f);
}

START_TEST(test_derivatives)
{
    const int geom = _i % NGEOM, j = _i / NGEOM;
    const double t0 = now();
    conf_case c;
    case_open(&c, case_model(j), case_dim(j), CONF_OBSTACLE | (geom == GEOM_PARALLEL ? CONF_PARALLEL : 0u), 1);
    if (!has_energy_ops(c.m)) {
        printf("derivatives %s: skipped (%s family: no energy/gradient/hessian ops)\n", c.label,
               ct_model_family_name(c.m->family));
        case_close(&c);
        return;
    }
    const size_t nd = c.nd;
    double *x = dalloc(nd), *xp = dalloc(nd);
    memcpy(x, c.sim->x, nd * sizeof *x);
    slipped_prev(&c, x, xp);
    lag_at(&c, xp);
    fd_result r;
    fd_check_at(&c, x, &r);
    printf("derivatives %s, contact scene (barrier + lagged friction, E = %.6g J, %zu of %zu dofs near): "
           "gradient FD rel. err %.3e; Hessian asymmetry %.1e, min eig / max %.2e, min eig(H - H_fd) / max %.2e, "
           "|H - H_fd|/|H_fd| = %.3e (the per-stencil PSD projection)\n",
           c.label, r.E, r.na, nd, r.gerr, r.sym, r.lmin, r.dmin, r.herr);
    ck_assert(isfinite(r.E) && r.E != 0.0); /* adhesive energies are negative */
    ck_assert_double_lt(r.gerr, 1e-6);
    ck_assert_double_le(r.sym, 1e-12);
    ck_assert_double_ge(r.lmin, -1e-10);
    if (!c.cm->approx) ck_assert_double_ge(r.dmin, -1e-6);

    /* Convex configuration (once per model and dimension; it does not depend on the top block's
     * geometry): the top block far away, the bottom block pressed closer to the ground (closest
     * vertex at 0.2 D̂). Only vertex–half-space terms remain: their distance is linear in x, so the
     * barrier b(d) (convex, decreasing) is convex in x, and the friction terms have λ > 0. No
     * projection is active and the Hessian must be the exact one. */
    if (geom == GEOM_TILTED) {
        double nrm[3], up[3] = {0, 3.0 * c.cm->reach + CONF_DHAT, 0}, down[3];
        ground_normal(c.dim, nrm);
        for (int i = 0; i < 3; ++i) down[i] = -0.5 * CONF_GROUND * nrm[i];
        translate_body(&c, x, TOP, up);
        translate_body(&c, x, BOTTOM, down);
        slipped_prev(&c, x, xp);
        lag_at(&c, xp);
        /* the exact mode's Hessian (ct_step_ctx.exact_hessian) must be the true one; the safe
         * mode's (the default) may add curvature (friction's majorizer along the slip) */
        fd_result r2, r3;
        c.sim->ctx.exact_hessian = 1;
        fd_check_at(&c, x, &r2);
        c.sim->ctx.exact_hessian = 0;
        fd_check_at(&c, x, &r3);
        printf("derivatives %s, body–ground only (convex terms, E = %.6g J, %zu dofs near): gradient FD rel. err "
               "%.3e; exact mode |H - H_fd|/|H_fd| = %.3e, min eig / max %.2e; safe mode |H - H_fd|/|H_fd| = "
               "%.3e, min eig(H - H_fd) / max %.2e\n",
               c.label, r2.E, r2.na, r2.gerr, r2.herr, r2.lmin, r3.herr, r3.dmin);
        ck_assert_double_ge(r3.dmin, -1e-6);
        ck_assert(isfinite(r2.E) && r2.E != 0.0);
        ck_assert_double_lt(r2.gerr, 1e-6);
        ck_assert_double_gt(r2.hnorm, 0.0);
        if (c.cm->nonconvex) /* the projection may act: it only adds curvature */
            ck_assert_double_ge(r2.dmin, -1e-6);
        else
            ck_assert_double_lt(r2.herr, 1e-6);
        ck_assert_double_ge(r3.lmin, -1e-10); /* the safe mode is PSD; the exact one of a nonconvex line need not be */
    }
    printf("derivatives %s: %.2f s\n", c.label, now() - t0);
    free(x);
    free(xp);
    case_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 2. max_step never lets a step cross                                                          */

enum { NDIR = 10, NSAMPLE = 64 };

/* Displacement direction k (large: centimetres to 0.3 m per vertex, against gaps of millimetres). */
static void make_direction(const conf_case *c, const double *x, int k, uint64_t *rng, double *dx)
{
    const int dim = c->dim;
    const size_t nd = c->nd;
    double nrm[3], t[3] = {0, 0, 0};
    ground_normal(dim, nrm);
    memset(dx, 0, nd * sizeof *dx);
    switch (k) {
    case 0: /* top straight down, 10 gaps */
        t[1] = -10 * CONF_GAP;
        translate_body(c, dx, TOP, t);
        break;
    case 1: /* top down and sliding */
        t[0] = 0.02, t[1] = -0.05, t[2] = dim == 3 ? 0.01 : 0.0;
        translate_body(c, dx, TOP, t);
        break;
    case 2: /* bottom into the ground */
        for (int i = 0; i < dim; ++i) t[i] = -0.05 * nrm[i];
        translate_body(c, dx, BOTTOM, t);
        break;
    case 3: /* squeeze: bottom up, top down, and everything toward the ground */
        t[1] = 0.03;
        translate_body(c, dx, BOTTOM, t);
        t[1] = -0.06;
        translate_body(c, dx, TOP, t);
        for (int i = 0; i < dim; ++i) t[i] = -0.02 * nrm[i];
        translate_body(c, dx, -1, t);
        break;
    case 4: { /* top rotated by 0.5 rad about a point near its lowest corner: its edges sweep through */
        double axis[3] = {0.3, 0.2, 1.0}, ctr[3] = {0.08, 0.02, 0.08};
        for (int v = 0; v < c->sim->nx; ++v) {
            if (c->sim->xv_body[v] != TOP) continue;
            double p[3] = {0, 0, 0}, q[3];
            for (int i = 0; i < dim; ++i) p[i] = x[(size_t)dim * v + i] - ctr[i];
            rotate_point(dim, axis, -0.5, p, q);
            for (int i = 0; i < dim; ++i) dx[(size_t)dim * v + i] = q[i] - p[i];
        }
        break;
    }
    default: { /* random per-vertex motion of growing amplitude, biased toward contact */
        double amp = k == 5 ? 0.005 : k == 6 ? 0.02 : k == 7 ? 0.05 : k == 8 ? 0.1 : 0.3;
        for (size_t i = 0; i < nd; ++i) dx[i] = amp * urand(rng);
        t[1] = -0.02;
        translate_body(c, dx, TOP, t);
        for (int i = 0; i < dim; ++i) t[i] = -0.01 * nrm[i];
        translate_body(c, dx, BOTTOM, t);
    }
    }
}

/* Is x + t dx (a) free of surface intersections (a model with CT_GUARANTEE_INTERSECTION_FREE; for the
 * others: the model's energy is finite, i.e. the point is feasible for its own contact distance) and (b)
 * strictly in front of every obstacle? */
static int config_safe(conf_case *c, const double *x, const double *dx, double t, double *xt)
{
    for (size_t i = 0; i < c->nd; ++i) xt[i] = x[i] + t * dx[i];
    if (c->m->guarantees & CT_GUARANTEE_INTERSECTION_FREE) {
        long n = ct_surface_intersections(&c->sim->surf, xt, 1, NULL, 0);
        ck_assert_int_ge(n, 0);
        if (n > 0) return 0;
    } else if (!isfinite(model_energy(c, xt))) {
        return 0;
    }
    for (int o = 0; o < c->sim->ctx.nobstacles; ++o)
        if (!(min_obstacle_distance(c, xt, o) > 0.0)) return 0;
    return 1;
}

START_TEST(test_max_step)
{
    const double t_start = now();
    conf_case c;
    case_open(&c, case_model(_i), case_dim(_i), CONF_OBSTACLE, 1);
    if (!c.m->max_step) {
        printf("max_step %s: skipped (%s family: no max_step op)\n", c.label, ct_model_family_name(c.m->family));
        case_close(&c);
        return;
    }
    const size_t nd = c.nd;
    double *x = dalloc(nd), *dx = dalloc(nd), *xt = dalloc(nd);
    uint64_t rng = 0x853c49e6748fea9bull;
    int would_cross = 0, total = 0;
    double amin = 1.0;
    for (int start = 0; start < 2; ++start) {
        memcpy(x, c.sim->x, nd * sizeof *x);
        if (start == 1 && !(c.cm->far > 0.0)) { /* the top block 0.05 D̂ above the bottom one */
            double t[3] = {0, -(CONF_GAP - 0.05 * CONF_DHAT), 0};
            translate_body(&c, x, TOP, t);
        } else if (start == 1) { /* a contact distance of its own: lowered by 0.05 D̂ while the energy is finite */
            double t[3] = {0, -0.05 * CONF_DHAT, 0}, back[3] = {0, 0.05 * CONF_DHAT, 0};
            for (int k = 0; k < 200; ++k) {
                translate_body(&c, x, TOP, t);
                if (!isfinite(model_energy(&c, x))) {
                    translate_body(&c, x, TOP, back);
                    break;
                }
            }
        }
        ck_assert(config_safe(&c, x, dx, 0.0, xt));
        printf("max_step %s, start %d: alpha =", c.label, start);
        for (int k = 0; k < NDIR; ++k) {
            make_direction(&c, x, k, &rng, dx);
            double alpha = -1.0;
            ck_assert_int_eq(ct_model_max_step(c.sim->model, &c.sim->ctx, x, dx, &alpha), CT_OK);
            printf(" %.3g", alpha);
            ck_assert_double_gt(alpha, 0.0);
            ck_assert_double_le(alpha, 1.0);
            amin = fmin(amin, alpha);
            would_cross += !config_safe(&c, x, dx, 1.0, xt);
            total++;
            for (int s = 0; s < NSAMPLE; ++s) {
                double t = alpha * (double)s / (NSAMPLE - 1);
                if (!config_safe(&c, x, dx, t, xt)) {
                    fprintf(stderr, "max_step %s: start %d, direction %d: alpha = %.17g but x + t dx is unsafe at t = %.17g\n",
                            c.label, start, k, alpha, t);
                    ck_abort_msg("max_step let a step cross");
                }
            }
        }
        printf("\n");
    }
    printf("max_step %s: %d directions (%d of them cross without the filter), 64 samples each all safe; "
           "smallest alpha %.3g (%.2f s)\n",
           c.label, total, would_cross, amin, now() - t_start);
    ck_assert_int_ge(would_cross, total / 2); /* the directions do test something */
    free(x);
    free(dx);
    free(xt);
    case_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 3. no force beyond the reach                                                                 */

/* The contact configuration moved apart: the top block `dist` above the plane y = max y(bottom)
 * (so every bottom–top distance is ≥ dist, the closest exactly dist), then both blocks along the
 * ground normal until the closest surface vertex is `dist` in front of the ground. */
static void place_apart(const conf_case *c, double *x, double dist, double *gap, double *gd)
{
    memcpy(x, c->sim->x, c->nd * sizeof *x);
    double t[3] = {0, dist - (body_y(c, x, TOP, 0) - body_y(c, x, BOTTOM, 1)), 0}, nrm[3];
    translate_body(c, x, TOP, t);
    ground_normal(c->dim, nrm);
    double lift = dist - min_obstacle_distance(c, x, 0);
    for (int i = 0; i < 3; ++i) t[i] = lift * nrm[i];
    translate_body(c, x, -1, t);
    *gap = body_y(c, x, TOP, 0) - body_y(c, x, BOTTOM, 1);
    *gd = min_obstacle_distance(c, x, 0);
}

START_TEST(test_no_force_beyond_reach)
{
    conf_case c;
    case_open(&c, case_model(_i), case_dim(_i), CONF_OBSTACLE, 1);
    if (c.m->family == CT_FAMILY_CONSTRAINT) {
        printf("reach %s: skipped (constraint family: its forces are the last step's impulses, not a function of "
               "x; test_constraint requires r = 0 on the block far from everything)\n", c.label);
        case_close(&c);
        return;
    }
    if (!has_energy_ops(c.m) && !c.m->forces) {
        printf("reach %s: skipped (no energy or forces ops)\n", c.label);
        case_close(&c);
        return;
    }
    const size_t nd = c.nd;
    double *x = dalloc(nd), *xp = dalloc(nd), *xs = dalloc(nd), *g = dalloc(nd);
    /* the reach is tight: with the bodies 0.9 reach apart (and from the ground) there is energy
     * (negative for an adhesive model, whose energy at the reach's edge is the adhesion's) */
    double gap, gd, Enear = NAN;
    if (has_energy_ops(c.m)) {
        place_apart(&c, x, 0.9 * c.cm->reach, &gap, &gd);
        lag_at(&c, x);
        Enear = model_energy(&c, x);
        ck_assert_double_ne(Enear, 0.0);
    }
    const double far = c.cm->far > 0.0 ? c.cm->far : c.cm->reach;
    place_apart(&c, x, 1.02 * far, &gap, &gd);
    ck_assert_double_ge(gap, far);
    ck_assert_double_ge(gd, far);
    /* lagged there; evaluated at a slipped configuration (nonzero tangential displacement) */
    lag_at(&c, x);
    slipped_prev(&c, x, xp);
    for (size_t i = 0; i < nd; ++i) xs[i] = 2.0 * x[i] - xp[i]; /* x + s */
    long nnz = 0;
    double E = 0.0, gmax = 0.0, hmax = 0.0;
    if (has_energy_ops(c.m)) {
        E = model_energy(&c, xs);
        model_gradient(&c, xs, g);
        for (size_t i = 0; i < nd; ++i) gmax = fmax(gmax, fabs(g[i]));
        ct_triplets tr;
        model_hessian(&c, xs, &tr);
        for (size_t k = 0; k < tr.n; ++k) {
            hmax = fmax(hmax, fabs(tr.val[k]));
            nnz += tr.val[k] != 0.0;
        }
        ct_triplets_free(&tr);
    }
    double fmaxv = 0.0;
    if (c.m->forces) {
        ct_force_report fr;
        ck_assert_int_eq(ct_force_report_init(&fr, c.sim->nb + c.sim->ctx.nobstacles, 16), CT_OK);
        ct_force_report_zero(&fr);
        ck_assert_int_eq(ct_model_forces(c.sim->model, &c.sim->ctx, xs, &fr), CT_OK);
        size_t n = (size_t)fr.np * fr.np * CT_FORCE_NCAT;
        for (size_t k = 0; k < n; ++k)
            for (int i = 0; i < 3; ++i) fmaxv = fmax(fmaxv, fabs(fr.force[k][i]));
        for (int k = 0; k < fr.np * fr.np; ++k) ck_assert_int_eq(fr.active_pairs[k], 0);
        ct_force_report_free(&fr);
    }
    /* per-vertex fields: no force, no gap anywhere */
    ct_vertex_fields vf;
    ck_assert_int_eq(ct_vertex_fields_init(&vf, c.sim->nx), CT_OK);
    ck_assert_int_eq(ct_model_vertex_fields(c.sim->model, &c.sim->ctx, xs, &vf), CT_OK);
    int ngap = 0;
    for (int v = 0; v < c.sim->nx; ++v) {
        ngap += !isnan(vf.gap[v]);
        for (int i = 0; i < 3; ++i) fmaxv = fmax(fmaxv, fabs(vf.force[v][i]));
    }
    ct_vertex_fields_free(&vf);
    printf("reach %s (%.3g m): at 0.9 reach E = %.3g J; bodies %.4g reach apart and from the ground: E = %g, "
           "max|g| = %g, max|H| = %g (%ld nonzero triplets), max|F| = %g (report and per vertex), %d vertices "
           "with a gap\n",
           c.label, c.cm->reach, Enear, fmin(gap, gd) / c.cm->reach, E, gmax, hmax, nnz, fmaxv, ngap);
    ck_assert_int_eq(ngap, 0);
    ck_assert(E == 0.0);
    ck_assert(gmax == 0.0);
    ck_assert(hmax == 0.0);
    ck_assert(fmaxv == 0.0);
    free(x);
    free(xp);
    free(xs);
    free(g);
    case_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 4. action = −reaction                                                                        */

START_TEST(test_action_reaction)
{
    conf_case c;
    case_open(&c, case_model(_i), case_dim(_i), CONF_OBSTACLE, 1);
    if (c.m->family == CT_FAMILY_CONSTRAINT) {
        printf("action/reaction %s: skipped here (constraint family: the report is that of the last step's "
               "impulses; test_constraint checks it after real steps)\n", c.label);
        case_close(&c);
        return;
    }
    if (!c.m->forces) {
        printf("action/reaction %s: skipped (no forces op)\n", c.label);
        case_close(&c);
        return;
    }
    const int dim = c.dim, nb = c.sim->nb;
    const size_t nd = c.nd;
    double *x = dalloc(nd), *xp = dalloc(nd), *g = dalloc(nd);
    memcpy(x, c.sim->x, nd * sizeof *x);
    slipped_prev(&c, x, xp);
    lag_at(&c, xp);
    ct_force_report fr;
    ck_assert_int_eq(ct_force_report_init(&fr, nb + c.sim->ctx.nobstacles, 16), CT_OK);
    ct_force_report_zero(&fr);
    ck_assert_int_eq(ct_model_forces(c.sim->model, &c.sim->ctx, x, &fr), CT_OK);
    const int np = fr.np;
    ck_assert_int_eq(np, 3);
    double worst = 0.0;
    for (int cat = 0; cat < CT_FORCE_NCAT; ++cat)
        for (int a = 0; a < np; ++a)
            for (int b = a + 1; b < np; ++b) {
                const double *Fab = ct_force_report_at(&fr, a, b, cat), *Fba = ct_force_report_at(&fr, b, a, cat);
                double s = 0.0, m = 0.0;
                for (int i = 0; i < 3; ++i) {
                    s += (Fab[i] + Fba[i]) * (Fab[i] + Fba[i]);
                    m += Fab[i] * Fab[i];
                }
                double rel = m > 0 ? sqrt(s / m) : sqrt(s);
                if (rel > 1e-12)
                    fprintf(stderr, "action/reaction %s: %s between %s and %s: F_ab + F_ba = %g (|F_ab| = %g)\n",
                            c.label, ct_force_category_name(cat), c.sim->part_names[a], c.sim->part_names[b], sqrt(s),
                            sqrt(m));
                worst = fmax(worst, rel);
            }
    /* the contacts the scene sets up are reported, pointing the right way */
    double nrm[3];
    ground_normal(dim, nrm);
    const double *Fbar_top = ct_force_report_at(&fr, TOP, BOTTOM, CT_FORCE_BARRIER);
    const double *Fbar_gnd = ct_force_report_at(&fr, BOTTOM, nb, CT_FORCE_BARRIER);
    double up_top = Fbar_top[1], up_gnd = 0.0;
    for (int i = 0; i < dim; ++i) up_gnd += Fbar_gnd[i] * nrm[i];
    double ffric = 0.0;
    for (int i = 0; i < 3; ++i) ffric += pow(ct_force_report_at(&fr, TOP, BOTTOM, CT_FORCE_FRICTION)[i], 2);
    printf("action/reaction %s: barrier on top from bottom %.6g N (up), on bottom from ground %.6g N (along n), "
           "friction top–bottom %.6g N; worst |F_ab + F_ba| / |F_ab| = %.2e\n",
           c.label, up_top, up_gnd, sqrt(ffric), worst);
    ck_assert_double_lt(worst, 1e-12);
    ck_assert_double_gt(up_top, 0.0);
    ck_assert_double_gt(up_gnd, 0.0);
    ck_assert_int_gt(fr.active_pairs[TOP * np + BOTTOM], 0);
    ck_assert_int_gt(fr.active_pairs[BOTTOM * np + nb], 0);

    /* body resultants: -Σ_{v in body} g_v = Σ over partners and categories of the reported force */
    if (has_energy_ops(c.m)) {
        model_gradient(&c, x, g);
        double gabs = 0.0, total_g[3] = {0, 0, 0}, total_obst[3] = {0, 0, 0}, worst_body = 0.0;
        for (size_t i = 0; i < nd; ++i) gabs += fabs(g[i]);
        for (int b = 0; b < nb; ++b) {
            double res[3] = {0, 0, 0}, rep[3] = {0, 0, 0};
            for (int v = 0; v < c.sim->nx; ++v)
                if (c.sim->xv_body[v] == b)
                    for (int i = 0; i < dim; ++i) res[i] -= g[(size_t)dim * v + i];
            for (int p = 0; p < np; ++p)
                for (int cat = 0; cat < CT_FORCE_NCAT; ++cat)
                    for (int i = 0; i < dim; ++i) {
                        double f = ct_force_report_at(&fr, b, p, cat)[i];
                        rep[i] += f;
                        if (p >= nb) total_obst[i] += f;
                    }
            double e = 0.0;
            for (int i = 0; i < dim; ++i) {
                e = fmax(e, fabs(res[i] - rep[i]));
                total_g[i] -= res[i];
            }
            worst_body = fmax(worst_body, e / gabs);
        }
        double e = 0.0, fo = 0.0;
        for (int i = 0; i < dim; ++i) {
            e = fmax(e, fabs(total_g[i] + total_obst[i]));
            fo = fmax(fo, fabs(total_obst[i]));
        }
        printf("action/reaction %s: body resultants vs report: max error / Σ|g| = %.2e; |Σ g + F_obstacle| = %.2e "
               "(|F_obstacle| = %.6g N, Σ|g| = %.6g N)\n",
               c.label, worst_body, e, fo, gabs);
        ck_assert_double_lt(worst_body, 1e-12);
        ck_assert_double_lt(e, 1e-12 * gabs);
        ck_assert_double_gt(fo, 0.0);
    }
    ct_force_report_free(&fr);
    free(x);
    free(xp);
    free(g);
    case_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 4b. per-vertex contact fields (ct_model_vertex_fields) of the energy family                   */

/* In the action/reaction configuration (friction lagged at a slipped x_prev): force = −∇E exactly
 * (the model's own gradient); every surface vertex within the reach of the ground has a gap, at
 * most its ground distance; gaps are positive and below the reach (a bond: its debond distance,
 * the reach of the rcc line), NaN off the surface; β ∈ [0, 1] where the model has it. */
START_TEST(test_vertex_fields)
{
    conf_case c;
    case_open(&c, case_model(_i), case_dim(_i), CONF_OBSTACLE, 1);
    if (c.m->family == CT_FAMILY_CONSTRAINT) {
        printf("vertex fields %s: skipped here (constraint family: test_constraint checks them after real "
               "steps)\n", c.label);
        case_close(&c);
        return;
    }
    const int dim = c.dim, nx = c.sim->nx;
    const size_t nd = c.nd;
    double *x = dalloc(nd), *xp = dalloc(nd), *g = dalloc(nd);
    memcpy(x, c.sim->x, nd * sizeof *x);
    slipped_prev(&c, x, xp);
    lag_at(&c, xp);
    ct_vertex_fields vf;
    ck_assert_int_eq(ct_vertex_fields_init(&vf, nx), CT_OK);
    ck_assert_int_eq(ct_model_vertex_fields(c.sim->model, &c.sim->ctx, x, &vf), CT_OK);
    if (!has_energy_ops(c.m)) {
        printf("vertex fields %s: none (no contact): filled %#x\n", c.label, vf.filled);
        ck_assert_uint_eq(vf.filled, 0u);
        ct_vertex_fields_free(&vf);
        free(x), free(xp), free(g);
        case_close(&c);
        return;
    }
    ck_assert(vf.filled & CT_VF_FORCE);
    /*   force = −∇E */
    model_gradient(&c, x, g);
    double gabs = 0.0, ferr = 0.0;
    for (size_t i = 0; i < nd; ++i) gabs += fabs(g[i]);
    for (int v = 0; v < nx; ++v) {
        for (int i = 0; i < dim; ++i) ferr = fmax(ferr, fabs(vf.force[v][i] + g[(size_t)dim * v + i]));
        if (dim == 2) ck_assert(vf.force[v][2] == 0.0);
    }
    /*   gaps: surface vertices only, in (0, reach), at most the ground distance where that is within reach */
    unsigned char *on_surf = calloc((size_t)nx + 1, 1);
    ck_assert_ptr_nonnull(on_surf);
    for (int k = 0; k < c.sim->surf.nbv; ++k) on_surf[c.sim->surf.bverts[k]] = 1;
    const ct_obstacle *ob = &c.sim->obstacles[0];
    int ngap = 0, nground = 0, bad = 0;
    double gmin = INFINITY, gmax = 0.0, bmin = INFINITY, bmax = -INFINITY;
    for (int v = 0; v < nx; ++v) {
        const double gv = vf.gap[v];
        double dg = 0.0;
        for (int i = 0; i < dim; ++i) dg += ob->normal[i] * (x[(size_t)dim * v + i] - ob->point[i]);
        if (!isnan(gv)) {
            ngap++;
            gmin = fmin(gmin, gv), gmax = fmax(gmax, gv);
            bad += !on_surf[v] || !(gv > 0.0) || !(gv < c.cm->reach);
        }
        if ((vf.filled & CT_VF_GAP) && on_surf[v] && dg < c.cm->reach) {
            nground++;
            bad += !(gv <= dg);
        }
        bmin = fmin(bmin, vf.beta[v]), bmax = fmax(bmax, vf.beta[v]);
    }
    printf("vertex fields %s: filled %#x; |F + grad E|_inf = %.2e (sum |grad E| = %.6g N); %d vertices with a gap in "
           "[%.4g, %.4g] m, %d within reach of the ground (gap <= ground distance); beta in [%g, %g]; %d violations\n",
           c.label, vf.filled, ferr, gabs, ngap, ngap ? gmin : NAN, ngap ? gmax : NAN, nground, bmin, bmax, bad);
    ck_assert_double_le(ferr, 1e-12 * gabs);
    ck_assert(vf.filled & CT_VF_GAP); /* every energy contact model of the registry reports gaps */
    ck_assert_int_gt(nground, 0);
    ck_assert_int_eq(bad, 0);
    ck_assert(bmin >= 0.0 && bmax <= 1.0);
    if (vf.filled & CT_VF_BETA) ck_assert_double_gt(bmax, 0.0); /* the rcc line bonds at x_prev */
    else ck_assert(bmax == 0.0);
    ct_vertex_fields_free(&vf);
    free(on_surf);
    free(x), free(xp), free(g);
    case_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 5. invariance                                                                                */

/* y = R p + t for every vertex (R about the origin). */
static void rigid_map(const conf_case *c, const double *x, const double *axis, double angle, const double *t,
                      double *y)
{
    const int dim = c->dim;
    for (int v = 0; v < c->sim->nx; ++v) {
        double q[3];
        rotate_point(dim, axis, angle, x + (size_t)dim * v, q);
        for (int i = 0; i < dim; ++i) y[(size_t)dim * v + i] = q[i] + t[i];
    }
}

/* E and g at x lagged at xp, then at the rigidly moved (Rx + t, R xp + t); returns the relative
 * energy change and the relative gradient covariance error |g' - R g| / |g|. */
/* E and g at (x, lagged at xp) and at the rigidly moved (y, yp), the latter on a fresh instance of
 * the model (case_open with the same model line, dimension and flags): a model with per-pair state
 * (RCC's bonds and anchors) remembers where it was lagged before, and the moved scene is a new
 * history, not a continuation. */
static void invariance_at(conf_case *c, int mi, unsigned flags, const double *x, const double *xp,
                          const double *axis, double angle, const double *t, double *E0, double *eerr, double *gerr)
{
    const size_t nd = c->nd;
    const int dim = c->dim;
    double *g = dalloc(nd), *g1 = dalloc(nd), *Rg = dalloc(nd), *y = dalloc(nd), *yp = dalloc(nd);
    double zero[3] = {0, 0, 0};
    lag_at(c, xp);
    *E0 = model_energy(c, x);
    model_gradient(c, x, g);
    rigid_map(c, x, axis, angle, t, y);
    rigid_map(c, xp, axis, angle, t, yp);
    conf_case c2;
    case_open(&c2, mi, c->dim, flags, 1);
    lag_at(&c2, yp);
    double E1 = model_energy(&c2, y);
    model_gradient(&c2, y, g1);
    case_close(&c2);
    rigid_map(c, g, axis, angle, zero, Rg);
    (void)dim;
    *eerr = fabs(E1 - *E0) / fabs(*E0);
    *gerr = ct_rel_err_vec(g1, Rg, nd, 1e-300);
    free(g);
    free(g1);
    free(Rg);
    free(y);
    free(yp);
}

START_TEST(test_invariance)
{
    const int mi = case_model(_i), dim = case_dim(_i);
    conf_case c;
    case_open(&c, mi, dim, CONF_OBSTACLE, 1);
    if (!has_energy_ops(c.m)) {
        printf("invariance %s: skipped (%s family: no energy ops)\n", c.label, ct_model_family_name(c.m->family));
        case_close(&c);
        return;
    }
    double *x = dalloc(c.nd), *xp = dalloc(c.nd);
    /* (a) with the ground: translation along it */
    double nrm[3], tan[3] = {0, 0, 0}, z[3] = {0, 0, 1}, E0, eerr, gerr;
    ground_normal(dim, nrm);
    if (dim == 2) {
        tan[0] = nrm[1], tan[1] = -nrm[0];
    } else { /* n x (0,0,1) + 0.5 n x (1,0,0) */
        tan[0] = nrm[1] * z[2] - nrm[2] * z[1], tan[1] = nrm[2] * z[0] - nrm[0] * z[2], tan[2] = nrm[0] * z[1] - nrm[1] * z[0];
        tan[1] += 0.5 * nrm[2], tan[2] -= 0.5 * nrm[1];
    }
    for (int i = 0; i < 3; ++i) tan[i] *= 0.137;
    memcpy(x, c.sim->x, c.nd * sizeof *x);
    slipped_prev(&c, x, xp);
    invariance_at(&c, mi, CONF_OBSTACLE, x, xp, z, 0.0, tan, &E0, &eerr, &gerr);
    printf("invariance %s, translation along the ground: E = %.9g J, rel. change %.2e, gradient %.2e\n", c.label, E0,
           eerr, gerr);
    ck_assert(isfinite(E0) && E0 != 0.0);
    ck_assert_double_lt(eerr, 1e-12);
    ck_assert_double_lt(gerr, 1e-10);
    case_close(&c);

    /* (b) without obstacles: rotation about an oblique axis + translation of everything */
    case_open(&c, mi, dim, 0, 1);
    double axis[3] = {1, 2, 3}, t[3] = {0.31, -0.17, 0.23};
    memcpy(x, c.sim->x, c.nd * sizeof *x);
    slipped_prev(&c, x, xp);
    invariance_at(&c, mi, 0, x, xp, axis, 0.7, t, &E0, &eerr, &gerr);
    printf("invariance %s, rotation 0.7 rad + translation (no obstacle): E = %.9g J, rel. change %.2e, "
           "gradient covariance %.2e\n",
           c.label, E0, eerr, gerr);
    ck_assert(isfinite(E0) && E0 != 0.0);
    ck_assert_double_lt(eerr, 1e-12);
    ck_assert_double_lt(gerr, 1e-10);
    free(x);
    free(xp);
    case_close(&c);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 6. determinism                                                                               */

START_TEST(test_determinism)
{
    const double t_start = now();
    const int mi = case_model(_i), dim = case_dim(_i);
    conf_case c1, c2;
    /* (a) model ops with 1 and 2 threads */
    case_open(&c1, mi, dim, CONF_OBSTACLE, 1);
    case_open(&c2, mi, dim, CONF_OBSTACLE, 2);
    ck_assert_int_eq(c1.sim->ctx.threads, 1);
    ck_assert_int_eq(c2.sim->ctx.threads, 2);
    const size_t nd = c1.nd;
    if (has_energy_ops(c1.m)) {
        double *x = dalloc(nd), *xp = dalloc(nd), *g1 = dalloc(nd), *g2 = dalloc(nd);
        memcpy(x, c1.sim->x, nd * sizeof *x);
        slipped_prev(&c1, x, xp);
        lag_at(&c1, xp);
        lag_at(&c2, xp);
        double E1 = model_energy(&c1, x), E2 = model_energy(&c2, x);
        model_gradient(&c1, x, g1);
        model_gradient(&c2, x, g2);
        ct_triplets t1, t2;
        model_hessian(&c1, x, &t1);
        model_hessian(&c2, x, &t2);
        ck_assert(memcmp(&E1, &E2, sizeof E1) == 0);
        ck_assert(memcmp(g1, g2, nd * sizeof *g1) == 0);
        ck_assert_uint_eq(t1.n, t2.n);
        ck_assert(memcmp(t1.row, t2.row, t1.n * sizeof *t1.row) == 0);
        ck_assert(memcmp(t1.col, t2.col, t1.n * sizeof *t1.col) == 0);
        ck_assert(memcmp(t1.val, t2.val, t1.n * sizeof *t1.val) == 0);
        printf("determinism %s: E, gradient and %zu Hessian triplets bitwise equal with 1 and 2 threads\n", c1.label,
               t1.n);
        ct_triplets_free(&t1);
        ct_triplets_free(&t2);
        free(x);
        free(xp);
        free(g1);
        free(g2);
    }
    case_close(&c1);
    case_close(&c2);

    /* (b) five steps of a moving scene (the top block thrown down and sideways, gravity) */
    case_open(&c1, mi, dim, CONF_OBSTACLE | CONF_MOVING, 1);
    case_open(&c2, mi, dim, CONF_OBSTACLE | CONF_MOVING, 2);
    ct_diag d;
    ct_diag_init(&d);
    int newton = 0, nonzero_r = 0, inter = 0;
    const int guaranteed = (c1.m->guarantees & CT_GUARANTEE_INTERSECTION_FREE) != 0;
    for (int s = 0; s < 5; ++s) {
        ct_status st1 = ct_sim_step(c1.sim, &d), st2 = ct_sim_step(c2.sim, &d);
        if (st1 != CT_OK || st2 != CT_OK) ct_diag_print(&d, stderr, "step: ");
        ck_assert_int_eq(st1, CT_OK);
        ck_assert_int_eq(st2, CT_OK);
        ck_assert(memcmp(c1.sim->x, c2.sim->x, nd * sizeof(double)) == 0);
        /* the constraint family's impulses too (zero for the energy family) */
        ck_assert(memcmp(c1.sim->r_contact, c2.sim->r_contact, (size_t)c1.sim->ndof * sizeof(double)) == 0);
        for (int i = 0; i < c1.sim->ndof; ++i) nonzero_r += c1.sim->r_contact[i] != 0.0;
        newton += c1.sim->last.newton_iters;
        inter += c1.sim->last.intersections;
        if (guaranteed) { /* every step intersection-free (DESIGN §9) */
            ck_assert_int_eq(c1.sim->last.intersections, 0);
            ck_assert_int_eq(c2.sim->last.intersections, 0);
        }
    }
    if (c1.m->family == CT_FAMILY_CONSTRAINT) ck_assert_int_gt(nonzero_r, 0); /* the impulses compared are not all 0 */
    ct_diag_free(&d);
    double moved = body_y(&c1, c1.sim->x, TOP, 0) - body_y(&c1, c1.sim->X, TOP, 0);
    printf("determinism %s (%s, %s): 5 steps with 1 and 2 threads bitwise equal positions and impulses (%d Newton "
           "iterations, %d nonzero impulse entries, top block moved %.4g m in y, min contact distance %.3g m; "
           "intersections %d: %s; %.2f s)\n",
           c1.label, ct_model_family_name(c1.m->family), guaranteed ? "intersection_free" : "no guarantee", newton,
           nonzero_r, moved, c1.sim->last.min_distance, inter, guaranteed ? "required 0" : "a metric", now() - t_start);
    case_close(&c1);
    case_close(&c2);
}
END_TEST

/* ------------------------------------------------------------------------------------------ */
/* 7. the constraint family: impulses of real steps                                             */

/* CONF_CSTEPS steps of ct_sim_step on the CONF_PUSH scene: the bottom block thrown into the tilted
 * ground (without contact its lowest vertex would end the first step 4.8 mm behind it), the top block
 * CONF_LIFT above, out of reach. These scenes have J = I, so the impulse on surface vertex k is r at
 * its q-dofs, r_k. With n the ground normal, lambda_k = n.r_k, r_t = r_k - lambda_k n, gap_k the
 * distance to the ground after the step, the scales Lambda = max_k |r_k| of the step and
 * G = h |v0| + h^2 |g| (the bottom block's motion in one step), and tol = the line's ctol: */
START_TEST(test_constraint)
{
    const double t_start = now();
    conf_case c;
    case_open(&c, case_model(_i), case_dim(_i), CONF_OBSTACLE | CONF_PUSH, 1);
    if (c.m->family != CT_FAMILY_CONSTRAINT) {
        printf("constraint %s: skipped (energy family: no step op; its contact is checked through the energy)\n",
               c.label);
        case_close(&c);
        return;
    }
    ct_sim *sim = c.sim;
    const int dim = c.dim, nb = sim->nb, np = nb + sim->ctx.nobstacles;
    const double h = CONF_DT, tol = c.cm->ctol > 0.0 ? c.cm->ctol : CONF_CTOL;
    const double mu_p = ct_params_get(&sim->model->params, "mu"), mu = isnan(mu_p) ? 0.0 : mu_p;
    ck_assert_int_eq(sim->dofs.identity, 1);
    double nrm[3], vn = 0.0, v2 = 0.0, gn = 0.0;
    ground_normal(dim, nrm);
    for (int i = 0; i < dim; ++i) vn += CONF_PUSH_V[i] * nrm[i], v2 += CONF_PUSH_V[i] * CONF_PUSH_V[i];
    gn = -9.81 * nrm[1];
    const double G = h * sqrt(v2) + h * h * 9.81;
    /* the push acts at once: without contact the first step would end behind the ground */
    const double free_gap = CONF_GROUND + h * vn + h * h * gn;
    ck_assert_double_lt(free_gap, -0.1 * CONF_DHAT);
    unsigned char *on_surf = calloc((size_t)sim->nx + 1, 1);
    ck_assert_ptr_nonnull(on_surf);
    for (int k = 0; k < sim->surf.nbv; ++k) on_surf[sim->surf.bverts[k]] = 1;
    double w_lam = 0.0, w_cone = 0.0, w_gap = 0.0, w_compl = 0.0, w_body = 0.0, w_anti = 0.0, lam_first = 0.0;
    double w_vf = 0.0, w_vgap = 0.0; /* per-vertex fields: force vs r/h, gap vs the ground distance */
    ct_vertex_fields vf;
    ck_assert_int_eq(ct_vertex_fields_init(&vf, sim->nx), CT_OK);
    double lam_total = 0.0, gap_min = INFINITY, top_r = 0.0;
    int contact_steps = 0, max_active = 0, fail_step = -1;
    ct_diag d;
    ct_diag_init(&d);
    ct_force_report fr;
    ck_assert_int_eq(ct_force_report_init(&fr, np, 16), CT_OK);
    for (int s = 0; s < CONF_CSTEPS; ++s) {
        ct_status st = ct_sim_step(sim, &d);
        if (st != CT_OK) ct_diag_print(&d, stderr, "step: ");
        ck_assert_int_eq(st, CT_OK);
        const double *r = sim->r_contact, *x = sim->x;
        /*   impulses only where contact can be: interior vertices and the top block get exactly 0 */
        for (int k = 0; k < sim->nx; ++k)
            if (!on_surf[k] || sim->xv_body[k] == TOP)
                for (int i = 0; i < dim; ++i) top_r = fmax(top_r, fabs(r[(size_t)k * dim + i]));
        double Lambda = 0.0, lam_step = 0.0;
        for (int k = 0; k < sim->nx; ++k) {
            double a = 0.0;
            for (int i = 0; i < dim; ++i) a += r[(size_t)k * dim + i] * r[(size_t)k * dim + i];
            Lambda = fmax(Lambda, sqrt(a));
        }
        int active = 0;
        for (int j = 0; j < sim->surf.nbv; ++j) {
            const int k = sim->surf.bverts[j];
            const double *rk = r + (size_t)k * dim;
            double lam = 0.0, t2 = 0.0, gap = 0.0;
            for (int i = 0; i < dim; ++i) lam += nrm[i] * rk[i];
            for (int i = 0; i < dim; ++i) t2 += (rk[i] - lam * nrm[i]) * (rk[i] - lam * nrm[i]);
            for (int i = 0; i < dim; ++i) gap += sim->obstacles[0].normal[i] * (x[(size_t)k * dim + i] - sim->obstacles[0].point[i]);
            gap_min = fmin(gap_min, gap);
            w_gap = fmax(w_gap, -gap / G);
            if (sim->xv_body[k] == BOTTOM) lam_step += lam;
            if (Lambda == 0.0) continue;
            w_lam = fmax(w_lam, -lam / Lambda);
            w_cone = fmax(w_cone, (sqrt(t2) - mu * fmax(lam, 0.0)) / Lambda);
            w_compl = fmax(w_compl, fabs(lam * gap) / (Lambda * G));
            active += lam > 0.0;
        }
        /*   per vertex (J = I): contact_force = r_k / h, and a vertex with an impulse has its ground gap */
        ck_assert_int_eq(ct_model_vertex_fields(sim->model, &sim->ctx, x, &vf), CT_OK);
        ck_assert_uint_eq(vf.filled & (CT_VF_FORCE | CT_VF_GAP), CT_VF_FORCE | CT_VF_GAP);
        for (int k = 0; k < sim->nx; ++k) {
            double rk = 0.0, gk = 0.0;
            for (int i = 0; i < dim; ++i) {
                w_vf = fmax(w_vf, fabs(vf.force[k][i] - r[(size_t)k * dim + i] / h) / (Lambda > 0.0 ? Lambda / h : 1.0));
                rk += fabs(r[(size_t)k * dim + i]);
                gk += sim->obstacles[0].normal[i] * (x[(size_t)k * dim + i] - sim->obstacles[0].point[i]);
            }
            if (rk > 0.0) w_vgap = fmax(w_vgap, isnan(vf.gap[k]) ? INFINITY : fabs(vf.gap[k] - gk) / G);
            for (int i = 0; i < 3; ++i) ck_assert(isfinite(vf.force[k][i]));
            ck_assert(vf.beta[k] >= 0.0 && vf.beta[k] <= 1.0);
        }
        /*   the force report agrees with r per body, and is antisymmetric */
        ct_force_report_zero(&fr);
        ck_assert_int_eq(ct_model_forces(sim->model, &sim->ctx, x, &fr), CT_OK);
        double rabs = 0.0;
        for (int i = 0; i < sim->ndof; ++i) rabs += fabs(r[i]) / h;
        for (int b = 0; b < nb; ++b) {
            double rb[3] = {0, 0, 0}, rep[3] = {0, 0, 0}, e = 0.0;
            for (int a = 0; a < sim->nq; ++a)
                if (sim->qv_body[a] == b)
                    for (int i = 0; i < dim; ++i) rb[i] += r[(size_t)a * dim + i] / h;
            for (int p = 0; p < np; ++p)
                for (int cat = 0; cat < CT_FORCE_NCAT; ++cat)
                    for (int i = 0; i < dim; ++i) rep[i] += ct_force_report_at(&fr, b, p, cat)[i];
            for (int i = 0; i < dim; ++i) e = fmax(e, fabs(rep[i] - rb[i]));
            w_body = fmax(w_body, rabs > 0.0 ? e / rabs : e > 0.0 ? INFINITY : 0.0);
        }
        for (int cat = 0; cat < CT_FORCE_NCAT; ++cat)
            for (int a = 0; a < np; ++a)
                for (int b = a + 1; b < np; ++b)
                    for (int i = 0; i < dim; ++i) {
                        double f = ct_force_report_at(&fr, a, b, cat)[i] + ct_force_report_at(&fr, b, a, cat)[i];
                        w_anti = fmax(w_anti, rabs > 0.0 ? fabs(f) / rabs : f != 0.0 ? INFINITY : 0.0);
                    }
        if (c.m->guarantees & CT_GUARANTEE_INTERSECTION_FREE) ck_assert_int_eq(sim->last.intersections, 0);
        if (s == 0) lam_first = lam_step;
        lam_total += lam_step;
        contact_steps += lam_step > 0.0;
        max_active = active > max_active ? active : max_active;
        if (fail_step < 0 && (w_gap > tol || w_lam > tol || w_cone > tol || w_compl > tol)) fail_step = s;
    }
    ct_force_report_free(&fr);
    ct_vertex_fields_free(&vf);
    ct_diag_free(&d);
    free(on_surf);
    printf("constraint %s (mu = %g, tol %.0e): %d steps, the first would end %.3g mm behind the ground without "
           "contact; normal impulse on the bottom block %.6g N s in step 0, %.6g N s in all, %d steps with contact, "
           "up to %d vertices with lambda > 0, min gap %.3g m; worst (first failing step %d): lambda < 0 %.2e, "
           "friction cone %.2e, penetration %.2e, complementarity %.2e, report vs r per body %.2e, report "
           "antisymmetry %.2e, impulse away from contact %g; per vertex: force vs r/h %.2e, gap vs ground %.2e "
           "(%.2f s)\n",
           c.label, mu, tol, CONF_CSTEPS, -1e3 * free_gap, lam_first, lam_total, contact_steps, max_active, gap_min,
           fail_step, w_lam, w_cone, w_gap, w_compl, w_body, w_anti, top_r, w_vf, w_vgap, now() - t_start);
    fflush(stdout); /* before the assertions: a failing test keeps its line */
    /*   contact acts: a nonzero impulse from the first step, and no penetration */
    ck_assert_double_gt(lam_first, 0.0);
    ck_assert_int_gt(max_active, 0);
    ck_assert_double_le(w_gap, tol);
    /*   complementarity of the impulses, the friction cone */
    ck_assert_double_le(w_lam, tol);
    ck_assert_double_le(w_cone, tol);
    ck_assert_double_le(w_compl, tol);
    ck_assert(top_r == 0.0);
    /*   the report and the per-vertex fields (round-off) */
    ck_assert_double_le(w_body, 1e-12);
    ck_assert_double_le(w_anti, 1e-12);
    ck_assert_double_le(w_vf, 1e-12);
    ck_assert_double_le(w_vgap, 1e-12);
    case_close(&c);
}
END_TEST

static Suite *conformance_suite(void)
{
    Suite *s = suite_create("conformance");
    TCase *tc = tcase_create("scenes");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_registry_covered);
    tcase_add_loop_test(tc, test_scene_census, 0, 2 * NGEOM);
    suite_add_tcase(s, tc);
    TCase *tm = tcase_create("models");
    tcase_set_timeout(tm, 30);
    tcase_add_loop_test(tm, test_derivatives, 0, NCASES * NGEOM);
    tcase_add_loop_test(tm, test_max_step, 0, NCASES);
    tcase_add_loop_test(tm, test_no_force_beyond_reach, 0, NCASES);
    tcase_add_loop_test(tm, test_action_reaction, 0, NCASES);
    tcase_add_loop_test(tm, test_vertex_fields, 0, NCASES);
    tcase_add_loop_test(tm, test_invariance, 0, NCASES);
    tcase_add_loop_test(tm, test_determinism, 0, NCASES);
    tcase_add_loop_test(tm, test_constraint, 0, NCASES);
    suite_add_tcase(s, tm);
    return s;
}

CT_TEST_MAIN(conformance_suite)
