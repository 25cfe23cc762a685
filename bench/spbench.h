/* spbench internals shared by spbench.cu (SpMV) and spbench_solver.cu (solvers):
 * error checking, RAII handles, precision traits, the host CSR copy, the one
 * timing helper, the host reference and the one verification helper.
 * See spbench.cu for the traffic model and bench/README.md for usage. */
#ifndef SPBENCH_H
#define SPBENCH_H

#include "gen.h"
#include "spbench_table.h"
#include "spsolve/spsolve.h"
#include "kernels/launch.h"

/* internal (formats/format.h): the launch variant of a matrix's products */
extern "C" sps_status sps_matrix_set_launch_variant(sps_matrix A, const sps_launch_variant *v);

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

/* ------------------------------------------------------------------ errors */
/* Every failure becomes an exception carrying what failed and where; the
 * driver records it in the result row and goes on with the next kernel. */
struct BenchError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
/* The library reported SPS_ERR_UNSUPPORTED: a row marked "unsupported", not a failure. */
struct Unsupported : BenchError {
    using BenchError::BenchError;
};
/* The device is unusable (sticky CUDA error): stop, write what we have. */
struct DeviceLost : BenchError {
    using BenchError::BenchError;
};

std::string strprintf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

[[noreturn]] void throw_cuda(cudaError_t e, const char *what, const char *file, int line);
[[noreturn]] void throw_cusparse(cusparseStatus_t s, const char *what, const char *file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t s, const char *what, const char *file, int line);
[[noreturn]] void throw_sps(sps_context ctx, sps_status s, const char *what, const char *file, int line);

#define CK_CUDA(call)                                                       \
    do {                                                                    \
        cudaError_t ck_e_ = (call);                                         \
        if (ck_e_ != cudaSuccess) throw_cuda(ck_e_, #call, __FILE__, __LINE__); \
    } while (0)
#define CK_SPARSE(call)                                                     \
    do {                                                                    \
        cusparseStatus_t ck_s_ = (call);                                    \
        if (ck_s_ != CUSPARSE_STATUS_SUCCESS) throw_cusparse(ck_s_, #call, __FILE__, __LINE__); \
    } while (0)
#define CK_BLAS(call)                                                       \
    do {                                                                    \
        cublasStatus_t ck_b_ = (call);                                      \
        if (ck_b_ != CUBLAS_STATUS_SUCCESS) throw_cublas(ck_b_, #call, __FILE__, __LINE__); \
    } while (0)
#define CK_SPS(ctx, call)                                                   \
    do {                                                                    \
        sps_status ck_p_ = (call);                                          \
        if (ck_p_ != SPS_OK) throw_sps((ctx), ck_p_, #call, __FILE__, __LINE__); \
    } while (0)

/* After a failure: a sticky CUDA error (illegal address, launch failure) leaves
 * the context unusable; turn it into DeviceLost so the run stops cleanly. */
void check_device_alive(void);

/* ------------------------------------------------------------------ RAII */
struct DevBuf { /* device memory, freed on scope exit */
    void *p = nullptr;
    size_t bytes = 0;
    DevBuf() = default;
    explicit DevBuf(size_t n);
    DevBuf(const void *host, size_t n); /* allocate and upload */
    ~DevBuf();
    DevBuf(const DevBuf &) = delete;
    DevBuf &operator=(const DevBuf &) = delete;
    DevBuf(DevBuf &&o) noexcept : p(o.p), bytes(o.bytes) { o.p = nullptr, o.bytes = 0; }
    DevBuf &operator=(DevBuf &&o) noexcept
    {
        std::swap(p, o.p);
        std::swap(bytes, o.bytes);
        return *this;
    }
    template <class T> T *as() const { return static_cast<T *>(p); }
};

template <class H, void (*Destroy)(H)> struct Handle { /* an opaque library handle */
    H h = nullptr;
    Handle() = default;
    ~Handle() { reset(); }
    Handle(const Handle &) = delete;
    Handle &operator=(const Handle &) = delete;
    void reset()
    {
        if (h) Destroy(h);
        h = nullptr;
    }
    H *out() { reset(); return &h; }
    operator H() const { return h; }
};
inline void destroy_spmat(cusparseSpMatDescr_t d) { cusparseDestroySpMat(d); }
inline void destroy_dnvec(cusparseDnVecDescr_t d) { cusparseDestroyDnVec(d); }
using SpsMatrix = Handle<sps_matrix, sps_matrix_destroy>;
using SpsVector = Handle<sps_vector, sps_vector_destroy>;
using SpsOperator = Handle<sps_operator, sps_operator_destroy>;
using SpsOptions = Handle<sps_options, sps_options_destroy>;
using SpMat = Handle<cusparseSpMatDescr_t, destroy_spmat>;
using DnVec = Handle<cusparseDnVecDescr_t, destroy_dnvec>;

/* ------------------------------------------------------------------ precision traits */
template <class T> struct Prec;
template <> struct Prec<float> {
    static constexpr sps_scalar sps = SPS_F32;
    static constexpr cudaDataType cuda = CUDA_R_32F;
    static constexpr const char *name = "f32";
    static constexpr double unit_roundoff = 5.9604644775390625e-08; /* 2^-24 */
};
template <> struct Prec<double> {
    static constexpr sps_scalar sps = SPS_F64;
    static constexpr cudaDataType cuda = CUDA_R_64F;
    static constexpr const char *name = "f64";
    static constexpr double unit_roundoff = 1.1102230246251565e-16; /* 2^-53 */
};

/* ------------------------------------------------------------------ run-wide state */
struct Options {
    bool quick = false;
    std::string matrices_dir;           /* --matrices: *.mtx / *.mtx.gz found recursively */
    std::string out_dir = "bench/results";
    bool f32 = true, f64 = true;        /* --precision */
    int reps = 50, warmup = 5;          /* timed runs (median), untimed runs before them */
    bool spmv = true, solver = true;    /* --mode */
    bool add = false;                   /* --mode add (not in all): spbench_add.cu */
    std::vector<std::string> only;      /* --only: matrix names (shell patterns) */
    std::vector<std::string> formats = {"csr", "coo"}; /* our formats (--formats; "all" = sps_format_list()) */
    int convert_reps = 10;              /* timed builds per format conversion (median) */
    bool flush_l2 = true;               /* --no-flush (--flush none) turns it off */
    bool flush_write = false;           /* --flush write: the memset flush (runs before 2026-11-25) */
    int maxit = 200, restart = 30;      /* solver mode */
    int device = 0;
    int timeout_s = 600;                /* watchdog per step; 0 = off */
    sps_launch_variant variant = {};    /* --variant key=value,...: every format matrix's (kernels/launch.h) */
    /* the compound suite (spbench_compound.cu) */
    bool suite_scalar = true, suite_compound = false; /* --suite scalar|compound|all */
    std::vector<std::string> compound_gen;   /* --compound-gen: generator specs (empty: the defaults) */
    std::vector<std::string> compound_mtx;   /* --compound-mtx: Matrix Market files */
    int compound_mtx_block = 0;              /* --compound-mtx-block B: scalar files read as B x B blocks */
    int compound_cg = 0;                     /* --compound-cg: also time CG on each compound matrix */
    std::vector<std::string> compound_specs; /* --compound-specs: our candidates (empty: the defaults) */
    bool host_check = false;                 /* --host-check: the compound suite's host-side checks, no GPU */
};

/* Evicts the L2 cache before each timed run.  Default ("read"): a kernel reads a
 * buffer twice the L2's size, so that every line the previous run left in L2 --
 * the dirty lines of its y above all -- is evicted (written back) during the
 * flush, and the timed run starts on an L2 of clean lines it does not use.
 * "write" (a memset of the buffer, as nvbench flushes): it leaves about an L2's
 * worth of dirty lines, which the timed kernel then writes back to DRAM as it
 * evicts them -- traffic of the flush charged to the kernel under test. */
struct L2Flush {
    DevBuf buf;
    DevBuf sink;   /* the read kernel's one output word (never equal to its test value) */
    bool write = false;
    void run(cudaStream_t s) const;
};

struct Bench {
    Options opt;
    cudaDeviceProp prop{};
    sps_context ctx = nullptr;         /* CUDA context of libspsolve */
    cudaStream_t lib_stream = nullptr; /* sps_context_cuda_stream(ctx) */
    cudaStream_t cu_stream = nullptr;  /* cuSPARSE / cuBLAS stream */
    cusparseHandle_t sparse = nullptr;
    cublasHandle_t blas = nullptr;
    L2Flush flush;
    double copy_gbs = 0;               /* device-to-device copy, bytes read + written */
    sb_table *spmv_rows = nullptr, *solver_rows = nullptr;
    sb_table *convert_rows = nullptr;  /* GPU format conversion (CSR on the device -> format) */
    sb_table *add_rows = nullptr;      /* --mode add (spbench_add.cu) */
    sb_table *compound_rows = nullptr, *compound_summary = nullptr; /* the compound suite */
    int failures = 0;                  /* failed checks and errors: exit status 1 */
    std::vector<std::string> notes;    /* what failed or was skipped, and why (report's Notes) */
    std::string tune_choice;           /* the last "tuned" build: its choice and the tuner's times */
    const L2Flush *flush_or_null() const { return opt.flush_l2 ? &flush : nullptr; }
};

/* Watchdog: abort the process (status 3, with the step named) when one step
 * runs longer than --timeout seconds, e.g. a hung kernel. */
void watchdog_arm(const Bench &b, const std::string &step);
void watchdog_disarm(void);

/* ------------------------------------------------------------------ host CSR copy */
/* The exact arrays the library holds (sps_matrix_export_csr), for the host
 * reference and for building cuSPARSE's copies: same data, same process. */
template <class T> struct HostCsr {
    int32_t n = 0, m = 0;
    int64_t nnz = 0;
    std::vector<int32_t> rowptr, col;
    std::vector<T> val;
    /* bytes of the CSR arrays: the matrix term of the traffic model */
    double bytes() const { return 4.0 * (n + 1) + (4.0 + sizeof(T)) * (double)nnz; }
};

template <class T> HostCsr<T> export_csr(sps_context ctx, sps_matrix A)
{
    sps_matrix_info_t info;
    CK_SPS(ctx, sps_matrix_info(A, &info));
    HostCsr<T> c;
    c.n = info.rows, c.m = info.cols, c.nnz = info.nnz;
    c.rowptr.resize((size_t)c.n + 1);
    c.col.resize((size_t)c.nnz);
    c.val.resize((size_t)c.nnz);
    CK_SPS(ctx, sps_matrix_export_csr(A, c.rowptr.data(), c.col.data(), c.val.data()));
    if (c.rowptr[0] != 0 || c.rowptr[(size_t)c.n] != c.nnz)
        throw BenchError(strprintf("exported CSR is inconsistent: rowptr[0] = %d, rowptr[n] = %d, nnz = %lld",
                                   c.rowptr[0], c.rowptr[(size_t)c.n], (long long)c.nnz));
    return c;
}

/* Fresh random vector, entries uniform in [-1, 1] (never zeros: they hide bugs). */
template <class T> std::vector<T> random_vector(size_t n, uint64_t seed)
{
    std::vector<T> v(n);
    for (size_t i = 0; i < n; i++) v[i] = (T)(2.0 * gen_uniform(seed, i) - 1.0);
    return v;
}

uint64_t name_seed(const std::string &s); /* a seed from a string (FNV-1a) */

/* ------------------------------------------------------------------ timing */
/* The one timing helper: `warmup` untimed calls of launch(), then `reps` calls,
 * each between two CUDA events recorded on `stream` (the stream launch() queues
 * its work on), the L2 cache flushed before each when flush != NULL (outside the
 * events).  Returns the median in milliseconds. */
template <class Launch>
double time_median(cudaStream_t stream, int warmup, int reps, const L2Flush *flush, Launch &&launch)
{
    struct Events {
        std::vector<cudaEvent_t> ev;
        ~Events()
        {
            for (cudaEvent_t e : ev) cudaEventDestroy(e);
        }
    } e;
    for (int i = 0; i < warmup; i++) launch();
    e.ev.reserve(2 * (size_t)reps);
    for (int i = 0; i < 2 * reps; i++) {
        cudaEvent_t ev;
        CK_CUDA(cudaEventCreate(&ev));
        e.ev.push_back(ev);
    }
    for (int i = 0; i < reps; i++) {
        if (flush) flush->run(stream);
        CK_CUDA(cudaEventRecord(e.ev[2 * (size_t)i], stream));
        launch();
        CK_CUDA(cudaEventRecord(e.ev[2 * (size_t)i + 1], stream));
    }
    CK_CUDA(cudaEventSynchronize(e.ev.back()));
    std::vector<double> t((size_t)reps);
    for (int i = 0; i < reps; i++) {
        float ms = 0;
        CK_CUDA(cudaEventElapsedTime(&ms, e.ev[2 * (size_t)i], e.ev[2 * (size_t)i + 1]));
        t[(size_t)i] = ms;
    }
    std::sort(t.begin(), t.end());
    return reps % 2 ? t[(size_t)reps / 2] : 0.5 * (t[(size_t)reps / 2 - 1] + t[(size_t)reps / 2]);
}

/* ------------------------------------------------------------------ reference and verification */
/* y = op(A) x in double from the stored values, with what the error bound needs:
 * mag_i = sum_j |a_ij x_j| and len_i = terms in y_i. */
struct Reference {
    std::vector<double> y, mag;
    std::vector<int32_t> len;
};

template <class T> Reference reference_spmv(const HostCsr<T> &A, const std::vector<T> &x, bool transpose)
{
    Reference r;
    const size_t ny = transpose ? (size_t)A.m : (size_t)A.n;
    r.y.assign(ny, 0.0), r.mag.assign(ny, 0.0), r.len.assign(ny, 0);
    for (int32_t i = 0; i < A.n; i++)
        for (int64_t k = A.rowptr[(size_t)i]; k < A.rowptr[(size_t)i + 1]; k++) {
            const int32_t j = A.col[(size_t)k];
            const size_t out = transpose ? (size_t)j : (size_t)i, in = transpose ? (size_t)i : (size_t)j;
            const double p = (double)A.val[(size_t)k] * (double)x[in];
            r.y[out] += p, r.mag[out] += std::fabs(p), r.len[out]++;
        }
    return r;
}

struct Check {
    bool ok = false;
    double ratio = NAN;   /* max over i of |y_i - ref_i| / ((len_i + 2) u mag_i) */
    std::string why;      /* first offending entry when !ok */
};

/* The one verification helper.  Any summation order of len products in a
 * precision of unit roundoff u, rounded once more on output, is within
 * (len + 1) u (1 + O(len u)) mag of the exact sum (Higham, Accuracy and Stability
 * of Numerical Algorithms, 2nd ed., eq. 3.5), so the test |err_i| <= 2 (len_i + 2) u mag_i
 * holds for every correct kernel (atomics included) and fails on a wrong or
 * unwritten entry (y is poisoned with huge finite values before the run). */
template <class T> Check verify(const std::vector<T> &y, const Reference &ref)
{
    const double u = Prec<T>::unit_roundoff, limit = 2.0;
    Check c;
    c.ratio = 0;
    for (size_t i = 0; i < ref.y.size(); i++) {
        const double err = std::fabs((double)y[i] - ref.y[i]);
        const double scale = (ref.len[i] + 2) * u * ref.mag[i];
        const double ratio = err == 0 ? 0.0 : err / scale; /* scale 0: y must be exactly 0 */
        if (!(ratio <= limit)) { /* NaN fails too */
            c.ratio = std::isnan(ratio) ? NAN : std::max(c.ratio, ratio);
            c.why = strprintf("y[%zu] = %.17g, reference %.17g: error %.3g (len + 2) u sum|a x| with len = %d, "
                              "limit %g",
                              i, (double)y[i], ref.y[i], ratio, ref.len[i], limit);
            return c;
        }
        c.ratio = std::max(c.ratio, ratio);
    }
    c.ok = true;
    return c;
}

/* ------------------------------------------------------------------ SpMV measurement (spbench.cu) */
/* One row of the SpMV table (and of the compound table, spbench_compound.cu). */
struct KernelResult {
    std::string kernel;  /* "ours:csr", "cusparse:csr-alg1", ... */
    char op = 'N';
    bool cusparse = false;
    std::string status = "error", detail;
    double ms = NAN, ratio = NAN, fmt_bytes = NAN;
    double speedup = NAN;
    bool build_row = false; /* the format's build failed or refused: its conversion row carries the note */
};

/* One format conversion (CSR on the device -> format) of a matrix and precision. */
struct ConvertResult {
    std::string format;
    std::string status = "not run", detail; /* ok, refused, unsupported, error, not timed, not run */
    double ms = NAN;                        /* median wall time of one build */
    double fill_percent = NAN, fmt_bytes = NAN;
};

/* Run f(); a library or CUDA failure becomes status "unsupported" (the library or
 * cuSPARSE says so: not a failure) or "error" (counted), with the message in
 * detail.  A lost device propagates.  Returns whether f() returned normally. */
template <class F> bool guarded(Bench &b, std::string &status, std::string &detail, F &&f)
{
    try {
        f();
        return true;
    } catch (const DeviceLost &) {
        throw;
    } catch (const Unsupported &e) {
        status = "unsupported";
        detail = e.what();
    } catch (const BenchError &e) {
        status = "error";
        detail = e.what();
        b.failures++;
        check_device_alive();
    }
    return false;
}

/* Set up (format build, descriptors: untimed), check once on a poisoned y, time,
 * check the last timed output again.  launch() queues one y = op(A) x on `stream`;
 * both throw on failure, which lands in r.status. */
template <class T, class Setup, class Launch>
void measure(Bench &b, cudaStream_t stream, T *y_dev, const Reference &ref, KernelResult &r, Setup &&setup,
             Launch &&launch)
{
    r.detail.clear();
    guarded(b, r.status, r.detail, [&] {
        CK_CUDA(cudaDeviceSynchronize()); /* ours and theirs never overlap */
        setup();
        const size_t ny = ref.y.size();
        std::vector<T> y(ny);
        auto fetch = [&] {
            CK_CUDA(cudaMemcpyAsync(y.data(), y_dev, ny * sizeof(T), cudaMemcpyDeviceToHost, stream));
            CK_CUDA(cudaStreamSynchronize(stream));
        };
        /* 0x7F bytes: 3.4e38 in f32, 1.4e306 in f64 — finite, so beta = 0 cannot hide
           an unwritten entry behind 0 * NaN, and any unwritten entry fails the check */
        CK_CUDA(cudaMemsetAsync(y_dev, 0x7F, ny * sizeof(T), stream));
        launch();
        fetch();
        Check c = verify(y, ref);
        r.ratio = c.ratio;
        if (!c.ok) {
            r.status = "FAIL";
            r.detail = "check: " + c.why;
            b.failures++;
            return;
        }
        r.ms = time_median(stream, b.opt.warmup, b.opt.reps, b.flush_or_null(), launch);
        fetch();
        c = verify(y, ref);
        if (!c.ok) { /* right once, wrong later: a race or a read of unwritten memory */
            r.status = "FAIL";
            r.detail = "check after timing: " + c.why;
            r.ms = NAN;
            b.failures++;
            return;
        }
        r.ratio = std::max(r.ratio, c.ratio);
        r.status = "ok";
    });
}

/* cuSPARSE's copies of the CSR arrays, and the COO row indices (COO shares
 * col and val with CSR).  SELL is built per kernel run (it can be large). */
struct CuMatrix {
    DevBuf rowptr, col, val, coo_row;
    int block = 0;    /* CuFormat::BSR: rowptr, col and val are block arrays of block x block blocks, */
    int64_t bnnz = 0; /* row-major, bnnz of them (the compound suite builds them) */
};
template <class T> void upload_cusparse(const HostCsr<T> &A, CuMatrix &d);

/* One solver run of solver mode (spbench_solver.cu) and of the compound suite's CG. */
struct SolverRun {
    std::string solver, impl, reason, detail;
    int iterations = 0;
    double ms_per_iter = NAN, relres = NAN;
    bool failed = false; /* an error, not a solver outcome */
};
/* A row of the solver table (solver_table_new's columns; ratio: its textbook/ours column). */
void solver_table_add(Bench &b, const std::string &name, int32_t n, int64_t nnz, const char *prec, const SolverRun &r,
                      double floor_ms, double ratio);
/* The textbook CG (cuSPARSE SpMV + cuBLAS) on A's CSR, or on bsr's blocks when given
 * (A: the same operator's scalar form, for the residual check); b.opt.maxit iterations,
 * rtol 0, the median of 3 solves' time an iteration. */
template <class T>
void run_textbook_cg(Bench &b, const HostCsr<T> &A, const std::vector<T> &bh, SolverRun &r, const CuMatrix *bsr);
#ifdef SPBENCH_HAVE_SOLVERS
/* libspsolve's solver of the given type on matrix A the same way (csr: A's scalar form). */
template <class T>
void run_library(Bench &b, sps_solver_type type, sps_matrix A, const HostCsr<T> &csr, const std::vector<T> &bh,
                 SolverRun &r);
#endif

/* cuSPARSE's SpMV kernels of the scalar table: kCuKernels[0 .. kNumCuKernels). */
enum class CuFormat { CSR, COO, SELL, BSR };
struct CuKernel {
    const char *name;
    CuFormat format;
    cusparseOperation_t op;
    cusparseSpMVAlg_t alg;
};
extern const CuKernel kCuKernels[];
extern const size_t kNumCuKernels;
/* One cuSPARSE kernel on A's copies d: set up, check, time (measure) into r. */
template <class T>
void run_cusparse_kernel(Bench &b, const CuKernel &k, const HostCsr<T> &A, const CuMatrix &d, const DevBuf &x,
                         const DevBuf &y, const Reference &ref, KernelResult &r);
/* Build `name` from A (a --formats entry or a sps_matrix_convert_spec spec) into out;
 * false with the library's message in why when the format refuses A (max_fill). */
bool build_format(Bench &b, sps_matrix A, const std::string &name, SpsMatrix &out, std::string &why);
/* Our format `name` built from A, y = op(A) x for ops N (and T when nops = 2) into
 * r[0..nops), the build into cr (NULL: A itself), builds timed when time_builds. */
template <class T>
void run_ours(Bench &b, sps_matrix A, const std::string &name, const SpsVector *vx, const SpsVector *vy,
              const Reference *ref, KernelResult *r, ConvertResult *cr, int nops, bool time_builds);
void table_add(sb_table *t, const std::string *cells, int n);

/* ------------------------------------------------------------------ formatting */
std::string fmt_num(double v, int digits); /* "%.*g", empty for NaN */
std::string fmt_fixed(double v, int decimals);

/* ------------------------------------------------------------------ solver mode (spbench_solver.cu) */
/* CG, BiCGSTAB, GMRES of libspsolve and a textbook CG on A; rows go to b.solver_rows.
 * Instantiated for float and double in spbench_solver.cu. */
template <class T> void bench_solvers(Bench &b, const std::string &name, sps_matrix A, const HostCsr<T> &csr);
sb_table *solver_table_new(void);
int solver_mode_available(void); /* 0 when the library was built without solvers */

/* ------------------------------------------------------------------ addition mode (spbench_add.cu) */
/* C = alpha op(A) + beta op(B), B a perturbed copy of A: ours against cuSPARSE's csrgeam2;
 * rows go to b.add_rows. */
template <class T> void bench_add(Bench &b, const std::string &name, sps_matrix A, const HostCsr<T> &csr);
sb_table *add_table_new(void);

/* ------------------------------------------------------------------ compound suite (spbench_compound.cu) */
bool selected(const Options &o, const std::string &name); /* --only */
/* f(0) for f32, f(1) for f64 as --precision selects, each under the watchdog: an
 * Unsupported is a skip note, another BenchError an error note and a failure; a
 * lost device propagates. */
void each_precision(Bench &b, const std::string &name, const std::function<void(int)> &f);
void matrix_failed(Bench &b, const std::string &name, const BenchError &e); /* noted, counted */
std::vector<std::string> compound_names(const Options &o); /* throws BenchError on a bad --compound-gen */
sb_table *compound_table_new(void);
sb_table *compound_summary_new(void);
void bench_compound(Bench &b);           /* every selected compound matrix and precision */
int host_check_compound(Bench &b);       /* --host-check: exit status */
void compound_report_md(FILE *f, const Bench &b);

#endif
