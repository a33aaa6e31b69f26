/* collisions_terms.h — the term records of a collision-set build (collisions_build.c generates
 * them, collisions_terms.c sorts, merges and writes them as the set). Private to core/contact.
 * layer: contact (internal) */
#ifndef CT_COLLISIONS_TERMS_H
#define CT_COLLISIONS_TERMS_H

#include "collisions_internal.h"

#include "contactlab/ct_distance.h"

#include <stdint.h>

/* A term is a record (key, w) in one of NBUCKET lists, one per kind (and, for mollified edge–edge
 * terms, per closest-feature type): the collision is a function of the bucket and of
 * key = k0·2³² + k1 (PP: the two vertices, smaller first; PE: point, edge; PT: point, face;
 * EE: edges a < b; PH: vertex, obstacle), so it is rebuilt from the record when the set is written
 * (types: PE P_E, PT P_T, EE A_B unless mollified; mollified EE: the bucket's type and the
 * threshold ε of its rest edges). The set is ordered by (bucket, key): the order of (kind,
 * mollified type + 1 or 0, k0, k1). Records with the same bucket and key are merged by summing
 * their weights in generation order (the sort is stable), zero sums dropped. */
enum { B_PP, B_PE, B_PT, B_EE, B_EE_MOLL, B_PH = B_EE_MOLL + 9, B_PP_E, B_PE_E, NBUCKET };
/* B_PP_E, B_PE_E: the point–point and point–edge terms of the edge–edge family when the set is
 * built with split_ee (the family's chunk lists move their B_PP / B_PE records there, so they are
 * not merged with the vertex quadrature's); empty otherwise, so they change nothing. */

typedef struct {
    uint64_t key;
    double w;
} term;

typedef struct {
    term *t;
    long n, cap;
} term_buf;

typedef struct {
    term_buf b[NBUCKET];
} term_list;

/* The chunk lists of every phase, in generation order. */
typedef struct {
    term_list *p;
    int n, cap;
} part_list;

/* Free a list's buffers (and zero it); double a buffer's room (-1 if out of memory). */
void ct_term_list_free(term_list *L);
int ct_term_buf_grow(term_buf *B);

static inline int push(term_list *L, int bucket, int k0, int k1, double w)
{
    term_buf *B = &L->b[bucket];
    if (B->n == B->cap && ct_term_buf_grow(B)) return -1;
    B->t[B->n].key = ((uint64_t)(uint32_t)k0 << 32) | (uint32_t)k1;
    B->t[B->n].w = w;
    B->n++;
    return 0;
}

/* point–point term (a, b) */
static inline int push_pp(term_list *L, int a, int b, double w)
{
    return push(L, B_PP, a < b ? a : b, a < b ? b : a, w);
}

/* point p against edge e = (e0, e1), reduced by the point–edge type t */
static inline int push_pe(term_list *L, ct_pe_type t, int p, int e, int e0, int e1, double w)
{
    if (t == CT_PE_P_E0) return push_pp(L, p, e0, w);
    if (t == CT_PE_P_E1) return push_pp(L, p, e1, w);
    return push(L, B_PE, p, e, w);
}

/* The mollifier threshold of edges ea, eb: ct_ee_mollifier_eps at the rest positions, from the
 * edges' squared rest lengths kept by the contact mesh (the same operations). */
static inline double ee_eps(const ct_contact_mesh *cm, int ea, int eb)
{
    return 1e-3 * cm->edge_l2_rest[ea] * cm->edge_l2_rest[eb];
}

/* k more empty term lists at the end of P (NULL if out of memory). */
term_list *ct_terms_new_parts(part_list *P, int k);

/* Join, sort and merge the lists of every bucket, then write the set. With face-aware weights
 * (`face`) a sum within 1e-12 of the summed magnitudes is dropped too: records that cancel (the
 * inclusion–exclusion) have equal weights when they share their closest feature at the lag, but
 * a sum like (a + b) − a − b may leave an ulp. */
ct_status ct_terms_write_set(ct_collision_set *cs, const ct_contact_mesh *cm, part_list *P, int threads, int split,
                            int face);

#endif
