/* assemble.h — the Newton matrix on the free dofs (private to the core: sim/ and white-box tests). */
#ifndef CT_ASSEMBLE_H
#define CT_ASSEMBLE_H

#include "contactlab/ct_sim.h"

/* Assembly of the Newton matrix on the free dofs (upper triangle). */
typedef struct ct_assembly {
    int ndof, nfree;
    int *free_index;            /* ndof -> free index or -1 */
    int *free_dof;              /* nfree -> dof */
    ct_csc A;                   /* current pattern and values */
    int nbase;                  /* pattern entries of mass + elasticity */
    int *base_slot;             /* nbase -> slot in A */
    double *base_mass;          /* nbase: M_q values */
    int *gptr, *gsrc;           /* base entry -> sources in Hloc */
    double *Hloc;               /* local elastic Hessians */
    int pattern_changed;        /* since the last factorization */
    ct_triplets tq;             /* scratch: model triplets mapped to q */
    ct_triplets hc;             /* scratch: the model's Hessian triplets (kept across steps) */
    int *xfree;                 /* full-space dof -> free index (-1 fixed, -2 through J); lazily built */
    /* Slot cache of the model's Hessian triplets (assemble_slots.c): the (row, col) sequence of the
     * last Hc mapped through xfree alone (no triplet through J) and, per triplet, its slot in A
     * (-1: skipped, a fixed dof or the lower triangle). Valid while cm_valid; pattern growth
     * moves the slots along, a rebuild clears everything. cm_calls counts the Hc mapped this
     * way, cm_hits those whose sequence equalled the recorded one (no lookups); of the others'
     * triplets, cm_reused took the slot of an equal chunk of the recorded sequence, and the
     * lookups of the rest needed cm_searches binary searches (counts over all calls). cm_aux:
     * the cache's scratch (the next sequence, chunk tables; private to assemble_slots.c). */
    int *cm_row, *cm_col, *cm_slot;
    size_t cm_n, cm_cap;
    int cm_valid;
    long cm_calls, cm_hits, cm_reused, cm_searches;
    void *cm_aux;
} ct_assembly;

/* Build the fixed part of the pattern (mass + elasticity) and the gather lists. */
ct_status ct_assembly_build(ct_assembly *as, const ct_sim *s, ct_diag *diag);
void ct_assembly_free(ct_assembly *as);

/* A = w_mass M_q + w_el K_elastic(q) + w_c J^T Hc J on the free dofs (upper triangle).
 * Hc holds the model's Hessian triplets in full-space dofs (may be NULL; with Hc->rows_lazy
 * its rows are written here when the mapping needs them, see ct_sparse.h). Entries of Hc
 * outside the current pattern grow the pattern (as->pattern_changed is set).
 * *t_local receives the seconds spent in local element Hessians + PSD projection, *t_contact
 * those spent mapping Hc into the matrix (pattern growth included); either may be NULL. */
ct_status ct_assembly_fill(ct_assembly *as, const ct_sim *s, const double *q, double w_mass, double w_el,
                           ct_triplets *Hc, double w_c, int project, double *t_local, double *t_contact,
                           ct_diag *diag);

#endif
