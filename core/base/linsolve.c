/* linsolve.c — CHOLMOD Cholesky with symbolic analysis reuse. */
#include "contactlab/ct_linsolve.h"

#include <cholmod.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

struct ct_linsolve {
    cholmod_common c;
    cholmod_factor *L;
    SuiteSparse_long n, nnz;
    SuiteSparse_long *p, *i; /* long copies of the pattern handed to CHOLMOD */
    long n_analyses, n_factorizations;
    double t_analysis, t_factor, t_solve;
};

ct_status ct_linsolve_create(ct_linsolve **out, ct_diag *diag)
{
    ct_linsolve *ls = calloc(1, sizeof *ls);
    if (!ls) return ct_diag_add(diag, CT_ENOMEM, "linsolve: out of memory");
    if (!cholmod_l_start(&ls->c)) {
        free(ls);
        return ct_diag_add(diag, CT_ELIB, "linsolve: cholmod_l_start failed");
    }
    ls->c.print = 0;            /* we report errors ourselves */
    ls->c.error_handler = NULL;
    ls->c.quick_return_if_not_posdef = 1;
    *out = ls;
    return CT_OK;
}

void ct_linsolve_destroy(ct_linsolve *ls)
{
    if (!ls) return;
    if (ls->L) cholmod_l_free_factor(&ls->L, &ls->c);
    cholmod_l_finish(&ls->c);
    free(ls->p);
    free(ls->i);
    free(ls);
}

/* A cholmod_sparse view of A: the long pattern copy plus A's values. */
static cholmod_sparse view(ct_linsolve *ls, const ct_csc *A)
{
    cholmod_sparse S;
    memset(&S, 0, sizeof S);
    S.nrow = (size_t)A->nrow;
    S.ncol = (size_t)A->ncol;
    S.nzmax = (size_t)ls->nnz;
    S.p = ls->p;
    S.i = ls->i;
    S.x = A->val;
    S.stype = 1; /* upper triangle */
    S.itype = CHOLMOD_LONG;
    S.xtype = CHOLMOD_REAL;
    S.dtype = CHOLMOD_DOUBLE;
    S.sorted = 1;
    S.packed = 1;
    return S;
}

ct_status ct_linsolve_factor(ct_linsolve *ls, const ct_csc *A, int pattern_changed, ct_diag *diag)
{
    SuiteSparse_long nnz = (SuiteSparse_long)ct_csc_nnz(A);
    int analyse = pattern_changed || !ls->L || ls->n != A->ncol || ls->nnz != nnz;
    if (analyse) {
        free(ls->p);
        free(ls->i);
        ls->p = malloc(((size_t)A->ncol + 1) * sizeof *ls->p);
        ls->i = malloc(((size_t)nnz + 1) * sizeof *ls->i);
        if (!ls->p || !ls->i) return ct_diag_add(diag, CT_ENOMEM, "linsolve: out of memory");
        for (int k = 0; k <= A->ncol; ++k) ls->p[k] = A->colptr[k];
        for (SuiteSparse_long k = 0; k < nnz; ++k) ls->i[k] = A->rowind[k];
        ls->n = A->ncol;
        ls->nnz = nnz;
    }
    cholmod_sparse S = view(ls, A);
    if (analyse) {
        double t0 = omp_get_wtime();
        if (ls->L) cholmod_l_free_factor(&ls->L, &ls->c);
        ls->L = cholmod_l_analyze(&S, &ls->c);
        ls->t_analysis = omp_get_wtime() - t0;
        if (!ls->L || ls->c.status < CHOLMOD_OK)
            return ct_diag_add(diag, CT_ELIB, "linsolve: cholmod_l_analyze failed (status %d, n = %ld)",
                               ls->c.status, (long)ls->n);
        ls->n_analyses++;
    } else {
        ls->t_analysis = 0.0;
    }
    double t0 = omp_get_wtime();
    /* Debian's CHOLMOD (SuiteSparse 5) opens OpenMP regions of a compile-time 4 threads
     * (CHOLMOD_OMP_NUM_THREADS) around small per-supernode loops, whatever OMP_NUM_THREADS
     * says: on a 2-core machine 4 threads contend for 2 cores, and every region costs thread
     * wake-ups (measured: 265 k context switches, factorization 2.2x slower at 23 k dofs).
     * The numerical work is in BLAS (its own threads, OPENBLAS_NUM_THREADS), so those regions
     * run serially here: no OpenMP region may become active during the factorization. */
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(0);
    int ok = cholmod_l_factorize(&S, ls->L, &ls->c);
    omp_set_max_active_levels(levels);
    ls->t_factor = omp_get_wtime() - t0;
    ls->n_factorizations++;
    if (!ok || ls->c.status < CHOLMOD_OK)
        return ct_diag_add(diag, CT_ELIB, "linsolve: cholmod_l_factorize failed (status %d)", ls->c.status);
    if (ls->c.status == CHOLMOD_NOT_POSDEF || ls->L->minor < (size_t)ls->n)
        return ct_diag_add(diag, CT_ENOTPD,
                           "linsolve: matrix not positive definite (failed at column %ld of %ld)",
                           (long)ls->L->minor, (long)ls->n);
    return CT_OK;
}

ct_status ct_linsolve_solve_many(ct_linsolve *ls, int nrhs, const double *b, double *x, ct_diag *diag)
{
    if (!ls->L) return ct_diag_add(diag, CT_ELIB, "linsolve: solve before factorization");
    if (nrhs < 0) return ct_diag_add(diag, CT_ELIB, "linsolve: %d right-hand sides", nrhs);
    if (nrhs == 0) return CT_OK;
    double t0 = omp_get_wtime();
    cholmod_dense B;
    memset(&B, 0, sizeof B);
    B.nrow = (size_t)ls->n;
    B.ncol = (size_t)nrhs;
    B.nzmax = (size_t)ls->n * (size_t)nrhs;
    B.d = (size_t)ls->n;
    B.x = (void *)b;
    B.xtype = CHOLMOD_REAL;
    B.dtype = CHOLMOD_DOUBLE;
    cholmod_dense *X = cholmod_l_solve(CHOLMOD_A, ls->L, &B, &ls->c);
    if (!X || ls->c.status < CHOLMOD_OK) {
        if (X) cholmod_l_free_dense(&X, &ls->c);
        return ct_diag_add(diag, CT_ELIB, "linsolve: cholmod_l_solve failed (status %d, %d right-hand sides)",
                           ls->c.status, nrhs);
    }
    memcpy(x, X->x, (size_t)ls->n * (size_t)nrhs * sizeof *x);
    cholmod_l_free_dense(&X, &ls->c);
    ls->t_solve = omp_get_wtime() - t0;
    return CT_OK;
}

ct_status ct_linsolve_solve(ct_linsolve *ls, const double *b, double *x, ct_diag *diag)
{
    return ct_linsolve_solve_many(ls, 1, b, x, diag);
}

long ct_linsolve_analyses(const ct_linsolve *ls) { return ls->n_analyses; }
long ct_linsolve_factorizations(const ct_linsolve *ls) { return ls->n_factorizations; }

void ct_linsolve_times(const ct_linsolve *ls, double *ta, double *tf, double *ts)
{
    if (ta) *ta = ls->t_analysis;
    if (tf) *tf = ls->t_factor;
    if (ts) *ts = ls->t_solve;
}
