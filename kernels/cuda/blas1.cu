/* libspsolve — CUDA BLAS-1 kernels, f32/f64/c32/c64 from one set of templates.
 *
 * What each computes is the CPU reference's (kernels/cpu/blas1.inc):
 *   fill x = a;  copy y = x;  scale x = a x;  axpby y = a x + b y (b == 0: y not
 *   read);  pmul y = d .* x;  axpy_s y += c x, xpay_s y = x + c y with c from
 *   slots (sps_scoef, evaluated on the device in double, then rounded to T);
 *   dot slots[out] = x^H y;  nrm2 slots[out] = ||x||_2;  nrm_inf slots[out] = max |x_i|;
 *   invert d = 1 ./ d and slots[out].re = 1 + index of the first zero or non-finite entry, or of
 *   non-finite inverse (0: none;
 *   d untouched when one exists).
 *
 * Launch shape: element-wise kernels are grid-stride, 256 threads, at most 32
 * blocks per SM (common.cuh).  Reductions: one launch of 256 threads x
 * min(ceil(n/256), one resident wave) blocks whose last block to finish sums the
 * per-block partials in block order (common.cuh sps_cu_red_grid).
 * Traffic (minimal model, S = sizeof(T)): fill/scale n S (write) resp. 2 n S;
 * copy, pmul-less ops 2-3 n S; dot 2 n S; nrm2 n S (one pass unless the sum of
 * squares over- or underflows, then a second pass over the affected blocks).
 *
 * Accumulation as the CPU: products and sums in double (complex double for
 * c32/c64).  Bit-reproducible run to run on one GPU model: everything here (dot
 * and nrm2 use the fixed-tree reductions of common.cuh; invert's index is a
 * minimum). */
#include "kernels/cuda/common.cuh"

namespace {

template <typename T> struct fill_op {
    T a; T *x;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { x[i] = a; }
};
template <typename T> struct copy_op {
    const T *x; T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { y[i] = x[i]; }
};
template <typename T> struct scale_op {
    T a; T *x;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { x[i] = a * x[i]; }
};
template <typename T> struct axpby_op {
    T a, b; const T *x; T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { y[i] = a * x[i] + b * y[i]; }
};
template <typename T> struct ax_op { /* axpby with b == 0: y is written, never read */
    T a; const T *x; T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { y[i] = a * x[i]; }
};
template <typename T> struct pmul_op {
    const T *d, *x; T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i) { y[i] = d[i] * x[i]; }
};
template <typename T> struct axpy_s_op {
    const sps_cplx *slots; sps_scoef c; const T *x; T *y; T cv;
    __device__ void setup() { cv = scoef_t<T>(c, slots); }
    __device__ void operator()(sps_index i) { y[i] = y[i] + cv * x[i]; }
};
template <typename T> struct xpay_s_op {
    const sps_cplx *slots; sps_scoef c; const T *x; T *y; T cv;
    __device__ void setup() { cv = scoef_t<T>(c, slots); }
    __device__ void operator()(sps_index i) { y[i] = x[i] + cv * y[i]; }
};
template <typename T> struct dot_op {
    typedef typename sc<T>::ACC A;
    const T *x, *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i, A *acc) { acc[0] += to_acc(conjv(x[i])) * to_acc(y[i]); }
};
/* y = d .* x and x^H y: dot's reduction (the same tree), y written by the lane that sums it */
template <typename T> struct pmul_dot_op {
    typedef typename sc<T>::ACC A;
    const T *d, *x;
    T *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i, A *acc)
    {
        const T xi = x[i], yi = d[i] * xi;
        y[i] = yi;
        acc[0] += to_acc(conjv(xi)) * to_acc(yi);
    }
};

/* ---------------------------------------------------------------- nrm2 */
/* One pass: each block sums the squares of its entries in double and finds the
 * largest |component| (NaN-propagating).  Where a block's plain sum overflowed or
 * may have lost entries to underflow (< 1e-280), the block also sums the squares
 * of its entries scaled by 2^-e_b, e_b = ilogb(block max) (exact scaling).  The
 * finishing block uses the plain total when it is in range (as the CPU), else
 * rescales every block to the global exponent e = ilogb(max):
 *     ||x|| = 2^e sqrt( sum_b ss_b 2^(2(e_b - e)) ).
 * Per block 4 doubles: s_b, m_b, ss_b (-1 when not computed), e_b. */
__device__ inline double nanmax(double a, double b) { return (a != a || b != b) ? (a + b) : (a > b ? a : b); }
struct nanmax_op {
    __device__ double operator()(double a, double b) const { return nanmax(a, b); }
};
__device__ inline bool nrm2_needs_rescale(double s, double m)
{
    return isfinite(m) && m > 0.0 && (!isfinite(s) || s < 1e-280);
}

typedef cub::BlockReduce<double, SPS_CU_RED_THREADS> nrm2_br;

/* The finishing block: global sum and max, then the rescaled sum if needed. */
__device__ void nrm2_finish(typename nrm2_br::TempStorage &tmp, const double *part, int nb, sps_cplx *slots, int out)
{
    __shared__ double gs, gm;
    double s = 0.0, m = 0.0;
    for (int b = threadIdx.x; b < nb; b += SPS_CU_RED_THREADS) {
        s += __ldcg(&part[b]);
        m = nanmax(m, __ldcg(&part[nb + b]));
    }
    __syncthreads();
    double ts = nrm2_br(tmp).Reduce(s, sps_cu_sum<double>());
    __syncthreads();
    double tm = nrm2_br(tmp).Reduce(m, nanmax_op());
    if (threadIdx.x == 0) { gs = ts; gm = tm; }
    __syncthreads();
    if (!nrm2_needs_rescale(gs, gm)) {
        if (threadIdx.x == 0) slots[out] = acc_to_cplx(sqrt(gs));
        return;
    }
    const int e = ilogb(gm);
    double t = 0.0;
    for (int b = threadIdx.x; b < nb; b += SPS_CU_RED_THREADS) {
        const double ss = __ldcg(&part[2 * nb + b]);
        t += ss >= 0.0 ? ldexp(ss, 2 * ((int)__ldcg(&part[3 * nb + b]) - e)) : ldexp(__ldcg(&part[b]), -2 * e);
    }
    __syncthreads();
    double tt = nrm2_br(tmp).Reduce(t, sps_cu_sum<double>());
    if (threadIdx.x == 0) slots[out] = acc_to_cplx(ldexp(sqrt(tt), e));
}

template <typename T>
__global__ void __launch_bounds__(SPS_CU_RED_THREADS)
    nrm2_kernel(sps_index n, const T *x, double *part, unsigned *counter, sps_cplx *slots, int out)
{
    __shared__ typename nrm2_br::TempStorage tmp;
    __shared__ double bm, bs;
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    const sps_index i0 = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x);
    double s = 0.0, m = 0.0;
    for (sps_index i = i0; i < n; i = sps_cu_next(i, stride, n)) {
        const double re = re_of(x[i]), im = im_of(x[i]);
        s += re * re + im * im;
        m = nanmax(m, nanmax(fabs(re), fabs(im)));
    }
    double ts = nrm2_br(tmp).Reduce(s, sps_cu_sum<double>());
    __syncthreads();
    double tm = nrm2_br(tmp).Reduce(m, nanmax_op());
    if (threadIdx.x == 0) { bs = ts; bm = tm; }
    __syncthreads();
    const int nb = gridDim.x;
    double ss = -1.0;
    int e = 0;
    if (nrm2_needs_rescale(bs, bm)) { /* uniform across the block */
        e = ilogb(bm);
        double t = 0.0;
        for (sps_index i = i0; i < n; i = sps_cu_next(i, stride, n)) {
            const double re = ldexp(re_of(x[i]), -e), im = ldexp(im_of(x[i]), -e);
            t += re * re + im * im;
        }
        __syncthreads();
        ss = nrm2_br(tmp).Reduce(t, sps_cu_sum<double>());
    }
    if (threadIdx.x == 0) {
        part[blockIdx.x] = bs;
        part[nb + blockIdx.x] = bm;
        part[2 * nb + blockIdx.x] = ss;
        part[3 * nb + blockIdx.x] = (double)e;
    }
    if (sps_cu_last_block(counter)) nrm2_finish(tmp, part, nb, slots, out);
}

/* ---------------------------------------------------------------- nrm_inf */
/* Each block's largest modulus (NaN-propagating), the last block the largest of those:
 * max is exact, so the result does not depend on the grid. */
template <typename T>
__global__ void __launch_bounds__(SPS_CU_RED_THREADS)
    nrm_inf_kernel(sps_index n, const T *x, double *part, unsigned *counter, sps_cplx *slots, int out)
{
    __shared__ typename nrm2_br::TempStorage tmp;
    double m = 0.0;
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n)) {
        const double re = re_of(x[i]), im = im_of(x[i]);
        m = nanmax(m, re != re || im != im ? (double)NAN : hypot(re, im)); /* hypot(Inf, NaN) is Inf */
    }
    const double bm = nrm2_br(tmp).Reduce(m, nanmax_op());
    if (threadIdx.x == 0) part[blockIdx.x] = bm;
    if (!sps_cu_last_block(counter)) return;
    const int nb = gridDim.x;
    double g = 0.0;
    for (int b = threadIdx.x; b < nb; b += SPS_CU_RED_THREADS) g = nanmax(g, __ldcg(&part[b]));
    __syncthreads();
    const double tg = nrm2_br(tmp).Reduce(g, nanmax_op());
    if (threadIdx.x == 0) slots[out] = acc_to_cplx(tg);
}

/* ---------------------------------------------------------------- invert */
/* Pass 1: per block, the smallest index of a zero or non-finite entry, or one whose inverse is
 * not finite (n if none).
 * Pass 2 (one block): the minimum -> slots[out] and a device flag.
 * Pass 3: d = 1 / d unless the flag says an entry was bad. */
struct imin_op {
    __device__ sps_index operator()(sps_index a, sps_index b) const { return a < b ? a : b; }
};
template <typename T>
__global__ void __launch_bounds__(SPS_CU_RED_THREADS) invert_scan_kernel(sps_index n, const T *d, sps_index *part)
{
    typedef cub::BlockReduce<sps_index, SPS_CU_RED_THREADS> BR;
    __shared__ typename BR::TempStorage tmp;
    sps_index first = n;
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n && i < first; i = sps_cu_next(i, stride, n))
        if (!finite_of(d[i]) || !finite_of(recip(d[i]))) first = i; /* 1/0 and a subnormal's 1/d: not finite */
    sps_index b = BR(tmp).Reduce(first, imin_op());
    if (threadIdx.x == 0) part[blockIdx.x] = b;
}
__global__ void __launch_bounds__(SPS_CU_RED_THREADS) invert_finish_kernel(const sps_index *part, int nb, sps_index n,
                                                                           sps_cplx *slots, int out, int *flag)
{
    typedef cub::BlockReduce<sps_index, SPS_CU_RED_THREADS> BR;
    __shared__ typename BR::TempStorage tmp;
    sps_index first = n;
    for (int b = threadIdx.x; b < nb; b += SPS_CU_RED_THREADS) first = part[b] < first ? part[b] : first;
    sps_index m = BR(tmp).Reduce(first, imin_op());
    if (threadIdx.x == 0) {
        const sps_index bad = m < n ? m + 1 : 0;
        slots[out] = acc_to_cplx((double)bad);
        *flag = bad;
    }
}
template <typename T> struct invert_op {
    T *d; const int *flag; int skip;
    __device__ void setup() { skip = *flag; }
    __device__ void operator()(sps_index i) { if (!skip) d[i] = recip(d[i]); }
};

} // namespace

/* ---------------------------------------------------------------- implementations */
template <typename T> static sps_status fill_impl(sps_exec *ex, sps_index n, sps_cplx a, void *x)
{
    return sps_cuda_foreach(ex, n, fill_op<T>{sc<T>::from(a), (T *)x});
}
template <typename T> static sps_status copy_impl(sps_exec *ex, sps_index n, const void *x, void *y)
{
    return sps_cuda_foreach(ex, n, copy_op<T>{(const T *)x, (T *)y});
}
template <typename T> static sps_status scale_impl(sps_exec *ex, sps_index n, sps_cplx a, void *x)
{
    return sps_cuda_foreach(ex, n, scale_op<T>{sc<T>::from(a), (T *)x});
}
template <typename T>
static sps_status axpby_impl(sps_exec *ex, sps_index n, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    if (b.re == 0.0 && b.im == 0.0) return sps_cuda_foreach(ex, n, ax_op<T>{sc<T>::from(a), (const T *)x, (T *)y});
    return sps_cuda_foreach(ex, n, axpby_op<T>{sc<T>::from(a), sc<T>::from(b), (const T *)x, (T *)y});
}
template <typename T>
static sps_status dot_impl(sps_exec *ex, sps_index n, const void *x, const void *y, sps_cplx *slots, int out)
{
    return sps_cuda_reduce<typename sc<T>::ACC, 1>(ex, n, dot_op<T>{(const T *)x, (const T *)y}, slots,
                                                   sps_cu_outs1(out, SPS_CU_OUT_SUM));
}
template <typename T>
static sps_status pmul_dot_impl(sps_exec *ex, sps_index n, const void *d, const void *x, void *y, sps_cplx *slots,
                                int out)
{
    return sps_cuda_reduce<typename sc<T>::ACC, 1>(ex, n, pmul_dot_op<T>{(const T *)d, (const T *)x, (T *)y}, slots,
                                                   sps_cu_outs1(out, SPS_CU_OUT_SUM));
}
template <typename T> static sps_status nrm_inf_impl(sps_exec *ex, sps_index n, const void *x, sps_cplx *slots, int out)
{
    int nb = 1;
    SPS_CHECK(sps_cu_red_grid(ex, nrm_inf_kernel<T>, n, &nb));
    nrm_inf_kernel<T><<<nb, SPS_CU_RED_THREADS, 0, sps_custream(ex)>>>(n < 0 ? 0 : n, (const T *)x,
                                                                      (double *)sps_cuws_red(ex), sps_cuws_counter(ex),
                                                                      slots, out);
    SPS_CU_LAUNCHED(ex, "nrm_inf_kernel");
    return SPS_OK;
}
template <typename T> static sps_status nrm2_impl(sps_exec *ex, sps_index n, const void *x, sps_cplx *slots, int out)
{
    int nb = 1;
    SPS_CHECK(sps_cu_red_grid(ex, nrm2_kernel<T>, n, &nb));
    double *part = (double *)sps_cuws_red(ex);
    cudaStream_t s = sps_custream(ex);
    nrm2_kernel<T>
        <<<nb, SPS_CU_RED_THREADS, 0, s>>>(n < 0 ? 0 : n, (const T *)x, part, sps_cuws_counter(ex), slots, out);
    SPS_CU_LAUNCHED(ex, "nrm2_kernel");
    return SPS_OK;
}
template <typename T>
static sps_status pmul_impl(sps_exec *ex, sps_index n, const void *d, const void *x, void *y)
{
    return sps_cuda_foreach(ex, n, pmul_op<T>{(const T *)d, (const T *)x, (T *)y});
}
template <typename T>
static sps_status axpy_s_impl(sps_exec *ex, sps_index n, const sps_cplx *slots, sps_scoef c, const void *x, void *y)
{
    return sps_cuda_foreach(ex, n, axpy_s_op<T>{slots, c, (const T *)x, (T *)y, T()});
}
template <typename T>
static sps_status xpay_s_impl(sps_exec *ex, sps_index n, const void *x, const sps_cplx *slots, sps_scoef c, void *y)
{
    return sps_cuda_foreach(ex, n, xpay_s_op<T>{slots, c, (const T *)x, (T *)y, T()});
}
template <typename T> static sps_status invert_impl(sps_exec *ex, sps_index n, void *d, sps_cplx *slots, int out)
{
    int nb = 1;
    SPS_CHECK(sps_cu_red_grid(ex, invert_scan_kernel<T>, n, &nb));
    sps_index *part = (sps_index *)sps_cuws_red(ex);
    int *flag = (int *)sps_cuws_flag(ex);
    cudaStream_t s = sps_custream(ex);
    if (n < 0) n = 0;
    invert_scan_kernel<T><<<nb, SPS_CU_RED_THREADS, 0, s>>>(n, (const T *)d, part);
    SPS_CU_LAUNCHED(ex, "invert_scan_kernel");
    invert_finish_kernel<<<1, SPS_CU_RED_THREADS, 0, s>>>(part, nb, n, slots, out, flag);
    SPS_CU_LAUNCHED(ex, "invert_finish_kernel");
    return sps_cuda_foreach(ex, n, invert_op<T>{(T *)d, flag, 0});
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_BLAS1_ENTRIES(S, T)                                                                               \
    extern "C" sps_status sps_cuda_fill_##S(sps_exec *ex, sps_index n, sps_cplx a, void *x)                   \
    { return fill_impl<T>(ex, n, a, x); }                                                                       \
    extern "C" sps_status sps_cuda_copy_##S(sps_exec *ex, sps_index n, const void *x, void *y)                \
    { return copy_impl<T>(ex, n, x, y); }                                                                       \
    extern "C" sps_status sps_cuda_scale_##S(sps_exec *ex, sps_index n, sps_cplx a, void *x)                  \
    { return scale_impl<T>(ex, n, a, x); }                                                                      \
    extern "C" sps_status sps_cuda_axpby_##S(sps_exec *ex, sps_index n, sps_cplx a, const void *x, sps_cplx b, \
                                             void *y)                                                            \
    { return axpby_impl<T>(ex, n, a, x, b, y); }                                                                \
    extern "C" sps_status sps_cuda_dot_##S(sps_exec *ex, sps_index n, const void *x, const void *y,           \
                                           sps_cplx *slots, int out)                                             \
    { return dot_impl<T>(ex, n, x, y, slots, out); }                                                            \
    extern "C" sps_status sps_cuda_nrm2_##S(sps_exec *ex, sps_index n, const void *x, sps_cplx *slots, int out) \
    { return nrm2_impl<T>(ex, n, x, slots, out); }                                                              \
    extern "C" sps_status sps_cuda_nrm_inf_##S(sps_exec *ex, sps_index n, const void *x, sps_cplx *slots, int out) \
    { return nrm_inf_impl<T>(ex, n, x, slots, out); }                                                           \
    extern "C" sps_status sps_cuda_pmul_##S(sps_exec *ex, sps_index n, const void *d, const void *x, void *y) \
    { return pmul_impl<T>(ex, n, d, x, y); }                                                                    \
    extern "C" sps_status sps_cuda_pmul_dot_##S(sps_exec *ex, sps_index n, const void *d, const void *x, void *y, \
                                                sps_cplx *slots, int out)                                        \
    { return pmul_dot_impl<T>(ex, n, d, x, y, slots, out); }                                                    \
    extern "C" sps_status sps_cuda_axpy_s_##S(sps_exec *ex, sps_index n, const sps_cplx *slots, sps_scoef c,  \
                                              const void *x, void *y)                                            \
    { return axpy_s_impl<T>(ex, n, slots, c, x, y); }                                                           \
    extern "C" sps_status sps_cuda_xpay_s_##S(sps_exec *ex, sps_index n, const void *x, const sps_cplx *slots, \
                                              sps_scoef c, void *y)                                              \
    { return xpay_s_impl<T>(ex, n, x, slots, c, y); }                                                           \
    extern "C" sps_status sps_cuda_invert_##S(sps_exec *ex, sps_index n, void *d, sps_cplx *slots, int out)   \
    { return invert_impl<T>(ex, n, d, slots, out); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_BLAS1_ENTRIES)
