/* ct_intersect.h — exact intersection tests: the verifier of DESIGN §9.
 *
 * Independent of the barrier and distance code: orientation predicates are evaluated
 * exactly (floating-point expansion arithmetic behind a static filter), so the answer does
 * not depend on round-off. 2D: segment–segment; 3D: segment (edge) – triangle. Touching
 * (a shared point, zero distance) counts as an intersection.
 * layer: contact */
#ifndef CT_INTERSECT_H
#define CT_INTERSECT_H

#include "ct_mesh.h"
#include "ct_status.h"

/* Sign (-1, 0, +1) of det[b-a, c-a] (2D) / det[b-a, c-a, d-a] (3D), exact. */
int ct_orient2d(const double *a, const double *b, const double *c);
int ct_orient3d(const double *a, const double *b, const double *c, const double *d);

/* Closed segments a0–a1 and b0–b1 in 2D share at least one point. Exact. */
int ct_segments_intersect_2d(const double *a0, const double *a1, const double *b0, const double *b1);
/* Closed segment a0–a1 and closed triangle t0 t1 t2 in 3D share at least one point. Exact
 * (coplanar cases included). */
int ct_segment_triangle_intersect(const double *a0, const double *a1, const double *t0,
                                  const double *t1, const double *t2);

/* One intersecting pair of surface primitives: 3D edge index (into s->edges) and face
 * index (into s->faces); 2D two segment indices (into s->edges), a < b. */
typedef struct ct_intersection {
    int a, b;
} ct_intersection;

/* Count every intersecting pair of the surface s at positions x (nv*dim), skipping pairs
 * that share a vertex. BVH-accelerated (no O(n²) loop). Up to `cap` pairs are written to
 * out (may be NULL), in increasing (a, b) order. Returns the count (≥ 0) or -1 on
 * allocation failure. */
long ct_surface_intersections(const ct_surface *s, const double *x, int threads,
                              ct_intersection *out, long cap);

#endif
