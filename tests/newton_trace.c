/* newton_trace.c — per-Newton-iteration trace of one step (issue 15 measurements, tests/README.md).
 *
 *   newton_trace SCENE STEP REPLAY_TOL [MAXIT] [--set key=value ...] [--eps-v V] [--dhat D]
 *
 * Runs the scene (one thread) through steps 0..STEP-1 with the solver as configured (--set applies
 * as in the CLI, e.g. solver.newton_tol=1e-8), runs step STEP the same way (reports its outcome),
 * then replays that step's Newton solve from x^n with the public API only (ct_sim_ip_eval,
 * ct_sim_ip_hessian, ct_linsolve, ct_model_max_step: the same projected Newton and filter line
 * search as core/sim/newton.c) until |p|inf/h < REPLAY_TOL x bbox diagonal or MAXIT iterations
 * (default 200), and prints one line per iteration:
 *   |p|inf/h (m/s), the free-dof force residual |g|/h^2 (N, inf- and 2-norm) and its ratio to the
 *   total weight, E, CCD alpha, halvings, accepted alpha, active barrier pairs, barrier and
 *   friction force between body 0 and obstacle 0 (N, norms), and for vertices within d^ of a
 *   half-space: how many are in the stick branch of friction (|u_T| < eps_v h, u_T the tangential
 *   displacement since x^n) and max |u_T| / (eps_v h).
 * Built by hand against the library (see tests/README.md); not part of make test. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contactlab/ct_linsolve.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

static double norm3(const double *f) { return sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]); }

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s SCENE STEP REPLAY_TOL [MAXIT] [--set k=v ...] [--eps-v V] [--dhat D]\n", argv[0]);
        return 2;
    }
    const char *path = argv[1];
    int K = atoi(argv[2]);
    double rtol = atof(argv[3]);
    int maxit = 200;
    double eps_v = 1e-3, dhat = 1e-3;
    const char *sets[64];
    int nsets = 0;
    for (int i = 4; i < argc; ++i) {
        if (!strcmp(argv[i], "--set") && i + 1 < argc && nsets < 63) sets[nsets++] = argv[++i];
        else if (!strcmp(argv[i], "--eps-v") && i + 1 < argc) eps_v = atof(argv[++i]);
        else if (!strcmp(argv[i], "--dhat") && i + 1 < argc) dhat = atof(argv[++i]);
        else maxit = atoi(argv[i]);
    }
    sets[nsets++] = "solver.threads=1";
    ct_diag d;
    ct_diag_init(&d);
    ct_scene sc;
    ct_sim *s = NULL;
    if (ct_scene_load(&sc, path, sets, nsets, &d) != CT_OK || ct_sim_create(&s, &sc, &d) != CT_OK) {
        ct_diag_print(&d, stderr, "newton_trace: ");
        return 2;
    }
    const int dim = s->dim, np = s->nb + sc.nobstacles;
    const double h = sc.dt;
    ct_force_report fr;
    ct_force_report_init(&fr, np, 32);
    /* the force scale: total external force (weight) */
    double W[3] = {0, 0, 0};
    for (int k = 0; k < s->nx; ++k)
        for (int c = 0; c < dim; ++c) W[c] += s->mass_x[k] * sc.gravity[c];
    const double Wn = norm3(W);
    for (int k = 0; k < K; ++k)
        if (ct_sim_step(s, &d) != CT_OK) {
            ct_diag_print(&d, stderr, "newton_trace: before the traced step: ");
            return 1;
        }
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * dim;
    double *qn = malloc(nqd * sizeof *qn);
    memcpy(qn, s->q, nqd * sizeof *qn);
    fr.nscalars = 32;
    ct_model_forces(s->model, &s->ctx, s->x, &fr);
    double kappa0 = fr.nscalars > 0 ? fr.scalars[0] : NAN;
    ct_status st = ct_sim_step(s, &d);
    printf("# %s step %d (newton_tol %g x bbox %.4g = %.3e m/s): %s, %d Newton iterations, %d halvings, |p|inf/h "
           "%.3e, min CCD alpha %.3g; kappa %.4g Pa; weight %.4g N\n",
           path, K, sc.solver.newton_tol, s->bbox_diag, sc.solver.newton_tol * s->bbox_diag,
           st == CT_OK ? "converged" : "FAILED", s->last.newton_iters, s->last.line_search_iters, s->last.residual,
           s->last.ccd_alpha_min, kappa0, Wn);
    if (st != CT_OK) ct_diag_print(&d, stdout, "#   ");
    fr.nscalars = 32;
    ct_model_forces(s->model, &s->ctx, s->x, &fr);
    if (fr.nscalars > 0 && fr.scalars[0] != kappa0)
        printf("# note: kappa changed at the end of the step (%.4g -> %.4g): the replay uses the new value\n", kappa0,
               fr.scalars[0]);
    /* replay from x^n */
    double *q = malloc(nqd * sizeof *q), *qt = malloc(nqd * sizeof *qt), *g = malloc(nqd * sizeof *g);
    double *p = calloc(nqd, sizeof *p), *px = malloc(nxd * sizeof *px), *x = malloc(nxd * sizeof *x);
    int nf = ct_sim_nfree(s);
    const int *free_dof = ct_sim_free_dofs(s);
    double *pf = malloc(((size_t)nf + 1) * sizeof *pf);
    for (size_t i = 0; i < nqd; ++i) q[i] = s->fixed[i] ? s->q[i] : qn[i];
    ct_linsolve *ls;
    ct_linsolve_create(&ls, &d);
    const double tol = rtol * s->bbox_diag;
    const int bo = s->nb; /* participant index of obstacle 0 */
    printf("# replay to newton_tol %g (%.3e m/s), eps_v h = %.3g m\n", rtol, tol, eps_v * h);
    printf("# it  |p|inf/h    |r|inf(N)   |r|2(N)    |r|2/W     E              ccd_a     halv  alpha     active  "
           "barrier(N)  friction(N)  stick/near  max|uT|/(eps_v h)\n");
    double E0;
    for (int it = 0; it < maxit; ++it) {
        if ((st = ct_sim_ip_eval(s, q, &E0, g)) != CT_OK) break;
        double rinf = 0, r2 = 0;
        for (int i = 0; i < nf; ++i) {
            double r = g[free_dof[i]] / (h * h);
            rinf = fmax(rinf, fabs(r));
            r2 += r * r;
        }
        r2 = sqrt(r2);
        const ct_csc *A;
        if ((st = ct_sim_ip_hessian(s, q, sc.solver.project_psd, &A, &d)) != CT_OK) break;
        if ((st = ct_linsolve_factor(ls, A, 1, &d)) != CT_OK) break;
        for (int i = 0; i < nf; ++i) pf[i] = -g[free_dof[i]];
        if ((st = ct_linsolve_solve(ls, pf, pf, &d)) != CT_OK) break;
        memset(p, 0, nqd * sizeof *p);
        double pmax = 0;
        for (int i = 0; i < nf; ++i) {
            p[free_dof[i]] = pf[i];
            pmax = fmax(pmax, fabs(pf[i]));
        }
        ct_dofs_map(&s->dofs, q, x);
        ct_force_report_zero(&fr);
        fr.nscalars = 32;
        ct_model_forces(s->model, &s->ctx, x, &fr);
        long active = 0;
        for (int a = 0; a < np; ++a)
            for (int b = a + 1; b < np; ++b) active += fr.active_pairs[a * np + b];
        double fb = np > bo ? norm3(ct_force_report_at(&fr, 0, bo, CT_FORCE_BARRIER)) : 0;
        double ff = np > bo ? norm3(ct_force_report_at(&fr, 0, bo, CT_FORCE_FRICTION)) : 0;
        int near = 0, stick = 0;
        double umax = 0;
        for (int o = 0; o < sc.nobstacles; ++o) {
            const ct_obstacle *ob = &s->obstacles[o];
            for (int k = 0; k < s->nx; ++k) {
                double dist = 0, un = 0, u[3] = {0, 0, 0};
                for (int c = 0; c < dim; ++c) {
                    dist += (x[(size_t)k * dim + c] - ob->point[c]) * ob->normal[c];
                    u[c] = x[(size_t)k * dim + c] - s->x_prev[(size_t)k * dim + c];
                    un += u[c] * ob->normal[c];
                }
                if (dist >= dhat) continue;
                near++;
                for (int c = 0; c < dim; ++c) u[c] -= un * ob->normal[c];
                double ut = norm3(u);
                if (ut < eps_v * h) stick++;
                umax = fmax(umax, ut / (eps_v * h));
            }
        }
        int conv = pmax / h < tol;
        double ca = 1.0;
        int halv = 0;
        double alpha = 0;
        if (!conv) {
            ct_dofs_map_lin(&s->dofs, p, px);
            ct_model_max_step(s->model, &s->ctx, x, px, &ca);
            ca = fmin(ca, 1.0);
            alpha = ca;
            int ok = 0;
            for (; halv < sc.solver.max_line_search; ++halv, alpha *= 0.5) {
                for (size_t i = 0; i < nqd; ++i) qt[i] = q[i] + alpha * p[i];
                double E1;
                ct_sim_ip_eval(s, qt, &E1, NULL);
                if (E1 <= E0) {
                    ok = 1;
                    break;
                }
            }
            if (!ok) alpha = 0;
        }
        printf("%4d  %.3e  %.3e  %.3e  %.3e  %.9e  %.3g  %4d  %.3g  %6ld  %.5g  %.5g  %d/%d  %.3g%s\n", it, pmax / h, rinf,
               r2, r2 / Wn, E0, ca, halv, alpha, active, fb, ff, stick, near, umax, conv ? "  converged" : "");
        if (conv) break;
        if (alpha == 0) {
            printf("# line search failed\n");
            break;
        }
        memcpy(q, qt, nqd * sizeof *q);
    }
    if (st != CT_OK) ct_diag_print(&d, stdout, "# error: ");
    /* Hessian check at the last iterate along the last Newton direction p: H p (unprojected,
     * assembled) against the central difference of the gradient, (g(q + e p) - g(q - e p)) / 2e */
    if (st == CT_OK) {
        const ct_csc *A;
        double *gp = malloc(nqd * sizeof *gp), *gm = malloc(nqd * sizeof *gm), *Hp = calloc((size_t)nf + 1, sizeof *Hp);
        double pn = 0;
        for (int i = 0; i < nf; ++i) pn = fmax(pn, fabs(p[free_dof[i]]));
        if (pn > 0 && ct_sim_ip_hessian(s, q, 0, &A, &d) == CT_OK) {
            for (int j = 0; j < A->ncol; ++j)
                for (int k = A->colptr[j]; k < A->colptr[j + 1]; ++k) {
                    int i = A->rowind[k];
                    Hp[i] += A->val[k] * p[free_dof[j]];
                    if (i != j) Hp[j] += A->val[k] * p[free_dof[i]];
                }
            for (int e = 0; e < 3; ++e) {
                double eps = (e == 0 ? 1e-4 : e == 1 ? 1e-6 : 1e-8) / pn * 1e-3; /* |e p|inf = 1e-7, 1e-9, 1e-11 m */
                for (size_t i = 0; i < nqd; ++i) qt[i] = q[i] + eps * p[i];
                ct_sim_ip_eval(s, qt, &E0, gp);
                for (size_t i = 0; i < nqd; ++i) qt[i] = q[i] - eps * p[i];
                ct_sim_ip_eval(s, qt, &E0, gm);
                double num = 0, den = 0;
                for (int i = 0; i < nf; ++i) {
                    double fd = (gp[free_dof[i]] - gm[free_dof[i]]) / (2 * eps);
                    num += (Hp[i] - fd) * (Hp[i] - fd);
                    den += fd * fd;
                }
                printf("# Hessian check along p, |e p|inf = %.0e m: |H p - FD| / |FD| = %.3e\n", eps * pn, sqrt(num / den));
            }
        }
    }
    return 0;
}
