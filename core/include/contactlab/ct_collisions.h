/* ct_collisions.h — collision sets: which primitive pairs carry a contact energy, with which
 * stencil and weight, and the evaluation of Σ_k w_k ψ(d_k²) (DESIGN §3, issue 3).
 *
 * A collision is a stencil of 1–4 surface vertices (point–point, point–edge, point–triangle,
 * edge–edge, or a point against a half-space obstacle), the closest-feature type that fixes the
 * distance function, and a signed weight w (an area: m² in 3D, m in 2D). Its energy is
 *
 *     w · m(x) · ψ(d²)        (m = edge–edge mollifier for EE stencils, 1 otherwise)
 *
 * where ψ is a per-pair energy density in J/m² (e.g. κ b(d)), supplied by the model, so one set
 * serves the barrier, barrier + adhesion, and so on. The Hessian of each term is projected to PSD
 * as a whole (one dense block per stencil).
 *
 * Two constructions of the set (the formulas are written out in models/ipc_adhesion/README.md):
 *   CT_COLSET_IPC2020     the original IPC sum over every primitive pair within d̂
 *                         (point–triangle + edge–edge in 3D, point–edge in 2D), duplicates and
 *                         all, with area weights w_v/4 (PT) and (w_a + w_b)/4 (EE) in 3D, w_v/2 in 2D;
 *   CT_COLSET_CONVERGENT  the improved max approximation of convergent IPC (Li et al. 2023):
 *                         vertex quadrature ½ Σ_v w_v Ψ(v) with Ψ(v) the inclusion–exclusion sum
 *                         over triangles − edges + vertices of the other surface (2D: edges −
 *                         vertices), which equals the max for locally convex surfaces; edge–edge
 *                         terms carry the crease part s_e of their weight (d̂², a point contact,
 *                         or ½ w_e; ct_contact_mesh_edge_crease), see the README.
 * Obstacles: every surface vertex against every half-space, weight w_v.
 *
 * Vertex weights: the quadrature of the contact mesh (ct_contact_mesh.quadrature).
 *   CT_QUAD_FACE (default)  face-aware: the weight of the vertex side of a term is
 *                              w_v(n) = Σ_{f∋v} (A_f/3) max(0, c_f)/c_max,   c_f = −n_f·n
 *                           (2D: segments, A_f/2), with A_f the REST area of the incident boundary
 *                           face, n_f its outward unit normal, n the unit contact direction from
 *                           the partner's closest point towards the vertex (a half-space: its
 *                           outward normal) and c_max the largest c_f: the faces that face the
 *                           partner as well as the best one count fully, faces at an angle in
 *                           proportion, faces turned away (c_f <= 0) not at all. A flat face in
 *                           full contact carries exactly its area (its rim vertices' side faces
 *                           have c_f = 0), and a vertex whose faces are coplanar keeps w_v for any
 *                           n. Edge sides of area-weighted edge–edge terms take w_e(n), the same
 *                           sum over the faces at the edge.
 *                           Lagged: n_f and n are evaluated at the positions of the last
 *                           ct_contact_mesh_lag (xⁿ, the start of the time step), so within a step
 *                           the weights are constants, like friction's lagged λ, and every
 *                           gradient and Hessian of Σ w m ψ stays exact. n is one direction per
 *                           (vertex, partner participant), from the partner's closest point among
 *                           the vertex's candidates within reach at xⁿ: every term of a vertex
 *                           against a partner has the same weight, so the inclusion–exclusion of
 *                           the convergent set cancels as with w_v. A term whose vertex had no
 *                           candidate of that partner within reach at xⁿ (it appeared mid-step)
 *                           takes the direction of its primitive pair at xⁿ (from the closest
 *                           feature of the partner primitive, classified at xⁿ; pairs sharing it
 *                           get the same bits, so those terms cancel too); a direction tied to the
 *                           term's closest-feature stencil at x instead would change when the
 *                           stencil does inside a step, and the energy would jump there.
 *                           Floor: a weight is at least CT_QUAD_FLOOR × its vertex-quadrature
 *                           value (w_v, w_e), so no point–triangle, point–edge or half-space term
 *                           has weight 0 and the barrier still diverges (intersection-free); a
 *                           vertex without incident faces (a point) and a degenerate direction
 *                           (d = 0 at xⁿ) take w_v.
 *                           Why c_f/c_max and one n per vertex and partner, and not the projected
 *                           area Σ (A_f/3) max(0, c_f) with an n per term: a lagged weight that
 *                           depends on where the partner is while the partner slides acts like
 *                           a non-conservative tangential force (the weights lag the geometry by
 *                           a step); measured on experiments/cube_push (a cube pushed over a
 *                           frictionless floor by 0.3 N): the projected area with an n per term
 *                           gave 8 % more travel than F t²/2m, the normalized sum with an n per
 *                           term 5 % less, the normalized sum with an n per vertex and partner
 *                           2 %, within the experiment's claim (quadrature vertex: +0.2 %).
 *   CT_QUAD_VERTEX          w_v = ⅓ of ALL the incident boundary triangles (2D: ½ of the
 *                           segments), s->vert_area: a flat face in full contact carries
 *                           (1 + 2t/L) × its area (the rim vertices count their side faces too);
 *                           kept for ablation, bitwise the construction before the face weights.
 * layer: contact */
#ifndef CT_COLLISIONS_H
#define CT_COLLISIONS_H

#include "ct_bvh.h"
#include "ct_broadphase.h"
#include "ct_mesh.h"
#include "ct_obstacle.h"
#include "ct_sparse.h"
#include "ct_status.h"

typedef enum { CT_COL_PP, CT_COL_PE, CT_COL_PT, CT_COL_EE, CT_COL_PH } ct_col_kind;
typedef enum { CT_COLSET_IPC2020, CT_COLSET_CONVERGENT } ct_colset_kind;
typedef enum { CT_EEW_AREA, CT_EEW_DHAT2 } ct_ee_weight_kind;
typedef enum { CT_QUAD_FACE, CT_QUAD_VERTEX } ct_quadrature_kind;
/* Which sides integrate the contact with a kinematic participant (every surface vertex prescribed:
 * a kinematic body, a fully fixed one): ct_contact_mesh_side. */
typedef enum { CT_KIN_ONE_SIDED, CT_KIN_TWO_SIDED } ct_kinematic_sides;

/* Face-aware weights are at least this fraction of the vertex-quadrature weight (w_v, w_e). */
#define CT_QUAD_FLOOR 1e-3

/* ct_collision.flags */
enum {
    CT_COL_EDGE_FAMILY = 1 /* with ct_colset_opts.split_ee: the term comes from the edge–edge family
                              of the convergent set (its EE terms and their point–edge
                              corrections), not from the vertex quadrature */
};

typedef struct ct_collision {
    unsigned char kind; /* ct_col_kind */
    unsigned char type; /* ct_pe_type / ct_pt_type / ct_ee_type for PE / PT / EE */
    short flags;        /* CT_COL_EDGE_FAMILY */
    int v[4];           /* stencil vertices (PP: 2, PE: p e0 e1, PT: p t0 t1 t2, EE: a0 a1 b0 b1;
                           PH: v[0] the vertex, v[1] the obstacle index) */
    int side;           /* number of stencil vertices on the first primitive (PP 1, PE 1, PT 1,
                           EE 2, PH 1): vertices [0, side) against [side, n) */
    double w;           /* signed weight (m² or m) */
    double eps_x;       /* EE mollifier threshold (0: not mollified) */
} ct_collision;

/* Number of stencil vertices of a collision. */
int ct_collision_nverts(const ct_collision *c);

/* Surface topology needed by the constructions, built once per simulation. */
typedef struct ct_contact_mesh {
    int dim, nv;
    const ct_surface *s;
    const double *x_rest;    /* nv*dim rest positions (for the EE mollifier) */
    const int *part;         /* participant (body) of each vertex */
    const unsigned char *movable; /* nv: 0 if the vertex is fully prescribed (may be NULL) */
    double *wv;              /* vertex-quadrature weights: area (3D) / length (2D) share, = s->vert_area
                                (CT_QUAD_VERTEX; the base of the face-aware floor) */
    int *face_edges;         /* 3D: nf*3, edge k joins faces[3f+k] and faces[3f+(k+1)%3] */
    int *ef_ptr, *ef_opp;    /* 3D: per edge, the opposite vertex of each incident face (CSR) */
    int *ve_ptr, *ve_list;   /* per vertex, incident surface edges (CSR) */
    int *vv_ptr, *vv_list;   /* per vertex, adjacent surface vertices (CSR, sorted) */
    unsigned char *interior; /* 3D: vertex not on the border of an open surface;
                                2D: vertex with exactly two incident segments */
    ct_quadrature_kind quadrature; /* the vertex weights of the sets built on this mesh: CT_QUAD_FACE
                                (set by ct_contact_mesh_init) or CT_QUAD_VERTEX (see the top) */
    int *vf_ptr, *vf_list;   /* 3D: per vertex, incident faces (CSR, increasing) */
    int *ef_face;            /* 3D: per edge, the incident faces (CSR with ef_ptr, increasing) */
    /* the lag of the face-aware weights (ct_contact_mesh_lag) */
    double *x_lag;           /* nv*dim positions xⁿ */
    double *face_un;         /* 3D: nf*3, 2D: ned*2: outward unit normals at xⁿ (0 if degenerate) */
    int vdir_on, edir_on;    /* the per-partner directions below are set */
    int vshare_on;           /* vdir_s is set (a 3D lag with `edges`) */
    int *vdir_ptr, *vdir_part; /* per vertex (CSR, nv+1): one entry per partner participant with a */
    double *vdir_w;          /*   candidate within reach at xⁿ: the vertex's face-aware weight for the
                                  direction from the partner's closest point at xⁿ towards it */
    double *vdir_s;          /* with vshare_on, the same entries: ct_contact_mesh_edge_share for that
                                  direction (the vertex weights of area-weighted edge–edge terms) */
    int *edir_ptr, *edir_part; /* 3D, per edge (ned+1): the same from the edge–edge candidates */
    double *edir_w;
    long vdir_cap, edir_cap, lag_rows_cap;
    struct ct_lag_row *lag_rows; /* work memory of the lag */
    ct_kinematic_sides kin_sides; /* CT_KIN_ONE_SIDED (set by ct_contact_mesh_init) or TWO_SIDED */
    int npart;               /* participants (1 + the largest part[] of a surface vertex) */
    unsigned char *part_kin; /* npart: 1 if every surface vertex of the participant is prescribed
                                (all 0 when movable is NULL) */
    double *edge_crease;     /* 3D: per surface edge, ct_contact_mesh_edge_crease (at the lag) */
    double *edge_l2_rest;    /* 3D with x_rest: per surface edge, |e|² at x_rest; the EE mollifier
                                threshold of edges a, b is 1e-3 · l2[a] · l2[b] (ct_ee_mollifier_eps) */
} ct_contact_mesh;

/* Topology, quadrature CT_QUAD_FACE and its lag at x_rest (so the face-aware weights are defined
 * before any lag; a model that wants w_v sets cm->quadrature = CT_QUAD_VERTEX). */
ct_status ct_contact_mesh_init(ct_contact_mesh *cm, int dim, const ct_surface *s, const double *x_rest,
                               const int *part, const unsigned char *movable);
void ct_contact_mesh_free(ct_contact_mesh *cm);
/* Lag the face-aware weights at x (nv*dim): copy x, compute the faces' normals there and, from the
 * proximity candidates cand at x (NULL: none) within `reach` of each other at x (the model's
 * activation distance), each vertex's contact direction per partner participant: from the
 * partner's closest point at x (over the vertex's candidates of that partner) towards the vertex;
 * with `edges` (3D), the same for the edges from the edge–edge candidates, and each vertex entry's
 * edge share (ct_contact_mesh_edge_share; both needed by area-weighted edge–edge terms only). In 3D
 * also the edges' creases (ct_contact_mesh_edge_crease). A model calls it at the start of each step (begin_step,
 * x = xⁿ, candidates covering every pair within reach at xⁿ) and drops whatever it built from the
 * set before (the terms' weights change). O(nv + nf + candidates · log); it reuses its memory
 * (allocates only when the candidates grow). */
ct_status ct_contact_mesh_lag(ct_contact_mesh *cm, const double *x, const ct_candidates *cand, double reach,
                              int edges);
/* Face-aware weight of surface vertex v for the unit contact direction n (from the partner
 * towards v): Σ_{f∋v} (A_f/3) max(0, c_f)/c_max, c_f = −n_f·n with the lagged normals and c_max
 * the largest c_f (2D: segments, A/2): the faces that face n as well as the best one count fully,
 * those at an angle in proportion, those facing away not at all; at least CT_QUAD_FLOOR·w_v; w_v
 * for a vertex without incident faces or a non-finite n. */
double ct_contact_mesh_vertex_weight(const ct_contact_mesh *cm, int v, const double *n);
/* The same for surface edge e (3D) over the faces at e, at least CT_QUAD_FLOOR·w_e. */
double ct_contact_mesh_edge_weight(const ct_contact_mesh *cm, int e, const double *n);
/* The crease s_e of surface edge e (3D) at the lag positions xⁿ (ct_contact_mesh_lag; the rest
 * positions until the first lag): max over its pairs of incident faces of (1 − n_i·n_j)/2 =
 * sin²(φ/2), φ the angle between their outward normals (a face whose order runs along e the same
 * way as the other's is flipped first): 0 flat, ½ a right-angled edge, 1 a knife edge, a free
 * edge (one face) or a degenerate face; at least CT_QUAD_FLOOR. 1 in 2D. Lagged like the
 * face-aware weights, so constant within a step: a face that folds in a step is a crease in the
 * next. The convergent set's edge family carries s_e of an edge's weight
 * (models/ipc_adhesion/README.md). */
double ct_contact_mesh_edge_crease(const ct_contact_mesh *cm, int e);
/* ½ Σ_{e∋v} (1 − s_e) w_e(n): what the vertex family of the convergent set with area-weighted
 * edges adds to vertex v's weight for the contact direction n (NULL or non-finite: the rest
 * weights w_e), the flat part of each incident edge's share, half to each end (3D; 0 in 2D). */
double ct_contact_mesh_edge_share(const ct_contact_mesh *cm, int v, const double *n);
/* The factor of the two-sided quadrature's ½ for surface vertex v's terms against participant
 * `partner`. CT_KIN_ONE_SIDED: a kinematic participant is an obstacle, integrated from the movable
 * side only (like a half-space): 2 for a movable vertex against a kinematic partner (its weight
 * w_v, not w_v/2), CT_QUAD_FLOOR for a kinematic vertex against a movable partner (its own
 * quadrature is not counted, but its barrier still diverges, so a prescribed corner cannot pass
 * through a movable face), 1 otherwise. CT_KIN_TWO_SIDED: 1 (the symmetric average ½∫_A + ½∫_B).
 * Why: the partner's vertex quadrature samples the integrand b(d) at its own vertices, and where
 * the movable body's surface ends (a rim sliding over a kinematic floor) that integrand drops from
 * b(gap) to 0 within √(d̂² − gap²), far below the floor's cell size: each floor vertex crossing a
 * rim adds or removes ½ w_u b(gap) at once, a wall (experiments/cube_push: ±0.3 N of horizontal
 * force on a cube pushed by 0.3 N over a frictionless floor). The movable side's quadrature of the
 * same integral is exact under sliding (a vertex over a flat surface sees one copy of b). */
double ct_contact_mesh_side(const ct_contact_mesh *cm, int v, int partner);

typedef struct ct_collision_set {
    long n, cap;
    ct_collision *c;
} ct_collision_set;

void ct_collision_set_init(ct_collision_set *cs);
void ct_collision_set_free(ct_collision_set *cs);

typedef struct ct_colset_opts {
    ct_colset_kind kind;
    ct_ee_weight_kind ee_weight; /* CONVERGENT only (IPC2020 always uses areas) */
    double dhat;                 /* activation distance: pairs with d < dhat are kept */
    int threads;
    double ee_dhat;              /* ee_weight = DHAT2: ω_e = ee_dhat² (0: dhat). A model whose
                                    energy reaches beyond its barrier (adhesion) keeps the
                                    barrier's d̂ here, so ω does not jump when it switches on */
    int split_ee;                /* CONVERGENT: keep the edge–edge family's terms apart from the
                                    vertex quadrature's (not merged even with equal stencils) and
                                    flag them CT_COL_EDGE_FAMILY, so that a model can leave them
                                    out of energies that only the surface integral should carry
                                    (adhesion); 0: merged, no flags */
} ct_colset_opts;

/* Build the set of pairs active at x (d < d̂) from broad-phase candidates (proximity,
 * inflated by d̂) and the obstacles. Terms with the same stencil are merged (weights summed);
 * zero-weight terms are dropped (face-aware weights: also sums within 1e-12 of the summed
 * magnitudes, the round-off of terms that cancel). The order is deterministic. */
ct_status ct_collision_set_build(ct_collision_set *cs, const ct_contact_mesh *cm, const ct_candidates *cand,
                                 const ct_obstacle *obs, int nobs, const double *x, const ct_colset_opts *o);
/* The same, and `near` receives the candidates (in their order) whose distance at x, as the
 * build computes it, is below near_dist (a NaN distance keeps a pair). A model that reuses its
 * candidates while no vertex moves more than m/2 may build from the near ones of
 * near_dist = d̂ + m (taken at the x of the query) instead: a dropped pair stays farther than d̂,
 * and neither it nor the vertices and edges reached only through it give a term, so the set is
 * the same, term for term and bit for bit (ct_candidate_cache.h packages this reuse). */
ct_status ct_collision_set_build_near(ct_collision_set *cs, const ct_contact_mesh *cm, const ct_candidates *cand,
                                      const ct_obstacle *obs, int nobs, const double *x, const ct_colset_opts *o,
                                      double near_dist, ct_candidates *near);

/* Energy density of a pair as a function of s = d²: returns ψ(s), and ψ_s, ψ_ss when the
 * pointers are non-NULL. `c` identifies the pair (for per-pair parameters). */
typedef double (*ct_density_fn)(const void *ctx, const ct_collision *c, double s, double *ps, double *pss);

/* Distance² of collision c at x, with gradient (n*dim) and Hessian ((n*dim)², column-major)
 * when non-NULL. */
double ct_collision_d2(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                       const double *x, double *g, double *H);

/* Σ w m ψ at x. */
double ct_collision_energy(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                           const double *x, ct_density_fn f, const void *ctx, int threads);
/* g += ∇ Σ w m ψ (nv*dim). Deterministic (per-term work in parallel, summed in set order). */
ct_status ct_collision_gradient(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                const double *x, ct_density_fn f, const void *ctx, int threads, double *g);
/* Σ w m ψ at x (the same number as ct_collision_energy) and, in loc (12 per term, cs->n terms),
 * each term's gradient (as ct_collision_term_grad): one pass over the terms where a model needs
 * both at the same x. ct_collision_gradient_add(cs, cm, loc, g) then adds them to g exactly as
 * ct_collision_gradient would. s (NULL, or cs->n entries) receives each term's d² at x, the value
 * of ct_collision_d2 (ct_collision_correct_trial's s1 when x is its trial). */
double ct_collision_energy_grad(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                const double *x, ct_density_fn f, const void *ctx, int threads, double *loc,
                                double *s);
void ct_collision_gradient_add(const ct_collision_set *cs, const ct_contact_mesh *cm, const double *loc, double *g);
/* Append the per-term PSD-projected Hessian blocks. */
ct_status ct_collision_hessian(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                               const double *x, ct_density_fn f, const void *ctx, int threads, ct_triplets *H);
/* The same blocks unprojected: the exact Hessian of Σ w m ψ, indefinite in general (terms of
 * negative weight, the curvature of the distance). For a Newton iteration that checks the
 * assembled matrix is positive definite (ct_step_ctx.exact_hessian). */
ct_status ct_collision_hessian_exact(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                     const double *x, ct_density_fn f, const void *ctx, int threads, ct_triplets *H);

/* Per-term gradient of one collision (n*dim entries) — for force reports and friction λ. */
void ct_collision_term_grad(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                            const double *x, ct_density_fn f, const void *ctx, double *g);

/* Normal force magnitude of one term, λ = −∂(w m ψ)/∂d at x (N; signed like w). */
double ct_collision_normal_force(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                 const double *x, ct_density_fn f, const void *ctx);

/* Participant of stencil vertex k of c (obstacles: nbodies + obstacle index). */
int ct_collision_part(const ct_collision *c, const ct_contact_mesh *cm, int nbodies, int k);

/* Smallest distance over the set (INFINITY if empty). */
double ct_collision_min_distance(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                 const double *x);

/* Second-order correction of a line-search trial point x1 = x0 + alpha dx (nv*dim each; x1 is
 * corrected in place), for a model's correct_trial op (ct_model.h): every term of positive weight
 * within dmax at x0 whose distance at x1 fell below ratio × its linear prediction
 * d(x0) + alpha ∇d(x0)·dx (the curvature of the distance ate the Newton step's gain) has its
 * stencil vertices moved along ∇d(x1) so that d rises back to min(prediction, dmax) to first
 * order; a vertex in several such terms takes the mean of their moves, and vertices marked not
 * movable in cm stay. *ncorrected: the number of corrected terms (0: x1 unchanged). *work
 * (*work_cap doubles; NULL, 0 at first) is the caller's work memory, grown here as needed and
 * released with free(). Why and how: core/contact/collisions_correct.c. CT_ENOMEM if the work
 * memory cannot be grown. s1 (NULL, or cs->n entries): the terms' d² at x1 when the caller has them
 * (ct_collision_energy_grad's s at x1: the same values), so they are not computed again. */
#define CT_SOC_RATIO 0.5 /* the models' ratio: correct a term that kept less than half its predicted gap */
ct_status ct_collision_correct_trial(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                     const double *x0, const double *dx, double alpha, double ratio, double dmax,
                                     const double *s1, int threads, double *x1, double **work, size_t *work_cap,
                                     long *ncorrected);

#endif
