/* GPU tests of the registered HiSparse format (formats/hisparse.c, kernels/cuda/hisparse.cu):
 * the CUDA context's matrix and the CPU backend's (the same schedule walked in order), each
 * against the long double reference from the input CSR on the same inputs, every scalar type:
 *   - the GPU build (kernels/cuda/hisparse_build.cu) gives the CPU backend's tree and schedule
 *     byte for byte;
 *   - the GPU matrix exports its CSR bitwise, and its footprint equals the CPU build's;
 *   - y = alpha op(A) x + beta y for op N and T and each alpha/beta case (y NaN-poisoned
 *     where beta = 0), within the reference's rounding bound; at d = 16 also with one and with
 *     two windows a warp forced (launch variant hs_windows; the rule takes two on large matrices
 *     only);
 *   - shapes: random sparse (COO1/2/4 leaves, runs of 32 split across warps), a dense block
 *     (dense leaves, with partial ones at the edges), diagonal, one dense row, one dense column,
 *     1x1, n x 1, 1 x n, empty, 0 x 0, a band whose size is not a multiple of d, and rows of
 *     power-law length; node sizes 4, 16 and 128;
 *   - sps_matrix_add (0.5 A^T + 3 A, or + 3 A^T where A is not square; A as hisparse and as CSR),
 *     and 3 A + 0.5 A (lists merged, not sorted, where no leaf is dense), computed on the GPU
 *     (kernels/cuda/hisparse_build.cu), equals the CPU context's sum: the same pattern, values to
 *     rounding (test_hisparse holds the CPU's to the tree oracle bitwise);
 *     the GPU's one-pass sum of small operands (one block) and its general one give the same
 *     tree and schedule, byte for byte; a sum that overflows is refused on each of the GPU's
 *     paths, the entry named.
 * Exit 77 (skipped) without a usable CUDA device.  Ends with "N passed, M failed". */
#include "hisparse_same.h"
#include "testutil.h"
#include "test_gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tu_rng rng;
static int g_one_pass[2]; /* sums the one-pass path took: short lists, long ones (hs_same_sum_paths) */

/* the GPU's sum against the CPU's: the same pattern, each value within a few roundings of the
 * matrix's largest (the GPU may fuse alpha a + beta b into an fma) */
static int close_sum(const tu_csr *c, const tu_csr *g, sps_scalar t)
{
    const int64_t n = c->info.rows, nnz = c->info.nnz;
    if (g->info.rows != n || g->info.cols != c->info.cols || g->info.nnz != nnz ||
        memcmp(c->rowptr, g->rowptr, ((size_t)n + 1) * sizeof(sps_index)) ||
        memcmp(c->col, g->col, (size_t)nnz * sizeof(sps_index)))
        return 0;
    double big = 0, err = 0;
    for (int64_t k = 0; k < nnz; k++) {
        double cr, ci, gr, gi;
        tu_get(t, c->val, (size_t)k, &cr, &ci);
        tu_get(t, g->val, (size_t)k, &gr, &gi);
        big = fmax(big, hypot(cr, ci)), err = fmax(err, hypot(gr - cr, gi - ci));
    }
    return err <= 4 * tu_eps(t) * fmax(big, 1e-300);
}

static void check(const tu_shape *s, sps_scalar t, int d)
{
    void *val = tu_shape_values(&rng, t, s->nnz, 1);
    const tu_csr h = tu_shape_csr(s, t, val);
    char dv[8];
    snprintf(dv, sizeof dv, "%d", d);
    sps_options o = tu_fopts(SPS_FMT_HISPARSE, "node-size", dv, NULL);
    sps_matrix Ac = NULL, Ag = NULL, Bc = NULL, Bg = NULL;
    if (!o || !TU_OK(g_cpu, sps_matrix_from_csr(g_cpu, s->n, s->m, s->rowptr, s->col, val, t, &Ac)) ||
        !TU_OK(g_gpu, sps_matrix_from_csr(g_gpu, s->n, s->m, s->rowptr, s->col, val, t, &Ag)) ||
        !TU_OK(g_cpu, sps_matrix_convert(Ac, SPS_FMT_HISPARSE, o, &Bc)) ||
        !TU_OK(g_gpu, sps_matrix_convert(Ag, SPS_FMT_HISPARSE, o, &Bg)))
        goto out;
    TU_CHECK_EXPORT(g_gpu, Bg, &h, "%s [%s] d=%d: the GPU matrix does not export its CSR", s->name,
                    sps_scalar_name(t), d);
    {   /* the GPU build is the CPU backend's byte for byte (test_hisparse holds that one to the host
           builder): the tree, its counts, and the schedule */
        sps_hisparse_copy cc, cg;
        memset(&cg, 0, sizeof cg);
        if (TU_OK(g_cpu, sps_hisparse_download(Bc, &cc)) && TU_OK(g_gpu, sps_hisparse_download(Bg, &cg)))
            TU_CHECK(hs_same_tree(&cc.H, &cg.H) && hs_same_sched(&cc, &cg),
                     "%s [%s] d=%d: the GPU build's tree or schedule differs from the CPU's (%zu / %zu bytes, %lld / %lld "
                     "segments)", s->name, sps_scalar_name(t), d, cg.H.bytes, cc.H.bytes, (long long)cg.nsparse,
                     (long long)cc.nsparse);
        sps_hisparse_copy_free(&cc), sps_hisparse_copy_free(&cg);
    }
    sps_matrix_info_t ic, ig;
    if (TU_OK(g_cpu, sps_matrix_info(Bc, &ic)) && TU_OK(g_gpu, sps_matrix_info(Bg, &ig)))
        TU_CHECK(ic.bytes == ig.bytes && ic.stored_entries == ig.stored_entries && ig.backend == SPS_BACKEND_CUDA,
                 "%s [%s] d=%d: GPU info differs from the CPU's (%zu / %zu bytes)", s->name, sps_scalar_name(t), d,
                 (size_t)ig.bytes, (size_t)ic.bytes);
    /* the kernel's rule picks one or two windows a warp by size: both, forced, at d = 16 */
    for (int hw = 0; hw < (d == 16 ? 3 : 1); hw++) {
        sps_launch_variant lv;
        memset(&lv, 0, sizeof lv);
        lv.hs_windows = hw;
        if (!TU_OK(g_gpu, sps_matrix_set_launch_variant(Bg, &lv))) break;
        for (int mode = 0; mode < 2; mode++)
            for (int ab = 0; ab < TU_AB_COUNT; ab++) {
                const uint64_t seed = tu_rng_u64(&rng);
                double wg = 0, wc = 0;
                void *yg = NULL, *yc = NULL;
                TU_CHECK(tu_spmv_check(g_gpu, &h, Bg, (sps_op_mode)mode, ab, seed, &wg, &yg),
                         "%s [%s] d=%d hs_windows=%d: GPU SpMV%s (%s) off by %g", s->name, sps_scalar_name(t), d, hw,
                         mode ? "^T" : "", tu_ab_name[ab], wg);
                if (hw == 0)
                    TU_CHECK(tu_spmv_check(g_cpu, &h, Bc, (sps_op_mode)mode, ab, seed, &wc, &yc),
                             "%s [%s] d=%d: CPU SpMV%s (%s) off by %g", s->name, sps_scalar_name(t), d,
                             mode ? "^T" : "", tu_ab_name[ab], wc);
                free(yg);
                free(yc);
            }
    }
    sps_matrix_set_launch_variant(Bg, NULL);
    /* the addition (computed on the host for both: the same sum to the bit), trees from the
       device and a CSR matrix through the conversion path */
    {
        unsigned char alpha[16] = {0}, beta[16] = {0};
        if (t == SPS_F32 || t == SPS_C32) *(float *)(void *)alpha = 0.5f, *(float *)(void *)beta = 3.0f;
        else *(double *)(void *)alpha = 0.5, *(double *)(void *)beta = 3.0;
        sps_matrix Cc = NULL, Cg = NULL;
        tu_csr ec, eg;
        memset(&ec, 0, sizeof ec), memset(&eg, 0, sizeof eg);
        /* square: 0.5 A^T + 3 A (the ops differ, so a dropped or swapped transpose shows) */
        const sps_op_mode ob = s->n == s->m ? SPS_OP_N : SPS_OP_T;
        if (TU_OK(g_cpu, sps_matrix_add(alpha, Bc, SPS_OP_T, beta, Ac, ob, o, &Cc)) &&
            TU_OK(g_gpu, sps_matrix_add(alpha, Bg, SPS_OP_T, beta, Ag, ob, o, &Cg)) && tu_export_csr(g_cpu, Cc, &ec) &&
            tu_export_csr(g_gpu, Cg, &eg))
            TU_CHECK(close_sum(&ec, &eg, t), "%s [%s] d=%d: 0.5 A^T + 3 op(A) differs on the GPU context", s->name,
                     sps_scalar_name(t), d);
        tu_csr_free(&ec), tu_csr_free(&eg);
        sps_matrix_destroy(Cc), sps_matrix_destroy(Cg);
        Cc = Cg = NULL;
        /* 3 A + 0.5 A, both as they are: where neither has a dense leaf, their lists are merged, not
           sorted (sps_hs_list_sorted), on the GPU by bisection, on the CPU in one pass */
        if (TU_OK(g_cpu, sps_matrix_add(beta, Bc, SPS_OP_N, alpha, Ac, SPS_OP_N, o, &Cc)) &&
            TU_OK(g_gpu, sps_matrix_add(beta, Bg, SPS_OP_N, alpha, Ag, SPS_OP_N, o, &Cg)) &&
            tu_export_csr(g_cpu, Cc, &ec) && tu_export_csr(g_gpu, Cg, &eg))
            TU_CHECK(close_sum(&ec, &eg, t), "%s [%s] d=%d: 3 A + 0.5 A differs on the GPU context", s->name,
                     sps_scalar_name(t), d);
        tu_csr_free(&ec), tu_csr_free(&eg);
        sps_matrix_destroy(Cc), sps_matrix_destroy(Cg);
        /* the GPU's one-pass sum (one block) and its general one: the same tree and schedule */
        TU_CHECK(hs_same_sum_paths(g_gpu, alpha, Bg, SPS_OP_T, beta, Bg, ob, dv, g_one_pass),
                 "%s [%s] d=%d: the GPU's one-pass sum 0.5 A^T + 3 op(A) differs from its general one", s->name,
                 sps_scalar_name(t), d);
        if (s->n == s->m)
            TU_CHECK(hs_same_sum_paths(g_gpu, beta, Bg, SPS_OP_N, alpha, Bg, SPS_OP_N, dv, g_one_pass),
                     "%s [%s] d=%d: the GPU's one-pass sum 3 A + 0.5 A differs from its general one", s->name,
                     sps_scalar_name(t), d);
    }
out:
    sps_options_destroy(o);
    sps_matrix_destroy(Bg);
    sps_matrix_destroy(Bc);
    sps_matrix_destroy(Ag);
    sps_matrix_destroy(Ac);
    free(val);
}

static tu_shape lengths(const char *name, int n, int m, int (*len)(int i, int n, int m), int one_col)
{
    int *L = tu_xcalloc((size_t)(n > 0 ? n : 1), sizeof *L);
    for (int i = 0; i < n; i++) L[i] = len(i, n, m);
    tu_shape s = tu_shape_make(&rng, name, n, m, L, one_col);
    free(L);
    return s;
}
static int l_random(int i, int n, int m) { return (void)i, (void)n, (int)(tu_rng_u64(&rng) % (uint64_t)(m < 12 ? m + 1 : 12)); }
static int l_dense(int i, int n, int m) { return (void)i, (void)n, m; }
static int l_one(int i, int n, int m) { return (void)i, (void)n, (void)m, 1; }
static int l_none(int i, int n, int m) { return (void)i, (void)n, (void)m, 0; }
static int l_dense_row(int i, int n, int m) { return (void)n, i == n / 3 ? m : (int)(tu_rng_u64(&rng) % 3); }
static int l_power(int i, int n, int m)
{
    (void)i, (void)n;
    const double u = 1.0 - tu_rng_uniform(&rng), k = 2.0 * pow(u, -1.0 / 1.3);
    return k > m ? m : (int)k;
}

int main(void)
{
    const int rc = gpu_setup("test_gpu_hisparse");
    if (rc) return rc;
    tu_rng_seed(&rng, 0x4157ULL);
    const int big = g_small ? 1 : 4;
    tu_shape sh[12];
    int ns = 0;
    sh[ns++] = lengths("random", 1500 * big, 1100 * big, l_random, -1);
    sh[ns++] = lengths("dense 300x300", 300, 300, l_dense, -1);
    sh[ns++] = tu_shape_band(&rng, "diagonal", 2049, 2049, 0, 0, 1.0);
    sh[ns++] = lengths("one dense row", 700, 900, l_dense_row, -1);
    sh[ns++] = lengths("one dense column", 900, 700, l_one, 5);
    sh[ns++] = lengths("1x1", 1, 1, l_one, -1);
    sh[ns++] = lengths("n x 1", 333, 1, l_one, -1);
    sh[ns++] = lengths("1 x n", 1, 333, l_dense, -1);
    sh[ns++] = lengths("empty 40x50", 40, 50, l_none, -1);
    sh[ns++] = lengths("0x0", 0, 0, l_none, -1);
    sh[ns++] = tu_shape_band(&rng, "band 3001", 3001, 3001, -40, 40, 0.6);
    sh[ns++] = lengths("power law", 5000 * big, 5000 * big, l_power, -1);
    static const int ds[3] = {4, 16, 128};
    for (int si = 0; si < ns; si++)
        for (int ti = 0; ti < TU_NTYPES; ti++)
            for (int di = 0; di < 3; di++) check(&sh[si], tu_all_types[ti], ds[di]);
    for (int si = 0; si < ns; si++) tu_shape_free(&sh[si]);
    /* an overflowing sum refused on the GPU: a one-block sort, a larger block, the cooperative grid */
    static const int ov[3][2] = {{20, 3}, {200, 4}, {2000, 6}};
    for (int ti = 0; ti < TU_NTYPES; ti++)
        for (int q = 0; q < 3; q++) hs_overflow_refused(g_gpu, tu_all_types[ti], ov[q][0], ov[q][1], &rng);
    TU_CHECK(g_one_pass[0] > 0 && g_one_pass[1] > 0, "the GPU's one-pass sums: %d of short lists (one block), %d of "
             "long ones (a cooperative grid)", g_one_pass[0], g_one_pass[1]);
    gpu_teardown();
    return tu_finish();
}
