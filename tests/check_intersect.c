/* check_intersect.c — exact orientation predicates, segment/triangle tests, surface verifier.
 *
 * References are computed independently of the expansion arithmetic in core/contact/intersect.c:
 *  - orientation signs: the inputs are converted to big integers (every double is an
 *    integer times a power of two; a common scale makes all of them integers) and the
 *    determinant is evaluated in 512-bit two's-complement integer arithmetic written here;
 *  - segment–segment and segment–triangle intersection on integer coordinates: the
 *    separating-axis theorem in exact integer arithmetic (closed convex sets are disjoint
 *    iff their projections on one of a complete set of candidate axes are strictly
 *    separated);
 *  - surface counts: a brute-force O(n²) loop over all primitive pairs.
 */
#include "ct_test_util.h"

#include "contactlab/ct_intersect.h"
#include "contactlab/ct_mesh.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Check's ck_assert records every passing assertion (a write to a pipe, microseconds each):
 * hot loops use this instead, which only calls into Check on failure. */
#define REQUIRE(cond, ...)                      \
    do {                                        \
        if (!(cond)) ck_abort_msg(__VA_ARGS__); \
    } while (0)

/* ---------------------------------------------------------------- random numbers */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnext(void) /* xorshift64* */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return rng * 0x2545f4914f6cdd1dull;
}

static double urand(void) { return (double)(rnext() >> 11) * 0x1.0p-53; } /* [0, 1) */

static int irand(int lo, int hi) { return lo + (int)(rnext() % (uint64_t)(hi - lo + 1)); }

/* ---------------------------------------------------------------- 512-bit integers */

__extension__ typedef unsigned __int128 u128; /* GCC/Clang extension, tests only */
__extension__ typedef __int128 i128;

enum { NL = 8 }; /* limbs of 64 bits, two's complement, little endian */
typedef struct {
    uint64_t w[NL];
} big;

static big big_add(big a, big b)
{
    big r;
    unsigned carry = 0;
    for (int i = 0; i < NL; ++i) {
        u128 s = (u128)a.w[i] + b.w[i] + carry;
        r.w[i] = (uint64_t)s;
        carry = (unsigned)(s >> 64);
    }
    return r;
}

static big big_neg(big a)
{
    big one = {{1}};
    for (int i = 0; i < NL; ++i) a.w[i] = ~a.w[i];
    return big_add(a, one);
}

static big big_sub(big a, big b) { return big_add(a, big_neg(b)); }

static int big_isneg(big a) { return (a.w[NL - 1] >> 63) != 0; }

static int big_sign(big a)
{
    if (big_isneg(a)) return -1;
    for (int i = 0; i < NL; ++i)
        if (a.w[i]) return 1;
    return 0;
}

/* Product modulo 2^512: exact for signed values while the true product fits. */
static big big_mul(big a, big b)
{
    int neg = 0;
    if (big_isneg(a)) a = big_neg(a), neg ^= 1;
    if (big_isneg(b)) b = big_neg(b), neg ^= 1;
    big r = {{0}};
    for (int i = 0; i < NL; ++i) {
        u128 carry = 0;
        for (int j = 0; i + j < NL; ++j) {
            u128 t = (u128)a.w[i] * b.w[j] + r.w[i + j] + carry;
            r.w[i + j] = (uint64_t)t;
            carry = t >> 64;
        }
    }
    return neg ? big_neg(r) : r;
}

/* Smallest exponent e such that every nonzero x[k] is an integer multiple of 2^e. */
static int min_exp(const double *x, int n)
{
    int e = INT32_MAX;
    for (int k = 0; k < n; ++k) {
        if (x[k] == 0.0) continue;
        int ex;
        frexp(x[k], &ex); /* x = m 2^ex, m in [0.5, 1): an integer times 2^(ex - 53) */
        if (ex - 53 < e) e = ex - 53;
    }
    return e == INT32_MAX ? 0 : e;
}

/* x / 2^e as a big integer (exact: x is an integer multiple of 2^e). */
static big big_from(double x, int e)
{
    big r = {{0}};
    if (x == 0.0) return r;
    int ex;
    double m = frexp(fabs(x), &ex);
    uint64_t M = (uint64_t)ldexp(m, 53); /* exact 53-bit integer */
    int sh = ex - 53 - e;                /* >= 0 */
    REQUIRE(sh >= 0 && sh < 64 * (NL - 4), "exponent range too wide for the big integers");
    int limb = sh / 64, bit = sh % 64;
    r.w[limb] = M << bit;
    if (bit) r.w[limb + 1] = M >> (64 - bit);
    return x < 0 ? big_neg(r) : r;
}

static int ref_orient2d(const double *a, const double *b, const double *c)
{
    double all[6] = {a[0], a[1], b[0], b[1], c[0], c[1]};
    int e = min_exp(all, 6);
    big ax = big_from(a[0], e), ay = big_from(a[1], e), bx = big_from(b[0], e), by = big_from(b[1], e),
        cx = big_from(c[0], e), cy = big_from(c[1], e);
    big det = big_sub(big_mul(big_sub(bx, ax), big_sub(cy, ay)), big_mul(big_sub(by, ay), big_sub(cx, ax)));
    return big_sign(det);
}

static int ref_orient3d(const double *a, const double *b, const double *c, const double *d)
{
    double all[12];
    memcpy(all, a, 3 * sizeof(double));
    memcpy(all + 3, b, 3 * sizeof(double));
    memcpy(all + 6, c, 3 * sizeof(double));
    memcpy(all + 9, d, 3 * sizeof(double));
    int e = min_exp(all, 12);
    big u[3], v[3], w[3];
    for (int k = 0; k < 3; ++k) {
        big A = big_from(a[k], e);
        u[k] = big_sub(big_from(b[k], e), A);
        v[k] = big_sub(big_from(c[k], e), A);
        w[k] = big_sub(big_from(d[k], e), A);
    }
    big c0 = big_sub(big_mul(v[1], w[2]), big_mul(v[2], w[1]));
    big c1 = big_sub(big_mul(v[2], w[0]), big_mul(v[0], w[2]));
    big c2 = big_sub(big_mul(v[0], w[1]), big_mul(v[1], w[0]));
    big det = big_add(big_add(big_mul(u[0], c0), big_mul(u[1], c1)), big_mul(u[2], c2));
    return big_sign(det);
}

static int sgn(double v) { return (v > 0) - (v < 0); }

/* The textbook floating-point evaluation, to show where it fails. */
static int naive_orient2d(const double *a, const double *b, const double *c)
{
    return sgn((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
}

static int naive_orient3d(const double *a, const double *b, const double *c, const double *d)
{
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; ++k) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
    return sgn(u[0] * (v[1] * w[2] - v[2] * w[1]) + u[1] * (v[2] * w[0] - v[0] * w[2]) +
               u[2] * (v[0] * w[1] - v[1] * w[0]));
}

/* A random double with random sign and exponent in [-e, e]. */
static double rand_wide(int e) { return (urand() < 0.5 ? -1 : 1) * ldexp(0.5 + 0.5 * urand(), irand(-e, e)); }

/* ---------------------------------------------------------------- predicates */

START_TEST(test_orient_random)
{
    /* General inputs with mixed exponents, and small integers (many exact zeros). */
    long n = 0, zeros = 0;
    for (int it = 0; it < 40000; ++it) {
        double p[4][3];
        int integer = it % 2;
        for (int i = 0; i < 4; ++i)
            for (int k = 0; k < 3; ++k) p[i][k] = integer ? irand(-3, 3) : rand_wide(20);
        int r2 = ref_orient2d(p[0], p[1], p[2]), r3 = ref_orient3d(p[0], p[1], p[2], p[3]);
        REQUIRE(ct_orient2d(p[0], p[1], p[2]) == r2, "wrong sign (line %d)", __LINE__);
        REQUIRE(ct_orient3d(p[0], p[1], p[2], p[3]) == r3, "wrong sign (line %d)", __LINE__);
        /* permutation rules: an odd permutation flips the sign */
        REQUIRE(ct_orient2d(p[1], p[0], p[2]) == -r2, "wrong sign (line %d)", __LINE__);
        REQUIRE(ct_orient3d(p[0], p[1], p[3], p[2]) == -r3, "wrong sign (line %d)", __LINE__);
        REQUIRE(ct_orient3d(p[1], p[2], p[3], p[0]) == -r3, "wrong sign (line %d)", __LINE__);
        n += 2;
        zeros += (r2 == 0) + (r3 == 0);
    }
    printf("orient random: %ld signs equal to 512-bit integer evaluation (%ld exact zeros)\n", n, zeros);
}
END_TEST

START_TEST(test_orient2d_near_degenerate)
{
    /* Shewchuk's example: a on the line y = x through b, c, perturbed by i, j ulps of 0.5. */
    const double b[2] = {12.0, 12.0}, c[2] = {24.0, 24.0};
    const double u = 0x1p-53;
    long naive_wrong = 0, n = 0, zeros = 0;
    for (int i = 0; i < 256; ++i)
        for (int j = 0; j < 256; ++j) {
            double a[2] = {0.5 + i * u, 0.5 + j * u};
            int r = ref_orient2d(a, b, c);
            REQUIRE(ct_orient2d(a, b, c) == r, "wrong sign (line %d)", __LINE__);
            /* cyclic permutations: the same sign */
            REQUIRE(ct_orient2d(b, c, a) == r, "wrong sign (line %d)", __LINE__);
            REQUIRE(ct_orient2d(c, a, b) == r, "wrong sign (line %d)", __LINE__);
            naive_wrong += naive_orient2d(a, b, c) != r;
            zeros += r == 0;
            ++n;
        }
    /* Points rounded onto random lines: nearly collinear, exact sign arbitrary. */
    for (int it = 0; it < 20000; ++it) {
        double o[2] = {rand_wide(3), rand_wide(3)}, d[2] = {rand_wide(3), rand_wide(3)};
        double p[3][2];
        for (int k = 0; k < 3; ++k) {
            double s = 10 * urand() - 5;
            p[k][0] = o[0] + s * d[0];
            p[k][1] = o[1] + s * d[1];
        }
        int r = ref_orient2d(p[0], p[1], p[2]);
        REQUIRE(ct_orient2d(p[0], p[1], p[2]) == r, "wrong sign (line %d)", __LINE__);
        naive_wrong += naive_orient2d(p[0], p[1], p[2]) != r;
        ++n;
    }
    printf("orient2d near-degenerate: %ld cases, all exact; naive evaluation wrong in %ld "
           "(%ld exact zeros)\n",
           n, naive_wrong, zeros);
    ck_assert_int_gt(naive_wrong, 0); /* the test does exercise the hard cases */
    ck_assert_int_gt(zeros, 0);
}
END_TEST

START_TEST(test_orient3d_near_degenerate)
{
    /* b, c, d on the plane x - 2y + z = 0; a near (0.5, 0.5, 0.5) (on it), off by ulps. */
    const double b[3] = {12, 12, 12}, c[3] = {24, 24, 24}, d[3] = {1, 2, 3};
    const double u = 0x1p-53;
    long naive_wrong = 0, n = 0, zeros = 0;
    for (int i = 0; i < 64; ++i)
        for (int j = 0; j < 64; ++j)
            for (int k = 0; k < 4; ++k) {
                double a[3] = {0.5 + i * u, 0.5 + j * u, 0.5 + k * u};
                int r = ref_orient3d(a, b, c, d);
                REQUIRE(ct_orient3d(a, b, c, d) == r, "wrong sign (line %d)", __LINE__);
                /* an even permutation: the same sign */
                REQUIRE(ct_orient3d(b, a, d, c) == r, "wrong sign (line %d)", __LINE__);
                naive_wrong += naive_orient3d(a, b, c, d) != r;
                zeros += r == 0;
                ++n;
            }
    /* Points rounded onto random planes. */
    for (int it = 0; it < 20000; ++it) {
        double o[3], e1[3], e2[3], p[4][3];
        for (int k = 0; k < 3; ++k) o[k] = rand_wide(3), e1[k] = rand_wide(3), e2[k] = rand_wide(3);
        for (int q = 0; q < 4; ++q) {
            double s = 10 * urand() - 5, t = 10 * urand() - 5;
            for (int k = 0; k < 3; ++k) p[q][k] = o[k] + s * e1[k] + t * e2[k];
        }
        int r = ref_orient3d(p[0], p[1], p[2], p[3]);
        REQUIRE(ct_orient3d(p[0], p[1], p[2], p[3]) == r, "wrong sign (line %d)", __LINE__);
        naive_wrong += naive_orient3d(p[0], p[1], p[2], p[3]) != r;
        ++n;
    }
    printf("orient3d near-degenerate: %ld cases, all exact; naive evaluation wrong in %ld "
           "(%ld exact zeros)\n",
           n, naive_wrong, zeros);
    ck_assert_int_gt(naive_wrong, 0);
    ck_assert_int_gt(zeros, 0);
}
END_TEST

START_TEST(test_orient_speed)
{
    /* The filter decides well-conditioned inputs without the expansion path. */
    enum { N = 1 << 20 };
    double *p = malloc(sizeof(double) * 12 * 1024);
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i < 12 * 1024; ++i) p[i] = urand();
    long acc = 0;
    double t0 = omp_get_wtime();
    for (int it = 0; it < N; ++it) {
        const double *q = p + 12 * (it & 1023);
        acc += ct_orient3d(q, q + 3, q + 6, q + 9);
    }
    double t1 = omp_get_wtime();
    for (int it = 0; it < N; ++it) {
        const double *q = p + 12 * (it & 1023);
        acc += ct_orient2d(q, q + 2, q + 4);
    }
    double t2 = omp_get_wtime();
    /* near-degenerate (every call takes the exact path) */
    double a[3] = {0.5, 0.5, 0.5}, b[3] = {12, 12, 12}, c[3] = {24, 24, 24}, d[3] = {1, 2, 3};
    for (int it = 0; it < N / 16; ++it) {
        a[0] = 0.5 + (it & 7) * 0x1p-53;
        acc += ct_orient3d(a, b, c, d);
    }
    double t3 = omp_get_wtime();
    /* exactly coplanar grid points (exact differences: the shorter exact path) */
    double g[4][3] = {{0, 0, 0}, {0.25, 0, 0}, {0, 0.5, 0}, {0.75, 0.125, 0}};
    for (int it = 0; it < N / 16; ++it) {
        g[3][0] = 0.125 * (it & 7);
        acc += ct_orient3d(g[0], g[1], g[2], g[3]);
    }
    double t4 = omp_get_wtime();
    printf("orient3d ns/call: %.1f (random), %.1f (exact, rounded differences), %.1f (exact, "
           "coplanar grid); orient2d %.1f (random) (acc %ld)\n",
           1e9 * (t1 - t0) / N, 1e9 * (t3 - t2) / (N / 16), 1e9 * (t4 - t3) / (N / 16), 1e9 * (t2 - t1) / N,
           acc);
    free(p);
}
END_TEST

/* ---------------------------------------------------------------- explicit configurations */

START_TEST(test_segments_2d_cases)
{
    typedef struct {
        double a0[2], a1[2], b0[2], b1[2];
        int expect;
        const char *what;
    } seg_case;
    const double u = 0x1p-52; /* one ulp of 1 */
    const seg_case cases[] = {
        {{0, 0}, {2, 2}, {0, 2}, {2, 0}, 1, "proper crossing"},
        {{0, 0}, {2, 0}, {1, 0}, {1, 3}, 1, "T: end point on the interior"},
        {{0, 0}, {2, 0}, {2, 0}, {3, 5}, 1, "shared end point"},
        {{0, 0}, {2, 0}, {1, u}, {1, 3}, 0, "end point one ulp above the segment"},
        {{0, 0}, {2, 0}, {1, -u}, {1, 3}, 1, "end point one ulp through the segment"},
        {{0, 0}, {2, 0}, {1, 0}, {3, 0}, 1, "collinear overlapping"},
        {{0, 0}, {2, 0}, {2, 0}, {3, 0}, 1, "collinear touching at an end point"},
        {{0, 0}, {2, 0}, {2 + 2 * u, 0}, {3, 0}, 0, "collinear disjoint by one ulp"},
        {{0, 0}, {4, 4}, {1, 1}, {2, 2}, 1, "collinear, one inside the other"},
        {{0, 0}, {1, 1}, {2, 2}, {3, 3}, 0, "collinear disjoint (diagonal)"},
        {{0, 0}, {2, 0}, {0, 1}, {2, 1}, 0, "parallel disjoint"},
        {{0, 0}, {1, 0}, {2, -1}, {2, 1}, 0, "lines cross outside a"},
        {{0, 0}, {2, 0}, {1, 0}, {1, 0}, 1, "degenerate b on a"},
        {{0, 0}, {2, 0}, {1, 1}, {1, 1}, 0, "degenerate b off a"},
        {{0, 0}, {2, 0}, {3, 0}, {3, 0}, 0, "degenerate b on the line, outside"},
        {{1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, "two equal points"},
        {{0.1, 0.1}, {0.3, 0.3}, {0.2, 0.2}, {0.2, 0.2}, 0, "0.2 is not exactly on the line 0.1-0.3"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const seg_case *c = &cases[i];
        int want = c->expect;
        if (i == sizeof cases / sizeof cases[0] - 1) /* rounded decimals: decide exactly */
            want =
                ref_orient2d(c->a0, c->a1, c->b0) == 0 && (c->b0[0] - c->a0[0]) * (c->b0[0] - c->a1[0]) <= 0;
        ck_assert_msg(ct_segments_intersect_2d(c->a0, c->a1, c->b0, c->b1) == want, "%s", c->what);
        ck_assert_msg(ct_segments_intersect_2d(c->b1, c->b0, c->a0, c->a1) == want, "%s (swapped)", c->what);
        ck_assert_msg(ct_segments_intersect_2d(c->a1, c->a0, c->b1, c->b0) == want, "%s (reversed)", c->what);
    }
}
END_TEST

START_TEST(test_segment_triangle_cases)
{
    typedef struct {
        double a0[3], a1[3];
        int expect;
        const char *what;
    } st_case;
    const double u = 0x1p-52;
    const double t0[3] = {0, 0, 0}, t1[3] = {4, 0, 0}, t2[3] = {0, 4, 0};
    const st_case cases[] = {
        {{1, 1, -1}, {1, 1, 1}, 1, "proper crossing of the interior"},
        {{1, 1, 0}, {1, 1, 1}, 1, "end point on the interior"},
        {{1, 1, u}, {1, 1, 1}, 0, "end point one ulp above the interior"},
        {{2, 0, -1}, {2, 0, 1}, 1, "through an edge"},
        {{2, 2, -1}, {2, 2, 1}, 1, "through the hypotenuse"},
        {{2, 2 + 4 * u, -1}, {2, 2 + 4 * u, 1}, 0, "beside the hypotenuse by ulps"},
        {{0, 0, -1}, {0, 0, 1}, 1, "through a vertex"},
        {{4, 0, 0}, {5, 5, 5}, 1, "end point on a vertex"},
        {{-1, 1, 0}, {1, 1, 0}, 1, "coplanar, crossing an edge"},
        {{1, 1, 0}, {2, 1, 0}, 1, "coplanar, inside"},
        {{-1, 2, 0}, {0, 2, 0}, 1, "coplanar, touching an edge at its end"},
        {{-2, 2, 0}, {-1, 2, 0}, 0, "coplanar, disjoint"},
        {{-1, 0, 0}, {5, 0, 0}, 1, "coplanar, along an edge (overlapping)"},
        {{5, 0, 0}, {6, 0, 0}, 0, "coplanar, on an edge's line beyond the triangle"},
        {{3, 3, 0}, {5, -1, 0}, 0, "coplanar, parallel to the hypotenuse outside"},
        {{-1, 5, 0}, {5, -1, 0}, 1, "coplanar, along the hypotenuse's line"},
        {{1, 1, 1}, {2, 1, 1}, 0, "parallel above"},
        {{5, 5, -1}, {5, 5, 1}, 0, "crossing the plane outside"},
        {{1, 1, 1}, {1, 1, 2}, 0, "pointing at the interior, stopping short"},
        {{1, 1, 0}, {1, 1, 0}, 1, "degenerate segment on the triangle"},
        {{1, 1, 1}, {1, 1, 1}, 0, "degenerate segment above"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const st_case *c = &cases[i];
        ck_assert_msg(ct_segment_triangle_intersect(c->a0, c->a1, t0, t1, t2) == c->expect, "%s", c->what);
        ck_assert_msg(ct_segment_triangle_intersect(c->a1, c->a0, t1, t2, t0) == c->expect, "%s (permuted)",
                      c->what);
        ck_assert_msg(ct_segment_triangle_intersect(c->a0, c->a1, t0, t2, t1) == c->expect, "%s (flipped)",
                      c->what);
        /* The same configuration on a tilted plane: (x, y, z) -> (x, y, z + x + 2y) keeps the
         * coordinates exact and the incidences unchanged (an invertible linear map). */
        double b0[3] = {c->a0[0], c->a0[1], c->a0[2] + c->a0[0] + 2 * c->a0[1]};
        double b1[3] = {c->a1[0], c->a1[1], c->a1[2] + c->a1[0] + 2 * c->a1[1]};
        if (fabs(c->a0[2]) < 1e-3 && c->a0[2] != 0.0) continue; /* ulp offsets do not survive */
        double s0[3] = {0, 0, 0}, s1[3] = {4, 0, 4}, s2[3] = {0, 4, 8};
        ck_assert_msg(ct_segment_triangle_intersect(b0, b1, s0, s1, s2) == c->expect, "%s (tilted)", c->what);
    }
    /* Degenerate (collinear) triangles: the set is a segment. */
    const double d0[3] = {0, 0, 0}, d1[3] = {2, 2, 2}, d2[3] = {4, 4, 4};
    const double p0[3] = {1, 1, 0}, p1[3] = {1, 1, 4}, q0[3] = {1, 2, 0}, q1[3] = {1, 2, 4};
    const double r0[3] = {5, 5, 5}, r1[3] = {6, 6, 6}, w0[3] = {3, 3, 3}, w1[3] = {9, 9, 9};
    ck_assert_int_eq(ct_segment_triangle_intersect(p0, p1, d0, d1, d2), 1); /* crosses at (1,1,1) */
    ck_assert_int_eq(ct_segment_triangle_intersect(q0, q1, d0, d1, d2), 0); /* skew */
    ck_assert_int_eq(ct_segment_triangle_intersect(r0, r1, d0, d2, d1), 0); /* collinear, beyond */
    ck_assert_int_eq(ct_segment_triangle_intersect(w0, w1, d2, d0, d1), 1); /* collinear overlap */
    ck_assert_int_eq(ct_segment_triangle_intersect(d1, d1, d0, d0, d0), 0); /* point vs point */
    ck_assert_int_eq(ct_segment_triangle_intersect(d0, d0, d0, d0, d0), 1);
}
END_TEST

/* ---------------------------------------------------------------- separating-axis reference */

typedef struct {
    int64_t v[3];
} iv3;

static iv3 icross(iv3 a, iv3 b)
{
    iv3 r = {{a.v[1] * b.v[2] - a.v[2] * b.v[1], a.v[2] * b.v[0] - a.v[0] * b.v[2],
              a.v[0] * b.v[1] - a.v[1] * b.v[0]}};
    return r;
}

static iv3 isub(const int *a, const int *b)
{
    iv3 r = {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}};
    return r;
}

/* Are the convex hulls of point sets P (np points) and Q (nq points) strictly separated along
 * axis n? */
static int separated(iv3 n, const int (*P)[3], int np, const int (*Q)[3], int nq)
{
    if (!n.v[0] && !n.v[1] && !n.v[2]) return 0;
    i128 pmin = 0, pmax = 0, qmin = 0, qmax = 0;
    for (int i = 0; i < np; ++i) {
        i128 s = (i128)n.v[0] * P[i][0] + (i128)n.v[1] * P[i][1] + (i128)n.v[2] * P[i][2];
        if (!i || s < pmin) pmin = s;
        if (!i || s > pmax) pmax = s;
    }
    for (int i = 0; i < nq; ++i) {
        i128 s = (i128)n.v[0] * Q[i][0] + (i128)n.v[1] * Q[i][1] + (i128)n.v[2] * Q[i][2];
        if (!i || s < qmin) qmin = s;
        if (!i || s > qmax) qmax = s;
    }
    return pmax < qmin || qmax < pmin;
}

/* Do the hulls of P and Q intersect? Candidate axes: the edge directions D of both sets and
 * the coordinate axes, their pairwise cross products (facet normals of a full-dimensional
 * Minkowski difference) and the cross products of those with D again (in-plane edge normals
 * when the difference is flat, or normals of a line). This set is complete for hulls of at
 * most three points each. */
static int sat_intersect(const int (*P)[3], int np, const int (*Q)[3], int nq)
{
    iv3 D[12];
    int nd = 0;
    for (int i = 0; i < np; ++i)
        for (int j = i + 1; j < np; ++j) D[nd++] = isub(P[j], P[i]);
    for (int i = 0; i < nq; ++i)
        for (int j = i + 1; j < nq; ++j) D[nd++] = isub(Q[j], Q[i]);
    for (int k = 0; k < 3; ++k) {
        iv3 e = {{k == 0, k == 1, k == 2}};
        D[nd++] = e;
    }
    for (int i = 0; i < nd; ++i) {
        if (separated(D[i], P, np, Q, nq)) return 0;
        for (int j = i + 1; j < nd; ++j) {
            iv3 c = icross(D[i], D[j]);
            if (separated(c, P, np, Q, nq)) return 0;
            for (int k = 0; k < nd; ++k)
                if (separated(icross(c, D[k]), P, np, Q, nq)) return 0;
        }
    }
    return 1;
}

START_TEST(test_random_vs_sat)
{
    long n2 = 0, hit2 = 0, n3 = 0, hit3 = 0, coplanar = 0;
    for (int it = 0; it < 30000; ++it) {
        const int R = it % 3 == 0 ? 2 : it % 3 == 1 ? 4 : 40;
        /* 2D segments (z = 0) */
        int P[3][3] = {{0}}, Q[3][3] = {{0}};
        for (int i = 0; i < 2; ++i)
            for (int k = 0; k < 2; ++k) P[i][k] = irand(-R, R), Q[i][k] = irand(-R, R);
        double a0[2] = {P[0][0], P[0][1]}, a1[2] = {P[1][0], P[1][1]}, b0[2] = {Q[0][0], Q[0][1]},
               b1[2] = {Q[1][0], Q[1][1]};
        int ref = sat_intersect((const int(*)[3])P, 2, (const int(*)[3])Q, 2);
        REQUIRE(ct_segments_intersect_2d(a0, a1, b0, b1) == ref, "differs from SAT (line %d)", __LINE__);
        n2++, hit2 += ref;

        /* 3D segment and triangle; every fourth one coplanar (z = alpha x + beta y + gamma) */
        int cop = it % 4 == 0;
        int al = irand(-2, 2), be = irand(-2, 2), ga = irand(-2, 2);
        for (int i = 0; i < 3; ++i) {
            for (int k = 0; k < 3; ++k) Q[i][k] = irand(-R, R);
            if (cop) Q[i][2] = al * Q[i][0] + be * Q[i][1] + ga;
        }
        for (int i = 0; i < 2; ++i) {
            for (int k = 0; k < 3; ++k) P[i][k] = irand(-R, R);
            if (cop) P[i][2] = al * P[i][0] + be * P[i][1] + ga;
        }
        double s0[3], s1[3], t[3][3];
        for (int k = 0; k < 3; ++k) {
            s0[k] = P[0][k], s1[k] = P[1][k];
            for (int i = 0; i < 3; ++i) t[i][k] = Q[i][k];
        }
        ref = sat_intersect((const int(*)[3])P, 2, (const int(*)[3])Q, 3);
        REQUIRE(ct_segment_triangle_intersect(s0, s1, t[0], t[1], t[2]) == ref, "differs from SAT (line %d)",
                __LINE__);
        n3++, hit3 += ref, coplanar += cop;
    }
    printf("random integer configurations vs separating axes: 2D %ld (%ld intersecting), "
           "3D %ld (%ld intersecting, %ld coplanar)\n",
           n2, hit2, n3, hit3, coplanar);
    ck_assert_int_gt(hit2, n2 / 10);
    ck_assert_int_gt(hit3, n3 / 20);
}
END_TEST

/* ---------------------------------------------------------------- surfaces */

/* One mesh holding both meshes a and b (vertices and elements of b renumbered). */
static void concat(const ct_mesh *a, const ct_mesh *b, ct_mesh *m)
{
    const int d = a->dim, npe = d + 1;
    ct_mesh_init(m);
    m->dim = d;
    m->nv = a->nv + b->nv;
    m->ne = a->ne + b->ne;
    m->X = malloc(sizeof(double) * (size_t)m->nv * d);
    m->elem = malloc(sizeof(int) * (size_t)m->ne * npe);
    ck_assert(m->X && m->elem);
    memcpy(m->X, a->X, sizeof(double) * (size_t)a->nv * d);
    memcpy(m->X + (size_t)a->nv * d, b->X, sizeof(double) * (size_t)b->nv * d);
    memcpy(m->elem, a->elem, sizeof(int) * (size_t)a->ne * npe);
    for (long i = 0; i < (long)b->ne * npe; ++i) m->elem[(long)a->ne * npe + i] = b->elem[i] + a->nv;
}

/* Closed boxes of n cells of `nper` vertices (lo then hi, dim each). */
static double *boxes_of(const int *cells, int n, int nper, int dim, const double *x)
{
    double *bx = malloc(sizeof(double) * 2 * dim * (n > 0 ? n : 1));
    ck_assert_ptr_nonnull(bx);
    for (int c = 0; c < n; ++c)
        for (int k = 0; k < dim; ++k) {
            double lo = x[dim * cells[nper * c] + k], hi = lo;
            for (int v = 1; v < nper; ++v)
                lo = fmin(lo, x[dim * cells[nper * c + v] + k]),
                hi = fmax(hi, x[dim * cells[nper * c + v] + k]);
            bx[2 * dim * c + k] = lo;
            bx[2 * dim * c + dim + k] = hi;
        }
    return bx;
}

/* Brute force over every pair (no BVH): 3D edges x faces, 2D segments x segments (a < b),
 * with a cheap box rejection before the exact test. */
static long brute_count(const ct_surface *s, const double *x, ct_intersection *out, long cap)
{
    long n = 0;
    const int three = s->dim == 3, d = s->dim, nb = three ? s->nf : s->ned, nper = three ? 3 : 2;
    const int *cb = three ? s->faces : s->edges;
    double *ba = boxes_of(s->edges, s->ned, 2, d, x), *bb = boxes_of(cb, nb, nper, d, x);
    for (int i = 0; i < s->ned; ++i) {
        const int *e = s->edges + 2 * i;
        const double *A = ba + 2 * d * i;
        for (int j = three ? 0 : i + 1; j < nb; ++j) {
            const double *B = bb + 2 * d * j;
            int apart = 0;
            for (int k = 0; k < d; ++k) apart |= A[d + k] < B[k] || B[d + k] < A[k];
            if (apart) continue;
            const int *f = cb + nper * j;
            int shared = 0;
            for (int p = 0; p < 2; ++p)
                for (int q = 0; q < nper; ++q) shared |= e[p] == f[q];
            if (shared) continue;
            int hit = three
                          ? ct_segment_triangle_intersect(x + 3 * e[0], x + 3 * e[1], x + 3 * f[0],
                                                          x + 3 * f[1], x + 3 * f[2])
                          : ct_segments_intersect_2d(x + 2 * e[0], x + 2 * e[1], x + 2 * f[0], x + 2 * f[1]);
            if (!hit) continue;
            if (n < cap) out[n].a = i, out[n].b = j;
            ++n;
        }
    }
    free(ba);
    free(bb);
    return n;
}

/* Compare the BVH verifier with brute force at positions x (the second body shifted by
 * `shift` from the rest positions); returns the count. */
static long compare_counts(const ct_mesh *m, const ct_surface *s, int nv_first, const double *shift,
                           const char *what)
{
    const int d = m->dim;
    double *x = malloc(sizeof(double) * (size_t)m->nv * d);
    ck_assert_ptr_nonnull(x);
    for (int v = 0; v < m->nv; ++v)
        for (int k = 0; k < d; ++k) x[v * d + k] = m->X[v * d + k] + (v >= nv_first ? shift[k] : 0.0);
    enum { CAP = 200000 };
    ct_intersection *bf = malloc(sizeof *bf * CAP), *bv = malloc(sizeof *bv * CAP);
    ck_assert(bf && bv);
    double t0 = omp_get_wtime();
    long nb = brute_count(s, x, bf, CAP);
    double t1 = omp_get_wtime();
    long n1 = ct_surface_intersections(s, x, 1, bv, CAP);
    double t2 = omp_get_wtime();
    ck_assert_int_eq(n1, nb);
    for (long i = 0; i < (nb < CAP ? nb : CAP); ++i) {
        ck_assert_int_eq(bv[i].a, bf[i].a);
        ck_assert_int_eq(bv[i].b, bf[i].b);
    }
    /* deterministic for any thread count; capped output is the prefix */
    long n2 = ct_surface_intersections(s, x, 2, bv, 3);
    ck_assert_int_eq(n2, nb);
    for (long i = 0; i < (nb < 3 ? nb : 3); ++i) ck_assert(bv[i].a == bf[i].a && bv[i].b == bf[i].b);
    ck_assert_int_eq(ct_surface_intersections(s, x, 0, NULL, 0), nb);
    printf("%s: %ld intersecting pairs (brute force %.2f ms, BVH %.2f ms)\n", what, nb, 1e3 * (t1 - t0),
           1e3 * (t2 - t1));
    free(x);
    free(bf);
    free(bv);
    return nb;
}

START_TEST(test_surface_boxes)
{
    const double o[3] = {0, 0, 0}, sz[3] = {1, 1, 1};
    const int cells[3] = {4, 3, 5};
    ct_mesh a, b, m;
    ck_assert_int_eq(ct_mesh_box(&a, o, sz, cells), CT_OK);
    ck_assert_int_eq(ct_mesh_box(&b, o, sz, cells), CT_OK);
    concat(&a, &b, &m);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);

    const double far[3] = {1.25, 0.1, -0.2};         /* separated by a gap of 0.25 */
    const double touch[3] = {1.0, 0.0, 0.0};         /* face to face: coplanar contact */
    const double pierce[3] = {0.5371, 0.2113, 0.31}; /* generic overlap */
    const double corner[3] = {0.9, 0.9, 0.9};        /* corners overlapping */
    ck_assert_int_eq(compare_counts(&m, &s, a.nv, far, "boxes separated"), 0);
    ck_assert_int_gt(compare_counts(&m, &s, a.nv, touch, "boxes face to face"), 0);
    ck_assert_int_gt(compare_counts(&m, &s, a.nv, pierce, "boxes overlapping"), 0);
    ck_assert_int_gt(compare_counts(&m, &s, a.nv, corner, "boxes overlapping at a corner"), 0);

    /* A single box: adjacent primitives share vertices, nothing else touches. */
    ct_surface s1;
    ck_assert_int_eq(ct_surface_build(&s1, &a, NULL), CT_OK);
    ck_assert_int_eq(ct_surface_intersections(&s1, a.X, 0, NULL, 0), 0);

    ct_surface_free(&s1);
    ct_surface_free(&s);
    ct_mesh_free(&m);
    ct_mesh_free(&a);
    ct_mesh_free(&b);
}
END_TEST

START_TEST(test_surface_cubes_exact)
{
    /* Two single-cell unit cubes, the second shifted by (0.5, 0.25, 0.125). No face planes
     * coincide, so every intersecting edge/face pair crosses at a single point, which is
     * computed here directly: the faces are axis-aligned (constant coordinate k = c), the
     * crossing parameter along the edge is (c - p_k)/(q_k - p_k) with q_k - p_k = ±1, and all
     * numbers are dyadic with few bits, so this plain arithmetic is exact. */
    const double o[3] = {0, 0, 0}, sz[3] = {1, 1, 1};
    const int cells[3] = {1, 1, 1};
    ct_mesh a, b, m;
    ck_assert_int_eq(ct_mesh_box(&a, o, sz, cells), CT_OK);
    ck_assert_int_eq(ct_mesh_box(&b, o, sz, cells), CT_OK);
    concat(&a, &b, &m);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    const double sh[3] = {0.5, 0.25, 0.125};
    double *x = malloc(sizeof(double) * 3 * m.nv);
    ck_assert_ptr_nonnull(x);
    for (int v = 0; v < m.nv; ++v)
        for (int k = 0; k < 3; ++k) x[3 * v + k] = m.X[3 * v + k] + (v >= a.nv ? sh[k] : 0.0);
    long expect = 0;
    for (int e = 0; e < s.ned; ++e)
        for (int f = 0; f < s.nf; ++f) {
            const int *ev = s.edges + 2 * e, *fv = s.faces + 3 * f;
            if ((ev[0] < a.nv) == (fv[0] < a.nv)) continue; /* same cube: no crossings */
            const double *p = x + 3 * ev[0], *q = x + 3 * ev[1];
            const double *A = x + 3 * fv[0], *B = x + 3 * fv[1], *C = x + 3 * fv[2];
            int k = -1; /* the face's constant axis */
            for (int c = 0; c < 3; ++c)
                if (A[c] == B[c] && B[c] == C[c]) k = c;
            ck_assert_int_ge(k, 0);
            ck_assert(p[k] != A[k] || q[k] != A[k]); /* never coplanar with this shift */
            if (p[k] == q[k] || A[k] < fmin(p[k], q[k]) || A[k] > fmax(p[k], q[k])) continue;
            double lam = (A[k] - p[k]) / (q[k] - p[k]);
            int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
            double X[2] = {p[i1] + lam * (q[i1] - p[i1]), p[i2] + lam * (q[i2] - p[i2])};
            double T[3][2] = {{A[i1], A[i2]}, {B[i1], B[i2]}, {C[i1], C[i2]}};
            double w[3];
            for (int r = 0; r < 3; ++r) {
                const double *u0 = T[r], *u1 = T[(r + 1) % 3];
                w[r] = (u1[0] - u0[0]) * (X[1] - u0[1]) - (u1[1] - u0[1]) * (X[0] - u0[0]);
            }
            if ((w[0] >= 0 && w[1] >= 0 && w[2] >= 0) || (w[0] <= 0 && w[1] <= 0 && w[2] <= 0)) ++expect;
        }
    long got = ct_surface_intersections(&s, x, 0, NULL, 0);
    printf("two unit cubes shifted by (0.5, 0.25, 0.125): %ld edge/face crossings (direct count %ld)\n", got,
           expect);
    ck_assert_int_eq(got, expect);
    ck_assert_int_gt(expect, 0);
    free(x);
    ct_surface_free(&s);
    ct_mesh_free(&m);
    ct_mesh_free(&a);
    ct_mesh_free(&b);
}
END_TEST

START_TEST(test_surface_rects)
{
    const double o[2] = {0, 0}, sz[2] = {1, 0.5};
    ct_mesh a, b, m;
    ck_assert_int_eq(ct_mesh_rect(&a, o, sz, 20, 10), CT_OK);
    ck_assert_int_eq(ct_mesh_rect(&b, o, sz, 20, 10), CT_OK);
    concat(&a, &b, &m);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    const double far[2] = {1.01, 0.3}, touch[2] = {1.0, 0.2}, pierce[2] = {0.3771, 0.1234};
    ck_assert_int_eq(compare_counts(&m, &s, a.nv, far, "rects separated"), 0);
    ck_assert_int_gt(compare_counts(&m, &s, a.nv, touch, "rects side by side (touching)"), 0);
    /* Generic overlap of two rectangles' boundaries: the boundaries cross at exactly 2 points,
     * each inside one segment of each boundary (generic shift: no vertex on a segment). */
    ck_assert_int_eq(compare_counts(&m, &s, a.nv, pierce, "rects overlapping"), 2);
    ct_surface s1;
    ck_assert_int_eq(ct_surface_build(&s1, &a, NULL), CT_OK);
    ck_assert_int_eq(ct_surface_intersections(&s1, a.X, 0, NULL, 0), 0);
    ct_surface_free(&s1);
    ct_surface_free(&s);
    ct_mesh_free(&m);
    ct_mesh_free(&a);
    ct_mesh_free(&b);
}
END_TEST

START_TEST(test_surface_large)
{
    /* A bigger case for timing: two 20^3-cell boxes overlapping. */
    const double o[3] = {0, 0, 0}, sz[3] = {1, 1, 1};
    const int cells[3] = {20, 20, 20};
    ct_mesh a, b, m;
    ck_assert_int_eq(ct_mesh_box(&a, o, sz, cells), CT_OK);
    ck_assert_int_eq(ct_mesh_box(&b, o, sz, cells), CT_OK);
    concat(&a, &b, &m);
    ct_surface s;
    ck_assert_int_eq(ct_surface_build(&s, &m, NULL), CT_OK);
    const double sh[3] = {0.5137, 0.3019, 0.2271};
    compare_counts(&m, &s, a.nv, sh, "20^3 boxes overlapping");
    ct_surface_free(&s);
    ct_mesh_free(&m);
    ct_mesh_free(&a);
    ct_mesh_free(&b);
}
END_TEST

static Suite *intersect_suite(void)
{
    Suite *s = suite_create("intersect");
    TCase *tc = tcase_create("intersect");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_orient_random);
    tcase_add_test(tc, test_orient2d_near_degenerate);
    tcase_add_test(tc, test_orient3d_near_degenerate);
    tcase_add_test(tc, test_orient_speed);
    tcase_add_test(tc, test_segments_2d_cases);
    tcase_add_test(tc, test_segment_triangle_cases);
    tcase_add_test(tc, test_random_vs_sat);
    tcase_add_test(tc, test_surface_boxes);
    tcase_add_test(tc, test_surface_cubes_exact);
    tcase_add_test(tc, test_surface_rects);
    tcase_add_test(tc, test_surface_large);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(intersect_suite)
