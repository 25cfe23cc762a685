/* libspsolve — CUDA CSR and COO SpMV / SpMV^T, f32/f64/c32/c64 from one set of templates.
 *
 * csr_spmv   y = a A x + b y (b == 0: y not read).  One pass over the nonzeros
 *            split into equal shares (not rows): the global balance of Hola /
 *            merge-based SpMV without their preprocessing or fix-up kernel.
 *            - Grid: persistent, as many 256-thread blocks as are resident at
 *              once (occupancy x SMs, computed once per context); block b takes
 *              entries [nnz b / B, nnz (b+1) / B) exactly (B <= grid, at least a
 *              tile each), so no block gets a row's worth more work than another,
 *              whatever the row lengths.  nnz is read on the device (rowptr[0],
 *              rowptr[n]): no host round trip.
 *            - Tiles of 2048 entries, 8 contiguous per thread, loaded as 16-byte
 *              vectors (val, col) through the read-only path and issued before the
 *              block stages rowptr[r0 ..] (the rows meeting the tile, in rounds of
 *              256 into shared memory) so the two latencies overlap; x is gathered
 *              once the columns arrive.  A thread finds its first row by binary
 *              search in the staged rowptr and walks its 8 entries: rows that end
 *              inside its span are written at once (empty rows met on the way too),
 *              the first row it ends waits for the carry of the threads before it,
 *              given by a CUB segmented BlockScan whose running prefix carries the
 *              open row from tile to tile.  Runs of empty rows longer than the
 *              stage (9 x 256 rows) read rowptr from global memory instead.
 *            - Rows crossing blocks: a block whose last row goes on publishes that
 *              row's partial sum and a flag (generation-stamped, so no reset pass);
 *              the block holding the row's end reads the partials of the blocks
 *              before it in block order (they are running: the grid is resident)
 *              and writes the row.  A row of 1M entries is thus summed by ~1M/share
 *              blocks in parallel, with no atomics.
 *            Deterministic: the shares depend on nnz and the grid (fixed per
 *            device), every summation order on the matrix only.  Traffic:
 *            nnz (4 + S) + (n + 1) 4 bytes for A, x gathered, n S written (+ n S
 *            read when b != 0).
 * csr_spmvt  y = a A^T x + b y (y of length m) without forming A^T: y = b y (or 0)
 *            in one pass, then row groups ("vector CSR", Bell & Garland SC'09
 *            §4.2: TPR = largest power of two <= nnz / n lanes a row, in [1, 32];
 *            rows longer than max(1024, 64 TPR) by a whole block) scatter a val[k] x[i] into
 *            y[col[k]] with atomicAdd (complex: its two components).  NOT
 *            bit-reproducible (the order of the atomic adds varies).
 * coo_spmv   y = a A x + b y, entries sorted by row.  Segmented reduction
 *            (merge-free "flat" COO, cf. Bell & Garland §4.4): y = b y first; the
 *            entries are cut into at most 2048 chunks (a function of nnz only),
 *            one block per chunk, processed in tiles of 256 x 4 entries by a
 *            CUB BlockScan with a segmented-sum operator whose running prefix
 *            carries a row across tiles.  Rows strictly inside a chunk are
 *            written by their block; the chunk's first and last rows go to a
 *            carry list (2 per block, in the workspace), and a fix-up kernel lets
 *            the first block holding a row sum that row's carries in block order.
 *            Deterministic (no atomics; fixed chunks and trees): bit-reproducible.
 *            Traffic: nnz (8 + S) for A, x gathered, y read and written once.
 * coo_spmvt  y = b y, then one thread per entry: atomicAdd(y[col], a val x[row]).
 *            NOT bit-reproducible.
 *
 * Sums are in T, as the CPU reference (kernels/cpu/spmv.inc). */
#include "kernels/cuda/common.cuh"

#include <limits.h>

namespace {

/* ---------------------------------------------------------------- y = b y */
template <typename T> struct scale_y_op {
    T b; int beta_zero; T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { y[i] = beta_zero ? zero_of<T>() : b * y[i]; }
};
template <typename T> static sps_status scale_y(sps_context ctx, sps_index m, sps_cplx b, void *y)
{
    const int bz = b.re == 0.0 && b.im == 0.0;
    return sps_cuda_foreach(ctx, m, scale_y_op<T>{sc<T>::from(b), bz, (T *)y});
}

/* ---------------------------------------------------------------- segmented sums (CSR, COO) */
/* A segment-sum scan element: f = 1 when a new row starts here. */
template <typename T> struct segv {
    int f;
    T v;
};
template <typename T> struct seg_op {
    __device__ segv<T> operator()(const segv<T> &a, const segv<T> &b) const
    {
        segv<T> r;
        r.f = a.f | b.f;
        r.v = b.f ? b.v : a.v + b.v;
        return r;
    }
};
/* The running prefix between tiles of one block (called by the first warp). */
template <typename T> struct seg_prefix {
    segv<T> run;
    __device__ segv<T> operator()(const segv<T> &tile_total)
    {
        segv<T> old = run;
        run = seg_op<T>()(run, tile_total);
        return old;
    }
};

/* ---------------------------------------------------------------- CSR SpMV: nnz-split, one pass */
#define CSR_THREADS 256
#define CSR_ITEMS 8                             /* contiguous entries per thread and tile */
#define CSR_TILE (CSR_THREADS * CSR_ITEMS)      /* 2048 entries */
#define CSR_STAGE_ROUNDS 9                      /* rowptr staged per tile: up to 9 x 256 values */
#define CSR_STAGE (CSR_STAGE_ROUNDS * CSR_THREADS)

/* Last r in [lo, hi] with rowptr[r] <= target, given rowptr[lo] <= target (rowptr
 * is non-decreasing).  The whole warp calls it: 32 probes a round cut the range
 * 32-fold, so 2M rows take 5 dependent loads.  Uniform result. */
__device__ sps_index csr_warp_last_le(const sps_index *rowptr, sps_index lo, sps_index hi, int64_t target)
{
    const int lane = threadIdx.x & 31;
    while (hi - lo >= 32) {
        const sps_index p = lo + (sps_index)(((int64_t)hi - lo) * (lane + 1) / 33); /* lo <= p < hi, non-decreasing */
        const int c = __popc(__ballot_sync(0xffffffffu, rowptr[p] <= target));      /* probes 0 .. c-1 hold */
        const sps_index plo = __shfl_sync(0xffffffffu, p, c > 0 ? c - 1 : 0);
        const sps_index phi = __shfl_sync(0xffffffffu, p, c < 32 ? c : 31);
        if (c > 0) lo = plo;
        if (c < 32) hi = phi - 1; /* c = 0: p_0 > lo, since rowptr[lo] <= target */
    }
    const sps_index p = lo + lane;
    return lo + __popc(__ballot_sync(0xffffffffu, p <= hi && rowptr[p] <= target)) - 1;
}

/* ITEMS values of T from p, 16-byte aligned, as uint4 loads through the read-only path. */
template <typename T> __device__ inline void csr_load_vec(const T *p, T (&out)[CSR_ITEMS])
{
    static_assert((CSR_ITEMS * sizeof(T)) % 16 == 0, "vector width");
    union { uint4 u[CSR_ITEMS * sizeof(T) / 16]; T t[CSR_ITEMS]; } buf;
#pragma unroll
    for (int i = 0; i < (int)(CSR_ITEMS * sizeof(T) / 16); i++) buf.u[i] = __ldg((const uint4 *)p + i);
#pragma unroll
    for (int i = 0; i < CSR_ITEMS; i++) out[i] = buf.t[i];
}

template <typename T> struct csr_out {
    T a, b; int beta_zero; T *y;
    __device__ void row(sps_index r, T s) const { y[r] = beta_zero ? a * s : a * s + b * y[r]; }
    __device__ void empty(sps_index r) const { y[r] = beta_zero ? zero_of<T>() : b * y[r]; }
};

/* The carries a block publishes (csr_spmv_kernel step 5): value, then flag = generation + 1. */
template <typename T> struct csr_carries {
    T *val; unsigned long long *flag; unsigned *done; unsigned long long *gen;
};

template <typename T, bool VEC>
__global__ void __launch_bounds__(CSR_THREADS)
    csr_spmv_kernel(sps_index n, const sps_index *__restrict__ rowptr, const sps_index *__restrict__ col,
                    const T *__restrict__ val, const T *__restrict__ x, csr_out<T> out, csr_carries<T> cc)
{
    typedef cub::BlockScan<segv<T>, CSR_THREADS> BS;
    __shared__ typename BS::TempStorage scan_tmp;
    __shared__ sps_index s_rp[CSR_STAGE];
    __shared__ sps_index s_r0, s_nrows;
    __shared__ int s_cont, s_has_own;
    __shared__ T s_own;

    const int64_t off = rowptr[0], end = rowptr[n], nnz = end - off;
    if (nnz == 0) { /* every row empty: y = b y */
        for (sps_index r = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); r < n;
             r += (sps_index)(gridDim.x * blockDim.x))
            out.empty(r);
        return;
    }
    /* 1. this block's entries: an exact equal share, at least a tile each */
    const int64_t want = (nnz + CSR_TILE - 1) / CSR_TILE;
    const int B = want < (int64_t)gridDim.x ? (int)want : (int)gridDim.x;
    if ((int)blockIdx.x >= B) return; /* uniform */
    const unsigned long long gen = *(volatile unsigned long long *)cc.gen;
    const int64_t blo = off + nnz * blockIdx.x / B, bhi = off + nnz * (blockIdx.x + 1) / B;
    if (threadIdx.x < 32) {
        const sps_index r = csr_warp_last_le(rowptr, 0, n - 1, blo); /* the row holding entry blo */
        if (threadIdx.x == 0) { s_r0 = r; s_cont = 0; s_has_own = 0; }
    }
    __syncthreads();
    const sps_index r_first = s_r0;
    const bool cont_in = rowptr[r_first] < blo; /* the row began in an earlier block */
    if (blockIdx.x == 0)                        /* leading empty rows */
        for (sps_index r = (sps_index)threadIdx.x; r < r_first; r += CSR_THREADS) out.empty(r);

    seg_prefix<T> prefix; /* the running segment across this block's tiles (warp 0's copy is used) */
    prefix.run.f = 0;
    prefix.run.v = zero_of<T>();
    sps_index r0 = r_first;
    for (int64_t tb = blo & ~(int64_t)(CSR_ITEMS - 1); tb < bhi; tb += CSR_TILE) {
        const int64_t tstart = tb > blo ? tb : blo, tend = tb + CSR_TILE < bhi ? tb + CSR_TILE : bhi;
        const int64_t e0 = tb + (int64_t)threadIdx.x * CSR_ITEMS;
        const int64_t kb = e0 > tstart ? e0 : tstart, ke = e0 + CSR_ITEMS < tend ? e0 + CSR_ITEMS : tend;
        /* 2. issue this thread's loads first; the row staging below overlaps them */
        T v[CSR_ITEMS];
        sps_index c[CSR_ITEMS];
        if (VEC && kb < ke && e0 >= off && e0 + CSR_ITEMS <= end) {
            csr_load_vec(val + e0, v);
            union { uint4 u[CSR_ITEMS / 4]; sps_index i[CSR_ITEMS]; } cb;
#pragma unroll
            for (int i = 0; i < CSR_ITEMS / 4; i++) cb.u[i] = __ldg((const uint4 *)(col + e0) + i);
#pragma unroll
            for (int i = 0; i < CSR_ITEMS; i++) c[i] = cb.i[i];
        } else {
#pragma unroll
            for (int i = 0; i < CSR_ITEMS; i++) {
                const int64_t k = e0 + i;
                const bool in = k >= kb && k < ke;
                v[i] = in ? ldg_t(val + k) : zero_of<T>();
                c[i] = in ? __ldg(col + k) : 0;
            }
        }
        /* 3. stage rowptr[r0 ..] while it is <= tend (rows that meet this tile, and
         *    the empty rows at its end), plus one sentinel: rounds of 256 */
        int nrows = -1;
        for (int round = 0; round < CSR_STAGE_ROUNDS; round++) {
            const int i = round * CSR_THREADS + (int)threadIdx.x;
            const int64_t r = (int64_t)r0 + i;
            bool go = false;
            if (r <= n) {
                const sps_index rv = rowptr[r];
                s_rp[i] = rv;
                go = rv <= tend && r < n;
            }
            const int ngo = __syncthreads_count(go); /* also publishes s_rp */
            if (ngo < CSR_THREADS) { nrows = round * CSR_THREADS + ngo; break; }
        }
        const sps_index *rp = s_rp;
        if (nrows < 0) { /* more than CSR_STAGE rows meet this tile (runs of empty rows): read rowptr itself */
            if (threadIdx.x < 32) {
                const sps_index rl = csr_warp_last_le(rowptr, r0, n - 1, tend);
                if (threadIdx.x == 0) s_nrows = rl - r0 + 1;
            }
            __syncthreads();
            nrows = s_nrows;
            rp = rowptr + r0;
        }
        /* 4. products, then this thread's rows: rows ending inside its span are
         *    complete except the first (it needs the carry of the threads before) */
        T p[CSR_ITEMS];
#pragma unroll
        for (int i = 0; i < CSR_ITEMS; i++) {
            const int64_t k = e0 + i;
            p[i] = (k >= kb && k < ke) ? v[i] * ldg_t(x + c[i]) : zero_of<T>();
        }
        segv<T> mine;
        mine.f = 0;
        mine.v = zero_of<T>();
        T head = zero_of<T>();
        int head_j = -1;
        if (kb < ke) {
            int lo = 0, hi = nrows - 1; /* last j with rp[j] <= kb (rp[0] <= tstart <= kb) */
            while (lo < hi) {
                const int mid = (lo + hi + 1) >> 1;
                if (rp[mid] <= kb) lo = mid; else hi = mid - 1;
            }
            int j = lo;
            int64_t nend = rp[j + 1];
            T s = zero_of<T>();
            bool ended = false;
#pragma unroll
            for (int i = 0; i < CSR_ITEMS; i++) {
                const int64_t k = e0 + i;
                if (k < kb || k >= ke) continue;
                s = s + p[i];
                ended = k + 1 == nend;
                if (ended) {
                    if (head_j < 0) { head = s; head_j = j; }
                    else out.row(r0 + j, s);
                    s = zero_of<T>();
                    for (j++; j < nrows && rp[j + 1] == rp[j]; j++) out.empty(r0 + j);
                    nend = j < nrows ? (int64_t)rp[j + 1] : INT64_MAX;
                }
            }
            mine.f = head_j >= 0;
            mine.v = s;
            if (ke == bhi && !ended) s_cont = 1; /* the block's last row goes on in the next block */
        }
        /* 5. carries between threads (and tiles: the prefix) by a segmented scan */
        segv<T> before;
        BS(scan_tmp).ExclusiveScan(mine, before, seg_op<T>(), prefix);
        if (head_j >= 0) {
            const T tot = before.v + head;
            if (cont_in && head_j == 0 && r0 == r_first) { s_own = tot; s_has_own = 1; }
            else out.row(r0 + head_j, tot);
        }
        r0 += nrows - 1; /* the last row that starts <= tend holds entry tend (next tile) */
        __syncthreads(); /* s_rp, scan_tmp reused */
    }
    /* 6. rows crossing blocks: publish this block's open row; the block holding a
     *    row's end adds the carries of the blocks before it in block order */
    if (threadIdx.x == 0) {
        if (s_cont) {
            cc.val[blockIdx.x] = prefix.run.v;
            __threadfence();
            atomicExch(&cc.flag[blockIdx.x], gen + 1);
        }
        if (s_has_own) {
            const int64_t rs = rowptr[r_first];
            int q = (int)((rs - off) * B / nnz);
            while (q + 1 < B && off + nnz * (q + 1) / B <= rs) q++;
            while (q > 0 && off + nnz * q / B > rs) q--;
            T tot = zero_of<T>();
            for (; q < (int)blockIdx.x; q++) {
                while (*(volatile unsigned long long *)&cc.flag[q] != gen + 1) __nanosleep(64);
                __threadfence();
                tot = tot + sps_cu_ldcg(&cc.val[q]);
            }
            out.row(r_first, tot + s_own);
        }
        __threadfence();
        if (atomicAdd(cc.done, 1u) == (unsigned)B - 1) { /* every block has read gen: next call's generation */
            *cc.done = 0;
            *cc.gen = gen + 1;
        }
    }
}

/* ---------------------------------------------------------------- CSR^T */
/* Threads per row from the average row length (see the header). */
__device__ inline int csr_tpr(sps_index n, const sps_index *rowptr)
{
    const int64_t nnz = (int64_t)rowptr[n] - rowptr[0];
    const int64_t avg = n > 0 ? nnz / n : 0;
    int t = 1;
    while (t < 32 && 2 * t <= avg) t *= 2;
    return t;
}

/* Long rows: a row of more than max(1024, 64 TPR) entries would keep one group
 * of TPR lanes busy long after the rest of the grid is done (one row of 200k,
 * power-law degree distributions), so each block first sums the long rows of
 * its own slice of rows [n b / B, n (b+1) / B) (B: the blocks that have rows)
 * with all its 256 threads (CUB
 * BlockReduce: a fixed tree), and the row groups skip them.  Which rows are long
 * depends on the matrix only: still deterministic.  Cost when no row is long:
 * one more read of the block's slice of rowptr. */
#define CSR_LONG_MIN 1024
__device__ inline sps_index csr_long_len(int tpr) { return 64 * tpr > CSR_LONG_MIN ? 64 * tpr : CSR_LONG_MIN; }


/* Blocks that have rows: the grid is sized for TPR = 32; with TPR lanes a row,
 * ceil(n TPR / 256) blocks cover every row once, the others return at once. */
__device__ inline unsigned csr_active_blocks(sps_index n, int tpr)
{
    const int64_t need = ((int64_t)n * tpr + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    return need < (int64_t)gridDim.x ? (unsigned)(need > 0 ? need : 1) : gridDim.x;
}

/* Calls row(i) with the whole block for every long row i of this block's slice, in order. */
template <typename F>
__device__ void csr_for_long_rows(sps_index n, const sps_index *rowptr, sps_index long_len, unsigned nblocks, F row)
{
    __shared__ unsigned char flag[SPS_CU_THREADS];
    const sps_index lo = (sps_index)((int64_t)n * blockIdx.x / nblocks);
    const sps_index hi = (sps_index)((int64_t)n * (blockIdx.x + 1) / nblocks);
    for (sps_index base = lo; base < hi; base += SPS_CU_THREADS) {
        const sps_index r = base + (sps_index)threadIdx.x;
        const int lg = r < hi && rowptr[r + 1] - rowptr[r] > long_len;
        if (__syncthreads_count(lg) == 0) continue; /* uniform: no long row here */
        flag[threadIdx.x] = (unsigned char)lg;
        __syncthreads();
        for (int j = 0; j < SPS_CU_THREADS; j++)
            if (flag[j]) row(base + j); /* uniform */
        __syncthreads(); /* flag reused */
    }
}

template <typename T> struct csrt_long_row {
    const sps_index *rowptr, *col; const T *val, *x; T a; T *y;
    __device__ void operator()(sps_index i) const
    {
        const T ax = a * x[i];
        for (sps_index k = rowptr[i] + (sps_index)threadIdx.x; k < rowptr[i + 1]; k += SPS_CU_THREADS)
            atomic_add(&y[col[k]], val[k] * ax);
    }
};

template <typename T, int TPR>
__device__ void csrt_rows(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, T a, const T *x,
                          T *y, sps_index long_len, unsigned nblocks)
{
    const int lane = threadIdx.x & (TPR - 1);
    const sps_index groups = (sps_index)(nblocks * blockDim.x / TPR);
    for (sps_index i = (sps_index)((blockIdx.x * blockDim.x + threadIdx.x) / TPR); i < n; i += groups) {
        const sps_index beg = rowptr[i], end = rowptr[i + 1];
        if (end - beg > long_len) continue; /* done by csrt_long_rows */
        const T ax = a * x[i];
        for (sps_index k = beg + lane; k < end; k += TPR) atomic_add(&y[col[k]], val[k] * ax);
    }
}

template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    csr_spmvt_kernel(sps_index n, const sps_index *rowptr, const sps_index *col, const T *val, T a, const T *x, T *y)
{
    const int tpr = csr_tpr(n, rowptr);
    const unsigned nb = csr_active_blocks(n, tpr);
    if (blockIdx.x >= nb) return; /* uniform */
    const sps_index L = csr_long_len(tpr);
    csr_for_long_rows(n, rowptr, L, nb, csrt_long_row<T>{rowptr, col, val, x, a, y});
    switch (tpr) {
    case 1: csrt_rows<T, 1>(n, rowptr, col, val, a, x, y, L, nb); break;
    case 2: csrt_rows<T, 2>(n, rowptr, col, val, a, x, y, L, nb); break;
    case 4: csrt_rows<T, 4>(n, rowptr, col, val, a, x, y, L, nb); break;
    case 8: csrt_rows<T, 8>(n, rowptr, col, val, a, x, y, L, nb); break;
    case 16: csrt_rows<T, 16>(n, rowptr, col, val, a, x, y, L, nb); break;
    default: csrt_rows<T, 32>(n, rowptr, col, val, a, x, y, L, nb); break;
    }
}

/* Grid for the SpMV^T row groups: enough threads for 32 per row at most, capped at
 * 32 blocks per SM (the kernel is grid-stride whatever TPR turns out to be). */
static unsigned csr_grid(sps_context ctx, sps_index n) { return sps_cu_grid(ctx, (int64_t)n * 32); }

/* ---------------------------------------------------------------- COO */
#define COO_THREADS 256
#define COO_ITEMS 4
#define COO_TILE (COO_THREADS * COO_ITEMS)

/* Entries [lo, hi) of this block's chunk; carries: crow[2b], cval[2b] for the
 * chunk's first row, crow[2b+1], cval[2b+1] for its last row (-1: same as first). */
template <typename T>
__global__ void __launch_bounds__(COO_THREADS) coo_seg_kernel(int64_t nnz, int64_t chunk, const sps_index *row,
                                                             const sps_index *col, const T *val, T a, const T *x, T *y,
                                                             sps_index *crow, T *cval)
{
    typedef cub::BlockScan<segv<T>, COO_THREADS> BS;
    __shared__ typename BS::TempStorage tmp;
    const int64_t lo = (int64_t)blockIdx.x * chunk;
    const int64_t hi = lo + chunk < nnz ? lo + chunk : nnz;
    if (lo >= hi) { /* uniform: no entries (cannot happen with the host's sizing, kept for safety) */
        if (threadIdx.x == 0) { crow[2 * blockIdx.x] = -1; crow[2 * blockIdx.x + 1] = -1; }
        return;
    }
    const sps_index first_row = row[lo], last_row = row[hi - 1];
    seg_prefix<T> prefix;
    prefix.run.f = 0;
    prefix.run.v = zero_of<T>();
    for (int64_t base = lo; base < hi; base += COO_TILE) {
        segv<T> it[COO_ITEMS];
        sps_index r[COO_ITEMS];
#pragma unroll
        for (int j = 0; j < COO_ITEMS; j++) {
            const int64_t k = base + (int64_t)threadIdx.x * COO_ITEMS + j;
            if (k < hi) {
                r[j] = row[k];
                it[j].f = (k == lo || row[k - 1] != r[j]) ? 1 : 0;
                it[j].v = val[k] * x[col[k]];
            } else {
                r[j] = -1;
                it[j].f = 1;
                it[j].v = zero_of<T>();
            }
        }
        __syncthreads(); /* tmp reused from the previous tile */
        BS(tmp).InclusiveScan(it, it, seg_op<T>(), prefix);
#pragma unroll
        for (int j = 0; j < COO_ITEMS; j++) {
            const int64_t k = base + (int64_t)threadIdx.x * COO_ITEMS + j;
            if (k >= hi) continue;
            if (k + 1 < hi && row[k + 1] == r[j]) continue; /* not the end of its row in this chunk */
            if (r[j] == first_row) cval[2 * blockIdx.x] = it[j].v;
            else if (r[j] == last_row) cval[2 * blockIdx.x + 1] = it[j].v;
            else y[r[j]] = y[r[j]] + a * it[j].v; /* the only writer of this row */
        }
    }
    if (threadIdx.x == 0) {
        crow[2 * blockIdx.x] = first_row;
        crow[2 * blockIdx.x + 1] = last_row != first_row ? last_row : -1;
    }
}

/* One thread per carry entry e; the first entry of a row (in block order) sums
 * all of that row's entries in order and adds the total to y. */
template <typename T>
__global__ void __launch_bounds__(COO_THREADS) coo_fixup_kernel(int ne, const sps_index *crow, const T *cval, T a, T *y)
{
    const int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= ne) return;
    const sps_index r = crow[e];
    if (r < 0) return;
    for (int p = e - 1; p >= 0; p--) { /* previous real entry: at most one -1 to skip */
        if (crow[p] < 0) continue;
        if (crow[p] == r) return; /* not the first holder of row r */
        break;
    }
    T s = cval[e];
    for (int q = e + 1; q < ne; q++) {
        if (crow[q] < 0) continue;
        if (crow[q] != r) break;
        s = s + cval[q];
    }
    y[r] = y[r] + a * s;
}

template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    coo_spmvt_kernel(int64_t nnz, const sps_index *row, const sps_index *col, const T *val, T a, const T *x, T *y)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nnz; k += stride)
        atomic_add(&y[col[k]], val[k] * (a * x[row[k]]));
}

} // namespace

/* ---------------------------------------------------------------- implementations */
/* Scalar-type index of the per-context grid cache. */
template <typename T> static int csr_type_index() { return (sizeof(T) == 8 && !sc<T>::cplx) + 2 * sc<T>::cplx + (sizeof(T) == 16); }

/* The persistent grid of csr_spmv_kernel: as many blocks as fit on the device at
 * once (so a block waiting for the carry of an earlier one never waits for a block
 * that is not running), at most SPS_CU_CSR_MAX_BLOCKS; computed once per context. */
template <typename T> static sps_status csr_spmv_grid(sps_context ctx, int *grid)
{
    int *g = &sps_cust(ctx)->csr_grid[csr_type_index<T>()];
    if (*g == 0) {
        int per_sm_vec = 0, per_sm = 0;
        SPS_CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm_vec, csr_spmv_kernel<T, true>, CSR_THREADS, 0));
        SPS_CU(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, csr_spmv_kernel<T, false>, CSR_THREADS, 0));
        int64_t b = (int64_t)sps_cust(ctx)->sms * (per_sm < per_sm_vec ? per_sm : per_sm_vec);
        if (b > SPS_CU_CSR_MAX_BLOCKS) b = SPS_CU_CSR_MAX_BLOCKS;
        *g = b > 0 ? (int)b : 1;
    }
    *grid = *g;
    return SPS_OK;
}

template <typename T>
static sps_status csr_spmv_impl(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                                const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    (void)m;
    if (n <= 0) return SPS_OK;
    int grid;
    SPS_CHECK(csr_spmv_grid<T>(ctx, &grid));
    const csr_out<T> out{sc<T>::from(a), sc<T>::from(b), b.re == 0.0 && b.im == 0.0, (T *)y};
    unsigned char *ws = (unsigned char *)sps_cuws_csr(ctx), *fl = (unsigned char *)sps_cuws_flag(ctx);
    const csr_carries<T> cc{(T *)ws, (unsigned long long *)(ws + (size_t)SPS_CU_CSR_MAX_BLOCKS * 16),
                            (unsigned *)(fl + 160), (unsigned long long *)(fl + 168)};
    /* 16-byte vector loads need 16-byte aligned arrays (cudaMalloc gives 256) */
    const bool vec = ((uintptr_t)val % 16) == 0 && ((uintptr_t)col % 16) == 0;
    cudaStream_t s = sps_custream(ctx);
    if (vec) csr_spmv_kernel<T, true><<<grid, CSR_THREADS, 0, s>>>(n, rowptr, col, (const T *)val, (const T *)x, out, cc);
    else csr_spmv_kernel<T, false><<<grid, CSR_THREADS, 0, s>>>(n, rowptr, col, (const T *)val, (const T *)x, out, cc);
    SPS_CU_LAUNCHED(ctx, "csr_spmv_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status csr_spmvt_impl(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                                 const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    SPS_CHECK(scale_y<T>(ctx, m, b, y));
    if (n <= 0 || m <= 0) return SPS_OK;
    csr_spmvt_kernel<T><<<csr_grid(ctx, n), SPS_CU_THREADS, 0, sps_custream(ctx)>>>(
        n, rowptr, col, (const T *)val, sc<T>::from(a), (const T *)x, (T *)y);
    SPS_CU_LAUNCHED(ctx, "csr_spmvt_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status coo_spmv_impl(sps_context ctx, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    (void)m;
    SPS_CHECK(scale_y<T>(ctx, n, b, y));
    if (nnz <= 0) return SPS_OK;
    /* chunks: whole tiles, at most SPS_CU_COO_MAX_BLOCKS of them: a function of nnz only */
    const int64_t tiles = (nnz + COO_TILE - 1) / COO_TILE;
    const int64_t tiles_per_chunk = (tiles + SPS_CU_COO_MAX_BLOCKS - 1) / SPS_CU_COO_MAX_BLOCKS;
    const int64_t chunk = tiles_per_chunk * COO_TILE;
    const int nb = (int)((nnz + chunk - 1) / chunk);
    sps_index *crow = (sps_index *)sps_cuws_coo(ctx);
    T *cval = (T *)((unsigned char *)sps_cuws_coo(ctx) + (size_t)SPS_CU_COO_MAX_BLOCKS * 2 * sizeof(sps_index));
    cudaStream_t s = sps_custream(ctx);
    const T av = sc<T>::from(a);
    coo_seg_kernel<T>
        <<<nb, COO_THREADS, 0, s>>>(nnz, chunk, row, col, (const T *)val, av, (const T *)x, (T *)y, crow, cval);
    SPS_CU_LAUNCHED(ctx, "coo_seg_kernel");
    const int ne = 2 * nb;
    coo_fixup_kernel<T><<<(ne + COO_THREADS - 1) / COO_THREADS, COO_THREADS, 0, s>>>(ne, crow, cval, av, (T *)y);
    SPS_CU_LAUNCHED(ctx, "coo_fixup_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status coo_spmvt_impl(sps_context ctx, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                 const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    (void)n;
    SPS_CHECK(scale_y<T>(ctx, m, b, y));
    if (nnz <= 0 || m <= 0) return SPS_OK;
    coo_spmvt_kernel<T><<<sps_cu_grid(ctx, nnz), SPS_CU_THREADS, 0, sps_custream(ctx)>>>(
        nnz, row, col, (const T *)val, sc<T>::from(a), (const T *)x, (T *)y);
    SPS_CU_LAUNCHED(ctx, "coo_spmvt_kernel");
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_SPMV_ENTRIES(S, T)                                                                                   \
    extern "C" sps_status sps_cuda_csr_spmv_##S(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr, \
                                                const sps_index *col, const void *val, sps_cplx a, const void *x,   \
                                                sps_cplx b, void *y)                                                \
    { return csr_spmv_impl<T>(ctx, n, m, rowptr, col, val, a, x, b, y); }                                           \
    extern "C" sps_status sps_cuda_csr_spmvt_##S(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr, \
                                                 const sps_index *col, const void *val, sps_cplx a, const void *x,  \
                                                 sps_cplx b, void *y)                                               \
    { return csr_spmvt_impl<T>(ctx, n, m, rowptr, col, val, a, x, b, y); }                                          \
    extern "C" sps_status sps_cuda_coo_spmv_##S(sps_context ctx, sps_index n, sps_index m, int64_t nnz,             \
                                                const sps_index *row, const sps_index *col, const void *val,        \
                                                sps_cplx a, const void *x, sps_cplx b, void *y)                     \
    { return coo_spmv_impl<T>(ctx, n, m, nnz, row, col, val, a, x, b, y); }                                         \
    extern "C" sps_status sps_cuda_coo_spmvt_##S(sps_context ctx, sps_index n, sps_index m, int64_t nnz,            \
                                                 const sps_index *row, const sps_index *col, const void *val,       \
                                                 sps_cplx a, const void *x, sps_cplx b, void *y)                    \
    { return coo_spmvt_impl<T>(ctx, n, m, nnz, row, col, val, a, x, b, y); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_SPMV_ENTRIES)
