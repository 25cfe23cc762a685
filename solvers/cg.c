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

enum { PQ = SPS_SLOT_FIRST, RR0, RR1, RHO0, RHO1, NSLOTS };
enum { VR, VP, VQ, VZ };

static void cg_workspace(const struct sps_solver_s *s, int *nvec, int *nslots, size_t *host_bytes)
{
    *nvec = sps_pc_is_identity(s->P) ? 3 : 4;
    *nslots = NSLOTS;
    *host_bytes = 0;
}

static sps_status cg_iterate(struct sps_solver_s *s, sps_vector b, sps_vector x)
{
    sps_context ctx = s->ctx;
    const sps_kernels *k = sps_sv_kern(s);
    const sps_index n = b->n;
    const int pc = sps_sv_has_pc(s);
    sps_vector r = sps_sv_vec(s, VR), p = sps_sv_vec(s, VP), q = sps_sv_vec(s, VQ);
    sps_vector z = pc ? sps_sv_vec(s, VZ) : r;
    const int rho0 = pc ? RHO0 : RR0; /* without M, rho_k = r_k^H r_k is rr_k */
    int done, restart = 1, stop;

    /* r = b - A x0;  ||b||, ||r_0|| checked at iteration 0 */
    SPS_CHECK(sps_sv_begin(s, b, x, r, &done));
    if (done) return SPS_OK;

    /* Per iteration: 1 SpMV + dot (2n) + cg_step (6n) + xpay (3n) = 11n values;
     * with Jacobi also pmul (3n) + dot (2n) = 16n; one slot fetch. */
    for (;;) {
        const int cur = s->its & 1, nxt = cur ^ 1;
        if (restart) {
            /* z = M r;  rho = r^H z;  p = z  (first step, or restart from the true residual) */
            SPS_CHECK(sps_sv_precond(s, r, z));
            SPS_CHECK(k->dot(ctx, n, r->data, z->data, s->slots, rho0 + cur));
            SPS_CHECK(k->copy(ctx, n, z->data, p->data));
            restart = 0;
        } else {
            /* p = z + (rho_k / rho_{k-1}) p */
            SPS_CHECK(k->xpay_s(ctx, n, z->data, s->slots, (sps_scoef){1.0, rho0 + cur, rho0 + nxt}, p->data));
        }
        /* q = A p */
        SPS_CHECK(sps_op_apply(s->A, SPS_OP_N, sps_cplx_make(1, 0), p, sps_cplx_make(0, 0), q));
        /* pq = p^H q */
        SPS_CHECK(k->dot(ctx, n, p->data, q->data, s->slots, PQ));
        /* alpha = rho / pq;  x += alpha p;  r -= alpha q;  rr = r^H r  (skipped when pq <= 0) */
        SPS_CHECK(k->cg_step(ctx, n, s->slots, rho0 + cur, PQ, RR0 + nxt, p->data, q->data, x->data, r->data));
        if (pc) {
            /* z = M r;  rho_{k+1} = r^H z */
            SPS_CHECK(sps_pc_apply(s->P, r, z));
            SPS_CHECK(k->dot(ctx, n, r->data, z->data, s->slots, RHO0 + nxt));
        }
        SPS_CHECK(sps_sv_fetch(s, SPS_SLOT_FIRST, NSLOTS - SPS_SLOT_FIRST));

        const sps_cplx pq = s->hslots[PQ], rr = s->hslots[RR0 + nxt], rho = s->hslots[rho0 + cur];
        const int it = s->its + 1;
        if (rr.re == -1.0) { /* the step was skipped: x, r unchanged */
            if (!sps_sv_finite(pq) || !sps_sv_finite(rho))
                return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                                   "CG: NaN/Inf at iteration %d (p'Ap = %g, rho = %g); x holds iterate %d", it, pq.re,
                                   rho.re, s->its);
            if (pq.re <= 0.0)
                return sps_sv_stop(s, SPS_REASON_INDEFINITE, SPS_ERR_BREAKDOWN,
                                   "CG breakdown at iteration %d: p'Ap = %.3e <= 0: the operator is not positive "
                                   "definite",
                                   it, pq.re);
            return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                               "CG: step length rho/p'Ap = %g/%g overflows at iteration %d; x holds iterate %d", rho.re,
                               pq.re, it, s->its);
        }
        if (pc && !(rho.re > 0.0)) /* rho_0 or rho after a restart; later ones are checked below */
            return sps_sv_stop(s, SPS_REASON_INDEFINITE, SPS_ERR_BREAKDOWN,
                               "PCG breakdown at iteration %d: r'Mr = %.3e <= 0: the preconditioner is not positive "
                               "definite",
                               it, rho.re);
        if (!sps_sv_finite(rr))
            return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                               "CG: the residual norm is not finite at iteration %d (NaN/Inf in A p)", it);
        const double rn = sqrt(rr.re);
        SPS_CHECK(sps_sv_record(s, rn, &stop));
        if (rn <= s->tol) {
            int conv;
            SPS_CHECK(sps_sv_confirm(s, b, x, r, &conv));
            if (conv) return SPS_OK;
            restart = 1; /* recurrence drift: r now holds b - A x */
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

const sps_solver_method sps_solver_cg_method = {SPS_SOLVER_CG, "cg", "CG", cg_workspace, cg_iterate};
