/* select.h — private to core/sim: checked selections (select.c). */
#ifndef CT_SIM_SELECT_H
#define CT_SIM_SELECT_H

#include "contactlab/ct_sim.h"

/* ct_sim_select, then the check that the selection (at JSON pointer `where` of the scene) names
 * only vertices its body's mesh has (on_q: the unknowns' mesh, the coarse one of an embedded
 * body) and, unless the selector says "allow_empty", selects at least one: an input error naming
 * the scene file and the path otherwise. On failure *idx is NULL. */
ct_status ct_sim_select_checked(const ct_sim *s, const ct_selector *sel, int on_q, const char *where, int **idx,
                                int *n, ct_diag *diag);

#endif
