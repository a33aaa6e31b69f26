/* collisions_eval.c — distances, energies and gradients of collision terms, Σ_k w_k m_k ψ(d_k²)
 * (ct_collisions.h): per-term work in parallel, sums and scatters in set order, so the results do
 * not depend on the thread count.
 */
#include "collisions_internal.h"

#include "contactlab/ct_distance.h"
#include "contactlab/ct_parallel.h"

#include <math.h>
#include <stdlib.h>

int ct_collision_nverts(const ct_collision *c)
{
    switch (c->kind) {
    case CT_COL_PP: return 2;
    case CT_COL_PE: return 3;
    case CT_COL_PT:
    case CT_COL_EE: return 4;
    default: return 1; /* PH */
    }
}

double ct_collision_d2(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                       const double *x, double *g, double *H)
{
    const int dim = cm->dim;
    const int *v = c->v;
    switch (c->kind) {
    case CT_COL_PP: return ct_pp_d2(dim, X(x, dim, v[0]), X(x, dim, v[1]), g, H);
    case CT_COL_PE:
        return ct_pe_d2(dim, X(x, dim, v[0]), X(x, dim, v[1]), X(x, dim, v[2]), (ct_pe_type)c->type, g, H);
    case CT_COL_PT:
        return ct_pt_d2(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), (ct_pt_type)c->type, g, H);
    case CT_COL_EE:
        return ct_ee_d2(X(x, 3, v[0]), X(x, 3, v[1]), X(x, 3, v[2]), X(x, 3, v[3]), (ct_ee_type)c->type, g, H);
    default: {
        const ct_obstacle *o = &obs[v[1]];
        const double *P = X(x, dim, v[0]);
        double d = 0.0;
        for (int i = 0; i < dim; ++i) d += o->normal[i] * (P[i] - o->point[i]);
        if (g)
            for (int i = 0; i < dim; ++i) g[i] = 2.0 * d * o->normal[i];
        if (H)
            for (int i = 0; i < dim; ++i)
                for (int j = 0; j < dim; ++j) H[i + dim * j] = 2.0 * o->normal[i] * o->normal[j];
        return d * d;
    }
    }
}

/* (collisions_internal.h) */
double ct_collision_mollifier(const ct_collision *c, const double *x, double *gm)
{
    if (c->kind != CT_COL_EE || !(c->eps_x > 0)) return 1.0;
    const int *v = c->v;
    const double *a0 = X(x, 3, v[0]), *a1 = X(x, 3, v[1]), *b0 = X(x, 3, v[2]), *b1 = X(x, 3, v[3]);
    double gc[12], m1;
    const double cc = ee_cross2_grad(a0, a1, b0, b1, gm ? gc : NULL);
    const double m = ee_mollifier_of(cc, c->eps_x, gm ? &m1 : NULL, NULL);
    if (gm)
        for (int i = 0; i < 12; ++i) gm[i] = m1 * gc[i];
    return m;
}

static double term_energy(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs, const double *x,
                          ct_density_fn f, const void *ctx)
{
    double s = ct_collision_d2(c, cm, obs, x, NULL, NULL);
    double psi = f(ctx, c, s, NULL, NULL);
    if (psi == 0.0) return 0.0;
    return c->w * ct_collision_mollifier_value(c, x) * psi;
}

void ct_collision_term_grad(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                            const double *x, ct_density_fn f, const void *ctx, double *g)
{
    const int n = ct_collision_nverts(c) * cm->dim;
    double gs[12], gm[12];
    double s = ct_collision_d2(c, cm, obs, x, gs, NULL);
    double ps;
    double psi = f(ctx, c, s, &ps, NULL);
    double m = ct_collision_mollifier(c, x, c->kind == CT_COL_EE ? gm : NULL);
    for (int i = 0; i < n; ++i) {
        g[i] = c->w * m * ps * gs[i];
        if (c->kind == CT_COL_EE && c->eps_x > 0) g[i] += c->w * psi * gm[i];
    }
}

typedef struct {
    const ct_collision_set *cs;
    const ct_contact_mesh *cm;
    const ct_obstacle *obs;
    const double *x;
    ct_density_fn f;
    const void *ctx;
} energy_args;

static double energy_term(long i, const void *p)
{
    const energy_args *a = p;
    return term_energy(&a->cs->c[i], a->cm, a->obs, a->x, a->f, a->ctx);
}

double ct_collision_energy(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                           const double *x, ct_density_fn f, const void *ctx, int threads)
{
    energy_args a = {cs, cm, obs, x, f, ctx};
    return ct_sum_fixed_chunks(cs->n, energy_term, &a, threads);
}

/* global dof of stencil entry i (vertex-major) */
static int stencil_vertex(const ct_collision *c, int k) { return c->v[k]; }

ct_status ct_collision_gradient(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                const double *x, ct_density_fn f, const void *ctx, int threads, double *g)
{
    double *loc = malloc(((size_t)cs->n * 12 + 1) * sizeof *loc);
    if (!loc) return CT_ENOMEM;
#pragma omp parallel for schedule(dynamic, 64) num_threads(ct_threads(threads))
    for (long i = 0; i < cs->n; ++i) ct_collision_term_grad(&cs->c[i], cm, obs, x, f, ctx, loc + 12 * i);
    ct_collision_gradient_add(cs, cm, loc, g);
    free(loc);
    return CT_OK;
}

void ct_collision_gradient_add(const ct_collision_set *cs, const ct_contact_mesh *cm, const double *loc, double *g)
{
    const int dim = cm->dim;
    for (long i = 0; i < cs->n; ++i) {
        const ct_collision *c = &cs->c[i];
        int nv = ct_collision_nverts(c);
        for (int k = 0; k < nv; ++k) {
            int v = stencil_vertex(c, k);
            for (int d = 0; d < dim; ++d) g[(size_t)dim * v + d] += loc[12 * i + dim * k + d];
        }
    }
}

/* One term's energy (the expression of term_energy) and gradient (that of ct_collision_term_grad),
 * from one distance, density and mollifier evaluation. */
typedef struct {
    energy_args e;
    double *loc, *s;
} energy_grad_args;

static double energy_grad_term(long i, const void *p)
{
    const energy_grad_args *a = p;
    const ct_collision *c = &a->e.cs->c[i];
    const int n = ct_collision_nverts(c) * a->e.cm->dim;
    const int moll = c->kind == CT_COL_EE && c->eps_x > 0;
    double gs[12], gm[12], ps, *g = a->loc + 12 * i;
    const double s = ct_collision_d2(c, a->e.cm, a->e.obs, a->e.x, gs, NULL);
    if (a->s) a->s[i] = s;
    const double psi = a->e.f(a->e.ctx, c, s, &ps, NULL);
    const double m = ct_collision_mollifier(c, a->e.x, c->kind == CT_COL_EE ? gm : NULL);
    for (int k = 0; k < n; ++k) {
        g[k] = c->w * m * ps * gs[k];
        if (moll) g[k] += c->w * psi * gm[k];
    }
    return psi == 0.0 ? 0.0 : c->w * m * psi;
}

double ct_collision_energy_grad(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                const double *x, ct_density_fn f, const void *ctx, int threads, double *loc,
                                double *s)
{
    energy_grad_args a = {{cs, cm, obs, x, f, ctx}, loc, s};
    return ct_sum_fixed_chunks(cs->n, energy_grad_term, &a, threads);
}

double ct_collision_normal_force(const ct_collision *c, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                 const double *x, ct_density_fn f, const void *ctx)
{
    /* E = w m ψ(d²): ∂E/∂d = w m ψ_s 2d */
    double s = ct_collision_d2(c, cm, obs, x, NULL, NULL);
    double ps;
    f(ctx, c, s, &ps, NULL);
    return -c->w * ct_collision_mollifier_value(c, x) * ps * 2.0 * sqrt(s);
}

int ct_collision_part(const ct_collision *c, const ct_contact_mesh *cm, int nbodies, int k)
{
    if (c->kind == CT_COL_PH) return k == 0 ? cm->part[c->v[0]] : nbodies + c->v[1];
    return cm->part[c->v[k]];
}

double ct_collision_min_distance(const ct_collision_set *cs, const ct_contact_mesh *cm, const ct_obstacle *obs,
                                 const double *x)
{
    double m = INFINITY;
    for (long i = 0; i < cs->n; ++i) m = fmin(m, ct_collision_d2(&cs->c[i], cm, obs, x, NULL, NULL));
    return sqrt(m);
}
