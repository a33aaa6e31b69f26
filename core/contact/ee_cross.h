/* ee_cross.h — the edge–edge mollifier's ingredients as inline functions, for the loops that
 * evaluate them once per term (energies, gradients, the friction set's negligible-mollifier test):
 * c = |ea × eb|² with its gradient, and m(c). ct_ee_cross2 and ct_ee_mollifier (ct_distance.h)
 * are these functions, so every caller gets the same bits.
 * layer: contact (internal) */
#ifndef CT_EE_CROSS_H
#define CT_EE_CROSS_H

/* c = |n|², n = ea × eb, ea = a1 − a0, eb = b1 − b0; with g != NULL its gradient in
 * (a0, a1, b0, b1): ∂c/∂ea = 2 eb × n, ∂c/∂eb = 2 n × ea (cross-product form: accurate for
 * nearly parallel edges). */
static inline double ee_cross2_grad(const double *a0, const double *a1, const double *b0, const double *b1, double *g)
{
    const double ea[3] = {a1[0] - a0[0], a1[1] - a0[1], a1[2] - a0[2]};
    const double eb[3] = {b1[0] - b0[0], b1[1] - b0[1], b1[2] - b0[2]};
    const double n[3] = {ea[1] * eb[2] - ea[2] * eb[1], ea[2] * eb[0] - ea[0] * eb[2], ea[0] * eb[1] - ea[1] * eb[0]};
    if (g) {
        const double ga[3] = {eb[1] * n[2] - eb[2] * n[1], eb[2] * n[0] - eb[0] * n[2], eb[0] * n[1] - eb[1] * n[0]};
        const double gb[3] = {n[1] * ea[2] - n[2] * ea[1], n[2] * ea[0] - n[0] * ea[2], n[0] * ea[1] - n[1] * ea[0]};
        for (int a = 0; a < 3; ++a) {
            g[a] = -2.0 * ga[a], g[3 + a] = 2.0 * ga[a];
            g[6 + a] = -2.0 * gb[a], g[9 + a] = 2.0 * gb[a];
        }
    }
    return n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
}

/* m(c) = (c/ε)(2 − c/ε) below ε (m(0) = 0, m(ε) = 1, m'(ε) = 0), 1 above; its derivatives in
 * *dm, *d2m when asked for. */
static inline double ee_mollifier_of(double c, double eps, double *dm, double *d2m)
{
    if (c < eps && eps > 0.0) {
        const double x = c / eps;
        if (dm) *dm = (2.0 - 2.0 * x) / eps;
        if (d2m) *d2m = -2.0 / (eps * eps);
        return x * (2.0 - x);
    }
    if (dm) *dm = 0.0;
    if (d2m) *d2m = 0.0;
    return 1.0;
}

#endif
