/* ct_h5log.h — HDF5 output written as the run goes (DESIGN §6).
 *
 * Fixed datasets (mesh) are written once; time series are extendible chunked datasets
 * with one row per append. All datasets are created first, then ct_h5log_start() switches
 * the file to SWMR writing, so a run killed at any moment (even SIGKILL) leaves a file
 * that h5dump/h5py read with every row flushed so far.
 * layer: io */
#ifndef CT_H5LOG_H
#define CT_H5LOG_H

#include <stddef.h>
#include <stdio.h>
#include "ct_status.h"

typedef struct ct_h5log ct_h5log;

typedef enum { CT_H5_DOUBLE, CT_H5_INT } ct_h5_type;

/* Create (truncate) `path`. */
/* Report a failed HDF5 call on object `obj` of `file`: "FILE: OBJ: WHAT (HDF5: innermost message
 * of HDF5's error stack)" into diag with status s (returned), and clear the stack. For every
 * HDF5 reader and writer of the io layer. */
ct_status ct_h5_fail(ct_diag *diag, ct_status s, const char *file, const char *obj, const char *what);

ct_status ct_h5log_open(ct_h5log **lg, const char *path, ct_diag *diag);

/* Attributes on an object (group or dataset path, "/" for the root); groups are created
 * as needed. */
ct_status ct_h5log_attr_str(ct_h5log *lg, const char *obj, const char *name, const char *value);
ct_status ct_h5log_attr_int(ct_h5log *lg, const char *obj, const char *name, long value);
ct_status ct_h5log_attr_double(ct_h5log *lg, const char *obj, const char *name, double value);

/* A fixed dataset of rank 1..3 (intermediate groups are created). */
ct_status ct_h5log_write(ct_h5log *lg, const char *path, ct_h5_type type, int rank,
                         const size_t *dims, const void *data);

/* An extendible time series whose rows have shape row_dims[0..row_rank) (row_rank 0: a
 * scalar per row). Returns its id in *id. `unit` and `definition` become attributes
 * (either may be NULL). Must be called before ct_h5log_start. */
ct_status ct_h5log_series(ct_h5log *lg, const char *path, ct_h5_type type, int row_rank,
                          const size_t *row_dims, const char *unit, const char *definition,
                          int *id);

/* gzip level (0..9; 0: none, the default) of the series created from now on: their chunks are
 * shuffled and deflated (HDF5's filters; readers decompress them transparently). CT_ELIB if the
 * HDF5 library has no deflate filter, CT_EINPUT for a level outside 0..9. */
ct_status ct_h5log_set_deflate(ct_h5log *lg, int level);

/* Switch to SWMR writing: no more datasets or attributes after this. */
ct_status ct_h5log_start(ct_h5log *lg);

/* Append one row (row_dims elements of the series' type). */
ct_status ct_h5log_append(ct_h5log *lg, int id, const void *row);

/* Flush everything written so far to disk. */
ct_status ct_h5log_flush(ct_h5log *lg);

/* Flush, close and free (lg may be NULL). */
ct_status ct_h5log_close(ct_h5log *lg);

/* ---- reading back (export, tests) ---- */

/* Read a whole dataset as doubles (ints converted). dims has room for 4 entries;
 * *data is malloc'ed. */
ct_status ct_h5_read(const char *file, const char *dataset, double **data, int *rank,
                     size_t dims[4], ct_diag *diag);

/* *exists = 1 if every link of `path` exists in the file, 0 if one is missing (for optional
 * datasets); an error only when the file cannot be read or the lookup fails. */
ct_status ct_h5_exists(const char *file, const char *path, int *exists, ct_diag *diag);

/* Read a string attribute (malloc'ed) of an object. */
ct_status ct_h5_read_attr_str(const char *file, const char *obj, const char *name, char **value,
                              ct_diag *diag);

/* Write the given datasets as columns (a header line "# name1 name2 ..." then one line per
 * row): rank-1 datasets give one column, rank-2 datasets one column per entry of a row
 * (named dataset[k]). All datasets must have the same number of rows. csv != 0 uses commas,
 * otherwise spaces (gnuplot). */
ct_status ct_h5_export(const char *file, const char *const *datasets, int n, int csv, FILE *out,
                       ct_diag *diag);

#endif
