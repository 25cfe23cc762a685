/* libspsolve — CUDA merge-path CSR SpMV (kernels/csr_merge.h), f32/f64/c32/c64
 * from one set of templates.  The CPU reference is csr_spmv.
 *
 * Why: the row-group kernel (csr.cu) gives each row a fixed group of lanes; on
 * power-law row lengths (powerlaw-2M: mean 20, rows up to 10^4) its warps and
 * blocks wait on their longest rows, and the block-per-long-row path only moves
 * the wait.  Here every block and every thread gets the same number of items
 * (row ends + entries), whatever the rows are.
 *
 * csr_merge_plan  one thread per tile border: sps_csr_merge_plan_at (binary search
 *            over rowptr).  Run once, when the CSR matrix is built.
 * csr_spmv_merge  y = a A x + b y, two launches:
 *   1. csr_merge_tile_kernel, one block of 256 threads per tile of 256 ipt items
 *      (entries [k0, k1), row ends of rows [r0, r1) from the plan):
 *      a. the tile's products val[k] x[col[k]] into shared memory: coalesced,
 *         ipt independent loads in flight a thread (col, then val and x[col]);
 *         its row ends rowptr[r0 + 1 .. r1] beside them;
 *      b. each thread finds its own start on the tile's merge path (binary search
 *         in shared memory, diagonal ipt * thread) and walks its ipt items: a row
 *         end writes the running sum, an entry adds its product;
 *      c. the threads' carries (the running sum at the end of each thread's walk)
 *         go through a CUB BlockScan with the segmented-sum operator, so the first
 *         row a thread ends receives the sums of the threads before it;
 *      d. rows ended in the tile are written (y = a s + b y) by the thread that
 *         ends them, except the tile's first row when an earlier tile holds its
 *         beginning: its sum goes to head[tile]; the tile's last, unfinished row
 *         leaves its partial sum in tail[tile].
 *   2. csr_merge_fixup_kernel, one warp per tile: where the tile's first row
 *      began in an earlier tile and ends in this one, sums tail[] of the tiles
 *      before it (lane-strided, then a shuffle tree) and head[tile], and writes y.  Up to 1024 tiles
 *      the tile kernel's last block runs this fix-up itself (one launch):
 *      H200, spbench 2026-11-26, merge path on 13 SuiteSparse matrices of 300 to
 *      45k entries, 10.3-11.6 -> 9.2-10.5 us (geomean 0.91x the two launches),
 *      rajat01 / rajat19 (auto picks the merge path) f64 11.5 / 10.9 -> 10.8 /
 *      10.0 us, against cuSPARSE CSR ALG1's 10.5 / 10.2; unchanged on powerlaw-2M
 *      (0.329 ms, 2 launches).
 *   Measured (H100, read flush, spbench 2026-11-25,
 *   bench/results/spbench-nvidia-h100-80gb-hbm3-2026-11-25-formats.md): powerlaw-2M f64 0.378 ms,
 *   f32 0.352, against cuSPARSE CSR ALG1's 0.377 / 0.350 (1.00x / 0.99x).  The
 *   last run that timed both schedules on every matrix (2026-11-23, before the
 *   aligned tile loads; `bench/results/spbench-nvidia-h100-80gb-hbm3-2026-11-23-e-spmv-csr-f64.md`
 *   at commit 6a30ace), f64 against the best cuSPARSE CSR kernel, merge path /
 *   row groups: powerlaw-2M 0.93x / 0.72x (f32 0.95x / 0.82x); on regular rows the
 *   row groups win: banded-s1e3 0.84x / 0.95x, poisson3d-128 0.90x / 1.14x,
 *   stencil27b3-40 0.90x / 1.05x.  Hence CSR's auto rule (formats/csr.c).
 *   Deterministic: the tiles, the per-thread walks and the scan's tree depend on
 *   the matrix only; no atomics.  Traffic: the matrix once (rowptr once per tile
 *   border), x gathered, y written (+ read when b != 0), 2 scalars a tile. */
#include "kernels/cuda/common.cuh"

namespace {

template <typename T> struct mp_shape {
    static constexpr int IPT = sizeof(T) <= 8 ? SPS_CSR_MERGE_IPT_SMALL : 4; /* == sps_csr_merge_ipt(sizeof(T)) */
    static constexpr int TILE = SPS_MERGE_THREADS * IPT;
};

__global__ void csr_merge_plan_kernel(sps_index n, int64_t nnz, const sps_index *rowptr, int64_t tiles, int64_t tile,
                                      sps_index *plan)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t <= tiles) sps_csr_merge_plan_at(t, tile, n, nnz, rowptr, plan);
    if (t == 0) *sps_csr_merge_counter(plan, tiles) = 0;
}

/* The tile's col and val: read once, coalesced.  For 8- and 16-byte values past
 * the L1 (ld.global.nc.L1::no_allocate), which then keeps the gathered x: H100,
 * spbench 2026-11-23, powerlaw-2M f64 0.4088 -> 0.4011 ms; f32 lost (0.3709 ->
 * 0.3742, one run) and keeps the ordinary read-only loads.  No longer a knob (bench/results/knobs.md). */
template <typename T> constexpr bool mp_na = sizeof(T) >= 8;

/* The tile's loads start at its first entry rounded down to mp_align
 * entries (32: 128-byte lines of col, whole sectors of val), the lanes before it
 * idle, as the staged CSR passes do (csr_common.cuh): a tile's first entry falls anywhere,
 * and from an unaligned start every warp-wide load of col and val straddles one
 * sector more than it uses (up to 1/4 more L2 sectors for col, 1/8 for f64 val).
 * ncu, H100, powerlaw-2M f64 (2026-11-24): 1829 MB of L2 sectors read against
 * cuSPARSE CSR ALG1's 1762, both at 96-97 % of the L2's throughput, times 389 /
 * 369 us.  Where the shift would push the tile past its buffer (K + shift > TILE:
 * tiles inside long rows, with fewer than 32 row ends) the tile loads unaligned.
 * Unaligned (1) was the measurement's "before"; no longer a knob (bench/results/knobs.md). */
constexpr int mp_align = 32;

/* Blocks an SM must hold (register cap); 0: the compiler's choice (f64: 48
 * registers, 5 blocks); the 6-block cap lost (kernels/csr_merge.h), no longer a
 * knob (bench/results/knobs.md). */
constexpr int mp_minb = 0;
template <typename T> __device__ void csr_merge_fixup_tile(int64_t t, sps_index n, const sps_index *__restrict__ rowptr,
                                                          const sps_index *__restrict__ plan, const T *tail,
                                                          const T *head, const sps_cu_axpby_out<T> &out);

/* FUSED: the last tile to finish runs the fix-up (sps_cu_last_block on the plan's
 * counter), so the product is one launch; for few tiles (csr_merge_fuse_tiles),
 * where the second launch was a third of the time. */
template <typename T, bool FUSED>
__global__ void __launch_bounds__(SPS_MERGE_THREADS, mp_minb)
    csr_merge_tile_kernel(sps_index n, const sps_index *__restrict__ rowptr, const sps_index *__restrict__ col,
                          const T *__restrict__ val, const T *__restrict__ x, const sps_index *__restrict__ plan,
                          T *tail, T *head, sps_cu_axpby_out<T> out, int64_t tiles, unsigned *counter)
{
    constexpr int IPT = mp_shape<T>::IPT, TILE = mp_shape<T>::TILE;
    static_assert(mp_align >= 1 && (mp_align & (mp_align - 1)) == 0, "alignment");
    typedef cub::BlockScan<sps_cu_segv<T>, SPS_MERGE_THREADS> Scan;
    __shared__ T s_prod[TILE];
    __shared__ sps_index s_end[TILE];
    __shared__ typename Scan::TempStorage scan_tmp;

    const sps_index t = (sps_index)blockIdx.x;
    const sps_index r0 = plan[2 * t], k0 = plan[2 * t + 1];
    const int R = (int)(plan[2 * t + 2] - r0), K = (int)(plan[2 * t + 3] - k0);

    /* a. products and row ends: the first 256 row ends and the head test's
     * rowptr[r0] are loaded with the entries (one round trip, not two) */
    bool cont = false; /* the tile's first row began in an earlier tile */
    /* products of entry k0 + j at s_prod[sh + j] */
    const int al = (int)(k0 & (mp_align - 1)), sh = K + al <= TILE ? al : 0;
    {
        const sps_index e0 = (int)threadIdx.x < R ? ldg_t(rowptr + r0 + threadIdx.x + 1) : 0;
        const sps_index rp0 = ldg_t(rowptr + r0);
        if (sh == 0) /* uniform */
            sps_cu_stage_products<IPT, SPS_MERGE_THREADS, mp_na<T>, false>(col, val, sps_cu_xplain<T>{x}, k0, 0, K,
                                                                           s_prod);
        else
            sps_cu_stage_products<IPT, SPS_MERGE_THREADS, mp_na<T>, true>(col, val, sps_cu_xplain<T>{x}, k0 - sh, sh,
                                                                          K + sh, s_prod);
        if ((int)threadIdx.x < R) s_end[threadIdx.x] = e0 - k0;
        for (int i = (int)threadIdx.x + SPS_MERGE_THREADS; i < R; i += SPS_MERGE_THREADS)
            s_end[i] = ldg_t(rowptr + r0 + i + 1) - k0;
        cont = t > 0 && rp0 < k0;
    }
    __syncthreads();

    /* b. this thread's stretch of the tile's merge path: diagonals [d, d + IPT) */
    const int total = R + K;
    const int d = (int)threadIdx.x * IPT < total ? (int)threadIdx.x * IPT : total;
    int i, j;
    {
        int lo = d - K > 0 ? d - K : 0, hi = d < R ? d : R;
        while (lo < hi) {
            const int mid = (lo + hi) >> 1;
            if (s_end[mid] <= d - 1 - mid) lo = mid + 1;
            else hi = mid;
        }
        i = lo;
        j = d - lo;
    }
    const int dend = d + IPT < total ? d + IPT : total;
    T run = zero_of<T>(), first_sum = zero_of<T>();
    int first = -1; /* the first row this thread ends (it may have begun in earlier threads) */
#pragma unroll
    for (int it = 0; it < IPT; it++) {
        if (d + it < dend) {
            if (i < R && s_end[i] <= j) { /* row r0 + i ends */
                if (first < 0) first = i, first_sum = run;
                else out(r0 + i, run);
                run = zero_of<T>();
                i++;
            } else {
                run = run + s_prod[sh + j];
                j++;
            }
        }
    }

    /* c. carries: segments start at the threads that ended a row */
    sps_cu_segv<T> in, pre, agg;
    in.f = first >= 0;
    in.v = run;
    sps_cu_segv<T> init;
    init.f = 0;
    init.v = zero_of<T>();
    Scan(scan_tmp).ExclusiveScan(in, pre, init, sps_cu_seg_op<T>(), agg);

    /* d. the first row ended here gets the sums of the threads before it */
    if (first >= 0) {
        const T s = threadIdx.x > 0 ? pre.v + first_sum : first_sum;
        if (first == 0 && cont) {
            head[t] = s;
            if (FUSED) __threadfence(); /* published before the tile counts itself finished */
        } else {
            out(r0 + first, s);
        }
    }
    if (threadIdx.x == 0) tail[t] = agg.v; /* row plan[2 t + 2]'s entries in this tile (0 if none) */
    if (FUSED && sps_cu_last_block(counter))
        for (int64_t u = 1 + (int64_t)threadIdx.x; u < tiles; u += SPS_MERGE_THREADS)
            csr_merge_fixup_tile(u, n, rowptr, plan, tail, head, out);
}

/* Tile t (>= 1) when its first row began in an earlier tile and ends in it: that
 * row's sum, the tails of the tiles before (in tile order) and t's head.  tail and
 * head are read through the L2 (__ldcg): in the one-launch form other blocks of
 * the same launch wrote them. */
template <typename T>
__device__ void csr_merge_fixup_tile(int64_t t, sps_index n, const sps_index *__restrict__ rowptr,
                                     const sps_index *__restrict__ plan, const T *tail, const T *head,
                                     const sps_cu_axpby_out<T> &out)
{
    const sps_index r = plan[2 * t];
    if (r >= n || plan[2 * t + 2] == r || !(rowptr[r] < plan[2 * t + 1])) return;
    int64_t f = t - 1; /* the first tile holding entries of row r: tiles f .. t-1 all end inside it */
    while (f > 0 && plan[2 * f] == r) f--;
    T s = sps_cu_ldcg(tail + f);
    for (int64_t u = f + 1; u < t; u++) s = s + sps_cu_ldcg(tail + u);
    out(r, s + sps_cu_ldcg(head + t));
}

/* The fix-up as a second launch, a warp a tile: large matrices, where a row may span
 * hundreds of tiles (arrow-1M-k4: four rows of 10^6 entries, 650 tiles each in f32).
 * One thread a tile walked those tiles back one dependent load at a time and summed
 * their tails in a chain: 112 us against cuSPARSE ALG1's 46 (H100, 2026-11-26).  Here
 * the warp finds the row's first tile by a 32-way search over the tiles' first rows
 * (nondecreasing in the tile) and sums the tails lane-strided, then by a fixed shuffle
 * tree: deterministic, the same tiles as csr_merge_fixup_tile in another order.
 * H100, spbench 2026-11-26: arrow-1M-k4 f32 112 -> 48.8 us (cuSPARSE ALG1 45.7),
 * f64 60.3 us (ALG1 64.1); powerlaw-2M unchanged (0.359 / 0.385 ms). */
template <typename T>
__global__ void csr_merge_fixup_kernel(sps_index n, int64_t tiles, const sps_index *__restrict__ rowptr,
                                       const sps_index *__restrict__ plan, const T *tail, const T *head, sps_cu_axpby_out<T> out)
{
    const int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32 + 1; /* uniform in the warp */
    const int lane = (int)(threadIdx.x & 31);
    if (t >= tiles) return;
    const sps_index r = plan[2 * t];
    if (r >= n || plan[2 * t + 2] == r || !(rowptr[r] < plan[2 * t + 1])) return;
    /* g: the first tile in [1, t) whose first row is r (t if none); tiles g .. t-1 all lie
       inside row r and tile g - 1 holds its beginning, as the thread form's walk finds */
    int64_t lo = 1, hi = t; /* plan[2 f] < r for f < lo, == r for f >= hi */
    while (hi - lo > 32) {
        const int64_t p = lo + ((hi - lo) * lane) / 32;
        const unsigned below = __ballot_sync(0xffffffffu, plan[2 * p] < r); /* lanes 0 .. c-1 */
        const int c = __popc(below);
        const int64_t nlo = c > 0 ? lo + ((hi - lo) * (c - 1)) / 32 + 1 : lo;
        hi = c < 32 ? lo + ((hi - lo) * c) / 32 : hi;
        lo = nlo;
    }
    const unsigned below = __ballot_sync(0xffffffffu, lo + lane < hi && plan[2 * (lo + lane)] < r);
    const int64_t f = lo + __popc(below) - 1;
    T s = zero_of<T>();
    for (int64_t u = f + lane; u < t; u += 32) s = s + sps_cu_ldcg(tail + u);
#pragma unroll
    for (int o = 16; o > 0; o /= 2) s = s + shfl_down(0xffffffffu, s, o, 32);
    if (lane == 0) out(r, s + sps_cu_ldcg(head + t));
}

template <typename T>
static sps_status csr_merge_plan_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, void *work)
{
    const int64_t tiles = sps_csr_merge_tiles(n, nnz, sizeof(T));
    const unsigned nb = (unsigned)((tiles + 1 + SPS_CU_THREADS - 1) / SPS_CU_THREADS);
    csr_merge_plan_kernel<<<nb, SPS_CU_THREADS, 0, sps_custream(ex)>>>(n, nnz, rowptr, tiles,
                                                                         sps_csr_merge_tile(sizeof(T)),
                                                                         (sps_index *)work);
    SPS_CU_LAUNCHED(ex, "csr_merge_plan_kernel");
    return SPS_OK;
}

/* Up to this many tiles the fix-up runs in the tile kernel's last block (one
 * launch); beyond, as its own kernel, one warp a tile (the last block would
 * walk tiles / 256 tiles a thread after everything else).  1024 tiles: 1.5M
 * items of f64 (rows + entries). */
constexpr int64_t csr_merge_fuse_tiles = 1024;

template <typename T>
static sps_status csr_spmv_merge_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                      const sps_index *col, const void *val, void *work, sps_cplx a, const void *x,
                                      sps_cplx b, void *y)
{
    const int64_t tiles = sps_csr_merge_tiles(n, nnz, sizeof(T));
    if (tiles == 0) return SPS_OK;
    const sps_index *plan = (const sps_index *)work;
    T *tail = (T *)((unsigned char *)work + sps_csr_merge_plan_bytes(n, nnz, sizeof(T))), *head = tail + tiles;
    const sps_cu_axpby_out<T> out = sps_cu_axpby_out_of<T>(a, b, y);
    cudaStream_t s = sps_custream(ex);
    unsigned *counter = (unsigned *)sps_csr_merge_counter((sps_index *)work, tiles);
    if (tiles > 1 && tiles <= csr_merge_fuse_tiles) {
        csr_merge_tile_kernel<T, true><<<(unsigned)tiles, SPS_MERGE_THREADS, 0, s>>>(
            n, rowptr, col, (const T *)val, (const T *)x, plan, tail, head, out, tiles, counter);
        SPS_CU_LAUNCHED(ex, "csr_merge_tile_kernel (fused fix-up)");
        return SPS_OK;
    }
    csr_merge_tile_kernel<T, false><<<(unsigned)tiles, SPS_MERGE_THREADS, 0, s>>>(
        n, rowptr, col, (const T *)val, (const T *)x, plan, tail, head, out, tiles, counter);
    SPS_CU_LAUNCHED(ex, "csr_merge_tile_kernel");
    if (tiles > 1) {
        const int64_t threads = (tiles - 1) * 32;
        csr_merge_fixup_kernel<T><<<(unsigned)((threads + SPS_CU_THREADS - 1) / SPS_CU_THREADS), SPS_CU_THREADS, 0, s>>>(
            n, tiles, rowptr, plan, tail, head, out);
        SPS_CU_LAUNCHED(ex, "csr_merge_fixup_kernel");
    }
    return SPS_OK;
}

} // namespace

#define SPS_CU_MERGE_ENTRIES(S, T)                                                                                 \
    extern "C" sps_status sps_cuda_csr_merge_plan_##S(sps_exec *ex, sps_index n, int64_t nnz,                  \
                                                      const sps_index *rowptr, void *work)                        \
    { return csr_merge_plan_impl<T>(ex, n, nnz, rowptr, work); }                                                  \
    extern "C" sps_status sps_cuda_csr_spmv_merge_##S(sps_exec *ex, sps_index n, sps_index m, int64_t nnz,     \
                                                      const sps_index *rowptr, const sps_index *col,              \
                                                      const void *val, void *work, sps_cplx a, const void *x,     \
                                                      sps_cplx b, void *y)                                        \
    {                                                                                                              \
        (void)m;                                                                                                   \
        return csr_spmv_merge_impl<T>(ex, n, nnz, rowptr, col, val, work, a, x, b, y);                            \
    }

SPS_CU_FOR_ALL_TYPES(SPS_CU_MERGE_ENTRIES)
