/* Unit tests of the Krylov solvers (solvers/) and their fused kernels
 * (kernels/cpu/solver.inc), CPU backend, f32/f64/c32/c64.
 *
 * Solves: CG, BiCGSTAB, GMRES x {none, jacobi} on poisson2d:20 (SPD), a
 * nonsymmetric convection-diffusion matrix, a complex Hermitian positive
 * definite matrix and a complex non-Hermitian one, all built here.  b = A x_true
 * for a random x_true, computed here in double from the exported CSR; the
 * converged x is judged by ||b - A x|| / ||b||, again computed here in double
 * from the exported CSR (never with the library's kernels).  Then the edge
 * cases (guess, b = 0, x0 exact, maxit, indefinite CG, NaN, monitor, shell
 * operator, restart, argument errors) and, when SPS_MATRIX_DIR (argv[1] or the
 * environment) holds the SuiteSparse corpus, CG and BiCGSTAB/GMRES on real
 * matrices.  The fused kernels are checked against long double loops on random
 * data with outputs poisoned.  Ends with "N passed, M failed". */
#include "formats/format.h"
#include "testutil.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static sps_context g_ctx;
static tu_rng g_rng;
static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};
static const char *const solver_names[3] = {"cg", "bicgstab", "gmres"};
static const char *const pc_names[2] = {"none", "jacobi"};

static int cplx(sps_scalar t) { return sps_scalar_is_complex(t); }
static int single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }
static double rtol_of(sps_scalar t) { return single(t) ? 1e-5 : 1e-8; }

static int all_finite(sps_scalar t, size_t n, const void *v)
{
    for (size_t i = 0; i < n; i++) {
        double re, im;
        tu_get(t, v, i, &re, &im);
        if (!isfinite(re) || !isfinite(im)) return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------ the test's own CSR in double */
typedef struct {
    sps_index n;
    sps_index *rp, *ci;
    double *re, *im;
} dcsr;

static dcsr export_dcsr(sps_matrix A)
{
    sps_matrix_info_t info;
    dcsr d = {0};
    if (!TU_OK(g_ctx, sps_matrix_info(A, &info))) return d;
    d.n = info.rows;
    d.rp = tu_xcalloc((size_t)info.rows + 1, sizeof *d.rp);
    d.ci = tu_xcalloc((size_t)info.nnz, sizeof *d.ci);
    void *val = tu_xcalloc((size_t)info.nnz, sps_scalar_size(info.scalar));
    d.re = tu_xcalloc((size_t)info.nnz, sizeof(double));
    d.im = tu_xcalloc((size_t)info.nnz, sizeof(double));
    TU_OK(g_ctx, sps_matrix_export_csr(A, d.rp, d.ci, val));
    for (int64_t k = 0; k < info.nnz; k++) tu_get(info.scalar, val, (size_t)k, &d.re[k], &d.im[k]);
    free(val);
    return d;
}

static void dcsr_free(dcsr *d)
{
    free(d->rp);
    free(d->ci);
    free(d->re);
    free(d->im);
}

/* ||b - A x||_2 in double, from host arrays of type t */
static double resid_norm(const dcsr *A, sps_scalar t, const void *b, const void *x)
{
    double s = 0.0;
    for (sps_index i = 0; i < A->n; i++) {
        double rr, ri;
        tu_get(t, b, (size_t)i, &rr, &ri);
        for (sps_index k = A->rp[i]; k < A->rp[i + 1]; k++) {
            double xr, xi;
            tu_get(t, x, (size_t)A->ci[k], &xr, &xi);
            rr -= A->re[k] * xr - A->im[k] * xi;
            ri -= A->re[k] * xi + A->im[k] * xr;
        }
        s += rr * rr + ri * ri;
    }
    return sqrt(s);
}

static double vnorm(sps_scalar t, size_t n, const void *v)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double re, im;
        tu_get(t, v, i, &re, &im);
        s += re * re + im * im;
    }
    return sqrt(s);
}

/* b = A x (double, rounded to t) */
static void matvec(const dcsr *A, sps_scalar t, const void *x, void *b)
{
    for (sps_index i = 0; i < A->n; i++) {
        double sr = 0.0, si = 0.0;
        for (sps_index k = A->rp[i]; k < A->rp[i + 1]; k++) {
            double xr, xi;
            tu_get(t, x, (size_t)A->ci[k], &xr, &xi);
            sr += A->re[k] * xr - A->im[k] * xi;
            si += A->re[k] * xi + A->im[k] * xr;
        }
        tu_put(t, b, (size_t)i, sr, si);
    }
}

/* ------------------------------------------------------------------ test matrices */
typedef struct {
    int64_t nnz, cap;
    sps_index *r, *c;
    double *re, *im;
} trip;

static void trip_add(trip *T, sps_index r, sps_index c, double re, double im)
{
    if (T->nnz == T->cap) {
        T->cap = T->cap ? 2 * T->cap : 256;
        T->r = realloc(T->r, (size_t)T->cap * sizeof *T->r);
        T->c = realloc(T->c, (size_t)T->cap * sizeof *T->c);
        T->re = realloc(T->re, (size_t)T->cap * sizeof *T->re);
        T->im = realloc(T->im, (size_t)T->cap * sizeof *T->im);
        if (!T->r || !T->c || !T->re || !T->im) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
    }
    T->r[T->nnz] = r;
    T->c[T->nnz] = c;
    T->re[T->nnz] = re;
    T->im[T->nnz] = im;
    T->nnz++;
}

static sps_matrix trip_matrix(trip *T, sps_index n, sps_index m, sps_scalar t)
{
    void *val = tu_xcalloc((size_t)T->nnz, sps_scalar_size(t));
    for (int64_t k = 0; k < T->nnz; k++) tu_put(t, val, (size_t)k, T->re[k], T->im[k]);
    sps_matrix A = NULL;
    TU_OK(g_ctx, sps_matrix_from_coo(g_ctx, n, m, T->nnz, T->r, T->c, val, t, &A));
    free(val);
    free(T->r);
    free(T->c);
    free(T->re);
    free(T->im);
    memset(T, 0, sizeof *T);
    return A;
}

typedef enum { M_POISSON, M_CONVDIFF, M_HERM, M_NONHERM } mkind;
static const char *const mkind_name[4] = {"poisson2d:20", "convdiff", "hermitian-pd", "complex-nonhermitian"};

/* 5-point stencil on an N x N grid: centre d_i (per row), west/east/south/north
 * couplings w, e, s, nn (complex), optionally each row scaled by a random factor
 * (varying diagonal, so Jacobi does something). */
static sps_matrix stencil(int N, sps_scalar t, double dre, double dim, const double cw[2], const double ce[2],
                          const double cs[2], const double cn[2], int row_scale, double diag_jitter)
{
    trip T = {0};
    for (int iy = 0; iy < N; iy++)
        for (int ix = 0; ix < N; ix++) {
            const sps_index i = iy * N + ix;
            const double sc = row_scale ? tu_rng_range(&g_rng, 0.5, 2.0) : 1.0;
            trip_add(&T, i, i, sc * (dre + diag_jitter * tu_rng_uniform(&g_rng)), sc * dim);
            if (ix > 0) trip_add(&T, i, i - 1, sc * cw[0], sc * cw[1]);
            if (ix < N - 1) trip_add(&T, i, i + 1, sc * ce[0], sc * ce[1]);
            if (iy > 0) trip_add(&T, i, i - N, sc * cs[0], sc * cs[1]);
            if (iy < N - 1) trip_add(&T, i, i + N, sc * cn[0], sc * cn[1]);
        }
    return trip_matrix(&T, N * N, N * N, t);
}

static sps_matrix make_matrix(mkind kind, sps_scalar t)
{
    sps_matrix A = NULL;
    switch (kind) {
    case M_POISSON: TU_OK(g_ctx, sps_matrix_generate(g_ctx, "poisson2d:20", t, &A)); break;
    case M_CONVDIFF: { /* -Laplace + convection (central differences, cell Peclet 0.6), rows scaled */
        const double w[2] = {-1.3, 0}, e[2] = {-0.7, 0}, s[2] = {-1.2, 0}, n[2] = {-0.8, 0};
        A = stencil(20, t, 4.0, 0.0, w, e, s, n, 1, 0.0);
        break;
    }
    case M_HERM: { /* L + i g K, K antisymmetric: Hermitian; diagonal 5 + [0, 3) > sum |off| = 4.47: HPD */
        const double w[2] = {-1, -0.5}, e[2] = {-1, 0.5}, s[2] = {-1, -0.5}, n[2] = {-1, 0.5};
        A = stencil(20, t, 5.0, 0.0, w, e, s, n, 0, 3.0);
        break;
    }
    case M_NONHERM: { /* complex shift and complex convection */
        const double w[2] = {-1.3, 0.2}, e[2] = {-0.7, -0.1}, s[2] = {-1.1, 0.3}, n[2] = {-0.9, 0.1};
        A = stencil(20, t, 4.0, 0.8, w, e, s, n, 1, 0.0);
        break;
    }
    }
    return A;
}

/* ------------------------------------------------------------------ one solve */
typedef struct {
    sps_status st;
    sps_result res;
    int its;
    double relres;  /* recomputed here */
    double x0resid; /* ||b - A x0|| recomputed here */
} outcome;

/* Solve A x = b with b = A x_true (fresh random); x0 = guess (NULL: zero). */
static outcome run_solve(sps_matrix A, const dcsr *D, const char *solver, const char *pc, double rtol, int maxit,
                         int restart, const void *xtrue_in, const void *x0, void *x_out)
{
    outcome o;
    memset(&o, 0, sizeof o);
    sps_matrix_info_t info;
    sps_matrix_info(A, &info);
    const sps_scalar t = info.scalar;
    const size_t n = (size_t)info.rows, ss = sps_scalar_size(t);
    void *xt = tu_xcalloc(n, ss), *b = tu_xcalloc(n, ss), *x = tu_xcalloc(n, ss);
    if (xtrue_in)
        memcpy(xt, xtrue_in, n * ss);
    else
        tu_fill_random(&g_rng, t, n, xt);
    matvec(D, t, xt, b);
    if (x0) memcpy(x, x0, n * ss);
    o.x0resid = resid_norm(D, t, b, x);
    sps_operator op = NULL;
    sps_precond P = NULL;
    sps_solver s = NULL;
    sps_vector vb = NULL, vx = NULL;
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    TU_OK(g_ctx, sps_precond_create_by_name(A, pc, &P));
    TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, solver, &s));
    TU_OK(g_ctx, sps_solver_set_operator(s, op));
    TU_OK(g_ctx, sps_solver_set_precond(s, P));
    TU_OK(g_ctx, sps_solver_set_tolerances(s, rtol, 0.0, maxit));
    if (restart) TU_OK(g_ctx, sps_solver_set_restart(s, restart));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, (sps_index)n, t, b, &vb));
    TU_OK(g_ctx, sps_vector_from_host(g_ctx, (sps_index)n, t, x, &vx));
    o.st = sps_solver_solve(s, vb, vx, &o.res);
    o.its = o.res.iterations;
    tu_fill_nan(t, n, x);
    TU_OK(g_ctx, sps_vector_get(vx, x));
    o.relres = resid_norm(D, t, b, x) / vnorm(t, n, b);
    if (x_out) memcpy(x_out, x, n * ss);
    /* the history belongs to the solver: check it before destroying it */
    TU_CHECK(o.res.history_len == o.res.iterations + 1, "%s/%s: history length %d for %d iterations", solver, pc,
             o.res.history_len, o.res.iterations);
    if (o.res.history_len > 0) /* the library computes b - A x0 in t's precision */
        TU_CHECK(fabs(o.res.history[0] - o.x0resid) <= 1e-5 * o.x0resid + 100 * tu_eps(t) * vnorm(t, n, b),
                 "%s/%s: history[0] = %.9e, ||b - A x0|| = %.9e", solver, pc, o.res.history[0], o.x0resid);
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_solver_destroy(s);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    free(xt);
    free(b);
    free(x);
    return o;
}

/* poisson2d:20 iteration counts, printed at the end (f64) */
static int g_poisson_its[3][2];

static void test_matrix_grid(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        for (int mk = 0; mk < 4; mk++) {
            if (!cplx(t) && (mk == M_HERM || mk == M_NONHERM)) continue;
            sps_matrix A = make_matrix((mkind)mk, t);
            if (!A) continue;
            dcsr D = export_dcsr(A);
            for (int si = 0; si < 3; si++) {
                const int spd = mk == M_POISSON || mk == M_HERM;
                if (si == 0 && !spd) continue; /* CG needs SPD/HPD */
                for (int pi = 0; pi < 2; pi++) {
                    const double rtol = rtol_of(t);
                    const int maxit = 2000;
                    outcome o = run_solve(A, &D, solver_names[si], pc_names[pi], rtol, maxit, 0, NULL, NULL, NULL);
                    const char *tn = sps_scalar_name(t);
                    TU_CHECK(o.st == SPS_OK, "%s %s %s/%s: %s: %s", mkind_name[mk], tn, solver_names[si], pc_names[pi],
                             sps_status_name(o.st), sps_context_error(g_ctx));
                    TU_CHECK(o.res.reason == SPS_REASON_CONVERGED_RTOL, "%s %s %s/%s: reason %s", mkind_name[mk], tn,
                             solver_names[si], pc_names[pi], sps_reason_name(o.res.reason));
                    TU_CHECK(o.relres <= 2 * rtol, "%s %s %s/%s: ||b-Ax||/||b|| = %.3e > 2 * %.0e", mkind_name[mk], tn,
                             solver_names[si], pc_names[pi], o.relres, rtol);
                    TU_CHECK(o.res.relative_residual <= rtol, "%s %s %s/%s: reported %.3e", mkind_name[mk], tn,
                             solver_names[si], pc_names[pi], o.res.relative_residual);
                    /* the library's true residual agrees with ours (it is computed in t's precision) */
                    TU_CHECK(fabs(o.res.relative_residual - o.relres) <= 0.05 * o.relres + 50 * tu_eps(t),
                             "%s %s %s/%s: reported %.6e, recomputed %.6e", mkind_name[mk], tn, solver_names[si],
                             pc_names[pi], o.res.relative_residual, o.relres);
                    TU_CHECK(o.its > 0 && o.its < maxit, "%s %s %s/%s: %d iterations", mkind_name[mk], tn,
                             solver_names[si], pc_names[pi], o.its);
                    if (mk == M_POISSON && t == SPS_F64) g_poisson_its[si][pi] = o.its;
                }
            }
            dcsr_free(&D);
            sps_matrix_destroy(A);
        }
    }
}

/* ------------------------------------------------------------------ edge cases */
static void test_initial_guess(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        sps_matrix A = make_matrix(M_POISSON, t);
        dcsr D = export_dcsr(A);
        const size_t n = (size_t)D.n, ss = sps_scalar_size(t);
        void *xt = tu_xcalloc(n, ss), *x0 = tu_xcalloc(n, ss), *xs = tu_xcalloc(n, ss);
        for (int si = 0; si < 3; si++) {
            tu_fill_random(&g_rng, t, n, xt);
            /* x0 = x_true + 1e-3 perturbation: fewer iterations than from 0 */
            for (size_t i = 0; i < n; i++) {
                double re, im;
                tu_get(t, xt, i, &re, &im);
                tu_put(t, x0, i, re + 1e-3 * tu_rng_range(&g_rng, -1, 1), im + 1e-3 * tu_rng_range(&g_rng, -1, 1));
            }
            outcome o0 = run_solve(A, &D, solver_names[si], "none", rtol_of(t), 2000, 0, xt, NULL, NULL);
            outcome o1 = run_solve(A, &D, solver_names[si], "none", rtol_of(t), 2000, 0, xt, x0, NULL);
            TU_CHECK(o0.st == SPS_OK && o1.st == SPS_OK, "guess %s %s: %s / %s", sps_scalar_name(t), solver_names[si],
                     sps_status_name(o0.st), sps_status_name(o1.st));
            TU_CHECK(o1.its < o0.its, "guess %s %s: %d iterations from a close guess, %d from 0", sps_scalar_name(t),
                     solver_names[si], o1.its, o0.its);
            TU_CHECK(o1.relres <= 2 * rtol_of(t), "guess %s %s: relres %.3e", sps_scalar_name(t), solver_names[si],
                     o1.relres);
            /* x0 = x_true: converged at iteration 0, x unchanged */
            outcome o2 = run_solve(A, &D, solver_names[si], "jacobi", rtol_of(t), 2000, 0, xt, xt, xs);
            TU_CHECK(o2.st == SPS_OK && o2.its == 0 && o2.res.reason == SPS_REASON_CONVERGED_RTOL,
                     "x0 exact %s %s: %s, %d iterations, %s", sps_scalar_name(t), solver_names[si],
                     sps_status_name(o2.st), o2.its, sps_reason_name(o2.res.reason));
            TU_CHECK(memcmp(xs, xt, n * ss) == 0, "x0 exact %s %s: x changed", sps_scalar_name(t), solver_names[si]);
        }
        free(xt);
        free(x0);
        free(xs);
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
}

static void test_zero_rhs(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        sps_matrix A = make_matrix(M_POISSON, t);
        dcsr D = export_dcsr(A);
        const size_t n = (size_t)D.n, ss = sps_scalar_size(t);
        void *zero = tu_xcalloc(n, ss), *x0 = tu_xcalloc(n, ss), *x = tu_xcalloc(n, ss);
        for (int si = 0; si < 3; si++) {
            tu_fill_random(&g_rng, t, n, x0);
            /* x_true = 0 gives b = 0; the guess is random and nonzero */
            outcome o = run_solve(A, &D, solver_names[si], "none", rtol_of(t), 100, 0, zero, x0, x);
            TU_CHECK(o.st == SPS_OK && o.its == 0 && o.res.reason == SPS_REASON_ZERO_RHS, "b = 0 %s %s: %s, %d its, %s",
                     sps_scalar_name(t), solver_names[si], sps_status_name(o.st), o.its, sps_reason_name(o.res.reason));
            TU_CHECK(memcmp(x, zero, n * ss) == 0, "b = 0 %s %s: x is not 0", sps_scalar_name(t), solver_names[si]);
            TU_CHECK(o.res.residual_norm == 0.0 && o.res.rhs_norm == 0.0, "b = 0: residual %g, ||b|| %g",
                     o.res.residual_norm, o.res.rhs_norm);
        }
        free(zero);
        free(x0);
        free(x);
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
}

/* A's operator and a solver of that name on it, with rtol (atol 0) and maxit: the setup the
 * scaling and re-entrancy tests share */
static sps_solver solver_on(sps_matrix A, const char *name, double rtol, int maxit, sps_operator *op)
{
    sps_solver s = NULL;
    *op = NULL;
    TU_OK(g_ctx, sps_operator_from_matrix(A, op));
    TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, name, &s));
    TU_OK(g_ctx, sps_solver_set_operator(s, *op));
    TU_OK(g_ctx, sps_solver_set_tolerances(s, rtol, 0.0, maxit));
    return s;
}

/* b of norm ~1e160 or ~1e-170 (the solvers' sums of squares in double would overflow or
 * vanish): solved scaled, so each solve equals the one of b itself times the power of two,
 * bit for bit -- the same iterations, x and norms scaled exactly. */
static void test_extreme_rhs(void)
{
    const sps_scalar ts[2] = {SPS_F64, SPS_C64};
    for (int ti = 0; ti < 2; ti++) {
        const sps_scalar t = ts[ti];
        sps_matrix A = make_matrix(M_POISSON, t);
        dcsr D = export_dcsr(A);
        const size_t n = (size_t)D.n, ss = sps_scalar_size(t), nr = n * (cplx(t) ? 2 : 1);
        double *xt = tu_xcalloc(nr, sizeof(double)), *b = tu_xcalloc(nr, sizeof(double)),
               *bs = tu_xcalloc(nr, sizeof(double)), *x1 = tu_xcalloc(nr, sizeof(double)),
               *x2 = tu_xcalloc(nr, sizeof(double));
        (void)ss;
        tu_fill_random(&g_rng, t, n, xt);
        matvec(&D, t, xt, b);
        const int pw[2] = {530, -565}; /* ||b|| ~ 3e160 and ~2e-169 */
        for (int si = 0; si < 3; si++)
            for (int k = 0; k < 2; k++) {
                for (size_t i = 0; i < nr; i++) bs[i] = ldexp(b[i], pw[k]);
                sps_result r1, r2;
                sps_status st1 = SPS_ERR_ARG, st2 = SPS_ERR_ARG;
                for (int pass = 0; pass < 2; pass++) {
                    sps_operator op;
                    sps_solver s = solver_on(A, solver_names[si], 1e-10, 1000, &op);
                    sps_vector vb = NULL, vx = NULL;
                    TU_OK(g_ctx, sps_vector_from_host(g_ctx, (sps_index)n, t, pass ? bs : b, &vb));
                    TU_OK(g_ctx, sps_vector_create(g_ctx, (sps_index)n, t, &vx));
                    TU_OK(g_ctx, sps_vector_fill(vx, (double[2]){0, 0}));
                    const sps_status st = sps_solver_solve(s, vb, vx, pass ? &r2 : &r1);
                    *(pass ? &st2 : &st1) = st;
                    TU_OK(g_ctx, sps_vector_get(vx, pass ? x2 : x1));
                    sps_vector_destroy(vb);
                    sps_vector_destroy(vx);
                    sps_solver_destroy(s);
                    sps_operator_destroy(op);
                }
                int same = st1 == SPS_OK && st2 == SPS_OK && r1.iterations == r2.iterations && r1.reason == r2.reason;
                for (size_t i = 0; same && i < nr; i++) same = ldexp(x2[i], -pw[k]) == x1[i];
                TU_CHECK(same, "%s %s, b x 2^%d: %s / %s, %d / %d iterations, reason %s / %s, x %s", sps_scalar_name(t),
                         solver_names[si], pw[k], sps_status_name(st1), sps_status_name(st2), r1.iterations,
                         r2.iterations, sps_reason_name(r1.reason), sps_reason_name(r2.reason),
                         same ? "same" : "differs");
                TU_CHECK(ldexp(r2.rhs_norm, -pw[k]) == r1.rhs_norm && ldexp(r2.residual_norm, -pw[k]) == r1.residual_norm,
                         "%s %s, b x 2^%d: norms %.17g / %.17g, residual %.17g / %.17g", sps_scalar_name(t),
                         solver_names[si], pw[k], r2.rhs_norm, r1.rhs_norm, r2.residual_norm, r1.residual_norm);
            }
        free(xt), free(b), free(bs), free(x1), free(x2);
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
}

/* A tiny b with a large initial guess: the scaling that brings b near 1 must not take x past
 * the range.  b ~ 1e-120 with x0 = 1e150: scaled within range, the solve ends (x finite, not
 * "NaN or Inf in the initial guess" nor NaN iterates; converging is another matter); b ~ 1e-200 with x0 = 1e200: no power of two serves both,
 * refused (SPS_ERR_NUMERIC, saying so) with x as given. */
static void test_extreme_x0(void)
{
    sps_matrix A = make_matrix(M_POISSON, SPS_F64);
    dcsr D = export_dcsr(A);
    const size_t n = (size_t)D.n;
    double *b = tu_xcalloc(n, sizeof(double)), *x = tu_xcalloc(n, sizeof(double));
    const double bv[2] = {1e-120, 1e-200}, xv[2] = {1e150, 1e200};
    for (int si = 0; si < 3; si++)
        for (int k = 0; k < 2; k++) {
            for (size_t i = 0; i < n; i++) b[i] = bv[k] * (1.0 + (double)(i % 7)), x[i] = xv[k];
            sps_operator op;
            sps_solver s = solver_on(A, solver_names[si], 1e-8, 50, &op);
            sps_vector vb = NULL, vx = NULL;
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, (sps_index)n, SPS_F64, b, &vb));
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, (sps_index)n, SPS_F64, x, &vx));
            sps_context_clear_error(g_ctx);
            sps_result r;
            const sps_status st = sps_solver_solve(s, vb, vx, &r);
            TU_OK(g_ctx, sps_vector_get(vx, x));
            int finite = 1, given = 1;
            for (size_t i = 0; i < n; i++) finite = finite && isfinite(x[i]), given = given && x[i] == xv[k];
            if (k == 0)
                TU_CHECK((st == SPS_OK || st == SPS_ERR_NOT_CONVERGED) && finite && r.reason != SPS_REASON_NONE &&
                             r.reason != SPS_REASON_NAN,
                         "%s, b ~ 1e-120, x0 = 1e150: %s (%s), reason %s, x %s", solver_names[si],
                         sps_status_name(st), sps_context_error(g_ctx), sps_reason_name(r.reason),
                         finite ? "finite" : "not finite");
            else
                TU_CHECK(st == SPS_ERR_NUMERIC && given && strstr(sps_context_error(g_ctx), "too far apart"),
                         "%s, b ~ 1e-200, x0 = 1e200: %s (%s), x %s", solver_names[si], sps_status_name(st),
                         sps_context_error(g_ctx), given ? "as given" : "changed");
            sps_vector_destroy(vb);
            sps_vector_destroy(vx);
            sps_solver_destroy(s);
            sps_operator_destroy(op);
        }
    sps_context_clear_error(g_ctx);
    free(b), free(x);
    dcsr_free(&D);
    sps_matrix_destroy(A);
}

/* The solver's own monitor calling back into it mid-solve: settings, a nested solve and a
 * destroy.  A new restart length had made GMRES (with a preconditioner) read past its
 * workspace, a destroy was a use after free, a nested solve clobbered the outer history.  Now
 * the setters and solve refuse (SPS_ERR_ARG) and the destroy waits for the solve's return. */
typedef struct {
    sps_solver s;
    sps_vector b, x;
    sps_status set, nested;
    int destroy;
} reenter;
static int reenter_mon(void *user, int it, double rnorm)
{
    (void)rnorm;
    reenter *r = user;
    if (it != 2) return 0;
    if (r->destroy) {
        sps_solver_destroy(r->s);
        return 0;
    }
    r->set = sps_solver_set_restart(r->s, 40);
    r->nested = sps_solver_solve(r->s, r->b, r->x, NULL);
    return 0;
}
static void test_reentrant_monitor(void)
{
    sps_matrix A = make_matrix(M_POISSON, SPS_F64);
    sps_matrix_info_t in;
    TU_OK(g_ctx, sps_matrix_info(A, &in));
    for (int si = 0; si < 3; si++)
        for (int destroy = 0; destroy < 2; destroy++) {
            sps_operator op;
            sps_precond P = NULL;
            reenter r = {.set = SPS_OK, .nested = SPS_OK, .destroy = destroy};
            r.s = solver_on(A, solver_names[si], 1e-8, 1000, &op);
            TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P));
            TU_OK(g_ctx, sps_solver_set_precond(r.s, P));
            TU_OK(g_ctx, sps_solver_set_restart(r.s, 5));
            TU_OK(g_ctx, sps_solver_set_monitor(r.s, reenter_mon, &r));
            TU_OK(g_ctx, sps_vector_create(g_ctx, in.rows, SPS_F64, &r.b));
            TU_OK(g_ctx, sps_vector_create(g_ctx, in.rows, SPS_F64, &r.x));
            TU_OK(g_ctx, sps_vector_fill(r.b, (double[1]){1}));
            TU_OK(g_ctx, sps_vector_fill(r.x, (double[1]){0}));
            sps_result res;
            const sps_status st = sps_solver_solve(r.s, r.b, r.x, &res);
            TU_CHECK(st == SPS_OK && res.reason == SPS_REASON_CONVERGED_RTOL, "%s%s: the solve ends (%s, %s)",
                     solver_names[si], destroy ? " destroyed from its monitor" : "", sps_status_name(st),
                     sps_context_error(g_ctx));
            if (!destroy) {
                TU_CHECK(r.set == SPS_ERR_ARG && r.nested == SPS_ERR_ARG &&
                             strstr(sps_context_error(g_ctx), "called during this solver's solve"),
                         "%s: set_restart %s, nested solve %s from the monitor (%s)", solver_names[si],
                         sps_status_name(r.set), sps_status_name(r.nested), sps_context_error(g_ctx));
                sps_solver_destroy(r.s);
            } /* else freed when its solve returned (ASan: no leak, no use after free) */
            sps_context_clear_error(g_ctx);
            sps_vector_destroy(r.b);
            sps_vector_destroy(r.x);
            sps_precond_destroy(P);
            sps_operator_destroy(op);
        }
    sps_matrix_destroy(A);
}

/* ||b|| at the ends of the double range (1e308: 1/f would overflow with an unclamped exponent;
 * a subnormal 1e-310: f would) on 2 I, and the monitor shown the system's norms, not the scaled
 * ones the iteration works with. */
static int g_mon_first_set;
static double g_mon_first;
static int first_rnorm(void *user, int it, double rnorm)
{
    (void)user;
    if (it == 1 && !g_mon_first_set) g_mon_first = rnorm, g_mon_first_set = 1;
    return 0;
}
static void test_range_ends(void)
{
    enum { N = 8 };
    trip T = {0};
    for (int i = 0; i < N; i++) trip_add(&T, i, i, 2.0, 0.0);
    sps_matrix A = trip_matrix(&T, N, N, SPS_F64);
    const double vals[2] = {1e308, 1e-310};
    for (int k = 0; k < 2; k++) {
        double b[N] = {0}, x[N];
        for (int i = 0; i < N; i++) b[i] = vals[k] * (i == 0 ? 1.0 : 0.5);
        sps_operator op = NULL;
        sps_solver s = NULL;
        sps_vector vb = NULL, vx = NULL;
        TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
        TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, "cg", &s));
        TU_OK(g_ctx, sps_solver_set_operator(s, op));
        TU_OK(g_ctx, sps_solver_set_monitor(s, first_rnorm, NULL));
        TU_OK(g_ctx, sps_vector_from_host(g_ctx, N, SPS_F64, b, &vb));
        TU_OK(g_ctx, sps_vector_create(g_ctx, N, SPS_F64, &vx));
        TU_OK(g_ctx, sps_vector_fill(vx, (double[1]){0}));
        g_mon_first_set = 0;
        sps_result r;
        const sps_status st = sps_solver_solve(s, vb, vx, &r);
        TU_OK(g_ctx, sps_vector_get(vx, x));
        int ok = st == SPS_OK;
        for (int i = 0; i < N; i++) ok = ok && x[i] == b[i] / 2; /* 2 I: exact */
        TU_CHECK(ok, "b = %g: %s, x[0] = %g (want %g)", vals[k], sps_status_name(st), x[0], b[0] / 2);
        TU_CHECK(!g_mon_first_set || (r.history_len > 1 && g_mon_first == r.history[1]),
                 "b = %g: the monitor saw %g, the history says %g", vals[k], g_mon_first,
                 r.history_len > 1 ? r.history[1] : NAN);
        sps_vector_destroy(vb);
        sps_vector_destroy(vx);
        sps_solver_destroy(s);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
}

/* rtol = atol = 0: no residual meets the tolerance, so a solve ends at maxit or where the
 * precision stops it -- a vanishing p'Ap, rho or omega with the residual at rounding level is
 * stagnation, not an indefinite operator, a breakdown or NaN (CG ended "indefinite after 837
 * iterations" on nos4, BiCGSTAB "nan"); x is then a solution to rounding. */
static void test_rtol_zero(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        sps_matrix A = make_matrix(M_POISSON, t);
        dcsr D = export_dcsr(A);
        for (int si = 0; si < 3; si++) {
            outcome o = run_solve(A, &D, solver_names[si], "none", 0.0, 4000, 0, NULL, NULL, NULL);
            const int ok_reason = o.res.reason == SPS_REASON_MAXIT || o.res.reason == SPS_REASON_STAGNATION;
            TU_CHECK(o.st == SPS_ERR_NOT_CONVERGED && ok_reason && o.relres <= 1e3 * tu_eps(t),
                     "rtol 0 %s %s: %s, reason %s after %d its, relres %.3e", sps_scalar_name(t), solver_names[si],
                     sps_status_name(o.st), sps_reason_name(o.res.reason), o.its, o.relres);
        }
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
}

static void test_maxit(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        sps_matrix A = make_matrix(M_POISSON, t);
        dcsr D = export_dcsr(A);
        const size_t n = (size_t)D.n, ss = sps_scalar_size(t);
        void *x = tu_xcalloc(n, ss);
        for (int si = 0; si < 3; si++) {
            sps_context_clear_error(g_ctx);
            outcome o = run_solve(A, &D, solver_names[si], "jacobi", rtol_of(t), 4, 0, NULL, NULL, x);
            TU_CHECK(o.st == SPS_ERR_NOT_CONVERGED && o.res.reason == SPS_REASON_MAXIT && o.its == 4,
                     "maxit %s %s: %s %s %d", sps_scalar_name(t), solver_names[si], sps_status_name(o.st),
                     sps_reason_name(o.res.reason), o.its);
            TU_CHECK(strstr(sps_context_error(g_ctx), "did not converge in 4 iterations") != NULL, "maxit message: %s",
                     sps_context_error(g_ctx));
            /* the reported residual is the true one */
            TU_CHECK(fabs(o.res.relative_residual - o.relres) <= 1e-3 * o.relres,
                     "maxit %s %s: reported %.6e, true %.6e", sps_scalar_name(t), solver_names[si],
                     o.res.relative_residual, o.relres);
            TU_CHECK(all_finite(t, n, x), "maxit: x finite");
            /* maxit = 0: no iteration */
            outcome z = run_solve(A, &D, solver_names[si], "none", rtol_of(t), 0, 0, NULL, NULL, NULL);
            TU_CHECK(z.st == SPS_ERR_NOT_CONVERGED && z.its == 0 && z.res.reason == SPS_REASON_MAXIT, "maxit 0: %s %d",
                     sps_status_name(z.st), z.its);
        }
        free(x);
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
}

static void test_indefinite(void)
{
    /* poisson2d:20 - 4.5 I: eigenvalues in (-4.5, 3.5), mean -0.5, so p'Ap < 0 comes at once */
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        trip T = {0};
        const int N = 20;
        for (int iy = 0; iy < N; iy++)
            for (int ix = 0; ix < N; ix++) {
                const sps_index i = iy * N + ix;
                trip_add(&T, i, i, -0.5, 0);
                if (ix > 0) trip_add(&T, i, i - 1, -1, 0);
                if (ix < N - 1) trip_add(&T, i, i + 1, -1, 0);
                if (iy > 0) trip_add(&T, i, i - N, -1, 0);
                if (iy < N - 1) trip_add(&T, i, i + N, -1, 0);
            }
        sps_matrix A = trip_matrix(&T, N * N, N * N, t);
        dcsr D = export_dcsr(A);
        void *x = tu_xcalloc((size_t)D.n, sps_scalar_size(t));
        for (int pi = 0; pi < 2; pi++) {
            sps_context_clear_error(g_ctx);
            outcome o = run_solve(A, &D, "cg", pc_names[pi], rtol_of(t), 2000, 0, NULL, NULL, x);
            TU_CHECK(o.st == SPS_ERR_BREAKDOWN && o.res.reason == SPS_REASON_INDEFINITE, "indefinite %s %s: %s %s",
                     sps_scalar_name(t), pc_names[pi], sps_status_name(o.st), sps_reason_name(o.res.reason));
            TU_CHECK(strstr(sps_context_error(g_ctx), "not positive definite") != NULL, "indefinite message: %s",
                     sps_context_error(g_ctx));
            TU_CHECK(all_finite(t, (size_t)D.n, x) && isfinite(o.res.residual_norm), "indefinite: x finite");
        }
        TU_CHECK(strstr(sps_context_error(g_ctx), "breakdown at iteration") != NULL, "indefinite message: %s",
                 sps_context_error(g_ctx));
        free(x);
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
}

static void test_bicgstab_breakdown(void)
{
    /* A = [0 1; -1 0], b = e_1: rhat^H A rhat = 0, so alpha = rho / rhat'v has a zero denominator */
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        trip T = {0};
        trip_add(&T, 0, 1, 1, 0);
        trip_add(&T, 1, 0, -1, 0);
        sps_matrix A = trip_matrix(&T, 2, 2, t);
        dcsr D = export_dcsr(A);
        const size_t ss = sps_scalar_size(t);
        void *xt = tu_xcalloc(2, ss), *x = tu_xcalloc(2, ss);
        tu_put(t, xt, 1, 1.0, 0.0); /* b = A xt = e_1 */
        sps_context_clear_error(g_ctx);
        outcome o = run_solve(A, &D, "bicgstab", "none", 1e-8, 100, 0, xt, NULL, x);
        TU_CHECK(o.st == SPS_ERR_BREAKDOWN && o.res.reason == SPS_REASON_BREAKDOWN, "bicgstab breakdown %s: %s %s",
                 sps_scalar_name(t), sps_status_name(o.st), sps_reason_name(o.res.reason));
        TU_CHECK(strstr(sps_context_error(g_ctx), "BiCGSTAB breakdown") != NULL, "message: %s",
                 sps_context_error(g_ctx));
        TU_CHECK(all_finite(t, 2, x), "bicgstab breakdown: x finite");
        outcome g = run_solve(A, &D, "gmres", "none", 1e-8, 100, 0, xt, NULL, NULL);
        TU_CHECK(g.st == SPS_OK && g.its == 2, "gmres on the 2x2 rotation: %s, %d its", sps_status_name(g.st), g.its);
        free(xt);
        free(x);
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
}

static void test_nan_rhs(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        sps_matrix A = make_matrix(M_POISSON, t);
        sps_operator op = NULL;
        TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
        const sps_index n = 400;
        const size_t ss = sps_scalar_size(t);
        void *b = tu_xcalloc((size_t)n, ss), *x = tu_xcalloc((size_t)n, ss);
        tu_fill_random(&g_rng, t, (size_t)n, b);
        tu_put(t, b, 123, NAN, 0.0);
        for (int si = 0; si < 3; si++) {
            sps_solver s = NULL;
            sps_vector vb = NULL, vx = NULL;
            sps_result res;
            TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, solver_names[si], &s));
            TU_OK(g_ctx, sps_solver_set_operator(s, op));
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, b, &vb));
            TU_OK(g_ctx, sps_vector_create(g_ctx, n, t, &vx));
            sps_status st = sps_solver_solve(s, vb, vx, &res);
            TU_CHECK(st == SPS_ERR_NUMERIC && res.reason == SPS_REASON_NAN, "NaN in b %s %s: %s %s", sps_scalar_name(t),
                     solver_names[si], sps_status_name(st), sps_reason_name(res.reason));
            TU_CHECK(strstr(sps_context_error(g_ctx), "right-hand side") != NULL, "NaN message: %s",
                     sps_context_error(g_ctx));
            tu_fill_nan(t, (size_t)n, x);
            TU_OK(g_ctx, sps_vector_get(vx, x));
            TU_CHECK(all_finite(t, (size_t)n, x), "NaN in b: x is not NaN");
            sps_vector_destroy(vb);
            sps_vector_destroy(vx);
            sps_solver_destroy(s);
        }
        free(b);
        free(x);
        sps_operator_destroy(op);
        sps_matrix_destroy(A);
    }
}

/* ------------------------------------------------------------------ shell operator */
typedef struct {
    sps_scalar t;
    int applies;
    int nan_at;  /* 0: never; k: the k-th application returns NaN in y */
    int fail_at; /* 0: never; k: the k-th application and later ones return SPS_ERR_DEVICE */
} shell_data;

/* y = T x with T = tridiag(-1, 3, -1) (SPD), in the type of the vectors */
static sps_status tridiag_apply(void *user, sps_vector xv, sps_vector yv)
{
    shell_data *d = user;
    const sps_index n = sps_vector_size(xv);
    const void *x = sps_vector_data(xv);
    void *y = sps_vector_data(yv);
    d->applies++;
    for (sps_index i = 0; i < n; i++) {
        double ar, ai, br = 0, bi = 0, cr = 0, ci = 0;
        tu_get(d->t, x, (size_t)i, &ar, &ai);
        if (i > 0) tu_get(d->t, x, (size_t)i - 1, &br, &bi);
        if (i < n - 1) tu_get(d->t, x, (size_t)i + 1, &cr, &ci);
        tu_put(d->t, y, (size_t)i, 3 * ar - br - cr, 3 * ai - bi - ci);
    }
    if (d->nan_at && d->applies == d->nan_at) tu_put(d->t, y, (size_t)n / 2, NAN, 0.0);
    return d->fail_at && d->applies >= d->fail_at ? SPS_ERR_DEVICE : SPS_OK;
}

/* A shell operator that fails from its k-th application on: during the iterations (the result's
 * residual is unknown: NaN, not r0's), or only at the true residual after maxit (the status is
 * the failure the message names, not "not converged") */
static void test_shell_failure(void)
{
    const sps_index n = 50;
    for (int si = 0; si < 3; si++)
        for (int late = 0; late < 2; late++) {
            shell_data sd = {SPS_F64, 0, 0, 0};
            sps_operator op = NULL;
            sps_solver s = NULL;
            sps_vector vb = NULL, vx = NULL;
            sps_result res;
            TU_OK(g_ctx, sps_operator_shell(g_ctx, n, n, SPS_F64, tridiag_apply, NULL, &sd, &op));
            TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, solver_names[si], &s));
            TU_OK(g_ctx, sps_solver_set_operator(s, op));
            TU_OK(g_ctx, sps_solver_set_tolerances(s, 1e-14, 0, late ? 2 : 1000));
            TU_OK(g_ctx, sps_vector_create(g_ctx, n, SPS_F64, &vb));
            TU_OK(g_ctx, sps_vector_create(g_ctx, n, SPS_F64, &vx));
            TU_OK(g_ctx, sps_vector_fill(vb, (double[1]){1}));
            TU_OK(g_ctx, sps_vector_fill(vx, (double[1]){0}));
            /* late: count the applications of a 2-iteration solve; the same solve again then fails
               at its last one, the true residual's */
            if (late) {
                (void)sps_solver_solve(s, vb, vx, &res);
                sd.fail_at = sd.applies, sd.applies = 0;
                TU_OK(g_ctx, sps_vector_fill(vx, (double[1]){0}));
            } else {
                sd.fail_at = 4;
            }
            if (!late) { /* a call refused before any solve (b of another length): no norms, NaN */
                sps_vector short_b = NULL;
                TU_OK(g_ctx, sps_vector_create(g_ctx, n - 1, SPS_F64, &short_b));
                const sps_status sa = sps_solver_solve(s, short_b, vx, &res);
                TU_CHECK(sa == SPS_ERR_ARG && isnan(res.relative_residual) && isnan(res.residual_norm) &&
                             res.reason == SPS_REASON_NONE,
                         "%s, refused call: %s, relative residual %g", solver_names[si], sps_status_name(sa),
                         res.relative_residual);
                sps_vector_destroy(short_b);
            }
            sps_context_clear_error(g_ctx);
            const sps_status st = sps_solver_solve(s, vb, vx, &res);
            TU_CHECK(st == SPS_ERR_DEVICE && isnan(res.residual_norm) &&
                         strstr(sps_context_error(g_ctx), "SPS_ERR_DEVICE"),
                     "%s, the operator failing %s: %s, residual %g (%s)", solver_names[si],
                     late ? "at the true residual" : "mid-solve", sps_status_name(st), res.residual_norm,
                     sps_context_error(g_ctx));
            sps_context_clear_error(g_ctx);
            sps_vector_destroy(vb);
            sps_vector_destroy(vx);
            sps_solver_destroy(s);
            sps_operator_destroy(op);
        }
}

static void test_shell(void)
{
    const sps_index n = 300;
    /* the test's CSR of the same tridiagonal matrix, for the residual */
    dcsr D = {n, tu_xcalloc((size_t)n + 1, sizeof(sps_index)), tu_xcalloc(3 * (size_t)n, sizeof(sps_index)),
              tu_xcalloc(3 * (size_t)n, sizeof(double)), tu_xcalloc(3 * (size_t)n, sizeof(double))};
    sps_index k = 0;
    for (sps_index i = 0; i < n; i++) {
        for (sps_index j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) {
                D.ci[k] = j;
                D.re[k++] = j == i ? 3.0 : -1.0;
            }
        D.rp[i + 1] = k;
    }
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        const size_t ss = sps_scalar_size(t);
        void *xt = tu_xcalloc((size_t)n, ss), *b = tu_xcalloc((size_t)n, ss), *x = tu_xcalloc((size_t)n, ss);
        for (int si = 0; si < 3; si++) {
            for (int inject = 0; inject < 2; inject++) {
                shell_data sd = {t, 0, inject ? 6 : 0, 0};
                sps_operator op = NULL;
                sps_solver s = NULL;
                sps_vector vb = NULL, vx = NULL;
                sps_result res;
                tu_fill_random(&g_rng, t, (size_t)n, xt);
                matvec(&D, t, xt, b);
                TU_OK(g_ctx, sps_operator_shell(g_ctx, n, n, t, tridiag_apply, NULL, &sd, &op));
                TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, solver_names[si], &s));
                TU_OK(g_ctx, sps_solver_set_operator(s, op));
                TU_OK(g_ctx, sps_solver_set_tolerances(s, rtol_of(t), 0, 1000));
                TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, b, &vb));
                TU_OK(g_ctx, sps_vector_create(g_ctx, n, t, &vx));
                sps_status st = sps_solver_solve(s, vb, vx, &res);
                tu_fill_nan(t, (size_t)n, x);
                TU_OK(g_ctx, sps_vector_get(vx, x));
                if (!inject) {
                    const double rr = resid_norm(&D, t, b, x) / vnorm(t, (size_t)n, b);
                    TU_CHECK(st == SPS_OK && rr <= 2 * rtol_of(t), "shell %s %s: %s, relres %.3e: %s",
                             sps_scalar_name(t), solver_names[si], sps_status_name(st), rr, sps_context_error(g_ctx));
                    TU_CHECK(res.iterations > 0 && sd.applies >= res.iterations, "shell %s %s: %d its, %d applies",
                             sps_scalar_name(t), solver_names[si], res.iterations, sd.applies);
                } else {
                    /* NaN produced by the operator mid-solve: no converged flag, x stays finite */
                    TU_CHECK(st == SPS_ERR_NUMERIC && res.reason == SPS_REASON_NAN, "shell NaN %s %s: %s %s",
                             sps_scalar_name(t), solver_names[si], sps_status_name(st), sps_reason_name(res.reason));
                    TU_CHECK(all_finite(t, (size_t)n, x), "shell NaN %s %s: x has NaN", sps_scalar_name(t),
                             solver_names[si]);
                    TU_CHECK(res.history_len == res.iterations + 1, "shell NaN: history %d for %d its", res.history_len,
                             res.iterations);
                }
                sps_vector_destroy(vb);
                sps_vector_destroy(vx);
                sps_solver_destroy(s);
                sps_operator_destroy(op);
            }
        }
        free(xt);
        free(b);
        free(x);
    }
    dcsr_free(&D);
}

/* ------------------------------------------------------------------ monitor */
typedef struct {
    int calls, stop_at, last_it, in_order;
    double seen[16];
} mon_data;

static int monitor_fn(void *user, int it, double rnorm)
{
    mon_data *m = user;
    m->calls++;
    if (it != m->last_it + 1) m->in_order = 0;
    m->last_it = it;
    if (it < 16) m->seen[it] = rnorm;
    return it >= m->stop_at;
}

static void test_monitor(void)
{
    const sps_scalar t = SPS_F64;
    sps_matrix A = make_matrix(M_CONVDIFF, t);
    sps_operator op = NULL;
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    const sps_index n = 400;
    void *b = tu_xcalloc((size_t)n, sizeof(double));
    tu_fill_random(&g_rng, t, (size_t)n, b);
    for (int si = 1; si < 3; si++) {
        mon_data md = {0, 3, 0, 1, {0}};
        sps_solver s = NULL;
        sps_vector vb = NULL, vx = NULL;
        sps_result res;
        TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, solver_names[si], &s));
        TU_OK(g_ctx, sps_solver_set_operator(s, op));
        TU_OK(g_ctx, sps_solver_set_monitor(s, monitor_fn, &md));
        TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, b, &vb));
        TU_OK(g_ctx, sps_vector_create(g_ctx, n, t, &vx));
        sps_status st = sps_solver_solve(s, vb, vx, &res);
        TU_CHECK(st == SPS_ERR_NOT_CONVERGED && res.reason == SPS_REASON_MAXIT && res.iterations == 3,
                 "monitor stop %s: %s %s %d", solver_names[si], sps_status_name(st), sps_reason_name(res.reason),
                 res.iterations);
        TU_CHECK(strstr(sps_context_error(g_ctx), "monitor") != NULL, "monitor message: %s", sps_context_error(g_ctx));
        TU_CHECK(md.calls == 3 && md.in_order, "monitor calls %d (in order %d)", md.calls, md.in_order);
        for (int k = 1; k <= 3 && k < res.history_len; k++)
            TU_CHECK(md.seen[k] == res.history[k], "monitor value %d: %g vs history %g", k, md.seen[k], res.history[k]);
        /* without stopping: called once per iteration */
        mon_data all = {0, 1 << 30, 0, 1, {0}};
        TU_OK(g_ctx, sps_solver_set_monitor(s, monitor_fn, &all));
        TU_OK(g_ctx, sps_vector_fill(vx, &(double){0.0}));
        st = sps_solver_solve(s, vb, vx, &res);
        TU_CHECK(st == SPS_OK && all.calls == res.iterations && all.in_order, "monitor %s: %d calls, %d its",
                 solver_names[si], all.calls, res.iterations);
        sps_vector_destroy(vb);
        sps_vector_destroy(vx);
        sps_solver_destroy(s);
    }
    free(b);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* ------------------------------------------------------------------ norm = inf */
/* CG (SPD / HPD matrices) and BiCGSTAB (nonsymmetric ones) with option norm = inf (the
 * max-norm stopping test), every scalar type, with and without Jacobi: converged; the solution's true residual
 * max |b - A x| (recomputed here in double) within max(rtol max|b|) up to the solve's
 * rounding; the reported norms are max norms (rhs_norm = max |b|, history[0] = max |b|
 * from x0 = 0, residual_norm = the recomputed one); the history's last entry meets the
 * tolerance and the one before does not (it stops at the first iterate that does); the
 * 2-norm run before it on the same solver reported ||b||_2 (the option switches the norm).  GMRES refuses it;
 * norm = 1 is refused. */
static void test_norm_inf(void)
{
    for (int ti = 0; ti < 2 * TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti % TU_NTYPES];
        const int bcg = ti >= TU_NTYPES, single = t == SPS_F32 || t == SPS_C32;
        const double rtol = single ? 1e-4 : 1e-7;
        sps_matrix A = make_matrix(bcg ? (sps_scalar_is_complex(t) ? M_NONHERM : M_CONVDIFF)
                                       : (sps_scalar_is_complex(t) ? M_HERM : M_POISSON),
                                   t);
        sps_operator op = NULL;
        TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
        const sps_index n = 400;
        void *b = tu_xcalloc((size_t)n, sps_scalar_size(t)), *x = tu_xcalloc((size_t)n, sps_scalar_size(t));
        tu_fill_random(&g_rng, t, (size_t)n, b);
        double bmax = 0;
        for (sps_index i = 0; i < n; i++) {
            double re, im;
            tu_get(t, b, (size_t)i, &re, &im);
            bmax = fmax(bmax, hypot(re, im));
        }
        for (int pc = 0; pc < 2; pc++) {
            sps_solver s = NULL;
            sps_precond P = NULL;
            sps_vector vb = NULL, vx = NULL;
            sps_result res, r2;
            TU_OK(g_ctx, sps_solver_create(g_ctx, bcg ? SPS_SOLVER_BICGSTAB : SPS_SOLVER_CG, &s));
            TU_OK(g_ctx, sps_solver_set_operator(s, op));
            if (pc) {
                TU_OK(g_ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P));
                TU_OK(g_ctx, sps_solver_set_precond(s, P));
            }
            TU_OK(g_ctx, sps_solver_set_tolerances(s, rtol, 0.0, 5000));
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, n, t, b, &vb));
            TU_OK(g_ctx, sps_vector_create(g_ctx, n, t, &vx));
            TU_OK(g_ctx, sps_solver_solve(s, vb, vx, &r2)); /* the 2-norm run first */
            const double rhs2 = r2.rhs_norm; /* ||b||_2 */
            TU_OK(g_ctx, sps_solver_set_option(s, "norm", "inf"));
            TU_OK(g_ctx, sps_vector_fill(vx, &(double[2]){0, 0}));
            const sps_status st = sps_solver_solve(s, vb, vx, &res);
            char what[96];
            snprintf(what, sizeof what, "%s norm=inf [%s%s]", bcg ? "BiCGSTAB" : "CG", sps_scalar_name(t),
                     pc ? " jacobi" : "");
            TU_CHECK(st == SPS_OK && res.reason == SPS_REASON_CONVERGED_RTOL, "%s: %s %s (%s)", what,
                     sps_status_name(st), sps_reason_name(res.reason), sps_context_error(g_ctx));
            if (st == SPS_OK && TU_OK(g_ctx, sps_vector_get(vx, x))) {
                double rmax = 0;
                tu_csr h;
                if (tu_export_csr(g_ctx, A, &h)) { /* b - A x in double */
                    for (sps_index i = 0; i < n; i++) {
                        double re, im;
                        tu_get(t, b, (size_t)i, &re, &im);
                        for (sps_index k = h.rowptr[i]; k < h.rowptr[i + 1]; k++) {
                            double ar, ai, xr, xi;
                            tu_get(t, h.val, (size_t)k, &ar, &ai);
                            tu_get(t, x, (size_t)h.col[k], &xr, &xi);
                            re -= ar * xr - ai * xi, im -= ar * xi + ai * xr;
                        }
                        rmax = fmax(rmax, hypot(re, im));
                    }
                    tu_csr_free(&h);
                }
                const double slack = single ? 50 * 6e-8 * bmax : 1e-12 * bmax;
                TU_CHECK(rmax <= rtol * bmax + slack, "%s: true max|b - A x| = %.3e, tolerance %.3e", what, rmax,
                         rtol * bmax);
                TU_CHECK(res.rhs_norm == bmax && res.history_len == res.iterations + 1 &&
                             fabs(res.history[0] - bmax) <= 1e-6 * bmax,
                         "%s: rhs_norm %.17g and history[0] %.17g are max |b| = %.17g", what, res.rhs_norm,
                         res.history[0], bmax);
                TU_CHECK(fabs(res.residual_norm - rmax) <= (single ? 1e-2 : 1e-6) * rmax + slack,
                         "%s: residual_norm %.6e is the true max-norm %.6e", what, res.residual_norm, rmax);
                const int k = res.iterations;
                TU_CHECK(k > 1 && res.history[k] <= rtol * res.rhs_norm && res.history[k - 1] > rtol * res.rhs_norm,
                         "%s: stopped at the first iterate meeting the max-norm test (%d: %.3e, before %.3e)", what,
                         k, res.history[k], res.history[k - 1]);
                TU_CHECK(res.rhs_norm < rhs2, "%s: max |b| %.6e, the 2-norm run's ||b|| %.6e", what, res.rhs_norm, rhs2);
            }
            sps_vector_destroy(vb);
            sps_vector_destroy(vx);
            sps_precond_destroy(P);
            sps_solver_destroy(s);
        }
        free(b), free(x);
        sps_operator_destroy(op);
        sps_matrix_destroy(A);
    }
    /* refusals */
    sps_matrix A = make_matrix(M_POISSON, SPS_F64);
    sps_operator op = NULL;
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    /* a NaN in b (entry 0, the others exact for x0): max |r0| is NaN, not the other
       entries' ~0, so the solve stops on it instead of reporting convergence */
    for (int bcg = 0; bcg < 2; bcg++) {
        sps_solver s = NULL;
        sps_vector vb = NULL, vx = NULL;
        sps_result res;
        TU_OK(g_ctx, sps_solver_create(g_ctx, bcg ? SPS_SOLVER_BICGSTAB : SPS_SOLVER_CG, &s));
        TU_OK(g_ctx, sps_solver_set_operator(s, op));
        TU_OK(g_ctx, sps_solver_set_option(s, "norm", "inf"));
        TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &vb));
        TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &vx));
        TU_OK(g_ctx, sps_vector_fill(vx, &(double){1.0}));
        TU_OK(g_ctx, sps_operator_apply(op, SPS_OP_N, NULL, vx, NULL, vb));
        double *bh = tu_xcalloc(400, sizeof *bh);
        TU_OK(g_ctx, sps_vector_get(vb, bh));
        bh[0] = NAN;
        TU_OK(g_ctx, sps_vector_set(vb, bh));
        free(bh);
        const sps_status st = sps_solver_solve(s, vb, vx, &res);
        TU_CHECK(st == SPS_ERR_NUMERIC && res.reason == SPS_REASON_NAN,
                 "%s norm=inf with NaN in b[0]: %s %s '%s'", bcg ? "BiCGSTAB" : "CG", sps_status_name(st),
                 sps_reason_name(res.reason), sps_context_error(g_ctx));
        sps_context_clear_error(g_ctx);
        sps_vector_destroy(vb);
        sps_vector_destroy(vx);
        sps_solver_destroy(s);
    }
    for (int si = 2; si < 3; si++) { /* gmres */
        sps_solver s = NULL;
        sps_vector vb = NULL, vx = NULL;
        sps_result res;
        TU_OK(g_ctx, sps_solver_create_by_name(g_ctx, solver_names[si], &s));
        TU_OK(g_ctx, sps_solver_set_operator(s, op));
        TU_OK(g_ctx, sps_solver_set_option(s, "norm", "inf"));
        TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &vb));
        TU_OK(g_ctx, sps_vector_fill(vb, &(double){1.0}));
        TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &vx));
        const sps_status st = sps_solver_solve(s, vb, vx, &res);
        TU_CHECK(st == SPS_ERR_UNSUPPORTED && strstr(sps_context_error(g_ctx), "norm = inf"),
                 "%s with norm=inf: %s, '%s'", solver_names[si], sps_status_name(st), sps_context_error(g_ctx));
        sps_context_clear_error(g_ctx);
        TU_CHECK(sps_solver_set_option(s, "norm", "1") == SPS_ERR_ARG, "norm=1 refused");
        sps_context_clear_error(g_ctx);
        sps_vector_destroy(vb);
        sps_vector_destroy(vx);
        sps_solver_destroy(s);
    }
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* ------------------------------------------------------------------ GMRES restart */
/* GMRES(m) on one system for m = 5, 30 and m >= n (full GMRES).  GMRES(m)'s
 * iterate k lies in x0 + K_k, over which full GMRES minimises the residual, so
 * the full history bounds the restarted ones from below at every k (and
 * GMRES(30) bounds GMRES(5) up to k = 30): a check of the restart logic that
 * needs no reference solver. */
static void test_gmres_restart(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        sps_matrix A = make_matrix(cplx(t) ? M_NONHERM : M_CONVDIFF, t);
        dcsr D = export_dcsr(A);
        const size_t n = (size_t)D.n, ss = sps_scalar_size(t);
        void *xt = tu_xcalloc(n, ss), *b = tu_xcalloc(n, ss), *x = tu_xcalloc(n, ss);
        tu_fill_random(&g_rng, t, n, xt);
        matvec(&D, t, xt, b);
        const int restarts[3] = {5, 30, (int)n};
        double *hist[3];
        int its[3];
        sps_operator op = NULL;
        sps_solver s = NULL;
        sps_vector vb = NULL, vx = NULL;
        sps_result res;
        TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
        TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_GMRES, &s));
        TU_OK(g_ctx, sps_solver_set_operator(s, op));
        TU_OK(g_ctx, sps_solver_set_tolerances(s, rtol_of(t), 0, 5000));
        TU_OK(g_ctx, sps_vector_from_host(g_ctx, (sps_index)n, t, b, &vb));
        TU_OK(g_ctx, sps_vector_create(g_ctx, (sps_index)n, t, &vx));
        for (int k = 0; k < 3; k++) {
            TU_OK(g_ctx, sps_solver_set_restart(s, restarts[k]));
            memset(x, 0, n * ss);
            TU_OK(g_ctx, sps_vector_set(vx, x));
            sps_status st = sps_solver_solve(s, vb, vx, &res);
            TU_OK(g_ctx, sps_vector_get(vx, x));
            const double rr = resid_norm(&D, t, b, x) / vnorm(t, n, b);
            TU_CHECK(st == SPS_OK && rr <= 2 * rtol_of(t), "gmres(%d) %s: %s relres %.3e", restarts[k],
                     sps_scalar_name(t), sps_status_name(st), rr);
            its[k] = res.iterations;
            hist[k] = tu_xcalloc((size_t)res.history_len, sizeof(double));
            memcpy(hist[k], res.history, (size_t)res.history_len * sizeof(double));
        }
        const double slack = 50 * tu_eps(t) * hist[2][0];
        int ok_full = 1, ok_30 = 1;
        for (int k = 0; k <= its[2] && k <= its[0]; k++)
            if (hist[2][k] > hist[0][k] * (1 + 1e-6) + slack) ok_full = 0;
        for (int k = 0; k <= its[2] && k <= its[1]; k++)
            if (hist[2][k] > hist[1][k] * (1 + 1e-6) + slack) ok_full = 0;
        for (int k = 0; k <= 30 && k <= its[0] && k <= its[1]; k++)
            if (hist[1][k] > hist[0][k] * (1 + 1e-6) + slack) ok_30 = 0;
        TU_CHECK(ok_full && its[2] <= its[0] && its[2] <= its[1],
                 "gmres %s: full GMRES (%d its) is not below GMRES(5) (%d) and GMRES(30) (%d)", sps_scalar_name(t),
                 its[2], its[0], its[1]);
        TU_CHECK(ok_30, "gmres %s: GMRES(30) above GMRES(5) before its first restart", sps_scalar_name(t));
        TU_CHECK(its[0] > 5, "gmres %s: GMRES(5) converged without restarting (%d its)", sps_scalar_name(t), its[0]);
        for (int k = 0; k < 3; k++) free(hist[k]);
        sps_vector_destroy(vb);
        sps_vector_destroy(vx);
        sps_solver_destroy(s);
        sps_operator_destroy(op);
        free(xt);
        free(b);
        free(x);
        dcsr_free(&D);
        sps_matrix_destroy(A);
    }
    /* the history of a restarted GMRES never increases (each cycle minimises from the last x) */
    sps_matrix A = make_matrix(M_CONVDIFF, SPS_F64);
    sps_operator op = NULL;
    sps_solver s = NULL;
    sps_vector vb = NULL, vx = NULL;
    sps_result res;
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_GMRES, &s));
    TU_OK(g_ctx, sps_solver_set_operator(s, op));
    TU_OK(g_ctx, sps_solver_set_restart(s, 7));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &vb));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &vx));
    double *b = tu_xcalloc(400, sizeof *b);
    tu_fill_random(&g_rng, SPS_F64, 400, b);
    TU_OK(g_ctx, sps_vector_set(vb, b));
    TU_OK(g_ctx, sps_solver_solve(s, vb, vx, &res));
    int mono = 1;
    for (int k = 1; k < res.history_len; k++)
        if (res.history[k] > res.history[k - 1] * (1 + 1e-10)) mono = 0;
    TU_CHECK(mono && res.iterations > 7, "gmres(7) history not monotone (%d its)", res.iterations);
    /* a second solve with the same solver reuses the workspace and gives the same iterations */
    const int its1 = res.iterations;
    TU_OK(g_ctx, sps_vector_fill(vx, &(double){0.0}));
    TU_OK(g_ctx, sps_solver_solve(s, vb, vx, &res));
    TU_CHECK(res.iterations == its1, "second solve: %d vs %d iterations", res.iterations, its1);
    free(b);
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* A singular A whose range b is orthogonal to: GMRES's Krylov space becomes invariant (a happy
 * breakdown) with the residual estimate still ||b||.  No restart can do better from there: a
 * breakdown, at the iteration it happens.  It had been taken for recurrence drift, restarted ten
 * times and reported as stagnation, "the tracked residual 1.414e+00 meets the tolerance 1.414e-08". */
static void test_gmres_singular(void)
{
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        trip T = {0};
        trip_add(&T, 0, 0, 1.0, 0.0);
        trip_add(&T, 1, 0, 1.0, 0.0); /* A = [1 0; 1 0]: its range is span{(1, 1)} */
        sps_matrix A = trip_matrix(&T, 2, 2, t);
        void *b = tu_xcalloc(2, sps_scalar_size(t));
        tu_put(t, b, 0, 1.0, 0.0);
        tu_put(t, b, 1, -1.0, 0.0); /* b orthogonal to the range: x = 0 is a least-squares solution */
        for (int pi = 0; pi < 2; pi++) {
            sps_operator op = NULL;
            sps_precond P = NULL;
            sps_solver s = NULL;
            sps_vector vb = NULL, vx = NULL;
            sps_result res;
            TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
            TU_OK(g_ctx, sps_precond_create_by_name(A, pc_names[pi], &P)); /* jacobi: a_22 = 0 taken as 1 */
            TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_GMRES, &s));
            TU_OK(g_ctx, sps_solver_set_operator(s, op));
            TU_OK(g_ctx, sps_solver_set_precond(s, P));
            TU_OK(g_ctx, sps_vector_from_host(g_ctx, 2, t, b, &vb));
            TU_OK(g_ctx, sps_vector_create(g_ctx, 2, t, &vx));
            sps_context_clear_error(g_ctx);
            const sps_status st = sps_solver_solve(s, vb, vx, &res);
            TU_CHECK(st == SPS_ERR_NOT_CONVERGED && res.reason == SPS_REASON_STAGNATION && res.iterations <= 2,
                     "gmres singular %s %s: %s %s after %d its (%s)", sps_scalar_name(t), pc_names[pi],
                     sps_status_name(st), sps_reason_name(res.reason), res.iterations, sps_context_error(g_ctx));
            TU_CHECK(strstr(sps_context_error(g_ctx), "invariant") != NULL, "gmres singular %s %s: message %s",
                     sps_scalar_name(t), pc_names[pi], sps_context_error(g_ctx));
            TU_CHECK(res.history_len == res.iterations + 1 && fabs(res.relative_residual - 1.0) <= 1e-3,
                     "gmres singular %s %s: history %d for %d its, relative residual %g", sps_scalar_name(t),
                     pc_names[pi], res.history_len, res.iterations, res.relative_residual);
            sps_vector_destroy(vb);
            sps_vector_destroy(vx);
            sps_solver_destroy(s);
            sps_precond_destroy(P);
            sps_operator_destroy(op);
        }
        free(b);
        sps_matrix_destroy(A);
    }
}

/* ------------------------------------------------------------------ arguments */
static void test_arguments(void)
{
    sps_context ctx2 = NULL;
    TU_OK(NULL, sps_context_create(&ctx2, SPS_BACKEND_CPU, 0));
    sps_matrix A = make_matrix(M_POISSON, SPS_F64), R = NULL, A2 = NULL;
    trip T = {0};
    for (int i = 0; i < 4; i++) trip_add(&T, i, i, 1.0 + i, 0);
    trip_add(&T, 4, 3, 1.0, 0);
    R = trip_matrix(&T, 5, 4, SPS_F64);
    TU_OK(ctx2, sps_matrix_generate(ctx2, "poisson2d:20", SPS_F64, &A2));
    sps_operator op = NULL, opR = NULL, op2 = NULL;
    TU_OK(g_ctx, sps_operator_from_matrix(A, &op));
    TU_OK(g_ctx, sps_operator_from_matrix(R, &opR));
    TU_OK(ctx2, sps_operator_from_matrix(A2, &op2));
    sps_solver s = NULL;
    sps_precond P = NULL;

    TU_CHECK(sps_solver_create_by_name(g_ctx, "minres", &s) == SPS_ERR_ARG && !s, "unknown solver name");
    TU_CHECK(strstr(sps_context_error(g_ctx), "cg, bicgstab, gmres") != NULL, "unknown solver lists: %s",
             sps_context_error(g_ctx));
    TU_CHECK(strcmp(sps_solver_list(), "cg, bicgstab, gmres") == 0, "solver list %s", sps_solver_list());
    TU_CHECK(sps_solver_create(g_ctx, (sps_solver_type)7, &s) == SPS_ERR_ARG, "bad solver type");
    TU_CHECK(sps_solver_create(NULL, SPS_SOLVER_CG, &s) == SPS_ERR_ARG, "NULL context");
    TU_CHECK(sps_solver_create(g_ctx, SPS_SOLVER_CG, NULL) == SPS_ERR_ARG, "NULL output");
    for (int i = 0; i < 3; i++) {
        TU_OK(g_ctx, sps_solver_create(g_ctx, (sps_solver_type)i, &s));
        TU_CHECK(strcmp(sps_solver_name(s), solver_names[i]) == 0, "solver name %s", sps_solver_name(s));
        sps_solver_destroy(s);
    }
    TU_OK(g_ctx, sps_solver_create(g_ctx, SPS_SOLVER_CG, &s));
    sps_vector b = NULL, x = NULL, bs = NULL, bf = NULL, b2 = NULL;
    TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &b));
    TU_OK(g_ctx, sps_vector_fill(b, &(double){1.0}));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F64, &x));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 399, SPS_F64, &bs));
    TU_OK(g_ctx, sps_vector_create(g_ctx, 400, SPS_F32, &bf));
    TU_OK(ctx2, sps_vector_create(ctx2, 400, SPS_F64, &b2));
    sps_result res;

    TU_CHECK(sps_solver_solve(s, b, x, &res) == SPS_ERR_ARG, "solve without operator");
    TU_CHECK(strstr(sps_context_error(g_ctx), "no operator") != NULL, "message: %s", sps_context_error(g_ctx));
    TU_CHECK(sps_solver_set_operator(s, opR) == SPS_ERR_ARG, "non-square operator");
    TU_CHECK(strstr(sps_context_error(g_ctx), "5 x 4") != NULL, "non-square message: %s", sps_context_error(g_ctx));
    TU_CHECK(sps_solver_set_operator(s, op2) == SPS_ERR_ARG, "operator of another context");
    TU_CHECK(sps_solver_set_operator(s, NULL) == SPS_ERR_ARG, "NULL operator");
    TU_OK(g_ctx, sps_solver_set_operator(s, op));
    TU_CHECK(sps_solver_solve(s, bs, x, &res) == SPS_ERR_ARG, "b size mismatch");
    TU_CHECK(strstr(sps_context_error(g_ctx), "399") != NULL, "size message: %s", sps_context_error(g_ctx));
    TU_CHECK(sps_solver_solve(s, b, bs, &res) == SPS_ERR_ARG, "x size mismatch");
    TU_CHECK(sps_solver_solve(s, bf, x, &res) == SPS_ERR_ARG, "b type mismatch");
    TU_CHECK(strstr(sps_context_error(g_ctx), "f32") != NULL, "type message: %s", sps_context_error(g_ctx));
    TU_CHECK(sps_solver_solve(s, b2, x, &res) == SPS_ERR_ARG, "b in another context");
    TU_CHECK(strstr(sps_context_error(g_ctx), "context") != NULL, "context message: %s", sps_context_error(g_ctx));
    TU_CHECK(sps_solver_solve(s, b, b, &res) == SPS_ERR_ARG, "b == x");
    TU_CHECK(sps_solver_solve(s, NULL, x, &res) == SPS_ERR_ARG, "NULL b");
    TU_CHECK(sps_solver_solve(NULL, b, x, &res) == SPS_ERR_ARG, "NULL solver");
    TU_CHECK(sps_solver_set_tolerances(s, -1, 0, 10) == SPS_ERR_ARG, "negative rtol");
    TU_CHECK(sps_solver_set_tolerances(s, 1e-8, NAN, 10) == SPS_ERR_ARG, "NaN atol");
    TU_CHECK(sps_solver_set_tolerances(s, 1e-8, 0, -1) == SPS_ERR_ARG, "negative maxit");
    TU_CHECK(sps_solver_set_restart(s, 0) == SPS_ERR_ARG, "restart 0");
    /* a preconditioner of another size or type */
    sps_matrix Af = make_matrix(M_POISSON, SPS_F32);
    TU_OK(g_ctx, sps_precond_create(Af, SPS_PRECOND_JACOBI, &P));
    TU_OK(g_ctx, sps_solver_set_precond(s, P));
    TU_CHECK(sps_solver_solve(s, b, x, &res) == SPS_ERR_ARG, "preconditioner type mismatch");
    TU_CHECK(strstr(sps_context_error(g_ctx), "preconditioner") != NULL, "message: %s", sps_context_error(g_ctx));
    TU_OK(g_ctx, sps_solver_set_precond(s, NULL));
    /* atol stops before rtol would: reason converged_atol */
    TU_OK(g_ctx, sps_solver_set_tolerances(s, 0.0, 1e-3, 1000));
    TU_OK(g_ctx, sps_solver_solve(s, b, x, &res));
    TU_CHECK(res.reason == SPS_REASON_CONVERGED_ATOL && res.residual_norm <= 1e-3, "atol: %s %g",
             sps_reason_name(res.reason), res.residual_norm);
    TU_CHECK(res.time_solve >= 0 && res.time_setup >= 0, "timings");
    TU_OK(g_ctx, sps_solver_solve(s, b, x, NULL)); /* res may be NULL */
    /* the largest maxit: nothing sized by maxit overflows (UBSan) */
    TU_OK(g_ctx, sps_solver_set_tolerances(s, 1e-8, 0, INT_MAX));
    TU_OK(g_ctx, sps_vector_fill(x, &(double){0.0}));
    TU_OK(g_ctx, sps_solver_solve(s, b, x, &res));
    TU_CHECK(res.iterations > 0 && res.history_len == res.iterations + 1, "maxit INT_MAX: %d its", res.iterations);
    TU_CHECK(strcmp(sps_reason_name(SPS_REASON_INDEFINITE), "indefinite") == 0, "reason name");
    TU_CHECK(strcmp(sps_reason_name(SPS_REASON_CONVERGED_RTOL), "converged_rtol") == 0, "reason name");

    sps_precond_destroy(P);
    sps_matrix_destroy(Af);
    sps_vector_destroy(b);
    sps_vector_destroy(x);
    sps_vector_destroy(bs);
    sps_vector_destroy(bf);
    sps_vector_destroy(b2);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_operator_destroy(opR);
    sps_operator_destroy(op2);
    sps_matrix_destroy(A);
    sps_matrix_destroy(R);
    sps_matrix_destroy(A2);
    sps_context_destroy(ctx2);
    sps_solver_destroy(NULL);
}

/* ------------------------------------------------------------------ fused kernels */
typedef struct {
    long double re, im;
} lc;
static lc lc_make(long double re, long double im)
{
    lc c = {re, im};
    return c;
}
static lc lc_add(lc a, lc b) { return lc_make(a.re + b.re, a.im + b.im); }
static lc lc_sub(lc a, lc b) { return lc_make(a.re - b.re, a.im - b.im); }
static lc lc_mul(lc a, lc b) { return lc_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static lc lc_conj(lc a) { return lc_make(a.re, -a.im); }
static lc lc_div(lc a, lc b)
{
    long double d = b.re * b.re + b.im * b.im;
    return lc_make((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);
}
static long double lc_abs(lc a) { return sqrtl(a.re * a.re + a.im * a.im); }
static lc ld(sps_scalar t, const void *v, size_t i)
{
    double re, im;
    tu_get(t, v, i, &re, &im);
    return lc_make(re, im);
}
static lc slot_lc(const sps_cplx *s, int i) { return lc_make(s[i].re, s[i].im); }
/* the coefficient as the kernel applies it: rounded to t */
static lc as_t(sps_scalar t, lc c)
{
    if (!cplx(t)) c.im = 0;
    if (single(t)) return lc_make((float)c.re, (float)c.im);
    return lc_make((double)c.re, (double)c.im);
}
/* max |a_i - ref_i| <= tol * scale */
static int close_vec(sps_scalar t, size_t n, const void *a, const lc *ref, long double scale)
{
    const long double tol = 8 * tu_eps(t) * scale;
    for (size_t i = 0; i < n; i++)
        if (!(lc_abs(lc_sub(ld(t, a, i), ref[i])) <= tol)) return 0;
    return 1;
}
static int close_sc(sps_scalar t, sps_cplx got, lc ref, long double scale, size_t n)
{
    return lc_abs(lc_sub(lc_make(got.re, got.im), ref)) <= 8 * tu_eps(t) * sqrtl((long double)n + 1) * scale;
}

static void random_slots(sps_cplx *s, int k, sps_scalar t)
{
    for (int i = 0; i < k; i++) {
        s[i].re = tu_rng_range(&g_rng, 0.5, 2.0) * (tu_rng_uniform(&g_rng) < 0.5 ? -1 : 1);
        s[i].im = cplx(t) ? tu_rng_range(&g_rng, -1, 1) : 0.0;
    }
}

static void test_kernels(void)
{
    const sps_index sizes[3] = {1, 37, 10007};
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        const sps_vec_kernels *K = sps_kvec(g_ctx, t);
        const size_t ss = sps_scalar_size(t);
        for (int zi = 0; zi < 3; zi++) {
            const sps_index n = sizes[zi];
            const size_t N = (size_t)n;
            void *v[8], *c[8];
            for (int i = 0; i < 8; i++) {
                v[i] = tu_xcalloc(N, ss);
                c[i] = tu_xcalloc(N, ss);
                tu_fill_random(&g_rng, t, N, v[i]);
            }
            lc *ref = tu_xcalloc(N, sizeof *ref), *ref2 = tu_xcalloc(N, sizeof *ref2);
            sps_cplx sl[10];
            const char *tn = sps_scalar_name(t);

            /* cg_step: alpha = s[0]/s[1] with Re s[1] > 0 */
            random_slots(sl, 10, t);
            sl[0].re = fabs(sl[0].re);
            sl[1].re = fabs(sl[1].re);
            sl[2] = sps_cplx_make(NAN, NAN);
            const sps_cg_slots cgs = {0, 1, 2, 8, 9}; /* tol2 = 0, stop off */
            sl[8] = sl[9] = sps_cplx_make(0.0, 0.0);
            for (int i = 0; i < 4; i++) memcpy(c[i], v[i], N * ss);
            lc al = as_t(t, lc_div(slot_lc(sl, 0), slot_lc(sl, 1)));
            long double rr = 0;
            for (size_t i = 0; i < N; i++) {
                ref[i] = lc_add(ld(t, v[2], i), lc_mul(al, ld(t, v[0], i)));
                ref2[i] = lc_sub(ld(t, v[3], i), lc_mul(al, ld(t, v[1], i)));
                rr += ref2[i].re * ref2[i].re + ref2[i].im * ref2[i].im;
            }
            TU_OK(g_ctx, K->cg_step(sps_ex(g_ctx), n, sl, cgs, c[0], c[1], c[2], c[3]));
            TU_CHECK(close_vec(t, N, c[2], ref, 4) && close_vec(t, N, c[3], ref2, 4), "cg_step %s n=%d vectors", tn,
                     (int)n);
            TU_CHECK(close_sc(t, sl[2], lc_make(rr, 0), 4 * rr + 1, N) && sl[2].im == 0, "cg_step %s n=%d rr %g vs %Lg",
                     tn, (int)n, sl[2].re, rr);
            TU_CHECK(sl[9].re == (rr > 0 ? 0.0 : 1.0), "cg_step %s n=%d: stop %g with rr %Lg > tol2 = 0", tn, (int)n,
                     sl[9].re, rr);
            /* converged: tol2 above rr sets stop; a stopped step then writes nothing at all */
            for (int i = 0; i < 4; i++) memcpy(c[i], v[i], N * ss);
            sl[8] = sps_cplx_make(4 * (double)rr + 1, 0.0);
            TU_OK(g_ctx, K->cg_step(sps_ex(g_ctx), n, sl, cgs, c[0], c[1], c[2], c[3]));
            TU_CHECK(sl[9].re == 1.0 && close_vec(t, N, c[2], ref, 4), "cg_step %s n=%d: converged sets stop", tn, (int)n);
            for (int i = 0; i < 4; i++) memcpy(c[i], v[i], N * ss);
            sl[2] = sps_cplx_make(NAN, NAN);
            TU_OK(g_ctx, K->cg_step(sps_ex(g_ctx), n, sl, cgs, c[0], c[1], c[2], c[3]));
            TU_CHECK(isnan(sl[2].re) && !memcmp(c[2], v[2], N * ss) && !memcmp(c[3], v[3], N * ss),
                     "cg_step %s n=%d: stopped on entry writes nothing", tn, (int)n);
            sl[8] = sl[9] = sps_cplx_make(0.0, 0.0);
            /* guard: p'q <= 0 leaves x, r untouched and flags rr = -1 */
            for (int i = 0; i < 4; i++) memcpy(c[i], v[i], N * ss);
            sl[1].re = -fabs(sl[1].re);
            TU_OK(g_ctx, K->cg_step(sps_ex(g_ctx), n, sl, cgs, c[0], c[1], c[2], c[3]));
            TU_CHECK(sl[2].re == -1.0 && sl[9].re == 1.0 && !memcmp(c[2], v[2], N * ss) &&
                         !memcmp(c[3], v[3], N * ss),
                     "cg_step %s guard pq <= 0", tn);
            sl[1] = sps_cplx_make(0.0, 0.0);
            sl[9] = sps_cplx_make(0.0, 0.0);
            TU_OK(g_ctx, K->cg_step(sps_ex(g_ctx), n, sl, cgs, c[0], c[1], c[2], c[3]));
            TU_CHECK(sl[2].re == -1.0 && !memcmp(c[2], v[2], N * ss), "cg_step %s guard pq = 0", tn);
            /* guard: rho <= 0 (an indefinite preconditioner) */
            sl[1] = sps_cplx_make(1.0, 0.0);
            sl[0].re = -sl[0].re;
            sl[9] = sps_cplx_make(0.0, 0.0);
            TU_OK(g_ctx, K->cg_step(sps_ex(g_ctx), n, sl, cgs, c[0], c[1], c[2], c[3]));
            TU_CHECK(sl[2].re == -1.0 && sl[9].re == 1.0 && !memcmp(c[2], v[2], N * ss), "cg_step %s guard rho <= 0",
                     tn);

            /* bicgstab_p: p = r + beta (p - omega v), beta = rho tt / (rv ts), omega = ts / tt */
            random_slots(sl, 10, t);
            sps_bicgstab_slots ks = {0, 1, 2, 3, 4, 5, -1, 0, 0, 0};
            memcpy(c[2], v[2], N * ss);
            lc om = as_t(t, lc_div(slot_lc(sl, 2), slot_lc(sl, 3)));
            lc be = as_t(t, lc_mul(lc_div(slot_lc(sl, 0), slot_lc(sl, 1)), lc_div(slot_lc(sl, 3), slot_lc(sl, 2))));
            for (size_t i = 0; i < N; i++)
                ref[i] = lc_add(ld(t, v[0], i), lc_mul(be, lc_sub(ld(t, v[2], i), lc_mul(om, ld(t, v[1], i)))));
            TU_OK(g_ctx, K->bicgstab_p(sps_ex(g_ctx), n, sl, ks, v[0], v[1], c[2]));
            TU_CHECK(close_vec(t, N, c[2], ref, 4 * (1 + lc_abs(be)) * (1 + lc_abs(om))), "bicgstab_p %s n=%d", tn,
                     (int)n);

            /* waxpy_s: w = x + c y (w poisoned) */
            tu_fill_nan(t, N, c[4]);
            lc cw = as_t(t, lc_mul(lc_make(-1, 0), lc_div(slot_lc(sl, 6), slot_lc(sl, 7))));
            for (size_t i = 0; i < N; i++) ref[i] = lc_add(ld(t, v[0], i), lc_mul(cw, ld(t, v[1], i)));
            TU_OK(g_ctx, K->waxpy_s(sps_ex(g_ctx), n, v[0], sl, (sps_scoef){-1.0, 6, 7}, v[1], c[4]));
            TU_CHECK(close_vec(t, N, c[4], ref, 4 * (1 + lc_abs(cw))), "waxpy_s %s n=%d", tn, (int)n);

            /* dot2: x^H y and x^H x (slots poisoned) */
            sl[8] = sl[9] = sps_cplx_make(NAN, NAN);
            lc dxy = lc_make(0, 0);
            long double dxx = 0, sxy = 0;
            for (size_t i = 0; i < N; i++) {
                dxy = lc_add(dxy, lc_mul(lc_conj(ld(t, v[0], i)), ld(t, v[1], i)));
                dxx += lc_abs(ld(t, v[0], i)) * lc_abs(ld(t, v[0], i));
                sxy += lc_abs(ld(t, v[0], i)) * lc_abs(ld(t, v[1], i));
            }
            TU_OK(g_ctx, K->dot2(sps_ex(g_ctx), n, v[0], v[1], sl, 8, 9));
            TU_CHECK(close_sc(SPS_F64, sl[8], dxy, sxy, N) && close_sc(SPS_F64, sl[9], lc_make(dxx, 0), dxx, N),
                     "dot2 %s n=%d", tn, (int)n);

            /* bicgstab_xr: x += alpha ph + omega sh; r = s - omega t (r poisoned); rr, rho_new */
            random_slots(sl, 10, t);
            sl[4] = sl[5] = sps_cplx_make(NAN, NAN);
            memcpy(c[5], v[5], N * ss);
            tu_fill_nan(t, N, c[6]);
            lc alx = as_t(t, lc_div(slot_lc(sl, 0), slot_lc(sl, 1))),
               omx = as_t(t, lc_div(slot_lc(sl, 2), slot_lc(sl, 3)));
            long double rrx = 0, srh = 0;
            lc rho = lc_make(0, 0);
            for (size_t i = 0; i < N; i++) {
                ref[i] = lc_add(ld(t, v[5], i), lc_add(lc_mul(alx, ld(t, v[1], i)), lc_mul(omx, ld(t, v[2], i))));
                ref2[i] = lc_sub(ld(t, v[3], i), lc_mul(omx, ld(t, v[4], i)));
                rrx += lc_abs(ref2[i]) * lc_abs(ref2[i]);
                rho = lc_add(rho, lc_mul(lc_conj(ld(t, v[0], i)), ref2[i]));
                srh += lc_abs(ld(t, v[0], i)) * lc_abs(ref2[i]);
            }
            TU_OK(g_ctx, K->bicgstab_xr(sps_ex(g_ctx), n, sl, ks, v[0], v[1], v[2], v[3], v[4], c[5], c[6]));
            const long double sc = 4 * (1 + lc_abs(alx) + lc_abs(omx));
            TU_CHECK(close_vec(t, N, c[5], ref, sc) && close_vec(t, N, c[6], ref2, sc), "bicgstab_xr %s n=%d vectors",
                     tn, (int)n);
            TU_CHECK(close_sc(t, sl[4], lc_make(rrx, 0), sc * (rrx + 1), N) &&
                         close_sc(t, sl[5], rho, sc * (srh + 1), N),
                     "bicgstab_xr %s n=%d rr %g/%Lg rho %g/%Lg", tn, (int)n, sl[4].re, rrx, sl[5].re, rho.re);
            /* t = 0 case: omega = 0 (tt = 0): r = s, x += alpha ph */
            sl[3] = sps_cplx_make(0, 0);
            memcpy(c[5], v[5], N * ss);
            tu_fill_nan(t, N, c[6]);
            TU_OK(g_ctx, K->bicgstab_xr(sps_ex(g_ctx), n, sl, ks, v[0], v[1], v[2], v[3], v[4], c[5], c[6]));
            TU_CHECK(!memcmp(c[6], v[3], N * ss), "bicgstab_xr %s tt = 0: r = s", tn);
            /* guard: rv = 0 -> nothing written, rr = -1 */
            sl[1] = sps_cplx_make(0, 0);
            memcpy(c[5], v[5], N * ss);
            memcpy(c[6], v[6], N * ss);
            TU_OK(g_ctx, K->bicgstab_xr(sps_ex(g_ctx), n, sl, ks, v[0], v[1], v[2], v[3], v[4], c[5], c[6]));
            TU_CHECK(sl[4].re == -1.0 && !memcmp(c[5], v[5], N * ss) && !memcmp(c[6], v[6], N * ss),
                     "bicgstab_xr %s guard rv = 0", tn);

            /* axpy_dot_s: y += c x; slots[out] = z^H y, with z another vector and z = y */
            random_slots(sl, 10, t);
            for (int zc = 0; zc < 2; zc++) {
                memcpy(c[1], v[1], N * ss);
                sl[9] = sps_cplx_make(NAN, NAN);
                lc ca = as_t(t, lc_div(slot_lc(sl, 0), slot_lc(sl, 1)));
                lc d = lc_make(0, 0);
                long double sd = 0;
                for (size_t i = 0; i < N; i++) {
                    ref[i] = lc_add(ld(t, v[1], i), lc_mul(ca, ld(t, v[0], i)));
                    lc zi = zc ? ref[i] : ld(t, v[2], i);
                    d = lc_add(d, lc_mul(lc_conj(zi), ref[i]));
                    sd += lc_abs(zi) * lc_abs(ref[i]);
                }
                TU_OK(g_ctx, K->axpy_dot_s(sps_ex(g_ctx), n, sl, (sps_scoef){1.0, 0, 1}, v[0], c[1], zc ? c[1] : v[2], 9));
                TU_CHECK(close_vec(t, N, c[1], ref, 4 * (1 + lc_abs(ca))) &&
                             close_sc(t, sl[9], d, 4 * (1 + lc_abs(ca)) * (sd + 1), N),
                         "axpy_dot_s %s n=%d z%s", tn, (int)n, zc ? "=y" : "");
            }
            /* scale_s: x = c x with c = 1 / slots[3] */
            memcpy(c[0], v[0], N * ss);
            lc cs = as_t(t, lc_div(lc_make(1, 0), slot_lc(sl, 3)));
            for (size_t i = 0; i < N; i++) ref[i] = lc_mul(cs, ld(t, v[0], i));
            TU_OK(g_ctx, K->scale_s(sps_ex(g_ctx), n, sl, (sps_scoef){1.0, -1, 3}, c[0]));
            TU_CHECK(close_vec(t, N, c[0], ref, 2 * (1 + lc_abs(cs))), "scale_s %s n=%d", tn, (int)n);

            for (int i = 0; i < 8; i++) {
                free(v[i]);
                free(c[i]);
            }
            free(ref);
            free(ref2);
        }
    }
}

/* The fused reductions give the same bits whatever the number of threads
 * (fixed chunks, ARCHITECTURE §5): n large enough for several chunks. */
static void test_kernel_determinism(void)
{
    const sps_index n = 100003;
    const int maxthreads = omp_get_max_threads();
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        const sps_vec_kernels *K = sps_kvec(g_ctx, t);
        const size_t ss = sps_scalar_size(t), N = (size_t)n;
        void *v[6], *x = tu_xcalloc(N, ss), *r = tu_xcalloc(N, ss);
        for (int i = 0; i < 6; i++) {
            v[i] = tu_xcalloc(N, ss);
            tu_fill_random(&g_rng, t, N, v[i]);
        }
        sps_cplx base[10], got[3][10];
        random_slots(base, 10, t);
        base[0].re = fabs(base[0].re);
        base[1].re = fabs(base[1].re);
        base[8] = base[9] = sps_cplx_make(0.0, 0.0); /* cg_step: tol2 = 0, not stopped */
        for (int th = 1; th <= 3; th++) {
            omp_set_num_threads(th);
            sps_cplx *sl = got[th - 1];
            memcpy(sl, base, sizeof base);
            memcpy(x, v[4], N * ss);
            memcpy(r, v[5], N * ss);
            sps_bicgstab_slots ks = {0, 1, 2, 3, 6, 7, -1, 0, 0, 0};
            K->cg_step(sps_ex(g_ctx), n, sl, (sps_cg_slots){0, 1, 4, 8, 9}, v[0], v[1], x, r);
            K->dot2(sps_ex(g_ctx), n, v[2], v[3], sl, 5, 5); /* xx overwrites xy: checks the order too */
            K->bicgstab_xr(sps_ex(g_ctx), n, sl, ks, v[0], v[1], v[2], v[3], v[4], x, r);
            K->axpy_dot_s(sps_ex(g_ctx), n, sl, (sps_scoef){1.0, 0, 1}, v[0], x, r, 2);
        }
        omp_set_num_threads(maxthreads);
        TU_CHECK(!memcmp(got[0], got[1], sizeof got[0]) && !memcmp(got[0], got[2], sizeof got[0]),
                 "fused reductions %s differ with 1/2/3 threads", sps_scalar_name(t));
        for (int i = 0; i < 6; i++) free(v[i]);
        free(x);
        free(r);
    }
}

/* ------------------------------------------------------------------ real matrices */
static void real_case(const char *dir, const char *rel, const char *solver, const char *pc, int maxit)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    sps_matrix A = NULL;
    if (!TU_OK(g_ctx, sps_matrix_read_mtx(g_ctx, path, SPS_F64, &A))) return;
    dcsr D = export_dcsr(A);
    outcome o = run_solve(A, &D, solver, pc, 1e-8, maxit, 0, NULL, NULL, NULL);
    TU_CHECK(o.st == SPS_OK && o.relres <= 2e-8, "%s %s/%s: %s, %d its, relres %.3e: %s", rel, solver, pc,
             sps_status_name(o.st), o.its, o.relres, o.st ? sps_context_error(g_ctx) : "");
    printf("  %-22s %-9s %-7s %5d iterations, ||b-Ax||/||b|| = %.2e\n", rel, solver, pc, o.its, o.relres);
    dcsr_free(&D);
    sps_matrix_destroy(A);
}

static void test_real_matrices(const char *dir)
{
    real_case(dir, "spd/nos4.mtx.gz", "cg", "none", 20000);
    real_case(dir, "spd/bcsstk14.mtx.gz", "cg", "jacobi", 20000);
    real_case(dir, "spd/1138_bus.mtx.gz", "cg", "jacobi", 20000);
    /* BiCGSTAB's path is erratic on sherman1 and orsirr_1 (rho = rhat'r can cancel
     * to exactly 0 in a stagnation phase, a breakdown by our rule): it gets the
     * nonsymmetric matrices it handles steadily, GMRES the harder ones */
    const char *bi[3] = {"nonsym/sherman4.mtx.gz", "nonsym/jpwh_991.mtx.gz", "nonsym/pde900.mtx.gz"};
    const char *gm[3] = {"nonsym/sherman1.mtx.gz", "nonsym/orsirr_1.mtx.gz", "nonsym/pde900.mtx.gz"};
    for (int i = 0; i < 3; i++) real_case(dir, bi[i], "bicgstab", "jacobi", 20000);
    for (int i = 0; i < 3; i++) real_case(dir, gm[i], "gmres", "jacobi", 20000);
}

int main(int argc, char **argv)
{
    if (sps_context_create(&g_ctx, SPS_BACKEND_CPU, 0) != SPS_OK) {
        fprintf(stderr, "no CPU context\n");
        return 1;
    }
    tu_rng_seed(&g_rng, 20240611);
    test_kernels();
    test_kernel_determinism();
    test_matrix_grid();
    test_initial_guess();
    test_zero_rhs();
    test_extreme_rhs();
    test_extreme_x0();
    test_reentrant_monitor();
    test_shell_failure();
    test_rtol_zero();
    test_range_ends();
    test_maxit();
    test_indefinite();
    test_bicgstab_breakdown();
    test_nan_rhs();
    test_shell();
    test_monitor();
    test_norm_inf();
    test_gmres_restart();
    test_gmres_singular();
    test_arguments();
    printf("poisson2d:20 f64 iterations (rtol 1e-8):\n");
    for (int si = 0; si < 3; si++)
        printf("  %-9s none %4d, jacobi %4d\n", solver_names[si], g_poisson_its[si][0], g_poisson_its[si][1]);
    const char *dir = tu_matrix_dir(argc, argv, 1);
    if (dir) {
        printf("SuiteSparse matrices from %s:\n", dir);
        test_real_matrices(dir);
    } else {
        printf("SuiteSparse part skipped (no SPS_MATRIX_DIR)\n");
    }
    sps_context_destroy(g_ctx);
    return tu_finish();
}
