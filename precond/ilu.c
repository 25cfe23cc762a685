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
 * The factorisation runs on the host for both backends (the GPU's level-scheduled
 * or iterative factorisation is not done yet); the factors are uploaded.
 * Apply (trisolve): exact, forward and backward substitution (on the GPU level by
 * level, the levels found at the symbolic step), or sweeps:K, K Jacobi sweeps on
 * each factor (an SpMV of a factor a sweep).
 * Symbolic: pattern checks, the diagonal positions, the levels; numeric: the
 * factorisation, one host copy of the matrix and one upload. */
#include "precond/precond_impl.h"

#include <complex.h>
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

typedef struct {
    int ic;                          /* ic0 */
    sps_index n;
    int64_t nnz;
    sps_index *hrowptr, *hcol, *hdiag; /* host pattern and diagonal positions */
    sps_index *rowptr, *col, *diag;  /* backend copies */
    sps_index nl, nu;                /* levels of L and of U */
    sps_index *lvl_ptr;              /* host: nl + nu + 1 offsets */
    sps_index *lvl_rows;             /* backend: n rows of L's levels, then n of U's */
    double complex *f;               /* host: the factors (double complex whatever the type) */
    void *hval;                      /* host: the factors in the scalar type */
    void *val;                       /* backend: the factors */
    void *work;                      /* backend: 3n scalars */
} ilu_store;

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
    free(s->hrowptr);
    free(s->hcol);
    free(s->hdiag);
    free(s->lvl_ptr);
    free(s->f);
    free(s->hval);
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

static sps_status ilu_symbolic(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    ilu_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "the ILU store"));
    P->data = s;
    s->ic = P->m->type == SPS_PRECOND_IC0;
    sps_csr_host h;
    SPS_CHECK(sps_pc_host_expanded(A, &h));
    const sps_index n = h.n;
    s->n = n;
    s->nnz = h.nnz;
    sps_status st = SPS_OK;
    /* the pattern, which the numeric steps reuse */
    s->hrowptr = h.rowptr;
    s->hcol = h.col;
    h.rowptr = NULL;
    h.col = NULL;
    sps_csr_host_free(&h);
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
    if (st == SPS_OK) st = sps_hmalloc(ctx, (void **)&s->f, nz * sizeof *s->f, "ILU factors");
    if (st == SPS_OK) st = sps_hmalloc(ctx, &s->hval, nz * ss, "ILU factors");
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->rowptr, s->hrowptr, ((size_t)n + 1) * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->col, s->hcol, nz * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->diag, s->hdiag, ((size_t)n ? n : 1) * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->lvl_rows, rows, (n ? 2 * (size_t)n : 1) * sizeof *rows);
    if (st == SPS_OK) st = sps_dmalloc(ctx, &s->val, nz * ss);
    if (st == SPS_OK) st = sps_dmalloc(ctx, &s->work, (n ? 3 * (size_t)n : 1) * ss);
    free(lvl);
    free(rows);
    return st;
}

/* The factorisation of a + alpha diag(a) (values in s->f on entry: A's) into s->f;
 * returns 0, or the 1-based row of an unacceptable pivot (*bad set). */
static sps_index factor(ilu_store *s, const double complex *a, double alpha, int shift_nonzero, double *badpiv)
{
    const sps_index n = s->n;
    const sps_index *rp = s->hrowptr, *cl = s->hcol, *dg = s->hdiag;
    double complex *f = s->f;
    sps_index *pos = malloc(((size_t)n ? n : 1) * sizeof *pos); /* column -> position in row i, or -1 */
    if (!pos) return -1;
    for (sps_index j = 0; j < n; j++) pos[j] = -1;
    sps_index bad = 0;
    for (sps_index i = 0; i < n && !bad; i++) {
        double rs = 0;
        for (sps_index e = rp[i]; e < rp[i + 1]; e++) {
            f[e] = a[e] + (e == dg[i] ? alpha * a[e] : 0);
            rs += cabs(a[e]);
            pos[cl[e]] = e;
        }
        for (sps_index e = rp[i]; e < dg[i]; e++) { /* k = cl[e] < i, in order */
            const sps_index k = cl[e];
            const double complex l = f[e] / f[dg[k]];
            f[e] = l;
            for (sps_index q = dg[k] + 1; q < rp[k + 1]; q++)
                if (pos[cl[q]] >= 0) f[pos[cl[q]]] -= l * f[q];
        }
        const double tol = 2.22e-14 * rs;
        double complex *p = &f[dg[i]];
        const int unacceptable = s->ic ? !(creal(*p) > tol) : !(cabs(*p) > tol);
        if (unacceptable) {
            if (shift_nonzero && !s->ic && cabs(*p) <= tol) *p = tol > 0 ? tol : 1.0; /* raised to the tolerance */
            else {
                *badpiv = creal(*p);
                bad = i + 1;
            }
        }
        for (sps_index e = rp[i]; e < rp[i + 1]; e++) pos[cl[e]] = -1;
    }
    free(pos);
    if (bad || !s->ic) return bad;
    /* IC: U = D L^H from L and the pivots, so M is Hermitian exactly */
    for (sps_index i = 0; i < n; i++)
        for (sps_index e = rp[i]; e < dg[i]; e++) {
            const sps_index j = cl[e];
            sps_index q = dg[j] + 1;
            while (cl[q] != i) q++; /* the mirror of (i, j), checked at the symbolic step */
            f[q] = f[dg[j]] * conj(f[e]);
        }
    return 0;
}

static sps_status ilu_numeric(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    ilu_store *s = P->data;
    const sps_scalar t = P->op.t;
    const size_t ss = sps_scalar_size(t);
    sps_csr_host h;
    SPS_CHECK(sps_pc_host_expanded(A, &h));
    double complex *a = malloc(((size_t)s->nnz ? (size_t)s->nnz : 1) * sizeof *a);
    if (!a) {
        sps_csr_host_free(&h);
        return sps_error(ctx, SPS_ERR_ALLOC, "out of host memory for the ILU values");
    }
    for (int64_t e = 0; e < s->nnz; e++) {
        const sps_cplx v = sps_cplx_load(t, (const char *)h.val + (size_t)e * ss, (sps_cplx){0, 0});
        a[e] = v.re + I * v.im;
    }
    sps_csr_host_free(&h);
    const int shift = sps_opt_int(P->opts, "pc-shift");
    double badpiv = 0, alpha = 0;
    sps_index bad = factor(s, a, 0.0, shift == SHIFT_NONZERO, &badpiv);
    for (int k = 0; bad > 0 && shift == SHIFT_PD && k < (int)(sizeof pd_alpha / sizeof pd_alpha[0]); k++) {
        alpha = pd_alpha[k];
        bad = factor(s, a, alpha, 0, &badpiv);
    }
    free(a);
    if (bad < 0) return sps_error(ctx, SPS_ERR_ALLOC, "out of host memory for the ILU factorisation");
    if (bad > 0)
        return sps_error(ctx, SPS_ERR_NUMERIC,
                         "%s: %s pivot %g in row %d%s (pc-shift nonzero or positive-definite lets the factorisation "
                         "go on)",
                         P->m->name, s->ic ? "non-positive" : "zero", badpiv, (int)bad,
                         shift == SHIFT_PD ? " even with A + diag(A)" : "");
    if (alpha > 0)
        snprintf(P->warning, sizeof P->warning, "%s: factored A + %g diag(A) (pc-shift positive-definite)",
                 P->m->name, alpha);
    for (int64_t e = 0; e < s->nnz; e++)
        sps_cplx_store(t, (sps_cplx){creal(s->f[e]), cimag(s->f[e])}, (char *)s->hval + (size_t)e * ss);
    return sps_dcopy(ctx, s->val, s->hval, (size_t)s->nnz * ss, SPS_COPY_H2D);
}

static sps_status ilu_apply(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y)
{
    const ilu_store *s = P->data;
    sps_context ctx = P->op.ctx;
    if (mode != SPS_OP_N && !s->ic) /* no solver asks for it */
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "ilu0: no transposed apply");
    const int sweeps = trisolve_sweeps[sps_opt_int(P->opts, "trisolve")];
    return sps_kvec(ctx, P->op.t)->ilu_apply(sps_ex(ctx), s->n, s->rowptr, s->col, s->val, s->diag, s->nl, s->nu,
                                             s->lvl_ptr, s->lvl_rows, sweeps, x->data, y->data, s->work);
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
