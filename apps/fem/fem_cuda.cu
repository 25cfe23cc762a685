/* spsolve-fem: K assembled on the GPU (fem.h fem_assemble_cuda).  The mesh and the clamp
 * flags go up once; one thread a triplet (tetrahedron e, block (a, b)) computes its
 * element's gradients and its block (fem_math.h, the host's arithmetic; compiled with
 * --fmad=false: the blocks are the host's bit for bit), eliminates clamped nodes as the
 * host does, and writes the triplet; sps_matrix_from_coo_entries_device sorts and sums
 * them on the device into the library's 3 x 3 block format (bcsr).  Equal to the host
 * assembly bit for bit (test_fem).  Queued on the context's stream. */
#include "fem.h"
#include "fem_math.h"

#include <spsolve/cuda.h>

#include <cuda_runtime.h>
#include <stdio.h>

namespace {

/* a block's 9 doubles, written whole by one thread (72 bytes: consecutive threads,
 * consecutive blocks) */
struct b9 {
    double v[9];
};

__global__ void fem_triplets_kernel(int nt, const double *__restrict__ v, const int *__restrict__ t,
                                    const unsigned char *__restrict__ clamp, double lambda, double mu,
                                    int *__restrict__ row, int *__restrict__ col, b9 *__restrict__ val)
{
    const long long nq = 16LL * nt;
    for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < nq; q += (long long)gridDim.x * blockDim.x) {
        const int e = (int)(q / 16), ab = (int)(q - 16LL * e), a = ab / 4, b = ab - 4 * a;
        const int te[4] = {__ldg(t + 4 * e), __ldg(t + 4 * e + 1), __ldg(t + 4 * e + 2), __ldg(t + 4 * e + 3)};
        double g[4][3], K[9];
        const double det = fem_tet_grad(v, te, g);
        if (det != 0) fem_tet_block(g, det, lambda, mu, a, b, K);
        const int fixed = clamp[te[a]] || clamp[te[b]];
        b9 out;
        for (int r = 0; r < 9; r++) out.v[r] = det != 0 ? fem_clamped(K[r], fixed, te[a] == te[b], r) : 0.0;
        row[q] = te[a];
        col[q] = te[b];
        val[q] = out;
    }
}

} // namespace

extern "C" sps_status fem_assemble_cuda(sps_context ctx, const fem_mesh *m, const unsigned char *clamp, double lambda,
                                        double mu, sps_matrix *K, char *err, size_t len)
{
    *K = NULL;
    cudaStream_t s = (cudaStream_t)sps_context_cuda_stream(ctx);
    const size_t nv = (size_t)m->nv, nt = (size_t)m->nt, nq = 16 * nt;
    double *dv = NULL, *dval = NULL;
    int *dt = NULL, *drow = NULL, *dcol = NULL;
    unsigned char *dclamp = NULL;
    sps_status st = SPS_OK;
    const char *what = "allocating the mesh and triplets";
    cudaError_t e = cudaMallocAsync((void **)&dv, 3 * nv * sizeof *dv + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dt, 4 * nt * sizeof *dt + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dclamp, nv + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&drow, nq * sizeof *drow + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dcol, nq * sizeof *dcol + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dval, 9 * nq * sizeof *dval + 8, s);
    if (e == cudaSuccess) {
        what = "uploading the mesh";
        e = cudaMemcpyAsync(dv, m->v, 3 * nv * sizeof *dv, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(dt, m->t, 4 * nt * sizeof *dt, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(dclamp, clamp, nv, cudaMemcpyHostToDevice, s);
    }
    if (e == cudaSuccess && nt > 0) {
        what = "the triplet kernel";
        const size_t want = (nq + 255) / 256;
        fem_triplets_kernel<<<(unsigned)(want < 65535 * 32 ? want : 65535 * 32), 256, 0, s>>>(
            m->nt, dv, dt, dclamp, lambda, mu, drow, dcol, (b9 *)dval);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        st = sps_matrix_from_coo_entries_device(ctx, m->nv, m->nv, (int64_t)nq, drow, dcol, dval, sps_entry_block(3),
                                                SPS_F64, K);
    if (e == cudaSuccess && st == SPS_OK) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        snprintf(err, len, "GPU assembly of K: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
        st = SPS_ERR_DEVICE;
    }
    void *bufs[6] = {dv, dt, dclamp, drow, dcol, dval};
    for (int i = 0; i < 6; i++)
        if (bufs[i]) (void)cudaFreeAsync(bufs[i], s);
    (void)cudaGetLastError();
    if (st != SPS_OK) {
        sps_matrix_destroy(*K);
        *K = NULL;
    }
    return st;
}
