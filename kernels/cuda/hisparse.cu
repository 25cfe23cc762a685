/* CUDA product of the HiSparse tree (the layout and the schedule:
 * kernels/format_kernels_hisparse.h; the format: formats/hisparse.c; the CPU
 * reference: kernels/cpu/hisparse.inc, FN(hs_spmv), the same items in order).
 *
 * hs_sparse_kernel: a warp a packed work item of at most 32 entries (runs of sparse
 *   leaves' entries, several small leaves to a warp), a thread an entry: every
 *   thread has one entry's work, whatever the leaves' sizes (the paper's work per
 *   thread evened out by binning; here the packing is done at construction, so the
 *   kernel needs no queue).  The lanes place the warp's segments by a scan of their
 *   counts (a bitmask of the segments' starts names each entry's segment), then each
 *   loads its packed (row, column) bytes and its value, gathers x, and the lanes
 *   with the same output in a row (a leaf's row for A x, its entries being
 *   row-major; mostly single entries for A^T x, the coordinates swapped) are summed
 *   by a segmented shuffle sum, one atomicAdd a run.
 * hs_dense_kernel: a block a dense leaf, a warp a row (a column for A^T), lanes
 *   over the d slots of it that the occupancy bitmask marks, a shuffle tree, one
 *   atomicAdd a row that has an entry.
 * Neither is bit-reproducible run to run (the atomics' order); every entry is used
 * once, so the result equals the CPU's to rounding. */
#include "kernels/cuda/common.cuh"

namespace {

constexpr int HS_WARPS = 8; /* warps a block: 256 threads */

template <typename T, bool TR>
__global__ void __launch_bounds__(HS_WARPS * 32)
    hs_sparse_kernel(sps_hs_sched H, T a, const T *__restrict__ x, T *__restrict__ y)
{
    const int64_t w = (int64_t)blockIdx.x * HS_WARPS + threadIdx.x / 32;
    if (w >= H.nwarps) return; /* uniform within the warp */
    const int lane = (int)(threadIdx.x & 31);
    /* lane l < nseg reads segment l; an exclusive scan of the counts places it */
    const int64_t s0 = H.warp_seg[w];
    const int nseg = (int)(H.warp_seg[w + 1] - s0);
    sps_hs_item it = {0, 0, 0, 0, 0};
    if (lane < nseg) it = H.sparse[s0 + lane];
    int start = it.count;
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
        const int t = __shfl_up_sync(0xffffffffu, start, o);
        if (lane >= o) start += t;
    }
    const int total = __shfl_sync(0xffffffffu, start, 31);
    start -= it.count;
    /* entry e = lane of the warp: its segment is the number of segment starts at or before
       e, less one (a bit a start: the segments are non-empty, so the starts are distinct);
       its fields come from the lane that read it */
    unsigned starts = lane < nseg ? 1u << start : 0u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    starts = __reduce_or_sync(0xffffffffu, starts);
#else
#pragma unroll
    for (int o = 16; o > 0; o /= 2) starts |= __shfl_xor_sync(0xffffffffu, starts, o);
#endif
    const bool mine = lane < total;
    const int g = mine ? __popc(starts & (0xffffffffu >> (31 - lane))) - 1 : 0;
    const uint32_t ref = __shfl_sync(0xffffffffu, it.ref, g);
    const sps_index r0 = __shfl_sync(0xffffffffu, it.r0, g), c0 = __shfl_sync(0xffffffffu, it.c0, g);
    const int k = __shfl_sync(0xffffffffu, (int)it.first - start, g) + lane;
    sps_index out = -1 - lane; /* distinct for the idle lanes */
    T s = zero_of<T>();
    if (mine) {
        const unsigned char *p = H.pool + SPS_HS_OFF(ref);
        const uint32_t count = *(const uint32_t *)(const void *)p;
        const int type = SPS_HS_TYPE(ref);
        const T *v = (const T *)(const void *)(p + sps_hs_val_at(type, sps_hs_pad(type, count), sizeof(T)));
        const sps_index r = r0 + p[4 + 2 * k], c = c0 + p[5 + 2 * k];
        out = TR ? c : r;
        s = v[k] * ldg_t(x + (TR ? r : c));
    }
    /* runs of equal outputs in consecutive lanes (a leaf's row for A x; mostly single
       entries for A^T x): run ids from the heads, a segmented suffix sum over them, one
       atomicAdd a run by its head */
    const sps_index prev = __shfl_up_sync(0xffffffffu, out, 1);
    const bool head = lane == 0 || prev != out;
    const unsigned heads = __ballot_sync(0xffffffffu, head);
    const int run = __popc(heads & (0xffffffffu >> (31 - lane)));
#pragma unroll
    for (int o = 1; o < 32; o *= 2) {
        const T t = shfl_down(0xffffffffu, s, o, 32);
        const int rt = __shfl_down_sync(0xffffffffu, run, o);
        if (lane + o < 32 && rt == run) s = s + t;
    }
    if (mine && head) atomic_add(y + out, a * s);
}

template <typename T, bool TR>
__global__ void __launch_bounds__(HS_WARPS * 32)
    hs_dense_kernel(sps_hs_sched H, T a, const T *__restrict__ x, T *__restrict__ y)
{
    const sps_hs_item it = H.dense[blockIdx.x];
    const unsigned char *p = H.pool + SPS_HS_OFF(it.ref);
    const int d = H.d, lane = (int)(threadIdx.x & 31);
    const T *v = (const T *)(const void *)(p + sps_hs_dense_val_at(d));
    const sps_index in0 = TR ? it.r0 : it.c0, out0 = TR ? it.c0 : it.r0;
    for (int i = (int)(threadIdx.x / 32); i < d; i += HS_WARPS) { /* uniform within the warp */
        T s = zero_of<T>();
        bool any = false;
        for (int j = lane; j < d; j += 32) {
            const size_t slot = TR ? (size_t)j * d + i : (size_t)i * d + j;
            if (p[slot >> 3] >> (slot & 7) & 1) {
                s = s + v[slot] * ldg_t(x + in0 + j);
                any = true;
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o /= 2) s = s + shfl_down(0xffffffffu, s, o, 32);
        /* a row past the matrix's edge has no entry: no write there */
        if (__any_sync(0xffffffffu, any) && lane == 0) atomic_add(y + out0 + i, a * s);
    }
}

template <typename T, bool TR> static sps_status hs_launch(sps_exec *ex, const sps_hs_sched &H, T a, const T *x, T *y)
{
    cudaStream_t st = sps_custream(ex);
    if (H.nwarps > 0) {
        const int64_t grid = (H.nwarps + HS_WARPS - 1) / HS_WARPS;
        if (grid > INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "hisparse: %lld warps of work", (long long)H.nwarps);
        hs_sparse_kernel<T, TR><<<(unsigned)grid, HS_WARPS * 32, 0, st>>>(H, a, x, y);
        SPS_CU_LAUNCHED(ex, "hs_sparse_kernel");
    }
    if (H.ndense > 0) {
        if (H.ndense > INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "hisparse: %lld dense leaves", (long long)H.ndense);
        hs_dense_kernel<T, TR><<<(unsigned)H.ndense, HS_WARPS * 32, 0, st>>>(H, a, x, y);
        SPS_CU_LAUNCHED(ex, "hs_dense_kernel");
    }
    return SPS_OK;
}

template <typename T>
static sps_status hs_spmv_impl(sps_exec *ex, sps_hs_sched H, sps_cplx a, const void *x, void *y, int trans)
{
    return (trans ? hs_launch<T, true> : hs_launch<T, false>)(ex, H, sc<T>::from(a), (const T *)x, (T *)y);
}

/* the addition's values: a thread a distinct key, alpha a + beta b over its one or two
 * members (the CPU's FN(hisparse_lin); the GPU may contract the sum into an fma: the same to
 * rounding, not to the bit) */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    hs_add_values_kernel(sps_index nu, const sps_index *ustart, const uint64_t *src, const unsigned char *poolA,
                         const unsigned char *poolB, T al, T be, T *out)
{
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index u = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); u < nu; u += stride) {
        const T *a = NULL, *b = NULL;
        for (sps_index e = ustart[u]; e < ustart[u + 1]; e++) {
            const uint64_t s = src[e];
            if (s & SPS_HS_TAG_B) b = (const T *)(const void *)(poolB + (s & ~SPS_HS_TAG_B));
            else a = (const T *)(const void *)(poolA + s);
        }
        out[u] = a && b ? al * *a + be * *b : a ? al * *a : be * *b;
    }
}

template <typename T>
static sps_status hs_add_values_impl(sps_exec *ex, sps_index nu, const sps_index *ustart, const uint64_t *src,
                                     const unsigned char *poolA, const unsigned char *poolB, sps_cplx alpha,
                                     sps_cplx beta, void *out)
{
    if (nu <= 0) return SPS_OK;
    hs_add_values_kernel<T><<<sps_cu_grid(ex, nu), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        nu, ustart, src, poolA, poolB, sc<T>::from(alpha), sc<T>::from(beta), (T *)out);
    SPS_CU_LAUNCHED(ex, "hs_add_values_kernel");
    return SPS_OK;
}

} // namespace

#define SPS_CU_HS_ENTRIES(S, T)                                                                                \
    SPS_CU_ENTRY(hs_spmv, S, hs_spmv_impl<T>,                                                                  \
                 (sps_exec * ex, sps_hs_sched H, sps_cplx a, const void *x, void *y, int trans),             \
                 (ex, H, a, x, y, trans))                                                                     \
    SPS_CU_ENTRY(hs_add_values, S, hs_add_values_impl<T>,                                                      \
                 (sps_exec * ex, sps_index nu, const sps_index *ustart, const uint64_t *src,                  \
                  const unsigned char *poolA, const unsigned char *poolB, sps_cplx alpha, sps_cplx beta,      \
                  void *out),                                                                                  \
                 (ex, nu, ustart, src, poolA, poolB, alpha, beta, out))
SPS_CU_FOR_ALL_TYPES(SPS_CU_HS_ENTRIES)
