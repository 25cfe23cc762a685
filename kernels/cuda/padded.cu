/* CUDA kernels of the padded formats: ELLPACK-R, SELL-C-sigma, RgCSR (the layout
 * and the kernel contract: kernels/format_kernels_padded.h; the CPU reference:
 * kernels/cpu/padded.inc).
 *
 * SpMV  (pad_spmv_kernel): S threads per storage row (S = 1 unless rows
 *       average 32+ entries: pad_split), PAD_THREADS threads a block, grid
 *       ceil(S n / PAD_THREADS).  With S = 1, consecutive threads own
 *       consecutive rows of a column-major group, so at every entry index k a
 *       warp reads val/col at consecutive slots: fully coalesced for
 *       ELLPACK-R and SELL-32 (a warp is one slice), two 16-slot runs for
 *       SELL-16, and for RgCSR one run per group the warp touches (one, when G
 *       is a multiple of 32) -- Vazquez et al. ELLPACK-R, Monakov et al. sliced
 *       ELLPACK, Oberhuber et al. RgCSR §3.4 (whose kernel is this one with
 *       blockDim = G; any block size works here because every thread finds its
 *       group from its row).  Each thread loops to its own row length rl[r]
 *       (4 entries a round, the next round's loads issued before this
 *       round's x gathers: pad_row_sum): padding is never loaded or
 *       multiplied; a warp costs its longest row, which is why SELL/RgCSR
 *       sort rows by length.  Rows of 32 or more entries on average get 2 or
 *       4 threads each (pad_split).  Columns are read as 16-bit offsets where
 *       the layout stores them so (sps_pad_layout.col16).  Each thread sums
 *       its entries in order in T; the S partial sums of a row meet in a
 *       fixed shuffle tree.
 *       Rows longer than L.long_len (the layout's long_rows list) are
 *       skipped there and summed by pad_long_spmv_kernel, one block of
 *       PAD_THREADS per row: thread t takes entries t, t + 256, ... in order,
 *       then a CUB BlockReduce (a fixed tree).
 *       SpMV is deterministic run to run (the GPU may fuse multiply-adds and
 *       long rows are summed in another order, so it equals the CPU to
 *       rounding, not bitwise).
 * SpMV, lean (pad_lean_spmv_kernel): a layout of one group whose stride is its
 *       height (ELLPACK-R, one full SELL/RgCSR group) of rows of at most 32 slots,
 *       small or near-uniform (pad_lean_width; launch variant pad_lean): a thread
 *       loads all its row's slots at once, then x: two load rounds, not three.
 * SpMV^T (pad_spmvt_kernel): y = b y, then one thread per storage row (one
 *       block per long row) scatters a x_i a_ij into y_j by atomicAdd: NOT
 *       bit-reproducible.
 * Build: pad_rowlen / pad_scatter_* one thread per storage row (writes of a
 *       warp coalesced, as the SpMV reads); pad_widths one warp per chunk of
 *       rows (shuffle max of the lengths, shuffle min / max of the rows' first
 *       and last columns, one atomicMax each per warp for the matrix-wide
 *       extremes and the widest span); pad_sort_rows a CUB DeviceRadixSort of 64-bit keys
 *       (window << 32 | INT32_MAX - len) carrying the row index: LSD radix sort
 *       is stable, so ties stay in row order and the permutation equals the
 *       CPU's merge sort.  All build kernels are deterministic.
 *
 * Measured (H100, f64, SpMV / SpMV^T in ms, default options; SpMV's % of copy
 * bandwidth under the CSR traffic model, which 16-bit columns can pass; CSR =
 * csr.cu; read flush, spbench 2026-11-25,
 * bench/results/spbench-nvidia-h100-80gb-hbm3-2026-11-25-formats.md):
 *   poisson3d-128 (2.1M rows, 7 a row):   CSR 0.083/0.114, ELL 0.075/0.104,
 *       SELL-32 0.069/0.100 (105 %), RgCSR-128 0.068/0.100 (106 %); cuSPARSE SELL 0.077
 *   stencil27b3-40 (192k rows, 77 a row): CSR 0.075/0.111, ELL 0.069/0.176,
 *       SELL-32 0.061/0.178 (99 %), RgCSR-128 0.061/0.181; cuSPARSE SELL 0.068
 *   banded-s1e3-1M (22 a row):            CSR 0.126/0.322, ELL 0.098/0.299,
 *       SELL-32 0.088/0.292 (107 %), RgCSR-128 0.087/0.293; cuSPARSE SELL 0.106
 *   powerlaw-2M (mean 20, longest 10^4):  CSR 0.378/0.604, SELL-32 unsorted
 *       1.106/1.478 (cuSPARSE SELL 2.954); ELL and RgCSR refuse it (fill)
 *
 * Traffic of SpMV (minimal model): slots touched by real entries x (c + sizeof T),
 * c = 2 with 16-bit columns (sps_pad_layout.col16), else 4, + n x 12 bytes (rl,
 * grp_ptr per row, perm) + x + y; padding slots are not read
 * (a warp's load of a partly padded column fetches whole 32-byte sectors, so
 * up to one sector per warp and k is wasted where rows of a warp differ). */
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/pad_cols.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>

#define PAD_THREADS 256 /* rows per block: 8 warps = 8 SELL-32 slices */

namespace {

static inline unsigned pad_blocks(int64_t rows) { return (unsigned)((rows + PAD_THREADS - 1) / PAD_THREADS); }

/* ---------------------------------------------------------------- index build */
__global__ void __launch_bounds__(PAD_THREADS) pad_rowlen_kernel(sps_index n, const sps_index *__restrict__ rowptr,
                                                                const sps_index *__restrict__ perm, sps_index *__restrict__ rl)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    const sps_index p = perm ? perm[r] : (sps_index)r;
    rl[r] = rowptr[p + 1] - rowptr[p];
}

/* key = window << 32 | (INT32_MAX - len): ascending keys = windows in order,
 * decreasing length inside a window. */
__global__ void __launch_bounds__(PAD_THREADS) pad_sortkey_kernel(sps_index n, sps_index window, const sps_index *__restrict__ len,
                                                                 unsigned long long *__restrict__ key, sps_index *__restrict__ idx)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    key[r] = ((unsigned long long)(r / window) << 32) | (unsigned long long)(unsigned)(INT32_MAX - len[r]);
    idx[r] = (sps_index)r;
}

/* One warp per chunk: lanes stride through the chunk, shuffle max / min; the
 * whole-matrix extremes, the largest span and the widest chunk by one
 * atomicMax each a warp (w[nq..nq+3], set to -1 by pad_widths_impl). */
__device__ inline sps_index pad_warp_max(sps_index v)
{
#pragma unroll
    for (int off = 16; off > 0; off /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, off));
    return v;
}
__device__ inline sps_index pad_warp_min(sps_index v) { return -pad_warp_max(-v); }
__global__ void __launch_bounds__(PAD_THREADS) pad_widths_kernel(sps_index n, sps_index chunk, sps_index nq,
                                                                const sps_index *__restrict__ rl,
                                                                const sps_index *__restrict__ rowptr,
                                                                const sps_index *__restrict__ perm,
                                                                const sps_index *__restrict__ src_col,
                                                                sps_index *__restrict__ w, sps_index *__restrict__ lo)
{
    const int64_t q = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (q >= nq) return; /* uniform within the warp */
    const int64_t a = q * chunk, b = a + chunk < n ? a + chunk : n;
    sps_index mx = 0, cmin = INT32_MAX, cmax = -1;
    for (int64_t r = a + lane; r < b; r += 32) {
        const sps_index len = rl[r];
        mx = len > mx ? len : mx;
        if (len == 0) continue;
        const sps_index p = perm ? perm[r] : (sps_index)r;
        const sps_index e = rowptr[p];
        cmin = min(cmin, src_col[e]);
        cmax = max(cmax, src_col[e + len - 1]);
    }
    mx = pad_warp_max(mx);
    cmin = pad_warp_min(cmin);
    cmax = pad_warp_max(cmax);
    if (lane == 0) {
        w[q] = mx;
        atomicMax(&w[nq + 3], mx);
        if (lo) lo[q] = cmax < 0 ? 0 : cmin;
        if (cmax >= 0) {
            atomicMax(&w[nq], INT32_MAX - cmin);
            atomicMax(&w[nq + 1], cmax);
            atomicMax(&w[nq + 2], cmax - cmin);
        }
    }
}

/* Slots of each group, the input of the group-pointer scan. */
__global__ void __launch_bounds__(PAD_THREADS) pad_group_slots_kernel(sps_index ngroups, sps_index h, sps_index nstored,
                                                                     const sps_index *__restrict__ w,
                                                                     int64_t *__restrict__ slots)
{
    const int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= ngroups) return;
    const int64_t left = (int64_t)nstored - g * h;
    slots[g] = (int64_t)w[g] * (left < h ? left : h);
}

/* 32-bit columns (cbase NULL) or 16-bit offsets from the group's cbase. */
__global__ void __launch_bounds__(PAD_THREADS) pad_scatter_col_kernel(sps_pad_layout L, const sps_index *__restrict__ rowptr,
                                                                     const sps_index *__restrict__ src_col,
                                                                     void *__restrict__ colv)
{
    const int64_t rr = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (rr >= L.nstored) return;
    const sps_index r = (sps_index)rr;
    sps_index stride;
    const int64_t base = sps_pad_row_base(&L, r, &stride);
    const sps_index g = r / L.h;
    const int64_t width = (L.grp_ptr[g + 1] - L.grp_ptr[g]) / stride;
    const sps_index len = r < L.n ? L.rl[r] : 0;
    const sps_index *src = r < L.n ? src_col + rowptr[L.perm ? L.perm[r] : r] : NULL;
    if (L.cbase) {
        uint16_t *col = (uint16_t *)colv;
        const sps_index cb = L.cbase[g];
        for (int64_t k = 0; k < width; k++)
            col[base + k * stride] = k < len ? sps_pad_col16_of(src[k], cb) : (uint16_t)SPS_PAD_COL16_PAD;
    } else {
        sps_index *col = (sps_index *)colv;
        for (int64_t k = 0; k < width; k++) col[base + k * stride] = k < len ? src[k] : -1;
    }
}

/* ---------------------------------------------------------------- values */
template <typename T>
__global__ void __launch_bounds__(PAD_THREADS) pad_scatter_val_kernel(sps_pad_layout L, const sps_index *__restrict__ rowptr,
                                                                     const T *__restrict__ src, int ew, int soa,
                                                                     T *__restrict__ val)
{
    const int64_t es = soa ? 1 : ew, ms = soa ? L.slots : 1; /* member e of slot s at val[s es + e ms] */
    const int64_t rr = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (rr >= L.nstored) return;
    const sps_index r = (sps_index)rr;
    sps_index stride;
    const int64_t base = sps_pad_row_base(&L, r, &stride);
    const sps_index g = r / L.h;
    const int64_t width = (L.grp_ptr[g + 1] - L.grp_ptr[g]) / stride;
    const sps_index len = r < L.n ? L.rl[r] : 0;
    const T *s = r < L.n ? src + (size_t)rowptr[L.perm ? L.perm[r] : r] * ew : NULL;
    for (int64_t k = 0; k < width; k++) {
        T *d = val + (base + k * stride) * es;
        for (int e = 0; e < ew; e++) d[e * ms] = k < len ? s[k * ew + e] : zero_of<T>();
    }
}

/* The slots: at each k a warp reads 32 consecutive slots, whole lines that no
 * other instruction reads again, so they bypass the L1
 * (ld.global.nc.L1::no_allocate), which then keeps the gathered x (the CSR
 * kernel's staged passes, csr_common.cuh, for the same reason).  H100, spbench
 * 2026-11-23, against the ordinary read-only loads (now the pad_ldg variant) in the same
 * call, ms: stencil27b3-40 f64 ELL 0.0856 -> 0.0794, SELL 0.0883 -> 0.0836,
 * RgCSR 0.0873 -> 0.0819; f32 SELL 0.0668 -> 0.0607; poisson3d-128 f64 SELL
 * 0.0922 -> 0.0912, f32 0.0650 -> 0.0625; banded-s1e3 within 2 %. */
/* The row loop keeps U entries' col/val loads in flight and is software-
 * pipelined: the next U col/val loads are issued before this round's x gathers,
 * so a thread always has a DRAM stream request outstanding (without it the warp
 * alternated: stream loads, wait, x gathers from L2, wait, and ncu showed the
 * DRAM at 72 % of peak on stencil27b3-40 with 44 % of warps active, stalled on
 * long scoreboard).  U = 4 for every type (8: a run-time variant, pad_unroll).  H100, spbench
 * 2026-11-23, same run, SELL with 16-bit columns, ms (% of copy bandwidth):
 *                      unpipelined (f64 U 8,    pipelined U 8   pipelined U 4
 *                      f32 4 + serial tail)
 *   f64 poisson3d-128  0.0795 (90.8)            0.0855 (84.3)   0.0770 (93.7)
 *       banded-s1e3    0.1008 (93.4)            0.1059 (88.9)   0.0981 (95.9)
 *       stencil27b3-40 0.0691 (87.2)            0.0671 (89.9)   0.0671 (89.7)
 *   f32 poisson3d-128  0.0662 (71.3)            --              0.0540 (87.4)
 *       banded-s1e3    0.0840 (74.2)            --              0.0667 (93.5)
 *       stencil27b3-40 0.0550 (72.9)            --              0.0445 (90.1)
 * Earlier, unpipelined (same session's first runs): f64 U 0 / 4 / 8 / 16 on
 * poisson3d-128 with 32-bit columns 0.0912 / 0.0907 / 0.0850 / 0.1268; f32 lost
 * at every U > 0 there, and 16-bit columns lost 9-30 % in f32 with the serial
 * tail -- both turned round by the pipeline.
 * Resident blocks an SM: the compiler's choice (__launch_bounds__ minimum 0); 4 is
 * a run-time variant (pad_minb).  Unpipelined f64 U 8 (64 registers, 4 blocks an
 * SM) beat 5 and 6 blocks with spills: poisson3d-128 0.0849 / 0.0926 / 0.0997 ms.
 * The 16-bit columns take the slots' load path: through the L1 they lost (H100,
 * same run, f64 SELL ms, past / through the L1: poisson3d-128 0.0787 / 0.0788,
 * stencil27b3-40 0.0719 / 0.0772), no longer a knob of their own.
 * pad_var: pad_spmv_kernel's compile-time options, U entries a round, MINB, NA
 * (the slots past the L1; false: ordinary read-only loads, the pad_ldg variant). */
/* The value readers (sps_cu_vals_plain / sps_cu_vals_dict, common.cuh) take the layout's
 * dictionary; the lookup goes out beside the x gather that waits on the same slot. */
template <typename T, bool NA> struct pad_vals_plain : sps_cu_vals_plain<T, NA> {
    __device__ pad_vals_plain(const sps_pad_layout &L, const void *val) : sps_cu_vals_plain<T, NA>(val, L.vdict) {}
};
template <typename T, bool NA> struct pad_vals_dict : sps_cu_vals_dict<T, NA> {
    __device__ pad_vals_dict(const sps_pad_layout &L, const void *val) : sps_cu_vals_dict<T, NA>(val, L.vdict) {}
};

template <int U_, int MINB, bool NA> struct pad_var {
    static_assert(U_ >= 1, "entries a round, at least 1");
    static constexpr int U = U_, minb = MINB;
    static constexpr bool na = NA;
};
typedef pad_var<4, 0, true> pad_default;

/* A row's sum, its len entries at p, p + stride, ... in entry order: rounds of
 * U predicated entries, the next round's col/val loaded before this round's x. */
template <typename T, int U, typename C, typename VR>
__device__ inline T pad_row_sum(const C &col, const VR &val, const T *__restrict__ x, int64_t p, sps_index stride,
                                sps_index len)
{
    typedef typename VR::raw R;
    T s = zero_of<T>();
    sps_index c[U], cn[U];
    R v[U], vn[U];
    T xv[U], vv[U];
    auto load = [&](sps_index k0, int64_t q, sps_index *cc, R *rr) {
#pragma unroll
        for (int j = 0; j < U; j++) {
            const bool ok = k0 + j < len;
            cc[j] = ok ? col(q + j * (int64_t)stride) : 0;
            rr[j] = ok ? val.load(q + j * (int64_t)stride) : R();
        }
    };
    load(0, p, c, v);
    for (sps_index k = 0; k < len; k += U, p += U * (int64_t)stride) {
        load(k + U, p + U * (int64_t)stride, cn, vn);
#pragma unroll
        for (int j = 0; j < U; j++) {
            xv[j] = k + j < len ? ldg_t(x + c[j]) : zero_of<T>();
            vv[j] = k + j < len ? val.get(v[j]) : zero_of<T>();
        }
#pragma unroll
        for (int j = 0; j < U; j++)
            if (k + j < len) s = s + vv[j] * xv[j];
#pragma unroll
        for (int j = 0; j < U; j++) {
            c[j] = cn[j];
            v[j] = vn[j];
        }
    }
    return s;
}

/* S threads per row (S = 1, 2, 4: pad_split): thread s of row r sums the row's
 * entries s, s + S, s + 2S, ... in order, then the S partial sums meet by
 * shuffles (a fixed tree: deterministic).  A warp then covers 32 / S rows, and
 * at each step reads S runs of 32 / S consecutive slots (128 bytes each for f64
 * at S = 2): still whole lines.  For long uniform rows, where one thread per row
 * leaves too few threads to cover the latency of each round trip.  H100, spbench
 * 2026-11-23, same run, SELL (16-bit columns, pipelined loop), ms, S = 1 / 2 / 4
 * forced: stencil27b3-40 (77 entries a row) f64 0.0725 / 0.0671 / 0.0723, f32
 * 0.0453 / 0.0445 / 0.0467; poisson3d-128 (7) f64 0.0770 / (unpipelined:
 * 0.1065) / 0.1271, banded-s1e3 (21) f64 0.0979 / -- / 0.1458: hence 2 from a
 * mean of 32 entries, 4 from 128 (not measured on a matrix that long). */
template <typename T, typename C, int S, typename V, typename VR>
__global__ void __launch_bounds__(PAD_THREADS, V::minb)
    pad_spmv_kernel(sps_pad_layout L, const void *__restrict__ val, T a, const T *__restrict__ x, T b, int beta_zero,
                    T *__restrict__ y)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t rr = t / S;
    const int sub = (int)(t % S);
    if (S == 1 && rr >= L.n) return;
    /* S > 1: every lane stays for the shuffles (the S lanes of a row are one aligned group) */
    const sps_index r = rr < L.n ? (sps_index)rr : 0;
    sps_index stride;
    const int64_t p = sps_pad_row_base(&L, r, &stride);
    const sps_index len = rr < L.n ? L.rl[r] : 0;
    const bool mine = rr < L.n && len <= L.long_len; /* else pad_long_spmv_kernel's, or past the end */
    /* y's row, loaded beside the row's first loads: after the loop it was one more
       DRAM round trip at the end of every thread, which small matrices paid in full */
    const sps_index i = mine && sub == 0 && L.perm ? ldg_t(L.perm + r) : r;
    T s = zero_of<T>();
    if (mine) {
        const sps_index n_sub = len > sub ? (len - sub + S - 1) / S : 0;
        s = pad_row_sum<T, V::U>(C(L, r / L.h), VR(L, val), x, p + (int64_t)sub * stride, S * stride, n_sub);
    }
#pragma unroll
    for (int o = S / 2; o > 0; o /= 2) s = s + shfl_down(0xffffffffu, s, o, S); /* sub 0 gets the sum */
    if (!mine || sub != 0) return;
    y[i] = beta_zero ? a * s : a * s + b * y[i];
}

/* The lean product of a layout of ONE group whose stride is h (ELLPACK-R; SELL or
 * RgCSR of a single full group): slot k of storage row r is k h + r, so a thread
 * knows every slot address from r alone.  It loads all K slots of its row at once
 * (U >= K, unrolled), padding included, then the x entries (padding's column is
 * -1: it gathers x[0], discarded), then sums the real ones in entry order
 * (padding sits after a row's entries: the same sum, to the bit, as
 * pad_spmv_kernel's where that runs a thread a row, i.e. rows under 32 entries on
 * average; else equal to rounding).  Two dependent rounds of loads (slots, x) instead of three
 * (row length and group offset, slots, x): on a small matrix the product is that
 * chain of DRAM latencies, and a round is ~0.6 us of a 5-7 us product
 * (bench/results/auto-model-*.md).  Reads padding, so it is for small matrices and
 * for near-uniform rows (pad_lean_auto). */
/* The bits of a value, folded to 32 (a data dependence on it, whatever it holds). */
__device__ inline unsigned pad_bits(float v) { return __float_as_uint(v); }
__device__ inline unsigned pad_bits(double v)
{
    const unsigned long long b = (unsigned long long)__double_as_longlong(v);
    return (unsigned)b ^ (unsigned)(b >> 32);
}
template <typename R> __device__ inline unsigned pad_bits(cx<R> v) { return pad_bits(v.re) ^ pad_bits(v.im); }
__device__ inline unsigned pad_bits(uint8_t v) { return v; }

template <typename T, typename C, int U, typename VR>
__global__ void __launch_bounds__(PAD_THREADS)
    pad_lean_spmv_kernel(sps_pad_layout L, sps_index K, const void *__restrict__ valp, T a, const T *__restrict__ x,
                         T b, int beta_zero, T *__restrict__ y)
{
    const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= L.n) return;
    const sps_index i = L.perm ? ldg_t(L.perm + r) : (sps_index)r;
    T s = zero_of<T>();
    if (K > 0) {
        /* No load sits behind a branch: slots past K re-read slot K - 1 and padding
           gathers x[0], both discarded by the selects; the loads are then one straight
           run the hardware keeps in flight together */
        const C col(L, 0);
        const VR val(L, valp);
        sps_index c[U];
        typename VR::raw rv[U];
        T v[U], xv[U];
#pragma unroll
        for (int j = 0; j < U; j++) {
            const int64_t p = (int64_t)(j < K ? j : K - 1) * L.h + r;
            c[j] = col.or_pad(p);
            rv[j] = val.load(p);
        }
        /* Every gather waits for every column and value: x's base is x + 1 where the
           largest column is past the last (never), whatever the values' bits.  Without
           that data dependence ptxas interleaved the loads with the gathers that use them
           (SASS: column, gather, column, ...); a warp issues in order, so each gather
           stalled the slot loads behind it, and rows of 9-32 slots took 1-5 us more than
           rows of 8 (compiler fences do not bind ptxas).  With 8- and 16-byte values the
           sum also waits for every gather (its start depends on their bits, never on
           their value): without it ptxas issued each value and gather pair just before
           the multiply-add that uses it, two pairs in flight (SASS of the f64 kernel),
           and f64 products took 0.5-0.9 us more than f32 ones.  H100, 2026-11-26, 12
           small corpus matrices (ELL, lean, two alternating runs each): f64 9 % faster
           with the wait (geomean; 0.87-0.94 each, e.g. jpwh_991 6.6 -> 6.0 us), f32 3 %
           slower with it (so not there); c32 and c64 follow f64 (not measured). */
        sps_index cmax = -1;
        unsigned vbits = 0;
#pragma unroll
        for (int j = 0; j < U; j++) {
            if (j >= K) c[j] = -1;
            cmax = c[j] > cmax ? c[j] : cmax;
            vbits ^= pad_bits(rv[j]);
        }
        const bool never = cmax >= L.m; /* false: a column past the last */
        const T *xb = x + (never & (vbits != 0x9e3779b9u));
#pragma unroll
        for (int j = 0; j < U; j++) {
            xv[j] = ldg_t(xb + (c[j] >= 0 ? c[j] : 0));
            v[j] = val.get(rv[j]); /* a dictionary's lookup beside the gather */
        }
        if constexpr (sizeof(T) >= 8) { /* s stays zero: never is false */
            unsigned xbits = 0;
#pragma unroll
            for (int j = 0; j < U; j++) xbits ^= pad_bits(xv[j]);
            if (never & (xbits != 0x7f4a7c15u)) s = xv[0];
        }
#pragma unroll
        for (int j = 0; j < U; j++)
            if (c[j] >= 0) s = s + v[j] * xv[j];
    }
    y[i] = beta_zero ? a * s : a * s + b * y[i];
}

/* One block per long row (blockIdx.x indexes L.long_rows). */
template <typename T, typename C, typename VR>
__global__ void __launch_bounds__(PAD_THREADS) pad_long_spmv_kernel(sps_pad_layout L, const void *__restrict__ valp, T a,
                                                                   const T *__restrict__ x, T b, int beta_zero, T *__restrict__ y)
{
    typedef cub::BlockReduce<T, PAD_THREADS> BR;
    __shared__ typename BR::TempStorage tmp;
    const sps_index r = L.long_rows[blockIdx.x];
    sps_index stride;
    const int64_t base = sps_pad_row_base(&L, r, &stride);
    const sps_index len = L.rl[r];
    const C col(L, r / L.h);
    const VR val(L, valp);
    T s = zero_of<T>();
    for (sps_index k = threadIdx.x; k < len; k += PAD_THREADS) {
        const int64_t p = base + (int64_t)k * stride;
        s = s + val.get(val.load(p)) * x[col(p)];
    }
    s = BR(tmp).Reduce(s, sps_cu_sum<T>());
    if (threadIdx.x == 0) {
        const sps_index i = L.perm ? L.perm[r] : r;
        y[i] = beta_zero ? a * s : a * s + b * y[i];
    }
}

template <typename T, typename C, typename VR>
__global__ void __launch_bounds__(PAD_THREADS) pad_spmvt_kernel(sps_pad_layout L, const void *__restrict__ valp, T a,
                                                               const T *__restrict__ x, T *y)
{
    const int64_t rr = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (rr >= L.n) return;
    const sps_index r = (sps_index)rr;
    sps_index stride;
    int64_t p = sps_pad_row_base(&L, r, &stride);
    const sps_index len = L.rl[r];
    if (len > L.long_len) return; /* pad_long_spmvt_kernel's */
    const T ax = a * x[L.perm ? L.perm[r] : r];
    const C col(L, r / L.h);
    const VR val(L, valp);
    for (sps_index k = 0; k < len; k++, p += stride) atomic_add(&y[col(p)], val.get(val.load(p)) * ax);
}

template <typename T, typename C, typename VR>
__global__ void __launch_bounds__(PAD_THREADS) pad_long_spmvt_kernel(sps_pad_layout L, const void *__restrict__ valp, T a,
                                                                    const T *__restrict__ x, T *y)
{
    const sps_index r = L.long_rows[blockIdx.x];
    sps_index stride;
    const int64_t base = sps_pad_row_base(&L, r, &stride);
    const sps_index len = L.rl[r];
    const T ax = a * x[L.perm ? L.perm[r] : r];
    const C col(L, r / L.h);
    const VR val(L, valp);
    for (sps_index k = threadIdx.x; k < len; k += PAD_THREADS) {
        const int64_t p = base + (int64_t)k * stride;
        atomic_add(&y[col(p)], val.get(val.load(p)) * ax);
    }
}

} // namespace

/* ---------------------------------------------------------------- implementations */
static sps_status pad_rowlen_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *perm, sps_index *rl)
{
    if (n <= 0) return SPS_OK;
    pad_rowlen_kernel<<<pad_blocks(n), PAD_THREADS, 0, sps_custream(ex)>>>(n, rowptr, perm, rl);
    SPS_CU_LAUNCHED(ex, "pad_rowlen_kernel");
    return SPS_OK;
}

static size_t pad_align(size_t b) { return (b + 255) & ~(size_t)255; }

static sps_status pad_sort_rows_impl(sps_exec *ex, sps_index n, sps_index window, const sps_index *len, sps_index *perm)
{
    if (n <= 0) return SPS_OK;
    if (window < 1) window = 1;
    cudaStream_t s = sps_custream(ex);
    /* bits of the key: 32 for the length, then enough for the window number */
    const int64_t nw = ((int64_t)n + window - 1) / window;
    int end_bit = 32;
    while (end_bit < 64 && (nw - 1) >> (end_bit - 32)) end_bit++;
    size_t temp = 0;
    SPS_CU(ex, cub::DeviceRadixSort::SortPairs(NULL, temp, (const unsigned long long *)NULL, (unsigned long long *)NULL,
                                                (const sps_index *)NULL, (sps_index *)NULL, (int64_t)n, 0, end_bit, s));
    const size_t kb = pad_align((size_t)n * sizeof(unsigned long long)), ib = pad_align((size_t)n * sizeof(sps_index));
    const size_t bytes = 2 * kb + ib + pad_align(temp);
    unsigned char *ws = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&ws, bytes)); /* the context's pool, stream-ordered */
    unsigned long long *kin = (unsigned long long *)ws, *kout = (unsigned long long *)(ws + kb);
    sps_index *idx = (sps_index *)(ws + 2 * kb);
    void *tmp = ws + 2 * kb + ib;
    sps_status st = SPS_OK;
    pad_sortkey_kernel<<<pad_blocks(n), PAD_THREADS, 0, s>>>(n, window, len, kin, idx);
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) e = cub::DeviceRadixSort::SortPairs(tmp, temp, kin, kout, idx, perm, (int64_t)n, 0, end_bit, s);
    if (e != cudaSuccess) st = sps_cuda_fail(ex, e, "row sort (CUB DeviceRadixSort)", __FILE__, __LINE__);
    sps_exec_release(ex, ws);
    return st;
}

static sps_status pad_widths_impl(sps_exec *ex, sps_index n, sps_index chunk, const sps_index *rl,
                                  const sps_index *rowptr, const sps_index *perm, const sps_index *src_col, sps_index *w,
                                  sps_index *lo)
{
    const sps_index nq = n > 0 ? (sps_index)(((int64_t)n + chunk - 1) / chunk) : 0;
    SPS_CU(ex, cudaMemsetAsync(w + nq, 0xff, 4 * sizeof *w, sps_custream(ex))); /* -1: no entries yet */
    if (n <= 0) return SPS_OK;
    pad_widths_kernel<<<pad_blocks((int64_t)nq * 32), PAD_THREADS, 0, sps_custream(ex)>>>(n, chunk, nq, rl, rowptr, perm,
                                                                                          src_col, w, lo);
    SPS_CU_LAUNCHED(ex, "pad_widths_kernel");
    return SPS_OK;
}

/* Slots per group, then their exclusive sum into gp (CUB, scan.cu). */
static sps_status pad_group_ptr_impl(sps_exec *ex, sps_index ngroups, sps_index h, sps_index nstored, const sps_index *w,
                                     int64_t *gp)
{
    if (ngroups <= 0) return sps_cu_scan_i64(ex, NULL, gp, 0, "padded group pointers");
    int64_t *slots = NULL;
    SPS_CHECK(sps_exec_alloc(ex, (void **)&slots, (size_t)ngroups * sizeof *slots));
    pad_group_slots_kernel<<<pad_blocks(ngroups), PAD_THREADS, 0, sps_custream(ex)>>>(ngroups, h, nstored, w, slots);
    cudaError_t e = cudaGetLastError();
    sps_status st = e == cudaSuccess ? sps_cu_scan_i64(ex, slots, gp, ngroups, "padded group pointers")
                                     : sps_cuda_fail(ex, e, "launch of pad_group_slots_kernel", __FILE__, __LINE__);
    sps_exec_release(ex, slots);
    return st;
}

static sps_status pad_scatter_col_impl(sps_exec *ex, sps_pad_layout L, const sps_index *rowptr, const sps_index *src_col,
                                       void *col)
{
    if (L.nstored <= 0 || L.slots <= 0) return SPS_OK;
    pad_scatter_col_kernel<<<pad_blocks(L.nstored), PAD_THREADS, 0, sps_custream(ex)>>>(L, rowptr, src_col, col);
    SPS_CU_LAUNCHED(ex, "pad_scatter_col_kernel");
    return SPS_OK;
}

template <typename T>
static sps_status pad_scatter_val_impl(sps_exec *ex, sps_pad_layout L, const sps_index *rowptr, const void *src, int ew,
                                       int soa, void *val)
{
    if (L.nstored <= 0 || L.slots <= 0) return SPS_OK;
    pad_scatter_val_kernel<T><<<pad_blocks(L.nstored), PAD_THREADS, 0, sps_custream(ex)>>>(L, rowptr, (const T *)src, ew,
                                                                                           soa, (T *)val);
    SPS_CU_LAUNCHED(ex, "pad_scatter_val_kernel");
    return SPS_OK;
}

/* Threads per row: 2 when the mean row is at least pad_split_min entries, 4 from
 * 4x that (pad_spmv_kernel's note); the run-time variant pad_split forces 1, 2 or 4
 * (all three are compiled in anyway). */
constexpr int pad_split_min = 32;
static int pad_split(const sps_pad_layout &L, const sps_launch_variant *lv)
{
    if (lv && lv->pad_split) return lv->pad_split;
    const int64_t mean = L.n > 0 ? L.nnz / L.n : 0;
    return mean >= 4 * pad_split_min ? 4 : mean >= pad_split_min ? 2 : 1;
}

/* Whether the lean kernel runs (launch variant pad_lean: 0 by this rule, 1 never,
 * 2 wherever it can; by the rule only where no other pad_ knob is set): K, the slots a
 * row, when the layout is one group of stride h
 * with rows of at most PAD_LEAN_MAX slots (no long rows then: long_len >= 64), else -1.
 * By the rule: up to PAD_LEAN_ROWS rows, where the product is latency, not
 * bandwidth; past that where the padding it reads costs no more than the row
 * lengths it does not (4 bytes a row). */
#define PAD_LEAN_MAX 32
#define PAD_LEAN_ROWS 65536
static sps_index pad_lean_width(const sps_pad_layout &L, const sps_launch_variant *lv, size_t value_bytes,
                                size_t slot_bytes)
{
    const int mode = lv ? lv->pad_lean : 0;
    /* a variant that sets the row kernel's own knobs asks for the row kernel (its tests and
       the tuner's candidates time it), unless it forces the lean one */
    const int row_knobs = lv && (lv->pad_unroll || lv->pad_minb || lv->pad_ldg || lv->pad_split);
    if (mode == 1 || (mode == 0 && row_knobs) || L.ngroups != 1 || L.nstored != L.h || L.h <= 0 || L.nlong > 0)
        return -1;
    const int64_t K = L.slots / L.h;
    /* a thread holds K columns, values and x entries: 16-byte values (c64) stop at 16
       slots, within the 255 registers of a thread */
    if (K > (value_bytes > 8 ? PAD_LEAN_MAX / 2 : PAD_LEAN_MAX)) return -1;
    if (mode == 2 || L.n <= PAD_LEAN_ROWS || (double)(L.slots - L.nnz) * (double)slot_bytes <= 4.0 * L.n)
        return (sps_index)K;
    return -1;
}

/* Blocks of 128 rows, as cuSPARSE's SELL kernel: a small matrix's warps on twice the SMs of
 * 256-row blocks.  H100, 2026-11-27, 27 small corpus matrices x 2 precisions, three rounds,
 * each row's time over cuSPARSE's SELL in the same run (spbench's runs drift by a few % on
 * both): 0.988, 0.985, 0.996 of the 256-row blocks' (west0132 f32 1.139 -> 1.103 of
 * cuSPARSE's SELL, west0167 1.115 -> 1.090); 32-128 threads had measured no faster on
 * 2026-11-26 by times alone.  Slots and gathers predicated on j < K and on padding, as
 * cuSPARSE's, were 9 % slower than these unconditional ones (bench/results/auto-model-*.md). */
#define PAD_LEAN_THREADS 128
static_assert(PAD_LEAN_THREADS <= PAD_THREADS, "the lean kernel's launch bounds");
template <typename T, typename C, typename VR>
static void pad_lean_launch(const sps_pad_layout &L, sps_index K, const void *val, T a, const T *x, T b, int bz, T *y,
                            cudaStream_t st)
{
    const unsigned grid = (unsigned)(((int64_t)L.n + PAD_LEAN_THREADS - 1) / PAD_LEAN_THREADS), bs = PAD_LEAN_THREADS;
    if (K <= 8) pad_lean_spmv_kernel<T, C, 8, VR><<<grid, bs, 0, st>>>(L, K, val, a, x, b, bz, y);
    else if (K <= 16) pad_lean_spmv_kernel<T, C, 16, VR><<<grid, bs, 0, st>>>(L, K, val, a, x, b, bz, y);
    else if constexpr (sizeof(T) <= 8) {
        if (K <= 24) pad_lean_spmv_kernel<T, C, 24, VR><<<grid, bs, 0, st>>>(L, K, val, a, x, b, bz, y);
        else pad_lean_spmv_kernel<T, C, 32, VR><<<grid, bs, 0, st>>>(L, K, val, a, x, b, bz, y);
    }
}

/* CL: the column reader (pad_cols32 / pad_cols16), VL: the value reader (pad_vals_plain /
 * pad_vals_dict), V: pad_var (the row kernel's options; the long rows keep the default's loads). */
template <typename T, template <bool> class CL, template <typename, bool> class VL, typename V>
static sps_status pad_spmv_launch(sps_exec *ex, const sps_pad_layout &L, const void *val, T a, const T *x, T b, int bz,
                                  T *y)
{
    typedef CL<V::na> C;
    typedef VL<T, V::na> VR;
    const size_t vbytes = L.vdict ? 1 : sizeof(T);
    const sps_index K = pad_lean_width(L, ex->lv, sizeof(T), vbytes + (size_t)sps_pad_col_bytes(&L));
    if (K >= 0) {
        pad_lean_launch<T, CL<true>, VL<T, true>>(L, K, val, a, x, b, bz, y, sps_custream(ex));
        SPS_CU_LAUNCHED(ex, "pad_lean_spmv_kernel");
        return SPS_OK;
    }
    const int S = pad_split(L, ex->lv);
    const unsigned grid = pad_blocks((int64_t)L.n * S);
    cudaStream_t st = sps_custream(ex);
    if (S == 4) pad_spmv_kernel<T, C, 4, V, VR><<<grid, PAD_THREADS, 0, st>>>(L, val, a, x, b, bz, y);
    else if (S == 2) pad_spmv_kernel<T, C, 2, V, VR><<<grid, PAD_THREADS, 0, st>>>(L, val, a, x, b, bz, y);
    else pad_spmv_kernel<T, C, 1, V, VR><<<grid, PAD_THREADS, 0, st>>>(L, val, a, x, b, bz, y);
    SPS_CU_LAUNCHED(ex, "pad_spmv_kernel");
    if (L.nlong > 0) {
        pad_long_spmv_kernel<T, CL<pad_default::na>, VL<T, false>>
            <<<(unsigned)L.nlong, PAD_THREADS, 0, st>>>(L, val, a, x, b, bz, y);
        SPS_CU_LAUNCHED(ex, "pad_long_spmv_kernel");
    }
    return SPS_OK;
}

template <typename T>
static sps_status pad_spmv_impl(sps_exec *ex, sps_pad_layout L, const void *val, sps_cplx a, const void *x, sps_cplx b,
                                void *y)
{
    if (L.n <= 0) return SPS_OK;
    const int bz = b.re == 0.0 && b.im == 0.0;
    const sps_launch_variant *lv = ex->lv;
    const int u = lv && lv->pad_unroll ? lv->pad_unroll : pad_default::U;
    const int mb = lv ? lv->pad_minb : 0, ldg = lv ? lv->pad_ldg : 0, split = lv ? lv->pad_split : 0;
    if (split != 0 && split != 1 && split != 2 && split != 4)
        return sps_kerror(ex, SPS_ERR_ARG, "pad_spmv: launch variant split %d: 0 (by the mean row), 1, 2 or 4", split);
    /* Compiled in: the default and each of U 8, 4 blocks an SM, __ldg alone; each with plain
       values and a dictionary's */
#define PAD_RUN_IF(U, M, NA)                                                                                     \
    if (u == (U) && mb == (M) && ldg == !(NA))                                                                  \
        return (L.vdict ? (L.col16 ? pad_spmv_launch<T, pad_cols16, pad_vals_dict, pad_var<U, M, NA>>          \
                                   : pad_spmv_launch<T, pad_cols32, pad_vals_dict, pad_var<U, M, NA>>)         \
                        : (L.col16 ? pad_spmv_launch<T, pad_cols16, pad_vals_plain, pad_var<U, M, NA>>         \
                                   : pad_spmv_launch<T, pad_cols32, pad_vals_plain, pad_var<U, M, NA>>))(      \
            ex, L, val, sc<T>::from(a), (const T *)x, sc<T>::from(b), bz, (T *)y);
    PAD_RUN_IF(4, 0, true) /* the default */
    PAD_RUN_IF(8, 0, true)
    PAD_RUN_IF(4, 4, true)
    PAD_RUN_IF(4, 0, false)
#undef PAD_RUN_IF
    return sps_kerror(ex, SPS_ERR_ARG,
                      "pad_spmv: launch variant unroll %d minb %d ldg %d is not compiled in: the default (4 0 0), "
                      "or one of unroll 8, minb 4, ldg 1",
                      u, mb, ldg);
}

template <typename T, typename C, typename VR>
static sps_status pad_spmvt_launch(sps_exec *ex, const sps_pad_layout &L, const void *val, T a, const T *x, T *y)
{
    pad_spmvt_kernel<T, C, VR><<<pad_blocks(L.n), PAD_THREADS, 0, sps_custream(ex)>>>(L, val, a, x, y);
    SPS_CU_LAUNCHED(ex, "pad_spmvt_kernel");
    if (L.nlong > 0) {
        pad_long_spmvt_kernel<T, C, VR><<<(unsigned)L.nlong, PAD_THREADS, 0, sps_custream(ex)>>>(L, val, a, x, y);
        SPS_CU_LAUNCHED(ex, "pad_long_spmvt_kernel");
    }
    return SPS_OK;
}

template <typename T>
static sps_status pad_spmvt_impl(sps_exec *ex, sps_pad_layout L, const void *val, sps_cplx a, const void *x, sps_cplx b,
                                 void *y)
{
    SPS_CHECK(scale_y<T>(ex, L.m, b, y));
    if (L.n <= 0 || L.m <= 0 || L.nnz <= 0) return SPS_OK;
    typedef pad_vals_dict<T, false> D;
    typedef pad_vals_plain<T, false> P;
    return (L.vdict ? (L.col16 ? pad_spmvt_launch<T, pad_cols16<true>, D> : pad_spmvt_launch<T, pad_cols32<true>, D>)
                    : (L.col16 ? pad_spmvt_launch<T, pad_cols16<true>, P> : pad_spmvt_launch<T, pad_cols32<true>, P>))(
        ex, L, val, sc<T>::from(a), (const T *)x, (T *)y);
}

/* ---------------------------------------------------------------- extern "C" entry points */
/* The index kernels do not depend on the scalar type: the four entries share one instantiation. */
#define SPS_CU_PAD_ENTRIES(S, T)                                                                                    \
    extern "C" sps_status sps_cuda_pad_scatter_val_##S(sps_exec *ex, sps_pad_layout L, const sps_index *rowptr, \
                                                       const void *src_val, int ew, int soa, void *val)            \
    { return pad_scatter_val_impl<T>(ex, L, rowptr, src_val, ew, soa, val); }                                     \
    extern "C" sps_status sps_cuda_pad_spmv_##S(sps_exec *ex, sps_pad_layout L, const void *val, sps_cplx a,     \
                                                const void *x, sps_cplx b, void *y)                                \
    { return pad_spmv_impl<T>(ex, L, val, a, x, b, y); }                                                          \
    extern "C" sps_status sps_cuda_pad_spmvt_##S(sps_exec *ex, sps_pad_layout L, const void *val, sps_cplx a,    \
                                                 const void *x, sps_cplx b, void *y)                               \
    { return pad_spmvt_impl<T>(ex, L, val, a, x, b, y); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_PAD_ENTRIES)

/* The index family (kernels/index_kernels.h): once, not per scalar type. */
extern "C" sps_status sps_cuda_pad_rowlen(sps_exec *ex, sps_index n, const sps_index *rowptr,
                                              const sps_index *perm, sps_index *rl)
{ return pad_rowlen_impl(ex, n, rowptr, perm, rl); }

extern "C" sps_status sps_cuda_pad_sort_rows(sps_exec *ex, sps_index n, sps_index window,
                                                 const sps_index *len, sps_index *perm)
{ return pad_sort_rows_impl(ex, n, window, len, perm); }

extern "C" sps_status sps_cuda_pad_widths(sps_exec *ex, sps_index n, sps_index chunk, const sps_index *rl,
                                              const sps_index *rowptr, const sps_index *perm,
                                              const sps_index *src_col, sps_index *w, sps_index *lo)
{ return pad_widths_impl(ex, n, chunk, rl, rowptr, perm, src_col, w, lo); }

extern "C" sps_status sps_cuda_pad_group_ptr(sps_exec *ex, sps_index ngroups, sps_index h,
                                                 sps_index nstored, const sps_index *w, int64_t *gp)
{ return pad_group_ptr_impl(ex, ngroups, h, nstored, w, gp); }

extern "C" sps_status sps_cuda_pad_scatter_col(sps_exec *ex, sps_pad_layout L, const sps_index *rowptr,
                                                   const sps_index *src_col, void *col)
{ return pad_scatter_col_impl(ex, L, rowptr, src_col, col); }
