/* Helpers shared by the CPU kernels (not type-generic). */
#ifndef SPS_CPU_COMMON_H
#define SPS_CPU_COMMON_H
#include "kernels/backend.h"

/* Below this many entries a loop runs on the calling thread: forking a team
 * costs more than the loop (and a lot more on an oversubscribed machine). */
#define SPS_OMP_MIN 16384
/* Rows (or columns) below which a parallel region of the formats' kernels and the
 * SpMV^T scatter's reduction (tscatter.inc) cost more than they save. */
#define SPS_OT_PAR_MIN 4096

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

#endif
