/* spsolve-spin: E assembled on the GPU (spin.h spin_assemble_cuda).  The mesh and rho
 * go up once; one thread a triplet computes its face's quaternion block (spin_math.h, the
 * host's arithmetic: compiled with --fmad=false, so the blocks are the host's bit for
 * bit) as triplets in device memory; sps_matrix_from_coo_entries_device sorts and sums
 * them there (the host builder's sums in its order: E equals the host-assembled E bit
 * for bit; test_spin checks it).  Everything is queued on the context's stream
 * (sps_context_cuda_stream), so the library's work is ordered after the kernel.
 * Traffic of the kernel: the face's 3 corners (24 B each, gathered, 9 times from the L1 /
 * L2) and rho read, 9 triplets of 8 + 32 B written: 18.4M triplets (740 MB) at 1M vertices. */
#include "spin.h"
#include "spin_math.h"

#include <spsolve/cuda.h>

#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

namespace {

/* one triplet's quaternion, 32 bytes: a warp's stores are 8 full 128-byte lines */
struct alignas(32) q4 {
    double w, x, y, z;
};

/* One thread a triplet (face t / 9, block (i, j)): consecutive threads write consecutive
 * triplets, 8 + 32 bytes each, so a warp's stores are whole lines.  Each thread computes
 * its face's edges again (9 times a face: arithmetic, not traffic).  A first version
 * took a face a thread and wrote its 9 triplets, 288 bytes apart from its neighbour's:
 * 1.4 ms at 1M vertices (H200), 0.7 TB/s. */
__global__ void spin_triplets_kernel(int nf, const double *__restrict__ v, const int *__restrict__ f,
                                     const double *__restrict__ rho, int *__restrict__ row, int *__restrict__ col,
                                     q4 *__restrict__ val)
{
    const long long nt = 9LL * nf;
    for (long long k = blockIdx.x * (long long)blockDim.x + threadIdx.x; k < nt; k += (long long)gridDim.x * blockDim.x) {
        const int t = (int)(k / 9), ij = (int)(k - 9LL * t), i = ij / 3, j = ij - 3 * i;
        const int c[3] = {__ldg(f + 3 * t), __ldg(f + 3 * t + 1), __ldg(f + 3 * t + 2)};
        const quat q = spin_face_block(v, c, __ldg(rho + t), i, j);
        row[k] = c[i];
        col[k] = c[j];
        val[k] = q4{q.w, q.x, q.y, q.z};
    }
}

double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

} // namespace

extern "C" sps_status spin_assemble_cuda(sps_context ctx, const spin_mesh *m, const double *rho, sps_matrix *E,
                                         double *t_build, char *err, size_t len)
{
    *E = NULL;
    cudaStream_t s = (cudaStream_t)sps_context_cuda_stream(ctx);
    const size_t nv = (size_t)m->nv, nf = (size_t)m->nf, nt = 9 * nf;
    double *dv = NULL, *drho = NULL, *dval = NULL;
    int *df = NULL, *drow = NULL, *dcol = NULL;
    sps_status st = SPS_OK;
    const char *what = "allocating the mesh and triplets";
    cudaError_t e = cudaMallocAsync((void **)&dv, 3 * nv * sizeof *dv, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&df, 3 * nf * sizeof *df, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&drho, nf * sizeof *drho, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&drow, nt * sizeof *drow, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dcol, nt * sizeof *dcol, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&dval, 4 * nt * sizeof *dval, s);
    if (e == cudaSuccess) {
        what = "uploading the mesh";
        e = cudaMemcpyAsync(dv, m->v, 3 * nv * sizeof *dv, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(df, m->f, 3 * nf * sizeof *df, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaMemcpyAsync(drho, rho, nf * sizeof *drho, cudaMemcpyHostToDevice, s);
        if (e == cudaSuccess) e = cudaStreamSynchronize(s); /* the build's time starts with the mesh on the device */
    }
    const double t0 = wall();
    if (e == cudaSuccess && nf > 0) {
        what = "the triplet kernel";
        const int threads = 256;
        const size_t want = (nt + threads - 1) / threads;
        spin_triplets_kernel<<<(unsigned)(want < 65535 * 32 ? want : 65535 * 32), threads, 0, s>>>(
            m->nf, dv, df, drho, drow, dcol, (q4 *)dval);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        st = sps_matrix_from_coo_entries_device(ctx, m->nv, m->nv, (int64_t)nt, drow, dcol, dval,
                                                sps_entry_quaternion(), SPS_F64, E);
    if (e == cudaSuccess && st == SPS_OK) e = cudaStreamSynchronize(s);
    *t_build = wall() - t0;
    if (e != cudaSuccess) {
        snprintf(err, len, "GPU assembly of E: %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
        st = SPS_ERR_DEVICE;
    }
    void *bufs[6] = {dv, df, drho, drow, dcol, dval};
    for (int i = 0; i < 6; i++)
        if (bufs[i]) (void)cudaFreeAsync(bufs[i], s);
    (void)cudaGetLastError();
    if (st != SPS_OK) {
        sps_matrix_destroy(*E);
        *E = NULL;
    }
    return st;
}
