/* libspsolve — fused solver steps (included by kernels/kernels.h).
 *
 * Each entry fuses vector updates with the reduction they feed so that a solver
 * iteration makes the fewest passes over memory (ARCHITECTURE §5).  Same
 * conventions as kernels.h.  Every entry must be implemented by every backend.
 *
 * Rules every backend keeps:
 *   - coefficients are computed from slots in double (complex) arithmetic at
 *     kernel time (sps_scoef_eval in kernels/cpu/common.h), then rounded to T;
 *   - a kernel never writes a slot it reads, so a GPU launch may read its
 *     coefficients in every block while the last block writes the reduction
 *     (solvers alternate slot indices, e.g. rho_old / rho_new, by parity);
 *   - reductions are deterministic (fixed order), sums of x^H y conjugate x;
 *   - a "guarded" step whose coefficient is unusable writes no vector and sets
 *     slots[rr].re = -1 (a squared norm never is), so the solver learns it from
 *     the one slot copy it makes per iteration and x stays the last finite iterate.
 *
 * Users: CG (cg_step), BiCGSTAB (bicgstab_p, waxpy_s, dot2, bicgstab_xr),
 * GMRES (axpy_dot_s, scale_s); plus dot, nrm2, axpy_s, xpay_s of kernels.h. */
#ifndef SPS_SOLVER_KERNELS_H
#define SPS_SOLVER_KERNELS_H

/** Slot indices of the BiCGSTAB scalars (Saad Alg. 7.7):
 *    rho = rhat^H r,  rv = rhat^H v,  ts = t^H s,  tt = t^H t,
 *    rr = r^H r of the new residual,  rho_new = rhat^H r of the new residual;
 *  the device-side stopping rule (stop < 0: none): stop holds a SPS_BCG_* code,
 *  tol2 = (stopping tolerance)^2, tiny = the breakdown threshold, rhatn = ||rhat||. */
typedef struct { int rho, rv, ts, tt, rr, rho_new, stop, tol2, tiny, rhatn; } sps_bicgstab_slots;

/** Why BiCGSTAB stops after a bicgstab_xr, decided where the slots live (so the host
 *  and the device never disagree): the solver reads the code, it does not recompute it. */
enum { SPS_BCG_GO = 0, SPS_BCG_CONVERGED, SPS_BCG_OMEGA, SPS_BCG_RHO, SPS_BCG_NAN, SPS_BCG_SKIPPED };
/** The code from the slots bicgstab_xr has just written (rr, rho_new) and ts, tt:
 *  NaN/Inf in rr or rho_new; rr <= tol2 (converged, to be confirmed); omega = t's/t't
 *  ~ 0 (|t's| <= tiny ||t|| ||r||); rho_new ~ 0 (|rho_new| <= tiny ||rhat|| ||r||). */
static inline SPS_HD int sps_bicgstab_stop_code(const sps_cplx *slots, sps_bicgstab_slots k)
{
    const double rr = slots[k.rr].re;
    const sps_cplx rn = slots[k.rho_new], ts = slots[k.ts], tt = slots[k.tt];
    if (!(rr - rr == 0.0) || !(rn.re - rn.re == 0.0 && rn.im - rn.im == 0.0)) return SPS_BCG_NAN;
    if (!(rr > slots[k.tol2].re)) return SPS_BCG_CONVERGED;
    const double r = sqrt(rr), tiny = slots[k.tiny].re;
    if (hypot(ts.re, ts.im) <= tiny * sqrt(tt.re) * r) return SPS_BCG_OMEGA;
    if (hypot(rn.re, rn.im) <= tiny * slots[k.rhatn].re * r) return SPS_BCG_RHO;
    return SPS_BCG_GO;
}

/** Slot indices of a CG step: rho = r^H z, pq = p^H A p, rr = r^H r of the new
 *  residual, tol2 = (stopping tolerance)^2 (read), stop = the device-side stop flag. */
typedef struct { int rho, pq, rr, tol2, stop; } sps_cg_slots;

#define SPS_KERNEL_LIST_SOLVER(X, P, S)                                                             \
    /* CG step, alpha = slots[rho] / slots[pq]:                                                  */ \
    /*   x += alpha p;  r -= alpha q;  slots[rr] = r^H r;  slots[stop] = 1 unless rr > tol2.     */ \
    /* Stopped (Re slots[stop] != 0 on entry): nothing at all is written, so iterations queued   */ \
    /* after the one that stopped leave x and r alone.  Guarded: when Re slots[pq] <= 0,         */ \
    /* Re slots[rho] <= 0 or alpha is not finite, nothing is written but slots[rr] = -1 and     */ \
    /* slots[stop] = 1 (no step along a direction of non-positive curvature).                    */ \
    X(P, S, cg_step, (sps_exec *ex, sps_index n, sps_cplx *slots, sps_cg_slots k,               \
                      const void *p, const void *q, void *x, void *r))                              \
    /* PCG's step with a diagonal M = diag(d): cg_step, then, when its step was taken, z = d .* r */ \
    /* and slots[rz] = r^H z (Jacobi's z = M r, rho = r^H z) in the same pass: 8n instead of      */ \
    /* cg_step's 6n and pmul_dot's 3n.  Stopped or guarded: as cg_step (z, slots[rz] unwritten).   */ \
    X(P, S, cg_step_pmul, (sps_exec *ex, sps_index n, sps_cplx *slots, sps_cg_slots k,          \
                           const void *p, const void *q, void *x, void *r, const void *d, void *z,  \
                           int rz))                                                                 \
    /* BiCGSTAB direction, beta = (rho/rho_old)(alpha/omega) = slots[rho] slots[tt] /            */ \
    /* (slots[rv] slots[ts]) and omega = slots[ts] / slots[tt] (rv, ts, tt of the previous step): */ \
    /*   p = r + beta (p - omega v)                                                              */ \
    X(P, S, bicgstab_p, (sps_exec *ex, sps_index n, const sps_cplx *slots, sps_bicgstab_slots k, \
                         const void *r, const void *v, void *p))                                    \
    /* w = x + c y with c from slots (w may alias neither x nor y)                               */ \
    X(P, S, waxpy_s, (sps_exec *ex, sps_index n, const void *x, const sps_cplx *slots, sps_scoef c, \
                      const void *y, void *w))                                                      \
    /* slots[xy] = x^H y;  slots[xx] = x^H x  (one pass; BiCGSTAB t^H s and t^H t)               */ \
    X(P, S, dot2, (sps_exec *ex, sps_index n, const void *x, const void *y, sps_cplx *slots,     \
                   int xy, int xx))                                                                 \
    /* BiCGSTAB update, alpha = slots[rho] / slots[rv], omega = slots[ts] / slots[tt]            */ \
    /* (omega = 0 when slots[tt] == 0: then t = 0, s = 0 and x + alpha ph is the solution):      */ \
    /*   x += alpha ph + omega sh;  r = s - omega t;                                             */ \
    /*   slots[rr] = r^H r;  slots[rho_new] = rhat^H r.                                          */ \
    /* Guarded: when alpha or omega is not finite, nothing is written but slots[rr] = -1.        */ \
    X(P, S, bicgstab_xr, (sps_exec *ex, sps_index n, sps_cplx *slots, sps_bicgstab_slots k,      \
                          const void *rhat, const void *ph, const void *sh, const void *s,          \
                          const void *t, void *x, void *r))                                         \
    /* Modified Gram-Schmidt step: y += c x (c from slots);  slots[out] = z^H y (the new y;      */ \
    /* z may be x, y or another vector; the next basis vector's coefficient in GMRES)            */ \
    X(P, S, axpy_dot_s, (sps_exec *ex, sps_index n, sps_cplx *slots, sps_scoef c, const void *x, \
                         void *y, const void *z, int out))                                          \
    /* x = c x with c from slots (GMRES: v = w / ||w||)                                          */ \
    X(P, S, scale_s, (sps_exec *ex, sps_index n, const sps_cplx *slots, sps_scoef c, void *x))

#endif
