#include "ct_test_util.h"

#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int ct_test_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}

double ct_rel_err(double a, double b, double floor)
{
    double d = fabs(b) > floor ? fabs(b) : floor;
    return fabs(a - b) / d;
}

double ct_rel_err_vec(const double *a, const double *b, size_t n, double floor)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; ++i) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    num = sqrt(num);
    den = sqrt(den);
    return num / (den > floor ? den : floor);
}

void ct_fd_gradient(ct_fd_fun f, const double *x, size_t n, double eps, void *ctx, double *g_fd)
{
    double *xp = malloc(n * sizeof *xp);
    memcpy(xp, x, n * sizeof *xp);
    for (size_t i = 0; i < n; ++i) {
        xp[i] = x[i] + eps;
        double fp = f(xp, ctx);
        xp[i] = x[i] - eps;
        double fm = f(xp, ctx);
        xp[i] = x[i];
        g_fd[i] = (fp - fm) / (2.0 * eps);
    }
    free(xp);
}

void ct_fd_hessian(ct_fd_grad g, const double *x, size_t n, double eps, void *ctx, double *H_fd)
{
    double *xp = malloc(n * sizeof *xp);
    double *gp = malloc(n * sizeof *gp);
    double *gm = malloc(n * sizeof *gm);
    memcpy(xp, x, n * sizeof *xp);
    for (size_t j = 0; j < n; ++j) {
        xp[j] = x[j] + eps;
        g(xp, ctx, gp);
        xp[j] = x[j] - eps;
        g(xp, ctx, gm);
        xp[j] = x[j];
        for (size_t i = 0; i < n; ++i) H_fd[i + j * n] = (gp[i] - gm[i]) / (2.0 * eps);
    }
    free(xp);
    free(gp);
    free(gm);
}

char *ct_test_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    if (!base || !*base) base = "/tmp";
    size_t n = strlen(base) + 32;
    char *p = malloc(n);
    snprintf(p, n, "%s/ct_test_XXXXXX", base);
    if (!mkdtemp(p)) {
        free(p);
        return NULL;
    }
    return p;
}

const char *ct_test_data(const char *name)
{
    static char buf[4096];
    const char *dir = getenv("CT_TEST_DATA");
    if (!dir || !*dir) dir = "tests/data";
    snprintf(buf, sizeof buf, "%s/%s", dir, name);
    return buf;
}

ct_sim *ct_test_make_sim(ct_scene *sc, const char *json, const char *base_dir)
{
    ct_diag d;
    ct_diag_init(&d);
    ct_scene_init(sc);
    ct_status st = ct_scene_parse(sc, json, "test.json", base_dir ? base_dir : ".", NULL, 0, &d);
    if (st != CT_OK) ct_diag_print(&d, stderr, "scene: ");
    ck_assert_int_eq(st, CT_OK);
    ct_sim *sim = NULL;
    st = ct_sim_create(&sim, sc, &d);
    if (st != CT_OK) ct_diag_print(&d, stderr, "sim: ");
    ck_assert_int_eq(st, CT_OK);
    ct_diag_free(&d);
    return sim;
}

double ct_test_lcg01(unsigned long long *r)
{
    *r = *r * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*r >> 11) / 9007199254740992.0;
}

double ct_test_xs_pm1(unsigned long long *s)
{
    *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
    return (double)((*s * 0x2545f4914f6cdd1dull) >> 11) * 0x1.0p-52 - 1.0;
}

double ct_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double ct_test_norm(const double *a, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += a[i] * a[i];
    return sqrt(s);
}

double ct_test_diffnorm(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(s);
}

void ct_test_stencil_block(const ct_triplets *T, const int *v, int nv, int dim, double *P)
{
    const int n = nv * dim;
    memset(P, 0, (size_t)n * (size_t)n * sizeof *P);
    for (size_t k = 0; k < T->n; ++k) {
        int a = -1, b = -1;
        for (int q = 0; q < nv; ++q) {
            if (T->row[k] / dim == v[q]) a = q * dim + T->row[k] % dim;
            if (T->col[k] / dim == v[q]) b = q * dim + T->col[k] % dim;
        }
        ck_assert(a >= 0 && b >= 0);
        P[a + n * b] += T->val[k];
    }
}

