/* friction.c — lagged, mollified IPC friction (Li, Friction (CMU 15-763); IPC 2020 §5). See ct_friction.h. */
#include "collisions_internal.h" /* ct_collision_mollifier */
#include "contactlab/ct_friction.h"

#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_distance.h"
#include "contactlab/ct_parallel.h"

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
    free(fs->p);
    memset(fs, 0, sizeof *fs);
}

static int has_adhesion(const ct_friction_pair *p) { return p->lambda_a != 0.0 && p->mu_a != 0.0; }

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

/* Pairs whose normal force is negligible carry no friction: |λ| <= CT_FRICTION_NEGLIGIBLE × the
 * largest |λ| of the set (the same for λ_a) is set to 0 and a pair with neither is dropped. They
 * are the nearly parallel edge–edge terms, whose mollifier is ~1e-27 on aligned grids: each
 * changes the friction force by less than 1e-14 of the largest pair's, and dropping them keeps the
 * friction kernels to the pairs that press (ipc-toolkit drops mollified edge–edge pairs outright). */
static void drop_negligible(ct_friction_set *fs)
{
    double lmax = 0.0, amax = 0.0;
    for (long i = 0; i < fs->n; ++i) {
        lmax = fmax(lmax, fabs(fs->p[i].lambda));
        amax = fmax(amax, fabs(fs->p[i].lambda_a));
    }
    long k = 0;
    for (long i = 0; i < fs->n; ++i) {
        ct_friction_pair *p = &fs->p[i];
        if (fabs(p->lambda) <= CT_FRICTION_NEGLIGIBLE * lmax) p->lambda = 0.0, p->mu = 0.0;
        if (fabs(p->lambda_a) <= CT_FRICTION_NEGLIGIBLE * amax) p->lambda_a = 0.0, p->mu_a = 0.0;
        if (p->lambda == 0.0 && p->lambda_a == 0.0) continue;
        if (k != i) fs->p[k] = *p;
        k++;
    }
    fs->n = k;
}

ct_status ct_tangent_set_build(ct_friction_set *fs, const ct_collision_set *cs, const ct_contact_mesh *cm,
                               const ct_obstacle *obs, const double *x_lag, ct_density_fn normal, const void *nctx,
                               ct_mu_fn mu, const void *muctx, const ct_tangent_adhesion *adh)
{
    const int dim = cm->dim;
    if (fs->cap < cs->n) {
        ct_friction_pair *p = realloc(fs->p, (size_t)(cs->n ? cs->n : 1) * sizeof *p);
        if (!p) return CT_ENOMEM;
        fs->p = p;
        fs->cap = cs->n;
    }
    fs->n = 0;
    fs->eps_a = adh ? adh->eps_a : 0.0;
    /* the normal forces, then the closest points and tangent bases of the pairs that keep one */
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        const double m = mu ? mu(muctx, c) : 0.0, ma = adh ? adh->mu_a(adh->mctx, c) : 0.0;
        if (!(m > 0.0) && !(ma > 0.0)) continue;
        /* a nearly parallel edge–edge pair whose mollifier is negligible presses with that fraction
         * of its unmollified force: no normal force (decided without the distance) */
        if (ct_collision_mollifier_value(c, x_lag) <= CT_FRICTION_NEGLIGIBLE) continue;
        double lambda = 0.0, lambda_a = 0.0;
        if (m > 0.0) {
            lambda = ct_collision_normal_force(c, cm, obs, x_lag, normal, nctx);
            if (!isfinite(lambda)) lambda = 0.0;
        }
        if (ma > 0.0) {
            lambda_a = ct_collision_normal_force(c, cm, obs, x_lag, adh->lambda, adh->lctx);
            if (!isfinite(lambda_a)) lambda_a = 0.0;
        }
        if (lambda == 0.0 && lambda_a == 0.0) continue;
        ct_friction_pair *p = &fs->p[fs->n++];
        p->c = *c;
        p->lambda = lambda;
        p->mu = lambda != 0.0 ? m : 0.0;
        p->lambda_a = lambda_a;
        p->mu_a = lambda_a != 0.0 ? ma : 0.0;
    }
    drop_negligible(fs);
    for (long i = 0; i < fs->n; ++i) {
        ct_friction_pair *p = &fs->p[i];
        const ct_collision *c = &p->c;
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

ct_status ct_friction_set_build(ct_friction_set *fs, const ct_collision_set *cs, const ct_contact_mesh *cm,
                                const ct_obstacle *obs, const double *x_lag, ct_density_fn normal,
                                const void *nctx, ct_mu_fn mu, const void *muctx)
{
    return ct_tangent_set_build(fs, cs, cm, obs, x_lag, normal, nctx, mu, muctx, NULL);
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
    const double y = unorm(u, a->dim - 1);
    double e = fp->mu * fp->lambda * ct_friction_f0(y, a->eps);
    if (has_adhesion(fp)) e += fp->mu_a * fp->lambda_a * ct_adhesion_ft0(y, a->fs->eps_a);
    return e;
}

double ct_friction_energy(const ct_friction_set *fs, int dim, const double *x, const double *x_prev, double eps,
                          int threads)
{
    energy_args a = {fs, dim, x, x_prev, eps};
    return ct_sum_fixed_chunks(fs->n, energy_term, &a, threads);
}

void ct_friction_term_grad(const ct_friction_pair *p, int dim, const double *x, const double *x_prev, double eps,
                           double eps_a, unsigned parts, double *g)
{
    double u[2];
    ct_friction_u(p, dim, x, x_prev, u);
    const double y = unorm(u, dim - 1);
    double a = parts & CT_TANGENT_FRICTION ? p->mu * p->lambda * ct_friction_f1_over_y(y, eps) : 0.0;
    if ((parts & CT_TANGENT_ADHESION) && has_adhesion(p)) a += p->mu_a * p->lambda_a * ct_adhesion_ft_over_y(y, eps_a);
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
    for (long i = 0; i < fs->n; ++i) ct_friction_term_grad(&fs->p[i], dim, x, x_prev, eps, fs->eps_a, CT_TANGENT_ALL, loc + 12 * i);
    for (long i = 0; i < fs->n; ++i) {
        const ct_friction_pair *p = &fs->p[i];
        int nv = ct_collision_nverts(&p->c);
        for (int k = 0; k < nv; ++k)
            for (int d = 0; d < dim; ++d) g[(size_t)dim * p->c.v[k] + d] += loc[12 * i + dim * k + d];
    }
    free(loc);
    return CT_OK;
}

/* Whether pair p contributes a Hessian block: a friction-only block with λ ≤ 0 is NSD (projected
 * to zero); a block with tangential adhesion can have a positive part for either sign. */
static int has_block(const ct_friction_pair *p) { return has_adhesion(p) || p->lambda > 0.0; }

/* The three Hessians of friction_hessian: per pair projected to PSD (the exact block of a pair
 * with λ > 0 and no adhesion), the isotropic majorizer, and the exact one (every pair, nothing
 * projected). */
enum { FR_PSD, FR_MAJORIZER, FR_EXACT };

/* Whether pair p contributes a block to the Hessian of mode (the exact one: every pair that has a
 * potential at all). */
static int has_block_in(const ct_friction_pair *p, int mode)
{
    return mode == FR_EXACT ? p->lambda != 0.0 || has_adhesion(p) : has_block(p);
}

static double friction_f1_prime(double y, double eps) { return y >= eps ? 0.0 : 2.0 / eps - 2.0 * y / (eps * eps); }

/* K = T P(M) Tᵀ for a pair with tangential adhesion: M = ∇²_u of μλ f0(|u|) + μ_aλ_a f_t0(|u|) has
 * the eigenvalue μλ f1' + μ_aλ_a f_t' along u and μλ f1/y + μ_aλ_a f_t/y across it (at y = 0 both
 * are μλ 2/ε + μ_aλ_a 2/ε_a); P keeps the positive parts. */
static void joint_block(const ct_friction_pair *p, int dim, const double *u, double y, double eps, double eps_a,
                        int mode, double *K)
{
    const double s = p->mu * p->lambda, sa = p->mu_a * p->lambda_a;
    const int m = dim - 1;
    double e[2], V[4]; /* eigenvalues and unit eigenvectors (columns) in tangent coordinates */
    double e_par = y > 0.0 ? s * friction_f1_prime(y, eps) + sa * ct_adhesion_ft_prime(y, eps_a)
                           : s * 2.0 / eps + sa * 2.0 / eps_a;
    if (mode == FR_MAJORIZER) /* the across-slip curvature along the slip too (ct_friction_hessian_majorizer) */
        e_par = fmax(e_par, s * ct_friction_f1_over_y(y, eps) + sa * ct_adhesion_ft_over_y(y, eps_a));
    if (m == 1) {
        e[0] = mode == FR_EXACT ? e_par : fmax(0.0, e_par);
        V[0] = 1.0;
    } else {
        double uh[2] = {1.0, 0.0};
        if (y > 0.0) uh[0] = u[0] / y, uh[1] = u[1] / y;
        const double e_across = s * ct_friction_f1_over_y(y, eps) + sa * ct_adhesion_ft_over_y(y, eps_a);
        e[0] = mode == FR_EXACT ? e_par : fmax(0.0, e_par);
        e[1] = mode == FR_EXACT ? e_across : fmax(0.0, e_across);
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

static ct_status friction_hessian(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                                  double eps, int threads, int mode, ct_triplets *H)
{
    /* Pair i with λ > 0 owns the (nv·dim)² triplets at off[i] (only those with row <= col when
     * H->upper; the order of appending the blocks one by one), so the blocks are computed in
     * parallel straight into H: no per-call scratch of 144 doubles per pair, and the same
     * triplets for any thread count. */
    size_t *off = malloc(((size_t)fs->n + 1) * sizeof *off);
    if (!off) return CT_ENOMEM;
    off[0] = H->n;
    const size_t nblk0 = H->nblk; /* (the blocks noted below are dropped again on failure) */
    for (long i = 0; i < fs->n; ++i) {
        const ct_friction_pair *p = &fs->p[i];
        const int nv = ct_collision_nverts(&p->c);
        size_t cnt = 0;
        if (has_block_in(p, mode)) {
            cnt = ct_triplet_block_count(p->c.v, nv, dim, H->upper);
            if (ct_triplets_note_block(H, off[i], p->c.v, nv, dim, (size_t)(fs->n - i)) != CT_OK) {
                H->nblk = nblk0;
                free(off);
                return CT_ENOMEM;
            }
        }
        off[i + 1] = off[i] + cnt;
    }
    ct_status st = ct_triplets_reserve(H, off[fs->n]);
    if (st != CT_OK) {
        H->nblk = nblk0;
        free(off);
        return st;
    }
#pragma omp parallel for schedule(dynamic, 32) num_threads(ct_threads(threads))
    for (long i = 0; i < fs->n; ++i) {
        const ct_friction_pair *p = &fs->p[i];
        if (!has_block_in(p, mode)) continue;
        int nv = ct_collision_nverts(&p->c), n = nv * dim;
        double Hl[144];
        double u[2];
        ct_friction_u(p, dim, x, x_prev, u);
        double y = unorm(u, dim - 1);
        double K[9];
        if (has_adhesion(p)) {
            joint_block(p, dim, u, y, eps, fs->eps_a, mode, K);
        } else {
            /* M in tangent coordinates: (f1/y) I + ((f1' y − f1)/y³) u uᵀ; the majorizer drops the
             * second part (c2 ≤ 0) */
            double M[4] = {0, 0, 0, 0};
            int m = dim - 1;
            double f1y = ct_friction_f1_over_y(y, eps);
            double c2 = y >= eps ? -1.0 / (y * y * y) : -1.0 / (eps * eps * (y > 0 ? y : 1.0));
            if ((y < eps && y == 0.0) || mode == FR_MAJORIZER) c2 = 0.0;
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
        ct_triplets_put_block(H, off[i], p->c.v, nv, dim, Hl); /* (lazy: the values alone, the block is noted) */
    }
    H->n = off[fs->n];
    free(off);
    return CT_OK;
}

ct_status ct_friction_hessian(const ct_friction_set *fs, int dim, const double *x, const double *x_prev, double eps,
                              int threads, ct_triplets *H)
{
    return friction_hessian(fs, dim, x, x_prev, eps, threads, FR_PSD, H);
}

ct_status ct_friction_hessian_majorizer(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                                        double eps, int threads, ct_triplets *H)
{
    return friction_hessian(fs, dim, x, x_prev, eps, threads, FR_MAJORIZER, H);
}

ct_status ct_friction_hessian_exact(const ct_friction_set *fs, int dim, const double *x, const double *x_prev,
                                    double eps, int threads, ct_triplets *H)
{
    return friction_hessian(fs, dim, x, x_prev, eps, threads, FR_EXACT, H);
}
