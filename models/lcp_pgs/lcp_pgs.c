/* lcp_pgs.c — Gascón, Zurdo & Otaduy 2010, "Constraint-Based Simulation of Adhesive Contact":
 * the velocity-level contact LCP of the linearized implicit Euler step, solved by block projected
 * Gauss–Seidel with implicit adhesion constraints (paper 001 §3–5; README.md).
 *
 * Constraint family (ct_model.h): the core assembles A = M + h²K(xⁿ) and b on the free dofs; this
 * model's step op
 *   1. finds the contacts of the step: every surface vertex against every half-space, and (from a
 *      swept broad phase over the unconstrained motion xⁿ → xⁿ + h v_free, ct_broadphase_ccd) the
 *      closest face (3D) / segment (2D) of each other participant, when the pair is within the
 *      reach at xⁿ or at the end of the unconstrained motion, or ACCD finds them meeting on the
 *      way (paper §3.1: continuous collision detection between state updates);
 *   2. gives each contact a frame (n, t, b): n from the partner's closest point at xⁿ towards the
 *      vertex (a half-space's normal; the partner face's outward normal when the vertex is behind
 *      it), t along the unconstrained tangential relative velocity (any tangent if it is zero),
 *      b = n × t; and Jacobian rows through x = J q: row r of contact i is the q-space vector
 *      Σ_k w_k Jᵀ(e_r at vertex k), w = (+1 on the vertex, −barycentric weights on the partner);
 *   3. forms the local problem u = W λ + q (ct_pgs.h) with W = C_fᵀ A⁻¹ C_f (C_f the rows on the
 *      free dofs; A⁻¹ C_f by multi-right-hand-side solves against the core's factor) and
 *      q = J v_free + (g/h, 0, 0): u_n ≥ 0 is the linearized gap g + h J_n v ≥ 0 at the end of the
 *      step (position level, paper eq. 5). W couples only contacts of the same group of bodies
 *      connected by contacts (kinematic bodies and half-spaces connect nothing): it is stored
 *      dense per group;
 *   4. solves it with ct_pgs_solve (ADHESIVE_BOX: eq. 16 and steps 1–8 with the friction pyramid,
 *      adhesion factor a_i = h² A_i C β_i²; or COULOMB_DISK without adhesion), warm-started
 *      from the tracked pairs' last impulses, and returns r = Σ_i C_i λ_i;
 *   5. after the step (end_step) evolves β per tracked pair by eq. 11/12 (explicit Euler, clamped
 *      to [0, 1], §5.3) and drops the pairs whose gap exceeds debond_gap (full debonding).
 *
 * Not intersection-free: the linearized constraints can let surfaces overlap (curved or fast
 * motion, edges crossing without a vertex); the core's verifier logs /steps/intersections and
 * this model logs the deepest end-of-step gap (negative: penetration).
 */
#include "contactlab/ct_broadphase.h"
#include "contactlab/ct_ccd.h"
#include "contactlab/ct_collisions.h"
#include "contactlab/ct_distance.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_pairs.h"
#include "contactlab/ct_pgs.h"
#include "contactlab/ct_rcc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    P_MU, P_C, P_W, P_ETA, P_R, P_P0, P_BETA0, P_MARGIN, P_THICK, P_DEBOND, P_LAW, P_TANG, P_MAX_ITER, P_TOL,
    P_OMEGA, P_SHUFFLE, P_WARM, P_NPARAMS
};

static const char *const law_choices[] = {"box", "disk", NULL};
static const char *const tang_choices[] = {"max", "min", NULL};

static const ct_param_spec lcp_pgs_params[] = {
    [P_MU] = {"mu", CT_PARAM_REAL, 0.0, "", 0, INFINITY, 0, NULL, "Coulomb friction coefficient μ", 0},
    [P_C] = {"c", CT_PARAM_REAL, 0.0, "N/m^3", 0, INFINITY, 0, NULL,
             "adhesion stiffness C: a bonded contact holds the traction C β² g at gap g (eq. 10); 0: no adhesion",
             0},
    [P_W] = {"w", CT_PARAM_REAL, 1.0, "J/m^2", 0, INFINITY, 0, NULL,
             "adhesion energy W: debonding starts when C g² β exceeds it (eq. 12)", 0},
    [P_ETA] = {"eta", CT_PARAM_REAL, 1.0, "J*s/m^2", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
               "debonding viscosity η: β falls at (W − C g² β)/η (eq. 12)", 0},
    [P_R] = {"r", CT_PARAM_REAL, 0.0, "1/(Pa*s)", 0, INFINITY, 0, NULL,
             "bonding rate r under compression: β rises at r (p − β p₀) (eq. 11)", 0},
    [P_P0] = {"p0", CT_PARAM_REAL, 1e3, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
              "saturation pressure p₀: bonding stops at β = p/p₀ (eq. 11)", 0},
    [P_BETA0] = {"beta0", CT_PARAM_REAL, 0.0, "", 0, 1, 0, NULL,
                 "adhesion intensity of the contacts found in the first step (later ones start at 0)", 0},
    [P_MARGIN] = {"margin", CT_PARAM_REAL, 1e-3, "m", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
                  "a vertex and a partner form a contact when they are closer than this at the start of the step "
                  "or at the end of the unconstrained motion, or meet on the way",
                  0},
    [P_THICK] = {"thickness", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_AUTO, NULL,
                 "the constraints keep the end-of-step gap at least this (a resting contact then ends at a small "
                 "positive gap instead of exactly 0, where round-off makes surfaces touch; auto: 1e-3 margin)",
                 1},
    [P_DEBOND] = {"debond_gap", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                  "full debonding: a bonded pair whose gap exceeds this is dropped (auto: twice the reference gap "
                  "sqrt(W/C), §6)",
                  1},
    [P_LAW] = {"law", CT_PARAM_CHOICE, 0, "", 0, 0, 0, law_choices,
               "box: the paper's block PGS with implicit adhesion and the 4-sided friction pyramid; disk: Coulomb "
               "friction on the disk, no adhesion",
               0},
    [P_TANG] = {"tangential", CT_PARAM_CHOICE, 0, "", 0, 0, 0, tang_choices,
                "combination of the friction and tangential adhesion bounds (box law): max (the firmer, default) "
                "or min",
                0},
    [P_MAX_ITER] = {"pgs_max_iter", CT_PARAM_INT, 500, "", 1, 1e7, 0, NULL, "PGS sweeps per step at most", 0},
    [P_TOL] = {"pgs_tol", CT_PARAM_REAL, 1e-6, "", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
               "PGS stops when its residual (ct_pgs.h: box: the largest impulse change of a sweep relative to "
               "the largest impulse; disk: the natural-map residual) is below this",
               0},
    [P_OMEGA] = {"omega", CT_PARAM_REAL, 1.0, "", 0, 2, CT_PARAM_MIN_EXCL | CT_PARAM_MAX_EXCL, NULL,
                 "SOR factor of the PGS updates", 0},
    [P_SHUFFLE] = {"shuffle", CT_PARAM_BOOL, 0, "", 0, 1, 0, NULL,
                   "visit the contacts in a new pseudo-random order every sweep (seeded by the step)", 0},
    [P_WARM] = {"warm_start", CT_PARAM_BOOL, 1, "", 0, 1, 0, NULL,
                "start PGS from the tracked pairs' impulses of the last step (re-projected on the new frames)", 0},
    [P_NPARAMS] = {NULL},
};

/* the state a pair keeps across steps */
typedef struct {
    double beta;     /* adhesion intensity */
    double lam[3];   /* the last impulse, world frame (N s) */
    double gap;      /* the gap at the end of the last step (m) */
} pair_rec;

/* a contact of the current step */
typedef struct {
    uint64_t key;    /* ct_pair_key(vertex, partner participant) */
    int nv;          /* stencil vertices */
    int v[4];        /* x-vertices: the contact vertex first */
    double w[4];     /* +1 on the vertex, −barycentric weights on the partner */
    int pa, pb;      /* the vertex's participant, the partner's (nbodies + o for half-space o) */
    double off;      /* the gap's constant part: −n·p for a half-space, 0 otherwise */
    double fr[3][3]; /* n, t, b */
    double gap;      /* n·(Σ w_k xⁿ_k) + off (m) */
    double area;     /* adhesion area (m²; 2D m): 0 for no adhesion */
    double beta;
    double lam[3];   /* this step's impulses in the frame (N s) */
    int group;       /* its group of coupled contacts */
    int edge;        /* an edge–edge contact */
    int prim;        /* the partner's face (3D) / segment (2D), −1 for a half-space or an edge–edge contact */
} contact;

typedef struct {
    double mu, cadh, w, eta, r, p0, beta0, margin, thick, debond;
    ct_pgs_opts opts;
    int warm;
    int dim, np, nbodies;
    unsigned char *movable;     /* nx */
    unsigned char *part_kin;    /* np: kinematic participant (every vertex prescribed), or obstacle */
    ct_contact_mesh cm;         /* face-aware vertex areas (lagged at xⁿ) */
    ct_pair_map pairs;          /* pair_rec by key */
    ct_candidates cand;
    contact *c;
    long m, cap;
    /* the local problem */
    int *ptr, *col, *grp_first, *grp_n, *order;
    double *val, *q, *mu_arr, *adh, *lam, *u;
    long val_cap, col_cap;
    long m_cap_arrays;
    double *dx;                 /* nx·dim: h v_free, the unconstrained motion of the step */
    double *x1;                 /* nx·dim: xⁿ + dx, the end of the unconstrained motion */
    long dx_cap, x1_cap;
    /* statistics of the last step */
    ct_pgs_result res;
    double min_gap;             /* the deepest end-of-step gap (m; negative: penetration) */
    int ngroups;                /* groups of coupled contacts in the last step */
    long w_blocks;              /* dim×dim blocks of W in the last step */
    double t_contacts, t_delassus, t_pgs; /* wall time of the last step's phases (s) */
    int started;
    const char *names[14];
} lcp_state;

/* ------------------------------------------------------------------------------------------ */

static void destroy(void *p)
{
    lcp_state *st = p;
    free(st->movable);
    free(st->part_kin);
    ct_contact_mesh_free(&st->cm);
    ct_pair_map_free(&st->pairs);
    ct_candidates_free(&st->cand);
    free(st->c);
    free(st->ptr);
    free(st->col);
    free(st->grp_first);
    free(st->grp_n);
    free(st->order);
    free(st->val);
    free(st->q);
    free(st->mu_arr);
    free(st->adh);
    free(st->lam);
    free(st->u);
    free(st->dx);
    free(st->x1);
}

static ct_status init(void *p, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    (void)diag;
    lcp_state *st = p;
    const double *v = prm->value;
    st->mu = v[P_MU], st->cadh = v[P_C], st->w = v[P_W], st->eta = v[P_ETA], st->r = v[P_R], st->p0 = v[P_P0];
    st->beta0 = v[P_BETA0], st->margin = v[P_MARGIN];
    st->thick = prm->is_auto[P_THICK] ? 1e-3 * st->margin : v[P_THICK];
    prm->value[P_THICK] = st->thick;
    if (prm->is_auto[P_DEBOND]) {
        st->debond = st->cadh > 0.0 ? 2.0 * sqrt(st->w / st->cadh) : INFINITY;
        prm->value[P_DEBOND] = isfinite(st->debond) ? st->debond : NAN;
    } else {
        st->debond = v[P_DEBOND];
    }
    st->opts = ct_pgs_default_opts();
    st->opts.law = (int)v[P_LAW] == 1 ? CT_PGS_COULOMB_DISK : CT_PGS_ADHESIVE_BOX;
    st->opts.tangential = (int)v[P_TANG] == 1 ? CT_PGS_TANGENTIAL_MIN : CT_PGS_TANGENTIAL_MAX;
    st->opts.max_iter = (int)v[P_MAX_ITER];
    st->opts.tol = v[P_TOL];
    st->opts.omega = v[P_OMEGA];
    st->opts.shuffle = v[P_SHUFFLE] != 0.0;
    st->warm = v[P_WARM] != 0.0;
    st->dim = c->dim, st->nbodies = c->nbodies, st->np = c->nbodies + c->nobstacles;
    st->movable = malloc((size_t)c->nx + 1);
    st->part_kin = calloc((size_t)st->np + 1, 1);
    if (!st->movable || !st->part_kin) return CT_ENOMEM;
    for (int k = 0; k < c->nx; ++k) st->movable[k] = !(c->vert_kinematic && c->vert_kinematic[k]);
    ct_status s = ct_contact_mesh_init(&st->cm, c->dim, c->surf, c->x_rest, c->vert_part, st->movable);
    if (s != CT_OK) return s;
    for (int q = 0; q < st->np; ++q) st->part_kin[q] = q >= c->nbodies || (q < st->cm.npart && st->cm.part_kin[q]);
    if ((s = ct_pair_map_init(&st->pairs, sizeof(pair_rec))) != CT_OK) return s;
    ct_candidates_init(&st->cand);
    static const char *const names[14] = {"lcp_contacts", "lcp_bonded", "beta_min", "beta_mean", "beta_max",
                                          "pgs_iters", "pgs_residual", "pgs_converged", "min_gap", "lcp_groups",
                                          "w_blocks", "t_contacts", "t_delassus", "t_pgs"};
    for (int k = 0; k < 14; ++k) st->names[k] = names[k];
    return CT_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* contacts                                                                                     */

static const double *X(const double *x, int dim, int k) { return x + (size_t)dim * (size_t)k; }

static ct_status push_contact(lcp_state *st, const contact *ct)
{
    if (st->m == st->cap) {
        long cap = st->cap ? 2 * st->cap : 256;
        contact *nc = realloc(st->c, (size_t)cap * sizeof *nc);
        if (!nc) return CT_ENOMEM;
        st->c = nc, st->cap = cap;
    }
    st->c[st->m++] = *ct;
    return CT_OK;
}

/* Unit vector and norm of a (dim). */
static double unit(int dim, const double *a, double *n)
{
    double l = 0.0;
    for (int d = 0; d < dim; ++d) l += a[d] * a[d];
    l = sqrt(l);
    for (int d = 0; d < dim; ++d) n[d] = l > 0.0 ? a[d] / l : 0.0;
    return l;
}

/* The outward unit normal of surface face f (3D) / segment f (2D) at x. */
static void prim_normal(const ct_surface *s, int dim, const double *x, int f, double *n)
{
    if (dim == 3) {
        const int *F = s->faces + 3 * f;
        const double *a = X(x, 3, F[0]), *b = X(x, 3, F[1]), *cc = X(x, 3, F[2]);
        const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {cc[0] - a[0], cc[1] - a[1], cc[2] - a[2]};
        const double cr[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
        unit(3, cr, n);
    } else {
        const double *a = X(x, 2, s->edges[2 * f]), *b = X(x, 2, s->edges[2 * f + 1]);
        const double d[2] = {b[1] - a[1], -(b[0] - a[0])};
        unit(2, d, n);
    }
}

/* Distance of vertex v to primitive f (face in 3D, segment in 2D) at x, with the partner's
 * barycentric weights wb (3 or 2) of the closest point. */
static double prim_dist(const ct_surface *s, int dim, const double *x, int v, int f, double *wb)
{
    const double *P = X(x, dim, v);
    double cp[3] = {0, 0, 0};
    if (dim == 3) {
        const int *F = s->faces + 3 * f;
        double b1, b2;
        ct_pt_closest(P, X(x, 3, F[0]), X(x, 3, F[1]), X(x, 3, F[2]), &b1, &b2);
        wb[0] = 1.0 - b1 - b2, wb[1] = b1, wb[2] = b2;
        for (int k = 0; k < 3; ++k)
            for (int d = 0; d < 3; ++d) cp[d] += wb[k] * X(x, 3, F[k])[d];
    } else {
        double t;
        const int e0 = s->edges[2 * f], e1 = s->edges[2 * f + 1];
        ct_pe_closest(2, P, X(x, 2, e0), X(x, 2, e1), &t);
        wb[0] = 1.0 - t, wb[1] = t;
        for (int d = 0; d < 2; ++d) cp[d] = wb[0] * X(x, 2, e0)[d] + wb[1] * X(x, 2, e1)[d];
    }
    double l = 0.0;
    for (int d = 0; d < dim; ++d) l += (P[d] - cp[d]) * (P[d] - cp[d]);
    return sqrt(l);
}

static ct_status grow(void **p, long *cap, long need, size_t sz);

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Per (vertex, partner participant): the closest primitive of the candidates. */
typedef struct {
    int v, q, f;
    double d;
} best_t;

static int cmp_best(const void *a, const void *b)
{
    const best_t *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    if (x->q != y->q) return x->q < y->q ? -1 : 1;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->f > y->f) - (x->f < y->f);
}

/* A frame (n given): t along the tangential part of vrel if it is not tiny, else any tangent;
 * b = n × t (3D). */
static void make_frame(int dim, const double *vrel, double fr[3][3])
{
    const double *n = fr[0];
    if (dim == 2) {
        fr[1][0] = -n[1], fr[1][1] = n[0], fr[1][2] = 0.0;
        fr[2][0] = fr[2][1] = fr[2][2] = 0.0;
        return;
    }
    double vn = vrel[0] * n[0] + vrel[1] * n[1] + vrel[2] * n[2], vt[3];
    for (int d = 0; d < 3; ++d) vt[d] = vrel[d] - vn * n[d];
    double l = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    double vmag = sqrt(vrel[0] * vrel[0] + vrel[1] * vrel[1] + vrel[2] * vrel[2]);
    if (!(l > 1e-12 * fmax(vmag, 1e-300)) || !(l > 1e-14)) {
        /* any tangent: the axis least aligned with n, orthogonalized */
        int k = fabs(n[0]) <= fabs(n[1]) ? (fabs(n[0]) <= fabs(n[2]) ? 0 : 2) : (fabs(n[1]) <= fabs(n[2]) ? 1 : 2);
        double e[3] = {0, 0, 0};
        e[k] = 1.0;
        double en = e[0] * n[0] + e[1] * n[1] + e[2] * n[2];
        for (int d = 0; d < 3; ++d) vt[d] = e[d] - en * n[d];
        l = sqrt(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
    }
    for (int d = 0; d < 3; ++d) fr[1][d] = vt[d] / l;
    fr[2][0] = n[1] * fr[1][2] - n[2] * fr[1][1];
    fr[2][1] = n[2] * fr[1][0] - n[0] * fr[1][2];
    fr[2][2] = n[0] * fr[1][1] - n[1] * fr[1][0];
}

/* The contact's relative velocity Σ w_k vx_k (of the vertex with respect to the partner). */
static void rel_velocity(const contact *ct, int dim, const double *vx, double *vr)
{
    vr[0] = vr[1] = vr[2] = 0.0;
    for (int k = 0; k < ct->nv; ++k)
        for (int d = 0; d < dim; ++d) vr[d] += ct->w[k] * vx[(size_t)ct->v[k] * dim + d];
}

/* The adhesion area of vertex v against participant q for the contact normal n (towards v):
 * its face-aware weight (the area it presents to the partner); between two movable bodies the
 * contacts of both sides carry the interface, each half; against a half-space or a kinematic
 * body the vertex carries it whole; a kinematic vertex carries none. So a flat interface carries
 * its area once at any pair of resolutions. Not the paper's "smaller of the two primitives'
 * averaged areas" (§5.1): with these vertex areas (⅓ of the incident faces, not their mean) a
 * cap by the partner face's area halves the interface on matched meshes (README.md). */
static double contact_area(const lcp_state *st, int v, int pa, int pb, const double *n)
{
    if (st->part_kin[pa]) return 0.0;
    const double a = ct_contact_mesh_vertex_weight(&st->cm, v, n);
    return st->part_kin[pb] ? a : 0.5 * a;
}

/* Whether surface edge e lies inside a flat region at x: its two faces coplanar (normals within
 * 1e-6 of each other). An edge crossing such an edge crosses the plane of its faces, and the
 * vertex contacts of its own end points already keep them in front of that plane: only edges
 * with a crease on both sides need an edge–edge contact. Called with the rest shape: a flat
 * region that bends stays covered by its vertex contacts, while at xⁿ the 1e-6 test makes every
 * edge of a bent region a crease (the peel's lower plate after debonding: 132–198 edge–edge
 * contacts instead of 2, duplicating the vertex contacts). */
static int flat_edge(const ct_contact_mesh *cm, const double *x, int e)
{
    if (cm->ef_ptr[e + 1] - cm->ef_ptr[e] != 2) return 0;
    double n[2][3];
    for (int k = 0; k < 2; ++k) prim_normal(cm->s, 3, x, cm->ef_face[cm->ef_ptr[e] + k], n[k]);
    return n[0][0] * n[1][0] + n[0][1] * n[1][1] + n[0][2] * n[1][2] > 1.0 - 1e-6;
}

/* The distance between segments p0p1 and q0q1 (3D). */
static double seg_dist(const double *p0, const double *p1, const double *q0, const double *q1)
{
    double sa, sb, l = 0.0;
    ct_ee_closest(p0, p1, q0, q1, &sa, &sb);
    for (int d = 0; d < 3; ++d) {
        const double r = p0[d] + sa * (p1[d] - p0[d]) - q0[d] - sb * (q1[d] - q0[d]);
        l += r * r;
    }
    return sqrt(l);
}

/* 3D edge–edge contacts from the swept candidates: edges that cross where no vertex is near (the
 * closest points interior to both edges, the edges not nearly parallel), within the reach at xⁿ or
 * at the end of the unconstrained motion, or meeting on the way. Non-penetration only (no
 * adhesion area: the interface is integrated by the vertex contacts); n from b's closest point
 * towards a's at xⁿ. Key ct_pair_key(nx + ea, eb), apart from the vertex contacts' keys. */
static ct_status edge_contacts(lcp_state *st, const ct_step_ctx *c, const double *x0, double reach)
{
    const ct_surface *s = c->surf;
    const ct_pair_list *E = &st->cand.ee;
    for (long i = 0; i < E->n; ++i) {
        const int ea = E->ij[2 * i], eb = E->ij[2 * i + 1];
        const int v[4] = {s->edges[2 * ea], s->edges[2 * ea + 1], s->edges[2 * eb], s->edges[2 * eb + 1]};
        double P0[4][3];
        for (int k = 0; k < 4; ++k)
            for (int d = 0; d < 3; ++d) P0[k][d] = x0[(size_t)v[k] * 3 + d];
        if (flat_edge(&st->cm, c->x_rest, ea) || flat_edge(&st->cm, c->x_rest, eb)) continue;
        if (c->vert_part[v[0]] == c->vert_part[v[2]]) { /* self-contact: not between rest neighbours */
            const double *R = c->x_rest;
            if (seg_dist(R + 3 * (size_t)v[0], R + 3 * (size_t)v[1], R + 3 * (size_t)v[2], R + 3 * (size_t)v[3]) <
                2.0 * reach)
                continue;
        }
        double sa, sb;
        ct_ee_closest(P0[0], P0[1], P0[2], P0[3], &sa, &sb);
        const double eps = 1e-9;
        if (!(sa > eps && sa < 1.0 - eps && sb > eps && sb < 1.0 - eps)) continue; /* a vertex is the closest */
        double ua[3], ub[3], cr[3], r[3];
        for (int d = 0; d < 3; ++d) ua[d] = P0[1][d] - P0[0][d], ub[d] = P0[3][d] - P0[2][d];
        cr[0] = ua[1] * ub[2] - ua[2] * ub[1], cr[1] = ua[2] * ub[0] - ua[0] * ub[2], cr[2] = ua[0] * ub[1] - ua[1] * ub[0];
        const double la2 = ua[0] * ua[0] + ua[1] * ua[1] + ua[2] * ua[2], lb2 = ub[0] * ub[0] + ub[1] * ub[1] + ub[2] * ub[2];
        const double c2 = cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2];
        if (!(c2 > 1e-6 * la2 * lb2)) continue; /* nearly parallel: the vertex contacts hold them */
        for (int d = 0; d < 3; ++d) r[d] = P0[0][d] + sa * ua[d] - (P0[2][d] + sb * ub[d]);
        contact ct = {0};
        const double l = unit(3, r, ct.fr[0]);
        if (!(l > 1e-12)) continue; /* touching: no direction */
        {
            /* a's closest point shallowly behind b (closer than the margin, behind the sum of b's
             * faces' normals): the outward direction of b, as for a vertex behind a face
             * (find_contacts); otherwise the two contacts of one crossing get opposite normals
             * and contradict each other */
            double nb[3] = {0, 0, 0}, nfc[3];
            for (int k = st->cm.ef_ptr[eb]; k < st->cm.ef_ptr[eb + 1]; ++k) {
                prim_normal(s, 3, x0, st->cm.ef_face[k], nfc);
                for (int d = 0; d < 3; ++d) nb[d] += nfc[d];
            }
            double nbu[3];
            if (unit(3, nb, nbu) > 1e-12 && r[0] * nbu[0] + r[1] * nbu[1] + r[2] * nbu[2] < 0.0 && l < st->margin)
                for (int d = 0; d < 3; ++d) ct.fr[0][d] = nbu[d];
        }
        if (l >= reach) {
            double xs[12], dxs[12], toi = 1.0;
            for (int k = 0; k < 4; ++k)
                for (int d = 0; d < 3; ++d) xs[3 * k + d] = P0[k][d], dxs[3 * k + d] = st->dx[(size_t)v[k] * 3 + d];
            double d1 = 0.0, q0[3], q1[3], ta, tb;
            double A0[3], A1[3], B0[3], B1[3];
            for (int d = 0; d < 3; ++d)
                A0[d] = xs[d] + dxs[d], A1[d] = xs[3 + d] + dxs[3 + d], B0[d] = xs[6 + d] + dxs[6 + d], B1[d] = xs[9 + d] + dxs[9 + d];
            ct_ee_closest(A0, A1, B0, B1, &ta, &tb);
            for (int d = 0; d < 3; ++d) q0[d] = A0[d] + ta * (A1[d] - A0[d]), q1[d] = B0[d] + tb * (B1[d] - B0[d]);
            for (int d = 0; d < 3; ++d) d1 += (q0[d] - q1[d]) * (q0[d] - q1[d]);
            if (sqrt(d1) >= reach) {
                ct_ccd_opts co = ct_ccd_default_opts();
                co.thickness = 0.5 * st->margin;
                if (!ct_accd(CT_CCD_EE, 3, xs, dxs, 1.0, &co, &toi)) continue;
            }
        }
        ct.key = ct_pair_key(c->nx + ea, eb);
        ct.nv = 4;
        for (int k = 0; k < 4; ++k) ct.v[k] = v[k];
        ct.w[0] = 1.0 - sa, ct.w[1] = sa, ct.w[2] = -(1.0 - sb), ct.w[3] = -sb;
        ct.pa = c->vert_part[v[0]], ct.pb = c->vert_part[v[2]];
        ct.gap = r[0] * ct.fr[0][0] + r[1] * ct.fr[0][1] + r[2] * ct.fr[0][2];
        ct.area = 0.0;
        ct.edge = 1;
        ct.prim = -1;
        ct_status rs = push_contact(st, &ct);
        if (rs != CT_OK) return rs;
    }
    return CT_OK;
}

static ct_status find_contacts(lcp_state *st, const ct_step_ctx *c, const ct_linear_system *sys)
{
    const int dim = c->dim;
    const ct_surface *s = c->surf;
    const double h = c->h, *x0 = c->x_prev, *vx = sys->vx_free;
    const double reach = st->cadh > 0.0 && isfinite(st->debond) ? fmax(st->margin, st->debond) : st->margin;
    st->m = 0;
    ct_status rs;
    /* half-spaces */
    for (int i = 0; i < s->nbv; ++i) {
        const int k = s->bverts[i];
        if (!st->movable[k]) continue;
        for (int o = 0; o < c->nobstacles; ++o) {
            const ct_obstacle *ob = &c->obstacles[o];
            double g = 0.0, gv = 0.0;
            for (int d = 0; d < dim; ++d) {
                g += ob->normal[d] * (x0[(size_t)k * dim + d] - ob->point[d]);
                gv += ob->normal[d] * vx[(size_t)k * dim + d];
            }
            if (fmin(g, g + h * gv) >= reach) continue;
            contact ct = {0};
            ct.key = ct_pair_key(k, c->nbodies + o);
            ct.nv = 1, ct.v[0] = k, ct.w[0] = 1.0;
            ct.pa = c->vert_part[k], ct.pb = c->nbodies + o;
            for (int d = 0; d < dim; ++d) ct.fr[0][d] = ob->normal[d];
            ct.off = 0.0;
            for (int d = 0; d < dim; ++d) ct.off -= ob->normal[d] * ob->point[d];
            ct.gap = g;
            ct.prim = -1;
            if ((rs = push_contact(st, &ct)) != CT_OK) return rs;
        }
    }
    /* other bodies (and self-contact) through the swept broad phase */
    const size_t nxd = (size_t)c->nx * dim;
    if ((rs = grow((void **)&st->dx, &st->dx_cap, (long)nxd + 1, sizeof *st->dx)) != CT_OK) return rs;
    if ((rs = grow((void **)&st->x1, &st->x1_cap, (long)nxd + 1, sizeof *st->x1)) != CT_OK) return rs;
    double *dx = st->dx, *x1 = st->x1;
    for (size_t i = 0; i < nxd; ++i) dx[i] = h * vx[i], x1[i] = x0[i] + dx[i];
    rs = ct_broadphase_ccd(s, x0, dx, st->movable, reach, c->threads, &st->cand);
    const ct_pair_list *L = dim == 3 ? &st->cand.vf : &st->cand.ve;
    best_t *B = rs == CT_OK ? malloc(((size_t)L->n + 1) * sizeof *B) : NULL;
    long nb = 0;
    if (rs == CT_OK && !B) rs = CT_ENOMEM;
    for (long i = 0; rs == CT_OK && i < L->n; ++i) {
        const int v = L->ij[2 * i], f = L->ij[2 * i + 1];
        const int fv0 = dim == 3 ? s->faces[3 * f] : s->edges[2 * f];
        if (!st->movable[v] && st->part_kin[c->vert_part[fv0]]) continue;
        double wb[3];
        /* self-contact: not between rest neighbours (a vertex and a face of its own body that are
         * this close at rest, e.g. across a 2.5 mm layer of a plate, are kept apart by the
         * elasticity; as contacts they push the vertex through its own body) */
        if (c->vert_part[v] == c->vert_part[fv0] && prim_dist(s, dim, c->x_rest, v, f, wb) < 2.0 * reach) continue;
        const double d0 = prim_dist(s, dim, x0, v, f, wb), d1 = prim_dist(s, dim, x1, v, f, wb);
        double d = fmin(d0, d1);
        if (d0 >= reach) {
            /* not near at xⁿ: do they meet on the way? Ranked after the near ones by the time of
             * impact, then those that only end near, so that a vertex moving through a thin part
             * in one unconstrained step gets the face it reaches first, not the far side's face
             * it is closest to at the end of the motion */
            double xs[12], dxs[12], toi = 1.0;
            const int nvs = dim == 3 ? 4 : 3;
            const int *pv = dim == 3 ? s->faces + 3 * f : s->edges + 2 * f;
            for (int dd = 0; dd < dim; ++dd) xs[dd] = x0[(size_t)v * dim + dd], dxs[dd] = dx[(size_t)v * dim + dd];
            for (int k = 1; k < nvs; ++k)
                for (int dd = 0; dd < dim; ++dd)
                    xs[k * dim + dd] = x0[(size_t)pv[k - 1] * dim + dd], dxs[k * dim + dd] = dx[(size_t)pv[k - 1] * dim + dd];
            ct_ccd_opts co = ct_ccd_default_opts();
            co.thickness = 0.5 * st->margin;
            if (ct_accd(dim == 3 ? CT_CCD_PT : CT_CCD_PE, dim, xs, dxs, 1.0, &co, &toi)) d = reach + toi;
            else if (d1 < reach) d = reach + 1.0 + d1;
            else continue;
        }
        B[nb++] = (best_t){v, c->vert_part[fv0], f, d};
    }
    if (rs == CT_OK && nb) qsort(B, (size_t)nb, sizeof *B, cmp_best);
    for (long i = 0; rs == CT_OK && i < nb; ++i) {
        if (i > 0 && B[i].v == B[i - 1].v && B[i].q == B[i - 1].q) continue; /* the closest only */
        const int v = B[i].v, f = B[i].f;
        const int *pv = dim == 3 ? s->faces + 3 * f : s->edges + 2 * f;
        const int npv = dim == 3 ? 3 : 2;
        double wb[3], r[3] = {0, 0, 0}, nf[3] = {0, 0, 0};
        prim_dist(s, dim, x0, v, f, wb);
        for (int d = 0; d < dim; ++d) {
            r[d] = x0[(size_t)v * dim + d];
            for (int k = 0; k < npv; ++k) r[d] -= wb[k] * x0[(size_t)pv[k] * dim + d];
        }
        prim_normal(s, dim, x0, f, nf);
        contact ct = {0};
        double n[3] = {0, 0, 0};
        const double l = unit(dim, r, n);
        double rn = 0.0;
        for (int d = 0; d < dim; ++d) rn += r[d] * nf[d];
        /* on the face or shallowly behind it (by less than the margin): its outward normal. A
         * vertex further behind the face's plane is not in it (it is beyond a thin part, or a
         * rest neighbour inside its own body): the direction from the closest point keeps it on
         * its side, as an unsigned distance does */
        if (!(l > 1e-12) || (rn < 0.0 && -rn < st->margin))
            for (int d = 0; d < dim; ++d) n[d] = nf[d];
        for (int d = 0; d < dim; ++d) ct.fr[0][d] = n[d];
        ct.key = ct_pair_key(v, B[i].q);
        ct.nv = 1 + npv, ct.v[0] = v, ct.w[0] = 1.0;
        for (int k = 0; k < npv; ++k) ct.v[1 + k] = pv[k], ct.w[1 + k] = -wb[k];
        ct.pa = c->vert_part[v], ct.pb = B[i].q;
        ct.gap = 0.0;
        for (int d = 0; d < dim; ++d) ct.gap += n[d] * r[d];
        ct.prim = f;
        if ((rs = push_contact(st, &ct)) != CT_OK) break;
    }
    free(B);
    if (rs == CT_OK && dim == 3) rs = edge_contacts(st, c, x0, reach);
    if (rs != CT_OK) return rs;
    /* frames, areas, β */
    for (long i = 0; i < st->m; ++i) {
        contact *ct = &st->c[i];
        double vr[3];
        rel_velocity(ct, dim, vx, vr);
        make_frame(dim, vr, ct->fr);
        ct->area = st->cadh > 0.0 && !ct->edge ? contact_area(st, ct->v[0], ct->pa, ct->pb, ct->fr[0]) : 0.0;
        const pair_rec *R = ct_pair_map_find(&st->pairs, ct->key);
        ct->beta = R ? R->beta : (!st->started ? st->beta0 : 0.0);
        for (int r = 0; r < 3; ++r) {
            ct->lam[r] = 0.0;
            if (R && st->warm)
                for (int d = 0; d < dim; ++d) ct->lam[r] += R->lam[d] * ct->fr[r][d];
        }
    }
    return CT_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* the local problem                                                                           */

/* row r of contact i as a q-space vector: calls fn(qdof, value) for every entry (duplicates
 * possible through the embedding) */
#define FOR_ROW(st_, c_, ct_, r_, BODY)                                                        \
    do {                                                                                       \
        const ct_dofs *D_ = (c_)->dofs;                                                        \
        const int dim_ = (c_)->dim;                                                            \
        for (int k_ = 0; k_ < (ct_)->nv; ++k_) {                                               \
            const int xv_ = (ct_)->v[k_];                                                      \
            for (int j_ = D_->jptr[xv_]; j_ < D_->jptr[xv_ + 1]; ++j_)                         \
                for (int d_ = 0; d_ < dim_; ++d_) {                                            \
                    const int qdof = D_->jcol[j_] * dim_ + d_;                                 \
                    const double val = (ct_)->w[k_] * D_->jw[j_] * (ct_)->fr[(r_)][d_];        \
                    BODY;                                                                      \
                }                                                                              \
        }                                                                                      \
    } while (0)

/* Groups of coupled contacts: union–find over the movable bodies a contact touches. */
static int uf_find(int *p, int a)
{
    while (p[a] != a) a = p[a] = p[p[a]];
    return a;
}

static ct_status grow(void **p, long *cap, long need, size_t sz)
{
    if (need <= *cap) return CT_OK;
    long nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *np = realloc(*p, (size_t)nc * sz);
    if (!np) return CT_ENOMEM;
    *p = np, *cap = nc;
    return CT_OK;
}

static ct_status build_problem(lcp_state *st, const ct_step_ctx *c, const ct_linear_system *sys, int *ngroups)
{
    const int dim = c->dim, m = (int)st->m, nf = sys->nfree;
    const double h = c->h;
    ct_status s = CT_OK;
    /* groups */
    int *par = malloc(((size_t)st->np + 1) * sizeof *par);
    if (!par) return CT_ENOMEM;
    for (int q = 0; q < st->np; ++q) par[q] = q;
    for (int i = 0; i < m; ++i) {
        const contact *ct = &st->c[i];
        if (!st->part_kin[ct->pa] && !st->part_kin[ct->pb]) par[uf_find(par, ct->pa)] = uf_find(par, ct->pb);
    }
    /* a contact's group: the root of its movable participant */
    int *gid = malloc(((size_t)st->np + 1) * sizeof *gid);
    if (!gid) {
        free(par);
        return CT_ENOMEM;
    }
    for (int q = 0; q < st->np; ++q) gid[q] = -1;
    int ng = 0;
    for (int i = 0; i < m; ++i) {
        contact *ct = &st->c[i];
        const int root = uf_find(par, st->part_kin[ct->pa] ? ct->pb : ct->pa);
        if (gid[root] < 0) gid[root] = ng++;
        ct->group = gid[root];
    }
    free(par);
    free(gid);
    *ngroups = ng;
    /* arrays */
    long need_m = (long)m + 1;
    if (need_m > st->m_cap_arrays) {
        long nc = st->m_cap_arrays ? st->m_cap_arrays : 64;
        while (nc < need_m) nc *= 2;
        /* the per-contact arrays of the local problem, grown together */
        void **arr[] = {(void **)&st->ptr, (void **)&st->grp_first, (void **)&st->grp_n, (void **)&st->order,
                        (void **)&st->q, (void **)&st->mu_arr, (void **)&st->adh, (void **)&st->lam, (void **)&st->u};
        const size_t per[] = {sizeof(int), sizeof(int), sizeof(int), sizeof(int), 3 * sizeof(double),
                              sizeof(double), sizeof(double), 3 * sizeof(double), 3 * sizeof(double)};
        for (size_t k = 0; k < sizeof per / sizeof per[0]; ++k) {
            void *np = realloc(*arr[k], (size_t)nc * per[k]);
            if (!np) return CT_ENOMEM;
            *arr[k] = np;
        }
        st->m_cap_arrays = nc;
    }
    /* contacts ordered by group (stable): order[] lists contact indices group after group */
    for (int g = 0; g <= ng; ++g) st->grp_n[g] = 0;
    for (int i = 0; i < m; ++i) st->grp_n[st->c[i].group]++;
    st->grp_first[0] = 0;
    for (int g = 0; g < ng; ++g) st->grp_first[g + 1] = st->grp_first[g] + st->grp_n[g];
    {
        int *fill = calloc((size_t)ng + 1, sizeof *fill);
        if (!fill) return CT_ENOMEM;
        for (int i = 0; i < m; ++i) {
            const int g = st->c[i].group;
            st->order[st->grp_first[g] + fill[g]++] = i;
        }
        free(fill);
    }
    /* block rows: contact i (in the problem's numbering = its position in order) against every
     * contact of its group */
    long nblocks = 0;
    for (int g = 0; g < ng; ++g) nblocks += (long)st->grp_n[g] * st->grp_n[g];
    if ((s = grow((void **)&st->col, &st->col_cap, nblocks + 1, sizeof *st->col)) != CT_OK) return s;
    if ((s = grow((void **)&st->val, &st->val_cap, nblocks * dim * dim + 1, sizeof *st->val)) != CT_OK) return s;
    st->ptr[0] = 0;
    for (int a = 0; a < m; ++a) {
        const int g = st->c[st->order[a]].group;
        st->ptr[a + 1] = st->ptr[a] + st->grp_n[g];
        for (int k = 0; k < st->grp_n[g]; ++k) st->col[st->ptr[a] + k] = st->grp_first[g] + k;
    }
    /* W = C_fᵀ A⁻¹ C_f per group, by multi-RHS solves in chunks of columns */
    const int CH = 32;
    double *Cf = malloc(((size_t)nf * CH + 1) * sizeof *Cf), *Y = malloc(((size_t)nf * CH + 1) * sizeof *Y);
    if (!Cf || !Y) {
        free(Cf), free(Y);
        return CT_ENOMEM;
    }
    const int ncols = m * dim;
    for (int j0 = 0; j0 < ncols && s == CT_OK; j0 += CH) {
        const int nc = ncols - j0 < CH ? ncols - j0 : CH;
        memset(Cf, 0, (size_t)nf * nc * sizeof *Cf);
        for (int jj = 0; jj < nc; ++jj) {
            const int col = j0 + jj, b = col / dim, rb = col % dim;
            const contact *ct = &st->c[st->order[b]];
            double *cj = Cf + (size_t)jj * nf;
            FOR_ROW(st, c, ct, rb, {
                const int fi = sys->free_index[qdof];
                if (fi >= 0) cj[fi] += val;
            });
        }
        if ((s = sys->solve(sys, nc, Cf, Y)) != CT_OK) break;
        for (int jj = 0; jj < nc; ++jj) {
            const int col = j0 + jj, b = col / dim, rb = col % dim;
            const int g = st->c[st->order[b]].group;
            const double *yj = Y + (size_t)jj * nf;
            for (int a = st->grp_first[g]; a < st->grp_first[g] + st->grp_n[g]; ++a) {
                const contact *ci = &st->c[st->order[a]];
                const long blk = st->ptr[a] + (b - st->grp_first[g]);
                for (int ra = 0; ra < dim; ++ra) {
                    double dot = 0.0;
                    FOR_ROW(st, c, ci, ra, {
                        const int fi = sys->free_index[qdof];
                        if (fi >= 0) dot += val * yj[fi];
                    });
                    st->val[(size_t)blk * dim * dim + (size_t)ra * dim + rb] = dot;
                }
            }
        }
    }
    free(Cf);
    free(Y);
    if (s != CT_OK) return s;
    /* q = J v_free + (g/h, 0, 0); μ, adhesion factors, the warm start */
    for (int a = 0; a < m; ++a) {
        const contact *ct = &st->c[st->order[a]];
        double vr[3];
        rel_velocity(ct, dim, sys->vx_free, vr);
        for (int r = 0; r < dim; ++r) {
            double u = 0.0;
            for (int d = 0; d < dim; ++d) u += ct->fr[r][d] * vr[d];
            st->q[(size_t)a * dim + r] = u + (r == 0 ? (ct->gap - st->thick) / h : 0.0);
            st->lam[(size_t)a * dim + r] = ct->lam[r];
        }
        st->mu_arr[a] = st->mu;
        st->adh[a] = h * h * ct->area * st->cadh * ct->beta * ct->beta;
    }
    return CT_OK;
}

static ct_status step(void *p, const ct_step_ctx *c, const ct_linear_system *sys, double *r)
{
    lcp_state *st = p;
    ct_diag *diag = sys->diag;
    const int dim = c->dim;
    /* the faces' normals at xⁿ for the face-aware contact areas */
    double t0 = now();
    ct_status s = st->cadh > 0.0 ? ct_contact_mesh_lag(&st->cm, c->x_prev, NULL, 0.0, 0) : CT_OK;
    if (s == CT_OK) s = find_contacts(st, c, sys);
    double t1 = now();
    st->t_contacts = t1 - t0, st->t_delassus = st->t_pgs = 0.0;
    st->res = (ct_pgs_result){0, 1, 0.0};
    st->ngroups = 0, st->w_blocks = 0;
    if (s != CT_OK || st->m == 0) goto done;
    if ((s = build_problem(st, c, sys, &st->ngroups)) != CT_OK) goto done;
    st->w_blocks = st->ptr[st->m];
    double t2 = now();
    st->t_delassus = t2 - t1;
    const int m = (int)st->m;
    ct_pgs_problem P = {m, dim, st->ptr, st->col, st->val, st->q, st->mu_arr, st->adh};
    ct_pgs_opts o = st->opts;
    o.seed = (unsigned long)c->step + 1;
    if ((s = ct_pgs_solve(&P, &o, st->lam, st->u, NULL, &st->res, diag)) != CT_OK) goto done;
    st->t_pgs = now() - t2;
    for (int a = 0; a < m; ++a) {
        contact *ct = &st->c[st->order[a]];
        for (int rr = 0; rr < dim; ++rr) {
            ct->lam[rr] = st->lam[(size_t)a * dim + rr];
            FOR_ROW(st, c, ct, rr, { r[qdof] += val * ct->lam[rr]; });
        }
    }
done:
    st->started = 1;
    if (s != CT_OK) st->m = 0;
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* after the step: β (§5.3), the tracked pairs                                                 */

/* β̇ of §5.3 for a contact with impulses lam (frame) over area A: ct_lcp_beta_rate with the normal
 * traction −λ_n/(hA) and the tangential adhesive traction |λ_T|/(hA). */
static double beta_rate(const lcp_state *st, double beta, const double *lam, double A, double h, int dim)
{
    if (!(A > 0.0) || !(st->cadh > 0.0)) return 0.0;
    double lt2 = 0.0;
    for (int r = 1; r < dim; ++r) lt2 += lam[r] * lam[r];
    const ct_rcc_law L = {st->cadh, 0.0, st->eta, st->w, st->r, st->p0};
    return ct_lcp_beta_rate(&L, beta, -lam[0] / (h * A), sqrt(lt2) / (h * A));
}

static ct_status end_step(void *p, const ct_step_ctx *c, const double *x_next, ct_model_stats *stats)
{
    lcp_state *st = p;
    const int dim = c->dim;
    ct_pair_map_begin_pass(&st->pairs);
    st->min_gap = INFINITY;
    for (long i = 0; i < st->m; ++i) {
        contact *ct = &st->c[i];
        /* the gap at x^{n+1}: with the step's frame (linear), and for a vertex–face contact the
         * distance to the same face, negative when the vertex is behind the face's plane with its
         * closest point inside the face (penetration), which the linearization misses when the
         * vertex slides along a face that turns */
        double g = ct->off;
        for (int k = 0; k < ct->nv; ++k)
            for (int d = 0; d < dim; ++d) g += ct->w[k] * ct->fr[0][d] * x_next[(size_t)ct->v[k] * dim + d];
        double gt = g;
        if (ct->prim >= 0) {
            double wb[3], nf[3], r[3];
            const int *pv = dim == 3 ? c->surf->faces + 3 * ct->prim : c->surf->edges + 2 * ct->prim;
            const double dist = prim_dist(c->surf, dim, x_next, ct->v[0], ct->prim, wb);
            prim_normal(c->surf, dim, x_next, ct->prim, nf);
            double rn = 0.0;
            for (int d = 0; d < dim; ++d) {
                r[d] = x_next[(size_t)ct->v[0] * dim + d];
                for (int k = 0; k < (dim == 3 ? 3 : 2); ++k) r[d] -= wb[k] * x_next[(size_t)pv[k] * dim + d];
                rn += r[d] * nf[d];
            }
            /* behind the face's plane with the closest point inside the face: penetration */
            int inside = 1;
            for (int k = 0; k < (dim == 3 ? 3 : 2); ++k) inside &= wb[k] > 1e-12;
            gt = rn < 0.0 && inside ? -dist : dist;
        }
        st->min_gap = fmin(st->min_gap, gt);
        double beta = ct->beta;
        if (ct->area > 0.0) beta = fmin(1.0, fmax(0.0, beta + c->h * beta_rate(st, beta, ct->lam, ct->area, c->h, dim)));
        if (g > st->debond) beta = 0.0; /* full debonding */
        ct->beta = beta;
        const int keep = beta > 0.0 || ct->lam[0] != 0.0 || st->warm;
        if (!keep) continue;
        int created;
        pair_rec *R = ct_pair_map_insert(&st->pairs, ct->key, &created);
        if (!R) return CT_ENOMEM;
        R->beta = beta;
        R->gap = g;
        for (int d = 0; d < 3; ++d) R->lam[d] = 0.0;
        for (int r = 0; r < dim; ++r)
            for (int d = 0; d < dim; ++d) R->lam[d] += ct->lam[r] * ct->fr[r][d];
    }
    ct_pair_map_sweep(&st->pairs); /* pairs not found in this step: their bond is gone */
    if (stats) {
        stats->n_candidates = st->cand.vf.n + st->cand.ve.n;
        stats->n_active = st->m;
        stats->min_distance = st->min_gap;
    }
    return CT_OK;
}

/* ------------------------------------------------------------------------------------------ */

static ct_status forces(void *p, const ct_step_ctx *c, const double *x, ct_force_report *out)
{
    (void)x;
    lcp_state *st = p;
    const int dim = c->dim;
    ct_force_report_zero(out);
    long bonded = 0, nb = 0;
    double bmin = INFINITY, bmax = -INFINITY, bsum = 0.0;
    for (long i = 0; i < st->m; ++i) {
        const contact *ct = &st->c[i];
        const int a = ct->pa, b = ct->pb;
        const double ln = ct->lam[0];
        double ft[3] = {0, 0, 0}, fn[3] = {0, 0, 0};
        for (int d = 0; d < dim; ++d) {
            fn[d] = ln * ct->fr[0][d] / c->h;
            for (int r = 1; r < dim; ++r) ft[d] += ct->lam[r] * ct->fr[r][d] / c->h;
        }
        const ct_force_category cn = ln >= 0.0 ? CT_FORCE_BARRIER : CT_FORCE_ADHESION_NORMAL;
        double tmag = 0.0;
        for (int r = 1; r < dim; ++r) tmag += ct->lam[r] * ct->lam[r];
        tmag = sqrt(tmag);
        const ct_force_category ctg =
            ln > 0.0 && tmag <= st->mu * ln * (1.0 + 1e-12) ? CT_FORCE_FRICTION : CT_FORCE_ADHESION_TANGENTIAL;
        double *fa = ct_force_report_at(out, a, b, cn), *fb = ct_force_report_at(out, b, a, cn);
        double *ta = ct_force_report_at(out, a, b, ctg), *tb = ct_force_report_at(out, b, a, ctg);
        for (int d = 0; d < dim; ++d) fa[d] += fn[d], fb[d] -= fn[d], ta[d] += ft[d], tb[d] -= ft[d];
        if (ln != 0.0 || tmag != 0.0) out->active_pairs[a * out->np + b]++, out->active_pairs[b * out->np + a]++;
        if (ct->area > 0.0) {
            bonded += ct->beta > 0.0;
            bmin = fmin(bmin, ct->beta), bmax = fmax(bmax, ct->beta), bsum += ct->beta, ++nb;
        }
    }
    const double vals[14] = {(double)st->m,
                             (double)bonded,
                             nb ? bmin : NAN,
                             nb ? bsum / (double)nb : NAN,
                             nb ? bmax : NAN,
                             (double)st->res.iters,
                             st->res.residual,
                             (double)st->res.converged,
                             st->m ? st->min_gap : NAN,
                             (double)st->ngroups,
                             (double)st->w_blocks,
                             st->t_contacts,
                             st->t_delassus,
                             st->t_pgs};
    const int ns = out->nscalars < 14 ? out->nscalars : 14;
    for (int k = 0; k < ns; ++k) {
        out->scalar_names[k] = st->names[k];
        out->scalars[k] = vals[k];
    }
    out->nscalars = ns;
    return CT_OK;
}

const ct_model_type ct_model_lcp_pgs = {
    .name = "lcp_pgs",
    .summary = "Gascón et al. 2010: velocity-level contact LCP of the linearized implicit step, block PGS with "
               "implicit adhesion constraints and a friction pyramid (constraint family; not intersection-free)",
    .family = CT_FAMILY_CONSTRAINT,
    .guarantees = 0,
    .state_size = sizeof(lcp_state),
    .params = lcp_pgs_params,
    .init = init,
    .destroy = destroy,
    .step = step,
    .end_step = end_step,
    .forces = forces,
};
