/* imls_term.c — one IMLS contact term w κ b(ψ) over its vertex stencil (see ct_imls_term.h).
 *
 * Flow: the samples' positions and vertex normals are gathered, ψ is evaluated (with its derivatives
 * over z = (x, p_i, n_i) when asked) to classify the term; an ACTIVE term then gets ct_vnormal_chain's
 * derivatives over the stencil positions, combined with b'(ψ), b''(ψ):
 *   ∇E = c1 ∇ψ,   H_exact = c2 ∇ψ∇ψᵀ + c1 ∇²ψ,   c1 = w κ b'(ψ) < 0,  c2 = w κ b''(ψ) > 0,
 *   H_GN = c2⁺ ∇ψ∇ψᵀ + E₀ [c1 ∇²ₓₓψ]⁺ E₀ᵀ,      H_project = [H_exact]⁺;
 * with an extra law (adhesion) c1 = w (κ b' + a'), c2 = w (κ b'' + a''), c2 of either sign.
 */
#include "contactlab/ct_imls_term.h"

#include "contactlab/ct_barrier.h"
#include "contactlab/ct_psd.h"

#include <math.h>
#include <string.h>

void ct_imls_term_params_default(ct_imls_term_params *p, int dim, double R, double dhat, double kappa)
{
    ct_imls_params_default(&p->field, dim, R);
    p->dhat = dhat;
    p->kappa = kappa;
    p->hess = CT_IMLS_HESS_EXACT;
    p->extra = NULL;
    p->extra_ctx = NULL;
    p->extra_reach = 0.0;
    p->fade = 0.0;
    p->normals = NULL;
}

ct_status ct_imls_term_params_check(const ct_imls_term_params *p)
{
    if (!p || ct_imls_params_check(&p->field) != CT_OK) return CT_EINPUT;
    if (!(p->dhat > 0.0) || !isfinite(p->dhat)) return CT_EINPUT;
    if (!(p->kappa >= 0.0) || !isfinite(p->kappa)) return CT_EINPUT;
    if (p->hess != CT_IMLS_HESS_EXACT && p->hess != CT_IMLS_HESS_GN && p->hess != CT_IMLS_HESS_PROJECT)
        return CT_EINPUT;
    if (p->extra && (!(p->extra_reach >= 0.0) || !isfinite(p->extra_reach))) return CT_EINPUT;
    if (!(p->fade >= 0.0) || !isfinite(p->fade)) return CT_EINPUT;
    return CT_OK;
}

int ct_imls_term_stencil_cap(const ct_vnormal_topo *t, int k)
{
    if (!t || k < 0) return 0;
    return 1 + k * t->max_ring;
}

size_t ct_imls_term_work_size(const ct_vnormal_topo *t, int k, int cap, ct_imls_mode what,
                              ct_imls_hess_mode mode)
{
    if (!t || k < 0 || cap < 0) return 0;
    const int d = t->dim;
    const size_t p = (size_t)ct_imls_nvars(d, k);
    size_t n = 2 * (size_t)k * (size_t)d; /* sample positions and normals */
    n += ct_imls_work_size(d, k, what);
    if (what >= CT_IMLS_GRADIENT) {
        n += p;                                                  /* ∇_z ψ */
        n += ct_vnormal_chain_work_size(t, k, cap > 0 ? cap : 1); /* the chain */
    }
    if (what >= CT_IMLS_GRADIENT) n += p + (size_t)d * (size_t)(cap > 0 ? cap : 1); /* the fade: ∇_z B, ∇B */
    if (what >= CT_IMLS_HESSIAN) {
        n += p * p; /* ∇²_z ψ */
        const size_t N = (size_t)d * (size_t)(cap > 0 ? cap : 1);
        n += p * p + N * N; /* the fade: ∇²_z B, ∇²B */
        if (mode == CT_IMLS_HESS_PROJECT) n += ct_psd_project_ws_size(d * cap);
    }
    return n;
}

ct_status ct_imls_term_eval(const ct_imls_term_params *prm, const ct_vnormal_topo *t, const double *x,
                            int q, double wq, int k, const int *samples, ct_imls_mode what, double *work,
                            size_t work_len, ct_imls_term_result *res, int *verts, int cap, double *grad,
                            double *hess)
{
    if (ct_imls_term_params_check(prm) != CT_OK || !t || !x || !res || !work) return CT_EINPUT;
    if (t->dim != prm->field.dim || q < 0 || q >= t->nv || k < 0 || (k > 0 && !samples)) return CT_EINPUT;
    if (!(wq >= 0.0) || !isfinite(wq)) return CT_EINPUT;
    if (what < CT_IMLS_VALUE || what > CT_IMLS_HESSIAN) return CT_EINPUT;
    if (what >= CT_IMLS_GRADIENT && (!verts || !grad || cap < 1)) return CT_EINPUT;
    if (what >= CT_IMLS_HESSIAN && !hess) return CT_EINPUT;
    for (int i = 0; i < k; ++i)
        if (samples[i] < 0 || samples[i] >= t->nv) return CT_EINPUT;
    const int d = t->dim, p = ct_imls_nvars(d, k);
    if (work_len < ct_imls_term_work_size(t, k, what >= CT_IMLS_GRADIENT ? 1 : 0, what, prm->hess))
        return CT_EINPUT; /* the size without the n-dependent parts; checked again below */

    memset(res, 0, sizeof *res);
    res->state = CT_IMLS_TERM_OFF;

    /* samples: positions and vertex normals at x */
    double *pos = work, *nrm = pos + (size_t)k * d, *wi = nrm + (size_t)k * d;
    for (int i = 0; i < k; ++i) {
        memcpy(pos + (size_t)i * d, x + (size_t)samples[i] * d, (size_t)d * sizeof *pos);
        const double *cn = ct_vnormal_cache_normal(prm->normals, samples[i]);
        if (cn) {
            memcpy(nrm + (size_t)i * d, cn, (size_t)d * sizeof *nrm);
            continue;
        }
        const ct_status st = ct_vnormal_eval(t, x, samples[i], nrm + (size_t)i * d, NULL, NULL, NULL);
        if (st != CT_OK) return st;
    }
    const size_t nwi = ct_imls_work_size(d, k, what);
    const double *xq = x + (size_t)q * d;
    /* ψ, with ∇_z ψ (and ∇²_z ψ) at once when asked: a caller asks for derivatives of terms it knows to be
       active, so the classification below rarely wastes them */
    const int want_h = what == CT_IMLS_HESSIAN;
    double *gz = wi + nwi, *Hz = gz + p;
    ct_status st = ct_imls_eval(&prm->field, k, xq, pos, nrm, what, wi, nwi, &res->field,
                                what >= CT_IMLS_GRADIENT ? gz : NULL, want_h ? Hz : NULL);
    if (st != CT_OK) return st;
    if (!res->field.term) return CT_OK; /* no support / weak: OFF */
    const double psi = res->field.psi;
    res->psi = psi;
    const double reach = prm->extra && prm->extra_reach > prm->dhat ? prm->extra_reach : prm->dhat;
    if (psi >= reach) return CT_OK; /* OFF */
    if (!(psi > 0.0)) {
        res->state = CT_IMLS_TERM_INFEASIBLE;
        res->energy = INFINITY;
        return CT_OK;
    }
    double b1 = 0.0, b2 = 0.0;
    const double b = psi < prm->dhat ? ct_barrier(psi, prm->dhat, &b1, &b2) : 0.0;
    const double wk = wq * prm->kappa;
    res->state = CT_IMLS_TERM_ACTIVE;
    res->energy = wk * b;
    res->c1 = wk * b1;
    res->c2 = wk * b2;
    if (prm->extra) {
        double a1 = 0.0, a2 = 0.0;
        const double a = prm->extra(prm->extra_ctx, psi, &a1, &a2);
        res->energy += wq * a;
        res->c1 += wq * a1;
        res->c2 += wq * a2;
    }
    /* the fade χ(B/β) of a term whose support is weak (B = Σ φ_i < β): C² smoothstep, χ = 1 from β on */
    double F = 1.0, F1 = 0.0, F2 = 0.0;
    const int faded = prm->fade > 0.0 && res->field.B < prm->fade;
    if (faded) {
        const double u = res->field.B / prm->fade, v = 1.0 - u;
        F = u * u * u * (10.0 - 15.0 * u + 6.0 * u * u);
        F1 = 30.0 * u * u * v * v / prm->fade;
        F2 = 60.0 * u * v * (v - u) / (prm->fade * prm->fade);
    }
    const double G = res->energy;
    res->chi = F;
    res->energy = F * G;
    if (what == CT_IMLS_VALUE) return CT_OK;

    /* the stencil */
    const int n = ct_vnormal_stencil(t, q, k, samples, verts, cap);
    if (n < 1) return CT_EINPUT;
    if (n > cap) {
        res->n = n;
        return CT_EINPUT;
    }
    if (work_len < ct_imls_term_work_size(t, k, n, what, prm->hess)) return CT_EINPUT;
    const int NX = d * n;
    const ct_imls_hess_mode mode = prm->hess;
    double *wc = Hz + (want_h ? (size_t)p * p : 0);
    const size_t nwc = ct_vnormal_chain_work_size(t, k, n);
    double *gBz = wc + nwc, *gB = gBz + p; /* the fade's ∇_z B, ∇B (stencil) */
    double *HBz = gB + NX, *HB = HBz + (want_h ? (size_t)p * p : 0);
    double *wp = HB + (want_h ? (size_t)NX * NX : 0);

    /* the chain: ∇ψ into grad; ∇²ψ into hess for EXACT / PROJECT */
    const int full = want_h && mode != CT_IMLS_HESS_GN;
    st = ct_vnormal_chain_cached(t, prm->normals, x, q, k, samples, n, verts, gz, full ? Hz : NULL, wc, nwc, grad, full ? hess : NULL);
    if (st != CT_OK) return st;
    if (faded) { /* ∇B (and ∇²B) over the stencil: B depends on x and the p_i only */
        double Bv;
        st = ct_imls_support(&prm->field, k, xq, pos, &Bv, gBz, want_h ? HBz : NULL);
        if (st == CT_OK)
            st = ct_vnormal_chain_cached(t, prm->normals, x, q, k, samples, n, verts, gBz, full ? HBz : NULL, wc, nwc, gB, full ? HB : NULL);
        if (st != CT_OK) return st;
    }
    res->n = n;
    const double c1 = res->c1, c2 = res->c2;

    if (want_h) {
        const size_t N = (size_t)NX;
        if (full && faded) { /* H = χ(c2 g gᵀ + c1 ∇²ψ) + χ' c1 (g_B gᵀ + g g_Bᵀ) + χ'' G g_B g_Bᵀ + χ' G ∇²B */
            for (size_t r = 0; r < N; ++r) {
                double *Hr = hess + r * N;
                const double *HBr = HB + r * N;
                for (size_t c = r; c < N; ++c)
                    Hr[c] = F * (c2 * grad[r] * grad[c] + c1 * Hr[c]) + F1 * c1 * (gB[r] * grad[c] + grad[r] * gB[c]) +
                            F2 * G * gB[r] * gB[c] + F1 * G * HBr[c];
                for (size_t c = r + 1; c < N; ++c) hess[c * N + r] = Hr[c];
            }
            if (mode == CT_IMLS_HESS_PROJECT) {
                st = ct_psd_project_ws(hess, NX, wp, ct_psd_project_ws_size(NX));
                if (st != CT_OK) return st;
            }
        } else if (full) { /* H = c2 g gᵀ + c1 ∇²ψ: the upper triangle, mirrored (exactly symmetric) */
            for (size_t r = 0; r < N; ++r) {
                const double gr = c2 * grad[r];
                double *Hr = hess + r * N;
                for (size_t c = r; c < N; ++c) Hr[c] = gr * grad[c] + c1 * Hr[c];
                for (size_t c = r + 1; c < N; ++c) hess[c * N + r] = Hr[c];
            }
            if (mode == CT_IMLS_HESS_PROJECT) {
                st = ct_psd_project_ws(hess, NX, wp, ct_psd_project_ws_size(NX));
                if (st != CT_OK) return st;
            }
        } else if (faded) { /* GN with the fade: [g g_B] M⁺ [g g_B]ᵀ, M = [[χ c2, χ' c1], [χ' c1, χ'' G]], and
                               [χ c1 ∇²ₓₓψ + χ' G ∇²ₓₓB]⁺ on slot 0 */
            double M[4] = {F * c2, F1 * c1, F1 * c1, F2 * G}, ml[2], mv[4];
            ct_psd_jacobi_eig(2, M, ml, mv);
            for (size_t r = 0; r < N; ++r) {
                double *Hr = hess + r * N;
                for (size_t c = r; c < N; ++c) {
                    double h = 0.0;
                    for (int m = 0; m < 2; ++m)
                        if (ml[m] > 0.0)
                            h += ml[m] * (mv[2 * m] * grad[r] + mv[2 * m + 1] * gB[r]) *
                                 (mv[2 * m] * grad[c] + mv[2 * m + 1] * gB[c]);
                    Hr[c] = h;
                }
                for (size_t c = r + 1; c < N; ++c) hess[c * N + r] = Hr[c];
            }
            double A[9], lam[3], V[9];
            for (int a = 0; a < d; ++a)
                for (int bb = 0; bb < d; ++bb) A[a + d * bb] = F * c1 * Hz[(size_t)a * p + bb] + F1 * G * HBz[(size_t)a * p + bb];
            ct_psd_jacobi_eig(d, A, lam, V);
            for (int a = 0; a < d; ++a)
                for (int bb = 0; bb <= a; ++bb) {
                    double sv = 0.0;
                    for (int m = 0; m < d; ++m)
                        if (lam[m] > 0.0) sv += lam[m] * V[a + d * m] * V[bb + d * m];
                    hess[(size_t)a * N + bb] += sv;
                    if (bb != a) hess[(size_t)bb * N + a] += sv;
                }
        } else { /* GN: c2⁺ g gᵀ + [c1 ∇²ₓₓψ]⁺ on slot 0 (= q) */
            const double c2p = c2 > 0.0 ? c2 : 0.0;
            for (size_t r = 0; r < N; ++r) {
                const double gr = c2p * grad[r];
                double *Hr = hess + r * N;
                for (size_t c = r; c < N; ++c) Hr[c] = gr * grad[c];
                for (size_t c = r + 1; c < N; ++c) hess[c * N + r] = Hr[c];
            }
            double A[9], lam[3], V[9];
            for (int a = 0; a < d; ++a)
                for (int bb = 0; bb < d; ++bb) A[a + d * bb] = c1 * Hz[(size_t)a * p + bb];
            ct_psd_jacobi_eig(d, A, lam, V);
            for (int a = 0; a < d; ++a)
                for (int bb = 0; bb <= a; ++bb) {
                    double s = 0.0;
                    for (int m = 0; m < d; ++m)
                        if (lam[m] > 0.0) s += lam[m] * V[a + d * m] * V[bb + d * m];
                    hess[(size_t)a * N + bb] += s;
                    if (bb != a) hess[(size_t)bb * N + a] += s;
                }
        }
    }
    if (faded)
        for (int r = 0; r < NX; ++r) grad[r] = F * c1 * grad[r] + F1 * G * gB[r];
    else
        for (int r = 0; r < NX; ++r) grad[r] *= c1;
    return CT_OK;
}
