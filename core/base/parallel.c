/* parallel.c — thread counts and deterministic parallel sums (see ct_parallel.h). */
#include "contactlab/ct_parallel.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>

int ct_threads(int threads) { return threads > 0 ? threads : omp_get_max_threads(); }

double ct_sum_fixed_chunks(long n, double (*term)(long i, const void *ctx), const void *ctx, int threads)
{
    enum { CHUNK = 256 };
    long nchunk = (n + CHUNK - 1) / CHUNK;
    double *part = malloc(((size_t)nchunk + 1) * sizeof *part);
    if (!part) return NAN;
#pragma omp parallel for schedule(dynamic, 4) num_threads(ct_threads(threads))
    for (long k = 0; k < nchunk; ++k) {
        double e = 0.0;
        long end = (k + 1) * CHUNK < n ? (k + 1) * CHUNK : n;
        for (long i = k * CHUNK; i < end; ++i) e += term(i, ctx);
        part[k] = e;
    }
    double E = 0.0;
    for (long k = 0; k < nchunk; ++k) E += part[k];
    free(part);
    return E;
}
