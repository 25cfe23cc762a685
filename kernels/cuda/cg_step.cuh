/* libspsolve — CUDA: CG's pieces shared by solver.cu and csr_fused.cu: the CG step's
 * pass and guard (kernels/solver_kernels.h cg_step; the fused CSR CG iteration
 * takes pq from its own reduction instead of the slot) and waxpy_s (w = x + c y,
 * also the direction update of csr_spmv_xpay_dot on long rows). */
#ifndef SPS_CUDA_CG_STEP_CUH
#define SPS_CUDA_CG_STEP_CUH
#include "kernels/cuda/common.cuh"

namespace {

/* w = x + c y, c from the slots (as csr_x_xpay forms it: the same bits) */
template <typename T> struct waxpy_s_op {
    const T *x; const sps_cplx *slots; sps_scoef c; const T *y; T *w; T cv;
    __device__ void setup() { cv = scoef_t<T>(c, slots); }
    __device__ void operator()(sps_index i) { w[i] = x[i] + cv * y[i]; }
};

/* cg_step's guard: stopped (skip: write nothing), or a step that must not be
 * taken (fail: rr = -1, stop = 1); the finishing block sets stop when rr does
 * not exceed tol2 (converged, to be confirmed by the host, or NaN).  pq is the
 * slot's value (have_pq = 0) or one the caller passes in (the fused iteration,
 * whose own first phase has just reduced it). */
struct cg_guard : sps_cu_no_guard {
    sps_cg_slots k;
    int have_pq; sps_cplx pq;
    /* alpha = rho / pq as the CPU evaluates it (sps_scoef_eval); true when the step must not be taken */
    __device__ static bool bad_step(sps_cplx rho, sps_cplx pq, sps_cplx *alpha)
    {
        const sps_cplx v[2] = {rho, pq};
        *alpha = scoef_eval(sps_scoef{1.0, 0, 1}, v);
        return !(pq.re > 0.0) || !(rho.re > 0.0) || !cplx_finite(*alpha);
    }
    __device__ sps_cplx pq_of(const sps_cplx *slots) const { return have_pq ? pq : slots[k.pq]; }
    __device__ bool skip(const sps_cplx *slots) const { return slots[k.stop].re != 0.0; }
    __device__ bool fail(const sps_cplx *slots) const
    {
        sps_cplx a;
        return bad_step(slots[k.rho], pq_of(slots), &a);
    }
    __device__ void on_fail(sps_cplx *slots) const { slots[k.stop] = acc_to_cplx(1.0); }
    template <typename A> __device__ void on_done(sps_cplx *slots, const A *tot) const
    {
        if (!(re_of(tot[0]) > slots[k.tol2].re)) slots[k.stop] = acc_to_cplx(1.0);
    }
};
/* The pass runs from the last entry to the first (cg_step_reverse, entry
 * last - i for index i): the product before it ends on the last rows, whose p, q
 * and r are then still in L2, and the product after it starts on the first rows,
 * which this pass touched last. */
constexpr bool cg_step_reverse = true; /* first-to-last: 3 us more an iteration (kernels/cuda/README.md), no longer a knob */
/* PM: PCG's step with a diagonal M = diag(d) (cg_step_pmul): each new r_i also gives
 * z_i = d_i r_i and conj(r_i) z_i to a second sum, as pmul_dot would in its own pass
 * (which would read r again: 1n of traffic and a launch saved). */
template <typename T, bool PM = false> struct cg_step_op {
    typedef typename sc<T>::ACC A;
    sps_cplx *slots; cg_guard g; const T *p, *q; T *x, *r; sps_index last; /* n - 1 */
    T alpha; bool bad;
    const T *d; T *z; /* PM */
    __device__ sps_index at(sps_index i) const { return cg_step_reverse ? last - i : i; }
    __device__ void setup()
    {
        sps_cplx a;
        bad = g.skip(slots) || cg_guard::bad_step(slots[g.k.rho], g.pq_of(slots), &a);
        alpha = sc<T>::from(a);
    }
    /* split (common.cuh sps_cu_reduce_pass): the loads of several entries in flight */
    struct vals { T x, p, r, q, d; };
    __device__ vals load(sps_index i) const
    {
        if (bad) return vals{};
        const sps_index e = at(i);
        return vals{x[e], p[e], r[e], q[e], PM ? d[e] : T()};
    }
    __device__ void apply(sps_index i, const vals &v, A *acc)
    {
        if (bad) return;
        const sps_index e = at(i);
        x[e] = v.x + alpha * v.p;
        const T ri = v.r - alpha * v.q;
        r[e] = ri;
        acc[0] += acc_real<A>(abs2_r(ri));
        if constexpr (PM) {
            const T zi = v.d * ri;
            z[e] = zi;
            acc[1] += to_acc(conjv(ri)) * to_acc(zi);
        }
    }
};

/* cg_step: one pass and its finishing block (sps_cuda_reduce). */
template <typename T>
static sps_status cg_step_impl(sps_exec *ex, sps_index n, sps_cplx *slots, sps_cg_slots k, const void *p,
                               const void *q, void *x, void *r)
{
    cg_step_op<T> op = {slots, cg_guard{{}, k, 0, {}}, (const T *)p, (const T *)q, (T *)x, (T *)r, n - 1, T(), false,
                        NULL, NULL};
    return sps_cuda_reduce<typename sc<T>::ACC, 1>(ex, n, op, slots, sps_cu_outs1(k.rr, SPS_CU_OUT_SUM),
                                                   cg_guard{{}, k, 0, {}}, k.rr);
}

/* cg_step_pmul: the same pass with z = d .* r and r^H z (slots[rz]) as a second sum;
 * skipped or guarded, nothing but what cg_step writes (the finishing block's guard). */
template <typename T>
static sps_status cg_step_pmul_impl(sps_exec *ex, sps_index n, sps_cplx *slots, sps_cg_slots k, const void *p,
                                    const void *q, void *x, void *r, const void *d, void *z, int rz)
{
    cg_step_op<T, true> op = {slots, cg_guard{{}, k, 0, {}}, (const T *)p, (const T *)q, (T *)x, (T *)r, n - 1, T(),
                              false, (const T *)d, (T *)z};
    return sps_cuda_reduce<typename sc<T>::ACC, 2>(
        ex, n, op, slots, sps_cu_outs2(k.rr, SPS_CU_OUT_SUM, rz, SPS_CU_OUT_SUM), cg_guard{{}, k, 0, {}}, k.rr);
}

} // namespace

#endif
