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

enum { RV = SPS_SLOT_FIRST, TS, TT, RR, RHO0, RHO1, TOL2, TINY, RHATN, STOP, NSLOTS };
enum { VR, VRHAT, VP, VV, VS, VT, VPH, VSH };

static void bicgstab_workspace(const struct sps_solver_s *s, int *nvec, int *nslots, size_t *host_bytes)
{
    *nvec = !sps_sv_has_pc(s) ? 6 : 8;
    *nslots = NSLOTS;
    *host_bytes = 0;
}

static double breakdown_tol(sps_scalar t)
{
    const double eps = sps_sv_eps(t);
    return eps * eps;
}

typedef struct {
    struct sps_solver_s *s;
    sps_vector x, r, rhat, p, v, sv, t, ph, sh;
} bcg_state;

static sps_bicgstab_slots bcg_slots(int cur)
{
    const sps_bicgstab_slots ks = {RHO0 + cur, RV, TS, TT, RR, RHO0 + (cur ^ 1), STOP, TOL2, TINY, RHATN};
    return ks;
}

/* Queue one iteration (cur = its parity).  Per iteration: 2 SpMV + bicgstab_p (4n) +
 * dot (2n) + waxpy (3n) + dot2 (2n) + bicgstab_xr (8n) = 19n values; with Jacobi also
 * 2 pmul (6n) = 25n.  bicgstab_xr records why the solve stops (STOP) and writes
 * nothing once it has: an iteration queued behind the last one is a no-op. */
static sps_status bcg_queue(void *arg, int cur, int restart)
{
    bcg_state *c = arg;
    struct sps_solver_s *s = c->s;
    const sps_bicgstab_slots ks = bcg_slots(cur);
    if (restart) {
        /* rhat = r;  rho = rhat^H r;  p = r  (first step, or restart from the true residual) */
        SPS_CHECK(sps_v_copy(c->r, c->rhat));
        SPS_CHECK(sps_v_dot(c->rhat, c->r, s->slots, RHO0 + cur));
        SPS_CHECK(sps_v_copy(c->r, c->p));
    } else {
        /* beta = (rho_k / rho_{k-1}) (alpha / omega);  p = r + beta (p - omega v) */
        SPS_CHECK(sps_v_bicgstab_p(s->slots, ks, c->r, c->v, c->p));
    }
    /* ph = M p;  v = A ph;  rv = rhat^H v */
    SPS_CHECK(sps_sv_precond(s, c->p, c->ph));
    SPS_CHECK(sps_op_apply(s->A, SPS_OP_N, sps_cplx_make(1, 0), c->ph, sps_cplx_make(0, 0), c->v));
    SPS_CHECK(sps_v_dot(c->rhat, c->v, s->slots, RV));
    /* s = r - alpha v,  alpha = rho / rv */
    SPS_CHECK(sps_v_waxpy_s(c->r, s->slots, (sps_scoef){-1.0, RHO0 + cur, RV}, c->v, c->sv));
    /* sh = M s;  t = A sh;  ts = t^H s;  tt = t^H t */
    SPS_CHECK(sps_sv_precond(s, c->sv, c->sh));
    SPS_CHECK(sps_op_apply(s->A, SPS_OP_N, sps_cplx_make(1, 0), c->sh, sps_cplx_make(0, 0), c->t));
    SPS_CHECK(sps_v_dot2(c->t, c->sv, s->slots, TS, TT));
    /* omega = ts / tt;  x += alpha ph + omega sh;  r = s - omega t;  rr = r^H r;  rho' = rhat^H r;  STOP */
    return sps_v_bicgstab_xr(s->slots, ks, c->rhat, c->ph, c->sh, c->sv, c->t, c->x, c->r);
}

static sps_status bicgstab_iterate(struct sps_solver_s *s, sps_vector b, sps_vector x)
{
    const int pc = sps_sv_has_pc(s);
    bcg_state st = {s, x, sps_sv_vec(s, VR), sps_sv_vec(s, VRHAT), sps_sv_vec(s, VP),
                    sps_sv_vec(s, VV), sps_sv_vec(s, VS), sps_sv_vec(s, VT), NULL, NULL};
    bcg_state *c = &st;
    st.ph = pc ? sps_sv_vec(s, VPH) : st.p;
    st.sh = pc ? sps_sv_vec(s, VSH) : st.sv;
    int done, restart = 1, stop, queued = 0;

    /* r = b - A x0;  ||b||, ||r_0|| checked at iteration 0 */
    SPS_CHECK(sps_sv_begin(s, b, x, c->r, &done));
    if (done) return SPS_OK;
    double rhat_norm = s->hslots[SPS_SLOT_RNORM].re;
    /* norm = inf: the breakdown tests still scale by ||rhat||_2 */
    if (s->norm_inf) SPS_CHECK(sps_sv_vnorm(s, c->r, 0, &rhat_norm)); /* the breakdown tests' 2-norm */
    /* the stopping rule on the device (sps_bicgstab_stop_code); with norm = inf (a max-norm
     * tolerance) the device never reports convergence, the host decides after each iteration */
    const double rule[4] = {s->norm_inf ? -1.0 : s->tol * s->tol, breakdown_tol(b->t), rhat_norm,
                            0.0}; /* TOL2, TINY, RHATN, STOP */
    SPS_CHECK(sps_sv_set_slots(s, TOL2, rule, 4));

    /* As CG: iteration it = s->its + 1 is queued and fetched asynchronously, iteration
     * it + 1 (with lookahead) queued behind it; the host acts on the code bicgstab_xr
     * recorded, so a stop leaves it + 1 a no-op and the count and x exact. */
    for (;;) {
        const int cur = s->its & 1, nxt = cur ^ 1;
        SPS_CHECK(sps_sv_advance(s, bcg_queue, c, restart, SPS_SLOT_FIRST, NSLOTS - SPS_SLOT_FIRST, &queued));
        restart = 0;

        const sps_cplx rv = s->hslots[RV], ts = s->hslots[TS], tt = s->hslots[TT], rr = s->hslots[RR];
        const sps_cplx rho = s->hslots[RHO0 + cur], rhon = s->hslots[RHO0 + nxt];
        const int code = (int)s->hslots[STOP].re;
        const int it = s->its + 1;
        if (code == SPS_BCG_SKIPPED) { /* the update was skipped: x, r unchanged */
            /* vanishing rho or rhat'v where the residual is at rounding level (rtol = 0, say); a
               NaN or Inf in them only where the recurrence underflowed (its 0/0), else a NaN
               from A or the preconditioner, reported as such below */
            sps_status st;
            if (sps_sv_stop_at_rounding(s, b->t, !(sps_sv_finite(rho) && sps_sv_finite(rv)), it,
                                        "the step was not finite", &st))
                return st;
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
        if (code == SPS_BCG_NAN)
            return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                               "BiCGSTAB: the residual is not finite at iteration %d (NaN/Inf in A M p or A M s)", it);
        double rn = sqrt(rr.re);
        const double rn2 = rn;
        if (s->norm_inf) SPS_CHECK(sps_sv_vnorm(s, c->r, 1, &rn));
        SPS_CHECK(sps_sv_record(s, rn, &stop));
        if (s->norm_inf ? rn <= s->tol : code == SPS_BCG_CONVERGED) { /* rr <= tol^2 decided on the device, or
                                                                       max |r_i| <= tol on the host */
            int conv;
            SPS_CHECK(sps_sv_confirm(s, b, x, c->r, &conv));
            if (conv) return SPS_OK;
            restart = 1; /* recurrence drift: r now holds b - A x, the new shadow residual */
            queued = 0;  /* the queued iteration did nothing */
            rhat_norm = s->rnorm_true;
            if (s->norm_inf) SPS_CHECK(sps_sv_vnorm(s, c->r, 0, &rhat_norm)); /* the breakdown tests' 2-norm */
            const double rearm[2] = {rhat_norm, 0.0}; /* RHATN, STOP */
            SPS_CHECK(sps_sv_set_slots(s, RHATN, rearm, 2));
        }
        if (stop) return sps_sv_stop_monitor(s, rn);
        if (s->its >= s->maxit) return sps_sv_stop_maxit(s, rn);
        if (restart) continue;
        /* omega = t's / t't ~ 0: r = s, and the next beta divides by omega */
        if (code == SPS_BCG_OMEGA || code == SPS_BCG_RHO) { /* at rounding level: no breakdown of A's */
            sps_status st;
            if (sps_sv_stop_at_rounding(s, b->t, 0, it, code == SPS_BCG_RHO ? "rho = rhat'r vanished" : "omega vanished",
                                        &st))
                return st;
        }
        if (code == SPS_BCG_OMEGA)
            return sps_sv_stop(s, SPS_REASON_BREAKDOWN, SPS_ERR_BREAKDOWN,
                               "BiCGSTAB breakdown at iteration %d: omega = t's / t't = %.3e (t's = %.3e, ||t|| = "
                               "%.3e): the stabilising step makes no progress",
                               it, hypot(ts.re, ts.im) / tt.re, hypot(ts.re, ts.im), sqrt(tt.re));
        /* rho = rhat^H r ~ 0: the Bi-CG recurrence cannot continue */
        if (code == SPS_BCG_RHO)
            return sps_sv_stop(s, SPS_REASON_BREAKDOWN, SPS_ERR_BREAKDOWN,
                               "BiCGSTAB breakdown at iteration %d: rho = rhat'r = %.3e is zero relative to "
                               "||rhat|| ||r|| = %.3e",
                               it, hypot(rhon.re, rhon.im), rhat_norm * rn2);
    }
}

const sps_solver_method sps_solver_bicgstab_method = {
    .type = SPS_SOLVER_BICGSTAB, .name = "bicgstab", .title = "BiCGSTAB", .norm_inf = 1,
    .workspace = bicgstab_workspace, .iterate = bicgstab_iterate,
    .pc_needs = 0, /* any M (right preconditioning) */
};
