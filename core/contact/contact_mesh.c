/* contact_mesh.c — the surface topology the collision-set constructions need (ct_contact_mesh,
 * ct_collisions.h): edges of each face, the faces around each edge with their opposite vertices,
 * the edges, faces and adjacent vertices of each vertex, and which vertices lie inside the surface
 * (not on the border of an open one). Built once per simulation. And the lag of the face-aware
 * weights (ct_contact_mesh_lag): the positions xⁿ and each face's rest area share times its
 * outward unit normal at xⁿ, from which a vertex's weight for a contact direction is a short sum
 * over its faces (ct_contact_mesh_vertex_weight).
 */
#include "collisions_internal.h"

#include "contactlab/ct_distance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    free(cm->vf_ptr);
    free(cm->vf_list);
    free(cm->ef_face);
    free(cm->x_lag);
    free(cm->face_un);
    free(cm->vdir_ptr);
    free(cm->vdir_part);
    free(cm->vdir_w);
    free(cm->vdir_s);
    free(cm->edge_crease);
    free(cm->edge_l2_rest);
    free(cm->edir_ptr);
    free(cm->edir_part);
    free(cm->edir_w);
    free(cm->lag_rows);
    free(cm->part_kin);
    memset(cm, 0, sizeof *cm);
}

/* ------------------------------------------------------------------------------------------ */
/* contact directions at the lag (collisions_internal.h)                                       */

static void nan_dir(int dim, double *n)
{
    for (int k = 0; k < dim; ++k) n[k] = NAN;
}

void ct_unit_diff(int dim, const double *a, const double *b, double *n)
{
    double l2 = 0.0;
    for (int k = 0; k < dim; ++k) {
        n[k] = a[k] - b[k];
        l2 += n[k] * n[k];
    }
    const double l = sqrt(l2);
    if (!(l > 0.0) || !isfinite(l)) {
        nan_dir(dim, n);
        return;
    }
    for (int k = 0; k < dim; ++k) n[k] /= l;
}

/* From the foot of p on the line (e0, e1) towards p. */
static void dir_line(int dim, const double *p, const double *e0, const double *e1, double *n)
{
    double d[3], q[3], dd = 0.0, qd = 0.0;
    for (int k = 0; k < dim; ++k) {
        d[k] = e1[k] - e0[k];
        q[k] = p[k] - e0[k];
        dd += d[k] * d[k];
        qd += q[k] * d[k];
    }
    if (!(dd > 0.0)) {
        ct_unit_diff(dim, p, e0, n);
        return;
    }
    const double t = qd / dd;
    double c[3];
    for (int k = 0; k < dim; ++k) c[k] = e0[k] + t * d[k];
    ct_unit_diff(dim, p, c, n);
}

/* The unit normal of the plane (t0, t1, t2) on the side of p. */
static void dir_plane(const double *p, const double *t0, const double *t1, const double *t2, double *n)
{
    const double u[3] = {t1[0] - t0[0], t1[1] - t0[1], t1[2] - t0[2]};
    const double w[3] = {t2[0] - t0[0], t2[1] - t0[1], t2[2] - t0[2]};
    double N[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    const double l = sqrt(N[0] * N[0] + N[1] * N[1] + N[2] * N[2]);
    const double s = N[0] * (p[0] - t0[0]) + N[1] * (p[1] - t0[1]) + N[2] * (p[2] - t0[2]);
    if (!(l > 0.0) || !isfinite(l) || s == 0.0) {
        nan_dir(3, n);
        return;
    }
    const double f = (s > 0.0 ? 1.0 : -1.0) / l;
    for (int k = 0; k < 3; ++k) n[k] = f * N[k];
}

/* Surface edge e's vertex positions at the lag, in s->edges order. */
static void lag_edge(const ct_contact_mesh *cm, int e, const double **e0, const double **e1)
{
    *e0 = X(cm->x_lag, cm->dim, cm->s->edges[2 * e]);
    *e1 = X(cm->x_lag, cm->dim, cm->s->edges[2 * e + 1]);
}

void ct_lag_dir_pe(const ct_contact_mesh *cm, int p, int e, double *n)
{
    const int dim = cm->dim;
    const double *P = X(cm->x_lag, dim, p), *E0, *E1;
    lag_edge(cm, e, &E0, &E1);
    switch (ct_pe_classify(dim, P, E0, E1)) {
    case CT_PE_P_E0: ct_unit_diff(dim, P, E0, n); break;
    case CT_PE_P_E1: ct_unit_diff(dim, P, E1, n); break;
    default: dir_line(dim, P, E0, E1, n);
    }
}

void ct_lag_dir_pt(const ct_contact_mesh *cm, int p, int f, double *n)
{
    const double *xl = cm->x_lag, *P = X(xl, 3, p);
    const int *F = cm->s->faces + 3 * f;
    const double *T[3] = {X(xl, 3, F[0]), X(xl, 3, F[1]), X(xl, 3, F[2])};
    const ct_pt_type t = ct_pt_classify(P, T[0], T[1], T[2]);
    switch (t) {
    case CT_PT_P_T0:
    case CT_PT_P_T1:
    case CT_PT_P_T2: ct_unit_diff(3, P, T[t - CT_PT_P_T0], n); break;
    case CT_PT_P_E0:
    case CT_PT_P_E1:
    case CT_PT_P_E2: {
        const int k = t - CT_PT_P_E0, e = cm->face_edges[3 * f + k];
        if (e >= 0) ct_lag_dir_pe(cm, p, e, n);
        else dir_line(3, P, T[k], T[(k + 1) % 3], n);
        break;
    }
    default: dir_plane(P, T[0], T[1], T[2], n);
    }
}

void ct_lag_dir_ee(const ct_contact_mesh *cm, int ea, int eb, double *n)
{
    const double *A0, *A1, *B0, *B1;
    lag_edge(cm, ea, &A0, &A1);
    lag_edge(cm, eb, &B0, &B1);
    const ct_ee_type t = ct_ee_classify(A0, A1, B0, B1);
    switch (t) {
    case CT_EE_A0_B0: ct_unit_diff(3, A0, B0, n); break;
    case CT_EE_A0_B1: ct_unit_diff(3, A0, B1, n); break;
    case CT_EE_A1_B0: ct_unit_diff(3, A1, B0, n); break;
    case CT_EE_A1_B1: ct_unit_diff(3, A1, B1, n); break;
    case CT_EE_A_B0:
    case CT_EE_A_B1: { /* b's end against a's interior: a's side looks from b's end */
        double m[3];
        ct_lag_dir_pe(cm, cm->s->edges[2 * eb + (t == CT_EE_A_B1)], ea, m);
        for (int k = 0; k < 3; ++k) n[k] = -m[k];
        break;
    }
    case CT_EE_A0_B: ct_lag_dir_pe(cm, cm->s->edges[2 * ea], eb, n); break;
    case CT_EE_A1_B: ct_lag_dir_pe(cm, cm->s->edges[2 * ea + 1], eb, n); break;
    default: {
        double sa, rb, pa[3], pb[3];
        ct_ee_closest(A0, A1, B0, B1, &sa, &rb);
        for (int k = 0; k < 3; ++k) pa[k] = A0[k] + sa * (A1[k] - A0[k]), pb[k] = B0[k] + rb * (B1[k] - B0[k]);
        ct_unit_diff(3, pa, pb, n);
    }
    }
}

/* 1 if face f runs along edge e from its first to its second vertex. */
static int runs_along(const ct_contact_mesh *cm, int f, int e)
{
    const int *F = cm->s->faces + 3 * f, e0 = cm->s->edges[2 * e], e1 = cm->s->edges[2 * e + 1];
    for (int k = 0; k < 3; ++k)
        if (F[k] == e0) return F[(k + 1) % 3] == e1;
    return 0;
}

/* The creases s_e of every edge from the lagged face normals (ct_contact_mesh_edge_crease). */
static void lag_creases(ct_contact_mesh *cm)
{
    for (int e = 0; e < cm->s->ned; ++e) {
        const int lo = cm->ef_ptr[e], hi = cm->ef_ptr[e + 1];
        double se = hi - lo < 2 ? 1.0 : 0.0; /* a free edge is a knife edge */
        for (int i = lo; i < hi; ++i)
            for (int j = i + 1; j < hi; ++j) {
                /* consistently oriented faces run along their common edge in opposite directions */
                const int fi = cm->ef_face[i], fj = cm->ef_face[j];
                const double *ni = cm->face_un + 3 * (size_t)fi, *nj = cm->face_un + 3 * (size_t)fj;
                const double sg = runs_along(cm, fi, e) == runs_along(cm, fj, e) ? -1.0 : 1.0;
                const double c = sg * (ni[0] * nj[0] + ni[1] * nj[1] + ni[2] * nj[2]);
                const int degenerate = ni[0] == 0.0 && ni[1] == 0.0 && ni[2] == 0.0;
                se = fmax(se, degenerate || (nj[0] == 0.0 && nj[1] == 0.0 && nj[2] == 0.0) ? 1.0 : 0.5 * (1.0 - c));
            }
        cm->edge_crease[e] = fmax(CT_QUAD_FLOOR, fmin(1.0, se));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* the lag                                                                                     */

/* The nearest primitive at the lag per (primitive, partner participant): rows (a vertex or an
 * edge, the partner's participant, the partner primitive, d²) sorted by (prim, part, d², other). */
typedef struct ct_lag_row {
    int prim, part, other;
    double d2;
} near_row;

static int cmp_near_row(const void *pa, const void *pb)
{
    const near_row *a = pa, *b = pb;
    if (a->prim != b->prim) return a->prim < b->prim ? -1 : 1;
    if (a->part != b->part) return a->part < b->part ? -1 : 1;
    if (a->d2 != b->d2) return a->d2 < b->d2 ? -1 : 1;
    return (a->other > b->other) - (a->other < b->other);
}

/* Sort rows by cmp_near_row: rows already grouped by ascending prim (the vertex–face candidates
 * come by vertex) are sorted group by group (short groups, insertion sort), others by qsort; the
 * order is total (other tells rows of one prim and part apart), so the result is the same. */
static void sort_rows(near_row *r, long n)
{
    long i = 1;
    while (i < n && r[i - 1].prim <= r[i].prim) ++i;
    if (i < n) {
        qsort(r, (size_t)n, sizeof *r, cmp_near_row);
        return;
    }
    for (long k = 1; k < n; ++k) {
        const near_row t = r[k];
        long j = k - 1;
        for (; j >= 0 && r[j].prim == t.prim && cmp_near_row(&r[j], &t) > 0; --j) r[j + 1] = r[j];
        r[j + 1] = t;
    }
}

static int grow_rows(near_row **r, long *cap, long need)
{
    if (need <= *cap) return 0;
    long nc = *cap ? *cap : 256;
    while (nc < need) nc *= 2;
    near_row *p = realloc(*r, (size_t)nc * sizeof *p);
    if (!p) return -1;
    *r = p;
    *cap = nc;
    return 0;
}

/* Keep the first (nearest) row of every (prim, partner) run of the sorted rows r[0..n), and write
 * the CSR (ptr over np primitives, part, wt) of their weights wfn(cm, prim, d) for the directions
 * d = dirfn(cm, prim, other), or its negative for rows with other < 0 (edge rows store ~other for
 * the second edge of a pair); with wfn2, wt2 the same of a second weight. */
typedef void (*dir_fn)(const ct_contact_mesh *cm, int a, int b, double *n);
typedef double (*weight_fn)(const ct_contact_mesh *cm, int a, const double *n);

static ct_status write_dirs(ct_contact_mesh *cm, near_row *r, long n, int np, dir_fn fn, weight_fn wfn,
                            weight_fn wfn2, int **ptr, int **part, double **wt, double **wt2, long *cap)
{
    const int dim = cm->dim;
    long m = 0;
    for (long i = 0; i < n; ++i)
        if (i == 0 || r[i].prim != r[i - 1].prim || r[i].part != r[i - 1].part) r[m++] = r[i];
    if (!*ptr && !(*ptr = malloc(((size_t)np + 1) * sizeof **ptr))) return CT_ENOMEM;
    if (m > *cap) {
        int *pp = realloc(*part, (size_t)m * sizeof *pp);
        if (pp) *part = pp;
        double *ww = realloc(*wt, (size_t)m * sizeof *ww), *w2 = ww;
        if (ww) *wt = ww;
        if (wfn2) {
            w2 = realloc(*wt2, (size_t)m * sizeof *w2);
            if (w2) *wt2 = w2;
        }
        if (!pp || !ww || !w2) return CT_ENOMEM;
        *cap = m;
    }
    for (int v = 0; v <= np; ++v) (*ptr)[v] = 0;
    for (long i = 0; i < m; ++i) (*ptr)[r[i].prim + 1]++;
    for (int v = 0; v < np; ++v) (*ptr)[v + 1] += (*ptr)[v];
    for (long i = 0; i < m; ++i) { /* rows are sorted by prim: entry i is row i */
        (*part)[i] = r[i].part;
        double d[3];
        if (r[i].other >= 0) {
            fn(cm, r[i].prim, r[i].other, d);
        } else { /* the second edge of a pair: the negative of the first's */
            fn(cm, ~r[i].other, r[i].prim, d);
            for (int k = 0; k < dim; ++k) d[k] = -d[k];
        }
        (*wt)[i] = wfn(cm, r[i].prim, d);
        if (wfn2) (*wt2)[i] = wfn2(cm, r[i].prim, d);
    }
    return CT_OK;
}

static void dir_vf(const ct_contact_mesh *cm, int v, int f, double *n) { ct_lag_dir_pt(cm, v, f, n); }
static void dir_ve(const ct_contact_mesh *cm, int v, int e, double *n) { ct_lag_dir_pe(cm, v, e, n); }

ct_status ct_contact_mesh_lag(ct_contact_mesh *cm, const double *x, const ct_candidates *cand, double reach,
                               int edges)
{
    const ct_surface *s = cm->s;
    const int dim = cm->dim;
    if (!cm->x_lag || !cm->face_un) return CT_OK;
    memcpy(cm->x_lag, x, (size_t)cm->nv * (size_t)dim * sizeof *x);
    if (dim == 3) {
        for (int f = 0; f < s->nf; ++f) {
            const int *F = s->faces + 3 * (size_t)f;
            const double *a = X(x, 3, F[0]), *b = X(x, 3, F[1]), *c = X(x, 3, F[2]);
            const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
            const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            const double k = len > 0.0 && isfinite(len) ? 1.0 / len : 0.0;
            for (int i = 0; i < 3; ++i) cm->face_un[3 * (size_t)f + i] = k * n[i];
        }
        lag_creases(cm);
    } else {
        for (int e = 0; e < s->ned; ++e) { /* outward normal (dy, −dx)/|d| of segment (a, b) */
            const double *a = X(x, 2, s->edges[2 * e]), *b = X(x, 2, s->edges[2 * e + 1]);
            const double dx = b[0] - a[0], dy = b[1] - a[1], len = sqrt(dx * dx + dy * dy);
            const double k = len > 0.0 && isfinite(len) ? 1.0 / len : 0.0;
            cm->face_un[2 * (size_t)e] = k * dy;
            cm->face_un[2 * (size_t)e + 1] = -k * dx;
        }
    }
    cm->vdir_on = cm->edir_on = cm->vshare_on = 0;
    if (!cand) return CT_OK;
    /* per (vertex, partner): the nearest partner primitive at x among the candidates within reach
     * (farther ones are left out: which of them a candidate list holds depends on where it was
     * queried, and the directions must not) */
    const ct_pair_list *L = dim == 3 ? &cand->vf : &cand->ve;
    const double r2 = reach * reach;
    long n = 0;
    if (grow_rows(&cm->lag_rows, &cm->lag_rows_cap, L->n + 1)) return CT_ENOMEM;
    for (long i = 0; i < L->n; ++i) {
        const int v = L->ij[2 * i], q = L->ij[2 * i + 1];
        double d2;
        if (dim == 3) {
            const int *F = s->faces + 3 * (size_t)q;
            ct_pt_classify_d2(X(x, 3, v), X(x, 3, F[0]), X(x, 3, F[1]), X(x, 3, F[2]), &d2);
            if (d2 < r2) cm->lag_rows[n++] = (near_row){v, cm->part[F[0]], q, d2};
        } else {
            const int e0 = s->edges[2 * q], e1 = s->edges[2 * q + 1];
            ct_pe_classify_d2(2, X(x, 2, v), X(x, 2, e0), X(x, 2, e1), &d2);
            if (d2 < r2) cm->lag_rows[n++] = (near_row){v, cm->part[e0], q, d2};
        }
    }
    sort_rows(cm->lag_rows, n);
    ct_status st = write_dirs(cm, cm->lag_rows, n, cm->nv, dim == 3 ? dir_vf : dir_ve, ct_contact_mesh_vertex_weight,
                              dim == 3 && edges ? ct_contact_mesh_edge_share : NULL, &cm->vdir_ptr,
                              &cm->vdir_part, &cm->vdir_w, &cm->vdir_s, &cm->vdir_cap);
    if (st != CT_OK) return st;
    cm->vdir_on = 1;
    cm->vshare_on = dim == 3 && edges;
    if (dim != 3 || !edges) return CT_OK;
    /* per (edge, partner): the nearest partner edge at x among the edge–edge candidates */
    const ct_pair_list *E = &cand->ee;
    if (grow_rows(&cm->lag_rows, &cm->lag_rows_cap, 2 * E->n + 1)) return CT_ENOMEM;
    n = 0;
    for (long i = 0; i < E->n; ++i) {
        const int ea = E->ij[2 * i], eb = E->ij[2 * i + 1];
        const int a0 = s->edges[2 * ea], a1 = s->edges[2 * ea + 1], b0 = s->edges[2 * eb], b1 = s->edges[2 * eb + 1];
        double d2;
        ct_ee_classify_d2(X(x, 3, a0), X(x, 3, a1), X(x, 3, b0), X(x, 3, b1), &d2, NULL, NULL);
        if (!(d2 < r2)) continue;
        cm->lag_rows[n++] = (near_row){ea, cm->part[b0], eb, d2};
        cm->lag_rows[n++] = (near_row){eb, cm->part[a0], ~ea, d2};
    }
    sort_rows(cm->lag_rows, n);
    st = write_dirs(cm, cm->lag_rows, n, s->ned, ct_lag_dir_ee, ct_contact_mesh_edge_weight, NULL, &cm->edir_ptr,
                    &cm->edir_part, &cm->edir_w, NULL, &cm->edir_cap);
    if (st == CT_OK) cm->edir_on = 1;
    return st;
}

const double *ct_lag_vertex_weight(const ct_contact_mesh *cm, int v, int part)
{
    if (!cm->vdir_on) return NULL;
    for (int i = cm->vdir_ptr[v]; i < cm->vdir_ptr[v + 1]; ++i)
        if (cm->vdir_part[i] == part) return cm->vdir_w + i;
    return NULL;
}

const double *ct_lag_edge_weight(const ct_contact_mesh *cm, int e, int part)
{
    if (!cm->edir_on) return NULL;
    for (int i = cm->edir_ptr[e]; i < cm->edir_ptr[e + 1]; ++i)
        if (cm->edir_part[i] == part) return cm->edir_w + i;
    return NULL;
}

/* The facing sum over the faces list[0..nlist): Σ_f share_f max(0, c_f)/c_max with c_f = −n_f·n
 * (lagged unit normals) and c_max the largest c_f; at least CT_QUAD_FLOOR·w0 (also when no face
 * faces n). Faces that face n as well as the best one count fully: on a flat region the weight
 * is w0 whatever n. */
static double facing_sum(const ct_contact_mesh *cm, const int *list, int nlist, const double *n, double w0)
{
    const int dim = cm->dim;
    double cmax = 0.0;
    for (int i = 0; i < nlist; ++i) {
        const double *u = cm->face_un + (size_t)dim * (size_t)list[i];
        double c = 0.0;
        for (int k = 0; k < dim; ++k) c -= u[k] * n[k];
        if (c > cmax) cmax = c;
    }
    double w = 0.0;
    if (cmax > 0.0)
        for (int i = 0; i < nlist; ++i) {
            const double *u = cm->face_un + (size_t)dim * (size_t)list[i];
            const double sh = dim == 3 ? cm->s->face_area[list[i]] / 3.0 : 0.5 * cm->s->edge_area[list[i]];
            double c = 0.0;
            for (int k = 0; k < dim; ++k) c -= u[k] * n[k];
            if (c > 0.0) w += c == cmax ? sh : sh * (c / cmax);
        }
    return fmax(w, CT_QUAD_FLOOR * w0);
}

double ct_contact_mesh_vertex_weight(const ct_contact_mesh *cm, int v, const double *n)
{
    const double w0 = cm->wv[v];
    if (!cm->face_un || !(isfinite(n[0]) && isfinite(n[1]) && (cm->dim == 2 || isfinite(n[2])))) return w0;
    const int *ptr = cm->dim == 3 ? cm->vf_ptr : cm->ve_ptr, *list = cm->dim == 3 ? cm->vf_list : cm->ve_list;
    if (ptr[v + 1] == ptr[v]) return w0; /* a point: no faces to face anything with */
    return facing_sum(cm, list + ptr[v], ptr[v + 1] - ptr[v], n, w0);
}

double ct_contact_mesh_edge_weight(const ct_contact_mesh *cm, int e, const double *n)
{
    const double w0 = cm->s->edge_area[e];
    if (cm->dim != 3 || !cm->face_un || !(isfinite(n[0]) && isfinite(n[1]) && isfinite(n[2]))) return w0;
    if (cm->ef_ptr[e + 1] == cm->ef_ptr[e]) return w0;
    return facing_sum(cm, cm->ef_face + cm->ef_ptr[e], cm->ef_ptr[e + 1] - cm->ef_ptr[e], n, w0);
}

double ct_contact_mesh_side(const ct_contact_mesh *cm, int v, int partner)
{
    if (cm->kin_sides == CT_KIN_TWO_SIDED || !cm->part_kin || partner < 0 || partner >= cm->npart) return 1.0;
    const int a = cm->part_kin[cm->part[v]], b = cm->part_kin[partner];
    return a == b ? 1.0 : (b ? 2.0 : CT_QUAD_FLOOR);
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
    cm->quadrature = CT_QUAD_FACE;
    cm->kin_sides = CT_KIN_ONE_SIDED;
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
        cm->ef_face = malloc(((size_t)cm->ef_ptr[ne] + 1) * sizeof(int));
        free(fill);
        fill = calloc((size_t)ne + 1, sizeof *fill);
        if (!cm->ef_opp || !cm->ef_face || !fill) goto nomem;
        for (int f = 0; f < nf; ++f)
            for (int k = 0; k < 3; ++k) {
                int e = cm->face_edges[3 * f + k];
                if (e >= 0) {
                    cm->ef_face[cm->ef_ptr[e] + fill[e]] = f;
                    cm->ef_opp[cm->ef_ptr[e] + fill[e]++] = s->faces[3 * f + (k + 2) % 3];
                }
            }
        /* vertex -> incident faces, in face order */
        memset(count, 0, ((size_t)(nv > ne ? nv : ne) + 1) * sizeof *count);
        for (int i = 0; i < 3 * nf; ++i) count[s->faces[i]]++;
        if (!(cm->vf_ptr = csr_ptr(count, nv))) goto nomem;
        cm->vf_list = malloc(((size_t)cm->vf_ptr[nv] + 1) * sizeof(int));
        free(fill);
        fill = calloc((size_t)nv + 1, sizeof *fill);
        if (!cm->vf_list || !fill) goto nomem;
        for (int f = 0; f < nf; ++f)
            for (int k = 0; k < 3; ++k) {
                const int v = s->faces[3 * f + k];
                cm->vf_list[cm->vf_ptr[v] + fill[v]++] = f;
            }
        /* the creases of the edges: 1 until a lag computes them (ct_contact_mesh_lag) */
        if (!(cm->edge_crease = malloc(((size_t)ne + 1) * sizeof *cm->edge_crease))) goto nomem;
        for (int e = 0; e < ne; ++e) cm->edge_crease[e] = 1.0;
        /* |e|² at the rest positions, as ct_ee_mollifier_eps forms it (the edge–edge mollifier's
         * threshold of every edge pair, read by the set builds) */
        if (x_rest && !(cm->edge_l2_rest = malloc(((size_t)ne + 1) * sizeof *cm->edge_l2_rest))) goto nomem;
        for (int e = 0; x_rest && e < ne; ++e) {
            const double *p0 = x_rest + 3 * (size_t)s->edges[2 * e], *p1 = x_rest + 3 * (size_t)s->edges[2 * e + 1];
            const double d[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
            cm->edge_l2_rest[e] = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
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
    count = NULL, fill = NULL;
    /* kinematic participants: every surface vertex prescribed */
    for (int v = 0; v < nv; ++v)
        if (part[v] + 1 > cm->npart) cm->npart = part[v] + 1;
    if (!(cm->part_kin = malloc((size_t)cm->npart + 1))) goto nomem;
    memset(cm->part_kin, movable ? 1 : 0, (size_t)cm->npart + 1);
    if (movable)
        for (int v = 0; v < nv; ++v)
            if (movable[v]) cm->part_kin[part[v]] = 0;
    /* the lag of the face-aware weights, first at the rest positions */
    if (x_rest) {
        const size_t nfa = dim == 3 ? 3 * (size_t)s->nf : 2 * (size_t)s->ned;
        cm->x_lag = malloc(((size_t)nv * (size_t)dim + 1) * sizeof *cm->x_lag);
        cm->face_un = malloc((nfa + 1) * sizeof *cm->face_un);
        if (!cm->x_lag || !cm->face_un) {
            ct_contact_mesh_free(cm);
            return CT_ENOMEM;
        }
        ct_contact_mesh_lag(cm, x_rest, NULL, 0.0, 0);
    }
    return CT_OK;
nomem:
    free(count);
    free(fill);
    ct_contact_mesh_free(cm);
    return CT_ENOMEM;
}

double ct_contact_mesh_edge_crease(const ct_contact_mesh *cm, int e)
{
    return cm->dim == 3 && cm->edge_crease ? cm->edge_crease[e] : 1.0;
}

double ct_contact_mesh_edge_share(const ct_contact_mesh *cm, int v, const double *n)
{
    if (cm->dim != 3) return 0.0;
    const double nan3[3] = {NAN, NAN, NAN};
    double w = 0.0;
    for (int k = cm->ve_ptr[v]; k < cm->ve_ptr[v + 1]; ++k) {
        const int e = cm->ve_list[k];
        w += (1.0 - cm->edge_crease[e]) * ct_contact_mesh_edge_weight(cm, e, n ? n : nan3);
    }
    return 0.5 * w;
}
