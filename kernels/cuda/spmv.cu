/* libspsolve — CUDA CSR and COO SpMV / SpMV^T, f32/f64/c32/c64 from one set of templates.
 *
 * csr_spmv   y = a A x + b y (b == 0: y not read).  "Vector CSR" (Bell & Garland,
 *            SC'09, §4.2): a group of TPR threads (a power of two, 1..32, inside a
 *            warp) per row; lane l sums entries rowptr[i] + l, + 2 TPR, ... left to
 *            right, then the group adds its lanes by a shuffle-down tree.  TPR is
 *            chosen in the kernel from the average row length nnz / n (read from
 *            rowptr[0], rowptr[n] on the device: no host round trip):
 *                TPR = largest power of two <= avg, clamped to [1, 32]
 *            so that nearly every lane has at least one entry (avg 5, 2-D Poisson:
 *            TPR 4; avg 30: 16; avg >= 32: 32).  Deterministic: the grouping and
 *            every summation order depend only on the matrix.  One launch; grid
 *            stride over rows, 256 threads a block.
 *            Rows longer than max(1024, 64 TPR) are summed by a whole block
 *            (256 threads, CUB BlockReduce) and rows longer than 8 TPR by one
 *            warp, before the groups start: each block takes the long and medium
 *            rows of its own fixed slice of rows, so one row of 200k entries no
 *            longer serialises on TPR lanes, nor a row of 300 on a group while the
 *            rest of its warp idles; still deterministic.  Each lane keeps 4
 *            (4-byte values) or 2 (8-, 16-byte) entries in flight, predicated.
 * csr_cg_iter  one CG iteration (csr_spmv_xpay_dot, then cg_step) in one
 *            cooperative launch with a grid barrier between the two phases, where
 *            the rows fit one resident wave (else the two kernels).
 *            Traffic: (n+1) 4 + nnz (4 + S) bytes for A (+ (n+1) 4 for the
 *            long-row scan, mostly from L2), x gathered (>= m S, more when
 *            columns scatter), n S written (+ n S read when b != 0).
 * csr_spmv_dot  y = A x and slots[out] = x^H y in one launch (CG's q = A p, p^H q:
 *            one kernel and 2n values of traffic fewer than SpMV + dot).  The row
 *            groups above; the lane writing y_i adds conj(x_i) y_i (x_i from the
 *            cache: the row read it) to its double accumulator; then the reduction
 *            end shared with every dot (common.cuh sps_cu_reduce_finish): fixed
 *            trees, partials in block order; the grid is the blocks that have rows,
 *            at most one resident wave.  Bit-reproducible.
 * csr_spmv_xpay_dot  p_new = z + c p_old, q = A p_new, slots[out] = p_new^H q in one
 *            launch: CG's direction update inside its product.  Every gathered
 *            column forms z_j + c p_old_j (the same instructions in every thread, so
 *            the row owner's stored p_new_i is what the others multiplied); p_old and
 *            p_new are different buffers (CG alternates them), so no thread reads
 *            what another writes.  Traffic: matrix + z, p_old gathered + p_new, q
 *            written: the xpay pass (3n) disappears for +1n of gathers.  Rows
 *            averaging more than 16 entries gather each column so often that the
 *            separate pass is cheaper: there p_new is formed first (same p_new
 *            bits; q may differ in the last bit, see csr_spmv_xpay_dot_impl).
 * csr_spmvt  y = a A^T x + b y (y of length m) without forming A^T: y = b y (or 0)
 *            in one pass, then the same row groups scatter a val[k] x[i] into
 *            y[col[k]] with atomicAdd (complex: its two components).  NOT
 *            bit-reproducible (the order of the atomic adds varies).
 * coo_spmv   y = a A x + b y, entries sorted by row.  Segmented reduction
 *            (merge-free "flat" COO, cf. Bell & Garland §4.4): y = b y first; the
 *            entries are cut into at most 2048 chunks (a function of nnz only),
 *            one block per chunk, processed in tiles of 256 x 4 entries by a
 *            CUB BlockScan with a segmented-sum operator whose running prefix
 *            carries a row across tiles.  Rows strictly inside a chunk are
 *            written by their block; the chunk's first and last rows go to a
 *            carry list (2 per block, in the workspace), and a fix-up kernel lets
 *            the first block holding a row sum that row's carries in block order.
 *            Deterministic (no atomics; fixed chunks and trees): bit-reproducible.
 *            Traffic: nnz (8 + S) for A, x gathered, y read and written once.
 * coo_spmvt  y = b y, then one thread per entry: atomicAdd(y[col], a val x[row]).
 *            NOT bit-reproducible.
 *
 * Sums are in T, as the CPU reference (kernels/cpu/spmv.inc). */
#include "kernels/cuda/cg_step.cuh"

#include <cooperative_groups.h>

#include <limits.h>

namespace {

/* ---------------------------------------------------------------- y = b y */
template <typename T> struct scale_y_op {
    T b; int beta_zero; T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { y[i] = beta_zero ? zero_of<T>() : b * y[i]; }
};
template <typename T> static sps_status scale_y(sps_exec *ex, sps_index m, sps_cplx b, void *y)
{
    const int bz = b.re == 0.0 && b.im == 0.0;
    return sps_cuda_foreach(ex, m, scale_y_op<T>{sc<T>::from(b), bz, (T *)y});
}

/* ---------------------------------------------------------------- CSR */
/* Lanes a row = largest power of two <= avg >> shift, shift = 2 for 4-byte values,
 * 1 for 8-byte, 0 for 16-byte: 2-4 entries per lane, so each lane keeps independent
 * loads in flight and the group's shuffle tree is short (H100, spbench 2026-11-23:
 * poisson3d-128 f64 0.104 -> 0.094 ms, banded-s1e3 f64 0.187 -> 0.154 ms against
 * one entry per lane).  -DSPS_CSR_TPR_SHIFT=k forces k (for tuning runs). */
#ifndef SPS_CSR_TPR_SHIFT
#define SPS_CSR_TPR_SHIFT (-1)
#endif
/* Entries a lane keeps in flight (predicated, so a row of up to U TPR entries costs
 * one round trip: col/val, then x): 4 for 4-byte values, 2 for 8- and 16-byte
 * (about the same bytes in flight).  H100, spbench 2026-11-23, geomean over the five
 * generated matrices with nnz >= 1e6 against the best cuSPARSE CSR: f32 U=4 0.924,
 * U=2 0.914; f64 U=4 0.895, U=2 0.941 (the old 2-in-flight loop with a serial tail:
 * 0.854 / 0.910).  -DSPS_CSR_UNROLL=k forces k (tuning runs).  Re-measured in
 * session 3 (f64, same five matrices): default 0.941, U=3 0.933, TPR shift 0 (TPR 16
 * for 22 a row) 0.911, shift 0 with U=4 0.819. */
#ifndef SPS_CSR_UNROLL
#define SPS_CSR_UNROLL 0
#endif
/* Rows a staged pass in units of 256/TPR (csr_rows_staged; 0: direct loads):
 * 1 for 4-byte values, 2 for larger.  -DSPS_CSR_STAGE_K=k forces k (tuning). */
#ifndef SPS_CSR_STAGE_K
#define SPS_CSR_STAGE_K (-1)
#endif
/* Matrices of few rows: where rows hold 8 or more entries on average, the lanes a
 * row are doubled (up to 32) while n TPR is below SPS_CSR_MIN_THREADS (about half
 * an H100's resident threads), so that the rows spread over the GPU.  H100,
 * spbench 2026-11-25 (bench/results/csr-small-nvidia-h100-2026-11-25.md), ms,
 * before -> after: f32 cage10 (11k rows, 13 a row) 0.0348 -> 0.0091, bcsstk16
 * (4.9k rows, 59 a row) 0.0239 -> 0.0083, gridgena (49k rows, 10.5 a row) 0.0214
 * -> 0.0113, wathen100 (30k rows, 15.5 a row) 0.0299 -> 0.0117; f64 cage10 0.0116
 * -> 0.0083, bcsstk16 0.0107 -> 0.0083, wathen100 0.0106 -> 0.0114.  Shorter rows
 * keep the avg >> shift rule (below): one lane a row is fastest on poisson3d-48,
 * jnlbrng1, shallow_water1 and luxembourg_osm, 2 to 8 lanes cost them 10-100 %.
 * csr_lat (the fused CG iteration) does not spread.
 * -DSPS_CSR_MIN_THREADS=k (0 = off) for tuning. */
#ifndef SPS_CSR_MIN_THREADS
#define SPS_CSR_MIN_THREADS 131072
#endif
#define SPS_CSR_SPREAD_MIN_AVG 8
/* The shape of the row groups: lanes a row from avg >> shift, U entries in flight a
 * lane.  csr_bw: the bandwidth-bound kernels (the rules above).  csr_lat: the fused
 * CG iteration, whose rows sit in L2 (it runs only where they fit one resident
 * wave): shift 2 and U = 4 (2 for c64), so poisson3d-48 f64 (7 a row) takes one
 * lane a row and one round trip, and its 432 blocks of rows fit the 528 resident
 * ones (TPR 2 gave 864: two rounds of rows, 26 us a CG iteration). */
template <typename T> struct csr_bw {
    static constexpr int64_t min_threads = SPS_CSR_MIN_THREADS;
    static constexpr int shift =
        SPS_CSR_TPR_SHIFT >= 0 ? SPS_CSR_TPR_SHIFT : sizeof(T) <= 4 ? 2 : sizeof(T) <= 8 ? 1 : 0;
    static constexpr int U = SPS_CSR_UNROLL > 0 ? SPS_CSR_UNROLL : sizeof(T) <= 4 ? 4 : 2;
    static constexpr int K = SPS_CSR_STAGE_K >= 0 ? SPS_CSR_STAGE_K : sizeof(T) <= 4 ? 1 : 2;
};
template <typename T> struct csr_lat {
    static constexpr int64_t min_threads = 0;
    static constexpr int shift = 2, U = sizeof(T) <= 8 ? 4 : 2; /* complex double: 4 spilled at 64 registers */
    static constexpr int K = 0; /* direct loads */
};
/* Lanes a row from n and nnz: the same on the host (grid sizing) and the device. */
template <typename T, typename S = csr_bw<T>> __host__ __device__ inline int csr_tpr_of(sps_index n, int64_t nnz)
{
    const int64_t avg = n > 0 ? nnz / n : 0;
    const int64_t want = avg >> S::shift; /* entries per lane: about 2^shift */
    int t = 1;
    while (t < 32 && 2 * t <= want) t *= 2;
    if (avg >= SPS_CSR_SPREAD_MIN_AVG)
        while (t < 32 && (int64_t)n * t < S::min_threads) t *= 2;
    return t;
}
template <typename T, typename S = csr_bw<T>> __device__ inline int csr_tpr(sps_index n, const sps_index *rowptr)
{
    return csr_tpr_of<T, S>(n, (int64_t)rowptr[n] - rowptr[0]);
}

/* What becomes of a row's sum s: y = a s + b y (common.cuh sps_cu_axpby_out) ...
 * or y = s with conj(x_i) s added to the thread's dot accumulator (q = A p, p^H q),
 * x_i also stored to xout when given (the fused direction update's p_new). */
template <typename T, typename X> struct csr_dot_out {
    X xl; T *y; T *xout; typename sc<T>::ACC acc;
    __device__ void operator()(sps_index i, T s)
    {
        y[i] = s;
        const T xi = xl(i);
        if (xout) xout[i] = xi;
        acc += to_acc(conjv(xi)) * to_acc(s);
    }
};

/* Matrix arrays and gathered vector through the read-only path (ldg_t), without
 * cache-eviction hints: the hints measured gained nothing or lost
 * (bench/results/csr-tuning-nvidia-h100-2026-11-23.md). */
/* The vector the rows multiply: x itself (common.cuh) ... */
template <typename T> using csr_x_plain = sps_cu_xplain<T>;
/* ... or CG's new direction z + beta p_old, formed for every gathered column (every
 * thread forms it the same way, so the owner's stored p_new_i equals what the other
 * rows multiplied). */
template <typename T> struct csr_x_xpay {
    const T *z, *p; T beta;
    __device__ T operator()(sps_index c) const { return ldg_t(z + c) + beta * ldg_t(p + c); }
};
/* The host's form of it: beta from the slots (as xpay_s: double, rounded to T),
 * evaluated by each thread when the kernel starts (csr_x_bind). */
template <typename T> struct csr_x_xpay_s {
    const T *z, *p; const sps_cplx *slots; sps_scoef c;
};
/* csr_spmv_dot's rows: csr_bw's groups, staged one 256/TPR rows a pass, except
 * for 8- and 16-byte values (f64, c32, c64) gathering z + c p_old (two vectors),
 * which load directly.  H100, spbench solver mode 2026-11-23, CG an iteration (two runs
 * each): poisson3d-128 f64 (z + c p) staged K = 2 0.1531 ms, K = 1 0.1507,
 * direct 0.1444; stencil27b3-40 f64 (plain, 77 a row) K = 2 0.0990, K = 1
 * 0.0872, direct 0.0940; f32 poisson3d-128 K = 1 0.0926, direct 0.0939;
 * stencil27b3-40 K = 1 0.0680, direct 0.0660 (kept staged: one rule for f32).
 * -DSPS_CSR_DOT_STAGE_K=k forces k (tuning). */
#ifndef SPS_CSR_DOT_STAGE_K
#define SPS_CSR_DOT_STAGE_K (-1)
#endif
template <typename X> struct csr_x_pair { static constexpr bool value = false; };
template <typename T> struct csr_x_pair<csr_x_xpay_s<T>> { static constexpr bool value = true; };
template <typename T, typename XH> struct csr_dot_bw : csr_bw<T> {
    static constexpr int K = SPS_CSR_DOT_STAGE_K >= 0                  ? SPS_CSR_DOT_STAGE_K
                             : sizeof(T) >= 8 && csr_x_pair<XH>::value ? 0
                                                                       : 1;
};
template <typename X> __device__ inline X csr_x_bind(X x) { return x; }
template <typename T> __device__ inline csr_x_xpay<T> csr_x_bind(csr_x_xpay_s<T> x)
{
    return csr_x_xpay<T>{x.z, x.p, scoef_t<T>(x.c, x.slots)};
}

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
    for (sps_index i = (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / TPR); i < n; i += groups) {
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
 * there are none: one more read of the block's slice of rowptr.
 * -DSPS_CSR_MED_FACTOR=0 turns the medium class off (tuning runs). */
#define CSR_LONG_MIN 1024
#ifndef SPS_CSR_MED_FACTOR
#define SPS_CSR_MED_FACTOR 8
#endif
__host__ __device__ inline sps_index csr_long_len(int tpr) { return 64 * tpr > CSR_LONG_MIN ? 64 * tpr : CSR_LONG_MIN; }
__host__ __device__ inline sps_index csr_med_len(int tpr)
{
    return SPS_CSR_MED_FACTOR > 0 && tpr < 32 ? SPS_CSR_MED_FACTOR * tpr : csr_long_len(tpr);
}

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
    for (sps_index base = lo; base < hi; base += SPS_CU_THREADS) {
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

template <typename T, int U, typename X, typename Out> struct csr_long_row {
    const sps_index *rowptr, *col; const T *val; X x; Out *out;
    typename cub::BlockReduce<T, SPS_CU_THREADS>::TempStorage *tmp;
    __device__ void block(sps_index i) const
    {
        T s = zero_of<T>();
        for (sps_index k = rowptr[i] + (sps_index)threadIdx.x; k < rowptr[i + 1]; k += SPS_CU_THREADS)
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
template <typename T> struct csrt_long_row {
    const sps_index *rowptr, *col; const T *val, *x; T a; T *y;
    __device__ void scatter(sps_index i, int first, int step) const
    {
        const T ax = a * x[i];
        for (sps_index k = rowptr[i] + first; k < rowptr[i + 1]; k += step) atomic_add(&y[col[k]], val[k] * ax);
    }
    __device__ void block(sps_index i) const { scatter(i, (int)threadIdx.x, SPS_CU_THREADS); }
    __device__ void warp(sps_index i) const { scatter(i, (int)(threadIdx.x & 31), 32); }
};

/* The rows of this block, long and medium ones first, any Out, row groups of shape
 * S.  -DSPS_CSR_LONG_LAST=1 takes them last (the short rows then start without
 * waiting for the classification pass): slower, the pass works as a prefetch of
 * the block's rowptr (H100 2026-11-23, f64: banded-s1e3 0.143 -> 0.157 ms,
 * banded-s1e5 0.210 -> 0.225, poisson3d-128 0.096 -> 0.099). */
#ifndef SPS_CSR_LONG_LAST
#define SPS_CSR_LONG_LAST 0
#endif
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
 * through the groups (slower, same product).  -DSPS_CSR_LONG_PASS=0 never
 * compiles it in (tuning runs on matrices without long rows). */
#ifndef SPS_CSR_LONG_PASS
#define SPS_CSR_LONG_PASS 1
#endif
template <typename T, typename S = csr_bw<T>>
static inline bool csr_long_pass(sps_index n, int64_t nnz, sps_index maxrow)
{
    return SPS_CSR_LONG_PASS && (maxrow < 0 || maxrow > csr_med_len(csr_tpr_of<T, S>(n, nnz)));
}
template <typename T, typename S, bool LONG, typename X, typename Out>
__device__ void csr_block_rows(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, X x, Out &out,
                               unsigned nb, int tpr)
{
    __shared__ typename cub::BlockReduce<T, SPS_CU_THREADS>::TempStorage tmp;
    const sps_index L = csr_long_len(tpr);
    const sps_index M = LONG ? csr_med_len(tpr) : INT_MAX; /* rows the groups skip: longer than M */
    const csr_long_row<T, S::U, X, Out> lr{rowptr, col, val, x, &out, &tmp};
    if (LONG && !SPS_CSR_LONG_LAST) csr_for_long_rows(n, rowptr, L, M, nb, lr);
    switch (tpr) {
    case 1: csr_rows<T, 1, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 2: csr_rows<T, 2, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 4: csr_rows<T, 4, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 8: csr_rows<T, 8, S>(n, rowptr, col, val, x, out, M, nb); break;
    case 16: csr_rows<T, 16, S>(n, rowptr, col, val, x, out, M, nb); break;
    default: csr_rows<T, 32, S>(n, rowptr, col, val, x, out, M, nb); break;
    }
    if (LONG && SPS_CSR_LONG_LAST) csr_for_long_rows(n, rowptr, L, M, nb, lr);
}

/* Resident blocks an SM the row kernels are compiled for (__launch_bounds__(256,
 * MINB): at most 65536 / (256 MINB) registers a thread): 8 for 4-byte values (32
 * registers), 6 for larger (40).  Pinned because ptxas's own choice moves with
 * small edits of the staged pass: an overflow-safe rewrite of its index
 * arithmetic (2026-11-23) took f32 from 32 registers to 48 (5 blocks) and f64 from
 * 40 to 64 (4 blocks), and the f32 row kernel from 0.093 to 0.112 ms on
 * banded-s1e3 (H100, same run: 0.0927 with 8 blocks forced).  The few bytes
 * ptxas then spills sit in the direct-load fallback.  -DSPS_CSR_MINB=k forces k
 * (tuning runs). */
#ifndef SPS_CSR_MINB
#define SPS_CSR_MINB (-1)
#endif
template <typename T> __host__ __device__ constexpr int csr_minb()
{
    return SPS_CSR_MINB >= 0 ? SPS_CSR_MINB : sizeof(T) <= 4 ? 8 : 6;
}
template <typename T, bool LONG>
__global__ void __launch_bounds__(SPS_CU_THREADS, csr_minb<T>())
    csr_spmv_kernel(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, const T *x,
                    sps_cu_axpby_out<T> out)
{
    const int tpr = csr_tpr<T>(n, rowptr);
    const unsigned nb = csr_active_blocks(n, tpr);
    if (blockIdx.x >= nb) return; /* uniform */
    csr_block_rows<T, csr_bw<T>, LONG>(n, rowptr, col, val, csr_x_plain<T>{x}, out, nb, tpr);
}

/* The rows with y = A x written and x_i^H y_i summed by the lane that writes y_i
 * (x plain or z + c p_old, stored to xout when given); returns the thread's sum. */
template <typename T, typename S, bool LONG, typename XH>
__device__ typename sc<T>::ACC csr_dot_rows(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val,
                                            XH xh, T *y, T *xout)
{
    const int tpr = csr_tpr<T, S>(n, rowptr);
    const unsigned nb = csr_active_blocks(n, tpr);
    const auto x = csr_x_bind(xh);
    csr_dot_out<T, decltype(x)> out{x, y, xout, typename sc<T>::ACC()};
    if (blockIdx.x < nb) csr_block_rows<T, S, LONG>(n, rowptr, col, val, x, out, nb, tpr); /* uniform */
    return out.acc;
}

/* q = A p and p^H q: the rows as above, the dot of each row's sum with p_i taken by
 * the lane that writes it, then the deterministic end of every reduction
 * (sps_cu_reduce_finish: fixed trees, partials summed in block order).  Every block
 * of the grid takes part (csr_spmv_dot_grid: the blocks with rows, at most one
 * resident wave); blocks without rows add 0. */
/* The dot kernels: 6 resident blocks (40 registers), what ptxas chose for all four
 * types before the index rewrite above moved f32 to 48 (pinned for the same
 * reason).  -DSPS_CSR_DOT_MINB=k forces k (tuning runs).  H100 2026-11-23: 7 (36
 * registers, spills) made poisson3d-128 f64 CG 0.147 -> 0.167 ms; 8 (32) spills
 * more than 200 bytes in the f64 xpay form. */
#ifndef SPS_CSR_DOT_MINB
#define SPS_CSR_DOT_MINB 6
#endif
template <typename T, typename XH, bool LONG>
__global__ void __launch_bounds__(SPS_CU_THREADS, SPS_CSR_DOT_MINB)
    csr_spmv_dot_kernel(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, XH xh, T *y, T *xout,
                        typename sc<T>::ACC *part, unsigned *counter, sps_cplx *slots, sps_cu_outs outs)
{
    accv<typename sc<T>::ACC, 1> acc;
    acc.v[0] = csr_dot_rows<T, csr_dot_bw<T, XH>, LONG>(n, rowptr, col, val, xh, y, xout);
    sps_cu_reduce_finish<typename sc<T>::ACC, 1>(acc, part, counter, slots, outs, sps_cu_no_guard(), 0);
}

/* One CG iteration on CSR in one cooperative launch (every block resident):
 *   phase 1  p = z + beta p_old, q = A p, block sums of p^H q   (csr_dot_rows)
 *   grid barrier; every block adds the block sums in the finishing block's order
 *            (thread t: blocks t, t + 256, ..., then BlockReduce), so all of them
 *            hold the same pq, bit for bit, without another launch; block 0
 *            stores it in slots[pq]
 *   phase 2  cg_step with that pq: alpha = rho / pq, x += alpha p, r -= alpha q,
 *            rr = r^H r (sps_cu_reduce_finish: the last block stores rr and stop)
 * Against csr_spmv_xpay_dot + cg_step this saves a launch, a drain of the grid
 * and the wait for the finishing block between them: on poisson3d-48 (all in L2)
 * the two kernels are latency, not bandwidth.  The phase-1 block sums sit in the
 * workspace's second partials row, so a block that is already reducing rr cannot
 * overwrite a block sum another block still reads. */
/* Registers: at most 64 (4 blocks an SM, 528 resident on the H100), 128 for c64
 * (whose values and split cg_step loads would spill at 64): f32 64 without spills,
 * f64 64 with 12 bytes of spills (csr_lat's 4 entries in flight).  Without the
 * bound f64 took 92 (2 blocks an SM: poisson3d-48's 432 blocks of rows would not
 * fit); the plain bound gave 32 with spills (poisson3d-48 f32 CG 18 -> 24 us an
 * iteration), and 8 blocks an SM spilled more (poisson3d-128 f64 CG 0.150 -> 0.176
 * ms).  -DSPS_CG_ITER_MINB=k forces k blocks an SM (tuning runs). */
#ifndef SPS_CG_ITER_MINB
#define SPS_CG_ITER_MINB 0
#endif
template <typename T>
constexpr int csr_cg_iter_minb = SPS_CG_ITER_MINB > 0 ? SPS_CG_ITER_MINB : sizeof(T) > 8 ? 2 : 4;
template <typename T, typename XH, bool LONG>
__global__ void __launch_bounds__(SPS_CU_THREADS, csr_cg_iter_minb<T>)
    csr_cg_iter_kernel(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, XH xh, T *p, T *q,
                       T *x, T *r, typename sc<T>::ACC *part, unsigned *counter, sps_cplx *slots, sps_cg_slots ks,
                       sps_cu_outs rr_out)
{
    typedef typename sc<T>::ACC A;
    typedef cub::BlockReduce<accv<A, 1>, SPS_CU_RED_THREADS> BR;
    __shared__ typename BR::TempStorage tmp;
    __shared__ A pq_sh;
    accv<A, 1> acc;
    acc.v[0] = csr_dot_rows<T, csr_lat<T>, LONG>(n, rowptr, col, val, xh, q, p);
    A *pqpart = part + SPS_CU_PART_MAX_BLOCKS;
    accv<A, 1> tot = BR(tmp).Reduce(acc, accv_sum<A, 1>());
    if (threadIdx.x == 0) pqpart[blockIdx.x] = tot.v[0];
    cooperative_groups::this_grid().sync();
    __syncthreads(); /* tmp reused */
    tot = sps_cu_sum_partials<A, 1>(pqpart, tmp);
    if (threadIdx.x == 0) pq_sh = tot.v[0];
    __syncthreads();
    const cg_guard g{{}, ks, 1, acc_to_cplx(pq_sh)};
    if (blockIdx.x == 0 && threadIdx.x == 0) slots[ks.pq] = g.pq;
    /* phase 2: p and q were written in phase 1 by any block: plain loads, after the barrier */
    sps_cu_reduce_pass<A, 1>(cg_step_op<T>{slots, g, p, q, x, r, n - 1, T(), false}, n, part, counter, slots, rr_out, g,
                             ks.rr);
}

template <typename T, int TPR>
__device__ void csrt_rows(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, T a, const T *x,
                          T *y, sps_index long_len, unsigned nblocks)
{
    const int lane = threadIdx.x & (TPR - 1);
    const sps_index groups = (sps_index)(nblocks * blockDim.x / TPR);
    for (sps_index i = (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / TPR); i < n; i += groups) {
        const sps_index beg = rowptr[i], end = rowptr[i + 1];
        if (end - beg > long_len) continue; /* done by csrt_long_rows */
        const T ax = a * x[i];
        for (sps_index k = beg + lane; k < end; k += TPR) atomic_add(&y[col[k]], val[k] * ax);
    }
}

template <typename T, bool LONG>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    csr_spmvt_kernel(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, T a, const T *x, T *y)
{
    const int tpr = csr_tpr<T>(n, rowptr);
    const unsigned nb = csr_active_blocks(n, tpr);
    if (blockIdx.x >= nb) return; /* uniform */
    const sps_index L = csr_long_len(tpr);
    const sps_index M = LONG ? csr_med_len(tpr) : INT_MAX;
    if (LONG) csr_for_long_rows(n, rowptr, L, M, nb, csrt_long_row<T>{rowptr, col, val, x, a, y});
    switch (tpr) {
    case 1: csrt_rows<T, 1>(n, rowptr, col, val, a, x, y, M, nb); break;
    case 2: csrt_rows<T, 2>(n, rowptr, col, val, a, x, y, M, nb); break;
    case 4: csrt_rows<T, 4>(n, rowptr, col, val, a, x, y, M, nb); break;
    case 8: csrt_rows<T, 8>(n, rowptr, col, val, a, x, y, M, nb); break;
    case 16: csrt_rows<T, 16>(n, rowptr, col, val, a, x, y, M, nb); break;
    default: csrt_rows<T, 32>(n, rowptr, col, val, a, x, y, M, nb); break;
    }
}

/* Grid for the row kernels: enough threads for 32 per row at most, capped at 32
 * blocks per SM (the kernels are grid-stride whatever TPR turns out to be; a cap
 * of 16 was slower: bench/results/csr-tuning-nvidia-h100-2026-11-23.md). */
static unsigned csr_grid(sps_exec *ex, sps_index n) { return sps_cu_grid(ex, (int64_t)n * 32); }

/* ---------------------------------------------------------------- COO */
#define COO_THREADS 256
#define COO_ITEMS 4
#define COO_TILE (COO_THREADS * COO_ITEMS)

template <typename T> using segv = sps_cu_segv<T>;
template <typename T> using seg_op = sps_cu_seg_op<T>;
/* The running prefix between tiles of one block (called by the first warp). */
template <typename T> struct seg_prefix {
    segv<T> run;
    __device__ segv<T> operator()(const segv<T> &tile_total)
    {
        segv<T> old = run;
        run = seg_op<T>()(run, tile_total);
        return old;
    }
};

/* COO's row array from CSR's: a block takes 256 consecutive rows at a time
 * (grid-stride), their row pointers in shared memory, and writes row[k] for
 * their entries with all its threads (consecutive k: coalesced, whatever the
 * row lengths), each k's row by bisection in shared memory. */
__global__ void __launch_bounds__(SPS_CU_THREADS) coo_rows_kernel(sps_index n, const sps_index *rowptr, sps_index *row)
{
    __shared__ sps_index rp[SPS_CU_THREADS + 1];
    for (int64_t r0 = (int64_t)blockIdx.x * SPS_CU_THREADS; r0 < n; r0 += (int64_t)gridDim.x * SPS_CU_THREADS) {
        const int R = n - r0 < SPS_CU_THREADS ? (int)(n - r0) : SPS_CU_THREADS;
        for (int j = (int)threadIdx.x; j <= R; j += SPS_CU_THREADS) rp[j] = rowptr[r0 + j];
        __syncthreads();
        for (int64_t k = (int64_t)rp[0] + threadIdx.x; k < rp[R]; k += SPS_CU_THREADS) {
            int lo = 0, hi = R - 1; /* the last j with rp[j] <= k */
            while (lo < hi) {
                const int mid = (lo + hi + 1) / 2;
                if (rp[mid] <= k) lo = mid;
                else hi = mid - 1;
            }
            row[k] = (sps_index)(r0 + lo);
        }
        __syncthreads(); /* rp reused */
    }
}

static sps_status coo_rows_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index *row)
{
    if (n <= 0) return SPS_OK;
    coo_rows_kernel<<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(n, rowptr, row);
    SPS_CU_LAUNCHED(ex, "coo_rows_kernel");
    return SPS_OK;
}

/* Entries [lo, hi) of this block's chunk; carries: crow[2b], cval[2b] for the
 * chunk's first row, crow[2b+1], cval[2b+1] for its last row (-1: same as first). */
template <typename T>
__global__ void __launch_bounds__(COO_THREADS) coo_seg_kernel(int64_t nnz, int64_t chunk, const sps_index *row,
                                                             const sps_index *col, const T *val, T a, const T *x, T *y,
                                                             sps_index *crow, T *cval)
{
    typedef cub::BlockScan<segv<T>, COO_THREADS> BS;
    __shared__ typename BS::TempStorage tmp;
    const int64_t lo = (int64_t)blockIdx.x * chunk;
    const int64_t hi = lo + chunk < nnz ? lo + chunk : nnz;
    if (lo >= hi) { /* uniform: no entries (cannot happen with the host's sizing, kept for safety) */
        if (threadIdx.x == 0) { crow[2 * blockIdx.x] = -1; crow[2 * blockIdx.x + 1] = -1; }
        return;
    }
    const sps_index first_row = row[lo], last_row = row[hi - 1];
    seg_prefix<T> prefix;
    prefix.run.f = 0;
    prefix.run.v = zero_of<T>();
    for (int64_t base = lo; base < hi; base += COO_TILE) {
        segv<T> it[COO_ITEMS];
        sps_index r[COO_ITEMS];
#pragma unroll
        for (int j = 0; j < COO_ITEMS; j++) {
            const int64_t k = base + (int64_t)threadIdx.x * COO_ITEMS + j;
            if (k < hi) {
                r[j] = row[k];
                it[j].f = (k == lo || row[k - 1] != r[j]) ? 1 : 0;
                it[j].v = val[k] * x[col[k]];
            } else {
                r[j] = -1;
                it[j].f = 1;
                it[j].v = zero_of<T>();
            }
        }
        __syncthreads(); /* tmp reused from the previous tile */
        BS(tmp).InclusiveScan(it, it, seg_op<T>(), prefix);
#pragma unroll
        for (int j = 0; j < COO_ITEMS; j++) {
            const int64_t k = base + (int64_t)threadIdx.x * COO_ITEMS + j;
            if (k >= hi) continue;
            if (k + 1 < hi && row[k + 1] == r[j]) continue; /* not the end of its row in this chunk */
            if (r[j] == first_row) cval[2 * blockIdx.x] = it[j].v;
            else if (r[j] == last_row) cval[2 * blockIdx.x + 1] = it[j].v;
            else y[r[j]] = y[r[j]] + a * it[j].v; /* the only writer of this row */
        }
    }
    if (threadIdx.x == 0) {
        crow[2 * blockIdx.x] = first_row;
        crow[2 * blockIdx.x + 1] = last_row != first_row ? last_row : -1;
    }
}

/* One thread per carry entry e; the first entry of a row (in block order) sums
 * all of that row's entries in order and adds the total to y. */
template <typename T>
__global__ void __launch_bounds__(COO_THREADS) coo_fixup_kernel(int ne, const sps_index *crow, const T *cval, T a, T *y)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ne) return;
    const sps_index r = crow[e];
    if (r < 0) return;
    for (int p = e - 1; p >= 0; p--) { /* previous real entry: at most one -1 to skip */
        if (crow[p] < 0) continue;
        if (crow[p] == r) return; /* not the first holder of row r */
        break;
    }
    T s = cval[e];
    for (int q = e + 1; q < ne; q++) {
        if (crow[q] < 0) continue;
        if (crow[q] != r) break;
        s = s + cval[q];
    }
    y[r] = y[r] + a * s;
}

template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    coo_spmvt_kernel(int64_t nnz, const sps_index *row, const sps_index *col, const T *val, T a, const T *x, T *y)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nnz; k += stride)
        atomic_add(&y[col[k]], val[k] * (a * x[row[k]]));
}

} // namespace

/* ---------------------------------------------------------------- implementations */
template <typename T>
static sps_status csr_spmv_impl(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                                const sps_index *col, const void *val, sps_index maxrow, sps_cplx a, const void *x,
                                sps_cplx b, void *y)
{
    (void)m;
    if (n <= 0) return SPS_OK;
    const auto kernel = csr_long_pass<T>(n, nnz, maxrow) ? csr_spmv_kernel<T, true> : csr_spmv_kernel<T, false>;
    kernel<<<csr_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, rowptr, col, (const T *)val, (const T *)x, sps_cu_axpby_out_of<T>(a, b, y));
    SPS_CU_LAUNCHED(ex, "csr_spmv_kernel");
    return SPS_OK;
}

/* csr_spmv_dot's grid: the blocks that have rows (from the host's nnz, so no idle
 * block pays the reduction end), at most one resident wave (its finishing block
 * sums one partial a block: 1000s of partials would make it the tail). */
template <typename T, typename S = csr_bw<T>, typename K>
static sps_status csr_spmv_dot_grid(sps_exec *ex, K kernel, sps_index n, int64_t nnz, unsigned *grid)
{
    int cap = 1;
    SPS_CHECK(sps_cu_resident(ex, kernel, &cap));
    const int64_t need = ((int64_t)n * csr_tpr_of<T, S>(n, nnz) + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    *grid = (unsigned)(need < 1 ? 1 : need < cap ? need : cap);
    return SPS_OK;
}

/* The fused products: q = A x (x plain, or z + c pold), slots[out] = x^H q. */
template <typename T, typename X>
static sps_status csr_dot_launch(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                 const sps_index *col, const void *val, sps_index maxrow, X x, void *q, void *xout,
                                 sps_cplx *slots, int out)
{
    unsigned grid = 1;
    typedef csr_dot_bw<T, X> S;
    const auto kernel = csr_long_pass<T, S>(n, nnz, maxrow) ? csr_spmv_dot_kernel<T, X, true>
                                                             : csr_spmv_dot_kernel<T, X, false>;
    SPS_CHECK((csr_spmv_dot_grid<T, S>(ex, kernel, n, nnz, &grid)));
    kernel<<<grid, SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n < 0 ? 0 : n, rowptr, col, (const T *)val, x, (T *)q, (T *)xout, (typename sc<T>::ACC *)sps_cuws_red(ex),
        sps_cuws_counter(ex), slots, sps_cu_arm(ex, sps_cu_outs1(out, SPS_CU_OUT_SUM)));
    SPS_CU_LAUNCHED(ex, "csr_spmv_dot_kernel");
    sps_cu_armed_launched(ex);
    return SPS_OK;
}

template <typename T>
static sps_status csr_spmv_dot_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                    const sps_index *col, const void *val, sps_index maxrow, const void *x, void *y,
                                    sps_cplx *slots, int out)
{
    return csr_dot_launch<T>(ex, n, nnz, rowptr, col, val, maxrow, csr_x_plain<T>{(const T *)x}, y, NULL, slots, out);
}

/* Rows longer than SPS_CSR_XPAY_MAX_AVG on average gather each column so often that
 * forming z_j + c p_old_j at every gather (two gathers, in L1/L2) costs more than
 * a separate pass p_new = z + c p_old (3n of DRAM traffic) before csr_spmv_dot:
 * H100 (ncu, 2026-11-23), stencil27b3-40 f64 (77 a row): xpay_dot 99 us against
 * csr_spmv_dot 77 us on the same matrix; poisson3d-128 (7 a row) keeps the fused
 * form (100 us against 86 + 3n).  Same p_new bits either way (the same
 * expression); q can differ in the last bit for 8- and 16-byte values, whose
 * fused form loads directly (products fused into the sum) while the plain
 * product is staged (products rounded first): csr_dot_bw. */
#ifndef SPS_CSR_XPAY_MAX_AVG
#define SPS_CSR_XPAY_MAX_AVG 16
#endif
template <typename T>
static sps_status csr_spmv_xpay_dot_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                         const sps_index *col, const void *val, sps_index maxrow, const void *z,
                                         sps_scoef c, const void *pold, void *pnew, void *q, sps_cplx *slots, int out)
{
    if (n > 0 && nnz > (int64_t)SPS_CSR_XPAY_MAX_AVG * n) { /* long rows: waxpy_s, then the plain product */
        SPS_CHECK(sps_cuda_foreach(ex, n, waxpy_s_op<T>{(const T *)z, slots, c, (const T *)pold, (T *)pnew, T()}));
        return csr_dot_launch<T>(ex, n, nnz, rowptr, col, val, maxrow, csr_x_plain<T>{(const T *)pnew}, q, NULL, slots,
                                 out);
    }
    /* beta from the slots as xpay_s evaluates it, by every thread at the start (csr_x_bind) */
    return csr_dot_launch<T>(ex, n, nnz, rowptr, col, val, maxrow,
                             csr_x_xpay_s<T>{(const T *)z, (const T *)pold, slots, c}, q, pnew, slots, out);
}

/* One CG iteration (csr_cg_iter_kernel), launched cooperative: the grid is at most
 * the resident blocks (csr_spmv_dot_grid), which the barrier needs; the launch
 * attribute makes the runtime refuse rather than hang if that ever failed.
 * Only where the rows (in csr_lat's groups) fit one resident wave: there the
 * iteration is latency, and the saved launch and finishing block show
 * (poisson3d-48 f32: 24 -> 17 us).  With more rows it is bandwidth, the fused
 * kernel's lower occupancy costs more than the launch saves (stencil27b3-40 f64
 * CG 0.096 -> 0.129 ms an iteration), so the two kernels run instead; fusing
 * where the rows took two rounds gained nothing (poisson3d-48 f64 with TPR 2:
 * 25.8 against 25.6 us).  -DSPS_CG_FUSE_ROUNDS=k fuses up to k rounds (tuning). */
#ifndef SPS_CG_FUSE_ROUNDS
#define SPS_CG_FUSE_ROUNDS 1
#endif
template <typename T>
static sps_status csr_cg_iter_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                   const sps_index *col, const void *val, sps_index maxrow, const void *z, sps_scoef c,
                                   const void *pold, void *pnew, void *q, void *x, void *r, sps_cplx *slots,
                                   sps_cg_slots ks)
{
    typedef csr_x_xpay_s<T> X;
    unsigned grid = 1;
    typedef csr_lat<T> S;
    const auto kernel =
        csr_long_pass<T, S>(n, nnz, maxrow) ? csr_cg_iter_kernel<T, X, true> : csr_cg_iter_kernel<T, X, false>;
    SPS_CHECK((csr_spmv_dot_grid<T, S>(ex, kernel, n, nnz, &grid)));
    const int64_t need = ((int64_t)n * csr_tpr_of<T, S>(n, nnz) + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    if (need > SPS_CG_FUSE_ROUNDS * (int64_t)grid) {
        SPS_CHECK(csr_spmv_xpay_dot_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, z, c, pold, pnew, q, slots, ks.pq));
        return cg_step_impl<T>(ex, n, slots, ks, pnew, q, x, r);
    }
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeCooperative;
    at.val.cooperative = 1;
    SPS_CU(ex, sps_cu_launch_attr(at, kernel, grid, sps_custream(ex), n < 0 ? 0 : n, rowptr, col, (const T *)val,
                                   X{(const T *)z, (const T *)pold, slots, c}, (T *)pnew, (T *)q, (T *)x, (T *)r,
                                   (typename sc<T>::ACC *)sps_cuws_red(ex), sps_cuws_counter(ex), slots, ks,
                                   sps_cu_arm(ex, sps_cu_outs1(ks.rr, SPS_CU_OUT_SUM))));
    SPS_CU_LAUNCHED(ex, "csr_cg_iter_kernel");
    sps_cu_armed_launched(ex);
    return SPS_OK;
}

template <typename T>
static sps_status csr_spmvt_impl(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                                 const sps_index *col, const void *val, sps_index maxrow, sps_cplx a, const void *x,
                                 sps_cplx b, void *y)
{
    SPS_CHECK(scale_y<T>(ex, m, b, y));
    if (n <= 0 || m <= 0) return SPS_OK;
    const auto kernel = csr_long_pass<T>(n, nnz, maxrow) ? csr_spmvt_kernel<T, true> : csr_spmvt_kernel<T, false>;
    kernel<<<csr_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, rowptr, col, (const T *)val, sc<T>::from(a), (const T *)x, (T *)y);
    SPS_CU_LAUNCHED(ex, "csr_spmvt_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status coo_spmv_impl(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    (void)m;
    SPS_CHECK(scale_y<T>(ex, n, b, y));
    if (nnz <= 0) return SPS_OK;
    /* chunks: whole tiles, at most SPS_CU_COO_MAX_BLOCKS of them: a function of nnz only */
    const int64_t tiles = (nnz + COO_TILE - 1) / COO_TILE;
    const int64_t tiles_per_chunk = (tiles + SPS_CU_COO_MAX_BLOCKS - 1) / SPS_CU_COO_MAX_BLOCKS;
    const int64_t chunk = tiles_per_chunk * COO_TILE;
    const int nb = (int)((nnz + chunk - 1) / chunk);
    sps_index *crow = (sps_index *)sps_cuws_coo(ex);
    T *cval = (T *)((unsigned char *)sps_cuws_coo(ex) + (size_t)SPS_CU_COO_MAX_BLOCKS * 2 * sizeof(sps_index));
    cudaStream_t s = sps_custream(ex);
    const T av = sc<T>::from(a);
    coo_seg_kernel<T>
        <<<nb, COO_THREADS, 0, s>>>(nnz, chunk, row, col, (const T *)val, av, (const T *)x, (T *)y, crow, cval);
    SPS_CU_LAUNCHED(ex, "coo_seg_kernel");
    const int ne = 2 * nb;
    coo_fixup_kernel<T><<<(ne + COO_THREADS - 1) / COO_THREADS, COO_THREADS, 0, s>>>(ne, crow, cval, av, (T *)y);
    SPS_CU_LAUNCHED(ex, "coo_fixup_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status coo_spmvt_impl(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                 const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    (void)n;
    SPS_CHECK(scale_y<T>(ex, m, b, y));
    if (nnz <= 0 || m <= 0) return SPS_OK;
    coo_spmvt_kernel<T><<<sps_cu_grid(ex, nnz), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        nnz, row, col, (const T *)val, sc<T>::from(a), (const T *)x, (T *)y);
    SPS_CU_LAUNCHED(ex, "coo_spmvt_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_SPMV_ENTRIES(S, T)                                                                                   \
    extern "C" sps_status sps_cuda_csr_spmv_##S(sps_exec *ex, sps_index n, sps_index m, int64_t nnz,             \
                                                const sps_index *rowptr, const sps_index *col, const void *val,     \
                                                sps_index maxrow, sps_cplx a, const void *x, sps_cplx b, void *y)   \
    { return csr_spmv_impl<T>(ex, n, m, nnz, rowptr, col, val, maxrow, a, x, b, y); }                              \
    extern "C" sps_status sps_cuda_csr_spmv_xpay_dot_##S(                                                          \
        sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, const sps_index *col, const void *val,  \
        sps_index maxrow, const void *z, sps_scoef c, const void *pold, void *pnew, void *q, sps_cplx *slots,       \
        int out)                                                                                                    \
    { return csr_spmv_xpay_dot_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, z, c, pold, pnew, q, slots, out); }   \
    extern "C" sps_status sps_cuda_csr_cg_iter_##S(                                                               \
        sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, const sps_index *col, const void *val,  \
        sps_index maxrow, const void *z, sps_scoef c, const void *pold, void *pnew, void *q, void *x, void *r,      \
        sps_cplx *slots, sps_cg_slots ks)                                                                           \
    { return csr_cg_iter_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, z, c, pold, pnew, q, x, r, slots, ks); }    \
    extern "C" sps_status sps_cuda_csr_spmv_dot_##S(sps_exec *ex, sps_index n, int64_t nnz,                      \
                                                    const sps_index *rowptr, const sps_index *col, const void *val, \
                                                    sps_index maxrow, const void *x, void *y, sps_cplx *slots,      \
                                                    int out)                                                        \
    { return csr_spmv_dot_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, x, y, slots, out); }                       \
    extern "C" sps_status sps_cuda_csr_spmvt_##S(sps_exec *ex, sps_index n, sps_index m, int64_t nnz,            \
                                                 const sps_index *rowptr, const sps_index *col, const void *val,    \
                                                 sps_index maxrow, sps_cplx a, const void *x, sps_cplx b, void *y)  \
    { return csr_spmvt_impl<T>(ex, n, m, nnz, rowptr, col, val, maxrow, a, x, b, y); }                             \
    extern "C" sps_status sps_cuda_coo_spmv_##S(sps_exec *ex, sps_index n, sps_index m, int64_t nnz,             \
                                                const sps_index *row, const sps_index *col, const void *val,        \
                                                sps_cplx a, const void *x, sps_cplx b, void *y)                     \
    { return coo_spmv_impl<T>(ex, n, m, nnz, row, col, val, a, x, b, y); }                                         \
    extern "C" sps_status sps_cuda_coo_spmvt_##S(sps_exec *ex, sps_index n, sps_index m, int64_t nnz,            \
                                                 const sps_index *row, const sps_index *col, const void *val,       \
                                                 sps_cplx a, const void *x, sps_cplx b, void *y)                    \
    { return coo_spmvt_impl<T>(ex, n, m, nnz, row, col, val, a, x, b, y); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_SPMV_ENTRIES)

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
extern "C" sps_status sps_cuda_coo_rows(sps_exec *ex, sps_index n, const sps_index *rowptr,
                                            sps_index *row)
{ return coo_rows_impl(ex, n, rowptr, row); }
