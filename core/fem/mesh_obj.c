/* mesh_obj.c — the Wavefront OBJ reader: vertices and faces (polygons split into fans) as a
 * 3D surface; the other statements of the format are accepted and ignored. The line reader
 * and the mesh building are shared with the Gmsh reader (mesh_io.h). */
#include "fem/mesh_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Statements we accept and ignore. */
static int obj_ignored(const char *kw)
{
    static const char ign[] = " vt vn vp g o s usemtl mtllib l p cstype deg bmat step curv curv2 surf parm"
                              " trim hole scrv sp end con mg bevel c_interp d_interp lod shadow_obj"
                              " trace_obj maplib usemap ";
    size_t n = strlen(kw); /* kw is a non-empty token without blanks */
    for (const char *p = strstr(ign, kw); p; p = strstr(p + 1, kw))
        if (p[-1] == ' ' && p[n] == ' ') return 1;
    return 0;
}

/* Vertex reference "a", "a/b", "a//c" or "a/b/c": the 0-based vertex index; negative
 * indices count back from the last vertex defined so far. Range against later vertices
 * is checked at the end (*idx may be >= nv here). */
static ct_status obj_corner(mio_reader *r, const char *s, size_t nv, long long *idx)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || (*end != '\0' && *end != '/') || errno == ERANGE)
        return ct_mio_error(r, "cannot parse vertex reference '%.40s'", s);
    for (const char *p = end; *p; ++p)
        if (*p != '/' && *p != '-' && (*p < '0' || *p > '9'))
            return ct_mio_error(r, "cannot parse vertex reference '%.40s'", s);
    if (v == 0) return ct_mio_error(r, "vertex index 0 is invalid (OBJ indices start at 1)");
    if (v < 0) {
        if (v < -(long long)nv) /* not -v: -LLONG_MIN overflows */
            return ct_mio_error(r, "relative vertex index %lld out of range (%zu vertices defined so far)", v, nv);
        *idx = (long long)nv + v;
    } else {
        *idx = v - 1;
    }
    return CT_OK;
}

static ct_status obj_parse(mio_reader *r, mio_vec *P, mio_vec *pline, mio_vec *tri, mio_vec *tline)
{
    char *s;
    int rc;
    ct_status st;
    while ((rc = ct_mio_next_line(r, &s)) == 1) {
        char *hash = strchr(s, '#');
        if (hash) *hash = '\0';
        mio_toks t;
        ct_mio_tokenize(s, &t);
        if (t.ntok == 0) continue;
        const char *kw = t.tok[0];
        if (!strcmp(kw, "v")) {
            if (t.ntok < 4 || t.ntok > 8)
                return ct_mio_error(r, "expected 'v x y z [w | r g b]', found %d values", t.ntok - 1);
            if (P->n / 3 >= CT_MIO_MAX_COUNT) return ct_mio_error(r, "too many vertices");
            double *x = ct_mio_vec_push(P, 3);
            int *pl = ct_mio_vec_push(pline, 1);
            if (!x || !pl) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
            *pl = r->line;
            for (int k = 0; k < 3; ++k)
                if ((st = ct_mio_parse_coord(r, t.tok[1 + k], &x[k])) != CT_OK) return st;
            for (int k = 4; k < t.ntok; ++k) {
                double extra;
                if (!ct_mio_parse_double(t.tok[k], &extra))
                    return ct_mio_error(r, "cannot parse number '%.40s'", t.tok[k]);
            }
        } else if (!strcmp(kw, "f")) {
            if (t.ntok < 4) return ct_mio_error(r, "a face needs at least 3 vertices, found %d", t.ntok - 1);
            /* Walk the tokens again (a polygon may have more than CT_MIO_MAXTOK corners). */
            size_t nv = P->n / 3;
            long long first = 0, prev = 0;
            char *p = t.tok[1];
            for (int k = 0; k < t.ntok - 1; ++k) {
                long long cur = 0;
                if ((st = obj_corner(r, p, nv, &cur)) != CT_OK) return st;
                if (k >= 2) { /* fan split (first, prev, cur) */
                    if (tri->n / 3 >= CT_MIO_MAX_COUNT) return ct_mio_error(r, "too many faces");
                    long long *c = ct_mio_vec_push(tri, 3);
                    int *tl = ct_mio_vec_push(tline, 1);
                    if (!c || !tl) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
                    c[0] = first;
                    c[1] = prev;
                    c[2] = cur;
                    *tl = r->line;
                }
                if (k == 0) first = cur;
                prev = cur;
                if (k + 1 < t.ntok - 1) { /* next token: past this one's NUL and the blanks */
                    p += strlen(p) + 1;
                    while (ct_mio_is_space(*p)) ++p;
                }
            }
        } else if (!obj_ignored(kw)) {
            return ct_mio_error(r, "unknown OBJ statement '%.40s'", kw);
        }
    }
    return rc < 0 ? CT_EINPUT : CT_OK;
}

ct_status ct_mesh_read_obj(ct_mesh *m, const char *path, ct_diag *diag)
{
    ct_mesh_init(m);
    mio_reader r;
    ct_status st = ct_mio_open(&r, path, diag);
    if (st != CT_OK) return st;
    mio_vec P, pline, tri, tline;
    ct_mio_vec_init(&P, sizeof(double));
    ct_mio_vec_init(&pline, sizeof(int));
    ct_mio_vec_init(&tri, sizeof(long long));
    ct_mio_vec_init(&tline, sizeof(int));
    int *cells = NULL;
    st = obj_parse(&r, &P, &pline, &tri, &tline);
    size_t nv = P.n / 3, nt = tri.n / 3;
    if (st == CT_OK && nt == 0) st = ct_mio_error(&r, "no faces found");
    if (st == CT_OK) { /* range of forward references, then narrow to int */
        cells = malloc((tri.n ? tri.n : 1) * sizeof *cells);
        if (!cells) st = ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
        for (size_t i = 0; st == CT_OK && i < tri.n; ++i) {
            long long v = ((long long *)tri.p)[i];
            if (v < 0 || v >= (long long)nv) {
                r.line = ((int *)tline.p)[i / 3];
                st = ct_mio_error(&r, "vertex index %lld out of range (the file has %zu vertices)", v + 1, nv);
            } else {
                cells[i] = (int)v;
            }
        }
    }
    if (st == CT_OK) st = ct_mio_build_mesh(&r, m, 3, P.p, pline.p, nv, cells, nt, 3, 0);
    free(cells);
    free(P.p);
    free(pline.p);
    free(tri.p);
    free(tline.p);
    free(r.buf);
    if (st != CT_OK) ct_mesh_free(m);
    return st;
}
