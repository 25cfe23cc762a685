#include "testutil.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tu_passed = 0, tu_failed = 0;

int tu_check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        tu_passed++;
        return 1;
    }
    tu_failed++;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return 0;
}

int tu_check_ok(sps_context ctx, sps_status st, const char *expr, const char *file, int line)
{
    return tu_check(st == SPS_OK, file, line, "%s -> %s: %s", expr, sps_status_name(st),
                    ctx ? sps_context_error(ctx) : "");
}

int tu_finish(void)
{
    printf("%d passed, %d failed\n", tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

void tu_rng_seed(tu_rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; if (!r->s) r->s = 1; }

uint64_t tu_rng_u64(tu_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

double tu_rng_uniform(tu_rng *r) { return (double)(tu_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
double tu_rng_range(tu_rng *r, double lo, double hi) { return lo + (hi - lo) * tu_rng_uniform(r); }

static size_t reals_per(sps_scalar t) { return sps_scalar_is_complex(t) ? 2 : 1; }
static int is_single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }

void tu_fill_random(tu_rng *r, sps_scalar t, size_t n, void *v)
{
    size_t k = n * reals_per(t);
    for (size_t i = 0; i < k; i++) {
        double x = tu_rng_range(r, -1.0, 1.0);
        if (is_single(t)) ((float *)v)[i] = (float)x;
        else ((double *)v)[i] = x;
    }
}

void tu_fill_nan(sps_scalar t, size_t n, void *v)
{
    size_t k = n * reals_per(t);
    for (size_t i = 0; i < k; i++) {
        if (is_single(t)) ((float *)v)[i] = NAN;
        else ((double *)v)[i] = NAN;
    }
}

void *tu_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

void tu_put(sps_scalar t, void *v, size_t i, double re, double im)
{
    switch (t) {
    case SPS_F32: ((float *)v)[i] = (float)re; break;
    case SPS_F64: ((double *)v)[i] = re; break;
    case SPS_C32:
        ((float *)v)[2 * i] = (float)re;
        ((float *)v)[2 * i + 1] = (float)im;
        break;
    default:
        ((double *)v)[2 * i] = re;
        ((double *)v)[2 * i + 1] = im;
        break;
    }
}

void tu_get(sps_scalar t, const void *v, size_t i, double *re, double *im)
{
    size_t k = reals_per(t);
    if (is_single(t)) {
        *re = ((const float *)v)[i * k];
        *im = k == 2 ? ((const float *)v)[i * k + 1] : 0.0;
    } else {
        *re = ((const double *)v)[i * k];
        *im = k == 2 ? ((const double *)v)[i * k + 1] : 0.0;
    }
}

double tu_relerr(sps_scalar t, size_t n, const void *a, const void *b)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double ar, ai, br, bi;
        tu_get(t, a, i, &ar, &ai);
        tu_get(t, b, i, &br, &bi);
        double d = hypot(ar - br, ai - bi);
        if (!(d <= num)) num = d; /* NaN propagates as failure */
        double m = hypot(br, bi);
        if (m > den) den = m;
    }
    if (isnan(num)) return INFINITY;
    return num / (den > 1e-300 ? den : 1e-300);
}

double tu_eps(sps_scalar t) { return is_single(t) ? 5.96e-8 : 1.11e-16; }

int tu_export_csr(sps_context c, sps_matrix A, tu_csr *h)
{
    memset(h, 0, sizeof *h);
    if (sps_matrix_info(A, &h->info) != SPS_OK) return 0;
    h->rowptr = tu_xcalloc((size_t)h->info.rows + 1, sizeof(sps_index));
    h->col = tu_xcalloc((size_t)h->info.nnz, sizeof(sps_index));
    h->val = tu_xcalloc((size_t)h->info.nnz, sps_scalar_size(h->info.scalar));
    if (sps_matrix_export_csr(A, h->rowptr, h->col, h->val) == SPS_OK) return 1;
    if (c) fprintf(stderr, "export: %s\n", sps_context_error(c));
    return 0;
}

void tu_csr_free(tu_csr *h)
{
    free(h->rowptr);
    free(h->col);
    free(h->val);
}

int tu_same_csr(const tu_csr *a, const tu_csr *b)
{
    if (a->info.rows != b->info.rows || a->info.cols != b->info.cols || a->info.nnz != b->info.nnz ||
        a->info.scalar != b->info.scalar)
        return 0;
    const size_t nnz = (size_t)a->info.nnz;
    return memcmp(a->rowptr, b->rowptr, ((size_t)a->info.rows + 1) * sizeof(sps_index)) == 0 &&
           (nnz == 0 || (memcmp(a->col, b->col, nnz * sizeof(sps_index)) == 0 &&
                         memcmp(a->val, b->val, nnz * sps_scalar_size(a->info.scalar)) == 0));
}

const char *tu_matrix_dir(int argc, char **argv, int argi)
{
    const char *d = NULL;
    if (argi < argc && argv[argi][0]) d = argv[argi];
    if (!d) d = getenv("SPS_MATRIX_DIR");
    if (!d || !d[0]) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", d);
    struct stat st;
    if (stat(path, &st) != 0) return NULL;
    return d;
}
