/* GPU tests of the Hola format: the CUDA kernels (kernels/cuda/hola.cu) and the
 * format on the CUDA backend against the CPU reference, f32/f64/c32/c64, on the
 * shapes of hola_shapes.h (empty, 1x1, n x 1, 1 x n, one column, a dense row,
 * rows spanning many blocks, long and short rows mixed, empty-row runs at block
 * and thread boundaries and inside threads, COO-decoding blocks, bands; beyond
 * 300k non-zeros unless SPS_GPU_TEST_SMALL):
 *   - hola_row_starts: GPU and CPU buffers equal (npt 4 and 8), the device
 *     buffer poisoned before every run;
 *   - hola_spmv / hola_spmv^T called directly with npt 4 and 8 on every shape
 *     (every path of the kernels: single-row blocks, COO decoding, the usual
 *     path with and without flagged warps, shared atomics and the warp
 *     reduction), fresh random x, values, alpha, beta for every run; y NaN-
 *     poisoned when beta = 0 (alpha = 1 / beta = 0, random alpha / beta = 0),
 *     random y with random beta; per entry |gpu - cpu| <= 4 (cnt + 4) eps
 *     (|alpha| sum |a_ij x_j| + |beta y_i|); the row starts the product wrote
 *     equal the CPU's;
 *   - hola_spmv / hola_spmv^T recorded in a CUDA graph through the backend's
 *     capture (a spread of shapes and every shape beyond 500k rows) and replayed
 *     twice onto a NaN-poisoned y;
 *   - shapes beyond 500k rows once more with rowptr 4 bytes off a 16-byte
 *     boundary (the row-starts kernel's scalar loads with 4 and 8 rows a thread);
 *   - the format through the public API: built on the GPU from device CSR and
 *     from COO, exported back bitwise, sps_matrix_info equal to the CPU build's,
 *     SpMV / SpMV^T through an operator against the CPU backend's; poisson3d.
 * Exits 77 (skipped) without a usable CUDA device.  Built with
 * -DSPS_GPU_TEST_ON_CPU the CPU table stands in for the GPU (checks the harness
 * on a machine without a GPU).  Ends with "N passed, M failed". */
#include "hola_shapes.h"
#include "test_gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(SPS_HAVE_CUDA) || defined(SPS_GPU_TEST_ON_CPU)
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }

#define RS_POISON 0x7f7f7f7f

/* ------------------------------------------------------------------ row starts */
static void test_row_starts(const tu_shape *sh, const sps_index *d_rowptr)
{
    for (int npt = HOLA_NPT_SMALL; npt <= HOLA_NPT_LARGE; npt *= 2) {
        const size_t nrs = (size_t)sps_hola_blocks(sh->nnz, npt) + 1;
        sps_index *hc = gb_xmalloc(nrs * sizeof *hc), *hg = gb_xmalloc(nrs * sizeof *hg);
        for (size_t b = 0; b < nrs; b++) hc[b] = RS_POISON;
        sps_index *d = gb_dalloc(nrs * sizeof *d);
        gb_upload(d, hc, nrs * sizeof *d);
        const int okc = TU_OK(g_cpu, sps_cpu_idx_kernels.hola_row_starts(sps_ex(g_cpu), sh->n, sh->nnz, sh->rowptr, npt, hc));
        const int okg = TU_OK(g_gpu, SPS_TEST_GPU_IDX.hola_row_starts(sps_ex(g_gpu), sh->n, sh->nnz, d_rowptr, npt, d));
        if (okc && okg) {
            gb_download(hg, d, nrs * sizeof *d);
            TU_CHECK(memcmp(hc, hg, nrs * sizeof *hc) == 0, "%s: hola_row_starts (npt %d) GPU differs from the CPU",
                     sh->name, npt);
        }
        sps_dfree(g_gpu, d);
        free(hc);
        free(hg);
    }
}

/* ------------------------------------------------------------------ direct kernel calls */
/* The cases of tu_ab_name; the kernels take alpha = 1 and beta = 0 explicitly. */
static const char *kernel_ab_name[TU_AB_COUNT] = {"alpha=1 beta=0, y NaN", "random alpha, beta",
                                                  "random alpha, beta=0, y NaN"};

static void test_kernels(const tu_shape *sh, sps_scalar t, const sps_index *d_rowptr, const sps_index *d_col)
{
    for (int npt = HOLA_NPT_SMALL; npt <= HOLA_NPT_LARGE; npt *= 2)
        for (int mode = 0; mode < 2; mode++)
            for (int ab = 0; ab < TU_AB_COUNT; ab++) {
                char what[320];
                snprintf(what, sizeof what, "%s: hola_spmv%s npt %d (%s)", sh->name, mode ? "t" : "", npt,
                         kernel_ab_name[ab]);
                const int nin = mode == SPS_OP_N ? sh->m : sh->n, nout = mode == SPS_OP_N ? sh->n : sh->m;
                gbuf val = gb_rand(t, (size_t)sh->nnz), x = gb_rand(t, (size_t)nin);
                gbuf y = ab == TU_AB_RANDOM ? gb_rand(t, (size_t)nout) : gb_nan(t, (size_t)nout);
                tu_coefs k;
                tu_draw_coefs(&g_rng, t, ab, &k);
                const sps_cplx a = sps_cplx_make(k.ar, k.ai), b = sps_cplx_make(k.br, k.bi);
                const tu_csr hv = tu_shape_csr(sh, t, val.h);
                double *scale = tu_spmv_scales(&hv, (sps_op_mode)mode, x.h, &k, y.h);
                const size_t nrs = (size_t)sps_hola_blocks(sh->nnz, npt) + 1;
                sps_index *rsc = gb_xmalloc(nrs * sizeof *rsc), *rsg = gb_xmalloc(nrs * sizeof *rsg);
                for (size_t q = 0; q < nrs; q++) rsc[q] = RS_POISON;
                sps_index *d_rs = gb_dalloc(nrs * sizeof *d_rs);
                gb_upload(d_rs, rsc, nrs * sizeof *d_rs);
                const sps_mat_kernels *kc = &sps_cpu_mat_kernels[t], *kg = &SPS_TEST_GPU_MAT[t];
                void *yc = y.h; /* the CPU result overwrites the host copy of y0 */
                int ok = TU_OK(g_gpu, (mode == SPS_OP_N ? kg->hola_spmv : kg->hola_spmvt)(
                                          sps_ex(g_gpu), sh->n, sh->m, sh->nnz, d_rowptr, d_col, val.d, npt, d_rs, a, x.d, b, y.d));
                ok &= TU_OK(g_cpu, sps_kidx(g_cpu)->hola_row_starts(sps_ex(g_cpu), sh->n, sh->nnz, sh->rowptr, npt, rsc));
                ok &= TU_OK(g_cpu, (mode == SPS_OP_N ? kc->hola_spmv : kc->hola_spmvt)(
                                       sps_ex(g_cpu), sh->n, sh->m, sh->nnz, sh->rowptr, sh->col, val.h, npt, NULL, a, x.h, b, yc));
                if (ok) {
                    void *yg = gb_fetch(&y);
                    cmp_vec_s(what, t, (size_t)nout, yg, yc, 1.0, scale);
                    free(yg);
#ifndef SPS_GPU_TEST_ON_CPU /* the CPU product does not write the row starts */
                    gb_download(rsg, d_rs, nrs * sizeof *rsg);
                    TU_CHECK(memcmp(rsc, rsg, nrs * sizeof *rsc) == 0, "%s: row starts written by the product differ",
                             what);
#endif
                }
                sps_dfree(g_gpu, d_rs);
                free(rsc);
                free(rsg);
                free(scale);
                gb_free(&val);
                gb_free(&x);
                gb_free(&y);
            }
}

/* ------------------------------------------------------------------ captured in a CUDA graph */
/* hola_spmv and hola_spmv^T recorded once through the backend's capture (as a
 * solver with graphs on records them; kernel 2's programmatic dependent launch
 * becomes a programmatic graph edge) and replayed twice, y NaN-poisoned before
 * each replay, each replay's y against the CPU product. */
static void test_graph(const tu_shape *sh, sps_scalar t, const sps_index *d_rowptr, const sps_index *d_col)
{
    const sps_backend_ops *be = g_gpu->ex.be;
    if (!be->capture_begin) return; /* SPS_GPU_TEST_ON_CPU */
    const int npt = sps_hola_npt(sh->nnz, ssz(t));
    for (int mode = 0; mode < 2; mode++) {
        char what[320];
        snprintf(what, sizeof what, "%s: hola_spmv%s %s npt %d in a CUDA graph", sh->name, mode ? "t" : "", tn(t), npt);
        const int nin = mode == SPS_OP_N ? sh->m : sh->n, nout = mode == SPS_OP_N ? sh->n : sh->m;
        gbuf val = gb_rand(t, (size_t)sh->nnz), x = gb_rand(t, (size_t)nin), y = gb_nan(t, (size_t)nout);
        tu_coefs k;
        tu_draw_coefs(&g_rng, t, TU_AB_BETA0, &k);
        const sps_cplx a = sps_cplx_make(k.ar, k.ai), b = sps_cplx_make(0.0, 0.0);
        const tu_csr hv = tu_shape_csr(sh, t, val.h);
        double *scale = tu_spmv_scales(&hv, (sps_op_mode)mode, x.h, &k, y.h);
        void *yc = gb_xmalloc((size_t)nout * ssz(t) + 1);
        sps_index *d_rs = gb_dalloc(sps_hola_row_starts_bytes(sh->nnz, ssz(t)));
        const sps_mat_kernels *kc = &sps_cpu_mat_kernels[t], *kg = &SPS_TEST_GPU_MAT[t];
        void *graph = NULL;
        int ok = TU_OK(g_cpu, (mode == SPS_OP_N ? kc->hola_spmv : kc->hola_spmvt)(
                                  sps_ex(g_cpu), sh->n, sh->m, sh->nnz, sh->rowptr, sh->col, val.h, npt, NULL, a, x.h, b, yc));
        if (ok && TU_OK(g_gpu, be->capture_begin(sps_ex(g_gpu)))) {
            const int okq = TU_OK(g_gpu, (mode == SPS_OP_N ? kg->hola_spmv : kg->hola_spmvt)(
                                             sps_ex(g_gpu), sh->n, sh->m, sh->nnz, d_rowptr, d_col, val.d, npt, d_rs, a, x.d, b, y.d));
            const int oke = TU_OK(g_gpu, be->capture_end(sps_ex(g_gpu), &graph));
            ok = okq && oke;
        } else {
            ok = 0;
        }
        for (int rep = 0; ok && rep < 2; rep++) {
            gb_push(&y); /* NaN again: the replay must write every entry */
            if (!TU_OK(g_gpu, be->graph_launch(sps_ex(g_gpu), graph))) break;
            void *yg = gb_fetch(&y);
            char w2[360];
            snprintf(w2, sizeof w2, "%s, replay %d", what, rep + 1);
            cmp_vec_s(w2, t, (size_t)nout, yg, yc, 1.0, scale);
            free(yg);
        }
        if (graph) be->graph_destroy(sps_ex(g_gpu), graph);
        sps_context_clear_error(g_gpu);
        sps_dfree(g_gpu, d_rs);
        free(yc);
        free(scale);
        gb_free(&val);
        gb_free(&x);
        gb_free(&y);
    }
}

/* ------------------------------------------------------------------ the format, public API */
static void compare_apply(const char *what, const tu_csr *h, sps_matrix Bc, sps_matrix Bg)
{
    const sps_scalar t = h->info.scalar;
    for (int mode = 0; mode < 2; mode++)
        for (int ab = TU_AB_RANDOM; ab <= TU_AB_BETA0; ab++) {
            const int nin = mode == SPS_OP_N ? h->info.cols : h->info.rows;
            const int nout = mode == SPS_OP_N ? h->info.rows : h->info.cols;
            void *x = gb_xmalloc((size_t)nin * ssz(t)), *y0 = gb_xmalloc((size_t)nout * ssz(t));
            tu_fill_random(&g_rng, t, (size_t)nin, x);
            if (ab == TU_AB_RANDOM) tu_fill_random(&g_rng, t, (size_t)nout, y0);
            else tu_fill_nan(t, (size_t)nout, y0);
            tu_coefs k;
            tu_draw_coefs(&g_rng, t, ab, &k);
            void *yc = tu_apply(g_cpu, Bc, (sps_op_mode)mode, t, nin, nout, x, y0, k.alpha, k.beta, NULL);
            void *yg = tu_apply(g_gpu, Bg, (sps_op_mode)mode, t, nin, nout, x, y0, k.alpha, k.beta, NULL);
            double *scale = tu_spmv_scales(h, (sps_op_mode)mode, x, &k, y0);
            char w[320];
            snprintf(w, sizeof w, "%s: operator SpMV%s (%s)", what, mode ? "^T" : "", tu_ab_name[ab]);
            cmp_vec_s(w, t, (size_t)nout, yg, yc, 1.0, scale);
            free(scale);
            free(x);
            free(y0);
            free(yc);
            free(yg);
        }
}

static void test_format(const tu_shape *sh, sps_scalar t)
{
    char what[256];
    snprintf(what, sizeof what, "%s [hola %s]", sh->name, tn(t));
    tu_csr h0 = tu_shape_csr(sh, t, tu_shape_values(&g_rng, t, sh->nnz, 0)); /* -0.0, no explicit zeros */
    sps_matrix Ac = NULL, Ag = NULL, Agcoo = NULL, Bc = NULL, Bg = NULL, Bg2 = NULL;
    if (TU_OK(g_cpu, sps_matrix_from_csr(g_cpu, sh->n, sh->m, sh->rowptr, sh->col, h0.val, t, &Ac)) &&
        TU_OK(g_gpu, sps_matrix_from_csr(g_gpu, sh->n, sh->m, sh->rowptr, sh->col, h0.val, t, &Ag)) &&
        TU_OK(g_gpu, sps_matrix_convert(Ag, SPS_FMT_COO, NULL, &Agcoo)) &&
        TU_OK(g_cpu, sps_matrix_convert(Ac, SPS_FMT_HOLA, NULL, &Bc)) &&
        TU_OK(g_gpu, sps_matrix_convert(Ag, SPS_FMT_HOLA, NULL, &Bg)) &&
        TU_OK(g_gpu, sps_matrix_convert(Agcoo, SPS_FMT_HOLA, NULL, &Bg2))) {
        sps_matrix_info_t ic, ig;
        if (TU_OK(g_cpu, sps_matrix_info(Bc, &ic)) && TU_OK(g_gpu, sps_matrix_info(Bg, &ig)))
            TU_CHECK(ic.bytes == ig.bytes && ic.stored_entries == ig.stored_entries && ig.format == SPS_FMT_HOLA,
                     "%s: info cpu %zu bytes, gpu %zu bytes", what, ic.bytes, ig.bytes);
        TU_CHECK_EXPORT(g_gpu, Bg, &h0, "%s: GPU build from device CSR does not round-trip bitwise", what);
        TU_CHECK_EXPORT(g_gpu, Bg2, &h0, "%s: GPU build from COO does not round-trip bitwise", what);
        compare_apply(what, &h0, Bc, Bg);
    }
    sps_context_clear_error(g_cpu);
    sps_context_clear_error(g_gpu);
    TU_DESTROY_MATRICES(Ac, Ag, Agcoo, Bc, Bg, Bg2);
    free(h0.val);
}

static void test_poisson(sps_scalar t)
{
    const char *spec = g_small ? "poisson3d:12" : "poisson3d:40"; /* 40: 438k non-zeros, npt 8 (4 for c64) */
    sps_matrix Ac = NULL, Ag = NULL, Bc = NULL, Bg = NULL;
    char what[128];
    snprintf(what, sizeof what, "%s [hola %s]", spec, tn(t));
    tu_csr h;
    if (TU_OK(g_cpu, sps_matrix_generate(g_cpu, spec, t, &Ac)) && TU_OK(g_gpu, sps_matrix_generate(g_gpu, spec, t, &Ag)) &&
        TU_OK(g_cpu, sps_matrix_convert(Ac, SPS_FMT_HOLA, NULL, &Bc)) &&
        TU_OK(g_gpu, sps_matrix_convert(Ag, SPS_FMT_HOLA, NULL, &Bg)) && tu_export_csr(g_cpu, Ac, &h)) {
        compare_apply(what, &h, Bc, Bg);
        tu_csr_free(&h);
    }
    TU_DESTROY_MATRICES(Ac, Ag, Bc, Bg);
}

int main(void)
{
    const int rc = gpu_setup("test_gpu_hola");
    if (rc) return rc;
    tu_shape sh[HS_MAX];
    const int ns = hs_build(&g_rng, sh, g_small ? 0 : 2);
    for (int si = 0; si < ns; si++) {
        const tu_shape *s = &sh[si];
        sps_index *d_rowptr = gb_dalloc(((size_t)s->n + 1) * sizeof(sps_index));
        sps_index *d_col = gb_dalloc((size_t)s->nnz * sizeof(sps_index));
        gb_upload(d_rowptr, s->rowptr, ((size_t)s->n + 1) * sizeof(sps_index));
        gb_upload(d_col, s->col, (size_t)s->nnz * sizeof(sps_index));
        test_row_starts(s, d_rowptr);
        for (int ti = 0; ti < TU_NTYPES; ti++) {
            test_kernels(s, tu_all_types[ti], d_rowptr, d_col);
            test_format(s, tu_all_types[ti]);
        }
        if (s->nnz > 0 && (si % 4 == 1 || s->n > 500000)) /* a spread of shapes, and the big ones */
            for (int ti = 0; ti < TU_NTYPES; ti++) test_graph(s, tu_all_types[ti], d_rowptr, d_col);
        if (s->n > 500000) {
            /* rowptr 4 bytes past a 16-byte boundary: the row-starts kernel's scalar loads
               with 4 and 8 rows a thread (its vector loads need an aligned rowptr) */
            sps_index *d_mis = gb_dalloc(((size_t)s->n + 2) * sizeof(sps_index));
            gb_upload(d_mis + 1, s->rowptr, ((size_t)s->n + 1) * sizeof(sps_index));
            test_row_starts(s, d_mis + 1);
            test_kernels(s, SPS_F64, d_mis + 1, d_col);
            sps_dfree(g_gpu, d_mis);
        }
        sps_dfree(g_gpu, d_rowptr);
        sps_dfree(g_gpu, d_col);
    }
    for (int ti = 0; ti < TU_NTYPES; ti++) test_poisson(tu_all_types[ti]);
    for (int si = 0; si < ns; si++) tu_shape_free(&sh[si]);
    gpu_teardown();
    return tu_finish();
}
#else
int main(void)
{
    printf("test_gpu_hola: libspsolve built without CUDA: skipped\n");
    return TU_SKIP;
}
#endif
