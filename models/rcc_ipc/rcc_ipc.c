/* rcc_ipc.c — the Raous–Cangemi–Cocou adhesion law inside IPC (Fang et al. 2023 §3.2; README.md).
 *
 * The IPC barrier, friction, broad phase and CCD are those of the `ipc` model, run as an inner
 * model through the model interface (its state, its parameters: the CT_IPC_PARAM_SPECS part of
 * this model's table). On top, per tracked pair k = (surface vertex v, participant q ≠ part(v)):
 *     E_k = w_k β_k² (C_N/2 d_k² + C_T/2 ‖u_k‖²)                          (eq. 5, 6)
 * with r = x_v − x_a the offset of v from its anchor x_a (a material point of q: barycentric
 * weights on a face / an edge, fixed when the pair is created; a fixed point on a half-space),
 * d = n̄·r the gap along the anchor's normal n̄ and u the tangential part of r − r_0 (the relative
 * displacement of the two material points since the bond formed). n̄ is lagged at the start of
 * the step (like friction's tangent basis), so E_k is quadratic in x, its Hessian
 * w β² (c cᵀ) ⊗ (C_N n̄n̄ᵀ + C_T (I − n̄n̄ᵀ)) is PSD, and the finite differences are exact.
 * w_k is v's contact weight (ct_contact_mesh_vertex_weight with the quadrature parameter "face":
 * the area v presents to q, Σ_{f∋v} (A_f/3) max(0, c_f)/c_max, c_f = −n_f·n, n the direction from
 * v's closest point on q towards v, both lagged at the start of the step; "vertex": ⅓ of all its
 * surface triangles), halved between two bodies (both bodies' vertices bond to the other's
 * surface), whole against a half-space and, with kinematic_quadrature one_sided, against a
 * kinematic body (whose own vertices then keep 1e-3 of their half: ct_contact_mesh_side).
 * β evolves before each step by eq. 7–9 (ct_rcc.h) from the gap, the slip and the total normal
 * pressure at x^n: p = (barrier force on v)·n̄ / w_v(n) − C_N β² d (w_v(n): the barrier's weight of v,
 * so its normal force divided by it is the barrier pressure).
 * Pairs are tracked in a ct_pair_map: detected when v is within max(d̂, bond_dist) of q at the
 * start of a step (at t = 0 with β₀ if within bond_dist, later with β = 0), kept while the bonded
 * material points are less than debond_dist apart (default twice the reference gap √(W/C_N); the
 * normal gap alone would let a bond slide away along a face) and, if undetected, while β > 0.
 */
#include "contactlab/ct_broadphase.h"
#include "contactlab/ct_collisions.h"
#include "contactlab/ct_distance.h"
#include "contactlab/ct_ipc_params.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_pairs.h"
#include "contactlab/ct_rcc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
    R_CN = CT_IPC_NPARAMS, R_CT, R_ETA, R_W, R_R, R_P0, R_BETA0, R_BOND, R_DEBOND, R_HIST, R_NPARAMS
};

static const ct_param_spec rcc_params[] = {
    CT_IPC_PARAM_SPECS,
    [R_CN] = {"c_n", CT_PARAM_REAL, 1e6, "N/m^3", 0, INFINITY, 0, NULL, "normal adhesion stiffness C_N (eq. 5)", 0},
    [R_CT] = {"c_t", CT_PARAM_REAL, 1e6, "N/m^3", 0, INFINITY, 0, NULL, "tangential adhesion stiffness C_T (eq. 6)",
              0},
    [R_ETA] = {"eta", CT_PARAM_REAL, 1.0, "J*s/m^2", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
               "debonding viscosity η: beta falls at (W - energy)/η (eq. 8, 9)", 0},
    [R_W] = {"w", CT_PARAM_REAL, 1.0, "J/m^2", 0, INFINITY, 0, NULL,
             "adhesion energy W: debonding starts when beta (C_N d^2 + C_T |u|^2) exceeds it", 0},
    [R_R] = {"r", CT_PARAM_REAL, 0.0, "1/(Pa*s)", 0, INFINITY, 0, NULL,
             "bonding rate r under compression (eq. 9)", 0},
    [R_P0] = {"p0", CT_PARAM_REAL, 1e3, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
              "saturation pressure p_0: bonding stops at beta = p/p_0 (eq. 9)", 0},
    [R_BETA0] = {"beta0", CT_PARAM_REAL, 1.0, "", 0, 1, 0, NULL,
                 "initial intensity of the pairs within bond_dist at t = 0", 0},
    [R_BOND] = {"bond_dist", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_AUTO, NULL,
                "pairs within this distance at t = 0 start bonded (auto: d̂)", 1},
    [R_DEBOND] = {"debond_dist", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                  "a pair whose bonded material points are farther apart than this is dropped (auto: twice the reference "
                  "gap sqrt(W/C_N))", 1},
    [R_HIST] = {"beta_hist_every", CT_PARAM_INT, 10, "", 0, INFINITY, 0, NULL,
                "log the histogram of beta (10 bins of width 0.1, pairs per bin; beta = 1 in the last) every this "
                "many steps, NaN in between (0: never)",
                0},
    [R_NPARAMS] = {NULL},
};

enum { NHIST = 10 };

/* Per pair (the ct_pair_map record; key (v, participant)). */
typedef struct rcc_pair {
    double beta;
    double r0[3];   /* x_v − x_a when the pair was created, in world coordinates for the step
                       (rebuilt at each step from r0l) */
    double r0l[3];  /* the same in the anchor's frame (edge direction, in-plane normal to it,
                       face normal): a rigid rotation of the bond does not read as slip */
    double nbar[3]; /* anchor normal at the start of the step, towards v */
    double lam[3];  /* anchor weights on the primitive's vertices (face 3, edge 2), or the anchor
                       point itself on a half-space */
    int prim;       /* face (3D) / edge (2D) index, or −1 for a half-space */
    double w;       /* area weight */
    double d, u2, p;/* gap, squared slip, pressure at the last β update */
    double sep;     /* |x_v − x_a| then: the separation of the bonded material points */
    double ndir[3]; /* the contact direction at x^n: from v's closest point on the participant
                       (detect()) towards v; a half-space's normal */
    long ndir_pass; /* the begin_step that set ndir (st->pass) */
} rcc_pair;

typedef struct rcc_state {
    ct_model *inner; /* the ipc model instance */
    ct_params ip;
    ct_rcc_law law;
    double beta0, bond_dist, debond_dist, detect_dist;
    int dim, nx, np, nbodies, started;
    ct_pair_map pairs;
    long n;          /* pairs in key order (rebuilt at begin_step; no inserts during a step) */
    long cap;
    uint64_t *keys;
    rcc_pair **recs;
    ct_candidates cand;
    double *g;       /* nx*dim scratch: the inner model's gradient at x^n */
    int *best_prim;  /* per body: detect()'s nearest primitive to the current vertex, */
    double *best_d2; /* its squared distance */
    double (*best_lam)[3]; /* and the closest point's weights */
    long n_clamped;  /* pairs whose β update was clamped (at 0 or 1) in the last begin_step */
    long n_clamped0; /* of these, clamped at 0: the update went negative */
    long n_dropped;  /* pairs dropped in the last begin_step */
    int hist_every;
    int face;           /* quadrature "face": the pair areas from cm's face-aware weights */
    long pass;          /* begin_step calls so far */
    ct_contact_mesh cm; /* the surface, its kinematic participants and (face) its lag at x^n */
    unsigned char *movable; /* nx: 0 for a prescribed vertex (cm's kinematic participants) */
    const char *names[8 + NHIST];
} rcc_state;

/* The contact area of vertex v for the contact direction n (unit, towards v): its face-aware
 * weight lagged at x^n, or ⅓ of its surface triangles (quadrature "vertex"). */
static double vertex_area(const rcc_state *st, const ct_step_ctx *c, int v, const double *dir)
{
    if (!st->face) return c->surf->vert_area[v];
    double n[3] = {dir[0], dir[1], st->dim == 3 ? dir[2] : 0.0};
    return ct_contact_mesh_vertex_weight(&st->cm, v, n);
}

/* The share of v's area a pair of v with participant q carries: whole against a half-space
 * (prim < 0), half between two bodies (both bodies' vertices bond to the other's surface), and
 * against a kinematic body the IPC barrier's one-sided factor (ct_contact_mesh_side with
 * kinematic_quadrature: 1 for a movable vertex, 1e-3/2 for a kinematic one). */
static double pair_share(const rcc_state *st, int v, int q, int prim)
{
    return prim < 0 ? 1.0 : 0.5 * ct_contact_mesh_side(&st->cm, v, q);
}

/* The pair's contact direction at x^n for its area: from v's closest point on the participant,
 * as detect() found it in this begin_step (the direction the IPC barrier's weight of v takes, so
 * that the barrier force on v divided by the area is the barrier pressure), else the anchor's
 * normal n̄ (a pair kept beyond the detection distance). Not n̄ first: where the nearest
 * primitives tie (a rim vertex facing a rim vertex: the other body's face and its side face), n̄
 * may be the side face's, perpendicular to the contact. */
static const double *pair_dir(const rcc_state *st, const rcc_pair *P)
{
    return P->ndir_pass == st->pass ? P->ndir : P->nbar;
}

/* ---------- geometry of one pair ---------- */

/* The stencil of pair (v, P): vertices vs[0..*ns) and coefficients c (r = Σ c_i x_{vs_i} − a0). */
static int pair_stencil(const rcc_state *st, const ct_step_ctx *c, int v, const rcc_pair *P, int *vs, double *cf,
                        double *a0)
{
    const int dim = st->dim;
    vs[0] = v, cf[0] = 1.0;
    for (int k = 0; k < dim; ++k) a0[k] = 0.0;
    if (P->prim < 0) { /* half-space: the anchor point is stored in lam */
        for (int k = 0; k < dim; ++k) a0[k] = P->lam[k];
        return 1;
    }
    const int nvp = dim == 3 ? 3 : 2;
    const int *pv = dim == 3 ? c->surf->faces + 3 * (size_t)P->prim : c->surf->edges + 2 * (size_t)P->prim;
    for (int i = 0; i < nvp; ++i) vs[1 + i] = pv[i], cf[1 + i] = -P->lam[i];
    return 1 + nvp;
}

static void pair_offset(const rcc_state *st, const ct_step_ctx *c, int v, const rcc_pair *P, const double *x,
                        double *r)
{
    int vs[4], ns;
    double cf[4], a0[3];
    ns = pair_stencil(st, c, v, P, vs, cf, a0);
    for (int k = 0; k < st->dim; ++k) {
        double s = -a0[k];
        for (int i = 0; i < ns; ++i) s += cf[i] * x[(size_t)st->dim * vs[i] + k];
        r[k] = s;
    }
}

/* Gap d = n̄·r and the squared slip ‖(I − n̄n̄ᵀ)(r − r_0)‖². */
static void pair_gap_slip(const rcc_state *st, const rcc_pair *P, const double *r, double *d, double *u2)
{
    const int dim = st->dim;
    double dn = 0.0, dd = 0.0, s2 = 0.0, del[3];
    for (int k = 0; k < dim; ++k) {
        dn += P->nbar[k] * r[k];
        del[k] = r[k] - P->r0[k];
        dd += P->nbar[k] * del[k];
    }
    for (int k = 0; k < dim; ++k) {
        const double u = del[k] - dd * P->nbar[k];
        s2 += u * u;
    }
    *d = dn, *u2 = s2;
}

/* The anchor primitive's first edge t0→t1 and its (unnormalised) geometric normal at x: for a
 * face (t1 − t0) × (t2 − t0), for a 2D edge the edge rotated by −90°. */
static void prim_vectors(const rcc_state *st, const ct_step_ctx *c, int prim, const double *x, double *e, double *n)
{
    for (int k = 0; k < 3; ++k) e[k] = n[k] = 0.0;
    if (st->dim == 3) {
        const int *f = c->surf->faces + 3 * (size_t)prim;
        const double *a = x + 3 * (size_t)f[0], *b = x + 3 * (size_t)f[1], *q = x + 3 * (size_t)f[2];
        const double w[3] = {q[0] - a[0], q[1] - a[1], q[2] - a[2]};
        for (int k = 0; k < 3; ++k) e[k] = b[k] - a[k];
        n[0] = e[1] * w[2] - e[2] * w[1], n[1] = e[2] * w[0] - e[0] * w[2], n[2] = e[0] * w[1] - e[1] * w[0];
    } else {
        const int *ed = c->surf->edges + 2 * (size_t)prim;
        const double *a = x + 2 * (size_t)ed[0], *b = x + 2 * (size_t)ed[1];
        e[0] = b[0] - a[0], e[1] = b[1] - a[1];
        n[0] = e[1], n[1] = -e[0];
    }
}

/* Unit normal of the anchor primitive at x, oriented along the offset r = x_v − x_a. */
static void anchor_normal(const rcc_state *st, const ct_step_ctx *c, const rcc_pair *P, const double *x,
                          const double *r, double *n)
{
    const int dim = st->dim;
    if (P->prim < 0) return; /* set at creation: a half-space does not turn */
    double e[3], nn = 0.0, s = 0.0;
    prim_vectors(st, c, P->prim, x, e, n);
    for (int k = 0; k < dim; ++k) nn += n[k] * n[k], s += n[k] * r[k];
    nn = sqrt(nn);
    const double f = (s < 0.0 ? -1.0 : 1.0) / (nn > 0.0 ? nn : 1.0);
    for (int k = 0; k < dim; ++k) n[k] *= f;
}

/* Orthonormal frame of the anchor primitive at x, rows of R: (edge t0→t1, n × edge, n) for a face,
 * (edge, normal) for a 2D edge (geometric normal, not flipped towards v); the identity for a
 * half-space (it does not move). */
static void anchor_frame(const rcc_state *st, const ct_step_ctx *c, const rcc_pair *P, const double *x, double R[3][3])
{
    const int dim = st->dim;
    memset(R, 0, 9 * sizeof(double));
    if (P->prim < 0) {
        for (int k = 0; k < 3; ++k) R[k][k] = 1.0;
        return;
    }
    double e[3], n[3];
    prim_vectors(st, c, P->prim, x, e, n);
    double ne = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]), nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    if (!(ne > 0.0) || !(nn > 0.0)) { /* degenerate primitive: keep world axes */
        for (int k = 0; k < 3; ++k) R[k][k] = 1.0;
        return;
    }
    for (int k = 0; k < 3; ++k) e[k] /= ne, n[k] /= nn;
    if (dim == 3) {
        for (int k = 0; k < 3; ++k) R[0][k] = e[k], R[2][k] = n[k];
        R[1][0] = n[1] * e[2] - n[2] * e[1], R[1][1] = n[2] * e[0] - n[0] * e[2], R[1][2] = n[0] * e[1] - n[1] * e[0];
    } else {
        R[0][0] = e[0], R[0][1] = e[1], R[1][0] = n[0], R[1][1] = n[1], R[2][2] = 1.0;
    }
}

/* ---------- pair detection and β evolution (before each step) ---------- */

/* The closest point of participant q's primitive `prim` to x_v: weights and squared distance. */
static double closest_on(const rcc_state *st, const ct_step_ctx *c, const double *x, int v, int prim, double *lam)
{
    const int dim = st->dim;
    const double *p = x + (size_t)dim * v;
    if (dim == 3) {
        const int *f = c->surf->faces + 3 * (size_t)prim;
        const double *t0 = x + 3 * (size_t)f[0], *t1 = x + 3 * (size_t)f[1], *t2 = x + 3 * (size_t)f[2];
        double b1, b2, d2;
        ct_pt_classify_d2(p, t0, t1, t2, &d2);
        ct_pt_closest(p, t0, t1, t2, &b1, &b2);
        lam[0] = 1.0 - b1 - b2, lam[1] = b1, lam[2] = b2;
        return d2;
    }
    const int *e = c->surf->edges + 2 * (size_t)prim;
    double s, d2;
    ct_pe_classify_d2(2, p, x + 2 * (size_t)e[0], x + 2 * (size_t)e[1], &d2);
    ct_pe_closest(2, p, x + 2 * (size_t)e[0], x + 2 * (size_t)e[1], &s);
    lam[0] = 1.0 - s, lam[1] = s, lam[2] = 0.0;
    return d2;
}

/* Track (or re-detect) the pair of vertex v and participant q at distance² d2 with anchor
 * (prim, lam) at x. */
static ct_status track(rcc_state *st, const ct_step_ctx *c, const double *x, int v, int q, int prim, const double *lam,
                       double d2)
{
    int created = 0;
    rcc_pair *P = ct_pair_map_insert(&st->pairs, ct_pair_key(v, q), &created);
    if (!P) return CT_ENOMEM;
    const int dim = st->dim;
    { /* the contact direction at x: from the closest point (weights lam on prim) towards v */
        const double *xv = x + (size_t)dim * v;
        double cp[3] = {0, 0, 0}, l2 = 0.0;
        if (prim < 0) {
            for (int k = 0; k < dim; ++k) cp[k] = c->obstacles[q - st->nbodies].normal[k];
        } else {
            const int nvp = dim == 3 ? 3 : 2;
            const int *pv = dim == 3 ? c->surf->faces + 3 * (size_t)prim : c->surf->edges + 2 * (size_t)prim;
            for (int i = 0; i < nvp; ++i)
                for (int k = 0; k < dim; ++k) cp[k] += lam[i] * x[(size_t)dim * pv[i] + k];
            for (int k = 0; k < dim; ++k) cp[k] = xv[k] - cp[k];
        }
        for (int k = 0; k < dim; ++k) l2 += cp[k] * cp[k];
        const double l = sqrt(l2);
        for (int k = 0; k < 3; ++k) P->ndir[k] = k < dim && l > 0.0 ? cp[k] / l : (k < dim ? NAN : 0.0);
        P->ndir_pass = st->pass;
    }
    if (!created) return CT_OK;
    P->prim = prim;
    for (int k = 0; k < 3; ++k) P->lam[k] = lam[k];
    if (prim < 0) { /* half-space: anchor = projection of x_v, normal = the obstacle's */
        const ct_obstacle *o = &c->obstacles[q - st->nbodies];
        const double *xv = x + (size_t)dim * v;
        double dn = 0.0;
        for (int k = 0; k < dim; ++k) dn += o->normal[k] * (xv[k] - o->point[k]);
        for (int k = 0; k < dim; ++k) P->lam[k] = xv[k] - dn * o->normal[k], P->nbar[k] = o->normal[k];
    }
    double r[3] = {0, 0, 0}, R[3][3];
    pair_offset(st, c, v, P, x, r);
    anchor_normal(st, c, P, x, r, P->nbar);
    anchor_frame(st, c, P, x, R);
    for (int k = 0; k < dim; ++k) P->r0[k] = r[k];
    for (int i = 0; i < 3; ++i) P->r0l[i] = R[i][0] * r[0] + R[i][1] * r[1] + R[i][2] * r[2];
    const double area = vertex_area(st, c, v, pair_dir(st, P));
    P->w = pair_share(st, v, q, prim) * area;
    P->beta = !st->started && sqrt(d2) < st->bond_dist ? st->beta0 : 0.0;
    return CT_OK;
}

/* Detect the pairs at x: every surface vertex against the nearest primitive of every other
 * body within detect_dist, and against every half-space within it. */
static ct_status detect(rcc_state *st, const ct_step_ctx *c, const double *x)
{
    const int dim = st->dim;
    ct_status s = ct_broadphase_proximity(c->surf, x, NULL, st->detect_dist, c->threads, &st->cand);
    if (s != CT_OK) return s;
    const ct_pair_list *L = dim == 3 ? &st->cand.vf : &st->cand.ve;
    const double lim2 = st->detect_dist * st->detect_dist;
    /* candidates are sorted by vertex: per (vertex, body) keep the nearest primitive */
    for (long i = 0; i < L->n && s == CT_OK;) {
        const int v = L->ij[2 * i];
        long j = i;
        int *best_prim = st->best_prim;
        double *best_d2 = st->best_d2, (*best_lam)[3] = st->best_lam;
        for (int q = 0; q < st->nbodies; ++q) best_prim[q] = -1, best_d2[q] = INFINITY;
        for (; j < L->n && L->ij[2 * j] == v; ++j) {
            const int prim = L->ij[2 * j + 1];
            const int pv0 = dim == 3 ? c->surf->faces[3 * (size_t)prim] : c->surf->edges[2 * (size_t)prim];
            const int q = c->vert_part[pv0];
            if (q == c->vert_part[v]) continue;
            double lam[3];
            const double d2 = closest_on(st, c, x, v, prim, lam);
            if (d2 < best_d2[q]) {
                best_d2[q] = d2, best_prim[q] = prim;
                memcpy(best_lam[q], lam, sizeof lam);
            }
        }
        for (int q = 0; q < st->nbodies && s == CT_OK; ++q)
            if (best_prim[q] >= 0 && best_d2[q] < lim2) s = track(st, c, x, v, q, best_prim[q], best_lam[q], best_d2[q]);
        i = j;
    }
    for (int o = 0; o < c->nobstacles && s == CT_OK; ++o)
        for (int i = 0; i < c->surf->nbv && s == CT_OK; ++i) {
            const int v = c->surf->bverts[i];
            double dn = 0.0;
            for (int k = 0; k < dim; ++k) dn += c->obstacles[o].normal[k] * (x[(size_t)dim * v + k] - c->obstacles[o].point[k]);
            const double lam[3] = {0, 0, 0};
            if (dn < st->detect_dist) s = track(st, c, x, v, st->nbodies + o, -1, lam, dn * dn);
        }
    return s;
}

/* The tracked pairs in key order (st->keys, st->recs). */
static ct_status list_pairs(rcc_state *st)
{
    const long n = ct_pair_map_count(&st->pairs);
    if (n > st->cap) {
        uint64_t *k = realloc(st->keys, (size_t)n * sizeof *k);
        if (k) st->keys = k;
        rcc_pair **r = realloc(st->recs, (size_t)n * sizeof *r);
        if (r) st->recs = r;
        if (!k || !r) return CT_ENOMEM;
        st->cap = n;
    }
    st->n = ct_pair_map_sorted(&st->pairs, st->keys, (void **)st->recs);
    return CT_OK;
}

/* Drop an unseen pair once its bond is gone; any pair beyond debond_dist goes. */
static int drop_unbonded(uint64_t key, void *rec, void *ctx)
{
    (void)key, (void)ctx;
    const rcc_pair *P = rec;
    return !(P->beta > 0.0);
}

static ct_status rcc_begin_step(void *p, const ct_step_ctx *c)
{
    rcc_state *st = p;
    ct_status s = ct_model_begin_step(st->inner, c);
    if (s != CT_OK) return s;
    const int dim = st->dim;
    const double *x = c->x_prev;
    st->pass++;
    if (st->face && (s = ct_contact_mesh_lag(&st->cm, x, NULL, 0.0, 0)) != CT_OK) return s;
    /* detection at x^n (new pairs: β₀ within bond_dist at t = 0, else 0) */
    ct_pair_map_begin_pass(&st->pairs);
    if ((s = detect(st, c, x)) != CT_OK) return s;
    st->started = 1;
    if ((s = list_pairs(st)) != CT_OK) return s;
    /* the barrier's force on each vertex at x^n (the inner model's gradient) */
    memset(st->g, 0, (size_t)st->nx * dim * sizeof *st->g);
    if (st->n && (s = ct_model_gradient(st->inner, c, x, st->g)) != CT_OK) return s;
    /* β by eq. 7–9 from the state at x^n; the lagged normal for the step */
    st->n_clamped = st->n_clamped0 = 0;
    const long n_before = st->n;
    for (long i = 0; i < st->n; ++i) {
        rcc_pair *P = st->recs[i];
        const int v = ct_pair_key_a(st->keys[i]);
        double r[3], d, u2, fn = 0.0, R[3][3];
        pair_offset(st, c, v, P, x, r);
        anchor_normal(st, c, P, x, r, P->nbar);
        anchor_frame(st, c, P, x, R);
        for (int k = 0; k < dim; ++k) P->r0[k] = R[0][k] * P->r0l[0] + R[1][k] * P->r0l[1] + R[2][k] * P->r0l[2];
        pair_gap_slip(st, P, r, &d, &u2);
        for (int k = 0; k < dim; ++k) fn -= st->g[(size_t)dim * v + k] * P->nbar[k];
        const double area = vertex_area(st, c, v, pair_dir(st, P));
        P->w = pair_share(st, v, ct_pair_key_b(st->keys[i]), P->prim) * area; /* lagged at x^n */
        const double press = (area > 0.0 ? fn / area : 0.0) - st->law.cn * P->beta * P->beta * d;
        int clamp = 0;
        P->beta = ct_rcc_beta_step(&st->law, P->beta, d, u2, press, c->h, &clamp);
        st->n_clamped += clamp != 0;
        st->n_clamped0 += clamp < 0;
        P->d = d, P->u2 = u2, P->p = press;
        P->sep = 0.0;
        for (int k = 0; k < dim; ++k) P->sep += r[k] * r[k];
        P->sep = sqrt(P->sep);
    }
    /* drop the pairs whose material points are farther apart than debond_dist (their keys first:
     * a removal moves records), and the undetected ones without a bond */
    long nd = 0;
    for (long i = 0; i < st->n; ++i)
        if (st->recs[i]->sep > st->debond_dist) st->keys[nd++] = st->keys[i];
    for (long i = 0; i < nd; ++i) ct_pair_map_remove(&st->pairs, st->keys[i]);
    ct_pair_map_sweep_if(&st->pairs, drop_unbonded, NULL);
    s = list_pairs(st);
    st->n_dropped = n_before - st->n;
    return s;
}

/* ---------- the RCC energies ---------- */

static double pair_energy(const rcc_state *st, const ct_step_ctx *c, long i, const double *x)
{
    const rcc_pair *P = st->recs[i];
    if (!(P->beta > 0.0)) return 0.0;
    double r[3], d, u2;
    pair_offset(st, c, ct_pair_key_a(st->keys[i]), P, x, r);
    pair_gap_slip(st, P, r, &d, &u2);
    return P->w * ct_rcc_energy_density(&st->law, P->beta, d, u2);
}

/* ∂E/∂r of pair i, split into its normal and tangential parts (either may be NULL). */
static void pair_force_r(const rcc_state *st, const ct_step_ctx *c, long i, const double *x, double *gn, double *gt)
{
    const rcc_pair *P = st->recs[i];
    const int dim = st->dim;
    double r[3], del[3], dn = 0.0, dd = 0.0;
    pair_offset(st, c, ct_pair_key_a(st->keys[i]), P, x, r);
    for (int k = 0; k < dim; ++k) {
        dn += P->nbar[k] * r[k];
        del[k] = r[k] - P->r0[k];
        dd += P->nbar[k] * del[k];
    }
    const double wb = P->w * P->beta * P->beta;
    for (int k = 0; k < dim; ++k) {
        if (gn) gn[k] = wb * st->law.cn * dn * P->nbar[k];
        if (gt) gt[k] = wb * st->law.ct * (del[k] - dd * P->nbar[k]);
    }
}

static ct_status rcc_energy(void *p, const ct_step_ctx *c, const double *x, double *E)
{
    rcc_state *st = p;
    ct_status s = ct_model_energy(st->inner, c, x, E);
    if (s != CT_OK) return s;
    double e = 0.0;
    for (long i = 0; i < st->n; ++i) e += pair_energy(st, c, i, x);
    *E += e;
    return CT_OK;
}

static ct_status rcc_gradient(void *p, const ct_step_ctx *c, const double *x, double *g)
{
    rcc_state *st = p;
    ct_status s = ct_model_gradient(st->inner, c, x, g);
    if (s != CT_OK) return s;
    const int dim = st->dim;
    for (long i = 0; i < st->n; ++i) {
        const rcc_pair *P = st->recs[i];
        if (!(P->beta > 0.0)) continue;
        double gn[3], gt[3], cf[4], a0[3];
        int vs[4];
        const int ns = pair_stencil(st, c, ct_pair_key_a(st->keys[i]), P, vs, cf, a0);
        pair_force_r(st, c, i, x, gn, gt);
        for (int j = 0; j < ns; ++j)
            for (int k = 0; k < dim; ++k) g[(size_t)dim * vs[j] + k] += cf[j] * (gn[k] + gt[k]);
    }
    return CT_OK;
}

static ct_status rcc_hessian(void *p, const ct_step_ctx *c, const double *x, ct_triplets *H)
{
    rcc_state *st = p;
    ct_status s = ct_model_hessian(st->inner, c, x, H);
    if (s != CT_OK) return s;
    const int dim = st->dim;
    for (long i = 0; i < st->n && s == CT_OK; ++i) {
        const rcc_pair *P = st->recs[i];
        if (!(P->beta > 0.0)) continue;
        double cf[4], a0[3], K[9], B[144];
        int vs[4];
        const int ns = pair_stencil(st, c, ct_pair_key_a(st->keys[i]), P, vs, cf, a0), n = ns * dim;
        const double wb = P->w * P->beta * P->beta;
        for (int a = 0; a < dim; ++a) /* K = w β² (C_N n̄n̄ᵀ + C_T (I − n̄n̄ᵀ)) */
            for (int b = 0; b < dim; ++b) {
                const double nn = P->nbar[a] * P->nbar[b];
                K[a + dim * b] = wb * (st->law.cn * nn + st->law.ct * ((a == b) - nn));
            }
        for (int j = 0; j < ns; ++j)
            for (int b = 0; b < dim; ++b)
                for (int i2 = 0; i2 < ns; ++i2)
                    for (int a = 0; a < dim; ++a) B[(i2 * dim + a) + n * (j * dim + b)] = cf[i2] * cf[j] * K[a + dim * b];
        s = ct_triplets_add_block(H, vs, ns, dim, B);
    }
    return s;
}

static ct_status rcc_max_step(void *p, const ct_step_ctx *c, const double *x, const double *dx, double *alpha)
{
    rcc_state *st = p;
    return ct_model_max_step(st->inner, c, x, dx, alpha);
}

/* the inner IPC model's second-order correction of its barrier gaps (ct_collision_correct_trial) */
static ct_status rcc_correct_trial(void *p, const ct_step_ctx *c, const double *x, const double *dx, double alpha,
                                   double *x_trial, int *changed)
{
    rcc_state *st = p;
    return ct_model_correct_trial(st->inner, c, x, dx, alpha, x_trial, changed);
}

static ct_status rcc_update_lagged(void *p, const ct_step_ctx *c, const double *x, double *delta)
{
    rcc_state *st = p;
    *delta = 0.0;
    return ct_model_update_lagged(st->inner, c, x, delta);
}

static ct_status rcc_end_step(void *p, const ct_step_ctx *c, const double *x, ct_model_stats *ms)
{
    rcc_state *st = p;
    return ct_model_end_step(st->inner, c, x, ms);
}

/* ---------- forces and statistics ---------- */

static ct_status rcc_forces(void *p, const ct_step_ctx *c, const double *x, ct_force_report *out)
{
    rcc_state *st = p;
    const int cap = out->nscalars;
    ct_status s = ct_model_forces(st->inner, c, x, out);
    if (s != CT_OK) return s;
    const int dim = st->dim;
    double bmin = INFINITY, bmax = 0.0, bsum = 0.0;
    long bonded = 0;
    for (long i = 0; i < st->n; ++i) {
        const rcc_pair *P = st->recs[i];
        const int v = ct_pair_key_a(st->keys[i]), q = ct_pair_key_b(st->keys[i]), A = c->vert_part[v];
        bmin = fmin(bmin, P->beta), bmax = fmax(bmax, P->beta), bsum += P->beta;
        if (!(P->beta > 0.0)) continue;
        bonded++;
        double gn[3], gt[3];
        pair_force_r(st, c, i, x, gn, gt);
        /* the force on v is −∂E/∂r; the anchor's side takes the reaction */
        double *FN = ct_force_report_at(out, A, q, CT_FORCE_ADHESION_NORMAL), *RN = ct_force_report_at(out, q, A, CT_FORCE_ADHESION_NORMAL);
        double *FT = ct_force_report_at(out, A, q, CT_FORCE_ADHESION_TANGENTIAL), *RT = ct_force_report_at(out, q, A, CT_FORCE_ADHESION_TANGENTIAL);
        for (int k = 0; k < dim; ++k) FN[k] -= gn[k], RN[k] += gn[k], FT[k] -= gt[k], RT[k] += gt[k];
        out->bonded_pairs[A * out->np + q]++;
        if (A != q) out->bonded_pairs[q * out->np + A]++;
    }
    double vals[8 + NHIST] = {st->n ? bmin : 0.0, st->n ? bsum / st->n : 0.0, bmax, (double)st->n, (double)bonded,
                              (double)st->n_clamped, (double)st->n_clamped0, (double)st->n_dropped};
    const int hist = st->hist_every > 0 && c->step % st->hist_every == 0;
    for (int b = 0; b < NHIST; ++b) vals[8 + b] = hist ? 0.0 : NAN;
    for (long i = 0; i < st->n && hist; ++i) {
        const int b = (int)(st->recs[i]->beta * NHIST);
        vals[8 + (b < 0 ? 0 : b >= NHIST ? NHIST - 1 : b)] += 1.0;
    }
    int k0 = out->nscalars;
    for (int k = 0; k < 8 + NHIST && k0 + k < cap; ++k) {
        out->scalar_names[k0 + k] = st->names[k];
        out->scalars[k0 + k] = vals[k];
        out->nscalars = k0 + k + 1;
    }
    return CT_OK;
}

/* Per-vertex fields: the inner IPC model's (its force −∇E_ipc: barrier and friction; the gaps of its
 * collision set), plus every bonded pair's force −∂E_k/∂x on its stencil (the vertex and its anchor's
 * vertices) and its normal gap d = n̄·r on the vertex (a bond holds beyond d̂, up to debond_dist), and β:
 * the largest of the vertex's tracked pairs (0 before the first step, which tracks them). */
static ct_status rcc_vertex_fields(void *p, const ct_step_ctx *c, const double *x, ct_vertex_fields *out)
{
    rcc_state *st = p;
    ct_status s = ct_model_vertex_fields(st->inner, c, x, out);
    if (s != CT_OK) return s;
    const int dim = st->dim;
    for (long i = 0; i < st->n; ++i) {
        const rcc_pair *P = st->recs[i];
        const int v = ct_pair_key_a(st->keys[i]);
        out->beta[v] = fmax(out->beta[v], P->beta);
        if (!(P->beta > 0.0)) continue;
        double gn[3], gt[3], cf[4], a0[3], r[3], d, u2;
        int vs[4];
        const int ns = pair_stencil(st, c, v, P, vs, cf, a0);
        pair_force_r(st, c, i, x, gn, gt);
        for (int j = 0; j < ns; ++j)
            for (int k = 0; k < dim; ++k) out->force[vs[j]][k] -= cf[j] * (gn[k] + gt[k]);
        pair_offset(st, c, v, P, x, r);
        pair_gap_slip(st, P, r, &d, &u2);
        ct_vertex_fields_gap_min(out, v, d);
    }
    out->filled |= CT_VF_FORCE | CT_VF_GAP | CT_VF_BETA;
    return CT_OK;
}

/* ---------- life cycle ---------- */

static ct_status rcc_init(void *p, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    rcc_state *st = p;
    const ct_model_type *ipc = ct_model_find("ipc");
    if (!ipc) return ct_diag_add(diag, CT_EINPUT, "/contact/model: rcc_ipc needs the ipc model");
    st->dim = c->dim, st->nx = c->nx, st->nbodies = c->nbodies, st->np = c->nbodies + c->nobstacles;
    /* the inner model: the IPC parameters as given, adhesion off */
    ct_status s = ct_params_init_defaults(&st->ip, ipc->params);
    if (s != CT_OK) return s;
    for (int k = 0; k < CT_IPC_NPARAMS; ++k) {
        st->ip.value[k] = prm->value[k];
        st->ip.is_auto[k] = prm->is_auto[k];
    }
    if ((s = ct_model_create(&st->inner, ipc, &st->ip, c, diag)) != CT_OK) return s;
    for (int k = 0; k < CT_IPC_NPARAMS; ++k) prm->value[k] = st->inner->params.value[k]; /* "auto" resolved */
    st->law = (ct_rcc_law){prm->value[R_CN], prm->value[R_CT], prm->value[R_ETA], prm->value[R_W], prm->value[R_R],
                           prm->value[R_P0]};
    const double dhat = prm->value[CT_IPC_P_DHAT];
    st->beta0 = prm->value[R_BETA0];
    st->bond_dist = prm->is_auto[R_BOND] ? dhat : prm->value[R_BOND];
    prm->value[R_BOND] = st->bond_dist;
    const double gref = st->law.cn > 0.0 ? sqrt(st->law.w / st->law.cn) : INFINITY;
    st->debond_dist = prm->is_auto[R_DEBOND] ? 2.0 * gref : prm->value[R_DEBOND];
    if (!isfinite(st->debond_dist))
        return ct_diag_add(diag, CT_EINPUT, "/contact/debond_dist: needed when c_n = 0 (no reference gap)");
    prm->value[R_DEBOND] = st->debond_dist;
    st->detect_dist = fmax(dhat, st->bond_dist);
    if ((s = ct_pair_map_init(&st->pairs, sizeof(rcc_pair))) != CT_OK) return s;
    ct_candidates_init(&st->cand);
    st->g = malloc(((size_t)c->nx * c->dim + 1) * sizeof *st->g);
    st->best_prim = malloc(((size_t)c->nbodies + 1) * sizeof *st->best_prim);
    st->best_d2 = malloc(((size_t)c->nbodies + 1) * sizeof *st->best_d2);
    st->best_lam = malloc(((size_t)c->nbodies + 1) * sizeof *st->best_lam);
    if (!st->g || !st->best_prim || !st->best_d2 || !st->best_lam) return CT_ENOMEM;
    static const char *const names[8 + NHIST] = {"beta_min", "beta_mean", "beta_max", "rcc_pairs", "rcc_bonded",
                                                 "beta_clamped", "beta_clamped_0", "rcc_dropped", "beta_hist_0",
                                                 "beta_hist_1", "beta_hist_2",
                                                 "beta_hist_3", "beta_hist_4", "beta_hist_5", "beta_hist_6",
                                                 "beta_hist_7", "beta_hist_8", "beta_hist_9"};
    for (int k = 0; k < 8 + NHIST; ++k) st->names[k] = names[k];
    st->hist_every = (int)prm->value[R_HIST];
    st->face = (int)prm->value[CT_IPC_P_QUADRATURE] == CT_QUAD_FACE;
    if (!(st->movable = malloc((size_t)c->nx + 1))) return CT_ENOMEM;
    for (int v = 0; v < c->nx; ++v) st->movable[v] = !(c->vert_kinematic && c->vert_kinematic[v]);
    if ((s = ct_contact_mesh_init(&st->cm, c->dim, c->surf, c->x_rest, c->vert_part, st->movable)) != CT_OK) return s;
    st->cm.kin_sides = (int)prm->value[CT_IPC_P_KIN_QUAD] == 1 ? CT_KIN_TWO_SIDED : CT_KIN_ONE_SIDED;
    if (st->face && (s = ct_contact_mesh_lag(&st->cm, c->x_prev, NULL, 0.0, 0)) != CT_OK) return s;
    return CT_OK;
}

static void rcc_destroy(void *p)
{
    rcc_state *st = p;
    ct_model_destroy(st->inner);
    ct_params_free(&st->ip);
    ct_pair_map_free(&st->pairs);
    ct_candidates_free(&st->cand);
    free(st->keys);
    free(st->recs);
    free(st->g);
    free(st->best_prim);
    free(st->best_d2);
    free(st->best_lam);
    ct_contact_mesh_free(&st->cm);
    free(st->movable);
}

const ct_model_type ct_model_rcc_ipc = {
    .name = "rcc_ipc",
    .family = CT_FAMILY_ENERGY,
    .guarantees = CT_GUARANTEE_INTERSECTION_FREE,
    .summary = "IPC barrier and friction + the Raous-Cangemi-Cocou adhesion law (C_N, C_T, eta, W, r, p0) with a "
               "per-pair intensity beta (Fang et al. 2023 sec. 3.2)",
    .state_size = sizeof(rcc_state),
    .params = rcc_params,
    .init = rcc_init,
    .destroy = rcc_destroy,
    .begin_step = rcc_begin_step,
    .energy = rcc_energy,
    .gradient = rcc_gradient,
    .hessian = rcc_hessian,
    .max_step = rcc_max_step,
    .update_lagged = rcc_update_lagged,
    .correct_trial = rcc_correct_trial,
    .end_step = rcc_end_step,
    .forces = rcc_forces,
    .vertex_fields = rcc_vertex_fields,
};
