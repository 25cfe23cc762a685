/* spbench compound suite (--suite compound): SpMV of block and quaternion matrices.
 *
 * Matrices (gen.c gen_compound, or files): per matrix and precision the library's
 * compound CSR (built on a CPU context and exported, so every kernel sees the
 * same numbers), its scalar expansion (each entry its d x d block: a b x b
 * block's elements, a quaternion q = w + xi + yj + zk as L(q) =
 * [[w,-x,-y,-z],[x,w,-z,y],[y,z,w,-x],[z,-y,x,w]]) and the host reference of
 * y = A x from the expansion (reference_spmv, verify: the scalar suite's check).
 * Rows, op N only (alpha = 1, beta = 0), each checked before it is timed
 * (measure):
 *   native     ours: every --compound-specs entry (sps_matrix_convert_spec of the
 *              matrix on the CUDA context: bcsr, bell, bsell x aos, soa, launch
 *              variants cmp_tpr / cmp_sched), and ours:tuned (sps_matrix_tune, default
 *              budget, no tuning file: its choice, tune time, then that matrix timed);
 *   bsr        cuSPARSE cusparseSpMV on a BSR descriptor (BSR_ALG1, row-major blocks):
 *              the blocks themselves, for quaternions the 4 x 4 blocks L(q);
 *   expansion  ours csr, sell, ell and ours:tuned on the scalar expansion, and
 *              cuSPARSE's op-N kernels of the scalar suite (CSR ALG1/ALG2, COO, SELL).
 * Flops: 2 nnz of the expansion for every row (a quaternion entry: 16 multiply-
 * adds = 32 flops, which is also its Hamilton product's native count; a b x b
 * block 2 b^2).  Traffic model (minimal, each array once, padding excluded as in
 * the scalar suite; x read once, y written once) by view:
 *   native     4 (n + 1) + (4 + nv s) nnz + x + y   (nv = b^2 or 4 scalars an entry)
 *   bsr        4 (n + 1) + (4 + d^2 s) nnz + x + y  (the same for blocks; 16 s a quaternion)
 *   expansion  4 (n d + 1) + (4 + s) d^2 nnz + x + y
 * with n, nnz counted in entries, s = sizeof(T), x = m d s, y = n d s bytes.
 * x_bsr = the best verified cuSPARSE BSR time / the row's time; x_scalar = our best
 * verified scalar format on the expansion / the row's time. */
#include "spbench.h"

#include <cstdio>
#include <cstring>
#include <set>

/* ================================================================== sources */
struct CmpSource {
    std::string name;
    gen_compound_kind kind = GEN_STENCIL27_RANDOM;
    int b = 0, g = 0;  /* generator: block size (0: quaternion), grid points an axis */
    std::string path;  /* a file instead (--compound-mtx) */
    bool fem = false;  /* fembeam:g=G: spsolve-fem's cantilever K (gen_fem.c), b = 3 */
};

/* ~40M scalar nonzeros of the expansion: past the 50 MB L2 in every representation, so the
 * rows compare the streams, not the cache (the first sizes, ~5M, ran in 10-30 us on an H200). */
static const char *const kDefaultGen[] = {"stencil27:b=3:g=56", "stencil27:b=4:g=48", "mesh27:b=3:g=60",
                                          "qlap2d:g=640"};
static const char *const kQuickGen[] = {"stencil27:b=3:g=12", "stencil27:b=4:g=12", "mesh27:b=3:g=12",
                                        "qlap2d:g=64"};

/* "stencil27:b=3:g=28", "mesh27:b=3:g=30", "qlap2d:g=224" */
static CmpSource parse_gen(const std::string &spec)
{
    CmpSource s;
    std::vector<std::string> part;
    for (size_t at = 0;;) {
        const size_t c = spec.find(':', at);
        part.push_back(spec.substr(at, c == std::string::npos ? std::string::npos : c - at));
        if (c == std::string::npos) break;
        at = c + 1;
    }
    const std::string &kind = part[0];
    if (kind == "stencil27") s.kind = GEN_STENCIL27_RANDOM;
    else if (kind == "mesh27") s.kind = GEN_MESH27_SPD;
    else if (kind == "qlap2d") s.kind = GEN_TRI2D_QLAPLACE;
    else if (kind == "fembeam") s.fem = true, s.b = 3;
    else throw BenchError("--compound-gen " + spec + ": unknown generator (stencil27, mesh27, qlap2d, fembeam)");
    for (size_t i = 1; i < part.size(); i++) {
        int *field = part[i].compare(0, 2, "b=") == 0 ? &s.b : part[i].compare(0, 2, "g=") == 0 ? &s.g : nullptr;
        char *end = nullptr;
        const long v = field ? strtol(part[i].c_str() + 2, &end, 10) : 0;
        if (!field || *end || v < 1 || v > 100000)
            throw BenchError("--compound-gen " + spec + ": expected b=B and g=G items, not '" + part[i] + "'");
        *field = (int)v;
    }
    const bool quat = s.kind == GEN_TRI2D_QLAPLACE;
    if (quat) s.b = 0;
    if (s.fem && s.b != 3) throw BenchError("--compound-gen " + spec + ": fembeam has 3x3 blocks (b=3)");
    if (s.g < 1 || (!quat && (s.b < 2 || s.b > 8)))
        throw BenchError("--compound-gen " + spec + ": needs g=G" + (quat ? "" : " and b=2..8"));
    s.name = quat ? strprintf("%s-%d", kind.c_str(), s.g) : strprintf("%s-b%d-%d", kind.c_str(), s.b, s.g);
    return s;
}

static std::vector<CmpSource> compound_sources(const Options &o)
{
    std::vector<std::string> gen = o.compound_gen;
    if (gen.empty() && o.compound_mtx.empty()) /* the defaults */
        for (const char *g : o.quick ? kQuickGen : kDefaultGen) gen.push_back(g);
    std::vector<CmpSource> v;
    for (const std::string &g : gen) v.push_back(parse_gen(g));
    for (const std::string &p : o.compound_mtx) {
        CmpSource s;
        s.path = p;
        const size_t slash = p.find_last_of('/');
        std::string stem = p.substr(slash == std::string::npos ? 0 : slash + 1);
        for (const char *suf : {".gz", ".mtx"})
            if (stem.size() > strlen(suf) && stem.compare(stem.size() - strlen(suf), strlen(suf), suf) == 0)
                stem.resize(stem.size() - strlen(suf));
        s.name = "mtx/" + stem;
        v.push_back(s);
    }
    return v;
}

std::vector<std::string> compound_names(const Options &o)
{
    std::vector<std::string> n;
    for (const CmpSource &s : compound_sources(o)) n.push_back(s.name);
    return n;
}

/* Our candidates: the three formats in both entry layouts, then the launch variants. */
static std::vector<std::string> compound_default_specs(void)
{
    std::vector<std::string> v;
    for (const char *f : {"bcsr", "bell", "bsell"})
        for (const char *l : {"aos", "soa"}) v.push_back(strprintf("%s entry-layout=%s", f, l));
    for (const char *f : {"bcsr", "bsell"})
        for (int tpr : {1, 2, 4, 8, 16}) v.push_back(strprintf("%s variant=cmp_tpr=%d", f, tpr));
    for (const char *f : {"bcsr", "bell", "bsell"}) v.push_back(strprintf("%s variant=cmp_sched=1", f));
    return v;
}

/* --compound-specs, or the defaults */
static std::vector<std::string> compound_specs(const Options &o)
{
    return o.compound_specs.empty() ? compound_default_specs() : o.compound_specs;
}

/* ================================================================== host matrices */
/* The compound CSR the library holds (sps_matrix_export_csr: AoS entries). */
template <class T> struct HostEntries {
    sps_entry_desc e{};
    int d = 0, nv = 0; /* scalars of x an entry column; scalars stored an entry */
    int32_t n = 0, m = 0;
    int64_t nnz = 0;
    std::vector<int32_t> rowptr, col;
    std::vector<T> val; /* nnz * nv */
    sps_symmetry symmetry = SPS_SYM_GENERAL;

    /* element (r, c) of entry k's scalar expansion */
    T elem(int64_t k, int r, int c) const
    {
        static const int qi[4][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
        static const int qs[4][4] = {{1, -1, -1, -1}, {1, 1, -1, 1}, {1, 1, 1, -1}, {1, -1, 1, 1}};
        const T *v = &val[(size_t)(k * nv)];
        return e.kind == SPS_ENTRY_QUATERNION ? (T)qs[r][c] * v[qi[r][c]] : v[r * d + c];
    }
};

/* The library matrix on ctx of the source, in precision T.  A generated source is
 * built from g (gen_compound, done once per source by the caller). */
template <class T>
static void build_compound(sps_context ctx, const CmpSource &src, const gen_csr *g, int compound_block, SpsMatrix &A)
{
    if (src.path.empty()) {
        std::vector<T> val((size_t)(g->nnz * g->nv));
        for (size_t k = 0; k < val.size(); k++) val[k] = (T)g->val[k];
        const sps_entry_desc e = src.b ? sps_entry_block(src.b) : sps_entry_quaternion();
        CK_SPS(ctx, sps_matrix_from_csr_entries(ctx, g->n, g->m, g->rowptr, g->col, val.data(), e, Prec<T>::sps,
                                                A.out()));
    } else if (compound_block >= 2) {
        CK_SPS(ctx, sps_matrix_read_mtx_blocks(ctx, src.path.c_str(), Prec<T>::sps, compound_block, NULL, A.out()));
    } else {
        CK_SPS(ctx, sps_matrix_read_mtx(ctx, src.path.c_str(), Prec<T>::sps, A.out()));
    }
}

template <class T> static HostEntries<T> export_entries(sps_context ctx, sps_matrix A)
{
    sps_matrix_info_t info;
    CK_SPS(ctx, sps_matrix_info(A, &info));
    if (info.entry.kind == SPS_ENTRY_SCALAR)
        throw Unsupported("a scalar matrix: the compound suite takes quaternion files, or scalar ones with "
                          "--compound-mtx-block B");
    HostEntries<T> h;
    h.e = info.entry, h.d = sps_entry_dim(info.entry), h.nv = sps_entry_values(info.entry);
    h.n = info.rows, h.m = info.cols, h.nnz = info.nnz, h.symmetry = info.symmetry;
    h.rowptr.resize((size_t)h.n + 1);
    h.col.resize((size_t)h.nnz);
    h.val.resize((size_t)(h.nnz * h.nv));
    CK_SPS(ctx, sps_matrix_export_csr(A, h.rowptr.data(), h.col.data(), h.val.data()));
    return h;
}

/* The scalar expansion as CSR: row i d + r holds, entry by entry of block-row i,
 * the d elements of row r of each entry's block (columns sorted, zeros kept). */
template <class T> static HostCsr<T> expand(const HostEntries<T> &E)
{
    const int d = E.d;
    HostCsr<T> X;
    X.n = E.n * d, X.m = E.m * d, X.nnz = E.nnz * d * d;
    if ((int64_t)E.n * d > INT32_MAX || X.nnz > INT32_MAX)
        throw Unsupported("the scalar expansion exceeds 32-bit indices");
    X.rowptr.resize((size_t)X.n + 1);
    X.col.resize((size_t)X.nnz);
    X.val.resize((size_t)X.nnz);
    X.rowptr[0] = 0;
    for (int32_t i = 0; i < E.n; i++)
        for (int r = 0; r < d; r++) {
            int64_t at = X.rowptr[(size_t)i * d + r];
            for (int64_t k = E.rowptr[(size_t)i]; k < E.rowptr[(size_t)i + 1]; k++)
                for (int c = 0; c < d; c++) {
                    X.col[(size_t)at] = E.col[(size_t)k] * d + c;
                    X.val[(size_t)at++] = E.elem(k, r, c);
                }
            X.rowptr[(size_t)i * d + r + 1] = (int32_t)at;
        }
    return X;
}

/* BSR values of d x d row-major blocks: the entries' expansions (for blocks, the
 * entries as stored). */
template <class T> static std::vector<T> bsr_values(const HostEntries<T> &E)
{
    const int d = E.d;
    std::vector<T> v((size_t)(E.nnz * d * d));
    for (int64_t k = 0; k < E.nnz; k++)
        for (int r = 0; r < d; r++)
            for (int c = 0; c < d; c++) v[(size_t)((k * d + r) * d + c)] = E.elem(k, r, c);
    return v;
}

/* Everything a (matrix, precision) needs on the host. */
template <class T> struct CmpProblem {
    HostEntries<T> E;
    HostCsr<T> X;        /* the scalar expansion */
    std::vector<T> x;    /* m d scalars */
    Reference ref;       /* y = X x in double */
};

template <class T>
static CmpProblem<T> make_problem(sps_context cpu, const Options &o, const CmpSource &src, const gen_csr *g)
{
    CmpProblem<T> p;
    SpsMatrix A;
    build_compound<T>(cpu, src, g, o.compound_mtx_block, A);
    p.E = export_entries<T>(cpu, A);
    p.X = expand(p.E);
    p.x = random_vector<T>((size_t)p.X.m, name_seed(src.name + "/" + Prec<T>::name + "/N"));
    p.ref = reference_spmv(p.X, p.x, false);
    return p;
}

/* ================================================================== tables */
enum { CMP_COLS = 20, SUM_COLS = 14 };

sb_table *compound_table_new(void)
{
    static const char *head[CMP_COLS] = {"matrix", "entry",  "rows",   "nnz",    "nnz_exp", "precision", "view",
                                         "kernel", "spec",   "status", "ms",     "GFLOP/s", "GB/s",      "%copy",
                                         "x_bsr",  "x_scalar", "fmt_MB", "tune_s", "check",   "note"};
    return sb_table_new(CMP_COLS, head, "llrrrllllrrrrrrrrrrl");
}

sb_table *compound_summary_new(void)
{
    static const char *head[SUM_COLS] = {"matrix",        "entry",      "precision",   "ours best",   "ours_ms",
                                         "tuned",         "tuned_ms",   "tune_s",      "bsr_ms",      "csr_exp_ms",
                                         "scalar best",   "scalar_ms",  "best/bsr",    "best/scalar"};
    return sb_table_new(SUM_COLS, head, "lllllrlrrrlrrr");
}

/* A row of the compound table. */
struct CmpRow {
    KernelResult r;
    std::string view, spec; /* native | bsr | expansion; the spec (ours) */
    double tune_s = NAN;
};

template <class T>
static void report_compound(Bench &b, const std::string &name, const CmpProblem<T> &p, std::vector<CmpRow> &rows)
{
    const char *prec = Prec<T>::name;
    const HostEntries<T> &E = p.E;
    const double s = sizeof(T), xy = s * ((double)p.X.m + (double)p.X.n), idx = 4.0 * ((double)E.n + 1) + 4.0 * E.nnz;
    auto model = [&](const std::string &view) {
        if (view == "native") return idx + E.nv * s * (double)E.nnz + xy;
        if (view == "bsr") return idx + E.d * E.d * s * (double)E.nnz + xy;
        return p.X.bytes() + xy;
    };
    auto best = [&](auto pred, const CmpRow **who) {
        double t = NAN;
        for (const CmpRow &c : rows)
            if (c.r.status == "ok" && pred(c) && (std::isnan(t) || c.r.ms < t)) t = c.r.ms, *who = &c;
        return t;
    };
    const CmpRow *w_bsr = nullptr, *w_scalar = nullptr, *w_ours = nullptr, *w_tuned = nullptr, *w_csr = nullptr;
    const double bsr = best([](const CmpRow &c) { return c.view == "bsr"; }, &w_bsr);
    const double scalar = best([](const CmpRow &c) { return c.view == "expansion" && !c.r.cusparse; }, &w_scalar);
    const double ours = best([](const CmpRow &c) { return c.view == "native"; }, &w_ours);
    const double tuned =
        best([](const CmpRow &c) { return c.r.kernel == "ours:tuned" && c.view == "native"; }, &w_tuned);
    const double csr = best(
        [](const CmpRow &c) { return c.view == "expansion" && c.r.kernel.compare(0, 12, "cusparse:csr") == 0; },
        &w_csr);
    std::set<std::string> noted;
    for (CmpRow &c : rows) {
        const KernelResult &r = c.r;
        const double gflops = 2.0 * (double)p.X.nnz / (r.ms * 1e-3) / 1e9, gbs = model(c.view) / (r.ms * 1e-3) / 1e9;
        const std::string cells[CMP_COLS] = {
            name, sps_entry_name(E.e), strprintf("%d", E.n), strprintf("%lld", (long long)E.nnz),
            strprintf("%lld", (long long)p.X.nnz), prec, c.view, r.kernel, c.spec, r.status, fmt_num(r.ms, 4),
            fmt_fixed(gflops, 1), fmt_fixed(gbs, 1), fmt_fixed(100.0 * gbs / b.copy_gbs, 1), fmt_fixed(bsr / r.ms, 2),
            fmt_fixed(scalar / r.ms, 2), fmt_fixed(r.fmt_bytes / 1e6, 1), fmt_fixed(c.tune_s, 2), fmt_num(r.ratio, 2),
            r.status == "ok" ? "" : r.detail};
        table_add(b.compound_rows, cells, CMP_COLS);
        const std::string label = c.view + " " + r.kernel + (c.spec.empty() ? "" : " " + c.spec);
        if (r.status == "ok")
            printf("  %-4s %-46s %9.4f ms %7.1f GFLOP/s %7.1f GB/s %5.1f%% copy  x_bsr %-5.2f x_scalar %-5.2f "
                   "check %.2g\n",
                   prec, label.c_str(), r.ms, gflops, gbs, 100.0 * gbs / b.copy_gbs, bsr / r.ms, scalar / r.ms,
                   r.ratio);
        else
            printf("  %-4s %-46s %s: %s\n", prec, label.c_str(), r.status.c_str(), r.detail.c_str());
        if (r.status != "ok" && noted.insert(r.status + r.detail).second) /* each reason once a matrix */
            b.notes.push_back(strprintf("compound %s %s %s: %s: %s", name.c_str(), prec, label.c_str(),
                                        r.status.c_str(), r.detail.c_str()));
    }
    auto spec_of = [](const CmpRow *w) { return w ? w->spec : std::string(); };
    const std::string cells[SUM_COLS] = {
        name, sps_entry_name(E.e), prec, spec_of(w_ours), fmt_num(ours, 4), spec_of(w_tuned), fmt_num(tuned, 4),
        fmt_fixed(w_tuned ? w_tuned->tune_s : NAN, 2), fmt_num(bsr, 4), fmt_num(csr, 4),
        w_scalar ? w_scalar->r.kernel + (w_scalar->spec.empty() ? "" : " [" + w_scalar->spec + "]") : "",
        fmt_num(scalar, 4), fmt_fixed(bsr / ours, 2), fmt_fixed(scalar / ours, 2)};
    table_add(b.compound_summary, cells, SUM_COLS);
}

/* E's blocks as cuSPARSE BSR arrays on the device (bsr_values: quaternions expanded). */
template <class T> static void upload_bsr(const HostEntries<T> &E, CuMatrix &bsr)
{
    const std::vector<T> bv = bsr_values(E);
    bsr.rowptr = DevBuf(E.rowptr.data(), E.rowptr.size() * sizeof(int32_t));
    bsr.col = DevBuf(E.col.data(), E.col.size() * sizeof(int32_t));
    bsr.val = DevBuf(bv.data(), bv.size() * sizeof(T));
    bsr.block = E.d, bsr.bnnz = E.nnz;
}

/* ================================================================== CG on a compound matrix (--compound-cg) */
/* Plain CG, b.opt.maxit iterations at rtol 0 from x = 0 on b = A 1 (its scalar form), ms
 * an iteration (the median of 3 solves): ours on the native matrix (bcsr, what --format
 * auto builds), the textbook CG (cuSPARSE + cuBLAS) with cuSPARSE BSR SpMV on the blocks
 * (quaternions: their 4 x 4 expansions), and ours on the scalar expansion in sell.
 * Lines to stdout and rows to the solver table (-solver.csv; textbook/ours there is this
 * run's time over the native one's), with solver mode's floor: the native matrix read
 * once plus 10 vector passes. */
template <class T> static void compound_cg(Bench &b, const std::string &name, const CmpProblem<T> &p)
{
    const HostEntries<T> &E = p.E;
    std::vector<T> bh((size_t)p.X.n, (T)0);
    for (int32_t i = 0; i < p.X.n; i++)
        for (int64_t k = p.X.rowptr[(size_t)i]; k < p.X.rowptr[(size_t)i + 1]; k++) bh[(size_t)i] += p.X.val[(size_t)k];
    std::vector<SolverRun> runs(3);
    runs[0].impl = "ours native bcsr", runs[1].impl = "textbook cuSPARSE BSR", runs[2].impl = "ours expansion sell";
    for (SolverRun &r : runs) r.solver = "cg";
    auto guarded_run = [&](SolverRun &r, auto &&f) {
        try {
            f();
        } catch (const DeviceLost &) {
            throw;
        } catch (const BenchError &e) {
            r.reason = "error", r.detail = e.what(), r.failed = true;
            b.failures++;
            check_device_alive();
        }
    };
#ifdef SPBENCH_HAVE_SOLVERS
    guarded_run(runs[0], [&] {
        SpsMatrix A;
        CK_SPS(b.ctx, sps_matrix_from_csr_entries(b.ctx, E.n, E.m, E.rowptr.data(), E.col.data(), E.val.data(), E.e,
                                                  Prec<T>::sps, A.out()));
        run_library<T>(b, SPS_SOLVER_CG, A, p.X, bh, runs[0]);
    });
    guarded_run(runs[2], [&] {
        SpsMatrix X, S;
        CK_SPS(b.ctx, sps_matrix_from_csr(b.ctx, p.X.n, p.X.m, p.X.rowptr.data(), p.X.col.data(), p.X.val.data(),
                                          Prec<T>::sps, X.out()));
        CK_SPS(b.ctx, sps_matrix_convert(X, SPS_FMT_SELL, nullptr, S.out()));
        run_library<T>(b, SPS_SOLVER_CG, S, p.X, bh, runs[2]);
    });
#else
    runs[0].reason = runs[2].reason = "unsupported";
#endif
    guarded_run(runs[1], [&] {
        CuMatrix bsr;
        upload_bsr(E, bsr);
        run_textbook_cg<T>(b, p.X, bh, runs[1], &bsr);
    });
    /* the traffic floor of CG as solver mode counts it: the native matrix read once
       (nnz (nv s + 4) + (n + 1) 4 bytes) plus 10 passes over vectors of n d scalars */
    const double s = sizeof(T), nd = (double)p.X.n;
    const double mat = (double)E.nnz * ((double)E.nv * s + 4) + ((double)E.n + 1) * 4;
    const double floor_ms = (mat + 10 * nd * s) / (b.copy_gbs * 1e9) * 1e3;
    for (const SolverRun &r : runs) {
        solver_table_add(b, name, p.X.n, p.X.nnz, Prec<T>::name, r, floor_ms, r.ms_per_iter / runs[0].ms_per_iter);
        printf("  CG %-24s %5d its  %.4f ms/iter  floor %.4f (x%.2f)  this/native %.2f  relres %.2e%s%s\n",
               r.impl.c_str(), r.iterations, r.ms_per_iter, floor_ms, r.ms_per_iter / floor_ms,
               r.ms_per_iter / runs[0].ms_per_iter, r.relres, r.detail.empty() ? "" : "  ", r.detail.c_str());
    }
}

/* ================================================================== one matrix and precision on the GPU */
/* sps_matrix_tune with the default options but no tuning file (a cached choice
 * would time nothing); the chosen matrix into B. */
static void tune(Bench &b, sps_matrix A, SpsMatrix &B, CmpRow &row)
{
    sps_tune_options o;
    sps_tune_options_default(&o);
    o.cache = "off";
    sps_tune_result res;
    CK_SPS(b.ctx, sps_matrix_tune(A, &o, B.out(), &res));
    row.spec = res.choice, row.tune_s = res.time_s;
    /* the tuner's own timings beside spbench's, in the log: where the two rank
       candidates differently, this is where to look */
    printf("  tune: %s in %.2f s (%d timed, %d skipped)\n", res.choice, res.time_s, res.timed, res.skipped);
    for (int i = 0; i < res.ncandidates; i++) {
        const sps_tune_candidate &c = res.candidates[i];
        if (c.ms >= 0) printf("    %-60s %.4f ms\n", c.spec, c.ms);
        else printf("    %-60s -- %s\n", c.spec, c.skipped);
    }
}

template <class T> static void bench_compound_one(Bench &b, sps_context cpu, const CmpSource &src, const gen_csr *g)
{
    const CmpProblem<T> p = make_problem<T>(cpu, b.opt, src, g);
    const HostEntries<T> &E = p.E;
    printf("%s  %s  %s, %d x %d entries, %lld entries (%.1f per row), expansion %d x %d with %lld nonzeros\n",
           src.name.c_str(), Prec<T>::name, sps_entry_name(E.e), E.n, E.m, (long long)E.nnz,
           (double)E.nnz / std::max(E.n, 1), p.X.n, p.X.m, (long long)p.X.nnz);
    std::vector<CmpRow> rows;
    auto add = [&](const char *view, const std::string &kernel, const std::string &spec, bool cusparse) -> CmpRow & {
        CmpRow c;
        c.view = view, c.spec = spec, c.r.kernel = kernel, c.r.cusparse = cusparse, c.r.detail = "not run";
        rows.push_back(c);
        return rows.back();
    };
    /* a failure outside one kernel's measurement marks the rows of its group that did not run */
    auto group = [&](size_t first, auto &&f) {
        std::string status = "error", detail;
        if (guarded(b, status, detail, f)) return;
        for (size_t i = first; i < rows.size(); i++)
            if (rows[i].r.detail == "not run") rows[i].r.status = status, rows[i].r.detail = detail;
    };
    /* our scalar-vector pair on the CUDA context: x (m d scalars) and y (n d) */
    SpsVector vx, vy;
    group(rows.size(), [&] {
        CK_SPS(b.ctx, sps_vector_from_host(b.ctx, p.X.m, Prec<T>::sps, p.x.data(), vx.out()));
        CK_SPS(b.ctx, sps_vector_create(b.ctx, p.X.n, Prec<T>::sps, vy.out()));
    });

    /* ours: rows[first ..] for each spec of A, then the tuned choice (rows added beforehand, so that a
       failure to build A marks them all) */
    auto ours = [&](sps_matrix A, const std::vector<std::string> &specs, size_t first) {
        for (size_t i = 0; i < specs.size(); i++) {
            ConvertResult cr;
            run_ours<T>(b, A, specs[i], &vx, &vy, &p.ref, &rows[first + i].r, specs[i] == "csr" ? nullptr : &cr, 1,
                        false);
        }
        CmpRow &t = rows[first + specs.size()]; /* added after the specs' rows */
        SpsMatrix B;
        if (guarded(b, t.r.status, t.r.detail, [&] { tune(b, A, B, t); }))
            run_ours<T>(b, B, "", &vx, &vy, &p.ref, &t.r, nullptr, 1, false);
    };
    const std::vector<std::string> specs = compound_specs(b.opt);
    size_t first = rows.size();
    for (const std::string &s : specs) add("native", "ours", s, false);
    add("native", "ours:tuned", "", false);
    group(first, [&] {
        SpsMatrix A;
        CK_SPS(b.ctx, sps_matrix_from_csr_entries(b.ctx, E.n, E.m, E.rowptr.data(), E.col.data(), E.val.data(), E.e,
                                                  Prec<T>::sps, A.out()));
        ours(A, specs, first);
    });

    /* cuSPARSE BSR on the same blocks (quaternions: their 4 x 4 expansions) */
    first = rows.size();
    static const CuKernel kBsr = {"cusparse:bsr-alg1", CuFormat::BSR, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                  CUSPARSE_SPMV_BSR_ALG1};
    add("bsr", kBsr.name, "", true);
    /* cuSPARSE's op-N kernels of the scalar suite on the expansion */
    const size_t cu_exp = rows.size();
    for (size_t i = 0; i < kNumCuKernels; i++)
        if (kCuKernels[i].op == CUSPARSE_OPERATION_NON_TRANSPOSE) add("expansion", kCuKernels[i].name, "", true);
    group(first, [&] {
        const DevBuf dx(p.x.data(), p.x.size() * sizeof(T)), dy((size_t)p.X.n * sizeof(T));
        CuMatrix bsr;
        upload_bsr(E, bsr);
        run_cusparse_kernel<T>(b, kBsr, p.X, bsr, dx, dy, p.ref, rows[first].r);
        CuMatrix d;
        upload_cusparse(p.X, d);
        for (size_t i = 0, row = cu_exp; i < kNumCuKernels; i++)
            if (kCuKernels[i].op == CUSPARSE_OPERATION_NON_TRANSPOSE)
                run_cusparse_kernel<T>(b, kCuKernels[i], p.X, d, dx, dy, p.ref, rows[row++].r);
    });

    /* ours on the scalar expansion: csr (the matrix as built), sell, ell, tuned */
    static const std::vector<std::string> kScalar = {"csr", "sell", "ell"};
    first = rows.size();
    for (const std::string &s : kScalar) add("expansion", "ours:" + s, "", false);
    add("expansion", "ours:tuned", "", false);
    group(first, [&] {
        SpsMatrix X;
        CK_SPS(b.ctx, sps_matrix_from_csr(b.ctx, p.X.n, p.X.m, p.X.rowptr.data(), p.X.col.data(), p.X.val.data(),
                                          Prec<T>::sps, X.out()));
        ours(X, kScalar, first);
    });
    report_compound<T>(b, src.name, p, rows);
    if (b.opt.compound_cg) compound_cg<T>(b, src.name, p);
    fflush(stdout);
}

/* ================================================================== drivers */
struct CpuContext {
    sps_context ctx = nullptr;
    CpuContext()
    {
        const sps_status st = sps_context_create(&ctx, SPS_BACKEND_CPU, 0);
        if (st != SPS_OK) throw BenchError(strprintf("sps_context_create(CPU): %s", sps_status_name(st)));
    }
    ~CpuContext() { sps_context_destroy(ctx); }
};

/* For each selected source: generate once, then f(src, &g, precision) per precision. */
template <class F> static void each_compound(Bench &b, F &&f)
{
    for (const CmpSource &src : compound_sources(b.opt)) {
        if (!selected(b.opt, src.name)) continue;
        gen_csr g{};
        struct GenGuard {
            gen_csr *g;
            ~GenGuard() { gen_csr_free(g); }
        } guard{&g};
        try {
            if (src.path.empty()) {
                watchdog_arm(b, src.name + ": generate");
                if (const char *msg = src.fem ? gen_fem_beam(&g, src.g)
                                              : gen_compound(&g, src.kind, src.g, src.b, name_seed(src.name)))
                    throw BenchError(strprintf("generator: %s", msg));
            }
            each_precision(b, src.name, [&](int prec) { f(src, &g, prec); });
        } catch (const DeviceLost &) {
            throw;
        } catch (const BenchError &e) {
            matrix_failed(b, src.name, e);
        }
    }
}

void bench_compound(Bench &b)
{
    CpuContext cpu;
    each_compound(b, [&](const CmpSource &src, const gen_csr *g, int prec) {
        if (prec == 0) bench_compound_one<float>(b, cpu.ctx, src, g);
        else bench_compound_one<double>(b, cpu.ctx, src, g);
    });
}

/* ================================================================== --host-check (no GPU) */
/* What can be checked without a GPU: the generators (pattern symmetry, the
 * expansion's symmetry where the matrix is symmetric or Hermitian, row lengths),
 * the expansion and the BSR arrays against the library's own CPU kernels, and the
 * spec list (every spec built and applied on the CPU backend, which ignores launch
 * variants, and checked against the reference), and sps_matrix_tune on the CPU. */
template <class T> static void host_check_one(Bench &b, sps_context cpu, const CmpSource &src, const gen_csr *g)
{
    const char *prec = Prec<T>::name;
    const CmpProblem<T> p = make_problem<T>(cpu, b.opt, src, g);
    const HostEntries<T> &E = p.E;
    int64_t lo = INT64_MAX, hi = 0;
    for (int32_t i = 0; i < E.n; i++) {
        const int64_t l = E.rowptr[(size_t)i + 1] - E.rowptr[(size_t)i];
        lo = std::min(lo, l), hi = std::max(hi, l);
    }
    printf("%s %s: %s, %d entry rows, %lld entries (%lld..%lld a row, mean %.1f), expansion %lld nonzeros\n",
           src.name.c_str(), prec, sps_entry_name(E.e), E.n, (long long)E.nnz, (long long)lo, (long long)hi,
           (double)E.nnz / std::max(E.n, 1), (long long)p.X.nnz);
    auto result = [&](const std::string &what, bool ok, const std::string &why) {
        printf("  %-4s %-44s %s%s%s\n", prec, what.c_str(), ok ? "ok" : "FAIL", ok ? "" : ": ", why.c_str());
        if (!ok) b.failures++;
    };
    /* the expansion's transpose equals it (generators and files that promise it); columns are sorted */
    if (src.path.empty() ? src.kind != GEN_STENCIL27_RANDOM
                         : E.symmetry == SPS_SYM_SYMMETRIC || E.symmetry == SPS_SYM_HERMITIAN) {
        std::string why;
        for (int32_t i = 0; i < p.X.n && why.empty(); i++)
            for (int64_t k = p.X.rowptr[(size_t)i]; k < p.X.rowptr[(size_t)i + 1] && why.empty(); k++) {
                const int32_t j = p.X.col[(size_t)k];
                const int32_t *b0 = p.X.col.data() + p.X.rowptr[(size_t)j],
                              *b1 = p.X.col.data() + p.X.rowptr[(size_t)j + 1];
                const int32_t *t = std::lower_bound(b0, b1, i);
                const bool found = t != b1 && *t == i;
                if (!found || p.X.val[(size_t)(t - p.X.col.data())] != p.X.val[(size_t)k])
                    why = strprintf("(%d, %d) = %g, transposed %g", i, j, (double)p.X.val[(size_t)k],
                                    found ? (double)p.X.val[(size_t)(t - p.X.col.data())] : NAN);
            }
        result("expansion symmetric", why.empty(), why);
    }
    /* host BSR product (T arithmetic) */
    {
        const std::vector<T> bv = bsr_values(E);
        std::vector<T> y((size_t)p.X.n, (T)0);
        const int d = E.d;
        for (int32_t i = 0; i < E.n; i++)
            for (int64_t k = E.rowptr[(size_t)i]; k < E.rowptr[(size_t)i + 1]; k++)
                for (int r = 0; r < d; r++)
                    for (int c = 0; c < d; c++)
                        y[(size_t)i * d + r] +=
                            bv[(size_t)((k * d + r) * d + c)] * p.x[(size_t)E.col[(size_t)k] * d + c];
        const Check c = verify(y, p.ref);
        result("BSR arrays (host product)", c.ok, c.why);
    }
    /* the library's CPU kernels: every spec, and the expansion as csr */
    SpsVector vx, vy;
    CK_SPS(cpu, sps_vector_from_host(cpu, p.X.m, Prec<T>::sps, p.x.data(), vx.out()));
    CK_SPS(cpu, sps_vector_create(cpu, p.X.n, Prec<T>::sps, vy.out()));
    auto apply = [&](sps_matrix M, const std::string &what) {
        SpsOperator op;
        const T alpha = 1, beta = 0;
        CK_SPS(cpu, sps_operator_from_matrix(M, op.out()));
        CK_SPS(cpu, sps_operator_apply(op, SPS_OP_N, &alpha, vx, &beta, vy));
        CK_SPS(cpu, sps_context_synchronize(cpu));
        const T *yd = static_cast<const T *>(sps_vector_data(vy));
        const Check c = verify(std::vector<T>(yd, yd + p.X.n), p.ref);
        result(what, c.ok, c.why);
    };
    SpsMatrix A, X;
    CK_SPS(cpu, sps_matrix_from_csr_entries(cpu, E.n, E.m, E.rowptr.data(), E.col.data(), E.val.data(), E.e,
                                            Prec<T>::sps, A.out()));
    const std::vector<std::string> specs = compound_specs(b.opt);
    for (const std::string &s : specs) {
        SpsMatrix M;
        std::string why;
        if (build_format(b, A, s, M, why)) apply(M, "ours:" + s);
        else printf("  %-4s %-44s refused: %s\n", prec, ("ours:" + s).c_str(), why.c_str());
    }
    CK_SPS(cpu, sps_matrix_from_csr(cpu, p.X.n, p.X.m, p.X.rowptr.data(), p.X.col.data(), p.X.val.data(),
                                    Prec<T>::sps, X.out()));
    apply(X, "expansion csr");
    sps_tune_options o;
    sps_tune_options_default(&o);
    o.cache = "off", o.budget = 0.5;
    sps_tune_result res;
    SpsMatrix B;
    CK_SPS(cpu, sps_matrix_tune(A, &o, B.out(), &res));
    printf("  %-4s tune (CPU, budget 0.5 s): %s in %.2f s, %d timed, %d skipped\n", prec, res.choice, res.time_s,
           res.timed, res.skipped);
    apply(B, "ours:tuned");
}

int host_check_compound(Bench &b)
{
    try {
        CpuContext cpu;
        each_compound(b, [&](const CmpSource &src, const gen_csr *g, int prec) {
            if (prec == 0) host_check_one<float>(b, cpu.ctx, src, g);
            else host_check_one<double>(b, cpu.ctx, src, g);
        });
    } catch (const BenchError &e) {
        fprintf(stderr, "spbench: --host-check: %s\n", e.what());
        return 1;
    }
    watchdog_disarm();
    printf("spbench --host-check: %d failure(s)\n", b.failures);
    return b.failures ? 1 : 0;
}

/* ================================================================== report */
void compound_report_md(FILE *f, const Bench &b)
{
    if (!sb_table_rows(b.compound_rows)) return;
    fprintf(f, "## Compound SpMV: block and quaternion matrices (y = A x)\n\n");
    fprintf(f, "Views: native = our compound formats (spec: sps_matrix_convert_spec; ours:tuned = sps_matrix_tune "
               "with the default budget and no tuning file, tune_s its wall time); bsr = cuSPARSE cusparseSpMV on "
               "a BSR descriptor (BSR_ALG1, row-major blocks; a quaternion as its 4x4 real block); expansion = the "
               "scalar expansion (quaternion q = a+bi+cj+dk as [[a,-b,-c,-d],[b,a,-d,c],[c,d,a,-b],[d,-c,b,a]]) "
               "under our scalar formats and cuSPARSE's. GFLOP/s = 2 nnz_exp / t for every row: a quaternion "
               "entry counts 32 flops (16 multiply-adds, also its Hamilton product's native count), a b x b block "
               "2b^2. GB/s: minimal traffic of the row's view, each array once, padding excluded, x read and y "
               "written once: native 4(n+1) + (4 + nv s) nnz; bsr 4(n+1) + (4 + d^2 s) nnz; expansion "
               "4(nd+1) + (4 + s) nnz_exp; plus (m + n) d s, with n, nnz in entries, nv = scalars an entry "
               "(b^2 or 4), d = b or 4. x_bsr = best cuSPARSE BSR time / this time; x_scalar = our best scalar "
               "format on the expansion / this time (> 1: this row is faster). check as above.\n\n");
    sb_table_markdown(b.compound_rows, f);
    fputc('\n', f);
    fprintf(f, "### Compound summary: the issue's speedups\n\n");
    fprintf(f, "best/bsr = cuSPARSE BSR time / our best native time; best/scalar = our best scalar format on the "
               "expansion / our best native time; csr_exp_ms = the best cuSPARSE CSR kernel on the expansion.\n\n");
    sb_table_markdown(b.compound_summary, f);
    fputc('\n', f);
}
