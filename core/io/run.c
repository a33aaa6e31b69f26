/* run.c — the run loop: steps, probes, frames and the HDF5 log. */
#include "contactlab/ct_run.h"

#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contactlab/ct_h5log.h"

#ifndef CT_VERSION
#define CT_VERSION "0.1.0"
#endif
#ifndef CT_GIT_DESCRIBE
#define CT_GIT_DESCRIBE "unknown"
#endif

const char *ct_version(void) { return CT_VERSION; }
const char *ct_git_describe(void) { return CT_GIT_DESCRIBE; }

/* ---------- probes ---------- */

static const char *probe_unit(const ct_probe_spec *p)
{
    switch (p->kind) {
    case CT_PROBE_MEAN_DISPLACEMENT:
    case CT_PROBE_MEAN_POSITION: return "m";
    case CT_PROBE_MEAN_VELOCITY: return "m/s";
    case CT_PROBE_FORCE:
    case CT_PROBE_SPRING_FORCE:
    case CT_PROBE_REACTION: return "N";
    case CT_PROBE_ENERGY: return "J";
    }
    return "";
}

static int probe_width(const ct_probe_spec *p, int dim)
{
    if (p->kind == CT_PROBE_ENERGY) return 1;
    return p->component == CT_COMPONENT_ALL ? dim : 1;
}

static void reduce_component(const double *v, int dim, int comp, double *out, int *n)
{
    if (comp == CT_COMPONENT_ALL) {
        for (int c = 0; c < dim; ++c) out[c] = v[c];
        *n = dim;
    } else if (comp == CT_COMPONENT_NORM) {
        double s = 0.0;
        for (int c = 0; c < dim; ++c) s += v[c] * v[c];
        out[0] = sqrt(s);
        *n = 1;
    } else {
        out[0] = v[comp];
        *n = 1;
    }
}

ct_status ct_probe_eval(ct_sim *s, const ct_probe_spec *p, const ct_force_report *fr, double *out, int *n)
{
    int dim = s->dim;
    double v[3] = {0, 0, 0};
    switch (p->kind) {
    case CT_PROBE_MEAN_DISPLACEMENT:
    case CT_PROBE_MEAN_POSITION:
    case CT_PROBE_MEAN_VELOCITY: {
        int *idx = NULL, m = 0;
        if (ct_sim_select(s, &p->sel, 0, &idx, &m) != CT_OK) return CT_ENOMEM;
        for (int i = 0; i < m; ++i) {
            size_t k = (size_t)idx[i] * dim;
            for (int c = 0; c < dim; ++c)
                v[c] += p->kind == CT_PROBE_MEAN_VELOCITY ? s->vx[k + c]
                      : p->kind == CT_PROBE_MEAN_POSITION ? s->x[k + c]
                                                          : s->x[k + c] - s->X[k + c];
        }
        for (int c = 0; c < dim; ++c) v[c] = m ? v[c] / m : NAN;
        free(idx);
        break;
    }
    case CT_PROBE_REACTION: ct_sim_reaction(s, &p->sel, v); break;
    case CT_PROBE_SPRING_FORCE: ct_sim_spring_force(s, p->spring, v); break;
    case CT_PROBE_FORCE:
        if (fr && fr->force) {
            const double *f = fr->force[((size_t)p->pair[0] * fr->np + p->pair[1]) * CT_FORCE_NCAT + p->category];
            for (int c = 0; c < dim; ++c) v[c] = f[c];
        }
        break;
    case CT_PROBE_ENERGY: {
        double E = 0.0;
        switch (p->energy) {
        case CT_ENERGY_KINETIC: E = ct_sim_kinetic_energy(s); break;
        case CT_ENERGY_ELASTIC: E = ct_sim_elastic_energy(s); break;
        case CT_ENERGY_GRAVITY: E = ct_sim_gravity_energy(s); break;
        case CT_ENERGY_EXTERNAL: E = ct_sim_external_energy(s); break;
        case CT_ENERGY_CONTACT: E = ct_sim_contact_energy(s); break;
        case CT_ENERGY_SPRING: E = ct_sim_spring_energy(s); break;
        case CT_ENERGY_TOTAL:
            E = ct_sim_kinetic_energy(s) + ct_sim_elastic_energy(s) + ct_sim_gravity_energy(s) +
                ct_sim_external_energy(s) + ct_sim_contact_energy(s) + ct_sim_spring_energy(s);
            break;
        }
        out[0] = E;
        *n = 1;
        return CT_OK;
    }
    }
    reduce_component(v, dim, p->component, out, n);
    return CT_OK;
}

/* ---------- the log ---------- */

/* /steps columns: name, unit, integer?, definition */
typedef struct {
    const char *name, *unit;
    int is_int;
    const char *def;
} step_col;

static const step_col step_cols[] = {
    {"time", "s", 0, "simulated time at the end of the step"},
    {"newton_iters", "", 1, "Newton iterations (linear solves)"},
    {"line_search_iters", "", 1, "backtracking halvings summed over the step"},
    {"line_search_doublings", "", 1, "doublings of whole Newton steps where E is flatter than its model"},
    {"friction_iters", "", 1, "outer lagged-state passes"},
    {"exact_iters", "", 1, "Newton iterations on the exact (unprojected) Hessian"},
    {"exact_fallbacks", "", 1, "exact Hessians found indefinite (the projected one used instead)"},
    {"corrections", "", 1, "Newton iterations that accepted the model's second-order correction of the trial"},
    {"ccd_alpha_min", "", 0, "smallest step fraction allowed by the model's max_step"},
    {"n_candidates", "", 1, "contact candidate pairs"},
    {"n_active", "", 1, "active contact pairs"},
    {"min_distance", "m", 0, "smallest contact distance (inf: none)"},
    {"energy", "J", 0, "incremental potential at the solution"},
    {"residual", "m/s", 0, "last Newton |p|_inf / h (static: m)"},
    {"force_residual", "", 0, "last Newton iterate's unbalanced force |r|_1 relative to the force scale"},
    {"force_scale", "N", 0, "force scale F of the force test: |f_ext| + |f_contact| + |M a| + reactions"},
    {"intersections", "", 1, "intersecting primitive pairs found by the verifier"},
    {"n_analyses", "", 1, "symbolic analyses so far"},
    {"wall_s", "s", 0, "wall-clock time of the step"},
    {"t_assembly", "s", 0, "core gradient and matrix gather (model calls and contact mapping excluded)"},
    {"t_projection", "s", 0, "element Hessians with PSD projection"},
    {"t_analysis", "s", 0, "CHOLMOD symbolic analysis"},
    {"t_factor", "s", 0, "CHOLMOD numeric factorization"},
    {"t_solve", "s", 0, "triangular solves"},
    {"t_line_search", "s", 0, "line search (its own energy evaluations; max_step and model calls excluded)"},
    {"t_contact", "s", 0, "model energy/gradient/Hessian/begin_step/update_lagged calls (wall time)"},
    {"t_ccd", "s", 0, "max_step: the model's CCD, broad phase included (wall time)"},
    {"t_contact_assembly", "s", 0, "mapping the model's Hessian into the Newton matrix (pattern growth included)"},
    {"t_broadphase", "s", 0, "the model's account of its broad phase (part of t_contact + t_ccd)"},
    {"t_pairs", "s", 0, "the model's account of its pair work: collision sets, energies, derivatives (part of t_contact)"},
    {"t_verify", "s", 0, "exact intersection verifier"},
};
#define NSTEPCOLS ((int)(sizeof step_cols / sizeof *step_cols))

typedef struct {
    ct_h5log *lg;
    int step_id[NSTEPCOLS];
    int *probe_id;
    int frame_t, frame_x, frame_v;
    /* the model's per-vertex contact fields in the frames (vf_filled: CT_VF_* written, 0: none) */
    unsigned vf_filled;
    int frame_force, frame_gap, frame_beta;
    ct_vertex_fields vf;
    double *force_row; /* nx*dim: a frame's contact forces as the dataset stores them */
    int *scalar_id;
    int nscalars;
} run_log;

static ct_status log_row_steps(run_log *L, const ct_sim *s)
{
    const ct_step_stats *S = &s->last;
    /* in the order of step_cols: the real columns in dv, the integer ones in iv */
    double dv[NSTEPCOLS] = {s->t, 0, 0, 0, 0, 0, 0, 0, S->ccd_alpha_min, 0, 0, S->min_distance, S->energy,
                            S->residual, S->force_residual, S->force_scale, 0, 0, S->wall, S->t_assembly,
                            S->t_projection, S->t_analysis, S->t_factor, S->t_solve, S->t_line_search,
                            S->t_contact, S->t_ccd, S->t_contact_assembly, S->t_broadphase, S->t_model,
                            S->t_verify};
    long iv[NSTEPCOLS] = {0, S->newton_iters, S->line_search_iters, S->line_search_doublings, S->friction_iters, S->exact_iters,
                          S->exact_fallbacks, S->corrections, 0, S->n_candidates, S->n_active, 0, 0, 0, 0, 0,
                          S->intersections, S->n_analyses};
    for (int i = 0; i < NSTEPCOLS; ++i) {
        ct_status st;
        if (step_cols[i].is_int) {
            int v = (int)iv[i];
            st = ct_h5log_append(L->lg, L->step_id[i], &v);
        } else {
            st = ct_h5log_append(L->lg, L->step_id[i], &dv[i]);
        }
        if (st != CT_OK) return st;
    }
    return CT_OK;
}

static char *utc_now(void)
{
    static char buf[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

static ct_status write_mesh(run_log *L, const ct_sim *s)
{
    int dim = s->dim;
    size_t d2[2] = {(size_t)s->nx, (size_t)dim};
    ct_status st = ct_h5log_write(L->lg, "/mesh/X", CT_H5_DOUBLE, 2, d2, s->X);
    if (st == CT_OK) st = ct_h5log_write(L->lg, "/mesh/vertex_body", CT_H5_INT, 1, d2, s->xv_body);
    if (st == CT_OK) st = ct_h5log_write(L->lg, "/mesh/mass", CT_H5_DOUBLE, 1, d2, s->mass_x);
    /* elements of every body in global x numbering */
    size_t ne = 0;
    for (int b = 0; b < s->nb; ++b) ne += (size_t)s->bodies[b].mesh.ne;
    if (st == CT_OK && ne > 0) {
        int *E = malloc(ne * (size_t)(dim + 1) * sizeof *E);
        if (!E) return CT_ENOMEM;
        size_t k = 0;
        for (int b = 0; b < s->nb; ++b)
            for (int e = 0; e < s->bodies[b].mesh.ne * (dim + 1); ++e)
                E[k++] = s->bodies[b].mesh.elem[e] + s->bodies[b].x_off;
        size_t de[2] = {ne, (size_t)dim + 1};
        st = ct_h5log_write(L->lg, "/mesh/elements", CT_H5_INT, 2, de, E);
        free(E);
    }
    if (st == CT_OK && s->surf.nf > 0) {
        size_t df[2] = {(size_t)s->surf.nf, 3};
        st = ct_h5log_write(L->lg, "/mesh/surface_faces", CT_H5_INT, 2, df, s->surf.faces);
    }
    if (st == CT_OK && s->surf.ned > 0) {
        size_t de[2] = {(size_t)s->surf.ned, 2};
        st = ct_h5log_write(L->lg, "/mesh/surface_edges", CT_H5_INT, 2, de, s->surf.edges);
    }
    if (st == CT_OK && !s->dofs.identity) {
        size_t dq[2] = {(size_t)s->nq, (size_t)dim};
        st = ct_h5log_write(L->lg, "/mesh/Q", CT_H5_DOUBLE, 2, dq, s->Q);
    }
    return st;
}

static ct_status open_log(run_log *L, ct_sim *s, const char *path, const ct_run_opts *o, ct_force_report *fr,
                          ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    ct_status st = ct_h5log_open(&L->lg, path, diag);
    if (st != CT_OK) return st;
    ct_h5log *lg = L->lg;
#define TRY(x)                                                                           \
    do {                                                                                 \
        if ((st = (x)) != CT_OK) {                                                       \
            if (ct_diag_status(diag) == CT_OK) ct_diag_add(diag, st, "%s: cannot write the log", path); \
            return st;                                                                   \
        }                                                                                \
    } while (0)
    TRY(ct_h5log_attr_str(lg, "/", "contactlab_version", CT_VERSION));
    TRY(ct_h5log_attr_str(lg, "/", "git_describe", CT_GIT_DESCRIBE));
    TRY(ct_h5log_attr_str(lg, "/", "model", ct_model_name(s->model)));
    TRY(ct_h5log_attr_int(lg, "/", "dim", s->dim));
    TRY(ct_h5log_attr_str(lg, "/", "scene_json", sc->resolved_json ? sc->resolved_json : "{}"));
    TRY(ct_h5log_attr_str(lg, "/", "scene_file", sc->path ? sc->path : ""));
    TRY(ct_h5log_attr_str(lg, "/", "created_utc", utc_now()));
    TRY(ct_h5log_attr_int(lg, "/", "threads", omp_get_max_threads()));
    /* the threading environment the libraries started with (ct_cli_safe_threads sets it for the CLI) */
    const char *wp = getenv("OMP_WAIT_POLICY"), *bt = getenv("OPENBLAS_NUM_THREADS");
    TRY(ct_h5log_attr_str(lg, "/", "omp_wait_policy", wp ? wp : ""));
    TRY(ct_h5log_attr_str(lg, "/", "openblas_num_threads", bt ? bt : ""));
    TRY(ct_h5log_attr_double(lg, "/", "dt", sc->dt));
    if (o->argv_line) TRY(ct_h5log_attr_str(lg, "/", "command", o->argv_line));
    if (sc->init_file) { /* a restart: where it starts, and the offset of its clock */
        TRY(ct_h5log_attr_str(lg, "/", "initial_state_file", sc->init_file));
        TRY(ct_h5log_attr_int(lg, "/", "initial_state_frame", sc->init_frame_index));
        TRY(ct_h5log_attr_double(lg, "/", "time_offset", sc->init_time));
    }
    TRY(write_mesh(L, s));
    for (int i = 0; i < NSTEPCOLS; ++i) {
        char p[128];
        snprintf(p, sizeof p, "/steps/%s", step_cols[i].name);
        TRY(ct_h5log_series(lg, p, step_cols[i].is_int ? CT_H5_INT : CT_H5_DOUBLE, 0, NULL, step_cols[i].unit,
                            step_cols[i].def, &L->step_id[i]));
    }
    L->probe_id = calloc((size_t)sc->nprobes + 1, sizeof *L->probe_id);
    if (!L->probe_id) return CT_ENOMEM;
    for (int i = 0; i < sc->nprobes; ++i) {
        const ct_probe_spec *p = &sc->probes[i];
        char path_[256];
        snprintf(path_, sizeof path_, "/probes/%s", p->name);
        size_t w = (size_t)probe_width(p, s->dim);
        char def[256];
        static const char *const kinds[] = {"mean_displacement", "mean_position", "mean_velocity",
                                            "force", "reaction", "energy", "spring_force"};
        snprintf(def, sizeof def, "%s%s%s", kinds[p->kind],
                 p->kind == CT_PROBE_FORCE || p->kind == CT_PROBE_SPRING_FORCE ? " " : "",
                 p->kind == CT_PROBE_FORCE ? ct_force_category_name(p->category)
                 : p->kind == CT_PROBE_SPRING_FORCE ? sc->springs[p->spring].name : "");
        TRY(ct_h5log_series(lg, path_, CT_H5_DOUBLE, w > 1 ? 1 : 0, &w, probe_unit(p), def, &L->probe_id[i]));
    }
    /* model parameters and model scalars */
    char mg[128];
    snprintf(mg, sizeof mg, "/model/%s", ct_model_name(s->model));
    TRY(ct_h5log_attr_str(lg, "/", "model_group", mg));
    TRY(ct_h5log_attr_str(lg, mg, "family", ct_model_family_name(s->model->type->family)));
    /* the parameters as the model runs with them: "auto" ones resolved to numbers by its init,
     * their names listed in the attribute "auto" */
    const ct_params *prm = &s->model->params;
    char autos[256] = "";
    for (int i = 0; i < prm->n; ++i) {
        const ct_param_spec *ps = &prm->spec[i];
        if (prm->is_auto[i])
            snprintf(autos + strlen(autos), sizeof autos - strlen(autos), "%s%s", autos[0] ? "," : "", ps->name);
        if (ps->type == CT_PARAM_CHOICE) TRY(ct_h5log_attr_str(lg, mg, ps->name, ps->choices[(int)prm->value[i]]));
        else TRY(ct_h5log_attr_double(lg, mg, ps->name, prm->value[i]));
    }
    if (autos[0]) TRY(ct_h5log_attr_str(lg, mg, "auto", autos));
    L->nscalars = fr->nscalars;
    L->scalar_id = calloc((size_t)fr->nscalars + 1, sizeof *L->scalar_id);
    if (!L->scalar_id) return CT_ENOMEM;
    for (int i = 0; i < fr->nscalars; ++i) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", mg, fr->scalar_names[i] ? fr->scalar_names[i] : "scalar");
        TRY(ct_h5log_series(lg, p, CT_H5_DOUBLE, 0, NULL, NULL, NULL, &L->scalar_id[i]));
    }
    if (sc->frames_every > 0) {
        size_t fd[2] = {(size_t)s->nx, (size_t)s->dim};
        TRY(ct_h5log_set_deflate(lg, sc->frames_compress));
        TRY(ct_h5log_series(lg, "/frames/time", CT_H5_DOUBLE, 0, NULL, "s", "time of each frame", &L->frame_t));
        TRY(ct_h5log_series(lg, "/frames/x", CT_H5_DOUBLE, 2, fd, "m", "vertex positions", &L->frame_x));
        TRY(ct_h5log_series(lg, "/frames/v", CT_H5_DOUBLE, 2, fd, "m/s", "vertex velocities", &L->frame_v));
        /* the model's per-vertex contact fields: a first call tells which it has (the same at every call) */
        L->force_row = malloc((fd[0] * fd[1] + 1) * sizeof *L->force_row);
        if (!L->force_row || ct_vertex_fields_init(&L->vf, s->nx) != CT_OK)
            return ct_diag_add(diag, CT_ENOMEM, "out of memory");
        if ((st = ct_model_vertex_fields(s->model, &s->ctx, s->x, &L->vf)) != CT_OK)
            return ct_diag_add(diag, st, "model %s: per-vertex contact fields failed", ct_model_name(s->model));
        L->vf_filled = L->vf.filled;
        if (L->vf_filled & CT_VF_FORCE)
            TRY(ct_h5log_series(lg, "/frames/contact_force", CT_H5_DOUBLE, 2, fd, "N",
                                "contact force on each vertex: -dE_contact/dx (energy models: barrier, adhesion, "
                                "friction) or the last step's contact impulse / h (constraint models)",
                                &L->frame_force));
        if (L->vf_filled & CT_VF_GAP)
            TRY(ct_h5log_series(lg, "/frames/gap", CT_H5_DOUBLE, 1, fd, "m",
                                "smallest contact distance of each vertex's active contact terms (NaN: none)",
                                &L->frame_gap));
        if (L->vf_filled & CT_VF_BETA)
            TRY(ct_h5log_series(lg, "/frames/beta", CT_H5_DOUBLE, 1, fd, "1",
                                "adhesion intensity beta of each vertex's bonds, the largest of its pairs (0: none)",
                                &L->frame_beta));
        TRY(ct_h5log_set_deflate(lg, 0));
    }
    TRY(ct_h5log_start(lg));
#undef TRY
    return CT_OK;
}

static ct_status log_probes(run_log *L, ct_sim *s, ct_force_report *fr)
{
    const ct_scene *sc = s->sc;
    if (s->model->type->forces) {
        ct_force_report_zero(fr);
        ct_status st = ct_model_forces(s->model, &s->ctx, s->x, fr);
        if (st != CT_OK) return st;
    }
    for (int i = 0; i < sc->nprobes; ++i) {
        double v[3];
        int n = 0;
        ct_status st = ct_probe_eval(s, &sc->probes[i], fr, v, &n);
        if (st == CT_OK) st = ct_h5log_append(L->lg, L->probe_id[i], v);
        if (st != CT_OK) return st;
    }
    for (int i = 0; i < L->nscalars; ++i) {
        ct_status st = ct_h5log_append(L->lg, L->scalar_id[i], &fr->scalars[i]);
        if (st != CT_OK) return st;
    }
    return CT_OK;
}

/* The model's per-vertex contact fields at the frame's x, appended to their series. */
static ct_status log_vertex_fields(run_log *L, ct_sim *s, ct_diag *diag)
{
    ct_status st = ct_model_vertex_fields(s->model, &s->ctx, s->x, &L->vf);
    if (st != CT_OK)
        return ct_diag_add(diag, st, "step %d: model %s: per-vertex contact fields failed", s->step,
                           ct_model_name(s->model));
    if (L->vf.filled != L->vf_filled)
        return ct_diag_add(diag, CT_EINPUT, "step %d: model %s: per-vertex contact fields %#x, at the start %#x",
                           s->step, ct_model_name(s->model), L->vf.filled, L->vf_filled);
    if (L->vf_filled & CT_VF_FORCE) {
        for (int v = 0; v < s->nx; ++v)
            for (int k = 0; k < s->dim; ++k) L->force_row[(size_t)v * s->dim + k] = L->vf.force[v][k];
        st = ct_h5log_append(L->lg, L->frame_force, L->force_row);
    }
    if (st == CT_OK && (L->vf_filled & CT_VF_GAP)) st = ct_h5log_append(L->lg, L->frame_gap, L->vf.gap);
    if (st == CT_OK && (L->vf_filled & CT_VF_BETA)) st = ct_h5log_append(L->lg, L->frame_beta, L->vf.beta);
    return st;
}

static ct_status log_frame(run_log *L, ct_sim *s, ct_diag *diag)
{
    ct_status st = ct_h5log_append(L->lg, L->frame_t, &s->t);
    if (st == CT_OK) st = ct_h5log_append(L->lg, L->frame_x, s->x);
    if (st == CT_OK) st = ct_h5log_append(L->lg, L->frame_v, s->vx);
    if (st == CT_OK && L->vf_filled) st = log_vertex_fields(L, s, diag);
    return st;
}

static volatile sig_atomic_t stop_code = 0;

void ct_run_request_stop(int code) { stop_code = code ? code : -1; }

int ct_run_stop_requested(void) { return stop_code; }

const char *ct_run_output_path(const ct_scene *sc, const char *output, char *buf, size_t size)
{
    if (output) return output;
    if (sc->output_file) return sc->output_file;
    snprintf(buf, size, "%s.h5", sc->name ? sc->name : "run");
    return buf;
}

ct_status ct_run(ct_sim *s, const ct_run_opts *o, ct_diag *diag)
{
    const ct_scene *sc = s->sc;
    char defpath[512];
    const char *path = ct_run_output_path(sc, o->output, defpath, sizeof defpath);
    ct_force_report fr;
    enum { MODEL_SCALARS_MAX = 32 }; /* capacity of a model's scalars (rcc_ipc: 22) */
    ct_status st = ct_force_report_init(&fr, s->nb + sc->nobstacles, MODEL_SCALARS_MAX);
    if (st != CT_OK) return ct_diag_add(diag, st, "out of memory");
    fr.nscalars = 0;
    if (s->model->type->forces) { /* a first call tells which model scalars exist */
        fr.nscalars = MODEL_SCALARS_MAX;
        st = ct_model_forces(s->model, &s->ctx, s->x, &fr);
        if (st != CT_OK) {
            ct_force_report_free(&fr);
            return ct_diag_add(diag, st, "model %s: forces failed", ct_model_name(s->model));
        }
    }
    run_log L;
    memset(&L, 0, sizeof L);
    st = open_log(&L, s, path, o, &fr, diag);
    int nsteps = o->max_steps > 0 && o->max_steps < s->nsteps ? o->max_steps : s->nsteps;
    const double every = o->progress_every > 0.0 ? o->progress_every : CT_RUN_PROGRESS_EVERY;
    double t0 = omp_get_wtime(), t_next = every;
    if (st == CT_OK && sc->frames_every > 0) st = log_frame(&L, s, diag);
    for (int k = 0; st == CT_OK && k < nsteps && !stop_code; ++k) {
        st = ct_sim_step(s, diag);
        ct_status st2 = log_row_steps(&L, s);
        if (st2 == CT_OK) st2 = log_probes(&L, s, &fr);
        if (st2 == CT_OK && sc->frames_every > 0 && (s->step % sc->frames_every == 0)) st2 = log_frame(&L, s, diag);
        if (st2 == CT_OK && (s->step % sc->flush_every == 0)) st2 = ct_h5log_flush(L.lg);
        if (st == CT_OK && st2 != CT_OK) st = ct_diag_add(diag, st2, "%s: cannot append to the log", path);
        const double el = omp_get_wtime() - t0, eta = el / (k + 1) * (nsteps - k - 1);
        if (o->progress == 1) {
            fprintf(stderr, "\rstep %d/%d  t = %.4g s  newton %d  %.1f s elapsed, ETA %.0f s   ", k + 1, nsteps,
                    s->t, s->last.newton_iters, el, eta);
            fflush(stderr);
        } else if (o->progress == 2 && el >= t_next) { /* batch logs: a whole line now and then */
            fprintf(stderr, "%s: step %d/%d  t = %.4g s  newton %d  %.0f s elapsed, ETA %.0f s\n", path, k + 1, nsteps,
                    s->t, s->last.newton_iters, el, eta);
            fflush(stderr);
            while (t_next <= el) t_next += every;
        }
    }
    if (o->progress == 1) fputc('\n', stderr);
    /* stopped from outside: the state reached is the last frame, the start of a continuation */
    if (st == CT_OK && stop_code && sc->frames_every > 0 && s->step % sc->frames_every != 0) {
        st = log_frame(&L, s, diag);
        if (st != CT_OK) st = ct_diag_add(diag, st, "%s: cannot append the last frame", path);
    }
    ct_status stc = ct_h5log_close(L.lg);
    if (st == CT_OK && stc != CT_OK) st = ct_diag_add(diag, stc, "%s: cannot close the log", path);
    free(L.probe_id);
    free(L.scalar_id);
    free(L.force_row);
    ct_vertex_fields_free(&L.vf);
    ct_force_report_free(&fr);
    return st;
}
