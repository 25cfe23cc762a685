/* spsolve-fem: K assembled on the GPU (fem.h fem_assemble_cuda), row by row: each node
 * owns its block row, so the sums need neither atomics nor a sort of the 16 nt element
 * blocks.
 *
 *   1. incidence: the 4 nt corners (node t[q], q = 4 e + k) sorted by node with a stable
 *      CUB radix sort over the node's bits (3 passes at 5M unknowns), so each node's
 *      corners come in element order; one pass over the sorted keys gives the pointers;
 *   2. pattern (vertex adjacency): a thread a node counts the distinct nodes of its
 *      elements by repeated selection of the next larger one (O(distinct x corners), no
 *      scratch memory, any valence), a CUB exclusive sum gives the row pointers, and a
 *      second pass writes the sorted columns;
 *   3. values: the same thread walks its elements in element order, computes each one's
 *      gradients and its 4 blocks (k, b) (fem_math.h, the host's arithmetic, compiled
 *      with --fmad=false), eliminates clamped nodes as the host does, and adds each block
 *      at its column (binary search in the row).  The row starts at -0.0, the identity
 *      of IEEE addition, so each sum is the host's sum from its first term, in the host's
 *      (element) order: K equals the host assembly bit for bit (test_fem);
 *   4. sps_matrix_from_csr_entries_device checks the arrays and builds the bcsr matrix
 *      (f32: the f64 sums rounded once, as the host does).
 *
 * Why not the triplets: writing the 16 nt blocks (80 bytes each with their keys), sorting
 * them and gathering them back moved about 10x the bytes of K (H200, 1M DOFs: 27 ms, 270
 * SpMVs of K; bench/results/fem.md has the current figure).  Element colouring with
 * atomics-free scatter would also work but needs a colouring pass and still writes each
 * block 4 times from different elements; the row owner writes each of K's blocks once.
 * The redundancy is arithmetic: each element's gradients are computed 4 times (once per
 * corner), which is cheap next to the memory traffic saved. */
#include "fem.h"
#include "fem_math.h"

#include <spsolve/cuda.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <climits>
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

namespace {

/* a block's 9 doubles */
struct b9 {
    double v[9];
};

__global__ void corner_keys_kernel(long long n4, const int *__restrict__ t, int *__restrict__ key, int *__restrict__ pos)
{
    for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < n4; q += (long long)gridDim.x * blockDim.x) {
        key[q] = t[q];
        pos[q] = (int)q;
    }
}

/* From the sorted corner keys: ptr[a] = the first corner of node a (each node's pointer
 * written once, by the position where its run of keys starts or would start). */
__global__ void incidence_ptr_kernel(long long n4, int nv, const int *__restrict__ skey, int *__restrict__ ptr)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p <= n4; p += (long long)gridDim.x * blockDim.x) {
        const int prev = p > 0 ? skey[p - 1] : -1, r = p < n4 ? skey[p] : nv;
        for (int a = prev + 1; a <= r; a++) ptr[a] = (int)p;
    }
}

/* The smallest node above `last` among the nodes of node a's elements (INT_MAX: none). */
__device__ __forceinline__ int next_neighbour(const int4 *__restrict__ t4, const int *__restrict__ inc, int p0, int p1,
                                              int last)
{
    int m = INT_MAX;
    for (int p = p0; p < p1; p++) {
        const int4 te = __ldg(t4 + (inc[p] >> 2));
        m = te.x > last && te.x < m ? te.x : m;
        m = te.y > last && te.y < m ? te.y : m;
        m = te.z > last && te.z < m ? te.z : m;
        m = te.w > last && te.w < m ? te.w : m;
    }
    return m;
}

__global__ void row_count_kernel(int nv, const int4 *__restrict__ t4, const int *__restrict__ inc,
                                 const int *__restrict__ ptr, int *__restrict__ cnt)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x) {
        const int p0 = ptr[a], p1 = ptr[a + 1];
        int n = 0;
        for (int last = -1; (last = next_neighbour(t4, inc, p0, p1, last)) != INT_MAX;) n++;
        cnt[a] = n;
    }
}

__global__ void row_fill_kernel(int nv, const double *__restrict__ v, const int4 *__restrict__ t4,
                                const unsigned char *__restrict__ clamp, const int *__restrict__ inc,
                                const int *__restrict__ ptr, const int *__restrict__ rowptr, double lambda, double mu,
                                int *__restrict__ col, b9 *__restrict__ val)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x) {
        const int p0 = ptr[a], p1 = ptr[a + 1], r0 = rowptr[a], r1 = rowptr[a + 1];
        int last = -1;
        for (int j = r0; j < r1; j++) {
            last = next_neighbour(t4, inc, p0, p1, last);
            col[j] = last;
            for (int r = 0; r < 9; r++) val[j].v[r] = -0.0;
        }
        for (int p = p0; p < p1; p++) {
            const int e = inc[p] >> 2, k = inc[p] & 3;
            const int4 q = __ldg(t4 + e);
            const int te[4] = {q.x, q.y, q.z, q.w};
            double g[4][3], K[9];
            const double det = fem_tet_grad(v, te, g);
            for (int b = 0; b < 4; b++) {
                const int c = te[b];
                int lo = r0, hi = r1 - 1; /* c is in the row: the pattern holds every node of a's elements */
                while (lo < hi) {
                    const int mid = (lo + hi) >> 1;
                    if (col[mid] < c) lo = mid + 1;
                    else hi = mid;
                }
                if (det != 0) fem_tet_block(g, det, lambda, mu, k, b, K);
                const int fixed = clamp[a] || clamp[c];
                for (int r = 0; r < 9; r++) val[lo].v[r] += det != 0 ? fem_clamped(K[r], fixed, a == c, r) : 0.0;
            }
        }
    }
}

/* f32: the f64 sums rounded once */
__global__ void round_kernel(long long n, const double *__restrict__ d, float *__restrict__ f)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        f[i] = (float)d[i];
}

static unsigned grid_for(long long n, int threads)
{
    const long long g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > 65535LL * 32 ? 65535LL * 32 : g);
}

/* the radix sort's end bit for keys 0..v (at least 1) */
static int key_bits(long long v)
{
    int b = 1;
    while (b < 31 && (v >> b) > 0) b++;
    return b;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

} // namespace

extern "C" sps_status fem_assemble_cuda(sps_context ctx, const fem_mesh *m, const unsigned char *clamp, double lambda,
                                        double mu, sps_scalar t, sps_matrix *K, double *t_upload, char *err,
                                        size_t len)
{
    *K = NULL;
    *t_upload = 0;
    cudaStream_t s = (cudaStream_t)sps_context_cuda_stream(ctx);
    const int nv = m->nv;
    const long long n4 = 4LL * m->nt;
    if (n4 >= INT_MAX) {
        snprintf(err, len, "GPU assembly of K: %d tetrahedra (at most %d)", m->nt, INT_MAX / 4 - 1);
        return SPS_ERR_ARG;
    }
    double *dv = NULL, *dval = NULL;
    float *fval = NULL;
    int *dt = NULL, *key = NULL, *skey = NULL, *pos = NULL, *inc = NULL, *ptr = NULL, *cnt = NULL, *rowptr = NULL,
        *col = NULL;
    unsigned char *dclamp = NULL;
    void *tmp = NULL;
    int nnz = 0;
    sps_status st = SPS_OK;
    const double t0 = now();
    const char *what = "allocating the mesh";
    cudaError_t e = cudaMallocAsync((void **)&dv, 3 * (size_t)nv * sizeof *dv + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dt, (size_t)n4 * sizeof *dt + 16, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dclamp, (size_t)nv + 8, s);
    if (e == cudaSuccess) {
        what = "uploading the mesh";
        e = cudaMemcpyAsync(dv, m->v, 3 * (size_t)nv * sizeof *dv, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(dt, m->t, (size_t)n4 * sizeof *dt, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(dclamp, clamp, (size_t)nv, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    }
    *t_upload = now() - t0;
    /* 1. incidence */
    size_t sort_bytes = 0, scan_bytes = 0;
    if (e == cudaSuccess) {
        what = "allocating the incidence";
        e = cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, (const int *)NULL, (int *)NULL, (const int *)NULL,
                                            (int *)NULL, (int)n4, 0, key_bits(nv > 0 ? nv - 1 : 0), s);
        if (e == cudaSuccess)
            e = cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (const int *)NULL, (int *)NULL, nv + 1, s);
        const size_t tb = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
        if (e == cudaSuccess) e = cudaMallocAsync(&tmp, tb + 16, s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&key, (size_t)n4 * sizeof(int) + 16, s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&skey, (size_t)n4 * sizeof(int) + 16, s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&pos, (size_t)n4 * sizeof(int) + 16, s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&inc, (size_t)n4 * sizeof(int) + 16, s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&ptr, ((size_t)nv + 1) * sizeof(int), s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&cnt, ((size_t)nv + 1) * sizeof(int), s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&rowptr, ((size_t)nv + 1) * sizeof(int), s);
    }
    if (e == cudaSuccess && n4 > 0) {
        what = "sorting the corners by node";
        corner_keys_kernel<<<grid_for(n4, 256), 256, 0, s>>>(n4, dt, key, pos);
        e = cudaGetLastError();
        if (e == cudaSuccess)
            e = cub::DeviceRadixSort::SortPairs(tmp, sort_bytes, key, skey, pos, inc, (int)n4, 0,
                                                key_bits(nv > 0 ? nv - 1 : 0), s);
    }
    if (e == cudaSuccess) {
        what = "the incidence pointers";
        incidence_ptr_kernel<<<grid_for(n4 + 1, 256), 256, 0, s>>>(n4, nv, skey, ptr);
        e = cudaGetLastError();
    }
    /* 2. pattern */
    if (e == cudaSuccess) {
        what = "counting each row's blocks";
        e = cudaMemsetAsync(cnt + nv, 0, sizeof(int), s);
        if (e == cudaSuccess && nv > 0) {
            row_count_kernel<<<grid_for(nv, 128), 128, 0, s>>>(nv, (const int4 *)dt, inc, ptr, cnt);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = cub::DeviceScan::ExclusiveSum(tmp, scan_bytes, cnt, rowptr, nv + 1, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(&nnz, rowptr + nv, sizeof nnz, cudaMemcpyDeviceToHost, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    }
    /* 3. values */
    if (e == cudaSuccess) {
        what = "allocating K";
        e = cudaMallocAsync((void **)&col, (size_t)nnz * sizeof(int) + 16, s);
        if (e == cudaSuccess) e = cudaMallocAsync((void **)&dval, 9 * (size_t)nnz * sizeof(double) + 16, s);
    }
    if (e == cudaSuccess && nv > 0) {
        what = "the row kernel";
        row_fill_kernel<<<grid_for(nv, 128), 128, 0, s>>>(nv, dv, (const int4 *)dt, dclamp, inc, ptr, rowptr, lambda,
                                                          mu, col, (b9 *)dval);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && t == SPS_F32) {
        what = "rounding K to f32";
        e = cudaMallocAsync((void **)&fval, 9 * (size_t)nnz * sizeof(float) + 16, s);
        if (e == cudaSuccess && nnz > 0) {
            round_kernel<<<grid_for(9LL * nnz, 256), 256, 0, s>>>(9LL * nnz, dval, fval);
            e = cudaGetLastError();
        }
    }
    /* 4. the matrix */
    if (e == cudaSuccess)
        st = sps_matrix_from_csr_entries_device(ctx, nv, nv, nnz, rowptr, col, t == SPS_F32 ? (void *)fval : dval,
                                                sps_entry_block(3), t == SPS_F32 ? SPS_F32 : SPS_F64, K);
    if (e == cudaSuccess && st == SPS_OK) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        snprintf(err, len, "GPU assembly of K: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
        st = e == cudaErrorMemoryAllocation ? SPS_ERR_ALLOC : SPS_ERR_DEVICE;
    }
    void *bufs[] = {dv, dt, dclamp, tmp, key, skey, pos, inc, ptr, cnt, rowptr, col, dval, fval};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) (void)cudaFreeAsync(bufs[i], s);
    (void)cudaGetLastError();
    if (st != SPS_OK) {
        sps_matrix_destroy(*K);
        *K = NULL;
    }
    return st;
}
