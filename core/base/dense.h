/* dense.h — small dense kernels (2x2, 3x3) shared by material.c and elastic.c. Internal.
 *
 * Matrices are column-major, A[i + n*j] = A_ij, like everywhere in contactlab. */
#ifndef CT_DENSE_H
#define CT_DENSE_H

/* For kernels instantiated with a constant dimension (the small loops then unroll). */
#if defined(__GNUC__)
#define CT_DENSE_INLINE static inline __attribute__((always_inline))
#else
#define CT_DENSE_INLINE static inline
#endif

/* det(A) for n = 2, 3. */
double ct_dense_det(int n, const double *A);

/* Cofactor matrix cof(A) = d det(A) / dA (= det(A) A^{-T} when A is invertible). */
void ct_dense_cof(int n, const double *A, double *C);

/* C = A * B for n x n matrices (C must not alias A or B). */
void ct_dense_matmul(int n, const double *A, const double *B, double *C);

/* Symmetric eigendecomposition A = V diag(lam) V^T (cyclic Jacobi, n <= 3; only the
 * lower triangle of A is read). Eigenvalues are returned in no particular order. */
void ct_dense_sym_eig(int n, const double *A, double *lam, double *V);

/* Rotation-variant SVD F = U diag(s) V^T for n = 2, 3: det U = det V = +1,
 * s[0] >= s[1] >= |s[n-1]|, and the last singular value carries the sign of det F. */
void ct_dense_svd(int n, const double *F, double *U, double *s, double *V);

#endif
