/* psd.c — small symmetric eigenproblems and PSD projections (see ct_psd.h): cyclic Jacobi for
 * 2×2 / 3×3, LAPACK's dsyevd for any size, and the staged Householder + implicit QL projector of
 * matrices up to 9×9 whose QL iterations interleave across matrices.
 */
#include "contactlab/ct_psd.h"

#include "base/dense.h"

#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- cyclic Jacobi (n <= 3) */

/* Cyclic Jacobi for a fixed n (inlined with a constant n). A rotation in the (p, q) plane
 * zeroes a_pq in a <- J^T a J; an a_pq below eps sqrt(|a_pp a_qq|) is dropped instead, which
 * keeps small eigenvalues of a PSD matrix accurate (Demmel and Veselic, ct_psd.h). Convergence
 * is quadratic: a 3x3 needs three or four sweeps. */
CT_DENSE_INLINE void jacobi(const int n, const double *A, double *lam, double *V)
{
    double a[9];
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            a[i + n * j] = i >= j ? A[i + n * j] : A[j + n * i];
            V[i + n * j] = i == j ? 1.0 : 0.0;
        }
    for (int sweep = 0; sweep < 32; ++sweep) {
        int rotated = 0;
        for (int p = 0; p < n; ++p)
            for (int q = p + 1; q < n; ++q) {
                const double apq = a[p + n * q], app = a[p + n * p], aqq = a[q + n * q];
                if (fabs(apq) <= DBL_EPSILON * sqrt(fabs(app * aqq)) || apq == 0.0) {
                    a[p + n * q] = a[q + n * p] = 0.0;
                    continue;
                }
                rotated = 1;
                /* t = tan(angle) is the smaller root of t^2 + 2 theta t - 1 = 0 */
                const double theta = (aqq - app) / (2.0 * apq);
                double t = fabs(theta) > 1e150 ? 0.5 / fabs(theta) : 1.0 / (fabs(theta) + sqrt(theta * theta + 1.0));
                if (theta < 0.0) t = -t;
                const double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                ct_dense_rot_cols(n, a, p, q, c, s);
                for (int k = 0; k < n; ++k) { /* rows p, q: a <- J^T a */
                    const double ap = a[p + n * k], aq = a[q + n * k];
                    a[p + n * k] = c * ap - s * aq;
                    a[q + n * k] = s * ap + c * aq;
                }
                a[p + n * q] = a[q + n * p] = 0.0;
                ct_dense_rot_cols(n, V, p, q, c, s);
            }
        if (!rotated) break;
    }
    for (int i = 0; i < n; ++i) lam[i] = a[i + n * i];
}

void ct_psd_jacobi_eig(int n, const double *A, double *lam, double *V)
{
    if (n == 2)
        jacobi(2, A, lam, V);
    else
        jacobi(3, A, lam, V);
}

/* ---------------------------------------------------------------- LAPACK (any n) */

ct_status ct_psd_project(double *A, int n)
{
    if (n < 0) return CT_EINPUT;
    if (n == 0) return CT_OK;
    const size_t nn = (size_t)n * (size_t)n;
    for (size_t k = 0; k < nn; ++k)
        if (!isfinite(A[k])) return CT_ELIB; /* LAPACK's result would be meaningless */
    double stack[16 * 16 + 16];
    double *V = n <= 16 ? stack : malloc((nn + (size_t)n) * sizeof *V);
    if (!V) return CT_ENOMEM;
    double *w = V + nn;
    memcpy(V, A, nn * sizeof *V);
    /* eigenvalues ascending, eigenvectors overwrite V; only the lower triangle is read */
    lapack_int info = LAPACKE_dsyevd(LAPACK_COL_MAJOR, 'V', 'L', n, V, n, w);
    if (info != 0) {
        if (V != stack) free(V);
        return CT_ELIB;
    }
    if (w[0] >= 0.0) { /* already PSD: keep A (made symmetric from its lower triangle) */
        for (int j = 0; j < n; ++j)
            for (int i = j + 1; i < n; ++i) A[j + (size_t)n * i] = A[i + (size_t)n * j];
    } else { /* A = sum_{w_k > 0} w_k v_k v_k^T */
        memset(A, 0, nn * sizeof *A);
        for (int k = 0; k < n; ++k) {
            if (w[k] <= 0.0) continue;
            const double *v = V + (size_t)n * k;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < n; ++i) A[i + (size_t)n * j] += w[k] * v[i] * v[j];
        }
    }
    if (V != stack) free(V);
    return CT_OK;
}

/* dsyevd's work sizes for jobz = 'V' (LAPACK's documented minima): lwork = 1 + 6n + 2n²,
 * liwork = 3 + 5n; the integers are stored after the doubles. */
static size_t dsyevd_lwork(size_t n) { return 1 + 6 * n + 2 * n * n; }
static size_t dsyevd_liwork(size_t n) { return 3 + 5 * n; }

size_t ct_psd_project_ws_size(int n)
{
    if (n <= 0) return 0;
    const size_t N = (size_t)n;
    const size_t ints = (dsyevd_liwork(N) * sizeof(lapack_int) + sizeof(double) - 1) / sizeof(double);
    return N * N + N + dsyevd_lwork(N) + ints;
}

ct_status ct_psd_project_ws(double *A, int n, double *work, size_t work_len)
{
    if (n < 0) return CT_EINPUT;
    if (n == 0) return CT_OK;
    if (!A || !work || work_len < ct_psd_project_ws_size(n)) return CT_EINPUT;
    const size_t N = (size_t)n, nn = N * N;
    for (size_t k = 0; k < nn; ++k)
        if (!isfinite(A[k])) return CT_ELIB;
    double *V = work, *w = V + nn, *lw = w + N;
    lapack_int *iw = (lapack_int *)(void *)(lw + dsyevd_lwork(N)); /* only LAPACK touches it */
    memcpy(V, A, nn * sizeof *V);
    lapack_int info = LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, 'V', 'L', n, V, n, w, lw,
                                          (lapack_int)dsyevd_lwork(N), iw, (lapack_int)dsyevd_liwork(N));
    if (info != 0) return CT_ELIB;
    int kneg = 0;
    while (kneg < n && w[kneg] < 0.0) ++kneg; /* ascending */
    /* both triangles from the lower one */
    for (int j = 0; j < n; ++j)
        for (int i = j + 1; i < n; ++i) A[j + N * (size_t)i] = A[i + N * (size_t)j];
    if (kneg == 0) return CT_OK;
    const int neg_side = kneg <= n - kneg;
    if (!neg_side) memset(A, 0, nn * sizeof *A);
    for (int k = neg_side ? 0 : kneg; k < (neg_side ? kneg : n); ++k) {
        const double lam = neg_side ? -w[k] : w[k];
        if (!neg_side && !(lam > 0.0)) continue;
        const double *v = V + N * (size_t)k;
        for (int j = 0; j < n; ++j) {
            const double c = lam * v[j];
            double *Aj = A + N * (size_t)j;
            for (int i = 0; i < n; ++i) Aj[i] += c * v[i];
        }
    }
    /* exact symmetry after the rank-1 updates (each is symmetric up to the rounding of lam v_j v_i) */
    for (int j = 0; j < n; ++j)
        for (int i = j + 1; i < n; ++i) {
            const double s = 0.5 * (A[i + N * (size_t)j] + A[j + N * (size_t)i]);
            A[i + N * (size_t)j] = A[j + N * (size_t)i] = s;
        }
    return CT_OK;
}

/* ---------------------------------------------------------------- staged projection (r <= 9) */

/* Householder tridiagonalisation of the symmetric A (n×n column-major; the lower triangle is read
 * and overwritten): d[0..n) receives the diagonal and e[0..n−1) the sub-diagonal (e[n−1] = 0) of
 * T = P_{n−3}⋯P_0 A P_0⋯P_{n−3}, with P_k = I − τ_k u_k u_kᵀ; u_k (entries k+1..n−1) is stored in
 * V[k·n + i] and τ_k in tau[k] (0 when P_k = I, the column being tridiagonal already). With
 * x = A[k+1:, k], α = −sign(x₀)‖x‖ and u = x − α e₁, P_k x = α e₁ and τ = 2/‖u‖² = 1/(α(α − x₀))
 * (the LAPACK dsytd2 scheme; Golub & Van Loan §8.3.1). */
static void tridiagonalize(double *A, int n, double *V, double *tau, double *d, double *e)
{
    for (int k = 0; k + 2 < n; ++k) {
        double *u = V + n * k, nrm2 = 0.0;
        const double *x = A + n * k;
        for (int i = k + 1; i < n; ++i) nrm2 += x[i] * x[i];
        const double x0 = x[k + 1];
        tau[k] = 0.0;
        if (nrm2 - x0 * x0 == 0.0) continue;
        const double alpha = x0 >= 0.0 ? -sqrt(nrm2) : sqrt(nrm2), t = 1.0 / (alpha * (alpha - x0));
        u[k + 1] = x0 - alpha;
        for (int i = k + 2; i < n; ++i) u[i] = x[i];
        tau[k] = t;
        /* trailing block B ← P B P = B − u wᵀ − w uᵀ with p = τ B u, w = p − (τ/2)(uᵀp) u */
        double p[9], w[9], K = 0.0;
        for (int j = k + 1; j < n; ++j) {
            double s = A[j + n * j] * u[j];
            for (int i = j + 1; i < n; ++i) s += A[i + n * j] * u[i];
            p[j] = s;
        }
        for (int j = k + 1; j < n; ++j)
            for (int i = j + 1; i < n; ++i) p[i] += A[i + n * j] * u[j];
        for (int i = k + 1; i < n; ++i) {
            p[i] *= t;
            K += u[i] * p[i];
        }
        K *= 0.5 * t;
        for (int i = k + 1; i < n; ++i) w[i] = p[i] - K * u[i];
        for (int j = k + 1; j < n; ++j)
            for (int i = j; i < n; ++i) A[i + n * j] -= u[i] * w[j] + w[i] * u[j];
        A[(k + 1) + n * k] = alpha;
    }
    for (int i = 0; i < n; ++i) {
        d[i] = A[i + n * i];
        e[i] = i + 1 < n ? A[(i + 1) + n * i] : 0.0;
    }
}

/* Norm ‖T‖_∞ of the symmetric tridiagonal matrix (d, e) (e[i] couples i and i+1, e[n−1] = 0). */
static double tridiagonal_norm(const double *d, const double *e, int n)
{
    double t = 0.0;
    for (int i = 0; i < n; ++i) {
        const double row = fabs(d[i]) + fabs(e[i]) + (i > 0 ? fabs(e[i - 1]) : 0.0);
        if (!(row <= t)) t = row; /* (a NaN propagates) */
    }
    return t;
}

/* Whether the tridiagonal (d, e) has an eigenvalue below sigma: the number of eigenvalues below σ
 * is the number of negative pivots of the LDLᵀ factorisation of T − σI (Sylvester's law of
 * inertia; the Sturm sequence recurrence, backward stable, Golub & Van Loan §8.4.1), so the first
 * negative pivot decides. A zero pivot is replaced by a tiny negative one. */
static int tridiagonal_has_eigenvalue_below(const double *d, const double *e, int n, double sigma)
{
    double q = 1.0;
    for (int i = 0; i < n; ++i) {
        q = d[i] - sigma - (i > 0 ? e[i - 1] * e[i - 1] / q : 0.0);
        if (q < DBL_MIN) return 1;
    }
    return 0;
}

/* Eigenvalues of the symmetric tridiagonal matrix (d, e) by the implicit QL iteration: d is
 * overwritten with them (unordered), e destroyed; off-diagonal entries below ε·tnorm are
 * neglected. Rotation t of the log acts on the coordinates (i, i+1) of an eigenvector matrix Z
 * as Z ← Z G_t with G_t = [c s; −s c] there.
 *
 * The iteration is written as a resumable lane (one plane rotation per call of ql_rotate) so that
 * several independent matrices advance together (ql_batch): each rotation waits on a square root
 * and a division of the one before, so one matrix keeps the core mostly idle, while the rotations
 * of four matrices overlap (2× faster on the bench scene's terms). Every lane performs exactly
 * the operations of the one-matrix iteration, in the same order: the results do not depend on
 * how the matrices are grouped. */
typedef struct {
    double *d, *e, tiny;
    ct_psd_rot *rot;
    int n, l, m, i, iter, nrot, phase; /* phase: 0 between sweeps, 1 in a sweep, 2 done, −1 failed */
    double g, sn, cs, p;               /* the sweep's running quantities */
} ql_lane;

/* Next sweep of the lane: deflation search from l, then the Wilkinson shift. */
static inline void ql_setup(ql_lane *q)
{
    double *d = q->d, *e = q->e;
    for (;;) {
        const int l = q->l;
        if (l >= q->n) {
            q->phase = 2;
            return;
        }
        int m;
        for (m = l; m + 1 < q->n; ++m)
            if (fabs(e[m]) <= q->tiny) break;
        if (m == l) { /* d[l] is an eigenvalue */
            q->l = l + 1;
            q->iter = 0;
            continue;
        }
        if (++q->iter > 60 || q->nrot + (m - l) > CT_PSD_MAX_ROT) {
            q->phase = -1;
            return;
        }
        double g = (d[l + 1] - d[l]) / (2.0 * e[l]);
        const double r = sqrt(g * g + 1.0); /* magnitudes here are far from overflow: no hypot scaling */
        q->g = d[m] - d[l] + e[l] / (g + (g >= 0.0 ? r : -r));
        q->sn = 1.0, q->cs = 1.0, q->p = 0.0;
        q->m = m, q->i = m - 1, q->phase = 1;
        return;
    }
}

/* One rotation of the lane's sweep (phase 1); the sweep's end returns the lane to phase 0. */
static inline void ql_rotate(ql_lane *q)
{
    double *d = q->d, *e = q->e;
    const int i = q->i;
    double f = q->sn * e[i], b = q->cs * e[i], g = q->g, p = q->p;
    double r = sqrt(f * f + g * g);
    e[i + 1] = r;
    if (r == 0.0) { /* underflow: split the matrix here */
        d[i + 1] -= p;
        e[q->m] = 0.0;
        q->phase = 0;
        return;
    }
    const double sn = f / r, cs = g / r;
    g = d[i + 1] - p;
    r = (d[i] - g) * sn + 2.0 * cs * b;
    p = sn * r;
    d[i + 1] = g + p;
    g = cs * r - b;
    q->rot[q->nrot++] = (ct_psd_rot){cs, sn, i};
    q->sn = sn, q->cs = cs, q->g = g, q->p = p;
    if (--q->i < q->l) {
        d[q->l] -= p;
        e[q->l] = g;
        e[q->m] = 0.0;
        q->phase = 0;
    }
}

/* Runs the K lanes to completion, one rotation of each in turn. */
static void ql_batch(ql_lane *L, int K)
{
    for (int k = 0; k < K; ++k) ql_setup(&L[k]);
    for (;;) {
        int active = 0;
        for (int k = 0; k < K; ++k) {
            if (L[k].phase == 0) ql_setup(&L[k]);
            if (L[k].phase == 1) {
                ql_rotate(&L[k]);
                active = 1;
            }
        }
        if (!active) return;
    }
}

/* ---------------------------------------------------------------- the stages (ct_psd.h) */

void ct_psd_begin(ct_psd_work *w, const double *M, int r)
{
    double A[81], d[9], e[9];
    w->r = r;
    /* The iteration squares entries: a matrix far from 1 in magnitude is scaled by a power of 2
     * (exactly; the projection is positively homogeneous), away from underflow and overflow. */
    double amax = 0.0;
    for (int j = 0; j < r; ++j)
        for (int i = j; i < r; ++i) {
            const double a = M[i + r * j], b = fabs(a);
            A[i + r * j] = a;
            amax = b > amax ? b : amax;
        }
    w->ex = 0;
    if ((amax < 0x1p-300 && amax > 0.0) || (amax > 0x1p300 && amax <= DBL_MAX)) {
        frexp(amax, &w->ex);
        for (int j = 0; j < r; ++j)
            for (int i = j; i < r; ++i) A[i + r * j] = ldexp(A[i + r * j], -w->ex);
    }
    tridiagonalize(A, r, w->V, w->tau, d, e);
    w->tnorm = tridiagonal_norm(d, e, r);
    w->band = r * DBL_EPSILON * w->tnorm;
    if (!isfinite(w->tnorm)) {
        w->state = CT_PSD_LAPACK; /* LAPACK's verdict */
        return;
    }
    if (w->tnorm == 0.0 || !tridiagonal_has_eigenvalue_below(d, e, r, -w->band)) {
        w->state = CT_PSD_KEEP; /* PSD to round-off: keep M */
        return;
    }
    /* The QL iteration runs on the reversed matrix J T J (J the exchange matrix), i.e. it is the
     * QR iteration on T, which takes fewer rotations here (on the terms of the n = 50 bench scene:
     * 52 instead of 77 per 9×9 mollified edge–edge matrix, 28 instead of 30 per 5×5). */
    for (int i = 0; i < r; ++i) {
        w->dr[i] = d[r - 1 - i];
        w->er[i] = i + 1 < r ? e[r - 2 - i] : 0.0;
    }
    w->state = CT_PSD_QL;
}

/* The QL iterations of the works in state CT_PSD_QL among w[0..K) (K ≤ 4), run together. */
void ct_psd_ql(ct_psd_work *const *w, int K)
{
    ql_lane L[4];
    ct_psd_work *P[4];
    int nl = 0;
    for (int k = 0; k < K; ++k) {
        if (!w[k] || w[k]->state != CT_PSD_QL) continue;
        P[nl] = w[k];
        L[nl++] = (ql_lane){.d = w[k]->dr, .e = w[k]->er, .tiny = DBL_EPSILON * w[k]->tnorm, .rot = w[k]->rot,
                            .n = w[k]->r};
    }
    ql_batch(L, nl);
    for (int k = 0; k < nl; ++k) P[k]->nrot = L[k].phase == 2 ? L[k].nrot : -1;
}

ct_status ct_psd_end(ct_psd_work *w, double *M)
{
    const int r = w->r;
    if (w->state == CT_PSD_KEEP) {
        for (int j = 0; j < r; ++j)
            for (int i = j + 1; i < r; ++i) M[j + r * i] = M[i + r * j];
        return CT_OK;
    }
    if (w->state == CT_PSD_LAPACK || w->nrot < 0) return ct_psd_project(M, r);
    const double band = w->band, *dr = w->dr;
    int kneg = 0, kpos = 0;
    for (int k = 0; k < r; ++k) {
        kneg += dr[k] < -band;
        kpos += dr[k] > band;
    }
    /* the eigenvectors of the smaller side, Y[i·9 + q] the component i of vector q */
    const int positive = kpos < kneg;
    double Y[81], lam[9];
    int nw = 0;
    for (int k = 0; k < r; ++k) /* position k of J T J is position r − 1 − k of T */
        if (positive ? dr[k] > band : dr[k] < -band) {
            for (int i = 0; i < r; ++i) Y[i * 9 + nw] = i == r - 1 - k;
            lam[nw++] = w->ex ? ldexp(dr[k], w->ex) : dr[k];
        }
    for (int t = w->nrot - 1; t >= 0; --t) { /* z_T = J G_1⋯G_R J e_k: rotation (i, i+1) of J T J acts on (r−1−i, r−2−i) */
        const double c = w->rot[t].c, s = w->rot[t].s;
        double *y0 = Y + 9 * (r - 1 - w->rot[t].i), *y1 = y0 - 9;
        for (int q = 0; q < nw; ++q) {
            const double a = y0[q], b = y1[q];
            y0[q] = c * a + s * b;
            y1[q] = c * b - s * a;
        }
    }
    for (int k = r - 3; k >= 0; --k) { /* z = P_0⋯P_{r−3} z_T */
        if (w->tau[k] == 0.0) continue;
        const double *u = w->V + r * k;
        for (int q = 0; q < nw; ++q) {
            double t = 0.0;
            for (int i = k + 1; i < r; ++i) t += u[i] * Y[i * 9 + q];
            t *= w->tau[k];
            for (int i = k + 1; i < r; ++i) Y[i * 9 + q] -= t * u[i];
        }
    }
    /* lower triangle of M − Σ_{λ<0} λ z zᵀ or of Σ_{λ>0} λ z zᵀ, then mirrored */
    for (int j = 0; j < r; ++j)
        for (int i = j; i < r; ++i) {
            double m = positive ? 0.0 : M[i + r * j];
            for (int q = 0; q < nw; ++q) m += (positive ? lam[q] : -lam[q]) * Y[i * 9 + q] * Y[j * 9 + q];
            M[i + r * j] = M[j + r * i] = m;
        }
    return CT_OK;
}

ct_status ct_psd_project_small(double *M, int r)
{
    ct_psd_work w;
    ct_psd_work *one = &w;
    ct_psd_begin(&w, M, r);
    ct_psd_ql(&one, 1);
    return ct_psd_end(&w, M);
}
