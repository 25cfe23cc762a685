/* CUDA product of the HiSparse tree (the layout and the schedule:
 * kernels/format_kernels_hisparse.h; the format: formats/hisparse.c; the CPU
 * reference: kernels/cpu/hisparse.inc, FN(hs_spmv), the same items in order).
 *
 * One launch (hs_kernel) after y's scaling (scale_y with the PDL trigger), dependent on it (PDL):
 * hs_sparse_warp: a warp K packed work items (windows) of 32 entries (runs of sparse
 *   leaves' entries, several small leaves to a window), a thread an entry: every
 *   thread has one entry's work, whatever the leaves' sizes (the paper's work per
 *   thread evened out by binning; here the packing is done at construction, so the
 *   kernel needs no queue).  The lanes place the window's segments by where each says
 *   it starts (a bitmask of the segments' starts names each entry's segment), then each
 *   loads its packed (row, column) bytes and its value, gathers x, and the lanes
 *   with the same output in a row (a leaf's row for A x, its entries being
 *   row-major; mostly single entries for A^T x, the coordinates swapped) are summed
 *   by a segmented shuffle sum, one atomicAdd a run.
 * hs_dense_block: a block a dense leaf, a warp a row (a column for A^T), lanes
 *   over the d slots of it that the occupancy bitmask marks, a shuffle tree, one
 *   atomicAdd a row that has an entry.
 * Not bit-reproducible run to run (the atomics' order); every entry is used once, so
 * the result equals the CPU's to rounding.  What the product costs and why it is
 * shaped so: bench/results/hisparse.md. */
#include "kernels/cuda/common.cuh"
#include "kernels/hisparse_small.h"

#include <cub/block/block_radix_sort.cuh>

namespace {

constexpr int HS_WARPS = 8; /* warps a block: 256 threads */

/* Before the first atomic into y: y's scaling (hs_launch) has finished and is visible.
 * Everything before it -- the schedule's loads, the coordinates, the values, x -- overlaps
 * the scaling kernel and the launch gap (programmatic dependent launch, common.cuh). */
__device__ inline void hs_y_ready() { sps_cu_pdl_wait(); }

/* A warp takes K consecutive packed work items (windows of 32 entries) w0 .. w0 + K - 1, in
 * stages: every window's segment range, then every window's segments, then every entry's
 * coordinates, then the values and x, then the sums and atomics.  A window is a chain of
 * dependent loads (5 round trips) with little work; K windows a warp issue K loads at each
 * step, so a large matrix runs in fewer waves of warps at the same depth (hs_launch picks K). */
template <typename T, bool TR, int K>
__device__ inline void hs_sparse_warp(const sps_hs_sched &H, int64_t w0, T a, const T *__restrict__ x,
                                      T *__restrict__ y)
{
    const int lane = (int)(threadIdx.x & 31);
    /* lanes 0..K read the windows' segment offsets (past the last window: the end) */
    int64_t bound = 0;
    if (lane <= K) bound = H.warp_seg[w0 + lane < H.nwarps ? w0 + lane : H.nwarps];
    sps_hs_item it[K];
    int nseg[K];
#pragma unroll
    for (int j = 0; j < K; j++) {
        const int64_t s0 = __shfl_sync(0xffffffffu, bound, j);
        nseg[j] = (int)(__shfl_sync(0xffffffffu, bound, j + 1) - s0);
        it[j] = sps_hs_item{0, 0, 0, 0, 0};
        if (lane < nseg[j]) it[j] = H.sparse[s0 + lane]; /* lane l < nseg reads segment l */
    }
    const unsigned char *p[K];
    uint32_t count[K];
    sps_index r[K], c[K];
    int kk[K], tp[K];
    bool mine[K];
#pragma unroll
    for (int j = 0; j < K; j++) {
        /* each segment says where in the window it starts; the last one where the window ends */
        const int start = sps_hs_seg_at(it[j]),
                  end = __shfl_sync(0xffffffffu, start + sps_hs_seg_count(it[j]), nseg[j] > 0 ? nseg[j] - 1 : 0),
                  total = nseg[j] > 0 ? end : 0;
        /* entry e = lane of the window: its segment is the number of segment starts at or
           before e, less one (a bit a start: the segments are non-empty, so the starts are
           distinct); its fields come from the lane that read it */
        unsigned starts = lane < nseg[j] ? 1u << start : 0u;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
        starts = __reduce_or_sync(0xffffffffu, starts);
#else
#pragma unroll
        for (int o = 16; o > 0; o /= 2) starts |= __shfl_xor_sync(0xffffffffu, starts, o);
#endif
        mine[j] = lane < total;
        const int g = mine[j] ? __popc(starts & (0xffffffffu >> (31 - lane))) - 1 : 0;
        const uint32_t ref = __shfl_sync(0xffffffffu, it[j].ref, g);
        const sps_index r0 = __shfl_sync(0xffffffffu, it[j].r0, g), c0 = __shfl_sync(0xffffffffu, it[j].c0, g);
        kk[j] = __shfl_sync(0xffffffffu, (int)it[j].first - start, g) + lane;
        p[j] = H.pool + SPS_HS_OFF(ref);
        tp[j] = SPS_HS_TYPE(ref);
        count[j] = 0, r[j] = r0, c[j] = c0;
        if (mine[j]) {
            count[j] = *(const uint32_t *)(const void *)p[j];
            r[j] = r0 + p[j][4 + 2 * kk[j]], c[j] = c0 + p[j][5 + 2 * kk[j]];
        }
    }
    T s[K];
    sps_index out[K];
#pragma unroll
    for (int j = 0; j < K; j++) {
        out[j] = -1 - lane; /* distinct for the idle lanes */
        s[j] = zero_of<T>();
        if (mine[j]) {
            const T *v = (const T *)(const void *)(p[j] + sps_hs_val_at(tp[j], sps_hs_pad(tp[j], count[j]), sizeof(T)));
            out[j] = TR ? c[j] : r[j];
            s[j] = v[kk[j]] * ldg_t(x + (TR ? r[j] : c[j]));
        }
    }
#pragma unroll
    for (int j = 0; j < K; j++) {
        /* runs of equal outputs in consecutive lanes (a leaf's row for A x; mostly single
           entries for A^T x): run ids from the heads, a segmented suffix sum over them, one
           atomicAdd a run by its head */
        const sps_index prev = __shfl_up_sync(0xffffffffu, out[j], 1);
        const bool head = lane == 0 || prev != out[j];
        const unsigned heads = __ballot_sync(0xffffffffu, head);
        const int run = __popc(heads & (0xffffffffu >> (31 - lane)));
#pragma unroll
        for (int o = 1; o < 32; o *= 2) {
            const T t = shfl_down(0xffffffffu, s[j], o, 32);
            const int rt = __shfl_down_sync(0xffffffffu, run, o);
            if (lane + o < 32 && rt == run) s[j] = s[j] + t;
        }
        if (j == 0) hs_y_ready();
        if (mine[j] && head) atomic_add(y + out[j], a * s[j]);
    }
}

/* a block a dense leaf, a warp a row (a column for A^T) */
template <typename T, bool TR>
__device__ inline void hs_dense_block(const sps_hs_sched &H, int64_t leaf, T a, const T *__restrict__ x,
                                      T *__restrict__ y)
{
    const sps_hs_item it = H.dense[leaf];
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
        hs_y_ready();
        /* a row past the matrix's edge has no entry: no write there */
        if (__any_sync(0xffffffffu, any) && lane == 0) atomic_add(y + out0 + i, a * s);
    }
}

/* One launch for both kinds of leaves: blocks [0, sparse_blocks) take HS_WARPS x K packed
 * work items each, the rest a dense leaf each (one launch fewer where there are both). */
template <typename T, bool TR, int K>
__global__ void __launch_bounds__(HS_WARPS * 32)
    hs_kernel(sps_hs_sched H, int64_t sparse_blocks, T a, const T *__restrict__ x, T *__restrict__ y)
{
    if ((int64_t)blockIdx.x < sparse_blocks) {
        const int64_t w0 = ((int64_t)blockIdx.x * HS_WARPS + threadIdx.x / 32) * K;
        if (w0 < H.nwarps) hs_sparse_warp<T, TR, K>(H, w0, a, x, y); /* uniform within the warp */
    } else {
        hs_dense_block<T, TR>(H, (int64_t)blockIdx.x - sparse_blocks, a, x, y);
    }
}

/* y = b y (scale_y with the PDL trigger), then the product's kernel, launched dependent on the
 * scaling (PDL): the scaling kernel lets it start at once, and it waits only before its
 * first atomic, so the scaling, the launch gap and the product's chain of dependent
 * loads overlap.  A small product is that chain (5 round trips: the warp's segment range,
 * its segments, the leaf's coordinates and count, x and the values, the atomic), and two
 * launches in a row had cost about a third more (bench/results/hisparse.md, session 22). */
static_assert(HS_WARPS * 32 == SPS_CU_THREADS, "sps_cu_launch_pdl launches SPS_CU_THREADS threads a block");

template <typename T, bool TR, int K>
static sps_status hs_run(sps_exec *ex, const sps_hs_sched &H, T a, const T *x, T *y, int pdl)
{
    const int64_t per_block = (int64_t)HS_WARPS * K, sparse_blocks = (H.nwarps + per_block - 1) / per_block,
                  grid = sparse_blocks + H.ndense;
    if (grid == 0) return SPS_OK;
    if (grid > INT32_MAX)
        return sps_kerror(ex, SPS_ERR_ARG, "hisparse: %lld warps of work and %lld dense leaves", (long long)H.nwarps,
                          (long long)H.ndense);
    cudaStream_t st = sps_custream(ex);
    if (pdl) SPS_CU(ex, sps_cu_launch_pdl(hs_kernel<T, TR, K>, (unsigned)grid, st, H, sparse_blocks, a, x, y));
    else hs_kernel<T, TR, K><<<(unsigned)grid, HS_WARPS * 32, 0, st>>>(H, sparse_blocks, a, x, y);
    SPS_CU_LAUNCHED(ex, "hs_kernel");
    return SPS_OK;
}

template <typename T, bool TR>
static sps_status hs_launch(sps_exec *ex, const sps_hs_sched &H, T a, const T *x, sps_cplx b, T *y, sps_index nout)
{
    const int scaled = !(b.re == 1.0 && b.im == 0.0) && nout > 0;
    if (scaled) SPS_CHECK((scale_y<T, true>(ex, nout, b, y)));
    /* dependent on the scaling only: without one, the previous kernel may be what wrote x */
    const int pdl = scaled && sps_cu_all_sm90();
    /* a window a warp while the windows fit one wave of warps; two past it (four were slower
       again: bench/results/hisparse.md, session 22); launch variant hs_windows */
    int K = ex->lv ? ex->lv->hs_windows : 0;
    if (K == 0) {
        int cap = 1;
        SPS_CHECK(sps_cu_resident(ex, hs_kernel<T, TR, 1>, &cap));
        K = H.nwarps > (int64_t)cap * HS_WARPS ? 2 : 1;
    }
    return (K == 2 ? hs_run<T, TR, 2> : hs_run<T, TR, 1>)(ex, H, a, x, y, pdl);
}

template <typename T>
static sps_status hs_spmv_impl(sps_exec *ex, sps_hs_sched H, sps_cplx a, const void *x, sps_cplx b, void *y,
                               sps_index nout, int trans)
{
    return (trans ? hs_launch<T, true> : hs_launch<T, false>)(ex, H, sc<T>::from(a), (const T *)x, b, (T *)y, nout);
}

/* the addition's values: a thread a distinct key, alpha a + beta b over its one or two
 * members (the CPU's FN(hisparse_lin); the GPU may contract the sum into an fma: the same to
 * rounding, not to the bit) */
template <typename T> struct hs_add_values_op {
    const sps_index *ustart;
    const uint64_t *src;
    const unsigned char *poolA, *poolB;
    T al, be, *out;
    uint64_t *bad;
    __device__ void setup() {}
    __device__ void operator()(sps_index u) const
    {
        const T *a = NULL, *b = NULL;
        for (sps_index e = ustart[u]; e < ustart[u + 1]; e++) {
            const uint64_t s = src[e];
            if (s & SPS_HS_TAG_B) b = (const T *)(const void *)(poolB + (s & ~SPS_HS_TAG_B));
            else a = (const T *)(const void *)(poolA + s);
        }
        const T r = a && b ? al * *a + be * *b : a ? al * *a : be * *b;
        out[u] = r;
        if (!finite_of(r)) atomicMax((unsigned long long *)bad, ~(unsigned long long)u); /* rare: no contention */
    }
};

template <typename T>
static sps_status hs_add_values_impl(sps_exec *ex, sps_index nu, const sps_index *ustart, const uint64_t *src,
                                     const unsigned char *poolA, const unsigned char *poolB, sps_cplx alpha,
                                     sps_cplx beta, void *out, uint64_t *bad)
{
    return sps_cuda_foreach(ex, nu, hs_add_values_op<T>{ustart, src, poolA, poolB, sc<T>::from(alpha),
                                                        sc<T>::from(beta), (T *)out, bad});
}

/* The one-pass sum's first call (kernels/hisparse_small.h): one block of THREADS, the lists
 * sorted in registers by cub::BlockRadixSort (THREADS x ITEMS keys, padded with empty slots),
 * the distinct keys' values by hs_add_values_op, then the shape.  Two shapes of block: 256 x 4
 * for lists of up to 1024 slots, 512 x 8 up to SPS_HS_SMALL_SLOTS.  A block of 1024 x 4 for all
 * had taken 43 us on west0067 (294 entries; ncu): its 4096-key sort for a few hundred keys, 64
 * registers a thread with spills, and 1024 threads at every barrier. */
/* after the sort: the distinct keys, their values (hs_add_values_op), the shape */
template <typename T>
__device__ inline void hs_small_rest(const sps_hs_small &w, T al, T be, const sps_hss_scratch *sc)
{
    const sps_index nu = sps_hs_small_unique(&w, sc);
    const hs_add_values_op<T> op{w.ustart, w.src, w.xa.pool, w.xb.pool, al, be, (T *)(void *)w.val,
                                 (uint64_t *)(w.stats + SPS_HSS_BAD)};
    SPS_HSS_FOR(u, nu) op((sps_index)u);
    SPS_HSS_SYNC();
    sps_hs_small_shape(&w, nu, sc);
}

template <typename T, int THREADS, int ITEMS>
__global__ void __launch_bounds__(THREADS, 1)
    hs_small_shape_kernel(const __grid_constant__ sps_hs_small w, T al, T be)
{
    using sort = cub::BlockRadixSort<uint64_t, THREADS, ITEMS, uint64_t>;
    __shared__ typename sort::TempStorage tmp;
    __shared__ int64_t part[32 * SPS_HSS_SCANS];
    const sps_hss_scratch sc = {part, NULL};
    sps_hs_small_list(&w, (int64_t)THREADS * ITEMS);
    uint64_t k[ITEMS], v[ITEMS];
    const int base = (int)threadIdx.x * ITEMS; /* blocked: thread t holds slots t ITEMS .. */
#pragma unroll
    for (int j = 0; j < ITEMS; j++) k[j] = w.key[base + j], v[j] = w.src[base + j];
    sort(tmp).Sort(k, v, 0, sps_hs_key_bits(w.g) + 1);
#pragma unroll
    for (int j = 0; j < ITEMS; j++) w.key[base + j] = k[j], w.src[base + j] = v[j];
    __syncthreads();
    hs_small_rest<T>(w, al, be, &sc);
}
static_assert(512 * 8 == SPS_HS_SMALL_SLOTS, "the larger block sorts the small sum's slots");

/* longer lists, sorted already (hs_list, then hs_sort_pairs or hs_merge_pairs): the rest on a
 * cooperative grid of SPS_CU_THREADS-thread blocks, grid-wide barriers between the steps */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS) hs_small_grid_kernel(const __grid_constant__ sps_hs_small w, T al,
                                                                      T be)
{
    __shared__ int64_t part[32 * SPS_HSS_SCANS];
    const sps_hss_scratch sc = {part, w.bsum};
    hs_small_rest<T>(w, al, be, &sc);
}

template <typename T>
static sps_status hs_small_shape_impl(sps_exec *ex, const sps_hs_small *w, sps_cplx alpha, sps_cplx beta)
{
    if (w->g.depth > SPS_HS_SMALL_DEPTH)
        return sps_kerror(ex, SPS_ERR_ARG, "hs_small_shape: depth %d (at most %d)", w->g.depth, SPS_HS_SMALL_DEPTH);
    const T al = sc<T>::from(alpha), be = sc<T>::from(beta);
    cudaStream_t st = sps_custream(ex);
    if (sps_hs_small_sorted(w)) {
        int grid = 1;
        SPS_CHECK(sps_cu_coop_grid(ex, hs_small_grid_kernel<T>, w->nv, SPS_HSS_MAX_BLOCKS, &grid));
        SPS_CU(ex, sps_cu_launch_coop(hs_small_grid_kernel<T>, (unsigned)grid, st, *w, al, be));
    } else if (sps_hs_small_slots(w) <= SPS_HS_SMALL_TILE) hs_small_shape_kernel<T, 256, 4><<<1, 256, 0, st>>>(*w, al, be);
    else hs_small_shape_kernel<T, 512, 8><<<1, 512, 0, st>>>(*w, al, be);
    SPS_CU_LAUNCHED(ex, "hs_small_shape_kernel");
    return SPS_OK;
}

} // namespace

#define SPS_CU_HS_ENTRIES(S, T)                                                                                \
    SPS_CU_ENTRY(hs_spmv, S, hs_spmv_impl<T>,                                                                  \
                 (sps_exec * ex, sps_hs_sched H, sps_cplx a, const void *x, sps_cplx b, void *y, sps_index nout, \
                  int trans),                                                                                 \
                 (ex, H, a, x, b, y, nout, trans))                                                            \
    SPS_CU_ENTRY(hs_add_values, S, hs_add_values_impl<T>,                                                      \
                 (sps_exec * ex, sps_index nu, const sps_index *ustart, const uint64_t *src,                  \
                  const unsigned char *poolA, const unsigned char *poolB, sps_cplx alpha, sps_cplx beta,      \
                  void *out, uint64_t *bad),                                                                   \
                 (ex, nu, ustart, src, poolA, poolB, alpha, beta, out, bad))                                   \
    SPS_CU_ENTRY(hs_small_shape, S, hs_small_shape_impl<T>,                                                    \
                 (sps_exec * ex, const sps_hs_small *w, sps_cplx alpha, sps_cplx beta), (ex, w, alpha, beta))
SPS_CU_FOR_ALL_TYPES(SPS_CU_HS_ENTRIES)
