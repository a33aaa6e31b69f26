/* ct_vertex_normals.h — unit vertex normals of a contact surface from their one-rings at the
 * current positions, their exact first and second derivatives, and the chain rule that takes the
 * IMLS field's derivatives over z = (x, p_1..p_k, n_1..n_k) (ct_imls.h) to vertex positions
 * (issue 17; design note imls_design.md §1.1, §2.6).
 *
 * Normals (cells in the orientation ct_surface stores: 3D faces counter-clockwise seen from
 * outside, 2D segments (a, b) with outward normal (b − a) rotated by −90°):
 *   3D  N_v = ½ Σ_{faces (v, b, c) ∋ v} (x_b − x_v) × (x_c − x_v)   (area-weighted face normals)
 *   2D  N_v = Σ_{segments (a, b) ∋ v} J (x_b − x_a),  J = [[0, 1], [−1, 0]]  (length-weighted)
 *   n_v = N_v / ‖N_v‖.
 * The per-cell form is used as is: no closure of the fan is assumed, so a vertex on the border of
 * an open surface (open fan) or at the end of an open polyline (one segment) gets the normal of
 * its incident cells, and the derivative with respect to x_v is generally non-zero there (for a
 * closed fan / an interior polyline vertex it is zero up to round-off).
 *
 * The one-ring of v: v itself (slot 0) and the other vertices of its incident cells, in the order
 * first met over the cells (cells in input order). m = its size. Derivatives are over the ring's
 * positions, each vertex's dim components contiguous (slot j, component a at j·dim + a).
 *
 * Derivatives (ρ = ‖N‖, P = I − nnᵀ):
 *   ∂n/∂X = (P/ρ) ∂N/∂X;  3D per face: ∂N/∂x_b += −½[q]ₓ, ∂N/∂x_c += ½[p]ₓ, ∂N/∂x_v += ½[x_c − x_b]ₓ
 *   (p = x_b − x_v, q = x_c − x_v); 2D per segment: ∂N/∂x_b += J, ∂N/∂x_a −= J.
 *   ∇²_X (aᵀn) = (∂N/∂X)ᵀ M (∂N/∂X) + Σ_m c_m ∇²N_m,  c = Pa/ρ,
 *   M = ∂²(aᵀn)/∂N² = −(1/ρ²)[n (Pa)ᵀ + (Pa) nᵀ + (aᵀn) P];  3D: cᵀN is bilinear per face with the
 *   constant block B = −½[c]ₓ on (b, c) (Bᵀ on (c, b), −B on (b, v) and (v, c), −Bᵀ on (c, v) and
 *   (v, b)); 2D: N is linear, no such term.
 *
 * Degenerate normal: ‖N‖ ≤ 1e-12 · Σ_cells |cell normal| (a fan that cancels, or zero-area cells,
 * or a vertex without cells): CT_EINVERTED, n set to 0 (and the derivatives not written).
 *
 * Chain (ct_vnormal_chain): for a query vertex q and samples s_1..s_k (vertex indices, the normals
 * n_i = n_{s_i} computed from x), with g_z = ∇_z ψ and H_z = ∇²_z ψ from ct_imls_eval:
 *   g_X = Jᵀ g_z,   H_X = Jᵀ H_z J + Σ_i ∇²_X(μ_iᵀ n_{s_i}),  μ_i = g_z on the n_i slot,
 * J = ∂z/∂X: identity from x_q to x, from x_{s_i} to p_i, ∂n_{s_i}/∂X from the one-ring of s_i to
 * n_i. Over the stencil {q} ∪ {s_i} ∪ one-rings(s_i), deduplicated (a vertex may be q, a sample
 * and in rings at the same time; each role adds its part). The stencil list is q first, then the
 * samples in their order, then the ring vertices in first-met order (ct_vnormal_stencil).
 * Outputs are dense over the stencil: g_X (n·dim) and H_X ((n·dim)², row-major, exactly
 * symmetric), for the model to scatter into triplets.
 *
 * Memory: the topology (ct_vnormal_topo) is built once (allocates); evaluation and the chain do
 * not allocate: caller outputs and work memory of ct_vnormal_chain_work_size doubles.
 * layer: contact */
#ifndef CT_VERTEX_NORMALS_H
#define CT_VERTEX_NORMALS_H

#include "ct_mesh.h"
#include "ct_status.h"

#include <stddef.h>

/* Per-vertex one-rings and incident cells (CSR over all nv vertices; a vertex without cells has
 * the ring {v} and no cells). */
typedef struct ct_vnormal_topo {
    int dim, nv;
    int *ring_ptr; /* nv + 1 */
    int *ring;     /* per vertex: v, then the other vertices of its cells (first met order) */
    int *cell_ptr; /* nv + 1 */
    int *cell;     /* per vertex and incident cell, two ring slots: 3D (b, c) of the face
                      (v, b, c) in its stored cyclic order; 2D (a, b) of the segment (a, b) */
    int max_ring;  /* largest m */
} ct_vnormal_topo;

/* Build from ncell cells (3D: triangles, 3 indices each; 2D: segments, 2 each) over nv vertices,
 * in the ct_surface orientation. CT_EINPUT for dim ∉ {2, 3}, an index out of range or a cell with
 * a repeated vertex; CT_ENOMEM. */
ct_status ct_vnormal_topo_init(ct_vnormal_topo *t, int dim, int nv, int ncell, const int *cells);
/* The same from a contact surface (s->faces in 3D, s->edges in 2D). */
ct_status ct_vnormal_topo_from_surface(ct_vnormal_topo *t, const ct_surface *s);
void ct_vnormal_topo_free(ct_vnormal_topo *t);

/* The one-ring of v: returns a pointer to its m vertices (v first) and sets *m. */
const int *ct_vnormal_ring(const ct_vnormal_topo *t, int v, int *m);

/* Unit normal n (dim) of vertex v at positions x (nv·dim). Optional outputs:
 * dn (dim × m·dim, row-major): ∂n/∂(ring positions);
 * with a (dim) and hess ((m·dim)², row-major, symmetric): ∇² over the ring positions of aᵀn
 * (needs dn as well; a and hess both NULL or both given).
 * CT_EINPUT for a bad v or inconsistent optional arguments, CT_EINVERTED for a degenerate normal
 * (see the top). */
ct_status ct_vnormal_eval(const ct_vnormal_topo *t, const double *x, int v, double *n, double *dn,
                          const double *a, double *hess);

/* Unit normals of every vertex with cells into nrm (nv·dim; 0 for vertices without cells and for
 * degenerate ones). Returns the number of degenerate vertices with cells (0 normally). */
int ct_vnormal_all(const ct_vnormal_topo *t, const double *x, double *nrm);

/* The stencil of a query vertex q and k samples: writes the deduplicated list to verts when its
 * size n ≤ cap and returns n (so a call with cap 0 sizes it; n ≤ 1 + k·max_ring always).
 * Returns −1 for a bad vertex index or k < 0. */
int ct_vnormal_stencil(const ct_vnormal_topo *t, int q, int k, const int *samples, int *verts, int cap);

/* A cache of vertex normals and their derivatives at one set of positions, filled once for the
 * vertices many chains share (an IMLS sample belongs to ~10 terms): level 0 the unit normal, 1 also
 * ∂n/∂(ring positions) (the layout of ct_vnormal_eval's dn), 2 also the Jacobian dN of the raw normal
 * N (the area- / length-weighted sum, n = N/ρ, ρ = |N|) and ρ, from which the second derivatives of n
 * along any a follow in a d×d core (ct_vnormal_cache_quad) instead of d dense (m·d)² Hessians. */
typedef struct ct_vnormal_cache {
    int dim, nv, stride;  /* stride: max_ring·dim */
    int level;            /* of the filled entries; −1: empty */
    int n, cap;           /* entries */
    int *slot;            /* nv: a vertex's entry, −1 if not filled */
    int *vert;            /* cap: the vertex of each entry */
    double *nrm;          /* cap·dim */
    double *dn;           /* cap·dim·stride (level ≥ 1) */
    double *dNr;          /* cap·dim·stride: dN, the layout of dn (level 2) */
    double *rho;          /* cap: ρ = |N| (level 2) */
} ct_vnormal_cache;

void ct_vnormal_cache_init(ct_vnormal_cache *c);
void ct_vnormal_cache_free(ct_vnormal_cache *c);
/* Empty the cache (keeps its memory). */
void ct_vnormal_cache_clear(ct_vnormal_cache *c);
/* Fill the entries of the nv vertices verts (duplicates and vertices already filled at this level are
 * skipped) at positions x to `level`; entries of an earlier fill at a lower level are raised. The caller
 * clears the cache when x changes. CT_EINVERTED for a degenerate normal, CT_ENOMEM, CT_EINPUT. threads:
 * ct_parallel.h's rule. */
ct_status ct_vnormal_cache_fill(ct_vnormal_cache *c, const ct_vnormal_topo *t, const double *x, int nverts,
                                const int *verts, int level, int threads);
/* The cached normal of v (NULL if v is not filled). */
const double *ct_vnormal_cache_normal(const ct_vnormal_cache *c, int v);

/* For a vertex v held at level 2, a symmetric d×d A and a d-vector a: the d×d core K and the vector cf
 * with which, over v's ring (m·d coordinates),
 *   dnᵀ A dn + ∇²(aᵀn) = dNᵀ K dN + F(cf),   K = P A P/ρ² − (n (Pa)ᵀ + (Pa) nᵀ + (aᵀn) P)/ρ²,
 * P = I − n nᵀ, cf = P a/ρ; F: in 3D, per incident face (v, b, c) with the matrix B(cf) =
 * ½[[0, cf₂, −cf₁], [−cf₂, 0, cf₀], [cf₁, −cf₀, 0]], the ring blocks (b, c) += B, (b, v) −= B, (v, c) −= B
 * and their transposes; none in 2D (N is linear there). Also *dN (d × m·d, row stride m·d) and, when
 * Pr is given, P/ρ (d×d), with which dn = (P/ρ) dN. CT_EINPUT if v is not held at level 2. */
ct_status ct_vnormal_cache_quad(const ct_vnormal_cache *c, int v, const double *A, const double *a, double *K,
                                double *cf, double *Pr, const double **dN);

/* Doubles of work memory for ct_vnormal_chain with k samples over a stencil of n vertices. */
size_t ct_vnormal_chain_work_size(const ct_vnormal_topo *t, int k, int n);

/* g_X (n·dim) and, when Hz and HX are given, H_X ((n·dim)², row-major) of ψ with respect to the
 * positions of the stencil verts (n vertices, from ct_vnormal_stencil for the same q and samples),
 * from gz (p = dim(1 + 2k)) and Hz (p², row-major) over z = (x_q, p_i = x_{s_i}, n_i = n_{s_i}).
 * The normals and their derivatives are recomputed from x (the same values ct_vnormal_eval gives).
 * CT_EINPUT for bad arguments (a stencil missing a vertex, too little work memory),
 * CT_EINVERTED if a sample's normal is degenerate (outputs then undefined). */
ct_status ct_vnormal_chain(const ct_vnormal_topo *t, const double *x, int q, int k, const int *samples,
                           int n, const int *verts, const double *gz, const double *Hz, double *work,
                           size_t work_len, double *gX, double *HX);
/* The same with the samples' normals and Jacobians taken from cache where it holds them (level ≥ 1, filled
 * at the same x) when only g_X is asked; with H_X everything is computed from x, as ct_vnormal_chain.
 * cache may be NULL. The results equal ct_vnormal_chain's. */
ct_status ct_vnormal_chain_cached(const ct_vnormal_topo *t, const ct_vnormal_cache *cache, const double *x, int q,
                                  int k, const int *samples, int n, const int *verts, const double *gz,
                                  const double *Hz, double *work, size_t work_len, double *gX, double *HX);

#endif
