/* ct_status.h — status codes and diagnostics.
 *
 * Every fallible function returns a ct_status. Human-readable detail goes into a
 * ct_diag, which collects several messages (a scene with five mistakes reports all
 * five). Input errors (CT_EINPUT) map to CLI exit status 2, numerical failures to 1.
 * layer: base */
#ifndef CT_STATUS_H
#define CT_STATUS_H

#include <stddef.h>
#include <stdio.h>

/* One X-macro list, so codes and messages can never drift apart. */
#define CT_STATUS_LIST(X)                                             \
    X(CT_OK, "ok")                                                    \
    X(CT_EINPUT, "bad input")                                         \
    X(CT_ENOMEM, "out of memory")                                     \
    X(CT_EIO, "input/output error")                                   \
    X(CT_ENOCONV, "solver did not converge")                          \
    X(CT_ENOTPD, "matrix is not positive definite")                   \
    X(CT_ELIB, "library call failed")                                 \
    X(CT_EINVERTED, "inverted or degenerate element")                 \
    X(CT_ENOTSUP, "operation not supported")                         \
    X(CT_ENONFINITE, "non-finite value (NaN or infinity)")

typedef enum {
#define CT_X_ENUM(code, msg) code,
    CT_STATUS_LIST(CT_X_ENUM)
#undef CT_X_ENUM
        CT_STATUS_COUNT
} ct_status;

const char *ct_status_str(ct_status s);

/* Exit status of the CLI for a status: 0 ok, 2 bad input, 1 anything else. */
int ct_status_exit_code(ct_status s);

/* A list of diagnostics. Messages are formatted "where: what", e.g.
 * "scene.json: /bodies/1/material/E: must be > 0 (got -3)". */
typedef struct ct_diag_msg {
    ct_status status;
    char *text;
} ct_diag_msg;

typedef struct ct_diag {
    ct_diag_msg *msgs;
    size_t count, cap;
    size_t max_msgs; /* 0: unlimited; otherwise further messages are counted only */
    size_t dropped;
} ct_diag;

void ct_diag_init(ct_diag *d);
void ct_diag_free(ct_diag *d);
void ct_diag_clear(ct_diag *d);

/* Append a message; returns `s` so callers can write `return ct_diag_add(d, CT_EINPUT, ...)`.
 * `d` may be NULL (message discarded). */
ct_status ct_diag_add(ct_diag *d, ct_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Worst status recorded (CT_EINPUT wins over others so bad input always exits 2). */
ct_status ct_diag_status(const ct_diag *d);
size_t ct_diag_count(const ct_diag *d);
/* Print every message, one per line, prefixed by `prefix` (may be NULL). */
void ct_diag_print(const ct_diag *d, FILE *f, const char *prefix);
/* Last message text or "" */
const char *ct_diag_last(const ct_diag *d);

#endif
