/* ct_imls.h — the robust IMLS field of one query point (Du et al., "No Free Slide", eq. 6–8, with
 * the robust re-weighting of Öztireli, Guennebaud & Gross 2009), with exact first and second
 * derivatives with respect to every stencil variable.
 *
 * Given k samples with positions p_i and unit normals n_i (outward: ψ > 0 outside) and a query x:
 *
 *   δ_i = x − p_i,  s_i = n_iᵀ δ_i,  φ_i = (1 − |δ_i|²/R²)⁴ for |δ_i| < R, else 0      (C³ at r = R)
 *   f⁰  = Σ φ_i s_i / Σ φ_i                         (plain IMLS, B = Σ φ_i)
 *   g⁰  = ∇ₓ f⁰                                     (exact, unnormalised)
 *   a_i = exp(−(f⁰ − s_i)²/σ_r² − |g⁰ − n_i|²/σ_n²),  σ_r = σ_f·R
 *   f¹  = Σ φ_i a_i s_i / Σ φ_i a_i                 (one robust iteration, W = Σ φ_i a_i)
 *
 * ψ = f⁰ (iters = 0) or f¹ (iters = 1, the default). σ_f = 0 (or σ_n = 0) switches the residual
 * (normal) weight off. A common factor of every a_i cancels in f¹; the evaluation scales the a_i
 * by exp(min_i E_i) (E_i the exponent) so that the largest is 1 and W cannot underflow.
 *
 * Stencil variables z = (x, p_1..p_k, n_1..n_k), p = dim·(1 + 2k) entries, each point's
 * components contiguous: x at 0, p_i at dim·(1 + i), n_i at dim·(1 + k + i). The normals are
 * inputs: their dependence on the mesh (one-rings) is the caller's chain rule. Samples with
 * |δ_i| ≥ R (and samples whose φ underflows to 0) contribute nothing; their gradient entries and
 * Hessian rows are 0, so a caller may pass a superset of the support (e.g. a cached list).
 *
 * No term (res.term = 0, value/gradient/Hessian set to 0): no sample within R
 * (CT_IMLS_NO_SUPPORT), or B = Σ φ_i < b_min (CT_IMLS_WEAK; default b_min = 1e-12: a lone sample
 * beyond 0.9995 R — dividing by such a B would give gradients ~ 8 B^(−1/4)/R ≥ 8e3/R), or the
 * robust weight sum W ≤ 1e-200·B (CT_IMLS_WEAK; not reachable in practice after the scaling).
 *
 * Derivatives: the weighted-average operator gives ∇f, ∇²f of f⁰ and of f¹ (in the extended
 * space (z, c), c = (f⁰, g⁰)); the Hessian of f¹ needs third derivatives of f⁰ with one query
 * index, used only along the direction λ = ∂f¹/∂g⁰ (one directional slice, not dim of them).
 * Per-sample blocks live on (δ_i, n_i, c); x and p_i enter through δ_i only, so each block is
 * scattered with signs (+ on x, − on p_i); the global couplings are symmetric rank-2 updates.
 * See core/contact/imls.c for the formulas (design note §2.3–2.5).
 *
 * Memory: no allocation. The caller passes work memory of ct_imls_work_size(dim, k, mode)
 * doubles; the gradient (p) and the Hessian (p², row-major, exactly symmetric) are outputs.
 * layer: contact */
#ifndef CT_IMLS_H
#define CT_IMLS_H

#include "ct_status.h"

#include <stddef.h>

typedef struct ct_imls_params {
    int dim;        /* 2 or 3 */
    double R;       /* kernel support radius (length), > 0 */
    double sigma_f; /* residual weight scale relative to R: σ_r = sigma_f·R (0.5); 0 = off */
    double sigma_n; /* normal weight scale (dimensionless, 1.0); 0 = off */
    int iters;      /* robust iterations: 0 (plain IMLS f⁰) or 1 (f¹, default) */
    double b_min;   /* no term when Σ φ_i < b_min (1e-12) */
} ct_imls_params;

/* The defaults above for dimension dim and radius R. */
void ct_imls_params_default(ct_imls_params *p, int dim, double R);

/* CT_EINPUT for dim ∉ {2, 3}, R not finite > 0, σ's negative or not finite, iters ∉ {0, 1},
 * b_min < 0. */
ct_status ct_imls_params_check(const ct_imls_params *p);

typedef enum {
    CT_IMLS_VALUE = 0,    /* ψ only (and f⁰, g⁰) */
    CT_IMLS_GRADIENT = 1, /* ψ and ∇_z ψ */
    CT_IMLS_HESSIAN = 2   /* ψ, ∇_z ψ and ∇²_z ψ */
} ct_imls_mode;

typedef enum {
    CT_IMLS_OK = 0,         /* term defined */
    CT_IMLS_NO_SUPPORT = 1, /* no sample with |x − p_i| < R */
    CT_IMLS_WEAK = 2        /* samples in support but Σ φ_i < b_min (or W degenerate) */
} ct_imls_flag;

typedef struct ct_imls_result {
    int term;          /* 1 if ψ is defined (flag == CT_IMLS_OK) */
    ct_imls_flag flag;
    int n_support;     /* samples with |x − p_i| < R */
    double psi;        /* ψ (f⁰ or f¹) */
    double f0;         /* plain IMLS value */
    double g0[3];      /* ∇ₓ f⁰ (dim entries) */
    double B;          /* Σ φ_i */
    double a_min, a_max; /* robust weights exp(−E_i) over the support (1 if iters = 0) */
} ct_imls_result;

/* Stencil size p = dim·(1 + 2k). */
int ct_imls_nvars(int dim, int k);

/* Doubles of work memory ct_imls_eval needs for k samples in the given mode. */
size_t ct_imls_work_size(int dim, int k, ct_imls_mode mode);

/* Evaluate ψ at x (dim) from k ≥ 0 samples pos (k·dim) with unit normals nrm (k·dim).
 * grad (p doubles) is written for mode ≥ GRADIENT, hess (p² doubles) for mode = HESSIAN (both
 * may be NULL when not asked). work: work_len ≥ ct_imls_work_size(dim, k, mode) doubles.
 * Returns CT_EINPUT for bad parameters, k < 0, too little work memory or a missing output;
 * otherwise CT_OK with res->term telling whether there is a term. Thread-safe (no state). */
ct_status ct_imls_eval(const ct_imls_params *prm, int k, const double *x, const double *pos,
                       const double *nrm, ct_imls_mode mode, double *work, size_t work_len,
                       ct_imls_result *res, double *grad, double *hess);

/* ∇²_z ψ in factored form: Σ_i S_iᵀ M_i S_i + Σ_m (a_m b_mᵀ + b_m a_mᵀ), where S_i z = (δ_i, n_i) =
 * (x − p_i, n_i) picks sample i's local variables (2·dim of them) and M_i is a symmetric (2·dim)² block
 * (zero for a sample outside the support); nm ≤ dim + 2 pairs of p-vectors. The per-sample blocks and
 * the global rank-2 couplings are how the Hessian is formed (see the derivatives note above); a caller
 * that maps z to other variables (the stencil positions through the vertex normals) can map the
 * factors instead of the dense p² matrix. The pointers point into the work memory of the call. */
enum { CT_IMLS_MAX_PAIRS = 5 };
typedef struct ct_imls_hfac {
    int dim, k, nm;
    const double *a[CT_IMLS_MAX_PAIRS], *b[CT_IMLS_MAX_PAIRS]; /* nm pairs of p-vectors */
    const double *loc; /* k blocks (2·dim)², row-major over (δ_i, n_i); NULL when there is no term */
} ct_imls_hfac;

/* ct_imls_eval in HESSIAN mode with ∇²_z ψ returned factored (fac, valid while work is) instead of
 * dense. The same arguments and errors; work_len ≥ ct_imls_work_size(dim, k, CT_IMLS_HESSIAN). */
ct_status ct_imls_eval_factored(const ct_imls_params *prm, int k, const double *x, const double *pos,
                                const double *nrm, double *work, size_t work_len, ct_imls_result *res,
                                double *grad, ct_imls_hfac *fac);

/* The dense ∇²_z ψ (p², row-major, exactly symmetric) from its factors: what ct_imls_eval writes, to
 * the last bit. */
void ct_imls_hfac_expand(const ct_imls_hfac *fac, double *hess);

/* The kernel sum B = Σ_i φ(|x − p_i|) of the same k samples (the field's support strength: 0 outside
 * every sample's support, ≥ 1 on a sample) and, when grad (p doubles) / hess (p², row-major) are given,
 * its derivatives over the same stencil variables z (zero on the normal slots). No work memory.
 * CT_EINPUT for bad parameters, k < 0 or a missing B. */
ct_status ct_imls_support(const ct_imls_params *prm, int k, const double *x, const double *pos, double *B,
                          double *grad, double *hess);

#endif
