/* ct_model.h — the contact-model interface (DESIGN §3).
 *
 * A model type is a const table of function pointers with a name, a family, a state size and
 * a parameter table (the GSL "type struct" + SUNDIALS "optional ops" pattern). A model
 * instance (ct_model, below) is {type, state, params}: ct_model_create allocates
 * `state_size` zeroed bytes and calls init, ct_model_destroy always calls the type's destroy
 * (also after a failed init, so destroy must accept a partly initialised, zeroed state). The
 * core calls the ops only through the ct_model_* wrappers, which supply the defaults of NULL
 * ops (no energy, no force, max_step = 1, ...) and time the calls, in one place. A model never
 * sees the simulator object: everything it may use comes in the ct_step_ctx.
 *
 * Two families (ct_model_type.family, checked against the ops at create):
 *   energy family (ipc, ipc_adhesion, rcc_ipc, imls): energy / gradient / hessian / max_step
 *     in the full-space positions x; the core minimises the incremental potential with them
 *     and maps them to the unknowns q (J^T g, J^T H J). No `step` op.
 *   constraint family (lcp_pgs): a `step` op. The core assembles and factors
 *     A = M + h^2 K(x^n) on the free dofs and hands the model the linear system
 *     A v = b (+ r) with a multi-right-hand-side solve; the model returns the generalized
 *     contact impulse r = J_c^T lambda in q-space, and the core sets v^{n+1} = A^-1 (b + r),
 *     x^{n+1} = x^n + h v^{n+1}. No energy / gradient / hessian / max_step / update_lagged.
 *
 * Spaces and sizes. x-space: nx full-space vertices, arrays of nx*dim doubles, vertex k's
 * component c at [k*dim + c]. q-space: the unknowns, nq q-vertices, ndof = nq*dim doubles;
 * x = J q + x0 (ctx->dofs; J = I for ordinary bodies). Free dofs: the q-dofs not held by a
 * Dirichlet condition, nfree of them, listed in sys->free_dof. Forces and gradients in
 * x-space pull back to q-space by J^T (ct_dofs_pull); velocities push forward by J
 * (ct_dofs_map_lin).
 * layer: sim */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include <stddef.h>
#include "ct_status.h"
#include "ct_params.h"
#include "ct_dofs.h"
#include "ct_sparse.h"
#include "ct_mesh.h"
#include "ct_obstacle.h"

/* ---------- what the core tells a model ---------- */

/* Force categories reported by models (DESIGN §3). */
#define CT_FORCE_CATEGORY_LIST(X)                   \
    X(CT_FORCE_BARRIER, "barrier")                  \
    X(CT_FORCE_ADHESION_NORMAL, "adhesion_normal")  \
    X(CT_FORCE_ADHESION_TANGENTIAL, "adhesion_tangential") \
    X(CT_FORCE_FRICTION, "friction")

typedef enum {
#define CT_X_ENUM(k, n) k,
    CT_FORCE_CATEGORY_LIST(CT_X_ENUM)
#undef CT_X_ENUM
        CT_FORCE_NCAT
} ct_force_category;

const char *ct_force_category_name(ct_force_category c);
int ct_force_category_from_name(const char *name, ct_force_category *c);

/* The linearized implicit Euler step handed to a constraint-family model's step op
 * (Gascón et al. eq. 4-6). On the free dofs,
 *     A v^{n+1} = b + r,   A = M_q + h^2 K(x^n),   b = M_q v^n + h f(x^n),
 * with M_q = J^T M J, K the elastic stiffness (PSD-projected per element when
 * solver.project_psd), f = J^T f_ext - grad Psi, and the coupling to the prescribed
 * (Dirichlet) dofs, which move to their end-of-step targets (velocities in vq_free), included
 * in b. Without contact (r = 0) the step
 * would end with v_free = A^-1 b. The model returns r, the contact impulse (N s) in q-space,
 * and the core sets v^{n+1} = A^-1 (b + r) = v_free + A^-1 r on the free dofs. Valid during
 * the step op only. */
typedef struct ct_linear_system {
    int ndof;                   /* all q-dofs, nq*dim */
    int nfree;                  /* free q-dofs */
    const int *free_dof;        /* nfree: the q-dof of each free dof, ascending */
    const int *free_index;      /* ndof: the free index of a q-dof, -1 for a prescribed one */
    const ct_csc *A;            /* nfree x nfree, upper triangle: M_q + h^2 K(x^n) */
    const double *b;            /* nfree: M_q v^n + h f(x^n) (+ the prescribed dofs' coupling) */
    const double *v_free;       /* nfree: A^-1 b, the free dofs' velocity without contact (m/s) */
    const double *vq_free;      /* ndof: the same in q-space; the prescribed dofs at their scripted
                                   velocities (target - q^n) / h */
    const double *vx_free;      /* nx*dim: J vq_free, every full-space vertex's velocity without
                                   contact; x^n + h vx_free is the unconstrained motion */
    /* Y = A^-1 B for nrhs right-hand sides at once against the step's factor: B and Y are
     * nfree x nrhs, column-major (column j at [j*nfree]); Y may equal B. For the Delassus
     * operator J_c A^-1 J_c^T of m contacts, one call with nrhs = m (or a few, in blocks). */
    ct_status (*solve)(const struct ct_linear_system *sys, int nrhs, const double *B, double *Y);
    void *impl;                 /* the core's, for solve */
    ct_diag *diag;              /* where the step op may add messages (the core adds the step's) */
} ct_linear_system;

typedef struct ct_step_ctx {
    int dim;
    int step;                   /* index of the step being taken (0-based) */
    double t;                   /* time at the start of the step */
    double h;                   /* time step */
    int nx;                     /* number of full-space vertices */
    const double *x_rest;       /* nx*dim rest positions */
    const double *x_prev;       /* nx*dim: x^n */
    const double *v_prev;       /* nx*dim: v^n */
    const double *mass;         /* nx lumped vertex masses (full space) */
    const int *vert_part;       /* nx: participant index (= body index) of each vertex */
    const unsigned char *vert_kinematic; /* nx: 1 if the vertex is fully prescribed */
    int nbodies;                /* participants 0..nbodies-1 are bodies */
    int nobstacles;             /* participants nbodies..nbodies+nobstacles-1 are obstacles */
    const char *const *part_names; /* nbodies+nobstacles names */
    const double *part_young;   /* nbodies+nobstacles Young's moduli (Pa); NAN for kinematic
                                   bodies and obstacles (no material) */
    const ct_obstacle *obstacles;
    const ct_surface *surf;     /* contact surface of all bodies, indices into x */
    const ct_dofs *dofs;        /* x = J q + x0 (ct_dofs_pull: x-space -> q-space) */
    double bbox_diag;           /* diagonal of the scene's rest bounding box (m) */
    double newton_tol_v;        /* Newton may stop on |p|_inf / h < this (m/s) alone; 0 when it
                                   cannot: the static integrator, or solver.force_tol > 0 (Newton
                                   also needs the forces balanced, core/sim/newton.c). Models
                                   whose stiff branches need resolving check it */
    int threads;
    int exact_hessian;          /* set by the core per Newton iteration: 1 asks hessian() for the
                                   exact Hessian of the contact terms, without the per-term PSD
                                   projection (the core checks that the assembled matrix is
                                   positive definite and otherwise asks again with 0); a model
                                   without an exact Hessian may ignore it. 0 asks for the safe
                                   model: PSD, and where a term's exact curvature underestimates
                                   it far from the solution, a majorizing one (IPC friction along
                                   the slip, ct_friction_hessian_majorizer) */
} ct_step_ctx;

/* Per-category forces between participants: force[(a*np + b)*CT_FORCE_NCAT + cat][0..2]
 * is the force (N) on participant a exerted by participant b. */
typedef struct ct_force_report {
    int np;                      /* participants */
    double (*force)[3];          /* np*np*CT_FORCE_NCAT 3-vectors (z = 0 in 2D) */
    int *active_pairs;           /* np*np: contact pairs active between a and b */
    int *bonded_pairs;           /* np*np */
    int nscalars;                /* model-specific scalars (e.g. "beta_mean", "pgs_residual") */
    const char **scalar_names;   /* report-owned array of pointers to model-owned strings */
    double *scalars;
} ct_force_report;

ct_status ct_force_report_init(ct_force_report *r, int np, int nscalars);
void ct_force_report_free(ct_force_report *r);
void ct_force_report_zero(ct_force_report *r);
/* Pointer to the 3-vector for (a, b, cat). */
double *ct_force_report_at(ct_force_report *r, int a, int b, ct_force_category cat);

/* Per-vertex contact fields at positions x, for the frames of the run log and the VTK export
 * (the vertex_fields op below, ct_model_vertex_fields). Arrays over the nx full-space vertices;
 * ct_vertex_fields_reset gives every field its "no contact" value, and the op overwrites what it
 * knows and sets the field's bit in `filled`:
 *   force  N: the contact force on the vertex (z = 0 in 2D). Energy family: −∂E_contact/∂x_k at x
 *          (barrier, adhesion and friction, with the model's lagged state of the step just
 *          taken); constraint family: the last step's contact impulse on the vertex / h.
 *          Summed over a body's vertices it is the force report's resultant on that body.
 *   gap    m: the smallest contact distance of the vertex's active contact terms (the terms the
 *          model evaluates at x: within its reach), signed where the model allows penetration;
 *          NAN where the vertex is in none (not +INF: NaN is what ParaView leaves out of colour
 *          ranges).
 *   beta   1: the adhesion intensity β ∈ [0, 1] of the vertex's bonds (the largest of its pairs);
 *          0 where it has none. Only models with a per-pair β (rcc_ipc, lcp_pgs with adhesion). */
enum { CT_VF_FORCE = 1u << 0, CT_VF_GAP = 1u << 1, CT_VF_BETA = 1u << 2 };

typedef struct ct_vertex_fields {
    int nx;
    unsigned filled;     /* CT_VF_* of the fields set (the same set at every call of a run) */
    double (*force)[3];  /* nx */
    double *gap;         /* nx */
    double *beta;        /* nx */
    double *work;        /* nx*3 doubles of scratch for the core (the force fallback) */
} ct_vertex_fields;

ct_status ct_vertex_fields_init(ct_vertex_fields *f, int nx);
void ct_vertex_fields_free(ct_vertex_fields *f);
/* force 0, gap NAN, beta 0, filled 0 */
void ct_vertex_fields_reset(ct_vertex_fields *f);
/* gap[v] = min(gap[v], d) (a NAN gap takes d) */
void ct_vertex_fields_gap_min(ct_vertex_fields *f, int v, double d);

/* Diagnostics of one step filled by the model's end_step (optional). */
typedef struct ct_model_stats {
    long n_candidates;   /* pairs considered by the broad phase */
    long n_active;       /* pairs with nonzero contact energy */
    double min_distance; /* smallest contact distance (m), INFINITY if none */
    double ccd_alpha_min;/* smallest max_step result of the step */
    double t_broadphase, t_ccd, t_pairs; /* seconds spent in model work this step */
} ct_model_stats;

/* ---------- the model type ---------- */

typedef enum { CT_FAMILY_ENERGY, CT_FAMILY_CONSTRAINT } ct_model_family;
const char *ct_model_family_name(ct_model_family f); /* "energy", "constraint" */

/* What a model promises (ct_model_type.guarantees; the conformance suite checks each). */
enum {
    /* no step ever ends with intersecting surfaces (IPC's barrier + CCD); without it the
       intersection verifier's count is a metric, not an invariant */
    CT_GUARANTEE_INTERSECTION_FREE = 1u << 0
};

typedef struct ct_model_type {
    const char *name;
    const char *summary;            /* one line for `contactlab models` */
    ct_model_family family;
    unsigned guarantees;            /* CT_GUARANTEE_* */
    size_t state_size;
    const ct_param_spec *params;    /* table ending with {NULL} */

    /* p: the instance's parameters, in the order of `params`. "auto" entries have p->is_auto
     * set and value NAN on entry; the model writes the number it chose into p->value (the core
     * logs the resolved numbers), or leaves NAN where the rule gives no single number (a
     * per-pair rule, or the parameter is unused). The context's x_prev / v_prev are the
     * initial state. */
    ct_status (*init)(void *st, const ct_step_ctx *c, ct_params *p, ct_diag *diag);
    /* Called exactly once per create, also after init failed (st is then partly set up: zeroed
     * where init did not reach). */
    void (*destroy)(void *st);
    /* Before the step from c->t: x^n = c->x_prev, v^n = c->v_prev. */
    ct_status (*begin_step)(void *st, const ct_step_ctx *c);

    /* energy family. x: nx*dim positions. E: the contact potential (J, no h^2); g: += its
     * gradient, nx*dim (x-space); H: appended triplets of its Hessian over x-dofs (index
     * k*dim + c), PSD, full blocks. Within a step (and between update_lagged calls) E must be a
     * function of x alone: the Newton loop reuses the energy of the accepted line-search point
     * as the next iteration's. */
    ct_status (*energy)(void *st, const ct_step_ctx *c, const double *x, double *E);
    ct_status (*gradient)(void *st, const ct_step_ctx *c, const double *x, double *g);
    ct_status (*hessian)(void *st, const ct_step_ctx *c, const double *x, ct_triplets *H);
    /* optional: gradient and hessian at the same x in one call (g += ∇E, H += the triplets hessian()
     * appends, c->exact_hessian as for hessian()), for a model whose Hessian pass yields the gradient
     * on the way. The core uses it where it asks for both (the Newton matrix of every iteration,
     * ct_step_assemble_factor); the results must equal those of the two calls. */
    ct_status (*gradient_hessian)(void *st, const ct_step_ctx *c, const double *x, double *g, ct_triplets *H);
    /* largest alpha in (0, 1] such that x + a dx (dx: nx*dim) is safe for all a in [0, alpha] */
    ct_status (*max_step)(void *st, const ct_step_ctx *c, const double *x, const double *dx,
                          double *alpha);
    /* called after a converged Newton solve when the model lags state inside a step
     * (fixed-point friction iterations); returns the change measure in *delta */
    ct_status (*update_lagged)(void *st, const ct_step_ctx *c, const double *x, double *delta);
    /* optional: second-order correction of a line-search trial point. x: the Newton iterate,
     * dx: the Newton direction (nx*dim, x-space), x_trial = x + alpha dx on entry. The model may
     * move x_trial (in place) to restore what the curvature of its constraints took from the
     * linearized step (e.g. a contact distance that a large tangential step closed again,
     * ct_collision_correct_trial) and sets *changed = 1 if it did. The core keeps the corrected
     * point only if it is safe (max_step from x towards it is 1) and lowers the incremental
     * potential below the plain trial's (core/sim/newton.c, solver.second_order_correction). */
    ct_status (*correct_trial)(void *st, const ct_step_ctx *c, const double *x, const double *dx, double alpha,
                               double *x_trial, int *changed);

    /* constraint family: the linearized step (ct_linear_system above). r: ndof doubles in
     * q-space, zeroed by the core; the model writes the contact impulse J_c^T lambda (N s) into
     * it. Its free entries enter v^{n+1} = A^-1 (b + r); its prescribed entries are the impulse
     * the contacts exert on Dirichlet-held dofs (booked in the reactions). */
    ct_status (*step)(void *st, const ct_step_ctx *c, const ct_linear_system *sys, double *r);

    /* After the step: x_next = x^{n+1} (nx*dim); c->t is the end time. */
    ct_status (*end_step)(void *st, const ct_step_ctx *c, const double *x_next, ct_model_stats *stats);
    /* every model: forces by category at positions x (after the step). On entry
     * out->nscalars is the capacity of scalar_names/scalars; the op sets it to the number
     * it fills (the same every call) and stores in scalar_names[k] pointers to its own
     * strings (the array itself belongs to the report). A constraint model reports the
     * forces of its last step's impulses (lambda / h). */
    ct_status (*forces)(void *st, const ct_step_ctx *c, const double *x, ct_force_report *out);
    /* optional, either family: per-vertex contact fields at x after the step (ct_vertex_fields
     * above; out arrives reset, the op sets what it fills and its bits in out->filled, the same
     * bits at every call). An energy model may leave force to the core (below); gap and beta are
     * the model's alone. */
    ct_status (*vertex_fields)(void *st, const ct_step_ctx *c, const double *x, ct_vertex_fields *out);
} ct_model_type;

/* The type's family agrees with the ops it sets: an energy model sets no `step` and sets
 * energy, gradient and hessian together or none of them (gradient_hessian only with them); a constraint model sets `step` and
 * none of energy / gradient / hessian / max_step / update_lagged / correct_trial. CT_EINPUT with a message
 * naming the op otherwise. forces, vertex_fields, begin_step, end_step: either family. */
ct_status ct_model_type_check(const ct_model_type *t, ct_diag *diag);

/* ---------- model instances ---------- */

/* Wall time (s) spent in the instance's ops since create, by kind. */
typedef struct ct_model_timing {
    double contact; /* init, begin_step, energy, gradient, hessian, update_lagged, correct_trial */
    double ccd;     /* max_step */
    double step;    /* the constraint family's step op */
    double output;  /* forces, vertex_fields: evaluations for the log, between steps */
} ct_model_timing;

typedef struct ct_model {
    const ct_model_type *type;
    void *state;                /* type->state_size zeroed bytes (NULL if 0) */
    ct_params params;           /* the instance's own copy; auto entries resolved by init */
    int ready;                  /* init succeeded */
    ct_model_timing time;
} ct_model;

/* Check the type (ct_model_type_check), copy the parameters, allocate the state and call
 * init. On failure *m is NULL and everything is released (destroy called). */
ct_status ct_model_create(ct_model **m, const ct_model_type *t, const ct_params *p, const ct_step_ctx *c,
                          ct_diag *diag);
void ct_model_destroy(ct_model *m);

/* The ops through one door: NULL ops get their defaults (energy 0, no gradient or Hessian
 * terms, alpha = 1, delta = 0, no trial correction, no stats, zero forces, no vertex fields but
 * an energy model's force; `step` without the op is CT_ENOTSUP),
 * and the wall time goes into m->time. Failures of the op are returned as they are. */
ct_status ct_model_begin_step(ct_model *m, const ct_step_ctx *c);
ct_status ct_model_energy(ct_model *m, const ct_step_ctx *c, const double *x, double *E);
ct_status ct_model_gradient(ct_model *m, const ct_step_ctx *c, const double *x, double *g);
ct_status ct_model_hessian(ct_model *m, const ct_step_ctx *c, const double *x, ct_triplets *H);
/* gradient and hessian at the same x: the model's gradient_hessian op, or the two ops in turn */
ct_status ct_model_gradient_hessian(ct_model *m, const ct_step_ctx *c, const double *x, double *g, ct_triplets *H);
ct_status ct_model_max_step(ct_model *m, const ct_step_ctx *c, const double *x, const double *dx, double *alpha);
ct_status ct_model_update_lagged(ct_model *m, const ct_step_ctx *c, const double *x, double *delta);
ct_status ct_model_correct_trial(ct_model *m, const ct_step_ctx *c, const double *x, const double *dx, double alpha,
                                 double *x_trial, int *changed);
ct_status ct_model_step(ct_model *m, const ct_step_ctx *c, const ct_linear_system *sys, double *r);
ct_status ct_model_end_step(ct_model *m, const ct_step_ctx *c, const double *x_next, ct_model_stats *stats);
ct_status ct_model_forces(ct_model *m, const ct_step_ctx *c, const double *x, ct_force_report *out);
/* Per-vertex contact fields at x (out: ct_vertex_fields_init'ed for c->nx): reset, the model's
 * vertex_fields op if set, and for an energy model with a gradient whose op left force unfilled
 * (or that has no op) force = −∇E_contact(x) from its gradient op. out->filled == 0: the model
 * has no per-vertex contact fields ("none"). */
ct_status ct_model_vertex_fields(ct_model *m, const ct_step_ctx *c, const double *x, ct_vertex_fields *out);
/* 1 if the model keeps lagged state inside a step (sets update_lagged) */
int ct_model_has_lagged(const ct_model *m);
const char *ct_model_name(const ct_model *m);

/* The registry: models/registry.c defines this NULL-terminated list. */
extern const ct_model_type *const ct_model_registry[];
const ct_model_type *ct_model_find(const char *name);

/* The built-in model "none" (no contact), part of the core. */
extern const ct_model_type ct_model_none;

#endif
