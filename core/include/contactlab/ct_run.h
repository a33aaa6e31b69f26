/* ct_run.h — running a scene to the end while logging to HDF5 (DESIGN §6).
 * layer: io */
#ifndef CT_RUN_H
#define CT_RUN_H

#include "ct_scene.h"
#include "ct_sim.h"

enum { CT_RUN_PROGRESS_EVERY = 30 }; /* s, progress = 2 */

typedef struct ct_run_opts {
    const char *output;   /* HDF5 file; NULL: scene's output.file or "<name>.h5" */
    int progress;         /* stderr: 1 a progress line updated in place (the CLI on a terminal), 2 a
                             line every progress_every s of wall time (the CLI otherwise: batch
                             logs), 0 none (--quiet) */
    int max_steps;        /* stop after this many steps (0: the scene's duration) */
    const char *argv_line;/* the command line, stored as an attribute (may be NULL) */
    double progress_every; /* s, for progress = 2; <= 0: CT_RUN_PROGRESS_EVERY (the CLI: the
                              environment's CT_PROGRESS_EVERY if set) */
} ct_run_opts;

/* The file a run of sc writes: `output` if given, else the scene's output.file, else
 * "<name>.h5" (formatted into buf). */
const char *ct_run_output_path(const ct_scene *sc, const char *output, char *buf, size_t size);

/* Run the scene; the output file holds every step logged up to a failure. */
ct_status ct_run(ct_sim *sim, const ct_run_opts *opts, ct_diag *diag);

/* Ask a running ct_run to stop cleanly: it finishes the step in progress, logs it (and a last frame
 * when the scene writes frames, so that `initial_state` can continue from it), closes the file
 * (every /steps and /probes series the same length, no SWMR mark left) and returns CT_OK.
 * Async-signal-safe: the CLI's SIGINT / SIGTERM handler calls it with the signal number (code
 * != 0). ct_run_stop_requested() returns that code, 0 when no stop was asked. */
void ct_run_request_stop(int code);
int ct_run_stop_requested(void);

/* Evaluate probe `p` at the current state into out[0..n) (n = 1, or dim for vector probes). */
ct_status ct_probe_eval(ct_sim *sim, const ct_probe_spec *p, const ct_force_report *fr, double *out, int *n);

/* The library's version ("0.1.0") and `git describe` of the build ("unknown" outside a clone). */
const char *ct_version(void);
const char *ct_git_describe(void);

#endif
