/* CUDA ILU(0) / IC(0): factorisation and apply (kernels/kernels.h ilu_factor,
 * ilu_apply; the CPU reference: kernels/cpu/ilu.inc).
 *
 * Factorisation: a row's IKJ update reads only the rows of its L part, finished
 * before it: the dependencies of the forward solve, so the same levels schedule
 * it, a launch a level, a thread a row (the positions in row i by binary search
 * instead of the CPU's dense marker).  Bad pivots lower *bad by atomicMin (the
 * smallest such row is a true one: a row's errors reach only larger rows).  ic:
 * a last launch mirrors L into U = D L^H.  Chosen over iterative (ParILU) sweeps
 * for the same answer as the CPU, which the PETSc suite validates; not measured.
 *
 * Exact: the substitutions level by level (the levels of L, then of U, computed
 * from the pattern at the preconditioner's symbolic step), a launch a level, a
 * thread a row of the level: every row a level reads was written by an earlier
 * launch.  Latency-bound: the launches are the cost (a 7-point grid in natural
 * order has nx + ny + nz - 2 levels a factor; 4 ms an application on Poisson
 * 128^3, 67 SpMV, H200); capturable (no host round trips).
 * Sweeps: K launches a factor over its own SELL-32 copy, a thread a row reading
 * the previous iterate (the CPU's order of sums within a row, so equal to it up
 * to fused multiply-adds): each sweep costs about an SpMV of that factor. */
#include "kernels/cuda/common.cuh"

namespace {
/* y_i = r_i - sum_{k < i} L_ik y_k for the rows of one level (earlier levels wrote the y_k) */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    ilu_lower_kernel(sps_index cnt, const sps_index *__restrict__ rows, const sps_index *__restrict__ rowptr,
                     const sps_index *__restrict__ col, const T *__restrict__ val, const sps_index *__restrict__ diag,
                     const T *__restrict__ r, T *y)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= cnt) return;
    const sps_index i = rows[t];
    T s = r[i];
    for (sps_index e = rowptr[i]; e < diag[i]; e++) s = s - val[e] * y[col[e]];
    y[i] = s;
}

/* z_i = (y_i - sum_{j > i} U_ij z_j) / U_ii for the rows of one level */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    ilu_upper_kernel(sps_index cnt, const sps_index *__restrict__ rows, const sps_index *__restrict__ rowptr,
                     const sps_index *__restrict__ col, const T *__restrict__ val, const sps_index *__restrict__ diag,
                     const T *__restrict__ y, T *z)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= cnt) return;
    const sps_index i = rows[t];
    T s = y[i];
    for (sps_index e = diag[i] + 1; e < rowptr[i + 1]; e++) s = s - val[e] * z[col[e]];
    z[i] = s * recip(val[diag[i]]);
}

/* The position of column c in the sorted columns [a, b), or -1. */
__device__ inline sps_index ilu_find(const sps_index *__restrict__ col, sps_index a, sps_index b, sps_index c)
{
    const sps_index end = b;
    while (a < b) {
        const sps_index m = a + (b - a) / 2;
        if (col[m] < c) a = m + 1;
        else b = m;
    }
    return a < end && col[a] == c ? a : -1;
}

__device__ inline double ilu_abs(float x) { return fabs((double)x); }
__device__ inline double ilu_abs(double x) { return fabs(x); }
template <typename R> __device__ inline double ilu_abs(cx<R> x) { return sqrt(abs2_r(x)); }

/* One row of a level of the factorisation (the CPU's ilu_factor_row, kernels/cpu/ilu.inc),
 * a warp a row: the lanes share the updates of one pivot row k (distinct columns of row
 * k, so distinct positions of row i: no two lanes write one entry), the pivots in order
 * with __syncwarp between them, so every entry sees the updates in the CPU's order.  A
 * thread a row left a lane per row doing the k x (row k) products serially: 0.56 s for
 * bcsstk16 (60 entries a row) on the H200.  The rows it reads are of earlier levels,
 * done by earlier launches. */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    ilu_factor_kernel(sps_index cnt, const sps_index *__restrict__ rows, const sps_index *__restrict__ rowptr,
                      const sps_index *__restrict__ col, T *val, const sps_index *__restrict__ diag, double alpha,
                      int shift_nonzero, int ic, sps_index *bad)
{
    const int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (w >= cnt) return; /* the whole warp: w is uniform across it */
    const sps_index i = rows[w], a = rowptr[i], b = rowptr[i + 1], d = diag[i];
    double rs = 0;
    for (sps_index e = a + lane; e < b; e += 32) rs += ilu_abs(val[e]);
    for (int o = 16; o > 0; o >>= 1) rs += __shfl_xor_sync(0xffffffffu, rs, o);
    if (lane == 0) val[d] = val[d] + sc<T>::from(sps_cplx{alpha, 0.0}) * val[d];
    __syncwarp();
    for (sps_index e = a; e < d; e++) {
        const sps_index k = col[e];
        const T l = val[e] * recip(val[diag[k]]);
        __syncwarp(); /* every lane has read val[e] before lane 0 overwrites it */
        if (lane == 0) val[e] = l;
        for (sps_index q = diag[k] + 1 + lane; q < rowptr[k + 1]; q += 32) {
            const sps_index p = ilu_find(col, e + 1, b, col[q]);
            if (p >= 0) val[p] = val[p] - l * val[q];
        }
        __syncwarp(); /* the next pivot's l reads entries these updates wrote */
    }
    if (lane != 0) return;
    const double tol = 2.22e-14 * rs;
    const T piv = val[d];
    const bool unacceptable = ic ? !(re_of(piv) > tol) : !(ilu_abs(piv) > tol);
    if (!unacceptable) return;
    if (shift_nonzero && !ic) val[d] = sc<T>::from(sps_cplx{tol > 0 ? tol : 1.0, 0.0});
    else atomicMin(bad, i + 1);
}

/* ic: U = D L^H, a thread a row mirroring its lower entries (each upper entry written once). */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    ilu_mirror_kernel(sps_index n, const sps_index *__restrict__ rowptr, const sps_index *__restrict__ col, T *val,
                      const sps_index *__restrict__ diag)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    const sps_index i = (sps_index)t;
    for (sps_index e = rowptr[i]; e < diag[i]; e++) {
        const sps_index j = col[e], q = ilu_find(col, diag[j] + 1, rowptr[j + 1], i);
        if (q >= 0) val[q] = val[diag[j]] * conjv(val[e]);
    }
}

__global__ void ilu_bad_finish_kernel(sps_index *bad)
{
    if (*bad == 0x7f7f7f7f) *bad = 0;
}

static unsigned ilu_grid(int64_t cnt) { return (unsigned)((cnt + SPS_CU_THREADS - 1) / SPS_CU_THREADS); }

template <typename T>
static sps_status ilu_apply_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col,
                                 const void *valv, const sps_index *diag, sps_index nl, sps_index nu,
                                 const sps_index *lvl_ptr, const sps_index *lvl_rows, const void *rv, void *zv,
                                 void *workv)
{
    if (n <= 0) return SPS_OK;
    cudaStream_t st = sps_custream(ex);
    const T *val = (const T *)valv, *r = (const T *)rv;
    T *z = (T *)zv, *y = (T *)workv;
    /* level by level: y = L^{-1} r, then z = U^{-1} y (z may be r: r is read first) */
    for (sps_index l = 0; l < nl; l++) {
        const sps_index cnt = lvl_ptr[l + 1] - lvl_ptr[l];
        ilu_lower_kernel<T><<<ilu_grid(cnt), SPS_CU_THREADS, 0, st>>>(cnt, lvl_rows + lvl_ptr[l], rowptr, col, val,
                                                                      diag, r, y);
        SPS_CU_LAUNCHED(ex, "ilu_lower_kernel");
    }
    for (sps_index l = nl; l < nl + nu; l++) {
        const sps_index cnt = lvl_ptr[l + 1] - lvl_ptr[l];
        ilu_upper_kernel<T><<<ilu_grid(cnt), SPS_CU_THREADS, 0, st>>>(cnt, lvl_rows + lvl_ptr[l], rowptr, col, val,
                                                                      diag, y, z);
        SPS_CU_LAUNCHED(ex, "ilu_upper_kernel");
    }
    return SPS_OK;
}

/* One sweep over a SELL-32 factor, a thread a row: out_i = (rhs_i - sum_k F_ik in_k)
 * (* dinv_i when dinv); init: out_i = rhs_i * dinv_i.  Lane j of a warp is row 32s + j,
 * so entry k of the warp's rows is 32 consecutive values and columns: the factor
 * streams coalesced whatever the row lengths, and only its own entries are read
 * (the CSR of both factors made a sweep of one drag the other's cache lines in:
 * 1.2 SpMV a sweep on Poisson 128^3, H200). */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_THREADS)
    ilu_sell_sweep_kernel(sps_index n, const int64_t *__restrict__ off, const sps_index *__restrict__ col,
                          const sps_index *__restrict__ len, const T *__restrict__ fv, const T *__restrict__ rhs,
                          const T *__restrict__ dinv, const T *in, T *__restrict__ out, int init)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T s = rhs[i];
    if (!init) {
        const int64_t base = off[i >> 5] + (i & 31);
        const sps_index L = len[i];
        for (sps_index k = 0; k < L; k++) s = s - ldg_t(fv + base + 32 * k) * in[__ldg(col + base + 32 * k)];
    }
    out[i] = dinv ? s * dinv[i] : s;
}

template <typename T>
static sps_status ilu_sweep(sps_exec *ex, sps_index n, const sps_ilu_sell &F, const T *rhs, const T *dinv, const T *in,
                            T *out, int init)
{
    ilu_sell_sweep_kernel<T><<<ilu_grid(n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(
        n, F.off, F.col, F.len, (const T *)F.val, rhs, dinv, in, out, init);
    SPS_CU_LAUNCHED(ex, "ilu_sell_sweep_kernel");
    return SPS_OK;
}

/* The CPU's buffers (kernels/cpu/ilu.inc): lower iterates from r itself alternating
 * a and b, upper ones alternating z and the other, started where K flips end in z;
 * 2K + 1 launches, no copies. */
template <typename T>
static sps_status ilu_sweeps_impl(sps_exec *ex, sps_index n, const sps_ilu_sell &L, const sps_ilu_sell &U,
                                  const void *dinvv, int sweeps, const void *rv, void *zv, void *workv)
{
    if (n <= 0) return SPS_OK;
    const T *r = (const T *)rv, *dinv = (const T *)dinvv;
    T *z = (T *)zv, *a = (T *)workv, *b = a + n;
    const T *yin = r;
    for (int m = 0; m < sweeps; m++) {
        T *out = (m & 1) ? b : a;
        SPS_CHECK(ilu_sweep<T>(ex, n, L, r, (const T *)NULL, yin, out, 0));
        yin = out;
    }
    const T *ys = yin;
    T *q = ys == a ? b : a, *cur = sweeps % 2 == 0 ? z : q;
    SPS_CHECK(ilu_sweep<T>(ex, n, U, ys, dinv, (const T *)NULL, cur, 1));
    for (int m = 0; m < sweeps; m++) {
        T *nxt = cur == z ? q : z;
        SPS_CHECK(ilu_sweep<T>(ex, n, U, ys, dinv, cur, nxt, 0));
        cur = nxt;
    }
    return SPS_OK;
}

template <typename T> struct ilu_gather_op {
    const sps_index *src;
    const T *val;
    int invert;
    T *out;
    __device__ void setup() {}
    __device__ void operator()(sps_index k)
    {
        const sps_index p = src[k];
        out[k] = p < 0 ? zero_of<T>() : invert ? recip(val[p]) : val[p];
    }
};

template <typename T>
static sps_status ilu_factor_impl(sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col, void *valv,
                                  const sps_index *diag, sps_index nl, const sps_index *lvl_ptr,
                                  const sps_index *lvl_rows, double alpha, int shift_nonzero, int ic, sps_index *bad)
{
    cudaStream_t st = sps_custream(ex);
    T *val = (T *)valv;
    SPS_CU(ex, cudaMemsetAsync(bad, 0x7f, sizeof *bad, st)); /* above every row */
    for (sps_index l = 0; l < nl; l++) {
        const sps_index cnt = lvl_ptr[l + 1] - lvl_ptr[l];
        ilu_factor_kernel<T><<<ilu_grid(32 * (int64_t)cnt), SPS_CU_THREADS, 0, st>>>(
            cnt, lvl_rows + lvl_ptr[l], rowptr, col, val, diag, alpha, shift_nonzero, ic, bad);
        SPS_CU_LAUNCHED(ex, "ilu_factor_kernel");
    }
    if (ic && n > 0) {
        ilu_mirror_kernel<T><<<ilu_grid(n), SPS_CU_THREADS, 0, st>>>(n, rowptr, col, val, diag);
        SPS_CU_LAUNCHED(ex, "ilu_mirror_kernel");
    }
    ilu_bad_finish_kernel<<<1, 1, 0, st>>>(bad);
    SPS_CU_LAUNCHED(ex, "ilu_bad_finish_kernel");
    return SPS_OK;
}
} // namespace

#define SPS_CU_ILU_ENTRIES(S, T)                                                                                  \
    extern "C" sps_status sps_cuda_ilu_apply_##S(sps_exec *ex, sps_index n, const sps_index *rowptr,             \
                                                 const sps_index *col, const void *val, const sps_index *diag,   \
                                                 sps_index nl, sps_index nu, const sps_index *lvl_ptr,          \
                                                 const sps_index *lvl_rows, const void *r, void *z, void *work)  \
    { return ilu_apply_impl<T>(ex, n, rowptr, col, val, diag, nl, nu, lvl_ptr, lvl_rows, r, z, work); }          \
    extern "C" sps_status sps_cuda_ilu_sweeps_##S(sps_exec *ex, sps_index n, sps_ilu_sell L, sps_ilu_sell U,      \
                                                  const void *dinv, int sweeps, const void *r, void *z,          \
                                                  void *work)                                                    \
    { return ilu_sweeps_impl<T>(ex, n, L, U, dinv, sweeps, r, z, work); }                                         \
    extern "C" sps_status sps_cuda_ilu_gather_##S(sps_exec *ex, int64_t cnt, const sps_index *src,                \
                                                  const void *val, int invert, void *out)                        \
    {                                                                                                             \
        if (cnt > INT32_MAX) return sps_kerror(ex, SPS_ERR_ARG, "ilu_gather: %lld entries", (long long)cnt);       \
        return sps_cuda_foreach(ex, (sps_index)cnt, ilu_gather_op<T>{src, (const T *)val, invert, (T *)out});      \
    }                                                                                                             \
    extern "C" sps_status sps_cuda_ilu_factor_##S(sps_exec *ex, sps_index n, const sps_index *rowptr,            \
                                                  const sps_index *col, void *val, const sps_index *diag,         \
                                                  sps_index nl, const sps_index *lvl_ptr,                         \
                                                  const sps_index *lvl_rows, double alpha, int shift_nonzero,     \
                                                  int ic, sps_index *bad)                                         \
    { return ilu_factor_impl<T>(ex, n, rowptr, col, val, diag, nl, lvl_ptr, lvl_rows, alpha, shift_nonzero, ic, bad); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_ILU_ENTRIES)
