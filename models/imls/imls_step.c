/* imls_step.c — the imls model's step-size rule (max_step): how far along a Newton direction every query
 * stays outside every other body's IMLS surface and in front of every half-space. README.md, "Step size". */
#include "imls_model.h"

#include "contactlab/ct_parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- the step-size rule ---------- */

/* One (query, field) pair the step may bring within reach: its candidate samples within the
 * search radius at x, its reference gap at x and the largest relative displacement. */
typedef struct ms_rec {
    int q, fb;
    long term;   /* the term (q, fb) of the list, −1 if none */
    long c0;
    int nc;
    double gap;  /* ψ at x when in support, else (nearest sample distance − h) */
    double rel;  /* max over the candidates s of |dx_q − dx_s| */
} ms_rec;

typedef struct ms_list {
    ms_rec *r;
    long n, cap;
    int *cand;
    long ncand, ccap;
} ms_list;

static ct_status ms_push(ms_list *L, const ms_rec *r, const int *c, int nc)
{
    if (L->n == L->cap) {
        const long cap = L->cap ? 2 * L->cap : 256;
        ms_rec *nr = realloc(L->r, (size_t)cap * sizeof *nr);
        if (!nr) return CT_ENOMEM;
        L->r = nr;
        L->cap = cap;
    }
    if (L->ncand + nc > L->ccap) {
        long cap = L->ccap ? 2 * L->ccap : 4096;
        while (cap < L->ncand + nc) cap *= 2;
        int *ncd = realloc(L->cand, (size_t)cap * sizeof *ncd);
        if (!ncd) return CT_ENOMEM;
        L->cand = ncd;
        L->ccap = cap;
    }
    ms_rec *d = &L->r[L->n++];
    *d = *r;
    d->c0 = L->ncand;
    d->nc = nc;
    memcpy(L->cand + L->ncand, c, (size_t)nc * sizeof *c);
    L->ncand += nc;
    return CT_OK;
}

/* The distance bound of record r at x + t·dx: ψ when some candidate is within R (a term), else the
 * distance to the nearest candidate minus the field's covering radius (the IMLS surface lies within h
 * of the samples). y: a full-size thread-local copy of the positions of which only the record's
 * stencil (the query, its candidates and their one-rings: all ct_imls_term_eval reads) is written.
 * *in: whether there is a term. */
static double rec_bound_y(const imls_state *st, const ms_list *L, const ms_rec *r, const double *y, imls_work *w,
                          const ct_vnormal_cache *nc, int *in, ct_status *err);

static double rec_bound(const imls_state *st, const ms_list *L, const ms_rec *r, const double *x, const double *dx,
                        double t, double *y, imls_work *w, int *in, ct_status *err)
{
    const int dim = st->dim;
    const int *cand = L->cand + r->c0;
    const int n = ct_vnormal_stencil(&st->topo, r->q, r->nc, cand, w->verts, w->cap);
    if (n < 0 || n > w->cap) {
        *err = CT_EINPUT;
        *in = 0;
        return INFINITY;
    }
    for (int u = 0; u < n; ++u)
        for (int d = 0; d < dim; ++d) {
            const size_t o = (size_t)w->verts[u] * dim + d;
            y[o] = x[o] + t * dx[o];
        }
    return rec_bound_y(st, L, r, y, w, NULL, in, err);
}

/* The bound of record r at positions y (those of its stencil set), the samples' normals from nc where it
 * holds them (NULL: computed). */
static double rec_bound_y(const imls_state *st, const ms_list *L, const ms_rec *r, const double *y, imls_work *w,
                          const ct_vnormal_cache *nc, int *in, ct_status *err)
{
    const int dim = st->dim;
    const imls_field *f = &st->field[r->fb];
    const int *cand = L->cand + r->c0;
    const double R2 = f->R * f->R;
    const double *yq = y + (size_t)r->q * dim;
    double dmin2 = INFINITY;
    int k = 0;
    for (int i = 0; i < r->nc; ++i) {
        const double d2 = imls_dist2(yq, y + (size_t)cand[i] * dim, dim);
        dmin2 = fmin(dmin2, d2);
        if (d2 < R2) w->samp[k++] = cand[i];
    }
    *in = 0;
    if (k > 0) {
        ct_imls_term_result res;
        ct_imls_term_params prm = f->prm;
        prm.normals = nc;
        int nn = 0;
        ct_status e = ct_imls_term_eval(&prm, &st->topo, y, r->q, 1.0, k, w->samp, CT_IMLS_VALUE, w->work,
                                        w->work_len, &res, &nn, 0, NULL, NULL);
        if (e != CT_OK) {
            *err = e;
            return INFINITY;
        }
        if (res.field.term) {
            *in = 1;
            return res.psi;
        }
    }
    return sqrt(dmin2) - f->hcov;
}

/* The rule (README.md, "Step size"): along x + a·dx, a ∈ [0, alpha],
 *   1. half-spaces: a vertex's distance may shrink to ccd_s of its start (closed form);
 *   2. body pairs whose swept boxes (the field's inflated by R) do not meet are skipped; otherwise
 *      alpha·(m_i + m_j) ≤ R_j (m: the largest vertex displacement of a body), so the candidates
 *      within R_j + alpha(m_i + m_j) of each query at x hold every sample the query can reach;
 *   3. conservative advancement per (query, field), as IPC's additive CCD: the bound g(t) (ψ at
 *      x + t·dx in support, else the distance to the nearest sample minus the field's covering
 *      radius h: the IMLS surface lies within h of the samples) changes by at most rel per unit t
 *      (rel: the largest displacement of the query relative to its candidates, taking |∇ψ| ≤ 1), so
 *      t advances by 0.9·(g(t) − ccd_s·g(0))/rel, g recomputed at each stop, until t reaches alpha
 *      or g(t) has closed 90 % of the way to ccd_s·g(0); the record's bound is that t. A sliding
 *      query (g constant) takes about rel/g(0) stops, one approaching head-on a few;
 *   4. check at the end point: every pair with support there has ψ > ½·ccd_s·min(g(0), d̂);
 *      otherwise alpha is halved (|∇ψ| may exceed 1, and the field deforms with its normals).
 * Queries that stay farther than R from every sample never have a term. */
ct_status imls_max_step(imls_state *st, const ct_step_ctx *c, const double *x, const double *dx, double *alpha_out)
{
    if (imls_pool_reserve(st, ct_threads(c->threads)) != CT_OK) return CT_ENOMEM;
    const int dim = st->dim, nb = st->nbodies;
    const double s_ccd = st->ccd_s;
    double alpha = 1.0;
    /* 1. half-spaces */
    for (int o = 0; o < st->nobs; ++o) {
        const ct_obstacle *ob = &c->obstacles[o];
        for (int k = 0; k < st->nq; ++k) {
            const size_t off = (size_t)st->qv[k] * dim;
            double d = 0.0, vd = 0.0;
            for (int a = 0; a < dim; ++a) d += ob->normal[a] * (x[off + a] - ob->point[a]), vd += ob->normal[a] * dx[off + a];
            if (vd < 0.0 && d > 0.0) alpha = fmin(alpha, (1.0 - s_ccd) * d / -vd);
        }
    }
    /* 2. per body: largest displacement, swept boxes */
    double *m = calloc((size_t)nb + 1, sizeof *m), *box = malloc(((size_t)nb * 6 + 1) * sizeof *box);
    if (!m || !box) {
        free(m), free(box);
        return CT_ENOMEM;
    }
    for (int b = 0; b < nb; ++b) {
        const imls_field *f = &st->field[b];
        double *lo = box + 6 * b, *hi = lo + 3;
        for (int d = 0; d < 3; ++d) lo[d] = INFINITY, hi[d] = -INFINITY;
        for (int k = 0; k < f->n; ++k) {
            const size_t off = (size_t)f->verts[k] * dim;
            double n2 = 0.0;
            for (int d = 0; d < dim; ++d) {
                lo[d] = fmin(lo[d], fmin(x[off + d], x[off + d] + dx[off + d]));
                hi[d] = fmax(hi[d], fmax(x[off + d], x[off + d] + dx[off + d]));
                n2 += dx[off + d] * dx[off + d];
            }
            m[b] = fmax(m[b], sqrt(n2));
        }
    }
    unsigned char *near = calloc((size_t)nb * (size_t)nb + 1, 1);
    if (!near) {
        free(m), free(box);
        return CT_ENOMEM;
    }
    for (int i = 0; i < nb; ++i)
        for (int j = 0; j < nb; ++j) {
            if (!(st->dirw[i * nb + j] > 0.0)) continue;
            const double R = st->field[j].R, *li = box + 6 * i, *lj = box + 6 * j;
            int meet = 1;
            for (int d = 0; d < dim; ++d)
                if (li[d] > lj[3 + d] + R || lj[d] - R > li[3 + d]) meet = 0;
            if (!meet) continue;
            near[i * nb + j] = 1;
            const double mij = m[i] + m[j];
            if (mij > 0.0 && alpha * mij > R) alpha = R / mij;
        }
    /* the candidates at x: the term list's trees (positions within margin/2 of x) */
    ct_status s = imls_ensure_list(st, c, x);
    ms_list L = {0};
    ct_neighbor_list nl;
    ct_neighbor_list_init(&nl);
    const double margin = imls_margin(st);
    int *tmp = NULL;
    size_t tmp_cap = 0;
    long tp = 0; /* the term list is in the same (query, field) order */
    for (int k = 0; k < st->nq && s == CT_OK; ++k) {
        const int q = st->qv[k], i = st->qbody[k];
        const double *xq = x + (size_t)q * dim;
        for (int j = 0; j < nb && s == CT_OK; ++j) {
            if (!near[i * nb + j]) continue;
            while (tp < st->nterm && (st->term[tp].qk < k || (st->term[tp].qk == k && st->term[tp].fb < j))) ++tp;
            const long tmatch = tp < st->nterm && st->term[tp].qk == k && st->term[tp].fb == j ? tp : -1;
            const imls_field *f = &st->field[j];
            const double reach = f->R + alpha * (m[i] + m[j]);
            if (!imls_in_box(f, xq, reach + margin, dim)) continue;
            s = ct_neighbors_query(&f->nb, xq, reach + margin, &nl);
            if (s != CT_OK || nl.n == 0) continue;
            if ((size_t)nl.n > tmp_cap) {
                free(tmp);
                tmp_cap = (size_t)nl.n * 2;
                tmp = malloc(tmp_cap * sizeof *tmp);
                if (!tmp) {
                    s = CT_ENOMEM;
                    break;
                }
            }
            int nc = 0;
            double dmin2 = INFINITY, rel = 0.0;
            for (int u = 0; u < nl.n; ++u) {
                const int v = f->verts[nl.idx[u]];
                const double d2 = imls_dist2(xq, x + (size_t)v * dim, dim);
                if (!(d2 < reach * reach)) continue;
                tmp[nc++] = v;
                dmin2 = fmin(dmin2, d2);
                double r2 = 0.0;
                for (int d = 0; d < dim; ++d) {
                    const double e = dx[(size_t)q * dim + d] - dx[(size_t)v * dim + d];
                    r2 += e * e;
                }
                rel = fmax(rel, sqrt(r2));
            }
            if (!nc) continue;
            const ms_rec r = {q, j, tmatch, 0, 0, sqrt(dmin2) - f->hcov, rel};
            s = ms_push(&L, &r, tmp, nc);
        }
    }
    free(tmp);
    ct_neighbor_list_free(&nl);
    free(m), free(box), free(near);
    if (s != CT_OK) {
        free(L.r), free(L.cand);
        return s;
    }
    int kmax = 1;
    for (long i = 0; i < L.n; ++i) kmax = L.r[i].nc > kmax ? L.r[i].nc : kmax;
    /* 3. conservative advancement per record */
    const size_t nxd = (size_t)st->nx * dim;
    const int cached = st->eval_valid && memcmp(st->x_eval, x, nxd * sizeof *x) == 0;
    int status = CT_OK;
    double abound = alpha;
#pragma omp parallel num_threads(ct_threads(c->threads))
    {
        imls_work *w = imls_thread_work(st);
        int sl = imls_work_ensure(w, st, kmax, CT_IMLS_VALUE, CT_IMLS_HESS_GN);
        double *y = sl == CT_OK ? imls_work_y(w, nxd) : NULL;
        if (!y) sl = CT_ENOMEM;
        double al = abound;
#pragma omp for schedule(dynamic, 16)
        for (long i = 0; i < L.n; ++i) {
            if (sl != CT_OK) continue;
            ms_rec *r = &L.r[i];
            int in = 0;
            ct_status e = CT_OK;
            double g;
            if (cached && r->term >= 0) { /* ψ at x from the value pass (the same samples within R) */
                const double pc = st->psi[r->term];
                g = isfinite(pc) ? pc : r->gap;
            } else {
                g = rec_bound(st, &L, r, x, dx, 0.0, y, w, &in, &e);
            }
            if (e != CT_OK) sl = e;
            r->gap = g > 0.0 ? g : 0.0; /* (≤ 0: an infeasible start, no step) */
            if (!(r->rel > 0.0)) continue;
            const double floor = s_ccd * r->gap, stop = floor + 0.1 * (r->gap - floor);
            double t = 0.0;
            for (int it = 0; it < 10000 && t < al && g > stop && e == CT_OK; ++it) {
                t += 0.9 * (g - floor) / r->rel;
                if (t >= al) break;
                g = rec_bound(st, &L, r, x, dx, t, y, w, &in, &e);
            }
            if (e != CT_OK) sl = e;
            al = fmin(al, r->gap > 0.0 ? t : 0.0);
        }
#pragma omp critical
        {
            abound = fmin(abound, al);
            if (sl != CT_OK) status = sl;
        }
    }
    alpha = abound;
    /* 4. the end point check, halving: the positions at the end point once, the normals of the candidates
       there once (a sample serves ~10 records; the per-record evaluation where a normal is degenerate) */
    double *ye = status == CT_OK ? malloc((nxd + 1) * sizeof *ye) : NULL;
    if (status == CT_OK && !ye) status = CT_ENOMEM;
    long nu = 0;
    if (status == CT_OK) {
        nu = imls_unique_add(st, 0, L.cand, L.ncand);
        imls_unique_end(st, nu);
    }
    for (int halve = 0; status == CT_OK && halve < 60 && alpha > 0.0; ++halve) {
        int bad = 0;
        for (size_t i = 0; i < nxd; ++i) ye[i] = x[i] + alpha * dx[i];
        ct_vnormal_cache_clear(&st->nc2);
        const ct_vnormal_cache *nce =
            ct_vnormal_cache_fill(&st->nc2, &st->topo, ye, (int)nu, st->list, 0, c->threads) == CT_OK ? &st->nc2 : NULL;
#pragma omp parallel num_threads(ct_threads(c->threads))
        {
            imls_work *w = imls_thread_work(st);
            int sl = imls_work_ensure(w, st, kmax, CT_IMLS_VALUE, CT_IMLS_HESS_GN);
            double *y = sl == CT_OK ? imls_work_y(w, nxd) : NULL;
            if (!y) sl = CT_ENOMEM;
            int bl = 0;
#pragma omp for schedule(dynamic, 32)
            for (long i = 0; i < L.n; ++i) {
                if (sl != CT_OK || bl) continue;
                const ms_rec *r = &L.r[i];
                int in = 0;
                ct_status e = CT_OK;
                const double psi = nce ? rec_bound_y(st, &L, r, ye, w, nce, &in, &e)
                                       : rec_bound(st, &L, r, x, dx, alpha, y, w, &in, &e);
                if (e != CT_OK) sl = e;
                else if (in && !(psi > 0.5 * s_ccd * fmin(r->gap, st->dhat))) bl = 1;
            }
#pragma omp critical
            {
                bad |= bl;
                if (sl != CT_OK) status = sl;
            }
        }
        if (!bad) break;
        alpha *= 0.5;
        if (halve == 59) alpha = 0.0;
    }
    free(ye), free(L.r), free(L.cand);
    *alpha_out = alpha;
    return (ct_status)status;
}
