/* mesh_gmsh.c — the Gmsh ASCII .msh reader (versions 2.x and 4.1): $MeshFormat, $Nodes,
 * $Elements (lines, triangles, tetrahedra; other element types are counted and ignored),
 * other sections skipped. Node tags may be sparse and in any order; duplicates are errors.
 * The line reader and the mesh building are shared with the OBJ reader (mesh_io.h). */
#include "fem/mesh_io.h"

#include <stdlib.h>
#include <string.h>

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
    mio_vec tags;        /* long long per node */
    mio_vec P;           /* 3 doubles per node */
    mio_vec pline;       /* int line per node */
    tag_rec *lookup; /* sorted by tag, after $Nodes */
    int have_nodes, have_elems;
    mio_vec cell[3]; /* node indices: [0] lines (2), [1] triangles (3), [2] tets (4) */
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
static ct_status need_line(mio_reader *r, char **s, const char *section)
{
    int rc = ct_mio_next_content_line(r, s);
    if (rc == 1) return CT_OK;
    if (rc == 0) return ct_mio_error(r, "premature end of file in $%s", section);
    return CT_EINPUT;
}

/* Expect the closing "$EndName" line. */
static ct_status need_end(mio_reader *r, const char *name, const char *hint)
{
    char *s;
    ct_status st = need_line(r, &s, name);
    if (st != CT_OK) return st;
    mio_toks t;
    ct_mio_tokenize(s, &t);
    if (t.ntok != 1 || t.tok[0][0] != '$' || strncmp(t.tok[0] + 1, "End", 3) || strcmp(t.tok[0] + 4, name))
        return ct_mio_error(r, "expected $End%s, found '%.40s'%s", name, t.tok[0], hint);
    return CT_OK;
}

/* A line inside a counted block must not be a section marker. */
static ct_status need_record(mio_reader *r, mio_toks *t, const char *section, long long i, long long n,
                             const char *what)
{
    char *s;
    ct_status st = need_line(r, &s, section);
    if (st != CT_OK) return st;
    ct_mio_tokenize(s, t);
    if (t->tok[0][0] == '$')
        return ct_mio_error(r, "found '%.40s' after %lld of %lld %s (wrong count?)", t->tok[0], i, n, what);
    return CT_OK;
}

/* The first line of a section: its counts, exactly `ntok` values. */
static ct_status need_header(mio_reader *r, mio_toks *t, const char *section, int ntok, const char *layout)
{
    char *s;
    ct_status st = need_line(r, &s, section);
    if (st != CT_OK) return st;
    ct_mio_tokenize(s, t);
    if (t->ntok != ntok) return ct_mio_error(r, "expected %s, found %d values", layout, t->ntok);
    return CT_OK;
}

static ct_status gmsh_add_node(mio_reader *r, gmsh_state *g, long long tag)
{
    if (tag < 1) return ct_mio_error(r, "invalid node tag %lld (must be >= 1)", tag);
    if (g->tags.n >= CT_MIO_MAX_COUNT) return ct_mio_error(r, "too many nodes");
    long long *pt = ct_mio_vec_push(&g->tags, 1);
    double *pp = ct_mio_vec_push(&g->P, 3);
    int *pl = ct_mio_vec_push(&g->pline, 1);
    if (!pt || !pp || !pl) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
    *pt = tag;
    *pl = r->line;
    return CT_OK;
}

static ct_status gmsh_set_coords(mio_reader *r, gmsh_state *g, size_t i, char *const *tok)
{
    double *x = (double *)g->P.p + 3 * i;
    for (int k = 0; k < 3; ++k) {
        ct_status st = ct_mio_parse_coord(r, tok[k], &x[k]);
        if (st != CT_OK) return st;
    }
    ((int *)g->pline.p)[i] = r->line;
    return CT_OK;
}

static ct_status gmsh_nodes_v2(mio_reader *r, gmsh_state *g)
{
    mio_toks t;
    long long n;
    ct_status st = need_header(r, &t, "Nodes", 1, "the number of nodes");
    if (st != CT_OK) return st;
    if ((st = ct_mio_parse_count(r, t.tok[0], "node count", &n)) != CT_OK) return st;
    for (long long i = 0; i < n; ++i) {
        if ((st = need_record(r, &t, "Nodes", i, n, "nodes")) != CT_OK) return st;
        if (t.ntok != 4) return ct_mio_error(r, "expected 'tag x y z', found %d values", t.ntok);
        long long tag;
        if (!ct_mio_parse_ll(t.tok[0], &tag)) return ct_mio_error(r, "cannot parse node tag '%.40s'", t.tok[0]);
        if ((st = gmsh_add_node(r, g, tag)) != CT_OK) return st;
        if ((st = gmsh_set_coords(r, g, g->tags.n - 1, t.tok + 1)) != CT_OK) return st;
    }
    return need_end(r, "Nodes", " (more nodes than declared?)");
}

static ct_status gmsh_nodes_v4(mio_reader *r, gmsh_state *g)
{
    mio_toks t;
    long long nblocks, n, total = 0;
    ct_status st = need_header(r, &t, "Nodes", 4, "'numEntityBlocks numNodes minNodeTag maxNodeTag'");
    if (st != CT_OK) return st;
    if ((st = ct_mio_parse_count(r, t.tok[0], "entity block count", &nblocks)) != CT_OK) return st;
    if ((st = ct_mio_parse_count(r, t.tok[1], "node count", &n)) != CT_OK) return st;
    for (long long b = 0; b < nblocks; ++b) {
        if ((st = need_record(r, &t, "Nodes", b, nblocks, "node blocks")) != CT_OK) return st;
        if (t.ntok != 4)
            return ct_mio_error(r, "expected 'entityDim entityTag parametric numNodesInBlock', found %d values",
                                t.ntok);
        long long edim, param, nb;
        if (!ct_mio_parse_ll(t.tok[0], &edim) || edim < 0 || edim > 3)
            return ct_mio_error(r, "invalid entity dimension '%.40s'", t.tok[0]);
        if (!ct_mio_parse_ll(t.tok[2], &param) || (param != 0 && param != 1))
            return ct_mio_error(r, "invalid parametric flag '%.40s'", t.tok[2]);
        if ((st = ct_mio_parse_count(r, t.tok[3], "block node count", &nb)) != CT_OK) return st;
        total += nb;
        if (total > n) return ct_mio_error(r, "node blocks hold more nodes than the declared %lld", n);
        size_t base = g->tags.n;
        for (long long i = 0; i < nb; ++i) { /* tags, one per line */
            if ((st = need_record(r, &t, "Nodes", i, nb, "node tags in block")) != CT_OK) return st;
            long long tag;
            if (t.ntok != 1) return ct_mio_error(r, "expected one node tag, found %d values", t.ntok);
            if (!ct_mio_parse_ll(t.tok[0], &tag)) return ct_mio_error(r, "cannot parse node tag '%.40s'", t.tok[0]);
            if ((st = gmsh_add_node(r, g, tag)) != CT_OK) return st;
        }
        for (long long i = 0; i < nb; ++i) { /* coordinates (+ parametric coordinates) */
            if ((st = need_record(r, &t, "Nodes", i, nb, "node coordinates in block")) != CT_OK) return st;
            int want = 3 + (param ? (int)edim : 0);
            if (t.ntok != want) return ct_mio_error(r, "expected %d coordinates, found %d values", want, t.ntok);
            if ((st = gmsh_set_coords(r, g, base + (size_t)i, t.tok)) != CT_OK) return st;
        }
    }
    if (total != n) return ct_mio_error(r, "node blocks hold %lld nodes, but %lld were declared", total, n);
    return need_end(r, "Nodes", " (more node blocks than declared?)");
}

/* Sorted tag lookup; duplicate tags are an error. */
static ct_status gmsh_index_nodes(mio_reader *r, gmsh_state *g)
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
            return ct_mio_error(r, "duplicate node tag %lld (also on line %d)", g->lookup[i].tag,
                                ((int *)g->pline.p)[a > b ? b : a]);
        }
    return CT_OK;
}

/* Store one element of a known type from its node tags. */
static ct_status gmsh_add_elem(mio_reader *r, gmsh_state *g, int nn, char *const *tok)
{
    int idx[4];
    for (int k = 0; k < nn; ++k) {
        long long tag;
        if (!ct_mio_parse_ll(tok[k], &tag)) return ct_mio_error(r, "cannot parse node tag '%.40s'", tok[k]);
        idx[k] = node_index(g, tag);
        if (idx[k] < 0) return ct_mio_error(r, "node tag %lld not found", tag);
    }
    mio_vec *c = &g->cell[nn - 2];
    if (c->n / (size_t)nn >= CT_MIO_MAX_COUNT) return ct_mio_error(r, "too many elements");
    int *p = ct_mio_vec_push(c, (size_t)nn);
    if (!p) return ct_diag_add(r->diag, CT_ENOMEM, "%s: out of memory", r->path);
    memcpy(p, idx, (size_t)nn * sizeof *idx);
    return CT_OK;
}

static ct_status gmsh_elements_v2(mio_reader *r, gmsh_state *g)
{
    mio_toks t;
    long long n;
    ct_status st = need_header(r, &t, "Elements", 1, "the number of elements");
    if (st != CT_OK) return st;
    if ((st = ct_mio_parse_count(r, t.tok[0], "element count", &n)) != CT_OK) return st;
    for (long long i = 0; i < n; ++i) {
        if ((st = need_record(r, &t, "Elements", i, n, "elements")) != CT_OK) return st;
        long long tag, type, ntags;
        if (t.ntok < 3) return ct_mio_error(r, "expected 'tag type ntags ...', found %d values", t.ntok);
        if (!ct_mio_parse_ll(t.tok[0], &tag)) return ct_mio_error(r, "cannot parse element tag '%.40s'", t.tok[0]);
        if (!ct_mio_parse_ll(t.tok[1], &type)) return ct_mio_error(r, "cannot parse element type '%.40s'", t.tok[1]);
        if (!ct_mio_parse_ll(t.tok[2], &ntags) || ntags < 0 || ntags > t.ntok - 3)
            return ct_mio_error(r, "invalid number of element tags '%.40s'", t.tok[2]);
        int nn = gmsh_nodes_of_type(type);
        if (!nn) {
            g->nignored++;
            continue;
        }
        int have = t.ntok - 3 - (int)ntags;
        if (have != nn) return ct_mio_error(r, "element type %lld needs %d nodes, found %d", type, nn, have);
        if (t.ntok > CT_MIO_MAXTOK) return ct_mio_error(r, "too many values on the line (%d)", t.ntok);
        if ((st = gmsh_add_elem(r, g, nn, t.tok + 3 + ntags)) != CT_OK) return st;
    }
    return need_end(r, "Elements", " (more elements than declared?)");
}

static ct_status gmsh_elements_v4(mio_reader *r, gmsh_state *g)
{
    mio_toks t;
    long long nblocks, n, total = 0;
    ct_status st = need_header(r, &t, "Elements", 4, "'numEntityBlocks numElements minElementTag maxElementTag'");
    if (st != CT_OK) return st;
    if ((st = ct_mio_parse_count(r, t.tok[0], "entity block count", &nblocks)) != CT_OK) return st;
    if ((st = ct_mio_parse_count(r, t.tok[1], "element count", &n)) != CT_OK) return st;
    for (long long b = 0; b < nblocks; ++b) {
        if ((st = need_record(r, &t, "Elements", b, nblocks, "element blocks")) != CT_OK) return st;
        if (t.ntok != 4)
            return ct_mio_error(
                r, "expected 'entityDim entityTag elementType numElementsInBlock', found %d values", t.ntok);
        long long type, nb;
        if (!ct_mio_parse_ll(t.tok[2], &type)) return ct_mio_error(r, "cannot parse element type '%.40s'", t.tok[2]);
        if ((st = ct_mio_parse_count(r, t.tok[3], "block element count", &nb)) != CT_OK) return st;
        total += nb;
        if (total > n) return ct_mio_error(r, "element blocks hold more elements than the declared %lld", n);
        int nn = gmsh_nodes_of_type(type);
        for (long long i = 0; i < nb; ++i) {
            if ((st = need_record(r, &t, "Elements", i, nb, "elements in block")) != CT_OK) return st;
            if (!nn) {
                g->nignored++;
                continue;
            }
            if (t.ntok != nn + 1)
                return ct_mio_error(r, "element type %lld needs %d nodes, found %d", type, nn, t.ntok - 1);
            long long tag;
            if (!ct_mio_parse_ll(t.tok[0], &tag)) return ct_mio_error(r, "cannot parse element tag '%.40s'", t.tok[0]);
            if ((st = gmsh_add_elem(r, g, nn, t.tok + 1)) != CT_OK) return st;
        }
    }
    if (total != n) return ct_mio_error(r, "element blocks hold %lld elements, but %lld were declared", total, n);
    return need_end(r, "Elements", " (more element blocks than declared?)");
}

/* Skip an unknown section up to its "$EndName" line. */
static ct_status gmsh_skip_section(mio_reader *r, const char *name)
{
    int start = r->line;
    char *s;
    int rc;
    while ((rc = ct_mio_next_line(r, &s)) == 1) {
        mio_toks t;
        ct_mio_tokenize(s, &t);
        if (t.ntok >= 1 && t.tok[0][0] == '$' && !strncmp(t.tok[0] + 1, "End", 3) &&
            !strcmp(t.tok[0] + 4, name))
            return CT_OK;
    }
    if (rc < 0) return CT_EINPUT;
    return ct_mio_error(r, "premature end of file: missing $End%.40s (section started on line %d)", name, start);
}

static ct_status gmsh_format(mio_reader *r, gmsh_state *g)
{
    char *s;
    mio_toks t;
    int rc = ct_mio_next_content_line(r, &s);
    if (rc < 0) return CT_EINPUT;
    if (rc == 0) return ct_mio_error(r, "premature end of file: expected $MeshFormat");
    ct_mio_tokenize(s, &t);
    if (strcmp(t.tok[0], "$MeshFormat") != 0)
        return ct_mio_error(r, "expected $MeshFormat, found '%.40s' (not a Gmsh .msh file?)", t.tok[0]);
    ct_status st = need_line(r, &s, "MeshFormat");
    if (st != CT_OK) return st;
    ct_mio_tokenize(s, &t);
    if (t.ntok != 3) return ct_mio_error(r, "expected 'version file-type data-size', found %d values", t.ntok);
    if (strcmp(t.tok[1], "1") == 0) return ct_mio_error(r, "binary .msh is not supported (save the mesh as ASCII)");
    if (strcmp(t.tok[1], "0") != 0) return ct_mio_error(r, "invalid file type '%.40s' (0 = ASCII)", t.tok[1]);
    double ver;
    if (!ct_mio_parse_double(t.tok[0], &ver)) return ct_mio_error(r, "cannot parse version '%.40s'", t.tok[0]);
    if (ver >= 2.0 && ver < 3.0)
        g->version = 2;
    else if (ver == 4.1)
        g->version = 4;
    else
        return ct_mio_error(r, "unsupported .msh version %.40s (supported: 2.x and 4.1)", t.tok[0]);
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

static ct_status gmsh_parse(mio_reader *r, gmsh_state *g, int dim, ct_mesh *m)
{
    ct_status st = gmsh_format(r, g);
    if (st != CT_OK) return st;
    char *s;
    int rc;
    while ((rc = ct_mio_next_content_line(r, &s)) == 1) {
        mio_toks t;
        ct_mio_tokenize(s, &t);
        const char *h = t.tok[0];
        if (h[0] != '$' || t.ntok != 1) return ct_mio_error(r, "expected a section header ($Name), found '%.40s'", h);
        if (!strcmp(h, "$Nodes")) {
            if (g->have_nodes) return ct_mio_error(r, "second $Nodes section");
            st = g->version == 2 ? gmsh_nodes_v2(r, g) : gmsh_nodes_v4(r, g);
            if (st == CT_OK) st = gmsh_index_nodes(r, g);
            g->have_nodes = 1;
        } else if (!strcmp(h, "$Elements")) {
            if (!g->have_nodes) return ct_mio_error(r, "$Elements before $Nodes");
            if (g->have_elems) return ct_mio_error(r, "second $Elements section");
            st = g->version == 2 ? gmsh_elements_v2(r, g) : gmsh_elements_v4(r, g);
            g->have_elems = 1;
        } else if (!strcmp(h, "$MeshFormat")) {
            return ct_mio_error(r, "second $MeshFormat section");
        } else if (!strncmp(h, "$End", 4)) {
            return ct_mio_error(r, "unexpected '%.40s'", h);
        } else {
            st = gmsh_skip_section(r, h + 1); /* $PhysicalNames, $Entities, $NodeData, ... */
        }
        if (st != CT_OK) return st;
    }
    if (rc < 0) return CT_EINPUT;
    if (!g->have_nodes) return ct_mio_error(r, "no $Nodes section");
    if (!g->have_elems) return ct_mio_error(r, "no $Elements section");

    /* dim 3: tets, else triangles as a surface; dim 2: triangles, else segments. */
    const mio_vec *cells;
    int nper, is_elem;
    if (dim == 3 && g->cell[2].n) {
        cells = &g->cell[2], nper = 4, is_elem = 1;
    } else if (g->cell[1].n) {
        cells = &g->cell[1], nper = 3, is_elem = dim == 2;
    } else if (dim == 2 && g->cell[0].n) {
        cells = &g->cell[0], nper = 2, is_elem = 0;
    } else {
        return ct_mio_error(
            r, "no %s found (%lld elements of other types ignored)",
            dim == 3 ? "tetrahedra (type 4) or triangles (type 2)" : "triangles (type 2) or lines (type 1)",
            g->nignored + (long long)(g->cell[0].n / 2) + (long long)(dim == 3 ? 0 : g->cell[2].n / 4));
    }
    return ct_mio_build_mesh(r, m, dim, g->P.p, g->pline.p, g->tags.n, cells->p, cells->n / (size_t)nper, nper,
                             is_elem);
}

ct_status ct_mesh_read_gmsh(ct_mesh *m, const char *path, int dim, ct_diag *diag)
{
    ct_mesh_init(m);
    if (dim != 2 && dim != 3)
        return ct_diag_add(diag, CT_EINPUT, "%s: dimension must be 2 or 3 (got %d)", path, dim);
    mio_reader r;
    ct_status st = ct_mio_open(&r, path, diag);
    if (st != CT_OK) return st;
    gmsh_state g;
    memset(&g, 0, sizeof g);
    ct_mio_vec_init(&g.tags, sizeof(long long));
    ct_mio_vec_init(&g.P, sizeof(double));
    ct_mio_vec_init(&g.pline, sizeof(int));
    for (int k = 0; k < 3; ++k) ct_mio_vec_init(&g.cell[k], sizeof(int));
    st = gmsh_parse(&r, &g, dim, m);
    gmsh_free(&g);
    free(r.buf);
    if (st != CT_OK) ct_mesh_free(m);
    return st;
}
