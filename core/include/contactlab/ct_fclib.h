/* ct_fclib.h — reading FCLIB local frictional-contact problems (HDF5) into the block-sparse form of
 * the block PGS (ct_pgs.h).
 *
 * FCLIB (the benchmark collection of the FCLIB project, with the Siconos and FCLIB sources) stores a
 * local problem  u = W r + q,  per contact the Coulomb cone with coefficient mu, rows ordered
 * [normal, tangent1, tangent2]:
 *     /fclib_local/W/{m, n, nz, nzmax, p, i, x}   W (m × n scalar, m = n = contacts × spacedim):
 *         nz >= 0  triplets: entry k is (i[k], p[k], x[k]), k < nz (duplicates are summed);
 *         nz == -1 CSC: p the n+1 column pointers, i the row indices, x the values;
 *         nz == -2 CSR: p the m+1 row pointers, i the column indices, x the values;
 *     /fclib_local/vectors/q (m), /fclib_local/vectors/mu (contacts), /fclib_local/spacedim (2 or 3).
 * Integer datasets may be stored with any integer type (the files hold 32-bit ints), real ones with
 * any floating-point type; a dataset's elements are read in storage order whatever its rank.
 * nzmax, /fclib_local/info, /solution and /guesses are not read.
 *
 * The reader converts W to the block rows of ct_pgs_problem: block row i holds the dim × dim blocks
 * touched by any stored entry (explicit zeros included) plus the diagonal block (created with zeros
 * when the file has none: the solver then refuses the problem with its own message), columns
 * increasing, blocks row-major; entries of W that the file does not store are zero.
 * layer: io */
#ifndef CT_FCLIB_H
#define CT_FCLIB_H

#include "ct_pgs.h"
#include "ct_status.h"

typedef struct ct_fclib_problem {
    int m, dim;       /* contacts (the length of mu), rows per contact (spacedim: 2 or 3) */
    int format;       /* W's storage in the file: the FCLIB nz code (>= 0 triplets, -1 CSC, -2 CSR) */
    int nnz;          /* scalar entries of W stored in the file (nz, or p[n] resp. p[m]) */
    int *ptr;         /* m+1 block row pointers */
    int *col;         /* ptr[m] block columns */
    double *val;      /* ptr[m]·dim² block entries, row-major per block */
    double *q;        /* m·dim */
    double *mu;       /* m */
} ct_fclib_problem;

/* Read the local problem of FCLIB file `path` into *out (overwritten; free with ct_fclib_free, also
 * after a failure). CT_EINPUT with one message "PATH: /dataset/path: what" per problem for a file
 * that cannot be opened as HDF5, a missing dataset or one of the wrong kind (integer / real), sizes
 * that do not agree (W not square, n != contacts × spacedim, q's length, pointer arrays), indices out
 * of range, pointers not starting at 0 or decreasing, spacedim not 2 or 3, a NaN or infinite value, a
 * negative mu, no contacts; CT_ENOMEM; CT_ELIB when an HDF5 call fails on readable input. HDF5's
 * automatic error printing is off during the call and restored after. */
ct_status ct_fclib_read(const char *path, ct_fclib_problem *out, ct_diag *diag);

void ct_fclib_free(ct_fclib_problem *p);

/* The problem as the block PGS sees it (pointers into *p, adh = NULL). */
ct_pgs_problem ct_fclib_view(const ct_fclib_problem *p);

/* max |W_rc − W_cr| / max |W_rc| over the stored blocks (0 for a zero matrix): the FCLIB W of some
 * problems is slightly unsymmetric. */
double ct_fclib_asymmetry(const ct_fclib_problem *p);

#endif
