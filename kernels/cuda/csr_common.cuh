/* libspsolve — CUDA: the CSR row groups shared by csr.cu (SpMV, SpMV^T) and
 * csr_fused.cu (the fused products the solvers use): the row-group shape (lanes a
 * row, entries in flight, staged passes), the group sums, the staged and direct row
 * loops, the long/medium-row pass and the block's row dispatch.  What the kernels
 * compute, and why this shape is fast, is in csr.cu's header. */
#ifndef SPS_CUDA_CSR_COMMON_CUH
#define SPS_CUDA_CSR_COMMON_CUH
#include "kernels/cuda/common.cuh"
#include "kernels/csr_rows.h"

#include <limits.h>

namespace {

/* ---------------------------------------------------------------- CSR */
/* Lanes a row = largest power of two <= avg >> shift, shift = 2 for 4-byte values,
 * 1 for 8-byte, 0 for 16-byte: 2-4 entries per lane, so each lane keeps independent
 * loads in flight and the group's shuffle tree is short (H100, spbench 2026-11-23:
 * poisson3d-128 f64 0.104 -> 0.094 ms, banded-s1e3 f64 0.187 -> 0.154 ms against
 * one entry per lane).  A run-time variant of csr_spmv (kernels/launch.h
 * csr_lane_entries = 2^shift) takes the neighbouring shift. */
/* Entries a lane keeps in flight (predicated, so a row of up to U TPR entries costs
 * one round trip: col/val, then x): 4 for 4-byte values, 2 for 8- and 16-byte
 * (about the same bytes in flight).  H100, spbench 2026-11-23, geomean over the five
 * generated matrices with nnz >= 1e6 against the best cuSPARSE CSR: f32 U=4 0.924,
 * U=2 0.914; f64 U=4 0.895, U=2 0.941 (the old 2-in-flight loop with a serial tail:
 * 0.854 / 0.910).  Re-measured in session 3 (f64, same five matrices): default
 * 0.941, U=3 0.933, TPR shift 0 (TPR 16 for 22 a row) 0.911, shift 0 with U=4
 * 0.819.  The other of 2 and 4 is a run-time variant of csr_spmv (csr_unroll): the
 * geometric means say default, single matrices may not.
 * Rows a staged pass in units of 256/TPR (csr_rows_staged; 0: direct loads), K:
 * 1 for 4-byte values, 2 for larger; the other of 1 and 2 is a run-time variant
 * (csr_stage_rows). */
/* Matrices of few rows: where rows hold 8 or more entries on average, the lanes a
 * row are doubled (up to 32) while n TPR is below csr_min_threads (about half
 * an H100's resident threads), so that the rows spread over the GPU.  H100,
 * spbench 2026-11-25 (bench/results/csr-small-nvidia-h100-2026-11-25.md), ms,
 * before -> after: f32 cage10 (11k rows, 13 a row) 0.0348 -> 0.0091, bcsstk16
 * (4.9k rows, 59 a row) 0.0239 -> 0.0083, gridgena (49k rows, 10.5 a row) 0.0214
 * -> 0.0113, wathen100 (30k rows, 15.5 a row) 0.0299 -> 0.0117; f64 cage10 0.0116
 * -> 0.0083, bcsstk16 0.0107 -> 0.0083, wathen100 0.0106 -> 0.0114.  Shorter rows
 * keep the avg >> shift rule (below): one lane a row is fastest on poisson3d-48,
 * jnlbrng1, shallow_water1 and luxembourg_osm, 2 to 8 lanes cost them 10-100 %.
 * csr_lat (the fused CG iteration) does not spread.  The threshold was measured
 * off, 128k, 256k and 512k threads (bench/results/csr-small-nvidia-h100-2026-11-25-mt*.csv):
 * 128k kept, the others lost; no longer a knob. */
constexpr int64_t csr_min_threads = SPS_CSR_MIN_THREADS; /* kernels/csr_rows.h */
/* The shape of the row groups: lanes a row from avg >> shift, U entries in flight a
 * lane.  csr_bw: the bandwidth-bound kernels (the rules above).  csr_lat: the fused
 * CG iteration, whose rows sit in L2 (it runs only where they fit one resident
 * wave): shift 2 and U = 4 (2 for c64), so poisson3d-48 f64 (7 a row) takes one
 * lane a row and one round trip, and its 432 blocks of rows fit the 528 resident
 * ones (TPR 2 gave 864: two rounds of rows, 26 us a CG iteration). */
template <typename T> struct csr_bw {
    static constexpr int64_t min_threads = csr_min_threads;
    static constexpr int shift = sizeof(T) <= 4 ? 2 : sizeof(T) <= 8 ? 1 : 0; /* = sps_csr_lane_shift */
    static constexpr int U = sizeof(T) <= 4 ? 4 : 2;
    static constexpr int K = sizeof(T) <= 4 ? 1 : 2;
};
/* csr_bw with shift, U and K of a run-time variant (csr.cu csr_variants). */
template <typename T, int SHIFT, int U_, int K_> struct csr_shape : csr_bw<T> {
    static constexpr int shift = SHIFT, U = U_, K = K_;
};
template <typename T> struct csr_lat {
    static constexpr int64_t min_threads = 0;
    static constexpr int shift = 2, U = sizeof(T) <= 8 ? 4 : 2; /* complex double: 4 spilled at 64 registers */
    static constexpr int K = 0; /* direct loads */
};
/* Lanes a row from n and nnz: the same on the host (grid sizing) and the device. */
template <typename T, typename S = csr_bw<T>> __host__ __device__ inline int csr_tpr_of(sps_index n, int64_t nnz)
{
    return sps_csr_tpr(n, nnz, S::shift, S::min_threads);
}

/* Matrix arrays and gathered vector through the read-only path (ldg_t), without
 * cache-eviction hints: the hints measured gained nothing or lost
 * (bench/results/csr-tuning-nvidia-h100-2026-11-23.md). */
/* The vector the rows multiply: x itself (common.cuh) ... */
template <typename T> using csr_x_plain = sps_cu_xplain<T>;

/* Row [beg, end) by a group of TPR lanes: lane l sums entries beg + l, + TPR, ...
 * left to right, U of them in flight (independent predicated loads), then the
 * group's shuffle-down tree; the total is in lane 0. */
template <typename T, int TPR, int U, typename X>
__device__ inline T csr_group_sum(sps_index beg, sps_index end, int lane, unsigned mask, const sps_index *col,
                                  const T *val, const X &x)
{
    T s = zero_of<T>();
    for (sps_index k = beg + lane; k < end; k += U * TPR) {
        sps_index c[U];
        T v[U], xv[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            const bool ok = k + j * TPR < end;
            c[j] = ok ? ldg_t(col + k + j * TPR) : 0;
            v[j] = ok ? ldg_t(val + k + j * TPR) : zero_of<T>();
        }
#pragma unroll
        for (int j = 0; j < U; j++) xv[j] = k + j * TPR < end ? x(c[j]) : zero_of<T>();
#pragma unroll
        for (int j = 0; j < U; j++)
            if (k + j * TPR < end) s = s + v[j] * xv[j];
    }
#pragma unroll
    for (int off = TPR / 2; off > 0; off /= 2) s = s + shfl_down(mask, s, off, TPR);
    return s;
}

/* Rows of this thread's group: row = global group id, stride = groups in the grid.
 * All TPR lanes of a group run the same row loop, so a group stays converged and
 * shuffles with the group's own lane mask.  The form of csr_lat (its rows sit
 * in L2) and of csr_dot_bw for f64 z + c p_old. */
/* A group's lanes in its warp, for its shuffles. */
template <int TPR> __device__ inline unsigned csr_group_mask()
{
    return TPR == 32 ? 0xffffffffu : (((1u << TPR) - 1) << ((threadIdx.x & 31) & ~(TPR - 1)));
}
template <typename T, int TPR, int U, typename X, typename Out>
__device__ void csr_rows_direct(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, X x,
                                Out &out, sps_index long_len, unsigned nblocks)
{
    const int lane = threadIdx.x & (TPR - 1);
    const unsigned mask = csr_group_mask<TPR>();
    const sps_index groups = (sps_index)(nblocks * blockDim.x / TPR);
    for (sps_index i = (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / TPR); i < n; i = sps_cu_next(i, groups, n)) {
        const sps_index beg = __ldg(rowptr + i), end = __ldg(rowptr + i + 1);
        if (end - beg > long_len) continue; /* a medium or long row: its block did it first */
        const T s = csr_group_sum<T, TPR, U>(beg, end, lane, mask, col, val, x);
        if (lane == 0) out(i, s);
    }
}

/* Staged passes (the bandwidth shape, csr_bw).  A pass is the block's next
 * K 256/TPR consecutive rows (pass p of block b: rows (b + p nblocks) K 256/TPR
 * on).  Its entries [e0, e1) are contiguous: the whole block loads them coalesced
 * from e0 rounded down to 32 entries, so every load instruction reads whole
 * 128-byte lines, through ld.global.nc.L1::no_allocate (each line is used by the
 * one instruction that reads it), gathers x with ordinary loads and puts the
 * products in shared memory; then each group of TPR lanes sums its rows from
 * there, lane l entries l, l + TPR, ... in order, then the shuffle tree.  Why it is
 * faster than the groups loading their own rows (our reading of ncu on
 * banded-s1e3, where the time followed the L2-to-L1 sectors read: f64 direct
 * 20.1M sectors 138 us, cuSPARSE CSR 15.4M 123 us): a group's TPR-entry segments
 * straddle sectors, so the direct loads need the L1 to keep matrix lines between
 * instructions, and that streamed data pushes x out; staged, the L1 holds x.
 * H100, spbench 2026-11-23, against the direct form in the same run: f32
 * banded-s1e5 0.2028 -> 0.1777 ms, stencil27b3-40 0.0614 -> 0.0561;
 * f64 (K = 2) banded-s1e3 0.1428 -> 0.1358, banded-s1e5 0.2093 -> 0.1935,
 * poisson3d-128 0.0953 -> 0.0945.  Today (H100, read flush, spbench 2026-11-25,
 * bench/results/spbench-nvidia-h100-80gb-hbm3-2026-11-25-formats.md), f64 / f32 ms against cuSPARSE
 * CSR ALG1: poisson3d-128 0.0826 / 0.0518 (0.1062 / 0.0656), stencil27b3-40
 * 0.0745 / 0.0510 (0.0839 / 0.0557), banded-s1e3 0.1263 / 0.0847 (0.1276 /
 * 0.0797), banded-s1e5 0.1935 / 0.1764 (0.1925 / 0.1770).  The variants of this
 * loop measured and dropped (ordinary loads, other K, smaller passes, two
 * buffers, a contiguous slice of rows a block, the next pass's bounds loaded
 * early) are in bench/results/csr-tuning-nvidia-h100-2026-11-23.md.
 * A pass whose entries exceed the buffer falls back to the
 * direct loads for its rows; the medium and long rows (summed first, csr_for_long_rows) are
 * skipped but count towards the buffer, so a pass holding one usually falls back.
 * Products are rounded before the sum (no FMA), so staged and direct sums can
 * differ in the last bit; which form a pass takes depends on the matrix only. */
template <int BYTES> __device__ inline unsigned char *csr_stage_buf()
{
    __shared__ __align__(16) unsigned char buf[BYTES];
    return buf;
}
/* The row bounds of a pass: its group's K rows and the pass's entry range. */
template <int K> struct csr_pass {
    sps_index beg[K], end[K], e0, e1, rb;
};
template <int K, int G, int B>
__device__ inline csr_pass<K> csr_pass_load(int64_t r0, sps_index n, sps_index g, const sps_index *rowptr)
{
    csr_pass<K> p;
    p.rb = r0 + B < n ? (sps_index)(r0 + B) : n;
#pragma unroll
    for (int q = 0; q < K; q++) {
        const sps_index i = (sps_index)r0 + g + q * G;
        p.beg[q] = i < p.rb ? __ldg(rowptr + i) : 0;
        p.end[q] = i < p.rb ? __ldg(rowptr + i + 1) : 0;
    }
    p.e0 = __ldg(rowptr + r0);
    p.e1 = __ldg(rowptr + p.rb);
    return p;
}
template <typename T, int TPR, int U, int K, typename X, typename Out>
__device__ void csr_rows_staged(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, X x,
                                Out &out, sps_index long_len, unsigned nblocks)
{
    constexpr int G = SPS_CU_THREADS / TPR; /* groups a block */
    constexpr int B = G * K;                /* rows a pass */
    constexpr int BYTES = 8192 * K;
    constexpr int CAP = BYTES / (int)sizeof(T); /* entries a pass */
    constexpr int PER = CAP / SPS_CU_THREADS;
    static_assert(PER * SPS_CU_THREADS == CAP, "the buffer holds whole block loads");
    T *const prod = reinterpret_cast<T *>(csr_stage_buf<BYTES>());
    const int lane = threadIdx.x & (TPR - 1);
    const unsigned mask = csr_group_mask<TPR>();
    const sps_index g = (sps_index)(threadIdx.x / TPR);
    for (int64_t r0 = (int64_t)blockIdx.x * B; r0 < n; r0 += (int64_t)nblocks * B) { /* uniform */
        const csr_pass<K> cur = csr_pass_load<K, G, B>(r0, n, g, rowptr);
        const sps_index rb = cur.rb;
        const sps_index ea = cur.e0 & ~31; /* 128-byte lines of col */
        const bool staged = cur.e1 - ea <= CAP; /* uniform */
        if (staged) { /* offsets from ea: no index past e1 is formed */
            sps_cu_stage_products<PER, SPS_CU_THREADS, true, true>(col, val, x, ea, (int)(cur.e0 - ea),
                                                                   (int)(cur.e1 - ea), prod);
            __syncthreads();
        }
#pragma unroll
        for (int q = 0; q < K; q++) {
            const sps_index i = (sps_index)r0 + g + q * G;
            if (i >= rb || cur.end[q] - cur.beg[q] > long_len) continue; /* medium or long: done first */
            T s = zero_of<T>();
            if (staged) {
                for (sps_index k = cur.beg[q] + lane; k < cur.end[q]; k += TPR) s = s + prod[k - ea];
#pragma unroll
                for (int off = TPR / 2; off > 0; off /= 2) s = s + shfl_down(mask, s, off, TPR);
            } else
                s = csr_group_sum<T, TPR, U>(cur.beg[q], cur.end[q], lane, mask, col, val, x);
            if (lane == 0) out(i, s);
        }
        if (staged) __syncthreads(); /* prod reused by the next pass */
    }
}

template <typename T, int TPR, typename S, typename X, typename Out>
__device__ void csr_rows(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, X x, Out &out,
                         sps_index long_len, unsigned nblocks)
{
    if constexpr (S::K > 0)
        csr_rows_staged<T, TPR, S::U, S::K>(n, rowptr, col, val, x, out, long_len, nblocks);
    else
        csr_rows_direct<T, TPR, S::U>(n, rowptr, col, val, x, out, long_len, nblocks);
}

/* Long and medium rows.  A row of more than max(1024, 64 TPR) entries would keep
 * one group of TPR lanes busy long after the rest of the grid is done (one row of
 * 200k, power-law degree distributions), and rows of more than 8 TPR entries leave
 * the other groups of their warp idle while they finish (a warp is as slow as its
 * longest row: power-law-2M, mean 20, 10% of the rows above 32).  So each block
 * first takes the rows of its own slice [n b / B, n (b+1) / B) (B: the blocks that
 * have rows) that are long, with all its 256 threads (CUB BlockReduce: a fixed
 * tree), then those that are medium, one warp a row (the k-th medium row of a
 * chunk of 256 rows to warp k mod 8), and the row groups skip both.  Which rows
 * are long or medium depends on the matrix only: still deterministic.  Cost when
 * there are none: one more read of the block's slice of rowptr. */
/* (the lengths: kernels/csr_rows.h; medium: longer than 8 TPR, a warp's worth at TPR 4) */
__host__ __device__ inline sps_index csr_long_len(int tpr) { return sps_csr_long_len(tpr); }
__host__ __device__ inline sps_index csr_med_len(int tpr) { return sps_csr_med_len(tpr); }

/* Blocks that have rows: the grid is sized for TPR = 32; with TPR lanes a row,
 * ceil(n TPR / 256) blocks cover every row once, the others return at once. */
__device__ inline unsigned csr_active_blocks(sps_index n, int tpr)
{
    const int64_t need = ((int64_t)n * tpr + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    return need < (int64_t)gridDim.x ? (unsigned)(need > 0 ? need : 1) : gridDim.x;
}

/* Calls f.block(i) with the whole block for every long row i of this block's slice,
 * in order, then f.warp(i) with one warp for each medium row. */
template <typename F>
__device__ void csr_for_long_rows(sps_index n, const sps_index *rowptr, sps_index long_len, sps_index med_len,
                                  unsigned nblocks, const F &f)
{
    __shared__ unsigned char cls[SPS_CU_THREADS];
    const sps_index lo = (sps_index)((int64_t)n * blockIdx.x / nblocks);
    const sps_index hi = (sps_index)((int64_t)n * (blockIdx.x + 1) / nblocks);
    const int warp = (int)(threadIdx.x / 32), lane = (int)(threadIdx.x & 31);
    for (sps_index base = lo; base < hi; base = sps_cu_next(base, SPS_CU_THREADS, hi)) {
        const sps_index r = base + (sps_index)threadIdx.x;
        const sps_index len = r < hi ? rowptr[r + 1] - rowptr[r] : 0;
        const int c = len > long_len ? 2 : len > med_len ? 1 : 0;
        if (__syncthreads_count(c) == 0) continue; /* uniform: none here */
        cls[threadIdx.x] = (unsigned char)c;
        __syncthreads();
        for (int j = 0; j < SPS_CU_THREADS; j++)
            if (cls[j] == 2) f.block(base + j); /* uniform */
        int rank = 0; /* medium rows seen so far in this chunk: the same count in every warp */
        for (int c0 = 0; c0 < SPS_CU_THREADS; c0 += 32) {
            unsigned m = __ballot_sync(0xffffffffu, cls[c0 + lane] == 1);
            for (; m; m &= m - 1, rank++)
                if (rank % (SPS_CU_THREADS / 32) == warp) f.warp(base + c0 + __ffs(m) - 1); /* warp-uniform */
        }
        __syncthreads(); /* cls reused */
    }
}

/* Tag: void, or a run-time variant's shape (csr_shape), so that a variant's kernel
 * shares no __shared__ static of csr_for_long_rows with the default's (shared, the
 * static moves to module scope in the PTX: the default's code would change). */
template <typename S> struct csr_long_tag { typedef void type; };
template <typename T, int A, int B, int C> struct csr_long_tag<csr_shape<T, A, B, C>> {
    typedef csr_shape<T, A, B, C> type;
};
template <typename T, int U, typename X, typename Out, typename Tag> struct csr_long_row {
    const sps_index *rowptr, *col; const T *val; X x; Out *out;
    typename cub::BlockReduce<T, SPS_CU_THREADS>::TempStorage *tmp;
    __device__ void block(sps_index i) const
    {
        T s = zero_of<T>();
        for (sps_index k = rowptr[i] + (sps_index)threadIdx.x; k < rowptr[i + 1];
             k = sps_cu_next(k, SPS_CU_THREADS, rowptr[i + 1]))
            s = s + ldg_t(val + k) * x(ldg_t(col + k));
        const T tot = cub::BlockReduce<T, SPS_CU_THREADS>(*tmp).Reduce(s, sps_cu_sum<T>());
        if (threadIdx.x == 0) (*out)(i, tot);
        __syncthreads(); /* tmp reused by the next long row */
    }
    __device__ void warp(sps_index i) const
    {
        const T s = csr_group_sum<T, 32, U>(rowptr[i], rowptr[i + 1], (int)(threadIdx.x & 31), 0xffffffffu, col, val, x);
        if ((threadIdx.x & 31) == 0) (*out)(i, s);
    }
};

/* The rows of this block, long and medium ones first, any Out, row groups of shape
 * S.  Taking them last (the short rows then start without waiting for the
 * classification pass) was slower, the pass works as a prefetch of the block's
 * rowptr (H100 2026-11-23, f64: banded-s1e3 0.143 -> 0.157 ms, banded-s1e5 0.210
 * -> 0.225, poisson3d-128 0.096 -> 0.099): that knob is gone (bench/results/knobs.md). */
/* The long/medium pass is compiled in (LONG) unless the caller's maxrow (the
 * longest row, -1: not known) says every row is short: the host decides
 * (csr_long_pass, from the TPR of n and nnz) and launches that instantiation; the
 * other lets the row groups take every row.  What the pass costs where it finds
 * nothing (H100, spbench 2026-11-23, same runs): its rowptr read and barrier come
 * before each block's first row, and with about four rounds of blocks a launch
 * that latency is paid four times; skipped at run time, f32 banded-s1e3 0.0937
 * -> 0.0892 ms, poisson3d-128 0.0670 -> 0.0602, stencil27b3-40 0.0590 -> 0.0548,
 * f64 banded-s1e3 0.1357 -> 0.1318, poisson3d-128 0.0942 -> 0.0899; its code
 * alone, never run, still cost 2% (registers: geomean f32 1.007 -> 1.027, f64
 * 1.044 -> 1.050 compiled out).  A maxrow below the truth only sends long rows
 * through the groups (slower, same product). */
template <typename T, typename S = csr_bw<T>>
static inline bool csr_long_pass(sps_index n, int64_t nnz, sps_index maxrow)
{
    return maxrow < 0 || maxrow > csr_med_len(csr_tpr_of<T, S>(n, nnz));
}
template <typename T, typename S, bool LONG, typename X, typename Out>
__device__ void csr_block_rows(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, X x, Out &out,
                               unsigned nb, int tpr)
{
    __shared__ typename cub::BlockReduce<T, SPS_CU_THREADS>::TempStorage tmp;
    const sps_index L = csr_long_len(tpr);
    const sps_index M = LONG ? csr_med_len(tpr) : INT_MAX; /* rows the groups skip: longer than M */
    const csr_long_row<T, S::U, X, Out, typename csr_long_tag<S>::type> lr{rowptr, col, val, x, &out, &tmp};
    if (LONG) csr_for_long_rows(n, rowptr, L, M, nb, lr);
    switch (tpr) {
    case 1: csr_rows<T, 1, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 2: csr_rows<T, 2, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 4: csr_rows<T, 4, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 8: csr_rows<T, 8, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 16: csr_rows<T, 16, S>(n, rowptr, col, val, x, out, M, nb); break;
    default: csr_rows<T, 32, S>(n, rowptr, col, val, x, out, M, nb); break;
    }
}

} // namespace

#endif
