/* elastic.c — elastic energy sum_e vol_e Psi(F_e) of simplicial elements (triangles in 2D,
 * tetrahedra in 3D), its gradient and per-element Hessians.
 *
 * F = Ds DmInv with Ds = [y1 - y0, ..., yd - y0], so dF_ab / dy_{k,c} = delta_ac G_kb where
 * G ((d+1) x d) has rows G_k = row k-1 of DmInv for k >= 1 and G_0 = -sum_k G_k. Hence
 *   dE_e/dy_{k,c} = vol sum_b P_cb G_kb,
 *   d2E_e/dy_{k,c} dy_{l,e} = vol sum_{b,f} dPdF_{(c,b),(e,f)} G_kb G_lf.
 * Element loops run with OpenMP; results do not depend on the thread count: the energy is a
 * sum of fixed blocks added in block order, the gradient is computed per element into a
 * buffer and scattered serially in element order.
 */
#include "contactlab/ct_material.h"

#include "base/dense.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Elements per block of the energy sum (fixes the summation order). */
#define ENERGY_BLOCK 512

void ct_elastic_init(ct_elastic *el) { memset(el, 0, sizeof *el); }

void ct_elastic_free(ct_elastic *el)
{
    free(el->elem);
    free(el->DmInv);
    free(el->vol);
    free(el->mat);
    free(el->mats);
    free(el->gbuf);
    memset(el, 0, sizeof *el);
}

ct_status ct_elastic_add(ct_elastic *el, int dim, int ne, const int *elem, const double *Y,
                         int index_offset, const double *vol_override, const ct_material *mat,
                         ct_diag *diag)
{
    if (dim != 2 && dim != 3) return ct_diag_add(diag, CT_EINPUT, "elastic: dim must be 2 or 3 (got %d)", dim);
    if (el->ne > 0 && el->dim != dim)
        return ct_diag_add(diag, CT_EINPUT, "elastic: cannot add %dD elements to a %dD set", dim, el->dim);
    if (ne < 0 || (ne > 0 && (!elem || !Y)) || !mat)
        return ct_diag_add(diag, CT_EINPUT, "elastic: bad element list (ne = %d)", ne);

    if (ne == 0) return CT_OK;

    const int d = dim, nv = d + 1;
    const size_t tot = (size_t)el->ne + (size_t)ne;
    /* grow the arrays first; el->ne only moves once every element has been accepted */
    int *ei = realloc(el->elem, tot * nv * sizeof *ei);
    if (ei) el->elem = ei;
    double *di = realloc(el->DmInv, tot * d * d * sizeof *di);
    if (di) el->DmInv = di;
    double *vo = realloc(el->vol, tot * sizeof *vo);
    if (vo) el->vol = vo;
    int *mi = realloc(el->mat, tot * sizeof *mi);
    if (mi) el->mat = mi;
    ct_material *ms = realloc(el->mats, ((size_t)el->nmat + 1) * sizeof *ms);
    if (ms) el->mats = ms;
    double *gb = realloc(el->gbuf, tot * (size_t)(d * nv) * sizeof *gb);
    if (gb) el->gbuf = gb;
    if (!ei || !di || !vo || !mi || !ms || !gb)
        return ct_diag_add(diag, CT_ENOMEM, "elastic: out of memory for %zu elements", tot);

    const double fact = d == 2 ? 2.0 : 6.0; /* |simplex| = |det Dm| / d! */
    ct_status st = CT_OK;
    for (int e = 0; e < ne; ++e) {
        const int *v = elem + (size_t)e * nv;
        const size_t ge = (size_t)el->ne + (size_t)e;
        int bad_index = 0;
        for (int k = 0; k < nv; ++k) {
            bad_index |= v[k] < 0;
            el->elem[ge * nv + k] = v[k] + index_offset;
        }
        if (bad_index) {
            st = ct_diag_add(diag, CT_EINPUT, "elastic: element %d: negative vertex index", e);
            continue;
        }
        double Dm[9], C[9], len = 0.0;
        for (int k = 1; k < nv; ++k) {
            double l2 = 0.0;
            for (int a = 0; a < d; ++a) {
                Dm[a + d * (k - 1)] = Y[(size_t)v[k] * d + a] - Y[(size_t)v[0] * d + a];
                l2 += Dm[a + d * (k - 1)] * Dm[a + d * (k - 1)];
            }
            len = fmax(len, sqrt(l2));
        }
        const double det = ct_dense_det(d, Dm), svol = det / fact;
        if (!(svol > 1e-14 * pow(len, d))) {
            ct_status s = ct_diag_add(diag, CT_EINVERTED,
                                      "elastic: element %d: inverted or degenerate rest shape "
                                      "(signed volume %g)", e, svol);
            if (st != CT_EINPUT) st = s;
            continue;
        }
        /* DmInv = cof(Dm)^T / det */
        ct_dense_cof(d, Dm, C);
        for (int j = 0; j < d; ++j)
            for (int i = 0; i < d; ++i) el->DmInv[ge * d * d + i + d * j] = C[j + d * i] / det;
        double w = svol;
        if (vol_override) {
            w = vol_override[e];
            if (!(w >= 0.0 && isfinite(w)))
                st = ct_diag_add(diag, CT_EINPUT, "elastic: element %d: volume must be >= 0 (got %g)", e, w);
        }
        el->vol[ge] = w;
        el->mat[ge] = el->nmat;
    }
    if (st != CT_OK) return st;
    el->mats[el->nmat++] = *mat;
    el->dim = d;
    el->ne = (int)tot;
    return CT_OK;
}

void ct_elastic_F(const ct_elastic *el, int e, const double *y, double *F)
{
    const int d = el->dim;
    const int *v = el->elem + (size_t)e * (d + 1);
    double Ds[9];
    for (int k = 1; k <= d; ++k)
        for (int a = 0; a < d; ++a) Ds[a + d * (k - 1)] = y[(size_t)v[k] * d + a] - y[(size_t)v[0] * d + a];
    ct_dense_matmul(d, Ds, el->DmInv + (size_t)e * d * d, F);
}

/* G[k + (d+1) b] = dF_ab / dy_{k,a} (see the top of the file) */
static void shape_gradients(const ct_elastic *el, int e, double *G)
{
    const int d = el->dim, nv = d + 1;
    const double *Di = el->DmInv + (size_t)e * d * d;
    for (int b = 0; b < d; ++b) {
        double s = 0.0;
        for (int k = 1; k < nv; ++k) s += G[k + nv * b] = Di[(k - 1) + d * b];
        G[nv * b] = -s;
    }
}

static double block_energy(const ct_elastic *el, const double *y, int blk)
{
    const int e0 = blk * ENERGY_BLOCK, e1 = e0 + ENERGY_BLOCK < el->ne ? e0 + ENERGY_BLOCK : el->ne;
    double F[9], E = 0.0;
    for (int e = e0; e < e1; ++e) {
        ct_elastic_F(el, e, y, F);
        E += el->vol[e] * ct_material_psi(&el->mats[el->mat[e]], el->dim, F);
    }
    return E;
}

double ct_elastic_energy(const ct_elastic *el, const double *y)
{
    const int nb = (el->ne + ENERGY_BLOCK - 1) / ENERGY_BLOCK;
    double E = 0.0;
    double *part = malloc((nb ? (size_t)nb : 1) * sizeof *part);
    if (!part) { /* same blocks, same order, one thread */
        for (int b = 0; b < nb; ++b) E += block_energy(el, y, b);
        return E;
    }
#pragma omp parallel for schedule(static)
    for (int b = 0; b < nb; ++b) part[b] = block_energy(el, y, b);
    for (int b = 0; b < nb; ++b) E += part[b];
    free(part);
    return E;
}

double ct_elastic_term_scale(const ct_elastic *el)
{
    double S = 0.0;
    for (int e = 0; e < el->ne; ++e) {
        const ct_material *m = &el->mats[el->mat[e]];
        S += el->vol[e] * (fabs(m->mu) + fabs(m->lambda)) * el->dim;
    }
    return S;
}

/* ge[k*d + c] = vol sum_b P_cb G_kb */
static void element_gradient(const ct_elastic *el, int e, const double *y, double *ge)
{
    const int d = el->dim, nv = d + 1;
    double F[9], P[9], G[12];
    ct_elastic_F(el, e, y, F);
    ct_material_pk1(&el->mats[el->mat[e]], d, F, P);
    shape_gradients(el, e, G);
    for (int k = 0; k < nv; ++k)
        for (int c = 0; c < d; ++c) {
            double s = 0.0;
            for (int b = 0; b < d; ++b) s += P[c + d * b] * G[k + nv * b];
            ge[k * d + c] = el->vol[e] * s;
        }
}

static void scatter(const ct_elastic *el, int e, const double *ge, double *g)
{
    const int d = el->dim;
    const int *v = el->elem + (size_t)e * (d + 1);
    for (int k = 0; k <= d; ++k)
        for (int c = 0; c < d; ++c) g[(size_t)v[k] * d + c] += ge[k * d + c];
}

void ct_elastic_gradient(const ct_elastic *el, const double *y, double *g)
{
    /* per-element gradients in parallel, then one scatter in element order (deterministic) */
    const int nd = el->dim * (el->dim + 1);
    double *buf = el->gbuf;
#pragma omp parallel for schedule(static)
    for (int e = 0; e < el->ne; ++e) element_gradient(el, e, y, buf + (size_t)e * nd);
    for (int e = 0; e < el->ne; ++e) scatter(el, e, buf + (size_t)e * nd, g);
}

/* H = vol B^T dPdF B with B = dvec(F)/dy, applied in two passes that use B's Kronecker
 * structure: T_{(c,b),(l,e)} = sum_f dPdF_{(c,b),(e,f)} G_lf, then
 * H_{(k,c),(l,e)} = vol sum_b G_kb T_{(c,b),(l,e)}. */
CT_DENSE_INLINE ct_status element_hessian(const int d, const ct_elastic *el, int e, const double *y,
                                       double *H, int project)
{
    const int nv = d + 1, n = d * d, nd = d * nv;
    double F[9], A[81], G[12], T[9 * 12];
    ct_elastic_F(el, e, y, F);
    ct_status st = ct_material_dpdf(&el->mats[el->mat[e]], d, F, A, project);
    if (st != CT_OK) return st;
    shape_gradients(el, e, G);
    for (int l = 0; l < nv; ++l)
        for (int ec = 0; ec < d; ++ec)
            for (int r = 0; r < n; ++r) {
                double s = 0.0;
                for (int f = 0; f < d; ++f) s += A[r + n * (ec + d * f)] * G[l + nv * f];
                T[r + n * (l * d + ec)] = s;
            }
    const double w = el->vol[e];
    for (int col = 0; col < nd; ++col)
        for (int k = 0; k < nv; ++k)
            for (int c = 0; c < d; ++c) {
                double s = 0.0;
                for (int b = 0; b < d; ++b) s += G[k + nv * b] * T[(c + d * b) + n * col];
                H[(k * d + c) + nd * col] = w * s;
            }
    return CT_OK;
}

ct_status ct_elastic_hessian_local(const ct_elastic *el, const double *y, double *Hloc, int project)
{
    const size_t nd = (size_t)el->dim * (size_t)(el->dim + 1);
    int worst = CT_OK;
#pragma omp parallel for schedule(static) reduction(max : worst)
    for (int e = 0; e < el->ne; ++e) {
        double *He = Hloc + (size_t)e * nd * nd;
        /* constant d: lets the compiler unroll the small loops */
        ct_status st = el->dim == 2 ? element_hessian(2, el, e, y, He, project)
                                    : element_hessian(3, el, e, y, He, project);
        if ((int)st > worst) worst = (int)st;
    }
    return (ct_status)worst;
}
