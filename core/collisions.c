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
 */
#include "contactlab/ct_collisions.h"

#include "contactlab/ct_distance.h"
#include "contactlab/ct_material.h"
#include "parallel.h"

#include <math.h>
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
/* term list with merging                                                                       */

typedef struct {
    ct_collision c;
    long key[3]; /* kind-specific canonical key */
} term;

typedef struct {
    term *t;
    long n, cap;
} term_list;

static int push_term(term_list *L, const ct_collision *c, long k0, long k1, long k2)
{
    if (L->n == L->cap) {
        long nc = L->cap ? 2 * L->cap : 1024;
        term *t = realloc(L->t, (size_t)nc * sizeof *t);
        if (!t) return -1;
        L->t = t;
        L->cap = nc;
    }
    term *t = &L->t[L->n++];
    t->c = *c;
    t->key[0] = ((long)c->kind << 8) | (c->eps_x > 0 ? (long)c->type + 1 : 0);
    t->key[1] = k0;
    t->key[2] = ((long)k1 << 32) | (long)(unsigned)k2;
    return 0;
}

static int cmp_term(const void *pa, const void *pb)
{
    const term *a = pa, *b = pb;
    for (int k = 0; k < 3; ++k)
        if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
    return 0;
}

static const double *X(const double *x, int dim, int v) { return x + (size_t)dim * (size_t)v; }

/* Add the point–point term (a, b) with weight w. */
static int add_pp(term_list *L, int a, int b, double w)
{
    ct_collision c = {0};
    c.kind = CT_COL_PP;
    c.v[0] = a < b ? a : b;
    c.v[1] = a < b ? b : a;
    c.side = 1;
    c.w = w;
    return push_term(L, &c, c.v[0], c.v[1], 0);
}

/* Point p against the interior of surface edge e (canonical vertex order). */
static int add_pe(term_list *L, const ct_surface *s, int p, int e, double w)
{
    ct_collision c = {0};
    c.kind = CT_COL_PE;
    c.type = CT_PE_P_E;
    c.v[0] = p;
    c.v[1] = s->edges[2 * e];
    c.v[2] = s->edges[2 * e + 1];
    c.side = 1;
    c.w = w;
    return push_term(L, &c, p, e, 0);
}

/* Point p against edge e with the closest feature decided by classification. */
static int add_pe_classified(term_list *L, const ct_contact_mesh *cm, const double *x, int p, int e, double w)
{
    const ct_surface *s = cm->s;
    int e0 = s->edges[2 * e], e1 = s->edges[2 * e + 1];
    ct_pe_type t = ct_pe_classify(cm->dim, X(x, cm->dim, p), X(x, cm->dim, e0), X(x, cm->dim, e1));
    if (t == CT_PE_P_E0) return add_pp(L, p, e0, w);
    if (t == CT_PE_P_E1) return add_pp(L, p, e1, w);
    return add_pe(L, s, p, e, w);
}

static double pe_d2(const ct_contact_mesh *cm, const double *x, int p, int e)
{
    const ct_surface *s = cm->s;
    int e0 = s->edges[2 * e], e1 = s->edges[2 * e + 1];
    const double *P = X(x, cm->dim, p), *A = X(x, cm->dim, e0), *B = X(x, cm->dim, e1);
    return ct_pe_d2(cm->dim, P, A, B, ct_pe_classify(cm->dim, P, A, B), NULL, NULL);
}

static double pp_d2(const ct_contact_mesh *cm, const double *x, int a, int b)
{
    return ct_pp_d2(cm->dim, X(x, cm->dim, a), X(x, cm->dim, b), NULL, NULL);
}

/* Vertex p against face f: reduced term of the classified closest features. Returns 1 if active. */
static int add_pt(term_list *L, const ct_contact_mesh *cm, const double *x, int p, int f, double w, double dhat2,
                  int *err)
{
    const ct_surface *s = cm->s;
    const int *F = s->faces + 3 * f;
    const double *P = X(x, 3, p);
    ct_pt_type t = ct_pt_classify(P, X(x, 3, F[0]), X(x, 3, F[1]), X(x, 3, F[2]));
    double d2 = ct_pt_d2(P, X(x, 3, F[0]), X(x, 3, F[1]), X(x, 3, F[2]), t, NULL, NULL);
    if (!(d2 < dhat2)) return 0;
    int r = 0;
    switch (t) {
    case CT_PT_P_T0: r = add_pp(L, p, F[0], w); break;
    case CT_PT_P_T1: r = add_pp(L, p, F[1], w); break;
    case CT_PT_P_T2: r = add_pp(L, p, F[2], w); break;
    case CT_PT_P_E0:
    case CT_PT_P_E1:
    case CT_PT_P_E2: r = add_pe(L, s, p, cm->face_edges[3 * f + (t - CT_PT_P_E0)], w); break;
    default: {
        ct_collision c = {0};
        c.kind = CT_COL_PT;
        c.type = CT_PT_P_T;
        c.v[0] = p;
        c.v[1] = F[0];
        c.v[2] = F[1];
        c.v[3] = F[2];
        c.side = 1;
        c.w = w;
        r = push_term(L, &c, p, f, 0);
    }
    }
    if (r) *err = 1;
    return 1;
}

/* Edge ea against edge eb (ea < eb). Mollified (nearly parallel) pairs keep the EE stencil. */
static int add_ee(term_list *L, const ct_contact_mesh *cm, const double *x, int ea, int eb, double w, double dhat2,
                  int *err)
{
    const ct_surface *s = cm->s;
    int a0 = s->edges[2 * ea], a1 = s->edges[2 * ea + 1], b0 = s->edges[2 * eb], b1 = s->edges[2 * eb + 1];
    const double *A0 = X(x, 3, a0), *A1 = X(x, 3, a1), *B0 = X(x, 3, b0), *B1 = X(x, 3, b1);
    ct_ee_type t = ct_ee_classify(A0, A1, B0, B1);
    double d2 = ct_ee_d2(A0, A1, B0, B1, t, NULL, NULL);
    if (!(d2 < dhat2)) return 0;
    const double *xr = cm->x_rest;
    double eps_x = ct_ee_mollifier_eps(X(xr, 3, a0), X(xr, 3, a1), X(xr, 3, b0), X(xr, 3, b1));
    double c2 = ct_ee_cross2(A0, A1, B0, B1, NULL, NULL);
    int r = 0;
    if (c2 < eps_x) {
        ct_collision c = {0};
        c.kind = CT_COL_EE;
        c.type = (unsigned char)t;
        c.v[0] = a0;
        c.v[1] = a1;
        c.v[2] = b0;
        c.v[3] = b1;
        c.side = 2;
        c.w = w;
        c.eps_x = eps_x;
        r = push_term(L, &c, ea, eb, 0);
    } else {
        switch (t) {
        case CT_EE_A0_B0: r = add_pp(L, a0, b0, w); break;
        case CT_EE_A0_B1: r = add_pp(L, a0, b1, w); break;
        case CT_EE_A1_B0: r = add_pp(L, a1, b0, w); break;
        case CT_EE_A1_B1: r = add_pp(L, a1, b1, w); break;
        case CT_EE_A_B0: r = add_pe(L, s, b0, ea, w); break;
        case CT_EE_A_B1: r = add_pe(L, s, b1, ea, w); break;
        case CT_EE_A0_B: r = add_pe(L, s, a0, eb, w); break;
        case CT_EE_A1_B: r = add_pe(L, s, a1, eb, w); break;
        default: {
            ct_collision c = {0};
            c.kind = CT_COL_EE;
            c.type = CT_EE_A_B;
            c.v[0] = a0;
            c.v[1] = a1;
            c.v[2] = b0;
            c.v[3] = b1;
            c.side = 2;
            c.w = w;
            r = push_term(L, &c, ea, eb, 0);
        }
        }
    }
    if (r) *err = 1;
    return 1;
}

/* Sorted unique ints in place; returns the new count. */
static int uniq(int *a, int n)
{
    qsort(a, (size_t)n, sizeof *a, cmp_int);
    int m = 0;
    for (int i = 0; i < n; ++i)
        if (i == 0 || a[i] != a[m - 1]) a[m++] = a[i];
    return m;
}

typedef struct {
    int *a;
    int n, cap;
} ibuf;

static int ibuf_push(ibuf *b, int v)
{
    if (b->n == b->cap) {
        int nc = b->cap ? 2 * b->cap : 64;
        int *p = realloc(b->a, (size_t)nc * sizeof *p);
        if (!p) return -1;
        b->a = p;
        b->cap = nc;
    }
    b->a[b->n++] = v;
    return 0;
}

ct_status ct_collision_set_build(ct_collision_set *cs, const ct_contact_mesh *cm, const ct_candidates *cand,
                                 const ct_obstacle *obs, int nobs, const double *x, const ct_colset_opts *o)
{
    const ct_surface *s = cm->s;
    const int dim = cm->dim;
    const double dhat = o->dhat, dhat2 = dhat * dhat;
    const int conv = o->kind == CT_COLSET_CONVERGENT;
    /* weights: PT-side vertex weight factor and EE per-edge weight omega_e */
    const int ee_area = !conv || o->ee_weight == CT_EEW_AREA;
    const double fv = dim == 2 ? 0.5 : (ee_area ? 0.25 : 0.5);
    term_list L = {0};
    ibuf eb = {0}, vb = {0};
    int err = 0;

    if (dim == 3) {
        const ct_pair_list *vf = &cand->vf;
        for (long i = 0; i < vf->n && !err;) {
            int v = vf->ij[2 * i];
            long j = i;
            double W = fv * cm->wv[v];
            eb.n = vb.n = 0;
            for (; j < vf->n && vf->ij[2 * j] == v; ++j) {
                int f = vf->ij[2 * j + 1];
                add_pt(&L, cm, x, v, f, W, dhat2, &err);
                if (conv)
                    for (int k = 0; k < 3; ++k) {
                        int e = cm->face_edges[3 * f + k];
                        if (e >= 0 && !edge_has(s, e, v) && ibuf_push(&eb, e)) err = 1;
                        if (s->faces[3 * f + k] != v && ibuf_push(&vb, s->faces[3 * f + k])) err = 1;
                    }
            }
            if (conv && !err) {
                eb.n = uniq(eb.a, eb.n);
                vb.n = uniq(vb.a, vb.n);
                for (int k = 0; k < eb.n && !err; ++k) {
                    int e = eb.a[k], ke = faces_without(cm, e, v);
                    if (ke == 1 || pe_d2(cm, x, v, e) >= dhat2) continue;
                    if (add_pe_classified(&L, cm, x, v, e, (1 - ke) * W)) err = 1;
                }
                for (int k = 0; k < vb.n && !err; ++k) {
                    int u = vb.a[k], c = vertex_coef_3d(cm, u, v);
                    if (c == 0 || pp_d2(cm, x, v, u) >= dhat2) continue;
                    if (add_pp(&L, v, u, c * W)) err = 1;
                }
            }
            i = j;
        }
        /* edge–edge: ½(ω_a + ω_b) per pair, and for the convergent set −(n_p(ea) − 1)·½ω_a per
         * (edge ea, vertex p of a candidate partner edge) */
        const ct_pair_list *ee = &cand->ee;
#define OMEGA(e) (ee_area ? 0.5 * s->edge_area[(e)] : dhat2)
        for (long i = 0; i < ee->n && !err; ++i) {
            int ea = ee->ij[2 * i], ebb = ee->ij[2 * i + 1];
            add_ee(&L, cm, x, ea < ebb ? ea : ebb, ea < ebb ? ebb : ea, 0.5 * (OMEGA(ea) + OMEGA(ebb)), dhat2, &err);
        }
        if (conv && !err && ee->n) {
            /* partners of each edge, both directions */
            long n2 = 2 * ee->n;
            int *pr = malloc((size_t)n2 * 2 * sizeof *pr);
            if (!pr) err = 1;
            for (long i = 0; i < ee->n && !err; ++i) {
                pr[4 * i] = ee->ij[2 * i], pr[4 * i + 1] = ee->ij[2 * i + 1];
                pr[4 * i + 2] = ee->ij[2 * i + 1], pr[4 * i + 3] = ee->ij[2 * i];
            }
            if (!err) qsort(pr, (size_t)n2, 2 * sizeof *pr, cmp_int); /* sorts by the first of each pair */
            for (long i = 0; i < n2 && !err;) {
                int ea = pr[2 * i];
                long j = i;
                vb.n = 0;
                for (; j < n2 && pr[2 * j] == ea; ++j) {
                    int e2 = pr[2 * j + 1];
                    for (int k = 0; k < 2; ++k) {
                        int p = s->edges[2 * e2 + k];
                        if (!edge_has(s, ea, p) && ibuf_push(&vb, p)) err = 1;
                    }
                }
                vb.n = uniq(vb.a, vb.n);
                int a0 = s->edges[2 * ea], a1 = s->edges[2 * ea + 1];
                for (int k = 0; k < vb.n && !err; ++k) {
                    int p = vb.a[k], np = 0;
                    for (int q = cm->ve_ptr[p]; q < cm->ve_ptr[p + 1]; ++q) {
                        int e = cm->ve_list[q];
                        np += !edge_has(s, e, a0) && !edge_has(s, e, a1);
                    }
                    if (np == 1 || pe_d2(cm, x, p, ea) >= dhat2) continue;
                    if (add_pe_classified(&L, cm, x, p, ea, -(np - 1) * 0.5 * OMEGA(ea))) err = 1;
                }
                i = j;
            }
            free(pr);
        }
#undef OMEGA
    } else {
        const ct_pair_list *ve = &cand->ve;
        for (long i = 0; i < ve->n && !err;) {
            int v = ve->ij[2 * i];
            long j = i;
            double W = fv * cm->wv[v];
            vb.n = 0;
            for (; j < ve->n && ve->ij[2 * j] == v; ++j) {
                int e = ve->ij[2 * j + 1];
                if (pe_d2(cm, x, v, e) < dhat2 && add_pe_classified(&L, cm, x, v, e, W)) err = 1;
                if (conv)
                    for (int k = 0; k < 2; ++k)
                        if (s->edges[2 * e + k] != v && ibuf_push(&vb, s->edges[2 * e + k])) err = 1;
            }
            if (conv && !err) {
                vb.n = uniq(vb.a, vb.n);
                for (int k = 0; k < vb.n && !err; ++k) {
                    int u = vb.a[k], c = vertex_coef_2d(cm, u, v);
                    if (c == 0 || pp_d2(cm, x, v, u) >= dhat2) continue;
                    if (add_pp(&L, v, u, c * W)) err = 1;
                }
            }
            i = j;
        }
    }
    /* obstacles: every movable surface vertex against every half-space */
    for (int b = 0; b < nobs && !err; ++b) {
        for (int k = 0; k < s->nbv && !err; ++k) {
            int v = s->bverts[k];
            if (cm->movable && !cm->movable[v]) continue;
            const double *P = X(x, dim, v);
            double d = 0.0;
            for (int i = 0; i < dim; ++i) d += obs[b].normal[i] * (P[i] - obs[b].point[i]);
            if (!(d < dhat)) continue;
            ct_collision c = {0};
            c.kind = CT_COL_PH;
            c.v[0] = v;
            c.v[1] = b;
            c.side = 1;
            c.w = cm->wv[v];
            if (push_term(&L, &c, v, b, 0)) err = 1;
        }
    }
    free(eb.a);
    free(vb.a);
    if (err) {
        free(L.t);
        return CT_ENOMEM;
    }
    /* merge identical stencils */
    if (L.n > 1) qsort(L.t, (size_t)L.n, sizeof *L.t, cmp_term);
    if (cs->cap < L.n) {
        ct_collision *c = realloc(cs->c, (size_t)(L.n ? L.n : 1) * sizeof *c);
        if (!c) {
            free(L.t);
            return CT_ENOMEM;
        }
        cs->c = c;
        cs->cap = L.n;
    }
    cs->n = 0;
    for (long i = 0; i < L.n;) {
        long j = i;
        double w = 0.0;
        for (; j < L.n && cmp_term(&L.t[i], &L.t[j]) == 0; ++j) w += L.t[j].c.w;
        if (w != 0.0) {
            cs->c[cs->n] = L.t[i].c;
            cs->c[cs->n].w = w;
            cs->n++;
        }
        i = j;
    }
    free(L.t);
    return CT_OK;
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

/* PSD projection of a term Hessian H (n×n, n = m·dim, column-major) in the complement of the
 * translations. Every stencil except the half-space one is translation invariant (its distance
 * and mollifier depend on differences of positions only), so H vanishes on the dim translation
 * directions t_k = 1_m ⊗ e_k / √m and H = Q (QᵀHQ) Qᵀ for any orthonormal basis Q of their
 * complement. The projection of H onto the PSD cone keeps that invariance, so it equals
 * Q proj(QᵀHQ) Qᵀ: the eigen-decomposition runs on (m−1)·dim instead of m·dim unknowns (9 instead
 * of 12 for PT/EE, 6 for PE, 3 for PP: about 2.4× / 3.4× / 8× fewer flops). Q = h ⊗ I_dim with
 * the Helmert basis h_a (a = 1..m−1) of the vectors orthogonal to 1_m:
 *     h_a(i) = 1/√(a(a+1)) for i < a,  −a/√(a(a+1)) for i = a,  0 for i > a.
 * (In floating point the computed H carries round-off-sized translation components, which this
 * drops; the result agrees with the full-size projection to round-off.) */
static int project_psd_reduced(double *H, int m, int dim)
{
    const int n = m * dim, r = (m - 1) * dim;
    double h[4][3]; /* h[i][a-1] */
    for (int i = 0; i < m; ++i)
        for (int a = 1; a < m; ++a) {
            double c = 1.0 / sqrt((double)(a * (a + 1)));
            h[i][a - 1] = i < a ? c : (i == a ? -a * c : 0.0);
        }
    /* T = H Q (n × r), M = Qᵀ T (r × r) */
    double T[12 * 9], M[9 * 9];
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
    if (ct_psd_project(M, r) != CT_OK) return -1;
    /* H = Q M Qᵀ: T = Q M (n × r), then H = T Qᵀ */
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
    return 0;
}

/* Local Hessian (n×n column-major, n = stencil dofs), PSD-projected. Returns n. */
static int term_hessian(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                        ct_density_fn f, const void *ctx, double *H, int *status)
{
    const int nv = ct_collision_nverts(c), n = nv * cm->dim;
    double gs[12], Hs[144];
    double s = ct_collision_d2(c, cm, obs, x, gs, Hs);
    double ps, pss;
    double psi = f(ctx, c, s, &ps, &pss);
    const int moll = c->kind == CT_COL_EE && c->eps_x > 0;
    if (!moll) {
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i) H[i + n * j] = c->w * (pss * gs[i] * gs[j] + ps * Hs[i + n * j]);
    } else {
        double gm[12], Hm[144];
        double m = mollifier(c, x, gm, Hm);
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < n; ++i)
                H[i + n * j] = c->w * (m * (pss * gs[i] * gs[j] + ps * Hs[i + n * j]) +
                                       ps * (gs[i] * gm[j] + gm[i] * gs[j]) + psi * Hm[i + n * j]);
    }
    /* every finite entry is required (LAPACK's result would be meaningless otherwise) */
    for (int k = 0; k < n * n; ++k)
        if (!isfinite(H[k])) {
            *status = CT_ELIB;
            return n;
        }
    if (c->kind == CT_COL_PH) {
        if (ct_psd_project(H, n) != CT_OK) *status = CT_ELIB;
    } else if (project_psd_reduced(H, nv, cm->dim) != 0) {
        *status = CT_ELIB;
    }
    return n;
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
    const int dim = cm->dim;
    double *loc = malloc(((size_t)cs->n * 12 + 1) * sizeof *loc);
    if (!loc) return CT_ENOMEM;
#pragma omp parallel for schedule(dynamic, 64) num_threads(ct_threads(threads))
    for (long i = 0; i < cs->n; ++i) ct_collision_term_grad(&cs->c[i], cm, obs, x, f, ctx, loc + 12 * i);
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        int nv = ct_collision_nverts(c);
        for (int k = 0; k < nv; ++k) {
            int v = stencil_vertex(c, k);
            for (int d = 0; d < dim; ++d) g[(size_t)dim * v + d] += loc[12 * i + dim * k + d];
        }
    }
    free(loc);
    return CT_OK;
}

ct_status ct_collision_hessian(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                               const double *x, ct_density_fn f, const void *ctx, int threads, ct_triplets *H)
{
    const int dim = cm->dim;
    if (cs->n == 0) return CT_OK;
    /* Term i's (nv·dim)² entries go to H at off[i] (the order of ct_triplets_add_block, term after
     * term), so the terms are evaluated in parallel straight into the triplet arrays: the result is
     * the same as appending the blocks one by one, for any thread count. */
    size_t *off = malloc(((size_t)cs->n + 1) * sizeof *off);
    if (!off) return CT_ENOMEM;
    off[0] = H->n;
    for (long i = 0; i < cs->n; ++i) {
        size_t nd = (size_t)ct_collision_nverts(&cs->c[i]) * (size_t)dim;
        off[i + 1] = off[i] + nd * nd;
    }
    ct_status st = ct_triplets_reserve(H, off[cs->n]);
    if (st != CT_OK) {
        free(off);
        return st;
    }
    int status = CT_OK;
#pragma omp parallel for schedule(dynamic, 16) num_threads(ct_threads(threads))
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        double loc[144];
        int sti = CT_OK;
        const int nv = ct_collision_nverts(c), nd = nv * dim;
        term_hessian(c, cm, obs, x, f, ctx, loc, &sti);
        if (sti != CT_OK) {
#pragma omp atomic write
            status = sti;
        }
        size_t t = off[i];
        for (int b = 0; b < nv; ++b)
            for (int j = 0; j < dim; ++j) {
                const int col = c->v[b] * dim + j, lj = b * dim + j;
                for (int a = 0; a < nv; ++a)
                    for (int k = 0; k < dim; ++k, ++t) {
                        H->row[t] = c->v[a] * dim + k;
                        H->col[t] = col;
                        H->val[t] = loc[(a * dim + k) + nd * lj];
                    }
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
