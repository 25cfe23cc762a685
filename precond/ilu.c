/* ILU(0) (ilu0) and IC(0) (ic0): incomplete factorisations on A's own pattern,
 * PETSc's -pc_type ilu (levels 0) and -pc_type icc.
 *
 * Factors (both): one CSR of A's pattern, L strictly below the diagonal (unit
 * diagonal), U on and above it: A ~ L U.  ilu0 computes them row by row (the IKJ
 * form: for each k < i in row i, l_ik = a_ik / u_kk, then row i -= l_ik row k on
 * the pattern).  ic0 is the same recurrence on a Hermitian A (the lower triangle is
 * the one read), with U set to D L^H from L and the pivots D, so M = (L D L^H)^{-1}
 * is Hermitian exactly and CG may use it (SYMMETRIC); its pivots must be real and
 * positive.  Every row needs its diagonal entry.
 * Pivots: |u_ii| <= 2.22e-14 (the sum of |a_ij| over row i) is a zero pivot, as
 * PETSc's default; ic0 also refuses a pivot not positive.  Option pc-shift:
 *   none               the error, naming the row;
 *   nonzero            a zero pivot becomes that tolerance (PETSc's
 *                      MAT_SHIFT_NONZERO adds a small amount to it), and the
 *                      factorisation goes on;
 *   positive-definite  factor A + alpha diag(A) instead, alpha the first of
 *                      1e-3, 1e-2, 0.05, 0.1, 0.2, 0.5, 1 that makes every pivot
 *                      acceptable (Manteuffel's shift, PETSc's
 *                      MAT_SHIFT_POSITIVE_DEFINITE in spirit); the warning gives alpha.
 * The factorisation runs on the backend (ilu_factor: row by row on the CPU; on the
 * GPU level by level, the levels of L, a thread a row), from A's values staged on
 * the host and uploaded (each shift of positive-definite uploads them again).
 * Apply (trisolve): exact, forward and backward substitution (on the GPU level by
 * level, the levels found at the symbolic step), or sweeps:K, K Jacobi sweeps on
 * each factor (an SpMV of a factor a sweep).
 * Symbolic: pattern checks, the diagonal positions, the levels; numeric: one host
 * copy of the matrix, the upload, the factorisation on the backend. */
#include "precond/precond_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ILU_OPTIONS(trisolve_help)                                                                            \
    {.name = "trisolve", .type = SPS_OPT_CHOICE, .def = "exact",                                              \
     .choices = "exact|sweeps:1|sweeps:2|sweeps:3|sweeps:4|sweeps:5|sweeps:6|sweeps:8|sweeps:10|sweeps:16",    \
     .help = trisolve_help},                                                                                  \
    {.name = "pc-shift", .type = SPS_OPT_CHOICE, .def = "none", .choices = "none|nonzero|positive-definite",  \
     .help = "ilu0, ic0: a zero (ic0: non-positive) pivot: an error (none), raised to the tolerance "         \
             "(nonzero), or the factorisation of A + alpha diag(A), alpha the first of 1e-3 .. 1 that works "   \
             "(positive-definite), as PETSc's -pc_factor_shift_type"}
static const sps_option_desc ilu_options[] = {ILU_OPTIONS(
    "ilu0, ic0: triangular solves: exact (substitution; level by level on the GPU) or sweeps:K (K Jacobi "
    "sweeps on each factor)")};
static const int trisolve_sweeps[] = {0, 1, 2, 3, 4, 5, 6, 8, 10, 16};
enum { SHIFT_NONE = 0, SHIFT_NONZERO, SHIFT_PD };
static const double pd_alpha[] = {1e-3, 1e-2, 0.05, 0.1, 0.2, 0.5, 1.0};

/* One factor's off-diagonal part in SELL-32 for the sweeps (sps_ilu_sell), backend memory;
 * src: each stored entry's position in the factors' CSR (-1: padding), for ilu_gather. */
typedef struct {
    int64_t cnt; /* stored entries, padding included */
    int64_t *off;
    sps_index *col, *len, *src;
    void *val;
} ilu_sell;

typedef struct {
    int ic;                          /* ic0 */
    sps_index n;
    int64_t nnz;
    sps_index *hrowptr, *hcol, *hdiag; /* host pattern and diagonal positions */
    sps_index *rowptr, *col, *diag;  /* backend copies */
    sps_index nl, nu;                /* levels of L and of U */
    sps_index *lvl_ptr;              /* host: nl + nu + 1 offsets */
    sps_index *lvl_rows;             /* backend: n rows of L's levels, then n of U's */
    void *val;                       /* backend: the factors */
    void *work;                      /* backend: 3n scalars */
    sps_index *bad;                  /* backend: ilu_factor's report */
    int sweeps;                      /* trisolve sweeps:K at setup (0: exact), the arrays below */
    ilu_sell lo, up;                 /* sweeps: L's and U's off-diagonal parts */
    void *dinv;                      /* sweeps: 1 / u_ii */
} ilu_store;

static void sell_free(sps_context ctx, ilu_sell *f)
{
    sps_dfree(ctx, f->off);
    sps_dfree(ctx, f->col);
    sps_dfree(ctx, f->len);
    sps_dfree(ctx, f->src);
    sps_dfree(ctx, f->val);
}

static void ilu_destroy(sps_precond P)
{
    ilu_store *s = P->data;
    if (!s) return;
    sps_context ctx = P->op.ctx;
    sps_dfree(ctx, s->rowptr);
    sps_dfree(ctx, s->col);
    sps_dfree(ctx, s->diag);
    sps_dfree(ctx, s->lvl_rows);
    sps_dfree(ctx, s->val);
    sps_dfree(ctx, s->work);
    sps_dfree(ctx, s->bad);
    sell_free(ctx, &s->lo);
    sell_free(ctx, &s->up);
    sps_dfree(ctx, s->dinv);
    free(s->hrowptr);
    free(s->hcol);
    free(s->hdiag);
    free(s->lvl_ptr);
    free(s);
    P->data = NULL;
}

/* Levels of a triangular factor: lower (rows in increasing order, dependencies on
 * columns < i) or upper (decreasing, columns > i).  lvl[i] is the row's level;
 * returns the number of levels and writes the rows grouped by level into rows,
 * their offsets into ptr (levels + 1 entries). */
static sps_index levels(const ilu_store *s, int upper, sps_index *lvl, sps_index *ptr, sps_index *rows)
{
    const sps_index n = s->n;
    sps_index nlev = 0;
    for (sps_index q = 0; q < n; q++) {
        const sps_index i = upper ? n - 1 - q : q;
        sps_index l = 0;
        const sps_index a = upper ? s->hdiag[i] + 1 : s->hrowptr[i], b = upper ? s->hrowptr[i + 1] : s->hdiag[i];
        for (sps_index e = a; e < b; e++) l = lvl[s->hcol[e]] + 1 > l ? lvl[s->hcol[e]] + 1 : l;
        lvl[i] = l;
        nlev = l + 1 > nlev ? l + 1 : nlev;
    }
    for (sps_index l = 0; l <= nlev; l++) ptr[l] = 0;
    for (sps_index i = 0; i < n; i++) ptr[lvl[i] + 1]++;
    for (sps_index l = 0; l < nlev; l++) ptr[l + 1] += ptr[l];
    for (sps_index q = 0; q < n; q++) { /* rows of a level in increasing order */
        const sps_index i = q;
        rows[ptr[lvl[i]]++] = i;
    }
    for (sps_index l = nlev; l > 0; l--) ptr[l] = ptr[l - 1];
    ptr[0] = 0;
    return nlev;
}

/* L's (upper: U's) off-diagonal part of the pattern as SELL-32 (sps_ilu_sell), built
 * on the host and uploaded; the values come at each numeric step by ilu_gather from
 * src.  Padding (rows shorter than their slice's longest) is never read: len stops
 * each row. */
static sps_status sell_build(sps_precond P, ilu_store *s, int upper, ilu_sell *f)
{
    sps_context ctx = P->op.ctx;
    const sps_index n = s->n, nsl = (n + 31) / 32;
    int64_t *off = NULL;
    sps_index *col = NULL, *len = NULL, *src = NULL;
    sps_status st = sps_hmalloc(ctx, (void **)&off, ((size_t)nsl + 1) * sizeof *off, "ILU sweep slices");
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&len, ((size_t)n ? n : 1) * sizeof *len, "ILU sweep rows");
    if (st == SPS_OK) {
        off[0] = 0;
        for (sps_index q = 0; q < nsl; q++) {
            sps_index w = 0;
            for (sps_index i = 32 * q; i < n && i < 32 * q + 32; i++) {
                len[i] = upper ? s->hrowptr[i + 1] - s->hdiag[i] - 1 : s->hdiag[i] - s->hrowptr[i];
                w = len[i] > w ? len[i] : w;
            }
            off[q + 1] = off[q] + 32 * (int64_t)w;
        }
        f->cnt = off[nsl];
        if (f->cnt > INT32_MAX)
            st = sps_error(ctx, SPS_ERR_ARG, "%s: sweeps: the %s factor padded to slices of 32 rows holds %lld entries, "
                           "beyond 32-bit positions (trisolve exact takes it)", P->m->name, upper ? "upper" : "lower",
                           (long long)f->cnt);
    }
    const size_t cnt = f->cnt ? (size_t)f->cnt : 1;
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&col, cnt * sizeof *col, "ILU sweep columns");
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&src, cnt * sizeof *src, "ILU sweep sources");
    if (st == SPS_OK) {
        for (int64_t k = 0; k < f->cnt; k++) src[k] = -1;
        for (int64_t k = 0; k < f->cnt; k++) col[k] = 0; /* padding: a valid column, never read */
        for (sps_index i = 0; i < n; i++) {
            const int64_t base = off[i / 32] + i % 32;
            const sps_index a = upper ? s->hdiag[i] + 1 : s->hrowptr[i];
            for (sps_index k = 0; k < len[i]; k++) {
                col[base + 32 * k] = s->hcol[a + k];
                src[base + 32 * k] = a + k;
            }
        }
    }
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&f->off, off, ((size_t)nsl + 1) * sizeof *off);
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&f->col, col, cnt * sizeof *col);
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&f->src, src, cnt * sizeof *src);
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&f->len, len, ((size_t)n ? n : 1) * sizeof *len);
    if (st == SPS_OK) st = sps_dmalloc(ctx, &f->val, cnt * sps_scalar_size(P->op.t));
    free(off);
    free(col);
    free(len);
    free(src);
    return st;
}

static sps_status ilu_symbolic(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    ilu_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "the ILU store"));
    P->data = s;
    s->ic = P->m->type == SPS_PRECOND_IC0;
    const sps_csr_host *h;
    SPS_CHECK(sps_pc_host_expanded(P, A, &h));
    const sps_index n = h->n;
    s->n = n;
    s->nnz = h->nnz;
    sps_status st = SPS_OK;
    /* the pattern, which the numeric steps reuse */
    SPS_CHECK(sps_hmalloc(ctx, (void **)&s->hrowptr, ((size_t)n + 1) * sizeof *s->hrowptr, "ILU row pointers"));
    SPS_CHECK(sps_hmalloc(ctx, (void **)&s->hcol, ((size_t)h->nnz ? (size_t)h->nnz : 1) * sizeof *s->hcol,
                          "ILU columns"));
    memcpy(s->hrowptr, h->rowptr, ((size_t)n + 1) * sizeof *s->hrowptr);
    memcpy(s->hcol, h->col, (size_t)h->nnz * sizeof *s->hcol);
    sps_index *lvl = NULL, *rows = NULL;
    if ((st = sps_hmalloc(ctx, (void **)&s->hdiag, ((size_t)n ? n : 1) * sizeof *s->hdiag, "ILU diagonal")) != SPS_OK)
        return st;
    for (sps_index i = 0; i < n; i++) {
        sps_index e = s->hrowptr[i];
        while (e < s->hrowptr[i + 1] && s->hcol[e] < i) e++;
        if (e == s->hrowptr[i + 1] || s->hcol[e] != i)
            return sps_error(ctx, SPS_ERR_NUMERIC, "%s: row %d has no diagonal entry (the factors keep A's pattern)",
                             P->m->name, (int)i + 1);
        s->hdiag[i] = e;
    }
    if (s->ic) /* the pattern must be symmetric: U's entries mirror L's */
        for (sps_index i = 0; i < n; i++)
            for (sps_index e = s->hrowptr[i]; e < s->hdiag[i]; e++) {
                const sps_index j = s->hcol[e];
                sps_index q = s->hdiag[j] + 1;
                while (q < s->hrowptr[j + 1] && s->hcol[q] < i) q++;
                if (q == s->hrowptr[j + 1] || s->hcol[q] != i)
                    return sps_error(ctx, SPS_ERR_ARG,
                                     "ic0: the pattern is not symmetric: (%d, %d) is stored, (%d, %d) is not (ic0 "
                                     "needs a Hermitian matrix; ilu0 takes any)",
                                     (int)i + 1, (int)j + 1, (int)j + 1, (int)i + 1);
            }
    const size_t ss = sps_scalar_size(P->op.t);
    st = sps_hmalloc(ctx, (void **)&lvl, ((size_t)n ? n : 1) * sizeof *lvl, "ILU levels");
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&rows, (n ? 2 * (size_t)n : 1) * sizeof *rows, "ILU level rows");
    if (st == SPS_OK)
        st = sps_hmalloc(ctx, (void **)&s->lvl_ptr, (2 * (size_t)n + 2) * sizeof *s->lvl_ptr, "ILU level offsets");
    if (st == SPS_OK) {
        s->nl = levels(s, 0, lvl, s->lvl_ptr, rows);
        s->nu = levels(s, 1, lvl, s->lvl_ptr + s->nl, rows + n);
        for (sps_index l = s->nl; l <= s->nl + s->nu; l++) s->lvl_ptr[l] += n; /* U's rows after L's */
    }
    const size_t nz = s->nnz ? (size_t)s->nnz : 1;
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->rowptr, s->hrowptr, ((size_t)n + 1) * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->col, s->hcol, nz * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->diag, s->hdiag, ((size_t)n ? n : 1) * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->lvl_rows, rows, (n ? 2 * (size_t)n : 1) * sizeof *rows);
    if (st == SPS_OK) st = sps_dmalloc(ctx, &s->val, nz * ss);
    if (st == SPS_OK) st = sps_dmalloc(ctx, &s->work, (n ? 2 * (size_t)n : 1) * ss);
    if (st == SPS_OK) st = sps_dmalloc(ctx, (void **)&s->bad, sizeof *s->bad);
    /* sweeps: each factor's own SELL-32 copy (about A's size again), only when chosen */
    s->sweeps = trisolve_sweeps[sps_opt_int(P->opts, "trisolve")];
    if (st == SPS_OK && s->sweeps > 0) st = sell_build(P, s, 0, &s->lo);
    if (st == SPS_OK && s->sweeps > 0) st = sell_build(P, s, 1, &s->up);
    if (st == SPS_OK && s->sweeps > 0) st = sps_dmalloc(ctx, &s->dinv, ((size_t)n ? n : 1) * ss);
    free(lvl);
    free(rows);
    return st;
}

static sps_status ilu_numeric(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    ilu_store *s = P->data;
    const sps_scalar t = P->op.t;
    const size_t vb = (size_t)s->nnz * sps_scalar_size(t);
    const sps_csr_host *h;
    SPS_CHECK(sps_pc_host_expanded(P, A, &h));
    /* A's values, the pattern symbolic saw: uploaded from the setup's host copy for each try */
    const int shift = sps_opt_int(P->opts, "pc-shift");
    const sps_vec_kernels *k = sps_kvec(ctx, t);
    /* a value that is not finite makes every pivot test NaN: named as such, not as a zero pivot
       (and not raised to a small one by pc-shift nonzero, which had hidden a NaN row) */
    const size_t ssz = sps_scalar_size(t);
    for (sps_index i = 0; i < h->n; i++)
        for (sps_index e = h->rowptr[i]; e < h->rowptr[i + 1]; e++) {
            const sps_cplx v = sps_cplx_load(t, (const char *)h->val + (size_t)e * ssz, sps_cplx_make(0, 0));
            if (!isfinite(v.re) || !isfinite(v.im))
                return sps_error(ctx, SPS_ERR_NUMERIC, "%s: row %d holds a value that is not finite (column %d)",
                                 P->m->name, (int)i + 1, (int)h->col[e] + 1);
        }
    sps_index bad = 0, raised = 0;
    double alpha = 0;
    for (int a = -1; a < (shift == SHIFT_PD ? (int)(sizeof pd_alpha / sizeof pd_alpha[0]) : 0); a++) {
        alpha = a < 0 ? 0.0 : pd_alpha[a];
        /* pc-shift nonzero: first without it, so that a raised pivot is known (and said) */
        for (int nz = 0; nz < (shift == SHIFT_NONZERO ? 2 : 1); nz++) {
            SPS_CHECK(sps_dcopy(ctx, s->val, h->val, vb, SPS_COPY_H2D));
            SPS_CHECK(k->ilu_factor(sps_ex(ctx), s->n, s->rowptr, s->col, s->val, s->diag, s->nl, s->lvl_ptr,
                                    s->lvl_rows, alpha, nz, s->ic, s->bad));
            SPS_CHECK(sps_dcopy(ctx, &bad, s->bad, sizeof bad, SPS_COPY_D2H));
            if (!bad) break;
            if (!nz) raised = bad;
        }
        if (!bad) break;
    }
    if (bad) /* the hint names what can still help: nonzero raises zero pivots only (ic0's negative ones stay) */
        return sps_error(ctx, SPS_ERR_NUMERIC, "%s: %s pivot in row %d%s", P->m->name,
                         s->ic ? "non-positive" : "zero", (int)bad,
                         shift == SHIFT_PD        ? " even with A + diag(A) (pc-shift positive-definite)"
                         : shift == SHIFT_NONZERO ? " (pc-shift nonzero raises zero pivots only; pc-shift "
                                                    "positive-definite factors A + alpha diag(A))"
                         : s->ic                  ? " (pc-shift positive-definite lets the factorisation go on)"
                                                  : " (pc-shift nonzero or positive-definite lets the factorisation go on)");
    if (alpha > 0)
        snprintf(P->warning, sizeof P->warning, "%s: factored A + %g diag(A) (pc-shift positive-definite)",
                 P->m->name, alpha);
    else if (raised)
        snprintf(P->warning, sizeof P->warning, "%s: a zero pivot in row %d (and any after it) raised to a small "
                 "value (pc-shift nonzero)", P->m->name, (int)raised);
    if (s->sweeps > 0) { /* the sweeps' copies of the new factors */
        SPS_CHECK(k->ilu_gather(sps_ex(ctx), s->lo.cnt, s->lo.src, s->val, 0, s->lo.val));
        SPS_CHECK(k->ilu_gather(sps_ex(ctx), s->up.cnt, s->up.src, s->val, 0, s->up.val));
        SPS_CHECK(k->ilu_gather(sps_ex(ctx), s->n, s->diag, s->val, 1, s->dinv));
    }
    return SPS_OK;
}

static sps_status ilu_apply(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y)
{
    const ilu_store *s = P->data;
    sps_context ctx = P->op.ctx;
    if (mode != SPS_OP_N && !s->ic) /* no solver asks for it */
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "ilu0: no transposed apply");
    /* ic0's M = (L D L^H)^-1 is Hermitian: M^T = M for real types, but conj(M) for complex ones,
       which would take solves with conj(L) */
    if (mode != SPS_OP_N && sps_scalar_is_complex(P->op.t))
        return sps_error(ctx, SPS_ERR_UNSUPPORTED,
                         "ic0: no plain-transposed apply for %s (M^T = conj(M); the solvers apply M only)",
                         sps_scalar_name(P->op.t));
    const int sweeps = trisolve_sweeps[sps_opt_int(P->opts, "trisolve")];
    const sps_vec_kernels *k = sps_kvec(ctx, P->op.t);
    if (sweeps == 0)
        return k->ilu_apply(sps_ex(ctx), s->n, s->rowptr, s->col, s->val, s->diag, s->nl, s->nu, s->lvl_ptr,
                            s->lvl_rows, x->data, y->data, s->work);
    if (s->sweeps == 0) /* the sweeps' arrays are made at setup for the trisolve chosen then */
        return sps_error(ctx, SPS_ERR_ARG, "%s: trisolve sweeps:%d was chosen after the setup (with exact): set it "
                         "before sps_precond_setup", P->m->name, sweeps);
    const sps_ilu_sell L = {s->lo.off, s->lo.col, s->lo.len, s->lo.val}, U = {s->up.off, s->up.col, s->up.len, s->up.val};
    return k->ilu_sweeps(sps_ex(ctx), s->n, L, U, s->dinv, sweeps, x->data, y->data, s->work);
}

const sps_precond_method sps_precond_ilu0_method = {
    .type = SPS_PRECOND_ILU0, .name = "ilu0",
    .flags = SPS_PRECOND_CAPTURABLE, .needs_entries = 1,
    .options = ilu_options, .noptions = SPS_NOPTS(ilu_options),
    .symbolic = ilu_symbolic, .numeric = ilu_numeric,
    .apply = ilu_apply,
    .destroy = ilu_destroy,
};

const sps_precond_method sps_precond_ic0_method = {
    .type = SPS_PRECOND_IC0, .name = "ic0",
    .flags = SPS_PRECOND_CAPTURABLE | SPS_PRECOND_SYMMETRIC, .needs_entries = 1,
    .options = ilu_options, .noptions = SPS_NOPTS(ilu_options),
    .symbolic = ilu_symbolic, .numeric = ilu_numeric,
    .apply = ilu_apply,
    .destroy = ilu_destroy,
};
