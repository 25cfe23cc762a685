/* Jacobi (diagonal) preconditioner: M = diag(A)^{-1}, applied as y = M .* x.
 *
 * A zero diagonal entry is taken as 1 (M's entry 1), as PETSc's PCJACOBI does
 * (MatInvertDiagonal: "zero diagonal entries are replaced by 1"), so such systems
 * run where PETSc's do; the count and the first row become P's warning.  Option
 * jacobi-zero-diagonal = error refuses them instead.  A non-finite entry is
 * always an error.
 * Symbolic: allocate the inverse diagonal in backend memory, the slot the
 * `invert` kernel reports through, and a host buffer for the diagonal.
 * Numeric: read the diagonal on the host (sps_matrix_diagonal), upload it into
 * the inverse's buffer and invert it there with `invert`, which reports the
 * first zero or non-finite entry through the slot; nothing is allocated, so
 * sps_precond_update costs one diagonal read, one upload and one pass.
 * Apply is one `pmul` pass (3n values); M^T = M.  Inside PCG, z = M r and r^H z
 * are one `pmul_dot` pass (3n, where pmul + dot read r twice: 5n), or join the CG
 * step's own pass (`diagonal`: cg_step_pmul, 2n more than the step alone).
 * Valid for any matrix with a nonzero finite diagonal; M is SPD exactly when
 * diag(A) > 0, which holds when A is SPD (HPD: real positive diagonal), so CG
 * may use it (SPS_PRECOND_SYMMETRIC); capturable (kernels only). */
#include "precond/precond_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const sps_option_desc jacobi_options[] = {
    {.name = "jacobi-zero-diagonal", .type = SPS_OPT_CHOICE, .def = "one", .choices = "one|error",
     .help = "a zero diagonal entry: taken as 1 as PETSc's Jacobi does, with a warning (one), or refused (error)"},
};
enum { JACOBI_ZERO_ONE = 0, JACOBI_ZERO_ERROR = 1 };

typedef struct {
    void *dinv;     /* backend: 1 / a_ii, n scalars */
    sps_cplx *slot; /* backend: (1-based row of the first bad entry, 0) from `invert` */
    void *diag;     /* host: a_ii as read, for the error message */
} jacobi_store;

static void jacobi_destroy(sps_precond P)
{
    jacobi_store *j = P->data;
    if (!j) return;
    sps_dfree(P->op.ctx, j->dinv);
    sps_dfree(P->op.ctx, j->slot);
    free(j->diag);
    free(j);
    P->data = NULL;
}

static sps_status jacobi_symbolic(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    (void)A;
    sps_context ctx = P->op.ctx;
    const size_t bytes = (size_t)P->op.n * sps_scalar_size(P->op.t);
    jacobi_store *j;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&j, sizeof *j, "the Jacobi store"));
    P->data = j; /* released by jacobi_destroy on any failure below */
    SPS_CHECK(sps_hmalloc(ctx, &j->diag, bytes, "the Jacobi diagonal"));
    SPS_CHECK(sps_dmalloc(ctx, &j->dinv, bytes));
    return sps_dmalloc(ctx, (void **)&j->slot, sizeof *j->slot);
}

static sps_status jacobi_numeric(sps_precond P, sps_operator op, sps_matrix A)
{
    (void)op;
    sps_context ctx = P->op.ctx;
    const sps_scalar t = P->op.t;
    const size_t bytes = (size_t)P->op.n * sps_scalar_size(t);
    jacobi_store *j = P->data;
    sps_cplx bad;
    SPS_CHECK(sps_matrix_diagonal(A, j->diag));
    if (sps_opt_int(P->opts, "jacobi-zero-diagonal") == JACOBI_ZERO_ONE) {
        const size_t ss = sps_scalar_size(t);
        const sps_cplx one = {1.0, 0.0}, zero = {0.0, 0.0};
        sps_index nzero = 0, first = 0;
        for (sps_index i = 0; i < P->op.n; i++) {
            char *p = (char *)j->diag + (size_t)i * ss;
            const sps_cplx d = sps_cplx_load(t, p, one);
            if (d.re != zero.re || d.im != zero.im) continue;
            sps_cplx_store(t, one, p);
            if (!nzero++) first = i + 1;
        }
        if (nzero)
            snprintf(P->warning, sizeof P->warning, "Jacobi: %d zero diagonal entr%s taken as 1 (the first in row %d)",
                     (int)nzero, nzero == 1 ? "y" : "ies", (int)first);
    }
    SPS_CHECK(sps_dcopy(ctx, j->dinv, j->diag, bytes, SPS_COPY_H2D));
    SPS_CHECK(sps_kvec(ctx, t)->invert(sps_ex(ctx), P->op.n, j->dinv, j->slot, 0));
    SPS_CHECK(sps_dcopy(ctx, &bad, j->slot, sizeof bad, SPS_COPY_D2H));
    if (!(bad.re > 0)) return SPS_OK;
    /* the host copy still holds the entry: say whether it is zero or not finite */
    const sps_index row = (sps_index)bad.re;
    const sps_cplx d = sps_cplx_load(t, (char *)j->diag + (size_t)(row - 1) * sps_scalar_size(t), bad);
    if (d.re == 0.0 && d.im == 0.0)
        return sps_error(ctx, SPS_ERR_NUMERIC,
                         "Jacobi: diagonal entry of row %d is zero (jacobi-zero-diagonal = error; 'one' takes it as 1, "
                         "as PETSc does)",
                         (int)row);
    if (isfinite(d.re) && isfinite(d.im)) /* finite, nonzero: its inverse is past the range (a subnormal) */
        return sps_error(ctx, SPS_ERR_NUMERIC, "Jacobi: diagonal entry of row %d (%g%+gi) is too small to invert in %s",
                         (int)row, d.re, d.im, sps_scalar_name(t));
    if (sps_scalar_is_complex(t))
        return sps_error(ctx, SPS_ERR_NUMERIC, "Jacobi: diagonal entry of row %d is not finite (%g%+gi)", (int)row,
                         d.re, d.im);
    return sps_error(ctx, SPS_ERR_NUMERIC, "Jacobi: diagonal entry of row %d is not finite (%g)", (int)row, d.re);
}

static sps_status jacobi_apply(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y)
{
    (void)mode; /* a diagonal is its own transpose */
    const jacobi_store *j = P->data;
    /* y = (1/diag(A)) .* x */
    return sps_kvec(P->op.ctx, P->op.t)->pmul(sps_ex(P->op.ctx), P->op.n, j->dinv, x->data, y->data);
}

/* y = (1/diag(A)) .* x and x^H y in one pass: PCG reads r once for both (3n, not 5n) */
static sps_status jacobi_apply_dot(sps_precond P, sps_vector x, sps_vector y, sps_cplx *slots, int out)
{
    const jacobi_store *j = P->data;
    return sps_kvec(P->op.ctx, P->op.t)->pmul_dot(sps_ex(P->op.ctx), P->op.n, j->dinv, x->data, y->data, slots, out);
}

static const void *jacobi_diagonal(sps_precond P) { return ((const jacobi_store *)P->data)->dinv; }

const sps_precond_method sps_precond_jacobi_method = {
    .type = SPS_PRECOND_JACOBI, .name = "jacobi",
    .flags = SPS_PRECOND_CAPTURABLE | SPS_PRECOND_SYMMETRIC | SPS_PRECOND_DIAGONAL, .needs_entries = 1,
    .options = jacobi_options, .noptions = SPS_NOPTS(jacobi_options),
    .symbolic = jacobi_symbolic, .numeric = jacobi_numeric,
    .apply = jacobi_apply,
    .apply_dot = jacobi_apply_dot, .diagonal = jacobi_diagonal,
    .destroy = jacobi_destroy,
};
