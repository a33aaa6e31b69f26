/* ct_bench.c — per-Newton-iteration time breakdown of the core on two scenes, at several
 * resolutions and thread counts. Writes one CSV row per (scene, size, threads) and prints a
 * table of medians.
 *
 *   elastic  a 1 m cube of neo-Hookean tetrahedra compressed by a scripted plate (top face
 *            moves down, bottom face clamped); n³ cells.
 *   contact  two 1 m × 1 m × 5 cm slabs (n × L × n cells each, L = --layers, default 1; aligned
 *            grids) stacked with a gap of d̂/2, model "ipc" (d̂ = 1 mm, κ = 10 kPa fixed, μ from
 *            --mu, default 0 and 0.3): the bottom slab's bottom face is clamped, the top slab is
 *            pressed by gravity and a uniform 20 kN load on its top face; n quads per side of the
 *            contact faces. Per Newton iteration: broad phase, pair assembly, CCD, factorization,
 *            solve, and the contact share (broad phase + pairs + CCD) / total. Before the steps,
 *            the CCD step size alone: the model's max_step at the rest configuration for a
 *            direction that moves the top slab down by twice the gap (it would cross at α = 0.5).
 *
 *   ct_bench [--out FILE.csv] [--append] [--scene elastic,contact] [--sizes N,..]
 *            [--elastic-sizes 10,20,30] [--contact-sizes 20,50,100] [--threads 1,2] [--steps 3]
 *            [--mu 0,0.3] [--layers 1] [--adhesion EPS_C[:MU_A]]
 *
 * --adhesion runs the contact scene with model ipc_adhesion and Fang et al. adhesion on (critical
 * strain EPS_C, i.e. peak adhesion pressure E·EPS_C = 10 MPa × EPS_C; tangential coefficient MU_A,
 * default 0); the CSV scene name gets the suffix "_adhesion".
 *
 * --sizes sets the sizes of every selected scene; --elastic-sizes / --contact-sizes one scene's.
 * OpenMP threads follow --threads; CHOLMOD's BLAS (OpenBLAS) takes its thread count from
 * OPENBLAS_NUM_THREADS at start-up, so `make bench` runs one process per thread count with
 * both set alike. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contactlab/ct_broadphase.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    if (n <= 0) return 0.0;
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

/* Phases (ms per Newton iteration), from ct_step_stats. The first ten partition the step
 * (their sum is `total` up to bookkeeping):
 *   assembly, projection, analysis, factor, solve, line_search: the core's own work;
 *   contact: the wall time of the model's energy, gradient, Hessian, begin_step and update_lagged
 *            calls (proximity broad phase, collision sets, barrier/friction terms, projection);
 *   ccd:     the wall time of max_step (swept broad phase + additive CCD);
 *   cmap:    mapping the model's Hessian triplets into the Newton matrix (pattern growth too).
 * broadphase and pairs are the model's own accounts (they overlap contact + ccd).
 * contact share = (contact + ccd + cmap) / total. The last two columns (and CSV mean_total_ms,
 * mean_contact_work_ms) are means over the run: the summed step times / all Newton iterations,
 * which weighs every iteration alike; the medians above weigh every step alike, so a step with
 * few iterations puts its per-step costs (lag, first mapping, re-analysis) on few of them. */
enum { PH_ASM, PH_PROJ, PH_ANA, PH_FAC, PH_SOL, PH_LS, PH_CON, PH_CCD, PH_MAP, PH_TOT, PH_BP, PH_PAIRS, NPH };
static const char *ph_names[NPH] = {"assembly", "projection", "analysis", "factor",   "solve",      "line_search",
                                    "contact",  "ccd",        "cmap",     "total",    "broadphase", "pairs"};

/* ---------- scenes ---------- */

enum { SC_ELASTIC, SC_CONTACT, NSCENES };
static const char *scene_names[NSCENES] = {"elastic", "contact"};
static const char *scene_csv[NSCENES] = {"box_compress", "contact_slabs"};

/* contact scene constants */
#define CT_B_DHAT 1e-3
#define CT_B_GAP (0.5 * CT_B_DHAT)
#define CT_B_T 0.05

/* --adhesion: ε_c > 0 switches the contact scene to ipc_adhesion with adhesion */
static double g_eps_c = 0.0, g_mu_a = 0.0;

static void scene_json(int scene, int n, int layers, int steps, double mu, char *json, size_t len)
{
    if (scene == SC_ELASTIC) {
        /* 1 m cube, E = 1 MPa; the top plate moves down 5 mm per 10 ms step */
        snprintf(json, len,
                 "{\"name\":\"bench_box\",\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":%g},"
                 "\"solver\":{\"newton_tol\":1e-3},"
                 "\"bodies\":[{\"name\":\"box\",\"mesh\":{\"generator\":\"box\",\"size\":[1,1,1],"
                 "\"cells\":[%d,%d,%d]},\"material\":{\"model\":\"neo_hookean\",\"E\":1e6,\"nu\":0.4,"
                 "\"density\":1000},\"fixed\":[{\"select\":{\"side\":\"-y\"}},"
                 "{\"select\":{\"side\":\"+y\"},\"motion\":[{\"until\":100,\"velocity\":[0,-0.5,0]}]}]}]}",
                 0.01 * steps, n, n, n);
        return;
    }
    /* Two slabs, E = 10 MPa, gap d̂/2. κ = 10 kPa puts the barrier pressure at the initial gap
     * (1.19 κ) near the applied 20 kPa + gravity, so the faces stay in the barrier zone at
     * roughly d̂/3 over the steps. The intersection verifier is off: it is not part of a
     * Newton iteration. */
    char adh[128] = "";
    if (g_eps_c > 0.0) snprintf(adh, sizeof adh, ",\"eps_c\":%.17g,\"mu_a\":%.17g", g_eps_c, g_mu_a);
    snprintf(json, len,
             "{\"name\":\"bench_contact\",\"dim\":3,\"time\":{\"dt\":0.01,\"duration\":%g},"
             "\"gravity\":[0,-9.81,0],\"solver\":{\"newton_tol\":1e-3,\"verify\":false},"
             "\"contact\":{\"model\":\"%s\",\"dhat\":%g,\"kappa\":1e4,\"mu\":%g,\"eps_v\":1e-3%s},"
             "\"bodies\":["
             "{\"name\":\"bottom\",\"mesh\":{\"generator\":\"box\",\"size\":[1,%g,1],\"cells\":[%d,%d,%d]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e7,\"nu\":0.4,\"density\":1000},"
             "\"fixed\":[{\"select\":{\"side\":\"-y\"}}]},"
             "{\"name\":\"top\",\"mesh\":{\"generator\":\"box\",\"size\":[1,%g,1],\"cells\":[%d,%d,%d],"
             "\"origin\":[0,%.17g,0]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e7,\"nu\":0.4,\"density\":1000},"
             "\"loads\":[{\"select\":{\"side\":\"+y\"},\"force\":[0,-2e4,0],\"force_rate\":[0,-1e6,0],\"weight\":\"area\"}]}]}",
             0.01 * steps, g_eps_c > 0.0 ? "ipc_adhesion" : "ipc", CT_B_DHAT, mu, adh, CT_B_T, n, layers, n, CT_B_T,
             n, layers, n, CT_B_T + CT_B_GAP);
}

/* CCD step size alone at the current state: the top body (body 1) moves down by 2·gap. Times the
 * model's max_step (median of `reps` calls) and, separately, the CCD broad phase it contains. */
typedef struct ccd_alone {
    double alpha, t_max_step, t_bp;
    long n_vf, n_ee;
} ccd_alone;

static ct_status run_ccd_alone(ct_sim *sim, int reps, ccd_alone *out)
{
    const int dim = sim->dim;
    size_t nxd = (size_t)sim->nx * dim;
    double *dx = calloc(nxd, sizeof *dx);
    unsigned char *movable = malloc((size_t)sim->nx);
    double *tm = calloc((size_t)reps, sizeof *tm), *tb = calloc((size_t)reps, sizeof *tb);
    ct_candidates cc;
    ct_candidates_init(&cc);
    ct_status st = dx && movable && tm && tb ? CT_OK : CT_ENOMEM;
    if (st == CT_OK) {
        const ct_body *top = &sim->bodies[1];
        for (int k = 0; k < top->nx; ++k) dx[(size_t)(top->x_off + k) * dim + 1] = -2.0 * CT_B_GAP;
        for (int v = 0; v < sim->nx; ++v) movable[v] = !sim->xv_kinematic[v];
    }
    for (int r = 0; st == CT_OK && r < reps; ++r) {
        double t0 = omp_get_wtime();
        st = ct_model_max_step(sim->model, &sim->ctx, sim->x, dx, &out->alpha);
        double t1 = omp_get_wtime();
        if (st == CT_OK) st = ct_broadphase_ccd(&sim->surf, sim->x, dx, movable, 0.0, sim->threads, &cc);
        tm[r] = t1 - t0;
        tb[r] = omp_get_wtime() - t1;
    }
    out->t_max_step = median(tm, reps);
    out->t_bp = median(tb, reps);
    out->n_vf = cc.vf.n;
    out->n_ee = cc.ee.n;
    ct_candidates_free(&cc);
    free(dx);
    free(movable);
    free(tm);
    free(tb);
    return st;
}

static void csv_header(FILE *csv)
{
    fprintf(csv, "host,scene,cells,threads,dofs,nnz,steps,newton_iters,analyses");
    for (int p = 0; p <= PH_TOT; ++p) fprintf(csv, ",%s_ms", ph_names[p]);
    fprintf(csv, ",factor_solve_fraction");
    for (int p = PH_BP; p < NPH; ++p) fprintf(csv, ",%s_ms", ph_names[p]);
    fprintf(csv, ",contact_fraction,candidates,active_pairs,mu,ccd_alone_ms,ccd_alone_bp_ms,ccd_alone_alpha,"
                 "ccd_alone_candidates,mean_total_ms,mean_contact_work_ms\n");
}

static void print_header(int scene, const char *host, int steps, double mu, int layers)
{
    if (scene == SC_ELASTIC) {
        printf("\nelastic scene: per-Newton-iteration medians (ms) on %s; box compressed by a scripted plate, "
               "%d steps\n", host, steps);
        printf("%6s %3s %8s %10s %5s %4s", "cells", "thr", "dofs", "nnz(A)", "iters", "ana");
        for (int p = 0; p <= PH_TOT; ++p) printf(" %11s", ph_names[p]);
        printf(" %8s\n", "fac+sol");
    } else {
        printf("\ncontact scene: per-Newton-iteration medians (ms) on %s; two slabs (n x %d x n cells) in face "
               "contact, %s, mu = %g, %d steps", host, layers, g_eps_c > 0.0 ? "ipc_adhesion" : "ipc", mu, steps);
        if (g_eps_c > 0.0) printf(", adhesion eps_c = %g, mu_a = %g", g_eps_c, g_mu_a);
        printf("\n");
        printf("%5s %3s %7s %9s %5s %8s %7s %8s %8s %8s %8s %8s %8s %8s %8s %8s %6s | %8s %8s | %8s %8s %7s %8s | %8s %8s\n",
               "n", "thr", "dofs", "nnz(A)", "iters", "cand", "active", "assembly", "analysis", "factor", "solve",
               "lsearch", "contact", "ccd", "cmap", "total", "share", "broadph", "pairs", "ccd1_ms", "ccd1_bp",
               "alpha", "ccd_cand", "mean_tot", "mean_cw");
    }
}

static int run_case(int scene, int n, int layers, int threads, int steps, double mu, const char *host, FILE *csv)
{
    omp_set_num_threads(threads);
    char json[4096];
    scene_json(scene, n, layers, steps, mu, json, sizeof json);
    ct_diag d;
    ct_diag_init(&d);
    ct_scene sc;
    ct_scene_init(&sc);
    ct_sim *sim = NULL;
    ct_status st = ct_scene_parse(&sc, json, "bench", ".", NULL, 0, &d);
    if (st == CT_OK) st = ct_sim_create(&sim, &sc, &d);
    ccd_alone ca = {1.0, 0.0, 0.0, 0, 0};
    if (st == CT_OK && scene == SC_CONTACT) {
        /* the CCD-alone timing at the rest configuration (before any step) */
        st = run_ccd_alone(sim, 3, &ca);
        if (st != CT_OK) ct_diag_add(&d, st, "CCD-alone timing failed");
    }
    double *ph[NPH], *cand = calloc((size_t)steps + 1, sizeof(double)), *act = calloc((size_t)steps + 1, sizeof(double));
    int cnt = 0, iters = 0;
    double sum_wall = 0.0, sum_contact = 0.0; /* over the steps: mean per iteration = sum / iters */
    for (int p = 0; p < NPH; ++p) ph[p] = calloc((size_t)steps + 1, sizeof(double));
    for (int k = 0; st == CT_OK && k < steps; ++k) {
        st = ct_sim_step(sim, &d);
        if (st != CT_OK) break;
        const ct_step_stats *S = &sim->last;
        int it = S->newton_iters > 0 ? S->newton_iters : 1;
        iters += S->newton_iters;
        sum_wall += S->wall;
        sum_contact += S->t_contact + S->t_ccd + S->t_contact_assembly;
        ph[PH_ASM][cnt] = S->t_assembly / it;
        ph[PH_PROJ][cnt] = S->t_projection / it;
        ph[PH_ANA][cnt] = S->t_analysis / it;
        ph[PH_FAC][cnt] = S->t_factor / it;
        ph[PH_SOL][cnt] = S->t_solve / it;
        ph[PH_LS][cnt] = S->t_line_search / it;
        ph[PH_CON][cnt] = S->t_contact / it;
        ph[PH_CCD][cnt] = S->t_ccd / it;
        ph[PH_MAP][cnt] = S->t_contact_assembly / it;
        ph[PH_TOT][cnt] = S->wall / it;
        ph[PH_BP][cnt] = S->t_broadphase / it;
        ph[PH_PAIRS][cnt] = S->t_model / it;
        cand[cnt] = (double)S->n_candidates;
        act[cnt] = (double)S->n_active;
        cnt++;
    }
    if (st != CT_OK) {
        ct_diag_print(&d, stderr, "ct_bench: ");
        return 1;
    }
    double med[NPH];
    for (int p = 0; p < NPH; ++p) med[p] = median(ph[p], cnt) * 1e3;
    double frac = (med[PH_FAC] + med[PH_SOL]) / med[PH_TOT];
    double cfrac = (med[PH_CON] + med[PH_CCD] + med[PH_MAP]) / med[PH_TOT];
    long mcand = (long)median(cand, cnt), mact = (long)median(act, cnt);
    long nnz = (long)ct_csc_nnz(ct_sim_newton_matrix(sim));
    long ana = ct_linsolve_analyses(sim->ls);
    if (scene == SC_ELASTIC) {
        printf("%4d^3 %3d %8d %10ld %5d %4ld", n, threads, ct_sim_nfree(sim), nnz, iters, ana);
        for (int p = 0; p <= PH_TOT; ++p) printf(" %11.2f", med[p]);
        printf(" %7.1f%%\n", 100 * frac);
    } else {
        printf("%5d %3d %7d %9ld %5d %8ld %7ld %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %5.1f%% | %8.1f "
               "%8.1f | %8.2f %8.2f %7.4f %8ld | %8.1f %8.1f\n",
               n, threads, ct_sim_nfree(sim), nnz, iters, mcand, mact, med[PH_ASM] + med[PH_PROJ], med[PH_ANA],
               med[PH_FAC], med[PH_SOL], med[PH_LS], med[PH_CON], med[PH_CCD], med[PH_MAP], med[PH_TOT],
               100 * cfrac, med[PH_BP], med[PH_PAIRS], 1e3 * ca.t_max_step, 1e3 * ca.t_bp, ca.alpha,
               ca.n_vf + ca.n_ee, 1e3 * sum_wall / (iters > 0 ? iters : 1), 1e3 * sum_contact / (iters > 0 ? iters : 1));
    }
    fflush(stdout);
    if (csv) {
        char sname[64];
        if (scene == SC_CONTACT && layers != 1) snprintf(sname, sizeof sname, "%s_%dlayers", scene_csv[scene], layers);
        else snprintf(sname, sizeof sname, "%s", scene_csv[scene]);
        if (scene == SC_CONTACT && g_eps_c > 0.0) strncat(sname, "_adhesion", sizeof sname - strlen(sname) - 1);
        fprintf(csv, "%s,%s,%d,%d,%d,%ld,%d,%d,%ld", host, sname, n, threads, ct_sim_nfree(sim), nnz, steps, iters, ana);
        for (int p = 0; p <= PH_TOT; ++p) fprintf(csv, ",%.4f", med[p]);
        fprintf(csv, ",%.4f", frac);
        if (scene == SC_CONTACT) {
            for (int p = PH_BP; p < NPH; ++p) fprintf(csv, ",%.4f", med[p]);
            fprintf(csv, ",%.4f,%ld,%ld,%g,%.4f,%.4f,%.6f,%ld,%.4f,%.4f\n", cfrac, mcand, mact, mu, 1e3 * ca.t_max_step,
                    1e3 * ca.t_bp, ca.alpha, ca.n_vf + ca.n_ee, 1e3 * sum_wall / (iters > 0 ? iters : 1),
                    1e3 * sum_contact / (iters > 0 ? iters : 1));
        } else {
            fprintf(csv, ",,,,,,,,,,,,\n");
        }
        fflush(csv);
    }
    for (int p = 0; p < NPH; ++p) free(ph[p]);
    free(cand);
    free(act);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    ct_diag_free(&d);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: ct_bench [--out FILE.csv] [--append] [--scene elastic,contact] [--sizes N,..]\n"
                    "                [--elastic-sizes 10,20,30] [--contact-sizes 20,50,100] [--threads 1,2]\n"
                    "                [--steps N] [--mu 0,0.3] [--layers L] [--adhesion EPS_C[:MU_A]]\n");
}

int main(int argc, char **argv)
{
    const int tuned = ct_tune_allocator(); /* as the contactlab program does (ct_sim.h) */
    const char *out = NULL;
    int append = 0;
    int sizes[NSCENES][8] = {{10, 20, 30}, {20, 50, 100}}, nsizes[NSCENES] = {3, 3};
    int threads[8] = {1, 2}, nthreads = 2, steps = 3;
    int run[NSCENES] = {1, 0};
    double mus[4] = {0.0, 0.3};
    int nmu = 2, layers = 1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--append")) append = 1;
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc) {
            ++i;
            for (int s = 0; s < NSCENES; ++s) nsizes[s] = parse_list(argv[i], sizes[s], 8);
        } else if (!strcmp(argv[i], "--elastic-sizes") && i + 1 < argc)
            nsizes[SC_ELASTIC] = parse_list(argv[++i], sizes[SC_ELASTIC], 8);
        else if (!strcmp(argv[i], "--contact-sizes") && i + 1 < argc)
            nsizes[SC_CONTACT] = parse_list(argv[++i], sizes[SC_CONTACT], 8);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) nthreads = parse_list(argv[++i], threads, 8);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--mu") && i + 1 < argc) {
            /* a comma-separated list of friction coefficients */
            char *p = argv[++i], *end;
            nmu = 0;
            while (*p && nmu < 4) {
                mus[nmu] = strtod(p, &end);
                if (end == p || !(mus[nmu] >= 0.0)) {
                    nmu = -1;
                    break;
                }
                nmu++;
                p = *end == ',' ? end + 1 : end;
            }
        }
        else if (!strcmp(argv[i], "--layers") && i + 1 < argc) layers = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--adhesion") && i + 1 < argc) {
            char *end;
            g_eps_c = strtod(argv[++i], &end);
            g_mu_a = *end == ':' ? strtod(end + 1, &end) : 0.0;
            if (*end || !(g_eps_c >= 0.0) || !(g_mu_a >= 0.0)) {
                fprintf(stderr, "ct_bench: --adhesion wants EPS_C[:MU_A] (got '%s')\n", argv[i]);
                return 2;
            }
        }
        else if (!strcmp(argv[i], "--scene") && i + 1 < argc) {
            char buf[64];
            snprintf(buf, sizeof buf, "%s", argv[++i]);
            run[SC_ELASTIC] = run[SC_CONTACT] = 0;
            for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                int found = 0;
                for (int s = 0; s < NSCENES; ++s)
                    if (!strcmp(tok, scene_names[s])) run[s] = found = 1;
                if (!found) {
                    fprintf(stderr, "ct_bench: unknown scene '%s' (elastic, contact)\n", tok);
                    return 2;
                }
            }
        } else {
            usage();
            return 2;
        }
    }
    if (nsizes[SC_ELASTIC] <= 0 || nsizes[SC_CONTACT] <= 0 || nthreads <= 0 || steps <= 0 || nmu <= 0 || layers < 1) {
        fprintf(stderr, "ct_bench: bad list, step count, mu or layers\n");
        return 2;
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host);
    printf("allocator: %s\n", tuned ? "freed heap memory kept in the process (ct_tune_allocator)"
                                     : "C library default (CT_MALLOC_DEFAULT set, or not glibc)");
    FILE *csv = NULL;
    if (out) {
        csv = fopen(out, append ? "a" : "w");
        if (!csv) {
            perror(out);
            return 1;
        }
        if (!append || ftell(csv) == 0) csv_header(csv);
    }
    for (int scene = 0; scene < NSCENES; ++scene) {
        if (!run[scene]) continue;
        for (int mi = 0; mi < (scene == SC_CONTACT ? nmu : 1); ++mi) {
            double mu = scene == SC_CONTACT ? mus[mi] : 0.0;
            print_header(scene, host, steps, mu, layers);
            for (int si = 0; si < nsizes[scene]; ++si)
                for (int ti = 0; ti < nthreads; ++ti)
                    if (run_case(scene, sizes[scene][si], layers, threads[ti], steps, mu, host, csv)) return 1;
        }
    }
    if (csv) fclose(csv);
    return 0;
}
