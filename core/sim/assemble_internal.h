/* assemble_internal.h — what the files of the Newton-matrix assembly share (private to
 * assemble.c: the fixed pattern, its growth, the base gather and ct_assembly_fill;
 * assemble_general.c: model triplets mapped one by one, through J where needed;
 * assemble_slots.c: the slot path and its cache). The contract is in assemble.h. */
#ifndef CT_ASSEMBLE_INTERNAL_H
#define CT_ASSEMBLE_INTERNAL_H

#include "sim/assemble.h"

/* Grow the pattern by the (row, col) pairs in `extra` (values ignored; duplicates, pairs
 * already stored and lower-triangle pairs are dropped). The extra rows are bucketed by column,
 * deduplicated, sorted and merged into A's columns: the same pattern as rebuilding it from all
 * pairs, without sorting what is already sorted. With remap_out, *remap_out receives the old
 * slot -> new slot map (malloc'ed). A valid slot cache is moved to the new pattern. */
ct_status ct_assembly_grow_pattern(ct_assembly *as, const ct_triplets *extra, int **remap_out);

/* xfree[i] for every full-space dof i: the free index of its q dof when its vertex maps with
 * the single weight 1 (−1 if that dof is fixed), −2 when the vertex needs the general path. */
ct_status ct_assembly_build_xfree(ct_assembly *as, const ct_sim *s);

/* The general path: A += w_c J^T Hc J, triplet by triplet (assemble_general.c). Entries
 * missing from the pattern are appended to as->tq (the caller grows the pattern and
 * starts again). */
ct_status ct_assembly_map_general(ct_assembly *as, const ct_sim *s, const ct_triplets *Hc, double w_c);

/* The slot path (assemble_slots.c): the slot in A of every triplet of Hc into as->cm_slot,
 * the pattern grown first if some are missing; *ready = 0 when the general path must be
 * taken instead. Hc's lazy rows are written unless its block table drives the mapping. Then
 * ct_assembly_scatter_slots adds w_c Hc in triplet order. */
ct_status ct_assembly_map_slots(ct_assembly *as, const ct_sim *s, ct_triplets *Hc, int *ready);
void ct_assembly_scatter_slots(ct_assembly *as, const ct_triplets *Hc, double w_c);
/* Free the slot cache's scratch (as->cm_aux). */
void ct_assembly_cache_free(ct_assembly *as);

#endif
