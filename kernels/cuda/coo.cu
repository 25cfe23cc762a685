/* libspsolve — CUDA COO SpMV / SpMV^T and COO's row array from CSR, f32/f64/c32/c64
 * from one set of templates.
 *
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
#include "kernels/cuda/common.cuh"

namespace {

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
#define SPS_CU_COO_PARAMS                                                                                           \
    (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row, const sps_index *col, const void *val, \
     sps_cplx a, const void *x, sps_cplx b, void *y)
#define SPS_CU_COO_ENTRIES(S, T) \
    SPS_CU_SPMV_ENTRIES(coo, S, T, SPS_CU_COO_PARAMS, (ex, n, m, nnz, row, col, val, a, x, b, y))

SPS_CU_FOR_ALL_TYPES(SPS_CU_COO_ENTRIES)

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
extern "C" sps_status sps_cuda_coo_rows(sps_exec *ex, sps_index n, const sps_index *rowptr,
                                            sps_index *row)
{ return coo_rows_impl(ex, n, rowptr, row); }
