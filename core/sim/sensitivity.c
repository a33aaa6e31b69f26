/* sensitivity.c — dq/dθ of a converged static equilibrium (ct_sensitivity.h, issue 17):
 * the parameters' data from scene paths (prescribed motion, loads, gravity), and the solve
 * H_ff dq_f = [Jᵀ df_ext]_f − H_fD dq_D with the exact Hessian at the solution (the step's last
 * CHOLMOD factor when it is that matrix, else assembled and factored once). */
#include "contactlab/ct_sensitivity.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/assemble.h"
#include "sim/step_internal.h"

/* ---------- parameter paths ---------- */

enum { MAX_TOKENS = 12, TOKEN_LEN = 128 };

/* Split "a.b.0.c" or "/a/b/0/c" into tokens; -1 if a token is empty or too long, or too many. */
static int split_path(const char *path, char tok[MAX_TOKENS][TOKEN_LEN])
{
    int n = 0;
    const char *p = path;
    if (*p == '/') ++p;
    while (*p) {
        if (n == MAX_TOKENS) return -1;
        size_t len = strcspn(p, "./");
        if (len == 0 || len >= TOKEN_LEN) return -1;
        memcpy(tok[n], p, len);
        tok[n][len] = '\0';
        ++n;
        p += len;
        if (*p) {
            ++p;
            if (!*p) return -1; /* a trailing separator */
        }
    }
    return n;
}

/* A non-negative integer token below `bound`; -1 otherwise. */
static int token_index(const char *t, int bound)
{
    if (!isdigit((unsigned char)t[0])) return -1;
    char *end;
    errno = 0;
    long v = strtol(t, &end, 10);
    if (*end || errno || v < 0 || v >= bound) return -1;
    return (int)v;
}

/* A vector component: an index below dim or x|y|z. */
static int token_component(const char *t, int dim)
{
    if (t[1] == '\0' && t[0] >= 'x' && t[0] <= 'z') return t[0] - 'x' < dim ? t[0] - 'x' : -1;
    return token_index(t, dim);
}

/* A body by index or by name. */
static int token_body(const ct_sim *s, const char *t)
{
    int b = token_index(t, s->nb);
    if (b >= 0) return b;
    for (int k = 0; k < s->nb; ++k)
        if (s->bodies[k].name && strcmp(s->bodies[k].name, t) == 0) return k;
    return -1;
}

/* df_ext/dθ of load j of body b for a unit change of component c of its force (scale 1) or of
 * its rate (scale min(t, ramp_until)): the load's normalized per-vertex weights (step.c). */
static void load_derivative(const ct_sim *s, int b, int j, int c, double scale, double *df)
{
    int l = j;
    for (int k = 0; k < b; ++k) l += s->sc->bodies[k].nloads;
    const ct_body *B = &s->bodies[b];
    const double *w = s->load_w + s->load_off[l];
    for (int k = 0; k < B->nx; ++k) df[(size_t)(B->x_off + k) * s->dim + c] = scale * w[k];
}

ct_status ct_sensitivity_param(const ct_sim *s, const char *path, double *dq_fixed, double *df_ext,
                               ct_sens_kind *kind, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    const int dim = s->dim;
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * dim;
    if (dq_fixed) memset(dq_fixed, 0, nqd * sizeof *dq_fixed);
    if (df_ext) memset(df_ext, 0, nxd * sizeof *df_ext);
    char tok[MAX_TOKENS][TOKEN_LEN];
    const int n = path ? split_path(path, tok) : -1;
    const char *form = "expected bodies.B.fixed.F.motion.S.{velocity.C|angular_velocity|center.C}, "
                       "bodies.B.loads.L.{force|force_rate}.C or gravity.C";
    if (n <= 0) return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': %s", path ? path : "", form);
    if (n == 2 && strcmp(tok[0], "gravity") == 0) {
        int c = token_component(tok[1], dim);
        if (c < 0)
            return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': no component '%s' in %dD", path, tok[1],
                               dim);
        if (df_ext)
            for (int k = 0; k < s->nx; ++k) df_ext[(size_t)k * dim + c] = s->mass_x[k];
        *kind = CT_SENS_LOAD;
        return CT_OK;
    }
    if (n < 4 || strcmp(tok[0], "bodies") != 0)
        return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': %s", path, form);
    const int b = token_body(s, tok[1]);
    if (b < 0) return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': no body '%s'", path, tok[1]);
    const ct_body_spec *bs = &sc->bodies[b];
    if (strcmp(tok[2], "loads") == 0) {
        const int j = token_index(tok[3], bs->nloads);
        if (j < 0)
            return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': body '%s' has %d loads, no '%s'", path,
                               s->bodies[b].name, bs->nloads, tok[3]);
        const int is_force = n == 6 && strcmp(tok[4], "force") == 0;
        const int is_rate = n == 6 && strcmp(tok[4], "force_rate") == 0;
        const int c = n == 6 ? token_component(tok[5], dim) : -1;
        if (!(is_force || is_rate) || c < 0)
            return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': expected bodies.B.loads.L.force.C or "
                               "bodies.B.loads.L.force_rate.C with C in 0..%d or x..%c", path, dim - 1, 'x' + dim - 1);
        const ct_load *ld = &bs->loads[j];
        if (df_ext) load_derivative(s, b, j, c, is_force ? 1.0 : fmin(s->t, ld->ramp_until), df_ext);
        *kind = CT_SENS_LOAD;
        return CT_OK;
    }
    if (strcmp(tok[2], "fixed") == 0) {
        const int f = token_index(tok[3], bs->nfixed);
        if (f < 0)
            return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': body '%s' has %d fixed entries, no '%s'",
                               path, s->bodies[b].name, bs->nfixed, tok[3]);
        const ct_dirichlet *dd = &bs->fixed[f];
        const int seg = n >= 7 && strcmp(tok[4], "motion") == 0 ? token_index(tok[5], dd->nseg) : -1;
        if (seg < 0)
            return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': expected "
                               "bodies.B.fixed.F.motion.S.{velocity.C|angular_velocity|center.C} with S one of the "
                               "entry's %d motion segments", path, dd->nseg);
        ct_motion_field field;
        int c = 0;
        if (n == 7 && strcmp(tok[6], "angular_velocity") == 0) {
            field = CT_MOTION_OMEGA;
            const double *a = dd->seg[seg].axis;
            if (dim == 3 && !(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] > 0.0))
                return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': the segment has no rotation axis "
                                   "(give \"axis\" in the scene)", path);
        } else if (n == 8 && (strcmp(tok[6], "velocity") == 0 || strcmp(tok[6], "center") == 0)) {
            field = tok[6][0] == 'v' ? CT_MOTION_VELOCITY : CT_MOTION_CENTER;
            c = token_component(tok[7], dim);
            if (c < 0)
                return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': no component '%s' in %dD", path,
                                   tok[7], dim);
        } else {
            return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': a motion segment's parameter is "
                               "velocity.C, angular_velocity or center.C (\"until\" and \"axis\" are not "
                               "differentiable parameters here)", path);
        }
        int held = 0;
        for (int a = s->bodies[b].q_off; a < s->bodies[b].q_off + s->bodies[b].nq; ++a) {
            if (s->qv_dirichlet[a] != f) continue; /* a later entry holds it, or none */
            ++held;
            if (dq_fixed)
                ct_motion_eval_tangent(dd, dim, s->Q + (size_t)a * dim, s->t, seg, field, c,
                                       dq_fixed + (size_t)a * dim);
        }
        if (held == 0)
            ct_diag_add(diag, CT_OK, "sensitivity parameter '%s': the entry holds no vertex (dq/dθ = 0)", path);
        *kind = CT_SENS_PRESCRIBED;
        return CT_OK;
    }
    return ct_diag_add(diag, CT_EINPUT, "sensitivity parameter '%s': %s", path, form);
}

/* ---------- the solve ---------- */

/* y += H v on all q-dofs, H the Hessian whose element blocks are as->Hloc (static: weight 1, no
 * mass) and whose contact part is the model's triplets Hc (full space, through J; upper: only
 * row <= col read, mirrored), v a q-space vector. xv, yx: nx*dim scratch. */
static void hessian_apply(const ct_sim *s, const ct_triplets *Hc, const double *v, double *y, double *xv, double *yx)
{
    const ct_elastic *el = &s->el;
    const int dim = s->dim, nv = dim + 1, nd = dim * nv;
    const double *H = s->as->Hloc;
    for (int e = 0; e < el->ne; ++e) {
        const int *vert = el->elem + (size_t)e * nv;
        const double *He = H + (size_t)e * nd * nd;
        double ve[12];
        int any = 0;
        for (int l = 0; l < nd; ++l) {
            ve[l] = v[(size_t)vert[l / dim] * dim + l % dim];
            any |= ve[l] != 0.0;
        }
        if (!any) continue;
        for (int la = 0; la < nd; ++la) {
            double sum = 0.0;
            for (int lb = 0; lb < nd; ++lb) sum += He[la + (size_t)nd * lb] * ve[lb];
            y[(size_t)vert[la / dim] * dim + la % dim] += sum;
        }
    }
    if (!Hc || Hc->n == 0) return;
    const size_t nxd = (size_t)s->nx * dim;
    ct_dofs_map_lin(&s->dofs, v, xv);
    memset(yx, 0, nxd * sizeof *yx);
    for (size_t k = 0; k < Hc->n; ++k) {
        const int r = Hc->row[k], c = Hc->col[k];
        if (Hc->upper) {
            if (r > c) continue;
            yx[r] += Hc->val[k] * xv[c];
            if (r != c) yx[c] += Hc->val[k] * xv[r];
        } else {
            yx[r] += Hc->val[k] * xv[c];
        }
    }
    ct_dofs_pull(&s->dofs, yx, y);
}

/* The exact Hessian on the free dofs at the current state, assembled (elements unprojected, the
 * model's exact contact Hessian) into as->A with its parts in as->Hloc and as->hc, and factored. */
static ct_status factor_exact(ct_sim *s, ct_diag *diag)
{
    ct_assembly *as = s->as;
    ct_triplets *Hc = &as->hc;
    s->factor_exact = 0;
    ct_triplets_clear(Hc);
    Hc->upper = s->dofs.identity;
    ct_status st = ct_step_hessian_triplets(s, s->x, 1, 0, Hc); /* the model's and the springs' */
    if (st != CT_OK)
        return ct_diag_add(diag, st, "sensitivity at t = %g: model %s: hessian failed", s->t, ct_model_name(s->model));
    st = ct_assembly_fill(as, s, s->q, 0.0, 1.0, Hc, 1.0, 0, NULL, NULL, diag);
    if (st != CT_OK) return ct_diag_add(diag, st, "sensitivity at t = %g: assembling the exact Hessian failed", s->t);
    st = ct_linsolve_factor(s->ls, &as->A, as->pattern_changed, diag);
    as->pattern_changed = 0;
    if (st == CT_ENOTPD)
        return ct_diag_add(diag, st, "sensitivity at t = %g (step %d): the exact Hessian on the %d free dofs is not "
                           "positive definite at the equilibrium (not a strict local minimum of the energy: dq/dθ is "
                           "not defined there, or not by a Cholesky factorization)", s->t, s->step, as->nfree);
    if (st != CT_OK)
        return ct_diag_add(diag, st, "sensitivity at t = %g (step %d): factorizing the exact Hessian failed", s->t,
                           s->step);
    s->factor_exact = 1;
    return CT_OK;
}

ct_status ct_sensitivity_solve(ct_sim *s, int nparam, const double *dq_fixed, const double *df_ext, unsigned flags,
                               double *dq, ct_sens_info *info, ct_diag *diag)
{
    ct_sens_info loc;
    if (!info) info = &loc;
    memset(info, 0, sizeof *info);
    if (nparam <= 0) return CT_OK;
    if (!ct_step_is_static(s))
        return ct_diag_add(diag, CT_EINPUT, "%s: /time/integrator: sensitivities are those of a static equilibrium "
                           "(\"integrator\": \"static\")", s->sc->path);
    if (s->model->type->family != CT_FAMILY_ENERGY)
        return ct_diag_add(diag, CT_EINPUT, "%s: sensitivities need an energy-family model (model %s)", s->sc->path,
                           ct_model_name(s->model));
    if (s->step == 0 || !s->last_ok)
        return ct_diag_add(diag, CT_EINPUT, "%s: sensitivities need a converged static step first (%s)", s->sc->path,
                           s->step == 0 ? "no step taken" : "the last step failed");
    const int dim = s->dim;
    const size_t nqd = (size_t)s->ndof, nxd = (size_t)s->nx * dim;
    const ct_assembly *as = s->as;
    const int nf = as->nfree;
    info->nfree = nf;
    info->residual = s->last.residual;
    info->force_residual = s->last.force_residual;
    double t0 = ct_step_now();
    ct_status st = CT_OK;
    info->reused_factor = s->factor_exact && !(flags & CT_SENS_REFACTOR);
    if (!info->reused_factor && nf > 0 && (st = factor_exact(s, diag)) != CT_OK) return st;
    info->t_factor = info->reused_factor ? 0.0 : ct_step_now() - t0;
    ct_triplets_fill_rows(&s->as->hc); /* (a Newton matrix's blocks may have left them unwritten) */
    double *y = malloc((nqd + 1) * sizeof *y), *xv = malloc((nxd + 1) * sizeof *xv);
    double *yx = malloc((nxd + 1) * sizeof *yx), *b = malloc(((size_t)nf * nparam + 1) * sizeof *b);
    if (!y || !xv || !yx || !b) {
        st = ct_diag_add(diag, CT_ENOMEM, "sensitivity: out of memory (%d dofs, %d parameters)", s->ndof, nparam);
        goto out;
    }
    /* right-hand sides b_k = [Jᵀ df_k]_f − [H dq_D,k]_f (the prescribed part of dq_fixed only) */
    for (int k = 0; k < nparam; ++k) {
        memset(y, 0, nqd * sizeof *y);
        if (dq_fixed) {
            const double *dqk = dq_fixed + nqd * k;
            double *vD = dq + nqd * k; /* dq_D alone, in the output column as scratch */
            for (size_t i = 0; i < nqd; ++i) vD[i] = s->fixed[i] ? dqk[i] : 0.0;
            hessian_apply(s, &as->hc, vD, y, xv, yx);
            for (size_t i = 0; i < nqd; ++i) y[i] = -y[i];
        }
        if (df_ext) ct_dofs_pull(&s->dofs, df_ext + nxd * k, y);
        for (int i = 0; i < nf; ++i) b[(size_t)nf * k + i] = y[as->free_dof[i]];
    }
    t0 = ct_step_now();
    if (nf > 0 && (st = ct_linsolve_solve_many(s->ls, nparam, b, b, diag)) != CT_OK) {
        ct_diag_add(diag, st, "sensitivity at t = %g: solving with the factor failed", s->t);
        goto out;
    }
    info->t_solve = ct_step_now() - t0;
    for (int k = 0; k < nparam; ++k) {
        double *dqk = dq + nqd * k;
        for (size_t i = 0; i < nqd; ++i) dqk[i] = dq_fixed && s->fixed[i] ? dq_fixed[nqd * k + i] : 0.0;
        for (int i = 0; i < nf; ++i) {
            const double v = b[(size_t)nf * k + i];
            if (!isfinite(v)) {
                st = ct_diag_add(diag, CT_ENOCONV, "sensitivity at t = %g: parameter %d: dq/dθ is not finite at free "
                                 "dof %d", s->t, k, as->free_dof[i]);
                goto out;
            }
            dqk[as->free_dof[i]] = v;
        }
    }
out:
    free(y);
    free(xv);
    free(yx);
    free(b);
    return st;
}
