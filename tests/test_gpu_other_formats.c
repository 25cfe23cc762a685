/* GPU tests of HYB, JDS and DIA: the CUDA backend's build and SpMV / SpMV^T
 * against the CPU backend on the same inputs, f32/f64/c32/c64.
 *   - build on the device from a device CSR (from_backend_csr: row-length
 *     histogram, CUB radix sort / scan, fills) and from COO (host from_csr):
 *     the exported CSR is bitwise the input (explicit zeros and -0.0 kept), and
 *     sps_matrix_info (bytes, stored entries, fill) equals the CPU build's;
 *   - DIA refuses the same matrices with the same message on both backends;
 *   - SpMV and SpMV^T, y poisoned with NaN, alpha/beta default, random, and
 *     beta = 0 with NaN in y: per entry |gpu - cpu| <= 4 (cnt + 4) eps scale_i
 *     (scale_i = |alpha| sum |a_ij x_j| + |beta y_i|);
 *   - the kernels documented as bit-reproducible (JDS, DIA and HYB SpMV, DIA
 *     SpMV^T) give the same bits on a second run.
 * Exits 77 (skipped) without a usable CUDA device.  SPS_GPU_TEST_SMALL=1 skips
 * the largest shapes (compute-sanitizer runs).  Ends with "N passed, M failed". */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context cpu, gpu;
static tu_rng rng;
static int small_only;
static const sps_format my_formats[3] = {SPS_FMT_HYB, SPS_FMT_JDS, SPS_FMT_DIA};

static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }
static const char *fn(sps_format f) { return sps_format_name(f); }

/* ------------------------------------------------------------------ shapes (testutil's builders) */
static int nshapes;
static tu_shape shapes[32];
static void build_shapes(void)
{
    int *len = tu_xcalloc(400000, sizeof *len);
    for (int i = 0; i < 100; i++)
        len[i] = (i < 4 || (i >= 31 && i <= 33) || (i >= 64 && i < 96)) ? 0 : (int)(tu_rng_u64(&rng) % 10);
    shapes[nshapes++] = tu_shape_make(&rng, "random 100x90, empty rows at 32-row borders", 100, 90, len, -1);
    for (int i = 0; i < 30; i++) len[i] = i == 11 ? 300 : (int)(tu_rng_u64(&rng) % 3);
    shapes[nshapes++] = tu_shape_make(&rng, "one dense row", 30, 300, len, -1);
    len[0] = 1;
    shapes[nshapes++] = tu_shape_make(&rng, "1x1", 1, 1, len, -1);
    len[0] = 0;
    shapes[nshapes++] = tu_shape_make(&rng, "1x1 no entry", 1, 1, len, -1);
    for (int i = 0; i < 200; i++) len[i] = (int)(tu_rng_u64(&rng) % 2);
    shapes[nshapes++] = tu_shape_make(&rng, "200x1", 200, 1, len, -1);
    len[0] = 700;
    shapes[nshapes++] = tu_shape_make(&rng, "1x1000", 1, 1000, len, -1);
    /* JDS's GPU row classes (long_row = 4 x mean = 32 here): 2 block rows, 10 warp rows */
    for (int i = 0; i < 2000; i++) len[i] = i == 3 ? 5000 : i == 1700 ? 4000 : i % 200 == 9 ? 100 : 2;
    shapes[nshapes++] = tu_shape_make(&rng, "2000x6000, JDS warp and block rows", 2000, 6000, len, -1);
    for (int i = 0; i < 80; i++) len[i] = i % 5 != 2;
    shapes[nshapes++] = tu_shape_make(&rng, "all entries in column 17", 80, 50, len, 17);
    for (int i = 0; i < 25; i++) len[i] = 0;
    shapes[nshapes++] = tu_shape_make(&rng, "25x25 no entries", 25, 25, len, -1);
    shapes[nshapes++] = tu_shape_make(&rng, "0x0", 0, 0, len, -1);
    shapes[nshapes++] = tu_shape_make(&rng, "0x7", 0, 7, len, -1);
    shapes[nshapes++] = tu_shape_make(&rng, "7x0", 7, 0, len, -1);
    for (int i = 0; i < 3000; i++) len[i] = i == 1500 ? 2500 : (int)(tu_rng_u64(&rng) % 6);
    shapes[nshapes++] = tu_shape_make(&rng, "3000x2600 with one long row", 3000, 2600, len, -1);
    shapes[nshapes++] = tu_shape_band(&rng, "tridiagonal 1000x1000", 1000, 1000, -1, 1, 1.0);
    shapes[nshapes++] = tu_shape_band(&rng, "band 300x200, offsets -5..3", 300, 200, -5, 3, 0.8);
    shapes[nshapes++] = tu_shape_band(&rng, "band 200x300, offsets -2..40", 200, 300, -2, 40, 0.3);
    shapes[nshapes++] = tu_shape_band(&rng, "band 77x77, offsets -70..70", 77, 77, -70, 70, 0.5);
    for (int i = 0; i < 5000; i++) len[i] = i % 100 == 7 ? 40 : (i % 33 == 5 ? 0 : 3);
    shapes[nshapes++] = tu_shape_make(&rng, "hyb rule 5000 rows (K = 3, tail)", 5000, 5000, len, -1);
    for (int i = 0; i < 12288; i++) len[i] = i % 3 == 0 ? 4 : 1;
    shapes[nshapes++] = tu_shape_make(&rng, "hyb boundary 12288 rows (K = 4)", 12288, 12288, len, -1);
    if (!small_only) {
        for (int i = 0; i < 30000; i++) len[i] = i % 20 < 8 ? 2 : i % 20 < 15 ? 5 : 9;
        for (int i = 32; i < 64; i++) len[i] = 0;
        len[20001] = 2000;
        shapes[nshapes++] = tu_shape_make(&rng, "hyb rule 30000x25000 (K = 5, tail, dense row)", 30000, 25000, len, -1);
        /* mean 12 -> long_row 48: 1100 block rows (more than the 1024 blocks: grid-stride), 1630 warp rows */
        for (int i = 0; i < 400000; i++)
            len[i] = i % 181 == 0 && i < 181 * 1100 ? 2500 : i % 61 == 0 && i < 100000 ? 100 + i % 300 : 4;
        shapes[nshapes++] = tu_shape_make(&rng, "400000x50000, 1100 rows of 2500, 1630 of 100..399", 400000, 50000, len, -1);
        /* many rows (grid-stride loops, several radix-sort passes), band: DIA builds */
        shapes[nshapes++] = tu_shape_band(&rng, "band 250000x250000, offsets -3..3, 90% kept", 250000, 250000, -3, 3, 0.9);
        for (int i = 0; i < 250000; i++) len[i] = (int)(tu_rng_u64(&rng) % 16) + (i % 997 == 0 ? 500 : 0);
        shapes[nshapes++] = tu_shape_make(&rng, "random 250000x200000, lengths 0..15 and 500", 250000, 200000, len, -1);
    }
    free(len);
}

static void compare_spmv(const char *what, sps_format f, const tu_csr *h, sps_matrix Bc, sps_matrix Bg)
{
    const sps_scalar t = h->info.scalar;
    const int n = h->info.rows, m = h->info.cols;
    for (int mode = 0; mode < 2; mode++)
        for (int ab = 0; ab < TU_AB_COUNT; ab++) {
            const int nin = mode == SPS_OP_N ? m : n, nout = mode == SPS_OP_N ? n : m;
            void *x = tu_xcalloc((size_t)nin, ssz(t)), *y0 = tu_xcalloc((size_t)nout, ssz(t));
            tu_fill_random(&rng, t, (size_t)nin, x);
            if (ab == TU_AB_RANDOM) tu_fill_random(&rng, t, (size_t)nout, y0);
            else tu_fill_nan(t, (size_t)nout, y0);
            tu_coefs k;
            tu_draw_coefs(&rng, t, ab, &k);
            const void *pa = ab == TU_AB_DEFAULT ? NULL : k.alpha, *pb = ab == TU_AB_DEFAULT ? NULL : k.beta;
            void *yc = tu_apply(cpu, Bc, (sps_op_mode)mode, t, nin, nout, x, y0, pa, pb, NULL);
            void *yg = tu_apply(gpu, Bg, (sps_op_mode)mode, t, nin, nout, x, y0, pa, pb, NULL);
            /* per entry 4 (cnt + 4) (|alpha| sum |a_ij x_j| + |beta y0_i|) */
            double *scale = tu_spmv_scales(h, (sps_op_mode)mode, x, &k, y0);
            long bad = 0;
            int first = -1;
            for (int o = 0; o < nout; o++) {
                double gr, gi, cr, ci;
                tu_get(t, yg, (size_t)o, &gr, &gi);
                tu_get(t, yc, (size_t)o, &cr, &ci);
                if (!(hypot(gr - cr, gi - ci) <= tu_eps(t) * scale[o])) {
                    if (first < 0) first = o;
                    bad++;
                }
            }
            if (first >= 0) {
                double gr, gi, cr, ci;
                tu_get(t, yg, (size_t)first, &gr, &gi);
                tu_get(t, yc, (size_t)first, &cr, &ci);
                TU_CHECK(0, "%s: SpMV%s (%s): %ld entries differ from the CPU, first y[%d] gpu (%g,%g) cpu (%g,%g)", what,
                         mode ? "^T" : "", tu_ab_name[ab], bad, first, gr, gi, cr, ci);
            } else {
                TU_CHECK(1, "ok");
            }
            /* bit-reproducible kernels: a second run gives the same bits */
            if (mode == SPS_OP_N || f == SPS_FMT_DIA) {
                void *yg2 = tu_apply(gpu, Bg, (sps_op_mode)mode, t, nin, nout, x, y0, pa, pb, NULL);
                TU_CHECK(memcmp(yg, yg2, (size_t)nout * ssz(t)) == 0, "%s: SpMV%s (%s) not reproducible on the GPU", what,
                         mode ? "^T" : "", tu_ab_name[ab]);
                free(yg2);
            }
            free(x);
            free(y0);
            free(yc);
            free(yg);
            free(scale);
        }
}

static void test_shape(const tu_shape *sh, sps_scalar t, sps_format f)
{
    char what[256];
    snprintf(what, sizeof what, "%s [%s %s]", sh->name, fn(f), tn(t));
    tu_csr h0 = tu_shape_csr(sh, t, tu_shape_values(&rng, t, sh->nnz, 1));
    sps_matrix Ac = NULL, Ag = NULL, Agcoo = NULL, Bc = NULL, Bg = NULL, Bg2 = NULL;
    if (!TU_OK(cpu, sps_matrix_from_csr(cpu, sh->n, sh->m, sh->rowptr, sh->col, h0.val, t, &Ac)) ||
        !TU_OK(gpu, sps_matrix_from_csr(gpu, sh->n, sh->m, sh->rowptr, sh->col, h0.val, t, &Ag)) ||
        !TU_OK(gpu, sps_matrix_convert(Ag, SPS_FMT_COO, NULL, &Agcoo)))
        goto out;
    const sps_status sc = sps_matrix_convert(Ac, f, NULL, &Bc); /* the defaults */
    const sps_status sg = sps_matrix_convert(Ag, f, NULL, &Bg);
    TU_CHECK(sc == sg, "%s: CPU build %s, GPU build %s (%s)", what, sps_status_name(sc), sps_status_name(sg),
             sps_context_error(gpu));
    if (sc != SPS_OK || sg != SPS_OK) {
        TU_CHECK(f == SPS_FMT_DIA && sc == SPS_ERR_ARG && strcmp(sps_context_error(cpu), sps_context_error(gpu)) == 0,
                 "%s: refusal differs: cpu '%s' gpu '%s'", what, sps_context_error(cpu), sps_context_error(gpu));
        sps_context_clear_error(cpu);
        sps_context_clear_error(gpu);
        goto out;
    }
    TU_OK(gpu, sps_matrix_convert(Agcoo, f, NULL, &Bg2));
    sps_matrix_info_t ic, ig;
    if (TU_OK(cpu, sps_matrix_info(Bc, &ic)) && TU_OK(gpu, sps_matrix_info(Bg, &ig)))
        TU_CHECK(ic.bytes == ig.bytes && ic.stored_entries == ig.stored_entries && ic.fill_percent == ig.fill_percent &&
                     ig.backend == SPS_BACKEND_CUDA && ig.format == f,
                 "%s: info cpu %zu bytes %lld stored, gpu %zu bytes %lld stored (backend %d)", what, ic.bytes,
                 (long long)ic.stored_entries, ig.bytes, (long long)ig.stored_entries, (int)ig.backend);
    TU_CHECK_EXPORT(gpu, Bg, &h0, "%s: device build (from device CSR) does not round-trip bitwise", what);
    if (Bg2) TU_CHECK_EXPORT(gpu, Bg2, &h0, "%s: device build (from host CSR) does not round-trip bitwise", what);
    compare_spmv(what, f, &h0, Bc, Bg);
out:
    TU_DESTROY_MATRICES(Ac, Ag, Agcoo, Bc, Bg, Bg2);
    free(h0.val);
}

/* DIA with force on the GPU; a generated stencil in every format. */
static void test_misc(sps_scalar t)
{
    sps_matrix Ac = NULL, Ag = NULL;
    if (TU_OK(gpu, sps_matrix_generate(gpu, small_only ? "poisson3d:12" : "poisson3d:40", t, &Ag)) &&
        TU_OK(cpu, sps_matrix_generate(cpu, small_only ? "poisson3d:12" : "poisson3d:40", t, &Ac))) {
        tu_csr h;
        if (tu_export_csr(cpu, Ac, &h)) {
            for (int fi = 0; fi < 3; fi++) {
                sps_matrix Bc = NULL, Bg = NULL;
                char what[128];
                snprintf(what, sizeof what, "poisson3d [%s %s]", fn(my_formats[fi]), tn(t));
                if (TU_OK(cpu, sps_matrix_convert(Ac, my_formats[fi], NULL, &Bc)) &&
                    TU_OK(gpu, sps_matrix_convert(Ag, my_formats[fi], NULL, &Bg))) {
                    TU_CHECK_EXPORT(gpu, Bg, &h, "%s: round trip", what);
                    compare_spmv(what, my_formats[fi], &h, Bc, Bg);
                }
                sps_matrix_destroy(Bc);
                sps_matrix_destroy(Bg);
            }
            tu_csr_free(&h);
        }
    }
    sps_matrix_destroy(Ac);
    sps_matrix_destroy(Ag);
    /* DIA's values (formats/vdict.h): dict on both backends (poisson3d's values and padding's zero:
       the same table); auto: a table on the GPU from SPS_VDICT_AUTO_SLOTS slots (poisson3d:64, 1.8M
       slots), plain values on the CPU, the same products */
    for (int k = 0; k < (small_only ? 1 : 2); k++) {
        const char *gen = k ? "poisson3d:64" : "poisson3d:12";
        sps_options o = k ? NULL : tu_fopts(SPS_FMT_DIA, "values", "dict", NULL);
        sps_matrix Bc = NULL, Bg = NULL;
        Ac = Ag = NULL;
        tu_csr h;
        char what[128];
        snprintf(what, sizeof what, "%s DIA values %s [%s]", gen, k ? "auto" : "dict", tn(t));
        if (TU_OK(gpu, sps_matrix_generate(gpu, gen, t, &Ag)) && TU_OK(cpu, sps_matrix_generate(cpu, gen, t, &Ac)) &&
            TU_OK(cpu, sps_matrix_convert(Ac, SPS_FMT_DIA, o, &Bc)) && TU_OK(gpu, sps_matrix_convert(Ag, SPS_FMT_DIA, o, &Bg)) &&
            tu_export_csr(cpu, Ac, &h)) {
            sps_matrix_info_t ic, ig;
            if (TU_OK(cpu, sps_matrix_info(Bc, &ic)) && TU_OK(gpu, sps_matrix_info(Bg, &ig))) {
                const size_t slots = (size_t)ig.stored_entries, ss = ssz(t);
                /* dict: both one byte a slot and a table of 3 values; auto: the GPU's so, the CPU's plain */
                TU_CHECK(ig.bytes + (k ? slots * (ss - 1) - 3 * ss : 0) == ic.bytes && ic.stored_entries == ig.stored_entries,
                         "%s: %zu bytes on the CPU, %zu on the GPU (%zu slots)", what, ic.bytes, ig.bytes, slots);
            }
            TU_CHECK_EXPORT(gpu, Bg, &h, "%s: round trip", what);
            compare_spmv(what, SPS_FMT_DIA, &h, Bc, Bg);
            tu_csr_free(&h);
        }
        sps_options_destroy(o);
        TU_DESTROY_MATRICES(Ac, Ag, Bc, Bg);
    }
    /* force: a scattered matrix in DIA on the device */
    const tu_shape *sh = &shapes[0];
    void *val = tu_xcalloc((size_t)sh->nnz, ssz(t));
    tu_fill_random(&rng, t, (size_t)sh->nnz, val);
    sps_options opt = tu_fopts(SPS_FMT_DIA, "force", "true", NULL);
    sps_matrix B = NULL;
    Ag = NULL;
    if (TU_OK(gpu, sps_matrix_from_csr(gpu, sh->n, sh->m, sh->rowptr, sh->col, val, t, &Ag)) &&
        TU_OK(gpu, sps_matrix_convert(Ag, SPS_FMT_DIA, opt, &B))) {
        tu_csr ha;
        if (tu_export_csr(gpu, Ag, &ha)) {
            TU_CHECK_EXPORT(gpu, B, &ha, "forced DIA on the GPU [%s]: round trip", tn(t));
            tu_csr_free(&ha);
        }
    }
    sps_options_destroy(opt);
    sps_matrix_destroy(B);
    sps_matrix_destroy(Ag);
    free(val);
}

int main(void)
{
    if (!sps_cuda_available()) {
        printf("test_gpu_other_formats: no CUDA backend or device: skipped\n");
        return TU_SKIP;
    }
    const char *sm = getenv("SPS_GPU_TEST_SMALL");
    small_only = sm && *sm && strcmp(sm, "0") != 0;
    if (sps_context_create(&cpu, SPS_BACKEND_CPU, 0) != SPS_OK) return 1;
    if (sps_context_create(&gpu, SPS_BACKEND_CUDA, 0) != SPS_OK) {
        fprintf(stderr, "cannot create a CUDA context: %s\n", sps_context_error(gpu));
        return 1;
    }
    printf("test_gpu_other_formats: %s%s\n", sps_context_device_name(gpu), small_only ? " (small shapes)" : "");
    tu_rng_seed(&rng, 9090);
    build_shapes();
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        for (int fi = 0; fi < 3; fi++)
            for (int si = 0; si < nshapes; si++) test_shape(&shapes[si], tu_all_types[ti], my_formats[fi]);
        test_misc(tu_all_types[ti]);
    }
    for (int si = 0; si < nshapes; si++) tu_shape_free(&shapes[si]);
    sps_context_destroy(gpu);
    sps_context_destroy(cpu);
    return tu_finish();
}
