/* lcp_pgs.c — Gascón, Zurdo & Otaduy 2010, "Constraint-Based Simulation of Adhesive Contact":
 * the velocity-level contact LCP of the linearized implicit Euler step, solved by block projected
 * Gauss–Seidel with implicit adhesion constraints (§3–5; README.md).
 *
 * Constraint family (ct_model.h): the core assembles A = M + h²K(xⁿ) and b on the free dofs; this
 * model's step op
 *   1. finds the contacts of the step: every surface vertex against every half-space, and (from a
 *      swept broad phase over the unconstrained motion xⁿ → xⁿ + h v_free, ct_broadphase_ccd) the
 *      closest face (3D) / segment (2D) of each other participant, when the pair is within the
 *      reach at xⁿ or at the end of the unconstrained motion, or ACCD finds them meeting on the
 *      way (paper §3.1: continuous collision detection between state updates);
 *   2. gives each contact a frame (n, t, b): n from the partner's closest point at xⁿ towards the
 *      vertex (a half-space's normal; the partner face's outward normal when the vertex is behind
 *      it), t along the unconstrained tangential relative velocity (any tangent if it is zero),
 *      b = n × t; and Jacobian rows through x = J q: row r of contact i is the q-space vector
 *      Σ_k w_k Jᵀ(e_r at vertex k), w = (+1 on the vertex, −barycentric weights on the partner);
 *   3. forms the local problem u = W λ + q (ct_pgs.h) with W = C_fᵀ A⁻¹ C_f (C_f the rows on the
 *      free dofs; A⁻¹ C_f by multi-right-hand-side solves against the core's factor) and
 *      q = J v_free + (g/h, 0, 0): u_n ≥ 0 is the linearized gap g + h J_n v ≥ 0 at the end of the
 *      step (position level, paper eq. 5). W couples only contacts of the same group of bodies
 *      connected by contacts (kinematic bodies and half-spaces connect nothing): it is stored
 *      dense per group;
 *   4. solves it with ct_pgs_solve (ADHESIVE_BOX: eq. 16 and steps 1–8 with the friction pyramid,
 *      adhesion factor a_i = h² A_i C β_i² with the pair's C; or COULOMB_DISK without adhesion),
 *      warm-started from the tracked pairs' last impulses, and returns r = Σ_i C_i λ_i;
 *   5. after the step (end_step) evolves β per tracked pair by eq. 11/12 (explicit Euler, clamped
 *      to [0, 1], §5.3) and drops the pairs whose gap exceeds debond_gap (full debonding).
 *
 * The adhesion coefficients c, w, eta, r, p0 are per body (CT_PARAM_PER_BODY): a contact between two
 * bodies uses the smaller of their values of each, one against a half-space the body's
 * (ct_lcp_pair_coef); debond_gap "auto" and the search reach follow per pair.
 *
 * Not intersection-free: the linearized constraints can let surfaces overlap (curved or fast
 * motion, edges crossing without a vertex); the core's verifier logs /steps/intersections and
 * this model logs the deepest end-of-step gap (negative: penetration).
 */
#include "lcp_pgs.h"

#include "contactlab/ct_rcc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    P_MU, P_C, P_W, P_ETA, P_R, P_P0, P_BETA0, P_MARGIN, P_THICK, P_DEBOND, P_LAW, P_TANG, P_MAX_ITER, P_TOL,
    P_OMEGA, P_SHUFFLE, P_WARM, P_NPARAMS
};

static const char *const law_choices[] = {"box", "disk", NULL};
static const char *const tang_choices[] = {"max", "min", NULL};

static const ct_param_spec lcp_pgs_params[] = {
    [P_MU] = {"mu", CT_PARAM_REAL, 0.0, "", 0, INFINITY, 0, NULL, "Coulomb friction coefficient μ", 0},
    /* c, w, eta, r, p0: per body; a contact between two bodies takes the smaller of their values
     * of each, a contact against a half-space the body's (ct_lcp_pair_coef) */
    [P_C] = {"c", CT_PARAM_REAL, 0.0, "N/m^3", 0, INFINITY, CT_PARAM_PER_BODY, NULL,
             "adhesion stiffness C: a bonded contact holds the traction C β² g at gap g (eq. 10); 0: no adhesion; "
             "a pair of bodies takes the smaller value",
             0},
    [P_W] = {"w", CT_PARAM_REAL, 1.0, "J/m^2", 0, INFINITY, CT_PARAM_PER_BODY, NULL,
             "adhesion energy W: debonding starts when C g² β exceeds it (eq. 12); a pair takes the smaller", 0},
    [P_ETA] = {"eta", CT_PARAM_REAL, 1.0, "J*s/m^2", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_PER_BODY, NULL,
               "debonding viscosity η: β falls at (W − C g² β)/η (eq. 12); a pair takes the smaller", 0},
    [P_R] = {"r", CT_PARAM_REAL, 0.0, "1/(Pa*s)", 0, INFINITY, CT_PARAM_PER_BODY, NULL,
             "bonding rate r under compression: β rises at r (p − β p₀) (eq. 11); a pair takes the smaller", 0},
    [P_P0] = {"p0", CT_PARAM_REAL, 1e3, "Pa", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_PER_BODY, NULL,
              "saturation pressure p₀: bonding stops at β = p/p₀ (eq. 11); a pair takes the smaller", 0},
    [P_BETA0] = {"beta0", CT_PARAM_REAL, 0.0, "", 0, 1, 0, NULL,
                 "adhesion intensity of the contacts found in the first step (later ones start at 0)", 0},
    [P_MARGIN] = {"margin", CT_PARAM_REAL, 1e-3, "m", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
                  "a vertex and a partner form a contact when they are closer than this at the start of the step "
                  "or at the end of the unconstrained motion, or meet on the way",
                  0},
    [P_THICK] = {"thickness", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_AUTO, NULL,
                 "the constraints keep the end-of-step gap at least this, below margin (a resting contact then ends "
                 "at a small positive gap instead of exactly 0, where round-off makes surfaces touch; auto: 1e-3 "
                 "margin)",
                 1},
    [P_DEBOND] = {"debond_gap", CT_PARAM_REAL, 0, "m", 0, INFINITY, CT_PARAM_MIN_EXCL | CT_PARAM_AUTO, NULL,
                  "full debonding: a bonded pair whose gap exceeds this is dropped (auto: twice the reference gap "
                  "sqrt(W/C) of the pair's W and C, §6)",
                  1},
    [P_LAW] = {"law", CT_PARAM_CHOICE, 0, "", 0, 0, 0, law_choices,
               "box: the paper's block PGS with implicit adhesion and the 4-sided friction pyramid; disk: Coulomb "
               "friction on the disk, no adhesion",
               0},
    [P_TANG] = {"tangential", CT_PARAM_CHOICE, 0, "", 0, 0, 0, tang_choices,
                "combination of the friction and tangential adhesion bounds (box law): max (the firmer, default) "
                "or min",
                0},
    [P_MAX_ITER] = {"pgs_max_iter", CT_PARAM_INT, 500, "", 1, 1e7, 0, NULL, "PGS sweeps per step at most", 0},
    [P_TOL] = {"pgs_tol", CT_PARAM_REAL, 1e-6, "", 0, INFINITY, CT_PARAM_MIN_EXCL, NULL,
               "PGS stops when its residual (ct_pgs.h: box: the largest impulse change of a sweep relative to "
               "the largest impulse; disk: the natural-map residual) is below this",
               0},
    [P_OMEGA] = {"omega", CT_PARAM_REAL, 1.0, "", 0, 2, CT_PARAM_MIN_EXCL | CT_PARAM_MAX_EXCL, NULL,
                 "SOR factor of the PGS updates", 0},
    [P_SHUFFLE] = {"shuffle", CT_PARAM_BOOL, 0, "", 0, 1, 0, NULL,
                   "visit the contacts in a new pseudo-random order every sweep (seeded by the step)", 0},
    [P_WARM] = {"warm_start", CT_PARAM_BOOL, 1, "", 0, 1, 0, NULL,
                "start PGS from the tracked pairs' impulses of the last step (re-projected on the new frames)", 0},
    [P_NPARAMS] = {NULL},
};


/* ------------------------------------------------------------------------------------------ */

static void destroy(void *p)
{
    lcp_state *st = p;
    free(st->movable);
    free(st->part_kin);
    free(st->body);
    ct_contact_mesh_free(&st->cm);
    ct_pair_map_free(&st->pairs);
    ct_candidates_free(&st->cand);
    free(st->c);
    free(st->ptr);
    free(st->col);
    free(st->grp_first);
    free(st->grp_n);
    free(st->order);
    free(st->val);
    free(st->q);
    free(st->mu_arr);
    free(st->adh);
    free(st->lam);
    free(st->u);
    free(st->dx);
    free(st->x1);
}

/* The pair rule (README.md, "Per-body parameters"): between two bodies each coefficient is the
 * smaller of the two bodies' values (the weaker surface limits the bond; in the paper's candy demo
 * "the adhesion properties are dominated by the adhesion stiffness of the Jell-O"); against a
 * half-space (pb >= nbodies) the body's own. */
void ct_lcp_pair_coef(const lcp_state *st, int pa, int pb, lcp_coef *k)
{
    const lcp_coef *A = &st->body[pa < st->nbodies ? pa : pb];
    const lcp_coef *B = pb < st->nbodies ? &st->body[pb] : A;
    k->c = fmin(A->c, B->c), k->w = fmin(A->w, B->w), k->eta = fmin(A->eta, B->eta);
    k->r = fmin(A->r, B->r), k->p0 = fmin(A->p0, B->p0);
    if (st->debond_auto) k->debond = k->c > 0.0 ? 2.0 * sqrt(k->w / k->c) : INFINITY;
    else k->debond = st->debond;
    k->reach = k->c > 0.0 && isfinite(k->debond) ? fmax(st->margin, k->debond) : st->margin;
}

static ct_status init(void *p, const ct_step_ctx *c, ct_params *prm, ct_diag *diag)
{
    lcp_state *st = p;
    const double *v = prm->value;
    st->mu = v[P_MU];
    st->beta0 = v[P_BETA0], st->margin = v[P_MARGIN];
    st->thick = prm->is_auto[P_THICK] ? 1e-3 * st->margin : v[P_THICK];
    /* a contact forms below the margin and is kept at the thickness: at or beyond the margin it
     * would be pushed out of its own detection range every step */
    if (!(st->thick < st->margin))
        return ct_diag_add(diag, CT_EINPUT, "/contact/thickness: %g m must be below margin = %g m (a contact forms "
                           "closer than the margin and is held at the thickness)", st->thick, st->margin);
    prm->value[P_THICK] = st->thick;
    st->debond_auto = prm->is_auto[P_DEBOND];
    if (st->debond_auto) { /* logged: the scene-level pair's (bodies without overrides) */
        st->debond = v[P_C] > 0.0 ? 2.0 * sqrt(v[P_W] / v[P_C]) : INFINITY;
        prm->value[P_DEBOND] = isfinite(st->debond) ? st->debond : NAN;
    } else {
        st->debond = v[P_DEBOND];
    }
    st->opts = ct_pgs_default_opts();
    st->opts.law = (int)v[P_LAW] == 1 ? CT_PGS_COULOMB_DISK : CT_PGS_ADHESIVE_BOX;
    st->opts.tangential = (int)v[P_TANG] == 1 ? CT_PGS_TANGENTIAL_MIN : CT_PGS_TANGENTIAL_MAX;
    st->opts.max_iter = (int)v[P_MAX_ITER];
    st->opts.tol = v[P_TOL];
    st->opts.omega = v[P_OMEGA];
    st->opts.shuffle = v[P_SHUFFLE] != 0.0;
    st->warm = v[P_WARM] != 0.0;
    st->dim = c->dim, st->nbodies = c->nbodies, st->np = c->nbodies + c->nobstacles;
    st->movable = malloc((size_t)c->nx + 1);
    st->part_kin = calloc((size_t)st->np + 1, 1);
    st->body = calloc((size_t)st->nbodies + 1, sizeof *st->body);
    if (!st->movable || !st->part_kin || !st->body) return CT_ENOMEM;
    /* each body's coefficients: its overrides, else the scene-level values */
    st->adhesive = 0;
    for (int b = 0; b < st->nbodies; ++b) {
        lcp_coef *k = &st->body[b];
        k->c = ct_params_body(prm, b, P_C), k->w = ct_params_body(prm, b, P_W), k->eta = ct_params_body(prm, b, P_ETA);
        k->r = ct_params_body(prm, b, P_R), k->p0 = ct_params_body(prm, b, P_P0);
        st->adhesive |= k->c > 0.0;
    }
    for (int k = 0; k < c->nx; ++k) st->movable[k] = !(c->vert_kinematic && c->vert_kinematic[k]);
    ct_status s = ct_contact_mesh_init(&st->cm, c->dim, c->surf, c->x_rest, c->vert_part, st->movable);
    if (s != CT_OK) return s;
    for (int q = 0; q < st->np; ++q) st->part_kin[q] = q >= c->nbodies || (q < st->cm.npart && st->cm.part_kin[q]);
    /* the broad phase's reach: the largest over the pairs that can occur (a movable body against
     * itself, another body or a half-space) */
    st->reach = st->margin;
    for (int a = 0; a < st->nbodies; ++a)
        for (int b = a; b < st->np; ++b) {
            if (st->part_kin[a] && st->part_kin[b]) continue;
            lcp_coef k;
            ct_lcp_pair_coef(st, a, b, &k);
            st->reach = fmax(st->reach, k.reach);
        }
    if ((s = ct_pair_map_init(&st->pairs, sizeof(pair_rec))) != CT_OK) return s;
    ct_candidates_init(&st->cand);
    static const char *const names[14] = {"lcp_contacts", "lcp_bonded", "beta_min", "beta_mean", "beta_max",
                                          "pgs_iters", "pgs_residual", "pgs_converged", "min_gap", "lcp_groups",
                                          "w_blocks", "t_contacts", "t_delassus", "t_pgs"};
    for (int k = 0; k < 14; ++k) st->names[k] = names[k];
    return CT_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------------------------------ */
/* the local problem                                                                           */

/* row r of contact i as a q-space vector: calls fn(qdof, value) for every entry (duplicates
 * possible through the embedding) */
#define FOR_ROW(st_, c_, ct_, r_, BODY)                                                        \
    do {                                                                                       \
        const ct_dofs *D_ = (c_)->dofs;                                                        \
        const int dim_ = (c_)->dim;                                                            \
        for (int k_ = 0; k_ < (ct_)->nv; ++k_) {                                               \
            const int xv_ = (ct_)->v[k_];                                                      \
            for (int j_ = D_->jptr[xv_]; j_ < D_->jptr[xv_ + 1]; ++j_)                         \
                for (int d_ = 0; d_ < dim_; ++d_) {                                            \
                    const int qdof = D_->jcol[j_] * dim_ + d_;                                 \
                    const double val = (ct_)->w[k_] * D_->jw[j_] * (ct_)->fr[(r_)][d_];        \
                    BODY;                                                                      \
                }                                                                              \
        }                                                                                      \
    } while (0)

/* Groups of coupled contacts: union–find over the movable bodies a contact touches. */
static int uf_find(int *p, int a)
{
    while (p[a] != a) a = p[a] = p[p[a]];
    return a;
}

ct_status ct_lcp_grow(void **p, long *cap, long need, size_t sz)
{
    if (need <= *cap) return CT_OK;
    long nc = *cap ? *cap : 64;
    while (nc < need) nc *= 2;
    void *np = realloc(*p, (size_t)nc * sz);
    if (!np) return CT_ENOMEM;
    *p = np, *cap = nc;
    return CT_OK;
}

static ct_status build_problem(lcp_state *st, const ct_step_ctx *c, const ct_linear_system *sys, int *ngroups)
{
    const int dim = c->dim, m = (int)st->m, nf = sys->nfree;
    const double h = c->h;
    ct_status s = CT_OK;
    /* groups */
    int *par = malloc(((size_t)st->np + 1) * sizeof *par);
    if (!par) return CT_ENOMEM;
    for (int q = 0; q < st->np; ++q) par[q] = q;
    for (int i = 0; i < m; ++i) {
        const contact *ct = &st->c[i];
        if (!st->part_kin[ct->pa] && !st->part_kin[ct->pb]) par[uf_find(par, ct->pa)] = uf_find(par, ct->pb);
    }
    /* a contact's group: the root of its movable participant */
    int *gid = malloc(((size_t)st->np + 1) * sizeof *gid);
    if (!gid) {
        free(par);
        return CT_ENOMEM;
    }
    for (int q = 0; q < st->np; ++q) gid[q] = -1;
    int ng = 0;
    for (int i = 0; i < m; ++i) {
        contact *ct = &st->c[i];
        const int root = uf_find(par, st->part_kin[ct->pa] ? ct->pb : ct->pa);
        if (gid[root] < 0) gid[root] = ng++;
        ct->group = gid[root];
    }
    free(par);
    free(gid);
    *ngroups = ng;
    /* arrays */
    long need_m = (long)m + 1;
    if (need_m > st->m_cap_arrays) {
        long nc = st->m_cap_arrays ? st->m_cap_arrays : 64;
        while (nc < need_m) nc *= 2;
        /* the per-contact arrays of the local problem, grown together */
        void **arr[] = {(void **)&st->ptr, (void **)&st->grp_first, (void **)&st->grp_n, (void **)&st->order,
                        (void **)&st->q, (void **)&st->mu_arr, (void **)&st->adh, (void **)&st->lam, (void **)&st->u};
        const size_t per[] = {sizeof(int), sizeof(int), sizeof(int), sizeof(int), 3 * sizeof(double),
                              sizeof(double), sizeof(double), 3 * sizeof(double), 3 * sizeof(double)};
        for (size_t k = 0; k < sizeof per / sizeof per[0]; ++k) {
            void *np = realloc(*arr[k], (size_t)nc * per[k]);
            if (!np) return CT_ENOMEM;
            *arr[k] = np;
        }
        st->m_cap_arrays = nc;
    }
    /* contacts ordered by group (stable): order[] lists contact indices group after group */
    for (int g = 0; g <= ng; ++g) st->grp_n[g] = 0;
    for (int i = 0; i < m; ++i) st->grp_n[st->c[i].group]++;
    st->grp_first[0] = 0;
    for (int g = 0; g < ng; ++g) st->grp_first[g + 1] = st->grp_first[g] + st->grp_n[g];
    {
        int *fill = calloc((size_t)ng + 1, sizeof *fill);
        if (!fill) return CT_ENOMEM;
        for (int i = 0; i < m; ++i) {
            const int g = st->c[i].group;
            st->order[st->grp_first[g] + fill[g]++] = i;
        }
        free(fill);
    }
    /* block rows: contact i (in the problem's numbering = its position in order) against every
     * contact of its group */
    long nblocks = 0;
    for (int g = 0; g < ng; ++g) nblocks += (long)st->grp_n[g] * st->grp_n[g];
    if ((s = ct_lcp_grow((void **)&st->col, &st->col_cap, nblocks + 1, sizeof *st->col)) != CT_OK) return s;
    if ((s = ct_lcp_grow((void **)&st->val, &st->val_cap, nblocks * dim * dim + 1, sizeof *st->val)) != CT_OK) return s;
    st->ptr[0] = 0;
    for (int a = 0; a < m; ++a) {
        const int g = st->c[st->order[a]].group;
        st->ptr[a + 1] = st->ptr[a] + st->grp_n[g];
        for (int k = 0; k < st->grp_n[g]; ++k) st->col[st->ptr[a] + k] = st->grp_first[g] + k;
    }
    /* W = C_fᵀ A⁻¹ C_f per group, by multi-RHS solves in chunks of columns */
    const int CH = 32;
    double *Cf = malloc(((size_t)nf * CH + 1) * sizeof *Cf), *Y = malloc(((size_t)nf * CH + 1) * sizeof *Y);
    if (!Cf || !Y) {
        free(Cf), free(Y);
        return CT_ENOMEM;
    }
    const int ncols = m * dim;
    for (int j0 = 0; j0 < ncols && s == CT_OK; j0 += CH) {
        const int nc = ncols - j0 < CH ? ncols - j0 : CH;
        memset(Cf, 0, (size_t)nf * nc * sizeof *Cf);
        for (int jj = 0; jj < nc; ++jj) {
            const int col = j0 + jj, b = col / dim, rb = col % dim;
            const contact *ct = &st->c[st->order[b]];
            double *cj = Cf + (size_t)jj * nf;
            FOR_ROW(st, c, ct, rb, {
                const int fi = sys->free_index[qdof];
                if (fi >= 0) cj[fi] += val;
            });
        }
        if ((s = sys->solve(sys, nc, Cf, Y)) != CT_OK) break;
        for (int jj = 0; jj < nc; ++jj) {
            const int col = j0 + jj, b = col / dim, rb = col % dim;
            const int g = st->c[st->order[b]].group;
            const double *yj = Y + (size_t)jj * nf;
            for (int a = st->grp_first[g]; a < st->grp_first[g] + st->grp_n[g]; ++a) {
                const contact *ci = &st->c[st->order[a]];
                const long blk = st->ptr[a] + (b - st->grp_first[g]);
                for (int ra = 0; ra < dim; ++ra) {
                    double dot = 0.0;
                    FOR_ROW(st, c, ci, ra, {
                        const int fi = sys->free_index[qdof];
                        if (fi >= 0) dot += val * yj[fi];
                    });
                    st->val[(size_t)blk * dim * dim + (size_t)ra * dim + rb] = dot;
                }
            }
        }
    }
    free(Cf);
    free(Y);
    if (s != CT_OK) return s;
    /* q = J v_free + (g/h, 0, 0); μ, adhesion factors, the warm start */
    for (int a = 0; a < m; ++a) {
        const contact *ct = &st->c[st->order[a]];
        double vr[3];
        ct_lcp_rel_velocity(ct, dim, sys->vx_free, vr);
        for (int r = 0; r < dim; ++r) {
            double u = 0.0;
            for (int d = 0; d < dim; ++d) u += ct->fr[r][d] * vr[d];
            st->q[(size_t)a * dim + r] = u + (r == 0 ? (ct->gap - st->thick) / h : 0.0);
            st->lam[(size_t)a * dim + r] = ct->lam[r];
        }
        st->mu_arr[a] = st->mu;
        st->adh[a] = h * h * ct->area * ct->k.c * ct->beta * ct->beta;
    }
    return CT_OK;
}

static ct_status step(void *p, const ct_step_ctx *c, const ct_linear_system *sys, double *r)
{
    lcp_state *st = p;
    ct_diag *diag = sys->diag;
    const int dim = c->dim;
    /* the faces' normals at xⁿ for the face-aware contact areas */
    double t0 = now();
    ct_status s = st->adhesive ? ct_contact_mesh_lag(&st->cm, c->x_prev, NULL, 0.0, 0) : CT_OK;
    if (s == CT_OK) s = ct_lcp_find_contacts(st, c, sys);
    double t1 = now();
    st->t_contacts = t1 - t0, st->t_delassus = st->t_pgs = 0.0;
    st->res = (ct_pgs_result){0, 1, 0.0};
    st->ngroups = 0, st->w_blocks = 0;
    if (s != CT_OK || st->m == 0) goto done;
    if ((s = build_problem(st, c, sys, &st->ngroups)) != CT_OK) goto done;
    st->w_blocks = st->ptr[st->m];
    double t2 = now();
    st->t_delassus = t2 - t1;
    const int m = (int)st->m;
    ct_pgs_problem P = {m, dim, st->ptr, st->col, st->val, st->q, st->mu_arr, st->adh};
    ct_pgs_opts o = st->opts;
    o.seed = (unsigned long)c->step + 1;
    if ((s = ct_pgs_solve(&P, &o, st->lam, st->u, NULL, &st->res, diag)) != CT_OK) goto done;
    st->t_pgs = now() - t2;
    for (int a = 0; a < m; ++a) {
        contact *ct = &st->c[st->order[a]];
        for (int rr = 0; rr < dim; ++rr) {
            ct->lam[rr] = st->lam[(size_t)a * dim + rr];
            FOR_ROW(st, c, ct, rr, { r[qdof] += val * ct->lam[rr]; });
        }
    }
done:
    st->started = 1;
    if (s != CT_OK) st->m = 0;
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* after the step: β (§5.3), the tracked pairs                                                 */

/* The adhesive part of a contact's tangential impulse (frame impulses lam): what lies beyond the
 * law's friction set of μ max(λ_n, 0) (box law: per component, the 4-sided pyramid; disk: the
 * norm). 0 for a tangential impulse that friction alone can carry; the whole of it in tension. */
static double tangential_adhesive(const lcp_state *st, const double *lam, int dim)
{
    const double lf = lam[0] > 0.0 ? st->mu * lam[0] * (1.0 + 1e-12) : 0.0;
    double s = 0.0;
    if (st->opts.law == CT_PGS_ADHESIVE_BOX) {
        for (int r = 1; r < dim; ++r) {
            const double e = fmax(fabs(lam[r]) - lf, 0.0);
            s += e * e;
        }
        return sqrt(s);
    }
    for (int r = 1; r < dim; ++r) s += lam[r] * lam[r];
    return fmax(sqrt(s) - lf, 0.0);
}

/* β̇ of §5.3 for a contact with impulses lam (frame) over area A and the pair's coefficients k:
 * ct_lcp_beta_rate with the normal traction −λ_n/(hA) and the tangential adhesive traction (the
 * tangential impulse beyond friction, tangential_adhesive)/(hA): "in case of normal compression, we
 * compute the tangential adhesive traction", so friction does not debond a compressed contact. */
static double beta_rate(const lcp_state *st, const lcp_coef *k, double beta, const double *lam, double A, double h,
                        int dim)
{
    if (!(A > 0.0) || !(k->c > 0.0)) return 0.0;
    const ct_rcc_law L = {k->c, 0.0, k->eta, k->w, k->r, k->p0};
    return ct_lcp_beta_rate(&L, beta, -lam[0] / (h * A), tangential_adhesive(st, lam, dim) / (h * A));
}

static ct_status end_step(void *p, const ct_step_ctx *c, const double *x_next, ct_model_stats *stats)
{
    lcp_state *st = p;
    const int dim = c->dim;
    ct_pair_map_begin_pass(&st->pairs);
    st->min_gap = INFINITY;
    for (long i = 0; i < st->m; ++i) {
        contact *ct = &st->c[i];
        double g;
        const double gt = ct_lcp_end_gap(ct, c, x_next, &g);
        st->min_gap = fmin(st->min_gap, gt);
        double beta = ct->beta;
        if (ct->area > 0.0)
            beta = fmin(1.0, fmax(0.0, beta + c->h * beta_rate(st, &ct->k, beta, ct->lam, ct->area, c->h, dim)));
        if (g > ct->k.debond) beta = 0.0; /* full debonding */
        ct->beta = beta;
        const int keep = beta > 0.0 || ct->lam[0] != 0.0 || st->warm;
        if (!keep) continue;
        int created;
        pair_rec *R = ct_pair_map_insert(&st->pairs, ct->key, &created);
        if (!R) return CT_ENOMEM;
        R->beta = beta;
        R->gap = g;
        for (int d = 0; d < 3; ++d) R->lam[d] = 0.0;
        for (int r = 0; r < dim; ++r)
            for (int d = 0; d < dim; ++d) R->lam[d] += ct->lam[r] * ct->fr[r][d];
    }
    ct_pair_map_sweep(&st->pairs); /* pairs not found in this step: their bond is gone */
    if (stats) {
        stats->n_candidates = st->cand.vf.n + st->cand.ve.n;
        stats->n_active = st->m;
        stats->min_distance = st->min_gap;
    }
    return CT_OK;
}

/* ------------------------------------------------------------------------------------------ */

static ct_status forces(void *p, const ct_step_ctx *c, const double *x, ct_force_report *out)
{
    (void)x;
    lcp_state *st = p;
    const int dim = c->dim;
    ct_force_report_zero(out);
    long bonded = 0, nb = 0;
    double bmin = INFINITY, bmax = -INFINITY, bsum = 0.0;
    for (long i = 0; i < st->m; ++i) {
        const contact *ct = &st->c[i];
        const int a = ct->pa, b = ct->pb;
        const double ln = ct->lam[0];
        double ft[3] = {0, 0, 0}, fn[3] = {0, 0, 0};
        for (int d = 0; d < dim; ++d) {
            fn[d] = ln * ct->fr[0][d] / c->h;
            for (int r = 1; r < dim; ++r) ft[d] += ct->lam[r] * ct->fr[r][d] / c->h;
        }
        const ct_force_category cn = ln >= 0.0 ? CT_FORCE_BARRIER : CT_FORCE_ADHESION_NORMAL;
        /* friction when the tangential impulse lies in the law's friction set, tangential adhesion
         * otherwise (tangential_adhesive) */
        double tmag = 0.0;
        for (int r = 1; r < dim; ++r) tmag += ct->lam[r] * ct->lam[r];
        tmag = sqrt(tmag);
        const ct_force_category ctg =
            tangential_adhesive(st, ct->lam, dim) > 0.0 ? CT_FORCE_ADHESION_TANGENTIAL : CT_FORCE_FRICTION;
        double *fa = ct_force_report_at(out, a, b, cn), *fb = ct_force_report_at(out, b, a, cn);
        double *ta = ct_force_report_at(out, a, b, ctg), *tb = ct_force_report_at(out, b, a, ctg);
        for (int d = 0; d < dim; ++d) fa[d] += fn[d], fb[d] -= fn[d], ta[d] += ft[d], tb[d] -= ft[d];
        if (ln != 0.0 || tmag != 0.0) out->active_pairs[a * out->np + b]++, out->active_pairs[b * out->np + a]++;
        if (ct->area > 0.0) {
            bonded += ct->beta > 0.0;
            bmin = fmin(bmin, ct->beta), bmax = fmax(bmax, ct->beta), bsum += ct->beta, ++nb;
        }
    }
    const double vals[14] = {(double)st->m,
                             (double)bonded,
                             nb ? bmin : NAN,
                             nb ? bsum / (double)nb : NAN,
                             nb ? bmax : NAN,
                             (double)st->res.iters,
                             st->res.residual,
                             (double)st->res.converged,
                             st->m ? st->min_gap : NAN,
                             (double)st->ngroups,
                             (double)st->w_blocks,
                             st->t_contacts,
                             st->t_delassus,
                             st->t_pgs};
    const int ns = out->nscalars < 14 ? out->nscalars : 14;
    for (int k = 0; k < ns; ++k) {
        out->scalar_names[k] = st->names[k];
        out->scalars[k] = vals[k];
    }
    out->nscalars = ns;
    return CT_OK;
}

/* Per-vertex fields of the last step's contacts: the force of each contact's impulse / h on its
 * stencil (w_k λ / h: the vertex, and the partner's vertices with their barycentric shares), the
 * contact's true gap at x on every stencil vertex (negative: penetration), and with adhesion its β on
 * the contact vertex. Before the first step there are none. */
static ct_status vertex_fields(void *p, const ct_step_ctx *c, const double *x, ct_vertex_fields *out)
{
    lcp_state *st = p;
    const int dim = c->dim;
    for (long i = 0; i < st->m; ++i) {
        const contact *ct = &st->c[i];
        double f[3] = {0, 0, 0}, g_lin;
        for (int r = 0; r < dim; ++r)
            for (int d = 0; d < dim; ++d) f[d] += ct->lam[r] * ct->fr[r][d] / c->h;
        const double gap = ct_lcp_end_gap(ct, c, x, &g_lin);
        for (int k = 0; k < ct->nv; ++k) {
            for (int d = 0; d < dim; ++d) out->force[ct->v[k]][d] += ct->w[k] * f[d];
            ct_vertex_fields_gap_min(out, ct->v[k], gap);
        }
        if (st->adhesive && ct->area > 0.0) out->beta[ct->v[0]] = fmax(out->beta[ct->v[0]], ct->beta);
    }
    out->filled |= CT_VF_FORCE | CT_VF_GAP | (st->adhesive ? CT_VF_BETA : 0u);
    return CT_OK;
}

const ct_model_type ct_model_lcp_pgs = {
    .name = "lcp_pgs",
    .summary = "Gascón et al. 2010: velocity-level contact LCP of the linearized implicit step, block PGS with "
               "implicit adhesion constraints and a friction pyramid (constraint family; not intersection-free)",
    .family = CT_FAMILY_CONSTRAINT,
    .guarantees = 0,
    .state_size = sizeof(lcp_state),
    .params = lcp_pgs_params,
    .init = init,
    .destroy = destroy,
    .step = step,
    .end_step = end_step,
    .forces = forces,
    .vertex_fields = vertex_fields,
};
