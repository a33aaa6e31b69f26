/* ct_barrier.h — the IPC log barrier in distance form, evaluated through squared distances.
 *
 *   b(d) = -d̂ (d/d̂ - 1)² ln(d/d̂)   for 0 < d < d̂,   0 for d ≥ d̂      (Fang et al. 2023 eq. 2)
 *
 * b has units of length; a pair's energy is w·κ·b(d) with w an area (m² in 3D, m in 2D) and κ a
 * pressure (Pa), so -κ b'(d) is the contact pressure at gap d and a uniform gap over an area A
 * carries the force A·(-κ b'(d)) whatever the mesh. b is C² at d = d̂ (b = b' = b'' = 0 there).
 *
 * Contact code works with s = d² (no square root where none is needed); the shape stays the one
 * in d: b_s = b'(d)/(2d), b_ss = (b''(d) - b'(d)/d)/(4d²).
 * layer: contact */
#ifndef CT_BARRIER_H
#define CT_BARRIER_H

/* b(d) and its first two derivatives in d (d1, d2 may be NULL). +INFINITY for d <= 0. */
double ct_barrier(double d, double dhat, double *d1, double *d2);

/* The same as a function of s = d² (bs, bss may be NULL). */
double ct_barrier_s(double s, double dhat, double *bs, double *bss);

/* Convert derivatives of f(d) into derivatives of f(√s) at d > 0: fs = f'/(2d),
 * fss = (f'' - f'/d)/(4d²). */
void ct_d_to_s(double d, double f1, double f2, double *fs, double *fss);

/* Contact pressure of the barrier, -κ b'(d) (Pa), 0 for d ≥ d̂. */
double ct_barrier_pressure(double d, double dhat, double kappa);

#endif
