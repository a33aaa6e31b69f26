/* cli.c — `contactlab run | check | models | export`. */
#include "contactlab/ct_cli.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contactlab/ct_h5log.h"
#include "contactlab/ct_run.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

static void usage(FILE *f)
{
    fputs("usage:\n"
          "  contactlab run SCENE.json [-o OUT.h5] [--set key.path=value]... [--threads N] [--steps N] [--quiet]\n"
          "  contactlab check SCENE.json [--set key.path=value]...   validate and print the resolved scene\n"
          "  contactlab models                                        every model, its parameters, defaults, units\n"
          "  contactlab export OUT.h5 DATASET... [--csv]              columns for gnuplot (or CSV)\n"
          "exit status: 0 ok, 1 run failed, 2 bad input\n",
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
    int nsets, threads, quiet, steps;
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
        ct_run_opts ro = {.output = o.out, .progress = !o.quiet && isatty(STDERR_FILENO), .max_steps = o.steps,
                          .argv_line = line};
        st = ct_run(sim, &ro, &d);
        if (st == CT_OK && !o.quiet)
            fprintf(stderr, "contactlab: %s: %d steps done, t = %g s\n", o.scene, sim->step, sim->t);
    }
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    free(o.sets);
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
    printf("    %-18s %-10s %-8s %-24s %s%s\n", p->name, def, p->unit && *p->unit ? p->unit : "-", range, p->doc,
           (p->flags & CT_PARAM_AUTO) ? " (\"auto\" allowed)" : "");
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

static int cmd_export(int argc, char **argv)
{
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

int ct_cli_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) return cmd_run_or_check(argc - 2, argv + 2, 1);
    if (strcmp(cmd, "check") == 0) return cmd_run_or_check(argc - 2, argv + 2, 0);
    if (strcmp(cmd, "models") == 0) return cmd_models();
    if (strcmp(cmd, "export") == 0) return cmd_export(argc - 2, argv + 2);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "contactlab: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
