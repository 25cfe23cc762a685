/* Unit tests of the CSR and COO formats and the matrix layer (formats/matrix.c,
 * csr_host.c, csr.c, coo.c, generate.c, registry.c):
 *   construction from COO/CSR arrays (unsorted, duplicates, errors), canonical
 *   export, CSR -> COO -> CSR round trips (bitwise), sps_matrix_info, diagonal,
 *   the format registry, the generators against an independent construction,
 *   Matrix Market write/read round trips, conversions starting without A's
 *   reading warning and launch variant, the compound padded formats' 16-bit
 *   refusal, and the real-matrix corpus: each file
 *   checked against an independent reader, CSR and COO SpMV against a long
 *   double reference.
 *
 *   test_formats [MATRIX_DIR]      (or env SPS_MATRIX_DIR; skipped when absent)
 *
 * Ends with "N passed, M failed". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "formats/format.h"
#include "kernels/csr_merge.h"
#include "testutil.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static sps_context ctx;
static tu_rng rng;
static char tmpdir_path[512];

/* ------------------------------------------------------------------ helpers */
static int cplx(sps_scalar t) { return sps_scalar_is_complex(t); }
static int single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }

static int contains(const char *hay, const char *needle) { return hay && needle && strstr(hay, needle) != NULL; }

/* A random multiple of 1/64 in [-4, 4], never 0: sums of a few are exact in float. */
static double dyadic(void)
{
    double v = (double)((int)(tu_rng_u64(&rng) % 512) - 256) / 64.0;
    return v == 0.0 ? 0.5 : v;
}

/* Dense reference of an n x m matrix: sums and a "stored" flag. */
typedef struct {
    int n, m;
    double *re, *im;
    unsigned char *present;
} dense;
static dense dense_new(int n, int m)
{
    dense d = {n, m, tu_xcalloc((size_t)n * m, sizeof(double)), tu_xcalloc((size_t)n * m, sizeof(double)),
               tu_xcalloc((size_t)n * m, 1)};
    return d;
}
static void dense_free(dense *d)
{
    free(d->re);
    free(d->im);
    free(d->present);
}

/* Exported CSR is canonical (rowptr from 0, non-decreasing, ends at nnz; columns
 * strictly increasing and in range) and equal to the dense reference exactly. */
static void check_against_dense(const char *what, const tu_csr *h, const dense *d)
{
    const sps_scalar t = h->info.scalar;
    int ok = h->info.rows == d->n && h->info.cols == d->m;
    TU_CHECK(ok, "%s [%s]: size %dx%d, want %dx%d", what, tn(t), (int)h->info.rows, (int)h->info.cols, d->n, d->m);
    if (!ok) return;
    int64_t want_nnz = 0;
    for (size_t q = 0; q < (size_t)d->n * d->m; q++) want_nnz += d->present[q];
    TU_CHECK(h->info.nnz == want_nnz, "%s [%s]: nnz %lld, want %lld", what, tn(t), (long long)h->info.nnz,
             (long long)want_nnz);
    if (h->info.nnz != want_nnz) return;
    int canon = h->rowptr[0] == 0 && h->rowptr[d->n] == want_nnz;
    for (int i = 0; i < d->n && canon; i++) {
        if (h->rowptr[i + 1] < h->rowptr[i]) canon = 0;
        for (sps_index k = h->rowptr[i]; canon && k < h->rowptr[i + 1]; k++)
            if (h->col[k] < 0 || h->col[k] >= d->m || (k > h->rowptr[i] && h->col[k] <= h->col[k - 1])) canon = 0;
    }
    TU_CHECK(canon, "%s [%s]: exported CSR is not canonical", what, tn(t));
    if (!canon) return;
    long bad = 0;
    int bi = -1, bj = -1;
    double gr = 0, gi = 0;
    for (int i = 0; i < d->n; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) {
            const size_t q = (size_t)i * d->m + h->col[k];
            double re, im;
            tu_get(t, h->val, (size_t)k, &re, &im);
            double wr = single(t) ? (float)d->re[q] : d->re[q], wi = cplx(t) ? (single(t) ? (float)d->im[q] : d->im[q]) : 0;
            if (!d->present[q] || re != wr || im != wi) {
                if (!bad) { bi = i; bj = h->col[k]; gr = re; gi = im; }
                bad++;
            }
        }
    TU_CHECK(bad == 0, "%s [%s]: %ld wrong entries, first (%d,%d) = (%g,%g)", what, tn(t), bad, bi, bj, gr, gi);
}

/* ------------------------------------------------------------------ from_coo */
static void test_from_coo(sps_scalar t)
{
    const int n = 37, m = 23, nnz = 400;
    sps_index *row = tu_xcalloc(nnz, sizeof *row), *col = tu_xcalloc(nnz, sizeof *col);
    void *val = tu_xcalloc(nnz, ssz(t));
    dense d = dense_new(n, m);
    for (int k = 0; k < nnz; k++) {
        int i;
        do i = (int)(tu_rng_u64(&rng) % n); while (i == 0 || i == 5 || i == n - 1); /* empty rows */
        int j = (int)(tu_rng_u64(&rng) % 9) * 2 + (int)(tu_rng_u64(&rng) % 2) * 3; /* < m, many duplicates */
        row[k] = i;
        col[k] = j;
        double re = dyadic(), im = cplx(t) ? dyadic() : 0.0;
        tu_put(t, val, k, re, im);
        d.re[(size_t)i * m + j] += re;
        d.im[(size_t)i * m + j] += im;
        d.present[(size_t)i * m + j] = 1;
    }
    sps_matrix A = (sps_matrix)&d; /* must be overwritten */
    TU_OK(ctx, sps_matrix_from_coo(ctx, n, m, nnz, row, col, val, t, &A));
    tu_csr h;
    TU_CHECK(A && tu_export_csr(NULL, A, &h), "from_coo export");
    check_against_dense("from_coo (unsorted, duplicates summed)", &h, &d);
    TU_CHECK(h.info.format == SPS_FMT_CSR && contains(h.info.format_name, "csr") && h.info.symmetry == SPS_SYM_GENERAL &&
                 h.info.scalar == t,
             "from_coo info: format %s symmetry %d", h.info.format_name, (int)h.info.symmetry);
    tu_csr_free(&h);
    sps_matrix_destroy(A);

    /* errors: out-of-range indices name the entry */
    struct { int k; int bad_row, bad_col; } cases[] = {{5, n, -2}, {7, -1, -2}, {11, -2, m}, {13, -2, -1}, {0, -2, m + 100}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sps_index r0 = row[cases[c].k], c0 = col[cases[c].k];
        if (cases[c].bad_row != -2) row[cases[c].k] = cases[c].bad_row;
        if (cases[c].bad_col != -2) col[cases[c].k] = cases[c].bad_col;
        A = (sps_matrix)&d;
        sps_status s = sps_matrix_from_coo(ctx, n, m, nnz, row, col, val, t, &A);
        char want[32];
        snprintf(want, sizeof want, "entry %d", cases[c].k);
        const char *msg = sps_context_error(ctx);
        TU_CHECK(s == SPS_ERR_ARG && A == NULL && contains(msg, want),
                 "from_coo with bad index at entry %d: %s, '%s' (want SPS_ERR_ARG naming '%s')", cases[c].k,
                 sps_status_name(s), msg, want);
        row[cases[c].k] = r0;
        col[cases[c].k] = c0;
        sps_context_clear_error(ctx);
    }
    /* non-finite values: SPS_ERR_NUMERIC naming the entry */
    const double bads[3][2] = {{NAN, 0.0}, {INFINITY, 0.0}, {1.0, -INFINITY}};
    for (int c = 0; c < (cplx(t) ? 3 : 2); c++) {
        void *v2 = tu_xcalloc(nnz, ssz(t));
        memcpy(v2, val, (size_t)nnz * ssz(t));
        tu_put(t, v2, 42, bads[c][0], bads[c][1]);
        A = (sps_matrix)&d;
        sps_status s = sps_matrix_from_coo(ctx, n, m, nnz, row, col, v2, t, &A);
        TU_CHECK(s == SPS_ERR_NUMERIC && A == NULL && contains(sps_context_error(ctx), "42"),
                 "from_coo with (%g,%g) at entry 42: %s, '%s'", bads[c][0], bads[c][1], sps_status_name(s),
                 sps_context_error(ctx));
        free(v2);
    }
    /* finite duplicates whose sum overflows: SPS_ERR_NUMERIC naming the entry's 0-based row and
     * column, as the API's other messages do (a Matrix Market file's are 1-based; f32 was refused
     * by its range check; f64 stored the Inf) */
    {
        const double big = single(t) ? 3e38 : 1.7e308;
        sps_index r2[3] = {1, 0, 1}, c2[3] = {2, 0, 2};
        void *v2 = tu_xcalloc(3, ssz(t));
        for (int part = 0; part < (cplx(t) ? 2 : 1); part++) { /* complex: the imaginary part too */
            tu_put(t, v2, 0, part ? 1.0 : big, part ? -big : 0.0);
            tu_put(t, v2, 1, 1.0, 0.0);
            tu_put(t, v2, 2, part ? 1.0 : big, part ? -big : 0.0);
            A = (sps_matrix)&d;
            sps_context_clear_error(ctx);
            sps_status so = sps_matrix_from_coo(ctx, 2, 3, 3, r2, c2, v2, t, &A);
            TU_CHECK(so == SPS_ERR_NUMERIC && A == NULL && contains(sps_context_error(ctx), "entry (1, 2)") &&
                         (single(t) ||
                          contains(sps_context_error(ctx), part ? "(imaginary part) (overflow)" : "(overflow)")),
                     "from_coo [%s]: duplicates summing past the range (%s part): %s, '%s'", tn(t),
                     part ? "imaginary" : "real", sps_status_name(so), sps_context_error(ctx));
            if (so == SPS_OK) sps_matrix_destroy(A);
        }
        sps_context_clear_error(ctx);
        free(v2);
    }
    /* bad arguments */
    A = (sps_matrix)&d;
    sps_status s = sps_matrix_from_coo(ctx, n, m, -3, row, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_coo nnz=-3: %s (%s)", sps_status_name(s), sps_context_error(ctx));
    s = sps_matrix_from_coo(ctx, -1, m, nnz, row, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_coo n=-1: %s", sps_status_name(s));
    s = sps_matrix_from_coo(ctx, n, -1, 0, NULL, NULL, NULL, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_coo m=-1: %s", sps_status_name(s));
    s = sps_matrix_from_coo(ctx, n, m, nnz, NULL, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_coo NULL row: %s", sps_status_name(s));
    s = sps_matrix_from_coo(ctx, n, m, nnz, row, NULL, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_coo NULL col: %s", sps_status_name(s));
    s = sps_matrix_from_coo(ctx, n, m, nnz, row, col, NULL, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_coo NULL val: %s", sps_status_name(s));
    s = sps_matrix_from_coo(ctx, n, m, nnz, row, col, val, (sps_scalar)9, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_coo bad type: %s", sps_status_name(s));
    TU_CHECK(sps_matrix_from_coo(NULL, n, m, nnz, row, col, val, t, &A) == SPS_ERR_ARG, "from_coo NULL ctx");
    TU_CHECK(sps_matrix_from_coo(ctx, n, m, nnz, row, col, val, t, NULL) == SPS_ERR_ARG, "from_coo NULL out");
    /* no entries: NULL arrays are fine */
    A = NULL;
    TU_OK(ctx, sps_matrix_from_coo(ctx, 4, 3, 0, NULL, NULL, NULL, t, &A));
    if (A) {
        sps_matrix_info_t info;
        sps_matrix_info(A, &info);
        TU_CHECK(info.rows == 4 && info.cols == 3 && info.nnz == 0, "empty from_coo info");
        sps_matrix_destroy(A);
    }
    /* -0.0 survives (no "0.0 +" in the duplicate sum), duplicates that cancel stay stored */
    {
        sps_index r2[3] = {0, 1, 1}, c2[3] = {0, 1, 1};
        void *v2 = tu_xcalloc(3, ssz(t));
        tu_put(t, v2, 0, -0.0, cplx(t) ? -0.0 : 0.0);
        tu_put(t, v2, 1, 1.5, 0.0);
        tu_put(t, v2, 2, -1.5, 0.0);
        A = NULL;
        TU_OK(ctx, sps_matrix_from_coo(ctx, 2, 2, 3, r2, c2, v2, t, &A));
        if (A && tu_export_csr(NULL, A, &h)) {
            double re, im;
            tu_get(t, h.val, 0, &re, &im);
            TU_CHECK(h.info.nnz == 2 && re == 0.0 && signbit(re) && (!cplx(t) || signbit(im)),
                     "from_coo [%s]: -0.0 became %g (nnz %lld)", tn(t), re, (long long)h.info.nnz);
            tu_get(t, h.val, 1, &re, &im);
            TU_CHECK(re == 0.0 && h.col[1] == 1, "cancelling duplicates keep the entry");
            tu_csr_free(&h);
        }
        sps_matrix_destroy(A);
        free(v2);
    }
    dense_free(&d);
    free(row);
    free(col);
    free(val);
}

/* ------------------------------------------------------------------ from_csr */
static void test_from_csr(sps_scalar t)
{
    const int n = 9, m = 12;
    /* rows with unsorted and repeated columns; rows 0, 4, 8 empty */
    const int lens[9] = {0, 3, 5, 1, 0, 7, 2, 4, 0};
    sps_index rowptr[10];
    rowptr[0] = 0;
    for (int i = 0; i < n; i++) rowptr[i + 1] = rowptr[i] + lens[i];
    const int nnz = rowptr[n];
    sps_index *col = tu_xcalloc(nnz, sizeof *col);
    void *val = tu_xcalloc(nnz, ssz(t));
    dense d = dense_new(n, m);
    for (int i = 0; i < n; i++)
        for (int k = rowptr[i]; k < rowptr[i + 1]; k++) {
            int j = (int)((k * 7 + 11 - i) % m); /* decreasing-ish orders */
            if (k == rowptr[i] + 2) j = col[rowptr[i]];  /* a repeat */
            col[k] = j;
            double re = dyadic(), im = cplx(t) ? dyadic() : 0;
            tu_put(t, val, k, re, im);
            d.re[(size_t)i * m + j] += re;
            d.im[(size_t)i * m + j] += im;
            d.present[(size_t)i * m + j] = 1;
        }
    sps_matrix A = NULL;
    TU_OK(ctx, sps_matrix_from_csr(ctx, n, m, rowptr, col, val, t, &A));
    tu_csr h;
    if (A && tu_export_csr(NULL, A, &h)) {
        check_against_dense("from_csr (unsorted columns, repeats)", &h, &d);
        tu_csr_free(&h);
    }
    sps_matrix_destroy(A);

    /* decreasing rowptr names the row */
    sps_index bad[10];
    memcpy(bad, rowptr, sizeof bad);
    bad[4] = rowptr[3] - 1; /* rowptr[4] < rowptr[3] (row 3 has 1 entry): row 3 */
    A = (sps_matrix)&d;
    sps_status s = sps_matrix_from_csr(ctx, n, m, bad, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL && contains(sps_context_error(ctx), "row 3"),
             "from_csr decreasing rowptr: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    memcpy(bad, rowptr, sizeof bad);
    bad[0] = 1;
    s = sps_matrix_from_csr(ctx, n, m, bad, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_csr rowptr[0]=1: %s", sps_status_name(s));
    /* out-of-range column and NaN name the row */
    sps_index c0 = col[rowptr[5] + 1];
    col[rowptr[5] + 1] = m;
    s = sps_matrix_from_csr(ctx, n, m, rowptr, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL && contains(sps_context_error(ctx), "row 5"),
             "from_csr column out of range in row 5: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    col[rowptr[5] + 1] = -1;
    s = sps_matrix_from_csr(ctx, n, m, rowptr, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_csr negative column: %s", sps_status_name(s));
    col[rowptr[5] + 1] = c0;
    void *v2 = tu_xcalloc(nnz, ssz(t));
    memcpy(v2, val, (size_t)nnz * ssz(t));
    tu_put(t, v2, (size_t)rowptr[7] + 1, NAN, 0);
    s = sps_matrix_from_csr(ctx, n, m, rowptr, col, v2, t, &A);
    TU_CHECK(s == SPS_ERR_NUMERIC && A == NULL && contains(sps_context_error(ctx), "row 7"),
             "from_csr NaN in row 7: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    free(v2);
    s = sps_matrix_from_csr(ctx, n, m, NULL, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_csr NULL rowptr: %s", sps_status_name(s));
    s = sps_matrix_from_csr(ctx, n, m, rowptr, NULL, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_csr NULL col: %s", sps_status_name(s));
    s = sps_matrix_from_csr(ctx, -2, m, rowptr, col, val, t, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "from_csr n=-2: %s", sps_status_name(s));
    TU_CHECK(sps_matrix_from_csr(NULL, n, m, rowptr, col, val, t, &A) == SPS_ERR_ARG, "from_csr NULL ctx");
    TU_CHECK(sps_matrix_from_csr(ctx, n, m, rowptr, col, val, t, NULL) == SPS_ERR_ARG, "from_csr NULL out");
    /* 0 x 0 */
    sps_index rp0[1] = {0};
    A = NULL;
    TU_OK(ctx, sps_matrix_from_csr(ctx, 0, 0, rp0, NULL, NULL, t, &A));
    sps_matrix_destroy(A);
    sps_context_clear_error(ctx);
    dense_free(&d);
    free(col);
    free(val);
}

/* ------------------------------------------------------------------ shapes, conversion, info */
/* Shapes (tu_shape) built here by selection sampling alone. */
static tu_shape make_shape(const char *name, int n, int m, const int *len, int one_col)
{
    tu_shape s = {name, n, m, 0, tu_xcalloc((size_t)n + 1, sizeof(sps_index)), NULL};
    for (int i = 0; i < n; i++) s.rowptr[i + 1] = s.rowptr[i] + len[i];
    s.nnz = s.rowptr[n];
    s.col = tu_xcalloc((size_t)s.nnz, sizeof(sps_index));
    for (int i = 0; i < n; i++) {
        int L = len[i], k = s.rowptr[i];
        for (int j = 0; j < m && L > 0; j++) {
            if (one_col >= 0) { if (j != one_col) continue; }
            else if (tu_rng_u64(&rng) % (uint64_t)(m - j) >= (uint64_t)L) continue;
            s.col[k++] = j;
            L--;
        }
    }
    return s;
}

static int nshapes;
static tu_shape shapes[16];
static void build_shapes(void)
{
    int *len = tu_xcalloc(5000, sizeof *len);
    for (int i = 0; i < 60; i++) len[i] = (i < 4 || i >= 56 || i % 3 == 0) ? 0 : (int)(tu_rng_u64(&rng) % 8);
    shapes[nshapes++] = make_shape("random 60x40, empty rows", 60, 40, len, -1);
    for (int i = 0; i < 30; i++) len[i] = i == 11 ? 300 : (int)(tu_rng_u64(&rng) % 3);
    shapes[nshapes++] = make_shape("one dense row", 30, 300, len, -1);
    len[0] = 1;
    shapes[nshapes++] = make_shape("1x1", 1, 1, len, -1);
    len[0] = 0;
    shapes[nshapes++] = make_shape("1x1 no entry", 1, 1, len, -1);
    for (int i = 0; i < 200; i++) len[i] = (int)(tu_rng_u64(&rng) % 2);
    shapes[nshapes++] = make_shape("200x1", 200, 1, len, -1);
    len[0] = 700;
    shapes[nshapes++] = make_shape("1x1000", 1, 1000, len, -1);
    for (int i = 0; i < 80; i++) len[i] = i % 5 != 2;
    shapes[nshapes++] = make_shape("all entries in column 17", 80, 50, len, 17);
    for (int i = 0; i < 25; i++) len[i] = 0;
    shapes[nshapes++] = make_shape("25x25 no entries", 25, 25, len, -1);
    shapes[nshapes++] = make_shape("0x0", 0, 0, len, -1);
    shapes[nshapes++] = make_shape("0x7", 0, 7, len, -1);
    shapes[nshapes++] = make_shape("7x0", 7, 0, len, -1);
    for (int i = 0; i < 3000; i++) len[i] = i == 1500 ? 2500 : (int)(tu_rng_u64(&rng) % 6);
    shapes[nshapes++] = make_shape("3000x2600 with one long row", 3000, 2600, len, -1);
    free(len);
}

/* Random values for a shape (never all zero). */
static void *shape_values(const tu_shape *s, sps_scalar t)
{
    void *v = tu_xcalloc((size_t)s->nnz, ssz(t));
    tu_fill_random(&rng, t, (size_t)s->nnz, v);
    return v;
}

static size_t csr_bytes(int n, int64_t nnz, sps_scalar t) { return ((size_t)n + 1) * 4 + (size_t)nnz * (4 + ssz(t)); }
static size_t coo_bytes(int64_t nnz, sps_scalar t) { return (size_t)nnz * (8 + ssz(t)); }

static void check_info(const char *what, sps_matrix A, sps_scalar t, int n, int m, int64_t nnz, sps_format f)
{
    sps_matrix_info_t info;
    memset(&info, 0xab, sizeof info);
    TU_OK(ctx, sps_matrix_info(A, &info));
    const size_t bytes = f == SPS_FMT_CSR ? csr_bytes(n, nnz, t) : coo_bytes(nnz, t);
    const char *fname = f == SPS_FMT_CSR ? "csr" : "coo";
    TU_CHECK(info.rows == n && info.cols == m && info.nnz == nnz && info.scalar == t && info.format == f &&
                 info.format_name && strcmp(info.format_name, fname) == 0 && info.bytes == bytes &&
                 info.stored_entries == nnz && info.fill_percent == 0.0 && info.backend == SPS_BACKEND_CPU,
             "%s [%s] info: %dx%d nnz %lld %s bytes %zu (want %zu) stored %lld fill %g backend %d", what, tn(t),
             (int)info.rows, (int)info.cols, (long long)info.nnz, info.format_name ? info.format_name : "(null)",
             info.bytes, bytes, (long long)info.stored_entries, info.fill_percent, (int)info.backend);
    TU_CHECK(sps_matrix_context(A) == ctx, "sps_matrix_context");
}

/* y = A x (N) or A^T x (T) in long double from host CSR: relative error of y against it. */
static int spmv_matches(const tu_csr *h, sps_matrix A, sps_op_mode mode, double *worst)
{
    const sps_scalar t = h->info.scalar;
    const int n = h->info.rows, m = h->info.cols;
    const int nin = mode == SPS_OP_N ? m : n, nout = mode == SPS_OP_N ? n : m;
    void *x = tu_xcalloc((size_t)nin, ssz(t)), *y0 = tu_xcalloc((size_t)nout, ssz(t));
    tu_fill_random(&rng, t, (size_t)nin, x);
    tu_fill_nan(t, (size_t)nout, y0);
    tu_spmv_ref ref;
    tu_spmv_ref_compute(h, mode, x, &ref);
    int ok;
    void *y = tu_apply(ctx, A, mode, t, nin, nout, x, y0, NULL, NULL, &ok);
    *worst = 0;
    for (int o = 0; ok && o < nout; o++) {
        double yr, yi;
        tu_get(t, y, (size_t)o, &yr, &yi);
        const long double d = hypotl(yr - ref.re[o], yi - ref.im[o]);
        const long double tol = 4 * (sqrt((double)ref.cnt[o]) + 2) * tu_eps(t) * ref.abs[o];
        if (!(d <= tol)) ok = 0;
        if (ref.abs[o] > 0 && d / ref.abs[o] > *worst) *worst = (double)(d / ref.abs[o]);
        if (isnan((double)d)) *worst = NAN;
    }
    tu_spmv_ref_free(&ref);
    free(x);
    free(y0);
    free(y);
    return ok;
}

static void test_roundtrip(sps_scalar t, const tu_shape *s)
{
    void *val = shape_values(s, t);
    sps_matrix A = NULL, B = NULL, C = NULL, D = NULL;
    const tu_csr h0 = tu_shape_csr(s, t, val);
    if (!TU_OK(ctx, sps_matrix_from_csr(ctx, s->n, s->m, s->rowptr, s->col, val, t, &A))) goto out;
    check_info(s->name, A, t, s->n, s->m, s->nnz, SPS_FMT_CSR);
    if (!TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_COO, NULL, &B))) goto out;
    check_info(s->name, B, t, s->n, s->m, s->nnz, SPS_FMT_COO);
    if (!TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_CSR, NULL, &C))) goto out;
    check_info(s->name, C, t, s->n, s->m, s->nnz, SPS_FMT_CSR);
    TU_CHECK_EXPORT(NULL, A, &h0, "%s [%s]: from_csr of canonical input is not the identity", s->name, tn(t));
    TU_CHECK_EXPORT(NULL, B, &h0, "%s [%s]: export of the COO copy differs", s->name, tn(t));
    TU_CHECK_EXPORT(NULL, C, &h0, "%s [%s]: CSR -> COO -> CSR not bitwise", s->name, tn(t));
    /* AUTO means CSR here; a copy in the same format */
    TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_AUTO, NULL, &D));
    if (D) {
        sps_matrix_info_t info;
        sps_matrix_info(D, &info);
        TU_CHECK(info.format == SPS_FMT_CSR, "convert to AUTO gives %s", info.format_name);
        sps_matrix_destroy(D);
        D = NULL;
    }
    TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_COO, NULL, &D));
    sps_matrix_destroy(D);
    /* both formats multiply correctly, both modes */
    double w;
    for (int mode = 0; mode < 2; mode++) {
        TU_CHECK(spmv_matches(&h0, A, (sps_op_mode)mode, &w), "%s [%s]: CSR SpMV%s off by %g", s->name, tn(t),
                 mode ? "^T" : "", w);
        TU_CHECK(spmv_matches(&h0, B, (sps_op_mode)mode, &w), "%s [%s]: COO SpMV%s off by %g", s->name, tn(t),
                 mode ? "^T" : "", w);
    }
out:
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
    sps_matrix_destroy(C);
    free(val);
}

static void test_convert_errors(void)
{
    sps_matrix A = NULL, B = (sps_matrix)&A;
    sps_matrix_generate(ctx, "poisson2d:3", SPS_F64, &A);
    sps_status s = sps_matrix_convert(A, (sps_format)99, NULL, &B);
    TU_CHECK(s == SPS_ERR_UNSUPPORTED && B == NULL && contains(sps_context_error(ctx), "csr"),
             "convert to format 99: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    TU_CHECK(sps_matrix_convert(A, SPS_FMT_COO, NULL, NULL) == SPS_ERR_ARG, "convert NULL out");
    TU_CHECK(sps_matrix_convert(NULL, SPS_FMT_COO, NULL, &B) == SPS_ERR_ARG, "convert NULL matrix");
    sps_options opt = NULL;
    TU_CHECK(sps_format_options_create(SPS_FMT_SELL, &opt) == SPS_OK, "sell options");
    B = (sps_matrix)&A;
    s = sps_matrix_convert(A, SPS_FMT_COO, opt, &B); /* the options of another format */
    TU_CHECK(s == SPS_ERR_ARG && B == NULL && contains(sps_context_error(ctx), "made for sell"),
             "sell options to coo refused: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    sps_options_destroy(opt);
    /* CSR's SpMV schedule: merge builds its plan (in the footprint) on the CPU too; bad values refused */
    TU_CHECK(sps_format_options_create(SPS_FMT_CSR, &opt) == SPS_OK, "csr options");
    TU_CHECK(sps_options_set(opt, "csr-kernel", "merge") == SPS_OK, "csr-kernel merge");
    B = NULL;
    TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_CSR, opt, &B));
    sps_matrix_info_t ia, ib;
    TU_OK(ctx, sps_matrix_info(A, &ia));
    TU_OK(ctx, sps_matrix_info(B, &ib));
    TU_CHECK(ib.bytes == ia.bytes + sps_csr_merge_bytes(ia.rows, ia.nnz, sizeof(double)),
             "csr_kernel merge: footprint %zu = %zu + the plan", ib.bytes, ia.bytes);
    sps_matrix_destroy(B);
    TU_CHECK(sps_options_set(opt, "csr-kernel", "3") == SPS_ERR_ARG &&
                 contains(sps_options_error(opt), "csr-kernel: expected one of auto, rows, merge, hola, got '3'"),
             "csr-kernel 3 refused: '%s'", sps_options_error(opt));
    /* csr-kernel hola is the hola format; hola keeps no A^T */
    TU_CHECK(sps_options_set(opt, "csr-kernel", "hola") == SPS_OK, "csr-kernel hola");
    B = NULL;
    TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_CSR, opt, &B));
    TU_OK(ctx, sps_matrix_info(B, &ib));
    TU_CHECK(ib.format == SPS_FMT_HOLA && strcmp(ib.format_name, "hola") == 0, "csr-kernel hola: format %s",
             ib.format_name);
    sps_matrix_destroy(B);
    TU_CHECK(sps_options_set(opt, "transpose", "explicit") == SPS_OK, "transpose explicit");
    B = (sps_matrix)&A;
    s = sps_matrix_convert(A, SPS_FMT_CSR, opt, &B);
    TU_CHECK(s == SPS_ERR_ARG && B == NULL && contains(sps_context_error(ctx), "csr: csr-kernel: hola keeps no A^T"),
             "csr-kernel hola + transpose explicit refused: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    sps_options_destroy(opt);
    sps_context_clear_error(ctx);
    sps_index rp[10], c[64];
    double v[64];
    TU_CHECK(sps_matrix_export_csr(NULL, rp, c, v) == SPS_ERR_ARG, "export NULL matrix");
    TU_CHECK(sps_matrix_export_csr(A, NULL, c, v) == SPS_ERR_ARG, "export NULL rowptr");
    TU_CHECK(sps_matrix_export_csr(A, rp, NULL, v) == SPS_ERR_ARG, "export NULL col");
    TU_CHECK(sps_matrix_export_csr(A, rp, c, NULL) == SPS_ERR_ARG, "export NULL val");
    sps_matrix_info_t info;
    TU_CHECK(sps_matrix_info(NULL, &info) == SPS_ERR_ARG, "info NULL matrix");
    TU_CHECK(sps_matrix_info(A, NULL) == SPS_ERR_ARG, "info NULL out");
    TU_CHECK(sps_matrix_diagonal(NULL, v) == SPS_ERR_ARG, "diagonal NULL matrix");
    TU_CHECK(sps_matrix_diagonal(A, NULL) == SPS_ERR_ARG, "diagonal NULL out");
    TU_CHECK(sps_matrix_context(NULL) == NULL, "context of NULL matrix");
    sps_matrix_destroy(NULL);
    sps_matrix_destroy(A);
    sps_context_clear_error(ctx);
}

/* A matrix read from a .mtx.gz with bytes after the gzip data carries a warning
 * (sps_matrix_warning), documented as not carried by conversions.  The conversions that stay
 * on the backend (from csr, and from bcsr with AoS entries) copied the whole handle, the
 * warning and A's launch variant with it; now every conversion starts with "" and the default
 * (zero) variant, as the route through host CSR always did. */
static void test_convert_warning(void)
{
    char path[640];
    snprintf(path, sizeof path, "%s/trailing.mtx.gz", tmpdir_path);
    const char *mm = "%%MatrixMarket matrix coordinate real general\n4 4 5\n1 1 1\n2 2 2\n3 3 3\n4 4 4\n1 4 0.5\n";
    gzFile g = gzopen(path, "wb");
    const int wrote = g && gzputs(g, mm) == (int)strlen(mm);
    if (g) gzclose(g);
    FILE *f = fopen(path, "ab");
    const int appended = f && fputs("GARBAGE", f) >= 0; /* 7 bytes that start no gzip member */
    if (f) fclose(f);
    if (!TU_CHECK(wrote && appended, "writing %s", path)) return;
    sps_launch_variant lv0;
    memset(&lv0, 0, sizeof lv0);
    /* b = 1: scalar entries (csr); b = 2: 2 x 2 blocks (bcsr, AoS) */
    for (int b = 1; b <= 2; b++) {
        sps_matrix A = NULL;
        if (!TU_OK(ctx, sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, b, NULL, &A))) continue;
        TU_CHECK(contains(sps_matrix_warning(A), "7 bytes after the gzip data"), "b = %d: A's warning '%s'", b,
                 sps_matrix_warning(A));
        sps_launch_variant v = lv0;
        if (b == 1) v.csr_unroll = 2;
        else v.cmp_sched = 1;
        TU_OK(ctx, sps_matrix_set_launch_variant(A, &v));
        const sps_format scalar_f[] = {SPS_FMT_CSR, SPS_FMT_COO, SPS_FMT_ELL, SPS_FMT_SELL, SPS_FMT_RGCSR,
                                       SPS_FMT_HYB, SPS_FMT_JDS, SPS_FMT_DIA, SPS_FMT_HOLA, SPS_FMT_HISPARSE};
        const sps_format block_f[] = {SPS_FMT_BCSR, SPS_FMT_BELL, SPS_FMT_BSELL};
        const sps_format *fs = b == 1 ? scalar_f : block_f;
        const int nf = b == 1 ? (int)(sizeof scalar_f / sizeof scalar_f[0]) : (int)(sizeof block_f / sizeof block_f[0]);
        for (int k = 0; k < nf; k++) {
            sps_matrix B = NULL;
            if (!TU_OK(ctx, sps_matrix_convert(A, fs[k], NULL, &B))) continue;
            TU_CHECK(sps_matrix_warning(B)[0] == 0, "b = %d: convert to %s carried the warning '%s'", b,
                     sps_format_name(fs[k]), sps_matrix_warning(B));
            TU_CHECK(memcmp(&B->lv, &lv0, sizeof lv0) == 0, "b = %d: convert to %s carried A's launch variant", b,
                     sps_format_name(fs[k]));
            sps_matrix_destroy(B);
        }
        TU_CHECK(contains(sps_matrix_warning(A), "7 bytes after the gzip data"), "b = %d: A kept its warning", b);
        sps_matrix_destroy(A);
    }
    remove(path);
    /* a vector's file the same way (sps_vector_warning; it was read without a word), and one without */
    const char *vm = "%%MatrixMarket matrix array real general\n3 1\n1\n2\n3\n";
    for (int junk = 0; junk < 2; junk++) {
        g = gzopen(path, "wb");
        int ok = g && gzputs(g, vm) == (int)strlen(vm);
        if (g) gzclose(g);
        if (junk && (f = fopen(path, "ab")) != NULL) ok = fputs("GARBAGE", f) >= 0 && ok, fclose(f);
        sps_vector v = NULL;
        if (TU_CHECK(ok, "writing %s", path) && TU_OK(ctx, sps_vector_read_mtx(ctx, path, SPS_F64, &v)))
            TU_CHECK(junk ? contains(sps_vector_warning(v), "7 bytes after the gzip data") : !sps_vector_warning(v)[0],
                     "vector file %s garbage: warning '%s'", junk ? "with" : "without", sps_vector_warning(v));
        sps_vector_destroy(v);
        remove(path);
    }
    TU_CHECK(sps_vector_warning(NULL)[0] == 0, "sps_vector_warning(NULL) is \"\"");
}

/* The padded formats' 16-bit column refusal named the scalar kind ("ELL:", "SELL:") and the
 * option as index_bits; for the compound formats it must name bell / bsell and index-bits
 * (the option's name).  A 1 x 100001 quaternion matrix spans 100000 columns, past 16 bits. */
static void test_compound_index_bits(void)
{
    const sps_index r[2] = {0, 0}, c[2] = {0, 100000};
    const double v[8] = {1, 0, 0, 0, 2, 0, 0, 0};
    sps_matrix Q = NULL;
    if (!TU_OK(ctx, sps_matrix_from_coo_entries(ctx, 1, 100001, 2, r, c, v, sps_entry_quaternion(), SPS_F64, &Q)))
        return;
    const struct {
        const char *spec, *want;
    } cases[2] = {{"bell index-bits=16", "bell: index-bits 16 refused: the columns of a matrix span 100000"},
                  {"bsell index-bits=16", "bsell: index-bits 16 refused: the columns of a group span 100000"}};
    for (int k = 0; k < 2; k++) {
        sps_matrix B = (sps_matrix)&Q;
        sps_context_clear_error(ctx);
        const sps_status s = sps_matrix_convert_spec(Q, cases[k].spec, &B);
        TU_CHECK(s == SPS_ERR_ARG && B == NULL && contains(sps_context_error(ctx), cases[k].want) &&
                     contains(sps_context_error(ctx), "use index-bits 32 or auto"),
                 "%s: %s '%s' (want SPS_ERR_ARG with '%s')", cases[k].spec, sps_status_name(s), sps_context_error(ctx),
                 cases[k].want);
        if (s == SPS_OK) sps_matrix_destroy(B);
    }
    sps_context_clear_error(ctx);
    sps_matrix_destroy(Q);
}

/* ------------------------------------------------------------------ diagonal */
/* Compound entries: the diagonal of the scalar expansion (a block's own diagonal, a
 * quaternion's w four times), zero where a block row has no diagonal entry; bcsr takes its
 * diagonal blocks on the backend (diag_blocks), bell through the host copy: both equal the
 * values put in. */
static void test_diagonal_compound(sps_scalar t)
{
    const int n = 9;
    for (int q = 0; q < 2; q++) {
        const sps_entry_desc e = q ? sps_entry_quaternion() : sps_entry_block(3);
        if (q && cplx(t)) continue; /* quaternions are real */
        const int nv = sps_entry_values(e), d = sps_entry_dim(e);
        sps_index rp[10], col[40];
        int nnz = 0;
        rp[0] = 0;
        for (int i = 0; i < n; i++) {
            for (int j = i > 0 ? i - 1 : 0; j <= i + 1 && j < n; j++)
                if (j != i || i % 4 != 3) col[nnz++] = j; /* rows 3 and 7: no diagonal entry */
            rp[i + 1] = nnz;
        }
        void *val = tu_xcalloc((size_t)nnz * nv, ssz(t));
        tu_fill_random(&rng, t, (size_t)nnz * nv, val);
        double *want = tu_xcalloc(2 * (size_t)n * d, sizeof *want);
        for (int i = 0; i < n; i++)
            for (int k = rp[i]; k < rp[i + 1]; k++)
                if (col[k] == i)
                    for (int r = 0; r < d; r++)
                        tu_get(t, val, (size_t)k * nv + (q ? 0 : (size_t)r * (d + 1)), &want[2 * ((size_t)i * d + r)],
                               &want[2 * ((size_t)i * d + r) + 1]);
        sps_matrix A = NULL, B = NULL;
        TU_OK(ctx, sps_matrix_from_csr_entries(ctx, n, n, rp, col, val, e, t, &A));
        TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_BELL, NULL, &B));
        for (int f = 0; f < 2 && A && B; f++) {
            void *dg = tu_xcalloc((size_t)n * d, ssz(t));
            tu_fill_nan(t, (size_t)n * d, dg);
            int ok = TU_OK(ctx, sps_matrix_diagonal(f ? B : A, dg));
            for (int i = 0; ok && i < n * d; i++) {
                double re, im;
                tu_get(t, dg, (size_t)i, &re, &im);
                ok = re == want[2 * i] && (!cplx(t) || im == want[2 * i + 1]);
            }
            TU_CHECK(ok, "diagonal [%s %s %s]: the entries' diagonals, zero where a row has none", tn(t),
                     sps_entry_name(e), f ? "bell" : "bcsr");
            free(dg);
        }
        sps_matrix_destroy(A);
        sps_matrix_destroy(B);
        free(val), free(want);
    }
}

static void test_diagonal(sps_scalar t)
{
    const int dims[3][2] = {{6, 6}, {4, 7}, {7, 4}};
    for (int q = 0; q < 3; q++) {
        const int n = dims[q][0], m = dims[q][1], nd = n < m ? n : m;
        dense d = dense_new(n, m);
        sps_index *row = tu_xcalloc((size_t)n * m, sizeof *row), *col = tu_xcalloc((size_t)n * m, sizeof *col);
        void *val = tu_xcalloc((size_t)n * m, ssz(t));
        int nnz = 0;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++) {
                if (i == j && (i == 2 || i == nd - 1)) continue;          /* missing diagonal entries */
                if (i != j && tu_rng_uniform(&rng) < 0.4) continue;
                double re = dyadic(), im = cplx(t) ? dyadic() : 0;
                row[nnz] = i;
                col[nnz] = j;
                tu_put(t, val, (size_t)nnz++, re, im);
                d.re[(size_t)i * m + j] = re;
                d.im[(size_t)i * m + j] = im;
            }
        sps_matrix A = NULL;
        TU_OK(ctx, sps_matrix_from_coo(ctx, n, m, nnz, row, col, val, t, &A));
        sps_matrix B = NULL;
        TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_COO, NULL, &B));
        for (int f = 0; f < 2; f++) {
            void *dg = tu_xcalloc((size_t)nd + 1, ssz(t));
            tu_fill_nan(t, (size_t)nd, dg);
            tu_put(t, dg, (size_t)nd, 12345.0, 678.0); /* guard after the end */
            TU_OK(ctx, sps_matrix_diagonal(f ? B : A, dg));
            int ok = 1;
            for (int i = 0; i < nd; i++) {
                double re, im;
                tu_get(t, dg, (size_t)i, &re, &im);
                double wr = d.re[(size_t)i * m + i], wi = cplx(t) ? d.im[(size_t)i * m + i] : 0;
                if (re != wr || im != wi) ok = 0;
            }
            double gr, gi;
            tu_get(t, dg, (size_t)nd, &gr, &gi);
            TU_CHECK(ok && gr == 12345.0 && (!cplx(t) || gi == 678.0), "diagonal [%s %dx%d %s]: wrong (guard %g)",
                     tn(t), n, m, f ? "coo" : "csr", gr);
            free(dg);
        }
        sps_matrix_destroy(A);
        sps_matrix_destroy(B);
        dense_free(&d);
        free(row);
        free(col);
        free(val);
    }
}

/* ------------------------------------------------------------------ registry */
/* First calls of sps_format_list from several threads at once agree. */
static void test_format_list_threads(void)
{
    char got[4][512];
#pragma omp parallel num_threads(4)
    {
        const int me = omp_get_thread_num();
        if (me < 4) snprintf(got[me], sizeof got[me], "%s", sps_format_list());
    }
    const int nt = 4;
    int same = 1;
    for (int i = 1; i < nt; i++)
        if (strcmp(got[i], got[0]) != 0) same = 0;
    TU_CHECK(same && contains(got[0], "csr") && strlen(got[0]) < 96, "format list from 4 threads: '%s'", got[0]);
}

static void test_registry(void)
{
    sps_format f = SPS_FMT_AUTO;
    TU_CHECK(sps_format_by_name("csr", &f) == SPS_OK && f == SPS_FMT_CSR, "format 'csr'");
    TU_CHECK(sps_format_by_name("coo", &f) == SPS_OK && f == SPS_FMT_COO, "format 'coo'");
    f = SPS_FMT_BSR;
    TU_CHECK(sps_format_by_name("no-such-format", &f) == SPS_ERR_ARG && f == SPS_FMT_BSR, "unknown format name");
    TU_CHECK(sps_format_by_name("", &f) == SPS_ERR_ARG, "empty format name");
    TU_CHECK(sps_format_by_name(NULL, &f) == SPS_ERR_ARG, "NULL format name");
    TU_CHECK(sps_format_by_name("csr", NULL) == SPS_ERR_ARG, "NULL format out");
    TU_CHECK(strcmp(sps_format_name(SPS_FMT_CSR), "csr") == 0 && strcmp(sps_format_name(SPS_FMT_COO), "coo") == 0,
             "format names");
    TU_CHECK(sps_format_name((sps_format)77) && strcmp(sps_format_name((sps_format)77), "?") == 0, "unknown format name is ?");
    const char *list = sps_format_list();
    TU_CHECK(contains(list, "csr") && contains(list, "coo") && contains(list, ", "), "format list '%s'", list);
    TU_CHECK(list == sps_format_list(), "format list is stable");
    /* every listed name resolves, and back */
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    int count = 0;
    for (char *tok = strtok(buf, ", "); tok; tok = strtok(NULL, ", ")) {
        sps_format g;
        TU_CHECK(sps_format_by_name(tok, &g) == SPS_OK && strcmp(sps_format_name(g), tok) == 0, "listed format '%s'", tok);
        count++;
    }
    TU_CHECK(count >= 2, "at least csr and coo listed");
    TU_CHECK(strcmp(sps_symmetry_name(SPS_SYM_GENERAL), "general") == 0 &&
                 strcmp(sps_symmetry_name(SPS_SYM_SYMMETRIC), "symmetric") == 0 &&
                 strcmp(sps_symmetry_name(SPS_SYM_SKEW), "skew-symmetric") == 0 &&
                 strcmp(sps_symmetry_name(SPS_SYM_HERMITIAN), "hermitian") == 0 &&
                 strcmp(sps_symmetry_name((sps_symmetry)9), "?") == 0,
             "symmetry names");
}

/* ------------------------------------------------------------------ generators */
/* Independent (2d+1)-point Laplacian: neighbours found by comparing grid coordinates. */
static dense laplacian_dense(int dims, int N)
{
    int n = 1;
    for (int d = 0; d < dims; d++) n *= N;
    dense D = dense_new(n, n);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            int ca[3] = {a % N, (a / N) % N, a / (N * N)}, cb[3] = {b % N, (b / N) % N, b / (N * N)};
            int dist = 0;
            for (int d = 0; d < 3; d++) dist += abs(ca[d] - cb[d]);
            if (dist == 0) { D.re[(size_t)a * n + b] = 2.0 * dims; D.present[(size_t)a * n + b] = 1; }
            if (dist == 1) { D.re[(size_t)a * n + b] = -1.0; D.present[(size_t)a * n + b] = 1; }
        }
    return D;
}

static void test_generate(sps_scalar t)
{
    const struct { const char *spec; int dims, N; long nnz; } gens[] = {
        {"poisson2d:4", 2, 4, 5 * 16 - 4 * 4}, {"poisson3d:3", 3, 3, 7 * 27 - 6 * 9},
        {"poisson2d:1", 2, 1, 1},             {"poisson3d:1", 3, 1, 1},
        {"poisson2d:7", 2, 7, 5 * 49 - 4 * 7}};
    for (size_t g = 0; g < sizeof gens / sizeof gens[0]; g++) {
        sps_matrix A = NULL;
        if (!TU_OK(ctx, sps_matrix_generate(ctx, gens[g].spec, t, &A))) continue;
        tu_csr h;
        if (!tu_export_csr(NULL, A, &h)) { sps_matrix_destroy(A); continue; }
        dense D = laplacian_dense(gens[g].dims, gens[g].N);
        char what[64];
        snprintf(what, sizeof what, "generate %s", gens[g].spec);
        check_against_dense(what, &h, &D);
        TU_CHECK(h.info.nnz == gens[g].nnz, "%s: nnz %lld, want %ld", gens[g].spec, (long long)h.info.nnz, gens[g].nnz);
        TU_CHECK(h.info.symmetry == SPS_SYM_SYMMETRIC && h.info.scalar == t && h.info.format == SPS_FMT_CSR,
                 "%s: info symmetry %d", gens[g].spec, (int)h.info.symmetry);
        sps_matrix B = NULL;
        if (TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_COO, NULL, &B))) {
            sps_matrix_info_t bi;
            sps_matrix_info(B, &bi);
            TU_CHECK(bi.symmetry == SPS_SYM_SYMMETRIC, "%s: conversion keeps the declared symmetry", gens[g].spec);
        }
        sps_matrix_destroy(B);
        /* row sums: 0 inside, the number of missing neighbours on the boundary; symmetric */
        const int n = D.n;
        int ok = 1, sym = 1;
        for (int i = 0; i < n; i++) {
            double s = 0;
            for (sps_index k = h.rowptr[i]; k < h.rowptr[i + 1]; k++) {
                double re, im;
                tu_get(t, h.val, (size_t)k, &re, &im);
                s += re;
                /* find (col, i) */
                const int j = h.col[k];
                int found = 0;
                for (sps_index q = h.rowptr[j]; q < h.rowptr[j + 1]; q++)
                    if (h.col[q] == i) {
                        double r2, i2;
                        tu_get(t, h.val, (size_t)q, &r2, &i2);
                        found = r2 == re && i2 == im;
                    }
                if (!found) sym = 0;
            }
            int c[3] = {i % gens[g].N, (i / gens[g].N) % gens[g].N, i / (gens[g].N * gens[g].N)}, missing = 0;
            for (int d = 0; d < gens[g].dims; d++) missing += (c[d] == 0) + (c[d] == gens[g].N - 1);
            if (s != (double)missing) ok = 0;
        }
        TU_CHECK(ok, "%s [%s]: row sums", gens[g].spec, tn(t));
        TU_CHECK(sym, "%s [%s]: not symmetric", gens[g].spec, tn(t));
        dense_free(&D);
        tu_csr_free(&h);
        sps_matrix_destroy(A);
    }
}

/* stencil27b3:N against its definition, L (x) S with L the 27-point Dirichlet
 * Laplacian (26, -1) and S the 3x3 block: the product on random x, evaluated
 * point by point here, and the structure (block entries, counts, symmetry). */
static void test_generate_stencil27b3(sps_scalar t)
{
    static const double S[3][3] = {{4.0, 1.0, 0.5}, {1.0, 3.0, 0.25}, {0.5, 0.25, 2.0}};
    const int sizes[] = {1, 2, 5};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const int N = sizes[s], pts = N * N * N, n = 3 * pts;
        char spec[32];
        snprintf(spec, sizeof spec, "stencil27b3:%d", N);
        sps_matrix A = NULL;
        if (!TU_OK(ctx, sps_matrix_generate(ctx, spec, t, &A))) continue;
        sps_matrix_info_t info;
        sps_matrix_info(A, &info);
        int per_axis = 0; /* sum over one axis of the neighbour counts, itself included */
        for (int i = 0; i < N; i++) per_axis += 1 + (i > 0) + (i < N - 1);
        TU_CHECK(info.rows == pts && info.cols == pts && info.nnz == (int64_t)per_axis * per_axis * per_axis &&
                     info.entry.kind == SPS_ENTRY_BLOCK && info.entry.block == 3 && info.format == SPS_FMT_BCSR &&
                     info.symmetry == SPS_SYM_SYMMETRIC && info.scalar == t,
                 "%s [%s]: %dx%d nnz %lld entry %d/%d format %d", spec, tn(t), (int)info.rows, (int)info.cols,
                 (long long)info.nnz, (int)info.entry.kind, info.entry.block, (int)info.format);
        const int cplx = sps_scalar_is_complex(t);
        double *xr = tu_xcalloc((size_t)n, sizeof(double)), *xi = tu_xcalloc((size_t)n, sizeof(double));
        void *xh = tu_xcalloc((size_t)n, sps_scalar_size(t)), *yh = tu_xcalloc((size_t)n, sps_scalar_size(t));
        for (int i = 0; i < n; i++) {
            xr[i] = tu_rng_range(&rng, -1.0, 1.0);
            xi[i] = cplx ? tu_rng_range(&rng, -1.0, 1.0) : 0.0;
            tu_put(t, xh, (size_t)i, xr[i], xi[i]);
        }
        sps_vector x = NULL, y = NULL;
        if (TU_OK(ctx, sps_vector_from_host(ctx, n, t, xh, &x)) && TU_OK(ctx, sps_vector_create(ctx, n, t, &y))) {
            sps_operator op = NULL;
            if (TU_OK(ctx, sps_operator_from_matrix(A, &op)) &&
                TU_OK(ctx, sps_operator_apply(op, SPS_OP_N, NULL, x, NULL, y)) && TU_OK(ctx, sps_vector_get(y, yh))) {
                double worst = 0, scale = 0;
                for (int p = 0; p < pts; p++) {
                    const int px = p % N, py = (p / N) % N, pz = p / (N * N);
                    for (int a = 0; a < 3; a++) {
                        double wr = 0, wi = 0;
                        for (int q = 0; q < pts; q++) {
                            const int qx = q % N, qy = (q / N) % N, qz = q / (N * N);
                            if (abs(px - qx) > 1 || abs(py - qy) > 1 || abs(pz - qz) > 1) continue;
                            const double c = p == q ? 26.0 : -1.0;
                            for (int b = 0; b < 3; b++) {
                                wr += c * S[a][b] * xr[3 * q + b];
                                wi += c * S[a][b] * xi[3 * q + b];
                            }
                        }
                        double gr, gi;
                        tu_get(t, yh, (size_t)(3 * p + a), &gr, &gi);
                        const double d = fabs(gr - wr) + fabs(gi - wi);
                        if (d > worst) worst = d;
                        if (fabs(wr) + fabs(wi) > scale) scale = fabs(wr) + fabs(wi);
                    }
                }
                TU_CHECK(worst <= 64 * tu_eps(t) * (scale > 1 ? scale : 1), "%s [%s]: A*x off by %.3g (scale %.3g)",
                         spec, tn(t), worst, scale);
            }
            sps_operator_destroy(op);
        }
        sps_vector_destroy(x);
        sps_vector_destroy(y);
        free(xr);
        free(xi);
        free(xh);
        free(yh);
        sps_matrix_destroy(A);
    }
}

/* Sizes at the edges (issue 24 item 12): what 32-bit offsets and indices cannot hold
 * is refused with the count, before any array is read or allocated: 2^31 triplets,
 * an operator of more than 2^31 - 1 scalar rows from compound entries. */
static void test_size_edges(void)
{
    const sps_index r[1] = {0}, c[1] = {0};
    const double v[64] = {1.0};
    sps_matrix A = (sps_matrix)&A;
    sps_status s = sps_matrix_from_coo(ctx, 4, 4, (int64_t)INT32_MAX + 1, r, c, v, SPS_F64, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL && contains(sps_context_error(ctx), "2147483648 nonzeros") &&
                 contains(sps_context_error(ctx), "32-bit"),
             "2^31 triplets: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    A = (sps_matrix)&A;
    s = sps_matrix_from_coo_entries(ctx, 300000000, 300000000, 1, r, c, v, sps_entry_block(8), SPS_F64, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL && contains(sps_context_error(ctx), "exceed the 32-bit index range"),
             "3e8 8x8-block rows (2.4e9 scalar rows): %s '%s'", sps_status_name(s), sps_context_error(ctx));
    A = (sps_matrix)&A;
    s = sps_matrix_from_coo(ctx, 4, 4, -1, r, c, v, SPS_F64, &A);
    TU_CHECK(s == SPS_ERR_ARG && A == NULL, "negative nnz: %s", sps_status_name(s));
    /* 60 bytes declaring 3 x 999999999 (the fuzzer's): the CSR build's column counters would
     * take 8 GB; with a 64 MB limit the size line refuses it */
    {
        const char *wide = "%%MatrixMarket matrix coordinate real general\n3 999999999 1\n1 1 1\n";
        const sps_read_options ro = {.max_memory = (int64_t)64 << 20};
        A = NULL;
        s = sps_matrix_read_mtx_buffer(ctx, wide, strlen(wide), "wide", SPS_F64, &ro, &A);
        TU_CHECK(s == SPS_ERR_PARSE && A == NULL && contains(sps_context_error(ctx), "wide:2: reading the 3 x 999999999"),
                 "3 x 999999999: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    }
    /* a size line declaring 2^31 entries: the reader refuses it there (no arrays) */
    const char *mm = "%%MatrixMarket matrix coordinate real general\n100000 100000 2147483648\n1 1 1\n";
    A = NULL;
    s = sps_matrix_read_mtx_buffer(ctx, mm, strlen(mm), "big", SPS_F64, NULL, &A);
    TU_CHECK(s == SPS_ERR_PARSE && A == NULL && contains(sps_context_error(ctx), "big:2: 2147483648 entries exceed"),
             "2^31 declared entries: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    /* a quaternion matrix whose real expansion (4n x 4m) does not index in 32 bits: at its size
       line too, naming the file (it was refused after the entries, as "matrix: ...") */
    const char *mq = "%%MatrixMarket matrix coordinate quaternion general\n536870912 1 1\n1 1 1 0 0 0\n";
    A = NULL;
    s = sps_matrix_read_mtx_buffer(ctx, mq, strlen(mq), "bigq", SPS_F64, NULL, &A);
    TU_CHECK(s == SPS_ERR_PARSE && A == NULL &&
                 contains(sps_context_error(ctx), "bigq:2: a 536870912 x 1 quaternion matrix acts as a 2147483648 x 4"),
             "quaternion 536870912 x 1: %s '%s'", sps_status_name(s), sps_context_error(ctx));
}

static void test_generate_errors(void)
{
    const char *bad[] = {"poisson2d", "poisson2d:", "poisson2d:0", "poisson2d:-3", "poisson2d:x", "poisson2d:4x",
                         "foo:3", "", "poisson:3", "poisson2d3", "poisson2d: 4", "poisson2d:+4"};
    /* too large for 32-bit indices (N^d would even overflow int64): SPS_ERR_ARG, no allocation attempt */
    const char *huge[] = {"poisson3d:3000000000", "poisson2d:99999999999999999999", "poisson3d:9223372036854775807",
                          "poisson2d:46341", "poisson3d:1291", "stencil27b3:1291", "stencil27b3:500"};
    const char *list = sps_matrix_generate_list();
    TU_CHECK(contains(list, "poisson2d") && contains(list, "poisson3d") && contains(list, "stencil27b3"),
             "generator list '%s'", list);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        sps_matrix A = (sps_matrix)&list;
        sps_context_clear_error(ctx);
        sps_status s = sps_matrix_generate(ctx, bad[i], SPS_F64, &A);
        TU_CHECK(s == SPS_ERR_ARG && A == NULL && contains(sps_context_error(ctx), list),
                 "generate '%s': %s, '%s' (want SPS_ERR_ARG listing '%s')", bad[i], sps_status_name(s),
                 sps_context_error(ctx), list);
        if (s == SPS_OK) sps_matrix_destroy(A);
    }
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        sps_matrix A = (sps_matrix)&list;
        sps_status s = sps_matrix_generate(ctx, huge[i], SPS_F64, &A);
        TU_CHECK(s == SPS_ERR_ARG && A == NULL && sps_context_error(ctx)[0],
                 "generate '%s': %s, '%s' (want SPS_ERR_ARG)", huge[i], sps_status_name(s), sps_context_error(ctx));
        if (s == SPS_OK) sps_matrix_destroy(A);
    }
    sps_matrix A = NULL;
    TU_CHECK(sps_matrix_generate(ctx, NULL, SPS_F64, &A) == SPS_ERR_ARG && A == NULL, "generate NULL spec");
    TU_CHECK(sps_matrix_generate(NULL, "poisson2d:3", SPS_F64, &A) == SPS_ERR_ARG, "generate NULL ctx");
    TU_CHECK(sps_matrix_generate(ctx, "poisson2d:3", SPS_F64, NULL) == SPS_ERR_ARG, "generate NULL out");
    TU_CHECK(sps_matrix_generate(ctx, "poisson2d:3", (sps_scalar)7, &A) == SPS_ERR_ARG && A == NULL, "generate bad type");
    sps_context_clear_error(ctx);
}

/* ------------------------------------------------------------------ Matrix Market round trips */
static double wide_value(sps_scalar t)
{
    /* full mantissa, exponent over most of the type's range */
    const double e = single(t) ? tu_rng_range(&rng, -36, 36) : tu_rng_range(&rng, -300, 300);
    double v = tu_rng_range(&rng, -1, 1) * pow(10.0, e);
    return single(t) ? (double)(float)v : v;
}

static void test_mtx_roundtrip(sps_scalar t)
{
    const int n = 53, m = 41;
    int nnz = 0;
    sps_index *row = tu_xcalloc(800, sizeof *row), *col = tu_xcalloc(800, sizeof *col);
    void *val = tu_xcalloc(800, ssz(t));
    for (int i = 0; i < n; i++) {
        if (i % 7 == 3) continue; /* empty rows */
        for (int j = 0; j < m; j++)
            if (tu_rng_uniform(&rng) < 0.25) {
                row[nnz] = i;
                col[nnz] = j;
                tu_put(t, val, (size_t)nnz++, wide_value(t), wide_value(t));
            }
    }
    /* special values: -0, a subnormal, the largest finite, 1/3 */
    tu_put(t, val, 0, -0.0, cplx(t) ? 1.0 / 3 : 0);
    tu_put(t, val, 1, single(t) ? 1.4e-45 : 4.9406564584124654e-324, cplx(t) ? -0.0 : 0);
    tu_put(t, val, 2, single(t) ? 3.4028234663852886e38 : 1.7976931348623157e308, 0);
    tu_put(t, val, 3, 1.0 / 3.0, single(t) ? -1e-40 : -2.2250738585072014e-308);
    sps_matrix A = NULL, B = NULL;
    char path[640];
    snprintf(path, sizeof path, "%s/rt_%s.mtx", tmpdir_path, tn(t));
    tu_csr ha, hb;
    if (TU_OK(ctx, sps_matrix_from_coo(ctx, n, m, nnz, row, col, val, t, &A)) &&
        TU_OK(ctx, sps_matrix_write_mtx(A, path)) && TU_OK(ctx, sps_matrix_read_mtx(ctx, path, t, &B)) &&
        tu_export_csr(NULL, A, &ha)) {
        if (tu_export_csr(NULL, B, &hb)) {
            TU_CHECK(tu_same_csr(&ha, &hb), "Matrix Market round trip [%s] not bitwise", tn(t));
            TU_CHECK(hb.info.symmetry == SPS_SYM_GENERAL, "written file reads back as general");
            tu_csr_free(&hb);
        }
        /* read in the other precision / field: f32 as f64 exactly; f64 as f32 refused (its
         * values beyond f32's range) */
        sps_matrix C = NULL;
        const sps_scalar other = single(t) ? (cplx(t) ? SPS_C64 : SPS_F64) : (cplx(t) ? SPS_C32 : SPS_F32);
        if (!single(t)) { /* the wide values (up to 1e300) overflow f32: refused, naming the entry */
            TU_CHECK(sps_matrix_read_mtx(ctx, path, other, &C) == SPS_ERR_NUMERIC &&
                         strstr(sps_context_error(ctx), "overflows"),
                     "[%s] read as %s: %s", tn(t), tn(other), sps_context_error(ctx));
            sps_context_clear_error(ctx);
        } else if (TU_OK(ctx, sps_matrix_read_mtx(ctx, path, other, &C)) && tu_export_csr(NULL, C, &hb)) {
            int ok = hb.info.scalar == other && hb.info.nnz == ha.info.nnz;
            for (int64_t k = 0; ok && k < ha.info.nnz; k++) {
                double r1, i1, r2, i2;
                tu_get(t, ha.val, (size_t)k, &r1, &i1);
                tu_get(other, hb.val, (size_t)k, &r2, &i2);
                /* f64 -> file -> f32: the double rounded to float; f32 written with %.9g
                   and read as f64 is the decimal's double, which rounds back to the float */
                if (single(other) ? (r2 != (double)(float)r1 || i2 != (double)(float)i1)
                                  : ((float)r2 != (float)r1 || (float)i2 != (float)i1))
                    ok = 0;
            }
            TU_CHECK(ok, "file written as %s read as %s", tn(t), tn(other));
            tu_csr_free(&hb);
        }
        sps_matrix_destroy(C);
        /* a real file read as complex gets zero imaginary parts; a complex file read as real becomes complex */
        C = NULL;
        const sps_scalar flip = cplx(t) ? (single(t) ? SPS_F32 : SPS_F64) : (single(t) ? SPS_C32 : SPS_C64);
        if (TU_OK(ctx, sps_matrix_read_mtx(ctx, path, flip, &C)) && tu_export_csr(NULL, C, &hb)) {
            const sps_scalar want = cplx(t) ? t : flip;
            int ok = hb.info.scalar == want && hb.info.nnz == ha.info.nnz;
            for (int64_t k = 0; ok && k < ha.info.nnz; k++) {
                double r1, i1, r2, i2;
                tu_get(t, ha.val, (size_t)k, &r1, &i1);
                tu_get(hb.info.scalar, hb.val, (size_t)k, &r2, &i2);
                if (r2 != r1 || i2 != i1) ok = 0;
            }
            TU_CHECK(ok, "file written as %s read with %s: type %s", tn(t), tn(flip), tn(hb.info.scalar));
            tu_csr_free(&hb);
        }
        sps_matrix_destroy(C);
        tu_csr_free(&ha);
    }
    remove(path);
    /* errors */
    sps_status s = sps_matrix_write_mtx(A, "/nonexistent-dir-for-sps-test/x.mtx");
    TU_CHECK(s == SPS_ERR_IO && contains(sps_context_error(ctx), "nonexistent-dir-for-sps-test"),
             "write to a missing directory: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    TU_CHECK(sps_matrix_write_mtx(A, NULL) == SPS_ERR_ARG, "write NULL path");
    TU_CHECK(sps_matrix_write_mtx(NULL, path) == SPS_ERR_ARG, "write NULL matrix");
    sps_matrix C = (sps_matrix)&B;
    s = sps_matrix_read_mtx(ctx, "/nonexistent-dir-for-sps-test/x.mtx", t, &C);
    TU_CHECK(s == SPS_ERR_IO && C == NULL && contains(sps_context_error(ctx), "nonexistent-dir-for-sps-test"),
             "read a missing file: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    TU_CHECK(sps_matrix_read_mtx(ctx, NULL, t, &C) == SPS_ERR_ARG, "read NULL path");
    TU_CHECK(sps_matrix_read_mtx(NULL, path, t, &C) == SPS_ERR_ARG, "read NULL ctx");
    TU_CHECK(sps_matrix_read_mtx(ctx, path, t, NULL) == SPS_ERR_ARG, "read NULL out");
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
    free(row);
    free(col);
    free(val);
    sps_context_clear_error(ctx);
}

/* Empty matrices survive the Matrix Market round trip. */
static void test_mtx_empty(void)
{
    const int dims[3][2] = {{0, 0}, {5, 3}, {0, 4}};
    for (int q = 0; q < 3; q++) {
        sps_matrix A = NULL, B = NULL;
        char path[640];
        snprintf(path, sizeof path, "%s/empty%d.mtx", tmpdir_path, q);
        if (TU_OK(ctx, sps_matrix_from_coo(ctx, dims[q][0], dims[q][1], 0, NULL, NULL, NULL, SPS_C64, &A)) &&
            TU_OK(ctx, sps_matrix_write_mtx(A, path)) && TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_C64, &B))) {
            sps_matrix_info_t info;
            sps_matrix_info(B, &info);
            TU_CHECK(info.rows == dims[q][0] && info.cols == dims[q][1] && info.nnz == 0, "empty %dx%d round trip",
                     dims[q][0], dims[q][1]);
        }
        remove(path);
        sps_matrix_destroy(A);
        sps_matrix_destroy(B);
    }
}

/* read_mtx_buffer: symmetric / skew / hermitian expansion and duplicates */
static void test_mtx_buffer(void)
{
    const char *sym = "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 2\n2 1 -1\n3 2 0.5\n3 1 4\n";
    sps_matrix A = NULL;
    tu_csr h;
    if (TU_OK(ctx, sps_matrix_read_mtx_buffer(ctx, sym, strlen(sym), "sym", SPS_F64, NULL, &A)) && tu_export_csr(NULL, A, &h)) {
        dense D = dense_new(3, 3);
        const double e[][3] = {{0, 0, 2}, {1, 0, -1}, {0, 1, -1}, {2, 1, 0.5}, {1, 2, 0.5}, {2, 0, 4}, {0, 2, 4}};
        for (int k = 0; k < 7; k++) {
            D.re[(int)e[k][0] * 3 + (int)e[k][1]] = e[k][2];
            D.present[(int)e[k][0] * 3 + (int)e[k][1]] = 1;
        }
        check_against_dense("symmetric buffer", &h, &D);
        TU_CHECK(h.info.symmetry == SPS_SYM_SYMMETRIC, "symmetric buffer: symmetry %d", (int)h.info.symmetry);
        dense_free(&D);
        tu_csr_free(&h);
    }
    sps_matrix_destroy(A);
    const char *herm = "%%MatrixMarket matrix coordinate complex hermitian\n2 2 3\n1 1 2 0\n2 1 1 -3\n2 2 5 0\n";
    A = NULL;
    if (TU_OK(ctx, sps_matrix_read_mtx_buffer(ctx, herm, strlen(herm), "herm", SPS_F64, NULL, &A)) && tu_export_csr(NULL, A, &h)) {
        double v[8] = {2, 0, 1, 3, 1, -3, 5, 0};
        TU_CHECK(h.info.scalar == SPS_C64 && h.info.nnz == 4 && memcmp(h.val, v, sizeof v) == 0 &&
                     h.info.symmetry == SPS_SYM_HERMITIAN,
                 "hermitian buffer expanded with conjugates");
        tu_csr_free(&h);
    }
    sps_matrix_destroy(A);
    const char *dup = "%%MatrixMarket matrix coordinate real general\n2 3 4\n1 3 1.25\n2 1 7\n1 3 2.5\n1 3 -0.75\n";
    A = NULL;
    if (TU_OK(ctx, sps_matrix_read_mtx_buffer(ctx, dup, strlen(dup), "dup", SPS_F32, NULL, &A)) && tu_export_csr(NULL, A, &h)) {
        float v[2] = {3.0f, 7.0f};
        TU_CHECK(h.info.nnz == 2 && h.info.cols == 3 && h.col[0] == 2 && h.col[1] == 0 && memcmp(h.val, v, sizeof v) == 0,
                 "duplicates summed on read");
        tu_csr_free(&h);
    }
    sps_matrix_destroy(A);
    const char *bad = "%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n";
    A = (sps_matrix)&h;
    sps_status s = sps_matrix_read_mtx_buffer(ctx, bad, strlen(bad), "bad.mtx", SPS_F64, NULL, &A);
    TU_CHECK(s == SPS_ERR_PARSE && A == NULL && contains(sps_context_error(ctx), "bad.mtx:3"),
             "malformed buffer: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    sps_context_clear_error(ctx);
}

/* ------------------------------------------------------------------ real matrices */
typedef struct { int i, j; double re, im; long seq; } trip;
static int trip_cmp(const void *a, const void *b)
{
    const trip *x = a, *y = b;
    if (x->i != y->i) return x->i < y->i ? -1 : 1;
    if (x->j != y->j) return x->j < y->j ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A deliberately simple reader for well-formed coordinate files (the corpus),
 * independent of io/mmio.c.  Returns the sorted triplets (file order kept
 * among duplicates), or NULL. */
static trip *naive_read(const char *path, int *n, int *m, long *ntrip, int *is_cplx, sps_symmetry *sym)
{
    gzFile f = gzopen(path, "rb");
    if (!f) return NULL;
    char line[1024], field[64] = "", symm[64] = "";
    if (!gzgets(f, line, sizeof line) || sscanf(line, "%%%%MatrixMarket matrix coordinate %63s %63s", field, symm) != 2) {
        gzclose(f);
        return NULL;
    }
    for (char *p = field; *p; p++) *p = (char)(*p | 0x20);
    for (char *p = symm; *p; p++) *p = (char)(*p | 0x20);
    *is_cplx = strcmp(field, "complex") == 0;
    const int pattern = strcmp(field, "pattern") == 0;
    *sym = strcmp(symm, "symmetric") == 0 ? SPS_SYM_SYMMETRIC
           : strcmp(symm, "skew-symmetric") == 0 ? SPS_SYM_SKEW
           : strcmp(symm, "hermitian") == 0 ? SPS_SYM_HERMITIAN : SPS_SYM_GENERAL;
    long nz = -1;
    while (gzgets(f, line, sizeof line)) {
        if (line[0] == '%' || line[strspn(line, " \t\r\n")] == 0) continue;
        if (sscanf(line, "%d %d %ld", n, m, &nz) == 3) break;
    }
    if (nz < 0) { gzclose(f); return NULL; }
    trip *t = tu_xcalloc((size_t)nz * 2, sizeof *t);
    long k = 0;
    while (k < nz && gzgets(f, line, sizeof line)) {
        if (line[0] == '%' || line[strspn(line, " \t\r\n")] == 0) continue;
        char *p = line, *e;
        int i = (int)strtol(p, &e, 10);
        p = e;
        int j = (int)strtol(p, &e, 10);
        p = e;
        double re = pattern ? 1.0 : strtod(p, &e), im = 0;
        if (*is_cplx) { p = e; im = strtod(p, &e); }
        t[k] = (trip){i - 1, j - 1, re, im, k};
        k++;
    }
    gzclose(f);
    long nt = k;
    for (long q = 0; q < k; q++)
        if (*sym != SPS_SYM_GENERAL && t[q].i != t[q].j) {
            double s = *sym == SPS_SYM_SKEW ? -1 : 1, ci = *sym == SPS_SYM_HERMITIAN ? -1 : 1;
            t[nt] = (trip){t[q].j, t[q].i, s * t[q].re, s * ci * t[q].im, nt};
            nt++;
        }
    qsort(t, (size_t)nt, sizeof *t, trip_cmp);
    *ntrip = nt;
    return t;
}

static void check_file_independent(const char *dir, const char *rel)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    int n = 0, m = 0, is_c = 0;
    long nt = 0;
    sps_symmetry sym;
    trip *tr = naive_read(path, &n, &m, &nt, &is_c, &sym);
    if (!tr) {
        printf("  %s: not found, skipped\n", rel);
        return;
    }
    const sps_scalar t = is_c ? SPS_C64 : SPS_F64;
    sps_matrix A = NULL;
    tu_csr h;
    if (TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_F64, &A)) && tu_export_csr(NULL, A, &h)) {
        /* merge duplicates of the sorted triplets */
        long distinct = 0, bad = 0, q = 0;
        int canon = 1;
        for (int i = 0; i < h.info.rows && canon; i++)
            for (sps_index k = h.rowptr[i]; k < h.rowptr[i + 1]; k++) {
                if (q >= nt || tr[q].i != i || tr[q].j != h.col[k]) { canon = 0; break; }
                double sr = 0, si = 0, sa = 0;
                long q0 = q;
                for (; q < nt && tr[q].i == i && tr[q].j == h.col[k]; q++) {
                    sr += tr[q].re;
                    si += tr[q].im;
                    sa += fabs(tr[q].re) + fabs(tr[q].im);
                }
                double re, im;
                tu_get(t, h.val, (size_t)k, &re, &im);
                /* a single entry must be exact; sums of duplicates within rounding */
                const double tol = q - q0 == 1 ? 0.0 : 4 * 1.1e-16 * sa;
                if (!(fabs(re - sr) <= tol && fabs(im - si) <= tol)) bad++;
                distinct++;
            }
        TU_CHECK(canon && q == nt, "%s: pattern differs from an independent reading (at triplet %ld of %ld)", rel, q, nt);
        TU_CHECK(h.info.rows == n && h.info.cols == m && h.info.nnz == distinct && h.info.scalar == t &&
                     h.info.symmetry == sym,
                 "%s: %dx%d nnz %lld %s sym %d, want %dx%d nnz %ld %s sym %d", rel, (int)h.info.rows,
                 (int)h.info.cols, (long long)h.info.nnz, tn(h.info.scalar), (int)h.info.symmetry, n, m, distinct,
                 tn(t), (int)sym);
        TU_CHECK(bad == 0, "%s: %ld values differ from an independent reading", rel, bad);
        printf("  %s: %dx%d, %ld triplets -> nnz %lld\n", rel, n, m, nt, (long long)h.info.nnz);
        tu_csr_free(&h);
    }
    sps_matrix_destroy(A);
    free(tr);
}

/* Every file of the corpus (up to ~300k stored entries): CSR -> COO -> CSR bitwise,
 * and CSR and COO SpMV / SpMV^T against a long double reference. */
static void check_corpus(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *mf = fopen(path, "r");
    if (!TU_CHECK(mf != NULL, "cannot open %s", path)) return;
    char line[4096];
    int files = 0, skipped = 0;
    while (fgets(line, sizeof line, mf)) {
        char name[256], group[64], symm[64], field[64];
        long rows, cols, nnzf;
        if (sscanf(line, "%255[^\t]\t%63[^\t]\t%ld\t%ld\t%ld\t%63[^\t]\t%63[^\t]", name, group, &rows, &cols, &nnzf,
                   symm, field) != 7)
            continue; /* header */
        const long expanded = strcmp(symm, "general") ? 2 * nnzf : nnzf;
        if (expanded > 300000) { skipped++; continue; }
        snprintf(path, sizeof path, "%s/%s/%s.mtx.gz", dir, group, name);
        sps_matrix A = NULL, B = NULL, C = NULL;
        if (!TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_F64, &A))) continue;
        files++;
        tu_csr ha, hc;
        if (TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_COO, NULL, &B)) &&
            TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_CSR, NULL, &C)) && tu_export_csr(NULL, A, &ha)) {
            TU_CHECK(ha.info.rows == rows && ha.info.cols == cols && ha.info.nnz <= expanded &&
                         ha.info.scalar == (strcmp(field, "complex") ? SPS_F64 : SPS_C64),
                     "%s: %dx%d nnz %lld (file %ld)", name, (int)ha.info.rows, (int)ha.info.cols,
                     (long long)ha.info.nnz, nnzf);
            if (tu_export_csr(NULL, C, &hc)) {
                TU_CHECK(tu_same_csr(&ha, &hc), "%s: CSR -> COO -> CSR not bitwise", name);
                tu_csr_free(&hc);
            }
            double w = 0.0; /* set by spmv_matches */
            for (int mode = 0; mode < 2; mode++) {
                TU_CHECK(spmv_matches(&ha, A, (sps_op_mode)mode, &w), "%s: CSR SpMV%s off by %g", name, mode ? "^T" : "", w);
                TU_CHECK(spmv_matches(&ha, B, (sps_op_mode)mode, &w), "%s: COO SpMV%s off by %g", name, mode ? "^T" : "", w);
            }
            tu_csr_free(&ha);
        }
        sps_matrix_destroy(A);
        sps_matrix_destroy(B);
        sps_matrix_destroy(C);
    }
    fclose(mf);
    printf("corpus: %d files checked (CSR/COO round trip and SpMV), %d larger ones skipped\n", files, skipped);
    TU_CHECK(files > 0, "no corpus file could be checked");
}

/* --format auto's model (formats/auto.c): each rule picks its format from row
 * lengths on the GPU; the CPU always multiplies CSR rows; compound entries bcsr. */
static sps_index *rows_of(sps_index n, sps_index (*len)(sps_index i))
{
    sps_index *rp = tu_xcalloc((size_t)n + 1, sizeof *rp);
    for (sps_index i = 0; i < n; i++) rp[i + 1] = rp[i] + len(i);
    return rp;
}
static sps_index len_uniform5(sps_index i) { (void)i; return 5; }
static sps_index len_one_long(sps_index i) { return i == 7 ? 5000 : 4; }
static sps_index len_regular20(sps_index i) { return 12 + i % 16; } /* 12..27 */
static sps_index len_short_mixed(sps_index i) { return 3 + i % 4; }      /* 3..6 */
static sps_index len_short_spiky(sps_index i) { return i % 32 == 0 ? 40 : 2; }
static sps_index len_short_spiky24(sps_index i) { return i % 32 == 0 ? 24 : 2; }
static sps_index len_sparse_spiky(sps_index i) { return i % 320 == 0 ? 32 : 1; }
static sps_index len_one_of17(sps_index i) { return i == 0 ? 17 : 1; }
static sps_index len_nine(sps_index i) { return i % 50 == 0 ? 8 : 9; } /* fv1's shape */
static sps_index len_near_uniform24(sps_index i) { return i % 10 == 0 ? 20 : 24; }

static void test_auto_format(void)
{
    static const struct {
        sps_index n;
        sps_index (*len)(sps_index);
        sps_format gpu;
        const char *what;
    } cases[] = {
        {1000, len_uniform5, SPS_FMT_ELL, "uniform short rows: ell"},
        {100000, len_one_long, SPS_FMT_CSR, "one row 1000x the average: csr (merge path)"},
        {200000, len_regular20, SPS_FMT_SELL, "200k regular rows of ~20: sell"},
        {5000, len_regular20, SPS_FMT_CSR, "5k rows of ~20: csr row groups"},
        {3000, len_short_mixed, SPS_FMT_ELL, "3k short rows of 3-6: ell (small: the lean kernel)"},
        {60000, len_short_mixed, SPS_FMT_SELL, "60k short rows, SELL padding <= 50 %: sell"},
        {3000, len_short_spiky, SPS_FMT_CSR, "3k short rows, one of 40 every 32: csr (a row over 32)"},
        {3000, len_short_spiky24, SPS_FMT_ELL, "3k short rows, one of 24 every 32: ell (small, fill 9)"},
        {3000, len_sparse_spiky, SPS_FMT_CSR, "3k rows of 1, one of 32 every 320: csr (ELL's fill over 10)"},
        {256, len_one_of17, SPS_FMT_CSR, "256 rows of 1, one of 17: csr (ELL's 4352 slots: fill 16, past the floor)"},
        {60000, len_short_spiky24, SPS_FMT_CSR, "60k short rows, one of 24 every 32: csr"},
        {9604, len_nine, SPS_FMT_ELL, "9.6k near-uniform rows of 8-9: ell (small, at most 16 a row)"},
        {9604, len_near_uniform24, SPS_FMT_CSR, "9.6k near-uniform rows of 20-24: csr (over 16 a row)"},
        {60000, len_nine, SPS_FMT_CSR, "60k near-uniform rows of 8-9: csr (over 50k rows)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sps_index *rp = rows_of(cases[c].n, cases[c].len);
        const char *why = NULL;
        const sps_format g = sps_format_auto_of(cases[c].n, cases[c].n, rp, NULL, SPS_BACKEND_CUDA, &why);
        TU_CHECK(g == cases[c].gpu && why && why[0], "auto %s: got %s (%s)", cases[c].what, sps_format_name(g),
                 why ? why : "no reason");
        TU_CHECK(sps_format_auto_of(cases[c].n, cases[c].n, rp, NULL, SPS_BACKEND_CPU, NULL) == SPS_FMT_CSR, "auto on the CPU: csr");
        free(rp);
    }
    TU_CHECK(sps_format_auto_of(0, 0, (sps_index[]){0}, NULL, SPS_BACKEND_CUDA, NULL) == SPS_FMT_CSR, "auto, no rows: csr");
    TU_CHECK(sps_format_auto_of(3, 3, (sps_index[]){0, 0, 0, 0}, NULL, SPS_BACKEND_CUDA, NULL) == SPS_FMT_CSR,
             "auto, rows without entries: csr (not an ELL of width 0)");
    /* rule 0 (diagonals): a g x g 5-point stencil of more than 50k rows is 5 nearly full
       diagonals -> dia on the GPU; the same rows with one entry moved off its diagonals in
       every row of a band (more than 16 diagonals) -> not dia; no columns: not tried; the
       CPU: csr; a small stencil keeps ELL's lean kernel */
    for (int small = 0; small < 2; small++) {
        const sps_index g = small ? 40 : 240, n = g * g;
        sps_index *rp = tu_xcalloc((size_t)n + 1, sizeof *rp), *cl = tu_xcalloc((size_t)n * 5, sizeof *cl);
        for (sps_index i = 0; i < n; i++) {
            sps_index k = rp[i];
            const sps_index r = i / g, c = i % g;
            if (r > 0) cl[k++] = i - g;
            if (c > 0) cl[k++] = i - 1;
            cl[k++] = i;
            if (c < g - 1) cl[k++] = i + 1;
            if (r < g - 1) cl[k++] = i + g;
            rp[i + 1] = k;
        }
        const char *w = NULL;
        TU_CHECK(sps_format_auto_of(n, n, rp, cl, SPS_BACKEND_CUDA, &w) == (small ? SPS_FMT_ELL : SPS_FMT_DIA) && w,
                 "auto: 5-point stencil of %d rows: %s", (int)n, small ? "ell" : "dia");
        TU_CHECK(sps_format_auto_of(n, n, rp, NULL, SPS_BACKEND_CUDA, NULL) == SPS_FMT_ELL,
                 "auto: 5-point stencil without its columns: ell (near-uniform short rows)");
        TU_CHECK(sps_format_auto_of(n, n, rp, cl, SPS_BACKEND_CPU, NULL) == SPS_FMT_CSR, "auto: stencil on the CPU: csr");
        if (!small) { /* the diagonal entry of rows g .. 2g moves to column (7 i) mod n: > 16 diagonals */
            for (sps_index i = g; i < 2 * g; i++) cl[rp[i] + (i % g > 0 ? 2 : 1)] = (7 * i) % n;
            TU_CHECK(sps_format_auto_of(n, n, rp, cl, SPS_BACKEND_CUDA, NULL) != SPS_FMT_DIA,
                     "auto: scattered entries: not dia");
            /* two diagonals, the second in even rows only: 2 n slots for 1.5 n entries (fill bound) */
            sps_index k = 0;
            for (sps_index i = 0; i < n; i++) {
                rp[i] = k;
                cl[k++] = i;
                if (i % 2 == 0 && i + 7 < n) cl[k++] = i + 7;
            }
            rp[n] = k;
            TU_CHECK(sps_format_auto_of(n, n, rp, cl, SPS_BACKEND_CUDA, NULL) != SPS_FMT_DIA,
                     "auto: two diagonals, one half empty (fill 1.33): not dia");
        }
        free(rp);
        free(cl);
    }
    /* a matrix: CSR on the CPU context; conversion with SPS_FMT_AUTO builds the pick */
    sps_matrix A = NULL, B = NULL;
    sps_format f = SPS_FMT_AUTO;
    const char *why = NULL;
    if (TU_OK(ctx, sps_matrix_generate(ctx, "poisson2d:12", SPS_F64, &A))) {
        TU_CHECK(sps_matrix_auto_format(A, &f, &why) == SPS_OK && f == SPS_FMT_CSR && why, "auto of a CPU matrix");
        if (TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_AUTO, NULL, &B))) {
            sps_matrix_info_t info;
            TU_CHECK(sps_matrix_info(B, &info) == SPS_OK && info.format == SPS_FMT_CSR, "convert auto: csr");
        }
        /* options of another format than the pick are not applied (and not an error) */
        sps_options o = NULL;
        sps_matrix C = NULL;
        if (TU_OK(ctx, sps_format_options_create(SPS_FMT_SELL, &o)) &&
            TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_AUTO, o, &C))) {
            sps_matrix_info_t info;
            TU_CHECK(sps_matrix_info(C, &info) == SPS_OK && info.format == SPS_FMT_CSR,
                     "convert auto with sell's options: csr (the options not applied)");
        }
        sps_options_destroy(o);
        sps_matrix_destroy(C);
    }
    TU_CHECK(sps_matrix_auto_format(NULL, &f, NULL) == SPS_ERR_ARG, "NULL matrix");
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
}

int main(int argc, char **argv)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 777);
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpdir_path, sizeof tmpdir_path, "%s/sps_test_formats_%ld", tmp && tmp[0] ? tmp : "/tmp", (long)getpid());
    if (mkdir(tmpdir_path, 0700) != 0) {
        fprintf(stderr, "cannot create %s\n", tmpdir_path);
        return 1;
    }

    test_format_list_threads(); /* before anything else calls sps_format_list */
    test_registry();
    test_convert_errors();
    test_generate_errors();
    test_size_edges();
    test_auto_format();
    test_mtx_buffer();
    test_mtx_empty();
    test_convert_warning();
    test_compound_index_bits();
    build_shapes();
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti];
        test_from_coo(t);
        test_from_csr(t);
        test_diagonal(t);
        test_diagonal_compound(t);
        test_generate(t);
        test_generate_stencil27b3(t);
        test_mtx_roundtrip(t);
        for (int si = 0; si < nshapes; si++) test_roundtrip(t, &shapes[si]);
    }
    for (int si = 0; si < nshapes; si++) {
        free(shapes[si].rowptr);
        free(shapes[si].col);
    }

    const char *dir = tu_matrix_dir(argc, argv, 1);
    if (!dir) {
        printf("real matrices: skipped (no SPS_MATRIX_DIR)\n");
    } else {
        const char *files[] = {"nonsym/west0067.mtx.gz", "complex/young1c.mtx.gz", "complex/young4c.mtx.gz",
                               "complex/qc324.mtx.gz",   "spd/nos4.mtx.gz",        "spd/LF10.mtx.gz",
                               "irregular/rel3.mtx.gz",  "irregular/relat4.mtx.gz", "nonsym/rajat01.mtx.gz",
                               "spd/bcsstk03.mtx.gz"};
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) check_file_independent(dir, files[i]);
        check_corpus(dir);
    }
    rmdir(tmpdir_path);
    sps_context_destroy(ctx);
    return tu_finish();
}
