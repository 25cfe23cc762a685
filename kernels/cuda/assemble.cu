/* CUDA kernels of assembly from triplets (kernels/index_kernels.h: coo_sort,
 * coo_compress, coo_sum; the CPU oracle: kernels/cpu/assemble.c), behind
 * sps_matrix_from_coo_entries_device: an application that computes its element
 * contributions on the GPU (the spin-transformation app's E, a finite-element
 * stiffness matrix) gets its CSR / BCSR matrix without a host round trip.
 *
 * coo_sort   keys (row << bits(m - 1)) | col, one thread a triplet (an index
 *            out of range: atomicMin of its position into bad), then a CUB
 *            DeviceRadixSort of (key, position) pairs over the key's bits only.
 *            LSD radix sort is stable, so equal pairs keep their order: the
 *            CPU's two counting sorts give the same permutation.
 * coo_compress  head flags (a pair unlike its predecessor), their exclusive
 *            sum (scan.cu) numbers the distinct pairs; each head writes its
 *            pair's first position, column and the row pointers of the rows
 *            from its predecessor's row to its own (each row pointer written
 *            once in all).
 * coo_sum    one thread a (pair, member): the pair's terms in sorted order,
 *            i.e. triplet order, summed in double from the first, then rounded:
 *            the host builder's additions in its order, so the values are equal
 *            bit for bit.  Non-finite terms and float overflow: atomicMin of the
 *            smallest triplet / pair into bad.
 * Deterministic: every output is a function of the input alone.
 * Traffic (18.4M triplets of 4 doubles, the 1M-vertex spin matrix E): keys 8 B
 * and positions 4 B a triplet through the sort's passes (5 passes of 8 bits over
 * 40-bit keys), one gather of row / col a triplet, the values read once through
 * perm (32 B a triplet) and the pairs' values written once. */
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

struct coo_head_op {
    const sps_index *row, *col, *perm;
    sps_index *head;
    __device__ void setup() {}
    __device__ void operator()(sps_index p)
    {
        const sps_index a = perm[p];
        head[p] = p == 0 || row[a] != row[perm[p - 1]] || col[a] != col[perm[p - 1]];
    }
};

struct coo_scatter_op {
    const sps_index *row, *col, *perm, *head, *first; /* first: exclusive sum of head (nnz + 1) */
    sps_index n;
    int64_t nnz;
    sps_index *seg, *ucol, *rowptr, *nu;
    __device__ void setup() {}
    __device__ void operator()(sps_index p)
    {
        if (p == nnz) { /* the end: nu, seg[nu], the rows after the last pair's */
            const sps_index u = first[nnz];
            *nu = u;
            seg[u] = (sps_index)nnz;
            for (sps_index r = (nnz > 0 ? row[perm[nnz - 1]] : -1) + 1; r <= n; r++) rowptr[r] = u;
            return;
        }
        if (!head[p]) return;
        const sps_index u = first[p], a = perm[p], i = row[a];
        seg[u] = p;
        ucol[u] = col[a];
        for (sps_index r = (p > 0 ? row[perm[p - 1]] : -1) + 1; r <= i; r++) rowptr[r] = u;
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
        out[t] = (R)s;
        if (sizeof(R) == 4 && isfinite(s) && isinf((float)s)) atomicMin(&bad[1], (unsigned long long)u);
    }
}

} // namespace

extern "C" sps_status sps_cuda_coo_sort(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                        const sps_index *col, sps_index *perm, int64_t *bad)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(bad, 0xff, sizeof *bad, s)); /* -1: none */
    if (nnz <= 0) return SPS_OK;
    if (nnz > INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "coo_sort: %lld triplets (at most %d)", (long long)nnz, INT32_MAX);
    const int cb = bits_for((int64_t)m - 1), end_bit = bits_for((int64_t)n - 1) + cb;
    const size_t kb = (size_t)nnz * sizeof(unsigned long long), ib = (size_t)nnz * sizeof(sps_index);
    size_t temp = 0;
    SPS_CU(ex, cub::DeviceRadixSort::SortPairs(NULL, temp, (const unsigned long long *)NULL,
                                                (unsigned long long *)NULL, (const sps_index *)NULL, (sps_index *)NULL,
                                                (int)nnz, 0, end_bit > 0 ? end_bit : 1, s));
    const size_t a = 256, kb_a = (kb + a - 1) / a * a, ib_a = (ib + a - 1) / a * a;
    unsigned char *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&ws, 2 * kb_a + ib_a + temp));
    unsigned long long *kin = (unsigned long long *)ws, *kout = (unsigned long long *)(ws + kb_a);
    sps_index *pos = (sps_index *)(ws + 2 * kb_a);
    sps_status st = sps_cuda_foreach(ex, (sps_index)nnz,
                                     coo_key_op{row, col, n, m, cb, kin, pos, (unsigned long long *)bad});
    if (st == SPS_OK) {
        const cudaError_t e = cub::DeviceRadixSort::SortPairs(ws + 2 * kb_a + ib_a, temp, kin, kout, pos, perm, (int)nnz,
                                                              0, end_bit > 0 ? end_bit : 1, s);
        if (e != cudaSuccess) st = sps_cuda_fail(ex, e, "triplet sort (CUB DeviceRadixSort)", __FILE__, __LINE__);
    }
    sps_exec_release(ex, ws);
    return st;
}

extern "C" sps_status sps_cuda_coo_compress(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *row,
                                            const sps_index *col, const sps_index *perm, sps_index *seg,
                                            sps_index *ucol, sps_index *rowptr, sps_index *nu)
{
    if (nnz > INT32_MAX)
        return sps_kerror(ex, SPS_ERR_ARG, "coo_compress: %lld triplets (at most %d)", (long long)nnz, INT32_MAX);
    sps_index *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&ws, (2 * (size_t)nnz + 1) * sizeof *ws));
    sps_index *head = ws, *first = ws + nnz;
    sps_status st = sps_cuda_foreach(ex, (sps_index)nnz, coo_head_op{row, col, perm, head});
    if (st == SPS_OK) st = sps_cu_scan_index(ex, head, first, nnz, "distinct triplet pairs (scan)");
    if (st == SPS_OK)
        st = sps_cuda_foreach(ex, (sps_index)nnz + 1,
                              coo_scatter_op{row, col, perm, head, first, n, nnz, seg, ucol, rowptr, nu});
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
