/* The references of the compound-entry tests (test_compound.c: bcsr;
 * test_compound_padded.c: bell, bsell; test_gpu_compound.c: the CUDA kernels):
 *   - the scalar expansion of a compound CSR (quaternions through L(q), the issue's
 *     left-multiplication matrix), the reference every product is checked against;
 *   - a matrix's export compared bit for bit with the arrays it was built from;
 *   - random row shapes (empty rows every few rows);
 *   - the two systems the solvers are run on: a quaternion connection Laplacian
 *     (Hermitian positive definite) and a 3x3-block SPD grid system, as COO
 *     triplets of doubles, and one solve of either (CG and friends, Jacobi).
 * Header-only (static functions): a test includes it once. */
#ifndef SPS_TESTS_COMPOUND_REF_H
#define SPS_TESTS_COMPOUND_REF_H

#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A test uses some of these helpers, not necessarily all (test_gpu_compound.c). */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#endif

/* The real 4x4 matrix of left multiplication by q = w + xi + yj + zk (the issue's). */
static void cr_quat_left(double w, double x, double y, double z, double L[4][4])
{
    const double M[4][4] = {{w, -x, -y, -z}, {x, w, -z, y}, {y, z, w, -x}, {z, -y, x, w}};
    memcpy(L, M, sizeof M);
}

/* Element (r, c) of the scalar expansion of entry k (AoS values val of type t). */
static void cr_entry_elem(sps_entry_desc e, sps_scalar t, const void *val, int64_t k, int r, int c, double *re,
                          double *im)
{
    const int d = sps_entry_dim(e), nv = sps_entry_values(e);
    if (e.kind == SPS_ENTRY_BLOCK) {
        tu_get(t, val, (size_t)(k * nv + r * d + c), re, im);
        return;
    }
    double q[4], L[4][4], dummy;
    for (int p = 0; p < 4; p++) tu_get(t, val, (size_t)(k * 4 + p), &q[p], &dummy);
    cr_quat_left(q[0], q[1], q[2], q[3], L);
    *re = L[r][c];
    *im = 0;
}

/* The scalar expansion of an n x m compound CSR (columns sorted within rows): rows
 * i*d + r hold the entries' rows r, columns j*d + c in order. */
static tu_csr cr_expand(sps_entry_desc e, sps_scalar t, int n, int m, const sps_index *rowptr, const sps_index *col,
                        const void *val)
{
    const int d = sps_entry_dim(e);
    const int64_t nnz = rowptr[n];
    tu_csr h;
    memset(&h, 0, sizeof h);
    h.info.rows = n * d;
    h.info.cols = m * d;
    h.info.nnz = nnz * d * d;
    h.info.scalar = t;
    h.rowptr = tu_xcalloc((size_t)n * d + 1, sizeof(sps_index));
    h.col = tu_xcalloc((size_t)h.info.nnz, sizeof(sps_index));
    h.val = tu_xcalloc((size_t)h.info.nnz, sps_scalar_size(t));
    int64_t w = 0;
    for (int i = 0; i < n; i++)
        for (int r = 0; r < d; r++) {
            for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++)
                for (int c = 0; c < d; c++) {
                    double re, im;
                    cr_entry_elem(e, t, val, k, r, c, &re, &im);
                    h.col[w] = col[k] * d + c;
                    tu_put(t, h.val, (size_t)w++, re, im);
                }
            h.rowptr[i * d + r + 1] = (sps_index)w;
        }
    return h;
}

/* y = op(A) x + b y0 and the same with B, from one random x: with random_ab a random
 * alpha, beta and y0; else alpha 1, beta 0 and y0 NaN (y must not be read).  The
 * results go to *ya, *yb (host, the caller frees); 0 when either product failed. */
static int cr_apply_both(sps_context ctx, tu_rng *rng, sps_matrix A, sps_matrix B, sps_op_mode mode, sps_scalar t,
                         int nin, int nout, int random_ab, void **ya, void **yb)
{
    const size_t ss = sps_scalar_size(t);
    void *x = tu_xcalloc((size_t)nin, ss), *y0 = tu_xcalloc((size_t)nout, ss);
    void *al = random_ab ? tu_xcalloc(1, ss) : NULL, *be = random_ab ? tu_xcalloc(1, ss) : NULL;
    tu_fill_random(rng, t, (size_t)nin, x);
    if (random_ab) {
        tu_fill_random(rng, t, (size_t)nout, y0);
        tu_fill_random(rng, t, 1, al);
        tu_fill_random(rng, t, 1, be);
    } else {
        tu_fill_nan(t, (size_t)nout, y0);
    }
    int ok1, ok2;
    *ya = tu_apply(ctx, A, mode, t, nin, nout, x, y0, al, be, &ok1);
    *yb = tu_apply(ctx, B, mode, t, nin, nout, x, y0, al, be, &ok2);
    free(x);
    free(y0);
    free(al);
    free(be);
    return ok1 && ok2;
}

/* A's export (rowptr, col, entries) bitwise equal to the arrays it was built from. */
static int cr_export_equal(sps_matrix A, int n, int64_t nnz, const sps_index *rowptr, const sps_index *col,
                           const void *val, size_t vbytes)
{
    tu_csr h;
    const int ok = tu_export_csr(NULL, A, &h) && h.info.rows == n && h.info.nnz == nnz &&
                   !memcmp(h.rowptr, rowptr, ((size_t)n + 1) * sizeof *rowptr) &&
                   !memcmp(h.col, col, (size_t)nnz * sizeof *col) && !memcmp(h.val, val, vbytes);
    tu_csr_free(&h);
    return ok;
}

/* n rows of random lengths 0..maxlen (at most m), row i empty where i % empty_every == 1. */
static tu_shape cr_random_shape(tu_rng *rng, const char *name, int n, int m, int maxlen, int empty_every)
{
    int *len = tu_xcalloc((size_t)n, sizeof *len);
    for (int i = 0; i < n; i++) {
        len[i] = (int)(tu_rng_u64(rng) % (uint64_t)(maxlen + 1));
        if (len[i] > m) len[i] = m;
        if (empty_every && i % empty_every == 1) len[i] = 0;
    }
    tu_shape s = tu_shape_make(rng, name, n, m, len, -1);
    free(len);
    return s;
}

/* check(e, t, soa, shape, arg) for every compound entry type with CPU kernels
 * (blocks b = 2..8 of the four scalar types, quaternions of the two real ones), both
 * entry layouts and the shapes every product is checked on: one entry, tall, wide,
 * empty rows, rows of 0..9 entries, and a matrix without entries. */
static void cr_for_each_product(tu_rng *rng, void (*check)(sps_entry_desc, sps_scalar, int, const tu_shape *, const void *),
                                const void *arg)
{
    enum { NSHAPES = 6 };
    tu_shape s[NSHAPES] = {
        cr_random_shape(rng, "one", 1, 1, 1, 0),          cr_random_shape(rng, "tall", 9, 4, 3, 3),
        cr_random_shape(rng, "wide", 5, 12, 6, 0),        cr_random_shape(rng, "empty-rows", 40, 40, 7, 3),
        cr_random_shape(rng, "rows", 160, 130, 9, 5),     cr_random_shape(rng, "no-entries", 6, 3, 0, 0),
    };
    for (int soa = 0; soa <= 1; soa++)
        for (int si = 0; si < NSHAPES; si++) {
            for (int b = 2; b <= 8; b++)
                for (int ti = 0; ti < TU_NTYPES; ti++) check(sps_entry_block(b), tu_all_types[ti], soa, &s[si], arg);
            for (int ti = 0; ti < 2; ti++) check(sps_entry_quaternion(), tu_all_types[ti], soa, &s[si], arg);
        }
    for (int si = 0; si < NSHAPES; si++) tu_shape_free(&s[si]);
}

/* ------------------------------------------------------------------ systems */
typedef struct {
    int n;               /* rows of entries */
    int64_t nnz;         /* triplets (duplicates included) */
    sps_index *row, *col;
    double *val;         /* nnz * nv */
} cr_coo;

static void cr_coo_free(cr_coo *c)
{
    free(c->row);
    free(c->col);
    free(c->val);
}

static void cr_coo_add(cr_coo *c, int nv, sps_index i, sps_index j, const double *v)
{
    c->row[c->nnz] = i;
    c->col[c->nnz] = j;
    memcpy(c->val + c->nnz * nv, v, (size_t)nv * sizeof(double));
    c->nnz++;
}

/* Values of type t from doubles (the builders below work in double). */
static void *cr_to_type(sps_scalar t, const double *v, size_t n)
{
    void *out = tu_xcalloc(n, sps_scalar_size(t));
    for (size_t i = 0; i < n; i++) tu_put(t, out, i, v[i], 0);
    return out;
}

/* Random unit quaternion. */
static void cr_unit_quat(tu_rng *rng, double *q)
{
    double s = 0;
    for (int p = 0; p < 4; p++) {
        q[p] = tu_rng_range(rng, -1, 1);
        s += q[p] * q[p];
    }
    s = sqrt(s);
    for (int p = 0; p < 4; p++) q[p] /= s;
}

/* The connection Laplacian of a g x g grid with a random unit quaternion u per edge
 * (p, q): A_pq = -u, A_qp = -conj(u), A_pp = deg(p) + shift.  Quaternion-Hermitian
 * and positive definite: x^H A x = sum_edges |x_p - u x_q|^2 + shift |x|^2. */
static cr_coo cr_quat_laplacian(tu_rng *rng, int g, double shift)
{
    const int n = g * g;
    cr_coo c = {n, 0, tu_xcalloc((size_t)5 * n, sizeof(sps_index)), tu_xcalloc((size_t)5 * n, sizeof(sps_index)),
                tu_xcalloc((size_t)20 * n, sizeof(double))};
    for (int p = 0; p < n; p++) {
        const int i = p / g, j = p % g;
        const int deg = (i > 0) + (i < g - 1) + (j > 0) + (j < g - 1);
        const double dq[4] = {deg + shift, 0, 0, 0};
        cr_coo_add(&c, 4, p, p, dq);
        const int nb[2] = {j < g - 1 ? p + 1 : -1, i < g - 1 ? p + g : -1};
        for (int k = 0; k < 2; k++) {
            if (nb[k] < 0) continue;
            double u[4];
            cr_unit_quat(rng, u);
            const double m[4] = {-u[0], -u[1], -u[2], -u[3]}, mc[4] = {-u[0], u[1], u[2], u[3]};
            cr_coo_add(&c, 4, p, nb[k], m);
            cr_coo_add(&c, 4, nb[k], p, mc);
        }
    }
    return c;
}

/* A 3x3-block SPD system: on a g x g grid each edge e = (p, q) couples with an SPD
 * block K_e = M M^T + I/10: A_pq = A_qp = -K_e, K_e added to A_pp and A_qq (COO
 * duplicates, summed), plus shift I: x^T A x = sum_e (x_p - x_q)^T K_e (x_p - x_q) + shift |x|^2. */
static cr_coo cr_block_spd(tu_rng *rng, int g, double shift)
{
    const int n = g * g;
    cr_coo c = {n, 0, tu_xcalloc((size_t)9 * n, sizeof(sps_index)), tu_xcalloc((size_t)9 * n, sizeof(sps_index)),
                tu_xcalloc((size_t)81 * n, sizeof(double))};
    for (int p = 0; p < n; p++) {
        const double s[9] = {shift, 0, 0, 0, shift, 0, 0, 0, shift};
        cr_coo_add(&c, 9, p, p, s);
        const int i = p / g, j = p % g, nb[2] = {j < g - 1 ? p + 1 : -1, i < g - 1 ? p + g : -1};
        for (int k = 0; k < 2; k++) {
            if (nb[k] < 0) continue;
            double M[9], K[9], mK[9];
            for (int a = 0; a < 9; a++) M[a] = tu_rng_range(rng, -1, 1);
            for (int r = 0; r < 3; r++)
                for (int q = 0; q < 3; q++) {
                    K[r * 3 + q] = (r == q) ? 0.1 : 0;
                    for (int a = 0; a < 3; a++) K[r * 3 + q] += M[r * 3 + a] * M[q * 3 + a];
                    mK[r * 3 + q] = -K[r * 3 + q];
                }
            cr_coo_add(&c, 9, p, p, K);
            cr_coo_add(&c, 9, nb[k], nb[k], K);
            cr_coo_add(&c, 9, p, nb[k], mK);
            cr_coo_add(&c, 9, nb[k], p, mK);
        }
    }
    return c;
}

/* Solve A x = b (A: matrix of an operator of N scalars) with method `type` from x = 0,
 * optionally Jacobi-preconditioned; x and the iteration count out.  1 when converged. */
static int cr_solve(sps_context ctx, sps_matrix A, sps_solver_type type, int jacobi, sps_scalar t, int N,
                    const void *b, void *x, double rtol, int *its)
{
    sps_operator op = NULL;
    sps_solver s = NULL;
    sps_precond P = NULL;
    sps_vector vb = NULL, vx = NULL;
    sps_result res;
    memset(&res, 0, sizeof res);
    int ok = TU_OK(ctx, sps_operator_from_matrix(A, &op)) && TU_OK(ctx, sps_solver_create(ctx, type, &s)) &&
             TU_OK(ctx, sps_solver_set_operator(s, op)) && TU_OK(ctx, sps_solver_set_tolerances(s, rtol, 0, 5000)) &&
             TU_OK(ctx, sps_vector_from_host(ctx, N, t, b, &vb)) && TU_OK(ctx, sps_vector_create(ctx, N, t, &vx));
    if (ok && jacobi)
        ok = TU_OK(ctx, sps_precond_create(A, SPS_PRECOND_JACOBI, &P)) && TU_OK(ctx, sps_solver_set_precond(s, P));
    ok = ok && TU_OK(ctx, sps_solver_solve(s, vb, vx, &res)) && TU_OK(ctx, sps_vector_get(vx, x));
    *its = res.iterations;
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_solver_destroy(s);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    return ok && res.reason == SPS_REASON_CONVERGED_RTOL;
}

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#endif
