/* GPU tests of the CUDA backend and of every non-SpMV kernel of the CUDA table
 * (BLAS-1 and the fused solver steps) against the CPU table, for f32, f64,
 * c32, c64 and sizes 0, 1, 7, 4097, 1000003 (the last skipped with
 * SPS_GPU_TEST_SMALL=1).
 *
 * Inputs are fresh random data, identical on both sides; every output (vectors
 * and slots) is poisoned with NaN before each run, so an entry a kernel forgets
 * to write fails.  Tolerances: a few units of the type's roundoff times the
 * size of the terms (the GPU contracts a*b+c into FMAs, the CPU does not), and
 * for reductions (double accumulators on both sides, different summation
 * trees) 4 sqrt(n) double roundoffs times the sum of |terms|.
 * nrm_inf equal to the CPU's (a maximum: exactly for real types, complex moduli within
 * an ulp or two of each side's hypot), NaN with a NaN entry.
 * Also: the table is complete and is the backend's; dot, nrm2, dot2, cg_step,
 * axpy_dot_s reductions are bit-identical over two runs; nrm2 over/underflow,
 * NaN and Inf; invert's report; guarded steps; out of device memory is
 * SPS_ERR_ALLOC naming the bytes and leaves the context usable; bad device
 * ordinal; the stream accessor.  Exit 77 (skipped) without a usable GPU. */
#include "test_gpu_util.h"
#include "kernel_tables.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef SPS_HAVE_CUDA
#include "kernels/cpu/common.h" /* sps_scoef_eval: the coefficients the kernels see */

#define NSLOTS 20
static sps_cplx *g_dslots;         /* device slots */
static sps_cplx g_hslots[NSLOTS];  /* CPU slots */

static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};
static const size_t all_sizes[5] = {0, 1, 7, 4097, 1000003};

static int cplx(sps_scalar t) { return sps_scalar_is_complex(t); }
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }

/* Random slot values with 0.5 <= |v| <= 2 (real for real types), on both sides. */
static void slots_random(sps_scalar t)
{
    for (int k = 0; k < NSLOTS; k++) {
        double r = tu_rng_range(&g_rng, 0.5, 2.0), a = cplx(t) ? tu_rng_range(&g_rng, 0, 6.283185307179586) : 0.0;
        double s = tu_rng_uniform(&g_rng) < 0.5 ? -1 : 1;
        g_hslots[k] = sps_cplx_make(s * r * cos(a), cplx(t) ? r * sin(a) : 0.0);
    }
    gb_upload(g_dslots, g_hslots, sizeof g_hslots);
}
/* Poison slot k on both sides. */
static void slot_poison(int k)
{
    g_hslots[k] = sps_cplx_make(NAN, NAN);
    gb_upload(g_dslots, g_hslots, sizeof g_hslots);
}
static void slot_set(int k, sps_cplx v)
{
    g_hslots[k] = v;
    gb_upload(g_dslots, g_hslots, sizeof g_hslots);
}
static sps_cplx dslot(int k)
{
    sps_cplx all[NSLOTS];
    gb_download(all, g_dslots, sizeof all);
    return all[k];
}
static sps_scoef rand_scoef(void)
{
    sps_scoef c;
    c.sign = tu_rng_uniform(&g_rng) < 0.5 ? -1.0 : 1.0;
    c.num = (int)(tu_rng_u64(&g_rng) % 9) - 1; /* -1 .. 7 */
    c.den = (int)(tu_rng_u64(&g_rng) % 9) - 1;
    return c;
}
static sps_cplx rand_coef(sps_scalar t)
{
    return sps_cplx_make(tu_rng_range(&g_rng, -2, 2),
                         cplx(t) ? tu_rng_range(&g_rng, -2, 2) : tu_rng_range(&g_rng, -2, 2));
}
/* sum_i |x_i| |y_i| */
static double sum_abs_prod(sps_scalar t, size_t n, const void *x, const void *y)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        double a, b, c, d;
        tu_get(t, x, i, &a, &b);
        tu_get(t, y, i, &c, &d);
        s += hypot(a, b) * hypot(c, d);
    }
    return s;
}
/* tolerance of a reduction over n terms whose |terms| sum to S, computed from
 * vectors that may differ by a few roundoffs of t */
static double red_tol(sps_scalar t, size_t n, double S)
{
    return (8 * tu_eps(t) + 4 * sqrt((double)n + 1) * 1.2e-16) * S + 1e-300;
}

static int bits_equal(const void *a, const void *b, size_t bytes) { return bytes == 0 || memcmp(a, b, bytes) == 0; }

#define GK(t) (&SPS_TEST_GPU_VEC[t])
#define CK(t) (&sps_cpu_vec_kernels[t])
#define RUN_OK(ctx, expr) TU_OK(ctx, expr)

/* ------------------------------------------------------------------ table, backend */
static void test_backend(void)
{
    TU_CHECK_KERNEL_TABLES(sps_cuda, sps_cuda_backend);
    TU_CHECK(sps_context_backend(g_gpu) == SPS_BACKEND_CUDA, "backend is cuda");
    TU_CHECK(sps_context_cuda_stream(g_gpu) != NULL, "CUDA context has a stream");
    TU_CHECK(sps_context_cuda_stream(g_cpu) == NULL, "CPU context has no stream");
    TU_CHECK(sps_cuda_device_count() >= 1, "device count >= 1");
    TU_CHECK(strlen(sps_context_device_name(g_gpu)) > 0, "device name set");
    sps_context bad = NULL;
    sps_status st = sps_context_create(&bad, SPS_BACKEND_CUDA, 4096);
    TU_CHECK(st == SPS_ERR_DEVICE, "device 4096 -> SPS_ERR_DEVICE (got %s)", sps_status_name(st));
    TU_CHECK(bad && strstr(sps_context_error(bad), "4096") != NULL, "bad device message names it: %s",
             bad ? sps_context_error(bad) : "(null)");
    sps_context_destroy(bad);
    sps_context au = NULL;
    TU_OK(au, sps_context_create(&au, SPS_BACKEND_AUTO, 0));
    TU_CHECK(au && sps_context_backend(au) == SPS_BACKEND_CUDA, "AUTO picks CUDA when a device exists");
    sps_context_destroy(au);
    TU_OK(g_gpu, sps_context_synchronize(g_gpu));
}

/* ------------------------------------------------------------------ BLAS-1 */
static void test_blas1(sps_scalar t, size_t n)
{
    const sps_vec_kernels *G = GK(t), *C = CK(t);
    const sps_index N = (sps_index)n;
    const size_t B = n * ssz(t);
    void *g;

    /* fill: exact */
    {
        sps_cplx a = rand_coef(t);
        gbuf y = gb_nan(t, n);
        RUN_OK(g_gpu, G->fill(sps_ex(g_gpu), N, a, y.d));
        C->fill(sps_ex(g_cpu), N, a, y.h);
        g = gb_fetch(&y);
        TU_CHECK(bits_equal(g, y.h, B), "fill [%s n=%zu] exact", sps_scalar_name(t), n);
        free(g);
        gb_free(&y);
    }
    /* copy: bitwise */
    {
        gbuf x = gb_rand(t, n), y = gb_nan(t, n);
        RUN_OK(g_gpu, G->copy(sps_ex(g_gpu), N, x.d, y.d));
        g = gb_fetch(&y);
        TU_CHECK(bits_equal(g, x.h, B), "copy [%s n=%zu] bitwise", sps_scalar_name(t), n);
        free(g);
        gb_free(&x);
        gb_free(&y);
    }
    /* scale */
    {
        sps_cplx a = rand_coef(t);
        gbuf x = gb_rand(t, n);
        RUN_OK(g_gpu, G->scale(sps_ex(g_gpu), N, a, x.d));
        C->scale(sps_ex(g_cpu), N, a, x.h);
        g = gb_fetch(&x);
        cmp_vec("scale", t, n, g, x.h, 4, 2 * cabs_(a));
        free(g);
        gb_free(&x);
    }
    /* axpby, b != 0, and b == 0 with y poisoned (must not be read) */
    for (int bz = 0; bz < 2; bz++) {
        sps_cplx a = rand_coef(t), b = bz ? sps_cplx_make(0, 0) : rand_coef(t);
        gbuf x = gb_rand(t, n), y = bz ? gb_nan(t, n) : gb_rand(t, n);
        RUN_OK(g_gpu, G->axpby(sps_ex(g_gpu), N, a, x.d, b, y.d));
        C->axpby(sps_ex(g_cpu), N, a, x.h, b, y.h);
        g = gb_fetch(&y);
        cmp_vec(bz ? "axpby b=0 (y poisoned)" : "axpby", t, n, g, y.h, 6, 2 * (cabs_(a) + cabs_(b)));
        free(g);
        gb_free(&x);
        gb_free(&y);
    }
    /* dot */
    {
        gbuf x = gb_rand(t, n), y = gb_rand(t, n);
        slot_poison(3);
        RUN_OK(g_gpu, G->dot(sps_ex(g_gpu), N, x.d, y.d, g_dslots, 3));
        C->dot(sps_ex(g_cpu), N, x.h, y.h, g_hslots, 3);
        cmp_slot("dot", t, n, dslot(3), g_hslots[3], red_tol(SPS_F64, n, sum_abs_prod(t, n, x.h, y.h)));
        gb_free(&x);
        gb_free(&y);
    }
    /* nrm2 */
    {
        gbuf x = gb_rand(t, n);
        slot_poison(5);
        RUN_OK(g_gpu, G->nrm2(sps_ex(g_gpu), N, x.d, g_dslots, 5));
        C->nrm2(sps_ex(g_cpu), N, x.h, g_hslots, 5);
        cmp_slot("nrm2", t, n, dslot(5), g_hslots[5], red_tol(SPS_F64, n, g_hslots[5].re));
        gb_free(&x);
    }
    /* nrm_inf: a maximum is exact, so the GPU's equals the CPU's; a NaN entry gives NaN */
    {
        gbuf x = gb_rand(t, n);
        slot_poison(6);
        RUN_OK(g_gpu, G->nrm_inf(sps_ex(g_gpu), N, x.d, g_dslots, 6));
        C->nrm_inf(sps_ex(g_cpu), N, x.h, g_hslots, 6);
        const double want = g_hslots[6].re, got = dslot(6).re;
        const int cplx = t == SPS_C32 || t == SPS_C64; /* the moduli: each side's hypot, within an ulp or two */
        TU_CHECK((cplx ? fabs(got - want) <= 4e-16 * want : got == want) && (n ? want > 0 : want == 0) &&
                     dslot(6).im == 0,
                 "nrm_inf [%s n=%d]: GPU %.17g, CPU %.17g", sps_scalar_name(t), (int)n, dslot(6).re, g_hslots[6].re);
        if (n > 3) {
            tu_put(t, x.h, (size_t)n / 2, NAN, 0.0);
            gb_push(&x);
            slot_poison(6);
            RUN_OK(g_gpu, G->nrm_inf(sps_ex(g_gpu), N, x.d, g_dslots, 6));
            TU_CHECK(isnan(dslot(6).re), "nrm_inf with a NaN [%s n=%d] gives %g", sps_scalar_name(t), (int)n,
                     dslot(6).re);
        }
        gb_free(&x);
    }
    /* pmul */
    {
        gbuf d = gb_rand(t, n), x = gb_rand(t, n), y = gb_nan(t, n);
        RUN_OK(g_gpu, G->pmul(sps_ex(g_gpu), N, d.d, x.d, y.d));
        C->pmul(sps_ex(g_cpu), N, d.h, x.h, y.h);
        g = gb_fetch(&y);
        cmp_vec("pmul", t, n, g, y.h, 4, 2);
        free(g);
        /* pmul_dot: y as pmul's, x^H y as the CPU's (y poisoned again first) */
        gbuf y2 = gb_nan(t, n);
        slot_poison(4);
        RUN_OK(g_gpu, G->pmul_dot(sps_ex(g_gpu), N, d.d, x.d, y2.d, g_dslots, 4));
        C->pmul_dot(sps_ex(g_cpu), N, d.h, x.h, y2.h, g_hslots, 4);
        g = gb_fetch(&y2);
        cmp_vec("pmul_dot y", t, n, g, y2.h, 4, 2);
        /* the sum in double of products of y, which the GPU rounds differently for complex
           types (a fused complex multiply): the tolerance of t's rounding of y */
        cmp_slot("pmul_dot x^H y", t, n, dslot(4), g_hslots[4], red_tol(t, n, sum_abs_prod(t, n, x.h, y2.h)));
        free(g);
        gb_free(&y2);
        gb_free(&d);
        gb_free(&x);
        gb_free(&y);
    }
    /* axpy_s, xpay_s (coefficients from slots) */
    for (int which = 0; which < 2; which++) {
        slots_random(t);
        sps_scoef c = rand_scoef();
        const double cm = cabs_(sps_scoef_eval(c, g_hslots));
        gbuf x = gb_rand(t, n), y = gb_rand(t, n);
        if (which == 0) {
            RUN_OK(g_gpu, G->axpy_s(sps_ex(g_gpu), N, g_dslots, c, x.d, y.d));
            C->axpy_s(sps_ex(g_cpu), N, g_hslots, c, x.h, y.h);
        } else {
            RUN_OK(g_gpu, G->xpay_s(sps_ex(g_gpu), N, x.d, g_dslots, c, y.d));
            C->xpay_s(sps_ex(g_cpu), N, x.h, g_hslots, c, y.h);
        }
        g = gb_fetch(&y);
        cmp_vec(which ? "xpay_s" : "axpy_s", t, n, g, y.h, 6, 2 * (1 + cm));
        free(g);
        gb_free(&x);
        gb_free(&y);
    }
    /* invert: all good entries; then a zero and a NaN planted (report the first, d untouched) */
    {
        gbuf d = gb_rand(t, n);
        double *sc = gb_xmalloc((n ? n : 1) * sizeof *sc);
        slot_poison(2);
        RUN_OK(g_gpu, G->invert(sps_ex(g_gpu), N, d.d, g_dslots, 2));
        C->invert(sps_ex(g_cpu), N, d.h, g_hslots, 2);
        g = gb_fetch(&d);
        for (size_t i = 0; i < n; i++) {
            double re, im;
            tu_get(t, d.h, i, &re, &im);
            sc[i] = 2 * hypot(re, im);
        }
        cmp_vec_s("invert", t, n, g, d.h, 4, sc);
        sps_cplx gs = dslot(2);
        TU_CHECK(gs.re == 0 && gs.im == 0 && g_hslots[2].re == 0, "invert [%s n=%zu]: no bad entry reported (%g)",
                 sps_scalar_name(t), n, gs.re);
        free(g);
        gb_free(&d);
        free(sc);
        if (n >= 7) {
            gbuf e = gb_rand(t, n);
            const size_t kz = n / 2, kn = n / 3;
            memset((char *)e.h + kz * ssz(t), 0, ssz(t));
            tu_fill_nan(t, 1, (char *)e.h + kn * ssz(t));
            gb_push(&e);
            void *orig = gb_xmalloc(n * ssz(t));
            memcpy(orig, e.h, n * ssz(t));
            slot_poison(2);
            RUN_OK(g_gpu, G->invert(sps_ex(g_gpu), N, e.d, g_dslots, 2));
            C->invert(sps_ex(g_cpu), N, e.h, g_hslots, 2);
            gs = dslot(2);
            TU_CHECK(gs.re == (double)(kn + 1) && gs.re == g_hslots[2].re && gs.im == 0,
                     "invert [%s n=%zu]: first bad entry %g, want %zu (cpu %g)", sps_scalar_name(t), n, gs.re, kn + 1,
                     g_hslots[2].re);
            g = gb_fetch(&e);
            TU_CHECK(bits_equal(g, orig, n * ssz(t)), "invert [%s n=%zu]: d untouched when an entry is bad",
                     sps_scalar_name(t), n);
            free(g);
            free(orig);
            gb_free(&e);
            /* a finite entry whose inverse is not (a subnormal): bad too, on both */
            gbuf u = gb_rand(t, n);
            tu_put(t, u.h, kz, t == SPS_F32 || t == SPS_C32 ? 1e-39 : 1e-310, 0.0);
            gb_push(&u);
            slot_poison(2);
            RUN_OK(g_gpu, G->invert(sps_ex(g_gpu), N, u.d, g_dslots, 2));
            C->invert(sps_ex(g_cpu), N, u.h, g_hslots, 2);
            gs = dslot(2);
            TU_CHECK(gs.re == (double)(kz + 1) && gs.re == g_hslots[2].re,
                     "invert [%s n=%zu]: a subnormal's inverse: first bad %g, want %zu (cpu %g)", sps_scalar_name(t), n,
                     gs.re, kz + 1, g_hslots[2].re);
            gb_free(&u);
        }
    }
}

/* ------------------------------------------------------------------ block-Jacobi kernels */
/* bj_invert and bj_apply against the CPU on blocks of random sizes 1..32 (uniform > 0:
 * all of that size, and bj_apply told so: the GPU's metadata-free path; the CPU walks
 * the metadata either way) (random entries, the diagonal raised by the size: well
 * conditioned), outputs poisoned; then one block made singular (two equal rows) and one
 * more after it: the first one's row reported. */
static void test_bjacobi(sps_scalar t, sps_index nb, int uniform)
{
    const size_t ss = ssz(t);
    sps_index *start = gb_xmalloc(((size_t)nb + 1) * sizeof *start);
    int64_t *off = gb_xmalloc(((size_t)nb + 1) * sizeof *off);
    start[0] = 0;
    off[0] = 0;
    for (sps_index k = 0; k < nb; k++) {
        const sps_index sz = uniform > 0    ? uniform
                             : k % 11 == 0 ? SPS_BJ_MAX
                                           : 1 + (sps_index)(tu_rng_u64(&g_rng) % SPS_BJ_MAX);
        start[k + 1] = start[k] + sz;
        off[k + 1] = off[k] + (int64_t)sz * sz;
    }
    const sps_index n = start[nb];
    sps_index *rowblk = gb_xmalloc((size_t)n * sizeof *rowblk);
    for (sps_index k = 0; k < nb; k++)
        for (sps_index i = start[k]; i < start[k + 1]; i++) rowblk[i] = k;
    gbuf blk = gb_rand(t, (size_t)off[nb]);
    for (sps_index k = 0; k < nb; k++) {
        const sps_index sz = start[k + 1] - start[k];
        for (sps_index i = 0; i < sz; i++) {
            double re, im;
            tu_get(t, blk.h, (size_t)off[k] + (size_t)i * sz + i, &re, &im);
            tu_put(t, blk.h, (size_t)off[k] + (size_t)i * sz + i, re + (re < 0 ? -sz : sz), im);
        }
    }
    gb_push(&blk);
    void *d_start = gb_dalloc(((size_t)nb + 1) * sizeof *start), *d_off = gb_dalloc(((size_t)nb + 1) * sizeof *off);
    void *d_rowblk = gb_dalloc((size_t)n * sizeof *rowblk), *d_bad = gb_dalloc(sizeof(sps_index));
    gb_upload(d_start, start, ((size_t)nb + 1) * sizeof *start);
    gb_upload(d_off, off, ((size_t)nb + 1) * sizeof *off);
    gb_upload(d_rowblk, rowblk, (size_t)n * sizeof *rowblk);
    const sps_vec_kernels *G = &SPS_TEST_GPU_VEC[t], *C = &sps_cpu_vec_kernels[t];
    sps_index hbad = -1, dbad = -1;
    RUN_OK(g_gpu, G->bj_invert(sps_ex(g_gpu), nb, d_start, d_off, blk.d, d_bad));
    C->bj_invert(sps_ex(g_cpu), nb, start, off, blk.h, &hbad);
    gb_download(&dbad, d_bad, sizeof dbad);
    TU_CHECK(dbad == 0 && hbad == 0, "bj_invert [%s nb=%d]: singular reported (gpu %d, cpu %d)", sps_scalar_name(t),
             (int)nb, (int)dbad, (int)hbad);
    void *g = gb_fetch(&blk);
    /* scale: the inverse's entries are O(1 / size); pivoting order is the same, rounding not */
    cmp_vec("bj_invert", t, (size_t)off[nb], g, blk.h, 64 * SPS_BJ_MAX, 1.0);
    free(g);
    /* apply with the CPU's inverses on both: out of place, then in place */
    gb_push(&blk);
    gbuf x = gb_rand(t, (size_t)n), y = gb_nan(t, (size_t)n);
    RUN_OK(g_gpu, G->bj_apply(sps_ex(g_gpu), n, uniform, d_rowblk, d_start, d_off, blk.d, x.d, y.d));
    C->bj_apply(sps_ex(g_cpu), n, 0, rowblk, start, off, blk.h, x.h, y.h);
    g = gb_fetch(&y);
    cmp_vec("bj_apply", t, (size_t)n, g, y.h, 8 * SPS_BJ_MAX, 1.0);
    free(g);
    RUN_OK(g_gpu, G->bj_apply(sps_ex(g_gpu), n, uniform, d_rowblk, d_start, d_off, blk.d, x.d, x.d));
    g = gb_fetch(&x);
    cmp_vec("bj_apply in place", t, (size_t)n, g, y.h, 8 * SPS_BJ_MAX, 1.0);
    free(g);
    /* singular: block nb/2 (two equal rows, when it has two) and a later one */
    const sps_index ks = nb / 2 + (start[nb / 2 + 1] - start[nb / 2] < 2), kl = nb - 1;
    if (ks < kl && start[ks + 1] - start[ks] >= 2) {
        gbuf e = gb_rand(t, (size_t)off[nb]);
        const sps_index sz = start[ks + 1] - start[ks];
        memcpy((char *)e.h + ((size_t)off[ks] + (size_t)sz) * ss, (char *)e.h + (size_t)off[ks] * ss, (size_t)sz * ss);
        memset((char *)e.h + (size_t)off[kl] * ss, 0, (size_t)(start[kl + 1] - start[kl]) * ss);
        gb_push(&e);
        RUN_OK(g_gpu, G->bj_invert(sps_ex(g_gpu), nb, d_start, d_off, e.d, d_bad));
        C->bj_invert(sps_ex(g_cpu), nb, start, off, e.h, &hbad);
        gb_download(&dbad, d_bad, sizeof dbad);
        TU_CHECK(dbad == start[ks] + 1 && hbad == dbad, "bj_invert [%s]: singular block at row %d (gpu %d, cpu %d)",
                 sps_scalar_name(t), (int)start[ks] + 1, (int)dbad, (int)hbad);
        gb_free(&e);
    }
    gb_free(&blk);
    gb_free(&x);
    gb_free(&y);
    sps_dfree(g_gpu, d_start);
    sps_dfree(g_gpu, d_off);
    sps_dfree(g_gpu, d_rowblk);
    sps_dfree(g_gpu, d_bad);
    free(start);
    free(off);
    free(rowblk);
}

/* ------------------------------------------------------------------ nrm2 corner cases (f64, c64) */
static void test_nrm2_range(sps_scalar t)
{
    const size_t n = g_small ? 5000 : 300001;
    const double vals[4] = {1e300, 1e-300, 1e-170, 1e154};
    for (int v = 0; v < 4; v++) {
        gbuf x = gb_rand(t, n);
        double *p = x.h;
        for (size_t i = 0; i < n * (cplx(t) ? 2 : 1); i++) p[i] *= vals[v];
        gb_push(&x);
        slot_poison(1);
        RUN_OK(g_gpu, GK(t)->nrm2(sps_ex(g_gpu), (sps_index)n, x.d, g_dslots, 1));
        CK(t)->nrm2(sps_ex(g_cpu), (sps_index)n, x.h, g_hslots, 1);
        sps_cplx g = dslot(1);
        TU_CHECK(isfinite(g.re) && g.re > 0, "nrm2 scale %g [%s]: finite positive (%g)", vals[v], sps_scalar_name(t),
                 g.re);
        cmp_slot("nrm2 scaled", t, n, g, g_hslots[1], red_tol(SPS_F64, n, g_hslots[1].re));
        gb_free(&x);
    }
    /* NaN and Inf propagate */
    for (int k = 0; k < 2; k++) {
        gbuf x = gb_rand(t, 1000);
        ((double *)x.h)[777] = k ? INFINITY : NAN;
        gb_push(&x);
        slot_poison(1);
        RUN_OK(g_gpu, GK(t)->nrm2(sps_ex(g_gpu), 1000, x.d, g_dslots, 1));
        sps_cplx g = dslot(1);
        TU_CHECK(k ? (isinf(g.re) && g.re > 0) : isnan(g.re), "nrm2 with %s [%s] gives %g", k ? "Inf" : "NaN",
                 sps_scalar_name(t), g.re);
        gb_free(&x);
    }
    /* all zeros */
    {
        gbuf x = gb_rand(t, 999);
        memset(x.h, 0, 999 * ssz(t));
        gb_push(&x);
        slot_poison(1);
        RUN_OK(g_gpu, GK(t)->nrm2(sps_ex(g_gpu), 999, x.d, g_dslots, 1));
        sps_cplx g = dslot(1);
        TU_CHECK(g.re == 0 && g.im == 0, "nrm2 of zeros [%s] = %g", sps_scalar_name(t), g.re);
        gb_free(&x);
    }
}

/* ------------------------------------------------------------------ fused solver steps */
static sps_bicgstab_slots bslots(void)
{
    sps_bicgstab_slots k = {0, 1, 2, 3, 8, 9, -1, 0, 0, 0}; /* no stop slot */
    return k;
}

static void test_solver_steps(sps_scalar t, size_t n)
{
    const sps_vec_kernels *G = GK(t), *C = CK(t);
    const sps_index N = (sps_index)n;
    const size_t B = n * ssz(t);
    void *g;

    /* cg_step (slots rho 0, pq 1, rr 4, tol2 16, stop 17): case 0 a normal step (rr > tol2:
     * stop stays 0), 1 guarded by pq <= 0, 2 guarded by rho <= 0 (1 and 2: no write,
     * rr = -1, stop = 1), 3 converged (tol2 above rr: the step is taken and stop = 1),
     * 4 stopped on entry (nothing at all is written, rr keeps its poison).  pm: the same
     * as cg_step_pmul, with z = d .* r (poisoned first) and r^H z in slot 5, both left
     * alone where the step is not taken. */
    const sps_cg_slots ks = {0, 1, 4, 16, 17};
    for (int pm = 0; pm < 2; pm++)
    for (int cs = 0; cs < 5; cs++) {
        const char *nm = pm ? "cg_step_pmul" : "cg_step";
        slots_random(t);
        slot_set(0, sps_cplx_make(cs == 2 ? -tu_rng_range(&g_rng, 0.5, 2) : tu_rng_range(&g_rng, 0.5, 2),
                                  cplx(t) ? 0.25 : 0.0));
        slot_set(1, sps_cplx_make(cs == 1 ? -tu_rng_range(&g_rng, 0.5, 2) : tu_rng_range(&g_rng, 0.5, 2), 0));
        slot_set(16, sps_cplx_make(cs == 3 ? 1e300 : 0.0, 0));
        slot_set(17, sps_cplx_make(cs == 4 ? 1.0 : 0.0, 0));
        slot_poison(4);
        slot_poison(5);
        gbuf p = gb_rand(t, n), q = gb_rand(t, n), x = gb_rand(t, n), r = gb_rand(t, n), d = gb_rand(t, n);
        gbuf z = gb_nan(t, n);
        void *x0 = gb_xmalloc(B + 1), *r0 = gb_xmalloc(B + 1), *zc = gb_xmalloc(B + 1);
        memcpy(x0, x.h, B);
        memcpy(r0, r.h, B);
        memcpy(zc, z.h, B);
        if (pm) {
            RUN_OK(g_gpu, G->cg_step_pmul(sps_ex(g_gpu), N, g_dslots, ks, p.d, q.d, x.d, r.d, d.d, z.d, 5));
            C->cg_step_pmul(sps_ex(g_cpu), N, g_hslots, ks, p.h, q.h, x.h, r.h, d.h, zc, 5);
        } else {
            RUN_OK(g_gpu, G->cg_step(sps_ex(g_gpu), N, g_dslots, ks, p.d, q.d, x.d, r.d));
            C->cg_step(sps_ex(g_cpu), N, g_hslots, ks, p.h, q.h, x.h, r.h);
        }
        const double am = cabs_(sps_scoef_eval((sps_scoef){1, 0, 1}, g_hslots));
        void *gx = gb_fetch(&x), *gr = gb_fetch(&r), *gz = gb_fetch(&z);
        const sps_cplx rr = dslot(4), stop = dslot(17), rz = dslot(5);
        TU_CHECK(stop.re == g_hslots[17].re, "%s case %d [%s n=%zu]: stop %g, CPU %g", nm, cs, sps_scalar_name(t), n,
                 stop.re, g_hslots[17].re);
        TU_CHECK(stop.re == (cs == 0 && n > 0 ? 0.0 : 1.0), "%s case %d [%s n=%zu]: stop = %g", nm, cs,
                 sps_scalar_name(t), n, stop.re);
        if (cs == 1 || cs == 2 || cs == 4) {
            if (cs == 4)
                TU_CHECK(isnan(rr.re), "%s stopped [%s n=%zu]: rr written (%g)", nm, sps_scalar_name(t), n, rr.re);
            else
                TU_CHECK(rr.re == -1.0 && rr.im == 0.0, "%s guarded [%s n=%zu]: rr = %g, want -1", nm,
                         sps_scalar_name(t), n, rr.re);
            TU_CHECK(bits_equal(gx, x0, B) && bits_equal(gr, r0, B), "%s case %d [%s n=%zu]: x, r untouched", nm, cs,
                     sps_scalar_name(t), n);
            TU_CHECK(isnan(rz.re) && bits_equal(gz, z.h, B) && bits_equal(zc, z.h, B),
                     "%s case %d [%s n=%zu]: z, r^H z untouched", nm, cs, sps_scalar_name(t), n);
        } else {
            cmp_vec(pm ? "cg_step_pmul x" : "cg_step x", t, n, gx, x.h, 6, 2 * (1 + am));
            cmp_vec(pm ? "cg_step_pmul r" : "cg_step r", t, n, gr, r.h, 6, 2 * (1 + am));
            /* rr's scale is that of the terms of r - alpha q, not of the result: where they cancel,
             * the GPU's fused multiply-add and the CPU's rounded product give r's entries an error
             * of eps |alpha q_i|, which rr relative to itself would not allow; z = d r and r^H z
             * inherit it, times |d_i| <= sqrt 2 */
            double S = 0;
            for (size_t i = 0; i < n; i++) {
                double a, b, c, e;
                tu_get(t, r0, i, &a, &b);
                tu_get(t, q.h, i, &c, &e);
                S += (hypot(a, b) + am * hypot(c, e)) * (hypot(a, b) + am * hypot(c, e));
            }
            cmp_slot(pm ? "cg_step_pmul rr" : "cg_step rr", t, n, rr, g_hslots[4], red_tol(t, n, S));
            if (pm) {
                cmp_vec("cg_step_pmul z", t, n, gz, zc, 12, 2 * (1 + am));
                cmp_slot("cg_step_pmul r^H z", t, n, rz, g_hslots[5], red_tol(t, n, 4 * S));
            } else {
                TU_CHECK(isnan(rz.re) && bits_equal(gz, z.h, B), "cg_step [%s n=%zu]: wrote z or slot 5",
                         sps_scalar_name(t), n);
            }
        }
        free(gx);
        free(gr);
        free(gz);
        free(x0);
        free(r0);
        free(zc);
        gb_free(&p);
        gb_free(&q);
        gb_free(&x);
        gb_free(&r);
        gb_free(&d);
        gb_free(&z);
    }
    /* bicgstab_p */
    {
        slots_random(t);
        sps_bicgstab_slots k = bslots();
        gbuf r = gb_rand(t, n), v = gb_rand(t, n), p = gb_rand(t, n);
        RUN_OK(g_gpu, G->bicgstab_p(sps_ex(g_gpu), N, g_dslots, k, r.d, v.d, p.d));
        C->bicgstab_p(sps_ex(g_cpu), N, g_hslots, k, r.h, v.h, p.h);
        const double b = cabs_(g_hslots[0]) * cabs_(g_hslots[3]) / (cabs_(g_hslots[1]) * cabs_(g_hslots[2]));
        const double om = cabs_(g_hslots[2]) / cabs_(g_hslots[3]);
        g = gb_fetch(&p);
        cmp_vec("bicgstab_p", t, n, g, p.h, 8, 2 * (1 + b * (1 + om)));
        free(g);
        gb_free(&r);
        gb_free(&v);
        gb_free(&p);
    }
    /* waxpy_s */
    {
        slots_random(t);
        sps_scoef c = rand_scoef();
        const double cm = cabs_(sps_scoef_eval(c, g_hslots));
        gbuf x = gb_rand(t, n), y = gb_rand(t, n), w = gb_nan(t, n);
        RUN_OK(g_gpu, G->waxpy_s(sps_ex(g_gpu), N, x.d, g_dslots, c, y.d, w.d));
        C->waxpy_s(sps_ex(g_cpu), N, x.h, g_hslots, c, y.h, w.h);
        g = gb_fetch(&w);
        cmp_vec("waxpy_s", t, n, g, w.h, 6, 2 * (1 + cm));
        free(g);
        gb_free(&x);
        gb_free(&y);
        gb_free(&w);
    }
    /* dot2 */
    {
        gbuf x = gb_rand(t, n), y = gb_rand(t, n);
        slot_poison(6);
        slot_poison(7);
        RUN_OK(g_gpu, G->dot2(sps_ex(g_gpu), N, x.d, y.d, g_dslots, 6, 7));
        C->dot2(sps_ex(g_cpu), N, x.h, y.h, g_hslots, 6, 7);
        cmp_slot("dot2 xy", t, n, dslot(6), g_hslots[6], red_tol(SPS_F64, n, sum_abs_prod(t, n, x.h, y.h)));
        cmp_slot("dot2 xx", t, n, dslot(7), g_hslots[7], red_tol(t, n, g_hslots[7].re));
        gb_free(&x);
        gb_free(&y);
    }
    /* bicgstab_xr: 0 normal, 1 tt == 0, 2 guarded (rv == 0 -> alpha not finite); with the
     * stop slot (16; tol2 17, tiny 18, rhatn 19): 3 going on (code GO), 4 converged (tol2
     * above rr: CONVERGED), 5 stopped on entry (nothing written), 6 guarded (SKIPPED) */
    for (int mode = 0; mode < 7; mode++) {
        slots_random(t);
        sps_bicgstab_slots k = bslots();
        if (mode >= 3) {
            k.stop = 16, k.tol2 = 17, k.tiny = 18, k.rhatn = 19;
            slot_set(16, sps_cplx_make(mode == 5 ? 1.0 : 0.0, 0));
            slot_set(17, sps_cplx_make(mode == 4 ? 1e300 : 0.0, 0));
            slot_set(18, sps_cplx_make(1e-30, 0));
            slot_set(19, sps_cplx_make(1.0, 0));
        }
        if (mode == 1) slot_set(k.tt, sps_cplx_make(0, 0));
        if (mode == 2 || mode == 6) slot_set(k.rv, sps_cplx_make(0, 0));
        slot_poison(k.rr);
        slot_poison(k.rho_new);
        gbuf rh = gb_rand(t, n), ph = gb_rand(t, n), sh = gb_rand(t, n), s = gb_rand(t, n), tt = gb_rand(t, n);
        gbuf x = gb_rand(t, n), r = gb_nan(t, n);
        void *x0 = gb_xmalloc(B + 1);
        memcpy(x0, x.h, B);
        RUN_OK(g_gpu, G->bicgstab_xr(sps_ex(g_gpu), N, g_dslots, k, rh.d, ph.d, sh.d, s.d, tt.d, x.d, r.d));
        C->bicgstab_xr(sps_ex(g_cpu), N, g_hslots, k, rh.h, ph.h, sh.h, s.h, tt.h, x.h, r.h);
        void *gx = gb_fetch(&x), *gr = gb_fetch(&r);
        static const char *const tags[7] = {"bicgstab_xr",          "bicgstab_xr tt=0",
                                            "bicgstab_xr guarded",  "bicgstab_xr stop: going on",
                                            "bicgstab_xr stop: converged", "bicgstab_xr stop: stopped on entry",
                                            "bicgstab_xr stop: guarded"};
        const char *tag = tags[mode];
        if (mode >= 3) {
            static const int want[7] = {0, 0, 0, SPS_BCG_GO, SPS_BCG_CONVERGED, 1, SPS_BCG_SKIPPED};
            const sps_cplx gs = dslot(16);
            TU_CHECK(gs.re == g_hslots[16].re && gs.re == (n == 0 && mode == 3 ? SPS_BCG_CONVERGED : want[mode]),
                     "%s [%s n=%zu]: stop code gpu %g cpu %g", tag, sps_scalar_name(t), n, gs.re, g_hslots[16].re);
        }
        if (mode == 5) {
            TU_CHECK(isnan(dslot(k.rr).re) && bits_equal(gx, x0, B), "%s [%s n=%zu]: nothing written", tag,
                     sps_scalar_name(t), n);
        } else if (mode == 2 || mode == 6) {
            sps_cplx v = dslot(k.rr);
            TU_CHECK(v.re == -1.0, "%s [%s n=%zu]: rr = %g, want -1", tag, sps_scalar_name(t), n, v.re);
            TU_CHECK(bits_equal(gx, x0, B), "%s [%s n=%zu]: x untouched", tag, sps_scalar_name(t), n);
        } else {
            const double al = cabs_(g_hslots[k.rho]) / cabs_(g_hslots[k.rv]);
            const double om = mode == 1 ? 0 : cabs_(g_hslots[k.ts]) / cabs_(g_hslots[k.tt]);
            char w[64];
            snprintf(w, sizeof w, "%s x", tag);
            cmp_vec(w, t, n, gx, x.h, 8, 2 * (1 + al + om));
            snprintf(w, sizeof w, "%s r", tag);
            cmp_vec(w, t, n, gr, r.h, 6, 2 * (1 + om));
            /* r_i = s_i - omega t_i may cancel: the backends' r_i differ by ulps of |s_i| + |omega| |t_i|,
             * so rr and rhat^H r are compared on the scales sum |r| (|s| + |omega| |t|) and
             * sum |rhat| (|s| + |omega| |t|), not on their (possibly cancelled) values */
            const double sr = sum_abs_prod(t, n, r.h, s.h) + om * sum_abs_prod(t, n, r.h, tt.h);
            const double sh2 = sum_abs_prod(t, n, rh.h, s.h) + om * sum_abs_prod(t, n, rh.h, tt.h);
            snprintf(w, sizeof w, "%s rr", tag);
            cmp_slot(w, t, n, dslot(k.rr), g_hslots[k.rr], red_tol(t, n, g_hslots[k.rr].re) + 12 * tu_eps(t) * sr);
            snprintf(w, sizeof w, "%s rho_new", tag);
            cmp_slot(w, t, n, dslot(k.rho_new), g_hslots[k.rho_new],
                     red_tol(t, n, sum_abs_prod(t, n, rh.h, r.h)) + 6 * tu_eps(t) * sh2);
        }
        free(gx);
        free(gr);
        free(x0);
        gb_free(&rh);
        gb_free(&ph);
        gb_free(&sh);
        gb_free(&s);
        gb_free(&tt);
        gb_free(&x);
        gb_free(&r);
    }
    /* axpy_dot_s: z a third vector, z == y, z == x */
    for (int alias = 0; alias < 3; alias++) {
        slots_random(t);
        sps_scoef c = rand_scoef();
        const double cm = cabs_(sps_scoef_eval(c, g_hslots));
        slot_poison(10);
        gbuf x = gb_rand(t, n), y = gb_rand(t, n), z = gb_rand(t, n);
        const void *zd = alias == 0 ? z.d : alias == 1 ? y.d : x.d;
        const void *zh = alias == 0 ? z.h : alias == 1 ? y.h : x.h;
        /* the dot's scale: sum |z| (|y| + |c| |x|), taken before y += c x can cancel (the
         * two backends round each new y_i differently, by up to an ulp of |y_i| + |c x_i|) */
        const double zs = sum_abs_prod(t, n, zh, y.h) + cm * sum_abs_prod(t, n, zh, x.h);
        RUN_OK(g_gpu, G->axpy_dot_s(sps_ex(g_gpu), N, g_dslots, c, x.d, y.d, zd, 10));
        C->axpy_dot_s(sps_ex(g_cpu), N, g_hslots, c, x.h, y.h, zh, 10);
        g = gb_fetch(&y);
        const char *tag = alias == 0 ? "axpy_dot_s" : alias == 1 ? "axpy_dot_s z=y" : "axpy_dot_s z=x";
        cmp_vec(tag, t, n, g, y.h, 6, 2 * (1 + cm));
        cmp_slot(tag, t, n, dslot(10), g_hslots[10], red_tol(t, n, zs + 1e-300));
        free(g);
        gb_free(&x);
        gb_free(&y);
        gb_free(&z);
    }
    /* scale_s */
    {
        slots_random(t);
        sps_scoef c = rand_scoef();
        const double cm = cabs_(sps_scoef_eval(c, g_hslots));
        gbuf x = gb_rand(t, n);
        RUN_OK(g_gpu, G->scale_s(sps_ex(g_gpu), N, g_dslots, c, x.d));
        C->scale_s(sps_ex(g_cpu), N, g_hslots, c, x.h);
        g = gb_fetch(&x);
        cmp_vec("scale_s", t, n, g, x.h, 4, 2 * cm);
        free(g);
        gb_free(&x);
    }
}

/* ------------------------------------------------------------------ bit-reproducibility */
static void test_determinism(sps_scalar t)
{
    const sps_vec_kernels *G = GK(t);
    const size_t n = g_small ? 70001 : 1000003;
    const sps_index N = (sps_index)n;
    gbuf x = gb_rand(t, n), y = gb_rand(t, n), p = gb_rand(t, n), q = gb_rand(t, n);
    sps_cplx first[8], second[8];
    slots_random(t);
    g_hslots[0] = sps_cplx_make(0.75, 0);
    g_hslots[1] = sps_cplx_make(1.5, 0);
    g_hslots[16] = g_hslots[17] = sps_cplx_make(0, 0);
    for (int rep = 0; rep < 2; rep++) {
        sps_cplx *res = rep ? second : first;
        gb_push(&x);
        gb_push(&y);
        gb_upload(g_dslots, g_hslots, sizeof g_hslots);
        RUN_OK(g_gpu, G->dot(sps_ex(g_gpu), N, x.d, y.d, g_dslots, 10));
        RUN_OK(g_gpu, G->nrm2(sps_ex(g_gpu), N, x.d, g_dslots, 11));
        RUN_OK(g_gpu, G->dot2(sps_ex(g_gpu), N, x.d, y.d, g_dslots, 12, 13));
        RUN_OK(g_gpu, G->cg_step(sps_ex(g_gpu), N, g_dslots, (sps_cg_slots){0, 1, 14, 16, 17}, p.d, q.d, x.d, y.d));
        RUN_OK(g_gpu, G->axpy_dot_s(sps_ex(g_gpu), N, g_dslots, (sps_scoef){1, 2, 3}, p.d, x.d, y.d, 15));
        for (int k = 0; k < 6; k++) res[k] = dslot(10 + k);
    }
    const char *names[6] = {"dot", "nrm2", "dot2 xy", "dot2 xx", "cg_step rr", "axpy_dot_s"};
    for (int k = 0; k < 6; k++)
        TU_CHECK(memcmp(&first[k], &second[k], sizeof(sps_cplx)) == 0,
                 "%s [%s n=%zu] bit-identical over two runs: %.17g vs %.17g", names[k], sps_scalar_name(t), n,
                 first[k].re, second[k].re);
    gb_free(&x);
    gb_free(&y);
    gb_free(&p);
    gb_free(&q);
}

/* ------------------------------------------------------------------ out of device memory */
static void test_oom(void)
{
    /* more than any device has: the message names the bytes */
    void *p = NULL;
    const size_t huge = (size_t)1 << 50;
    sps_status st = sps_dmalloc(g_gpu, &p, huge);
    TU_CHECK(st == SPS_ERR_ALLOC && p == NULL, "1 PiB device allocation -> SPS_ERR_ALLOC (got %s)",
             sps_status_name(st));
    TU_CHECK(strstr(sps_context_error(g_gpu), "1125899906842624") != NULL && strstr(sps_context_error(g_gpu), "bytes"),
             "OOM message names the bytes: %s", sps_context_error(g_gpu));
    /* through the public API: vectors of 2^31-1 c64 (34 GB) until the device is full */
    sps_vector v[16];
    int made = 0;
    st = SPS_OK;
    for (made = 0; made < 16; made++) {
        st = sps_vector_create(g_gpu, INT32_MAX, SPS_C64, &v[made]);
        if (st != SPS_OK) break;
    }
    TU_CHECK(st == SPS_ERR_ALLOC, "sps_vector_create of 34 GB vectors ends in SPS_ERR_ALLOC after %d (got %s)", made,
             sps_status_name(st));
    TU_CHECK(strstr(sps_context_error(g_gpu), "34359738352") != NULL, "vector OOM message names the bytes: %s",
             sps_context_error(g_gpu));
    for (int k = 0; k < made; k++) sps_vector_destroy(v[k]);
    /* the context still works */
    double vals[3] = {3, 4, 12}, nrm = 0;
    sps_vector w = NULL;
    TU_OK(g_gpu, sps_vector_from_host(g_gpu, 3, SPS_F64, vals, &w));
    TU_OK(g_gpu, sps_vector_nrm2(w, &nrm));
    TU_CHECK(nrm == 13.0, "context usable after OOM: ||(3,4,12)|| = %g", nrm);
    TU_OK(g_gpu, sps_context_synchronize(g_gpu));
    sps_vector_destroy(w);
}

int main(void)
{
    int rc = gpu_setup("test_gpu_kernels");
    if (rc) return rc;
    g_dslots = gb_dalloc(sizeof g_hslots);
#ifndef SPS_GPU_TEST_ON_CPU
    test_backend();
#endif
    for (int ti = 0; ti < 4; ti++) {
        for (int si = 0; si < 5; si++) {
            const size_t n = all_sizes[si];
            if (g_small && n > 100000) continue;
            test_blas1(all_types[ti], n);
            test_solver_steps(all_types[ti], n);
        }
        test_determinism(all_types[ti]);
        test_bjacobi(all_types[ti], g_small ? 40 : 3000, 0);
        test_bjacobi(all_types[ti], g_small ? 40 : 3000, 3);
        test_bjacobi(all_types[ti], g_small ? 13 : 500, 7);
    }
    test_nrm2_range(SPS_F64);
    test_nrm2_range(SPS_C64);
#ifndef SPS_GPU_TEST_ON_CPU
    if (!g_small) test_oom();
#endif /* compute-sanitizer reports the (expected) failed allocations */
    sps_dfree(g_gpu, g_dslots);
    gpu_teardown();
    return tu_finish();
}
#else
int main(void)
{
    printf("test_gpu_kernels: libspsolve built without CUDA: skipped\n");
    return TU_SKIP;
}
#endif
