/* status.c — status strings and the diagnostics list. */
#include "contactlab/ct_status.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_msgs[] = {
#define CT_X_MSG(code, msg) msg,
    CT_STATUS_LIST(CT_X_MSG)
#undef CT_X_MSG
};

const char *ct_status_str(ct_status s)
{
    if ((int)s < 0 || s >= CT_STATUS_COUNT) return "unknown status";
    return status_msgs[s];
}

int ct_status_exit_code(ct_status s)
{
    if (s == CT_OK) return 0;
    if (s == CT_EINPUT) return 2;
    return 1;
}

void ct_diag_init(ct_diag *d)
{
    memset(d, 0, sizeof *d);
    d->max_msgs = 200;
}

void ct_diag_clear(ct_diag *d)
{
    for (size_t i = 0; i < d->count; ++i) free(d->msgs[i].text);
    d->count = 0;
    d->dropped = 0;
}

void ct_diag_free(ct_diag *d)
{
    if (!d) return;
    ct_diag_clear(d);
    free(d->msgs);
    d->msgs = NULL;
    d->cap = 0;
}

ct_status ct_diag_add(ct_diag *d, ct_status s, const char *fmt, ...)
{
    if (!d) return s;
    if (d->max_msgs && d->count >= d->max_msgs) {
        d->dropped++;
        return s;
    }
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return s;
    char *text = malloc((size_t)n + 1);
    if (!text) return s;
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    if (d->count == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 8;
        ct_diag_msg *m = realloc(d->msgs, cap * sizeof *m);
        if (!m) {
            free(text);
            return s;
        }
        d->msgs = m;
        d->cap = cap;
    }
    d->msgs[d->count].status = s;
    d->msgs[d->count].text = text;
    d->count++;
    return s;
}

ct_status ct_diag_status(const ct_diag *d)
{
    ct_status worst = CT_OK;
    if (!d) return worst;
    for (size_t i = 0; i < d->count; ++i) {
        if (d->msgs[i].status == CT_EINPUT) return CT_EINPUT;
        if (d->msgs[i].status != CT_OK) worst = d->msgs[i].status;
    }
    return worst;
}

size_t ct_diag_count(const ct_diag *d) { return d ? d->count : 0; }

void ct_diag_print(const ct_diag *d, FILE *f, const char *prefix)
{
    if (!d) return;
    for (size_t i = 0; i < d->count; ++i)
        fprintf(f, "%s%s\n", prefix ? prefix : "", d->msgs[i].text);
    if (d->dropped)
        fprintf(f, "%s(%zu further messages not shown)\n", prefix ? prefix : "", d->dropped);
}

const char *ct_diag_last(const ct_diag *d)
{
    if (!d || d->count == 0) return "";
    return d->msgs[d->count - 1].text;
}
