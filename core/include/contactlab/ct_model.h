/* ct_model.h — the contact-model interface (DESIGN §3).
 *
 * A model is a const table of function pointers with a name, a state size and a
 * parameter table (the GSL "type struct" + SUNDIALS "optional ops" pattern). The core
 * allocates `state_size` zeroed bytes, calls the ops, and supplies a default where an op
 * is NULL (no energy, no force, max_step = 1, ...). A model never sees the simulator
 * object: everything it may use comes in the ct_step_ctx.
 *
 * Two families:
 *   energy family (ipc_adhesion, rcc_ipc, imls): energy/gradient/hessian/max_step in the
 *     full-space positions x; the core maps them to the unknowns q (J^T g, J^T H J).
 *   constraint family (lcp_pgs): a `step` op that receives the linearized system and
 *     returns the next velocities.
 * layer: sim */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include <stddef.h>
#include "ct_status.h"
#include "ct_params.h"
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

/* Linearized system handed to a constraint-family model's step op. All vectors are in
 * q-space (the unknowns), size nq*dim; fixed (Dirichlet) dofs are flagged. */
typedef struct ct_linear_system {
    int ndof;                  /* nq*dim */
    const ct_csc *A;           /* M + h^2 K(x^n) (upper triangle), all dofs */
    const double *rhs;         /* M v^n + h f(x^n) (momentum form: A v^{n+1} = rhs without contact) */
    const unsigned char *fixed;/* ndof flags */
    const double *v_fixed;     /* prescribed velocities of fixed dofs */
    /* Solve A y = b on the free dofs (fixed dofs of y set to 0); reuses the factorization. */
    ct_status (*solve)(void *solver, const double *b, double *y);
    void *solver;
    /* x = J q + x0 mapping: vertex k of x has J row entries jcol[jptr[k]..jptr[k+1]) with
     * weights jw[...] (one weight per vertex pair, applied to every component). */
    const int *jptr, *jcol;
    const double *jw;
} ct_linear_system;

typedef struct ct_step_ctx {
    int dim;
    int step;                   /* index of the step being taken (0-based) */
    double t;                   /* time at the start of the step */
    double h;                   /* time step */
    int nx;                     /* number of full-space vertices */
    const double *x_rest;       /* nx*dim rest positions */
    const double *x_prev;       /* x^n */
    const double *v_prev;       /* v^n (full space) */
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
    double bbox_diag;           /* diagonal of the scene's rest bounding box (m) */
    double newton_tol_v;        /* Newton stops when |p|_inf / h < this (m/s); 0 for the static
                                   integrator (models whose stiff branches need resolving check it) */
    int threads;
    const ct_linear_system *sys; /* constraint family only; NULL otherwise */
} ct_step_ctx;

/* Per-category forces between participants: force[(a*np + b)*CT_FORCE_NCAT + cat][0..2]
 * is the force (N) on participant a exerted by participant b. */
typedef struct ct_force_report {
    int np;                      /* participants */
    double (*force)[3];          /* np*np*CT_FORCE_NCAT */
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

/* Diagnostics of one step filled by the model's end_step (optional). */
typedef struct ct_model_stats {
    long n_candidates;   /* pairs considered by the broad phase */
    long n_active;       /* pairs with nonzero contact energy */
    double min_distance; /* smallest contact distance (m), INFINITY if none */
    double ccd_alpha_min;/* smallest max_step result of the step */
    double t_broadphase, t_ccd, t_pairs; /* seconds spent in model work this step */
} ct_model_stats;

/* ---------- the model type ---------- */

typedef struct ct_model_type {
    const char *name;
    const char *summary;            /* one line for `contactlab models` */
    size_t state_size;
    const ct_param_spec *params;    /* table ending with {NULL} */

    ct_status (*init)(void *st, const ct_step_ctx *c, const ct_params *p, ct_diag *diag);
    void (*destroy)(void *st);
    ct_status (*begin_step)(void *st, const ct_step_ctx *c);

    /* energy family: E, g (+=, full-space dofs), H (appended triplets, PSD, full blocks).
     * Within a step (and between update_lagged calls) E must be a function of x alone: the
     * Newton loop reuses the energy of the accepted line-search point as the next iteration's. */
    ct_status (*energy)(void *st, const ct_step_ctx *c, const double *x, double *E);
    ct_status (*gradient)(void *st, const ct_step_ctx *c, const double *x, double *g);
    ct_status (*hessian)(void *st, const ct_step_ctx *c, const double *x, ct_triplets *H);
    /* largest alpha in (0, 1] such that x + a dx is safe for all a in [0, alpha] */
    ct_status (*max_step)(void *st, const ct_step_ctx *c, const double *x, const double *dx,
                          double *alpha);
    /* called after a converged Newton solve when the model lags state inside a step
     * (fixed-point friction iterations); returns the change measure in *delta */
    ct_status (*update_lagged)(void *st, const ct_step_ctx *c, const double *x, double *delta);

    /* constraint family */
    ct_status (*step)(void *st, const ct_step_ctx *c, double *v_next);

    ct_status (*end_step)(void *st, const ct_step_ctx *c, const double *x_next, ct_model_stats *stats);
    /* every model: forces by category at positions x (after the step). On entry
     * out->nscalars is the capacity of scalar_names/scalars; the op sets it to the number
     * it fills (the same every call) and stores in scalar_names[k] pointers to its own
     * strings (the array itself belongs to the report). */
    ct_status (*forces)(void *st, const ct_step_ctx *c, const double *x, ct_force_report *out);
} ct_model_type;

/* The registry: models/registry.c defines this NULL-terminated list. */
extern const ct_model_type *const ct_model_registry[];
const ct_model_type *ct_model_find(const char *name);

/* The built-in model "none" (no contact), part of the core. */
extern const ct_model_type ct_model_none;

#endif
