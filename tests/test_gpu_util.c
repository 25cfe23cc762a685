/* Helpers of the GPU tests: see test_gpu_util.h. */
#include "test_gpu_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

sps_context g_cpu, g_gpu;
tu_rng g_rng;
int g_small;

int gpu_setup(const char *name)
{
    const char *sm = getenv("SPS_GPU_TEST_SMALL");
    g_small = sm && *sm && strcmp(sm, "0") != 0;
    tu_rng_seed(&g_rng, 20261122);
#ifdef SPS_GPU_TEST_ON_CPU
    sps_context_create(&g_cpu, SPS_BACKEND_CPU, 0);
    sps_context_create(&g_gpu, SPS_BACKEND_CPU, 0);
    printf("%s: SPS_GPU_TEST_ON_CPU: the CPU table stands in for the GPU\n", name);
    return 0;
#endif
    if (!sps_cuda_compiled()) {
        printf("%s: libspsolve built without CUDA: skipped\n", name);
        return TU_SKIP;
    }
    if (!sps_cuda_available()) {
        printf("%s: no usable CUDA device: skipped\n", name);
        return TU_SKIP;
    }
    if (sps_context_create(&g_cpu, SPS_BACKEND_CPU, 0) != SPS_OK) {
        fprintf(stderr, "%s: cannot create a CPU context\n", name);
        return 1;
    }
    sps_status st = sps_context_create(&g_gpu, SPS_BACKEND_CUDA, 0);
    if (st != SPS_OK) {
        fprintf(stderr, "%s: cannot create a CUDA context: %s\n", name, sps_context_error(g_gpu));
        return 1;
    }
    printf("%s: device %s%s\n", name, sps_context_device_name(g_gpu), g_small ? " (small sizes)" : "");
    return 0;
}

void gpu_teardown(void)
{
    sps_context_destroy(g_gpu);
    sps_context_destroy(g_cpu);
}

void *gb_xmalloc(size_t bytes)
{
    void *p = calloc(1, bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}

void *gb_dalloc(size_t bytes)
{
    void *d = NULL;
    if (sps_dmalloc(g_gpu, &d, bytes) != SPS_OK) {
        fprintf(stderr, "device allocation of %zu bytes failed: %s\n", bytes, sps_context_error(g_gpu));
        exit(2);
    }
    return d;
}

void gb_upload(void *d, const void *h, size_t bytes)
{
    if (sps_dcopy(g_gpu, d, h, bytes, SPS_COPY_H2D) != SPS_OK) {
        fprintf(stderr, "upload failed: %s\n", sps_context_error(g_gpu));
        exit(2);
    }
}

void gb_download(void *h, const void *d, size_t bytes)
{
    if (sps_dcopy(g_gpu, h, d, bytes, SPS_COPY_D2H) != SPS_OK) {
        fprintf(stderr, "download failed: %s\n", sps_context_error(g_gpu));
        exit(2);
    }
}

static gbuf gb_alloc(sps_scalar t, size_t n)
{
    gbuf b;
    b.t = t;
    b.n = n;
    b.h = gb_xmalloc(n * sps_scalar_size(t));
    b.d = gb_dalloc(n * sps_scalar_size(t));
    return b;
}

void gb_push(gbuf *b) { gb_upload(b->d, b->h, b->n * sps_scalar_size(b->t)); }

gbuf gb_rand(sps_scalar t, size_t n)
{
    gbuf b = gb_alloc(t, n);
    tu_fill_random(&g_rng, t, n, b.h);
    gb_push(&b);
    return b;
}

gbuf gb_nan(sps_scalar t, size_t n)
{
    gbuf b = gb_alloc(t, n);
    tu_fill_nan(t, n, b.h);
    gb_push(&b);
    return b;
}

gbuf gb_from(sps_scalar t, size_t n, const void *host)
{
    gbuf b = gb_alloc(t, n);
    if (n) memcpy(b.h, host, n * sps_scalar_size(t));
    gb_push(&b);
    return b;
}

void *gb_fetch(const gbuf *b)
{
    void *h = gb_xmalloc(b->n * sps_scalar_size(b->t));
    gb_download(h, b->d, b->n * sps_scalar_size(b->t));
    return h;
}

void gb_free(gbuf *b)
{
    free(b->h);
    sps_dfree(g_gpu, b->d);
    b->h = b->d = NULL;
}

double cabs_(sps_cplx c) { return hypot(c.re, c.im); }

double gb_maxabs(sps_scalar t, size_t n, const void *v)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double re, im;
        tu_get(t, v, i, &re, &im);
        double a = hypot(re, im);
        if (a > m || a != a) m = a;
    }
    return m;
}

static void cmp_core(const char *what, sps_scalar t, size_t n, const void *gpu, const void *cpu, double f, double scale,
                     const double *scales)
{
    const double eps = tu_eps(t);
    size_t bad = 0, first = 0;
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double gr, gi, cr, ci;
        tu_get(t, gpu, i, &gr, &gi);
        tu_get(t, cpu, i, &cr, &ci);
        const double d = hypot(gr - cr, gi - ci);
        const double tol = f * eps * (scales ? scales[i] : scale);
        if (!(d <= tol)) {
            if (!bad) first = i;
            bad++;
        }
        if (d > worst || d != d) worst = d;
    }
    if (bad) {
        double gr, gi, cr, ci;
        tu_get(t, gpu, first, &gr, &gi);
        tu_get(t, cpu, first, &cr, &ci);
        TU_CHECK(0, "%s [%s n=%zu]: %zu entries differ; first %zu: gpu (%.10g, %.10g) cpu (%.10g, %.10g) tol %.3g",
                 what, sps_scalar_name(t), n, bad, first, gr, gi, cr, ci, f * eps * (scales ? scales[first] : scale));
    } else {
        TU_CHECK(1, "%s", what);
    }
}

void cmp_vec(const char *what, sps_scalar t, size_t n, const void *gpu, const void *cpu, double f, double scale)
{
    cmp_core(what, t, n, gpu, cpu, f, scale, NULL);
}

void cmp_vec_s(const char *what, sps_scalar t, size_t n, const void *gpu, const void *cpu, double f,
               const double *scale)
{
    cmp_core(what, t, n, gpu, cpu, f, 0, scale);
}

void cmp_slot(const char *what, sps_scalar t, size_t n, sps_cplx g, sps_cplx c, double tol)
{
    const double d = hypot(g.re - c.re, g.im - c.im);
    TU_CHECK(d <= tol || (g.re == c.re && g.im == c.im),
             "%s [%s n=%zu]: gpu (%.17g, %.17g) cpu (%.17g, %.17g) |diff| %.3g > tol %.3g", what, sps_scalar_name(t), n,
             g.re, g.im, c.re, c.im, d, tol);
}

sps_status gpu_run_spmv(sps_matrix B, int trans, sps_cplx a, const void *xh, int nin, sps_cplx b, const void *y0,
                        int nout, void *yout)
{
    sps_context c = B->ctx;
    sps_vector x = NULL, y = NULL;
    sps_operator op = NULL;
    unsigned char ab[16], bb[16];
    sps_cplx_store(B->t, a, ab);
    sps_cplx_store(B->t, b, bb);
    sps_status s = sps_vector_from_host(c, nin, B->t, xh, &x);
    if (s == SPS_OK) s = sps_vector_from_host(c, nout, B->t, y0, &y);
    if (s == SPS_OK) s = sps_operator_from_matrix(B, &op);
    if (s == SPS_OK) s = sps_operator_apply(op, trans ? SPS_OP_T : SPS_OP_N, ab, x, bb, y);
    if (s == SPS_OK) s = sps_vector_get(y, yout);
    sps_operator_destroy(op);
    sps_vector_destroy(x);
    sps_vector_destroy(y);
    return s;
}
