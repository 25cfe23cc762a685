/* Tests of the Matrix Market reader/writer (io/mmio.c).
 *
 *   test_mmio DATA_DIR [MATRIX_DIR]
 *
 * DATA_DIR is tests/data (or tests/data/bad itself): every bad/NAME.mtx must fail
 * with the message substring listed in bad/EXPECTED.tsv, read with quaternion
 * files allowed (so the quaternion ones fail for their own fault).  MATRIX_DIR (or env
 * SPS_MATRIX_DIR) is the real-matrix corpus with MANIFEST.tsv; without it
 * that part prints "skipped".  Ends with "N passed, M failed". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "io/mmio.h"
#include "spsolve/file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

static int n_pass, n_fail;

static int check(int ok, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int check(int ok, int line, const char *fmt, ...)
{
    if (ok) {
        n_pass++;
        return 1;
    }
    n_fail++;
    fprintf(stderr, "FAIL test_mmio.c:%d: ", line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 0;
}
#define CHECK(cond, ...) check(!!(cond), __LINE__, __VA_ARGS__)

static char err[1024];

static sps_status rd(const char *text, int allow, sps_mm_data *d)
{
    sps_mm_options o = {.allow_nonfinite = allow};
    return sps_mm_read_buffer(text, strlen(text), "<buffer>", &o, d, err, sizeof err);
}

/* rd() with quaternion files allowed. */
static sps_status rdq(const char *text, int allow, sps_mm_data *d)
{
    sps_mm_options o = {.allow_nonfinite = allow, .allow_quaternion = 1};
    return sps_mm_read_buffer(text, strlen(text), "<buffer>", &o, d, err, sizeof err);
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Check entry k of d: 0-based (i,j) and its sps_mm_field_values(field) values
 * (want holds 4; values past the field's count are ignored). */
static void check_entry(int line, const sps_mm_data *d, int64_t k, int32_t i, int32_t j, const double *want)
{
    if (k >= d->nnz) {
        check(0, line, "entry %lld beyond nnz %lld", (long long)k, (long long)d->nnz);
        return;
    }
    const int nv = sps_mm_field_values(d->field);
    double got[4] = {0, 0, 0, 0};
    int same = d->row[k] == i && d->col[k] == j;
    for (int p = 0; p < nv; p++) {
        got[p] = d->val[nv * k + p];
        same &= same_bits(got[p], want[p]);
    }
    check(same, line, "entry %lld: got (%d,%d,%.17g,%.17g,%.17g,%.17g), want (%d,%d,%.17g,%.17g,%.17g,%.17g)",
          (long long)k, d->row[k], d->col[k], got[0], got[1], got[2], got[3], i, j, want[0], want[1], want[2],
          want[3]);
}
#define ENTRY(d, k, i, j, re, im) check_entry(__LINE__, (d), (k), (i), (j), (const double[4]){(re), (im), 0, 0})
#define QENTRY(d, k, i, j, a, b, c, e) \
    check_entry(__LINE__, (d), (k), (i), (j), (const double[4]){(a), (b), (c), (e)})

/* ------------------------------------------------------------------------ */

static void test_real_general(void)
{
    const char *lf = "%%MatrixMarket matrix coordinate real general\n"
                     "% comment\n"
                     "\n"
                     "  % indented comment\n"
                     "  3 4 3  \n"
                     "1 1 1.5\n"
                     "\n"
                     "\t2  3\t-2e3  \n"
                     "% comment between entries\n"
                     "3 4 .25";
    sps_mm_data d;
    sps_status st = rd(lf, 0, &d);
    CHECK(st == SPS_OK, "real general: %s", err);
    if (st != SPS_OK) return;
    CHECK(d.rows == 3 && d.cols == 4 && d.nnz == 3 && d.nnz_file == 3 && !d.is_array && d.field == SPS_MM_REAL &&
              d.symmetry == SPS_MM_GENERAL,
          "real general header");
    ENTRY(&d, 0, 0, 0, 1.5, 0);
    ENTRY(&d, 1, 1, 2, -2000.0, 0);
    ENTRY(&d, 2, 2, 3, 0.25, 0);

    /* the same text with CRLF line ends reads identically */
    size_t n = strlen(lf);
    char *crlf = malloc(2 * n + 1), *q = crlf;
    for (size_t i = 0; i < n; i++) {
        if (lf[i] == '\n') *q++ = '\r';
        *q++ = lf[i];
    }
    *q = '\0';
    sps_mm_data e;
    st = rd(crlf, 0, &e);
    CHECK(st == SPS_OK, "CRLF: %s", err);
    if (st == SPS_OK) {
        CHECK(e.nnz == d.nnz && !memcmp(e.row, d.row, 3 * sizeof(int32_t)) &&
                  !memcmp(e.col, d.col, 3 * sizeof(int32_t)) && !memcmp(e.val, d.val, 3 * sizeof(double)),
              "CRLF result differs from LF");
        sps_mm_data_free(&e);
    }
    /* CRLF error line numbers stay right */
    strcpy(crlf, "%%MatrixMarket matrix coordinate real general\r\n% c\r\n2 2 2\r\n1 1 1\r\n2 3 1\r\n");
    st = rd(crlf, 0, &e);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "<buffer>:5: column index 3 out of range 1..2"), "CRLF error: %s", err);
    free(crlf);
    sps_mm_data_free(&d);
    CHECK(d.row == NULL && d.val == NULL && d.nnz == 0, "data_free zeroes");
    sps_mm_data_free(&d); /* twice is fine */
}

static void test_banner_variants(void)
{
    sps_mm_data d;
    /* case-insensitive keywords, BOM and blank lines before the banner */
    sps_status st = rd("\xEF\xBB\xBF\n  \n%%matrixmarket MATRIX Coordinate REAL General\n1 1 1\n1 1 2\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 1 && d.val[0] == 2.0, "banner variants: %s", err);
    sps_mm_data_free(&d);
    st = rd("%%MatrixMarket\tmatrix  coordinate\treal   general   \n1 1 1\n1 1 2\n", 0, &d);
    CHECK(st == SPS_OK, "tabs in banner: %s", err);
    sps_mm_data_free(&d);
    /* an empty matrix still gets non-NULL arrays */
    st = rd("%%MatrixMarket matrix coordinate real general\n3 3 0\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 0 && d.row && d.col && d.val && d.rows == 3, "empty matrix: %s", err);
    sps_mm_data_free(&d);
    st = rd("%%MatrixMarket matrix coordinate real general\n0 0 0\n\n% end\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 0 && d.rows == 0, "0x0 matrix: %s", err);
    sps_mm_data_free(&d);
    st = rd("%%MatrixMarket matrix array real general\n0 5\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 0 && d.cols == 5 && d.is_array, "0x5 array: %s", err);
    sps_mm_data_free(&d);
}

static void test_integer_pattern(void)
{
    sps_mm_data d;
    sps_status st = rd("%%MatrixMarket matrix coordinate integer general\n2 2 3\n1 1 7\n2 2 1.1E1\n1 2 -3\n", 0, &d);
    CHECK(st == SPS_OK && d.field == SPS_MM_INTEGER, "integer: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 0, 7.0, 0);
        ENTRY(&d, 1, 1, 1, 11.0, 0);
        ENTRY(&d, 2, 0, 1, -3.0, 0);
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 1   \n", 0, &d);
    CHECK(st == SPS_OK && d.field == SPS_MM_PATTERN && d.nnz == 2, "pattern general: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 1, 1.0, 0);
        ENTRY(&d, 1, 2, 0, 1.0, 0);
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n2 1\n3 2\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 5 && d.nnz_file == 3 && d.symmetry == SPS_MM_SYMMETRIC, "pattern symmetric: %s",
          err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 0, 1.0, 0);
        ENTRY(&d, 1, 1, 0, 1.0, 0);
        ENTRY(&d, 2, 2, 1, 1.0, 0);
        ENTRY(&d, 3, 0, 1, 1.0, 0); /* mirrors follow, in file order */
        ENTRY(&d, 4, 1, 2, 1.0, 0);
    }
    sps_mm_data_free(&d);
}

static void test_symmetry_real(void)
{
    sps_mm_data d;
    sps_status st = rd("%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 4\n2 1 -1\n3 3 5\n3 1 0.5\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 6 && d.nnz_file == 4, "symmetric: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 0, 4.0, 0);
        ENTRY(&d, 1, 1, 0, -1.0, 0);
        ENTRY(&d, 2, 2, 2, 5.0, 0);
        ENTRY(&d, 3, 2, 0, 0.5, 0);
        ENTRY(&d, 4, 0, 1, -1.0, 0);
        ENTRY(&d, 5, 0, 2, 0.5, 0);
    }
    sps_mm_data_free(&d);

    /* upper-triangle storage is accepted too */
    st = rd("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 2 3\n2 3 4\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 4, "symmetric upper: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 2, 1, 0, 3.0, 0);
        ENTRY(&d, 3, 2, 1, 4.0, 0);
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -2\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 4 && d.symmetry == SPS_MM_SKEW, "skew: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 1, 0, 1.5, 0);
        ENTRY(&d, 1, 2, 1, -2.0, 0);
        ENTRY(&d, 2, 0, 1, -1.5, 0);
        ENTRY(&d, 3, 1, 2, 2.0, 0);
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix coordinate integer symmetric\n2 2 2\n1 1 3\n2 1 -7\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 3, "integer symmetric: %s", err);
    if (st == SPS_OK) ENTRY(&d, 2, 0, 1, -7.0, 0);
    sps_mm_data_free(&d);
}

static void test_complex(void)
{
    sps_mm_data d;
    sps_status st = rd("%%MatrixMarket matrix coordinate complex general\n2 3 2\n1 3 1.5 -2\n2 1 0 1e-3\n", 0, &d);
    CHECK(st == SPS_OK && d.field == SPS_MM_COMPLEX && d.nnz == 2, "complex general: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 2, 1.5, -2.0);
        ENTRY(&d, 1, 1, 0, 0.0, 1e-3);
    }
    sps_mm_data_free(&d);

    /* CR-only line endings: the message says so */
    st = rd("%%MatrixMarket matrix coordinate real general\r2 2 1\r1 1 1\r", 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "CR line endings only"), "CR-only file: %s", err);
    sps_mm_data_free(&d);
    /* a hermitian diagonal entry with an imaginary part is refused naming the line */
    st = rd("%%MatrixMarket matrix coordinate complex Hermitian\n3 3 3\n1 1 2 0\n3 1 1 2\n2 2 5 0.25\n", 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "<buffer>:5: diagonal entry (2,2) of a hermitian matrix has a nonzero "
                                             "imaginary part (0.25)"),
          "hermitian imaginary diagonal: %s", err);
    sps_mm_data_free(&d);
    /* capitalised Hermitian as in real files */
    st = rd("%%MatrixMarket matrix coordinate complex Hermitian\n3 3 3\n1 1 2 0\n3 1 1 2\n2 2 5 0\n", 0, &d);
    CHECK(st == SPS_OK && d.symmetry == SPS_MM_HERMITIAN && d.nnz == 4, "hermitian: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 0, 2.0, 0.0);
        ENTRY(&d, 1, 2, 0, 1.0, 2.0);
        ENTRY(&d, 2, 1, 1, 5.0, 0.0);
        ENTRY(&d, 3, 0, 2, 1.0, -2.0); /* conjugate */
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix coordinate complex symmetric\n2 2 1\n2 1 1 2\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 2, "complex symmetric: %s", err);
    if (st == SPS_OK) ENTRY(&d, 1, 0, 1, 1.0, 2.0); /* no conjugate */
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix coordinate complex skew-symmetric\n2 2 1\n2 1 1 2\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 2, "complex skew: %s", err);
    if (st == SPS_OK) ENTRY(&d, 1, 0, 1, -1.0, -2.0);
    sps_mm_data_free(&d);
}

/* The quaternion extension: `i j a b c d` / `a b c d`, 4 values per entry. */
static void test_quaternion(void)
{
    sps_mm_data d;
    const char *gen = "%%MatrixMarket matrix coordinate Quaternion general\n% q\n2 3 3\n"
                      "1 3 1.5 -2 0 4\n2 1 0 1e-3 -0.5 .25\n1 3 1 1 1 1\n";
    sps_status st = rdq(gen, 0, &d);
    CHECK(st == SPS_OK && d.field == SPS_MM_QUATERNION && d.symmetry == SPS_MM_GENERAL && d.nnz == 3 &&
              d.nnz_file == 3 && d.rows == 2 && d.cols == 3 && !d.is_array,
          "quaternion general: %s", err);
    if (st == SPS_OK) {
        QENTRY(&d, 0, 0, 2, 1.5, -2.0, 0.0, 4.0);
        QENTRY(&d, 1, 1, 0, 0.0, 1e-3, -0.5, 0.25);
        QENTRY(&d, 2, 0, 2, 1.0, 1.0, 1.0, 1.0); /* duplicates kept, not summed */
    }
    sps_mm_data_free(&d);

    /* a caller that did not opt in gets a refusal at the banner, never 4 values per entry */
    st = rd(gen, 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "<buffer>:1: quaternion Matrix Market files need a quaternion-aware "
                                             "reader (not supported by this reader call)"),
          "quaternion without opt-in: %s", err);
    CHECK(d.row == NULL && d.val == NULL && d.nnz == 0, "out zeroed after the refusal");
    st = sps_mm_read_buffer(gen, strlen(gen), "Q.mtx", NULL, &d, err, sizeof err);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "Q.mtx:1: quaternion Matrix Market files need"), "NULL options: %s", err);

    /* hermitian, lower triangle: mirrors are conjugates (a,-b,-c,-d), the diagonal is not mirrored */
    st = rdq("%%MatrixMarket matrix coordinate quaternion hermitian\n3 3 4\n1 1 2 0 0 0\n3 1 1 2 3 4\n"
             "2 2 5 -0 0 0\n3 2 0 -1 0 0.5\n",
             0, &d);
    CHECK(st == SPS_OK && d.symmetry == SPS_MM_HERMITIAN && d.nnz_file == 4 && d.nnz == 6, "quaternion hermitian: %s",
          err);
    if (st == SPS_OK) {
        QENTRY(&d, 0, 0, 0, 2.0, 0.0, 0.0, 0.0);
        QENTRY(&d, 1, 2, 0, 1.0, 2.0, 3.0, 4.0);
        QENTRY(&d, 2, 1, 1, 5.0, -0.0, 0.0, 0.0);
        QENTRY(&d, 3, 2, 1, 0.0, -1.0, 0.0, 0.5);
        QENTRY(&d, 4, 0, 2, 1.0, -2.0, -3.0, -4.0);
        QENTRY(&d, 5, 1, 2, 0.0, 1.0, -0.0, -0.5);
    }
    sps_mm_data_free(&d);
    /* upper-triangle storage mirrors downwards */
    st = rdq("%%MatrixMarket matrix coordinate quaternion hermitian\n2 2 1\n1 2 1 2 3 4\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 2, "quaternion hermitian upper: %s", err);
    if (st == SPS_OK) QENTRY(&d, 1, 1, 0, 1.0, -2.0, -3.0, -4.0);
    sps_mm_data_free(&d);

    /* a hermitian diagonal must be real, in coordinate and array files alike */
    st = rdq("%%MatrixMarket matrix coordinate quaternion hermitian\n2 2 2\n1 1 1 0 0 0\n2 2 1 0 1 0\n", 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "<buffer>:4: diagonal entry (2,2) of a hermitian quaternion matrix has "
                                             "a nonzero vector part (b c d = 0 1 0)"),
          "hermitian diagonal: %s", err);
    st = rdq("%%MatrixMarket matrix array quaternion hermitian\n2 2\n1 0 0 0\n2 1 0 0\n4 0 0 -1e-300\n", 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "<buffer>:5: diagonal entry (2,2) of a hermitian quaternion"),
          "array hermitian diagonal: %s", err);
    st = rdq("%%MatrixMarket matrix array quaternion hermitian\n2 2\n1 0 0 0\n2 1 0 3\n4 0 0 0\n", 0, &d);
    CHECK(st == SPS_OK && d.is_array && d.nnz_file == 3 && d.nnz == 4, "array hermitian: %s", err);
    if (st == SPS_OK) QENTRY(&d, 3, 0, 1, 2.0, -1.0, -0.0, -3.0);
    sps_mm_data_free(&d);

    /* array (vectors and dense matrices): one `a b c d` line per entry, column-major */
    st = rdq("%%MatrixMarket matrix array quaternion general\n2 2\n1 2 3 4\n5 6 7 8\n\n9 10 11 12\n"
             "% c\n13 14 15 16\n",
             0, &d);
    CHECK(st == SPS_OK && d.is_array && d.field == SPS_MM_QUATERNION && d.nnz == 4, "array quaternion: %s", err);
    if (st == SPS_OK) {
        QENTRY(&d, 0, 0, 0, 1, 2, 3, 4);
        QENTRY(&d, 1, 1, 0, 5, 6, 7, 8);
        QENTRY(&d, 2, 0, 1, 9, 10, 11, 12);
        QENTRY(&d, 3, 1, 1, 13, 14, 15, 16);
    }
    sps_mm_data_free(&d);

    /* non-finite values follow allow_nonfinite in every part */
    const char *nf = "%%MatrixMarket matrix array quaternion general\n1 1\n1 nan -inf 0\n";
    st = rdq(nf, 1, &d);
    CHECK(st == SPS_OK && isnan(d.val[1]) && d.val[2] == -INFINITY, "quaternion nan allowed: %s", err);
    sps_mm_data_free(&d);
    st = rdq(nf, 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "<buffer>:3: non-finite value 'nan'"), "quaternion nan: %s", err);
}

static void test_array(void)
{
    sps_mm_data d;
    sps_status st = rd("%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n\n3\n4\n5\n6\n", 0, &d);
    CHECK(st == SPS_OK && d.is_array && d.nnz == 6 && d.nnz_file == 6 && d.rows == 2 && d.cols == 3,
          "array general: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 0, 1.0, 0);
        ENTRY(&d, 1, 1, 0, 2.0, 0);
        ENTRY(&d, 2, 0, 1, 3.0, 0);
        ENTRY(&d, 5, 1, 2, 6.0, 0);
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix array real general\n3 1\n0.5\n-1\n0\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 3 && d.cols == 1, "array vector: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 0, 0.5, 0);
        ENTRY(&d, 2, 2, 0, 0.0, 0); /* zeros are kept in array format */
    }
    sps_mm_data_free(&d);

    /* symmetric: lower triangle column-major: (1,1)(2,1)(3,1)(2,2)(3,2)(3,3) */
    st = rd("%%MatrixMarket matrix array real symmetric\n3 3\n11\n21\n31\n22\n32\n33\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz_file == 6 && d.nnz == 9, "array symmetric: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 0, 0, 11.0, 0);
        ENTRY(&d, 1, 1, 0, 21.0, 0);
        ENTRY(&d, 2, 2, 0, 31.0, 0);
        ENTRY(&d, 3, 1, 1, 22.0, 0);
        ENTRY(&d, 4, 2, 1, 32.0, 0);
        ENTRY(&d, 5, 2, 2, 33.0, 0);
        ENTRY(&d, 6, 0, 1, 21.0, 0);
        ENTRY(&d, 7, 0, 2, 31.0, 0);
        ENTRY(&d, 8, 1, 2, 32.0, 0);
    }
    sps_mm_data_free(&d);

    /* skew: strict lower triangle only */
    st = rd("%%MatrixMarket matrix array real skew-symmetric\n3 3\n21\n31\n32\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz_file == 3 && d.nnz == 6, "array skew: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 0, 1, 0, 21.0, 0);
        ENTRY(&d, 1, 2, 0, 31.0, 0);
        ENTRY(&d, 2, 2, 1, 32.0, 0);
        ENTRY(&d, 3, 0, 1, -21.0, 0);
        ENTRY(&d, 5, 1, 2, -32.0, 0);
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 3\n4 0\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz_file == 3 && d.nnz == 4, "array hermitian: %s", err);
    if (st == SPS_OK) {
        ENTRY(&d, 1, 1, 0, 2.0, 3.0);
        ENTRY(&d, 2, 1, 1, 4.0, 0.0);
        ENTRY(&d, 3, 0, 1, 2.0, -3.0);
    }
    sps_mm_data_free(&d);

    st = rd("%%MatrixMarket matrix array integer general\n1 2\n3\n-4\n", 0, &d);
    CHECK(st == SPS_OK && d.nnz == 2 && d.val[1] == -4.0, "array integer: %s", err);
    sps_mm_data_free(&d);
}

/* Values against strtod, bit for bit (the fast path must be exact). */
static void test_numbers(void)
{
    static const char *tok[] = {"1.1E1", "1e-3", "-.5", "+2", "0.1", "1.", "-0", "-0.0", "0e0", "00012.50",
                                "1.7976931348623157e308", "4.9e-324", "2.2250738585072014e-308", "1e-400",
                                "123456789012345678901234567890", "0.30000000000000004", "9007199254740993",
                                "9007199254740993000", "9007199254740995e-3", "18446744073709551615",
                                "18446744073709551616", "1e22", "1e23", "123456789e-27", "0x1p-3", "1E+00",
                                "3.1085317326728e-01", ".0320886418015887", "-2.1846000000000e+02",
                                "0.000000000000000000000000000000000000001", "7.2057594037927933e16",
                                "1.0000000000000002", "2.4703282292062328e-324", "1234567890123456789e-5"};
    size_t nt = sizeof tok / sizeof tok[0];
    char buf[4096];
    int n = snprintf(buf, sizeof buf, "%%%%MatrixMarket matrix array real general\n%zu 1\n", nt);
    for (size_t i = 0; i < nt; i++) n += snprintf(buf + n, sizeof buf - (size_t)n, "  %s \n", tok[i]);
    sps_mm_data d;
    sps_status st = rd(buf, 0, &d);
    CHECK(st == SPS_OK, "tricky numbers: %s", err);
    if (st != SPS_OK) return;
    for (size_t i = 0; i < nt; i++) {
        double want = strtod(tok[i], NULL);
        CHECK(same_bits(d.val[i], want), "token '%s': got %.17g, strtod %.17g", tok[i], d.val[i], want);
    }
    sps_mm_data_free(&d);
}

static uint64_t rng_s = 0x853c49e6748fea9bull;
static uint64_t rng(void)
{
    rng_s ^= rng_s << 13;
    rng_s ^= rng_s >> 7;
    rng_s ^= rng_s << 17;
    return rng_s;
}

/* Random doubles of all magnitudes printed in many shapes, including values
 * within a few digits of the midpoint between two doubles (the hard cases of
 * the fast path), compared with strtod. */
static void test_numbers_random(void)
{
    const long n = 300000;
    char *buf = malloc((size_t)n * 48 + 128);
    long *start = malloc((size_t)n * sizeof(long));
    int len = sprintf(buf, "%%%%MatrixMarket matrix array real general\n%ld 1\n", n);
    for (long k = 0; k < n; k++) {
        double x;
        uint64_t b;
        do {
            b = rng();
            memcpy(&x, &b, sizeof x);
        } while (!isfinite(x) || x == 0.0);
        int e2;
        x = ldexp(frexp(x, &e2), (int)(rng() % 200) - 100);
        start[k] = len;
        switch (rng() % 6) {
        case 0: len += sprintf(buf + len, "%.17g\n", x); break;
        case 1: len += sprintf(buf + len, "%.*e\n", (int)(13 + rng() % 6), x); break;
        case 2:
        case 3: { /* near a midpoint, cut to 15..19 significant digits */
            long double mid = ((long double)x + (long double)nextafter(x, INFINITY)) / 2;
            len += sprintf(buf + len, "%.*Le\n", (int)(14 + rng() % 6), mid);
            break;
        }
        case 4: len += sprintf(buf + len, "%llu\n", (unsigned long long)(rng() >> (rng() % 64))); break;
        default: len += sprintf(buf + len, "%.*f\n", (int)(rng() % 20), x); break;
        }
    }
    sps_mm_data d;
    sps_status st = sps_mm_read_buffer(buf, (size_t)len, "<random>", NULL, &d, err, sizeof err);
    CHECK(st == SPS_OK, "random numbers: %s", err);
    if (st == SPS_OK) {
        long bad = 0;
        for (long k = 0; k < n; k++) {
            double want = strtod(buf + start[k], NULL);
            if (!same_bits(d.val[k], want) && bad++ < 5) {
                char *nl = strchr(buf + start[k], '\n');
                CHECK(0, "token '%.*s': got %.17g, strtod %.17g", (int)(nl - (buf + start[k])), buf + start[k],
                      d.val[k], want);
            }
        }
        CHECK(bad == 0, "%ld of %ld random tokens differ from strtod", bad, n);
    }
    sps_mm_data_free(&d);
    free(start);
    free(buf);
}

static void test_nonfinite_and_errors(void)
{
    const char *t = "%%MatrixMarket matrix coordinate real general\n2 2 4\n1 1 nan\n1 2 -inf\n2 1 Infinity\n2 2 NaN\n";
    sps_mm_data d;
    sps_status st = rd(t, 1, &d);
    CHECK(st == SPS_OK && isnan(d.val[0]) && d.val[1] == -INFINITY && d.val[2] == INFINITY && isnan(d.val[3]),
          "allow_nonfinite: %s", err);
    sps_mm_data_free(&d);
    st = rd(t, 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, "<buffer>:3: non-finite value 'nan'"), "nan rejected: %s", err);
    CHECK(d.row == NULL && d.nnz == 0, "out zeroed on error");
    st = sps_mm_read_buffer(t, strlen(t), "A.mtx", NULL, &d, err, sizeof err); /* NULL options = defaults */
    CHECK(st == SPS_ERR_PARSE && strstr(err, "A.mtx:3: "), "NULL options: %s", err);

    /* a 7-digit exponent that 99999 leading zeros of the fraction do not bring into range
       (3e900000): out of the double range, as strtod says, not the digits read as 3 */
    {
        const size_t z = 99999;
        char *big = malloc(z + 128);
        int o = snprintf(big, 128, "%%%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 0.");
        memset(big + o, '0', z);
        snprintf(big + o + z, 64, "3e1000000\n");
        st = rd(big, 0, &d);
        CHECK(st == SPS_ERR_PARSE && strstr(err, "out of the double range"), "0.(99999 zeros)3e1000000: %d %s", st,
              err);
        sps_mm_data_free(&d);
        free(big);
    }
    /* complex: non-finite imaginary part */
    st = rd("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 0 inf\n", 0, &d);
    CHECK(st == SPS_ERR_PARSE && strstr(err, ":3: non-finite value 'inf'"), "complex inf: %s", err);

    /* err truncation and NULL err */
    char small[8];
    memset(small, 'x', sizeof small);
    st = sps_mm_read_buffer("garbage", 7, "<buffer>", NULL, &d, small, sizeof small);
    CHECK(st == SPS_ERR_PARSE && memchr(small, '\0', sizeof small) && !strncmp(small, "<buffer", 7),
          "truncated err '%.8s'", small);
    st = sps_mm_read_buffer("garbage", 7, "<buffer>", NULL, &d, NULL, 0);
    CHECK(st == SPS_ERR_PARSE, "NULL err");
    st = sps_mm_read_buffer(NULL, 5, "<buffer>", NULL, &d, err, sizeof err);
    CHECK(st == SPS_ERR_ARG, "NULL buffer");
    st = sps_mm_read_buffer("x", 1, "<buffer>", NULL, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_ARG, "NULL out");
    st = sps_mm_read_file(NULL, NULL, &d, err, sizeof err);
    CHECK(st == SPS_ERR_ARG, "NULL path");
    /* not NUL-terminated input: only len bytes are looked at */
    const char full[] = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n9 9 9";
    st = sps_mm_read_buffer(full, sizeof full - 1 - 5, "<buffer>", NULL, &d, err, sizeof err);
    CHECK(st == SPS_OK && d.nnz == 1, "length-limited buffer: %s", err);
    sps_mm_data_free(&d);
}

/* ------------------------------------------------------------------------ */
/* Files: gzip, plain, I/O errors                                             */

static char tmpdir[256];

static void test_files(void)
{
    const char *text = "%%MatrixMarket matrix coordinate real symmetric\n% gz test\n3 3 3\n1 1 1\n2 1 2.5\n3 3 -4\n";
    char gzpath[512], noext[512], plain[512], trunc[512];
    snprintf(gzpath, sizeof gzpath, "%s/a.mtx.gz", tmpdir);
    snprintf(noext, sizeof noext, "%s/gzip_without_suffix.mtx", tmpdir);
    snprintf(plain, sizeof plain, "%s/plain.mtx.gz", tmpdir); /* .gz name, plain content */
    snprintf(trunc, sizeof trunc, "%s/truncated.mtx.gz", tmpdir);
    const char *gzs[2] = {gzpath, noext};
    for (int i = 0; i < 2; i++) {
        gzFile g = gzopen(gzs[i], "wb");
        CHECK(g != NULL, "gzopen %s", gzs[i]);
        if (!g) return;
        gzwrite(g, text, (unsigned)strlen(text));
        gzclose(g);
    }
    FILE *f = fopen(plain, "wb");
    fputs(text, f);
    fclose(f);

    const char *paths[3] = {gzpath, noext, plain};
    for (int i = 0; i < 3; i++) {
        sps_mm_data d;
        sps_status st = sps_mm_read_file(paths[i], NULL, &d, err, sizeof err);
        CHECK(st == SPS_OK && d.nnz == 4 && d.nnz_file == 3, "read %s: %s", paths[i], err);
        if (st == SPS_OK) {
            ENTRY(&d, 1, 1, 0, 2.5, 0);
            ENTRY(&d, 3, 0, 1, 2.5, 0);
        }
        sps_mm_data_free(&d);
    }

    /* a truncated gzip stream is an I/O error, not a short matrix */
    f = fopen(gzpath, "rb");
    char raw[4096];
    size_t n = fread(raw, 1, sizeof raw, f);
    fclose(f);
    f = fopen(trunc, "wb");
    fwrite(raw, 1, n - 12, f);
    fclose(f);
    sps_mm_data d;
    sps_status st = sps_mm_read_file(trunc, NULL, &d, err, sizeof err);
    CHECK(st == SPS_ERR_IO && strstr(err, trunc) && strstr(err, "gzip"), "truncated gz: %s %s",
          st == SPS_OK ? "OK" : "", err);
    sps_mm_data_free(&d);

    /* a gzipped quaternion file, read by a caller that opted in */
    {
        const char *qt = "%%MatrixMarket matrix coordinate quaternion hermitian\n2 2 2\n1 1 3 0 0 0\n2 1 1 2 3 4\n";
        gzFile g = gzopen(gzpath, "wb");
        gzwrite(g, qt, (unsigned)strlen(qt));
        gzclose(g);
        const sps_mm_options q = {.allow_quaternion = 1};
        st = sps_mm_read_file(gzpath, &q, &d, err, sizeof err);
        CHECK(st == SPS_OK && d.field == SPS_MM_QUATERNION && d.nnz == 3, "gzip quaternion: %s", err);
        if (st == SPS_OK) QENTRY(&d, 2, 0, 1, 1.0, -2.0, -3.0, -4.0);
        sps_mm_data_free(&d);
    }

    /* parse errors name the path and the line */
    f = fopen(plain, "wb");
    fputs("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1\n", f);
    fclose(f);
    st = sps_mm_read_file(plain, NULL, &d, err, sizeof err);
    char want[600];
    snprintf(want, sizeof want, "%s:3: column index 3 out of range 1..2", plain);
    CHECK(st == SPS_ERR_PARSE && !strcmp(err, want), "file error: %s", err);

    char missing[512];
    snprintf(missing, sizeof missing, "%s/does_not_exist.mtx", tmpdir);
    st = sps_mm_read_file(missing, NULL, &d, err, sizeof err);
    CHECK(st == SPS_ERR_IO && strstr(err, missing) && strstr(err, strerror(ENOENT)), "missing file: %s", err);
    st = sps_mm_read_file(tmpdir, NULL, &d, err, sizeof err); /* a directory */
    CHECK(st == SPS_ERR_IO && strstr(err, tmpdir), "directory: %s", err);

    remove(gzpath);
    remove(noext);
    remove(plain);
    remove(trunc);
}

/* ------------------------------------------------------------------------ */
/* Writers                                                                    */

static double random_double(void)
{
    double x;
    do {
        uint64_t b = rng();
        memcpy(&x, &b, sizeof x);
    } while (!isfinite(x));
    switch (rng() % 4) {
    case 0: return x; /* any finite bit pattern, subnormals included */
    case 1: return (double)(rng() % 2000) - 1000.0;
    default: return ldexp((double)(rng() >> 11), (int)(rng() % 80) - 90);
    }
}

static int count_tmp_files(const char *dir)
{
    DIR *dp = opendir(dir);
    if (!dp) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(dp);
    return n;
}

/* Values read back that differ from the written ones: bit for bit, or as
 * floats in single mode. */
static int64_t value_mismatches(const double *want, const double *got, int64_t n, int single)
{
    int64_t bad = 0;
    for (int64_t x = 0; x < n; x++) {
        if (single) {
            float fw = (float)want[x], fg = (float)got[x];
            bad += memcmp(&fw, &fg, sizeof fw) != 0;
        } else {
            bad += !same_bits(want[x], got[x]);
        }
    }
    return bad;
}

/* The writers' value kinds and the fields they read back as. */
static const sps_mm_field kind_field[3] = {
    [SPS_MM_KIND_REAL] = SPS_MM_REAL,
    [SPS_MM_KIND_COMPLEX] = SPS_MM_COMPLEX,
    [SPS_MM_KIND_QUATERNION] = SPS_MM_QUATERNION,
};

static void test_roundtrip(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/rt.mtx", tmpdir);
    const int32_t rows = 37, cols = 23;
    const int64_t nnz = 500;
    const sps_mm_options q = {.allow_quaternion = 1};
    int32_t *r = malloc(nnz * sizeof *r), *c = malloc(nnz * sizeof *c);
    double *v = malloc(4 * nnz * sizeof *v), *vs = malloc(4 * nnz * sizeof *vs);
    for (int64_t k = 0; k < nnz; k++) {
        r[k] = (int32_t)(rng() % rows);
        c[k] = (int32_t)(rng() % cols);
    }
    for (int64_t k = 0; k < 4 * nnz; k++) v[k] = random_double();
    /* single-precision data: floats of every magnitude, subnormals included */
    for (int64_t k = 0; k < 4 * nnz; k++)
        vs[k] = (double)(float)ldexp((rng() & 1 ? -1.0 : 1.0) * (double)(rng() >> 11), (int)(rng() % 250) - 200);
    v[0] = -0.0;
    v[3] = 5e-324;
    v[4] = 1.7976931348623157e308;
    vs[0] = -0.0;
    for (int kind = 0; kind < 3; kind++)
        for (int single = 0; single < 2; single++) {
            const int nv = sps_mm_field_values(kind_field[kind]);
            sps_status st = sps_mm_write_coo(path, rows, cols, nnz, r, c, single ? vs : v, kind, single,
                                             "round trip\nline two", err, sizeof err);
            CHECK(st == SPS_OK, "write_coo kind=%d single=%d: %s", kind, single, err);
            sps_mm_data d;
            st = sps_mm_read_file(path, &q, &d, err, sizeof err);
            CHECK(st == SPS_OK && d.rows == rows && d.cols == cols && d.nnz == nnz && d.field == kind_field[kind],
                  "read back kind=%d single=%d: %s", kind, single, err);
            if (st != SPS_OK) continue;
            int64_t bad = value_mismatches(single ? vs : v, d.val, nv * nnz, single);
            for (int64_t k = 0; k < nnz; k++) bad += d.row[k] != r[k] || d.col[k] != c[k];
            CHECK(bad == 0, "round trip kind=%d single=%d: %lld mismatches", kind, single, (long long)bad);
            sps_mm_data_free(&d);
        }
    /* the quaternion file's header and first entry as the extension spells them */
    {
        int32_t r1 = 1, c1 = 0;
        double q1[4] = {1, -2, 0.5, 0};
        sps_status st = sps_mm_write_coo(path, 2, 2, 1, &r1, &c1, q1, SPS_MM_KIND_QUATERNION, 0, NULL, err, sizeof err);
        char text[256] = "";
        FILE *f = fopen(path, "rb");
        size_t nr = f ? fread(text, 1, sizeof text - 1, f) : 0;
        if (f) fclose(f);
        text[nr] = '\0';
        const char *want = "%%MatrixMarket matrix coordinate quaternion general\n2 2 1\n2 1 1 -2 0.5 0\n";
        CHECK(st == SPS_OK && !strcmp(text, want), "quaternion file text: '%s' %s", text, err);
    }

    /* pattern (val == NULL) */
    sps_status st = sps_mm_write_coo(path, rows, cols, nnz, r, c, NULL, 0, 0, NULL, err, sizeof err);
    sps_mm_data d;
    CHECK(st == SPS_OK, "write pattern: %s", err);
    st = sps_mm_read_file(path, NULL, &d, err, sizeof err);
    CHECK(st == SPS_OK && d.field == SPS_MM_PATTERN && d.nnz == nnz && d.val[7] == 1.0 && d.row[7] == r[7],
          "read pattern: %s", err);
    sps_mm_data_free(&d);

    /* vectors */
    for (int kind = 0; kind < 3; kind++)
        for (int single = 0; single < 2; single++) {
            const int nv = sps_mm_field_values(kind_field[kind]);
            int32_t n = 101;
            const double *src = single ? vs : v;
            st = sps_mm_write_vector(path, n, src, kind, single, "vector", err, sizeof err);
            CHECK(st == SPS_OK, "write_vector: %s", err);
            st = sps_mm_read_file(path, &q, &d, err, sizeof err);
            CHECK(st == SPS_OK && d.is_array && d.rows == n && d.cols == 1 && d.nnz == n &&
                      d.field == kind_field[kind],
                  "read vector kind=%d: %s", kind, err);
            if (st != SPS_OK) continue;
            int64_t bad = value_mismatches(src, d.val, nv * (int64_t)n, single);
            for (int64_t k = 0; k < n; k++) bad += d.row[k] != k || d.col[k] != 0;
            CHECK(bad == 0, "vector round trip kind=%d single=%d: %lld mismatches", kind, single, (long long)bad);
            sps_mm_data_free(&d);
        }

    /* non-finite values are written and read back with allow_nonfinite */
    double nf[3] = {NAN, INFINITY, -INFINITY};
    st = sps_mm_write_vector(path, 3, nf, 0, 0, NULL, err, sizeof err);
    sps_mm_options o = {.allow_nonfinite = 1};
    CHECK(st == SPS_OK && sps_mm_read_file(path, &o, &d, err, sizeof err) == SPS_OK && isnan(d.val[0]) &&
              d.val[1] == INFINITY && d.val[2] == -INFINITY,
          "non-finite vector: %s", err);
    sps_mm_data_free(&d);

    /* invalid arguments: nothing is created, the old file stays */
    struct stat sb0, sb1;
    stat(path, &sb0);
    int32_t badr[1] = {rows};
    st = sps_mm_write_coo(path, rows, cols, 1, badr, c, v, 0, 0, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_ARG && strstr(err, "out of range"), "bad index: %s", err);
    st = sps_mm_write_coo(path, -1, cols, 0, NULL, NULL, NULL, 0, 0, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_ARG, "negative rows");
    st = sps_mm_write_vector(path, 3, NULL, 0, 0, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_ARG, "NULL vector");
    st = sps_mm_write_vector(path, 1, v, 3, 0, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_ARG && strstr(err, "unknown value kind"), "vector kind 3: %s", err);
    st = sps_mm_write_coo(path, rows, cols, 1, r, c, v, -1, 0, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_ARG && strstr(err, "unknown value kind"), "coo kind -1: %s", err);
    CHECK(stat(path, &sb1) == 0 && sb1.st_size == sb0.st_size && sps_mm_read_file(path, &o, &d, err, sizeof err) == SPS_OK &&
              d.nnz == 3,
          "old file kept after refused writes");
    sps_mm_data_free(&d);

    /* unwritable location: SPS_ERR_IO, nothing left behind */
    char bad_path[600];
    snprintf(bad_path, sizeof bad_path, "%s/no_such_dir/x.mtx", tmpdir);
    st = sps_mm_write_vector(bad_path, 3, v, 0, 0, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_IO && strstr(err, "no_such_dir") && strstr(err, strerror(ENOENT)), "unwritable: %s", err);
    /* a directory at the target is refused, nothing written, nothing left behind */
    char dirpath[600];
    snprintf(dirpath, sizeof dirpath, "%s/a_directory", tmpdir);
    mkdir(dirpath, 0755);
    st = sps_mm_write_coo(dirpath, rows, cols, nnz, r, c, v, 0, 0, NULL, err, sizeof err);
    CHECK(st == SPS_ERR_IO && strstr(err, "a directory") && strstr(err, "not replaced"), "over a directory: %s", err);
    struct stat sd;
    CHECK(stat(dirpath, &sd) == 0 && S_ISDIR(sd.st_mode), "directory untouched");
    CHECK(count_tmp_files(tmpdir) == 0, "temp files left: %d", count_tmp_files(tmpdir));
    rmdir(dirpath);
    {
        /* a symbolic link is written through (the link stays, its file gets the data); a
         * link to nothing is refused; a FIFO without a reader is refused, not waited on;
         * /dev/null is written into and stays a device; a replaced file keeps its mode */
        char target[600], link_path[600], fifo[600], dangling[600];
        snprintf(target, sizeof target, "%s/link_target.mtx", tmpdir);
        snprintf(link_path, sizeof link_path, "%s/a_link.mtx", tmpdir);
        snprintf(fifo, sizeof fifo, "%s/a_fifo", tmpdir);
        snprintf(dangling, sizeof dangling, "%s/a_dangling.mtx", tmpdir);
        FILE *tf = fopen(target, "w");
        if (tf) {
            fputs("old\n", tf);
            fclose(tf);
        }
        CHECK(chmod(target, 0640) == 0, "chmod");
        CHECK(symlink(target, link_path) == 0, "symlink");
        st = sps_mm_write_vector(link_path, 3, v, 0, 0, NULL, err, sizeof err);
        CHECK(st == SPS_OK, "through a symlink: %s", err);
        struct stat sl, stt;
        CHECK(lstat(link_path, &sl) == 0 && S_ISLNK(sl.st_mode), "the symlink stays a symlink");
        CHECK(sps_mm_read_file(target, NULL, &d, err, sizeof err) == SPS_OK && d.nnz == 3, "the link's file written: %s",
              err);
        sps_mm_data_free(&d);
        CHECK(stat(target, &stt) == 0 && (stt.st_mode & 07777) == 0640, "mode kept: %o", (unsigned)(stt.st_mode & 07777));
        CHECK(symlink("/nonexistent/x.mtx", dangling) == 0, "dangling symlink");
        st = sps_mm_write_vector(dangling, 3, v, 0, 0, NULL, err, sizeof err);
        CHECK(st == SPS_ERR_IO && strstr(err, "symbolic link to a missing file") && strstr(err, dangling),
              "dangling: %s", err);
        CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
        st = sps_mm_write_vector(fifo, 3, v, 0, 0, NULL, err, sizeof err);
        CHECK(st == SPS_ERR_IO && strstr(err, "no reader"), "FIFO without a reader: %s", err);
        struct stat sf;
        CHECK(lstat(fifo, &sf) == 0 && S_ISFIFO(sf.st_mode), "the FIFO stays a FIFO");
        /* devices, where they are devices (some sandboxes make /dev/null a file): /dev/zero
         * takes the data, /dev/full fails with its error; both stay devices */
        struct stat sn;
        if (stat("/dev/zero", &sn) == 0 && S_ISCHR(sn.st_mode)) {
            st = sps_mm_write_vector("/dev/zero", 3, v, 0, 0, NULL, err, sizeof err);
            CHECK(st == SPS_OK && stat("/dev/zero", &sn) == 0 && S_ISCHR(sn.st_mode), "into /dev/zero: %s", err);
        }
        if (stat("/dev/full", &sn) == 0 && S_ISCHR(sn.st_mode)) {
            st = sps_mm_write_vector("/dev/full", 3, v, 0, 0, NULL, err, sizeof err);
            CHECK(st == SPS_ERR_IO && strstr(err, "/dev/full") && stat("/dev/full", &sn) == 0 && S_ISCHR(sn.st_mode),
                  "into /dev/full: %s", err);
        }
        CHECK(count_tmp_files(tmpdir) == 0, "temp files left: %d", count_tmp_files(tmpdir));
        remove(link_path);
        remove(target);
        remove(fifo);
        remove(dangling);
    }

    { /* the public sps_outfile (spsolve/file.h), as the apps write their meshes and pictures:
         written through a link, abandoned without a trace, refused onto a directory */
        char target[600], link_path[600];
        snprintf(target, sizeof target, "%s/outfile_target.txt", tmpdir);
        snprintf(link_path, sizeof link_path, "%s/outfile_link.txt", tmpdir);
        sps_outfile o = NULL;
        FILE *f = NULL;
        CHECK(sps_outfile_open(target, &o, &f, err, sizeof err) == SPS_OK && f, "outfile open: %s", err);
        if (f) fputs("first\n", f);
        CHECK(sps_outfile_close(o, 1, err, sizeof err) == SPS_OK, "outfile close: %s", err);
        CHECK(symlink(target, link_path) == 0, "symlink");
        CHECK(sps_outfile_open(link_path, &o, &f, err, sizeof err) == SPS_OK && f, "outfile through a link: %s", err);
        if (f) fputs("second\n", f);
        CHECK(sps_outfile_close(o, 1, err, sizeof err) == SPS_OK, "outfile close: %s", err);
        CHECK(sps_outfile_open(link_path, &o, &f, err, sizeof err) == SPS_OK && f, "outfile reopen: %s", err);
        if (f) fputs("abandoned\n", f);
        CHECK(sps_outfile_close(o, 0, err, sizeof err) == SPS_ERR_IO, "abandoned: SPS_ERR_IO");
        char line[64] = {0};
        FILE *rf = fopen(target, "r");
        if (rf) {
            if (!fgets(line, sizeof line, rf)) line[0] = 0;
            fclose(rf);
        }
        struct stat sl;
        CHECK(!strcmp(line, "second\n") && lstat(link_path, &sl) == 0 && S_ISLNK(sl.st_mode),
              "the link's file holds the second write, the link stays: '%s'", line);
        CHECK(sps_outfile_open(tmpdir, &o, &f, err, sizeof err) == SPS_ERR_IO && !o && !f && strstr(err, "directory"),
              "onto a directory: %s", err);
        CHECK(sps_outfile_open(NULL, &o, &f, err, sizeof err) == SPS_ERR_ARG, "NULL path");
        /* a descriptor's name (a redirected stdout): written at the descriptor's own offset,
           between what the process wrote to it before and after, the file not replaced */
        const int fd = open(target, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        char dpath[64];
        snprintf(dpath, sizeof dpath, "/dev/fd/%d", fd);
        CHECK(fd >= 0 && write(fd, "A", 1) == 1, "open/write %s", target);
        struct stat before, after;
        CHECK(fstat(fd, &before) == 0, "fstat");
        CHECK(sps_outfile_open(dpath, &o, &f, err, sizeof err) == SPS_OK && f, "outfile %s: %s", dpath, err);
        if (f) fputs("B", f);
        CHECK(sps_outfile_close(o, 1, err, sizeof err) == SPS_OK, "outfile close %s: %s", dpath, err);
        CHECK(fd >= 0 && write(fd, "C", 1) == 1, "write after");
        if (fd >= 0) close(fd);
        char abc[8] = {0};
        rf = fopen(target, "r");
        if (rf) {
            if (!fgets(abc, sizeof abc, rf)) abc[0] = 0;
            fclose(rf);
        }
        CHECK(!strcmp(abc, "ABC") && stat(target, &after) == 0 && after.st_ino == before.st_ino,
              "through %s: '%s' (want ABC, the same file)", dpath, abc);
        CHECK(sps_outfile_open("/dev/fd/987", &o, &f, err, sizeof err) == SPS_ERR_IO && strstr(err, "/dev/fd/987"),
              "a closed descriptor: %s", err);
        CHECK(sps_outfile_close(NULL, 1, err, sizeof err) == SPS_OK, "close(NULL)");
        CHECK(count_tmp_files(tmpdir) == 0, "temp files left: %d", count_tmp_files(tmpdir));
        remove(link_path);
        remove(target);
    }

    /* an existing file is replaced */
    double one = 42.0;
    st = sps_mm_write_vector(path, 1, &one, 0, 0, NULL, err, sizeof err);
    CHECK(st == SPS_OK && sps_mm_read_file(path, NULL, &d, err, sizeof err) == SPS_OK && d.nnz == 1 &&
              d.val[0] == 42.0,
          "replace: %s", err);
    sps_mm_data_free(&d);
    remove(path);
    free(r);
    free(c);
    free(v);
    free(vs);
}

/* ------------------------------------------------------------------------ */
/* Malformed files with their expected messages                               */

static void test_bad_files(const char *data_dir)
{
    char dir[1024], tsv[1100];
    snprintf(dir, sizeof dir, "%s/bad", data_dir);
    snprintf(tsv, sizeof tsv, "%s/EXPECTED.tsv", dir);
    FILE *f = fopen(tsv, "r");
    if (!f) { /* data_dir may be the bad/ folder itself */
        snprintf(dir, sizeof dir, "%s", data_dir);
        snprintf(tsv, sizeof tsv, "%s/EXPECTED.tsv", dir);
        f = fopen(tsv, "r");
    }
    if (!CHECK(f != NULL, "cannot open %s", tsv)) return;
    char line[2048];
    int listed = 0;
    char names[256][256];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        char *tab = strchr(line, '\t');
        if (!line[0] || line[0] == '#') continue;
        if (!CHECK(tab != NULL, "EXPECTED.tsv line without TAB: %s", line)) continue;
        *tab = '\0';
        const char *name = line, *want = tab + 1;
        if (strlen(name) >= sizeof names[0] || !CHECK(strchr(name, '/') == NULL, "bad name %s", name)) continue;
        if (listed < 256) memcpy(names[listed], name, strlen(name) + 1);
        listed++;
        char path[1300];
        snprintf(path, sizeof path, "%.1000s/%.255s", dir, name);
        sps_mm_data d;
        const sps_mm_options q = {.allow_quaternion = 1};
        sps_status st = sps_mm_read_file(path, &q, &d, err, sizeof err);
        CHECK(st == SPS_ERR_PARSE && strstr(err, want), "%s: status %d, message '%s', want '%s'", name, (int)st, err,
              want);
        CHECK(d.row == NULL && d.col == NULL && d.val == NULL, "%s: out not zeroed", name);
        sps_mm_data_free(&d);
    }
    fclose(f);
    /* every .mtx in the folder has an expectation */
    DIR *dp = opendir(dir);
    int files = 0;
    struct dirent *e;
    while (dp && (e = readdir(dp))) {
        size_t n = strlen(e->d_name);
        if (n < 4 || strcmp(e->d_name + n - 4, ".mtx")) continue;
        files++;
        int found = 0;
        for (int i = 0; i < listed && i < 256; i++) found |= !strcmp(names[i], e->d_name);
        CHECK(found, "%s has no line in EXPECTED.tsv", e->d_name);
    }
    if (dp) closedir(dp);
    CHECK(files == listed && listed >= 18, "%d bad files, %d expectations", files, listed);
    printf("bad files: %d checked\n", listed);
}

/* ------------------------------------------------------------------------ */
/* Real matrices                                                              */

static void test_real_matrices(const char *dir)
{
    if (!dir) {
        printf("real matrices: skipped (no SPS_MATRIX_DIR)\n");
        return;
    }
    char tsv[1100];
    snprintf(tsv, sizeof tsv, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(tsv, "r");
    if (!f) {
        printf("real matrices: skipped (%s not found)\n", tsv);
        return;
    }
    char line[8192];
    int count = 0;
    long long bytes = 0;
    while (fgets(line, sizeof line, f)) {
        /* name group rows cols nnz_in_file symmetry field ... */
        char *col[8] = {0};
        int nc = 0;
        for (char *s = line; nc < 8;) {
            col[nc++] = s;
            char *t = strchr(s, '\t');
            if (!t) break;
            *t = '\0';
            s = t + 1;
        }
        if (nc < 7 || !strcmp(col[0], "name")) continue;
        col[6][strcspn(col[6], "\r\n")] = '\0';
        char path[4096];
        snprintf(path, sizeof path, "%.1500s/%.500s/%.500s.mtx.gz", dir, col[1], col[0]);
        sps_mm_data d;
        sps_status st = sps_mm_read_file(path, NULL, &d, err, sizeof err);
        if (!CHECK(st == SPS_OK, "%s: %s", path, err)) continue;
        static const char *fields[] = {"real", "integer", "pattern", "complex", "quaternion"};
        static const char *syms[] = {"general", "symmetric", "skew-symmetric", "hermitian"};
        CHECK(d.rows == atol(col[2]) && d.cols == atol(col[3]) && d.nnz_file == atoll(col[4]),
              "%s: %d x %d, %lld entries; manifest %s x %s, %s", col[0], d.rows, d.cols, (long long)d.nnz_file,
              col[2], col[3], col[4]);
        CHECK(!strcmp(fields[d.field], col[6]) && !strcmp(syms[d.symmetry], col[5]), "%s: %s %s; manifest %s %s",
              col[0], fields[d.field], syms[d.symmetry], col[6], col[5]);
        int64_t diag = 0, bad = 0;
        for (int64_t k = 0; k < d.nnz_file; k++) {
            diag += d.row[k] == d.col[k];
            bad += d.row[k] < 0 || d.row[k] >= d.rows || d.col[k] < 0 || d.col[k] >= d.cols;
        }
        int64_t want = d.symmetry == SPS_MM_GENERAL ? d.nnz_file : 2 * d.nnz_file - diag;
        CHECK(d.nnz == want && bad == 0, "%s: nnz %lld, expected %lld, %lld bad indices", col[0], (long long)d.nnz,
              (long long)want, (long long)bad);
        bytes += d.nnz_file;
        count++;
        sps_mm_data_free(&d);
    }
    fclose(f);
    CHECK(count > 0, "no matrices read from %s", tsv);
    printf("real matrices: %d files, %lld entries\n", count, bytes);
}

/* The reader streams a file through a 4 MiB window of whole lines (io/mmio.c):
 * entries, comments and blank lines across window boundaries read as from one
 * buffer (plain and gzip); a comment line longer than the window grows it; a line
 * past 64 MiB, a NUL byte in a later window (its line named) and a file that ends
 * mid-stream fail cleanly; a FIFO is read once from its start. */
static void test_streaming(void)
{
    char path[512], gzp[512];
    snprintf(path, sizeof path, "%s/stream.mtx", tmpdir);
    snprintf(gzp, sizeof gzp, "%s/stream.mtx.gz", tmpdir);
    /* ~9 MB: 400000 entries with comment lines and blank lines sprinkled in, and one
     * 5 MB comment line (longer than the window) in the middle */
    const int n = 3000, nnz = 400000;
    size_t cap = (size_t)32 << 20, len = 0;
    char *text = malloc(cap);
    len += (size_t)snprintf(text + len, cap - len, "%%%%MatrixMarket matrix coordinate real general\n%% c\n%d %d %d\n",
                            n, n, nnz);
    uint64_t x = 12345;
    for (int k = 0; k < nnz; k++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        const int i = 1 + (int)((x >> 33) % n), j = 1 + (int)((x >> 13) % n);
        if (k % 977 == 0) len += (size_t)snprintf(text + len, cap - len, "%% comment %d\n\n", k);
        if (k == nnz / 2) {
            text[len++] = '%';
            memset(text + len, 'c', (size_t)5 << 20);
            len += (size_t)5 << 20;
            text[len++] = '\n';
        }
        len += (size_t)snprintf(text + len, cap - len, "%d %d %.17g\n", i, j, (double)(x >> 11) * 0x1p-53 - 0.5);
    }
    FILE *f = fopen(path, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    gzFile g = gzopen(gzp, "wb1");
    gzwrite(g, text, (unsigned)len);
    gzclose(g);
    char err[512];
    sps_mm_data a, b, c;
    sps_status sa = sps_mm_read_buffer(text, len, "buf", NULL, &a, err, sizeof err);
    sps_status sb = sps_mm_read_file(path, NULL, &b, err, sizeof err);
    sps_status sc = sps_mm_read_file(gzp, NULL, &c, err, sizeof err);
    CHECK(sa == SPS_OK && sb == SPS_OK && sc == SPS_OK, "streamed reads: %d %d %d (%s)", sa, sb, sc, err);
    if (sa == SPS_OK && sb == SPS_OK && sc == SPS_OK) {
        CHECK(a.nnz == nnz && b.nnz == nnz && c.nnz == nnz, "streamed nnz %lld %lld %lld", (long long)a.nnz,
              (long long)b.nnz, (long long)c.nnz);
        const size_t bi = (size_t)nnz * sizeof(int32_t), bv = (size_t)nnz * sizeof(double);
        CHECK(!memcmp(a.row, b.row, bi) && !memcmp(a.col, b.col, bi) && !memcmp(a.val, b.val, bv),
              "streamed plain file differs from the buffer");
        CHECK(!memcmp(a.row, c.row, bi) && !memcmp(a.col, c.col, bi) && !memcmp(a.val, c.val, bv),
              "streamed gzip file differs from the buffer");
    }
    sps_mm_data_free(&b);
    sps_mm_data_free(&c);
    /* gzip members: the text cut in two members reads as one; bytes after the last
     * member that start no other one are a warning with their count; a damaged
     * member is an I/O error naming gzip */
    g = gzopen(gzp, "wb1");
    gzwrite(g, text, (unsigned)(len / 2));
    gzclose(g);
    g = gzopen(gzp, "ab1");
    gzwrite(g, text + len / 2, (unsigned)(len - len / 2));
    gzclose(g);
    sc = sps_mm_read_file(gzp, NULL, &c, err, sizeof err);
    CHECK(sc == SPS_OK && c.nnz == nnz && !c.warning[0] && sa == SPS_OK &&
              !memcmp(a.val, c.val, (size_t)nnz * sizeof(double)),
          "two gzip members: %d '%s' warning '%s'", sc, err, c.warning);
    sps_mm_data_free(&c);
    f = fopen(gzp, "ab");
    fputs("not gzip at all\n", f);
    fclose(f);
    sc = sps_mm_read_file(gzp, NULL, &c, err, sizeof err);
    CHECK(sc == SPS_OK && c.nnz == nnz && strstr(c.warning, "16 bytes after the gzip data ignored"),
          "gzip + 16 bytes: %d '%s' warning '%s'", sc, err, c.warning);
    sps_mm_data_free(&c);
    {
        FILE *z = fopen(gzp, "r+b");
        fseek(z, 4096, SEEK_SET);
        unsigned char buf[64];
        size_t got = fread(buf, 1, sizeof buf, z);
        for (size_t q = 0; q < got; q++) buf[q] ^= 0x5a;
        fseek(z, 4096, SEEK_SET);
        fwrite(buf, 1, got, z);
        fclose(z);
    }
    sc = sps_mm_read_file(gzp, NULL, &c, err, sizeof err);
    CHECK((sc == SPS_ERR_IO && strstr(err, "gzip: ")) || sc == SPS_ERR_PARSE, "damaged gzip: %d '%s'", sc, err);
    sps_mm_data_free(&c);
    sps_mm_data_free(&a);
    /* a NUL byte in the entry after the long comment: its line, past several windows */
    int64_t line = 1;
    char *nulp = strstr(text + len / 2 + ((size_t)3 << 20), "\n") + 1;
    for (const char *q = text; q < nulp; q++) line += *q == '\n';
    nulp[1] = '\0';
    f = fopen(path, "wb");
    fwrite(text, 1, len, f);
    fclose(f);
    char want[64];
    snprintf(want, sizeof want, ":%lld: unexpected NUL byte", (long long)line);
    sb = sps_mm_read_file(path, NULL, &b, err, sizeof err);
    CHECK(sb == SPS_ERR_PARSE && strstr(err, want), "NUL in a later window: %d '%s' (want '%s')", sb, err, want);
    sps_mm_data_free(&b);
    /* cut mid-stream: "file ends after k" at the last line */
    f = fopen(path, "wb");
    fwrite(text, 1, len / 3, f);
    fclose(f);
    sb = sps_mm_read_file(path, NULL, &b, err, sizeof err);
    CHECK(sb == SPS_ERR_PARSE && strstr(err, "expected 400000 entries, file ends after"), "cut file: %d '%s'", sb,
          err);
    sps_mm_data_free(&b);
    /* a line over 64 MiB (no newline at all): refused, not read into memory */
    f = fopen(path, "wb");
    fputs("%%MatrixMarket matrix coordinate real general\n", f);
    memset(text, '1', (size_t)1 << 20);
    for (int k = 0; k < 66; k++) fwrite(text, 1, (size_t)1 << 20, f);
    fclose(f);
    sb = sps_mm_read_file(path, NULL, &b, err, sizeof err);
    CHECK(sb == SPS_ERR_PARSE && strstr(err, "longer than 64 MiB"), "a 66 MiB line: %d '%s'", sb, err);
    sps_mm_data_free(&b);
    /* blank lines before the banner past the first window (plain), and in a gzip member of their
       own (the first read ends with them): skipped as on the first window; blank lines only: an
       empty file (line 1, as a file of a few blanks) */
    const size_t blank = (size_t)5 << 20;
    memset(text, '\n', blank);
    const char *small = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2\n2 2 3\n";
    f = fopen(path, "wb");
    fwrite(text, 1, blank, f);
    fputs(small, f);
    fclose(f);
    sb = sps_mm_read_file(path, NULL, &b, err, sizeof err);
    CHECK(sb == SPS_OK && b.nnz == 2, "5 MiB of blank lines before the banner: %d '%s'", sb, err);
    sps_mm_data_free(&b);
    g = gzopen(gzp, "wb1");
    gzwrite(g, "\n", 1);
    gzclose(g);
    g = gzopen(gzp, "ab1");
    gzwrite(g, small, (unsigned)strlen(small));
    gzclose(g);
    sc = sps_mm_read_file(gzp, NULL, &c, err, sizeof err);
    CHECK(sc == SPS_OK && c.nnz == 2, "a blank line in a gzip member of its own: %d '%s'", sc, err);
    sps_mm_data_free(&c);
    f = fopen(path, "wb");
    fwrite(text, 1, blank, f);
    fclose(f);
    snprintf(want, sizeof want, ":1: empty file");
    sb = sps_mm_read_file(path, NULL, &b, err, sizeof err);
    CHECK(sb == SPS_ERR_PARSE && strstr(err, want), "5 MiB of blank lines only: %d '%s' (want '%s')", sb, err, want);
    sps_mm_data_free(&b);
    free(text);
    /* a NUL byte after the last entry is still an error (the stream failed), and frees */
    f = fopen(path, "wb");
    fputs("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2\n", f);
    fputc(0, f);
    fclose(f);
    sb = sps_mm_read_file(path, NULL, &b, err, sizeof err);
    CHECK(sb == SPS_ERR_PARSE && strstr(err, ":4: unexpected NUL byte"), "NUL after the entries: %d '%s'", sb, err);
    sps_mm_data_free(&b);
    /* a FIFO: one open, read from its start (the writer is a child process) */
    char fifo[512];
    snprintf(fifo, sizeof fifo, "%s/fifo.mtx", tmpdir);
    if (mkfifo(fifo, 0600) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            FILE *w = fopen(fifo, "wb");
            if (w) {
                fputs("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 4\n2 2 5\n", w);
                fclose(w);
            }
            _exit(0);
        }
        sb = sps_mm_read_file(fifo, NULL, &b, err, sizeof err);
        CHECK(sb == SPS_OK && b.nnz == 2 && b.val[0] == 4 && b.val[1] == 5, "FIFO: %d '%s'", sb, err);
        sps_mm_data_free(&b);
        int ws;
        waitpid(pid, &ws, 0);
        unlink(fifo);
    }
    unlink(path);
    unlink(gzp);
}

int main(int argc, char **argv)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_mmio.%ld", (long)getpid());
    if (mkdir(tmpdir, 0700) != 0) {
        fprintf(stderr, "cannot create %s: %s\n", tmpdir, strerror(errno));
        return 1;
    }

    test_real_general();
    test_banner_variants();
    test_integer_pattern();
    test_symmetry_real();
    test_complex();
    test_quaternion();
    test_array();
    test_numbers();
    test_numbers_random();
    test_nonfinite_and_errors();
    test_files();
    test_roundtrip();
    test_streaming();
    if (argc > 1 && argv[1][0]) test_bad_files(argv[1]);
    else CHECK(0, "usage: test_mmio DATA_DIR [MATRIX_DIR]");

    const char *mdir = argc > 2 && argv[2][0] ? argv[2] : getenv("SPS_MATRIX_DIR");
    test_real_matrices(mdir && mdir[0] ? mdir : NULL);

    rmdir(tmpdir);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
