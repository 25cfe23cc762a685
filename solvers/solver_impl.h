/* libspsolve — solver internals shared by the files of solvers/.
 *
 * solver.c owns the public API, the registry (name -> method), argument checks,
 * the workspace (work vectors + slots, allocated once per solve and reused while
 * the size and type do not change), the residual history, the monitor and the
 * final true residual.  Each method file (cg.c, bicgstab.c, gmres.c) fills an
 * sps_solver_method and writes only its iteration, for
 * every backend and scalar type, over operators and the vector layer of
 * core/internal.h only (no kernel calls: that layer is where a distributed build
 * adds its reductions and halo exchange).
 *
 * Slots 0 and 1 are common (SPS_SLOT_BNORM, SPS_SLOT_RNORM); a method's own
 * scalars start at SPS_SLOT_FIRST.  The host learns slot values only through
 * sps_sv_fetch, the one device-to-host copy per iteration. */
#ifndef SPS_SOLVER_IMPL_H
#define SPS_SOLVER_IMPL_H
#include <float.h>
#include "core/internal.h"

enum {
    SPS_SLOT_BNORM = 0, /* ||b|| */
    SPS_SLOT_RNORM = 1, /* ||b - A x|| computed explicitly (initial or true residual) */
    SPS_SLOT_FIRST = 2
};

/* Times the recurrence may be restarted from the true residual because it
 * claimed convergence that b - A x did not confirm; past it the solve stops
 * (the tolerance is below the attainable accuracy). */
#define SPS_MAX_DRIFT_RESTARTS 10

/* ||b|| above this (or below its inverse) is solved scaled to ~1 (sps_solver_solve): the
 * double sums of squares then stay far from overflow and underflow, whatever the rtol. */
#define SPS_SV_SCALE_ABOVE 1e100

/* The unit roundoff of t's precision. */
static inline double sps_sv_eps(sps_scalar t)
{
    return (t == SPS_F32 || t == SPS_C32) ? (double)FLT_EPSILON : DBL_EPSILON;
}

typedef struct sps_solver_method {
    sps_solver_type type;
    const char *name;
    const char *title;          /* for messages: "CG", "BiCGSTAB", "GMRES" */
    /* Work vectors, slots and host bytes the method needs with s's settings;
     * the preconditioner is known (s->P) when this is called. */
    void (*workspace)(const struct sps_solver_s *s, int *nvec, int *nslots, size_t *host_bytes);
    /* Iterate on A x = b from the guess in x, on the workspace (ready, checked
     * arguments).  Starts with sps_sv_begin; every exit sets s->reason. */
    sps_status (*iterate)(struct sps_solver_s *s, sps_vector b, sps_vector x);
    /* SPS_PRECOND_* flags a preconditioner must have for this method (CG: SYMMETRIC;
     * sps_solver_set_precond and sps_solver_solve check SYMMETRIC, the only one needed) */
    unsigned pc_needs;
    /* The options of this method beyond those of every solver (rtol, atol, maxit:
     * solvers/solver.c); sps_solver_set_option applies them. */
    const sps_option_desc *options;
    int noptions;
    /* Nonzero: the method implements option norm = inf (its device-side 2-norm stop off,
     * sps_sv_vnorm of r after each iteration): CG and BiCGSTAB (whose breakdown tests keep
     * their 2-norms); GMRES does not form r. */
    int norm_inf;
} sps_solver_method;

/* GMRES(m)'s default m: declared by gmres.c, set on every new solver. */
#define SPS_DEFAULT_RESTART 30

extern const sps_solver_method sps_solver_cg_method;
extern const sps_solver_method sps_solver_bicgstab_method;
extern const sps_solver_method sps_solver_gmres_method;

struct sps_solver_s {
    sps_context ctx;
    const sps_solver_method *method;
    sps_operator A;
    sps_precond P;              /* NULL or the identity: no preconditioning */
    double rtol, atol;
    int maxit, restart;
    sps_monitor_fn monitor;
    void *monitor_user;
    int graphs;                 /* sps_solver_set_graphs: capture iterations as CUDA graphs (default on) */
    int norm_inf;               /* option norm = inf: the stopping test and the reported norms are max norms */
    void *graph[2];             /* the solve's recorded iteration per parity (sps_sv_advance) */
    int busy;                   /* in sps_solver_solve: its monitor and callbacks may not change the solver */
    int destroy_pending;        /* sps_solver_destroy called from them: freed when the solve returns */

    /* workspace (setup), reused while these four and host_bytes do not change */
    sps_index ws_n;
    sps_scalar ws_t;
    int ws_nvec, ws_nslots;
    size_t ws_host_bytes;
    void *ws_block;             /* backend memory, (ws_nvec + 1) * n scalars */
    struct sps_vector_s *vec;   /* views into ws_block: vec[0..nvec-1] the method's, vec[nvec] scratch */
    sps_cplx *slots;            /* backend memory: the solver's scalar registers */
    sps_cplx *hslots;           /* host mirror of slots, filled by sps_sv_fetch */
    void *host;                 /* method's host workspace (GMRES Hessenberg, rotations) */

    /* the solve in progress */
    double tol;                 /* max(rtol ||b||, atol), in the solver's norm (option norm) */
    double bnorm;               /* ||b|| in that norm */
    double unscale;             /* 1, or 1 / f while a scaled b is solved (sps_solver_solve): to the system's norms */
    int its;
    sps_reason reason;
    double rnorm_true;          /* ||b - A x|| when known (true_known) */
    int true_known;
    int drift_restarts;
    double *history;
    int hist_len, hist_cap;
};

/** Work vector i of the method (a view: never pass it to sps_vector_destroy). */
static inline sps_vector sps_sv_vec(struct sps_solver_s *s, int i) { return &s->vec[i]; }
/** Nonzero when a preconditioner other than the identity is set. */
static inline int sps_sv_has_pc(const struct sps_solver_s *s)
{
    return s->P && !(sps_precond_flags(s->P) & SPS_PRECOND_IDENTITY);
}
/** Nonzero when the preconditioner is diagonal (Jacobi): its product joins CG's step
 *  (sps_sv_cg_step_precond_dot in one pass). */
static inline int sps_sv_pc_diagonal(const struct sps_solver_s *s)
{
    return sps_sv_has_pc(s) && (sps_precond_flags(s->P) & SPS_PRECOND_DIAGONAL);
}
/** Nonzero when the operator and the preconditioner (if one is applied) may be
 *  recorded in a CUDA graph (SPS_OPF_CAPTURABLE): a shell's callback might
 *  synchronise, which capture forbids. */
int sps_sv_capturable(struct sps_solver_s *s);

/** The one device-to-host copy of slots[first .. first+count) into s->hslots.
 *  Every scalar the host learns goes through here or through the asynchronous
 *  pair below. */
sps_status sps_sv_fetch(struct sps_solver_s *s, int first, int count);
/** slots[first .. first+count) = v[0 .. count) (real values; one queued host-to-backend copy). */
sps_status sps_sv_set_slots(struct sps_solver_s *s, int first, const double *v, int count);
/** A method's iteration: queue it on the backend for parity cur (restart: from the true
 *  residual) without reading any slot on the host. */
typedef sps_status (*sps_sv_queue_fn)(void *arg, int cur, int restart);
/** One turn of a method's loop: queue iteration s->its + 1 unless *queued says it already
 *  is, fetch slots[first .. first+count) behind it asynchronously (pinned staging + event
 *  on CUDA), queue iteration s->its + 2 behind that where the backend fetches
 *  asynchronously, no monitor is set and maxit leaves room (*queued says whether it
 *  did), then wait for the fetch into s->hslots.  The method's kernels must make
 *  iteration s->its + 2 a no-op when s->its + 1 stopped (a device-side stop slot).
 *  Regular (non-restart) iterations are recorded once per parity as a graph and
 *  replayed where the backend has graphs, sps_solver_set_graphs is on and
 *  sps_sv_capturable; the graphs are released when the solve returns. */
sps_status sps_sv_advance(struct sps_solver_s *s, sps_sv_queue_fn queue, void *arg, int restart, int first, int count,
                          int *queued);
/** r = b - A x. */
sps_status sps_sv_residual(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r);
/** y = M x through M's operator (x and y differ); without a preconditioner a copy,
 *  or nothing when y is x. */
/** y = M x and slots[out] = x^H y (PCG's z and rho), in one pass where M fuses them. */
sps_status sps_sv_precond_dot(struct sps_solver_s *s, sps_vector x, sps_vector y, int out);
/* PCG's step (cg_step(k, p, q, x, r)), then z = M r and slots[out] = r^H z: one pass where M
 * is diagonal (Jacobi); P is set.  Not taken (stopped, guarded): z and slots[out] may stay. */
sps_status sps_sv_cg_step_precond_dot(struct sps_solver_s *s, sps_cg_slots k, sps_vector p, sps_vector q,
                                      sps_vector x, sps_vector r, sps_vector z, int out);
sps_status sps_sv_precond(struct sps_solver_s *s, sps_vector x, sps_vector y);
/** Start of every solve: ||b||, r = b - A x, ||r|| in one fetch; records
 *  history[0] and decides the cases that need no iteration (NaN in b or x0,
 *  b = 0, x0 already converged, maxit = 0).  *done = 1 when the solve is over
 *  (status returned). */
sps_status sps_sv_begin(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, int *done);
/** *out = ||v||_inf (inf) or ||v||_2: one reduction into SPS_SLOT_RNORM and one fetch.  With
 *  option norm = inf a method tracks max |r_i| of its recurrence residual so after each
 *  iteration's slots; sps_sv_advance queues no iteration ahead in that mode, so the method
 *  stops (or confirms) on the host with x at this iteration. */
sps_status sps_sv_vnorm(struct sps_solver_s *s, sps_vector v, int inf, double *out);
/** Iteration s->its + 1 is done: count it, record ||r|| in the history, call
 *  the monitor; *stop = 1 when the monitor asks to stop. */
sps_status sps_sv_record(struct sps_solver_s *s, double rnorm, int *stop);
/** r = b - A x and t = ||r|| (one fetch); the true residual. */
sps_status sps_sv_true_residual(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, double *t);
/** The solve converged with true residual t (<= s->tol): reason and result set. */
void sps_sv_converged(struct sps_solver_s *s, double t);
/** The true residual decides an end: r = b - A x and *t = its norm, recorded; *converged = 1
 *  when it meets the tolerance (reason set), a non-finite one stops the solve (status
 *  returned), else *converged = 0 and the caller says why it ends or goes on. */
sps_status sps_sv_settle(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, double *t, int *converged);
/** The tracked residual met the tolerance: recompute r = b - A x and its norm.
 *  *converged = 1 when it confirms (reason set).  Otherwise r holds the true
 *  residual for the method to restart from, unless the drift restarts are used
 *  up, which stops the solve (status returned). */
sps_status sps_sv_confirm(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, int *converged);
/** End the solve with reason and status, recording the formatted message. */
sps_status sps_sv_stop(struct sps_solver_s *s, sps_reason reason, sps_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/** Standard stop when the monitor asked for it or the iteration limit is reached. */
sps_status sps_sv_stop_monitor(struct sps_solver_s *s, double rnorm);
sps_status sps_sv_stop_maxit(struct sps_solver_s *s, double rnorm);
/** A breakdown (a step skipped: x holds the last iterate) met where the recorded residual is
 *  down at t's rounding level, 10 eps ||b|| (nonfinite: a NaN or Inf met, eps^2 ||b||, where the
 *  recurrence has underflowed and divided 0 by 0): the tolerance (rtol = 0, say) is below what the
 *  precision attains and the quantity that vanished is rounding, not a property of A.  Then
 *  the solve stops with SPS_REASON_STAGNATION and `what` in the message, and 1 is returned
 *  with *st; else 0 (the caller reports the breakdown). */
int sps_sv_stop_at_rounding(struct sps_solver_s *s, sps_scalar t, int nonfinite, int it, const char *what,
                            sps_status *st);
/** Non-finite check of a slot value. */
static inline int sps_sv_finite(sps_cplx c) { return c.re - c.re == 0.0 && c.im - c.im == 0.0; }
#endif
