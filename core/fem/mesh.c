/* mesh.c — simplicial meshes: helpers, validation, boundary extraction, generators.
 * The readers live in mesh_io.c (shared parts, dispatch), mesh_gmsh.c and mesh_obj.c. */
#include "contactlab/ct_mesh.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

void ct_mesh_init(ct_mesh *m) { memset(m, 0, sizeof *m); }

void ct_mesh_free(ct_mesh *m)
{
    if (!m) return;
    free(m->X);
    free(m->elem);
    free(m->surf);
    ct_mesh_init(m);
}

/* malloc(n*size) with overflow check; n == 0 gives a valid 1-byte block. */
static void *alloc_array(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size) return NULL;
    return malloc(n * size > 0 ? n * size : 1);
}

static void *dup_array(const void *src, size_t n, size_t size)
{
    if (!src || n == 0) return NULL;
    void *p = alloc_array(n, size);
    if (p) memcpy(p, src, n * size);
    return p;
}

ct_status ct_mesh_copy(ct_mesh *dst, const ct_mesh *src)
{
    ct_mesh t;
    ct_mesh_init(&t);
    t.dim = src->dim;
    t.nv = src->nv;
    t.ne = src->ne;
    t.nsurf = src->nsurf;
    size_t d = src->dim > 0 ? (size_t)src->dim : 0;
    t.X = dup_array(src->X, (size_t)(src->nv > 0 ? src->nv : 0) * d, sizeof(double));
    t.elem = dup_array(src->elem, (size_t)(src->ne > 0 ? src->ne : 0) * (d + 1), sizeof(int));
    t.surf = dup_array(src->surf, (size_t)(src->nsurf > 0 ? src->nsurf : 0) * d, sizeof(int));
    if ((src->X && src->nv > 0 && !t.X) || (src->elem && src->ne > 0 && !t.elem) ||
        (src->surf && src->nsurf > 0 && !t.surf)) {
        ct_mesh_free(&t);
        return CT_ENOMEM;
    }
    *dst = t;
    return CT_OK;
}

static double tri_area2d(const double *a, const double *b, const double *c)
{
    return 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

static double tet_volume(const double *a, const double *b, const double *c, const double *d)
{
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; ++k) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
        w[k] = d[k] - a[k];
    }
    double det = u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
                 u[2] * (v[0] * w[1] - v[1] * w[0]);
    return det / 6.0;
}

/* Area of the 3D triangle (a, b, c). */
static double tri_area3d(const double *a, const double *b, const double *c)
{
    double u[3], v[3];
    for (int k = 0; k < 3; ++k) {
        u[k] = b[k] - a[k];
        v[k] = c[k] - a[k];
    }
    double n0 = u[1] * v[2] - u[2] * v[1];
    double n1 = u[2] * v[0] - u[0] * v[2];
    double n2 = u[0] * v[1] - u[1] * v[0];
    return 0.5 * sqrt(n0 * n0 + n1 * n1 + n2 * n2);
}

static double seg_length(const double *a, const double *b) { return hypot(b[0] - a[0], b[1] - a[1]); }

double ct_mesh_elem_volume(const ct_mesh *m, const double *X, int e)
{
    const int *v = m->elem + (size_t)e * (size_t)(m->dim + 1);
    if (m->dim == 2) return tri_area2d(X + 2 * (size_t)v[0], X + 2 * (size_t)v[1], X + 2 * (size_t)v[2]);
    return tet_volume(X + 3 * (size_t)v[0], X + 3 * (size_t)v[1], X + 3 * (size_t)v[2], X + 3 * (size_t)v[3]);
}

void ct_mesh_bbox(const ct_mesh *m, double *lo, double *hi)
{
    int d = m->dim;
    for (int c = 0; c < d; ++c) {
        lo[c] = INFINITY;
        hi[c] = -INFINITY;
    }
    for (int i = 0; i < m->nv; ++i)
        for (int c = 0; c < d; ++c) {
            double x = m->X[(size_t)i * (size_t)d + (size_t)c];
            if (!isfinite(x)) continue; /* non-finite coordinates are validate's business */
            if (x < lo[c]) lo[c] = x;
            if (x > hi[c]) hi[c] = x;
        }
    for (int c = 0; c < d; ++c)
        if (lo[c] > hi[c]) lo[c] = hi[c] = 0.0; /* no finite vertex */
}

/* ---------------------------------------------------------------- validation */

static ct_status check_element_faces(const ct_mesh *m, const char *what, ct_diag *diag);

ct_status ct_mesh_validate(const ct_mesh *m, const char *what, ct_diag *diag)
{
    if (!what) what = "mesh";
    if (!m) return ct_diag_add(diag, CT_EINPUT, "%s: no mesh", what);
    if (m->dim != 2 && m->dim != 3)
        return ct_diag_add(diag, CT_EINPUT, "%s: dimension must be 2 or 3 (got %d)", what, m->dim);
    if (m->nv < 0 || m->ne < 0 || m->nsurf < 0)
        return ct_diag_add(diag, CT_EINPUT, "%s: negative counts (nv %d, ne %d, nsurf %d)", what, m->nv,
                           m->ne, m->nsurf);
    if (m->nv == 0 || (m->ne == 0 && m->nsurf == 0))
        return ct_diag_add(diag, CT_EINPUT, "%s: empty mesh (%d vertices, %d elements, %d surface cells)",
                           what, m->nv, m->ne, m->nsurf);
    if (!m->X || (m->ne > 0 && !m->elem) || (m->nsurf > 0 && !m->surf))
        return ct_diag_add(diag, CT_EINPUT, "%s: missing vertex or cell arrays", what);

    const int d = m->dim;
    ct_status st = CT_OK;

    /* Coordinates; remember which vertices are usable for the volume checks. */
    unsigned char *bad = calloc((size_t)m->nv, 1);
    if (!bad) return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", what);
    for (int i = 0; i < m->nv; ++i) {
        const double *x = m->X + (size_t)i * (size_t)d;
        int ok = isfinite(x[0]) && isfinite(x[1]) && (d == 2 || isfinite(x[2]));
        if (!ok) {
            bad[i] = 1;
            if (d == 2)
                st = ct_diag_add(diag, CT_EINPUT, "%s: vertex %d: non-finite coordinate (%g, %g)", what, i,
                                 x[0], x[1]);
            else
                st = ct_diag_add(diag, CT_EINPUT, "%s: vertex %d: non-finite coordinate (%g, %g, %g)", what,
                                 i, x[0], x[1], x[2]);
        }
    }

    /* Degeneracy tolerance relative to the bounding-box diagonal. */
    double lo[3], hi[3], diag2 = 0.0;
    ct_mesh_bbox(m, lo, hi);
    for (int c = 0; c < d; ++c) diag2 += (hi[c] - lo[c]) * (hi[c] - lo[c]);
    const double L = sqrt(diag2);
    const double vol_tol = 1e-12 * (d == 2 ? L * L : L * L * L);

    /* Elements: index range, then signed volume. */
    const int nn = d + 1;
    for (int e = 0; e < m->ne; ++e) {
        const int *v = m->elem + (size_t)e * (size_t)nn;
        int ok = 1;
        for (int k = 0; k < nn; ++k)
            if (v[k] < 0 || v[k] >= m->nv) {
                st = ct_diag_add(diag, CT_EINPUT, "%s: element %d: vertex index %d out of range (0..%d)",
                                 what, e, v[k], m->nv - 1);
                ok = 0;
            }
        if (!ok) continue;
        for (int k = 0; k < nn; ++k) ok = ok && !bad[v[k]];
        if (!ok) continue; /* already reported as a non-finite vertex */
        double vol = ct_mesh_elem_volume(m, m->X, e);
        if (!(fabs(vol) > vol_tol)) /* also NaN: inf - inf in the determinant */
            st = ct_diag_add(diag, CT_EINPUT, "%s: element %d: degenerate (signed %s %.1e)", what, e,
                             d == 2 ? "area" : "volume", vol);
        else if (vol < 0.0)
            st = ct_diag_add(diag, CT_EINPUT, "%s: element %d: inverted (signed %s %.1e)", what, e,
                             d == 2 ? "area" : "volume", vol);
    }

    /* Surface cells (surface-only meshes): index range and zero length/area. */
    const double meas_tol = 1e-12 * (d == 2 ? L : L * L);
    for (int f = 0; f < m->nsurf; ++f) {
        const int *v = m->surf + (size_t)f * (size_t)d;
        int ok = 1;
        for (int k = 0; k < d; ++k)
            if (v[k] < 0 || v[k] >= m->nv) {
                st = ct_diag_add(diag, CT_EINPUT, "%s: surface cell %d: vertex index %d out of range (0..%d)",
                                 what, f, v[k], m->nv - 1);
                ok = 0;
            }
        if (!ok) continue;
        for (int k = 0; k < d; ++k) ok = ok && !bad[v[k]];
        if (!ok) continue;
        double meas =
            d == 2 ? seg_length(m->X + 2 * (size_t)v[0], m->X + 2 * (size_t)v[1])
                   : tri_area3d(m->X + 3 * (size_t)v[0], m->X + 3 * (size_t)v[1], m->X + 3 * (size_t)v[2]);
        if (meas <= meas_tol)
            st = ct_diag_add(diag, CT_EINPUT, "%s: surface cell %d: degenerate (%s %.1e)", what, f,
                             d == 2 ? "length" : "area", meas);
    }
    free(bad);
    if (st == CT_OK && m->ne > 0) st = check_element_faces(m, what, diag);
    return st;
}

/* ---------------------------------------------------------------- surface extraction */

void ct_surface_free(ct_surface *s)
{
    if (!s) return;
    free(s->faces);
    free(s->edges);
    free(s->bverts);
    free(s->vert_area);
    free(s->edge_area);
    free(s->face_area);
    memset(s, 0, sizeof *s);
}

/* A cell face (3D triangle or 2D segment) keyed by its sorted vertices; `o` keeps the
 * outward-oriented vertex order. */
typedef struct {
    int key[3];
    int o[3];
} face_rec;

static int cmp_face_rec(const void *pa, const void *pb)
{
    const face_rec *a = pa, *b = pb;
    for (int k = 0; k < 3; ++k)
        if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
    return 0;
}

static void swap_int(int *a, int *b)
{
    int t = *a;
    *a = *b;
    *b = t;
}

static void sort3(const int *v, int *k)
{
    k[0] = v[0];
    k[1] = v[1];
    k[2] = v[2];
    if (k[0] > k[1]) swap_int(&k[0], &k[1]);
    if (k[1] > k[2]) swap_int(&k[1], &k[2]);
    if (k[0] > k[1]) swap_int(&k[0], &k[1]);
}

/* Outward faces of a positively oriented tetrahedron (v0..v3). */
static const int tet_faces[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
/* Outward edges of a counter-clockwise triangle. */
static const int tri_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};

/* Unique edges of the boundary triangles s->faces, with 1/3-area weights. */
typedef struct {
    int a, b;
    int f;
} edge_rec;

static int cmp_edge_rec(const void *pa, const void *pb)
{
    const edge_rec *a = pa, *b = pb;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    if (a->b != b->b) return a->b < b->b ? -1 : 1;
    return (a->f > b->f) - (a->f < b->f);
}

static ct_status surface_edges_3d(ct_surface *s)
{
    size_t n = 3 * (size_t)s->nf;
    edge_rec *r = alloc_array(n, sizeof *r);
    if (!r) return CT_ENOMEM;
    for (int f = 0; f < s->nf; ++f)
        for (int k = 0; k < 3; ++k) {
            int a = s->faces[3 * (size_t)f + (size_t)k], b = s->faces[3 * (size_t)f + (size_t)(k + 1) % 3];
            edge_rec *e = &r[3 * (size_t)f + (size_t)k];
            e->a = a < b ? a : b;
            e->b = a < b ? b : a;
            e->f = f;
        }
    qsort(r, n, sizeof *r, cmp_edge_rec);
    size_t ne = 0;
    for (size_t i = 0; i < n; ++i)
        if (i == 0 || r[i].a != r[i - 1].a || r[i].b != r[i - 1].b) ne++;
    s->edges = alloc_array(2 * ne, sizeof(int));
    s->edge_area = calloc(ne ? ne : 1, sizeof(double));
    if (!s->edges || !s->edge_area) {
        free(r);
        return CT_ENOMEM;
    }
    long e = -1;
    for (size_t i = 0; i < n; ++i) {
        if (i == 0 || r[i].a != r[i - 1].a || r[i].b != r[i - 1].b) {
            ++e;
            s->edges[2 * e] = r[i].a;
            s->edges[2 * e + 1] = r[i].b;
        }
        s->edge_area[e] += s->face_area[r[i].f] / 3.0;
    }
    s->ned = (int)ne;
    free(r);
    return CT_OK;
}

/* Boundary vertices: every vertex of a boundary cell (also of a zero-area one), increasing. */
static ct_status surface_bverts(ct_surface *s, const int *cells, int ncells, int nper)
{
    unsigned char *on = calloc((size_t)s->nv ? (size_t)s->nv : 1, 1);
    if (!on) return CT_ENOMEM;
    for (size_t i = 0; i < (size_t)ncells * (size_t)nper; ++i) on[cells[i]] = 1;
    int nb = 0;
    for (int v = 0; v < s->nv; ++v) nb += on[v];
    s->bverts = alloc_array((size_t)nb, sizeof(int));
    if (!s->bverts) {
        free(on);
        return CT_ENOMEM;
    }
    nb = 0;
    for (int v = 0; v < s->nv; ++v)
        if (on[v]) s->bverts[nb++] = v;
    s->nbv = nb;
    free(on);
    return CT_OK;
}

/* Check the index range of the given cells (so surface_build never reads out of bounds). */
static int cells_in_range(const int *c, int n, int nper, int nv)
{
    for (size_t i = 0; i < (size_t)n * (size_t)nper; ++i)
        if (c[i] < 0 || c[i] >= nv) return 0;
    return 1;
}

/* Boundary faces (3D) or segments (2D) of the elements: those that occur exactly once. */
static ct_status boundary_of_elements(const ct_mesh *m, ct_diag *diag, int **out, int *nout)
{
    const int d = m->dim, nn = d + 1; /* faces per element = nn, vertices per face = d */
    size_t n = (size_t)m->ne * (size_t)nn;
    face_rec *r = alloc_array(n, sizeof *r);
    if (!r) return ct_diag_add(diag, CT_ENOMEM, "surface: out of memory");
    for (int e = 0; e < m->ne; ++e) {
        const int *v = m->elem + (size_t)e * (size_t)nn;
        int flip = ct_mesh_elem_volume(m, m->X, e) < 0.0; /* keep faces outward for inverted input */
        for (int f = 0; f < nn; ++f) {
            face_rec *q = &r[(size_t)e * (size_t)nn + (size_t)f];
            if (d == 3) {
                q->o[0] = v[tet_faces[f][0]];
                q->o[1] = v[tet_faces[f][flip ? 2 : 1]];
                q->o[2] = v[tet_faces[f][flip ? 1 : 2]];
                sort3(q->o, q->key);
            } else {
                q->o[0] = v[tri_edges[f][flip ? 1 : 0]];
                q->o[1] = v[tri_edges[f][flip ? 0 : 1]];
                q->o[2] = -1;
                q->key[0] = q->o[0] < q->o[1] ? q->o[0] : q->o[1];
                q->key[1] = q->o[0] < q->o[1] ? q->o[1] : q->o[0];
                q->key[2] = -1;
            }
        }
    }
    qsort(r, n, sizeof *r, cmp_face_rec);

    /* Count boundary cells and detect non-manifold ones. */
    size_t nb = 0, nbad = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && cmp_face_rec(&r[i], &r[j]) == 0) ++j;
        if (j - i == 1)
            nb++;
        else if (j - i > 2) {
            nbad++;
            if (d == 3)
                ct_diag_add(diag, CT_EINPUT,
                            "surface: non-manifold mesh: face (%d, %d, %d) is shared by %zu elements",
                            r[i].key[0], r[i].key[1], r[i].key[2], j - i);
            else
                ct_diag_add(diag, CT_EINPUT,
                            "surface: non-manifold mesh: edge (%d, %d) is shared by %zu elements",
                            r[i].key[0], r[i].key[1], j - i);
        }
        i = j;
    }
    if (nbad) {
        free(r);
        return CT_EINPUT;
    }
    int *cells = alloc_array(nb * (size_t)d, sizeof(int));
    if (!cells) {
        free(r);
        return ct_diag_add(diag, CT_ENOMEM, "surface: out of memory");
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && cmp_face_rec(&r[i], &r[j]) == 0) ++j;
        if (j - i == 1) {
            for (int c = 0; c < d; ++c) cells[k * (size_t)d + (size_t)c] = r[i].o[c];
            k++;
        }
        i = j;
    }
    free(r);
    *out = cells;
    *nout = (int)nb;
    return CT_OK;
}

/* The elements meet as a mesh: a face (3D triangle, 2D edge) belongs to one element (boundary) or
 * to two that lie on its opposite sides. A face of three or more elements (non-manifold), or of
 * two on the same side (a duplicated element, or one folded over its neighbour: their volumes
 * overlap), is an input error naming the elements. Elements may have either orientation. */
typedef struct {
    int key[3];
    int side; /* which way the element's outward normal turns the sorted key (0 or 1) */
    int e;
} elem_face;

static int cmp_elem_face(const void *pa, const void *pb)
{
    const elem_face *a = pa, *b = pb;
    for (int k = 0; k < 3; ++k)
        if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
    return (a->e > b->e) - (a->e < b->e);
}

static ct_status check_element_faces(const ct_mesh *m, const char *what, ct_diag *diag)
{
    const int d = m->dim, nn = d + 1;
    size_t n = (size_t)m->ne * (size_t)nn;
    elem_face *r = alloc_array(n, sizeof *r);
    if (!r) return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", what);
    for (int e = 0; e < m->ne; ++e) {
        const int *v = m->elem + (size_t)e * (size_t)nn;
        int flip = ct_mesh_elem_volume(m, m->X, e) < 0.0;
        for (int f = 0; f < nn; ++f) {
            elem_face *q = &r[(size_t)e * (size_t)nn + (size_t)f];
            int o[3] = {-1, -1, -1};
            if (d == 3) {
                for (int k = 0; k < 3; ++k) o[k] = v[tet_faces[f][k]];
                sort3(o, q->key);
                /* the parity of the outward order against the sorted one */
                q->side = ((o[0] > o[1]) + (o[0] > o[2]) + (o[1] > o[2])) % 2;
            } else {
                o[0] = v[tri_edges[f][0]];
                o[1] = v[tri_edges[f][1]];
                q->key[0] = o[0] < o[1] ? o[0] : o[1];
                q->key[1] = o[0] < o[1] ? o[1] : o[0];
                q->key[2] = -1;
                q->side = o[0] > o[1];
            }
            q->side ^= flip;
            q->e = e;
        }
    }
    qsort(r, n, sizeof *r, cmp_elem_face);
    ct_status st = CT_OK;
    int nerr = 0;
    for (size_t i = 0; i < n && nerr < 5;) {
        size_t j = i + 1;
        while (j < n && memcmp(r[i].key, r[j].key, sizeof r[i].key) == 0) ++j;
        char face[64];
        if (d == 3) snprintf(face, sizeof face, "face (%d, %d, %d)", r[i].key[0], r[i].key[1], r[i].key[2]);
        else snprintf(face, sizeof face, "edge (%d, %d)", r[i].key[0], r[i].key[1]);
        if (j - i > 2) {
            st = ct_diag_add(diag, CT_EINPUT, "%s: elements %d, %d and %d share %s: a face belongs to at most two "
                             "elements (non-manifold or duplicated elements)", what, r[i].e, r[i + 1].e, r[i + 2].e, face);
            nerr++;
        } else if (j - i == 2 && r[i].side == r[i + 1].side) {
            st = ct_diag_add(diag, CT_EINPUT, "%s: elements %d and %d lie on the same side of their shared %s: "
                             "they overlap (a duplicated or folded element)", what, r[i].e, r[i + 1].e, face);
            nerr++;
        }
        i = j;
    }
    free(r);
    return st;
}

ct_status ct_surface_build(ct_surface *s, const ct_mesh *m, ct_diag *diag)
{
    memset(s, 0, sizeof *s);
    if (!m || (m->dim != 2 && m->dim != 3) || m->nv <= 0 || !m->X)
        return ct_diag_add(diag, CT_EINPUT, "surface: invalid or empty mesh");
    const int d = m->dim;
    if (m->ne > 0 ? !m->elem || !cells_in_range(m->elem, m->ne, d + 1, m->nv)
                  : m->nsurf <= 0 || !m->surf || !cells_in_range(m->surf, m->nsurf, d, m->nv))
        return ct_diag_add(diag, CT_EINPUT, "surface: mesh has no cells or vertex indices out of range");

    s->dim = d;
    s->nv = m->nv;
    int *cells = NULL, ncells = 0;
    ct_status st;
    if (m->ne > 0) {
        st = boundary_of_elements(m, diag, &cells, &ncells);
        if (st != CT_OK) return st;
    } else {
        cells = dup_array(m->surf, (size_t)m->nsurf * (size_t)d, sizeof(int));
        ncells = m->nsurf;
        if (!cells) return ct_diag_add(diag, CT_ENOMEM, "surface: out of memory");
    }

    s->vert_area = calloc((size_t)m->nv, sizeof(double));
    if (!s->vert_area) goto nomem;
    if (d == 3) {
        s->nf = ncells;
        s->faces = cells;
        cells = NULL;
        s->face_area = alloc_array((size_t)s->nf, sizeof(double));
        if (!s->face_area) goto nomem;
        for (int f = 0; f < s->nf; ++f) {
            const int *v = s->faces + 3 * (size_t)f;
            double a = tri_area3d(m->X + 3 * (size_t)v[0], m->X + 3 * (size_t)v[1], m->X + 3 * (size_t)v[2]);
            s->face_area[f] = a;
            for (int k = 0; k < 3; ++k) s->vert_area[v[k]] += a / 3.0;
        }
        if (surface_edges_3d(s) != CT_OK) goto nomem;
        if (surface_bverts(s, s->faces, s->nf, 3) != CT_OK) goto nomem;
    } else {
        s->ned = ncells;
        s->edges = cells;
        cells = NULL;
        s->edge_area = alloc_array((size_t)s->ned, sizeof(double));
        if (!s->edge_area) goto nomem;
        for (int e = 0; e < s->ned; ++e) {
            const int *v = s->edges + 2 * (size_t)e;
            double len = seg_length(m->X + 2 * (size_t)v[0], m->X + 2 * (size_t)v[1]);
            s->edge_area[e] = len;
            s->vert_area[v[0]] += 0.5 * len;
            s->vert_area[v[1]] += 0.5 * len;
        }
        if (surface_bverts(s, s->edges, s->ned, 2) != CT_OK) goto nomem;
    }
    return CT_OK;

nomem:
    free(cells);
    ct_surface_free(s);
    return ct_diag_add(diag, CT_ENOMEM, "surface: out of memory");
}

/* ---------------------------------------------------------------- generators */

static int finite_pos(double x) { return isfinite(x) && x > 0.0; }

/* Allocate a mesh of the given sizes; counts are checked to fit the int index type. */
static ct_status mesh_alloc(ct_mesh *m, int dim, int64_t nv, int64_t ne, int64_t nsurf)
{
    ct_mesh_init(m);
    int64_t cap = INT_MAX / 4;
    if (nv <= 0 || nv > cap || ne > cap || nsurf > cap) return CT_EINPUT;
    m->dim = dim;
    m->nv = (int)nv;
    m->ne = (int)ne;
    m->nsurf = (int)nsurf;
    m->X = alloc_array((size_t)nv * (size_t)dim, sizeof(double));
    if (ne) m->elem = alloc_array((size_t)ne * (size_t)(dim + 1), sizeof(int));
    if (nsurf) m->surf = alloc_array((size_t)nsurf * (size_t)dim, sizeof(int));
    if (!m->X || (ne && !m->elem) || (nsurf && !m->surf)) {
        ct_mesh_free(m);
        return CT_ENOMEM;
    }
    return CT_OK;
}

ct_status ct_mesh_rect(ct_mesh *m, const double origin[2], const double size[2], int nx, int ny)
{
    if (!m) return CT_EINPUT;
    ct_mesh_init(m);
    if (!origin || !size || !isfinite(origin[0]) || !isfinite(origin[1]) || !finite_pos(size[0]) ||
        !finite_pos(size[1]) || nx < 1 || ny < 1)
        return CT_EINPUT;
    if (2.0 * nx * ny > INT_MAX / 4) return CT_EINPUT; /* too large for int indices */
    int64_t nv = (nx + 1LL) * (ny + 1LL), ne = 2LL * nx * ny;
    ct_status st = mesh_alloc(m, 2, nv, ne, 0);
    if (st != CT_OK) return st;
    const int sx = nx + 1;
    for (int j = 0; j <= ny; ++j)
        for (int i = 0; i <= nx; ++i) {
            size_t v = (size_t)j * (size_t)sx + (size_t)i;
            m->X[2 * v] = origin[0] + size[0] * i / nx;
            m->X[2 * v + 1] = origin[1] + size[1] * j / ny;
        }
    int *t = m->elem;
    for (int j = 0; j < ny; ++j)
        for (int i = 0; i < nx; ++i) {
            int a = j * sx + i, b = a + 1, c = a + sx + 1, d = a + sx; /* CCW cell corners */
            if ((i + j) % 2 == 0) {                                    /* diagonal a-c */
                int tt[6] = {a, b, c, a, c, d};
                memcpy(t, tt, sizeof tt);
            } else { /* diagonal b-d */
                int tt[6] = {a, b, d, b, c, d};
                memcpy(t, tt, sizeof tt);
            }
            t += 6;
        }
    return CT_OK;
}

ct_status ct_mesh_box(ct_mesh *m, const double origin[3], const double size[3], const int cells[3])
{
    if (!m) return CT_EINPUT;
    ct_mesh_init(m);
    if (!origin || !size || !cells) return CT_EINPUT;
    for (int c = 0; c < 3; ++c)
        if (!isfinite(origin[c]) || !finite_pos(size[c]) || cells[c] < 1) return CT_EINPUT;
    const int nx = cells[0], ny = cells[1], nz = cells[2];
    if (6.0 * nx * ny * nz > INT_MAX / 4) return CT_EINPUT; /* too large for int indices */
    int64_t nv = (nx + 1LL) * (ny + 1LL) * (nz + 1LL);
    int64_t ne = 6LL * nx * ny * nz;
    ct_status st = mesh_alloc(m, 3, nv, ne, 0);
    if (st != CT_OK) return st;
    const int sx = nx + 1, sy = ny + 1;
    for (int k = 0; k <= nz; ++k)
        for (int j = 0; j <= ny; ++j)
            for (int i = 0; i <= nx; ++i) {
                size_t v = ((size_t)k * (size_t)sy + (size_t)j) * (size_t)sx + (size_t)i;
                m->X[3 * v] = origin[0] + size[0] * i / nx;
                m->X[3 * v + 1] = origin[1] + size[1] * j / ny;
                m->X[3 * v + 2] = origin[2] + size[2] * k / nz;
            }
    /* Kuhn subdivision: one tet per axis permutation (p0,p1,p2), walking from corner 0 to
     * corner 7 along e_p0, e_p1, e_p2. det = sign of the permutation, so odd permutations
     * swap their last two vertices. Every cell is split the same way, so faces match. */
    static const int perm[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    int *t = m->elem;
    for (int k = 0; k < nz; ++k)
        for (int j = 0; j < ny; ++j)
            for (int i = 0; i < nx; ++i) {
                int corner[8];
                for (int b = 0; b < 8; ++b)
                    corner[b] = ((k + ((b >> 2) & 1)) * sy + (j + ((b >> 1) & 1))) * sx + (i + (b & 1));
                for (int p = 0; p < 6; ++p) {
                    int b1 = 1 << perm[p][0], b2 = b1 | (1 << perm[p][1]);
                    t[0] = corner[0];
                    t[1] = corner[b1];
                    t[2] = corner[b2];
                    t[3] = corner[7];
                    if (p >= 3) swap_int(&t[2], &t[3]); /* odd permutation */
                    t += 4;
                }
            }
    return CT_OK;
}

ct_status ct_mesh_polyline(ct_mesh *m, const double *pts, int npts, int closed)
{
    if (!m) return CT_EINPUT;
    ct_mesh_init(m);
    if (!pts || npts < 2 || (closed && npts < 3)) return CT_EINPUT;
    for (int i = 0; i < 2 * npts; ++i)
        if (!isfinite(pts[i])) return CT_EINPUT;
    int nseg = closed ? npts : npts - 1;
    ct_status st = mesh_alloc(m, 2, npts, 0, nseg);
    if (st != CT_OK) return st;
    memcpy(m->X, pts, 2 * (size_t)npts * sizeof(double));
    for (int s = 0; s < nseg; ++s) {
        m->surf[2 * s] = s;
        m->surf[2 * s + 1] = (s + 1) % npts;
    }
    return CT_OK;
}

/* Segments run from a0 to a1: with a1 > a0 (counter-clockwise) the outward normals point
 * away from the centre; a full turn (|a1 - a0| = 2 pi) gives a closed circle of nseg vertices. */
ct_status ct_mesh_arc(ct_mesh *m, const double c[2], double r, double a0, double a1, int nseg)
{
    if (!m) return CT_EINPUT;
    ct_mesh_init(m);
    const double two_pi = 6.283185307179586476925286766559;
    if (!c || !isfinite(c[0]) || !isfinite(c[1]) || !finite_pos(r) || !isfinite(a0) || !isfinite(a1) ||
        nseg < 1 || a0 == a1 || fabs(a1 - a0) > two_pi * (1.0 + 1e-12))
        return CT_EINPUT;
    int full = fabs(fabs(a1 - a0) - two_pi) <= 1e-12 * two_pi;
    if (full && nseg < 3) return CT_EINPUT;
    int npts = full ? nseg : nseg + 1;
    ct_status st = mesh_alloc(m, 2, npts, 0, nseg);
    if (st != CT_OK) return st;
    for (int i = 0; i < npts; ++i) {
        double a = a0 + (a1 - a0) * i / nseg;
        m->X[2 * i] = c[0] + r * cos(a);
        m->X[2 * i + 1] = c[1] + r * sin(a);
    }
    for (int s = 0; s < nseg; ++s) {
        m->surf[2 * s] = s;
        m->surf[2 * s + 1] = (s + 1) % npts;
    }
    return CT_OK;
}
