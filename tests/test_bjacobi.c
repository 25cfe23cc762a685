/* Block-Jacobi (precond/bjacobi.c, the kernels bj_invert and bj_apply), CPU
 * backend, f32/f64/c32/c64:
 * - bj_invert on blocks of 1..32 rows (random, shifted to be well conditioned):
 *   B * inv(B) = I to rounding; a singular block (two equal rows) reported by
 *   its first row, the first of two; bj_apply against inv * x computed here, in
 *   place too;
 * - the preconditioner on a scalar matrix of nodes of 2 or 3 unknowns (rows of a
 *   node share their columns): auto finds the nodes' blocks (M D x = x, D the
 *   nodes' diagonal blocks), pc-block-size 1 is point Jacobi, a 3x3-block matrix's
 *   auto blocks are its entries (its expansion with pc-block-size 3 gives the
 *   same bits); a singular diagonal block is SPS_ERR_NUMERIC naming its rows;
 *   update re-runs only the numeric step; CG with it solves an SPD block system.
 * Ends with "N passed, M failed". */
#include "testutil.h"
#include "precond/precond_impl.h" /* the setup counters */

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;

/* ------------------------------------------------------------------ kernels */
/* sz x sz random block, row-major, |diagonal| raised by sz (well conditioned). */
static void random_block(sps_scalar t, int sz, void *b)
{
    tu_fill_random(&rng, t, (size_t)sz * sz, b);
    for (int i = 0; i < sz; i++) {
        double re, im;
        tu_get(t, b, (size_t)i * sz + i, &re, &im);
        tu_put(t, b, (size_t)i * sz + i, re + (re < 0 ? -sz : sz), im);
    }
}

/* max |(B inv)_ij - delta_ij| in double (complex too) */
static double inverse_error(sps_scalar t, int sz, const void *b, const void *inv)
{
    double worst = 0;
    for (int i = 0; i < sz; i++)
        for (int j = 0; j < sz; j++) {
            double sr = 0, si = 0;
            for (int k = 0; k < sz; k++) {
                double ar, ai, br, bi;
                tu_get(t, b, (size_t)i * sz + k, &ar, &ai);
                tu_get(t, inv, (size_t)k * sz + j, &br, &bi);
                sr += ar * br - ai * bi;
                si += ar * bi + ai * br;
            }
            const double e = hypot(sr - (i == j), si);
            worst = e > worst ? e : worst;
        }
    return worst;
}

static void test_kernels(void)
{
    static const int sizes[] = {1, 2, 3, 4, 5, 8, 13, 31, 32, 3, 1, 7};
    const int nb = (int)(sizeof sizes / sizeof sizes[0]);
    sps_index start[16];
    int64_t off[16];
    start[0] = 0;
    off[0] = 0;
    for (int k = 0; k < nb; k++) {
        start[k + 1] = start[k] + sizes[k];
        off[k + 1] = off[k] + (int64_t)sizes[k] * sizes[k];
    }
    const sps_index n = start[nb];
    sps_index *rowblk = tu_xcalloc((size_t)n, sizeof *rowblk);
    for (int k = 0; k < nb; k++)
        for (sps_index i = start[k]; i < start[k + 1]; i++) rowblk[i] = k;
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti];
        const size_t ss = sps_scalar_size(t);
        const sps_vec_kernels *K = &sps_cpu_vec_kernels[t];
        char *b = tu_xcalloc((size_t)off[nb], ss), *inv = tu_xcalloc((size_t)off[nb], ss);
        for (int k = 0; k < nb; k++) random_block(t, sizes[k], b + (size_t)off[k] * ss);
        memcpy(inv, b, (size_t)off[nb] * ss);
        sps_index bad = -1;
        TU_OK(ctx, K->bj_invert(sps_ex(ctx), nb, start, off, inv, &bad));
        TU_CHECK(bad == 0, "%s: no singular block (bad %d)", sps_scalar_name(t), (int)bad);
        for (int k = 0; k < nb; k++) {
            const double e = inverse_error(t, sizes[k], b + (size_t)off[k] * ss, inv + (size_t)off[k] * ss);
            TU_CHECK(e <= 100 * tu_eps(t) * sizes[k], "%s: block %d (%dx%d): |B inv - I| = %.3g", sps_scalar_name(t),
                     k, sizes[k], sizes[k], e);
        }
        /* apply: y = inv x against the sums here; in place the same */
        void *x = tu_xcalloc((size_t)n, ss), *y = tu_xcalloc((size_t)n, ss), *ref = tu_xcalloc((size_t)n, ss);
        tu_fill_random(&rng, t, (size_t)n, x);
        tu_fill_nan(t, (size_t)n, y);
        for (int k = 0; k < nb; k++)
            for (int r = 0; r < sizes[k]; r++) {
                double sr = 0, si = 0;
                for (int c = 0; c < sizes[k]; c++) {
                    double ar, ai, xr, xi;
                    tu_get(t, inv + (size_t)off[k] * ss, (size_t)r * sizes[k] + c, &ar, &ai);
                    tu_get(t, x, (size_t)start[k] + c, &xr, &xi);
                    sr += ar * xr - ai * xi;
                    si += ar * xi + ai * xr;
                }
                tu_put(t, ref, (size_t)start[k] + r, sr, si);
            }
        TU_OK(ctx, K->bj_apply(sps_ex(ctx), n, 0, rowblk, start, off, inv, x, y));
        TU_CHECK(tu_relerr(t, (size_t)n, y, ref) <= 100 * tu_eps(t), "%s: bj_apply error %.3g", sps_scalar_name(t),
                 tu_relerr(t, (size_t)n, y, ref));
        TU_OK(ctx, K->bj_apply(sps_ex(ctx), n, 0, rowblk, start, off, inv, x, x));
        TU_CHECK(memcmp(x, y, (size_t)n * ss) == 0, "%s: bj_apply in place differs", sps_scalar_name(t));
        /* singular blocks 6 (13x13: rows 2 and 5 equal) and 8 (32x32): the first one reported */
        memcpy(inv, b, (size_t)off[nb] * ss);
        char *b6 = inv + (size_t)off[6] * ss, *b8 = inv + (size_t)off[8] * ss;
        memcpy(b6 + (size_t)5 * 13 * ss, b6 + (size_t)2 * 13 * ss, (size_t)13 * ss);
        memset(b8, 0, (size_t)32 * ss); /* row 0 of block 8 zero */
        TU_OK(ctx, K->bj_invert(sps_ex(ctx), nb, start, off, inv, &bad));
        TU_CHECK(bad == start[6] + 1, "%s: singular block reported at row %d, want %d", sps_scalar_name(t), (int)bad,
                 (int)start[6] + 1);
        free(b);
        free(inv);
        free(x);
        free(y);
        free(ref);
    }
    free(rowblk);
}

/* ------------------------------------------------------------------ the preconditioner */
/* A scalar matrix of nn nodes on a ring (node p coupled to p-1, p+1 and p+5), node p
 * of dof[p] unknowns: every row of a node has the node's columns, so a node is a
 * supervariable.  Blocks diagonally dominant: SPD when sym (values mirrored). */
typedef struct {
    sps_index n, nn, *first; /* rows; nodes; node p's rows first[p] .. first[p+1]-1 */
    tu_csr h;
} node_matrix;

static node_matrix node_matrix_make(sps_scalar t, int nn, const int *dof)
{
    node_matrix M;
    memset(&M, 0, sizeof M);
    M.nn = nn;
    M.first = tu_xcalloc((size_t)nn + 1, sizeof *M.first);
    for (int p = 0; p < nn; p++) M.first[p + 1] = M.first[p] + dof[p];
    M.n = M.first[nn];
    const size_t ss = sps_scalar_size(t);
    M.h.rowptr = tu_xcalloc((size_t)M.n + 1, sizeof *M.h.rowptr);
    M.h.col = tu_xcalloc((size_t)M.n * 32 * 4, sizeof *M.h.col);
    M.h.val = tu_xcalloc((size_t)M.n * 32 * 4, ss);
    int64_t e = 0;
    for (int p = 0; p < nn; p++) {
        int nb[4] = {p, (p + nn - 1) % nn, (p + 1) % nn, (p + 5) % nn}, cnt = 4;
        /* sorted unique neighbours */
        for (int i = 0; i < cnt; i++)
            for (int j = i + 1; j < cnt; j++)
                if (nb[j] < nb[i]) {
                    const int tmp = nb[i];
                    nb[i] = nb[j];
                    nb[j] = tmp;
                }
        for (sps_index r = M.first[p]; r < M.first[p + 1]; r++) {
            M.h.rowptr[r] = (sps_index)e;
            for (int i = 0; i < cnt; i++) {
                if (i && nb[i] == nb[i - 1]) continue;
                for (sps_index c = M.first[nb[i]]; c < M.first[nb[i] + 1]; c++, e++) {
                    M.h.col[e] = c;
                    const double v = c == r ? 40.0 : tu_rng_range(&rng, -1, 1);
                    tu_put(t, M.h.val, (size_t)e, v, 0);
                }
            }
        }
    }
    M.h.rowptr[M.n] = (sps_index)e;
    return M;
}

static void node_matrix_free(node_matrix *M)
{
    free(M->first);
    free(M->h.rowptr);
    free(M->h.col);
    free(M->h.val);
}

/* y = D x, D the diagonal blocks of the node partition of M */
static void node_blockdiag(const node_matrix *M, sps_scalar t, const void *x, void *y)
{
    for (int p = 0; p < M->nn; p++)
        for (sps_index r = M->first[p]; r < M->first[p + 1]; r++) {
            double sr = 0, si = 0;
            for (sps_index e = M->h.rowptr[r]; e < M->h.rowptr[r + 1]; e++) {
                const sps_index c = M->h.col[e];
                if (c < M->first[p] || c >= M->first[p + 1]) continue;
                double ar, ai, xr, xi;
                tu_get(t, M->h.val, (size_t)e, &ar, &ai);
                tu_get(t, x, (size_t)c, &xr, &xi);
                sr += ar * xr - ai * xi;
                si += ar * xi + ai * xr;
            }
            tu_put(t, y, (size_t)r, sr, si);
        }
}

static sps_precond bjacobi(sps_matrix A, const char *block_size)
{
    sps_precond P = tu_precond_with(ctx, A, "bjacobi", block_size ? "pc-block-size" : NULL, block_size);
    TU_CHECK(P != NULL, "bjacobi setup: %s", sps_context_error(ctx));
    return P;
}

static void test_precond(void)
{
    enum { NN = 40 };
    int dof[NN];
    for (int p = 0; p < NN; p++) dof[p] = p % 3 == 1 ? 2 : 3;
    for (int ti = 0; ti < TU_NTYPES; ti++) {
        const sps_scalar t = tu_all_types[ti];
        const char *tn = sps_scalar_name(t);
        node_matrix M = node_matrix_make(t, NN, dof);
        const sps_index n = M.n;
        sps_matrix A = NULL;
        TU_OK(ctx, sps_matrix_from_csr(ctx, n, n, M.h.rowptr, M.h.col, M.h.val, t, &A));
        void *x = tu_xcalloc((size_t)n, sps_scalar_size(t)), *dx = tu_xcalloc((size_t)n, sps_scalar_size(t));
        tu_fill_random(&rng, t, (size_t)n, x);
        node_blockdiag(&M, t, x, dx);
        /* auto: the nodes (supervariables): M D x = x */
        sps_precond P = bjacobi(A, NULL);
        if (P) {
            void *y = tu_precond_apply_host(ctx, P, t, n, dx);
            TU_CHECK(tu_relerr(t, (size_t)n, y, x) <= 100 * tu_eps(t), "%s: auto blocks: |M D x - x| = %.3g", tn,
                     tu_relerr(t, (size_t)n, y, x));
            free(y);
            /* update: the numeric step only */
            TU_OK(ctx, sps_precond_update(P, NULL, A));
            TU_CHECK(P->nsymbolic == 1 && P->nnumeric == 2, "%s: update ran %d/%d steps", tn, P->nsymbolic,
                     P->nnumeric);
            sps_precond_destroy(P);
        }
        /* pc-block-size 1: point Jacobi */
        sps_precond J = NULL;
        TU_OK(ctx, sps_precond_create_by_name(A, "jacobi", &J));
        P = bjacobi(A, "1");
        if (P && J) {
            void *yj = tu_precond_apply_host(ctx, J, t, n, x), *yb = tu_precond_apply_host(ctx, P, t, n, x);
            TU_CHECK(tu_relerr(t, (size_t)n, yb, yj) <= 4 * tu_eps(t), "%s: pc-block-size 1 is point Jacobi (%.3g)",
                     tn, tu_relerr(t, (size_t)n, yb, yj));
            free(yj);
            free(yb);
        }
        sps_precond_destroy(J);
        sps_precond_destroy(P);
        /* a singular diagonal block: node 4 (rows 10..12, 1-based 11..13) gets two equal rows */
        sps_index r0 = M.first[4];
        const size_t ss = sps_scalar_size(t);
        memcpy((char *)M.h.val + (size_t)M.h.rowptr[r0 + 1] * ss, (char *)M.h.val + (size_t)M.h.rowptr[r0] * ss,
               (size_t)(M.h.rowptr[r0 + 1] - M.h.rowptr[r0]) * ss);
        sps_matrix S = NULL;
        TU_OK(ctx, sps_matrix_from_csr(ctx, n, n, M.h.rowptr, M.h.col, M.h.val, t, &S));
        P = NULL;
        TU_CHECK(sps_precond_create_by_name(S, "bjacobi", &P) == SPS_ERR_NUMERIC && !P, "%s: singular block", tn);
        char want[96];
        snprintf(want, sizeof want, "block of rows %d..%d is singular", (int)r0 + 1, (int)M.first[5]);
        TU_CHECK(strstr(sps_context_error(ctx), want) != NULL, "%s: message '%s', want '%s'", tn,
                 sps_context_error(ctx), want);
        TU_DESTROY_MATRICES(A, S);
        free(x);
        free(dx);
        node_matrix_free(&M);
    }
}

/* A 3x3-block matrix: auto blocks are its entries, as its expansion with pc-block-size 3;
 * CG with it solves the SPD system. */
static void test_block_matrix(void)
{
    enum { NN = 30 };
    int dof[NN];
    for (int p = 0; p < NN; p++) dof[p] = 3;
    node_matrix M = node_matrix_make(SPS_F64, NN, dof);
    /* symmetric: A + A^T (the pattern is symmetric: the ring's +-1 and +-5 neighbours are not,
     * so take the symmetric part through a dense copy) */
    const sps_index n = M.n;
    double *dense = tu_xcalloc((size_t)n * n, sizeof *dense);
    for (sps_index r = 0; r < n; r++)
        for (sps_index e = M.h.rowptr[r]; e < M.h.rowptr[r + 1]; e++) {
            dense[(size_t)r * n + M.h.col[e]] += 0.5 * ((double *)M.h.val)[e];
            dense[(size_t)M.h.col[e] * n + r] += 0.5 * ((double *)M.h.val)[e];
        }
    /* COO of the nonzeros, as 3x3 blocks and as scalars */
    sps_index *ri = tu_xcalloc((size_t)n * n, sizeof *ri), *ci = tu_xcalloc((size_t)n * n, sizeof *ci);
    double *v = tu_xcalloc((size_t)n * n, sizeof *v);
    int64_t nz = 0;
    for (sps_index r = 0; r < n; r++)
        for (sps_index c = 0; c < n; c++)
            if (dense[(size_t)r * n + c] != 0) {
                ri[nz] = r;
                ci[nz] = c;
                v[nz++] = dense[(size_t)r * n + c];
            }
    sps_matrix S = NULL, B = NULL;
    TU_OK(ctx, sps_matrix_from_coo(ctx, n, n, nz, ri, ci, v, SPS_F64, &S));
    /* the blocks: every 3x3 block that holds a nonzero, zeros kept */
    sps_index *br = tu_xcalloc((size_t)NN * NN, sizeof *br), *bc = tu_xcalloc((size_t)NN * NN, sizeof *bc);
    double *bv = tu_xcalloc((size_t)NN * NN * 9, sizeof *bv);
    int64_t nbz = 0;
    for (int p = 0; p < NN; p++)
        for (int q = 0; q < NN; q++) {
            int any = 0;
            for (int i = 0; i < 9; i++) any |= dense[(size_t)(3 * p + i / 3) * n + 3 * q + i % 3] != 0;
            if (!any) continue;
            br[nbz] = p;
            bc[nbz] = q;
            for (int i = 0; i < 9; i++) bv[nbz * 9 + i] = dense[(size_t)(3 * p + i / 3) * n + 3 * q + i % 3];
            nbz++;
        }
    TU_OK(ctx, sps_matrix_from_coo_entries(ctx, NN, NN, nbz, br, bc, bv, sps_entry_block(3), SPS_F64, &B));
    sps_precond PB = bjacobi(B, NULL), PS = bjacobi(S, "3");
    double *x = tu_xcalloc((size_t)n, sizeof *x);
    tu_fill_random(&rng, SPS_F64, (size_t)n, x);
    if (PB && PS) {
        double *yb = tu_precond_apply_host(ctx, PB, SPS_F64, n, x), *ys = tu_precond_apply_host(ctx, PS, SPS_F64, n, x);
        TU_CHECK(memcmp(yb, ys, (size_t)n * sizeof *yb) == 0,
                 "3x3-block matrix: auto blocks differ from pc-block-size 3");
        free(yb);
        free(ys);
        /* CG with it */
        TU_CHECK(tu_solve_ones(B, "cg", PB) > 0, "CG + bjacobi on the 3x3-block SPD system");
        /* updated with the same entries in formats without diag_blocks (set up from bcsr's): the
           host path, the same blocks (it had called a NULL diag_blocks) */
        for (int fi = 0; fi < 2; fi++) {
            sps_matrix L = NULL;
            if (!TU_OK(ctx, sps_matrix_convert(B, fi ? SPS_FMT_BSELL : SPS_FMT_BELL, NULL, &L))) continue;
            if (TU_OK(ctx, sps_precond_update(PB, NULL, L))) {
                double *yl = tu_precond_apply_host(ctx, PB, SPS_F64, n, x),
                       *ys = tu_precond_apply_host(ctx, PS, SPS_F64, n, x);
                TU_CHECK(memcmp(yl, ys, (size_t)n * sizeof *yl) == 0, "bjacobi updated from %s: blocks differ",
                         fi ? "bsell" : "bell");
                free(yl);
                free(ys);
            }
            sps_matrix_destroy(L);
        }
    }
    sps_precond_destroy(PB);
    sps_precond_destroy(PS);
    TU_DESTROY_MATRICES(S, B);
    free(x);
    free(dense);
    free(ri);
    free(ci);
    free(v);
    free(br);
    free(bc);
    free(bv);
    node_matrix_free(&M);
}

/* A value that is not finite in a diagonal block (read with allow_nonfinite) is named with its
 * row and column, as Jacobi and ILU name it, not called a singular block: from the host path's
 * staging (a scalar matrix, pc-block-size 2) and from the format's own blocks (a quaternion
 * matrix, bcsr, whose blocks are its 4x4 entries). */
static void test_nonfinite(void)
{
    static const char *const mm[2] = {
        "%%MatrixMarket matrix coordinate real symmetric\n6 6 11\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n"
        "4 3 nan\n4 4 4\n5 4 -1\n5 5 4\n6 5 -1\n6 6 4\n",
        "%%MatrixMarket matrix coordinate quaternion hermitian\n2 2 3\n1 1 4 0 0 0\n2 1 1 0.5 -0.5 0.25\n"
        "2 2 inf 0 0 0\n"};
    const char *want[2] = {"row 3 holds a value that is not finite (column 4), in the diagonal block of rows 3..4",
                           "row 5 holds a value that is not finite (column 5), in the diagonal block of rows 5..8"};
    for (int k = 0; k < 2; k++) {
        sps_matrix A = tu_read_nonfinite(ctx, mm[k]);
        if (!A) continue;
        sps_precond P = NULL;
        if (TU_OK(ctx, sps_precond_new(ctx, "bjacobi", &P)) &&
            (k || TU_OK(ctx, sps_precond_set_option(P, "pc-block-size", "2")))) {
            const sps_status st = sps_precond_setup(P, NULL, A);
            TU_CHECK(st == SPS_ERR_NUMERIC && strstr(sps_context_error(ctx), want[k]),
                     "bjacobi on a %s matrix with %s: %s '%s'", k ? "quaternion" : "scalar", k ? "Inf" : "NaN",
                     sps_status_name(st), sps_context_error(ctx));
        }
        sps_context_clear_error(ctx);
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
    }
}

int main(void)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 7117);
    test_kernels();
    test_precond();
    test_block_matrix();
    test_nonfinite();
    sps_context_destroy(ctx);
    return tu_finish();
}
