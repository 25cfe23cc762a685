/* libspsolve — CUDA kernels of JDS (jagged diagonal storage) and the
 * row-length statistics HYB shares.  What each computes is the CPU
 * reference's (kernels/cpu/jds.c, jds.inc); layout in formats/jds.c.
 *
 *   jds_rowlen_max   grid-stride max of row lengths, warp then block
 *                    reduced, one atomicMax per block (integers: exact).
 *   jds_rowlen_hist  per-block bins in shared memory (equal lengths of a warp
 *                    combined first), one atomicAdd per nonzero bin a block
 *                    (exact): one global atomic per row serialised on the
 *                    mesh's common length (HYB and JDS builds 22-24x an SpMV
 *                    on poisson3d-128).
 *   jds_perm         stable sort of the rows by decreasing length:
 *                    cub::DeviceRadixSort::SortPairsDescending (stable, so the
 *                    same permutation as the CPU's counting sort) of
 *                    (length, row) over the bits of maxlen only.
 *   jds_fill         one thread per permuted row p copying its entries to
 *                    jd_ptr[d] + p (consecutive threads, consecutive slots).
 *   jds_spmv         one thread per permuted row walking its diagonals: at step
 *                    d a warp reads 32 consecutive slots of jd_col / jd_val
 *                    (coalesced); rows of similar length are neighbours, so
 *                    little divergence.  One thread per row serialises a long
 *                    row (a power-law matrix's 20000-entry row took 8 ms on an
 *                    H100 alone), so the longest rows, a prefix of the permuted
 *                    rows, get more threads: rows longer than long_row (the
 *                    build's hint, formats/jds.c) a warp each (lanes stride
 *                    over the row's diagonals, shuffle-down tree), rows longer
 *                    than JDS_BLOCK_FACTOR long_row a block each (CUB
 *                    BlockReduce).  Their reads are strided (one sector per
 *                    entry), a cost paid by the outlying rows only.  Up to
 *                    three launches (the warp and block ones only when ndiag
 *                    says such rows exist), disjoint rows; each sum in a fixed
 *                    order or tree: bit-reproducible run to run (thread rows
 *                    are summed in the CPU's order, warp/block rows in a tree).
 *   jds_spmvt        y = b y (own pass), then the same three row classes
 *                    scattering a A_ij x_i with atomicAdd: NOT bit-reproducible.
 * Launch shape: 256 threads, grid-stride, at most 32 blocks per SM (common.cuh).
 * Traffic of jds_spmv (minimal model, S = sizeof(T)): nnz (4 + S) + n 4 (perm)
 * + n S (y, plus n S read when b != 0) + x gathers (m S at best). */
#include "kernels/cuda/common.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>

/* Row classes of the SpMV kernels (see the header): rows longer than long_row
 * get a warp, rows longer than JDS_BLOCK_FACTOR * long_row a block. */
#define JDS_BLOCK_FACTOR 32

namespace {

template <typename T> __global__ void __launch_bounds__(SPS_CU_THREADS) jds_scale_kernel(sps_index m, T b, int bz, T *y)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index j = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); j < m; j = sps_cu_next(j, stride, m))
        y[j] = bz ? zero_of<T>() : b * y[j];
}

/* The longest row: a warp tree, then the block's 8 warp maxima, then one atomicMax
 * a block (a warp each made 65k same-address atomics on poisson3d-128). */
__global__ void __launch_bounds__(SPS_CU_THREADS) rowlen_max_kernel(sps_index n, const sps_index *rowptr, sps_index *out)
{
    __shared__ sps_index wmax[SPS_CU_THREADS / 32];
    sps_index mx = 0;
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n)) {
        const sps_index L = rowptr[i + 1] - rowptr[i];
        mx = L > mx ? L : mx;
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
        const sps_index v = __shfl_down_sync(0xffffffffu, mx, o);
        mx = v > mx ? v : mx;
    }
    if ((threadIdx.x & 31) == 0) wmax[threadIdx.x / 32] = mx;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < SPS_CU_THREADS / 32; w++) mx = wmax[w] > mx ? wmax[w] : mx;
        if (mx > 0) atomicMax(out, mx);
    }
}

/* Row-length histogram.  Most rows of a mesh share one or two lengths, so one
 * global atomicAdd a row serialises on one address (poisson3d-128: 2M atomics
 * on hist[7]).  Here: lengths up to HIST_SH - 1 counted in shared memory, the
 * lanes of a warp with equal lengths first combined (__match_any_sync: one
 * shared atomic per distinct length a warp), then one global add per nonzero bin
 * a block; longer rows (few, by the same distributions) add to hist directly. */
#define HIST_SH 2048
__global__ void __launch_bounds__(SPS_CU_THREADS) rowlen_hist_kernel(sps_index n, const sps_index *rowptr,
                                                                     sps_index maxlen, sps_index *hist)
{
    __shared__ sps_index sh[HIST_SH];
    const int nb = maxlen + 1 < HIST_SH ? maxlen + 1 : HIST_SH;
    for (int b = (int)threadIdx.x; b < nb; b += SPS_CU_THREADS) sh[b] = 0;
    __syncthreads();
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    const int lane = (int)(threadIdx.x & 31);
    for (sps_index base = (sps_index)(blockIdx.x * blockDim.x); base < n; base = sps_cu_next(base, stride, n)) { /* warp-uniform trips */
        const sps_index i = base + (sps_index)threadIdx.x;
        const sps_index L = i < n ? rowptr[i + 1] - rowptr[i] : -1;
        const unsigned peers = __match_any_sync(0xffffffffu, L);
        if (L >= 0 && lane == __ffs(peers) - 1) {
            if (L < HIST_SH) atomicAdd(&sh[L], (sps_index)__popc(peers));
            else atomicAdd(&hist[L], (sps_index)__popc(peers));
        }
    }
    __syncthreads();
    for (int b = (int)threadIdx.x; b < nb; b += SPS_CU_THREADS)
        if (sh[b]) atomicAdd(&hist[b], sh[b]);
}

__global__ void __launch_bounds__(SPS_CU_THREADS) len_iota_kernel(sps_index n, const sps_index *rowptr, sps_index *len,
                                                                  sps_index *row)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n)) {
        len[i] = rowptr[i + 1] - rowptr[i];
        row[i] = i;
    }
}

template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) jds_fill_kernel(sps_index n, const sps_index *rowptr, const sps_index *col,
                                                                  const T *val, const sps_index *perm, const sps_index *jd_ptr,
                                                                  sps_index *jd_col, T *jd_val)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index p = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); p < n; p = sps_cu_next(p, stride, n)) {
        const sps_index i = perm[p], k0 = rowptr[i], len = rowptr[i + 1] - k0;
        for (sps_index d = 0; d < len; d++) {
            jd_col[jd_ptr[d] + p] = col[k0 + d];
            jd_val[jd_ptr[d] + p] = val[k0 + d];
        }
    }
}

/* Rows by length class.  The sort makes every class a prefix of the permuted
 * rows, so the class borders are read from jd_ptr on the device:
 *   rows_longer(L) = len_L = jd_ptr[L + 1] - jd_ptr[L]  (0 when L >= ndiag). */
__device__ inline sps_index rows_longer(sps_index ndiag, const sps_index *jd_ptr, int64_t L)
{
    return L < ndiag ? __ldg(&jd_ptr[L + 1]) - __ldg(&jd_ptr[L]) : 0;
}
/* Length of permuted row p: the diagonals d with p < len_d (len_d non-increasing), by bisection. */
__device__ inline sps_index row_len(sps_index ndiag, const sps_index *jd_ptr, sps_index p)
{
    sps_index lo = 0, hi = ndiag;
    while (lo < hi) {
        const sps_index mid = lo + (hi - lo) / 2;
        if (__ldg(&jd_ptr[mid + 1]) - __ldg(&jd_ptr[mid]) > p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Short rows (len <= long_row): one thread per permuted row, p >= rows_longer(long_row). */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) jds_spmv_kernel(sps_index n, sps_index ndiag, sps_index long_row, const sps_index *perm,
                                                                  const sps_index *jd_ptr, const sps_index *jd_col,
                                                                  const T *jd_val, T a, const T *x, T b, int bz, T *y)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    const sps_index p0 = rows_longer(ndiag, jd_ptr, long_row);
    for (sps_index p = p0 + (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); p < n; p = sps_cu_next(p, stride, n)) {
        T s = zero_of<T>();
        for (sps_index d = 0; d < ndiag; d++) {
            const sps_index base = __ldg(&jd_ptr[d]);
            if (p >= __ldg(&jd_ptr[d + 1]) - base) break; /* row p is shorter than d + 1 */
            s = s + jd_val[base + p] * x[jd_col[base + p]];
        }
        const sps_index i = perm[p];
        y[i] = bz ? a * s : a * s + b * y[i];
    }
}

/* Long rows (long_row < len <= (int64_t)JDS_BLOCK_FACTOR * long_row): one warp per row, lane l sums
 * entries l, l + 32, ..., then a shuffle-down tree (fixed: bit-reproducible). */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) jds_spmv_warp_kernel(sps_index ndiag, sps_index long_row, const sps_index *perm,
                                                                       const sps_index *jd_ptr, const sps_index *jd_col,
                                                                       const T *jd_val, T a, const T *x, T b, int bz, T *y)
{
    const int lane = threadIdx.x & 31;
    const sps_index warps = (sps_index)(gridDim.x * blockDim.x / 32);
    const sps_index p1 = rows_longer(ndiag, jd_ptr, long_row);
    for (sps_index p = rows_longer(ndiag, jd_ptr, (int64_t)JDS_BLOCK_FACTOR * long_row) + (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / 32);
         p < p1; p = sps_cu_next(p, warps, p1)) {
        const sps_index len = row_len(ndiag, jd_ptr, p);
        T s = zero_of<T>();
        for (sps_index d = lane; d < len; d += 32) {
            const sps_index k = __ldg(&jd_ptr[d]) + p;
            s = s + jd_val[k] * x[jd_col[k]];
        }
#pragma unroll
        for (int off = 16; off > 0; off /= 2) s = s + shfl_down(0xffffffffu, s, off, 32);
        if (lane == 0) {
            const sps_index i = perm[p];
            y[i] = bz ? a * s : a * s + b * y[i];
        }
    }
}

/* Very long rows (len > (int64_t)JDS_BLOCK_FACTOR * long_row): one block per row, thread t sums entries
 * t, t + 256, ..., then CUB BlockReduce (a fixed tree: bit-reproducible). */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) jds_spmv_block_kernel(sps_index ndiag, sps_index long_row, const sps_index *perm,
                                                                        const sps_index *jd_ptr, const sps_index *jd_col,
                                                                        const T *jd_val, T a, const T *x, T b, int bz, T *y)
{
    typedef cub::BlockReduce<T, SPS_CU_THREADS> BR;
    __shared__ typename BR::TempStorage tmp;
    const sps_index p1 = rows_longer(ndiag, jd_ptr, (int64_t)JDS_BLOCK_FACTOR * long_row);
    for (sps_index p = (sps_index)blockIdx.x; p < p1; p = sps_cu_next(p, (sps_index)gridDim.x, p1)) {
        const sps_index len = row_len(ndiag, jd_ptr, p);
        T s = zero_of<T>();
        for (sps_index d = (sps_index)threadIdx.x; d < len; d += SPS_CU_THREADS) {
            const sps_index k = __ldg(&jd_ptr[d]) + p;
            s = s + jd_val[k] * x[jd_col[k]];
        }
        __syncthreads(); /* tmp reused from the previous row */
        const T tot = BR(tmp).Reduce(s, sps_cu_sum<T>());
        if (threadIdx.x == 0) {
            const sps_index i = perm[p];
            y[i] = bz ? a * tot : a * tot + b * y[i];
        }
    }
}

/* SpMV^T scatters, by the same row classes (after y = b y). */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) jds_spmvt_kernel(sps_index n, sps_index ndiag, sps_index long_row, const sps_index *perm,
                                                                   const sps_index *jd_ptr, const sps_index *jd_col,
                                                                   const T *jd_val, T a, const T *x, T *y)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    const sps_index p0 = rows_longer(ndiag, jd_ptr, long_row);
    for (sps_index p = p0 + (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); p < n; p = sps_cu_next(p, stride, n)) {
        const T ax = a * x[perm[p]];
        for (sps_index d = 0; d < ndiag; d++) {
            const sps_index base = __ldg(&jd_ptr[d]);
            if (p >= __ldg(&jd_ptr[d + 1]) - base) break;
            atomic_add(&y[jd_col[base + p]], jd_val[base + p] * ax);
        }
    }
}

/* Long rows of SpMV^T: a group of G threads (a warp, or the block) per row. */
template <typename T, int G>
__global__ void __launch_bounds__(SPS_CU_THREADS) jds_spmvt_group_kernel(sps_index ndiag, sps_index long_row, const sps_index *perm,
                                                                         const sps_index *jd_ptr, const sps_index *jd_col,
                                                                         const T *jd_val, T a, const T *x, T *y)
{
    const sps_index lo = G == 32 ? rows_longer(ndiag, jd_ptr, (int64_t)JDS_BLOCK_FACTOR * long_row) : 0;
    const sps_index hi = rows_longer(ndiag, jd_ptr, G == 32 ? long_row : (int64_t)JDS_BLOCK_FACTOR * long_row);
    const sps_index groups = (sps_index)(gridDim.x * blockDim.x / G);
    const int t = (int)(threadIdx.x % G);
    for (sps_index p = lo + (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / G); p < hi; p = sps_cu_next(p, groups, hi)) {
        const sps_index len = row_len(ndiag, jd_ptr, p);
        const T ax = a * x[perm[p]];
        for (sps_index d = t; d < len; d += G) {
            const sps_index k = __ldg(&jd_ptr[d]) + p;
            atomic_add(&y[jd_col[k]], jd_val[k] * ax);
        }
    }
}

} // namespace

/* ---------------------------------------------------------------- index kernels (type-independent) */
static sps_status rowlen_max_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index *maxlen)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(maxlen, 0, sizeof *maxlen, s));
    if (n <= 0) return SPS_OK;
    rowlen_max_kernel<<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, s>>>(n, rowptr, maxlen);
    SPS_CU_LAUNCHED(ex, "rowlen_max_kernel");
    return SPS_OK;
}

static sps_status rowlen_hist_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen, sps_index *hist)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(hist, 0, ((size_t)maxlen + 1) * sizeof *hist, s));
    if (n <= 0) return SPS_OK;
    rowlen_hist_kernel<<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, s>>>(n, rowptr, maxlen, hist);
    SPS_CU_LAUNCHED(ex, "rowlen_hist_kernel");
    return SPS_OK;
}

/* Stable sort of (length, row) by decreasing length; the temporaries go back to
 * the context's pool in stream order (backend.cu), no synchronisation. */
static sps_status perm_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen, sps_index *perm)
{
    if (n <= 0) return SPS_OK;
    cudaStream_t s = sps_custream(ex);
    int end_bit = 1;
    while (end_bit < 31 && ((sps_index)1 << end_bit) <= maxlen) end_bit++;
    size_t tmp_bytes = 0;
    SPS_CU(ex, cub::DeviceRadixSort::SortPairsDescending((void *)NULL, tmp_bytes, (const sps_index *)NULL,
                                                          (sps_index *)NULL, (const sps_index *)NULL, (sps_index *)NULL,
                                                          n, 0, end_bit, s));
    /* one allocation: CUB's temporaries first (cudaMalloc alignment), then 3 arrays */
    const size_t nb = (size_t)n * sizeof(sps_index), tb = (tmp_bytes + 255) / 256 * 256;
    unsigned char *buf = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&buf, tb + 3 * nb));
    void *tmp = buf;
    sps_index *len = (sps_index *)(buf + tb), *len_out = (sps_index *)(buf + tb + nb), *row = (sps_index *)(buf + tb + 2 * nb);
    sps_status st = SPS_OK;
    len_iota_kernel<<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, s>>>(n, rowptr, len, row);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) st = sps_cuda_fail(ex, e, "launch of len_iota_kernel", __FILE__, __LINE__);
    if (st == SPS_OK) {
        e = cub::DeviceRadixSort::SortPairsDescending(tmp, tmp_bytes, len, len_out, row, perm, n, 0, end_bit, s);
        if (e != cudaSuccess) st = sps_cuda_fail(ex, e, "cub::DeviceRadixSort::SortPairsDescending", __FILE__, __LINE__);
    }
    sps_exec_release(ex, buf);
    return st;
}

/* ---------------------------------------------------------------- typed implementations */
template <typename T>
static sps_status jds_fill_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col, const void *val,
                                const sps_index *perm, const sps_index *jd_ptr, sps_index *jd_col, void *jd_val)
{
    if (n <= 0) return SPS_OK;
    jds_fill_kernel<T><<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, rowptr, col, (const T *)val, perm, jd_ptr, jd_col, (T *)jd_val);
    SPS_CU_LAUNCHED(ex, "jds_fill_kernel");
    return SPS_OK;
}

/* Grids: short rows grid-stride over rows; warp rows at most 32 blocks per SM
 * grid-striding over warps; block rows at most JDS_BLOCK_GRID blocks (blocks
 * beyond the number of such rows, known only on the device, exit at once). */
#define JDS_BLOCK_GRID 1024

template <typename T>
static sps_status jds_spmv_impl(sps_exec *ex, sps_index n, sps_index ndiag, sps_index long_row, const sps_index *perm, const sps_index *jd_ptr,
                                const sps_index *jd_col, const void *jd_val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    if (n <= 0) return SPS_OK;
    if (long_row <= 0) long_row = INT32_MAX; /* no hint: every row one thread */
    cudaStream_t s = sps_custream(ex);
    const int bz = b.re == 0.0 && b.im == 0.0;
    const T av = sc<T>::from(a), bv = sc<T>::from(b);
    if ((int64_t)ndiag > (int64_t)JDS_BLOCK_FACTOR * long_row) {
        jds_spmv_block_kernel<T><<<(unsigned)(n < JDS_BLOCK_GRID ? n : JDS_BLOCK_GRID), SPS_CU_THREADS, 0, s>>>(
            ndiag, long_row, perm, jd_ptr, jd_col, (const T *)jd_val, av, (const T *)x, bv, bz, (T *)y);
        SPS_CU_LAUNCHED(ex, "jds_spmv_block_kernel");
    }
    if (ndiag > long_row) {
        jds_spmv_warp_kernel<T><<<sps_cu_grid(ex, (int64_t)n * 32), SPS_CU_THREADS, 0, s>>>(
            ndiag, long_row, perm, jd_ptr, jd_col, (const T *)jd_val, av, (const T *)x, bv, bz, (T *)y);
        SPS_CU_LAUNCHED(ex, "jds_spmv_warp_kernel");
    }
    jds_spmv_kernel<T><<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, s>>>(n, ndiag, long_row, perm, jd_ptr, jd_col, (const T *)jd_val, av,
                                                                     (const T *)x, bv, bz, (T *)y);
    SPS_CU_LAUNCHED(ex, "jds_spmv_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status jds_spmvt_impl(sps_exec *ex, sps_index n, sps_index m, sps_index ndiag, sps_index long_row,
                                 const sps_index *perm,
                                 const sps_index *jd_ptr, const sps_index *jd_col, const void *jd_val, sps_cplx a,
                                 const void *x, sps_cplx b, void *y)
{
    cudaStream_t s = sps_custream(ex);
    if (m <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0;
    jds_scale_kernel<T><<<sps_cu_grid(ex, m), SPS_CU_THREADS, 0, s>>>(m, sc<T>::from(b), bz, (T *)y);
    SPS_CU_LAUNCHED(ex, "jds_scale_kernel");
    if (n <= 0 || ndiag <= 0) return SPS_OK;
    if (long_row <= 0) long_row = INT32_MAX; /* no hint: every row one thread */
    const T av = sc<T>::from(a);
    if ((int64_t)ndiag > (int64_t)JDS_BLOCK_FACTOR * long_row) {
        jds_spmvt_group_kernel<T, SPS_CU_THREADS><<<(unsigned)(n < JDS_BLOCK_GRID ? n : JDS_BLOCK_GRID), SPS_CU_THREADS, 0, s>>>(
            ndiag, long_row, perm, jd_ptr, jd_col, (const T *)jd_val, av, (const T *)x, (T *)y);
        SPS_CU_LAUNCHED(ex, "jds_spmvt_group_kernel (block)");
    }
    if (ndiag > long_row) {
        jds_spmvt_group_kernel<T, 32><<<sps_cu_grid(ex, (int64_t)n * 32), SPS_CU_THREADS, 0, s>>>(
            ndiag, long_row, perm, jd_ptr, jd_col, (const T *)jd_val, av, (const T *)x, (T *)y);
        SPS_CU_LAUNCHED(ex, "jds_spmvt_group_kernel (warp)");
    }
    jds_spmvt_kernel<T><<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, s>>>(n, ndiag, long_row, perm, jd_ptr, jd_col, (const T *)jd_val, av,
                                                                      (const T *)x, (T *)y);
    SPS_CU_LAUNCHED(ex, "jds_spmvt_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_JDS_ENTRIES(S, T)                                                                                        \
    extern "C" sps_status sps_cuda_jds_fill_##S(sps_exec *ex, sps_index n, const sps_index *rowptr,                  \
                                                const sps_index *col, const void *val, const sps_index *perm,           \
                                                sps_index ndiag, const sps_index *jd_ptr, sps_index *jd_col,            \
                                                void *jd_val)                                                           \
    { (void)ndiag; return jds_fill_impl<T>(ex, n, rowptr, col, val, perm, jd_ptr, jd_col, jd_val); }                   \
    extern "C" sps_status sps_cuda_jds_spmv_##S(sps_exec *ex, sps_index n, sps_index m, sps_index ndiag,             \
                                                sps_index long_row, const sps_index *perm, const sps_index *jd_ptr, const sps_index *jd_col, \
                                                const void *jd_val, sps_cplx a, const void *x, sps_cplx b, void *y)     \
    { (void)m; return jds_spmv_impl<T>(ex, n, ndiag, long_row, perm, jd_ptr, jd_col, jd_val, a, x, b, y); }                      \
    extern "C" sps_status sps_cuda_jds_spmvt_##S(sps_exec *ex, sps_index n, sps_index m, sps_index ndiag,            \
                                                 sps_index long_row, const sps_index *perm, const sps_index *jd_ptr,                        \
                                                 const sps_index *jd_col, const void *jd_val, sps_cplx a,               \
                                                 const void *x, sps_cplx b, void *y)                                    \
    { return jds_spmvt_impl<T>(ex, n, m, ndiag, long_row, perm, jd_ptr, jd_col, jd_val, a, x, b, y); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_JDS_ENTRIES)

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
extern "C" sps_status sps_cuda_jds_rowlen_max(sps_exec *ex, sps_index n, const sps_index *rowptr,
                                                  sps_index *maxlen)
{ return rowlen_max_impl(ex, n, rowptr, maxlen); }

extern "C" sps_status sps_cuda_jds_rowlen_hist(sps_exec *ex, sps_index n, const sps_index *rowptr,
                                                   sps_index maxlen, sps_index *hist)
{ return rowlen_hist_impl(ex, n, rowptr, maxlen, hist); }

extern "C" sps_status sps_cuda_jds_perm(sps_exec *ex, sps_index n, const sps_index *rowptr, sps_index maxlen,
                                            sps_index *perm)
{ return perm_impl(ex, n, rowptr, maxlen, perm); }
