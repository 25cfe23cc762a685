/* spsolve CLI: option parsing (getopt_long), --help and --version.
 * Names of solvers, preconditioners, formats and generators come from the
 * library's registries, so the help and the errors list what this build has. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    OPT_X0 = 256, OPT_SOLVER, OPT_RESTART, OPT_PRECOND, OPT_RTOL, OPT_ATOL, OPT_MAXIT, OPT_FORMAT,
    OPT_BACKEND, OPT_DEVICE, OPT_PRECISION, OPT_MONITOR, OPT_HISTORY, OPT_JSON, OPT_NONFINITE, OPT_VERSION
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
            CLI_DEFAULT_MAXIT, sps_format_list(), sps_cuda_compiled() ? ", cuda" : "",
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

static int parse_int(const char *opt, const char *s, long lo, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != 0 || errno == ERANGE || v < lo || v > 2147483647L) {
        fprintf(stderr, "spsolve: --%s: expected an integer >= %ld, got '%s'\n", opt, lo, s);
        return 0;
    }
    *out = (int)v;
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

    opterr = 0; /* our own messages, with the usage hint */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":m:b:o:h", long_options, NULL)) != -1) {
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
            if (!parse_int("restart", optarg, 1, &opt->restart)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_RTOL:
            if (!parse_double("rtol", optarg, 0.0, &opt->rtol)) return CLI_PARSE_EXIT_USAGE;
            opt->rtol_set = 1;
            break;
        case OPT_ATOL:
            if (!parse_double("atol", optarg, 0.0, &opt->atol)) return CLI_PARSE_EXIT_USAGE;
            break;
        case OPT_MAXIT:
            if (!parse_int("maxit", optarg, 0, &opt->maxit)) return CLI_PARSE_EXIT_USAGE;
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
            if (!parse_int("device", optarg, 0, &opt->device)) return CLI_PARSE_EXIT_USAGE;
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
            if (optopt > 0 && optopt < 256) fprintf(stderr, "spsolve: unknown option '-%c'\n", optopt);
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
    opt->matrix_generated = is_generator_spec(opt->matrix);
    if (!opt->rtol_set)
        opt->rtol = (opt->precision == SPS_F32 || opt->precision == SPS_C32) ? CLI_DEFAULT_RTOL_SINGLE
                                                                            : CLI_DEFAULT_RTOL_DOUBLE;
    return CLI_PARSE_RUN;
}
