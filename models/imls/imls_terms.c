/* imls_terms.c — the imls model's fields and terms: per body the samples (its surface vertices),
 * kernel radius and neighbour tree; the term list (query vertex × field, with the candidate samples
 * within R + margin, reused while no surface vertex has moved more than margin/2); the value,
 * gradient and Hessian passes over the terms (parallel, per-term results in place, so the sums and
 * the triplet order do not depend on the thread count); the half-space terms. The step-size rule is in
 * imls_step.c.
 * README.md states the formulas and the rules. */
#include "imls_model.h"

#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_barrier.h"
#include "contactlab/ct_parallel.h"

#include <float.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double imls_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


/* ---------- work memory ---------- */

/* Grow w to the sizes ct_imls_term_eval needs for kmax samples (what, mode); keeps larger buffers. */
long imls_unique_add(imls_state *st, long cnt, const int *v, long n)
{
    for (long i = 0; i < n; ++i)
        if (!st->mark[v[i]]) st->mark[v[i]] = 1, st->list[cnt++] = v[i];
    return cnt;
}

void imls_unique_end(imls_state *st, long cnt)
{
    for (long i = 0; i < cnt; ++i) st->mark[st->list[i]] = 0;
}

ct_status imls_work_ensure(imls_work *w, const imls_state *st, int kmax, ct_imls_mode what, ct_imls_hess_mode mode)
{
    if (kmax < 1) kmax = 1;
    const int cap = ct_imls_term_stencil_cap(&st->topo, kmax);
    const size_t wl = ct_imls_term_work_size(&st->topo, kmax, cap, what, mode);
    const size_t N = (size_t)cap * (size_t)st->dim, nh = what == CT_IMLS_HESSIAN ? N * N : 0;
    if (wl > w->work_len) {
        free(w->work);
        w->work = malloc(wl * sizeof *w->work);
        w->work_len = w->work ? wl : 0;
    }
    if (cap > w->cap) {
        free(w->verts), free(w->grad);
        w->verts = malloc((size_t)cap * sizeof *w->verts);
        w->grad = malloc(N * sizeof *w->grad);
        w->cap = w->verts && w->grad ? cap : 0;
    }
    if (kmax > w->scap) {
        free(w->samp);
        w->samp = malloc((size_t)kmax * sizeof *w->samp);
        w->scap = w->samp ? kmax : 0;
    }
    if (nh > w->hcap) {
        free(w->hess);
        w->hess = malloc(nh * sizeof *w->hess);
        w->hcap = w->hess ? nh : 0;
    }
    if (w->work_len < wl || w->cap < cap || w->scap < kmax || w->hcap < nh) return CT_ENOMEM;
    return CT_OK;
}

/* A positions buffer of n doubles in w (max_step's trial points). */
double *imls_work_y(imls_work *w, size_t n)
{
    if (n > w->ycap) {
        free(w->y);
        w->y = malloc(n * sizeof *w->y);
        w->ycap = w->y ? n : 0;
    }
    return w->y;
}

void imls_work_free(imls_work *w)
{
    free(w->work);
    free(w->verts);
    free(w->grad);
    free(w->hess);
    free(w->samp);
    free(w->y);
    memset(w, 0, sizeof *w);
}

/* The pool: one work per thread, kept across calls (a 3D Hessian pass needs megabytes per thread; fresh
 * allocations in every pass cost more than the pass on a busy machine). */
ct_status imls_pool_reserve(imls_state *st, int nthreads)
{
    if (nthreads <= st->npool) return CT_OK;
    imls_work *np = realloc(st->pool, (size_t)nthreads * sizeof *np);
    if (!np) return CT_ENOMEM;
    memset(np + st->npool, 0, (size_t)(nthreads - st->npool) * sizeof *np);
    st->pool = np;
    st->npool = nthreads;
    return CT_OK;
}

imls_work *imls_thread_work(imls_state *st)
{
#ifdef _OPENMP
    return &st->pool[omp_get_thread_num()];
#else
    return &st->pool[0];
#endif
}

/* ---------- fields ---------- */

void imls_fields_free(imls_state *st)
{
    if (st->field)
        for (int b = 0; b < st->nbodies; ++b) {
            free(st->field[b].verts);
            free(st->field[b].pts);
            ct_neighbors_free(&st->field[b].nb);
        }
    free(st->field);
    st->field = NULL;
    ct_vnormal_topo_free(&st->topo);
    free(st->dirw);
    free(st->qv);
    free(st->qbody);
    free(st->qw);
    free(st->term);
    free(st->cand);
    free(st->x_list);
    free(st->x_eval);
    free(st->psi);
    free(st->eterm);
    free(st->tstate);
    free(st->sup);
    free(st->nsup);
    ct_vnormal_cache_free(&st->nc0);
    ct_vnormal_cache_free(&st->nc1);
    ct_vnormal_cache_free(&st->nc2);
    free(st->mark);
    free(st->list);
    st->mark = NULL;
    st->list = NULL;
    for (int i = 0; i < st->npool; ++i) imls_work_free(&st->pool[i]);
    free(st->pool);
    st->pool = NULL;
    st->npool = 0;
}

/* circumradius of a triangle */
static double circumradius(const double *a, const double *b, const double *c)
{
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = c[k] - b[k];
    const double cr[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0]};
    const double A2 = sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]); /* twice the area */
    const double lu = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), lv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]),
                 lw = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    return A2 > 0.0 ? lu * lv * lw / (2.0 * A2) : 0.5 * fmax(lu, fmax(lv, lw));
}

ct_status imls_fields_init(imls_state *st, const ct_step_ctx *c, const double *R_given, const double *R_factor,
                           const ct_imls_params *fp, ct_imls_hess_mode mode, ct_diag *diag)
{
    const int dim = c->dim, nb = c->nbodies;
    const ct_surface *s = c->surf;
    ct_status sc = ct_vnormal_topo_from_surface(&st->topo, s);
    if (sc != CT_OK) return ct_diag_add(diag, sc, "imls: vertex-normal topology of the contact surface");
    st->field = calloc((size_t)nb + 1, sizeof *st->field);
    st->dirw = calloc((size_t)nb * (size_t)nb + 1, sizeof *st->dirw);
    st->qv = malloc(((size_t)s->nbv + 1) * sizeof *st->qv);
    st->qbody = malloc(((size_t)s->nbv + 1) * sizeof *st->qbody);
    st->qw = malloc(((size_t)s->nbv + 1) * sizeof *st->qw);
    if (!st->field || !st->dirw || !st->qv || !st->qbody || !st->qw) return CT_ENOMEM;
    for (int b = 0; b < nb; ++b) ct_neighbors_init(&st->field[b].nb);
    /* samples per body */
    int *cnt = calloc((size_t)nb + 1, sizeof *cnt);
    if (!cnt) return CT_ENOMEM;
    for (int k = 0; k < s->nbv; ++k) {
        const int p = c->vert_part[s->bverts[k]];
        if (p >= 0 && p < nb) cnt[p]++;
    }
    for (int b = 0; b < nb; ++b) {
        imls_field *f = &st->field[b];
        f->verts = malloc(((size_t)cnt[b] + 1) * sizeof *f->verts);
        f->pts = malloc(((size_t)cnt[b] * (size_t)dim + 1) * sizeof *f->pts);
        f->kinematic = 1;
        if (!f->verts || !f->pts) {
            free(cnt);
            return CT_ENOMEM;
        }
    }
    free(cnt);
    for (int k = 0; k < s->nbv; ++k) { /* bverts are increasing, so each body's list is */
        const int v = s->bverts[k], p = c->vert_part[v];
        if (p < 0 || p >= nb) continue;
        imls_field *f = &st->field[p];
        f->verts[f->n++] = v;
        if (!(c->vert_kinematic && c->vert_kinematic[v])) f->kinematic = 0;
    }
    /* mean edge length and covering radius per body, at rest */
    double *esum = calloc((size_t)nb + 1, sizeof *esum);
    long *ecnt = calloc((size_t)nb + 1, sizeof *ecnt);
    if (!esum || !ecnt) {
        free(esum);
        free(ecnt);
        return CT_ENOMEM;
    }
    const double *X = c->x_rest;
    for (int e = 0; e < s->ned; ++e) {
        const int a = s->edges[2 * e], bb = s->edges[2 * e + 1], p = c->vert_part[a];
        if (p < 0 || p >= nb) continue;
        const double L = sqrt(imls_dist2(X + (size_t)a * dim, X + (size_t)bb * dim, dim));
        esum[p] += L;
        ecnt[p]++;
        if (dim == 2) st->field[p].hcov = fmax(st->field[p].hcov, 0.5 * L);
    }
    if (dim == 3)
        for (int t = 0; t < s->nf; ++t) {
            const int *fv = s->faces + 3 * t, p = c->vert_part[fv[0]];
            if (p < 0 || p >= nb) continue;
            st->field[p].hcov = fmax(st->field[p].hcov, circumradius(X + 3 * (size_t)fv[0], X + 3 * (size_t)fv[1],
                                                                     X + 3 * (size_t)fv[2]));
        }
    for (int b = 0; b < nb; ++b) {
        imls_field *f = &st->field[b];
        f->ebar = ecnt[b] ? esum[b] / (double)ecnt[b] : 0.0;
        double R = isfinite(R_given[b]) ? R_given[b] : R_factor[b] * f->ebar;
        /* a query within reach (d̂, or d̂_a with adhesion) of the surface must be well inside some
           sample's support: a surface point is within hcov of a sample, so such a query is within
           √(reach² + hcov²) of one */
        const double Rmin = 1.25 * sqrt(st->reach * st->reach + f->hcov * f->hcov);
        if (!isfinite(R_given[b]) && R < Rmin) R = Rmin;
        f->R = R;
        ct_imls_term_params_default(&f->prm, dim, R, st->dhat, st->kappa);
        f->prm.field = *fp;
        f->prm.field.R = R;
        f->prm.hess = mode;
        f->prm.fade = st->fade;
        if (f->n > 0 && !(R > 0.0)) {
            free(esum);
            free(ecnt);
            return ct_diag_add(diag, CT_EINPUT, "/contact/radius: body \"%s\" gets a kernel radius %g m (must be > 0)",
                               c->part_names[b], R);
        }
        if (f->n > 0 && isfinite(R_given[b]) && R_given[b] < Rmin)
            ct_diag_add(diag, CT_OK,
                        "warning: /contact/radius: %g m is below 1.25·√(reach² + h²) = %g m for body \"%s\" (h = %g m, the "
                        "largest distance from its surface to a sample): queries within reach may find no support",
                        R_given[b], Rmin, c->part_names[b], f->hcov);
    }
    free(esum);
    free(ecnt);
    /* direction factors and query vertices */
    for (int i = 0; i < nb; ++i)
        for (int j = 0; j < nb; ++j) {
            double w = 0.0;
            if (i != j && st->field[i].n > 0 && st->field[j].n > 0 && !st->field[i].kinematic)
                w = st->field[j].kinematic ? 1.0 : 0.5;
            st->dirw[i * nb + j] = w;
        }
    st->nq = 0;
    for (int k = 0; k < s->nbv; ++k) {
        const int v = s->bverts[k], p = c->vert_part[v];
        if (p < 0 || p >= nb || st->field[p].kinematic) continue;
        st->qv[st->nq] = v;
        st->qbody[st->nq] = p;
        st->qw[st->nq] = s->vert_area[v];
        st->nq++;
    }
    const size_t nxd = (size_t)c->nx * (size_t)dim;
    ct_vnormal_cache_init(&st->nc0);
    ct_vnormal_cache_init(&st->nc1);
    ct_vnormal_cache_init(&st->nc2);
    st->mark = calloc((size_t)c->nx + 1, 1);
    st->list = malloc(((size_t)c->nx + 1) * sizeof *st->list);
    if (!st->mark || !st->list) return CT_ENOMEM;
    st->x_list = malloc((nxd + 1) * sizeof *st->x_list);
    st->x_eval = malloc((nxd + 1) * sizeof *st->x_eval);
    if (!st->x_list || !st->x_eval) return CT_ENOMEM;
    return CT_OK;
}

/* the smallest kernel radius: the margin's scale */
double imls_margin(const imls_state *st)
{
    double Rmin = INFINITY;
    for (int b = 0; b < st->nbodies; ++b)
        if (st->field[b].n > 0) Rmin = fmin(Rmin, st->field[b].R);
    return isfinite(Rmin) ? st->margin_frac * Rmin : 0.0;
}

static ct_status push_term(imls_state *st, const imls_term *t, const ct_neighbor_list *l, const imls_field *f)
{
    if (st->nterm == st->term_cap) {
        const long cap = st->term_cap ? 2 * st->term_cap : 256;
        imls_term *nt = realloc(st->term, (size_t)cap * sizeof *nt);
        if (!nt) return CT_ENOMEM;
        st->term = nt;
        st->term_cap = cap;
    }
    if (st->ncand + l->n > st->cand_cap) {
        long cap = st->cand_cap ? 2 * st->cand_cap : 4096;
        while (cap < st->ncand + l->n) cap *= 2;
        int *nc = realloc(st->cand, (size_t)cap * sizeof *nc);
        if (!nc) return CT_ENOMEM;
        st->cand = nc;
        st->cand_cap = cap;
    }
    imls_term *d = &st->term[st->nterm++];
    *d = *t;
    d->c0 = st->ncand;
    d->nc = l->n;
    for (int k = 0; k < l->n; ++k) st->cand[st->ncand++] = f->verts[l->idx[k]];
    return CT_OK;
}

/* Rebuild the fields' trees at x (positions of the samples) and their boxes. */
static ct_status build_trees(imls_state *st, const ct_step_ctx *c, const double *x)
{
    const int dim = st->dim;
    for (int b = 0; b < st->nbodies; ++b) {
        imls_field *f = &st->field[b];
        if (f->n == 0) continue;
        for (int d = 0; d < 3; ++d) f->lo[d] = INFINITY, f->hi[d] = -INFINITY;
        for (int k = 0; k < f->n; ++k)
            for (int d = 0; d < dim; ++d) {
                const double v = x[(size_t)f->verts[k] * dim + d];
                f->pts[(size_t)k * dim + d] = v;
                f->lo[d] = fmin(f->lo[d], v);
                f->hi[d] = fmax(f->hi[d], v);
            }
        ct_status s = ct_neighbors_build(&f->nb, dim, f->n, f->pts, c->threads);
        if (s != CT_OK) return s;
    }
    return CT_OK;
}


/* Make the term list valid at x. */
ct_status imls_ensure_list(imls_state *st, const ct_step_ctx *c, const double *x)
{
    const int dim = st->dim;
    const double margin = imls_margin(st);
    if (st->list_valid) {
        const double lim = 0.25 * margin * margin; /* (margin/2)² */
        int ok = 1;
        for (int b = 0; b < st->nbodies && ok; ++b) {
            const imls_field *f = &st->field[b];
            for (int k = 0; k < f->n && ok; ++k) {
                const size_t o = (size_t)f->verts[k] * dim;
                if (!(imls_dist2(x + o, st->x_list + o, dim) <= lim)) ok = 0;
            }
        }
        if (ok) return CT_OK;
    }
    const double t0 = imls_now();
    st->list_valid = 0;
    st->eval_valid = 0;
    ct_status s = build_trees(st, c, x);
    if (s != CT_OK) return s;
    st->nterm = st->ncand = 0;
    ct_neighbor_list l;
    ct_neighbor_list_init(&l);
    for (int k = 0; k < st->nq && s == CT_OK; ++k) {
        const int q = st->qv[k], i = st->qbody[k];
        const double *xq = x + (size_t)q * dim;
        for (int j = 0; j < st->nbodies && s == CT_OK; ++j) {
            const double w = st->dirw[i * st->nbodies + j];
            if (!(w > 0.0)) continue;
            const imls_field *f = &st->field[j];
            const double rho = f->R + margin;
            if (!imls_in_box(f, xq, rho, dim)) continue;
            s = ct_neighbors_query(&f->nb, xq, rho, &l);
            if (s == CT_OK && l.n > 0) {
                const imls_term t = {q, k, i, j, w * st->qw[k], 0, 0};
                s = push_term(st, &t, &l, f);
            }
        }
    }
    ct_neighbor_list_free(&l);
    if (s != CT_OK) return s;
    const long n = st->nterm + 1;
    free(st->psi);
    free(st->eterm);
    free(st->tstate);
    free(st->sup);
    free(st->nsup);
    st->psi = malloc((size_t)n * sizeof *st->psi);
    st->eterm = malloc((size_t)n * sizeof *st->eterm);
    st->tstate = malloc((size_t)n);
    st->sup = malloc(((size_t)st->ncand + 1) * sizeof *st->sup);
    st->nsup = malloc((size_t)n * sizeof *st->nsup);
    if (!st->psi || !st->eterm || !st->tstate || !st->sup || !st->nsup) return CT_ENOMEM;
    memcpy(st->x_list, x, (size_t)st->nx * dim * sizeof *x);
    st->list_valid = 1;
    st->n_list_builds++;
    st->t_nb += imls_now() - t0;
    return CT_OK;
}

const ct_adhesion_law *imls_law(const imls_state *st, int a, int b)
{
    if (!st->law) return NULL;
    const ct_adhesion_law *L = &st->law[a * st->np + b];
    return L->y_eps > 0.0 ? L : NULL;
}

static double adhesion_fn(const void *ctx, double psi, double *d1, double *d2)
{
    return ct_adhesion(ctx, psi, d1, d2);
}

void imls_term_prm(const imls_state *st, const imls_term *tm, int with_law, ct_imls_term_params *out)
{
    *out = st->field[tm->fb].prm;
    const ct_adhesion_law *L = with_law ? imls_law(st, tm->qb, tm->fb) : NULL;
    if (L) {
        out->extra = adhesion_fn;
        out->extra_ctx = L;
        out->extra_reach = L->da;
    }
}

/* The candidates of term t within the field's R at x into out; returns their count. */
static int support_of(const imls_state *st, const imls_term *t, const double *x, int *out)
{
    const int dim = st->dim;
    const double R2 = st->field[t->fb].R * st->field[t->fb].R;
    const double *xq = x + (size_t)t->q * dim;
    int n = 0;
    for (int k = 0; k < t->nc; ++k) {
        const int v = st->cand[t->c0 + k];
        if (imls_dist2(xq, x + (size_t)v * dim, dim) < R2) out[n++] = v;
    }
    return n;
}

/* ---------- half-spaces ---------- */

/* The density of a vertex at distance d in front of half-space o, κ b(d) (+ a(d) with adhesion), and its
 * first two derivatives; 0 beyond the reach, +∞ for d ≤ 0. */
static double hs_density(const imls_state *st, int qb, int o, double d, double *d1, double *d2)
{
    *d1 = *d2 = 0.0;
    if (!(d > 0.0)) return INFINITY;
    double e = 0.0;
    if (d < st->dhat) {
        double b1 = 0.0, b2 = 0.0;
        e = st->kappa * ct_barrier(d, st->dhat, &b1, &b2);
        *d1 = st->kappa * b1;
        *d2 = st->kappa * b2;
    }
    const ct_adhesion_law *L = imls_law(st, qb, st->nbodies + o);
    if (L && d < L->da) {
        double a1 = 0.0, a2 = 0.0;
        e += ct_adhesion(L, d, &a1, &a2);
        *d1 += a1;
        *d2 += a2;
    }
    return e;
}

/* distance of query k in front of half-space o */
double imls_halfspace_dist(const imls_state *st, const ct_step_ctx *c, const double *x, int k, int o)
{
    const ct_obstacle *ob = &c->obstacles[o];
    const double *xq = x + (size_t)st->qv[k] * st->dim;
    double d = 0.0;
    for (int a = 0; a < st->dim; ++a) d += ob->normal[a] * (xq[a] - ob->point[a]);
    return d;
}

double imls_halfspace_energy(const imls_state *st, const ct_step_ctx *c, const double *x, double *g)
{
    const int dim = st->dim;
    double E = 0.0;
    for (int o = 0; o < st->nobs; ++o)
        for (int k = 0; k < st->nq; ++k) {
            const double d = imls_halfspace_dist(st, c, x, k, o);
            if (!(d < st->reach)) continue;
            double d1, d2;
            E += st->qw[k] * hs_density(st, st->qbody[k], o, d, &d1, &d2);
            if (g && d > 0.0)
                for (int a = 0; a < dim; ++a) g[(size_t)st->qv[k] * dim + a] += st->qw[k] * d1 * c->obstacles[o].normal[a];
        }
    return E;
}

/* The half-space term of query k and obstacle o: its force on the vertex split into the barrier's and
 * the adhesion's (fb, fa: dim each); returns 0 when the term is zero. */
int imls_halfspace_force(const imls_state *st, const ct_step_ctx *c, const double *x, int k, int o, double *fb,
                         double *fa)
{
    const double d = imls_halfspace_dist(st, c, x, k, o);
    if (!(d > 0.0 && d < st->reach)) return 0;
    double b1 = 0.0, a1 = 0.0;
    if (d < st->dhat) ct_barrier(d, st->dhat, &b1, NULL);
    const ct_adhesion_law *L = imls_law(st, st->qbody[k], st->nbodies + o);
    if (L && d < L->da) ct_adhesion(L, d, &a1, NULL);
    for (int a = 0; a < st->dim; ++a) {
        fb[a] = -st->qw[k] * st->kappa * b1 * c->obstacles[o].normal[a];
        fa[a] = -st->qw[k] * a1 * c->obstacles[o].normal[a];
    }
    return 1;
}

/* exact: the density's second derivative as it is; else clipped at 0 (adhesion's softening branch) */
static ct_status halfspace_hessian(const imls_state *st, const ct_step_ctx *c, const double *x, int exact,
                                   ct_triplets *H)
{
    const int dim = st->dim;
    for (int o = 0; o < st->nobs; ++o) {
        const ct_obstacle *ob = &c->obstacles[o];
        for (int k = 0; k < st->nq; ++k) {
            const int q = st->qv[k];
            const double d = imls_halfspace_dist(st, c, x, k, o);
            if (!(d > 0.0 && d < st->reach)) continue;
            double d1, d2;
            hs_density(st, st->qbody[k], o, d, &d1, &d2);
            if (!exact && d2 < 0.0) d2 = 0.0;
            double h[9];
            for (int a = 0; a < dim; ++a)
                for (int bb = 0; bb < dim; ++bb) h[a * dim + bb] = st->qw[k] * d2 * ob->normal[a] * ob->normal[bb];
            ct_status s = ct_triplets_add_block(H, &q, 1, dim, h);
            if (s != CT_OK) return s;
        }
    }
    return CT_OK;
}

/* ---------- the passes ---------- */

static double term_energy(long i, const void *ctx)
{
    const imls_state *st = ctx;
    return st->eterm[i];
}

/* Fill cache nc at `level` for the samples in support of the terms: all of them (active_only 0) or those
 * of the active terms. */
static ct_status fill_normals(imls_state *st, const ct_step_ctx *c, const double *x, int active_only,
                              ct_vnormal_cache *nc, int level)
{
    long cnt = 0;
    for (long t = 0; t < st->nterm; ++t)
        if (!active_only || st->tstate[t] == CT_IMLS_TERM_ACTIVE)
            cnt = imls_unique_add(st, cnt, st->sup + st->term[t].c0, st->nsup[t]);
    imls_unique_end(st, cnt);
    return ct_vnormal_cache_fill(nc, &st->topo, x, (int)cnt, st->list, level, c->threads);
}

ct_status imls_eval_value(imls_state *st, const ct_step_ctx *c, const double *x)
{
    if (imls_pool_reserve(st, ct_threads(c->threads)) != CT_OK) return CT_ENOMEM;
    const size_t nxd = (size_t)st->nx * st->dim;
    if (st->eval_valid && memcmp(st->x_eval, x, nxd * sizeof *x) == 0) return CT_OK;
    ct_status s = imls_ensure_list(st, c, x);
    if (s != CT_OK) return s;
    const double t0 = imls_now();
    int kmax = 1;
    for (long t = 0; t < st->nterm; ++t) kmax = st->term[t].nc > kmax ? st->term[t].nc : kmax;
    /* the samples in support, then their normals once (a sample serves ~10 terms), then the terms */
    ct_vnormal_cache_clear(&st->nc0);
    ct_vnormal_cache_clear(&st->nc1);
#pragma omp parallel for schedule(dynamic, 64) num_threads(ct_threads(c->threads))
    for (long t = 0; t < st->nterm; ++t) st->nsup[t] = support_of(st, &st->term[t], x, st->sup + st->term[t].c0);
    s = fill_normals(st, c, x, 0, &st->nc0, 0);
    if (s != CT_OK) return s;
    int status = CT_OK;
#pragma omp parallel num_threads(ct_threads(c->threads))
    {
        imls_work *w = imls_thread_work(st);
        int sl = imls_work_ensure(w, st, kmax, CT_IMLS_VALUE, CT_IMLS_HESS_GN);
#pragma omp for schedule(dynamic, 16)
        for (long t = 0; t < st->nterm; ++t) {
            const imls_term *tm = &st->term[t];
            int *sp = st->sup + tm->c0;
            st->psi[t] = INFINITY;
            st->eterm[t] = 0.0;
            st->tstate[t] = CT_IMLS_TERM_OFF;
            if (sl != CT_OK || st->nsup[t] == 0) continue;
            ct_imls_term_result r;
            ct_imls_term_params prm;
            imls_term_prm(st, tm, 1, &prm);
            prm.normals = &st->nc0;
            int n = 0;
            ct_status e = ct_imls_term_eval(&prm, &st->topo, x, tm->q, tm->w, st->nsup[t], sp,
                                            CT_IMLS_VALUE, w->work, w->work_len, &r, &n, 0, NULL, NULL);
            if (e != CT_OK) {
                sl = e;
                continue;
            }
            st->tstate[t] = (unsigned char)r.state;
            st->psi[t] = r.field.term ? r.psi : INFINITY;
            st->eterm[t] = r.energy;
        }
        if (sl != CT_OK) {
#pragma omp atomic write
            status = sl;
        }
    }
    if (status != CT_OK) return (ct_status)status;
    double E = ct_sum_fixed_chunks(st->nterm, term_energy, st, c->threads);
    E += imls_halfspace_energy(st, c, x, NULL);
    st->E_eval = E;
    memcpy(st->x_eval, x, nxd * sizeof *x);
    st->eval_valid = 1;
    st->t_terms += imls_now() - t0;
    return CT_OK;
}

/* The active terms' stencils at x_eval: act (the term indices), vo (nact + 1 vertex offsets), vb (the
 * stencil vertices). The caller frees *act, *vo, *vb. */
static ct_status stencils(const imls_state *st, long **act_out, long *nact_out, long **vo_out, int **vb_out,
                          int *kmax_out)
{
    long nact = 0;
    for (long t = 0; t < st->nterm; ++t) nact += st->tstate[t] == CT_IMLS_TERM_ACTIVE;
    long *act = malloc(((size_t)nact + 1) * sizeof *act), *vo = malloc(((size_t)nact + 2) * sizeof *vo);
    if (!act || !vo) {
        free(act);
        free(vo);
        return CT_ENOMEM;
    }
    long a = 0;
    int kmax = 1;
    vo[0] = 0;
    for (long t = 0; t < st->nterm; ++t) {
        if (st->tstate[t] != CT_IMLS_TERM_ACTIVE) continue;
        const imls_term *tm = &st->term[t];
        act[a] = t;
        const int n = ct_vnormal_stencil(&st->topo, tm->q, st->nsup[t], st->sup + tm->c0, NULL, 0);
        vo[a + 1] = vo[a] + (n > 0 ? n : 0);
        kmax = st->nsup[t] > kmax ? st->nsup[t] : kmax;
        ++a;
    }
    int *vb = malloc(((size_t)vo[nact] + 1) * sizeof *vb);
    if (!vb) {
        free(act);
        free(vo);
        return CT_ENOMEM;
    }
    for (long i = 0; i < nact; ++i) {
        const imls_term *tm = &st->term[act[i]];
        ct_vnormal_stencil(&st->topo, tm->q, st->nsup[act[i]], st->sup + tm->c0, vb + vo[i], (int)(vo[i + 1] - vo[i]));
    }
    *act_out = act;
    *nact_out = nact;
    *vo_out = vo;
    *vb_out = vb;
    *kmax_out = kmax;
    return CT_OK;
}

/* g += the active terms' gradients gb (stencil vb[vo[i]..vo[i+1]) of term i), in term order so that the sums do
 * not depend on the thread count, then the half-spaces' (imls_eval_gradient and imls_eval_hessian alike). */
static void add_gradients(const imls_state *st, const ct_step_ctx *c, const double *x, long nact, const long *vo,
                          const int *vb, const double *gb, double *g)
{
    const int dim = st->dim;
    for (long i = 0; i < nact; ++i)
        for (long u = vo[i]; u < vo[i + 1]; ++u)
            for (int a = 0; a < dim; ++a) g[(size_t)vb[u] * dim + a] += gb[u * dim + a];
    imls_halfspace_energy(st, c, x, g);
}

ct_status imls_eval_gradient(imls_state *st, const ct_step_ctx *c, const double *x, double *g)
{
    if (imls_pool_reserve(st, ct_threads(c->threads)) != CT_OK) return CT_ENOMEM;
    ct_status s = imls_eval_value(st, c, x);
    if (s != CT_OK) return s;
    const double t0 = imls_now();
    const int dim = st->dim;
    long *act = NULL, *vo = NULL, nact = 0;
    int *vb = NULL, kmax = 1;
    s = fill_normals(st, c, x, 1, &st->nc1, 1);
    if (s != CT_OK) return s;
    s = stencils(st, &act, &nact, &vo, &vb, &kmax);
    if (s != CT_OK) return s;
    double *gb = malloc(((size_t)vo[nact] * dim + 1) * sizeof *gb);
    if (!gb) {
        free(act), free(vo), free(vb);
        return CT_ENOMEM;
    }
    int status = CT_OK;
#pragma omp parallel num_threads(ct_threads(c->threads))
    {
        imls_work *w = imls_thread_work(st);
        int sl = imls_work_ensure(w, st, kmax, CT_IMLS_GRADIENT, CT_IMLS_HESS_GN);
#pragma omp for schedule(dynamic, 8)
        for (long i = 0; i < nact; ++i) {
            if (sl != CT_OK) continue;
            const long t = act[i];
            const imls_term *tm = &st->term[t];
            ct_imls_term_result r;
            ct_imls_term_params prm;
            imls_term_prm(st, tm, 1, &prm);
            prm.normals = &st->nc1;
            const int cap = (int)(vo[i + 1] - vo[i]);
            ct_status e = ct_imls_term_eval(&prm, &st->topo, x, tm->q, tm->w, st->nsup[t],
                                            st->sup + tm->c0, CT_IMLS_GRADIENT, w->work, w->work_len, &r, w->verts, cap,
                                            gb + vo[i] * dim, NULL);
            if (e != CT_OK) sl = e;
            else if (r.state != CT_IMLS_TERM_ACTIVE || r.n != cap) sl = CT_ENOTSUP; /* (cannot happen: same x) */
        }
        if (sl != CT_OK) {
#pragma omp atomic write
            status = sl;
        }
    }
    if (status == CT_OK) add_gradients(st, c, x, nact, vo, vb, gb, g);
    free(gb), free(act), free(vo), free(vb);
    st->t_terms += imls_now() - t0;
    return (ct_status)status;
}

/* triplets of a stencil block (column by column, with `upper` only row <= col) */
static size_t block_count(const int *v, int n, int dim, int upper)
{
    if (!upper) return (size_t)(n * dim) * (size_t)(n * dim);
    size_t cnt = 0;
    for (int a = 0; a < n; ++a)
        for (int b = 0; b < n; ++b)
            cnt += v[a] < v[b] ? (size_t)(dim * dim) : v[a] == v[b] ? (size_t)(dim * (dim + 1) / 2) : 0;
    return cnt;
}

ct_status imls_eval_hessian(imls_state *st, const ct_step_ctx *c, const double *x, ct_imls_hess_mode mode,
                            ct_triplets *H, double *g)
{
    if (imls_pool_reserve(st, ct_threads(c->threads)) != CT_OK) return CT_ENOMEM;
    ct_status s = imls_eval_value(st, c, x);
    if (s != CT_OK) return s;
    const double t0 = imls_now();
    const int dim = st->dim, upper = H->upper;
    long *act = NULL, *vo = NULL, nact = 0;
    int *vb = NULL, kmax = 1;
    s = fill_normals(st, c, x, 1, &st->nc1, mode == CT_IMLS_HESS_GN ? 1 : 2);
    if (s != CT_OK) return s;
    s = stencils(st, &act, &nact, &vo, &vb, &kmax);
    if (s != CT_OK) return s;
    size_t *off = malloc(((size_t)nact + 1) * sizeof *off);
    double *gb = g ? malloc(((size_t)vo[nact] * dim + 1) * sizeof *gb) : NULL; /* the terms' gradients */
    if (!off || (g && !gb)) {
        free(off), free(gb), free(act), free(vo), free(vb);
        return CT_ENOMEM;
    }
    off[0] = H->n;
    for (long i = 0; i < nact; ++i) off[i + 1] = off[i] + block_count(vb + vo[i], (int)(vo[i + 1] - vo[i]), dim, upper);
    s = ct_triplets_reserve(H, off[nact]);
    if (s != CT_OK) {
        free(off), free(gb), free(act), free(vo), free(vb);
        return s;
    }
    int *const trow = H->row, *const tcol = H->col;
    double *const tval = H->val;
    int status = CT_OK;
#pragma omp parallel num_threads(ct_threads(c->threads))
    {
        imls_work *w = imls_thread_work(st);
        int sl = imls_work_ensure(w, st, kmax, CT_IMLS_HESSIAN, mode);
#pragma omp for schedule(dynamic, 4)
        for (long i = 0; i < nact; ++i) {
            if (sl != CT_OK) continue;
            const long t = act[i];
            const imls_term *tm = &st->term[t];
            ct_imls_term_params prm;
            imls_term_prm(st, tm, 1, &prm);
            prm.hess = mode;
            prm.normals = &st->nc1;
            ct_imls_term_result r;
            const int n = (int)(vo[i + 1] - vo[i]), nd = n * dim;
            ct_status e = ct_imls_term_eval(&prm, &st->topo, x, tm->q, tm->w, st->nsup[t], st->sup + tm->c0,
                                            CT_IMLS_HESSIAN, w->work, w->work_len, &r, w->verts, w->cap, w->grad, w->hess);
            if (e != CT_OK) {
                sl = e;
                continue;
            }
            if (r.state != CT_IMLS_TERM_ACTIVE || r.n != n) {
                sl = CT_ENOTSUP;
                continue;
            }
            if (gb) memcpy(gb + vo[i] * dim, w->grad, (size_t)nd * sizeof *gb);
            const int *v = vb + vo[i];
            size_t k = off[i];
            for (int b = 0; b < n; ++b)
                for (int jb = 0; jb < dim; ++jb) {
                    const int col = v[b] * dim + jb, lj = b * dim + jb;
                    for (int a = 0; a < n; ++a) {
                        int kend = dim;
                        if (upper && v[a] >= v[b]) {
                            if (v[a] > v[b]) continue;
                            kend = jb + 1;
                        }
                        const double *hc = w->hess + (size_t)lj * nd + a * dim;
                        for (int ka = 0; ka < kend; ++ka) {
                            trow[k] = v[a] * dim + ka;
                            tcol[k] = col;
                            tval[k++] = hc[ka];
                        }
                    }
                }
        }
        if (sl != CT_OK) {
#pragma omp atomic write
            status = sl;
        }
    }
    if (status == CT_OK) {
        H->n = off[nact];
        status = halfspace_hessian(st, c, x, mode == CT_IMLS_HESS_EXACT, H);
    }
    if (status == CT_OK && g) add_gradients(st, c, x, nact, vo, vb, gb, g);
    free(off), free(gb), free(act), free(vo), free(vb);
    st->t_terms += imls_now() - t0;
    return (ct_status)status;
}

ct_status imls_term_gradient(imls_state *st, const double *x, long t, int with_law, imls_work *w, int *n)
{
    const imls_term *tm = &st->term[t];
    ct_imls_term_result r;
    ct_imls_term_params prm;
    imls_term_prm(st, tm, with_law, &prm);
    ct_status e = ct_imls_term_eval(&prm, &st->topo, x, tm->q, tm->w, st->nsup[t], st->sup + tm->c0,
                                    CT_IMLS_GRADIENT, w->work, w->work_len, &r, w->verts, w->cap, w->grad, NULL);
    *n = e == CT_OK && r.state == CT_IMLS_TERM_ACTIVE ? r.n : 0;
    return e;
}
