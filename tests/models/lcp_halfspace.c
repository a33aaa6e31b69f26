/* lcp_halfspace.c — a test model of the constraint family (not a contact model for studies):
 * frictionless contact of surface vertices with half-space obstacles, written as the
 * velocity-level LCP of the linearized implicit Euler step and solved exactly.
 *
 * It exercises the core's constraint-family path (ct_model.h: ct_linear_system, the contact
 * impulse r = J_c^T lambda) before `lcp_pgs` exists, with nothing that could hide a wrong core:
 *   contacts   surface vertex k (not scripted) and half-space o {y : n.(y - p) >= 0} with
 *              min(g_k, g_k + h n.v_free_k) < margin, g_k = n.(x^n_k - p) the gap at the start;
 *   rows       c_i = J^T (n at vertex k), a q-space vector (the embedding's weights of vertex k);
 *   LCP        w = q + M lambda >= 0, lambda >= 0, w.lambda = 0, with
 *              q_i = g_k + h n.v_free_k (the gap at the end of the unconstrained step) and
 *              M = h C_f^T A^-1 C_f (C_f: the rows on the free dofs; A^-1 C_f by one multi-RHS
 *              solve), so that w_i is the gap at the end of the step: g_k + h n.v^{n+1}_k, exact
 *              for a half-space (the gap is linear in x);
 *   solver     Murty's least-index principal pivoting (finite for P-matrices: M is positive
 *              definite when the rows are independent), each principal system by LAPACK dposv;
 *   impulse    r = sum_i lambda_i c_i over all q-dofs (the prescribed ones give reactions);
 *   forces     lambda_i n / h on the vertex's body from obstacle o, category "barrier" (normal
 *              repulsion), and the opposite on the obstacle; per vertex (vertex_fields) the same
 *              force on vertex k and its gap.
 * Dense in the contact count m (M is m x m, pivoting costs O(m^3) per pivot): at most
 * `max_contacts`. lcp_residual: the largest |w_i| over the contacts with lambda_i > 0 (their
 * gaps at the end of the step, 0 in exact arithmetic). Registered as "lcp_halfspace" (models/registry.c) so that it runs through
 * `contactlab run` and the conformance suite. */
#include "contactlab/ct_model.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { P_MARGIN, P_MAX_CONTACTS, P_NPARAMS };

static const ct_param_spec lcp_params[] = {
    [P_MARGIN] = {"margin", CT_PARAM_REAL, 1e-3, "m", 0, INFINITY, 0, NULL,
                  "a vertex and a half-space form a contact when the gap at the start of the step or at the end of "
                  "the unconstrained step is below this",
                  0},
    [P_MAX_CONTACTS] = {"max_contacts", CT_PARAM_INT, 2000, "", 1, 20000, 0, NULL,
                        "largest contact count (the LCP is dense)", 0},
    [P_NPARAMS] = {NULL},
};

typedef struct {
    int vert, obst;   /* x-vertex, obstacle index */
    double lambda;    /* normal impulse (N s) of the last step */
} contact;

typedef struct {
    double margin;
    int max_contacts;
    int np;           /* participants */
    contact *c;       /* last step's contacts */
    int m, cap;
    int pivots;       /* principal pivots of the last LCP */
    double residual;  /* max |min(w_i, lambda_i scaled)| of the last LCP */
    const char *names[3];
} lcp_state;

static ct_status lcp_init(void *p, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    (void)diag;
    lcp_state *st = p;
    st->margin = prm->value[P_MARGIN];
    st->max_contacts = (int)prm->value[P_MAX_CONTACTS];
    st->np = c->nbodies + c->nobstacles;
    st->names[0] = "lcp_contacts";
    st->names[1] = "lcp_pivots";
    st->names[2] = "lcp_residual";
    return CT_OK;
}

static void lcp_destroy(void *p)
{
    lcp_state *st = p;
    free(st->c);
}

/* The gap of vertex k to half-space o at the start of the step, *g, and its rate along the
 * unconstrained motion, *gv = n.v_free_k. */
static void gap_and_rate(const ct_step_ctx *c, const ct_linear_system *sys, int k, int o, double *g, double *gv)
{
    const ct_obstacle *ob = &c->obstacles[o];
    *g = *gv = 0.0;
    for (int d = 0; d < c->dim; ++d) {
        *g += ob->normal[d] * (c->x_prev[(size_t)k * c->dim + d] - ob->point[d]);
        *gv += ob->normal[d] * sys->vx_free[(size_t)k * c->dim + d];
    }
}

/* The contact set at the start of the step (module comment). */
static ct_status find_contacts(lcp_state *st, const ct_step_ctx *c, const ct_linear_system *sys, ct_diag *diag)
{
    st->m = 0;
    for (int i = 0; i < c->surf->nbv; ++i) {
        const int k = c->surf->bverts[i];
        if (c->vert_kinematic && c->vert_kinematic[k]) continue;
        for (int o = 0; o < c->nobstacles; ++o) {
            double g, gv;
            gap_and_rate(c, sys, k, o, &g, &gv);
            if (fmin(g, g + c->h * gv) >= st->margin) continue;
            if (st->m == st->max_contacts)
                return ct_diag_add(diag, CT_ENOTSUP, "lcp_halfspace: more than max_contacts = %d contacts",
                                   st->max_contacts);
            if (st->m == st->cap) {
                int cap = st->cap ? 2 * st->cap : 64;
                contact *nc = realloc(st->c, (size_t)cap * sizeof *nc);
                if (!nc) return CT_ENOMEM;
                st->c = nc, st->cap = cap;
            }
            st->c[st->m++] = (contact){k, o, 0.0};
        }
    }
    return CT_OK;
}

/* Add s * (J^T (n at vertex k)) to r (q-space, ndof). */
static void add_row(const ct_step_ctx *c, int k, const double *n, double s, double *r)
{
    const ct_dofs *D = c->dofs;
    const int dim = c->dim;
    for (int j = D->jptr[k]; j < D->jptr[k + 1]; ++j)
        for (int d = 0; d < dim; ++d) r[(size_t)D->jcol[j] * dim + d] += s * D->jw[j] * n[d];
}

/* Murty's least-index principal pivoting for w = q + M lambda (M m x m, column-major, SPD):
 * the basis B holds the indices with lambda > 0; each pass solves M_BB lambda_B = -q_B and
 * flips the first index that violates lambda >= 0 (in B) or w >= 0 (outside B). */
static ct_status solve_lcp(int m, const double *M, const double *q, double *lambda, int *pivots, double *resid,
                           ct_diag *diag)
{
    ct_status st = CT_OK;
    unsigned char *inB = calloc((size_t)m + 1, 1);
    int *idx = malloc(((size_t)m + 1) * sizeof *idx);
    double *Mb = malloc(((size_t)m * m + 1) * sizeof *Mb), *lb = malloc(((size_t)m + 1) * sizeof *lb);
    if (!inB || !idx || !Mb || !lb) {
        st = CT_ENOMEM;
        goto done;
    }
    double scale = 0.0;
    for (int i = 0; i < m; ++i) scale = fmax(scale, fabs(q[i]));
    const double tol = 1e-13 * (scale > 0.0 ? scale : 1.0);
    const int max_pivots = 50 * m + 100;
    *pivots = 0;
    for (;;) {
        int nb = 0;
        for (int i = 0; i < m; ++i)
            if (inB[i]) idx[nb++] = i;
        for (int a = 0; a < nb; ++a) {
            lb[a] = -q[idx[a]];
            for (int b = 0; b < nb; ++b) Mb[(size_t)b * nb + a] = M[(size_t)idx[b] * m + idx[a]];
        }
        if (nb) {
            lapack_int info = LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', nb, 1, Mb, nb, lb, nb);
            if (info != 0) {
                st = ct_diag_add(diag, CT_ENOTPD, "lcp_halfspace: principal Delassus block of %d contacts not "
                                 "positive definite (dposv info %d)", nb, (int)info);
                goto done;
            }
        }
        for (int i = 0; i < m; ++i) lambda[i] = 0.0;
        for (int a = 0; a < nb; ++a) lambda[idx[a]] = lb[a];
        int flip = -1;
        *resid = 0.0;
        for (int i = 0; i < m && flip < 0; ++i) {
            double w = q[i];
            for (int j = 0; j < m; ++j) w += M[(size_t)j * m + i] * lambda[j];
            if (inB[i] ? lambda[i] < 0.0 : w < -tol) flip = i;
            *resid = fmax(*resid, inB[i] ? fabs(w) : 0.0);
        }
        if (flip < 0) break;
        if (++*pivots > max_pivots) {
            st = ct_diag_add(diag, CT_ENOCONV, "lcp_halfspace: no LCP solution after %d pivots", max_pivots);
            goto done;
        }
        inB[flip] = !inB[flip];
    }
done:
    free(inB);
    free(idx);
    free(Mb);
    free(lb);
    return st;
}

static ct_status lcp_step(void *p, const ct_step_ctx *c, const ct_linear_system *sys, double *r)
{
    lcp_state *st = p;
    ct_diag *diag = sys->diag;
    ct_status s = find_contacts(st, c, sys, diag);
    const int m = st->m, nf = sys->nfree;
    st->pivots = 0;
    st->residual = 0.0;
    double *C = NULL, *Y = NULL, *M = NULL, *q = NULL, *lam = NULL, *row = NULL;
    if (s != CT_OK || m == 0) goto done;
    C = calloc((size_t)nf * m + 1, sizeof *C);
    Y = malloc(((size_t)nf * m + 1) * sizeof *Y);
    M = malloc(((size_t)m * m + 1) * sizeof *M);
    q = malloc(((size_t)m + 1) * sizeof *q);
    lam = malloc(((size_t)m + 1) * sizeof *lam);
    row = calloc((size_t)sys->ndof + 1, sizeof *row);
    if (!C || !Y || !M || !q || !lam || !row) {
        s = CT_ENOMEM;
        goto done;
    }
    /* rows on the free dofs, q = the gaps at the end of the unconstrained step */
    for (int i = 0; i < m; ++i) {
        const int k = st->c[i].vert;
        const ct_obstacle *ob = &c->obstacles[st->c[i].obst];
        memset(row, 0, (size_t)sys->ndof * sizeof *row);
        add_row(c, k, ob->normal, 1.0, row);
        for (int f = 0; f < nf; ++f) C[(size_t)i * nf + f] = row[sys->free_dof[f]];
        double g, gv;
        gap_and_rate(c, sys, k, st->c[i].obst, &g, &gv);
        q[i] = g + c->h * gv;
    }
    /* the Delassus operator M = h C^T A^-1 C from one multi-RHS solve */
    if ((s = sys->solve(sys, m, C, Y)) != CT_OK) goto done;
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < m; ++i) {
            double dot = 0.0;
            for (int f = 0; f < nf; ++f) dot += C[(size_t)i * nf + f] * Y[(size_t)j * nf + f];
            M[(size_t)j * m + i] = c->h * dot;
        }
    if ((s = solve_lcp(m, M, q, lam, &st->pivots, &st->residual, diag)) != CT_OK) goto done;
    for (int i = 0; i < m; ++i) {
        st->c[i].lambda = lam[i];
        add_row(c, st->c[i].vert, c->obstacles[st->c[i].obst].normal, lam[i], r);
    }
done:
    free(C);
    free(Y);
    free(M);
    free(q);
    free(lam);
    free(row);
    if (s != CT_OK) st->m = 0;
    return s;
}

static ct_status lcp_forces(void *p, const ct_step_ctx *c, const double *x, ct_force_report *out)
{
    (void)x;
    lcp_state *st = p;
    ct_force_report_zero(out);
    for (int i = 0; i < st->m; ++i) {
        const int a = c->vert_part[st->c[i].vert], b = c->nbodies + st->c[i].obst;
        const double *n = c->obstacles[st->c[i].obst].normal;
        double *fa = ct_force_report_at(out, a, b, CT_FORCE_BARRIER), *fb = ct_force_report_at(out, b, a, CT_FORCE_BARRIER);
        for (int d = 0; d < c->dim; ++d) {
            fa[d] += st->c[i].lambda * n[d] / c->h;
            fb[d] -= st->c[i].lambda * n[d] / c->h;
        }
        if (st->c[i].lambda > 0.0) out->active_pairs[a * out->np + b]++, out->active_pairs[b * out->np + a]++;
    }
    const int ns = out->nscalars < 3 ? out->nscalars : 3;
    const double vals[3] = {(double)st->m, (double)st->pivots, st->residual};
    for (int k = 0; k < ns; ++k) {
        out->scalar_names[k] = st->names[k];
        out->scalars[k] = vals[k];
    }
    out->nscalars = ns;
    return CT_OK;
}

/* per-vertex fields of the last step's contacts: lambda_i n / h on the vertex, its gap n.(x_k - p) at x */
static ct_status lcp_vertex_fields(void *p, const ct_step_ctx *c, const double *x, ct_vertex_fields *out)
{
    lcp_state *st = p;
    for (int i = 0; i < st->m; ++i) {
        const int k = st->c[i].vert;
        const ct_obstacle *ob = &c->obstacles[st->c[i].obst];
        double g = 0.0;
        for (int d = 0; d < c->dim; ++d) {
            out->force[k][d] += st->c[i].lambda * ob->normal[d] / c->h;
            g += ob->normal[d] * (x[(size_t)k * c->dim + d] - ob->point[d]);
        }
        ct_vertex_fields_gap_min(out, k, g);
    }
    out->filled |= CT_VF_FORCE | CT_VF_GAP;
    return CT_OK;
}

const ct_model_type ct_model_lcp_halfspace = {
    .name = "lcp_halfspace",
    .summary = "test model (tests/models): frictionless vertex-half-space contact as an exactly solved LCP of the "
               "linearized step (constraint family)",
    .family = CT_FAMILY_CONSTRAINT,
    .guarantees = 0,
    .state_size = sizeof(lcp_state),
    .params = lcp_params,
    .init = lcp_init,
    .destroy = lcp_destroy,
    .step = lcp_step,
    .forces = lcp_forces,
    .vertex_fields = lcp_vertex_fields,
};
