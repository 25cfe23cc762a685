/* libspsolve — CUDA fused solver steps (kernels/solver_kernels.h), f32/f64/c32/c64
 * from one set of templates.  Semantics are the CPU reference's
 * (kernels/cpu/solver.inc), including the guards:
 *
 *   cg_step      alpha = rho / pq;  x += alpha p;  r -= alpha q;  slots[rr] = r^H r;
 *                slots[stop] = 1 unless rr > tol2.  Stopped on entry -> no write at all.
 *                Guard: Re pq <= 0, Re rho <= 0 or alpha not finite -> no vector write,
 *                slots[rr] = -1, slots[stop] = 1.
 *   bicgstab_p   p = r + beta (p - omega v), beta = (rho/rv)(tt/ts), omega = ts/tt.
 *   waxpy_s      w = x + c y.
 *   dot2         slots[xy] = x^H y;  slots[xx] = x^H x.
 *   bicgstab_xr  alpha = rho/rv, omega = ts/tt (0 when tt == 0);
 *                x += alpha ph + omega sh;  r = s - omega t;
 *                slots[rr] = r^H r;  slots[rho_new] = rhat^H r.
 *                Guard: alpha or omega not finite -> no write, slots[rr] = -1.
 *   axpy_dot_s   y += c x;  slots[out] = z^H y (new y; z may alias x or y).
 *   scale_s      x = c x.
 *
 * Coefficients are evaluated from the slots by every thread (a few flops, the
 * slots sit in L1/L2) in double, then rounded to T, as on the CPU.  The steps
 * with a reduction use sps_cuda_reduce (common.cuh): one pass over the vectors
 * that updates them and leaves per-block partials, then one finishing block
 * that writes the slots: bit-reproducible.  A step never writes a slot it
 * reads, so the finishing block's guard test sees the same slots as the pass.
 *
 * Traffic per call (S = sizeof(T), minimal model): cg_step 6 n S (p, q read;
 * x, r read + written); bicgstab_p 4 n S; waxpy_s 3 n S; dot2 2 n S;
 * bicgstab_xr 9 n S; axpy_dot_s 3 n S (+ n S when z is a third vector);
 * scale_s 2 n S. */
#include "kernels/cuda/cg_step.cuh"

namespace {

template <typename T> struct bicgstab_p_op {
    const sps_cplx *slots; sps_bicgstab_slots k; const T *r, *v; T *p;
    T beta, omega;
    __device__ void setup()
    {
        sps_scoef c1 = {1.0, k.rho, k.rv}, c2 = {1.0, k.tt, k.ts}, c3 = {1.0, k.ts, k.tt};
        const sps_cplx b1 = scoef_eval(c1, slots), b2 = scoef_eval(c2, slots), om = scoef_eval(c3, slots);
        sps_cplx b;
        b.re = b1.re * b2.re - b1.im * b2.im;
        b.im = b1.re * b2.im + b1.im * b2.re;
        beta = sc<T>::from(b);
        omega = sc<T>::from(om);
    }
    __device__ void operator()(sps_index i) { p[i] = r[i] + beta * (p[i] - omega * v[i]); }
};

template <typename T> struct dot2_op {
    typedef typename sc<T>::ACC A;
    const T *x, *y;
    __device__ void setup() {}
    __device__ void operator()(sps_index i, A *acc)
    {
        const T xi = x[i];
        acc[0] += to_acc(conjv(xi)) * to_acc(y[i]);
        acc[1] += acc_real<A>(abs2_r(xi));
    }
};

/* alpha and omega of bicgstab_xr, shared by the pass and its guard. */
__device__ inline bool bicgstab_coefs(const sps_cplx *slots, sps_bicgstab_slots k, sps_cplx *a, sps_cplx *om)
{
    sps_scoef ca = {1.0, k.rho, k.rv}, co = {1.0, k.ts, k.tt};
    *a = scoef_eval(ca, slots);
    om->re = 0.0;
    om->im = 0.0;
    if (slots[k.tt].re != 0.0 || slots[k.tt].im != 0.0) *om = scoef_eval(co, slots);
    return cplx_finite(*a) && cplx_finite(*om);
}
/* stopped on entry: nothing written; guard failed: rr = -1, stop = SKIPPED; else the
 * finishing block records the stop code from the slots it has just written */
struct bicgstab_guard : sps_cu_no_guard {
    sps_bicgstab_slots k;
    __device__ bool skip(const sps_cplx *slots) const { return k.stop >= 0 && slots[k.stop].re != 0.0; }
    __device__ bool fail(const sps_cplx *slots) const
    {
        sps_cplx a, om;
        return !bicgstab_coefs(slots, k, &a, &om);
    }
    __device__ void on_fail(sps_cplx *slots) const
    {
        if (k.stop >= 0) slots[k.stop] = acc_to_cplx((double)SPS_BCG_SKIPPED);
    }
    template <typename A> __device__ void on_done(sps_cplx *slots, const A *) const
    {
        if (k.stop >= 0) slots[k.stop] = acc_to_cplx((double)sps_bicgstab_stop_code(slots, k));
    }
};
template <typename T> struct bicgstab_xr_op {
    typedef typename sc<T>::ACC A;
    sps_cplx *slots; sps_bicgstab_slots k; const T *rhat, *ph, *sh, *s, *t; T *x, *r;
    T alpha, omega; bool bad;
    __device__ void setup()
    {
        sps_cplx a, om;
        bad = !bicgstab_coefs(slots, k, &a, &om) || bicgstab_guard{{}, k}.skip(slots);
        alpha = sc<T>::from(a);
        omega = sc<T>::from(om);
    }
    __device__ void operator()(sps_index i, A *acc)
    {
        if (bad) return;
        x[i] = x[i] + (alpha * ph[i] + omega * sh[i]);
        const T ri = s[i] - omega * t[i];
        r[i] = ri;
        acc[0] += acc_real<A>(abs2_r(ri));
        acc[1] += to_acc(conjv(rhat[i])) * to_acc(ri);
    }
};

template <typename T> struct axpy_dot_s_op {
    typedef typename sc<T>::ACC A;
    const sps_cplx *slots; sps_scoef c; const T *x; T *y; const T *z; T cv;
    __device__ void setup() { cv = scoef_t<T>(c, slots); }
    __device__ void operator()(sps_index i, A *acc)
    {
        y[i] = y[i] + cv * x[i];
        acc[0] += to_acc(conjv(z[i])) * to_acc(y[i]); /* z read after y is written: z may be y */
    }
};

template <typename T> struct scale_s_op {
    const sps_cplx *slots; sps_scoef c; T *x; T cv;
    __device__ void setup() { cv = scoef_t<T>(c, slots); }
    __device__ void operator()(sps_index i) { x[i] = cv * x[i]; }
};

} // namespace

/* ---------------------------------------------------------------- implementations */
template <typename T>
static sps_status bicgstab_p_impl(sps_exec *ex, sps_index n, const sps_cplx *slots, sps_bicgstab_slots k,
                                  const void *r, const void *v, void *p)
{
    return sps_cuda_foreach(ex, n, bicgstab_p_op<T>{slots, k, (const T *)r, (const T *)v, (T *)p, T(), T()});
}
template <typename T>
static sps_status waxpy_s_impl(sps_exec *ex, sps_index n, const void *x, const sps_cplx *slots, sps_scoef c,
                               const void *y, void *w)
{
    return sps_cuda_foreach(ex, n, waxpy_s_op<T>{(const T *)x, slots, c, (const T *)y, (T *)w, T()});
}
template <typename T>
static sps_status dot2_impl(sps_exec *ex, sps_index n, const void *x, const void *y, sps_cplx *slots, int xy, int xx)
{
    return sps_cuda_reduce<typename sc<T>::ACC, 2>(ex, n, dot2_op<T>{(const T *)x, (const T *)y}, slots,
                                                   sps_cu_outs2(xy, SPS_CU_OUT_SUM, xx, SPS_CU_OUT_SUM));
}
template <typename T>
static sps_status bicgstab_xr_impl(sps_exec *ex, sps_index n, sps_cplx *slots, sps_bicgstab_slots k,
                                   const void *rhat, const void *ph, const void *sh, const void *s, const void *t,
                                   void *x, void *r)
{
    bicgstab_xr_op<T> op = {slots, k, (const T *)rhat, (const T *)ph, (const T *)sh, (const T *)s, (const T *)t,
                            (T *)x, (T *)r, T(), T(), false};
    return sps_cuda_reduce<typename sc<T>::ACC, 2>(ex, n, op, slots,
                                                   sps_cu_outs2(k.rr, SPS_CU_OUT_SUM, k.rho_new, SPS_CU_OUT_SUM),
                                                   bicgstab_guard{{}, k}, k.rr);
}
template <typename T>
static sps_status axpy_dot_s_impl(sps_exec *ex, sps_index n, sps_cplx *slots, sps_scoef c, const void *x, void *y,
                                  const void *z, int out)
{
    axpy_dot_s_op<T> op = {slots, c, (const T *)x, (T *)y, (const T *)z, T()};
    return sps_cuda_reduce<typename sc<T>::ACC, 1>(ex, n, op, slots, sps_cu_outs1(out, SPS_CU_OUT_SUM));
}
template <typename T>
static sps_status scale_s_impl(sps_exec *ex, sps_index n, const sps_cplx *slots, sps_scoef c, void *x)
{
    return sps_cuda_foreach(ex, n, scale_s_op<T>{slots, c, (T *)x, T()});
}

/* ---------------------------------------------------------------- extern "C" entry points */
#define SPS_CU_SOLVER_ENTRIES(S, T)                                                                                  \
    extern "C" sps_status sps_cuda_cg_step_##S(sps_exec *ex, sps_index n, sps_cplx *slots, sps_cg_slots k,       \
                                               const void *p, const void *q, void *x, void *r)                      \
    { return cg_step_impl<T>(ex, n, slots, k, p, q, x, r); }                                                        \
    extern "C" sps_status sps_cuda_cg_step_pmul_##S(sps_exec *ex, sps_index n, sps_cplx *slots, sps_cg_slots k,  \
                                                    const void *p, const void *q, void *x, void *r, const void *d,  \
                                                    void *z, int rz)                                                \
    { return cg_step_pmul_impl<T>(ex, n, slots, k, p, q, x, r, d, z, rz); }                                         \
    extern "C" sps_status sps_cuda_bicgstab_p_##S(sps_exec *ex, sps_index n, const sps_cplx *slots,              \
                                                  sps_bicgstab_slots k, const void *r, const void *v, void *p)      \
    { return bicgstab_p_impl<T>(ex, n, slots, k, r, v, p); }                                                        \
    extern "C" sps_status sps_cuda_waxpy_s_##S(sps_exec *ex, sps_index n, const void *x, const sps_cplx *slots,  \
                                               sps_scoef c, const void *y, void *w)                                 \
    { return waxpy_s_impl<T>(ex, n, x, slots, c, y, w); }                                                           \
    extern "C" sps_status sps_cuda_dot2_##S(sps_exec *ex, sps_index n, const void *x, const void *y,             \
                                            sps_cplx *slots, int xy, int xx)                                        \
    { return dot2_impl<T>(ex, n, x, y, slots, xy, xx); }                                                            \
    extern "C" sps_status sps_cuda_bicgstab_xr_##S(sps_exec *ex, sps_index n, sps_cplx *slots,                   \
                                                   sps_bicgstab_slots k, const void *rhat, const void *ph,          \
                                                   const void *sh, const void *s, const void *t, void *x, void *r)  \
    { return bicgstab_xr_impl<T>(ex, n, slots, k, rhat, ph, sh, s, t, x, r); }                                      \
    extern "C" sps_status sps_cuda_axpy_dot_s_##S(sps_exec *ex, sps_index n, sps_cplx *slots, sps_scoef c,       \
                                                  const void *x, void *y, const void *z, int out)                   \
    { return axpy_dot_s_impl<T>(ex, n, slots, c, x, y, z, out); }                                                   \
    extern "C" sps_status sps_cuda_scale_s_##S(sps_exec *ex, sps_index n, const sps_cplx *slots, sps_scoef c,    \
                                               void *x)                                                             \
    { return scale_s_impl<T>(ex, n, slots, c, x); }

SPS_CU_FOR_ALL_TYPES(SPS_CU_SOLVER_ENTRIES)
