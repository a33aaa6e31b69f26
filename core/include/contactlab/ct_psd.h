/* ct_psd.h — symmetric eigenproblems of small dense matrices and their projection onto the cone
 * of positive semi-definite matrices, A⁺ = Σ_{λ>0} λ z zᵀ (the nearest PSD matrix in the
 * Frobenius norm), as Newton's method needs for the per-element and per-contact Hessian blocks.
 *
 * Three solvers, each where it pays off:
 *   ct_psd_jacobi_eig     cyclic Jacobi, n ≤ 3: eigenpairs of the 2×2 / 3×3 matrices of the
 *                         deformation-gradient SVD and of the analytic elastic eigensystems
 *                         (core/base/dense.c, core/fem/material.c);
 *   ct_psd_project        LAPACKE dsyevd, any n: the reference projection (elastic blocks without
 *                         an analytic eigensystem, half-space contact terms, the fallback of the
 *                         staged projector);
 *   ct_psd_begin / ct_psd_ql / ct_psd_end
 *                         n ≤ 9, staged: Householder tridiagonalisation and an implicit QL
 *                         iteration that forms only the eigenvectors of the smaller side of the
 *                         spectrum (the contact-term Hessians, core/contact/collisions_hessian.c).
 *                         The stages let the QL iterations of up to four matrices run interleaved
 *                         (each rotation waits on a square root and a division of the one before:
 *                         one matrix keeps the core mostly idle, four overlap), with results that
 *                         do not depend on the grouping. ct_psd_project_small runs the stages for
 *                         one matrix.
 * Matrices are column-major, A[i + n·j] = A_ij, like everywhere in contactlab; only the lower
 * triangle of the input is read, and the projections write both triangles (exactly symmetric).
 * layer: base */
#ifndef CT_PSD_H
#define CT_PSD_H

#include "ct_status.h"

#include <stddef.h>

/* Symmetric eigendecomposition A = V diag(lam) Vᵀ by cyclic Jacobi rotations, n = 2 or 3 (only
 * the lower triangle of A is read). Eigenvalues in no particular order, V orthonormal. An a_pq
 * below ε √|a_pp a_qq| is dropped instead of rotated, which keeps the small eigenvalues of a PSD
 * matrix accurate to high relative precision (Demmel & Veselić, "Jacobi's method is more
 * accurate than QR", SIAM J. Matrix Anal. Appl. 13, 1992); a 3×3 converges in three or four
 * sweeps. */
void ct_psd_jacobi_eig(int n, const double *A, double *lam, double *V);

/* Project the symmetric n×n matrix A (in place) onto the PSD cone by clamping negative
 * eigenvalues to zero (LAPACKE dsyevd; a PSD A is kept as it is, made symmetric from its lower
 * triangle). CT_ELIB if an entry is not finite or LAPACK fails, CT_EINPUT if n < 0. */
ct_status ct_psd_project(double *A, int n);

/* The same projection without allocation (ct_psd_project's LAPACKE driver and its n > 16 copy
 * allocate): caller work memory of ct_psd_project_ws_size(n) doubles (the dsyevd work arrays,
 * the integer one carved from it; ≈ 3n² + 12n). The reconstruction forms the smaller side of
 * the spectrum: A⁺ = A − Σ_{λ<0} λ v vᵀ if there are no more negative than positive eigenvalues,
 * else Σ_{λ>0} λ v vᵀ (equal up to round-off). CT_EINPUT for n < 0 or too little work memory,
 * CT_ELIB as ct_psd_project. Used for the dense IMLS term blocks (ct_imls_term.h). */
size_t ct_psd_project_ws_size(int n);
ct_status ct_psd_project_ws(double *A, int n, double *work, size_t work_len);

/* ---- staged projection of an r×r matrix, r ≤ 9 ----
 *
 * 1. ct_psd_begin. M (scaled by a power of 2 if its entries are far from 1 in magnitude; the
 *    projection is positively homogeneous) is reduced to tridiagonal form T = Pᵀ M P by
 *    Householder reflections P = P_0⋯P_{r−3} (kept as vectors; P is not formed; Golub & Van Loan,
 *    Matrix Computations, 4th ed., §8.3.1, the LAPACK dsytd2 scheme). The inertia of T (Sturm
 *    sequence, §8.4.1) tells first whether M has an eigenvalue below the round-off band r·ε·‖T‖;
 *    if not, M is kept as it is (state CT_PSD_KEEP).
 * 2. ct_psd_ql. The eigenvalues of T by the implicit QL iteration with Wilkinson shifts (§8.3;
 *    the EISPACK tred2/tql2 scheme of Wilkinson & Reinsch, Handbook for Automatic Computation II,
 *    1971), run on the reversed matrix J T J (i.e. the QR iteration on T, fewer rotations on the
 *    contact terms), which does not accumulate eigenvectors but logs its plane rotations G_1, …,
 *    G_R (R ≈ 25–40 for r = 9). An off-diagonal entry is neglected when |e_i| ≤ ε‖T‖ (tql2's
 *    absolute test: the eigenvalues are then accurate to about ε‖M‖, all that the rounding of M
 *    leaves anyway; a test relative to the neighbouring diagonal entries spends about half of the
 *    rotations refining round-off-sized eigenvalues of rank-deficient matrices).
 * 3. ct_psd_end. Eigenvalues within r·ε·‖T‖ of 0 are round-off and may go to either side. With
 *    k₋ eigenvalues below that band and k₊ above it,
 *        M⁺ = M − Σ_{λ<0} λ z zᵀ  if k₋ ≤ k₊,      M⁺ = Σ_{λ>0} λ z zᵀ  otherwise,
 *    so only min(k₋, k₊) eigenvectors are formed (typically 2 of 9; 1 of 3 for point–point
 *    contact terms). The eigenvector of T for the eigenvalue in position j is column j of
 *    G_1⋯G_R, i.e. e_j with the logged rotations applied in reverse order (6 flops per rotation
 *    and vector instead of 6r for all r vectors), and z = P z_T by the stored reflectors. These
 *    are the vectors the QL iteration with accumulated eigenvectors would produce (the same
 *    rotations), orthonormal to round-off also within clusters of equal eigenvalues: unlike
 *    inverse iteration (Parlett, The Symmetric Eigenvalue Problem, §4.3; LAPACK dstein) this needs
 *    no reorthogonalisation and no residual check. If the QL iteration does not converge (or M is
 *    not finite), the projection falls back to ct_psd_project.
 * A work is begun, iterated (a no-op unless its state is CT_PSD_QL) and ended, in this order;
 * ct_psd_begin keeps no copy of M, so ct_psd_end is given M again (the projection is written
 * over it). The work holds no pointer: it may be copied. */
enum { CT_PSD_MAX_N = 9, CT_PSD_MAX_ROT = 256 };

/* State of a work after ct_psd_begin: M is PSD to round-off and kept; the QL iteration is to
 * run; M is not finite (ct_psd_end asks LAPACK for its verdict). */
typedef enum { CT_PSD_KEEP, CT_PSD_QL, CT_PSD_LAPACK } ct_psd_state;

typedef struct ct_psd_rot {
    double c, s;
    int i; /* the rotation acts on the coordinates (i, i+1) */
} ct_psd_rot;

/* Between the stages (fields private to core/base/psd.c except `state`). */
typedef struct ct_psd_work {
    double V[CT_PSD_MAX_N * CT_PSD_MAX_N], tau[CT_PSD_MAX_N]; /* Householder vectors and factors */
    double dr[CT_PSD_MAX_N], er[CT_PSD_MAX_N];                /* J T J: diagonal, sub-diagonal */
    double tnorm, band;                                        /* ‖T‖_∞, r·ε·‖T‖ */
    int r, ex, state, nrot; /* size, the scaling exponent (M scaled by 2^−ex), ct_psd_state,
                               rotations logged (−1: the iteration failed) */
    ct_psd_rot rot[CT_PSD_MAX_ROT];
} ct_psd_work;

/* Stage 1 for the r×r matrix M (1 ≤ r ≤ CT_PSD_MAX_N; lower triangle read, M not modified). */
void ct_psd_begin(ct_psd_work *w, const double *M, int r);
/* Stage 2 for the works w[0..K) (K ≤ 4) together: the ones in state CT_PSD_QL run their QL
 * iterations interleaved, one rotation of each in turn; NULL entries and works in another state
 * are skipped. Every work performs exactly the operations of its iteration alone. */
void ct_psd_ql(ct_psd_work *const *w, int K);
/* Stage 3: the projection of the matrix begun in w, written over M (r×r, both triangles). CT_OK,
 * or the status of the LAPACK fallback (CT_ELIB: not finite, or LAPACK failed). */
ct_status ct_psd_end(ct_psd_work *w, double *M);

/* The three stages for one matrix: M (r×r, 1 ≤ r ≤ CT_PSD_MAX_N) replaced by its projection. */
ct_status ct_psd_project_small(double *M, int r);

#endif
