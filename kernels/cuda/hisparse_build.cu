/* CUDA build of a HiSparse tree (the hs_* kernels of the index family,
 * kernels/format_kernels_hisparse.h; the steps: formats/hisparse.c, hisparse_build; the CPU
 * oracle: kernels/cpu/hisparse_build.c).  The paper's top-down binning is one sort: every
 * entry's key holds its digits at every level, so a CUB radix sort of (key, position) over
 * the key's 2 (lg (depth - 1) + tb) bits puts the entries in tree order, each node a run
 * of them.  The rest is a thread an element running the same element step as the CPU
 * (sps_hs_*_at): each entry's depth mark (the coarsest level whose node it starts) and their
 * histogram (the levels' node counts: one read by the host), then level by level the node
 * starts (flags from the marks, a scan, a scatter), bottom-up
 * the nodes' sizes and the subtrees' byte sums (cub::DeviceScan), top-down each subtree's
 * start in the pool (one allocation, zeroed), then every entry and every child reference
 * written in place (a dense leaf's occupancy bits by atomicOr), and the product's
 * schedule from the leaves by prefix sums.  Nothing waits for the device here (the host
 * reads the marks' histogram and a few totals: formats/hisparse.c). */
#include "kernels/cuda/common.cuh"
#include "kernels/hisparse_small.h"

#include <cub/device/device_radix_sort.cuh>

namespace {

/* a thread an entry, its row found in rowptr (a thread a row took 34 ms on a matrix with dense
   rows of 200k entries: arrow-200k-k4) */
struct hs_key_op {
    sps_hs_geom g;
    sps_index n;
    const sps_index *rowptr, *col;
    uint64_t *key;
    sps_index *pos;
    __device__ void setup() {}
    __device__ void operator()(sps_index k)
    {
        const int64_t i = sps_hs_floor(rowptr, n - 1, k);
        key[k] = sps_hs_key(g, (uint64_t)i, (uint64_t)col[k]), pos[k] = k;
    }
};

/* the entries' depth marks and their histogram: a block's counts in shared memory first */
__global__ void __launch_bounds__(SPS_CU_THREADS)
    hs_mark_kernel(sps_hs_geom g, int64_t nnz, const uint64_t *key, uint8_t *mark, sps_index *hist)
{
    __shared__ unsigned cnt[64];
    for (int q = threadIdx.x; q < 64; q += blockDim.x) cnt[q] = 0;
    __syncthreads();
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < nnz; e += stride) {
        const int q = sps_hs_mark(g, key, e);
        mark[e] = (uint8_t)q;
        atomicAdd(&cnt[q], 1u);
    }
    __syncthreads();
    for (int q = threadIdx.x; q <= g.depth + 1; q += blockDim.x)
        if (cnt[q]) atomicAdd(hist + q, (sps_index)cnt[q]);
}

struct hs_flag_op {
    const uint8_t *mark;
    int l;
    sps_index *flag;
    __device__ void setup() {}
    __device__ void operator()(sps_index e) { flag[e] = mark[e] <= l; }
};

/* the marked entries' positions (at: the exclusive sums of the flags) */
struct hs_place_op {
    const uint8_t *mark;
    int l;
    const sps_index *at;
    int64_t nnz;
    sps_index *start;
    __device__ void setup() {}
    __device__ void operator()(sps_index e)
    {
        if (mark[e] <= l) start[at[e]] = e;
        if (e == nnz - 1) start[at[nnz]] = (sps_index)nnz;
    }
};

/* the node sizes, and the per-type node counts and slots summed a warp at a time */
__global__ void __launch_bounds__(SPS_CU_THREADS)
    hs_size_kernel(int d, int leaf, size_t vbytes, sps_hs_level v, sps_hs_level c, int64_t *sz,
                   unsigned long long *stats)
{
    unsigned long long cnt[4] = {0, 0, 0, 0}, slots = 0;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < v.n; i += stride) {
        int64_t s;
        sps_hs_size_at(i, d, leaf, vbytes, v, c, sz, &s);
        cnt[v.type[i]]++;
        slots += (unsigned long long)s;
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) {
#pragma unroll
        for (int t = 0; t < 4; t++) cnt[t] += __shfl_down_sync(0xffffffffu, cnt[t], o);
        slots += __shfl_down_sync(0xffffffffu, slots, o);
    }
    if ((threadIdx.x & 31) == 0) {
        for (int t = 0; t < 4; t++)
            if (cnt[t]) atomicAdd(stats + leaf * 4 + t, cnt[t]);
        if (slots) atomicAdd(stats + 8, slots);
    }
}

struct hs_offset_op {
    sps_hs_level p, c;
    __device__ void setup() {}
    __device__ void operator()(sps_index j) { sps_hs_offset_at(j, p, c); }
};

struct hs_entry_op {
    sps_hs_geom g;
    size_t vsize;
    const uint64_t *key;
    const sps_index *perm;
    const unsigned char *val;
    sps_hs_level v;
    unsigned char *pool;
    __device__ void setup() {}
    __device__ void operator()(sps_index e) { sps_hs_fill_entry(e, g, vsize, key, perm, val, v, pool); }
};

struct hs_child_op {
    sps_hs_geom g;
    int l;
    const uint64_t *key;
    sps_hs_level p, c;
    unsigned char *pool;
    __device__ void setup() {}
    __device__ void operator()(sps_index j) { sps_hs_fill_child(j, g, l, key, p, c, pool); }
};

/* a leaf's sparse entries and dense flag (the first sums' terms) */
struct hs_count_op {
    sps_hs_level v;
    int64_t *cnt, *dn;
    __device__ void setup() {}
    __device__ void operator()(sps_index i)
    {
        const int dense = v.type[i] == SPS_HS_DENSE;
        cnt[i] = dense ? 0 : v.start[i + 1] - v.start[i];
        dn[i] = dense;
    }
};

struct hs_nseg_op {
    const int64_t *so;
    int64_t *ns;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { ns[i] = sps_hs_segments(so[i], so[i + 1] - so[i]); }
};

struct hs_sched_op {
    sps_hs_geom g;
    const uint64_t *key;
    sps_hs_level v;
    const int64_t *so, *sI, *dI;
    sps_hs_item *sparse, *dense;
    int64_t *warp_seg;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { sps_hs_sched_at(i, g, key, v, so, sI, dI, sparse, dense, warp_seg); }
};

/* a thread a list slot: of the windows (DENSE false: a warp's threads walk their window's
   segments together), or of the dense leaves */
template <bool DENSE> struct hs_list_op {
    sps_hs_sched X;
    size_t vs;
    int trans;
    sps_hs_geom g;
    uint64_t tag, *key, *src;
    __device__ void setup() {}
    __device__ void operator()(sps_index i)
    {
        if (DENSE) sps_hs_list_slot(i, X, vs, trans, g, tag, key, src);
        else sps_hs_list_entry(i, X, vs, trans, g, tag, key, src);
    }
};

struct hs_ukey_op {
    const sps_index *ustart;
    const uint64_t *key;
    uint64_t *ukey;
    __device__ void setup() {}
    __device__ void operator()(sps_index u) { ukey[u] = key[ustart[u]]; }
};

} // namespace

/* One stable radix sort of n (key, value) pairs by the keys' low `bits` bits (CUB), kin / vin
 * into kout / vout: the build's key sort and the addition's list sort */
template <typename V>
static sps_status hs_radix_sort(sps_exec *ex, int64_t n, int bits, const uint64_t *kin, uint64_t *kout, const V *vin,
                                V *vout, const char *what)
{
    cudaStream_t s = sps_custream(ex);
    size_t temp = 0;
    SPS_CU(ex, cub::DeviceRadixSort::SortPairs(NULL, temp, (const uint64_t *)NULL, (uint64_t *)NULL, (const V *)NULL,
                                                (V *)NULL, (int)n, 0, bits, s));
    void *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, &ws, temp ? temp : 1));
    const cudaError_t e = cub::DeviceRadixSort::SortPairs(ws, temp, kin, kout, vin, vout, (int)n, 0, bits, s);
    sps_exec_release(ex, ws); /* stream-ordered: after the sort */
    return e == cudaSuccess ? SPS_OK : sps_cuda_fail(ex, e, what, __FILE__, __LINE__);
}

extern "C" sps_status sps_cuda_hs_keys(sps_exec *ex, sps_hs_geom g, sps_index n, int64_t nnz, const sps_index *rowptr,
                                       const sps_index *col, uint64_t *key, sps_index *perm)
{
    if (nnz <= 0) return SPS_OK;
    if (nnz >= INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "hs_keys: %lld entries (fewer than %d)", (long long)nnz, INT32_MAX);
    const int bits = sps_hs_key_bits(g) > 0 ? sps_hs_key_bits(g) : 1;
    const size_t a = 256, kb = ((size_t)nnz * sizeof(uint64_t) + a - 1) / a * a;
    unsigned char *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&ws, kb + (size_t)nnz * sizeof(sps_index)));
    uint64_t *kin = (uint64_t *)ws;
    sps_index *pin = (sps_index *)(ws + kb);
    sps_status st = sps_cuda_foreach(ex, (sps_index)nnz, hs_key_op{g, n, rowptr, col, kin, pin});
    if (st == SPS_OK)
        st = hs_radix_sort(ex, nnz, bits, kin, key, (const sps_index *)pin, perm, "HiSparse key sort (CUB DeviceRadixSort)");
    sps_exec_release(ex, ws);
    return st;
}

extern "C" sps_status sps_cuda_hs_marks(sps_exec *ex, sps_hs_geom g, int64_t nnz, const uint64_t *key, uint8_t *mark,
                                        sps_index *hist)
{
    if (nnz <= 0) return SPS_OK;
    if (g.depth + 2 > 64) return sps_kerror(ex, SPS_ERR_ARG, "hs_marks: depth %d", g.depth);
    hs_mark_kernel<<<sps_cu_grid(ex, nnz), SPS_CU_THREADS, 0, sps_custream(ex)>>>(g, nnz, key, mark, hist);
    SPS_CU_LAUNCHED(ex, "hs_mark_kernel");
    return SPS_OK;
}

extern "C" sps_status sps_cuda_hs_starts(sps_exec *ex, int64_t nnz, const uint8_t *mark, int l, sps_index *at,
                                         sps_index *start)
{
    cudaStream_t s = sps_custream(ex);
    if (nnz <= 0) {
        SPS_CU(ex, cudaMemsetAsync(at, 0, sizeof *at, s));
        SPS_CU(ex, cudaMemsetAsync(start, 0, sizeof *start, s));
        return SPS_OK;
    }
    if (nnz >= INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "hs_starts: %lld entries", (long long)nnz);
    sps_index *flag = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&flag, (size_t)nnz * sizeof *flag));
    sps_status st = sps_cuda_foreach(ex, (sps_index)nnz, hs_flag_op{mark, l, flag});
    if (st == SPS_OK) st = sps_cu_scan_index(ex, flag, at, nnz, "HiSparse node starts (scan)");
    if (st == SPS_OK) st = sps_cuda_foreach(ex, (sps_index)nnz, hs_place_op{mark, l, at, nnz, start});
    sps_exec_release(ex, flag);
    return st;
}

extern "C" sps_status sps_cuda_hs_sizes(sps_exec *ex, int d, int leaf, size_t vbytes, sps_hs_level v, sps_hs_level c,
                                        int64_t *sz, int64_t *stats)
{
    if (v.n <= 0) return SPS_OK;
    hs_size_kernel<<<sps_cu_grid(ex, v.n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(d, leaf, vbytes, v, c, sz,
                                                                                 (unsigned long long *)stats);
    SPS_CU_LAUNCHED(ex, "hs_size_kernel");
    return sps_cu_scan_i64(ex, sz, v.S, v.n, "HiSparse subtree bytes (scan)");
}

extern "C" sps_status sps_cuda_hs_offsets(sps_exec *ex, sps_hs_level p, sps_hs_level c)
{
    return sps_cuda_foreach(ex, c.n, hs_offset_op{p, c});
}

extern "C" sps_status sps_cuda_hs_fill_leaves(sps_exec *ex, sps_hs_geom g, size_t vsize, int64_t nnz, const uint64_t *key,
                                              const sps_index *perm, const void *val, sps_hs_level v, unsigned char *pool)
{
    return sps_cuda_foreach(ex, (sps_index)nnz, hs_entry_op{g, vsize, key, perm, (const unsigned char *)val, v, pool});
}

extern "C" sps_status sps_cuda_hs_fill_inner(sps_exec *ex, sps_hs_geom g, int l, const uint64_t *key, sps_hs_level p,
                                             sps_hs_level c, unsigned char *pool)
{
    return sps_cuda_foreach(ex, c.n, hs_child_op{g, l, key, p, c, pool});
}

extern "C" sps_status sps_cuda_hs_sched_sums(sps_exec *ex, sps_hs_level v, int64_t *so, int64_t *sI, int64_t *dI)
{
    if (v.n <= 0) {
        cudaStream_t s = sps_custream(ex);
        SPS_CU(ex, cudaMemsetAsync(so, 0, sizeof *so, s));
        SPS_CU(ex, cudaMemsetAsync(sI, 0, sizeof *sI, s));
        SPS_CU(ex, cudaMemsetAsync(dI, 0, sizeof *dI, s));
        return SPS_OK;
    }
    int64_t *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&ws, 2 * (size_t)v.n * sizeof *ws));
    int64_t *cnt = ws, *dn = ws + v.n;
    sps_status st = sps_cuda_foreach(ex, v.n, hs_count_op{v, cnt, dn});
    if (st == SPS_OK) st = sps_cu_scan_i64(ex, cnt, so, v.n, "HiSparse schedule: sparse entries (scan)");
    if (st == SPS_OK) st = sps_cu_scan_i64(ex, dn, dI, v.n, "HiSparse schedule: dense leaves (scan)");
    if (st == SPS_OK) st = sps_cuda_foreach(ex, v.n, hs_nseg_op{so, cnt}); /* cnt is read: reuse it */
    if (st == SPS_OK) st = sps_cu_scan_i64(ex, cnt, sI, v.n, "HiSparse schedule: segments (scan)");
    sps_exec_release(ex, ws);
    return st;
}

extern "C" sps_status sps_cuda_hs_sched(sps_exec *ex, sps_hs_geom g, const uint64_t *key, sps_hs_level v,
                                        const int64_t *so, const int64_t *sI, const int64_t *dI, sps_hs_item *sparse,
                                        sps_hs_item *dense, int64_t *warp_seg)
{
    return sps_cuda_foreach(ex, v.n, hs_sched_op{g, key, v, so, sI, dI, sparse, dense, warp_seg});
}

extern "C" sps_status sps_cuda_hs_list(sps_exec *ex, sps_hs_sched X, size_t vsize, int trans, sps_hs_geom g,
                                       uint64_t tag, uint64_t *key, uint64_t *src)
{
    const int64_t base = X.nwarps * SPS_HS_RUN, slots = X.ndense * (int64_t)X.d * X.d;
    if (base >= INT32_MAX || slots >= INT32_MAX)
        return sps_kerror(ex, SPS_ERR_ARG, "hs_list: %lld window slots, %lld dense slots", (long long)base, (long long)slots);
    SPS_CHECK(sps_cuda_foreach(ex, (sps_index)base, hs_list_op<false>{X, vsize, trans, g, tag, key, src}));
    return sps_cuda_foreach(ex, (sps_index)slots, hs_list_op<true>{X, vsize, trans, g, tag, key + base, src + base});
}

extern "C" sps_status sps_cuda_hs_sort_pairs(sps_exec *ex, int64_t n, int bits, const uint64_t *kin,
                                             const uint64_t *vin, uint64_t *key, uint64_t *val)
{
    if (n <= 0) return SPS_OK;
    if (n >= INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "hs_sort_pairs: %lld pairs", (long long)n);
    if (kin == key || vin == val) return sps_kerror(ex, SPS_ERR_ARG, "hs_sort_pairs: input and output arrays alias");
    return hs_radix_sort(ex, n, bits, kin, key, vin, val, "HiSparse addition: the list sort (CUB DeviceRadixSort)");
}

/* two sorted lists merged: a thread a pair, its place its index plus the other list's pairs
 * before it (a's: b's keys below its own; b's: a's keys at or below: a's first on equal keys),
 * found by bisection in the other list.  One launch over the pairs, where the radix sort took
 * five (its histogram, scan and three 8-bit passes: 43 us on a sum of 155k slots,
 * bench/results/hisparse.md).  (CUB's DeviceMerge would pull Thrust's exceptions into this
 * build, which has none.) */
struct hs_merge_op {
    int64_t na, nb;
    const uint64_t *ka, *va, *kb, *vb;
    uint64_t *key, *val;
    __device__ void setup() {}
    __device__ void operator()(sps_index t) const
    {
        const bool in_a = t < na;
        const int64_t i = in_a ? t : t - na;
        const uint64_t k = in_a ? ka[i] : kb[i];
        const uint64_t *o = in_a ? kb : ka;
        int64_t lo = 0, hi = in_a ? nb : na; /* the first of o's keys past k (in a: at or past k) */
        while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (in_a ? o[mid] < k : o[mid] <= k) lo = mid + 1;
            else hi = mid;
        }
        key[i + lo] = k, val[i + lo] = in_a ? va[i] : vb[i];
    }
};

extern "C" sps_status sps_cuda_hs_merge_pairs(sps_exec *ex, int64_t na, const uint64_t *ka, const uint64_t *va,
                                              int64_t nb, const uint64_t *kb, const uint64_t *vb, uint64_t *key,
                                              uint64_t *val)
{
    if (na + nb <= 0) return SPS_OK;
    if (na + nb >= INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "hs_merge_pairs: %lld pairs", (long long)(na + nb));
    return sps_cuda_foreach(ex, (sps_index)(na + nb), hs_merge_op{na, nb, ka, va, kb, vb, key, val});
}

/* the one-pass sum's second call (kernels/hisparse_small.h): one block, of the first's size */
template <int THREADS>
__global__ void __launch_bounds__(THREADS, 1) hs_small_fill_kernel(const __grid_constant__ sps_hs_small w)
{
    sps_hs_small_fill(&w);
}

extern "C" sps_status sps_cuda_hs_small_fill(sps_exec *ex, const sps_hs_small *w)
{
    cudaStream_t st = sps_custream(ex);
    if (sps_hs_small_sorted(w)) { /* the longer lists' cooperative grid, as the shape's */
        int grid = 1;
        SPS_CHECK(sps_cu_coop_grid(ex, hs_small_fill_kernel<SPS_CU_THREADS>, w->nv, SPS_HSS_MAX_BLOCKS, &grid));
        SPS_CU(ex, sps_cu_launch_coop(hs_small_fill_kernel<SPS_CU_THREADS>, (unsigned)grid, st, *w));
    } else if (sps_hs_small_slots(w) <= SPS_HS_SMALL_TILE) hs_small_fill_kernel<256><<<1, 256, 0, st>>>(*w);
    else hs_small_fill_kernel<512><<<1, 512, 0, st>>>(*w);
    SPS_CU_LAUNCHED(ex, "hs_small_fill_kernel");
    return SPS_OK;
}

extern "C" sps_status sps_cuda_hs_ukeys(sps_exec *ex, sps_index nu, const sps_index *ustart, const uint64_t *key,
                                        uint64_t *ukey)
{
    return sps_cuda_foreach(ex, nu, hs_ukey_op{ustart, key, ukey});
}
