/* Equality of HiSparse trees and schedules, byte for byte, for test_hisparse (the backend
 * build and sum against the host builder and dual traversal) and test_gpu_hisparse (the GPU
 * build against the CPU backend's). */
#ifndef SPS_TEST_HISPARSE_SAME_H
#define SPS_TEST_HISPARSE_SAME_H

#include "formats/hisparse.h"
#include "testutil.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
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

/* sps_matrix_add refuses a sum that overflows (finite operands and scales): SPS_ERR_NUMERIC
 * naming the entry, no C.  A of n x n, about k entries a row valued in [0.5, 1.5), one of
 * 0.6 x the largest finite value at (n / 2, n / 2 + 1), none at (n / 2 + 1, n / 2): A + A
 * overflows it by both members, 2 A + A^T by A's alone.  Each by the one-pass sum (default
 * small-sum; which of its kernels depends on n k) and the general one (small-sum 0). */
static inline int hs_overflow_refused(sps_context ctx, sps_scalar t, int n, int k, tu_rng *rng)
{
    const int r0 = n / 2, c0 = n / 2 + 1, sp = t == SPS_F32 || t == SPS_C32, cx = t == SPS_C32 || t == SPS_C64;
    const size_t vs = sps_scalar_size(t);
    sps_index *rp = malloc(((size_t)n + 1) * sizeof *rp), *col = malloc((size_t)n * (k + 1) * sizeof *col);
    unsigned char *val = calloc((size_t)n * (k + 1), vs), *mark = calloc((size_t)n, 1);
    int ok = rp && col && val && mark;
    if (ok) {
        rp[0] = 0;
        for (int i = 0; i < n; i++) {
            memset(mark, 0, (size_t)n);
            for (int j = 0; j < k; j++) mark[tu_rng_u64(rng) % (uint64_t)n] = 1;
            if (i == r0) mark[c0] = 1;
            if (i == c0) mark[r0] = 0;
            sps_index e = rp[i];
            for (int c = 0; c < n; c++) {
                if (!mark[c]) continue;
                const double x = i == r0 && c == c0 ? 0.6 * (sp ? FLT_MAX : DBL_MAX) : 0.5 + tu_rng_uniform(rng);
                unsigned char *p = val + (size_t)e * vs;
                if (sp) *(float *)(void *)p = (float)x;
                else *(double *)(void *)p = x;
                if (cx && sp) ((float *)(void *)p)[1] = 0.25f;
                else if (cx) ((double *)(void *)p)[1] = 0.25;
                col[e++] = c;
            }
            rp[i + 1] = e;
        }
    }
    sps_matrix A = NULL;
    ok = ok && TU_OK(ctx, sps_matrix_from_csr(ctx, n, n, rp, col, val, t, &A));
    unsigned char one[16] = {0}, two[16] = {0};
    if (sp) *(float *)(void *)one = 1.0f, *(float *)(void *)two = 2.0f;
    else *(double *)(void *)one = 1.0, *(double *)(void *)two = 2.0;
    char want[64];
    snprintf(want, sizeof want, "at entry (%d, %d)", r0, c0);
    for (int path = 0; A && path < 2; path++) { /* each path checked whatever the other's result */
        sps_options o = path ? tu_fopts(SPS_FMT_HISPARSE, "small-sum", "0", NULL) : NULL;
        for (int alone = 0; alone < 2; alone++) {
            sps_matrix C = (sps_matrix)&C;
            sps_context_clear_error(ctx);
            const sps_status st =
                sps_matrix_add(alone ? two : one, A, SPS_OP_N, one, A, alone ? SPS_OP_T : SPS_OP_N, o, &C);
            const int good = st == SPS_ERR_NUMERIC && !C && strstr(sps_context_error(ctx), want);
            TU_CHECK(good, "%s n=%d k=%d %s path: %s overflowing: %s '%s'", sps_scalar_name(t), n, k,
                     path ? "general" : "one-pass", alone ? "2 A + A^T" : "A + A", sps_status_name(st),
                     sps_context_error(ctx));
            if (st == SPS_OK) sps_matrix_destroy(C);
            ok = ok && good;
        }
        sps_options_destroy(o);
    }
    sps_context_clear_error(ctx);
    sps_matrix_destroy(A);
    free(rp), free(col), free(val), free(mark);
    return ok;
}

#endif
