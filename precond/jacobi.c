/* Jacobi (diagonal) preconditioner: M = diag(A)^{-1}, applied as y = M .* x.
 *
 * Setup reads the diagonal on the host (sps_matrix_diagonal), uploads it and
 * inverts it in backend memory with the `invert` kernel, which reports the first
 * zero or non-finite entry through a slot; apply is one `pmul` pass (3n values).
 * Valid for any matrix with a nonzero finite diagonal; with CG it keeps the
 * preconditioner SPD exactly when diag(A) > 0 (A SPD or HPD). */
#include "precond/precond_impl.h"

#include <math.h>
#include <stdlib.h>

static sps_status jacobi_setup(sps_precond P, sps_matrix A)
{
    sps_context ctx = P->ctx;
    const size_t bytes = (size_t)P->n * sps_scalar_size(P->t);
    void *h = NULL;
    sps_cplx *slot = NULL, bad;
    sps_status st;
    SPS_CHECK(sps_hmalloc(ctx, &h, bytes, "the Jacobi diagonal"));
    SPS_CHECK_GOTO(st, sps_matrix_diagonal(A, h), done);
    SPS_CHECK_GOTO(st, sps_dupload(ctx, &P->data, h, bytes), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&slot, sizeof *slot), done);
    SPS_CHECK_GOTO(st, sps_kvec(ctx, P->t)->invert(sps_ex(ctx), P->n, P->data, slot, 0), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, &bad, slot, sizeof bad, SPS_COPY_D2H), done);
    if (bad.re > 0) {
        /* the host copy still holds the entry: say whether it is zero or not finite */
        const sps_index row = (sps_index)bad.re;
        const sps_cplx d = sps_cplx_load(P->t, (char *)h + (size_t)(row - 1) * sps_scalar_size(P->t), bad);
        if (d.re == 0.0 && d.im == 0.0)
            st = sps_error(ctx, SPS_ERR_NUMERIC, "Jacobi: diagonal entry of row %d is zero", (int)row);
        else if (sps_scalar_is_complex(P->t))
            st = sps_error(ctx, SPS_ERR_NUMERIC, "Jacobi: diagonal entry of row %d is not finite (%g%+gi)", (int)row,
                           d.re, d.im);
        else
            st = sps_error(ctx, SPS_ERR_NUMERIC, "Jacobi: diagonal entry of row %d is not finite (%g)", (int)row, d.re);
    }
done:
    sps_dfree(ctx, slot);
    free(h);
    return st;
}

static sps_status jacobi_apply(sps_precond P, sps_vector x, sps_vector y)
{
    /* y = (1/diag(A)) .* x */
    return sps_kvec(P->ctx, P->t)->pmul(sps_ex(P->ctx), P->n, P->data, x->data, y->data);
}

static void jacobi_destroy(sps_precond P)
{
    sps_dfree(P->ctx, P->data);
    P->data = NULL;
}

const sps_precond_method sps_precond_jacobi_method = {SPS_PRECOND_JACOBI, "jacobi",       jacobi_setup,
                                                      jacobi_apply,       jacobi_destroy, 0};
