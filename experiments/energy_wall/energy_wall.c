/* energy_wall.c — energy walls of IPC (Du et al. 2023, "No Free Slide", §4.3 and Fig. 3).
 *
 * A probe vertex is held at the constant height h = 0.5 d̂ above a surface and moved along it; at every
 * sample we evaluate what the contact model puts into the Newton solve — its energy and its gradient,
 * through the model interface only (ct_model_find, ct_model_create with the row's parameters,
 * begin_step, energy, gradient) — for every row of the model table ROWS below (the ipc model with
 * `collision_set` = ipc2020 and convergent, models/ipc_adhesion/README.md; imls; and the adhesive
 * potential, ipc_adhesion's convergent set and sticky imls with the same Fang et al. law, also at a probe
 * height 1.5 d̂ in the adhesion-only band d̂ < h < d̂_a). A new model is one more row: {label, model name,
 * E_flat factors, "name=value ..." parameter settings, band height}.
 *
 * Flat surfaces: on a flat plane the ideal contact energy of a point at height h does not depend on
 * where the point is, and the ideal tangential force is zero. IPC 2020 sums a barrier over every
 * primitive within d̂, so above an edge shared by two triangles the same distance is counted twice and
 * above a vertex once per incident triangle: energy walls (local maxima) with tangential forces. The
 * convergent set's inclusion–exclusion (faces − edges + vertices; 2D: edges − vertices) counts the
 * closest point once, so the energy is flat.
 *
 * Curved surfaces: a faceted circle (2D: a regular NPOLY-gon inscribed in the circle of radius RCURV)
 * and a faceted cylinder (3D: the same polygon extruded along z, NZCELL cells of a, each quad split
 * along one diagonal); the probe moves along a concentric arc at the constant height h above the
 * *circle* (radius R + h outside the convex surface, R − h inside the concave one), its body rotated
 * with the path so that its axis stays along the local normal. The ideal energy is again constant and
 * the ideal force along the path zero, but the polygon's distance varies between h (over a vertex) and
 * h ± s (over a facet middle, s = R(1 − cos(π/N)) the sagitta): walls remain for every collision set.
 *
 * Probes: "point" — an isolated vertex with a prescribed vertex weight w_v (no faces of its own:
 * exactly the setting of the paper's Fig. 3); "body" — the tip of a small tetrahedron (2D:
 * triangle) whose other vertices are 8 d̂ above the tip, so the weight is the ordinary one and the
 * model also sees the plane's vertices against the body's faces and (3D) edge–edge pairs.
 * Planes: 3D "grid" (square cells split along one diagonal: 6 triangles at every interior vertex),
 * "alt" (alternating diagonals: 8 and 4 triangles per vertex), "jitter" (grid with the interior
 * vertices moved randomly in the plane, z = 0); 2D "line" (equal segments) and "jitter". Curved:
 * 3D "cyl" (probe outside), "cylin" (inside); 2D "circle" (outside), "circlein" (inside).
 *
 * Output (OUTDIR): one .dat per (dim, surface, probe, path, row label) with the columns documented in
 * its header, one .mesh file per surface (vertices and cells, for the analysis), and a summary table
 * on stdout. Usage: energy_wall OUTDIR [--quick]   (--quick: the adhesive rows on every 5th sample; every
 * other row as without it)
 */
#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_barrier.h"
#include "contactlab/ct_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define DHAT 1e-3        /* m */
#define KAPPA 1e5        /* Pa */
#define HEIGHT (0.5 * DHAT) /* the probe height of every row; adhesive rows also run at their band height */
#define CELL (4.0 * DHAT) /* plane cell size a */
#define NCELL 8           /* cells per side */
#define NSAMP 2001        /* samples per flat path */
#define NSAMP_CURVED 1001 /* samples per curved path (≤ 0.026 d̂ apart: four facets of 4.18 d̂) */
#define PI 3.14159265358979323846
#define TIP_H (8.0 * DHAT) /* body: height of the other vertices above the tip */
#define TIP_R (4.0 * DHAT) /* body: their horizontal distance from the tip */
#define NPOLY 24           /* curved surfaces: segments of the polygon (facet length 2R sin(π/N) = 4.18 d̂) */
#define RCURV (16.0 * DHAT) /* curved surfaces: radius of the circle through the polygon's vertices */
#define NZCELL 4           /* cylinder: cells of a along its axis (z from 0 to 4a) */

/* The probe height of the current run (m): HEIGHT, or an adhesive row's band height (model_row.hband). */
static double probe_h = HEIGHT;
/* Samples per flat / curved path of the current run: NSAMP, NSAMP_CURVED; with --quick the adhesive rows
 * take every 5th sample (401 / 201: the samples over the grid vertices and edges the paths cross at 1/8 of
 * their length, samples 250, 750, ..., and over the polygon's vertices, 125, 375, ..., stay samples). */
static int nsamp_flat = NSAMP, nsamp_curved = NSAMP_CURVED;

/* ---------------------------------------------------------------- geometry */

typedef struct geo {
    int dim, nv;
    double *x;          /* nv*dim rest positions; the probe's vertices are moved */
    int ncell;          /* plane cells (triangles in 3D, segments in 2D) */
    int nplane_v;       /* plane vertices come first */
    int *cell;          /* all cells (plane, then body), dim vertices each */
    int ncell_all;
    int nbody;          /* probe vertices (nplane_v .. nv-1); the tip is nplane_v */
    double w_point;     /* point probe: prescribed vertex weight (0 for a body) */
    int side;           /* curved surfaces: +1 probe outside the circle/cylinder, -1 inside; 0 flat */
    int *part;
    unsigned char *kin;
    ct_surface s;
} geo;

static void geo_free(geo *g)
{
    free(g->x);
    free(g->cell);
    free(g->part);
    free(g->kin);
    free(g->s.faces);
    free(g->s.edges);
    free(g->s.bverts);
    free(g->s.vert_area);
    free(g->s.edge_area);
    free(g->s.face_area);
}

/* deterministic jitter in [-1, 1) */
static double jitter(unsigned *state)
{
    *state = *state * 1664525u + 1013904223u;
    return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

static double tri_area(const double *a, const double *b, const double *c)
{
    double u[3], v[3];
    for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], v[k] = c[k] - a[k];
    double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    return 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
}

static int cmp_pair(const void *a, const void *b)
{
    const int *p = a, *q = b;
    if (p[0] != q[0]) return p[0] < q[0] ? -1 : 1;
    return (p[1] > q[1]) - (p[1] < q[1]);
}

/* The contact surface of all cells (ct_surface conventions, ct_mesh.h): areas as ct_surface_build
 * computes them; the point probe (a vertex without cells) gets the prescribed weight. */
static int build_surface(geo *g)
{
    ct_surface *s = &g->s;
    const int dim = g->dim, nv = g->nv, nc = g->ncell_all;
    memset(s, 0, sizeof *s);
    s->dim = dim;
    s->nv = nv;
    s->vert_area = calloc((size_t)nv, sizeof(double));
    s->bverts = malloc((size_t)nv * sizeof(int));
    if (!s->vert_area || !s->bverts) return -1;
    if (dim == 3) {
        s->nf = nc;
        s->faces = malloc((size_t)nc * 3 * sizeof(int));
        s->face_area = malloc((size_t)nc * sizeof(double));
        int *pairs = malloc((size_t)nc * 6 * sizeof(int));
        if (!s->faces || !s->face_area || !pairs) return -1;
        memcpy(s->faces, g->cell, (size_t)nc * 3 * sizeof(int));
        for (int f = 0; f < nc; ++f) {
            const int *F = g->cell + 3 * f;
            s->face_area[f] = tri_area(g->x + 3 * F[0], g->x + 3 * F[1], g->x + 3 * F[2]);
            for (int k = 0; k < 3; ++k) {
                int a = F[k], b = F[(k + 1) % 3];
                pairs[6 * f + 2 * k] = a < b ? a : b;
                pairs[6 * f + 2 * k + 1] = a < b ? b : a;
                s->vert_area[F[k]] += s->face_area[f] / 3.0;
            }
        }
        qsort(pairs, (size_t)nc * 3, 2 * sizeof(int), cmp_pair);
        int ne = 0;
        for (int i = 0; i < 3 * nc; ++i)
            if (ne == 0 || cmp_pair(pairs + 2 * i, pairs + 2 * (ne - 1)) != 0) {
                pairs[2 * ne] = pairs[2 * i];
                pairs[2 * ne + 1] = pairs[2 * i + 1];
                ne++;
            }
        s->ned = ne;
        s->edges = pairs;
        s->edge_area = calloc((size_t)ne, sizeof(double));
        if (!s->edge_area) return -1;
        for (int f = 0; f < nc; ++f)
            for (int k = 0; k < 3; ++k) {
                int a = g->cell[3 * f + k], b = g->cell[3 * f + (k + 1) % 3];
                int key[2] = {a < b ? a : b, a < b ? b : a};
                int *e = bsearch(key, pairs, (size_t)ne, 2 * sizeof(int), cmp_pair);
                s->edge_area[(e - pairs) / 2] += s->face_area[f] / 3.0;
            }
    } else {
        s->ned = nc;
        s->edges = malloc((size_t)nc * 2 * sizeof(int));
        s->edge_area = malloc((size_t)nc * sizeof(double));
        if (!s->edges || !s->edge_area) return -1;
        memcpy(s->edges, g->cell, (size_t)nc * 2 * sizeof(int));
        for (int e = 0; e < nc; ++e) {
            const double *a = g->x + 2 * g->cell[2 * e], *b = g->x + 2 * g->cell[2 * e + 1];
            s->edge_area[e] = hypot(b[0] - a[0], b[1] - a[1]);
            s->vert_area[g->cell[2 * e]] += 0.5 * s->edge_area[e];
            s->vert_area[g->cell[2 * e + 1]] += 0.5 * s->edge_area[e];
        }
    }
    if (g->w_point > 0.0) s->vert_area[g->nplane_v] = g->w_point;
    for (int v = 0; v < nv; ++v)
        if (s->vert_area[v] > 0.0) s->bverts[s->nbv++] = v;
    return 0;
}

/* Plane (3D: z = 0, NCELL² cells; 2D: y = 0, NCELL segments) plus the probe, tip at the origin
 * (moved along the path later). kind: 3D "grid", "alt", "jitter"; 2D "line", "jitter". */
static int build_geo(geo *g, int dim, const char *kind, int body)
{
    memset(g, 0, sizeof *g);
    g->dim = dim;
    const int n1 = NCELL + 1;
    const int jit = strcmp(kind, "jitter") == 0, alt = strcmp(kind, "alt") == 0;
    g->side = strcmp(kind, "circle") == 0 || strcmp(kind, "cyl") == 0       ? 1
              : strcmp(kind, "circlein") == 0 || strcmp(kind, "cylin") == 0 ? -1
                                                                          : 0;
    unsigned seed = 12345u;
    g->nplane_v = dim == 3 ? n1 * n1 : n1;
    g->ncell = dim == 3 ? 2 * NCELL * NCELL : NCELL;
    if (g->side) {
        g->nplane_v = dim == 3 ? NPOLY * (NZCELL + 1) : NPOLY;
        g->ncell = dim == 3 ? 2 * NPOLY * NZCELL : NPOLY;
    }
    g->nbody = body ? dim + 1 : 1;
    g->nv = g->nplane_v + g->nbody;
    g->ncell_all = g->ncell + (body ? dim + 1 : 0);
    g->x = calloc((size_t)g->nv * dim, sizeof(double));
    g->cell = malloc((size_t)g->ncell_all * dim * sizeof(int));
    g->part = malloc((size_t)g->nv * sizeof(int));
    g->kin = malloc((size_t)g->nv);
    if (!g->x || !g->cell || !g->part || !g->kin) return -1;
    for (int v = 0; v < g->nv; ++v) {
        g->part[v] = v < g->nplane_v ? 1 : 0; /* body 0: the probe; body 1: the plane */
        g->kin[v] = v < g->nplane_v;
    }
    int c = 0;
    if (g->side) {
        /* regular polygon inscribed in the circle of radius R: vertex k at the angle π/2 + (k + ½)Δ,
         * Δ = 2π/N (a facet middle at the top, θ = π/2); 3D: rings j = 0..NZCELL at z = j a */
        const double D = 2.0 * PI / NPOLY;
        const int nr = dim == 3 ? NZCELL + 1 : 1;
        for (int j = 0; j < nr; ++j)
            for (int k = 0; k < NPOLY; ++k) {
                double th = 0.5 * PI + (k + 0.5) * D, *X = g->x + dim * (j * NPOLY + k);
                X[0] = RCURV * cos(th), X[1] = RCURV * sin(th);
                if (dim == 3) X[2] = j * CELL;
            }
        if (dim == 3) {
            /* quad (k, j): v00 = (k, j), v10 = (k+1, j), v01 = (k, j+1), v11 = (k+1, j+1), split along
             * v00–v11 as the grid; (v00, v10, v11) has the normal e_θ × e_z = e_r (outward), reversed
             * for the concave side (the surface of a hole, its outward normal towards the axis) */
            for (int j = 0; j < NZCELL; ++j)
                for (int k = 0; k < NPOLY; ++k) {
                    int k1 = (k + 1) % NPOLY, v00 = j * NPOLY + k, v10 = j * NPOLY + k1;
                    int v01 = v00 + NPOLY, v11 = v10 + NPOLY;
                    int *C = g->cell + 3 * c;
                    C[0] = v00, C[1] = v10, C[2] = v11, C[3] = v00, C[4] = v11, C[5] = v01;
                    if (g->side < 0) C[1] = v11, C[2] = v10, C[4] = v01, C[5] = v11;
                    c += 2;
                }
        } else {
            /* segment (a, b) has the outward normal (dy, -dx)/|d|: (k, k+1) points away from the
             * centre (counter-clockwise), (k+1, k) towards it */
            for (int k = 0; k < NPOLY; ++k) {
                int k1 = (k + 1) % NPOLY;
                g->cell[2 * c] = g->side > 0 ? k : k1, g->cell[2 * c + 1] = g->side > 0 ? k1 : k, c++;
            }
        }
    } else if (dim == 3) {
        for (int j = 0; j < n1; ++j)
            for (int i = 0; i < n1; ++i) {
                double *X = g->x + 3 * (j * n1 + i);
                X[0] = i * CELL, X[1] = j * CELL;
                if (jit && i > 0 && i < NCELL && j > 0 && j < NCELL) {
                    X[0] += 0.2 * CELL * jitter(&seed);
                    X[1] += 0.2 * CELL * jitter(&seed);
                }
            }
        for (int j = 0; j < NCELL; ++j)
            for (int i = 0; i < NCELL; ++i) {
                int v00 = j * n1 + i, v10 = v00 + 1, v01 = v00 + n1, v11 = v01 + 1;
                int *C = g->cell + 3 * c;
                if (alt && (i + j) % 2) { /* split along v10–v01 (counter-clockwise from above) */
                    C[0] = v00, C[1] = v10, C[2] = v01, C[3] = v10, C[4] = v11, C[5] = v01;
                } else { /* split along v00–v11 */
                    C[0] = v00, C[1] = v10, C[2] = v11, C[3] = v00, C[4] = v11, C[5] = v01;
                }
                c += 2;
            }
    } else {
        for (int i = 0; i < n1; ++i) {
            g->x[2 * i] = i * CELL;
            if (jit && i > 0 && i < NCELL) g->x[2 * i] += 0.3 * CELL * jitter(&seed);
        }
        /* segment (i+1, i): outward normal (dy, -dx)/|d| = +y */
        for (int i = 0; i < NCELL; ++i) g->cell[2 * c] = i + 1, g->cell[2 * c + 1] = i, c++;
    }
    const int t = g->nplane_v; /* the tip; its position is the origin until moved */
    if (body && dim == 3) {
        for (int k = 0; k < 3; ++k) {
            double a = 2.0 * PI * k / 3.0 + PI / 2;
            double *X = g->x + 3 * (t + 1 + k);
            X[0] = TIP_R * cos(a), X[1] = TIP_R * sin(a), X[2] = TIP_H;
        }
        int F[4][3] = {{t + 1, t + 2, t + 3}, {t, t + 2, t + 1}, {t, t + 3, t + 2}, {t, t + 1, t + 3}};
        for (int f = 0; f < 4; ++f) {
            /* orient outward: the normal must point away from the centroid */
            const double *A = g->x + 3 * F[f][0], *B = g->x + 3 * F[f][1], *C = g->x + 3 * F[f][2];
            double u[3], v[3], m[3];
            for (int k = 0; k < 3; ++k) u[k] = B[k] - A[k], v[k] = C[k] - A[k], m[k] = A[k];
            double n[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
            double cen[3] = {0, 0, 0};
            for (int q = 0; q < 4; ++q)
                for (int k = 0; k < 3; ++k) cen[k] += 0.25 * g->x[3 * (t + q) + k];
            double dot = 0.0;
            for (int k = 0; k < 3; ++k) dot += n[k] * (m[k] - cen[k]);
            if (dot < 0) {
                int tmp = F[f][1];
                F[f][1] = F[f][2];
                F[f][2] = tmp;
            }
            memcpy(g->cell + 3 * c++, F[f], 3 * sizeof(int));
        }
    } else if (body) {
        /* counter-clockwise triangle tip, (R, H), (-R, H): segments (a, b) along the boundary */
        g->x[2 * (t + 1)] = TIP_R, g->x[2 * (t + 1) + 1] = TIP_H;
        g->x[2 * (t + 2)] = -TIP_R, g->x[2 * (t + 2) + 1] = TIP_H;
        int S[3][2] = {{t, t + 1}, {t + 1, t + 2}, {t + 2, t}};
        for (int e = 0; e < 3; ++e) memcpy(g->cell + 2 * c++, S[e], 2 * sizeof(int));
    } else {
        g->w_point = dim == 3 ? CELL * CELL : CELL; /* the weight of a plane vertex of the grid */
    }
    return build_surface(g);
}

/* Horizontal distance from p (dim-1 coordinates) to the nearest plane edge and vertex. */
static void feature_dist(const geo *g, const double *p, double *de, double *dv)
{
    *de = *dv = INFINITY;
    if (g->dim == 2) {
        for (int v = 0; v < g->nplane_v; ++v) *dv = fmin(*dv, fabs(p[0] - g->x[2 * v]));
        *de = 0.0;
        return;
    }
    for (int v = 0; v < g->nplane_v; ++v) *dv = fmin(*dv, hypot(p[0] - g->x[3 * v], p[1] - g->x[3 * v + 1]));
    for (int e = 0; e < g->s.ned; ++e) {
        int a = g->s.edges[2 * e], b = g->s.edges[2 * e + 1];
        if (a >= g->nplane_v || b >= g->nplane_v) continue;
        const double *A = g->x + 3 * a, *B = g->x + 3 * b;
        double ux = B[0] - A[0], uy = B[1] - A[1], wx = p[0] - A[0], wy = p[1] - A[1];
        double t = (ux * wx + uy * wy) / (ux * ux + uy * uy);
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        *de = fmin(*de, hypot(wx - t * ux, wy - t * uy));
    }
}

/* Curved surfaces: the foot q of the tip (where the ray from the axis through the tip meets the
 * polygon; 3D at the tip's z) and its distance to the nearest surface edge (3D; 2D: 0) and vertex. */
static void feature_dist_curved(const geo *g, double th, double z, double *de, double *dv)
{
    const double D = 2.0 * PI / NPOLY, m = round((th - 0.5 * PI) / D);
    const double r = RCURV * cos(0.5 * D) / cos(th - 0.5 * PI - m * D); /* facet middles at π/2 + mΔ */
    const double q[3] = {r * cos(th), r * sin(th), z};
    const int dim = g->dim;
    *dv = INFINITY;
    *de = dim == 2 ? 0.0 : INFINITY;
    for (int v = 0; v < g->nplane_v; ++v) {
        double d2 = 0.0;
        for (int k = 0; k < dim; ++k) d2 += (q[k] - g->x[dim * v + k]) * (q[k] - g->x[dim * v + k]);
        *dv = fmin(*dv, sqrt(d2));
    }
    if (dim == 2) return;
    for (int e = 0; e < g->s.ned; ++e) {
        int a = g->s.edges[2 * e], b = g->s.edges[2 * e + 1];
        if (a >= g->nplane_v || b >= g->nplane_v) continue;
        const double *A = g->x + 3 * a, *B = g->x + 3 * b;
        double u[3], w[3], uu = 0.0, uw = 0.0;
        for (int k = 0; k < 3; ++k) u[k] = B[k] - A[k], w[k] = q[k] - A[k], uu += u[k] * u[k], uw += u[k] * w[k];
        double t = uw / uu, d2 = 0.0;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        for (int k = 0; k < 3; ++k) d2 += (w[k] - t * u[k]) * (w[k] - t * u[k]);
        *de = fmin(*de, sqrt(d2));
    }
}

/* ---------------------------------------------------------------- one run */

/* A path: flat surfaces from p0 to p1 (horizontal, 2D x only); curved ones (curved = 1) the angle from
 * th0 to th1 on the arc of radius R + side h, 3D at the axial position z. */
typedef struct path {
    const char *name, *doc;
    double p0[2], p1[2];
    int curved;
    double th0, th1, z;
} path;

typedef struct sample {
    double s, px, py, E, ft_path, ft_abs, fn, fbt_path, fbt_abs, fbn, de, dv;
} sample;

/* The model table: one row per model configuration. A row is {label, model, flat, settings}: label
 * names the row in the output files (no '_'), model is a registered model, E_flat = flat[dim − 2] ×
 * w_v κ b(h) is the row's energy of the probe over the interior of a flat face (the normalisation of
 * E; on the curved surfaces the ideal energy, the same at the constant distance h), settings are
 * "name=value" pairs applied after the common dhat = DHAT and kappa = KAPPA (a choice by its name,
 * a bool true/false, "auto" where the parameter allows it). ipc rows: `quadrature = vertex` (the
 * weights of the README's formulas; the face-aware weights are lagged at begin_step, here once at
 * the start of the path, and this driver moves the probe along the whole path without a new step),
 * `kinematic_quadrature = two_sided` (the plane is kinematic; the formulas are those of the
 * symmetric two-sided quadrature whose plane-side walls, reason 1 of the README, this experiment
 * measures), `mu = 0`.
 * Adhesive rows (eps_c > 0 in the settings: Fang et al.'s normal adhesion a(d), on IPC distances in
 * ipc_adhesion, on the IMLS distance ψ in imls): E_flat = flat[dim − 2] × w_v (κ b(h) + a(h)), negative
 * when adhesion dominates; a row with hband > 0 also runs every path at the height hband·d̂ (files
 * <label>-h<hband>), in the band d̂ < h < d̂_a where only a acts. The law's Y is the smaller of the
 * probe's PROBE_YOUNG and the plane's (no material: young_obstacle, set explicitly by these rows). */
typedef struct model_row {
    const char *label, *model;
    double flat[2];
    const char *settings;
    double hband; /* 0, or a second probe height in units of d̂ (adhesive rows) */
} model_row;

#define IPC_ROW "quadrature=vertex kinematic_quadrature=two_sided mu=0"
#define PROBE_YOUNG 1e6 /* the probe's Young's modulus in the step context (the plane has none) */
#define ADH_EPS_C "2"   /* Y ε_c = 2e6 Pa = 20 κ: see README, "Adhesive rows" */
#define ADH_ROW "eps_c=" ADH_EPS_C " young_obstacle=1e6 dhat_p=0.001 dhat_a=0.002"
static const model_row ROWS[] = {
    {"ipc2020", "ipc", {0.5, 0.25}, "collision_set=ipc2020 " IPC_ROW, 0.0},
    {"convergent", "ipc", {0.5, 0.5}, "collision_set=convergent " IPC_ROW, 0.0},
    /* robust IMLS (defaults): the probe's vertices in the plane's field, the kinematic plane's side not
       integrated (weight 1 from the movable side) */
    {"imls", "imls", {1.0, 1.0}, "", 0.0},
    /* the adhesive potential: the same law (Y ε_c = ADH_YEPS, d̂_p = d̂, d̂_a = 2 d̂) on the convergent set
       (settings of the convergent row; the edge–edge family keeps the barrier alone) and on IMLS's ψ,
       at h = 0.5 d̂ (barrier + adhesion) and 1.5 d̂ (adhesion alone) */
    {"ipcadh", "ipc_adhesion", {0.5, 0.5}, "collision_set=convergent " IPC_ROW " " ADH_ROW, 1.5},
    {"imlsadh", "imls", {1.0, 1.0}, ADH_ROW, 1.5},
};
#define NROWS ((int)(sizeof ROWS / sizeof ROWS[0]))

static int set_param(ct_params *p, const char *name, double v)
{
    int i = ct_params_index(p, name);
    if (i < 0) return -1;
    p->value[i] = v;
    p->is_auto[i] = 0;
    return 0;
}

/* One "name=value" setting; -1 (with a message) for an unknown name or a value out of its spec. */
static int set_setting(ct_params *p, const char *model, const char *name, const char *val)
{
    int i = ct_params_index(p, name);
    if (i < 0) {
        fprintf(stderr, "energy_wall: model \"%s\" has no parameter \"%s\"\n", model, name);
        return -1;
    }
    const ct_param_spec *sp = &p->spec[i];
    if (strcmp(val, "auto") == 0 && (sp->flags & CT_PARAM_AUTO)) {
        p->is_auto[i] = 1;
        return 0;
    }
    double v = NAN;
    if (sp->type == CT_PARAM_CHOICE) {
        for (int k = 0; sp->choices && sp->choices[k]; ++k)
            if (strcmp(sp->choices[k], val) == 0) v = k;
    } else if (sp->type == CT_PARAM_BOOL) {
        v = strcmp(val, "true") == 0 ? 1.0 : strcmp(val, "false") == 0 ? 0.0 : NAN;
    } else {
        char *end;
        v = strtod(val, &end);
        if (end == val || *end) v = NAN;
    }
    char msg[160];
    if (isnan(v) || ct_param_check(sp, v, msg, sizeof msg)) {
        fprintf(stderr, "energy_wall: model \"%s\": bad value \"%s\" for \"%s\"\n", model, val, name);
        return -1;
    }
    return set_param(p, name, v);
}

/* The row's parameters: the model's defaults, dhat and kappa, then the row's settings. */
static int row_params(ct_params *prm, const ct_model_type *mt, const model_row *row)
{
    if (ct_params_init_defaults(prm, mt->params) != CT_OK) return -1;
    if (set_param(prm, "dhat", DHAT) || set_param(prm, "kappa", KAPPA)) {
        fprintf(stderr, "energy_wall: model \"%s\" lacks dhat or kappa\n", mt->name);
        return -1;
    }
    char buf[1024], *save = NULL;
    snprintf(buf, sizeof buf, "%s", row->settings);
    for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) {
            fprintf(stderr, "energy_wall: row %s: setting \"%s\" is not name=value\n", row->label, tok);
            return -1;
        }
        *eq = '\0';
        if (set_setting(prm, mt->name, tok, eq + 1)) return -1;
    }
    return 0;
}

/* The row's normal adhesion law (Y ε_c = 0 without adhesion): its eps_c, dhat_p, dhat_a (given
 * explicitly by the adhesive rows; auto: d̂, 2 d̂), adhesion_variant, and Y = min(PROBE_YOUNG,
 * young_obstacle) as the models take it for the probe–plane pair. -1 on a bad row. */
static int row_law(const ct_model_type *mt, const model_row *row, ct_adhesion_law *law)
{
    ct_params prm = {0};
    int rc = row_params(&prm, mt, row);
    memset(law, 0, sizeof *law);
    int ie = rc ? -1 : ct_params_index(&prm, "eps_c");
    if (ie >= 0 && prm.value[ie] > 0.0) {
        int ip = ct_params_index(&prm, "dhat_p"), ia = ct_params_index(&prm, "dhat_a");
        int iy = ct_params_index(&prm, "young_obstacle"), iv = ct_params_index(&prm, "adhesion_variant");
        double dp = prm.is_auto[ip] ? DHAT : prm.value[ip], da = prm.is_auto[ia] ? 2.0 * DHAT : prm.value[ia];
        double y = prm.is_auto[iy] ? PROBE_YOUNG : fmin(PROBE_YOUNG, prm.value[iy]);
        *law = ct_adhesion_law_make((int)prm.value[iv] == 1 ? CT_ADH_SQUARED : CT_ADH_DISTANCE, dp, da,
                                    y * prm.value[ie]);
    }
    ct_params_free(&prm);
    return rc;
}

/* Curved paths: the configuration with the tip at the angle th (3D at the height z along the axis) on
 * the arc of radius R + side h, the probe's body rotated so that its local "up" (the last axis) is the
 * normal n = side e_r (from the surface towards the probe): 2D (x, y) -> x u + y n with u = (n_y, -n_x),
 * 3D (x, y, z) -> x (e_z × n) + y e_z + z n (proper rotations: the faces keep their orientation). */
static void pose_curved(const geo *g, double th, double z, double *x, double *nrm)
{
    const int dim = g->dim, t = g->nplane_v;
    const double rho = RCURV + g->side * probe_h, c = cos(th), sn = sin(th);
    nrm[0] = g->side * c, nrm[1] = g->side * sn, nrm[2] = 0.0;
    memcpy(x, g->x, (size_t)g->nv * dim * sizeof(double));
    for (int v = t; v < g->nv; ++v) {
        const double *L = g->x + dim * v; /* local coordinates: the tip is at the origin of g->x */
        double *X = x + dim * v;
        if (dim == 2) {
            X[0] = rho * c + L[0] * nrm[1] + L[1] * nrm[0];
            X[1] = rho * sn - L[0] * nrm[0] + L[1] * nrm[1];
        } else {
            X[0] = rho * c - L[0] * nrm[1] + L[2] * nrm[0];
            X[1] = rho * sn + L[0] * nrm[0] + L[2] * nrm[1];
            X[2] = z + L[1];
        }
    }
}

static int run_path(const ct_model_type *mt, const model_row *row, geo *g, const path *P, sample *out)
{
    const int dim = g->dim, nv = g->nv, nd = nv * dim;
    ct_params prm = {0};
    if (row_params(&prm, mt, row)) {
        ct_params_free(&prm);
        return -1;
    }
    double *x0 = malloc((size_t)nd * sizeof(double)), *x = malloc((size_t)nd * sizeof(double));
    double *v0 = calloc((size_t)nd, sizeof(double)), *mass = malloc((size_t)nv * sizeof(double));
    double *grad = malloc((size_t)nd * sizeof(double));
    if (!x0 || !x || !v0 || !mass || !grad) return -1;
    /* probe at the start of the path, tip at height h */
    double L, dir[2] = {0.0, 0.0}, nrm[3] = {0.0, 0.0, 1.0};
    const double rho = RCURV + g->side * probe_h;
    const int t = g->nplane_v;
    if (P->curved) {
        L = rho * fabs(P->th1 - P->th0);
        pose_curved(g, P->th0, P->z, x0, nrm);
    } else {
        L = dim == 3 ? hypot(P->p1[0] - P->p0[0], P->p1[1] - P->p0[1]) : fabs(P->p1[0] - P->p0[0]);
        dir[0] = (P->p1[0] - P->p0[0]) / L, dir[1] = dim == 3 ? (P->p1[1] - P->p0[1]) / L : 0.0;
        memcpy(x0, g->x, (size_t)nd * sizeof(double));
        double shift[3] = {P->p0[0], dim == 3 ? P->p0[1] : probe_h, probe_h};
        for (int v = t; v < nv; ++v)
            for (int k = 0; k < dim; ++k) x0[dim * v + k] += shift[k];
    }
    for (int v = 0; v < nv; ++v) mass[v] = 1.0;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int v = 0; v < nv; ++v)
        for (int k = 0; k < dim; ++k) lo[k] = fmin(lo[k], x0[dim * v + k]), hi[k] = fmax(hi[k], x0[dim * v + k]);
    double diag = 0.0;
    for (int k = 0; k < dim; ++k) diag += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    const char *names[2] = {"probe", "plane"};
    double young[2] = {PROBE_YOUNG, NAN};
    ct_step_ctx ctx = {0};
    ctx.dim = dim;
    ctx.h = 0.01;
    ctx.nx = nv;
    ctx.x_rest = x0;
    ctx.x_prev = x0;
    ctx.v_prev = v0;
    ctx.mass = mass;
    ctx.vert_part = g->part;
    ctx.vert_kinematic = g->kin;
    ctx.nbodies = 2;
    ctx.part_names = names;
    ctx.part_young = young;
    ctx.surf = &g->s;
    ctx.bbox_diag = sqrt(diag);
    ctx.threads = 1;
    ct_diag dg;
    ct_diag_init(&dg);
    int rc = 0;
    ct_model *m = NULL;
    ct_status s = ct_model_create(&m, mt, &prm, &ctx, &dg);
    if (s == CT_OK) s = ct_model_begin_step(m, &ctx);
    const int ns = P->curved ? nsamp_curved : nsamp_flat;
    for (int i = 0; i < ns && s == CT_OK; ++i) {
        double sp = L * i / (ns - 1), tng[3] = {dir[0], dir[1], 0.0};
        if (P->curved) {
            const double th = P->th0 + (P->th1 - P->th0) * i / (ns - 1), sg = P->th1 > P->th0 ? 1.0 : -1.0;
            pose_curved(g, th, P->z, x, nrm);
            tng[0] = -sg * sin(th), tng[1] = sg * cos(th); /* the direction of motion, sg e_θ */
        } else {
            memcpy(x, x0, (size_t)nd * sizeof(double));
            for (int v = t; v < nv; ++v)
                for (int k = 0; k < dim - 1; ++k) x[dim * v + k] += sp * dir[k];
        }
        sample *o = &out[i];
        o->s = sp;
        o->px = x[dim * t];
        o->py = dim == 3 || P->curved ? x[dim * t + 1] : 0.0;
        memset(grad, 0, (size_t)nd * sizeof(double));
        s = ct_model_energy(m, &ctx, x, &o->E);
        if (s == CT_OK) s = ct_model_gradient(m, &ctx, x, grad);
        /* F = −∇E: on the tip, and summed over the probe's vertices (the force on the body) */
        double F[3] = {0, 0, 0}, Fb[3] = {0, 0, 0};
        for (int k = 0; k < dim; ++k) F[k] = -grad[dim * t + k];
        for (int v = t; v < nv; ++v)
            for (int k = 0; k < dim; ++k) Fb[k] -= grad[dim * v + k];
        if (P->curved) {
            /* normal n = side e_r, tangential = everything else (3D: also the axial part) */
            double fn = 0.0, fbn = 0.0, ftp = 0.0, fbtp = 0.0, ft2 = 0.0, fbt2 = 0.0;
            for (int k = 0; k < dim; ++k) fn += F[k] * nrm[k], fbn += Fb[k] * nrm[k];
            for (int k = 0; k < dim; ++k) {
                ftp += F[k] * tng[k], fbtp += Fb[k] * tng[k];
                ft2 += (F[k] - fn * nrm[k]) * (F[k] - fn * nrm[k]);
                fbt2 += (Fb[k] - fbn * nrm[k]) * (Fb[k] - fbn * nrm[k]);
            }
            o->fn = fn, o->fbn = fbn, o->ft_path = ftp, o->fbt_path = fbtp, o->ft_abs = sqrt(ft2),
            o->fbt_abs = sqrt(fbt2);
            feature_dist_curved(g, atan2(o->py, o->px), P->z, &o->de, &o->dv);
            continue;
        }
        const int nk = dim - 1; /* the normal is the last axis */
        o->fn = F[nk];
        o->fbn = Fb[nk];
        o->ft_path = F[0] * dir[0] + F[1] * dir[1] * (dim == 3);
        o->fbt_path = Fb[0] * dir[0] + Fb[1] * dir[1] * (dim == 3);
        o->ft_abs = dim == 3 ? hypot(F[0], F[1]) : fabs(F[0]);
        o->fbt_abs = dim == 3 ? hypot(Fb[0], Fb[1]) : fabs(Fb[0]);
        double p[2] = {o->px, o->py};
        feature_dist(g, p, &o->de, &o->dv);
    }
    if (s != CT_OK) {
        fprintf(stderr, "energy_wall: model %s (row %s) failed: %s %s\n", mt->name, row->label, ct_status_str(s),
                ct_diag_last(&dg));
        rc = -1;
    }
    ct_model_destroy(m);
    ct_diag_free(&dg);
    ct_params_free(&prm);
    free(x0);
    free(x);
    free(v0);
    free(mass);
    free(grad);
    return rc;
}

/* ---------------------------------------------------------------- output */

/* Walls: local maxima of E that stand out by more than 1e-6 |E_flat| over their ±d̂ neighbourhood
 * (the convergent set's round-off ripples are ~1e-16). Writes indices, returns the count. */
static int find_walls(const sample *o, int ns, double Eflat, int *idx, int cap)
{
    int n = 0;
    const double ds = o[1].s - o[0].s;
    const int win = (int)ceil(DHAT / ds);
    for (int i = 1; i < ns - 1; ++i) {
        if (!(o[i].E > o[i - 1].E && o[i].E >= o[i + 1].E)) continue;
        double lo = o[i].E;
        for (int j = i - win; j <= i + win; ++j)
            if (j >= 0 && j < ns) lo = fmin(lo, o[j].E);
        if (o[i].E - lo > 1e-6 * fabs(Eflat) && n < cap) idx[n++] = i;
    }
    return n;
}

static void write_mesh(const char *dir, const char *name, const geo *g)
{
    char fn[1024];
    snprintf(fn, sizeof fn, "%s/%s.mesh", dir, name);
    FILE *f = fopen(fn, "w");
    if (!f) return;
    fprintf(f, "# plane of energy_wall: dim nv ncell, then nv lines of coordinates (m), then ncell cells\n");
    fprintf(f, "%d %d %d\n", g->dim, g->nplane_v, g->ncell);
    for (int v = 0; v < g->nplane_v; ++v) {
        for (int k = 0; k < g->dim; ++k) fprintf(f, "%.17g ", g->x[g->dim * v + k]);
        fprintf(f, "\n");
    }
    for (int c = 0; c < g->ncell; ++c) {
        for (int k = 0; k < g->dim; ++k) fprintf(f, "%d ", g->cell[g->dim * c + k]);
        fprintf(f, "\n");
    }
    fclose(f);
}

/* The probe body: vertices relative to the tip (the first), cells with local indices. */
static void write_body(const char *dir, const geo *g)
{
    char fn[1024];
    snprintf(fn, sizeof fn, "%s/%dd_body.mesh", dir, g->dim);
    FILE *f = fopen(fn, "w");
    if (!f) return;
    const int t = g->nplane_v, nb = g->ncell_all - g->ncell;
    fprintf(f, "# probe body of energy_wall: dim nv ncell, vertices relative to the tip (m), cells (local)\n");
    fprintf(f, "%d %d %d\n", g->dim, g->nbody, nb);
    for (int v = t; v < g->nv; ++v) {
        for (int k = 0; k < g->dim; ++k) fprintf(f, "%.17g ", g->x[g->dim * v + k] - g->x[g->dim * t + k]);
        fprintf(f, "\n");
    }
    for (int c = g->ncell; c < g->ncell_all; ++c) {
        for (int k = 0; k < g->dim; ++k) fprintf(f, "%d ", g->cell[g->dim * c + k] - t);
        fprintf(f, "\n");
    }
    fclose(f);
}

static int write_dat(const char *dir, const char *name, const geo *g, const model_row *row, const path *P,
                     const sample *o, double Eflat, double wv, const ct_adhesion_law *law)
{
    char fn[1024];
    snprintf(fn, sizeof fn, "%s/%s.dat", dir, name);
    FILE *f = fopen(fn, "w");
    if (!f) {
        fprintf(stderr, "energy_wall: cannot write %s\n", fn);
        return -1;
    }
    if (g->side)
        fprintf(f,
                "# energy_wall (Du et al. 2023 Fig. 3): probe at height h %s a faceted %s (regular %d-gon inscribed "
                "in the circle of radius R%s), body rotated with the path (local up = the normal)\n",
                g->side > 0 ? "outside" : "inside", g->dim == 3 ? "cylinder along z" : "circle", NPOLY,
                g->dim == 3 ? ", NZCELL cells of a along z" : "");
    else
        fprintf(f, "# energy_wall (Du et al. 2023 Fig. 3): probe at height h over a flat %s\n",
                g->dim == 3 ? "triangulated plane z = 0" : "segmented line y = 0");
    fprintf(f, "# row %s: model %s, dhat kappa as below, %s\n", row->label, row->model, row->settings);
    fprintf(f, "# path %s: %s\n", P->name, P->doc);
    fprintf(f, "# dim %d dhat %.17g kappa %.17g h %.17g cell %.17g w_v %.17g E_flat %.17g probe %s", g->dim, DHAT,
            KAPPA, probe_h, CELL, wv, Eflat, g->w_point > 0 ? "point" : "body");
    if (g->side)
        fprintf(f, " R %.17g nseg %d side %d z %.17g th0 %.17g th1 %.17g", RCURV, NPOLY, g->side, P->z, P->th0,
                P->th1);
    if (law->y_eps > 0.0)
        fprintf(f, " yeps %.17g dhat_p %.17g dhat_a %.17g variant %s", law->y_eps, law->dp, law->da,
                law->variant == CT_ADH_SQUARED ? "squared" : "distance");
    if (law->y_eps > 0.0)
        fprintf(f,
                "\n# E_flat = %g * w_v * (kappa * b(h) + a(h)) (a: Fang et al.'s normal adhesion, Y eps_c = yeps; the "
                "tip's own term over a face interior; see README)%s\n",
                Eflat / (wv * (KAPPA * ct_barrier(probe_h, DHAT, NULL, NULL) + ct_adhesion(law, probe_h, NULL, NULL))),
                g->side ? "; on the curved surface the ideal energy (constant distance h from the smooth one)" : "");
    else
        fprintf(f, "\n# E_flat = %g * w_v * kappa * b(h) (the tip's own term over a face interior; see README)%s\n",
                Eflat / (wv * KAPPA * ct_barrier(probe_h, DHAT, NULL, NULL)),
                g->side ? "; on the curved surface the ideal energy (constant distance h from the smooth one)" : "");
    if (g->side)
        fprintf(f,
                "# columns: 1 s (m, arc length along the path)  2 px  3 py (m, tip position; 3D z = the header's z)\n"
                "#   4 E/E_flat  5 E (J)  6 Ft_path (N, force on the tip along the path)  7 |Ft| (N, tip, all but "
                "the normal component)\n"
                "#   8 Fn (N, tip, along the normal side*e_r)  9 Fbody_t_path  10 |Fbody_t|  11 Fbody_n (N, summed "
                "over the probe's vertices)\n"
                "#   12 distance from the tip's foot on the polygon (radial projection) to the nearest surface edge "
                "(m; 2D: 0)  13 to the nearest surface vertex (m)\n");
    else
        fprintf(f,
                "# columns: 1 s (m, along the path)  2 px  3 py (m, horizontal position of the tip; 2D: py = 0)\n"
                "#   4 E/E_flat  5 E (J)  6 Ft_path (N, force on the tip along the path)  7 |Ft| (N, tip, total "
                "tangential)\n"
                "#   8 Fn (N, tip, along the plane normal)  9 Fbody_t_path  10 |Fbody_t|  11 Fbody_n (N, summed over "
                "the probe's vertices)\n"
                "#   12 horizontal distance to the nearest plane edge (m; 2D: 0)  13 to the nearest plane vertex "
                "(m)\n");
    for (int i = 0; i < (P->curved ? nsamp_curved : nsamp_flat); ++i)
        fprintf(f, "%.10e %.10e %.10e %.17e %.17e %.10e %.10e %.10e %.10e %.10e %.10e %.6e %.6e\n", o[i].s, o[i].px,
                o[i].py, o[i].E / Eflat, o[i].E, o[i].ft_path, o[i].ft_abs, o[i].fn, o[i].fbt_path, o[i].fbt_abs,
                o[i].fbn, o[i].de, o[i].dv);
    fclose(f);
    return 0;
}

/* One summary line: extremes of E/E_flat, max |Ft|/|Fn| (tip; body: also the whole probe), the walls
 * (local maxima of E) and the feature under each (V vertex, E edge, within one sample spacing). */
static void summarize(const char *name, const sample *o, int ns, double Eflat)
{
    double emax = -INFINITY, emin = INFINITY, rt = 0.0, rb = 0.0;
    for (int i = 0; i < ns; ++i) {
        emax = fmax(emax, o[i].E / Eflat);
        emin = fmin(emin, o[i].E / Eflat);
        rt = fmax(rt, o[i].ft_abs / fabs(o[i].fn));
        rb = fmax(rb, o[i].fbt_abs / fabs(o[i].fbn));
    }
    int idx[256];
    int nw = find_walls(o, ns, Eflat, idx, 256);
    const double ds = o[1].s - o[0].s;
    int on_v = 0, on_e = 0;
    char where[4096] = "";
    size_t len = 0;
    for (int k = 0; k < nw; ++k) {
        const sample *w = &o[idx[k]];
        char tag = w->dv <= ds ? 'V' : w->de <= ds ? 'E' : '-';
        on_v += tag == 'V';
        on_e += tag == 'E';
        if (k < 8 && len < sizeof where - 64) {
            if (tag == '-')
                len += (size_t)snprintf(where + len, sizeof where - len, " %.2f(V@%.2f)", w->s / DHAT, w->dv / DHAT);
            else
                len += (size_t)snprintf(where + len, sizeof where - len, " %.2f%c", w->s / DHAT, tag);
        }
    }
    printf("%-36s %8.5f %8.5f  %9.3e %9.3e  %3d %3d %3d %s%s\n", name, emax, emin, rt, rb, nw, on_v, on_e, where,
           nw > 8 ? " ..." : "");
}

int main(int argc, char **argv)
{
    const int quick = argc == 3 && strcmp(argv[2], "--quick") == 0;
    if (argc != 2 && !quick) {
        fprintf(stderr, "usage: energy_wall OUTDIR [--quick]\n");
        return 2;
    }
    const char *dir = argv[1];
    mkdir(dir, 0777);
    const ct_model_type *mts[NROWS];
    ct_adhesion_law laws[NROWS];
    for (int k = 0; k < NROWS; ++k) {
        mts[k] = ct_model_find(ROWS[k].model);
        if (!mts[k] || strchr(ROWS[k].label, '_')) {
            fprintf(stderr, "energy_wall: row %s: %s\n", ROWS[k].label,
                    mts[k] ? "a label must not contain '_'" : "model not registered");
            return 1;
        }
        if (row_law(mts[k], &ROWS[k], &laws[k])) return 1;
    }
    const double a = CELL, c = 4 * CELL; /* paths run over the middle of the plane */
    /* paths over the middle of the plane, starting and ending half a cell away from grid lines */
    const path paths3[] = {
        {"xnear", "along x at y = 4a + 0.25 dhat (just off a grid line), x from 1.5a to 5.5a",
         {c - 2.5 * a, c + 0.25 * DHAT}, {c + 1.5 * a, c + 0.25 * DHAT}, 0, 0, 0, 0},
        {"xmid", "along x at y = 4a + 0.3a (crosses vertical edges and diagonals), x from 1.5a to 5.5a",
         {c - 2.5 * a, c + 0.3 * a}, {c + 1.5 * a, c + 0.3 * a}, 0, 0, 0, 0},
        {"diag", "along (1,-1) from (1.5a, 6.5a) to (5.5a, 2.5a), through the grid vertices (2a,6a) ... (5a,3a)",
         {c - 2.5 * a, c + 2.5 * a}, {c + 1.5 * a, c - 1.5 * a}, 0, 0, 0, 0},
    };
    const path paths2[] = {{"x", "along x from 1.5a to 5.5a", {c - 2.5 * a, 0}, {c + 1.5 * a, 0}, 0, 0, 0, 0}};
    /* curved: clockwise over the top from the facet middle at π/2 + 2Δ to the one at π/2 − 2Δ (the tip
     * moves in +x at the top), over the four vertices at π/2 ± Δ/2, π/2 ± 3Δ/2 (samples 125, 375, 625, 875) */
    const double D = 2.0 * PI / NPOLY;
    const path pathsc3[] = {
        {"ring", "around the axis at z = 2a + 0.25 dhat (just off a ring of vertices), theta from pi/2 + 2D to "
                 "pi/2 - 2D (D = 2 pi/N)",
         {0, 0}, {0, 0}, 1, 0.5 * PI + 2 * D, 0.5 * PI - 2 * D, 2 * a + 0.25 * DHAT},
        {"mid", "around the axis at z = 2a + 0.3a (crosses the axial edges and the diagonals), theta from pi/2 + 2D "
                "to pi/2 - 2D",
         {0, 0}, {0, 0}, 1, 0.5 * PI + 2 * D, 0.5 * PI - 2 * D, 2 * a + 0.3 * a},
    };
    const path pathsc2[] = {{"arc", "on the arc of radius R + side h, theta from pi/2 + 2D to pi/2 - 2D (D = 2 pi/N)",
                             {0, 0}, {0, 0}, 1, 0.5 * PI + 2 * D, 0.5 * PI - 2 * D, 0.0}};
    typedef struct surface {
        const char *name;
        const path *paths;
        int npaths;
    } surface;
    const surface surf3[] = {{"grid", paths3, 3}, {"alt", paths3, 3}, {"jitter", paths3, 3}, {"cyl", pathsc3, 2},
                             {"cylin", pathsc3, 2}};
    const surface surf2[] = {{"line", paths2, 1}, {"jitter", paths2, 1}, {"circle", pathsc2, 1},
                             {"circlein", pathsc2, 1}};
    sample *o = malloc(NSAMP * sizeof *o);
    if (!o) return 1;
    printf("energy_wall: dhat = %g m, h = %g m, kappa = %g Pa, cell a = %g m, %d samples per path; curved: %d-gon "
           "in R = %g m (sagitta %g m), %d samples per path\n",
           DHAT, HEIGHT, KAPPA, CELL, NSAMP, NPOLY, RCURV, RCURV * (1.0 - cos(PI / NPOLY)), NSAMP_CURVED);
    printf("walls: local maxima of E (> 1e-6 E_flat above their ±dhat surroundings); position s/dhat with the "
           "feature under it (V vertex, E edge, - none, within one sample spacing)\n");
    printf("%-36s %8s %8s  %9s %9s  %3s %3s %3s %s\n", "dim_surface_probe_path_row", "Emax/Ef", "Emin/Ef",
           "maxFt/Fn", "body", "nw", "onV", "onE", "walls (s/dhat)");
    int rc = 0;
    for (int dim = 3; dim >= 2 && !rc; --dim) {
        const surface *surfs = dim == 3 ? surf3 : surf2;
        int nsurf = dim == 3 ? 5 : 4;
        for (int pl = 0; pl < nsurf && !rc; ++pl)
            for (int body = 0; body < 2 && !rc; ++body) {
                geo g;
                if (build_geo(&g, dim, surfs[pl].name, body)) {
                    fprintf(stderr, "energy_wall: out of memory\n");
                    return 1;
                }
                char name[256];
                if (!body) {
                    snprintf(name, sizeof name, "%dd_%s", dim, surfs[pl].name);
                    write_mesh(dir, name, &g);
                } else if (pl == 0) {
                    write_body(dir, &g);
                }
                const double wv = g.s.vert_area[g.nplane_v];
                for (int pa = 0; pa < surfs[pl].npaths && !rc; ++pa)
                    for (int k = 0; k < NROWS && !rc; ++k)
                        for (int hb = 0; hb < (ROWS[k].hband > 0.0 ? 2 : 1) && !rc; ++hb) {
                            const path *P = &surfs[pl].paths[pa];
                            const ct_adhesion_law *law = &laws[k];
                            probe_h = hb ? ROWS[k].hband * DHAT : HEIGHT;
                            nsamp_flat = quick && law->y_eps > 0.0 ? (NSAMP - 1) / 5 + 1 : NSAMP;
                            nsamp_curved = quick && law->y_eps > 0.0 ? (NSAMP_CURVED - 1) / 5 + 1 : NSAMP_CURVED;
                            double Eflat = ROWS[k].flat[dim - 2] * wv * KAPPA * ct_barrier(HEIGHT, DHAT, NULL, NULL);
                            if (law->y_eps > 0.0)
                                Eflat = ROWS[k].flat[dim - 2] * wv *
                                        (KAPPA * ct_barrier(probe_h, DHAT, NULL, NULL) +
                                         ct_adhesion(law, probe_h, NULL, NULL));
                            char lab[64];
                            if (hb)
                                snprintf(lab, sizeof lab, "%s-h%g", ROWS[k].label, ROWS[k].hband);
                            else
                                snprintf(lab, sizeof lab, "%s", ROWS[k].label);
                            snprintf(name, sizeof name, "%dd_%s_%s_%s_%s", dim, surfs[pl].name,
                                     body ? "body" : "point", P->name, lab);
                            if (run_path(mts[k], &ROWS[k], &g, P, o) ||
                                write_dat(dir, name, &g, &ROWS[k], P, o, Eflat, wv, law))
                                rc = 1;
                            else
                                summarize(name, o, P->curved ? nsamp_curved : nsamp_flat, Eflat);
                        }
                geo_free(&g);
            }
    }
    free(o);
    return rc;
}
