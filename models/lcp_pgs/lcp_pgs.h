/* lcp_pgs.h — the state shared by the lcp_pgs model's two files (model-private, not a core
 * header): lcp_pgs.c (parameters, the local problem, the step, β) and lcp_contacts.c (the
 * contacts of a step and their frames). README.md describes the model. */
#ifndef CT_MODEL_LCP_PGS_H
#define CT_MODEL_LCP_PGS_H

#include "contactlab/ct_collisions.h"
#include "contactlab/ct_model.h"
#include "contactlab/ct_pairs.h"
#include "contactlab/ct_pgs.h"

#include <stdint.h>

/* the state a pair keeps across steps */
typedef struct {
    double beta;     /* adhesion intensity */
    double lam[3];   /* the last impulse, world frame (N s) */
    double gap;      /* the gap at the end of the last step (m) */
} pair_rec;

/* The adhesion coefficients of a contact (README.md, "Per-body parameters"): for a contact between
 * bodies a and b each of c, w, eta, r, p0 is the smaller of the two bodies' values; against a
 * half-space, the body's. debond and reach follow from them (ct_lcp_pair_coef). */
typedef struct {
    double c, w, eta, r, p0; /* C (N/m³), W (J/m²), η (J s/m²), r (1/(Pa s)), p₀ (Pa) */
    double debond;           /* full-debonding gap (m): debond_gap, or auto 2√(W/C) (∞ when C = 0) */
    double reach;            /* the contact search reach of the pair: max(margin, debond) with
                                adhesion (a bond stays in the problem until it debonds), else margin */
} lcp_coef;

/* a contact of the current step */
typedef struct {
    uint64_t key;    /* ct_pair_key(vertex, partner participant) */
    int nv;          /* stencil vertices */
    int v[4];        /* x-vertices: the contact vertex first */
    double w[4];     /* +1 on the vertex, −barycentric weights on the partner */
    int pa, pb;      /* the vertex's participant, the partner's (nbodies + o for half-space o) */
    double off;      /* the gap's constant part: −n·p for a half-space, 0 otherwise */
    double fr[3][3]; /* n, t, b */
    double gap;      /* n·(Σ w_k xⁿ_k) + off (m) */
    double area;     /* adhesion area (m²; 2D m): 0 for no adhesion */
    lcp_coef k;      /* the pair's adhesion coefficients */
    double beta;
    double lam[3];   /* this step's impulses in the frame (N s) */
    int group;       /* its group of coupled contacts */
    int edge;        /* an edge–edge contact */
    int prim;        /* the partner's face (3D) / segment (2D), −1 for a half-space or an edge–edge contact */
} contact;

typedef struct {
    double mu, beta0, margin, thick;
    double debond;              /* debond_gap as given (used when !debond_auto) */
    int debond_auto;            /* debond_gap "auto": 2√(W/C) per pair */
    lcp_coef *body;             /* nbodies: each body's coefficients (its per-body values) */
    int adhesive;               /* some body has C > 0 */
    double reach;               /* the largest pair reach that can occur (the broad phase's) */
    ct_pgs_opts opts;
    int warm;
    int dim, np, nbodies;
    unsigned char *movable;     /* nx */
    unsigned char *part_kin;    /* np: kinematic participant (every vertex prescribed), or obstacle */
    ct_contact_mesh cm;         /* face-aware vertex areas (lagged at xⁿ) */
    ct_pair_map pairs;          /* pair_rec by key */
    ct_candidates cand;
    contact *c;
    long m, cap;
    /* the local problem */
    int *ptr, *col, *grp_first, *grp_n, *order;
    double *val, *q, *mu_arr, *adh, *lam, *u;
    long val_cap, col_cap;
    long m_cap_arrays;
    double *dx;                 /* nx·dim: h v_free, the unconstrained motion of the step */
    double *x1;                 /* nx·dim: xⁿ + dx, the end of the unconstrained motion */
    long dx_cap, x1_cap;
    /* statistics of the last step */
    ct_pgs_result res;
    double min_gap;             /* the deepest end-of-step gap (m; negative: penetration) */
    int ngroups;                /* groups of coupled contacts in the last step */
    long w_blocks;              /* dim×dim blocks of W in the last step */
    double t_contacts, t_delassus, t_pgs; /* wall time of the last step's phases (s) */
    int started;
    const char *names[14];
} lcp_state;

/* The coefficients of a contact between participants pa and pb (the pair rule, lcp_coef). */
void ct_lcp_pair_coef(const lcp_state *st, int pa, int pb, lcp_coef *k);

/* The contacts of the step (st->c, st->m) with their frames, adhesion areas, β and warm-start
 * impulses; fills st->dx and st->x1 (lcp_contacts.c). */
ct_status ct_lcp_find_contacts(lcp_state *st, const ct_step_ctx *c, const ct_linear_system *sys);

/* The contact's relative velocity Σ w_k vx_k (of the vertex with respect to the partner). */
void ct_lcp_rel_velocity(const contact *ct, int dim, const double *vx, double *vr);

/* The gap of contact ct at x_next: returns the true signed gap (negative: penetration) and sets
 * *g_lin to the linear gap in the step's frame. */
double ct_lcp_end_gap(const contact *ct, const ct_step_ctx *c, const double *x_next, double *g_lin);

/* Grows *p (elements of sz bytes, capacity *cap) to hold need elements, doubling. */
ct_status ct_lcp_grow(void **p, long *cap, long need, size_t sz);

#endif
