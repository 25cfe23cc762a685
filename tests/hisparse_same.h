/* Equality of HiSparse trees and schedules, byte for byte, for test_hisparse (the backend
 * build and sum against the host builder and dual traversal) and test_gpu_hisparse (the GPU
 * build against the CPU backend's). */
#ifndef SPS_TEST_HISPARSE_SAME_H
#define SPS_TEST_HISPARSE_SAME_H

#include "formats/hisparse.h"
#include "testutil.h"

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

/* sps_matrix_add(alpha, op(A), beta, op(B)) of hisparse A and B into node size d by both of
 * the backend's paths, the one-pass sum (the default small-sum: count[0] counts the calls
 * whose lists it sorts in one block, count[1] the longer ones, listed and sorted first) and
 * the general one (small-sum 0): the same tree and schedule, byte for byte (the same
 * arithmetic on each backend, so the values to the bit). */
static inline int hs_same_sum_paths(sps_context ctx, const void *alpha, sps_matrix A, sps_op_mode opA,
                                    const void *beta, sps_matrix B, sps_op_mode opB, const char *d, int count[2])
{
    sps_options o1 = tu_fopts(SPS_FMT_HISPARSE, "node-size", d, NULL),
                o0 = tu_fopts(SPS_FMT_HISPARSE, "node-size", d, "small-sum", "0", NULL);
    sps_matrix C1 = NULL, C0 = NULL;
    sps_hisparse_copy a, b, c1, c0;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&c1, 0, sizeof c1), memset(&c0, 0, sizeof c0);
    int ok = o1 && o0 && TU_OK(ctx, sps_matrix_add(alpha, A, opA, beta, B, opB, o1, &C1)) &&
             TU_OK(ctx, sps_matrix_add(alpha, A, opA, beta, B, opB, o0, &C0)) &&
             TU_OK(ctx, sps_hisparse_download(C1, &c1)) && TU_OK(ctx, sps_hisparse_download(C0, &c0)) &&
             TU_OK(ctx, sps_hisparse_download(A, &a)) && TU_OK(ctx, sps_hisparse_download(B, &b));
    if (ok) {
        const int64_t slots = a.nwarps * SPS_HS_RUN + a.ndense * (int64_t)a.H.d * a.H.d + b.nwarps * SPS_HS_RUN +
                              b.ndense * (int64_t)b.H.d * b.H.d;
        if (a.H.nnz + b.H.nnz > 0 && c1.H.depth <= SPS_HS_SMALL_DEPTH) count[slots > SPS_HS_SMALL_SLOTS]++;
        ok = hs_same_tree(&c1.H, &c0.H) && hs_same_sched(&c1, &c0);
    }
    sps_hisparse_copy_free(&a), sps_hisparse_copy_free(&b), sps_hisparse_copy_free(&c1), sps_hisparse_copy_free(&c0);
    sps_matrix_destroy(C1), sps_matrix_destroy(C0);
    sps_options_destroy(o1), sps_options_destroy(o0);
    return ok;
}

#endif
