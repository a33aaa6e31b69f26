/* contact_mesh.c — the surface topology the collision-set constructions need (ct_contact_mesh,
 * ct_collisions.h): edges of each face, the faces around each edge with their opposite vertices,
 * the edges and the adjacent vertices of each vertex, and which vertices lie inside the surface
 * (not on the border of an open one). Built once per simulation.
 */
#include "collisions_internal.h"

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
