/* ct_linsolve.h — sparse symmetric positive definite solves with CHOLMOD.
 *
 * The symbolic analysis (fill-reducing ordering, elimination tree) is computed once and
 * reused while the sparsity pattern stays the same; the caller says when it changed.
 * Analyses and numeric factorizations are counted so runs can log them.
 * layer: base */
#ifndef CT_LINSOLVE_H
#define CT_LINSOLVE_H

#include "ct_sparse.h"
#include "ct_status.h"

typedef struct ct_linsolve ct_linsolve;

ct_status ct_linsolve_create(ct_linsolve **ls, ct_diag *diag);
void ct_linsolve_destroy(ct_linsolve *ls);

/* Factor A (symmetric, upper triangle stored). `pattern_changed` forces a new symbolic
 * analysis (it is also done on the first call or when the dimension changes). A matrix
 * that is not positive definite gives CT_ENOTPD with the failing column. */
ct_status ct_linsolve_factor(ct_linsolve *ls, const ct_csc *A, int pattern_changed, ct_diag *diag);

/* Solve A x = b with the last factorization (x and b may alias). */
ct_status ct_linsolve_solve(ct_linsolve *ls, const double *b, double *x, ct_diag *diag);
/* The same for nrhs right-hand sides at once: b and x are n x nrhs, column-major (x and b may
 * alias). One call costs one pass over the factor per column, without the per-call overhead. */
ct_status ct_linsolve_solve_many(ct_linsolve *ls, int nrhs, const double *b, double *x, ct_diag *diag);

long ct_linsolve_analyses(const ct_linsolve *ls);
long ct_linsolve_factorizations(const ct_linsolve *ls);
/* Seconds spent in the last analysis/factorization/solve. */
void ct_linsolve_times(const ct_linsolve *ls, double *t_analysis, double *t_factor, double *t_solve);

#endif
