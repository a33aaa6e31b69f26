/* mesh_io.c — mesh readers: Gmsh ASCII .msh (2.x, 4.1) and Wavefront OBJ.
 *
 * Files are read whole into memory and parsed line by line. Counts in the file are never
 * trusted for allocation: arrays grow as records are read, so a bogus count only leads to
 * a "premature end of file" error. Every error is reported as "path:LINE: message". */
#include "contactlab/ct_mesh.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES ((size_t)INT_MAX) /* line numbers are ints */
#define MAX_COUNT      (INT_MAX / 4)     /* vertices / cells: indices * 4 must fit an int */
#define MAXTOK         32                /* tokens kept per line (more are counted only) */

/* ---------------------------------------------------------------- line reader */

typedef struct {
    const char *path;
    char *buf;
    size_t len, pos;
    int line; /* number of the line last returned (1-based) */
    ct_diag *diag;
} reader;

typedef struct {
    char *tok[MAXTOK];
    int ntok; /* total number of tokens on the line (may exceed MAXTOK) */
} toks;

/* "path:LINE: message" as an input error. */
static ct_status rerr(reader *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static ct_status rerr(reader *r, const char *fmt, ...)
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

static ct_status reader_open(reader *r, const char *path, ct_diag *diag)
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
static int next_line(reader *r, char **out)
{
    if (r->pos >= r->len) return 0;
    char *s = r->buf + r->pos;
    char *nl = memchr(s, '\n', r->len - r->pos);
    size_t n = nl ? (size_t)(nl - s) : r->len - r->pos;
    r->line++;
    r->pos += n + (nl ? 1 : 0);
    if (memchr(s, '\0', n)) {
        rerr(r, "NUL byte in the file: not a text file");
        return -1;
    }
    s[n] = '\0';
    if (n > 0 && s[n - 1] == '\r') s[n - 1] = '\0';
    *out = s;
    return 1;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

static int is_blank(const char *s)
{
    while (is_space(*s)) ++s;
    return *s == '\0';
}

/* Next non-blank line; as next_line. */
static int next_content_line(reader *r, char **out)
{
    int rc;
    while ((rc = next_line(r, out)) == 1)
        if (!is_blank(*out)) return 1;
    return rc;
}

/* Split a line into whitespace-separated tokens, in place. */
static void tokenize(char *s, toks *t)
{
    t->ntok = 0;
    for (;;) {
        while (is_space(*s)) ++s;
        if (!*s) return;
        if (t->ntok < MAXTOK) t->tok[t->ntok] = s;
        t->ntok++;
        while (*s && !is_space(*s)) ++s;
        if (!*s) return;
        *s++ = '\0';
    }
}

/* Parse a whole token as a double / integer; 1 on success. */
static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0') return 0;
    *out = v; /* overflow gives +-HUGE_VAL: callers check isfinite */
    return 1;
}

static int parse_ll(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE) return 0;
    *out = v;
    return 1;
}

/* Parse a count in [0, MAX_COUNT] ("what" names it in the message). */
static ct_status parse_count(reader *r, const char *s, const char *what, long long *out)
{
    if (!parse_ll(s, out)) return rerr(r, "cannot parse %s '%.40s'", what, s);
    if (*out < 0 || *out > MAX_COUNT)
        return rerr(r, "%s %lld is out of range (0..%d)", what, *out, MAX_COUNT);
    return CT_OK;
}

/* Coordinate token: a finite number. */
static ct_status parse_coord(reader *r, const char *s, double *out)
{
    if (!parse_double(s, out)) return rerr(r, "cannot parse number '%.40s'", s);
    if (!isfinite(*out)) return rerr(r, "non-finite coordinate '%.40s'", s);
    return CT_OK;
}

/* ---------------------------------------------------------------- growable arrays */

typedef struct {
    void *p;
    size_t n, cap, size;
} vec;

static void vec_init(vec *v, size_t size)
{
    v->p = NULL;
    v->n = v->cap = 0;
    v->size = size;
}

/* Pointer to `k` new zeroed items at the end, or NULL when out of memory. */
static void *vec_push(vec *v, size_t k)
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
static ct_status build_mesh(reader *r, ct_mesh *m, int dim, const double *P, const int *pline, size_t np,
                            const int *cells, size_t ncells, int nper, int is_elem)
{
    if (ncells > MAX_COUNT) return rerr(r, "too many cells (%zu)", ncells);
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
                rerr(r, "z = %g, but a 2D mesh must lie in the plane z = 0", P[3 * i + 2]);
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

/* ---------------------------------------------------------------- Gmsh */

typedef struct {
    long long tag;
    int idx;
} tag_rec;

static int cmp_tag_rec(const void *pa, const void *pb)
{
    const tag_rec *a = pa, *b = pb;
    return (a->tag > b->tag) - (a->tag < b->tag);
}

typedef struct {
    int version;     /* 2 or 4 */
    vec tags;        /* long long per node */
    vec P;           /* 3 doubles per node */
    vec pline;       /* int line per node */
    tag_rec *lookup; /* sorted by tag, after $Nodes */
    int have_nodes, have_elems;
    vec cell[3]; /* node indices: [0] lines (2), [1] triangles (3), [2] tets (4) */
    long long nignored;
} gmsh_state;

/* Element types we read: 1 line, 2 triangle, 4 tetrahedron; 15 point (ignored). */
static int gmsh_nodes_of_type(long long type)
{
    switch (type) {
    case 1: return 2;
    case 2: return 3;
    case 4: return 4;
    default: return 0;
    }
}

static int node_index(const gmsh_state *g, long long tag)
{
    size_t lo = 0, hi = g->tags.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->lookup[mid].tag < tag)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < g->tags.n && g->lookup[lo].tag == tag ? g->lookup[lo].idx : -1;
}

/* Next non-blank line that must exist (inside a section). */
static ct_status need_line(reader *r, char **s, const char *section)
{
    int rc = next_content_line(r, s);
    if (rc == 1) return CT_OK;
    if (rc == 0) return rerr(r, "premature end of file in $%s", section);
    return CT_EINPUT;
}

/* Expect the closing "$EndName" line. */
static ct_status need_end(reader *r, const char *name, const char *hint)
{
    char *s;
    ct_status st = need_line(r, &s, name);
    if (st != CT_OK) return st;
    toks t;
    tokenize(s, &t);
    if (t.ntok != 1 || t.tok[0][0] != '$' || strncmp(t.tok[0] + 1, "End", 3) || strcmp(t.tok[0] + 4, name))
        return rerr(r, "expected $End%s, found '%.40s'%s", name, t.tok[0], hint);
    return CT_OK;
}

/* A line inside a counted block must not be a section marker. */
static ct_status need_record(reader *r, toks *t, const char *section, long long i, long long n,
                             const char *what)
{
    char *s;
    ct_status st = need_line(r, &s, section);
    if (st != CT_OK) return st;
    tokenize(s, t);
    if (t->tok[0][0] == '$')
        return rerr(r, "found '%.40s' after %lld of %lld %s (wrong count?)", t->tok[0], i, n, what);
    return CT_OK;
}

/* The first line of a section: its counts, exactly `ntok` values. */
static ct_status need_header(reader *r, toks *t, const char *section, int ntok, const char *layout)
{
    char *s;
    ct_status st = need_line(r, &s, section);
    if (st != CT_OK) return st;
    tokenize(s, t);
    if (t->ntok != ntok) return rerr(r, "expected %s, found %d values", layout, t->ntok);
    return CT_OK;
}

static ct_status gmsh_add_node(reader *r, gmsh_state *g, long long tag)
{
    if (tag < 1) return rerr(r, "invalid node tag %lld (must be >= 1)", tag);
    if (g->tags.n >= MAX_COUNT) return rerr(r, "too many nodes");
    long long *pt = vec_push(&g->tags, 1);
    double *pp = vec_push(&g->P, 3);
    int *pl = vec_push(&g->pline, 1);
    if (!pt || !pp || !pl) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
    *pt = tag;
    *pl = r->line;
    return CT_OK;
}

static ct_status gmsh_set_coords(reader *r, gmsh_state *g, size_t i, char *const *tok)
{
    double *x = (double *)g->P.p + 3 * i;
    for (int k = 0; k < 3; ++k) {
        ct_status st = parse_coord(r, tok[k], &x[k]);
        if (st != CT_OK) return st;
    }
    ((int *)g->pline.p)[i] = r->line;
    return CT_OK;
}

static ct_status gmsh_nodes_v2(reader *r, gmsh_state *g)
{
    toks t;
    long long n;
    ct_status st = need_header(r, &t, "Nodes", 1, "the number of nodes");
    if (st != CT_OK) return st;
    if ((st = parse_count(r, t.tok[0], "node count", &n)) != CT_OK) return st;
    for (long long i = 0; i < n; ++i) {
        if ((st = need_record(r, &t, "Nodes", i, n, "nodes")) != CT_OK) return st;
        if (t.ntok != 4) return rerr(r, "expected 'tag x y z', found %d values", t.ntok);
        long long tag;
        if (!parse_ll(t.tok[0], &tag)) return rerr(r, "cannot parse node tag '%.40s'", t.tok[0]);
        if ((st = gmsh_add_node(r, g, tag)) != CT_OK) return st;
        if ((st = gmsh_set_coords(r, g, g->tags.n - 1, t.tok + 1)) != CT_OK) return st;
    }
    return need_end(r, "Nodes", " (more nodes than declared?)");
}

static ct_status gmsh_nodes_v4(reader *r, gmsh_state *g)
{
    toks t;
    long long nblocks, n, total = 0;
    ct_status st = need_header(r, &t, "Nodes", 4, "'numEntityBlocks numNodes minNodeTag maxNodeTag'");
    if (st != CT_OK) return st;
    if ((st = parse_count(r, t.tok[0], "entity block count", &nblocks)) != CT_OK) return st;
    if ((st = parse_count(r, t.tok[1], "node count", &n)) != CT_OK) return st;
    for (long long b = 0; b < nblocks; ++b) {
        if ((st = need_record(r, &t, "Nodes", b, nblocks, "node blocks")) != CT_OK) return st;
        if (t.ntok != 4)
            return rerr(r, "expected 'entityDim entityTag parametric numNodesInBlock', found %d values",
                        t.ntok);
        long long edim, param, nb;
        if (!parse_ll(t.tok[0], &edim) || edim < 0 || edim > 3)
            return rerr(r, "invalid entity dimension '%.40s'", t.tok[0]);
        if (!parse_ll(t.tok[2], &param) || (param != 0 && param != 1))
            return rerr(r, "invalid parametric flag '%.40s'", t.tok[2]);
        if ((st = parse_count(r, t.tok[3], "block node count", &nb)) != CT_OK) return st;
        total += nb;
        if (total > n) return rerr(r, "node blocks hold more nodes than the declared %lld", n);
        size_t base = g->tags.n;
        for (long long i = 0; i < nb; ++i) { /* tags, one per line */
            if ((st = need_record(r, &t, "Nodes", i, nb, "node tags in block")) != CT_OK) return st;
            long long tag;
            if (t.ntok != 1) return rerr(r, "expected one node tag, found %d values", t.ntok);
            if (!parse_ll(t.tok[0], &tag)) return rerr(r, "cannot parse node tag '%.40s'", t.tok[0]);
            if ((st = gmsh_add_node(r, g, tag)) != CT_OK) return st;
        }
        for (long long i = 0; i < nb; ++i) { /* coordinates (+ parametric coordinates) */
            if ((st = need_record(r, &t, "Nodes", i, nb, "node coordinates in block")) != CT_OK) return st;
            int want = 3 + (param ? (int)edim : 0);
            if (t.ntok != want) return rerr(r, "expected %d coordinates, found %d values", want, t.ntok);
            if ((st = gmsh_set_coords(r, g, base + (size_t)i, t.tok)) != CT_OK) return st;
        }
    }
    if (total != n) return rerr(r, "node blocks hold %lld nodes, but %lld were declared", total, n);
    return need_end(r, "Nodes", " (more node blocks than declared?)");
}

/* Sorted tag lookup; duplicate tags are an error. */
static ct_status gmsh_index_nodes(reader *r, gmsh_state *g)
{
    size_t n = g->tags.n;
    g->lookup = malloc((n ? n : 1) * sizeof *g->lookup);
    if (!g->lookup) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
    for (size_t i = 0; i < n; ++i) {
        g->lookup[i].tag = ((long long *)g->tags.p)[i];
        g->lookup[i].idx = (int)i;
    }
    qsort(g->lookup, n, sizeof *g->lookup, cmp_tag_rec);
    for (size_t i = 1; i < n; ++i)
        if (g->lookup[i].tag == g->lookup[i - 1].tag) {
            int a = g->lookup[i - 1].idx, b = g->lookup[i].idx;
            r->line = ((int *)g->pline.p)[a > b ? a : b];
            return rerr(r, "duplicate node tag %lld (also on line %d)", g->lookup[i].tag,
                        ((int *)g->pline.p)[a > b ? b : a]);
        }
    return CT_OK;
}

/* Store one element of a known type from its node tags. */
static ct_status gmsh_add_elem(reader *r, gmsh_state *g, int nn, char *const *tok)
{
    int idx[4];
    for (int k = 0; k < nn; ++k) {
        long long tag;
        if (!parse_ll(tok[k], &tag)) return rerr(r, "cannot parse node tag '%.40s'", tok[k]);
        idx[k] = node_index(g, tag);
        if (idx[k] < 0) return rerr(r, "node tag %lld not found", tag);
    }
    vec *c = &g->cell[nn - 2];
    if (c->n / (size_t)nn >= MAX_COUNT) return rerr(r, "too many elements");
    int *p = vec_push(c, (size_t)nn);
    if (!p) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
    memcpy(p, idx, (size_t)nn * sizeof *idx);
    return CT_OK;
}

static ct_status gmsh_elements_v2(reader *r, gmsh_state *g)
{
    toks t;
    long long n;
    ct_status st = need_header(r, &t, "Elements", 1, "the number of elements");
    if (st != CT_OK) return st;
    if ((st = parse_count(r, t.tok[0], "element count", &n)) != CT_OK) return st;
    for (long long i = 0; i < n; ++i) {
        if ((st = need_record(r, &t, "Elements", i, n, "elements")) != CT_OK) return st;
        long long tag, type, ntags;
        if (t.ntok < 3) return rerr(r, "expected 'tag type ntags ...', found %d values", t.ntok);
        if (!parse_ll(t.tok[0], &tag)) return rerr(r, "cannot parse element tag '%.40s'", t.tok[0]);
        if (!parse_ll(t.tok[1], &type)) return rerr(r, "cannot parse element type '%.40s'", t.tok[1]);
        if (!parse_ll(t.tok[2], &ntags) || ntags < 0 || ntags > t.ntok - 3)
            return rerr(r, "invalid number of element tags '%.40s'", t.tok[2]);
        int nn = gmsh_nodes_of_type(type);
        if (!nn) {
            g->nignored++;
            continue;
        }
        int have = t.ntok - 3 - (int)ntags;
        if (have != nn) return rerr(r, "element type %lld needs %d nodes, found %d", type, nn, have);
        if (t.ntok > MAXTOK) return rerr(r, "too many values on the line (%d)", t.ntok);
        if ((st = gmsh_add_elem(r, g, nn, t.tok + 3 + ntags)) != CT_OK) return st;
    }
    return need_end(r, "Elements", " (more elements than declared?)");
}

static ct_status gmsh_elements_v4(reader *r, gmsh_state *g)
{
    toks t;
    long long nblocks, n, total = 0;
    ct_status st = need_header(r, &t, "Elements", 4, "'numEntityBlocks numElements minElementTag maxElementTag'");
    if (st != CT_OK) return st;
    if ((st = parse_count(r, t.tok[0], "entity block count", &nblocks)) != CT_OK) return st;
    if ((st = parse_count(r, t.tok[1], "element count", &n)) != CT_OK) return st;
    for (long long b = 0; b < nblocks; ++b) {
        if ((st = need_record(r, &t, "Elements", b, nblocks, "element blocks")) != CT_OK) return st;
        if (t.ntok != 4)
            return rerr(r, "expected 'entityDim entityTag elementType numElementsInBlock', found %d values",
                        t.ntok);
        long long type, nb;
        if (!parse_ll(t.tok[2], &type)) return rerr(r, "cannot parse element type '%.40s'", t.tok[2]);
        if ((st = parse_count(r, t.tok[3], "block element count", &nb)) != CT_OK) return st;
        total += nb;
        if (total > n) return rerr(r, "element blocks hold more elements than the declared %lld", n);
        int nn = gmsh_nodes_of_type(type);
        for (long long i = 0; i < nb; ++i) {
            if ((st = need_record(r, &t, "Elements", i, nb, "elements in block")) != CT_OK) return st;
            if (!nn) {
                g->nignored++;
                continue;
            }
            if (t.ntok != nn + 1)
                return rerr(r, "element type %lld needs %d nodes, found %d", type, nn, t.ntok - 1);
            long long tag;
            if (!parse_ll(t.tok[0], &tag)) return rerr(r, "cannot parse element tag '%.40s'", t.tok[0]);
            if ((st = gmsh_add_elem(r, g, nn, t.tok + 1)) != CT_OK) return st;
        }
    }
    if (total != n) return rerr(r, "element blocks hold %lld elements, but %lld were declared", total, n);
    return need_end(r, "Elements", " (more element blocks than declared?)");
}

/* Skip an unknown section up to its "$EndName" line. */
static ct_status gmsh_skip_section(reader *r, const char *name)
{
    int start = r->line;
    char *s;
    int rc;
    while ((rc = next_line(r, &s)) == 1) {
        toks t;
        tokenize(s, &t);
        if (t.ntok >= 1 && t.tok[0][0] == '$' && !strncmp(t.tok[0] + 1, "End", 3) &&
            !strcmp(t.tok[0] + 4, name))
            return CT_OK;
    }
    if (rc < 0) return CT_EINPUT;
    return rerr(r, "premature end of file: missing $End%.40s (section started on line %d)", name, start);
}

static ct_status gmsh_format(reader *r, gmsh_state *g)
{
    char *s;
    toks t;
    int rc = next_content_line(r, &s);
    if (rc < 0) return CT_EINPUT;
    if (rc == 0) return rerr(r, "premature end of file: expected $MeshFormat");
    tokenize(s, &t);
    if (strcmp(t.tok[0], "$MeshFormat") != 0)
        return rerr(r, "expected $MeshFormat, found '%.40s' (not a Gmsh .msh file?)", t.tok[0]);
    ct_status st = need_line(r, &s, "MeshFormat");
    if (st != CT_OK) return st;
    tokenize(s, &t);
    if (t.ntok != 3) return rerr(r, "expected 'version file-type data-size', found %d values", t.ntok);
    if (strcmp(t.tok[1], "1") == 0) return rerr(r, "binary .msh is not supported (save the mesh as ASCII)");
    if (strcmp(t.tok[1], "0") != 0) return rerr(r, "invalid file type '%.40s' (0 = ASCII)", t.tok[1]);
    double ver;
    if (!parse_double(t.tok[0], &ver)) return rerr(r, "cannot parse version '%.40s'", t.tok[0]);
    if (ver >= 2.0 && ver < 3.0)
        g->version = 2;
    else if (ver == 4.1)
        g->version = 4;
    else
        return rerr(r, "unsupported .msh version %.40s (supported: 2.x and 4.1)", t.tok[0]);
    return need_end(r, "MeshFormat", "");
}

static void gmsh_free(gmsh_state *g)
{
    free(g->tags.p);
    free(g->P.p);
    free(g->pline.p);
    free(g->lookup);
    for (int k = 0; k < 3; ++k) free(g->cell[k].p);
}

static ct_status gmsh_parse(reader *r, gmsh_state *g, int dim, ct_mesh *m)
{
    ct_status st = gmsh_format(r, g);
    if (st != CT_OK) return st;
    char *s;
    int rc;
    while ((rc = next_content_line(r, &s)) == 1) {
        toks t;
        tokenize(s, &t);
        const char *h = t.tok[0];
        if (h[0] != '$' || t.ntok != 1) return rerr(r, "expected a section header ($Name), found '%.40s'", h);
        if (!strcmp(h, "$Nodes")) {
            if (g->have_nodes) return rerr(r, "second $Nodes section");
            st = g->version == 2 ? gmsh_nodes_v2(r, g) : gmsh_nodes_v4(r, g);
            if (st == CT_OK) st = gmsh_index_nodes(r, g);
            g->have_nodes = 1;
        } else if (!strcmp(h, "$Elements")) {
            if (!g->have_nodes) return rerr(r, "$Elements before $Nodes");
            if (g->have_elems) return rerr(r, "second $Elements section");
            st = g->version == 2 ? gmsh_elements_v2(r, g) : gmsh_elements_v4(r, g);
            g->have_elems = 1;
        } else if (!strcmp(h, "$MeshFormat")) {
            return rerr(r, "second $MeshFormat section");
        } else if (!strncmp(h, "$End", 4)) {
            return rerr(r, "unexpected '%.40s'", h);
        } else {
            st = gmsh_skip_section(r, h + 1); /* $PhysicalNames, $Entities, $NodeData, ... */
        }
        if (st != CT_OK) return st;
    }
    if (rc < 0) return CT_EINPUT;
    if (!g->have_nodes) return rerr(r, "no $Nodes section");
    if (!g->have_elems) return rerr(r, "no $Elements section");

    /* dim 3: tets, else triangles as a surface; dim 2: triangles, else segments. */
    const vec *cells;
    int nper, is_elem;
    if (dim == 3 && g->cell[2].n) {
        cells = &g->cell[2], nper = 4, is_elem = 1;
    } else if (g->cell[1].n) {
        cells = &g->cell[1], nper = 3, is_elem = dim == 2;
    } else if (dim == 2 && g->cell[0].n) {
        cells = &g->cell[0], nper = 2, is_elem = 0;
    } else {
        return rerr(
            r, "no %s found (%lld elements of other types ignored)",
            dim == 3 ? "tetrahedra (type 4) or triangles (type 2)" : "triangles (type 2) or lines (type 1)",
            g->nignored + (long long)(g->cell[0].n / 2) + (long long)(dim == 3 ? 0 : g->cell[2].n / 4));
    }
    return build_mesh(r, m, dim, g->P.p, g->pline.p, g->tags.n, cells->p, cells->n / (size_t)nper, nper,
                      is_elem);
}

ct_status ct_mesh_read_gmsh(ct_mesh *m, const char *path, int dim, ct_diag *diag)
{
    ct_mesh_init(m);
    if (dim != 2 && dim != 3)
        return ct_diag_add(diag, CT_EINPUT, "%s: dimension must be 2 or 3 (got %d)", path, dim);
    reader r;
    ct_status st = reader_open(&r, path, diag);
    if (st != CT_OK) return st;
    gmsh_state g;
    memset(&g, 0, sizeof g);
    vec_init(&g.tags, sizeof(long long));
    vec_init(&g.P, sizeof(double));
    vec_init(&g.pline, sizeof(int));
    for (int k = 0; k < 3; ++k) vec_init(&g.cell[k], sizeof(int));
    st = gmsh_parse(&r, &g, dim, m);
    gmsh_free(&g);
    free(r.buf);
    if (st != CT_OK) ct_mesh_free(m);
    return st;
}

/* ---------------------------------------------------------------- OBJ */

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
static ct_status obj_corner(reader *r, const char *s, size_t nv, long long *idx)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || (*end != '\0' && *end != '/') || errno == ERANGE)
        return rerr(r, "cannot parse vertex reference '%.40s'", s);
    for (const char *p = end; *p; ++p)
        if (*p != '/' && *p != '-' && (*p < '0' || *p > '9'))
            return rerr(r, "cannot parse vertex reference '%.40s'", s);
    if (v == 0) return rerr(r, "vertex index 0 is invalid (OBJ indices start at 1)");
    if (v < 0) {
        if (-v > (long long)nv)
            return rerr(r, "relative vertex index %lld out of range (%zu vertices defined so far)", v, nv);
        *idx = (long long)nv + v;
    } else {
        *idx = v - 1;
    }
    return CT_OK;
}

static ct_status obj_parse(reader *r, vec *P, vec *pline, vec *tri, vec *tline)
{
    char *s;
    int rc;
    ct_status st;
    while ((rc = next_line(r, &s)) == 1) {
        char *hash = strchr(s, '#');
        if (hash) *hash = '\0';
        toks t;
        tokenize(s, &t);
        if (t.ntok == 0) continue;
        const char *kw = t.tok[0];
        if (!strcmp(kw, "v")) {
            if (t.ntok < 4 || t.ntok > 8)
                return rerr(r, "expected 'v x y z [w | r g b]', found %d values", t.ntok - 1);
            if (P->n / 3 >= MAX_COUNT) return rerr(r, "too many vertices");
            double *x = vec_push(P, 3);
            int *pl = vec_push(pline, 1);
            if (!x || !pl) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
            *pl = r->line;
            for (int k = 0; k < 3; ++k)
                if ((st = parse_coord(r, t.tok[1 + k], &x[k])) != CT_OK) return st;
            for (int k = 4; k < t.ntok; ++k) {
                double extra;
                if (!parse_double(t.tok[k], &extra)) return rerr(r, "cannot parse number '%.40s'", t.tok[k]);
            }
        } else if (!strcmp(kw, "f")) {
            if (t.ntok < 4) return rerr(r, "a face needs at least 3 vertices, found %d", t.ntok - 1);
            /* Walk the tokens again (a polygon may have more than MAXTOK corners). */
            size_t nv = P->n / 3;
            long long first = 0, prev = 0;
            char *p = t.tok[1];
            for (int k = 0; k < t.ntok - 1; ++k) {
                long long cur = 0;
                if ((st = obj_corner(r, p, nv, &cur)) != CT_OK) return st;
                if (k >= 2) { /* fan split (first, prev, cur) */
                    if (tri->n / 3 >= MAX_COUNT) return rerr(r, "too many faces");
                    long long *c = vec_push(tri, 3);
                    int *tl = vec_push(tline, 1);
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
                    while (is_space(*p)) ++p;
                }
            }
        } else if (!obj_ignored(kw)) {
            return rerr(r, "unknown OBJ statement '%.40s'", kw);
        }
    }
    return rc < 0 ? CT_EINPUT : CT_OK;
}

ct_status ct_mesh_read_obj(ct_mesh *m, const char *path, ct_diag *diag)
{
    ct_mesh_init(m);
    reader r;
    ct_status st = reader_open(&r, path, diag);
    if (st != CT_OK) return st;
    vec P, pline, tri, tline;
    vec_init(&P, sizeof(double));
    vec_init(&pline, sizeof(int));
    vec_init(&tri, sizeof(long long));
    vec_init(&tline, sizeof(int));
    int *cells = NULL;
    st = obj_parse(&r, &P, &pline, &tri, &tline);
    size_t nv = P.n / 3, nt = tri.n / 3;
    if (st == CT_OK && nt == 0) st = rerr(&r, "no faces found");
    if (st == CT_OK) { /* range of forward references, then narrow to int */
        cells = malloc((tri.n ? tri.n : 1) * sizeof *cells);
        if (!cells) st = ct_diag_add(diag, CT_ENOMEM, "%s: out of memory", path);
        for (size_t i = 0; st == CT_OK && i < tri.n; ++i) {
            long long v = ((long long *)tri.p)[i];
            if (v < 0 || v >= (long long)nv) {
                r.line = ((int *)tline.p)[i / 3];
                st = rerr(&r, "vertex index %lld out of range (the file has %zu vertices)", v + 1, nv);
            } else {
                cells[i] = (int)v;
            }
        }
    }
    if (st == CT_OK) st = build_mesh(&r, m, 3, P.p, pline.p, nv, cells, nt, 3, 0);
    free(cells);
    free(P.p);
    free(pline.p);
    free(tri.p);
    free(tline.p);
    free(r.buf);
    if (st != CT_OK) ct_mesh_free(m);
    return st;
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
