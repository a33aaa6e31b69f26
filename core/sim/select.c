/* select.c — selections: the vertices a scene's selector picks (ct_sim_select), and the check that
 * a selection means what the scene says (ct_sim_select_checked). */
#include "contactlab/ct_sim.h"

#include <math.h>
#include <stdlib.h>

#include "sim/select.h"

ct_status ct_sim_select(const ct_sim *sim, const ct_selector *sel, int on_q, int **idx, int *n)
{
    int dim = sim->dim;
    int b0 = sel->body < 0 ? 0 : sel->body, b1 = sel->body < 0 ? sim->nb : sel->body + 1;
    size_t cap = 0;
    for (int b = b0; b < b1; ++b) cap += (size_t)(on_q ? sim->bodies[b].nq : sim->bodies[b].nx);
    int *out = malloc((cap + 1) * sizeof *out);
    if (!out) return CT_ENOMEM;
    int cnt = 0;
    for (int b = b0; b < b1; ++b) {
        const ct_body *B = &sim->bodies[b];
        int off = on_q ? B->q_off : B->x_off, nv = on_q ? B->nq : B->nx;
        const double *P = on_q ? sim->Q : sim->X;
        double lo = INFINITY, hi = -INFINITY;
        if (sel->kind == CT_SEL_SIDE)
            for (int v = 0; v < nv; ++v) {
                double y = P[(size_t)(off + v) * dim + sel->axis];
                lo = fmin(lo, y);
                hi = fmax(hi, y);
            }
        double ext = hi - lo, tol = sel->tol * (ext > 0 ? ext : 1.0);
        for (int v = 0; v < nv; ++v) {
            const double *p = P + (size_t)(off + v) * dim;
            int take = 0;
            switch (sel->kind) {
            case CT_SEL_ALL: take = 1; break;
            case CT_SEL_SIDE:
                take = sel->sign > 0 ? p[sel->axis] >= hi - tol : p[sel->axis] <= lo + tol;
                break;
            case CT_SEL_BOX:
                take = 1;
                for (int c = 0; c < dim; ++c) take &= p[c] >= sel->lo[c] && p[c] <= sel->hi[c];
                break;
            case CT_SEL_INDICES:
                for (int k = 0; k < sel->nindices && !take; ++k) take = sel->indices[k] == v;
                break;
            }
            if (take) out[cnt++] = off + v;
        }
    }
    *idx = out;
    *n = cnt;
    return CT_OK;
}

/* A selection (at JSON pointer `where`, of `n` vertices found by ct_sim_select) that names a vertex
 * its body's mesh does not have (on_q: the unknowns' mesh, the coarse one of an embedded body), or
 * selects none without "allow_empty", is an input error. */
static ct_status check_selection(const ct_sim *s, const ct_selector *sel, int on_q, int n, const char *where,
                                 ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    if (sel->kind == CT_SEL_INDICES && sel->body >= 0) {
        const ct_body *B = &s->bodies[sel->body];
        int nv = on_q ? B->nq : B->nx;
        for (int k = 0; k < sel->nindices; ++k)
            if (sel->indices[k] >= nv)
                return ct_diag_add(diag, CT_EINPUT, "%s: %s/indices/%d: body \"%s\" has no vertex %d (%d vertices%s)",
                                   sc->path, where, k, B->name, sel->indices[k], nv,
                                   on_q && B->nq != B->nx ? " in its coarse mesh" : "");
    }
    if (n == 0 && !sel->allow_empty)
        return ct_diag_add(diag, CT_EINPUT, "%s: %s: selects no vertex (\"allow_empty\": true if that is meant)",
                           sc->path, where);
    return CT_OK;
}

ct_status ct_sim_select_checked(const ct_sim *s, const ct_selector *sel, int on_q, const char *where, int **idx,
                                int *n, ct_diag *diag)
{
    if (ct_sim_select(s, sel, on_q, idx, n) != CT_OK) return ct_diag_add(diag, CT_ENOMEM, "out of memory");
    ct_status st = check_selection(s, sel, on_q, *n, where, diag);
    if (st != CT_OK) {
        free(*idx);
        *idx = NULL;
    }
    return st;
}
