/* Unit tests of HYB, JDS and DIA (formats/hyb.c, jds.c, dia.c and their CPU
 * kernels), for f32, f64, c32 and c64:
 *   - exact round trips CSR -> fmt -> CSR (bitwise, explicit zeros and -0.0
 *     kept) on random and adversarial shapes, through both build paths (from a
 *     CSR matrix: from_backend_csr; from COO: host from_csr) and back through
 *     sps_matrix_convert, and chains hyb -> jds -> dia -> csr;
 *   - SpMV and SpMV^T against a long double reference, outputs poisoned with
 *     NaN, alpha/beta defaulted, random, and beta = 0 with a NaN-poisoned y;
 *     JDS and DIA are also checked bit-identical to CSR's SpMV (same sums in
 *     the same order, documented in kernels/cpu/jds.c, dia.c);
 *   - sps_matrix_info: bytes, stored entries and fill against the footprint
 *     formulas recomputed here (HYB's width K by the Bell-Garland rule,
 *     including the "fewer than" boundary on both sides);
 *   - DIA's blow-up refusal (message: diagonals, entries, bytes, fill,
 *     suggestion), force, max_fill values, bad max_fill; JDS's sort_rows;
 *   - the registry names; real files from SPS_MATRIX_DIR (argv[1] or env; up to
 *     300k entries; skipped when absent).
 * Ends with "N passed, M failed". */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;
static const sps_format my_formats[3] = {SPS_FMT_HYB, SPS_FMT_JDS, SPS_FMT_DIA};

/* ------------------------------------------------------------------ helpers */
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }
static const char *fn(sps_format f) { return sps_format_name(f); }
static int contains(const char *hay, const char *needle) { return hay && needle && strstr(hay, needle) != NULL; }

/* ------------------------------------------------------------------ shapes (testutil's builders) */
static int nshapes;
static tu_shape shapes[32];
static int hyb_K[32]; /* expected HYB width when the shape is built to test the rule; -1: not asserted */
static void add(tu_shape s)
{
    hyb_K[nshapes] = -1;
    shapes[nshapes++] = s;
}

static void build_shapes(void)
{
    int *len = tu_xcalloc(40000, sizeof *len);
    for (int i = 0; i < 100; i++)
        len[i] = (i < 4 || (i >= 31 && i <= 33) || (i >= 64 && i < 96)) ? 0 : (int)(tu_rng_u64(&rng) % 10);
    add(tu_shape_make(&rng, "random 100x90, empty rows at 32-row borders", 100, 90, len, -1));
    for (int i = 0; i < 30; i++) len[i] = i == 11 ? 300 : (int)(tu_rng_u64(&rng) % 3);
    add(tu_shape_make(&rng, "one dense row", 30, 300, len, -1));
    len[0] = 1;
    add(tu_shape_make(&rng, "1x1", 1, 1, len, -1));
    len[0] = 0;
    add(tu_shape_make(&rng, "1x1 no entry", 1, 1, len, -1));
    for (int i = 0; i < 200; i++) len[i] = (int)(tu_rng_u64(&rng) % 2);
    add(tu_shape_make(&rng, "200x1", 200, 1, len, -1));
    len[0] = 700;
    add(tu_shape_make(&rng, "1x1000", 1, 1000, len, -1));
    for (int i = 0; i < 80; i++) len[i] = i % 5 != 2;
    add(tu_shape_make(&rng, "all entries in column 17", 80, 50, len, 17));
    for (int i = 0; i < 25; i++) len[i] = 0;
    add(tu_shape_make(&rng, "25x25 no entries", 25, 25, len, -1));
    add(tu_shape_make(&rng, "0x0", 0, 0, len, -1));
    add(tu_shape_make(&rng, "0x7", 0, 7, len, -1));
    add(tu_shape_make(&rng, "7x0", 7, 0, len, -1));
    for (int i = 0; i < 3000; i++) len[i] = i == 1500 ? 2500 : (int)(tu_rng_u64(&rng) % 6);
    add(tu_shape_make(&rng, "3000x2600 with one long row", 3000, 2600, len, -1));
    add(tu_shape_band(&rng, "tridiagonal 1000x1000", 1000, 1000, -1, 1, 1.0));
    add(tu_shape_band(&rng, "band 300x200, offsets -5..3, 80% kept", 300, 200, -5, 3, 0.8));
    add(tu_shape_band(&rng, "band 200x300, offsets -2..40, 30% kept", 200, 300, -2, 40, 0.3));
    add(tu_shape_band(&rng, "band 77x77, offsets -70..70 (diagonals leave the matrix)", 77, 77, -70, 70, 0.5));
    /* HYB width rule, threshold 4096 rows (n <= 12288): K = 3, 50 long rows spill */
    for (int i = 0; i < 5000; i++) len[i] = i % 100 == 7 ? 40 : (i % 33 == 5 ? 0 : 3);
    add(tu_shape_make(&rng, "hyb rule 5000x5000 (4096 rows)", 5000, 5000, len, -1));
    hyb_K[nshapes - 1] = 3;
    /* threshold n/3 = 10000: 40% of rows of length 2, 35% of 5, 25% of 9 -> K = 5; empty rows 32..63, one dense row */
    for (int i = 0; i < 30000; i++) len[i] = i % 20 < 8 ? 2 : i % 20 < 15 ? 5 : 9;
    for (int i = 32; i < 64; i++) len[i] = 0;
    len[20001] = 2000;
    add(tu_shape_make(&rng, "hyb rule 30000x25000 (n/3 rows)", 30000, 25000, len, -1));
    hyb_K[nshapes - 1] = 5;
    /* "fewer than": exactly n/3 = 4096 rows longer than 1 is not fewer -> K = 4; one row less -> K = 1 */
    for (int i = 0; i < 12288; i++) len[i] = i % 3 == 0 ? 4 : 1;
    add(tu_shape_make(&rng, "hyb boundary 12288 rows, 4096 of length 4", 12288, 12288, len, -1));
    hyb_K[nshapes - 1] = 4;
    len[0] = 1;
    add(tu_shape_make(&rng, "hyb boundary 12288 rows, 4095 of length 4", 12288, 12288, len, -1));
    hyb_K[nshapes - 1] = 1;
    free(len);
}

static void free_shapes(void)
{
    for (int i = 0; i < nshapes; i++) tu_shape_free(&shapes[i]);
}

/* ------------------------------------------------------------------ expected footprints */
static int64_t rowlen(const tu_csr *h, int i) { return h->rowptr[i + 1] - h->rowptr[i]; }

/* Bell-Garland: smallest K with fewer than max(n/3, 4096) rows longer than K. */
static int expect_hyb_K(const tu_csr *h)
{
    const int n = h->info.rows;
    for (int K = 0;; K++) {
        int64_t longer = 0;
        for (int i = 0; i < n; i++) longer += rowlen(h, i) > K;
        if ((double)longer < fmax(n / 3.0, 4096.0)) return K;
    }
}

static int64_t count_diagonals(const tu_csr *h)
{
    const int n = h->info.rows, m = h->info.cols;
    if (n == 0 || m == 0) return 0;
    unsigned char *f = tu_xcalloc((size_t)n + m, 1);
    int64_t nd = 0;
    for (int i = 0; i < n; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) {
            unsigned char *p = &f[h->col[k] - i + n - 1];
            nd += !*p;
            *p = 1;
        }
    free(f);
    return nd;
}

/* Expected bytes and stored slots of format f for the matrix h. */
static size_t expect_bytes(sps_format f, const tu_csr *h, int64_t *stored)
{
    const int n = h->info.rows;
    const int64_t nnz = h->info.nnz;
    const size_t s = ssz(h->info.scalar);
    if (f == SPS_FMT_HYB) {
        const int K = expect_hyb_K(h);
        const int64_t ld = ((int64_t)n + 31) / 32 * 32;
        int64_t ntail = 0;
        for (int i = 0; i < n; i++) ntail += rowlen(h, i) > K ? rowlen(h, i) - K : 0;
        *stored = K * ld + ntail;
        return (size_t)(K * ld) * (4 + s) + (size_t)ntail * (8 + s);
    }
    if (f == SPS_FMT_JDS) {
        int64_t maxlen = 0;
        for (int i = 0; i < n; i++) maxlen = rowlen(h, i) > maxlen ? rowlen(h, i) : maxlen;
        *stored = nnz;
        return (size_t)n * 4 + (size_t)(maxlen + 1) * 4 + (size_t)nnz * (4 + s);
    }
    const int64_t nd = count_diagonals(h), nw = ((int64_t)n + 31) / 32;
    *stored = nd * n;
    return (size_t)nd * (4 + (size_t)n * s + (size_t)nw * 4);
}

/* ------------------------------------------------------------------ one shape in one format */
static void check_info(const char *what, sps_matrix B, sps_format f, const tu_csr *h)
{
    sps_matrix_info_t info;
    memset(&info, 0xab, sizeof info);
    if (!TU_OK(ctx, sps_matrix_info(B, &info))) return;
    int64_t stored;
    const size_t bytes = expect_bytes(f, h, &stored);
    const double fill = h->info.nnz ? 100.0 * (double)(stored - h->info.nnz) / (double)h->info.nnz : 0.0;
    TU_CHECK(info.format == f && info.format_name && strcmp(info.format_name, fn(f)) == 0 && info.rows == h->info.rows &&
                 info.cols == h->info.cols && info.nnz == h->info.nnz && info.scalar == h->info.scalar &&
                 info.bytes == bytes && info.stored_entries == stored && info.fill_percent == fill &&
                 info.backend == SPS_BACKEND_CPU,
             "%s: info %s %dx%d nnz %lld bytes %zu (want %zu) stored %lld (want %lld) fill %g (want %g)", what,
             info.format_name ? info.format_name : "(null)", (int)info.rows, (int)info.cols, (long long)info.nnz,
             info.bytes, bytes, (long long)info.stored_entries, (long long)stored, info.fill_percent, fill);
}

/* Would DIA refuse this matrix at the default max_fill? */
static int dia_refuses(const tu_csr *h, double max_fill)
{
    return (double)(count_diagonals(h) * h->info.rows) > max_fill * (double)h->info.nnz;
}

static void check_refusal(const char *what, sps_status s, sps_matrix B, const tu_csr *h)
{
    char nd[64];
    snprintf(nd, sizeof nd, "%lld diagonals", (long long)count_diagonals(h));
    const char *msg = sps_context_error(ctx);
    TU_CHECK(s == SPS_ERR_ARG && B == NULL && contains(msg, nd) && contains(msg, "bytes") && contains(msg, "hyb") &&
                 contains(msg, "max-fill") && contains(msg, "force") && contains(msg, "fill factor") &&
                 contains(msg, "stored entries"),
             "%s: DIA refusal: %s, B %p, '%s' (want SPS_ERR_ARG naming '%s', bytes, fill, hyb, force)", what,
             sps_status_name(s), (void *)B, msg, nd);
    sps_context_clear_error(ctx);
}

static void check_spmv_all(const char *what, sps_format f, sps_matrix B, sps_matrix A_csr, const tu_csr *h)
{
    for (int mode = 0; mode < 2; mode++)
        for (int ab = 0; ab < TU_AB_COUNT; ab++) {
            const uint64_t seed = tu_rng_u64(&rng);
            double w = 0;
            void *y = NULL, *yc = NULL;
            const int ok = tu_spmv_check(ctx, h, B, (sps_op_mode)mode, ab, seed, &w, &y);
            TU_CHECK(ok, "%s: SpMV%s (%s) off by %g", what, mode ? "^T" : "", tu_ab_name[ab], w);
            if (mode == SPS_OP_N && f != SPS_FMT_HYB) { /* JDS and DIA sum exactly as CSR does */
                tu_spmv_check(ctx, h, A_csr, SPS_OP_N, ab, seed, &w, &yc);
                const size_t bytes = (size_t)h->info.rows * ssz(h->info.scalar);
                TU_CHECK(memcmp(y, yc, bytes) == 0, "%s: SpMV (%s) not bit-identical to CSR", what, tu_ab_name[ab]);
            }
            free(y);
            free(yc);
        }
}

/* Round trips and SpMV of one shape in one format and type. */
static void test_shape(const tu_shape *sh, int K, sps_scalar t, sps_format f)
{
    char what[256];
    snprintf(what, sizeof what, "%s [%s %s]", sh->name, fn(f), tn(t));
    tu_csr h0 = tu_shape_csr(sh, t, tu_shape_values(&rng, t, sh->nnz, 1));
    sps_matrix A = NULL, Acoo = NULL, B = NULL, C = NULL, D = NULL;
    sps_options opt = NULL; /* the defaults */
    if (!TU_OK(ctx, sps_matrix_from_csr(ctx, sh->n, sh->m, sh->rowptr, sh->col, h0.val, t, &A))) goto out;
    if (!TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_COO, NULL, &Acoo))) goto out;
    if (f == SPS_FMT_DIA && dia_refuses(&h0, 10.0)) {
        B = (sps_matrix)&h0; /* must be overwritten with NULL */
        {
            const sps_status rs_ = sps_matrix_convert(A, f, NULL, &B);
            check_refusal(what, rs_, B, &h0);
        }
        if (count_diagonals(&h0) * sh->n > 4000000) goto out; /* forcing would be legitimately huge */
        opt = tu_fopts(f, "force", "true", NULL);
    }
    /* CSR source: from_backend_csr */
    if (!TU_OK(ctx, sps_matrix_convert(A, f, opt, &B))) goto out;
    check_info(what, B, f, &h0);
    TU_CHECK_EXPORT(ctx, B, &h0, "%s: CSR -> %s -> CSR not bitwise (from CSR)", what, fn(f));
    if (f == SPS_FMT_HYB && K >= 0) /* and check_info found the library's K to be the rule's */
        TU_CHECK(expect_hyb_K(&h0) == K, "%s: the shape was built for K = %d, the rule gives %d", what, K,
                 expect_hyb_K(&h0));
    /* COO source: host from_csr */
    if (TU_OK(ctx, sps_matrix_convert(Acoo, f, opt, &C))) {
        check_info(what, C, f, &h0);
        TU_CHECK_EXPORT(ctx, C, &h0, "%s: COO -> %s -> CSR not bitwise (host build)", what, fn(f));
    }
    /* back through sps_matrix_convert (to_csr), and into COO */
    if (TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_CSR, NULL, &D)))
        TU_CHECK_EXPORT(ctx, D, &h0, "%s: %s -> CSR convert not bitwise", what, fn(f));
    check_spmv_all(what, f, B, A, &h0);
out:
    sps_context_clear_error(ctx);
    TU_DESTROY_MATRICES(A, Acoo, B, C, D);
    sps_options_destroy(opt);
    free(h0.val);
}

/* DIA's values dict (formats/vdict.h): a band of 2000 rows whose values are drawn from
 * 1 to 30 (+0 and -0 among them): one byte a slot plus the sorted table, the exact
 * round trip, products bit-identical to CSR's; values plain and auto (the CPU's: plain)
 * store the values; dict refused past 256 distinct values. */
static void test_dia_dict(sps_scalar t)
{
    tu_shape sh = tu_shape_band(&rng, "band 2000, offsets -3..3", 2000, 2000, -3, 3, 0.7);
    const size_t ss = ssz(t);
    void *val = tu_pool_values(&rng, t, sh.nnz, 1 + (int)(tu_rng_u64(&rng) % 30));
    /* distinct patterns, padding's +0 with them (a band of 7 diagonals pads at the borders) */
    const int nd = tu_distinct_values(t, val, sh.nnz, 1);
    tu_csr h = tu_shape_csr(&sh, t, val);
    sps_matrix A = NULL, B = NULL;
    const char *modes[3] = {"dict", "plain", "auto"};
    if (TU_OK(ctx, sps_matrix_from_csr(ctx, sh.n, sh.m, sh.rowptr, sh.col, val, t, &A)))
        for (int k = 0; k < 3; k++) {
            char what[128];
            snprintf(what, sizeof what, "DIA values %s, %d values [%s]", modes[k], nd, tn(t));
            sps_options o = tu_fopts(SPS_FMT_DIA, "values", modes[k], NULL);
            sps_matrix_info_t info;
            if (TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_DIA, o, &B)) && TU_OK(ctx, sps_matrix_info(B, &info))) {
                const int64_t ndg = count_diagonals(&h), nw = (sh.n + 31) / 32;
                const size_t want = (size_t)ndg * (4 + (size_t)sh.n * (k ? ss : 1) + (size_t)nw * 4) + (k ? 0 : nd * ss);
                TU_CHECK(info.bytes == want, "%s: %zu bytes, want %zu", what, info.bytes, want);
                TU_CHECK_EXPORT(ctx, B, &h, "%s: round trip", what);
                check_spmv_all(what, SPS_FMT_DIA, B, A, &h);
            }
            sps_matrix_destroy(B);
            B = NULL;
            sps_options_destroy(o);
        }
    sps_matrix_destroy(A);
    free(val); /* h borrows the shape's arrays and val: nothing of its own to free */
    /* many values: refused, naming dia */
    val = tu_shape_values(&rng, t, sh.nnz, 0);
    sps_options o = tu_fopts(SPS_FMT_DIA, "values", "dict", NULL);
    A = NULL;
    B = (sps_matrix)&rng;
    if (TU_OK(ctx, sps_matrix_from_csr(ctx, sh.n, sh.m, sh.rowptr, sh.col, val, t, &A))) {
        const sps_status st = sps_matrix_convert(A, SPS_FMT_DIA, o, &B);
        TU_CHECK(st == SPS_ERR_ARG && !B && contains(sps_context_error(ctx), "dia: values dict refused"),
                 "DIA values dict, random values [%s]: %s '%s'", tn(t), sps_status_name(st), sps_context_error(ctx));
        sps_context_clear_error(ctx);
    }
    sps_options_destroy(o);
    sps_matrix_destroy(A);
    free(val);
    tu_shape_free(&sh);
}

/* ------------------------------------------------------------------ specific tests */
static void test_registry(void)
{
    const char *names[3] = {"hyb", "jds", "dia"};
    for (int i = 0; i < 3; i++) {
        sps_format f = SPS_FMT_AUTO;
        TU_CHECK(sps_format_by_name(names[i], &f) == SPS_OK && f == my_formats[i], "sps_format_by_name(%s)", names[i]);
        TU_CHECK(strcmp(sps_format_name(my_formats[i]), names[i]) == 0, "sps_format_name(%d)", (int)my_formats[i]);
        TU_CHECK(contains(sps_format_list(), names[i]), "format list '%s' lacks %s", sps_format_list(), names[i]);
    }
}

/* DIA's options: max_fill thresholds, force, invalid values; a rectangular band. */
static void test_dia_options(sps_scalar t)
{
    sps_matrix A = NULL, B = NULL;
    tu_csr h;
    /* tridiagonal 100x100: 298 entries, 3 diagonals x 100 = 300 slots (fill 1.0067) */
    tu_shape tri = tu_shape_band(&rng, "tri", 100, 100, -1, 1, 1.0);
    void *val = tu_xcalloc((size_t)tri.nnz, ssz(t));
    tu_fill_random(&rng, t, (size_t)tri.nnz, val);
    if (!TU_OK(ctx, sps_matrix_from_csr(ctx, tri.n, tri.m, tri.rowptr, tri.col, val, t, &A))) goto out;
    if (!tu_export_csr(ctx, A, &h)) goto out;
    sps_options opt = tu_fopts(SPS_FMT_DIA, "max-fill", "1", NULL);
    B = (sps_matrix)&h;
    {
        const sps_status rs_ = sps_matrix_convert(A, SPS_FMT_DIA, opt, &B);
        check_refusal("tridiagonal, max_fill 1.0", rs_, B, &h);
    }
    sps_options_set(opt, "max-fill", "1.01");
    B = NULL;
    if (TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_DIA, opt, &B))) {
        sps_matrix_info_t info;
        sps_matrix_info(B, &info);
        TU_CHECK(info.stored_entries == 300 && fabs(info.fill_percent - 100.0 * 2 / 298) < 1e-12,
                 "tridiagonal DIA: stored %lld fill %g", (long long)info.stored_entries, info.fill_percent);
    }
    sps_matrix_destroy(B);
    sps_options_set(opt, "max-fill", "1");
    sps_options_set(opt, "force", "true");
    B = NULL;
    TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_DIA, opt, &B)); /* force beats max_fill */
    sps_matrix_destroy(B);
    sps_options_set(opt, "force", "false");
    const char *const bad[] = {"-1", "nan", "0.5", "0"}; /* below 1 every matrix would be refused */
    for (int q = 0; q < 4; q++) {
        sps_status s = sps_options_set(opt, "max-fill", bad[q]);
        TU_CHECK(s == SPS_ERR_ARG && contains(sps_options_error(opt), "max-fill: expected a finite number >= 1"),
                 "DIA max-fill %s: %s '%s'", bad[q], sps_status_name(s), sps_options_error(opt));
    }
    /* the default (10) accepts a tridiagonal matrix; options DIA does not declare are refused */
    sps_options_destroy(opt);
    opt = tu_fopts(SPS_FMT_DIA, NULL);
    TU_CHECK(sps_options_set(opt, "slice-height", "32") == SPS_ERR_ARG &&
                 contains(sps_options_error(opt), "unknown option 'slice-height' (dia reads max-fill, force, values)"),
             "dia slice-height: '%s'", sps_options_error(opt));
    B = NULL;
    TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_DIA, opt, &B));
    sps_matrix_destroy(B);
    B = NULL;
    /* scattered: 300x300 with 2 random entries a row -> hundreds of diagonals, refused at the default */
    {
        int len[300];
        for (int i = 0; i < 300; i++) len[i] = 2;
        tu_shape sc = tu_shape_make(&rng, "scattered", 300, 300, len, -1);
        void *v2 = tu_xcalloc((size_t)sc.nnz, ssz(t));
        tu_fill_random(&rng, t, (size_t)sc.nnz, v2);
        sps_matrix S = NULL;
        tu_csr hs;
        if (TU_OK(ctx, sps_matrix_from_csr(ctx, sc.n, sc.m, sc.rowptr, sc.col, v2, t, &S)) && tu_export_csr(ctx, S, &hs)) {
            B = (sps_matrix)&hs;
            {
            const sps_status rs_ = sps_matrix_convert(S, SPS_FMT_DIA, NULL, &B);
            check_refusal("scattered 300x300", rs_, B, &hs);
        }
            sps_options_set(opt, "max-fill", "1e6");
            B = NULL;
            if (TU_OK(ctx, sps_matrix_convert(S, SPS_FMT_DIA, opt, &B))) {
                TU_CHECK_EXPORT(ctx, B, &hs, "scattered DIA with max_fill 1e6: round trip");
            }
            sps_matrix_destroy(B);
            B = NULL;
            tu_csr_free(&hs);
        }
        sps_matrix_destroy(S);
        tu_shape_free(&sc);
        free(v2);
    }
    tu_csr_free(&h);
    sps_options_destroy(opt);
out:
    sps_matrix_destroy(A);
    tu_shape_free(&tri);
    free(val);
    sps_context_clear_error(ctx);
}

/* JDS: sort_rows 0 and 1 give the same (always sorted) matrix. */
static void test_jds_options(sps_scalar t)
{
    const tu_shape *sh = &shapes[0];
    void *val = tu_xcalloc((size_t)sh->nnz, ssz(t));
    tu_fill_random(&rng, t, (size_t)sh->nnz, val);
    sps_matrix A = NULL, B0 = NULL, B1 = NULL;
    tu_csr h0, h1, ha;
    if (TU_OK(ctx, sps_matrix_from_csr(ctx, sh->n, sh->m, sh->rowptr, sh->col, val, t, &A)) && tu_export_csr(ctx, A, &ha)) {
        sps_options opt = tu_fopts(SPS_FMT_JDS, NULL);
        TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_JDS, NULL, &B0));
        TU_CHECK(sps_options_set(opt, "sort-rows", "false") == SPS_ERR_ARG, "jds sort-rows is always true");
        sps_options_set(opt, "sort-rows", "true");
        TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_JDS, opt, &B1));
        sps_options_destroy(opt);
        if (B0 && B1 && tu_export_csr(ctx, B0, &h0)) {
            if (tu_export_csr(ctx, B1, &h1)) {
                TU_CHECK(tu_same_csr(&h0, &h1) && tu_same_csr(&h0, &ha), "JDS sort_rows 0/1 [%s]", tn(t));
                tu_csr_free(&h1);
            }
            tu_csr_free(&h0);
        }
        tu_csr_free(&ha);
    }
    TU_DESTROY_MATRICES(A, B0, B1);
    free(val);
}

/* HYB on poisson2d:100: K = 5 (every row fits), no tail. */
static void test_hyb_generated(void)
{
    sps_matrix A = NULL, B = NULL;
    if (TU_OK(ctx, sps_matrix_generate(ctx, "poisson2d:100", SPS_F64, &A)) &&
        TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_HYB, NULL, &B))) {
        sps_matrix_info_t info;
        sps_matrix_info(B, &info);
        TU_CHECK(info.stored_entries == 5 * 10016 && info.bytes == (size_t)5 * 10016 * 12,
                 "poisson2d:100 HYB: stored %lld bytes %zu (want K = 5, ld 10016, no tail)", (long long)info.stored_entries,
                 info.bytes);
        tu_csr h;
        if (tu_export_csr(ctx, A, &h)) {
            for (int mode = 0; mode < 2; mode++) {
                double w = 0;
                const int ok = tu_spmv_check(ctx, &h, B, (sps_op_mode)mode, TU_AB_RANDOM, 99 + mode, &w, NULL);
                TU_CHECK(ok, "poisson2d:100 HYB SpMV%s: %g", mode ? "^T" : "", w);
            }
            tu_csr_free(&h);
        }
    }
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

/* Chains between the three formats (host paths: to_csr then from_csr). */
static void test_chain(sps_scalar t)
{
    const tu_shape *sh = &shapes[0];
    tu_csr h0 = tu_shape_csr(sh, t, tu_shape_values(&rng, t, sh->nnz, 1));
    sps_options opt = tu_fopts(SPS_FMT_DIA, "force", "true", NULL);
    sps_matrix A = NULL, H = NULL, J = NULL, D = NULL, C = NULL;
    tu_csr h;
    if (TU_OK(ctx, sps_matrix_from_csr(ctx, sh->n, sh->m, sh->rowptr, sh->col, h0.val, t, &A)) &&
        TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_HYB, NULL, &H)) && TU_OK(ctx, sps_matrix_convert(H, SPS_FMT_JDS, NULL, &J)) &&
        TU_OK(ctx, sps_matrix_convert(J, SPS_FMT_DIA, opt, &D)) && TU_OK(ctx, sps_matrix_convert(D, SPS_FMT_HYB, NULL, &C)) &&
        tu_export_csr(ctx, C, &h)) {
        TU_CHECK(tu_same_csr(&h0, &h), "csr -> hyb -> jds -> dia -> hyb -> csr [%s] not bitwise", tn(t));
        tu_csr_free(&h);
    }
    TU_DESTROY_MATRICES(A, H, J, D, C);
    sps_options_destroy(opt);
    free(h0.val);
}

/* ------------------------------------------------------------------ real matrices */
static void check_corpus(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *mf = fopen(path, "r");
    if (!TU_CHECK(mf != NULL, "cannot open %s", path)) return;
    char line[4096];
    int files = 0, skipped = 0, refused = 0;
    while (fgets(line, sizeof line, mf)) {
        char name[256], group[64], symm[64];
        long rows, cols, nnzf;
        if (sscanf(line, "%255[^\t]\t%63[^\t]\t%ld\t%ld\t%ld\t%63[^\t]", name, group, &rows, &cols, &nnzf, symm) != 6)
            continue; /* header */
        const long expanded = strcmp(symm, "general") ? 2 * nnzf : nnzf;
        if (expanded > 300000) {
            skipped++;
            continue;
        }
        snprintf(path, sizeof path, "%s/%s/%s.mtx.gz", dir, group, name);
        sps_matrix A = NULL;
        tu_csr ha;
        if (!TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_F64, &A))) continue;
        if (!tu_export_csr(ctx, A, &ha)) {
            sps_matrix_destroy(A);
            continue;
        }
        files++;
        for (int fi = 0; fi < 3; fi++) {
            const sps_format f = my_formats[fi];
            char what[512];
            snprintf(what, sizeof what, "%s/%s [%s]", group, name, fn(f));
            sps_matrix B = NULL;
            if (f == SPS_FMT_DIA && dia_refuses(&ha, 10.0)) {
                B = (sps_matrix)&ha;
                {
            const sps_status rs_ = sps_matrix_convert(A, f, NULL, &B);
            check_refusal(what, rs_, B, &ha);
        }
                refused++;
                continue;
            }
            if (!TU_OK(ctx, sps_matrix_convert(A, f, NULL, &B))) continue;
            check_info(what, B, f, &ha);
            TU_CHECK_EXPORT(ctx, B, &ha, "%s: round trip not bitwise", what);
            for (int mode = 0; mode < 2; mode++) {
                double w = 0;
                const int ok = tu_spmv_check(ctx, &ha, B, (sps_op_mode)mode, TU_AB_RANDOM, tu_rng_u64(&rng), &w, NULL);
                TU_CHECK(ok, "%s: SpMV%s off by %g", what, mode ? "^T" : "", w);
            }
            sps_matrix_destroy(B);
        }
        tu_csr_free(&ha);
        sps_matrix_destroy(A);
    }
    fclose(mf);
    printf("corpus: %d files checked in hyb/jds/dia (%d DIA refusals checked), %d larger ones skipped\n", files, refused,
           skipped);
    TU_CHECK(files > 0, "no corpus file could be checked");
}

int main(int argc, char **argv)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 4242);
    test_registry();
    build_shapes();
    test_hyb_generated();
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti];
        for (int fi = 0; fi < 3; fi++)
            for (int si = 0; si < nshapes; si++) test_shape(&shapes[si], hyb_K[si], t, my_formats[fi]);
        test_dia_options(t);
        test_dia_dict(t);
        test_jds_options(t);
        test_chain(t);
    }
    free_shapes();
    const char *dir = tu_matrix_dir(argc, argv, 1);
    if (!dir) printf("real matrices: skipped (no SPS_MATRIX_DIR)\n");
    else check_corpus(dir);
    sps_context_destroy(ctx);
    return tu_finish();
}
