/* imls.c — the robust IMLS field of one query point with exact first and second derivatives
 * (see ct_imls.h; design note imls_design.md §1.2–1.4, §2.3–2.5, §2.8).
 *
 * Notation: d = dim, z = (x, p_1..p_k, n_1..n_k) (p = d(1 + 2k) entries), δ_i = x − p_i.
 *
 * Weighted average. For f = Σ ω_i s_i / W, W = Σ ω_i:
 *   ∇f  = (1/W) Σ [ω_i ∇s_i + (s_i − f) ∇ω_i]
 *   ∇²f = (1/W) {Σ M_i − ∇W ∇fᵀ − ∇f ∇Wᵀ},  M_i = ω_i ∇²s_i + (s_i − f) ∇²ω_i + ∇ω_i ∇s_iᵀ + ∇s_i ∇ω_iᵀ.
 *
 * Per-sample local variables: (δ_i, n_i) for f⁰ and (δ_i, n_i, c) for f¹ with c = (c₀, c_g) =
 * (f⁰, g⁰) treated as d + 1 extra variables. A local entry on δ_a goes to x_a with sign + and to
 * (p_i)_a with sign −, so every local block is scattered with those signs.
 *
 * f⁰ (ω = φ): M_i has the blocks δδ: K_i = (s − f⁰)∇²φ + ∇φ nᵀ + n ∇φᵀ, δn: Q_i = φ I + ∇φ δᵀ,
 * nn: 0.
 *
 * Third derivatives, along a query direction λ (∂_λ = Σ λ_j ∂/∂x_j, so ∂_λ δ = λ):
 *   ∂_λ M_i:  δδ: K'_i = (nᵀλ − g⁰ᵀλ)∇²φ + (s − f⁰) T_λ + h nᵀ + n hᵀ,  h = ∇²φ λ,
 *             δn: Q'_i = (∇φᵀλ) I + h δᵀ + ∇φ λᵀ,
 *   T_λ = ∂_λ∇²φ = (48/R⁴) u² ((δᵀλ) I + λδᵀ + δλᵀ) − (192/R⁶) u (δᵀλ) δδᵀ,
 *   Σ_j λ_j ∇²g⁰_j = ∂_λ∇²f⁰ = (1/B)[Σ ∂_λM_i − ∇(∂_λB)∇f⁰ᵀ − ∇f⁰∇(∂_λB)ᵀ − ∇B∇g_λᵀ − ∇g_λ∇Bᵀ
 *                                     − (∂_λB) ∇²f⁰],  ∇g_λ = Σ λ_j (x_j-row of ∇²f⁰).
 *
 * f¹ (ω = φ a, a = exp(−E), E = (c₀ − s)²/σ_r² + |c_g − n|²/σ_n²) in the extended space; with
 * F(z, c) the extended f¹ and C = ∂c/∂z = [∇f⁰ᵀ; x-rows of ∇²f⁰] ((1 + d) × p):
 *   ∇ψ  = F_z + Cᵀ F_c
 *   ∇²ψ = F_zz + F_zc C + Cᵀ F_cz + Cᵀ F_cc C + λ₀ ∇²f⁰ + ∂_λ∇²f⁰,   (λ₀, λ) = F_c.
 * Assembled as: the per-sample local blocks of F_zz/W together with (μ M_i + ∂_λM_i)/B,
 * μ = λ₀ − ∂_λB/B (every multiple of ∇²f⁰ folded in), scattered into the upper triangle; then the
 * symmetric rank-2 updates Σ_m (G_m C_mᵀ + C_m G_mᵀ) − (∇W_z ∇f¹_zᵀ + ∇f¹_z ∇W_zᵀ)/W with
 *   G = F_cz + ½ F_cc C,  G_0 −= (∇(∂_λB) + μ ∇B)/B,  G_{1+j} −= λ_j ∇B/B;
 * and the lower triangle mirrored. iters = 0 is the same with F = c₀ (λ₀ = 1, λ = 0, no f¹ blocks).
 */
#include "contactlab/ct_imls.h"

#include <math.h>
#include <string.h>

enum { DMAX = 3, LMAX = 3 * DMAX + 1 };

void ct_imls_params_default(ct_imls_params *p, int dim, double R)
{
    p->dim = dim;
    p->R = R;
    p->sigma_f = 0.5;
    p->sigma_n = 1.0;
    p->iters = 1;
    p->b_min = 1e-12;
}

ct_status ct_imls_params_check(const ct_imls_params *p)
{
    if (!p || (p->dim != 2 && p->dim != 3)) return CT_EINPUT;
    if (!(p->R > 0.0) || !isfinite(p->R)) return CT_EINPUT;
    if (!(p->sigma_f >= 0.0) || !isfinite(p->sigma_f)) return CT_EINPUT;
    if (!(p->sigma_n >= 0.0) || !isfinite(p->sigma_n)) return CT_EINPUT;
    if (p->iters != 0 && p->iters != 1) return CT_EINPUT;
    if (!(p->b_min >= 0.0)) return CT_EINPUT;
    return CT_OK;
}

int ct_imls_nvars(int dim, int k) { return dim * (1 + 2 * k); }

size_t ct_imls_work_size(int dim, int k, ct_imls_mode mode)
{
    if (k < 0 || dim < 1) return 0;
    const size_t d = (size_t)dim, p = (size_t)ct_imls_nvars(dim, k);
    size_t n = (size_t)k * (d + 4); /* δ, u, φ, s, a per sample */
    if (mode >= CT_IMLS_GRADIENT) n += (d + 1) * p + 3 * p;  /* C, ∇B, ∇f¹_z, ∇W_z */
    if (mode >= CT_IMLS_HESSIAN) n += 2 * (d + 1) * p + p + (size_t)k * 4 * d * d; /* G, F_cz, ∇(∂_λB), M_i */
    return n;
}

/* ---- per-sample kernel pieces ---- */

/* ∇φ and (if H) ∇²φ in δ (row-major d×d). */
static void kernel_d12(int d, double R2, double u, const double *dl, double *g, double *H)
{
    const double c1 = -8.0 / R2 * u * u * u;
    for (int a = 0; a < d; ++a) g[a] = c1 * dl[a];
    if (!H) return;
    const double c2 = 48.0 / (R2 * R2) * u * u;
    for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b) H[a * d + b] = (a == b ? c1 : 0.0) + c2 * dl[a] * dl[b];
}

/* T_λ = ∂_λ ∇²φ (row-major d×d). */
static void kernel_d3(int d, double R2, double u, const double *dl, const double *lam, double *T)
{
    const double c2 = 48.0 / (R2 * R2) * u * u, c3 = 192.0 / (R2 * R2 * R2) * u;
    double dlam = 0.0;
    for (int a = 0; a < d; ++a) dlam += dl[a] * lam[a];
    for (int a = 0; a < d; ++a)
        for (int b = 0; b < d; ++b)
            T[a * d + b] = c2 * ((a == b ? dlam : 0.0) + lam[a] * dl[b] + dl[a] * lam[b]) -
                           c3 * dlam * dl[a] * dl[b];
}

/* ---- the robust weight of one sample in its local variables (δ, n, c₀, c_g), L = 3d + 1 ---- */

typedef struct robust_ctx {
    int d;
    double ir, in;   /* 1/σ_r², 1/σ_n² (0: weight off) */
    double f0, f1;   /* c₀ and the robust value */
    const double *g0; /* c_g */
} robust_ctx;

/* gs = ∇s, gw = ∇ω (ω = φ a) and, if m, the local block M = ω∇²s + (s − f¹)∇²ω + ∇ω∇sᵀ + ∇s∇ωᵀ
 * (row-major L×L). a: the (scaled) robust weight of the sample. */
static void robust_local(const robust_ctx *c, const double *dl, const double *n, double phi,
                         double s, double a, const double *gphi, const double *Hphi, double *gs,
                         double *gw, double *m)
{
    const int d = c->d, L = 3 * d + 1, N0 = d, C0 = 2 * d, G0 = 2 * d + 1;
    double gE[LMAX], gr[LMAX], dn[DMAX];
    const double r = c->f0 - s;
    for (int l = 0; l < L; ++l) gs[l] = gr[l] = gE[l] = 0.0;
    for (int j = 0; j < d; ++j) {
        gs[j] = n[j];
        gs[N0 + j] = dl[j];
        dn[j] = c->g0[j] - n[j];
    }
    for (int l = 0; l < L; ++l) gr[l] = -gs[l];
    gr[C0] = 1.0;
    for (int l = 0; l < L; ++l) gE[l] = 2.0 * c->ir * r * gr[l];
    for (int j = 0; j < d; ++j) {
        gE[N0 + j] -= 2.0 * c->in * dn[j];
        gE[G0 + j] += 2.0 * c->in * dn[j];
    }
    const double om = phi * a;
    for (int l = 0; l < L; ++l) gw[l] = -om * gE[l]; /* φ ∇a */
    for (int j = 0; j < d; ++j) gw[j] += a * gphi[j];
    if (!m) return;
    /* ∇²E = 2 ir (∇r∇rᵀ − r ∇²s) + 2 in S (S: I on nn and c_g c_g, −I on n c_g) */
    double HE[LMAX * LMAX];
    for (int i = 0; i < L; ++i)
        for (int j = 0; j < L; ++j) HE[i * L + j] = 2.0 * c->ir * gr[i] * gr[j];
    for (int j = 0; j < d; ++j) {
        HE[j * L + N0 + j] -= 2.0 * c->ir * r;
        HE[(N0 + j) * L + j] -= 2.0 * c->ir * r;
        HE[(N0 + j) * L + N0 + j] += 2.0 * c->in;
        HE[(G0 + j) * L + G0 + j] += 2.0 * c->in;
        HE[(N0 + j) * L + G0 + j] -= 2.0 * c->in;
        HE[(G0 + j) * L + N0 + j] -= 2.0 * c->in;
    }
    /* ∇a = −a∇E, ∇²a = a(∇E∇Eᵀ − ∇²E);
     * ∇²ω = a∇²φ + ∇φ∇aᵀ + ∇a∇φᵀ + φ∇²a;  M = ω∇²s + (s − f¹)∇²ω + ∇ω∇sᵀ + ∇s∇ωᵀ */
    const double sf = s - c->f1;
    for (int i = 0; i < L; ++i) {
        const double gpi = i < d ? gphi[i] : 0.0, gai = -a * gE[i];
        for (int j = 0; j < L; ++j) {
            const double gpj = j < d ? gphi[j] : 0.0, gaj = -a * gE[j];
            double hw = gpi * gaj + gai * gpj + phi * a * (gE[i] * gE[j] - HE[i * L + j]);
            if (i < d && j < d) hw += a * Hphi[i * d + j];
            m[i * L + j] = sf * hw + gw[i] * gs[j] + gs[i] * gw[j];
        }
    }
    for (int j = 0; j < d; ++j) {
        m[j * L + N0 + j] += om;
        m[(N0 + j) * L + j] += om;
    }
}

/* ---- scatter of local quantities into z-space ---- */

/* Targets of the local variables (δ, n) of sample i: δ_a → x_a (+), (p_i)_a (−); n_a → (n_i)_a. */
typedef struct targets {
    int n[2 * DMAX], idx[2 * DMAX][2];
    double sg[2 * DMAX][2];
} targets;

static void make_targets(int d, int k, int i, targets *t)
{
    memset(t, 0, sizeof *t); /* (the rows past 2d stay empty) */
    for (int a = 0; a < d; ++a) {
        t->n[a] = 2;
        t->idx[a][0] = a, t->sg[a][0] = 1.0;
        t->idx[a][1] = d * (1 + i) + a, t->sg[a][1] = -1.0;
        t->n[d + a] = 1;
        t->idx[d + a][0] = d * (1 + k + i) + a, t->sg[d + a][0] = 1.0;
    }
}

/* z += alpha · (z-part of v) (local (δ, n), v with 2d entries). */
static void scatter_vec(int d, const targets *t, const double *v, double alpha, double *z)
{
    for (int l = 0; l < 2 * d; ++l)
        for (int q = 0; q < t->n[l]; ++q) z[t->idx[l][q]] += alpha * t->sg[l][q] * v[l];
}

/* Upper triangle of H (p×p) += the z-z part of the local block m (stride L, first 2d rows). */
static void scatter_upper(int d, int p, const targets *t, const double *m, int L, double *H)
{
    for (int a = 0; a < 2 * d; ++a)
        for (int qa = 0; qa < t->n[a]; ++qa) {
            const int r = t->idx[a][qa];
            const double sa = t->sg[a][qa];
            for (int b = 0; b < 2 * d; ++b)
                for (int qb = 0; qb < t->n[b]; ++qb) {
                    const int cc = t->idx[b][qb];
                    if (r <= cc) H[(size_t)r * p + cc] += sa * t->sg[b][qb] * m[a * L + b];
                }
        }
}

/* Upper triangle of H += Σ_m (A_m B_mᵀ + B_m A_mᵀ) over nm pairs of p-vectors. */
static void rank2_upper(int p, int nm, const double *const *A, const double *const *Bv, double *H)
{
    for (int r = 0; r < p; ++r) {
        double ar[2 * DMAX + 2], br[2 * DMAX + 2];
        int any = 0;
        for (int m = 0; m < nm; ++m) {
            ar[m] = A[m][r], br[m] = Bv[m][r];
            any |= (ar[m] != 0.0) | (br[m] != 0.0);
        }
        double *Hr = H + (size_t)r * p;
        if (any) {
            for (int c = r; c < p; ++c) {
                double acc = 0.0;
                for (int m = 0; m < nm; ++m) acc += ar[m] * Bv[m][c] + br[m] * A[m][c];
                Hr[c] += acc;
            }
        }
    }
}

/* ---- evaluation ---- */

static void clear_outputs(int p, ct_imls_mode mode, double *grad, double *hess)
{
    if (mode >= CT_IMLS_GRADIENT) memset(grad, 0, (size_t)p * sizeof *grad);
    if (mode >= CT_IMLS_HESSIAN && hess) memset(hess, 0, (size_t)p * (size_t)p * sizeof *hess);
}

/* The evaluation for ct_imls_eval (hess) and ct_imls_eval_factored (fac): in HESSIAN mode the
 * per-sample blocks M_i and the rank-2 pairs are formed once, then kept (fac) or summed (hess). */
static ct_status eval(const ct_imls_params *prm, int k, const double *x, const double *pos, const double *nrm,
                      ct_imls_mode mode, double *work, size_t work_len, ct_imls_result *res, double *grad,
                      double *hess, ct_imls_hfac *fac)
{
    if (ct_imls_params_check(prm) != CT_OK || k < 0 || !res || !x) return CT_EINPUT;
    if (mode < CT_IMLS_VALUE || mode > CT_IMLS_HESSIAN) return CT_EINPUT;
    if (k > 0 && (!pos || !nrm)) return CT_EINPUT;
    if ((mode >= CT_IMLS_GRADIENT && !grad) || (mode >= CT_IMLS_HESSIAN && !hess && !fac)) return CT_EINPUT;
    if (work_len < ct_imls_work_size(prm->dim, k, mode) || (k > 0 && !work)) return CT_EINPUT;

    const int d = prm->dim, p = ct_imls_nvars(d, k), L = 3 * d + 1, d2 = 2 * d;
    const double R2 = prm->R * prm->R;
    memset(res, 0, sizeof *res);
    res->a_min = res->a_max = 1.0;
    clear_outputs(p, mode, grad, hess);
    if (fac) {
        fac->dim = d, fac->k = k, fac->nm = 0;
        fac->loc = NULL;
    }

    /* per-sample cache */
    double *dl = work, *uu = dl + (size_t)k * d, *ph = uu + k, *ss = ph + k, *aa = ss + k;
    double B = 0.0, A = 0.0;
    int nsup = 0;
    for (int i = 0; i < k; ++i) {
        double r2 = 0.0, s = 0.0;
        for (int a = 0; a < d; ++a) {
            const double t = x[a] - pos[i * d + a];
            dl[i * d + a] = t;
            r2 += t * t;
            s += nrm[i * d + a] * t;
        }
        uu[i] = ph[i] = 0.0;
        ss[i] = s;
        if (r2 < R2) {
            const double u = 1.0 - r2 / R2, u2 = u * u;
            ++nsup;
            uu[i] = u;
            ph[i] = u2 * u2;
            B += ph[i];
            A += ph[i] * s;
        }
    }
    res->n_support = nsup;
    res->B = B;
    if (nsup == 0) {
        res->flag = CT_IMLS_NO_SUPPORT;
        return CT_OK;
    }
    if (!(B >= prm->b_min) || !(B > 0.0)) {
        res->flag = CT_IMLS_WEAK;
        return CT_OK;
    }
    const double f0 = A / B;
    double g0[DMAX] = {0.0, 0.0, 0.0};
    for (int i = 0; i < k; ++i) {
        if (ph[i] == 0.0) continue;
        double gphi[DMAX];
        kernel_d12(d, R2, uu[i], dl + i * d, gphi, NULL);
        for (int a = 0; a < d; ++a) g0[a] += ph[i] * nrm[i * d + a] + (ss[i] - f0) * gphi[a];
    }
    for (int a = 0; a < d; ++a) g0[a] /= B;
    res->f0 = f0;
    memcpy(res->g0, g0, (size_t)d * sizeof *g0);

    /* robust iterate */
    const int robust = prm->iters == 1;
    robust_ctx rc = {d, 0.0, 0.0, f0, f0, g0};
    double W = B, f1 = f0;
    if (robust) {
        const double sr = prm->sigma_f * prm->R;
        rc.ir = sr > 0.0 ? 1.0 / (sr * sr) : 0.0;
        rc.in = prm->sigma_n > 0.0 ? 1.0 / (prm->sigma_n * prm->sigma_n) : 0.0;
        double Emin = INFINITY;
        for (int i = 0; i < k; ++i) {
            if (ph[i] == 0.0) continue;
            const double r = f0 - ss[i];
            double e2 = 0.0;
            for (int a = 0; a < d; ++a) {
                const double t = g0[a] - nrm[i * d + a];
                e2 += t * t;
            }
            aa[i] = rc.ir * r * r + rc.in * e2; /* E_i for now */
            if (aa[i] < Emin) Emin = aa[i];
        }
        res->a_min = exp(-Emin), res->a_max = 0.0;
        W = 0.0;
        double Aw = 0.0;
        for (int i = 0; i < k; ++i) {
            if (ph[i] == 0.0) {
                aa[i] = 0.0;
                continue;
            }
            const double araw = exp(-aa[i]);
            if (araw < res->a_min) res->a_min = araw;
            if (araw > res->a_max) res->a_max = araw;
            aa[i] = exp(-(aa[i] - Emin));
            W += ph[i] * aa[i];
            Aw += ph[i] * aa[i] * ss[i];
        }
        if (!(W > 1e-200 * B)) {
            res->flag = CT_IMLS_WEAK;
            return CT_OK;
        }
        f1 = Aw / W;
        rc.f1 = f1;
    }
    res->term = 1;
    res->flag = CT_IMLS_OK;
    res->psi = f1;
    if (mode == CT_IMLS_VALUE) return CT_OK;

    /* ---- gradient: ∇f⁰ (C_0), ∇B, the x-rows of ∇²f⁰ (C_1..C_d), F_z, F_c ---- */
    double *C = aa + k, *dB = C + (size_t)(d + 1) * p, *gf1 = dB + p, *gW = gf1 + p;
    memset(C, 0, (size_t)(d + 4) * p * sizeof *C); /* C, dB, gf1, gW are contiguous */
    double *g0v = C;
    for (int i = 0; i < k; ++i) {
        if (ph[i] == 0.0) continue;
        targets t;
        make_targets(d, k, i, &t);
        double gphi[DMAX], v[2 * DMAX], vb[2 * DMAX];
        kernel_d12(d, R2, uu[i], dl + i * d, gphi, NULL);
        for (int a = 0; a < d; ++a) {
            v[a] = ph[i] * nrm[i * d + a] + (ss[i] - f0) * gphi[a];
            v[d + a] = ph[i] * dl[i * d + a];
            vb[a] = gphi[a], vb[d + a] = 0.0;
        }
        scatter_vec(d, &t, v, 1.0 / B, g0v);
        scatter_vec(d, &t, vb, 1.0, dB);
    }
    if (!robust && mode == CT_IMLS_GRADIENT) {
        memcpy(grad, g0v, (size_t)p * sizeof *grad);
        return CT_OK;
    }
    if (robust) {
        /* x-rows of ∇²f⁰: X_j = (1/B)[Σ (x_j-row of M_i) − ∂_{x_j}B ∇f⁰ − g⁰_j ∇B] */
        for (int i = 0; i < k; ++i) {
            if (ph[i] == 0.0) continue;
            targets t;
            make_targets(d, k, i, &t);
            const double *di = dl + i * d, *ni = nrm + i * d;
            double gphi[DMAX], Hphi[DMAX * DMAX];
            kernel_d12(d, R2, uu[i], di, gphi, Hphi);
            for (int j = 0; j < d; ++j) {
                double row[2 * DMAX];
                for (int b = 0; b < d; ++b) {
                    row[b] = (ss[i] - f0) * Hphi[j * d + b] + gphi[j] * ni[b] + ni[j] * gphi[b];
                    row[d + b] = (j == b ? ph[i] : 0.0) + gphi[j] * di[b];
                }
                scatter_vec(d, &t, row, 1.0 / B, C + (size_t)(1 + j) * p);
            }
        }
        for (int j = 0; j < d; ++j) {
            double *Xj = C + (size_t)(1 + j) * p;
            const double a1 = dB[j] / B, a2 = g0[j] / B;
            for (int c = 0; c < p; ++c) Xj[c] -= a1 * g0v[c] + a2 * dB[c];
        }
    }
    /* F = f¹ in the extended space (z, c): F_z (gf1), F_c (gc); ∇W_z (gW), ∇W_c (gWc) */
    double gc[DMAX + 1] = {0}, gWc[DMAX + 1] = {0};
    if (robust) {
        for (int i = 0; i < k; ++i) {
            if (ph[i] == 0.0) continue;
            targets t;
            make_targets(d, k, i, &t);
            double gphi[DMAX], gs[LMAX], gw[LMAX], v[LMAX];
            kernel_d12(d, R2, uu[i], dl + i * d, gphi, NULL);
            robust_local(&rc, dl + i * d, nrm + i * d, ph[i], ss[i], aa[i], gphi, NULL, gs, gw, NULL);
            const double om = ph[i] * aa[i];
            for (int l = 0; l < L; ++l) v[l] = om * gs[l] + (ss[i] - f1) * gw[l];
            scatter_vec(d, &t, v, 1.0 / W, gf1);
            scatter_vec(d, &t, gw, 1.0, gW);
            for (int m = 0; m <= d; ++m) {
                gc[m] += v[2 * d + m] / W;
                gWc[m] += gw[2 * d + m];
            }
        }
        for (int c = 0; c < p; ++c) {
            double acc = gf1[c];
            for (int m = 0; m <= d; ++m) acc += gc[m] * C[(size_t)m * p + c];
            grad[c] = acc;
        }
    } else {
        memcpy(grad, g0v, (size_t)p * sizeof *grad);
        gc[0] = 1.0; /* F = c₀ */
    }
    if (mode == CT_IMLS_GRADIENT) return CT_OK;

    /* ---- Hessian ---- */
    double *G = gW + p, *Fcz = G + (size_t)(d + 1) * p, *dlB = Fcz + (size_t)(d + 1) * p, *Mloc = dlB + p;
    memset(G, 0, ((size_t)2 * (d + 1) * p + p) * sizeof *G);
    if (fac) memset(Mloc, 0, (size_t)k * d2 * d2 * sizeof *Mloc);
    double Fcc[(DMAX + 1) * (DMAX + 1)] = {0};
    const double lam0 = gc[0], *lam = gc + 1;
    double dlamB = 0.0;
    for (int i = 0; i < k; ++i) {
        if (ph[i] == 0.0) continue;
        double gphi[DMAX];
        kernel_d12(d, R2, uu[i], dl + i * d, gphi, NULL);
        for (int a = 0; a < d; ++a) dlamB += gphi[a] * lam[a];
    }
    const double mu = lam0 - dlamB / B, iW = 1.0 / W, iB0 = 1.0 / B;
    double g0lam = 0.0;
    for (int a = 0; a < d; ++a) g0lam += g0[a] * lam[a];

    for (int i = 0; i < k; ++i) {
        if (ph[i] == 0.0) continue;
        targets t;
        make_targets(d, k, i, &t);
        const double *di = dl + i * d, *ni = nrm + i * d;
        double gphi[DMAX], Hphi[DMAX * DMAX], T[DMAX * DMAX], h[DMAX];
        double m[LMAX * LMAX];
        kernel_d12(d, R2, uu[i], di, gphi, Hphi);
        kernel_d3(d, R2, uu[i], di, lam, T);
        double nlam = 0.0, gplam = 0.0;
        for (int a = 0; a < d; ++a) {
            h[a] = 0.0;
            for (int b = 0; b < d; ++b) h[a] += Hphi[a * d + b] * lam[b];
            nlam += ni[a] * lam[a];
            gplam += gphi[a] * lam[a];
        }
        if (robust) {
            double gs[LMAX], gw[LMAX];
            robust_local(&rc, di, ni, ph[i], ss[i], aa[i], gphi, Hphi, gs, gw, m);
            for (int l = 0; l < L * L; ++l) m[l] *= iW;
        } else {
            memset(m, 0, sizeof m);
        }
        /* + (μ M_i + ∂_λM_i)/B on (δ, n) */
        const double sf = ss[i] - f0;
        for (int a = 0; a < d; ++a)
            for (int b = 0; b < d; ++b) {
                const double K = sf * Hphi[a * d + b] + gphi[a] * ni[b] + ni[a] * gphi[b];
                const double Kl = (nlam - g0lam) * Hphi[a * d + b] + sf * T[a * d + b] + h[a] * ni[b] +
                                  ni[a] * h[b];
                const double Q = (a == b ? ph[i] : 0.0) + gphi[a] * di[b];
                const double Ql = (a == b ? gplam : 0.0) + h[a] * di[b] + gphi[a] * lam[b];
                m[a * L + b] += (mu * K + Kl) * iB0;
                m[a * L + d + b] += (mu * Q + Ql) * iB0;
                m[(d + b) * L + a] += (mu * Q + Ql) * iB0;
            }
        if (hess) scatter_upper(d, p, &t, m, L, hess);
        if (fac)
            for (int a = 0; a < d2; ++a) memcpy(Mloc + ((size_t)i * d2 + a) * d2, m + a * L, (size_t)d2 * sizeof *m);
        if (robust) {
            /* F_cz (row m of the c part against z) and F_cc */
            for (int mm = 0; mm <= d; ++mm) {
                double row[2 * DMAX];
                for (int l = 0; l < 2 * d; ++l) row[l] = m[(2 * d + mm) * L + l];
                scatter_vec(d, &t, row, 1.0, Fcz + (size_t)mm * p);
                for (int m2 = 0; m2 <= d; ++m2) Fcc[mm * (d + 1) + m2] += m[(2 * d + mm) * L + 2 * d + m2];
            }
        }
        double hv[2 * DMAX];
        for (int a = 0; a < d; ++a) hv[a] = h[a], hv[d + a] = 0.0;
        scatter_vec(d, &t, hv, 1.0, dlB);
    }
    /* G = F_cz + ½ F_cc C (after F's own rank-2 part), then the f⁰ rank-2 terms */
    if (robust) {
        for (int mm = 0; mm <= d; ++mm) {
            double *Fm = Fcz + (size_t)mm * p;
            for (int c = 0; c < p; ++c) Fm[c] -= (gWc[mm] * gf1[c] + gc[mm] * gW[c]) * iW;
            for (int m2 = 0; m2 <= d; ++m2) Fcc[mm * (d + 1) + m2] -= (gWc[mm] * gc[m2] + gc[mm] * gWc[m2]) * iW;
        }
        for (int mm = 0; mm <= d; ++mm) {
            double *Gm = G + (size_t)mm * p;
            const double *Fm = Fcz + (size_t)mm * p;
            for (int c = 0; c < p; ++c) {
                double acc = Fm[c];
                for (int m2 = 0; m2 <= d; ++m2) acc += 0.5 * Fcc[mm * (d + 1) + m2] * C[(size_t)m2 * p + c];
                Gm[c] = acc;
            }
        }
    }
    for (int c = 0; c < p; ++c) {
        G[c] -= (dlB[c] + mu * dB[c]) * iB0;
        for (int j = 0; j < d; ++j) G[(size_t)(1 + j) * p + c] -= lam[j] * dB[c] * iB0;
    }
    /* rank-2 updates: Σ_m (G_m C_mᵀ + C_m G_mᵀ) − (∇W_z ∇f¹_zᵀ + ∇f¹_z ∇W_zᵀ)/W */
    const double *Ap[DMAX + 2], *Bp[DMAX + 2];
    int nm = robust ? d + 1 : 1;
    for (int mm = 0; mm < nm; ++mm) Ap[mm] = G + (size_t)mm * p, Bp[mm] = C + (size_t)mm * p;
    if (robust) {
        for (int c = 0; c < p; ++c) gW[c] *= -1.0 / W; /* gW is not needed any more */
        Ap[nm] = gW, Bp[nm] = gf1;
        ++nm;
    }
    if (fac) {
        fac->nm = nm;
        for (int mm = 0; mm < nm; ++mm) fac->a[mm] = Ap[mm], fac->b[mm] = Bp[mm];
        fac->loc = Mloc;
    }
    if (hess) {
        rank2_upper(p, nm, Ap, Bp, hess);
        for (int r = 0; r < p; ++r)
            for (int c = r + 1; c < p; ++c) hess[(size_t)c * p + r] = hess[(size_t)r * p + c];
    }
    return CT_OK;
}

ct_status ct_imls_eval(const ct_imls_params *prm, int k, const double *x, const double *pos,
                       const double *nrm, ct_imls_mode mode, double *work, size_t work_len,
                       ct_imls_result *res, double *grad, double *hess)
{
    return eval(prm, k, x, pos, nrm, mode, work, work_len, res, grad, mode == CT_IMLS_HESSIAN ? hess : NULL, NULL);
}

ct_status ct_imls_eval_factored(const ct_imls_params *prm, int k, const double *x, const double *pos,
                                const double *nrm, double *work, size_t work_len, ct_imls_result *res,
                                double *grad, ct_imls_hfac *fac)
{
    if (!fac) return CT_EINPUT;
    return eval(prm, k, x, pos, nrm, CT_IMLS_HESSIAN, work, work_len, res, grad, NULL, fac);
}

void ct_imls_hfac_expand(const ct_imls_hfac *fac, double *hess)
{
    const int d = fac->dim, k = fac->k, p = ct_imls_nvars(d, k), d2 = 2 * d;
    memset(hess, 0, (size_t)p * (size_t)p * sizeof *hess);
    if (!fac->loc) return; /* no term */
    for (int i = 0; i < k; ++i) {
        targets t;
        make_targets(d, k, i, &t);
        scatter_upper(d, p, &t, fac->loc + (size_t)i * d2 * d2, d2, hess);
    }
    rank2_upper(p, fac->nm, fac->a, fac->b, hess);
    for (int r = 0; r < p; ++r)
        for (int c = r + 1; c < p; ++c) hess[(size_t)c * p + r] = hess[(size_t)r * p + c];
}

ct_status ct_imls_support(const ct_imls_params *prm, int k, const double *x, const double *pos, double *B,
                          double *grad, double *hess)
{
    if (ct_imls_params_check(prm) != CT_OK || k < 0 || !B || !x || (k > 0 && !pos)) return CT_EINPUT;
    const int d = prm->dim;
    const size_t p = (size_t)ct_imls_nvars(d, k);
    const double R2 = prm->R * prm->R;
    if (grad) memset(grad, 0, p * sizeof *grad);
    if (hess) memset(hess, 0, p * p * sizeof *hess);
    double sum = 0.0;
    for (int i = 0; i < k; ++i) {
        double dl[DMAX], r2 = 0.0;
        for (int a = 0; a < d; ++a) {
            dl[a] = x[a] - pos[(size_t)i * d + a];
            r2 += dl[a] * dl[a];
        }
        if (!(r2 < R2)) continue;
        const double u = 1.0 - r2 / R2;
        sum += u * u * u * u;
        if (!grad && !hess) continue;
        double g[DMAX], H[DMAX * DMAX];
        kernel_d12(d, R2, u, dl, g, hess ? H : NULL);
        const size_t xo = 0, po = (size_t)d * (1 + (size_t)i); /* x at 0, p_i after it */
        if (grad)
            for (int a = 0; a < d; ++a) grad[xo + a] += g[a], grad[po + a] -= g[a];
        if (hess)
            for (int a = 0; a < d; ++a)
                for (int b = 0; b < d; ++b) {
                    const double h = H[a * d + b];
                    hess[(xo + a) * p + xo + b] += h;
                    hess[(po + a) * p + po + b] += h;
                    hess[(xo + a) * p + po + b] -= h;
                    hess[(po + a) * p + xo + b] -= h;
                }
    }
    *B = sum;
    return CT_OK;
}
