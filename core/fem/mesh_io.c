/* mesh_io.c — mesh readers: what the format readers share (mesh_io.h: the line reader,
 * tokens and numbers, growable arrays, building the ct_mesh) and ct_mesh_read, the dispatch
 * by file extension. The formats: mesh_gmsh.c (Gmsh ASCII .msh 2.x, 4.1), mesh_obj.c
 * (Wavefront OBJ).
 *
 * Files are read whole into memory and parsed line by line. Counts in the file are never
 * trusted for allocation: arrays grow as records are read, so a bogus count only leads to
 * a "premature end of file" error. Every error is reported as "path:LINE: message". */
#include "fem/mesh_io.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES ((size_t)INT_MAX) /* line numbers are ints */

/* ---------------------------------------------------------------- line reader */

ct_status ct_mio_error(mio_reader *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; ++c) /* garbage input must not put control bytes in messages */
        if ((unsigned char)*c < 0x20 || (unsigned char)*c >= 0x7f) *c = '?';
    return ct_diag_add(r->diag, CT_EINPUT, "%s:%d: %s", r->path, r->line > 0 ? r->line : 1, msg);
}

ct_status ct_mio_open(mio_reader *r, const char *path, ct_diag *diag)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->diag = diag;
    FILE *f = fopen(path, "rb");
    if (!f) return ct_diag_add(diag, CT_EINPUT, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
    }
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= MAX_FILE_BYTES) {
                free(buf);
                fclose(f);
                return ct_diag_add(diag, CT_EINPUT, "%s: file too large (> %zu bytes)", path, MAX_FILE_BYTES);
            }
            char *nb = realloc(buf, 2 * cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return ct_diag_add(diag, CT_EINPUT, "%s: read error", path);
    }
    buf[n] = '\0';
    r->buf = buf;
    r->len = n;
    return CT_OK;
}

/* Next line, NUL-terminated in place (the newline and a trailing '\r' removed).
 * Returns 1, 0 at end of file, or -1 after reporting an error. */
int ct_mio_next_line(mio_reader *r, char **out)
{
    if (r->pos >= r->len) return 0;
    char *s = r->buf + r->pos;
    char *nl = memchr(s, '\n', r->len - r->pos);
    size_t n = nl ? (size_t)(nl - s) : r->len - r->pos;
    r->line++;
    r->pos += n + (nl ? 1 : 0);
    if (memchr(s, '\0', n)) {
        ct_mio_error(r, "NUL byte in the file: not a text file");
        return -1;
    }
    s[n] = '\0';
    if (n > 0 && s[n - 1] == '\r') s[n - 1] = '\0';
    *out = s;
    return 1;
}

static int is_blank(const char *s)
{
    while (ct_mio_is_space(*s)) ++s;
    return *s == '\0';
}

/* Next non-blank line; as ct_mio_next_line. */
int ct_mio_next_content_line(mio_reader *r, char **out)
{
    int rc;
    while ((rc = ct_mio_next_line(r, out)) == 1)
        if (!is_blank(*out)) return 1;
    return rc;
}

/* Split a line into whitespace-separated tokens, in place. */
void ct_mio_tokenize(char *s, mio_toks *t)
{
    t->ntok = 0;
    for (;;) {
        while (ct_mio_is_space(*s)) ++s;
        if (!*s) return;
        if (t->ntok < CT_MIO_MAXTOK) t->tok[t->ntok] = s;
        t->ntok++;
        while (*s && !ct_mio_is_space(*s)) ++s;
        if (!*s) return;
        *s++ = '\0';
    }
}

/* Parse a whole token as a double / integer; 1 on success. */
int ct_mio_parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0') return 0;
    *out = v; /* overflow gives +-HUGE_VAL: callers check isfinite */
    return 1;
}

int ct_mio_parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE) return 0;
    *out = v;
    return 1;
}

/* Parse a count in [0, CT_MIO_MAX_COUNT] ("what" names it in the message). */
ct_status ct_mio_parse_count(mio_reader *r, const char *s, const char *what, long long *out)
{
    if (!ct_mio_parse_ll(s, out)) return ct_mio_error(r, "cannot parse %s '%.40s'", what, s);
    if (*out < 0 || *out > CT_MIO_MAX_COUNT)
        return ct_mio_error(r, "%s %lld is out of range (0..%d)", what, *out, CT_MIO_MAX_COUNT);
    return CT_OK;
}

/* Coordinate token: a finite number. */
ct_status ct_mio_parse_coord(mio_reader *r, const char *s, double *out)
{
    if (!ct_mio_parse_double(s, out)) return ct_mio_error(r, "cannot parse number '%.40s'", s);
    if (!isfinite(*out)) return ct_mio_error(r, "non-finite coordinate '%.40s'", s);
    return CT_OK;
}

/* ---------------------------------------------------------------- growable arrays */

void ct_mio_vec_init(mio_vec *v, size_t size)
{
    v->p = NULL;
    v->n = v->cap = 0;
    v->size = size;
}

/* Pointer to `k` new zeroed items at the end, or NULL when out of memory. */
void *ct_mio_vec_push(mio_vec *v, size_t k)
{
    if (v->n + k > v->cap) {
        size_t cap = v->cap ? v->cap : 64;
        while (cap < v->n + k) cap *= 2;
        if (cap > SIZE_MAX / v->size) return NULL;
        void *p = realloc(v->p, cap * v->size);
        if (!p) return NULL;
        v->p = p;
        v->cap = cap;
    }
    void *out = (char *)v->p + v->n * v->size;
    memset(out, 0, k * v->size);
    v->n += k;
    return out;
}

/* ---------------------------------------------------------------- mesh assembly */

/* Build m from the file's points P (3 per point; pline: line of each point) and cells
 * (nper point indices each): unused points are dropped and the rest renumbered; for
 * dim 2 every used point must have z = 0. Elements (is_elem) with a clearly negative
 * orientation are flipped; degenerate ones are left for ct_mesh_validate. */
ct_status ct_mio_build_mesh(mio_reader *r, ct_mesh *m, int dim, const double *P, const int *pline, size_t np,
                            const int *cells, size_t ncells, int nper, int is_elem)
{
    if (ncells > CT_MIO_MAX_COUNT) return ct_mio_error(r, "too many cells (%zu)", ncells);
    int *map = malloc((np ? np : 1) * sizeof *map);
    if (!map) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
    for (size_t i = 0; i < np; ++i) map[i] = -1;
    for (size_t i = 0; i < ncells * (size_t)nper; ++i) map[cells[i]] = 0;
    int nv = 0;
    for (size_t i = 0; i < np; ++i)
        if (map[i] == 0) map[i] = nv++;

    /* 2D: the plane z = 0 (relative tolerance). */
    if (dim == 2) {
        double scale = 0.0;
        for (size_t i = 0; i < np; ++i)
            if (map[i] >= 0) scale = fmax(scale, fmax(fabs(P[3 * i]), fabs(P[3 * i + 1])));
        for (size_t i = 0; i < np; ++i)
            if (map[i] >= 0 && fabs(P[3 * i + 2]) > 1e-12 * scale) {
                int save = r->line;
                r->line = pline[i];
                ct_mio_error(r, "z = %g, but a 2D mesh must lie in the plane z = 0", P[3 * i + 2]);
                r->line = save;
                free(map);
                return CT_EINPUT;
            }
    }

    ct_mesh_init(m);
    m->dim = dim;
    m->nv = nv;
    m->X = malloc((nv > 0 ? (size_t)nv * (size_t)dim : 1) * sizeof(double));
    int *c = malloc((ncells > 0 ? ncells * (size_t)nper : 1) * sizeof(int));
    if (!m->X || !c) {
        free(map);
        free(c);
        ct_mesh_free(m);
        return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
    }
    for (size_t i = 0; i < np; ++i)
        if (map[i] >= 0)
            for (int k = 0; k < dim; ++k)
                m->X[(size_t)map[i] * (size_t)dim + (size_t)k] = P[3 * i + (size_t)k];
    for (size_t i = 0; i < ncells * (size_t)nper; ++i) c[i] = map[cells[i]];
    free(map);
    if (is_elem) {
        m->ne = (int)ncells;
        m->elem = c;
        double lo[3], hi[3], d2 = 0.0;
        ct_mesh_bbox(m, lo, hi);
        for (int k = 0; k < dim; ++k) d2 += (hi[k] - lo[k]) * (hi[k] - lo[k]);
        double tol = 1e-12 * pow(sqrt(d2), dim);
        for (int e = 0; e < m->ne; ++e)
            if (ct_mesh_elem_volume(m, m->X, e) < -tol) { /* pure orientation flip: swap two vertices */
                int *v = m->elem + (size_t)e * (size_t)nper;
                int t = v[1];
                v[1] = v[2];
                v[2] = t;
            }
    } else {
        m->nsurf = (int)ncells;
        m->surf = c;
    }
    return CT_OK;
}

/* ---------------------------------------------------------------- dispatch */

static int ext_is(const char *path, const char *ext)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash)) return 0;
    ++dot;
    for (; *dot && *ext; ++dot, ++ext) {
        char c = *dot;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != *ext) return 0;
    }
    return *dot == '\0' && *ext == '\0';
}

ct_status ct_mesh_read(ct_mesh *m, const char *path, int dim, ct_diag *diag)
{
    ct_mesh_init(m);
    if (!path) return ct_diag_add(diag, CT_EINPUT, "mesh: no path given");
    if (ext_is(path, "msh")) return ct_mesh_read_gmsh(m, path, dim, diag);
    if (ext_is(path, "obj")) {
        if (dim != 3)
            return ct_diag_add(diag, CT_EINPUT, "%s: OBJ meshes are 3D surfaces (dim is %d)", path, dim);
        return ct_mesh_read_obj(m, path, diag);
    }
    return ct_diag_add(diag, CT_EINPUT, "%s: unsupported mesh format (expected .msh or .obj)", path);
}

