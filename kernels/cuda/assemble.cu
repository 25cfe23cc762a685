/* CUDA kernels of assembly from triplets (kernels/index_kernels.h: coo_sort,
 * coo_compress, coo_sum; the CPU oracle: kernels/cpu/assemble.c), behind
 * sps_matrix_from_coo_entries_device: an application that computes its element
 * contributions on the GPU as triplets gets its CSR / BCSR matrix without a host round
 * trip (the FEM and spin apps now sum their rows themselves and hand CSR arrays to
 * sps_matrix_from_csr_entries_device, checked by csr_check below).
 *
 * coo_sort   keys (row << bits(m - 1)) | col, one thread a triplet (an index
 *            out of range: atomicMin of its position into bad), a CUB
 *            DeviceRadixSort of (key, position) pairs over the key's bits only
 *            (LSD radix sort is stable, so equal pairs keep their order: the CPU's
 *            two counting sorts give the same permutation), then one pass over
 *            the sorted keys for the columns and the rows' first positions.
 *            (CUB's DeviceSegmentedSort, a sort within rows after a bucket pass,
 *            would save passes, but it includes Thrust, which needs C++
 *            exceptions, and this library's objects are built without them.)
 * coo_compress  head flags (a row's first triplet, or a column unlike its
 *            predecessor's), their exclusive sum numbers the distinct pairs; each
 *            head writes its pair's first position and column, each row its
 *            pointer from the sum at its first triplet.  Reads the sorted columns
 *            in order (gathering row[perm[p]] instead cost twice the time).
 * coo_sum    one thread a (pair, member): the pair's terms in sorted order,
 *            i.e. triplet order, summed in double from the first, then rounded:
 *            the host builder's additions in its order, so the values are equal
 *            bit for bit.  Non-finite terms and float overflow: atomicMin of the
 *            smallest triplet / pair into bad.
 * csr_check  one thread a row (pointers, range, strictly increasing columns), then
 *            one a value (finite), for sps_matrix_from_csr_entries_device.
 * Deterministic: every output is a function of the input alone.
 * H200, the 1M-vertex spin matrix E (18.4M triplets of 4 doubles, 7.2M pairs; 40-bit
 * keys, 5 passes), Nsight Compute: 1.0 ms to sort, 0.44 ms to sum; compressing by
 * gathering row[perm[p]] and col[perm[p]] took 0.4 ms, hence scol. */
#include "kernels/cuda/common.cuh"

#include <cub/device/device_radix_sort.cuh>

namespace {

/* bits to write v >= 0 (0 for v = 0) */
static int bits_for(int64_t v)
{
    int b = 0;
    while (b < 62 && (v >> b) > 0) b++;
    return b;
}

struct coo_key_op {
    const sps_index *row, *col;
    sps_index n, m;
    int cb;
    unsigned long long *key;
    sps_index *pos;
    unsigned long long *bad;
    __device__ void setup() {}
    __device__ void operator()(sps_index k)
    {
        const sps_index i = row[k], j = col[k];
        const bool ok = i >= 0 && i < n && j >= 0 && j < m;
        if (!ok) atomicMin(bad, (unsigned long long)k);
        key[k] = ok ? ((unsigned long long)i << cb) | (unsigned long long)j : 0ull;
        pos[k] = k;
    }
};

/* From the sorted keys: the columns, and tstart[r] for the rows from the previous
 * key's row + 1 to this key's (each written once in all; p = nnz: the rows after the last). */
struct coo_split_op {
    const unsigned long long *key;
    int cb;
    sps_index n;
    int64_t nnz;
    sps_index *scol, *tstart;
    __device__ void setup() {}
    __device__ void operator()(sps_index p)
    {
        const sps_index prev = p > 0 ? (sps_index)(key[p - 1] >> cb) : -1;
        const sps_index r = p < nnz ? (sps_index)(key[p] >> cb) : n;
        if (p < nnz) scol[p] = (sps_index)(key[p] & ((1ull << cb) - 1));
        for (sps_index q = prev + 1; q <= r; q++) tstart[q] = p;
    }
};

struct coo_head_op {
    const sps_index *scol;
    sps_index *head;
    __device__ void setup() {}
    __device__ void operator()(sps_index p) { head[p] = p == 0 || scol[p] != scol[p - 1]; }
};
/* a row's first triplet starts a pair whatever its column (after coo_head_op) */
struct coo_rowhead_op {
    const sps_index *tstart;
    sps_index *head;
    __device__ void setup() {}
    __device__ void operator()(sps_index r)
    {
        if (tstart[r] < tstart[r + 1]) head[tstart[r]] = 1;
    }
};

struct coo_scatter_op {
    const sps_index *scol, *head, *first; /* first: exclusive sum of head (nnz + 1) */
    sps_index *seg, *ucol;
    __device__ void setup() {}
    __device__ void operator()(sps_index p)
    {
        if (!head[p]) return;
        seg[first[p]] = p;
        ucol[first[p]] = scol[p];
    }
};

struct coo_rowptr_op {
    const sps_index *tstart, *first;
    sps_index n;
    int64_t nnz;
    sps_index *rowptr, *seg, *nu;
    __device__ void setup() {}
    __device__ void operator()(sps_index r)
    {
        rowptr[r] = first[tstart[r]]; /* the pairs before the row's first triplet (r = n: all of them) */
        if (r == n) {
            *nu = first[nnz];
            seg[first[nnz]] = (sps_index)nnz;
        }
    }
};

template <typename R>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    coo_sum_kernel(int w, int64_t total, const sps_index *__restrict__ perm, const sps_index *__restrict__ seg,
                   const R *__restrict__ val, R *__restrict__ out, unsigned long long *bad)
{
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const sps_index u = (sps_index)(t / w);
        const int q = (int)(t - (int64_t)u * w);
        const sps_index p0 = seg[u], p1 = seg[u + 1];
        double s = 0;
        for (sps_index p = p0; p < p1; p++) {
            const sps_index k = perm[p];
            const double v = (double)val[(int64_t)k * w + q];
            if (!isfinite(v)) atomicMin(&bad[0], (unsigned long long)k);
            s = p == p0 ? v : s + v;
        }
        const R r = (R)s;
        out[t] = r;
        if (!isfinite(r)) atomicMin(&bad[1], (unsigned long long)u); /* finite members: an overflow */
    }
}

/* csr_check: one thread a row (r = n: the first and last pointers), then one a value */
struct csr_check_row_op {
    const sps_index *rowptr, *col;
    sps_index n, m;
    int64_t nnz;
    unsigned long long *bad;
    __device__ void setup() {}
    __device__ void operator()(sps_index i)
    {
        if (i == n) {
            if (rowptr[0] != 0 || rowptr[n] != nnz) atomicMin(bad, (unsigned long long)n);
            return;
        }
        const sps_index p0 = rowptr[i], p1 = rowptr[i + 1];
        bool ok = p0 >= 0 && p0 <= p1 && p1 <= nnz;
        for (sps_index p = p0; ok && p < p1; p++) ok = col[p] >= 0 && col[p] < m && (p == p0 || col[p] > col[p - 1]);
        if (!ok) atomicMin(bad, (unsigned long long)i);
    }
};

template <typename R>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    csr_check_val_kernel(int64_t total, const long long *__restrict__ bad_row, const R *__restrict__ val,
                         unsigned long long *bad)
{
    if (*bad_row >= 0) return; /* the structure is wrong: the values are not looked at */
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < total; k += (int64_t)gridDim.x * blockDim.x)
        if (!isfinite((double)val[k])) atomicMin(bad, (unsigned long long)k);
}

} // namespace

extern "C" sps_status sps_cuda_coo_sort(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                        const sps_index *col, sps_index *perm, sps_index *scol, sps_index *tstart,
                                        int64_t *bad)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(bad, 0xff, sizeof *bad, s)); /* -1: none */
    if (nnz >= INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "coo_sort: %lld triplets (fewer than %d)", (long long)nnz, INT32_MAX);
    if (nnz <= 0) {
        if (n >= 0) SPS_CU(ex, cudaMemsetAsync(tstart, 0, ((size_t)n + 1) * sizeof *tstart, s));
        return SPS_OK;
    }
    const int cb = bits_for((int64_t)m - 1), end_bit = bits_for((int64_t)n - 1) + cb;
    const size_t a = 256, kb = ((size_t)nnz * sizeof(unsigned long long) + a - 1) / a * a,
                 ib = ((size_t)nnz * sizeof(sps_index) + a - 1) / a * a;
    size_t temp = 0;
    SPS_CU(ex, cub::DeviceRadixSort::SortPairs(NULL, temp, (const unsigned long long *)NULL,
                                                (unsigned long long *)NULL, (const sps_index *)NULL, (sps_index *)NULL,
                                                (int)nnz, 0, end_bit > 0 ? end_bit : 1, s));
    unsigned char *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&ws, 2 * kb + ib + temp));
    unsigned long long *kin = (unsigned long long *)ws, *kout = (unsigned long long *)(ws + kb);
    sps_index *pos = (sps_index *)(ws + 2 * kb);
    sps_status st = sps_cuda_foreach(ex, (sps_index)nnz,
                                     coo_key_op{row, col, n, m, cb, kin, pos, (unsigned long long *)bad});
    if (st == SPS_OK) {
        const cudaError_t e = cub::DeviceRadixSort::SortPairs(ws + 2 * kb + ib, temp, kin, kout, pos, perm, (int)nnz,
                                                              0, end_bit > 0 ? end_bit : 1, s);
        if (e != cudaSuccess) st = sps_cuda_fail(ex, e, "triplet sort (CUB DeviceRadixSort)", __FILE__, __LINE__);
    }
    if (st == SPS_OK) st = sps_cuda_foreach(ex, (sps_index)nnz + 1, coo_split_op{kout, cb, n, nnz, scol, tstart});
    sps_exec_release(ex, ws);
    return st;
}

extern "C" sps_status sps_cuda_coo_compress(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *scol,
                                            const sps_index *tstart, sps_index *seg, sps_index *ucol,
                                            sps_index *rowptr, sps_index *nu)
{
    if (nnz >= INT32_MAX)
        return sps_kerror(ex, SPS_ERR_ARG, "coo_compress: %lld triplets (fewer than %d)", (long long)nnz, INT32_MAX);
    sps_index *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&ws, (2 * (size_t)nnz + 1) * sizeof *ws));
    sps_index *head = ws, *first = ws + nnz;
    sps_status st = sps_cuda_foreach(ex, (sps_index)nnz, coo_head_op{scol, head});
    if (st == SPS_OK) st = sps_cuda_foreach(ex, n, coo_rowhead_op{tstart, head});
    if (st == SPS_OK) st = sps_cu_scan_index(ex, head, first, nnz, "distinct triplet pairs (scan)");
    if (st == SPS_OK) st = sps_cuda_foreach(ex, (sps_index)nnz, coo_scatter_op{scol, head, first, seg, ucol});
    if (st == SPS_OK) st = sps_cuda_foreach(ex, n + 1, coo_rowptr_op{tstart, first, n, nnz, rowptr, seg, nu});
    sps_exec_release(ex, ws);
    return st;
}

extern "C" sps_status sps_cuda_coo_sum(sps_exec *ex, int rsize, int w, sps_index nu, const sps_index *perm,
                                       const sps_index *seg, const void *val, void *out, int64_t *bad)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(bad, 0xff, 2 * sizeof *bad, s)); /* -1, -1: none */
    const int64_t total = (int64_t)nu * w;
    if (total <= 0) return SPS_OK;
    if (rsize != 4 && rsize != 8) return sps_kerror(ex, SPS_ERR_ARG, "coo_sum: %d-byte reals (4 or 8)", rsize);
    const unsigned grid = sps_cu_grid(ex, total);
    if (rsize == 4)
        coo_sum_kernel<float><<<grid, SPS_CU_THREADS, 0, s>>>(w, total, perm, seg, (const float *)val, (float *)out,
                                                              (unsigned long long *)bad);
    else
        coo_sum_kernel<double><<<grid, SPS_CU_THREADS, 0, s>>>(w, total, perm, seg, (const double *)val,
                                                               (double *)out, (unsigned long long *)bad);
    SPS_CU_LAUNCHED(ex, "coo_sum_kernel");
    return SPS_OK;
}

extern "C" sps_status sps_cuda_csr_check(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                                         const sps_index *col, int rsize, int w, const void *val, int64_t *bad)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(bad, 0xff, 2 * sizeof *bad, s)); /* -1, -1: none */
    if (rsize != 4 && rsize != 8) return sps_kerror(ex, SPS_ERR_ARG, "csr_check: %d-byte reals (4 or 8)", rsize);
    SPS_CHECK(sps_cuda_foreach(ex, n + 1, csr_check_row_op{rowptr, col, n, m, nnz, (unsigned long long *)bad}));
    const int64_t total = nnz * w;
    if (total <= 0) return SPS_OK;
    const unsigned grid = sps_cu_grid(ex, total);
    if (rsize == 4)
        csr_check_val_kernel<float><<<grid, SPS_CU_THREADS, 0, s>>>(total, (const long long *)bad, (const float *)val,
                                                                    (unsigned long long *)(bad + 1));
    else
        csr_check_val_kernel<double><<<grid, SPS_CU_THREADS, 0, s>>>(total, (const long long *)bad,
                                                                     (const double *)val, (unsigned long long *)(bad + 1));
    SPS_CU_LAUNCHED(ex, "csr_check_val_kernel");
    return SPS_OK;
}
