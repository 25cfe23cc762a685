/* Unit tests of the core through the public API: contexts and errors, names,
 * vectors (BLAS-1 against long double references), operators from matrices
 * and shell operators, vector Matrix Market I/O, and NULL arguments to every
 * function tested (must return an error, never crash).
 * Ends with "N passed, M failed". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sps_context ctx;
static tu_rng rng;
static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};
static char tmpdir_path[512];

/* ------------------------------------------------------------------ helpers */
typedef struct { long double re, im; } lc;
static lc lc_make(long double re, long double im) { lc c = {re, im}; return c; }
static lc lc_add(lc a, lc b) { return lc_make(a.re + b.re, a.im + b.im); }
static lc lc_mul(lc a, lc b) { return lc_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static long double lc_abs(lc a) { return sqrtl(a.re * a.re + a.im * a.im); }

static int cplx(sps_scalar t) { return sps_scalar_is_complex(t); }
static int single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }
static int contains(const char *hay, const char *needle) { return hay && needle && strstr(hay, needle) != NULL; }

static lc ld(sps_scalar t, const void *v, size_t i)
{
    double re, im;
    tu_get(t, v, i, &re, &im);
    return lc_make(re, im);
}
/* One random scalar of type t in s (16 bytes suffice); its value in *v (as stored). */
static void rand_scalar(sps_scalar t, void *s, lc *v)
{
    double re = tu_rng_range(&rng, -2, 2), im = tu_rng_range(&rng, -2, 2);
    if (fabs(re) < 0.1) re += 0.5;
    tu_put(t, s, 0, re, im);
    *v = ld(t, s, 0);
}
static void *rand_vals(sps_scalar t, size_t n)
{
    void *v = tu_xcalloc(n, ssz(t));
    tu_fill_random(&rng, t, n, v);
    return v;
}

/* |got_i - ref_i| <= f * eps * scale_i for all i; one aggregated check */
static void check_vals(const char *what, sps_scalar t, size_t n, const void *got, const lc *ref,
                       const long double *scale, double f)
{
    long bad = 0, first = -1;
    for (size_t i = 0; i < n; i++) {
        lc g = ld(t, got, i);
        long double d = lc_abs(lc_make(g.re - ref[i].re, g.im - ref[i].im));
        if (!(d <= f * tu_eps(t) * scale[i])) {
            if (first < 0) first = (long)i;
            bad++;
        }
    }
    if (bad) {
        lc g = ld(t, got, (size_t)first);
        TU_CHECK(0, "%s [%s n=%zu]: %ld bad, first %ld: got (%g,%g) want (%Lg,%Lg)", what, tn(t), n, bad, first,
                 (double)g.re, (double)g.im, ref[first].re, ref[first].im);
    } else {
        TU_CHECK(1, "%s", what);
    }
}

/* ------------------------------------------------------------------ contexts */
static void test_context(void)
{
    sps_context c = NULL;
    TU_CHECK(sps_context_create(&c, SPS_BACKEND_CPU, 0) == SPS_OK && c, "create cpu context");
    TU_CHECK(sps_context_backend(c) == SPS_BACKEND_CPU, "cpu context backend");
    TU_CHECK(sps_context_device_name(c) && sps_context_device_name(c)[0], "cpu device name '%s'",
             sps_context_device_name(c));
    TU_CHECK(sps_context_error(c) && sps_context_error(c)[0] == 0 && sps_context_last_status(c) == SPS_OK,
             "fresh context has no error");
    TU_CHECK(sps_context_synchronize(c) == SPS_OK, "synchronize cpu");
    TU_CHECK(sps_context_cuda_stream(c) == NULL, "cpu context has no CUDA stream");
    sps_context_destroy(c);

    /* auto: cpu unless a GPU is usable */
    c = NULL;
    sps_status s = sps_context_create(&c, SPS_BACKEND_AUTO, 0);
    TU_CHECK(s == SPS_OK && c, "create auto context: %s", sps_status_name(s));
    if (c) {
        TU_CHECK(sps_context_backend(c) == (sps_cuda_available() ? SPS_BACKEND_CUDA : SPS_BACKEND_CPU),
                 "auto chose %s", sps_backend_name(sps_context_backend(c)));
        TU_CHECK(sps_context_backend(c) != SPS_BACKEND_AUTO, "backend is never auto");
    }
    sps_context_destroy(c);
    TU_CHECK(sps_cuda_compiled() || !sps_cuda_available(), "cuda available implies compiled");

    /* cuda without CUDA: SPS_ERR_DEVICE, a message, and a usable (CPU) context */
    if (!sps_cuda_available()) {
        c = NULL;
        s = sps_context_create(&c, SPS_BACKEND_CUDA, 0);
        TU_CHECK(s == SPS_ERR_DEVICE && c != NULL, "cuda context without CUDA: %s", sps_status_name(s));
        if (c) {
            TU_CHECK(contains(sps_context_error(c), "cuda") || contains(sps_context_error(c), "CUDA"),
                     "cuda failure message '%s'", sps_context_error(c));
            TU_CHECK(sps_context_last_status(c) == SPS_ERR_DEVICE, "last status DEVICE");
            TU_CHECK(sps_context_backend(c) == SPS_BACKEND_CPU, "failed cuda context falls back to cpu");
            double x[3] = {1, 2, 2}, nrm = 0;
            sps_vector v = NULL;
            TU_CHECK(sps_vector_from_host(c, 3, SPS_F64, x, &v) == SPS_OK && sps_vector_nrm2(v, &nrm) == SPS_OK &&
                         nrm == 3.0,
                     "failed cuda context is usable (nrm2 %g)", nrm);
            sps_vector_destroy(v);
            sps_context_destroy(c);
        }
    }
    /* an unknown backend */
    c = NULL;
    s = sps_context_create(&c, (sps_backend)7, 0);
    TU_CHECK(s == SPS_ERR_ARG, "unknown backend 7: %s", sps_status_name(s));
    if (c) TU_CHECK(sps_context_error(c)[0] != 0, "unknown backend message");
    sps_context_destroy(c);
    /* NULL arguments */
    TU_CHECK(sps_context_create(NULL, SPS_BACKEND_CPU, 0) == SPS_ERR_ARG, "create NULL out");
    sps_context_destroy(NULL);
    TU_CHECK(sps_context_error(NULL) != NULL, "error text of NULL context is not NULL");
    TU_CHECK(sps_context_last_status(NULL) != SPS_OK, "last status of NULL context");
    sps_context_clear_error(NULL);
    TU_CHECK(sps_context_device_name(NULL) != NULL, "device name of NULL context");
    TU_CHECK(sps_context_synchronize(NULL) == SPS_ERR_ARG, "synchronize NULL");
    TU_CHECK(sps_context_cuda_stream(NULL) == NULL, "stream of NULL context");
    (void)sps_context_backend(NULL);
}

static void test_errors(void)
{
    sps_vector v = (sps_vector)&v;
    sps_status s = sps_vector_create(ctx, -5, SPS_F64, &v);
    TU_CHECK(s == SPS_ERR_ARG && v == NULL, "negative vector size: %s", sps_status_name(s));
    TU_CHECK(contains(sps_context_error(ctx), "-5") && sps_context_last_status(ctx) == SPS_ERR_ARG,
             "error message names the size: '%s'", sps_context_error(ctx));
    sps_context_clear_error(ctx);
    TU_CHECK(sps_context_error(ctx)[0] == 0 && sps_context_last_status(ctx) == SPS_OK, "clear error");
    /* the last failure wins */
    sps_vector_create(ctx, -1, SPS_F64, &v);
    sps_vector_create(ctx, 3, (sps_scalar)11, &v);
    TU_CHECK(contains(sps_context_error(ctx), "11") || contains(sps_context_error(ctx), "type"),
             "latest error kept: '%s'", sps_context_error(ctx));
    /* success does not clear the error (status + sps_context_error is the story) */
    sps_vector ok = NULL;
    TU_CHECK(sps_vector_create(ctx, 3, SPS_F64, &ok) == SPS_OK, "create after error");
    sps_vector_destroy(ok);
    sps_context_clear_error(ctx);
}

static void test_names(void)
{
    const char *seen[10];
    for (int s = 0; s < 10; s++) {
        seen[s] = sps_status_name((sps_status)s);
        TU_CHECK(seen[s] && strncmp(seen[s], "SPS_", 4) == 0, "status %d name '%s'", s, seen[s] ? seen[s] : "(null)");
        for (int q = 0; q < s; q++) TU_CHECK(strcmp(seen[q], seen[s]) != 0, "status names %d and %d equal", q, s);
    }
    TU_CHECK(strcmp(sps_status_name(SPS_OK), "SPS_OK") == 0 && strcmp(sps_status_name(SPS_ERR_PARSE), "SPS_ERR_PARSE") == 0 &&
                 strcmp(sps_status_name(SPS_ERR_NUMERIC), "SPS_ERR_NUMERIC") == 0,
             "status names");
    TU_CHECK(sps_status_name((sps_status)99) != NULL && sps_status_name((sps_status)-1) != NULL, "unknown status names");
    const char *snames[4] = {"f32", "f64", "c32", "c64"};
    const size_t sizes[4] = {4, 8, 8, 16};
    for (int i = 0; i < 4; i++) {
        sps_scalar t = (sps_scalar)99;
        TU_CHECK(strcmp(sps_scalar_name((sps_scalar)i), snames[i]) == 0, "scalar name %d", i);
        TU_CHECK(sps_scalar_from_name(snames[i], &t) == SPS_OK && t == (sps_scalar)i, "scalar from '%s'", snames[i]);
        TU_CHECK(sps_scalar_size((sps_scalar)i) == sizes[i], "scalar size %d", i);
        TU_CHECK(!!sps_scalar_is_complex((sps_scalar)i) == (i >= 2), "is_complex %d", i);
    }
    sps_scalar t;
    TU_CHECK(sps_scalar_from_name("f16", &t) == SPS_ERR_ARG && sps_scalar_from_name(NULL, &t) == SPS_ERR_ARG &&
                 sps_scalar_from_name("f64", NULL) == SPS_ERR_ARG && sps_scalar_from_name("", &t) == SPS_ERR_ARG,
             "bad scalar names");
    TU_CHECK(sps_scalar_name((sps_scalar)9) != NULL && sps_scalar_size((sps_scalar)9) == 0, "unknown scalar");
    const char *bnames[3] = {"cpu", "cuda", "auto"};
    for (int i = 0; i < 3; i++) {
        sps_backend b = (sps_backend)99;
        TU_CHECK(strcmp(sps_backend_name((sps_backend)i), bnames[i]) == 0, "backend name %d", i);
        TU_CHECK(sps_backend_from_name(bnames[i], &b) == SPS_OK && b == (sps_backend)i, "backend from '%s'", bnames[i]);
    }
    sps_backend b;
    TU_CHECK(sps_backend_from_name("gpu", &b) == SPS_ERR_ARG && sps_backend_from_name(NULL, &b) == SPS_ERR_ARG &&
                 sps_backend_from_name("cpu", NULL) == SPS_ERR_ARG,
             "bad backend names");
    TU_CHECK(sps_backend_name((sps_backend)5) != NULL, "unknown backend name");
    TU_CHECK(sps_version() && sps_version()[0] >= '0' && sps_version()[0] <= '9', "version '%s'", sps_version());
}

/* ------------------------------------------------------------------ vectors */
static void test_vector_basics(sps_scalar t, int n)
{
    const size_t N = (size_t)n;
    sps_vector v = NULL;
    void *h = tu_xcalloc(N, ssz(t));
    /* create: zero-filled */
    if (!TU_OK(ctx, sps_vector_create(ctx, n, t, &v))) { free(h); return; }
    TU_CHECK(sps_vector_size(v) == n && sps_vector_scalar(v) == t && sps_vector_context(v) == ctx, "vector facts");
    TU_CHECK(sps_vector_data(v) != NULL, "vector data pointer");
    tu_fill_nan(t, N, h);
    TU_OK(ctx, sps_vector_get(v, h));
    int zero = 1;
    for (size_t i = 0; i < N; i++) {
        lc c = ld(t, h, i);
        if (c.re != 0 || c.im != 0) zero = 0;
    }
    TU_CHECK(zero, "created vector [%s n=%d] is zero-filled", tn(t), n);
    /* set/get and from_host are bitwise */
    void *src = rand_vals(t, N);
    TU_OK(ctx, sps_vector_set(v, src));
    tu_fill_nan(t, N, h);
    TU_OK(ctx, sps_vector_get(v, h));
    TU_CHECK(N == 0 || memcmp(h, src, N * ssz(t)) == 0, "set/get [%s n=%d] bitwise", tn(t), n);
    sps_vector w = NULL;
    TU_OK(ctx, sps_vector_from_host(ctx, n, t, src, &w));
    tu_fill_nan(t, N, h);
    TU_OK(ctx, sps_vector_get(w, h));
    TU_CHECK(N == 0 || memcmp(h, src, N * ssz(t)) == 0, "from_host [%s n=%d] bitwise", tn(t), n);
    /* fill (complex value for complex types) */
    unsigned char val[16];
    lc fv;
    rand_scalar(t, val, &fv);
    TU_OK(ctx, sps_vector_fill(v, val));
    TU_OK(ctx, sps_vector_get(v, h));
    int same = 1;
    for (size_t i = 0; i < N; i++)
        if (memcmp((char *)h + i * ssz(t), val, ssz(t)) != 0) same = 0;
    TU_CHECK(same, "fill [%s n=%d]", tn(t), n);
    /* copy */
    TU_OK(ctx, sps_vector_copy(w, v));
    tu_fill_nan(t, N, h);
    TU_OK(ctx, sps_vector_get(v, h));
    TU_CHECK(N == 0 || memcmp(h, src, N * ssz(t)) == 0, "copy [%s n=%d] bitwise", tn(t), n);
    sps_vector_destroy(v);
    sps_vector_destroy(w);
    free(src);
    free(h);
}

static void test_vector_ops(sps_scalar t, int n)
{
    const size_t N = (size_t)n;
    void *xh = rand_vals(t, N), *yh = rand_vals(t, N), *out = tu_xcalloc(N, ssz(t));
    lc *ref = tu_xcalloc(N, sizeof *ref);
    long double *scale = tu_xcalloc(N, sizeof *scale);
    sps_vector x = NULL, y = NULL;
    if (!TU_OK(ctx, sps_vector_from_host(ctx, n, t, xh, &x)) || !TU_OK(ctx, sps_vector_from_host(ctx, n, t, yh, &y)))
        goto done;
    unsigned char a[16], b[16];
    lc av, bv;
    /* axpby: random alpha, beta */
    rand_scalar(t, a, &av);
    rand_scalar(t, b, &bv);
    TU_OK(ctx, sps_vector_axpby(a, x, b, y));
    TU_OK(ctx, sps_vector_get(y, out));
    for (size_t i = 0; i < N; i++) {
        lc xi = ld(t, xh, i), yi = ld(t, yh, i);
        ref[i] = lc_add(lc_mul(av, xi), lc_mul(bv, yi));
        scale[i] = lc_abs(av) * lc_abs(xi) + lc_abs(bv) * lc_abs(yi);
    }
    check_vals("vector_axpby", t, N, out, ref, scale, 4);
    /* axpby with NULL beta (= 0) on a NaN y: y = alpha x, no NaN */
    tu_fill_nan(t, N, out);
    sps_vector_set(y, out);
    TU_OK(ctx, sps_vector_axpby(a, x, NULL, y));
    TU_OK(ctx, sps_vector_get(y, out));
    for (size_t i = 0; i < N; i++) {
        lc xi = ld(t, xh, i);
        ref[i] = lc_mul(av, xi);
        scale[i] = lc_abs(av) * lc_abs(xi);
    }
    check_vals("vector_axpby beta NULL, NaN y", t, N, out, ref, scale, 4);
    /* axpby with NULL alpha (= 1) and explicit zero beta on a NaN y: y = x */
    tu_fill_nan(t, N, out);
    sps_vector_set(y, out);
    memset(b, 0, sizeof b);
    TU_OK(ctx, sps_vector_axpby(NULL, x, b, y));
    TU_OK(ctx, sps_vector_get(y, out));
    TU_CHECK(N == 0 || memcmp(out, xh, N * ssz(t)) == 0, "axpby(1, x, 0, NaN) = x [%s n=%d]", tn(t), n);
    /* scale */
    sps_vector_set(y, yh);
    rand_scalar(t, a, &av);
    TU_OK(ctx, sps_vector_scale(a, y));
    TU_OK(ctx, sps_vector_get(y, out));
    for (size_t i = 0; i < N; i++) {
        lc yi = ld(t, yh, i);
        ref[i] = lc_mul(av, yi);
        scale[i] = lc_abs(av) * lc_abs(yi);
    }
    check_vals("vector_scale", t, N, out, ref, scale, 3);
    sps_vector_set(y, yh);
    TU_OK(ctx, sps_vector_scale(NULL, y)); /* NULL alpha = 1 */
    TU_OK(ctx, sps_vector_get(y, out));
    TU_CHECK(N == 0 || memcmp(out, yh, N * ssz(t)) == 0, "scale(NULL) leaves y [%s n=%d]", tn(t), n);
    /* dot: x^H y, result of the vectors' type */
    unsigned char r[16];
    memset(r, 0xff, sizeof r);
    TU_OK(ctx, sps_vector_dot(x, y, r));
    lc dref = lc_make(0, 0);
    long double dscale = 0;
    for (size_t i = 0; i < N; i++) {
        lc xi = ld(t, xh, i), yi = ld(t, yh, i);
        dref = lc_add(dref, lc_mul(lc_make(xi.re, -xi.im), yi));
        dscale += lc_abs(xi) * lc_abs(yi);
    }
    lc got = ld(t, r, 0);
    long double d = lc_abs(lc_make(got.re - dref.re, got.im - dref.im));
    TU_CHECK(d <= 4 * (sqrt((double)n) + 2) * tu_eps(t) * dscale + (single(t) ? tu_eps(t) * lc_abs(dref) : 0),
             "vector_dot [%s n=%d]: got (%g,%g) want (%Lg,%Lg)", tn(t), n, (double)got.re, (double)got.im, dref.re, dref.im);
    /* nrm2 */
    double nrm = -1;
    TU_OK(ctx, sps_vector_nrm2(x, &nrm));
    long double nref = 0;
    for (size_t i = 0; i < N; i++) { lc xi = ld(t, xh, i); nref += xi.re * xi.re + xi.im * xi.im; }
    nref = sqrtl(nref);
    TU_CHECK(fabsl(nrm - nref) <= 4 * (sqrt((double)n) + 2) * tu_eps(t) * nref, "vector_nrm2 [%s n=%d]: %g vs %Lg",
             tn(t), n, nrm, nref);
done:
    sps_vector_destroy(x);
    sps_vector_destroy(y);
    free(xh);
    free(yh);
    free(out);
    free(ref);
    free(scale);
}

static void test_vector_errors(void)
{
    sps_context other = NULL;
    sps_context_create(&other, SPS_BACKEND_CPU, 0);
    sps_vector a = NULL, b = NULL, c = NULL, d = NULL;
    sps_vector_create(ctx, 5, SPS_F64, &a);
    sps_vector_create(ctx, 6, SPS_F64, &b);
    sps_vector_create(ctx, 5, SPS_C64, &c);
    sps_vector_create(other, 5, SPS_F64, &d);
    double r[2], one = 1.0;
    struct { sps_vector y; const char *what; } bad[] = {{b, "6"}, {c, "c64"}, {d, "context"}};
    for (int k = 0; k < 3; k++) {
        sps_context_clear_error(ctx);
        TU_CHECK(sps_vector_copy(a, bad[k].y) == SPS_ERR_ARG && contains(sps_context_error(ctx), bad[k].what),
                 "copy mismatch %d: '%s'", k, sps_context_error(ctx));
        sps_context_clear_error(ctx);
        TU_CHECK(sps_vector_axpby(&one, a, &one, bad[k].y) == SPS_ERR_ARG && contains(sps_context_error(ctx), bad[k].what),
                 "axpby mismatch %d: '%s'", k, sps_context_error(ctx));
        sps_context_clear_error(ctx);
        TU_CHECK(sps_vector_dot(a, bad[k].y, r) == SPS_ERR_ARG && contains(sps_context_error(ctx), bad[k].what),
                 "dot mismatch %d: '%s'", k, sps_context_error(ctx));
    }
    TU_CHECK(contains(sps_context_error(ctx), "sps_vector_dot"), "message names the function: '%s'", sps_context_error(ctx));
    /* NULL arguments */
    sps_vector v = (sps_vector)&v;
    double x5[5] = {1, 2, 3, 4, 5};
    TU_CHECK(sps_vector_create(NULL, 3, SPS_F64, &v) == SPS_ERR_ARG, "create NULL ctx");
    TU_CHECK(sps_vector_create(ctx, 3, SPS_F64, NULL) == SPS_ERR_ARG, "create NULL out");
    TU_CHECK(sps_vector_create(ctx, 3, (sps_scalar)4, &v) == SPS_ERR_ARG && v == NULL, "create bad type");
    TU_CHECK(sps_vector_from_host(ctx, 5, SPS_F64, NULL, &v) == SPS_ERR_ARG && v == NULL, "from_host NULL values");
    TU_CHECK(sps_vector_from_host(NULL, 5, SPS_F64, x5, &v) == SPS_ERR_ARG, "from_host NULL ctx");
    TU_CHECK(sps_vector_from_host(ctx, 5, SPS_F64, x5, NULL) == SPS_ERR_ARG, "from_host NULL out");
    TU_CHECK(sps_vector_set(NULL, x5) == SPS_ERR_ARG && sps_vector_set(a, NULL) == SPS_ERR_ARG, "set NULL");
    TU_CHECK(sps_vector_get(NULL, x5) == SPS_ERR_ARG && sps_vector_get(a, NULL) == SPS_ERR_ARG, "get NULL");
    TU_CHECK(sps_vector_fill(NULL, &one) == SPS_ERR_ARG && sps_vector_fill(a, NULL) == SPS_ERR_ARG, "fill NULL");
    TU_CHECK(sps_vector_copy(NULL, a) == SPS_ERR_ARG && sps_vector_copy(a, NULL) == SPS_ERR_ARG, "copy NULL");
    TU_CHECK(sps_vector_axpby(&one, NULL, &one, a) == SPS_ERR_ARG && sps_vector_axpby(&one, a, &one, NULL) == SPS_ERR_ARG,
             "axpby NULL");
    TU_CHECK(sps_vector_scale(&one, NULL) == SPS_ERR_ARG, "scale NULL");
    TU_CHECK(sps_vector_dot(NULL, a, r) == SPS_ERR_ARG && sps_vector_dot(a, NULL, r) == SPS_ERR_ARG &&
                 sps_vector_dot(a, a, NULL) == SPS_ERR_ARG,
             "dot NULL");
    TU_CHECK(sps_vector_nrm2(NULL, r) == SPS_ERR_ARG && sps_vector_nrm2(a, NULL) == SPS_ERR_ARG, "nrm2 NULL");
    TU_CHECK(sps_vector_size(NULL) == 0 && sps_vector_context(NULL) == NULL && sps_vector_data(NULL) == NULL,
             "NULL vector facts");
    (void)sps_vector_scalar(NULL);
    sps_vector_destroy(NULL);
    /* zero-length vectors work */
    sps_vector z1 = NULL, z2 = NULL;
    double dz = 7, nz = 7;
    TU_CHECK(sps_vector_create(ctx, 0, SPS_F64, &z1) == SPS_OK && sps_vector_from_host(ctx, 0, SPS_F64, NULL, &z2) == SPS_OK &&
                 sps_vector_dot(z1, z2, &dz) == SPS_OK && dz == 0 && sps_vector_nrm2(z1, &nz) == SPS_OK && nz == 0 &&
                 sps_vector_axpby(&one, z1, &one, z2) == SPS_OK && sps_vector_copy(z1, z2) == SPS_OK,
             "zero-length vectors");
    sps_vector_destroy(z1);
    sps_vector_destroy(z2);
    sps_vector_destroy(a);
    sps_vector_destroy(b);
    sps_vector_destroy(c);
    sps_vector_destroy(d);
    sps_context_destroy(other);
    sps_context_clear_error(ctx);
}

/* ------------------------------------------------------------------ operators */
/* Random n x m matrix (host CSR, ~30% dense, some empty rows). */
typedef struct {
    int n, m, nnz;
    sps_index *rowptr, *col;
    void *val;
} hmat;
static hmat rand_mat(sps_scalar t, int n, int m)
{
    hmat a = {n, m, 0, tu_xcalloc((size_t)n + 1, sizeof(sps_index)), tu_xcalloc((size_t)n * m, sizeof(sps_index)), NULL};
    a.val = tu_xcalloc((size_t)n * m, ssz(t));
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m && i % 4 != 1; j++)
            if (tu_rng_uniform(&rng) < 0.3) {
                a.col[a.nnz] = j;
                tu_put(t, a.val, (size_t)a.nnz++, tu_rng_range(&rng, -1, 1), tu_rng_range(&rng, -1, 1));
            }
        a.rowptr[i + 1] = a.nnz;
    }
    return a;
}
static void hmat_free(hmat *a)
{
    free(a->rowptr);
    free(a->col);
    free(a->val);
}
/* ref = alpha op(A) x + beta y0 (y0 NULL: 0) */
static void ref_apply(sps_scalar t, const hmat *a, sps_op_mode mode, lc alpha, const void *x, lc beta, const void *y0,
                      lc *ref, long double *scale)
{
    const int nout = mode == SPS_OP_N ? a->n : a->m;
    lc *acc = tu_xcalloc((size_t)nout, sizeof *acc);
    long double *sa = tu_xcalloc((size_t)nout, sizeof *sa);
    for (int i = 0; i < a->n; i++)
        for (int k = a->rowptr[i]; k < a->rowptr[i + 1]; k++) {
            const int o = mode == SPS_OP_N ? i : a->col[k], in = mode == SPS_OP_N ? a->col[k] : i;
            lc v = ld(t, a->val, (size_t)k), xv = ld(t, x, (size_t)in);
            acc[o] = lc_add(acc[o], lc_mul(v, xv));
            sa[o] += lc_abs(v) * lc_abs(xv);
        }
    for (int o = 0; o < nout; o++) {
        lc yv = y0 ? ld(t, y0, (size_t)o) : lc_make(0, 0);
        ref[o] = lc_add(lc_mul(alpha, acc[o]), lc_mul(beta, yv));
        scale[o] = lc_abs(alpha) * sa[o] + lc_abs(beta) * lc_abs(yv) + 1e-300L;
    }
    free(acc);
    free(sa);
}

static void test_operator_matrix(sps_scalar t)
{
    const int n = 23, m = 17;
    hmat a = rand_mat(t, n, m);
    sps_matrix A = NULL, Acoo = NULL;
    if (!TU_OK(ctx, sps_matrix_from_csr(ctx, n, m, a.rowptr, a.col, a.val, t, &A))) { hmat_free(&a); return; }
    TU_OK(ctx, sps_matrix_convert(A, SPS_FMT_COO, NULL, &Acoo));
    sps_matrix mats[2] = {A, Acoo};
    lc *ref = tu_xcalloc(64, sizeof *ref);
    long double *scale = tu_xcalloc(64, sizeof *scale);
    void *out = tu_xcalloc(64, ssz(t));
    for (int f = 0; f < 2; f++) {
        sps_operator op = NULL;
        if (!TU_OK(ctx, sps_operator_from_matrix(mats[f], &op))) continue;
        sps_index on = -1, om = -1;
        TU_CHECK(sps_operator_size(op, &on, &om) == SPS_OK && on == n && om == m, "operator size %dx%d", (int)on, (int)om);
        TU_CHECK(sps_operator_scalar(op) == t, "operator scalar");
        for (int mode = 0; mode < 2; mode++) {
            const int nin = mode ? n : m, nout = mode ? m : n;
            void *xh = rand_vals(t, (size_t)nin), *yh = rand_vals(t, (size_t)nout);
            sps_vector x = NULL, y = NULL;
            sps_vector_from_host(ctx, nin, t, xh, &x);
            sps_vector_from_host(ctx, nout, t, yh, &y);
            unsigned char al[16], be[16];
            lc av, bv;
            rand_scalar(t, al, &av);
            rand_scalar(t, be, &bv);
            char what[96];
            /* alpha, beta given */
            TU_OK(ctx, sps_operator_apply(op, (sps_op_mode)mode, al, x, be, y));
            sps_vector_get(y, out);
            ref_apply(t, &a, (sps_op_mode)mode, av, xh, bv, yh, ref, scale);
            snprintf(what, sizeof what, "%s operator apply %s (alpha, beta)", f ? "coo" : "csr", mode ? "T" : "N");
            check_vals(what, t, (size_t)nout, out, ref, scale, 4 * (sqrt((double)n) + 2));
            /* NULL alpha (1) and beta (0) with a NaN y */
            tu_fill_nan(t, (size_t)nout, out);
            sps_vector_set(y, out);
            TU_OK(ctx, sps_operator_apply(op, (sps_op_mode)mode, NULL, x, NULL, y));
            sps_vector_get(y, out);
            ref_apply(t, &a, (sps_op_mode)mode, lc_make(1, 0), xh, lc_make(0, 0), NULL, ref, scale);
            snprintf(what, sizeof what, "%s operator apply %s (NULL, NULL, NaN y)", f ? "coo" : "csr", mode ? "T" : "N");
            check_vals(what, t, (size_t)nout, out, ref, scale, 4 * (sqrt((double)n) + 2));
            /* wrong sizes: x and y swapped */
            sps_context_clear_error(ctx);
            sps_status s = sps_operator_apply(op, (sps_op_mode)mode, NULL, y, NULL, x);
            TU_CHECK(s == SPS_ERR_ARG && contains(sps_context_error(ctx), "17") && contains(sps_context_error(ctx), "23"),
                     "apply with swapped sizes: %s '%s'", sps_status_name(s), sps_context_error(ctx));
            sps_vector_destroy(x);
            sps_vector_destroy(y);
            free(xh);
            free(yh);
        }
        /* bad mode, wrong type, NULL vectors */
        sps_vector x = NULL, y = NULL, xw = NULL;
        sps_vector_create(ctx, m, t, &x);
        sps_vector_create(ctx, n, t, &y);
        sps_vector_create(ctx, m, t == SPS_F64 ? SPS_F32 : SPS_F64, &xw);
        TU_CHECK(sps_operator_apply(op, (sps_op_mode)5, NULL, x, NULL, y) == SPS_ERR_ARG, "bad mode");
        TU_CHECK(sps_operator_apply(op, SPS_OP_N, NULL, xw, NULL, y) == SPS_ERR_ARG &&
                     contains(sps_context_error(ctx), "type"),
                 "wrong vector type: '%s'", sps_context_error(ctx));
        TU_CHECK(sps_operator_apply(op, SPS_OP_N, NULL, NULL, NULL, y) == SPS_ERR_ARG &&
                     sps_operator_apply(op, SPS_OP_N, NULL, x, NULL, NULL) == SPS_ERR_ARG &&
                     sps_operator_apply(NULL, SPS_OP_N, NULL, x, NULL, y) == SPS_ERR_ARG,
                 "apply NULL");
        sps_vector_destroy(x);
        sps_vector_destroy(y);
        sps_vector_destroy(xw);
        sps_operator_destroy(op);
    }
    /* x == y on a square operator */
    {
        sps_matrix S = NULL;
        sps_operator op = NULL;
        sps_vector v = NULL;
        sps_matrix_generate(ctx, "poisson2d:3", t, &S);
        sps_operator_from_matrix(S, &op);
        sps_vector_create(ctx, 9, t, &v);
        sps_context_clear_error(ctx);
        sps_status s = sps_operator_apply(op, SPS_OP_N, NULL, v, NULL, v);
        TU_CHECK(s == SPS_ERR_ARG && sps_context_error(ctx)[0], "apply with x == y: %s '%s'", sps_status_name(s),
                 sps_context_error(ctx));
        sps_vector_destroy(v);
        sps_operator_destroy(op);
        sps_matrix_destroy(S);
    }
    sps_operator dummy = NULL;
    TU_CHECK(sps_operator_from_matrix(NULL, &dummy) == SPS_ERR_ARG && sps_operator_from_matrix(A, NULL) == SPS_ERR_ARG,
             "from_matrix NULL");
    TU_CHECK(sps_operator_size(NULL, NULL, NULL) == SPS_ERR_ARG, "size NULL");
    (void)sps_operator_scalar(NULL);
    sps_operator_destroy(NULL);
    sps_matrix_destroy(A);
    sps_matrix_destroy(Acoo);
    hmat_free(&a);
    free(ref);
    free(scale);
    free(out);
    sps_context_clear_error(ctx);
}

/* Shell operator: y = M x with a dense user matrix M (n x m), plus M^T. */
typedef struct {
    sps_scalar t;
    int n, m;
    void *M;      /* n*m row-major */
    int calls, calls_t;
    sps_status fail;
    int fail_inside; /* fail through a library call that records its own message */
} shell_user;
static sps_status shell_mul(shell_user *u, int trans, sps_vector x, sps_vector y)
{
    const int nout = trans ? u->m : u->n, nin = trans ? u->n : u->m;
    if (sps_vector_size(x) != nin || sps_vector_size(y) != nout) return SPS_ERR_ARG;
    const void *xd = sps_vector_data(x);
    void *yd = sps_vector_data(y);
    for (int o = 0; o < nout; o++) {
        long double re = 0, im = 0;
        for (int i = 0; i < nin; i++) {
            lc a = ld(u->t, u->M, trans ? (size_t)i * u->m + o : (size_t)o * u->m + i), xv = ld(u->t, xd, (size_t)i);
            lc p = lc_mul(a, xv);
            re += p.re;
            im += p.im;
        }
        tu_put(u->t, yd, (size_t)o, (double)re, (double)im);
    }
    return SPS_OK;
}
static sps_status shell_apply(void *user, sps_vector x, sps_vector y)
{
    shell_user *u = user;
    u->calls++;
    if (u->fail_inside) return sps_vector_copy(x, y); /* sizes differ: the library's own message */
    if (u->fail != SPS_OK) return u->fail;
    return shell_mul(u, 0, x, y);
}
static sps_status shell_apply_t(void *user, sps_vector x, sps_vector y)
{
    shell_user *u = user;
    u->calls_t++;
    return shell_mul(u, 1, x, y);
}

static void test_operator_shell(sps_scalar t)
{
    const int n = 9, m = 6;
    shell_user u = {t, n, m, rand_vals(t, (size_t)n * m), 0, 0, SPS_OK, 0};
    hmat a = {n, m, n * m, tu_xcalloc(n + 1, sizeof(sps_index)), tu_xcalloc((size_t)n * m, sizeof(sps_index)), u.M};
    for (int i = 0; i < n; i++) {
        a.rowptr[i + 1] = (i + 1) * m;
        for (int j = 0; j < m; j++) a.col[i * m + j] = j;
    }
    sps_operator op = NULL, opn = NULL;
    TU_OK(ctx, sps_operator_shell(ctx, n, m, t, shell_apply, shell_apply_t, &u, &op));
    TU_OK(ctx, sps_operator_shell(ctx, n, m, t, shell_apply, NULL, &u, &opn));
    lc ref[16];
    long double scale[16];
    void *out = tu_xcalloc(16, ssz(t));
    sps_index on = 0, om = 0;
    TU_CHECK(op && sps_operator_size(op, &on, &om) == SPS_OK && on == n && om == m && sps_operator_scalar(op) == t,
             "shell size/type");
    /* alternate modes so the internal temporary changes size (n <-> m) */
    for (int rep = 0; rep < 2 && op; rep++)
        for (int mode = 0; mode < 2; mode++) {
            const int nin = mode ? n : m, nout = mode ? m : n;
            void *xh = rand_vals(t, (size_t)nin), *yh = rand_vals(t, (size_t)nout);
            sps_vector x = NULL, y = NULL;
            sps_vector_from_host(ctx, nin, t, xh, &x);
            sps_vector_from_host(ctx, nout, t, yh, &y);
            unsigned char al[16], be[16];
            lc av, bv;
            rand_scalar(t, al, &av);
            rand_scalar(t, be, &bv);
            char what[80];
            TU_OK(ctx, sps_operator_apply(op, (sps_op_mode)mode, al, x, be, y));
            sps_vector_get(y, out);
            ref_apply(t, &a, (sps_op_mode)mode, av, xh, bv, yh, ref, scale);
            snprintf(what, sizeof what, "shell apply %s alpha,beta (rep %d)", mode ? "T" : "N", rep);
            check_vals(what, t, (size_t)nout, out, ref, scale, 4 * (sqrt((double)m) + 2));
            /* plain: y = op(A) x, NaN y */
            tu_fill_nan(t, (size_t)nout, out);
            sps_vector_set(y, out);
            TU_OK(ctx, sps_operator_apply(op, (sps_op_mode)mode, NULL, x, NULL, y));
            sps_vector_get(y, out);
            ref_apply(t, &a, (sps_op_mode)mode, lc_make(1, 0), xh, lc_make(0, 0), NULL, ref, scale);
            snprintf(what, sizeof what, "shell apply %s plain (rep %d)", mode ? "T" : "N", rep);
            check_vals(what, t, (size_t)nout, out, ref, scale, 4 * (sqrt((double)m) + 2));
            /* alpha given, beta 0, NaN y: y not read */
            tu_fill_nan(t, (size_t)nout, out);
            sps_vector_set(y, out);
            TU_OK(ctx, sps_operator_apply(op, (sps_op_mode)mode, al, x, NULL, y));
            sps_vector_get(y, out);
            ref_apply(t, &a, (sps_op_mode)mode, av, xh, lc_make(0, 0), NULL, ref, scale);
            snprintf(what, sizeof what, "shell apply %s alpha, beta 0, NaN y", mode ? "T" : "N");
            check_vals(what, t, (size_t)nout, out, ref, scale, 4 * (sqrt((double)m) + 2));
            /* no transpose callback */
            if (mode == 1) {
                const int before = u.calls + u.calls_t;
                sps_status s = sps_operator_apply(opn, SPS_OP_T, NULL, x, NULL, y);
                TU_CHECK(s == SPS_ERR_UNSUPPORTED && sps_context_error(ctx)[0] && u.calls + u.calls_t == before,
                         "shell without transpose: %s '%s'", sps_status_name(s), sps_context_error(ctx));
                s = sps_operator_apply(opn, SPS_OP_T, al, x, be, y);
                TU_CHECK(s == SPS_ERR_UNSUPPORTED, "shell without transpose (alpha, beta): %s", sps_status_name(s));
                sps_context_clear_error(ctx);
            }
            sps_vector_destroy(x);
            sps_vector_destroy(y);
            free(xh);
            free(yh);
        }
    TU_CHECK(u.calls == 6 && u.calls_t == 6, "callbacks called %d/%d times, want 6/6", u.calls, u.calls_t);
    /* a failing callback: its status comes back with a message (plain and scaled paths) */
    {
        sps_vector x = NULL, y = NULL;
        sps_vector_create(ctx, m, t, &x);
        sps_vector_create(ctx, n, t, &y);
        u.fail = SPS_ERR_NUMERIC;
        sps_context_clear_error(ctx);
        sps_status s = sps_operator_apply(op, SPS_OP_N, NULL, x, NULL, y);
        TU_CHECK(s == SPS_ERR_NUMERIC && contains(sps_context_error(ctx), "SPS_ERR_NUMERIC"),
                 "failing callback (plain): %s '%s'", sps_status_name(s), sps_context_error(ctx));
        sps_context_clear_error(ctx);
        unsigned char two[16];
        lc tv;
        rand_scalar(t, two, &tv);
        s = sps_operator_apply(op, SPS_OP_N, two, x, two, y);
        TU_CHECK(s == SPS_ERR_NUMERIC && contains(sps_context_error(ctx), "SPS_ERR_NUMERIC"),
                 "failing callback (scaled): %s '%s'", sps_status_name(s), sps_context_error(ctx));
        /* an older, unrelated error must not stand in for the callback's failure */
        sps_vector junk = NULL;
        sps_vector_create(ctx, -9, t, &junk);
        s = sps_operator_apply(op, SPS_OP_N, NULL, x, NULL, y);
        TU_CHECK(s == SPS_ERR_NUMERIC && contains(sps_context_error(ctx), "callback") &&
                     sps_context_last_status(ctx) == SPS_ERR_NUMERIC,
                 "failing callback after an unrelated error: %s '%s'", sps_status_name(s), sps_context_error(ctx));
        u.fail = SPS_OK;
        /* a failure the callback's own library call recorded keeps its message */
        u.fail_inside = 1;
        for (int k = 0; k < 2; k++) {
            sps_context_clear_error(ctx);
            s = sps_operator_apply(op, SPS_OP_N, k ? two : NULL, x, k ? two : NULL, y);
            TU_CHECK(s == SPS_ERR_ARG && contains(sps_context_error(ctx), "sizes differ"),
                     "callback failing inside the library (%s): %s '%s'", k ? "scaled" : "plain", sps_status_name(s),
                     sps_context_error(ctx));
        }
        u.fail_inside = 0;
        /* success after an earlier error leaves that error's status alone */
        sps_vector_create(ctx, -9, t, &junk);
        TU_OK(NULL, sps_operator_apply(op, SPS_OP_N, NULL, x, NULL, y));
        TU_CHECK(sps_context_last_status(ctx) == SPS_ERR_ARG && contains(sps_context_error(ctx), "-9"),
                 "successful apply kept the earlier error: %s '%s'", sps_status_name(sps_context_last_status(ctx)),
                 sps_context_error(ctx));
        /* size checks happen before the callback */
        const int before = u.calls;
        s = sps_operator_apply(op, SPS_OP_N, NULL, y, NULL, x);
        TU_CHECK(s == SPS_ERR_ARG && u.calls == before, "shell size mismatch: %s", sps_status_name(s));
        sps_vector_destroy(x);
        sps_vector_destroy(y);
    }
    /* bad construction */
    sps_operator bad = (sps_operator)&u;
    TU_CHECK(sps_operator_shell(ctx, n, m, t, NULL, NULL, &u, &bad) == SPS_ERR_ARG && bad == NULL, "shell NULL apply");
    TU_CHECK(sps_operator_shell(ctx, -1, m, t, shell_apply, NULL, &u, &bad) == SPS_ERR_ARG, "shell negative size");
    TU_CHECK(sps_operator_shell(ctx, n, m, (sps_scalar)8, shell_apply, NULL, &u, &bad) == SPS_ERR_ARG, "shell bad type");
    TU_CHECK(sps_operator_shell(NULL, n, m, t, shell_apply, NULL, &u, &bad) == SPS_ERR_ARG, "shell NULL ctx");
    TU_CHECK(sps_operator_shell(ctx, n, m, t, shell_apply, NULL, &u, NULL) == SPS_ERR_ARG, "shell NULL out");
    sps_operator_destroy(op);
    sps_operator_destroy(opn);
    free(a.rowptr);
    free(a.col);
    free(u.M);
    free(out);
    sps_context_clear_error(ctx);
}

/* A NULL output pointer with a valid context is SPS_ERR_ARG, and (types.h: on failure the
 * context keeps a message saying what failed) a message naming the call; these returned the
 * status alone.  Each call starts from a cleared error, so the message is its own. */
static void test_null_outputs(void)
{
    const sps_index rowptr[2] = {0, 1}, col[1] = {0};
    const double val[4] = {1, 0, 0, 0};
    sps_vector x = NULL;
    TU_OK(ctx, sps_vector_create(ctx, 3, SPS_F64, &x));
#define NULL_OUT(call, msg)                                                                                    \
    do {                                                                                                       \
        sps_context_clear_error(ctx);                                                                          \
        const sps_status st_ = (call);                                                                         \
        TU_CHECK(st_ == SPS_ERR_ARG && contains(sps_context_error(ctx), (msg)),                               \
                 "%s: %s '%s' (want SPS_ERR_ARG with '%s')", #call, sps_status_name(st_), sps_context_error(ctx), \
                 (msg));                                                                                       \
    } while (0)
    NULL_OUT(sps_matrix_from_csr_entries(ctx, 1, 1, rowptr, col, val, sps_entry_quaternion(), SPS_F64, NULL),
             "sps_matrix_from_csr_entries: NULL output matrix");
    NULL_OUT(sps_matrix_from_coo_entries(ctx, 1, 1, 1, rowptr, col, val, sps_entry_quaternion(), SPS_F64, NULL),
             "sps_matrix_from_coo_entries: NULL output matrix");
    NULL_OUT(sps_matrix_from_csr(ctx, 1, 1, rowptr, col, val, SPS_F64, NULL), "sps_matrix_from_csr: NULL output");
    NULL_OUT(sps_matrix_from_coo(ctx, 1, 1, 1, rowptr, col, val, SPS_F64, NULL), "sps_matrix_from_coo: NULL output");
    NULL_OUT(sps_matrix_generate(ctx, "poisson2d:4", SPS_F64, NULL), "sps_matrix_generate: NULL output");
    NULL_OUT(sps_vector_create(ctx, 3, SPS_F64, NULL), "sps_vector_create: NULL output");
    NULL_OUT(sps_operator_shell(ctx, 3, 3, SPS_F64, shell_apply, NULL, NULL, NULL), "sps_operator_shell: NULL output");
    NULL_OUT(sps_vector_read_mtx(ctx, "v.mtx", SPS_F64, NULL), "sps_vector_read_mtx: NULL output vector");
    NULL_OUT(sps_matrix_read_mtx(ctx, "a.mtx", SPS_F64, NULL), "sps_matrix_read_mtx: NULL output matrix");
    sps_vector got = x;
    NULL_OUT(sps_vector_read_mtx(ctx, NULL, SPS_F64, &got), "sps_vector_read_mtx: NULL path");
    TU_CHECK(got == NULL, "sps_vector_read_mtx with a NULL path clears its output");
    NULL_OUT(sps_vector_read_mtx_n(ctx, NULL, SPS_F64, 3, &got), "sps_vector_read_mtx: NULL path");
    NULL_OUT(sps_vector_copy(x, NULL), "sps_vector_copy: NULL vector y");
    NULL_OUT(sps_vector_copy(NULL, x), "sps_vector_copy: NULL vector x");
#undef NULL_OUT
    sps_vector_destroy(x);
    sps_context_clear_error(ctx);
}

/* ------------------------------------------------------------------ vector Matrix Market */
static void test_vector_mtx(sps_scalar t)
{
    const int n = 37;
    void *h = tu_xcalloc(n, ssz(t));
    for (int i = 0; i < n; i++) {
        double e = single(t) ? tu_rng_range(&rng, -30, 30) : tu_rng_range(&rng, -300, 300);
        tu_put(t, h, (size_t)i, tu_rng_range(&rng, -1, 1) * pow(10, e), tu_rng_range(&rng, -1, 1) * pow(10, -e));
    }
    tu_put(t, h, 0, -0.0, 1.0 / 3);
    tu_put(t, h, 1, single(t) ? 1.4e-45 : 4.9406564584124654e-324, -0.0);
    char path[640];
    snprintf(path, sizeof path, "%s/v_%s.mtx", tmpdir_path, tn(t));
    sps_vector v = NULL, w = NULL;
    void *back = tu_xcalloc(n, ssz(t));
    if (TU_OK(ctx, sps_vector_from_host(ctx, n, t, h, &v)) && TU_OK(ctx, sps_vector_write_mtx(v, path)) &&
        TU_OK(ctx, sps_vector_read_mtx(ctx, path, t, &w))) {
        TU_CHECK(sps_vector_size(w) == n && sps_vector_scalar(w) == t, "read vector facts");
        sps_vector_get(w, back);
        TU_CHECK(memcmp(back, h, (size_t)n * ssz(t)) == 0, "vector Matrix Market round trip [%s] bitwise", tn(t));
        sps_vector_destroy(w);
        w = NULL;
        /* complex file read as real: complex vector of that precision; real file read as complex: zero imaginary */
        const sps_scalar flip = cplx(t) ? (single(t) ? SPS_F32 : SPS_F64) : (single(t) ? SPS_C32 : SPS_C64);
        if (TU_OK(ctx, sps_vector_read_mtx(ctx, path, flip, &w))) {
            const sps_scalar got = sps_vector_scalar(w);
            TU_CHECK(got == (cplx(t) ? t : flip), "%s file read with %s gives %s", tn(t), tn(flip), tn(got));
            void *b2 = tu_xcalloc(n, ssz(got));
            sps_vector_get(w, b2);
            int ok = 1;
            for (int i = 0; i < n; i++) {
                lc a = ld(t, h, (size_t)i), b = ld(got, b2, (size_t)i);
                if (a.re != b.re || a.im != b.im) ok = 0;
            }
            TU_CHECK(ok, "%s file read with %s: values", tn(t), tn(flip));
            free(b2);
            sps_vector_destroy(w);
        }
    }
    remove(path);
    /* an empty vector */
    {
        sps_vector e = NULL, e2 = NULL;
        char ep[640];
        snprintf(ep, sizeof ep, "%s/empty_%s.mtx", tmpdir_path, tn(t));
        if (TU_OK(ctx, sps_vector_create(ctx, 0, t, &e)) && TU_OK(ctx, sps_vector_write_mtx(e, ep)) &&
            TU_OK(ctx, sps_vector_read_mtx(ctx, ep, t, &e2)))
            TU_CHECK(sps_vector_size(e2) == 0 && sps_vector_scalar(e2) == t, "empty vector round trip");
        remove(ep);
        sps_vector_destroy(e);
        sps_vector_destroy(e2);
    }
    /* a coordinate 1 x n file (duplicates summed) */
    snprintf(path, sizeof path, "%s/vc.mtx", tmpdir_path);
    FILE *f = fopen(path, "w");
    if (f) {
        fputs("%%MatrixMarket matrix coordinate real general\n1 4 3\n1 2 1.5\n1 4 -2\n1 2 0.25\n", f);
        fclose(f);
        w = NULL;
        if (TU_OK(ctx, sps_vector_read_mtx(ctx, path, SPS_F64, &w))) {
            double b[4] = {9, 9, 9, 9};
            sps_vector_get(w, b);
            TU_CHECK(sps_vector_size(w) == 4 && b[0] == 0 && b[1] == 1.75 && b[2] == 0 && b[3] == -2,
                     "1x4 coordinate vector: %g %g %g %g", b[0], b[1], b[2], b[3]);
            sps_vector_destroy(w);
        }
        f = fopen(path, "w");
        fputs("%%MatrixMarket matrix coordinate real general\n2 3 1\n1 2 1.5\n", f);
        fclose(f);
        w = (sps_vector)&f;
        sps_status s = sps_vector_read_mtx(ctx, path, SPS_F64, &w);
        TU_CHECK(s == SPS_ERR_ARG && w == NULL && contains(sps_context_error(ctx), "2 x 3"),
                 "2x3 file as vector: %s '%s'", sps_status_name(s), sps_context_error(ctx));
        /* past the range: a finite file value beyond f32's, coordinate duplicates summed beyond f64's;
           refused (SPS_ERR_NUMERIC, naming the entry), never an Inf in the vector */
        f = fopen(path, "w");
        fputs("%%MatrixMarket matrix array real general\n2 1\n1e300\n1\n", f);
        fclose(f);
        w = (sps_vector)&f;
        s = sps_vector_read_mtx(ctx, path, SPS_F32, &w);
        TU_CHECK(s == SPS_ERR_NUMERIC && w == NULL && contains(sps_context_error(ctx), "entry 1 = 1e+300") &&
                     contains(sps_context_error(ctx), "f32"),
                 "1e300 as f32: %s '%s'", sps_status_name(s), sps_context_error(ctx));
        s = sps_vector_read_mtx(ctx, path, SPS_F64, &w);
        TU_CHECK(s == SPS_OK, "1e300 as f64: %s '%s'", sps_status_name(s), sps_context_error(ctx));
        sps_vector_destroy(w);
        f = fopen(path, "w");
        fputs("%%MatrixMarket matrix coordinate complex general\n3 1 3\n2 1 0 1e308\n2 1 0 1e308\n3 1 1 1\n", f);
        fclose(f);
        w = (sps_vector)&f;
        s = sps_vector_read_mtx(ctx, path, SPS_C64, &w);
        TU_CHECK(s == SPS_ERR_NUMERIC && w == NULL &&
                     contains(sps_context_error(ctx), "entry 2 (its duplicates summed) = infi"),
                 "duplicates past f64: %s '%s'", sps_status_name(s), sps_context_error(ctx));
        remove(path);
    }
    /* errors */
    w = (sps_vector)&f;
    sps_status s = sps_vector_read_mtx(ctx, "/nonexistent-dir-for-sps-test/v.mtx", t, &w);
    TU_CHECK(s == SPS_ERR_IO && w == NULL, "read missing vector file: %s", sps_status_name(s));
    s = sps_vector_write_mtx(v, "/nonexistent-dir-for-sps-test/v.mtx");
    TU_CHECK(s == SPS_ERR_IO && contains(sps_context_error(ctx), "nonexistent-dir-for-sps-test"),
             "write vector to a missing directory: %s '%s'", sps_status_name(s), sps_context_error(ctx));
    TU_CHECK(sps_vector_write_mtx(NULL, path) == SPS_ERR_ARG && sps_vector_write_mtx(v, NULL) == SPS_ERR_ARG,
             "write vector NULL");
    TU_CHECK(sps_vector_read_mtx(NULL, path, t, &w) == SPS_ERR_ARG && sps_vector_read_mtx(ctx, NULL, t, &w) == SPS_ERR_ARG &&
                 sps_vector_read_mtx(ctx, path, t, NULL) == SPS_ERR_ARG,
             "read vector NULL");
    sps_vector_destroy(v);
    free(h);
    free(back);
    sps_context_clear_error(ctx);
}

/* Entry descriptors: dimensions, names, validity; the public API carries them
 * (matrix info; sps_matrix_from_csr_entries refuses what has no kernels). */
static void test_entries(void)
{
    const sps_entry_desc sc = sps_entry_scalar(), q = sps_entry_quaternion(), b3 = sps_entry_block(3);
    TU_CHECK(sps_entry_valid(sc) && sps_entry_dim(sc) == 1 && sps_entry_values(sc) == 1 &&
                 strcmp(sps_entry_name(sc), "scalar") == 0,
             "scalar entry: dim %d values %d name %s", sps_entry_dim(sc), sps_entry_values(sc), sps_entry_name(sc));
    TU_CHECK(sps_entry_valid(q) && sps_entry_dim(q) == 4 && sps_entry_values(q) == 4 &&
                 strcmp(sps_entry_name(q), "quaternion") == 0,
             "quaternion entry: dim %d values %d name %s", sps_entry_dim(q), sps_entry_values(q), sps_entry_name(q));
    for (int b = 0; b <= 9; b++) {
        const sps_entry_desc e = sps_entry_block(b);
        const int ok = b >= 2 && b <= 8;
        char want[16];
        snprintf(want, sizeof want, "block%dx%d", b, b);
        TU_CHECK(sps_entry_valid(e) == ok && sps_entry_dim(e) == (ok ? b : 0) && sps_entry_values(e) == (ok ? b * b : 0) &&
                     strcmp(sps_entry_name(e), ok ? want : "?") == 0,
                 "block %d: valid %d dim %d values %d name %s", b, sps_entry_valid(e), sps_entry_dim(e),
                 sps_entry_values(e), sps_entry_name(e));
    }
    const sps_entry_desc zero = {0, 0};
    TU_CHECK(sps_entry_valid(zero) && sps_entry_dim(zero) == 1, "a zeroed descriptor is the scalar entry");

    /* 2 x 2 identity, as scalars and as the other entry types */
    const sps_index rowptr[3] = {0, 1, 2}, col[2] = {0, 1};
    const double val[2 * 16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    sps_matrix A = NULL;
    TU_CHECK(sps_matrix_from_csr_entries(ctx, 2, 2, rowptr, col, val, sc, SPS_F64, &A) == SPS_OK && A, "scalar entries: %s",
             sps_context_error(ctx));
    sps_matrix_info_t info;
    memset(&info, 0x5a, sizeof info);
    TU_CHECK(A && sps_matrix_info(A, &info) == SPS_OK && info.entry.kind == SPS_ENTRY_SCALAR && info.rows == 2,
             "info.entry of a scalar matrix: kind %d", (int)info.entry.kind);
    sps_matrix_destroy(A);
    /* compound entries: bcsr on the CPU (their products: test_compound.c) */
    const sps_entry_desc kinds[2] = {b3, q};
    for (int i = 0; i < 2; i++) {
        A = NULL;
        TU_CHECK(sps_matrix_from_csr_entries(ctx, 2, 2, rowptr, col, val, kinds[i], SPS_F64, &A) == SPS_OK && A,
                 "%s entries: %s", sps_entry_name(kinds[i]), sps_context_error(ctx));
        TU_CHECK(A && sps_matrix_info(A, &info) == SPS_OK && info.entry.kind == kinds[i].kind && info.rows == 2 &&
                     info.format == SPS_FMT_BCSR && strcmp(info.format_name, "bcsr") == 0,
                 "info of a %s matrix: kind %d format %s", sps_entry_name(kinds[i]), (int)info.entry.kind,
                 info.format_name);
        sps_matrix_destroy(A);
    }
    A = (sps_matrix)1;
    TU_CHECK(sps_matrix_from_csr_entries(ctx, 2, 2, rowptr, col, val, sps_entry_block(9), SPS_F64, &A) == SPS_ERR_ARG &&
                 !A && strstr(sps_context_error(ctx), "2..8"),
             "invalid block size: %s", sps_context_error(ctx));
}

int main(void)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 4242);
    const char *tmp = getenv("TMPDIR");
    snprintf(tmpdir_path, sizeof tmpdir_path, "%s/sps_test_core_%ld", tmp && tmp[0] ? tmp : "/tmp", (long)getpid());
    if (mkdir(tmpdir_path, 0700) != 0) {
        fprintf(stderr, "cannot create %s\n", tmpdir_path);
        return 1;
    }
    test_context();
    test_errors();
    test_names();
    test_entries();
    test_vector_errors();
    test_null_outputs();
    /* the readers' memory limit as a caller sees it: a positive value itself, negative none (0),
       0 the default (half the physical memory where the system says it) */
    TU_CHECK(sps_read_memory_limit(12345) == 12345 && sps_read_memory_limit(-1) == 0 &&
                 sps_read_memory_limit(0) >= 0,
             "sps_read_memory_limit: %lld %lld %lld", (long long)sps_read_memory_limit(12345),
             (long long)sps_read_memory_limit(-1), (long long)sps_read_memory_limit(0));
    const int sizes[4] = {0, 1, 7, 1000};
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        for (int si = 0; si < 4; si++) {
            test_vector_basics(t, sizes[si]);
            test_vector_ops(t, sizes[si]);
        }
        test_operator_matrix(t);
        test_operator_shell(t);
        test_vector_mtx(t);
    }
    rmdir(tmpdir_path);
    sps_context_destroy(ctx);
    return tu_finish();
}
