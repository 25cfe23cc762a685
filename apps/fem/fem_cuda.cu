/* spsolve-fem: K assembled on the GPU (fem.h fem_assemble_cuda), row by row: each node
 * owns its block row, so the sums need neither atomics nor a sort of the 16 nt element
 * blocks.
 *
 *   1. the pattern from vertex adjacency (apps/common/elem_rows.cuh: the corners sorted
 *      by node, each row's columns found by selection over its elements);
 *   2. values: a thread a node walks its elements in element order, computes each one's
 *      gradients and its 4 blocks (k, b) (fem_math.h, the host's arithmetic, compiled
 *      with --fmad=false), eliminates clamped nodes as the host does, and adds each block
 *      at its column.  The row starts at -0.0, the identity of IEEE addition, so each sum
 *      is the host's sum from its first term, in the host's (element) order: K equals
 *      the host assembly bit for bit (test_fem);
 *   3. sps_matrix_from_csr_entries_device checks the arrays and builds the bcsr matrix
 *      (f32: the f64 sums rounded once, as the host does).
 *
 * Why not triplets: writing the 16 nt blocks (80 bytes each with their keys), sorting
 * them and gathering them back moved about 10x the bytes of K (H200, 1M DOFs: 27 ms, 270
 * SpMVs of K; now 63 SpMVs at 5.5M unknowns on an H100, bench/results/fem.md).  Element
 * colouring would avoid atomics too but needs a colouring pass and still writes each
 * block from 4 elements; the row owner writes each of K's blocks once.  The redundancy is
 * arithmetic: each element's gradients are computed 4 times (once a corner). */
#include "fem.h"
#include "fem_math.h"

#include "elem_rows.cuh"

#include <spsolve/cuda.h>

#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

namespace {

/* a block's 9 doubles */
struct b9 {
    double v[9];
};

__global__ void row_values_kernel(int nv, const double *__restrict__ v, const int *__restrict__ t,
                                  const unsigned char *__restrict__ clamp, const int *__restrict__ inc,
                                  const int *__restrict__ ptr, const int *__restrict__ rowptr,
                                  const int *__restrict__ col, double lambda, double mu, b9 *__restrict__ val)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x) {
        const int r0 = rowptr[a], r1 = rowptr[a + 1];
        for (int j = r0; j < r1; j++)
            for (int r = 0; r < 9; r++) val[j].v[r] = -0.0;
        for (int p = ptr[a]; p < ptr[a + 1]; p++) {
            const int e = inc[p] >> 2, k = inc[p] & 3;
            int te[4];
            elem_rows::corners<4>(t, e, te);
            double g[4][3], K[9];
            const double det = fem_tet_grad(v, te, g);
            for (int b = 0; b < 4; b++) {
                const int c = te[b], at = elem_rows::find(col, r0, r1, c);
                if (det != 0) fem_tet_block(g, det, lambda, mu, k, b, K);
                const int fixed = clamp[a] || clamp[c];
                for (int r = 0; r < 9; r++) val[at].v[r] += det != 0 ? fem_clamped(K[r], fixed, a == c, r) : 0.0;
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
    int *dt = NULL;
    unsigned char *dclamp = NULL;
    elem_rows::rows R;
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
    /* 1. the pattern */
    if (e == cudaSuccess) e = elem_rows::build<4>(s, nv, m->nt, dt, &R, &what);
    /* 2. values */
    if (e == cudaSuccess) {
        what = "allocating K";
        e = cudaMallocAsync((void **)&dval, 9 * (size_t)R.nnz * sizeof(double) + 16, s);
    }
    if (e == cudaSuccess && nv > 0) {
        what = "the row kernel";
        row_values_kernel<<<grid_for(nv, 128), 128, 0, s>>>(nv, dv, dt, dclamp, R.inc, R.ptr, R.rowptr, R.col, lambda,
                                                            mu, (b9 *)dval);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && t == SPS_F32) {
        what = "rounding K to f32";
        e = cudaMallocAsync((void **)&fval, 9 * (size_t)R.nnz * sizeof(float) + 16, s);
        if (e == cudaSuccess && R.nnz > 0) {
            round_kernel<<<grid_for(9LL * R.nnz, 256), 256, 0, s>>>(9LL * R.nnz, dval, fval);
            e = cudaGetLastError();
        }
    }
    /* 3. the matrix */
    if (e == cudaSuccess)
        st = sps_matrix_from_csr_entries_device(ctx, nv, nv, R.nnz, R.rowptr, R.col,
                                                t == SPS_F32 ? (void *)fval : (void *)dval, sps_entry_block(3),
                                                t == SPS_F32 ? SPS_F32 : SPS_F64, K);
    if (e == cudaSuccess && st == SPS_OK) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        snprintf(err, len, "GPU assembly of K: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
        st = e == cudaErrorMemoryAllocation ? SPS_ERR_ALLOC : SPS_ERR_DEVICE;
    }
    elem_rows::release(s, &R);
    void *bufs[] = {dv, dt, dclamp, dval, fval};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) (void)cudaFreeAsync(bufs[i], s);
    (void)cudaGetLastError();
    if (st != SPS_OK) {
        sps_matrix_destroy(*K);
        *K = NULL;
    }
    return st;
}
