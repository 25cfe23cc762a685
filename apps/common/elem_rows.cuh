/* The block pattern of a matrix assembled from elements of K corners (triangles K = 3,
 * tetrahedra K = 4), built on the GPU for row-owner assembly: each node's thread then sums
 * its own block row over its elements, with neither atomics nor a sort of the K^2 ne
 * element blocks (the FEM app's K, fem_cuda.cu; the spin app's E, spin_cuda.cu).
 *
 *   incidence  the K ne corners (node el[q], q = K e + k) counted by node (atomics), the
 *              pointers ptr by a CUB scan, each corner placed at its node's cursor (atomics)
 *              and each node's corners sorted (a node has a few: insertion sort), so they
 *              come in element order (then local corner order), the same on every run.  A
 *              stable CUB radix sort of the corners by node did the same in 0.2 ms more at
 *              1M vertices (three passes, three scratch arrays of K ne);
 *   pattern    node a's columns are the distinct nodes of its elements: a thread a node
 *              finds them by repeated selection of the next larger one (O(columns x
 *              corners) reads of the L1-resident element list, no scratch memory, any
 *              valence), counts them, a CUB exclusive sum gives rowptr, and a second pass
 *              writes the sorted columns.
 *
 * A value kernel then walks node a's corners ptr[a] .. ptr[a + 1] (inc[p] = K e + k) and
 * adds element e's blocks (k, b) at the columns of el[K e + b] (elem_rows::find).  In
 * that order each block sums its element contributions as a host loop over elements
 * (then local rows and columns) does, so starting each block at -0.0 (the identity of
 * IEEE addition) reproduces a host assembly from triplets bit for bit.
 *
 * Header-only (templates and internal kernels), included by each app's CUDA file. */
#ifndef APPS_COMMON_ELEM_ROWS_CUH
#define APPS_COMMON_ELEM_ROWS_CUH

#include <cub/device/device_scan.cuh>

#include <climits>
#include <cuda_runtime.h>

namespace elem_rows {

/* Device arrays of the pattern (release() frees them). */
struct rows {
    int *inc = nullptr;    /* K ne corners K e + k, grouped by node, ascending */
    int *ptr = nullptr;    /* nv + 1: node a's corners inc[ptr[a] .. ptr[a + 1]) */
    int *rowptr = nullptr; /* nv + 1 */
    int *col = nullptr;    /* nnz, sorted within each row */
    int nnz = 0;
};

template <int K> __device__ __forceinline__ void corners(const int *__restrict__ el, int e, int c[K])
{
    if constexpr (K == 4) { /* one 16-byte load (el is a cudaMalloc'd array: aligned) */
        const int4 q = __ldg(reinterpret_cast<const int4 *>(el) + e);
        c[0] = q.x, c[1] = q.y, c[2] = q.z, c[3] = q.w;
    } else {
#pragma unroll
        for (int k = 0; k < K; k++) c[k] = __ldg(el + (long long)K * e + k);
    }
}

/* The smallest node above `last` among the nodes of node a's elements (INT_MAX: none). */
template <int K>
__device__ __forceinline__ int next_neighbour(const int *__restrict__ el, const int *__restrict__ inc, int p0, int p1,
                                              int last)
{
    int m = INT_MAX;
    for (int p = p0; p < p1; p++) {
        int c[K];
        corners<K>(el, inc[p] / K, c);
#pragma unroll
        for (int k = 0; k < K; k++) m = c[k] > last && c[k] < m ? c[k] : m;
    }
    return m;
}

/* The position of column c in row r0 .. r1 - 1 (c is there: the pattern holds every node of
 * the row's elements). */
__device__ __forceinline__ int find(const int *__restrict__ col, int r0, int r1, int c)
{
    int lo = r0, hi = r1 - 1;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (col[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

namespace detail {

static __global__ void corner_count(long long nk, const int *__restrict__ el, int *__restrict__ cnt)
{
    for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < nk; q += (long long)gridDim.x * blockDim.x)
        atomicAdd(cnt + el[q], 1);
}

/* each corner at its node's cursor (an order that varies from run to run: sorted next) */
static __global__ void corner_fill(long long nk, const int *__restrict__ el, int *__restrict__ cur, int *__restrict__ inc)
{
    for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < nk; q += (long long)gridDim.x * blockDim.x)
        inc[atomicAdd(cur + el[q], 1)] = (int)q;
}

/* a node's corners in increasing order (insertion sort: a triangle mesh's node has about 6,
 * a tetrahedral mesh's about 24; quadratic in a node's valence) */
static __global__ void corner_sort(int nv, const int *__restrict__ ptr, int *__restrict__ inc)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x) {
        const int p0 = ptr[a], p1 = ptr[a + 1];
        for (int p = p0 + 1; p < p1; p++) {
            const int v = inc[p];
            int q = p - 1;
            for (; q >= p0 && inc[q] > v; q--) inc[q + 1] = inc[q];
            inc[q + 1] = v;
        }
    }
}

/* Nodes of at most CAP elements (a triangle mesh's usual 6: CAP = 8) keep their elements'
 * corners in registers for the selection passes instead of reloading them each pass
 * (static indexing: the loops are unrolled over CAP). */
template <int K> struct small_cap {
    static constexpr int value = 24 / K;
};

/* Node a's columns by selection: n (count only, out NULL) or written to out. */
template <int K>
__device__ __forceinline__ int row_select(const int *__restrict__ el, const int *__restrict__ inc, int p0, int p1,
                                          int *__restrict__ out)
{
    constexpr int CAP = small_cap<K>::value;
    int n = 0;
    if (p1 - p0 <= CAP) {
        int cc[CAP * K];
#pragma unroll
        for (int q = 0; q < CAP; q++) {
            int c[K];
            if (p0 + q < p1) corners<K>(el, inc[p0 + q] / K, c);
#pragma unroll
            for (int k = 0; k < K; k++) cc[q * K + k] = p0 + q < p1 ? c[k] : INT_MAX;
        }
        for (int last = -1;;) {
            int m = INT_MAX;
#pragma unroll
            for (int i = 0; i < CAP * K; i++) m = cc[i] > last && cc[i] < m ? cc[i] : m;
            if (m == INT_MAX) break;
            if (out) out[n] = m;
            n++, last = m;
        }
        return n;
    }
    for (int last = -1; (last = next_neighbour<K>(el, inc, p0, p1, last)) != INT_MAX; n++)
        if (out) out[n] = last;
    return n;
}

template <int K>
__global__ void row_count(int nv, const int *__restrict__ el, const int *__restrict__ inc, const int *__restrict__ ptr,
                          int *__restrict__ cnt)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x)
        cnt[a] = row_select<K>(el, inc, ptr[a], ptr[a + 1], nullptr);
}

template <int K>
__global__ void row_cols(int nv, const int *__restrict__ el, const int *__restrict__ inc, const int *__restrict__ ptr,
                         const int *__restrict__ rowptr, int *__restrict__ col)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x)
        (void)row_select<K>(el, inc, ptr[a], ptr[a + 1], col + rowptr[a]);
}

inline unsigned grid(long long n, int threads)
{
    const long long g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > 65535LL * 32 ? 65535LL * 32 : g);
}

} // namespace detail

inline void release(cudaStream_t s, rows *r)
{
    int *b[4] = {r->inc, r->ptr, r->rowptr, r->col};
    for (int i = 0; i < 4; i++)
        if (b[i]) (void)cudaFreeAsync(b[i], s);
    *r = rows{};
}

/* The pattern of the nv x nv block matrix of the ne elements el (K ne node indices in
 * 0..nv-1, device memory, K ne < 2^31), queued on s; r->nnz is known on return (one
 * synchronisation).  On an error *what names the step; r keeps what was allocated. */
template <int K> cudaError_t build(cudaStream_t s, int nv, int ne, const int *el, rows *r, const char **what)
{
    using namespace detail;
    *r = rows{};
    const long long nk = (long long)K * ne;
    int *cnt = nullptr;
    void *tmp = nullptr;
    size_t scan_bytes = 0;
    *what = "allocating the incidence";
    cudaError_t e = cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, (const int *)nullptr, (int *)nullptr, nv + 1, s);
    if (e == cudaSuccess) e = cudaMallocAsync(&tmp, scan_bytes + 16, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&cnt, ((size_t)nv + 1) * sizeof(int), s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&r->inc, (size_t)nk * sizeof(int) + 16, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&r->ptr, ((size_t)nv + 1) * sizeof(int), s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&r->rowptr, ((size_t)nv + 1) * sizeof(int), s);
    /* the incidence: corners counted by node, pointers by a scan, each corner placed at its
     * node's cursor, each node's corners sorted (element order, as a host loop meets them) */
    if (e == cudaSuccess) {
        *what = "the node-element incidence";
        e = cudaMemsetAsync(cnt, 0, ((size_t)nv + 1) * sizeof(int), s);
        if (e == cudaSuccess && nk > 0) {
            corner_count<<<grid(nk, 256), 256, 0, s>>>(nk, el, cnt);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, scan_bytes, cnt, r->ptr, nv + 1, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(cnt, r->ptr, (size_t)nv * sizeof(int), cudaMemcpyDeviceToDevice, s);
        if (e == cudaSuccess && nk > 0) {
            corner_fill<<<grid(nk, 256), 256, 0, s>>>(nk, el, cnt, r->inc);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess && nv > 0) {
            corner_sort<<<grid(nv, 128), 128, 0, s>>>(nv, r->ptr, r->inc);
            e = cudaGetLastError();
        }
    }
    if (e == cudaSuccess) {
        *what = "counting each row's blocks";
        e = cudaMemsetAsync(cnt + nv, 0, sizeof(int), s);
        if (e == cudaSuccess && nv > 0) {
            row_count<K><<<grid(nv, 128), 128, 0, s>>>(nv, el, r->inc, r->ptr, cnt);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, scan_bytes, cnt, r->rowptr, nv + 1, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(&r->nnz, r->rowptr + nv, sizeof r->nnz, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    }
    if (e == cudaSuccess) {
        *what = "the columns";
        e = cudaMallocAsync((void **)&r->col, (size_t)r->nnz * sizeof(int) + 16, s);
        if (e == cudaSuccess && nv > 0) {
            row_cols<K><<<grid(nv, 128), 128, 0, s>>>(nv, el, r->inc, r->ptr, r->rowptr, r->col);
            e = cudaGetLastError();
        }
    }
    void *b[2] = {tmp, cnt};
    for (int i = 0; i < 2; i++)
        if (b[i]) (void)cudaFreeAsync(b[i], s);
    return e;
}

} // namespace elem_rows
#endif
