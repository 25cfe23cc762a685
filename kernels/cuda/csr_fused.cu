/* libspsolve — CUDA: the fused CSR products the solvers use, f32/f64/c32/c64 from one
 * set of templates (the row groups: csr_common.cuh, described in csr.cu).
 *
 * csr_spmv_dot  y = A x and slots[out] = x^H y in one launch (CG's q = A p, p^H q:
 *            one kernel and 2n values of traffic fewer than SpMV + dot).  The row
 *            groups of csr.cu; the lane writing y_i adds conj(x_i) y_i (x_i from the
 *            cache: the row read it) to its double accumulator; then the reduction
 *            end shared with every dot (common.cuh sps_cu_reduce_finish): fixed
 *            trees, partials in block order; the grid is the blocks that have rows,
 *            at most one resident wave.  Bit-reproducible.
 * csr_spmv_xpay_dot  p_new = z + c p_old, q = A p_new, slots[out] = p_new^H q in one
 *            launch: CG's direction update inside its product.  Every gathered
 *            column forms z_j + c p_old_j (the same instructions in every thread, so
 *            the row owner's stored p_new_i is what the others multiplied); p_old and
 *            p_new are different buffers (CG alternates them), so no thread reads
 *            what another writes.  Traffic: matrix + z, p_old gathered + p_new, q
 *            written: the xpay pass (3n) disappears for +1n of gathers.  Rows
 *            averaging more than 16 entries gather each column so often that the
 *            separate pass is cheaper: there p_new is formed first (same p_new
 *            bits; q may differ in the last bit, see csr_spmv_xpay_dot_impl).
 * csr_cg_iter  one CG iteration (csr_spmv_xpay_dot, then cg_step) in one
 *            cooperative launch with a grid barrier between the two phases, where
 *            the rows fit one resident wave (else the two kernels).
 *
 * Sums are in T, as the CPU reference (kernels/cpu/spmv.inc). */
#include "kernels/cuda/cg_step.cuh"
#include "kernels/cuda/csr_common.cuh"

#include <cooperative_groups.h>

namespace {

/* What becomes of a row's sum s: y = a s + b y (common.cuh sps_cu_axpby_out) ...
 * or y = s with conj(x_i) s added to the thread's dot accumulator (q = A p, p^H q),
 * x_i also stored to xout when given (the fused direction update's p_new). */
template <typename T, typename X> struct csr_dot_out {
    X xl; T *y; T *xout; typename sc<T>::ACC acc;
    __device__ void operator()(sps_index i, T s)
    {
        y[i] = s;
        const T xi = xl(i);
        if (xout) xout[i] = xi;
        acc += to_acc(conjv(xi)) * to_acc(s);
    }
};

/* ... or CG's new direction z + beta p_old, formed for every gathered column (every
 * thread forms it the same way, so the owner's stored p_new_i equals what the other
 * rows multiplied). */
template <typename T> struct csr_x_xpay {
    const T *z, *p; T beta;
    __device__ T operator()(sps_index c) const { return ldg_t(z + c) + beta * ldg_t(p + c); }
};
/* The host's form of it: beta from the slots (as xpay_s: double, rounded to T),
 * evaluated by each thread when the kernel starts (csr_x_bind). */
template <typename T> struct csr_x_xpay_s {
    const T *z, *p; const sps_cplx *slots; sps_scoef c;
};
/* csr_spmv_dot's rows: csr_bw's groups, staged one 256/TPR rows a pass, except
 * for 8- and 16-byte values (f64, c32, c64) gathering z + c p_old (two vectors),
 * which load directly.  H100, spbench solver mode 2026-11-23, CG an iteration (two runs
 * each): poisson3d-128 f64 (z + c p) staged K = 2 0.1531 ms, K = 1 0.1507,
 * direct 0.1444; stencil27b3-40 f64 (plain, 77 a row) K = 2 0.0990, K = 1
 * 0.0872, direct 0.0940; f32 poisson3d-128 K = 1 0.0926, direct 0.0939;
 * stencil27b3-40 K = 1 0.0680, direct 0.0660 (kept staged: one rule for f32).
 * Measured, no longer a knob (bench/results/knobs.md). */
template <typename X> struct csr_x_pair { static constexpr bool value = false; };
template <typename T> struct csr_x_pair<csr_x_xpay_s<T>> { static constexpr bool value = true; };
template <typename T, typename XH> struct csr_dot_bw : csr_bw<T> {
    static constexpr int K = sizeof(T) >= 8 && csr_x_pair<XH>::value ? 0 : 1;
};
template <typename X> __device__ inline X csr_x_bind(X x) { return x; }
template <typename T> __device__ inline csr_x_xpay<T> csr_x_bind(csr_x_xpay_s<T> x)
{
    return csr_x_xpay<T>{x.z, x.p, scoef_t<T>(x.c, x.slots)};
}

/* The rows with y = A x written and x_i^H y_i summed by the lane that writes y_i
 * (x plain or z + c p_old, stored to xout when given); returns the thread's sum. */
template <typename T, typename S, bool LONG, typename XH>
__device__ typename sc<T>::ACC csr_dot_rows(sps_index n, int tpr, const sps_index *rowptr, const sps_index *col,
                                            const T *val, XH xh, T *y, T *xout)
{
    const unsigned nb = csr_active_blocks(n, tpr);
    const auto x = csr_x_bind(xh);
    csr_dot_out<T, decltype(x)> out{x, y, xout, typename sc<T>::ACC()};
    if (blockIdx.x < nb) csr_block_rows<T, S, LONG>(n, rowptr, col, val, x, out, nb, tpr); /* uniform */
    return out.acc;
}

/* q = A p and p^H q: the rows as above, the dot of each row's sum with p_i taken by
 * the lane that writes it, then the deterministic end of every reduction
 * (sps_cu_reduce_finish: fixed trees, partials summed in block order).  Every block
 * of the grid takes part (csr_spmv_dot_grid: the blocks with rows, at most one
 * resident wave); blocks without rows add 0. */
/* The dot kernels: 6 resident blocks (40 registers), what ptxas chose for all four
 * types before the index rewrite above moved f32 to 48 (pinned for the same
 * reason).  H100 2026-11-23: 7 (36
 * registers, spills) made poisson3d-128 f64 CG 0.147 -> 0.167 ms; 8 (32) spills
 * more than 200 bytes in the f64 xpay form. */
constexpr int csr_dot_minb = 6; /* measured, no longer a knob (bench/results/knobs.md) */
template <typename T, typename XH, bool LONG>
__global__ void __launch_bounds__(SPS_CU_THREADS, csr_dot_minb)
    csr_spmv_dot_kernel(sps_index n, int tpr, const sps_index *rowptr, const sps_index *col, const T *val, XH xh, T *y, T *xout,
                        typename sc<T>::ACC *part, unsigned *counter, sps_cplx *slots, sps_cu_outs outs)
{
    accv<typename sc<T>::ACC, 1> acc;
    acc.v[0] = csr_dot_rows<T, csr_dot_bw<T, XH>, LONG>(n, tpr, rowptr, col, val, xh, y, xout);
    sps_cu_reduce_finish<typename sc<T>::ACC, 1>(acc, part, counter, slots, outs, sps_cu_no_guard(), 0);
}

/* One CG iteration on CSR in one cooperative launch (every block resident):
 *   phase 1  p = z + beta p_old, q = A p, block sums of p^H q   (csr_dot_rows)
 *   grid barrier; every block adds the block sums in the finishing block's order
 *            (thread t: blocks t, t + 256, ..., then BlockReduce), so all of them
 *            hold the same pq, bit for bit, without another launch; block 0
 *            stores it in slots[pq]
 *   phase 2  cg_step with that pq: alpha = rho / pq, x += alpha p, r -= alpha q,
 *            rr = r^H r (sps_cu_reduce_finish: the last block stores rr and stop)
 * Against csr_spmv_xpay_dot + cg_step this saves a launch, a drain of the grid
 * and the wait for the finishing block between them: on poisson3d-48 (all in L2)
 * the two kernels are latency, not bandwidth.  The phase-1 block sums sit in the
 * workspace's second partials row, so a block that is already reducing rr cannot
 * overwrite a block sum another block still reads. */
/* Registers: at most 64 (4 blocks an SM, 528 resident on the H100), 128 for c64
 * (whose values and split cg_step loads would spill at 64): f32 64 without spills,
 * f64 64 with 12 bytes of spills (csr_lat's 4 entries in flight).  Without the
 * bound f64 took 92 (2 blocks an SM: poisson3d-48's 432 blocks of rows would not
 * fit); the plain bound gave 32 with spills (poisson3d-48 f32 CG 18 -> 24 us an
 * iteration), and 8 blocks an SM spilled more (poisson3d-128 f64 CG 0.150 -> 0.176
 * ms).  Measured, no longer a knob (bench/results/knobs.md). */
template <typename T> constexpr int csr_cg_iter_minb = sizeof(T) > 8 ? 2 : 4;
template <typename T, typename XH, bool LONG>
__global__ void __launch_bounds__(SPS_CU_THREADS, csr_cg_iter_minb<T>)
    csr_cg_iter_kernel(sps_index n, int tpr, const sps_index *rowptr, const sps_index *col, const T *val, XH xh, T *p, T *q,
                       T *x, T *r, typename sc<T>::ACC *part, unsigned *counter, sps_cplx *slots, sps_cg_slots ks,
                       sps_cu_outs rr_out)
{
    typedef typename sc<T>::ACC A;
    typedef cub::BlockReduce<accv<A, 1>, SPS_CU_RED_THREADS> BR;
    __shared__ typename BR::TempStorage tmp;
    __shared__ A pq_sh;
    accv<A, 1> acc;
    acc.v[0] = csr_dot_rows<T, csr_lat<T>, LONG>(n, tpr, rowptr, col, val, xh, q, p);
    A *pqpart = part + SPS_CU_PART_MAX_BLOCKS;
    accv<A, 1> tot = BR(tmp).Reduce(acc, accv_sum<A, 1>());
    if (threadIdx.x == 0) pqpart[blockIdx.x] = tot.v[0];
    cooperative_groups::this_grid().sync();
    __syncthreads(); /* tmp reused */
    tot = sps_cu_sum_partials<A, 1>(pqpart, tmp);
    if (threadIdx.x == 0) pq_sh = tot.v[0];
    __syncthreads();
    const cg_guard g{{}, ks, 1, acc_to_cplx(pq_sh)};
    if (blockIdx.x == 0 && threadIdx.x == 0) slots[ks.pq] = g.pq;
    /* phase 2: p and q were written in phase 1 by any block: plain loads, after the barrier */
    sps_cu_reduce_pass<A, 1>(cg_step_op<T>{slots, g, p, q, x, r, n - 1, T(), false, NULL, NULL}, n, part, counter, slots, rr_out, g,
                             ks.rr);
}

} // namespace

/* ---------------------------------------------------------------- implementations */

/* csr_spmv_dot's grid: the blocks that have rows (from the host's nnz, so no idle
 * block pays the reduction end), at most one resident wave (its finishing block
 * sums one partial a block: 1000s of partials would make it the tail). */
template <typename T, typename S = csr_bw<T>, typename K>
static sps_status csr_spmv_dot_grid(sps_exec *ex, K kernel, sps_index n, int64_t nnz, unsigned *grid)
{
    int cap = 1;
    SPS_CHECK(sps_cu_resident(ex, kernel, &cap));
    const int64_t need = ((int64_t)n * csr_tpr_of<T, S>(n, nnz) + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    *grid = (unsigned)(need < 1 ? 1 : need < cap ? need : cap);
    return SPS_OK;
}

/* The fused products: q = A x (x plain, or z + c pold), slots[out] = x^H q. */
template <typename T, typename X>
static sps_status csr_dot_launch(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                 const sps_index *col, const void *val, sps_index maxrow, X x, void *q, void *xout,
                                 sps_cplx *slots, int out)
{
    unsigned grid = 1;
    typedef csr_dot_bw<T, X> S;
    const auto kernel = csr_long_pass<T, S>(n, nnz, maxrow) ? csr_spmv_dot_kernel<T, X, true>
                                                             : csr_spmv_dot_kernel<T, X, false>;
    SPS_CHECK((csr_spmv_dot_grid<T, S>(ex, kernel, n, nnz, &grid)));
    kernel<<<grid, SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n < 0 ? 0 : n, csr_tpr_of<T, S>(n, nnz), rowptr, col, (const T *)val, x, (T *)q, (T *)xout, (typename sc<T>::ACC *)sps_cuws_red(ex),
        sps_cuws_counter(ex), slots, sps_cu_arm(ex, sps_cu_outs1(out, SPS_CU_OUT_SUM)));
    SPS_CU_LAUNCHED(ex, "csr_spmv_dot_kernel");
    sps_cu_armed_launched(ex);
    return SPS_OK;
}

template <typename T>
static sps_status csr_spmv_dot_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                    const sps_index *col, const void *val, sps_index maxrow, const void *x, void *y,
                                    sps_cplx *slots, int out)
{
    return csr_dot_launch<T>(ex, n, nnz, rowptr, col, val, maxrow, csr_x_plain<T>{(const T *)x}, y, NULL, slots, out);
}

/* Rows longer than csr_xpay_max_avg on average gather each column so often that
 * forming z_j + c p_old_j at every gather (two gathers, in L1/L2) costs more than
 * a separate pass p_new = z + c p_old (3n of DRAM traffic) before csr_spmv_dot:
 * H100 (ncu, 2026-11-23), stencil27b3-40 f64 (77 a row): xpay_dot 99 us against
 * csr_spmv_dot 77 us on the same matrix; poisson3d-128 (7 a row) keeps the fused
 * form (100 us against 86 + 3n).  Same p_new bits either way (the same
 * expression); q can differ in the last bit for 8- and 16-byte values, whose
 * fused form loads directly (products fused into the sum) while the plain
 * product is staged (products rounded first): csr_dot_bw. */
constexpr int csr_xpay_max_avg = 16;
template <typename T>
static sps_status csr_spmv_xpay_dot_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                         const sps_index *col, const void *val, sps_index maxrow, const void *z,
                                         sps_scoef c, const void *pold, void *pnew, void *q, sps_cplx *slots, int out)
{
    if (n > 0 && nnz > (int64_t)csr_xpay_max_avg * n) { /* long rows: waxpy_s, then the plain product */
        SPS_CHECK(sps_cuda_foreach(ex, n, waxpy_s_op<T>{(const T *)z, slots, c, (const T *)pold, (T *)pnew, T()}));
        return csr_dot_launch<T>(ex, n, nnz, rowptr, col, val, maxrow, csr_x_plain<T>{(const T *)pnew}, q, NULL, slots,
                                 out);
    }
    /* beta from the slots as xpay_s evaluates it, by every thread at the start (csr_x_bind) */
    return csr_dot_launch<T>(ex, n, nnz, rowptr, col, val, maxrow,
                             csr_x_xpay_s<T>{(const T *)z, (const T *)pold, slots, c}, q, pnew, slots, out);
}

/* One CG iteration (csr_cg_iter_kernel), launched cooperative: the grid is at most
 * the resident blocks (csr_spmv_dot_grid), which the barrier needs; the launch
 * attribute makes the runtime refuse rather than hang if that ever failed.
 * Only where the rows (in csr_lat's groups) fit one resident wave: there the
 * iteration is latency, and the saved launch and finishing block show
 * (poisson3d-48 f32: 24 -> 17 us).  With more rows it is bandwidth, the fused
 * kernel's lower occupancy costs more than the launch saves (stencil27b3-40 f64
 * CG 0.096 -> 0.129 ms an iteration), so the two kernels run instead; fusing
 * where the rows took two rounds gained nothing (poisson3d-48 f64 with TPR 2:
 * 25.8 against 25.6 us): one round, no longer a knob (bench/results/knobs.md). */
constexpr int csr_cg_fuse_rounds = 1;
template <typename T>
static sps_status csr_cg_iter_impl(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,
                                   const sps_index *col, const void *val, sps_index maxrow, const void *z, sps_scoef c,
                                   const void *pold, void *pnew, void *q, void *x, void *r, sps_cplx *slots,
                                   sps_cg_slots ks)
{
    typedef csr_x_xpay_s<T> X;
    unsigned grid = 1;
    typedef csr_lat<T> S;
    const auto kernel =
        csr_long_pass<T, S>(n, nnz, maxrow) ? csr_cg_iter_kernel<T, X, true> : csr_cg_iter_kernel<T, X, false>;
    SPS_CHECK((csr_spmv_dot_grid<T, S>(ex, kernel, n, nnz, &grid)));
    const int64_t need = ((int64_t)n * csr_tpr_of<T, S>(n, nnz) + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    if (need > csr_cg_fuse_rounds * (int64_t)grid) {
        SPS_CHECK(csr_spmv_xpay_dot_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, z, c, pold, pnew, q, slots, ks.pq));
        return cg_step_impl<T>(ex, n, slots, ks, pnew, q, x, r);
    }
    SPS_CU(ex, sps_cu_launch_coop(kernel, grid, sps_custream(ex), n < 0 ? 0 : n,
                                   csr_tpr_of<T, S>(n, nnz), rowptr, col, (const T *)val,
                                   X{(const T *)z, (const T *)pold, slots, c}, (T *)pnew, (T *)q, (T *)x, (T *)r,
                                   (typename sc<T>::ACC *)sps_cuws_red(ex), sps_cuws_counter(ex), slots, ks,
                                   sps_cu_arm(ex, sps_cu_outs1(ks.rr, SPS_CU_OUT_SUM))));
    SPS_CU_LAUNCHED(ex, "csr_cg_iter_kernel");
    sps_cu_armed_launched(ex);
    return SPS_OK;
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_CSR_FUSED_ENTRIES(S, T)                                                                              \
    extern "C" sps_status sps_cuda_csr_spmv_xpay_dot_##S(                                                          \
        sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, const sps_index *col, const void *val,  \
        sps_index maxrow, const void *z, sps_scoef c, const void *pold, void *pnew, void *q, sps_cplx *slots,       \
        int out)                                                                                                    \
    { return csr_spmv_xpay_dot_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, z, c, pold, pnew, q, slots, out); }   \
    extern "C" sps_status sps_cuda_csr_cg_iter_##S(                                                               \
        sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, const sps_index *col, const void *val,  \
        sps_index maxrow, const void *z, sps_scoef c, const void *pold, void *pnew, void *q, void *x, void *r,      \
        sps_cplx *slots, sps_cg_slots ks)                                                                           \
    { return csr_cg_iter_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, z, c, pold, pnew, q, x, r, slots, ks); }    \
    extern "C" sps_status sps_cuda_csr_spmv_dot_##S(sps_exec *ex, sps_index n, int64_t nnz,                      \
                                                    const sps_index *rowptr, const sps_index *col, const void *val, \
                                                    sps_index maxrow, const void *x, void *y, sps_cplx *slots,      \
                                                    int out)                                                        \
    { return csr_spmv_dot_impl<T>(ex, n, nnz, rowptr, col, val, maxrow, x, y, slots, out); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_CSR_FUSED_ENTRIES)
