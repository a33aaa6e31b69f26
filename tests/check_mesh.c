/* check_mesh.c — meshes: generators, boundary extraction, validation, readers.
 *
 * Expected numbers are derived by hand:
 *   rect nx x ny:  (nx+1)(ny+1) vertices, 2 nx ny triangles, 2(nx+ny) boundary segments.
 *   box n=(nx,ny,nz), S = nx ny + ny nz + nz nx:  6 nx ny nz tets; each boundary cell face is
 *   cut into 2 triangles, so 4S boundary faces; the boundary is a closed triangulated sphere
 *   (3F = 2E, V - E + F = 2), so 6S boundary edges and 2S + 2 boundary vertices. */
#include "contactlab/ct_mesh.h"
#include "ct_test_util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- helpers */

static double total_volume(const ct_mesh *m, double *minvol)
{
    double sum = 0.0, mn = INFINITY;
    for (int e = 0; e < m->ne; ++e) {
        double v = ct_mesh_elem_volume(m, m->X, e);
        sum += v;
        if (v < mn) mn = v;
    }
    if (minvol) *minvol = mn;
    return sum;
}

static double sum_of(const double *a, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += a[i];
    return s;
}

/* Area-weighted normal of a triangle (cross product / 2). */
static void tri_normal(const double *X, const int *f, double n[3])
{
    const double *a = X + 3 * f[0], *b = X + 3 * f[1], *c = X + 3 * f[2];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = 0.5 * (u[1] * v[2] - u[2] * v[1]);
    n[1] = 0.5 * (u[2] * v[0] - u[0] * v[2]);
    n[2] = 0.5 * (u[0] * v[1] - u[1] * v[0]);
}

static void tri_centroid(const double *X, const int *t, double c[3])
{
    for (int k = 0; k < 3; ++k) c[k] = (X[3 * t[0] + k] + X[3 * t[1] + k] + X[3 * t[2] + k]) / 3.0;
}

/* Volume enclosed by outward triangles (divergence theorem): sum (centroid . n A) / 3. */
static double enclosed_volume(const double *X, const int *faces, int nf)
{
    double vol = 0.0;
    for (int f = 0; f < nf; ++f) {
        const int *t = faces + 3 * f;
        double n[3], c[3];
        tri_normal(X, t, n);
        tri_centroid(X, t, c);
        vol += (c[0] * n[0] + c[1] * n[1] + c[2] * n[2]) / 3.0;
    }
    return vol;
}

/* 2D: every boundary vertex starts exactly one segment and ends exactly one (closed loops). */
static int closed_2d(const ct_surface *s)
{
    int *in = calloc((size_t)s->nv, sizeof *in), *out = calloc((size_t)s->nv, sizeof *out);
    int ok = in && out;
    for (int e = 0; ok && e < s->ned; ++e) {
        out[s->edges[2 * e]]++;
        in[s->edges[2 * e + 1]]++;
    }
    for (int i = 0; ok && i < s->nbv; ++i) ok = in[s->bverts[i]] == 1 && out[s->bverts[i]] == 1;
    free(in);
    free(out);
    return ok;
}

/* 2D: every segment's normal (dy, -dx) points away from the point c. */
static int normals_outward_2d(const ct_surface *s, const double *X, const double c[2])
{
    for (int e = 0; e < s->ned; ++e) {
        const double *a = X + 2 * s->edges[2 * e], *b = X + 2 * s->edges[2 * e + 1];
        double n[2] = {b[1] - a[1], -(b[0] - a[0])};
        double mid[2] = {0.5 * (a[0] + b[0]) - c[0], 0.5 * (a[1] + b[1]) - c[1]};
        if (n[0] * mid[0] + n[1] * mid[1] <= 0.0) return 0;
    }
    return 1;
}

static double wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* "...<path>:<digits>: ..." */
static int names_file_and_line(const char *msg, const char *path)
{
    const char *p = strstr(msg, path);
    if (!p) return 0;
    p += strlen(path);
    if (*p++ != ':') return 0;
    if (*p < '0' || *p > '9') return 0;
    while (*p >= '0' && *p <= '9') ++p;
    return *p == ':';
}

/* Does any message of d contain `needle`? */
static int diag_has(const ct_diag *d, const char *needle)
{
    for (size_t i = 0; i < d->count; ++i)
        if (strstr(d->msgs[i].text, needle)) return 1;
    return 0;
}

/* A mesh held in memory (no ownership: arrays are static in the tests). */
static ct_mesh mem_mesh(int dim, int nv, double *X, int ne, int *elem, int nsurf, int *surf)
{
    ct_mesh m = {dim, nv, X, ne, elem, nsurf, surf};
    return m;
}

/* ---------------------------------------------------------------- generators */

START_TEST(test_rect)
{
    const int sizes[][2] = {{1, 1}, {3, 2}, {5, 7}, {4, 4}};
    const double origin[2] = {-1.0, 2.0}, size[2] = {3.0, 0.5};
    const double centre[2] = {origin[0] + 0.5 * size[0], origin[1] + 0.5 * size[1]};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        int nx = sizes[k][0], ny = sizes[k][1];
        ct_mesh m;
        ck_assert_int_eq(ct_mesh_rect(&m, origin, size, nx, ny), CT_OK);
        ck_assert_int_eq(m.dim, 2);
        ck_assert_int_eq(m.nv, (nx + 1) * (ny + 1));
        ck_assert_int_eq(m.ne, 2 * nx * ny);
        ck_assert_int_eq(m.nsurf, 0);
        double minv, area = total_volume(&m, &minv);
        ck_assert(minv > 0.0);
        ck_assert(fabs(minv - size[0] * size[1] / (2.0 * nx * ny)) < 1e-12);
        ck_assert(ct_rel_err(area, size[0] * size[1], 1e-300) < 1e-12);
        ck_assert_int_eq(ct_mesh_validate(&m, "rect", NULL), CT_OK);

        ct_surface s;
        ct_diag d;
        ct_diag_init(&d);
        ck_assert_int_eq(ct_surface_build(&s, &m, &d), CT_OK);
        ck_assert_int_eq(s.dim, 2);
        ck_assert_int_eq(s.nf, 0);
        ck_assert_int_eq(s.ned, 2 * (nx + ny));
        ck_assert_int_eq(s.nbv, 2 * (nx + ny));
        double perim = 2.0 * (size[0] + size[1]);
        ck_assert(ct_rel_err(sum_of(s.edge_area, s.ned), perim, 1e-300) < 1e-12);
        ck_assert(ct_rel_err(sum_of(s.vert_area, s.nv), perim, 1e-300) < 1e-12);
        ck_assert(normals_outward_2d(&s, m.X, centre));
        ck_assert(closed_2d(&s));
        for (int i = 1; i < s.nbv; ++i) ck_assert(s.bverts[i] > s.bverts[i - 1]);
        ct_surface_free(&s);
        ct_diag_free(&d);
        ct_mesh_free(&m);
    }
}
END_TEST

/* Alternating diagonals: on an even grid, half the cells are cut along each diagonal. */
START_TEST(test_rect_alternating)
{
    const double o[2] = {0, 0}, sz[2] = {4, 4};
    ct_mesh m;
    ck_assert_int_eq(ct_mesh_rect(&m, o, sz, 4, 4), CT_OK);
    int up = 0, down = 0;
    for (int e = 0; e < m.ne; ++e)
        for (int k = 0; k < 3; ++k) {
            const double *a = m.X + 2 * m.elem[3 * e + k], *b = m.X + 2 * m.elem[3 * e + (k + 1) % 3];
            double dx = b[0] - a[0], dy = b[1] - a[1];
            if (dx != 0.0 && dy != 0.0) {
                if (dx * dy > 0.0)
                    up++;
                else
                    down++;
            }
        }
    ck_assert_int_eq(up, 16); /* 8 cells x 2 triangles */
    ck_assert_int_eq(down, 16);
    ct_mesh_free(&m);
}
END_TEST

START_TEST(test_box)
{
    const int sizes[][3] = {{1, 1, 1}, {2, 3, 4}, {3, 1, 2}, {5, 5, 5}};
    const double origin[3] = {0.5, -1.0, 2.0}, size[3] = {2.0, 0.5, 1.5};
    const double a = size[0], b = size[1], c = size[2];
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; ++k) {
        const int *n = sizes[k];
        int ncell = n[0] * n[1] * n[2];
        int S = n[0] * n[1] + n[1] * n[2] + n[2] * n[0];
        ct_mesh m;
        ck_assert_int_eq(ct_mesh_box(&m, origin, size, n), CT_OK);
        ck_assert_int_eq(m.dim, 3);
        ck_assert_int_eq(m.nv, (n[0] + 1) * (n[1] + 1) * (n[2] + 1));
        ck_assert_int_eq(m.ne, 6 * ncell);
        double minv, vol = total_volume(&m, &minv);
        ck_assert(minv > 0.0);
        ck_assert(ct_rel_err(minv, a * b * c / (6.0 * ncell), 1e-300) < 1e-12); /* all 6 equal */
        ck_assert(ct_rel_err(vol, a * b * c, 1e-300) < 1e-12);
        ck_assert_int_eq(ct_mesh_validate(&m, "box", NULL), CT_OK);

        ct_surface s;
        ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
        ck_assert_int_eq(s.nf, 4 * S);
        ck_assert_int_eq(s.ned, 6 * S);
        ck_assert_int_eq(s.nbv, 2 * S + 2);
        ck_assert_int_eq(s.nbv - s.ned + s.nf, 2);
        double area = 2.0 * (a * b + b * c + c * a);
        double fa = sum_of(s.face_area, s.nf);
        ck_assert(ct_rel_err(fa, area, 1e-300) < 1e-12);
        ck_assert(ct_rel_err(sum_of(s.vert_area, s.nv), fa, 1e-300) < 1e-12);
        ck_assert(ct_rel_err(sum_of(s.edge_area, s.ned), fa, 1e-300) < 1e-12);
        /* Outward orientation: enclosed volume is +abc, and every face normal is the
         * outward axis direction of the box side it lies on. */
        ck_assert(ct_rel_err(enclosed_volume(m.X, s.faces, s.nf), a * b * c, 1e-300) < 1e-12);
        for (int f = 0; f < s.nf; ++f) {
            double nrm[3], ctr[3];
            tri_normal(m.X, s.faces + 3 * f, nrm);
            double len = sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
            ck_assert(fabs(len - s.face_area[f]) < 1e-14);
            int axis = fabs(nrm[0]) > fabs(nrm[1]) ? (fabs(nrm[0]) > fabs(nrm[2]) ? 0 : 2)
                                                   : (fabs(nrm[1]) > fabs(nrm[2]) ? 1 : 2);
            tri_centroid(m.X, s.faces + 3 * f, ctr);
            ck_assert(fabs(fabs(nrm[axis]) - s.face_area[f]) < 1e-14); /* axis-aligned */
            double side = nrm[axis] > 0 ? origin[axis] + size[axis] : origin[axis];
            ck_assert(fabs(ctr[axis] - side) < 1e-12);
        }
        for (int e = 0; e < s.ned; ++e) ck_assert(s.edges[2 * e] < s.edges[2 * e + 1]);
        for (int i = 1; i < s.nbv; ++i) ck_assert(s.bverts[i] > s.bverts[i - 1]);
        for (int v = 0; v < s.nv; ++v) { /* interior vertices carry no area */
            const double *x = m.X + 3 * v;
            int on = 0;
            for (int q = 0; q < 3; ++q)
                on |= fabs(x[q] - origin[q]) < 1e-12 || fabs(x[q] - origin[q] - size[q]) < 1e-12;
            ck_assert(on ? s.vert_area[v] > 0.0 : s.vert_area[v] == 0.0);
        }
        ct_surface_free(&s);
        ct_mesh_free(&m);
    }
}
END_TEST

START_TEST(test_polyline_arc)
{
    /* Open polyline: 3 segments, length 1 + 2 + 1. */
    const double pts[] = {0, 0, 1, 0, 1, 2, 0, 2};
    ct_mesh m;
    ct_surface s;
    ck_assert_int_eq(ct_mesh_polyline(&m, pts, 4, 0), CT_OK);
    ck_assert_int_eq(m.dim, 2);
    ck_assert_int_eq(m.nv, 4);
    ck_assert_int_eq(m.ne, 0);
    ck_assert_int_eq(m.nsurf, 3);
    ck_assert_int_eq(ct_mesh_validate(&m, "polyline", NULL), CT_OK);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert_int_eq(s.ned, 3);
    ck_assert_int_eq(s.nbv, 4);
    ck_assert(fabs(sum_of(s.edge_area, s.ned) - 4.0) < 1e-14);
    ck_assert(fabs(s.vert_area[0] - 0.5) < 1e-14 && fabs(s.vert_area[1] - 1.5) < 1e-14);
    ct_surface_free(&s);
    ct_mesh_free(&m);

    /* Closed, counter-clockwise: 4 segments, perimeter 6, normals outward. */
    ck_assert_int_eq(ct_mesh_polyline(&m, pts, 4, 1), CT_OK);
    ck_assert_int_eq(m.nsurf, 4);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert(fabs(sum_of(s.edge_area, s.ned) - 6.0) < 1e-14);
    const double c[2] = {0.5, 1.0};
    ck_assert(normals_outward_2d(&s, m.X, c));
    ck_assert(closed_2d(&s));
    ct_surface_free(&s);
    ct_mesh_free(&m);

    /* Quarter arc, r = 2, 8 segments: chord sum 8 * 2 r sin(pi/32); normals away from centre. */
    const double ctr[2] = {1.0, -1.0};
    const double pi = 3.14159265358979323846;
    ck_assert_int_eq(ct_mesh_arc(&m, ctr, 2.0, 0.0, pi / 2, 8), CT_OK);
    ck_assert_int_eq(m.nv, 9);
    ck_assert_int_eq(m.nsurf, 8);
    ck_assert(fabs(m.X[0] - 3.0) < 1e-14 && fabs(m.X[1] + 1.0) < 1e-14);
    ck_assert(fabs(m.X[16] - 1.0) < 1e-14 && fabs(m.X[17] - 1.0) < 1e-14);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert(ct_rel_err(sum_of(s.edge_area, s.ned), 8 * 2 * 2.0 * sin(pi / 32), 1e-300) < 1e-12);
    ck_assert(normals_outward_2d(&s, m.X, ctr));
    ct_surface_free(&s);
    ct_mesh_free(&m);

    /* Full circle: closed, nseg vertices; clockwise (a1 < a0) turns the normals inward. */
    ck_assert_int_eq(ct_mesh_arc(&m, ctr, 1.0, 0.0, 2 * pi, 12), CT_OK);
    ck_assert_int_eq(m.nv, 12);
    ck_assert_int_eq(m.nsurf, 12);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert(closed_2d(&s));
    ck_assert(normals_outward_2d(&s, m.X, ctr));
    ct_surface_free(&s);
    ct_mesh_free(&m);
    ck_assert_int_eq(ct_mesh_arc(&m, ctr, 1.0, pi, 0.0, 6), CT_OK);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert(!normals_outward_2d(&s, m.X, ctr));
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

/* A rejected generator call returns CT_EINPUT and leaves an empty mesh. */
static void bad(ct_status st, const ct_mesh *m)
{
    ck_assert_int_eq(st, CT_EINPUT);
    ck_assert_int_eq(m->nv, 0);
    ck_assert_ptr_null(m->X);
}

START_TEST(test_generator_bad_args)
{
    const double o2[2] = {0, 0}, s2[2] = {1, 1}, neg2[2] = {1, -1}, nan2[2] = {NAN, 1};
    const double o3[3] = {0, 0, 0}, s3[3] = {1, 1, 1}, zero3[3] = {1, 0, 1}, inf3[3] = {1, 1, INFINITY};
    const int c_ok[3] = {1, 1, 1}, c_zero[3] = {1, 0, 1}, c_neg[3] = {-2, 1, 1},
              c_huge[3] = {100000, 100000, 100000};
    const double pts[] = {0, 0, 1, 0, NAN, 1};
    ct_mesh m;
    bad(ct_mesh_rect(&m, o2, s2, 0, 1), &m);
    bad(ct_mesh_rect(&m, o2, s2, 1, -1), &m);
    bad(ct_mesh_rect(&m, o2, neg2, 1, 1), &m);
    bad(ct_mesh_rect(&m, o2, nan2, 1, 1), &m);
    bad(ct_mesh_rect(&m, NULL, s2, 1, 1), &m);
    bad(ct_mesh_rect(&m, o2, s2, 1 << 20, 1 << 20), &m);
    bad(ct_mesh_box(&m, o3, zero3, c_ok), &m);
    bad(ct_mesh_box(&m, o3, inf3, c_ok), &m);
    bad(ct_mesh_box(&m, o3, s3, c_zero), &m);
    bad(ct_mesh_box(&m, o3, s3, c_neg), &m);
    bad(ct_mesh_box(&m, o3, s3, c_huge), &m);
    bad(ct_mesh_box(&m, o3, s3, NULL), &m);
    bad(ct_mesh_polyline(&m, pts, 1, 0), &m);
    bad(ct_mesh_polyline(&m, pts, 2, 1), &m);
    bad(ct_mesh_polyline(&m, pts, 3, 0), &m); /* NaN point */
    bad(ct_mesh_polyline(&m, NULL, 3, 0), &m);
    bad(ct_mesh_arc(&m, o2, 0.0, 0.0, 1.0, 4), &m);
    bad(ct_mesh_arc(&m, o2, -1.0, 0.0, 1.0, 4), &m);
    bad(ct_mesh_arc(&m, o2, 1.0, 0.0, 1.0, 0), &m);
    bad(ct_mesh_arc(&m, o2, 1.0, 1.0, 1.0, 4), &m);
    bad(ct_mesh_arc(&m, o2, 1.0, 0.0, 7.0, 4), &m); /* more than a full turn */
    bad(ct_mesh_arc(&m, o2, 1.0, NAN, 1.0, 4), &m);
}
END_TEST

/* ---------------------------------------------------------------- surface */

START_TEST(test_surface_perf)
{
    const double o[3] = {0, 0, 0}, sz[3] = {1, 1, 1};
    const int n[3] = {30, 30, 30};
    ct_mesh m;
    ct_surface s;
    ck_assert_int_eq(ct_mesh_box(&m, o, sz, n), CT_OK);
    ck_assert_int_eq(m.ne, 162000);
    double t0 = wall_time();
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    double t = wall_time() - t0;
    printf("check_mesh: surface of a 30x30x30 box (%d tets, %d faces, %d edges): %.3f s\n", m.ne, s.nf, s.ned,
           t);
    ck_assert_int_eq(s.nf, 4 * 3 * 900);
    ck_assert_int_eq(s.ned, 6 * 3 * 900);
    ck_assert_int_eq(s.nbv, 2 * 3 * 900 + 2);
    ck_assert(ct_rel_err(sum_of(s.face_area, s.nf), 6.0, 1e-300) < 1e-12);
    ck_assert(t < 1.0);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

START_TEST(test_surface_nonmanifold)
{
    /* Three tets on the face (0,1,2): apexes above, below, and above again. */
    static double X[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1, 0.2, 0.2, 2};
    static int E[] = {0, 1, 2, 3, 0, 2, 1, 4, 0, 1, 2, 5};
    ct_mesh m = mem_mesh(3, 6, X, 3, E, 0, NULL);
    ct_diag d;
    ct_diag_init(&d);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, &d), CT_EINPUT);
    ck_assert(diag_has(&d, "non-manifold"));
    ck_assert_ptr_null(s.faces);
    ct_diag_free(&d);

    /* 2D: three triangles on the edge (0,1). */
    static double X2[] = {0, 0, 1, 0, 0, 1, 0, -1, 1, 2};
    static int E2[] = {0, 1, 2, 1, 0, 3, 0, 1, 4};
    ct_mesh m2 = mem_mesh(2, 5, X2, 3, E2, 0, NULL);
    ct_diag_init(&d);
    ck_assert_int_eq(ct_surface_build(&s, &m2, &d), CT_EINPUT);
    ck_assert(diag_has(&d, "non-manifold"));
    ct_diag_free(&d);

    /* Out-of-range indices must not be read. */
    static int E3[] = {0, 1, 2, 99};
    ct_mesh m3 = mem_mesh(3, 6, X, 1, E3, 0, NULL);
    ck_assert_int_eq(ct_surface_build(&s, &m3, NULL), CT_EINPUT);
}
END_TEST

/* Inverted input elements still give outward faces (orientation from the element sign). */
START_TEST(test_surface_inverted_input)
{
    const double o[3] = {0, 0, 0}, sz[3] = {1, 2, 3};
    const int n[3] = {2, 1, 1};
    ct_mesh m;
    ct_surface s;
    ck_assert_int_eq(ct_mesh_box(&m, o, sz, n), CT_OK);
    for (int e = 0; e < m.ne; e += 3) { /* flip every third tet */
        int t = m.elem[4 * e];
        m.elem[4 * e] = m.elem[4 * e + 1];
        m.elem[4 * e + 1] = t;
    }
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert_int_eq(s.nf, 4 * (2 + 1 + 2));
    ck_assert(ct_rel_err(enclosed_volume(m.X, s.faces, s.nf), 6.0, 1e-300) < 1e-12);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

START_TEST(test_elem_volume_bbox)
{
    static double X[] = {1, 1, 1, 3, 1, 1, 1, 4, 1, 1, 1, 5};
    static int E[] = {0, 1, 2, 3};
    ct_mesh m = mem_mesh(3, 4, X, 1, E, 0, NULL);
    ck_assert(fabs(ct_mesh_elem_volume(&m, X, 0) - 2.0 * 3.0 * 4.0 / 6.0) < 1e-14);
    double lo[3], hi[3];
    ct_mesh_bbox(&m, lo, hi);
    ck_assert(lo[0] == 1 && lo[1] == 1 && lo[2] == 1 && hi[0] == 3 && hi[1] == 4 && hi[2] == 5);
    static double X2[] = {0, 0, 2, 0, 0, 3};
    static int E2[] = {0, 1, 2};
    ct_mesh m2 = mem_mesh(2, 3, X2, 1, E2, 0, NULL);
    ck_assert(fabs(ct_mesh_elem_volume(&m2, X2, 0) - 3.0) < 1e-14);

    ct_mesh c;
    ck_assert_int_eq(ct_mesh_copy(&c, &m), CT_OK);
    ck_assert(c.X != m.X && c.nv == 4 && c.ne == 1 && c.elem[3] == 3 && c.X[11] == 5.0);
    ct_mesh_free(&c);
    ck_assert_int_eq(c.nv, 0);
    ck_assert_ptr_null(c.X);
}
END_TEST

/* ---------------------------------------------------------------- validation */

START_TEST(test_validate)
{
    ct_diag d;
    /* Inverted: swap two vertices of the unit tet. */
    static double X[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
    static int inv[] = {0, 2, 1, 3};
    ct_mesh m = mem_mesh(3, 4, X, 1, inv, 0, NULL);
    ct_diag_init(&d);
    ck_assert_int_eq(ct_mesh_validate(&m, "t.msh", &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 1);
    ck_assert_str_eq(d.msgs[0].text, "t.msh: element 0: inverted (signed volume -1.7e-01)");
    ct_diag_free(&d);

    /* Degenerate: coplanar, and a sliver below 1e-12 * diag^3. */
    static double Xd[] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0.3, 0.3, 0, 0.3, 0.3, 1e-13};
    static int deg[] = {0, 1, 2, 3, 0, 1, 2, 4};
    m = mem_mesh(3, 5, Xd, 2, deg, 0, NULL);
    ct_diag_init(&d);
    ck_assert_int_eq(ct_mesh_validate(&m, "flat", &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 2);
    ck_assert(diag_has(&d, "flat: element 0: degenerate"));
    ck_assert(diag_has(&d, "flat: element 1: degenerate"));
    ct_diag_free(&d);

    /* NaN and out-of-range indices, several problems reported at once. */
    static double Xn[] = {0, 0, 0, 1, 0, 0, NAN, 1, 0, 0, 0, 1};
    static int bad[] = {0, 1, 2, 3, 0, 1, 7, -1, 0, 2, 1, 3};
    m = mem_mesh(3, 4, Xn, 3, bad, 0, NULL);
    ct_diag_init(&d);
    ck_assert_int_eq(ct_mesh_validate(&m, "scene.json: /bodies/0/mesh", &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 3);
    ck_assert(diag_has(&d, "scene.json: /bodies/0/mesh: vertex 2: non-finite coordinate"));
    ck_assert(diag_has(&d, "scene.json: /bodies/0/mesh: element 1: vertex index 7 out of range (0..3)"));
    ck_assert(diag_has(&d, "scene.json: /bodies/0/mesh: element 1: vertex index -1 out of range"));
    ct_diag_free(&d);

    /* Empty meshes. */
    ct_diag_init(&d);
    m = mem_mesh(3, 0, NULL, 0, NULL, 0, NULL);
    ck_assert_int_eq(ct_mesh_validate(&m, "e", &d), CT_EINPUT);
    m = mem_mesh(3, 4, X, 0, NULL, 0, NULL);
    ck_assert_int_eq(ct_mesh_validate(&m, "e", &d), CT_EINPUT);
    ck_assert(diag_has(&d, "e: empty mesh"));
    m = mem_mesh(4, 4, X, 1, inv, 0, NULL);
    ck_assert_int_eq(ct_mesh_validate(&m, "e", &d), CT_EINPUT);
    ct_diag_free(&d);

    /* 2D: clockwise triangle; surface-only: degenerate and out-of-range segments. */
    static double X2[] = {0, 0, 1, 0, 0, 1};
    static int cw[] = {0, 2, 1};
    m = mem_mesh(2, 3, X2, 1, cw, 0, NULL);
    ct_diag_init(&d);
    ck_assert_int_eq(ct_mesh_validate(&m, "tri", &d), CT_EINPUT);
    ck_assert(diag_has(&d, "tri: element 0: inverted (signed area -5.0e-01)"));
    ct_diag_free(&d);
    static int segs[] = {0, 1, 1, 1, 2, 3};
    m = mem_mesh(2, 3, X2, 0, NULL, 3, segs);
    ct_diag_init(&d);
    ck_assert_int_eq(ct_mesh_validate(&m, "poly", &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 2);
    ck_assert(diag_has(&d, "poly: surface cell 1: degenerate"));
    ck_assert(diag_has(&d, "poly: surface cell 2: vertex index 3 out of range"));
    ct_diag_free(&d);

    /* The diag's cap bounds the messages; the status is still CT_EINPUT. */
    const double o[3] = {0, 0, 0}, sz[3] = {1, 1, 1};
    const int n[3] = {4, 4, 4};
    ct_mesh box;
    ck_assert_int_eq(ct_mesh_box(&box, o, sz, n), CT_OK);
    for (int i = 0; i < box.nv; ++i) box.X[3 * i] = NAN;
    ct_diag_init(&d);
    d.max_msgs = 10;
    ck_assert_int_eq(ct_mesh_validate(&box, "nanbox", &d), CT_EINPUT);
    ck_assert_uint_eq(d.count, 10);
    ck_assert_uint_eq(d.dropped, (size_t)box.nv - 10);
    ct_diag_free(&d);
    ct_mesh_free(&box);
}
END_TEST

/* ---------------------------------------------------------------- readers */

static void read_ok(ct_mesh *m, const char *name, int dim)
{
    char path[4096];
    snprintf(path, sizeof path, "%s", ct_test_data(name));
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = ct_mesh_read(m, path, dim, &d);
    if (st != CT_OK) ct_diag_print(&d, stderr, "");
    ck_assert_int_eq(st, CT_OK);
    ck_assert_int_eq(ct_mesh_validate(m, path, &d), CT_OK);
    ck_assert_uint_eq(d.count, 0);
    ct_diag_free(&d);
}

START_TEST(test_read_gmsh_v2)
{
    /* Unit cube, 6 tets (one negatively oriented in the file), plus a point, a line, a
     * triangle, an unused node, $PhysicalNames and $NodeData to skip. */
    ct_mesh m;
    ct_surface s;
    read_ok(&m, "meshes/cube_v2.msh", 3);
    ck_assert_int_eq(m.nv, 8);
    ck_assert_int_eq(m.ne, 6);
    ck_assert_int_eq(m.nsurf, 0);
    double minv;
    ck_assert(fabs(total_volume(&m, &minv) - 1.0) < 1e-12);
    ck_assert(fabs(minv - 1.0 / 6.0) < 1e-12);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert_int_eq(s.nf, 12);
    ck_assert(fabs(sum_of(s.face_area, s.nf) - 6.0) < 1e-12);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

START_TEST(test_read_gmsh_v4)
{
    /* Box [0,2]x[0,1]x[0,1], 12 tets, non-contiguous node tags in 3 blocks (one parametric),
     * $Entities, a point and a triangle block to ignore, one flipped tet. */
    ct_mesh m;
    ct_surface s;
    read_ok(&m, "meshes/cube_v4.msh", 3);
    ck_assert_int_eq(m.nv, 12);
    ck_assert_int_eq(m.ne, 12);
    double minv;
    ck_assert(fabs(total_volume(&m, &minv) - 2.0) < 1e-12);
    ck_assert(fabs(minv - 1.0 / 6.0) < 1e-12);
    double lo[3], hi[3];
    ct_mesh_bbox(&m, lo, hi);
    ck_assert(lo[0] == 0 && lo[1] == 0 && lo[2] == 0 && hi[0] == 2 && hi[1] == 1 && hi[2] == 1);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert_int_eq(s.nf, 4 * (2 + 1 + 2));
    ck_assert(fabs(sum_of(s.face_area, s.nf) - 10.0) < 1e-12);
    ck_assert(fabs(enclosed_volume(m.X, s.faces, s.nf) - 2.0) < 1e-12);
    ct_surface_free(&s);
    ct_mesh_free(&m);
}
END_TEST

START_TEST(test_read_gmsh_2d)
{
    ct_mesh m;
    ct_surface s;
    /* Unit square, 8 triangles (3 clockwise in the file), boundary lines ignored. */
    read_ok(&m, "meshes/square2d.msh", 2);
    ck_assert_int_eq(m.dim, 2);
    ck_assert_int_eq(m.nv, 9);
    ck_assert_int_eq(m.ne, 8);
    double minv;
    ck_assert(fabs(total_volume(&m, &minv) - 1.0) < 1e-12);
    ck_assert(fabs(minv - 0.125) < 1e-12);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert_int_eq(s.ned, 8);
    ck_assert(fabs(sum_of(s.edge_area, s.ned) - 4.0) < 1e-12);
    const double c[2] = {0.5, 0.5};
    ck_assert(normals_outward_2d(&s, m.X, c));
    ct_surface_free(&s);
    ct_mesh_free(&m);

    /* The same file as dim 3: triangles make a surface-only mesh. */
    read_ok(&m, "meshes/square2d.msh", 3);
    ck_assert_int_eq(m.dim, 3);
    ck_assert_int_eq(m.ne, 0);
    ck_assert_int_eq(m.nsurf, 8);
    ct_mesh_free(&m);

    /* v4.1 line elements only: a surface-only 2D outline, unused node dropped. */
    read_ok(&m, "meshes/outline2d.msh", 2);
    ck_assert_int_eq(m.nv, 4);
    ck_assert_int_eq(m.nsurf, 4);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert(fabs(sum_of(s.edge_area, s.ned) - 8.0) < 1e-12);
    const double c2[2] = {1.5, 0.5};
    ck_assert(normals_outward_2d(&s, m.X, c2));
    ck_assert(closed_2d(&s));
    ct_surface_free(&s);
    ct_mesh_free(&m);

    /* ... but as dim 3 it has neither tets nor triangles. */
    ct_diag d;
    ct_diag_init(&d);
    ck_assert_int_eq(ct_mesh_read(&m, ct_test_data("meshes/outline2d.msh"), 3, &d), CT_EINPUT);
    ck_assert(diag_has(&d, "no tetrahedra"));
    ck_assert_int_eq(m.nv, 0);
    ct_diag_free(&d);
}
END_TEST

START_TEST(test_read_obj)
{
    /* Unit cube: 6 quads fan-split, v/vt/vn forms, negative indices, an unused vertex. */
    ct_mesh m;
    ct_surface s;
    read_ok(&m, "meshes/cube.obj", 3);
    ck_assert_int_eq(m.dim, 3);
    ck_assert_int_eq(m.nv, 8);
    ck_assert_int_eq(m.ne, 0);
    ck_assert_int_eq(m.nsurf, 12);
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    ck_assert_int_eq(s.nf, 12);
    ck_assert_int_eq(s.ned, 18);
    ck_assert_int_eq(s.nbv, 8);
    ck_assert(fabs(sum_of(s.face_area, s.nf) - 6.0) < 1e-12);
    ck_assert(fabs(sum_of(s.edge_area, s.ned) - 6.0) < 1e-12);
    ck_assert(fabs(enclosed_volume(m.X, s.faces, s.nf) - 1.0) < 1e-12); /* kept outward */
    ct_surface_free(&s);
    ct_mesh_free(&m);

    ct_diag d;
    ct_diag_init(&d);
    ck_assert_int_eq(ct_mesh_read(&m, ct_test_data("meshes/cube.obj"), 2, &d), CT_EINPUT);
    ck_assert_int_eq(ct_mesh_read(&m, ct_test_data("meshes/cube.stl"), 3, &d), CT_EINPUT);
    ck_assert(diag_has(&d, "cube.stl: unsupported mesh format"));
    ck_assert_int_eq(ct_mesh_read(&m, ct_test_data("meshes/does_not_exist.msh"), 3, &d), CT_EINPUT);
    ck_assert(diag_has(&d, "does_not_exist.msh: cannot open"));
    ct_diag_free(&d);
}
END_TEST

/* Every file in bad_meshes/ fails (reading, or validation for well-formed files with bad
 * geometry) with CT_EINPUT and a message naming the file (and the line, for read errors);
 * the README lists every file. */
START_TEST(test_bad_meshes)
{
    char dir[4096], readme_path[4200];
    snprintf(dir, sizeof dir, "%s", ct_test_data("bad_meshes"));
    snprintf(readme_path, sizeof readme_path, "%s/README.md", dir);
    FILE *f = fopen(readme_path, "rb");
    ck_assert_msg(f != NULL, "missing %s", readme_path);
    static char readme[1 << 16];
    size_t nr = fread(readme, 1, sizeof readme - 1, f);
    readme[nr] = '\0';
    fclose(f);

    DIR *dp = opendir(dir);
    ck_assert_msg(dp != NULL, "cannot open %s", dir);
    struct dirent *de;
    int nfiles = 0, nvalidate = 0;
    while ((de = readdir(dp)) != NULL) {
        const char *name = de->d_name;
        if (name[0] == '.' || !strcmp(name, "README.md")) continue;
        char path[8300];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        int dim = strncmp(name, "2d_", 3) == 0 ? 2 : 3;
        ct_diag d;
        ct_diag_init(&d);
        ct_mesh m;
        ct_status st = ct_mesh_read(&m, path, dim, &d);
        int read_failed = st != CT_OK;
        if (!read_failed) {
            st = ct_mesh_validate(&m, path, &d);
            nvalidate++;
        }
        ct_mesh_free(&m);
        ck_assert_msg(st == CT_EINPUT, "%s: expected CT_EINPUT, got %d", name, st);
        ck_assert_msg(d.count >= 1, "%s: no message", name);
        const char *msg = d.msgs[0].text;
        printf("check_mesh: bad mesh %-30s -> %s\n", name, msg);
        ck_assert_msg(strstr(msg, name) != NULL, "%s: message does not name the file: %s", name, msg);
        if (read_failed)
            ck_assert_msg(names_file_and_line(msg, path), "%s: message has no line: %s", name, msg);
        ck_assert_msg(strstr(readme, name) != NULL, "%s is not listed in bad_meshes/README.md", name);
        ct_diag_free(&d);
        nfiles++;
    }
    closedir(dp);
    ck_assert_int_ge(nfiles, 12);
    ck_assert_int_le(nvalidate, 4); /* almost all are read errors; degenerate, duplicate and folded elements are validation errors */
}
END_TEST

/* Readers never crash and report only CT_EINPUT on truncated or mutated copies of the
 * sample files (run under ASan/UBSan to catch out-of-bounds reads). */
START_TEST(test_read_fuzz)
{
    const char *samples[] = {"meshes/cube_v2.msh", "meshes/cube_v4.msh", "meshes/square2d.msh",
                             "meshes/outline2d.msh", "meshes/cube.obj"};
    char *tmp = ct_test_tmpdir();
    ck_assert_ptr_nonnull(tmp);
    unsigned rng = 12345u;
    int ntried = 0, nfailed = 0;
    for (size_t k = 0; k < sizeof samples / sizeof samples[0]; ++k) {
        FILE *f = fopen(ct_test_data(samples[k]), "rb");
        ck_assert_ptr_nonnull(f);
        static char buf[1 << 16], mut[1 << 16];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        const char *ext = strrchr(samples[k], '.');
        char path[4200];
        snprintf(path, sizeof path, "%s/fuzz%s", tmp, ext);
        int dim = strstr(samples[k], "2d") ? 2 : 3;
        for (size_t len = 0; len <= n + 300; ++len) {
            size_t use = len;
            memcpy(mut, buf, n);
            if (len > n) { /* mutations: overwrite 1..3 bytes with random or special bytes */
                use = n;
                static const char special[] = {'\0', '\n', ' ', '$', '-', '9', 'e', '/', '#', '\r'};
                for (int r = 0; r < 1 + (int)(len % 3); ++r) {
                    rng = rng * 1103515245u + 12345u;
                    size_t at = (rng >> 8) % n;
                    rng = rng * 1103515245u + 12345u;
                    mut[at] = (rng >> 9) & 1 ? special[(rng >> 10) % sizeof special] : (char)(rng >> 16);
                }
            }
            f = fopen(path, "wb");
            ck_assert_ptr_nonnull(f);
            ck_assert_uint_eq(fwrite(mut, 1, use, f), use);
            fclose(f);
            ct_diag d;
            ct_diag_init(&d);
            ct_mesh m;
            ct_status st = ct_mesh_read(&m, path, dim, &d);
            ck_assert_msg(st == CT_OK || st == CT_EINPUT, "%s cut at %zu: status %d", samples[k], len, st);
            if (st == CT_OK) {
                ct_surface s;
                ct_status vs = ct_mesh_validate(&m, path, NULL);
                if (vs == CT_OK && ct_surface_build(&s, &m, NULL) == CT_OK) ct_surface_free(&s);
            } else {
                nfailed++;
                ck_assert_msg(names_file_and_line(ct_diag_last(&d), path), "%s", ct_diag_last(&d));
            }
            ct_mesh_free(&m);
            ct_diag_free(&d);
            ntried++;
        }
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/fuzz.msh", tmp);
    remove(path);
    snprintf(path, sizeof path, "%s/fuzz.obj", tmp);
    remove(path);
    remove(tmp);
    free(tmp);
    printf("check_mesh: fuzz: %d truncated/mutated files, %d rejected\n", ntried, nfailed);
    ck_assert_int_gt(nfailed, ntried / 2);
}
END_TEST

static Suite *mesh_suite(void)
{
    Suite *s = suite_create("mesh");
    TCase *gen = tcase_create("generators");
    tcase_add_test(gen, test_rect);
    tcase_add_test(gen, test_rect_alternating);
    tcase_add_test(gen, test_box);
    tcase_add_test(gen, test_polyline_arc);
    tcase_add_test(gen, test_generator_bad_args);
    suite_add_tcase(s, gen);
    TCase *surf = tcase_create("surface");
    tcase_set_timeout(surf, 20);
    tcase_add_test(surf, test_surface_perf);
    tcase_add_test(surf, test_surface_nonmanifold);
    tcase_add_test(surf, test_surface_inverted_input);
    tcase_add_test(surf, test_elem_volume_bbox);
    suite_add_tcase(s, surf);
    TCase *val = tcase_create("validate");
    tcase_add_test(val, test_validate);
    suite_add_tcase(s, val);
    TCase *io = tcase_create("readers");
    tcase_set_timeout(io, 60);
    tcase_add_test(io, test_read_gmsh_v2);
    tcase_add_test(io, test_read_gmsh_v4);
    tcase_add_test(io, test_read_gmsh_2d);
    tcase_add_test(io, test_read_obj);
    tcase_add_test(io, test_bad_meshes);
    tcase_add_test(io, test_read_fuzz);
    suite_add_tcase(s, io);
    return s;
}

CT_TEST_MAIN(mesh_suite)
