/* libspsolve — CUDA CSR SpMV and SpMV^T, f32/f64/c32/c64 from one set of templates
 * (the row groups: csr_common.cuh; the fused products of the solvers: csr_fused.cu).
 *
 * csr_spmv   y = a A x + b y (b == 0: y not read).  "Vector CSR" (Bell & Garland,
 *            SC'09, §4.2): a group of TPR threads (a power of two, 1..32, inside a
 *            warp) per row; lane l sums entries rowptr[i] + l, + 2 TPR, ... left to
 *            right, then the group adds its lanes by a shuffle-down tree.  TPR is
 *            chosen from the average row length nnz / n (the host's nnz, passed to the
 *            kernel: reading rowptr[0], rowptr[n] in the kernel put one more DRAM round
 *            trip before the rows' loads, which small matrices paid in full):
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
 *            Traffic: (n+1) 4 + nnz (4 + S) bytes for A (+ (n+1) 4 for the
 *            long-row scan, mostly from L2), x gathered (>= m S, more when
 *            columns scatter), n S written (+ n S read when b != 0).
 * csr_spmvt  y = a A^T x + b y (y of length m) without forming A^T: y = b y (or 0)
 *            in one pass, then the same row groups scatter a val[k] x[i] into
 *            y[col[k]] with atomicAdd (complex: its two components).  NOT
 *            bit-reproducible (the order of the atomic adds varies).
 *
 * Sums are in T, as the CPU reference (kernels/cpu/spmv.inc). */
#include "kernels/cuda/csr_common.cuh"

namespace {

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

/* Resident blocks an SM the row kernels are compiled for (__launch_bounds__(256,
 * MINB): at most 65536 / (256 MINB) registers a thread): 8 for 4-byte values (32
 * registers), 6 for larger (40).  Pinned because ptxas's own choice moves with
 * small edits of the staged pass: an overflow-safe rewrite of its index
 * arithmetic (2026-11-23) took f32 from 32 registers to 48 (5 blocks) and f64 from
 * 40 to 64 (4 blocks), and the f32 row kernel from 0.093 to 0.112 ms on
 * banded-s1e3 (H100, same run: 0.0927 with 8 blocks forced).  The few bytes
 * ptxas then spills sit in the direct-load fallback.  The other count (6 for
 * 4-byte values, 4 for larger) is a run-time variant of csr_spmv (csr_minb). */
template <typename T> __host__ __device__ constexpr int csr_minb() { return sizeof(T) <= 4 ? 8 : 6; }
/* csr_spmv's row kernel for row-group shape S (csr_bw<T>: the default) and MINB
 * resident blocks an SM (csr_minb<T>(): the default). */
template <typename T, bool LONG, typename S, int MINB>
__global__ void __launch_bounds__(SPS_CU_THREADS, MINB)
    csr_spmv_kernel(sps_index n, int tpr, const sps_index *rowptr, const sps_index *col, const T *val, const T *x,
                    sps_cu_axpby_out<T> out)
{
    const unsigned nb = csr_active_blocks(n, tpr);
    if (blockIdx.x >= nb) return; /* uniform */
    csr_block_rows<T, S, LONG>(n, rowptr, col, val, csr_x_plain<T>{x}, out, nb, tpr);
}

/* The run-time variants of csr_spmv compiled in (kernels/launch.h): the default
 * shape and occupancy, and each of its four knobs moved alone to its neighbour --
 * entries a lane (shift - 1; 16-byte values: shift 1), entries in flight (4 <-> 2),
 * rows a staged pass (1 <-> 2), resident blocks (8 -> 6, 6 -> 4).  Five
 * instantiations a type and long-row flag: compile time of csr.cu in the commit
 * that added them. */
template <typename T> struct csr_variants {
    typedef csr_bw<T> D;
    static constexpr int M = csr_minb<T>();
    static constexpr int shift = D::shift > 0 ? D::shift - 1 : 1;
    static constexpr int U = D::U == 4 ? 2 : 4;
    static constexpr int K = D::K == 1 ? 2 : 1;
    static constexpr int minb = sizeof(T) <= 4 ? 6 : 4;
};

template <typename T, int TPR>
__device__ void csrt_rows(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, T a, const T *x,
                          T *y, sps_index long_len, unsigned nblocks)
{
    const int lane = threadIdx.x & (TPR - 1);
    const sps_index groups = (sps_index)(nblocks * blockDim.x / TPR);
    for (sps_index i = (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / TPR); i < n; i = sps_cu_next(i, groups, n)) {
        const sps_index beg = rowptr[i], end = rowptr[i + 1];
        if (end - beg > long_len) continue; /* done by csrt_long_rows */
        const T ax = a * x[i];
        for (sps_index k = beg + lane; k < end; k += TPR) atomic_add(&y[col[k]], val[k] * ax);
    }
}

template <typename T, bool LONG>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    csr_spmvt_kernel(sps_index n, int tpr, const sps_index *rowptr, const sps_index *col, const T *val, T a,
                     const T *x, T *y)
{
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

} // namespace

/* ---------------------------------------------------------------- implementations */
template <typename T, typename S, int MINB>
static sps_status csr_spmv_run(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                               const sps_index *col, const void *val, sps_index maxrow, sps_cplx a, const void *x,
                               sps_cplx b, void *y)
{
    (void)m;
    if (n <= 0) return SPS_OK;
    /* lanes a row widened on few rows so that the longest row skips the long-row pass
       (kernels/csr_rows.h sps_csr_tpr_fit); the fused products keep csr_tpr_of */
    const int tpr = sps_csr_tpr_fit(n, nnz, maxrow, S::shift, S::min_threads);
    const auto kernel = maxrow < 0 || maxrow > csr_med_len(tpr) ? csr_spmv_kernel<T, true, S, MINB>
                                                                : csr_spmv_kernel<T, false, S, MINB>;
    kernel<<<csr_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, tpr, rowptr, col, (const T *)val, (const T *)x, sps_cu_axpby_out_of<T>(a, b, y));
    SPS_CU_LAUNCHED(ex, "csr_spmv_kernel");
    return SPS_OK;
}

/* csr_spmv with the exec's launch variant (NULL or zero: the default kernel). */
template <typename T>
static sps_status csr_spmv_impl(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                                const sps_index *col, const void *val, sps_index maxrow, sps_cplx a, const void *x,
                                sps_cplx b, void *y)
{
    typedef csr_variants<T> V;
    typedef typename V::D D;
    const sps_launch_variant *lv = ex->lv;
    const int e = lv && lv->csr_lane_entries ? lv->csr_lane_entries : 1 << D::shift;
    const int u = lv && lv->csr_unroll ? lv->csr_unroll : D::U;
    const int k = lv && lv->csr_stage_rows ? lv->csr_stage_rows : D::K;
    const int mb = lv && lv->csr_minb ? lv->csr_minb : V::M;
    const int moved = (e != 1 << D::shift) + (u != D::U) + (k != D::K) + (mb != V::M);
    /* Few rows (n x the unspread lanes a row below csr_min_threads) with 8- and 16-byte
     * values: one row unit a staged pass (V::K = 1) where larger matrices keep 2.  The
     * smaller passes spread a small matrix's rows over twice the groups.  H100, the tuner
     * on 78 f64 matrices (spbench 2026-11-26, bench/results/auto-model-nvidia-h100-2026-11-27.md):
     * csr_stage_rows=1 won on every small matrix whose model pick was the row groups,
     * spbench's time 1.03-1.21x CSR's default (bcsstk13 7.1 -> 5.8 us, lund_b 6.3 -> 5.5,
     * s1rmq4m1 7.8 -> 7.0).  An explicit csr_stage_rows, or any other variant, keeps its shape. */
    if (moved == 0 && D::K != V::K && sizeof(T) > 4 && !(lv && lv->csr_stage_rows) &&
        (int64_t)n * sps_csr_tpr(n, nnz, D::shift, 0) < csr_min_threads)
        return csr_spmv_run<T, csr_shape<T, D::shift, D::U, V::K>, V::M>(ex, n, m, nnz, rowptr, col, val, maxrow, a,
                                                                        x, b, y);
    if (moved == 0) return csr_spmv_run<T, D, V::M>(ex, n, m, nnz, rowptr, col, val, maxrow, a, x, b, y);
    if (moved == 1 && e == 1 << V::shift)
        return csr_spmv_run<T, csr_shape<T, V::shift, D::U, D::K>, V::M>(ex, n, m, nnz, rowptr, col, val, maxrow, a,
                                                                        x, b, y);
    if (moved == 1 && u == V::U)
        return csr_spmv_run<T, csr_shape<T, D::shift, V::U, D::K>, V::M>(ex, n, m, nnz, rowptr, col, val, maxrow, a,
                                                                        x, b, y);
    if (moved == 1 && k == V::K)
        return csr_spmv_run<T, csr_shape<T, D::shift, D::U, V::K>, V::M>(ex, n, m, nnz, rowptr, col, val, maxrow, a,
                                                                        x, b, y);
    if (moved == 1 && mb == V::minb) /* csr_shape, not D: the default kernel then shares no __shared__ static
                                        with it, and its PTX stays the one of the build without variants */
        return csr_spmv_run<T, csr_shape<T, D::shift, D::U, D::K>, V::minb>(ex, n, m, nnz, rowptr, col, val, maxrow,
                                                                           a, x, b, y);
    return sps_kerror(ex, SPS_ERR_ARG,
                      "csr_spmv: launch variant lane_entries %d unroll %d stage_rows %d minb %d is not compiled in "
                      "for %d-byte values: the default (%d %d %d %d) or one of it moved to %d, %d, %d or %d",
                      e, u, k, mb, (int)sizeof(T), 1 << D::shift, D::U, D::K, V::M, 1 << V::shift, V::U, V::K,
                      V::minb);
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
        n, csr_tpr_of<T>(n, nnz), rowptr, col, (const T *)val, sc<T>::from(a), (const T *)x, (T *)y);
    SPS_CU_LAUNCHED(ex, "csr_spmvt_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_CSR_PARAMS                                                                                           \
    (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr, const sps_index *col,             \
     const void *val, sps_index maxrow, sps_cplx a, const void *x, sps_cplx b, void *y)
#define SPS_CU_CSR_ENTRIES(S, T) \
    SPS_CU_SPMV_ENTRIES(csr, S, T, SPS_CU_CSR_PARAMS, (ex, n, m, nnz, rowptr, col, val, maxrow, a, x, b, y))

SPS_CU_FOR_ALL_TYPES(SPS_CU_CSR_ENTRIES)
