/* HiSparse's host structure (formats/hisparse.h; issue 23, first part):
 *   - the exact round trip to CSR (row pointers, columns and values bit for bit, stored
 *     zeros included) for f32, f64, c32, c64 and node sizes 2, 4, 16, 128, 256;
 *   - y += s A x and y += s A^T x through a view (scale -2, transpose flag; the tree walk of
 *     kernels/cpu/hisparse.inc) against a CSR product in double, y starting at a known
 *     value (the walk adds to it);
 *   - C = 0.5 op(A) + 3 op(B), op = identity and transpose, B a perturbed copy of A (entries
 *     dropped, added, values changed, as the paper's test): the union pattern, sorted rows,
 *     values against the dense sum in double, and the dual traversal's tree byte for byte
 *     the route through CSR's;
 *   - shapes: random sparse (several densities), a dense 300 x 300 block (dense leaves),
 *     1 x 1, n x 1, 1 x n, diagonal only, nnz = 0, sizes not a multiple of d, one dense
 *     row, one dense column, a 2-level tree under d = 2 and a 3-level one;
 *   - node statistics: a dense block makes dense leaves, a diagonal COO4 leaves at d = 4;
 *     the pool holds at least the nodes' headers;
 *   - sps_matrix_add's one-pass sum (small operands) and its general one: the same tree and
 *     schedule, byte for byte, op N and T mixed;
 *   - refusals: d not a power of two, unsorted columns; sps_matrix_add's (shapes, types,
 *     options, a non-finite alpha or beta, a sum that overflows: the entry named).
 * Ends "N passed, M failed". */
#include "formats/hisparse.h"
#include "hisparse_same.h"
#include "testutil.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tu_rng g_rng;
static sps_context g_ctx;
static int g_small[2]; /* sums the one-pass path took: short lists, long ones (hs_same_sum_paths) */

typedef struct {
    const char *name;
    int n, m;
    sps_index *rowptr, *col;
    int64_t nnz;
} shape;

/* CSR of an n x m pattern where keep(i, j) says which entries exist */
typedef int (*keep_fn)(int i, int j, int n, int m);
static shape make(const char *name, int n, int m, keep_fn keep)
{
    shape s = {name, n, m, tu_xcalloc((size_t)n + 1, sizeof(sps_index)), NULL, 0};
    int64_t cap = 16;
    s.col = tu_xcalloc((size_t)cap, sizeof(sps_index));
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < m; j++)
            if (keep(i, j, n, m)) {
                if (s.nnz == cap) {
                    cap *= 2;
                    s.col = realloc(s.col, (size_t)cap * sizeof(sps_index));
                }
                s.col[s.nnz++] = j;
            }
        s.rowptr[i + 1] = (sps_index)s.nnz;
    }
    return s;
}

static double g_density;
static int k_random(int i, int j, int n, int m)
{
    (void)i, (void)j, (void)n, (void)m;
    return tu_rng_uniform(&g_rng) < g_density;
}
static int k_all(int i, int j, int n, int m) { return (void)i, (void)j, (void)n, (void)m, 1; }
static int k_diag(int i, int j, int n, int m) { return (void)n, (void)m, i == j; }
static int k_none(int i, int j, int n, int m) { return (void)i, (void)j, (void)n, (void)m, 0; }
static int k_row(int i, int j, int n, int m) { return (void)n, i == 7 || (j == (i * 37) % m && tu_rng_uniform(&g_rng) < 0.5); }
/* 8 x 8 diagonal blocks, half full (32 entries each): at d = 8 each block is one leaf of one
 * full warp of work, 64 of them in a 512 x 512 matrix (the schedule's array boundary) */
static int k_blocks8(int i, int j, int n, int m) { return (void)n, (void)m, i / 8 == j / 8 && (i + j) % 2 == 0; }
static int k_colm(int i, int j, int n, int m) { return (void)m, j == 3 || (i == (j * 11) % n && tu_rng_uniform(&g_rng) < 0.5); }

/* y = op(A) x in double (re, im pairs) from CSR */
static void ref_spmv(const shape *s, sps_scalar t, const void *val, int trans, const void *x, double *y)
{
    const int ny = trans ? s->m : s->n;
    memset(y, 0, 2 * sizeof(double) * (size_t)ny);
    for (int i = 0; i < s->n; i++)
        for (sps_index k = s->rowptr[i]; k < s->rowptr[i + 1]; k++) {
            double ar, ai, xr, xi;
            tu_get(t, val, (size_t)k, &ar, &ai);
            const int o = trans ? s->col[k] : i, in = trans ? i : s->col[k];
            tu_get(t, x, (size_t)in, &xr, &xi);
            y[2 * o] += ar * xr - ai * xi;
            y[2 * o + 1] += ar * xi + ai * xr;
        }
}

/* t = a^T, through the library's host transpose (formats/csr_host.c); t's arrays allocated
 * (tu_csr_free) */
static void csr_transpose(const tu_csr *a, tu_csr *t)
{
    const sps_csr_host h = {.n = (sps_index)a->info.rows, .m = (sps_index)a->info.cols, .nnz = a->info.nnz,
                            .t = a->info.scalar, .rowptr = a->rowptr, .col = a->col, .val = a->val};
    sps_csr_host ht;
    memset(t, 0, sizeof *t);
    if (!TU_OK(g_ctx, sps_csr_host_transpose(g_ctx, &h, &ht))) return;
    t->info = a->info, t->info.rows = ht.n, t->info.cols = ht.m;
    t->rowptr = ht.rowptr, t->col = ht.col, t->val = ht.val; /* malloc'd: tu_csr_free frees them */
}

/* a real scalar x as one value of type t (complex: imaginary part 0) */
static void put_real(sps_scalar t, void *p, double x)
{
    memset(p, 0, 16);
    if (t == SPS_F32 || t == SPS_C32) *(float *)p = (float)x;
    else *(double *)p = x;
}

static void check(const shape *s, sps_scalar t, int d)
{
    const size_t vs = sps_scalar_size(t);
    char what[160];
    snprintf(what, sizeof what, "%s %dx%d nnz %lld %s d=%d", s->name, s->n, s->m, (long long)s->nnz,
             sps_scalar_name(t), d);
    void *val = tu_xcalloc((size_t)s->nnz + 1, vs);
    tu_fill_random(&g_rng, t, (size_t)s->nnz, val);
    for (int64_t k = 0; k < s->nnz; k += 17) tu_put(t, val, (size_t)k, 0.0, 0.0); /* stored zeros survive */
    sps_hisparse H;
    if (!TU_OK(g_ctx, sps_hisparse_from_csr(g_ctx, s->n, s->m, s->rowptr, s->col, val, vs, d, &H))) {
        free(val);
        return;
    }
    /* round trip */
    sps_index *rp = tu_xcalloc((size_t)s->n + 1, sizeof *rp), *cc = tu_xcalloc((size_t)s->nnz + 1, sizeof *cc);
    void *vv = tu_xcalloc((size_t)s->nnz + 1, vs);
    sps_hisparse_to_csr(&H, 0, rp, cc, vv);
    TU_CHECK(H.nnz == s->nnz && !memcmp(rp, s->rowptr, ((size_t)s->n + 1) * sizeof *rp) &&
                 !memcmp(cc, s->col, (size_t)s->nnz * sizeof *cc) && !memcmp(vv, val, (size_t)s->nnz * vs),
             "%s: the round trip to CSR is exact", what);
    int64_t nodes = 0;
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 4; b++) nodes += H.nodes[a][b];
    TU_CHECK((s->nnz == 0) == (H.root == 0) && (s->nnz == 0 || nodes >= H.depth) && H.bytes % 16 == 0 &&
                 H.bytes >= 16 + 16 * (size_t)nodes,
             "%s: %lld nodes in %zu bytes, depth %d", what, (long long)nodes, H.bytes, H.depth);
    /* products, y poisoned with 0.5 (+ 0.25 i) first: the walk adds */
    for (int trans = 0; trans < 2; trans++) {
        const int nx = trans ? s->n : s->m, ny = trans ? s->m : s->n;
        void *x = tu_xcalloc((size_t)nx + 1, vs), *y = tu_xcalloc((size_t)ny + 1, vs);
        double *want = tu_xcalloc(2 * (size_t)ny + 2, sizeof(double));
        tu_fill_random(&g_rng, t, (size_t)nx, x);
        for (int i = 0; i < ny; i++) tu_put(t, y, (size_t)i, 0.5, 0.25);
        ref_spmv(s, t, val, trans, x, want);
        /* the view's scale: -2 (a power of two, exact) times the reference */
        sps_hisparse_spmv(t, (sps_hisparse_view){&H, trans, {-2.0, 0.0}}, x, y);
        for (int i = 0; i < 2 * ny; i++) want[i] *= -2.0;
        double err = 0, scale = 1e-300;
        const int cplx = t == SPS_C32 || t == SPS_C64;
        for (int i = 0; i < ny; i++) {
            double re, im;
            tu_get(t, y, (size_t)i, &re, &im);
            err = fmax(err, hypot(re - 0.5 - want[2 * i], cplx ? im - 0.25 - want[2 * i + 1] : 0.0));
            scale = fmax(scale, hypot(want[2 * i], want[2 * i + 1]));
        }
        const int maxrow = s->n > s->m ? s->n : s->m;
        TU_CHECK(err <= 4.0 * (maxrow + 2) * tu_eps(t) * fmax(scale, 1.0), "%s: y = A%s x off by %.3g (scale %.3g)",
                 what, trans ? "^T" : "", err, scale);
        free(x), free(y), free(want);
    }
    /* C = 0.5 A^T + 3 B^T with B a perturbed copy of A (as the paper): some entries dropped,
     * some added, values changed; against the same sum of CSR transposes in double */
    sps_index *rb = tu_xcalloc((size_t)s->n + 1, sizeof *rb), *cb = tu_xcalloc(2 * (size_t)s->nnz + s->n + 1, sizeof *cb);
    void *vb = tu_xcalloc(2 * (size_t)s->nnz + s->n + 1, vs);
    int64_t nb = 0;
    for (int i = 0; i < s->n; i++) {
        for (sps_index k = s->rowptr[i]; k < s->rowptr[i + 1]; k++) {
            if (tu_rng_uniform(&g_rng) < 0.2) continue; /* dropped */
            if (k > s->rowptr[i] && s->col[k - 1] + 1 < s->col[k] && tu_rng_uniform(&g_rng) < 0.2)
                cb[nb++] = s->col[k] - 1; /* an entry A lacks */
            cb[nb++] = s->col[k];
        }
        rb[i + 1] = (sps_index)nb;
    }
    tu_fill_random(&g_rng, t, (size_t)nb, vb);
    sps_hisparse Hb, Hc;
    if (TU_OK(g_ctx, sps_hisparse_from_csr(g_ctx, s->n, s->m, rb, cb, vb, vs, d, &Hb))) {
        for (int trans = 0; trans < 2; trans++) {
            const sps_hisparse_view A = {&H, trans, {0.5, 0.0}}, B = {&Hb, trans, {3.0, 0.0}};
            if (!TU_OK(g_ctx, sps_hisparse_add(g_ctx, t, A, B, d, &Hc))) continue;
            const int n = trans ? s->m : s->n, m = trans ? s->n : s->m;
            /* the dense sum in double */
            double *want = tu_xcalloc(2 * (size_t)n * m + 2, sizeof(double));
            char *has = tu_xcalloc((size_t)n * m + 1, 1);
            for (int pass = 0; pass < 2; pass++)
                for (int i = 0; i < s->n; i++) {
                    const sps_index *rp2 = pass ? rb : s->rowptr, *cl2 = pass ? cb : s->col;
                    for (sps_index k = rp2[i]; k < rp2[i + 1]; k++) {
                        double re, im;
                        tu_get(t, pass ? vb : val, (size_t)k, &re, &im);
                        const size_t at = trans ? (size_t)cl2[k] * m + i : (size_t)i * m + cl2[k];
                        want[2 * at] += (pass ? 3.0 : 0.5) * re, want[2 * at + 1] += (pass ? 3.0 : 0.5) * im;
                        has[at] = 1;
                    }
                }
            int64_t union_nnz = 0;
            for (size_t q = 0; q < (size_t)n * m; q++) union_nnz += has[q];
            sps_index *r3 = tu_xcalloc((size_t)n + 1, sizeof *r3), *c3 = tu_xcalloc((size_t)Hc.nnz + 1, sizeof *c3);
            void *v3 = tu_xcalloc((size_t)Hc.nnz + 1, vs);
            sps_hisparse_to_csr(&Hc, 0, r3, c3, v3);
            int ok = Hc.nnz == union_nnz && Hc.n == n && Hc.m == m;
            double err = 0, big = 1e-300;
            for (int i = 0; ok && i < n; i++)
                for (sps_index k = r3[i]; ok && k < r3[i + 1]; k++) {
                    const size_t at = (size_t)i * m + c3[k];
                    double re, im;
                    tu_get(t, v3, (size_t)k, &re, &im);
                    ok = has[at] && (k == r3[i] || c3[k] > c3[k - 1]);
                    err = fmax(err, hypot(re - want[2 * at], im - want[2 * at + 1]));
                    big = fmax(big, hypot(want[2 * at], want[2 * at + 1]));
                }
            TU_CHECK(ok && err <= 8 * tu_eps(t) * fmax(big, 1.0),
                     "%s: 0.5 A%s + 3 B%s: the union's %lld entries (got %lld), values off by %.3g", what,
                     trans ? "^T" : "", trans ? "^T" : "", (long long)union_nnz, (long long)Hc.nnz, err);
            /* the dual traversal against its oracle, the route through CSR: the same pool, byte for byte */
            sps_hisparse Ho;
            if (TU_OK(g_ctx, sps_hisparse_add_csr(g_ctx, t, A, B, d, &Ho))) {
                TU_CHECK(hs_same_tree(&Ho, &Hc),
                         "%s: 0.5 A%s + 3 B%s: the dual traversal's tree (%zu bytes, root %u) is the CSR route's "
                         "(%zu bytes, root %u)",
                         what, trans ? "^T" : "", trans ? "^T" : "", Hc.bytes, Hc.root, Ho.bytes, Ho.root);
                sps_hisparse_free(&Ho);
            }
            /* the public sps_matrix_add: A registered as hisparse, B in CSR (the conversion path),
               bitwise the oracle's sum */
            if (ok) {
                unsigned char alpha[16], beta[16];
                put_real(t, alpha, 0.5), put_real(t, beta, 3.0);
                char dv[8];
                snprintf(dv, sizeof dv, "%d", d);
                sps_options o = tu_fopts(SPS_FMT_HISPARSE, "node-size", dv, NULL);
                sps_matrix Am = NULL, Ah = NULL, Bm = NULL, Cm = NULL;
                const sps_op_mode op = trans ? SPS_OP_T : SPS_OP_N;
                if (TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, s->n, s->m, s->rowptr, s->col, val, t, &Am)) &&
                    TU_OK(g_ctx, sps_matrix_convert(Am, SPS_FMT_HISPARSE, o, &Ah)) &&
                    TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, s->n, s->m, rb, cb, vb, t, &Bm)) &&
                    TU_OK(g_ctx, sps_matrix_add(alpha, Ah, op, beta, Bm, op, o, &Cm))) {
                    tu_csr want_c;
                    memset(&want_c, 0, sizeof want_c);
                    want_c.info.rows = n, want_c.info.cols = m, want_c.info.nnz = Hc.nnz, want_c.info.scalar = t;
                    want_c.rowptr = r3, want_c.col = c3, want_c.val = v3;
                    TU_CHECK_EXPORT(g_ctx, Cm, &want_c, "%s: sps_matrix_add(0.5, A%s, 3, B%s) differs from the oracle",
                                    what, trans ? "^T" : "", trans ? "^T" : "");
                    /* its products, the transposed operands' sum a view of the plain sum's tree */
                    for (int mode = 0; mode < 2; mode++) {
                        double w = 0;
                        const uint64_t seed = tu_rng_u64(&g_rng);
                        TU_CHECK(tu_spmv_check(g_ctx, &want_c, Cm, (sps_op_mode)mode, mode, seed, &w, NULL),
                                 "%s: (0.5 A%s + 3 B%s) x, op %s: off by %g", what, trans ? "^T" : "",
                                 trans ? "^T" : "", mode ? "T" : "N", w);
                    }
                    sps_matrix_info_t ci;
                    TU_CHECK(sps_matrix_info(Cm, &ci) == SPS_OK && ci.format == SPS_FMT_HISPARSE,
                             "%s: the sum is a hisparse matrix", what);
                    /* operands and sum of three node sizes: B as hisparse of another d, C of the default */
                    sps_options o2 = tu_fopts(SPS_FMT_HISPARSE, "node-size", d == 4 ? "16" : "4", NULL);
                    sps_matrix B2 = NULL, C2 = NULL;
                    if (TU_OK(g_ctx, sps_matrix_convert(Bm, SPS_FMT_HISPARSE, o2, &B2)) &&
                        TU_OK(g_ctx, sps_matrix_add(alpha, Ah, op, beta, B2, op, NULL, &C2)))
                        TU_CHECK_EXPORT(g_ctx, C2, &want_c, "%s: 0.5 A%s + 3 B%s of node sizes %d, %s into 128", what,
                                        trans ? "^T" : "", trans ? "^T" : "", d, d == 4 ? "16" : "4");
                    if (B2 && s->n == s->m) /* op(A) + op'(B): mixed ops need a square A */
                        TU_CHECK(hs_same_sum_paths(g_ctx, alpha, Ah, op, beta, B2, trans ? SPS_OP_N : SPS_OP_T, "32",
                                                   g_small),
                                 "%s: 0.5 A%s + 3 B%s of node sizes %d, %s into 32: the one-pass sum differs from the "
                                 "general one", what, trans ? "^T" : "", trans ? "" : "^T", d, d == 4 ? "16" : "4");
                    sps_matrix_destroy(C2), sps_matrix_destroy(B2);
                    sps_options_destroy(o2);
                    /* the one-pass sum and the general one: the same tree and schedule (B as hisparse too) */
                    sps_matrix Bh = NULL;
                    if (TU_OK(g_ctx, sps_matrix_convert(Bm, SPS_FMT_HISPARSE, o, &Bh))) {
                        TU_CHECK(hs_same_sum_paths(g_ctx, alpha, Ah, op, beta, Bh, op, dv, g_small),
                                 "%s: 0.5 A%s + 3 B%s: the one-pass sum differs from the general one", what,
                                 trans ? "^T" : "", trans ? "^T" : "");
                        if (s->n == s->m)
                            TU_CHECK(hs_same_sum_paths(g_ctx, alpha, Ah, op, beta, Bh, trans ? SPS_OP_N : SPS_OP_T, dv,
                                                       g_small),
                                     "%s: 0.5 A%s + 3 B%s: the one-pass sum differs from the general one", what,
                                     trans ? "^T" : "", trans ? "" : "^T");
                    }
                    sps_matrix_destroy(Bh);
                    /* the backend's sum (lists, sort or merge, build from keys) is the dual traversal's
                       tree; of transposed operands, the transpose of the plain sum's (a view: A^T + B^T
                       = (A + B)^T) */
                    sps_hisparse_copy cs;
                    sps_hisparse Hp;
                    const sps_hisparse *want_t = &Hc;
                    if (trans && TU_OK(g_ctx, sps_hisparse_add(g_ctx, t, (sps_hisparse_view){&H, 0, {0.5, 0.0}},
                                                               (sps_hisparse_view){&Hb, 0, {3.0, 0.0}}, d, &Hp)))
                        want_t = &Hp;
                    if (TU_OK(g_ctx, sps_hisparse_download(Cm, &cs))) {
                        TU_CHECK(hs_same_tree(&cs.H, want_t) && cs.trans == trans,
                                 "%s: sps_matrix_add's tree (%zu bytes, transposed %d) is the dual traversal's (%zu "
                                 "bytes, transposed %d)",
                                 what, cs.H.bytes, cs.trans, want_t->bytes, trans);
                        sps_hisparse_copy_free(&cs);
                    }
                    if (want_t != &Hc) sps_hisparse_free(&Hp);
                    /* the view in turn an operand: 3 C^T + 0.5 A (the tree as it is, op N on it) equals
                       3 (0.5 A + 3 B) + 0.5 A of the transposed operands' sum: op T on a view flips back */
                    if (trans && s->n == s->m) {
                        sps_matrix V = NULL, W = NULL;
                        tu_csr ev, ew, evt;
                        memset(&ev, 0, sizeof ev), memset(&ew, 0, sizeof ew), memset(&evt, 0, sizeof evt);
                        if (TU_OK(g_ctx, sps_matrix_add(beta, Cm, SPS_OP_T, alpha, Ah, SPS_OP_N, o, &V)) &&
                            TU_OK(g_ctx, sps_matrix_add(beta, Cm, SPS_OP_N, alpha, Ah, SPS_OP_T, o, &W)) &&
                            tu_export_csr(g_ctx, V, &ev) && tu_export_csr(g_ctx, W, &ew)) {
                            csr_transpose(&ev, &evt);
                            TU_CHECK((ev.info.nnz > 0 || s->rowptr[s->n] == 0) && tu_same_csr(&evt, &ew),
                                     "%s: 3 (0.5 A^T + 3 B^T)^T + 0.5 A is not the transpose of 3 (0.5 A^T + 3 B^T) + "
                                     "0.5 A^T (%lld / %lld entries)",
                                     what, (long long)ev.info.nnz, (long long)ew.info.nnz);
                            /* and V is 3 (0.5 A + 3 B) + 0.5 A of plain operands, bit for bit (the same sums) */
                            sps_matrix S2 = NULL, V2 = NULL;
                            if (TU_OK(g_ctx, sps_matrix_add(alpha, Am, SPS_OP_N, beta, Bm, SPS_OP_N, o, &S2)) &&
                                TU_OK(g_ctx, sps_matrix_add(beta, S2, SPS_OP_N, alpha, Ah, SPS_OP_N, o, &V2)))
                                TU_CHECK_EXPORT(g_ctx, V2, &ev,
                                                "%s: 3 (0.5 A^T + 3 B^T)^T + 0.5 A is not 3 (0.5 A + 3 B) + 0.5 A",
                                                what);
                            sps_matrix_destroy(S2), sps_matrix_destroy(V2);
                        }
                        tu_csr_free(&ev), tu_csr_free(&ew), tu_csr_free(&evt);
                        sps_matrix_destroy(V), sps_matrix_destroy(W);
                    }
                }
                /* square: 0.5 A + 3 B^T, the ops mixed, against the oracle's views */
                sps_hisparse Hm;
                sps_matrix Mm = NULL;
                if (!trans && s->n == s->m && Ah && Bm &&
                    TU_OK(g_ctx, sps_hisparse_add(g_ctx, t, (sps_hisparse_view){&H, 0, {0.5, 0.0}},
                                                  (sps_hisparse_view){&Hb, 1, {3.0, 0.0}}, d, &Hm))) {
                    tu_csr wm;
                    memset(&wm, 0, sizeof wm);
                    wm.info.rows = s->n, wm.info.cols = s->m, wm.info.nnz = Hm.nnz, wm.info.scalar = t;
                    wm.rowptr = tu_xcalloc((size_t)s->n + 1, sizeof(sps_index));
                    wm.col = tu_xcalloc((size_t)Hm.nnz + 1, sizeof(sps_index));
                    wm.val = tu_xcalloc((size_t)Hm.nnz + 1, vs);
                    sps_hisparse_to_csr(&Hm, 0, wm.rowptr, wm.col, wm.val);
                    if (TU_OK(g_ctx, sps_matrix_add(alpha, Ah, SPS_OP_N, beta, Bm, SPS_OP_T, o, &Mm)))
                        TU_CHECK_EXPORT(g_ctx, Mm, &wm, "%s: sps_matrix_add(0.5, A, 3, B^T) differs from the oracle", what);
                    free(wm.rowptr), free(wm.col), free(wm.val);
                    sps_matrix_destroy(Mm);
                    sps_hisparse_free(&Hm);
                }
                sps_matrix_destroy(Cm), sps_matrix_destroy(Bm), sps_matrix_destroy(Ah), sps_matrix_destroy(Am);
                sps_options_destroy(o);
            }
            free(want), free(has), free(r3), free(c3), free(v3);
            sps_hisparse_free(&Hc);
        }
        sps_hisparse_free(&Hb);
    }
    free(rb), free(cb), free(vb);
    free(rp), free(cc), free(vv), free(val);
    sps_hisparse_free(&H);
}

/* The schedule the split rule gives, walked serially over the tree's leaves (the oracle of
 * the backend's prefix-sum build): sparse leaves' entries as one stream cut every
 * SPS_HS_RUN, a segment a piece; a dense leaf an item. */
typedef struct {
    const sps_hisparse *H;
    sps_hs_item *sparse, *dense;
    int64_t *warp_seg, ns, nd, pos;
} sched_oracle;

static void oracle_leaf(void *ctx, uint32_t ref, sps_index r0, sps_index c0)
{
    sched_oracle *q = ctx;
    sps_hs_item it = {.ref = ref, .r0 = r0, .c0 = c0};
    if (SPS_HS_TYPE(ref) == SPS_HS_DENSE) {
        q->dense[q->nd++] = it;
        return;
    }
    uint32_t count;
    memcpy(&count, q->H->pool + SPS_HS_OFF(ref), 4);
    for (uint32_t f = 0; f < count;) {
        const uint32_t room = (uint32_t)(SPS_HS_RUN - q->pos % SPS_HS_RUN), c = count - f < room ? count - f : room;
        if (q->pos % SPS_HS_RUN == 0) q->warp_seg[q->pos / SPS_HS_RUN] = q->ns;
        it.first = (uint16_t)f, it.span = sps_hs_span(c, q->pos % SPS_HS_RUN);
        q->sparse[q->ns++] = it;
        f += c, q->pos += c;
    }
}

/* A registered matrix's tree and schedule (sps_hisparse_download) against the host builder's
 * tree and the oracle's schedule: the same bytes.  Shared with test_gpu_hisparse. */
static int same_build(sps_context ctx, sps_matrix B, const shape *s, sps_scalar t, int d, const void *val)
{
    sps_hisparse_copy c;
    sps_hisparse H;
    if (!TU_OK(ctx, sps_hisparse_download(B, &c))) return 0;
    if (!TU_OK(g_ctx, sps_hisparse_from_csr(g_ctx, s->n, s->m, s->rowptr, s->col, val, sps_scalar_size(t), d, &H))) {
        sps_hisparse_copy_free(&c);
        return 0;
    }
    const int64_t cap = H.nnz + 2;
    sched_oracle q = {.H = &H, .sparse = tu_xcalloc((size_t)cap, sizeof(sps_hs_item)),
                      .dense = tu_xcalloc((size_t)cap, sizeof(sps_hs_item)),
                      .warp_seg = tu_xcalloc((size_t)cap, sizeof(int64_t))};
    sps_hs_leaves(&H, oracle_leaf, &q);
    const int64_t nw = (q.pos + SPS_HS_RUN - 1) / SPS_HS_RUN;
    q.warp_seg[nw] = q.ns;
    const sps_hisparse_copy want = {.sparse = q.sparse, .dense = q.dense, .warp_seg = q.warp_seg, .nsparse = q.ns,
                                    .ndense = q.nd, .nwarps = q.ns ? nw : 0};
    const int ok = hs_same_tree(&c.H, &H) && hs_same_sched(&c, &want);
    free(q.sparse), free(q.dense), free(q.warp_seg);
    sps_hisparse_free(&H);
    sps_hisparse_copy_free(&c);
    return ok;
}

/* The registered format (sps_matrix_convert to SPS_FMT_HISPARSE with option node-size d):
 * exact export, SpMV and SpMV^T through an operator against the long double reference for
 * every alpha/beta case (y poisoned where beta = 0), the footprint in sps_matrix_info. */
static void check_format(const shape *s, sps_scalar t, int d, void *val)
{
    sps_matrix A = NULL, B = NULL;
    char dv[8];
    snprintf(dv, sizeof dv, "%d", d);
    sps_options o = tu_fopts(SPS_FMT_HISPARSE, "node-size", dv, NULL);
    tu_csr h;
    memset(&h, 0, sizeof h);
    h.info.rows = s->n, h.info.cols = s->m, h.info.nnz = s->nnz, h.info.scalar = t;
    h.rowptr = s->rowptr, h.col = s->col, h.val = val;
    if (!o || !TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, s->n, s->m, s->rowptr, s->col, val, t, &A)) ||
        !TU_OK(g_ctx, sps_matrix_convert(A, SPS_FMT_HISPARSE, o, &B)))
        goto out;
    TU_CHECK_EXPORT(g_ctx, B, &h, "%s [%s] d=%d: registered hisparse does not export its CSR", s->name,
                    sps_scalar_name(t), d);
    TU_CHECK(same_build(g_ctx, B, s, t, d, val),
             "%s [%s] d=%d: the backend build's tree or schedule differs from the host builder's", s->name,
             sps_scalar_name(t), d);
    sps_matrix_info_t info;
    if (TU_OK(g_ctx, sps_matrix_info(B, &info)))
        TU_CHECK(info.format == SPS_FMT_HISPARSE && info.bytes >= 16 && info.stored_entries >= info.nnz &&
                     info.nnz == s->nnz,
                 "%s [%s] d=%d: info format %d, %zu bytes, %lld stored for %lld entries", s->name, sps_scalar_name(t),
                 d, (int)info.format, (size_t)info.bytes, (long long)info.stored_entries, (long long)info.nnz);
    for (int mode = 0; mode < 2; mode++)
        for (int ab = 0; ab < TU_AB_COUNT; ab++) {
            double w = 0;
            TU_CHECK(tu_spmv_check(g_ctx, &h, B, (sps_op_mode)mode, ab, tu_rng_u64(&g_rng), &w, NULL),
                     "%s [%s] d=%d: registered hisparse SpMV%s (%s) off by %g", s->name, sps_scalar_name(t), d,
                     mode ? "^T" : "", tu_ab_name[ab], w);
        }
out:
    sps_options_destroy(o);
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
}

/* the backend build alone at node size d (the product is check_format's) */
static void build_only(const shape *s, sps_scalar t, int d, void *val)
{
    sps_matrix A = NULL, B = NULL;
    char dv[8];
    snprintf(dv, sizeof dv, "%d", d);
    sps_options o = tu_fopts(SPS_FMT_HISPARSE, "node-size", dv, NULL);
    if (o && TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, s->n, s->m, s->rowptr, s->col, val, t, &A)) &&
        TU_OK(g_ctx, sps_matrix_convert(A, SPS_FMT_HISPARSE, o, &B)))
        TU_CHECK(same_build(g_ctx, B, s, t, d, val),
                 "%s [%s] d=%d: the backend build's tree or schedule differs from the host builder's", s->name,
                 sps_scalar_name(t), d);
    sps_options_destroy(o);
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
}

static void free_shape(shape *s)
{
    free(s->rowptr);
    free(s->col);
}

int main(void)
{
    if (tu_cpu_context(&g_ctx)) return 1;
    tu_rng_seed(&g_rng, 0x415bULL);
    shape sh[16];
    int ns = 0;
    g_density = 0.02, sh[ns++] = make("random 2%", 600, 450, k_random);
    g_density = 0.3, sh[ns++] = make("random 30%", 130, 260, k_random);
    sh[ns++] = make("dense", 300, 300, k_all);
    sh[ns++] = make("1x1", 1, 1, k_all);
    sh[ns++] = make("n x 1", 333, 1, k_all);
    sh[ns++] = make("1 x n", 1, 333, k_all);
    sh[ns++] = make("diagonal", 515, 515, k_diag);
    sh[ns++] = make("empty", 40, 50, k_none);
    sh[ns++] = make("empty 0x0", 0, 0, k_none);
    sh[ns++] = make("one dense row", 257, 301, k_row);
    sh[ns++] = make("one dense column", 301, 257, k_colm);
    static const int ds[5] = {2, 4, 16, 128, 256};
    for (int si = 0; si < ns; si++)
        for (int ti = 0; ti < TU_NTYPES; ti++) {
            for (int di = 0; di < 5; di++) check(&sh[si], tu_all_types[ti], ds[di]);
            void *val = tu_shape_values(&g_rng, tu_all_types[ti], sh[si].nnz, 1);
            check_format(&sh[si], tu_all_types[ti], si % 2 ? 4 : 128, val);
            for (int di = 0; di < 5; di++) build_only(&sh[si], tu_all_types[ti], ds[di], val);
            free(val);
        }
    {
        shape b8 = make("64 half-full 8x8 diagonal blocks", 512, 512, k_blocks8);
        for (int ti = 0; ti < TU_NTYPES; ti++) {
            void *val = tu_shape_values(&g_rng, tu_all_types[ti], b8.nnz, 1);
            check_format(&b8, tu_all_types[ti], 8, val);
            free(val);
        }
        free_shape(&b8);
    }
    /* a node size the option does not take */
    {
        sps_options o = NULL;
        TU_CHECK(sps_format_options_create(SPS_FMT_HISPARSE, &o) == SPS_OK && sps_options_set(o, "node-size", "12") != SPS_OK,
                 "node-size 12 refused by the option");
        sps_options_destroy(o);
    }

    /* node kinds: a full block at d = 16 is dense leaves where they are full, COO4 at its
     * edges (12-wide leaves: sparse is smaller); a diagonal at d = 4 is COO4 leaves (4 entries a
     * 4 x 4 diagonal block, 3 in the last) */
    sps_hisparse H;
    double *v = tu_xcalloc(300 * 300, sizeof(double));
    tu_fill_random(&g_rng, SPS_F64, 300 * 300, v);
    if (TU_OK(g_ctx, sps_hisparse_from_csr(g_ctx, 300, 300, sh[2].rowptr, sh[2].col, v, 8, 16, &H))) {
        TU_CHECK(H.nodes[1][SPS_HS_DENSE] == 18 * 18 && H.nodes[1][SPS_HS_COO4] == 37 && H.depth == 3,
                 "dense 300x300 at d = 16: %lld dense leaves (the 18 x 18 full ones), %lld COO4 (the 37 partial "
                 "ones at the edges, sparse smaller), depth %d",
                 (long long)H.nodes[1][SPS_HS_DENSE], (long long)H.nodes[1][SPS_HS_COO4], H.depth);
        sps_hisparse_free(&H);
    }
    if (TU_OK(g_ctx, sps_hisparse_from_csr(g_ctx, 515, 515, sh[6].rowptr, sh[6].col, v, 8, 4, &H))) {
        TU_CHECK(H.nodes[1][SPS_HS_COO4] == 129 && H.nodes[1][SPS_HS_COO2] == 0 && H.nodes[1][SPS_HS_COO1] == 0 &&
                     H.nodes[1][SPS_HS_DENSE] == 0 && H.depth == 5,
                 "diagonal 515 at d = 4: COO4 / COO2 / COO1 / dense leaves %lld %lld %lld %lld, depth %d",
                 (long long)H.nodes[1][SPS_HS_COO4], (long long)H.nodes[1][SPS_HS_COO2],
                 (long long)H.nodes[1][SPS_HS_COO1], (long long)H.nodes[1][SPS_HS_DENSE], H.depth);
        sps_hisparse_free(&H);
    }
    /* a row of 2^24 + 10 columns at d = 256: depth 4, so the levels' spans reach 256^4 = 2^32 */
    {
        const sps_index wr[2] = {0, 2}, wc[2] = {0, (1 << 24) + 5};
        if (TU_OK(g_ctx, sps_hisparse_from_csr(g_ctx, 1, (1 << 24) + 10, wr, wc, v, 8, 256, &H))) {
            sps_index br[2] = {0}, bc[2] = {0};
            double bv[2] = {0};
            sps_hisparse_to_csr(&H, 0, br, bc, bv);
            TU_CHECK(H.depth == 4 && br[1] == 2 && bc[0] == wc[0] && bc[1] == wc[1] && bv[0] == v[0] && bv[1] == v[1],
                     "1 x %d at d = 256: depth %d, back to CSR %d entries, columns %d %d", (1 << 24) + 10, H.depth,
                     (int)br[1], (int)bc[0], (int)bc[1]);
            sps_hisparse_free(&H);
        }
    }
    /* refusals */
    TU_CHECK(sps_hisparse_from_csr(g_ctx, 300, 300, sh[2].rowptr, sh[2].col, v, 8, 12, &H) == SPS_ERR_ARG &&
                 strstr(sps_context_error(g_ctx), "power of two"),
             "d = 12 refused: %s", sps_context_error(g_ctx));
    sps_context_clear_error(g_ctx);
    sps_index rp[3] = {0, 2, 3}, cl[3] = {4, 1, 0};
    TU_CHECK(sps_hisparse_from_csr(g_ctx, 2, 5, rp, cl, v, 8, 4, &H) == SPS_ERR_ARG &&
                 strstr(sps_context_error(g_ctx), "row 0"),
             "unsorted columns refused: %s", sps_context_error(g_ctx));
    sps_context_clear_error(g_ctx);
    /* sps_matrix_add's refusals */
    {
        sps_matrix A1 = NULL, A2 = NULL, Af = NULL, C = NULL;
        float vf[3] = {1, 2, 3};
        sps_index r2[3] = {0, 2, 3}, c2[3] = {0, 4, 1};
        if (TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, 2, 5, r2, c2, v, SPS_F64, &A1)) &&
            TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, 2, 5, r2, c2, vf, SPS_F32, &Af)) &&
            TU_OK(g_ctx, sps_matrix_from_csr(g_ctx, 2, 5, r2, c2, v, SPS_F64, &A2))) {
            TU_CHECK(sps_matrix_add(NULL, A1, SPS_OP_N, NULL, A2, SPS_OP_T, NULL, &C) == SPS_ERR_ARG && !C &&
                         strstr(sps_context_error(g_ctx), "op(B) 5 x 2"),
                     "A + B^T of 2 x 5 refused: %s", sps_context_error(g_ctx));
            sps_context_clear_error(g_ctx);
            TU_CHECK(sps_matrix_add(NULL, A1, SPS_OP_N, NULL, Af, SPS_OP_N, NULL, &C) == SPS_ERR_ARG && !C &&
                         strstr(sps_context_error(g_ctx), "f32"),
                     "f64 + f32 refused: %s", sps_context_error(g_ctx));
            sps_context_clear_error(g_ctx);
            sps_options os = tu_fopts(SPS_FMT_SELL, NULL);
            TU_CHECK(sps_matrix_add(NULL, A1, SPS_OP_N, NULL, A2, SPS_OP_N, os, &C) == SPS_ERR_ARG && !C &&
                         strstr(sps_context_error(g_ctx), "another format"),
                     "sell's options refused: %s", sps_context_error(g_ctx));
            sps_context_clear_error(g_ctx);
            sps_options_destroy(os);
            TU_CHECK(sps_matrix_add(NULL, A1, SPS_OP_N, NULL, A2, SPS_OP_N, NULL, NULL) == SPS_ERR_ARG, "NULL C refused");
            sps_context_clear_error(g_ctx);
            /* a NaN or infinite alpha or beta would store non-finite values, which every builder
             * refuses: SPS_ERR_NUMERIC naming the scalar (it used to build C full of NaN/Inf) */
            const double one = 1.0, bad[3] = {NAN, INFINITY, -INFINITY};
            for (int k = 0; k < 3; k++)
                for (int which = 0; which < 2; which++) {
                    C = (sps_matrix)&C;
                    sps_context_clear_error(g_ctx);
                    const sps_status st = sps_matrix_add(which ? &one : &bad[k], A1, SPS_OP_N,
                                                         which ? &bad[k] : &one, A2, SPS_OP_N, NULL, &C);
                    TU_CHECK(st == SPS_ERR_NUMERIC && !C &&
                                 strstr(sps_context_error(g_ctx), which ? "beta is not finite" : "alpha is not finite"),
                             "sps_matrix_add with %s = %g: %s '%s'", which ? "beta" : "alpha", bad[k],
                             sps_status_name(st), sps_context_error(g_ctx));
                    if (st == SPS_OK) sps_matrix_destroy(C);
                    C = NULL;
                }
            sps_context_clear_error(g_ctx);
            /* NULL scalars are 1: A + A doubles every entry, the pattern kept */
            if (TU_OK(g_ctx, sps_matrix_add(NULL, A1, SPS_OP_N, NULL, A2, SPS_OP_N, NULL, &C))) {
                sps_index rr[3], cr[3];
                double vr[3];
                TU_CHECK(sps_matrix_export_csr(C, rr, cr, vr) == SPS_OK && rr[2] == 3 && cr[1] == 4 &&
                             vr[0] == 2 * v[0] && vr[2] == 2 * v[2],
                         "A + A with NULL scalars: 2A");
            }
        }
        sps_matrix_destroy(C), sps_matrix_destroy(A1), sps_matrix_destroy(A2), sps_matrix_destroy(Af);
    }
    /* an overflowing sum refused: A + A and 2 A + A^T by both paths, short and long lists */
    for (int ti = 0; ti < TU_NTYPES; ti++)
        for (int q = 0; q < 2; q++) hs_overflow_refused(g_ctx, tu_all_types[ti], q ? 2000 : 20, q ? 6 : 3, &g_rng);
    free(v);
    for (int si = 0; si < ns; si++) free_shape(&sh[si]);
    TU_CHECK(g_small[0] > 0 && g_small[1] > 0, "the one-pass sums: %d of short lists, %d of long ones", g_small[0],
             g_small[1]);
    sps_context_destroy(g_ctx);
    return tu_finish();
}
