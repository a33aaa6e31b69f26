/* pgs.c — block projected Gauss–Seidel for local contact problems (header ct_pgs.h).
 *
 * One contact is visited at a time (in index order, or in a per-sweep random order). Each row's
 * velocity u_r = (W λ + q)_r is computed from the block row with the current λ when the row is
 * updated (one block-row product per contact and sweep, dim flops per block entry), so the
 * Gauss–Seidel updates always see the latest impulses. No allocation happens inside the sweeps:
 * the diagonal block positions, the visiting order and (law COULOMB_DISK, when the caller gives no
 * u) the velocity buffer of the residual are allocated once per solve. */
#include "contactlab/ct_pgs.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The floor of the residuals' denominators: a problem whose impulses (box) or whose q, λ and u
 * (natural map) are all zero has residual 0. */
#define PGS_TINY 1e-300

ct_pgs_opts ct_pgs_default_opts(void)
{
    ct_pgs_opts o;
    o.law = CT_PGS_ADHESIVE_BOX;
    o.tangential = CT_PGS_TANGENTIAL_MAX;
    o.max_iter = 1000;
    o.tol = 1e-8;
    o.omega = 1.0;
    o.shuffle = 0;
    o.seed = 1;
    return o;
}

/* ------------------------------------------------------------------ products */

/* (W λ + q)_r for row r (0 .. dim−1) of contact i. */
static double row_velocity(const ct_pgs_problem *P, int i, int r, const double *lambda)
{
    const int dim = P->dim, d2 = dim * dim;
    double s = P->q[(size_t)i * dim + r];
    for (int k = P->ptr[i]; k < P->ptr[i + 1]; ++k) {
        const double *B = P->val + (size_t)k * d2 + (size_t)r * dim;
        const double *l = lambda + (size_t)P->col[k] * dim;
        for (int c = 0; c < dim; ++c) s += B[c] * l[c];
    }
    return s;
}

void ct_pgs_velocity(const ct_pgs_problem *P, const double *lambda, double *u)
{
    const int dim = P->dim, d2 = dim * dim;
    for (int i = 0; i < P->m; ++i) {
        double *ui = u + (size_t)i * dim;
        for (int r = 0; r < dim; ++r) ui[r] = P->q[(size_t)i * dim + r];
        for (int k = P->ptr[i]; k < P->ptr[i + 1]; ++k) {
            const double *B = P->val + (size_t)k * d2;
            const double *l = lambda + (size_t)P->col[k] * dim;
            for (int r = 0; r < dim; ++r) {
                double s = 0.0;
                for (int c = 0; c < dim; ++c) s += B[r * dim + c] * l[c];
                ui[r] += s;
            }
        }
    }
}

/* ------------------------------------------------------------------ natural map */

/* |λ − P_K(z)|² for one contact, K = {‖x_T‖ ≤ μ x_n}, z = λ − (u + μ‖u_T‖ e_n). */
static double natural_map_contact(int dim, double mu, const double *l, const double *u)
{
    double uT2 = 0.0;
    for (int r = 1; r < dim; ++r) uT2 += u[r] * u[r];
    double z[3];
    z[0] = l[0] - (u[0] + mu * sqrt(uT2));
    double zT2 = 0.0;
    for (int r = 1; r < dim; ++r) z[r] = l[r] - u[r], zT2 += z[r] * z[r];
    const double zT = sqrt(zT2);
    double p[3];
    if (zT <= mu * z[0]) { /* inside K (μ = 0: z_T = 0 and z_n ≥ 0) */
        for (int r = 0; r < dim; ++r) p[r] = z[r];
    } else if (mu * zT <= -z[0]) { /* inside the polar cone (μ = 0: z_n ≤ 0) */
        for (int r = 0; r < dim; ++r) p[r] = 0.0;
    } else { /* onto the boundary ray through z: here z_T ≠ 0 (z_T = 0 would need 0 > μ z_n > 0) */
        const double s = (z[0] + mu * zT) / (1.0 + mu * mu);
        p[0] = s;
        for (int r = 1; r < dim; ++r) p[r] = s * mu * z[r] / zT;
    }
    double e = 0.0;
    for (int r = 0; r < dim; ++r) e += (l[r] - p[r]) * (l[r] - p[r]);
    return e;
}

double ct_pgs_natural_map_residual(const ct_pgs_problem *P, const double *lambda, const double *u)
{
    if (!P || (P->dim != 2 && P->dim != 3) || P->m < 0) return NAN;
    const int dim = P->dim;
    const size_t n = (size_t)P->m * dim;
    double sum = 0.0, qq = 0.0, ll = 0.0, uu = 0.0;
    for (int i = 0; i < P->m; ++i)
        sum += natural_map_contact(dim, P->mu ? P->mu[i] : 0.0, lambda + (size_t)i * dim, u + (size_t)i * dim);
    for (size_t k = 0; k < n; ++k) qq += P->q[k] * P->q[k], ll += lambda[k] * lambda[k], uu += u[k] * u[k];
    double den = fmax(fmax(sqrt(qq), sqrt(ll)), fmax(sqrt(uu), PGS_TINY));
    return sqrt(sum) / den;
}

/* ------------------------------------------------------------------ validation */

static ct_status validate(const ct_pgs_problem *P, const ct_pgs_opts *o, const double *lambda,
                          const ct_pgs_result *res, ct_diag *diag)
{
    if (!P || !o || !lambda || !res)
        return ct_diag_add(diag, CT_EINPUT, "pgs: %s is NULL",
                           !P ? "the problem" : !o ? "the options" : !lambda ? "lambda" : "the result");
    if (P->dim != 2 && P->dim != 3) return ct_diag_add(diag, CT_EINPUT, "pgs: dim must be 2 or 3 (got %d)", P->dim);
    if (P->m < 0) return ct_diag_add(diag, CT_EINPUT, "pgs: the number of contacts must be >= 0 (got %d)", P->m);
    if (o->law != CT_PGS_ADHESIVE_BOX && o->law != CT_PGS_COULOMB_DISK)
        return ct_diag_add(diag, CT_EINPUT, "pgs: unknown law %d", (int)o->law);
    if (o->law == CT_PGS_ADHESIVE_BOX && o->tangential != CT_PGS_TANGENTIAL_MAX && o->tangential != CT_PGS_TANGENTIAL_MIN)
        return ct_diag_add(diag, CT_EINPUT, "pgs: unknown tangential mode %d", (int)o->tangential);
    if (o->max_iter < 1) return ct_diag_add(diag, CT_EINPUT, "pgs: max_iter must be >= 1 (got %d)", o->max_iter);
    if (!(o->omega > 0.0 && o->omega < 2.0))
        return ct_diag_add(diag, CT_EINPUT, "pgs: omega must be in (0, 2) (got %g)", o->omega);
    if (P->m == 0) return CT_OK;
    if (!P->ptr || !P->col || !P->val || !P->q)
        return ct_diag_add(diag, CT_EINPUT, "pgs: the problem's ptr, col, val and q must not be NULL");
    if (P->ptr[0] != 0) return ct_diag_add(diag, CT_EINPUT, "pgs: ptr[0] must be 0 (got %d)", P->ptr[0]);
    const int dim = P->dim;
    for (int i = 0; i < P->m; ++i) {
        if (P->ptr[i + 1] < P->ptr[i])
            return ct_diag_add(diag, CT_EINPUT, "pgs: block row %d: ptr decreases (%d then %d)", i, P->ptr[i], P->ptr[i + 1]);
        int diagk = -1;
        for (int k = P->ptr[i]; k < P->ptr[i + 1]; ++k) {
            const int c = P->col[k];
            if (c < 0 || c >= P->m)
                return ct_diag_add(diag, CT_EINPUT, "pgs: block row %d: column %d outside [0, %d)", i, c, P->m);
            if (k > P->ptr[i] && c <= P->col[k - 1])
                return ct_diag_add(diag, CT_EINPUT, "pgs: block row %d: columns not increasing (%d after %d)", i, c,
                                   P->col[k - 1]);
            if (c == i) diagk = k;
        }
        if (diagk < 0) return ct_diag_add(diag, CT_EINPUT, "pgs: block row %d: the diagonal block is missing", i);
        const double *D = P->val + (size_t)diagk * dim * dim;
        for (int r = 0; r < dim; ++r)
            if (!(D[r * dim + r] > 0.0) || !isfinite(D[r * dim + r]))
                return ct_diag_add(diag, CT_EINPUT, "pgs: contact %d: diagonal entry W[%d][%d] must be finite and > 0 (got %g)",
                                   i, r, r, D[r * dim + r]);
        if (P->mu && (!(P->mu[i] >= 0.0) || !isfinite(P->mu[i])))
            return ct_diag_add(diag, CT_EINPUT, "pgs: contact %d: friction coefficient must be finite and >= 0 (got %g)", i,
                               P->mu[i]);
        if (o->law == CT_PGS_ADHESIVE_BOX && P->adh && (!(P->adh[i] >= 0.0) || !isfinite(P->adh[i])))
            return ct_diag_add(diag, CT_EINPUT, "pgs: contact %d: adhesion factor must be finite and >= 0 (got %g)", i,
                               P->adh[i]);
    }
    return CT_OK;
}

/* ------------------------------------------------------------------ shuffle */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n), n ≥ 1, without modulo bias (rejection). */
static uint32_t uniform_below(uint64_t *s, uint32_t n)
{
    const uint64_t lim = UINT64_MAX - UINT64_MAX % n; /* values below lim map uniformly */
    uint64_t x;
    do x = splitmix64(s);
    while (x >= lim);
    return (uint32_t)(x % n);
}

static void shuffle(int *order, int m, uint64_t *s)
{
    for (int i = m - 1; i > 0; --i) { /* Fisher–Yates */
        const int j = (int)uniform_below(s, (uint32_t)i + 1u);
        const int t = order[i];
        order[i] = order[j], order[j] = t;
    }
}

/* ------------------------------------------------------------------ the laws */

/* λ_t within [−L, L] by the sign of x (steps 6, 7). 0.0 − L: no −0 bound when L = 0. */
static inline double box_tangential(double x, double L) { return x < 0.0 ? fmax(x, 0.0 - L) : fmin(x, L); }

typedef struct sweep_stats {
    double dmax, lmax; /* largest change and largest |λ| of the sweep */
} sweep_stats;

static inline void note(sweep_stats *st, double old, double now)
{
    const double d = fabs(now - old), a = fabs(now);
    if (d > st->dmax) st->dmax = d;
    if (a > st->lmax) st->lmax = a;
}

/* One ADHESIVE_BOX contact: rows n, t (, b) in order. */
static void contact_box(const ct_pgs_problem *P, const ct_pgs_opts *o, int i, const double *D, double *lambda,
                        sweep_stats *st)
{
    const int dim = P->dim;
    const double a = P->adh ? P->adh[i] : 0.0, mu = P->mu ? P->mu[i] : 0.0, w = o->omega;
    double *l = lambda + (size_t)i * dim;
    for (int r = 0; r < dim; ++r) {
        const double Wrr = D[r * dim + r];
        const double old = l[r];
        const double ut = row_velocity(P, i, r, lambda) - Wrr * old; /* ũ_r */
        const double ls = -ut / Wrr;                                 /* λ* */
        double now;
        if (r == 0) { /* eq. 16: λ_n ≥ min(−a ũ_n/(1 + a W_nn), 0) */
            const double lo = a > 0.0 ? fmin(-a * ut / (1.0 + a * Wrr), 0.0) : 0.0;
            now = fmax(ls, lo);
            if (w != 1.0) now = fmax(old + w * (now - old), lo);
        } else {
            const double Lf = l[0] > 0.0 ? mu * l[0] : 0.0; /* μ max(λ_n, 0), λ_n of this sweep */
            const double La = a > 0.0 ? fabs(a * ut) / (1.0 + a * Wrr) : 0.0;
            const double L = o->tangential == CT_PGS_TANGENTIAL_MAX ? fmax(Lf, La) : fmin(Lf, La);
            now = box_tangential(ls, L);
            if (w != 1.0) now = box_tangential(old + w * (now - old), L);
        }
        l[r] = now;
        note(st, old, now);
    }
}

/* λ_T onto the disk of radius R (R ≤ 0: 0). */
static inline void disk_project(int nt, double *t, double R)
{
    if (!(R > 0.0)) {
        for (int r = 0; r < nt; ++r) t[r] = 0.0;
        return;
    }
    double n2 = 0.0;
    for (int r = 0; r < nt; ++r) n2 += t[r] * t[r];
    if (n2 > R * R) {
        const double s = R / sqrt(n2);
        for (int r = 0; r < nt; ++r) t[r] *= s;
    }
}

/* One COULOMB_DISK contact: normal, then the tangential pair with the updated u_T. */
static void contact_disk(const ct_pgs_problem *P, const ct_pgs_opts *o, int i, const double *D, double *lambda,
                         sweep_stats *st)
{
    const int dim = P->dim, nt = dim - 1;
    const double mu = P->mu ? P->mu[i] : 0.0, w = o->omega;
    double *l = lambda + (size_t)i * dim;

    const double Wnn = D[0], oldn = l[0];
    double ln = fmax(0.0, oldn - row_velocity(P, i, 0, lambda) / Wnn);
    if (w != 1.0) ln = fmax(0.0, oldn + w * (ln - oldn));
    l[0] = ln;
    note(st, oldn, ln);

    double trT = 0.0;
    for (int r = 1; r < dim; ++r) trT += D[r * dim + r];
    const double rho = nt / trT; /* the inverse of the mean tangential diagonal entry */
    const double R = mu * ln;    /* ln ≥ 0 */
    double old[2], t[2];
    for (int r = 0; r < nt; ++r) old[r] = l[1 + r];
    for (int r = 0; r < nt; ++r) t[r] = old[r] - rho * row_velocity(P, i, 1 + r, lambda);
    disk_project(nt, t, R);
    if (w != 1.0) {
        for (int r = 0; r < nt; ++r) t[r] = old[r] + w * (t[r] - old[r]);
        disk_project(nt, t, R);
    }
    for (int r = 0; r < nt; ++r) l[1 + r] = t[r], note(st, old[r], t[r]);
}

/* ------------------------------------------------------------------ solve */

ct_status ct_pgs_solve(const ct_pgs_problem *P, const ct_pgs_opts *opts, double *lambda, double *u, double *hist,
                       ct_pgs_result *res, ct_diag *diag)
{
    ct_status st = validate(P, opts, lambda, res, diag);
    if (st != CT_OK) return st;
    const int m = P->m, dim = P->dim, d2 = dim * dim;
    const int disk = opts->law == CT_PGS_COULOMB_DISK;

    /* one block: diagonal block offsets, visiting order, the residual's velocities */
    const int need_u = disk && !u;
    size_t bytes = (size_t)m * 2 * sizeof(int);
    const size_t uoff = (bytes + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    if (need_u) bytes = uoff + (size_t)m * dim * sizeof(double);
    void *mem = bytes ? malloc(bytes) : NULL;
    if (bytes && !mem) return ct_diag_add(diag, CT_ENOMEM, "pgs: out of memory (%zu bytes)", bytes);
    int *dpos = mem, *order = mem ? dpos + m : NULL; /* m = 0: no memory, no arithmetic on NULL */
    double *ubuf = disk ? (need_u && mem ? (double *)(void *)((char *)mem + uoff) : u) : NULL;
    for (int i = 0; i < m; ++i) {
        order[i] = i;
        for (int k = P->ptr[i]; k < P->ptr[i + 1]; ++k)
            if (P->col[k] == i) dpos[i] = k;
    }
    uint64_t seed = (uint64_t)opts->seed;

    int it = 0, conv = 0;
    double resid = 0.0;
    while (it < opts->max_iter) {
        if (opts->shuffle) shuffle(order, m, &seed);
        sweep_stats ss = {0.0, 0.0};
        for (int k = 0; k < m; ++k) {
            const int i = order[k];
            const double *D = P->val + (size_t)dpos[i] * d2;
            if (disk) contact_disk(P, opts, i, D, lambda, &ss);
            else contact_box(P, opts, i, D, lambda, &ss);
        }
        if (disk) {
            ct_pgs_velocity(P, lambda, ubuf);
            resid = ct_pgs_natural_map_residual(P, lambda, ubuf);
        } else {
            resid = ss.dmax / fmax(ss.lmax, PGS_TINY);
        }
        if (hist) hist[it] = resid;
        ++it;
        if (resid <= opts->tol) {
            conv = 1;
            break;
        }
    }
    if (u && !disk) ct_pgs_velocity(P, lambda, u); /* disk: u already holds W λ + q of the last sweep */
    free(mem);
    res->iters = it;
    res->converged = conv;
    res->residual = resid;
    return CT_OK;
}
