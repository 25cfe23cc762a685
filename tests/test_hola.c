/* Unit tests of the Hola format on the CPU backend (formats/hola.c,
 * kernels/cpu/hola.c), f32/f64/c32/c64, on the shapes of hola_shapes.h:
 *   - the registry: "hola" by name, in the format list;
 *   - exact round trips CSR -> hola -> CSR (bitwise, explicit zeros and -0.0
 *     kept) through both builds (from a CSR matrix: from_backend_csr; from COO:
 *     host from_csr) and back through sps_matrix_convert;
 *   - sps_matrix_info: the CSR bytes plus 4 (nblocks + 1) bytes of row starts,
 *     nblocks = ceil(nnz / (256 npt)), npt 4 (8 beyond 300k non-zeros, 4 for
 *     c64), no padding;
 *   - hola_row_starts (the reference of the GPU's first kernel) against its
 *     definition (the row holding entry b 256 npt; the row of entry nnz - 1),
 *     for npt 4 and 8, the buffer poisoned first;
 *   - SpMV and SpMV^T against a long double reference, outputs poisoned with
 *     NaN, alpha/beta defaulted, random, and beta = 0 with y NaN; and
 *     bit-identical to the CSR matrix's (the CPU product is the CSR kernel);
 *   - CG with the hola format on a generated Poisson problem.
 * Ends with "N passed, M failed". */
#include "core/internal.h"
#include "hola_shapes.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;
static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};

static int cplx(sps_scalar t) { return sps_scalar_is_complex(t); }
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }

/* Values: uniform [-1, 1), with explicit zeros (every 7th entry) and -0.0 (every 11th). */
static void *shape_values(sps_scalar t, int64_t nnz)
{
    void *v = tu_xcalloc((size_t)nnz, ssz(t));
    tu_fill_random(&rng, t, (size_t)nnz, v);
    for (int64_t k = 0; k < nnz; k++) {
        if (k % 7 == 3) tu_put(t, v, (size_t)k, 0.0, 0.0);
        if (k % 11 == 5) tu_put(t, v, (size_t)k, -0.0, cplx(t) ? -0.0 : 0.0);
    }
    return v;
}

/* ------------------------------------------------------------------ SpMV check */
enum { AB_DEFAULT = 0, AB_RANDOM, AB_BETA0, AB_COUNT };
static const char *ab_name[AB_COUNT] = {"alpha=1 beta=0 (NULL)", "random alpha, beta", "random alpha, beta=0, y NaN"};

/* y = alpha op(A) x + beta y on A (inputs drawn from `seed`) against a long double
 * reference from h; the output in *yout (caller frees). */
static int spmv_check(const tu_csr *h, sps_matrix A, sps_op_mode mode, int ab, uint64_t seed, double *worst, void **yout)
{
    const sps_scalar t = h->info.scalar;
    const int n = h->info.rows, m = h->info.cols;
    const int nin = mode == SPS_OP_N ? m : n, nout = mode == SPS_OP_N ? n : m;
    tu_rng r;
    tu_rng_seed(&r, seed);
    void *x = tu_xcalloc((size_t)nin, ssz(t)), *y = tu_xcalloc((size_t)nout, ssz(t)), *y0 = tu_xcalloc((size_t)nout, ssz(t));
    tu_fill_random(&r, t, (size_t)nin, x);
    if (ab == AB_RANDOM) tu_fill_random(&r, t, (size_t)nout, y0);
    else tu_fill_nan(t, (size_t)nout, y0);
    memcpy(y, y0, (size_t)nout * ssz(t));
    unsigned char alpha[16], beta[16];
    double ar = 1, ai = 0, br = 0, bi = 0;
    if (ab != AB_DEFAULT) {
        ar = tu_rng_range(&r, -2, 2);
        ai = cplx(t) ? tu_rng_range(&r, -2, 2) : 0;
    }
    if (ab == AB_RANDOM) {
        br = tu_rng_range(&r, -2, 2);
        bi = cplx(t) ? tu_rng_range(&r, -2, 2) : 0;
    }
    tu_put(t, alpha, 0, ar, ai);
    tu_put(t, beta, 0, br, bi);
    tu_get(t, alpha, 0, &ar, &ai);
    tu_get(t, beta, 0, &br, &bi);
    long double *sr = tu_xcalloc((size_t)nout, sizeof(long double)), *si = tu_xcalloc((size_t)nout, sizeof(long double)),
                *sa = tu_xcalloc((size_t)nout, sizeof(long double));
    int *cnt = tu_xcalloc((size_t)nout, sizeof(int));
    for (int i = 0; i < n; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) {
            const int j = h->col[k], o = mode == SPS_OP_N ? i : j, in = mode == SPS_OP_N ? j : i;
            double vr, vi, xr, xi;
            tu_get(t, h->val, (size_t)k, &vr, &vi);
            tu_get(t, x, (size_t)in, &xr, &xi);
            sr[o] += (long double)vr * xr - (long double)vi * xi;
            si[o] += (long double)vr * xi + (long double)vi * xr;
            sa[o] += (fabsl(vr) + fabsl(vi)) * (fabsl(xr) + fabsl(xi));
            cnt[o]++;
        }
    sps_vector vx = NULL, vy = NULL;
    sps_operator op = NULL;
    int ok = sps_vector_from_host(ctx, nin, t, x, &vx) == SPS_OK && sps_vector_from_host(ctx, nout, t, y, &vy) == SPS_OK &&
             sps_operator_from_matrix(A, &op) == SPS_OK &&
             sps_operator_apply(op, mode, ab == AB_DEFAULT ? NULL : alpha, vx, ab == AB_DEFAULT ? NULL : beta, vy) ==
                 SPS_OK &&
             sps_vector_get(vy, y) == SPS_OK;
    if (!ok) fprintf(stderr, "spmv_check: %s\n", sps_context_error(ctx));
    *worst = 0;
    for (int o = 0; ok && o < nout; o++) {
        double yr, yi, y0r = 0, y0i = 0;
        tu_get(t, y, (size_t)o, &yr, &yi);
        if (ab == AB_RANDOM) tu_get(t, y0, (size_t)o, &y0r, &y0i);
        const long double wr = ar * sr[o] - ai * si[o] + br * (long double)y0r - bi * (long double)y0i;
        const long double wi = ar * si[o] + ai * sr[o] + br * (long double)y0i + bi * (long double)y0r;
        const long double scale = (fabsl(ar) + fabsl(ai)) * sa[o] + (fabsl(br) + fabsl(bi)) * (fabsl(y0r) + fabsl(y0i));
        const long double d = hypotl(yr - wr, yi - wi);
        const long double tol = 4 * (cnt[o] + 4) * tu_eps(t) * scale;
        if (!(d <= tol)) ok = 0;
        if (scale > 0 && d / scale > *worst) *worst = (double)(d / scale);
        if (isnan((double)d)) *worst = NAN;
    }
    sps_operator_destroy(op);
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    free(x);
    free(y0);
    free(sr);
    free(si);
    free(sa);
    free(cnt);
    if (yout) *yout = y;
    else free(y);
    return ok;
}

/* ------------------------------------------------------------------ row starts */
/* The row holding entry k (a non-empty row), by scanning. */
static sps_index row_of_entry(const hola_shape *sh, int64_t k)
{
    sps_index r = 0;
    while (sh->rowptr[r + 1] <= k) r++;
    return r;
}

static void check_row_starts(const hola_shape *sh)
{
    for (int npt = HOLA_NPT_SMALL; npt <= HOLA_NPT_LARGE; npt *= 2) {
        const sps_index nb = sps_hola_blocks(sh->nnz, npt);
        sps_index *rs = tu_xcalloc((size_t)nb + 1, sizeof *rs);
        for (sps_index b = 0; b <= nb; b++) rs[b] = -77; /* poison */
        if (!TU_OK(ctx, sps_cpu_kernels[SPS_F64].hola_row_starts(ctx, sh->n, sh->nnz, sh->rowptr, npt, rs))) {
            free(rs);
            continue;
        }
        int bad = 0;
        for (sps_index b = 0; b < nb && !bad; b++)
            bad = rs[b] != row_of_entry(sh, (int64_t)b * HOLA_THREADS * npt);
        if (nb > 0 && !bad) bad = rs[nb] != row_of_entry(sh, sh->nnz - 1);
        if (nb == 0) bad = rs[0] != -77; /* nothing written for an empty matrix */
        TU_CHECK(!bad, "%s: hola_row_starts (npt %d, %d blocks) differs from its definition", sh->name, npt, (int)nb);
        free(rs);
    }
}

/* ------------------------------------------------------------------ one shape */
static size_t expect_bytes(const hola_shape *sh, sps_scalar t, int *npt)
{
    *npt = sh->nnz > 300000 && ssz(t) <= 8 ? 8 : 4;
    const int64_t nb = (sh->nnz + 256 * *npt - 1) / (256 * *npt);
    return ((size_t)sh->n + 1) * 4 + (size_t)sh->nnz * (4 + ssz(t)) + (size_t)(nb + 1) * 4;
}

static void test_shape(const hola_shape *sh, sps_scalar t)
{
    char what[256];
    snprintf(what, sizeof what, "%s [hola %s]", sh->name, tn(t));
    tu_csr h0 = {0};
    h0.info.rows = sh->n;
    h0.info.cols = sh->m;
    h0.info.nnz = sh->nnz;
    h0.info.scalar = t;
    h0.rowptr = sh->rowptr;
    h0.col = sh->col;
    h0.val = shape_values(t, sh->nnz);
    sps_matrix A = NULL, Acoo = NULL, B = NULL, C = NULL, D = NULL;
    if (!TU_OK(ctx, sps_matrix_from_csr(ctx, sh->n, sh->m, sh->rowptr, sh->col, h0.val, t, &A))) goto out;
    if (!TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_COO, NULL, &Acoo))) goto out;
    if (!TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_HOLA, NULL, &B))) goto out;
    sps_matrix_info_t info;
    if (TU_OK(ctx, sps_matrix_info(B, &info))) {
        int npt;
        const size_t bytes = expect_bytes(sh, t, &npt);
        TU_CHECK(info.format == SPS_FMT_HOLA && strcmp(info.format_name, "hola") == 0 && info.bytes == bytes &&
                     info.stored_entries == sh->nnz && info.fill_percent == 0.0 && info.nnz == sh->nnz &&
                     info.backend == SPS_BACKEND_CPU,
                 "%s: info bytes %zu (want %zu, npt %d) stored %lld fill %g", what, info.bytes, bytes, npt,
                 (long long)info.stored_entries, info.fill_percent);
    }
    tu_csr hb;
    if (tu_export_csr(ctx, B, &hb)) {
        TU_CHECK(tu_same_csr(&h0, &hb), "%s: CSR -> hola -> CSR not bitwise (from CSR)", what);
        tu_csr_free(&hb);
    }
    if (TU_OK(ctx, sps_matrix_convert(Acoo, SPS_FMT_HOLA, NULL, &C)) && tu_export_csr(ctx, C, &hb)) {
        TU_CHECK(tu_same_csr(&h0, &hb), "%s: COO -> hola -> CSR not bitwise (host build)", what);
        tu_csr_free(&hb);
    }
    if (TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_CSR, NULL, &D)) && tu_export_csr(ctx, D, &hb)) {
        TU_CHECK(tu_same_csr(&h0, &hb), "%s: hola -> CSR convert not bitwise", what);
        tu_csr_free(&hb);
    }
    for (int mode = 0; mode < 2; mode++)
        for (int ab = 0; ab < AB_COUNT; ab++) {
            const uint64_t seed = tu_rng_u64(&rng);
            double w = 0;
            void *y = NULL, *yc = NULL;
            TU_CHECK(spmv_check(&h0, B, (sps_op_mode)mode, ab, seed, &w, &y), "%s: SpMV%s (%s) off by %g", what,
                     mode ? "^T" : "", ab_name[ab], w);
            spmv_check(&h0, A, (sps_op_mode)mode, ab, seed, &w, &yc);
            const size_t bytes = (size_t)(mode == SPS_OP_N ? sh->n : sh->m) * ssz(t);
            TU_CHECK(y && yc && memcmp(y, yc, bytes) == 0, "%s: SpMV%s (%s) not bit-identical to CSR", what,
                     mode ? "^T" : "", ab_name[ab]);
            free(y);
            free(yc);
        }
out:
    sps_context_clear_error(ctx);
    sps_matrix_destroy(A);
    sps_matrix_destroy(Acoo);
    sps_matrix_destroy(B);
    sps_matrix_destroy(C);
    sps_matrix_destroy(D);
    free(h0.val);
}

static void test_registry(void)
{
    sps_format f = SPS_FMT_AUTO;
    TU_CHECK(sps_format_by_name("hola", &f) == SPS_OK && f == SPS_FMT_HOLA, "sps_format_by_name(hola)");
    TU_CHECK(strcmp(sps_format_name(SPS_FMT_HOLA), "hola") == 0, "sps_format_name(SPS_FMT_HOLA)");
    TU_CHECK(strstr(sps_format_list(), "hola") != NULL, "format list '%s' lacks hola", sps_format_list());
    TU_CHECK(sps_hola_npt(300000, 8) == 4 && sps_hola_npt(300001, 8) == 8 && sps_hola_npt(300001, 16) == 4 &&
                 sps_hola_blocks(0, 4) == 0 && sps_hola_blocks(1024, 4) == 1 && sps_hola_blocks(1025, 4) == 2 &&
                 sps_hola_blocks(2049, 8) == 2,
             "npt / block count rules");
}

/* CG on poisson2d:40 with the matrix in hola: the solver sees only the operator. */
static void test_cg(sps_scalar t)
{
    sps_matrix A = NULL, B = NULL;
    sps_operator op = NULL;
    sps_solver s = NULL;
    sps_vector b = NULL, x = NULL;
    sps_result res;
    const int n = 1600;
    void *ones = tu_xcalloc((size_t)n, ssz(t));
    unsigned char zero[16] = {0};
    for (int i = 0; i < n; i++) tu_put(t, ones, (size_t)i, 1.0, 0.0);
    const double rtol = ssz(t) == 4 || t == SPS_C32 ? 1e-5 : 1e-10;
    if (TU_OK(ctx, sps_matrix_generate(ctx, "poisson2d:40", t, &A)) &&
        TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_HOLA, NULL, &B)) && TU_OK(ctx, sps_operator_from_matrix(B, &op)) &&
        TU_OK(ctx, sps_vector_from_host(ctx, n, t, ones, &x)) && TU_OK(ctx, sps_vector_create(ctx, n, t, &b)) &&
        TU_OK(ctx, sps_operator_apply(op, SPS_OP_N, NULL, x, NULL, b)) && TU_OK(ctx, sps_vector_fill(x, zero)) &&
        TU_OK(ctx, sps_solver_create(ctx, SPS_SOLVER_CG, &s)) && TU_OK(ctx, sps_solver_set_operator(s, op)) &&
        TU_OK(ctx, sps_solver_set_tolerances(s, rtol, 0.0, 2000)) && TU_OK(ctx, sps_solver_solve(s, b, x, &res)))
        TU_CHECK(res.iterations > 10 && res.relative_residual <= rtol, "CG on hola [%s]: %d iterations, residual %g",
                 tn(t), res.iterations, res.relative_residual);
    sps_solver_destroy(s);
    sps_vector_destroy(b);
    sps_vector_destroy(x);
    sps_operator_destroy(op);
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
    free(ones);
    sps_context_clear_error(ctx);
}

int main(void)
{
    if (sps_context_create(&ctx, SPS_BACKEND_CPU, 0) != SPS_OK) {
        fprintf(stderr, "cannot create a CPU context\n");
        return 1;
    }
    tu_rng_seed(&rng, 5151);
    test_registry();
    hola_shape sh[HS_MAX];
    const int ns = hs_build(&rng, sh, 1);
    for (int si = 0; si < ns; si++) check_row_starts(&sh[si]);
    for (int ti = 0; ti < 4; ti++) {
        for (int si = 0; si < ns; si++) test_shape(&sh[si], all_types[ti]);
        test_cg(all_types[ti]);
    }
    for (int si = 0; si < ns; si++) hs_free(&sh[si]);
    sps_context_destroy(ctx);
    return tu_finish();
}
