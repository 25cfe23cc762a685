/* Test utilities: checks that count, a final "N passed, M failed" line, a
 * deterministic random generator, and comparisons in any scalar type. */
#ifndef SPS_TESTUTIL_H
#define SPS_TESTUTIL_H
#include "spsolve/spsolve.h"
#include <stdarg.h>
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
/** tu_check with the message's arguments in a va_list. */
int tu_vcheck(int ok, const char *file, int line, const char *fmt, va_list ap);
/** Check an sps_status is SPS_OK; on failure print the context error. */
#define TU_OK(ctx, expr) tu_check_ok((ctx), (expr), #expr, __FILE__, __LINE__)
int tu_check_ok(sps_context ctx, sps_status st, const char *expr, const char *file, int line);
/** Create a CPU context in *ctx; nonzero (with a message) when that fails. */
int tu_cpu_context(sps_context *ctx);
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
/** Export B (in context c) and check it bitwise equal to want: one check with the message fmt, or
 *  none when the export fails (printed). */
#define TU_CHECK_EXPORT(c, B, want, ...) tu_check_export((c), (B), (want), __FILE__, __LINE__, __VA_ARGS__)
int tu_check_export(sps_context c, sps_matrix B, const tu_csr *want, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
/** sps_matrix_destroy on every handle given (NULL ones included). */
#define TU_DESTROY_MATRICES(...)                                                                                   \
    tu_destroy_matrices(sizeof((sps_matrix[]){__VA_ARGS__}) / sizeof(sps_matrix), (sps_matrix[]){__VA_ARGS__})
void tu_destroy_matrices(size_t n, const sps_matrix *m);

/** A preconditioner `name` of ctx with option opt = value (opt NULL: none) set up on A;
 *  NULL when the setup fails (the reason in ctx's error), the new or set_option steps
 *  checked. */
sps_precond tu_precond_with(sps_context ctx, sps_matrix A, const char *name, const char *opt, const char *value);
/** nnz values of type t for a value dictionary's tests (formats/vdict.h): each one of a pool of
 *  np (>= 1) random values whose first two are +0 and -0 (two patterns of bits). */
void *tu_pool_values(tu_rng *r, sps_scalar t, int64_t nnz, int np);
/** The distinct bit patterns among the nnz values v of type t, and +0's where zero_too
 *  (padding's zeros: a table's entry too). */
int tu_distinct_values(sps_scalar t, const void *v, int64_t nnz, int zero_too);
/** An f64 matrix from Matrix Market text with NaN and Inf allowed (the tests of how setups name
 *  them); NULL on failure (a test failure), the context's message cleared on success. */
sps_matrix tu_read_nonfinite(sps_context ctx, const char *mtx);
/** P (set up, in ctx) applied to n host values x of type t: a fresh host vector. */
void *tu_precond_apply_host(sps_context ctx, sps_precond P, sps_scalar t, sps_index n, const void *x);
/** Solve A x = 1 from x = 0 with solver (by name) and P (NULL: none) in A's context:
 *  the iterations (-1 and a failed check when the solve fails). */
int tu_solve_ones(sps_matrix A, const char *solver, sps_precond P);

/** The four scalar types: f32, f64, c32, c64. */
#define TU_NTYPES 4
extern const sps_scalar tu_all_types[TU_NTYPES];

/* ------------------------------------------------------------------ sparsity patterns */
/** A sparsity pattern (n x m, host CSR rowptr/col; columns sorted and distinct in each row). */
typedef struct {
    const char *name;
    int n, m;
    int64_t nnz;
    sps_index *rowptr, *col;
} tu_shape;
/** L distinct sorted random columns in [0, m) into c (selection sampling when L >= m / 4). */
void tu_random_cols(tu_rng *r, int m, int L, sps_index *c);
/** Rows of lengths len[0..n-1] with random columns; one_col >= 0: every entry in that column (len <= 1). */
tu_shape tu_shape_make(tu_rng *r, const char *name, int n, int m, const int *len, int one_col);
/** Band: row i holds columns i + o for the offsets o in [lo, hi] kept with probability p. */
tu_shape tu_shape_band(tu_rng *r, const char *name, int n, int m, int lo, int hi, double p);
void tu_shape_free(tu_shape *s);
/** nnz values of type t, uniform [-1, 1), with -0.0 every 11th entry (k % 11 == 5) and, with
 *  `zeros`, explicit zeros every 7th (k % 7 == 3).  Caller frees. */
void *tu_shape_values(tu_rng *r, sps_scalar t, int64_t nnz, int zeros);
/** A host CSR view of shape s with values val (nothing is copied: do not tu_csr_free it). */
tu_csr tu_shape_csr(const tu_shape *s, sps_scalar t, void *val);

/* ------------------------------------------------------------------ SpMV references */
/** The alpha/beta cases of the SpMV checks: alpha = 1, beta = 0 (defaulted, y NaN); random alpha and
 *  beta; random alpha, beta = 0 with y NaN. */
enum { TU_AB_DEFAULT = 0, TU_AB_RANDOM, TU_AB_BETA0, TU_AB_COUNT };
extern const char *const tu_ab_name[TU_AB_COUNT];
/** alpha and beta of case ab: as scalars of type t (alpha, beta) and as doubles rounded to t.
 *  Draws from r: alpha's parts unless ab is TU_AB_DEFAULT, then beta's for TU_AB_RANDOM
 *  (imaginary parts only for complex t). */
typedef struct {
    double ar, ai, br, bi;
    unsigned char alpha[16], beta[16];
} tu_coefs;
void tu_draw_coefs(tu_rng *r, sps_scalar t, int ab, tu_coefs *c);
/** op(A) x in long double from host CSR h (mode N: A x, T: A^T x): per output, the real and
 *  imaginary sums, sum |a_ij| |x_j| (1-norms of the parts) and the number of terms. */
typedef struct {
    int nout;
    long double *re, *im, *abs;
    int *cnt;
} tu_spmv_ref;
void tu_spmv_ref_compute(const tu_csr *h, sps_op_mode mode, const void *x, tu_spmv_ref *ref);
void tu_spmv_ref_free(tu_spmv_ref *ref);
/** Per-output tolerance scales of y = alpha op(A) x + beta y0 (A from h):
 *  4 (cnt_i + 4) (|alpha| sum |a_ij x_j| + |beta y0_i|), y0 read only when beta != 0.  Caller frees. */
double *tu_spmv_scales(const tu_csr *h, sps_op_mode mode, const void *x, const tu_coefs *c, const void *y0);
/** y = alpha op(A) x + beta y0 through an operator in context c (host in, host out): returns a
 *  freshly allocated y; when a step fails, prints the error, fills y with NaN and sets *ok (when
 *  not NULL) to 0. */
void *tu_apply(sps_context c, sps_matrix A, sps_op_mode mode, sps_scalar t, int nin, int nout, const void *x,
               const void *y0, const void *alpha, const void *beta, int *ok);
/** y = alpha op(A) x + beta y0 on A in context c (x, y0, alpha, beta of case ab drawn from `seed`)
 *  against the long double reference from h: every |y_i - ref_i| <= 4 (cnt_i + 4) eps scale_i.
 *  *worst: the largest |y_i - ref_i| / scale_i; the output in *yout when yout is not NULL
 *  (caller frees). */
int tu_spmv_check(sps_context c, const tu_csr *h, sps_matrix A, sps_op_mode mode, int ab, uint64_t seed,
                  double *worst, void **yout);

/** Directory of the SuiteSparse matrices from env SPS_MATRIX_DIR or argv, or NULL when absent. */
const char *tu_matrix_dir(int argc, char **argv, int argi);
/** The options of format f with name/value pairs set (NULL-terminated:
 *  tu_fopts(SPS_FMT_DIA, "force", "true", NULL)); a refused pair fails the test.
 *  sps_options_destroy it. */
sps_options tu_fopts(sps_format f, ...);
#endif
