/* Compound entries on the CPU backend (issue 20): b x b blocks (b = 2..8; f32, f64,
 * c32, c64) and quaternions (q32, q64) in the bcsr format, AoS and SoA.
 *
 * - SpMV and SpMV^T of every (entry, scalar, layout) on random shapes (empty rows,
 *   rectangular, one large enough for the threaded paths) against the long double
 *   product of the scalar expansion (tu_spmv_check: alpha/beta random, beta = 0 with
 *   y poisoned by NaN) and against the library's scalar CSR of that expansion;
 * - export round trip, COO duplicates summed, refused input with its message;
 * - the kernel tables (b = 3, 4 specialised, complex quaternions absent; bcsr's and the
 *   padded layouts' kernels);
 * - a quaternion Hermitian positive definite system (a connection Laplacian of
 *   random unit quaternions on a grid) and a 3x3-block SPD one solved natively and
 *   as their scalar expansions: CG takes the same iterations (+-1) and gives the
 *   same solution; BiCGSTAB, GMRES and Jacobi run unchanged on them.
 * The references and the systems are tests/compound_ref.h's (shared with
 * test_compound_padded.c: bell, bsell). */
#include "compound_ref.h"

#include "core/internal.h"
#include "kernels/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;

/* A (compound) and S (the scalar CSR of its expansion) give the same y = A x within rounding. */
static double vs_scalar_csr(sps_matrix A, const tu_csr *h, sps_op_mode mode)
{
    const sps_scalar t = h->info.scalar;
    sps_matrix S = NULL;
    if (sps_matrix_from_csr(ctx, h->info.rows, h->info.cols, h->rowptr, h->col, h->val, t, &S) != SPS_OK) return INFINITY;
    const int nin = mode == SPS_OP_N ? h->info.cols : h->info.rows, nout = mode == SPS_OP_N ? h->info.rows : h->info.cols;
    void *ya, *ys;
    const int ok = cr_apply_both(ctx, &rng, A, S, mode, t, nin, nout, 0, &ya, &ys);
    const double err = ok ? tu_relerr(t, (size_t)nout, ya, ys) : INFINITY;
    free(ya);
    free(ys);
    sps_matrix_destroy(S);
    return err;
}

/* SpMV / SpMV^T of entry e, type t, layout soa on shape s. */
static void check_products(sps_entry_desc e, sps_scalar t, int soa, const tu_shape *s, const void *unused)
{
    (void)unused;
    const int nv = sps_entry_values(e);
    const size_t vbytes = (size_t)s->nnz * nv * sps_scalar_size(t);
    void *val = tu_xcalloc(vbytes, 1);
    tu_fill_random(&rng, t, (size_t)s->nnz * nv, val);
    char what[96];
    snprintf(what, sizeof what, "%s %s %s %s (%dx%d, nnz %lld)", sps_entry_name(e), sps_scalar_name(t),
             soa ? "soa" : "aos", s->name, s->n, s->m, (long long)s->nnz);
    sps_matrix A0 = NULL, A = NULL;
    if (!TU_OK(ctx, sps_matrix_from_csr_entries(ctx, s->n, s->m, s->rowptr, s->col, val, e, t, &A0))) {
        free(val);
        return;
    }
    A = A0;
    if (soa) {
        sps_options o = tu_fopts(SPS_FMT_BCSR, "entry-layout", "soa", NULL);
        TU_OK(ctx, sps_matrix_convert(A0, SPS_FMT_BCSR, o, &A));
        sps_options_destroy(o);
    }
    sps_matrix_info_t info;
    const int d = sps_entry_dim(e);
    TU_CHECK(A && sps_matrix_info(A, &info) == SPS_OK && info.entry.kind == e.kind &&
                 (e.kind != SPS_ENTRY_BLOCK || info.entry.block == e.block) && info.rows == s->n &&
                 info.cols == s->m && info.nnz == s->nnz && info.format == SPS_FMT_BCSR &&
                 info.bytes == ((size_t)s->n + 1 + (size_t)s->nnz) * 4 + vbytes,
             "%s: info (rows %d nnz %lld bytes %zu)", what, (int)info.rows, (long long)info.nnz, info.bytes);
    TU_CHECK(A && cr_export_equal(A, s->n, s->nnz, s->rowptr, s->col, val, vbytes), "%s: export round trip", what);
    sps_operator op = NULL;
    sps_index on = -1, om = -1;
    TU_CHECK(A && sps_operator_from_matrix(A, &op) == SPS_OK && sps_operator_size(op, &on, &om) == SPS_OK &&
                 on == s->n * d && om == s->m * d,
             "%s: operator %d x %d", what, (int)on, (int)om);
    sps_operator_destroy(op);
    tu_csr h = cr_expand(e, t, s->n, s->m, s->rowptr, s->col, val);
    for (int mode = SPS_OP_N; A && mode <= SPS_OP_T; mode++) {
        for (int ab = 0; ab < TU_AB_COUNT; ab++) {
            double worst;
            TU_CHECK(tu_spmv_check(ctx, &h, A, (sps_op_mode)mode, ab, tu_rng_u64(&rng), &worst, NULL),
                     "%s: %s, %s: worst error %.3g of the bound's scale", what, mode ? "SpMV^T" : "SpMV",
                     tu_ab_name[ab], worst);
        }
        const double err = vs_scalar_csr(A, &h, (sps_op_mode)mode);
        TU_CHECK(err <= 16 * tu_eps(t), "%s: %s vs the scalar CSR of the expansion: %.3g", what,
                 mode ? "SpMV^T" : "SpMV", err);
    }
    tu_csr_free(&h);
    if (A != A0) sps_matrix_destroy(A);
    sps_matrix_destroy(A0);
    free(val);
}

static void test_products(void)
{
    cr_for_each_product(&rng, check_products, NULL);
    /* enough entries for the threaded row loop and several SpMV^T scatter buffers */
    tu_shape big = cr_random_shape(&rng, "big", 10000, 8000, 30, 0);
    for (int soa = 0; soa <= 1; soa++) {
        check_products(sps_entry_quaternion(), SPS_F64, soa, &big, NULL);
        check_products(sps_entry_block(2), SPS_F64, soa, &big, NULL);
    }
    tu_shape_free(&big);
}

/* COO of compound entries: any order, duplicates summed member by member (values k/8:
 * the sums are exact, so the export is compared bit for bit). */
static void test_coo(sps_entry_desc e, sps_scalar t)
{
    tu_shape s = cr_random_shape(&rng, "coo", 30, 20, 5, 4);
    const int nv = sps_entry_values(e), cplx = sps_scalar_is_complex(t);
    const size_t ss = sps_scalar_size(t), nvals = (size_t)s.nnz * nv;
    void *want = tu_xcalloc(nvals, ss), *tv = tu_xcalloc(2 * nvals, ss);
    sps_index *row = tu_xcalloc(2 * (size_t)s.nnz, sizeof *row), *col = tu_xcalloc(2 * (size_t)s.nnz, sizeof *col);
    int64_t *perm = tu_xcalloc(2 * (size_t)s.nnz, sizeof *perm);
    for (int64_t k = 0; k < 2 * s.nnz; k++) perm[k] = k;
    for (int64_t k = 2 * s.nnz - 1; k > 0; k--) { /* shuffle the triplets */
        const int64_t j = (int64_t)(tu_rng_u64(&rng) % (uint64_t)(k + 1)), x = perm[k];
        perm[k] = perm[j];
        perm[j] = x;
    }
    for (int i = 0; i < s.n; i++)
        for (sps_index k = s.rowptr[i]; k < s.rowptr[i + 1]; k++)
            for (int half = 0; half < 2; half++) {
                const int64_t p = perm[2 * k + half];
                row[p] = i;
                col[p] = s.col[k];
                for (int q = 0; q < nv; q++) {
                    double re = (double)((int)(tu_rng_u64(&rng) % 129) - 64) / 8, im = cplx ? -re / 2 : 0;
                    tu_put(t, tv, (size_t)(p * nv + q), re, im);
                    double wr = 0, wi = 0;
                    if (half) tu_get(t, want, (size_t)(k * nv + q), &wr, &wi);
                    tu_put(t, want, (size_t)(k * nv + q), wr + re, wi + im);
                }
            }
    sps_matrix A = NULL;
    TU_OK(ctx, sps_matrix_from_coo_entries(ctx, s.n, s.m, 2 * s.nnz, row, col, tv, e, t, &A));
    TU_CHECK(A && cr_export_equal(A, s.n, s.nnz, s.rowptr, s.col, want, nvals * ss), "COO %s %s: duplicates summed",
             sps_entry_name(e), sps_scalar_name(t));
    sps_matrix_destroy(A);
    free(want);
    free(tv);
    free(row);
    free(col);
    free(perm);
    tu_shape_free(&s);
}

/* A call refused with status want and a message containing `text`, A left NULL. */
#define REFUSED(call, want, text)                                                                              \
    do {                                                                                                       \
        sps_matrix A_ = (sps_matrix)1;                                                                         \
        const sps_status st_ = call(&A_);                                                                      \
        TU_CHECK(st_ == (want) && A_ == NULL && strstr(sps_context_error(ctx), (text)),                        \
                 "%s: %s (%s), expected %s naming '%s'", #call, sps_status_name(st_), sps_context_error(ctx),     \
                 sps_status_name(want), (text));                                                               \
    } while (0)

static const sps_index g_rowptr[3] = {0, 2, 3}, g_col[3] = {0, 1, 1}, g_badcol[3] = {0, 2, 1};
static const double g_val[3 * 64] = {1, 2, 3, 4};
#define FROM_CSR(e, t, col, val) sps_matrix_from_csr_entries(ctx, 2, 2, g_rowptr, (col), (val), (e), (t), A)
static sps_status bad_block9(sps_matrix *A) { return FROM_CSR(sps_entry_block(9), SPS_F64, g_col, g_val); }
static sps_status bad_block1(sps_matrix *A) { return FROM_CSR(sps_entry_block(1), SPS_F64, g_col, g_val); }
static sps_status bad_cquat(sps_matrix *A) { return FROM_CSR(sps_entry_quaternion(), SPS_C64, g_col, g_val); }
static sps_status bad_nullcol(sps_matrix *A) { return FROM_CSR(sps_entry_block(3), SPS_F64, NULL, g_val); }
static sps_status bad_nullval(sps_matrix *A) { return FROM_CSR(sps_entry_quaternion(), SPS_F64, g_col, NULL); }
static sps_status bad_column(sps_matrix *A) { return FROM_CSR(sps_entry_block(2), SPS_F32, g_badcol, g_val); }
static sps_status bad_rowptr(sps_matrix *A)
{
    return sps_matrix_from_csr_entries(ctx, 2, 2, NULL, g_col, g_val, sps_entry_block(2), SPS_F64, A);
}
static sps_status bad_coo_row(sps_matrix *A)
{
    const sps_index row[2] = {0, 5}, col[2] = {0, 1};
    return sps_matrix_from_coo_entries(ctx, 2, 2, 2, row, col, g_val, sps_entry_quaternion(), SPS_F32, A);
}
static sps_status bad_nonfinite(sps_matrix *A)
{
    double v[8] = {1, 2, 3, 4, 5, 6, NAN, 8};
    const sps_index row[2] = {0, 1}, col[2] = {0, 1};
    return sps_matrix_from_coo_entries(ctx, 2, 2, 2, row, col, v, sps_entry_quaternion(), SPS_F64, A);
}

static void test_refusals(void)
{
    REFUSED(bad_block9, SPS_ERR_ARG, "2..8");
    REFUSED(bad_block1, SPS_ERR_ARG, "2..8");
    REFUSED(bad_cquat, SPS_ERR_ARG, "quaternion");
    REFUSED(bad_nullcol, SPS_ERR_ARG, "NULL");
    REFUSED(bad_nullval, SPS_ERR_ARG, "NULL");
    REFUSED(bad_rowptr, SPS_ERR_ARG, "NULL rowptr");
    REFUSED(bad_column, SPS_ERR_ARG, "column index 2 out of range");
    REFUSED(bad_coo_row, SPS_ERR_ARG, "row index 5 out of range");
    REFUSED(bad_nonfinite, SPS_ERR_NUMERIC, "not finite");
    /* formats hold one kind of entry: a compound matrix to CSR, a scalar one to bcsr */
    sps_matrix Q = NULL, B = (sps_matrix)1, S = NULL;
    TU_OK(ctx, sps_matrix_from_csr_entries(ctx, 2, 2, g_rowptr, g_col, g_val, sps_entry_quaternion(), SPS_F64, &Q));
    TU_CHECK(Q && sps_matrix_convert(Q, SPS_FMT_CSR, NULL, &B) == SPS_ERR_UNSUPPORTED && !B &&
                 strstr(sps_context_error(ctx), "quaternion entries are not stored"),
             "quaternion matrix to csr: %s", sps_context_error(ctx));
    /* a descriptor's block is ignored for quaternions and scalars (types.h): the matrix reports
       the canonical one, whatever the caller's descriptor held */
    for (int k = 0; k < 2; k++) {
        sps_matrix W = NULL;
        sps_matrix_info_t info;
        const sps_entry_desc e = {k ? SPS_ENTRY_SCALAR : SPS_ENTRY_QUATERNION, 7};
        if (TU_OK(ctx, sps_matrix_from_csr_entries(ctx, 2, 2, g_rowptr, g_col, g_val, e, SPS_F64, &W)) &&
            TU_OK(ctx, sps_matrix_info(W, &info)))
            TU_CHECK(info.entry.kind == e.kind && info.entry.block == (k ? 0 : 4),
                     "%s descriptor with block 7: the matrix reports block %d", k ? "scalar" : "quaternion",
                     info.entry.block);
        sps_matrix_destroy(W);
    }
    /* quaternions have a Matrix Market form (test_compound_io), blocks none */
    sps_matrix Bk = NULL;
    TU_OK(ctx, sps_matrix_from_csr_entries(ctx, 2, 2, g_rowptr, g_col, g_val, sps_entry_block(2), SPS_F64, &Bk));
    TU_CHECK(Bk && sps_matrix_write_mtx(Bk, "/nonexistent/b.mtx") == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_context_error(ctx), "block2x2"),
             "block matrix to Matrix Market: %s", sps_context_error(ctx));
    sps_matrix_destroy(Bk);
    B = (sps_matrix)1;
    TU_OK(ctx, sps_matrix_from_csr(ctx, 2, 2, g_rowptr, g_col, g_val, SPS_F64, &S));
    TU_CHECK(S && sps_matrix_convert(S, SPS_FMT_BCSR, NULL, &B) == SPS_ERR_UNSUPPORTED && !B &&
                 strstr(sps_context_error(ctx), "bcsr is for block and quaternion entries"),
             "scalar matrix to bcsr: %s", sps_context_error(ctx));
    TU_DESTROY_MATRICES(Q, S);
}

/* The compound tables of the CPU: b = 3 and 4 specialised, the others generic, complex
 * quaternions absent, none for scalar entries (their family is the matrix family). */
static void test_tables(void)
{
    const sps_backend_ops *be = &sps_cpu_backend;
    const sps_cmp_kernels *k3 = sps_cmp_kernels_for(be, sps_entry_block(3), SPS_F64),
                          *k4 = sps_cmp_kernels_for(be, sps_entry_block(4), SPS_C32),
                          *k7 = sps_cmp_kernels_for(be, sps_entry_block(7), SPS_C64),
                          *kq = sps_cmp_kernels_for(be, sps_entry_quaternion(), SPS_F32);
    TU_CHECK(k3 && k3->bcsr_spmv == sps_cpu_bcsr_spmv_b3_d && k3->bcsr_spmvt == sps_cpu_bcsr_spmvt_b3_d &&
                 k3->pad_spmv == sps_cpu_pad_spmv_b3_d && k3->pad_spmvt == sps_cpu_pad_spmvt_b3_d,
             "block3x3 f64: the b = 3 kernels");
    TU_CHECK(k4 && k4->bcsr_spmv == sps_cpu_bcsr_spmv_b4_c && k4->pad_spmv == sps_cpu_pad_spmv_b4_c,
             "block4x4 c32: the b = 4 kernels");
    TU_CHECK(k7 && k7->bcsr_spmv == sps_cpu_bcsr_spmv_bn_z && k7->pad_spmvt == sps_cpu_pad_spmvt_bn_z,
             "block7x7 c64: the generic kernels");
    TU_CHECK(kq && kq->bcsr_spmvt == sps_cpu_bcsr_spmvt_q_s && kq->pad_spmv == sps_cpu_pad_spmv_q_s,
             "q32: the quaternion kernels");
    TU_CHECK(!sps_cmp_kernels_for(be, sps_entry_quaternion(), SPS_C32) &&
                 !sps_cmp_kernels_for(be, sps_entry_scalar(), SPS_F64) &&
                 !sps_cmp_kernels_for(be, sps_entry_block(9), SPS_F64) &&
                 !sps_mat_kernels_for(be, sps_entry_quaternion(), SPS_F64),
             "absent compound tables are NULL");
    sps_backend_ops none = sps_cpu_backend;
    none.cmp = NULL;
    TU_CHECK(!sps_cmp_kernels_for(&none, sps_entry_block(3), SPS_F64), "a backend without the family has none");
    /* a backend without the family refuses compound matrices, naming what and where */
    sps_context g = NULL;
    TU_OK(g, sps_context_create(&g, SPS_BACKEND_CPU, 0));
    sps_exec *gx = sps_ex(g);
    const sps_backend_ops *saved = gx->be;
    gx->be = &none;
    sps_matrix A = (sps_matrix)1;
    TU_CHECK(sps_matrix_from_csr_entries(g, 2, 2, g_rowptr, g_col, g_val, sps_entry_block(3), SPS_F64, &A) ==
                     SPS_ERR_UNSUPPORTED &&
                 !A && strstr(sps_context_error(g), "block3x3") && strstr(sps_context_error(g), "cpu"),
             "block3x3 on a backend without compound kernels: %s", sps_context_error(g));
    gx->be = saved;
    sps_context_destroy(g);
}

/* The system built from c (entries e, type t) solved natively and as its expansion. */
static void solve_both(const char *name, cr_coo *c, sps_entry_desc e, sps_scalar t, double rtol)
{
    const int nv = sps_entry_values(e), d = sps_entry_dim(e), N = c->n * d;
    void *tv = cr_to_type(t, c->val, (size_t)c->nnz * nv);
    sps_matrix A = NULL, S = NULL;
    if (!TU_OK(ctx, sps_matrix_from_coo_entries(ctx, c->n, c->n, c->nnz, c->row, c->col, tv, e, t, &A))) {
        free(tv);
        return;
    }
    tu_csr ex;
    TU_CHECK(tu_export_csr(ctx, A, &ex), "%s: export", name);
    tu_csr h = cr_expand(e, t, c->n, c->n, ex.rowptr, ex.col, ex.val);
    TU_OK(ctx, sps_matrix_from_csr(ctx, N, N, h.rowptr, h.col, h.val, t, &S));
    void *b = tu_xcalloc((size_t)N, sps_scalar_size(t));
    tu_fill_random(&rng, t, (size_t)N, b);
    void *xa = tu_xcalloc((size_t)N, sps_scalar_size(t)), *xs = tu_xcalloc((size_t)N, sps_scalar_size(t));
    const double tol = 1e3 * rtol;
    for (int jac = 0; jac <= 1 && S; jac++) {
        int ia = -1, is = -1;
        const int ca = cr_solve(ctx, A, SPS_SOLVER_CG, jac, t, N, b, xa, rtol, &ia),
                  cs = cr_solve(ctx, S, SPS_SOLVER_CG, jac, t, N, b, xs, rtol, &is);
        const double err = tu_relerr(t, (size_t)N, xa, xs);
        TU_CHECK(ca && cs && abs(ia - is) <= 1 && err <= tol,
                 "%s%s: CG native %d iterations (converged %d), expansion %d (%d); solutions differ by %.3g", name,
                 jac ? " + Jacobi" : "", ia, ca, is, cs, err);
        if (getenv("SPS_TEST_VERBOSE"))
            printf("%s%s: CG %d / %d iterations, solutions %.3g apart\n", name, jac ? " + Jacobi" : "", ia, is, err);
    }
    /* the other methods run unchanged on the native operator and agree with CG's x */
    const sps_solver_type other[2] = {SPS_SOLVER_BICGSTAB, SPS_SOLVER_GMRES};
    void *xo = tu_xcalloc((size_t)N, sps_scalar_size(t));
    for (int k = 0; k < 2; k++) {
        int io = -1;
        const int co = cr_solve(ctx, A, other[k], 0, t, N, b, xo, rtol, &io);
        const double err = tu_relerr(t, (size_t)N, xo, xs);
        TU_CHECK(co && err <= tol, "%s: %s natively: converged %d in %d iterations, %.3g from CG's x", name,
                 k ? "GMRES" : "BiCGSTAB", co, io, err);
    }
    free(xo);
    free(b);
    free(xa);
    free(xs);
    tu_csr_free(&ex);
    free(tv);
    tu_csr_free(&h);
    TU_DESTROY_MATRICES(A, S);
}

static void test_quaternion_solve(sps_scalar t, double rtol)
{
    const int g = 16;
    cr_coo c = cr_quat_laplacian(&rng, g, 0.05);
    char name[64];
    snprintf(name, sizeof name, "quaternion Laplacian %dx%d %s", g, g, t == SPS_F32 ? "q32" : "q64");
    solve_both(name, &c, sps_entry_quaternion(), t, rtol);
    cr_coo_free(&c);
}

static void test_block_solve(void)
{
    cr_coo c = cr_block_spd(&rng, 14, 0.02);
    solve_both("3x3-block SPD 14x14 grid f64", &c, sps_entry_block(3), SPS_F64, 1e-10);
    cr_coo_free(&c);
}

int main(void)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 2020);
    test_tables();
    test_refusals();
    test_coo(sps_entry_block(3), SPS_C64);
    test_coo(sps_entry_block(2), SPS_F32);
    test_coo(sps_entry_quaternion(), SPS_F32);
    test_coo(sps_entry_quaternion(), SPS_F64);
    test_products();
    test_quaternion_solve(SPS_F64, 1e-10);
    test_quaternion_solve(SPS_F32, 1e-5);
    test_block_solve();
    sps_context_destroy(ctx);
    return tu_finish();
}
