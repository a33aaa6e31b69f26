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

static size_t hess_factored_work(const ct_vnormal_topo *t, int N);

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
        n += hess_factored_work(t, (int)N);
    }
    return n;
}

/* The local index of vertex u in the stencil verts (n entries), −1 if absent. */
static int local_index(const int *verts, int n, int u)
{
    for (int i = 0; i < n; ++i)
        if (verts[i] == u) return i;
    return -1;
}

/* Whether the cache holds every sample at level 2 (the normal's Jacobian and component Hessians). */
static int cache_covers(const ct_vnormal_cache *nc, const ct_vnormal_topo *t, int k, const int *samples)
{
    if (!nc || !nc->slot || nc->nv != t->nv || nc->level < 2) return 0;
    for (int i = 0; i < k; ++i)
        if (nc->slot[samples[i]] < 0) return 0;
    return 1;
}

/* Work doubles of hess_factored for a stencil of N = dim·n stencil coordinates. */
static size_t hess_factored_work(const ct_vnormal_topo *t, int N)
{
    const size_t d = (size_t)t->dim, mr = (size_t)t->max_ring;
    const size_t k = (size_t)N; /* samples ≤ stencil vertices ≤ N */
    return 2 * (CT_IMLS_MAX_PAIRS + 1) * (size_t)N /* the pairs mapped to the stencil */
           + 2 * mr * d * d                        /* G dN_l, K dN_l per ring slot of a sample */
           + k * (2 + mr);                         /* local indices of q, s_i and the rings (as doubles) */
}

/* Add B (d×d) to the block (u, v) ≤ of H (N wide, upper triangle: u < v all of it, u = v its upper part). */
static inline __attribute__((always_inline)) void add_block_upper(const int d, int u, int v, const double *B, int N,
                                                                   double *H)
{
    for (int a = 0; a < d; ++a) {
        double *Hr = H + (size_t)(d * u + a) * N + d * v;
        for (int b = u == v ? a : 0; b < d; ++b) Hr[b] += B[a * d + b];
    }
}

/* Add the pair of blocks X at (u, v) and Xᵀ at (v, u) to the upper triangle of H (N wide). */
static inline __attribute__((always_inline)) void add_sym(const int d, int u, int v, const double *X, int N, double *H)
{
    if (u < v) {
        for (int a = 0; a < d; ++a) {
            double *Hr = H + (size_t)(d * u + a) * N + d * v;
            for (int b = 0; b < d; ++b) Hr[b] += X[a * d + b];
        }
    } else if (u > v) {
        for (int a = 0; a < d; ++a) {
            double *Hr = H + (size_t)(d * v + a) * N + d * u;
            for (int b = 0; b < d; ++b) Hr[b] += X[b * d + a];
        }
    } else {
        for (int a = 0; a < d; ++a) {
            double *Hr = H + (size_t)(d * u + a) * N + d * u;
            for (int b = a; b < d; ++b) Hr[b] += X[a * d + b] + X[b * d + a];
        }
    }
}

/* H = c2 g gᵀ + c1 (Jᵀ ∇²_z ψ J + Σ_i ∇²(μ_iᵀ n_i)) over the stencil (N = dim·n, row-major, exactly
 * symmetric), μ_i the n_i-part of ∇_z ψ (gz), from the factored ∇²_z ψ and the cached normal derivatives
 * (cache_covers): J maps the stencil positions to z = (x_q, p_i = x_{s_i}, n_i = n(ring of s_i)), so
 *   Jᵀ(Σ_i S_iᵀ M_i S_i)J = Σ_i (S_i J)ᵀ M_i (S_i J),   Jᵀ sym(a bᵀ) J = sym((Jᵀa)(Jᵀb)ᵀ),
 * with S_i J sparse: +I on q, −I on s_i (the δ rows), ∂n_i/∂ring on the ring (the n rows). The same
 * matrix as chaining the dense ∇²_z ψ (ct_vnormal_chain) up to rounding, without forming it. The
 * dimension d is a constant in each instance (hess_factored below), so that the d-loops unroll. */
static inline __attribute__((always_inline)) ct_status
hess_factored_d(const int d, const ct_vnormal_topo *t, const ct_vnormal_cache *nc, int q, int k, const int *samples,
                int n, const int *verts, const double *gz, const ct_imls_hfac *f, double c1, double c2,
                const double *g, double *work, double *H)
{
    const int N = d * n, d2 = 2 * d, nm = f->nm, np = nm + 1, stride = nc->stride, ls_ = 2 + t->max_ring;
    double *U = work, *V = U + (size_t)np * N, *W = V + (size_t)np * N;
    double *LX = W + (size_t)2 * t->max_ring * d * d; /* per sample: q, s_i, ring_i[0..m) as local indices */
    const int lq = local_index(verts, n, q);
    if (lq < 0 || k > N) return CT_EINPUT;
    for (int i = 0; i < k; ++i) {
        int mr;
        const int *ring = ct_vnormal_ring(t, samples[i], &mr);
        double *lx = LX + (size_t)i * ls_;
        lx[0] = lq;
        lx[1] = local_index(verts, n, samples[i]);
        for (int j = 0; j < mr; ++j) lx[2 + j] = local_index(verts, n, ring[j]);
        for (int j = 1; j < 2 + mr; ++j)
            if (lx[j] < 0) return CT_EINPUT;
    }
    /* the pairs in stencil coordinates, u_m = c1 Jᵀa_m, v_m = Jᵀb_m, and (u, v) = (c2/2 g, g) last */
    memset(U, 0, (size_t)2 * np * N * sizeof *U);
    const double *zs[2 * CT_IMLS_MAX_PAIRS];
    double *Xs[2 * CT_IMLS_MAX_PAIRS], sc[2 * CT_IMLS_MAX_PAIRS];
    for (int m = 0; m < nm; ++m) {
        zs[2 * m] = f->a[m], Xs[2 * m] = U + (size_t)m * N, sc[2 * m] = c1;
        zs[2 * m + 1] = f->b[m], Xs[2 * m + 1] = V + (size_t)m * N, sc[2 * m + 1] = 1.0;
    }
    for (int v = 0; v < 2 * nm; ++v)
        for (int a = 0; a < d; ++a) Xs[v][d * lq + a] += sc[v] * zs[v][a];
    for (int i = 0; i < k; ++i) {
        const int s = samples[i], mr = t->ring_ptr[s + 1] - t->ring_ptr[s], ld = mr * d;
        const double *lx = LX + (size_t)i * ls_;
        const int ls = (int)lx[1];
        const double *dn = nc->dn + (size_t)nc->slot[s] * d * stride;
        for (int v = 0; v < 2 * nm; ++v)
            for (int a = 0; a < d; ++a) Xs[v][d * ls + a] += sc[v] * zs[v][d * (1 + i) + a];
        for (int j = 0; j < mr; ++j) {
            const int lj = (int)lx[2 + j];
            double D[9];
            for (int a = 0; a < d; ++a)
                for (int b = 0; b < d; ++b) D[a * d + b] = dn[a * ld + d * j + b];
            for (int v = 0; v < 2 * nm; ++v) {
                const double *zn = zs[v] + d * (1 + k + i);
                double *X = Xs[v] + d * lj;
                for (int b = 0; b < d; ++b) {
                    double acc = 0.0;
                    for (int a = 0; a < d; ++a) acc += D[a * d + b] * zn[a];
                    X[b] += sc[v] * acc;
                }
            }
        }
    }
    for (int r = 0; r < N; ++r) U[(size_t)nm * N + r] = 0.5 * c2 * g[r], V[(size_t)nm * N + r] = g[r];
    /* the upper triangle of Σ (u vᵀ + v uᵀ), one pass over each row */
    for (int r = 0; r < N; ++r) {
        double ur[CT_IMLS_MAX_PAIRS + 1] = {0}, vr[CT_IMLS_MAX_PAIRS + 1] = {0};
        for (int m = 0; m < np; ++m) ur[m] = U[(size_t)m * N + r], vr[m] = V[(size_t)m * N + r];
        double *Hr = H + (size_t)r * N;
        const double *U0 = U, *U1 = U0 + N, *U2 = U1 + N, *U3 = U2 + N, *U4 = U3 + N, *U5 = U4 + N;
        const double *V0 = V, *V1 = V0 + N, *V2 = V1 + N, *V3 = V2 + N, *V4 = V3 + N, *V5 = V4 + N;
        if (np == 6) {
#pragma omp simd
            for (int c = r; c < N; ++c)
                Hr[c] = ur[0] * V0[c] + vr[0] * U0[c] + ur[1] * V1[c] + vr[1] * U1[c] + ur[2] * V2[c] + vr[2] * U2[c] +
                        ur[3] * V3[c] + vr[3] * U3[c] + ur[4] * V4[c] + vr[4] * U4[c] + ur[5] * V5[c] + vr[5] * U5[c];
        } else if (np == 5) {
#pragma omp simd
            for (int c = r; c < N; ++c)
                Hr[c] = ur[0] * V0[c] + vr[0] * U0[c] + ur[1] * V1[c] + vr[1] * U1[c] + ur[2] * V2[c] + vr[2] * U2[c] +
                        ur[3] * V3[c] + vr[3] * U3[c] + ur[4] * V4[c] + vr[4] * U4[c];
        } else {
            for (int c = r; c < N; ++c) {
                double h = 0.0;
                for (int m = 0; m < np; ++m) h += ur[m] * V[(size_t)m * N + c] + vr[m] * U[(size_t)m * N + c];
                Hr[c] = h;
            }
        }
    }
    /* the samples' blocks (S_i J)ᵀ c1 M_i (S_i J) + c1 ∇²(μ_iᵀ n_i): with M_i's (δ, n) parts Mδδ, Mδn, Mnn,
       dn = (P/ρ) dN and ct_vnormal_cache_quad's core K = P Mnn P/ρ² + M(c1 μ_i) (and its face terms),
         (q or s_i, q or s_i): ±Mδδ,  (q or s_i, ring l): ±Mδn (P/ρ) dN_l,  (ring j, ring l): dN_jᵀ K dN_l,
       each unordered pair of entries once (add_sym) */
    for (int i = 0; i < k; ++i) {
        const int s = samples[i], mr = t->ring_ptr[s + 1] - t->ring_ptr[s], ld = mr * d, ne = 2 + mr;
        const double *lx = LX + (size_t)i * ls_;
        const double *Mi = f->loc + (size_t)i * d2 * d2, *mu = gz + d * (1 + k + i);
        double Mdd[9], Mdn[9], Mnn[9], am[3], K[9], cf[3], Pr[9], G[9];
        for (int a = 0; a < d; ++a) {
            am[a] = c1 * mu[a];
            for (int b = 0; b < d; ++b) {
                Mdd[a * d + b] = c1 * Mi[a * d2 + b];
                Mdn[a * d + b] = c1 * Mi[a * d2 + d + b];
                Mnn[a * d + b] = c1 * Mi[(d + a) * d2 + d + b];
            }
        }
        const double *dN;
        ct_status st = ct_vnormal_cache_quad(nc, s, Mnn, am, K, cf, Pr, &dN);
        if (st != CT_OK) return st;
        for (int a = 0; a < d; ++a)
            for (int b = 0; b < d; ++b) {
                double v = 0.0;
                for (int c = 0; c < d; ++c) v += Mdn[a * d + c] * Pr[c * d + b];
                G[a * d + b] = v;
            }
        double *GD = W, *KD = W + (size_t)mr * d * d; /* per ring slot l: G dN_l, K dN_l */
        for (int l = 0; l < mr; ++l)
            for (int a = 0; a < d; ++a)
                for (int b = 0; b < d; ++b) {
                    double g1 = 0.0, k1 = 0.0;
                    for (int c = 0; c < d; ++c) {
                        const double dv = dN[c * ld + d * l + b];
                        g1 += G[a * d + c] * dv;
                        k1 += K[a * d + c] * dv;
                    }
                    GD[(size_t)l * d * d + a * d + b] = g1;
                    KD[(size_t)l * d * d + a * d + b] = k1;
                }
        for (int ee = 0; ee < ne; ++ee) {
            const double se = ee == 0 ? 1.0 : -1.0;
            for (int fe = ee; fe < ne; ++fe) {
                double X[9];
                if (fe < 2) {
                    const double sg = se * (fe == 0 ? 1.0 : -1.0);
                    for (int a = 0; a < d * d; ++a) X[a] = sg * Mdd[a];
                } else if (ee < 2) {
                    const double *gd = GD + (size_t)(fe - 2) * d * d;
                    for (int a = 0; a < d * d; ++a) X[a] = se * gd[a];
                } else {
                    const double *kd = KD + (size_t)(fe - 2) * d * d;
                    const int j = ee - 2;
                    for (int a = 0; a < d; ++a)
                        for (int b = 0; b < d; ++b) {
                            double v = 0.0;
                            for (int c = 0; c < d; ++c) v += dN[c * ld + d * j + a] * kd[c * d + b];
                            X[a * d + b] = v;
                        }
                }
                if (fe == ee) add_block_upper(d, (int)lx[ee], (int)lx[ee], X, N, H); /* X symmetric */
                else add_sym(d, (int)lx[ee], (int)lx[fe], X, N, H);
            }
        }
        if (d == 3) { /* the face terms of ∇²N along cf: B on (b, c), −B on (b, v) and (v, c) */
            const double B[9] = {0.0, 0.5 * cf[2], -0.5 * cf[1], -0.5 * cf[2], 0.0, 0.5 * cf[0], 0.5 * cf[1], -0.5 * cf[0], 0.0};
            const double mB[9] = {-B[0], -B[1], -B[2], -B[3], -B[4], -B[5], -B[6], -B[7], -B[8]};
            const int *cells = t->cell + 2 * t->cell_ptr[s];
            const int ncell = t->cell_ptr[s + 1] - t->cell_ptr[s];
            const int lv = (int)lx[2];
            for (int e = 0; e < ncell; ++e) {
                const int lb = (int)lx[2 + cells[2 * e]], lc = (int)lx[2 + cells[2 * e + 1]];
                add_sym(d, lb, lc, B, N, H);
                add_sym(d, lb, lv, mB, N, H);
                add_sym(d, lv, lc, mB, N, H);
            }
        }
    }
    for (int r = 0; r < N; ++r)
        for (int c = r + 1; c < N; ++c) H[(size_t)c * N + r] = H[(size_t)r * N + c];
    return CT_OK;
}

static ct_status hess_factored(const ct_vnormal_topo *t, const ct_vnormal_cache *nc, int q, int k,
                               const int *samples, int n, const int *verts, const double *gz,
                               const ct_imls_hfac *f, double c1, double c2, const double *g, double *work, double *H)
{
    if (t->dim == 3) return hess_factored_d(3, t, nc, q, k, samples, n, verts, gz, f, c1, c2, g, work, H);
    return hess_factored_d(2, t, nc, q, k, samples, n, verts, gz, f, c1, c2, g, work, H);
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
    ct_imls_hfac fac; /* ∇²_z ψ factored (want_h); expanded into Hz where the dense matrix is needed */
    ct_status st = want_h ? ct_imls_eval_factored(&prm->field, k, xq, pos, nrm, wi, nwi, &res->field, gz, &fac)
                          : ct_imls_eval(&prm->field, k, xq, pos, nrm, what, wi, nwi, &res->field,
                                         what >= CT_IMLS_GRADIENT ? gz : NULL, NULL);
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
    double *wf = wp + (want_h && mode == CT_IMLS_HESS_PROJECT ? ct_psd_project_ws_size(NX) : 0);

    /* the chain: ∇ψ into grad; ∇²ψ into hess for EXACT / PROJECT, from the factors (hess_factored) when the
       normals' derivatives are cached and the term is not faded, else from the dense ∇²_z ψ */
    const int full = want_h && mode != CT_IMLS_HESS_GN;
    const int fast = full && !faded && t->max_ring <= 64 && cache_covers(prm->normals, t, k, samples);
    if (want_h && !fast) ct_imls_hfac_expand(&fac, Hz);
    const int dense = full && !fast;
    st = ct_vnormal_chain_cached(t, prm->normals, x, q, k, samples, n, verts, gz, dense ? Hz : NULL, wc, nwc, grad,
                                 dense ? hess : NULL);
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
        } else if (fast) { /* H = c2 g gᵀ + c1 ∇²ψ from the factors */
            st = hess_factored(t, prm->normals, q, k, samples, n, verts, gz, &fac, c1, c2, grad, wf, hess);
            if (st == CT_OK && mode == CT_IMLS_HESS_PROJECT) st = ct_psd_project_ws(hess, NX, wp, ct_psd_project_ws_size(NX));
            if (st != CT_OK) return st;
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
