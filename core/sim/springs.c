/* springs.c — springs between two vertices (scene "springs"; issue 17, the zero-length spring
 * of the IMLS paper's §6.1):
 *     E_s(x) = 1/2 k (|x_a - x_b| - L)^2,
 * a potential of the incremental potential weighted like the elastic energy (h^2 in dynamics,
 * 1 in static: ct_step_pot_weight). It is written in full-space positions x: its gradient goes
 * into the full-space gradient next to the model's (mapped by J^T with it), its Hessian triplets
 * are appended to the model's Hessian triplets (ct_step_hessian_triplets), so that every matrix
 * built from them — Newton's (projected or exact), the exact one of the sensitivities and its
 * H_fD products (sensitivity.c reads as->hc), the constraint family's A = M + h^2 K — has it.
 *
 * With d = x_a - x_b, r = |d|, n = d / r:
 *     g_a = k (r - L) n = -g_b,
 *     H = [K -K; -K K],  K = k [ n n^T + (1 - L/r) (I - n n^T) ],
 * whose eigenvalues are 2k (along n), 2k (1 - L/r) (transverse, dim - 1 times) and 0; the
 * projection clamps the transverse one at 0 (r < L: a compressed spring). L = 0: K = k I. */
#include "sim/step_internal.h"

#include <math.h>
#include <string.h>

double ct_spring_eval(int dim, const double *xa, const double *xb, double k, double L, int project, double *g,
                      double *H)
{
    double d[3] = {0, 0, 0}, r2 = 0.0;
    for (int c = 0; c < dim; ++c) {
        d[c] = xa[c] - xb[c];
        r2 += d[c] * d[c];
    }
    const double r = sqrt(r2);
    const double E = L == 0.0 ? 0.5 * k * r2 : 0.5 * k * (r - L) * (r - L);
    /* K = a I + b n n^T with a = k (1 - L/r) (projected: max(a, 0)), b = k - a */
    double a = k, fg = k; /* g_a = fg d */
    int degenerate = 0;
    if (L != 0.0) {
        if (r > 0.0) {
            a = k * (1.0 - L / r);
            fg = a; /* k (r - L) / r */
        } else {
            degenerate = 1;
            fg = 0.0;
        }
    }
    if (g)
        for (int c = 0; c < dim; ++c) {
            g[c] = fg * d[c];
            g[dim + c] = -fg * d[c];
        }
    if (H) {
        const int n = 2 * dim;
        memset(H, 0, (size_t)n * n * sizeof *H);
        double ap = degenerate ? k : (project && a < 0.0 ? 0.0 : a);
        double b = degenerate || L == 0.0 ? 0.0 : (k - ap) / r2; /* coefficient of d d^T */
        for (int i = 0; i < dim; ++i)
            for (int j = 0; j < dim; ++j) {
                const double K = (i == j ? ap : 0.0) + b * d[i] * d[j];
                H[i + n * j] = K;
                H[(dim + i) + n * (dim + j)] = K;
                H[i + n * (dim + j)] = -K;
                H[(dim + i) + n * j] = -K;
            }
    }
    return E;
}

double ct_step_springs_energy(const ct_sim *s, const double *x)
{
    double E = 0.0;
    const int dim = s->dim;
    for (int i = 0; i < s->nsprings; ++i) {
        const ct_spring_spec *sp = &s->sc->springs[i];
        E += ct_spring_eval(dim, x + (size_t)s->spring_v[2 * i] * dim, x + (size_t)s->spring_v[2 * i + 1] * dim,
                            sp->k, sp->rest_length, 0, NULL, NULL);
    }
    return E;
}

void ct_step_springs_gradient(const ct_sim *s, const double *x, double *gx)
{
    const int dim = s->dim;
    for (int i = 0; i < s->nsprings; ++i) {
        const ct_spring_spec *sp = &s->sc->springs[i];
        const int va = s->spring_v[2 * i], vb = s->spring_v[2 * i + 1];
        double g[6];
        ct_spring_eval(dim, x + (size_t)va * dim, x + (size_t)vb * dim, sp->k, sp->rest_length, 0, g, NULL);
        for (int c = 0; c < dim; ++c) {
            gx[(size_t)va * dim + c] += g[c];
            gx[(size_t)vb * dim + c] += g[dim + c];
        }
    }
}

ct_status ct_step_springs_hessian(const ct_sim *s, const double *x, int project, ct_triplets *H)
{
    const int dim = s->dim;
    for (int i = 0; i < s->nsprings; ++i) {
        const ct_spring_spec *sp = &s->sc->springs[i];
        const int v[2] = {s->spring_v[2 * i], s->spring_v[2 * i + 1]};
        double Hl[36];
        ct_spring_eval(dim, x + (size_t)v[0] * dim, x + (size_t)v[1] * dim, sp->k, sp->rest_length, project, NULL, Hl);
        ct_status st = ct_triplets_add_block(H, v, 2, dim, Hl);
        if (st != CT_OK) return st;
    }
    return CT_OK;
}

ct_status ct_step_hessian_triplets(ct_sim *s, const double *x, int exact, int project_springs, ct_triplets *H)
{
    s->ctx.exact_hessian = exact;
    ct_status st = ct_model_hessian(s->model, &s->ctx, x, H);
    s->ctx.exact_hessian = 0;
    if (st != CT_OK) return st;
    return ct_step_springs_hessian(s, x, project_springs && !exact, H);
}

double ct_sim_spring_energy(const ct_sim *s) { return ct_step_springs_energy(s, s->x); }

void ct_sim_spring_force(const ct_sim *s, int i, double *f)
{
    const int dim = s->dim;
    for (int c = 0; c < dim; ++c) f[c] = NAN;
    if (i < 0 || i >= s->nsprings) return;
    const ct_spring_spec *sp = &s->sc->springs[i];
    double g[6];
    ct_spring_eval(dim, s->x + (size_t)s->spring_v[2 * i] * dim, s->x + (size_t)s->spring_v[2 * i + 1] * dim, sp->k,
                   sp->rest_length, 0, g, NULL);
    for (int c = 0; c < dim; ++c) f[c] = -g[c];
}
