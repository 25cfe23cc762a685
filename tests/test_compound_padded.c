/* Compound entries in the padded outer layouts on the CPU backend (issue 20): bell
 * (ELLPACK-R) and bsell (sliced ELLPACK, slice height 16 and 32) of b x b blocks
 * (b = 2..8; f32, f64, c32, c64) and quaternions (q32, q64), AoS and SoA.
 *
 * - SpMV and SpMV^T of every (outer layout, entry, scalar, entry layout) on random
 *   shapes (empty rows, rectangular, an empty matrix, one large enough for the
 *   threaded paths) against the long double product of the scalar expansion
 *   (tu_spmv_check: alpha/beta random, beta = 0 with y poisoned by NaN;
 *   compound_ref.h) and bit for bit against bcsr (the kernels sum a row in the same
 *   order);
 * - vector-layout soa (here and in bcsr): the same bits as AoS vectors, op N and T;
 * - sps_matrix_info: stored entries (the padded slots), fill percent, bytes, index
 *   bits; export round trip and conversions between bcsr, bell and bsell both ways;
 * - rows of very different lengths: the max-fill refusal and its message, lifted by
 *   max-fill or force; scalar matrices refused by bell / bsell, compound ones by ell;
 * - CG (plain and Jacobi) on the quaternion Laplacian and the 3x3-block SPD system
 *   of test_compound.c takes the same iterations and gives the same x as bcsr. */
#include "compound_ref.h"

#include "formats/padded.h"

#include <stdio.h>

static sps_context ctx;
static tu_rng rng;

typedef struct {
    const char *name;
    sps_format f;
    int C; /* slice height; 0: bell */
} outer;
static const outer outers[] = {{"bell", SPS_FMT_BELL, 0}, {"bsell16", SPS_FMT_BSELL, 16}, {"bsell32", SPS_FMT_BSELL, 32}};
#define NOUTER ((int)(sizeof outers / sizeof outers[0]))

/* The options of o with entry layout soa, and name = value when name is not NULL. */
static sps_options outer_opts(const outer *o, int soa, const char *name, const char *value)
{
    sps_options opt = NULL;
    char c[8];
    snprintf(c, sizeof c, "%d", o->C);
    TU_CHECK(sps_format_options_create(o->f, &opt) == SPS_OK &&
                 sps_options_set(opt, "entry-layout", soa ? "soa" : "aos") == SPS_OK &&
                 (!o->C || sps_options_set(opt, "slice-height", c) == SPS_OK) &&
                 (!name || sps_options_set(opt, name, value) == SPS_OK),
             "%s options", o->name);
    return opt;
}

/* A in outer layout o (entry layout soa), converted from any matrix B; NULL when refused. */
static sps_matrix to_outer(sps_matrix B, const outer *o, int soa)
{
    sps_options opt = outer_opts(o, soa, NULL, NULL);
    sps_matrix A = NULL;
    TU_OK(ctx, sps_matrix_convert(B, o->f, opt, &A));
    sps_options_destroy(opt);
    return A;
}

/* The slots o stores for shape s (ELL: the longest row times n rounded up to 32;
 * SELL: each slice's longest row times C), and its groups. */
static int64_t want_slots(const outer *o, const tu_shape *s, int *ngroups)
{
    const int h = o->C ? o->C : (s->n + 31) / 32 * 32;
    int64_t slots = 0;
    *ngroups = o->C ? (s->n + h - 1) / h : 1;
    for (int g = 0; g < *ngroups; g++) {
        sps_index w = 0;
        for (int i = g * h; i < (g + 1) * h && i < s->n; i++)
            if (s->rowptr[i + 1] - s->rowptr[i] > w) w = s->rowptr[i + 1] - s->rowptr[i];
        slots += (int64_t)w * h;
    }
    return slots;
}

/* y = op(A) x + b y0 of A and B bit for bit equal (same x, y0, alpha, beta). */
static int same_bits(sps_matrix A, sps_matrix B, sps_op_mode mode, sps_scalar t, int nin, int nout)
{
    void *ya, *yb;
    const int same = cr_apply_both(ctx, &rng, A, B, mode, t, nin, nout, 1, &ya, &yb) &&
                     !memcmp(ya, yb, (size_t)nout * sps_scalar_size(t));
    free(ya);
    free(yb);
    return same;
}

/* Every check of outer layout o, entry e, type t, layout soa on shape s. */
static void check_products(sps_entry_desc e, sps_scalar t, int soa, const tu_shape *s, const void *ov)
{
    const outer *o = ov;
    const int nv = sps_entry_values(e), d = sps_entry_dim(e);
    const size_t vbytes = (size_t)s->nnz * nv * sps_scalar_size(t);
    void *val = tu_xcalloc(vbytes ? vbytes : 1, 1);
    tu_fill_random(&rng, t, (size_t)s->nnz * nv, val);
    char what[128];
    snprintf(what, sizeof what, "%s %s %s %s %s (%dx%d, nnz %lld)", o->name, sps_entry_name(e), sps_scalar_name(t),
             soa ? "soa" : "aos", s->name, s->n, s->m, (long long)s->nnz);
    sps_matrix B = NULL, A = NULL;
    if (!TU_OK(ctx, sps_matrix_from_csr_entries(ctx, s->n, s->m, s->rowptr, s->col, val, e, t, &B)) ||
        !(A = to_outer(B, o, soa))) {
        sps_matrix_destroy(B);
        free(val);
        return;
    }
    sps_matrix_info_t info;
    int ngroups;
    const int64_t slots = want_slots(o, s, &ngroups);
    const double fill = s->nnz ? 100.0 * (double)(slots - s->nnz) / (double)s->nnz : 0.0;
    TU_CHECK(sps_matrix_info(A, &info) == SPS_OK && info.format == o->f && info.entry.kind == e.kind &&
                 info.rows == s->n && info.cols == s->m && info.nnz == s->nnz && info.stored_entries == slots &&
                 info.fill_percent == fill && info.index_bits == 16 &&
                 info.bytes == sps_pad_bytes(slots, (size_t)nv * sps_scalar_size(t), 2, ngroups, s->n, 0, 0),
             "%s: info (stored %lld, want %lld; fill %g, want %g; index bits %d; bytes %zu)", what,
             (long long)info.stored_entries, (long long)slots, info.fill_percent, fill, info.index_bits, info.bytes);
    TU_CHECK(cr_export_equal(A, s->n, s->nnz, s->rowptr, s->col, val, vbytes), "%s: export round trip", what);
    tu_csr h = cr_expand(e, t, s->n, s->m, s->rowptr, s->col, val);
    for (int mode = SPS_OP_N; mode <= SPS_OP_T; mode++) {
        for (int ab = 0; ab < TU_AB_COUNT; ab++) {
            double worst;
            TU_CHECK(tu_spmv_check(ctx, &h, A, (sps_op_mode)mode, ab, tu_rng_u64(&rng), &worst, NULL),
                     "%s: %s, %s: worst error %.3g of the bound's scale", what, mode ? "SpMV^T" : "SpMV",
                     tu_ab_name[ab], worst);
        }
        const int nin = (mode == SPS_OP_N ? s->m : s->n) * d, nout = (mode == SPS_OP_N ? s->n : s->m) * d;
        TU_CHECK(same_bits(A, B, (sps_op_mode)mode, t, nin, nout), "%s: %s differs from bcsr's", what,
                 mode ? "SpMV^T" : "SpMV");
    }
    /* vector-layout soa (this layout and bcsr): the kernels on SoA vectors, x and y relaid
     * out at the boundary: the reference's bounds, and the same bits as on AoS vectors */
    sps_options vo = outer_opts(o, soa, "vector-layout", "soa"), bvo = tu_fopts(SPS_FMT_BCSR, "vector-layout", "soa", NULL);
    sps_matrix V = NULL, BV = NULL;
    TU_OK(ctx, sps_matrix_convert(B, o->f, vo, &V));
    TU_OK(ctx, sps_matrix_convert(B, SPS_FMT_BCSR, bvo, &BV));
    sps_options_destroy(vo);
    sps_options_destroy(bvo);
    for (int mode = SPS_OP_N; V && BV && mode <= SPS_OP_T; mode++) {
        for (int ab = 0; ab < TU_AB_COUNT; ab++) {
            double worst;
            TU_CHECK(tu_spmv_check(ctx, &h, V, (sps_op_mode)mode, ab, tu_rng_u64(&rng), &worst, NULL),
                     "%s: vector-layout soa %s, %s: worst error %.3g of the bound's scale", what,
                     mode ? "SpMV^T" : "SpMV", tu_ab_name[ab], worst);
        }
        const int nin = (mode == SPS_OP_N ? s->m : s->n) * d, nout = (mode == SPS_OP_N ? s->n : s->m) * d;
        TU_CHECK(same_bits(V, A, (sps_op_mode)mode, t, nin, nout) && same_bits(BV, B, (sps_op_mode)mode, t, nin, nout),
                 "%s: vector-layout soa: %s differs from aos", what, mode ? "SpMV^T" : "SpMV");
    }
    TU_DESTROY_MATRICES(V, BV);
    tu_csr_free(&h);
    /* the other padded layout with the other entry layout, and back to bcsr (SoA) */
    sps_matrix O = to_outer(A, &outers[(o - outers + 1) % NOUTER], !soa), C = NULL;
    sps_options bo = tu_fopts(SPS_FMT_BCSR, "entry-layout", "soa", NULL);
    TU_OK(ctx, sps_matrix_convert(O ? O : A, SPS_FMT_BCSR, bo, &C));
    sps_options_destroy(bo);
    TU_CHECK(O && C && cr_export_equal(O, s->n, s->nnz, s->rowptr, s->col, val, vbytes) &&
                 cr_export_equal(C, s->n, s->nnz, s->rowptr, s->col, val, vbytes),
             "%s: to %s (%s) and bcsr: export round trip", what, outers[(o - outers + 1) % NOUTER].name,
             soa ? "aos" : "soa");
    TU_DESTROY_MATRICES(A, B, O, C);
    free(val);
}

static void test_products(void)
{
    for (int oi = 0; oi < NOUTER; oi++) cr_for_each_product(&rng, check_products, &outers[oi]);
    /* enough entries for the threaded row loop and several SpMV^T scatter buffers */
    tu_shape big = cr_random_shape(&rng, "big", 10000, 8000, 30, 0);
    for (int oi = 0; oi < NOUTER; oi++)
        for (int soa = 0; soa <= 1; soa++) {
            check_products(sps_entry_quaternion(), SPS_F64, soa, &big, &outers[oi]);
            check_products(sps_entry_block(3), SPS_F32, soa, &big, &outers[oi]);
        }
    tu_shape_free(&big);
}

/* Rows of very different lengths: 1000 rows of one entry but row 17 of 600.  bell
 * would store 600 x 1024 slots for 1599 entries, bsell-32 a slice of 600 x 32 (fill
 * 12.6 > 10): both refused with the padded family's message, naming what to use;
 * bsell-16 fits (6.6).  max-fill and force lift the refusal. */
static void test_padding_refusal(void)
{
    const int n = 1000, longrow = 17, longlen = 600;
    int *len = tu_xcalloc((size_t)n, sizeof *len);
    for (int i = 0; i < n; i++) len[i] = i == longrow ? longlen : 1;
    tu_shape s = tu_shape_make(&rng, "one-long-row", n, n, len, -1);
    free(len);
    const sps_entry_desc e = sps_entry_block(2);
    const sps_scalar t = SPS_F64;
    void *val = tu_xcalloc((size_t)s.nnz * 4, sizeof(double));
    tu_fill_random(&rng, t, (size_t)s.nnz * 4, val);
    sps_matrix B = NULL;
    TU_OK(ctx, sps_matrix_from_csr_entries(ctx, n, n, s.rowptr, s.col, val, e, t, &B));
    static const char *const refused[NOUTER] = {"BELL conversion refused", NULL, "BSELL conversion refused"};
    static const char *const suggest[NOUTER] = {"use bsell", NULL, "use slice-height 16"};
    tu_csr h = cr_expand(e, t, n, n, s.rowptr, s.col, val);
    for (int oi = 0; B && oi < NOUTER; oi++) {
        const outer *o = &outers[oi];
        for (int lift = 0; lift < 3; lift++) { /* default; max-fill 1000; force */
            sps_options opt = outer_opts(o, lift == 1, lift == 1 ? "max-fill" : lift == 2 ? "force" : NULL,
                                         lift == 1 ? "1000" : "true");
            sps_matrix A = (sps_matrix)1;
            const sps_status st = sps_matrix_convert(B, o->f, opt, &A);
            sps_options_destroy(opt);
            if (refused[oi] && !lift) {
                TU_CHECK(st == SPS_ERR_ARG && !A && strstr(sps_context_error(ctx), refused[oi]) &&
                             strstr(sps_context_error(ctx), "fill factor") &&
                             strstr(sps_context_error(ctx), suggest[oi]) && strstr(sps_context_error(ctx), "force"),
                         "%s of one long row: %s (%s)", o->name, sps_status_name(st), sps_context_error(ctx));
                continue;
            }
            TU_CHECK(st == SPS_OK && A, "%s of one long row (lifted %d): %s", o->name, lift, sps_context_error(ctx));
            if (st != SPS_OK) continue;
            sps_matrix_info_t info;
            int ngroups;
            sps_matrix_info(A, &info);
            TU_CHECK(info.stored_entries == want_slots(o, &s, &ngroups), "%s of one long row: %lld slots", o->name,
                     (long long)info.stored_entries);
            for (int mode = SPS_OP_N; mode <= SPS_OP_T; mode++) {
                double worst = 0;
                TU_CHECK(tu_spmv_check(ctx, &h, A, (sps_op_mode)mode, TU_AB_RANDOM, tu_rng_u64(&rng), &worst, NULL),
                         "%s of one long row: %s, worst error %.3g", o->name, mode ? "SpMV^T" : "SpMV", worst);
            }
            sps_matrix_destroy(A);
        }
    }
    tu_csr_free(&h);
    sps_matrix_destroy(B);
    free(val);
    tu_shape_free(&s);
}

/* bell and bsell hold compound entries only, the scalar padded formats scalar ones. */
static void test_entry_refusals(void)
{
    static const sps_index rowptr[3] = {0, 2, 3}, col[3] = {0, 1, 1};
    static const double val[3 * 9] = {1, 2, 3, 4};
    sps_matrix S = NULL, Q = NULL;
    TU_OK(ctx, sps_matrix_from_csr(ctx, 2, 2, rowptr, col, val, SPS_F64, &S));
    TU_OK(ctx, sps_matrix_from_csr_entries(ctx, 2, 2, rowptr, col, val, sps_entry_quaternion(), SPS_F64, &Q));
    for (int oi = 0; S && oi < NOUTER; oi++) {
        sps_matrix A = (sps_matrix)1;
        TU_CHECK(sps_matrix_convert(S, outers[oi].f, NULL, &A) == SPS_ERR_UNSUPPORTED && !A &&
                     strstr(sps_context_error(ctx), "as are bell and bsell"),
                 "scalar matrix to %s: %s", outers[oi].name, sps_context_error(ctx));
    }
    const sps_format scalar_padded[2] = {SPS_FMT_ELL, SPS_FMT_SELL};
    for (int k = 0; Q && k < 2; k++) {
        sps_matrix A = (sps_matrix)1;
        TU_CHECK(sps_matrix_convert(Q, scalar_padded[k], NULL, &A) == SPS_ERR_UNSUPPORTED && !A &&
                     strstr(sps_context_error(ctx), "bcsr, bell, bsell"),
                 "quaternion matrix to %s: %s", sps_format_name(scalar_padded[k]), sps_context_error(ctx));
    }
    TU_DESTROY_MATRICES(S, Q);
}

/* CG on system c natively in every padded layout: the iterations and x of bcsr's, bit for bit. */
static void solve_like_bcsr(const char *name, cr_coo *c, sps_entry_desc e, sps_scalar t, double rtol)
{
    const int N = c->n * sps_entry_dim(e);
    void *tv = cr_to_type(t, c->val, (size_t)c->nnz * sps_entry_values(e));
    sps_matrix B = NULL;
    TU_OK(ctx, sps_matrix_from_coo_entries(ctx, c->n, c->n, c->nnz, c->row, c->col, tv, e, t, &B));
    void *b = tu_xcalloc((size_t)N, sps_scalar_size(t)), *xb = tu_xcalloc((size_t)N, sps_scalar_size(t)),
         *xa = tu_xcalloc((size_t)N, sps_scalar_size(t));
    tu_fill_random(&rng, t, (size_t)N, b);
    for (int jac = 0; B && jac <= 1; jac++) {
        int ib = -1;
        const int cb = cr_solve(ctx, B, SPS_SOLVER_CG, jac, t, N, b, xb, rtol, &ib);
        for (int oi = 0; oi < NOUTER; oi++)
            for (int soa = 0; soa <= 1; soa++) {
                sps_matrix A = to_outer(B, &outers[oi], soa);
                int ia = -1;
                const int ca = A && cr_solve(ctx, A, SPS_SOLVER_CG, jac, t, N, b, xa, rtol, &ia);
                TU_CHECK(cb && ca && ia == ib && !memcmp(xa, xb, (size_t)N * sps_scalar_size(t)),
                         "%s%s: CG in %s %s %d iterations (converged %d), bcsr %d (%d)%s", name,
                         jac ? " + Jacobi" : "", outers[oi].name, soa ? "soa" : "aos", ia, ca, ib, cb,
                         ia == ib ? ", x differs" : "");
                sps_matrix_destroy(A);
            }
    }
    free(b);
    free(xb);
    free(xa);
    free(tv);
    sps_matrix_destroy(B);
}

/* bsell with sort-window: rows sorted by length within windows store fewer slots
 * on rows of varying length, multiply as the expansion does and bit for bit as
 * bcsr (N and T, the permutation inside the format), and a window that is not a multiple of the
 * slice height is refused by the rule sell and bsell share. */
static void test_sorted(void)
{
    const int n = 2000;
    int *len = tu_xcalloc((size_t)n, sizeof *len);
    for (int i = 0; i < n; i++) len[i] = 1 + (int)(tu_rng_u64(&rng) % 40);
    tu_shape s = tu_shape_make(&rng, "varying-rows", n, n, len, -1);
    free(len);
    const sps_entry_desc e = sps_entry_quaternion();
    const sps_scalar t = SPS_F64;
    void *val = tu_xcalloc((size_t)s.nnz * 4, sizeof(double));
    tu_fill_random(&rng, t, (size_t)s.nnz * 4, val);
    sps_matrix B = NULL;
    TU_OK(ctx, sps_matrix_from_csr_entries(ctx, n, n, s.rowptr, s.col, val, e, t, &B));
    tu_csr h = cr_expand(e, t, n, n, s.rowptr, s.col, val);
    const outer *o = &outers[2]; /* bsell32 */
    int64_t slots[2] = {0, 0};
    for (int sorted = 0; B && sorted < 2; sorted++) {
        sps_options opt = outer_opts(o, sorted, sorted ? "sort-window" : NULL, "256"); /* sorted: SoA */
        sps_matrix A = NULL;
        if (TU_OK(ctx, sps_matrix_convert(B, o->f, opt, &A))) {
            sps_matrix_info_t info;
            sps_matrix_info(A, &info);
            slots[sorted] = info.stored_entries;
            for (int mode = SPS_OP_N; mode <= SPS_OP_T; mode++) {
                double worst = 0;
                TU_CHECK(tu_spmv_check(ctx, &h, A, (sps_op_mode)mode, TU_AB_RANDOM, tu_rng_u64(&rng), &worst, NULL),
                         "bsell32 sort-window %s: %s, worst error %.3g", sorted ? "256" : "0",
                         mode ? "SpMV^T" : "SpMV", worst);
                /* the permutation stays inside the format: bcsr's bits, SpMV^T included */
                TU_CHECK(same_bits(A, B, (sps_op_mode)mode, t, n * 4, n * 4), "bsell32 sort-window %s: %s differs "
                         "from bcsr's", sorted ? "256" : "0", mode ? "SpMV^T" : "SpMV");
            }
        }
        sps_matrix_destroy(A);
        sps_options_destroy(opt);
    }
    TU_CHECK(slots[1] > 0 && slots[1] < slots[0], "sorting stores fewer slots: %lld < %lld", (long long)slots[1],
             (long long)slots[0]);
    sps_options opt = outer_opts(o, 0, "sort-window", "40");
    TU_CHECK(sps_options_check(opt) == SPS_ERR_ARG && strstr(sps_options_error(opt), "multiple of the slice height"),
             "sort-window 40 with slice height 32: '%s'", sps_options_error(opt));
    sps_options_destroy(opt);
    tu_csr_free(&h);
    sps_matrix_destroy(B);
    free(val);
    tu_shape_free(&s);
}

int main(void)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 2021);
    test_entry_refusals();
    test_padding_refusal();
    test_sorted();
    test_products();
    cr_coo q = cr_quat_laplacian(&rng, 16, 0.05), k = cr_block_spd(&rng, 14, 0.02);
    solve_like_bcsr("quaternion Laplacian 16x16 q64", &q, sps_entry_quaternion(), SPS_F64, 1e-10);
    solve_like_bcsr("quaternion Laplacian 16x16 q32", &q, sps_entry_quaternion(), SPS_F32, 1e-5);
    solve_like_bcsr("3x3-block SPD 14x14 grid f64", &k, sps_entry_block(3), SPS_F64, 1e-10);
    cr_coo_free(&q);
    cr_coo_free(&k);
    sps_context_destroy(ctx);
    return tu_finish();
}
