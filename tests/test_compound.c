/* Compound entries on the CPU backend (issue 20): b x b blocks (b = 2..8; f32, f64,
 * c32, c64) and quaternions (q32, q64) in the bcsr format, AoS and SoA.
 *
 * - SpMV and SpMV^T of every (entry, scalar, layout) on random shapes (empty rows,
 *   rectangular, one large enough for the threaded paths) against the long double
 *   product of the scalar expansion (tu_spmv_check: alpha/beta random, beta = 0 with
 *   y poisoned by NaN) and against the library's scalar CSR of that expansion;
 * - export round trip, COO duplicates summed, refused input with its message;
 * - the kernel tables (b = 3, 4 specialised, complex quaternions absent);
 * - a quaternion Hermitian positive definite system (a connection Laplacian of
 *   random unit quaternions on a grid) and a 3x3-block SPD one solved natively and
 *   as their scalar expansions: CG takes the same iterations (+-1) and gives the
 *   same solution; BiCGSTAB, GMRES and Jacobi run unchanged on them. */
#include "testutil.h"

#include "kernels/backend.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;

/* The real 4x4 matrix of left multiplication by q = w + xi + yj + zk (the issue's). */
static void quat_left(double w, double x, double y, double z, double L[4][4])
{
    const double M[4][4] = {{w, -x, -y, -z}, {x, w, -z, y}, {y, z, w, -x}, {z, -y, x, w}};
    memcpy(L, M, sizeof M);
}

/* Element (r, c) of the scalar expansion of entry k (AoS values val of type t). */
static void entry_elem(sps_entry_desc e, sps_scalar t, const void *val, int64_t k, int r, int c, double *re,
                       double *im)
{
    const int d = sps_entry_dim(e), nv = sps_entry_values(e);
    if (e.kind == SPS_ENTRY_BLOCK) {
        tu_get(t, val, (size_t)(k * nv + r * d + c), re, im);
        return;
    }
    double q[4], L[4][4], dummy;
    for (int p = 0; p < 4; p++) tu_get(t, val, (size_t)(k * 4 + p), &q[p], &dummy);
    quat_left(q[0], q[1], q[2], q[3], L);
    *re = L[r][c];
    *im = 0;
}

/* The scalar expansion of an n x m compound CSR (columns sorted within rows): rows
 * i*d + r hold the entries' rows r, columns j*d + c in order. */
static tu_csr expand(sps_entry_desc e, sps_scalar t, int n, int m, const sps_index *rowptr, const sps_index *col,
                     const void *val)
{
    const int d = sps_entry_dim(e);
    const int64_t nnz = rowptr[n];
    tu_csr h;
    memset(&h, 0, sizeof h);
    h.info.rows = n * d;
    h.info.cols = m * d;
    h.info.nnz = nnz * d * d;
    h.info.scalar = t;
    h.rowptr = tu_xcalloc((size_t)n * d + 1, sizeof(sps_index));
    h.col = tu_xcalloc((size_t)h.info.nnz, sizeof(sps_index));
    h.val = tu_xcalloc((size_t)h.info.nnz, sps_scalar_size(t));
    int64_t w = 0;
    for (int i = 0; i < n; i++)
        for (int r = 0; r < d; r++) {
            for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++)
                for (int c = 0; c < d; c++) {
                    double re, im;
                    entry_elem(e, t, val, k, r, c, &re, &im);
                    h.col[w] = col[k] * d + c;
                    tu_put(t, h.val, (size_t)w++, re, im);
                }
            h.rowptr[i * d + r + 1] = (sps_index)w;
        }
    return h;
}

/* A's export (rowptr, col, entries) bitwise equal to the arrays it was built from. */
static int export_equal(sps_matrix A, int n, int64_t nnz, const sps_index *rowptr, const sps_index *col,
                        const void *val, size_t vbytes)
{
    sps_index *rp = tu_xcalloc((size_t)n + 1, sizeof *rp), *cc = tu_xcalloc((size_t)nnz, sizeof *cc);
    void *vv = tu_xcalloc(vbytes, 1);
    int ok = sps_matrix_export_csr(A, rp, cc, vv) == SPS_OK && !memcmp(rp, rowptr, ((size_t)n + 1) * sizeof *rp) &&
             !memcmp(cc, col, (size_t)nnz * sizeof *cc) && !memcmp(vv, val, vbytes);
    free(rp);
    free(cc);
    free(vv);
    return ok;
}

/* A (compound) and S (the scalar CSR of its expansion) give the same y = A x within rounding. */
static double vs_scalar_csr(sps_matrix A, const tu_csr *h, sps_op_mode mode)
{
    const sps_scalar t = h->info.scalar;
    sps_matrix S = NULL;
    if (sps_matrix_from_csr(ctx, h->info.rows, h->info.cols, h->rowptr, h->col, h->val, t, &S) != SPS_OK) return INFINITY;
    const int nin = mode == SPS_OP_N ? h->info.cols : h->info.rows, nout = mode == SPS_OP_N ? h->info.rows : h->info.cols;
    void *x = tu_xcalloc((size_t)nin, sps_scalar_size(t)), *y0 = tu_xcalloc((size_t)nout, sps_scalar_size(t));
    tu_fill_random(&rng, t, (size_t)nin, x);
    tu_fill_nan(t, (size_t)nout, y0);
    int ok1, ok2;
    void *ya = tu_apply(ctx, A, mode, t, nin, nout, x, y0, NULL, NULL, &ok1);
    void *ys = tu_apply(ctx, S, mode, t, nin, nout, x, y0, NULL, NULL, &ok2);
    const double err = ok1 && ok2 ? tu_relerr(t, (size_t)nout, ya, ys) : INFINITY;
    free(x);
    free(y0);
    free(ya);
    free(ys);
    sps_matrix_destroy(S);
    return err;
}

/* SpMV / SpMV^T of entry e, type t, layout soa on shape s. */
static void check_products(sps_entry_desc e, sps_scalar t, int soa, const tu_shape *s)
{
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
    TU_CHECK(A && export_equal(A, s->n, s->nnz, s->rowptr, s->col, val, vbytes), "%s: export round trip", what);
    sps_operator op = NULL;
    sps_index on = -1, om = -1;
    TU_CHECK(A && sps_operator_from_matrix(A, &op) == SPS_OK && sps_operator_size(op, &on, &om) == SPS_OK &&
                 on == s->n * d && om == s->m * d,
             "%s: operator %d x %d", what, (int)on, (int)om);
    sps_operator_destroy(op);
    tu_csr h = expand(e, t, s->n, s->m, s->rowptr, s->col, val);
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

static tu_shape random_shape(const char *name, int n, int m, int maxlen, int empty_every)
{
    int *len = tu_xcalloc((size_t)n, sizeof *len);
    for (int i = 0; i < n; i++) {
        len[i] = (int)(tu_rng_u64(&rng) % (uint64_t)(maxlen + 1));
        if (len[i] > m) len[i] = m;
        if (empty_every && i % empty_every == 1) len[i] = 0;
    }
    tu_shape s = tu_shape_make(&rng, name, n, m, len, -1);
    free(len);
    return s;
}

static void test_products(void)
{
    enum { NSHAPES = 5 };
    tu_shape shapes[NSHAPES] = {
        random_shape("one", 1, 1, 1, 0),          random_shape("tall", 9, 4, 3, 3),
        random_shape("wide", 5, 12, 6, 0),        random_shape("empty-rows", 40, 40, 7, 3),
        random_shape("rows", 160, 130, 9, 5),
    };
    for (int b = 2; b <= 8; b++)
        for (int ti = 0; ti < TU_NTYPES; ti++)
            for (int soa = 0; soa <= 1; soa++)
                for (int si = 0; si < NSHAPES; si++)
                    check_products(sps_entry_block(b), tu_all_types[ti], soa, &shapes[si]);
    for (int ti = 0; ti < 2; ti++)
        for (int soa = 0; soa <= 1; soa++)
            for (int si = 0; si < NSHAPES; si++)
                check_products(sps_entry_quaternion(), tu_all_types[ti], soa, &shapes[si]);
    for (int si = 0; si < NSHAPES; si++) tu_shape_free(&shapes[si]);
    /* enough entries for the threaded row loop and several SpMV^T scatter buffers */
    tu_shape big = random_shape("big", 10000, 8000, 30, 0);
    for (int soa = 0; soa <= 1; soa++) {
        check_products(sps_entry_quaternion(), SPS_F64, soa, &big);
        check_products(sps_entry_block(2), SPS_F64, soa, &big);
    }
    tu_shape_free(&big);
}

/* COO of compound entries: any order, duplicates summed member by member (values k/8:
 * the sums are exact, so the export is compared bit for bit). */
static void test_coo(sps_entry_desc e, sps_scalar t)
{
    tu_shape s = random_shape("coo", 30, 20, 5, 4);
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
    TU_CHECK(A && export_equal(A, s.n, s.nnz, s.rowptr, s.col, want, nvals * ss), "COO %s %s: duplicates summed",
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
    TU_CHECK(k3 && k3->bcsr_spmv == sps_cpu_bcsr_spmv_b3_d && k3->bcsr_spmvt == sps_cpu_bcsr_spmvt_b3_d,
             "block3x3 f64: the b = 3 kernels");
    TU_CHECK(k4 && k4->bcsr_spmv == sps_cpu_bcsr_spmv_b4_c, "block4x4 c32: the b = 4 kernels");
    TU_CHECK(k7 && k7->bcsr_spmv == sps_cpu_bcsr_spmv_bn_z, "block7x7 c64: the generic kernels");
    TU_CHECK(kq && kq->bcsr_spmvt == sps_cpu_bcsr_spmvt_q_s, "q32: the quaternion kernels");
    TU_CHECK(!sps_cmp_kernels_for(be, sps_entry_quaternion(), SPS_C32) &&
                 !sps_cmp_kernels_for(be, sps_entry_scalar(), SPS_F64) &&
                 !sps_cmp_kernels_for(be, sps_entry_block(9), SPS_F64) &&
                 !sps_mat_kernels_for(be, sps_entry_quaternion(), SPS_F64),
             "absent compound tables are NULL");
    sps_backend_ops none = sps_cpu_backend;
    none.cmp = NULL;
    TU_CHECK(!sps_cmp_kernels_for(&none, sps_entry_block(3), SPS_F64), "a backend without the family has none");
    /* where a CUDA device is usable: compound matrices are refused there, naming what and where */
    sps_context g = NULL;
    if (sps_context_create(&g, SPS_BACKEND_CUDA, 0) == SPS_OK) {
        sps_matrix A = (sps_matrix)1;
        TU_CHECK(sps_matrix_from_csr_entries(g, 2, 2, g_rowptr, g_col, g_val, sps_entry_block(3), SPS_F64, &A) ==
                         SPS_ERR_UNSUPPORTED &&
                     !A && strstr(sps_context_error(g), "block3x3") && strstr(sps_context_error(g), "cuda"),
                 "block3x3 on CUDA: %s", sps_context_error(g));
    }
    sps_context_destroy(g); /* a failed start leaves a context holding the reason */
}

/* ------------------------------------------------------------------ solves */
typedef struct {
    int n;               /* rows of entries */
    int64_t nnz;         /* triplets (duplicates included) */
    sps_index *row, *col;
    double *val;         /* nnz * nv */
} coo_build;

static void coo_add(coo_build *c, int nv, sps_index i, sps_index j, const double *v)
{
    c->row[c->nnz] = i;
    c->col[c->nnz] = j;
    memcpy(c->val + c->nnz * nv, v, (size_t)nv * sizeof(double));
    c->nnz++;
}

/* Values of type t from doubles (the builders below work in double). */
static void *to_type(sps_scalar t, const double *v, size_t n)
{
    void *out = tu_xcalloc(n, sps_scalar_size(t));
    for (size_t i = 0; i < n; i++) tu_put(t, out, i, v[i], 0);
    return out;
}

/* Solve A x = b (A: matrix of an operator of N scalars) with method `type` from x = 0,
 * optionally Jacobi-preconditioned; x and the iteration count out.  1 when converged. */
static int solve(sps_matrix A, sps_solver_type type, int jacobi, sps_scalar t, int N, const void *b, void *x,
                 double rtol, int *its)
{
    sps_operator op = NULL;
    sps_solver s = NULL;
    sps_precond P = NULL;
    sps_vector vb = NULL, vx = NULL;
    sps_result res;
    memset(&res, 0, sizeof res);
    int ok = TU_OK(ctx, sps_operator_from_matrix(A, &op)) && TU_OK(ctx, sps_solver_create(ctx, type, &s)) &&
             TU_OK(ctx, sps_solver_set_operator(s, op)) && TU_OK(ctx, sps_solver_set_tolerances(s, rtol, 0, 5000)) &&
             TU_OK(ctx, sps_vector_from_host(ctx, N, t, b, &vb)) && TU_OK(ctx, sps_vector_create(ctx, N, t, &vx));
    if (ok && jacobi)
        ok = TU_OK(ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P)) && TU_OK(ctx, sps_solver_set_precond(s, P));
    ok = ok && TU_OK(ctx, sps_solver_solve(s, vb, vx, &res)) && TU_OK(ctx, sps_vector_get(vx, x));
    *its = res.iterations;
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_solver_destroy(s);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    return ok && res.reason == SPS_REASON_CONVERGED_RTOL;
}

/* The system built from c (entries e, type t) solved natively and as its expansion. */
static void solve_both(const char *name, coo_build *c, sps_entry_desc e, sps_scalar t, double rtol)
{
    const int nv = sps_entry_values(e), d = sps_entry_dim(e), N = c->n * d;
    void *tv = to_type(t, c->val, (size_t)c->nnz * nv);
    sps_matrix A = NULL, S = NULL;
    if (!TU_OK(ctx, sps_matrix_from_coo_entries(ctx, c->n, c->n, c->nnz, c->row, c->col, tv, e, t, &A))) {
        free(tv);
        return;
    }
    sps_matrix_info_t info;
    sps_matrix_info(A, &info);
    sps_index *rp = tu_xcalloc((size_t)c->n + 1, sizeof *rp), *cc = tu_xcalloc((size_t)info.nnz, sizeof *cc);
    void *vv = tu_xcalloc((size_t)info.nnz * nv, sps_scalar_size(t));
    TU_OK(ctx, sps_matrix_export_csr(A, rp, cc, vv));
    tu_csr h = expand(e, t, c->n, c->n, rp, cc, vv);
    TU_OK(ctx, sps_matrix_from_csr(ctx, N, N, h.rowptr, h.col, h.val, t, &S));
    void *b = tu_xcalloc((size_t)N, sps_scalar_size(t));
    tu_fill_random(&rng, t, (size_t)N, b);
    void *xa = tu_xcalloc((size_t)N, sps_scalar_size(t)), *xs = tu_xcalloc((size_t)N, sps_scalar_size(t));
    const double tol = 1e3 * rtol;
    for (int jac = 0; jac <= 1 && S; jac++) {
        int ia = -1, is = -1;
        const int ca = solve(A, SPS_SOLVER_CG, jac, t, N, b, xa, rtol, &ia), cs = solve(S, SPS_SOLVER_CG, jac, t, N, b, xs, rtol, &is);
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
        const int co = solve(A, other[k], 0, t, N, b, xo, rtol, &io);
        const double err = tu_relerr(t, (size_t)N, xo, xs);
        TU_CHECK(co && err <= tol, "%s: %s natively: converged %d in %d iterations, %.3g from CG's x", name,
                 k ? "GMRES" : "BiCGSTAB", co, io, err);
    }
    free(xo);
    free(b);
    free(xa);
    free(xs);
    free(rp);
    free(cc);
    free(vv);
    free(tv);
    tu_csr_free(&h);
    TU_DESTROY_MATRICES(A, S);
}

/* Random unit quaternion. */
static void unit_quat(double *q)
{
    double s = 0;
    for (int p = 0; p < 4; p++) {
        q[p] = tu_rng_range(&rng, -1, 1);
        s += q[p] * q[p];
    }
    s = sqrt(s);
    for (int p = 0; p < 4; p++) q[p] /= s;
}

/* The connection Laplacian of a g x g grid with a random unit quaternion u per edge
 * (p, q): A_pq = -u, A_qp = -conj(u), A_pp = deg(p) + shift.  Quaternion-Hermitian
 * and positive definite: x^H A x = sum_edges |x_p - u x_q|^2 + shift |x|^2. */
static void test_quaternion_solve(sps_scalar t, double rtol)
{
    const int g = 16, n = g * g;
    coo_build c = {n, 0, tu_xcalloc((size_t)5 * n, sizeof(sps_index)), tu_xcalloc((size_t)5 * n, sizeof(sps_index)),
                   tu_xcalloc((size_t)20 * n, sizeof(double))};
    const double shift = 0.05;
    for (int p = 0; p < n; p++) {
        const int i = p / g, j = p % g;
        const int deg = (i > 0) + (i < g - 1) + (j > 0) + (j < g - 1);
        const double dq[4] = {deg + shift, 0, 0, 0};
        coo_add(&c, 4, p, p, dq);
        const int nb[2] = {j < g - 1 ? p + 1 : -1, i < g - 1 ? p + g : -1};
        for (int k = 0; k < 2; k++) {
            if (nb[k] < 0) continue;
            double u[4];
            unit_quat(u);
            const double m[4] = {-u[0], -u[1], -u[2], -u[3]}, mc[4] = {-u[0], u[1], u[2], u[3]};
            coo_add(&c, 4, p, nb[k], m);
            coo_add(&c, 4, nb[k], p, mc);
        }
    }
    char name[64];
    snprintf(name, sizeof name, "quaternion Laplacian %dx%d %s", g, g, t == SPS_F32 ? "q32" : "q64");
    solve_both(name, &c, sps_entry_quaternion(), t, rtol);
    free(c.row);
    free(c.col);
    free(c.val);
}

/* A 3x3-block SPD system: on a g x g grid each edge e = (p, q) couples with an SPD
 * block K_e = M M^T + I/10: A_pq = A_qp = -K_e, K_e added to A_pp and A_qq (COO
 * duplicates, summed), plus shift I: x^T A x = sum_e (x_p - x_q)^T K_e (x_p - x_q) + shift |x|^2. */
static void test_block_solve(void)
{
    const int g = 14, n = g * g;
    coo_build c = {n, 0, tu_xcalloc((size_t)9 * n, sizeof(sps_index)), tu_xcalloc((size_t)9 * n, sizeof(sps_index)),
                   tu_xcalloc((size_t)81 * n, sizeof(double))};
    const double shift = 0.02;
    for (int p = 0; p < n; p++) {
        const double s[9] = {shift, 0, 0, 0, shift, 0, 0, 0, shift};
        coo_add(&c, 9, p, p, s);
        const int i = p / g, j = p % g, nb[2] = {j < g - 1 ? p + 1 : -1, i < g - 1 ? p + g : -1};
        for (int k = 0; k < 2; k++) {
            if (nb[k] < 0) continue;
            double M[9], K[9], mK[9];
            for (int a = 0; a < 9; a++) M[a] = tu_rng_range(&rng, -1, 1);
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++) {
                    K[r * 3 + q] = (r == q) ? 0.1 : 0;
                    for (int a = 0; a < 3; a++) K[r * 3 + q] += M[r * 3 + a] * M[q * 3 + a];
                    mK[r * 3 + q] = -K[r * 3 + q];
                }
            coo_add(&c, 9, p, p, K);
            coo_add(&c, 9, nb[k], nb[k], K);
            coo_add(&c, 9, p, nb[k], mK);
            coo_add(&c, 9, nb[k], p, mK);
        }
    }
    solve_both("3x3-block SPD 14x14 grid f64", &c, sps_entry_block(3), SPS_F64, 1e-10);
    free(c.row);
    free(c.col);
    free(c.val);
}

int main(void)
{
    if (sps_context_create(&ctx, SPS_BACKEND_CPU, 0) != SPS_OK) {
        fprintf(stderr, "cannot create a CPU context\n");
        return 1;
    }
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
