/* cl_driver.c — per-kernel timings of contactlab's IPC contact kernels on the bench's contact
 * scene (bench/ct_bench.c --scene contact), and export of that scene's contact surface for the
 * ipc-toolkit driver (ipctk_driver.cpp), so that both programs work on identical arrays.
 *
 *   cl_driver N THREADS REPS [--export FILE] [--ee-weight area|dhat2] [--colset convergent|ipc2020]
 *             [--quadrature vertex|face] [--only KERNEL,...]
 *
 * The scene: two 1 m x 1 m x 5 cm slabs of n x 1 x n hexahedral cells (6 tets each), aligned
 * grids, gap 0.5 mm, model ipc, d̂ = 1 mm, κ = 10 kPa, μ = 0.3, ε_v = 1 mm/s, h = 0.01 s.
 * Everything is evaluated at the rest state x0 (before any step). The vertex weights: `vertex`
 * (w_v, ipc-toolkit's vertex areas: the IPC2020 set then equals ipc-toolkit's term for term) or
 * `face` (the face-aware weights, contactlab's default, lagged at x0 from the proximity
 * candidates as the model does at the start of a step; not timed); default vertex for ipc2020,
 * face for convergent.
 *
 *   bp_prox    ct_broadphase_proximity, inflation d̂ (pairs within d̂; the model itself queries
 *              with (1 + bp_margin) d̂ = 2 d̂ and reuses the candidates)
 *   colset     ct_collision_set_build from those candidates (convergent set)
 *   energy     ct_collision_energy, density κ b(d) (the model's barrier_density)
 *   gradient   ct_collision_gradient
 *   hessian    ct_collision_hessian (PSD-projected blocks as upper-triangle triplets, as the
 *              simulator asks for them)
 *   hess_csc   hessian + ct_csc_from_triplets (the triplets compressed into a CSC matrix; the
 *              simulator instead maps them into its fixed pattern with a slot cache)
 *   fric_build ct_friction_set_build at x0 (λ from κ b, μ = 0.3)
 *   fric_grad  ct_friction_gradient at x1 = x0 + a tangential shift of the top slab
 *   fric_hess  ct_friction_hessian at x1 (upper-triangle triplets)
 *   ccd_bp     ct_broadphase_ccd for dx = top slab down by 2 x gap (swept boxes)
 *   max_step   the ipc model's max_step for that dx (swept-box broad phase + additive CCD)
 *
 * Output lines:  T kernel ms ms ...   (REPS timings after one warm-up call)
 *                C name value         (agreement checks)
 */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contactlab/ct_barrier.h"
#include "contactlab/ct_broadphase.h"
#include "contactlab/ct_collisions.h"
#include "contactlab/ct_friction.h"
#include "contactlab/ct_scene.h"
#include "contactlab/ct_sim.h"
#include "contactlab/ct_sparse.h"
#include "sim/assemble.h" /* core-internal: ct_assembly_fill, to time the mapping of the triplets */

#define DHAT 1e-3
#define GAP (0.5 * DHAT)
#define THICK 0.05
#define KAPPA 1e4
#define MU 0.3
#define EPS_V 1e-3
#define DT 0.01

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* κ b(√s): the ipc model's barrier_density */
static double density(const void *ctx, const ct_collision *c, double s, double *ps, double *pss)
{
    (void)ctx;
    (void)c;
    double b = ct_barrier_s(s, DHAT, ps, pss);
    if (ps) *ps *= KAPPA;
    if (pss) *pss *= KAPPA;
    return KAPPA * b;
}

static double pair_mu(const void *ctx, const ct_collision *c)
{
    (void)ctx;
    (void)c;
    return MU;
}

static const char *g_only = NULL;
static int wanted(const char *k)
{
    if (!g_only) return 1;
    size_t n = strlen(k);
    for (const char *p = g_only; (p = strstr(p, k)); p += n)
        if ((p == g_only || p[-1] == ',') && (p[n] == ',' || p[n] == 0)) return 1;
    return 0;
}

static void print_times(const char *k, const double *t, int reps)
{
    printf("T %s", k);
    for (int r = 0; r < reps; ++r) printf(" %.4f", 1e3 * t[r]);
    printf("\n");
    fflush(stdout);
}

static double norm2(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; ++i) s += v[i] * v[i];
    return sqrt(s);
}

/* Frobenius norm and nnz of the symmetric matrix held by upper-triangle triplets. */
static void hess_stats(const ct_triplets *t, int n, double *fro, long *nnz)
{
    ct_csc A;
    ct_csc_init(&A);
    ct_csc_from_triplets(&A, n, n, t, 1);
    double s = 0;
    long z = 0;
    for (int c = 0; c < A.ncol; ++c)
        for (int k = A.colptr[c]; k < A.colptr[c + 1]; ++k) {
            double v = A.val[k];
            s += (A.rowind[k] == c ? 1.0 : 2.0) * v * v;
            z += A.rowind[k] == c ? 1 : 2;
        }
    *fro = sqrt(s);
    *nnz = z;
    ct_csc_free(&A);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: cl_driver N THREADS REPS [--export FILE] [--ee-weight area|dhat2] "
                        "[--colset convergent|ipc2020] [--quadrature vertex|face] [--only K,..]\n");
        return 2;
    }
    const int n = atoi(argv[1]), threads = atoi(argv[2]), reps = atoi(argv[3]);
    const char *export_path = NULL, *eew = "area", *colset = "convergent", *quad = NULL;
    for (int i = 4; i < argc; ++i) {
        if (!strcmp(argv[i], "--export") && i + 1 < argc) export_path = argv[++i];
        else if (!strcmp(argv[i], "--ee-weight") && i + 1 < argc) eew = argv[++i];
        else if (!strcmp(argv[i], "--only") && i + 1 < argc) g_only = argv[++i];
        else if (!strcmp(argv[i], "--colset") && i + 1 < argc) colset = argv[++i];
        else if (!strcmp(argv[i], "--quadrature") && i + 1 < argc) quad = argv[++i];
        else {
            fprintf(stderr, "cl_driver: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    ct_tune_allocator(); /* as the contactlab program and ct_bench do */
    omp_set_num_threads(threads);

    /* the bench's contact scene (bench/ct_bench.c scene_json, SC_CONTACT, layers = 1), μ = 0.3 */
    char json[4096];
    snprintf(json, sizeof json,
             "{\"name\":\"bench_contact\",\"dim\":3,\"time\":{\"dt\":%g,\"duration\":%g},"
             "\"gravity\":[0,-9.81,0],\"solver\":{\"newton_tol\":1e-3,\"verify\":false,\"threads\":%d},"
             "\"contact\":{\"model\":\"ipc\",\"dhat\":%g,\"kappa\":%g,\"mu\":%g,\"eps_v\":%g,"
             "\"collision_set\":\"%s\",\"ee_weight\":\"%s\"},"
             "\"bodies\":["
             "{\"name\":\"bottom\",\"mesh\":{\"generator\":\"box\",\"size\":[1,%g,1],\"cells\":[%d,1,%d]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e7,\"nu\":0.4,\"density\":1000},"
             "\"fixed\":[{\"select\":{\"side\":\"-y\"}}]},"
             "{\"name\":\"top\",\"mesh\":{\"generator\":\"box\",\"size\":[1,%g,1],\"cells\":[%d,1,%d],"
             "\"origin\":[0,%.17g,0]},"
             "\"material\":{\"model\":\"neo_hookean\",\"E\":1e7,\"nu\":0.4,\"density\":1000},"
             "\"loads\":[{\"select\":{\"side\":\"+y\"},\"force\":[0,-2e4,0],\"force_rate\":[0,-1e6,0],"
             "\"weight\":\"area\"}]}]}",
             DT, DT, threads, DHAT, KAPPA, MU, EPS_V, colset, eew, THICK, n, n, THICK, n, n, THICK + GAP);
    ct_diag d;
    ct_diag_init(&d);
    ct_scene sc;
    ct_scene_init(&sc);
    ct_sim *sim = NULL;
    ct_status st = ct_scene_parse(&sc, json, "cl_driver", ".", NULL, 0, &d);
    if (st == CT_OK) st = ct_sim_create(&sim, &sc, &d);
    if (st != CT_OK) {
        ct_diag_print(&d, stderr, "cl_driver: ");
        return 1;
    }
    const int dim = 3, nx = sim->nx;
    const size_t nxd = (size_t)nx * dim;
    const ct_surface *s = &sim->surf;
    const double *x0 = sim->x;
    const ct_body *top = &sim->bodies[1];
    unsigned char *movable = malloc((size_t)nx);
    for (int v = 0; v < nx; ++v) movable[v] = !sim->xv_kinematic[v];

    /* x1: the top slab shifted tangentially (friction), dx: the top slab down by 2 gap (CCD) */
    const double eps = EPS_V * DT;
    double *x1 = malloc(nxd * sizeof *x1), *dx = calloc(nxd, sizeof *dx);
    memcpy(x1, x0, nxd * sizeof *x1);
    for (int k = 0; k < top->nx; ++k) {
        size_t v = (size_t)(top->x_off + k);
        x1[v * dim + 0] += 0.6 * eps;
        x1[v * dim + 2] += 0.3 * eps;
        dx[v * dim + 1] = -2.0 * GAP;
    }

    const int ipc2020 = !strcmp(colset, "ipc2020");
    if (!quad) quad = ipc2020 ? "vertex" : "face";
    printf("C colset %s\nC ee_weight %s\nC quadrature %s\n", colset, eew, quad);
    printf("C n %d\nC threads %d\nC surface_vertices %d\nC surface_faces %d\nC surface_edges %d\n", n, threads, s->nbv,
           s->nf, s->ned);
    if (export_path) {
        /* surface-local numbering: bverts order */
        int *loc = malloc((size_t)nx * sizeof *loc);
        for (int v = 0; v < nx; ++v) loc[v] = -1;
        for (int i = 0; i < s->nbv; ++i) loc[s->bverts[i]] = i;
        FILE *f = fopen(export_path, "wb");
        if (!f) {
            perror(export_path);
            return 1;
        }
        int hdr[4] = {s->nbv, s->nf, s->ned, 0};
        fwrite(hdr, sizeof(int), 4, f);
        double sc3[4] = {DHAT, KAPPA, MU, eps};
        fwrite(sc3, sizeof(double), 4, f);
        for (int i = 0; i < s->nbv; ++i) fwrite(x0 + (size_t)s->bverts[i] * dim, sizeof(double), 3, f);
        for (int i = 0; i < s->nbv; ++i) fwrite(x1 + (size_t)s->bverts[i] * dim, sizeof(double), 3, f);
        for (int i = 0; i < s->nbv; ++i) fwrite(dx + (size_t)s->bverts[i] * dim, sizeof(double), 3, f);
        for (int i = 0; i < 3 * s->nf; ++i) fwrite(&loc[s->faces[i]], sizeof(int), 1, f);
        for (int i = 0; i < 2 * s->ned; ++i) fwrite(&loc[s->edges[i]], sizeof(int), 1, f);
        fclose(f);
        free(loc);
        printf("C exported %s\n", export_path);
    }

    ct_contact_mesh cm;
    st = ct_contact_mesh_init(&cm, dim, s, sim->X, sim->xv_body, movable);
    if (st != CT_OK) return 1;
    const int face = !strcmp(quad, "face");
    if (!face) cm.quadrature = CT_QUAD_VERTEX;
    ct_colset_opts co = {ipc2020 ? CT_COLSET_IPC2020 : CT_COLSET_CONVERGENT, strcmp(eew, "area") ? CT_EEW_DHAT2 : CT_EEW_AREA,
                         DHAT, threads, DHAT, 0};
    double *t = calloc((size_t)reps, sizeof *t);
    ct_candidates cand;
    ct_candidates_init(&cand);
    ct_collision_set cs;
    ct_collision_set_init(&cs);
    double *g = calloc(nxd, sizeof *g);
    ct_triplets H;
    ct_triplets_init(&H);
    H.upper = 1;
    ct_csc A;
    ct_csc_init(&A);

#define TIME(name, body)                                                                                               \
    do {                                                                                                               \
        if (wanted(name)) {                                                                                            \
            for (int r = -1; r < reps; ++r) {                                                                          \
                double t0_ = now();                                                                                    \
                body;                                                                                                  \
                if (r >= 0) t[r] = now() - t0_;                                                                        \
            }                                                                                                          \
            print_times(name, t, reps);                                                                                \
        }                                                                                                              \
    } while (0)

    /* ---- normal contact ---- */
    TIME("bp_prox", st = ct_broadphase_proximity(s, x0, movable, DHAT, threads, &cand));
    if (!wanted("bp_prox")) st = ct_broadphase_proximity(s, x0, movable, DHAT, threads, &cand);
    printf("C cand_vf %ld\nC cand_ee %ld\n", cand.vf.n, cand.ee.n);
    /* the face-aware weights' lag at x0 (once per step in the model, before its Newton iterations) */
    if (face && ct_contact_mesh_lag(&cm, x0, &cand, DHAT, ipc2020 || co.ee_weight == CT_EEW_AREA) != CT_OK) return 1;
    TIME("colset", st = ct_collision_set_build(&cs, &cm, &cand, NULL, 0, x0, &co));
    if (!wanted("colset")) st = ct_collision_set_build(&cs, &cm, &cand, NULL, 0, x0, &co);
    long kinds[5] = {0}, neg = 0;
    double wsum = 0;
    for (long i = 0; i < cs.n; ++i) {
        kinds[cs.c[i].kind]++;
        neg += cs.c[i].w < 0;
        wsum += cs.c[i].w;
    }
    printf("C terms %ld\nC terms_pp %ld\nC terms_pe %ld\nC terms_pt %ld\nC terms_ee %ld\nC terms_negative_w %ld\n"
           "C weight_sum %.12g\n",
           cs.n, kinds[CT_COL_PP], kinds[CT_COL_PE], kinds[CT_COL_PT], kinds[CT_COL_EE], neg, wsum);
    {
        /* per-kind energies and weight sums (agreement diagnostics) */
        static const char *kn[5] = {"pp", "pe", "pt", "ee", "ph"};
        ct_collision_set sub;
        ct_collision_set_init(&sub);
        sub.c = malloc((size_t)(cs.n + 1) * sizeof *sub.c);
        sub.cap = cs.n + 1;
        for (int k = 0; k < 4; ++k) {
            sub.n = 0;
            double wk = 0;
            for (long i = 0; i < cs.n; ++i)
                if (cs.c[i].kind == k) sub.c[sub.n++] = cs.c[i], wk += cs.c[i].w;
            printf("C energy_%s %.12g\nC weight_sum_%s %.12g\n", kn[k],
                   ct_collision_energy(&sub, &cm, NULL, x0, density, NULL, threads), kn[k], wk);
        }
        ct_collision_set_free(&sub);
    }
    double E = 0;
    TIME("energy", E = ct_collision_energy(&cs, &cm, NULL, x0, density, NULL, threads));
    printf("C energy %.12g\n", E);
    TIME("gradient", memset(g, 0, nxd * sizeof *g); st = ct_collision_gradient(&cs, &cm, NULL, x0, density, NULL, threads, g));
    printf("C grad_norm %.12g\n", norm2(g, nxd));
    TIME("hessian", ct_triplets_clear(&H); st = ct_collision_hessian(&cs, &cm, NULL, x0, density, NULL, threads, &H));
    printf("C hess_triplets_upper %zu\n", H.n);
    if (wanted("hessian")) {
        double fro;
        long nnz;
        hess_stats(&H, (int)nxd, &fro, &nnz);
        printf("C hess_fro %.12g\nC hess_nnz %ld\n", fro, nnz);
    }
    TIME("hess_csc", ct_triplets_clear(&H); st = ct_collision_hessian(&cs, &cm, NULL, x0, density, NULL, threads, &H);
         st = ct_csc_from_triplets(&A, (int)nxd, (int)nxd, &H, 1));

    /* cmap: the simulator's mapping of the (upper-triangle) contact triplets into its Newton matrix
     * (ct_assembly_fill's t_contact; the first call grows the pattern, the repeated calls here hit
     * the slot cache of an unchanged triplet sequence: the best case of a Newton iteration) */
    if (wanted("cmap")) {
        ct_triplets_clear(&H);
        ct_collision_hessian(&cs, &cm, NULL, x0, density, NULL, threads, &H);
        for (int r = -1; r < reps; ++r) {
            double tl = 0, tcm = 0;
            st = ct_assembly_fill(sim->as, sim, sim->q, 1.0, 1.0, &H, 1.0, 1, &tl, &tcm, &d);
            if (st != CT_OK) {
                ct_diag_print(&d, stderr, "cl_driver: cmap: ");
                break;
            }
            if (r >= 0) t[r] = tcm;
            else printf("C cmap_first_ms %.4f\n", 1e3 * tcm);
        }
        if (st == CT_OK) print_times("cmap", t, reps);
        st = CT_OK;
    }

    /* ---- friction (lag at x0, evaluate at x1) ---- */
    ct_friction_set fs;
    ct_friction_set_init(&fs);
    TIME("fric_build", st = ct_friction_set_build(&fs, &cs, &cm, NULL, x0, density, NULL, pair_mu, NULL));
    if (!wanted("fric_build")) st = ct_friction_set_build(&fs, &cs, &cm, NULL, x0, density, NULL, pair_mu, NULL);
    long fpos = 0;
    double lsum = 0;
    for (long i = 0; i < fs.n; ++i) {
        fpos += fs.p[i].lambda > 0;
        lsum += fs.p[i].lambda;
    }
    printf("C fric_pairs %ld\nC fric_pairs_lambda_pos %ld\nC fric_lambda_sum %.12g\n", fs.n, fpos, lsum);
    double Ef = ct_friction_energy(&fs, dim, x1, x0, eps, threads);
    printf("C fric_energy %.12g\n", Ef);
    TIME("fric_grad", memset(g, 0, nxd * sizeof *g); st = ct_friction_gradient(&fs, dim, x1, x0, eps, threads, g));
    memset(g, 0, nxd * sizeof *g);
    ct_friction_gradient(&fs, dim, x1, x0, eps, threads, g);
    printf("C fric_grad_norm %.12g\n", norm2(g, nxd));
    TIME("fric_hess", ct_triplets_clear(&H); st = ct_friction_hessian(&fs, dim, x1, x0, eps, threads, &H));
    if (wanted("fric_hess")) {
        double fro;
        long nnz;
        hess_stats(&H, (int)nxd, &fro, &nnz);
        printf("C fric_hess_fro %.12g\nC fric_hess_nnz %ld\n", fro, nnz);
    }

    /* ---- CCD: top slab down by 2 gap ---- */
    ct_candidates cc;
    ct_candidates_init(&cc);
    TIME("ccd_bp", st = ct_broadphase_ccd(s, x0, dx, movable, 0.0, threads, &cc));
    printf("C ccd_cand_vf %ld\nC ccd_cand_ee %ld\n", cc.vf.n, cc.ee.n);
    double alpha = -1;
    TIME("max_step", st = ct_model_max_step(sim->model, &sim->ctx, x0, dx, &alpha));
    printf("C alpha %.12g\n", alpha);
    if (st != CT_OK) fprintf(stderr, "cl_driver: a kernel failed (%d)\n", (int)st);

    ct_candidates_free(&cc);
    ct_friction_set_free(&fs);
    ct_csc_free(&A);
    ct_triplets_free(&H);
    ct_collision_set_free(&cs);
    ct_candidates_free(&cand);
    ct_contact_mesh_free(&cm);
    free(g);
    free(t);
    free(x1);
    free(dx);
    free(movable);
    ct_sim_destroy(sim);
    ct_scene_free(&sc);
    ct_diag_free(&d);
    return st == CT_OK ? 0 : 1;
}
