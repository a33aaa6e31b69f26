/* ct_parallel.h — thread counts and deterministic parallel sums (OpenMP), for the core and the
 * models alike.
 *
 * Thread-count rule. Every contactlab function that takes an `int threads` (and the `threads` of
 * ct_step_ctx, ct_colset_opts, ...) reads it through ct_threads():
 *     threads > 0    exactly that many threads;
 *     threads <= 0   the OpenMP default, omp_get_max_threads(): the count of the last
 *                    omp_set_num_threads() of the calling thread if there was one (the CLI calls
 *                    it with `--threads N`, else with the scene's `solver.threads`, when N > 0),
 *                    otherwise OMP_NUM_THREADS, otherwise the number of available cores.
 * A scene's `solver.threads` = 0 (the default) therefore means "OMP_NUM_THREADS or all cores".
 *
 * Results never depend on the thread count: parallel loops write per-item results in place, and
 * floating-point sums are formed in a fixed order (ct_sum_fixed_chunks) rather than by OpenMP
 * reductions (min and max reductions are exact, hence allowed).
 * layer: base */
#ifndef CT_PARALLEL_H
#define CT_PARALLEL_H

/* The number of threads a parallel loop asked to run on `threads` uses (the rule above); >= 1. */
int ct_threads(int threads);

/* Σ_{i<n} term(i, ctx), summed in fixed chunks of 256 terms that are added in order, so the
 * result does not depend on the thread count (the terms of a chunk are added in index order).
 * `term` is called from several threads at once. NAN if the chunk buffer cannot be allocated. */
double ct_sum_fixed_chunks(long n, double (*term)(long i, const void *ctx), const void *ctx, int threads);

#endif
