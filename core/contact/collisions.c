/* collisions.c — collision sets and the evaluation of Σ_k w_k m_k ψ(d_k²).
 *
 * Construction (see ct_collisions.h and models/ipc_adhesion/README.md for the formulas):
 * every broad-phase candidate within d̂ becomes a term whose stencil is reduced to its closest
 * features (a point–triangle pair whose closest point is a triangle vertex becomes a point–point
 * term, and so on). The convergent construction adds the inclusion–exclusion terms of the max
 * approximation: for a vertex v, −(k_e(v) − 1) point–edge terms and c_u(v) point–point terms,
 * where k_e(v) counts the triangles at e not containing v and c_u(v) = 1 − n_t(u; v) +
 * Σ_{e∋u, e∌v} (k_e(v) − 1) (for a closed manifold: 1 if u is not adjacent to v, else 0). The
 * identity behind it: if the closest point of the other surface is a vertex u (or an edge
 * interior point), the triangles, edges and vertices that share it contribute faces − edges +
 * vertices = 1 copy of b(d). Terms with the same stencil are merged by summing weights.
 *
 * Evaluation: per-term energies, gradients and PSD-projected Hessian blocks in parallel, in
 * deterministic order. The Hessian of a point–point, point–line, point–plane or line–line term
 * is formed in factored form U C Uᵀ of rank ≤ 5 from the envelope theorem and projected through
 * an eigenproblem of size ≤ 5 (see "factored barrier Hessians" below); the others (mollified
 * edge–edge, half-space, degenerate cases) are projected in the complement of the translations
 * ((m−1)·dim unknowns) with an inline symmetric eigensolver (Householder tridiagonalization +
 * implicit QL, Golub & Van Loan §8.3) that forms only the eigenvectors of the smaller side of
 * the spectrum (see "per-term PSD projection" below).
 */
#include "contactlab/ct_collisions.h"

#include "contactlab/ct_distance.h"
#include "contactlab/ct_material.h"
#include "base/parallel.h"

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------------------------ */
/* topology                                                                                    */

void ct_collision_set_init(ct_collision_set *cs) { memset(cs, 0, sizeof *cs); }
void ct_collision_set_free(ct_collision_set *cs)
{
    free(cs->c);
    memset(cs, 0, sizeof *cs);
}

int ct_collision_nverts(const ct_collision *c)
{
    switch (c->kind) {
    case CT_COL_PP: return 2;
    case CT_COL_PE: return 3;
    case CT_COL_PT:
    case CT_COL_EE: return 4;
    default: return 1; /* PH */
    }
}

void ct_contact_mesh_free(ct_contact_mesh *cm)
{
    free(cm->face_edges);
    free(cm->ef_ptr);
    free(cm->ef_opp);
    free(cm->ve_ptr);
    free(cm->ve_list);
    free(cm->vv_ptr);
    free(cm->vv_list);
    free(cm->interior);
    memset(cm, 0, sizeof *cm);
}

/* Index of edge (a, b) in the sorted edge list, -1 if absent. */
static int find_edge(const ct_surface *s, int a, int b)
{
    if (a > b) {
        int t = a;
        a = b;
        b = t;
    }
    int lo = 0, hi = s->ned - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int ea = s->edges[2 * mid], eb = s->edges[2 * mid + 1];
        if (ea == a && eb == b) return mid;
        if (ea < a || (ea == a && eb < b)) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* CSR from (key, value) counts: ptr has n+1 entries. */
static int *csr_ptr(const int *count, int n)
{
    int *ptr = malloc(((size_t)n + 1) * sizeof *ptr);
    if (!ptr) return NULL;
    ptr[0] = 0;
    for (int i = 0; i < n; ++i) ptr[i + 1] = ptr[i] + count[i];
    return ptr;
}

ct_status ct_contact_mesh_init(ct_contact_mesh *cm, int dim, const ct_surface *s, const double *x_rest,
                               const int *part, const unsigned char *movable)
{
    memset(cm, 0, sizeof *cm);
    cm->dim = dim;
    cm->nv = s->nv;
    cm->s = s;
    cm->x_rest = x_rest;
    cm->part = part;
    cm->movable = movable;
    cm->wv = s->vert_area;
    int nv = s->nv, ne = s->ned;
    int *count = calloc((size_t)(nv > ne ? nv : ne) + 1, sizeof *count);
    int *fill = NULL;
    if (!count) goto nomem;

    /* vertex -> incident edges */
    for (int e = 0; e < ne; ++e) count[s->edges[2 * e]]++, count[s->edges[2 * e + 1]]++;
    if (!(cm->ve_ptr = csr_ptr(count, nv))) goto nomem;
    cm->ve_list = malloc(((size_t)cm->ve_ptr[nv] + 1) * sizeof(int));
    fill = calloc((size_t)nv + 1, sizeof *fill);
    if (!cm->ve_list || !fill) goto nomem;
    for (int e = 0; e < ne; ++e)
        for (int k = 0; k < 2; ++k) {
            int v = s->edges[2 * e + k];
            cm->ve_list[cm->ve_ptr[v] + fill[v]++] = e;
        }
    /* vertex -> adjacent vertices (sorted) */
    if (!(cm->vv_ptr = malloc(((size_t)nv + 1) * sizeof(int)))) goto nomem;
    memcpy(cm->vv_ptr, cm->ve_ptr, ((size_t)nv + 1) * sizeof(int));
    cm->vv_list = malloc(((size_t)cm->vv_ptr[nv] + 1) * sizeof(int));
    if (!cm->vv_list) goto nomem;
    for (int v = 0; v < nv; ++v) {
        for (int k = cm->ve_ptr[v]; k < cm->ve_ptr[v + 1]; ++k) {
            int e = cm->ve_list[k];
            cm->vv_list[k] = s->edges[2 * e] == v ? s->edges[2 * e + 1] : s->edges[2 * e];
        }
        qsort(cm->vv_list + cm->vv_ptr[v], (size_t)(cm->vv_ptr[v + 1] - cm->vv_ptr[v]), sizeof(int), cmp_int);
    }
    cm->interior = calloc((size_t)nv + 1, 1);
    if (!cm->interior) goto nomem;

    if (dim == 3) {
        int nf = s->nf;
        cm->face_edges = malloc(((size_t)nf * 3 + 1) * sizeof(int));
        if (!cm->face_edges) goto nomem;
        memset(count, 0, ((size_t)(nv > ne ? nv : ne) + 1) * sizeof *count);
        for (int f = 0; f < nf; ++f)
            for (int k = 0; k < 3; ++k) {
                int e = find_edge(s, s->faces[3 * f + k], s->faces[3 * f + (k + 1) % 3]);
                cm->face_edges[3 * f + k] = e;
                if (e >= 0) count[e]++;
            }
        if (!(cm->ef_ptr = csr_ptr(count, ne))) goto nomem;
        cm->ef_opp = malloc(((size_t)cm->ef_ptr[ne] + 1) * sizeof(int));
        free(fill);
        fill = calloc((size_t)ne + 1, sizeof *fill);
        if (!cm->ef_opp || !fill) goto nomem;
        for (int f = 0; f < nf; ++f)
            for (int k = 0; k < 3; ++k) {
                int e = cm->face_edges[3 * f + k];
                if (e >= 0) cm->ef_opp[cm->ef_ptr[e] + fill[e]++] = s->faces[3 * f + (k + 2) % 3];
            }
        /* a vertex is on the border of an open surface if one of its edges has one face */
        for (int v = 0; v < nv; ++v) {
            int border = 0, any = 0;
            for (int k = cm->ve_ptr[v]; k < cm->ve_ptr[v + 1]; ++k) {
                int e = cm->ve_list[k];
                any = 1;
                if (cm->ef_ptr[e + 1] - cm->ef_ptr[e] < 2) border = 1;
            }
            cm->interior[v] = (unsigned char)(any && !border);
        }
    } else {
        for (int v = 0; v < nv; ++v) cm->interior[v] = (unsigned char)(cm->ve_ptr[v + 1] - cm->ve_ptr[v] == 2);
    }
    free(count);
    free(fill);
    return CT_OK;
nomem:
    free(count);
    free(fill);
    ct_contact_mesh_free(cm);
    return CT_ENOMEM;
}

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
/* term lists with merging                                                                     */

/* A term is a record (key, w) in one of NBUCKET lists, one per kind (and, for mollified edge–edge
 * terms, per closest-feature type): the collision is a function of the bucket and of
 * key = k0·2³² + k1 (PP: the two vertices, smaller first; PE: point, edge; PT: point, face;
 * EE: edges a < b; PH: vertex, obstacle), so it is rebuilt from the record when the set is written
 * (types: PE P_E, PT P_T, EE A_B unless mollified; mollified EE: the bucket's type and the
 * threshold ε of its rest edges). The set is ordered by (bucket, key): the order of (kind,
 * mollified type + 1 or 0, k0, k1). Records with the same bucket and key are merged by summing
 * their weights in generation order (the sort is stable), zero sums dropped. */
enum { B_PP, B_PE, B_PT, B_EE, B_EE_MOLL, B_PH = B_EE_MOLL + 9, B_PP_E, B_PE_E, NBUCKET };
/* B_PP_E, B_PE_E: the point–point and point–edge terms of the edge–edge family when the set is
 * built with split_ee (the family's chunk lists move their B_PP / B_PE records there, so they are
 * not merged with the vertex quadrature's); empty otherwise, so they change nothing. */

typedef struct {
    uint64_t key;
    double w;
} term;

typedef struct {
    term *t;
    long n, cap;
} term_buf;

typedef struct {
    term_buf b[NBUCKET];
} term_list;

static void term_list_free(term_list *L)
{
    for (int k = 0; k < NBUCKET; ++k) free(L->b[k].t);
    memset(L, 0, sizeof *L);
}

static int grow(term_buf *B)
{
    long nc = B->cap ? 2 * B->cap : 256;
    term *t = realloc(B->t, (size_t)nc * sizeof *t);
    if (!t) return -1;
    B->t = t;
    B->cap = nc;
    return 0;
}

static inline int push(term_list *L, int bucket, int k0, int k1, double w)
{
    term_buf *B = &L->b[bucket];
    if (B->n == B->cap && grow(B)) return -1;
    B->t[B->n].key = ((uint64_t)(uint32_t)k0 << 32) | (uint32_t)k1;
    B->t[B->n].w = w;
    B->n++;
    return 0;
}

static const double *X(const double *x, int dim, int v) { return x + (size_t)dim * (size_t)v; }

/* point–point term (a, b) */
static inline int push_pp(term_list *L, int a, int b, double w)
{
    return push(L, B_PP, a < b ? a : b, a < b ? b : a, w);
}

/* point p against edge e = (e0, e1), reduced by the point–edge type t */
static inline int push_pe(term_list *L, ct_pe_type t, int p, int e, int e0, int e1, double w)
{
    if (t == CT_PE_P_E0) return push_pp(L, p, e0, w);
    if (t == CT_PE_P_E1) return push_pp(L, p, e1, w);
    return push(L, B_PE, p, e, w);
}

/* Vertex p against face f: the term of the classified closest features if d < d̂. */
static double add_pt(term_list *L, const ct_contact_mesh *cm, const double *x, int p, int f, double w, double dhat2,
                     int *err)
{
    const int *F = cm->s->faces + 3 * f;
    double d2;
    ct_pt_type t = ct_pt_classify_d2(X(x, 3, p), X(x, 3, F[0]), X(x, 3, F[1]), X(x, 3, F[2]), &d2);
    if (!(d2 < dhat2)) return d2;
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
                     double dhat2, unsigned char *far, int *err)
{
    const ct_surface *s = cm->s;
    int a0 = s->edges[2 * ea], a1 = s->edges[2 * ea + 1], b0 = s->edges[2 * eb], b1 = s->edges[2 * eb + 1];
    double d2, c2, pe[4];
    ct_ee_type t = ct_ee_classify_d2(X(x, 3, a0), X(x, 3, a1), X(x, 3, b0), X(x, 3, b1), &d2, &c2, far ? pe : NULL);
    if (far)
        *far = (unsigned char)((pe[2] >= dhat2 && pe[3] >= dhat2 ? FAR_B_A : 0) |
                               (pe[0] >= dhat2 && pe[1] >= dhat2 ? FAR_A_B : 0));
    if (!(d2 < dhat2)) return d2;
    const double *xr = cm->x_rest;
    double eps_x = ct_ee_mollifier_eps(X(xr, 3, a0), X(xr, 3, a1), X(xr, 3, b0), X(xr, 3, b1));
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

/* The collision of record (bucket, key, w). */
static void term_collision(ct_collision *c, int bucket, uint64_t key, double w, const ct_contact_mesh *cm, int split)
{
    const ct_surface *s = cm->s;
    const int k0 = (int)(uint32_t)(key >> 32), k1 = (int)(uint32_t)key;
    memset(c, 0, sizeof *c);
    c->side = 1;
    c->w = w;
    c->v[0] = k0;
    if (split && (bucket == B_PP_E || bucket == B_PE_E || (bucket >= B_EE && bucket < B_PH))) {
        c->flags = CT_COL_EDGE_FAMILY;
        if (bucket == B_PP_E) bucket = B_PP;
        if (bucket == B_PE_E) bucket = B_PE;
    }
    switch (bucket) {
    case B_PP: c->kind = CT_COL_PP, c->v[1] = k1; break;
    case B_PE:
        c->kind = CT_COL_PE, c->type = CT_PE_P_E;
        c->v[1] = s->edges[2 * k1], c->v[2] = s->edges[2 * k1 + 1];
        break;
    case B_PT:
        c->kind = CT_COL_PT, c->type = CT_PT_P_T;
        for (int k = 0; k < 3; ++k) c->v[1 + k] = s->faces[3 * k1 + k];
        break;
    case B_PH: c->kind = CT_COL_PH, c->v[1] = k1; break;
    default: {
        c->kind = CT_COL_EE;
        c->side = 2;
        c->v[0] = s->edges[2 * k0], c->v[1] = s->edges[2 * k0 + 1];
        c->v[2] = s->edges[2 * k1], c->v[3] = s->edges[2 * k1 + 1];
        if (bucket == B_EE) {
            c->type = CT_EE_A_B;
        } else {
            const double *xr = cm->x_rest;
            c->type = (unsigned char)(bucket - B_EE_MOLL);
            c->eps_x = ct_ee_mollifier_eps(X(xr, 3, c->v[0]), X(xr, 3, c->v[1]), X(xr, 3, c->v[2]), X(xr, 3, c->v[3]));
        }
    }
    }
}

/* Stable sort of n records by key: LSD radix sort on the bytes that vary (one counting pass for
 * all eight byte histograms, then one scatter per varying byte); a sorted input is returned as is.
 * Returns the array holding the result (a or tmp; tmp has room for n records), NULL if tmp is
 * needed but NULL. */
static term *radix_sort(term *a, term *tmp, long n)
{
    long i = 1;
    while (i < n && a[i - 1].key <= a[i].key) ++i;
    if (i >= n) return a;
    if (!tmp) return NULL;
    long (*cnt)[256] = calloc(8, sizeof *cnt);
    if (!cnt) return NULL;
    for (long j = 0; j < n; ++j) {
        uint64_t k = a[j].key;
        for (int d = 0; d < 8; ++d) cnt[d][(k >> (8 * d)) & 255]++;
    }
    term *src = a, *dst = tmp;
    for (int d = 0; d < 8; ++d) {
        long *c = cnt[d];
        if (c[(src[0].key >> (8 * d)) & 255] == n) continue; /* this byte is the same everywhere */
        long acc = 0;
        for (int v = 0; v < 256; ++v) {
            long m = c[v];
            c[v] = acc;
            acc += m;
        }
        for (long j = 0; j < n; ++j) dst[c[(src[j].key >> (8 * d)) & 255]++] = src[j];
        term *t = src;
        src = dst;
        dst = t;
    }
    free(cnt);
    return src;
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
    const ct_pair_list *list; /* vf / ee / ve candidates */
    const int *pr;            /* convergent edge–edge: (edge, partner) grouped by edge */
    unsigned char *far;       /* convergent edge–edge: FAR_* bits per ee candidate */
    unsigned char *near;      /* if not NULL: per candidate of `list`, whether d² < near2 (or NaN) */
    double near2;
} build_ctx;

typedef int (*gen_fn)(const build_ctx *b, long lo, long hi, term_list *L, iset *eb, iset *vb);

#define OMEGA(e) (b->ee_area ? 0.5 * s->edge_area[(e)] : b->omega)

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
        double W = b->fv * cm->wv[v];
        eb->n = vb->n = 0;
        for (; j < hi && vf->ij[2 * j] == v; ++j) {
            int f = vf->ij[2 * j + 1];
            const double d2 = add_pt(L, cm, x, v, f, W, dhat2, &err);
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
                if (push_pe(L, t, v, e, e0, e1, (1 - ke) * W)) err = 1;
            }
            for (int k = 0; k < vb->n && !err; ++k) {
                int u = vb->a[k];
                if (ct_pp_d2(3, P, X(x, 3, u), NULL, NULL) >= dhat2) continue;
                int c = vertex_coef_3d(cm, u, v);
                if (c == 0) continue;
                if (push_pp(L, v, u, c * W)) err = 1;
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
                                 0.5 * (OMEGA(ea) + OMEGA(ebb)), b->dhat2, b->far ? &b->far[i] : NULL, &err);
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
            if (push_pe(L, t, p, ea, a0, a1, -(np - 1) * 0.5 * OMEGA(ea))) err = 1;
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
        double W = b->fv * cm->wv[v];
        const double *P = X(x, 2, v);
        vb->n = 0;
        for (; j < hi && ve->ij[2 * j] == v; ++j) {
            int e = ve->ij[2 * j + 1], e0 = s->edges[2 * e], e1 = s->edges[2 * e + 1];
            double d2;
            ct_pe_type t = ct_pe_classify_d2(2, P, X(x, 2, e0), X(x, 2, e1), &d2);
            if (d2 < dhat2 && push_pe(L, t, v, e, e0, e1, W)) err = 1;
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
                if (push_pp(L, v, u, c * W)) err = 1;
            }
        }
        i = j;
    }
    return err;
}
#undef OMEGA

/* The chunk lists of every phase, in generation order. */
typedef struct {
    term_list *p;
    int n, cap;
} part_list;

static term_list *new_parts(part_list *P, int k)
{
    if (P->n + k > P->cap) {
        int nc = P->cap ? P->cap : 64;
        while (nc < P->n + k) nc *= 2;
        term_list *p = realloc(P->p, (size_t)nc * sizeof *p);
        if (!p) return NULL;
        P->p = p;
        P->cap = nc;
    }
    term_list *r = P->p + P->n;
    memset(r, 0, (size_t)k * sizeof *r);
    P->n += k;
    return r;
}

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
    term_list *part = new_parts(P, (int)nch);
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

/* Join, sort and merge the lists of every bucket, then write the set. */
static ct_status write_set(ct_collision_set *cs, const ct_contact_mesh *cm, part_list *P, int threads, int split)
{
    term *arr[NBUCKET] = {0};
    long cnt[NBUCKET] = {0};
    int err = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(ct_threads(threads)) reduction(| : err)
    for (int k = 0; k < NBUCKET; ++k) {
        long n = 0;
        for (int q = 0; q < P->n; ++q) n += P->p[q].b[k].n;
        term *a = n ? malloc((size_t)n * sizeof *a) : NULL;
        if (n && !a) err = 1;
        long m = 0;
        for (int q = 0; q < P->n; ++q) {
            term_buf *B = &P->p[q].b[k];
            if (a && B->n) memcpy(a + m, B->t, (size_t)B->n * sizeof *a);
            m += B->n;
            free(B->t);
            B->t = NULL;
            B->n = B->cap = 0;
        }
        if (!a) continue;
        term *tmp = NULL, *s = radix_sort(a, NULL, n);
        if (!s) {
            tmp = malloc((size_t)n * sizeof *tmp);
            s = radix_sort(a, tmp, n);
        }
        if (!s) {
            err = 1;
            free(a);
            free(tmp);
            continue;
        }
        /* merge equal keys (weights summed in generation order), compacting into a */
        m = 0;
        for (long i = 0; i < n;) {
            long j = i;
            double w = 0.0;
            for (; j < n && s[j].key == s[i].key; ++j) w += s[j].w;
            if (w != 0.0) {
                a[m].key = s[i].key;
                a[m].w = w;
                m++;
            }
            i = j;
        }
        free(tmp);
        arr[k] = a;
        cnt[k] = m;
    }
    long total = 0, off[NBUCKET];
    for (int k = 0; k < NBUCKET; ++k) off[k] = total, total += cnt[k];
    if (!err && cs->cap < total) {
        ct_collision *c = realloc(cs->c, (size_t)(total ? total : 1) * sizeof *c);
        if (!c) err = 1;
        else {
            cs->c = c;
            cs->cap = total;
        }
    }
    if (!err) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(ct_threads(threads))
        for (int k = 0; k < NBUCKET; ++k)
            for (long i = 0; i < cnt[k]; ++i) term_collision(&cs->c[off[k] + i], k, arr[k][i].key, arr[k][i].w, cm, split);
        cs->n = total;
    }
    for (int k = 0; k < NBUCKET; ++k) free(arr[k]);
    return err ? CT_ENOMEM : CT_OK;
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

ct_status ct_collision_set_build_near(ct_collision_set *cs, const ct_contact_mesh *cm, const ct_candidates *cand,
                                      const ct_obstacle *obs, int nobs, const double *x, const ct_colset_opts *o,
                                      double near_dist, ct_candidates *near)
{
    const ct_surface *s = cm->s;
    const int dim = cm->dim;
    const double dhat = o->dhat, dhat2 = dhat * dhat;
    const int conv = o->kind == CT_COLSET_CONVERGENT;
    /* weights: PT-side vertex weight factor and EE per-edge weight omega_e */
    const int ee_area = !conv || o->ee_weight == CT_EEW_AREA;
    const double fv = dim == 2 ? 0.5 : (ee_area ? 0.25 : 0.5);
    part_list P = {0};
    int err = 0, first_ee_part = 0;
    const int split = conv && o->split_ee;
    const double ee_dhat = o->ee_dhat > 0.0 ? o->ee_dhat : dhat;
    build_ctx b = {cm, x, dhat2, fv, ee_dhat * ee_dhat, conv, ee_area, NULL, NULL, NULL, NULL, near_dist * near_dist};
    unsigned char *flag = NULL;
    if (near) {
        const long nmax = cand->vf.n > cand->ee.n ? (cand->vf.n > cand->ve.n ? cand->vf.n : cand->ve.n)
                                                  : (cand->ee.n > cand->ve.n ? cand->ee.n : cand->ve.n);
        if (!(flag = malloc((size_t)nmax + 1))) return CT_ENOMEM;
        ct_candidates_clear(near);
    }

    if (dim == 3) {
        b.list = &cand->vf;
        b.near = flag;
        err = run_chunks(&b, gen_vf, cand->vf.ij, cand->vf.n, 1, o->threads, &P);
        if (near && !err && keep_flagged(&cand->vf, flag, &near->vf) != CT_OK) err = 1;
        /* edge–edge: ½(ω_a + ω_b) per pair, and for the convergent set −(n_p(ea) − 1)·½ω_a per
         * (edge ea, vertex p of a candidate partner edge) */
        const ct_pair_list *ee = &cand->ee;
        first_ee_part = P.n;
        b.list = ee;
        if (conv && ee->n && !(b.far = malloc((size_t)ee->n))) err = 1;
        if (!err) err = run_chunks(&b, gen_ee, ee->ij, ee->n, 0, o->threads, &P);
        if (near && !err && keep_flagged(ee, flag, &near->ee) != CT_OK) err = 1;
        b.near = NULL;
        if (conv && !err && ee->n) {
            /* partners of each edge, both directions, grouped by the first edge (a counting sort;
             * the order inside a group does not matter: its vertices are sorted). A direction is
             * left out when gen_ee found both partner vertices at d² >= d̂² from the edge (the same
             * ct_pe_classify_d2 values gen_ee_conv would compute, so it would skip them): a vertex
             * reached only through such rows gives no term either way. */
            const unsigned char *far = b.far;
            long *cnt = calloc((size_t)s->ned + 1, sizeof *cnt), n2 = 0;
            if (!cnt) err = 1;
            for (long i = 0; i < ee->n && !err; ++i) {
                int e0 = ee->ij[2 * i], e1 = ee->ij[2 * i + 1], lo = e0 < e1 ? e0 : e1, hi = e0 < e1 ? e1 : e0;
                if (!(far[i] & FAR_B_A)) cnt[lo]++, n2++;
                if (!(far[i] & FAR_A_B)) cnt[hi]++, n2++;
            }
            int *pr = err ? NULL : malloc((size_t)(n2 ? n2 : 1) * 2 * sizeof *pr);
            if (!pr) err = 1;
            for (long e = 0, acc = 0; e <= s->ned && !err; ++e) {
                long c = cnt[e];
                cnt[e] = acc;
                acc += c;
            }
            for (long i = 0; i < ee->n && !err; ++i) {
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
            b.pr = pr;
            if (!err) err = run_chunks(&b, gen_ee_conv, pr, n2, 1, o->threads, &P);
            free(pr);
        }
        free(b.far);
        if (split) /* the edge–edge family's point terms go to their own buckets */
            for (int q = first_ee_part; q < P.n; ++q) {
                term_buf t = P.p[q].b[B_PP];
                P.p[q].b[B_PP] = P.p[q].b[B_PP_E], P.p[q].b[B_PP_E] = t;
                t = P.p[q].b[B_PE];
                P.p[q].b[B_PE] = P.p[q].b[B_PE_E], P.p[q].b[B_PE_E] = t;
            }
    } else {
        b.list = &cand->ve;
        b.near = flag;
        err = run_chunks(&b, gen_ve, cand->ve.ij, cand->ve.n, 1, o->threads, &P);
        if (near && !err && keep_flagged(&cand->ve, flag, &near->ve) != CT_OK) err = 1;
        b.near = NULL;
    }
    free(flag);
    /* obstacles: every movable surface vertex against every half-space */
    term_list *L = nobs > 0 && !err ? new_parts(&P, 1) : NULL;
    if (nobs > 0 && !L) err = 1;
    for (int b = 0; b < nobs && !err; ++b) {
        for (int k = 0; k < s->nbv && !err; ++k) {
            int v = s->bverts[k];
            if (cm->movable && !cm->movable[v]) continue;
            const double *xv = X(x, dim, v);
            double d = 0.0;
            for (int i = 0; i < dim; ++i) d += obs[b].normal[i] * (xv[i] - obs[b].point[i]);
            if (!(d < dhat)) continue;
            if (push(L, B_PH, v, b, cm->wv[v])) err = 1;
        }
    }
    ct_status st = err ? CT_ENOMEM : write_set(cs, cm, &P, o->threads, split);
    for (int q = 0; q < P.n; ++q) term_list_free(&P.p[q]);
    free(P.p);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* evaluation                                                                                   */

double ct_collision_d2(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                       const double *x, double *g, double *H)
{
    const int dim = cm->dim;
    const int *v = c->v;
    switch (c->kind) {
    case CT_COL_PP: return ct_pp_d2(dim, X(x, dim, v[0]), X(x, dim, v[1]), g, H);
    case CT_COL_PE:
        return ct_pe_d2(dim, X(x, dim, v[0]), X(x, dim, v[1]), X(x, dim, v[2]), (ct_pe_type)c->type, g, H);
    case CT_COL_PT:
        return ct_pt_d2(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), (ct_pt_type)c->type, g, H);
    case CT_COL_EE:
        return ct_ee_d2(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), (ct_ee_type)c->type, g, H);
    default: {
        const ct_obstacle *o = &obs[v[1]];
        const double *P = X(x, dim, v[0]);
        double d = 0.0;
        for (int i = 0; i < dim; ++i) d += o->normal[i] * (P[i] - o->point[i]);
        if (g)
            for (int i = 0; i < dim; ++i) g[i] = 2.0 * d * o->normal[i];
        if (H)
            for (int i = 0; i < dim; ++i)
                for (int j = 0; j < dim; ++j) H[i + dim * j] = 2.0 * o->normal[i] * o->normal[j];
        return d * d;
    }
    }
}

/* Mollifier value with gradient/Hessian in the EE stencil (12 / 144), 1 for other kinds. */
static double mollifier(const ct_collision *c, const double *x, double *gm, double *Hm)
{
    if (c->kind != CT_COL_EE || !(c->eps_x > 0)) return 1.0;
    double gc[12], Hc[144];
    const int *v = c->v;
    double cc = ct_ee_cross2(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), gm ? gc : NULL,
                             Hm ? Hc : NULL);
    double m1, m2;
    double m = ct_ee_mollifier(cc, c->eps_x, &m1, &m2);
    if (gm)
        for (int i = 0; i < 12; ++i) gm[i] = m1 * gc[i];
    if (Hm)
        for (int j = 0; j < 12; ++j)
            for (int i = 0; i < 12; ++i) Hm[i + 12 * j] = m2 * gc[i] * gc[j] + m1 * Hc[i + 12 * j];
    return m;
}

static double term_energy(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                          ct_density_fn f, const void *ctx)
{
    double s = ct_collision_d2(c, cm, obs, x, NULL, NULL);
    double psi = f(ctx, c, s, NULL, NULL);
    if (psi == 0.0) return 0.0;
    return c->w * mollifier(c, x, NULL, NULL) * psi;
}

void ct_collision_term_grad(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                            const double *x, ct_density_fn f, const void *ctx, double *g)
{
    const int n = ct_collision_nverts(c) * cm->dim;
    double gs[12], gm[12];
    double s = ct_collision_d2(c, cm, obs, x, gs, NULL);
    double ps;
    double psi = f(ctx, c, s, &ps, NULL);
    double m = mollifier(c, x, c->kind == CT_COL_EE ? gm : NULL, NULL);
    for (int i = 0; i < n; ++i) {
        g[i] = c->w * m * ps * gs[i];
        if (c->kind == CT_COL_EE && c->eps_x > 0) g[i] += c->w * psi * gm[i];
    }
}

/* ------------------------------------------------------------------------------------------ */
/* per-term PSD projection                                                                      */

/* The Hessian H of a term is replaced by its projection onto the PSD cone, Σ_{λ>0} λ z zᵀ (what
 * ct_psd_project computes with LAPACK), in three steps.
 *
 * 1. Reduction (project_psd_reduced). Every stencil except the half-space one is translation
 *    invariant (its distance and mollifier depend on differences of positions only), so H
 *    vanishes on the translations 1_m ⊗ e_k and H = Q M Qᵀ with M = QᵀHQ for any orthonormal
 *    basis Q of their complement; the projection keeps that invariance, so it is Q M⁺ Qᵀ with M⁺
 *    the projection of M: r = (m−1)·dim unknowns instead of m·dim (9 instead of 12 for
 *    point–triangle and edge–edge, 6 for point–edge, 3 for point–point in 3D).
 *
 * 2. Eigenvalues (small_psd_project). M (scaled by a power of 2 if its entries are far from 1 in
 *    magnitude) is reduced to tridiagonal form T = Pᵀ M P by Householder reflections
 *    P = P_0⋯P_{r−3} (kept as vectors; P is not formed). The inertia of T (Sturm sequence) tells
 *    first whether M has an eigenvalue below the round-off band defined below; if not, M is kept
 *    as it is (mollified edge–edge terms, for instance, are PSD). Otherwise the eigenvalues of T
 *    are found by the implicit QL iteration with Wilkinson shifts (Golub & Van Loan, Matrix
 *    Computations, 4th ed., §8.3; the EISPACK tred2/tql2 scheme of Wilkinson & Reinsch, Handbook
 *    for Automatic Computation II, 1971), which does not accumulate eigenvectors but logs its
 *    plane rotations G_1, …, G_R (R ≈ 25–40 for r = 9). An off-diagonal entry is neglected when
 *    |e_i| ≤ ε‖T‖ (tql2's absolute test: the eigenvalues are then accurate to about ε‖M‖, all
 *    that the rounding in H and in the reduction leaves anyway; a test relative to the
 *    neighbouring diagonal entries spends about half of the rotations refining the
 *    round-off-sized eigenvalues of these rank-deficient matrices).
 *
 * 3. Eigenvectors of the smaller side only. Eigenvalues within r·ε·‖T‖ of 0 are round-off and
 *    may go to either side. With k₋ eigenvalues below that band and k₊ above it,
 *        M⁺ = M − Σ_{λ<0} λ z zᵀ  if k₋ ≤ k₊,      M⁺ = Σ_{λ>0} λ z zᵀ  otherwise,
 *    so only min(k₋, k₊) eigenvectors are formed (typically 2 of 9; 1 of 3 for point–point).
 *    The eigenvector of T for the eigenvalue in position j is column j of G_1⋯G_R, i.e. e_j with
 *    the logged rotations applied in reverse order (6 flops per rotation and vector instead of 6r
 *    for all r vectors), and z = P z_T by the stored reflectors. These are the vectors the QL
 *    iteration with accumulated eigenvectors would produce (the same rotations), orthonormal to
 *    round-off also within clusters of equal eigenvalues, which do occur (a point–point term has a
 *    double negative eigenvalue; edge–edge terms of aligned meshes have them too): unlike inverse
 *    iteration (Parlett, The Symmetric Eigenvalue Problem, §4.3; LAPACK dstein) this needs no
 *    reorthogonalisation and no residual check. If the QL iteration does not converge (or the
 *    matrix is not finite), the projection falls back to LAPACK.
 */
enum { MAX_ROT = 256 };

typedef struct {
    double c, s;
    int i;
} plane_rot;

/* Householder tridiagonalisation of the symmetric A (n×n column-major; the lower triangle is read
 * and overwritten): d[0..n) receives the diagonal and e[0..n−1) the sub-diagonal (e[n−1] = 0) of
 * T = P_{n−3}⋯P_0 A P_0⋯P_{n−3}, with P_k = I − τ_k u_k u_kᵀ; u_k (entries k+1..n−1) is stored in
 * V[k·n + i] and τ_k in tau[k] (0 when P_k = I, the column being tridiagonal already). With
 * x = A[k+1:, k], α = −sign(x₀)‖x‖ and u = x − α e₁, P_k x = α e₁ and τ = 2/‖u‖² = 1/(α(α − x₀))
 * (the LAPACK dsytd2 scheme; Golub & Van Loan §8.3.1). */
static void tridiagonalize(double *A, int n, double *V, double *tau, double *d, double *e)
{
    for (int k = 0; k + 2 < n; ++k) {
        double *u = V + n * k, nrm2 = 0.0;
        const double *x = A + n * k;
        for (int i = k + 1; i < n; ++i) nrm2 += x[i] * x[i];
        const double x0 = x[k + 1];
        tau[k] = 0.0;
        if (nrm2 - x0 * x0 == 0.0) continue;
        const double alpha = x0 >= 0.0 ? -sqrt(nrm2) : sqrt(nrm2), t = 1.0 / (alpha * (alpha - x0));
        u[k + 1] = x0 - alpha;
        for (int i = k + 2; i < n; ++i) u[i] = x[i];
        tau[k] = t;
        /* trailing block B ← P B P = B − u wᵀ − w uᵀ with p = τ B u, w = p − (τ/2)(uᵀp) u */
        double p[9], w[9], K = 0.0;
        for (int j = k + 1; j < n; ++j) {
            double s = A[j + n * j] * u[j];
            for (int i = j + 1; i < n; ++i) s += A[i + n * j] * u[i];
            p[j] = s;
        }
        for (int j = k + 1; j < n; ++j)
            for (int i = j + 1; i < n; ++i) p[i] += A[i + n * j] * u[j];
        for (int i = k + 1; i < n; ++i) {
            p[i] *= t;
            K += u[i] * p[i];
        }
        K *= 0.5 * t;
        for (int i = k + 1; i < n; ++i) w[i] = p[i] - K * u[i];
        for (int j = k + 1; j < n; ++j)
            for (int i = j; i < n; ++i) A[i + n * j] -= u[i] * w[j] + w[i] * u[j];
        A[(k + 1) + n * k] = alpha;
    }
    for (int i = 0; i < n; ++i) {
        d[i] = A[i + n * i];
        e[i] = i + 1 < n ? A[(i + 1) + n * i] : 0.0;
    }
}

/* Norm ‖T‖_∞ of the symmetric tridiagonal matrix (d, e) (e[i] couples i and i+1, e[n−1] = 0). */
static double tridiagonal_norm(const double *d, const double *e, int n)
{
    double t = 0.0;
    for (int i = 0; i < n; ++i) {
        const double row = fabs(d[i]) + fabs(e[i]) + (i > 0 ? fabs(e[i - 1]) : 0.0);
        if (!(row <= t)) t = row; /* (a NaN propagates) */
    }
    return t;
}

/* Whether the tridiagonal (d, e) has an eigenvalue below sigma: the number of eigenvalues below σ
 * is the number of negative pivots of the LDLᵀ factorisation of T − σI (Sylvester's law of
 * inertia; the Sturm sequence recurrence, backward stable, Golub & Van Loan §8.4.1), so the first
 * negative pivot decides. A zero pivot is replaced by a tiny negative one. */
static int tridiagonal_has_eigenvalue_below(const double *d, const double *e, int n, double sigma)
{
    double q = 1.0;
    for (int i = 0; i < n; ++i) {
        q = d[i] - sigma - (i > 0 ? e[i - 1] * e[i - 1] / q : 0.0);
        if (q < DBL_MIN) return 1;
    }
    return 0;
}

/* Eigenvalues of the symmetric tridiagonal matrix (d, e) by the implicit QL iteration: d is
 * overwritten with them (unordered), e destroyed; off-diagonal entries below ε·tnorm are
 * neglected. Rotation t of the log acts on the coordinates (i, i+1) of an eigenvector matrix Z
 * as Z ← Z G_t with G_t = [c s; −s c] there.
 *
 * The iteration is written as a resumable lane (one plane rotation per call of ql_rotate) so that
 * several independent matrices advance together (ql_batch): each rotation waits on a square root
 * and a division of the one before, so one matrix keeps the core mostly idle, while the rotations
 * of four matrices overlap (2× faster on the bench scene's terms). Every lane performs exactly
 * the operations of the one-matrix iteration, in the same order: the results do not depend on
 * how the matrices are grouped. */
typedef struct {
    double *d, *e, tiny;
    plane_rot *rot;
    int n, l, m, i, iter, nrot, phase; /* phase: 0 between sweeps, 1 in a sweep, 2 done, −1 failed */
    double g, sn, cs, p;               /* the sweep's running quantities */
} ql_lane;

/* Next sweep of the lane: deflation search from l, then the Wilkinson shift. */
static inline void ql_setup(ql_lane *q)
{
    double *d = q->d, *e = q->e;
    for (;;) {
        const int l = q->l;
        if (l >= q->n) {
            q->phase = 2;
            return;
        }
        int m;
        for (m = l; m + 1 < q->n; ++m)
            if (fabs(e[m]) <= q->tiny) break;
        if (m == l) { /* d[l] is an eigenvalue */
            q->l = l + 1;
            q->iter = 0;
            continue;
        }
        if (++q->iter > 60 || q->nrot + (m - l) > MAX_ROT) {
            q->phase = -1;
            return;
        }
        double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
        const double r = sqrt(g * g + 1.0); /* magnitudes here are far from overflow: no hypot scaling */
        q->g = d[m] - d[l] + e[l] / (g + (g >= 0.0 ? r : -r));
        q->sn = 1.0, q->cs = 1.0, q->p = 0.0;
        q->m = m, q->i = m - 1, q->phase = 1;
        return;
    }
}

/* One rotation of the lane's sweep (phase 1); the sweep's end returns the lane to phase 0. */
static inline void ql_rotate(ql_lane *q)
{
    double *d = q->d, *e = q->e;
    const int i = q->i;
    double f = q->sn * e[i], b = q->cs * e[i], g = q->g, p = q->p;
    double r = sqrt(f * f + g * g);
    e[i + 1] = r;
    if (r == 0.0) { /* underflow: split the matrix here */
        d[i + 1] -= p;
        e[q->m] = 0.0;
        q->phase = 0;
        return;
    }
    const double sn = f / r, cs = g / r;
    g = d[i + 1] - p;
    r = (d[i] - g) * sn + 2.0 * cs * b;
    p = sn * r;
    d[i + 1] = g + p;
    g = cs * r - b;
    q->rot[q->nrot++] = (plane_rot){cs, sn, i};
    q->sn = sn, q->cs = cs, q->g = g, q->p = p;
    if (--q->i < q->l) {
        d[q->l] -= p;
        e[q->l] = g;
        e[q->m] = 0.0;
        q->phase = 0;
    }
}

/* Runs the K lanes to completion, one rotation of each in turn. */
static void ql_batch(ql_lane *L, int K)
{
    for (int k = 0; k < K; ++k) ql_setup(&L[k]);
    for (;;) {
        int active = 0;
        for (int k = 0; k < K; ++k) {
            if (L[k].phase == 0) ql_setup(&L[k]);
            if (L[k].phase == 1) {
                ql_rotate(&L[k]);
                active = 1;
            }
        }
        if (!active) return;
    }
}

/* The PSD projection of a symmetric r×r matrix M (r ≤ 9, column-major, lower triangle read), as
 * ct_psd_project, in stages so that the QL iterations of several terms run together:
 * psd_begin (scaling, tridiagonalisation, inertia test), the QL iteration on the reversed
 * tridiagonal matrix (psd_run_ql for a group), psd_end (eigenvectors of the smaller side, the
 * result written over M, exactly symmetric). See the comment at the top of this section. */
enum { PSD_KEEP, PSD_QL, PSD_LAPACK };

typedef struct {
    double V[81], tau[9], dr[9], er[9], tnorm, band;
    int r, ex, state, nrot;
    plane_rot rot[MAX_ROT];
} psd_work;

static void psd_begin(psd_work *w, const double *M, int r)
{
    double A[81], d[9], e[9];
    w->r = r;
    /* The iteration squares entries: a matrix far from 1 in magnitude is scaled by a power of 2
     * (exactly; the projection is positively homogeneous), away from underflow and overflow. */
    double amax = 0.0;
    for (int j = 0; j < r; ++j)
        for (int i = j; i < r; ++i) {
            const double a = M[i + r * j], b = fabs(a);
            A[i + r * j] = a;
            amax = b > amax ? b : amax;
        }
    w->ex = 0;
    if ((amax < 0x1p-300 && amax > 0.0) || (amax > 0x1p300 && amax <= DBL_MAX)) {
        frexp(amax, &w->ex);
        for (int j = 0; j < r; ++j)
            for (int i = j; i < r; ++i) A[i + r * j] = ldexp(A[i + r * j], -w->ex);
    }
    tridiagonalize(A, r, w->V, w->tau, d, e);
    w->tnorm = tridiagonal_norm(d, e, r);
    w->band = r * DBL_EPSILON * w->tnorm;
    if (!isfinite(w->tnorm)) {
        w->state = PSD_LAPACK; /* LAPACK's verdict */
        return;
    }
    if (w->tnorm == 0.0 || !tridiagonal_has_eigenvalue_below(d, e, r, -w->band)) {
        w->state = PSD_KEEP; /* PSD to round-off: keep M */
        return;
    }
    /* The QL iteration runs on the reversed matrix J T J (J the exchange matrix), i.e. it is the
     * QR iteration on T, which takes fewer rotations here (on the terms of the n = 50 bench scene:
     * 52 instead of 77 per 9×9 mollified edge–edge matrix, 28 instead of 30 per 5×5). */
    for (int i = 0; i < r; ++i) {
        w->dr[i] = d[r - 1 - i];
        w->er[i] = i + 1 < r ? e[r - 2 - i] : 0.0;
    }
    w->state = PSD_QL;
}

/* The QL iterations of the works in state PSD_QL among w[0..K) (K ≤ 4), run together. */
static void psd_run_ql(psd_work *const *w, int K)
{
    ql_lane L[4];
    psd_work *P[4];
    int nl = 0;
    for (int k = 0; k < K; ++k) {
        if (w[k]->state != PSD_QL) continue;
        P[nl] = w[k];
        L[nl++] = (ql_lane){.d = w[k]->dr, .e = w[k]->er, .tiny = DBL_EPSILON * w[k]->tnorm, .rot = w[k]->rot,
                            .n = w[k]->r};
    }
    ql_batch(L, nl);
    for (int k = 0; k < nl; ++k) P[k]->nrot = L[k].phase == 2 ? L[k].nrot : -1;
}

static int psd_end(psd_work *w, double *M)
{
    const int r = w->r;
    if (w->state == PSD_KEEP) {
        for (int j = 0; j < r; ++j)
            for (int i = j + 1; i < r; ++i) M[j + r * i] = M[i + r * j];
        return 0;
    }
    if (w->state == PSD_LAPACK || w->nrot < 0) return ct_psd_project(M, r) == CT_OK ? 0 : -1;
    const double band = w->band, *dr = w->dr;
    int kneg = 0, kpos = 0;
    for (int k = 0; k < r; ++k) {
        kneg += dr[k] < -band;
        kpos += dr[k] > band;
    }
    /* the eigenvectors of the smaller side, Y[i·9 + q] the component i of vector q */
    const int positive = kpos < kneg;
    double Y[81], lam[9];
    int nw = 0;
    for (int k = 0; k < r; ++k) /* position k of J T J is position r − 1 − k of T */
        if (positive ? dr[k] > band : dr[k] < -band) {
            for (int i = 0; i < r; ++i) Y[i * 9 + nw] = i == r - 1 - k;
            lam[nw++] = w->ex ? ldexp(dr[k], w->ex) : dr[k];
        }
    for (int t = w->nrot - 1; t >= 0; --t) { /* z_T = J G_1⋯G_R J e_k: rotation (i, i+1) of J T J acts on (r−1−i, r−2−i) */
        const double c = w->rot[t].c, s = w->rot[t].s;
        double *y0 = Y + 9 * (r - 1 - w->rot[t].i), *y1 = y0 - 9;
        for (int q = 0; q < nw; ++q) {
            const double a = y0[q], b = y1[q];
            y0[q] = c * a + s * b;
            y1[q] = c * b - s * a;
        }
    }
    for (int k = r - 3; k >= 0; --k) { /* z = P_0⋯P_{r−3} z_T */
        if (w->tau[k] == 0.0) continue;
        const double *u = w->V + r * k;
        for (int q = 0; q < nw; ++q) {
            double t = 0.0;
            for (int i = k + 1; i < r; ++i) t += u[i] * Y[i * 9 + q];
            t *= w->tau[k];
            for (int i = k + 1; i < r; ++i) Y[i * 9 + q] -= t * u[i];
        }
    }
    /* lower triangle of M − Σ_{λ<0} λ z zᵀ or of Σ_{λ>0} λ z zᵀ, then mirrored */
    for (int j = 0; j < r; ++j)
        for (int i = j; i < r; ++i) {
            double m = positive ? 0.0 : M[i + r * j];
            for (int q = 0; q < nw; ++q) m += (positive ? lam[q] : -lam[q]) * Y[i * 9 + q] * Y[j * 9 + q];
            M[i + r * j] = M[j + r * i] = m;
        }
    return 0;
}

/* The 4-vertex stencils in 3D (n = 12, r = 9): Q = S ⊗ I₃ / 2 with S the columns (1, 1, −1, −1),
 * (1, −1, 1, −1), (1, −1, −1, 1) of the 4×4 Hadamard matrix (orthogonal, orthogonal to 1₄, norm 2),
 * so that the products with Q are sums and differences (Walsh–Hadamard butterflies) and the
 * factors 1/4 are exact. M = QᵀHQ (9×9), both triangles. */
static void reduce_4x3(const double *H, double *M)
{
    double T[12 * 9]; /* T = H (S ⊗ I₃) */
    for (int l = 0; l < 3; ++l) {
        const double *x0 = H + 12 * l, *x1 = x0 + 36, *x2 = x1 + 36, *x3 = x2 + 36;
        double *y1 = T + 12 * l, *y2 = y1 + 36, *y3 = y2 + 36;
        for (int q = 0; q < 12; ++q) {
            const double s01 = x0[q] + x1[q], s23 = x2[q] + x3[q], d01 = x0[q] - x1[q], d23 = x2[q] - x3[q];
            y1[q] = s01 - s23;
            y2[q] = d01 + d23;
            y3[q] = d01 - d23;
        }
    }
    for (int c = 0; c < 9; ++c) { /* M = (S ⊗ I₃)ᵀ T / 4 */
        const double *t = T + 12 * c;
        double *y = M + 9 * c;
        for (int k = 0; k < 3; ++k) {
            const double s01 = t[k] + t[3 + k], s23 = t[6 + k] + t[9 + k];
            const double d01 = t[k] - t[3 + k], d23 = t[6 + k] - t[9 + k];
            y[k] = 0.25 * (s01 - s23);
            y[3 + k] = 0.25 * (d01 + d23);
            y[6 + k] = 0.25 * (d01 - d23);
        }
    }
}

/* H = Q M Qᵀ (12×12) for the Q of reduce_4x3, M symmetric (both triangles); H is made exactly
 * symmetric (upper triangle copied from the lower one). */
static void expand_4x3(const double *M, double *H)
{
    double T[9 * 12]; /* T = M (S ⊗ I₃)ᵀ / 4 */
    for (int l = 0; l < 3; ++l) {
        const double *y1 = M + 9 * l, *y2 = y1 + 27, *y3 = y2 + 27;
        double *x0 = T + 9 * l, *x1 = x0 + 27, *x2 = x1 + 27, *x3 = x2 + 27;
        for (int q = 0; q < 9; ++q) {
            const double a = 0.25 * y1[q], p = 0.25 * (y2[q] + y3[q]), d = 0.25 * (y2[q] - y3[q]);
            x0[q] = a + p;
            x1[q] = a - p;
            x2[q] = d - a;
            x3[q] = -(d + a);
        }
    }
    for (int c = 0; c < 12; ++c) { /* H = (S ⊗ I₃) T */
        const double *t = T + 9 * c;
        double *x = H + 12 * c;
        for (int k = 0; k < 3; ++k) {
            const double a = t[k], p = t[3 + k] + t[6 + k], d = t[3 + k] - t[6 + k];
            x[k] = a + p;
            x[3 + k] = a - p;
            x[6 + k] = d - a;
            x[9 + k] = -(d + a);
        }
    }
    for (int j = 0; j < 12; ++j)
        for (int i = j + 1; i < 12; ++i) H[j + 12 * i] = H[i + 12 * j];
}

/* PSD projection of a translation-invariant term Hessian H (n×n, n = m·dim, column-major), see
 * the comment at the top of this section. The 4-vertex stencils use the Hadamard basis of
 * reduce_4x3; the others Q = h ⊗ I_dim with the Helmert basis h_a (a = 1..m−1) of the vectors
 * orthogonal to 1_m:
 *     h_a(i) = 1/√(a(a+1)) for i < a,  −a/√(a(a+1)) for i = a,  0 for i > a.
 * (In floating point the computed H carries round-off-sized translation components, which this
 * drops; the result agrees with the full-size projection to round-off.) */
static void helmert_basis(int m, double h[4][3])
{
    for (int i = 0; i < m; ++i)
        for (int a = 1; a < m; ++a) {
            double c = 1.0 / sqrt((double)(a * (a + 1)));
            h[i][a - 1] = i < a ? c : (i == a ? -a * c : 0.0);
        }
}

/* M = QᵀHQ (r × r, r = (m−1)·dim) for the Helmert basis: T = H Q (n × r), M = Qᵀ T. */
static void reduce_helmert(const double *H, int m, int dim, double *M)
{
    const int n = m * dim, r = (m - 1) * dim;
    double h[4][3], T[12 * 9];
    helmert_basis(m, h);
    for (int b = 0; b < m - 1; ++b)
        for (int l = 0; l < dim; ++l) {
            double *Tc = T + (size_t)n * (b * dim + l);
            for (int q = 0; q < n; ++q) Tc[q] = 0.0;
            for (int j = 0; j <= b + 1; ++j) {
                const double hj = h[j][b];
                const double *Hc = H + (size_t)n * (j * dim + l);
                for (int q = 0; q < n; ++q) Tc[q] += hj * Hc[q];
            }
        }
    for (int c = 0; c < r; ++c)
        for (int a = 0; a < m - 1; ++a)
            for (int k = 0; k < dim; ++k) {
                double v = 0.0;
                for (int i = 0; i <= a + 1; ++i) v += h[i][a] * T[(i * dim + k) + (size_t)n * c];
                M[(a * dim + k) + (size_t)r * c] = v;
            }
}

/* H = Q M Qᵀ for the Helmert basis: T = Q M (n × r), then H = T Qᵀ. */
static void expand_helmert(const double *M, int m, int dim, double *H)
{
    const int n = m * dim, r = (m - 1) * dim;
    double h[4][3], T[12 * 9];
    helmert_basis(m, h);
    for (int c = 0; c < r; ++c)
        for (int i = 0; i < m; ++i)
            for (int k = 0; k < dim; ++k) {
                double v = 0.0;
                for (int a = i > 0 ? i - 1 : 0; a < m - 1; ++a) v += h[i][a] * M[(a * dim + k) + (size_t)r * c];
                T[(i * dim + k) + (size_t)n * c] = v;
            }
    for (int j = 0; j < m; ++j)
        for (int l = 0; l < dim; ++l) {
            double *Hc = H + (size_t)n * (j * dim + l);
            for (int q = 0; q < n; ++q) Hc[q] = 0.0;
            for (int b = j > 0 ? j - 1 : 0; b < m - 1; ++b) {
                const double hj = h[j][b];
                const double *Tc = T + (size_t)n * (b * dim + l);
                for (int q = 0; q < n; ++q) Hc[q] += hj * Tc[q];
            }
        }
}

/* ------------------------------------------------------------------------------------------ */
/* factored barrier Hessians of the distance-type stencils                                      */

/* For the point–point, point–line, point–plane and line–line stencils (kinds PP, PE, PT and the
 * unmollified EE, whose distance types are the unconstrained ones), the squared distance is
 *     s(x) = min_β L(x, β),   L = |r|²,   r(x, β) = Σ_i c_i(β) x_i,
 * with coefficients c_i affine in the k closest-point parameters β (k = 0, 1, 2):
 *     PP  r = x_0 − x_1                                  c = (1, −1)
 *     PE  r = p − (1−t) a − t b                          c = (1, −(1−t), −t),              ∂c/∂t = (0, 1, −1)
 *     PT  r = p − (1−β₁−β₂) x_1 − β₁ x_2 − β₂ x_3          c = (1, −(1−β₁−β₂), −β₁, −β₂),  ∂c/∂β₁ = (0, 1, −1, 0),
 *                                                                                           ∂c/∂β₂ = (0, 1, 0, −1)
 *     EE  r = (1−α) a_0 + α a_1 − (1−β) b_0 − β b_1       c = (1−α, α, −(1−β), −β),        ∂c/∂α = (−1, 1, 0, 0),
 *                                                                                           ∂c/∂β = (0, 0, 1, −1).
 * With J = ∂r/∂x = (c_i I) (dim × n), E_j = ∂r/∂β_j = Σ_i (∂c_i/∂β_j) x_i and G = EᵀE (k × k), the
 * minimiser satisfies Eᵀr = 0, and the envelope theorem gives ∇s = 2Jᵀr and
 *     ∇²s = L_xx − L_xβ L_ββ⁻¹ L_βx = 2JᵀJ − 2 K G⁻¹ Kᵀ,   K_j = ∂(E_jᵀ r)/∂x = Jᵀ E_j + V_j,
 * where V_j has the blocks (∂c_i/∂β_j) r. A term w ψ(s) therefore has the Hessian
 *     H = w (ψ'' ∇s ∇sᵀ + ψ' ∇²s) = U C Uᵀ,   U = [Jᵀ | V̂]   (n × (dim + k)),  V̂ = V / |r|,
 *     C = w [ 4ψ'' r rᵀ + 2ψ' (I − E G⁻¹ Eᵀ)    −2ψ' |r| E G⁻¹ ]
 *           [ −2ψ' |r| G⁻¹ Eᵀ                     −2ψ' |r|² G⁻¹  ],
 * a matrix of rank ≤ dim + k (5 of 12 for PT and EE, 4 of 9 for PE, 3 of 6 for PP). The Gram
 * matrix of U is known in closed form, Γ = [ (Σc_i²) I   (Σ c_i ∂c_i/∂β) r̂ ; ·   (Σ ∂c_i/∂β_j ∂c_i/∂β_l) ],
 * and with Γ = L Lᵀ (Cholesky) the columns of Y = U L⁻ᵀ are orthonormal, H = Y S Yᵀ with
 * S = Lᵀ C L, and the PSD projection of H is Y S⁺ Yᵀ: an eigenproblem of size ≤ 5 instead of
 * 9 (and no 12×12 Hessian of the distance). The closest-point vector r is taken along the
 * normal n̂ ∝ E₁ × E₂ for PT and EE (r = (r₀·n̂) n̂, accurate to round-off relative to |r| even
 * when |r| ≪ the edge lengths). Degenerate input (r = 0, G or Γ not safely positive definite,
 * a non-finite value) returns −1 and the caller uses the general path. */
/* A term's Hessian between the stages of its evaluation (term_begin, the QL iterations of a group
 * of terms, term_end): the small matrix to project and what turns its projection into the
 * stencil's Hessian. */
enum { TW_DONE, TW_ENVELOPE, TW_HADAMARD, TW_HELMERT };

typedef struct {
    int mode, m, dim, nb; /* nb: size of the envelope's S */
    double M[81];         /* S (envelope, nb × nb) or QᵀHQ (r × r) */
    double Y[12 * 5];     /* envelope: Yᵀ = L⁻¹ Uᵀ, column p at Y + nb·p */
    psd_work pw;
} term_work;

static int envelope_hessian(const ct_collision *c, const double *x, int dim, double ps, double pss, term_work *tw)
{
    const int m = ct_collision_nverts(c);
    double cf[4], dc[2][4];
    int k;
    const double *P[4];
    for (int i = 0; i < m; ++i) P[i] = x + (size_t)dim * (size_t)c->v[i];
    /* r₀ = r(β = 0), E_j, then β from G β = −Eᵀ r₀ */
    double r[3] = {0, 0, 0}, E[2][3] = {{0, 0, 0}, {0, 0, 0}};
    switch (c->kind) {
    case CT_COL_PP:
        k = 0;
        for (int d = 0; d < dim; ++d) r[d] = P[0][d] - P[1][d];
        cf[0] = 1.0, cf[1] = -1.0;
        break;
    case CT_COL_PE:
        k = 1;
        for (int d = 0; d < dim; ++d) r[d] = P[0][d] - P[1][d], E[0][d] = P[1][d] - P[2][d];
        dc[0][0] = 0.0, dc[0][1] = 1.0, dc[0][2] = -1.0;
        break;
    case CT_COL_PT:
        k = 2;
        for (int d = 0; d < 3; ++d)
            r[d] = P[0][d] - P[1][d], E[0][d] = P[1][d] - P[2][d], E[1][d] = P[1][d] - P[3][d];
        dc[0][0] = 0.0, dc[0][1] = 1.0, dc[0][2] = -1.0, dc[0][3] = 0.0;
        dc[1][0] = 0.0, dc[1][1] = 1.0, dc[1][2] = 0.0, dc[1][3] = -1.0;
        break;
    default: /* CT_COL_EE */
        k = 2;
        for (int d = 0; d < 3; ++d)
            r[d] = P[0][d] - P[2][d], E[0][d] = P[1][d] - P[0][d], E[1][d] = P[2][d] - P[3][d];
        dc[0][0] = -1.0, dc[0][1] = 1.0, dc[0][2] = 0.0, dc[0][3] = 0.0;
        dc[1][0] = 0.0, dc[1][1] = 0.0, dc[1][2] = 1.0, dc[1][3] = -1.0;
        break;
    }
    double G[2][2] = {{0, 0}, {0, 0}}, Gi[2][2] = {{0, 0}, {0, 0}}, beta[2] = {0, 0};
    if (k > 0) {
        double b[2] = {0, 0};
        for (int j = 0; j < k; ++j) {
            for (int l = 0; l < k; ++l)
                for (int d = 0; d < dim; ++d) G[j][l] += E[j][d] * E[l][d];
            for (int d = 0; d < dim; ++d) b[j] -= E[j][d] * r[d];
        }
        if (k == 1) {
            if (!(G[0][0] > 0.0)) return -1;
            Gi[0][0] = 1.0 / G[0][0];
        } else {
            const double det = G[0][0] * G[1][1] - G[0][1] * G[1][0];
            if (!(det > 1e-12 * G[0][0] * G[1][1])) return -1; /* (near-)parallel: general path */
            Gi[0][0] = G[1][1] / det, Gi[1][1] = G[0][0] / det, Gi[0][1] = Gi[1][0] = -G[0][1] / det;
        }
        for (int j = 0; j < k; ++j) beta[j] = Gi[j][0] * b[0] + (k > 1 ? Gi[j][1] * b[1] : 0.0);
        if (k == 2) { /* r = (r₀·n̂) n̂ */
            double nv[3] = {E[0][1] * E[1][2] - E[0][2] * E[1][1], E[0][2] * E[1][0] - E[0][0] * E[1][2],
                            E[0][0] * E[1][1] - E[0][1] * E[1][0]};
            const double nn = nv[0] * nv[0] + nv[1] * nv[1] + nv[2] * nv[2];
            const double t = (r[0] * nv[0] + r[1] * nv[1] + r[2] * nv[2]) / nn;
            for (int d = 0; d < 3; ++d) r[d] = t * nv[d];
        } else {
            for (int d = 0; d < dim; ++d) r[d] += beta[0] * E[0][d];
        }
        /* c(β) = c(0) + Σ_j β_j ∂c/∂β_j */
        if (c->kind == CT_COL_PE) cf[0] = 1.0, cf[1] = -1.0 + beta[0], cf[2] = -beta[0];
        else if (c->kind == CT_COL_PT)
            cf[0] = 1.0, cf[1] = -1.0 + beta[0] + beta[1], cf[2] = -beta[0], cf[3] = -beta[1];
        else cf[0] = 1.0 - beta[0], cf[1] = beta[0], cf[2] = -1.0 + beta[1], cf[3] = -beta[1];
    }
    double rn = 0.0;
    for (int d = 0; d < dim; ++d) rn += r[d] * r[d];
    rn = sqrt(rn);
    if (!(rn > 0.0) || !(rn <= DBL_MAX)) return -1;
    double rh[3];
    for (int d = 0; d < dim; ++d) rh[d] = r[d] / rn;
    const int nb = dim + k;
    /* C (nb × nb, column-major) */
    double C[25], EGi[3][2] = {{0, 0}, {0, 0}, {0, 0}};
    for (int d = 0; d < dim; ++d)
        for (int j = 0; j < k; ++j)
            for (int l = 0; l < k; ++l) EGi[d][j] += E[l][d] * Gi[l][j];
    for (int a = 0; a < dim; ++a)
        for (int b = 0; b < dim; ++b) {
            double p = a == b ? 1.0 : 0.0;
            for (int j = 0; j < k; ++j) p -= EGi[a][j] * E[j][b];
            C[a + nb * b] = c->w * (4.0 * pss * r[a] * r[b] + 2.0 * ps * p);
        }
    for (int j = 0; j < k; ++j) {
        for (int a = 0; a < dim; ++a) C[a + nb * (dim + j)] = C[(dim + j) + nb * a] = -2.0 * c->w * ps * rn * EGi[a][j];
        for (int l = 0; l < k; ++l) C[(dim + j) + nb * (dim + l)] = -2.0 * c->w * ps * rn * rn * Gi[j][l];
    }
    /* Γ and its Cholesky factor L (lower, column-major) */
    double L[25] = {0};
    double cc = 0.0;
    for (int i = 0; i < m; ++i) cc += cf[i] * cf[i];
    for (int a = 0; a < dim; ++a) L[a + nb * a] = cc;
    for (int j = 0; j < k; ++j) {
        double cd = 0.0;
        for (int i = 0; i < m; ++i) cd += cf[i] * dc[j][i];
        for (int a = 0; a < dim; ++a) L[(dim + j) + nb * a] = cd * rh[a];
        for (int l = 0; l <= j; ++l) {
            double dd = 0.0;
            for (int i = 0; i < m; ++i) dd += dc[j][i] * dc[l][i];
            L[(dim + j) + nb * (dim + l)] = dd;
        }
    }
    for (int j = 0; j < nb; ++j) {
        double djj = L[j + nb * j];
        for (int q = 0; q < j; ++q) djj -= L[j + nb * q] * L[j + nb * q];
        if (!(djj > 1e-8 * L[j + nb * j])) return -1; /* Γ's columns nearly dependent */
        const double ljj = sqrt(djj);
        L[j + nb * j] = ljj;
        for (int i = j + 1; i < nb; ++i) {
            double v = L[i + nb * j];
            for (int q = 0; q < j; ++q) v -= L[i + nb * q] * L[j + nb * q];
            L[i + nb * j] = v / ljj;
        }
    }
    /* S = Lᵀ C L */
    double CL[25], *S = tw->M;
    for (int b = 0; b < nb; ++b)
        for (int a = 0; a < nb; ++a) {
            double v = 0.0;
            for (int q = b; q < nb; ++q) v += C[a + nb * q] * L[q + nb * b];
            CL[a + nb * b] = v;
        }
    for (int b = 0; b < nb; ++b)
        for (int a = b; a < nb; ++a) {
            double v = 0.0;
            for (int q = a; q < nb; ++q) v += L[q + nb * a] * CL[q + nb * b];
            S[a + nb * b] = S[b + nb * a] = v;
        }
    for (int q = 0; q < nb * nb; ++q)
        if (!(fabs(S[q]) <= DBL_MAX)) return -1;
    /* Yᵀ = L⁻¹ Uᵀ, column by column of Uᵀ (row q = vertex i, coordinate d of U) */
    double *Y = tw->Y;
    for (int i = 0; i < m; ++i)
        for (int d = 0; d < dim; ++d) {
            double u[5];
            for (int a = 0; a < dim; ++a) u[a] = a == d ? cf[i] : 0.0;
            for (int j = 0; j < k; ++j) u[dim + j] = dc[j][i] * rh[d];
            double *y = Y + (size_t)nb * (i * dim + d); /* y = L⁻¹ u */
            for (int a = 0; a < nb; ++a) {
                double v = u[a];
                for (int q = 0; q < a; ++q) v -= L[a + nb * q] * y[q];
                y[a] = v / L[a + nb * a];
            }
        }
    tw->mode = TW_ENVELOPE, tw->m = m, tw->dim = dim, tw->nb = nb;
    psd_begin(&tw->pw, S, nb);
    return 0;
}

/* H = Y S⁺ Yᵀ (n × n, both triangles, exactly symmetric) from the projected S of tw. */
static void envelope_expand(const term_work *tw, double *H)
{
    const int nb = tw->nb, n = tw->m * tw->dim;
    const double *S = tw->M, *Y = tw->Y;
    double Z[12 * 5]; /* Z row p = S⁺ y_p */
    for (int p = 0; p < n; ++p)
        for (int a = 0; a < nb; ++a) {
            double v = 0.0;
            for (int q = 0; q < nb; ++q) v += S[a + nb * q] * Y[nb * p + q];
            Z[nb * p + a] = v;
        }
    for (int b = 0; b < n; ++b)
        for (int a = b; a < n; ++a) {
            double v = 0.0;
            for (int q = 0; q < nb; ++q) v += Y[nb * a + q] * Z[nb * b + q];
            H[a + n * b] = H[b + n * a] = v;
        }
}

/* The unprojected Hessian H (n×n column-major, n = stencil dofs) of a term on the general path
 * (no factored form: mollified edge–edge terms, the half-space, degenerate stencils); 0 if an
 * entry is not finite. */
static int general_hessian(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                           ct_density_fn f, const void *ctx, double *H)
{
    const int n = ct_collision_nverts(c) * cm->dim;
    const int moll = c->kind == CT_COL_EE && c->eps_x > 0;
    double gs[12], Hs[144], ps, pss;
    double s = ct_collision_d2(c, cm, obs, x, gs, Hs);
    double psi = f(ctx, c, s, &ps, &pss);
    int bad = 0; /* a non-finite entry (LAPACK's result would be meaningless) */
    if (!moll) {
        /* H = w ψ'' g gᵀ + w ψ' ∇²s */
        const double a = c->w * pss, b = c->w * ps;
        for (int j = 0; j < n; ++j) {
            const double agj = a * gs[j];
            for (int i = 0; i < n; ++i) {
                const double h = agj * gs[i] + b * Hs[i + n * j];
                bad |= !(fabs(h) <= DBL_MAX);
                H[i + n * j] = h;
            }
        }
    } else {
        /* H = w (m ψ'' g gᵀ + m ψ' ∇²s + ψ' (g ∇mᵀ + ∇m gᵀ) + ψ ∇²m) */
        double gm[12], Hm[144];
        const double m = mollifier(c, x, gm, Hm);
        const double a = c->w * m * pss, b = c->w * m * ps, cg = c->w * ps, ch = c->w * psi;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) {
                const double h = a * gs[i] * gs[j] + b * Hs[i + n * j] + cg * (gs[i] * gm[j] + gm[i] * gs[j]) +
                                 ch * Hm[i + n * j];
                bad |= !(fabs(h) <= DBL_MAX);
                H[i + n * j] = h;
            }
    }
    return !bad;
}

/* The general path's reduction of a translation-invariant term Hessian H (m vertices) to the
 * complement of the translations (Hadamard basis for the 4-vertex stencils in 3D, Helmert
 * otherwise), up to psd_begin. */
static void reduce_begin(term_work *tw, const double *H, int m, int dim)
{
    tw->m = m, tw->dim = dim;
    if (m == 4 && dim == 3) {
        reduce_4x3(H, tw->M);
        tw->mode = TW_HADAMARD;
        psd_begin(&tw->pw, tw->M, 9);
    } else {
        reduce_helmert(H, m, dim, tw->M);
        tw->mode = TW_HELMERT;
        psd_begin(&tw->pw, tw->M, (m - 1) * dim);
    }
}

/* First stage of a term's PSD-projected Hessian (n×n column-major in H, n = stencil dofs): the
 * factored form or the general Hessian, reduced to the complement of the translations, up to
 * psd_begin. The half-space term (not translation invariant) and failures are finished here
 * (tw->mode = TW_DONE; a failure sets *status). */
static void term_begin(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                       ct_density_fn f, const void *ctx, double *H, term_work *tw, int *status)
{
    const int nv = ct_collision_nverts(c), n = nv * cm->dim;
    const int moll = c->kind == CT_COL_EE && c->eps_x > 0;
    tw->mode = TW_DONE;
    if (!moll && (c->kind == CT_COL_PP || (c->kind == CT_COL_PE && c->type == CT_PE_P_E) ||
                  (c->kind == CT_COL_PT && c->type == CT_PT_P_T) || (c->kind == CT_COL_EE && c->type == CT_EE_A_B))) {
        double ps, pss;
        const double s = ct_collision_d2(c, cm, obs, x, NULL, NULL);
        f(ctx, c, s, &ps, &pss);
        if (envelope_hessian(c, x, cm->dim, ps, pss, tw) == 0) return;
    }
    if (!general_hessian(c, cm, obs, x, f, ctx, H)) {
        *status = CT_ELIB;
        return;
    }
    if (c->kind == CT_COL_PH) {
        if (ct_psd_project(H, n) != CT_OK) *status = CT_ELIB;
        return;
    }
    reduce_begin(tw, H, nv, cm->dim);
}

/* Last stage, after the QL iteration (psd_run_ql) of tw->pw: the projected Hessian in H. */
static void term_end(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                     ct_density_fn f, const void *ctx, double *H, term_work *tw, int *status)
{
    switch (tw->mode) {
    case TW_ENVELOPE:
        if (psd_end(&tw->pw, tw->M) == 0) {
            envelope_expand(tw, H);
            return;
        }
        /* the factored form failed (LAPACK's verdict too): the general path, on its own */
        if (!general_hessian(c, cm, obs, x, f, ctx, H)) {
            *status = CT_ELIB;
            return;
        }
        reduce_begin(tw, H, ct_collision_nverts(c), cm->dim);
        psd_work *one = &tw->pw;
        psd_run_ql(&one, 1);
        term_end(c, cm, obs, x, f, ctx, H, tw, status);
        return;
    case TW_HADAMARD:
        if (psd_end(&tw->pw, tw->M) != 0) *status = CT_ELIB;
        else expand_4x3(tw->M, H);
        return;
    case TW_HELMERT:
        if (psd_end(&tw->pw, tw->M) != 0) *status = CT_ELIB;
        else expand_helmert(tw->M, tw->m, tw->dim, H);
        return;
    default: return;
    }
}

typedef struct {
    const ct_collision_set *cs;
    const ct_contact_mesh *cm;
    const ct_obstacle *obs;
    const double *x;
    ct_density_fn f;
    const void *ctx;
} energy_args;

static double energy_term(long i, const void *p)
{
    const energy_args *a = p;
    return term_energy(&a->cs->c[i], a->cm, a->obs, a->x, a->f, a->ctx);
}

double ct_collision_energy(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                           const double *x, ct_density_fn f, const void *ctx, int threads)
{
    energy_args a = {cs, cm, obs, x, f, ctx};
    return ct_sum_fixed_chunks(cs->n, energy_term, &a, threads);
}

/* global dof of stencil entry i (vertex-major) */
static int stencil_vertex(const ct_collision *c, int k) { return c->v[k]; }

ct_status ct_collision_gradient(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                const double *x, ct_density_fn f, const void *ctx, int threads, double *g)
{
    double *loc = malloc(((size_t)cs->n * 12 + 1) * sizeof *loc);
    if (!loc) return CT_ENOMEM;
#pragma omp parallel for schedule(dynamic, 64) num_threads(ct_threads(threads))
    for (long i = 0; i < cs->n; ++i) ct_collision_term_grad(&cs->c[i], cm, obs, x, f, ctx, loc + 12 * i);
    ct_collision_gradient_add(cs, cm, loc, g);
    free(loc);
    return CT_OK;
}

void ct_collision_gradient_add(const ct_collision_set *cs, const ct_contact_mesh *cm, const double *loc, double *g)
{
    const int dim = cm->dim;
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        int nv = ct_collision_nverts(c);
        for (int k = 0; k < nv; ++k) {
            int v = stencil_vertex(c, k);
            for (int d = 0; d < dim; ++d) g[(size_t)dim * v + d] += loc[12 * i + dim * k + d];
        }
    }
}

/* One term's energy (the expression of term_energy) and gradient (that of ct_collision_term_grad),
 * from one distance, density and mollifier evaluation. */
typedef struct {
    energy_args e;
    double *loc;
} energy_grad_args;

static double energy_grad_term(long i, const void *p)
{
    const energy_grad_args *a = p;
    const ct_collision *c = &a->e.cs->c[i];
    const int n = ct_collision_nverts(c) * a->e.cm->dim;
    const int moll = c->kind == CT_COL_EE && c->eps_x > 0;
    double gs[12], gm[12], ps, *g = a->loc + 12 * i;
    const double s = ct_collision_d2(c, a->e.cm, a->e.obs, a->e.x, gs, NULL);
    const double psi = a->e.f(a->e.ctx, c, s, &ps, NULL);
    const double m = mollifier(c, a->e.x, c->kind == CT_COL_EE ? gm : NULL, NULL);
    for (int k = 0; k < n; ++k) {
        g[k] = c->w * m * ps * gs[k];
        if (moll) g[k] += c->w * psi * gm[k];
    }
    return psi == 0.0 ? 0.0 : c->w * m * psi;
}

double ct_collision_energy_grad(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                const double *x, ct_density_fn f, const void *ctx, int threads, double *loc)
{
    energy_grad_args a = {{cs, cm, obs, x, f, ctx}, loc};
    return ct_sum_fixed_chunks(cs->n, energy_grad_term, &a, threads);
}


ct_status ct_collision_hessian(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                               const double *x, ct_density_fn f, const void *ctx, int threads, ct_triplets *H)
{
    const int dim = cm->dim;
    if (cs->n == 0) return CT_OK;
    /* Term i's (nv·dim)² entries (with H->upper only those with row <= col) go to H at off[i]
     * (the order of ct_triplets_add_block, term after term), so the terms are evaluated in
     * parallel straight into the triplet arrays: the result is the same as appending the blocks
     * one by one, for any thread count. */
    size_t *off = malloc(((size_t)cs->n + 1) * sizeof *off);
    if (!off) return CT_ENOMEM;
    off[0] = H->n;
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        const int nv = ct_collision_nverts(c);
        size_t cnt = (size_t)(nv * dim) * (size_t)(nv * dim);
        if (H->upper) { /* per vertex block: dim² above the diagonal, dim(dim+1)/2 on it, 0 below */
            cnt = 0;
            for (int a = 0; a < nv; ++a)
                for (int b = 0; b < nv; ++b)
                    cnt += c->v[a] < c->v[b] ? (size_t)(dim * dim) : c->v[a] == c->v[b] ? (size_t)(dim * (dim + 1) / 2) : 0;
        }
        off[i + 1] = off[i] + cnt;
    }
    ct_status st = ct_triplets_reserve(H, off[cs->n]);
    if (st != CT_OK) {
        free(off);
        return st;
    }
    /* Terms go in groups of HESS_GROUP: their QL iterations run together (psd_run_ql). */
    enum { HESS_GROUP = 4 };
    const long ngroups = (cs->n + HESS_GROUP - 1) / HESS_GROUP;
    int *const restrict trow = H->row, *const restrict tcol = H->col;
    double *const restrict tval = H->val;
    const int upper = H->upper;
    int status = CT_OK;
#pragma omp parallel for schedule(dynamic, 4) num_threads(ct_threads(threads))
    for (long gi = 0; gi < ngroups; ++gi) {
        const long i0 = gi * HESS_GROUP, i1 = i0 + HESS_GROUP < cs->n ? i0 + HESS_GROUP : cs->n;
        const int ng = (int)(i1 - i0);
        term_work tw[HESS_GROUP];
        psd_work *pw[HESS_GROUP];
        double loc[HESS_GROUP][144];
        int sti = CT_OK;
        for (int q = 0; q < ng; ++q) {
            term_begin(&cs->c[i0 + q], cm, obs, x, f, ctx, loc[q], &tw[q], &sti);
            pw[q] = &tw[q].pw;
            if (tw[q].mode == TW_DONE) tw[q].pw.state = PSD_KEEP; /* (not run by psd_run_ql) */
        }
        psd_run_ql(pw, ng);
        for (int q = 0; q < ng; ++q) {
            const ct_collision *c = &cs->c[i0 + q];
            const int nv = ct_collision_nverts(c), nd = nv * dim;
            const double *h = loc[q];
            term_end(c, cm, obs, x, f, ctx, loc[q], &tw[q], &sti);
            /* the blocks column by column; with `upper` only the entries with row <= col */
            size_t t = off[i0 + q];
            for (int b = 0; b < nv; ++b) {
                const int vb = c->v[b];
                for (int j = 0; j < dim; ++j) {
                    const int col = vb * dim + j, lj = b * dim + j;
                    for (int a = 0; a < nv; ++a) {
                        const int va = c->v[a];
                        int kend = dim;
                        if (upper && va >= vb) {
                            if (va > vb) continue;
                            kend = j + 1;
                        }
                        const double *hc = h + a * dim + nd * lj;
                        for (int k = 0; k < kend; ++k) {
                            trow[t] = va * dim + k;
                            tcol[t] = col;
                            tval[t++] = hc[k];
                        }
                    }
                }
            }
        }
        if (sti != CT_OK) {
#pragma omp atomic write
            status = sti;
        }
    }
    if (status == CT_OK) H->n = off[cs->n];
    free(off);
    return (ct_status)status;
}

double ct_collision_normal_force(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                 const double *x, ct_density_fn f, const void *ctx)
{
    /* E = w m ψ(d²): ∂E/∂d = w m ψ_s 2d */
    double s = ct_collision_d2(c, cm, obs, x, NULL, NULL);
    double ps;
    f(ctx, c, s, &ps, NULL);
    return -c->w * mollifier(c, x, NULL, NULL) * ps * 2.0 * sqrt(s);
}

int ct_collision_part(const ct_collision *c, const ct_contact_mesh *cm, int nbodies, int k)
{
    if (c->kind == CT_COL_PH) return k == 0 ? cm->part[c->v[0]] : nbodies + c->v[1];
    return cm->part[c->v[k]];
}

double ct_collision_min_distance(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                 const double *x)
{
    double m = INFINITY;
    for (long i = 0; i < cs->n; ++i) m = fmin(m, ct_collision_d2(&cs->c[i], cm, obs, x, NULL, NULL));
    return sqrt(m);
}
