/* Helpers shared by the CPU kernels (not type-generic). */
#ifndef SPS_CPU_COMMON_H
#define SPS_CPU_COMMON_H
#include "kernels/backend.h"

/* Below this many rows (vector entries) a kernel runs on the calling thread.  One
 * threshold for every kernel of a solve, so that a solve's kernels are either all
 * serial or all parallel: a team idling through serial kernels between parallel
 * ones costs a wake-up each time, and while it spins it slows the serial thread
 * (a 10^4-row CG: 10.6 ms on 1 thread, 14.9 ms on 2 with parallel SpMV and serial
 * vector kernels, 2-core VM).  The value: from 2^15 rows up, 2 threads were not
 * slower than 1 there (bench/results/cpu-threads.md). */
#define SPS_OMP_MIN 32768
/* An SpMV this heavy forks whatever its rows (few long rows). */
#define SPS_OMP_NNZ_MIN ((int64_t)1 << 20)
/* Whether a kernel over n rows and nnz entries forks a team. */
static inline int sps_omp_rows(sps_index n, int64_t nnz) { return n > SPS_OMP_MIN || nnz > SPS_OMP_NNZ_MIN; }

/* Reductions split [0, n) into a number of chunks that depends on n only, sum each
 * chunk in order, then the chunk sums in order: the result is bit-identical
 * whatever the number of threads. */
#define SPS_RED_MAX_CHUNKS 256
#define SPS_RED_MIN_CHUNK 4096
static inline int sps_red_chunks(sps_index n)
{
    int64_t k = ((int64_t)n + SPS_RED_MIN_CHUNK - 1) / SPS_RED_MIN_CHUNK;
    if (k < 1) k = 1;
    if (k > SPS_RED_MAX_CHUNKS) k = SPS_RED_MAX_CHUNKS;
    return (int)k;
}
static inline sps_index sps_chunk_lo(sps_index n, int k, int c) { return (sps_index)(((int64_t)n * c) / k); }

/* max(m, a) where a NaN on either side wins and then stays: a maximum that
 * skipped a NaN would report a vector holding one as finite. */
static inline double sps_nanmax(double m, double a) { return a > m || a != a ? a : m; }

#endif
