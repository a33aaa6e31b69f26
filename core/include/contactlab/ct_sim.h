/* ct_sim.h — the time-stepping core (DESIGN §2).
 *
 * A ct_sim owns the state of a scene: unknowns q and their velocities, the full-space
 * positions x = J q + x0, masses, elastic elements, Dirichlet data, loads, the contact
 * model instance and the linear solver. One step of an energy-family model minimises the
 * incremental potential
 *     E(q) = 1/2 |q - q~|^2_{M_q} + h^2 ( Psi(q) - f_ext . x(q) + P_contact(x(q)) + E_springs(x(q)) ),
 *     q~ = q^n + h v^n,  M_q = J^T M J,
 * by projected Newton (CHOLMOD, symbolic analysis reused) with a backtracking line search
 * whose first trial is capped by the model's max_step. The struct is public so drivers
 * and tests can look inside; change it only through the functions below.
 * layer: sim */
#ifndef CT_SIM_H
#define CT_SIM_H

#include "ct_dofs.h"
#include "ct_linsolve.h"
#include "ct_material.h"
#include "ct_mesh.h"
#include "ct_model.h"
#include "ct_scene.h"
#include "ct_sparse.h"

struct ct_assembly;

typedef struct ct_step_stats {
    int newton_iters;
    int line_search_iters;      /* halvings summed over the step */
    int line_search_doublings;  /* doublings of whole Newton steps along flat directions (newton.c) */
    int friction_iters;         /* outer lagged-state passes */
    int exact_iters;            /* Newton iterations on the exact (unprojected) Hessian */
    int exact_fallbacks;        /* exact Hessians found indefinite (then projected) */
    int corrections;            /* Newton iterations whose accepted line-search point was the
                                   model's second-order correction of the trial */
    double residual;            /* last |p|_inf / h (static: |p|_inf) */
    double force_residual;      /* last force imbalance |r|_1 / F (newton.c: the force test) */
    double force_scale;         /* F (N) at the last Newton iterate: sum over vertices of |f_ext| +
                                   |f_contact| + |M a| + reactions (newton.c) */
    double energy;              /* incremental potential at the solution */
    double ccd_alpha_min;       /* smallest max_step result (1 if none) */
    long n_candidates, n_active;
    double min_distance;
    int intersections;          /* intersecting surface primitive pairs after the step (exact
                                   verifier, ct_intersect.h); -1 when solver.verify is off */
    long n_analyses;            /* symbolic analyses so far (cumulative) */
    double wall;                /* seconds for the step */
    /* Seconds per phase. The first nine are disjoint parts of the step (their sum is the step's
     * wall time up to bookkeeping): t_assembly the core's gradient and matrix gather (without
     * the model's calls and the contact mapping), t_projection the element Hessians with their
     * PSD projection, t_analysis / t_factor / t_solve CHOLMOD, t_line_search the line search's
     * own work (without max_step and the model's energies), t_contact the wall time of the
     * model's energy / gradient / Hessian / begin_step / update_lagged calls, t_ccd that of
     * max_step (the model's CCD, broad phase included), t_contact_assembly the mapping of the
     * model's Hessian triplets into the Newton matrix (pattern growth included). t_broadphase
     * and t_model are the model's own accounts of its broad phase and pair work (end_step);
     * they overlap t_contact + t_ccd. t_verify: the intersection verifier after the step. */
    double t_assembly, t_projection, t_analysis, t_factor, t_solve, t_line_search;
    double t_contact, t_ccd, t_contact_assembly;
    double t_broadphase, t_model, t_verify;
} ct_step_stats;

typedef struct ct_body {
    char *name;
    int kinematic;              /* surface-only or fully prescribed */
    int embedded;
    ct_mesh mesh;               /* the mesh contact sees (x), rest positions transformed */
    ct_mesh coarse;             /* embedded: the mesh carrying q */
    ct_surface surf;            /* boundary of `mesh`, local indices */
    int x_off, nx;              /* range of full-space vertices */
    int q_off, nq;              /* range of reduced vertices */
} ct_body;

typedef struct ct_sim {
    const ct_scene *sc;
    int dim, nb;
    ct_body *bodies;
    ct_dofs dofs;
    int nx, nq, ndof;
    double *X;                  /* nx*dim rest positions (full space) */
    double *Q;                  /* nq*dim rest positions of the unknowns */
    double *x, *x_prev, *vx;    /* full space: current, previous, velocity */
    double *q, *vq, *q_prev, *q_tilde;
    double *mass_x;             /* nx lumped masses */
    double *vol_x;              /* nx lumped volumes (for load weights) */
    ct_triplets Mq;             /* vertex-level M_q = J^T M J (entries (a,b,m), summed) */
    ct_csc Mq_csc;              /* the same, compressed (nq x nq, full symmetric) */
    ct_elastic el;
    unsigned char *fixed;       /* ndof */
    int *qv_dirichlet;          /* nq: index of the Dirichlet spec (body-local) or -1 */
    int *qv_body;               /* nq: body of each q-vertex */
    int *xv_body;               /* nx */
    unsigned char *xv_kinematic;
    double *f_ext;              /* nx*dim external force (gravity + loads) at the step's end time */
    double *load_w;             /* per (body, load, x-vertex) normalised weights, flattened */
    int *load_off;              /* start of each load's weights in load_w */
    ct_surface surf;            /* all bodies, global x indices */
    ct_obstacle *obstacles;
    const char **part_names;
    double *part_young;         /* per participant, for the step context */
    double bbox_diag;
    /* the contact model: an instance of the scene's model type (ct_model.h) */
    ct_model *model;
    ct_step_ctx ctx;
    double *r_contact;          /* ndof: the constraint family's last contact impulse (N s), q-space */
    /* springs (sc->springs): the global x-vertex of end a and of end b of spring i at
     * spring_v[2 i], spring_v[2 i + 1]; their energy is a potential of the incremental
     * potential like the elastic one (core/sim/springs.c) */
    int nsprings;
    int *spring_v;
    /* solver */
    struct ct_assembly *as;     /* the Newton matrix on the free dofs (private: sim/assemble.h) */
    ct_linsolve *ls;
    double *g, *p, *pq, *px, *gx, *rhs, *q_trial, *x_trial, *g_trial; /* work vectors */
    double *q_soc, *dq_soc, *x_soc; /* the line search's second-order correction (newton.c) */
    /* Set by every gradient evaluation (ct_step_ip_gradient) for the force test of newton.c:
     * the force scale F (N). */
    double force_scale;
    double elastic_scale;       /* ct_elastic_term_scale of el (J): part of E's round-off level */
    double t;
    int step;
    int nsteps;                 /* ceil(duration / dt) */
    ct_step_stats last;
    int threads;
    /* for the sensitivities (ct_sensitivity.h): the last ct_sim_step returned CT_OK (its state is a
     * converged step), and `ls` holds the factor of the exact Hessian on the free dofs at the
     * current q and lagged state, with as->Hloc and as->hc its element and contact parts
     * (set by ct_step_assemble_factor, cleared when q, the targets or the lagged state move) */
    int last_ok;
    int factor_exact;
    /* For newton.c's exact start: the last matrix factored for a Newton direction was the exact
     * Hessian (positive definite); the last step's line searches all took the whole Newton step. */
    int matrix_exact, newton_whole;
    /* The incremental potential at the solve's end point, if the solve evaluated it there with the
     * lagged state the step ends with (end_energy_known): the step's logged energy. */
    double end_energy;
    int end_energy_known;
} ct_sim;

/* Build everything the scene describes: meshes (generated or read, transformed,
 * validated), the embedding, masses, elastic elements, Dirichlet data, loads, the model.
 * Bad meshes and scenes give CT_EINPUT with messages. */
ct_status ct_sim_create(ct_sim **sim, const ct_scene *sc, ct_diag *diag);
void ct_sim_destroy(ct_sim *sim);

/* Advance one step. CT_ENOCONV / CT_ENOTPD / ... with a message naming the step,
 * the Newton iteration and the residual when it fails. */
ct_status ct_sim_step(ct_sim *sim, ct_diag *diag);

/* Peak memory of a simulation per volume element, roughly: `contactlab check` on box and rect grids
 * measured 3.6 kB of resident memory per tetrahedron and 1.3 kB per triangle (20³–30³ and 100²–200²
 * cells). A scene whose elements need more than the machine's memory is refused before it is built
 * (the parser for generated grids, ct_sim_create for meshes read from files). */
enum { CT_SIM_BYTES_PER_TET = 4096, CT_SIM_BYTES_PER_TRI = 1536 };
/* The machine's physical memory in bytes (0 if unknown). */
double ct_machine_memory(void);

/* For programs (called once at start, before any allocation that matters): keep freed heap
 * memory in the process instead of returning it to the system (glibc: M_TRIM_THRESHOLD 1 GiB,
 * M_MMAP_THRESHOLD 32 MiB), so that the per-iteration work arrays — CHOLMOD's factorization
 * workspace, contact Hessians, gather lists — are not page-faulted in anew at every Newton
 * iteration. No effect with other C libraries or when CT_MALLOC_DEFAULT is set in the
 * environment (for A/B timing). Returns 1 if applied. */
int ct_tune_allocator(void);

/* The incremental potential of the last step (its q~, loads and lagged model state) at
 * an arbitrary q: E and, if g != NULL, its gradient over all q dofs. For derivative tests
 * and drivers. */
ct_status ct_sim_ip_eval(ct_sim *sim, const double *q, double *E, double *g);
/* Its Hessian on the free dofs (upper triangle, CSC over free-dof indices sim->as->free_dof),
 * PSD-projected per element and per spring when `project`; returns a pointer to the assembled
 * matrix. */
ct_status ct_sim_ip_hessian(ct_sim *sim, const double *q, int project, const ct_csc **A, ct_diag *diag);

/* The free dofs (not Dirichlet-held) and the last assembled Newton matrix on them (upper
 * triangle, CSC over free-dof indices). */
int ct_sim_nfree(const ct_sim *sim);
const int *ct_sim_free_dofs(const ct_sim *sim);
const ct_csc *ct_sim_newton_matrix(const ct_sim *sim);

/* Energies (J) at the current state. */
double ct_sim_kinetic_energy(const ct_sim *sim);
double ct_sim_elastic_energy(const ct_sim *sim);
double ct_sim_gravity_energy(const ct_sim *sim);   /* -sum m g.x */
double ct_sim_external_energy(const ct_sim *sim);  /* -f_loads . x */
double ct_sim_contact_energy(ct_sim *sim);          /* model energy (no h^2) */
double ct_sim_spring_energy(const ct_sim *sim);     /* sum of the springs' 1/2 k (|x_a - x_b| - L)^2 */

/* The force (N, dim) spring i exerts on its end a at the current state: -dE/dx_a (on b: the
 * opposite). */
void ct_sim_spring_force(const ct_sim *sim, int i, double *f);

/* One spring E = 1/2 k (|x_a - x_b| - L)^2 between the points xa, xb (dim 2 or 3): returns E;
 * g (2 dim, may be NULL) receives dE/d(x_a, x_b); H (2 dim x 2 dim column-major, may be NULL)
 * the Hessian, exact when !project, else its PSD projection (analytic: the transverse eigenvalue
 * k (1 - L/r), negative when the spring is compressed below L, clamped at 0). With L = 0 the
 * Hessian is k [I -I; -I I] exactly (PSD). At r = |x_a - x_b| = 0 with L > 0 the direction is
 * undefined: g = 0 and H = k [I -I; -I I] there (a regularisation). */
double ct_spring_eval(int dim, const double *xa, const double *xb, double k, double L, int project, double *g,
                      double *H);

/* Reaction force (N) of the Dirichlet conditions on the q-vertices of body `body`
 * selected by `sel` (all fixed ones when sel is NULL): out[dim]. Valid after a step. */
void ct_sim_reaction(ct_sim *sim, const ct_selector *sel, double *out);

/* Vertex selection on a body's rest positions. `on_q` selects among the body's
 * q-vertices (Dirichlet, reaction), otherwise among its x-vertices (loads, probes).
 * Returns a malloc'ed list of global vertex indices and its length. */
ct_status ct_sim_select(const ct_sim *sim, const ct_selector *sel, int on_q, int **idx, int *n);

/* Scripted Dirichlet position of a q-vertex with rest position X at time t. */
void ct_motion_eval(const ct_dirichlet *d, int dim, const double *X, double t, double *out);

/* Its exact derivative dout (dim) with respect to one number of the motion: segment `seg`'s
 * velocity[comp] (field CT_MOTION_VELOCITY), its angular velocity (CT_MOTION_OMEGA; comp unused)
 * or its center[comp] (CT_MOTION_CENTER), by forward-mode differentiation of ct_motion_eval. */
typedef enum { CT_MOTION_VELOCITY, CT_MOTION_OMEGA, CT_MOTION_CENTER } ct_motion_field;
void ct_motion_eval_tangent(const ct_dirichlet *d, int dim, const double *X, double t, int seg,
                            ct_motion_field field, int comp, double *dout);

#endif
