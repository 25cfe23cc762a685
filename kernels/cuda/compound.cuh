/* CUDA kernels of the compound family (kernels/compound_kernels.h): dense b x b
 * blocks (b = 2..8, real or complex) and quaternions in CSR (bcsr) or the padded
 * layout (bell, bsell), AoS or SoA entries.  The CPU reference:
 * kernels/cpu/compound_entry.inc.
 *
 * One generic source.  The variants are template instantiations of
 *   cmp_spmv_kernel<T, E, SOA, RS> / cmp_spmvt_kernel<T, E, SOA, RS>
 * T the scalar (float, double, cx<float>, cx<double>); E the entry (cmp_block<B>,
 * B = 3, 4 a compile-time constant with unrolled loops and the accumulators in
 * registers, B = 0 any b = 2..8 read at run time with the loops unrolled to 8 and
 * predicated; cmp_quat the Hamilton product, written out); SOA the entry layout
 * (member p of entry k at val[k nv + p] or val[p N + k]); RS the outer layout
 * (cmp_csr_rows, or cmp_pad_rows with 32- or 16-bit columns).  compound_real.cu
 * and compound_cplx.cu instantiate them (two files: the build runs them in
 * parallel).
 *
 * The schedule is a run-time parameter of every instantiation (kernels/launch.h,
 * cmp_*), so the autotuner searches it without more code:
 *   - tpr threads a block-row (1..32, a power of 2): a group of tpr lanes of one
 *     warp owns a block-row; lane s takes the row's entries s, s + tpr, ... in
 *     order, each into d accumulators (d = b, or 4), and the group's partial
 *     sums meet in a butterfly of xor shuffles (a fixed tree: deterministic).
 *     Lanes of a group read consecutive entries: in CSR their values are
 *     contiguous (AoS: tpr entries of nv scalars back to back, each load
 *     instruction strided by nv and the lines reused by the next member's load
 *     through the L1; SoA: every member's load fully coalesced); in the padded
 *     layouts tpr = 1 makes consecutive lanes consecutive rows of a column-major
 *     slice, consecutive slots.  Lane r mod tpr writes output r of the row.
 *   - static (cmp_sched 0): warp w takes rows w gpw, (w + W) gpw, ... (gpw =
 *     32 / tpr rows a warp, W warps in the grid; the default grid gives every
 *     group one row); dynamic (1): a warp claims gpw rows at a time from a
 *     64-bit counter in the context's workspace (atomicAdd by lane 0), which the
 *     last block to finish sets back to 0 for the next launch (no memset, so it
 *     captures into graphs).
 *   - warps a block (cmp_warps, default 8) and blocks an SM (cmp_bpsm: a grid of
 *     that many blocks per SM, rows in a grid-stride loop; dynamic without it:
 *     as many as are resident).
 *   Padded layouts: rows longer than the layout's long_len (its long_rows list)
 *   are left to a second launch of the same kernel over that list with a warp a
 *   row (tpr 32), as the scalar padded kernels do (padded.cu).
 * Vectors: AoS or SoA (vlay; cmp_vec holds the strides, run-time like the
 * schedule): SoA is what a format built with vector-layout soa runs on, its
 * boundary relaying the operator's AoS vectors out and back
 * (formats/compound_apply.c, vec_relayout.cu).
 * SpMV^T: y = b y, then each group scatters a E^T x_i of each entry (i, j) into
 * y_j by atomicAdd: NOT bit-reproducible (the CPU's is).
 * SpMV is deterministic run to run in every schedule (a row's sum does not
 * depend on which warp computes it); it equals the CPU to rounding (tpr > 1 sums
 * a row in another order, the GPU fuses multiply-adds).
 *
 * Traffic of SpMV (bcsr, the minimal model bench/ uses): nnz (nv s + 4) +
 * (n + 1) 4 bytes of matrix, x once (m d s; gathers of a block's d scalars hit
 * the L1/L2 after the first), y written once (n d s) and read when b != 0. */
#ifndef SPS_CUDA_COMPOUND_CUH
#define SPS_CUDA_COMPOUND_CUH
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/pad_cols.cuh"
#include "kernels/compound_kernels.h"
#include "kernels/launch.h"

#include <limits.h>

#define CMP_MAX_THREADS 512 /* cmp_warps 16 */
#define CMP_DEF_WARPS 8

namespace {

__device__ inline float shfl_xor_t(float v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
__device__ inline double shfl_xor_t(double v, int o) { return __shfl_xor_sync(0xffffffffu, v, o); }
template <typename R> __device__ inline cx<R> shfl_xor_t(cx<R> v, int o)
{
    return mkcx(__shfl_xor_sync(0xffffffffu, v.re, o), __shfl_xor_sync(0xffffffffu, v.im, o));
}

/* ---------------------------------------------------------------- entries */
/* An AoS entry's NV members into registers: 16-byte loads where the entry is a
 * multiple of 16 bytes (b = 4 real and complex, quaternions, complex blocks of
 * doubles; entries are then 16-byte aligned, the arrays coming from cudaMalloc),
 * else a load a member.  One load a member left b = 4 f64 at 43 % of the copy
 * bandwidth in every launch shape (H200, 27-point stencil, 2.9M blocks: each of
 * the 16 loads of a warp touched tpr lines 128 bytes apart), where SoA reached 70 %. */
template <int NV, typename T> __device__ inline void cmp_load_aos(const T *__restrict__ v, T *e)
{
    if constexpr ((NV * sizeof(T)) % 16 == 0) {
        const uint4 *p = reinterpret_cast<const uint4 *>(v);
#pragma unroll
        for (int i = 0; i < (int)(NV * sizeof(T) / 16); i++) {
            const uint4 u = ldg_t(p + i);
            memcpy(&e[i * (16 / sizeof(T))], &u, 16);
        }
    } else {
#pragma unroll
        for (int i = 0; i < NV; i++) e[i] = ldg_t(v + i);
    }
}

/* A b x b block, row-major: member (r, c) at v[(r b + c) ms].  B = 0: b at run time. */
template <int B> struct cmp_block {
    static constexpr int DM = B ? B : SPS_CMP_MAX_DIM; /* accumulators a row */
    int b_;
    static cmp_block of(sps_entry_desc e) { return cmp_block{e.block}; }
    __device__ __host__ int d() const { return B ? B : b_; }
    __device__ __host__ int nv() const { return d() * d(); }
    /* element (r, c) of the entry at v (members ms apart) */
    template <typename T> __device__ T elem(const T *__restrict__ v, int64_t ms, int r, int c) const
    {
        return v[(int64_t)(r * d() + c) * ms];
    }
    /* acc += E xj */
    template <bool SOA, typename T> __device__ void mv(const T *__restrict__ v, int64_t ms, const T *xj, T *acc) const
    {
        if constexpr (!SOA && B != 0) {
            T e[B * B];
            cmp_load_aos<B * B>(v, e);
#pragma unroll
            for (int r = 0; r < B; r++)
#pragma unroll
                for (int c = 0; c < B; c++) acc[r] = acc[r] + e[r * B + c] * xj[c];
        } else {
            const int b = d();
#pragma unroll
            for (int r = 0; r < DM; r++)
#pragma unroll
                for (int c = 0; c < DM; c++)
                    if (r < b && c < b) acc[r] = acc[r] + ldg_t(v + (int64_t)(r * b + c) * ms) * xj[c];
        }
    }
    /* t = E^T xi */
    template <bool SOA, typename T> __device__ void mtv(const T *__restrict__ v, int64_t ms, const T *xi, T *t) const
    {
        if constexpr (!SOA && B != 0) {
            T e[B * B];
            cmp_load_aos<B * B>(v, e);
#pragma unroll
            for (int c = 0; c < B; c++) {
                T s = zero_of<T>();
#pragma unroll
                for (int r = 0; r < B; r++) s = s + e[r * B + c] * xi[r];
                t[c] = s;
            }
        } else {
            const int b = d();
#pragma unroll
            for (int c = 0; c < DM; c++) {
                T s = zero_of<T>();
#pragma unroll
                for (int r = 0; r < DM; r++)
                    if (r < b && c < b) s = s + ldg_t(v + (int64_t)(r * b + c) * ms) * xi[r];
                t[c] = s;
            }
        }
    }
};

/* A quaternion q = w + xi + yj + zk (members w, x, y, z) acting by q v, its
 * matrix L(q) = [[w,-x,-y,-z],[x,w,-z,y],[y,z,w,-x],[z,-y,x,w]] written out;
 * the transpose is L(conj q). */
struct cmp_quat {
    static constexpr int DM = 4;
    static cmp_quat of(sps_entry_desc) { return cmp_quat{}; }
    __device__ __host__ int d() const { return 4; }
    __device__ __host__ int nv() const { return 4; }
    /* element (r, c) of L(q), the entry's 4 x 4 left-multiplication matrix: member r ^ c
     * with sps_q_sign's sign (kernels/compound_kernels.h) */
    template <typename T> __device__ T elem(const T *__restrict__ v, int64_t ms, int r, int c) const
    {
        constexpr int neg = 0x284E; /* bit 4r + c set where sps_q_sign[r][c] = -1 */
        const T m = v[(int64_t)(r ^ c) * ms];
        return (neg >> (4 * r + c)) & 1 ? -m : m;
    }
    /* w, x, y, z of the entry at v */
    template <bool SOA, typename T> __device__ static void load(const T *__restrict__ v, int64_t ms, T *q)
    {
        if constexpr (SOA) {
#pragma unroll
            for (int i = 0; i < 4; i++) q[i] = ldg_t(v + i * ms);
        } else {
            cmp_load_aos<4>(v, q);
        }
    }
    template <bool SOA, typename T> __device__ void mv(const T *__restrict__ v, int64_t ms, const T *u, T *acc) const
    {
        T q[4];
        load<SOA>(v, ms, q);
        const T w = q[0], x = q[1], y = q[2], z = q[3];
        acc[0] += w * u[0] - x * u[1] - y * u[2] - z * u[3];
        acc[1] += x * u[0] + w * u[1] - z * u[2] + y * u[3];
        acc[2] += y * u[0] + z * u[1] + w * u[2] - x * u[3];
        acc[3] += z * u[0] - y * u[1] + x * u[2] + w * u[3];
    }
    template <bool SOA, typename T> __device__ void mtv(const T *__restrict__ v, int64_t ms, const T *u, T *t) const
    {
        T q[4];
        load<SOA>(v, ms, q);
        const T w = q[0], x = q[1], y = q[2], z = q[3];
        t[0] = w * u[0] + x * u[1] + y * u[2] + z * u[3];
        t[1] = w * u[1] - x * u[0] + z * u[2] - y * u[3];
        t[2] = w * u[2] - y * u[0] - z * u[1] + x * u[3];
        t[3] = w * u[3] - z * u[0] + y * u[1] - x * u[2];
    }
};

/* ---------------------------------------------------------------- outer layouts */
/* A block-row: its first position p, the distance between its entries, its
 * entries, and the row of y (SpMV) / x (SpMV^T) it belongs to. */
struct cmp_row {
    int64_t p;
    sps_index stride, len, out;
};

struct cmp_csr_rows {
    const sps_index *rowptr, *col;
    struct reader {
        const sps_index *c;
        __device__ sps_index operator()(int64_t q) const { return ldg_t(c + q); }
    };
    __device__ cmp_row row(sps_index i) const
    {
        const sps_index p = ldg_t(rowptr + i);
        return cmp_row{p, 1, ldg_t(rowptr + i + 1) - p, i};
    }
    __device__ reader cols(sps_index) const { return reader{col}; }
};

/* Storage row r of a padded layout (CL: pad_cols32 or pad_cols16, pad_cols.cuh). */
template <template <bool> class CL> struct cmp_pad_rows {
    sps_pad_layout L;
    typedef CL<false> reader;
    __device__ cmp_row row(sps_index r) const
    {
        sps_index stride;
        const int64_t p = sps_pad_row_base(&L, r, &stride);
        return cmp_row{p, stride, L.rl[r], L.perm ? L.perm[r] : r};
    }
    __device__ reader cols(sps_index r) const { return reader(L, r / L.h); }
};

/* ---------------------------------------------------------------- schedule */
/* What a launch covers and how its warps find their rows. */
struct cmp_sched {
    int tpr;                  /* lanes a block-row: 1, 2, 4, 8, 16, 32 */
    int dynamic;              /* rows from *ctr (else static) */
    unsigned long long *ctr;  /* dynamic: the row counter, *done the blocks finished (both 0 between launches) */
    unsigned *done;
    const sps_index *list;    /* NULL: rows 0 .. nrows-1, else list[0 .. nrows-1] */
    sps_index nrows;
    sps_index skip_len;       /* rows longer than this are another launch's (padded long rows) */
};

/* The first of the next gpw rows of this warp: static, its own stride of the
 * grid; dynamic, claimed by lane 0 and broadcast. */
__device__ inline int64_t cmp_claim(const cmp_sched &s, int64_t prev, int gpw, int lane)
{
    if (!s.dynamic) {
        const int64_t nwarps = ((int64_t)gridDim.x * blockDim.x) >> 5;
        return prev < 0 ? (((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5) * gpw : prev + nwarps * gpw;
    }
    unsigned long long v = 0;
    if (lane == 0) v = atomicAdd(s.ctr, (unsigned long long)gpw);
    return (int64_t)__shfl_sync(0xffffffffu, v, 0);
}

/* Dynamic: the last block to finish sets the counters back to 0 (every warp has
 * stopped claiming once every block has counted itself here). */
__device__ inline void cmp_finish(const cmp_sched &s)
{
    if (!s.dynamic) return;
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(s.done, 1u) == gridDim.x - 1) {
            *s.ctr = 0;
            *s.done = 0;
            __threadfence();
        }
    }
}

/* The vectors' layout: block j of x at x + j xs, its scalars xm apart (AoS: d and 1,
 * SoA: 1 and the blocks of x); y likewise. */
struct cmp_vec {
    int64_t xs, xm, ys, ym;
};
/* x of nx blocks and y of ny blocks of d scalars in layout vl. */
static inline cmp_vec cmp_vec_of(sps_entry_layout vl, int d, sps_index nx, sps_index ny)
{
    return vl == SPS_ENTRY_SOA ? cmp_vec{1, nx, 1, ny} : cmp_vec{d, 1, d, 1};
}

/* Every group's rows, f(row, own, sub) for each (warp-uniform loop: all lanes
 * reach the shuffles; own false past the end and for rows left to another launch,
 * whose len is then 0). */
template <class RS, class F> __device__ inline void cmp_for_rows(const RS &rs, const cmp_sched &s, F f)
{
    const int lane = threadIdx.x & 31, tpr = s.tpr, gpw = 32 / tpr, sub = lane & (tpr - 1);
    for (int64_t base = cmp_claim(s, -1, gpw, lane); base < s.nrows; base = cmp_claim(s, base, gpw, lane)) {
        const int64_t ri = base + lane / tpr;
        cmp_row rw{0, 1, 0, 0};
        sps_index r = 0;
        bool own = false;
        if (ri < s.nrows) {
            r = s.list ? s.list[ri] : (sps_index)ri;
            rw = rs.row(r);
            own = rw.len <= s.skip_len;
            if (!own) rw.len = 0;
        }
        f(rw, rs.cols(r), own, sub);
    }
    cmp_finish(s);
}

/* acc = A_i x for the block-row rw (entries at val + q es, members ms apart; x's block j
 * at x + j xs, its scalars xm apart), every lane of the row's group of tpr holding the
 * total: lane sub sums entries sub, sub + tpr, ..., then a butterfly of xor shuffles. */
template <typename T, class E, bool SOA, class C>
__device__ inline void cmp_row_product(const E &e, const cmp_row &rw, const C &col, int sub, int tpr,
                                       const T *__restrict__ val, int64_t es, int64_t ms, const T *__restrict__ x,
                                       int64_t xs, int64_t xm, T *acc)
{
    constexpr int DM = E::DM;
    const int d = e.d();
#pragma unroll
    for (int r = 0; r < DM; r++) acc[r] = zero_of<T>();
#pragma unroll 2
    for (sps_index k = sub; k < rw.len; k += tpr) {
        const int64_t q = rw.p + (int64_t)k * rw.stride;
        const T *xj = x + col(q) * xs;
        T xv[DM];
#pragma unroll
        for (int c = 0; c < DM; c++) xv[c] = c < d ? ldg_t(xj + c * xm) : zero_of<T>();
        e.template mv<SOA>(val + q * es, ms, xv, acc);
    }
    for (int o = tpr / 2; o > 0; o >>= 1)
#pragma unroll
        for (int r = 0; r < DM; r++)
            if (r < d) acc[r] = acc[r] + shfl_xor_t(acc[r], o);
}

/* y_i = a A_i x + b y_i, A_i the block-row (entries at val + q es, members ms apart). */
template <typename T, class E, bool SOA, class RS>
__global__ void __launch_bounds__(CMP_MAX_THREADS)
    cmp_spmv_kernel(RS rs, E e, int64_t nent, const T *__restrict__ val, T a, const T *__restrict__ x, T b, int bz,
                    T *__restrict__ y, cmp_vec v, cmp_sched s)
{
    constexpr int DM = E::DM;
    const int d = e.d(), tpr = s.tpr;
    const int64_t es = SOA ? 1 : e.nv(), ms = SOA ? nent : 1;
    cmp_for_rows(rs, s, [&](const cmp_row &rw, const typename RS::reader &col, bool own, int sub) {
        T acc[DM];
        cmp_row_product<T, E, SOA>(e, rw, col, sub, tpr, val, es, ms, x, v.xs, v.xm, acc);
        if (!own) return;
        T *yi = y + rw.out * v.ys;
#pragma unroll
        for (int r = 0; r < DM; r++)
            if (r < d && (r & (tpr - 1)) == sub) yi[r * v.ym] = bz ? a * acc[r] : a * acc[r] + b * yi[r * v.ym];
    });
}

/* y_i = A_i x for AoS vectors, and x^H y reduced over the grid (CG's q = A p with
 * p^H q): the row's writing lanes add conj(x_i[r]) y_i[r] as they store y_i[r], then
 * the blocks' sums meet as every reduction's do (sps_cu_reduce_finish: a fixed tree,
 * the partials in block order: deterministic).  Saves the dot's pass over p and q
 * (2 n d scalars).  256 threads a block (the reduction's), the static or dynamic rows
 * of cmp_for_rows. */
template <typename T, class E, bool SOA, class RS>
__global__ void __launch_bounds__(SPS_CU_RED_THREADS)
    cmp_spmv_dot_kernel(RS rs, E e, int64_t nent, const T *__restrict__ val, const T *__restrict__ x,
                        T *__restrict__ y, cmp_sched s, typename sc<T>::ACC *part, unsigned *counter, sps_cplx *slots,
                        sps_cu_outs outs)
{
    typedef typename sc<T>::ACC A;
    constexpr int DM = E::DM;
    const int d = e.d(), tpr = s.tpr;
    const int64_t es = SOA ? 1 : e.nv(), ms = SOA ? nent : 1;
    A dot = A();
    cmp_for_rows(rs, s, [&](const cmp_row &rw, const typename RS::reader &col, bool own, int sub) {
        T acc[DM];
        cmp_row_product<T, E, SOA>(e, rw, col, sub, tpr, val, es, ms, x, d, 1, acc);
        if (!own) return;
        const int64_t i0 = (int64_t)rw.out * d;
#pragma unroll
        for (int r = 0; r < DM; r++)
            if (r < d && (r & (tpr - 1)) == sub) {
                y[i0 + r] = acc[r];
                dot += to_acc(conjv(ldg_t(x + i0 + r))) * to_acc(acc[r]);
            }
    });
    accv<A, 1> a;
    a.v[0] = dot;
    sps_cu_reduce_finish<A, 1>(a, part, counter, slots, outs, sps_cu_no_guard(), 0);
}

/* y_j += a E_ij^T x_i for every entry (i, j) of the block-rows (y scaled before). */
template <typename T, class E, bool SOA, class RS>
__global__ void __launch_bounds__(CMP_MAX_THREADS)
    cmp_spmvt_kernel(RS rs, E e, int64_t nent, const T *__restrict__ val, T a, const T *__restrict__ x, T *y,
                     cmp_vec v, cmp_sched s)
{
    constexpr int DM = E::DM;
    const int d = e.d(), tpr = s.tpr;
    const int64_t es = SOA ? 1 : e.nv(), ms = SOA ? nent : 1;
    cmp_for_rows(rs, s, [&](const cmp_row &rw, const typename RS::reader &col, bool, int sub) {
        if (rw.len <= sub) return; /* no shuffles here: lanes leave freely */
        T xi[DM];
#pragma unroll
        for (int r = 0; r < DM; r++) xi[r] = r < d ? a * ldg_t(x + rw.out * v.xs + r * v.xm) : zero_of<T>();
        for (sps_index k = sub; k < rw.len; k += tpr) {
            const int64_t q = rw.p + (int64_t)k * rw.stride;
            T *yj = y + col(q) * v.ys;
            T t[DM];
            e.template mtv<SOA>(val + q * es, ms, xi, t);
#pragma unroll
            for (int c = 0; c < DM; c++)
                if (c < d) atomic_add(yj + c * v.ym, t[c]);
        }
    });
}

/* The diagonal entries' expansions, one thread an element (k, r, c) (compound_kernels.h
 * bcsr_diag_blocks): each finds its row's diagonal entry (rows are short) and writes one
 * value; consecutive threads, consecutive outputs. */
template <typename T, class E, bool SOA>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    cmp_diag_kernel(E e, sps_index n, int64_t nent, const sps_index *__restrict__ rowptr,
                    const sps_index *__restrict__ col, const T *__restrict__ val, T *__restrict__ out)
{
    const int d = e.d();
    const int64_t total = (int64_t)n * d * d, es = SOA ? 1 : e.nv(), ms = SOA ? nent : 1;
    for (int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; t < total; t += (int64_t)gridDim.x * blockDim.x) {
        const sps_index k = (sps_index)(t / (d * d));
        const int rc = (int)(t - (int64_t)k * d * d), r = rc / d, c = rc - r * d;
        T v = zero_of<T>();
        for (sps_index q = rowptr[k]; q < rowptr[k + 1]; q++)
            if (col[q] == k) {
                v = e.elem(val + q * es, ms, r, c);
                break;
            }
        out[t] = v;
    }
}

/* ---------------------------------------------------------------- launches */
static inline int cmp_pow2_floor(double v)
{
    int p = 1;
    while (p < 32 && 2.0 * p <= v) p *= 2;
    return p;
}

/* Threads a block-row by default, from the mean entries a block-row: bcsr half the
 * mean (lanes read consecutive entries of a row: several rounds of loads in flight,
 * few idle lanes at a row's end), the padded layouts a third or so (their lanes'
 * entries are a slice apart).  H200, spbench 2026-11-26, f64, 5M-nonzero matrices,
 * SpMV ms at tpr 1 / 2 / 4 / 8 / 16: 27-point 3x3-block stencil (27 a row) bcsr
 * 0.065 / 0.038 / 0.023 / 0.019 / 0.019, bsell 0.028 / 0.020 / 0.018 / 0.028 /
 * 0.034; quaternion Laplacian (7 a row) bcsr 0.013 / 0.011 / 0.013 / 0.014 / 0.021,
 * bsell 0.012 / 0.011 / 0.013 / 0.016 / 0.026.  One lane a row leaves too few
 * threads to cover the loads' latency unless the matrix is huge. */
static inline int cmp_default_tpr(bool padded, double mean)
{
    return cmp_pow2_floor(padded ? mean / 3.5 : mean / 2);
}

/* One launch of SpMV (trans false) or SpMV^T over s.nrows rows. */
template <typename T, class E, bool SOA, class RS>
static sps_status cmp_launch(sps_exec *ex, bool trans, const RS &rs, E e, int64_t nent, const void *val, T a,
                             const void *x, T b, int bz, void *y, cmp_vec v, cmp_sched s)
{
    const sps_launch_variant *lv = ex->lv;
    const int warps = lv && lv->cmp_warps ? lv->cmp_warps : CMP_DEF_WARPS;
    const int bpsm = lv ? lv->cmp_bpsm : 0, tpb = warps * 32;
    if (s.nrows <= 0) return SPS_OK;
    const int64_t rows_a_block = (int64_t)tpb / s.tpr;
    int64_t grid = (s.nrows + rows_a_block - 1) / rows_a_block;
    void (*kn)(RS, E, int64_t, const T *, T, const T *, T, int, T *, cmp_vec, cmp_sched) = cmp_spmv_kernel<T, E, SOA, RS>;
    void (*kt)(RS, E, int64_t, const T *, T, const T *, T *, cmp_vec, cmp_sched) = cmp_spmvt_kernel<T, E, SOA, RS>;
    int64_t cap = 0;
    if (bpsm) cap = (int64_t)bpsm * sps_cust(ex)->sms;
    else if (s.dynamic) {
        int per_sm = 0;
        SPS_CU(ex, trans ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kt, tpb, 0)
                         : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kn, tpb, 0));
        cap = (int64_t)(per_sm > 0 ? per_sm : 1) * sps_cust(ex)->sms;
    }
    if (cap && grid > cap) grid = cap;
    if (s.dynamic) {
        /* the counters of the workspace's flag area (zero at init, reset by each launch's last block) */
        unsigned char *flag = (unsigned char *)sps_cuws_flag(ex);
        s.ctr = (unsigned long long *)(flag + 192);
        s.done = (unsigned *)(flag + 200);
    }
    if (trans)
        kt<<<(unsigned)grid, tpb, 0, sps_custream(ex)>>>(rs, e, nent, (const T *)val, a, (const T *)x, (T *)y, v, s);
    else
        kn<<<(unsigned)grid, tpb, 0, sps_custream(ex)>>>(rs, e, nent, (const T *)val, a, (const T *)x, b, bz, (T *)y,
                                                          v, s);
    SPS_CU_LAUNCHED(ex, "cmp_spmv_kernel / cmp_spmvt_kernel");
    return SPS_OK;
}

/* The launches of a product over n rows (and the padded layout's long rows). */
template <typename T, class E, bool SOA, class RS>
static sps_status cmp_product(sps_exec *ex, bool trans, const RS &rs, E e, int64_t nent, sps_index n, double mean,
                              bool padded, sps_index nlong, const sps_index *long_rows, sps_index long_len,
                              const void *val, sps_cplx a, const void *x, sps_cplx b, void *y, cmp_vec v)
{
    const sps_launch_variant *lv = ex->lv;
    const int bz = b.re == 0.0 && b.im == 0.0;
    const T at = sc<T>::from(a), bt = sc<T>::from(b);
    cmp_sched s{};
    s.tpr = lv && lv->cmp_tpr ? lv->cmp_tpr : cmp_default_tpr(padded, mean);
    s.dynamic = lv ? lv->cmp_sched : 0;
    s.nrows = n;
    s.skip_len = nlong > 0 ? long_len : INT_MAX;
    SPS_CHECK((cmp_launch<T, E, SOA, RS>(ex, trans, rs, e, nent, val, at, x, bt, bz, y, v, s)));
    if (nlong <= 0) return SPS_OK;
    cmp_sched sl{};
    sl.tpr = 32;
    sl.list = long_rows;
    sl.nrows = nlong;
    sl.skip_len = INT_MAX;
    return cmp_launch<T, E, SOA, RS>(ex, trans, rs, e, nent, val, at, x, bt, bz, y, v, sl);
}

/* The fused product and dot on bcsr (cmp_spmv_dot_kernel): the matrix's threads a
 * block-row and row schedule; 256-thread blocks whatever cmp_warps says, and at most
 * as many as the reduction has partials for (grid-stride rows). */
template <typename T, class E, bool SOA>
static sps_status cmp_spmv_dot_launch(sps_exec *ex, const cmp_csr_rows &rs, E e, int64_t nent, sps_index n,
                                      double mean, const void *val, const void *x, void *y, sps_cplx *slots, int out)
{
    const sps_launch_variant *lv = ex->lv;
    cmp_sched s{};
    s.tpr = lv && lv->cmp_tpr ? lv->cmp_tpr : cmp_default_tpr(false, mean);
    s.dynamic = lv ? lv->cmp_sched : 0;
    s.nrows = n;
    s.skip_len = INT_MAX;
    auto kernel = cmp_spmv_dot_kernel<T, E, SOA, cmp_csr_rows>;
    int cap = 1;
    SPS_CHECK(sps_cu_resident(ex, kernel, &cap));
    const int64_t rows_a_block = SPS_CU_RED_THREADS / s.tpr;
    int64_t grid = ((int64_t)n + rows_a_block - 1) / rows_a_block;
    if (grid > cap) grid = cap;
    if (grid < 1) grid = 1;
    if (s.dynamic) {
        unsigned char *flag = (unsigned char *)sps_cuws_flag(ex);
        s.ctr = (unsigned long long *)(flag + 192);
        s.done = (unsigned *)(flag + 200);
    }
    kernel<<<(unsigned)grid, SPS_CU_RED_THREADS, 0, sps_custream(ex)>>>(
        rs, e, nent, (const T *)val, (const T *)x, (T *)y, s, (typename sc<T>::ACC *)sps_cuws_red(ex),
        sps_cuws_counter(ex), slots, sps_cu_arm(ex, sps_cu_outs1(out, SPS_CU_OUT_SUM)));
    SPS_CU_LAUNCHED(ex, "cmp_spmv_dot_kernel");
    sps_cu_armed_launched(ex);
    return SPS_OK;
}

/* Check the variant's run-time values the kernels rely on (the setter checked the
 * lists; a variant handed in some other way is refused here, not run). */
static inline sps_status cmp_check_variant(sps_exec *ex)
{
    const sps_launch_variant *lv = ex->lv;
    if (!lv) return SPS_OK;
    const int t = lv->cmp_tpr, w = lv->cmp_warps, bp = lv->cmp_bpsm;
    if (t < 0 || t > 32 || (t & (t - 1)) || w < 0 || w > 16 || (w & (w - 1)) || w == 1 || bp < 0 || bp > 8 ||
        (lv->cmp_sched != 0 && lv->cmp_sched != 1))
        return sps_kerror(ex, SPS_ERR_ARG,
                          "compound kernels: launch variant tpr %d warps %d bpsm %d sched %d: tpr 0 or 1..32 and "
                          "warps 0 or 2..16, powers of 2; bpsm 0..8; sched 0 or 1",
                          t, w, bp, lv->cmp_sched);
    return SPS_OK;
}

template <typename T, class E>
static sps_status cmp_bcsr_impl(sps_exec *ex, bool trans, sps_entry_desc ed, sps_entry_layout lay,
                                sps_entry_layout vlay, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                                const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    SPS_CHECK(cmp_check_variant(ex));
    const E e = E::of(ed);
    if (trans) {
        SPS_CHECK(scale_y<T>(ex, m * e.d(), b, y));
        if (nnz <= 0) return SPS_OK;
        b = sps_cplx{0.0, 0.0};
    }
    const cmp_csr_rows rs{rowptr, col};
    const double mean = n > 0 ? (double)nnz / n : 0;
    return (lay == SPS_ENTRY_SOA ? cmp_product<T, E, true, cmp_csr_rows> : cmp_product<T, E, false, cmp_csr_rows>)(
        ex, trans, rs, e, nnz, n, mean, false, 0, NULL, 0, val, a, x, b, y,
        trans ? cmp_vec_of(vlay, e.d(), n, m) : cmp_vec_of(vlay, e.d(), m, n));
}

template <typename T, class E>
static sps_status cmp_bcsr_diag_impl(sps_exec *ex, sps_entry_desc ed, sps_entry_layout lay, sps_index n, int64_t nnz,
                                     const sps_index *rowptr, const sps_index *col, const void *val, void *out)
{
    const E e = E::of(ed);
    const int64_t total = (int64_t)n * e.d() * e.d();
    if (total <= 0) return SPS_OK;
    const unsigned grid = sps_cu_grid(ex, total);
    if (lay == SPS_ENTRY_SOA)
        cmp_diag_kernel<T, E, true><<<grid, SPS_CU_THREADS, 0, sps_custream(ex)>>>(e, n, nnz, rowptr, col, (const T *)val,
                                                                                    (T *)out);
    else
        cmp_diag_kernel<T, E, false><<<grid, SPS_CU_THREADS, 0, sps_custream(ex)>>>(e, n, nnz, rowptr, col,
                                                                                     (const T *)val, (T *)out);
    SPS_CU_LAUNCHED(ex, "cmp_diag_kernel");
    return SPS_OK;
}

template <typename T, class E>
static sps_status cmp_bcsr_dot_impl(sps_exec *ex, sps_entry_desc ed, sps_entry_layout lay, sps_index n, int64_t nnz,
                                    const sps_index *rowptr, const sps_index *col, const void *val, const void *x,
                                    void *y, sps_cplx *slots, int out)
{
    SPS_CHECK(cmp_check_variant(ex));
    const E e = E::of(ed);
    const cmp_csr_rows rs{rowptr, col};
    const double mean = n > 0 ? (double)nnz / n : 0;
    return (lay == SPS_ENTRY_SOA ? cmp_spmv_dot_launch<T, E, true> : cmp_spmv_dot_launch<T, E, false>)(
        ex, rs, e, nnz, n < 0 ? 0 : n, mean, val, x, y, slots, out);
}

template <typename T, class E, template <bool> class CL>
static sps_status cmp_pad_run(sps_exec *ex, bool trans, const sps_pad_layout &L, E e, sps_entry_layout lay,
                              sps_entry_layout vlay, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    const cmp_pad_rows<CL> rs{L};
    const double mean = L.n > 0 ? (double)L.nnz / L.n : 0;
    return (lay == SPS_ENTRY_SOA ? cmp_product<T, E, true, cmp_pad_rows<CL>> : cmp_product<T, E, false, cmp_pad_rows<CL>>)(
        ex, trans, rs, e, L.slots, L.n, mean, true, L.nlong, L.long_rows, L.long_len, val, a, x, b, y,
        trans ? cmp_vec_of(vlay, e.d(), L.n, L.m) : cmp_vec_of(vlay, e.d(), L.m, L.n));
}

template <typename T, class E>
static sps_status cmp_pad_impl(sps_exec *ex, bool trans, sps_entry_desc ed, sps_entry_layout lay,
                               sps_entry_layout vlay, sps_pad_layout L, const void *val, sps_cplx a, const void *x,
                               sps_cplx b, void *y)
{
    SPS_CHECK(cmp_check_variant(ex));
    const E e = E::of(ed);
    if (trans) {
        SPS_CHECK(scale_y<T>(ex, L.m * e.d(), b, y));
        if (L.nnz <= 0) return SPS_OK;
        b = sps_cplx{0.0, 0.0};
    }
    return (L.col16 ? cmp_pad_run<T, E, pad_cols16> : cmp_pad_run<T, E, pad_cols32>)(ex, trans, L, e, lay, vlay, val, a,
                                                                                     x, b, y);
}

} // namespace

/* The extern "C" kernels of entry variant EN (bn, b3, b4, q; C++ type E) and scalar S (type T):
 * SpMV (TRANS false) and SpMV^T of each outer layout. */
#define SPS_CU_CMP_BCSR_(NAME, EN, S, E, T, TRANS)                                                               \
    extern "C" sps_status sps_cuda_##NAME##_##EN##_##S(sps_exec *ex, sps_entry_desc e, sps_entry_layout lay,       \
                                                        sps_entry_layout vlay, sps_index n, sps_index m,           \
                                                        int64_t nnz, const sps_index *rowptr,                      \
                                                        const sps_index *col, const void *val, sps_cplx a,         \
                                                        const void *x, sps_cplx b, void *y)                        \
    { return cmp_bcsr_impl<T, E>(ex, TRANS, e, lay, vlay, n, m, nnz, rowptr, col, val, a, x, b, y); }
#define SPS_CU_CMP_PAD_(NAME, EN, S, E, T, TRANS)                                                                \
    extern "C" sps_status sps_cuda_##NAME##_##EN##_##S(sps_exec *ex, sps_entry_desc e, sps_entry_layout lay,       \
                                                        sps_entry_layout vlay, sps_pad_layout L, const void *val,  \
                                                        sps_cplx a, const void *x, sps_cplx b, void *y)            \
    { return cmp_pad_impl<T, E>(ex, TRANS, e, lay, vlay, L, val, a, x, b, y); }
#define SPS_CU_CMP_DOT_(EN, S, E, T)                                                                             \
    extern "C" sps_status sps_cuda_bcsr_spmv_dot_##EN##_##S(sps_exec *ex, sps_entry_desc e, sps_entry_layout lay,  \
                                                             sps_index n, int64_t nnz, const sps_index *rowptr,     \
                                                             const sps_index *col, const void *val, const void *x,  \
                                                             void *y, sps_cplx *slots, int out)                     \
    { return cmp_bcsr_dot_impl<T, E>(ex, e, lay, n, nnz, rowptr, col, val, x, y, slots, out); }
#define SPS_CU_CMP_DIAG_(EN, S, E, T)                                                                            \
    extern "C" sps_status sps_cuda_bcsr_diag_blocks_##EN##_##S(sps_exec *ex, sps_entry_desc e,                     \
                                                                sps_entry_layout lay, sps_index n, int64_t nnz,      \
                                                                const sps_index *rowptr, const sps_index *col,       \
                                                                const void *val, void *out)                          \
    { return cmp_bcsr_diag_impl<T, E>(ex, e, lay, n, nnz, rowptr, col, val, out); }
#define SPS_CU_CMP_ENTRIES(EN, E, S, T)                                                                          \
    SPS_CU_CMP_BCSR_(bcsr_spmv, EN, S, E, T, false) SPS_CU_CMP_BCSR_(bcsr_spmvt, EN, S, E, T, true)              \
    SPS_CU_CMP_DOT_(EN, S, E, T) SPS_CU_CMP_DIAG_(EN, S, E, T)                                                    \
    SPS_CU_CMP_PAD_(pad_spmv, EN, S, E, T, false) SPS_CU_CMP_PAD_(pad_spmvt, EN, S, E, T, true)

/* The block variants of scalar S (type T): any b, then b = 3 and 4 unrolled. */
#define SPS_CU_CMP_BLOCKS(S, T)                                                                                  \
    SPS_CU_CMP_ENTRIES(bn, cmp_block<0>, S, T) SPS_CU_CMP_ENTRIES(b3, cmp_block<3>, S, T)                         \
    SPS_CU_CMP_ENTRIES(b4, cmp_block<4>, S, T)

#endif
