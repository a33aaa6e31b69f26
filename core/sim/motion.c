/* motion.c — rigid motion of points: a rotation about an axis (also the mesh transforms of sim.c)
 * and the scripted piecewise rigid motion of Dirichlet-held vertices with its exact tangent. */
#include "contactlab/ct_sim.h"

#include <math.h>

#include "sim/motion.h"

void ct_rotate_point(int dim, const double *axis, double angle, double *p)
{
    double c = cos(angle), s = sin(angle);
    if (dim == 2) {
        double x = p[0], y = p[1];
        p[0] = c * x - s * y;
        p[1] = s * x + c * y;
        return;
    }
    /* Rodrigues: p' = p c + (k x p) s + k (k.p)(1 - c) */
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double k[3] = {axis[0] / n, axis[1] / n, axis[2] / n};
    double kp = k[0] * p[0] + k[1] * p[1] + k[2] * p[2];
    double cx[3] = {k[1] * p[2] - k[2] * p[1], k[2] * p[0] - k[0] * p[2], k[0] * p[1] - k[1] * p[0]};
    for (int i = 0; i < 3; ++i) p[i] = p[i] * c + cx[i] * s + k[i] * kp * (1.0 - c);
}

void ct_motion_eval(const ct_dirichlet *d, int dim, const double *X, double t, double *out)
{
    double p[3] = {0, 0, 0};
    for (int c = 0; c < dim; ++c) p[c] = X[c];
    double t0 = 0.0, shift[3] = {0, 0, 0}; /* accumulated translation of the centre */
    for (int s = 0; s < d->nseg && t > t0; ++s) {
        const ct_motion_segment *g = &d->seg[s];
        double tau = fmin(t, g->until) - t0;
        if (tau > 0) {
            double cen[3] = {0, 0, 0};
            for (int c = 0; c < dim; ++c) cen[c] = g->center[c] + shift[c];
            if (g->omega != 0.0) {
                double r[3] = {0, 0, 0};
                for (int c = 0; c < dim; ++c) r[c] = p[c] - cen[c];
                ct_rotate_point(dim, g->axis, g->omega * tau, r);
                for (int c = 0; c < dim; ++c) p[c] = cen[c] + r[c];
            }
            for (int c = 0; c < dim; ++c) {
                p[c] += g->velocity[c] * tau;
                shift[c] += g->velocity[c] * tau;
            }
        }
        t0 = g->until;
    }
    for (int c = 0; c < dim; ++c) out[c] = p[c];
}

/* d/d(angle) of ct_rotate_point(dim, axis, angle, .) applied to r, at the rotated point pr = R r:
 * k x pr (3D, k the unit axis), (-pr_y, pr_x) (2D). */
static void rotate_rate(int dim, const double *axis, const double *pr, double *out)
{
    if (dim == 2) {
        out[0] = -pr[1];
        out[1] = pr[0];
        return;
    }
    double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
    double k[3] = {axis[0] / n, axis[1] / n, axis[2] / n};
    out[0] = k[1] * pr[2] - k[2] * pr[1];
    out[1] = k[2] * pr[0] - k[0] * pr[2];
    out[2] = k[0] * pr[1] - k[1] * pr[0];
}

/* The same operations as ct_motion_eval on (p, shift), with their tangents (dp, dshift) carried
 * along from the seed (segment seg's velocity[comp], omega or center[comp]). */
void ct_motion_eval_tangent(const ct_dirichlet *d, int dim, const double *X, double t, int seg,
                            ct_motion_field field, int comp, double *dout)
{
    double p[3] = {0, 0, 0}, dp[3] = {0, 0, 0};
    for (int c = 0; c < dim; ++c) p[c] = X[c];
    double t0 = 0.0, shift[3] = {0, 0, 0}, dshift[3] = {0, 0, 0};
    for (int s = 0; s < d->nseg && t > t0; ++s) {
        const ct_motion_segment *g = &d->seg[s];
        double tau = fmin(t, g->until) - t0;
        if (tau > 0) {
            const int seeded = s == seg;
            double cen[3] = {0, 0, 0}, dcen[3] = {0, 0, 0};
            for (int c = 0; c < dim; ++c) {
                cen[c] = g->center[c] + shift[c];
                dcen[c] = dshift[c] + (seeded && field == CT_MOTION_CENTER && c == comp ? 1.0 : 0.0);
            }
            const double dangle = seeded && field == CT_MOTION_OMEGA ? tau : 0.0;
            if (g->omega != 0.0 || dangle != 0.0) {
                double r[3] = {0, 0, 0}, dr[3] = {0, 0, 0}, rate[3] = {0, 0, 0};
                for (int c = 0; c < dim; ++c) {
                    r[c] = p[c] - cen[c];
                    dr[c] = dp[c] - dcen[c];
                }
                if (g->omega != 0.0) {
                    ct_rotate_point(dim, g->axis, g->omega * tau, r);
                    ct_rotate_point(dim, g->axis, g->omega * tau, dr);
                }
                rotate_rate(dim, g->axis, r, rate);
                for (int c = 0; c < dim; ++c) {
                    p[c] = cen[c] + r[c];
                    dp[c] = dcen[c] + dr[c] + dangle * rate[c];
                }
            }
            const double *dv = NULL;
            double ev[3] = {0, 0, 0};
            if (seeded && field == CT_MOTION_VELOCITY) {
                ev[comp] = 1.0;
                dv = ev;
            }
            for (int c = 0; c < dim; ++c) {
                p[c] += g->velocity[c] * tau;
                shift[c] += g->velocity[c] * tau;
                if (dv) {
                    dp[c] += dv[c] * tau;
                    dshift[c] += dv[c] * tau;
                }
            }
        }
        t0 = g->until;
    }
    for (int c = 0; c < dim; ++c) dout[c] = dp[c];
}
