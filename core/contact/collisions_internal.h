/* collisions_internal.h — what the files of the collision sets share (private to core/contact):
 *   contact_mesh.c        the surface topology of ct_contact_mesh;
 *   collisions_build.c    the collision set (candidates → merged terms);
 *   collisions_eval.c     distances, energies and gradients of the terms;
 *   collisions_hessian.c  the PSD-projected Hessians of the terms.
 * The public API is ct_collisions.h. */
#ifndef CT_COLLISIONS_INTERNAL_H
#define CT_COLLISIONS_INTERNAL_H

#include "contactlab/ct_collisions.h"
#include "ee_cross.h"

#include <stddef.h>

/* Position of vertex v in x (dim coordinates per vertex). */
static inline const double *X(const double *x, int dim, int v) { return x + (size_t)dim * (size_t)v; }

/* qsort comparator of ints, ascending. */
static inline int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* The edge–edge mollifier m of collision c at x with its gradient gm in the EE stencil (12
 * entries) when non-NULL; 1 for other kinds and unmollified edge–edge terms (gm then untouched).
 * (Its Hessian is formed with the term's, collisions_hessian.c.) */
double ct_collision_mollifier(const ct_collision *c, const double *x, double *gm);
/* Its value alone, inline (ee_cross.h; the same bits), for the loops that test every term. */
static inline double ct_collision_mollifier_value(const ct_collision *c, const double *x)
{
    if (c->kind != CT_COL_EE || !(c->eps_x > 0)) return 1.0;
    const int *v = c->v;
    return ee_mollifier_of(ee_cross2_grad(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), NULL), c->eps_x,
                           NULL, NULL);
}

/* Contact directions at the lag positions cm->x_lag (contact_mesh.c), unit, NaN if degenerate:
 * n = (a − b)/|a − b| (ct_unit_diff(b, a) is its negative bit for bit); vertex p against edge e
 * (any dim) and against face f (3D): from the closest feature of e / f, classified at the lag,
 * towards p; edge ea against edge eb: from eb's closest point towards ea's. One routine per
 * feature: pairs that share their closest feature at the lag get the same bits. */
void ct_unit_diff(int dim, const double *a, const double *b, double *n);
void ct_lag_dir_pe(const ct_contact_mesh *cm, int p, int e, double *n);
void ct_lag_dir_pt(const ct_contact_mesh *cm, int p, int f, double *n);
void ct_lag_dir_ee(const ct_contact_mesh *cm, int ea, int eb, double *n);
/* The lagged face-aware weight of vertex v (edge e) against participant part (for its lagged
 * contact direction, computed by ct_contact_mesh_lag), NULL if the lag has none. */
const double *ct_lag_vertex_weight(const ct_contact_mesh *cm, int v, int part);
const double *ct_lag_edge_weight(const ct_contact_mesh *cm, int e, int part);

#endif
