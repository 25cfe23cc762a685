/* libspsolve — Krylov solvers over operators.
 *
 * Stopping rule: ||b - A x||_2 <= max(rtol * ||b||_2, atol), checked on the
 * (unpreconditioned) residual; before convergence is reported the true residual
 * b - A x is recomputed.  Defaults: rtol 1e-8, atol 0, maxit 10000, GMRES restart 30. */
#ifndef SPSOLVE_SOLVER_H
#define SPSOLVE_SOLVER_H
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SPS_SOLVER_CG = 0, SPS_SOLVER_BICGSTAB = 1, SPS_SOLVER_GMRES = 2 } sps_solver_type;

/** How a solve ended (sps_result.reason).  Kept apart from the call status. */
typedef enum {
    SPS_REASON_NONE = 0,          /**< no solve yet */
    SPS_REASON_CONVERGED_RTOL,    /**< ||r|| <= rtol*||b|| */
    SPS_REASON_CONVERGED_ATOL,    /**< ||r|| <= atol */
    SPS_REASON_ZERO_RHS,          /**< b = 0: x = 0 returned after 0 iterations */
    SPS_REASON_MAXIT,             /**< iteration limit reached (status SPS_ERR_NOT_CONVERGED) */
    SPS_REASON_BREAKDOWN,         /**< rho = 0, omega = 0, ... (status SPS_ERR_BREAKDOWN) */
    SPS_REASON_INDEFINITE,        /**< CG: p'Ap <= 0 (status SPS_ERR_BREAKDOWN) */
    SPS_REASON_NAN,               /**< NaN/Inf in the iteration (status SPS_ERR_NUMERIC) */
    SPS_REASON_STAGNATION         /**< the tolerance is below the accuracy the method attains here: the iteration's
                                       residual met it again and again while the true ||b - A x|| did not, or CG's
                                       p'Ap came out <= 0 with the residual at the rounding level (rtol = 0, say)
                                       (status SPS_ERR_NOT_CONVERGED; x is the last iterate) */
} sps_reason;

/** Result of a solve.  history points into the solver and stays valid until the
 *  next solve or sps_solver_destroy.  The norms are the solver's (option norm): 2-norms
 *  by default, max norms (max_i |r_i|, max_i |b_i|) with norm = inf. */
typedef struct {
    int iterations;
    sps_reason reason;
    double residual_norm;        /**< true ||b - A x||_2 at exit (recomputed, in the solve's precision);
                                      NaN where a failed call (a callback's error, or a call refused
                                      before any solve) leaves it unknown; so are rhs_norm and
                                      relative_residual in a refused call */
    double rhs_norm;             /**< ||b||_2 */
    double relative_residual;    /**< residual_norm / rhs_norm (or residual_norm when b = 0) */
    const double *history;       /**< ||r_k||_2 for k = 0..history_len-1 (k = 0: initial residual) */
    int history_len;
    double time_setup;           /**< seconds: workspace allocation in the solve call */
    double time_solve;           /**< seconds: the iteration */
} sps_result;

/** Monitor callback, called after every iteration with the residual norm the
 *  solver tracks (recurrence or estimate).  Return nonzero to stop the solve
 *  (reason SPS_REASON_MAXIT). */
typedef int (*sps_monitor_fn)(void *user, int iteration, double residual_norm);

SPS_API sps_status sps_solver_create(sps_context ctx, sps_solver_type type, sps_solver *s);
/** By name: "cg", "bicgstab", "gmres"; an unknown name lists the available ones. */
SPS_API sps_status sps_solver_create_by_name(sps_context ctx, const char *name, sps_solver *s);
/** The operator (square).  Must outlive its use by the solver. */
SPS_API sps_status sps_solver_set_operator(sps_solver s, sps_operator A);
/** Preconditioner (right preconditioning for BiCGSTAB and GMRES, standard PCG for CG); NULL clears it.
 *  CG accepts only one flagged SPS_PRECOND_SYMMETRIC (SPS_ERR_ARG otherwise).  It must be set up
 *  (sps_precond_setup) by the time of sps_solver_solve and outlive its use by the solver. */
SPS_API sps_status sps_solver_set_precond(sps_solver s, sps_precond P);
/** rtol, atol >= 0, maxit >= 0. */
SPS_API sps_status sps_solver_set_tolerances(sps_solver s, double rtol, double atol, int maxit);
/** GMRES restart length m >= 1 (ignored by other solvers). */
SPS_API sps_status sps_solver_set_restart(sps_solver s, int m);
/** Set an option by name (spsolve/options.h): every solver reads rtol, atol, maxit and
 *  norm (sps_solver_options_desc(NULL, &n)), each method its own
 *  (sps_solver_options_desc("gmres", &n): restart).  norm = inf stops on max |r_i| <=
 *  max(rtol max |b_i|, atol) instead of the 2-norms (CG and BiCGSTAB; GMRES, which does
 *  not form the residual, returns SPS_ERR_UNSUPPORTED from the solve; one more reduction
 *  and a host round trip an iteration).  Unknown name, bad value or out of range: SPS_ERR_ARG naming it. */
SPS_API sps_status sps_solver_set_option(sps_solver s, const char *name, const char *value);
/** Called after every iteration with its residual; a nonzero return stops the solve.
 *  With a monitor set the CUDA backend no longer queues iteration k+1 before the host
 *  has seen iteration k (the monitor could stop the solve between the two).  During a
 *  solve, its monitor and callbacks (shell operators, preconditioners) may not change the
 *  solver: its setters and sps_solver_solve return SPS_ERR_ARG there, and
 *  sps_solver_destroy frees it when the solve returns. */
SPS_API sps_status sps_solver_set_monitor(sps_solver s, sps_monitor_fn fn, void *user);
/** CUDA backend: record a solver iteration once as a CUDA graph and replay it (one launch
 *  instead of one per kernel; what the iteration computes is unchanged).  On by default;
 *  used only where the operator (a matrix, or a preconditioner's view) and the preconditioner,
 *  if any, are capturable: a shell operator's callback never is, a preconditioner when flagged
 *  SPS_PRECOND_CAPTURABLE (none, jacobi, ilu0, ic0 and cheby are, bjacobi is not; a shell when
 *  its creator says so); no effect on the CPU backend.  CG and BiCGSTAB use it (GMRES,
 *  whose Hessenberg work is on the host, does not). */
SPS_API sps_status sps_solver_set_graphs(sps_solver s, int on);
/** Solve A x = b; x holds the initial guess on entry.  Returns SPS_OK when converged,
 *  SPS_ERR_NOT_CONVERGED, SPS_ERR_BREAKDOWN or SPS_ERR_NUMERIC otherwise (res is
 *  filled in every case, and x never holds NaN marked converged). */
SPS_API sps_status sps_solver_solve(sps_solver s, sps_vector b, sps_vector x, sps_result *res);
SPS_API const char *sps_solver_name(sps_solver s);
/** Comma-separated names of the available solvers. */
SPS_API const char *sps_solver_list(void);
SPS_API const char *sps_reason_name(sps_reason r);
/** Write a residual history (e.g. sps_result.history) as CSV: "iteration,residual", then
 *  one line per entry.  Whole or not at all, as the Matrix Market writers: a temporary
 *  file beside path renamed over it (a regular file keeps its permissions), a symbolic
 *  link written through, a device or FIFO written into, a directory refused.  Errors:
 *  SPS_ERR_IO (ctx's message names path), SPS_ERR_ALLOC, SPS_ERR_ARG. */
SPS_API sps_status sps_history_write_csv(sps_context ctx, const char *path, const double *history, int len);
SPS_API void sps_solver_destroy(sps_solver s);

#ifdef __cplusplus
}
#endif
#endif
