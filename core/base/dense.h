/* dense.h — small dense kernels (2x2, 3x3) shared by material.c, elastic.c and psd.c. Internal.
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

/* Rotate columns p, q of the n x n matrix M by [c s; -s c]. */
CT_DENSE_INLINE void ct_dense_rot_cols(const int n, double *M, int p, int q, double c, double s)
{
    for (int k = 0; k < n; ++k) {
        double mp = M[k + n * p], mq = M[k + n * q];
        M[k + n * p] = c * mp - s * mq;
        M[k + n * q] = s * mp + c * mq;
    }
}

/* (The symmetric eigensolver, cyclic Jacobi, is ct_psd_jacobi_eig in ct_psd.h.) */

/* Rotation-variant SVD F = U diag(s) V^T for n = 2, 3: det U = det V = +1,
 * s[0] >= s[1] >= |s[n-1]|, and the last singular value carries the sign of det F. */
void ct_dense_svd(int n, const double *F, double *U, double *s, double *V);

#endif
