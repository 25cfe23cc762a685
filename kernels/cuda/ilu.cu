/* CUDA ILU(0) / IC(0) apply (kernels/kernels.h ilu_apply; the CPU reference:
 * kernels/cpu/ilu.inc).
 *
 * Exact: the substitutions level by level (the levels of L, then of U, computed
 * from the pattern at the preconditioner's symbolic step), a launch a level, a
 * thread a row of the level: every row a level reads was written by an earlier
 * launch.  Latency-bound: the launches are the cost (a 7-point grid in natural
 * order has nx + ny + nz - 2 levels a factor); capturable (no host round trips).
 * Sweeps: K launches a factor, a thread a row reading the previous iterate (the
 * CPU's order of sums within a row, so equal to it up to fused multiply-adds):
 * each sweep costs about an SpMV of that factor. */
#include "kernels/cuda/common.cuh"

namespace {
/* y_i = r_i - sum_{k < i} L_ik y_k for the rows of one level (or, sweep: y_new from y_old) */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    ilu_lower_kernel(sps_index cnt, const sps_index *__restrict__ rows, const sps_index *__restrict__ rowptr,
                     const sps_index *__restrict__ col, const T *__restrict__ val, const sps_index *__restrict__ diag,
                     const T *__restrict__ r, const T *yin, T *yout)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= cnt) return;
    const sps_index i = rows ? rows[t] : (sps_index)t;
    T s = r[i];
    for (sps_index e = rowptr[i]; e < diag[i]; e++) s = s - val[e] * yin[col[e]];
    yout[i] = s;
}

/* z_i = (y_i - sum_{j > i} U_ij z_j) / U_ii for the rows of one level (or a sweep);
 * init: z_i = y_i / U_ii (the sweeps' start) */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    ilu_upper_kernel(sps_index cnt, const sps_index *__restrict__ rows, const sps_index *__restrict__ rowptr,
                     const sps_index *__restrict__ col, const T *__restrict__ val, const sps_index *__restrict__ diag,
                     const T *__restrict__ y, const T *zin, T *zout, int init)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= cnt) return;
    const sps_index i = rows ? rows[t] : (sps_index)t;
    T s = y[i];
    if (!init)
        for (sps_index e = diag[i] + 1; e < rowptr[i + 1]; e++) s = s - val[e] * zin[col[e]];
    zout[i] = s * recip(val[diag[i]]);
}

static unsigned ilu_grid(int64_t cnt) { return (unsigned)((cnt + SPS_CU_THREADS - 1) / SPS_CU_THREADS); }

template <typename T>
static sps_status ilu_apply_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col,
                                 const void *valv, const sps_index *diag, sps_index nl, sps_index nu,
                                 const sps_index *lvl_ptr, const sps_index *lvl_rows, int sweeps, const void *rv,
                                 void *zv, void *workv)
{
    if (n <= 0) return SPS_OK;
    cudaStream_t st = sps_custream(ex);
    const T *val = (const T *)valv, *r = (const T *)rv;
    T *z = (T *)zv, *y = (T *)workv, *a = y + n, *b = a + n;
    if (sweeps <= 0) { /* level by level: y = L^{-1} r, then z = U^{-1} y (z may be r: r is read first) */
        for (sps_index l = 0; l < nl; l++) {
            const sps_index cnt = lvl_ptr[l + 1] - lvl_ptr[l];
            ilu_lower_kernel<T><<<ilu_grid(cnt), SPS_CU_THREADS, 0, st>>>(cnt, lvl_rows + lvl_ptr[l], rowptr, col,
                                                                          val, diag, r, y, y);
            SPS_CU_LAUNCHED(ex, "ilu_lower_kernel");
        }
        for (sps_index l = nl; l < nl + nu; l++) {
            const sps_index cnt = lvl_ptr[l + 1] - lvl_ptr[l];
            ilu_upper_kernel<T><<<ilu_grid(cnt), SPS_CU_THREADS, 0, st>>>(cnt, lvl_rows + lvl_ptr[l], rowptr, col,
                                                                          val, diag, y, z, z, 0);
            SPS_CU_LAUNCHED(ex, "ilu_upper_kernel");
        }
        return SPS_OK;
    }
    SPS_CU(ex, cudaMemcpyAsync(a, r, (size_t)n * sizeof(T), cudaMemcpyDeviceToDevice, st));
    for (int m = 0; m < sweeps; m++) {
        ilu_lower_kernel<T><<<ilu_grid(n), SPS_CU_THREADS, 0, st>>>(n, NULL, rowptr, col, val, diag, r, a, b);
        SPS_CU_LAUNCHED(ex, "ilu_lower_kernel");
        T *t = a;
        a = b;
        b = t;
    }
    SPS_CU(ex, cudaMemcpyAsync(y, a, (size_t)n * sizeof(T), cudaMemcpyDeviceToDevice, st));
    ilu_upper_kernel<T><<<ilu_grid(n), SPS_CU_THREADS, 0, st>>>(n, NULL, rowptr, col, val, diag, y, y, a, 1);
    SPS_CU_LAUNCHED(ex, "ilu_upper_kernel");
    for (int m = 0; m < sweeps; m++) {
        ilu_upper_kernel<T><<<ilu_grid(n), SPS_CU_THREADS, 0, st>>>(n, NULL, rowptr, col, val, diag, y, a, b, 0);
        SPS_CU_LAUNCHED(ex, "ilu_upper_kernel");
        T *t = a;
        a = b;
        b = t;
    }
    SPS_CU(ex, cudaMemcpyAsync(z, a, (size_t)n * sizeof(T), cudaMemcpyDeviceToDevice, st));
    return SPS_OK;
}
} // namespace

#define SPS_CU_ILU_ENTRIES(S, T)                                                                                  \
    extern "C" sps_status sps_cuda_ilu_apply_##S(sps_exec *ex, sps_index n, const sps_index *rowptr,             \
                                                 const sps_index *col, const void *val, const sps_index *diag,   \
                                                 sps_index nl, sps_index nu, const sps_index *lvl_ptr,          \
                                                 const sps_index *lvl_rows, int sweeps, const void *r, void *z,  \
                                                 void *work)                                                     \
    { return ilu_apply_impl<T>(ex, n, rowptr, col, val, diag, nl, nu, lvl_ptr, lvl_rows, sweeps, r, z, work); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_ILU_ENTRIES)
