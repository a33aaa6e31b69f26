/* ct_bench.c — per-Newton-iteration time breakdown of the core on a 3D box of neo-Hookean
 * tetrahedra compressed by a scripted plate (its top face moves down; the bottom face is
 * clamped), at several resolutions and thread counts. Writes one CSV row per
 * (cells, threads) and prints a table of medians.
 *
 *   ct_bench [--out FILE.csv] [--append] [--sizes 10,20,30] [--threads 1,2] [--steps 3]
 *
 * OpenMP threads follow --threads; CHOLMOD's BLAS (OpenBLAS) takes its thread count from
 * OPENBLAS_NUM_THREADS at start-up, so `make bench` runs one process per thread count with
 * both set alike. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int parse_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0) return -1;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return n;
}

enum { PH_ASM, PH_PROJ, PH_ANA, PH_FAC, PH_SOL, PH_LS, PH_TOT, NPH };
static const char *ph_names[NPH] = {"assembly", "projection", "analysis", "factor", "solve", "line_search", "total"};

int main(int argc, char **argv)
{
    const char *out = NULL;
    int append = 0;
    int sizes[8] = {10, 20, 30}, nsizes = 3, threads[8] = {1, 2}, nthreads = 2, steps = 3;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--append")) append = 1;
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) nsizes = parse_list(argv[++i], sizes, 8);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) nthreads = parse_list(argv[++i], threads, 8);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: ct_bench [--out FILE.csv] [--append] [--sizes 10,20,30] [--threads 1,2] [--steps N]\n");
            return 2;
        }
    }
    if (nsizes <= 0 || nthreads <= 0 || steps <= 0) {
        fprintf(stderr, "ct_bench: bad list or step count\n");
        return 2;
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host);
    FILE *csv = NULL;
    if (out) {
        csv = fopen(out, append ? "a" : "w");
        if (!csv) {
            perror(out);
            return 1;
        }
        if (!append || ftell(csv) == 0) {
            fprintf(csv, "host,scene,cells,threads,dofs,nnz,steps,newton_iters,analyses");
            for (int p = 0; p < NPH; ++p) fprintf(csv, ",%s_ms", ph_names[p]);
            fprintf(csv, ",factor_solve_fraction\n");
        }
    }
    printf("per-Newton-iteration medians (ms) on %s; box compressed by a scripted plate, %d steps\n", host, steps);
    printf("%6s %3s %8s %10s %5s %4s", "cells", "thr", "dofs", "nnz(A)", "iters", "ana");
    for (int p = 0; p < NPH; ++p) printf(" %11s", ph_names[p]);
    printf(" %8s\n", "fac+sol");
    for (int si = 0; si < nsizes; ++si)
        for (int ti = 0; ti < nthreads; ++ti) {
            int n = sizes[si];
            omp_set_num_threads(threads[ti]);
            char json[2048];
            /* 1 m cube, E = 1 MPa; the top plate moves down 5 mm per 10 ms step */
            snprintf(json, sizeof json,
                     "{\"name\":\"bench_box\",\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":%g},"
                     "\"solver\":{\"newton_tol\":1e-3},"
                     "\"bodies\":[{\"name\":\"box\",\"mesh\":{\"generator\":\"box\",\"size\":[1,1,1],"
                     "\"cells\":[%d,%d,%d]},\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.4,"
                     "\"density\":1000},\"fixed\":[{\"select\":{\"side\":\"-y\"}},"
                     "{\"select\":{\"side\":\"+y\"},\"motion\":[{\"until\":100,\"velocity\":[0,-0.5,0]}]}]}]}",
                     0.01 * steps, n, n, n);
            ct_diag d;
            ct_diag_init(&d);
            ct_scene sc;
            ct_scene_init(&sc);
            ct_sim *sim = NULL;
            ct_status st = ct_scene_parse(&sc, json, "bench", ".", NULL, 0, &d);
            if (st == CT_OK) st = ct_sim_create(&sim, &sc, &d);
            double *ph[NPH];
            int cnt = 0, iters = 0;
            for (int p = 0; p < NPH; ++p) ph[p] = calloc((size_t)steps + 1, sizeof(double));
            for (int k = 0; st == CT_OK && k < steps; ++k) {
                st = ct_sim_step(sim, &d);
                if (st != CT_OK) break;
                const ct_step_stats *S = &sim->last;
                int it = S->newton_iters > 0 ? S->newton_iters : 1;
                iters += S->newton_iters;
                ph[PH_ASM][cnt] = S->t_assembly / it;
                ph[PH_PROJ][cnt] = S->t_projection / it;
                ph[PH_ANA][cnt] = S->t_analysis / it;
                ph[PH_FAC][cnt] = S->t_factor / it;
                ph[PH_SOL][cnt] = S->t_solve / it;
                ph[PH_LS][cnt] = S->t_line_search / it;
                ph[PH_TOT][cnt] = S->wall / it;
                cnt++;
            }
            if (st != CT_OK) {
                ct_diag_print(&d, stderr, "ct_bench: ");
                return 1;
            }
            double med[NPH];
            for (int p = 0; p < NPH; ++p) med[p] = median(ph[p], cnt) * 1e3;
            double frac = (med[PH_FAC] + med[PH_SOL]) / med[PH_TOT];
            long nnz = (long)ct_csc_nnz(&sim->as.A);
            long ana = ct_linsolve_analyses(sim->ls);
            printf("%4d^3 %3d %8d %10ld %5d %4ld", n, threads[ti], sim->as.nfree, nnz, iters, ana);
            for (int p = 0; p < NPH; ++p) printf(" %11.2f", med[p]);
            printf(" %7.1f%%\n", 100 * frac);
            fflush(stdout);
            if (csv) {
                fprintf(csv, "%s,box_compress,%d,%d,%d,%ld,%d,%d,%ld", host, n, threads[ti], sim->as.nfree, nnz,
                        steps, iters, ana);
                for (int p = 0; p < NPH; ++p) fprintf(csv, ",%.4f", med[p]);
                fprintf(csv, ",%.4f\n", frac);
            }
            for (int p = 0; p < NPH; ++p) free(ph[p]);
            ct_sim_destroy(sim);
            ct_scene_free(&sc);
            ct_diag_free(&d);
        }
    if (csv) fclose(csv);
    return 0;
}
