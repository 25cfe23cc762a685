/* spbench addition mode (--mode add; issue 23 item 6): C = alpha op(A) + beta op(B) for
 * op N and op T, B a perturbed copy of A as in the HiSparse paper (each entry of A dropped
 * with probability 0.2, an entry A lacks added just left of one with probability 0.2, fresh
 * values), alpha = 0.5, beta = 3.
 *
 *   ours:hisparse      sps_matrix_add on A and B converted to HiSparse (op T a view), its default
 *                      options: small operands take the one-pass sum (kernels/hisparse_small.h);
 *   ours:hisparse-general  the same with option small-sum 0: the general sum whatever the size;
 *   ours:csr-operands  sps_matrix_add on the CSR matrices themselves (its conversion path);
 *   cusparse:csrgeam2  CUDA 13's sparse addition (cusparse<t>csrgeam2, with its buffer size
 *                      and csrgeam2Nnz) on the CSR arrays; op T on A^T and B^T made first
 *                      by cusparseCsr2cscEx2, whose cost is a row of its own;
 *   convert:hisparse   sps_matrix_convert of A and of B to HiSparse;
 *   convert:csr2csc    cuSPARSE's A^T and B^T (op T rows only).
 * Time: the host clock around the whole call as a user makes it, the device synchronised
 * before and after (so allocations, host round trips and the result's construction count),
 * the median of min(--reps, 10) calls after an untimed one (3 after a call of over 1 s, 1 after
 * one of over 5 s).  speedup: cuSPARSE's addition
 * time over ours, conversions excluded on both sides (the issue's comparison).
 * Check: the pattern of each C equal to the union of op(A)'s and op(B)'s, and each value
 * within 4 u (|alpha a| + |beta b|) of the sum in double (u: the precision's unit
 * roundoff), before anything is timed. */
#include "spbench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

namespace {

enum { ADD_COLS = 14 };

inline void destroy_descr(cusparseMatDescr_t d) { cusparseDestroyMatDescr(d); }
using MatDescr = Handle<cusparseMatDescr_t, destroy_descr>;

/* cusparse<t>csrgeam2 and its buffer size for float and double */
cusparseStatus_t geam_buffer(cusparseHandle_t h, int n, int m, const float *al, cusparseMatDescr_t d, int nza,
                             const float *va, const int *ra, const int *ca, const float *be, int nzb, const float *vb,
                             const int *rb, const int *cb, const int *rc, size_t *bytes)
{
    return cusparseScsrgeam2_bufferSizeExt(h, n, m, al, d, nza, va, ra, ca, be, d, nzb, vb, rb, cb, d, nullptr, rc,
                                           nullptr, bytes);
}
cusparseStatus_t geam_buffer(cusparseHandle_t h, int n, int m, const double *al, cusparseMatDescr_t d, int nza,
                             const double *va, const int *ra, const int *ca, const double *be, int nzb,
                             const double *vb, const int *rb, const int *cb, const int *rc, size_t *bytes)
{
    return cusparseDcsrgeam2_bufferSizeExt(h, n, m, al, d, nza, va, ra, ca, be, d, nzb, vb, rb, cb, d, nullptr, rc,
                                           nullptr, bytes);
}
cusparseStatus_t geam(cusparseHandle_t h, int n, int m, const float *al, cusparseMatDescr_t d, int nza,
                      const float *va, const int *ra, const int *ca, const float *be, int nzb, const float *vb,
                      const int *rb, const int *cb, float *vc, int *rc, int *cc, void *buf)
{
    return cusparseScsrgeam2(h, n, m, al, d, nza, va, ra, ca, be, d, nzb, vb, rb, cb, d, vc, rc, cc, buf);
}
cusparseStatus_t geam(cusparseHandle_t h, int n, int m, const double *al, cusparseMatDescr_t d, int nza,
                      const double *va, const int *ra, const int *ca, const double *be, int nzb, const double *vb,
                      const int *rb, const int *cb, double *vc, int *rc, int *cc, void *buf)
{
    return cusparseDcsrgeam2(h, n, m, al, d, nza, va, ra, ca, be, d, nzb, vb, rb, cb, d, vc, rc, cc, buf);
}

/* B: A perturbed (the file comment), deterministic from the name. */
template <class T> HostCsr<T> perturbed(const HostCsr<T> &A, uint64_t seed)
{
    HostCsr<T> B;
    B.n = A.n, B.m = A.m;
    B.rowptr.assign((size_t)A.n + 1, 0);
    uint64_t draw = 0;
    for (int32_t i = 0; i < A.n; i++) {
        for (int32_t k = A.rowptr[(size_t)i]; k < A.rowptr[(size_t)i + 1]; k++) {
            if (gen_uniform(seed, draw++) < 0.2) continue; /* dropped */
            const int32_t c = A.col[(size_t)k];
            if (c > 0 && (k == A.rowptr[(size_t)i] || A.col[(size_t)k - 1] < c - 1) && gen_uniform(seed, draw++) < 0.2)
                B.col.push_back(c - 1); /* an entry A lacks */
            B.col.push_back(c);
        }
        B.rowptr[(size_t)i + 1] = (int32_t)B.col.size();
    }
    B.nnz = (int64_t)B.col.size();
    B.val = random_vector<T>((size_t)B.nnz, seed ^ 0x9e3779b97f4a7c15ull);
    return B;
}

/* A^T on the host (sorted columns): the check's own, independent of the library's
 * sps_csr_host_transpose and of cuSPARSE's csr2csc, both of which it checks. */
template <class T> HostCsr<T> transposed(const HostCsr<T> &A)
{
    HostCsr<T> t;
    t.n = A.m, t.m = A.n, t.nnz = A.nnz;
    t.rowptr.assign((size_t)A.m + 1, 0);
    t.col.resize((size_t)A.nnz);
    t.val.resize((size_t)A.nnz);
    for (int64_t k = 0; k < A.nnz; k++) t.rowptr[(size_t)A.col[(size_t)k] + 1]++;
    for (int32_t j = 0; j < A.m; j++) t.rowptr[(size_t)j + 1] += t.rowptr[(size_t)j];
    std::vector<int32_t> next(t.rowptr.begin(), t.rowptr.end() - 1);
    for (int32_t i = 0; i < A.n; i++)
        for (int32_t k = A.rowptr[(size_t)i]; k < A.rowptr[(size_t)i + 1]; k++) {
            const int32_t p = next[(size_t)A.col[(size_t)k]]++;
            t.col[(size_t)p] = i;
            t.val[(size_t)p] = A.val[(size_t)k];
        }
    return t;
}

/* The sum in double and each entry's bound scale |alpha a| + |beta b|, row by row. */
struct AddRef {
    std::vector<int32_t> rowptr, col;
    std::vector<double> val, scale;
};
template <class T> AddRef reference_sum(const HostCsr<T> &A, const HostCsr<T> &B, double al, double be)
{
    AddRef r;
    r.rowptr.assign((size_t)A.n + 1, 0);
    for (int32_t i = 0; i < A.n; i++) {
        int32_t p = A.rowptr[(size_t)i], q = B.rowptr[(size_t)i];
        const int32_t pe = A.rowptr[(size_t)i + 1], qe = B.rowptr[(size_t)i + 1];
        while (p < pe || q < qe) {
            const int32_t ca = p < pe ? A.col[(size_t)p] : INT32_MAX, cb = q < qe ? B.col[(size_t)q] : INT32_MAX;
            const int32_t c = std::min(ca, cb);
            const double a = ca == c ? al * (double)A.val[(size_t)p++] : 0.0, b = cb == c ? be * (double)B.val[(size_t)q++] : 0.0;
            r.col.push_back(c);
            r.val.push_back(a + b);
            r.scale.push_back(std::fabs(a) + std::fabs(b));
        }
        r.rowptr[(size_t)i + 1] = (int32_t)r.col.size();
    }
    return r;
}

/* C (n + 1 row pointers, columns, values) against the reference: "" or what differs. */
template <class T>
std::string check_sum(const AddRef &r, const std::vector<int32_t> &rowptr, const std::vector<int32_t> &col,
                      const std::vector<T> &val)
{
    if (rowptr != r.rowptr) return "pattern: row pointers differ from the union of the operands'";
    if (col != r.col) return "pattern: columns differ from the union of the operands'";
    for (size_t k = 0; k < r.val.size(); k++)
        if (!(std::fabs((double)val[k] - r.val[k]) <= 4.0 * Prec<T>::unit_roundoff * r.scale[k] + 1e-300))
            return strprintf("value %zu: %.17g, the sum in double %.17g", k, (double)val[k], r.val[k]);
    return "";
}

/* Median host time in ms of f() (after one untimed call), the device idle around each;
 * a call of over a second gets 3 timed calls at most, of over 5 s one (the host path of a
 * 40M-entry sum runs for seconds). */
template <class F> double time_calls(int reps, F &&f)
{
    CK_CUDA(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    f();
    CK_CUDA(cudaDeviceSynchronize());
    const double first = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (first > 5000) reps = 1;
    else if (first > 1000) reps = std::min(reps, 3);
    std::vector<double> t;
    for (int i = 0; i < reps; i++) {
        CK_CUDA(cudaDeviceSynchronize());
        const auto t0 = std::chrono::steady_clock::now();
        f();
        CK_CUDA(cudaDeviceSynchronize());
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

/* cuSPARSE's C = al A + be B on device CSR arrays, as a user calls it: buffer size,
 * workspace and C allocated, nnz counted, the sum; C's arrays returned (device). */
template <class T> struct CuSum {
    DevBuf rowptr, col, val;
    int nnz = 0;
};
template <class T>
void cusparse_add(Bench &b, cusparseMatDescr_t d, int n, int m, T al, const CuMatrix &A, int64_t nza, T be,
                  const CuMatrix &B, int64_t nzb, CuSum<T> &c)
{
    c.rowptr = DevBuf(((size_t)n + 1) * sizeof(int));
    size_t bytes = 0;
    CK_SPARSE(geam_buffer(b.sparse, n, m, &al, d, (int)nza, A.val.as<T>(), A.rowptr.as<int>(), A.col.as<int>(), &be,
                          (int)nzb, B.val.as<T>(), B.rowptr.as<int>(), B.col.as<int>(), static_cast<int *>(c.rowptr.p), &bytes));
    DevBuf work(std::max<size_t>(bytes, 1));
    CK_SPARSE(cusparseXcsrgeam2Nnz(b.sparse, n, m, d, (int)nza, A.rowptr.as<int>(), A.col.as<int>(), d, (int)nzb,
                                   B.rowptr.as<int>(), B.col.as<int>(), d, static_cast<int *>(c.rowptr.p), &c.nnz, work.p));
    c.col = DevBuf(std::max<size_t>((size_t)c.nnz, 1) * sizeof(int));
    c.val = DevBuf(std::max<size_t>((size_t)c.nnz, 1) * sizeof(T));
    CK_SPARSE(geam(b.sparse, n, m, &al, d, (int)nza, A.val.as<T>(), A.rowptr.as<int>(), A.col.as<int>(), &be,
                   (int)nzb, B.val.as<T>(), B.rowptr.as<int>(), B.col.as<int>(), static_cast<T *>(c.val.p), static_cast<int *>(c.rowptr.p),
                   static_cast<int *>(c.col.p), work.p));
    CK_CUDA(cudaStreamSynchronize(b.cu_stream));
}

/* A^T of device CSR A (n x m) into t (cusparseCsr2cscEx2). */
template <class T> void cusparse_transpose(Bench &b, int n, int m, int64_t nnz, const CuMatrix &A, CuMatrix &t)
{
    t.rowptr = DevBuf(((size_t)m + 1) * sizeof(int));
    t.col = DevBuf(std::max<size_t>((size_t)nnz, 1) * sizeof(int));
    t.val = DevBuf(std::max<size_t>((size_t)nnz, 1) * sizeof(T));
    size_t bytes = 0;
    CK_SPARSE(cusparseCsr2cscEx2_bufferSize(b.sparse, n, m, (int)nnz, A.val.p, A.rowptr.as<int>(), A.col.as<int>(),
                                            t.val.p, t.rowptr.as<int>(), t.col.as<int>(), Prec<T>::cuda,
                                            CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                            CUSPARSE_CSR2CSC_ALG1, &bytes));
    DevBuf work(std::max<size_t>(bytes, 1));
    CK_SPARSE(cusparseCsr2cscEx2(b.sparse, n, m, (int)nnz, A.val.p, A.rowptr.as<int>(), A.col.as<int>(), t.val.p,
                                 t.rowptr.as<int>(), t.col.as<int>(), Prec<T>::cuda, CUSPARSE_ACTION_NUMERIC,
                                 CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work.p));
    CK_CUDA(cudaStreamSynchronize(b.cu_stream));
}

template <class T> std::vector<T> download(const DevBuf &d, size_t n)
{
    std::vector<T> h(n);
    if (n) CK_CUDA(cudaMemcpy(h.data(), d.p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
}

/* C's CSR on the host. */
template <class T>
void export_sum(Bench &b, sps_matrix C, std::vector<int32_t> &rowptr, std::vector<int32_t> &col, std::vector<T> &val)
{
    sps_matrix_info_t info;
    CK_SPS(b.ctx, sps_matrix_info(C, &info));
    rowptr.assign((size_t)info.rows + 1, 0);
    col.resize((size_t)info.nnz);
    val.resize((size_t)info.nnz);
    CK_SPS(b.ctx, sps_matrix_export_csr(C, rowptr.data(), col.data(), val.data()));
}

} // namespace

sb_table *add_table_new(void)
{
    static const char *head[ADD_COLS] = {"matrix", "rows",   "cols", "nnzA",    "nnzB",    "nnzC", "precision",
                                         "op",     "kernel", "status", "ms",    "speedup", "check", "note"};
    return sb_table_new(ADD_COLS, head, "lrrrrrllllrrll");
}

template <class T> void bench_add(Bench &b, const std::string &name, sps_matrix A, const HostCsr<T> &csr)
{
    const char *prec = Prec<T>::name;
    const T al = (T)0.5, be = (T)3;
    const int reps = std::max(1, std::min(b.opt.reps, 10));
    const HostCsr<T> Bh = perturbed(csr, name_seed(name + "/" + prec + "/add"));
    SpsMatrix B, Ahs, Bhs;
    CK_SPS(b.ctx, sps_matrix_from_csr(b.ctx, Bh.n, Bh.m, Bh.rowptr.data(), Bh.col.data(), Bh.val.data(),
                                      Prec<T>::sps, B.out()));
    struct Row {
        char op;
        std::string kernel, status = "ok", detail;
        double ms = NAN, speedup = NAN;
        int64_t nnzc = -1;
        Row(char o, const char *k, const char *d = "") : op(o), kernel(k), detail(d) {}
    };
    std::vector<Row> rows;
    const double conv_ms = time_calls(reps, [&] {
        CK_SPS(b.ctx, sps_matrix_convert(A, SPS_FMT_HISPARSE, nullptr, Ahs.out()));
        CK_SPS(b.ctx, sps_matrix_convert(B, SPS_FMT_HISPARSE, nullptr, Bhs.out()));
    });
    rows.push_back(Row('-', "convert:hisparse", "A and B, CSR -> HiSparse"));
    rows.back().ms = conv_ms;

    MatDescr d;
    CK_SPARSE(cusparseCreateMatDescr(d.out()));
    CK_SPARSE(cusparseSetMatType(d, CUSPARSE_MATRIX_TYPE_GENERAL));
    CK_SPARSE(cusparseSetMatIndexBase(d, CUSPARSE_INDEX_BASE_ZERO));
    CK_SPARSE(cusparseSetPointerMode(b.sparse, CUSPARSE_POINTER_MODE_HOST));
    CuMatrix dA, dB;
    upload_cusparse(csr, dA);
    upload_cusparse(Bh, dB);

    for (int o = 0; o < 2; o++) {
        const char opc = o ? 'T' : 'N';
        const sps_op_mode op = o ? SPS_OP_T : SPS_OP_N;
        const HostCsr<T> At = o ? transposed(csr) : HostCsr<T>(), Bt = o ? transposed(Bh) : HostCsr<T>();
        const AddRef ref = reference_sum(o ? At : csr, o ? Bt : Bh, (double)al, (double)be);
        const int n = o ? csr.m : csr.n, m = o ? csr.n : csr.m;
        Row cu(opc, "cusparse:csrgeam2");
        CuMatrix tA, tB;
        if (o) {
            Row tr(opc, "convert:csr2csc", "A^T and B^T for cuSPARSE");
            tr.ms = time_calls(reps, [&] {
                cusparse_transpose<T>(b, csr.n, csr.m, csr.nnz, dA, tA);
                cusparse_transpose<T>(b, Bh.n, Bh.m, Bh.nnz, dB, tB);
            });
            rows.push_back(tr);
        }
        const CuMatrix &gA = o ? tA : dA, &gB = o ? tB : dB;
        guarded(b, cu.status, cu.detail, [&] {
            CuSum<T> c;
            cusparse_add<T>(b, d, n, m, al, gA, csr.nnz, be, gB, Bh.nnz, c);
            const std::string why = check_sum<T>(ref, download<int32_t>(c.rowptr, (size_t)n + 1),
                                                 download<int32_t>(c.col, (size_t)c.nnz), download<T>(c.val, (size_t)c.nnz));
            if (!why.empty()) throw BenchError("check: " + why);
            cu.nnzc = c.nnz;
            cu.ms = time_calls(reps, [&] { cusparse_add<T>(b, d, n, m, al, gA, csr.nnz, be, gB, Bh.nnz, c); });
        });
        for (int k = 0; k < 3; k++) {
            static const char *const kname[3] = {"ours:hisparse", "ours:hisparse-general", "ours:csr-operands"};
            Row r(opc, kname[k]);
            sps_matrix ma = k < 2 ? static_cast<sps_matrix>(Ahs) : A, mb = k < 2 ? static_cast<sps_matrix>(Bhs) : B;
            guarded(b, r.status, r.detail, [&] {
                SpsMatrix C;
                SpsOptions general;
                if (k == 1) {
                    CK_SPS(b.ctx, sps_format_options_create(SPS_FMT_HISPARSE, general.out()));
                    CK_SPS(b.ctx, sps_options_set(general, "small-sum", "0"));
                }
                sps_options opt = k == 1 ? static_cast<sps_options>(general) : nullptr;
                CK_SPS(b.ctx, sps_matrix_add(&al, ma, op, &be, mb, op, opt, C.out()));
                std::vector<int32_t> rp, cl;
                std::vector<T> vl;
                export_sum<T>(b, C, rp, cl, vl);
                const std::string why = check_sum<T>(ref, rp, cl, vl);
                if (!why.empty()) throw BenchError("check: " + why);
                r.nnzc = (int64_t)cl.size();
                r.ms = time_calls(reps, [&] { CK_SPS(b.ctx, sps_matrix_add(&al, ma, op, &be, mb, op, opt, C.out())); });
                r.speedup = cu.ms / r.ms;
            });
            rows.push_back(r);
        }
        rows.push_back(cu);
    }
    for (const Row &r : rows) {
        const std::string cells[ADD_COLS] = {name, strprintf("%d", csr.n), strprintf("%d", csr.m),
                                             strprintf("%lld", (long long)csr.nnz), strprintf("%lld", (long long)Bh.nnz),
                                             r.nnzc >= 0 ? strprintf("%lld", (long long)r.nnzc) : "", prec,
                                             std::string(1, r.op), r.kernel, r.status, fmt_num(r.ms, 4),
                                             fmt_fixed(r.speedup, 2), r.status == "ok" && r.nnzc >= 0 ? "ok" : "",
                                             r.detail};
        table_add(b.add_rows, cells, ADD_COLS);
        if (r.status == "ok")
            printf("  %-4s %c add %-20s %10.4f ms  x%-5.2f %s\n", prec, r.op, r.kernel.c_str(), r.ms, r.speedup,
                   r.detail.c_str());
        else {
            printf("  %-4s %c add %-20s %s: %s\n", prec, r.op, r.kernel.c_str(), r.status.c_str(), r.detail.c_str());
            b.notes.push_back(strprintf("%s %s add %c %s: %s: %s", name.c_str(), prec, r.op, r.kernel.c_str(),
                                        r.status.c_str(), r.detail.c_str()));
            if (r.status == "error") b.failures++;
        }
    }
    fflush(stdout);
}
template void bench_add<float>(Bench &, const std::string &, sps_matrix, const HostCsr<float> &);
template void bench_add<double>(Bench &, const std::string &, sps_matrix, const HostCsr<double> &);
