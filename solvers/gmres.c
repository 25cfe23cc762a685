/* Restarted GMRES(m) with right preconditioning: A M u = b, x = M u.
 *
 * Solves A x = b for general nonsingular A.  Reference: Saad, "Iterative
 * Methods for Sparse Linear Systems", 2nd ed., Alg. 6.11 (GMRES with Givens
 * rotations) and §9.3.2 (right preconditioning); Arnoldi by modified
 * Gram-Schmidt followed by one re-orthogonalisation pass (MGS2).  Iterations
 * count Arnoldi steps across restarts, as PETSc KSPGMRES; the stopping test uses
 * the Givens estimate |g_{j+1}|, which equals ||b - A x_j|| for right
 * preconditioning.  Each cycle starts from the true residual b - A x, which is
 * also tested (PETSc does the same at a restart).  A happy breakdown
 * (h_{j+1,j} ~ 0: the Krylov space is invariant) is convergence where the
 * estimate meets the tolerance; where it does not, the least-squares iterate on
 * that space is the best there is (A M is singular on it and r_0 is not in its
 * range), so the solve ends there as stagnation (SPS_ERR_NOT_CONVERGED: x holds
 * that iterate, which inverse iteration on a singular operator, spsolve-spin on an
 * open mesh, goes on with; PETSc calls it KSP_DIVERGED_BREAKDOWN).
 *
 * Device: the basis V (m+1 vectors), z = M v_j.  Host: the tiny Hessenberg
 * matrix, the rotations and the least-squares solve; the coefficients of one
 * Arnoldi column come back in one slot fetch.  Slots interleave the two
 * Gram-Schmidt passes, h_i at H(i) and its correction at C(i), so the fetch of
 * column j is the contiguous range [HN, C(j)]. */
#include "solvers/solver_impl.h"

#include <limits.h>

#include <complex.h>
#ifndef CMPLX /* glibc defines it only for GCC (__builtin_complex): clang's builds (fuzzing) */
#define CMPLX(x, y) ((double _Complex){(double)(x), (double)(y)})
#endif
#include <float.h>
#include <math.h>

typedef double _Complex zc;

enum { HN = SPS_SLOT_FIRST, H0 };
#define H(i) (H0 + 2 * (i))     /* first Gram-Schmidt pass: v_i^H w */
#define C(i) (H0 + 2 * (i) + 1) /* second pass: the correction to h_i */

/* Host workspace, carved out of s->host. */
typedef struct {
    zc *h; /* (m+1) x m Hessenberg, column-major; rotated into R in place */
    zc *sn, *g, *y;
    double *cs;
} gm_host;

/* The restart length used: the option, at most n (a Krylov space of an n x n operator
 * has at most n dimensions: --restart 100000000 on a 3 x 3 system asked for 1.6e17
 * bytes). */
static int gm_restart(const struct sps_solver_s *s)
{
    const sps_index n = s->A ? s->A->n : 0;
    const int m = n > 0 && (sps_index)s->restart > n ? (int)n : s->restart;
    /* the slots (H0 + 2 m) and vectors (m + 2) are counted in int: a restart of 2^30 wrapped;
       this cap leaves the workspace's allocation to refuse what cannot be had */
    return m < (INT_MAX - H0) / 2 ? m : (INT_MAX - H0) / 2;
}

static gm_host host_views(struct sps_solver_s *s)
{
    const int m = gm_restart(s);
    gm_host w;
    w.h = s->host;
    w.sn = w.h + (size_t)(m + 1) * m;
    w.g = w.sn + m;
    w.y = w.g + m + 1;
    w.cs = (double *)(w.y + m);
    return w;
}

static void gmres_workspace(const struct sps_solver_s *s, int *nvec, int *nslots, size_t *host_bytes)
{
    const int m = gm_restart(s);
    *nvec = m + 1 + (!sps_sv_has_pc(s) ? 0 : 1);
    *nslots = H0 + 2 * m;
    *host_bytes = ((size_t)(m + 1) * m + 3 * (size_t)m + 1) * sizeof(zc) + (size_t)m * sizeof(double);
}

static zc slot_z(const sps_cplx *c) { return CMPLX(c->re, c->im); }

/* x += M V y, y solving R y = g on the first nc columns (upper triangular R). */
static sps_status update_x(struct sps_solver_s *s, gm_host *w, int nc, sps_vector x)
{
    if (nc == 0) return SPS_OK;
    const int m = gm_restart(s), ld = m + 1;
    for (int i = nc - 1; i >= 0; i--) {
        zc acc = w->g[i];
        for (int l = i + 1; l < nc; l++) acc -= w->h[i + (size_t)l * ld] * w->y[l];
        w->y[i] = acc / w->h[i + (size_t)i * ld];
    }
#define YC(i) sps_cplx_make(creal(w->y[i]), cimag(w->y[i]))
    if (!sps_sv_has_pc(s)) {
        /* x += sum_i y_i v_i */
        for (int i = 0; i < nc; i++)
            SPS_CHECK(sps_v_axpby(YC(i), sps_sv_vec(s, i), sps_cplx_make(1, 0), x));
        return SPS_OK;
    }
    /* u = sum_i y_i v_i in v_nc (not part of the solution's basis);  z = M u;  x += z */
    sps_vector u = sps_sv_vec(s, nc), z = sps_sv_vec(s, m + 1);
    SPS_CHECK(sps_v_axpby(YC(0), sps_sv_vec(s, 0), sps_cplx_make(0, 0), u));
    for (int i = 1; i < nc; i++)
        SPS_CHECK(sps_v_axpby(YC(i), sps_sv_vec(s, i), sps_cplx_make(1, 0), u));
#undef YC
    SPS_CHECK(sps_sv_precond(s, u, z));
    return sps_v_axpby(sps_cplx_make(1, 0), z, sps_cplx_make(1, 0), x);
}

static sps_status gmres_iterate(struct sps_solver_s *s, sps_vector b, sps_vector x)
{
    const int m = gm_restart(s), ld = m + 1, pc = sps_sv_has_pc(s);
    const double eps = sps_sv_eps(b->t);
    gm_host w = host_views(s);
    sps_vector v0 = sps_sv_vec(s, 0);
    int done, stop;

    /* v_0 = r = b - A x0;  ||b||, beta = ||r_0|| checked at iteration 0 */
    SPS_CHECK(sps_sv_begin(s, b, x, v0, &done));
    if (done) return SPS_OK;
    double beta = s->hslots[SPS_SLOT_RNORM].re;

    for (;;) { /* one restart cycle */
        /* v_0 = r / beta;  g = beta e_1 */
        SPS_CHECK(sps_v_scale_s(s->slots, (sps_scoef){1.0, -1, SPS_SLOT_RNORM}, v0));
        w.g[0] = beta;
        /* ended: 1 converged estimate, 2 monitor, 3 maxit, 4 happy breakdown above the tolerance */
        int j = 0, ended = 0;
        double est = beta;
        /* Arnoldi step j with k = j+1 basis vectors: 1 SpMV (+ pmul 3n) + dot (2n)
         * + (2k - 1) axpy_dot (4n) + axpy (3n) + nrm2 (n) + scale (2n) ~ (8k + 4) n
         * values; one fetch of 2k + 1 slots. */
        for (; j < m; j++) {
            sps_vector vj = sps_sv_vec(s, j), wv = sps_sv_vec(s, j + 1), z = pc ? sps_sv_vec(s, m + 1) : vj;
            /* w = A M v_j */
            SPS_CHECK(sps_sv_precond(s, vj, z));
            SPS_CHECK(sps_op_apply(s->A, SPS_OP_N, sps_cplx_make(1, 0), z, sps_cplx_make(0, 0), wv));
            /* pass 1 (MGS): h_i = v_i^H w;  w -= h_i v_i,  each fused with the next dot */
            SPS_CHECK(sps_v_dot(v0, wv, s->slots, H(0)));
            for (int i = 0; i < j; i++)
                SPS_CHECK(sps_v_axpy_dot_s(s->slots, (sps_scoef){-1.0, H(i), -1}, sps_sv_vec(s, i), wv,
                                           sps_sv_vec(s, i + 1), H(i + 1)));
            /* pass 2 (re-orthogonalisation): c_i = v_i^H w;  w -= c_i v_i */
            SPS_CHECK(sps_v_axpy_dot_s(s->slots, (sps_scoef){-1.0, H(j), -1}, vj, wv, v0, C(0)));
            for (int i = 0; i < j; i++)
                SPS_CHECK(sps_v_axpy_dot_s(s->slots, (sps_scoef){-1.0, C(i), -1}, sps_sv_vec(s, i), wv,
                                           sps_sv_vec(s, i + 1), C(i + 1)));
            SPS_CHECK(sps_v_axpy_s(s->slots, (sps_scoef){-1.0, C(j), -1}, vj, wv));
            /* h_{j+1,j} = ||w|| */
            SPS_CHECK(sps_v_nrm2(wv, s->slots, HN));
            SPS_CHECK(sps_sv_fetch(s, HN, C(j) - HN + 1));

            /* column j of H: h_ij = h_i + c_i, h_{j+1,j} = ||w|| */
            zc *col = w.h + (size_t)j * ld;
            const double hn = s->hslots[HN].re;
            double colnorm2 = hn * hn;
            int finite = sps_sv_finite(s->hslots[HN]);
            for (int i = 0; i <= j; i++) {
                finite = finite && sps_sv_finite(s->hslots[H(i)]) && sps_sv_finite(s->hslots[C(i)]);
                col[i] = slot_z(&s->hslots[H(i)]) + slot_z(&s->hslots[C(i)]);
                colnorm2 += creal(col[i] * conj(col[i]));
            }
            if (!finite) {
                SPS_CHECK(update_x(s, &w, j, x));
                return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                                   "GMRES: NaN/Inf in the Arnoldi step of iteration %d (in A M v); x holds iterate %d",
                                   s->its + 1, s->its);
            }
            /* apply the previous rotations to column j, then the one that zeroes h_{j+1,j} */
            for (int i = 0; i < j; i++) {
                const zc a = col[i], c1 = col[i + 1];
                col[i] = w.cs[i] * a + w.sn[i] * c1;
                col[i + 1] = -conj(w.sn[i]) * a + w.cs[i] * c1;
            }
            const double aa = cabs(col[j]), nu = hypot(aa, hn);
            if (nu == 0.0) { /* A M v_j in the span of A M v_0 .. A M v_{j-1} (A M v_j = 0, say) */
                SPS_CHECK(update_x(s, &w, j, x));
                return sps_sv_stop(s, SPS_REASON_BREAKDOWN, SPS_ERR_BREAKDOWN,
                                   "GMRES breakdown at iteration %d: A M v_%d adds no direction to the products "
                                   "before it (A M v = 0, say): the operator or preconditioner is singular",
                                   s->its + 1, j);
            }
            /* c = |a| / nu, s = (a / |a|) conj(h) / nu (h real): [c s; -conj(s) c] (a, h) = (phase(a) nu, 0) */
            w.cs[j] = aa / nu;
            w.sn[j] = aa == 0.0 ? 1.0 : (col[j] / aa) * hn / nu;
            col[j] = aa == 0.0 ? hn : (col[j] / aa) * nu;
            w.g[j + 1] = -conj(w.sn[j]) * w.g[j];
            w.g[j] = w.cs[j] * w.g[j];
            est = cabs(w.g[j + 1]);

            SPS_CHECK(sps_sv_record(s, est, &stop));
            const int happy = hn <= eps * sqrt(colnorm2);
            if (est <= s->tol)
                ended = 1;
            else if (happy) /* no next basis vector: neither a monitor nor maxit could go on */
                ended = 4;
            else if (stop)
                ended = 2;
            else if (s->its >= s->maxit)
                ended = 3;
            if (ended) {
                j++;
                break;
            }
            /* v_{j+1} = w / h_{j+1,j} */
            SPS_CHECK(sps_v_scale_s(s->slots, (sps_scoef){1.0, -1, HN}, wv));
        }
        /* x += M V y over the j columns of this cycle */
        SPS_CHECK(update_x(s, &w, j, x));
        if (ended == 4) {
            /* invariant Krylov space, estimate above the tolerance: a restart from this x would
               meet the same singular A M again (it had been taken for recurrence drift, restarted
               ten times, and reported as stagnation with "the tracked residual meets the
               tolerance"); the true residual decides, as at any end */
            double t;
            int converged;
            SPS_CHECK(sps_sv_settle(s, b, x, v0, &t, &converged));
            if (converged) return SPS_OK;
            sps_status st;
            if (sps_sv_stop_at_rounding(s, b->t, 0, s->its, "the Krylov space became invariant", &st)) return st;
            /* stagnation, not a breakdown status: x is the least-squares iterate, a result that callers
               of singular systems use (spsolve-spin's inverse iteration on an open mesh; they took it as
               the stagnation the ten restarts used to end in) */
            return sps_sv_stop(s, SPS_REASON_STAGNATION, SPS_ERR_NOT_CONVERGED,
                               "GMRES stagnates at iteration %d: the Krylov space became invariant (h_{j+1,j} = "
                               "%.3e) with the residual estimate %.3e above the tolerance %.3e: A M is singular on "
                               "it (b - A x0 is not in its range); x holds the least-squares iterate %d, ||b - A x|| "
                               "= %.3e",
                               s->its, s->hslots[HN].re, est, s->tol, s->its, t);
        }
        if (ended == 2) return sps_sv_stop_monitor(s, est);
        if (ended == 3) return sps_sv_stop_maxit(s, est);
        if (ended == 1) {
            int conv;
            SPS_CHECK(sps_sv_confirm(s, b, x, v0, &conv));
            if (conv) return SPS_OK;
            beta = s->rnorm_true; /* the estimate drifted from b - A x: restart from it */
            if (stop) return sps_sv_stop_monitor(s, beta);
            if (s->its >= s->maxit) return sps_sv_stop_maxit(s, beta);
        } else {
            /* restart: r = b - A x into v_0, tested like PETSc does at a cycle start */
            SPS_CHECK(sps_sv_true_residual(s, b, x, v0, &beta));
            if (!isfinite(beta))
                return sps_sv_stop(s, SPS_REASON_NAN, SPS_ERR_NUMERIC,
                                   "GMRES: the residual b - A x at the restart after iteration %d is not finite",
                                   s->its);
            if (beta <= s->tol) {
                sps_sv_converged(s, beta);
                return SPS_OK;
            }
        }
    }
}

static const sps_option_desc gmres_options[] = {
    {.name = "restart", .type = SPS_OPT_INT, .def = SPS_STR(SPS_DEFAULT_RESTART), .min = 1, .max = INT_MAX,
     .help = "GMRES restart length m: Krylov vectors kept before a restart"},
};

const sps_solver_method sps_solver_gmres_method = {
    .type = SPS_SOLVER_GMRES, .name = "gmres", .title = "GMRES",
    .options = gmres_options, .noptions = (int)(sizeof gmres_options / sizeof gmres_options[0]),
    .workspace = gmres_workspace, .iterate = gmres_iterate,
    .pc_needs = 0, /* any M (right preconditioning) */
};
