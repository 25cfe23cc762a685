/* CUDA kernels of value dictionaries (kernels/format_kernels_vdict.h; the CPU's,
 * kernels/cpu/vdict.c, are the reference).
 *
 * Collect: eight blocks an SM, each a grid-stride pass of its warps: a warp's 32
 * values meet first (__match_any_sync on their words), and one lane a distinct
 * value inserts it into the block's table in shared memory; then the block's
 * distinct values (at most SPS_VDICT_MAX) go into one table in global memory.  A
 * stencil's 15M entries of two values thus cost two shared inserts a warp step,
 * and the global table a few hundred inserts a block.  A slot holds the value's
 * position in its dictionary, -1 while empty, -2 while its claimant writes the
 * value, -3 once the dictionary is full; the claimant takes the position from the
 * counter, writes the value, fences, then publishes the position.  Every access
 * of a slot or of a dictionary word by the inserts is an atomic, so concurrent
 * inserts are ordered by the hardware, not by barriers (compute-sanitizer's
 * racecheck has nothing to report).  Past SPS_VDICT_MAX values every block stops
 * at its next check of the global counter: a matrix of random values costs a few
 * thousand loads.
 * Which values arrive first depends on timing, so dict's order does too: the
 * host sorts it (formats/vdict.c) before encode.
 *
 * Encode: the sorted dictionary in shared memory, a binary search a value. */
#include "kernels/cuda/common.cuh"

namespace {

constexpr int VD_TABLE = 4 * SPS_VDICT_MAX;
constexpr int VD_THREADS = 256;
constexpr int VD_STEP = 4; /* runs of 32 values a warp loads at once */
constexpr int VD_EMPTY = -1, VD_PENDING = -2, VD_FULL = -3;

/* A value as 32-bit words (W words of vsize / 4). */
template <int W> struct vd_word {
    uint32_t w[W];
};

/* A dictionary entry read and written word by word, atomically (see the header). */
template <int W> __device__ inline vd_word<W> vd_load(vd_word<W> *p)
{
    vd_word<W> v;
#pragma unroll
    for (int i = 0; i < W; i++) v.w[i] = atomicAdd((unsigned *)&p->w[i], 0u);
    return v;
}

template <int W> __device__ inline void vd_store(vd_word<W> *p, const vd_word<W> &v)
{
#pragma unroll
    for (int i = 0; i < W; i++) atomicExch((unsigned *)&p->w[i], v.w[i]);
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
        int s = atomicCAS(&tab[h], VD_EMPTY, VD_PENDING); /* claims an empty slot, else reads it */
        if (s == VD_EMPTY) {
            const int pos = atomicAdd(cnt, 1);
            if (pos >= SPS_VDICT_MAX) {
                atomicExch(&tab[h], VD_FULL);
                return false;
            }
            vd_store(&d[pos], v);
            __threadfence();
            atomicExch(&tab[h], pos);
            return true;
        }
        while (s == VD_PENDING) s = atomicAdd(&tab[h], 0);
        if (s == VD_FULL) return false;
        __threadfence();
        if (vd_eq(vd_load(&d[s]), v)) return true;
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
    const unsigned all = 0xffffffffu;
    const int lane = (int)(threadIdx.x & 31);
    /* a warp step covers VD_STEP runs of 32 values, loaded together before any is matched: the
       loads of a step are in flight at once, not one round trip each */
    const int64_t stride = (int64_t)gridDim.x * VD_THREADS * VD_STEP;
    int iter = 0;
    /* k0 is the warp's (the loop is warp-uniform: the ballots and matches below need every lane) */
    for (int64_t k0 = ((int64_t)blockIdx.x * VD_THREADS + (threadIdx.x & ~31u)) * VD_STEP; k0 < count;
         k0 += stride, iter++) {
        if ((iter & 7) == 0) { /* another block overflowed: lane 0's read decides for the warp */
            const int g = __shfl_sync(all, lane == 0 ? *(volatile int *)gcnt : 0, 0);
            if (g > SPS_VDICT_MAX) break;
        }
        vd_word<W> v[VD_STEP];
#pragma unroll
        for (int u = 0; u < VD_STEP; u++) {
            const int64_t k = k0 + 32 * u + lane;
            if (k < count) v[u] = val[k];
        }
        bool ok = true;
#pragma unroll
        for (int u = 0; u < VD_STEP; u++) {
            const int64_t k = k0 + 32 * u + lane;
            const unsigned act = __ballot_sync(all, k < count && ok); /* a lane whose insert failed sits out */
            if (k < count && ok) {
                unsigned same = act;
#pragma unroll
                for (int i = 0; i < W; i++) same &= __match_any_sync(act, v[u].w[i]); /* the lanes holding v */
                if (lane == __ffs(same) - 1) ok = vd_insert(stab, sdict, &scnt, v[u]);
            }
        }
        if (__any_sync(all, !ok)) {
            if (!ok) atomicMax(gcnt, SPS_VDICT_MAX + 1);
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
        /* eight blocks an SM (64 warps: the loads' latency covered); each flushes its table once */
        int64_t g = (count + (int64_t)VD_THREADS * VD_STEP - 1) / ((int64_t)VD_THREADS * VD_STEP);
        const int64_t cap = 8 * (int64_t)sps_cust(ex)->sms;
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
