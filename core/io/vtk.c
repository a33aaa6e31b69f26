/* vtk.c — a run file's frames as VTK XML files and a ParaView collection (see ct_vtk.h). */
#include "contactlab/ct_vtk.h"

#include "contactlab/ct_h5log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct run_data {
    double *X, *el, *body, *t, *x, *v;
    size_t nx, dim, ne, nv_el, nf;
} run_data;

static void run_data_free(run_data *r) { free(r->X), free(r->el), free(r->body), free(r->t), free(r->x), free(r->v); }

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
    return CT_OK;
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
    fputs("        </DataArray>\n      </PointData>\n      <Points>\n", f);
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
