/* CUDA block-Jacobi kernels (kernels/kernels.h bj_invert, bj_apply; the CPU
 * reference: kernels/cpu/bjacobi.inc).
 *
 * bj_invert: a warp a block (one warp per thread block, so a whole SM's shared
 * memory serves few warps: [B | I] of up to 32 x 32 in shared memory, 32 KB for
 * complex double).  Lane r owns row r: the pivot (largest |b_rk| at or below k,
 * ties to the smaller row, as the CPU) by a warp arg-max of shuffles, the row
 * swap and the pivot row's scaling column-parallel, the elimination row-parallel;
 * the same operations in the same order as the CPU's Gauss-Jordan, so the same
 * values up to fused multiply-adds; a pivot of at most sz eps max|b_ij| makes
 * the block singular, as there.  Singular blocks lower *bad by atomicMin
 * (their first row + 1), which starts above every row and is set to 0 at the end
 * when none was: a setup-time kernel, not tuned.
 * bj_apply: a thread a row, y_i = inv_k[r][:] . x[start_k ..]: consecutive threads
 * read consecutive rows of the stored inverses, so the inverse array streams
 * through once (the traffic: the inverses, x (gathers within a block hit the
 * L1) and y); x == y goes through a copy of x, since rows of one block read each
 * other's x.  Uniform blocks (bsz > 0) skip the per-row block metadata (row_blk,
 * start, off: 4 + 12/b bytes a row, 1/5 of the counted traffic at b = 3 f64),
 * which held the apply at 71 % of copy bandwidth on stencil27b3:100 (H200). */
#include "kernels/cuda/common.cuh"

#include <float.h>

namespace {
constexpr sps_index bj_none = 0x7f7f7f7f; /* *bad before any singular block: the memset's pattern */
/* The unit roundoff of T's real type. */
__device__ inline double bj_eps(float) { return FLT_EPSILON; }
__device__ inline double bj_eps(double) { return DBL_EPSILON; }
template <typename R> __device__ inline double bj_eps(cx<R>) { return bj_eps(R()); }

template <typename T>
__global__ void __launch_bounds__(32) bj_invert_kernel(sps_index nb, const sps_index *__restrict__ start,
                                                       const int64_t *__restrict__ off, T *__restrict__ blk,
                                                       sps_index *bad)
{
    extern __shared__ __align__(16) unsigned char bj_smem[];
    T *a = reinterpret_cast<T *>(bj_smem), *inv = a + SPS_BJ_MAX * SPS_BJ_MAX;
    const sps_index k0 = blockIdx.x;
    if (k0 >= nb) return;
    const int lane = threadIdx.x, sz = (int)(start[k0 + 1] - start[k0]);
    T *b = blk + off[k0];
    double amax2 = 0; /* max |b_ij|^2: a pivot of |p| <= sz eps max|b_ij| is singular, as the CPU */
    for (int i = lane; i < sz * sz; i += 32) {
        a[i] = b[i];
        inv[i] = (i / sz == i % sz) ? sc<T>::from(sps_cplx{1.0, 0.0}) : zero_of<T>();
        amax2 = fmax(amax2, abs2_r(a[i]));
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) amax2 = fmax(amax2, __shfl_xor_sync(0xffffffffu, amax2, o));
    const double eps = bj_eps(zero_of<T>()), tiny2 = amax2 * (sz * eps) * (sz * eps);
    __syncwarp();
    bool ok = true;
    for (int k = 0; k < sz && ok; k++) {
        /* arg-max of |a_rk| over r >= k, the smaller row on ties */
        double best = lane >= k && lane < sz ? abs2_r(a[lane * sz + k]) : -1.0;
        int p = lane;
#pragma unroll
        for (int o = 16; o > 0; o /= 2) {
            const double ob = __shfl_xor_sync(0xffffffffu, best, o);
            const int op = __shfl_xor_sync(0xffffffffu, p, o);
            if (ob > best || (ob == best && op < p)) {
                best = ob;
                p = op;
            }
        }
        if (!(best > tiny2)) {
            ok = false;
            break;
        }
        if (p != k && lane < sz) {
            T t = a[k * sz + lane];
            a[k * sz + lane] = a[p * sz + lane];
            a[p * sz + lane] = t;
            t = inv[k * sz + lane];
            inv[k * sz + lane] = inv[p * sz + lane];
            inv[p * sz + lane] = t;
        }
        __syncwarp();
        const T piv = recip(a[k * sz + k]);
        __syncwarp();
        if (lane < sz) {
            a[k * sz + lane] = a[k * sz + lane] * piv;
            inv[k * sz + lane] = inv[k * sz + lane] * piv;
        }
        __syncwarp();
        if (lane < sz && lane != k) {
            const T f = a[lane * sz + k];
            if (!is_zero(f))
                for (int c = 0; c < sz; c++) {
                    a[lane * sz + c] = a[lane * sz + c] - f * a[k * sz + c];
                    inv[lane * sz + c] = inv[lane * sz + c] - f * inv[k * sz + c];
                }
        }
        __syncwarp();
    }
    bool fin = true;
    for (int i = lane; ok && i < sz * sz; i += 32) fin = fin && finite_of(inv[i]);
    ok = ok && __all_sync(0xffffffffu, fin);
    if (!ok) {
        if (lane == 0) atomicMin(bad, start[k0] + 1);
        return;
    }
    for (int i = lane; i < sz * sz; i += 32) b[i] = inv[i];
}

__global__ void bj_bad_finish_kernel(sps_index *bad)
{
    if (*bad == bj_none) *bad = 0;
}

template <typename T> struct bj_apply_op {
    int bsz; /* > 0: every block has bsz rows, and the metadata is not read */
    const sps_index *row_blk, *start;
    const int64_t *off;
    const T *inv, *x;
    T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i)
    {
        sps_index s;
        int sz;
        const T *b;
        if (bsz > 0) { /* row i of block i / bsz: its inverse row is at i * bsz */
            sz = bsz;
            s = i - i % bsz;
            b = inv + (int64_t)i * bsz;
        } else {
            const sps_index k = row_blk[i];
            s = start[k];
            sz = (int)(start[k + 1] - s);
            b = inv + off[k] + (int64_t)(i - s) * sz;
        }
        T acc = zero_of<T>();
        for (int c = 0; c < sz; c++) acc = acc + ldg_t(b + c) * ldg_t(x + s + c);
        y[i] = acc;
    }
};

template <typename T>
static sps_status bj_invert_impl(sps_exec *ex, sps_index nb, const sps_index *start, const int64_t *off, void *blk,
                                 sps_index *bad)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(bad, 0x7f, sizeof *bad, s));
    if (nb > 0) {
        const size_t smem = 2 * (size_t)SPS_BJ_MAX * SPS_BJ_MAX * sizeof(T);
        bj_invert_kernel<T><<<(unsigned)nb, 32, smem, s>>>(nb, start, off, (T *)blk, bad);
        SPS_CU_LAUNCHED(ex, "bj_invert_kernel");
    }
    bj_bad_finish_kernel<<<1, 1, 0, s>>>(bad);
    SPS_CU_LAUNCHED(ex, "bj_bad_finish_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status bj_apply_impl(sps_exec *ex, sps_index n, int bsz, const sps_index *row_blk, const sps_index *start,
                                const int64_t *off, const void *inv, const void *x, void *y)
{
    if (n <= 0) return SPS_OK;
    const T *xs = (const T *)x;
    void *copy = NULL;
    if (x == y) { /* rows of a block read each other's x */
        SPS_CHECK(sps_exec_alloc(ex, &copy, (size_t)n * sizeof(T)));
        const cudaError_t e = cudaMemcpyAsync(copy, x, (size_t)n * sizeof(T), cudaMemcpyDeviceToDevice, sps_custream(ex));
        if (e != cudaSuccess) {
            sps_exec_release(ex, copy);
            return sps_cuda_fail(ex, e, "bj_apply: copy of x", __FILE__, __LINE__);
        }
        xs = (const T *)copy;
    }
    const sps_status st = sps_cuda_foreach(ex, n, bj_apply_op<T>{bsz, row_blk, start, off, (const T *)inv, xs, (T *)y});
    sps_exec_release(ex, copy);
    return st;
}
} // namespace

#define SPS_CU_BJ_ENTRIES(S, T)                                                                                   \
    extern "C" sps_status sps_cuda_bj_invert_##S(sps_exec *ex, sps_index nb, const sps_index *start,             \
                                                 const int64_t *off, void *blk, sps_index *bad)                  \
    { return bj_invert_impl<T>(ex, nb, start, off, blk, bad); }                                                   \
    extern "C" sps_status sps_cuda_bj_apply_##S(sps_exec *ex, sps_index n, int bsz, const sps_index *row_blk,    \
                                                const sps_index *start, const int64_t *off, const void *inv,     \
                                                const void *x, void *y)                                          \
    { return bj_apply_impl<T>(ex, n, bsz, row_blk, start, off, inv, x, y); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_BJ_ENTRIES)
