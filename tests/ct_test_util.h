/* ct_test_util.h — shared helpers for the Check suites. */
#ifndef CT_TEST_UTIL_H
#define CT_TEST_UTIL_H

#include <check.h>
#include <stddef.h>

/* Run one suite; returns the process exit status (0 if every test passed). */
int ct_test_run(Suite *s);

/* Standard main for a check_<area>.c file: `CT_TEST_MAIN(area_suite)`. */
#define CT_TEST_MAIN(suite_fn) \
    int main(void) { return ct_test_run(suite_fn()); }

/* Relative error |a - b| / max(|b|, floor). */
double ct_rel_err(double a, double b, double floor);
/* Relative error of vectors in the 2-norm: |a - b| / max(|b|, floor). */
double ct_rel_err_vec(const double *a, const double *b, size_t n, double floor);

/* Central finite differences.
 *   f(x, ctx) -> scalar; g(x, ctx, out) -> gradient (overwrite).
 * ct_fd_gradient fills g_fd; ct_fd_hessian fills H_fd (n x n, column-major) by central
 * differences of the analytic gradient. */
typedef double (*ct_fd_fun)(const double *x, void *ctx);
typedef void (*ct_fd_grad)(const double *x, void *ctx, double *g);
void ct_fd_gradient(ct_fd_fun f, const double *x, size_t n, double eps, void *ctx, double *g_fd);
void ct_fd_hessian(ct_fd_grad g, const double *x, size_t n, double eps, void *ctx, double *H_fd);

/* The tests' pseudo-random stream (64-bit LCG): the next value in [0, 1). */
double ct_test_lcg01(unsigned long long *r);
/* Another stream (xorshift64*, state *s ≠ 0): the next value in [-1, 1). */
double ct_test_xs_pm1(unsigned long long *s);
/* Monotonic wall time (s), for printed timings. */
double ct_test_now(void);
/* Euclidean norm of a (n), and of a − b. */
double ct_test_norm(const double *a, size_t n);
double ct_test_diffnorm(const double *a, const double *b, size_t n);

/* The dense (nv·dim)² block (column-major, stencil coordinates: vertex q of v[], component k at
 * q·dim + k) summed from the triplets of a one-term Hessian; fails the test on a triplet outside
 * the stencil. */
struct ct_triplets;
void ct_test_stencil_block(const struct ct_triplets *T, const int *v, int nv, int dim, double *P);

/* A fresh temporary folder (created under $TMPDIR or /tmp); caller frees the string. */
char *ct_test_tmpdir(void);

/* Path of a file under tests/data (resolved from the CT_TEST_DATA environment variable
 * or the default "tests/data"); returns a static buffer. */
const char *ct_test_data(const char *name);

/* Parse a scene from JSON text (relative paths from base_dir, "." if NULL) and build the
 * simulation; fails the current test on any error (messages printed). */
struct ct_scene;
struct ct_sim;
struct ct_sim *ct_test_make_sim(struct ct_scene *sc, const char *json, const char *base_dir);

#endif
