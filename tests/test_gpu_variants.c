/* GPU test of the run-time launch variants (kernels/launch.h): every non-default
 * variant compiled in, of csr_spmv (CSR row groups), hola_spmv and pad_spmv (ELL,
 * SELL), against the CPU reference, every scalar type, on fresh random matrices
 * and vectors (no all-zero data; outputs NaN-poisoned, b = 0 with y = NaN and a
 * random b), per-entry bound from sum |a_ij x_j|; the zero variant gives the
 * bits of a matrix never given one; invalid variants fail with SPS_ERR_ARG (the
 * setter's range check, and a valid but not compiled-in combination at the
 * product) and leave the context usable.  sps_matrix_tune times the model's pick
 * even where its padding exceeds the tuner's bound, and keys its file by whether the
 * values would make a table.
 * Exit 77 (skipped) without a usable CUDA device.  Ends with "N passed, M failed". */
#include "formats/format.h"
#include "spsolve/tune.h"
#include "testutil.h"
#include "test_gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context cpu, gpu;
static tu_rng rng;
static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};

static int rnd(int k) { return k > 0 ? (int)(tu_rng_u64(&rng) % (uint64_t)k) : 0; }
static double eps_of(sps_scalar t) { return t == SPS_F32 || t == SPS_C32 ? 5.96e-8 : 1.11e-16; }
static int is_cplx(sps_scalar t) { return t == SPS_C32 || t == SPS_C64; }
/* component c (0 re, 1 im) of entry i */
static double comp(sps_scalar t, const void *v, size_t i, int c)
{
    switch (t) {
    case SPS_F32: return c ? 0.0 : ((const float *)v)[i];
    case SPS_F64: return c ? 0.0 : ((const double *)v)[i];
    case SPS_C32: return ((const float *)v)[2 * i + c];
    default: return ((const double *)v)[2 * i + c];
    }
}

/* A random CSR pattern: n x n, rows of about avg entries (1 to 2 avg - 1), and
 * nlong rows of long_len entries (the row kernels' medium/long pass). */
static sps_csr_host random_csr(sps_scalar t, int n, int avg, int nlong, int long_len)
{
    sps_csr_host h;
    memset(&h, 0, sizeof h);
    h.n = h.m = n;
    h.t = t;
    h.rowptr = tu_xcalloc((size_t)n + 1, sizeof(sps_index));
    for (int i = 0; i < n; i++) {
        int len = 1 + rnd(2 * avg - 1);
        if (i < nlong) len = long_len;
        if (len > n) len = n;
        h.rowptr[i + 1] = h.rowptr[i] + len;
    }
    h.nnz = h.rowptr[n];
    h.col = tu_xcalloc((size_t)h.nnz, sizeof(sps_index));
    for (int i = 0; i < n; i++) { /* sorted distinct columns: a random start, random gaps */
        const int len = h.rowptr[i + 1] - h.rowptr[i];
        const int room = n - len; /* total extra gap */
        int c = rnd(room / 2 + 1), spare = room - c;
        for (int k = 0; k < len; k++) {
            h.col[h.rowptr[i] + k] = c++;
            if (spare > 0 && rnd(4) == 0) {
                const int g = rnd(spare < 8 ? spare + 1 : 9);
                c += g;
                spare -= g;
            }
        }
    }
    h.val = tu_xcalloc((size_t)h.nnz, sps_scalar_size(t));
    tu_fill_random(&rng, t, (size_t)h.nnz, h.val);
    return h;
}

/* y = a A x + b y0 on B's context; result to yout (host). */
static sps_status run_spmv(sps_matrix B, sps_cplx a, const void *xh, sps_cplx b, const void *y0, void *yout)
{
    return gpu_run_spmv(B, 0, a, xh, B->m, b, y0, B->n, yout);
}

/* |gpu_i - cpu_i| <= f eps (len_i + 2) (|a| sum_k |a_ik||x_k| + |b||y0_i|) per component. */
static int close_to(const sps_csr_host *h, sps_cplx a, const void *x, sps_cplx b, const void *y0, const void *yg,
                    const void *yc, int *worst)
{
    const sps_scalar t = h->t;
    const double an = hypot(a.re, a.im), bn = hypot(b.re, b.im);
    for (int i = 0; i < h->n; i++) {
        double s = 0.0;
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++)
            s += hypot(comp(t, h->val, (size_t)k, 0), comp(t, h->val, (size_t)k, 1)) *
                 hypot(comp(t, x, (size_t)h->col[k], 0), comp(t, x, (size_t)h->col[k], 1));
        double bound = an * s;
        if (bn != 0.0) bound += bn * hypot(comp(t, y0, (size_t)i, 0), comp(t, y0, (size_t)i, 1));
        bound *= 16.0 * eps_of(t) * (double)(h->rowptr[i + 1] - h->rowptr[i] + 2);
        for (int c = 0; c <= is_cplx(t); c++) {
            const double d = fabs(comp(t, yg, (size_t)i, c) - comp(t, yc, (size_t)i, c));
            if (!(d <= bound)) { /* NaN fails */
                *worst = i;
                return 0;
            }
        }
    }
    return 1;
}

/* B (GPU) with variant v against the CPU product of h, b random and b = 0 (y0 NaN). */
static void check_variant(const char *what, const sps_csr_host *h, sps_matrix Bc, sps_matrix Bg,
                          const sps_launch_variant *v)
{
    const sps_scalar t = h->t;
    const size_t ss = sps_scalar_size(t), n = (size_t)h->n;
    void *x = tu_xcalloc(n, ss), *y0 = tu_xcalloc(n, ss), *yc = tu_xcalloc(n, ss), *yg = tu_xcalloc(n, ss);
    if (!TU_OK(gpu, sps_matrix_set_launch_variant(Bg, v))) goto done;
    for (int c = 0; c < 2; c++) {
        tu_fill_random(&rng, t, n, x);
        const sps_cplx a = sps_cplx_make(tu_rng_range(&rng, 0.5, 2), tu_rng_range(&rng, -2, 2));
        const sps_cplx b = c ? sps_cplx_make(0, 0) : sps_cplx_make(tu_rng_range(&rng, -2, 2), tu_rng_range(&rng, -2, 2));
        if (c) tu_fill_nan(t, n, y0);
        else tu_fill_random(&rng, t, n, y0);
        tu_fill_nan(t, n, yc);
        tu_fill_nan(t, n, yg);
        if (!TU_OK(cpu, run_spmv(Bc, a, x, b, y0, yc)) || !TU_OK(gpu, run_spmv(Bg, a, x, b, y0, yg))) continue;
        int worst = -1;
        TU_CHECK(close_to(h, a, x, b, y0, yg, yc, &worst), "%s [%s] (b %s): entry %d differs from the CPU", what,
                 sps_scalar_name(t), c ? "0" : "random", worst);
    }
done:
    sps_matrix_set_launch_variant(Bg, NULL);
    free(x);
    free(y0);
    free(yc);
    free(yg);
}

/* An invalid variant: refused by the setter (set_fails) or by the product; then the
 * context still runs the default. */
static void check_invalid(const char *what, const sps_csr_host *h, sps_matrix Bc, sps_matrix Bg,
                          const sps_launch_variant *v, int set_fails)
{
    const sps_scalar t = h->t;
    const size_t ss = sps_scalar_size(t), n = (size_t)h->n;
    void *x = tu_xcalloc(n, ss), *y0 = tu_xcalloc(n, ss), *yg = tu_xcalloc(n, ss);
    tu_fill_random(&rng, t, n, x);
    tu_fill_random(&rng, t, n, y0);
    sps_status s = sps_matrix_set_launch_variant(Bg, v);
    if (set_fails) {
        TU_CHECK(s == SPS_ERR_ARG, "%s [%s]: the setter accepted an out-of-range variant (status %d)", what,
                 sps_scalar_name(t), (int)s);
    } else if (TU_OK(gpu, s)) {
        s = run_spmv(Bg, sps_cplx_make(1, 0), x, sps_cplx_make(0, 0), y0, yg);
        TU_CHECK(s == SPS_ERR_ARG, "%s [%s]: a variant not compiled in ran (status %d)", what, sps_scalar_name(t),
                 (int)s);
        TU_CHECK(strstr(sps_context_error(gpu), "not compiled in") != NULL, "%s [%s]: message '%s'", what,
                 sps_scalar_name(t), sps_context_error(gpu));
    }
    sps_context_clear_error(gpu);
    sps_matrix_set_launch_variant(Bg, NULL);
    free(x);
    free(y0);
    free(yg);
    check_variant(what, h, Bc, Bg, NULL); /* usable after the refusal */
}

/* A variant out of its field's range, then a valid combination not compiled in;
 * Bg destroyed after. */
static void check_invalid_pair(const char *what, const sps_csr_host *h, sps_matrix Bc, sps_matrix Bg,
                               const sps_launch_variant *range, const sps_launch_variant *combo)
{
    char w[128];
    snprintf(w, sizeof w, "%s: out of range", what);
    check_invalid(w, h, Bc, Bg, range, 1);
    snprintf(w, sizeof w, "%s: not compiled in", what);
    check_invalid(w, h, Bc, Bg, combo, 0);
    sps_matrix_destroy(Bg);
}

/* h on the GPU in format fmt with one option set (name = value); NULL on failure. */
static sps_matrix from_host_with(const sps_csr_host *h, sps_format fmt, const char *name, const char *value)
{
    sps_options o = NULL;
    sps_matrix B = NULL;
    if (TU_OK(gpu, sps_format_options_create(fmt, &o)))
        TU_CHECK(sps_options_set(o, name, value) == SPS_OK, "%s", sps_options_error(o));
    if (!TU_OK(gpu, sps_matrix_from_csr_host(gpu, h, fmt, o, SPS_SYM_GENERAL, &B))) B = NULL;
    sps_options_destroy(o);
    return B;
}

/* Each spec of specs (field=value,... of kernels/launch.h) against the CPU, then
 * bad0 (a value never compiled in) and bad1 (a combination not compiled in) refused;
 * Bg is destroyed. */
static void check_specs(const char *what, const sps_csr_host *h, sps_matrix Bc, sps_matrix Bg,
                        const char *const *specs, int n, const char *bad0, const char *bad1)
{
    char why[160];
    sps_launch_variant v, bad[2];
    for (int i = 0; i < n; i++)
        if (TU_CHECK(sps_launch_variant_parse(specs[i], &v, why, sizeof why) == 0, "%s", why))
            check_variant(specs[i], h, Bc, Bg, &v);
    if (TU_CHECK(sps_launch_variant_parse(bad0, &bad[0], why, sizeof why) == 0, "%s", why) &&
        TU_CHECK(sps_launch_variant_parse(bad1, &bad[1], why, sizeof why) == 0, "%s", why))
        check_invalid_pair(what, h, Bc, Bg, &bad[0], &bad[1]); /* destroys Bg */
    else
        sps_matrix_destroy(Bg);
}

/* The variants compiled in (kernels/cuda/csr.cu, hola.cu, padded.cu), by type. */
static void test_csr(const sps_csr_host *h, sps_matrix Bc)
{
    const sps_scalar t = h->t;
    const int small = t == SPS_F32, wide = t == SPS_C64; /* 4-byte values; 16-byte values */
    sps_matrix Bg = from_host_with(h, SPS_FMT_CSR, "csr-kernel", "rows");
    if (!Bg) return;
    sps_launch_variant v[4];
    memset(v, 0, sizeof v);
    v[0].csr_lane_entries = small ? 2 : wide ? 2 : 1;
    v[1].csr_unroll = small ? 2 : 4;
    v[2].csr_stage_rows = small ? 2 : 1;
    v[3].csr_minb = small ? 6 : 4;
    static const char *names[4] = {"csr lane_entries", "csr unroll", "csr stage_rows", "csr minb"};
    for (int i = 0; i < 4; i++) check_variant(names[i], h, Bc, Bg, &v[i]);
    /* zero variant: the default kernel's bits */
    {
        const size_t ss = sps_scalar_size(t), n = (size_t)h->n;
        void *x = tu_xcalloc(n, ss), *y0 = tu_xcalloc(n, ss), *y1 = tu_xcalloc(n, ss), *y2 = tu_xcalloc(n, ss);
        sps_launch_variant z;
        memset(&z, 0, sizeof z);
        tu_fill_random(&rng, t, n, x);
        tu_fill_random(&rng, t, n, y0);
        const sps_cplx a = sps_cplx_make(1.5, -0.5), b = sps_cplx_make(0.25, 1);
        if (TU_OK(gpu, run_spmv(Bg, a, x, b, y0, y1)) && TU_OK(gpu, sps_matrix_set_launch_variant(Bg, &z)) &&
            TU_OK(gpu, run_spmv(Bg, a, x, b, y0, y2)))
            TU_CHECK(memcmp(y1, y2, n * ss) == 0, "csr [%s]: the zero variant changed the bits", sps_scalar_name(t));
        free(x);
        free(y0);
        free(y1);
        free(y2);
    }
    sps_launch_variant bad[2];
    memset(bad, 0, sizeof bad);
    bad[0].csr_unroll = 3;
    bad[1].csr_unroll = v[1].csr_unroll; /* two knobs moved */
    bad[1].csr_minb = v[3].csr_minb;
    check_invalid_pair("csr", h, Bc, Bg, &bad[0], &bad[1]);
}

static void test_hola(const sps_csr_host *h, sps_matrix Bc)
{
    sps_matrix Bg = NULL;
    if (!TU_OK(gpu, sps_matrix_from_csr_host(gpu, h, SPS_FMT_HOLA, NULL, SPS_SYM_GENERAL, &Bg))) return;
    static const char *const specs[] = {"hola_early_mul=1,hola_minb=5", "hola_early_mul=1,hola_minb=5,hola_out_div=2",
                                        "hola_early_mul=1,hola_minb=6", "hola_minb=5", "hola_ldg=1"};
    /* e6 with a halved buffer is not compiled in */
    check_specs("hola", h, Bc, Bg, specs, 5, "hola_early_mul=2", "hola_early_mul=1,hola_minb=6,hola_out_div=2");
}

static void test_padded(const sps_csr_host *h, sps_matrix Bc, sps_format fmt)
{
    sps_matrix Bg = from_host_with(h, fmt, "force", "true");
    if (!Bg) return;
    static const char *const specs[] = {"pad_unroll=8", "pad_minb=4",  "pad_ldg=1",  "pad_split=1",
                                        "pad_split=2",  "pad_split=4", "pad_lean=1", "pad_lean=2"};
    check_specs("pad", h, Bc, Bg, specs, 8, "pad_split=3", "pad_unroll=8,pad_ldg=1"); /* two knobs moved */
}

/* sps_matrix_tune on the GPU, where the model's pick is a candidate of its own: a
 * small matrix of short rows of varying length (rule 5: ELL, padded about 6x, past
 * the tuner's max_fill of 2) gets its "ell" timed, not pruned by the padding bound
 * (auto builds it whatever its padding); the chosen matrix multiplies as the CPU. */
static void test_tune_model_pick(sps_scalar t)
{
    sps_csr_host h = random_csr(t, 3001, 3, 4, 24);
    sps_matrix Bc = NULL, Ag = NULL, Bg = NULL;
    sps_format model = SPS_FMT_CSR;
    sps_tune_options o;
    sps_tune_result r;
    sps_tune_options_default(&o);
    o.cache = "off";
    if (!TU_OK(cpu, sps_matrix_from_csr_host(cpu, &h, SPS_FMT_CSR, NULL, SPS_SYM_GENERAL, &Bc)) ||
        !TU_OK(gpu, sps_matrix_from_csr_host(gpu, &h, SPS_FMT_CSR, NULL, SPS_SYM_GENERAL, &Ag)) ||
        !TU_OK(gpu, sps_matrix_auto_format(Ag, &model, NULL)))
        goto done;
    TU_CHECK(model == SPS_FMT_ELL, "tune [%s]: the model picks %s for short varying rows, expected ell",
             sps_scalar_name(t), sps_format_name(model));
    if (!TU_OK(gpu, sps_matrix_tune(Ag, &o, &Bg, &r))) goto done;
    int timed = 0;
    for (int i = 0; i < r.ncandidates; i++)
        if (strcmp(r.candidates[i].spec, "ell") == 0) timed = r.candidates[i].ms >= 0;
    TU_CHECK(timed, "tune [%s]: the model's pick (ell) was not timed", sps_scalar_name(t));
    TU_CHECK(r.timed >= 2 && r.chosen_ms > 0 && r.default_ms > 0 && !r.from_model,
             "tune [%s]: %d timed, chosen %g ms, csr %g ms", sps_scalar_name(t), r.timed, r.chosen_ms, r.default_ms);
    check_variant(r.choice, &h, Bc, Bg, NULL);
done:
    sps_matrix_destroy(Bg);
    sps_matrix_destroy(Ag);
    sps_matrix_destroy(Bc);
    sps_csr_host_free(&h);
}

/* The tuning file's key tells values a table would hold from values it cannot: on the GPU
 * values auto keeps a large padded or DIA store of few values as a byte a slot, which
 * changes the fastest format, so a pattern tuned with 3 values is tuned again with random
 * ones (the CPU keys the pattern alone: test_tune), and each comes back from the file after. */
static void test_tune_key_values(void)
{
    sps_csr_host h = random_csr(SPS_F64, 3001, 7, 0, 0);
    const char *cache = "test_gpu_variants_tune.json";
    remove(cache);
    void *random_vals = h.val, *few = tu_xcalloc((size_t)h.nnz + 1, sizeof(double));
    static const double pool[3] = {1.5, -2.0, 0.25};
    for (int64_t k = 0; k < h.nnz; k++) tu_put(SPS_F64, few, (size_t)k, pool[k % 3], 0.0);
    sps_matrix A3 = NULL, Ar = NULL, B = NULL;
    h.val = few;
    const int ok3 = TU_OK(gpu, sps_matrix_from_csr_host(gpu, &h, SPS_FMT_CSR, NULL, SPS_SYM_GENERAL, &A3));
    h.val = random_vals;
    if (!ok3 || !TU_OK(gpu, sps_matrix_from_csr_host(gpu, &h, SPS_FMT_CSR, NULL, SPS_SYM_GENERAL, &Ar))) goto done;
    sps_tune_options o;
    sps_tune_options_default(&o);
    o.cache = cache;
    o.budget = 0.5;
    for (int round = 0; round < 2; round++)
        for (int which = 0; which < 2; which++) {
            sps_tune_result r;
            if (!TU_OK(gpu, sps_matrix_tune(which ? Ar : A3, &o, &B, &r))) goto done;
            sps_matrix_destroy(B), B = NULL;
            TU_CHECK(r.from_cache == round, "tune key: %s values, round %d: from the file %d, expected %d",
                     which ? "random" : "3", round, r.from_cache, round);
        }
    FILE *f = fopen(cache, "rb");
    char text[8192] = {0};
    if (f) (void)!fread(text, 1, sizeof text - 1, f), fclose(f);
    const char *at = strstr(text, "values=table");
    TU_CHECK(at && !strstr(at + 1, "values=table"), "tune key: the file keys the 3-valued matrix alone as values=table");
done:
    sps_matrix_destroy(B);
    sps_matrix_destroy(Ar);
    sps_matrix_destroy(A3);
    free(few);
    sps_csr_host_free(&h);
    remove(cache);
}

int main(void)
{
    const int rc = gpu_setup("test_gpu_variants");
    if (rc) return rc;
    cpu = g_cpu;
    gpu = g_gpu;
    tu_rng_seed(&rng, 90217);
    /* short rows; rows of ~40 with long ones (medium/long pass, 2-4 threads a padded
     * row); > 300k entries (Hola's 8 a thread) */
    const struct { int n, avg, nlong, long_len; } shapes[] = {{3001, 7, 0, 0}, {2003, 40, 3, 1800}, {40009, 9, 0, 0}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int ti = 0; ti < 4; ti++) {
            sps_csr_host h = random_csr(all_types[ti], shapes[s].n, shapes[s].avg, shapes[s].nlong, shapes[s].long_len);
            sps_matrix Bc = NULL;
            if (TU_OK(cpu, sps_matrix_from_csr_host(cpu, &h, SPS_FMT_CSR, NULL, SPS_SYM_GENERAL, &Bc))) {
                test_csr(&h, Bc);
                test_hola(&h, Bc);
                test_padded(&h, Bc, SPS_FMT_SELL);
                if (shapes[s].nlong == 0) test_padded(&h, Bc, SPS_FMT_ELL);
            }
            sps_matrix_destroy(Bc);
            sps_csr_host_free(&h);
        }
    test_tune_model_pick(SPS_F64);
    test_tune_model_pick(SPS_F32);
    test_tune_key_values();
    gpu_teardown();
    return tu_finish();
}
