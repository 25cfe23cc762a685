/* spsolve CLI: option parsing (getopt_long), --help and --version.
 * Names of solvers, preconditioners, formats and generators come from the
 * library's registries, so the help and the errors list what this build has. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_X0 = 256, OPT_SOLVER, OPT_RESTART, OPT_PRECOND, OPT_RTOL, OPT_ATOL, OPT_MAXIT, OPT_FORMAT,
    OPT_BACKEND, OPT_DEVICE, OPT_PRECISION, OPT_MONITOR, OPT_HISTORY, OPT_JSON, OPT_NONFINITE, OPT_VERSION,
    /* the format parameters, in cli_fopt order: OPT_FOPT + o */
    OPT_FOPT, OPT_FOPT_END = OPT_FOPT + CLI_NUM_FOPTS
};

static const struct option long_options[] = {
    {"matrix", required_argument, NULL, 'm'},
    {"rhs", required_argument, NULL, 'b'},
    {"x0", required_argument, NULL, OPT_X0},
    {"output", required_argument, NULL, 'o'},
    {"solver", required_argument, NULL, OPT_SOLVER},
    {"restart", required_argument, NULL, OPT_RESTART},
    {"precond", required_argument, NULL, OPT_PRECOND},
    {"rtol", required_argument, NULL, OPT_RTOL},
    {"atol", required_argument, NULL, OPT_ATOL},
    {"maxit", required_argument, NULL, OPT_MAXIT},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"backend", required_argument, NULL, OPT_BACKEND},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"precision", required_argument, NULL, OPT_PRECISION},
    {"monitor", no_argument, NULL, OPT_MONITOR},
    {"history", required_argument, NULL, OPT_HISTORY},
    {"json", no_argument, NULL, OPT_JSON},
    {"allow-nonfinite", no_argument, NULL, OPT_NONFINITE},
    {"transpose", required_argument, NULL, OPT_FOPT + CLI_FOPT_TRANSPOSE},
    {"slice-height", required_argument, NULL, OPT_FOPT + CLI_FOPT_SLICE_HEIGHT},
    {"sort-window", required_argument, NULL, OPT_FOPT + CLI_FOPT_SORT_WINDOW},
    {"group-size", required_argument, NULL, OPT_FOPT + CLI_FOPT_GROUP_SIZE},
    {"sort-rows", no_argument, NULL, OPT_FOPT + CLI_FOPT_SORT_ROWS},
    {"max-fill", required_argument, NULL, OPT_FOPT + CLI_FOPT_MAX_FILL},
    {"force", no_argument, NULL, OPT_FOPT + CLI_FOPT_FORCE},
    {"index-bits", required_argument, NULL, OPT_FOPT + CLI_FOPT_INDEX_BITS},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

int cli_list_contains(const char *list, const char *name)
{
    const size_t len = strlen(name);
    const char *p = list;
    while (p && *p) {
        while (*p == ' ' || *p == ',') p++;
        const char *end = strchr(p, ',');
        size_t tok = end ? (size_t)(end - p) : strlen(p);
        while (tok > 0 && p[tok - 1] == ' ') tok--;
        if (tok == len && len > 0 && strncmp(p, name, len) == 0) return 1;
        p = end;
    }
    return 0;
}

/* Which formats read which parameter (in formats/: csr.c reads
 * transpose_explicit; sell.c slice_height, sort_window; rgcsr.c group_size,
 * sort_rows; the padded ELL/SELL/RgCSR and DIA max_fill, force; the padded
 * ELL/SELL/RgCSR index_bits; jds.c accepts
 * sort_rows, being always sorted).  HYB and COO read none. */
#define FMT_BIT(f) (1u << (f))
#define FMT_PADDED (FMT_BIT(SPS_FMT_ELL) | FMT_BIT(SPS_FMT_SELL) | FMT_BIT(SPS_FMT_RGCSR) | FMT_BIT(SPS_FMT_DIA))
static const struct {
    const char *flag; /* the option, without "--" */
    const char *key;  /* in the summary and the JSON: the sps_format_options field */
    int kind;         /* CLI_VAL_* */
    unsigned formats; /* FMT_BIT of each format that reads it */
} fopt_info[CLI_NUM_FOPTS] = {
    [CLI_FOPT_TRANSPOSE] = {"transpose", "transpose", CLI_VAL_STR, FMT_BIT(SPS_FMT_CSR)},
    [CLI_FOPT_SLICE_HEIGHT] = {"slice-height", "slice_height", CLI_VAL_INT, FMT_BIT(SPS_FMT_SELL)},
    [CLI_FOPT_SORT_WINDOW] = {"sort-window", "sort_window", CLI_VAL_INT, FMT_BIT(SPS_FMT_SELL)},
    [CLI_FOPT_GROUP_SIZE] = {"group-size", "group_size", CLI_VAL_INT, FMT_BIT(SPS_FMT_RGCSR)},
    [CLI_FOPT_SORT_ROWS] = {"sort-rows", "sort_rows", CLI_VAL_BOOL, FMT_BIT(SPS_FMT_RGCSR) | FMT_BIT(SPS_FMT_JDS)},
    [CLI_FOPT_MAX_FILL] = {"max-fill", "max_fill", CLI_VAL_NUM, FMT_PADDED},
    [CLI_FOPT_FORCE] = {"force", "force", CLI_VAL_BOOL, FMT_PADDED},
    [CLI_FOPT_INDEX_BITS] = {"index-bits", "index_bits", CLI_VAL_STR,
                             FMT_BIT(SPS_FMT_ELL) | FMT_BIT(SPS_FMT_SELL) | FMT_BIT(SPS_FMT_RGCSR)},
};

int cli_format_uses(sps_format fmt, cli_fopt o)
{
    return (unsigned)fmt < 32 && (unsigned)o < CLI_NUM_FOPTS && (fopt_info[o].formats & FMT_BIT(fmt)) != 0;
}

int cli_format_option_values(const cli_options *opt, sps_format fmt, cli_fopt_value *out)
{
    const sps_format_options *f = &opt->fmt;
    int n = 0;
    for (int o = 0; o < CLI_NUM_FOPTS; o++) {
        if (!cli_format_uses(fmt, (cli_fopt)o)) continue;
        cli_fopt_value *v = &out[n++];
        v->key = fopt_info[o].key;
        v->kind = fopt_info[o].kind;
        v->num = 0;
        v->str = NULL;
        switch ((cli_fopt)o) {
        case CLI_FOPT_TRANSPOSE: v->str = f->transpose_explicit ? "explicit" : "implicit"; break;
        case CLI_FOPT_SLICE_HEIGHT: v->num = f->slice_height; break;
        case CLI_FOPT_SORT_WINDOW: v->num = f->sort_window; break;
        case CLI_FOPT_GROUP_SIZE: v->num = f->group_size; break;
        case CLI_FOPT_SORT_ROWS: v->num = f->sort_rows || fmt == SPS_FMT_JDS; break; /* JDS is always sorted */
        case CLI_FOPT_MAX_FILL: v->num = f->max_fill; break;
        case CLI_FOPT_FORCE: v->num = f->force; break;
        case CLI_FOPT_INDEX_BITS: v->str = f->index_bits == 16 ? "16" : f->index_bits == 32 ? "32" : "auto"; break;
        case CLI_NUM_FOPTS: break;
        }
    }
    return n;
}

/* The generator names ("poisson2d" of "poisson2d:N, poisson3d:N"): a -m value
 * that starts with one of them and a colon is generated, not read. */
static int is_generator_spec(const char *spec)
{
    const char *p = sps_matrix_generate_list();
    while (p && *p) {
        while (*p == ' ' || *p == ',') p++;
        const char *colon = strchr(p, ':');
        if (!colon) break;
        size_t len = (size_t)(colon - p);
        if (len > 0 && strncmp(spec, p, len) == 0 && spec[len] == ':') return 1;
        p = strchr(colon, ',');
    }
    return 0;
}

static void print_help(FILE *f)
{
    fprintf(f,
            "usage: spsolve [-m A.mtx|GENERATOR] [-b b.mtx] [--x0 x0.mtx] [-o x.mtx] [options]\n"
            "\n"
            "Solve A x = b with a Krylov method of libspsolve and check the answer.\n"
            "\n"
            "Problem\n"
            "  -m, --matrix SRC      Matrix Market file (.mtx or .mtx.gz) or a generated problem\n"
            "                        (default: %s); generators: %s\n"
            "  -b, --rhs FILE        right-hand side (default: b = A*1, and ||x-1||/||1|| is reported)\n"
            "      --x0 FILE         initial guess (default: 0)\n"
            "  -o, --output FILE     write x (Matrix Market array) when the solve converged\n"
            "      --allow-nonfinite accept NaN/Inf values in the matrix file\n"
            "Solver\n"
            "      --solver NAME     %s (default: cg for a real symmetric or a hermitian\n"
            "                        matrix as declared by its source, else gmres)\n"
            "      --restart N       GMRES restart length (default %d)\n"
            "      --precond NAME    %s (default: none)\n"
            "      --rtol X          relative tolerance (default %g; %g for f32/c32)\n"
            "      --atol X          absolute tolerance (default %g)\n"
            "      --maxit N         iteration limit (default %d)\n"
            "                        stopping rule: ||b-Ax|| <= max(rtol*||b||, atol)\n"
            "Execution\n"
            "      --format NAME     storage format: %s (default: csr)\n"
            "      --backend NAME    cpu, cuda or auto (default: auto = cuda when a GPU is usable)\n"
            "      --device N        CUDA device ordinal (default 0)\n"
            "      --precision P     f32 or f64 (default f64); complex files solve in c32/c64;\n"
            "                        c32/c64 force a complex solve\n"
            "Format parameters (each read by the formats named; ignored with a warning otherwise)\n"
            "      --transpose M     csr: SpMV^T by implicit (atomic scatter on the GPU) or explicit\n"
            "                        (A^T built once and cached: deterministic, twice the memory);\n"
            "                        default implicit.  None of the solvers applies A^T yet\n"
            "      --slice-height C  sell: rows per slice, 16 or 32 (default %d)\n"
            "      --sort-window S   sell: sort rows by length within windows of S rows; 0 or 1 = no\n"
            "                        sorting (default 0), else a multiple of the slice height\n"
            "      --group-size G    rgcsr: rows per group, %d..%d (default %d)\n"
            "      --sort-rows       rgcsr: rows in descending-length order (jds: always)\n"
            "      --max-fill X      ell, sell, rgcsr, dia: refuse to convert when the stored entries\n"
            "                        would exceed X * nnz; X >= 1 (default %g)\n"
            "      --force           ell, sell, rgcsr, dia: convert even beyond --max-fill\n"
            "      --index-bits B    ell, sell, rgcsr: bits of a stored column index: auto (16 where\n"
            "                        the columns of every slice/group span at most 65534, else 32),\n"
            "                        16 (refused where they do not) or 32; default auto\n"
            "Output\n"
            "      --monitor         print the residual of every iteration (to stderr with --json)\n"
            "      --history FILE    write iteration,residual as CSV\n"
            "      --json            print the summary as one JSON object on stdout\n"
            "  -h, --help            this text\n"
            "      --version         version and build\n"
            "\n"
            "Exit status: 0 converged; 1 usage, input or setup error; 2 solve ended without\n"
            "convergence (iteration limit, breakdown, NaN) or failed the residual check.\n"
            "\n"
            "This build: backends cpu%s%s.\n",
            CLI_DEFAULT_PROBLEM, sps_matrix_generate_list(), sps_solver_list(), CLI_DEFAULT_RESTART,
            sps_precond_list(), CLI_DEFAULT_RTOL_DOUBLE, CLI_DEFAULT_RTOL_SINGLE, CLI_DEFAULT_ATOL,
            CLI_DEFAULT_MAXIT, sps_format_list(), CLI_DEFAULT_SLICE_HEIGHT, CLI_MIN_GROUP_SIZE, CLI_MAX_GROUP_SIZE,
            CLI_DEFAULT_GROUP_SIZE, CLI_DEFAULT_MAX_FILL, sps_cuda_compiled() ? ", cuda" : "",
            sps_cuda_compiled() ? (sps_cuda_available() ? " (GPU available)" : " (no usable GPU)")
                                : " (built without CUDA)");
}

static void usage_hint(void) { fprintf(stderr, "Try 'spsolve --help' for more information.\n"); }

/* Strict number parsing: the whole argument must be a finite number. */
static int parse_double(const char *opt, const char *s, double lo, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != 0 || errno == ERANGE || !isfinite(v) || v < lo) {
        fprintf(stderr, "spsolve: --%s: expected a finite number >= %g, got '%s'\n", opt, lo, s);
        return 0;
    }
    *out = v;
    return 1;
}

/* Strict integer parsing into lo..hi (hi = INT_MAX: no upper bound but int's). */
static int parse_int(const char *opt, const char *s, long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != 0 || errno == ERANGE || v < lo || v > hi) {
        if (hi == INT_MAX) fprintf(stderr, "spsolve: --%s: expected an integer >= %ld, got '%s'\n", opt, lo, s);
        else fprintf(stderr, "spsolve: --%s: expected an integer in %ld..%ld, got '%s'\n", opt, lo, hi, s);
        return 0;
    }
    *out = (int)v;
    return 1;
}

/* One of a fixed set of words, each standing for a value. */
typedef struct {
    const char *name;
    int value;
} choice;

static int parse_choice(const char *opt, const char *s, const choice *c, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, c[i].name) == 0) {
            *out = c[i].value;
            return 1;
        }
    fprintf(stderr, "spsolve: --%s: expected one of", opt);
    for (int i = 0; i < n; i++) fprintf(stderr, "%s %s", i ? "," : "", c[i].name);
    fprintf(stderr, ", got '%s'\n", s);
    return 0;
}

static const choice transpose_modes[] = {{"implicit", 0}, {"explicit", 1}};
static const choice slice_heights[] = {{"16", 16}, {"32", 32}};
static const choice index_bits[] = {{"auto", 0}, {"16", 16}, {"32", 32}};

/* The format parameters given, against the format chosen: a value that
 * contradicts another is an error; a parameter the format does not read is
 * reported on stderr and ignored. */
static int check_format_options(const cli_options *opt)
{
    const sps_format_options *f = &opt->fmt;
    if (f->sort_window > 1 && f->sort_window % f->slice_height != 0) {
        fprintf(stderr,
                "spsolve: --sort-window: expected 0 or 1 (no sorting) or a multiple of the slice height %d, got %d\n",
                f->slice_height, f->sort_window);
        return 0;
    }
    for (int o = 0; o < CLI_NUM_FOPTS; o++) {
        if (!(opt->fopt_given & (1u << o)) || cli_format_uses(opt->format, (cli_fopt)o)) continue;
        fprintf(stderr, "spsolve: warning: --%s has no effect with --format %s (it applies to", fopt_info[o].flag,
                sps_format_name(opt->format));
        const char *sep = " ";
        for (int k = 0; k < 32; k++)
            if (fopt_info[o].formats & FMT_BIT(k)) {
                fprintf(stderr, "%s%s", sep, sps_format_name((sps_format)k));
                sep = ", ";
            }
        fprintf(stderr, ")\n");
    }
    return 1;
}

cli_parse_result cli_parse_options(int argc, char **argv, cli_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->matrix = CLI_DEFAULT_PROBLEM;
    opt->precond = "none";
    opt->restart = CLI_DEFAULT_RESTART;
    opt->atol = CLI_DEFAULT_ATOL;
    opt->maxit = CLI_DEFAULT_MAXIT;
    opt->format = SPS_FMT_CSR;
    opt->backend = SPS_BACKEND_AUTO;
    opt->precision = SPS_F64;
    opt->fmt.slice_height = CLI_DEFAULT_SLICE_HEIGHT;
    opt->fmt.group_size = CLI_DEFAULT_GROUP_SIZE;
    opt->fmt.max_fill = CLI_DEFAULT_MAX_FILL;

    opterr = 0; /* our own messages, with the usage hint */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":m:b:o:h", long_options, NULL)) != -1) {
        if (c >= OPT_FOPT && c < OPT_FOPT_END) opt->fopt_given |= 1u << (c - OPT_FOPT);
        switch (c) {
        case 'm': opt->matrix = optarg; break;
        case 'b': opt->rhs = optarg; break;
        case OPT_X0: opt->x0 = optarg; break;
        case 'o': opt->output = optarg; break;
        case OPT_HISTORY: opt->history = optarg; break;
        case OPT_SOLVER:
            if (!cli_list_contains(sps_solver_list(), optarg)) {
                fprintf(stderr, "spsolve: unknown solver '%s' (available: %s)\n", optarg, sps_solver_list());
                return CLI_PARSE_EXIT_USAGE;
            }
            opt->solver = optarg;
            break;
        case OPT_PRECOND:
            if (!cli_list_contains(sps_precond_list(), optarg)) {
                fprintf(stderr, "spsolve: unknown preconditioner '%s' (available: %s)\n", optarg,
                        sps_precond_list());
                return CLI_PARSE_EXIT_USAGE;
            }
            opt->precond = optarg;
            break;
        case OPT_RESTART:
            if (!parse_int("restart", optarg, 1, INT_MAX, &opt->restart)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_RTOL:
            if (!parse_double("rtol", optarg, 0.0, &opt->rtol)) return CLI_PARSE_EXIT_USAGE;
            opt->rtol_set = 1;
            break;
        case OPT_ATOL:
            if (!parse_double("atol", optarg, 0.0, &opt->atol)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_MAXIT:
            if (!parse_int("maxit", optarg, 0, INT_MAX, &opt->maxit)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_FORMAT:
            if (sps_format_by_name(optarg, &opt->format) != SPS_OK) {
                fprintf(stderr, "spsolve: unknown format '%s' (available: %s)\n", optarg, sps_format_list());
                return CLI_PARSE_EXIT_USAGE;
            }
            opt->format_name = optarg;
            break;
        case OPT_BACKEND:
            if (sps_backend_from_name(optarg, &opt->backend) != SPS_OK) {
                fprintf(stderr, "spsolve: unknown backend '%s' (available: cpu, cuda, auto)\n", optarg);
                return CLI_PARSE_EXIT_USAGE;
            }
            break;
        case OPT_DEVICE:
            if (!parse_int("device", optarg, 0, INT_MAX, &opt->device)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_PRECISION:
            if (sps_scalar_from_name(optarg, &opt->precision) != SPS_OK) {
                fprintf(stderr, "spsolve: unknown precision '%s' (available: f32, f64, c32, c64)\n", optarg);
                return CLI_PARSE_EXIT_USAGE;
            }
            break;
        case OPT_MONITOR: opt->monitor = 1; break;
        case OPT_JSON: opt->json = 1; break;
        case OPT_NONFINITE: opt->allow_nonfinite = 1; break;
        case OPT_FOPT + CLI_FOPT_TRANSPOSE:
            if (!parse_choice("transpose", optarg, transpose_modes, 2, &opt->fmt.transpose_explicit))
                return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_FOPT + CLI_FOPT_SLICE_HEIGHT:
            if (!parse_choice("slice-height", optarg, slice_heights, 2, &opt->fmt.slice_height))
                return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_FOPT + CLI_FOPT_SORT_WINDOW:
            if (!parse_int("sort-window", optarg, 0, INT_MAX, &opt->fmt.sort_window)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_FOPT + CLI_FOPT_GROUP_SIZE:
            if (!parse_int("group-size", optarg, CLI_MIN_GROUP_SIZE, CLI_MAX_GROUP_SIZE, &opt->fmt.group_size))
                return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_FOPT + CLI_FOPT_SORT_ROWS: opt->fmt.sort_rows = 1; break;
        case OPT_FOPT + CLI_FOPT_MAX_FILL: /* stored entries >= nnz always: below 1 every matrix is refused */
            if (!parse_double("max-fill", optarg, 1.0, &opt->fmt.max_fill)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_FOPT + CLI_FOPT_FORCE: opt->fmt.force = 1; break;
        case OPT_FOPT + CLI_FOPT_INDEX_BITS:
            if (!parse_choice("index-bits", optarg, index_bits, 3, &opt->fmt.index_bits)) return CLI_PARSE_EXIT_USAGE;
            break;
        case 'h': print_help(stdout); return CLI_PARSE_EXIT_OK;
        case OPT_VERSION:
            printf("spsolve %s (libspsolve %s; CUDA backend %s)\n", SPSOLVE_VERSION, sps_version(),
                   sps_cuda_compiled() ? "compiled in" : "not compiled in");
            return CLI_PARSE_EXIT_OK;
        case ':':
            /* optopt is the short letter, or a long option's code (>= 256) */
            if (optopt > 0 && optopt < 256) fprintf(stderr, "spsolve: option '-%c' needs a value\n", optopt);
            else fprintf(stderr, "spsolve: option '%s' needs a value\n", argv[optind - 1]);
            usage_hint();
            return CLI_PARSE_EXIT_USAGE;
        default:
            /* optopt: the short letter; a long option's code when it was given a value it does not take */
            if (optopt > 0 && optopt < 256) fprintf(stderr, "spsolve: unknown option '-%c'\n", optopt);
            else if (optopt >= 256) fprintf(stderr, "spsolve: option '%s' takes no value\n", argv[optind - 1]);
            else fprintf(stderr, "spsolve: unknown option '%s'\n", argv[optind - 1]);
            usage_hint();
            return CLI_PARSE_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "spsolve: unexpected argument '%s' (the matrix is given with -m)\n", argv[optind]);
        usage_hint();
        return CLI_PARSE_EXIT_USAGE;
    }
    if (!check_format_options(opt)) return CLI_PARSE_EXIT_USAGE;
    opt->matrix_generated = is_generator_spec(opt->matrix);
    if (!opt->rtol_set)
        opt->rtol = (opt->precision == SPS_F32 || opt->precision == SPS_C32) ? CLI_DEFAULT_RTOL_SINGLE
                                                                            : CLI_DEFAULT_RTOL_DOUBLE;
    return CLI_PARSE_RUN;
}
