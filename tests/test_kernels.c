/* Unit tests of the CPU kernels (kernels/cpu): BLAS-1 and CSR/COO SpMV for
 * f32, f64, c32, c64, against naive reference loops in long double.
 *
 * Every output is poisoned with NaN before the kernel runs, so an entry the
 * kernel forgets to write is caught; inputs are fresh random data (tu_rng),
 * never all zero.  Tolerances: a few units of the type's roundoff times
 * sqrt(number of terms), relative to the sum of |terms|.  Reductions and the
 * chunked SpMV paths must give bit-identical results with 1, 2 and 3 threads.
 * Ends with "N passed, M failed". */
#include "formats/format.h"
#include "testutil.h"
#include "kernel_tables.h"
#include "kernels/launch.h"
#include "kernels/csr_rows.h"

#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static sps_context g_ctx;
static tu_rng g_rng;

static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};
static const sps_index sizes[5] = {0, 1, 7, 4097, 100003};

/* ------------------------------------------------------------------ long double complex helpers */
typedef struct { long double re, im; } lc;
static lc lc_make(long double re, long double im) { lc c = {re, im}; return c; }
static lc lc_add(lc a, lc b) { return lc_make(a.re + b.re, a.im + b.im); }
static lc lc_mul(lc a, lc b) { return lc_make(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
static lc lc_conj(lc a) { return lc_make(a.re, -a.im); }
static lc lc_div(lc a, lc b)
{
    long double d = b.re * b.re + b.im * b.im;
    return lc_make((a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d);
}
static long double lc_abs(lc a) { return sqrtl(a.re * a.re + a.im * a.im); }
/* |re| + |im|: within sqrt(2) of |a|, cheap; used for tolerance scales of long sums */
static long double lc_abs1(lc a) { return fabsl(a.re) + fabsl(a.im); }

static int cplx(sps_scalar t) { return sps_scalar_is_complex(t); }
static int single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }

static lc ld(sps_scalar t, const void *v, size_t i)
{
    switch (t) {
    case SPS_F32: return lc_make(((const float *)v)[i], 0);
    case SPS_F64: return lc_make(((const double *)v)[i], 0);
    case SPS_C32: return lc_make(((const float *)v)[2 * i], ((const float *)v)[2 * i + 1]);
    default: return lc_make(((const double *)v)[2 * i], ((const double *)v)[2 * i + 1]);
    }
}
/* A host coefficient as the kernel sees it: rounded to T, imaginary part dropped for real T. */
static lc coef_as_t(sps_scalar t, sps_cplx c)
{
    if (!cplx(t)) return lc_make(single(t) ? (long double)(float)c.re : (long double)c.re, 0);
    return single(t) ? lc_make((float)c.re, (float)c.im) : lc_make(c.re, c.im);
}
static sps_cplx rand_coef(sps_scalar t)
{
    double re = tu_rng_range(&g_rng, -2, 2), im = cplx(t) ? tu_rng_range(&g_rng, -2, 2) : 0.0;
    if (fabs(re) < 0.1) re += 0.5;
    return sps_cplx_make(re, im);
}

static void *xmalloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) { fprintf(stderr, "out of memory\n"); exit(2); }
    return p;
}
static void *rand_vec(sps_scalar t, size_t n)
{
    void *v = xmalloc(n * ssz(t));
    tu_fill_random(&g_rng, t, n, v);
    return v;
}
static void *nan_vec(sps_scalar t, size_t n)
{
    void *v = xmalloc(n * ssz(t));
    tu_fill_nan(t, n, v);
    return v;
}
static void *dup_vec(sps_scalar t, size_t n, const void *src)
{
    void *v = xmalloc(n * ssz(t));
    if (n) memcpy(v, src, n * ssz(t));
    return v;
}

/* Compare got[i] with ref[i]: |got - ref| <= f[i] * eps * scale[i] (f NULL: f0).
 * One aggregated check per call; prints the first offender. */
static void check_vec(const char *what, sps_scalar t, sps_index n, const void *got, const lc *ref,
                      const long double *scale, const double *f, double f0)
{
    const double eps = tu_eps(t);
    long bad = 0, first = -1;
    for (sps_index i = 0; i < n; i++) {
        lc g = ld(t, got, (size_t)i);
        long double d = lc_abs(lc_make(g.re - ref[i].re, g.im - ref[i].im));
        long double tol = (f ? f[i] : f0) * eps * scale[i];
        if (!(d <= tol)) { /* NaN fails */
            if (first < 0) first = i;
            bad++;
        }
    }
    if (bad) {
        lc g = ld(t, got, (size_t)first);
        TU_CHECK(0, "%s [%s n=%d]: %ld bad entries, first %ld: got (%.9g, %.9g), want (%.9Lg, %.9Lg), scale %.3Lg",
                 what, sps_scalar_name(t), (int)n, bad, first, (double)g.re, (double)g.im, ref[first].re,
                 ref[first].im, scale[first]);
    } else {
        TU_CHECK(1, "%s", what);
    }
}
/* Scalar (slot) comparison. */
static void check_val(const char *what, sps_scalar t, sps_index n, sps_cplx got, lc ref, long double scale, double f)
{
    long double d = lc_abs(lc_make(got.re - ref.re, got.im - ref.im));
    long double tol = f * tu_eps(t) * scale;
    TU_CHECK(d <= tol, "%s [%s n=%d]: got (%.17g, %.17g), want (%.17Lg, %.17Lg), |diff| %.3Lg > tol %.3Lg", what,
             sps_scalar_name(t), (int)n, got.re, got.im, ref.re, ref.im, d, tol);
}

/* ------------------------------------------------------------------ kernel table */
static void test_table(void)
{
    TU_CHECK_KERNEL_TABLES(sps_cpu, sps_cpu_backend);
}

/* ------------------------------------------------------------------ BLAS-1 */
static void test_fill_copy_scale(sps_scalar t, sps_index n)
{
    const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)n;
    lc *ref = xmalloc(N * sizeof *ref);
    long double *scale = xmalloc(N * sizeof *scale);
    char msg[64];

    /* fill: exact; a nonzero imaginary part is ignored for real types */
    sps_cplx a = sps_cplx_make(tu_rng_range(&g_rng, -3, 3), tu_rng_range(&g_rng, -3, 3));
    void *x = nan_vec(t, N);
    TU_CHECK(K->fill(sps_ex(g_ctx), n, a, x) == SPS_OK, "fill status");
    lc av = coef_as_t(t, a);
    for (size_t i = 0; i < N; i++) { ref[i] = av; scale[i] = 0; }
    check_vec("fill", t, n, x, ref, scale, NULL, 0);

    /* copy: bitwise */
    void *src = rand_vec(t, N);
    void *y = nan_vec(t, N);
    TU_CHECK(K->copy(sps_ex(g_ctx), n, src, y) == SPS_OK, "copy status");
    TU_CHECK(N == 0 || memcmp(src, y, N * ssz(t)) == 0, "copy [%s n=%d]: not bitwise equal", sps_scalar_name(t), (int)n);

    /* scale: x = a x */
    a = rand_coef(t);
    av = coef_as_t(t, a);
    memcpy(x, src, N * ssz(t));
    TU_CHECK(K->scale(sps_ex(g_ctx), n, a, x) == SPS_OK, "scale status");
    for (size_t i = 0; i < N; i++) {
        lc s = ld(t, src, i);
        ref[i] = lc_mul(av, s);
        scale[i] = lc_abs(av) * lc_abs(s);
    }
    check_vec("scale", t, n, x, ref, scale, NULL, 3);

    /* scale by 0 gives exact zeros (finite x) */
    memcpy(x, src, N * ssz(t));
    K->scale(sps_ex(g_ctx), n, sps_cplx_make(0, 0), x);
    for (size_t i = 0; i < N; i++) { ref[i] = lc_make(0, 0); scale[i] = 0; }
    snprintf(msg, sizeof msg, "scale by 0");
    check_vec(msg, t, n, x, ref, scale, NULL, 0);

    free(x);
    free(y);
    free(src);
    free(ref);
    free(scale);
}

static void test_axpby(sps_scalar t, sps_index n)
{
    const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)n;
    lc *ref = xmalloc(N * sizeof *ref);
    long double *scale = xmalloc(N * sizeof *scale);
    void *x = rand_vec(t, N), *y0 = rand_vec(t, N), *y = xmalloc(N * ssz(t));

    for (int variant = 0; variant < 3; variant++) {
        sps_cplx a = rand_coef(t), b = rand_coef(t);
        if (variant == 1) b = sps_cplx_make(0, 0);      /* y not read: poisoned y must not leak */
        if (variant == 2) a = sps_cplx_make(0, 0);      /* y = b y */
        lc av = coef_as_t(t, a), bv = coef_as_t(t, b);
        if (variant == 1) tu_fill_nan(t, N, y);
        else if (N) memcpy(y, y0, N * ssz(t));
        TU_CHECK(K->axpby(sps_ex(g_ctx), n, a, x, b, y) == SPS_OK, "axpby status");
        for (size_t i = 0; i < N; i++) {
            lc xi = ld(t, x, i), yi = variant == 1 ? lc_make(0, 0) : ld(t, y0, i);
            ref[i] = lc_add(lc_mul(av, xi), lc_mul(bv, yi));
            scale[i] = lc_abs(av) * lc_abs(xi) + lc_abs(bv) * lc_abs(yi);
        }
        check_vec(variant == 0 ? "axpby" : variant == 1 ? "axpby beta=0 (NaN y)" : "axpby alpha=0", t, n, y, ref,
                  scale, NULL, 4);
    }
    free(x);
    free(y0);
    free(y);
    free(ref);
    free(scale);
}

/* slots poisoned; only slots[out] may change */
static void poison_slots(sps_cplx *s, int k)
{
    for (int i = 0; i < k; i++) s[i] = sps_cplx_make(NAN, NAN);
}
static int other_slots_untouched(const sps_cplx *s, int k, int out)
{
    for (int i = 0; i < k; i++)
        if (i != out && !(isnan(s[i].re) && isnan(s[i].im))) return 0;
    return 1;
}

static void test_dot(sps_scalar t, sps_index n)
{
    const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)n;
    void *x = rand_vec(t, N), *y = rand_vec(t, N);
    sps_cplx slots[5];
    poison_slots(slots, 5);
    TU_CHECK(K->dot(sps_ex(g_ctx), n, x, y, slots, 3) == SPS_OK, "dot status");
    lc ref = lc_make(0, 0);
    long double scale = 0;
    for (size_t i = 0; i < N; i++) {
        lc xi = ld(t, x, i), yi = ld(t, y, i);
        ref = lc_add(ref, lc_mul(lc_conj(xi), yi)); /* x^H y */
        scale += lc_abs(xi) * lc_abs(yi);
    }
    check_val("dot x^H y", t, n, slots[3], ref, scale, 4 * (sqrt((double)n) + 2));
    TU_CHECK(other_slots_untouched(slots, 5, 3), "dot [%s n=%d] wrote other slots", sps_scalar_name(t), (int)n);
    if (!cplx(t)) TU_CHECK(slots[3].im == 0.0, "dot of real type has imaginary part %g", slots[3].im);

    /* the conjugation is on x: y^H x = conj(x^H y) */
    if (cplx(t) && n > 0) {
        sps_cplx s2[1];
        poison_slots(s2, 1);
        K->dot(sps_ex(g_ctx), n, y, x, s2, 0);
        check_val("dot y^H x = conj(x^H y)", t, n, s2[0], lc_conj(ref), scale, 4 * (sqrt((double)n) + 2));
        /* x^H x is real and equals ||x||^2 */
        K->dot(sps_ex(g_ctx), n, x, x, s2, 0);
        long double nn = 0;
        for (size_t i = 0; i < N; i++) { lc xi = ld(t, x, i); nn += xi.re * xi.re + xi.im * xi.im; }
        check_val("dot x^H x real", t, n, s2[0], lc_make(nn, 0), nn, 4 * (sqrt((double)n) + 2));
    }
    free(x);
    free(y);
}

/* Reference ||x|| in long double (range wide enough for 1e300^2 and 1e-300^2). */
static long double ref_nrm2(sps_scalar t, size_t n, const void *x)
{
    long double s = 0;
    for (size_t i = 0; i < n; i++) { lc v = ld(t, x, i); s += v.re * v.re + v.im * v.im; }
    return sqrtl(s);
}

static void test_nrm2(sps_scalar t, sps_index n)
{
    const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)n;
    const double f = 4 * (sqrt((double)n) + 2);
    void *x = rand_vec(t, N);
    sps_cplx slots[3];
    char what[96];

    poison_slots(slots, 3);
    TU_CHECK(K->nrm2(sps_ex(g_ctx), n, x, slots, 1) == SPS_OK, "nrm2 status");
    long double r = ref_nrm2(t, N, x);
    check_val("nrm2", t, n, slots[1], lc_make(r, 0), r, f);
    TU_CHECK(slots[1].im == 0.0 && other_slots_untouched(slots, 3, 1), "nrm2 [%s n=%d] slots", sps_scalar_name(t),
             (int)n);
    if (n == 0) TU_CHECK(slots[1].re == 0.0, "nrm2 of empty vector is %g", slots[1].re);
    if (n == 0) goto done;

    /* huge and tiny entries: the result is representable, so no overflow/underflow
       (f64: 1e300 and 1e-300; f32: 1e30 and 1e-30, whose squares leave float's range) */
    const double huge = single(t) ? 1e30 : 1e300, tiny = single(t) ? 1e-30 : 1e-300;
    const double mags[2] = {huge, tiny};
    for (int k = 0; k < 2; k++) {
        void *h = xmalloc(N * ssz(t));
        for (size_t i = 0; i < N; i++)
            tu_put(t, h, i, mags[k] * tu_rng_range(&g_rng, 0.5, 1.0) * (i % 2 ? -1 : 1),
               mags[k] * tu_rng_range(&g_rng, -1, 1));
        poison_slots(slots, 1);
        K->nrm2(sps_ex(g_ctx), n, h, slots, 0);
        r = ref_nrm2(t, N, h);
        snprintf(what, sizeof what, "nrm2 with entries ~%g", mags[k]);
        check_val(what, t, n, slots[0], lc_make(r, 0), r, f);
        free(h);
    }
    /* one huge entry among ordinary ones */
    {
        void *h = dup_vec(t, N, x);
        tu_put(t, h, N / 2, -huge, cplx(t) ? huge : 0.0);
        poison_slots(slots, 1);
        K->nrm2(sps_ex(g_ctx), n, h, slots, 0);
        r = ref_nrm2(t, N, h);
        check_val("nrm2 one huge entry", t, n, slots[0], lc_make(r, 0), r, f);
        /* Inf gives Inf, NaN gives NaN (a solver must not see a finite norm) */
        tu_put(t, h, N - 1, INFINITY, 0.0);
        K->nrm2(sps_ex(g_ctx), n, h, slots, 0);
        TU_CHECK(isinf(slots[0].re) && slots[0].re > 0, "nrm2 [%s n=%d] with Inf entry gave %g", sps_scalar_name(t),
                 (int)n, slots[0].re);
        tu_put(t, h, 0, NAN, 0.0);
        K->nrm2(sps_ex(g_ctx), n, h, slots, 0);
        TU_CHECK(isnan(slots[0].re), "nrm2 [%s n=%d] with NaN entry gave %g", sps_scalar_name(t), (int)n, slots[0].re);
        free(h);
    }
    /* nrm_inf: the largest modulus; one NaN anywhere (first, middle, last entry) gives NaN,
       since the solvers' max-norm test must not take a NaN residual for a small one */
    {
        long double want = 0;
        for (size_t i = 0; i < N; i++) want = fmaxl(want, lc_abs(ld(t, x, i)));
        poison_slots(slots, 1);
        K->nrm_inf(sps_ex(g_ctx), n, x, slots, 0);
        check_val("nrm_inf", t, n, slots[0], lc_make(want, 0), want, 4);
        const size_t at[3] = {0, N / 2, N - 1};
        for (int k = 0; k < 3; k++) {
            void *h = dup_vec(t, N, x);
            tu_put(t, h, at[k], NAN, 0.0);
            poison_slots(slots, 1);
            K->nrm_inf(sps_ex(g_ctx), n, h, slots, 0);
            TU_CHECK(isnan(slots[0].re), "nrm_inf [%s n=%d] with NaN at %zu gave %g", sps_scalar_name(t), (int)n,
                     at[k], slots[0].re);
            free(h);
        }
    }
    /* the smallest subnormals only */
    if (!single(t)) {
        void *h = xmalloc(N * ssz(t));
        for (size_t i = 0; i < N; i++) tu_put(t, h, i, 4.9406564584124654e-324 * (double)(1 + i % 3), 0.0);
        K->nrm2(sps_ex(g_ctx), n, h, slots, 0);
        r = ref_nrm2(t, N, h);
        /* the norm is itself subnormal: allow one unit of the subnormal spacing */
        TU_CHECK(fabsl(slots[0].re - r) <= 4.9406564584124654e-324L + 1e-12L * r, "nrm2 [%s n=%d] of subnormals: got %g want %Lg",
                 sps_scalar_name(t), (int)n, slots[0].re, r);
        free(h);
    }
done:
    free(x);
}

static void test_pmul(sps_scalar t, sps_index n)
{
    const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)n;
    void *d = rand_vec(t, N), *x = rand_vec(t, N), *y = nan_vec(t, N);
    lc *ref = xmalloc(N * sizeof *ref);
    long double *scale = xmalloc(N * sizeof *scale);
    TU_CHECK(K->pmul(sps_ex(g_ctx), n, d, x, y) == SPS_OK, "pmul status");
    for (size_t i = 0; i < N; i++) {
        ref[i] = lc_mul(ld(t, d, i), ld(t, x, i));
        scale[i] = lc_abs(ld(t, d, i)) * lc_abs(ld(t, x, i));
    }
    check_vec("pmul", t, n, y, ref, scale, NULL, 3);
    /* pmul_dot: the same y (bit for bit) and dot's x^H y of it (bit for bit: the same chunks) */
    void *y2 = nan_vec(t, N);
    sps_cplx slots[5], want[5];
    for (int k = 0; k < 5; k++) slots[k] = want[k] = sps_cplx_make(NAN, NAN);
    TU_CHECK(K->pmul_dot(sps_ex(g_ctx), n, d, x, y2, slots, 2) == SPS_OK, "pmul_dot status");
    K->dot(sps_ex(g_ctx), n, x, y, want, 2);
    TU_CHECK(!memcmp(y, y2, N * sps_scalar_size(t)) && !memcmp(&slots[2], &want[2], sizeof want[2]) &&
                 other_slots_untouched(slots, 5, 2),
             "pmul_dot [%s n=%d]: pmul then dot, bit for bit", sps_scalar_name(t), (int)n);
    free(y2);
    free(d);
    free(x);
    free(y);
    free(ref);
    free(scale);
}

/* axpy_s / xpay_s with coefficients sign * slots[num] / slots[den] (-1: 1). */
static void test_slot_updates(sps_scalar t, sps_index n)
{
    const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)n;
    sps_cplx slots[4];
    for (int i = 0; i < 4; i++) {
        double re = tu_rng_range(&g_rng, 0.5, 2.0) * (i % 2 ? -1 : 1);
        slots[i] = sps_cplx_make(re, cplx(t) ? tu_rng_range(&g_rng, -1.5, 1.5) : 0.0);
    }
    const sps_scoef cs[] = {{1.0, -1, -1}, {-1.0, -1, -1}, {1.0, 0, -1}, {-1.0, 2, 1},
                            {2.5, -1, 3},  {-0.5, 3, 2},   {1.0, 1, 1}};
    void *x = rand_vec(t, N), *y0 = rand_vec(t, N), *y = xmalloc(N * ssz(t));
    lc *ref = xmalloc(N * sizeof *ref);
    long double *scale = xmalloc(N * sizeof *scale);
    char what[96];
    for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
        lc num = cs[c].num >= 0 ? lc_make(slots[cs[c].num].re, slots[cs[c].num].im) : lc_make(1, 0);
        lc den = cs[c].den >= 0 ? lc_make(slots[cs[c].den].re, slots[cs[c].den].im) : lc_make(1, 0);
        lc cv = lc_div(num, den);
        cv = lc_make(cs[c].sign * cv.re, cs[c].sign * cv.im);
        for (int which = 0; which < 2; which++) {
            if (N) memcpy(y, y0, N * ssz(t));
            sps_status s = which == 0 ? K->axpy_s(sps_ex(g_ctx), n, slots, cs[c], x, y) : K->xpay_s(sps_ex(g_ctx), n, x, slots, cs[c], y);
            TU_CHECK(s == SPS_OK, "slot update status");
            for (size_t i = 0; i < N; i++) {
                lc xi = ld(t, x, i), yi = ld(t, y0, i);
                if (which == 0) { ref[i] = lc_add(yi, lc_mul(cv, xi)); scale[i] = lc_abs(yi) + lc_abs(cv) * lc_abs(xi); }
                else { ref[i] = lc_add(xi, lc_mul(cv, yi)); scale[i] = lc_abs(xi) + lc_abs(cv) * lc_abs(yi); }
            }
            snprintf(what, sizeof what, "%s c={%g,%d,%d}", which == 0 ? "axpy_s" : "xpay_s", cs[c].sign, cs[c].num,
                     cs[c].den);
            check_vec(what, t, n, y, ref, scale, NULL, 6);
        }
    }
    free(x);
    free(y0);
    free(y);
    free(ref);
    free(scale);
}

static void test_invert(sps_scalar t, sps_index n)
{
    const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)n;
    void *d = xmalloc(N * ssz(t));
    for (size_t i = 0; i < N; i++) {
        double re = tu_rng_range(&g_rng, 0.25, 2.0) * (i % 3 ? 1 : -1);
        double im = cplx(t) ? tu_rng_range(&g_rng, -2, 2) : 0.0;
        tu_put(t, d, i, re, im);
    }
    if (cplx(t) && N > 1) tu_put(t, d, 1, 0.0, -0.75); /* purely imaginary is not zero */
    void *d0 = dup_vec(t, N, d);
    lc *ref = xmalloc(N * sizeof *ref);
    long double *scale = xmalloc(N * sizeof *scale);
    sps_cplx slots[3];
    poison_slots(slots, 3);
    TU_CHECK(K->invert(sps_ex(g_ctx), n, d, slots, 2) == SPS_OK, "invert status");
    TU_CHECK(slots[2].re == 0.0 && slots[2].im == 0.0, "invert [%s n=%d]: slot %g for a good vector",
             sps_scalar_name(t), (int)n, slots[2].re);
    TU_CHECK(other_slots_untouched(slots, 3, 2), "invert wrote other slots");
    for (size_t i = 0; i < N; i++) {
        ref[i] = lc_div(lc_make(1, 0), ld(t, d0, i));
        scale[i] = lc_abs(ref[i]);
    }
    check_vec("invert", t, n, d, ref, scale, NULL, 4);

    /* bad entries: slot = 1-based index of the first one, d untouched */
    if (N > 0) {
        const double tiny = single(t) ? 1e-39 : 1e-310; /* subnormal: 1 / it past the range */
        struct { size_t pos; double re, im; size_t pos2; double re2, im2; } cases[] = {
            {N - 1, 0.0, 0.0, N, 0, 0},                 /* zero, last */
            {0, NAN, 0.0, N, 0, 0},                     /* NaN, first */
            {N / 2, INFINITY, 0.0, N, 0, 0},            /* Inf */
            {N / 3, -0.0, 0.0, N - 1, NAN, 0.0},        /* -0 before a NaN */
            {N / 2, tiny, 0.0, N, 0, 0},                /* finite, its inverse not */
            {N / 2, 1.0, NAN, N, 0, 0},                 /* complex: NaN imaginary part */
            {N - 1, 1.0, -INFINITY, N, 0, 0},           /* complex: Inf imaginary part */
        };
        const int ncases = cplx(t) ? 7 : 5;
        for (int c = 0; c < ncases; c++) {
            memcpy(d, d0, N * ssz(t));
            if (cases[c].pos2 < N && cases[c].pos2 > cases[c].pos) tu_put(t, d, cases[c].pos2, cases[c].re2, cases[c].im2);
            tu_put(t, d, cases[c].pos, cases[c].re, cases[c].im);
            void *before = dup_vec(t, N, d);
            poison_slots(slots, 1);
            K->invert(sps_ex(g_ctx), n, d, slots, 0);
            TU_CHECK(slots[0].re == (double)(cases[c].pos + 1), "invert [%s n=%d] case %d: slot %g, want %zu",
                     sps_scalar_name(t), (int)n, c, slots[0].re, cases[c].pos + 1);
            TU_CHECK(memcmp(before, d, N * ssz(t)) == 0, "invert [%s n=%d] case %d modified d", sps_scalar_name(t),
                     (int)n, c);
            free(before);
        }
    }
    free(d);
    free(d0);
    free(ref);
    free(scale);
}

/* ------------------------------------------------------------------ SpMV */
typedef struct {
    const char *name;
    sps_index n, m;
    int64_t nnz;
    sps_index *rowptr, *row, *col;
    int big; /* used for the thread-count determinism checks */
} pattern;

/* Row i gets len[i] distinct sorted columns out of m. */
static void pattern_from_lengths(pattern *p, const char *name, sps_index n, sps_index m, const sps_index *len)
{
    memset(p, 0, sizeof *p);
    p->name = name;
    p->n = n;
    p->m = m;
    p->rowptr = xmalloc(((size_t)n + 1) * sizeof(sps_index));
    p->rowptr[0] = 0;
    for (sps_index i = 0; i < n; i++) p->rowptr[i + 1] = p->rowptr[i] + len[i];
    p->nnz = p->rowptr[n];
    p->col = xmalloc((size_t)p->nnz * sizeof(sps_index));
    p->row = xmalloc((size_t)p->nnz * sizeof(sps_index));
    unsigned char *mark = calloc((size_t)m + 1, 1);
    for (sps_index i = 0; i < n; i++) {
        sps_index L = len[i];
        sps_index *c = p->col + p->rowptr[i];
        if (L == m) {
            for (sps_index j = 0; j < m; j++) c[j] = j;
        } else if ((int64_t)L * 4 > m) {
            /* dense-ish: choose by scanning (keeps it sorted) */
            sps_index k = 0;
            for (sps_index j = 0; j < m && k < L; j++) {
                double need = (double)(L - k) / (double)(m - j);
                if (tu_rng_uniform(&g_rng) < need) c[k++] = j;
            }
        } else {
            sps_index k = 0;
            while (k < L) {
                sps_index j = (sps_index)(tu_rng_u64(&g_rng) % (uint64_t)m);
                if (!mark[j]) { mark[j] = 1; c[k++] = j; }
            }
            for (sps_index q = 0; q < L; q++) mark[c[q]] = 0;
            /* insertion sort is fine for short rows */
            for (sps_index a = 1; a < L; a++) {
                sps_index v = c[a], b = a;
                while (b > 0 && c[b - 1] > v) { c[b] = c[b - 1]; b--; }
                c[b] = v;
            }
        }
        for (sps_index k = p->rowptr[i]; k < p->rowptr[i + 1]; k++) p->row[k] = i;
    }
    free(mark);
}

static void pattern_free(pattern *p)
{
    free(p->rowptr);
    free(p->row);
    free(p->col);
}

static int npat;
static pattern pats[20];

static void build_patterns(void)
{
    sps_index *len = xmalloc(300000 * sizeof *len);
    sps_index n, m;

    /* random 300 x 200: runs of empty rows at both ends, ~30% empty rows inside */
    n = 300, m = 200;
    for (sps_index i = 0; i < n; i++)
        len[i] = (i < 10 || i >= n - 10 || tu_rng_uniform(&g_rng) < 0.3) ? 0 : (sps_index)(tu_rng_u64(&g_rng) % 13);
    pattern_from_lengths(&pats[npat++], "random 300x200, empty rows", n, m, len);
    /* one dense row */
    n = 50, m = 400;
    for (sps_index i = 0; i < n; i++) len[i] = i == 17 ? m : (sps_index)(tu_rng_u64(&g_rng) % 4);
    pattern_from_lengths(&pats[npat++], "one dense row", n, m, len);
    /* 1 x 1 */
    len[0] = 1;
    pattern_from_lengths(&pats[npat++], "1x1", 1, 1, len);
    len[0] = 0;
    pattern_from_lengths(&pats[npat++], "1x1 empty", 1, 1, len);
    /* n x 1 */
    n = 1000;
    for (sps_index i = 0; i < n; i++) len[i] = tu_rng_uniform(&g_rng) < 0.7;
    pattern_from_lengths(&pats[npat++], "1000x1", n, 1, len);
    /* 1 x n */
    len[0] = 3000;
    pattern_from_lengths(&pats[npat++], "1x5000", 1, 5000, len);
    /* all nonzeros in one column */
    {
        n = 500, m = 300;
        for (sps_index i = 0; i < n; i++) len[i] = 1;
        pattern *p = &pats[npat++];
        pattern_from_lengths(p, "one column", n, m, len);
        p->name = "all in column 123";
        for (int64_t k = 0; k < p->nnz; k++) p->col[k] = 123;
    }
    /* 0 nnz, and empty shapes */
    for (sps_index i = 0; i < 40; i++) len[i] = 0;
    pattern_from_lengths(&pats[npat++], "40x30 no entries", 40, 30, len);
    pattern_from_lengths(&pats[npat++], "0x0", 0, 0, len);
    pattern_from_lengths(&pats[npat++], "0x5", 0, 5, len);
    pattern_from_lengths(&pats[npat++], "5x0", 5, 0, len);

    /* > 200k nnz: one row of 100k entries amid short rows, empty runs at both
       ends: several COO chunks, rows crossing chunk borders */
    n = 20000, m = 100003;
    for (sps_index i = 0; i < n; i++)
        len[i] = (i < 50 || i >= n - 50) ? 0 : (sps_index)(tu_rng_u64(&g_rng) % 13);
    len[7000] = 100000;
    pattern_from_lengths(&pats[npat], "long row amid short rows (>200k nnz)", n, m, len);
    pats[npat++].big = 1;
    /* one row of 250k entries: every COO chunk lies inside that row */
    len[0] = 250000;
    pattern_from_lengths(&pats[npat], "1x250000 full row", 1, 250000, len);
    pats[npat++].big = 1;
    /* 16 rows of 16384: COO chunks aligned with rows */
    for (sps_index i = 0; i < 16; i++) len[i] = 16384;
    pattern_from_lengths(&pats[npat], "16 rows aligned with chunks", 16, 16384, len);
    pats[npat++].big = 1;
    /* 210k rows with one entry each, all in column 1 */
    {
        n = 210000;
        for (sps_index i = 0; i < n; i++) len[i] = 1;
        pattern *p = &pats[npat];
        pattern_from_lengths(p, "210000x2", n, 2, len);
        for (int64_t k = 0; k < p->nnz; k++) p->col[k] = 1;
        p->name = "210000x2, all in column 1";
        pats[npat++].big = 1;
    }
    free(len);
}

typedef enum { K_CSR, K_CSRT, K_COO, K_COOT } spmv_kind;
static const char *const kind_names[4] = {"csr_spmv", "csr_spmvt", "coo_spmv", "coo_spmvt"};

static sps_status run_spmv(spmv_kind kd, sps_scalar t, const pattern *p, const void *val, sps_cplx a, const void *x,
                           sps_cplx b, void *y)
{
    const sps_mat_kernels *K = &sps_cpu_mat_kernels[t];
    switch (kd) {
    case K_CSR: return K->csr_spmv(sps_ex(g_ctx), p->n, p->m, p->nnz, p->rowptr, p->col, val, -1, a, x, b, y);
    case K_CSRT: return K->csr_spmvt(sps_ex(g_ctx), p->n, p->m, p->nnz, p->rowptr, p->col, val, -1, a, x, b, y);
    case K_COO: return K->coo_spmv(sps_ex(g_ctx), p->n, p->m, p->nnz, p->row, p->col, val, a, x, b, y);
    default: return K->coo_spmvt(sps_ex(g_ctx), p->n, p->m, p->nnz, p->row, p->col, val, a, x, b, y);
    }
}

/* y = a op(A) x + b y0 in long double; scale = |a| sum |terms| + |b||y0|; len = terms per output */
static void ref_spmv(int trans, sps_scalar t, const pattern *p, const void *val, lc a, const void *x, lc b,
                     const void *y0, lc *ref, long double *scale, double *f)
{
    const sps_index nout = trans ? p->m : p->n;
    lc *acc = xmalloc((size_t)nout * sizeof *acc);
    long double *sabs = xmalloc((size_t)nout * sizeof *sabs);
    sps_index *cnt = calloc((size_t)nout + 1, sizeof *cnt);
    for (sps_index i = 0; i < nout; i++) { acc[i] = lc_make(0, 0); sabs[i] = 0; }
    for (sps_index i = 0; i < p->n; i++)
        for (sps_index k = p->rowptr[i]; k < p->rowptr[i + 1]; k++) {
            const sps_index j = p->col[k];
            const sps_index o = trans ? j : i, in = trans ? i : j;
            lc v = ld(t, val, (size_t)k), xv = ld(t, x, (size_t)in);
            acc[o] = lc_add(acc[o], lc_mul(v, xv));
            sabs[o] += lc_abs1(v) * lc_abs1(xv);
            cnt[o]++;
        }
    for (sps_index o = 0; o < nout; o++) {
        lc yv = y0 ? ld(t, y0, (size_t)o) : lc_make(0, 0);
        ref[o] = lc_add(lc_mul(a, acc[o]), lc_mul(b, yv));
        scale[o] = lc_abs(a) * sabs[o] + lc_abs(b) * lc_abs(yv);
        f[o] = 4 * (sqrt((double)cnt[o]) + 2);
    }
    free(acc);
    free(sabs);
    free(cnt);
}

static void test_spmv_pattern(sps_scalar t, const pattern *p)
{
    const sps_index nmax = p->n > p->m ? p->n : p->m;
    void *val = rand_vec(t, (size_t)p->nnz);
    void *xN = rand_vec(t, (size_t)p->m), *xT = rand_vec(t, (size_t)p->n);
    void *y0 = rand_vec(t, (size_t)nmax), *y = xmalloc((size_t)nmax * ssz(t) + 1);
    lc *ref = xmalloc(((size_t)nmax + 1) * sizeof *ref);
    long double *scale = xmalloc(((size_t)nmax + 1) * sizeof *scale);
    double *f = xmalloc(((size_t)nmax + 1) * sizeof *f);
    char what[160];
    for (int kd = 0; kd < 4; kd++) {
        const int trans = kd == K_CSRT || kd == K_COOT;
        const sps_index nout = trans ? p->m : p->n;
        const void *x = trans ? xT : xN;
        for (int variant = 0; variant < (p->big ? 2 : 3); variant++) {
            sps_cplx a = rand_coef(t), b = rand_coef(t);
            if (variant == 1) b = sps_cplx_make(0, 0);
            if (variant == 2) a = sps_cplx_make(0, 0);
            if (variant == 1) tu_fill_nan(t, (size_t)nout, y);
            else if (nout) memcpy(y, y0, (size_t)nout * ssz(t));
            sps_status s = run_spmv((spmv_kind)kd, t, p, val, a, x, b, y);
            TU_CHECK(s == SPS_OK, "%s status %s", kind_names[kd], sps_status_name(s));
            ref_spmv(trans, t, p, val, coef_as_t(t, a), x, coef_as_t(t, b), variant == 1 ? NULL : y0, ref, scale, f);
            snprintf(what, sizeof what, "%s %s on '%s' (%dx%d, nnz %lld)", kind_names[kd],
                     variant == 0 ? "a,b random" : variant == 1 ? "beta=0, NaN y" : "alpha=0", p->name, (int)p->n,
                     (int)p->m, (long long)p->nnz);
            check_vec(what, t, nout, y, ref, scale, f, 0);
        }
    }
    free(val);
    free(xN);
    free(xT);
    free(y0);
    free(y);
    free(ref);
    free(scale);
    free(f);
}

/* ------------------------------------------------------------------ determinism */
static void test_determinism(sps_scalar t)
{
    const int threads[3] = {1, 2, 3};
    const int saved = omp_get_max_threads();
    char what[160];
    /* dot, nrm2 on 100003 entries and on 1.1M (the chunk count saturates) */
    const sps_index ns[2] = {100003, 1100000};
    for (int q = 0; q < 2; q++) {
        const sps_index n = ns[q];
        void *x = rand_vec(t, (size_t)n), *y = rand_vec(t, (size_t)n);
        sps_cplx d[3], r[3];
        for (int h = 0; h < 3; h++) {
            omp_set_num_threads(threads[h]);
            sps_cpu_vec_kernels[t].dot(sps_ex(g_ctx), n, x, y, d, h);
            sps_cpu_vec_kernels[t].nrm2(sps_ex(g_ctx), n, x, r, h);
        }
        TU_CHECK(memcmp(&d[0], &d[1], sizeof d[0]) == 0 && memcmp(&d[0], &d[2], sizeof d[0]) == 0,
                 "dot [%s n=%d] differs with 1/2/3 threads: %.17g %.17g %.17g", sps_scalar_name(t), (int)n, d[0].re,
                 d[1].re, d[2].re);
        TU_CHECK(memcmp(&r[0], &r[1], sizeof r[0]) == 0 && memcmp(&r[0], &r[2], sizeof r[0]) == 0,
                 "nrm2 [%s n=%d] differs with 1/2/3 threads: %.17g %.17g %.17g", sps_scalar_name(t), (int)n, r[0].re,
                 r[1].re, r[2].re);
        free(x);
        free(y);
    }
    /* SpMV kernels on the big patterns */
    for (int pi = 0; pi < npat; pi++) {
        const pattern *p = &pats[pi];
        if (!p->big) continue;
        const sps_index nmax = p->n > p->m ? p->n : p->m;
        void *val = rand_vec(t, (size_t)p->nnz), *xN = rand_vec(t, (size_t)p->m), *xT = rand_vec(t, (size_t)p->n);
        void *y0 = rand_vec(t, (size_t)nmax);
        void *out[3];
        for (int h = 0; h < 3; h++) out[h] = xmalloc((size_t)nmax * ssz(t));
        sps_cplx a = rand_coef(t), b = rand_coef(t);
        for (int kd = 0; kd < 4; kd++) {
            const int trans = kd == K_CSRT || kd == K_COOT;
            const sps_index nout = trans ? p->m : p->n;
            for (int h = 0; h < 3; h++) {
                omp_set_num_threads(threads[h]);
                memcpy(out[h], y0, (size_t)nout * ssz(t));
                run_spmv((spmv_kind)kd, t, p, val, a, trans ? xT : xN, b, out[h]);
            }
            snprintf(what, sizeof what, "%s [%s] on '%s' differs with 1/2/3 threads", kind_names[kd],
                     sps_scalar_name(t), p->name);
            TU_CHECK(memcmp(out[0], out[1], (size_t)nout * ssz(t)) == 0 &&
                         memcmp(out[0], out[2], (size_t)nout * ssz(t)) == 0,
                     "%s", what);
        }
        for (int h = 0; h < 3; h++) free(out[h]);
        free(val);
        free(xN);
        free(xT);
        free(y0);
    }
    omp_set_num_threads(saved);
}

/* The generated prototypes are callable directly, and agree with the table. */
static void test_direct_calls(void)
{
    double x[3] = {1.5, -2.0, 0.25}, y[3] = {2.0, 0.5, -4.0};
    sps_cplx s[1];
    poison_slots(s, 1);
    TU_CHECK(sps_cpu_dot_d(sps_ex(g_ctx), 3, x, y, s, 0) == SPS_OK && s[0].re == 3.0 - 1.0 - 1.0 && s[0].im == 0.0,
             "sps_cpu_dot_d gives %g", s[0].re);
    float xf[4] = {1, 2, 3, -4}, yf[4] = {NAN, NAN, NAN, NAN};
    TU_CHECK(sps_cpu_axpby_c(sps_ex(g_ctx), 2, sps_cplx_make(0, 1), xf, sps_cplx_make(0, 0), yf) == SPS_OK &&
                 yf[0] == -2 && yf[1] == 1 && yf[2] == 4 && yf[3] == 3,
             "sps_cpu_axpby_c: i*(1+2i, 3-4i) = (%g%+gi, %g%+gi)", yf[0], yf[1], yf[2], yf[3]);
    double z[4] = {3, 4, 0, 0}; /* (3+4i, 0): norm 5 */
    TU_CHECK(sps_cpu_nrm2_z(sps_ex(g_ctx), 2, z, s, 0) == SPS_OK && s[0].re == 5.0, "sps_cpu_nrm2_z gives %g", s[0].re);
    /* complex dot conjugates x: (i)^H (i) = 1 */
    double zi[2] = {0, 1};
    sps_cpu_dot_z(sps_ex(g_ctx), 1, zi, zi, s, 0);
    TU_CHECK(s[0].re == 1.0 && s[0].im == 0.0, "(i)^H i = %g%+gi, want 1", s[0].re, s[0].im);
    double w[2] = {1, 0}; /* 1^H i = i, i^H 1 = -i */
    sps_cpu_dot_z(sps_ex(g_ctx), 1, zi, w, s, 0);
    TU_CHECK(s[0].re == 0.0 && s[0].im == -1.0, "(i)^H 1 = %g%+gi, want -i", s[0].re, s[0].im);
}

/* The merge-path plan (kernels/csr_merge.h) of the CPU's csr_merge_plan: tile t's pair
 * (row, nz) lies on diagonal min(t tile, n + nnz), the rows before it end at or
 * before entry nz and row `row` does not end before it, the pairs never go back,
 * and the last one is (n, nnz).  The GPU's plan is tested against this one. */
static void test_merge_plan(sps_scalar t, const pattern *p)
{
    const size_t S = sps_scalar_size(t);
    const int64_t tiles = sps_csr_merge_tiles(p->n, p->nnz, S), tile = sps_csr_merge_tile(S);
    unsigned char *work = malloc(sps_csr_merge_bytes(p->n, p->nnz, S));
    TU_CHECK(sps_cpu_mat_kernels[t].csr_merge_plan(sps_ex(g_ctx), p->n, p->nnz, p->rowptr, work) == SPS_OK, "merge plan status");
    const sps_index *plan = (const sps_index *)work;
    int bad = 0;
    for (int64_t k = 0; k <= tiles && !bad; k++) {
        const int64_t d = k * tile < (int64_t)p->n + p->nnz ? k * tile : (int64_t)p->n + p->nnz;
        const sps_index r = plan[2 * k], z = plan[2 * k + 1];
        bad = (int64_t)r + z != d || r < 0 || r > p->n || z < 0 || z > p->nnz || (r > 0 && p->rowptr[r] > z) ||
              (r < p->n && p->rowptr[r + 1] < z) || (k > 0 && (r < plan[2 * k - 2] || z < plan[2 * k - 1]));
        if (bad) printf("  tile %lld: (%d, %d) on diagonal %lld\n", (long long)k, (int)r, (int)z, (long long)d);
    }
    TU_CHECK(!bad && plan[2 * tiles] == p->n && plan[2 * tiles + 1] == p->nnz, "%s %s: merge plan of %lld tiles valid",
             p->name, sps_scalar_name(t), (long long)tiles);
    free(work);
}

/* Launch-variant specs by field name: every field, the default, and what is refused. */
static void test_launch_variant_parse(void)
{
    char why[160] = "";
    sps_launch_variant v, want;
    memset(&want, 0, sizeof want);
    TU_CHECK(sps_launch_variant_parse("", &v, why, sizeof why) == 0 && memcmp(&v, &want, sizeof v) == 0,
             "\"\" is the default variant");
#define TU_LV_ONE_(f, ...)                                                                                          \
    memset(&want, 0, sizeof want);                                                                             \
    want.f = 7;                                                                                                \
    TU_CHECK(sps_launch_variant_parse(#f "=7", &v, why, sizeof why) == 0 && memcmp(&v, &want, sizeof v) == 0,  \
             "%s=7: %s", #f, why);
    SPS_LAUNCH_FIELDS(TU_LV_ONE_)
#undef TU_LV_ONE_
    memset(&want, 0, sizeof want);
    want.hola_early_mul = 1;
    want.hola_minb = 5;
    TU_CHECK(sps_launch_variant_parse("hola_early_mul=1,hola_minb=5", &v, why, sizeof why) == 0 &&
                 memcmp(&v, &want, sizeof v) == 0, "two fields: %s", why);
    static const char *const bad[] = {"hola_minb",  "nosuch=1", "csr_minb=-1", "csr_minb=65",
                                      "csr_minb=4x", "csr_minb=", "a=1,,b=2",   "=3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        TU_CHECK(sps_launch_variant_parse(bad[i], &v, why, sizeof why) == -1 && strstr(why, "sps_launch_variant"),
                 "'%s' refused with a reason (got '%s')", bad[i], why);
    }
}

/* The row kernels' shape rules (kernels/csr_rows.h), which the CSR format also uses
 * to pick the schedule: lanes a row, and whether the long/medium-row pass runs. */
static void test_csr_row_rules(void)
{
    /* 7 a row, 110k rows (poisson3d-48): f64 2 lanes (7 >> 1 = 3), f32 1; no spreading */
    TU_CHECK(sps_csr_tpr(110592, 760320, sps_csr_lane_shift(8), SPS_CSR_MIN_THREADS) == 2, "poisson f64 tpr");
    TU_CHECK(sps_csr_tpr(110592, 760320, sps_csr_lane_shift(4), SPS_CSR_MIN_THREADS) == 1, "poisson f32 tpr");
    /* 13 a row on 11k rows (cage10): spread while n TPR < 128k threads -> 16 lanes */
    TU_CHECK(sps_csr_tpr(11397, 150645, sps_csr_lane_shift(8), SPS_CSR_MIN_THREADS) == 16, "cage10 tpr");
    TU_CHECK(sps_csr_tpr(11397, 150645, sps_csr_lane_shift(8), 0) == 4, "cage10 tpr without spreading");
    TU_CHECK(sps_csr_med_len(1) == 8 && sps_csr_med_len(16) == 128 && sps_csr_med_len(32) == 2048 &&
                 sps_csr_long_len(1) == 1024 && sps_csr_long_len(32) == 2048,
             "medium and long row lengths");
    /* west0132: 132 rows, 414 entries, longest 9: one lane would send it through the
       medium pass (above 8); few rows: two lanes a row instead, no pass */
    TU_CHECK(sps_csr_tpr_fit(132, 414, 9, 1, SPS_CSR_MIN_THREADS) == 2, "west0132 widened to 2 lanes");
    TU_CHECK(!sps_csr_rows_long_pass(132, 414, 9, 8), "west0132 skips the long-row pass");
    TU_CHECK(sps_csr_tpr_fit(135, 812, 44, 2, SPS_CSR_MIN_THREADS) == 8, "rajat11 f32 (longest 44): 8 lanes");
    TU_CHECK(sps_csr_tpr_fit(132, 414, -1, 1, SPS_CSR_MIN_THREADS) == 1, "longest unknown: not widened");
    /* many rows: not widened, the pass runs; a row beyond 32 lanes' reach always takes it */
    TU_CHECK(sps_csr_tpr_fit(1000000, 3000000, 9, 1, SPS_CSR_MIN_THREADS) == 1, "1M rows: one lane");
    TU_CHECK(sps_csr_rows_long_pass(1000000, 3000000, 9, 8), "1M rows, longest 9: the pass runs");
    TU_CHECK(sps_csr_rows_long_pass(132, 414, 5000, 8), "a row of 5000: the pass runs");
    TU_CHECK(sps_csr_tpr_fit(2000, 8000, 5000, 1, SPS_CSR_MIN_THREADS) ==
                 sps_csr_tpr(2000, 8000, 1, SPS_CSR_MIN_THREADS),
             "a row no width fits (5000 > 2048): lanes not widened");
    TU_CHECK(sps_csr_tpr_fit(50000, 195000, 100, 2, SPS_CSR_MIN_THREADS) == 1,
             "50k rows, longest 100: 2 lanes would not fit it, so 1");
    TU_CHECK(!sps_csr_rows_long_pass(132, 414, 8, 8), "a longest row of 8 does not");
    TU_CHECK(!sps_csr_rows_long_pass(110592, 760320, 7, 8), "poisson3d-48 does not");
    TU_CHECK(sps_csr_tpr(0, 0, 1, SPS_CSR_MIN_THREADS) == 1, "empty matrix: one lane");
}

int main(void)
{
    if (tu_cpu_context(&g_ctx)) return 1;
    tu_rng_seed(&g_rng, 20240611);
    test_table();
    test_launch_variant_parse();
    test_csr_row_rules();
    test_direct_calls();
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = all_types[ti];
        for (int si = 0; si < 5; si++) {
            const sps_index n = sizes[si];
            test_fill_copy_scale(t, n);
            test_axpby(t, n);
            test_dot(t, n);
            test_nrm2(t, n);
            test_pmul(t, n);
            test_slot_updates(t, n);
            test_invert(t, n);
        }
    }
    build_patterns();
    for (int ti = 0; ti < 4; ti++)
        for (int pi = 0; pi < npat; pi++) {
            test_spmv_pattern(all_types[ti], &pats[pi]);
            test_merge_plan(all_types[ti], &pats[pi]);
        }
    /* the chunking is type-generic: one real and one complex type, both precisions */
    test_determinism(SPS_F64);
    test_determinism(SPS_C32);
    for (int pi = 0; pi < npat; pi++) pattern_free(&pats[pi]);
    sps_context_destroy(g_ctx);
    return tu_finish();
}
