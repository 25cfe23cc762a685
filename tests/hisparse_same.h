/* Equality of HiSparse trees and schedules, byte for byte, for test_hisparse (the backend
 * build and sum against the host builder and dual traversal) and test_gpu_hisparse (the GPU
 * build against the CPU backend's). */
#ifndef SPS_TEST_HISPARSE_SAME_H
#define SPS_TEST_HISPARSE_SAME_H

#include "formats/hisparse.h"

#include <string.h>

/* the same pool, root, shape and node counts */
static inline int hs_same_tree(const sps_hisparse *a, const sps_hisparse *b)
{
    return a->bytes == b->bytes && a->root == b->root && a->nnz == b->nnz && a->depth == b->depth && a->d == b->d &&
           a->leaf_slots == b->leaf_slots && !memcmp(a->nodes, b->nodes, sizeof a->nodes) &&
           !memcmp(a->pool, b->pool, a->bytes);
}

/* the same work items and warps */
static inline int hs_same_sched(const sps_hisparse_copy *a, const sps_hisparse_copy *b)
{
    return a->nsparse == b->nsparse && a->ndense == b->ndense && a->nwarps == b->nwarps &&
           (!a->nsparse || (!memcmp(a->sparse, b->sparse, (size_t)a->nsparse * sizeof *a->sparse) &&
                            !memcmp(a->warp_seg, b->warp_seg, ((size_t)a->nwarps + 1) * sizeof *a->warp_seg))) &&
           (!a->ndense || !memcmp(a->dense, b->dense, (size_t)a->ndense * sizeof *a->dense));
}

#endif
