/* h5log.c — the HDF5 run log: writer (SWMR time series) and readers (DESIGN §6, §7).
 *
 * Writer order: open → attributes, fixed datasets, series → start (SWMR) → append/flush
 * ... → close. Types on disk:
 *   CT_H5_DOUBLE  C double, stored as IEEE float64 little-endian;
 *   CT_H5_INT     C int (the mesh index arrays and iteration counters are int), stored as
 *                 32-bit signed little-endian;
 *   attributes    strings variable-length UTF-8 (h5py returns str), ints int64, doubles
 *                 float64.
 *
 * Errors: every HDF5 call is checked. Failures of file I/O (create, open, write, extend,
 * flush, close) give CT_EIO, other library failures CT_ELIB, misuse (bad id, bad rank, new
 * objects after start, missing dataset when reading) CT_EINPUT, always with a message
 * "FILE: /object/path: what (HDF5: innermost library message)". HDF5's own printing of
 * its error stack is switched off for the whole process.
 *
 * Crash safety: after ct_h5log_start the file is in SWMR mode, so whatever was flushed is
 * consistent on disk at any moment. HDF5 1.10 marks such a file "open for writing" in its
 * superblock until it is closed: after a crash, SWMR readers (ct_h5_read, h5py with
 * swmr=True) read it as is, while tools that open it plainly (h5dump) refuse it until
 * `h5clear -s FILE` has cleared that mark.
 *
 * The writer keeps the ct_diag given to ct_h5log_open: it must outlive the log.
 */
#include "contactlab/ct_h5log.h"

#include <hdf5.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_RANK = 4 };
/* Target chunk size of a series (bytes of rows per chunk, at least one row). 16 KiB appends
 * as fast as 64 KiB (measured ~2 us per append either way) but keeps short runs small, since
 * every series allocates at least one whole chunk, and makes flushes cheaper. */
enum { CHUNK_BYTES = 16 * 1024 };

typedef struct {
    char *path;
    hid_t dset, fspace, mspace, mtype; /* fspace tracks the extent; mspace is one row */
    int rank;                          /* 1 + row rank */
    hsize_t dims[MAX_RANK], maxdims[MAX_RANK], start[MAX_RANK], count[MAX_RANK];
} h5_series;

struct ct_h5log {
    char *path;
    hid_t file, lcpl; /* lcpl: link creation list that creates missing groups */
    ct_diag *diag;
    int started;
    int deflate;      /* gzip level of the series created next (0: none) */
    h5_series *series;
    int nseries, cap;
};

/* ---- helpers ---- */

static char *str_dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

static void h5_quiet(void)
{
    /* Nothing useful to do if this fails: HDF5 would merely print its own stack too. */
    if (H5Eset_auto2(H5E_DEFAULT, NULL, NULL) < 0) return;
}

typedef struct {
    char text[256];
    int found;
} err_detail;

static herr_t err_walk_cb(unsigned n, const H5E_error2_t *e, void *data)
{
    (void)n;
    err_detail *d = data;
    if (!d->found && e && e->desc) {
        snprintf(d->text, sizeof d->text, "%s", e->desc);
        d->found = 1;
    }
    return 0;
}

ct_status ct_h5_fail(ct_diag *diag, ct_status s, const char *file, const char *obj, const char *what)
{
    err_detail d = {{0}, 0};
    if (H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, err_walk_cb, &d) < 0) d.found = 0;
    (void)H5Eclear2(H5E_DEFAULT); /* harmless if it fails: the next API call clears it */
    if (d.found) return ct_diag_add(diag, s, "%s: %s: %s (HDF5: %s)", file, obj, what, d.text);
    return ct_diag_add(diag, s, "%s: %s: %s", file, obj, what);
}

/* Close any kind of id; ids < 0 are ignored. Returns < 0 on failure. */
static herr_t h5_close(hid_t id)
{
    if (id < 0) return 0;
    switch (H5Iget_type(id)) {
    case H5I_FILE: return H5Fclose(id);
    case H5I_GROUP: return H5Gclose(id);
    case H5I_DATATYPE: return H5Tclose(id);
    case H5I_DATASPACE: return H5Sclose(id);
    case H5I_DATASET: return H5Dclose(id);
    case H5I_ATTR: return H5Aclose(id);
    case H5I_GENPROP_LST: return H5Pclose(id);
    default: return -1;
    }
}

/* Close `id`; on failure record an error unless *st already holds one. */
static void close_checked(hid_t id, ct_status *st, ct_diag *diag, const char *file,
                          const char *obj)
{
    if (h5_close(id) < 0 && *st == CT_OK) *st = ct_h5_fail(diag, CT_ELIB, file, obj, "closing failed");
}

/* 1 if every link along `path` exists, 0 if one is missing, -2 if a parent is not a
 * group, -1 if the lookup failed. */
static int path_exists(hid_t loc, const char *path)
{
    size_t n = strlen(path);
    char *buf = malloc(n + 1);
    if (!buf) return -1;
    memcpy(buf, path, n + 1);
    int ret = n ? 1 : 0;
    for (size_t i = 1; i <= n && ret == 1; ++i) {
        if ((buf[i] != '/' && buf[i] != '\0') || buf[i - 1] == '/') continue;
        char c = buf[i];
        buf[i] = '\0';
        htri_t e = H5Lexists(loc, buf, H5P_DEFAULT);
        if (e < 0) ret = -1;
        else if (e == 0) ret = 0;
        else if (c == '/' && i + 1 < n) { /* an inner component must be a group */
            hid_t o = H5Oopen(loc, buf, H5P_DEFAULT);
            H5I_type_t t = o < 0 ? H5I_BADID : H5Iget_type(o);
            if (o < 0 || t == H5I_BADID) ret = -1;
            else if (t != H5I_GROUP) ret = -2;
            if (h5_close(o) < 0) ret = -1;
        }
        buf[i] = c;
    }
    free(buf);
    return ret;
}

/* Report a path_exists() failure (e < 0). */
static ct_status path_fail(ct_diag *diag, int e, const char *file, const char *path)
{
    if (e == -2) return ct_diag_add(diag, CT_EINPUT, "%s: %s: a parent of this path is not a group", file, path);
    return ct_h5_fail(diag, CT_ELIB, file, path, "looking up the path failed");
}

static hid_t mem_type(ct_h5_type t) { return t == CT_H5_INT ? H5T_NATIVE_INT : H5T_NATIVE_DOUBLE; }
static hid_t file_type(ct_h5_type t) { return t == CT_H5_INT ? H5T_STD_I32LE : H5T_IEEE_F64LE; }
static size_t type_size(ct_h5_type t) { return t == CT_H5_INT ? sizeof(int) : sizeof(double); }

/* Variable-length UTF-8 string type (caller closes). */
static hid_t vlen_str_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        if (H5Tclose(t) < 0) return -1;
        return -1;
    }
    return t;
}

/* Common checks before creating an object; returns CT_OK when lg may create `obj`. */
static ct_status check_create(ct_h5log *lg, const char *obj, const char *what)
{
    if (!lg) return CT_EINPUT;
    if (!obj || !*obj) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: empty object path", lg->path, what);
    if (lg->started)
        return ct_diag_add(lg->diag, CT_EINPUT,
                           "%s: %s: cannot create %s after ct_h5log_start (SWMR mode allows appends only)",
                           lg->path, obj, what);
    return CT_OK;
}

/* Write one scalar attribute on an open object (replacing an existing one). Returns NULL
 * on success, else the step that failed. */
static const char *attr_put(hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *buf)
{
    const char *err = NULL;
    hid_t sp = -1, a = -1;
    htri_t ex = H5Aexists(obj, name);
    if (ex < 0) return "looking up the attribute failed";
    if (ex > 0 && H5Adelete(obj, name) < 0) return "replacing the attribute failed";
    if ((sp = H5Screate(H5S_SCALAR)) < 0) return "creating a dataspace failed";
    if ((a = H5Acreate2(obj, name, ftype, sp, H5P_DEFAULT, H5P_DEFAULT)) < 0)
        err = "creating the attribute failed";
    else if (H5Awrite(a, mtype, buf) < 0)
        err = "writing the attribute failed";
    if (h5_close(a) < 0 && !err) err = "closing the attribute failed";
    if (h5_close(sp) < 0 && !err) err = "closing a dataspace failed";
    return err;
}

/* Attribute on `obj` (created as a group when missing). */
static ct_status put_attr(ct_h5log *lg, const char *obj, const char *name, hid_t ftype,
                          hid_t mtype, const void *buf)
{
    ct_status st = check_create(lg, obj, "an attribute");
    if (st != CT_OK) return st;
    if (!name || !*name) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: empty attribute name", lg->path, obj);
    char where[512];
    snprintf(where, sizeof where, "%s (attribute %s)", obj, name);
    int e = path_exists(lg->file, obj);
    if (e < 0) return path_fail(lg->diag, e, lg->path, obj);
    hid_t o = e ? H5Oopen(lg->file, obj, H5P_DEFAULT)
                : H5Gcreate2(lg->file, obj, lg->lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (o < 0) return ct_h5_fail(lg->diag, CT_EIO, lg->path, obj, e ? "opening failed" : "creating the group failed");
    const char *err = attr_put(o, name, ftype, mtype, buf);
    if (err) st = ct_h5_fail(lg->diag, CT_EIO, lg->path, where, err);
    close_checked(o, &st, lg->diag, lg->path, obj);
    return st;
}

/* ---- writer ---- */

ct_status ct_h5log_open(ct_h5log **lgp, const char *path, ct_diag *diag)
{
    if (!lgp || !path || !*path) return ct_diag_add(diag, CT_EINPUT, "ct_h5log_open: no output path");
    *lgp = NULL;
    h5_quiet();
    ct_h5log *lg = calloc(1, sizeof *lg);
    char *p = str_dup(path);
    if (!lg || !p) {
        free(lg);
        free(p);
        return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
    }
    lg->path = p;
    lg->diag = diag;
    lg->file = lg->lcpl = -1;

    ct_status st = CT_OK;
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST) < 0)
        st = ct_h5_fail(diag, CT_ELIB, path, "/", "setting up file access failed");
    if (st == CT_OK && (lg->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl)) < 0)
        st = ct_h5_fail(diag, CT_EIO, path, "/", "cannot create the file");
    if (st == CT_OK && ((lg->lcpl = H5Pcreate(H5P_LINK_CREATE)) < 0 ||
                        H5Pset_create_intermediate_group(lg->lcpl, 1) < 0))
        st = ct_h5_fail(diag, CT_ELIB, path, "/", "setting up link creation failed");
    close_checked(fapl, &st, diag, path, "/");
    if (st != CT_OK) {
        ct_h5log_close(lg);
        return st;
    }
    *lgp = lg;
    return CT_OK;
}

ct_status ct_h5log_attr_str(ct_h5log *lg, const char *obj, const char *name, const char *value)
{
    if (!lg) return CT_EINPUT;
    if (!value) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: NULL value for attribute %s", lg->path,
                                   obj ? obj : "?", name ? name : "?");
    hid_t t = vlen_str_type();
    if (t < 0) return ct_h5_fail(lg->diag, CT_ELIB, lg->path, obj ? obj : "?", "creating a string type failed");
    ct_status st = put_attr(lg, obj, name, t, t, &value);
    close_checked(t, &st, lg->diag, lg->path, obj ? obj : "?");
    return st;
}

ct_status ct_h5log_attr_int(ct_h5log *lg, const char *obj, const char *name, long value)
{
    int64_t v = value;
    return put_attr(lg, obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

ct_status ct_h5log_attr_double(ct_h5log *lg, const char *obj, const char *name, double value)
{
    return put_attr(lg, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

ct_status ct_h5log_write(ct_h5log *lg, const char *path, ct_h5_type type, int rank,
                         const size_t *dims, const void *data)
{
    ct_status st = check_create(lg, path, "a dataset");
    if (st != CT_OK) return st;
    if (type != CT_H5_DOUBLE && type != CT_H5_INT)
        return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: unknown element type %d", lg->path, path, (int)type);
    if (rank < 1 || rank > 3 || !dims)
        return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: rank must be 1..3 (got %d)", lg->path, path, rank);
    hsize_t hd[3];
    hsize_t total = 1;
    for (int i = 0; i < rank; ++i) {
        hd[i] = dims[i];
        total *= hd[i];
    }
    if (total > 0 && !data) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: no data", lg->path, path);
    int e = path_exists(lg->file, path);
    if (e < 0) return path_fail(lg->diag, e, lg->path, path);
    if (e > 0) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: already exists", lg->path, path);

    hid_t sp = H5Screate_simple(rank, hd, NULL), d = -1;
    if (sp < 0) st = ct_h5_fail(lg->diag, CT_ELIB, lg->path, path, "creating the dataspace failed");
    if (st == CT_OK && (d = H5Dcreate2(lg->file, path, file_type(type), sp, lg->lcpl, H5P_DEFAULT,
                                       H5P_DEFAULT)) < 0)
        st = ct_h5_fail(lg->diag, CT_EIO, lg->path, path, "creating the dataset failed");
    if (st == CT_OK && total > 0 && H5Dwrite(d, mem_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        st = ct_h5_fail(lg->diag, CT_EIO, lg->path, path, "writing the dataset failed");
    close_checked(d, &st, lg->diag, lg->path, path);
    close_checked(sp, &st, lg->diag, lg->path, path);
    return st;
}

ct_status ct_h5log_series(ct_h5log *lg, const char *path, ct_h5_type type, int row_rank,
                          const size_t *row_dims, const char *unit, const char *definition,
                          int *id)
{
    ct_status st = check_create(lg, path, "a series");
    if (st != CT_OK) return st;
    if (!id) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: no place for the series id", lg->path, path);
    *id = -1;
    if (type != CT_H5_DOUBLE && type != CT_H5_INT)
        return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: unknown element type %d", lg->path, path, (int)type);
    if (row_rank < 0 || row_rank > MAX_RANK - 1 || (row_rank > 0 && !row_dims))
        return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: row rank must be 0..%d (got %d)", lg->path, path,
                           MAX_RANK - 1, row_rank);

    h5_series s;
    memset(&s, 0, sizeof s);
    s.dset = s.fspace = s.mspace = -1;
    s.mtype = mem_type(type);
    s.rank = row_rank + 1;
    s.dims[0] = 0;
    s.maxdims[0] = H5S_UNLIMITED;
    s.count[0] = 1;
    hsize_t row_elems = 1, chunk[MAX_RANK];
    for (int i = 0; i < row_rank; ++i) {
        if (row_dims[i] == 0)
            return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: row dimension %d is 0", lg->path, path, i);
        s.dims[i + 1] = s.maxdims[i + 1] = s.count[i + 1] = chunk[i + 1] = row_dims[i];
        row_elems *= row_dims[i];
    }
    hsize_t row_bytes = row_elems * type_size(type);
    if (row_bytes >= ((hsize_t)1 << 32))
        return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: a row of %llu bytes exceeds HDF5's 4 GiB chunk limit",
                           lg->path, path, (unsigned long long)row_bytes);
    chunk[0] = row_bytes < CHUNK_BYTES ? CHUNK_BYTES / row_bytes : 1;

    int e = path_exists(lg->file, path);
    if (e < 0) return path_fail(lg->diag, e, lg->path, path);
    if (e > 0) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: already exists", lg->path, path);
    if (lg->nseries == lg->cap) {
        int cap = lg->cap ? 2 * lg->cap : 64;
        h5_series *ns = realloc(lg->series, (size_t)cap * sizeof *ns);
        if (!ns) return ct_diag_add(lg->diag, CT_ENOMEM, "%s: %s: out of memory", lg->path, path);
        lg->series = ns;
        lg->cap = cap;
    }
    if (!(s.path = str_dup(path))) return ct_diag_add(lg->diag, CT_ENOMEM, "%s: %s: out of memory", lg->path, path);

    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), sp = -1, t = -1;
    if (dcpl < 0 || H5Pset_chunk(dcpl, s.rank, chunk) < 0)
        st = ct_h5_fail(lg->diag, CT_ELIB, lg->path, path, "setting up chunking failed");
    if (st == CT_OK && lg->deflate > 0 && (H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, (unsigned)lg->deflate) < 0))
        st = ct_h5_fail(lg->diag, CT_ELIB, lg->path, path, "setting up compression failed");
    if (st == CT_OK && (sp = H5Screate_simple(s.rank, s.dims, s.maxdims)) < 0)
        st = ct_h5_fail(lg->diag, CT_ELIB, lg->path, path, "creating the dataspace failed");
    if (st == CT_OK &&
        (s.dset = H5Dcreate2(lg->file, path, file_type(type), sp, lg->lcpl, dcpl, H5P_DEFAULT)) < 0)
        st = ct_h5_fail(lg->diag, CT_EIO, lg->path, path, "creating the dataset failed");
    if (st == CT_OK && (unit || definition) && (t = vlen_str_type()) < 0)
        st = ct_h5_fail(lg->diag, CT_ELIB, lg->path, path, "creating a string type failed");
    const char *err = NULL;
    if (st == CT_OK && unit && (err = attr_put(s.dset, "unit", t, t, &unit)))
        st = ct_h5_fail(lg->diag, CT_EIO, lg->path, path, err);
    if (st == CT_OK && definition && (err = attr_put(s.dset, "definition", t, t, &definition)))
        st = ct_h5_fail(lg->diag, CT_EIO, lg->path, path, err);
    if (st == CT_OK) {
        hsize_t one = 1;
        s.mspace = row_rank ? H5Screate_simple(row_rank, s.dims + 1, NULL) : H5Screate_simple(1, &one, NULL);
        if (s.mspace < 0 || (s.fspace = H5Dget_space(s.dset)) < 0)
            st = ct_h5_fail(lg->diag, CT_ELIB, lg->path, path, "creating the row dataspaces failed");
    }
    close_checked(t, &st, lg->diag, lg->path, path);
    close_checked(sp, &st, lg->diag, lg->path, path);
    close_checked(dcpl, &st, lg->diag, lg->path, path);
    if (st != CT_OK) {
        /* the dataset may exist in the file already; it stays there, empty */
        close_checked(s.fspace, &st, lg->diag, lg->path, path);
        close_checked(s.mspace, &st, lg->diag, lg->path, path);
        close_checked(s.dset, &st, lg->diag, lg->path, path);
        free(s.path);
        return st;
    }
    lg->series[lg->nseries] = s;
    *id = lg->nseries++;
    return CT_OK;
}

ct_status ct_h5log_set_deflate(ct_h5log *lg, int level)
{
    if (level < 0 || level > 9)
        return ct_diag_add(lg->diag, CT_EINPUT, "%s: compression level must be 0..9 (got %d)", lg->path, level);
    if (level > 0) {
        unsigned info = 0;
        if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0 || H5Zget_filter_info(H5Z_FILTER_DEFLATE, &info) < 0 ||
            !(info & H5Z_FILTER_CONFIG_ENCODE_ENABLED))
            return ct_diag_add(lg->diag, CT_ELIB, "%s: this HDF5 library cannot deflate (no zlib filter)", lg->path);
    }
    lg->deflate = level;
    return CT_OK;
}

ct_status ct_h5log_start(ct_h5log *lg)
{
    if (!lg) return CT_EINPUT;
    if (lg->started) return CT_OK;
    if (H5Fstart_swmr_write(lg->file) < 0)
        return ct_h5_fail(lg->diag, CT_EIO, lg->path, "/", "switching to SWMR writing failed");
    lg->started = 1;
    return CT_OK;
}

ct_status ct_h5log_append(ct_h5log *lg, int id, const void *row)
{
    if (!lg) return CT_EINPUT;
    if (id < 0 || id >= lg->nseries)
        return ct_diag_add(lg->diag, CT_EINPUT, "%s: append: no series with id %d", lg->path, id);
    h5_series *s = &lg->series[id];
    if (!row) return ct_diag_add(lg->diag, CT_EINPUT, "%s: %s: append: no row", lg->path, s->path);
    hsize_t r = s->dims[0];
    s->dims[0] = r + 1;
    if (H5Dset_extent(s->dset, s->dims) < 0) {
        s->dims[0] = r;
        return ct_h5_fail(lg->diag, CT_EIO, lg->path, s->path, "extending the series failed");
    }
    s->start[0] = r;
    const char *err = NULL;
    if (H5Sset_extent_simple(s->fspace, s->rank, s->dims, s->maxdims) < 0 ||
        H5Sselect_hyperslab(s->fspace, H5S_SELECT_SET, s->start, NULL, s->count, NULL) < 0)
        err = "selecting the new row failed";
    else if (H5Dwrite(s->dset, s->mtype, s->mspace, s->fspace, H5P_DEFAULT, row) < 0)
        err = "writing the row failed";
    if (!err) return CT_OK;
    ct_status st = ct_h5_fail(lg->diag, CT_EIO, lg->path, s->path, err);
    /* Drop the unwritten row again if possible. */
    s->dims[0] = r;
    if (H5Dset_extent(s->dset, s->dims) < 0) s->dims[0] = r + 1;
    return st;
}

ct_status ct_h5log_flush(ct_h5log *lg)
{
    if (!lg) return CT_EINPUT;
    if (H5Fflush(lg->file, H5F_SCOPE_GLOBAL) < 0)
        return ct_h5_fail(lg->diag, CT_EIO, lg->path, "/", "flushing failed");
    return CT_OK;
}

ct_status ct_h5log_close(ct_h5log *lg)
{
    if (!lg) return CT_OK;
    ct_status st = CT_OK;
    for (int i = 0; i < lg->nseries; ++i) {
        h5_series *s = &lg->series[i];
        close_checked(s->fspace, &st, lg->diag, lg->path, s->path);
        close_checked(s->mspace, &st, lg->diag, lg->path, s->path);
        close_checked(s->dset, &st, lg->diag, lg->path, s->path);
        free(s->path);
    }
    close_checked(lg->lcpl, &st, lg->diag, lg->path, "/");
    if (lg->file >= 0 && H5Fclose(lg->file) < 0 && st == CT_OK)
        st = ct_h5_fail(lg->diag, CT_EIO, lg->path, "/", "closing the file failed");
    free(lg->series);
    free(lg->path);
    free(lg);
    return st;
}

/* ---- readers ---- */

/* Open read-only, as a SWMR reader first (the writer may still be running or may have been
 * killed), then plainly. */
static ct_status open_ro(const char *file, hid_t *f, ct_diag *diag)
{
    *f = -1;
    if (!file || !*file) return ct_diag_add(diag, CT_EINPUT, "no HDF5 file given");
    h5_quiet();
    if (access(file, F_OK) != 0)
        return ct_diag_add(diag, CT_EINPUT, "%s: %s", file, strerror(errno));
    *f = H5Fopen(file, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
    if (*f < 0) *f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (*f < 0) return ct_h5_fail(diag, CT_EIO, file, "/", "cannot open as HDF5");
    return CT_OK;
}

/* Open `obj` (which must exist) in an open file. */
static ct_status open_obj_ro(hid_t f, const char *file, const char *obj, hid_t *o, ct_diag *diag)
{
    *o = -1;
    if (!obj || !*obj) return ct_diag_add(diag, CT_EINPUT, "%s: empty object path", file);
    int e = path_exists(f, obj);
    if (e < 0) return path_fail(diag, e, file, obj);
    if (e == 0) return ct_diag_add(diag, CT_EINPUT, "%s: %s: no such object", file, obj);
    if ((*o = H5Oopen(f, obj, H5P_DEFAULT)) < 0) return ct_h5_fail(diag, CT_EIO, file, obj, "opening failed");
    return CT_OK;
}

/* Read one dataset of an open file as doubles. */
static ct_status read_doubles(hid_t f, const char *file, const char *dataset, double **data, int *rank,
                              size_t dims[4], ct_diag *diag)
{
    *data = NULL;
    *rank = 0;
    for (int i = 0; i < MAX_RANK; ++i) dims[i] = 0;
    hid_t d = -1, t = -1, sp = -1;
    ct_status st = open_obj_ro(f, file, dataset, &d, diag);
    if (st != CT_OK) return st;
    if (H5Iget_type(d) != H5I_DATASET) {
        st = ct_diag_add(diag, CT_EINPUT, "%s: %s: not a dataset", file, dataset);
        goto done;
    }
    H5T_class_t cls = H5T_NO_CLASS;
    if ((t = H5Dget_type(d)) < 0 || (cls = H5Tget_class(t)) < 0) {
        st = ct_h5_fail(diag, CT_ELIB, file, dataset, "reading the element type failed");
        goto done;
    }
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        st = ct_diag_add(diag, CT_EINPUT, "%s: %s: not a numeric dataset", file, dataset);
        goto done;
    }
    hsize_t hd[H5S_MAX_RANK];
    int r = -1;
    hssize_t npts = -1;
    if ((sp = H5Dget_space(d)) < 0 || (r = H5Sget_simple_extent_ndims(sp)) < 0 ||
        (npts = H5Sget_simple_extent_npoints(sp)) < 0 ||
        (r > 0 && r <= MAX_RANK && H5Sget_simple_extent_dims(sp, hd, NULL) < 0)) {
        st = ct_h5_fail(diag, CT_ELIB, file, dataset, "reading the shape failed");
        goto done;
    }
    if (r > MAX_RANK) {
        st = ct_diag_add(diag, CT_EINPUT, "%s: %s: rank %d is more than %d", file, dataset, r, MAX_RANK);
        goto done;
    }
    H5S_class_t sc = H5Sget_simple_extent_type(sp);
    if (sc == H5S_NO_CLASS) {
        st = ct_h5_fail(diag, CT_ELIB, file, dataset, "reading the shape failed");
        goto done;
    }
    if (sc == H5S_NULL) npts = 0;
    size_t n = (size_t)npts;
    if (n > SIZE_MAX / sizeof(double) - 1) {
        st = ct_diag_add(diag, CT_ENOMEM, "%s: %s: too large to read", file, dataset);
        goto done;
    }
    double *buf = malloc((n ? n : 1) * sizeof *buf);
    if (!buf) {
        st = ct_diag_add(diag, CT_ENOMEM, "%s: %s: out of memory (%zu values)", file, dataset, n);
        goto done;
    }
    if (n > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        free(buf);
        st = ct_h5_fail(diag, CT_EIO, file, dataset, "reading the data failed");
        goto done;
    }
    *data = buf;
    *rank = r;
    for (int i = 0; i < r; ++i) dims[i] = (size_t)hd[i];
done:
    close_checked(sp, &st, diag, file, dataset);
    close_checked(t, &st, diag, file, dataset);
    close_checked(d, &st, diag, file, dataset);
    if (st != CT_OK && *data) {
        free(*data);
        *data = NULL;
        *rank = 0;
    }
    return st;
}

ct_status ct_h5_read(const char *file, const char *dataset, double **data, int *rank,
                     size_t dims[4], ct_diag *diag)
{
    if (!data || !rank || !dims) return ct_diag_add(diag, CT_EINPUT, "ct_h5_read: NULL output");
    *data = NULL;
    *rank = 0;
    hid_t f;
    ct_status st = open_ro(file, &f, diag);
    if (st != CT_OK) return st;
    st = read_doubles(f, file, dataset, data, rank, dims, diag);
    if (H5Fclose(f) < 0 && st == CT_OK) st = ct_h5_fail(diag, CT_EIO, file, "/", "closing failed");
    if (st != CT_OK) {
        free(*data);
        *data = NULL;
    }
    return st;
}

ct_status ct_h5_exists(const char *file, const char *path, int *exists, ct_diag *diag)
{
    *exists = 0;
    hid_t f;
    ct_status st = open_ro(file, &f, diag);
    if (st != CT_OK) return st;
    const int e = path && *path ? path_exists(f, path) : 0;
    if (e < 0) st = path_fail(diag, e, file, path);
    else *exists = e;
    if (H5Fclose(f) < 0 && st == CT_OK) st = ct_h5_fail(diag, CT_EIO, file, "/", "closing failed");
    return st;
}

/* ct_h5_read_attr_str on the open file f (named file in messages). */
static ct_status attr_str(hid_t f, const char *file, const char *obj, const char *name, char **value, ct_diag *diag)
{
    hid_t o = -1, a = -1, t = -1, sp = -1, mt = -1;
    ct_status st = CT_OK;
    *value = NULL;
    char where[512];
    snprintf(where, sizeof where, "%s (attribute %s)", obj ? obj : "?", name);
    if ((st = open_obj_ro(f, file, obj, &o, diag)) != CT_OK) goto done;
    htri_t ex = H5Aexists(o, name);
    if (ex <= 0) {
        st = ex < 0 ? ct_h5_fail(diag, CT_ELIB, file, where, "looking up the attribute failed")
                    : ct_diag_add(diag, CT_EINPUT, "%s: %s: no such attribute", file, where);
        goto done;
    }
    H5T_class_t cls = H5T_NO_CLASS;
    hssize_t npts = -1;
    if ((a = H5Aopen(o, name, H5P_DEFAULT)) < 0 || (t = H5Aget_type(a)) < 0 ||
        (cls = H5Tget_class(t)) < 0 || (sp = H5Aget_space(a)) < 0 ||
        (npts = H5Sget_simple_extent_npoints(sp)) < 0) {
        st = ct_h5_fail(diag, CT_ELIB, file, where, "opening the attribute failed");
        goto done;
    }
    if (cls != H5T_STRING || npts != 1) {
        st = ct_diag_add(diag, CT_EINPUT, "%s: %s: not a single string", file, where);
        goto done;
    }
    htri_t vl = H5Tis_variable_str(t);
    if (vl < 0) {
        st = ct_h5_fail(diag, CT_ELIB, file, where, "reading the string type failed");
        goto done;
    }
    if (vl) {
        char *p = NULL;
        H5T_cset_t cset = H5Tget_cset(t);
        if ((mt = H5Tcopy(H5T_C_S1)) < 0 || H5Tset_size(mt, H5T_VARIABLE) < 0 || cset < 0 ||
            H5Tset_cset(mt, cset) < 0) {
            st = ct_h5_fail(diag, CT_ELIB, file, where, "creating a string type failed");
            goto done;
        }
        if (H5Aread(a, mt, &p) < 0) {
            st = ct_h5_fail(diag, CT_EIO, file, where, "reading failed");
            goto done;
        }
        *value = str_dup(p ? p : "");
        if (p && H5free_memory(p) < 0) st = ct_h5_fail(diag, CT_ELIB, file, where, "freeing the string failed");
    } else {
        size_t size = H5Tget_size(t);
        H5T_str_t pad = H5Tget_strpad(t);
        if (size == 0 || pad < 0) {
            st = ct_h5_fail(diag, CT_ELIB, file, where, "reading the string type failed");
            goto done;
        }
        char *buf = calloc(size + 1, 1);
        if (buf && H5Aread(a, t, buf) < 0) {
            free(buf);
            st = ct_h5_fail(diag, CT_EIO, file, where, "reading failed");
            goto done;
        }
        if (buf && pad == H5T_STR_SPACEPAD)
            for (size_t k = strlen(buf); k > 0 && buf[k - 1] == ' '; --k) buf[k - 1] = '\0';
        *value = buf;
    }
    if (!*value && st == CT_OK) st = ct_diag_add(diag, CT_ENOMEM, "%s: %s: out of memory", file, where);
done:
    close_checked(mt, &st, diag, file, where);
    close_checked(sp, &st, diag, file, where);
    close_checked(t, &st, diag, file, where);
    close_checked(a, &st, diag, file, where);
    close_checked(o, &st, diag, file, where);
    if (st != CT_OK) {
        free(*value);
        *value = NULL;
    }
    return st;
}

ct_status ct_h5_read_attr_str(const char *file, const char *obj, const char *name, char **value,
                              ct_diag *diag)
{
    if (!value || !name) return ct_diag_add(diag, CT_EINPUT, "ct_h5_read_attr_str: NULL argument");
    *value = NULL;
    hid_t f;
    ct_status st = open_ro(file, &f, diag);
    if (st != CT_OK) return st;
    st = attr_str(f, file, obj, name, value, diag);
    close_checked(f, &st, diag, file, "/");
    if (st != CT_OK) {
        free(*value);
        *value = NULL;
    }
    return st;
}

/* Column name for the export header: whitespace and commas would split it, so they
 * become '_'. */
static void put_name(FILE *out, const char *name, int k)
{
    for (const char *c = name; *c; ++c)
        fputc((*c == ' ' || *c == '\t' || *c == ',' || *c == '\n' || *c == '\r') ? '_' : *c, out);
    if (k >= 0) fprintf(out, "[%d]", k);
}

ct_status ct_h5_export(const char *file, const char *const *datasets, int n, int csv, FILE *out,
                       ct_diag *diag)
{
    if (!datasets || n < 1 || !out)
        return ct_diag_add(diag, CT_EINPUT, "%s: export: no datasets given", file ? file : "?");
    hid_t f;
    ct_status st = open_ro(file, &f, diag);
    if (st != CT_OK) return st;
    double **data = calloc((size_t)n, sizeof *data);
    size_t *cols = calloc((size_t)n, sizeof *cols);
    int *is2d = calloc((size_t)n, sizeof *is2d);
    if (!data || !cols || !is2d) {
        st = ct_diag_add(diag, CT_ENOMEM, "%s: export: out of memory", file);
        goto done;
    }
    /* Read and check every dataset first (reporting every problem), then write. */
    size_t rows = 0;
    int first_ok = -1;
    for (int i = 0; i < n; ++i) {
        int rank;
        size_t dims[4];
        ct_status s = read_doubles(f, file, datasets[i], &data[i], &rank, dims, diag);
        if (s == CT_OK && (rank < 1 || rank > 2)) {
            s = ct_diag_add(diag, CT_EINPUT,
                            "%s: %s: rank %d; export takes rank-1 (one column) or rank-2 "
                            "(one column per entry of a row) datasets",
                            file, datasets[i], rank);
        } else if (s == CT_OK) {
            cols[i] = rank == 2 ? dims[1] : 1;
            is2d[i] = rank == 2;
            if (first_ok < 0) {
                first_ok = i;
                rows = dims[0];
            } else if (dims[0] != rows) {
                s = ct_diag_add(diag, CT_EINPUT, "%s: %s has %zu rows but %s has %zu", file, datasets[i],
                                dims[0], datasets[first_ok], rows);
            }
        }
        if (s != CT_OK && (st == CT_OK || s == CT_EINPUT)) st = s;
    }
    if (st != CT_OK) goto done;

    const char *sep = csv ? "," : " ";
    if (!csv) fputs("# ", out);
    for (int i = 0; i < n; ++i) {
        char *unit = NULL; /* the dataset's "unit" attribute, if it has one: name(unit) */
        if (attr_str(f, file, datasets[i], "unit", &unit, NULL) != CT_OK) unit = NULL;
        for (size_t k = 0; k < cols[i]; ++k) {
            if (i > 0 || k > 0) fputs(sep, out);
            put_name(out, datasets[i], is2d[i] ? (int)k : -1);
            if (unit && *unit) {
                fputc('(', out);
                put_name(out, unit, -1);
                fputc(')', out);
            }
        }
        free(unit);
    }
    fputc('\n', out);
    for (size_t r = 0; r < rows; ++r) {
        int first = 1;
        for (int i = 0; i < n; ++i)
            for (size_t k = 0; k < cols[i]; ++k) {
                fprintf(out, "%s%.17g", first ? "" : sep, data[i][r * cols[i] + k]);
                first = 0;
            }
        fputc('\n', out);
    }
    if (fflush(out) != 0 || ferror(out))
        st = ct_diag_add(diag, CT_EIO, "%s: export: writing the output failed: %s", file, strerror(errno));
done:
    if (data)
        for (int i = 0; i < n; ++i) free(data[i]);
    free(data);
    free(cols);
    free(is2d);
    close_checked(f, &st, diag, file, "/");
    return st;
}
