/* barrier.c — the IPC log barrier b(d) (Fang et al. 2023 eq. 2) and its squared-distance form. */
#include "contactlab/ct_barrier.h"

#include <math.h>
#include <stddef.h>

double ct_barrier(double d, double dhat, double *d1, double *d2)
{
    if (d >= dhat) {
        if (d1) *d1 = 0.0;
        if (d2) *d2 = 0.0;
        return 0.0;
    }
    if (!(d > 0.0)) {
        if (d1) *d1 = -INFINITY;
        if (d2) *d2 = INFINITY;
        return INFINITY;
    }
    /* b = -dhat u² L with u = d/dhat - 1, L = ln(d/dhat) */
    double u = d / dhat - 1.0, L = log(d / dhat);
    if (d1) *d1 = -(2.0 * u * L + dhat * u * u / d);
    if (d2) *d2 = -(2.0 * L / dhat + 4.0 * u / d - dhat * u * u / (d * d));
    return -dhat * u * u * L;
}

void ct_d_to_s(double d, double f1, double f2, double *fs, double *fss)
{
    if (fs) *fs = f1 / (2.0 * d);
    if (fss) *fss = (f2 - f1 / d) / (4.0 * d * d);
}

double ct_barrier_s(double s, double dhat, double *bs, double *bss)
{
    if (s >= dhat * dhat) {
        if (bs) *bs = 0.0;
        if (bss) *bss = 0.0;
        return 0.0;
    }
    double d = sqrt(s), b1, b2;
    double b = ct_barrier(d, dhat, &b1, &b2);
    ct_d_to_s(d, b1, b2, bs, bss);
    return b;
}

double ct_barrier_pressure(double d, double dhat, double kappa)
{
    double b1;
    ct_barrier(d, dhat, &b1, NULL);
    return -kappa * b1;
}
