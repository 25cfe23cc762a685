/* Test utilities: checks that count, a final "N passed, M failed" line, a
 * deterministic random generator, and comparisons in any scalar type. */
#ifndef SPS_TESTUTIL_H
#define SPS_TESTUTIL_H
#include "spsolve/spsolve.h"
#include <stdint.h>
#include <stdio.h>

extern int tu_passed, tu_failed;

/** Record one check; prints a line only on failure. */
int tu_check(int ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
#define TU_CHECK(cond, ...) tu_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
/** Check an sps_status is SPS_OK; on failure print the context error. */
#define TU_OK(ctx, expr) tu_check_ok((ctx), (expr), #expr, __FILE__, __LINE__)
int tu_check_ok(sps_context ctx, sps_status st, const char *expr, const char *file, int line);
/** Print "N passed, M failed" and return the process exit code (0 when none failed). */
int tu_finish(void);
/** Exit code meaning "skipped" to CTest. */
#define TU_SKIP 77

/** xorshift64* random generator. */
typedef struct { uint64_t s; } tu_rng;
void tu_rng_seed(tu_rng *r, uint64_t seed);
uint64_t tu_rng_u64(tu_rng *r);
double tu_rng_uniform(tu_rng *r);          /* [0, 1) */
double tu_rng_range(tu_rng *r, double lo, double hi);
/** Fill n scalars of type t with uniform values in [-1, 1) (both parts for complex). */
void tu_fill_random(tu_rng *r, sps_scalar t, size_t n, void *v);
/** calloc that never returns NULL (n or sz of 0 allocate one byte); exits 2 when out of memory. */
void *tu_xcalloc(size_t n, size_t sz);
/** Store re + i im as entry i of array v of type t (im dropped for real t). */
void tu_put(sps_scalar t, void *v, size_t i, double re, double im);
/** Fill n scalars with NaN (poison). */
void tu_fill_nan(sps_scalar t, size_t n, void *v);
/** Entry i of array v of type t as double re/im. */
void tu_get(sps_scalar t, const void *v, size_t i, double *re, double *im);
/** max_i |a_i - b_i| / max(max_i |b_i|, tiny) over n scalars of type t. */
double tu_relerr(sps_scalar t, size_t n, const void *a, const void *b);
/** Unit roundoff of t's precision. */
double tu_eps(sps_scalar t);

/** Host copy of a matrix as exported CSR. */
typedef struct {
    sps_matrix_info_t info;
    sps_index *rowptr, *col;
    void *val;
} tu_csr;
/** Export A into freshly allocated arrays of h (free with tu_csr_free); returns 1 on success.  On an
 * export failure prints the error of c to stderr when c is not NULL. */
int tu_export_csr(sps_context c, sps_matrix A, tu_csr *h);
void tu_csr_free(tu_csr *h);
/** Bitwise equality of two exported CSR copies (sizes, scalar type, rowptr, columns, values). */
int tu_same_csr(const tu_csr *a, const tu_csr *b);

/** Directory of the SuiteSparse matrices from env SPS_MATRIX_DIR or argv, or NULL when absent. */
const char *tu_matrix_dir(int argc, char **argv, int argi);
#endif
