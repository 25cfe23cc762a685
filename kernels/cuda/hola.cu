/* libspsolve — CUDA Hola-SpMV and Hola-SpMV^T on plain CSR, f32/f64/c32/c64 from
 * one set of templates.  Steinberger, Zayer, Seidel, "Globally Homogeneous,
 * Locally Adaptive Sparse Matrix-Vector Multiplication on the GPU", ICS '17
 * (../shared/seeds/hola-spmv.txt); layout and buffer in formats/hola.c and
 * kernels/format_kernels_hola.h.  The CPU reference is csr_spmv / csr_spmvt.
 *
 * hola_spmv   y = a A x + b y (b == 0: y not read).  Two launches.
 *   1. hola_starts_kernel (Hola Alg. 2), 1, 4 or 8 rows a thread, grid-stride: row i
 *      writes row_starts[blk] = i for every block blk whose first entry it holds
 *      (usually none or one) and row_starts[nblocks] when it holds entry nnz - 1;
 *      in the same pass it sets y_i = b y_i (0 when b == 0) for the rows the
 *      product adds to atomically: empty rows and the first / last row of any
 *      block.  Every other row ("direct") is written exactly once by the second
 *      kernel, so y is read and written once in all.  Kernel 2 is launched dependent
 *      on it (programmatic dependent launch, hola_pdl): kernel 2's blocks start
 *      their matrix loads while kernel 1 finishes and wait before the row starts.
 *   2. hola_spmv_kernel, one block of HOLA_THREADS = 256 threads per NPB =
 *      256 npt non-zeros (strict non-zero splitting, global and local: thread t
 *      of block B holds entries B NPB + t npt .. + npt - 1; npt = 4, or 8 above
 *      300k non-zeros).  Each thread loads its npt columns and values with
 *      16-byte vector loads (a warp reads one contiguous span of 32 npt entries;
 *      the lines it touches are used whole) and premultiplies by x.  The block
 *      then takes one of three paths, uniform per block (Hola §3.3):
 *      - single row (the first row covers the block): CUB BlockReduce, one
 *        atomicAdd;
 *      - COO decoding (the block's row range, empty rows included, exceeds the
 *        output buffer's NPB / out_div rows, out_div 1 by default): each thread
 *        walks its entries, finding a row by binary search in rowptr where the row changes, and
 *        writes the rows that start and end inside it; a segmented CUB BlockScan
 *        of one item a thread brings each thread's first row the part earlier
 *        threads hold (atomics for the block's first and last rows);
 *      - the usual path (Hola §3.2, Alg. 3-4): the block's rows (one thread per
 *        row, rowptr read coalesced) scatter each thread's first row into shared
 *        memory and set a per-thread row-end bit mask (bit i: the thread's entry
 *        i ends its row in this block) with shared atomicOr; a warp whose threads
 *        meet an empty row inside their range is flagged and walks rows through
 *        rowptr instead of counting end bits.  Each thread sums its products,
 *        storing a row's value in a shared output buffer at the row's end bit
 *        (each row exactly once, no clearing); the partial sums a thread carries
 *        into the next thread's row are added to the buffer either by shared
 *        atomics or, when more than half of the warp's threads lie inside one
 *        row (long rows: atomics would collide), by a warp segmented reduction
 *        (shuffles) and one atomic per segment.  The buffer is then written to
 *        y coalesced, warps aligned to 32 rows; only the block's first and last
 *        rows go through global atomics (they may be shared with neighbouring
 *        blocks); empty rows are skipped (a ballot bit mask per row).
 * hola_spmvt  y = a A^T x + b y (Hola Alg. 7): kernel 1 sets y = b y (all m
 *   entries) and the row starts; kernel 2 uses the same splitting and the same
 *   three ways of finding rows, premultiplies each value by a x[row] (x read once
 *   per row and thread), sorts each thread's (column, value) pairs by column
 *   (Batcher's odd-even merge network in registers) and scatters with atomicAdd.
 * Complex atomics are two component atomics.  NOT bit-reproducible: rows
 *   shared between threads, warps and blocks (SpMV) and every column (SpMV^T)
 *   are combined by atomics in a varying order.
 * Why it is fast: every block and thread handles the same number of non-zeros
 *   whatever the row lengths (no load imbalance from long or empty rows, no
 *   search, no preprocessing), matrix reads are vectorised and coalesced, the
 *   row bookkeeping is 8 bytes of shared memory per thread, shared rows are
 *   combined on chip, and y is written once, coalesced.
 * Measured (H100, read flush, spbench 2026-11-25, bench/results/hola.md and
 *   bench/results/spbench-nvidia-h100-80gb-hbm3-2026-11-25-hola-csr.md): against
 *   cuSPARSE's best CSR kernel, geometric mean over the nine matrices of >= 3e5
 *   entries, SpMV 1.016x (f64) / 0.971x (f32), SpMV^T 0.930x / 0.982x; on
 *   power-law rows SpMV^T 0.536 / 0.505 ms (powerlaw-2M f64 / f32) against 0.604
 *   / 0.575 for the CSR row kernel's scatter, which is why CSR's SpMV^T takes
 *   this kernel on irregular rows (formats/csr.c).
 * Traffic (S = sizeof(T), minimal model): kernel 1: (n + 1) 4 rowptr +
 *   4 (nblocks + 1) + y of the empty and boundary rows; kernel 2: nnz (4 + S)
 *   for the matrix, x gathered (>= m S), rowptr of each block's rows again (from
 *   L2, written by the same rows' kernel-1 reads), n S written (+ n S read when
 *   b != 0), 2 atomics a block.  Extra memory: 4 (nblocks + 1) bytes, the
 *   format's buffer (about 4 / NPB bytes a non-zero).
 * Deviations from the paper: per-thread contiguous vector loads instead of the
 *   shuffle transposition (on sm_90 the L1 merges the sectors; the DRAM traffic
 *   is the same); the SpMV does not sort columns per thread (§3.2: +2 % on
 *   average); y is scaled (b y) rather than zeroed, for y = a A x + b y. */
#include "kernels/cuda/common.cuh"

#include <limits.h>
#include <string.h>

namespace {

#define HOLA_WARPS (HOLA_THREADS / 32)
static_assert((HOLA_THREADS & (HOLA_THREADS - 1)) == 0 && (HOLA_NPT_SMALL & (HOLA_NPT_SMALL - 1)) == 0 &&
                  (HOLA_NPT_LARGE & (HOLA_NPT_LARGE - 1)) == 0,
              "non-zeros a block must be a power of two (hola_starts_kernel shifts)");
#define HOLA_FULL 0xffffffffu
/* Resident blocks an SM the kernels are compiled for (__launch_bounds__): 4 for
 * f64 (at most 64 registers a thread; no spills on sm_90 with 8 non-zeros a
 * thread), 5 for f32 (48 registers; no spills since the COO-decoding path keeps
 * no per-entry row array, 16 bytes before), 2 for complex types (c64 with 8 non-zeros wanted 144 registers, and 4 blocks
 * spilled hundreds of bytes).  H100, f64, poisson3d 128^3: 2 blocks 0.156 ms,
 * 3 blocks 0.128, 4 blocks 0.121 (the blocks go through dependent phases --
 * loads, gathers, row bookkeeping, writes --, and more of them an SM keep more
 * of the matrix stream in flight).  5 blocks, same call, read flush, ms: f32
 * poisson3d-128 0.0765 -> 0.0662, stencil27b3-40 0.0657 -> 0.0553,
 * banded-s1e3 0.1088 -> 0.1013 (SpMV geometric mean against cuSPARSE CSR 0.918
 * -> 0.963); f64 0.0971 -> 0.1016 on poisson3d-128 with 112 bytes of spills
 * (0.991 -> 0.921), so f64 keeps 4.  Session 11 (bench/results/hola.md): with the
 * new COO path and early products f64 fits 5 blocks without spills, and 6
 * blocks (40 registers) cost f32 nothing but 14 bytes of f64 spills; neither
 * helped (f64 SpMV geometric mean 1.024 at 4 blocks, 0.983 at 5, 0.937 at 6).
 * 5 and 6 are run-time variants of hola_spmv (kernels/launch.h hola_minb). */
template <typename T> struct hola_minb { enum { value = 4 }; };
template <> struct hola_minb<float> { enum { value = 5 }; };
template <typename R> struct hola_minb<cx<R>> { enum { value = 2 }; };
/* Where the SpMV forms its products a x: right after the gathers (early: the
 * block waits for x before its row bookkeeping, and x need not stay in
 * registers through it) or where first needed (the gathers then run during the
 * bookkeeping, the default).  Early products let f64 run 5 blocks an SM
 * without spills, but H100, same call: f64 SpMV geometric mean against
 * cuSPARSE CSR 1.024 (late, 4 blocks) against 0.983 (early, 5 blocks); f32
 * 0.985 / 0.962.  Early products are a run-time variant (hola_early_mul).
 * hola_var: the SpMV's compile-time options (the default: hola_spmv_default). */
template <bool EARLY_MUL, int MINB, int OUT_DIV, bool NA> struct hola_var {
    static constexpr bool early_mul = EARLY_MUL, na = NA;
    static constexpr int minb = MINB, out_div = OUT_DIV;
};
template <typename T> using hola_spmv_default = hola_var<false, hola_minb<T>::value, 1, true>;

/* What the row-starts kernel does to y. */
enum { HOLA_Y_NONE = 0, HOLA_Y_ROWS = 1, HOLA_Y_ALL = 2 };

/* ---------------------------------------------------------------- kernel 1: row starts, y = b y */
/* Row i with entries [ea, eb): the first row of some block iff a block start
 * lies in [ea, eb); the last row of some block iff a block end B per - 1
 * (B >= 1) or nnz - 1 lies in [ea, eb).  Kernel 2 adds to exactly these rows
 * (and to no empty row) atomically; it writes every other row once. */
/* A block holds per = HOLA_THREADS npt = 2^lg non-zeros (npt 4 or 8), so block
 * numbers are shifts; a thread takes SR consecutive rows (1, 4 or 8: hola_sr),
 * their SR + 1 rowptr entries loaded together (16-byte loads where rowptr is
 * 16-byte aligned).  y = b y over all of y (HOLA_Y_ALL) is a separate coalesced
 * loop.  H100, ncu, poisson3d-128 f64 (2M rows, 8 MB of rowptr): one row a
 * thread with four 64-bit divisions a row 17.1 us (DRAM 15 % busy); shifts
 * 11.6 us (a 4-byte load a thread in flight); 8 rows a thread 9.7 us. */
template <typename T, int SR>
__global__ void __launch_bounds__(HOLA_THREADS)
    hola_starts_kernel(sps_index n, int64_t nnz, const sps_index *__restrict__ rowptr, int vec, int lg,
                       sps_index nblocks, sps_index *__restrict__ row_starts, int ymode, sps_index ny, T b, int bz,
                       T *__restrict__ y)
{
    static_assert(SR == 1 || SR % 4 == 0, "SR: 1 or whole 16-byte loads");
    sps_cu_pdl_trigger(); /* kernel 2 may launch now; it waits before it reads row_starts or touches y */
    const int64_t tid = (int64_t)blockIdx.x * blockDim.x + threadIdx.x, nt = (int64_t)gridDim.x * blockDim.x;
    const int64_t per = (int64_t)1 << lg;
    for (int64_t i0 = tid * SR; i0 < n; i0 += nt * SR) {
        sps_index e[SR + 1]; /* rowptr[i0 .. i0 + SR] (where <= n) */
        if (SR > 1 && vec && i0 + SR <= n) { /* i0 is a multiple of SR: aligned */
            const int4 *p = reinterpret_cast<const int4 *>(rowptr + i0);
#pragma unroll
            for (int q = 0; q < SR / 4; q++) {
                const int4 w = __ldg(p + q);
                e[4 * q] = w.x;
                e[4 * q + 1] = w.y;
                e[4 * q + 2] = w.z;
                e[4 * q + 3] = w.w;
            }
            e[SR] = __ldg(rowptr + i0 + SR);
        } else {
#pragma unroll
            for (int q = 0; q <= SR; q++) e[q] = i0 + q <= n ? __ldg(rowptr + i0 + q) : 0;
        }
#pragma unroll
        for (int q = 0; q < SR; q++) {
            const int64_t i = i0 + q, ea = e[q], eb = e[q + 1]; /* 0 <= ea <= eb */
            if (i >= n) break;
            bool scale = eb == ea; /* an empty row: kernel 2 writes no part of it */
            if (eb > ea) {
                const int64_t b0 = (ea + per - 1) >> lg, b1 = (eb - 1) >> lg;
                for (int64_t blk = b0; blk <= b1; blk++) row_starts[blk] = (sps_index)i;
                if (eb == nnz) row_starts[nblocks] = (sps_index)i;
                scale = b0 <= b1 || eb == nnz || (ea + per) >> lg <= eb >> lg;
            }
            if (ymode == HOLA_Y_ROWS && scale && i < ny) y[i] = bz ? zero_of<T>() : b * y[i];
        }
    }
    if (ymode == HOLA_Y_ALL)
        for (int64_t i = tid; i < ny; i += nt) y[i] = bz ? zero_of<T>() : b * y[i];
}

/* ---------------------------------------------------------------- kernel 2: shared pieces */
/* Shared memory of the usual path's row bookkeeping (Hola Alg. 4). */
template <int NPT> struct hola_rows_smem {
    sps_index row_start[HOLA_THREADS];               /* row of each thread's first entry */
    unsigned bits[HOLA_THREADS];                     /* bit i: entry i of the thread ends its row here */
    unsigned nonempty[HOLA_THREADS * NPT / 32];      /* bit r - r_first: row r has entries in the block */
    int flag[HOLA_WARPS];                            /* the warp meets an empty row inside a thread */
    sps_index last_row;                              /* the row of the block's last entry */
};

/* The COO decoding path's segmented-sum element and operator (common.cuh). */
template <typename T> using hola_segv = sps_cu_segv<T>;
template <typename T> using hola_seg_op = sps_cu_seg_op<T>;

/* Where a block stands: entries [k0, k0 + cnt), rows [r_first, r_hi]: r_hi is
 * the row holding entry k0 + cnt (row_starts[B + 1]; the last entry's row for
 * the last block), less one when that row starts at k0 + cnt, so a block of
 * NPB rows of one entry counts NPB rows (the usual path), not NPB + 1.
 * All the rowptr entries the block's first decisions need are loaded in one
 * round trip, right after the row starts: rowptr[r_hi] (for r_hi), rowptr[r_first
 * + 1] (the single-row test) and the thread's row of the first pass of
 * hola_assign_rows (ra, rb = rowptr[r_first + tid], rowptr[r_first + tid + 1]).
 * Called after the thread's matrix loads are issued, so that this chain of two
 * L2 round trips runs while they are in flight. */
struct hola_block {
    int64_t k0;
    int cnt;
    sps_index r_first, r_hi;
    int64_t e1;     /* rowptr[r_first + 1] */
    int64_t ra, rb; /* rowptr[r_first + tid], rowptr[r_first + tid + 1], where r_first + tid <= row_starts[B + 1] */
};
__device__ inline hola_block hola_block_of(int64_t k0, int cnt, const sps_index *__restrict__ row_starts,
                                           const sps_index *__restrict__ rowptr)
{
    hola_block bk;
    bk.k0 = k0;
    bk.cnt = cnt;
    bk.r_first = row_starts[blockIdx.x];
    const sps_index rs1 = row_starts[blockIdx.x + 1];
    const int64_t r = (int64_t)bk.r_first + threadIdx.x;
    const int64_t eh = rowptr[rs1];
    bk.e1 = rowptr[bk.r_first + 1];
    bk.ra = r <= rs1 ? rowptr[r] : 0;
    bk.rb = r <= rs1 ? rowptr[r + 1] : 0;
    bk.r_hi = rs1 > bk.r_first && eh >= bk.k0 + bk.cnt ? rs1 - 1 : rs1;
    return bk;
}

/* The thread's npt columns and values (entries k .. k + cnt - 1, cnt =
 * clamp(rem, 0, npt); beyond cnt: column -1, value 0).  Full threads (rem >=
 * npt) use 16-byte vector loads when the arrays are 16-byte aligned (vec,
 * uniform), so a warp reads 32 npt consecutive entries of each array in whole
 * lines.  The test is on rem itself, not on the clamped count: ptxas 13.0
 * (sm_90) fused "cnt == NPT" with the clamp into one VIMNMX.RELU whose
 * predicate output took the vector path for partial threads as well
 * (compute-sanitizer: a 16-byte read of a one-entry array). */
/* NA: the vector loads past the L1 (ld.global.nc.L1::no_allocate), as the CSR,
 * merge-path and padded kernels read their streams, so that the L1 keeps the
 * gathered x: the SpMV's (hola_var::na; __ldg is a run-time variant, hola_ldg).  H100, spbench 2026-11-24, same
 * call, against __ldg, ms: stencil27b3-40 f64 0.0991 -> 0.0903, f32 0.0776 ->
 * 0.0681, poisson3d-128 f64 0.1153 -> 0.1115, f32 0.0932 -> 0.0862; geometric
 * mean against cuSPARSE CSR f64 0.898 -> 0.918, f32 0.850 -> 0.886.  The SpMV^T
 * reads x once a row and keeps __ldg (no_allocate: 0.833 -> 0.824, f32 level). */
template <typename T, int NPT, bool NA>
__device__ inline void hola_load(const sps_index *__restrict__ col, const T *__restrict__ val, int64_t k, int rem,
                                 int vec, sps_index (&c)[NPT], T (&v)[NPT])
{
    static_assert((NPT * sizeof(sps_index)) % 16 == 0 && (NPT * sizeof(T)) % 16 == 0, "vector loads");
    if (vec && rem >= NPT) {
        const int4 *cp = reinterpret_cast<const int4 *>(col + k);
#pragma unroll
        for (int q = 0; q < NPT / 4; q++) {
            const int4 w = sps_cu_ld<NA>(cp + q);
            c[4 * q] = w.x;
            c[4 * q + 1] = w.y;
            c[4 * q + 2] = w.z;
            c[4 * q + 3] = w.w;
        }
        enum { NV = NPT * sizeof(T) / 16 };
        const uint4 *vp = reinterpret_cast<const uint4 *>(val + k);
        uint4 w[NV];
#pragma unroll
        for (int q = 0; q < NV; q++) w[q] = sps_cu_ld<NA>(vp + q);
        memcpy(v, w, sizeof v);
    } else {
#pragma unroll
        for (int i = 0; i < NPT; i++) {
            c[i] = i < rem ? col[k + i] : -1;
            v[i] = i < rem ? val[k + i] : zero_of<T>();
        }
    }
}

/* The prologue both products share: the thread's entries g .. g + cnt - 1 of
 * the block's NPB, loaded (hola_load) before the block's row starts and rowptr
 * entries (hola_block_of), so that the two load chains overlap. */
template <typename T, int NPT, bool NA>
__device__ inline hola_block hola_begin(int64_t nnz, const sps_index *__restrict__ rowptr,
                                        const sps_index *__restrict__ col, const T *__restrict__ val,
                                        const sps_index *__restrict__ row_starts, int vec, sps_index (&c)[NPT],
                                        T (&v)[NPT], int64_t &g, int &cnt)
{
    enum { NPB = HOLA_THREADS * NPT };
    const int tid = threadIdx.x;
    const int64_t k0 = (int64_t)blockIdx.x * NPB;
    g = k0 + (int64_t)tid * NPT;
    const int bcnt = (int)(nnz - k0 < NPB ? nnz - k0 : NPB);
    const int rem = bcnt - tid * NPT;
    cnt = rem < 0 ? 0 : rem < NPT ? rem : NPT;
    hola_load<T, NPT, NA>(col, val, g, rem, vec, c, v);
    sps_cu_pdl_wait(); /* kernel 1 has written row_starts and scaled y (hola_pdl) */
    return hola_block_of(k0, bcnt, row_starts, rowptr);
}

/* Largest row r in [lo, hi] with rowptr[r] <= g (rowptr[lo] <= g): the row of entry g. */
__device__ inline sps_index hola_find_row(const sps_index *__restrict__ rowptr, sps_index lo, sps_index hi, int64_t g)
{
    while (lo < hi) {
        const sps_index mid = lo + (hi - lo + 1) / 2;
        if (rowptr[mid] <= g) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* COO decoding: the row of each of the thread's entries g .. g + cnt - 1 (binary
 * searches, the next one only where the row changes). */
template <int NPT>
__device__ inline void hola_decode_rows(const sps_index *__restrict__ rowptr, const hola_block &bk, int64_t g, int cnt,
                                        sps_index (&rows)[NPT])
{
    sps_index r = cnt > 0 ? hola_find_row(rowptr, bk.r_first, bk.r_hi, g) : bk.r_first;
#pragma unroll
    for (int i = 0; i < NPT; i++) {
        if (i > 0 && i < cnt && rowptr[r + 1] <= g + i) r = hola_find_row(rowptr, r + 1, bk.r_hi, g + i);
        rows[i] = r;
    }
}

/* The usual path's row assignment (Hola Alg. 4): one thread per row of
 * [r_first, r_hi] (at most NPB rows, so at most npt passes). */
template <int NPT>
__device__ void hola_assign_rows(const sps_index *__restrict__ rowptr, const hola_block &bk, hola_rows_smem<NPT> &sm)
{
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    sm.bits[tid] = 0;
    if (tid < HOLA_WARPS) sm.flag[tid] = 0;
    __syncthreads();
    for (int64_t base = bk.r_first; base <= bk.r_hi; base += HOLA_THREADS) { /* uniform */
        const sps_index r = (sps_index)(base + tid);
        bool ne = false;
        if (base + tid <= bk.r_hi) {
            const bool first = base == bk.r_first; /* uniform: the first pass's entries are loaded */
            const int64_t a = (first ? bk.ra : (int64_t)rowptr[r]) - bk.k0, ef = (first ? bk.rb : (int64_t)rowptr[r + 1]) - bk.k0;
            if (a < bk.cnt) {
                if (a == ef) {
                    /* empty row between entries a - 1 and a (a > 0: rows after r_first start inside the
                       block); it breaks the end-bit count of the thread holding both, if one does */
                    if (a % NPT != 0) atomicOr(&sm.flag[(a - 1) / (32 * NPT)], 1); /* racecheck-clean */
                } else {
                    ne = true;
                    const int e = (int)(ef < bk.cnt ? ef : bk.cnt); /* the row's end in this block */
                    const int ta = a > 0 ? (int)((a + NPT - 1) / NPT) : 0, tb = (e - 1) / NPT;
                    for (int t = ta; t <= tb; t++) sm.row_start[t] = r;
                    atomicOr(&sm.bits[tb], 1u << (e - 1 - tb * NPT));
                    if (ef >= bk.cnt) sm.last_row = r;
                }
            }
        }
        const unsigned bal = __ballot_sync(HOLA_FULL, ne);
        if (lane == 0) sm.nonempty[(int)(base - bk.r_first) / 32 + warp] = bal;
    }
    __syncthreads();
}

/* Advance `row` past an end bit at the thread's entry g (another entry follows):
 * the next row, or in a flagged warp the next row holding entry g + 1. */
__device__ inline sps_index hola_next_row(const sps_index *__restrict__ rowptr, sps_index row, int lookup, int64_t g)
{
    row++;
    if (lookup)
        while (rowptr[row + 1] <= g + 1) row++;
    return row;
}

/* Batcher's odd-even merge sort of NPT (column, value) pairs by column, in
 * registers: every loop has a constant trip count, so after unrolling each
 * comparator's indices are constants (4 pairs: 5 comparators, 8: 19). */
template <typename T, int NPT> __device__ inline void hola_sort_pairs(sps_index (&c)[NPT], T (&v)[NPT])
{
    enum { LOG = NPT == 8 ? 3 : NPT == 4 ? 2 : 1 };
    static_assert(NPT == 1 << LOG, "NPT must be 2, 4 or 8");
#pragma unroll
    for (int lp = 0; lp < LOG; lp++)
#pragma unroll
        for (int lk = LOG - 1; lk >= 0; lk--)
#pragma unroll
            for (int j = 0; j < NPT; j++)
#pragma unroll
                for (int i = 0; i < NPT; i++) {
                    const int p = 1 << lp, k = 1 << lk;
                    if (lk > lp || j < k % p || (j - k % p) % (2 * k) != 0 || i >= k || i + j + k >= NPT ||
                        (i + j) / (2 * p) != (i + j + k) / (2 * p))
                        continue; /* not a comparator of the network */
                    if (c[i + j] > c[i + j + k]) {
                        const sps_index tc = c[i + j];
                        c[i + j] = c[i + j + k];
                        c[i + j + k] = tc;
                        const T tv = v[i + j];
                        v[i + j] = v[i + j + k];
                        v[i + j + k] = tv;
                    }
                }
}

/* ---------------------------------------------------------------- kernel 2: SpMV */
/* The SpMV's output buffer holds NPB / out_div rows; a block with more rows
 * (empty ones included) than that takes the COO decoding path.  2 halves the
 * shared memory of a block (f64, 8 non-zeros a thread: 16 KB of buffer -> 8 KB),
 * leaving more of the SM's 228 KB to the L1 that holds the gathered x, at the
 * cost of sending blocks of fewer than 2 non-zeros a row to COO decoding.  H100,
 * early products and 5 blocks an SM, same call: f64 geometric mean 0.983 -> 0.996,
 * f32 0.962 -> 0.979, both below the default build's (1.024 / 0.985): 1 kept,
 * 2 a run-time variant (hola_out_div). */
template <typename T, int NPT, int OUT_DIV> struct hola_spmv_smem {
    union {
        T out[HOLA_THREADS * NPT / OUT_DIV]; /* usual path: the block's row results, index r - r_first */
        typename cub::BlockScan<hola_segv<T>, HOLA_THREADS>::TempStorage scan; /* COO decoding */
        typename cub::BlockReduce<T, HOLA_THREADS>::TempStorage red;           /* single row */
    } u;
    hola_rows_smem<NPT> rows;
};

template <typename T, int NPT, typename V>
__global__ void __launch_bounds__(HOLA_THREADS, V::minb)
    hola_spmv_kernel(int64_t nnz, const sps_index *__restrict__ rowptr, const sps_index *__restrict__ col,
                     const T *__restrict__ val, const sps_index *__restrict__ row_starts, int vec, T a,
                     const T *__restrict__ x, T b, int bz, T *__restrict__ y)
{
    enum { NPB = HOLA_THREADS * NPT };
    __shared__ hola_spmv_smem<T, NPT, V::out_div> sm;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    /* The loads go out in the order of their dependence chains, so that one
     * block has its matrix stream, its row bookkeeping and its x gathers in flight
     * together: columns and values (DRAM), row starts then rowptr (two L2 round
     * trips, hola_block_of), x (after the columns).  The products are formed
     * only where they are first needed: after the row bookkeeping on the usual
     * path, which runs while the gathers are in flight. */
    int64_t g; /* the thread's first entry */
    int cnt;
    sps_index c[NPT];
    T p[NPT], xv[NPT];
    const hola_block bk = hola_begin<T, NPT, V::na>(nnz, rowptr, col, val, row_starts, vec, c, p, g, cnt);
#pragma unroll
    for (int i = 0; i < NPT; i++) xv[i] = i < cnt ? x[c[i]] : zero_of<T>();
    if constexpr (V::early_mul) { /* products now: xv need not stay live through the row bookkeeping */
#pragma unroll
        for (int i = 0; i < NPT; i++) p[i] = p[i] * xv[i];
    }

    if (bk.e1 >= bk.k0 + bk.cnt) { /* uniform: one row holds the whole block */
#pragma unroll
        for (int i = 0; i < NPT; i++)
            if constexpr (!V::early_mul) p[i] = p[i] * xv[i]; /* 0 beyond cnt: v and x are 0 there */
        T s = p[0];
#pragma unroll
        for (int i = 1; i < NPT; i++) s = s + p[i];
        const T tot = cub::BlockReduce<T, HOLA_THREADS>(sm.u.red).Reduce(s, sps_cu_sum<T>());
        if (tid == 0) atomic_add(&y[bk.r_first], a * tot);
        return;
    }

    if ((int64_t)bk.r_hi - bk.r_first + 1 > NPB / V::out_div) { /* uniform: COO decoding */
        /* One walk over the thread's entries, finding each one's row (hola_find_row
           where the row changes): a row that starts and ends inside the thread is
           written at once; the sum of the thread's first row, when that row began in
           an earlier thread, waits for the block's segmented scan (one item a thread:
           its last row's sum, and whether it starts a row), which brings the earlier
           threads' part.  No per-entry row array stays live (registers). */
        const int64_t k1 = bk.k0 + bk.cnt;
        sps_index sr = cnt > 0 ? hola_find_row(rowptr, bk.r_first, bk.r_hi, g) : bk.r_first; /* the current row */
        bool started = cnt <= 0 || g == bk.k0 || rowptr[sr] == g; /* the current row starts in this thread */
        bool heads = started, first_ends = false, first_last = false;
        T s = zero_of<T>(), first = zero_of<T>();
        const sps_index first_row = sr;
        /* row r ends here with sum v; last: at the block's last entry (the row may go on in the next block) */
        const auto finish = [&](sps_index r, T v, bool last) {
            if (r == bk.r_first || last) atomic_add(&y[r], a * v);
            else y[r] = bz ? a * v : a * v + b * y[r];
        };
#pragma unroll
        for (int i = 0; i < NPT; i++) {
            if (i >= cnt) break;
            if constexpr (!V::early_mul) p[i] = p[i] * xv[i];
            if (i > 0 && rowptr[sr + 1] <= g + i) { /* the row ended at entry g + i - 1 */
                if (started) finish(sr, s, false);
                else first_ends = true, first = s;
                sr = hola_find_row(rowptr, sr + 1, bk.r_hi, g + i);
                s = zero_of<T>();
                started = heads = true;
            }
            s = s + p[i];
        }
        const bool last = cnt > 0 && g + cnt == k1;
        const bool ends = cnt > 0 && (last || rowptr[sr + 1] <= g + cnt); /* the current row ends here */
        if (ends && started) finish(sr, s, last);
        else if (ends) first_ends = true, first = s, first_last = last;
        hola_segv<T> it, pre;
        it.f = heads;
        it.v = ends ? zero_of<T>() : s; /* what the next thread's first row receives */
        cub::BlockScan<hola_segv<T>, HOLA_THREADS>(sm.u.scan).ExclusiveScan(it, pre, hola_seg_op<T>());
        if (first_ends) finish(first_row, pre.v + first, first_last); /* never thread 0: its first row starts in it */
        return;
    }

    /* the usual path */
    hola_assign_rows<NPT>(rowptr, bk, sm.rows);
#pragma unroll
    for (int i = 0; i < NPT; i++)
        if constexpr (!V::early_mul) p[i] = p[i] * xv[i]; /* 0 beyond cnt: v and x are 0 there */
    T *out = sm.u.out;
    sps_index row = 0;
    unsigned bits = 0;
    T s = zero_of<T>();
    if (cnt > 0) {
        row = sm.rows.row_start[tid];
        bits = sm.rows.bits[tid];
        const int lookup = sm.rows.flag[warp];
#pragma unroll
        for (int i = 0; i < NPT; i++) {
            s = s + p[i];
            if ((bits >> i) & 1u) {
                out[row - bk.r_first] = s; /* the row's end: its only plain store */
                s = zero_of<T>();
                if (i + 1 < cnt) row = hola_next_row(rowptr, row, lookup, g + i);
            }
        }
    }
    /* carried partial sums: the row continues into a later thread of the block */
    const bool carry = cnt > 0 && !((bits >> (cnt - 1)) & 1u);
    __syncthreads(); /* every plain store is in */
    if (__popc(__ballot_sync(HOLA_FULL, cnt > 0 && bits == 0)) > 16) { /* uniform in the warp: long rows */
        int key = carry ? row : -1;
        T v = carry ? s : zero_of<T>();
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) { /* segmented suffix sums over equal keys (keys ascend) */
            const T vi = shfl_down(HOLA_FULL, v, o, 32);
            const int ki = __shfl_down_sync(HOLA_FULL, key, o);
            if (lane + o < 32 && ki == key) v = v + vi;
        }
        const int kp = __shfl_up_sync(HOLA_FULL, key, 1);
        if (key >= 0 && (lane == 0 || kp != key)) atomic_add(&out[key - bk.r_first], v);
    } else if (carry) {
        atomic_add(&out[row - bk.r_first], s);
    }
    __syncthreads();
    /* write the buffer to y, coalesced, warps aligned to 32 rows */
    const sps_index r_last = sm.rows.last_row;
    for (int64_t rr = (bk.r_first & ~31) + tid; rr <= r_last; rr += HOLA_THREADS) {
        if (rr < bk.r_first) continue;
        const sps_index r = (sps_index)rr;
        const int q = r - bk.r_first;
        if (r == bk.r_first || r == r_last) atomic_add(&y[r], a * out[q]);
        else if ((sm.rows.nonempty[q >> 5] >> (q & 31)) & 1u) y[r] = bz ? a * out[q] : a * out[q] + b * y[r];
    }
}

/* ---------------------------------------------------------------- kernel 2: SpMV^T */
template <typename T, int NPT>
__global__ void __launch_bounds__(HOLA_THREADS, hola_minb<T>::value)
    hola_spmvt_kernel(int64_t nnz, const sps_index *__restrict__ rowptr, const sps_index *__restrict__ col,
                      const T *__restrict__ val, const sps_index *__restrict__ row_starts, int vec, T a,
                      const T *__restrict__ x, T *__restrict__ y)
{
    enum { NPB = HOLA_THREADS * NPT };
    __shared__ hola_rows_smem<NPT> sm;
    const int tid = threadIdx.x, warp = tid >> 5;
    int64_t g;
    int cnt;
    sps_index c[NPT];
    T v[NPT];
    const hola_block bk = hola_begin<T, NPT, false>(nnz, rowptr, col, val, row_starts, vec, c, v, g, cnt);

    if (bk.e1 >= bk.k0 + bk.cnt) { /* uniform: one row */
        const T ax = a * x[bk.r_first];
#pragma unroll
        for (int i = 0; i < NPT; i++) v[i] = v[i] * ax;
    } else if ((int64_t)bk.r_hi - bk.r_first + 1 > NPB) { /* uniform: COO decoding */
        sps_index rows[NPT];
        hola_decode_rows<NPT>(rowptr, bk, g, cnt, rows);
        T ax = a * x[rows[0]];
#pragma unroll
        for (int i = 0; i < NPT; i++) {
            if (i > 0 && i < cnt && rows[i] != rows[i - 1]) ax = a * x[rows[i]];
            v[i] = v[i] * ax;
        }
    } else { /* the usual path: row starts and end bits */
        hola_assign_rows<NPT>(rowptr, bk, sm);
        if (cnt > 0) {
            sps_index row = sm.row_start[tid];
            const unsigned bits = sm.bits[tid];
            const int lookup = sm.flag[warp];
            T ax = a * x[row];
#pragma unroll
            for (int i = 0; i < NPT; i++) {
                v[i] = v[i] * ax;
                if (((bits >> i) & 1u) && i + 1 < cnt) {
                    row = hola_next_row(rowptr, row, lookup, g + i);
                    ax = a * x[row];
                }
            }
        }
    }
    /* scatter in column order (entries beyond cnt sort last and are skipped) */
#pragma unroll
    for (int i = 0; i < NPT; i++)
        if (i >= cnt) c[i] = INT_MAX;
    hola_sort_pairs<T, NPT>(c, v);
#pragma unroll
    for (int i = 0; i < NPT; i++)
        if (i < cnt) atomic_add(&y[c[i]], v[i]);
}

} // namespace

/* ---------------------------------------------------------------- implementations */
static sps_status hola_check_npt(sps_exec *ex, const char *what, int npt)
{
    if (npt == HOLA_NPT_SMALL || npt == HOLA_NPT_LARGE) return SPS_OK;
    return sps_kerror(ex, SPS_ERR_ARG, "%s: %d non-zeros per thread (must be %d or %d)", what, npt, HOLA_NPT_SMALL,
                     HOLA_NPT_LARGE);
}

/* log2 of the non-zeros a block, HOLA_THREADS npt (npt checked: a power of two). */
static int hola_lg(int npt)
{
    int lg = 0;
    while (((int64_t)1 << lg) < (int64_t)HOLA_THREADS * npt) lg++;
    return lg;
}

/* Kernel 1: SR rows a thread where that still gives half a resident wave of
 * threads (sms x 1024), else one row a thread (poisson3d-48's 110k rows: 8 a
 * thread left 54 blocks, and Hola went from 0.0160 to 0.0173 ms). */
template <typename T>
static sps_status hola_starts(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, int npt,
                              sps_index *row_starts, int ymode, sps_index ny, sps_cplx b, void *y)
{
    const int64_t top = n > ny ? n : ny;
    if (top <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0, vec = (uintptr_t)rowptr % 16 == 0, lg = hola_lg(npt);
    const int64_t half = (int64_t)sps_cust(ex)->sms * 1024;
    const int sr = (int64_t)n / 8 >= half ? 8 : (int64_t)n / 4 >= half ? 4 : 1;
    const int64_t rows_t = ((int64_t)n + sr - 1) / sr;
    const unsigned grid = sps_cu_grid(ex, ymode == HOLA_Y_ALL && ny > rows_t ? ny : rows_t);
    const sps_index nb = sps_hola_blocks(nnz, npt);
    const auto kernel = sr == 8 ? hola_starts_kernel<T, 8> : sr == 4 ? hola_starts_kernel<T, 4> : hola_starts_kernel<T, 1>;
    kernel<<<grid, HOLA_THREADS, 0, sps_custream(ex)>>>(n, nnz, rowptr, vec, lg, nb, row_starts, ymode, ny,
                                                         sc<T>::from(b), bz, (T *)y);
    SPS_CU_LAUNCHED(ex, "hola_starts_kernel");
    return SPS_OK;
}

static int hola_vec_ok(const void *col, const void *val)
{
    return ((uintptr_t)col % 16 == 0) && ((uintptr_t)val % 16 == 0);
}

/* Kernel 2 launches dependent on kernel 1 (hola_pdl; common.cuh's
 * sps_cu_launch_pdl): its blocks issue their column and value loads while
 * kernel 1 finishes, and wait only before the row starts (hola_begin).  Only
 * where sps_cu_all_sm90() (common.cuh says why). */
constexpr bool hola_pdl = true; /* measured (bench/results/hola.md, session 10), no longer a knob */
static_assert(HOLA_THREADS == SPS_CU_THREADS, "sps_cu_launch_pdl launches SPS_CU_THREADS threads a block");
template <typename... P, typename... A>
static cudaError_t hola_launch(void (*kernel)(P...), sps_index nb, cudaStream_t s, A &&...args)
{
    if (hola_pdl && sps_cu_all_sm90()) return sps_cu_launch_pdl(kernel, (unsigned)nb, s, std::forward<A>(args)...);
    kernel<<<(unsigned)nb, HOLA_THREADS, 0, s>>>(std::forward<A>(args)...);
    return cudaSuccess; /* the launch is checked by SPS_CU_LAUNCHED */
}

template <typename T>
static sps_status hola_row_starts_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, int npt,
                                       sps_index *row_starts)
{
    SPS_CHECK(hola_check_npt(ex, "hola_row_starts", npt));
    return hola_starts<T>(ex, n, nnz, rowptr, npt, row_starts, HOLA_Y_NONE, 0, sps_cplx_make(0.0, 0.0), NULL);
}

template <typename T, typename V>
static sps_status hola_spmv_run(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, const sps_index *col,
                                const void *val, int npt, sps_index *row_starts, sps_cplx a, const void *x, sps_cplx b,
                                void *y)
{
    SPS_CHECK(hola_starts<T>(ex, n, nnz, rowptr, npt, row_starts, HOLA_Y_ROWS, n, b, y));
    const sps_index nb = sps_hola_blocks(nnz, npt);
    if (nb <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0, vec = hola_vec_ok(col, val);
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, hola_launch(npt == HOLA_NPT_SMALL ? hola_spmv_kernel<T, HOLA_NPT_SMALL, V>
                                                 : hola_spmv_kernel<T, HOLA_NPT_LARGE, V>,
                            nb, s, nnz, rowptr, col, (const T *)val, (const sps_index *)row_starts, vec,
                            sc<T>::from(a), (const T *)x, sc<T>::from(b), bz, (T *)y));
    SPS_CU_LAUNCHED(ex, "hola_spmv_kernel");
    return SPS_OK;
}

/* hola_spmv with the exec's launch variant (kernels/launch.h; NULL or zero: the
 * default).  Compiled in: the default and the builds measured in
 * bench/results/hola-variants-* and hola-minblocks-* at commit e3d34fe (early products with 5 or 6
 * blocks an SM, with 5 and a halved output buffer; 5 blocks alone), and __ldg
 * stream loads (hola.md, session 9).  Each is two kernels (npt 4 and 8) a type. */
template <typename T>
static sps_status hola_spmv_impl(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                                 const sps_index *col, const void *val, int npt, sps_index *row_starts, sps_cplx a,
                                 const void *x, sps_cplx b, void *y)
{
    (void)m;
    typedef hola_spmv_default<T> D;
    SPS_CHECK(hola_check_npt(ex, "hola_spmv", npt));
    const sps_launch_variant *lv = ex->lv;
    const int early = lv ? lv->hola_early_mul : 0, ldg = lv ? lv->hola_ldg : 0;
    const int mb = lv && lv->hola_minb ? lv->hola_minb : D::minb;
    const int div = lv && lv->hola_out_div ? lv->hola_out_div : 1;
#define HOLA_RUN_IF(E, M, O, NA)                                                                                    \
    if (early == (E) && mb == (M) && div == (O) && ldg == !(NA))                                                   \
        return hola_spmv_run<T, hola_var<E, M, O, NA>>(ex, n, nnz, rowptr, col, val, npt, row_starts, a, x, b, y);
    HOLA_RUN_IF(false, D::minb, 1, true) /* the default */
    HOLA_RUN_IF(true, 5, 1, true)        /* e5 */
    HOLA_RUN_IF(true, 5, 2, true)        /* e5o2 */
    HOLA_RUN_IF(true, 6, 1, true)        /* e6 */
    HOLA_RUN_IF(false, 5, 1, true)       /* mb5 (f32: the default) */
    HOLA_RUN_IF(false, D::minb, 1, false) /* __ldg */
#undef HOLA_RUN_IF
    return sps_kerror(ex, SPS_ERR_ARG,
                      "hola_spmv: launch variant early_mul %d minb %d out_div %d ldg %d is not compiled in: the "
                      "default (0 %d 1 0), early_mul 1 with minb 5 or 6 (out_div 2 with 5), minb 5, or ldg 1",
                      early, mb, div, ldg, (int)D::minb);
}

template <typename T>
static sps_status hola_spmvt_impl(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                                  const sps_index *col, const void *val, int npt, sps_index *row_starts, sps_cplx a,
                                  const void *x, sps_cplx b, void *y)
{
    SPS_CHECK(hola_check_npt(ex, "hola_spmvt", npt));
    SPS_CHECK(hola_starts<T>(ex, n, nnz, rowptr, npt, row_starts, HOLA_Y_ALL, m, b, y));
    const sps_index nb = sps_hola_blocks(nnz, npt);
    if (nb <= 0 || m <= 0) return SPS_OK;
    const int vec = hola_vec_ok(col, val);
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, hola_launch(npt == HOLA_NPT_SMALL ? hola_spmvt_kernel<T, HOLA_NPT_SMALL> : hola_spmvt_kernel<T, HOLA_NPT_LARGE>,
                            nb, s, nnz, rowptr, col, (const T *)val, (const sps_index *)row_starts, vec,
                            sc<T>::from(a), (const T *)x, (T *)y));
    SPS_CU_LAUNCHED(ex, "hola_spmvt_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_HOLA_ENTRIES(S, T)                                                                                     \
    extern "C" sps_status sps_cuda_hola_spmv_##S(sps_exec *ex, sps_index n, sps_index m, int64_t nnz,              \
                                                 const sps_index *rowptr, const sps_index *col, const void *val,      \
                                                 int npt, sps_index *row_starts, sps_cplx a, const void *x,           \
                                                 sps_cplx b, void *y)                                                 \
    { return hola_spmv_impl<T>(ex, n, m, nnz, rowptr, col, val, npt, row_starts, a, x, b, y); }                      \
    extern "C" sps_status sps_cuda_hola_spmvt_##S(sps_exec *ex, sps_index n, sps_index m, int64_t nnz,             \
                                                  const sps_index *rowptr, const sps_index *col, const void *val,     \
                                                  int npt, sps_index *row_starts, sps_cplx a, const void *x,          \
                                                  sps_cplx b, void *y)                                                \
    { return hola_spmvt_impl<T>(ex, n, m, nnz, rowptr, col, val, npt, row_starts, a, x, b, y); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_HOLA_ENTRIES)

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
extern "C" sps_status sps_cuda_hola_row_starts(sps_exec *ex, sps_index n, int64_t nnz,
                                                   const sps_index *rowptr, int npt, sps_index *row_starts)
{ return hola_row_starts_impl<float>(ex, n, nnz, rowptr, npt, row_starts); }
