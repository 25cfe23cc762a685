/* spsolve CLI: command-line options. */
#ifndef SPSOLVE_CLI_OPTIONS_H
#define SPSOLVE_CLI_OPTIONS_H

#include "spsolve/spsolve.h"

/* The README example: poisson3d:64 (262144 rows) converges with CG in a few
 * seconds on a laptop CPU. */
#define CLI_DEFAULT_PROBLEM "poisson3d:64"
/* rtol defaults by precision: 1e-8 is below what a single-precision residual
 * can resolve (unit roundoff 6e-8), so an f32 solve would only stagnate. */
#define CLI_DEFAULT_RTOL_DOUBLE 1e-8
#define CLI_DEFAULT_RTOL_SINGLE 1e-5
#define CLI_DEFAULT_ATOL 0.0
#define CLI_DEFAULT_MAXIT 10000
#define CLI_DEFAULT_RESTART 30
/* Format parameters the CLI passes to sps_matrix_convert when not given: the
 * library's documented defaults (issue 4, README "Formats"), passed explicitly
 * so that the summary reports exactly what the format was built with. */
#define CLI_DEFAULT_SLICE_HEIGHT 32
#define CLI_DEFAULT_GROUP_SIZE 128
#define CLI_MIN_GROUP_SIZE 32
#define CLI_MAX_GROUP_SIZE 256
#define CLI_DEFAULT_MAX_FILL 10.0

/* The format parameters of the command line (--transpose ... --force), in the
 * order of their options; each is read by some formats only (cli_format_uses). */
typedef enum {
    CLI_FOPT_TRANSPOSE = 0, CLI_FOPT_SLICE_HEIGHT, CLI_FOPT_SORT_WINDOW, CLI_FOPT_GROUP_SIZE, CLI_FOPT_SORT_ROWS,
    CLI_FOPT_MAX_FILL, CLI_FOPT_FORCE, CLI_FOPT_INDEX_BITS, CLI_NUM_FOPTS
} cli_fopt;

typedef struct {
    const char *matrix;      /* -m: path or generator spec */
    int matrix_generated;    /* matrix names a generator (poisson3d:N ...) */
    const char *rhs;         /* -b: path or NULL (b = A*1) */
    const char *x0;          /* --x0: path or NULL (x0 = 0) */
    const char *output;      /* -o: path or NULL */
    const char *history;     /* --history: path or NULL */
    const char *solver;      /* NULL: chosen from the matrix's symmetry */
    const char *precond;     /* "none" by default */
    int restart;
    double rtol, atol;
    int rtol_set;            /* rtol given explicitly (else it follows the precision) */
    int maxit;
    const char *format_name; /* NULL: keep CSR */
    sps_format format;
    sps_format_options fmt;  /* passed to sps_matrix_convert (defaults filled in) */
    unsigned fopt_given;     /* bit (1 << cli_fopt) per format parameter given */
    sps_backend backend;
    int device;
    sps_scalar precision;    /* f32/f64 (c32/c64 force a complex solve) */
    int monitor;
    int json;
    int allow_nonfinite;
} cli_options;

/* What parsing decided. */
typedef enum { CLI_PARSE_RUN, CLI_PARSE_EXIT_OK, CLI_PARSE_EXIT_USAGE } cli_parse_result;

/** Parse argv into opt; prints --help / --version text to stdout and usage
 *  errors to stderr itself. */
cli_parse_result cli_parse_options(int argc, char **argv, cli_options *opt);

/** Nonzero when format fmt reads parameter o (JDS accepts sort_rows: it is always sorted). */
int cli_format_uses(sps_format fmt, cli_fopt o);

/** One format parameter as the summary reports it: key (the sps_format_options
 *  field name, "transpose" for transpose_explicit) and a typed value. */
typedef struct {
    const char *key;
    enum { CLI_VAL_INT, CLI_VAL_NUM, CLI_VAL_BOOL, CLI_VAL_STR } kind;
    double num;      /* INT, NUM, BOOL */
    const char *str; /* STR */
} cli_fopt_value;

/** The parameters format fmt was built with, in option order; returns how many
 *  were written to out (at most CLI_NUM_FOPTS). */
int cli_format_option_values(const cli_options *opt, sps_format fmt, cli_fopt_value *out);

/** Nonzero when `name` is one of the entries of a comma-separated list such as
 *  sps_solver_list() ("cg, bicgstab, gmres"). */
int cli_list_contains(const char *list, const char *name);

#endif
