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
    /* the format parameters: OPT_FOPT + their index in fopts */
    OPT_FOPT, OPT_FOPT_END = OPT_FOPT + CLI_MAX_FOPTS
};

/* The fixed options; the format parameters are appended from the declarations. */
static const struct option fixed_options[] = {
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
};
#define NFIXED ((int)(sizeof fixed_options / sizeof fixed_options[0]))
#define MAX_FORMATS 32

/* A format parameter: an option some formats declare, under the declaration of
 * the first of them (in sps_format order); formats: a bit per format declaring it. */
typedef struct {
    const sps_option_desc *d;
    unsigned formats;
} fopt;
static fopt fopts[CLI_MAX_FOPTS];
static int nfopts;
static struct option long_options[NFIXED + CLI_MAX_FOPTS + 1];

/* The formats of this build, in sps_format order (the order of the messages). */
static int format_available(int f) { return strcmp(sps_format_name((sps_format)f), "?") != 0; }

/* fopts and long_options from the formats' declarations. */
static void collect_format_options(void)
{
    if (nfopts) return;
    memcpy(long_options, fixed_options, sizeof fixed_options);
    for (int f = 0; f < MAX_FORMATS && f < SPS_FMT_AUTO; f++) {
        int n = 0;
        const sps_option_desc *d = format_available(f) ? sps_format_options_desc((sps_format)f, &n) : NULL;
        for (int i = 0; i < n; i++) {
            int k = 0;
            while (k < nfopts && strcmp(fopts[k].d->name, d[i].name) != 0) k++;
            if (k == nfopts) {
                if (nfopts == CLI_MAX_FOPTS) continue;
                fopts[nfopts].d = &d[i];
                long_options[NFIXED + nfopts] = (struct option){
                    d[i].name, d[i].type == SPS_OPT_BOOL ? no_argument : required_argument, NULL, OPT_FOPT + nfopts};
                nfopts++;
            }
            fopts[k].formats |= 1u << f;
        }
    }
}

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

void cli_options_free(cli_options *opt)
{
    sps_options_destroy(opt->fmt);
    opt->fmt = NULL;
}

int cli_format_options_changed(const cli_options *opt)
{
    int n = 0;
    const sps_option_desc *d = sps_options_desc(opt->fmt, &n);
    for (int i = 0; i < n; i++) {
        double v, def;
        if (sps_options_get_value(opt->fmt, d[i].name, &v) == SPS_OK &&
            sps_option_parse(&d[i], d[i].def, &def, NULL, 0) == SPS_OK && v != def)
            return 1;
    }
    return 0;
}

int cli_format_option_values(const cli_options *opt, cli_fopt_value *out)
{
    int n = 0;
    const sps_option_desc *d = sps_options_desc(opt->fmt, &n);
    if (n > CLI_MAX_FOPTS) n = CLI_MAX_FOPTS;
    for (int i = 0; i < n; i++) {
        cli_fopt_value *v = &out[i];
        snprintf(v->key_buf, sizeof v->key_buf, "%s", d[i].name);
        for (char *c = v->key_buf; *c; c++)
            if (*c == '-') *c = '_';
        v->key = v->key_buf;
        v->num = 0;
        v->str = NULL;
        sps_options_get_value(opt->fmt, d[i].name, &v->num);
        switch (d[i].type) {
        case SPS_OPT_INT: v->kind = CLI_VAL_INT; break;
        case SPS_OPT_REAL: v->kind = CLI_VAL_NUM; break;
        case SPS_OPT_BOOL: v->kind = CLI_VAL_BOOL; break;
        case SPS_OPT_CHOICE:
            v->kind = CLI_VAL_STR;
            v->str = sps_options_get(opt->fmt, d[i].name);
            break;
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

/* Help text is wrapped at this column, continuation lines indented to HELP_COL. */
#define HELP_WIDTH 96
#define HELP_COL 24

/* Words of text from column *col on, wrapped at HELP_WIDTH. */
static void put_wrapped(FILE *f, const char *text, int *col)
{
    for (const char *p = text; *p;) {
        while (*p == ' ') p++;
        const int len = (int)strcspn(p, " ");
        if (*col + 1 + len > HELP_WIDTH && *col > HELP_COL) *col = fprintf(f, "\n%*s", HELP_COL, "") - 1;
        else if (*col > HELP_COL) *col += fprintf(f, " ");
        *col += fprintf(f, "%.*s", len, p);
        p += len;
    }
}

/* One format parameter from its declaration:
 *   --NAME ARG          FORMATS: HELP (default D; range) */
static void print_format_option(FILE *f, const fopt *o)
{
    const sps_option_desc *d = o->d;
    char arg[64] = "", text[512];
    if (d->choices) snprintf(arg, sizeof arg, " %s", d->choices);
    else if (d->type == SPS_OPT_INT && d->max < INT_MAX) snprintf(arg, sizeof arg, " %.0f..%.0f", d->min, d->max);
    else if (d->type == SPS_OPT_INT) snprintf(arg, sizeof arg, " N");
    else if (d->type == SPS_OPT_REAL) snprintf(arg, sizeof arg, " X");
    int col = fprintf(f, "      --%s%s", d->name, arg);
    if (col >= HELP_COL) col = fprintf(f, "\n%*s", HELP_COL, "") - 1;
    else col += fprintf(f, "%*s", HELP_COL - col, "");
    size_t at = 0;
    for (int k = 0; k < MAX_FORMATS; k++)
        if (o->formats & (1u << k))
            at += (size_t)snprintf(text + at, sizeof text - at, "%s%s", at ? ", " : "", sps_format_name((sps_format)k));
    at += (size_t)snprintf(text + at, sizeof text - at, ": %s (default %s", d->help,
                           d->type == SPS_OPT_BOOL ? (strcmp(d->def, "false") == 0 ? "off" : "on") : d->def);
    if (d->type == SPS_OPT_INT && !d->choices && d->max >= INT_MAX)
        at += (size_t)snprintf(text + at, sizeof text - at, "; N >= %.0f", d->min);
    if (d->type == SPS_OPT_REAL && isinf(d->max)) at += (size_t)snprintf(text + at, sizeof text - at, "; X >= %g", d->min);
    else if (d->type == SPS_OPT_REAL) at += (size_t)snprintf(text + at, sizeof text - at, "; X in %g..%g", d->min, d->max);
    snprintf(text + at, sizeof text - at, ")");
    put_wrapped(f, text, &col);
    fputc('\n', f);
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
            "Format parameters (each read by the formats named; ignored with a warning otherwise)\n",
            CLI_DEFAULT_PROBLEM, sps_matrix_generate_list(), sps_solver_list(), CLI_DEFAULT_RESTART,
            sps_precond_list(), CLI_DEFAULT_RTOL_DOUBLE, CLI_DEFAULT_RTOL_SINGLE, CLI_DEFAULT_ATOL,
            CLI_DEFAULT_MAXIT, sps_format_list());
    for (int k = 0; k < nfopts; k++) print_format_option(f, &fopts[k]);
    fprintf(f,
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
            sps_cuda_compiled() ? ", cuda" : "",
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

/* One set of options per format of the build, so that every value is checked
 * against each declaration of its name and the rules of each format (a sort
 * window that does not fit the slice height is an error whatever --format). */
typedef struct {
    sps_options of[MAX_FORMATS];
    unsigned given; /* bit k: fopts[k] was given */
} format_sets;

static void format_sets_free(format_sets *fs)
{
    for (int f = 0; f < MAX_FORMATS; f++) sps_options_destroy(fs->of[f]);
}

static int format_sets_make(format_sets *fs)
{
    memset(fs, 0, sizeof *fs);
    for (int f = 0; f < MAX_FORMATS && f < SPS_FMT_AUTO; f++)
        if (format_available(f) && sps_format_options_create((sps_format)f, &fs->of[f]) != SPS_OK) {
            fprintf(stderr, "spsolve: cannot make the options of format %s\n", sps_format_name((sps_format)f));
            return 0;
        }
    return 1;
}

/* --NAME VALUE into every format that declares NAME; messages "--NAME: why". */
static int format_option_set(format_sets *fs, int k, const char *value)
{
    const fopt *o = &fopts[k];
    fs->given |= 1u << k;
    for (int f = 0; f < MAX_FORMATS; f++)
        if ((o->formats & (1u << f)) && sps_options_set(fs->of[f], o->d->name, value) != SPS_OK) {
            fprintf(stderr, "spsolve: --%s\n", sps_options_error(fs->of[f]));
            return 0;
        }
    return 1;
}

/* The rules between options of every format; a parameter the chosen format does
 * not read is reported on stderr and ignored.  opt->fmt takes the chosen set. */
static int format_options_finish(format_sets *fs, cli_options *opt)
{
    for (int f = 0; f < MAX_FORMATS; f++)
        if (fs->of[f] && sps_options_check(fs->of[f]) != SPS_OK) {
            fprintf(stderr, "spsolve: --%s\n", sps_options_error(fs->of[f]));
            return 0;
        }
    for (int k = 0; k < nfopts; k++) {
        if (!(fs->given & (1u << k)) || (fopts[k].formats & (1u << opt->format))) continue;
        fprintf(stderr, "spsolve: warning: --%s has no effect with --format %s (it applies to", fopts[k].d->name,
                sps_format_name(opt->format));
        const char *sep = " ";
        for (int f = 0; f < MAX_FORMATS; f++)
            if (fopts[k].formats & (1u << f)) {
                fprintf(stderr, "%s%s", sep, sps_format_name((sps_format)f));
                sep = ", ";
            }
        fprintf(stderr, ")\n");
    }
    opt->fmt = fs->of[opt->format];
    fs->of[opt->format] = NULL;
    return 1;
}

static cli_parse_result parse_argv(int argc, char **argv, cli_options *opt, format_sets *fs);

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
    collect_format_options();
    format_sets fs;
    if (!format_sets_make(&fs)) {
        format_sets_free(&fs);
        return CLI_PARSE_EXIT_USAGE;
    }
    const cli_parse_result r = parse_argv(argc, argv, opt, &fs);
    format_sets_free(&fs);
    if (r != CLI_PARSE_RUN) cli_options_free(opt);
    return r;
}

/* getopt over argv; format parameters into fs. */
static cli_parse_result parse_argv(int argc, char **argv, cli_options *opt, format_sets *fs)
{

    opterr = 0; /* our own messages, with the usage hint */
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":m:b:o:h", long_options, NULL)) != -1) {
        if (c >= OPT_FOPT && c < OPT_FOPT + nfopts) {
            if (!format_option_set(fs, c - OPT_FOPT, optarg ? optarg : "true")) return CLI_PARSE_EXIT_USAGE;
            continue;
        }
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
    if (!format_options_finish(fs, opt)) return CLI_PARSE_EXIT_USAGE;
    opt->matrix_generated = is_generator_spec(opt->matrix);
    if (!opt->rtol_set)
        opt->rtol = (opt->precision == SPS_F32 || opt->precision == SPS_C32) ? CLI_DEFAULT_RTOL_SINGLE
                                                                            : CLI_DEFAULT_RTOL_DOUBLE;
    return CLI_PARSE_RUN;
}
