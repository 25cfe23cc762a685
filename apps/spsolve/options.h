/* spsolve CLI: command-line options. */
#ifndef SPSOLVE_CLI_OPTIONS_H
#define SPSOLVE_CLI_OPTIONS_H

#include "spsolve/spsolve.h"

/* The README example: poisson3d:64 (262144 rows) converges with CG in a few
 * seconds on a laptop CPU. */
#define CLI_DEFAULT_PROBLEM "poisson3d:64"
/* rtol defaults by precision: the solvers' declared default (1e-8) is below
 * what a single-precision residual can resolve (unit roundoff 6e-8), so an f32
 * solve would only stagnate: f32/c32 solves get this one unless --rtol is given. */
#define CLI_DEFAULT_RTOL_SINGLE "1e-5"
/* The parameters of the solvers (--rtol, --restart, ...), preconditioners and
 * formats (--transpose, --slice-height, ...) are the options they declare
 * (sps_solver_options_desc, sps_precond_options_desc, sps_format_options_desc):
 * the flags, their checks, the help and the values passed to the library are
 * made from those declarations. */
#define CLI_MAX_PARAMS 64

struct cli_sets; /* the declared parameters' values, one option set per owner */

typedef struct {
    const char *matrix;      /* -m: path or generator spec */
    int matrix_generated;    /* matrix names a generator (poisson3d:N ...) */
    const char *rhs;         /* -b: path or NULL (b = A*1) */
    const char *x0;          /* --x0: path or NULL (x0 = 0) */
    const char *output;      /* -o: path or NULL */
    const char *history;     /* --history: path or NULL */
    const char *solver;      /* NULL: chosen from the matrix's symmetry */
    const char *precond;     /* "none" by default */
    int restart;             /* the solver parameters as set (given or default), for the summary */
    double rtol, atol;
    int norm_inf; /* --norm inf: the max norm in the stopping test, the check and the report */
    int maxit;
    const char *format_name; /* NULL: not given (cli_choose_format: auto) */
    sps_format format;
    sps_options fmt;         /* the format's options as given, for sps_matrix_convert (in sets) */
    struct cli_sets *sets;   /* every declared parameter (cli_options_free) */
    sps_backend backend;
    int device;
    sps_scalar precision;    /* f32/f64 (c32/c64 force a complex solve) */
    int monitor;
    int json;
    int allow_nonfinite;
    int64_t max_memory;      /* --max-memory bytes (0: the library's default, -1: none) */
    int block_size;          /* --block-size: 1 scalar entries, else read -m as BxB blocks */
    const char *write_expansion; /* --write-expansion: path or NULL */
    int tune;                /* --tune: --format auto times the candidates (sps_matrix_tune) */
    double tune_budget;      /* --tune-budget seconds (sps_tune_options.budget) */
    const char *tune_cache;  /* --tune-cache PATH|off; NULL: the library's default file */
} cli_options;

/* What parsing decided. */
typedef enum { CLI_PARSE_RUN, CLI_PARSE_EXIT_OK, CLI_PARSE_EXIT_USAGE } cli_parse_result;

/** Parse argv into opt; prints --help / --version text to stdout and usage
 *  errors to stderr itself. */
cli_parse_result cli_parse_options(int argc, char **argv, cli_options *opt);

/** Nonzero when argv gives --json as an option (abbreviated or not, not as an
 *  option's value, not after "--"), whether or not the rest of argv parses. */
int cli_wants_json(int argc, char **argv);

/** Release what parsing made. */
void cli_options_free(cli_options *opt);

/** The solver's and the preconditioner's parameters (given, else default) into s
 *  and P by name (sps_solver_set_option, sps_precond_set_option). */
sps_status cli_solver_set_options(const cli_options *opt, sps_solver s);
sps_status cli_precond_set_options(const cli_options *opt, sps_precond P);

/** The format when --format was not given: auto (the model's pick, bcsr for a block
 *  or quaternion matrix), with the warnings for the format parameters given. */
void cli_choose_format(cli_options *opt);

/** Nonzero when some format option differs from its default (a CSR matrix is then
 *  converted to CSR too, e.g. to build and cache A^T). */
int cli_format_options_changed(const cli_options *opt);

/** One format parameter as the summary reports it: key (the option's name with
 *  '_' for '-': "slice_height") and a typed value. */
typedef struct {
    const char *key;
    enum { CLI_VAL_INT, CLI_VAL_NUM, CLI_VAL_BOOL, CLI_VAL_STR } kind;
    double num;      /* INT, NUM, BOOL */
    const char *str; /* STR */
    char key_buf[32];
} cli_fopt_value;

#define CLI_MAX_FOPTS 32
/** The parameters the format was built with, in the order the format declares
 *  them; returns how many were written to out (at most CLI_MAX_FOPTS). */
int cli_format_option_values(sps_options set, cli_fopt_value *out);

/** Nonzero when `name` is one of the entries of a comma-separated list such as
 *  sps_solver_list() ("cg, bicgstab, gmres"). */
int cli_list_contains(const char *list, const char *name);

#endif
