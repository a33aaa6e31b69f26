/* vtk.c — a run file's frames as VTK XML files and a ParaView collection (see ct_vtk.h). */
#include "contactlab/ct_vtk.h"

#include "contactlab/ct_h5log.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct run_data {
    double *X, *el, *body, *t, *x, *v;
    double *force, *gap, *beta; /* the model's per-vertex contact fields, NULL when the run has none */
    size_t nx, dim, ne, nv_el, nf;
} run_data;

static void run_data_free(run_data *r)
{
    free(r->X), free(r->el), free(r->body), free(r->t), free(r->x), free(r->v);
    free(r->force), free(r->gap), free(r->beta);
}

/* An optional /frames dataset (a run without it, or written before it existed, gives *data = NULL):
 * frames × vertices (× dim when `vec`). */
static ct_status read_field(const char *file, const char *name, int vec, const run_data *r, double **data,
                            ct_diag *diag)
{
    *data = NULL;
    int there = 0, rk = 0;
    size_t d[4];
    ct_status st = ct_h5_exists(file, name, &there, diag);
    if (st != CT_OK || !there) return st;
    if ((st = ct_h5_read(file, name, data, &rk, d, diag)) != CT_OK) return st;
    if (rk != 2 + vec || d[0] != r->nf || d[1] != r->nx || (vec && d[2] != r->dim))
        return ct_diag_add(diag, CT_EINPUT, "%s: %s: expected %zu frames × %zu vertices%s", file, name, r->nf, r->nx,
                           vec ? (r->dim == 3 ? " × 3" : " × 2") : "");
    return CT_OK;
}

static ct_status read_run(const char *file, run_data *r, ct_diag *diag)
{
    memset(r, 0, sizeof *r);
    size_t dX[4], de[4], db[4], dt[4], dx[4], dv[4];
    int rk;
    ct_status st = ct_h5_read(file, "/mesh/X", &r->X, &rk, dX, diag);
    if (st == CT_OK && rk != 2) st = ct_diag_add(diag, CT_EINPUT, "%s: /mesh/X: expected a matrix", file);
    if (st == CT_OK) st = ct_h5_read(file, "/mesh/elements", &r->el, &rk, de, diag);
    if (st == CT_OK && rk != 2) st = ct_diag_add(diag, CT_EINPUT, "%s: /mesh/elements: expected a matrix", file);
    if (st == CT_OK) st = ct_h5_read(file, "/mesh/vertex_body", &r->body, &rk, db, diag);
    if (st == CT_OK) st = ct_h5_read(file, "/frames/time", &r->t, &rk, dt, diag);
    if (st == CT_OK) st = ct_h5_read(file, "/frames/x", &r->x, &rk, dx, diag);
    if (st == CT_OK && rk != 3) st = ct_diag_add(diag, CT_EINPUT, "%s: /frames/x: expected frames × vertices × dim", file);
    if (st == CT_OK) st = ct_h5_read(file, "/frames/v", &r->v, &rk, dv, diag);
    if (st != CT_OK) return st;
    r->nx = dX[0], r->dim = dX[1], r->ne = de[0], r->nv_el = de[1], r->nf = dt[0];
    if (r->dim < 2 || r->dim > 3 || r->nv_el != r->dim + 1 || db[0] != r->nx || dx[0] != r->nf || dx[1] != r->nx ||
        dx[2] != r->dim || dv[0] != r->nf || dv[1] != r->nx || dv[2] != r->dim)
        return ct_diag_add(diag, CT_EINPUT, "%s: /mesh and /frames sizes disagree (X %zu × %zu, elements %zu × %zu, "
                           "frames %zu of %zu × %zu)", file, dX[0], dX[1], de[0], de[1], dx[0], dx[1], dx[2]);
    if (r->nf == 0) return ct_diag_add(diag, CT_EINPUT, "%s: /frames: no frame written", file);
    for (size_t i = 0; i < r->ne * r->nv_el; ++i)
        if (!(r->el[i] >= 0.0 && r->el[i] < (double)r->nx))
            return ct_diag_add(diag, CT_EINPUT, "%s: /mesh/elements: vertex index %g out of range", file, r->el[i]);
    st = read_field(file, "/frames/contact_force", 1, r, &r->force, diag);
    if (st == CT_OK) st = read_field(file, "/frames/gap", 0, r, &r->gap, diag);
    if (st == CT_OK) st = read_field(file, "/frames/beta", 0, r, &r->beta, diag);
    return st;
}

/* One point-data array of 3 components per vertex from a (nx × dim) block, minus `sub` if given. */
static void write_vec(FILE *f, const char *name, const run_data *r, const double *a, const double *sub)
{
    fprintf(f, "        <DataArray type=\"Float64\" Name=\"%s\" NumberOfComponents=\"3\" format=\"ascii\">\n", name);
    for (size_t k = 0; k < r->nx; ++k) {
        double p[3] = {0.0, 0.0, 0.0};
        for (size_t c = 0; c < r->dim; ++c) p[c] = a[k * r->dim + c] - (sub ? sub[k * r->dim + c] : 0.0);
        fprintf(f, "          %.17g %.17g %.17g\n", p[0], p[1], p[2]);
    }
    fputs("        </DataArray>\n", f);
}

/* Base64 of a byte stream, written as it comes (VTK's inline "binary" format). */
typedef struct b64_out {
    FILE *f;
    unsigned char in[3];
    int n;
} b64_out;

static void b64_flush(b64_out *b)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (b->n == 0) return;
    for (int i = b->n; i < 3; ++i) b->in[i] = 0;
    const unsigned long w = (unsigned long)b->in[0] << 16 | (unsigned long)b->in[1] << 8 | b->in[2];
    char o[4] = {tab[w >> 18 & 63], tab[w >> 12 & 63], b->n > 1 ? tab[w >> 6 & 63] : '=', b->n > 2 ? tab[w & 63] : '='};
    fwrite(o, 1, 4, b->f);
    b->n = 0;
}

/* Eight bytes of v, little-endian (the files' byte_order). */
static void b64_u64(b64_out *b, uint64_t v)
{
    for (int i = 0; i < 8; ++i) {
        b->in[b->n++] = (unsigned char)(v >> (8 * i) & 0xff);
        if (b->n == 3) b64_flush(b);
    }
}

/* A Float64 point-data array of ncomp components per vertex, from a frame's block (nx × stride, the
 * first `have` components of each row; the rest 0), in the inline binary format: base64 of a UInt64
 * byte count and the little-endian values. Not ASCII: these fields hold NaN (a gap where a vertex has
 * no contact), which VTK's ASCII reader does not parse. */
static void write_binary(FILE *f, const char *name, const run_data *r, const double *a, int ncomp, size_t stride,
                         size_t have)
{
    fprintf(f, "        <DataArray type=\"Float64\" Name=\"%s\" NumberOfComponents=\"%d\" format=\"binary\">\n"
               "          ", name, ncomp);
    b64_out b = {f, {0, 0, 0}, 0};
    b64_u64(&b, (uint64_t)r->nx * (uint64_t)ncomp * sizeof(double));
    for (size_t k = 0; k < r->nx; ++k)
        for (size_t c = 0; c < (size_t)ncomp; ++c) {
            const double v = c < have ? a[k * stride + c] : 0.0;
            uint64_t u;
            memcpy(&u, &v, sizeof u);
            b64_u64(&b, u);
        }
    b64_flush(&b);
    fputs("\n        </DataArray>\n", f);
}

static ct_status write_frame(const char *path, const run_data *r, size_t k, ct_diag *diag)
{
    FILE *f = fopen(path, "w");
    if (!f) return ct_diag_add(diag, CT_EIO, "%s: cannot write (%s)", path, strerror(errno));
    const double *x = r->x + k * r->nx * r->dim, *v = r->v + k * r->nx * r->dim;
    fputs("<?xml version=\"1.0\"?>\n"
          "<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n"
          "  <UnstructuredGrid>\n", f);
    fprintf(f, "    <Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">\n", r->nx, r->ne);
    fputs("      <PointData Vectors=\"displacement\">\n", f);
    write_vec(f, "displacement", r, x, r->X);
    write_vec(f, "velocity", r, v, NULL);
    fputs("        <DataArray type=\"Int32\" Name=\"body\" format=\"ascii\">\n", f);
    for (size_t i = 0; i < r->nx; ++i) fprintf(f, "          %d\n", (int)r->body[i]);
    fputs("        </DataArray>\n", f);
    /* the model's per-vertex contact fields, when the run has them */
    if (r->force) write_binary(f, "contact_force", r, r->force + k * r->nx * r->dim, 3, r->dim, r->dim);
    if (r->gap) write_binary(f, "gap", r, r->gap + k * r->nx, 1, 1, 1);
    if (r->beta) write_binary(f, "beta", r, r->beta + k * r->nx, 1, 1, 1);
    fputs("      </PointData>\n      <Points>\n", f);
    write_vec(f, "position", r, x, NULL);
    fputs("      </Points>\n      <Cells>\n"
          "        <DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n", f);
    for (size_t e = 0; e < r->ne; ++e) {
        fputs("         ", f);
        for (size_t j = 0; j < r->nv_el; ++j) fprintf(f, " %ld", (long)r->el[e * r->nv_el + j]);
        fputc('\n', f);
    }
    fputs("        </DataArray>\n        <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n", f);
    for (size_t e = 0; e < r->ne; ++e) fprintf(f, "          %zu\n", (e + 1) * r->nv_el);
    fputs("        </DataArray>\n        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n", f);
    const int type = r->dim == 3 ? 10 : 5; /* VTK_TETRA, VTK_TRIANGLE */
    for (size_t e = 0; e < r->ne; ++e) fprintf(f, "          %d\n", type);
    fputs("        </DataArray>\n      </Cells>\n    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n", f);
    if (ferror(f) | (fclose(f) != 0)) return ct_diag_add(diag, CT_EIO, "%s: write failed", path);
    return CT_OK;
}

ct_status ct_vtk_export(const char *run_file, const char *dir, int *nframes, ct_diag *diag)
{
    if (nframes) *nframes = 0;
    if (!run_file || !dir) return ct_diag_add(diag, CT_EINPUT, "ct_vtk_export: NULL argument");
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return ct_diag_add(diag, CT_EIO, "%s: cannot create the directory (%s)", dir, strerror(errno));
    run_data r;
    ct_status st = read_run(run_file, &r, diag);
    const size_t plen = strlen(dir) + 32;
    char *path = st == CT_OK ? malloc(plen) : NULL;
    if (st == CT_OK && !path) st = CT_ENOMEM;
    for (size_t k = 0; st == CT_OK && k < r.nf; ++k) {
        snprintf(path, plen, "%s/frame_%05zu.vtu", dir, k);
        st = write_frame(path, &r, k, diag);
    }
    if (st == CT_OK) {
        snprintf(path, plen, "%s/run.pvd", dir);
        FILE *f = fopen(path, "w");
        if (!f) {
            st = ct_diag_add(diag, CT_EIO, "%s: cannot write (%s)", path, strerror(errno));
        } else {
            fputs("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
                  "  <Collection>\n", f);
            for (size_t k = 0; k < r.nf; ++k)
                fprintf(f, "    <DataSet timestep=\"%.17g\" part=\"0\" file=\"frame_%05zu.vtu\"/>\n", r.t[k], k);
            fputs("  </Collection>\n</VTKFile>\n", f);
            if (ferror(f) | (fclose(f) != 0)) st = ct_diag_add(diag, CT_EIO, "%s: write failed", path);
        }
    }
    if (st == CT_OK && nframes) *nframes = (int)r.nf;
    free(path);
    run_data_free(&r);
    return st;
}
