/* check_ccd.c — additive CCD (ct_accd).
 *
 * Expected values are derived independently of the code under test:
 *  - closed-form times of impact of hand-built trajectories (falling point, stretching edge,
 *    a rotating edge approximated by its chord, near-parallel edges), and the first ACCD
 *    step (1 - s)·d0/l_p computed by hand;
 *  - for random linear trajectories, the configuration at dense sample times in [0, toi] is
 *    checked with the exact predicates of ct_intersect.h (no intersection, and no change of
 *    the orientation sign of the stencil while the primitives overlap in projection), and
 *    toi is compared with the exact time of impact found by root bracketing of the coplanarity
 *    determinant in long double (PT, EE: cubic; PE: quadratic; PP: the quadratic
 *    |r + t v|² = ξ²).
 */
#include "ct_test_util.h"

#include "contactlab/ct_ccd.h"
#include "contactlab/ct_intersect.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

/* Check's ck_assert records every passing assertion (a write to a pipe, microseconds each):
 * hot loops use this instead, which only calls into Check on failure. */
#define REQUIRE(cond, ...)                      \
    do {                                        \
        if (!(cond)) ck_abort_msg(__VA_ARGS__); \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double urand(void) /* uniform in [-1, 1) (xorshift64*) */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-52 - 1.0;
}

static double u01(void) { return 0.5 * (urand() + 1.0); }

static int accd(ct_ccd_kind k, int dim, const double *x, const double *dx, double tmax, double s, double xi,
                double *toi)
{
    ct_ccd_opts o = ct_ccd_default_opts();
    o.s = s;
    o.thickness = xi;
    return ct_accd(k, dim, x, dx, tmax, &o, toi);
}

static int nverts(ct_ccd_kind k) { return k == CT_CCD_PP ? 2 : k == CT_CCD_PE ? 3 : 4; }

/* ---------------------------------------------------------------- closed-form cases */

START_TEST(test_defaults)
{
    ct_ccd_opts o = ct_ccd_default_opts();
    ck_assert_double_eq(o.s, 0.1);
    ck_assert_double_eq(o.thickness, 0.0);
    ck_assert_int_eq(o.max_iters, 1000000);
}
END_TEST

START_TEST(test_point_falls_on_triangle)
{
    /* p = (0.2, 0.3, 1) falls at speed 2 onto the static triangle z = 0: impact at t = 0.5.
     * Relative displacements after removing the mean (0,0,-0.5): p (0,0,-1.5), triangle
     * (0,0,0.5) each, so l_p = 2 equals the closing speed and ACCD's first step is
     * (1 - s)·d0/l_p = 0.45; the next iterate is at distance 0.01 < s·d0: toi = 0.45. */
    double x[12] = {0.2, 0.3, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0};
    double dx[12] = {0, 0, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    double toi;
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, dx, 1.0, 0.1, 0.0, &toi), 1);
    printf("point onto triangle: toi %.6f, exact 0.5 (ratio %.3f)\n", toi, toi / 0.5);
    ck_assert(toi <= 0.5 && toi >= 0.8 * 0.5);
    ck_assert(fabs(toi - 0.45) < 1e-12);

    /* the same relative motion with the triangle rising and the point falling */
    double dx2[12] = {0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 1};
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, dx2, 1.0, 0.1, 0.0, &toi), 1);
    ck_assert(toi <= 0.5 && toi >= 0.8 * 0.5);

    /* thickness xi = 0.1: contact at distance xi, t = (1 - 0.1)/2 = 0.45 */
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, dx, 1.0, 0.1, 0.1, &toi), 1);
    printf("point onto triangle, thickness 0.1: toi %.6f, exact 0.45\n", toi);
    ck_assert(toi <= 0.45 && toi >= 0.8 * 0.45);

    /* a smaller s gets closer: toi in [(1 - s) t*, t*] for head-on motion */
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, dx, 1.0, 0.01, 0.0, &toi), 1);
    ck_assert(toi <= 0.5 && toi >= 0.99 * 0.5 - 1e-12);

    /* tmax before the impact: safe, toi = tmax */
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, dx, 0.3, 0.1, 0.0, &toi), 0);
    ck_assert_double_eq(toi, 0.3);
    /* tmax between toi and the impact: still reported */
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, dx, 0.49, 0.1, 0.0, &toi), 1);
    ck_assert(toi <= 0.49);

    /* the point misses the triangle (falls beside it at x = 2): the gap stops ACCD only if the
     * distance drops below s·d0, which it does not here (min distance 1 vs 0.1·√(1+1) ) */
    double xm[12] = {2, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0};
    ck_assert_int_eq(accd(CT_CCD_PT, 3, xm, dx, 1.0, 0.1, 0.0, &toi), 0);
    ck_assert_double_eq(toi, 1.0);
}
END_TEST

START_TEST(test_point_through_stretching_edge)
{
    /* 2D: edge e0 = (-1,0) -> (-3,0), e1 = (1,0) -> (3,0) stretches while p = (1.5, 1) falls at
     * speed 2. The edge at t spans [-1-2t, 1+2t] on y = 0, so p (x = 1.5 > 1: initially beyond
     * the end point e1) hits the interior at t = 0.5, when the edge reaches |x| = 2. */
    double x[6] = {1.5, 1, -1, 0, 1, 0};
    double dx[6] = {0, -2, -2, 0, 2, 0};
    double toi;
    ck_assert_int_eq(accd(CT_CCD_PE, 2, x, dx, 1.0, 0.1, 0.0, &toi), 1);
    printf("point through a stretching edge (2D): toi %.6f, exact 0.5 (ratio %.3f)\n", toi, toi / 0.5);
    ck_assert(toi <= 0.5 && toi >= 0.8 * 0.5);
    /* the configuration at toi is intersection-free and still above the edge */
    double y[6];
    for (int i = 0; i < 6; ++i) y[i] = x[i] + toi * dx[i];
    ck_assert_int_eq(ct_segments_intersect_2d(y, y, y + 2, y + 4), 0);

    /* max_iters = 1: one step of (1 - s)(d0 - xi)/l_p. mean dx = (0, -2/3); relative
     * p (0, -4/3), e0 (-2, 2/3), e1 (2, 2/3): l_p = 4/3 + sqrt(4 + 4/9); d0 = |p - e1| =
     * sqrt(0.25 + 1). */
    ct_ccd_opts o = ct_ccd_default_opts();
    o.max_iters = 1; /* the budget runs out: 2, with the safe (unresolved) t */
    ck_assert_int_eq(ct_accd(CT_CCD_PE, 2, x, dx, 1.0, &o, &toi), 2);
    double lp = 4.0 / 3.0 + sqrt(4.0 + 4.0 / 9.0), d0 = sqrt(1.25);
    ck_assert(fabs(toi - 0.9 * d0 / lp) < 1e-12);

    /* 3D version of the same motion (z = 0.25 constant for all): same impact time */
    double x3[9] = {1.5, 1, 0.25, -1, 0, 0.25, 1, 0, 0.25};
    double dx3[9] = {0, -2, 0, -2, 0, 0, 2, 0, 0};
    ck_assert_int_eq(accd(CT_CCD_PE, 3, x3, dx3, 1.0, 0.1, 0.0, &toi), 1);
    ck_assert(toi <= 0.5 && toi >= 0.8 * 0.5);
}
END_TEST

START_TEST(test_rotating_edge)
{
    /* Edge a on the x axis, from (-1,0,0) to (1,0,0), static. Edge b rotates in the plane
     * x = 0.3 about its end point b0 = (0.3,-1,0.5), length 2, from angle 0 to -60 degrees;
     * its other end follows the chord b1(t) = (0.3, 1 - t, 0.5 - sqrt(3) t). b meets a where
     * its line passes through (0.3, 0, 0), i.e. when b1 - b0 = (0, 2 - t, -sqrt(3) t) is
     * parallel to (0, 1, -0.5): (2 - t)(-0.5) + sqrt(3) t = 0, t* = 1/(0.5 + sqrt(3)), with
     * the crossing point at parameter 1/(2 - t*) in (0, 1) of b. */
    const double ts = 1.0 / (0.5 + sqrt(3.0));
    double x[12] = {-1, 0, 0, 1, 0, 0, 0.3, -1, 0.5, 0.3, 1, 0.5};
    double dx[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -sqrt(3.0)};
    double toi;
    ck_assert_int_eq(accd(CT_CCD_EE, 3, x, dx, 1.0, 0.1, 0.0, &toi), 1);
    printf("rotating edge (EE): toi %.6f, exact %.6f (ratio %.3f)\n", toi, ts, toi / ts);
    ck_assert(toi <= ts && toi >= 0.5 * ts);
    /* orientation of the stencil: same sign at 0 and toi, opposite at 1 (it crosses) */
    double y0[12], y1[12], y2[12];
    for (int i = 0; i < 12; ++i) y0[i] = x[i], y1[i] = x[i] + toi * dx[i], y2[i] = x[i] + dx[i];
    int s0 = ct_orient3d(y0, y0 + 3, y0 + 6, y0 + 9), s1 = ct_orient3d(y1, y1 + 3, y1 + 6, y1 + 9),
        s2 = ct_orient3d(y2, y2 + 3, y2 + 6, y2 + 9);
    ck_assert(s0 != 0 && s0 == s1 && s2 == -s0);
    /* with the edge roles swapped (b first) the answer is the same */
    double xs[12], dxs[12];
    memcpy(xs, x + 6, 6 * sizeof(double)), memcpy(xs + 6, x, 6 * sizeof(double));
    memcpy(dxs, dx + 6, 6 * sizeof(double)), memcpy(dxs + 6, dx, 6 * sizeof(double));
    double toi2;
    ck_assert_int_eq(accd(CT_CCD_EE, 3, xs, dxs, 1.0, 0.1, 0.0, &toi2), 1);
    ck_assert(toi2 <= ts && toi2 >= 0.5 * ts);
}
END_TEST

START_TEST(test_parallel_edges)
{
    /* Near-parallel: b from (-1, 1e-9, 1) to (1, -1e-9, 1) falls at speed 2 onto a on the x
     * axis; it crosses the x axis at x = 0, so the edges meet at t = 0.5. */
    double x[12] = {-1, 0, 0, 1, 0, 0, -1, 1e-9, 1, 1, -1e-9, 1};
    double dx[12] = {0, 0, 0, 0, 0, 0, 0, 0, -2, 0, 0, -2};
    double toi;
    ck_assert_int_eq(accd(CT_CCD_EE, 3, x, dx, 1.0, 0.1, 0.0, &toi), 1);
    printf("near-parallel edges: toi %.6f, exact 0.5\n", toi);
    ck_assert(toi <= 0.5 && toi >= 0.8 * 0.5);
    /* exactly parallel and coincident in projection (the aligned grid case) */
    double xp[12] = {-1, 0, 0, 1, 0, 0, -1, 0, 1, 1, 0, 1};
    ck_assert_int_eq(accd(CT_CCD_EE, 3, xp, dx, 1.0, 0.1, 0.0, &toi), 1);
    printf("parallel coincident edges: toi %.6f, exact 0.5\n", toi);
    ck_assert(toi <= 0.5 && toi >= 0.8 * 0.5);
    /* parallel, offset by 0.5 sideways: b passes beside a at distance 0.5 >= 0.1 d0 (d0 =
     * sqrt(1.25)): no collision */
    double xo[12] = {-1, 0, 0, 1, 0, 0, -1, 0.5, 1, 1, 0.5, 1};
    ck_assert_int_eq(accd(CT_CCD_EE, 3, xo, dx, 1.0, 0.1, 0.0, &toi), 0);
    ck_assert_double_eq(toi, 1.0);
}
END_TEST

START_TEST(test_point_point)
{
    /* Head-on with thickness 0.1: |b - a| = 1 - 2t reaches 0.1 at t = 0.45 (2D and 3D). */
    double x2[4] = {0, 0, 1, 0}, dx2[4] = {1, 0, -1, 0};
    double x3[6] = {0, 0, 0, 0, 1, 0}, dx3[6] = {0, 1, 0, 0, -1, 0};
    double toi;
    ck_assert_int_eq(accd(CT_CCD_PP, 2, x2, dx2, 1.0, 0.1, 0.1, &toi), 1);
    ck_assert(toi <= 0.45 && toi >= 0.8 * 0.45);
    ck_assert_int_eq(accd(CT_CCD_PP, 3, x3, dx3, 1.0, 0.1, 0.1, &toi), 1);
    ck_assert(toi <= 0.45 && toi >= 0.8 * 0.45);
    /* a common translation (l_p = 0): never collides */
    double tr[4] = {5, -3, 5, -3};
    ck_assert_int_eq(accd(CT_CCD_PP, 2, x2, tr, 2.0, 0.1, 0.1, &toi), 0);
    ck_assert_double_eq(toi, 2.0);
}
END_TEST

START_TEST(test_separating_and_contact)
{
    double toi;
    /* point moving away from the triangle */
    double x[12] = {0.2, 0.3, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0};
    double away[12] = {0, 0, 2, 0, 0, -1, 0, 0, -1, 0, 0, -1};
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, away, 1.0, 0.1, 0.0, &toi), 0);
    ck_assert_double_eq(toi, 1.0);
    /* edges sliding apart */
    double xe[12] = {-1, 0, 0, 1, 0, 0, 0, -1, 0.1, 0, 1, 0.1};
    double de[12] = {0, 0, -1, 0, 0, -1, 0, 0, 1, 0, 0, 1};
    ck_assert_int_eq(accd(CT_CCD_EE, 3, xe, de, 1.0, 0.1, 0.0, &toi), 0);
    ck_assert_double_eq(toi, 1.0);

    /* start in contact: the point on the triangle, edges crossing, point on the edge */
    double xc[12] = {0.2, 0.3, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0};
    double dc[12] = {0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_int_eq(accd(CT_CCD_PT, 3, xc, dc, 1.0, 0.1, 0.0, &toi), 1);
    ck_assert_double_eq(toi, 0.0);
    double xx[12] = {-1, 0, 0, 1, 0, 0, 0, -1, 0, 0, 1, 0};
    ck_assert_int_eq(accd(CT_CCD_EE, 3, xx, de, 1.0, 0.1, 0.0, &toi), 1);
    ck_assert_double_eq(toi, 0.0);
    double xpe[6] = {0.5, 0, 0, 0, 1, 0}, dpe[6] = {0, 1, 0, 0, 0, 0};
    ck_assert_int_eq(accd(CT_CCD_PE, 2, xpe, dpe, 1.0, 0.1, 0.0, &toi), 1);
    ck_assert_double_eq(toi, 0.0);
    /* start within the thickness (distance 0.05 < 0.1), even when moving away */
    double xt[12] = {0.2, 0.3, 0.05, 0, 0, 0, 1, 0, 0, 0, 1, 0};
    ck_assert_int_eq(accd(CT_CCD_PT, 3, xt, away, 1.0, 0.1, 0.1, &toi), 1);
    ck_assert_double_eq(toi, 0.0);
    /* no motion at all */
    double zero[12] = {0};
    ck_assert_int_eq(accd(CT_CCD_PT, 3, x, zero, 1.0, 0.1, 0.0, &toi), 0);
    ck_assert_double_eq(toi, 1.0);
    /* invalid dimension for PT: conservative answer */
    ck_assert_int_eq(accd(CT_CCD_PT, 2, x, zero, 1.0, 0.1, 0.0, &toi), 1);
    ck_assert_double_eq(toi, 0.0);
    /* NULL options = defaults */
    double dx[12] = {0, 0, -2, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    ck_assert_int_eq(ct_accd(CT_CCD_PT, 3, x, dx, 1.0, NULL, &toi), 1);
    ck_assert(fabs(toi - 0.45) < 1e-12);
}
END_TEST

/* ---------------------------------------------------------------- random trajectories */

typedef long double ld;

/* Positions of the stencil at time t in long double. */
static void pos_at(int n, const double *x, const double *dx, ld t, ld *y)
{
    for (int i = 0; i < n; ++i) y[i] = (ld)x[i] + t * (ld)dx[i];
}

static ld det3l(const ld *u, const ld *v, const ld *w)
{
    return u[0] * (v[1] * w[2] - v[2] * w[1]) + u[1] * (v[2] * w[0] - v[0] * w[2]) +
           u[2] * (v[0] * w[1] - v[1] * w[0]);
}

/* The coplanarity (collinearity) function whose roots are the candidate impact times. */
static ld coplanar_f(ct_ccd_kind k, const double *x, const double *dx, ld t)
{
    ld y[12];
    pos_at(k == CT_CCD_PE ? 6 : 12, x, dx, t, y);
    if (k == CT_CCD_PE) /* 2D: p, e0, e1 */
        return (y[4] - y[2]) * (y[1] - y[3]) - (y[5] - y[3]) * (y[0] - y[2]);
    ld u[3], v[3], w[3];
    for (int c = 0; c < 3; ++c) {
        if (k == CT_CCD_PT) /* p, t0, t1, t2 */
            u[c] = y[6 + c] - y[3 + c], v[c] = y[9 + c] - y[3 + c], w[c] = y[c] - y[3 + c];
        else /* a0, a1, b0, b1 */
            u[c] = y[3 + c] - y[c], v[c] = y[6 + c] - y[c], w[c] = y[9 + c] - y[c];
    }
    return det3l(u, v, w);
}

/* At a coplanar time: do the primitives overlap (with relative tolerance tol)? */
static int overlap_at(ct_ccd_kind k, const double *x, const double *dx, ld t, ld tol)
{
    ld y[12];
    pos_at(k == CT_CCD_PE ? 6 : 12, x, dx, t, y);
    if (k == CT_CCD_PE) {
        ld e[2] = {y[4] - y[2], y[5] - y[3]}, q[2] = {y[0] - y[2], y[1] - y[3]};
        ld s = (e[0] * q[0] + e[1] * q[1]) / (e[0] * e[0] + e[1] * e[1]);
        return s >= -tol && s <= 1 + tol;
    }
    if (k == CT_CCD_PT) { /* barycentric coordinates of the projection of p */
        ld e1[3], e2[3], q[3];
        for (int c = 0; c < 3; ++c)
            e1[c] = y[6 + c] - y[3 + c], e2[c] = y[9 + c] - y[3 + c], q[c] = y[c] - y[3 + c];
        ld a = 0, b = 0, cc = 0, d = 0, e = 0;
        for (int c = 0; c < 3; ++c)
            a += e1[c] * e1[c], b += e1[c] * e2[c], cc += e2[c] * e2[c], d += e1[c] * q[c], e += e2[c] * q[c];
        ld den = a * cc - b * b, b1 = (cc * d - b * e) / den, b2 = (a * e - b * d) / den;
        return b1 >= -tol && b2 >= -tol && b1 + b2 <= 1 + tol;
    }
    /* EE: parameters of the closest points of the two lines */
    ld da[3], db[3], r[3];
    for (int c = 0; c < 3; ++c) da[c] = y[3 + c] - y[c], db[c] = y[9 + c] - y[6 + c], r[c] = y[6 + c] - y[c];
    ld a = 0, b = 0, cc = 0, d = 0, e = 0;
    for (int c = 0; c < 3; ++c)
        a += da[c] * da[c], b += da[c] * db[c], cc += db[c] * db[c], d += da[c] * r[c], e += db[c] * r[c];
    ld den = a * cc - b * b;
    if (den <= 1e-24L * a * cc) return 0; /* parallel: not a transversal crossing */
    ld s = (d * cc - b * e) / den, u = (b * d - a * e) / den;
    return s >= -tol && s <= 1 + tol && u >= -tol && u <= 1 + tol;
}

/* A root of the coplanarity function in [ta, tb] by bisection (long double). */
static ld flip_time(ct_ccd_kind k, const double *x, const double *dx, ld ta, ld tb)
{
    ld fa = coplanar_f(k, x, dx, ta);
    for (int it = 0; it < 80; ++it) {
        ld mid = 0.5L * (ta + tb), fm = coplanar_f(k, x, dx, mid);
        if ((fa <= 0 && fm <= 0) || (fa >= 0 && fm >= 0))
            ta = mid, fa = fm;
        else
            tb = mid;
    }
    return 0.5L * (ta + tb);
}

/* Exact time of impact in [0, tmax] (or -1): the first root of the coplanarity function at
 * which the primitives overlap; roots bracketed on a fine grid and bisected in long double.
 * PP: the smaller root of |r + t v|² = xi². */
static ld exact_toi(ct_ccd_kind k, int dim, const double *x, const double *dx, double tmax, double xi)
{
    if (k == CT_CCD_PP) {
        ld r[3], v[3], rr = 0, rv = 0, vv = 0;
        for (int c = 0; c < dim; ++c) {
            r[c] = (ld)x[dim + c] - x[c], v[c] = (ld)dx[dim + c] - dx[c];
            rr += r[c] * r[c], rv += r[c] * v[c], vv += v[c] * v[c];
        }
        ld disc = rv * rv - vv * (rr - (ld)xi * xi);
        if (vv == 0 || disc < 0) return -1;
        ld t = (-rv - sqrtl(disc)) / vv;
        return t >= 0 && t <= tmax ? t : -1;
    }
    enum { NS = 1024 };
    ld f0 = coplanar_f(k, x, dx, 0);
    for (int i = 1; i <= NS; ++i) {
        ld ta = (ld)tmax * (i - 1) / NS, tb = (ld)tmax * i / NS;
        ld fb = coplanar_f(k, x, dx, tb);
        if ((f0 <= 0 && fb >= 0) || (f0 >= 0 && fb <= 0)) {
            ld lo = ta, hi = tb, flo = f0;
            for (int it = 0; it < 80; ++it) {
                ld mid = 0.5L * (lo + hi), fm = coplanar_f(k, x, dx, mid);
                if ((flo <= 0 && fm <= 0) || (flo >= 0 && fm >= 0))
                    lo = mid, flo = fm;
                else
                    hi = mid;
            }
            if (overlap_at(k, x, dx, hi, 1e-9L)) return hi;
        }
        f0 = fb;
    }
    return -1;
}

/* Exact checks of the configuration at time t (positions rounded to double). */
static void config_at(int n, const double *x, const double *dx, double t, double *y)
{
    for (int i = 0; i < n; ++i) y[i] = x[i] + t * dx[i];
}

static int exact_intersect(ct_ccd_kind k, const double *y)
{
    switch (k) {
    case CT_CCD_PE: return ct_segments_intersect_2d(y, y, y + 2, y + 4);
    case CT_CCD_PT: return ct_segment_triangle_intersect(y, y, y + 3, y + 6, y + 9);
    case CT_CCD_EE: return ct_segment_triangle_intersect(y, y + 3, y + 6, y + 9, y + 9); /* seg–seg */
    default: return 0;
    }
}

static int orient_of(ct_ccd_kind k, const double *y)
{
    switch (k) {
    case CT_CCD_PE: return ct_orient2d(y + 2, y + 4, y);
    case CT_CCD_PT: return ct_orient3d(y + 3, y + 6, y + 9, y);
    case CT_CCD_EE: return ct_orient3d(y, y + 3, y + 6, y + 9);
    default: return 0;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Random trajectory of a stencil; about 3/4 are aimed to hit at a random time in (0, 1.3)
 * (some after tmax = 1), a third of those with a small miss added; some start very close. */
static void random_trajectory(ct_ccd_kind k, int dim, int it, double *x, double *dx, double *xi)
{
    const int nv = nverts(k);
    for (int i = 0; i < nv * dim; ++i) x[i] = urand(), dx[i] = urand();
    *xi = k == CT_CCD_PP ? 0.05 + 0.2 * u01() : 0.0;
    const int mode = it % 4;
    if (mode == 0) {
        for (int i = 0; i < nv * dim; ++i) dx[i] *= 2.0;
        return;
    }
    /* aim: choose the hit time th and the contact point on the second primitive at th, then
     * set the motion of the first primitive's point (or of b1 for EE) to meet it. */
    double th = 0.02 + 1.28 * u01();
    double target[3], w[3] = {u01(), u01(), u01()};
    if (k == CT_CCD_PP)
        w[0] = 1, w[1] = w[2] = 0;
    else if (k == CT_CCD_PE || k == CT_CCD_EE)
        w[0] = u01(), w[1] = 1 - w[0], w[2] = 0;
    else {
        double sw = w[0] + w[1] + w[2];
        for (int c = 0; c < 3; ++c) w[c] /= sw;
    }
    const int first_second = k == CT_CCD_EE ? 0 : 1; /* where the second primitive starts */
    const int nsec = k == CT_CCD_PP ? 1 : k == CT_CCD_PT ? 3 : 2;
    for (int c = 0; c < dim; ++c) {
        target[c] = 0;
        for (int j = 0; j < nsec; ++j) {
            int v = first_second + j;
            target[c] += w[j] * (x[v * dim + c] + th * dx[v * dim + c]);
        }
    }
    if (mode == 3) { /* start close: move the first point near the target's start */
        for (int c = 0; c < dim; ++c) {
            double t0c = 0;
            for (int j = 0; j < nsec; ++j) t0c += w[j] * x[(first_second + j) * dim + c];
            x[(k == CT_CCD_EE ? 2 : 0) * dim + c] = t0c + 1e-3 * urand();
        }
    }
    if (k == CT_CCD_PP) { /* hit at distance xi: aim at a point xi away */
        double dir[3] = {urand(), urand(), urand()}, nd = 0;
        for (int c = 0; c < dim; ++c) nd += dir[c] * dir[c];
        for (int c = 0; c < dim; ++c) target[c] += *xi * dir[c] / sqrt(nd);
    }
    if (k == CT_CCD_EE) {
        /* edge b = (b0, b1) meets the point `target` of edge a at th with parameter r of b:
         * b0 + r (b1 - b0) at th = target  =>  solve for db1. */
        double r = 0.05 + 0.9 * u01();
        for (int c = 0; c < 3; ++c) {
            double b0t = x[6 + c] + th * dx[6 + c];
            double b1t = b0t + (target[c] - b0t) / r;
            dx[9 + c] = (b1t - x[9 + c]) / th;
        }
    } else {
        for (int c = 0; c < dim; ++c) dx[c] = (target[c] - x[c]) / th;
    }
    if (mode == 2) /* a near miss (or a hit) */
        for (int i = 0; i < nv * dim; ++i) dx[i] += 0.02 * urand();
}

static void random_suite(ct_ccd_kind k, int dim, const char *name, int N)
{
    const int nv = nverts(k), n = nv * dim;
    double *ratios = malloc(sizeof(double) * N);
    ck_assert_ptr_nonnull(ratios);
    long nratio = 0, ncoll = 0, nexact = 0, nsamples = 0, nflips = 0;
    double tsum = 0, tclose = 0;
    for (int it = 0; it < N; ++it) {
        double x[12], dx[12], xi, toi;
        random_trajectory(k, dim, it, x, dx, &xi);
        double t0 = omp_get_wtime();
        int hit = accd(k, dim, x, dx, 1.0, 0.1, xi, &toi);
        double tc = omp_get_wtime() - t0;
        tsum += tc;
        if (it % 4 == 3) tclose += tc; /* the trajectories that start 1e-3 apart */
        ncoll += hit;
        REQUIRE(toi >= 0.0 && toi <= 1.0 && (hit || toi == 1.0), "%s #%d: toi %g, returned %d", name, it, toi,
                hit);

        /* Starting in contact (rare with these generators): toi must be 0. */
        int start_contact;
        if (k == CT_CCD_PP) {
            ld d2 = 0;
            for (int c = 0; c < dim; ++c) d2 += ((ld)x[dim + c] - x[c]) * ((ld)x[dim + c] - x[c]);
            start_contact = d2 <= (ld)xi * xi;
        } else {
            start_contact = exact_intersect(k, x);
        }
        if (start_contact) {
            REQUIRE(hit && toi == 0.0, "%s #%d: starts in contact, toi %g", name, it, toi);
            continue;
        }

        /* Dense samples of [0, toi]: no intersection, no orientation flip while overlapping. */
        int prev = 0;
        for (int s = 0; s <= 65; ++s) {
            double t = s <= 64 ? toi * s / 64.0 : toi;
            double y[12];
            config_at(n, x, dx, t, y);
            if (k == CT_CCD_PP) {
                ld d2 = 0;
                for (int c = 0; c < dim; ++c) d2 += ((ld)y[dim + c] - y[c]) * ((ld)y[dim + c] - y[c]);
                REQUIRE(d2 > (ld)xi * xi, "%s #%d: within thickness at t = %g (toi %g)", name, it, t, toi);
                nsamples++;
                continue;
            }
            REQUIRE(!exact_intersect(k, y), "%s #%d: intersection at t = %g (toi %g)", name, it, t, toi);
            int o = orient_of(k, y);
            /* The orientation sign flips between two samples: the stencil passes a coplanar
             * (collinear) configuration in between. Locate it and require that the primitives
             * do not overlap there (a crossing beside the primitive is fine). */
            if (s > 0 && o != prev) {
                double ta = toi * (s - 1) / 64.0;
                ld tc = flip_time(k, x, dx, ta, t);
                REQUIRE(!overlap_at(k, x, dx, tc, -1e-9L),
                        "%s #%d: the stencil crosses itself at t = %Lg in [%g, %g] (toi %g)", name, it, tc,
                        ta, t, toi);
                nflips++;
            }
            prev = o;
            nsamples++;
        }
        /* Against the exact time of impact: conservative, and not absurdly early. */
        ld te = exact_toi(k, dim, x, dx, 1.0, xi);
        if (te >= 0) {
            nexact++;
            REQUIRE(hit, "%s #%d: impact at t = %Lg missed", name, it, te);
            REQUIRE((ld)toi <= te * (1 + 1e-12L) + 1e-15L, "%s #%d: toi %g after the impact %Lg", name, it,
                    toi, te);
            if (te > 0) ratios[nratio++] = (double)((ld)toi / te);
        }
    }
    qsort(ratios, (size_t)nratio, sizeof(double), cmp_double);
    double med = nratio ? ratios[nratio / 2] : 1.0, p10 = nratio ? ratios[nratio / 10] : 1.0;
    double mn = nratio ? ratios[0] : 1.0;
    printf("random %s: %d trajectories, %ld reported, %ld exact impacts in [0,1]; toi/t_exact median %.3f, "
           "10%% quantile %.3f, min %.3g; ACCD %.2f us per call (%.2f us when starting 1e-3 apart, %.2f "
           "otherwise); %ld samples checked, %ld sign flips beside the primitive\n",
           name, N, ncoll, nexact, med, p10, mn, 1e6 * tsum / N, 1e6 * tclose / (N / 4),
           1e6 * (tsum - tclose) / (N - N / 4), nsamples, nflips);
    ck_assert_int_gt(nexact, N / 3); /* the generator does produce impacts */
    ck_assert(med >= 0.7);           /* typical: close to 1 - s = 0.9 for head-on motion */
    free(ratios);
}

START_TEST(test_random_pt) { random_suite(CT_CCD_PT, 3, "PT", 10000); }
END_TEST

START_TEST(test_random_ee) { random_suite(CT_CCD_EE, 3, "EE", 10000); }
END_TEST

START_TEST(test_random_pe2d) { random_suite(CT_CCD_PE, 2, "PE 2D", 10000); }
END_TEST

START_TEST(test_random_pp) { random_suite(CT_CCD_PP, 3, "PP 3D (thickness)", 10000); }
END_TEST

START_TEST(test_random_pp2d) { random_suite(CT_CCD_PP, 2, "PP 2D (thickness)", 10000); }
END_TEST

/* ---------------------------------------------------------------- timing */

START_TEST(test_timing)
{
    /* The aligned grid case: edge b exactly above edge a (parallel, coincident in projection)
     * approaching at speed 2 from height 1. */
    double x[12] = {0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1};
    double dx[12] = {0, 0, 0, 0, 0, 0, 0, 0, -2, 0, 0, -2};
    double toi;
    double t0 = omp_get_wtime();
    int hit = accd(CT_CCD_EE, 3, x, dx, 1.0, 0.1, 0.0, &toi);
    double t1 = omp_get_wtime();
    ck_assert_int_eq(hit, 1);
    ck_assert(toi <= 0.5 && toi >= 0.8 * 0.5);

    /* A 50x50 grid of such stencils: the x- and y-edges of a unit grid on z = 0, each with the
     * matching edge of a copy at height h falling at speed 2 (some also sliding sideways
     * along themselves, which raises l_p without closing the gap: more iterations). */
    const int G = 50;
    long n = 0, nhit = 0;
    double tmin = 1, tmax = 0;
    double t2 = omp_get_wtime();
    for (int i = 0; i < G; ++i)
        for (int j = 0; j < G; ++j)
            for (int dir = 0; dir < 2; ++dir) {
                const double h = 0.01;
                double ex = dir == 0, ey = dir == 1, slide = (i + j) % 3 == 0 ? 0.05 : 0.0;
                double xs[12] = {i, j, 0, i + ex, j + ey, 0, i, j, h, i + ex, j + ey, h};
                double ds[12] = {0,          0,          0,      0,          0,          0,
                                 slide * ex, slide * ey, -2 * h, slide * ex, slide * ey, -2 * h};
                nhit += accd(CT_CCD_EE, 3, xs, ds, 1.0, 0.1, 0.0, &toi);
                tmin = fmin(tmin, toi), tmax = fmax(tmax, toi);
                ++n;
            }
    double t3 = omp_get_wtime();
    printf("timing: aligned parallel edges %.2f us; %ld grid stencils in %.3f ms (%.2f us each), "
           "toi in [%.4f, %.4f] (exact 0.5)\n",
           1e6 * (t1 - t0), n, 1e3 * (t3 - t2), 1e6 * (t3 - t2) / n, tmin, tmax);
    ck_assert_int_eq(nhit, n);
    ck_assert(tmin >= 0.8 * 0.5 && tmax <= 0.5);
    ck_assert(t1 - t0 < 0.1);
    ck_assert(t3 - t2 < 0.1);
}
END_TEST

static Suite *ccd_suite(void)
{
    Suite *s = suite_create("ccd");
    TCase *tc = tcase_create("ccd");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_point_falls_on_triangle);
    tcase_add_test(tc, test_point_through_stretching_edge);
    tcase_add_test(tc, test_rotating_edge);
    tcase_add_test(tc, test_parallel_edges);
    tcase_add_test(tc, test_point_point);
    tcase_add_test(tc, test_separating_and_contact);
    tcase_add_test(tc, test_random_pt);
    tcase_add_test(tc, test_random_ee);
    tcase_add_test(tc, test_random_pe2d);
    tcase_add_test(tc, test_random_pp);
    tcase_add_test(tc, test_random_pp2d);
    tcase_add_test(tc, test_timing);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(ccd_suite)
