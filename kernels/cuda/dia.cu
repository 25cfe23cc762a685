/* libspsolve — CUDA kernels of DIA (diagonal storage).  What each computes is
 * the CPU reference's (kernels/cpu/dia.c, dia.inc); layout in formats/dia.c.
 *
 *   dia_mark    memset, then one thread per row storing flag = 1 for each of
 *               its entries' diagonals (equal values: a benign overlap).
 *   dia_scan    the flags' exclusive sum (sps_cu_scan_index): the diagonal map.
 *   dia_offsets one thread per flag, writing the offsets of occupied ones.
 *   dia_fill    one warp per 32 rows (one mask word) walking the diagonals in
 *               step with each lane's next entry: every value slot and mask
 *               word written once (ballot), no memset, no atomics (the old
 *               memset + atomicOr fill, with the flags sent to the host and
 *               back, cost 96x an SpMV on poisson3d-128).
 *   dia_spmv    one thread per row i walking the diagonals: at each d a warp
 *               reads 32 consecutive values (coalesced), one mask word
 *               (broadcast) and the broadcast offset; padding skipped by the
 *               mask.  Summed in T in column order: bit-reproducible.
 *   dia_spmvt   one thread per column j gathering A_ij x_i over the diagonals
 *               (i = j - off[d], consecutive j read consecutive slots): no
 *               atomics, bit-reproducible.
 * Launch shape: 256 threads, grid-stride, at most 32 blocks per SM (common.cuh).
 * Traffic of dia_spmv (minimal model, S = sizeof(T)): ndiag n (S + 1/8) + 4 ndiag
 * + n S (y) + x (m S): no index per entry. */
#include "kernels/cuda/common.cuh"

namespace {

__global__ void __launch_bounds__(SPS_CU_THREADS) dia_mark_kernel(sps_index n, const sps_index *rowptr, const sps_index *col,
                                                                  sps_index *flag)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n))
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++) flag[(int64_t)col[k] - i + n - 1] = 1;
}

/* q -> offset of its diagonal, for the occupied q */
__global__ void __launch_bounds__(SPS_CU_THREADS) dia_offsets_kernel(sps_index n, int64_t nflag, const sps_index *flag,
                                                                     const sps_index *dmap, sps_index *off)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; q < nflag; q += stride)
        if (flag[q]) off[dmap[q]] = (sps_index)(q - (n - 1));
}

/* One warp per mask word w: lane l holds row i = 32 w + l and the diagonal dk of
 * its next entry (columns ascending = diagonals ascending).  At each diagonal d
 * the warp writes the 32 consecutive value slots d n + 32 w .. (the entry or 0)
 * and lane 0 the word of the ballot: every slot and word written once, no
 * memset, no atomics (the CPU fill's result, bit for bit). */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) dia_fill_kernel(sps_index n, const sps_index *rowptr, const sps_index *col,
                                                                  const T *val, const sps_index *dmap, sps_index ndiag,
                                                                  sps_index nw, T *dval, uint32_t *mask)
{
    const int lane = (int)(threadIdx.x & 31);
    const sps_index warps = (sps_index)(gridDim.x * blockDim.x / 32);
    for (sps_index w = (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / 32); w < nw; w += warps) { /* warp-uniform */
        const sps_index i = 32 * w + lane;
        sps_index k = i < n ? rowptr[i] : 0;
        const sps_index end = i < n ? rowptr[i + 1] : 0;
        sps_index dk = k < end ? dmap[(int64_t)col[k] - i + n - 1] : ndiag;
        for (sps_index d = 0; d < ndiag; d++) {
            const bool has = dk == d;
            const unsigned bits = __ballot_sync(0xffffffffu, has);
            if (i < n) dval[(size_t)d * n + i] = has ? val[k] : zero_of<T>();
            if (lane == 0) mask[(size_t)d * nw + w] = bits;
            if (has) {
                k++;
                dk = k < end ? dmap[(int64_t)col[k] - i + n - 1] : ndiag;
            }
        }
    }
}

/* Diagonals whose loads a thread keeps in flight together (fewer for 16-byte values:
 * registers).  Each diagonal's value, mask word and x entry are loaded before any of
 * them is tested, and the mask selects the products afterwards: the first version
 * skipped a diagonal on its mask bit before loading its value and x, a chain of
 * dependent loads a diagonal.  H100, spbench 2026-11-27 (bench/results/auto-model-nvidia-h100-
 * 2026-11-27.md), us, before -> after: poisson3d-128 f32 55.0 -> 38.0, f64 65.9 -> 56.7 (cuSPARSE
 * SELL 46.9 / 77.1), stencil27b3-40 f64 91.4 -> 67.4, poisson3d-48 f64 10.8 -> 8.1. */
template <typename T> struct dia_inflight {
    static constexpr int value = sizeof(T) <= 8 ? 8 : 4;
};

/* Row i of A (TRANS false: r = i, k = i + off[d] the column) or column j of A^T's
 * product (TRANS: r = j, k = j - off[d] the row): sum over the diagonals, in their order,
 * of val[d][row] x[k] where the row's mask bit is set and 0 <= k < klim.  The same sum,
 * in the same order, as the skipping loop: bit-reproducible. */
template <typename T, bool TRANS, typename VR>
__device__ inline T dia_sum(sps_index r, sps_index n, sps_index klim, sps_index ndiag, const sps_index *off,
                            const VR &dval, const uint32_t *mask, sps_index nw, const T *x)
{
    constexpr int C = dia_inflight<T>::value;
    T s = zero_of<T>();
    for (sps_index d0 = 0; d0 < ndiag; d0 += C) {
        typename VR::raw rv[C];
        T v[C], xv[C];
        bool ok[C];
#pragma unroll
        for (int c = 0; c < C; c++) {
            const sps_index d = d0 + c;
            const int64_t k = d < ndiag ? (TRANS ? (int64_t)r - __ldg(&off[d]) : (int64_t)r + __ldg(&off[d])) : -1;
            const bool in = k >= 0 && k < klim;
            const sps_index row = TRANS ? (sps_index)k : r;
            ok[c] = in && ((__ldg(&mask[(size_t)d * nw + (size_t)(row >> 5)]) >> (row & 31)) & 1u);
            rv[c] = in ? dval.load((int64_t)d * n + row) : typename VR::raw();
            xv[c] = in ? x[k] : zero_of<T>();
        }
#pragma unroll
        for (int c = 0; c < C; c++) v[c] = dval.get(rv[c]); /* a dictionary's lookup: beside the x loads */
#pragma unroll
        for (int c = 0; c < C; c++)
            if (ok[c]) s = s + v[c] * xv[c];
    }
    return s;
}

template <typename T, typename VR>
__global__ void __launch_bounds__(SPS_CU_THREADS) dia_spmv_kernel(sps_index n, sps_index m, sps_index ndiag, const sps_index *off,
                                                                  const void *dval, const void *dict, const uint32_t *mask,
                                                                  sps_index nw, T a, const T *x, T b, int bz, T *y)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    const VR vr(dval, dict);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n)) {
        const T s = dia_sum<T, false>(i, n, m, ndiag, off, vr, mask, nw, x);
        y[i] = bz ? a * s : a * s + b * y[i];
    }
}

template <typename T, typename VR>
__global__ void __launch_bounds__(SPS_CU_THREADS) dia_spmvt_kernel(sps_index n, sps_index m, sps_index ndiag,
                                                                   const sps_index *off, const void *dval, const void *dict,
                                                                   const uint32_t *mask, sps_index nw, T a, const T *x, T b,
                                                                   int bz, T *y)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    const VR vr(dval, dict);
    for (sps_index j = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); j < m; j = sps_cu_next(j, stride, m)) {
        const T s = dia_sum<T, true>(j, n, n, ndiag, off, vr, mask, nw, x);
        y[j] = bz ? a * s : a * s + b * y[j];
    }
}

inline sps_index dia_nwords(sps_index n) { return (sps_index)(((int64_t)n + 31) / 32); }

} // namespace

/* ---------------------------------------------------------------- index kernels (type-independent) */
static sps_status dia_mark_impl(sps_exec *ex, sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col,
                                sps_index *flag)
{
    if (n <= 0 || m <= 0) return SPS_OK;
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(flag, 0, ((size_t)n + (size_t)m - 1) * sizeof *flag, s));
    dia_mark_kernel<<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, s>>>(n, rowptr, col, flag);
    SPS_CU_LAUNCHED(ex, "dia_mark_kernel");
    return SPS_OK;
}

static sps_status dia_offsets_impl(sps_exec *ex, sps_index n, int64_t nflag, const sps_index *flag,
                                   const sps_index *dmap, sps_index *off)
{
    if (nflag <= 0) return SPS_OK;
    dia_offsets_kernel<<<sps_cu_grid(ex, nflag), SPS_CU_THREADS, 0, sps_custream(ex)>>>(n, nflag, flag, dmap, off);
    SPS_CU_LAUNCHED(ex, "dia_offsets_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- typed implementations */
template <typename T>
static sps_status dia_fill_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col, const void *val,
                                const sps_index *dmap, sps_index ndiag, void *dval, uint32_t *mask)
{
    if (n <= 0 || ndiag <= 0) return SPS_OK;
    const sps_index nw = dia_nwords(n);
    dia_fill_kernel<T><<<sps_cu_grid(ex, (int64_t)nw * 32), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, rowptr, col, (const T *)val, dmap, ndiag, nw, (T *)dval, mask);
    SPS_CU_LAUNCHED(ex, "dia_fill_kernel");
    return SPS_OK;
}

/* The values through the L1 (ldg), as before dictionaries: each diagonal's run is read once. */
template <typename T>
static sps_status dia_spmv_impl(sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, const sps_index *off,
                                const void *dval, const void *dict, const uint32_t *mask, sps_cplx a, const void *x,
                                sps_cplx b, void *y)
{
    if (n <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0;
    (dict ? dia_spmv_kernel<T, sps_cu_vals_dict<T, false>> : dia_spmv_kernel<T, sps_cu_vals_plain<T, false>>)
        <<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(n, m, ndiag, off, dval, dict, mask, dia_nwords(n),
                                                                     sc<T>::from(a), (const T *)x, sc<T>::from(b), bz,
                                                                     (T *)y);
    SPS_CU_LAUNCHED(ex, "dia_spmv_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status dia_spmvt_impl(sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, const sps_index *off,
                                 const void *dval, const void *dict, const uint32_t *mask, sps_cplx a, const void *x,
                                 sps_cplx b, void *y)
{
    if (m <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0;
    (dict ? dia_spmvt_kernel<T, sps_cu_vals_dict<T, false>> : dia_spmvt_kernel<T, sps_cu_vals_plain<T, false>>)
        <<<sps_cu_grid(ex, m), SPS_CU_THREADS, 0, sps_custream(ex)>>>(n, m, ndiag, off, dval, dict, mask, dia_nwords(n),
                                                                     sc<T>::from(a), (const T *)x, sc<T>::from(b), bz,
                                                                     (T *)y);
    SPS_CU_LAUNCHED(ex, "dia_spmvt_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_DIA_PARAMS                                                                                            \
    (sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, const sps_index *off, const void *dval,                  \
     const void *dict, const uint32_t *mask, sps_cplx a, const void *x, sps_cplx b, void *y)
#define SPS_CU_DIA_ENTRIES(S, T)                                                                                      \
    extern "C" sps_status sps_cuda_dia_fill_##S(sps_exec *ex, sps_index n, sps_index m, const sps_index *rowptr,   \
                                                const sps_index *col, const void *val, const sps_index *dmap,         \
                                                sps_index ndiag, void *dval, uint32_t *mask)                          \
    { (void)m; return dia_fill_impl<T>(ex, n, rowptr, col, val, dmap, ndiag, dval, mask); }                          \
    SPS_CU_SPMV_ENTRIES(dia, S, T, SPS_CU_DIA_PARAMS, (ex, n, m, ndiag, off, dval, dict, mask, a, x, b, y))

SPS_CU_FOR_ALL_TYPES(SPS_CU_DIA_ENTRIES)

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
extern "C" sps_status sps_cuda_dia_mark(sps_exec *ex, sps_index n, sps_index m, const sps_index *rowptr,
                                            const sps_index *col, sps_index *flag)
{ return dia_mark_impl(ex, n, m, rowptr, col, flag); }

extern "C" sps_status sps_cuda_dia_scan(sps_exec *ex, int64_t nflag, const sps_index *flag,
                                            sps_index *dmap)
{ return sps_cu_scan_index(ex, flag, dmap, nflag, "DIA diagonal map"); }

extern "C" sps_status sps_cuda_dia_offsets(sps_exec *ex, sps_index n, int64_t nflag,
                                               const sps_index *flag, const sps_index *dmap, sps_index *off)
{ return dia_offsets_impl(ex, n, nflag, flag, dmap, off); }
