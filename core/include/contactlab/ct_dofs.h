/* ct_dofs.h — reduced coordinates: x = J q + x0 (Du, Yu et al. 2024, eq. 13-17).
 *
 * x are the full-space vertex positions every energy and every contact model sees;
 * q are the unknowns. J is stored at vertex level: full-space vertex k depends on the
 * q-vertices jcol[jptr[k] .. jptr[k+1]) with weights jw[...]; the same weight applies to
 * each Cartesian component. For an ordinary ("full") body J is the identity block; for an
 * "embedded" body each fine vertex is a barycentric combination of the vertices of the
 * coarse element that contains it (nearest element, extrapolated, if it lies outside).
 * layer: fem */
#ifndef CT_DOFS_H
#define CT_DOFS_H

#include "ct_mesh.h"
#include "ct_status.h"

typedef struct ct_dofs {
    int dim;
    int nx, nq;        /* full-space and reduced vertex counts */
    int *jptr;         /* nx+1 */
    int *jcol;         /* jptr[nx] */
    double *jw;        /* jptr[nx] */
    double *x0;        /* nx*dim offset (round-off correction so that J Q_rest + x0 = X_rest) */
    int identity;      /* 1 when J = I and x0 = 0 (the core skips the mapping then) */
} ct_dofs;

void ct_dofs_init(ct_dofs *d, int dim);
void ct_dofs_free(ct_dofs *d);

/* Append an identity block: nv vertices whose x-index is d->nx + i and q-index d->nq + i. */
ct_status ct_dofs_add_full(ct_dofs *d, int nv);

/* Append an embedded body: fine rest positions Xf (nfine vertices) located in the coarse
 * mesh (rest positions and elements in `coarse`). Fine vertices that coincide with a
 * coarse vertex (within 1e-12 of the bounding-box diagonal) get the exact weight 1.
 * Also returns, per coarse element, the fine volume gathered into it:
 * vol_gathered[e] = sum of the volumes of the fine elements whose centroid lies in e
 * (fine_elems may be NULL for a surface-only fine mesh: then the coarse volumes are used).
 * A fine vertex outside the coarse mesh is extrapolated from its nearest element; when its
 * smallest barycentric weight is below -outside_tol that is an input error (CT_EINPUT: the
 * embedding would not be what the scene means), naming the count and the worst weight.
 * `what` names the body in messages. */
ct_status ct_dofs_add_embedded(ct_dofs *d, const double *Xf, int nfine, const ct_mesh *fine,
                               const ct_mesh *coarse, double *vol_gathered, double outside_tol,
                               const char *what, ct_diag *diag);

/* Locate point p in a simplicial mesh: element index and barycentric weights w[dim+1]
 * (the nearest element, by the most negative weight, if p lies outside every element).
 * Uses a uniform bucket grid built on first use; `ct_locator` caches it. */
typedef struct ct_locator {
    const ct_mesh *m;
    int dim;
    double lo[3], cell;
    int n[3];
    int *start, *items; /* bucket -> elements */
} ct_locator;

ct_status ct_locator_build(ct_locator *L, const ct_mesh *m);
void ct_locator_free(ct_locator *L);
int ct_locator_find(const ct_locator *L, const double *p, double *w);

/* x = J q + x0 */
void ct_dofs_map(const ct_dofs *d, const double *q, double *x);
/* v_x = J v_q (no offset) */
void ct_dofs_map_lin(const ct_dofs *d, const double *vq, double *vx);
/* gq += J^T gx */
void ct_dofs_pull(const ct_dofs *d, const double *gx, double *gq);

#endif
