/* parallel.h — small OpenMP helpers shared by the contact code. Internal. */
#ifndef CT_PARALLEL_H
#define CT_PARALLEL_H

#include <omp.h>

/* Thread count of a ctx/scene value: ≤ 0 means the OpenMP default. */
static inline int ct_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

/* Σ_{i<n} term(i, ctx), summed in fixed chunks that are added in order, so the result does not
 * depend on the thread count. NAN if the chunk buffer cannot be allocated. */
double ct_sum_fixed_chunks(long n, double (*term)(long i, const void *ctx), const void *ctx, int threads);

#endif
