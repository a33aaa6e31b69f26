/* contact_mesh.c — the surface topology the collision-set constructions need (ct_contact_mesh,
 * ct_collisions.h): edges of each face, the faces around each edge with their opposite vertices,
 * the edges, faces and adjacent vertices of each vertex, and which vertices lie inside the surface
 * (not on the border of an open one). Built once per simulation. And the lag of the face-aware
 * weights (ct_contact_mesh_lag): the positions xⁿ and each face's rest area share times its
 * outward unit normal at xⁿ, from which a vertex's weight for a contact direction is a short sum
 * over its faces (ct_contact_mesh_vertex_weight).
 */
#include "collisions_internal.h"

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
    free(cm->face_an);
    memset(cm, 0, sizeof *cm);
}

void ct_contact_mesh_lag(ct_contact_mesh *cm, const double *x)
{
    const ct_surface *s = cm->s;
    if (!cm->x_lag || !cm->face_an) return;
    memcpy(cm->x_lag, x, (size_t)cm->nv * (size_t)cm->dim * sizeof *x);
    if (cm->dim == 3) {
        for (int f = 0; f < s->nf; ++f) {
            const int *F = s->faces + 3 * (size_t)f;
            const double *a = X(x, 3, F[0]), *b = X(x, 3, F[1]), *c = X(x, 3, F[2]);
            const double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, w[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double n[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
            const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            const double k = len > 0.0 && isfinite(len) ? (s->face_area[f] / 3.0) / len : 0.0;
            for (int i = 0; i < 3; ++i) cm->face_an[3 * (size_t)f + i] = k * n[i];
        }
    } else {
        for (int e = 0; e < s->ned; ++e) { /* outward normal (dy, −dx)/|d| of segment (a, b) */
            const double *a = X(x, 2, s->edges[2 * e]), *b = X(x, 2, s->edges[2 * e + 1]);
            const double dx = b[0] - a[0], dy = b[1] - a[1], len = sqrt(dx * dx + dy * dy);
            const double k = len > 0.0 && isfinite(len) ? (0.5 * s->edge_area[e]) / len : 0.0;
            cm->face_an[2 * (size_t)e] = k * dy;
            cm->face_an[2 * (size_t)e + 1] = -k * dx;
        }
    }
}

/* Σ max(0, −a_f·n) over the faces list[0..n) (a_f = face_an), floored at CT_QUAD_FLOOR·w0. */
static double facing_sum(const ct_contact_mesh *cm, const int *list, int nlist, const double *n, double w0)
{
    const int dim = cm->dim;
    double w = 0.0;
    for (int i = 0; i < nlist; ++i) {
        const double *a = cm->face_an + (size_t)dim * (size_t)list[i];
        double d = 0.0;
        for (int k = 0; k < dim; ++k) d -= a[k] * n[k];
        if (d > 0.0) w += d;
    }
    return fmax(w, CT_QUAD_FLOOR * w0);
}

double ct_contact_mesh_vertex_weight(const ct_contact_mesh *cm, int v, const double *n)
{
    const double w0 = cm->wv[v];
    if (!cm->face_an || !(isfinite(n[0]) && isfinite(n[1]) && (cm->dim == 2 || isfinite(n[2])))) return w0;
    const int *ptr = cm->dim == 3 ? cm->vf_ptr : cm->ve_ptr, *list = cm->dim == 3 ? cm->vf_list : cm->ve_list;
    if (ptr[v + 1] == ptr[v]) return w0; /* a point: no faces to face anything with */
    return facing_sum(cm, list + ptr[v], ptr[v + 1] - ptr[v], n, w0);
}

double ct_contact_mesh_edge_weight(const ct_contact_mesh *cm, int e, const double *n)
{
    const double w0 = cm->s->edge_area[e];
    if (cm->dim != 3 || !cm->face_an || !(isfinite(n[0]) && isfinite(n[1]) && isfinite(n[2]))) return w0;
    if (cm->ef_ptr[e + 1] == cm->ef_ptr[e]) return w0;
    return facing_sum(cm, cm->ef_face + cm->ef_ptr[e], cm->ef_ptr[e + 1] - cm->ef_ptr[e], n, w0);
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
    /* the lag of the face-aware weights, first at the rest positions */
    if (x_rest) {
        const size_t nfa = dim == 3 ? 3 * (size_t)s->nf : 2 * (size_t)s->ned;
        cm->x_lag = malloc(((size_t)nv * (size_t)dim + 1) * sizeof *cm->x_lag);
        cm->face_an = malloc((nfa + 1) * sizeof *cm->face_an);
        if (!cm->x_lag || !cm->face_an) {
            ct_contact_mesh_free(cm);
            return CT_ENOMEM;
        }
        ct_contact_mesh_lag(cm, x_rest);
    }
    return CT_OK;
nomem:
    free(count);
    free(fill);
    ct_contact_mesh_free(cm);
    return CT_ENOMEM;
}
