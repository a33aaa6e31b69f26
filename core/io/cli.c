/* cli.c — `contactlab run | check | sensitivity | models | schema | export | fclib`. */
#include "contactlab/ct_cli.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "contactlab/ct_fclib.h"
#include "contactlab/ct_h5log.h"
#include "contactlab/ct_run.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sensitivity.h"
#include "contactlab/ct_sim.h"
#include "contactlab/ct_vtk.h"
#include "io/scene_schema.h"

static void usage(FILE *f)
{
    fputs("usage:\n"
          "  contactlab run SCENE.json [-o OUT.h5] [--set key.path=value]... [--threads N] [--steps N] [--quiet]\n"
          "                 [--force]                               (--force: overwrite OUT.h5 if it exists)\n"
          "  contactlab check SCENE.json [--set key.path=value]...   validate and print the resolved scene\n"
          "  contactlab sensitivity SCENE.json --param PATH [--param PATH]... [-o OUT.h5] [--set key.path=value]...\n"
          "                   [--threads N] [--refactor] [--quiet] [--force]  dx/dθ of the static equilibrium at the end\n"
          "                                                           (PATH: bodies.B.fixed.F.motion.S.velocity.C | ...\n"
          "                                                           angular_velocity | center.C, bodies.B.loads.L.force.C |\n"
          "                                                           force_rate.C, gravity.C)\n"
          "  contactlab models                                        every model, its parameters, defaults, units\n"
          "  contactlab schema                                        the scene format as a JSON Schema (docs/scenes.md)\n"
          "  contactlab export OUT.h5 DATASET... [--csv]              columns for gnuplot (or CSV)\n"
          "  contactlab export --vtk OUT.h5 DIR                       the frames as VTK files + DIR/run.pvd (ParaView)\n"
          "  contactlab fclib FILE.hdf5 [--law disk|box] [--tol T] [--max-iter N] [--omega W] [--shuffle]\n"
          "                   [--seed S] [--every K] [--out FILE]     an FCLIB local problem solved by block PGS\n"
          "  contactlab --version | --help\n"
          "exit status: 0 ok, 1 run failed (fclib: not converged), 2 bad input\n",
          f);
}

static int finish(ct_diag *d, ct_status st)
{
    ct_diag_print(d, stderr, "contactlab: ");
    ct_diag_free(d);
    return ct_status_exit_code(st);
}

/* Shared by run and check: parse options, load the scene, build the simulation. */
typedef struct {
    const char *scene, *out;
    const char **sets;
    int nsets, threads, quiet, steps, force;
} cli_opts;

static int parse_opts(int argc, char **argv, int allow_run_opts, cli_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threads = -1;
    o->sets = calloc((size_t)argc + 1, sizeof *o->sets);
    if (!o->sets) return 2;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i];
        if (strcmp(a, "--set") == 0 && i + 1 < argc) o->sets[o->nsets++] = argv[++i];
        else if (strncmp(a, "--set=", 6) == 0) o->sets[o->nsets++] = a + 6;
        else if (allow_run_opts && strcmp(a, "-o") == 0 && i + 1 < argc) o->out = argv[++i];
        else if (allow_run_opts && strcmp(a, "--threads") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 0 || v > 4096) {
                fprintf(stderr, "contactlab: --threads: expected a non-negative integer (got '%s')\n", argv[i]);
                return 2;
            }
            o->threads = (int)v;
        } else if (allow_run_opts && strcmp(a, "--steps") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1) {
                fprintf(stderr, "contactlab: --steps: expected a positive integer (got '%s')\n", argv[i]);
                return 2;
            }
            o->steps = (int)v;
        } else if (allow_run_opts && strcmp(a, "--quiet") == 0) o->quiet = 1;
        else if (allow_run_opts && strcmp(a, "--force") == 0) o->force = 1;
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "contactlab: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!o->scene) o->scene = a;
        else {
            fprintf(stderr, "contactlab: unexpected argument '%s'\n", a);
            return 2;
        }
    }
    if (!o->scene) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* An output file that exists is kept unless the command says --force (or the environment
 * CT_OVERWRITE=1, which scripts that own their output folder set: experiments/common.sh). */
static ct_status check_overwrite(const char *path, int force, ct_diag *d)
{
    const char *env = getenv("CT_OVERWRITE");
    if (force || (env && strcmp(env, "1") == 0) || access(path, F_OK) != 0) return CT_OK;
    return ct_diag_add(d, CT_EINPUT, "%s exists: --force overwrites it (or choose another -o)", path);
}

/* The output file's folder must exist and be writable: for run an input error naming where the path
 * came from (-o, the scene's /output/file, or the default name), for check a warning (the run may
 * happen in another working directory). */
static ct_status check_output_dir(const char *path, const char *scene, const char *from_o, int run, ct_diag *d)
{
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == path) snprintf(dir, sizeof dir, "/");
    else snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    struct stat sb;
    const char *why = stat(dir, &sb) != 0 ? strerror(errno) : !S_ISDIR(sb.st_mode) ? "not a directory"
                    : access(dir, W_OK | X_OK) != 0 ? strerror(errno) : NULL;
    if (!why) return CT_OK;
    char where[4200];
    if (from_o) snprintf(where, sizeof where, "-o %s", path);
    else snprintf(where, sizeof where, "%s: /output/file", scene);
    if (!run)
        return ct_diag_add(d, CT_OK, "warning: %s: the folder \"%s\" of the output file: %s (a run from this "
                           "directory would stop there)", where, dir, why);
    return ct_diag_add(d, CT_EINPUT, "%s: cannot write the output file in \"%s\": %s", where, dir, why);
}

/* SIGINT / SIGTERM during a run: the first asks ct_run to stop after the step in progress and close
 * the file (ct_run_request_stop); a second one ends the program at once (the file keeps its flushed
 * steps, readable as a SWMR reader). */
static void on_stop_signal(int sig)
{
    if (ct_run_stop_requested()) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    ct_run_request_stop(sig);
}

static void catch_stop_signals(int on)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on ? on_stop_signal : SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

static int cmd_run_or_check(int argc, char **argv, int run)
{
    cli_opts o;
    int rc = parse_opts(argc, argv, run, &o);
    if (rc) {
        free(o.sets);
        return rc;
    }
    ct_diag d;
    ct_diag_init(&d);
    ct_scene sc;
    ct_scene_init(&sc);
    ct_status st = ct_scene_load(&sc, o.scene, o.sets, o.nsets, &d);
    ct_sim *sim = NULL;
    char defpath[512];
    const char *outpath = st == CT_OK ? ct_run_output_path(&sc, o.out, defpath, sizeof defpath) : NULL;
    if (st == CT_OK && (run || sc.output_file)) st = check_output_dir(outpath, o.scene, o.out, run, &d);
    if (st == CT_OK && run) st = check_overwrite(outpath, o.force, &d);
    int sig = 0; /* the signal that stopped the run */
    if (st == CT_OK) {
        int threads = o.threads >= 0 ? o.threads : sc.solver.threads;
        if (threads > 0) omp_set_num_threads(threads);
        st = ct_sim_create(&sim, &sc, &d);
    }
    if (st == CT_OK && !run) {
        fputs(sc.resolved_json, stdout);
        fputc('\n', stdout);
        fprintf(stderr, "contactlab: %s: ok (%d bodies, %d vertices, %d unknowns, %d steps)\n", o.scene, sim->nb,
                sim->nx, sim->ndof, sim->nsteps);
    }
    if (st == CT_OK && run) {
        char line[1024] = "contactlab run";
        for (int i = 0; i < argc; ++i) {
            strncat(line, " ", sizeof line - strlen(line) - 1);
            strncat(line, argv[i], sizeof line - strlen(line) - 1);
        }
        /* the set-up's notes and warnings now, before step 1, not after the run */
        if (ct_diag_count(&d) > 0 && ct_diag_status(&d) == CT_OK) {
            ct_diag_print(&d, stderr, "contactlab: ");
            fflush(stderr);
            ct_diag_clear(&d);
        }
        const char *pe = getenv("CT_PROGRESS_EVERY");
        ct_run_opts ro = {.output = o.out,
                          .progress = o.quiet ? 0 : isatty(STDERR_FILENO) ? 1 : 2,
                          .max_steps = o.steps,
                          .argv_line = line,
                          .progress_every = pe ? atof(pe) : 0.0};
        catch_stop_signals(1);
        st = ct_run(sim, &ro, &d);
        catch_stop_signals(0);
        sig = st == CT_OK && ct_run_stop_requested() > 0 ? ct_run_stop_requested() : 0;
        if (sig)
            fprintf(stderr, "contactlab: interrupted by %s at step %d (t = %g s); output closed: %s\n",
                    sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal", sim->step, sim->t, outpath);
        else if (st == CT_OK && !o.quiet)
            fprintf(stderr, "contactlab: %s: %d steps done, t = %g s\n", o.scene, sim->step, sim->t);
    }
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    free(o.sets);
    rc = finish(&d, st != CT_OK ? st : ct_diag_status(&d));
    return sig ? 128 + sig : rc;
}

/* ---- sensitivity: dx/dθ of the static equilibrium at the end of a scene (ct_sensitivity.h) ---- */

/* The value (as the run logs it, ct_probe_eval) and the derivative along dx of a position probe
 * (mean_displacement, mean_position: both linear in x); *n = 0 for probes that are not (forces,
 * reactions, energies, velocities). */
static ct_status probe_derivative(ct_sim *s, const ct_probe_spec *p, const double *dx, double *val, double *der,
                                  int *n)
{
    const int dim = s->dim;
    *n = 0;
    if (p->kind != CT_PROBE_MEAN_DISPLACEMENT && p->kind != CT_PROBE_MEAN_POSITION) return CT_OK;
    ct_status st = ct_probe_eval(s, p, NULL, val, n);
    if (st != CT_OK) return st;
    int *idx = NULL, m = 0;
    if (ct_sim_select(s, &p->sel, 0, &idx, &m) != CT_OK) return CT_ENOMEM;
    double d[3] = {0, 0, 0};
    for (int i = 0; i < m; ++i)
        for (int c = 0; c < dim; ++c) d[c] += dx[(size_t)idx[i] * dim + c];
    free(idx);
    for (int c = 0; c < dim; ++c) d[c] = m ? d[c] / m : NAN;
    if (p->component == CT_COMPONENT_ALL) {
        for (int c = 0; c < dim; ++c) der[c] = d[c];
    } else if (p->component == CT_COMPONENT_NORM) { /* d|v| = v·d/|v|, v the probe's vector */
        ct_probe_spec pv = *p;
        pv.component = CT_COMPONENT_ALL;
        double v[3] = {0, 0, 0}, vd = 0.0;
        int nv = 0;
        if ((st = ct_probe_eval(s, &pv, NULL, v, &nv)) != CT_OK) return st;
        for (int c = 0; c < dim; ++c) vd += v[c] * d[c];
        der[0] = val[0] > 0.0 ? vd / val[0] : NAN;
    } else {
        der[0] = d[p->component];
    }
    return CT_OK;
}

static ct_status write_sensitivity(const char *path, ct_sim *s, const char *const *params, int np,
                                   const double *dx, const ct_sens_info *info, const char *argv_line, ct_diag *d)
{
    const int dim = s->dim;
    const size_t nxd = (size_t)s->nx * dim;
    ct_h5log *lg = NULL;
    ct_status st = ct_h5log_open(&lg, path, d);
    if (st != CT_OK) return st;
    size_t d2[2] = {(size_t)s->nx, (size_t)dim}, d3[3] = {(size_t)np, (size_t)s->nx, (size_t)dim};
    if (st == CT_OK) st = ct_h5log_attr_str(lg, "/", "scene_json", s->sc->resolved_json ? s->sc->resolved_json : "{}");
    if (st == CT_OK) st = ct_h5log_attr_str(lg, "/", "model", ct_model_name(s->model));
    if (st == CT_OK) st = ct_h5log_attr_int(lg, "/", "dim", dim);
    if (st == CT_OK && argv_line) st = ct_h5log_attr_str(lg, "/", "command", argv_line);
    if (st == CT_OK) st = ct_h5log_write(lg, "/mesh/X", CT_H5_DOUBLE, 2, d2, s->X);
    if (st == CT_OK) st = ct_h5log_write(lg, "/mesh/vertex_body", CT_H5_INT, 1, d2, s->xv_body);
    if (st == CT_OK) st = ct_h5log_write(lg, "/state/x", CT_H5_DOUBLE, 2, d2, s->x);
    if (st == CT_OK) st = ct_h5log_attr_double(lg, "/state/x", "time", s->t);
    if (st == CT_OK) st = ct_h5log_write(lg, "/sensitivity/dx", CT_H5_DOUBLE, 3, d3, dx);
    if (st == CT_OK)
        st = ct_h5log_attr_str(lg, "/sensitivity/dx", "definition",
                               "dx/dθ of the equilibrium positions, one (vertices x dim) slice per parameter");
    if (st == CT_OK) st = ct_h5log_attr_int(lg, "/sensitivity", "nparam", np);
    for (int k = 0; k < np && st == CT_OK; ++k) {
        char name[32];
        snprintf(name, sizeof name, "param_%d", k);
        st = ct_h5log_attr_str(lg, "/sensitivity", name, params[k]);
    }
    if (st == CT_OK) st = ct_h5log_attr_int(lg, "/sensitivity", "reused_factor", info->reused_factor);
    if (st == CT_OK) st = ct_h5log_attr_double(lg, "/sensitivity", "force_residual", info->force_residual);
    for (int i = 0; i < s->sc->nprobes && st == CT_OK; ++i) {
        const ct_probe_spec *p = &s->sc->probes[i];
        double *rows = malloc(((size_t)np * 3 + 1) * sizeof *rows);
        if (!rows) {
            st = CT_ENOMEM;
            break;
        }
        int n = 0;
        for (int k = 0; k < np && st == CT_OK; ++k) {
            double val[3], der[3];
            st = probe_derivative(s, p, dx + nxd * k, val, der, &n);
            for (int c = 0; c < n; ++c) rows[(size_t)k * n + c] = der[c];
        }
        if (st == CT_OK && n > 0) {
            char dp[256];
            snprintf(dp, sizeof dp, "/sensitivity/probes/%s", p->name);
            size_t dd[2] = {(size_t)np, (size_t)n};
            st = ct_h5log_write(lg, dp, CT_H5_DOUBLE, 2, dd, rows);
        }
        free(rows);
    }
    if (st != CT_OK && ct_diag_status(d) == CT_OK) ct_diag_add(d, st, "%s: cannot write the sensitivities", path);
    ct_status stc = ct_h5log_close(lg);
    if (st == CT_OK && stc != CT_OK) st = ct_diag_add(d, stc, "%s: cannot close the file", path);
    return st;
}

static int cmd_sensitivity(int argc, char **argv)
{
    /* --param and --refactor first; the rest are run's options */
    const char **params = calloc((size_t)argc + 1, sizeof *params);
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int np = 0, nrest = 0, refactor = 0;
    if (!params || !rest) {
        free(params);
        free(rest);
        return 1;
    }
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "--param") == 0 && i + 1 < argc) params[np++] = argv[++i];
        else if (strncmp(argv[i], "--param=", 8) == 0) params[np++] = argv[i] + 8;
        else if (strcmp(argv[i], "--refactor") == 0) refactor = 1;
        else rest[nrest++] = argv[i];
    }
    cli_opts o;
    int rc = parse_opts(nrest, rest, 1, &o);
    if (rc == 0 && np == 0) {
        fprintf(stderr, "contactlab: sensitivity: give at least one --param PATH\n");
        usage(stderr);
        rc = 2;
    }
    if (rc == 0 && o.steps) {
        fprintf(stderr, "contactlab: sensitivity: --steps is not an option here (the scene runs to its end)\n");
        rc = 2;
    }
    if (rc) {
        free(o.sets);
        free(params);
        free(rest);
        return rc;
    }
    ct_diag d;
    ct_diag_init(&d);
    ct_scene sc;
    ct_scene_init(&sc);
    ct_sim *sim = NULL;
    double *dqf = NULL, *dfe = NULL, *dq = NULL, *dx = NULL;
    ct_status st = ct_scene_load(&sc, o.scene, o.sets, o.nsets, &d);
    if (st == CT_OK && o.out) st = check_overwrite(o.out, o.force, &d);
    if (st == CT_OK && sc.integrator != CT_INTEGRATOR_STATIC)
        st = ct_diag_add(&d, CT_EINPUT, "%s: /time/integrator: sensitivities are those of a static equilibrium "
                         "(\"integrator\": \"static\")", o.scene);
    if (st == CT_OK) {
        int threads = o.threads >= 0 ? o.threads : sc.solver.threads;
        if (threads > 0) omp_set_num_threads(threads);
        st = ct_sim_create(&sim, &sc, &d);
    }
    size_t nqd = 0, nxd = 0;
    if (st == CT_OK) {
        nqd = (size_t)sim->ndof, nxd = (size_t)sim->nx * sim->dim;
        dqf = calloc(nqd * np + 1, sizeof *dqf);
        dfe = calloc(nxd * np + 1, sizeof *dfe);
        dq = calloc(nqd * np + 1, sizeof *dq);
        dx = calloc(nxd * np + 1, sizeof *dx);
        if (!dqf || !dfe || !dq || !dx) st = ct_diag_add(&d, CT_ENOMEM, "out of memory");
    }
    ct_sens_kind *kinds = calloc((size_t)np + 1, sizeof *kinds);
    if (!kinds && st == CT_OK) st = ct_diag_add(&d, CT_ENOMEM, "out of memory");
    /* every path checked before the run (bad input exits 2 at once) */
    for (int k = 0; st == CT_OK && k < np; ++k) {
        ct_status sk = ct_sensitivity_param(sim, params[k], NULL, NULL, &kinds[k], &d);
        if (sk != CT_OK) st = sk;
        for (int j = k + 1; sk == CT_OK && j < np; ++j)
            if (strcmp(params[j], params[k]) == 0) st = ct_diag_add(&d, CT_EINPUT, "--param %s given twice", params[k]);
    }
    for (int k = 0; st == CT_OK && k < sim->nsteps; ++k) st = ct_sim_step(sim, &d);
    for (int k = 0; st == CT_OK && k < np; ++k)
        st = ct_sensitivity_param(sim, params[k], dqf + nqd * k, dfe + nxd * k, &kinds[k], &d);
    ct_sens_info info;
    memset(&info, 0, sizeof info);
    if (st == CT_OK) st = ct_sensitivity_solve(sim, np, dqf, dfe, refactor ? CT_SENS_REFACTOR : 0, dq, &info, &d);
    if (st == CT_OK) {
        for (int k = 0; k < np; ++k) ct_dofs_map_lin(&sim->dofs, dq + nqd * k, dx + nxd * k);
        printf("# contactlab sensitivity %s: t = %g s after %d steps, %d free dofs, model %s\n", o.scene, sim->t,
               sim->step, info.nfree, ct_model_name(sim->model));
        printf("# exact Hessian: %s; equilibrium |p|inf = %.3e m, force residual %.3e\n",
               info.reused_factor ? "the last Newton factorization, reused" : "assembled and factored once",
               info.residual, info.force_residual);
        printf("# parameter kind probe component value d/dtheta (first row of each parameter: the largest |dq/dtheta| over the free vertices)\n");
        static const char *const comp[] = {"x", "y", "z", "norm"};
        for (int k = 0; k < np; ++k) {
            const char *kind = kinds[k] == CT_SENS_LOAD ? "load" : "prescribed";
            double mx = 0.0; /* over the unknowns' vertices with a free dof (q = x for ordinary bodies) */
            int vmx = -1;
            for (int a = 0; a < sim->nq; ++a) {
                double n2 = 0.0;
                int any = 0;
                for (int c = 0; c < sim->dim; ++c) {
                    const size_t i = (size_t)a * sim->dim + c;
                    n2 += dq[nqd * k + i] * dq[nqd * k + i];
                    any |= !sim->fixed[i];
                }
                if (any && sqrt(n2) > mx) mx = sqrt(n2), vmx = a;
            }
            printf("%s %s max|dq_free| vertex_%d - %.17g\n", params[k], kind, vmx, mx);
            for (int i = 0; i < sc.nprobes; ++i) {
                const ct_probe_spec *p = &sc.probes[i];
                double val[3], der[3];
                int n = 0;
                if ((st = probe_derivative(sim, p, dx + nxd * k, val, der, &n)) != CT_OK) break;
                for (int c = 0; c < n; ++c)
                    printf("%s %s %s %s %.17g %.17g\n", params[k], kind, p->name,
                           p->component == CT_COMPONENT_ALL ? comp[c] : p->component == CT_COMPONENT_NORM ? "norm" : comp[p->component],
                           val[c], der[c]);
            }
        }
        if (st == CT_OK && o.out) {
            char line[1024] = "contactlab sensitivity";
            for (int i = 0; i < argc; ++i) {
                strncat(line, " ", sizeof line - strlen(line) - 1);
                strncat(line, argv[i], sizeof line - strlen(line) - 1);
            }
            st = write_sensitivity(o.out, sim, params, np, dx, &info, line, &d);
        }
        if (st == CT_OK && !o.quiet)
            fprintf(stderr, "contactlab: %s: %d parameters, factor %s (%.3g s), solves %.3g s\n", o.scene, np,
                    info.reused_factor ? "reused" : "new", info.t_factor, info.t_solve);
    }
    free(kinds);
    free(dqf);
    free(dfe);
    free(dq);
    free(dx);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    free(o.sets);
    free(params);
    free(rest);
    return finish(&d, st != CT_OK ? st : ct_diag_status(&d));
}

static void print_param(const ct_param_spec *p)
{
    char range[128] = "", def[64];
    if (p->type == CT_PARAM_REAL || p->type == CT_PARAM_INT) {
        char lo[32] = "", hi[32] = "";
        if (isfinite(p->min)) snprintf(lo, sizeof lo, "%s%g", (p->flags & CT_PARAM_MIN_EXCL) ? "(" : "[", p->min);
        else snprintf(lo, sizeof lo, "(-inf");
        if (isfinite(p->max)) snprintf(hi, sizeof hi, "%g%s", p->max, (p->flags & CT_PARAM_MAX_EXCL) ? ")" : "]");
        else snprintf(hi, sizeof hi, "inf)");
        snprintf(range, sizeof range, "%s, %s", lo, hi);
    } else if (p->type == CT_PARAM_CHOICE) {
        size_t n = 0;
        for (int i = 0; p->choices && p->choices[i]; ++i)
            n += (size_t)snprintf(range + n, n < sizeof range ? sizeof range - n : 0, "%s%s", i ? "|" : "",
                                  p->choices[i]);
    } else {
        snprintf(range, sizeof range, "true|false");
    }
    if (p->def_auto) snprintf(def, sizeof def, "auto");
    else if (p->type == CT_PARAM_CHOICE) snprintf(def, sizeof def, "%s", p->choices[(int)p->def]);
    else if (p->type == CT_PARAM_BOOL) snprintf(def, sizeof def, "%s", p->def != 0 ? "true" : "false");
    else snprintf(def, sizeof def, "%g", p->def);
    printf("    %-18s %-10s %-8s %-24s %s%s%s\n", p->name, def, p->unit && *p->unit ? p->unit : "-", range, p->doc,
           (p->flags & CT_PARAM_AUTO) ? " (\"auto\" allowed)" : "",
           (p->flags & CT_PARAM_PER_BODY) ? " (per body)" : "");
}

static int cmd_models(void)
{
    for (int i = 0; ct_model_registry[i]; ++i) {
        const ct_model_type *m = ct_model_registry[i];
        printf("%s — %s\n", m->name, m->summary ? m->summary : "");
        printf("    family: %s; %s\n", ct_model_family_name(m->family),
               m->guarantees & CT_GUARANTEE_INTERSECTION_FREE ? "guarantees intersection-free steps"
                                                              : "no intersection-free guarantee (the verifier's count is a metric)");
        int n = ct_param_spec_count(m->params);
        if (n == 0) printf("    (no parameters)\n");
        else printf("    %-18s %-10s %-8s %-24s %s\n", "parameter", "default", "unit", "range", "meaning");
        for (int k = 0; k < n; ++k) print_param(&m->params[k]);
        printf("\n");
    }
    return 0;
}

/* schema: the scene format as a JSON Schema (scene_schema.h) on stdout */
static int cmd_schema(int argc)
{
    if (argc != 0) {
        fprintf(stderr, "contactlab: schema takes no arguments\n");
        return 2;
    }
    json_t *s = ct_scene_schema();
    char *text = s ? json_dumps(s, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(s);
    if (!text) {
        fprintf(stderr, "contactlab: schema: out of memory\n");
        return 1;
    }
    int ok = puts(text) >= 0 && fflush(stdout) == 0;
    free(text);
    if (!ok) fprintf(stderr, "contactlab: schema: cannot write to standard output\n");
    return ok ? 0 : 1;
}

/* export --vtk RUN.h5 DIR: the frames as a VTK series for ParaView (ct_vtk.h) */
static int cmd_export_vtk(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "contactlab: export --vtk: expected RUN.h5 DIR\n");
        return 2;
    }
    ct_diag d;
    ct_diag_init(&d);
    int nf = 0;
    ct_status st = ct_vtk_export(argv[0], argv[1], &nf, &d);
    if (st == CT_OK) fprintf(stderr, "contactlab: %d frames in %s/frame_*.vtu; open %s/run.pvd in ParaView\n", nf, argv[1], argv[1]);
    return finish(&d, st);
}

static int cmd_export(int argc, char **argv)
{
    if (argc > 0 && strcmp(argv[0], "--vtk") == 0) return cmd_export_vtk(argc - 1, argv + 1);
    int csv = 0, n = 0;
    const char *file = NULL;
    const char **ds = calloc((size_t)argc + 1, sizeof *ds);
    if (!ds) return 1;
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "--csv") == 0) csv = 1;
        else if (argv[i][0] == '-' && argv[i][1] && argv[i][0] != '/') {
            fprintf(stderr, "contactlab: export: unknown option '%s'\n", argv[i]);
            free(ds);
            return 2;
        } else if (!file) file = argv[i];
        else ds[n++] = argv[i];
    }
    if (!file || n == 0) {
        usage(stderr);
        free(ds);
        return 2;
    }
    ct_diag d;
    ct_diag_init(&d);
    ct_status st = ct_h5_export(file, ds, n, csv, stdout, &d);
    free(ds);
    return finish(&d, st);
}

/* ---- fclib: an FCLIB local problem solved with the block PGS (ct_fclib.h, ct_pgs.h) ---- */

typedef struct {
    const char *file, *out;
    ct_pgs_opts po;
    int every; /* print every K-th sweep; 0: 1, 2, 5, 10, 20, 50, ... */
} fclib_opts;

static int opt_real(const char *opt, const char *s, double lo, double hi, int open_interval, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    int ok = *s && !*end && errno == 0 && isfinite(x) && (open_interval ? (x > lo && x < hi) : (x >= lo && x <= hi));
    if (!ok) {
        fprintf(stderr, "contactlab: fclib: %s: expected a number in %s%g, %g%s (got '%s')\n", opt,
                open_interval ? "(" : "[", lo, hi, open_interval ? ")" : "]", s);
        return 2;
    }
    *v = x;
    return 0;
}

static int opt_int(const char *opt, const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(s, &end, 10);
    if (!*s || *end || errno || x < lo || x > hi) {
        fprintf(stderr, "contactlab: fclib: %s: expected an integer in [%ld, %ld] (got '%s')\n", opt, lo, hi, s);
        return 2;
    }
    *v = x;
    return 0;
}

static int parse_fclib_opts(int argc, char **argv, fclib_opts *o)
{
    memset(o, 0, sizeof *o);
    o->po = ct_pgs_default_opts();
    o->po.law = CT_PGS_COULOMB_DISK;
    o->po.tol = 1e-6;
    o->po.max_iter = 10000;
    o->po.omega = 1.0;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long n;
        int rc = 0;
        if (strcmp(a, "--shuffle") == 0) {
            o->po.shuffle = 1;
            continue;
        }
        int takes = !strcmp(a, "--law") || !strcmp(a, "--tol") || !strcmp(a, "--max-iter") || !strcmp(a, "--omega") ||
                    !strcmp(a, "--seed") || !strcmp(a, "--every") || !strcmp(a, "--out");
        if (takes && !v) {
            fprintf(stderr, "contactlab: fclib: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "--law")) {
            if (!strcmp(v, "disk")) o->po.law = CT_PGS_COULOMB_DISK;
            else if (!strcmp(v, "box")) o->po.law = CT_PGS_ADHESIVE_BOX;
            else {
                fprintf(stderr, "contactlab: fclib: --law: expected disk or box (got '%s')\n", v);
                return 2;
            }
        } else if (!strcmp(a, "--tol")) rc = opt_real(a, v, 0.0, HUGE_VAL, 0, &o->po.tol);
        else if (!strcmp(a, "--omega")) rc = opt_real(a, v, 0.0, 2.0, 1, &o->po.omega);
        else if (!strcmp(a, "--max-iter")) {
            if (!(rc = opt_int(a, v, 1, 100000000, &n))) o->po.max_iter = (int)n;
        } else if (!strcmp(a, "--every")) {
            if (!(rc = opt_int(a, v, 1, INT_MAX, &n))) o->every = (int)n;
        } else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            unsigned long long s = strtoull(v, &end, 10);
            if (!*v || *end || errno || v[0] == '-' || s > ULONG_MAX) {
                fprintf(stderr, "contactlab: fclib: --seed: expected a non-negative integer (got '%s')\n", v);
                return 2;
            }
            o->po.seed = (unsigned long)s;
        } else if (!strcmp(a, "--out")) o->out = v;
        else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "contactlab: fclib: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        } else if (!o->file) {
            o->file = a;
            continue;
        } else {
            fprintf(stderr, "contactlab: fclib: unexpected argument '%s'\n", a);
            return 2;
        }
        if (rc) return rc;
        ++i; /* the option's value */
    }
    if (!o->file) {
        usage(stderr);
        return 2;
    }
    return 0;
}

/* Sweeps 1, 2, 5, 10, 20, 50, 100, ... */
static int geometric_iter(int k)
{
    while (k >= 10 && k % 10 == 0) k /= 10;
    return k == 1 || k == 2 || k == 5;
}

static double monotonic_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double norm2(const double *a, size_t n)
{
    double s = 0;
    for (size_t k = 0; k < n; ++k) s += a[k] * a[k];
    return sqrt(s);
}

static int cmd_fclib(int argc, char **argv)
{
    fclib_opts o;
    int rc = parse_fclib_opts(argc, argv, &o);
    if (rc) return rc;
    const int disk = o.po.law == CT_PGS_COULOMB_DISK;
    FILE *out = NULL;
    ct_diag d;
    ct_diag_init(&d);
    ct_fclib_problem fp;
    double *lambda = NULL, *u = NULL, *hist = NULL;
    ct_status st = ct_fclib_read(o.file, &fp, &d);
    if (st != CT_OK) goto done;
    if (o.out && !(out = fopen(o.out, "w"))) {
        st = ct_diag_add(&d, CT_EINPUT, "fclib: --out %s: %s", o.out, strerror(errno));
        goto done;
    }
    const ct_pgs_problem P = ct_fclib_view(&fp);
    const size_t n = (size_t)fp.m * (size_t)fp.dim;
    double mu_lo = fp.mu[0], mu_hi = fp.mu[0];
    for (int c = 1; c < fp.m; ++c) mu_lo = fmin(mu_lo, fp.mu[c]), mu_hi = fmax(mu_hi, fp.mu[c]);
    printf("fclib: %s\n", o.file);
    printf("  contacts %d, dim %d; W %zu x %zu: %d stored entries (%s), %d blocks of %dx%d, asymmetry %.2g\n", fp.m,
           fp.dim, n, n, fp.nnz, fp.format >= 0 ? "triplets" : fp.format == -1 ? "CSC" : "CSR", fp.ptr[fp.m], fp.dim,
           fp.dim, ct_fclib_asymmetry(&fp));
    printf("  mu in [%g, %g]; |q| = %.6g\n", mu_lo, mu_hi, norm2(fp.q, n));
    printf("  block PGS: law %s, tol %g, max-iter %d, omega %g, %s\n",
           disk ? "disk (Coulomb disk)" : "box (friction pyramid, no adhesion)", o.po.tol, o.po.max_iter, o.po.omega,
           o.po.shuffle ? "contacts shuffled every sweep" : "contacts in order");
    if (o.po.shuffle) printf("  seed %lu\n", o.po.seed);
    lambda = calloc(n, sizeof *lambda);
    u = calloc(n, sizeof *u);
    hist = calloc((size_t)o.po.max_iter, sizeof *hist);
    if (!lambda || !u || !hist) {
        st = ct_diag_add(&d, CT_ENOMEM, "fclib: out of memory");
        goto done;
    }
    ct_pgs_result res = {0, 0, NAN};
    double t0 = monotonic_s();
    st = ct_pgs_solve(&P, &o.po, lambda, u, hist, &res, &d);
    double wall = monotonic_s() - t0;
    if (st != CT_OK) goto done;
    ct_pgs_velocity(&P, lambda, u);
    double nat = ct_pgs_natural_map_residual(&P, lambda, u);
    const char *what = disk ? "the natural-map residual after each sweep"
                            : "the box law's residual after each sweep: "
                              "the largest impulse change / the largest impulse";
    printf("  %6s  %s   (%s)\n", "iter", "residual", what);
    for (int k = 1; k <= res.iters; ++k)
        if ((o.every ? k % o.every == 0 : geometric_iter(k)) || k == res.iters)
            printf("  %6d  %.3e\n", k, hist[k - 1]);
    double per = res.iters > 0 ? wall / res.iters : NAN;
    if (disk)
        printf("summary: iterations %d, residual %.3e (natural map), converged %s (tol %g), solve %.3e s, "
               "%.3e s/iteration (one solve call, its per-sweep residual included, / iterations)\n",
               res.iters, nat, res.converged ? "yes" : "no", o.po.tol, wall, per);
    else
        printf("summary: iterations %d, residual %.3e (natural map of the final impulses; the box law's own residual "
               "%.3e), converged %s (box law's residual, tol %g), solve %.3e s, %.3e s/iteration (one solve call, "
               "its per-sweep residual included, / iterations)\n",
               res.iters, nat, res.residual, res.converged ? "yes" : "no", o.po.tol, wall, per);
    if (out) {
        fprintf(out, "# contactlab fclib %s, law %s, tol %g, max-iter %d, omega %g, shuffle %d, seed %lu\n", o.file,
                disk ? "disk" : "box", o.po.tol, o.po.max_iter, o.po.omega, o.po.shuffle, o.po.seed);
        fprintf(out, "# residual: %s\n", what);
        fprintf(out, "# time_s: the solve's wall time (%.6e s, one ct_pgs_solve call, CLOCK_MONOTONIC) x iter / %d: "
                     "the solver reports only its total, so every sweep is given the mean cost\n",
                wall, res.iters);
        fprintf(out, "# iter residual time_s\n");
        for (int k = 1; k <= res.iters; ++k) fprintf(out, "%d %.6e %.6e\n", k, hist[k - 1], per * k);
    }
    if (!res.converged)
        ct_diag_add(&d, CT_ENOCONV, "%s: not converged to tol %g in %d iterations (residual %.3e)", o.file, o.po.tol,
                    res.iters, disk ? nat : res.residual);
done:
    if (out && fclose(out) != 0 && st == CT_OK) st = ct_diag_add(&d, CT_EIO, "fclib: %s: writing failed", o.out);
    free(lambda);
    free(u);
    free(hist);
    ct_fclib_free(&fp);
    ct_status fin = st != CT_OK ? st : ct_diag_status(&d);
    return finish(&d, fin);
}

void ct_cli_safe_threads(char **argv)
{
    const char *keep = getenv("CT_KEEP_ENV");
    if (keep && strcmp(keep, "1") == 0) return;
    int changed = 0;
    if (!getenv("OMP_WAIT_POLICY")) changed |= setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
    if (!getenv("OPENBLAS_NUM_THREADS")) changed |= setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0;
    if (!changed) return;
    /* not under valgrind (it preloads its core; the tool would be re-executed, not the program) */
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload")) return;
    char self[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = '\0';
    execv(self, argv); /* only returns on failure: go on with the defaults */
}

int ct_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) return cmd_run_or_check(argc - 2, argv + 2, 1);
    if (strcmp(cmd, "check") == 0) return cmd_run_or_check(argc - 2, argv + 2, 0);
    if (strcmp(cmd, "sensitivity") == 0) return cmd_sensitivity(argc - 2, argv + 2);
    if (strcmp(cmd, "models") == 0) return cmd_models();
    if (strcmp(cmd, "schema") == 0) return cmd_schema(argc - 2);
    if (strcmp(cmd, "export") == 0) return cmd_export(argc - 2, argv + 2);
    if (strcmp(cmd, "fclib") == 0) return cmd_fclib(argc - 2, argv + 2);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("contactlab %s (%s)\n", ct_version(), ct_git_describe());
        return 0;
    }
    fprintf(stderr, "contactlab: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
