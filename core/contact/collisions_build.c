/* collisions_build.c — collision sets from broad-phase candidates (see ct_collisions.h and
 * models/ipc_adhesion/README.md for the formulas).
 *
 * Every broad-phase candidate within d̂ becomes a term whose stencil is reduced to its closest
 * features (a point–triangle pair whose closest point is a triangle vertex becomes a point–point
 * term, and so on). The convergent construction adds the inclusion–exclusion terms of the max
 * approximation: for a vertex v, −(k_e(v) − 1) point–edge terms and c_u(v) point–point terms,
 * where k_e(v) counts the triangles at e not containing v and c_u(v) = 1 − n_t(u; v) +
 * Σ_{e∋u, e∌v} (k_e(v) − 1) (for a closed manifold: 1 if u is not adjacent to v, else 0). The
 * identity behind it: if the closest point of the other surface is a vertex u (or an edge
 * interior point), the triangles, edges and vertices that share it contribute faces − edges +
 * vertices = 1 copy of b(d). Terms with the same stencil are merged by summing weights.
 */
#include "collisions_internal.h"
#include "collisions_terms.h"

#include "contactlab/ct_distance.h"
#include "contactlab/ct_parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ct_collision_set_init(ct_collision_set *cs) { memset(cs, 0, sizeof *cs); }
void ct_collision_set_free(ct_collision_set *cs)
{
    free(cs->c);
    memset(cs, 0, sizeof *cs);
}

/* ------------------------------------------------------------------------------------------ */
/* topology of the inclusion–exclusion terms                                                  */

/* k_e(v): faces incident to edge e that do not contain v. */
static int faces_without(const ct_contact_mesh *cm, int e, int v)
{
    int k = 0;
    for (int i = cm->ef_ptr[e]; i < cm->ef_ptr[e + 1]; ++i) k += cm->ef_opp[i] != v;
    return k;
}

static int edge_has(const ct_surface *s, int e, int v) { return s->edges[2 * e] == v || s->edges[2 * e + 1] == v; }

/* 3D: c_u(v) = 1 − n_t(u; v) + Σ_{e∋u, e∌v} (k_e(v) − 1), n_t(u; v) the faces at u without v.
 * Every face at u without v has its two edges at u among the e∌v and is counted in both their
 * k_e(v); a face with v is excluded from k_e(v) of its other edge at u. So n_t(u; v) = ½ Σ k_e(v). */
static int vertex_coef_3d(const ct_contact_mesh *cm, int u, int v)
{
    int sum_k = 0, sum_km1 = 0;
    for (int i = cm->ve_ptr[u]; i < cm->ve_ptr[u + 1]; ++i) {
        int e = cm->ve_list[i];
        if (edge_has(cm->s, e, v)) continue;
        int k = faces_without(cm, e, v);
        sum_k += k;
        sum_km1 += k - 1;
    }
    return 1 - sum_k / 2 + sum_km1;
}

/* 2D: c_u(v) = 1 − (segments at u not containing v). */
static int vertex_coef_2d(const ct_contact_mesh *cm, int u, int v)
{
    int k = 0;
    for (int i = cm->ve_ptr[u]; i < cm->ve_ptr[u + 1]; ++i) k += !edge_has(cm->s, cm->ve_list[i], v);
    return 1 - k;
}

/* ------------------------------------------------------------------------------------------ */
/* face-aware weights (ct_collisions.h)                                                        */

/* The weight of a term's vertex (edge) side: the face-aware weight for the vertex's lagged
 * contact direction against the participant of the term's partner primitive (one direction per
 * vertex and partner, ct_contact_mesh_lag: every term of the vertex's group against that partner
 * gets the same weight, so the inclusion–exclusion terms cancel exactly as with one weight per
 * vertex, and no weight depends on where the stencil's closest features are inside the step).
 * A vertex without a lagged direction against that partner (no candidate at the lag: the term
 * appeared mid-step) takes the direction of the term's primitive pair at the lag, from the
 * closest feature of the partner primitive classified there (contact_mesh.c's direction routines:
 * pairs sharing their closest feature get the same bits, so those terms cancel too). */
/* The weight modes of the vertex family: W_FACE face-aware weights (else the caller's w_v times
 * the side factor), W_SHARE plus the edge share (the convergent set with area-weighted edges,
 * ct_contact_mesh_edge_share). */
enum { W_FACE = 1, W_SHARE = 2 };

/* v's face-aware weight against participant pu: the lagged one (with W_SHARE plus its edge share,
 * the entry of vdir_s beside it), or (none: the term appeared mid-step) the weight for the
 * direction n that dir(cm, v, q, n) gives, plus the edge share for n if W_SHARE */
static double vw_face(const ct_contact_mesh *cm, int v, int pu, int mode, void (*dir)(const ct_contact_mesh *, int, int, double *),
                      int q)
{
    const double *w = ct_lag_vertex_weight(cm, v, pu);
    if (w && !(mode & W_SHARE)) return *w;
    if (w && cm->vshare_on) return *w + cm->vdir_s[w - cm->vdir_w];
    double n[3];
    dir(cm, v, q, n);
    const double share = mode & W_SHARE ? ct_contact_mesh_edge_share(cm, v, n) : 0.0;
    return (w ? *w : ct_contact_mesh_vertex_weight(cm, v, n)) + share;
}

static void dir_pp(const ct_contact_mesh *cm, int v, int u, double *n)
{
    ct_unit_diff(cm->dim, X(cm->x_lag, cm->dim, v), X(cm->x_lag, cm->dim, u), n);
}

/* vertex v against face f; without W_FACE (the vertex quadrature) only the side factor
 * (ct_contact_mesh_side: 1 unless one participant is kinematic) */
static double vw_pt(const ct_contact_mesh *cm, int v, int f, int mode)
{
    const int pu = cm->part[cm->s->faces[3 * f]];
    const double sf = ct_contact_mesh_side(cm, v, pu);
    return mode & W_FACE ? sf * vw_face(cm, v, pu, mode, ct_lag_dir_pt, f) : sf;
}

/* vertex v against edge e (any dim) */
static double vw_pe(const ct_contact_mesh *cm, int v, int e, int mode)
{
    const int pu = cm->part[cm->s->edges[2 * e]];
    const double sf = ct_contact_mesh_side(cm, v, pu);
    return mode & W_FACE ? sf * vw_face(cm, v, pu, mode, ct_lag_dir_pe, e) : sf;
}

/* vertex v against vertex u */
static double vw_pp(const ct_contact_mesh *cm, int v, int u, int mode)
{
    const double sf = ct_contact_mesh_side(cm, v, cm->part[u]);
    return mode & W_FACE ? sf * vw_face(cm, v, cm->part[u], mode, dir_pp, u) : sf;
}

/* edge ea's side against edge eb (3D) */
static double ew_ee(const ct_contact_mesh *cm, int ea, int eb)
{
    const double *w = ct_lag_edge_weight(cm, ea, cm->part[cm->s->edges[2 * eb]]);
    if (w) return *w;
    double n[3];
    ct_lag_dir_ee(cm, ea, eb, n);
    return ct_contact_mesh_edge_weight(cm, ea, n);
}

/* edge ea's side against vertex p (3D): from p towards ea's closest point */
static double ew_pe(const ct_contact_mesh *cm, int ea, int p)
{
    const double *w = ct_lag_edge_weight(cm, ea, cm->part[p]);
    if (w) return *w;
    double n[3];
    ct_lag_dir_pe(cm, p, ea, n);
    for (int k = 0; k < 3; ++k) n[k] = -n[k];
    return ct_contact_mesh_edge_weight(cm, ea, n);
}

/* Vertex p against face f: the term of the classified closest features if d < d̂, with weight w
 * times vw_pt (weight mode `mode`). */
static double add_pt(term_list *L, const ct_contact_mesh *cm, const double *x, int p, int f, double w, int mode,
                     double dhat2, int *err)
{
    const int *F = cm->s->faces + 3 * f;
    double d2;
    ct_pt_type t = ct_pt_classify_d2(X(x, 3, p), X(x, 3, F[0]), X(x, 3, F[1]), X(x, 3, F[2]), &d2);
    if (!(d2 < dhat2)) return d2;
    w *= vw_pt(cm, p, f, mode);
    int r;
    switch (t) {
    case CT_PT_P_T0:
    case CT_PT_P_T1:
    case CT_PT_P_T2: r = push_pp(L, p, F[t - CT_PT_P_T0], w); break;
    case CT_PT_P_E0:
    case CT_PT_P_E1:
    case CT_PT_P_E2: r = push(L, B_PE, p, cm->face_edges[3 * f + (t - CT_PT_P_E0)], w); break;
    default: r = push(L, B_PT, p, f, w);
    }
    if (r) *err = 1;
    return d2;
}

/* Edge ea against edge eb (ea < eb) if d < d̂. Mollified (nearly parallel) pairs keep the EE
 * stencil. If far != NULL, *far gets the FAR_* bits of the pair. */
enum {
    FAR_B_A = 1, /* both vertices of eb are at d² >= d̂² from ea (as ct_pe_classify_d2 computes it) */
    FAR_A_B = 2  /* both vertices of ea are at d² >= d̂² from eb */
};

static double add_ee(term_list *L, const ct_contact_mesh *cm, const double *x, int ea, int eb, double w,
                     int face, int crease, double dhat2, unsigned char *far, int *err)
{
    const ct_surface *s = cm->s;
    int a0 = s->edges[2 * ea], a1 = s->edges[2 * ea + 1], b0 = s->edges[2 * eb], b1 = s->edges[2 * eb + 1];
    double d2, c2, pe[4];
    ct_ee_type t = ct_ee_classify_d2(X(x, 3, a0), X(x, 3, a1), X(x, 3, b0), X(x, 3, b1), &d2, &c2, far ? pe : NULL);
    if (far)
        *far = (unsigned char)((pe[2] >= dhat2 && pe[3] >= dhat2 ? FAR_B_A : 0) |
                               (pe[0] >= dhat2 && pe[1] >= dhat2 ? FAR_A_B : 0));
    if (!(d2 < dhat2)) return d2;
    if (face) { /* ½(ω_a + ω_b), ω = ½ w_e (convergent set: × s_e) */
        const double ca = crease ? cm->edge_crease[ea] : 1.0, cb = crease ? cm->edge_crease[eb] : 1.0;
        w = 0.5 * (0.5 * ew_ee(cm, ea, eb) * ca + 0.5 * ew_ee(cm, eb, ea) * cb);
    }
    const double eps_x = ee_eps(cm, ea, eb);
    int r;
    if (c2 < eps_x) {
        r = push(L, B_EE_MOLL + (int)t, ea, eb, w);
    } else {
        switch (t) {
        case CT_EE_A0_B0: r = push_pp(L, a0, b0, w); break;
        case CT_EE_A0_B1: r = push_pp(L, a0, b1, w); break;
        case CT_EE_A1_B0: r = push_pp(L, a1, b0, w); break;
        case CT_EE_A1_B1: r = push_pp(L, a1, b1, w); break;
        case CT_EE_A_B0: r = push(L, B_PE, b0, ea, w); break;
        case CT_EE_A_B1: r = push(L, B_PE, b1, ea, w); break;
        case CT_EE_A0_B: r = push(L, B_PE, a0, eb, w); break;
        case CT_EE_A1_B: r = push(L, B_PE, a1, eb, w); break;
        default: r = push(L, B_EE, ea, eb, w);
        }
    }
    if (r) *err = 1;
    return d2;
}

/* A set of ints in [0, range) (the features around one vertex or edge): a list with a mark per
 * value (allocated on first use, one set per thread), sorted by iset_sort, which also clears the
 * marks for the next group. */
typedef struct {
    int *a;
    int n, cap, range;
    unsigned char *mark;
} iset;

static int iset_add_slow(iset *b, int v)
{
    if (!b->mark && !(b->mark = calloc((size_t)b->range + 1, 1))) return -1;
    if (b->mark[v]) return 0;
    if (b->n == b->cap) {
        int nc = b->cap ? 2 * b->cap : 64;
        int *p = realloc(b->a, (size_t)nc * sizeof *p);
        if (!p) return -1;
        b->a = p;
        b->cap = nc;
    }
    b->mark[v] = 1;
    b->a[b->n++] = v;
    return 0;
}

static inline int iset_add(iset *b, int v)
{
    if (b->mark && b->mark[v]) return 0;
    if (b->mark && b->n < b->cap) {
        b->mark[v] = 1;
        b->a[b->n++] = v;
        return 0;
    }
    return iset_add_slow(b, v);
}

/* Sort the members (insertion sort for the short lists, qsort beyond) and clear their marks. */
static void iset_sort(iset *b)
{
    int *a = b->a, n = b->n;
    if (n > 64) {
        qsort(a, (size_t)n, sizeof *a, cmp_int);
    } else {
        for (int i = 1; i < n; ++i) {
            int v = a[i], j = i - 1;
            for (; j >= 0 && a[j] > v; --j) a[j + 1] = a[j];
            a[j + 1] = v;
        }
    }
    for (int i = 0; i < n; ++i) b->mark[a[i]] = 0;
}

/* The term generation runs in chunks of the candidate lists, in parallel: each chunk writes the
 * terms the serial loop would write for its range into its own lists, and the lists are joined in
 * chunk order, so the term lists (hence the merged set) are the same for any thread count. Chunks
 * start at group boundaries (all candidates of one vertex / one edge stay together).
 *
 * Distances come from ct_xx_classify_d2, the type and d² of ct_xx_classify + ct_xx_d2 in one pass
 * (bitwise the same values). In the inclusion–exclusion terms the distance is tested before the
 * topological coefficient (most of those pairs are farther than d̂); the tests are the same, so
 * the same terms are kept. Note that they skip a pair only if d² >= d̂² (a NaN distance keeps it),
 * while the primary terms keep a pair only if d² < d̂². */
typedef struct build_ctx {
    const ct_contact_mesh *cm;
    const double *x;
    double dhat2, fv;
    double omega;             /* the edge–edge weight ω_e of ee_weight = dhat2 */
    int conv, ee_area;
    int face;                 /* face-aware weights (CT_QUAD_FACE, with a lag) */
    int wmode;                /* the vertex family's weight mode: W_FACE if face, W_SHARE (convergent
                                 set, area-weighted edges, 3D) */
    const ct_pair_list *list; /* vf / ee / ve candidates */
    const int *pr;            /* convergent edge–edge: (edge, partner) grouped by edge */
    unsigned char *far;       /* convergent edge–edge: FAR_* bits per ee candidate */
    unsigned char *near;      /* if not NULL: per candidate of `list`, whether d² < near2 (or NaN) */
    double near2;
} build_ctx;

typedef int (*gen_fn)(const build_ctx *b, long lo, long hi, term_list *L, iset *eb, iset *vb);

/* The edge–edge weight ω_e (area: ½ w_e; dhat2: ee_dhat²), in the convergent set times the crease s_e */
#define OMEGA(e) ((b->ee_area ? 0.5 * s->edge_area[(e)] : b->omega) * (b->conv ? b->cm->edge_crease[(e)] : 1.0))

/* 3D: vertex–face candidates vf[lo, hi) (whole vertex groups) */
static int gen_vf(const build_ctx *b, long lo, long hi, term_list *L, iset *eb, iset *vb)
{
    const ct_contact_mesh *cm = b->cm;
    const ct_surface *s = cm->s;
    const ct_pair_list *vf = b->list;
    const double *x = b->x, dhat2 = b->dhat2;
    int err = 0;
    for (long i = lo; i < hi && !err;) {
        int v = vf->ij[2 * i];
        long j = i;
        const int face = b->wmode;
        double W = face & W_FACE ? b->fv
                                 : b->fv * (cm->wv[v] + (face & W_SHARE ? ct_contact_mesh_edge_share(cm, v, NULL) : 0.0));
        eb->n = vb->n = 0;
        for (; j < hi && vf->ij[2 * j] == v; ++j) {
            int f = vf->ij[2 * j + 1];
            const double d2 = add_pt(L, cm, x, v, f, W, face, dhat2, &err);
            if (b->near) b->near[j] = !(d2 >= b->near2);
            if (b->conv)
                for (int k = 0; k < 3; ++k) {
                    int e = cm->face_edges[3 * f + k];
                    if (e >= 0 && !edge_has(s, e, v) && iset_add(eb, e)) err = 1;
                    if (s->faces[3 * f + k] != v && iset_add(vb, s->faces[3 * f + k])) err = 1;
                }
        }
        if (b->conv && !err) {
            const double *P = X(x, 3, v);
            iset_sort(eb);
            iset_sort(vb);
            for (int k = 0; k < eb->n && !err; ++k) {
                int e = eb->a[k], e0 = s->edges[2 * e], e1 = s->edges[2 * e + 1];
                double d2;
                ct_pe_type t = ct_pe_classify_d2(3, P, X(x, 3, e0), X(x, 3, e1), &d2);
                if (d2 >= dhat2) continue;
                int ke = faces_without(cm, e, v);
                if (ke == 1) continue;
                if (push_pe(L, t, v, e, e0, e1, (1 - ke) * (W * vw_pe(cm, v, e, face)))) err = 1;
            }
            for (int k = 0; k < vb->n && !err; ++k) {
                int u = vb->a[k];
                if (ct_pp_d2(3, P, X(x, 3, u), NULL, NULL) >= dhat2) continue;
                int c = vertex_coef_3d(cm, u, v);
                if (c == 0) continue;
                if (push_pp(L, v, u, c * (W * vw_pp(cm, v, u, face)))) err = 1;
            }
        }
        i = j;
    }
    return err;
}

/* 3D: edge–edge candidates ee[lo, hi), weight ½(ω_a + ω_b) per pair */
static int gen_ee(const build_ctx *b, long lo, long hi, term_list *L, iset *eb, iset *vb)
{
    (void)eb, (void)vb;
    const ct_surface *s = b->cm->s;
    const ct_pair_list *ee = b->list;
    int err = 0;
    for (long i = lo; i < hi && !err; ++i) {
        int ea = ee->ij[2 * i], ebb = ee->ij[2 * i + 1];
        const double d2 = add_ee(L, b->cm, b->x, ea < ebb ? ea : ebb, ea < ebb ? ebb : ea,
                                 0.5 * (OMEGA(ea) + OMEGA(ebb)), b->face && b->ee_area, b->conv, b->dhat2,
                                 b->far ? &b->far[i] : NULL, &err);
        if (b->near) b->near[i] = !(d2 >= b->near2);
    }
    return err;
}

/* 3D convergent set: −(n_p(ea) − 1)·½ω_a per (edge ea, vertex p of a candidate partner edge), for
 * the (edge, partner) rows pr[lo, hi) (whole edge groups) */
static int gen_ee_conv(const build_ctx *b, long lo, long hi, term_list *L, iset *eb, iset *vb)
{
    (void)eb;
    const ct_contact_mesh *cm = b->cm;
    const ct_surface *s = cm->s;
    const int *pr = b->pr;
    const double *x = b->x, dhat2 = b->dhat2;
    int err = 0;
    for (long i = lo; i < hi && !err;) {
        int ea = pr[2 * i];
        long j = i;
        vb->n = 0;
        for (; j < hi && pr[2 * j] == ea; ++j) {
            int e2 = pr[2 * j + 1];
            for (int k = 0; k < 2; ++k) {
                int p = s->edges[2 * e2 + k];
                if (!edge_has(s, ea, p) && iset_add(vb, p)) err = 1;
            }
        }
        if (err) break;
        iset_sort(vb);
        int a0 = s->edges[2 * ea], a1 = s->edges[2 * ea + 1];
        const double *A0 = X(x, 3, a0), *A1 = X(x, 3, a1);
        for (int k = 0; k < vb->n && !err; ++k) {
            int p = vb->a[k], np = 0;
            double d2;
            ct_pe_type t = ct_pe_classify_d2(3, X(x, 3, p), A0, A1, &d2);
            if (d2 >= dhat2) continue;
            for (int q = cm->ve_ptr[p]; q < cm->ve_ptr[p + 1]; ++q) {
                int e = cm->ve_list[q];
                np += !edge_has(s, e, a0) && !edge_has(s, e, a1);
            }
            if (np == 1) continue;
            const double om = b->face && b->ee_area ? 0.5 * ew_pe(cm, ea, p) * cm->edge_crease[ea] : OMEGA(ea);
            if (push_pe(L, t, p, ea, a0, a1, -(np - 1) * 0.5 * om)) err = 1;
        }
        i = j;
    }
    return err;
}

/* 2D: vertex–edge candidates ve[lo, hi) (whole vertex groups) */
static int gen_ve(const build_ctx *b, long lo, long hi, term_list *L, iset *eb, iset *vb)
{
    (void)eb;
    const ct_contact_mesh *cm = b->cm;
    const ct_surface *s = cm->s;
    const ct_pair_list *ve = b->list;
    const double *x = b->x, dhat2 = b->dhat2;
    int err = 0;
    for (long i = lo; i < hi && !err;) {
        int v = ve->ij[2 * i];
        long j = i;
        const int face = b->wmode;
        double W = face & W_FACE ? b->fv : b->fv * cm->wv[v];
        const double *P = X(x, 2, v);
        vb->n = 0;
        for (; j < hi && ve->ij[2 * j] == v; ++j) {
            int e = ve->ij[2 * j + 1], e0 = s->edges[2 * e], e1 = s->edges[2 * e + 1];
            double d2;
            ct_pe_type t = ct_pe_classify_d2(2, P, X(x, 2, e0), X(x, 2, e1), &d2);
            if (d2 < dhat2 && push_pe(L, t, v, e, e0, e1, W * vw_pe(cm, v, e, face))) err = 1;
            if (b->near) b->near[j] = !(d2 >= b->near2);
            if (b->conv)
                for (int k = 0; k < 2; ++k)
                    if (s->edges[2 * e + k] != v && iset_add(vb, s->edges[2 * e + k])) err = 1;
        }
        if (b->conv && !err) {
            iset_sort(vb);
            for (int k = 0; k < vb->n && !err; ++k) {
                int u = vb->a[k];
                if (ct_pp_d2(2, P, X(x, 2, u), NULL, NULL) >= dhat2) continue;
                int c = vertex_coef_2d(cm, u, v);
                if (c == 0) continue;
                if (push_pp(L, v, u, c * (W * vw_pp(cm, v, u, face)))) err = 1;
            }
        }
        i = j;
    }
    return err;
}
#undef OMEGA

/* Run fn over rows [0, n) of a pair array `rows` (2 ints per row; rows with equal first entries
 * form a group, kept in one chunk when `grouped`), appending one term list per chunk to P. */
static int run_chunks(const build_ctx *b, gen_fn fn, const int *rows, long n, int grouped, int threads, part_list *P)
{
    if (n <= 0) return 0;
    enum { MAX_CHUNKS = 64, MIN_ROWS = 2048 };
    long nch = n / MIN_ROWS;
    nch = nch < 1 ? 1 : (nch > MAX_CHUNKS ? MAX_CHUNKS : nch);
    long bnd[MAX_CHUNKS + 1];
    bnd[0] = 0;
    for (long c = 1; c < nch; ++c) {
        long k = c * n / nch;
        if (k < bnd[c - 1]) k = bnd[c - 1];
        while (grouped && k > 0 && k < n && rows[2 * k] == rows[2 * (k - 1)]) ++k;
        bnd[c] = k;
    }
    bnd[nch] = n;
    term_list *part = ct_terms_new_parts(P, (int)nch);
    if (!part) return 1;
    int err = 0;
#pragma omp parallel num_threads(ct_threads(threads)) reduction(| : err) if (nch > 1)
    {
        iset eb = {NULL, 0, 0, b->cm->s->ned, NULL}, vb = {NULL, 0, 0, b->cm->nv, NULL};
#pragma omp for schedule(dynamic, 1)
        for (long c = 0; c < nch; ++c) err |= fn(b, bnd[c], bnd[c + 1], &part[c], &eb, &vb);
        free(eb.a);
        free(eb.mark);
        free(vb.a);
        free(vb.mark);
    }
    return err;
}

/* The candidates of `in` whose flag is set, appended to out (emptied first). */
static ct_status keep_flagged(const ct_pair_list *in, const unsigned char *flag, ct_pair_list *out)
{
    out->n = 0;
    if (ct_pair_list_reserve(out, in->n) != CT_OK) return CT_ENOMEM;
    for (long i = 0; i < in->n; ++i)
        if (flag[i]) {
            out->ij[2 * out->n] = in->ij[2 * i];
            out->ij[2 * out->n + 1] = in->ij[2 * i + 1];
            out->n++;
        }
    return CT_OK;
}

ct_status ct_collision_set_build(ct_collision_set *cs, const ct_contact_mesh *cm, const ct_candidates *cand,
                                 const ct_obstacle *obs, int nobs, const double *x, const ct_colset_opts *o)
{
    return ct_collision_set_build_near(cs, cm, cand, obs, nobs, x, o, 0.0, NULL);
}

/* The (edge, partner) rows of the convergent set's edge–edge correction, 2 ints per row in *rows
 * (malloc'd, *n rows): the partners of each edge, both directions, grouped by the first edge (a
 * counting sort; the order inside a group does not matter: its vertices are sorted). A direction
 * is left out when gen_ee found both partner vertices at d² >= d̂² from the edge (the same
 * ct_pe_classify_d2 values gen_ee_conv would compute, so it would skip them): a vertex reached
 * only through such rows gives no term either way. Returns 1 if out of memory. */
static int ee_partner_rows(const ct_pair_list *ee, const unsigned char *far, int ned, int **rows, long *n)
{
    long *cnt = calloc((size_t)ned + 1, sizeof *cnt), n2 = 0;
    if (!cnt) return 1;
    for (long i = 0; i < ee->n; ++i) {
        int e0 = ee->ij[2 * i], e1 = ee->ij[2 * i + 1], lo = e0 < e1 ? e0 : e1, hi = e0 < e1 ? e1 : e0;
        if (!(far[i] & FAR_B_A)) cnt[lo]++, n2++;
        if (!(far[i] & FAR_A_B)) cnt[hi]++, n2++;
    }
    int *pr = malloc((size_t)(n2 ? n2 : 1) * 2 * sizeof *pr);
    if (!pr) {
        free(cnt);
        return 1;
    }
    for (long e = 0, acc = 0; e <= ned; ++e) {
        long c = cnt[e];
        cnt[e] = acc;
        acc += c;
    }
    for (long i = 0; i < ee->n; ++i) {
        int e0 = ee->ij[2 * i], e1 = ee->ij[2 * i + 1], lo = e0 < e1 ? e0 : e1, hi = e0 < e1 ? e1 : e0;
        if (!(far[i] & FAR_B_A)) {
            long k = cnt[lo]++;
            pr[2 * k] = lo, pr[2 * k + 1] = hi;
        }
        if (!(far[i] & FAR_A_B)) {
            long k = cnt[hi]++;
            pr[2 * k] = hi, pr[2 * k + 1] = lo;
        }
    }
    free(cnt);
    *rows = pr;
    *n = n2;
    return 0;
}

/* 3D: the vertex–face terms, then the edge–edge terms, ½(ω_a + ω_b) per pair, and for the
 * convergent set −(n_p(ea) − 1)·½ω_a per (edge ea, vertex p of a candidate partner edge). With
 * `near`, the candidates flagged by the generators are kept there. Returns 1 if out of memory. */
static int build_terms_3d(build_ctx *b, const ct_candidates *cand, int split, int threads, unsigned char *flag,
                          ct_candidates *near, part_list *P)
{
    b->list = &cand->vf;
    b->near = flag;
    int err = run_chunks(b, gen_vf, cand->vf.ij, cand->vf.n, 1, threads, P);
    if (near && !err && keep_flagged(&cand->vf, flag, &near->vf) != CT_OK) err = 1;
    const ct_pair_list *ee = &cand->ee;
    const int first_ee_part = P->n;
    b->list = ee;
    if (b->conv && ee->n && !(b->far = malloc((size_t)ee->n))) err = 1;
    if (!err) err = run_chunks(b, gen_ee, ee->ij, ee->n, 0, threads, P);
    if (near && !err && keep_flagged(ee, flag, &near->ee) != CT_OK) err = 1;
    b->near = NULL;
    if (b->conv && !err && ee->n) {
        int *pr = NULL;
        long n2 = 0;
        if (ee_partner_rows(ee, b->far, b->cm->s->ned, &pr, &n2)) err = 1;
        b->pr = pr;
        if (!err) err = run_chunks(b, gen_ee_conv, pr, n2, 1, threads, P);
        free(pr);
        b->pr = NULL;
    }
    free(b->far);
    b->far = NULL;
    if (split) /* the edge–edge family's point terms go to their own buckets */
        for (int q = first_ee_part; q < P->n; ++q) {
            term_buf t = P->p[q].b[B_PP];
            P->p[q].b[B_PP] = P->p[q].b[B_PP_E], P->p[q].b[B_PP_E] = t;
            t = P->p[q].b[B_PE];
            P->p[q].b[B_PE] = P->p[q].b[B_PE_E], P->p[q].b[B_PE_E] = t;
        }
    return err;
}

/* Obstacles: every movable surface vertex against every half-space, one term list appended to P;
 * face: the vertex's face-aware weight for the half-space's normal. Returns 1 if out of memory. */
static int build_terms_obstacles(const ct_contact_mesh *cm, const ct_obstacle *obs, int nobs, const double *x,
                                 double dhat, int face, part_list *P)
{
    const ct_surface *s = cm->s;
    const int dim = cm->dim;
    term_list *L = nobs > 0 ? ct_terms_new_parts(P, 1) : NULL;
    if (nobs > 0 && !L) return 1;
    for (int b = 0; b < nobs; ++b) {
        for (int k = 0; k < s->nbv; ++k) {
            int v = s->bverts[k];
            if (cm->movable && !cm->movable[v]) continue;
            const double *xv = X(x, dim, v);
            double d = 0.0;
            for (int i = 0; i < dim; ++i) d += obs[b].normal[i] * (xv[i] - obs[b].point[i]);
            if (!(d < dhat)) continue;
            if (push(L, B_PH, v, b, face ? ct_contact_mesh_vertex_weight(cm, v, obs[b].normal) : cm->wv[v])) return 1;
        }
    }
    return 0;
}

ct_status ct_collision_set_build_near(ct_collision_set *cs, const ct_contact_mesh *cm, const ct_candidates *cand,
                                      const ct_obstacle *obs, int nobs, const double *x, const ct_colset_opts *o,
                                      double near_dist, ct_candidates *near)
{
    const int dim = cm->dim;
    const double dhat = o->dhat, dhat2 = dhat * dhat;
    const int conv = o->kind == CT_COLSET_CONVERGENT;
    /* weights: PT-side vertex weight factor and EE per-edge weight omega_e */
    const int ee_area = !conv || o->ee_weight == CT_EEW_AREA;
    const double fv = dim == 2 ? 0.5 : (ee_area ? 0.25 : 0.5);
    part_list P = {0};
    int err = 0;
    const int split = conv && o->split_ee;
    const double ee_dhat = o->ee_dhat > 0.0 ? o->ee_dhat : dhat;
    const int face = cm->quadrature == CT_QUAD_FACE && cm->x_lag && cm->face_un;
    build_ctx b = {.cm = cm,
                   .x = x,
                   .dhat2 = dhat2,
                   .fv = fv,
                   .omega = ee_dhat * ee_dhat,
                   .conv = conv,
                   .ee_area = ee_area,
                   .face = face,
                   .wmode = (face ? W_FACE : 0) | (conv && ee_area && dim == 3 ? W_SHARE : 0),
                   .near2 = near_dist * near_dist};
    unsigned char *flag = NULL;
    if (near) {
        const long nmax = cand->vf.n > cand->ee.n ? (cand->vf.n > cand->ve.n ? cand->vf.n : cand->ve.n)
                                                  : (cand->ee.n > cand->ve.n ? cand->ee.n : cand->ve.n);
        if (!(flag = malloc((size_t)nmax + 1))) return CT_ENOMEM;
        ct_candidates_clear(near);
    }
    if (dim == 3) {
        err = build_terms_3d(&b, cand, split, o->threads, flag, near, &P);
    } else {
        b.list = &cand->ve;
        b.near = flag;
        err = run_chunks(&b, gen_ve, cand->ve.ij, cand->ve.n, 1, o->threads, &P);
        if (near && !err && keep_flagged(&cand->ve, flag, &near->ve) != CT_OK) err = 1;
    }
    free(flag);
    if (!err) err = build_terms_obstacles(cm, obs, nobs, x, dhat, face, &P);
    ct_status st = err ? CT_ENOMEM : ct_terms_write_set(cs, cm, &P, o->threads, split, face);
    for (int q = 0; q < P.n; ++q) ct_term_list_free(&P.p[q]);
    free(P.p);
    return st;
}
