/* collisions_correct.c — the second-order correction of a line-search trial point
 * (ct_collision_correct_trial, ct_collisions.h).
 *
 * Why. Newton's model of a barrier term w ψ(d²) is exact to second order in the step p, but the
 * barrier is so nonlinear that the third-order effect of the distance's curvature decides the
 * outcome when p is large compared with d. At a tiny gap d with a large barrier force, the
 * Newton step typically raises d by about d along ∇d (the barrier's Newton step doubles the
 * gap) while it moves the stencil tangentially by |p_t| ≫ d (the other forces slide the two
 * primitives along each other, against the barrier's curvature stiffness |ψ'| ∇²d). The
 * distance then changes by ∇d·p + ½ pᵀ∇²d p, and once ½ |∇²d| |p_t|² is of the order of d the
 * curvature takes back what the normal step gave: the gap stays where it was, the force stays
 * huge, and the next iteration does the same again, a crawl of hundreds of iterations (measured
 * on two crossing surface edges of a soft cube in a fold, tests/README.md, issue 15: a gap of
 * 1e-11 m, 9e5 N on one edge–edge term, 0.2 % progress per iteration). This is the Maratos
 * effect of constrained optimization, and the textbook remedy is a second-order correction
 * (Nocedal & Wright, Numerical Optimization, 2nd ed., §15.6 and §18.3; Fletcher 1982): after
 * the step, move back onto the linearized constraint along its gradient, c(x + p) + ∇c·p_c = the
 * linear prediction, with the least-norm p_c.
 *
 * What. For each term of positive weight within d_max at x0 (the barrier's reach; negative-weight
 * terms of the convergent set are corrections of the others, not constraints of their own) the
 * linear prediction of its distance at the trial is d_lin = d(x0) + α ∇d(x0)·dx. If the trial's
 * distance d(x1) fell below ratio · d_lin, the stencil's vertices move by the least-norm step that
 * raises d back to min(d_lin, d_max) to first order: δx = (target − d(x1)) ∇d(x1) / |∇d(x1)|².
 * A vertex in several such terms takes the mean of their moves (terms that share a vertex mostly
 * ask for the same normal push, and a sum would push k times), vertices that the contact mesh
 * marks as not movable stay. The distance is each term's own distance function (its stencil and
 * closest-feature type), so d(x0), d(x1) and ∇d refer to one smooth function.
 *
 * Cost. A term can only have lost gap if d(x1) < ratio · (d(x0) + α Δ), with Δ the largest
 * relative displacement between its two sides (|∇d·dx| ≤ Δ: ∇d is the unit normal times the
 * barycentric weights of the closest points), so the gradients are formed only for terms that
 * moved by more than about their gap; the rest costs two distance evaluations per term.
 * Per-term tests run in parallel; the moves are gathered in set order (deterministic). The work
 * memory is the caller's and grows only with the set (a model keeps it across trials: the line
 * search calls this once per trial).
 */
#include "collisions_internal.h"

#include "contactlab/ct_parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest relative displacement |dx_a − dx_b| between the two sides of a stencil (PH: |dx_v|). */
static double side_motion(const ct_collision *c, int dim, const double *dx)
{
    const int nv = ct_collision_nverts(c);
    double m2 = 0.0;
    if (c->kind == CT_COL_PH) {
        for (int j = 0; j < dim; ++j) m2 += dx[(size_t)c->v[0] * dim + j] * dx[(size_t)c->v[0] * dim + j];
        return sqrt(m2);
    }
    for (int a = 0; a < c->side; ++a)
        for (int b = c->side; b < nv; ++b) {
            double r2 = 0.0;
            for (int j = 0; j < dim; ++j) {
                const double r = dx[(size_t)c->v[a] * dim + j] - dx[(size_t)c->v[b] * dim + j];
                r2 += r * r;
            }
            m2 = fmax(m2, r2);
        }
    return sqrt(m2);
}

/* The first-order distance deficit of term c at x1, target − d(x1) > 0, or 0 if c keeps enough of
 * its predicted gap (see the top). */
static double term_deficit(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                           const double *x0, const double *dx, double alpha, double ratio, double dmax,
                           const double *x1, const double *s1)
{
    if (!(c->w > 0.0)) return 0.0;
    const int dim = cm->dim, nv = ct_collision_nverts(c);
    const double s0 = ct_collision_d2(c, cm, obs, x0, NULL, NULL);
    if (!(s0 > 0.0) || s0 >= dmax * dmax) return 0.0;
    const double d0 = sqrt(s0), d1 = sqrt(s1 ? *s1 : ct_collision_d2(c, cm, obs, x1, NULL, NULL));
    if (!(d1 > 0.0) || d1 >= ratio * (d0 + alpha * side_motion(c, dim, dx))) return 0.0;
    double g[12];
    ct_collision_d2(c, cm, obs, x0, g, NULL); /* ∇(d²) = 2 d ∇d */
    double gp = 0.0;
    for (int k = 0; k < nv; ++k)
        for (int j = 0; j < dim; ++j) gp += g[k * dim + j] * dx[(size_t)c->v[k] * dim + j];
    const double dlin = d0 + alpha * gp / (2.0 * d0);
    if (!(d1 < ratio * dlin)) return 0.0;
    return fmin(dlin, dmax) - d1;
}

typedef struct {
    const ct_collision_set *cs;
    const ct_contact_mesh *cm;
    const ct_obstacle *obs;
    const double *x0, *dx, *x1;
    double alpha, ratio, dmax;
    double *deficit;
} correct_args;

ct_status ct_collision_correct_trial(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                     const double *x0, const double *dx, double alpha, double ratio, double dmax,
                                     const double *s1, int threads, double *x1, double **work, size_t *work_cap,
                                     long *ncorrected)
{
    *ncorrected = 0;
    if (cs->n == 0) return CT_OK;
    /* work: the terms' deficits (n), the vertices' summed moves (nv·dim) and their counts (nv) */
    const int dim = cm->dim;
    const size_t need = (size_t)cs->n + (size_t)cm->nv * (size_t)(dim + 1);
    if (*work_cap < need) {
        double *w = realloc(*work, need * sizeof *w);
        if (!w) return CT_ENOMEM;
        *work = w;
        *work_cap = need;
    }
    double *deficit = *work, *move = deficit + cs->n, *count = move + (size_t)cm->nv * dim;
    long nc = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : nc) num_threads(ct_threads(threads))
    for (long i = 0; i < cs->n; ++i) {
        deficit[i] = term_deficit(&cs->c[i], cm, obs, x0, dx, alpha, ratio, dmax, x1, s1 ? s1 + i : NULL);
        nc += deficit[i] > 0.0;
    }
    if (nc == 0) return CT_OK;
    memset(move, 0, (size_t)cm->nv * (size_t)(dim + 1) * sizeof *move); /* move and count */
    for (long i = 0; i < cs->n; ++i) { /* in set order */
        if (!(deficit[i] > 0.0)) continue;
        const ct_collision *c = &cs->c[i];
        const int nv = ct_collision_nverts(c);
        double g[12];
        const double s1 = ct_collision_d2(c, cm, obs, x1, g, NULL);
        double gg = 0.0; /* |∇d|² = |∇(d²)|² / (4 d²) */
        for (int k = 0; k < nv * dim; ++k) gg += g[k] * g[k];
        gg /= 4.0 * s1;
        if (!(gg > 0.0)) continue;
        const double beta = deficit[i] / gg / (2.0 * sqrt(s1)); /* δx = deficit ∇d / |∇d|², ∇d = g / (2 d) */
        for (int k = 0; k < nv; ++k) {
            const int v = c->v[k];
            count[v] += 1.0;
            for (int j = 0; j < dim; ++j) move[(size_t)v * dim + j] += beta * g[k * dim + j];
        }
    }
    for (int v = 0; v < cm->nv; ++v) {
        if (!(count[v] > 0.0) || (cm->movable && !cm->movable[v])) continue;
        for (int j = 0; j < dim; ++j) x1[(size_t)v * dim + j] += move[(size_t)v * dim + j] / count[v];
    }
    *ncorrected = nc;
    return CT_OK;
}
