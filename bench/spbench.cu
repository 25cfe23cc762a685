/* spbench — libspsolve SpMV and solvers against cuSPARSE on one GPU.
 *
 *   spbench [--quick] [--matrices DIR] [--out bench/results] [--precision f32|f64|both]
 *           [--reps 50] [--mode spmv|solver|all] [--only NAME[,NAME...]] ...   (--help lists all)
 *
 * What it does, in one process on one device:
 *  1. Measures the device-to-device copy bandwidth: cudaMemcpyAsync of 1 GiB,
 *     bytes read + bytes written, median of 20.  That is the 100% reference.
 *  2. For every matrix (built-in generators, then every .mtx / .mtx.gz under DIR) and precision:
 *     exports the library's CSR arrays (sps_matrix_export_csr) so that every
 *     kernel sees the same numbers, then for op = N (y = A x) and T (y = A^T x):
 *       ours      sps_operator_apply on the CUDA context, for each --formats entry
 *                 (default csr, coo; built with sps_matrix_convert);
 *       cuSPARSE  cusparseSpMV: CSR ALG1, CSR ALG2, COO ALG2, SELL ALG1 (slice 32,
 *                 converted on the host), and CSR ALG1 with op = TRANSPOSE.
 *     Each kernel is first run once on a poisoned y and checked against a host
 *     double-precision reference (verify() in spbench.h); a failed check is
 *     reported and not timed.  Then: 5 warm-up runs and the median of --reps runs
 *     timed with CUDA events on the stream the kernel runs on (the library's
 *     stream, sps_context_cuda_stream, for ours; the cuSPARSE handle's stream for
 *     theirs), the L2 cache flushed before each timed run; the output of the last
 *     run is checked again.  beta = 0, alpha = 1.
 *     A format that refuses the matrix (its padding would exceed max_fill x nnz:
 *     ELL on power-law rows, DIA off the band) gives rows of status "refused" with
 *     the library's message: a result, not a failure.
 *     Format conversion: for every --formats entry but csr, once its SpMV has
 *     passed the check, the median wall time of --convert-reps builds from the CSR
 *     matrix already on the device (sps_matrix_convert on the CUDA context), also
 *     as a multiple of the matrix's CSR SpMV time (issue 4: <= 10 on Poisson 128^3).
 *  3. Solver mode (spbench_solver.cu): CG, BiCGSTAB, GMRES time per iteration.
 *
 * Traffic model (ARCHITECTURE.md §7), the minimal traffic of y = op(A) x:
 *     bytes = matrix + x + y
 *     matrix = the CSR arrays once: 4 (rows + 1) + (4 + sizeof(T)) nnz
 *     x      = its length once (cols for N, rows for T), sizeof(T) each
 *     y      = written once; not read, since beta = 0
 * The same byte count is used for every kernel of a (matrix, precision, op), so
 * GB/s ranks kernels like time does: a format that stores more (COO row indices,
 * SELL padding) pays for it in time, shown beside it as fmt_MB.  GFLOP/s = 2 nnz / t.
 * "% copy" = (bytes / t) / copy bandwidth.  "speedup" = the best verified cuSPARSE
 * time for the same op divided by this kernel's time.
 *
 * Exit status: 0 all checks passed, 1 a check failed or a call errored (results
 * are still written), 2 bad usage, 3 the watchdog stopped a step, 77 no CUDA device. */
#include "spbench.h"

#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <chrono>
#include <ctime>
#include <functional>

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

/* ================================================================== shared helpers (spbench.h) */
std::string strprintf(const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(nullptr, 0, fmt, ap);
    va_end(ap);
    std::string s(n > 0 ? (size_t)n : 0, '\0');
    if (n > 0) vsnprintf(&s[0], (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    return s;
}

static bool sticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress: case cudaErrorLaunchFailure: case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress: case cudaErrorInvalidAddressSpace: case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError: case cudaErrorAssert: case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable: case cudaErrorUnknown:
        return true;
    default:
        return false;
    }
}

void throw_cuda(cudaError_t e, const char *what, const char *file, int line)
{
    std::string msg = strprintf("%s:%d: %s: %s (%s)", file, line, what, cudaGetErrorString(e), cudaGetErrorName(e));
    if (sticky(e)) throw DeviceLost(msg);
    throw BenchError(msg);
}

void throw_cusparse(cusparseStatus_t s, const char *what, const char *file, int line)
{
    std::string msg = strprintf("%s:%d: %s: %s", file, line, what, cusparseGetErrorString(s));
    if (s == CUSPARSE_STATUS_NOT_SUPPORTED) throw Unsupported(msg);
    throw BenchError(msg);
}

void throw_cublas(cublasStatus_t s, const char *what, const char *file, int line)
{
    throw BenchError(strprintf("%s:%d: %s: %s (%s)", file, line, what, cublasGetStatusString(s),
                               cublasGetStatusName(s)));
}

void throw_sps(sps_context ctx, sps_status s, const char *what, const char *file, int line)
{
    std::string msg = strprintf("%s:%d: %s: %s: %s", file, line, what, sps_status_name(s), sps_context_error(ctx));
    if (ctx) sps_context_clear_error(ctx);
    if (s == SPS_ERR_UNSUPPORTED) throw Unsupported(msg);
    throw BenchError(msg);
}

void check_device_alive(void)
{
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError(); /* clears a non-sticky error */
    if (e != cudaSuccess && sticky(e))
        throw DeviceLost(strprintf("the CUDA context is unusable: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e)));
}

DevBuf::DevBuf(size_t n) : bytes(n)
{
    CK_CUDA(cudaMalloc(&p, n > 0 ? n : 256)); /* never a null pointer for an empty array */
}

DevBuf::DevBuf(const void *host, size_t n) : DevBuf(n)
{
    if (n) CK_CUDA(cudaMemcpy(p, host, n, cudaMemcpyHostToDevice));
}

DevBuf::~DevBuf()
{
    if (p) cudaFree(p);
}

/* Reads n 16-byte words; writes *sink only if their XOR is a value the buffer's
 * constant fill cannot give, so the loads cannot be dropped and nothing is written. */
__global__ void l2_read_flush_kernel(const uint4 *__restrict__ p, size_t n, unsigned *sink)
{
    uint4 a = make_uint4(0, 0, 0, 0);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 w = __ldcg(p + i);
        a.x ^= w.x, a.y ^= w.y, a.z ^= w.z, a.w ^= w.w;
    }
    if ((a.x | a.y | a.z | a.w) == 0xdeadbeefu) *sink = a.x; /* 0x5A fill: never true */
}

void L2Flush::run(cudaStream_t s) const
{
    if (write) {
        static unsigned char v = 0;
        CK_CUDA(cudaMemsetAsync(buf.p, ++v, buf.bytes, s));
        return;
    }
    l2_read_flush_kernel<<<1024, 256, 0, s>>>(static_cast<const uint4 *>(buf.p), buf.bytes / sizeof(uint4),
                                              static_cast<unsigned *>(sink.p));
    CK_CUDA(cudaGetLastError());
}

uint64_t name_seed(const std::string &s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

std::string fmt_num(double v, int digits) { return std::isfinite(v) ? strprintf("%.*g", digits, v) : ""; }
std::string fmt_fixed(double v, int decimals) { return std::isfinite(v) ? strprintf("%.*f", decimals, v) : ""; }

/* ------------------------------------------------------------------ watchdog */
static char g_watchdog_msg[1024];
static size_t g_watchdog_len;

static void on_alarm(int)
{
    ssize_t w = write(2, g_watchdog_msg, g_watchdog_len);
    (void)w;
    _exit(3);
}

void watchdog_arm(const Bench &b, const std::string &step)
{
    if (b.opt.timeout_s <= 0) return;
    snprintf(g_watchdog_msg, sizeof g_watchdog_msg,
             "\nspbench: watchdog: step '%s' ran longer than %d s (a hung kernel?); aborting. "
             "Raise the limit with --timeout S (0 disables).\n",
             step.c_str(), b.opt.timeout_s);
    g_watchdog_len = strlen(g_watchdog_msg);
    signal(SIGALRM, on_alarm);
    alarm((unsigned)b.opt.timeout_s);
}

void watchdog_disarm(void) { alarm(0); }

/* ================================================================== options */
static void usage(FILE *f)
{
    fprintf(f,
            "usage: spbench [options]\n"
            "  SpMV and Krylov solvers of libspsolve against cuSPARSE on one GPU.\n"
            "  --quick               small matrices (poisson3d 48, banded 200k, power-law 200k,\n"
            "                        27-point 3x3-block stencil 20^3): well under 2 minutes\n"
            "  --matrices DIR        also every DIR/**.mtx and .mtx.gz (real; complex ones are skipped)\n"
            "  --out DIR             where results go (default bench/results)\n"
            "  --precision P         f32, f64 or both (default both)\n"
            "  --reps N              timed runs per kernel, median reported (default 50)\n"
            "  --warmup N            untimed runs before them (default 5)\n"
            "  --mode M              spmv, solver, add or all (default all: spmv and solver; add:\n"
            "                        C = a op(A) + b op(B) against cuSPARSE's csrgeam2, spbench_add.cu)\n"
            "  --only NAMES          comma-separated matrix names or shell patterns (see --list)\n"
            "  --formats LIST        libspsolve formats to time (default csr,coo; all: the scalar ones; auto: the\n"
            "                        model's pick; tuned: sps_matrix_tune's; or any of: %s;\n"
            "                        csr:rows, csr:merge: CSR with its SpMV schedule forced; ell:i32,\n"
            "                        sell:i32, rgcsr:i32: 32-bit column indices forced, i16: 16-bit)\n"
            "  --convert-reps N      timed builds per format conversion, median reported (default 10)\n"
            "  --maxit N             solver iterations per solve (default 200; rtol = atol = 0)\n"
            "  --restart M           GMRES restart length (default 30)\n"
            "  --variant K=V,...     launch variant of every format matrix (kernels/launch.h fields, e.g.\n"
            "                        csr_minb=6 or hola_early_mul=1,hola_minb=5; default: none)\n"
            "  --flush MODE          L2 flush before each timed run: read (default: a read of twice the L2,\n"
            "                        which leaves it clean), write (a memset of twice the L2, which leaves\n"
            "                        dirty lines the timed kernel writes back), none (= --no-flush)\n"
            "  --no-flush            keep the L2 cache warm between timed runs\n"
            "  --device N            CUDA device ordinal (default 0)\n"
            "  --timeout S           abort when one step takes longer than S seconds (default 600, 0 = off)\n"
            "  --suite S             scalar (default), compound (block and quaternion matrices: SpMV of our\n"
            "                        compound formats, cuSPARSE BSR and the scalar expansion) or all\n"
            "  --compound-gen LIST   compound generators instead of the defaults, e.g. stencil27:b=3:g=28,\n"
            "                        mesh27:b=3:g=30,qlap2d:g=224 (b: block size 2..8, g: grid points an axis);\n"
            "                        fembeam:g=G: spsolve-fem's cantilever K in 10G x G x G cells\n"
            "  --compound-mtx FILES  compound suite: also these Matrix Market files (comma-separated; quaternion\n"
            "                        files, or scalar ones with --compound-mtx-block B); without --compound-gen:\n"
            "                        instead of the generated matrices\n"
            "  --compound-mtx-block B  read the --compound-mtx files as B x B blocks (2..8)\n"
            "  --compound-cg         compound suite: also CG (--maxit iterations, rtol 0) on the native matrix (bcsr),\n"
            "                        the textbook cuSPARSE BSR CG and our sell CG on the expansion, ms an iteration\n"
            "  --compound-specs LIST our compound candidates, ';'-separated sps_matrix_convert_spec specs\n"
            "                        (default: bcsr, bell, bsell x entry-layout aos, soa; cmp_tpr 1..16; cmp_sched=1)\n"
            "  --host-check          compound suite without a GPU: generators, expansion, BSR arrays and every\n"
            "                        spec checked on the CPU backend against the reference (nothing timed)\n"
            "  --list                print the matrix names this run would use and exit\n"
            "Exit status: 0 ok, 1 a check failed or a call errored, 2 usage, 3 watchdog, 77 no CUDA device.\n",
            sps_format_list());
}

static std::vector<std::string> split_list(const char *s, char sep = ',')
{
    std::vector<std::string> v;
    std::string cur;
    for (const char *p = s;; p++) {
        if (*p == sep || *p == 0) {
            while (!cur.empty() && cur.back() == ' ') cur.pop_back();
            if (!cur.empty()) v.push_back(cur);
            cur.clear();
            if (!*p) break;
        } else if (*p != ' ' || !cur.empty()) {
            cur += *p;
        }
    }
    return v;
}

static bool parse_int(const char *s, int lo, int hi, int *out)
{
    char *end = nullptr;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = (int)v;
    return true;
}

/* Returns -1 to go on, else the exit status. */
static sps_status format_of(const std::string &name, sps_format *id, sps_options *opt);

static int parse_options(int argc, char **argv, Options &o, bool &list_only)
{
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto value = [&](void) -> const char * {
            if (i + 1 >= argc) {
                fprintf(stderr, "spbench: %s needs a value\n", a.c_str());
                return nullptr;
            }
            return argv[++i];
        };
        const char *v = nullptr;
        auto bad = [&](const char *what) {
            fprintf(stderr, "spbench: %s %s: %s (try --help)\n", a.c_str(), v ? v : "", what);
            return 2;
        };
        if (a == "--help" || a == "-h") {
            usage(stdout);
            return 0;
        } else if (a == "--quick") {
            o.quick = true;
        } else if (a == "--no-flush") {
            o.flush_l2 = false;
        } else if (a == "--flush") {
            if (!(v = value())) return 2;
            const std::string m = v;
            if (m != "read" && m != "write" && m != "none") return bad("read, write or none");
            o.flush_l2 = m != "none";
            o.flush_write = m == "write";
        } else if (a == "--variant") { /* key=value,... of kernels/launch.h, e.g. csr_minb=6,hola_early_mul=1 */
            if (!(v = value())) return 2;
            char why[160];
            if (sps_launch_variant_parse(v, &o.variant, why, sizeof why) != 0) return bad(why);
        } else if (a == "--list") {
            list_only = true;
        } else if (a == "--host-check") {
            o.host_check = true;
            o.suite_scalar = false, o.suite_compound = true;
        } else if (a == "--suite") {
            if (!(v = value())) return 2;
            const std::string m = v;
            if (m != "scalar" && m != "compound" && m != "all") return bad("scalar, compound or all");
            o.suite_scalar = m != "compound";
            o.suite_compound = m != "scalar";
        } else if (a == "--compound-gen" || a == "--compound-mtx" || a == "--compound-specs") {
            if (!(v = value())) return 2;
            std::vector<std::string> &l = a == "--compound-gen" ? o.compound_gen
                                          : a == "--compound-mtx" ? o.compound_mtx
                                                                  : o.compound_specs;
            l = split_list(v, a == "--compound-specs" ? ';' : ',');
            if (l.empty()) return bad("expected a list");
        } else if (a == "--compound-cg") {
            o.compound_cg = 1;
        } else if (a == "--compound-mtx-block") {
            if (!(v = value()) || !parse_int(v, 2, 8, &o.compound_mtx_block)) return v ? bad("expected 2..8") : 2;
        } else if (a == "--matrices" || a == "--out" || a == "--precision" || a == "--reps" || a == "--warmup" ||
                   a == "--mode" || a == "--only" || a == "--formats" || a == "--maxit" || a == "--restart" ||
                   a == "--device" || a == "--timeout" || a == "--convert-reps") {
            if (!(v = value())) return 2;
            if (a == "--matrices") o.matrices_dir = v;
            else if (a == "--out") o.out_dir = v;
            else if (a == "--precision") {
                const std::string p = v;
                if (p == "f32") o.f32 = true, o.f64 = false;
                else if (p == "f64") o.f32 = false, o.f64 = true;
                else if (p == "both") o.f32 = o.f64 = true;
                else return bad("expected f32, f64 or both");
            } else if (a == "--reps") {
                if (!parse_int(v, 1, 1000000, &o.reps)) return bad("expected an integer >= 1");
            } else if (a == "--warmup") {
                if (!parse_int(v, 0, 1000000, &o.warmup)) return bad("expected an integer >= 0");
            } else if (a == "--mode") {
                const std::string m = v;
                o.add = false;
                if (m == "spmv") o.spmv = true, o.solver = false;
                else if (m == "solver") o.spmv = false, o.solver = true;
                else if (m == "all") o.spmv = o.solver = true;
                else if (m == "add") o.spmv = o.solver = false, o.add = true;
                else return bad("expected spmv, solver, add or all");
            } else if (a == "--only") {
                o.only = split_list(v);
                if (o.only.empty()) return bad("expected matrix names");
            } else if (a == "--formats") {
                o.formats = split_list(strcmp(v, "all") == 0 ? sps_format_list() : v);
                if (strcmp(v, "all") == 0) /* the scalar formats: the benchmark matrices are scalar */
                    o.formats.erase(std::remove_if(o.formats.begin(), o.formats.end(),
                                                   [](const std::string &f) {
                                                       sps_format id;
                                                       return sps_format_by_name(f.c_str(), &id) == SPS_OK &&
                                                              sps_format_compound(id);
                                                   }),
                                    o.formats.end());
                if (o.formats.empty()) return bad("expected format names");
                for (const std::string &f : o.formats) {
                    sps_format id;
                    sps_options fo = NULL;
                    /* a spec ("csr csr-kernel=merge"): its first word names the format */
                    const std::string fname = f.substr(0, f.find_first_of(" "));
                    const sps_status fs = f == "auto" || f == "tuned" ? SPS_OK : format_of(fname, &id, &fo);
                    sps_options_destroy(fo);
                    if (fs != SPS_OK) {
                        fprintf(stderr, "spbench: --formats: unknown format '%s' (this build has: %s)\n", f.c_str(),
                                sps_format_list());
                        return 2;
                    }
                }
            } else if (a == "--maxit") {
                if (!parse_int(v, 1, 100000000, &o.maxit)) return bad("expected an integer >= 1");
            } else if (a == "--restart") {
                if (!parse_int(v, 1, 100000, &o.restart)) return bad("expected an integer >= 1");
            } else if (a == "--device") {
                if (!parse_int(v, 0, 1024, &o.device)) return bad("expected a device ordinal");
            } else if (a == "--timeout") {
                if (!parse_int(v, 0, 86400 * 7, &o.timeout_s)) return bad("expected seconds >= 0");
            } else if (a == "--convert-reps") {
                if (!parse_int(v, 1, 100000, &o.convert_reps)) return bad("expected an integer >= 1");
            }
        } else {
            fprintf(stderr, "spbench: unknown argument '%s' (try --help)\n", a.c_str());
            return 2;
        }
    }
    return -1;
}

/* ================================================================== matrices */
struct MatrixSource {
    std::string name;
    enum Kind { LIBGEN, GEN, FILE_MTX } kind;
    std::string spec;                             /* LIBGEN: sps_matrix_generate spec; FILE_MTX: path */
    std::function<const char *(gen_csr *)> make;  /* GEN */
    bool spd;                                     /* known SPD: solver mode runs on it */
};

static std::string count_name(int64_t n)
{
    if (n % 1000000 == 0) return strprintf("%lldM", (long long)(n / 1000000));
    if (n % 1000 == 0) return strprintf("%lldk", (long long)(n / 1000));
    return strprintf("%lld", (long long)n);
}

static std::vector<MatrixSource> builtin_sources(bool quick)
{
    std::vector<MatrixSource> v;
    auto poisson = [&](int N) {
        v.push_back({strprintf("poisson3d-%d", N), MatrixSource::LIBGEN, strprintf("poisson3d:%d", N), nullptr, true});
    };
    auto banded = [&](int32_t n, double sigma, const char *tag, uint64_t seed) {
        v.push_back({strprintf("banded-%s-%s", tag, count_name(n).c_str()), MatrixSource::GEN, "",
                     [=](gen_csr *A) { return gen_banded(A, n, 22, sigma, seed); }, false});
    };
    auto powerlaw = [&](int32_t n) {
        v.push_back({strprintf("powerlaw-%s", count_name(n).c_str()), MatrixSource::GEN, "",
                     [=](gen_csr *A) { return gen_powerlaw(A, n, 20.0, 10000, 1.5, 3); }, false});
    };
    auto arrow = [&](int32_t n, int32_t k) {
        v.push_back({strprintf("arrow-%s-k%d", count_name(n).c_str(), k), MatrixSource::GEN, "",
                     [=](gen_csr *A) { return gen_arrow(A, n, k, 4); }, false});
    };
    auto stencil = [&](int32_t g) {
        v.push_back({strprintf("stencil27b3-%d", g), MatrixSource::GEN, "",
                     [=](gen_csr *A) { return gen_stencil27_b3(A, g); }, true});
    };
    if (quick) {
        poisson(48);
        banded(200000, 1e3, "s1e3", 1);
        banded(200000, 1e5, "s1e5", 2);
        powerlaw(200000);
        stencil(20);
        arrow(200000, 4);
    } else {
        poisson(48);
        poisson(128);
        banded(1000000, 1e3, "s1e3", 1);
        banded(1000000, 1e5, "s1e5", 2);
        powerlaw(2000000);
        stencil(40);
        arrow(1000000, 4);
    }
    return v;
}

static bool ends_with(const std::string &s, const char *suf)
{
    const size_t n = strlen(suf);
    return s.size() >= n && s.compare(s.size() - n, n, suf) == 0;
}

static void scan_dir(const std::string &dir, const std::string &rel, std::vector<std::string> &out)
{
    DIR *d = opendir(dir.c_str());
    if (!d) throw BenchError(strprintf("--matrices: cannot open %s: %s", dir.c_str(), strerror(errno)));
    std::vector<std::string> names;
    while (struct dirent *e = readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") names.push_back(n);
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string &n : names) {
        const std::string path = dir + "/" + n, r = rel.empty() ? n : rel + "/" + n;
        struct stat st;
        if (stat(path.c_str(), &st) != 0) continue;
        if (S_ISDIR(st.st_mode)) scan_dir(path, r, out);
        else if (S_ISREG(st.st_mode) && (ends_with(n, ".mtx") || ends_with(n, ".mtx.gz"))) out.push_back(r);
    }
}

static std::vector<MatrixSource> file_sources(const std::string &dir)
{
    std::vector<std::string> rel;
    scan_dir(dir, "", rel);
    std::vector<MatrixSource> v;
    for (const std::string &r : rel) {
        std::string name = r.substr(0, r.size() - (ends_with(r, ".gz") ? 7 : 4));
        v.push_back({name, MatrixSource::FILE_MTX, dir + "/" + r, nullptr, false});
    }
    if (v.empty()) fprintf(stderr, "spbench: warning: no .mtx or .mtx.gz files under %s\n", dir.c_str());
    return v;
}

bool selected(const Options &o, const std::string &name)
{
    if (o.only.empty()) return true;
    for (const std::string &p : o.only)
        if (fnmatch(p.c_str(), name.c_str(), 0) == 0) return true;
    return false;
}

/* Build the library matrix of precision T. */
template <class T> static void build_matrix(Bench &b, const MatrixSource &src, const gen_csr *g, SpsMatrix &A)
{
    switch (src.kind) {
    case MatrixSource::LIBGEN:
        CK_SPS(b.ctx, sps_matrix_generate(b.ctx, src.spec.c_str(), Prec<T>::sps, A.out()));
        break;
    case MatrixSource::GEN: {
        std::vector<T> val((size_t)g->nnz);
        for (size_t k = 0; k < val.size(); k++) val[k] = (T)g->val[k];
        CK_SPS(b.ctx, sps_matrix_from_csr(b.ctx, g->n, g->m, g->rowptr, g->col, val.data(), Prec<T>::sps, A.out()));
        break;
    }
    case MatrixSource::FILE_MTX:
        CK_SPS(b.ctx, sps_matrix_read_mtx(b.ctx, src.spec.c_str(), Prec<T>::sps, A.out()));
        break;
    }
}

/* ================================================================== SpMV */
/* Sliced ELLPACK for cuSPARSE: slice height 32, one warp per slice. */
static const int kSellSlice = 32;

/* Sliced ELLPACK as cuSPARSE stores it: slice s holds rows [32 s, 32 s + 32), its
 * entries column-major (entry k of row r at off[s] + 32 k + r), padded to the
 * slice's longest row with column -1 and value 0; the last slice is padded to
 * 32 rows too. */
template <class T>
static bool build_sell(const HostCsr<T> &A, std::vector<int32_t> &off, std::vector<int32_t> &col, std::vector<T> &val,
                       std::string &why)
{
    const int64_t C = kSellSlice, nslices = ((int64_t)A.n + C - 1) / C;
    off.assign((size_t)nslices + 1, 0);
    int64_t total = 0;
    for (int64_t s = 0; s < nslices; s++) {
        int64_t w = 0;
        for (int64_t i = s * C; i < std::min<int64_t>((s + 1) * C, A.n); i++)
            w = std::max<int64_t>(w, A.rowptr[(size_t)i + 1] - A.rowptr[(size_t)i]);
        total += C * w;
        if (total > INT32_MAX) {
            why = strprintf("SELL-32 would store more than 2^31 entries (%.1fx nnz at the point of giving up)",
                            (double)total / (double)std::max<int64_t>(A.nnz, 1));
            return false;
        }
        off[(size_t)s + 1] = (int32_t)total;
    }
    col.assign((size_t)total, -1);
    val.assign((size_t)total, (T)0);
    for (int64_t i = 0; i < A.n; i++) {
        const int64_t base = off[(size_t)(i / C)] + i % C;
        for (int64_t k = A.rowptr[(size_t)i]; k < A.rowptr[(size_t)i + 1]; k++) {
            const int64_t slot = base + (k - A.rowptr[(size_t)i]) * C;
            col[(size_t)slot] = A.col[(size_t)k];
            val[(size_t)slot] = A.val[(size_t)k];
        }
    }
    return true;
}

template <class T> void upload_cusparse(const HostCsr<T> &A, CuMatrix &d)
{
    d.rowptr = DevBuf(A.rowptr.data(), A.rowptr.size() * sizeof(int32_t));
    d.col = DevBuf(A.col.data(), A.col.size() * sizeof(int32_t));
    d.val = DevBuf(A.val.data(), A.val.size() * sizeof(T));
    std::vector<int32_t> row((size_t)A.nnz);
    for (int32_t i = 0; i < A.n; i++)
        for (int64_t k = A.rowptr[(size_t)i]; k < A.rowptr[(size_t)i + 1]; k++) row[(size_t)k] = i;
    d.coo_row = DevBuf(row.data(), row.size() * sizeof(int32_t));
}

const CuKernel kCuKernels[] = {
    {"cusparse:csr-alg1", CuFormat::CSR, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG1},
    {"cusparse:csr-alg2", CuFormat::CSR, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG2},
    {"cusparse:coo-alg2", CuFormat::COO, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_COO_ALG2},
    {"cusparse:sell32", CuFormat::SELL, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_SPMV_SELL_ALG1},
    {"cusparse:csr-alg1", CuFormat::CSR, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_SPMV_CSR_ALG1},
};
const size_t kNumCuKernels = sizeof kCuKernels / sizeof kCuKernels[0];

template <class T>
void run_cusparse_kernel(Bench &b, const CuKernel &k, const HostCsr<T> &A, const CuMatrix &d, const DevBuf &x,
                         const DevBuf &y, const Reference &ref, KernelResult &r)
{
    const bool T_op = k.op != CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cudaDataType dt = Prec<T>::cuda;
    const double s = sizeof(T);
    const T alpha = 1, beta = 0;
    DevBuf sell_off, sell_col, sell_val, work; /* outlive the descriptors below */
    SpMat mat;
    DnVec vx, vy;
    auto setup = [&] {
        switch (k.format) {
        case CuFormat::CSR:
            r.fmt_bytes = A.bytes();
            CK_SPARSE(cusparseCreateCsr(mat.out(), A.n, A.m, A.nnz, d.rowptr.p, d.col.p, d.val.p, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
            break;
        case CuFormat::COO:
            r.fmt_bytes = (8.0 + s) * (double)A.nnz;
            CK_SPARSE(cusparseCreateCoo(mat.out(), A.n, A.m, A.nnz, d.coo_row.p, d.col.p, d.val.p, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, dt));
            break;
        case CuFormat::SELL: { /* converted on the host */
            std::vector<int32_t> off, col;
            std::vector<T> val;
            std::string why;
            if (!build_sell(A, off, col, val, why)) throw Unsupported(why);
            sell_off = DevBuf(off.data(), off.size() * sizeof(int32_t));
            sell_col = DevBuf(col.data(), col.size() * sizeof(int32_t));
            sell_val = DevBuf(val.data(), val.size() * sizeof(T));
            r.fmt_bytes = (double)sell_off.bytes + (4.0 + s) * (double)val.size();
            CK_SPARSE(cusparseCreateSlicedEll(mat.out(), A.n, A.m, A.nnz, (int64_t)val.size(), kSellSlice, sell_off.p,
                                              sell_col.p, sell_val.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                              CUSPARSE_INDEX_BASE_ZERO, dt));
            break;
        }
        case CuFormat::BSR: /* A: the scalar expansion, for its sizes; d: its blocks */
            r.fmt_bytes = (double)(d.rowptr.bytes + d.col.bytes + d.val.bytes);
            CK_SPARSE(cusparseCreateBsr(mat.out(), A.n / d.block, A.m / d.block, d.bnnz, d.block, d.block, d.rowptr.p,
                                        d.col.p, d.val.p, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, dt, CUSPARSE_ORDER_ROW));
            break;
        }
        CK_SPARSE(cusparseCreateDnVec(vx.out(), T_op ? A.n : A.m, x.p, dt));
        CK_SPARSE(cusparseCreateDnVec(vy.out(), T_op ? A.m : A.n, y.p, dt));
        size_t bytes = 0;
        CK_SPARSE(cusparseSpMV_bufferSize(b.sparse, k.op, &alpha, mat, vx, &beta, vy, dt, k.alg, &bytes));
        work = DevBuf(bytes);
        /* optional analysis that speeds up later calls on the same matrix: cuSPARSE
           gets its best case, as our format build is outside the timing too */
        cusparseStatus_t ps = cusparseSpMV_preprocess(b.sparse, k.op, &alpha, mat, vx, &beta, vy, dt, k.alg, work.p);
        if (ps != CUSPARSE_STATUS_SUCCESS && ps != CUSPARSE_STATUS_NOT_SUPPORTED)
            throw_cusparse(ps, "cusparseSpMV_preprocess", __FILE__, __LINE__);
    };
    measure<T>(b, b.cu_stream, y.as<T>(), ref, r, setup, [&] {
        CK_SPARSE(cusparseSpMV(b.sparse, k.op, &alpha, mat, vx, &beta, vy, dt, k.alg, work.p));
    });
}

/* Our format `name` (format_of) built from the CSR matrix A already on the device
 * (sps_matrix_convert on the CUDA context, the format's default options but the
 * CSR schedule of csr:rows / csr:merge).  Returns
 * false when the format refuses the matrix -- its padding would exceed max_fill
 * x nnz (formats/padded.c, formats/dia.c: SPS_ERR_ARG with a message naming
 * max_fill and the force option) -- with the library's message in why; throws on
 * any other failure. */
/* A --formats entry: a format name, or csr:rows / csr:merge (CSR with its SpMV
 * schedule forced, the option csr-kernel), or ell/sell/rgcsr:i32 / :i16 (the
 * column index width forced, the option index-bits).  *opt: NULL (the defaults)
 * or options for the caller to destroy. */
static sps_status format_of(const std::string &name, sps_format *id, sps_options *opt)
{
    *opt = NULL;
    const size_t colon = name.find(':');
    if (colon == std::string::npos) return sps_format_by_name(name.c_str(), id);
    const std::string base = name.substr(0, colon), kind = name.substr(colon + 1);
    const char *key = NULL, *value = NULL;
    if (base == "csr" && (kind == "rows" || kind == "merge")) {
        key = "csr-kernel";
        value = kind.c_str();
    } else if ((base == "ell" || base == "sell" || base == "rgcsr") && (kind == "i32" || kind == "i16")) {
        key = "index-bits";
        value = kind == "i32" ? "32" : "16";
    } else {
        return SPS_ERR_ARG;
    }
    sps_status st = sps_format_by_name(base.c_str(), id);
    if (st == SPS_OK) st = sps_format_options_create(*id, opt);
    if (st == SPS_OK) st = sps_options_set(*opt, key, value);
    return st;
}

/* A --formats entry (format_of), or a spec of sps_matrix_convert_spec: a name
 * with a blank or '=' in it ("bsell entry-layout=soa variant=cmp_tpr=4"), which
 * carries its own launch variant (--variant applies to the format names only).
 * Errors land in A's context. */
bool build_format(Bench &b, sps_matrix A, const std::string &name, SpsMatrix &out, std::string &why)
{
    sps_context ctx = sps_matrix_context(A);
    const bool spec = name.find_first_of(" =") != std::string::npos;
    /* "auto": the model's pick (what spsolve builds by default); "tuned": sps_matrix_tune
     * with its default budget and no tuning file (a cached choice would skip the timing) */
    const bool picked = name == "auto" || name == "tuned";
    sps_tune_options to;
    sps_tune_options_default(&to);
    to.cache = "off";
    sps_tune_result tr;
    memset(&tr, 0, sizeof tr);
    sps_format id;
    sps_options opt = NULL;
    const sps_status fs = spec || picked ? SPS_OK : format_of(name, &id, &opt);
    const sps_status st = fs != SPS_OK       ? fs
                          : name == "auto"  ? sps_matrix_convert(A, SPS_FMT_AUTO, NULL, out.out())
                          : name == "tuned" ? sps_matrix_tune(A, &to, out.out(), &tr)
                          : spec            ? sps_matrix_convert_spec(A, name.c_str(), out.out())
                                            : sps_matrix_convert(A, id, opt, out.out());
    sps_options_destroy(opt);
    CK_SPS(ctx, fs);
    if (st == SPS_OK) {
        if (name == "tuned") /* what it chose, and the times it chose by (its own flushed, event-timed runs) */
            b.tune_choice = strprintf("%s (tuner: %.4f ms, csr %.4f ms, %d timed, %.2f s)", tr.choice, tr.chosen_ms,
                                      tr.default_ms, tr.timed, tr.time_s);
        if (!spec && !picked) CK_SPS(ctx, sps_matrix_set_launch_variant(out, &b.opt.variant));
        return true;
    }
    const char *msg = sps_context_error(ctx);
    /* the refusal names the option as it is set (max-fill) since ef5e256: with max_fill here
       every refusal counted as a failure */
    if (st == SPS_ERR_ARG && msg && strstr(msg, "max-fill") && strstr(msg, "force")) {
        why = msg;
        sps_context_clear_error(ctx);
        return false;
    }
    throw_sps(ctx, st, spec ? "sps_matrix_convert_spec" : "sps_matrix_convert", __FILE__, __LINE__);
}

/* Median wall time in ms of --convert-reps builds of `id` from A.  The device is
 * idle when the clock starts and synchronised (the library's stream, then the
 * whole device) before it stops, so the build's allocations, kernels and host
 * round trips all count; destroying each build happens after the clock stops. */
static double time_convert(Bench &b, sps_matrix A, const std::string &id)
{
    std::vector<double> t;
    for (int i = 0; i < b.opt.convert_reps; i++) {
        SpsMatrix M;
        std::string why;
        CK_CUDA(cudaDeviceSynchronize());
        const auto t0 = std::chrono::steady_clock::now();
        if (!build_format(b, A, id, M, why)) throw BenchError("refused on a later build: " + why);
        CK_SPS(b.ctx, sps_context_synchronize(b.ctx));
        CK_CUDA(cudaDeviceSynchronize());
        t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(t.begin(), t.end());
    const size_t n = t.size();
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

template void upload_cusparse<float>(const HostCsr<float> &, CuMatrix &);
template void upload_cusparse<double>(const HostCsr<double> &, CuMatrix &);
template void run_cusparse_kernel<float>(Bench &, const CuKernel &, const HostCsr<float> &, const CuMatrix &,
                                         const DevBuf &, const DevBuf &, const Reference &, KernelResult &);
template void run_cusparse_kernel<double>(Bench &, const CuKernel &, const HostCsr<double> &, const CuMatrix &,
                                          const DevBuf &, const DevBuf &, const Reference &, KernelResult &);

/* Our format `format` (build_format), y = op(A) x for the first nops of the ops N,
 * T on one build.  For a format other than csr (cr != NULL): the first build
 * (untimed; it also warms the build's kernels up) is the one the SpMV rows
 * measure; a refusal or a failed build marks the rows and the conversion row;
 * once op N has passed its check, the builds are timed (time_convert) when
 * time_builds -- verification before timing. */
template <class T>
void run_ours(Bench &b, sps_matrix A, const std::string &format, const SpsVector *vx, const SpsVector *vy,
              const Reference *ref, KernelResult *r /* [nops]: N, T */, ConvertResult *cr, int nops, bool time_builds)
{
    SpsMatrix converted;
    SpsOperator op; /* after `converted`: destroyed first */
    const T alpha = 1, beta = 0;
    if (cr) {
        cr->format = format;
        std::string why;
        bool built = false;
        guarded(b, cr->status, cr->detail, [&] {
            CK_CUDA(cudaDeviceSynchronize());
            built = build_format(b, A, format, converted, why);
            if (!built) {
                cr->status = "refused";
                cr->detail = why;
            }
        });
        if (!built) { /* refused, unsupported or error: the conversion row says why (and counts an error) */
            for (int o = 0; o < nops; o++) r[o].status = cr->status, r[o].detail = cr->detail, r[o].build_row = true;
            return;
        }
    }
    auto setup = [&] {
        if (op) return;
        sps_matrix M = cr ? static_cast<sps_matrix>(converted) : A;
        sps_matrix_info_t info;
        CK_SPS(b.ctx, sps_matrix_info(M, &info));
        for (int o = 0; o < nops; o++) r[o].fmt_bytes = (double)info.bytes;
        if (cr) cr->fmt_bytes = (double)info.bytes, cr->fill_percent = info.fill_percent;
        CK_SPS(b.ctx, sps_operator_from_matrix(M, op.out()));
    };
    for (int o = 0; o < nops; o++) {
        const sps_op_mode mode = o == 0 ? SPS_OP_N : SPS_OP_T;
        measure<T>(b, b.lib_stream, static_cast<T *>(sps_vector_data(vy[o])), ref[o], r[o], setup,
                   [&] { CK_SPS(b.ctx, sps_operator_apply(op, mode, &alpha, vx[o], &beta, vy[o])); });
    }
    if (!cr) return;
    op.reset();
    converted.reset();
    if (r[0].status != "ok") {
        cr->status = "not timed";
        cr->detail = "the SpMV (op N) of the built matrix is '" + r[0].status + "'";
        return;
    }
    cr->status = "ok";
    if (format == "tuned") cr->detail = b.tune_choice; /* the conversion row's note: the choice */
    if (time_builds && format != "tuned") /* a tune's cost is its budget, not a build */
        guarded(b, cr->status, cr->detail, [&] { cr->ms = time_convert(b, A, format); });
}
template void run_ours<float>(Bench &, sps_matrix, const std::string &, const SpsVector *, const SpsVector *,
                              const Reference *, KernelResult *, ConvertResult *, int, bool);
template void run_ours<double>(Bench &, sps_matrix, const std::string &, const SpsVector *, const SpsVector *,
                               const Reference *, KernelResult *, ConvertResult *, int, bool);

enum { SPMV_COLS = 16, CONVERT_COLS = 14 };

static sb_table *spmv_table_new(void)
{
    static const char *head[SPMV_COLS] = {"matrix",  "rows", "cols",  "nnz",     "precision", "op",
                                          "kernel",  "status", "ms",  "GFLOP/s", "GB/s",      "%copy",
                                          "speedup", "fmt_MB", "check", "note"};
    return sb_table_new(SPMV_COLS, head, "lrrrllllrrrrrrrl");
}

static sb_table *convert_table_new(void)
{
    static const char *head[CONVERT_COLS] = {"matrix",  "rows",        "nnz",    "precision", "format",
                                             "status",  "convert_ms",  "spmv_ms", "spmv_kernel", "x_spmv",
                                             "within_10x", "fill_%",   "fmt_MB", "note"};
    return sb_table_new(CONVERT_COLS, head, "lrrlllrrlrlrrl");
}

void table_add(sb_table *t, const std::string *cells, int n)
{
    std::vector<const char *> row((size_t)n);
    for (int c = 0; c < n; c++) row[(size_t)c] = cells[c].c_str();
    if (sb_table_add(t, row.data()) != 0) throw BenchError("out of memory for the result table");
}

/* The conversion rows of one matrix and precision.  The unit is our CSR SpMV
 * (op N) of the same matrix and precision, or, when csr is not among --formats
 * (or failed), the fastest verified cuSPARSE CSR kernel (op N). */
static void report_conversions(Bench &b, const std::string &name, const char *prec, int32_t rows, int64_t nnz,
                               const std::vector<KernelResult> &res, const std::vector<ConvertResult> &conv)
{
    double unit = NAN;
    std::string unit_kernel;
    auto pick = [&](bool ours) { /* the fastest verified op-N CSR kernel, ours or cuSPARSE's */
        for (const KernelResult &r : res)
            if (r.op == 'N' && r.status == "ok" && (std::isnan(unit) || r.ms < unit) &&
                (ours ? r.kernel == "ours:csr" : r.cusparse && r.kernel.compare(0, 12, "cusparse:csr") == 0))
                unit = r.ms, unit_kernel = r.kernel;
    };
    pick(true);
    if (std::isnan(unit)) pick(false);
    for (const ConvertResult &c : conv) {
        if (c.format.empty()) continue; /* csr: the source format */
        const double x = c.ms / unit;
        const std::string cells[CONVERT_COLS] = {
            name, strprintf("%d", rows), strprintf("%lld", (long long)nnz), prec, c.format, c.status,
            fmt_num(c.ms, 4), fmt_num(unit, 4), std::isfinite(x) ? unit_kernel : "", fmt_fixed(x, 1),
            std::isfinite(x) ? (x <= 10.0 ? "yes" : "no") : "", fmt_fixed(c.fill_percent, 1),
            fmt_fixed(c.fmt_bytes / 1e6, 1), c.detail};
        table_add(b.convert_rows, cells, CONVERT_COLS);
        if (c.status == "ok")
            printf("  %-4s   convert %-12s %9.4f ms = %6.1f x SpMV (%s)  fill %.1f%%%s%s\n", prec, c.format.c_str(), c.ms,
                   x, unit_kernel.empty() ? "no CSR SpMV time" : unit_kernel.c_str(), c.fill_percent,
                   c.detail.empty() ? "" : "  ", c.detail.c_str());
        else {
            printf("  %-4s   convert %-12s %s: %s\n", prec, c.format.c_str(), c.status.c_str(), c.detail.c_str());
            b.notes.push_back(strprintf("%s %s convert %s: %s: %s", name.c_str(), prec, c.format.c_str(),
                                        c.status.c_str(), c.detail.c_str()));
        }
    }
}

template <class T> static void bench_spmv(Bench &b, const std::string &name, sps_matrix A, const HostCsr<T> &csr)
{
    const char *prec = Prec<T>::name;
    const std::string tag = name + "/" + prec;
    /* x for N has cols entries, for T rows; fresh random values per matrix, precision and op */
    const std::vector<T> x[2] = {random_vector<T>((size_t)csr.m, name_seed(tag + "/N")),
                                 random_vector<T>((size_t)csr.n, name_seed(tag + "/T"))};
    const Reference ref[2] = {reference_spmv(csr, x[0], false), reference_spmv(csr, x[1], true)};
    std::vector<KernelResult> res;
    /* a failure outside one kernel's measurement (allocating vectors or copies)
       marks every row of its group that did not run */
    auto group_failed = [&](size_t first, const BenchError &e) {
        for (size_t i = first; i < res.size(); i++)
            if (res[i].detail == "not run") res[i].detail = e.what();
        b.failures++;
        check_device_alive();
    };

    /* ours, through the public API; the conversion of every format but csr */
    const size_t ours0 = res.size();
    std::vector<ConvertResult> conv(b.opt.formats.size());
    for (const std::string &f : b.opt.formats)
        for (int o = 0; o < 2; o++) {
            KernelResult r;
            r.kernel = "ours:" + f, r.op = "NT"[o], r.detail = "not run";
            res.push_back(r);
        }
    try {
        SpsVector vx[2], vy[2];
        CK_SPS(b.ctx, sps_vector_from_host(b.ctx, csr.m, Prec<T>::sps, x[0].data(), vx[0].out()));
        CK_SPS(b.ctx, sps_vector_from_host(b.ctx, csr.n, Prec<T>::sps, x[1].data(), vx[1].out()));
        CK_SPS(b.ctx, sps_vector_create(b.ctx, csr.n, Prec<T>::sps, vy[0].out()));
        CK_SPS(b.ctx, sps_vector_create(b.ctx, csr.m, Prec<T>::sps, vy[1].out()));
        for (size_t i = 0; i < b.opt.formats.size(); i++)
            run_ours<T>(b, A, b.opt.formats[i], vx, vy, ref, &res[ours0 + 2 * i],
                        b.opt.formats[i] == "csr" ? nullptr : &conv[i], 2, true);
    } catch (const DeviceLost &) {
        throw;
    } catch (const BenchError &e) {
        group_failed(ours0, e);
    }

    /* cuSPARSE on its own copies of the same arrays */
    const size_t cu0 = res.size();
    for (const CuKernel &k : kCuKernels) {
        KernelResult r;
        r.kernel = k.name, r.op = k.op == CUSPARSE_OPERATION_NON_TRANSPOSE ? 'N' : 'T', r.cusparse = true;
        r.detail = "not run";
        res.push_back(r);
    }
    try {
        CuMatrix d;
        upload_cusparse(csr, d);
        const DevBuf dx[2] = {DevBuf(x[0].data(), x[0].size() * sizeof(T)), DevBuf(x[1].data(), x[1].size() * sizeof(T))};
        const DevBuf dy[2] = {DevBuf((size_t)csr.n * sizeof(T)), DevBuf((size_t)csr.m * sizeof(T))};
        for (size_t i = 0; i < kNumCuKernels; i++) {
            const int o = res[cu0 + i].op == 'N' ? 0 : 1;
            run_cusparse_kernel<T>(b, kCuKernels[i], csr, d, dx[o], dy[o], ref[o], res[cu0 + i]);
        }
    } catch (const DeviceLost &) {
        throw;
    } catch (const BenchError &e) {
        group_failed(cu0, e);
    }

    /* speed-up over the best verified cuSPARSE kernel of the same op */
    for (char op : {'N', 'T'}) {
        double best = NAN;
        for (const KernelResult &r : res)
            if (r.cusparse && r.op == op && r.status == "ok" && (std::isnan(best) || r.ms < best)) best = r.ms;
        for (KernelResult &r : res)
            if (r.op == op && r.status == "ok") r.speedup = best / r.ms;
    }
    for (const KernelResult &r : res) {
        const double bytes = csr.bytes() + sizeof(T) * ((double)csr.n + (double)csr.m); /* matrix + x + y */
        const double gflops = 2.0 * (double)csr.nnz / (r.ms * 1e-3) / 1e9, gbs = bytes / (r.ms * 1e-3) / 1e9;
        const std::string cells[SPMV_COLS] = {name, strprintf("%d", csr.n), strprintf("%d", csr.m),
                                              strprintf("%lld", (long long)csr.nnz), prec, std::string(1, r.op),
                                              r.kernel, r.status, fmt_num(r.ms, 4), fmt_fixed(gflops, 1),
                                              fmt_fixed(gbs, 1), fmt_fixed(100.0 * gbs / b.copy_gbs, 1),
                                              fmt_fixed(r.speedup, 2), fmt_fixed(r.fmt_bytes / 1e6, 1),
                                              fmt_num(r.ratio, 2), r.status == "ok" ? "" : r.detail};
        table_add(b.spmv_rows, cells, SPMV_COLS);
        if (r.status == "ok")
            printf("  %-4s %c %-18s %9.4f ms %8.1f GFLOP/s %8.1f GB/s %5.1f%% copy  x%-5.2f  check %.2g\n", prec, r.op,
                   r.kernel.c_str(), r.ms, gflops, gbs, 100.0 * gbs / b.copy_gbs, r.speedup, r.ratio);
        else
            printf("  %-4s %c %-18s %s: %s\n", prec, r.op, r.kernel.c_str(), r.status.c_str(), r.detail.c_str());
        if (r.status != "ok" && !r.build_row) /* a build's refusal or failure: noted once, with its conversion */
            b.notes.push_back(strprintf("%s %s %c %s: %s: %s", name.c_str(), prec, r.op, r.kernel.c_str(),
                                        r.status.c_str(), r.detail.c_str()));
    }
    report_conversions(b, name, prec, csr.n, csr.nnz, res, conv);
    fflush(stdout);
}

/* ================================================================== one matrix */
template <class T> static void run_one(Bench &b, const MatrixSource &src, const gen_csr *g)
{
    SpsMatrix A;
    build_matrix<T>(b, src, g, A);
    sps_matrix_info_t info;
    CK_SPS(b.ctx, sps_matrix_info(A, &info));
    if (sps_scalar_is_complex(info.scalar)) throw Unsupported("complex matrix: spbench times real SpMV only");
    const HostCsr<T> csr = export_csr<T>(b.ctx, A);
    /* solver mode: SPD generators, and files declared symmetric (CG may then report
       indefiniteness, which is a result too) */
    const bool solver_ok = csr.n == csr.m && (src.spd || info.symmetry == SPS_SYM_SYMMETRIC);
    if (!b.opt.spmv && !b.opt.add && !solver_ok) return;
    printf("%s  %s  %d x %d, %lld nonzeros (%.1f per row), CSR %.1f MB\n", src.name.c_str(), Prec<T>::name, csr.n,
           csr.m, (long long)csr.nnz, (double)csr.nnz / std::max(csr.n, 1), csr.bytes() / 1e6);
    fflush(stdout);
    if (b.opt.spmv) bench_spmv<T>(b, src.name, A, csr);
    if (b.opt.solver && solver_ok) bench_solvers<T>(b, src.name, A, csr);
    if (b.opt.add) bench_add<T>(b, src.name, A, csr);
}

/* ================================================================== device, copy bandwidth */
/* Returns -1 when ready, else the exit status. */
static int init_device(Bench &b)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        fprintf(stderr, "spbench: no CUDA device available (%s); nothing to benchmark, skipping.\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        return 77;
    }
    if (b.opt.device >= count) {
        fprintf(stderr, "spbench: --device %d: only %d device(s)\n", b.opt.device, count);
        return 2;
    }
    if (!sps_cuda_available()) {
        fprintf(stderr, "spbench: libspsolve reports no usable CUDA backend (%s); skipping.\n",
                sps_cuda_compiled() ? "compiled in, but no usable device" : "built without CUDA");
        return 77;
    }
    CK_CUDA(cudaSetDevice(b.opt.device));
    CK_CUDA(cudaGetDeviceProperties(&b.prop, b.opt.device));
    sps_status st = sps_context_create(&b.ctx, SPS_BACKEND_CUDA, b.opt.device);
    if (st != SPS_OK) {
        fprintf(stderr, "spbench: sps_context_create(CUDA, %d): %s: %s\n", b.opt.device, sps_status_name(st),
                b.ctx ? sps_context_error(b.ctx) : "");
        return 1;
    }
    b.lib_stream = static_cast<cudaStream_t>(sps_context_cuda_stream(b.ctx));
    CK_CUDA(cudaStreamCreateWithFlags(&b.cu_stream, cudaStreamNonBlocking));
    CK_SPARSE(cusparseCreate(&b.sparse));
    CK_SPARSE(cusparseSetStream(b.sparse, b.cu_stream));
    CK_BLAS(cublasCreate(&b.blas));
    CK_BLAS(cublasSetStream(b.blas, b.cu_stream));
    CK_BLAS(cublasSetPointerMode(b.blas, CUBLAS_POINTER_MODE_HOST));
    /* twice the L2 so that no line of the previous run survives the flush */
    b.flush.buf = DevBuf(std::max<size_t>(2 * (size_t)b.prop.l2CacheSize, 16u << 20));
    b.flush.sink = DevBuf(sizeof(unsigned));
    b.flush.write = b.opt.flush_write;
    CK_CUDA(cudaMemset(b.flush.buf.p, 0x5A, b.flush.buf.bytes));
    CK_CUDA(cudaDeviceSynchronize());
    return -1;
}

static void release_device(Bench &b)
{
    b.flush.buf = DevBuf();
    b.flush.sink = DevBuf();
    if (b.blas) cublasDestroy(b.blas);
    if (b.sparse) cusparseDestroy(b.sparse);
    if (b.cu_stream) cudaStreamDestroy(b.cu_stream);
    sps_context_destroy(b.ctx);
    b.blas = nullptr, b.sparse = nullptr, b.cu_stream = nullptr, b.ctx = nullptr;
}

/* Device-to-device copy of >= 1 GiB, bytes read + written, median of 20. */
static double copy_bandwidth(Bench &b, size_t &bytes)
{
    bytes = (size_t)1 << 30;
    size_t free_b = 0, total_b = 0;
    CK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (free_b < 2 * bytes + (256u << 20))
        throw BenchError(strprintf("copy bandwidth needs 2 GiB of free device memory, %.2f GiB free",
                                   (double)free_b / (1u << 30)));
    DevBuf src(bytes), dst(bytes);
    CK_CUDA(cudaMemsetAsync(src.p, 0x5A, bytes, b.cu_stream));
    const double ms = time_median(b.cu_stream, 3, 20, nullptr, [&] {
        CK_CUDA(cudaMemcpyAsync(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice, b.cu_stream));
    });
    return 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
}

/* ================================================================== report */
struct Report {
    const Bench *b;
    std::string gpu, driver, versions, date;
    double copy_gib;
};

static std::string nvidia_driver_version(void)
{
    FILE *f = fopen("/proc/driver/nvidia/version", "r");
    if (!f) return "unknown";
    char line[512] = "";
    if (!fgets(line, sizeof line, f)) line[0] = 0;
    fclose(f);
    /* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." or "... Open Kernel
       Module for x86_64  580.159.04 ...": the first word after "Kernel Module" that starts with a digit */
    const char *p = strstr(line, "Kernel Module");
    char ver[64] = "";
    int used = 0;
    for (p = p ? p + strlen("Kernel Module") : NULL; p && sscanf(p, "%63s%n", ver, &used) == 1; p += used)
        if (ver[0] >= '0' && ver[0] <= '9') return ver;
    return "unknown";
}

static std::string version_triplet(int v, int major_div) /* 12603 -> 12.6.3 (cuSPARSE/cuBLAS style) */
{
    return strprintf("%d.%d.%d", v / major_div, (v % major_div) / 100, v % 100);
}

static std::string sanitise(const std::string &s)
{
    std::string o;
    for (char c : s) {
        if (isalnum((unsigned char)c)) o += (char)tolower((unsigned char)c);
        else if (!o.empty() && o.back() != '-') o += '-';
    }
    while (!o.empty() && o.back() == '-') o.pop_back();
    return o.empty() ? "gpu" : o;
}

static void emit_csv(FILE *f, const void *t) { sb_table_csv(static_cast<const sb_table *>(t), f); }

static void emit_md(FILE *f, const void *arg)
{
    const Report &r = *static_cast<const Report *>(arg);
    const Bench &b = *r.b;
    const Options &o = b.opt;
    fprintf(f, "# spbench%s: libspsolve vs cuSPARSE on %s\n\n", o.quick ? " --quick" : "", r.gpu.c_str());
    fprintf(f, "- GPU: %s (%d SMs, %.0f MB L2, compute capability %d.%d, %.1f GB)\n", r.gpu.c_str(),
            b.prop.multiProcessorCount, b.prop.l2CacheSize / 1e6, b.prop.major, b.prop.minor,
            (double)b.prop.totalGlobalMem / 1e9);
    fprintf(f, "- NVIDIA driver %s; %s\n", r.driver.c_str(), r.versions.c_str());
    fprintf(f, "- Date: %s (UTC)\n", r.date.c_str());
    fprintf(f, "- Copy bandwidth (the 100%% reference): **%.1f GB/s** — cudaMemcpyAsync device to device of %.0f GiB, "
               "bytes read + written, median of 20\n",
            b.copy_gbs, r.copy_gib);
    fprintf(f, "- Timing: CUDA events on the kernel's stream, median of %d runs after %d warm-up runs; L2 %s\n",
            o.reps, o.warmup, !o.flush_l2      ? "not flushed (--no-flush)"
            : o.flush_write ? "flushed before each timed run by a memset of twice its size (--flush write: the timed "
                              "run also writes back the flush's dirty lines)"
                            : "flushed before each timed run by a read of twice its size (--flush read: clean lines)");
    fprintf(f, "- Traffic model: matrix (CSR arrays: 4(rows+1) + (4 + sizeof(T)) nnz bytes) + x + y, each once; "
               "y not read (beta = 0). GFLOP/s = 2 nnz / t. speedup = best cuSPARSE time for the op / this time. "
               "check = max |y - ref| / ((len + 2) u sum|a x|), must be <= 2.\n\n");
    if (sb_table_rows(b.spmv_rows)) {
        fprintf(f, "## SpMV (y = A x: op N; y = A^T x: op T)\n\n");
        sb_table_markdown(b.spmv_rows, f);
        fputc('\n', f);
    }
    if (sb_table_rows(b.convert_rows)) {
        fprintf(f, "## Format conversion on the GPU (CSR on the device -> format)\n\n");
        fprintf(f, "convert_ms = median wall time of %d builds by sps_matrix_convert on the CUDA context (default "
                   "format options), the device idle at the start and synchronised at the end: allocations, kernels "
                   "and host round trips included, the destruction of each build not. Timed only once the SpMV "
                   "(op N) of a first, untimed build has passed its check. x_spmv = convert_ms / spmv_ms, the CSR "
                   "SpMV time (op N) of the same matrix and precision measured above (spmv_kernel: ours:csr, else "
                   "the fastest cuSPARSE CSR kernel); issue 4 asks for <= 10 on poisson3d-128. fill_%% = padding "
                   "as %% of nnz (sps_matrix_info; RgCSR: the paper's artificial zeros). refused = the format "
                   "declines the matrix (padding beyond max_fill x nnz): a result, not a failure.\n\n",
                o.convert_reps);
        sb_table_markdown(b.convert_rows, f);
        fputc('\n', f);
    }
    if (sb_table_rows(b.solver_rows)) {
        fprintf(f, "## Solvers: time per iteration (maxit %d, rtol = atol = 0, x0 = 0, GMRES restart %d)\n\n",
                o.maxit, o.restart);
        fprintf(f, "floor = traffic floor per iteration / copy bandwidth (CG: matrix + 10n values; BiCGSTAB: "
                   "2 matrix + 20n; GMRES(m), basis size k: matrix + (2k + 7)n, averaged over the iterations run). "
                   "textbook = CG written with cusparseSpMV (CSR ALG1) + cuBLAS level 1, host scalars. "
                   "relres = ||b - A x|| / ||b|| recomputed on the host in double.\n\n");
        sb_table_markdown(b.solver_rows, f);
        fputc('\n', f);
    }
    compound_report_md(f, b);
    if (!b.notes.empty()) {
        fprintf(f, "## Notes\n\n");
        for (const std::string &n : b.notes) fprintf(f, "- %s\n", n.c_str());
    }
}

/* Write the CSV file(s) and the Markdown report.  Returns 0 or 1. */
static int write_report(Bench &b, double copy_gib)
{
    char err[1024];
    if (sb_mkdirs(b.opt.out_dir.c_str(), err, sizeof err) != 0) {
        fprintf(stderr, "spbench: %s\n", err);
        return 1;
    }
    Report r;
    r.b = &b;
    r.gpu = b.prop.name;
    r.driver = nvidia_driver_version();
    int drv = 0, rt = 0, sp = 0, bl = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    if (b.sparse) cusparseGetVersion(b.sparse, &sp);
    if (b.blas) cublasGetVersion(b.blas, &bl);
    r.versions = strprintf("CUDA driver API %d.%d, runtime %d.%d; cuSPARSE %s; cuBLAS %s; libspsolve %s", drv / 1000,
                           (drv % 1000) / 10, rt / 1000, (rt % 1000) / 10, version_triplet(sp, 1000).c_str(),
                           version_triplet(bl, bl >= 100000 ? 10000 : 1000).c_str(), sps_version());
    char date[32];
    time_t now = time(nullptr);
    struct tm tmv;
    gmtime_r(&now, &tmv);
    strftime(date, sizeof date, "%Y-%m-%d", &tmv);
    r.date = date;
    r.copy_gib = copy_gib;
    const std::string base =
        b.opt.out_dir + "/spbench-" + sanitise(r.gpu) + "-" + r.date + (b.opt.quick ? "-quick" : "");
    int rc = 0;
    auto write = [&](const std::string &path, void (*emit)(FILE *, const void *), const void *arg) {
        if (sb_write_atomic(path.c_str(), emit, arg, err, sizeof err) != 0) {
            fprintf(stderr, "spbench: %s\n", err);
            rc = 1;
        } else {
            printf("wrote %s\n", path.c_str());
        }
    };
    if (sb_table_rows(b.spmv_rows)) write(base + ".csv", emit_csv, b.spmv_rows);
    if (sb_table_rows(b.solver_rows)) write(base + "-solver.csv", emit_csv, b.solver_rows);
    if (sb_table_rows(b.convert_rows)) write(base + "-convert.csv", emit_csv, b.convert_rows);
    if (sb_table_rows(b.compound_rows)) write(base + "-compound.csv", emit_csv, b.compound_rows);
    if (sb_table_rows(b.add_rows)) write(base + "-add.csv", emit_csv, b.add_rows);
    if (sb_table_rows(b.compound_summary)) write(base + "-compound-summary.csv", emit_csv, b.compound_summary);
    write(base + ".md", emit_md, &r);
    return rc;
}

/* A matrix could not be generated or read: noted, counted. */
void matrix_failed(Bench &b, const std::string &name, const BenchError &e)
{
    printf("%s  error: %s\n", name.c_str(), e.what());
    b.notes.push_back(strprintf("%s error: %s", name.c_str(), e.what()));
    b.failures++;
}

void each_precision(Bench &b, const std::string &name, const std::function<void(int)> &f)
{
    for (int p = 0; p < 2; p++) {
        if (!(p == 0 ? b.opt.f32 : b.opt.f64)) continue;
        const char *prec = p == 0 ? "f32" : "f64";
        watchdog_arm(b, name + " " + prec);
        try {
            f(p);
        } catch (const DeviceLost &) {
            throw;
        } catch (const Unsupported &e) {
            printf("%s  %s  skipped: %s\n", name.c_str(), prec, e.what());
            b.notes.push_back(strprintf("%s %s skipped: %s", name.c_str(), prec, e.what()));
        } catch (const BenchError &e) {
            printf("%s  %s  error: %s\n", name.c_str(), prec, e.what());
            b.notes.push_back(strprintf("%s %s error: %s", name.c_str(), prec, e.what()));
            b.failures++;
            check_device_alive();
        }
    }
}

/* ================================================================== main */
int main(int argc, char **argv)
{
    Bench b;
    bool list_only = false;
    int rc = parse_options(argc, argv, b.opt, list_only);
    if (rc >= 0) return rc;
    setvbuf(stdout, nullptr, _IOLBF, 0);
    const time_t started = time(nullptr);

    std::vector<MatrixSource> sources;
    std::vector<std::string> compound; /* the compound suite's selected matrices */
    try {
        if (b.opt.suite_scalar) sources = builtin_sources(b.opt.quick);
        if (b.opt.suite_scalar && !b.opt.matrices_dir.empty()) {
            std::vector<MatrixSource> files = file_sources(b.opt.matrices_dir);
            sources.insert(sources.end(), files.begin(), files.end());
        }
        if (b.opt.suite_compound)
            for (const std::string &n : compound_names(b.opt))
                if (selected(b.opt, n)) compound.push_back(n);
    } catch (const BenchError &e) {
        fprintf(stderr, "spbench: %s\n", e.what());
        return 2;
    }
    std::vector<MatrixSource> run;
    for (const MatrixSource &s : sources)
        if (selected(b.opt, s.name)) run.push_back(s);
    if (list_only) {
        for (const MatrixSource &s : run) printf("%s\n", s.name.c_str());
        for (const std::string &n : compound) printf("%s\n", n.c_str());
        return 0;
    }
    if (run.empty() && compound.empty()) {
        fprintf(stderr, "spbench: --only matches no matrix (see --list)\n");
        return 2;
    }

    b.spmv_rows = spmv_table_new();
    b.solver_rows = solver_table_new();
    b.convert_rows = convert_table_new();
    b.compound_rows = compound_table_new();
    b.compound_summary = compound_summary_new();
    b.add_rows = add_table_new();
    struct Tables {
        Bench &b;
        ~Tables()
        {
            for (sb_table *t : {b.spmv_rows, b.convert_rows, b.solver_rows, b.compound_rows, b.compound_summary,
                                b.add_rows})
                sb_table_free(t);
        }
    } tables{b};
    if (!b.spmv_rows || !b.solver_rows || !b.convert_rows || !b.compound_rows || !b.compound_summary || !b.add_rows) {
        fprintf(stderr, "spbench: out of memory\n");
        return 1;
    }
    if (b.opt.host_check) return host_check_compound(b); /* no device */
    size_t copy_bytes = 0;
    bool lost = false;
    try {
        watchdog_arm(b, "device setup");
        rc = init_device(b);
        if (rc >= 0) {
            release_device(b);
            return rc;
        }
        printf("spbench: %s, libspsolve %s, %s%s\n", b.prop.name, sps_version(), b.opt.quick ? "quick, " : "",
               !b.opt.flush_l2 ? "L2 not flushed" : b.opt.flush_write ? "L2 flushed (memset) between runs"
                                                                       : "L2 flushed (read) between runs");
        watchdog_arm(b, "copy bandwidth");
        b.copy_gbs = copy_bandwidth(b, copy_bytes);
        printf("device-to-device copy: %.1f GB/s (read + write, %.0f GiB, median of 20)\n", b.copy_gbs,
               (double)copy_bytes / (1u << 30));
        if (b.opt.solver && !solver_mode_available())
            printf("solver mode: this libspsolve build has no solvers yet; only the textbook CG runs\n");

        for (const MatrixSource &src : run) {
            gen_csr g{};
            struct GenGuard {
                gen_csr *g;
                ~GenGuard() { gen_csr_free(g); }
            } guard{&g};
            if (!b.opt.spmv && !b.opt.add && src.kind == MatrixSource::GEN && !src.spd) continue; /* no solver runs on it */
            try {
                if (src.kind == MatrixSource::GEN) {
                    watchdog_arm(b, src.name + ": generate");
                    if (const char *msg = src.make(&g)) throw BenchError(strprintf("generator: %s", msg));
                }
                each_precision(b, src.name, [&](int p) {
                    if (p == 0) run_one<float>(b, src, &g);
                    else run_one<double>(b, src, &g);
                });
            } catch (const DeviceLost &) {
                throw;
            } catch (const BenchError &e) {
                matrix_failed(b, src.name, e);
            }
        }
        if (b.opt.suite_compound && b.opt.spmv && !compound.empty()) bench_compound(b);
    } catch (const DeviceLost &e) {
        fprintf(stderr, "spbench: fatal: %s\nspbench: writing the results gathered so far\n", e.what());
        b.notes.push_back(strprintf("run aborted: %s", e.what()));
        b.failures++;
        lost = true;
    } catch (const BenchError &e) {
        fprintf(stderr, "spbench: fatal: %s\n", e.what());
        b.notes.push_back(strprintf("run aborted: %s", e.what()));
        b.failures++;
    }
    watchdog_arm(b, "writing the report");
    if (write_report(b, (double)copy_bytes / (1u << 30)) != 0) b.failures++;
    if (lost) watchdog_arm(b, "exit after a device error"); /* runtime teardown at exit could block */
    else watchdog_disarm();
    printf("spbench: %d SpMV rows, %d conversion rows, %d solver rows, %d compound rows, %d addition rows, "
           "%d failure(s), %.0f s\n",
           sb_table_rows(b.spmv_rows), sb_table_rows(b.convert_rows), sb_table_rows(b.solver_rows),
           sb_table_rows(b.compound_rows), sb_table_rows(b.add_rows), b.failures, difftime(time(nullptr), started));
    if (!lost) release_device(b); /* after a sticky error, teardown calls could fail or hang */
    return b.failures ? 1 : 0;
}
