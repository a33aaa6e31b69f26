/* mesh_io.h — internal to the mesh readers: what mesh_io.c (the line reader, number parsing,
 * growable arrays, building a ct_mesh, the dispatch by extension) shares with the format
 * readers mesh_gmsh.c (Gmsh .msh) and mesh_obj.c (Wavefront OBJ).
 *
 * Files are read whole into memory and parsed line by line. Counts in the file are never
 * trusted for allocation: arrays grow as records are read, so a bogus count only leads to
 * a "premature end of file" error. Every error is reported as "path:LINE: message". */
#ifndef CT_MESH_IO_H
#define CT_MESH_IO_H

#include <limits.h>
#include <stddef.h>

#include "contactlab/ct_mesh.h"
#include "contactlab/ct_status.h"

#define CT_MIO_MAX_COUNT (INT_MAX / 4) /* vertices / cells: indices * 4 must fit an int */
#define CT_MIO_MAXTOK    32            /* tokens kept per line (more are counted only) */

/* ---- line reader ---- */

typedef struct mio_reader {
    const char *path;
    char *buf;
    size_t len, pos;
    int line; /* number of the line last returned (1-based) */
    ct_diag *diag;
} mio_reader;

typedef struct mio_toks {
    char *tok[CT_MIO_MAXTOK];
    int ntok; /* total number of tokens on the line (may exceed CT_MIO_MAXTOK) */
} mio_toks;

/* "path:LINE: message" as an input error. */
ct_status ct_mio_error(mio_reader *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Read the file whole into r->buf (freed by the caller). */
ct_status ct_mio_open(mio_reader *r, const char *path, ct_diag *diag);
/* Next line, NUL-terminated in place (the newline and a trailing '\r' removed).
 * Returns 1, 0 at end of file, or -1 after reporting an error. */
int ct_mio_next_line(mio_reader *r, char **out);
/* Next non-blank line; as ct_mio_next_line. */
int ct_mio_next_content_line(mio_reader *r, char **out);
/* Split a line into whitespace-separated tokens, in place. */
void ct_mio_tokenize(char *s, mio_toks *t);

static inline int ct_mio_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* ---- numbers ---- */

/* Parse a whole token as a double / integer; 1 on success. */
int ct_mio_parse_double(const char *s, double *out);
int ct_mio_parse_ll(const char *s, long long *out);
/* Parse a count in [0, CT_MIO_MAX_COUNT] ("what" names it in the message). */
ct_status ct_mio_parse_count(mio_reader *r, const char *s, const char *what, long long *out);
/* Coordinate token: a finite number. */
ct_status ct_mio_parse_coord(mio_reader *r, const char *s, double *out);

/* ---- growable arrays ---- */

typedef struct mio_vec {
    void *p;
    size_t n, cap, size;
} mio_vec;

void ct_mio_vec_init(mio_vec *v, size_t size);
/* Pointer to `k` new zeroed items at the end, or NULL when out of memory. */
void *ct_mio_vec_push(mio_vec *v, size_t k);

/* ---- the mesh ---- */

/* Build m from the file's points P (3 per point; pline: line of each point) and cells
 * (nper point indices each): unused points are dropped and the rest renumbered; for
 * dim 2 every used point must have z = 0. Elements (is_elem) with a clearly negative
 * orientation are flipped; degenerate ones are left for ct_mesh_validate. */
ct_status ct_mio_build_mesh(mio_reader *r, ct_mesh *m, int dim, const double *P, const int *pline, size_t np,
                            const int *cells, size_t ncells, int nper, int is_elem);

#endif
