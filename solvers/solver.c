/* Krylov solvers: the registry (name -> method), the public API of
 * include/spsolve/solver.h, and what every method shares (solver_impl.h):
 * argument checks, workspace, start of a solve, history and monitor, the
 * true-residual confirmation of convergence, and the result.
 *
 * Adding a method is one file filling an sps_solver_method plus one entry in
 * SPS_SOLVERS. */
#include "solvers/solver_impl.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one table: X(name) per method, in display order; SEP between entries. */
#define SPS_SOLVERS(X, SEP) X(cg) SEP X(bicgstab) SEP X(gmres)
#define SPS_SV_ENTRY_(n) &sps_solver_##n##_method
#define SPS_SV_NAME_(n) #n
#define SPS_SV_COMMA_ ,
#define SPS_SV_LISTSEP_ ", "

static const sps_solver_method *const methods[] = {SPS_SOLVERS(SPS_SV_ENTRY_, SPS_SV_COMMA_)};
static const char method_list[] = SPS_SOLVERS(SPS_SV_NAME_, SPS_SV_LISTSEP_);
#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))

#define DEFAULT_RTOL 1e-8
#define DEFAULT_ATOL 0.0
#define DEFAULT_MAXIT 10000
/* history entries allocated up front; more are added by doubling */
#define HISTORY_INITIAL 1024

const char *sps_solver_list(void) { return method_list; }

/* The options of every method (sps_solver_set_tolerances). */
static const sps_option_desc common_options[] = {
    {.name = "rtol", .type = SPS_OPT_REAL, .def = SPS_STR(DEFAULT_RTOL), .min = 0, .max = HUGE_VAL,
     .help = "relative tolerance: stop when ||b-Ax|| <= max(rtol*||b||, atol)"},
    {.name = "atol", .type = SPS_OPT_REAL, .def = SPS_STR(DEFAULT_ATOL), .min = 0, .max = HUGE_VAL,
     .help = "absolute tolerance"},
    {.name = "maxit", .type = SPS_OPT_INT, .def = SPS_STR(DEFAULT_MAXIT), .min = 0, .max = INT_MAX,
     .help = "iteration limit"},
    {.name = "norm", .type = SPS_OPT_CHOICE, .def = "2", .choices = "2|inf",
     .help = "the norm of the stopping test and of the reported residuals: 2 (Euclidean), or inf (max |r_i| <= "
             "max(rtol*max|b_i|, atol), as Bridson's PCG in the spin-transformation reference; CG and BiCGSTAB; one "
             "more reduction and host round trip an iteration)"},
};
#define NCOMMON ((int)(sizeof common_options / sizeof common_options[0]))

static const sps_solver_method *find_method(const char *name)
{
    for (int i = 0; name && i < NMETHODS; i++)
        if (strcmp(methods[i]->name, name) == 0) return methods[i];
    return NULL;
}

const sps_option_desc *sps_solver_options_desc(const char *name, int *n)
{
    const sps_solver_method *m = find_method(name);
    if (n) *n = !name ? NCOMMON : m ? m->noptions : 0;
    return !name ? common_options : m ? m->options : NULL;
}

/* A call from the solver's own monitor or a callback during its solve: the solve holds the
 * workspace sized for the settings it began with (a new restart length made GMRES read past
 * it; a nested solve clobbered the outer one's history). */
#define SPS_SV_NOT_BUSY(s, fn)                                                                              \
    do {                                                                                                   \
        if ((s)->busy)                                                                                     \
            return sps_error((s)->ctx, SPS_ERR_ARG,                                                        \
                             fn ": called during this solver's solve (from its monitor or a callback)");   \
    } while (0)

/* value parsed against the declaration of name (the method's, else the common
 * one) by the one option parser, then applied through the typed setters. */
sps_status sps_solver_set_option(sps_solver s, const char *name, const char *value)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_set_option");
    const sps_solver_method *m = s->method;
    int common = 0;
    for (int i = 0; name && i < NCOMMON; i++) common |= strcmp(common_options[i].name, name) == 0;
    sps_options o = NULL;
    sps_status st = common ? sps_options_create(m->name, common_options, NCOMMON, &o)
                           : sps_options_create(m->name, m->options, m->noptions, &o);
    if (st == SPS_OK) st = sps_options_set(o, name, value);
    double v = 0;
    if (st == SPS_OK) st = sps_options_get_value(o, name, &v);
    if (st != SPS_OK) {
        st = sps_error(s->ctx, st, "sps_solver_set_option: %s%s", o ? sps_options_error(o) : "out of memory",
                       common || !o ? "" : "; every solver reads rtol, atol, maxit, norm");
        sps_options_destroy(o);
        return st;
    }
    sps_options_destroy(o);
    if (strcmp(name, "rtol") == 0) return sps_solver_set_tolerances(s, v, s->atol, s->maxit);
    if (strcmp(name, "atol") == 0) return sps_solver_set_tolerances(s, s->rtol, v, s->maxit);
    if (strcmp(name, "maxit") == 0) return sps_solver_set_tolerances(s, s->rtol, s->atol, (int)v);
    if (strcmp(name, "restart") == 0) return sps_solver_set_restart(s, (int)v);
    if (strcmp(name, "norm") == 0) {
        s->norm_inf = (int)v == 1;
        return SPS_OK;
    }
    return sps_error(s->ctx, SPS_ERR_UNSUPPORTED, "sps_solver_set_option: %s: %s declares it but it is not applied",
                     name, m->name);
}

const char *sps_solver_name(sps_solver s) { return s ? s->method->name : "?"; }

const char *sps_reason_name(sps_reason r)
{
    switch (r) {
    case SPS_REASON_NONE: return "none";
    case SPS_REASON_CONVERGED_RTOL: return "converged_rtol";
    case SPS_REASON_CONVERGED_ATOL: return "converged_atol";
    case SPS_REASON_ZERO_RHS: return "zero_rhs";
    case SPS_REASON_MAXIT: return "maxit";
    case SPS_REASON_BREAKDOWN: return "breakdown";
    case SPS_REASON_INDEFINITE: return "indefinite";
    case SPS_REASON_NAN: return "nan";
    case SPS_REASON_STAGNATION: return "stagnation";
    }
    return "?";
}

/* ---------------------------------------------------------------- create / settings */
static sps_status create(sps_context ctx, const sps_solver_method *m, sps_solver *out)
{
    sps_solver s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "a solver handle"));
    s->ctx = ctx;
    s->method = m;
    s->rtol = DEFAULT_RTOL;
    s->atol = DEFAULT_ATOL;
    s->maxit = DEFAULT_MAXIT;
    s->restart = SPS_DEFAULT_RESTART;
    s->graphs = 1;
    *out = s;
    return SPS_OK;
}

sps_status sps_solver_create(sps_context ctx, sps_solver_type type, sps_solver *s)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!s) return sps_error(ctx, SPS_ERR_ARG, "sps_solver_create: NULL output");
    *s = NULL;
    for (int i = 0; i < NMETHODS; i++)
        if (methods[i]->type == type) return create(ctx, methods[i], s);
    return sps_error(ctx, SPS_ERR_ARG, "sps_solver_create: unknown solver type %d (available: %s)", (int)type,
                     method_list);
}

sps_status sps_solver_create_by_name(sps_context ctx, const char *name, sps_solver *s)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!s || !name) return sps_error(ctx, SPS_ERR_ARG, "sps_solver_create_by_name: NULL %s", s ? "name" : "output");
    *s = NULL;
    const sps_solver_method *m = find_method(name);
    if (m) return create(ctx, m, s);
    return sps_error(ctx, SPS_ERR_ARG, "unknown solver \"%s\" (available: %s)", name, method_list);
}

sps_status sps_solver_set_operator(sps_solver s, sps_operator A)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_set_operator");
    if (!A) return sps_error(s->ctx, SPS_ERR_ARG, "sps_solver_set_operator: NULL operator");
    if (A->ctx != s->ctx)
        return sps_error(s->ctx, SPS_ERR_ARG, "sps_solver_set_operator: the operator belongs to another context");
    if (A->n != A->m)
        return sps_error(s->ctx, SPS_ERR_ARG, "sps_solver_set_operator: the operator is %d x %d, not square", (int)A->n,
                         (int)A->m);
    s->A = A;
    return SPS_OK;
}

/* The operator of P (a borrowed view: M as an sps_operator). */
static sps_operator pc_op(sps_precond P)
{
    sps_operator op = NULL;
    (void)sps_precond_operator(P, &op); /* P is not NULL: cannot fail */
    return op;
}

/* P (not NULL) suits the method: same context, the flags the method needs.  The
 * solver sees a preconditioner through its public handle and its operator only. */
static sps_status check_precond(sps_solver s, sps_precond P, const char *fn)
{
    if (pc_op(P)->ctx != s->ctx)
        return sps_error(s->ctx, SPS_ERR_ARG, "%s: the preconditioner belongs to another context", fn);
    if (s->method->pc_needs & SPS_PRECOND_SYMMETRIC & ~sps_precond_flags(P))
        return sps_error(s->ctx, SPS_ERR_ARG,
                         "%s: %s needs a symmetric preconditioner (M SPD whenever A is) and preconditioner %s is not "
                         "flagged SPS_PRECOND_SYMMETRIC: use BiCGSTAB or GMRES, or flag it if M is symmetric",
                         fn, s->method->title, sps_precond_name(P));
    return SPS_OK;
}

sps_status sps_solver_set_precond(sps_solver s, sps_precond P)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_set_precond");
    if (P) SPS_CHECK(check_precond(s, P, "sps_solver_set_precond"));
    s->P = P;
    return SPS_OK;
}

sps_status sps_solver_set_tolerances(sps_solver s, double rtol, double atol, int maxit)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_set_tolerances");
    if (!(rtol >= 0.0) || !(atol >= 0.0) || isinf(rtol) || isinf(atol) || maxit < 0)
        return sps_error(s->ctx, SPS_ERR_ARG,
                         "sps_solver_set_tolerances: need finite rtol >= 0, atol >= 0 and maxit >= 0 (got %g, %g, %d)",
                         rtol, atol, maxit);
    s->rtol = rtol;
    s->atol = atol;
    s->maxit = maxit;
    return SPS_OK;
}

sps_status sps_solver_set_restart(sps_solver s, int m)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_set_restart");
    if (m < 1) return sps_error(s->ctx, SPS_ERR_ARG, "sps_solver_set_restart: restart length %d < 1", m);
    s->restart = m;
    return SPS_OK;
}

sps_status sps_solver_set_graphs(sps_solver s, int on)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_set_graphs");
    s->graphs = on != 0;
    return SPS_OK;
}

sps_status sps_solver_set_monitor(sps_solver s, sps_monitor_fn fn, void *user)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_set_monitor");
    s->monitor = fn;
    s->monitor_user = user;
    return SPS_OK;
}

/* ---------------------------------------------------------------- workspace */
static void ws_free(sps_solver s)
{
    sps_dfree(s->ctx, s->ws_block);
    sps_dfree(s->ctx, s->slots);
    free(s->vec);
    free(s->hslots);
    free(s->host);
    s->ws_block = NULL;
    s->slots = NULL;
    s->vec = NULL;
    s->hslots = NULL;
    s->host = NULL;
    s->ws_nvec = s->ws_nslots = 0;
}

/* All work vectors (one backend block, one scratch vector past the method's),
 * the slots and the host workspace, once per solve; kept while unchanged. */
static sps_status ws_setup(sps_solver s, sps_index n, sps_scalar t)
{
    int nvec = 0, nslots = 0;
    size_t hb = 0;
    s->method->workspace(s, &nvec, &nslots, &hb);
    if (s->ws_block && s->ws_n == n && s->ws_t == t && s->ws_nvec == nvec && s->ws_nslots == nslots &&
        s->ws_host_bytes == hb)
        return SPS_OK;
    ws_free(s);
    sps_context ctx = s->ctx;
    const size_t ss = sps_scalar_size(t), nv = (size_t)nvec + 1;
    if ((size_t)n > SIZE_MAX / ss / nv)
        return sps_error(ctx, SPS_ERR_ALLOC, "%s: %zu work vectors of %d entries overflow the address space",
                         s->method->title, nv, (int)n);
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, &s->ws_block, nv * (size_t)n * ss), fail);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&s->slots, (size_t)nslots * sizeof(sps_cplx)), fail);
    SPS_CHECK_GOTO(st, sps_dzero(ctx, s->slots, (size_t)nslots * sizeof(sps_cplx)), fail);
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, (void **)&s->hslots, (size_t)nslots * sizeof(sps_cplx), "solver slots"), fail);
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, (void **)&s->vec, nv * sizeof *s->vec, "solver vector views"), fail);
    if (hb) SPS_CHECK_GOTO(st, sps_hcalloc(ctx, &s->host, hb, "solver host workspace"), fail);
    for (size_t i = 0; i < nv; i++) {
        s->vec[i].ctx = ctx;
        s->vec[i].n = n;
        s->vec[i].t = t;
        s->vec[i].data = (char *)s->ws_block + i * (size_t)n * ss;
    }
    s->ws_n = n;
    s->ws_t = t;
    s->ws_nvec = nvec;
    s->ws_nslots = nslots;
    s->ws_host_bytes = hb;
    return SPS_OK;
fail:
    ws_free(s);
    return st;
}

/* ---------------------------------------------------------------- shared steps */
sps_status sps_sv_fetch(struct sps_solver_s *s, int first, int count)
{
    return sps_dcopy(s->ctx, s->hslots + first, s->slots + first, (size_t)count * sizeof(sps_cplx), SPS_COPY_D2H);
}

sps_status sps_sv_set_slots(struct sps_solver_s *s, int first, const double *v, int count)
{
    sps_cplx c[8];
    if (count > 8) return sps_error(s->ctx, SPS_ERR_ARG, "sps_sv_set_slots: %d slots at once (8 at most)", count);
    for (int i = 0; i < count; i++) c[i] = sps_cplx_make(v[i], 0.0);
    return sps_dcopy(s->ctx, s->slots + first, c, (size_t)count * sizeof(sps_cplx), SPS_COPY_H2D);
}

int sps_sv_capturable(struct sps_solver_s *s)
{
    return sps_op_capturable(s->A) && (!sps_sv_has_pc(s) || sps_op_capturable(pc_op(s->P)));
}

/* Queue an iteration; a regular one through its parity's graph where graphs apply. */
static sps_status sv_queue(struct sps_solver_s *s, sps_sv_queue_fn queue, void *arg, int cur, int restart)
{
    if (restart || !s->graphs || !sps_q_graphs(s->ctx) || !sps_sv_capturable(s)) return queue(arg, cur, restart);
    if (!s->graph[cur]) {
        SPS_CHECK(sps_q_capture_begin(s->ctx));
        const sps_status st = queue(arg, cur, 0);
        const sps_status st2 = sps_q_capture_end(s->ctx, &s->graph[cur]); /* ends the capture in every case */
        SPS_CHECK(st);
        SPS_CHECK(st2);
    }
    return sps_q_graph_launch(s->ctx, s->graph[cur]);
}

/* The graphs hold the solve's vectors: released with it (after the queued work; CUDA
 * defers the release of a graph being replayed). */
static void sv_graphs_free(struct sps_solver_s *s)
{
    for (int i = 0; i < 2; i++)
        sps_q_graph_destroy(s->ctx, s->graph[i]);
    s->graph[0] = s->graph[1] = NULL;
}

sps_status sps_sv_advance(struct sps_solver_s *s, sps_sv_queue_fn queue, void *arg, int restart, int first, int count,
                          int *queued)
{
    sps_context ctx = s->ctx;
    const int cur = s->its & 1;
    const size_t bytes = (size_t)count * sizeof(sps_cplx);
    /* armed: the iteration's last reduction writes the slots to staging cur itself */
    if (!*queued) SPS_CHECK(sps_q_fetch_arm(ctx, s->slots + first, bytes, cur));
    if (!*queued) SPS_CHECK(sv_queue(s, queue, arg, cur, restart));
    if (!sps_q_async_fetch(ctx)) { /* the backend's copies are synchronous: no lookahead */
        *queued = 0;
        return sps_sv_fetch(s, first, count);
    }
    SPS_CHECK(sps_q_fetch_begin(ctx, s->slots + first, bytes));
    *queued = s->monitor == NULL && !s->norm_inf && s->its + 2 <= s->maxit;
    if (*queued) SPS_CHECK(sps_q_fetch_arm(ctx, s->slots + first, bytes, cur ^ 1));
    if (*queued) SPS_CHECK(sv_queue(s, queue, arg, cur ^ 1, 0));
    return sps_q_fetch_wait(ctx, s->hslots + first, bytes);
}

sps_status sps_sv_residual(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r)
{
    /* r = b; r = -A x + r */
    SPS_CHECK(sps_v_copy(b, r));
    return sps_op_apply(s->A, SPS_OP_N, sps_cplx_make(-1, 0), x, sps_cplx_make(1, 0), r);
}

sps_status sps_sv_precond(struct sps_solver_s *s, sps_vector x, sps_vector y)
{
    /* y = M x */
    if (sps_sv_has_pc(s))
        return sps_op_apply(pc_op(s->P), SPS_OP_N, sps_cplx_make(1, 0), x, sps_cplx_make(0, 0), y);
    if (x == y) return SPS_OK;
    return sps_v_copy(x, y);
}

sps_status sps_sv_precond_dot(struct sps_solver_s *s, sps_vector x, sps_vector y, int out)
{
    /* y = M x;  slots[out] = x^H y: one pass where M fuses it (Jacobi) */
    if (sps_sv_has_pc(s) && x != y)
        return sps_op_apply_fused(pc_op(s->P), &(sps_fuse_desc){.kind = SPS_FUSE_DOT, .x = x, .y = y,
                                                                 .slots = s->slots, .out = out});
    SPS_CHECK(sps_sv_precond(s, x, y));
    return sps_v_dot(x, y, s->slots, out);
}

sps_status sps_sv_cg_step_precond_dot(struct sps_solver_s *s, sps_cg_slots k, sps_vector p, sps_vector q,
                                      sps_vector x, sps_vector r, sps_vector z, int out)
{
    /* the CG step, then z = M r;  slots[out] = r^H z: one pass where M is diagonal */
    return sps_op_apply_fused(pc_op(s->P), &(sps_fuse_desc){.kind = SPS_FUSE_CG_STEP_DOT, .x = r, .y = z, .p = p,
                                                             .q = q, .cx = x, .k = k, .slots = s->slots, .out = out});
}

sps_status sps_sv_stop(struct sps_solver_s *s, sps_reason reason, sps_status st, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->reason = reason;
    return sps_error(s->ctx, st, "%s", msg);
}

sps_status sps_sv_stop_monitor(struct sps_solver_s *s, double rnorm)
{
    return sps_sv_stop(s, SPS_REASON_MAXIT, SPS_ERR_NOT_CONVERGED,
                       "%s stopped by the monitor at iteration %d (residual %.3e, tolerance %.3e)", s->method->title,
                       s->its, rnorm, s->tol);
}

/* the norm the messages name: the solver's norm option (2 or inf) */
static const char *bname(const struct sps_solver_s *s) { return s->norm_inf ? "max|b|" : "||b||"; }
static const char *rname(const struct sps_solver_s *s) { return s->norm_inf ? "max|r|" : "||r||"; }

sps_status sps_sv_stop_maxit(struct sps_solver_s *s, double rnorm)
{
    return sps_sv_stop(s, SPS_REASON_MAXIT, SPS_ERR_NOT_CONVERGED,
                       "%s did not converge in %d iterations: residual %.3e > tolerance %.3e (rtol %g * %s %.3e, "
                       "atol %g)",
                       s->method->title, s->its, rnorm, s->tol, s->rtol, bname(s), s->bnorm, s->atol);
}

int sps_sv_stop_at_rounding(struct sps_solver_s *s, sps_scalar t, int nonfinite, int it, const char *what,
                            sps_status *st)
{
    /* near eps ||b|| the residual is at what the precision holds (CG's recurrence falls on to
       1e-105 with the true one at 1e-15; BiCGSTAB's broke down at 1.4 eps in f32); a genuine
       breakdown comes above it (an indefinite f32 system broke down at 17 eps).  A NaN counts
       only where the recurrence has underflowed far past that (eps^2 ||b||: its 0/0), not a
       NaN that A or a preconditioner returned */
    const double eps = sps_sv_eps(t), level = nonfinite ? eps * eps : 10 * eps;
    const double rlast = s->hist_len > 0 ? s->history[s->hist_len - 1] : INFINITY;
    if (!(rlast <= level * s->bnorm)) return 0;
    *st = sps_sv_stop(s, SPS_REASON_STAGNATION, SPS_ERR_NOT_CONVERGED,
                      "%s: at iteration %d %s with %s = %.3e, %.1e of %s: the residual is at the rounding level "
                      "of %s, where the tolerance %.3e cannot be met; x holds iterate %d",
                      s->method->title, it, what, rname(s), rlast, rlast / s->bnorm, bname(s), sps_scalar_name(t),
                      s->tol, s->its);
    return 1;
}

static sps_reason converged_reason(struct sps_solver_s *s, double rnorm)
{
    return rnorm <= s->rtol * s->bnorm ? SPS_REASON_CONVERGED_RTOL : SPS_REASON_CONVERGED_ATOL;
}

static sps_status history_push(struct sps_solver_s *s, double v)
{
    if (s->hist_len == s->hist_cap) {
        if (s->hist_cap > INT_MAX / 2)
            return sps_error(s->ctx, SPS_ERR_ALLOC, "%s: residual history beyond %d entries", s->method->title,
                             s->hist_cap);
        int cap = s->hist_cap ? 2 * s->hist_cap : HISTORY_INITIAL;
        if (cap - 1 > s->maxit && s->maxit >= s->hist_len) cap = s->maxit + 1; /* no more than maxit + 1 entries */
        double *h = realloc(s->history, (size_t)cap * sizeof *h);
        if (!h)
            return sps_error(s->ctx, SPS_ERR_ALLOC, "%s: out of host memory for %d history entries", s->method->title,
                             cap);
        s->history = h;
        s->hist_cap = cap;
    }
    s->history[s->hist_len++] = v;
    return SPS_OK;
}

/* slots[out] = ||v|| in the solver's norm (option norm) */
static sps_status sv_norm(struct sps_solver_s *s, sps_vector v, int out)
{
    return s->norm_inf ? sps_v_nrm_inf(v, s->slots, out) : sps_v_nrm2(v, s->slots, out);
}

sps_status sps_sv_vnorm(struct sps_solver_s *s, sps_vector v, int inf, double *out)
{
    SPS_CHECK(inf ? sps_v_nrm_inf(v, s->slots, SPS_SLOT_RNORM) : sps_v_nrm2(v, s->slots, SPS_SLOT_RNORM));
    SPS_CHECK(sps_sv_fetch(s, SPS_SLOT_RNORM, 1));
    *out = s->hslots[SPS_SLOT_RNORM].re;
    return SPS_OK;
}

sps_status sps_sv_begin(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, int *done)
{
    const char *title = s->method->title;
    *done = 1;
    if (s->norm_inf && !s->method->norm_inf)
        return sps_error(s->ctx, SPS_ERR_UNSUPPORTED,
                         "%s: option norm = inf is not available for this method (CG and BiCGSTAB have it: the max "
                         "norm of the residual vector each iteration, which GMRES does not form)",
                         title);
    /* ||b||, r = b - A x0, ||r||: one fetch */
    SPS_CHECK(sv_norm(s, b, SPS_SLOT_BNORM));
    SPS_CHECK(sps_sv_residual(s, b, x, r));
    SPS_CHECK(sv_norm(s, r, SPS_SLOT_RNORM));
    SPS_CHECK(sps_sv_fetch(s, 0, 2));
    const double bnorm = s->hslots[SPS_SLOT_BNORM].re, r0 = s->hslots[SPS_SLOT_RNORM].re;
    s->bnorm = bnorm;
    s->tol = fmax(s->rtol * bnorm, s->atol);
    SPS_CHECK(history_push(s, r0));
    if (!isfinite(bnorm))
        return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                           "%s: the right-hand side b contains NaN or Inf (%s = %g)", title, bname(s), bnorm);
    if (bnorm == 0.0) {
        /* b = 0: the solution is x = 0, whatever the guess */
        SPS_CHECK(sps_v_fill(x, sps_cplx_make(0, 0)));
        s->reason = SPS_REASON_ZERO_RHS;
        s->rnorm_true = 0.0;
        s->true_known = 1;
        return SPS_OK;
    }
    if (!isfinite(r0))
        return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                           "%s: the initial residual b - A x0 is not finite (%g): NaN or Inf in the initial guess x "
                           "or in A x0",
                           title, r0);
    s->rnorm_true = r0;
    s->true_known = 1;
    if (r0 <= s->tol) {
        s->reason = converged_reason(s, r0);
        return SPS_OK;
    }
    if (s->maxit == 0) return sps_sv_stop_maxit(s, r0);
    s->true_known = 0;
    *done = 0;
    return SPS_OK;
}

sps_status sps_sv_record(struct sps_solver_s *s, double rnorm, int *stop)
{
    SPS_CHECK(history_push(s, rnorm));
    s->its++;
    *stop = s->monitor && s->monitor(s->monitor_user, s->its, rnorm * s->unscale) != 0; /* the system's norm */
    return SPS_OK;
}

sps_status sps_sv_true_residual(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, double *t)
{
    SPS_CHECK(sps_sv_residual(s, b, x, r));
    return sps_sv_vnorm(s, r, s->norm_inf, t);
}

void sps_sv_converged(struct sps_solver_s *s, double t)
{
    s->reason = converged_reason(s, t);
    s->rnorm_true = t;
    s->true_known = 1;
}

sps_status sps_sv_settle(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, double *t, int *converged)
{
    *converged = 0;
    SPS_CHECK(sps_sv_true_residual(s, b, x, r, t));
    s->rnorm_true = *t;
    s->true_known = 1;
    if (*t <= s->tol) {
        sps_sv_converged(s, *t);
        *converged = 1;
        return SPS_OK;
    }
    if (!isfinite(*t))
        return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                           "%s: at iteration %d the true residual ||b - A x|| is not finite (%g)", s->method->title,
                           s->its, *t);
    return SPS_OK;
}

sps_status sps_sv_confirm(struct sps_solver_s *s, sps_vector b, sps_vector x, sps_vector r, int *converged)
{
    double t;
    SPS_CHECK(sps_sv_settle(s, b, x, r, &t, converged));
    if (*converged) return SPS_OK;
    const double tracked = s->history[s->hist_len - 1];
    if (++s->drift_restarts > SPS_MAX_DRIFT_RESTARTS)
        return sps_sv_stop(s, SPS_REASON_STAGNATION, SPS_ERR_NOT_CONVERGED,
                           "%s: at iteration %d the tracked residual %.3e meets the tolerance %.3e but the true "
                           "residual ||b - A x|| = %.3e does not, for the %d-th time: the tolerance is below the "
                           "attainable accuracy",
                           s->method->title, s->its, tracked, s->tol, t, s->drift_restarts);
    s->true_known = 0;
    return SPS_OK;
}

/* ---------------------------------------------------------------- solve */
static sps_status check_solve(sps_solver s, sps_vector b, sps_vector x)
{
    sps_context ctx = s->ctx;
    sps_operator A = s->A;
    if (!A) return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: no operator set (sps_solver_set_operator)");
    if (!b || !x) return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: NULL %s", b ? "x" : "b");
    if (A->n != A->m)
        return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: the operator is %d x %d, not square", (int)A->n,
                         (int)A->m);
    if (b->ctx != ctx || x->ctx != ctx)
        return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: %s belongs to another context than the solver",
                         b->ctx != ctx ? "b" : "x");
    if (b == x) return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: b and x must be different vectors");
    for (int i = 0; i < 2; i++) {
        sps_vector v = i ? x : b;
        const char *nm = i ? "x" : "b";
        if (v->t != A->t)
            return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: %s is %s, the operator is %s", nm,
                             sps_scalar_name(v->t), sps_scalar_name(A->t));
        if (v->n != A->n)
            return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: %s has %d entries, the operator is %d x %d", nm,
                             (int)v->n, (int)A->n, (int)A->m);
    }
    if (s->P) {
        sps_precond P = s->P;
        SPS_CHECK(check_precond(s, P, "sps_solver_solve"));
        if (!sps_precond_ready(P))
            return sps_error(ctx, SPS_ERR_ARG,
                             "sps_solver_solve: preconditioner %s is not set up, or its last numeric step failed "
                             "(sps_precond_setup, sps_precond_update)",
                             sps_precond_name(P));
        const sps_operator M = pc_op(P);
        if (M->t != A->t)
            return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: the preconditioner is %s, the operator is %s",
                             sps_scalar_name(M->t), sps_scalar_name(A->t));
        if (M->n != A->n)
            return sps_error(ctx, SPS_ERR_ARG, "sps_solver_solve: the preconditioner has size %d, the operator %d x %d",
                             (int)M->n, (int)A->n, (int)A->m);
    }
    return SPS_OK;
}

/* x = f x, f real */
static sps_status scale_by(sps_vector x, double f)
{
    unsigned char fs[2 * sizeof(double)];
    sps_cplx_store(x->t, sps_cplx_make(f, 0), fs);
    return sps_vector_scale(fs, x);
}

static sps_status solve(sps_solver s, sps_vector b, sps_vector x, sps_result *res);
static void destroy_now(sps_solver s);

sps_status sps_solver_solve(sps_solver s, sps_vector b, sps_vector x, sps_result *res)
{
    if (!s) return SPS_ERR_ARG;
    SPS_SV_NOT_BUSY(s, "sps_solver_solve");
    s->busy = 1;
    const sps_status st = solve(s, b, x, res);
    s->busy = 0;
    if (s->destroy_pending) destroy_now(s); /* destroyed from its monitor: now */
    return st;
}

static sps_status solve(sps_solver s, sps_vector b, sps_vector x, sps_result *res)
{
    if (res) { /* a call refused before any solve reports no norms: NaN, not a relative residual of 0 */
        memset(res, 0, sizeof *res);
        res->residual_norm = res->rhs_norm = res->relative_residual = NAN;
    }
    const double t0 = sps_wtime();
    s->its = 0;
    s->hist_len = 0;
    s->reason = SPS_REASON_NONE;
    s->true_known = 0;
    s->drift_restarts = 0;
    s->bnorm = s->rnorm_true = NAN;
    SPS_CHECK(check_solve(s, b, x));
    SPS_CHECK(ws_setup(s, s->A->n, s->A->t));
    /* The iterations sum squares in double: past ||b|| ~ 1e154 they overflow, below ~1e-154
     * they vanish (b = 1e-170 would read as b = 0).  Such a b is solved as b f, x f with f
     * the power of two that brings ||b|| near 1 (exact scalings while x f stays in range, the
     * iterates the same up to the factor), then x and the reported norms scaled back; the
     * monitor sees the system's norms, a failure's message says it quotes the scaled ones.  The
     * norm is sps_vector_nrm2's, which rescales as it sums. */
    double bn = 0, f = 1;
    int e = 0, x_scaled = 0;
    SPS_CHECK(sps_vector_nrm2(b, &bn));
    if (isfinite(bn) && bn > 0 && (bn > SPS_SV_SCALE_ABOVE || bn < 1 / SPS_SV_SCALE_ABOVE)) {
        frexp(bn, &e);
        e = e > 1020 ? 1020 : e < -1020 ? -1020 : e; /* f and 1 / f normal (||b|| near DBL_MAX or subnormal) */
        /* x is scaled too: a large initial guess with a tiny b must stay below 2^450 (its squares
           summed in double), b f above 2^-450; where no power of two does both, the guess and b
           are too far apart for the iterations' arithmetic, and x is left as it was given
           (scaling it to Inf had been reported as "NaN or Inf in the initial guess") */
        double xn = 0;
        SPS_CHECK(sps_vector_nrm2(x, &xn));
        if (isfinite(xn) && xn > 0) {
            int ex = 0;
            frexp(xn, &ex);
            const int kmax = 450 - ex, kmin = -449 - e; /* x f <= 2^450, b f >= 2^-450 */
            if (kmax < kmin)
                return sps_error(s->ctx, SPS_ERR_NUMERIC,
                                 "sps_solver_solve: ||b|| = %g and the initial guess's ||x|| = %g are too far apart "
                                 "to iterate on in double (their squares); start from x = 0 or rescale the system",
                                 bn, xn);
            if (-e > kmax) e = -kmax;
        }
        f = ldexp(1.0, -e);
    }
    s->unscale = 1 / f;
    sps_vector bs = b;
    const double atol = s->atol;
    sps_status st = SPS_OK;
    if (f != 1) { /* bs = f b (one pass, b unchanged), x = f x, atol f */
        st = sps_vector_create(s->ctx, b->n, b->t, &bs);
        if (st == SPS_OK) st = sps_v_axpby(sps_cplx_make(f, 0), b, sps_cplx_make(0, 0), bs);
        if (st == SPS_OK && (st = scale_by(x, f)) == SPS_OK) x_scaled = 1;
        s->atol = atol * f;
    }
    const double t1 = sps_wtime();
    if (st == SPS_OK) st = s->method->iterate(s, bs, x);
    { /* disarm: the slots may go with the workspace */
        const sps_status st2 = sps_q_fetch_arm(s->ctx, NULL, 0, 0);
        if (st == SPS_OK) st = st2;
    }
    sv_graphs_free(s);
    /* a solve that ended (reason set) reports its true residual; a failed call
     * (allocation, device, shell callback) reports what it has */
    if (s->reason != SPS_REASON_NONE && !s->true_known) {
        double t;
        sps_status st2 = sps_sv_true_residual(s, bs, x, sps_sv_vec(s, s->ws_nvec), &t);
        if (st2 == SPS_OK) s->rnorm_true = t;
        else s->rnorm_true = NAN, st = st2; /* its failure is the message: the status says the same */
    } else if (!s->true_known) {
        s->rnorm_true = NAN; /* a failed call: ||b - A x|| of the x it leaves is not known (r0's was stale) */
    }
    if (f != 1) { /* back: x / f (where it was scaled) and the norms / f */
        if (st != SPS_OK && *sps_context_error(s->ctx)) { /* the method's message gave the scaled norms */
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", sps_context_error(s->ctx));
            st = sps_error(s->ctx, st, "%s (b was solved scaled by 2^%d: the norms quoted are 2^%d times the "
                                       "system's)", msg, -e, -e);
        }
        if (x_scaled) {
            const sps_status st2 = scale_by(x, 1 / f);
            if (st == SPS_OK) st = st2;
        }
        if (bs != b) sps_vector_destroy(bs);
        s->atol = atol;
        s->bnorm /= f, s->rnorm_true /= f, s->tol /= f;
        for (int i = 0; i < s->hist_len; i++) s->history[i] /= f;
        s->unscale = 1;
    }
    const double t2 = sps_wtime();
    if (res) {
        res->iterations = s->its;
        res->reason = s->reason;
        res->residual_norm = s->rnorm_true;
        res->rhs_norm = s->bnorm;
        res->relative_residual = s->bnorm > 0.0 ? s->rnorm_true / s->bnorm : s->rnorm_true;
        res->history = s->history;
        res->history_len = s->hist_len;
        res->time_setup = t1 - t0;
        res->time_solve = t2 - t1;
    }
    return st;
}

static void destroy_now(sps_solver s)
{
    ws_free(s);
    free(s->history);
    free(s);
}

void sps_solver_destroy(sps_solver s)
{
    if (!s) return;
    if (s->busy) s->destroy_pending = 1; /* from its own monitor or a callback: when the solve returns */
    else destroy_now(s);
}
