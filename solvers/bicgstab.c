/* BiCGSTAB with right preconditioning: A M u = b, x = M u.
 *
 * Solves A x = b for general (nonsymmetric, non-Hermitian) nonsingular A.
 * References: H. A. van der Vorst, "Bi-CGSTAB: a fast and smoothly converging
 * variant of Bi-CG", SIAM J. Sci. Stat. Comput. 13 (1992); Saad, "Iterative
 * Methods for Sparse Linear Systems", 2nd ed., Alg. 7.7, with M applied on the
 * right as in PETSc KSPBCGS (-ksp_pc_side right), so the residual r tracked
 * here is the unpreconditioned b - A x.  As in PETSc, one iteration is a full
 * step (two operator products) and is judged by ||r|| at its end.
 *
 * rhat = r_0 (the shadow residual).  Breakdowns: rhat^H v = 0 (the step is
 * skipped by the guarded update kernel), rho = rhat^H r ~ 0 or omega ~ 0
 * relative to the norms involved (threshold eps^2 of the scalar type: far
 * below rounding noise, only true breakdowns trip it). */
#include "solvers/solver_impl.h"

#include <float.h>
#include <math.h>

enum { RV = SPS_SLOT_FIRST, TS, TT, RR, RHO0, RHO1, NSLOTS };
enum { VR, VRHAT, VP, VV, VS, VT, VPH, VSH };

static void bicgstab_workspace(const struct sps_solver_s *s, int *nvec, int *nslots, size_t *host_bytes)
{
    *nvec = sps_pc_is_identity(s->P) ? 6 : 8;
    *nslots = NSLOTS;
    *host_bytes = 0;
}

static double breakdown_tol(sps_scalar t)
{
    const double eps = (t == SPS_F32 || t == SPS_C32) ? (double)FLT_EPSILON : DBL_EPSILON;
    return eps * eps;
}

static sps_status bicgstab_iterate(struct sps_solver_s *s, sps_vector b, sps_vector x)
{
    sps_context ctx = s->ctx;
    const sps_kernels *k = sps_sv_kern(s);
    const sps_index n = b->n;
    const int pc = sps_sv_has_pc(s);
    sps_vector r = sps_sv_vec(s, VR), rhat = sps_sv_vec(s, VRHAT), p = sps_sv_vec(s, VP), v = sps_sv_vec(s, VV);
    sps_vector sv = sps_sv_vec(s, VS), t = sps_sv_vec(s, VT);
    sps_vector ph = pc ? sps_sv_vec(s, VPH) : p, sh = pc ? sps_sv_vec(s, VSH) : sv;
    const double tiny = breakdown_tol(b->t);
    double rhat_norm = 0.0;
    int done, restart = 1, stop;

    /* r = b - A x0;  ||b||, ||r_0|| checked at iteration 0 */
    SPS_CHECK(sps_sv_begin(s, b, x, r, &done));
    if (done) return SPS_OK;
    rhat_norm = s->hslots[SPS_SLOT_RNORM].re;

    /* Per iteration: 2 SpMV + bicgstab_p (4n) + dot (2n) + waxpy (3n) + dot2 (2n)
     * + bicgstab_xr (8n) = 19n values; with Jacobi also 2 pmul (6n) = 25n; one
     * slot fetch. */
    for (;;) {
        const int cur = s->its & 1, nxt = cur ^ 1;
        const sps_bicgstab_slots ks = {RHO0 + cur, RV, TS, TT, RR, RHO0 + nxt};
        if (restart) {
            /* rhat = r;  rho = rhat^H r;  p = r  (first step, or restart from the true residual) */
            SPS_CHECK(k->copy(ctx, n, r->data, rhat->data));
            SPS_CHECK(k->dot(ctx, n, rhat->data, r->data, s->slots, RHO0 + cur));
            SPS_CHECK(k->copy(ctx, n, r->data, p->data));
            restart = 0;
        } else {
            /* beta = (rho_k / rho_{k-1}) (alpha / omega);  p = r + beta (p - omega v) */
            SPS_CHECK(k->bicgstab_p(ctx, n, s->slots, ks, r->data, v->data, p->data));
        }
        /* ph = M p;  v = A ph */
        SPS_CHECK(sps_sv_precond(s, p, ph));
        SPS_CHECK(sps_op_apply(s->A, SPS_OP_N, sps_cplx_make(1, 0), ph, sps_cplx_make(0, 0), v));
        /* rv = rhat^H v */
        SPS_CHECK(k->dot(ctx, n, rhat->data, v->data, s->slots, RV));
        /* s = r - alpha v,  alpha = rho / rv */
        SPS_CHECK(k->waxpy_s(ctx, n, r->data, s->slots, (sps_scoef){-1.0, RHO0 + cur, RV}, v->data, sv->data));
        /* sh = M s;  t = A sh */
        SPS_CHECK(sps_sv_precond(s, sv, sh));
        SPS_CHECK(sps_op_apply(s->A, SPS_OP_N, sps_cplx_make(1, 0), sh, sps_cplx_make(0, 0), t));
        /* ts = t^H s;  tt = t^H t */
        SPS_CHECK(k->dot2(ctx, n, t->data, sv->data, s->slots, TS, TT));
        /* omega = ts / tt;  x += alpha ph + omega sh;  r = s - omega t;  rr = r^H r;  rho' = rhat^H r */
        SPS_CHECK(
            k->bicgstab_xr(ctx, n, s->slots, ks, rhat->data, ph->data, sh->data, sv->data, t->data, x->data, r->data));
        SPS_CHECK(sps_sv_fetch(s, SPS_SLOT_FIRST, NSLOTS - SPS_SLOT_FIRST));

        const sps_cplx rv = s->hslots[RV], ts = s->hslots[TS], tt = s->hslots[TT], rr = s->hslots[RR];
        const sps_cplx rho = s->hslots[RHO0 + cur], rhon = s->hslots[RHO0 + nxt];
        const int it = s->its + 1;
        if (rr.re == -1.0) { /* the update was skipped: x, r unchanged */
            /* finite rho and rhat'v with a non-finite alpha: rhat'v = 0 (s, t are NaN then too) */
            if (sps_sv_finite(rho) && sps_sv_finite(rv) && !isfinite(hypot(rho.re, rho.im) / hypot(rv.re, rv.im)))
                return sps_sv_stop(s, SPS_REASON_BREAKDOWN, SPS_ERR_BREAKDOWN,
                                   "BiCGSTAB breakdown at iteration %d: rhat'v = %.3e%+.3ei (rho = %.3e): alpha = rho "
                                   "/ rhat'v is not finite",
                                   it, rv.re, rv.im, rho.re);
            return sps_sv_stop(
                s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                "BiCGSTAB: NaN/Inf at iteration %d (rhat'v = %g, t's = %g, t't = %g); x holds iterate %d", it, rv.re,
                ts.re, tt.re, s->its);
        }
        if (!sps_sv_finite(rr) || !sps_sv_finite(rhon))
            return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                               "BiCGSTAB: the residual is not finite at iteration %d (NaN/Inf in A M p or A M s)", it);
        const double rn = sqrt(rr.re);
        SPS_CHECK(sps_sv_record(s, rn, &stop));
        if (rn <= s->tol) {
            int conv;
            SPS_CHECK(sps_sv_confirm(s, b, x, r, &conv));
            if (conv) return SPS_OK;
            restart = 1; /* recurrence drift: r now holds b - A x, the new shadow residual */
            rhat_norm = s->rnorm_true;
        }
        if (stop) return sps_sv_stop_monitor(s, rn);
        if (s->its >= s->maxit) return sps_sv_stop_maxit(s, rn);
        if (restart) continue;
        /* omega = t's / t't ~ 0: r = s, and the next beta divides by omega */
        if (hypot(ts.re, ts.im) <= tiny * sqrt(tt.re) * rn)
            return sps_sv_stop(s, SPS_REASON_BREAKDOWN, SPS_ERR_BREAKDOWN,
                               "BiCGSTAB breakdown at iteration %d: omega = t's / t't = %.3e (t's = %.3e, ||t|| = "
                               "%.3e): the stabilising step makes no progress",
                               it, hypot(ts.re, ts.im) / tt.re, hypot(ts.re, ts.im), sqrt(tt.re));
        /* rho = rhat^H r ~ 0: the Bi-CG recurrence cannot continue */
        if (hypot(rhon.re, rhon.im) <= tiny * rhat_norm * rn)
            return sps_sv_stop(s, SPS_REASON_BREAKDOWN, SPS_ERR_BREAKDOWN,
                               "BiCGSTAB breakdown at iteration %d: rho = rhat'r = %.3e is zero relative to "
                               "||rhat|| ||r|| = %.3e",
                               it, hypot(rhon.re, rhon.im), rhat_norm * rn);
    }
}

const sps_solver_method sps_solver_bicgstab_method = {SPS_SOLVER_BICGSTAB, "bicgstab", "BiCGSTAB", bicgstab_workspace,
                                                      bicgstab_iterate};
