/* Conjugate Gradient; preconditioned CG (PCG) when a preconditioner M is set.
 *
 * Solves A x = b for A symmetric positive definite (Hermitian positive definite
 * for complex types), with M SPD/HPD.  Reference: Saad, "Iterative Methods for
 * Sparse Linear Systems", 2nd ed., Alg. 6.18 (CG) and Alg. 9.1 (PCG); same
 * iteration as PETSc KSPCG with the unpreconditioned norm: iteration k ends
 * after the k-th product A p and is judged by the recurrence residual ||r_k||.
 *
 * Scalars live in slots; rho alternates between two slots by iteration parity
 * so no kernel writes a slot it reads.  Without M, z is r and rho = r^H r is
 * the squared norm the CG step already reduces. */
#include "solvers/solver_impl.h"

#include <math.h>
#include <string.h>

enum { PQ = SPS_SLOT_FIRST, RR0, RR1, RHO0, RHO1, TOL2, STOP, NSLOTS };
enum { VR, VP0, VP1, VQ, VZ };

static void cg_workspace(const struct sps_solver_s *s, int *nvec, int *nslots, size_t *host_bytes)
{
    *nvec = !sps_sv_has_pc(s) ? 4 : 5;
    *nslots = NSLOTS;
    *host_bytes = 0;
}

typedef struct {
    struct sps_solver_s *s;
    int pc;
    int pc_diag;     /* M diagonal: the step and z = M r, rho = r^H z in one pass (cg_step_pmul) */
    sps_vector x, r, q, z;
    sps_vector p[2]; /* the direction, written alternately by parity: p_k in p[k & 1] */
    int rho0;        /* slot pair of rho: RHO0, or RR0 without M (rho = r^H r) */
} cg_state;

/* Queue one iteration; cur = its parity (the slot pairs and the two direction
 * buffers alternate so that no kernel writes what it reads).  Per iteration, on CSR:
 * one pass forms p = z + beta p_old for every column it gathers, writes p and q = A p
 * and reduces p^H q (matrix + 2n read + 2n written), then cg_step (6n): the 10n of
 * the traffic floor; on CUDA both in one cooperative launch where the rows fit one
 * resident wave (csr_cg_iter: a grid barrier instead of a second launch).  Other formats:
 * waxpy (3n), then SpMV + dot (2n), the dot in the product's pass where the format has
 * spmv_dot (bcsr).  With M diagonal (Jacobi): the direction update and product as above
 * without the step, then the step with z = M r, rho = r^H z in one cg_step_pmul pass (8n);
 * any other M: the iteration as without M, then M's apply with its dot.  Nothing
 * here reads a slot on the host, so an iteration can be queued before the outcome of the
 * previous one is known, and recorded once as a graph. */
static sps_status cg_queue(void *arg, int cur, int restart)
{
    cg_state *c = arg;
    struct sps_solver_s *s = c->s;
    const int nxt = cur ^ 1;
    sps_vector p = c->p[cur];
    /* the step: alpha = rho / pq;  x += alpha p;  r -= alpha q;  rr = r^H r;  stop unless rr > tol^2
     * (once stopped, it writes nothing: an iteration queued behind it is a no-op) */
    const sps_cg_slots ks = {c->rho0 + cur, PQ, RR0 + nxt, TOL2, STOP};
    if (restart) {
        /* z = M r;  rho = r^H z;  p = z  (first step, or restart from the true residual);  q = A p;  pq = p^H q */
        SPS_CHECK(sps_sv_precond_dot(s, c->r, c->z, c->rho0 + cur));
        SPS_CHECK(sps_v_copy(c->z, p));
        SPS_CHECK(sps_op_apply_fused(s->A, &(sps_fuse_desc){.kind = SPS_FUSE_DOT, .x = p, .y = c->q, .slots = s->slots,
                                                             .out = PQ}));
    } else {
        /* p = z + (rho_k / rho_{k-1}) p_old;  q = A p;  pq = p^H q;  and, unless M's product joins
         * the step below, the step: one pass where the operator fuses it (CSR on CUDA: one
         * cooperative launch where the rows fit a resident wave), else the two */
        const sps_fuse_desc it = {.kind = c->pc_diag ? SPS_FUSE_XPAY_DOT : SPS_FUSE_CG_ITER, .x = p, .y = c->q,
                                  .z = c->z, .pold = c->p[nxt], .c = {1.0, c->rho0 + cur, c->rho0 + nxt},
                                  .slots = s->slots, .out = PQ, .cx = c->x, .cr = c->r, .k = ks};
        SPS_CHECK(sps_op_apply_fused(s->A, &it));
        if (!c->pc_diag) return c->pc ? sps_sv_precond_dot(s, c->r, c->z, RHO0 + nxt) : SPS_OK;
    }
    if (c->pc_diag) /* the step;  z = M r;  rho_{k+1} = r^H z: one pass */
        return sps_sv_cg_step_precond_dot(s, ks, p, c->q, c->x, c->r, c->z, RHO0 + nxt);
    SPS_CHECK(sps_v_cg_step(s->slots, ks, p, c->q, c->x, c->r));
    /* z = M r;  rho_{k+1} = r^H z */
    return c->pc ? sps_sv_precond_dot(s, c->r, c->z, RHO0 + nxt) : SPS_OK;
}

static sps_status cg_run(cg_state *c, sps_vector b)
{
    struct sps_solver_s *s = c->s;
    const int pc = c->pc;
    int done, restart = 1, stop, queued = 0;

    /* r = b - A x0;  ||b||, ||r_0|| checked at iteration 0 */
    SPS_CHECK(sps_sv_begin(s, b, c->x, c->r, &done));
    if (done) return SPS_OK;
    /* the stopping rule on the device: cg_step sets STOP when rr <= tol^2; with norm = inf
     * (a max-norm tolerance) never, the host deciding after each iteration instead */
    const double rule[2] = {s->norm_inf ? -1.0 : s->tol * s->tol, 0.0}; /* TOL2, STOP */
    SPS_CHECK(sps_sv_set_slots(s, TOL2, rule, 2));

    /* Iteration it = s->its + 1 is queued and its slots fetched asynchronously, with
     * iteration it + 1 queued behind them where the backend allows (sps_sv_advance), so
     * the GPU never idles on the host.  If it stops (convergence, breakdown, NaN), STOP
     * is set on the device and it + 1 changes nothing: the count and x are exact. */
    for (;;) {
        const int cur = s->its & 1, nxt = cur ^ 1;
        SPS_CHECK(sps_sv_advance(s, cg_queue, c, restart, SPS_SLOT_FIRST, NSLOTS - SPS_SLOT_FIRST, &queued));
        restart = 0;

        const sps_cplx pq = s->hslots[PQ], rr = s->hslots[RR0 + nxt], rho = s->hslots[c->rho0 + cur];
        const int it = s->its + 1;
        if (pc && !(rho.re > 0.0)) /* rho_0 or rho after a restart; later ones are checked below */
            return sps_sv_stop(s, SPS_REASON_INDEFINITE, SPS_ERR_BREAKDOWN,
                               "PCG breakdown at iteration %d: r'Mr = %.3e <= 0: the preconditioner is not positive "
                               "definite",
                               it, rho.re);
        if (rr.re == -1.0) { /* the step was skipped: x, r unchanged */
            if (!sps_sv_finite(pq) || !sps_sv_finite(rho))
                return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                                   "CG: NaN/Inf at iteration %d (p'Ap = %g, rho = %g); x holds iterate %d", it, pq.re,
                                   rho.re, s->its);
            /* p'Ap <= 0, or rho / p'Ap past the range, where the residual is down at rounding
               level (rtol = 0, say): the rounding of a tiny p, not an indefinite A */
            sps_status st;
            if (sps_sv_stop_at_rounding(s, b->t, 0, it, pq.re <= 0.0 ? "p'Ap <= 0" : "rho / p'Ap overflowed", &st))
                return st;
            if (pq.re <= 0.0)
                return sps_sv_stop(s, SPS_REASON_INDEFINITE, SPS_ERR_BREAKDOWN,
                                   "CG breakdown at iteration %d: p'Ap = %.3e <= 0: the operator is not positive "
                                   "definite",
                                   it, pq.re);
            return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                               "CG: step length rho/p'Ap = %g/%g overflows at iteration %d; x holds iterate %d", rho.re,
                               pq.re, it, s->its);
        }
        if (!sps_sv_finite(rr))
            return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                               "CG: the residual norm is not finite at iteration %d (NaN/Inf in A p)", it);
        double rn = sqrt(rr.re);
        if (s->norm_inf) SPS_CHECK(sps_sv_vnorm(s, c->r, 1, &rn));
        SPS_CHECK(sps_sv_record(s, rn, &stop));
        if (s->norm_inf ? rn <= s->tol : s->hslots[STOP].re != 0.0) { /* rr <= tol^2 decided on the device, or
                                                                        max |r_i| <= tol on the host */
            int conv;
            SPS_CHECK(sps_sv_confirm(s, b, c->x, c->r, &conv));
            if (conv) return SPS_OK;
            restart = 1; /* recurrence drift: r now holds b - A x; the queued iteration did nothing */
            queued = 0;
            SPS_CHECK(sps_sv_set_slots(s, STOP, &(double){0.0}, 1));
        }
        if (stop) return sps_sv_stop_monitor(s, rn);
        if (s->its >= s->maxit) return sps_sv_stop_maxit(s, rn);
        if (pc && !restart) {
            const sps_cplx rz = s->hslots[RHO0 + nxt];
            if (!sps_sv_finite(rz))
                return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                                   "PCG: r'Mr is not finite at iteration %d (NaN/Inf from the preconditioner)", it);
            if (rz.re <= 0.0)
                return sps_sv_stop(s, SPS_REASON_INDEFINITE, SPS_ERR_BREAKDOWN,
                                   "PCG breakdown at iteration %d: r'Mr = %.3e <= 0: the preconditioner is not "
                                   "positive definite",
                                   it, rz.re);
        }
    }
}

static sps_status cg_iterate(struct sps_solver_s *s, sps_vector b, sps_vector x)
{
    cg_state c;
    memset(&c, 0, sizeof c);
    c.s = s;
    c.pc = sps_sv_has_pc(s);
    c.pc_diag = sps_sv_pc_diagonal(s);
    c.x = x;
    c.r = sps_sv_vec(s, VR);
    c.p[0] = sps_sv_vec(s, VP0);
    c.p[1] = sps_sv_vec(s, VP1);
    c.q = sps_sv_vec(s, VQ);
    c.z = c.pc ? sps_sv_vec(s, VZ) : c.r;
    c.rho0 = c.pc ? RHO0 : RR0; /* without M, rho_k = r_k^H r_k is rr_k */
    return cg_run(&c, b);
}

const sps_solver_method sps_solver_cg_method = {
    .type = SPS_SOLVER_CG, .name = "cg", .title = "CG", .norm_inf = 1,
    .workspace = cg_workspace, .iterate = cg_iterate,
    .pc_needs = SPS_PRECOND_SYMMETRIC, /* PCG is CG on the SPD M^(1/2) A M^(1/2) */
};
