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
#include "formats/format.h"
#include "hola_shapes.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;

static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }

/* ------------------------------------------------------------------ row starts */
/* The row holding entry k (a non-empty row), by scanning. */
static sps_index row_of_entry(const tu_shape *sh, int64_t k)
{
    sps_index r = 0;
    while (sh->rowptr[r + 1] <= k) r++;
    return r;
}

static void check_row_starts(const tu_shape *sh)
{
    for (int npt = HOLA_NPT_SMALL; npt <= HOLA_NPT_LARGE; npt *= 2) {
        const sps_index nb = sps_hola_blocks(sh->nnz, npt);
        sps_index *rs = tu_xcalloc((size_t)nb + 1, sizeof *rs);
        for (sps_index b = 0; b <= nb; b++) rs[b] = -77; /* poison */
        if (!TU_OK(ctx, sps_cpu_idx_kernels.hola_row_starts(sps_ex(ctx), sh->n, sh->nnz, sh->rowptr, npt, rs))) {
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
static size_t expect_bytes(const tu_shape *sh, sps_scalar t, int *npt)
{
    *npt = sh->nnz > 300000 && ssz(t) <= 8 ? 8 : 4;
    const int64_t nb = (sh->nnz + 256 * *npt - 1) / (256 * *npt);
    return ((size_t)sh->n + 1) * 4 + (size_t)sh->nnz * (4 + ssz(t)) + (size_t)(nb + 1) * 4;
}

static void test_shape(const tu_shape *sh, sps_scalar t)
{
    char what[256];
    snprintf(what, sizeof what, "%s [hola %s]", sh->name, tn(t));
    tu_csr h0 = tu_shape_csr(sh, t, tu_shape_values(&rng, t, sh->nnz, 1));
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
    TU_CHECK_EXPORT(ctx, B, &h0, "%s: CSR -> hola -> CSR not bitwise (from CSR)", what);
    if (TU_OK(ctx, sps_matrix_convert(Acoo, SPS_FMT_HOLA, NULL, &C)))
        TU_CHECK_EXPORT(ctx, C, &h0, "%s: COO -> hola -> CSR not bitwise (host build)", what);
    if (TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_CSR, NULL, &D)))
        TU_CHECK_EXPORT(ctx, D, &h0, "%s: hola -> CSR convert not bitwise", what);
    for (int mode = 0; mode < 2; mode++)
        for (int ab = 0; ab < TU_AB_COUNT; ab++) {
            const uint64_t seed = tu_rng_u64(&rng);
            double w = 0;
            void *y = NULL, *yc = NULL;
            TU_CHECK(tu_spmv_check(ctx, &h0, B, (sps_op_mode)mode, ab, seed, &w, &y), "%s: SpMV%s (%s) off by %g",
                     what, mode ? "^T" : "", tu_ab_name[ab], w);
            tu_spmv_check(ctx, &h0, A, (sps_op_mode)mode, ab, seed, &w, &yc);
            const size_t bytes = (size_t)(mode == SPS_OP_N ? sh->n : sh->m) * ssz(t);
            TU_CHECK(y && yc && memcmp(y, yc, bytes) == 0, "%s: SpMV%s (%s) not bit-identical to CSR", what,
                     mode ? "^T" : "", tu_ab_name[ab]);
            free(y);
            free(yc);
        }
out:
    sps_context_clear_error(ctx);
    TU_DESTROY_MATRICES(A, Acoo, B, C, D);
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
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 5151);
    test_registry();
    tu_shape sh[HS_MAX];
    const int ns = hs_build(&rng, sh, 1);
    for (int si = 0; si < ns; si++) check_row_starts(&sh[si]);
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        for (int si = 0; si < ns; si++) test_shape(&sh[si], tu_all_types[ti]);
        test_cg(tu_all_types[ti]);
    }
    for (int si = 0; si < ns; si++) tu_shape_free(&sh[si]);
    sps_context_destroy(ctx);
    return tu_finish();
}
