/* dense.c — small dense kernels: determinant, cofactor, product, rotation-variant SVD (its
 * symmetric eigenproblem by the Jacobi solver of ct_psd.h). */
#include "base/dense.h"

#include "contactlab/ct_psd.h"

#include <math.h>
#include <string.h>

double ct_dense_det(int n, const double *A)
{
    if (n == 2) return A[0] * A[3] - A[2] * A[1];
    return A[0] * (A[4] * A[8] - A[7] * A[5]) - A[3] * (A[1] * A[8] - A[7] * A[2]) +
           A[6] * (A[1] * A[5] - A[4] * A[2]);
}

void ct_dense_cof(int n, const double *A, double *C)
{
    if (n == 2) {
        C[0] = A[3];
        C[1] = -A[2];
        C[2] = -A[1];
        C[3] = A[0];
        return;
    }
    /* column j of cof(A) is a_{j+1} x a_{j+2} (columns a_j, indices mod 3) */
    for (int j = 0; j < 3; ++j) {
        const double *a = A + 3 * ((j + 1) % 3), *b = A + 3 * ((j + 2) % 3);
        C[3 * j + 0] = a[1] * b[2] - a[2] * b[1];
        C[3 * j + 1] = a[2] * b[0] - a[0] * b[2];
        C[3 * j + 2] = a[0] * b[1] - a[1] * b[0];
    }
}

void ct_dense_matmul(int n, const double *A, const double *B, double *C)
{
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            double s = 0.0;
            for (int k = 0; k < n; ++k) s += A[i + n * k] * B[k + n * j];
            C[i + n * j] = s;
        }
}

/* 2D: F = R S (polar, R the rotation maximising tr(R^T F), so tr S >= 0), then
 * S = W diag(s) W^T in closed form: U = R W, V = W. */
static void svd2(const double *F, double *U, double *s, double *V)
{
    double th = atan2(F[1] - F[2], F[0] + F[3]);
    double c = cos(th), sn = sin(th);
    double a = c * F[0] + sn * F[1], b = c * F[2] + sn * F[3], d = -sn * F[2] + c * F[3];
    double ph = 0.5 * atan2(2.0 * b, a - d);
    double cw = cos(ph), sw = sin(ph);
    double m = 0.5 * (a + d), r = hypot(0.5 * (a - d), b);
    s[0] = m + r;
    /* s0 s1 = det F: avoids the cancellation of m - r for a small s1 */
    s[1] = s[0] > 0.0 ? ct_dense_det(2, F) / s[0] : m - r;
    V[0] = cw, V[1] = sw, V[2] = -sw, V[3] = cw;
    U[0] = c * cw - sn * sw, U[1] = sn * cw + c * sw;
    U[2] = -U[1], U[3] = U[0];
}

/* Givens rotation of rows i, j of B (3x3) zeroing B[j, col] against B[i, col] (which
 * becomes >= 0); Q accumulates the transposed rotations so that Q B stays invariant. */
static void givens_rows(double *B, double *Q, int i, int j, int col)
{
    double x = B[i + 3 * col], y = B[j + 3 * col], r = sqrt(x * x + y * y);
    if (r == 0.0) return;
    double c = x / r, s = y / r;
    for (int k = 0; k < 3; ++k) {
        double bi = B[i + 3 * k], bj = B[j + 3 * k];
        B[i + 3 * k] = c * bi + s * bj;
        B[j + 3 * k] = -s * bi + c * bj;
    }
    B[j + 3 * col] = 0.0;
    ct_dense_rot_cols(3, Q, i, j, c, -s);
}

/* 3D: V from the eigenvectors of F^T F (sorted, det +1), then a Givens QR of B = F V
 * gives U = Q and s = diag(R); R is diagonal up to round-off because the columns of B are
 * orthogonal, R00, R11 >= 0 by construction and R22 takes the sign of det F. The QR step
 * never divides by a singular value, so rank-deficient and inverted F are fine. */
static void svd3(const double *F, double *U, double *s, double *V)
{
    double C[9], lam[3], W[9];
    for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 3; ++i)
            C[i + 3 * j] = F[3 * i] * F[3 * j] + F[3 * i + 1] * F[3 * j + 1] + F[3 * i + 2] * F[3 * j + 2];
    ct_psd_jacobi_eig(3, C, lam, W);
    int o[3] = {0, 1, 2};
    for (int i = 0; i < 3; ++i) /* sort descending */
        for (int j = i + 1; j < 3; ++j)
            if (lam[o[j]] > lam[o[i]]) {
                int t = o[i];
                o[i] = o[j];
                o[j] = t;
            }
    for (int j = 0; j < 3; ++j) memcpy(V + 3 * j, W + 3 * o[j], 3 * sizeof *V);
    if (ct_dense_det(3, V) < 0.0)
        for (int i = 0; i < 3; ++i) V[i + 6] = -V[i + 6];
    double B[9];
    ct_dense_matmul(3, F, V, B);
    for (int k = 0; k < 9; ++k) U[k] = k % 4 == 0 ? 1.0 : 0.0;
    givens_rows(B, U, 0, 1, 0);
    givens_rows(B, U, 0, 2, 0);
    givens_rows(B, U, 1, 2, 1);
    s[0] = B[0], s[1] = B[4], s[2] = B[8];
}

void ct_dense_svd(int n, const double *F, double *U, double *s, double *V)
{
    if (n == 2)
        svd2(F, U, s, V);
    else
        svd3(F, U, s, V);
}
