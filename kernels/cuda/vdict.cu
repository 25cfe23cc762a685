/* CUDA kernels of value dictionaries (kernels/format_kernels_vdict.h; the CPU's,
 * kernels/cpu/vdict.c, are the reference).
 *
 * Collect: a few blocks an SM, each a grid-stride pass that inserts its values
 * into a table of its own in shared memory, then its distinct values (at most
 * SPS_VDICT_MAX) into one table in global memory.  A stencil's 15M entries of
 * two values thus meet in shared memory (a broadcast read each), and the global
 * table sees a few hundred inserts a block, not one an entry.  A slot holds the
 * value's position in its dictionary, -1 while empty, -2 while its claimant
 * writes the value, -3 once the dictionary is full; the claimant takes the
 * position from the counter, writes the value, fences, then publishes the
 * position.  Past SPS_VDICT_MAX values every block stops at its next check of
 * the global counter: a matrix of random values costs a few thousand loads.
 * Which values arrive first depends on timing, so dict's order does too: the
 * host sorts it (formats/vdict.c) before encode.
 *
 * Encode: the sorted dictionary in shared memory, a binary search a value. */
#include "kernels/cuda/common.cuh"

namespace {

constexpr int VD_TABLE = 4 * SPS_VDICT_MAX;
constexpr int VD_THREADS = 256;
constexpr int VD_EMPTY = -1, VD_PENDING = -2, VD_FULL = -3;

/* A value as 32-bit words (W words of vsize / 4). */
template <int W> struct vd_word {
    uint32_t w[W];
};

template <int W> __device__ inline vd_word<W> vd_load_volatile(const vd_word<W> *p)
{
    vd_word<W> v;
    const volatile uint32_t *q = (const volatile uint32_t *)p->w;
#pragma unroll
    for (int i = 0; i < W; i++) v.w[i] = q[i];
    return v;
}

template <int W> __device__ inline void vd_store_volatile(vd_word<W> *p, const vd_word<W> &v)
{
    volatile uint32_t *q = (volatile uint32_t *)p->w;
#pragma unroll
    for (int i = 0; i < W; i++) q[i] = v.w[i];
}

template <int W> __device__ inline bool vd_eq(const vd_word<W> &a, const vd_word<W> &b)
{
    bool e = true;
#pragma unroll
    for (int i = 0; i < W; i++) e &= a.w[i] == b.w[i];
    return e;
}

template <int W> __device__ inline unsigned vd_hash(const vd_word<W> &v)
{
    uint32_t h = 0x811c9dc5u;
#pragma unroll
    for (int i = 0; i < W; i++) h = (h ^ v.w[i]) * 0x9e3779b1u;
    return (h >> 22) & (VD_TABLE - 1);
}

/* Insert v into the table tab (shared or global) of dictionary d and counter cnt;
 * false once the dictionary is full (v not in it). */
template <int W> __device__ bool vd_insert(int *tab, vd_word<W> *d, int *cnt, const vd_word<W> &v)
{
    unsigned h = vd_hash(v);
    for (;;) {
        int s = *(volatile int *)&tab[h];
        if (s == VD_EMPTY) {
            s = atomicCAS(&tab[h], VD_EMPTY, VD_PENDING);
            if (s == VD_EMPTY) {
                const int pos = atomicAdd(cnt, 1);
                if (pos >= SPS_VDICT_MAX) {
                    atomicExch(&tab[h], VD_FULL);
                    return false;
                }
                vd_store_volatile(&d[pos], v);
                __threadfence();
                atomicExch(&tab[h], pos);
                return true;
            }
        }
        while (s == VD_PENDING) s = *(volatile int *)&tab[h];
        if (s == VD_FULL) return false;
        __threadfence();
        if (vd_eq(vd_load_volatile(&d[s]), v)) return true;
        h = (h + 1) & (VD_TABLE - 1);
    }
}

template <int W>
__global__ void __launch_bounds__(VD_THREADS) vd_collect_kernel(const vd_word<W> *__restrict__ val, int64_t count,
                                                                 vd_word<W> *gdict, int *gtab, int *gcnt)
{
    __shared__ int stab[VD_TABLE];
    __shared__ vd_word<W> sdict[SPS_VDICT_MAX];
    __shared__ int scnt;
    for (int t = threadIdx.x; t < VD_TABLE; t += VD_THREADS) stab[t] = VD_EMPTY;
    if (threadIdx.x == 0) scnt = 0;
    __syncthreads();
    const int64_t stride = (int64_t)gridDim.x * VD_THREADS;
    int iter = 0;
    for (int64_t k = (int64_t)blockIdx.x * VD_THREADS + threadIdx.x; k < count; k += stride, iter++) {
        if ((iter & 31) == 0 && *(volatile int *)gcnt > SPS_VDICT_MAX) break; /* another block overflowed */
        if (!vd_insert(stab, sdict, &scnt, val[k])) {
            atomicMax(gcnt, SPS_VDICT_MAX + 1);
            break;
        }
    }
    __syncthreads();
    const int nl = scnt;
    if (nl > SPS_VDICT_MAX) return; /* full: gcnt says so already */
    for (int t = threadIdx.x; t < nl; t += VD_THREADS)
        if (!vd_insert(gtab, gdict, gcnt, sdict[t])) {
            atomicMax(gcnt, SPS_VDICT_MAX + 1);
            break;
        }
}

template <int W>
__global__ void __launch_bounds__(VD_THREADS) vd_encode_kernel(const vd_word<W> *__restrict__ val, int64_t count,
                                                                const vd_word<W> *__restrict__ dict, int nd,
                                                                uint8_t *__restrict__ idx)
{
    __shared__ vd_word<W> sd[SPS_VDICT_MAX];
    for (int t = threadIdx.x; t < nd; t += VD_THREADS) sd[t] = dict[t];
    __syncthreads();
    const int64_t stride = (int64_t)gridDim.x * VD_THREADS;
    for (int64_t k = (int64_t)blockIdx.x * VD_THREADS + threadIdx.x; k < count; k += stride) {
        const vd_word<W> e = val[k];
        int lo = 0, hi = nd - 1;
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (sps_vdict_cmp(sd[mid].w, e.w, 4 * W) < 0) lo = mid + 1;
            else hi = mid;
        }
        idx[k] = (uint8_t)lo;
    }
}

template <int W>
sps_status vd_collect(sps_exec *ex, const void *val, int64_t count, void *dict, int *cnt)
{
    cudaStream_t s = sps_custream(ex);
    SPS_CU(ex, cudaMemsetAsync(cnt, 0, sizeof *cnt, s));
    if (count <= 0) return SPS_OK;
    int *tab = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&tab, VD_TABLE * sizeof *tab)); /* the context's pool, stream-ordered */
    cudaError_t e = cudaMemsetAsync(tab, 0xff, VD_TABLE * sizeof *tab, s); /* VD_EMPTY */
    if (e == cudaSuccess) {
        /* two blocks an SM: each flushes its table once, so fewer blocks, fewer global inserts */
        int64_t g = (count + VD_THREADS - 1) / VD_THREADS;
        const int64_t cap = 2 * (int64_t)sps_cust(ex)->sms;
        g = g < cap ? g : cap;
        vd_collect_kernel<W><<<(unsigned)g, VD_THREADS, 0, s>>>((const vd_word<W> *)val, count, (vd_word<W> *)dict,
                                                                 tab, cnt);
        e = cudaGetLastError();
    }
    sps_cu_unstage(ex);
    sps_exec_release(ex, tab);
    if (e != cudaSuccess) return sps_cuda_fail(ex, e, "value dictionary (vd_collect_kernel)", __FILE__, __LINE__);
    return SPS_OK;
}

template <int W>
sps_status vd_encode(sps_exec *ex, const void *val, int64_t count, const void *dict, int nd, uint8_t *idx)
{
    if (count <= 0) return SPS_OK;
    vd_encode_kernel<W><<<sps_cu_grid(ex, count), VD_THREADS, 0, sps_custream(ex)>>>(
        (const vd_word<W> *)val, count, (const vd_word<W> *)dict, nd, idx);
    SPS_CU_LAUNCHED(ex, "vd_encode_kernel");
    return SPS_OK;
}

} // namespace

extern "C" sps_status sps_cuda_vdict_collect(sps_exec *ex, const void *val, int64_t count, int vsize, void *dict,
                                             int *cnt)
{
    switch (vsize) {
    case 4: return vd_collect<1>(ex, val, count, dict, cnt);
    case 8: return vd_collect<2>(ex, val, count, dict, cnt);
    case 16: return vd_collect<4>(ex, val, count, dict, cnt);
    default: return sps_kerror(ex, SPS_ERR_ARG, "vdict_collect: values of %d bytes (4, 8 or 16)", vsize);
    }
}

extern "C" sps_status sps_cuda_vdict_encode(sps_exec *ex, const void *val, int64_t count, int vsize, const void *dict,
                                            int ndict, uint8_t *idx)
{
    switch (vsize) {
    case 4: return vd_encode<1>(ex, val, count, dict, ndict, idx);
    case 8: return vd_encode<2>(ex, val, count, dict, ndict, idx);
    case 16: return vd_encode<4>(ex, val, count, dict, ndict, idx);
    default: return sps_kerror(ex, SPS_ERR_ARG, "vdict_encode: values of %d bytes (4, 8 or 16)", vsize);
    }
}
