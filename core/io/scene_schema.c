/* scene_schema.c — the scene format as tables (scene_schema.h), and the JSON Schema built from
 * them and from the registered models' parameter tables (`contactlab schema`).
 *
 * The tables follow the objects of a scene top-down. Where a value has more than one form (a
 * selector is "all" or an object, a mesh is one of four kinds, a probe's keys depend on its
 * quantity) the field is an SK_REF and build_forms() below writes the form. Vectors whose length is
 * the scene's dim, and keys or values that exist in 3D only, are given for 3D; the documentation
 * says what 2D allows, the parser checks it.
 */
#include "io/scene_schema.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "contactlab/ct_material.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_scene.h"

#define REQ SK_REQUIRED
#define GT(x) .flags = SK_XMIN, .lo = (x)
#define GE(x) .flags = SK_MIN, .lo = (x)
#define REQ_GT(x) .flags = REQ | SK_XMIN, .lo = (x)
#define REQ_GE(x) .flags = REQ | SK_MIN, .lo = (x)
#define NAME_PATTERN "^[A-Za-z0-9_.-]{1,128}$" /* CT_SCENE_MAX_NAME */

/* ---------------- value lists ---------------- */

const char *const ct_sk_integrators[] = {"implicit_euler", "static", NULL};
const char *const ct_sk_mesh_generators[] = {"box", "rect", "polyline", "arc", NULL};
const char *const ct_sk_dofs_modes[] = {"full", "embedded", NULL};
const char *const ct_sk_probe_quantities[] = {"mean_displacement", "mean_position", "mean_velocity", "reaction",
                                              "force", "energy", "spring_force", NULL};
const char *const ct_sk_energies[] = {"kinetic", "elastic", "gravity", "external", "contact", "total", "spring", NULL};
const char *const ct_sk_load_weights[] = {"volume", "area", "count", NULL};
const char *const ct_sk_velocity_sources[] = {"zero", "frame", NULL};
const char *const ct_sk_obstacle_types[] = {"halfspace", NULL};
const char *const ct_sk_material_models[] = {
#define CT_X_NAME(k, n) n,
    CT_MATERIAL_LIST(CT_X_NAME)
#undef CT_X_NAME
        NULL};

static const char *const grid_generators[] = {"box", "rect", NULL};
static const char *const polyline_generator[] = {"polyline", NULL};
static const char *const arc_generator[] = {"arc", NULL};
static const char *const selector_quantities[] = {"mean_displacement", "mean_position", "mean_velocity",
                                                  "reaction", NULL};
static const char *const force_quantity[] = {"force", NULL};
static const char *const energy_quantity[] = {"energy", NULL};
static const char *const spring_quantity[] = {"spring_force", NULL};
static const char *const force_categories[] = {
#define CT_X_NAME(k, n) n,
    CT_FORCE_CATEGORY_LIST(CT_X_NAME)
#undef CT_X_NAME
        NULL};
const char *const ct_sk_components2[] = {"x", "y", "all", "norm", NULL};
const char *const ct_sk_components3[] = {"x", "y", "z", "all", "norm", NULL};
const char *const ct_sk_sides2[] = {"+x", "-x", "+y", "-y", NULL};
const char *const ct_sk_sides3[] = {"+x", "-x", "+y", "-y", "+z", "-z", NULL};
const char *const ct_sk_axes2[] = {"x", "y", NULL};
const char *const ct_sk_axes3[] = {"x", "y", "z", NULL};
static const char *const rect_generator[] = {"rect", NULL};
static const char *const box_generator[] = {"box", NULL};
const char *const ct_sk_linear_types[] = {"linear", NULL};

/* ---------------- the top level ---------------- */

static const ct_sk_field time_fields[] = {
    {.key = "dt", .kind = SK_NUMBER, REQ_GT(0), .unit = "s", .doc = "time step"},
    {.key = "duration", .kind = SK_NUMBER, REQ_GT(0), .unit = "s", .doc = "simulated time, >= dt (at most 1e9 steps)"},
    {.key = "integrator", .kind = SK_ENUM, .choices = ct_sk_integrators, .def = "\"implicit_euler\"",
     .doc = "implicit_euler: dynamics; static: equilibrium (no inertia) of each load step"},
    {0}};
const ct_sk_object ct_sk_time = {.name = "time", .doc = "Time stepping.", .fields = time_fields};

static const ct_sk_field solver_fields[] = {
    {.key = "newton_tol", .kind = SK_NUMBER, GT(0), .def = "0.01",
     .doc = "Newton's step test: |p|inf / h < newton_tol x the scene's bounding-box diagonal (static: |p|inf < tol x diag)"},
    {.key = "force_tol", .kind = SK_NUMBER, GE(0), .def = "0.0001",
     .doc = "Newton's force test: unbalanced force <= force_tol x the scene's force scale; 0: off"},
    {.key = "max_newton_iters", .kind = SK_INTEGER, .flags = SK_MIN | SK_MAX, .lo = 1, .hi = CT_SCENE_MAX_NEWTON_ITERS,
     .def = "200", .doc = "Newton iterations per solve"},
    {.key = "friction_iters", .kind = SK_INTEGER, .flags = SK_MIN | SK_MAX | SK_NONZERO, .lo = -1,
     .hi = CT_SCENE_MAX_FRICTION_ITERS, .def = "1",
     .doc = "lagged friction: 1 semi-implicit, k > 1 fixed-point passes, -1 until the change < friction_tol (not 0)"},
    {.key = "friction_tol", .kind = SK_NUMBER, GT(0), .def = "0.0001",
     .doc = "friction fixed-point passes stop when the model's lagged-state change is below this"},
    {.key = "threads", .kind = SK_INTEGER, .flags = SK_MIN | SK_MAX, .lo = 0, .hi = CT_SCENE_MAX_THREADS, .def = "0",
     .doc = "OpenMP threads; 0: the default (every core, or --threads)"},
    {.key = "project_psd", .kind = SK_BOOL, .def = "true", .doc = "project each element Hessian to PSD"},
    {.key = "exact_hessian", .kind = SK_BOOL, .def = "true",
     .doc = "use the exact Hessian near the solution while it is positive definite"},
    {.key = "predictor", .kind = SK_BOOL, .def = "true",
     .doc = "start Newton from x + h v when that is collision free and lower in energy"},
    {.key = "second_order_correction", .kind = SK_BOOL, .def = "true",
     .doc = "the line search also tries each trial point with the contact gaps the step's curvature closed reopened"},
    {.key = "max_line_search", .kind = SK_INTEGER, .flags = SK_MIN | SK_MAX, .lo = 1, .hi = CT_SCENE_MAX_LINE_SEARCH,
     .def = "40", .doc = "backtracking steps per line search (halvings: 1100 reach the smallest double)"},
    {.key = "verify", .kind = SK_BOOL, .def = "true",
     .doc = "count surface intersections after every step (exact test; logged as /steps/intersections)"},
    {0}};
const ct_sk_object ct_sk_solver = {.name = "solver", .doc = "The Newton solver.", .fields = solver_fields};

static const ct_sk_field output_fields[] = {
    {.key = "file", .kind = SK_STRING, .pattern = ".",
     .doc = "the run's HDF5 file when the command line gives no -o (relative to the working directory)"},
    {.key = "frames_every", .kind = SK_INTEGER, GE(0), .def = "10",
     .doc = "write positions and velocities (/frames) every this many steps; 0: none"},
    {.key = "flush_every", .kind = SK_INTEGER, GE(1), .def = "10", .doc = "flush the HDF5 file every this many steps"},
    {.key = "compress", .kind = SK_INTEGER, .flags = SK_MIN | SK_MAX, .lo = 0, .hi = 9, .def = "0",
     .doc = "gzip level of the /frames datasets (shuffle + deflate; readers decompress transparently); 0: none"},
    {0}};
const ct_sk_object ct_sk_output = {.name = "output", .doc = "What the run writes.", .fields = output_fields};

static const ct_sk_field initial_state_fields[] = {
    {.key = "file", .kind = SK_STRING, .flags = REQ, .pattern = ".",
     .doc = "an earlier run's HDF5 file (relative to the scene file) with /frames/x of the same meshes"},
    {.key = "frame", .kind = SK_INTEGER, .def = "-1", .doc = "the frame to start from; negative counts from the end"},
    {.key = "velocity", .kind = SK_ENUM, .choices = ct_sk_velocity_sources, .def = "\"zero\"",
     .doc = "zero, or the frame's /frames/v"},
    {0}};
const ct_sk_object ct_sk_initial_state = {
    .name = "initial_state",
    .doc = "Start from a frame of an earlier run instead of the rest state (time starts at 0; held vertices must sit "
    "where the frame has them; full-dof bodies only).",
    .fields = initial_state_fields};

static const ct_sk_field scene_fields[] = {
    {.key = "name", .kind = SK_STRING, .pattern = "^[^/]+$",
     .doc = "the scene's name (default: the file's name without .json)"},
    {.key = "description", .kind = SK_STRING, .doc = "one line saying what the scene shows"},
    {.key = "dim", .kind = SK_INTEGER, .flags = REQ | SK_MIN | SK_MAX, .lo = 2, .hi = 3, .doc = "2 or 3"},
    {.key = "time", .kind = SK_OBJECT, .flags = REQ, .obj = &ct_sk_time, .doc = "time stepping"},
    {.key = "gravity", .kind = SK_VEC, .unit = "m/s^2", .doc = "gravitational acceleration (default: zero)"},
    {.key = "solver", .kind = SK_OBJECT, .obj = &ct_sk_solver, .doc = "the Newton solver"},
    {.key = "contact", .kind = SK_REF, .ref = "contact",
     .doc = "the contact model and its parameters (`contactlab models`); default: none"},
    {.key = "bodies", .kind = SK_ARRAY, .flags = REQ, .n = 1, .obj = &ct_sk_body, .doc = "the bodies"},
    {.key = "obstacles", .kind = SK_ARRAY, .obj = &ct_sk_obstacle, .doc = "fixed half-spaces"},
    {.key = "springs", .kind = SK_ARRAY, .obj = &ct_sk_spring, .doc = "springs between two vertices"},
    {.key = "probes", .kind = SK_REF, .ref = "probes", .doc = "quantities logged every step under /probes"},
    {.key = "output", .kind = SK_OBJECT, .obj = &ct_sk_output, .doc = "what the run writes"},
    {.key = "initial_state", .kind = SK_OBJECT, .obj = &ct_sk_initial_state,
     .doc = "start from a frame of an earlier run"},
    {0}};
const ct_sk_object ct_sk_scene = {.name = "scene", .doc = "A contactlab scene.", .fields = scene_fields};

/* ---------------- bodies ---------------- */

static const ct_sk_field body_fields[] = {
    {.key = "name", .kind = SK_STRING, .flags = REQ, .pattern = ".",
     .doc = "unique among bodies and obstacles"},
    {.key = "mesh", .kind = SK_REF, .flags = REQ, .ref = "mesh", .doc = "the body's mesh"},
    {.key = "dofs", .kind = SK_OBJECT, .obj = &ct_sk_dofs, .doc = "full (default) or embedded coordinates"},
    {.key = "kinematic", .kind = SK_BOOL,
     .doc = "fully prescribed by its motion (default: true for surface meshes, which must be kinematic)"},
    {.key = "material", .kind = SK_OBJECT, .obj = &ct_sk_material,
     .doc = "required for a body that is not kinematic, not allowed for one that is"},
    {.key = "velocity", .kind = SK_VEC, .unit = "m/s",
     .doc = "initial velocity of every vertex (default: zero; not for a kinematic body, nor with the static "
            "integrator)"},
    {.key = "fixed", .kind = SK_REF, .ref = "fixed_list",
     .doc = "Dirichlet conditions: one entry or an array; a kinematic body needs one with \"select\": \"all\""},
    {.key = "loads", .kind = SK_ARRAY, .obj = &ct_sk_load, .doc = "external forces (not for a kinematic body)"},
    {.key = "contact", .kind = SK_REF, .ref = "body_contact",
     .doc = "this body's values of the model's per-body parameters (`contactlab models`: \"(per body)\")"},
    {0}};
const ct_sk_object ct_sk_body = {.name = "body", .doc = "A deformable or kinematic body.", .fields = body_fields};

static const ct_sk_field dofs_fields[] = {
    {.key = "mode", .kind = SK_ENUM, .choices = ct_sk_dofs_modes, .def = "\"full\"",
     .doc = "full: every vertex is a dof; embedded: x = J q on a coarse mesh"},
    {.key = "coarse", .kind = SK_REF, .ref = "mesh",
     .doc = "the coarse volumetric mesh of an embedded body (only with embedded)"},
    {.key = "outside_tol", .kind = SK_NUMBER, GE(0), .def = "1e-06",
     .doc = "fine vertices may lie outside the coarse mesh down to a barycentric weight of -outside_tol "
            "(extrapolated; only with embedded)"},
    {0}};
const ct_sk_object ct_sk_dofs = {.name = "dofs",
                                 .doc = "Coordinates: embedded simulates the body on a coarse mesh (elasticity on the coarse "
                                 "elements, mass J^T M J, contact on the fine surface).",
                                 .fields = dofs_fields};

static const ct_sk_field material_fields[] = {
    {.key = "model", .kind = SK_ENUM, .choices = ct_sk_material_models, .def = "\"neo_hookean\"",
     .doc = "neo_hookean (stable, Smith et al. 2018), fixed_corotated, linear_corotated, stvk"},
    {.key = "E", .kind = SK_NUMBER, REQ_GT(0), .unit = "Pa", .doc = "Young's modulus"},
    {.key = "nu", .kind = SK_NUMBER, .flags = REQ | SK_XMIN | SK_XMAX, .lo = -1, .hi = 0.5,
     .doc = "Poisson's ratio"},
    {.key = "density", .kind = SK_NUMBER, REQ_GT(0), .unit = "kg/m^3", .doc = "mass density (2D: per unit thickness)"},
    {0}};
const ct_sk_object ct_sk_material = {.name = "material", .doc = "Hyperelastic material.", .fields = material_fields};

/* ---------------- meshes ---------------- */

#define TRANSFORM_FIELD {.key = "transform", .kind = SK_OBJECT, .obj = &ct_sk_transform, .doc = "applied to the mesh"}

static const ct_sk_field mesh_file_fields[] = {
    {.key = "file", .kind = SK_STRING, .flags = REQ, .pattern = "\\.([mM][sS][hH]|[oO][bB][jJ])$",
     .pattern2 = "\\.[mM][sS][hH]$",
     .doc = "a Gmsh .msh (v2/v4 ASCII, volumetric) or .obj (3D surface, kinematic only), relative to the scene"},
    TRANSFORM_FIELD,
    {0}};
const ct_sk_object ct_sk_mesh_file = {.name = "mesh_file", .doc = "A mesh read from a file.", .fields = mesh_file_fields};

static const ct_sk_field mesh_grid_fields[] = {
    {.key = "generator", .kind = SK_ENUM, .flags = REQ, .choices = grid_generators, .choices2 = rect_generator,
     .choices3 = box_generator,
     .doc = "box (3D, 6 tetrahedra per cell) or rect (2D triangles)"},
    {.key = "size", .kind = SK_VEC, REQ_GT(0), .unit = "m", .doc = "edge lengths"},
    {.key = "cells", .kind = SK_IVEC, .flags = REQ | SK_MAX, .lo = 1, .hi = CT_SCENE_MAX_GRID_CELLS,
     .doc = "cells along each axis (their product at most 1e8)"},
    {.key = "origin", .kind = SK_VEC, .unit = "m", .doc = "the minimum corner (default: zero)"},
    TRANSFORM_FIELD,
    {0}};
const ct_sk_object ct_sk_mesh_grid = {.name = "mesh_grid", .doc = "A generated grid: a box (3D) or rectangle (2D).", .fields = mesh_grid_fields};

static const ct_sk_field mesh_polyline_fields[] = {
    {.key = "generator", .kind = SK_ENUM, .flags = REQ, .choices = polyline_generator, .doc = "polyline"},
    {.key = "points", .kind = SK_REF, .flags = REQ, .ref = "points", .unit = "m", .doc = "at least 2 points [x, y]"},
    {.key = "closed", .kind = SK_BOOL, .def = "false", .doc = "join the last point to the first (needs 3 points)"},
    TRANSFORM_FIELD,
    {0}};
const ct_sk_object ct_sk_mesh_polyline = {.name = "mesh_polyline", .doc = "A 2D surface (kinematic) through points.",
                                          .fields = mesh_polyline_fields};

static const ct_sk_field mesh_arc_fields[] = {
    {.key = "generator", .kind = SK_ENUM, .flags = REQ, .choices = arc_generator, .doc = "arc"},
    {.key = "center", .kind = SK_NUMS, .flags = REQ, .n = 2, .unit = "m", .doc = "[x, y]"},
    {.key = "radius", .kind = SK_NUMBER, REQ_GT(0), .unit = "m", .doc = "radius"},
    {.key = "angles_deg", .kind = SK_NUMS, .flags = REQ, .n = 2, .unit = "deg",
     .doc = "start and end angle: distinct, at most 360 apart (a full circle needs 3 segments)"},
    {.key = "segments", .kind = SK_INTEGER, .flags = REQ | SK_MIN | SK_MAX, .lo = 1, .hi = CT_SCENE_MAX_SEGMENTS,
     .doc = "segments along the arc"},
    TRANSFORM_FIELD,
    {0}};
const ct_sk_object ct_sk_mesh_arc = {.name = "mesh_arc", .doc = "A 2D circular arc surface (kinematic).", .fields = mesh_arc_fields};

static const ct_sk_field transform_fields[] = {
    {.key = "scale", .kind = SK_REF, .ref = "scale", .def = "1",
     .doc = "a factor, or one factor per axis (applied first)"},
    {.key = "rotate", .kind = SK_OBJECT, .obj = &ct_sk_rotate, .doc = "a rotation about the origin (applied second)"},
    {.key = "translate", .kind = SK_VEC, .unit = "m", .doc = "a translation (applied last; default: zero)"},
    {0}};
const ct_sk_object ct_sk_transform = {.name = "transform", .doc = "Scale, then rotate, then translate the mesh.", .fields = transform_fields};

static const ct_sk_field rotate_fields[] = {
    {.key = "axis", .kind = SK_VEC, .flags = SK_3D | SK_NONZERO, .def = "[0, 0, 1]", .doc = "rotation axis, nonzero (3D only)"},
    {.key = "angle_deg", .kind = SK_NUMBER, .def = "0", .unit = "deg", .doc = "angle (2D: about z)"},
    {0}};
const ct_sk_object ct_sk_rotate = {.name = "rotate", .doc = "A rotation.", .fields = rotate_fields};

/* ---------------- selectors, conditions and loads ---------------- */

#define SELECTOR_FIELDS                                                                                          \
    {.key = "side", .kind = SK_ENUM, .choices = ct_sk_sides3, .choices2 = ct_sk_sides2,                         \
     .doc = "the vertices on the bounding box's face: +x, -x, +y, -y, +z, -z (2D: no z)"},                       \
        {.key = "tol", .kind = SK_NUMBER, GE(0), .def = "1e-06", .unit = "m",                                   \
         .doc = "distance to the face that still counts as on it (only with side)"},                            \
        {.key = "box", .kind = SK_OBJECT, .obj = &ct_sk_box, .doc = "the vertices inside an axis-aligned box"}, \
        {.key = "indices", .kind = SK_REF, .ref = "indices", .doc = "vertex indices of the body's mesh"},     \
        {.key = "allow_empty", .kind = SK_BOOL, .def = "false",                                               \
         .doc = "selecting no vertex is meant (otherwise it is an error)"}

static const ct_sk_field selector_fields[] = {SELECTOR_FIELDS, {0}};
static const char *const selector_kinds[] = {"side", "box", "indices", NULL};
const ct_sk_object ct_sk_selector = {.name = "selector_object", .doc = "Vertices of a body: exactly one of side, box, indices.",
                                     .fields = selector_fields, .exactly_one = selector_kinds};

static const ct_sk_field probe_selector_fields[] = {
    {.key = "body", .kind = SK_STRING, .flags = REQ, .pattern = ".",
     .doc = "a body's name, or \"all\" (every vertex of every body; then no side, box or indices)"},
    SELECTOR_FIELDS,
    {0}};
const ct_sk_object ct_sk_probe_selector = {.name = "probe_selector",
                                           .doc = "Vertices of a named body (at most one of side, box, indices; none: "
                                           "the whole body).",
                                           .fields = probe_selector_fields};

static const ct_sk_field box_fields[] = {
    {.key = "min", .kind = SK_VEC, .flags = REQ, .unit = "m", .doc = "minimum corner"},
    {.key = "max", .kind = SK_VEC, .flags = REQ, .unit = "m", .doc = "maximum corner, >= min"},
    {0}};
const ct_sk_object ct_sk_box = {.name = "box", .doc = "An axis-aligned box (inclusive).", .fields = box_fields};

static const ct_sk_field fixed_fields[] = {
    {.key = "select", .kind = SK_REF, .ref = "selector", .def = "\"all\"",
     .doc = "the held vertices (entries may overlap where they prescribe the same motion)"},
    {.key = "motion", .kind = SK_ARRAY, .obj = &ct_sk_segment,
     .doc = "piecewise rigid motion, segments in time order (none: held in place)"},
    {0}};
const ct_sk_object ct_sk_fixed = {.name = "fixed",
                                  .doc = "Held vertices (of the coarse mesh for an embedded body) and their prescribed motion.",
                                  .fields = fixed_fields};

static const ct_sk_field segment_fields[] = {
    {.key = "until", .kind = SK_NUMBER, REQ_GT(0), .unit = "s",
     .doc = "the segment's end time, > the previous segment's (after the last: at rest)"},
    {.key = "velocity", .kind = SK_VEC, .unit = "m/s", .doc = "translation velocity (default: zero)"},
    {.key = "angular_velocity", .kind = SK_NUMBER, .def = "0", .unit = "rad/s", .doc = "rotation rate about the axis"},
    {.key = "axis", .kind = SK_VEC, .flags = SK_3D | SK_NONZERO, .doc = "rotation axis, nonzero (3D; required when rotating)"},
    {.key = "center", .kind = SK_VEC, .unit = "m", .doc = "center of rotation (default: zero)"},
    {0}};
const ct_sk_object ct_sk_segment = {.name = "motion_segment", .doc = "One segment of a rigid motion.", .fields = segment_fields};

static const ct_sk_field load_fields[] = {
    {.key = "select", .kind = SK_REF, .ref = "selector", .def = "\"all\"", .doc = "the loaded vertices"},
    {.key = "force", .kind = SK_VEC, .unit = "N", .doc = "total force at t = 0 (give force, force_rate or both)"},
    {.key = "force_rate", .kind = SK_VEC, .unit = "N/s", .doc = "its rate of change"},
    {.key = "ramp_until", .kind = SK_NUMBER, GT(0), .unit = "s",
     .doc = "the force stops growing at this time (default: never)"},
    {.key = "distribution", .kind = SK_REF, .ref = "distribution", .def = "\"uniform\"",
     .doc = "uniform, or linear along an axis"},
    {.key = "weight", .kind = SK_ENUM, .choices = ct_sk_load_weights, .def = "\"volume\"",
     .doc = "each vertex's share: its volume, its surface area (a traction on the selected face), or 1"},
    {0}};
static const char *const load_forces[] = {"force", "force_rate", NULL};
const ct_sk_object ct_sk_load = {.name = "load", .doc = "A total force F(t) = force + force_rate min(t, ramp_until) spread over vertices.",
                                 .fields = load_fields, .at_least_one = load_forces};

static const ct_sk_field linear_fields[] = {
    {.key = "type", .kind = SK_ENUM, .flags = REQ, .choices = ct_sk_linear_types, .doc = "linear"},
    {.key = "axis", .kind = SK_ENUM, .flags = REQ, .choices = ct_sk_axes3, .choices2 = ct_sk_axes2, .doc = "x, y, z (2D: x, y)"},
    {.key = "center", .kind = SK_NUMBER, .flags = REQ, .unit = "m", .doc = "where the share crosses zero"},
    {.key = "length", .kind = SK_NUMBER, GT(0), .unit = "m", .doc = "the scale L (default: automatic)"},
    {0}};
const ct_sk_object ct_sk_linear = {.name = "linear_distribution", .doc = "Shares weighted by (X - center) / L along an axis.",
                                   .fields = linear_fields};

/* ---------------- obstacles and springs ---------------- */

static const ct_sk_field obstacle_fields[] = {
    {.key = "name", .kind = SK_STRING, .flags = REQ, .pattern = ".", .doc = "unique among bodies and obstacles"},
    {.key = "type", .kind = SK_ENUM, .flags = REQ, .choices = ct_sk_obstacle_types, .doc = "halfspace"},
    {.key = "point", .kind = SK_VEC, .flags = REQ, .unit = "m", .doc = "a point on the boundary"},
    {.key = "normal", .kind = SK_VEC, .flags = REQ | SK_NONZERO, .doc = "outward normal (into the free side), nonzero"},
    {0}};
const ct_sk_object ct_sk_obstacle = {.name = "obstacle", .doc = "A fixed half-space.", .fields = obstacle_fields};

static const ct_sk_field spring_fields[] = {
    {.key = "name", .kind = SK_STRING, .pattern = NAME_PATTERN, .doc = "unique (default: spring<i>)"},
    {.key = "a", .kind = SK_OBJECT, .flags = REQ, .obj = &ct_sk_spring_end, .doc = "first end"},
    {.key = "b", .kind = SK_OBJECT, .flags = REQ, .obj = &ct_sk_spring_end, .doc = "second end"},
    {.key = "stiffness", .kind = SK_NUMBER, REQ_GT(0), .unit = "N/m", .doc = "k"},
    {.key = "rest_length", .kind = SK_NUMBER, GE(0), .def = "0", .unit = "m", .doc = "L"},
    {0}};
const ct_sk_object ct_sk_spring = {.name = "spring", .doc = "A spring of energy k (|x_a - x_b| - L)^2 / 2 between two vertices.",
                                   .fields = spring_fields};

static const ct_sk_field spring_end_fields[] = {
    {.key = "body", .kind = SK_REF, .flags = REQ, .ref = "name_or_index", .doc = "a body's name or index"},
    {.key = "vertex", .kind = SK_INTEGER, GE(0),
     .doc = "a vertex index of the body's mesh (give vertex or select)"},
    {.key = "select", .kind = SK_REF, .ref = "selector", .doc = "a selector that picks exactly one vertex"},
    {0}};
static const char *const spring_end_kinds[] = {"vertex", "select", NULL};
const ct_sk_object ct_sk_spring_end = {.name = "spring_end", .doc = "One vertex of a body: exactly one of vertex, select.",
                                       .fields = spring_end_fields, .exactly_one = spring_end_kinds};

/* ---------------- probes ---------------- */

#define PROBE_NAME {.key = "name", .kind = SK_STRING, .flags = REQ, .pattern = NAME_PATTERN, .doc = "unique; the dataset /probes/<name>"}
#define PROBE_COMPONENT                                                                                        \
    {.key = "component", .kind = SK_ENUM, .choices = ct_sk_components3, .choices2 = ct_sk_components2,         \
     .def = "\"all\"",                                                                                         \
     .doc = "x, y, z (3D), all (the vector), norm"}

static const ct_sk_field probe_select_fields[] = {
    PROBE_NAME,
    {.key = "quantity", .kind = SK_ENUM, .flags = REQ, .choices = selector_quantities,
     .doc = "mean displacement (m), position (m), velocity (m/s) of the vertices, or the reaction (N) of their "
            "Dirichlet conditions"},
    {.key = "select", .kind = SK_REF, .flags = REQ, .ref = "probe_selector", .doc = "the vertices"},
    PROBE_COMPONENT,
    {0}};
const ct_sk_object ct_sk_probe_select = {.name = "probe_vertices", .doc = "A quantity of selected vertices.", .fields = probe_select_fields};

static const ct_sk_field probe_force_fields[] = {
    PROBE_NAME,
    {.key = "quantity", .kind = SK_ENUM, .flags = REQ, .choices = force_quantity, .doc = "force"},
    {.key = "category", .kind = SK_ENUM, .flags = REQ, .choices = force_categories, .doc = "the model's force category"},
    {.key = "pair", .kind = SK_REF, .flags = REQ, .ref = "pair",
     .doc = "[on, by]: the force on the first participant exerted by the second (N)"},
    PROBE_COMPONENT,
    {0}};
const ct_sk_object ct_sk_probe_force = {.name = "probe_force", .doc = "A contact force between two participants.", .fields = probe_force_fields};

static const ct_sk_field probe_energy_fields[] = {
    PROBE_NAME,
    {.key = "quantity", .kind = SK_ENUM, .flags = REQ, .choices = energy_quantity, .doc = "energy"},
    {.key = "energy", .kind = SK_ENUM, .flags = REQ, .choices = ct_sk_energies, .unit = "J", .doc = "which energy"},
    {0}};
const ct_sk_object ct_sk_probe_energy = {.name = "probe_energy", .doc = "An energy of the whole scene.", .fields = probe_energy_fields};

static const ct_sk_field probe_spring_fields[] = {
    PROBE_NAME,
    {.key = "quantity", .kind = SK_ENUM, .flags = REQ, .choices = spring_quantity, .doc = "spring_force"},
    {.key = "spring", .kind = SK_REF, .flags = REQ, .ref = "name_or_index", .doc = "a spring's name or index"},
    PROBE_COMPONENT,
    {0}};
const ct_sk_object ct_sk_probe_spring = {.name = "probe_spring", .doc = "The force a spring exerts on its end a (N).",
                                         .fields = probe_spring_fields};

const ct_sk_field *ct_sk_find(const ct_sk_object *o, const char *key)
{
    for (const ct_sk_field *f = o->fields; f->key; ++f)
        if (strcmp(f->key, key) == 0) return f;
    return NULL;
}


/* ================= the JSON Schema ================= */

/* A builder: the $defs being filled, the variant (dim 0: dimension-free, 2 or 3) with the suffix
 * of its definitions' names, and a failed allocation recorded instead of checked per call. */
typedef struct {
    json_t *defs;
    int dim;
    const char *suffix;
    int oom;
} sb;

static json_t *chk(sb *b, json_t *v)
{
    if (!v) b->oom = 1;
    return v;
}

static void put(sb *b, json_t *obj, const char *key, json_t *v)
{
    if (!v || !obj || json_object_set_new(obj, key, v) != 0) b->oom = 1;
}

static void push(sb *b, json_t *arr, json_t *v)
{
    if (!v || !arr || json_array_append_new(arr, v) != 0) b->oom = 1;
}

/* The name of a definition in this variant. */
static const char *def_name(const sb *b, const char *name, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s", name, b->suffix);
    return buf;
}

/* {"$ref": "#/$defs/<name><suffix>"}; suffixed = 0 for the definitions all variants share */
static json_t *ref_to(sb *b, const char *name, int suffixed)
{
    char buf[160];
    snprintf(buf, sizeof buf, "#/$defs/%s%s", name, suffixed ? b->suffix : "");
    return chk(b, json_pack("{ss}", "$ref", buf));
}

static json_t *ref(sb *b, const char *name) { return ref_to(b, name, 1); }

static void define(sb *b, const char *name, json_t *s)
{
    char buf[160];
    put(b, b->defs, def_name(b, name, buf, sizeof buf), s);
}

static json_t *string_list(sb *b, const char *const *names)
{
    json_t *a = chk(b, json_array());
    for (int i = 0; names && names[i]; ++i) push(b, a, json_string(names[i]));
    return a;
}

/* minimum / exclusiveMinimum / maximum / exclusiveMaximum / not 0 of a number schema */
static json_t *number(sb *b, const char *type, unsigned flags, double lo, double hi)
{
    json_t *s = chk(b, json_pack("{ss}", "type", type));
    if (flags & SK_MIN) put(b, s, "minimum", json_real(lo));
    if (flags & SK_XMIN) put(b, s, "exclusiveMinimum", json_real(lo));
    if (flags & SK_MAX) put(b, s, "maximum", json_real(hi));
    if (flags & SK_XMAX) put(b, s, "exclusiveMaximum", json_real(hi));
    if (strcmp(type, "number") == 0) { /* 0 or a magnitude in [CT_NUMBER_TINY, CT_NUMBER_HUGE] (ct_params.h) */
        if (!(flags & (SK_MIN | SK_XMIN)) || lo < -CT_NUMBER_HUGE) put(b, s, "minimum", json_real(-CT_NUMBER_HUGE));
        if (!(flags & (SK_MAX | SK_XMAX)) || hi > CT_NUMBER_HUGE) put(b, s, "maximum", json_real(CT_NUMBER_HUGE));
        if (!(flags & (SK_MIN | SK_XMIN)) || lo < CT_NUMBER_TINY)
            put(b, s, "allOf", json_pack("[{s{sfsfs{si}}}]", "not", "exclusiveMinimum", -CT_NUMBER_TINY,
                                         "exclusiveMaximum", CT_NUMBER_TINY, "not", "const", 0));
    }
    return s;
}

static json_t *array_of(sb *b, json_t *items, int min, int max)
{
    json_t *s = chk(b, json_pack("{ss}", "type", "array"));
    put(b, s, "items", items);
    if (min > 0) put(b, s, "minItems", json_integer(min));
    if (max > 0) put(b, s, "maxItems", json_integer(max));
    return s;
}

/* A vector of the variant's dim (2 or 3 when dimension-free). */
static json_t *vector(sb *b, json_t *items)
{
    return array_of(b, items, b->dim ? b->dim : 2, b->dim ? b->dim : 3);
}

/* "description" (+ " (unit)") and "x-unit" of a field's schema */
static void describe(sb *b, json_t *s, const char *doc, const char *unit)
{
    if (doc) {
        char buf[512];
        if (unit && unit[0]) snprintf(buf, sizeof buf, "%s (%s)", doc, unit);
        else snprintf(buf, sizeof buf, "%s", doc);
        put(b, s, "description", json_string(buf));
    }
    if (unit && unit[0]) put(b, s, "x-unit", json_string(unit));
}

/* {"allOf": [s]}: a $ref with siblings, which validators of every draft read */
static json_t *wrap(sb *b, json_t *s)
{
    json_t *w = chk(b, json_object());
    put(b, w, "allOf", json_pack("[o]", s));
    return w;
}

static json_t *field_schema(sb *b, const ct_sk_field *f)
{
    json_t *s = NULL;
    const char *const *choices = f->choices;
    if (b->dim == 2 && f->choices2) choices = f->choices2;
    if (b->dim == 3 && f->choices3) choices = f->choices3;
    switch (f->kind) {
    case SK_NUMBER: s = number(b, "number", f->flags, f->lo, f->hi); break;
    case SK_INTEGER: s = number(b, "integer", f->flags, f->lo, f->hi); break;
    case SK_BOOL: s = chk(b, json_pack("{ss}", "type", "boolean")); break;
    case SK_STRING:
        s = chk(b, json_pack("{ss}", "type", "string"));
        if (b->dim == 2 && f->pattern2) put(b, s, "pattern", json_string(f->pattern2));
        else if (f->pattern) put(b, s, "pattern", json_string(f->pattern));
        break;
    case SK_ENUM:
        s = chk(b, json_object());
        put(b, s, "enum", string_list(b, choices));
        break;
    case SK_VEC: s = vector(b, number(b, "number", f->flags, f->lo, f->hi)); break;
    case SK_IVEC: s = vector(b, number(b, "integer", SK_MIN | (f->flags & SK_MAX), f->lo, f->hi)); break;
    case SK_NUMS: s = array_of(b, number(b, "number", f->flags, f->lo, f->hi), f->n, f->n); break;
    case SK_OBJECT: s = wrap(b, ref(b, f->obj->name)); break;
    case SK_ARRAY: s = array_of(b, ref(b, f->obj->name), f->n, 0); break;
    case SK_REF: s = wrap(b, ref_to(b, f->ref, strncmp(f->ref, "contact", 7) != 0 && strcmp(f->ref, "body_contact") != 0)); break;
    }
    if (!s) return NULL;
    if (f->flags & SK_NONZERO) {
        json_t *zero = f->kind == SK_VEC ? json_pack("{s{si}}", "items", "const", 0) : json_pack("{si}", "const", 0);
        put(b, s, "not", zero);
    }
    describe(b, s, f->doc, f->unit);
    if (f->def) {
        json_error_t err;
        put(b, s, "default", json_loads(f->def, JSON_DECODE_ANY, &err));
    }
    return s;
}

/* [{"required": [k]} for each key] */
static json_t *each_required(sb *b, const char *const *keys)
{
    json_t *a = chk(b, json_array());
    for (int i = 0; keys[i]; ++i) push(b, a, json_pack("{s[s]}", "required", keys[i]));
    return a;
}

static json_t *object_schema(sb *b, const ct_sk_object *o)
{
    json_t *s = chk(b, json_pack("{ss}", "type", "object"));
    json_t *props = chk(b, json_object()), *req = chk(b, json_array());
    for (const ct_sk_field *f = o->fields; f->key; ++f) {
        if (b->dim == 2 && (f->flags & SK_3D)) continue;
        put(b, props, f->key, field_schema(b, f));
        if (f->flags & SK_REQUIRED) push(b, req, json_string(f->key));
    }
    put(b, s, "description", json_string(o->doc));
    put(b, s, "properties", props);
    if (json_array_size(req)) put(b, s, "required", req);
    else json_decref(req);
    put(b, s, "additionalProperties", json_false());
    if (o->exactly_one) put(b, s, "oneOf", each_required(b, o->exactly_one));
    if (o->at_least_one) put(b, s, "anyOf", each_required(b, o->at_least_one));
    return s;
}

/* {"description": doc, "oneOf": [$ref ...]} of definitions of this variant */
static json_t *one_of(sb *b, const char *doc, const char *const *names)
{
    json_t *alts = chk(b, json_array());
    for (int i = 0; names[i]; ++i) push(b, alts, ref(b, names[i]));
    json_t *s = chk(b, json_object());
    put(b, s, "description", json_string(doc));
    put(b, s, "oneOf", alts);
    return s;
}

/* The schema of one model parameter. */
static json_t *param_schema(sb *b, const ct_param_spec *p)
{
    json_t *s = NULL;
    unsigned fl = 0;
    if (isfinite(p->min)) fl |= (p->flags & CT_PARAM_MIN_EXCL) ? SK_XMIN : SK_MIN;
    if (isfinite(p->max)) fl |= (p->flags & CT_PARAM_MAX_EXCL) ? SK_XMAX : SK_MAX;
    switch (p->type) {
    case CT_PARAM_REAL: s = number(b, "number", fl, p->min, p->max); break;
    case CT_PARAM_INT: s = number(b, "integer", fl, p->min, p->max); break;
    case CT_PARAM_BOOL: s = chk(b, json_pack("{ss}", "type", "boolean")); break;
    case CT_PARAM_CHOICE:
        s = chk(b, json_object());
        put(b, s, "enum", string_list(b, p->choices));
        break;
    }
    if (s && (p->flags & CT_PARAM_AUTO)) {
        json_t *w = chk(b, json_object());
        put(b, w, "anyOf", json_pack("[o{ss}]", s, "const", "auto"));
        s = w;
    }
    if (!s) return NULL;
    char doc[512];
    snprintf(doc, sizeof doc, "%s%s", p->doc ? p->doc : "", (p->flags & CT_PARAM_PER_BODY) ? " (per body)" : "");
    describe(b, s, doc, p->unit);
    if (p->def_auto) put(b, s, "default", json_string("auto"));
    else if (p->type == CT_PARAM_REAL) put(b, s, "default", json_real(p->def));
    else if (p->type == CT_PARAM_INT) put(b, s, "default", json_integer((json_int_t)p->def));
    else if (p->type == CT_PARAM_BOOL) put(b, s, "default", json_boolean(p->def != 0.0));
    else put(b, s, "default", json_string(p->choices[(int)p->def]));
    return s;
}

/* "contact": one alternative per registered model (contact_<model>); a block without "model" is
 * the model none. "body_contact": the per-body parameters of every model (the parser checks them
 * against the scene's model). Shared by the variants: no suffix. */
static void def_contact(sb *b)
{
    json_t *alts = chk(b, json_array());
    json_t *per_body = chk(b, json_object());
    for (int k = 0; ct_model_registry[k]; ++k) {
        const ct_model_type *m = ct_model_registry[k];
        json_t *s = chk(b, json_pack("{ss}", "type", "object"));
        json_t *props = chk(b, json_object());
        put(b, props, "model", json_pack("{ss}", "const", m->name));
        for (const ct_param_spec *p = m->params; p && p->name; ++p) {
            put(b, props, p->name, param_schema(b, p));
            if ((p->flags & CT_PARAM_PER_BODY) && !json_object_get(per_body, p->name))
                put(b, per_body, p->name, param_schema(b, p));
        }
        put(b, s, "description", json_string(m->summary));
        put(b, s, "properties", props);
        if (strcmp(m->name, "none") != 0) put(b, s, "required", json_pack("[s]", "model"));
        put(b, s, "additionalProperties", json_false());
        char name[96];
        snprintf(name, sizeof name, "contact_%s", m->name);
        put(b, b->defs, name, s);
        push(b, alts, ref_to(b, name, 0));
    }
    json_t *contact = chk(b, json_object());
    put(b, contact, "description", json_string("the contact model (\"model\", default none) and its parameters"));
    put(b, contact, "oneOf", alts);
    put(b, b->defs, "contact", contact);
    json_t *bc = chk(b, json_pack("{ss}", "type", "object"));
    put(b, bc, "description",
        json_string("per-body values of the model's per-body parameters; the model states how two bodies' values "
                    "combine"));
    put(b, bc, "properties", per_body);
    put(b, bc, "additionalProperties", json_false());
    put(b, b->defs, "body_contact", bc);
}

/* The value forms named by SK_REF fields, in this variant. */
static void def_forms(sb *b)
{
    static const char *const meshes[] = {"mesh_file", "mesh_grid", "mesh_polyline", "mesh_arc", NULL};
    static const char *const meshes3[] = {"mesh_file", "mesh_grid", NULL};
    static const char *const probes[] = {"probe_vertices", "probe_force", "probe_energy", "probe_spring", NULL};
    define(b, "mesh", one_of(b, "a mesh file or a generator (polyline and arc: 2D only)", b->dim == 3 ? meshes3 : meshes));
    define(b, "probe", one_of(b, "a probe; its keys depend on its quantity", probes));
    define(b, "probes", array_of(b, ref(b, "probe"), 0, 0));

    json_t *sel = chk(b, json_object());
    put(b, sel, "description", json_string("\"all\", or an object with exactly one of side, box, indices"));
    put(b, sel, "anyOf", json_pack("[{ss}o]", "const", "all", ref(b, "selector_object")));
    define(b, "selector", sel);

    json_t *fixed = chk(b, json_object());
    put(b, fixed, "description", json_string("one Dirichlet entry, or an array of them"));
    put(b, fixed, "anyOf", json_pack("[oo]", ref(b, "fixed"), array_of(b, ref(b, "fixed"), 0, 0)));
    define(b, "fixed_list", fixed);

    json_t *dist = chk(b, json_object());
    put(b, dist, "anyOf", json_pack("[{ss}o]", "const", "uniform", ref(b, "linear_distribution")));
    define(b, "distribution", dist);

    json_t *scale = chk(b, json_object());
    put(b, scale, "anyOf", json_pack("[oo]", number(b, "number", SK_XMIN, 0, 0), vector(b, number(b, "number", SK_XMIN, 0, 0))));
    define(b, "scale", scale);

    define(b, "indices", array_of(b, number(b, "integer", SK_MIN, 0, 0), 1, 0));
    define(b, "points", array_of(b, array_of(b, json_pack("{ss}", "type", "number"), 2, 2), 2, 0));
    define(b, "pair", array_of(b, json_pack("{ss}", "type", "string"), 2, 2));
    define(b, "name_or_index", json_pack("{s[{ss}{sssi}]}", "anyOf", "type", "string", "type", "integer", "minimum", 0));
}

/* The rules of read_body that tie keys together: a body that is kinematic, or has a surface mesh
 * (a polyline, an arc, an .obj file: kinematic by force), takes no material, velocity or loads;
 * any other needs a material. */
static void body_rules(sb *b, json_t *body)
{
    json_t *kinematic = json_pack("{s[s]s{s{sb}}}", "required", "kinematic", "properties", "kinematic", "const", 1);
    json_t *surface = json_pack(
        "{s[s]s{s{s[{s[s]s{s{s[ss]}}}{s[s]s{s{ss}}}]}}}", "required", "mesh", "properties", "mesh", "anyOf",
        "required", "generator", "properties", "generator", "enum", "polyline", "arc", "required", "file",
        "properties", "file", "pattern", "\\.[oO][bB][jJ]$");
    put(b, body, "if", json_pack("{s[oo]}", "anyOf", kinematic, surface));
    /* nor a nonzero initial velocity or any load: its motion is prescribed */
    json_t *moving = json_pack("{s[s]s{s{s{s{si}}}}}", "required", "velocity", "properties", "velocity", "contains",
                               "not", "const", 0);
    json_t *loaded = json_pack("{s[s]s{s{si}}}", "required", "loads", "properties", "loads", "minItems", 1);
    put(b, body, "then", json_pack("{s{s[{s[s]}oo]}}", "not", "anyOf", "required", "material", moving, loaded));
    put(b, body, "else", json_pack("{s[s]}", "required", "material"));
}

/* read_segment: in 3D a rotating segment names its axis. */
static void segment_rules(sb *b, json_t *seg)
{
    put(b, seg, "if", json_pack("{s[s]s{s{s{si}}}}", "required", "angular_velocity", "properties",
                                "angular_velocity", "not", "const", 0));
    put(b, seg, "then", json_pack("{s[s]}", "required", "axis"));
}

/* Every object and form of one variant. */
static void def_variant(sb *b, int dim, const char *suffix)
{
    static const ct_sk_object *const objects[] = {
        &ct_sk_scene, &ct_sk_time, &ct_sk_solver, &ct_sk_output, &ct_sk_initial_state, &ct_sk_body, &ct_sk_dofs,
        &ct_sk_material, &ct_sk_mesh_file, &ct_sk_mesh_grid, &ct_sk_mesh_polyline, &ct_sk_mesh_arc,
        &ct_sk_transform, &ct_sk_rotate, &ct_sk_selector, &ct_sk_probe_selector, &ct_sk_box, &ct_sk_fixed,
        &ct_sk_segment, &ct_sk_load, &ct_sk_linear, &ct_sk_obstacle, &ct_sk_spring, &ct_sk_spring_end,
        &ct_sk_probe_select, &ct_sk_probe_force, &ct_sk_probe_energy, &ct_sk_probe_spring, NULL};
    b->dim = dim;
    b->suffix = suffix;
    for (int i = 0; objects[i]; ++i) {
        if (dim == 3 && (objects[i] == &ct_sk_mesh_polyline || objects[i] == &ct_sk_mesh_arc)) continue;
        json_t *o = object_schema(b, objects[i]);
        if (objects[i] == &ct_sk_body) body_rules(b, o);
        if (objects[i] == &ct_sk_segment && dim == 3) segment_rules(b, o);
        define(b, objects[i]->name, o);
    }
    def_forms(b);
}

json_t *ct_scene_schema(void)
{
    sb b = {json_object(), 0, "", 0};
    json_t *root = json_object();
    if (!b.defs || !root) b.oom = 1;
    def_contact(&b);
    def_variant(&b, 2, "_2d");
    def_variant(&b, 3, "_3d");
    def_variant(&b, 0, "");
    /* the top level: the dimension-free scene, and the variant its "dim" selects */
    put(&b, root, "$schema", json_string("https://json-schema.org/draft/2020-12/schema"));
    put(&b, root, "title", json_string("contactlab scene"));
    put(&b, root, "allOf",
        json_pack("[o{s{s{s{si}}s[s]}s{ss}}{s{s{s{si}}s[s]}s{ss}}]", ref(&b, "scene"),
                  "if", "properties", "dim", "const", 2, "required", "dim", "then", "$ref", "#/$defs/scene_2d",
                  "if", "properties", "dim", "const", 3, "required", "dim", "then", "$ref", "#/$defs/scene_3d"));
    put(&b, root, "$defs", b.defs);
    if (b.oom) {
        json_decref(root);
        return NULL;
    }
    return root;
}
