/* assemble.h — the Newton matrix on the free dofs (internal to the core). */
#ifndef CT_ASSEMBLE_H
#define CT_ASSEMBLE_H

#include "contactlab/ct_sim.h"

/* Build the fixed part of the pattern (mass + elasticity) and the gather lists. */
ct_status ct_assembly_build(ct_assembly *as, const ct_sim *s, ct_diag *diag);
void ct_assembly_free(ct_assembly *as);

/* A = w_mass M_q + w_el K_elastic(q) + w_c J^T Hc J on the free dofs (upper triangle).
 * Hc holds the model's Hessian triplets in full-space dofs (may be NULL). Entries of Hc
 * outside the current pattern grow the pattern (as->pattern_changed is set).
 * *t_local receives the seconds spent in local element Hessians + PSD projection, *t_contact
 * those spent mapping Hc into the matrix (pattern growth included); either may be NULL. */
ct_status ct_assembly_fill(ct_assembly *as, const ct_sim *s, const double *q, double w_mass, double w_el,
                           const ct_triplets *Hc, double w_c, int project, double *t_local, double *t_contact,
                           ct_diag *diag);

#endif
