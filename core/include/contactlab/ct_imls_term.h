/* ct_imls_term.h — one IMLS contact term E_t = w_q κ b(ψ_j(x_q)) over its vertex stencil: the
 * query vertex q of body i in the robust IMLS field ψ_j of body j (ct_imls.h) whose sample normals
 * are vertex normals of body j's surface (ct_vertex_normals.h), with the IPC barrier b(·; d̂)
 * (ct_barrier.h), its exact gradient and a dense Hessian block over the stencil in one of three
 * modes (issue 17 item 2; design note imls_design.md §1.5, §2.7, §2.10).
 *
 * States (the contract the model's energy and line search rely on):
 *   OFF         no sample within R (ψ undefined, ct_imls NO_SUPPORT), a weak support (ct_imls WEAK),
 *               or ψ ≥ d̂ (ψ ≥ max(d̂, extra_reach) with an extra law): E_t = 0, no stencil (res.n =
 *               0), gradient/Hessian not written. b is C² at d̂ (b = b' = b'' = 0), so dropping the
 *               term there is smooth;
 *   ACTIVE      0 < ψ < d̂ (or the extra law's reach): E_t = w κ b(ψ) (+ w a(ψ)), stencil, gradient,
 *               Hessian as asked;
 *   INFEASIBLE  ψ ≤ 0 (the query is on or inside the IMLS surface of j): E_t = +∞ (the same
 *               convention as ct_barrier), no stencil, nothing else written. The return status is
 *               still CT_OK: an infeasible trial point is a value, not an error; a line search
 *               that sums +∞ into the energy rejects it, and max_step should keep it from being
 *               proposed (issue 17 item 3).
 *
 * Stencil: ct_vnormal_stencil(t, q, k, samples) — q first (slot 0), then the samples, then their
 * one-rings, deduplicated; n vertices, N = n·dim coordinates (vertex u, component a at u·dim + a).
 * Gradient: ∇E = w κ b'(ψ) ∇ψ (N entries), with ∇ψ = ct_vnormal_chain of ct_imls's ∇_z ψ.
 * Translation invariance: Σ over the stencil vertices of the gradient blocks is 0 (to round-off).
 *
 * Hessian modes (N×N, row-major = column-major: exactly symmetric):
 *   EXACT    H = w κ [b''(ψ) ∇ψ∇ψᵀ + b'(ψ) ∇²ψ], ∇²ψ over the stencil positions (ct_imls Hessian
 *            through ct_vnormal_chain, the normals' second derivatives included). Indefinite in
 *            general (b' < 0 times the curvature of ψ).
 *   With an extra law a, b' and b'' above read κb' + a' and κb'' + a'' (c1, c2 of the result); GN then
 *   clips the rank-1 coefficient at 0 (a'' < 0 on adhesion's softening branch) to stay PSD.
 *   With the fade (prm.fade = β > 0 and B < β), E = χ(B) G(ψ): EXACT adds χ' c1 (∇B∇ψᵀ + ∇ψ∇Bᵀ) +
 *   χ'' G ∇B∇Bᵀ + χ' G ∇²B (∇B through ct_imls_support and the chain); GN takes the PSD part of the 2×2
 *   form on span{∇ψ, ∇B} and the query block of χ c1 ∇²ψ + χ' G ∇²B.
 *   GN       H = w κ b''(ψ) ∇ψ∇ψᵀ + E₀ [w κ b'(ψ) ∇²ₓₓψ]⁺ E₀ᵀ: the Gauss–Newton rank-1 part over
 *            the whole stencil plus the query's own dim×dim block of the curvature part, projected
 *            (cyclic Jacobi, ct_psd_jacobi_eig), placed on slot 0 (E₀ = the slot-0 injection);
 *            every other block of b'∇²ψ (the sample/normal couplings) is dropped. ∇²ₓₓψ is the
 *            block of ct_imls's ∇²_z ψ on the query point x (it equals the stencil's (q, q) block
 *            when q is neither a sample nor in a sample's ring, i.e. without self-contact).
 *            Why a reasonable Newton matrix: it is PSD (b'' > 0 on (0, d̂), a projected block);
 *            the barrier's curvature along ψ is exact — for a direction v vanishing on the query
 *            block, H_GN v = w κ b''(ψ) (∇ψᵀv) ∇ψ, the exact Hessian's rank-1 part (the term the
 *            IPC models keep, and the only one that grows like d̂/ψ² as ψ → 0: the dropped part is
 *            O(ψ ‖∇²ψ‖/‖∇ψ‖²) relative to it, b' ≈ −d̂/ψ, b'' ≈ d̂/ψ²); the kept query block carries the
 *            curvature a query feels in a concave pocket ([·]⁺ keeps b'∇²ₓₓψ's positive part, where
 *            ψ is concave in x). On a flat sampled plane ∇²ₓₓψ = 0 and H_GN's query block is the
 *            exact one.
 *   PROJECT  the EXACT H projected on the PSD cone as a whole (ct_psd_project_ws: LAPACK dsyevd on
 *            the N×N block, no allocation): the literal "PSD projection of the term Hessian";
 *            O(N³) — 0.4–0.6 ms at N = 63 (k = 7) and 0.9–1.3 ms at N = 102 (k = 15) in 3D (measured
 *            in check_imls_term, one thread), 8–12× the EXACT Hessian: an option for 2D (N ≤ 24)
 *            and tests, not the 3D default.
 *
 * Cost: VALUE = k normals + ct_imls value; GRADIENT adds ct_imls's gradient and the chain's
 * gradient; Hessian: EXACT/PROJECT ct_imls's Hessian and the chain's Hessian (dominant, O(p N²);
 * 3D ≈ 50 µs at k = 7, ≈ 150 µs at k = 15); GN ct_imls's Hessian (for ∇²ₓₓψ; a query-block-only
 * ct_imls mode would make it cheaper) and the chain's gradient only, plus the N² outer product
 * (≈ 24 µs at k = 7, ≈ 65 µs at k = 15). An inactive term costs the normals and one
 * ct_imls value whatever is asked (the derivatives are computed only for ACTIVE terms).
 *
 * Memory: no allocation. Outputs sized by the caller for at most cap stencil vertices: verts (cap),
 * grad (cap·dim), hess ((cap·dim)²; the N×N result is written compactly at the start);
 * ct_imls_term_stencil_cap(t, k) = 1 + k·max_ring bounds every n. Work memory:
 * ct_imls_term_work_size(t, k, cap, what, mode) doubles (sizes for any n ≤ cap).
 * Thread-safe (no state); self-contact is the caller's choice (q may be a sample or in a ring:
 * the chain handles it; GN's query block is then still ∇²ₓₓψ).
 * layer: contact */
#ifndef CT_IMLS_TERM_H
#define CT_IMLS_TERM_H

#include "ct_imls.h"
#include "ct_status.h"
#include "ct_vertex_normals.h"

#include <stddef.h>

typedef enum {
    CT_IMLS_HESS_EXACT = 0,  /* w κ (b'' ∇ψ∇ψᵀ + b' ∇²ψ) */
    CT_IMLS_HESS_GN = 1,     /* w κ b'' ∇ψ∇ψᵀ + [w κ b' ∇²ₓₓψ]⁺ on the query block */
    CT_IMLS_HESS_PROJECT = 2 /* [EXACT]⁺, dense dsyevd */
} ct_imls_hess_mode;

/* An optional second law of ψ added to the barrier: E_t = w (κ b(ψ) + a(ψ)) (Fang et al.'s normal
 * adhesion, ct_adhesion.h, for "sticky IMLS"). a(ctx, ψ, &a', &a'') with a = a' = a'' = 0 for
 * ψ ≥ reach; a'' may be negative (the softening branch). */
typedef double (*ct_imls_law_fn)(const void *ctx, double psi, double *d1, double *d2);

typedef struct ct_imls_term_params {
    ct_imls_params field;   /* dim, R, σ_f, σ_n, iters, b_min (ct_imls_params_default) */
    double dhat;            /* barrier threshold d̂ (length), finite > 0 */
    double kappa;           /* barrier stiffness κ (pressure), finite ≥ 0 */
    ct_imls_hess_mode hess; /* Hessian mode */
    ct_imls_law_fn extra;   /* NULL (the default): the barrier alone */
    const void *extra_ctx;
    double extra_reach;     /* the law's reach (length, finite ≥ 0): a term is OFF for ψ ≥ max(d̂, reach) */
    const ct_vnormal_cache *normals; /* optional: the samples' normals (and their derivatives, for the chain)
                               cached at the same x (ct_vertex_normals.h); NULL: computed per term */
    double fade;            /* β ≥ 0: a term whose kernel sum B = Σ φ_i is below β is multiplied by χ(B/β),
                               χ(u) = u³(10 − 15u + 6u²) (C², 1 from u = 1 on), so it vanishes smoothly as the
                               query leaves the field's support instead of jumping to 0 (0, the default: no
                               fade, the term jumps where B reaches b_min) */
} ct_imls_term_params;

typedef enum {
    CT_IMLS_TERM_OFF = 0,       /* no support / weak / ψ ≥ d̂: E = 0, n = 0 */
    CT_IMLS_TERM_ACTIVE = 1,    /* 0 < ψ < d̂ */
    CT_IMLS_TERM_INFEASIBLE = 2 /* ψ ≤ 0: E = +∞ */
} ct_imls_term_state;

typedef struct ct_imls_term_result {
    ct_imls_term_state state;
    ct_imls_result field; /* ct_imls's result (ψ, flag, n_support, B, robust weights) */
    double psi;           /* ψ (0 when the field has no term) */
    double energy;        /* w κ b(ψ) (+ w a(ψ)): 0 (OFF), +INFINITY (INFEASIBLE) */
    double c1, c2;        /* w κ b'(ψ), w κ b''(ψ) (+ w a', w a''; 0 unless ACTIVE): ∇E = c1 ∇ψ (unfaded) */
    double chi;           /* the fade χ (1 unless B < β): E = χ G, ∇E = χ c1 ∇ψ + χ' G ∇B (G = E/χ) */
    int n;                /* stencil vertices in verts (ACTIVE with what ≥ GRADIENT; else 0) */
} ct_imls_term_result;

/* Defaults: ct_imls_params_default(dim, R), d̂ = dhat, κ = kappa, mode EXACT, no extra law. */
void ct_imls_term_params_default(ct_imls_term_params *p, int dim, double R, double dhat, double kappa);

/* CT_EINPUT for bad field parameters, d̂ not finite > 0, κ not finite ≥ 0, an unknown mode, an extra
 * reach not finite ≥ 0. */
ct_status ct_imls_term_params_check(const ct_imls_term_params *p);

/* An upper bound of the stencil size for k samples: 1 + k·t->max_ring. */
int ct_imls_term_stencil_cap(const ct_vnormal_topo *t, int k);

/* Doubles of work memory for ct_imls_term_eval with k samples, stencils up to cap vertices, the
 * derivatives asked (what) and the Hessian mode (ignored below CT_IMLS_HESSIAN). */
size_t ct_imls_term_work_size(const ct_vnormal_topo *t, int k, int cap, ct_imls_mode what,
                              ct_imls_hess_mode mode);

/* The term of query vertex q (position x + q·dim, weight wq ≥ 0: its area share) in the field of
 * k samples (vertex indices into x, a superset of the support is fine) with the vertex normals of
 * topology t (positions x, t->nv·dim; q is an index of the same numbering). what: VALUE (energy),
 * GRADIENT (+ stencil and grad), HESSIAN (+ hess in prm->hess's mode).
 * Returns CT_EINPUT for bad arguments (parameters, indices, missing outputs, too little work
 * memory, t->dim ≠ the field's dim) and when the stencil has more than cap vertices (res->n is then
 * the size needed, nothing else written); CT_EINVERTED if a sample's vertex normal is degenerate;
 * CT_ELIB if the PROJECT mode's LAPACK call fails; otherwise CT_OK with res->state (see the top). */
ct_status ct_imls_term_eval(const ct_imls_term_params *prm, const ct_vnormal_topo *t, const double *x,
                            int q, double wq, int k, const int *samples, ct_imls_mode what, double *work,
                            size_t work_len, ct_imls_term_result *res, int *verts, int cap, double *grad,
                            double *hess);

#endif
