/* dofs.c — the embedding map x = J q + x0 and point location in simplicial meshes. */
#include "contactlab/ct_dofs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ct_dofs_init(ct_dofs *d, int dim)
{
    memset(d, 0, sizeof *d);
    d->dim = dim;
    d->identity = 1;
    d->jptr = calloc(1, sizeof *d->jptr);
}

void ct_dofs_free(ct_dofs *d)
{
    free(d->jptr);
    free(d->jcol);
    free(d->jw);
    free(d->x0);
    memset(d, 0, sizeof *d);
}

/* Grow the arrays for `nadd` more x-vertices with at most `per` entries each. */
static ct_status grow(ct_dofs *d, int nadd, int per)
{
    size_t nx = (size_t)d->nx + (size_t)nadd;
    size_t nnz = (size_t)d->jptr[d->nx] + (size_t)nadd * (size_t)per;
    int *jp = realloc(d->jptr, (nx + 1) * sizeof *jp);
    if (!jp) return CT_ENOMEM;
    d->jptr = jp;
    int *jc = realloc(d->jcol, (nnz + 1) * sizeof *jc);
    if (!jc) return CT_ENOMEM;
    d->jcol = jc;
    double *w = realloc(d->jw, (nnz + 1) * sizeof *w);
    if (!w) return CT_ENOMEM;
    d->jw = w;
    double *x0 = realloc(d->x0, (nx * (size_t)d->dim + 1) * sizeof *x0);
    if (!x0) return CT_ENOMEM;
    d->x0 = x0;
    return CT_OK;
}

ct_status ct_dofs_add_full(ct_dofs *d, int nv)
{
    if (grow(d, nv, 1) != CT_OK) return CT_ENOMEM;
    int base = d->jptr[d->nx];
    for (int i = 0; i < nv; ++i) {
        d->jcol[base + i] = d->nq + i;
        d->jw[base + i] = 1.0;
        d->jptr[d->nx + i + 1] = base + i + 1;
    }
    memset(d->x0 + (size_t)d->nx * d->dim, 0, (size_t)nv * d->dim * sizeof *d->x0);
    d->nx += nv;
    d->nq += nv;
    return CT_OK;
}

/* ---- point location ---- */

static void elem_bbox(const ct_mesh *m, int e, double *lo, double *hi)
{
    int dim = m->dim;
    for (int c = 0; c < dim; ++c) {
        lo[c] = INFINITY;
        hi[c] = -INFINITY;
    }
    for (int a = 0; a <= dim; ++a) {
        const double *p = m->X + (size_t)m->elem[e * (dim + 1) + a] * dim;
        for (int c = 0; c < dim; ++c) {
            if (p[c] < lo[c]) lo[c] = p[c];
            if (p[c] > hi[c]) hi[c] = p[c];
        }
    }
}

/* Barycentric weights of p in element e (sum to 1; all >= 0 inside). */
static void barycentric(const ct_mesh *m, int e, const double *p, double *w)
{
    int dim = m->dim;
    const int *v = m->elem + e * (dim + 1);
    const double *x0 = m->X + (size_t)v[0] * dim;
    if (dim == 2) {
        const double *x1 = m->X + (size_t)v[1] * 2, *x2 = m->X + (size_t)v[2] * 2;
        double a = x1[0] - x0[0], b = x2[0] - x0[0], c = x1[1] - x0[1], dd = x2[1] - x0[1];
        double det = a * dd - b * c;
        double rx = p[0] - x0[0], ry = p[1] - x0[1];
        w[1] = (dd * rx - b * ry) / det;
        w[2] = (-c * rx + a * ry) / det;
        w[0] = 1.0 - w[1] - w[2];
        return;
    }
    double D[9], r[3];
    for (int k = 0; k < 3; ++k) {
        const double *xk = m->X + (size_t)v[k + 1] * 3;
        for (int c = 0; c < 3; ++c) D[c + 3 * k] = xk[c] - x0[c];
        r[k] = p[k] - x0[k];
    }
    /* Cramer's rule: w_{k+1} = det(D with column k replaced by r) / det(D) */
    double det = D[0] * (D[4] * D[8] - D[7] * D[5]) - D[3] * (D[1] * D[8] - D[7] * D[2]) +
                 D[6] * (D[1] * D[5] - D[4] * D[2]);
    for (int k = 0; k < 3; ++k) {
        double M[9];
        memcpy(M, D, sizeof M);
        for (int c = 0; c < 3; ++c) M[c + 3 * k] = r[c];
        double dk = M[0] * (M[4] * M[8] - M[7] * M[5]) - M[3] * (M[1] * M[8] - M[7] * M[2]) +
                    M[6] * (M[1] * M[5] - M[4] * M[2]);
        w[k + 1] = dk / det;
    }
    w[0] = 1.0 - w[1] - w[2] - w[3];
}

ct_status ct_locator_build(ct_locator *L, const ct_mesh *m)
{
    memset(L, 0, sizeof *L);
    L->m = m;
    L->dim = m->dim;
    if (m->ne <= 0) return CT_EINPUT;
    double lo[3], hi[3];
    ct_mesh_bbox(m, lo, hi);
    /* cell size ~ average element extent */
    double vol = 1.0;
    for (int c = 0; c < m->dim; ++c) vol *= fmax(hi[c] - lo[c], 1e-300);
    double cell = pow(vol / m->ne, 1.0 / m->dim) * 2.0;
    long total = 1;
    for (int c = 0; c < 3; ++c) {
        L->lo[c] = c < m->dim ? lo[c] : 0.0;
        L->n[c] = c < m->dim ? (int)fmin(fmax(ceil((hi[c] - lo[c]) / cell), 1.0), 1024.0) : 1;
        total *= L->n[c];
    }
    L->cell = cell;
    for (int c = 0; c < m->dim; ++c)
        if ((hi[c] - lo[c]) / L->n[c] > L->cell) L->cell = (hi[c] - lo[c]) / L->n[c];
    L->start = calloc((size_t)total + 1, sizeof *L->start);
    if (!L->start) return CT_ENOMEM;
    /* two passes: count, then fill */
    for (int pass = 0; pass < 2; ++pass) {
        for (int e = 0; e < m->ne; ++e) {
            double elo[3] = {0}, ehi[3] = {0};
            elem_bbox(m, e, elo, ehi);
            int i0[3] = {0, 0, 0}, i1[3] = {0, 0, 0};
            for (int c = 0; c < m->dim; ++c) {
                i0[c] = (int)floor((elo[c] - L->lo[c]) / L->cell);
                i1[c] = (int)floor((ehi[c] - L->lo[c]) / L->cell);
                if (i0[c] < 0) i0[c] = 0;
                if (i1[c] >= L->n[c]) i1[c] = L->n[c] - 1;
            }
            for (int k = i0[2]; k <= i1[2]; ++k)
                for (int j = i0[1]; j <= i1[1]; ++j)
                    for (int i = i0[0]; i <= i1[0]; ++i) {
                        long b = ((long)k * L->n[1] + j) * L->n[0] + i;
                        if (pass == 0) L->start[b + 1]++;
                        else L->items[L->start[b]++] = e;
                    }
        }
        if (pass == 0) {
            for (long b = 0; b < total; ++b) L->start[b + 1] += L->start[b];
            L->items = malloc(((size_t)L->start[total] + 1) * sizeof *L->items);
            if (!L->items) return CT_ENOMEM;
        } else {
            for (long b = total; b > 0; --b) L->start[b] = L->start[b - 1];
            L->start[0] = 0;
        }
    }
    return CT_OK;
}

void ct_locator_free(ct_locator *L)
{
    free(L->start);
    free(L->items);
    memset(L, 0, sizeof *L);
}

int ct_locator_find(const ct_locator *L, const double *p, double *w)
{
    const ct_mesh *m = L->m;
    int dim = L->dim, best = -1;
    double best_min = -INFINITY, wt[4];
    int ic[3] = {0, 0, 0};
    for (int c = 0; c < dim; ++c) {
        ic[c] = (int)floor((p[c] - L->lo[c]) / L->cell);
        if (ic[c] < 0) ic[c] = 0;
        if (ic[c] >= L->n[c]) ic[c] = L->n[c] - 1;
    }
    int maxr = L->n[0] + L->n[1] + L->n[2];
    /* search rings of buckets around p; stop once inside, or once a ring adds nothing
     * better after an outside candidate was found */
    for (int r = 0; r <= maxr; ++r) {
        int found_in_ring = 0;
        for (int k = ic[2] - r; k <= ic[2] + r; ++k) {
            if (k < 0 || k >= L->n[2]) continue;
            for (int j = ic[1] - r; j <= ic[1] + r; ++j) {
                if (j < 0 || j >= L->n[1]) continue;
                for (int i = ic[0] - r; i <= ic[0] + r; ++i) {
                    if (i < 0 || i >= L->n[0]) continue;
                    int on_shell = abs(i - ic[0]) == r || abs(j - ic[1]) == r || abs(k - ic[2]) == r;
                    if (!on_shell) continue;
                    long b = ((long)k * L->n[1] + j) * L->n[0] + i;
                    for (int t = L->start[b]; t < L->start[b + 1]; ++t) {
                        int e = L->items[t];
                        barycentric(m, e, p, wt);
                        double mn = wt[0];
                        for (int a = 1; a <= dim; ++a) mn = fmin(mn, wt[a]);
                        if (mn > best_min || (mn == best_min && e < best)) {
                            best_min = mn;
                            best = e;
                            memcpy(w, wt, (size_t)(dim + 1) * sizeof *w);
                            found_in_ring = 1;
                        }
                    }
                }
            }
        }
        if (best >= 0 && best_min >= -1e-12) return best;
        if (best >= 0 && !found_in_ring && r > 1) return best;
    }
    return best;
}

/* ---- embedding ---- */

ct_status ct_dofs_add_embedded(ct_dofs *d, const double *Xf, int nfine, const ct_mesh *fine,
                               const ct_mesh *coarse, double *vol_gathered, double outside_tol,
                               const char *what, ct_diag *diag)
{
    int dim = d->dim;
    if (coarse->ne <= 0)
        return ct_diag_add(diag, CT_EINPUT, "%s: the coarse mesh of an embedded body needs elements", what);
    ct_locator L;
    ct_status st = ct_locator_build(&L, coarse);
    if (st != CT_OK) return ct_diag_add(diag, st, "%s: cannot build the point locator", what);
    if (grow(d, nfine, dim + 1) != CT_OK) {
        ct_locator_free(&L);
        return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", what);
    }
    double lo[3], hi[3];
    ct_mesh_bbox(coarse, lo, hi);
    double diag2 = 0.0;
    for (int c = 0; c < dim; ++c) diag2 += (hi[c] - lo[c]) * (hi[c] - lo[c]);
    double snap = 1e-12 * sqrt(diag2);
    int nnz = d->jptr[d->nx], nfar = 0;
    double worst = 0.0;
    for (int k = 0; k < nfine; ++k) {
        const double *p = Xf + (size_t)k * dim;
        double w[4];
        int e = ct_locator_find(&L, p, w);
        const int *ev = coarse->elem + (size_t)e * (dim + 1);
        int snapped = -1;
        for (int a = 0; a <= dim && snapped < 0; ++a) {
            const double *qa = coarse->X + (size_t)ev[a] * dim;
            double dist2 = 0.0;
            for (int c = 0; c < dim; ++c) dist2 += (p[c] - qa[c]) * (p[c] - qa[c]);
            if (sqrt(dist2) <= snap) snapped = a;
        }
        double xk[3] = {0, 0, 0};
        if (snapped >= 0) {
            d->jcol[nnz] = d->nq + ev[snapped];
            d->jw[nnz] = 1.0;
            nnz++;
            for (int c = 0; c < dim; ++c) xk[c] = coarse->X[(size_t)ev[snapped] * dim + c];
        } else {
            double mn = 0.0;
            for (int a = 0; a <= dim; ++a) {
                d->jcol[nnz] = d->nq + ev[a];
                d->jw[nnz] = w[a];
                nnz++;
                mn = fmin(mn, w[a]);
                for (int c = 0; c < dim; ++c) xk[c] += w[a] * coarse->X[(size_t)ev[a] * dim + c];
            }
            if (mn < -1e-9) {
                nfar++;
                worst = fmin(worst, mn);
            }
        }
        for (int c = 0; c < dim; ++c) {
            double off = p[c] - xk[c];
            d->x0[((size_t)d->nx + k) * dim + c] = off;
            if (off != 0.0) d->identity = 0;
        }
        d->jptr[d->nx + k + 1] = nnz;
        if (snapped < 0 || d->nx + k != d->nq + ev[snapped]) d->identity = 0;
    }
    ct_status out = CT_OK; /* the body is added either way (d stays consistent); the caller stops */
    if (worst < -outside_tol)
        out = ct_diag_add(diag, CT_EINPUT,
                          "%s: dofs: %d fine vertices lie outside the coarse mesh (smallest barycentric weight %.3g "
                          "< -outside_tol = %.3g; enlarge the coarse mesh, or raise dofs.outside_tol to extrapolate "
                          "them)", what, nfar, worst, -outside_tol);
    else if (nfar > 0)
        ct_diag_add(diag, CT_OK,
                    "%s: %d fine vertices lie outside the coarse mesh (extrapolated, smallest "
                    "barycentric weight %.3g >= -dofs.outside_tol)", what, nfar, worst);
    /* gather fine volumes into coarse elements by fine-element centroid */
    for (int e = 0; e < coarse->ne; ++e) vol_gathered[e] = 0.0;
    if (fine && fine->ne > 0) {
        for (int f = 0; f < fine->ne; ++f) {
            double cen[3] = {0, 0, 0};
            for (int a = 0; a <= dim; ++a)
                for (int c = 0; c < dim; ++c)
                    cen[c] += Xf[(size_t)fine->elem[f * (dim + 1) + a] * dim + c] / (dim + 1);
            double w[4];
            int e = ct_locator_find(&L, cen, w);
            vol_gathered[e] += ct_mesh_elem_volume(fine, Xf, f);
        }
    } else {
        for (int e = 0; e < coarse->ne; ++e) vol_gathered[e] = ct_mesh_elem_volume(coarse, coarse->X, e);
    }
    ct_locator_free(&L);
    d->nx += nfine;
    d->nq += coarse->nv;
    return out;
}

void ct_dofs_map(const ct_dofs *d, const double *q, double *x)
{
    int dim = d->dim;
#pragma omp parallel for schedule(static)
    for (int k = 0; k < d->nx; ++k) {
        for (int c = 0; c < dim; ++c) {
            double s = d->x0[(size_t)k * dim + c];
            for (int t = d->jptr[k]; t < d->jptr[k + 1]; ++t) s += d->jw[t] * q[(size_t)d->jcol[t] * dim + c];
            x[(size_t)k * dim + c] = s;
        }
    }
}

void ct_dofs_map_lin(const ct_dofs *d, const double *vq, double *vx)
{
    int dim = d->dim;
#pragma omp parallel for schedule(static)
    for (int k = 0; k < d->nx; ++k) {
        for (int c = 0; c < dim; ++c) {
            double s = 0.0;
            for (int t = d->jptr[k]; t < d->jptr[k + 1]; ++t) s += d->jw[t] * vq[(size_t)d->jcol[t] * dim + c];
            vx[(size_t)k * dim + c] = s;
        }
    }
}

void ct_dofs_pull(const ct_dofs *d, const double *gx, double *gq)
{
    /* serial on purpose: scatter in a fixed order keeps results bitwise reproducible */
    int dim = d->dim;
    for (int k = 0; k < d->nx; ++k)
        for (int t = d->jptr[k]; t < d->jptr[k + 1]; ++t)
            for (int c = 0; c < dim; ++c) gq[(size_t)d->jcol[t] * dim + c] += d->jw[t] * gx[(size_t)k * dim + c];
}
