/* check_distance.c — contact distances (PP, PE, PT, EE), classification, closest points and the
 * edge–edge mollifier.
 *
 * Expected values are derived independently of core/contact/distance.c: closed forms for hand-built
 * configurations that hit every closest-feature case, a brute-force minimum over the
 * barycentric parameters (nested golden-section search of |x_a(s) − x_b(t)|², convex in each
 * parameter) for thousands of random and degenerate stencils, central finite differences of the
 * gradients and Hessians, and symmetry / rigid-motion invariance.
 */
#include "ct_test_util.h"

#include "contactlab/ct_distance.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- random numbers and rotations ---- */

static uint64_t rng = 0x2545f4914f6cdd1dull;

static double urand(void) /* uniform in [-1, 1) (xorshift64*) */
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (double)((rng * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-52 - 1.0;
}

static void rand_vec(int dim, double scale, double *x)
{
    for (int i = 0; i < dim; ++i) x[i] = scale * urand();
}

/* a random rotation, row-major dim x dim */
static void random_rotation(int dim, double *R)
{
    if (dim == 2) {
        const double t = 3.14159265358979323846 * urand();
        R[0] = cos(t), R[1] = -sin(t), R[2] = sin(t), R[3] = cos(t);
        return;
    }
    double q[4], n = 0.0;
    for (int i = 0; i < 4; ++i) q[i] = urand(), n += q[i] * q[i];
    n = sqrt(n);
    const double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    const double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                         2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                         2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}

static void matvec(int dim, const double *R, const double *x, double *y)
{
    for (int i = 0; i < dim; ++i) {
        y[i] = 0.0;
        for (int j = 0; j < dim; ++j) y[i] += R[i * dim + j] * x[j];
    }
}

static int all_finite(const double *a, int n)
{
    for (int i = 0; i < n; ++i)
        if (!isfinite(a[i])) return 0;
    return 1;
}

static double max_d(double a, double b) { return a > b ? a : b; }

/* ---- brute force: nested golden-section minimisation ----
 * The squared distance between x_a(s) and x_b(t) (both affine in their parameters) is convex in
 * the parameters, and so is its partial minimum over the inner parameter; golden-section search
 * on a convex function brackets the minimum. The end points are evaluated too (clamped minima). */

typedef double (*fun1)(double, void *);

static double golden_min(fun1 f, void *ctx, double lo, double hi)
{
    const double ip = 0.5 * (sqrt(5.0) - 1.0);
    double a = lo, b = hi, x1 = b - ip * (b - a), x2 = a + ip * (b - a);
    double f1 = f(x1, ctx), f2 = f(x2, ctx);
    for (int it = 0; it < 200 && b - a > 1e-15 * (hi - lo); ++it) {
        if (f1 <= f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - ip * (b - a), f1 = f(x1, ctx);
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + ip * (b - a), f2 = f(x2, ctx);
        }
    }
    double m = f1 < f2 ? f1 : f2;
    const double fl = f(lo, ctx), fh = f(hi, ctx);
    if (fl < m) m = fl;
    if (fh < m) m = fh;
    return m;
}

typedef struct {
    int dim;
    const double *v[4]; /* PE: p, e0, e1 / PT: p, t0, t1, t2 / EE: a0, a1, b0, b1 */
    double outer;       /* the outer parameter during the inner search */
} bf_ctx;

static double bf_pe_f(double s, void *c)
{
    const bf_ctx *b = c;
    double d2 = 0.0;
    for (int a = 0; a < b->dim; ++a) {
        const double q = b->v[1][a] + s * (b->v[2][a] - b->v[1][a]);
        d2 += (b->v[0][a] - q) * (b->v[0][a] - q);
    }
    return d2;
}

static double ref_pe(int dim, const double *p, const double *e0, const double *e1)
{
    bf_ctx c = {dim, {p, e0, e1, NULL}, 0.0};
    return golden_min(bf_pe_f, &c, 0.0, 1.0);
}

static double bf_pt_inner(double b2, void *c)
{
    const bf_ctx *b = c;
    const double b1 = b->outer;
    double d2 = 0.0;
    for (int a = 0; a < 3; ++a) {
        const double q = b->v[1][a] + b1 * (b->v[2][a] - b->v[1][a]) + b2 * (b->v[3][a] - b->v[1][a]);
        d2 += (b->v[0][a] - q) * (b->v[0][a] - q);
    }
    return d2;
}

static double bf_pt_outer(double b1, void *c)
{
    bf_ctx *b = c;
    b->outer = b1;
    return golden_min(bf_pt_inner, b, 0.0, 1.0 - b1);
}

static double ref_pt(const double *p, const double *t0, const double *t1, const double *t2)
{
    bf_ctx c = {3, {p, t0, t1, t2}, 0.0};
    return golden_min(bf_pt_outer, &c, 0.0, 1.0);
}

static double bf_ee_inner(double t, void *c)
{
    const bf_ctx *b = c;
    const double s = b->outer;
    double d2 = 0.0;
    for (int a = 0; a < 3; ++a) {
        const double qa = b->v[0][a] + s * (b->v[1][a] - b->v[0][a]);
        const double qb = b->v[2][a] + t * (b->v[3][a] - b->v[2][a]);
        d2 += (qa - qb) * (qa - qb);
    }
    return d2;
}

static double bf_ee_outer(double s, void *c)
{
    bf_ctx *b = c;
    b->outer = s;
    return golden_min(bf_ee_inner, b, 0.0, 1.0);
}

static double ref_ee(const double *a0, const double *a1, const double *b0, const double *b1)
{
    bf_ctx c = {3, {a0, a1, b0, b1}, 0.0};
    return golden_min(bf_ee_outer, &c, 0.0, 1.0);
}

/* squared distance between two points */
static double dist2(int dim, const double *a, const double *b)
{
    double s = 0.0;
    for (int i = 0; i < dim; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
    return s;
}

/* d² of the closest points reported by ct_*_closest (checks the coordinates are in range) */
static double pe_closest_d2(int dim, const double *p, const double *e0, const double *e1)
{
    double s, q[3];
    ct_pe_closest(dim, p, e0, e1, &s);
    ck_assert(s >= 0.0 && s <= 1.0);
    for (int a = 0; a < dim; ++a) q[a] = e0[a] + s * (e1[a] - e0[a]);
    return dist2(dim, p, q);
}

static double pt_closest_d2(const double *p, const double *t0, const double *t1, const double *t2)
{
    double b1, b2, q[3];
    ct_pt_closest(p, t0, t1, t2, &b1, &b2);
    ck_assert(b1 >= 0.0 && b2 >= 0.0 && b1 + b2 <= 1.0 + 1e-15);
    for (int a = 0; a < 3; ++a) q[a] = t0[a] + b1 * (t1[a] - t0[a]) + b2 * (t2[a] - t0[a]);
    return dist2(3, p, q);
}

static double ee_closest_d2(const double *a0, const double *a1, const double *b0, const double *b1)
{
    double s, r, qa[3], qb[3];
    ct_ee_closest(a0, a1, b0, b1, &s, &r);
    ck_assert(s >= 0.0 && s <= 1.0 && r >= 0.0 && r <= 1.0);
    for (int a = 0; a < 3; ++a) {
        qa[a] = a0[a] + s * (a1[a] - a0[a]);
        qb[a] = b0[a] + r * (b1[a] - b0[a]);
    }
    return dist2(3, qa, qb);
}

/* ---- closed forms: every closest-feature case ---- */

START_TEST(test_closed_form_pe)
{
    double err = 0.0;
    for (int dim = 2; dim <= 3; ++dim) {
        const double e0[3] = {-10, 0, 0}, e1[3] = {10, 0, 0};
        for (int k = 0; k < 5; ++k) {
            const double y = 0.37 * (k - 2) + 0.01; /* both sides, and close to the edge */
            const double p[3] = {0, y, 0};
            ck_assert_int_eq(ct_pe_classify(dim, p, e0, e1), CT_PE_P_E);
            double g[9];
            const double d2 = ct_pe_d2(dim, p, e0, e1, CT_PE_P_E, g, NULL);
            err = max_d(err, ct_rel_err(d2, y * y, 1e-300));
            /* ∂d²/∂p = 2 (0, y), and the edge's gradient is −1/2 of it at each end (s = 1/2) */
            ck_assert_double_eq_tol(g[0], 0.0, 1e-14);
            ck_assert_double_eq_tol(g[1], 2.0 * y, 1e-14);
            ck_assert_double_eq_tol(g[dim + 1], -y, 1e-14);
            ck_assert_double_eq_tol(g[2 * dim + 1], -y, 1e-14);
            double s;
            ct_pe_closest(dim, p, e0, e1, &s);
            ck_assert_double_eq_tol(s, 0.5, 1e-15);
        }
        /* beyond each end point */
        const double p1[3] = {13, 4, 0}, p0[3] = {-12, -1, 0}, pz[3] = {3, 2, 0};
        ck_assert_int_eq(ct_pe_classify(dim, p1, e0, e1), CT_PE_P_E1);
        ck_assert_int_eq(ct_pe_classify(dim, p0, e0, e1), CT_PE_P_E0);
        err = max_d(err, ct_rel_err(ct_pe_d2(dim, p1, e0, e1, CT_PE_P_E1, NULL, NULL), 25.0, 0));
        err = max_d(err, ct_rel_err(ct_pe_d2(dim, p0, e0, e1, CT_PE_P_E0, NULL, NULL), 5.0, 0));
        double s;
        ct_pe_closest(dim, p1, e0, e1, &s);
        ck_assert(s == 1.0);
        ct_pe_closest(dim, p0, e0, e1, &s);
        ck_assert(s == 0.0);
        ct_pe_closest(dim, pz, e0, e1, &s);
        ck_assert_double_eq_tol(s, 0.65, 1e-15);
        /* PP */
        const double q[3] = {3, -1, dim == 3 ? 2 : 0};
        err = max_d(err, ct_rel_err(ct_pp_d2(dim, p1, q, NULL, NULL), dim == 3 ? 129.0 : 125.0, 0));
    }
    /* 3D with z != 0: (0, 3, 4) to the x axis: 25 */
    const double e0[3] = {-10, 0, 0}, e1[3] = {10, 0, 0}, p[3] = {1, 3, 4};
    ck_assert_int_eq(ct_pe_classify(3, p, e0, e1), CT_PE_P_E);
    err = max_d(err, ct_rel_err(ct_pe_d2(3, p, e0, e1, CT_PE_P_E, NULL, NULL), 25.0, 0));
    printf("closed form PE/PP: max rel err %.2e\n", err);
    ck_assert_double_le(err, 1e-15);
}
END_TEST

START_TEST(test_closed_form_pt)
{
    /* unit right triangle in z = 0; points at height h above/below */
    const double t0[3] = {0, 0, 0}, t1[3] = {1, 0, 0}, t2[3] = {0, 1, 0};
    struct {
        double x, y;     /* in-plane position */
        ct_pt_type type; /* expected closest feature */
        double d2xy;     /* in-plane squared distance to it */
        double b1, b2;   /* closest point coordinates */
    } cs[] = {
        {0.2, 0.3, CT_PT_P_T, 0.0, 0.2, 0.3},
        {0.5, -0.4, CT_PT_P_E0, 0.16, 0.5, 0.0},
        {0.8, 0.8, CT_PT_P_E1, 0.18, 0.5, 0.5}, /* (0.6/√2)², foot (0.5, 0.5) */
        {-0.3, 0.5, CT_PT_P_E2, 0.09, 0.0, 0.5},
        {-0.3, -0.2, CT_PT_P_T0, 0.13, 0.0, 0.0},
        {1.4, -0.1, CT_PT_P_T1, 0.17, 1.0, 0.0},
        {-0.1, 1.5, CT_PT_P_T2, 0.26, 0.0, 1.0},
        /* exact ties: a point that projects onto the boundary is classified by the lower feature
           (the collision sets then reduce it to a point–edge / point–point stencil and merge it
           with the other triangles' terms of that feature; ct_pt_classify's interior test is
           strict) */
        {0.0, 0.0, CT_PT_P_T0, 0.0, 0.0, 0.0},
        {1.0, 0.0, CT_PT_P_T1, 0.0, 1.0, 0.0},
        {0.0, 1.0, CT_PT_P_T2, 0.0, 0.0, 1.0},
        {0.5, 0.0, CT_PT_P_E0, 0.0, 0.5, 0.0},
        {0.5, 0.5, CT_PT_P_E1, 0.0, 0.5, 0.5},
        {0.0, 0.25, CT_PT_P_E2, 0.0, 0.0, 0.25},
    };
    double err = 0.0, errb = 0.0;
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; ++i)
        for (int k = 0; k < 4; ++k) {
            const double h = (double[]){0.7, -0.25, 1e-3, 0.0}[k];
            const double p[3] = {cs[i].x, cs[i].y, h}, want = cs[i].d2xy + h * h;
            ck_assert_msg(ct_pt_classify(p, t0, t1, t2) == cs[i].type, "case %zu h %g: type %d",
                          i, h, (int)ct_pt_classify(p, t0, t1, t2));
            const double d2 = ct_pt_d2(p, t0, t1, t2, cs[i].type, NULL, NULL);
            err = max_d(err, want > 0 ? ct_rel_err(d2, want, 0) : fabs(d2));
            double b1, b2;
            ct_pt_closest(p, t0, t1, t2, &b1, &b2);
            errb = max_d(errb, fmax(fabs(b1 - cs[i].b1), fabs(b2 - cs[i].b2)));
        }
    printf("closed form PT (13 cases, 6 of them exact ties, x 4 heights): max rel err %.2e, closest coords %.2e\n", err,
           errb);
    ck_assert_double_le(err, 1e-14);
    ck_assert_double_le(errb, 1e-15);
}
END_TEST

START_TEST(test_closed_form_ee)
{
    /* a along x (z = 0), b along y at z = h, each shifted by -1.5, 0, 1.5 along its own axis:
     * shift 0 puts the closest point mid-edge, +1.5 at the first end point, -1.5 at the last. */
    const ct_ee_type want_type[3][3] = {/* [a shift][b shift], shifts (0, +1.5, -1.5) */
                                        {CT_EE_A_B, CT_EE_A_B0, CT_EE_A_B1},
                                        {CT_EE_A0_B, CT_EE_A0_B0, CT_EE_A0_B1},
                                        {CT_EE_A1_B, CT_EE_A1_B0, CT_EE_A1_B1}};
    const double shift[3] = {0.0, 1.5, -1.5}, par[3] = {0.5, 0.0, 1.0};
    int seen[9] = {0};
    double err = 0.0, errp = 0.0;
    for (int k = 0; k < 3; ++k) {
        const double h = (double[]){0.3, -2.0, 1e-4}[k];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                const double a0[3] = {-1 + shift[i], 0, 0}, a1[3] = {1 + shift[i], 0, 0};
                const double b0[3] = {0, -1 + shift[j], h}, b1[3] = {0, 1 + shift[j], h};
                const ct_ee_type t = ct_ee_classify(a0, a1, b0, b1);
                ck_assert_msg(t == want_type[i][j], "shift %d %d: type %d", i, j, (int)t);
                seen[t] = 1;
                const double want = (i ? 0.25 : 0.0) + (j ? 0.25 : 0.0) + h * h;
                err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, b0, b1, t, NULL, NULL), want, 0));
                double s, r;
                ct_ee_closest(a0, a1, b0, b1, &s, &r);
                errp = max_d(errp, fmax(fabs(s - par[i]), fabs(r - par[j])));
            }
    }
    for (int t = 0; t < 9; ++t) ck_assert(seen[t]);

    /* parallel edges at distance h: overlapping (an end point against an interior; two
     * candidates tie) and disjoint (end point pairs) */
    const double h = 0.2;
    const double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0};
    const double c0[3] = {0.3, h, 0}, c1[3] = {2, h, 0};
    ct_ee_type t = ct_ee_classify(a0, a1, c0, c1);
    ck_assert(t == CT_EE_A1_B || t == CT_EE_A_B0);
    err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, c0, c1, t, NULL, NULL), h * h, 0));
    err = max_d(err, ct_rel_err(ee_closest_d2(a0, a1, c0, c1), h * h, 0));
    /* the forced interior type falls back to the end point types: finite and right */
    double g[12], H[144];
    err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, c0, c1, CT_EE_A_B, g, H), h * h, 0));
    ck_assert(all_finite(g, 12) && all_finite(H, 144));
    const double d0[3] = {1.5, h, 0}, d1[3] = {3, h, 0};
    ck_assert_int_eq(ct_ee_classify(a0, a1, d0, d1), CT_EE_A1_B0);
    ck_assert_int_eq(ct_ee_classify(a0, a1, d1, d0), CT_EE_A1_B1);
    ck_assert_int_eq(ct_ee_classify(d0, d1, a0, a1), CT_EE_A0_B1);
    err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, d0, d1, CT_EE_A1_B0, NULL, NULL), 0.25 + h * h, 0));
    err = max_d(err, ct_rel_err(ee_closest_d2(a0, a1, d1, d0), 0.25 + h * h, 0));
    /* nearly parallel (angle 1e-12, sin² = 1e-24 < 1e-20): never the interior type */
    for (int k = 0; k < 50; ++k) {
        const double ang = 1e-12 * (1 + k), y = 0.3 * urand();
        const double e0[3] = {0.1 * urand(), y, 0.5}, e1[3] = {e0[0] + cos(ang), y + sin(ang), 0.5};
        const ct_ee_type tt = ct_ee_classify(a0, a1, e0, e1);
        ck_assert(tt != CT_EE_A_B);
        const double want = ref_ee(a0, a1, e0, e1);
        err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, e0, e1, tt, NULL, NULL), want, 0));
    }
    printf("closed form EE (9 types x 3 heights, parallel cases): max rel err %.2e, params %.2e\n",
           err, errp);
    ck_assert_double_le(err, 1e-12);
    ck_assert_double_le(errp, 1e-15);
}
END_TEST

/* ---- C¹ across region borders: on a border the two adjacent types give the same value and
 * gradient (points built exactly on the border of the closed-form configurations) ---- */

START_TEST(test_c1_borders)
{
    double e = 0.0, ga[12], gb[12];
    const double h = 0.4;
    /* PE: p projects onto e0 */
    const double e0[3] = {-10, 0, 0}, e1[3] = {10, 0, 0}, pe[3] = {-10, 3, 0.5};
    for (int dim = 2; dim <= 3; ++dim) {
        const double va = ct_pe_d2(dim, pe, e0, e1, CT_PE_P_E, ga, NULL);
        const double vb = ct_pe_d2(dim, pe, e0, e1, CT_PE_P_E0, gb, NULL);
        e = fmax(e, fmax(ct_rel_err(va, vb, 0), ct_rel_err_vec(ga, gb, 3 * (size_t)dim, 0)));
    }
    /* PT: unit right triangle; interior|edge and edge|vertex borders */
    const double t0[3] = {0, 0, 0}, t1[3] = {1, 0, 0}, t2[3] = {0, 1, 0};
    const struct {
        double x, y;
        ct_pt_type a, b;
    } pt[] = {{0.3, 0, CT_PT_P_T, CT_PT_P_E0},      {0.6, 0.4, CT_PT_P_T, CT_PT_P_E1},
              {0, 0.7, CT_PT_P_T, CT_PT_P_E2},      {0, -0.5, CT_PT_P_E0, CT_PT_P_T0},
              {-0.5, 0, CT_PT_P_E2, CT_PT_P_T0},    {1, -0.5, CT_PT_P_E0, CT_PT_P_T1},
              {1.5, 0.5, CT_PT_P_E1, CT_PT_P_T1},   {0.5, 1.5, CT_PT_P_E1, CT_PT_P_T2},
              {-0.5, 1, CT_PT_P_E2, CT_PT_P_T2}};
    for (size_t i = 0; i < sizeof pt / sizeof pt[0]; ++i) {
        const double p[3] = {pt[i].x, pt[i].y, h};
        const double va = ct_pt_d2(p, t0, t1, t2, pt[i].a, ga, NULL);
        const double vb = ct_pt_d2(p, t0, t1, t2, pt[i].b, gb, NULL);
        e = fmax(e, fmax(ct_rel_err(va, vb, 0), ct_rel_err_vec(ga, gb, 12, 0)));
    }
    /* EE: a on the x axis, b along y at z = h, shifted so an end point sits on the border */
    const struct {
        double sa, sb; /* shifts of a (along x) and b (along y) */
        ct_ee_type a, b;
    } ee[] = {{0, 1, CT_EE_A_B, CT_EE_A_B0},     {0, -1, CT_EE_A_B, CT_EE_A_B1},
              {1, 0, CT_EE_A_B, CT_EE_A0_B},     {-1, 0, CT_EE_A_B, CT_EE_A1_B},
              {1, 1, CT_EE_A_B0, CT_EE_A0_B0},   {1, 1, CT_EE_A0_B, CT_EE_A0_B0},
              {-1, -1, CT_EE_A_B1, CT_EE_A1_B1}, {-1, 1, CT_EE_A1_B, CT_EE_A1_B0}};
    for (size_t i = 0; i < sizeof ee / sizeof ee[0]; ++i) {
        const double a0[3] = {-1 + ee[i].sa, 0, 0}, a1[3] = {1 + ee[i].sa, 0, 0};
        const double b0[3] = {0, -1 + ee[i].sb, h}, b1[3] = {0, 1 + ee[i].sb, h};
        const double va = ct_ee_d2(a0, a1, b0, b1, ee[i].a, ga, NULL);
        const double vb = ct_ee_d2(a0, a1, b0, b1, ee[i].b, gb, NULL);
        e = fmax(e, fmax(ct_rel_err(va, vb, 0), ct_rel_err_vec(ga, gb, 12, 0)));
    }
    printf("C1 across region borders (2 PE, 9 PT, 8 EE borders): max rel diff value/gradient %.2e\n",
           e);
    ck_assert_double_le(e, 1e-14);
}
END_TEST

/* ---- degenerate input ---- */

START_TEST(test_degenerate)
{
    double g[12], H[144], err = 0.0;
    /* coincident points */
    const double o[3] = {0.3, -0.2, 0.7};
    ck_assert(ct_pp_d2(3, o, o, g, H) == 0.0);
    for (int i = 0; i < 6; ++i) ck_assert(g[i] == 0.0);
    ck_assert(ct_pp_d2(2, o, o, g, H) == 0.0);

    /* zero-length edges: point types, and the forced interior type falls back to them */
    for (int dim = 2; dim <= 3; ++dim) {
        const double p[3] = {1, 2, 3};
        ck_assert_int_eq(ct_pe_classify(dim, p, o, o), CT_PE_P_E0);
        const double want = dist2(dim, p, o);
        err = max_d(err, ct_rel_err(ct_pe_d2(dim, p, o, o, CT_PE_P_E0, NULL, NULL), want, 0));
        err = max_d(err, ct_rel_err(ct_pe_d2(dim, p, o, o, CT_PE_P_E, g, H), want, 0));
        ck_assert(all_finite(g, 3 * dim) && all_finite(H, 9 * dim * dim));
        ck_assert(ct_pe_d2(dim, o, o, o, ct_pe_classify(dim, o, o, o), g, H) == 0.0);
        ck_assert(all_finite(g, 3 * dim) && all_finite(H, 9 * dim * dim));
        double s;
        ct_pe_closest(dim, p, o, o, &s);
        ck_assert(s == 0.0);
    }
    /* EE with one or both edges of zero length */
    const double a0[3] = {0, 0, 0}, a1[3] = {2, 0, 0}, q[3] = {0.5, 1, 1}, q2[3] = {3, 0, 1};
    ct_ee_type t = ct_ee_classify(a0, a1, q, q);
    ck_assert(t == CT_EE_A_B0 || t == CT_EE_A_B1);
    err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, q, q, t, NULL, NULL), 2.0, 0));
    err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, q, q, CT_EE_A_B, g, H), 2.0, 0));
    ck_assert(all_finite(g, 12) && all_finite(H, 144));
    t = ct_ee_classify(q, q, a0, a1);
    ck_assert(t == CT_EE_A0_B || t == CT_EE_A1_B);
    t = ct_ee_classify(q, q, q2, q2);
    ck_assert(t <= CT_EE_A1_B1);
    err = max_d(err, ct_rel_err(ct_ee_d2(q, q, q2, q2, t, NULL, NULL), 7.25, 0));
    err = max_d(err, ct_rel_err(ee_closest_d2(q, q, q2, q2), 7.25, 0));

    /* collinear edges: overlapping (d = 0) and disjoint (gap 1) */
    const double c0[3] = {0.5, 0, 0}, c1[3] = {2.5, 0, 0}, c2[3] = {3, 0, 0}, c3[3] = {4, 0, 0};
    t = ct_ee_classify(a0, a1, c0, c1);
    ck_assert(t != CT_EE_A_B);
    ck_assert(ct_ee_d2(a0, a1, c0, c1, t, NULL, NULL) == 0.0);
    ck_assert_int_eq(ct_ee_classify(a0, a1, c2, c3), CT_EE_A1_B0);
    err = max_d(err, ct_rel_err(ct_ee_d2(a0, a1, c2, c3, CT_EE_A1_B0, NULL, NULL), 1.0, 0));
    ck_assert(ct_ee_d2(a0, a1, c2, c3, CT_EE_A_B, g, H) == 1.0);
    ck_assert(all_finite(g, 12) && all_finite(H, 144));
    /* edges sharing a vertex */
    t = ct_ee_classify(a0, a1, a1, q);
    ck_assert(ct_ee_d2(a0, a1, a1, q, t, g, H) == 0.0);
    ck_assert(all_finite(g, 12) && all_finite(H, 144));

    /* degenerate triangles: collinear, two and three coincident vertices */
    const double t0[3] = {0, 0, 0}, t1[3] = {1, 0, 0}, t2[3] = {2, 0, 0};
    const double p[3] = {0.5, 0.3, 0.4}, pb[3] = {3, 0.3, 0.4};
    ct_pt_type pt = ct_pt_classify(p, t0, t1, t2);
    ck_assert(pt == CT_PT_P_E0 || pt == CT_PT_P_E2);
    err = max_d(err, ct_rel_err(ct_pt_d2(p, t0, t1, t2, pt, NULL, NULL), 0.25, 0));
    err = max_d(err, ct_rel_err(ct_pt_d2(p, t0, t1, t2, CT_PT_P_T, g, H), 0.25, 0));
    ck_assert(all_finite(g, 12) && all_finite(H, 144));
    err = max_d(err, ct_rel_err(pt_closest_d2(p, t0, t1, t2), 0.25, 0));
    ck_assert_int_eq(ct_pt_classify(pb, t0, t1, t2), CT_PT_P_T2);
    err = max_d(err, ct_rel_err(ct_pt_d2(pb, t0, t1, t2, CT_PT_P_T2, NULL, NULL), 1.25, 0));
    pt = ct_pt_classify(p, t0, t1, t1);
    ck_assert(pt != CT_PT_P_T);
    err = max_d(err, ct_rel_err(ct_pt_d2(p, t0, t1, t1, pt, NULL, NULL), 0.25, 0));
    ck_assert_int_eq(ct_pt_classify(p, o, o, o), CT_PT_P_T0);
    err = max_d(err, ct_rel_err(ct_pt_d2(p, o, o, o, CT_PT_P_T, NULL, NULL), dist2(3, p, o), 0));
    /* a rounded collinear triangle in a general direction (t2 ≈ t0 + 2.5 (t1 − t0)) */
    const double u0[3] = {0.1, 0.2, 0.3}, u1[3] = {0.4, 0.6, 0.5};
    double u2[3], pu[3] = {0.5, -0.3, 0.9};
    for (int a = 0; a < 3; ++a) u2[a] = u0[a] + 2.5 * (u1[a] - u0[a]);
    pt = ct_pt_classify(pu, u0, u1, u2);
    ck_assert(pt != CT_PT_P_T);
    err = max_d(err, ct_rel_err(ct_pt_d2(pu, u0, u1, u2, pt, NULL, NULL), ref_pe(3, pu, u0, u2), 0));
    /* a point on the triangle (vertex, edge, interior): d = 0 */
    const double s0[3] = {0, 0, 0}, s1[3] = {1, 0, 0}, s2[3] = {0, 1, 0}, m[3] = {0.5, 0, 0};
    const double *on[3] = {s1, m, (const double[]){0.25, 0.25, 0}};
    for (int k = 0; k < 3; ++k) {
        pt = ct_pt_classify(on[k], s0, s1, s2);
        ck_assert(ct_pt_d2(on[k], s0, s1, s2, pt, g, H) == 0.0);
        ck_assert(all_finite(g, 12) && all_finite(H, 144));
    }
    printf("degenerate cases: max rel err %.2e\n", err);
    ck_assert_double_le(err, 1e-14);
}
END_TEST

/* Fuzz: stencils with coordinates on the grid {-1, 0, 1} (many coincident points, zero-length,
 * collinear, parallel and coplanar configurations): classification, value, gradient and Hessian
 * must be finite and the value must equal the brute-force minimum. */
START_TEST(test_degenerate_grid)
{
    double worst = 0.0;
    int n = 0;
    for (int rep = 0; rep < 1500; ++rep) {
        double x[12], g[12], H[144];
        for (int i = 0; i < 12; ++i) x[i] = (double)((int)floor(1.5 * (urand() + 1.0)) - 1);
        const double *v0 = x, *v1 = x + 3, *v2 = x + 6, *v3 = x + 9;
        const int which = rep % 4;
        double d2, want;
        if (which == 0) {
            const int dim = 2 + rep / 4 % 2;
            d2 = ct_pe_d2(dim, v0, v1, v2, ct_pe_classify(dim, v0, v1, v2), g, H);
            ck_assert(all_finite(g, 3 * dim) && all_finite(H, 9 * dim * dim));
            want = ref_pe(dim, v0, v1, v2);
        } else if (which == 1) {
            d2 = ct_pt_d2(v0, v1, v2, v3, ct_pt_classify(v0, v1, v2, v3), g, H);
            want = ref_pt(v0, v1, v2, v3);
        } else {
            d2 = ct_ee_d2(v0, v1, v2, v3, ct_ee_classify(v0, v1, v2, v3), g, H);
            want = ref_ee(v0, v1, v2, v3);
        }
        if (which) ck_assert(all_finite(g, 12) && all_finite(H, 144));
        const double e = fabs(d2 - want) / max_d(want, 1e-12);
        worst = max_d(worst, e);
        ck_assert_msg(e < 1e-10, "grid stencil %d (kind %d): %.17g vs %.17g", rep, which, d2, want);
        ++n;
    }
    printf("grid (degenerate) stencils: %d, max rel err vs brute force %.2e\n", n, worst);
}
END_TEST

/* ---- random stencils against brute force ---- */

START_TEST(test_random_brute_force)
{
    int pe_seen[2][3] = {{0}}, pt_seen[7] = {0}, ee_seen[9] = {0};
    double e_pe = 0.0, e_pt = 0.0, e_ee = 0.0, e_cl = 0.0;
    const double floor = 1e-12;
    for (int rep = 0; rep < 4000; ++rep) {
        const int dim = 2 + rep % 2;
        double p[3], e0[3], e1[3];
        rand_vec(dim, 1.0, e0), rand_vec(dim, 1.0, e1), rand_vec(dim, 2.0, p);
        const ct_pe_type t = ct_pe_classify(dim, p, e0, e1);
        pe_seen[dim - 2][t]++;
        const double d2 = ct_pe_d2(dim, p, e0, e1, t, NULL, NULL), want = ref_pe(dim, p, e0, e1);
        e_pe = max_d(e_pe, fabs(d2 - want) / max_d(want, floor));
        e_cl = max_d(e_cl, fabs(pe_closest_d2(dim, p, e0, e1) - d2) / max_d(d2, floor));
    }
    for (int rep = 0; rep < 3000; ++rep) {
        double p[3], t0[3], t1[3], t2[3];
        rand_vec(3, 1.0, t0), rand_vec(3, 1.0, t1), rand_vec(3, 1.0, t2);
        rand_vec(3, 1.5, p);
        if (rep % 5 == 0) p[2] = 0.02 * urand(); /* near the plane z = 0 */
        const ct_pt_type t = ct_pt_classify(p, t0, t1, t2);
        pt_seen[t]++;
        const double d2 = ct_pt_d2(p, t0, t1, t2, t, NULL, NULL), want = ref_pt(p, t0, t1, t2);
        e_pt = max_d(e_pt, fabs(d2 - want) / max_d(want, floor));
        e_cl = max_d(e_cl, fabs(pt_closest_d2(p, t0, t1, t2) - d2) / max_d(d2, floor));
    }
    for (int rep = 0; rep < 3000; ++rep) {
        double a0[3], a1[3], b0[3], b1[3];
        rand_vec(3, 1.0, a0), rand_vec(3, 1.0, a1), rand_vec(3, 1.0, b0), rand_vec(3, 1.0, b1);
        if (rep % 10 == 0) { /* b nearly parallel to a (sin² of the angle ~ 1e-26) */
            double off[3];
            rand_vec(3, 0.5, off);
            const double f = 0.3 + urand();
            for (int a = 0; a < 3; ++a) b1[a] = b0[a] + f * (a1[a] - a0[a]) + 1e-13 * off[a];
        }
        const ct_ee_type t = ct_ee_classify(a0, a1, b0, b1);
        if (rep % 10 == 0) ck_assert(t != CT_EE_A_B);
        ee_seen[t]++;
        const double d2 = ct_ee_d2(a0, a1, b0, b1, t, NULL, NULL), want = ref_ee(a0, a1, b0, b1);
        e_ee = max_d(e_ee, fabs(d2 - want) / max_d(want, floor));
        e_cl = max_d(e_cl, fabs(ee_closest_d2(a0, a1, b0, b1) - d2) / max_d(d2, floor));
    }
    printf("random vs brute force: PE %.2e (4000, 2D+3D), PT %.2e (3000), EE %.2e (3000); "
           "closest points %.2e\n", e_pe, e_pt, e_ee, e_cl);
    printf("  types hit: PE2 %d/%d/%d PE3 %d/%d/%d  PT", pe_seen[0][0], pe_seen[0][1], pe_seen[0][2],
           pe_seen[1][0], pe_seen[1][1], pe_seen[1][2]);
    for (int t = 0; t < 7; ++t) printf(" %d", pt_seen[t]);
    printf("  EE");
    for (int t = 0; t < 9; ++t) printf(" %d", ee_seen[t]);
    printf("\n");
    for (int d = 0; d < 2; ++d)
        for (int t = 0; t < 3; ++t) ck_assert(pe_seen[d][t] > 0);
    for (int t = 0; t < 7; ++t) ck_assert(pt_seen[t] > 0);
    for (int t = 0; t < 9; ++t) ck_assert(ee_seen[t] > 0);
    ck_assert_double_le(e_pe, 1e-10);
    ck_assert_double_le(e_pt, 1e-10);
    ck_assert_double_le(e_ee, 1e-10);
    ck_assert_double_le(e_cl, 1e-10);
}
END_TEST

/* ---- finite differences, type held fixed ---- */

enum { FAM_PP, FAM_PE, FAM_PT, FAM_EE };
static const int fam_nv[4] = {2, 3, 4, 4};
static const int fam_ntype[4] = {1, 3, 7, 9};
static const char *const fam_name[4] = {"PP", "PE", "PT", "EE"};

typedef struct {
    int fam, dim, type;
} fd_ctx;

static double eval_d2(const fd_ctx *c, const double *x, double *g, double *H)
{
    const int d = c->dim;
    switch (c->fam) {
    case FAM_PP: return ct_pp_d2(d, x, x + d, g, H);
    case FAM_PE: return ct_pe_d2(d, x, x + d, x + 2 * d, (ct_pe_type)c->type, g, H);
    case FAM_PT: return ct_pt_d2(x, x + 3, x + 6, x + 9, (ct_pt_type)c->type, g, H);
    default: return ct_ee_d2(x, x + 3, x + 6, x + 9, (ct_ee_type)c->type, g, H);
    }
}

static double fd_f(const double *x, void *c) { return eval_d2(c, x, NULL, NULL); }
static void fd_g(const double *x, void *c, double *g) { eval_d2(c, x, g, NULL); }

/* sin² of the angle between u and v */
static double sin2(const double *u, const double *v)
{
    const double c[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                         u[0] * v[1] - u[1] * v[0]};
    const double uu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    const double vv = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
    return (c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) / (uu * vv);
}

/* stencil acceptable for FD: every edge used has length >= 0.3, every interior type has
 * an angle with sin² >= 0.05 (the functions are smooth but steep near degeneracy) */
static int fd_stencil_ok(const fd_ctx *c, const double *x)
{
    const int d = c->dim;
    if (c->fam == FAM_PE) return dist2(d, x + d, x + 2 * d) > 0.09;
    if (c->fam == FAM_PP) return 1;
    double e[3][3];
    for (int a = 0; a < 3; ++a) {
        e[0][a] = x[3 + a] - x[a];     /* PT: p - t0 (unused) | EE: a1 - a0 */
        e[1][a] = x[6 + a] - x[3 + a]; /* PT: t1 - t0 | EE: b0 - a1 (unused) */
        e[2][a] = x[9 + a] - x[6 + a]; /* PT: t2 - t1 | EE: b1 - b0 */
    }
    if (c->fam == FAM_PT) {
        double e3[3];
        for (int a = 0; a < 3; ++a) e3[a] = x[3 + a] - x[9 + a];
        return dist2(3, x + 3, x + 6) > 0.09 && dist2(3, x + 6, x + 9) > 0.09 &&
               dist2(3, x + 9, x + 3) > 0.09 && sin2(e[1], e3) > 0.05;
    }
    return dist2(3, x, x + 3) > 0.09 && dist2(3, x + 6, x + 9) > 0.09 && sin2(e[0], e[2]) > 0.05;
}

START_TEST(test_fd)
{
    const double h = 1e-6;
    double worst_g = 0.0, worst_H = 0.0, worst_sym = 0.0;
    for (int fam = 0; fam < 4; ++fam)
        for (int dim = 2; dim <= 3; ++dim) {
            if (dim == 2 && fam >= FAM_PT) continue;
            for (int type = 0; type < fam_ntype[fam]; ++type) {
                fd_ctx c = {fam, dim, type};
                const int n = fam_nv[fam] * dim;
                double eg = 0.0, eH = 0.0;
                for (int rep = 0; rep < 60; ++rep) {
                    double x[12], g[12], gfd[12], H[144], Hfd[144], Ht[144];
                    do rand_vec(n, 1.0, x);
                    while (!fd_stencil_ok(&c, x));
                    eval_d2(&c, x, g, H);
                    ct_fd_gradient(fd_f, x, (size_t)n, h, &c, gfd);
                    ct_fd_hessian(fd_g, x, (size_t)n, h, &c, Hfd);
                    for (int i = 0; i < n; ++i)
                        for (int j = 0; j < n; ++j) {
                            Ht[i + j * n] = H[i * n + j]; /* row-major -> column-major */
                            worst_sym = max_d(worst_sym, fabs(H[i * n + j] - H[j * n + i]));
                        }
                    eg = max_d(eg, ct_rel_err_vec(g, gfd, (size_t)n, 1e-8));
                    eH = max_d(eH, ct_rel_err_vec(Ht, Hfd, (size_t)(n * n), 1e-8));
                }
                printf("fd %s %dD type %d: grad %.2e  hess %.2e\n", fam_name[fam], dim, type, eg, eH);
                worst_g = max_d(worst_g, eg);
                worst_H = max_d(worst_H, eH);
            }
        }
    printf("fd all types (60 stencils each, h = 1e-6): max rel err grad %.2e, hess %.2e, "
           "asymmetry %.1e\n", worst_g, worst_H, worst_sym);
    ck_assert_double_le(worst_g, 1e-6);
    ck_assert_double_le(worst_H, 1e-5);
    ck_assert_double_le(worst_sym, 0.0);
}
END_TEST

/* ---- mollifier ---- */

static double fd_cross2(const double *x, void *c)
{
    (void)c;
    return ct_ee_cross2(x, x + 3, x + 6, x + 9, NULL, NULL);
}

static void fd_cross2_g(const double *x, void *c, double *g)
{
    (void)c;
    ct_ee_cross2(x, x + 3, x + 6, x + 9, g, NULL);
}

START_TEST(test_mollifier)
{
    /* closed forms: eps = 1e-3 |a|²|b|², c = |a|²|b|² sin²θ */
    const double a0[3] = {1, 1, 1}, a1[3] = {3, 1, 1}, b0[3] = {0, 0, 5};
    const double pi = 3.14159265358979323846;
    const double b1[3] = {3 * cos(pi / 6), 3 * sin(pi / 6), 5};
    ck_assert_double_eq_tol(ct_ee_mollifier_eps(a0, a1, b0, b1), 1e-3 * 4 * 9, 1e-17);
    ck_assert_double_eq_tol(ct_ee_cross2(a0, a1, b0, b1, NULL, NULL), 4 * 9 * 0.25, 1e-13);
    ck_assert(ct_ee_cross2(a0, a1, a0, a1, NULL, NULL) == 0.0);

    /* FD of c = |ea × eb|² */
    double eg = 0.0, eH = 0.0;
    for (int rep = 0; rep < 200; ++rep) {
        double x[12], g[12], gfd[12], H[144], Hfd[144], Ht[144];
        rand_vec(12, 1.0, x);
        if (rep % 4 == 0) /* nearly parallel, where the mollifier is active */
            for (int a = 0; a < 3; ++a) x[9 + a] = x[6 + a] + 0.7 * (x[3 + a] - x[a]) + 1e-3 * urand();
        ct_ee_cross2(x, x + 3, x + 6, x + 9, g, H);
        ct_fd_gradient(fd_cross2, x, 12, 1e-6, NULL, gfd);
        ct_fd_hessian(fd_cross2_g, x, 12, 1e-6, NULL, Hfd);
        for (int i = 0; i < 12; ++i)
            for (int j = 0; j < 12; ++j) Ht[i + 12 * j] = H[12 * i + j];
        eg = max_d(eg, ct_rel_err_vec(g, gfd, 12, 1e-8));
        eH = max_d(eH, ct_rel_err_vec(Ht, Hfd, 144, 1e-8));
    }
    /* m(c): values at 0 and eps, FD of m' and m'' below eps, continuity of m and m' at eps */
    const double eps = 0.036;
    double dm, d2m, em = 0.0;
    ck_assert(ct_ee_mollifier(0.0, eps, &dm, &d2m) == 0.0);
    ck_assert_double_eq_tol(dm, 2.0 / eps, 1e-12);
    ck_assert(ct_ee_mollifier(eps, eps, &dm, &d2m) == 1.0 && dm == 0.0 && d2m == 0.0);
    ck_assert(ct_ee_mollifier(5 * eps, eps, &dm, &d2m) == 1.0 && dm == 0.0 && d2m == 0.0);
    for (int k = 1; k < 100; ++k) {
        const double c = eps * k / 100.0, hc = 1e-6 * eps;
        const double m = ct_ee_mollifier(c, eps, &dm, &d2m);
        ck_assert_double_eq_tol(m, (c / eps) * (2.0 - c / eps), 1e-15);
        double dp, dmm;
        const double fd1 = (ct_ee_mollifier(c + hc, eps, &dp, NULL) -
                            ct_ee_mollifier(c - hc, eps, &dmm, NULL)) / (2 * hc);
        const double fd2 = (dp - dmm) / (2 * hc);
        em = max_d(em, fmax(ct_rel_err(dm, fd1, 1.0 / eps), ct_rel_err(d2m, fd2, 1.0 / (eps * eps))));
    }
    double jump_m = 0.0, jump_dm = 0.0;
    for (int k = 4; k <= 12; k += 4) {
        const double delta = pow(10.0, -k) * eps;
        double dl, dr;
        const double ml = ct_ee_mollifier(eps - delta, eps, &dl, NULL);
        const double mr = ct_ee_mollifier(eps + delta, eps, &dr, NULL);
        jump_m = fabs(mr - ml), jump_dm = fabs(dr - dl) * eps;
        /* m(ε − δ) = 1 − (δ/ε)², m'(ε − δ) = 2δ/ε² */
        ck_assert_double_le(jump_m, 1.01 * pow(10.0, -2 * k) + 4.5e-16); /* + 2 ulp(1) */
        ck_assert_double_le(jump_dm, 2.01 * pow(10.0, -k));
    }
    printf("mollifier: cross2 fd grad %.2e hess %.2e; m fd %.2e; jump at eps (delta = 1e-12 eps): "
           "m %.1e, eps*m' %.1e\n", eg, eH, em, jump_m, jump_dm);
    ck_assert_double_le(eg, 1e-6);
    ck_assert_double_le(eH, 1e-5);
    ck_assert_double_le(em, 1e-6);
}
END_TEST

/* ---- symmetry and rigid-motion invariance ---- */

/* type of EE with the edges swapped: A_i B_j -> A_j B_i, A_B0 <-> A0_B, A_B1 <-> A1_B */
static ct_ee_type ee_swap_type(ct_ee_type t)
{
    static const ct_ee_type m[9] = {CT_EE_A0_B0, CT_EE_A1_B0, CT_EE_A0_B1, CT_EE_A1_B1,
                                    CT_EE_A0_B,  CT_EE_A1_B,  CT_EE_A_B0,  CT_EE_A_B1, CT_EE_A_B};
    return m[t];
}

START_TEST(test_symmetry)
{
    /* errors relative to max(d², 1e-6): d² computed from differently ordered (rounded)
     * differences carries an absolute error ~ε·L·d (L ~ 1 the stencil size) */
    const double fl = 1e-6;
    double e_swap = 0.0, e_rev = 0.0, e_cyc = 0.0, e_gswap = 0.0;
    int type_swap_ok = 0, n = 0;
    for (int rep = 0; rep < 2000; ++rep) {
        double x[12], g[12], gs[12];
        rand_vec(12, 1.0, x);
        const double *a0 = x, *a1 = x + 3, *b0 = x + 6, *b1 = x + 9;
        const ct_ee_type t = ct_ee_classify(a0, a1, b0, b1);
        const double d = ct_ee_d2(a0, a1, b0, b1, t, g, NULL);
        /* swapped edges: same value, the mapped type and the permuted gradient */
        const ct_ee_type ts = ct_ee_classify(b0, b1, a0, a1);
        type_swap_ok += ts == ee_swap_type(t);
        e_swap = max_d(e_swap, ct_rel_err(ct_ee_d2(b0, b1, a0, a1, ts, NULL, NULL), d, fl));
        ct_ee_d2(b0, b1, a0, a1, ee_swap_type(t), gs, NULL);
        double gp[12];
        memcpy(gp, gs + 6, 6 * sizeof(double));
        memcpy(gp + 6, gs, 6 * sizeof(double));
        e_gswap = max_d(e_gswap, ct_rel_err_vec(gp, g, 12, fl));
        /* reversed orientation of both edges */
        const ct_ee_type tr = ct_ee_classify(a1, a0, b1, b0);
        e_rev = max_d(e_rev, ct_rel_err(ct_ee_d2(a1, a0, b1, b0, tr, NULL, NULL), d, fl));
        /* PT: cyclic permutation of the triangle's vertices */
        const double *p = x, *t0 = x + 3, *t1 = x + 6, *t2 = x + 9;
        const double dpt = ct_pt_d2(p, t0, t1, t2, ct_pt_classify(p, t0, t1, t2), NULL, NULL);
        const double dc = ct_pt_d2(p, t1, t2, t0, ct_pt_classify(p, t1, t2, t0), NULL, NULL);
        const double dr = ct_pt_d2(p, t0, t2, t1, ct_pt_classify(p, t0, t2, t1), NULL, NULL);
        e_cyc = max_d(e_cyc, fmax(ct_rel_err(dc, dpt, fl), ct_rel_err(dr, dpt, fl)));
        ++n;
    }
    printf("symmetry (%d stencils): EE swap %.2e (types mapped %d/%d, gradient %.2e), EE reversed "
           "%.2e, PT vertex permutations %.2e\n", n, e_swap, type_swap_ok, n, e_gswap, e_rev, e_cyc);
    ck_assert_double_le(e_swap, 1e-12);
    ck_assert_double_le(e_gswap, 1e-12);
    ck_assert_double_le(e_rev, 1e-12);
    ck_assert_double_le(e_cyc, 1e-12);
    ck_assert_int_ge(type_swap_ok, n - 2); /* only exact ties could map differently */
}
END_TEST

START_TEST(test_rigid_invariance)
{
    double e_val = 0.0, e_g = 0.0, e_H = 0.0, e_cls = 0.0;
    int same_type = 0, n = 0;
    for (int fam = FAM_PE; fam <= FAM_EE; ++fam)
        for (int dim = 2; dim <= 3; ++dim) {
            if (dim == 2 && fam != FAM_PE) continue;
            const int nv = fam_nv[fam], N = nv * dim;
            for (int rep = 0; rep < 500; ++rep) {
                double x[12], y[12], R[9], T[3], g[12], gy[12], H[144], Hy[144];
                rand_vec(N, 1.0, x);
                random_rotation(dim, R);
                rand_vec(dim, 5.0, T);
                for (int v = 0; v < nv; ++v) {
                    matvec(dim, R, x + v * dim, y + v * dim);
                    for (int a = 0; a < dim; ++a) y[v * dim + a] += T[a];
                }
                int type, type_y;
                if (fam == FAM_PE) {
                    type = ct_pe_classify(dim, x, x + dim, x + 2 * dim);
                    type_y = ct_pe_classify(dim, y, y + dim, y + 2 * dim);
                } else if (fam == FAM_PT) {
                    type = ct_pt_classify(x, x + 3, x + 6, x + 9);
                    type_y = ct_pt_classify(y, y + 3, y + 6, y + 9);
                } else {
                    type = ct_ee_classify(x, x + 3, x + 6, x + 9);
                    type_y = ct_ee_classify(y, y + 3, y + 6, y + 9);
                }
                fd_ctx c = {fam, dim, type}, cy = {fam, dim, type_y};
                const double d = eval_d2(&c, x, g, H), dy = eval_d2(&c, y, gy, Hy);
                e_val = max_d(e_val, ct_rel_err(dy, d, 1e-6));
                e_cls = max_d(e_cls, ct_rel_err(eval_d2(&cy, y, NULL, NULL), d, 1e-6));
                same_type += type == type_y;
                /* g_y = (I ⊗ R) g, H_y = (I ⊗ R) H (I ⊗ R)ᵀ */
                double Rg[12], RH[144], RHR[144];
                for (int v = 0; v < nv; ++v) matvec(dim, R, g + v * dim, Rg + v * dim);
                for (int I = 0; I < N; ++I)
                    for (int J = 0; J < N; ++J) {
                        double s = 0.0;
                        for (int k = 0; k < dim; ++k)
                            s += R[(I % dim) * dim + k] * H[((I / dim) * dim + k) * N + J];
                        RH[I * N + J] = s;
                    }
                for (int I = 0; I < N; ++I)
                    for (int J = 0; J < N; ++J) {
                        double s = 0.0;
                        for (int k = 0; k < dim; ++k)
                            s += RH[I * N + (J / dim) * dim + k] * R[(J % dim) * dim + k];
                        RHR[I * N + J] = s;
                    }
                e_g = max_d(e_g, ct_rel_err_vec(gy, Rg, (size_t)N, 1e-6));
                e_H = max_d(e_H, ct_rel_err_vec(Hy, RHR, (size_t)(N * N), 1e-6));
                ++n;
            }
        }
    printf("rigid motion (%d stencils, |T| <= 5): value %.2e, gradient %.2e, Hessian %.2e; "
           "re-classified value %.2e, same type %d/%d\n", n, e_val, e_g, e_H, e_cls, same_type, n);
    ck_assert_double_le(e_val, 1e-10);
    ck_assert_double_le(e_g, 1e-10);
    ck_assert_double_le(e_H, 1e-10);
    ck_assert_double_le(e_cls, 1e-10);
}
END_TEST

/* ---- timing (printed, not asserted) ---- */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

START_TEST(test_timing)
{
    enum { NS = 256, REPS = 800 };
    static double xs[NS][12];
    for (int i = 0; i < NS; ++i) rand_vec(12, 1.0, xs[i]);
    double sink = 0.0, g[12], H[144];
    for (int fam = FAM_PE; fam <= FAM_EE; ++fam) {
        const double t0 = now();
        for (int r = 0; r < REPS; ++r)
            for (int i = 0; i < NS; ++i) {
                const double *x = xs[i];
                fd_ctx c = {fam, 3, 0};
                if (fam == FAM_PE) c.type = ct_pe_classify(3, x, x + 3, x + 6);
                else if (fam == FAM_PT) c.type = ct_pt_classify(x, x + 3, x + 6, x + 9);
                else c.type = ct_ee_classify(x, x + 3, x + 6, x + 9);
                sink += eval_d2(&c, x, g, H) + H[r % 100];
            }
        const double dt = now() - t0;
        printf("timing %s 3D classify + d2 + gradient + Hessian: %.0f ns/call\n", fam_name[fam],
               1e9 * dt / (NS * REPS));
    }
    ck_assert(isfinite(sink));
}
END_TEST

static Suite *distance_suite(void)
{
    Suite *s = suite_create("distance");
    TCase *tc = tcase_create("distance");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_closed_form_pe);
    tcase_add_test(tc, test_closed_form_pt);
    tcase_add_test(tc, test_closed_form_ee);
    tcase_add_test(tc, test_c1_borders);
    tcase_add_test(tc, test_degenerate);
    tcase_add_test(tc, test_degenerate_grid);
    tcase_add_test(tc, test_random_brute_force);
    tcase_add_test(tc, test_fd);
    tcase_add_test(tc, test_mollifier);
    tcase_add_test(tc, test_symmetry);
    tcase_add_test(tc, test_rigid_invariance);
    tcase_add_test(tc, test_timing);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(distance_suite)
