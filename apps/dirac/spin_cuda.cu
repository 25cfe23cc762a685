/* spsolve-spin on the GPU (spin.h spin_gpu_*): the mesh, its texture coordinates and the
 * image go up once, and every phase of the transformation runs there:
 *
 *   rho      one thread a face (spin_face_rho);
 *   E        row by row (apps/common/elem_rows.cuh): the pattern from vertex adjacency,
 *            then a thread a vertex walks its faces in face order and adds each face's
 *            blocks (spin_face_prep, spin_face_block_of) at its columns from -0.0;
 *   L, omega the same pattern (L couples exactly the vertices E does): a thread a vertex
 *            walks its faces' corners in the host's order (spin_corner_terms) and sums
 *            its row of L and its omega; omega's x, y, z go to three vectors for the
 *            Poisson solves.
 *
 * The arithmetic is the host's (spin_math.h, compiled with --fmad=false) and every sum
 * is the host's in its order, so rho, E, L and omega equal the host's bit for bit
 * (test_spin).  Why rows and not triplets: E's 9 nf triplets (40 bytes each) were
 * written, radix-sorted and gathered (2.9 ms of kernels, 23 SpMVs of E at 1M vertices on
 * an H100); the row owner writes each block once.  Everything is queued on the
 * context's stream (sps_context_cuda_stream), ordered with the library's work. */
#include "spin.h"
#include "spin_math.h"

#include "elem_rows.cuh"

#include <spsolve/cuda.h>

#include <cuda_runtime.h>
#include <new>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

struct spin_gpu {
    sps_context ctx;
    cudaStream_t s;
    int nv, nf, w, h;
    double *v = nullptr, *vt = nullptr, *rho = nullptr;
    int *f = nullptr, *ft = nullptr;
    unsigned char *pix = nullptr;
    elem_rows::rows R;
    bool have_rows = false;
    char *err;
    size_t len;
};

namespace {

struct alignas(32) q4 {
    double w, x, y, z;
};

__global__ void rho_kernel(int nf, const int *__restrict__ ft, const double *__restrict__ vt,
                           const unsigned char *__restrict__ pix, int w, int h, double scale, double *__restrict__ rho)
{
    for (int f = blockIdx.x * blockDim.x + threadIdx.x; f < nf; f += gridDim.x * blockDim.x)
        rho[f] = spin_face_rho(ft, vt, pix, w, h, scale, f);
}

/* E's block row of vertex a: its faces in face order, each face prepared once (edges, area,
 * coefficients: spin_face_prep) and its blocks (k, j) for its corner k at a (twice for a
 * face that repeats a) added at their columns, the row started at -0.0.  H100, 1M vertices:
 * 0.44 ms with the row in registers; summed in memory (a binary search and a 32-byte
 * read-modify-write a block) the values took 1.72 ms.  Earlier, H200 build wall times:
 * computing each block from the positions (spin_face_block, 3x the square roots and
 * divisions) 3.4-4.4 ms; faces prepared by a kernel of their own into a 96-byte-a-face
 * array 3.4-4.3 ms (one more pass and allocation). */
/* Rows of at most E_ROW_CAP blocks (a triangle mesh's vertex: valence + 1, 7 on a regular
 * mesh) keep their sums in registers: static indices, the column matched by an unrolled
 * compare, each block stored once; longer rows sum in memory. */
#define E_ROW_CAP 8
__global__ void __launch_bounds__(128)
    e_rows_kernel(int nv, const double *__restrict__ v, const int *__restrict__ f, const double *__restrict__ rho,
                  const int *__restrict__ inc, const int *__restrict__ ptr, const int *__restrict__ rowptr,
                  const int *__restrict__ col, q4 *__restrict__ val)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x) {
        const int r0 = rowptr[a], r1 = rowptr[a + 1];
        if (r1 - r0 <= E_ROW_CAP) {
            int cj[E_ROW_CAP];
            double aw[E_ROW_CAP], ax[E_ROW_CAP], ay[E_ROW_CAP], az[E_ROW_CAP];
#pragma unroll
            for (int j = 0; j < E_ROW_CAP; j++) {
                cj[j] = r0 + j < r1 ? __ldg(col + r0 + j) : -1;
                aw[j] = ax[j] = ay[j] = az[j] = -0.0;
            }
            for (int p = ptr[a]; p < ptr[a + 1]; p++) {
                const int t = inc[p] / 3, k = inc[p] - 3 * t;
                int c[3];
                elem_rows::corners<3>(f, t, c);
                const spin_face F = spin_face_prep(v, c, __ldg(rho + t));
                for (int i = 0; i < 3; i++) {
                    const quat q = spin_face_block_of(&F, k, i);
#pragma unroll
                    for (int j = 0; j < E_ROW_CAP; j++)
                        if (cj[j] == c[i]) aw[j] += q.w, ax[j] += q.x, ay[j] += q.y, az[j] += q.z;
                }
            }
#pragma unroll
            for (int j = 0; j < E_ROW_CAP; j++)
                if (r0 + j < r1) val[r0 + j] = q4{aw[j], ax[j], ay[j], az[j]};
            continue;
        }
        for (int j = r0; j < r1; j++) val[j] = q4{-0.0, -0.0, -0.0, -0.0};
        for (int p = ptr[a]; p < ptr[a + 1]; p++) {
            const int t = inc[p] / 3, k = inc[p] - 3 * t;
            int c[3];
            elem_rows::corners<3>(f, t, c);
            const spin_face F = spin_face_prep(v, c, __ldg(rho + t));
            for (int i = 0; i < 3; i++) {
                const quat q = spin_face_block_of(&F, k, i);
                q4 &o = val[elem_rows::find(col, r0, r1, c[i])];
                o.w += q.w, o.x += q.x, o.y += q.y, o.z += q.z;
            }
        }
    }
}

/* L's row and omega of vertex a: its faces in face order, each face's corners c = 0..2 and
 * their four L triplets in the host's order (spin_corner_terms), the ones in row a added;
 * omega from +0.0 as the host's calloc'd array; its x, y, z into comp[0..2] */
__global__ void poisson_rows_kernel(int nv, const double *__restrict__ v, const int *__restrict__ f,
                                    const double *__restrict__ lam, const int *__restrict__ inc,
                                    const int *__restrict__ ptr, const int *__restrict__ rowptr,
                                    const int *__restrict__ col, double *__restrict__ lval, q4 *__restrict__ om,
                                    double *__restrict__ cx, double *__restrict__ cy, double *__restrict__ cz)
{
    for (int a = blockIdx.x * blockDim.x + threadIdx.x; a < nv; a += gridDim.x * blockDim.x) {
        const int r0 = rowptr[a], r1 = rowptr[a + 1];
        for (int j = r0; j < r1; j++) lval[j] = -0.0;
        quat o = qmake(0.0, 0.0, 0.0, 0.0);
        int last = -1;
        for (int p = ptr[a]; p < ptr[a + 1]; p++) {
            const int t = inc[p] / 3;
            if (t == last) continue; /* a face that repeats a: its corners are walked once, all of them */
            last = t;
            int vi[3];
            elem_rows::corners<3>(f, t, vi);
            for (int c = 0; c < 3; c++) {
                const spin_corner k = spin_corner_terms(v, lam, vi, c);
                const int pr[4][2] = {{k.i1, k.i1}, {k.i2, k.i2}, {k.i1, k.i2}, {k.i2, k.i1}};
                const double pv[4] = {k.h, k.h, -k.h, -k.h};
                for (int q = 0; q < 4; q++)
                    if (pr[q][0] == a) lval[elem_rows::find(col, r0, r1, pr[q][1])] += pv[q];
                if (k.a == a) o = qmake(o.w - k.h * k.et.w, o.x - k.h * k.et.x, o.y - k.h * k.et.y, o.z - k.h * k.et.z);
                if (k.b == a) o = qmake(o.w + k.h * k.et.w, o.x + k.h * k.et.x, o.y + k.h * k.et.y, o.z + k.h * k.et.z);
            }
        }
        if (om) om[a] = q4{o.w, o.x, o.y, o.z};
        cx[a] = o.x, cy[a] = o.y, cz[a] = o.z;
    }
}

unsigned grid_for(long long n, int threads)
{
    const long long g = (n + threads - 1) / threads;
    return (unsigned)(g < 1 ? 1 : g > 65535LL * 32 ? 65535LL * 32 : g);
}

double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* err := "GPU <what>: <CUDA error>"; the status for it */
sps_status fail(spin_gpu *g, const char *what, cudaError_t e)
{
    snprintf(g->err, g->len, "GPU %s: %s (%s)", what, cudaGetErrorName(e), cudaGetErrorString(e));
    (void)cudaGetLastError();
    return e == cudaErrorMemoryAllocation ? SPS_ERR_ALLOC : SPS_ERR_DEVICE;
}

/* the vertex adjacency, once (E and L share it) */
cudaError_t rows(spin_gpu *g, const char **what)
{
    if (g->have_rows) return cudaSuccess;
    const cudaError_t e = elem_rows::build<3>(g->s, g->nv, g->nf, g->f, &g->R, what);
    g->have_rows = e == cudaSuccess;
    return e;
}

} // namespace

extern "C" sps_status spin_gpu_create(sps_context ctx, const spin_mesh *m, const spin_image *im, spin_gpu **out,
                                      char *err, size_t len)
{
    *out = NULL;
    spin_gpu *g = new (std::nothrow) spin_gpu;
    if (!g) {
        snprintf(err, len, "out of host memory");
        return SPS_ERR_ALLOC;
    }
    g->ctx = ctx;
    g->s = (cudaStream_t)sps_context_cuda_stream(ctx);
    g->nv = m->nv, g->nf = m->nf, g->w = im ? im->w : 0, g->h = im ? im->h : 0;
    g->err = err, g->len = len;
    const size_t nv = (size_t)m->nv, nf = (size_t)m->nf, nvt = (size_t)m->nvt, np = (size_t)g->w * (size_t)g->h;
    cudaStream_t s = g->s;
    /* The phases allocate and free their scratch on the stream (cudaMallocAsync from the device's
     * default pool); with the pool's default release threshold (0) every synchronisation hands
     * the freed memory back to the driver and the next phase's allocations take it again.  Keep
     * it in the pool instead (the app's process, its choice): E's build waits on its pattern's
     * size once, and its values then reuse the pattern's scratch. */
    int dev = 0;
    cudaMemPool_t pool;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) {
        unsigned long long keep = ~0ull;
        (void)cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
    }
    (void)cudaGetLastError();
    cudaError_t e = cudaMallocAsync((void **)&g->v, 3 * nv * sizeof(double) + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&g->f, 3 * nf * sizeof(int) + 16, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&g->ft, 3 * nf * sizeof(int) + 16, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&g->vt, 2 * nvt * sizeof(double) + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&g->pix, np + 8, s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&g->rho, nf * sizeof(double) + 8, s);
    if (e == cudaSuccess) e = cudaMemcpyAsync(g->v, m->v, 3 * nv * sizeof(double), cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = cudaMemcpyAsync(g->f, m->f, 3 * nf * sizeof(int), cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = cudaMemcpyAsync(g->ft, m->ft, 3 * nf * sizeof(int), cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess && nvt) e = cudaMemcpyAsync(g->vt, m->vt, 2 * nvt * sizeof(double), cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess && np) e = cudaMemcpyAsync(g->pix, im->pix, np, cudaMemcpyHostToDevice, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        const sps_status st = fail(g, "upload of the mesh and the image", e);
        spin_gpu_destroy(g);
        return st;
    }
    *out = g;
    return SPS_OK;
}

extern "C" void spin_gpu_destroy(spin_gpu *g)
{
    if (!g) return;
    elem_rows::release(g->s, &g->R);
    void *b[6] = {g->v, g->vt, g->rho, g->f, g->ft, g->pix};
    for (int i = 0; i < 6; i++)
        if (b[i]) (void)cudaFreeAsync(b[i], g->s);
    (void)cudaGetLastError();
    delete g;
}

extern "C" sps_status spin_gpu_rho(spin_gpu *g, double scale, double *rho)
{
    cudaError_t e = cudaSuccess;
    if (g->nf > 0) {
        rho_kernel<<<grid_for(g->nf, 256), 256, 0, g->s>>>(g->nf, g->ft, g->vt, g->pix, g->w, g->h, scale, g->rho);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && rho)
        e = cudaMemcpyAsync(rho, g->rho, (size_t)g->nf * sizeof(double), cudaMemcpyDeviceToHost, g->s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(g->s);
    return e == cudaSuccess ? SPS_OK : fail(g, "rho", e);
}

extern "C" sps_status spin_gpu_assemble(spin_gpu *g, sps_matrix *E, double *t_build, double *parts)
{
    *E = NULL;
    const double t0 = wall();
    const char *what = "assembly of E";
    q4 *val = NULL;
    /* events between the steps, read after the final synchronisation (none added) */
    cudaEvent_t ev[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; parts && i < 4; i++)
        if (cudaEventCreate(&ev[i]) != cudaSuccess) ev[i] = NULL;
    if (ev[0]) (void)cudaEventRecord(ev[0], g->s);
    cudaError_t e = rows(g, &what);
    if (ev[1]) (void)cudaEventRecord(ev[1], g->s);
    if (e == cudaSuccess) e = cudaMallocAsync((void **)&val, (size_t)g->R.nnz * sizeof(q4) + 32, g->s);
    if (e == cudaSuccess && g->nv > 0) {
        what = "assembly of E: the row kernel";
        e_rows_kernel<<<grid_for(g->nv, 128), 128, 0, g->s>>>(g->nv, g->v, g->f, g->rho, g->R.inc, g->R.ptr,
                                                             g->R.rowptr, g->R.col, val);
        e = cudaGetLastError();
    }
    if (ev[2]) (void)cudaEventRecord(ev[2], g->s);
    sps_status st = e == cudaSuccess ? sps_matrix_from_csr_entries_device(g->ctx, g->nv, g->nv, g->R.nnz, g->R.rowptr,
                                                                          g->R.col, val, sps_entry_quaternion(),
                                                                          SPS_F64, E)
                                     : fail(g, what, e);
    if (ev[3]) (void)cudaEventRecord(ev[3], g->s);
    if (st == SPS_OK && (e = cudaStreamSynchronize(g->s)) != cudaSuccess) st = fail(g, what, e);
    if (val) (void)cudaFreeAsync(val, g->s);
    *t_build = wall() - t0;
    for (int i = 0; parts && i < 3; i++) {
        float ms = 0;
        parts[i] = st == SPS_OK && ev[i] && ev[i + 1] && cudaEventElapsedTime(&ms, ev[i], ev[i + 1]) == cudaSuccess
                       ? 1e-3 * ms
                       : 0.0;
    }
    for (int i = 0; i < 4; i++)
        if (ev[i]) (void)cudaEventDestroy(ev[i]);
    (void)cudaGetLastError();
    if (st != SPS_OK) {
        sps_matrix_destroy(*E);
        *E = NULL;
    }
    return st;
}

extern "C" sps_status spin_gpu_poisson(spin_gpu *g, const double *lam, sps_matrix *L, sps_vector comp[3], double *om)
{
    *L = NULL;
    comp[0] = comp[1] = comp[2] = NULL;
    const char *what = "Laplacian and omega";
    double *lval = NULL;
    q4 *dom = NULL;
    sps_status st = SPS_OK;
    for (int q = 0; q < 3 && st == SPS_OK; q++) st = sps_vector_create(g->ctx, g->nv, SPS_F64, &comp[q]);
    cudaError_t e = cudaSuccess;
    if (st == SPS_OK) e = rows(g, &what);
    if (st == SPS_OK && e == cudaSuccess)
        e = cudaMallocAsync((void **)&lval, (size_t)g->R.nnz * sizeof(double) + 8, g->s);
    if (st == SPS_OK && e == cudaSuccess && om) e = cudaMallocAsync((void **)&dom, (size_t)g->nv * sizeof(q4), g->s);
    if (st == SPS_OK && e == cudaSuccess && g->nv > 0) {
        what = "Laplacian and omega: the row kernel";
        poisson_rows_kernel<<<grid_for(g->nv, 128), 128, 0, g->s>>>(
            g->nv, g->v, g->f, lam, g->R.inc, g->R.ptr, g->R.rowptr, g->R.col, lval, dom,
            (double *)sps_vector_data(comp[0]), (double *)sps_vector_data(comp[1]), (double *)sps_vector_data(comp[2]));
        e = cudaGetLastError();
    }
    if (st == SPS_OK && e == cudaSuccess && om)
        e = cudaMemcpyAsync(om, dom, (size_t)g->nv * sizeof(q4), cudaMemcpyDeviceToHost, g->s);
    if (st == SPS_OK && e == cudaSuccess)
        st = sps_matrix_from_csr_entries_device(g->ctx, g->nv, g->nv, g->R.nnz, g->R.rowptr, g->R.col, lval,
                                                sps_entry_scalar(), SPS_F64, L);
    if (st == SPS_OK && e == cudaSuccess) e = cudaStreamSynchronize(g->s);
    if (e != cudaSuccess) st = fail(g, what, e);
    if (lval) (void)cudaFreeAsync(lval, g->s);
    if (dom) (void)cudaFreeAsync(dom, g->s);
    if (st != SPS_OK) {
        sps_matrix_destroy(*L);
        *L = NULL;
        for (int q = 0; q < 3; q++) sps_vector_destroy(comp[q]), comp[q] = NULL;
    }
    return st;
}
