/* libspsolve — C = alpha op(A) + beta op(B) of HiSparse operands in one pass (sps_hs_small,
 * kernels/format_kernels_hisparse.h; formats/hisparse.c takes it where both lists hold at
 * most the small-sum option's slots).  The general sum's steps (add_trees and
 * hs_store_build there: each operand's list, one sort, the distinct keys and their values,
 * the levels' node starts, the sizes bottom-up, the subtree starts top-down, the pool and
 * the schedule) as loops over the same element steps, written once for both backends: the
 * CPU runs each loop in order (kernels/cpu/hisparse.inc, hisparse_build.c); the GPU runs them
 * in one block of 256 or 512 threads for lists of up to SPS_HS_SMALL_SLOTS slots (listed and
 * sorted inside: cub::BlockRadixSort), else on a cooperative grid of resident blocks after
 * hs_list and hs_sort_pairs (hs_merge_pairs where both lists are in order already), a barrier
 * (the block's or the grid's) between steps and prefix sums across the launch.  The result is
 * the general sum's tree and schedule byte for byte (tests/test_hisparse.c,
 * test_gpu_hisparse.c).
 *
 * Why a second path: the general sum queues some 70 launches, copies and stream-ordered
 * allocations and waits for the device four times; for a sum of a few thousand entries that
 * fixed cost is everything (0.3 ms against csrgeam2's 0.06: bench/results/hisparse.md).
 * Here it is two launches (after the lists' sort, for long lists) and one read of the
 * results' sizes between them: sps_hs_small_list, the caller's sort, sps_hs_small_unique, the
 * caller's values and sps_hs_small_shape in the first; the host then allocates C's pool and
 * schedule at their sizes; sps_hs_small_fill in the second.  Its scratch is sized by bounds
 * (nv entries, each level's d^(depth - l)-square blocks), so the option caps it. */
#ifndef SPS_HISPARSE_SMALL_H
#define SPS_HISPARSE_SMALL_H

#include "kernels/format_kernels_hisparse.h"

#if defined(__CUDACC__)
#include <cooperative_groups.h>
#endif

/* The loops: on the GPU every thread of the launch, grid-strided (one block for the smallest
 * sums; a cooperative grid of resident blocks above SPS_HS_SMALL_SLOTS); on the CPU one in
 * order.  SYNC between a step's writes and the next step's reads (a block's barrier, or the
 * grid's); ONE: a single thread of the launch. */
#if defined(__CUDA_ARCH__)
#define SPS_HSS_FOR(i, n)                                                                                \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t)(n);                   \
         i += (int64_t)gridDim.x * blockDim.x)
/* the same items as thread t's chunk of a scan (sps_hss_chunk): a loop that writes a scan's
 * terms so, and the scan reads them without a barrier between */
#define SPS_HSS_CHUNK_FOR(i, n) for (int64_t i = sps_hss_lo(n), i##_end = sps_hss_hi(n); i < i##_end; i++)
#define SPS_HSS_SYNC() sps_hss_sync()
#define SPS_HSS_ONE if (blockIdx.x == 0 && threadIdx.x == 0)
#define SPS_HSS_ADD(p, v) atomicAdd((unsigned long long *)(p), (unsigned long long)(v))
static __device__ inline void sps_hss_sync()
{
    if (gridDim.x == 1) __syncthreads(); /* uniform: a launch of one block, or a cooperative grid */
    else cooperative_groups::this_grid().sync();
}
#else
#define SPS_HSS_FOR(i, n) for (int64_t i = 0; i < (int64_t)(n); i++)
#define SPS_HSS_CHUNK_FOR(i, n) SPS_HSS_FOR(i, n)
#define SPS_HSS_SYNC() ((void)0)
#define SPS_HSS_ONE
#define SPS_HSS_ADD(p, v) (*(p) += (v))
#endif

/* The prefix sums take up to SPS_HSS_SCANS sums at once (a level's starts for every level, the
 * schedule's sums), through the same barriers.  The GPU's scan scratch: part, 32 slots a sum of
 * the block's shared memory; bsum, SPS_HSS_SCANS slots a block of a cooperative grid (backend
 * memory, w->bsum); NULL on the CPU */
typedef struct {
    int64_t *part, *bsum;
} sps_hss_scratch;

#if defined(__CUDA_ARCH__)
/* the block's exclusive scans of s[0..k), for any block of whole warps: each warp's sums by
 * shuffles, the warps' totals in part scanned by the first warp, two barriers; total[q] the
 * block's sum of s[q] */
static __device__ inline void sps_hss_block_exclusive(int64_t *s, int k, int64_t *part, int64_t *total)
{
    const int lane = (int)(threadIdx.x & 31), warp = (int)(threadIdx.x >> 5), nw = (int)(blockDim.x >> 5);
    int64_t v[SPS_HSS_SCANS];
#pragma unroll
    for (int q = 0; q < SPS_HSS_SCANS; q++) {
        if (q >= k) break;
        v[q] = s[q];
#pragma unroll
        for (int o = 1; o < 32; o *= 2) {
            const int64_t u = __shfl_up_sync(0xffffffffu, v[q], o);
            if (lane >= o) v[q] += u;
        }
        if (lane == 31) part[q * 32 + warp] = v[q];
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int q = 0; q < SPS_HSS_SCANS; q++) {
            if (q >= k) break;
            int64_t t = lane < nw ? part[q * 32 + lane] : 0;
#pragma unroll
            for (int o = 1; o < 32; o *= 2) {
                const int64_t u = __shfl_up_sync(0xffffffffu, t, o);
                if (lane >= o) t += u;
            }
            if (lane < nw) part[q * 32 + lane] = t;
        }
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < SPS_HSS_SCANS; q++) {
        if (q >= k) break;
        total[q] = part[q * 32 + nw - 1];
        s[q] = (warp ? part[q * 32 + warp - 1] : 0) + v[q] - s[q];
    }
}
/* The launch's prefix sums: each thread takes a contiguous chunk [lo, hi) of n items (the
 * chunks in thread order); sps_hss_launch_exclusive replaces s[q] by the sum of s[q] over the
 * threads before this one (the block's scans, then on a cooperative grid the blocks' totals,
 * summed by each warp: bsum[b k + q] is block b's) */
static __device__ inline void sps_hss_chunk(int64_t n, int64_t *lo, int64_t *hi)
{
    const int64_t T = (int64_t)gridDim.x * blockDim.x, t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t chunk = (n + T - 1) / T;
    *lo = t * chunk < n ? t * chunk : n, *hi = *lo + chunk < n ? *lo + chunk : n;
}
static __device__ inline int64_t sps_hss_lo(int64_t n)
{
    int64_t lo, hi;
    sps_hss_chunk(n, &lo, &hi);
    return lo;
}
static __device__ inline int64_t sps_hss_hi(int64_t n)
{
    int64_t lo, hi;
    sps_hss_chunk(n, &lo, &hi);
    return hi;
}
static __device__ inline void sps_hss_launch_exclusive(int64_t *s, int k, const sps_hss_scratch *sc)
{
    int64_t total[SPS_HSS_SCANS];
    sps_hss_block_exclusive(s, k, sc->part, total);
    if (gridDim.x > 1) {
        if (threadIdx.x < (unsigned)k) {
#pragma unroll
            for (int q = 0; q < SPS_HSS_SCANS; q++)
                if (q == (int)threadIdx.x) sc->bsum[blockIdx.x * k + q] = total[q];
        }
        cooperative_groups::this_grid().sync();
        const int lane = (int)(threadIdx.x & 31);
#pragma unroll
        for (int q = 0; q < SPS_HSS_SCANS; q++) {
            if (q >= k) break;
            int64_t o = 0;
            for (int b = lane; b < (int)blockIdx.x; b += 32) o += __ldcg(sc->bsum + b * k + q);
#pragma unroll
            for (int m = 16; m > 0; m /= 2) o += __shfl_xor_sync(0xffffffffu, o, m);
            s[q] += o;
        }
    }
}
#endif

/* a[q][0..n) for q < k replaced by their inclusive prefix sums (integers: the GPU's are the
 * CPU's loop's) */
static inline SPS_HS_HD void sps_hss_scan64(int64_t *const *a, int k, int64_t n, const sps_hss_scratch *sc)
{
#if defined(__CUDA_ARCH__)
    int64_t lo, hi, s[SPS_HSS_SCANS];
    sps_hss_chunk(n, &lo, &hi);
#pragma unroll
    for (int q = 0; q < SPS_HSS_SCANS; q++) {
        if (q >= k) break;
        s[q] = 0;
        for (int64_t i = lo; i < hi; i++) s[q] += a[q][i];
    }
    sps_hss_launch_exclusive(s, k, sc);
#pragma unroll
    for (int q = 0; q < SPS_HSS_SCANS; q++) {
        if (q >= k) break;
        int64_t run = s[q];
        for (int64_t i = lo; i < hi; i++) run += a[q][i], a[q][i] = run;
    }
    sps_hss_sync();
#else
    (void)sc;
    for (int q = 0; q < k; q++)
        for (int64_t i = 1; i < n; i++) a[q][i] += a[q][i - 1];
#endif
}

/* stats[leaf 4 + type] += cnt[type], stats[SPS_HSS_SLOTS] += cnt[4]: on the GPU summed over
 * each warp first (every thread of the launch calls it), then one atomic a warp and count */
static inline SPS_HS_HD void sps_hss_add_counts(int64_t *stats, int leaf, int64_t cnt[5])
{
#if defined(__CUDA_ARCH__)
#pragma unroll
    for (int q = 0; q < 5; q++)
#pragma unroll
        for (int o = 16; o > 0; o /= 2) cnt[q] += __shfl_down_sync(0xffffffffu, cnt[q], o);
    if (threadIdx.x & 31) return;
#endif
    for (int q = 0; q < 4; q++)
        if (cnt[q]) SPS_HSS_ADD(stats + leaf * 4 + q, cnt[q]);
    if (cnt[4]) SPS_HSS_ADD(stats + SPS_HSS_SLOTS, cnt[4]);
}

/* hs_starts of levels l0 .. l0 + k - 1 at once (k <= SPS_HSS_SCANS): start[q] of level l0 + q
 * (start[q][j] = the j-th entry marked <= l0 + q, start[q][its count] = n); at[e] = the entries
 * before e marked <= l0 + k - 1 (n + 1 of them); count[q] (where not NULL) the level's node
 * count.  The marks are mark[e], or where key is not NULL sps_hs_mark(g, key, e), stored into
 * made (then the same array as mark) as they are made; then also ukey[j] = key[start[k - 1][j]]
 * where ukey is not NULL. */
static inline SPS_HS_HD void sps_hss_starts(int64_t n, sps_hs_geom g, const uint64_t *key, const uint8_t *mark,
                                            uint8_t *made, int l0, int k, sps_index *at, sps_index *const *start,
                                            int64_t *count, uint64_t *ukey, const sps_hss_scratch *sc)
{
#if defined(__CUDA_ARCH__)
    /* one scan of the flags as they are made or read, the starts placed while the counts are
       written: each thread a contiguous chunk (its own marks: no barrier between), one scan
       of the k counts, two barriers of the launch */
    int64_t lo, hi, s[SPS_HSS_SCANS];
    sps_hss_chunk(n, &lo, &hi);
#pragma unroll
    for (int q = 0; q < SPS_HSS_SCANS; q++) s[q] = 0;
    for (int64_t e = lo; e < hi; e++) {
        const int m = key ? (made[e] = (uint8_t)sps_hs_mark(g, key, e)) : mark[e];
#pragma unroll
        for (int q = 0; q < SPS_HSS_SCANS; q++)
            if (q < k) s[q] += m <= l0 + q;
    }
    sps_hss_launch_exclusive(s, k, sc);
    int64_t last = 0; /* s[k - 1], kept apart: a run-time index would put s in local memory */
#pragma unroll
    for (int q = 0; q < SPS_HSS_SCANS; q++)
        if (q == k - 1) last = s[q];
    for (int64_t e = lo; e < hi; e++) {
        const int m = mark[e];
        at[e] = (sps_index)last;
        if (m <= l0 + k - 1) {
            if (ukey) ukey[last] = key[e];
            last++;
        }
#pragma unroll
        for (int q = 0; q < SPS_HSS_SCANS; q++)
            if (q < k && m <= l0 + q) start[q][s[q]++] = (sps_index)e;
    }
    if ((lo < hi && hi == n) || (n == 0 && blockIdx.x == 0 && threadIdx.x == 0)) {
        at[n] = (sps_index)last;
#pragma unroll
        for (int q = 0; q < SPS_HSS_SCANS; q++)
            if (q < k) {
                start[q][s[q]] = (sps_index)n;
                if (count) count[q] = s[q];
            }
    }
    sps_hss_sync();
#else
    (void)sc;
    int64_t s[SPS_HSS_SCANS] = {0};
    for (int64_t e = 0; e < n; e++) {
        const int m = key ? (made[e] = (uint8_t)sps_hs_mark(g, key, e)) : mark[e];
        at[e] = (sps_index)s[k - 1];
        if (ukey && m <= l0 + k - 1) ukey[s[k - 1]] = key[e];
        for (int q = 0; q < k; q++)
            if (m <= l0 + q) start[q][s[q]++] = (sps_index)e;
    }
    at[n] = (sps_index)s[k - 1];
    for (int q = 0; q < k; q++) {
        start[q][s[q]] = (sps_index)n;
        if (count) count[q] = s[q];
    }
#endif
}

/* out[q][0] = 0, out[q][i + 1] = out[q][i] + (what out[q][i + 1] held), q < k: the exclusive
 * sums hs_sizes and hs_sched_sums make, from terms the caller stored one slot up -- in a
 * SPS_HSS_CHUNK_FOR loop over the same n, so that each thread scans its own terms and no
 * barrier comes between */
static inline SPS_HS_HD void sps_hss_exclusive(int64_t *const *out, int k, int64_t n, const sps_hss_scratch *sc)
{
    int64_t *a[SPS_HSS_SCANS];
    for (int q = 0; q < SPS_HSS_SCANS; q++) /* constant bounds: a stays in registers */
        if (q < k) {
            SPS_HSS_ONE out[q][0] = 0;
            a[q] = out[q] + 1;
        }
    sps_hss_scan64(a, k, n, sc);
}

/* slot i of operand X's list (hs_list: its windows' slots, then its dense leaves' slots) */
static inline SPS_HS_HD void sps_hss_list_slot(int64_t i, sps_hs_sched X, size_t vs, int trans, sps_hs_geom g,
                                               uint64_t tag, uint64_t *key, uint64_t *src)
{
    const int64_t base = X.nwarps * SPS_HS_RUN;
    if (i < base) sps_hs_list_entry(i, X, vs, trans, g, tag, key, src);
    else sps_hs_list_slot(i - base, X, vs, trans, g, tag, key + base, src + base);
}

/* leaf i's terms of the schedule's sums (sps_hss_sched_sums): its sparse entries, its dense flag */
static inline SPS_HS_HD void sps_hss_sched_terms(sps_hs_level v, int64_t i, int64_t *so, int64_t *dI)
{
    const int dense = v.type[i] == SPS_HS_DENSE;
    so[i + 1] = dense ? 0 : v.start[i + 1] - v.start[i];
    dI[i + 1] = dense;
}

/* hs_sizes of level v (c: the next level, not read for leaves): each node's type and bytes,
 * stats[leaf 4 + type] and stats[SPS_HSS_SLOTS] added to, then v.S (sz: v.n of scratch).
 * Leaves with so and dI (not NULL): their schedule sums too, in the same scan (the one-pass
 * sum: two barriers of the launch fewer than sps_hss_sched_sums' own scan) */
static inline SPS_HS_HD void sps_hss_sizes(int d, int leaf, size_t vbytes, sps_hs_level v, sps_hs_level c, int64_t *sz,
                                           int64_t *stats, int64_t *so, int64_t *dI, const sps_hss_scratch *sc)
{
    int64_t cnt[5] = {0, 0, 0, 0, 0};
    SPS_HSS_CHUNK_FOR(i, v.n) {
        int64_t slots;
        sps_hs_size_at(i, d, leaf, vbytes, v, c, sz, &slots);
        cnt[v.type[i]]++, cnt[4] += slots;
        v.S[i + 1] = sz[i];
        if (so) sps_hss_sched_terms(v, i, so, dI);
    }
    sps_hss_add_counts(stats, leaf, cnt);
    int64_t *const all[3] = {v.S, so, dI};
    sps_hss_exclusive(all, so ? 3 : 1, v.n, sc);
}

/* the segments' sums (sI) of the leaves v from so, scanned already */
static inline SPS_HS_HD void sps_hss_sched_segs(sps_hs_level v, const int64_t *so, int64_t *sI,
                                                const sps_hss_scratch *sc)
{
    SPS_HSS_CHUNK_FOR(i, v.n) sI[i + 1] = sps_hs_segments(so[i], so[i + 1] - so[i]);
    sps_hss_exclusive(&sI, 1, v.n, sc);
}

/* hs_sched_sums over the leaves v: so, sI, dI the exclusive sums of their sparse entries,
 * segments and dense flags (v.n + 1 each) */
static inline SPS_HS_HD void sps_hss_sched_sums(sps_hs_level v, int64_t *so, int64_t *sI, int64_t *dI,
                                                const sps_hss_scratch *sc)
{
    SPS_HSS_CHUNK_FOR(i, v.n) sps_hss_sched_terms(v, i, so, dI);
    int64_t *const both[2] = {so, dI};
    sps_hss_exclusive(both, 2, v.n, sc);
    sps_hss_sched_segs(v, so, sI, sc);
}

/* Every call below reads w where the caller keeps it (the GPU: the kernel's parameter, never
 * copied: a copy per thread had been 1 KB of stack, and its loads throttled the kernels) and
 * keeps what varies per call apart: n, the levels' node counts (each thread's own, the same
 * in all), sc (the GPU's scan scratch). */

/* level l of w with its node count */
static inline SPS_HS_HD sps_hs_level sps_hss_level(const sps_hs_small *w, const sps_index *n, int l)
{
    sps_hs_level v = w->lv[l];
    v.n = n[l];
    return v;
}

/* 1. both lists, A's then B's, then empty slots up to `slots` (sps_hs_small_slots, or the GPU's tile) */
static inline SPS_HS_HD void sps_hs_small_list(const sps_hs_small *w, int64_t slots)
{
    const int64_t ca = sps_hs_list_slots(w->xa), cb = sps_hs_list_slots(w->xb);
    SPS_HSS_FOR(i, slots) {
        if (i < ca) sps_hss_list_slot(i, w->xa, w->vs, w->ta, w->g, 0, w->key, w->src);
        else if (i < ca + cb)
            sps_hss_list_slot(i - ca, w->xb, w->vs, w->tb, w->g, SPS_HS_TAG_B, w->key + ca, w->src + ca);
        else w->key[i] = sps_hs_nokey(w->g), w->src[i] = 0;
    }
    SPS_HSS_SYNC();
}

/* 2. (after the caller's sort of key and src by the key's low sps_hs_key_bits + 1 bits) the
 * distinct keys: ustart (their first members), ukey; returns their count */
static inline SPS_HS_HD sps_index sps_hs_small_unique(const sps_hs_small *w, const sps_hss_scratch *sc)
{
    SPS_HSS_FOR(q, SPS_HSS_COUNT) w->stats[q] = 0; /* for the shape (the starts' barrier between) */
    SPS_HSS_ONE w->lv[0].st[0] = 16;                  /* the root's subtree after the pool's header */
    sps_index *const us[1] = {w->ustart};
    sps_hss_starts(w->nv, w->g, w->key, w->mark, w->mark, w->g.depth, 1, w->at, us, NULL, w->ukey, sc);
    return w->at[w->nv];
}

/* 3. (after the caller's values, val[u] for u < nu) hs_store_build's steps 2-4 and the
 * schedule's sums: the levels' node starts (the leaves last, their `at` kept: lv[depth - 1].at
 * is w->at), the node sizes and subtree bytes bottom-up, the subtree starts top-down, the
 * leaves' sums; w->stats */
static inline SPS_HS_HD void sps_hs_small_shape(const sps_hs_small *w, sps_index nu, const sps_hss_scratch *sc)
{
    const sps_hs_geom g = w->g;
    const int D = g.depth;
    int64_t *st = w->stats;
    sps_index n[SPS_HS_SMALL_DEPTH], *start[SPS_HS_SMALL_DEPTH];
    for (int l = 0; l < SPS_HS_SMALL_DEPTH; l++) /* constant bounds: start stays in registers */
        if (l < D) start[l] = w->lv[l].start;
    sps_hss_starts(nu, g, w->ukey, w->mark, w->mark, 0, D, w->at, start, st + SPS_HSS_LEVEL, NULL, sc);
    for (int l = 0; l < D; l++) n[l] = (sps_index)st[SPS_HSS_LEVEL + l];
    for (int l = D - 1; l >= 0; l--) { /* the leaves' with the schedule's entry and dense sums */
        const int leaf = l == D - 1;
        sps_hss_sizes(g.d, leaf, leaf ? w->vs : 4, sps_hss_level(w, n, l), sps_hss_level(w, n, leaf ? l : l + 1),
                      w->sz, st, leaf ? w->so : NULL, leaf ? w->dI : NULL, sc);
    }
    for (int l = 0; l + 1 < D; l++) { /* nothing here reads the last level's: no barrier after it */
        const sps_hs_level p = sps_hss_level(w, n, l), c = sps_hss_level(w, n, l + 1);
        SPS_HSS_FOR(j, c.n) sps_hs_offset_at(j, p, c);
        if (l + 2 < D) SPS_HSS_SYNC();
    }
    const sps_hs_level v = sps_hss_level(w, n, D - 1);
    sps_hss_sched_segs(v, w->so, w->sI, sc);
    SPS_HSS_ONE {
        st[SPS_HSS_TOTAL] = w->lv[0].S[1];
        st[SPS_HSS_RTYPE] = w->lv[0].type[0];
        st[SPS_HSS_ROWN] = w->lv[0].own[0];
        st[SPS_HSS_NU] = nu;
        st[SPS_HSS_SO] = w->so[v.n];
        st[SPS_HSS_NSEG] = w->sI[v.n];
        st[SPS_HSS_NDENSE] = w->dI[v.n];
    }
}

/* 4. (a second call, w->pool and the schedule's arrays allocated at the sizes in w->stats)
 * the pool zeroed, every entry and child reference written (hs_fill_leaves, hs_fill_inner),
 * the schedule (hs_sched) */
static inline SPS_HS_HD void sps_hs_small_fill(const sps_hs_small *w)
{
    const int D = w->g.depth;
    const int64_t *st = w->stats, words = (16 + st[SPS_HSS_TOTAL]) / 8, nu = st[SPS_HSS_NU];
    sps_index n[SPS_HS_SMALL_DEPTH];
    for (int l = 0; l < D; l++) n[l] = (sps_index)st[SPS_HSS_LEVEL + l];
    uint64_t *pool = (uint64_t *)(void *)w->pool;
    SPS_HSS_FOR(q, words) pool[q] = 0;
    SPS_HSS_SYNC();
    const sps_hs_level leaves = sps_hss_level(w, n, D - 1);
    SPS_HSS_FOR(e, nu) sps_hs_fill_entry(e, w->g, w->vs, w->ukey, NULL, w->val, leaves, w->pool);
    for (int l = 0; l + 1 < D; l++) {
        const sps_hs_level p = sps_hss_level(w, n, l), c = sps_hss_level(w, n, l + 1);
        SPS_HSS_FOR(j, c.n) sps_hs_fill_child(j, w->g, l, w->ukey, p, c, w->pool);
    }
    SPS_HSS_FOR(i, leaves.n)
        sps_hs_sched_at(i, w->g, w->ukey, leaves, w->so, w->sI, w->dI, w->sparse, w->dense, w->warp_seg);
}

#endif
