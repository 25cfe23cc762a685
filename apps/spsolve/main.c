/* spsolve: solve A x = b with libspsolve from the command line, then check
 * the answer independently of the solver (see check.h).
 *
 * Flow: options -> context -> read/generate A (and b, x0) -> host CSR copy for
 * the check -> convert to --format -> preconditioner + solver -> solve ->
 * recompute ||b - Ax|| on the host -> write -o / --history -> summary.
 * Public API only.  Exit status: 0 converged and checked, 1 usage/input/setup
 * error, 2 the solve ended without convergence or failed the check. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#endif
#include "check.h"
#include "options.h"
#include "report.h"
#include "spsolve/spsolve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EXIT_CONVERGED = 0, EXIT_INPUT = 1, EXIT_NOT_CONVERGED = 2 };

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
static int fail(sps_context ctx, sps_status st, const char *what)
{
    const char *msg = ctx ? sps_context_error(ctx) : "";
    if (msg && msg[0]) fprintf(stderr, "spsolve: %s%s%s\n", what ? what : "", what ? ": " : "", msg);
    else fprintf(stderr, "spsolve: %s%s%s\n", what ? what : "", what ? ": " : "", sps_status_name(st));
    return EXIT_INPUT;
}

static double unit_roundoff(sps_scalar t) { return (t == SPS_F32 || t == SPS_C32) ? 0x1p-24 : 0x1p-53; }

static sps_status load_matrix(sps_context ctx, const cli_options *opt, sps_scalar t, sps_matrix *A)
{
    if (opt->matrix_generated) return sps_matrix_generate(ctx, opt->matrix, t, A);
    sps_read_options ro = {opt->allow_nonfinite};
    return sps_matrix_read_mtx_opts(ctx, opt->matrix, t, &ro, A);
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

int main(int argc, char **argv)
{
    cli_options opt;
    switch (cli_parse_options(argc, argv, &opt)) {
    case CLI_PARSE_EXIT_OK: return EXIT_CONVERGED;
    case CLI_PARSE_EXIT_USAGE: return EXIT_INPUT;
    case CLI_PARSE_RUN: break;
    }
    FILE *monitor_out = opt.json ? stderr : stdout;
    const double t_start = now();
    double t0 = t_start;

    int rc = EXIT_INPUT;
    sps_context ctx = NULL;
    sps_matrix A = NULL;
    sps_vector b = NULL, x = NULL;
    sps_operator op = NULL;
    sps_precond P = NULL;
    sps_solver solver = NULL;
    cli_csr h = {0};
    void *hb = NULL, *hx = NULL;
    cli_report rep;
    memset(&rep, 0, sizeof rep);
    rep.opt = &opt;

    sps_status st = sps_context_create(&ctx, opt.backend, opt.device);
    if (st != SPS_OK) {
        rc = fail(ctx, st, opt.backend == SPS_BACKEND_CUDA ? "backend cuda unavailable" : "cannot start the backend");
        goto done;
    }
    t0 = now();

    /* ---- read A, b, x0.  A complex file makes the solve complex; so does a
       complex b for a real A (then A is read again as complex). */
    sps_scalar t = opt.precision;
    const char *what = opt.matrix_generated ? "cannot generate the matrix" : NULL;
    if ((st = load_matrix(ctx, &opt, t, &A)) != SPS_OK) { rc = fail(ctx, st, what); goto done; }
    if ((st = sps_matrix_info(A, &rep.info)) != SPS_OK) { rc = fail(ctx, st, NULL); goto done; }
    t = rep.info.scalar;
    if (rep.info.rows != rep.info.cols) {
        fprintf(stderr, "spsolve: %s: the matrix is %d x %d; the solvers need a square matrix\n", opt.matrix,
                (int)rep.info.rows, (int)rep.info.cols);
        goto done;
    }
    const sps_index n = rep.info.rows;
    if (opt.rhs) {
        if ((st = sps_vector_read_mtx(ctx, opt.rhs, t, &b)) != SPS_OK) { rc = fail(ctx, st, NULL); goto done; }
        if (sps_vector_scalar(b) != t) {
            t = sps_vector_scalar(b); /* complex b, real A: solve in the complex field */
            sps_matrix_destroy(A);
            A = NULL;
            if ((st = load_matrix(ctx, &opt, t, &A)) != SPS_OK) { rc = fail(ctx, st, what); goto done; }
        }
        if (sps_vector_size(b) != n) {
            fprintf(stderr, "spsolve: %s: b has %d entries but the matrix has %d rows\n", opt.rhs,
                    (int)sps_vector_size(b), (int)n);
            goto done;
        }
    }
    if (opt.x0) {
        if ((st = sps_vector_read_mtx(ctx, opt.x0, t, &x)) != SPS_OK) { rc = fail(ctx, st, NULL); goto done; }
        if (sps_vector_scalar(x) != t) {
            fprintf(stderr, "spsolve: %s: the initial guess is complex but the system is real\n", opt.x0);
            goto done;
        }
        if (sps_vector_size(x) != n) {
            fprintf(stderr, "spsolve: %s: x0 has %d entries but the matrix has %d columns\n", opt.x0,
                    (int)sps_vector_size(x), (int)n);
            goto done;
        }
    }
    rep.t_read = lap(ctx, &t0);

    /* ---- host copy of A for the independent check; b = A*1 when not given */
    if ((st = cli_csr_export(A, &h)) != SPS_OK) { rc = fail(ctx, st, "cannot copy the matrix to the host"); goto done; }
    const size_t ss = sps_scalar_size(t);
    hb = malloc((size_t)n * ss + 1);
    hx = malloc((size_t)n * ss + 1);
    if (!hb || !hx) { fprintf(stderr, "spsolve: out of host memory for two vectors of %d entries\n", (int)n); goto done; }
    if (!b) {
        cli_csr_times_ones(&h, hb);
        if ((st = sps_vector_from_host(ctx, n, t, hb, &b)) != SPS_OK) { rc = fail(ctx, st, NULL); goto done; }
    }
    if (!x && (st = sps_vector_create(ctx, n, t, &x)) != SPS_OK) { rc = fail(ctx, st, NULL); goto done; }
    rep.t_check = lap(ctx, &t0);

    /* the method follows the symmetry the source declared, which a format
       conversion need not carry along */
    rep.solver = opt.solver ? opt.solver : default_solver(&rep.info, &h);
    const sps_symmetry declared = rep.info.symmetry;

    /* ---- storage format, with the format parameters (CSR -> CSR too when
       --transpose explicit asks for A^T to be built and cached) */
    if (opt.format != SPS_FMT_CSR || opt.fmt.transpose_explicit) {
        sps_matrix B = NULL;
        if ((st = sps_matrix_convert(A, opt.format, &opt.fmt, &B)) != SPS_OK) {
            /* a padding refusal names max_fill: say how the CLI lifts it */
            const int refused = strstr(sps_context_error(ctx), "max_fill") != NULL;
            rc = fail(ctx, st, "format conversion failed");
            if (refused)
                fprintf(stderr, "spsolve: --max-fill X raises the limit (now %g); --force converts anyway\n",
                        opt.fmt.max_fill);
            goto done;
        }
        sps_matrix_destroy(A);
        A = B;
    }
    if ((st = sps_matrix_info(A, &rep.info)) != SPS_OK) { rc = fail(ctx, st, NULL); goto done; }
    rep.info.symmetry = declared;
    rep.t_convert = lap(ctx, &t0);

    /* ---- preconditioner and solver */
    rep.precond = opt.precond;
    rep.rtol = opt.rtol;
    rep.atol = opt.atol;
    rep.maxit = opt.maxit;
    rep.restart = opt.restart;
    if (strcmp(opt.precond, "none") != 0 && (st = sps_precond_create_by_name(A, opt.precond, &P)) != SPS_OK) {
        rc = fail(ctx, st, "preconditioner setup failed");
        goto done;
    }
    if ((st = sps_operator_from_matrix(A, &op)) != SPS_OK || (st = sps_solver_create_by_name(ctx, rep.solver, &solver)) != SPS_OK ||
        (st = sps_solver_set_operator(solver, op)) != SPS_OK || (st = sps_solver_set_precond(solver, P)) != SPS_OK ||
        (st = sps_solver_set_tolerances(solver, opt.rtol, opt.atol, opt.maxit)) != SPS_OK ||
        (st = sps_solver_set_restart(solver, opt.restart)) != SPS_OK ||
        (opt.monitor && (st = sps_solver_set_monitor(solver, monitor, monitor_out)) != SPS_OK)) {
        rc = fail(ctx, st, "solver setup failed");
        goto done;
    }
    rep.t_setup = lap(ctx, &t0);

    /* ---- solve */
    memset(&rep.res, 0, sizeof rep.res);
    rep.status = sps_solver_solve(solver, b, x, &rep.res);
    const double t_solve_wall = lap(ctx, &t0);
    if (rep.status != SPS_OK && rep.status != SPS_ERR_NOT_CONVERGED && rep.status != SPS_ERR_BREAKDOWN &&
        rep.status != SPS_ERR_NUMERIC) {
        rc = fail(ctx, rep.status, "solve failed");
        goto done;
    }
    rep.converged = rep.status == SPS_OK;
    rep.t_setup += rep.res.time_setup;
    /* the library's own split when it reports one, else our wall clock */
    rep.t_solve = (rep.res.time_solve > 0 || rep.res.time_setup > 0) ? rep.res.time_solve : t_solve_wall;

    /* ---- independent check on the host: the b and x the solver saw, the
       matrix as it was before any format conversion */
    if ((st = sps_vector_get(b, hb)) != SPS_OK || (st = sps_vector_get(x, hx)) != SPS_OK) {
        rc = fail(ctx, st, "cannot copy the solution to the host");
        goto done;
    }
    double scale = 0;
    cli_residual(&h, hx, hb, &rep.true_residual_norm, &rep.rhs_norm, &scale);
    rep.true_relative_residual =
        rep.rhs_norm > 0 ? rep.true_residual_norm / rep.rhs_norm : rep.true_residual_norm;
    rep.tolerance = opt.rtol * rep.rhs_norm > opt.atol ? opt.rtol * rep.rhs_norm : opt.atol;
    /* the solver judged its residual in its own precision; allow for the
       rounding of that computation and nothing more */
    const double slack = (double)(h.max_row_nnz + 4) * unit_roundoff(t) * scale;
    rep.verified = rep.true_residual_norm <= rep.tolerance + slack; /* false for NaN */
    rep.have_error = opt.rhs == NULL;
    if (rep.have_error) rep.error_vs_ones = cli_error_vs_ones(t, n, hx);
    rep.t_check += lap(ctx, &t0);

    rc = (rep.converged && rep.verified) ? EXIT_CONVERGED : EXIT_NOT_CONVERGED;
    if (rep.converged && !rep.verified)
        fprintf(stderr,
                "spsolve: the solver reported convergence, but ||b-Ax|| recomputed on the host is %.3e > "
                "tolerance %.3e (+ rounding allowance %.3e)\n",
                rep.true_residual_norm, rep.tolerance, slack);
    else if (!rep.converged)
        fprintf(stderr, "spsolve: not converged: %s after %d iterations (%s), ||b-Ax||/||b|| = %.3e\n",
                sps_reason_name(rep.res.reason), rep.res.iterations, sps_status_name(rep.status),
                rep.true_relative_residual);

    /* ---- outputs: x only when it is a solution; the history always (it is
       what one looks at when a solve fails) */
    if (opt.output) {
        if (rc != EXIT_CONVERGED) {
            fprintf(stderr, "spsolve: %s not written: the solve did not converge\n", opt.output);
        } else if ((st = sps_vector_write_mtx(x, opt.output)) != SPS_OK) {
            rc = fail(ctx, st, NULL);
        } else {
            rep.output_written = opt.output;
        }
    }
    if (opt.history) {
        if (cli_write_history(opt.history, rep.res.history, rep.res.history_len) != 0) rc = EXIT_INPUT;
        else rep.history_written = opt.history;
    }

    rep.matrix_source = opt.matrix;
    rep.matrix_kind = opt.matrix_generated ? "generated" : "file";
    rep.rhs_source = opt.rhs;
    rep.x0_source = opt.x0;
    rep.backend = sps_backend_name(sps_context_backend(ctx));
    rep.device = sps_context_device_name(ctx);
    rep.exit_code = rc;
    rep.t_total = now() - t_start;
    if (opt.json) cli_print_json(stdout, &rep);
    else cli_print_summary(stdout, &rep);

done:
    free(hb);
    free(hx);
    cli_csr_free(&h);
    sps_solver_destroy(solver);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    sps_vector_destroy(x);
    sps_vector_destroy(b);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    if (fflush(stdout) != 0) rc = EXIT_INPUT;
    return rc;
}
