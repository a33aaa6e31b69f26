/* imls_model.h — the state shared by the imls model's two files (model-private, not a core
 * header): imls.c (parameters, the ops, forces), imls_terms.c (the fields' neighbour search, the term
 * list, its evaluation passes) and imls_step.c (the step-size rule). README.md describes the model.
 *
 * Terms. A term is one (query vertex q of body i, field of body j ≠ i) with the candidate samples
 * of j near q; its energy is w·κ·b(ψ_j(x_q)) (ct_imls_term.h), w = the vertex's rest area share
 * times the direction factor (both bodies movable: ½ each way; a movable body against a kinematic
 * one: 1 from the movable side, 0 from the kinematic side). Half-space terms (q, obstacle o) are
 * w_q·κ·b(n·(x_q − p)) and are evaluated directly. */
#ifndef CT_MODEL_IMLS_H
#define CT_MODEL_IMLS_H

#include "contactlab/ct_adhesion.h"
#include "contactlab/ct_imls_term.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_neighbors.h"
#include "contactlab/ct_vertex_normals.h"

/* one body's IMLS surface */
typedef struct imls_field {
    int n;               /* samples: the body's surface vertices */
    int *verts;          /* n x-vertex indices, increasing */
    double R;            /* kernel support radius (m) */
    double ebar, hcov;   /* mean rest edge length; covering radius (largest face circumradius in 3D, half
                            the longest segment in 2D) */
    int kinematic;       /* every sample prescribed */
    ct_imls_term_params prm; /* the field's term parameters (prm.field.R = R) */
    ct_neighbors nb;     /* over the samples at the cache positions */
    double *pts;         /* n·dim: the samples' positions handed to nb */
    double lo[3], hi[3]; /* bounding box of the samples at the cache positions */
} imls_field;

/* a body–body term */
typedef struct imls_term {
    int q;        /* query vertex */
    int qk;       /* its index in the query list (qv) */
    int qb, fb;   /* its body, the field's body */
    double w;     /* weight: rest area share × direction factor */
    long c0;      /* its candidate samples: cand[c0 .. c0 + nc) (vertex indices, increasing) */
    int nc;
} imls_term;

/* a half-space term's data is (q, o): no list needed */

/* Thread-local work memory for ct_imls_term_eval and the stencil (imls_terms.c). */
typedef struct imls_work {
    double *work;
    size_t work_len;
    int *verts;
    int cap;            /* stencil vertices verts and grad (cap·dim) hold */
    double *grad, *hess;
    size_t hcap;        /* doubles in hess */
    int *samp;
    int scap;
    double *y;          /* max_step's trial positions */
    size_t ycap;
} imls_work;

typedef struct imls_state {
    int dim, nx, nbodies, nobs;
    double dhat, kappa, kappa_max, ccd_s, margin_frac;
    double reach;                /* a term acts for ψ < reach: d̂, or max(d̂, d̂_a) with adhesion */
    double fade;                 /* the terms' fade β (ct_imls_term_params.fade) */
    int kappa_auto;
    /* sticky IMLS: Fang et al.'s normal adhesion a(ψ) per participant pair (NULL: off) */
    int np;                      /* participants: bodies, then half-spaces */
    ct_adhesion_law *law;        /* np²: the law of (a, b), Y = the smaller Young's modulus */
    ct_imls_hess_mode safe_mode; /* the Hessian mode outside the core's exact iterations */
    ct_vnormal_topo topo;        /* vertex normals over the whole contact surface */
    imls_field *field;           /* nbodies */
    double *dirw;                /* nbodies²: direction factor of (query body i, field body j) */
    int nq;                      /* query vertices: surface vertices of bodies */
    int *qv;                     /* nq vertex indices; qbody[k] their bodies */
    int *qbody;
    double *qw;                  /* nq rest area shares */
    /* the term list, valid while no surface vertex has moved more than margin/2 from x_list */
    imls_term *term;
    long nterm, term_cap;
    int *cand;
    long ncand, cand_cap;
    double *x_list;
    int list_valid;
    /* the value pass at x_eval: per term ψ, state, energy and the samples in support */
    double *x_eval;
    int eval_valid;
    double *psi, *eterm;
    unsigned char *tstate;
    int *sup;                    /* per term, at cand's offsets: the candidates within R at x_eval */
    int *nsup;
    double E_eval;               /* the whole contact energy at x_eval */
    /* statistics of the step */
    double t_nb, t_terms, t_step;
    double prev_min_dist;
    long n_list_builds;
    const char *scalar_names[6];
    ct_vnormal_cache nc0;        /* at x_eval: the normals of every sample in support (the value pass) */
    ct_vnormal_cache nc1;        /* at x_eval: with derivatives, for the active terms' samples */
    ct_vnormal_cache nc2;        /* max_step's end point check: the normals of its candidates there */
    unsigned char *mark;         /* nx, zero between uses */
    int *list;                   /* nx */
    imls_work *pool;             /* one work per thread, kept across calls */
    int npool;
} imls_state;



double imls_now(void);

static inline double imls_dist2(const double *a, const double *b, int dim)
{
    double s = 0.0;
    for (int k = 0; k < dim; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
    return s;
}

/* whether p lies in field f's box (at the list positions) grown by r */
static inline int imls_in_box(const imls_field *f, const double *p, double r, int dim)
{
    for (int d = 0; d < dim; ++d)
        if (p[d] < f->lo[d] - r || p[d] > f->hi[d] + r) return 0;
    return 1;
}

/* imls_terms.c */
/* R_given[b]: body b's radius (NAN: auto, R_factor[b] × its mean edge, floored) */
ct_status imls_fields_init(imls_state *st, const ct_step_ctx *c, const double *R_given, const double *R_factor,
                           const ct_imls_params *fp, ct_imls_hess_mode mode, ct_diag *diag);
void imls_fields_free(imls_state *st);
/* The candidate margin (nb_margin × the smallest R). */
double imls_margin(const imls_state *st);
/* Make the term list valid at x (rebuilt, with the fields' trees, when x has left the margin). */
ct_status imls_ensure_list(imls_state *st, const ct_step_ctx *c, const double *x);
/* Make the value pass current at x (the term list rebuilt when x has left its margin). */
ct_status imls_eval_value(imls_state *st, const ct_step_ctx *c, const double *x);
/* g += the gradient at x; H += the Hessian triplets (mode) at x; each calls imls_eval_value. */
ct_status imls_eval_gradient(imls_state *st, const ct_step_ctx *c, const double *x, double *g);
/* The Hessian triplets (appended to H) and, when g is not NULL, the gradient (g +=, as imls_eval_gradient)
 * in the same pass over the active terms. */
ct_status imls_eval_hessian(imls_state *st, const ct_step_ctx *c, const double *x, ct_imls_hess_mode mode,
                            ct_triplets *H, double *g);
/* The term t's gradient over its stencil at x_eval (an ACTIVE term): verts (n), grad (n·dim); with_law
 * 0: the barrier's part alone (n = 0 where only the adhesion acts). */
ct_status imls_term_gradient(imls_state *st, const double *x, long t, int with_law, imls_work *w, int *n);
/* The distance of query k in front of half-space o at x. */
double imls_halfspace_dist(const imls_state *st, const ct_step_ctx *c, const double *x, int k, int o);
/* The half-space terms at x: energy, and with g the gradient added. */
double imls_halfspace_energy(const imls_state *st, const ct_step_ctx *c, const double *x, double *g);
/* The force on query k's vertex from half-space o, the barrier's (fb) and the adhesion's (fa); 0 if none. */
int imls_halfspace_force(const imls_state *st, const ct_step_ctx *c, const double *x, int k, int o, double *fb,
                         double *fa);
/* The adhesion law of participants (a, b), NULL when it is zero (or adhesion is off). */
const ct_adhesion_law *imls_law(const imls_state *st, int a, int b);
/* Term parameters of tm: its field's, with the pair's adhesion law when with_law. */
void imls_term_prm(const imls_state *st, const imls_term *tm, int with_law, ct_imls_term_params *out);
/* imls_step.c */
ct_status imls_max_step(imls_state *st, const ct_step_ctx *c, const double *x, const double *dx, double *alpha);
/* The distinct vertices of v[0..n) appended to st->list[cnt..] (st->mark flags them); returns the new count.
 * imls_unique_end clears the flags of st->list[0..cnt) (st->mark is zero between uses). */
long imls_unique_add(imls_state *st, long cnt, const int *v, long n);
void imls_unique_end(imls_state *st, long cnt);

ct_status imls_work_ensure(imls_work *w, const imls_state *st, int kmax, ct_imls_mode what, ct_imls_hess_mode mode);
double *imls_work_y(imls_work *w, size_t n);
void imls_work_free(imls_work *w);
/* the per-thread works (st->pool): reserve before a parallel region, then each thread takes its own */
ct_status imls_pool_reserve(imls_state *st, int nthreads);
imls_work *imls_thread_work(imls_state *st);

#endif
