/* friction.c — lagged, mollified IPC friction (paper 003; IPC 2020 §5). See ct_friction.h. */
#include "contactlab/ct_friction.h"

#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_distance.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double ct_friction_f0(double y, double eps)
{
    if (y >= eps) return y;
    return -y * y * y / (3.0 * eps * eps) + y * y / eps + eps / 3.0;
}

double ct_friction_f1(double y, double eps)
{
    if (y >= eps) return 1.0;
    return 2.0 * y / eps - y * y / (eps * eps);
}

double ct_friction_f1_over_y(double y, double eps)
{
    if (y >= eps) return 1.0 / y;
    return 2.0 / eps - y / (eps * eps);
}

void ct_friction_set_init(ct_friction_set *fs) { memset(fs, 0, sizeof *fs); }
void ct_friction_set_free(ct_friction_set *fs)
{
    const int profile = fs->profile;
    free(fs->p);
    memset(fs, 0, sizeof *fs);
    fs->profile = profile;
}

/* The profile's potential f0 and its f1/y. */
static double prof_f0(int profile, double y, double eps)
{
    return profile == CT_TANGENT_ADHESION ? ct_adhesion_ft0(y, eps) : ct_friction_f0(y, eps);
}

static double prof_f1_over_y(int profile, double y, double eps)
{
    return profile == CT_TANGENT_ADHESION ? ct_adhesion_ft_over_y(y, eps) : ct_friction_f1_over_y(y, eps);
}

static const double *X(const double *x, int dim, int v) { return x + (size_t)dim * (size_t)v; }

/* Closest-point coefficients of a collision at x: Σ coef_k x_k = (closest point on the first
 * primitive) − (closest point on the second). */
static void closest_coef(const ct_collision *c, int dim, const double *x, double *coef)
{
    const int *v = c->v;
    memset(coef, 0, 4 * sizeof *coef);
    switch (c->kind) {
    case CT_COL_PP: coef[0] = 1.0, coef[1] = -1.0; break;
    case CT_COL_PE: {
        double s;
        ct_pe_closest(dim, X(x, dim, v[0]), X(x, dim, v[1]), X(x, dim, v[2]), &s);
        coef[0] = 1.0, coef[1] = -(1.0 - s), coef[2] = -s;
        break;
    }
    case CT_COL_PT: {
        double b1, b2;
        ct_pt_closest(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), &b1, &b2);
        coef[0] = 1.0, coef[1] = -(1.0 - b1 - b2), coef[2] = -b1, coef[3] = -b2;
        break;
    }
    case CT_COL_EE: {
        double s, r;
        ct_ee_closest(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), &s, &r);
        coef[0] = 1.0 - s, coef[1] = s, coef[2] = -(1.0 - r), coef[3] = -r;
        break;
    }
    default: coef[0] = 1.0; break;
    }
}

/* Orthonormal basis T (dim × (dim-1), column-major) of the plane normal to n. */
static void tangent_basis(int dim, const double *n, double *T)
{
    if (dim == 2) {
        double l = hypot(n[0], n[1]);
        T[0] = -n[1] / l, T[1] = n[0] / l;
        return;
    }
    double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double m[3] = {n[0] / l, n[1] / l, n[2] / l};
    /* the coordinate axis least aligned with n */
    int k = fabs(m[0]) <= fabs(m[1]) ? (fabs(m[0]) <= fabs(m[2]) ? 0 : 2) : (fabs(m[1]) <= fabs(m[2]) ? 1 : 2);
    double a[3] = {0, 0, 0};
    a[k] = 1.0;
    double t1[3] = {m[1] * a[2] - m[2] * a[1], m[2] * a[0] - m[0] * a[2], m[0] * a[1] - m[1] * a[0]};
    double l1 = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
    for (int i = 0; i < 3; ++i) t1[i] /= l1;
    double t2[3] = {m[1] * t1[2] - m[2] * t1[1], m[2] * t1[0] - m[0] * t1[2], m[0] * t1[1] - m[1] * t1[0]};
    for (int i = 0; i < 3; ++i) T[i] = t1[i], T[3 + i] = t2[i];
}

ct_status ct_friction_set_build(ct_friction_set *fs, const ct_collision_set *cs, const ct_contact_mesh *cm,
                                const ct_obstacle *obs, const double *x_lag, ct_density_fn normal,
                                const void *nctx, ct_mu_fn mu, const void *muctx)
{
    const int dim = cm->dim;
    if (fs->cap < cs->n) {
        ct_friction_pair *p = realloc(fs->p, (size_t)(cs->n ? cs->n : 1) * sizeof *p);
        if (!p) return CT_ENOMEM;
        fs->p = p;
        fs->cap = cs->n;
    }
    fs->n = 0;
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        double m = mu(muctx, c);
        if (!(m > 0.0)) continue;
        double lambda = ct_collision_normal_force(c, cm, obs, x_lag, normal, nctx);
        if (lambda == 0.0 || !isfinite(lambda)) continue;
        ct_friction_pair *p = &fs->p[fs->n++];
        p->c = *c;
        p->lambda = lambda;
        p->mu = m;
        closest_coef(c, dim, x_lag, p->coef);
        /* normal: closest-point difference (obstacles: the plane normal) */
        double nrm[3] = {0, 0, 0};
        if (c->kind == CT_COL_PH) {
            for (int d = 0; d < dim; ++d) nrm[d] = obs[c->v[1]].normal[d];
        } else {
            int nv = ct_collision_nverts(c);
            for (int k = 0; k < nv; ++k)
                for (int d = 0; d < dim; ++d) nrm[d] += p->coef[k] * X(x_lag, dim, c->v[k])[d];
        }
        tangent_basis(dim, nrm, p->T);
    }
    return CT_OK;
}

void ct_friction_u(const ct_friction_pair *p, int dim, const double *x, const double *x_prev, double *u)
{
    double r[3] = {0, 0, 0};
    int nv = ct_collision_nverts(&p->c);
    for (int k = 0; k < nv; ++k) {
        int v = p->c.v[k];
        for (int d = 0; d < dim; ++d) r[d] += p->coef[k] * (X(x, dim, v)[d] - X(x_prev, dim, v)[d]);
    }
    for (int j = 0; j < dim - 1; ++j) {
        u[j] = 0.0;
        for (int d = 0; d < dim; ++d) u[j] += p->T[d + dim * j] * r[d];
    }
}

static double unorm(const double *u, int m) { return m == 1 ? fabs(u[0]) : hypot(u[0], u[1]); }

typedef struct {
    const ct_friction_set *fs;
    int dim;
    const double *x, *x_prev;
    double eps;
} energy_args;

static double energy_term(long i, const void *p)
{
    const energy_args *a = p;
    const ct_friction_pair *fp = &a->fs->p[i];
    double u[2];
    ct_friction_u(fp, a->dim, a->x, a->x_prev, u);
    return fp->mu * fp->lambda * prof_f0(a->fs->profile, unorm(u, a->dim - 1), a->eps);
}

double ct_friction_energy(const ct_friction_set *fs, int dim, const double *x, const double *x_prev, double eps,
                          int threads)
{
    energy_args a = {fs, dim, x, x_prev, eps};
    return ct_sum_fixed_chunks(fs->n, energy_term, &a, threads);
}

void ct_friction_term_grad(const ct_friction_pair *p, int profile, int dim, const double *x, const double *x_prev,
                           double eps, double *g)
{
    double u[2];
    ct_friction_u(p, dim, x, x_prev, u);
    double a = p->mu * p->lambda * prof_f1_over_y(profile, unorm(u, dim - 1), eps);
    double t[3] = {0, 0, 0}; /* a · T u */
    for (int d = 0; d < dim; ++d)
        for (int j = 0; j < dim - 1; ++j) t[d] += a * p->T[d + dim * j] * u[j];
    int nv = ct_collision_nverts(&p->c);
    for (int k = 0; k < nv; ++k)
        for (int d = 0; d < dim; ++d) g[dim * k + d] = p->coef[k] * t[d];
}

ct_status ct_friction_gradient(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                               double eps, int threads, double *g)
{
    double *loc = malloc(((size_t)fs->n * 12 + 1) * sizeof *loc);
    if (!loc) return CT_ENOMEM;
#pragma omp parallel for schedule(dynamic, 64) num_threads(ct_threads(threads))
    for (long i = 0; i < fs->n; ++i) ct_friction_term_grad(&fs->p[i], fs->profile, dim, x, x_prev, eps, loc + 12 * i);
    for (long i = 0; i < fs->n; ++i) {
        const ct_friction_pair *p = &fs->p[i];
        int nv = ct_collision_nverts(&p->c);
        for (int k = 0; k < nv; ++k)
            for (int d = 0; d < dim; ++d) g[(size_t)dim * p->c.v[k] + d] += loc[12 * i + dim * k + d];
    }
    free(loc);
    return CT_OK;
}

/* Whether pair p contributes a Hessian block: friction blocks with λ ≤ 0 are NSD (projected to
 * zero); a tangential adhesion block can have a positive part for either sign of λ. */
static int has_block(int profile, const ct_friction_pair *p)
{
    return profile == CT_TANGENT_ADHESION ? p->lambda != 0.0 && p->mu != 0.0 : p->lambda > 0.0;
}

/* K = T P(μλ M) Tᵀ for the tangential adhesion profile: M = ∇²_u f_t0(|u|) has the eigenvalue
 * f_t'(y) along u and f_t(y)/y across it (both 2/ε at y = 0); P keeps the positive parts. */
static void adhesion_block(const ct_friction_pair *p, int dim, const double *u, double y, double eps, double *K)
{
    const double s = p->mu * p->lambda;
    const int m = dim - 1;
    double e[2], V[4]; /* eigenvalues and unit eigenvectors (columns) in tangent coordinates */
    if (m == 1) {
        e[0] = fmax(0.0, s * ct_adhesion_ft_prime(y, eps));
        V[0] = 1.0;
    } else {
        double uh[2] = {1.0, 0.0};
        if (y > 0.0) uh[0] = u[0] / y, uh[1] = u[1] / y;
        e[0] = fmax(0.0, s * (y > 0.0 ? ct_adhesion_ft_prime(y, eps) : 2.0 / eps));
        e[1] = fmax(0.0, s * ct_adhesion_ft_over_y(y, eps));
        V[0] = uh[0], V[1] = uh[1], V[2] = -uh[1], V[3] = uh[0];
    }
    double W[6]; /* T V, dim × m */
    for (int j = 0; j < m; ++j)
        for (int r = 0; r < dim; ++r) {
            double sum = 0.0;
            for (int a = 0; a < m; ++a) sum += p->T[r + dim * a] * V[a + m * j];
            W[r + dim * j] = sum;
        }
    for (int r = 0; r < dim; ++r)
        for (int c = 0; c < dim; ++c) {
            double sum = 0.0;
            for (int j = 0; j < m; ++j) sum += e[j] * W[r + dim * j] * W[c + dim * j];
            K[r + dim * c] = sum;
        }
}

ct_status ct_friction_hessian(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                              double eps, int threads, ct_triplets *H)
{
    /* Pair i with λ > 0 owns the (nv·dim)² triplets at off[i] (only those with row <= col when
     * H->upper; the order of appending the blocks one by one), so the blocks are computed in
     * parallel straight into H: no per-call scratch of 144 doubles per pair, and the same
     * triplets for any thread count. */
    size_t *off = malloc(((size_t)fs->n + 1) * sizeof *off);
    if (!off) return CT_ENOMEM;
    off[0] = H->n;
    for (long i = 0; i < fs->n; ++i) {
        const ct_friction_pair *p = &fs->p[i];
        const int nv = ct_collision_nverts(&p->c);
        size_t cnt = 0;
        if (has_block(fs->profile, p)) {
            if (!H->upper) cnt = (size_t)(nv * dim) * (size_t)(nv * dim);
            else
                for (int b = 0; b < nv; ++b)
                    for (int a = 0; a < nv; ++a)
                        for (int j = 0; j < dim; ++j)
                            for (int k = 0; k < dim; ++k) cnt += p->c.v[a] * dim + k <= p->c.v[b] * dim + j;
        }
        off[i + 1] = off[i] + cnt;
    }
    ct_status st = ct_triplets_reserve(H, off[fs->n]);
    if (st != CT_OK) {
        free(off);
        return st;
    }
#pragma omp parallel for schedule(dynamic, 32) num_threads(ct_threads(threads))
    for (long i = 0; i < fs->n; ++i) {
        const ct_friction_pair *p = &fs->p[i];
        if (!has_block(fs->profile, p)) continue;
        int nv = ct_collision_nverts(&p->c), n = nv * dim;
        double Hl[144];
        double u[2];
        ct_friction_u(p, dim, x, x_prev, u);
        double y = unorm(u, dim - 1);
        double K[9];
        if (fs->profile == CT_TANGENT_ADHESION) {
            adhesion_block(p, dim, u, y, eps, K);
        } else {
            /* M in tangent coordinates: (f1/y) I + ((f1' y − f1)/y³) u uᵀ */
            double M[4] = {0, 0, 0, 0};
            int m = dim - 1;
            double f1y = ct_friction_f1_over_y(y, eps);
            double c2 = y >= eps ? -1.0 / (y * y * y) : -1.0 / (eps * eps * (y > 0 ? y : 1.0));
            if (y < eps && y == 0.0) c2 = 0.0;
            for (int a = 0; a < m; ++a)
                for (int b = 0; b < m; ++b) M[a + m * b] = (a == b ? f1y : 0.0) + c2 * u[a] * u[b];
            /* K = μλ T M Tᵀ (dim × dim) */
            for (int r = 0; r < dim; ++r)
                for (int c = 0; c < dim; ++c) {
                    double sum = 0.0;
                    for (int a = 0; a < m; ++a)
                        for (int b = 0; b < m; ++b) sum += p->T[r + dim * a] * M[a + m * b] * p->T[c + dim * b];
                    K[r + dim * c] = p->mu * p->lambda * sum;
                }
        }
        for (int k = 0; k < nv; ++k)
            for (int l = 0; l < nv; ++l)
                for (int r = 0; r < dim; ++r)
                    for (int c = 0; c < dim; ++c)
                        Hl[(dim * k + r) + n * (dim * l + c)] = p->coef[k] * p->coef[l] * K[r + dim * c];
        /* the block in the order of ct_triplets_add_block */
        size_t t = off[i];
        for (int b = 0; b < nv; ++b)
            for (int j = 0; j < dim; ++j) {
                const int col = p->c.v[b] * dim + j, lj = b * dim + j;
                for (int a = 0; a < nv; ++a)
                    for (int k = 0; k < dim; ++k) {
                        if (H->upper && p->c.v[a] * dim + k > col) continue;
                        H->row[t] = p->c.v[a] * dim + k;
                        H->col[t] = col;
                        H->val[t++] = Hl[(a * dim + k) + n * lj];
                    }
            }
    }
    H->n = off[fs->n];
    free(off);
    return CT_OK;
}
