/* libspsolve — Matrix Market reader/writer (internal, not a public header).
 *
 * Reading
 * -------
 * The whole file (gunzipped when it starts with the gzip magic bytes, whatever
 * its name) is read into memory and parsed by a hand-written scanner.
 *
 * Accepted syntax:
 *  - Banner `%%MatrixMarket matrix coordinate|array
 *    real|integer|pattern|complex|quaternion
 *    general|symmetric|skew-symmetric|hermitian`; every keyword (and the
 *    `%%MatrixMarket` token itself) is case-insensitive.  Blank lines and a UTF-8
 *    BOM before the banner are tolerated.  `quaternion` is libspsolve's
 *    extension (below).
 *  - Lines whose first non-blank character is `%` are comments, anywhere after
 *    the banner.  Blank lines are allowed anywhere.  Tokens are separated by
 *    spaces/tabs; CR (CRLF endings), VT and FF count as blanks.
 *  - One entry per line: `i j [value [imag]]` (coordinate) or `value [imag]`
 *    (array), quaternion `i j a b c d` or `a b c d`; anything after the last
 *    expected token is an error.
 *  - Indices are plain decimal digits, 1-based.  Values: anything strtod
 *    accepts in the C locale (1.1E1, 1e-3, -.5, +2, hex floats; nan/inf only
 *    with allow_nonfinite).  Decimal tokens with <= 19 significant digits whose
 *    value is exact in the Clinger fast path are converted inline; all others
 *    go to strtod under a thread-local "C" locale, so results are always the
 *    correctly rounded double and independent of the caller's setlocale().
 *  - Integer field values are parsed like reals and must be integral.
 *
 * Qualifier rules (same as the NIST reference mm_is_valid, plus integer):
 *  - pattern is not allowed with array;
 *  - hermitian needs the complex or quaternion field (a real/integer/pattern
 *    "hermitian" file is rejected rather than silently read as symmetric);
 *  - quaternion allows general and hermitian only (the extension defines no
 *    symmetric or skew-symmetric quaternion storage);
 *  - skew-symmetric is not allowed with pattern (there is no value to negate);
 *  - symmetric/skew/hermitian need a square size.
 *
 * Symmetric storage is expanded to general triplets: the file's entries come
 * first, in file order, followed by one mirrored entry per off-diagonal entry,
 * in the same order.  symmetric: (j,i,v); skew: (j,i,-v); hermitian:
 * (j,i,conj(v)), for a quaternion conj(a,b,c,d) = (a,-b,-c,-d).
 * A symmetric/skew/hermitian coordinate file must store one
 * triangle only (lower, as the standard says, or upper); a file mixing both
 * is rejected, because mirroring it would double entries silently.
 * Skew-symmetric files may not list diagonal entries.  Hermitian diagonal
 * entries must be real: a complex one with a nonzero imaginary part, or a
 * quaternion one with a nonzero vector part, is refused naming the line (a
 * solver would otherwise get a matrix that is not Hermitian, and CG a wrong
 * answer), as a skew-symmetric diagonal entry is.
 *
 * Array format is dense column-major; for symmetric/hermitian only the lower
 * triangle including the diagonal is stored (n(n+1)/2 values), for skew only
 * the strict lower triangle (n(n-1)/2).  Every stored value, zeros included,
 * becomes a triplet, and the triangle is expanded as above.
 *
 * Pattern entries get the value 1.0.  Duplicate (i,j) entries are NOT summed
 * here; the CSR builder sums them.
 *
 * Quaternion extension (issue 20): field `quaternion`, entry lines `i j a b c
 * d` (coordinate) or `a b c d` (array, column-major) for a + b*i + c*j + d*k,
 * stored as 4 interleaved doubles (a,b,c,d) per entry.  Each of the 4 numbers
 * follows the rules of a real value (allow_nonfinite included).  A caller
 * must opt in with sps_mm_options.allow_quaternion: callers written before
 * the extension would read 4 values per entry as 1 or 2, so without the flag
 * a quaternion file is refused at its banner ("quaternion Matrix Market
 * files need a quaternion-aware reader ...").
 *
 * On success the arrays are malloc'ed (at least one element each, never NULL)
 * and owned by the caller: free them with sps_mm_data_free().  On failure
 * *out is all zero.  *out is not freed on entry.
 *
 * Errors (never printed):  SPS_ERR_PARSE with "<name>:<line>: <what>" (1-based
 * line of the offending line; for a truncated file, its last line), SPS_ERR_ARG
 * the same way for a file that sps_mm_options.block refuses,
 * SPS_ERR_IO with the path and strerror/zlib text, SPS_ERR_ALLOC naming the
 * bytes, SPS_ERR_ARG for NULL path/buf/out.  err may be NULL / errlen 0.
 */
#ifndef SPSOLVE_FORMATS_MMIO_H
#define SPSOLVE_FORMATS_MMIO_H

#include "spsolve/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SPS_MM_REAL, SPS_MM_INTEGER, SPS_MM_PATTERN, SPS_MM_COMPLEX, SPS_MM_QUATERNION } sps_mm_field;
typedef enum { SPS_MM_GENERAL, SPS_MM_SYMMETRIC, SPS_MM_SKEW, SPS_MM_HERMITIAN } sps_mm_symmetry;

/* Doubles per entry in sps_mm_data.val: 4 quaternion, 2 complex, else 1. */
static inline int sps_mm_field_values(sps_mm_field f)
{
    return f == SPS_MM_QUATERNION ? 4 : f == SPS_MM_COMPLEX ? 2 : 1;
}

typedef struct {
    int32_t rows, cols;
    int64_t nnz;          /* number of triplets AFTER symmetric expansion (duplicates NOT summed here) */
    int64_t nnz_file;     /* entries listed in the file (array: rows*cols or the triangle) */
    int is_array;         /* 1 if the file was 'array' (dense, column-major) */
    sps_mm_field field;
    sps_mm_symmetry symmetry;
    int32_t *row, *col;   /* 0-based, length nnz, in file order then mirrored entries */
    char warning[256];    /* what the read went on despite, "" when nothing: bytes after the gzip data */
    double *val;          /* length sps_mm_field_values(field)*nnz: one value (pattern gives 1.0), or interleaved
                             re,im (COMPLEX), or interleaved a,b,c,d of a + b*i + c*j + d*k (QUATERNION) */
} sps_mm_data;

typedef struct {
    int allow_nonfinite;  /* accept nan/inf values when nonzero */
    int allow_quaternion; /* return quaternion files (field SPS_MM_QUATERNION) when nonzero; refuse them when 0 */
    /* Checked at the size line, before any allocation (0: no check): */
    int require_square;   /* rows == cols */
    int block;            /* > 1: the file is read as block x block blocks: a quaternion file is refused at
                             its banner, rows or cols that block does not divide at the size line */
    int64_t max_entries;  /* entries after symmetric expansion (a CSR of 32-bit offsets: INT32_MAX) */
    int64_t max_bytes;    /* what reading the declared entries takes (triplet arrays) */
    int64_t expect_len;   /* an n x 1 or 1 x n file: of this many scalars (a quaternion entry: 4); 0: any */
    int vector;           /* read as a vector (b, x0): messages offer no allow-nonfinite option, which is
                             the matrix reader's */
} sps_mm_options;

/* Read a Matrix Market file; gzip is detected by its magic bytes.  opt may be
 * NULL (defaults: non-finite values and quaternion files rejected). */
sps_status sps_mm_read_file(const char *path, const sps_mm_options *opt, sps_mm_data *out, char *err,
                            size_t errlen);
/* Parse len bytes of Matrix Market text (need not be NUL-terminated); name is
 * used in messages, e.g. "<buffer>". */
sps_status sps_mm_read_buffer(const char *buf, size_t len, const char *name, const sps_mm_options *opt,
                              sps_mm_data *out, char *err, size_t errlen);
/* Free the arrays and zero the struct; safe on a zeroed struct and twice. */
void sps_mm_data_free(sps_mm_data *d);

/* Writers.  The file is written to "<path>.tmp.<pid>", flushed and fsync'ed,
 * then rename()d over path; on any failure the temp file is removed and an
 * existing file at path is left untouched.  Values use round-trip precision:
 * "%.17g", or with single != 0 "%.9g" of the value rounded to float (so the
 * float round-trips exactly).  comment (may be NULL, may hold several lines)
 * goes after the banner, each line prefixed with "% ".
 * Arguments are validated before anything is created (SPS_ERR_ARG).
 *
 * kind says what val holds per entry (any other value is SPS_ERR_ARG):
 * SPS_MM_KIND_REAL one value, SPS_MM_KIND_COMPLEX interleaved re,im,
 * SPS_MM_KIND_QUATERNION interleaved a,b,c,d.  The values are 0, 1, 2, so a
 * boolean "is complex" argument means what it always did.
 *
 * sps_mm_write_coo writes 'coordinate real|complex|quaternion general'
 * (1-based in the file, 0-based row0/col0 here).  val == NULL writes a
 * 'pattern' file (kind ignored).  Entries are written in the given order;
 * duplicates are written as given. */
enum { SPS_MM_KIND_REAL = 0, SPS_MM_KIND_COMPLEX = 1, SPS_MM_KIND_QUATERNION = 2 };
sps_status sps_mm_write_coo(const char *path, int32_t rows, int32_t cols, int64_t nnz, const int32_t *row0,
                            const int32_t *col0, const double *val, int kind, int single, const char *comment,
                            char *err, size_t errlen);
/* Dense column vector as 'array real|complex|quaternion general' n x 1: n
 * entries of the kind's values each (interleaved, as above). */
sps_status sps_mm_write_vector(const char *path, int32_t n, const double *val, int kind, int single,
                               const char *comment, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
