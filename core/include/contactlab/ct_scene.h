/* ct_scene.h — scenes: the strict JSON input (DESIGN §5) parsed into plain C structs.
 *
 * Parsing reports every problem it finds as "FILE: /json/path: message" into a ct_diag
 * and returns CT_EINPUT; nothing asserts on bad input. The resolved scene (defaults
 * filled in, overrides applied) is kept as JSON text for the output file.
 * layer: sim */
#ifndef CT_SCENE_H
#define CT_SCENE_H

#include "ct_status.h"
#include "ct_material.h"
#include "ct_model.h"

/* ---- selections of vertices ---- */
typedef enum { CT_SEL_ALL, CT_SEL_SIDE, CT_SEL_BOX, CT_SEL_INDICES } ct_select_kind;

typedef struct ct_selector {
    int body;            /* body index; -1 = every body (probes only) */
    ct_select_kind kind;
    int axis, sign;      /* SIDE: axis 0..2 and +1/-1 ("+y" -> axis 1, sign +1) */
    double tol;          /* SIDE: vertices within tol * (body extent along axis) of the extreme */
    double lo[3], hi[3]; /* BOX: inclusive bounds (rest positions) */
    int *indices;        /* INDICES: vertex indices of the body's mesh */
    int nindices;
    int allow_empty;     /* selecting no vertex is what the scene means (else an input error) */
} ct_selector;

/* ---- scripted Dirichlet motion: piecewise rigid motion ----
 * Segment k is active from the end of segment k-1 (or t = 0) until `until`; during it
 * the selected vertices move rigidly with translation velocity `velocity` and angular
 * velocity `omega` (rad/s) about `axis` (3D; 2D: about z) through `center`, where the
 * centre itself travels with `velocity`. After the last segment the vertices stay put. */
typedef struct ct_motion_segment {
    double until;
    double velocity[3];
    double omega;
    double axis[3];
    double center[3];
} ct_motion_segment;

typedef struct ct_dirichlet {
    ct_selector sel;
    int nseg;
    ct_motion_segment *seg;
} ct_dirichlet;

/* ---- loads: per-vertex forces ----
 * Amplitude F(t) = force + force_rate * min(t, ramp_until) (N). Per-vertex force
 * f_i = F(t) * w_i / sum_j w_j * s_i, with w_i the vertex weight (lumped volume, surface
 * area or 1) and s_i = 1 (uniform) or (X_i[axis] - center) / length (linear). The surface area
 * of "area" is that of the selected faces (a boundary face counts when all its vertices are
 * selected, a third of it to each; 2D segments, a half): a uniform traction on the selected face;
 * a selection without a whole face takes the vertices' whole surface areas. */
typedef enum { CT_LOAD_UNIFORM, CT_LOAD_LINEAR } ct_load_distribution;
typedef enum { CT_WEIGHT_VOLUME, CT_WEIGHT_AREA, CT_WEIGHT_COUNT } ct_load_weight;

typedef struct ct_load {
    ct_selector sel;
    double force[3];
    double force_rate[3];
    double ramp_until;           /* INFINITY: ramps forever */
    ct_load_distribution dist;
    ct_load_weight weight;
    int axis;                    /* LINEAR */
    double center;               /* LINEAR */
    double length;               /* LINEAR; <= 0: max |X[axis] - center| over the selection */
} ct_load;

/* ---- meshes ---- */
typedef enum { CT_MESH_FILE, CT_MESH_BOX, CT_MESH_RECT, CT_MESH_POLYLINE, CT_MESH_ARC } ct_mesh_source;

typedef struct ct_mesh_spec {
    ct_mesh_source source;
    char *path;                  /* FILE: resolved relative to the scene file's folder */
    double origin[3], size[3];   /* BOX, RECT */
    int cells[3];                /* BOX, RECT */
    double *points;              /* POLYLINE: npoints*2 */
    int npoints, closed;
    double center[2], radius, angle0, angle1; /* ARC (radians) */
    int segments;
    /* transform applied after loading: x -> R (scale * x) + translate */
    double scale[3];
    double rot_axis[3], rot_angle; /* radians */
    double translate[3];
    char *json_path;             /* e.g. "/bodies/0/mesh", for messages */
} ct_mesh_spec;

typedef enum { CT_DOFS_FULL, CT_DOFS_EMBEDDED } ct_dofs_mode;

typedef struct ct_body_spec {
    char *name;
    ct_mesh_spec mesh;           /* the (fine) mesh contact sees */
    ct_dofs_mode dofs;
    ct_mesh_spec coarse;         /* EMBEDDED: the coarse mesh carrying the unknowns */
    double outside_tol;          /* EMBEDDED: fine vertices may lie outside the coarse mesh down to a
                                    barycentric weight of -outside_tol (extrapolated) */
    int has_material;            /* 0 only for surface-only (kinematic) bodies */
    int kinematic;               /* 1: prescribed body (surface-only meshes, or "kinematic": true):
                                    no material, fully fixed */
    ct_material material;
    double v0[3];                /* initial velocity */
    int nfixed;
    ct_dirichlet *fixed;
    int nloads;
    ct_load *loads;
} ct_body_spec;

typedef struct ct_obstacle_spec {
    char *name;
    double point[3];
    double normal[3];            /* normalized by the parser */
} ct_obstacle_spec;

/* ---- springs between two vertices (issue 17: the zero-length spring of the IMLS paper's §6.1) ----
 * E = 1/2 k (|x_a - x_b| - L)^2 between one x-vertex of a body and one of another (or the same)
 * body; either end may be held by a Dirichlet condition. An end is given by "vertex" (an index
 * of the body's x-mesh, the mesh contact sees) or by a "select" that must pick exactly one
 * vertex (checked when the simulation is built). */
typedef struct ct_spring_end {
    int body;                    /* body index */
    int vertex;                  /* -1: by `sel` */
    ct_selector sel;             /* when vertex < 0 */
} ct_spring_end;

typedef struct ct_spring_spec {
    char *name;                  /* "spring<i>" when not given */
    ct_spring_end end[2];        /* a, b */
    double k;                    /* stiffness (N/m), > 0 */
    double rest_length;          /* L (m), >= 0 */
} ct_spring_spec;

typedef enum {
    CT_PROBE_MEAN_DISPLACEMENT, /* mean of x - X over the selection */
    CT_PROBE_MEAN_POSITION,
    CT_PROBE_MEAN_VELOCITY,
    CT_PROBE_FORCE,             /* force of a category between a pair of participants */
    CT_PROBE_REACTION,          /* total force the Dirichlet conditions apply to the selection */
    CT_PROBE_ENERGY,            /* kinetic, elastic, gravity, external, contact, spring, total */
    CT_PROBE_SPRING_FORCE       /* force the spring exerts on its end a (N): -dE/dx_a */
} ct_probe_kind;

typedef enum { CT_ENERGY_KINETIC, CT_ENERGY_ELASTIC, CT_ENERGY_GRAVITY, CT_ENERGY_EXTERNAL,
               CT_ENERGY_CONTACT, CT_ENERGY_TOTAL, CT_ENERGY_SPRING } ct_energy_kind;

enum { CT_COMPONENT_ALL = -1, CT_COMPONENT_NORM = 3 };

typedef struct ct_probe_spec {
    char *name;
    ct_probe_kind kind;
    ct_selector sel;             /* displacement/position/velocity/reaction */
    int component;               /* 0..2, CT_COMPONENT_ALL (vector), CT_COMPONENT_NORM */
    ct_force_category category;  /* FORCE */
    int pair[2];                 /* FORCE: participant indices (bodies, then obstacles) */
    ct_energy_kind energy;       /* ENERGY */
    int spring;                  /* SPRING_FORCE: index into ct_scene.springs */
} ct_probe_spec;

typedef enum { CT_INTEGRATOR_IMPLICIT_EULER, CT_INTEGRATOR_STATIC } ct_integrator;

/* Bounds of counts in a scene, so that no count derived from them overflows an int. */
enum {
    CT_SCENE_MAX_STEPS = 1000000000,     /* duration / dt */
    CT_SCENE_MAX_THREADS = 4096,         /* solver.threads (as the CLI's --threads) */
    CT_SCENE_MAX_GRID_CELLS = 100000000, /* cells of a box / rect generator (6 tetrahedra per box cell) */
    CT_SCENE_MAX_SEGMENTS = 10000000,    /* segments of an arc generator */
    CT_SCENE_MAX_NAME = 128,             /* characters of a probe or spring name (an HDF5 dataset name) */
    CT_SCENE_MAX_COORD = 1000000000,     /* m: rest coordinates of every mesh, after its transform */
    CT_SCENE_MAX_NEWTON_ITERS = 100000,  /* solver.max_newton_iters: work budgets of the solver's loops */
    CT_SCENE_MAX_FRICTION_ITERS = 10000, /* solver.friction_iters */
    CT_SCENE_MAX_LINE_SEARCH = 1100      /* solver.max_line_search */
};

typedef struct ct_solver_spec {
    double newton_tol;       /* converge when |p|_inf / h < newton_tol * bbox_diag (static: |p|_inf < tol*diag) */
    double force_tol;        /* ... and the forces balance: |r|_1 <= force_tol * F (core/sim/newton.c); 0: off */
    int max_newton_iters;
    int friction_iters;      /* 1: semi-implicit; k > 1: k fixed-point passes; -1: until converged */
    double friction_tol;
    int threads;             /* 0: OpenMP default */
    int project_psd;         /* per-element PSD projection (default on) */
    int exact_hessian;       /* Newton switches to the exact Hessian after a full step while it is
                                positive definite (default on; core/sim/newton.c) */
    int predictor;           /* Newton starts from x^n + h v^n when collision free and lower in E
                                (default on; core/sim/newton.c) */
    int second_order_correction; /* the line search also tries each trial with the model's
                                second-order correction (correct_trial) and keeps the lower E
                                (default on; core/sim/newton.c) */
    int max_line_search;     /* backtracking halvings before giving up */
    int verify;              /* run the exact intersection verifier after every step (default on) */
} ct_solver_spec;

typedef struct ct_scene {
    char *path;              /* the scene file ("<string>" for parsed text) */
    char *dir;               /* its folder, for relative paths */
    char *name;
    int dim;
    double dt, duration;
    ct_integrator integrator;
    double gravity[3];
    ct_solver_spec solver;
    char *model_name;
    const ct_model_type *model;
    ct_params params;        /* the model's parameters */
    int nbodies;
    ct_body_spec *bodies;
    int nobstacles;
    ct_obstacle_spec *obstacles;
    int nsprings;
    ct_spring_spec *springs;
    int nprobes;
    ct_probe_spec *probes;
    char *output_file;       /* NULL: <name>.h5 in the current folder */
    /* "initial_state": start from a frame of an earlier run's HDF5 file instead of the rest
     * state (positions, and optionally velocities, of every vertex; time starts at 0) */
    char *init_file;         /* resolved path; NULL: rest state and the bodies' "velocity" */
    int init_frame;          /* frame index, negative counts from the end (-1: last) */
    int init_velocity;       /* 0: zero velocities; 1: the frame's velocities (/frames/v) */
    long init_dims[3];       /* shape of the file's /frames/x (frames, vertices, dim); 0s if not 3-D */
    long init_frame_index;   /* the frame read (init_frame resolved) */
    double init_time;        /* that frame's time in the earlier run (/frames/time; NAN if it has
                                none): the offset of this run's clock, which starts at 0 */
    double *init_x, *init_v; /* that frame's positions and velocities (vertices x dim); init_v NULL
                                unless init_velocity */
    int frames_every;        /* 0: no frames */
    int flush_every;         /* steps between HDF5 flushes */
    int frames_compress;     /* gzip level of the /frames datasets (0: none) */
    char *resolved_json;     /* the resolved scene, pretty-printed JSON */
} ct_scene;

void ct_scene_init(ct_scene *sc);
void ct_scene_free(ct_scene *sc);

/* Load and validate a scene file. `overrides` are "key.path=value" strings (values are
 * parsed as JSON, falling back to a plain string), applied before validation; a path
 * component that is a number indexes an array ("bodies.0.material.E=2e5"). */
ct_status ct_scene_load(ct_scene *sc, const char *path, const char *const *overrides,
                        int noverrides, ct_diag *diag);

/* Same from a string; `name` is used in messages and `base_dir` for relative mesh paths. */
ct_status ct_scene_parse(ct_scene *sc, const char *text, const char *name, const char *base_dir,
                         const char *const *overrides, int noverrides, ct_diag *diag);

/* Participant index of a body or obstacle name, -1 if none. */
int ct_scene_participant(const ct_scene *sc, const char *name);

#endif
