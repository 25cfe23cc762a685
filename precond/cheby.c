/* Chebyshev (cheby): a polynomial preconditioner, M = p(A) with p of degree k - 1
 * (option cheby-degree k, default 3) the Chebyshev approximation of 1/lambda on
 * [lo, hi]: z = M r is k steps of the Chebyshev iteration on A z = r from z = 0
 * (Saad, Iterative Methods for Sparse Linear Systems, Alg. 12.1):
 *     theta = (hi + lo)/2, delta = (hi - lo)/2, sigma = theta/delta, rho_0 = 1/sigma
 *     z = r/theta, d = z;   for j = 1 .. k-1:  rho_j = 1/(2 sigma - rho_{j-1}),
 *     d = rho_j rho_{j-1} d + (2 rho_j/delta)(r - A z),  z = z + d.
 * Per application: k - 1 products with A and 3 (k - 1) + 2 vector passes; kernels
 * only, with coefficients fixed at setup, so capturable.  For Hermitian A with
 * spectrum in (0, hi], p > 0 there: M is Hermitian positive definite and CG may
 * use it (SYMMETRIC).
 * Bounds: m steps of Lanczos on A (option cheby-lanczos, default 10; no
 * reorthogonalisation: the extreme Ritz values converge first) from a fixed
 * pseudo-random start; hi = 1.1 x the largest Ritz value, lo = the smallest, or
 * cheby-ratio x hi when that option is > 0 (PETSc's Chebyshev takes [0.1, 1.1] x
 * its estimate of lambda_max: cheby-ratio 0.0909).  The Ritz values of the
 * tridiagonal T_m by bisection on Sturm counts, on the host.
 * The products need A after the setup: the preconditioner keeps a copy of it (in
 * A's format, default options, A's launch variant; CSR where those options refuse A),
 * so A need not outlive P (one more matrix in memory). */
#include "precond/precond_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const sps_option_desc cheby_options[] = {
    {.name = "cheby-degree", .type = SPS_OPT_INT, .def = "3", .min = 1, .max = 50,
     .help = "cheby: products with A an application, plus one (the polynomial's degree + 1)"},
    {.name = "cheby-ratio", .type = SPS_OPT_REAL, .def = "0", .min = 0, .max = 1,
     .help = "cheby: the lower bound of the spectrum as a fraction of the upper one (below 1); 0: Lanczos's estimate"},
    {.name = "cheby-lanczos", .type = SPS_OPT_INT, .def = "10", .min = 2, .max = 200,
     .help = "cheby: Lanczos steps that estimate the spectrum"},
};

typedef struct {
    sps_matrix A;         /* the copy the products use */
    sps_operator op;
    sps_vector r, d, res; /* work: r (a copy of x when x is y), the direction, the residual */
    int k;                /* degree option */
    double theta, delta, sigma;
    double lo, hi;        /* the bounds used (tests, messages) */
} cheby_store;

static void cheby_destroy(sps_precond P)
{
    cheby_store *s = P->data;
    if (!s) return;
    sps_vector_destroy(s->r);
    sps_vector_destroy(s->d);
    sps_vector_destroy(s->res);
    sps_operator_destroy(s->op);
    sps_matrix_destroy(s->A);
    free(s);
    P->data = NULL;
}

static sps_status cheby_symbolic(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    cheby_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "the Chebyshev store"));
    P->data = s;
    const sps_index n = P->op.n;
    SPS_CHECK(sps_vector_create(ctx, n, P->op.t, &s->r));
    SPS_CHECK(sps_vector_create(ctx, n, P->op.t, &s->d));
    SPS_CHECK(sps_vector_create(ctx, n, P->op.t, &s->res));
    (void)A;
    return SPS_OK;
}

/* Eigenvalues of the symmetric tridiagonal (a[0..m), b[0..m-1)) below x. */
static int sturm_below(const double *a, const double *b, int m, double x)
{
    int cnt = 0;
    double q = a[0] - x;
    for (int i = 0;; i++) {
        if (q < 0) cnt++;
        if (i + 1 == m) break;
        if (q == 0) q = 1e-300;
        q = a[i + 1] - x - b[i] * b[i] / q;
    }
    return cnt;
}

/* The j-th smallest eigenvalue (0-based) of the tridiagonal, by bisection in [lo, hi]. */
static double tri_eig(const double *a, const double *b, int m, int j, double lo, double hi)
{
    for (int it = 0; it < 200 && hi - lo > 1e-14 * fmax(fabs(lo), fabs(hi)); it++) {
        const double mid = 0.5 * (lo + hi);
        if (sturm_below(a, b, m, mid) > j) hi = mid;
        else lo = mid;
    }
    return 0.5 * (lo + hi);
}

/* The extreme Ritz values of m Lanczos steps on A (an operator of n). */
static sps_status lanczos(sps_precond P, sps_operator A, int m, double *rmin, double *rmax)
{
    sps_context ctx = P->op.ctx;
    const sps_index n = P->op.n;
    const sps_scalar t = P->op.t;
    if (m > n) m = (int)n;
    sps_vector v = NULL, vp = NULL, w = NULL;
    sps_cplx *slots = NULL, hs[2];
    double *a = calloc((size_t)m + 1, sizeof *a), *b = calloc((size_t)m + 1, sizeof *b);
    void *u = calloc((size_t)n ? (size_t)n : 1, sps_scalar_size(t));
    sps_status st = a && b && u ? SPS_OK : sps_error(ctx, SPS_ERR_ALLOC, "out of host memory for Lanczos");
    /* a fixed start: splitmix-like values in [0.5, 1.5), no structure a matrix is likely to share */
    uint64_t z = 0x9e3779b97f4a7c15ull;
    for (sps_index i = 0; st == SPS_OK && i < n; i++) {
        z += 0x9e3779b97f4a7c15ull;
        uint64_t q = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        q = (q ^ (q >> 27)) * 0x94d049bb133111ebull;
        sps_cplx_store(t, (sps_cplx){0.5 + (double)((q ^ (q >> 31)) >> 11) / 9007199254740992.0, 0.0},
                       (char *)u + (size_t)i * sps_scalar_size(t));
    }
    if (st == SPS_OK) st = sps_vector_from_host(ctx, n, t, u, &v);
    if (st == SPS_OK) st = sps_vector_create(ctx, n, t, &vp);
    if (st == SPS_OK) st = sps_vector_create(ctx, n, t, &w);
    if (st == SPS_OK) st = sps_dmalloc(ctx, (void **)&slots, 2 * sizeof *slots);
    if (st == SPS_OK) st = sps_v_nrm2(v, slots, 0);
    if (st == SPS_OK) st = sps_dcopy(ctx, hs, slots, sizeof hs[0], SPS_COPY_D2H);
    if (st == SPS_OK) st = sps_v_axpby((sps_cplx){1.0 / hs[0].re, 0}, v, (sps_cplx){0, 0}, v);
    int steps = 0;
    for (int j = 0; st == SPS_OK && j < m; j++) {
        /* w = A v - b_{j-1} v_prev; a_j = v^H w; w -= a_j v; b_j = ||w|| */
        st = sps_op_apply(A, SPS_OP_N, (sps_cplx){1, 0}, v, (sps_cplx){0, 0}, w);
        if (st == SPS_OK && j) st = sps_v_axpby((sps_cplx){-b[j - 1], 0}, vp, (sps_cplx){1, 0}, w);
        if (st == SPS_OK) st = sps_v_dot(v, w, slots, 0);
        if (st == SPS_OK) st = sps_dcopy(ctx, hs, slots, sizeof hs[0], SPS_COPY_D2H);
        if (st != SPS_OK) break;
        a[j] = hs[0].re;
        steps = j + 1;
        st = sps_v_axpby((sps_cplx){-a[j], 0}, v, (sps_cplx){1, 0}, w);
        if (st == SPS_OK) st = sps_v_nrm2(w, slots, 1);
        if (st == SPS_OK) st = sps_dcopy(ctx, hs + 1, slots + 1, sizeof hs[1], SPS_COPY_D2H);
        if (st != SPS_OK) break;
        b[j] = hs[1].re;
        if (!(b[j] > 1e-12 * fabs(a[j])) || j + 1 == m) break; /* an invariant subspace: T's values are exact */
        st = sps_v_copy(v, vp);
        if (st == SPS_OK) st = sps_v_axpby((sps_cplx){1.0 / b[j], 0}, w, (sps_cplx){0, 0}, v);
    }
    if (st == SPS_OK) {
        double glo = HUGE_VAL, ghi = -HUGE_VAL; /* Gershgorin bounds of T */
        for (int i = 0; i < steps; i++) {
            const double off = (i ? fabs(b[i - 1]) : 0) + (i + 1 < steps ? fabs(b[i]) : 0);
            glo = fmin(glo, a[i] - off);
            ghi = fmax(ghi, a[i] + off);
        }
        *rmin = tri_eig(a, b, steps, 0, glo, ghi);
        *rmax = tri_eig(a, b, steps, steps - 1, glo, ghi);
    }
    sps_vector_destroy(v);
    sps_vector_destroy(vp);
    sps_vector_destroy(w);
    sps_dfree(ctx, slots);
    free(a);
    free(b);
    free(u);
    return st;
}

static sps_status cheby_numeric(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    cheby_store *s = P->data;
    sps_operator_destroy(s->op);
    sps_matrix_destroy(s->A);
    s->op = NULL;
    s->A = NULL;
    /* the copy in A's format with its launch variant; a format whose defaults refuse A (DIA
       past its max-fill, built with force) gives CSR, which takes any scalar matrix */
    const sps_status own = sps_matrix_convert(A, A->ops->id, NULL, &s->A);
    if (own == SPS_OK) s->A->lv = A->lv;
    else if (own == SPS_ERR_ARG && A->entry.kind == SPS_ENTRY_SCALAR && A->ops->id != SPS_FMT_CSR) {
        sps_context_clear_error(ctx); /* the format's refusal, answered: not the setup's failure */
        SPS_CHECK(sps_matrix_convert(A, SPS_FMT_CSR, NULL, &s->A));
    } else {
        return own;
    }
    SPS_CHECK(sps_operator_from_matrix(s->A, &s->op));
    const double ratio = sps_opt_num(P->opts, "cheby-ratio");
    if (ratio >= 1) /* the option's range is closed; the interval [ratio hi, hi] must not be empty */
        return sps_error(ctx, SPS_ERR_ARG, "cheby: cheby-ratio %g leaves no interval [ratio x hi, hi]: it must be below 1",
                         ratio);
    if (P->op.n == 0) { /* nothing to estimate (Lanczos would give NaN); the apply has no entry */
        s->lo = 0.5, s->hi = 1;
        return SPS_OK;
    }
    double rmin = 0, rmax = 0;
    SPS_CHECK(lanczos(P, s->op, sps_opt_int(P->opts, "cheby-lanczos"), &rmin, &rmax));
    /* a NaN or Inf met on the way makes every Ritz value NaN: named as such, not as an
       operator that is not positive definite (ilu0 and Jacobi name theirs too) */
    if (!isfinite(rmin) || !isfinite(rmax))
        return sps_error(ctx, SPS_ERR_NUMERIC,
                         "cheby: Lanczos on A gave Ritz values %g .. %g: A holds a value that is not finite, or its "
                         "products leave the range of %s",
                         rmin, rmax, sps_scalar_name(P->op.t));
    s->hi = 1.1 * rmax;
    s->lo = ratio > 0 ? ratio * s->hi : rmin;
    if (!(s->hi > 0) || !(s->lo > 0) || !(s->lo < s->hi))
        return sps_error(ctx, SPS_ERR_NUMERIC,
                         "cheby: the spectrum estimate [%g, %g] (Lanczos: Ritz values %g .. %g) is not inside "
                         "(0, inf): Chebyshev needs a positive definite operator",
                         s->lo, s->hi, rmin, rmax);
    s->k = sps_opt_int(P->opts, "cheby-degree");
    s->theta = 0.5 * (s->hi + s->lo);
    s->delta = 0.5 * (s->hi - s->lo);
    s->sigma = s->theta / s->delta;
    return SPS_OK;
}

static sps_status cheby_apply(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y)
{
    /* M = p(A) with real coefficients: M^T = p(A^T), the same iteration on A^T (for a complex
       Hermitian A that is conj(M), not M) */
    const cheby_store *s = P->data;
    const sps_cplx zero = {0, 0}, one = {1, 0};
    double rho = 1.0 / s->sigma;
    /* x may be y: then r is a copy (one more pass); else x itself, read in place */
    sps_vector r = x;
    if (x == y || x->data == y->data) {
        SPS_CHECK(sps_v_copy(x, s->r));
        r = s->r;
    }
    SPS_CHECK(sps_v_axpby((sps_cplx){1.0 / s->theta, 0}, r, zero, y));
    SPS_CHECK(sps_v_copy(y, s->d));
    for (int j = 1; j < s->k; j++) {
        const double rho_new = 1.0 / (2.0 * s->sigma - rho);
        /* res = r - A y */
        SPS_CHECK(sps_op_apply(s->op, mode, (sps_cplx){-1, 0}, y, zero, s->res));
        SPS_CHECK(sps_v_axpby(one, r, one, s->res));
        SPS_CHECK(sps_v_axpby((sps_cplx){2.0 * rho_new / s->delta, 0}, s->res, (sps_cplx){rho_new * rho, 0}, s->d));
        SPS_CHECK(sps_v_axpby(one, s->d, one, y));
        rho = rho_new;
    }
    return SPS_OK;
}

const sps_precond_method sps_precond_cheby_method = {
    .type = SPS_PRECOND_CHEBY, .name = "cheby",
    .flags = SPS_PRECOND_CAPTURABLE | SPS_PRECOND_SYMMETRIC, .needs_entries = 1,
    .options = cheby_options, .noptions = SPS_NOPTS(cheby_options),
    .symbolic = cheby_symbolic, .numeric = cheby_numeric,
    .apply = cheby_apply,
    .destroy = cheby_destroy,
};
