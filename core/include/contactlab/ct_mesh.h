/* ct_mesh.h — simplicial meshes (2D triangles, 3D tetrahedra), surfaces, generators, readers.
 *
 * A ct_mesh is either volumetric (ne > 0: triangles in 2D, tetrahedra in 3D) or a
 * surface only (ne == 0, nsurf > 0: segments in 2D, triangles in 3D), e.g. an OBJ file
 * or a 2D polyline used as a kinematic obstacle. Indices are 0-based. Coordinates are
 * stored interleaved: X[i*dim + c].
 * layer: fem */
#ifndef CT_MESH_H
#define CT_MESH_H

#include "ct_status.h"

typedef struct ct_mesh {
    int dim;     /* 2 or 3 */
    int nv;      /* number of vertices */
    double *X;   /* nv*dim rest positions */
    int ne;      /* number of elements (0 for a surface-only mesh) */
    int *elem;   /* ne*(dim+1) vertex indices */
    int nsurf;   /* surface-only meshes: number of surface cells (segments in 2D, triangles in 3D) */
    int *surf;   /* nsurf*dim vertex indices */
} ct_mesh;

/* Boundary of a mesh, for contact. For a volumetric mesh it is extracted from the
 * elements (faces/segments that belong to exactly one element, oriented outward);
 * for a surface-only mesh it is the given cells.
 *
 * Areas (for area-weighted contact; SI units m^2 in 3D, m in 2D), at the rest positions:
 *   3D: face_area[f] = triangle area; vert_area[v] = 1/3 of the incident face areas;
 *       edge_area[e] = 1/3 of the areas of the faces incident to the edge.
 *   2D: edge_area[e] = segment length; vert_area[v] = 1/2 of the incident segment lengths.
 * Hence sum(vert_area) = sum(face_area) (3D) or sum(edge_area) (2D), and in 3D
 * sum(edge_area) = sum(face_area).
 * vert_area counts ALL the incident faces: a vertex on the rim of a flat face also carries 1/3
 * of its side faces, so a face in full contact weighted by vert_area carries (1 + 2t/L) x its
 * area (t/L: the height of the side faces' first row over the face's size). The contact models
 * weight a vertex by the area it presents to the partner instead (the face-aware quadrature of
 * ct_collisions.h, from face_area and the faces' normals); vert_area is their "vertex"
 * quadrature and the base of its floor. */
typedef struct ct_surface {
    int dim;
    int nv;          /* size of vert_area: the mesh's vertex count */
    int nf;          /* 3D: boundary triangles; 2D: 0 */
    int *faces;      /* nf*3, counter-clockwise seen from outside (outward normal by right-hand rule) */
    int ned;         /* 3D: unique edges of the boundary faces; 2D: boundary segments */
    int *edges;      /* ned*2; 2D: (a,b) such that the outward normal is (b-a) rotated by -90 deg,
                        i.e. n = (dy, -dx)/|d|; 3D: a < b */
    int nbv;         /* number of boundary vertices */
    int *bverts;     /* nbv boundary vertex indices, increasing */
    double *vert_area; /* nv entries, 0 for interior vertices */
    double *edge_area; /* ned */
    double *face_area; /* nf */
} ct_surface;

void ct_mesh_init(ct_mesh *m);
void ct_mesh_free(ct_mesh *m);
ct_status ct_mesh_copy(ct_mesh *dst, const ct_mesh *src);

/* Signed volume (3D) or area (2D) of element e at positions X (layout as ct_mesh.X).
 * Positive for the orientation convention used everywhere in contactlab:
 * 2D counter-clockwise triangles, 3D det[x1-x0, x2-x0, x3-x0] > 0. */
double ct_mesh_elem_volume(const ct_mesh *m, const double *X, int e);

/* Check a mesh: finite coordinates, indices in range, no inverted or degenerate
 * element (|volume| <= 1e-12 * (bounding-box diagonal)^dim counts as degenerate),
 * at least one element or surface cell. `what` names the mesh in messages
 * (e.g. "scene.json: /bodies/0/mesh" or "box.msh"). Reports every problem found
 * (up to a cap) and returns CT_EINPUT if any. */
ct_status ct_mesh_validate(const ct_mesh *m, const char *what, ct_diag *diag);

/* Extract the boundary (see ct_surface). */
ct_status ct_surface_build(ct_surface *s, const ct_mesh *m, ct_diag *diag);
void ct_surface_free(ct_surface *s);

/* Axis-aligned bounding box of the rest positions: lo[dim], hi[dim]. */
void ct_mesh_bbox(const ct_mesh *m, double *lo, double *hi);

/* ---- generators (all produce positively oriented elements) ---- */

/* 2D rectangle [origin, origin+size] split into nx*ny cells, each cut into 2 triangles
 * (alternating diagonals so the mesh has no preferred direction). */
ct_status ct_mesh_rect(ct_mesh *m, const double origin[2], const double size[2], int nx, int ny);

/* 3D box [origin, origin+size] with cells[0]*cells[1]*cells[2] hexahedral cells,
 * each cut into 6 tetrahedra (Freudenthal/Kuhn subdivision, conforming). */
ct_status ct_mesh_box(ct_mesh *m, const double origin[3], const double size[3], const int cells[3]);

/* 2D polyline through npts points (surface-only mesh of npts-1 segments; closed adds one). */
ct_status ct_mesh_polyline(ct_mesh *m, const double *pts, int npts, int closed);

/* 2D circular arc: centre c, radius r, angles a0..a1 (radians), nseg segments
 * (surface-only mesh). */
ct_status ct_mesh_arc(ct_mesh *m, const double c[2], double r, double a0, double a1, int nseg);

/* ---- readers: errors name the file and line ("box.msh:17: ...") ---- */

/* Gmsh ASCII .msh, format 2.x or 4.x. dim = 3: tetrahedra become elements (if there are
 * none, triangles make a surface-only mesh); dim = 2: triangles become elements
 * (z must be 0), otherwise line segments make a surface-only mesh.
 * Unused vertices are dropped and the rest renumbered. */
ct_status ct_mesh_read_gmsh(ct_mesh *m, const char *path, int dim, ct_diag *diag);

/* Wavefront OBJ surface ("v x y z", "f a b c" with optional /vt/vn, polygons fan-split,
 * negative indices relative). Produces a surface-only 3D mesh. */
ct_status ct_mesh_read_obj(ct_mesh *m, const char *path, ct_diag *diag);

/* Dispatch on the extension (.msh or .obj). */
ct_status ct_mesh_read(ct_mesh *m, const char *path, int dim, ct_diag *diag);

#endif
