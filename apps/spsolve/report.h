/* spsolve CLI: what a run found, printed as a human summary or one JSON object. */
#ifndef SPSOLVE_CLI_REPORT_H
#define SPSOLVE_CLI_REPORT_H

#include "options.h"

#include <stdio.h>

#define CLI_STOPPING_RULE "||b-Ax|| <= max(rtol*||b||, atol)"
#define CLI_STOPPING_RULE_INF "max|b-Ax| <= max(rtol*max|b|, atol)"
/* The residual and the relative residual as the summary and the messages name them, in the
 * norm of the run (--norm inf: the max norm). */
#define CLI_RESIDUAL(inf) ((inf) ? "max|b-Ax|" : "||b-Ax||")
#define CLI_RELATIVE_RESIDUAL(inf) ((inf) ? "max|b-Ax|/max|b|" : "||b-Ax||/||b||")

typedef struct {
    const cli_options *opt;
    /* problem */
    const char *matrix_source;   /* path or generator spec */
    const char *matrix_kind;     /* "file" or "generated" */
    sps_matrix_info_t info;      /* of the matrix the solver used (after conversion) */
    const char *format_auto;     /* --format auto: why the format was picked, else NULL */
    sps_options format_opts;     /* the options the matrix was built with (NULL: none to list) */
    const sps_tune_result *tune; /* --tune: what the tuner did, else NULL */
    const char *rhs_source;      /* path, or NULL for b = A*1 */
    const char *x0_source;       /* path, or NULL for x0 = 0 */
    /* execution */
    const char *backend;
    const char *device;
    const char *solver;
    const char *precond;
    const char *backend_reason; /* why --backend auto took the CPU, or NULL */
    const char *precond_warning; /* what its setup went on despite (sps_precond_warning), or NULL */
    const char *read_warning;    /* what reading -m went on despite (sps_matrix_warning), or NULL */
    const char *rhs_warning, *x0_warning; /* the same of -b and --x0 (sps_vector_warning), or NULL */
    double rtol, atol;
    int maxit, restart;
    /* outcome */
    sps_status status;           /* of sps_solver_solve */
    sps_result res;
    int converged;               /* the library reported convergence */
    int verified;                /* the CLI's own residual meets the tolerance */
    double true_residual_norm;   /* ||b - A x||_2 (--norm inf: max |b - A x|), recomputed by the CLI in long double */
    double rhs_norm;             /* ||b||_2, same */
    double true_relative_residual;
    double tolerance;            /* max(rtol*||b||, atol) with the CLI's ||b|| */
    int have_error;              /* b was generated as A*1 */
    double error_vs_ones;        /* ||x - 1||_2 / ||1||_2 */
    const char *output_written;  /* -o path when written, else NULL */
    const char *history_written; /* --history path when written, else NULL */
    const char *expansion_written; /* --write-expansion path when written, else NULL */
    /* seconds */
    double t_read, t_convert, t_setup, t_solve, t_check, t_total;
    double t_pc_setup, t_pc_apply; /* the preconditioner's setup, and one application (0: none) */
    double t_spmv;                 /* one product A*x timed the same way (0: not measured) */
    int exit_code;
} cli_report;

/** The entry type as the summary names it: "scalar", "block2" ... "block8", "quaternion". */
const char *cli_entry_name(sps_entry_desc e);

void cli_print_summary(FILE *f, const cli_report *r);
void cli_print_json(FILE *f, const cli_report *r);
/** With --json, when the run stops before its report (an input, usage or setup error):
 *  one object {spsolve_version, status "error", exit_code, message}. */
void cli_print_json_error(FILE *f, int exit_code, const char *message);

/** Write iteration,residual lines (k = 0 is the initial residual) to path via a
 *  temporary file renamed over it.  Returns 0 on success, else prints why to
 *  stderr and returns -1. */
int cli_write_history(sps_context ctx, const char *path, const double *history, int len);

#endif
