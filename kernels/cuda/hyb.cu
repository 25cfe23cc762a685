/* libspsolve — CUDA kernels of HYB's ELL part and its build.  What each
 * computes is the CPU reference's (kernels/cpu/hyb.c, hyb.inc); layout in
 * formats/hyb.c.  The COO tail runs on coo_spmv / coo_spmvt (coo.cu).
 *
 *   hyb_tail_ptr   counts max(0, len_i - K), then their exclusive sum
 *                  (sps_cu_scan_index, scan.cu; integers: exact).
 *   hyb_fill       one thread per ELL row i < ld: writes its K slots (column
 *                  -1 / value 0 past the row's end) and its tail entries.
 *   hyb_ell_spmv   one thread per row, slot k*ld + i: at each k a warp reads
 *                  one contiguous 128-byte line of ell_col (coalesced, ld is a
 *                  multiple of 32); 4 slots' col/val in flight, then their x
 *                  (hyb_u); stops after the first chunk ending in padding.
 *                  Summed in T in column order, as the CPU: bit-reproducible.
 *   hyb_ell_spmvt  y = b y (own pass), then one thread per row scattering with
 *                  atomicAdd: NOT bit-reproducible (nor is coo_spmvt's tail).
 * Launch shape: 256 threads, grid-stride, at most 32 blocks per SM (common.cuh).
 * Traffic of hyb_ell_spmv (minimal model, S = sizeof(T)): K ld (4 + S) slots
 * read up to each row's end, n S (y), x gathers. */
#include "kernels/cuda/common.cuh"

namespace {

template <typename T> __global__ void __launch_bounds__(SPS_CU_THREADS) hyb_scale_kernel(sps_index m, T b, int bz, T *y)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index j = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); j < m; j = sps_cu_next(j, stride, m))
        y[j] = bz ? zero_of<T>() : b * y[j];
}

/* cnt[i] = max(0, len_i - K) for i < n */
__global__ void __launch_bounds__(SPS_CU_THREADS) tail_count_kernel(sps_index n, const sps_index *rowptr, sps_index K,
                                                                    sps_index *cnt)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const sps_index L = rowptr[i + 1] - rowptr[i];
        cnt[i] = L > K ? L - K : 0;
    }
}

template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) hyb_fill_kernel(sps_index n, const sps_index *rowptr, const sps_index *col,
                                                                  const T *val, sps_index K, int64_t ld,
                                                                  const sps_index *tail_ptr, sps_index *ell_col, T *ell_val,
                                                                  sps_index *tail_row, sps_index *tail_col, T *tail_val)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < ld; i += stride) {
        const sps_index k0 = i < n ? rowptr[i] : 0, len = i < n ? rowptr[i + 1] - k0 : 0;
        for (sps_index k = 0; k < K; k++) {
            const int64_t slot = (int64_t)k * ld + i;
            if (k < len) {
                ell_col[slot] = col[k0 + k];
                ell_val[slot] = val[k0 + k];
            } else {
                ell_col[slot] = -1;
                ell_val[slot] = zero_of<T>();
            }
        }
        for (sps_index k = K; k < len; k++) {
            const sps_index t = tail_ptr[i] + (k - K);
            tail_row[t] = (sps_index)i;
            tail_col[t] = col[k0 + k];
            tail_val[t] = val[k0 + k];
        }
    }
}

/* Slots a thread loads at once in the ELL part: 4 (col/val of 4 slots in flight,
 * then their x; padding slots, col < 0, are loaded but not multiplied, and a chunk
 * ending in padding ends the row).  Same sum, in slot order, as the serial loop
 * (U = 1) it replaced.  H100 2026-11-23, same run, ms, U = 1 / 4 / 8: f64
 * poisson3d-128 0.0903 / 0.0817 / 0.0812, stencil27b3-40 0.0961 / 0.0780 / 0.0776,
 * banded-s1e3 0.1214 / 0.1089 / 0.1086, banded-s1e5 0.1845 / 0.1793 / 0.1823; f32
 * (U = 1 / 4) poisson3d-128 0.0722 / 0.0569, stencil27b3-40 0.0848 / 0.0569,
 * banded-s1e3 0.0995 / 0.0762.  c64 not measured.  8 was within 1 % of 4 either way and 1
 * lost: 4, no longer a knob (bench/results/knobs.md). */
constexpr int hyb_u = 4;
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) hyb_ell_spmv_kernel(sps_index n, sps_index K, int64_t ld,
                                                                      const sps_index *ell_col, const T *ell_val, T a,
                                                                      const T *x, T b, int bz, T *y)
{
    constexpr int U = hyb_u;
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n)) {
        T s = zero_of<T>();
        for (sps_index k = 0; k < K; k += U) {
            sps_index c[U];
            T v[U], xv[U];
#pragma unroll
            for (int j = 0; j < U; j++) {
                const int64_t slot = (int64_t)(k + j) * ld + i;
                c[j] = k + j < K ? __ldg(ell_col + slot) : -1;
                v[j] = c[j] >= 0 ? ldg_t(ell_val + slot) : zero_of<T>();
            }
#pragma unroll
            for (int j = 0; j < U; j++) xv[j] = c[j] >= 0 ? ldg_t(x + c[j]) : zero_of<T>();
#pragma unroll
            for (int j = 0; j < U; j++)
                if (c[j] >= 0) s = s + v[j] * xv[j];
            if (c[U - 1] < 0) break; /* padding: the rest of the row is padding too */
        }
        y[i] = bz ? a * s : a * s + b * y[i];
    }
}

template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) hyb_ell_spmvt_kernel(sps_index n, sps_index K, int64_t ld,
                                                                       const sps_index *ell_col, const T *ell_val, T a,
                                                                       const T *x, T *y)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n)) {
        const T ax = a * x[i];
        for (sps_index k = 0; k < K; k++) {
            const int64_t slot = (int64_t)k * ld + i;
            const sps_index c = ell_col[slot];
            if (c < 0) break;
            atomic_add(&y[c], ell_val[slot] * ax);
        }
    }
}

} // namespace

/* ---------------------------------------------------------------- index kernels (type-independent) */
/* Counts, then the shared scan (scan.cu); the counts go back to the pool in stream order. */
static sps_status tail_ptr_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index K, sps_index *tail_ptr)
{
    sps_index *cnt = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&cnt, (size_t)n * sizeof *cnt));
    sps_status st = SPS_OK;
    if (n > 0) {
        tail_count_kernel<<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(n, rowptr, K, cnt);
        const cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps_cuda_fail(ex, e, "launch of tail_count_kernel", __FILE__, __LINE__);
    }
    if (st == SPS_OK) st = sps_cu_scan_index(ex, cnt, tail_ptr, n, "HYB tail pointers");
    sps_exec_release(ex, cnt);
    return st;
}

/* ---------------------------------------------------------------- typed implementations */
template <typename T>
static sps_status hyb_fill_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col, const void *val,
                                sps_index K, int64_t ld, const sps_index *tail_ptr, sps_index *ell_col, void *ell_val,
                                sps_index *tail_row, sps_index *tail_col, void *tail_val)
{
    if (ld <= 0) return SPS_OK;
    hyb_fill_kernel<T><<<sps_cu_grid(ex, ld), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, rowptr, col, (const T *)val, K, ld, tail_ptr, ell_col, (T *)ell_val, tail_row, tail_col, (T *)tail_val);
    SPS_CU_LAUNCHED(ex, "hyb_fill_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status hyb_ell_spmv_impl(sps_exec *ex, sps_index n, sps_index K, int64_t ld, const sps_index *ell_col,
                                    const void *ell_val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    if (n <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0;
    hyb_ell_spmv_kernel<T><<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, K, ld, ell_col, (const T *)ell_val, sc<T>::from(a), (const T *)x, sc<T>::from(b), bz, (T *)y);
    SPS_CU_LAUNCHED(ex, "hyb_ell_spmv_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status hyb_ell_spmvt_impl(sps_exec *ex, sps_index n, sps_index m, sps_index K, int64_t ld,
                                     const sps_index *ell_col, const void *ell_val, sps_cplx a, const void *x, sps_cplx b,
                                     void *y)
{
    cudaStream_t s = sps_custream(ex);
    if (m <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0;
    hyb_scale_kernel<T><<<sps_cu_grid(ex, m), SPS_CU_THREADS, 0, s>>>(m, sc<T>::from(b), bz, (T *)y);
    SPS_CU_LAUNCHED(ex, "hyb_scale_kernel");
    if (n <= 0 || K <= 0) return SPS_OK;
    hyb_ell_spmvt_kernel<T><<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, s>>>(n, K, ld, ell_col, (const T *)ell_val,
                                                                          sc<T>::from(a), (const T *)x, (T *)y);
    SPS_CU_LAUNCHED(ex, "hyb_ell_spmvt_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_HYB_ENTRIES(S, T)                                                                                     \
    extern "C" sps_status sps_cuda_hyb_fill_##S(sps_exec *ex, sps_index n, const sps_index *rowptr,               \
                                                const sps_index *col, const void *val, sps_index K, int64_t ld,      \
                                                const sps_index *tail_ptr, sps_index *ell_col, void *ell_val,        \
                                                sps_index *tail_row, sps_index *tail_col, void *tail_val)            \
    { return hyb_fill_impl<T>(ex, n, rowptr, col, val, K, ld, tail_ptr, ell_col, ell_val, tail_row, tail_col, tail_val); } \
    extern "C" sps_status sps_cuda_hyb_ell_spmv_##S(sps_exec *ex, sps_index n, sps_index m, sps_index K,          \
                                                    int64_t ld, const sps_index *ell_col, const void *ell_val,       \
                                                    sps_cplx a, const void *x, sps_cplx b, void *y)                  \
    { (void)m; return hyb_ell_spmv_impl<T>(ex, n, K, ld, ell_col, ell_val, a, x, b, y); }                           \
    extern "C" sps_status sps_cuda_hyb_ell_spmvt_##S(sps_exec *ex, sps_index n, sps_index m, sps_index K,         \
                                                     int64_t ld, const sps_index *ell_col, const void *ell_val,      \
                                                     sps_cplx a, const void *x, sps_cplx b, void *y)                 \
    { return hyb_ell_spmvt_impl<T>(ex, n, m, K, ld, ell_col, ell_val, a, x, b, y); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_HYB_ENTRIES)

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
extern "C" sps_status sps_cuda_hyb_tail_ptr(sps_exec *ex, sps_index n, const sps_index *rowptr,
                                                sps_index K, sps_index *tail_ptr)
{ return tail_ptr_impl(ex, n, rowptr, K, tail_ptr); }
