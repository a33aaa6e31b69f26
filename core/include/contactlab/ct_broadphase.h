/* ct_broadphase.h — contact candidates of a surface (DESIGN §3).
 *
 * Candidates are primitive pairs whose boxes, inflated by `inflate`, overlap:
 *   3D: vertex–face (vf) and edge–edge (ee); 2D: vertex–edge (ve).
 * Pairs that share a vertex are never candidates. Self-contact (both primitives on the
 * same body) is included. A pair whose every vertex is kinematic (mask `movable` = 0) is
 * skipped: nothing can change its distance. Output order is deterministic (sorted).
 *
 * Proximity: boxes of the positions x. CCD: boxes of the segment x → x + dx (the union of
 * the start and end boxes of every primitive).
 * layer: contact */
#ifndef CT_BROADPHASE_H
#define CT_BROADPHASE_H

#include "ct_bvh.h"
#include "ct_mesh.h"

typedef struct ct_broadphase_work ct_broadphase_work; /* trees and scratch (broadphase.c) */

typedef struct ct_candidates {
    ct_pair_list vf; /* (vertex index, face index) — 3D */
    ct_pair_list ee; /* (edge index, edge index), first < second — 3D */
    ct_pair_list ve; /* (vertex index, edge index) — 2D */
    ct_broadphase_work *work; /* the queries' trees, boxes and thread lists, kept from call to
                                 call (owned; NULL before the first query) */
} ct_candidates;

void ct_candidates_init(ct_candidates *c);
void ct_candidates_clear(ct_candidates *c); /* n = 0, memory kept */
void ct_candidates_free(ct_candidates *c);

/* movable: nv flags (NULL = all movable). `out` is cleared first. Inflation: vertex boxes
 * by `inflate` against uninflated face/edge boxes; edge–edge boxes by inflate/2 each; so
 * every pair at distance <= inflate (CCD: at some time of the linear motion) is a candidate. */
ct_status ct_broadphase_proximity(const ct_surface *s, const double *x,
                                  const unsigned char *movable, double inflate, int threads,
                                  ct_candidates *out);
ct_status ct_broadphase_ccd(const ct_surface *s, const double *x, const double *dx,
                            const unsigned char *movable, double inflate, int threads,
                            ct_candidates *out);

/* The closest pair of one part's own surface primitives that share no vertex, among the pairs
 * nearer than `within` at x (part: the participant of each vertex, e.g. its body; pairs of two
 * parts and pairs with no movable vertex are left out): vertex–face or edge–edge in 3D,
 * vertex–edge in 2D. A contact model whose energy acts within `within` checks the rest shape with
 * it: such a pair would be pushed apart (or pulled together) before anything touches. */
typedef enum { CT_SELF_NONE = 0, CT_SELF_VF, CT_SELF_EE, CT_SELF_VE } ct_self_kind;
typedef struct ct_self_closest {
    ct_self_kind kind; /* CT_SELF_NONE: no pair nearer than within */
    int a, b;          /* VF: vertex, face; EE: edge, edge; VE: vertex, edge */
    int part;
    double d;          /* their distance (m); INFINITY for CT_SELF_NONE */
} ct_self_closest;
ct_status ct_broadphase_self_closest(const ct_surface *s, const double *x, const int *part,
                                     const unsigned char *movable, double within, int threads,
                                     ct_self_closest *out);

#endif
