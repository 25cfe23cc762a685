/* spsolve: solve A x = b with libspsolve from the command line, then check
 * the answer independently of the solver (see check.h).
 *
 * main runs the steps in order, each a function of one run's state that
 * returns STEP_OK or the exit status to stop with:
 *   parse -> start (context) -> load (A, b, x0) -> prepare_check (host CSR
 *   copy, b = A*1) -> convert (--format) -> setup (preconditioner, solver)
 *   -> solve -> check (||b - Ax|| on the host) -> write (-o, --history)
 *   -> report (summary or JSON).
 * Public API only.  Exit status: 0 converged and checked, 1 usage/input/setup
 * error, 2 the solve ended without convergence or failed the check. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include "timing.h"
#include "check.h"
#include "options.h"
#include "report.h"
#include "spsolve/spsolve.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <time.h>

enum { EXIT_CONVERGED = 0, EXIT_INPUT = 1, EXIT_NOT_CONVERGED = 2 };
/* A step that lets the run go on; any other value is the exit status. */
#define STEP_OK (-1)

/* One run: what the steps hand each other. */
typedef struct {
    cli_options opt;
    FILE *monitor_out;
    double t_start, t0;
    sps_context ctx;
    sps_scalar t;
    sps_index n;
    sps_matrix A;
    sps_vector b, x;
    sps_operator op;
    sps_precond P;
    sps_solver solver;
    cli_csr h;   /* A as read, on the host, for the independent check */
    void *hb, *hx;
    double slack; /* rounding allowance of the check */
    int rc;      /* the exit status once the solve has ended */
    cli_report rep;
    sps_tune_result tune; /* --tune */
    sps_options auto_opts; /* --format auto: the picked format's defaults, as built (the summary lists them) */
    char read_warning[256]; /* rep.read_warning: a copy, as A may be read again or replaced by its conversion */
    char rhs_warning_buf[256], x0_warning_buf[256]; /* rep.rhs_warning, rep.x0_warning: copies, as b and x are
                                                       replaced (b's field change, x0's solve) */
} cli_run;

/* What reading a file went on despite (w, "" for nothing): on stderr, and kept in buf for
 * the report's *slot (the object that holds w may be replaced before the report). */
static void note_read_warning(const char *w, const char **slot, char *buf, size_t len)
{
    if (!*w) return;
    snprintf(buf, len, "%s", w);
    *slot = buf;
    fprintf(stderr, "spsolve: warning: %s\n", buf);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Time since *t0, after the backend has finished what was queued (so a GPU
 * phase is not billed to the next one); resets *t0. */
static double lap(sps_context ctx, double *t0)
{
    sps_context_synchronize(ctx);
    double t = now();
    double d = t - *t0;
    *t0 = t;
    return d;
}

/* Print the library's message for a failed call, prefixed by what we were doing. */
/* The last error said on stderr: --json prints it in its error object (main). */
static char g_error[2048];

/* Say msg (formatted) on stderr as "spsolve: msg", remember it, and return rc. */
static int failf(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int failf(int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_error, sizeof g_error, fmt, ap);
    va_end(ap);
    fprintf(stderr, "spsolve: %s\n", g_error);
    return rc;
}

static int fail(sps_context ctx, sps_status st, const char *what)
{
    const char *msg = ctx ? sps_context_error(ctx) : "";
    if (!(msg && msg[0])) msg = st == SPS_ERR_ALLOC ? "out of memory (SPS_ERR_ALLOC)" : sps_status_name(st);
    return failf(EXIT_INPUT, "%s%s%s", what ? what : "", what ? ": " : "", msg);
}

static double unit_roundoff(sps_scalar t) { return (t == SPS_F32 || t == SPS_C32) ? 0x1p-24 : 0x1p-53; }

static sps_status load_matrix(sps_context ctx, const cli_options *opt, sps_scalar t, sps_matrix *A)
{
    if (opt->matrix_generated) return sps_matrix_generate(ctx, opt->matrix, t, A);
    /* a solve needs a square matrix: refused at the size line, before reading entries */
    sps_read_options ro = {.allow_nonfinite = opt->allow_nonfinite, .require_square = 1, .max_memory = opt->max_memory};
    return sps_matrix_read_mtx_blocks(ctx, opt->matrix, t, opt->block_size, &ro, A);
}

/* --monitor: one line per iteration.  On stderr with --json, whose stdout
 * carries the JSON object only. */
static int monitor(void *user, int iteration, double residual_norm)
{
    FILE *f = user;
    fprintf(f, "  iteration %6d  residual %.6e\n", iteration, residual_norm);
    return 0;
}

/* The default method: CG needs a hermitian operator, so a real symmetric or a
 * hermitian matrix (as declared by its source) gets CG, anything else GMRES
 * (it cannot break down the way BiCGSTAB can).  A complex *symmetric* matrix
 * is not hermitian unless its values are real. */
static const char *default_solver(const sps_matrix_info_t *in, const cli_csr *h)
{
    if (in->symmetry == SPS_SYM_HERMITIAN) return "cg";
    if (in->symmetry == SPS_SYM_SYMMETRIC && cli_csr_is_real(h)) return "cg";
    return "gmres";
}

/* The options; --help and --version end the run here with exit 0. */
static int step_parse(cli_run *r, int argc, char **argv)
{
    switch (cli_parse_options(argc, argv, &r->opt)) {
    case CLI_PARSE_EXIT_OK: return EXIT_CONVERGED;
    case CLI_PARSE_EXIT_USAGE: return EXIT_INPUT;
    case CLI_PARSE_RUN: break;
    }
    r->monitor_out = r->opt.json ? stderr : stdout;
    r->rep.opt = &r->opt;
    return STEP_OK;
}

static int step_start(cli_run *r)
{
    const sps_status st = sps_context_create(&r->ctx, r->opt.backend, r->opt.device);
    if (st != SPS_OK)
        return fail(r->ctx, st,
                    r->opt.backend == SPS_BACKEND_CUDA ? "backend cuda unavailable" : "cannot start the backend");
    r->t0 = now();
    return STEP_OK;
}

/* A, b, x0.  A complex file makes the solve complex; so does a complex b for a
 * real A (then A is read again as complex).  A block or quaternion matrix of n
 * entries is a system of n*dim scalars: b, x0 and x hold them interleaved per
 * entry (a quaternion file for b or x0 gives its 4n reals). */
static int step_load(cli_run *r)
{
    const cli_options *opt = &r->opt;
    const char *what = opt->matrix_generated ? "cannot generate the matrix" : NULL;
    sps_status st;
    r->t = opt->precision;
    if ((st = load_matrix(r->ctx, &r->opt, r->t, &r->A)) != SPS_OK) return fail(r->ctx, st, what);
    if ((st = sps_matrix_info(r->A, &r->rep.info)) != SPS_OK) return fail(r->ctx, st, NULL);
    r->t = r->rep.info.scalar;
    if (r->rep.info.rows != r->rep.info.cols) {
        return failf(EXIT_INPUT, "%s: the matrix is %d x %d; the solvers need a square matrix", opt->matrix,
                     (int)r->rep.info.rows, (int)r->rep.info.cols);
    }
    r->n = r->rep.info.rows * sps_entry_dim(r->rep.info.entry);
    note_read_warning(sps_matrix_warning(r->A), &r->rep.read_warning, r->read_warning, sizeof r->read_warning);
    /* a trivial system converges at once ("zero_rhs"), which alone would mislead */
    if (r->rep.info.rows == 0)
        fprintf(stderr, "spsolve: warning: %s: the system is 0 x 0: there is nothing to solve\n", opt->matrix);
    else if (r->rep.info.nnz == 0)
        fprintf(stderr, "spsolve: warning: %s: the matrix has no entries (all zero): A x = b has no solution "
                        "unless b = 0\n",
                opt->matrix);
    cli_choose_format(&r->opt);
    if (opt->write_expansion) {
        if ((st = sps_matrix_write_mtx_expanded(r->A, opt->write_expansion)) != SPS_OK) return fail(r->ctx, st, NULL);
        r->rep.expansion_written = opt->write_expansion;
    }
    if (opt->rhs) {
        /* the length is the reader's to check, at the file's size line */
        if ((st = sps_vector_read_mtx_n(r->ctx, opt->rhs, r->t, r->n, &r->b)) != SPS_OK) return fail(r->ctx, st, NULL);
        note_read_warning(sps_vector_warning(r->b), &r->rep.rhs_warning, r->rhs_warning_buf, sizeof r->rhs_warning_buf);
        if (r->n == 0 && sps_vector_size(r->b) != 0) /* the reader's 0 is any length */
            return failf(EXIT_INPUT, "%s: b has %d entries; the system is 0 x 0", opt->rhs, (int)sps_vector_size(r->b));
        if (sps_vector_scalar(r->b) != r->t && r->rep.info.entry.kind == SPS_ENTRY_QUATERNION)
            return failf(EXIT_INPUT, "%s: b is complex; a quaternion system takes a real or quaternion b (its 4n reals)",
                         opt->rhs);
        if (sps_vector_scalar(r->b) != r->t) {
            r->t = sps_vector_scalar(r->b); /* complex b, real A: solve in the complex field */
            sps_matrix_destroy(r->A);
            r->A = NULL;
            if ((st = load_matrix(r->ctx, opt, r->t, &r->A)) != SPS_OK) return fail(r->ctx, st, what);
        }
    }
    if (opt->x0) {
        if ((st = sps_vector_read_mtx_n(r->ctx, opt->x0, r->t, r->n, &r->x)) != SPS_OK) return fail(r->ctx, st, NULL);
        note_read_warning(sps_vector_warning(r->x), &r->rep.x0_warning, r->x0_warning_buf, sizeof r->x0_warning_buf);
        if (r->n == 0 && sps_vector_size(r->x) != 0)
            return failf(EXIT_INPUT, "%s: x0 has %d entries; the system is 0 x 0", opt->x0, (int)sps_vector_size(r->x));
        if (sps_vector_scalar(r->x) != r->t) {
            return failf(EXIT_INPUT, "%s: the initial guess is complex but the system is real", opt->x0);
        }
    }
    r->rep.t_read = lap(r->ctx, &r->t0);
    return STEP_OK;
}

/* GMRES's restart length as it runs: the option, at most n (solvers/gmres.c caps it so) */
static int gmres_restart(const cli_run *r) { return r->n > 0 && r->opt.restart > r->n ? (int)r->n : r->opt.restart; }

/* --max-memory for the vectors as for the file: a few entries can declare 10^8 rows, and the
 * solve's host vectors (the CLI's b and x and their check copies; on the CPU backend also the
 * solver's workspace, GMRES's its restart length of them) would take gigabytes before any
 * failure said why.  A rough count, made before the first of them is allocated; the GPU's
 * workspace is the device allocator's to refuse. */
static int check_vectors_fit(const cli_run *r)
{
    const int64_t limit = sps_read_memory_limit(r->opt.max_memory); /* the reader's: 0 none */
    if (limit <= 0) return STEP_OK;
    const char *sv = r->rep.solver;
    const int64_t ws = !strcmp(sv, "gmres") ? gmres_restart(r) + 6 : !strcmp(sv, "bicgstab") ? 10 : 6;
    const int64_t nvec = 6 + (sps_context_backend(r->ctx) == SPS_BACKEND_CPU ? ws : 0);
    const double need = (double)r->n * (double)sps_scalar_size(r->t) * (double)nvec;
    if (need <= (double)limit) return STEP_OK;
    return failf(EXIT_INPUT, "%s: the solve's vectors take about %.3g GB (%lld of %lld scalars: %s), above the "
                 "limit of %.3g GB (--max-memory)", r->opt.matrix, need / 1e9, (long long)nvec, (long long)r->n, sv,
                 (double)limit / 1e9);
}

/* The host copy of A for the independent check; b = A*1 when not given; x = 0
 * when no x0; the method, from the symmetry the source declared. */
static int step_prepare_check(cli_run *r)
{
    sps_status st;
    if ((st = cli_csr_export(r->A, &r->h)) != SPS_OK) return fail(r->ctx, st, "cannot copy the matrix to the host");
    r->rep.solver = r->opt.solver ? r->opt.solver : default_solver(&r->rep.info, &r->h);
    const int rc = check_vectors_fit(r);
    if (rc != STEP_OK) return rc;
    const size_t ss = sps_scalar_size(r->t);
    r->hb = malloc((size_t)r->n * ss + 1);
    r->hx = malloc((size_t)r->n * ss + 1);
    if (!r->hb || !r->hx) {
        return failf(EXIT_INPUT, "out of host memory for two vectors of %d entries", (int)r->n);
    }
    if (!r->b) {
        cli_csr_times_ones(&r->h, r->hb);
        if ((st = sps_vector_from_host(r->ctx, r->n, r->t, r->hb, &r->b)) != SPS_OK) return fail(r->ctx, st, NULL);
    }
    if (!r->x && (st = sps_vector_create(r->ctx, r->n, r->t, &r->x)) != SPS_OK) return fail(r->ctx, st, NULL);
    r->rep.t_check = lap(r->ctx, &r->t0);
    return STEP_OK;
}

/* --tune: the timed search (sps_matrix_tune) instead of the model; the tuning
 * file's problems are warnings. */
static int convert_tuned(cli_run *r)
{
    sps_tune_options to;
    sps_tune_options_default(&to);
    if (r->opt.tune_budget >= 0) to.budget = r->opt.tune_budget;
    to.cache = r->opt.tune_cache;
    sps_matrix B = NULL;
    const sps_status st = sps_matrix_tune(r->A, &to, &B, &r->tune);
    if (st != SPS_OK) return fail(r->ctx, st, "tuning failed");
    if (r->tune.warning[0]) fprintf(stderr, "spsolve: warning: %s\n", r->tune.warning);
    r->rep.tune = &r->tune;
    r->rep.format_auto = r->tune.from_cache   ? "--tune: from the tuning file"
                         : r->tune.from_model ? "--tune: the model's pick, untimed"
                                              : "--tune: the fastest timed";
    sps_matrix_destroy(r->A);
    r->A = B;
    return STEP_OK;
}

/* The storage format, with the format parameters (CSR -> CSR too when one
 * differs from its default: --transpose explicit builds and caches A^T,
 * --csr-kernel picks the SpMV).  The symmetry the
 * source declared is kept: a conversion need not carry it along. */
static int step_convert(cli_run *r)
{
    const cli_options *opt = &r->opt;
    const sps_symmetry declared = r->rep.info.symmetry;
    sps_status st;
    sps_format fmt = opt->format;
    const int tuned = opt->tune ? convert_tuned(r) : STEP_OK;
    if (tuned != STEP_OK) return tuned;
    if (!opt->tune && fmt == SPS_FMT_AUTO && (st = sps_matrix_auto_format(r->A, &fmt, &r->rep.format_auto)) != SPS_OK)
        return fail(r->ctx, st, "format choice failed");
    /* the options the matrix is built with, for the summary: --tune's are in its
     * choice, --format auto's the picked format's defaults */
    if (opt->format == SPS_FMT_AUTO && !opt->tune && sps_format_options_create(fmt, &r->auto_opts) != SPS_OK)
        return fail(r->ctx, SPS_ERR_ALLOC, "format options");
    r->rep.format_opts = opt->tune ? NULL : opt->format == SPS_FMT_AUTO ? r->auto_opts : opt->fmt;
    if (!opt->tune && (fmt != r->rep.info.format || cli_format_options_changed(opt))) {
        sps_matrix B = NULL;
        if ((st = sps_matrix_convert(r->A, fmt, opt->fmt, &B)) != SPS_OK) { /* opt->fmt: NULL with auto */
            /* a padding refusal names max_fill: say how the CLI lifts it */
            const int refused = strstr(sps_context_error(r->ctx), "max-fill") != NULL;
            const int rc = fail(r->ctx, st, "format conversion failed");
            double max_fill = 0;
            if (refused && sps_options_get_value(opt->fmt, "max-fill", &max_fill) == SPS_OK)
                fprintf(stderr, "spsolve: --max-fill X raises the limit (now %g); --force converts anyway\n", max_fill);
            return rc;
        }
        sps_matrix_destroy(r->A);
        r->A = B;
    }
    if ((st = sps_matrix_info(r->A, &r->rep.info)) != SPS_OK) return fail(r->ctx, st, NULL);
    r->rep.info.symmetry = declared;
    r->rep.t_convert = lap(r->ctx, &r->t0);
    return STEP_OK;
}

/* The preconditioner (from the converted matrix) and the solver. */
static int step_setup(cli_run *r)
{
    const cli_options *opt = &r->opt;
    cli_report *rep = &r->rep;
    sps_status st;
    rep->precond = opt->precond;
    rep->rtol = opt->rtol;
    rep->atol = opt->atol;
    rep->maxit = opt->maxit;
    rep->restart = gmres_restart(r);
    double tp = now();
    sps_context_synchronize(r->ctx);
    if (strcmp(opt->precond, "none") != 0 &&
        ((st = sps_precond_new(r->ctx, opt->precond, &r->P)) != SPS_OK ||
         (st = cli_precond_set_options(opt, r->P)) != SPS_OK || (st = sps_precond_setup(r->P, NULL, r->A)) != SPS_OK))
        return fail(r->ctx, st, "preconditioner setup failed");
    rep->t_pc_setup = r->P ? lap(r->ctx, &tp) : 0.0;
    rep->precond_warning = r->P && *sps_precond_warning(r->P) ? sps_precond_warning(r->P) : NULL;
    if (rep->precond_warning) fprintf(stderr, "spsolve: warning: %s\n", rep->precond_warning);
    if ((st = sps_operator_from_matrix(r->A, &r->op)) != SPS_OK ||
        (st = sps_solver_create_by_name(r->ctx, rep->solver, &r->solver)) != SPS_OK ||
        (st = sps_solver_set_operator(r->solver, r->op)) != SPS_OK ||
        (st = sps_solver_set_precond(r->solver, r->P)) != SPS_OK ||
        (st = cli_solver_set_options(opt, r->solver)) != SPS_OK ||
        (opt->monitor && (st = sps_solver_set_monitor(r->solver, monitor, r->monitor_out)) != SPS_OK))
        return fail(r->ctx, st, "solver setup failed");
    rep->t_setup = lap(r->ctx, &r->t0);
    return STEP_OK;
}

/* What time_apply measures: one preconditioner application, or one product A*x, on b. */
typedef struct {
    cli_run *r;
    sps_vector z;
    int precond;
} cli_apply;
static sps_status apply_once(void *arg)
{
    const cli_apply *a = arg;
    return a->precond ? sps_precond_apply(a->r->P, a->r->b, a->z)
                      : sps_operator_apply(a->r->op, SPS_OP_N, NULL, a->r->b, NULL, a->z);
}

/* One application, timed apart from the solve (apps/common/timing.h: the median of 5 batches
 * of 10); the product A*b is timed the same way so that an application reads as a count of
 * SpMV times.  0 when it cannot be measured. */
static double time_apply(cli_run *r, int precond)
{
    cli_apply a = {r, NULL, precond};
    if (sps_vector_create(r->ctx, sps_vector_size(r->b), sps_vector_scalar(r->b), &a.z) != SPS_OK) return 0.0;
    const double t = app_time_median(r->ctx, apply_once, &a);
    sps_vector_destroy(a.z);
    return t;
}

/* The solve.  Its ending (converged, iteration limit, breakdown, NaN) is an
 * outcome to report; any other failure ends the run. */
static int step_solve(cli_run *r)
{
    cli_report *rep = &r->rep;
    memset(&rep->res, 0, sizeof rep->res);
    rep->status = sps_solver_solve(r->solver, r->b, r->x, &rep->res);
    const double t_solve_wall = lap(r->ctx, &r->t0);
    if (rep->status != SPS_OK && rep->status != SPS_ERR_NOT_CONVERGED && rep->status != SPS_ERR_BREAKDOWN &&
        rep->status != SPS_ERR_NUMERIC)
        return fail(r->ctx, rep->status, "solve failed");
    rep->converged = rep->status == SPS_OK;
    rep->t_setup += rep->res.time_setup;
    /* the library's own split when it reports one, else our wall clock */
    rep->t_solve = (rep->res.time_solve > 0 || rep->res.time_setup > 0) ? rep->res.time_solve : t_solve_wall;
    rep->t_pc_apply = r->P ? time_apply(r, 1) : 0.0;
    rep->t_spmv = r->P ? time_apply(r, 0) : 0.0;
    return STEP_OK;
}

/* The independent check on the host: the b and x the solver saw, the matrix as
 * it was before any format conversion.  Sets the exit status of the solve. */
static int step_check(cli_run *r)
{
    const cli_options *opt = &r->opt;
    cli_report *rep = &r->rep;
    sps_status st;
    if ((st = sps_vector_get(r->b, r->hb)) != SPS_OK || (st = sps_vector_get(r->x, r->hx)) != SPS_OK)
        return fail(r->ctx, st, "cannot copy the solution to the host");
    double scale = 0;
    cli_residual(&r->h, r->hx, r->hb, opt->norm_inf, &rep->true_residual_norm, &rep->rhs_norm, &scale);
    rep->true_relative_residual =
        rep->rhs_norm > 0 ? rep->true_residual_norm / rep->rhs_norm : rep->true_residual_norm;
    /* NaN with ||b|| (a non-finite b): no tolerance, not atol (JSON null) */
    rep->tolerance = isnan(rep->rhs_norm)                      ? NAN
                     : opt->rtol * rep->rhs_norm > opt->atol ? opt->rtol * rep->rhs_norm
                                                             : opt->atol;
    /* the solver judged its residual in its own precision; allow for the
       rounding of that computation and nothing more */
    r->slack = (double)(r->h.max_row_nnz + 4) * unit_roundoff(r->t) * scale;
    rep->verified = rep->true_residual_norm <= rep->tolerance + r->slack; /* false for NaN */
    rep->have_error = opt->rhs == NULL;
    if (rep->have_error) rep->error_vs_ones = cli_error_vs_ones(r->t, r->n, r->hx);
    rep->t_check += lap(r->ctx, &r->t0);

    r->rc = (rep->converged && rep->verified) ? EXIT_CONVERGED : EXIT_NOT_CONVERGED;
    if (rep->converged && !rep->verified)
        fprintf(stderr,
                "spsolve: the solver reported convergence, but %s recomputed on the host is %.3e > "
                "tolerance %.3e (+ rounding allowance %.3e)\n",
                CLI_RESIDUAL(opt->norm_inf), rep->true_residual_norm, rep->tolerance, r->slack);
    else if (!rep->converged) {
        fprintf(stderr, "spsolve: not converged: %s after %d iterations (%s), %s = %.3e\n",
                sps_reason_name(rep->res.reason), rep->res.iterations, sps_status_name(rep->status),
                CLI_RELATIVE_RESIDUAL(opt->norm_inf), rep->true_relative_residual);
        /* the solver's own account (which quantity, at which iteration) */
        if (rep->status != SPS_OK && *sps_context_error(r->ctx))
            fprintf(stderr, "spsolve: %s\n", sps_context_error(r->ctx));
    }
    return STEP_OK;
}

/* Outputs: x only when it is a solution; the history always (it is what one
 * looks at when a solve fails).  A write failure turns the exit status to 1
 * but the summary is still printed. */
static int step_write(cli_run *r)
{
    const cli_options *opt = &r->opt;
    sps_status st;
    fflush(stdout); /* anything printed so far comes before x where -o names stdout (/dev/stdout) */
    if (opt->output) {
        if (r->rc != EXIT_CONVERGED) {
            fprintf(stderr, "spsolve: %s not written: the solve did not converge\n", opt->output);
        } else if ((st = sps_vector_write_mtx(r->x, opt->output)) != SPS_OK) {
            r->rc = fail(r->ctx, st, NULL);
        } else {
            r->rep.output_written = opt->output;
        }
    }
    if (opt->history) {
        if (cli_write_history(r->ctx, opt->history, r->rep.res.history, r->rep.res.history_len) != 0)
            r->rc = EXIT_INPUT;
        else r->rep.history_written = opt->history;
    }
    return STEP_OK;
}

static int step_report(cli_run *r)
{
    const cli_options *opt = &r->opt;
    cli_report *rep = &r->rep;
    rep->matrix_source = opt->matrix;
    rep->matrix_kind = opt->matrix_generated ? "generated" : "file";
    rep->rhs_source = opt->rhs;
    rep->x0_source = opt->x0;
    rep->backend = sps_backend_name(sps_context_backend(r->ctx));
    /* --backend auto on the CPU: say why, not only that */
    if (r->opt.backend == SPS_BACKEND_AUTO && sps_context_backend(r->ctx) == SPS_BACKEND_CPU)
        rep->backend_reason = sps_cuda_unavailable_reason();
    rep->device = sps_context_device_name(r->ctx);
    rep->exit_code = r->rc;
    rep->t_total = now() - r->t_start;
    if (opt->json) cli_print_json(stdout, rep);
    else cli_print_summary(stdout, rep);
    return r->rc;
}

static void run_free(cli_run *r)
{
    free(r->hb);
    free(r->hx);
    cli_csr_free(&r->h);
    sps_solver_destroy(r->solver);
    sps_precond_destroy(r->P);
    sps_operator_destroy(r->op);
    sps_vector_destroy(r->x);
    sps_vector_destroy(r->b);
    sps_matrix_destroy(r->A);
    sps_context_destroy(r->ctx);
    sps_options_destroy(r->auto_opts);
    cli_options_free(&r->opt);
}

/* rc, or EXIT_INPUT with why where stdout could not take what was printed (a full disk,
 * /dev/full, a closed pipe): a summary, x or --help that did not arrive is a failure. */
static int stdout_flushed(int rc)
{
    if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
    fprintf(stderr, "spsolve: cannot write to standard output: %s\n", strerror(errno));
    return EXIT_INPUT;
}

int main(int argc, char **argv)
{
    static cli_run r; /* zeroed: every handle NULL */
    int rc = step_parse(&r, argc, argv);
    if (rc != STEP_OK) {
        /* a usage error: with --json, still one JSON object (the reason is on stderr) */
        if (rc != EXIT_CONVERGED && cli_wants_json(argc, argv))
            cli_print_json_error(stdout, rc, "usage error: see stderr for the option and what it accepts");
        return stdout_flushed(rc);
    }
    r.t_start = r.t0 = now();
    if ((rc = step_start(&r)) == STEP_OK && (rc = step_load(&r)) == STEP_OK && (rc = step_prepare_check(&r)) == STEP_OK &&
        (rc = step_convert(&r)) == STEP_OK && (rc = step_setup(&r)) == STEP_OK && (rc = step_solve(&r)) == STEP_OK &&
        (rc = step_check(&r)) == STEP_OK && (rc = step_write(&r)) == STEP_OK)
        rc = step_report(&r);
    else if (r.opt.json) /* an input or setup error: the report was not printed, this object is */
        cli_print_json_error(stdout, rc, g_error[0] ? g_error : "see stderr");
    run_free(&r);
    return stdout_flushed(rc);
}
