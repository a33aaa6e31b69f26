/* check_h5log.c — HDF5 run log: round trips, attributes, export, errors, and a writer
 * killed with SIGKILL. */
#include "contactlab/ct_h5log.h"
#include "ct_test_util.h"

#include <hdf5.h>

#include <check.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* A file name in a fresh temporary folder; remove_tmp() deletes both. */
static char *tmp_file(const char *name)
{
    char *dir = ct_test_tmpdir();
    ck_assert_ptr_nonnull(dir);
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    ck_assert_ptr_nonnull(p);
    snprintf(p, n, "%s/%s", dir, name);
    free(dir);
    return p;
}

/* Remove a file made by tmp_file (and its ".copy"), then its folder. */
static void remove_tmp(char *file)
{
    char *copy = malloc(strlen(file) + sizeof ".copy");
    if (copy) {
        strcpy(copy, file);
        strcat(copy, ".copy");
        remove(copy);
        free(copy);
    }
    remove(file);
    char *slash = strrchr(file, '/');
    if (slash) {
        *slash = '\0';
        rmdir(file);
    }
    free(file);
}

/* Read `ds` and check its shape. */
static double *read_shape(const char *file, const char *ds, int rank, const size_t *dims)
{
    ct_diag d;
    ct_diag_init(&d);
    double *data = NULL;
    int r = -1;
    size_t got[4];
    ct_status st = ct_h5_read(file, ds, &data, &r, got, &d);
    ck_assert_msg(st == CT_OK, "%s: %s", ds, ct_diag_last(&d));
    ck_assert_int_eq(r, rank);
    for (int i = 0; i < rank; ++i) ck_assert_msg(got[i] == dims[i], "%s dim %d: %zu != %zu", ds, i, got[i], dims[i]);
    ct_diag_free(&d);
    return data;
}

/* Deterministic test values, including awkward doubles. */
static double dval(size_t i)
{
    static const double special[] = {0.0, -0.0, 1.0 / 3.0, -DBL_MAX, DBL_MIN, 4.9406564584124654e-324,
                                     3.141592653589793, -2.718281828459045e-200};
    if (i < sizeof special / sizeof special[0]) return special[i];
    return sin(1.0 + (double)i) * pow(10.0, (double)(i % 17) - 8.0);
}

static int ival(size_t i)
{
    if (i == 0) return INT_MIN;
    if (i == 1) return INT_MAX;
    return (int)(i * 7919u % 20011u) - 10000;
}

static void expect_doubles(const double *got, const double *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; ++i)
        ck_assert_msg(memcmp(&got[i], &want[i], sizeof(double)) == 0, "%s[%zu]: %.17g != %.17g", what, i, got[i],
                      want[i]);
}

static void expect_ints(const double *got, const int *want, size_t n, const char *what)
{
    for (size_t i = 0; i < n; ++i)
        ck_assert_msg(got[i] == (double)want[i], "%s[%zu]: %.17g != %d", what, i, got[i], want[i]);
}

START_TEST(test_fixed_roundtrip)
{
    char *file = tmp_file("fixed.h5");
    ct_diag d;
    ct_diag_init(&d);
    ct_h5log *lg = NULL;
    ck_assert_int_eq(ct_h5log_open(&lg, file, &d), CT_OK);
    double dbuf[2 * 3 * 4];
    int ibuf[2 * 3 * 4];
    for (size_t i = 0; i < 24; ++i) {
        dbuf[i] = dval(i);
        ibuf[i] = ival(i);
    }
    const size_t d1[] = {24}, d2[] = {6, 4}, d3[] = {2, 3, 4}, d0[] = {0, 4};
    ck_assert_int_eq(ct_h5log_write(lg, "/a/d1", CT_H5_DOUBLE, 1, d1, dbuf), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/a/d2", CT_H5_DOUBLE, 2, d2, dbuf), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/a/b/c/d3", CT_H5_DOUBLE, 3, d3, dbuf), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/mesh/i1", CT_H5_INT, 1, d1, ibuf), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/mesh/i2", CT_H5_INT, 2, d2, ibuf), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/mesh/i3", CT_H5_INT, 3, d3, ibuf), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/mesh/empty", CT_H5_INT, 2, d0, NULL), CT_OK);
    ck_assert_int_eq(ct_h5log_close(lg), CT_OK);
    ck_assert_uint_eq(ct_diag_count(&d), 0);

    const char *dn[] = {"/a/d1", "/a/d2", "/a/b/c/d3"}, *in[] = {"/mesh/i1", "/mesh/i2", "/mesh/i3"};
    const size_t *dd[] = {d1, d2, d3};
    for (int k = 0; k < 3; ++k) {
        double *x = read_shape(file, dn[k], k + 1, dd[k]);
        expect_doubles(x, dbuf, 24, dn[k]);
        free(x);
        x = read_shape(file, in[k], k + 1, dd[k]);
        expect_ints(x, ibuf, 24, in[k]);
        free(x);
    }
    double *x = read_shape(file, "/mesh/empty", 2, d0);
    free(x);

    /* On disk: float64 and int32. */
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t ds = H5Dopen2(f, "/a/d2", H5P_DEFAULT), t = H5Dget_type(ds);
    ck_assert_int_gt(H5Tequal(t, H5T_IEEE_F64LE), 0);
    H5Tclose(t);
    H5Dclose(ds);
    ds = H5Dopen2(f, "/mesh/i3", H5P_DEFAULT);
    t = H5Dget_type(ds);
    ck_assert_int_gt(H5Tequal(t, H5T_STD_I32LE), 0);
    H5Tclose(t);
    H5Dclose(ds);
    H5Fclose(f);
    ct_diag_free(&d);
    remove_tmp(file);
}
END_TEST

START_TEST(test_series_roundtrip)
{
    char *file = tmp_file("series.h5");
    ct_diag d;
    ct_diag_init(&d);
    ct_h5log *lg = NULL;
    ck_assert_int_eq(ct_h5log_open(&lg, file, &d), CT_OK);
    enum { NS = 6, ROWS = 2500 }; /* more rows than one chunk of the scalar series */
    const char *names[NS] = {"/steps/time", "/probes/force", "/model/x/m", "/steps/iters", "/probes/ivec", "/model/x/im"};
    const ct_h5_type types[NS] = {CT_H5_DOUBLE, CT_H5_DOUBLE, CT_H5_DOUBLE, CT_H5_INT, CT_H5_INT, CT_H5_INT};
    const int rr[NS] = {0, 1, 2, 0, 1, 2};
    const size_t rd[NS][2] = {{0, 0}, {3, 0}, {2, 3}, {0, 0}, {3, 0}, {3, 2}};
    int id[NS];
    for (int k = 0; k < NS; ++k)
        ck_assert_msg(ct_h5log_series(lg, names[k], types[k], rr[k], rd[k], k == 1 ? "N" : NULL,
                                      k == 1 ? "contact force on body 0" : NULL, &id[k]) == CT_OK,
                      "%s", ct_diag_last(&d));
    ck_assert_int_eq(ct_h5log_start(lg), CT_OK);
    for (size_t r = 0; r < ROWS; ++r) {
        for (int k = 0; k < NS; ++k) {
            double drow[6];
            int irow[6];
            for (size_t j = 0; j < 6; ++j) {
                drow[j] = dval(r * 6 + j);
                irow[j] = ival(r * 6 + j);
            }
            ck_assert_int_eq(ct_h5log_append(lg, id[k], types[k] == CT_H5_INT ? (void *)irow : (void *)drow), CT_OK);
        }
        if (r % 10 == 9) ck_assert_int_eq(ct_h5log_flush(lg), CT_OK);
    }
    ck_assert_int_eq(ct_h5log_close(lg), CT_OK);

    for (int k = 0; k < NS; ++k) {
        size_t dims[3] = {ROWS, rd[k][0], rd[k][1]}, per = rr[k] == 0 ? 1 : rr[k] == 1 ? 3 : 6;
        double *x = read_shape(file, names[k], rr[k] + 1, dims);
        for (size_t r = 0; r < ROWS; ++r)
            for (size_t j = 0; j < per; ++j) {
                if (types[k] == CT_H5_INT) {
                    ck_assert_msg(x[r * per + j] == (double)ival(r * 6 + j), "%s row %zu", names[k], r);
                } else {
                    double w = dval(r * 6 + j);
                    ck_assert_msg(memcmp(&x[r * per + j], &w, sizeof w) == 0, "%s row %zu", names[k], r);
                }
            }
        free(x);
    }
    char *s = NULL;
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/probes/force", "unit", &s, &d), CT_OK);
    ck_assert_str_eq(s, "N");
    free(s);
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/probes/force", "definition", &s, &d), CT_OK);
    ck_assert_str_eq(s, "contact force on body 0");
    free(s);
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/steps/time", "unit", &s, &d), CT_EINPUT);
    ck_assert_ptr_null(s);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "unit"));
    ct_diag_free(&d);
    remove_tmp(file);
}
END_TEST

/* A scalar attribute read with the HDF5 API, checking its stored type. */
static void expect_attr_num(const char *file, const char *obj, const char *name, hid_t ftype, hid_t mtype, void *buf)
{
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_msg(a >= 0, "%s %s", obj, name);
    hid_t t = H5Aget_type(a);
    ck_assert_msg(H5Tequal(t, ftype) > 0, "%s %s: stored type", obj, name);
    ck_assert_int_ge(H5Aread(a, mtype, buf), 0);
    H5Tclose(t);
    H5Aclose(a);
    H5Fclose(f);
}

START_TEST(test_attributes)
{
    char *file = tmp_file("attr.h5");
    ct_diag d;
    ct_diag_init(&d);
    ct_h5log *lg = NULL;
    ck_assert_int_eq(ct_h5log_open(&lg, file, &d), CT_OK);
    const char *json = "{\"bodies\": [{\"mesh\": \"box\", \"E\": 1e6}],\n \"dt\": 0.001}";
    ck_assert_int_eq(ct_h5log_attr_str(lg, "/", "scene_json", json), CT_OK);
    ck_assert_int_eq(ct_h5log_attr_str(lg, "/", "model", "old"), CT_OK);
    ck_assert_int_eq(ct_h5log_attr_str(lg, "/", "model", "ipc"), CT_OK); /* replaced */
    ck_assert_int_eq(ct_h5log_attr_str(lg, "/", "empty", ""), CT_OK);
    ck_assert_int_eq(ct_h5log_attr_int(lg, "/", "dim", 3), CT_OK);
    ck_assert_int_eq(ct_h5log_attr_int(lg, "/model/ipc", "big", LONG_MIN), CT_OK); /* creates the group */
    ck_assert_int_eq(ct_h5log_attr_double(lg, "/model/ipc", "dhat", 1.0 / 3.0), CT_OK);
    ck_assert_int_eq(ct_h5log_attr_str(lg, "/model/ipc", "unit", "\xc2\xb5m"), CT_OK);
    const size_t n[] = {2};
    const double v[] = {1, 2};
    ck_assert_int_eq(ct_h5log_write(lg, "/mesh/x", CT_H5_DOUBLE, 1, n, v), CT_OK);
    ck_assert_int_eq(ct_h5log_attr_str(lg, "/mesh/x", "unit", "m"), CT_OK); /* on a dataset */
    ck_assert_int_eq(ct_h5log_close(lg), CT_OK);
    ck_assert_uint_eq(ct_diag_count(&d), 0);

    char *s = NULL;
    const char *want[][3] = {{"/", "scene_json", json}, {"/", "model", "ipc"}, {"/", "empty", ""},
                             {"/model/ipc", "unit", "\xc2\xb5m"}, {"/mesh/x", "unit", "m"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; ++i) {
        ck_assert_int_eq(ct_h5_read_attr_str(file, want[i][0], want[i][1], &s, &d), CT_OK);
        ck_assert_str_eq(s, want[i][2]);
        free(s);
    }
    int64_t iv = 0;
    expect_attr_num(file, "/", "dim", H5T_STD_I64LE, H5T_NATIVE_INT64, &iv);
    ck_assert(iv == 3);
    expect_attr_num(file, "/model/ipc", "big", H5T_STD_I64LE, H5T_NATIVE_INT64, &iv);
    ck_assert(iv == (int64_t)LONG_MIN);
    double dv = 0;
    expect_attr_num(file, "/model/ipc", "dhat", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &dv);
    ck_assert(dv == 1.0 / 3.0);

    /* Strings are variable-length UTF-8 (h5py reads them as str). */
    hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t a = H5Aopen_by_name(f, "/", "model", H5P_DEFAULT, H5P_DEFAULT), t = H5Aget_type(a);
    ck_assert_int_gt(H5Tis_variable_str(t), 0);
    ck_assert_int_eq(H5Tget_cset(t), H5T_CSET_UTF8);
    H5Tclose(t);
    H5Aclose(a);
    H5Fclose(f);

    /* Not a string, missing attribute, missing object. */
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/", "dim", &s, &d), CT_EINPUT);
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/", "nope", &s, &d), CT_EINPUT);
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/no/such", "unit", &s, &d), CT_EINPUT);
    ck_assert_ptr_null(s);
    ck_assert_uint_eq(ct_diag_count(&d), 3);
    ct_diag_free(&d);
    remove_tmp(file);
}
END_TEST

/* Split `line` (modified) at sep; returns the number of fields. */
static int split(char *line, char sep, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        while (sep == ' ' && *p == ' ') ++p;
        if (!*p || *p == '\n') break;
        f[n++] = p;
        char *e = p;
        while (*e && *e != sep && *e != '\n') ++e;
        int end = (*e == '\0' || *e == '\n');
        *e = '\0';
        if (end) break;
        p = e + 1;
    }
    return n;
}

/* Export to a temporary file; returns the text (malloc'ed) or NULL on error. */
static char *export_text(const char *file, const char *const *ds, int n, int csv, ct_status *st, ct_diag *d)
{
    FILE *out = tmpfile();
    ck_assert_ptr_nonnull(out);
    *st = ct_h5_export(file, ds, n, csv, out, d);
    long len = ftell(out);
    ck_assert_int_ge(len, 0);
    char *text = calloc((size_t)len + 1, 1);
    rewind(out);
    ck_assert_uint_eq(fread(text, 1, (size_t)len, out), (size_t)len);
    fclose(out);
    return text;
}

START_TEST(test_export)
{
    char *file = tmp_file("export.h5");
    ct_diag d;
    ct_diag_init(&d);
    ct_h5log *lg = NULL;
    ck_assert_int_eq(ct_h5log_open(&lg, file, &d), CT_OK);
    enum { R = 37 };
    int it, it_t, it_f;
    const size_t three[] = {3};
    ck_assert_int_eq(ct_h5log_series(lg, "/steps/time", CT_H5_DOUBLE, 0, NULL, "s", NULL, &it_t), CT_OK);
    ck_assert_int_eq(ct_h5log_series(lg, "/steps/iters", CT_H5_INT, 0, NULL, NULL, NULL, &it), CT_OK);
    ck_assert_int_eq(ct_h5log_series(lg, "/probes/force", CT_H5_DOUBLE, 1, three, "N", NULL, &it_f), CT_OK);
    const size_t few[] = {R - 1}, cube[] = {R, 2, 2};
    double z[4 * R] = {0};
    ck_assert_int_eq(ct_h5log_write(lg, "/short", CT_H5_DOUBLE, 1, few, z), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/cube", CT_H5_DOUBLE, 3, cube, z), CT_OK);
    ck_assert_int_eq(ct_h5log_start(lg), CT_OK);
    for (size_t r = 0; r < R; ++r) {
        double t = dval(r), f[3] = {dval(3 * r + 100), dval(3 * r + 101), dval(3 * r + 102)};
        int k = ival(r);
        ck_assert_int_eq(ct_h5log_append(lg, it_t, &t), CT_OK);
        ck_assert_int_eq(ct_h5log_append(lg, it, &k), CT_OK);
        ck_assert_int_eq(ct_h5log_append(lg, it_f, f), CT_OK);
    }
    ck_assert_int_eq(ct_h5log_close(lg), CT_OK);

    const char *ds[] = {"/steps/time", "/steps/iters", "/probes/force"};
    /* name(unit) where the dataset has a unit attribute */
    const char *hdr[] = {"/steps/time(s)", "/steps/iters", "/probes/force[0](N)", "/probes/force[1](N)", "/probes/force[2](N)"};
    for (int csv = 0; csv <= 1; ++csv) {
        ct_status st;
        char *text = export_text(file, ds, 3, csv, &st, &d);
        ck_assert_msg(st == CT_OK, "%s", ct_diag_last(&d));
        char sep = csv ? ',' : ' ';
        char *save = NULL, *line = strtok_r(text, "\n", &save);
        ck_assert_ptr_nonnull(line);
        char *fl[8];
        if (!csv) {
            ck_assert_msg(line[0] == '#' && line[1] == ' ', "header: %s", line);
            line += 2;
        } else {
            ck_assert_msg(line[0] != '#', "csv header: %s", line);
        }
        ck_assert_int_eq(split(line, sep, fl, 8), 5);
        for (int c = 0; c < 5; ++c) ck_assert_str_eq(fl[c], hdr[c]);
        size_t r = 0;
        while ((line = strtok_r(NULL, "\n", &save))) {
            ck_assert_int_eq(split(line, sep, fl, 8), 5);
            double v[5];
            for (int c = 0; c < 5; ++c) {
                char *end;
                v[c] = strtod(fl[c], &end);
                ck_assert_msg(*end == '\0', "field '%s'", fl[c]);
            }
            double want[5] = {dval(r), (double)ival(r), dval(3 * r + 100), dval(3 * r + 101), dval(3 * r + 102)};
            expect_doubles(v, want, 5, csv ? "csv row" : "text row");
            ++r;
        }
        ck_assert_uint_eq(r, R);
        free(text);
    }

    /* Errors: nothing is written, each problem is reported. */
    struct {
        const char *ds[2];
        const char *msg;
    } bad[] = {{{"/steps/time", "/short"}, "rows"}, {{"/steps/time", "/nope"}, "no such"},
               {{"/cube", "/steps/time"}, "rank 3"}, {{"/steps", "/steps/time"}, "not a dataset"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        ct_status st;
        ct_diag_clear(&d);
        char *text = export_text(file, bad[i].ds, 2, 0, &st, &d);
        ck_assert_int_eq(st, CT_EINPUT);
        ck_assert_str_eq(text, "");
        ck_assert_msg(strstr(ct_diag_last(&d), bad[i].msg) && strstr(ct_diag_last(&d), file), "message: %s",
                      ct_diag_last(&d));
        free(text);
    }
    ct_diag_free(&d);
    remove_tmp(file);
}
END_TEST

START_TEST(test_errors)
{
    ct_diag d;
    ct_diag_init(&d);
    char *file = tmp_file("err.h5");
    double *x = (double *)&d; /* must be reset to NULL on failure */
    int rank = 7;
    size_t dims[4];

    /* Reading a missing file, a non-HDF5 file, a missing dataset. */
    ck_assert_int_ne(ct_h5_read(file, "/x", &x, &rank, dims, &d), CT_OK);
    ck_assert_ptr_null(x);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), file));
    FILE *fp = fopen(file, "w");
    ck_assert_ptr_nonnull(fp);
    fputs("not hdf5\n", fp);
    fclose(fp);
    ck_assert_int_eq(ct_h5_read(file, "/x", &x, &rank, dims, &d), CT_EIO);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), file));

    ct_h5log *lg = NULL;
    ck_assert_int_eq(ct_h5log_open(&lg, "/nonexistent-dir/sub/run.h5", &d), CT_EIO);
    ck_assert_ptr_null(lg);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "/nonexistent-dir/sub/run.h5"));

    ck_assert_int_eq(ct_h5log_open(&lg, file, &d), CT_OK);
    const size_t n2[] = {2, 2}, zero[] = {0};
    const double v[4] = {1, 2, 3, 4};
    int id = -5;
    ck_assert_int_eq(ct_h5log_write(lg, "/a", CT_H5_DOUBLE, 0, n2, v), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_write(lg, "/a", CT_H5_DOUBLE, 4, n2, v), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_write(lg, "/a", CT_H5_DOUBLE, 2, n2, v), CT_OK);
    ck_assert_int_eq(ct_h5log_write(lg, "/a", CT_H5_DOUBLE, 2, n2, v), CT_EINPUT); /* exists */
    ck_assert_int_eq(ct_h5log_write(lg, "/a/b", CT_H5_DOUBLE, 2, n2, v), CT_EINPUT); /* under a dataset */
    ck_assert_int_eq(ct_h5log_series(lg, "/s0", CT_H5_DOUBLE, 1, zero, NULL, NULL, &id), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_series(lg, "/s5", CT_H5_DOUBLE, 5, n2, NULL, NULL, &id), CT_EINPUT);
    ck_assert_int_eq(id, -1);
    ck_assert_int_eq(ct_h5log_series(lg, "/s", CT_H5_DOUBLE, 0, NULL, NULL, NULL, &id), CT_OK);
    ck_assert_int_eq(id, 0);
    ck_assert_int_eq(ct_h5log_append(lg, 1, v), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_append(lg, -1, v), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_append(lg, id, NULL), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_append(NULL, id, v), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_start(lg), CT_OK);
    ck_assert_int_eq(ct_h5log_append(lg, id, v), CT_OK);
    /* After start: no new objects. */
    ct_diag_clear(&d);
    int id2 = 0;
    ck_assert_int_eq(ct_h5log_series(lg, "/late", CT_H5_DOUBLE, 0, NULL, NULL, NULL, &id2), CT_EINPUT);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "ct_h5log_start"));
    ck_assert_int_eq(ct_h5log_write(lg, "/late2", CT_H5_DOUBLE, 2, n2, v), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_attr_int(lg, "/", "late", 1), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_attr_str(lg, "/", "late", "x"), CT_EINPUT);
    ck_assert_int_eq(ct_h5log_append(lg, id, v + 1), CT_OK); /* still usable */
    ck_assert_int_eq(ct_h5log_close(lg), CT_OK);
    ck_assert_int_eq(ct_h5log_close(NULL), CT_OK);

    /* ct_h5_exists: 1 / 0 for optional datasets, an error only for an unreadable file or path */
    int there = -1;
    ck_assert_int_eq(ct_h5_exists(file, "/s", &there, &d), CT_OK);
    ck_assert_int_eq(there, 1);
    ck_assert_int_eq(ct_h5_exists(file, "/nope/x", &there, &d), CT_OK);
    ck_assert_int_eq(there, 0);
    ct_diag_clear(&d);
    ck_assert_int_eq(ct_h5_exists(file, "/a/b", &there, &d), CT_EINPUT); /* under a dataset */
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "not a group"));
    ck_assert_int_ne(ct_h5_exists("/nonexistent-dir/run.h5", "/s", &there, &d), CT_OK);
    ck_assert_int_eq(there, 0);

    ct_diag_clear(&d);
    ck_assert_int_eq(ct_h5_read(file, "/nope/x", &x, &rank, dims, &d), CT_EINPUT);
    ck_assert_ptr_nonnull(strstr(ct_diag_last(&d), "/nope/x"));
    ck_assert_int_eq(ct_h5_read(file, "/", &x, &rank, dims, &d), CT_EINPUT); /* a group */
    size_t one[] = {2};
    x = read_shape(file, "/s", 1, one);
    ck_assert(x[0] == 1.0 && x[1] == 2.0);
    free(x);
    ct_diag_free(&d);
    remove_tmp(file);
}
END_TEST

/* ---- a writer killed with SIGKILL ---- */

enum { KILL_N = 23, KILL_EXTRA = 4, KILL_VERTS = 50 };

static double kill_val(int series, int step, int j) { return series * 1000.0 + step + j / 1024.0 + 1.0 / 3.0; }

/* Child: log KILL_N flushed steps and KILL_EXTRA unflushed ones, then die. Exit codes
 * other than death by SIGKILL mean the writer failed. */
static void kill_child(const char *file)
{
    ct_h5log *lg = NULL;
    if (ct_h5log_open(&lg, file, NULL) != CT_OK) _exit(10);
    const size_t mdims[] = {KILL_VERTS, 3}, vec[] = {3}, frame[] = {KILL_VERTS, 3};
    static double rest[KILL_VERTS * 3];
    for (int i = 0; i < KILL_VERTS * 3; ++i) rest[i] = i * 0.25;
    if (ct_h5log_write(lg, "/mesh/x0", CT_H5_DOUBLE, 2, mdims, rest) != CT_OK) _exit(11);
    if (ct_h5log_attr_str(lg, "/", "model", "ipc") != CT_OK) _exit(12);
    int id[4];
    if (ct_h5log_series(lg, "/steps/time", CT_H5_DOUBLE, 0, NULL, "s", "simulated time", &id[0]) != CT_OK ||
        ct_h5log_series(lg, "/steps/newton_iters", CT_H5_INT, 0, NULL, NULL, NULL, &id[1]) != CT_OK ||
        ct_h5log_series(lg, "/probes/force", CT_H5_DOUBLE, 1, vec, "N", NULL, &id[2]) != CT_OK ||
        ct_h5log_series(lg, "/frames/x", CT_H5_DOUBLE, 2, frame, "m", NULL, &id[3]) != CT_OK)
        _exit(13);
    if (ct_h5log_start(lg) != CT_OK) _exit(14);
    static double fr[KILL_VERTS * 3];
    for (int step = 0; step < KILL_N + KILL_EXTRA; ++step) {
        double t = kill_val(0, step, 0), f[3];
        int it = step * 3 - 7;
        for (int j = 0; j < 3; ++j) f[j] = kill_val(2, step, j);
        for (int j = 0; j < KILL_VERTS * 3; ++j) fr[j] = kill_val(3, step, j);
        if (ct_h5log_append(lg, id[0], &t) != CT_OK || ct_h5log_append(lg, id[1], &it) != CT_OK ||
            ct_h5log_append(lg, id[2], f) != CT_OK || ct_h5log_append(lg, id[3], fr) != CT_OK)
            _exit(15);
        if ((step % 5 == 4 || step == KILL_N - 1) && step < KILL_N && ct_h5log_flush(lg) != CT_OK) _exit(16);
    }
    raise(SIGKILL);
    _exit(17);
}

/* Rows present in `ds` (at least KILL_N), checking the first KILL_N exactly. */
static void expect_killed_series(const char *file, const char *ds, int series, size_t per, int is_int)
{
    ct_diag d;
    ct_diag_init(&d);
    double *x = NULL;
    int rank = 0;
    size_t dims[4];
    ck_assert_msg(ct_h5_read(file, ds, &x, &rank, dims, &d) == CT_OK, "%s", ct_diag_last(&d));
    ck_assert_msg(dims[0] >= KILL_N && dims[0] <= KILL_N + KILL_EXTRA, "%s: %zu rows", ds, dims[0]);
    for (int step = 0; step < KILL_N; ++step)
        for (size_t j = 0; j < per; ++j) {
            double w = is_int ? step * 3 - 7 : kill_val(series, step, (int)j);
            ck_assert_msg(memcmp(&x[(size_t)step * per + j], &w, sizeof w) == 0, "%s[%d][%zu]: %.17g != %.17g", ds,
                          step, j, x[(size_t)step * per + j], w);
        }
    free(x);
    ct_diag_free(&d);
}

START_TEST(test_sigkill)
{
    char *file = tmp_file("killed.h5");
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) kill_child(file);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "writer ended with status %d (exit %d)",
                  status, WIFEXITED(status) ? WEXITSTATUS(status) : -1);

    expect_killed_series(file, "/steps/time", 0, 1, 0);
    expect_killed_series(file, "/steps/newton_iters", 1, 1, 1);
    expect_killed_series(file, "/probes/force", 2, 3, 0);
    expect_killed_series(file, "/frames/x", 3, KILL_VERTS * 3, 0);
    char *s = NULL;
    ck_assert_int_eq(ct_h5_read_attr_str(file, "/probes/force", "unit", &s, NULL), CT_OK);
    ck_assert_str_eq(s, "N");
    free(s);

    /* h5dump must read it too. HDF5 1.10 keeps the "open for SWMR writing" mark of a killed
     * writer in the superblock, and plain readers such as h5dump refuse the file until
     * `h5clear -s` removes it: then require h5dump to read a cleared copy. */
    if (access("/usr/bin/h5dump", X_OK) == 0) {
        size_t n = 3 * strlen(file) + 256;
        char *cmd = malloc(n);
        snprintf(cmd, n, "/usr/bin/h5dump -H '%s' >/dev/null 2>&1", file);
        int rc = system(cmd);
        if (rc != 0) {
            ck_assert_msg(access("/usr/bin/h5clear", X_OK) == 0, "h5dump -H failed (%d) and no h5clear", rc);
            snprintf(cmd, n,
                     "cp '%s' '%s.copy' && /usr/bin/h5clear -s '%s.copy' && "
                     "/usr/bin/h5dump -H '%s.copy' >/dev/null 2>&1 && "
                     "/usr/bin/h5dump -d /frames/x '%s.copy' >/dev/null 2>&1",
                     file, file, file, file, file);
            rc = system(cmd);
            ck_assert_msg(rc == 0, "h5clear -s + h5dump on a copy of the killed file: status %d", rc);
        }
        free(cmd);
    }
    remove_tmp(file);
}
END_TEST

static Suite *h5log_suite(void)
{
    Suite *s = suite_create("h5log");
    TCase *tc = tcase_create("roundtrip");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_fixed_roundtrip);
    tcase_add_test(tc, test_series_roundtrip);
    tcase_add_test(tc, test_attributes);
    tcase_add_test(tc, test_export);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("sigkill");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_sigkill);
    suite_add_tcase(s, tc);
    return s;
}

CT_TEST_MAIN(h5log_suite)
