/* ct_material.h — hyperelastic materials (2D and 3D) and the per-element elastic energy.
 *
 * Matrices are dim x dim, stored column-major as a flat array (F[i + dim*j] = F_ij);
 * vec(F) stacks the columns, and dPdF is the (dim*dim) x (dim*dim) matrix
 * d vec(P) / d vec(F), column-major too. 2D is plane strain (energies per unit thickness).
 * layer: fem */
#ifndef CT_MATERIAL_H
#define CT_MATERIAL_H

#include "ct_psd.h"
#include "ct_status.h"

#define CT_MATERIAL_LIST(X)                                  \
    X(CT_MAT_NEO_HOOKEAN, "neo_hookean")         /* stable neo-Hookean (Smith et al. 2018) */ \
    X(CT_MAT_FIXED_COROTATED, "fixed_corotated") /* Stomakhin et al. 2012 */                   \
    X(CT_MAT_LINEAR_COROTATED, "linear_corotated")                                            \
    X(CT_MAT_STVK, "stvk")                       /* Saint Venant-Kirchhoff */

typedef enum {
#define CT_X_ENUM(k, n) k,
    CT_MATERIAL_LIST(CT_X_ENUM)
#undef CT_X_ENUM
        CT_MAT_COUNT
} ct_material_kind;

typedef struct ct_material {
    ct_material_kind kind;
    double E, nu, density; /* Young's modulus (Pa), Poisson ratio, density (kg/m^3; kg/m^2 in 2D) */
    double mu, lambda;     /* Lame parameters derived from E, nu */
} ct_material;

const char *ct_material_name(ct_material_kind k);
/* Returns 0 and sets *k when `name` is known, -1 otherwise. */
int ct_material_from_name(const char *name, ct_material_kind *k);

/* Fill m; E > 0, -1 < nu < 0.5, density > 0, else CT_EINPUT with a message. */
ct_status ct_material_init(ct_material *m, ct_material_kind kind, double E, double nu,
                           double density, ct_diag *diag);

/* Energy density Psi(F) (J/m^3). Returns +INFINITY where the energy is undefined
 * (det F <= 0 for energies that need it) so a line search rejects the point. */
double ct_material_psi(const ct_material *m, int dim, const double *F);
/* First Piola-Kirchhoff stress P = dPsi/dF. */
void ct_material_pk1(const ct_material *m, int dim, const double *F, double *P);
/* dP/dF; with project != 0 the result is projected to the nearest PSD matrix
 * (analytic eigensystems where known, LAPACKE dsyevd otherwise). */
ct_status ct_material_dpdf(const ct_material *m, int dim, const double *F, double *dPdF, int project);

/* (The PSD projection of a symmetric block, ct_psd_project, is in ct_psd.h, included here for
 * the callers that found it in this header.) */

/* ---- elastic energy of a set of simplicial elements ----
 *
 * Elements index a position vector y (y[v*dim + c]); in `full` mode y = x, in the
 * embedded mode y = q (the coarse mesh). Rest shape: DmInv = inverse of
 * [X1-X0, ..., Xd-X0]; vol is the element's weight (its rest volume, or the fine volume
 * gathered into it by the embedding). F = Ds * DmInv. */
typedef struct ct_elastic {
    int dim;
    int ne;
    int *elem;      /* ne*(dim+1) indices into y (owned) */
    double *DmInv;  /* ne*dim*dim (owned) */
    double *vol;    /* ne (owned) */
    int *mat;       /* ne: index into mats (owned) */
    ct_material *mats; /* nmat (owned copy) */
    double *gbuf;   /* ne*dim*(dim+1) scratch for per-element gradients (owned) */
    int nmat;
} ct_elastic;

void ct_elastic_init(ct_elastic *el);
void ct_elastic_free(ct_elastic *el);

/* Append elements of one body. `elem` indexes `Y` (rest positions, layout y),
 * `index_offset` is added to every index stored; vol_override (may be NULL) replaces the
 * rest volume per element. Inverted/degenerate rest elements give CT_EINVERTED. */
ct_status ct_elastic_add(ct_elastic *el, int dim, int ne, const int *elem, const double *Y,
                         int index_offset, const double *vol_override, const ct_material *mat,
                         ct_diag *diag);

/* Deformation gradient of element e for positions y. */
void ct_elastic_F(const ct_elastic *el, int e, const double *y, double *F);

/* Total elastic energy (J). +INFINITY if some element is inverted for a material that
 * forbids it. Deterministic OpenMP reduction (per-thread partial sums in fixed order). */
double ct_elastic_energy(const ct_elastic *el, const double *y);
/* The size of the terms of the elements' energy densities near F = I: sum over elements of
 * vol (|mu| + |lambda|) dim (J). A neo-Hookean element's energy, mu/2 (I1 - dim) - mu log J + ...,
 * cancels terms of that size, so its round-off is ~eps times this however small the energy
 * (for E = 1e9 Pa, 1e-9 J per 0.016 m^3 element). */
double ct_elastic_term_scale(const ct_elastic *el);

/* g += dE/dy. Deterministic with any number of threads. */
void ct_elastic_gradient(const ct_elastic *el, const double *y, double *g);

/* Local Hessians: Hloc[e*nd*nd ...], nd = dim*(dim+1), column-major, dofs ordered
 * (vertex 0 comps, vertex 1 comps, ...). project != 0: PSD-projected per element. */
ct_status ct_elastic_hessian_local(const ct_elastic *el, const double *y, double *Hloc, int project);

#endif
