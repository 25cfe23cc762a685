/* libspsolve — CUDA backend: what every .cu file of kernels/cuda shares.
 *
 *  - SPS_CU(ex, call) checks a CUDA runtime call, SPS_CU_LAUNCHED(ex, what)
 *    checks cudaGetLastError after a launch; a failure records
 *    "file:line: what: cudaErrorX (text)" in ex and returns SPS_ERR_DEVICE.
 *  - sps_cuda_state: the context's stream and its preallocated workspace
 *    (reduction partials, COO carries), allocated once in init.
 *  - scalar traits: cx<R> (interleaved complex, the layout of C's float
 *    _Complex), accumulator types (double / cx<double>, as the CPU reference),
 *    conversion from the host's sps_cplx, slot coefficients (sps_scoef).
 *  - generic launchers: sps_cuda_foreach (element-wise functor, grid-stride) and
 *    sps_cuda_reduce (functor producing NV accumulators per element; per-block
 *    partials by CUB BlockReduce into the workspace, then the last block to
 *    finish sums the partials in a fixed order and writes slots, all in one
 *    launch): deterministic, because the grid size depends on n and the
 *    kernel's occupancy on the GPU only (never on timing), every thread
 *    visits a fixed index set in a fixed order, and CUB's BlockReduce is a
 *    fixed tree for a fixed block size.
 *
 * Everything is queued on the context's stream; nothing here synchronises
 * with the host. */
#ifndef SPS_CUDA_COMMON_CUH
#define SPS_CUDA_COMMON_CUH

#include "kernels/backend.h"
#include "kernels/launch.h"

#include <cuda_runtime.h>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <math.h>
#include <stdint.h>

#include <type_traits>
#include <utility>

/* ------------------------------------------------------------------ errors */
/** Record a CUDA failure (SPS_ERR_DEVICE) with file:line in the message. */
static inline sps_status sps_cuda_fail(sps_exec *ex, cudaError_t e, const char *what, const char *file, int line)
{
    return sps_exec_error_at(ex, SPS_ERR_DEVICE, file, line, "%s:%d: %s: %s (%s)", file, line, what,
                        cudaGetErrorName(e), cudaGetErrorString(e));
}
/** Check one CUDA runtime call; on failure record it and return SPS_ERR_DEVICE. */
#define SPS_CU(ex, call)                                                           \
    do {                                                                            \
        cudaError_t sps_cu_e_ = (call);                                             \
        if (sps_cu_e_ != cudaSuccess) return sps_cuda_fail((ex), sps_cu_e_, #call, __FILE__, __LINE__); \
    } while (0)
/** After a kernel launch: check the launch itself (and earlier sticky errors); the
 *  staging no longer holds the latest slots (sps_cuda_state.staged). */
#define SPS_CU_LAUNCHED(ex, what)                                                  \
    do {                                                                            \
        cudaError_t sps_cu_e_ = cudaGetLastError();                                 \
        sps_cu_unstage(ex);                                                        \
        if (sps_cu_e_ != cudaSuccess) return sps_cuda_fail((ex), sps_cu_e_, "launch of " what, __FILE__, __LINE__); \
    } while (0)

/* ------------------------------------------------------------------ backend state */
/* Reductions: 256 threads a block, at most one resident wave of the kernel
 * (sps_cu_red_grid): the summation tree, hence the bits of the result, depend on
 * n and on the kernel's occupancy on the GPU (the same for every run on one GPU
 * model and build).  A fixed 1024 blocks made the kernels with more than 32
 * registers run a second, partial wave: cg_step (38 registers: 792 resident on
 * the H100) on 2M entries spent its last quarter on 232 blocks. */
#define SPS_CU_RED_THREADS 256
#define SPS_CU_RED_MIN_PER_THREAD 1 /* a thread an entry until the grid is full: small vectors (1e5) latency-bound otherwise */
/* Up to 4 accumulators (complex double, 16 bytes) per block; partials for up to
 * 4096 blocks (kernels with a reduction end on a larger grid: csr_spmv_dot). */
#define SPS_CU_RED_MAX_VALUES 4
#define SPS_CU_PART_MAX_BLOCKS 4096
#define SPS_CU_WS_RED_BYTES ((size_t)SPS_CU_PART_MAX_BLOCKS * SPS_CU_RED_MAX_VALUES * 16)
/* COO SpMV: at most 2048 blocks, 2 carries each (row, complex double). */
#define SPS_CU_COO_MAX_BLOCKS 2048
#define SPS_CU_WS_COO_BYTES ((size_t)SPS_CU_COO_MAX_BLOCKS * 2 * (16 + 4))
/* A few words of flags (invert's first bad index, ...). */
#define SPS_CU_WS_FLAG_BYTES 256
#define SPS_CU_WS_BYTES (SPS_CU_WS_RED_BYTES + SPS_CU_WS_COO_BYTES + SPS_CU_WS_FLAG_BYTES)

#define SPS_CU_OCC_CACHE 128
typedef struct {
    cudaStream_t stream;   /* non-blocking, owned by the context */
    cudaMemPool_t pool;    /* the context's stream-ordered allocator (backend.cu), NULL: plain cudaMalloc */
    unsigned char *ws;     /* device workspace, SPS_CU_WS_BYTES, allocated in init */
    int sms;               /* multiprocessor count (sizes element-wise grids only) */
    struct { const void *fn; int per_sm; } occ[SPS_CU_OCC_CACHE]; /* resident blocks an SM, by kernel */
    int nocc;
    void *pinned;          /* 2 x SPS_FETCH_MAX_BYTES of pinned host staging for fetch_begin/fetch_wait */
    void *pinned_dev;      /* the same memory as the device sees it (mapped), NULL where it is not */
    cudaEvent_t fetch_ev;  /* recorded after the queued fetch copy */
    int fetch_pending, pending_buf;
    /* The armed fetch (backend.cu cuda_fetch_arm): reductions launched while armed
     * copy arm_words 8-byte words from arm_src into staging buffer arm_buf when their
     * finishing block has written the slots; staged = the last thing queued was
     * such a reduction (every other launch and copy clears it), so fetch_begin
     * needs no kernel of its own. */
    const void *arm_src;
    int arm_words, arm_buf;
    int staged, staged_buf;
} sps_cuda_state;

static inline sps_cuda_state *sps_cust(sps_exec *ex) { return (sps_cuda_state *)ex->be_state; }
/* Staging buffer buf (0 or 1) as the device writes it (mapped) and as the host reads it. */
static inline unsigned long long *sps_cu_staging_dev(const sps_cuda_state *st, int buf)
{
    return (unsigned long long *)st->pinned_dev + (size_t)buf * (SPS_FETCH_MAX_BYTES / 8);
}
static inline const unsigned char *sps_cu_staging_host(const sps_cuda_state *st, int buf)
{
    return (const unsigned char *)st->pinned + (size_t)buf * SPS_FETCH_MAX_BYTES;
}
static inline void sps_cu_unstage(sps_exec *ex) { sps_cust(ex)->staged = 0; }
static inline cudaStream_t sps_custream(sps_exec *ex) { return sps_cust(ex)->stream; }
static inline void *sps_cuws_red(sps_exec *ex) { return sps_cust(ex)->ws; }
static inline void *sps_cuws_coo(sps_exec *ex) { return sps_cust(ex)->ws + SPS_CU_WS_RED_BYTES; }
/* The flag area (zeroed at init): invert's flag at 0, the last-block counter at 128. */
static inline void *sps_cuws_flag(sps_exec *ex)
{
    return sps_cust(ex)->ws + SPS_CU_WS_RED_BYTES + SPS_CU_WS_COO_BYTES;
}
static inline unsigned *sps_cuws_counter(sps_exec *ex)
{
    return (unsigned *)((unsigned char *)sps_cuws_flag(ex) + 128);
}

/* ------------------------------------------------------------------ scalars */
template <typename R> struct __align__(2 * sizeof(R)) cx {
    R re, im;
};
template <typename R> __host__ __device__ inline cx<R> mkcx(R re, R im) { cx<R> c; c.re = re; c.im = im; return c; }
template <typename R> __host__ __device__ inline cx<R> operator+(cx<R> a, cx<R> b)
{
    return mkcx(a.re + b.re, a.im + b.im);
}
template <typename R> __host__ __device__ inline cx<R> operator-(cx<R> a, cx<R> b)
{
    return mkcx(a.re - b.re, a.im - b.im);
}
template <typename R> __host__ __device__ inline cx<R> operator*(cx<R> a, cx<R> b)
{
    return mkcx(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <typename R> __host__ __device__ inline cx<R> &operator+=(cx<R> &a, cx<R> b) { a = a + b; return a; }

/* Scalar traits: R real type, ACC accumulator (double precision, as the CPU). */
template <typename T> struct sc;
template <> struct sc<float> {
    typedef float R; typedef double ACC; enum { cplx = 0 };
    __host__ __device__ static float from(sps_cplx c) { return (float)c.re; }
};
template <> struct sc<double> {
    typedef double R; typedef double ACC; enum { cplx = 0 };
    __host__ __device__ static double from(sps_cplx c) { return c.re; }
};
template <> struct sc<cx<float>> {
    typedef float R; typedef cx<double> ACC; enum { cplx = 1 };
    __host__ __device__ static cx<float> from(sps_cplx c) { return mkcx((float)c.re, (float)c.im); }
};
template <> struct sc<cx<double>> {
    typedef double R; typedef cx<double> ACC; enum { cplx = 1 };
    __host__ __device__ static cx<double> from(sps_cplx c) { return mkcx(c.re, c.im); }
};

__host__ __device__ inline float conjv(float x) { return x; }
__host__ __device__ inline double conjv(double x) { return x; }
template <typename R> __host__ __device__ inline cx<R> conjv(cx<R> x) { return mkcx(x.re, -x.im); }

__host__ __device__ inline double to_acc(float x) { return (double)x; }
__host__ __device__ inline double to_acc(double x) { return x; }
__host__ __device__ inline cx<double> to_acc(cx<float> x) { return mkcx((double)x.re, (double)x.im); }
__host__ __device__ inline cx<double> to_acc(cx<double> x) { return x; }

__host__ __device__ inline double re_of(float x) { return x; }
__host__ __device__ inline double re_of(double x) { return x; }
template <typename R> __host__ __device__ inline double re_of(cx<R> x) { return (double)x.re; }
__host__ __device__ inline double im_of(float) { return 0.0; }
__host__ __device__ inline double im_of(double) { return 0.0; }
template <typename R> __host__ __device__ inline double im_of(cx<R> x) { return (double)x.im; }

__host__ __device__ inline sps_cplx acc_to_cplx(double x) { sps_cplx c; c.re = x; c.im = 0.0; return c; }
__host__ __device__ inline sps_cplx acc_to_cplx(cx<double> x) { sps_cplx c; c.re = x.re; c.im = x.im; return c; }

template <typename T> __host__ __device__ inline T zero_of() { return sc<T>::from(sps_cplx{0.0, 0.0}); }

__device__ inline bool finite_of(float x) { return isfinite(x); }
__device__ inline bool finite_of(double x) { return isfinite(x); }
template <typename R> __device__ inline bool finite_of(cx<R> x) { return isfinite(x.re) && isfinite(x.im); }
__device__ inline bool is_zero(float x) { return x == 0.0f; }
__device__ inline bool is_zero(double x) { return x == 0.0; }
template <typename R> __device__ inline bool is_zero(cx<R> x) { return x.re == (R)0 && x.im == (R)0; }

/* |x|^2 in T's real precision (as the CPU's ABS2), then widened. */
__device__ inline double abs2_r(float x) { return (double)(x * x); }
__device__ inline double abs2_r(double x) { return x * x; }
template <typename R> __device__ inline double abs2_r(cx<R> x) { return (double)(x.re * x.re + x.im * x.im); }
/* An accumulator holding a real value (a sum of |x|^2). */
__device__ inline void acc_set_real(double &a, double v) { a = v; }
__device__ inline void acc_set_real(cx<double> &a, double v) { a = mkcx(v, 0.0); }
template <typename A> __device__ inline A acc_real(double v) { A a; acc_set_real(a, v); return a; }
__device__ inline bool cplx_finite(sps_cplx c) { return isfinite(c.re) && isfinite(c.im); }

/* 1/x; complex by Smith's formula (no overflow for large |x|), like C's complex division. */
__device__ inline float recip(float x) { return 1.0f / x; }
__device__ inline double recip(double x) { return 1.0 / x; }
template <typename R> __device__ inline cx<R> recip(cx<R> x)
{
    if (fabs((double)x.re) >= fabs((double)x.im)) {
        R r = x.im / x.re, d = x.re + x.im * r;
        return mkcx((R)1 / d, -r / d);
    }
    R r = x.re / x.im, d = x.re * r + x.im;
    return mkcx(r / d, (R)-1 / d);
}

/* Warp shuffles of every scalar and accumulator type. */
__device__ inline float shfl_down(unsigned mask, float v, int off, int w) { return __shfl_down_sync(mask, v, off, w); }
__device__ inline double shfl_down(unsigned mask, double v, int off, int w)
{
    return __shfl_down_sync(mask, v, off, w);
}
template <typename R> __device__ inline cx<R> shfl_down(unsigned mask, cx<R> v, int off, int w)
{
    return mkcx(__shfl_down_sync(mask, v.re, off, w), __shfl_down_sync(mask, v.im, off, w));
}

/* A segmented-sum scan element and its operator (CUB scans of COO SpMV and Hola's
 * COO-decoding path): f = 1 where a new row starts. */
template <typename T> struct sps_cu_segv {
    int f;
    T v;
};
template <typename T> struct sps_cu_seg_op {
    __device__ sps_cu_segv<T> operator()(const sps_cu_segv<T> &a, const sps_cu_segv<T> &b) const
    {
        sps_cu_segv<T> r;
        r.f = a.f | b.f;
        r.v = b.f ? b.v : a.v + b.v;
        return r;
    }
};

/* What becomes of a row's sum s in the SpMV kernels: y_i = a s + b y_i (b == 0:
 * y not read).  sps_cu_axpby_out_of builds it from the host's coefficients. */
template <typename T> struct sps_cu_axpby_out {
    T a, b; int beta_zero; T *y;
    __device__ void operator()(sps_index i, T s) const { y[i] = beta_zero ? a * s : a * s + b * y[i]; }
};
template <typename T> static inline sps_cu_axpby_out<T> sps_cu_axpby_out_of(sps_cplx a, sps_cplx b, void *y)
{
    return sps_cu_axpby_out<T>{sc<T>::from(a), sc<T>::from(b), b.re == 0.0 && b.im == 0.0, (T *)y};
}

/* a + b, for CUB block reductions of any scalar or accumulator type. */
template <typename T> struct sps_cu_sum {
    __device__ T operator()(const T &a, const T &b) const { return a + b; }
};

/* Read-only-path loads (ld.global.nc) of every scalar type. */
__device__ inline float ldg_t(const float *p) { return __ldg(p); }
__device__ inline double ldg_t(const double *p) { return __ldg(p); }
__device__ inline sps_index ldg_t(const sps_index *p) { return __ldg(p); }
__device__ inline uint16_t ldg_t(const uint16_t *p) { return __ldg((const unsigned short *)p); }
__device__ inline uint8_t ldg_t(const uint8_t *p) { return __ldg((const unsigned char *)p); }
__device__ inline cx<float> ldg_t(const cx<float> *p)
{
    const float2 v = __ldg((const float2 *)p);
    return mkcx(v.x, v.y);
}
__device__ inline cx<double> ldg_t(const cx<double> *p)
{
    const double2 v = __ldg((const double2 *)p);
    return mkcx(v.x, v.y);
}

/* Streaming loads that do not allocate in L1 (ld.global.nc.L1::no_allocate): for
 * data each instruction uses whole and no other instruction reads again, so the
 * L1 keeps what is reused (the gathered vector).  No L2 prefetch-size hint
 * (.L2::64B/128B/256B was a tuning build, SPS_NA_L2PF, with no result kept: no
 * longer a knob, bench/results/knobs.md). */
#define SPS_NA_Q "ld.global.nc.L1::no_allocate"
__device__ inline float ldna_t(const float *p)
{
    float v;
    asm(SPS_NA_Q ".f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
__device__ inline double ldna_t(const double *p)
{
    double v;
    asm(SPS_NA_Q ".f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}
__device__ inline sps_index ldna_t(const sps_index *p)
{
    sps_index v;
    asm(SPS_NA_Q ".s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}
__device__ inline uint8_t ldna_t(const uint8_t *p)
{
    unsigned short v; /* PTX has no 8-bit register: the byte lands in 16 bits */
    asm(SPS_NA_Q ".u8 %0, [%1];" : "=h"(v) : "l"(p));
    return (uint8_t)v;
}
__device__ inline uint16_t ldna_t(const uint16_t *p)
{
    unsigned short v;
    asm(SPS_NA_Q ".u16 %0, [%1];" : "=h"(v) : "l"(p));
    return v;
}
__device__ inline cx<float> ldna_t(const cx<float> *p)
{
    float a, b;
    asm(SPS_NA_Q ".v2.f32 {%0, %1}, [%2];" : "=f"(a), "=f"(b) : "l"(p));
    return mkcx(a, b);
}
__device__ inline cx<double> ldna_t(const cx<double> *p)
{
    double a, b;
    asm(SPS_NA_Q ".v2.f64 {%0, %1}, [%2];" : "=d"(a), "=d"(b) : "l"(p));
    return mkcx(a, b);
}

__device__ inline int4 ldna_t(const int4 *p)
{
    int4 v;
    asm(SPS_NA_Q ".v4.s32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ inline uint4 ldna_t(const uint4 *p)
{
    uint4 v;
    asm(SPS_NA_Q ".v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}
__device__ inline int4 ldg_t(const int4 *p) { return __ldg(p); }
__device__ inline uint4 ldg_t(const uint4 *p) { return __ldg(p); }

/* A read-only load through the L1 (ldg_t) or past it (ldna_t, NA). */
template <bool NA, typename V> __device__ inline V sps_cu_ld(const V *p)
{
    if constexpr (NA) return ldna_t(p);
    else return ldg_t(p);
}

/* Value readers of the formats that may keep their values as a dictionary's indices
 * (formats/vdict.h: the padded family, DIA): load(p) reads what slot p stores,
 * get(raw) its value.  Plain: the value itself.  Dictionary: a byte a slot (loaded as
 * the value it replaces, NA past the L1), then the value from the table of at most
 * 256 through the L1, where the table stays (a stencil's few values: a line or two). */
template <typename T, bool NA> struct sps_cu_vals_plain {
    typedef T raw;
    const T *v;
    __device__ sps_cu_vals_plain(const void *val, const void *) : v((const T *)val) {}
    __device__ raw load(int64_t p) const { return sps_cu_ld<NA>(v + p); }
    __device__ T get(raw r) const { return r; }
};
template <typename T, bool NA> struct sps_cu_vals_dict {
    typedef uint8_t raw;
    const uint8_t *i;
    const T *d;
    __device__ sps_cu_vals_dict(const void *val, const void *dict) : i((const uint8_t *)val), d((const T *)dict) {}
    __device__ raw load(int64_t p) const { return sps_cu_ld<NA>(i + p); }
    __device__ T get(raw r) const { return ldg_t(d + r); }
};

/* y += v without ordering (SpMV^T scatters): complex as two component adds. */
__device__ inline void atomic_add(float *p, float v) { atomicAdd(p, v); }
__device__ inline void atomic_add(double *p, double v) { atomicAdd(p, v); }
template <typename R> __device__ inline void atomic_add(cx<R> *p, cx<R> v)
{
    atomicAdd(&p->re, v.re);
    atomicAdd(&p->im, v.im);
}

/* Slot coefficient sign * slots[num] / slots[den]: the one definition shared
 * with the CPU (sps_scoef_eval, kernels/kernels.h), then rounded to T. */
__device__ inline sps_cplx scoef_eval(sps_scoef c, const sps_cplx *slots) { return sps_scoef_eval(c, slots); }
template <typename T> __device__ inline T scoef_t(sps_scoef c, const sps_cplx *slots)
{
    return sc<T>::from(scoef_eval(c, slots));
}

/* ------------------------------------------------------------------ staged products */
/* x gathered through the read-only path: the plain vector of a product. */
template <typename T> struct sps_cu_xplain {
    const T *x;
    __device__ T operator()(sps_index c) const { return ldg_t(x + c); }
};
/* A tile of CSR entries base + o, o in [lo, hi) (hi <= PER THREADS), loaded by the
 * whole block coalesced (thread t: o = t, t + THREADS, ...; all PER col/val loads
 * in flight before the first gather, NA: past the L1), and their products
 * val x(col) put in prod[o] (shared memory; the caller synchronises).  LO: lo may
 * be above 0; else it is 0 and not tested.  The address is base + o in 32 unsigned
 * bits (no signed overflow near INT32_MAX, and the register count the row kernel had
 * before an int64 form raised it).  ptxas's register choice is sensitive to the form
 * of these tests (testing lo = 0 took the merge tile from 47-48 registers to 40 in
 * f64/c32), which is why the row kernels pin their occupancy (csr.cu csr_minb).
 * The staged CSR passes (csr_common.cuh) and the merge-path tiles (csr_merge.cu). */
template <int PER, int THREADS, bool NA, bool LO, typename T, typename X>
__device__ inline void sps_cu_stage_products(const sps_index *col, const T *val, const X &x, sps_index base, int lo,
                                             int hi, T *prod)
{
    sps_index c[PER];
    T v[PER];
#pragma unroll
    for (int m = 0; m < PER; m++) {
        const int o = (int)threadIdx.x + m * THREADS;
        const bool ok = LO ? o >= lo && o < hi : o < hi;
        const unsigned e = (unsigned)base + (unsigned)o; /* < 2^32: base <= INT32_MAX, o < PER THREADS */
        c[m] = ok ? sps_cu_ld<NA>(col + e) : 0;
        v[m] = ok ? sps_cu_ld<NA>(val + e) : zero_of<T>();
    }
#pragma unroll
    for (int m = 0; m < PER; m++) {
        const int o = (int)threadIdx.x + m * THREADS;
        if (LO ? o >= lo && o < hi : o < hi) prod[o] = v[m] * x(c[m]);
    }
}

/* ------------------------------------------------------------------ element-wise launcher */
#define SPS_CU_THREADS 256
/* out[0] = 0, out[k + 1] = in[0] + ... + in[k] for k < items (items + 1 outputs: out[items] is
 * the total), queued on the context's stream (scan.cu); more than INT32_MAX items are
 * SPS_ERR_UNSUPPORTED (CUB's item count).  what: the caller, for errors. */
sps_status sps_cu_scan_index(sps_exec *ex, const sps_index *in, sps_index *out, int64_t items, const char *what);
sps_status sps_cu_scan_i64(sps_exec *ex, const int64_t *in, int64_t *out, int64_t items, const char *what);
/* Grid of a grid-stride element-wise kernel: enough blocks to cover n, at most
 * 32 per multiprocessor (beyond that, blocks only add scheduling). */
static inline unsigned sps_cu_grid(sps_exec *ex, int64_t n)
{
    int64_t g = (n + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    int64_t cap = (int64_t)sps_cust(ex)->sms * 32;
    if (g > cap) g = cap;
    if (g < 1) g = 1;
    return (unsigned)g;
}

/* Programmatic dependent launch (sm_90; no-ops before): a kernel launched by
 * sps_cu_launch_pdl may start while the previous kernel on the stream still
 * runs -- once every block of that one has called sps_cu_pdl_trigger or exited
 * -- and must call sps_cu_pdl_wait before it touches anything the previous
 * kernel writes (wait returns when that kernel has finished and its writes are
 * visible; launched without the attribute, it returns at once).  What comes
 * before the wait overlaps the previous kernel's tail and the launch gap. */
__device__ inline void sps_cu_pdl_trigger()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ inline void sps_cu_pdl_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
/* Whether a PDL launch is safe: every architecture of the build is sm_90 or
 * later (the default, 90).  A binary that also holds older code could run that
 * code -- JIT-compiled on a Hopper from compute_80 PTX, say -- where
 * sps_cu_pdl_wait compiles to nothing, and the dependent kernel would then read
 * what the previous one writes without waiting. */
#ifdef __CUDA_ARCH_LIST__ /* nvcc 11.5+: the architectures of the build, e.g. 800,900 */
constexpr int sps_cu_archs[] = {__CUDA_ARCH_LIST__};
#else
constexpr int sps_cu_archs[] = {0}; /* unknown: no PDL */
#endif
constexpr bool sps_cu_all_sm90()
{
    for (int a : sps_cu_archs)
        if (a < 900) return false;
    return true;
}
/* One launch of `kernel` (SPS_CU_THREADS threads a block, no dynamic shared
 * memory) with one launch attribute (cooperative, programmatic serialization). */
template <typename... P, typename... A>
static inline cudaError_t sps_cu_launch_attr(cudaLaunchAttribute at, void (*kernel)(P...), unsigned grid,
                                             cudaStream_t s, A &&...args)
{
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(SPS_CU_THREADS);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = s;
    cfg.attrs = &at;
    cfg.numAttrs = 1;
    return cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
}
/* a cooperative launch (every block resident at once: grid-wide barriers; grid at most the
 * kernel's resident blocks, sps_cu_resident) */
template <typename... P, typename... A>
static inline cudaError_t sps_cu_launch_coop(void (*kernel)(P...), unsigned grid, cudaStream_t s, A &&...args)
{
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeCooperative;
    at.val.cooperative = 1;
    return sps_cu_launch_attr(at, kernel, grid, s, std::forward<A>(args)...);
}
template <typename... P, typename... A>
static inline cudaError_t sps_cu_launch_pdl(void (*kernel)(P...), unsigned grid, cudaStream_t s, A &&...args)
{
    cudaLaunchAttribute at;
    at.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    at.val.programmaticStreamSerializationAllowed = 1;
    return sps_cu_launch_attr(at, kernel, grid, s, std::forward<A>(args)...);
}

/* A grid-stride loop's next index: i + stride, or n where that would reach past n (32-bit
 * indices: i + stride wraps past INT32_MAX where n is within a stride of it). */
__device__ inline sps_index sps_cu_next(sps_index i, sps_index stride, sps_index n)
{
    return n - i > stride ? i + stride : n;
}

template <typename Op> __global__ void __launch_bounds__(SPS_CU_THREADS) sps_cu_foreach_kernel(Op op, sps_index n)
{
    op.setup();
    const sps_index stride = (sps_index)(gridDim.x * blockDim.x);
    for (sps_index i = (sps_index)(blockIdx.x * blockDim.x + threadIdx.x); i < n; i = sps_cu_next(i, stride, n)) op(i);
}

/** Run op(i) for i in [0, n) on the context's stream. */
template <typename Op> static inline sps_status sps_cuda_foreach(sps_exec *ex, sps_index n, Op op)
{
    if (n <= 0) return SPS_OK;
    sps_cu_foreach_kernel<Op><<<sps_cu_grid(ex, n), SPS_CU_THREADS, 0, sps_custream(ex)>>>(op, n);
    SPS_CU_LAUNCHED(ex, "element-wise kernel");
    return SPS_OK;
}

/* y = b y (b == 0: y = 0, y not read): the SpMV^T scatters and COO's segments start with it.
 * TRIGGER: each block lets a dependent kernel launched by sps_cu_launch_pdl start at once (it
 * must sps_cu_pdl_wait before it touches y). */
namespace {
template <typename T, bool TRIGGER = false> struct scale_y_op {
    T b; int beta_zero; T *y;
    __device__ void setup()
    {
        if constexpr (TRIGGER) sps_cu_pdl_trigger();
    }
    __device__ void operator()(sps_index i) { y[i] = beta_zero ? zero_of<T>() : b * y[i]; }
};
template <typename T, bool TRIGGER = false> static sps_status scale_y(sps_exec *ex, sps_index m, sps_cplx b, void *y)
{
    const int bz = b.re == 0.0 && b.im == 0.0;
    return sps_cuda_foreach(ex, m, scale_y_op<T, TRIGGER>{sc<T>::from(b), bz, (T *)y});
}
} // namespace

/* ------------------------------------------------------------------ deterministic reductions */
/* NV accumulators of type A. */
template <typename A, int NV> struct accv {
    A v[NV];
};
template <typename A, int NV> struct accv_sum {
    __device__ accv<A, NV> operator()(const accv<A, NV> &a, const accv<A, NV> &b) const
    {
        accv<A, NV> r;
#pragma unroll
        for (int k = 0; k < NV; k++) r.v[k] = a.v[k] + b.v[k];
        return r;
    }
};

/** What the finishing block does with each sum: store it in slots[slot[k]]
 *  as is, or store sqrt(re) (a norm from a sum of squares). */
enum { SPS_CU_OUT_SUM = 0, SPS_CU_OUT_SQRT = 1, SPS_CU_OUT_NONE = 2 };
struct sps_cu_outs {
    int slot[SPS_CU_RED_MAX_VALUES];
    int kind[SPS_CU_RED_MAX_VALUES];
    /* the armed fetch (sps_cu_arm): then the finishing block copies stage_words
     * words of stage_src (the solver's slots) into stage_dst (mapped pinned host
     * memory) once the slots are written */
    const unsigned long long *stage_src;
    unsigned long long *stage_dst;
    int stage_words;
};

/** Resident blocks of `kernel` on the context's GPU at 256 threads a block
 *  (occupancy x SMs), asked once per kernel and cached in the context. */
template <typename K> static inline sps_status sps_cu_resident(sps_exec *ex, K kernel, int *blocks)
{
    sps_cuda_state *st = sps_cust(ex);
    const void *fn = (const void *)kernel;
    int i = 0;
    while (i < st->nocc && st->occ[i].fn != fn) i++;
    if (i == st->nocc) {
        int per_sm = 0;
        SPS_CU(ex, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, SPS_CU_THREADS, 0));
        if (i == SPS_CU_OCC_CACHE) i--; /* full (never, with this library's kernels): reuse the last entry */
        else st->nocc++;
        st->occ[i].fn = fn;
        st->occ[i].per_sm = per_sm > 0 ? per_sm : 1;
    }
    const int64_t b = (int64_t)st->occ[i].per_sm * st->sms;
    *blocks = (int)(b < SPS_CU_PART_MAX_BLOCKS ? b : SPS_CU_PART_MAX_BLOCKS);
    return SPS_OK;
}

/** Blocks of a cooperative launch of `kernel` (SPS_CU_THREADS a block) over n items, a thread an
 *  item: as many as the items need, at most the resident ones (a cooperative grid is resident
 *  whole) and cap, at least one. */
template <typename K> static inline sps_status sps_cu_coop_grid(sps_exec *ex, K kernel, int64_t n, int cap, int *grid)
{
    int res = 1;
    SPS_CHECK(sps_cu_resident(ex, kernel, &res));
    int64_t g = (n + SPS_CU_THREADS - 1) / SPS_CU_THREADS;
    g = g < res ? g : res;
    g = g < cap ? g : cap;
    *grid = g < 1 ? 1 : (int)g;
    return SPS_OK;
}

/** Blocks of a reduction kernel over n entries: a block per 256 entries up to one
 *  resident wave (more blocks would only run as a partial second wave: the
 *  kernels are grid-stride). */
template <typename K> static inline sps_status sps_cu_red_grid(sps_exec *ex, K kernel, int64_t n, int *nb)
{
    int cap = 1;
    SPS_CHECK(sps_cu_resident(ex, kernel, &cap));
    const int64_t per_block = (int64_t)SPS_CU_RED_THREADS * SPS_CU_RED_MIN_PER_THREAD;
    const int64_t b = (n + per_block - 1) / per_block;
    *nb = (int)(b < 1 ? 1 : b < cap ? b : cap);
    return SPS_OK;
}

__device__ inline void sps_cu_store_out(sps_cplx *slots, int slot, int kind, double v)
{
    if (kind == SPS_CU_OUT_NONE) return;
    slots[slot] = acc_to_cplx(kind == SPS_CU_OUT_SQRT ? sqrt(v) : v);
}
__device__ inline void sps_cu_store_out(sps_cplx *slots, int slot, int kind, cx<double> v)
{
    if (kind == SPS_CU_OUT_NONE) return;
    slots[slot] = kind == SPS_CU_OUT_SQRT ? acc_to_cplx(sqrt(v.re)) : acc_to_cplx(v);
}

/** A guard of a fused step: when fail(slots) holds, the step writes no vector
 *  and the finishing block stores slots[guard_slot] = -1 instead of the sums
 *  (solver_kernels.h: "guarded" steps).  fail() reads only slots the step does
 *  not write, so every block and the finishing block agree. */
struct sps_cu_no_guard {
    /* skip: the step is off (a stopped solve): nothing is written, not even slots */
    __device__ bool skip(const sps_cplx *) const { return false; }
    __device__ bool fail(const sps_cplx *) const { return false; }
    /* the finishing block, after a failed guard / after storing the sums (thread 0) */
    __device__ void on_fail(sps_cplx *) const {}
    template <typename A> __device__ void on_done(sps_cplx *, const A *) const {}
};

/** "Last block finishes" (CUDA's threadFenceReduction): thread 0 of every block
 *  publishes the block's partials (written before the call), fences, and
 *  counts the block in *counter; the block that counts last gets true (in all
 *  its threads) and resets the counter for the next reduction.  Which block
 *  finishes varies from run to run; what it computes does not, since it reads
 *  the partials in block order. */
__device__ inline bool sps_cu_last_block(unsigned *counter)
{
    __shared__ bool last;
    __syncthreads(); /* the partials of this block are written (by thread 0) */
    if (threadIdx.x == 0) {
        __threadfence();
        const unsigned prev = atomicAdd(counter, 1u);
        last = (prev == gridDim.x - 1);
        if (last) *counter = 0; /* every other block has counted: nobody reads it again in this launch */
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}
/* Partials written by other blocks: read from L2, not a possibly stale L1 line. */
__device__ inline float sps_cu_ldcg(const float *p) { return __ldcg(p); }
__device__ inline double sps_cu_ldcg(const double *p) { return __ldcg(p); }
__device__ inline cx<float> sps_cu_ldcg(const cx<float> *p) { return mkcx(__ldcg(&p->re), __ldcg(&p->im)); }
__device__ inline cx<double> sps_cu_ldcg(const cx<double> *p) { return mkcx(__ldcg(&p->re), __ldcg(&p->im)); }
__device__ inline int sps_cu_ldcg(const int *p) { return __ldcg(p); }

/* The end of every reduction: the block sums its threads' NV accumulators by CUB
 * BlockReduce (fixed tree), thread 0 writes the block's partials
 * part[k * gridDim.x + block]; the last block to finish then sums the partials in a
 * fixed order (thread t: blocks t, t + 256, ... in order, then BlockReduce) and
 * writes the slots (or, when the guard fails, slots[guard_slot] = -1).  Every
 * block of the grid must call it (blocks with nothing to add pass zeros).
 * 256-thread blocks. */
/* The grand total of the block partials part[k gridDim.x + b], in the fixed order of
 * every reduction (thread t: blocks t, t + 256, ... in order, then BlockReduce);
 * valid in thread 0.  Partials of other blocks are read from L2 (sps_cu_ldcg). */
template <typename A, int NV>
__device__ accv<A, NV> sps_cu_sum_partials(const A *part,
                                           typename cub::BlockReduce<accv<A, NV>, SPS_CU_RED_THREADS>::TempStorage &tmp)
{
    const int nb = gridDim.x;
    accv<A, NV> acc;
#pragma unroll
    for (int k = 0; k < NV; k++) acc.v[k] = A();
    for (int b = threadIdx.x; b < nb; b += SPS_CU_RED_THREADS) {
#pragma unroll
        for (int k = 0; k < NV; k++) acc.v[k] += sps_cu_ldcg(&part[(size_t)k * nb + b]);
    }
    return cub::BlockReduce<accv<A, NV>, SPS_CU_RED_THREADS>(tmp).Reduce(acc, accv_sum<A, NV>());
}

/* The finishing block's last act when the fetch is armed: the slots, as written
 * (by its thread 0, or by other blocks before a grid barrier: read from L2), into
 * the mapped staging. */
__device__ inline void sps_cu_stage_slots(const sps_cu_outs &outs)
{
    if (!outs.stage_words) return; /* uniform */
    if (threadIdx.x == 0) __threadfence(); /* thread 0's slot stores reach L2 before the others' L2 loads */
    __syncthreads();
    for (int i = threadIdx.x; i < outs.stage_words; i += blockDim.x) outs.stage_dst[i] = __ldcg(outs.stage_src + i);
}

template <typename A, int NV, typename G>
__device__ void sps_cu_reduce_finish(accv<A, NV> acc, A *part, unsigned *counter, sps_cplx *slots, sps_cu_outs outs,
                                     G guard, int guard_slot)
{
    typedef cub::BlockReduce<accv<A, NV>, SPS_CU_RED_THREADS> BR;
    __shared__ typename BR::TempStorage tmp;
    accv<A, NV> tot = BR(tmp).Reduce(acc, accv_sum<A, NV>());
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < NV; k++) part[(size_t)k * gridDim.x + blockIdx.x] = tot.v[k];
    }
    if (!sps_cu_last_block(counter)) return;
    /* the finishing block; skip and fail are uniform */
    if (guard.skip(slots)) {
        /* nothing written */
    } else if (guard.fail(slots)) {
        if (threadIdx.x == 0) {
            slots[guard_slot] = acc_to_cplx(-1.0);
            guard.on_fail(slots);
        }
    } else {
        __syncthreads(); /* tmp reused */
        tot = sps_cu_sum_partials<A, NV>(part, tmp);
        if (threadIdx.x == 0) {
#pragma unroll
            for (int k = 0; k < NV; k++) sps_cu_store_out(slots, outs.slot[k], outs.kind[k], tot.v[k]);
            guard.on_done(slots, tot.v);
        }
    }
    sps_cu_stage_slots(outs);
}

/* Each thread accumulates op(i, acc) over its fixed grid-stride index set in
 * increasing order, then sps_cu_reduce_finish; sps_cu_reduce_kernel is this pass
 * as one launch. */
/* An op may come split in two, Op::vals v = op.load(i) and op.apply(i, v, acc) (a
 * step that writes vectors: the compiler cannot move the loads of index i + stride
 * above the stores of index i, so a plain op keeps one index's loads in flight);
 * the pass then loads sps_cu_red_unroll indices before it applies the first, in the
 * same order: the same bits as op(i, acc) one index at a time. */
constexpr int sps_cu_red_unroll = 4;
template <typename Op, typename = void> struct sps_cu_split_op {
    static constexpr bool value = false;
};
template <typename Op> struct sps_cu_split_op<Op, std::void_t<typename Op::vals>> {
    static constexpr bool value = true;
};
template <typename A, int NV, typename Op, typename G>
__device__ void sps_cu_reduce_pass(Op op, sps_index n, A *part, unsigned *counter, sps_cplx *slots, sps_cu_outs outs,
                                   G guard, int guard_slot)
{
    op.setup();
    accv<A, NV> acc;
#pragma unroll
    for (int k = 0; k < NV; k++) acc.v[k] = A();
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    const int64_t first = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if constexpr (sps_cu_split_op<Op>::value) {
        constexpr int U = sps_cu_red_unroll;
        for (int64_t i = first; i < n; i += U * stride) {
            typename Op::vals v[U];
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j * stride < n) v[j] = op.load((sps_index)(i + j * stride));
#pragma unroll
            for (int j = 0; j < U; j++)
                if (i + j * stride < n) op.apply((sps_index)(i + j * stride), v[j], acc.v);
        }
    } else {
        for (int64_t i = first; i < n; i += stride) op((sps_index)i, acc.v);
    }
    sps_cu_reduce_finish<A, NV>(acc, part, counter, slots, outs, guard, guard_slot);
}
template <typename A, int NV, typename Op, typename G>
__global__ void __launch_bounds__(SPS_CU_RED_THREADS)
    sps_cu_reduce_kernel(Op op, sps_index n, A *part, unsigned *counter, sps_cplx *slots, sps_cu_outs outs, G guard,
                         int guard_slot)
{
    sps_cu_reduce_pass<A, NV>(op, n, part, counter, slots, outs, guard, guard_slot);
}

/** outs with the armed fetch's staging filled in (when armed), for a launch that
 *  ends in sps_cu_reduce_finish; after that launch's SPS_CU_LAUNCHED, call
 *  sps_cu_armed_launched: the staging then holds the latest slots. */
static inline sps_cu_outs sps_cu_arm(sps_exec *ex, sps_cu_outs o)
{
    const sps_cuda_state *st = sps_cust(ex);
    o.stage_src = (const unsigned long long *)st->arm_src;
    o.stage_dst = st->arm_src ? sps_cu_staging_dev(st, st->arm_buf) : NULL;
    o.stage_words = st->arm_src ? st->arm_words : 0;
    return o;
}
static inline void sps_cu_armed_launched(sps_exec *ex)
{
    sps_cuda_state *st = sps_cust(ex);
    st->staged = st->arm_src != NULL;
    st->staged_buf = st->arm_buf;
}

/** Reduce op over [0, n) into NV accumulators of type A (double or cx<double>)
 *  and store them into slots per outs.  op.setup() runs once per thread, then
 *  op(i, A acc[NV]) for each of its indices (op may also write vectors: fused
 *  update + reduction; a guarded op writes nothing when its guard fails).  One
 *  launch; bit-reproducible for a given n. */
template <typename A, int NV, typename Op, typename G = sps_cu_no_guard>
static inline sps_status sps_cuda_reduce(sps_exec *ex, sps_index n, Op op, sps_cplx *slots, sps_cu_outs outs,
                                         G guard = G(), int guard_slot = 0)
{
    static_assert(NV <= SPS_CU_RED_MAX_VALUES && sizeof(A) <= 16, "reduction workspace too small");
    int nb = 1;
    SPS_CHECK(sps_cu_red_grid(ex, sps_cu_reduce_kernel<A, NV, Op, G>, n, &nb));
    A *part = (A *)sps_cuws_red(ex);
    sps_cu_reduce_kernel<A, NV, Op, G><<<nb, SPS_CU_RED_THREADS, 0, sps_custream(ex)>>>(
        op, n < 0 ? 0 : n, part, sps_cuws_counter(ex), slots, sps_cu_arm(ex, outs), guard, guard_slot);
    SPS_CU_LAUNCHED(ex, "reduction kernel");
    sps_cu_armed_launched(ex);
    return SPS_OK;
}

static inline sps_cu_outs sps_cu_outs2(int slot0, int kind0, int slot1, int kind1)
{
    sps_cu_outs o;
    for (int k = 0; k < SPS_CU_RED_MAX_VALUES; k++) { o.slot[k] = 0; o.kind[k] = SPS_CU_OUT_NONE; }
    o.stage_src = NULL;
    o.stage_dst = NULL;
    o.stage_words = 0;
    o.slot[0] = slot0;
    o.kind[0] = kind0;
    o.slot[1] = slot1;
    o.kind[1] = kind1;
    return o;
}
static inline sps_cu_outs sps_cu_outs1(int slot, int kind) { return sps_cu_outs2(slot, kind, 0, SPS_CU_OUT_NONE); }

/* ------------------------------------------------------------------ C entry points */
/* The suffix <-> type map used to stamp the extern "C" entry points. */
#define SPS_CU_TYPE_s float
#define SPS_CU_TYPE_d double
#define SPS_CU_TYPE_c cx<float>
#define SPS_CU_TYPE_z cx<double>
#define SPS_CU_FOR_ALL_TYPES(M) M(s, float) M(d, double) M(c, cx<float>) M(z, cx<double>)
/* The extern "C" entry point sps_cuda_<name>_<S> of a kernel family (the
 * declaration in kernels/format_kernels.h and kin), forwarding to its template impl: params is the
 * parenthesised parameter list, args the call's.  SPS_CU_SPMV_ENTRIES: a
 * format's SpMV and SpMV^T, which take the same arguments (P_spmv_impl<T>,
 * P_spmvt_impl<T>). */
#define SPS_CU_ENTRY(name, S, impl, params, args) \
    extern "C" sps_status sps_cuda_##name##_##S params { return impl args; }
#define SPS_CU_SPMV_ENTRIES(P, S, T, params, args) \
    SPS_CU_ENTRY(P##_spmv, S, P##_spmv_impl<T>, params, args) SPS_CU_ENTRY(P##_spmvt, S, P##_spmvt_impl<T>, params, args)

#endif
