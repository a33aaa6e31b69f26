/* fclib_siconos.c — the Coulomb-disk block PGS (ct_pgs.h) against Siconos numerics' fc3d NSGS
 * (SICONOS_FRICTION_3D_NSGS, Debian libsiconos-numerics-dev 4.4.0) on FCLIB local problems, at
 * equal residual. Bench only: `make bench-fclib` (bench/README.md, "FCLIB: block PGS against
 * Siconos NSGS"); neither `make test` nor `make demo` builds it.
 *
 *   fclib_siconos [--runs N] [--sic-tol T] [--tol T] [--max-iter N] [--matrix sbm|sparse|dense]
 *                 [--local default|proj|pli|nsn] [--out FILE.csv] [--append] [FILE.hdf5 ...]
 *
 * Every file (default: the three of data/fclib) is read once with ct_fclib_read (our reader, the
 * block-sparse W); the Siconos FrictionContactProblem is built from the same values through
 * Siconos' API (a triplet NumericsMatrix, then by default its sparse-block form, SBM_from_csparse:
 * the storage for which NSGS has its 3x3 fast path; --matrix sparse keeps the CSparse matrix,
 * --matrix dense a column-major dense one). W is used as stored (Capsules' is slightly
 * unsymmetric); a product with a pseudo-random vector checks that both hold the same matrix.
 *
 * The common yardstick is our natural-map residual (ct_pgs_natural_map_residual, normalised by
 * max(|q|, |r|, |u|)) of each solver's reaction r, with u = W r + q. Siconos 4.4.0's
 * fc3d_compute_error, called as NSGS calls it (norm = |q|), normalises the same way: the table
 * prints both, and the absolute natural map over |q| alone. Two cases, four rows each:
 *   A  the target residual is that of Siconos NSGS with its default options at --sic-tol
 *      (default 1e-4, Siconos' own default tolerance);
 *   B  the target is the residual our PGS reaches at --tol (default 1e-6).
 * Rows (Siconos: fc3d_driver from SolverOptions solver_options_create(SICONOS_FRICTION_3D_NSGS),
 * only the tolerance, the iteration limit and, for "full", the error evaluation changed):
 *   ours         ct_pgs_solve, law COULOMB_DISK, omega 1, to the target (it evaluates the natural
 *                map after every sweep and stops at the first sweep at or below it);
 *   sic-full     NSGS with iparam[SICONOS_FRICTION_3D_IPARAM_ERROR_EVALUATION] =
 *                SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_FULL: the same test after every sweep,
 *                tolerance the target — the like-for-like row, whose ratio is the headline;
 *   sic-default  NSGS as shipped (error evaluation LIGHT_WITH_FULL_FINAL: the sweep's relative
 *                reaction increment, the natural map only once that is below the tolerance): in A
 *                at --sic-tol (it sets the target), in B at the loosest tolerance whose solution is
 *                at or below the target (searched: x4 steps, then 4 bisections in log scale);
 *   sic-K        NSGS as shipped, stopped after the sweeps sic-full needed (an oracle: the same
 *                iterate without the per-sweep residual; our PGS has no such mode).
 * Targets get a relative slack of 1e-9 (rounding of two implementations of the same formula).
 * Every solve starts cold (zero reaction). After one untimed warm-up solve per row, each case runs
 * --runs times (default 7) with the rows alternating (the starting row rotates every repetition),
 * every solve timed alone with CLOCK_MONOTONIC around the call (ct_pgs_solve, fc3d_driver; Siconos'
 * options are created outside). The table gives min / median / max and the ratio of medians,
 * Siconos row / ours (> 1: ours is faster). One CSV row per row and case goes to --out.
 *
 * --local replaces NSGS's one-contact solver in every Siconos row (default: as shipped,
 * ONECONTACT_NSN_GP_HYBRID): proj = ONECONTACT_ProjectionOnCone (one projection of r - rho u on the
 * cone, the nearest analogue of our disk projection), pli = ..._ProjectionOnConeWithLocalIteration
 * (the projection iterated to the local solution), nsn = ONECONTACT_NSN (Alart-Curnier Newton
 * without line search); the CSV's siconos_local column names it.
 *
 * Exit status: 0 ok, 1 a solver or library call failed or a row did not reach its target, 2 bad
 * input. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contactlab/ct_fclib.h"
#include "contactlab/ct_pgs.h"

/* Siconos numerics (installed headers; -isystem /usr/include/siconos{,/numerics}) */
#include "CSparseMatrix.h"
#include "FrictionContactProblem.h"
#include "Friction_cst.h"
#include "NonSmoothDrivers.h"
#include "NumericsMatrix.h"
#include "NumericsVerbose.h"
#include "SolverOptions.h"
#include "SparseBlockMatrix.h"
#include "fc3d_compute_error.h"

#define MAX_RUNS 101
#define SLACK (1.0 + 1e-9)
#define NROWS 4

static const char *const default_files[] = {
    "data/fclib/LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
    "data/fclib/BoxesStack-local_problem_test.hdf5",
    "data/fclib/Capsules-i125-1213.hdf5",
};

typedef enum { MAT_SBM, MAT_SPARSE, MAT_DENSE } mat_kind;
static const char *const mat_name[] = {"sbm", "sparse", "dense"};

typedef struct {
    int runs, max_iter, append, local; /* local: Siconos' one-contact solver id, 0 = as shipped */
    double sic_tol, tol;
    mat_kind mat;
    const char *out;
} opts_t;

typedef enum { V_OURS, V_SIC_FULL, V_SIC_DEFAULT, V_SIC_K } variant;
static const char *const v_name[] = {"ours", "sic-full", "sic-default", "sic-K"};

/* one row: a solver configuration, its warm-up result and its timed runs */
typedef struct {
    variant v;
    double tol;          /* tolerance given */
    int max_iter;        /* iteration limit given */
    int iters, converged, info, reached;
    double reported;     /* the solver's own final residual */
    double res_ours, res_sic, res_q, absres;
    double t[MAX_RUNS];
    double tmin, tmed, tmax;
} rec_t;

static double now_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void time_stats(rec_t *r, int n)
{
    double s[MAX_RUNS];
    memcpy(s, r->t, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_d);
    r->tmin = s[0];
    r->tmax = s[n - 1];
    r->tmed = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static double norm2(const double *a, size_t n)
{
    double s = 0.0;
    for (size_t k = 0; k < n; ++k) s += a[k] * a[k];
    return sqrt(s);
}

/* ---------------------------------------------------------------- Siconos problem */

/* The FrictionContactProblem of fp (dim 3) with M in storage `mat`; NULL with a message on failure.
 * Entries that are exactly zero (the unstored entries of our touched blocks, the file's explicit
 * zeros) are left out: they change no product. */
static FrictionContactProblem *siconos_problem(const ct_fclib_problem *fp, mat_kind mat, int *nblocks)
{
    const int m = fp->m, n = 3 * m;
    size_t nz = 0;
    for (size_t k = 0; k < (size_t)fp->ptr[m] * 9; ++k) nz += fp->val[k] != 0.0;
    double *q = malloc((size_t)n * sizeof *q), *mu = malloc((size_t)m * sizeof *mu);
    NumericsMatrix *T = NULL, *M = NULL;
    if (!q || !mu) {
        fprintf(stderr, "fclib_siconos: out of memory\n");
        goto fail;
    }
    memcpy(q, fp->q, (size_t)n * sizeof *q);
    memcpy(mu, fp->mu, (size_t)m * sizeof *mu);
    *nblocks = 0;
    if (mat == MAT_DENSE) {
        M = NM_create(NM_DENSE, n, n); /* zero-filled, column-major */
        if (!M || !M->matrix0) {
            fprintf(stderr, "fclib_siconos: NM_create(NM_DENSE, %d, %d) failed\n", n, n);
            goto fail;
        }
        for (int i = 0; i < m; ++i)
            for (int k = fp->ptr[i]; k < fp->ptr[i + 1]; ++k)
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b)
                        M->matrix0[(size_t)(3 * fp->col[k] + b) * (size_t)n + (size_t)(3 * i + a)] =
                            fp->val[(size_t)k * 9 + (size_t)(3 * a + b)];
    } else {
        T = NM_create(NM_SPARSE, n, n);
        if (!T) {
            fprintf(stderr, "fclib_siconos: NM_create(NM_SPARSE, %d, %d) failed\n", n, n);
            goto fail;
        }
        NM_triplet_alloc(T, (CS_INT)(nz ? nz : 1));
        CSparseMatrix *trip = NM_triplet(T);
        if (!trip) {
            fprintf(stderr, "fclib_siconos: NM_triplet_alloc(%zu) failed\n", nz);
            goto fail;
        }
        for (int i = 0; i < m; ++i)
            for (int k = fp->ptr[i]; k < fp->ptr[i + 1]; ++k)
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b) {
                        const double v = fp->val[(size_t)k * 9 + (size_t)(3 * a + b)];
                        if (v == 0.0) continue;
                        if (!CSparseMatrix_entry(trip, 3 * i + a, 3 * fp->col[k] + b, v)) {
                            fprintf(stderr, "fclib_siconos: CSparseMatrix_entry failed\n");
                            goto fail;
                        }
                    }
        CSparseMatrix *csc = NM_csc(T);
        if (!csc) {
            fprintf(stderr, "fclib_siconos: NM_csc failed\n");
            goto fail;
        }
        if (mat == MAT_SPARSE) {
            M = T;
            T = NULL;
        } else {
            M = NM_create(NM_SPARSE_BLOCK, n, n);
            if (!M || !M->matrix1) {
                fprintf(stderr, "fclib_siconos: NM_create(NM_SPARSE_BLOCK, %d, %d) failed\n", n, n);
                goto fail;
            }
            int rc = SBM_from_csparse(3, csc, M->matrix1);
            if (rc != 0) {
                fprintf(stderr, "fclib_siconos: SBM_from_csparse returned %d\n", rc);
                goto fail;
            }
            *nblocks = (int)M->matrix1->nbblocks;
            T = NM_free(T);
        }
    }
    FrictionContactProblem *P = frictionContactProblem_new_with_data(3, m, M, q, mu);
    if (!P) {
        fprintf(stderr, "fclib_siconos: frictionContactProblem_new_with_data failed\n");
        goto fail;
    }
    return P; /* owns M, q, mu */
fail:
    if (T) NM_free(T);
    if (M) NM_free(M);
    free(q);
    free(mu);
    return NULL;
}

/* max_k |(W x)_k − (M x)_k| / max_k (|W| |x|)_k (the scale of the rounding errors of the product)
 * for a pseudo-random x; NaN on a failure. */
static double matrix_check(const ct_fclib_problem *fp, FrictionContactProblem *S)
{
    const size_t n = (size_t)fp->m * 3;
    double *x = malloc(n * sizeof *x), *y1 = calloc(n, sizeof *y1), *y2 = calloc(n, sizeof *y2),
           *ya = calloc(n, sizeof *ya);
    double r = NAN;
    if (x && y1 && y2 && ya) {
        unsigned long s = 12345u;
        for (size_t k = 0; k < n; ++k) {
            s = s * 6364136223846793005ul + 1442695040888963407ul;
            x[k] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
        }
        for (int i = 0; i < fp->m; ++i)
            for (int k = fp->ptr[i]; k < fp->ptr[i + 1]; ++k)
                for (int a = 0; a < 3; ++a)
                    for (int b = 0; b < 3; ++b) {
                        const double w = fp->val[(size_t)k * 9 + (size_t)(3 * a + b)], xv = x[3 * fp->col[k] + b];
                        y1[3 * i + a] += w * xv;
                        ya[3 * i + a] += fabs(w * xv);
                    }
        NM_gemv(1.0, S->M, x, 0.0, y2);
        double dmax = 0.0, amax = 0.0;
        for (size_t k = 0; k < n; ++k) dmax = fmax(dmax, fabs(y1[k] - y2[k])), amax = fmax(amax, ya[k]);
        r = amax > 0.0 ? dmax / amax : dmax;
    }
    free(x);
    free(y1);
    free(y2);
    free(ya);
    return r;
}

/* Siconos 4.4.0's solver_options_delete clears a SolverOptions tree but frees neither the struct it
 * is given nor its internal solvers' structs (`free(op)` is commented out in 4.4.0 and 4.5.0;
 * LeakSanitizer: 240 bytes per NSGS options): collect the tree, clear it, then free the structs. */
static size_t options_collect(SolverOptions *o, SolverOptions **list, size_t n, size_t cap)
{
    if (!o || n >= cap) return n;
    list[n++] = o;
    for (size_t i = 0; o->internalSolvers && i < o->numberOfInternalSolvers; ++i)
        n = options_collect(o->internalSolvers[i], list, n, cap);
    return n;
}

static void options_free(SolverOptions *o)
{
    SolverOptions *list[64];
    const size_t n = options_collect(o, list, 0, sizeof list / sizeof *list);
    solver_options_delete(o);
    for (size_t k = 0; k < n; ++k) free(list[k]);
}

/* NSGS options as shipped, with tolerance, iteration limit and (full != 0) the full error evaluation. */
static SolverOptions *nsgs_options(double tol, int max_iter, int full, int local)
{
    SolverOptions *o = solver_options_create(SICONOS_FRICTION_3D_NSGS);
    if (!o) {
        fprintf(stderr, "fclib_siconos: solver_options_create(SICONOS_FRICTION_3D_NSGS) failed\n");
        return NULL;
    }
    if (local && o->numberOfInternalSolvers >= 1 && o->internalSolvers) {
        SolverOptions *old[64]; /* the replaced internal tree is cleared, not freed, by Siconos */
        const size_t nold = options_collect(o->internalSolvers[0], old, 0, sizeof old / sizeof *old);
        solver_options_update_internal(o, 0, local);
        for (size_t k = 0; k < nold; ++k) free(old[k]);
        if (!o->internalSolvers || !o->internalSolvers[0] || o->internalSolvers[0]->solverId != local) {
            fprintf(stderr, "fclib_siconos: solver_options_update_internal(%d) failed\n", local);
            options_free(o);
            return NULL;
        }
    }
    if (o->iSize <= SICONOS_FRICTION_3D_IPARAM_ERROR_EVALUATION_FREQUENCY || o->dSize <= SICONOS_DPARAM_RESIDU ||
        o->numberOfInternalSolvers < 1 || !o->internalSolvers || !o->internalSolvers[0]) {
        fprintf(stderr, "fclib_siconos: unexpected NSGS options layout\n");
        options_free(o);
        return NULL;
    }
    o->iparam[SICONOS_IPARAM_MAX_ITER] = max_iter;
    o->dparam[SICONOS_DPARAM_TOL] = tol;
    if (full) {
        o->iparam[SICONOS_FRICTION_3D_IPARAM_ERROR_EVALUATION] = SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_FULL;
        o->iparam[SICONOS_FRICTION_3D_IPARAM_ERROR_EVALUATION_FREQUENCY] = 0; /* every sweep */
    }
    return o;
}

/* ---------------------------------------------------------------- runs */

typedef struct {
    const ct_pgs_problem *P;
    FrictionContactProblem *S;
    size_t n;
    double *r, *u, *w; /* reaction, velocity, scratch */
    double qnorm;
    int local;
} ctx_t;

/* Residuals of the reaction in c->r in the three measures (u = W r + q from our W). */
static int measure(ctx_t *c, rec_t *rec)
{
    ct_pgs_velocity(c->P, c->r, c->u);
    rec->res_ours = ct_pgs_natural_map_residual(c->P, c->r, c->u);
    const double den = fmax(c->qnorm, fmax(norm2(c->r, c->n), norm2(c->u, c->n)));
    rec->absres = rec->res_ours * den;
    rec->res_q = rec->absres / c->qnorm;
    SolverOptions *o = nsgs_options(1e-4, 1, 0, 0);
    if (!o) return 1;
    double err = NAN;
    /* its return value compares with the tolerance (here +inf): 0 unless the error is not finite */
    int rc = fc3d_compute_error(c->S, c->r, c->w, HUGE_VAL, o, c->qnorm, &err);
    options_free(o);
    rec->res_sic = err;
    if (rc != 0 || !isfinite(err) || !isfinite(rec->res_ours)) {
        fprintf(stderr, "fclib_siconos: residual evaluation failed (fc3d_compute_error %d, %g; ours %g)\n", rc, err,
                rec->res_ours);
        return 1;
    }
    return 0;
}

/* One cold solve of row rec (its v, tol, max_iter); *secs the solve's wall time; the solution in
 * c->r. Fills iters / converged / info / reported. 0, or 1 on a failure. */
static int solve(ctx_t *c, rec_t *rec, double *secs)
{
    memset(c->r, 0, c->n * sizeof *c->r);
    memset(c->u, 0, c->n * sizeof *c->u);
    if (rec->v == V_OURS) {
        ct_pgs_opts o = ct_pgs_default_opts();
        o.law = CT_PGS_COULOMB_DISK;
        o.tol = rec->tol;
        o.max_iter = rec->max_iter;
        o.omega = 1.0;
        o.shuffle = 0;
        ct_pgs_result res = {0, 0, NAN};
        ct_diag d;
        ct_diag_init(&d);
        double t0 = now_s();
        ct_status st = ct_pgs_solve(c->P, &o, c->r, c->u, NULL, &res, &d);
        double t1 = now_s();
        if (st != CT_OK) {
            ct_diag_print(&d, stderr, "fclib_siconos: ct_pgs_solve: ");
            ct_diag_free(&d);
            return 1;
        }
        ct_diag_free(&d);
        *secs = t1 - t0;
        rec->iters = res.iters;
        rec->converged = res.converged;
        rec->info = !res.converged;
        rec->reported = res.residual;
        return 0;
    }
    SolverOptions *o = nsgs_options(rec->tol, rec->max_iter, rec->v == V_SIC_FULL, c->local);
    if (!o) return 1;
    double t0 = now_s();
    int info = fc3d_driver(c->S, c->r, c->u, o);
    double t1 = now_s();
    *secs = t1 - t0;
    rec->iters = o->iparam[SICONOS_IPARAM_ITER_DONE];
    rec->reported = o->dparam[SICONOS_DPARAM_RESIDU];
    rec->info = info; /* 0: its own test passed; otherwise not converged within max_iter */
    rec->converged = info == 0;
    options_free(o);
    return 0;
}

/* The untimed warm-up solve of a row: its iterations and residuals. */
static int warm(ctx_t *c, rec_t *rec)
{
    double secs;
    return solve(c, rec, &secs) || measure(c, rec);
}

/* Case B's sic-default: the loosest tolerance whose solution is at or below `target` in our
 * measure (x4 steps from the target, then 4 bisections in log scale). 0 with rec filled (reached
 * says whether any tolerance worked), 1 on a failure. */
static int search_default(ctx_t *c, rec_t *rec, double target, int max_iter)
{
    rec_t best, t;
    memset(&best, 0, sizeof best);
    int have = 0;
    double lo = NAN, hi = NAN; /* lo reaches, hi does not */
    double T = target;
    for (int k = 0; k < 12; ++k) {
        memset(&t, 0, sizeof t);
        t.v = V_SIC_DEFAULT, t.tol = T, t.max_iter = max_iter;
        if (warm(c, &t)) return 1;
        const int ok = t.res_ours <= target * SLACK;
        if (ok) {
            best = t, have = 1, lo = T;
            if (!isnan(hi) || T >= 1.0) break;
            T *= 4.0;
        } else {
            hi = T;
            if (have || !t.converged) break; /* max iterations: a smaller tolerance cannot help */
            T *= 0.25;
        }
    }
    for (int k = 0; have && !isnan(hi) && k < 4; ++k) {
        T = sqrt(lo * hi);
        memset(&t, 0, sizeof t);
        t.v = V_SIC_DEFAULT, t.tol = T, t.max_iter = max_iter;
        if (warm(c, &t)) return 1;
        if (t.res_ours <= target * SLACK) best = t, lo = T;
        else hi = T;
    }
    if (have) *rec = best;
    else *rec = t;
    rec->reached = have;
    return 0;
}

/* runs repetitions, the rows alternating (starting row rotating); iteration counts must repeat the
 * warm-up's (every row is deterministic). */
static int timed_runs(ctx_t *c, rec_t *rows, int runs)
{
    for (int k = 0; k < runs; ++k)
        for (int j = 0; j < NROWS; ++j) {
            rec_t *ref = &rows[(j + k) % NROWS], tmp = *ref;
            double secs = NAN;
            if (solve(c, &tmp, &secs)) return 1;
            if (tmp.iters != ref->iters)
                fprintf(stderr, "fclib_siconos: warning: %s: %d iterations in timed run %d, %d in the warm-up\n",
                        v_name[ref->v], tmp.iters, k, ref->iters);
            ref->t[k] = secs;
        }
    for (int j = 0; j < NROWS; ++j) time_stats(&rows[j], runs);
    return 0;
}

/* ---------------------------------------------------------------- output */

static void print_head(void)
{
    printf("  %-4s %-11s %9s %9s %9s %9s %9s %9s %9s %9s %8s %7s\n", "case", "row", "tol", "iters", "res ours",
           "res sic", "res/|q|", "t min", "t median", "t max", "us/iter", "ratio");
    printf("  %-4s %-11s %9s %9s %9s %9s %9s %9s %9s %9s %8s %7s\n", "", "", "", "", "", "", "", "[ms]", "[ms]", "[ms]",
           "", "sic/us");
}

static void print_row(const char *cs, const rec_t *r, double ratio)
{
    char rat[32] = "";
    if (isfinite(ratio)) snprintf(rat, sizeof rat, "%.2f", ratio);
    printf("  %-4s %-11s %9.2e %8d%s %9.2e %9.2e %9.2e %9.3f %9.3f %9.3f %8.2f %7s%s\n", cs, v_name[r->v], r->tol,
           r->iters, r->converged ? " " : "*", r->res_ours, r->res_sic, r->res_q, 1e3 * r->tmin, 1e3 * r->tmed,
           1e3 * r->tmax, 1e6 * r->tmed / (r->iters > 0 ? r->iters : 1), rat, r->reached ? "" : "  NOT REACHED");
}

static void csv_row(FILE *f, const char *host, const char *date, const char *file, int m, const char *mat,
                    const char *local, const char *cs, double target, const rec_t *r, double ratio, int runs)
{
    fprintf(f, "%s,%s,%s,%d,%s,%s,%s,%.6e,%s,%.6e,%d,%d,%d,%d,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.6e,%.4f,%d\n",
            host, date, file, m, mat, local, cs, target, v_name[r->v], r->tol, r->max_iter, r->converged, r->reached,
            r->iters, r->reported, r->res_ours, r->res_sic, r->res_q, r->absres, r->tmin, r->tmed, r->tmax,
            r->tmed / (r->iters > 0 ? r->iters : 1), ratio, runs);
}

/* ---------------------------------------------------------------- one problem */

/* The three rows that follow a target: ours, sic-full and sic-K (rows[0], [1], [3]). */
static int rows_to_target(ctx_t *c, rec_t *rows, double target, int max_iter, int ours_given)
{
    const double tt = target * SLACK;
    if (!ours_given) {
        rows[0] = (rec_t){.v = V_OURS, .tol = tt, .max_iter = max_iter};
        if (warm(c, &rows[0])) return 1;
    }
    rows[0].reached = rows[0].res_ours <= tt;
    rows[1] = (rec_t){.v = V_SIC_FULL, .tol = tt, .max_iter = max_iter};
    if (warm(c, &rows[1])) return 1;
    rows[1].reached = rows[1].res_ours <= tt;
    rows[3] = (rec_t){.v = V_SIC_K, .tol = tt, .max_iter = rows[1].iters > 0 ? rows[1].iters : 1};
    if (warm(c, &rows[3])) return 1;
    rows[3].reached = rows[3].res_ours <= tt;
    return 0;
}

static int bench_file(const char *path, const opts_t *o, FILE *csv, const char *host, const char *date)
{
    ct_fclib_problem fp;
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = ct_fclib_read(path, &fp, &d);
    if (st != CT_OK) {
        ct_diag_print(&d, stderr, "fclib_siconos: ");
        ct_diag_free(&d);
        ct_fclib_free(&fp);
        return st == CT_EINPUT ? 2 : 1;
    }
    ct_diag_free(&d);
    if (fp.dim != 3) {
        fprintf(stderr, "fclib_siconos: %s: spacedim %d: only 3D problems (fc3d) are compared\n", path, fp.dim);
        ct_fclib_free(&fp);
        return 2;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const ct_pgs_problem P = ct_fclib_view(&fp);
    const size_t n = (size_t)fp.m * 3;
    int nblocks = 0, rc = 1;
    FrictionContactProblem *S = siconos_problem(&fp, o->mat, &nblocks);
    ctx_t c = {&P, S, n, malloc(n * sizeof(double)), malloc(n * sizeof(double)), malloc(n * sizeof(double)),
               norm2(fp.q, n), o->local};
    if (!S || !c.r || !c.u || !c.w) goto done;
    const double chk = matrix_check(&fp, S);
    printf("\n== %s: %d contacts, W %zu x %zu (%d blocks in our reader), |q| = %.4g, asymmetry %.2g\n", base, fp.m, n,
           n, fp.ptr[fp.m], c.qnorm, ct_fclib_asymmetry(&fp));
    if (o->mat == MAT_SBM) printf("   Siconos matrix: sparse block (SBM), %d non-zero 3x3 blocks", nblocks);
    else printf("   Siconos matrix: %s", o->mat == MAT_SPARSE ? "CSparse (NM_SPARSE)" : "dense (NM_DENSE)");
    printf("; max |Wx - M_siconos x| / max |W||x| = %.2g\n", chk);
    if (!(chk <= 1e-13)) {
        fprintf(stderr, "fclib_siconos: %s: Siconos' matrix differs from ours (%.3g)\n", base, chk);
        goto done;
    }

    rec_t A[NROWS], B[NROWS];
    memset(A, 0, sizeof A);
    memset(B, 0, sizeof B);
    /* A: Siconos as shipped at --sic-tol sets the target */
    A[2] = (rec_t){.v = V_SIC_DEFAULT, .tol = o->sic_tol, .max_iter = o->max_iter};
    if (warm(&c, &A[2])) goto done;
    A[2].reached = A[2].converged;
    const double target_A = A[2].res_ours;
    if (rows_to_target(&c, A, target_A, o->max_iter, 0)) goto done;
    /* B: our PGS at --tol sets the target */
    B[0] = (rec_t){.v = V_OURS, .tol = o->tol, .max_iter = o->max_iter};
    if (warm(&c, &B[0])) goto done;
    const double target_B = B[0].res_ours;
    if (rows_to_target(&c, B, target_B, o->max_iter, 1)) goto done;
    B[0].reached = B[0].converged;
    if (search_default(&c, &B[2], target_B, o->max_iter)) goto done;

    if (timed_runs(&c, A, o->runs) || timed_runs(&c, B, o->runs)) goto done;

    print_head();
    int all = 1;
    for (int cs = 0; cs < 2; ++cs) {
        rec_t *R = cs ? B : A;
        const double target = cs ? target_B : target_A;
        if (cs == 0)
            printf("  A: target = the residual of Siconos NSGS (default options%s) at tol %.0e: %.3e\n",
                   o->local ? ", --local solver" : "", o->sic_tol, target);
        else printf("  B: target = the residual of ours at tol %.0e: %.3e\n", o->tol, target);
        for (int j = 0; j < NROWS; ++j) {
            const double ratio = j ? R[j].tmed / R[0].tmed : NAN;
            print_row(cs ? "B" : "A", &R[j], ratio);
            all &= R[j].reached;
            if (csv) csv_row(csv, host, date, base, fp.m, mat_name[o->mat], o->local ? solver_options_id_to_name(o->local) : "default",
                                 cs ? "B" : "A", target, &R[j], ratio, o->runs);
        }
    }
    printf("  (* = the solver's own test did not pass: iteration limit; sic-K stops at sic-full's count by design)\n");
    if (csv) fflush(csv);
    rc = all ? 0 : 1;
    if (rc) fprintf(stderr, "fclib_siconos: %s: a row did not reach its target\n", base);
done:
    if (S) frictionContactProblem_free(S);
    free(c.r);
    free(c.u);
    free(c.w);
    ct_fclib_free(&fp);
    return rc;
}

/* ---------------------------------------------------------------- main */

static int parse_real(const char *opt, const char *s, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    if (!*s || *end || errno || !(x > 0.0) || !isfinite(x)) {
        fprintf(stderr, "fclib_siconos: %s: expected a positive number (got '%s')\n", opt, s);
        return 2;
    }
    *v = x;
    return 0;
}

static int parse_int(const char *opt, const char *s, long lo, long hi, int *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "fclib_siconos: %s: expected an integer in [%ld, %ld] (got '%s')\n", opt, lo, hi, s);
        return 2;
    }
    *v = (int)x;
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: fclib_siconos [--runs N] [--sic-tol T] [--tol T] [--max-iter N] [--matrix sbm|sparse|dense]\n"
               "                     [--local default|proj|pli|nsn] [--out FILE.csv] [--append] [FILE.hdf5 ...]\n");
}

static const char *eval_name(int e)
{
    switch (e) {
    case SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_FULL: return "FULL";
    case SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_LIGHT: return "LIGHT";
    case SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_LIGHT_WITH_FULL_FINAL: return "LIGHT_WITH_FULL_FINAL";
    case SICONOS_FRICTION_3D_NSGS_ERROR_EVALUATION_ADAPTIVE: return "ADAPTIVE";
    default: return "?";
    }
}

int main(int argc, char **argv)
{
    opts_t o = {7, 1000000, 0, 0, 1e-4, 1e-6, MAT_SBM, NULL};
    const char **files = malloc((size_t)argc * sizeof *files);
    int nfiles = 0;
    if (!files) return 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0, takes = !strcmp(a, "--runs") || !strcmp(a, "--sic-tol") || !strcmp(a, "--tol") ||
                            !strcmp(a, "--max-iter") || !strcmp(a, "--matrix") || !strcmp(a, "--out") ||
                            !strcmp(a, "--local");
        if (takes && !v) {
            fprintf(stderr, "fclib_siconos: %s needs a value\n", a);
            rc = 2;
        } else if (!strcmp(a, "--runs")) rc = parse_int(a, v, 1, MAX_RUNS, &o.runs);
        else if (!strcmp(a, "--max-iter")) rc = parse_int(a, v, 1, 100000000, &o.max_iter);
        else if (!strcmp(a, "--sic-tol")) rc = parse_real(a, v, &o.sic_tol);
        else if (!strcmp(a, "--tol")) rc = parse_real(a, v, &o.tol);
        else if (!strcmp(a, "--out")) o.out = v;
        else if (!strcmp(a, "--local")) {
            if (!strcmp(v, "default")) o.local = 0;
            else if (!strcmp(v, "proj")) o.local = SICONOS_FRICTION_3D_ONECONTACT_ProjectionOnCone;
            else if (!strcmp(v, "pli")) o.local = SICONOS_FRICTION_3D_ONECONTACT_ProjectionOnConeWithLocalIteration;
            else if (!strcmp(v, "nsn")) o.local = SICONOS_FRICTION_3D_ONECONTACT_NSN;
            else {
                fprintf(stderr, "fclib_siconos: --local: expected default, proj, pli or nsn (got '%s')\n", v);
                rc = 2;
            }
        } else if (!strcmp(a, "--matrix")) {
            if (!strcmp(v, "sbm")) o.mat = MAT_SBM;
            else if (!strcmp(v, "sparse")) o.mat = MAT_SPARSE;
            else if (!strcmp(v, "dense")) o.mat = MAT_DENSE;
            else {
                fprintf(stderr, "fclib_siconos: --matrix: expected sbm, sparse or dense (got '%s')\n", v);
                rc = 2;
            }
        } else if (!strcmp(a, "--append")) {
            o.append = 1;
            continue;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            free(files);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "fclib_siconos: unknown option '%s'\n", a);
            usage(stderr);
            rc = 2;
        } else {
            files[nfiles++] = a;
            continue;
        }
        if (rc) {
            free(files);
            return rc;
        }
        ++i;
    }
    if (nfiles == 0)
        for (size_t k = 0; k < sizeof default_files / sizeof *default_files; ++k) files[nfiles++] = default_files[k];

    numerics_set_verbose(0);
    char host[256] = "unknown";
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    char date[32] = "unknown";
    time_t now = time(NULL);
    struct tm tmv;
    if (now != (time_t)-1 && localtime_r(&now, &tmv)) strftime(date, sizeof date, "%Y-%m-%d %H:%M", &tmv);

    FILE *csv = NULL;
    if (o.out) {
        csv = fopen(o.out, o.append ? "a" : "w");
        if (!csv) {
            fprintf(stderr, "fclib_siconos: %s: %s\n", o.out, strerror(errno));
            free(files);
            return 2;
        }
        if (ftell(csv) == 0)
            fprintf(csv, "host,date,file,contacts,siconos_matrix,siconos_local,case,target,row,tol_given,max_iter_given,converged,"
                         "reached,iters,reported_residual,res_ours,res_siconos,res_over_q,abs_residual,t_min_s,"
                         "t_median_s,t_max_s,s_per_iter,ratio_over_ours,runs\n");
    }

    /* what Siconos' NSGS does as shipped (4.4.0): printed so that the table can be read */
    SolverOptions *so = solver_options_create(SICONOS_FRICTION_3D_NSGS);
    if (!so || so->iSize <= SICONOS_FRICTION_3D_NSN_RHO_STRATEGY || so->dSize <= SICONOS_DPARAM_TOL ||
        so->numberOfInternalSolvers < 1 || !so->internalSolvers || !so->internalSolvers[0] ||
        so->internalSolvers[0]->iSize <= SICONOS_FRICTION_3D_NSN_HYBRID_MAX_ITER) {
        fprintf(stderr, "fclib_siconos: solver_options_create(SICONOS_FRICTION_3D_NSGS): unexpected result\n");
        if (so) options_free(so);
        if (csv) fclose(csv);
        free(files);
        return 1;
    }
    const SolverOptions *ls = so->internalSolvers[0];
    printf("fclib_siconos: host %s, %s; %d timed runs per row and case, rows alternating, cold starts\n", host, date,
           o.runs);
    printf("ours: ct_pgs_solve, law COULOMB_DISK (normal, then the tangential pair projected on the disk,\n"
           "      rho = 2/(W_tt + W_bb)), omega 1, contacts in order, natural map after every sweep\n");
    printf("Siconos: fc3d_driver, %s (id %d) as shipped: tol %g, error evaluation %s, max %d sweeps (we set %d);\n"
           "      local solver %s (id %d): max %d iterations, tol %g, formulation %d (0 = Alart-Curnier std),\n"
           "      line search %d (0 = Goldstein-Price), hybrid strategy %d (2 = NSN, then PLI + NSN loop; max loop %d,\n"
           "      %d projection iterations), rho strategy %d (3 = split spectral norm)\n",
           solver_options_id_to_name(so->solverId), so->solverId, so->dparam[SICONOS_DPARAM_TOL],
           eval_name(so->iparam[SICONOS_FRICTION_3D_IPARAM_ERROR_EVALUATION]), so->iparam[SICONOS_IPARAM_MAX_ITER],
           o.max_iter,
           solver_options_id_to_name(ls->solverId), ls->solverId, ls->iparam[SICONOS_IPARAM_MAX_ITER],
           ls->dparam[SICONOS_DPARAM_TOL], ls->iparam[SICONOS_FRICTION_3D_NSN_FORMULATION],
           ls->iparam[SICONOS_FRICTION_3D_NSN_LINESEARCH], ls->iparam[SICONOS_FRICTION_3D_NSN_HYBRID_STRATEGY],
           ls->iparam[SICONOS_FRICTION_3D_NSN_HYBRID_MAX_LOOP], ls->iparam[SICONOS_FRICTION_3D_NSN_HYBRID_MAX_ITER],
           ls->iparam[SICONOS_FRICTION_3D_NSN_RHO_STRATEGY]);
    options_free(so);
    if (o.local)
        printf("      --local: every Siconos row uses local solver %s (id %d) instead\n",
               solver_options_id_to_name(o.local), o.local);
    printf("residuals: 'res ours' = our natural map / max(|q|, |r|, |u|); 'res sic' = Siconos' fc3d_compute_error\n"
           "      (norm = |q|, as NSGS calls it); 'res/|q|' = the same absolute natural map / |q| alone\n");

    int worst = 0;
    for (int k = 0; k < nfiles; ++k) {
        int rc = bench_file(files[k], &o, csv, host, date);
        if (rc > worst) worst = rc;
    }
    if (csv && fclose(csv) != 0) {
        fprintf(stderr, "fclib_siconos: %s: writing failed\n", o.out);
        if (!worst) worst = 1;
    }
    if (csv) printf("\nCSV: %s\n", o.out);
    free(files);
    return worst;
}
