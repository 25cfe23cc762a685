/* spbench solver mode: time per iteration of libspsolve's CG, BiCGSTAB and
 * GMRES(m) on a CUDA context, against a textbook CG and against the traffic floor.
 *
 * Every solve runs a fixed number of iterations: rtol = atol = 0, maxit = --maxit
 * (200), x0 = 0, b random in [-1, 1] (the same b for every implementation).  One
 * short warm-up solve, then the median of 3 solves of (wall time - the solver's
 * own time_setup) / iterations, the host clock read after sps_context_synchronize.
 *
 * The textbook CG (Saad, Iterative Methods for Sparse Linear Systems, 2nd ed.,
 * Alg. 6.18) is what a user writes from the CUDA samples: cusparseSpMV (CSR ALG1)
 * and cuBLAS level-1 calls with host-side scalars (pointer mode host), so every
 * dot product returns to the host.  It times the same loop on the same stream
 * with the host clock.
 *
 * Traffic floor per iteration, in values of sizeof(T) bytes ("matrix" = the CSR
 * arrays, as in spbench.cu), for the fewest passes a fused implementation needs:
 *   CG        matrix + 10n: q = A p (matrix + 2n; p.q in the SpMV epilogue from the
 *             p_i it has read), r -= alpha q with r.r (3n), then x += alpha p fused
 *             with p = r + beta p (5n: read x, p, r; write x, p).
 *   BiCGSTAB  2 matrix + 20n: v = A p with rh.v (matrix + 3n), s = r - alpha v (3n),
 *             t = A s with t.s and t.t (matrix + 3n), x += alpha p + omega s and
 *             r = s - omega t with rh.r (7n: read x, p, s, t, rh; write x, r),
 *             p = r + beta (p - omega v) (4n).
 *   GMRES(m)  with k basis vectors: w = A v_k (matrix + 2n), classical Gram-Schmidt
 *             h = V^T w (kn + n) and w -= V h (kn + 2n), v_{k+1} = w / ||w|| with the
 *             norm fused into the previous pass (2n): matrix + (2k + 7)n, averaged
 *             over the iterations run with k = 1 + (iteration mod m).
 * floor time = floor bytes / measured copy bandwidth. */
#include "spbench.h"

#include <chrono>
#include <cstdio>

int solver_mode_available(void)
{
#ifdef SPBENCH_HAVE_SOLVERS
    return 1;
#else
    return 0;
#endif
}

sb_table *solver_table_new(void)
{
    static const char *head[] = {"matrix", "rows",    "nnz",          "precision", "solver",        "impl", "iterations",
                                 "reason", "ms/iter", "floor_ms/iter", "x_floor",   "textbook/ours", "relres"};
    return sb_table_new(13, head, "lrrlllrlrrrrr");
}

void solver_table_add(Bench &b, const std::string &name, int32_t n, int64_t nnz, const char *prec, const SolverRun &r,
                      double floor_ms, double ratio)
{
    const std::string cells[13] = {name,
                                   strprintf("%d", n),
                                   strprintf("%lld", (long long)nnz),
                                   prec,
                                   r.solver,
                                   r.impl,
                                   strprintf("%d", r.iterations),
                                   r.reason,
                                   fmt_num(r.ms_per_iter, 4),
                                   fmt_num(floor_ms, 4),
                                   fmt_fixed(r.ms_per_iter / floor_ms, 2),
                                   fmt_fixed(ratio, 2),
                                   fmt_num(r.relres, 3)};
    const char *row[13];
    for (int c = 0; c < 13; c++) row[c] = cells[c].c_str();
    if (sb_table_add(b.solver_rows, row) != 0) throw BenchError("out of memory for the result table");
}

static double now_s(void)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static double median(std::vector<double> v)
{
    if (v.empty()) return NAN;
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

/* ||b - A x|| / ||b|| in double on the host: an independent check of each solve. */
template <class T> static double host_relres(const HostCsr<T> &A, const std::vector<T> &b, const std::vector<T> &x)
{
    double rr = 0, bb = 0;
    for (int32_t i = 0; i < A.n; i++) {
        double s = (double)b[(size_t)i];
        for (int64_t k = A.rowptr[(size_t)i]; k < A.rowptr[(size_t)i + 1]; k++)
            s -= (double)A.val[(size_t)k] * (double)x[(size_t)A.col[(size_t)k]];
        rr += s * s, bb += (double)b[(size_t)i] * (double)b[(size_t)i];
    }
    return bb > 0 ? std::sqrt(rr / bb) : std::sqrt(rr);
}

/* The floors of the header comment, in bytes per iteration. */
static double floor_bytes(const std::string &solver, double matrix, double n, double s, int iterations, int restart)
{
    if (solver == "cg") return matrix + 10 * n * s;
    if (solver == "bicgstab") return 2 * matrix + 20 * n * s;
    if (iterations <= 0) return NAN;
    double sum = 0; /* gmres */
    for (int it = 0; it < iterations; it++) sum += matrix + (2.0 * (1 + it % restart) + 7) * n * s;
    return sum / iterations;
}


/* ------------------------------------------------------------------ libspsolve */
#ifdef SPBENCH_HAVE_SOLVERS
using SpsSolver = Handle<sps_solver, sps_solver_destroy>;

template <class T>
void run_library(Bench &b, sps_solver_type type, sps_matrix A, const HostCsr<T> &csr, const std::vector<T> &bh,
                 SolverRun &r)
{
    sps_context ctx = b.ctx;
    SpsOperator op;
    SpsSolver s;
    SpsVector vb, vx;
    CK_SPS(ctx, sps_operator_from_matrix(A, op.out()));
    CK_SPS(ctx, sps_solver_create(ctx, type, s.out()));
    CK_SPS(ctx, sps_solver_set_operator(s, op));
    CK_SPS(ctx, sps_solver_set_restart(s, b.opt.restart)); /* GMRES only; the others ignore it */
    CK_SPS(ctx, sps_vector_from_host(ctx, csr.n, Prec<T>::sps, bh.data(), vb.out()));
    CK_SPS(ctx, sps_vector_create(ctx, csr.n, Prec<T>::sps, vx.out()));
    sps_result res{};
    auto solve = [&](int maxit) {
        const T zero = 0;
        CK_SPS(ctx, sps_solver_set_tolerances(s, 0.0, 0.0, maxit));
        CK_SPS(ctx, sps_vector_fill(vx, &zero)); /* x0 = 0 */
        CK_SPS(ctx, sps_context_synchronize(ctx));
        const double t0 = now_s();
        const sps_status st = sps_solver_solve(s, vb, vx, &res);
        CK_SPS(ctx, sps_context_synchronize(ctx));
        const double t = now_s() - t0 - res.time_setup;
        /* with rtol = 0 the normal end is maxit (SPS_ERR_NOT_CONVERGED); a breakdown or
           NaN is an outcome to report, anything else an error */
        if (st != SPS_OK && st != SPS_ERR_NOT_CONVERGED && st != SPS_ERR_BREAKDOWN && st != SPS_ERR_NUMERIC)
            throw_sps(ctx, st, "sps_solver_solve", __FILE__, __LINE__);
        sps_context_clear_error(ctx);
        return t;
    };
    solve(std::min(b.opt.maxit, 10)); /* warm-up: workspace, first launches */
    std::vector<double> per_iter;
    for (int rep = 0; rep < 3; rep++) {
        const double t = solve(b.opt.maxit);
        if (res.iterations > 0) per_iter.push_back(1e3 * t / res.iterations);
    }
    r.iterations = res.iterations;
    r.reason = sps_reason_name(res.reason);
    r.ms_per_iter = median(per_iter);
    std::vector<T> xh((size_t)csr.n);
    CK_SPS(ctx, sps_vector_get(vx, xh.data()));
    r.relres = host_relres(csr, bh, xh);
}
#endif

/* ------------------------------------------------------------------ textbook CG */
template <class T> struct Blas;
template <> struct Blas<float> {
    static cublasStatus_t dot(cublasHandle_t h, int n, const float *x, const float *y, float *r)
    {
        return cublasSdot(h, n, x, 1, y, 1, r);
    }
    static cublasStatus_t nrm2(cublasHandle_t h, int n, const float *x, float *r) { return cublasSnrm2(h, n, x, 1, r); }
    static cublasStatus_t axpy(cublasHandle_t h, int n, float a, const float *x, float *y)
    {
        return cublasSaxpy(h, n, &a, x, 1, y, 1);
    }
    static cublasStatus_t scal(cublasHandle_t h, int n, float a, float *x) { return cublasSscal(h, n, &a, x, 1); }
};
template <> struct Blas<double> {
    static cublasStatus_t dot(cublasHandle_t h, int n, const double *x, const double *y, double *r)
    {
        return cublasDdot(h, n, x, 1, y, 1, r);
    }
    static cublasStatus_t nrm2(cublasHandle_t h, int n, const double *x, double *r)
    {
        return cublasDnrm2(h, n, x, 1, r);
    }
    static cublasStatus_t axpy(cublasHandle_t h, int n, double a, const double *x, double *y)
    {
        return cublasDaxpy(h, n, &a, x, 1, y, 1);
    }
    static cublasStatus_t scal(cublasHandle_t h, int n, double a, double *x) { return cublasDscal(h, n, &a, x, 1); }
};

template <class T>
void run_textbook_cg(Bench &b, const HostCsr<T> &A, const std::vector<T> &bh, SolverRun &r, const CuMatrix *bsr)
{
    using B = Blas<T>;
    const int n = A.n;
    const size_t vbytes = (size_t)n * sizeof(T);
    const cudaDataType dt = Prec<T>::cuda;
    cudaStream_t st = b.cu_stream;
    cublasHandle_t h = b.blas;
    const DevBuf rowptr(A.rowptr.data(), A.rowptr.size() * sizeof(int32_t)),
        col(A.col.data(), A.col.size() * sizeof(int32_t)), val(A.val.data(), A.val.size() * sizeof(T)),
        db(bh.data(), vbytes);
    DevBuf dx(vbytes), dr(vbytes), dp(vbytes), dq(vbytes);
    T *x = dx.as<T>(), *rv = dr.as<T>(), *p = dp.as<T>(), *q = dq.as<T>();
    SpMat mat;
    DnVec vp, vq;
    /* bsr: its blocks instead of A's CSR (A: the scalar expansion, for the residual check) */
    const cusparseSpMVAlg_t alg = bsr ? CUSPARSE_SPMV_BSR_ALG1 : CUSPARSE_SPMV_CSR_ALG1;
    if (bsr)
        CK_SPARSE(cusparseCreateBsr(mat.out(), A.n / bsr->block, A.m / bsr->block, bsr->bnnz, bsr->block, bsr->block,
                                    bsr->rowptr.p, bsr->col.p, bsr->val.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                    CUSPARSE_INDEX_BASE_ZERO, dt, CUSPARSE_ORDER_ROW));
    else
        CK_SPARSE(cusparseCreateCsr(mat.out(), A.n, A.m, A.nnz, rowptr.p, col.p, val.p, CUSPARSE_INDEX_32I,
                                    CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
    CK_SPARSE(cusparseCreateDnVec(vp.out(), n, p, dt));
    CK_SPARSE(cusparseCreateDnVec(vq.out(), n, q, dt));
    const T one = 1, zero = 0;
    size_t wbytes = 0;
    CK_SPARSE(cusparseSpMV_bufferSize(b.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vp, &zero, vq, dt, alg,
                                      &wbytes));
    DevBuf work(wbytes);

    auto cg = [&](int maxit) {
        CK_CUDA(cudaMemsetAsync(x, 0, vbytes, st));                                        /* x = 0 */
        CK_CUDA(cudaMemcpyAsync(rv, db.p, vbytes, cudaMemcpyDeviceToDevice, st));          /* r = b - A x = b */
        CK_CUDA(cudaMemcpyAsync(p, db.p, vbytes, cudaMemcpyDeviceToDevice, st));           /* p = r */
        T bnorm, rho;
        CK_BLAS(B::nrm2(h, n, db.as<T>(), &bnorm));                                        /* ||b|| */
        CK_BLAS(B::dot(h, n, rv, rv, &rho));                                               /* rho = r.r */
        const T tol = (T)0 * bnorm;                                                        /* rtol = 0 */
        CK_CUDA(cudaStreamSynchronize(st));
        const double t0 = now_s();
        r.iterations = 0;
        r.reason = "maxit";
        for (int k = 0; k < maxit; k++) {
            if (std::sqrt(rho) <= tol) { r.reason = "converged"; break; }                  /* ||r|| <= rtol ||b|| */
            CK_SPARSE(cusparseSpMV(b.sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, vp, &zero, vq, dt, alg,
                                   work.p));                                                /* q = A p */
            T pq;
            CK_BLAS(B::dot(h, n, p, q, &pq));                                              /* p.q */
            if (!(pq > 0)) { r.reason = "indefinite"; break; }                             /* p'Ap <= 0 */
            const T alpha = rho / pq;
            CK_BLAS(B::axpy(h, n, alpha, p, x));                                           /* x += alpha p */
            CK_BLAS(B::axpy(h, n, -alpha, q, rv));                                         /* r -= alpha q */
            T rho_new;
            CK_BLAS(B::dot(h, n, rv, rv, &rho_new));                                       /* rho' = r.r */
            CK_BLAS(B::scal(h, n, rho_new / rho, p));                                      /* p = beta p */
            CK_BLAS(B::axpy(h, n, one, rv, p));                                            /*   + r */
            rho = rho_new;
            r.iterations++;
        }
        CK_CUDA(cudaStreamSynchronize(st));
        return now_s() - t0;
    };
    CK_CUDA(cudaDeviceSynchronize());
    cg(std::min(b.opt.maxit, 10)); /* warm-up */
    std::vector<double> per_iter;
    for (int rep = 0; rep < 3; rep++) {
        const double t = cg(b.opt.maxit);
        if (r.iterations > 0) per_iter.push_back(1e3 * t / r.iterations);
    }
    r.ms_per_iter = median(per_iter);
    std::vector<T> xh((size_t)n);
    CK_CUDA(cudaMemcpy(xh.data(), x, vbytes, cudaMemcpyDeviceToHost));
    r.relres = host_relres(A, bh, xh);
}

/* ------------------------------------------------------------------ driver */
template <class F> static void guarded(Bench &b, SolverRun &r, F &&f)
{
    try {
        f();
    } catch (const DeviceLost &) {
        throw;
    } catch (const Unsupported &e) {
        r.reason = "unsupported", r.detail = e.what();
    } catch (const BenchError &e) {
        r.reason = "error", r.detail = e.what(), r.failed = true;
        b.failures++;
        check_device_alive();
    }
}

template <class T> void bench_solvers(Bench &b, const std::string &name, sps_matrix A, const HostCsr<T> &csr)
{
    const char *prec = Prec<T>::name;
    const std::vector<T> bh = random_vector<T>((size_t)csr.n, name_seed(name + "/" + prec + "/b"));
    std::vector<SolverRun> runs;
#ifdef SPBENCH_HAVE_SOLVERS
    const struct {
        sps_solver_type type;
        const char *name;
    } ours[] = {{SPS_SOLVER_CG, "cg"}, {SPS_SOLVER_BICGSTAB, "bicgstab"}, {SPS_SOLVER_GMRES, "gmres"}};
    for (const auto &s : ours) {
        SolverRun r;
        r.solver = s.name, r.impl = "libspsolve";
        guarded(b, r, [&] { run_library<T>(b, s.type, A, csr, bh, r); });
        runs.push_back(r);
    }
#else
    (void)A;
#endif
    {
        SolverRun r;
        r.solver = "cg", r.impl = "textbook";
        guarded(b, r, [&] { run_textbook_cg<T>(b, csr, bh, r, nullptr); });
        runs.push_back(r);
    }
    double ours_cg = NAN;
    for (const SolverRun &r : runs)
        if (r.solver == "cg" && r.impl == "libspsolve") ours_cg = r.ms_per_iter;
    for (const SolverRun &r : runs) {
        const double fb = floor_bytes(r.solver, csr.bytes(), csr.n, sizeof(T), r.iterations, b.opt.restart);
        const double floor_ms = fb / (b.copy_gbs * 1e9) * 1e3;
        const double textbook_over_ours = (r.impl == "textbook") ? r.ms_per_iter / ours_cg : NAN;
        solver_table_add(b, name, csr.n, csr.nnz, prec, r, floor_ms, textbook_over_ours);
        if (r.detail.empty())
            printf("  %-4s %-8s %-10s %4d it (%s) %9.4f ms/iter, floor %.4f (x%.2f)%s  relres %.3g\n", prec,
                   r.solver.c_str(), r.impl.c_str(), r.iterations, r.reason.c_str(), r.ms_per_iter, floor_ms,
                   r.ms_per_iter / floor_ms,
                   std::isfinite(textbook_over_ours) ? strprintf(", textbook/ours x%.2f", textbook_over_ours).c_str()
                                                     : "",
                   r.relres);
        else {
            printf("  %-4s %-8s %-10s %s: %s\n", prec, r.solver.c_str(), r.impl.c_str(), r.reason.c_str(),
                   r.detail.c_str());
            b.notes.push_back(strprintf("%s %s %s (%s): %s: %s", name.c_str(), prec, r.solver.c_str(), r.impl.c_str(),
                                        r.reason.c_str(), r.detail.c_str()));
        }
    }
    fflush(stdout);
}

template void bench_solvers<float>(Bench &, const std::string &, sps_matrix, const HostCsr<float> &);
template void bench_solvers<double>(Bench &, const std::string &, sps_matrix, const HostCsr<double> &);

/* the compound suite's CG comparison (spbench_compound.cu) */
template void run_textbook_cg<float>(Bench &, const HostCsr<float> &, const std::vector<float> &, SolverRun &,
                                     const CuMatrix *);
template void run_textbook_cg<double>(Bench &, const HostCsr<double> &, const std::vector<double> &, SolverRun &,
                                      const CuMatrix *);
#ifdef SPBENCH_HAVE_SOLVERS
template void run_library<float>(Bench &, sps_solver_type, sps_matrix, const HostCsr<float> &,
                                 const std::vector<float> &, SolverRun &);
template void run_library<double>(Bench &, sps_solver_type, sps_matrix, const HostCsr<double> &,
                                  const std::vector<double> &, SolverRun &);
#endif
