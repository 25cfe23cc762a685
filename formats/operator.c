/* Matrix operators: any format behind the format-agnostic sps_operator.
 *
 * apply is the format's SpMV; apply_fused hands the fused products a format
 * offers (format.h: spmv_dot, spmv_xpay_dot, cg_iter) to it, and declines the
 * rest, so core's generic steps run for formats without them. */
#include "formats/format.h"

/* The matrix's launch variant on the context's exec for the duration of a product
 * (kernels read ex->lv at launch; a product inside another's keeps the outer one's
 * restored after it). */
static const sps_launch_variant *mat_lv_push(sps_matrix A)
{
    sps_exec *ex = sps_ex(A->ctx);
    const sps_launch_variant *old = ex->lv;
    ex->lv = &A->lv;
    return old;
}
static sps_status mat_lv_pop(sps_matrix A, const sps_launch_variant *old, sps_status st)
{
    sps_ex(A->ctx)->lv = old;
    return st;
}

static sps_status mat_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    sps_matrix A = op->impl;
    const sps_launch_variant *old = mat_lv_push(A);
    return mat_lv_pop(A, old, A->ops->spmv(A, mode, a, x->data, b, y->data));
}

static sps_status mat_apply_fused_lv(sps_matrix A, const sps_fuse_desc *d, int *done)
{
    const sps_format_ops *f = A->ops;
    *done = 1;
    switch (d->kind) {
    case SPS_FUSE_DOT:
        if (f->spmv_dot) return f->spmv_dot(A, d->x->data, d->y->data, d->slots, d->out);
        break;
    case SPS_FUSE_XPAY_DOT:
        if (f->spmv_xpay_dot)
            return f->spmv_xpay_dot(A, d->z->data, d->c, d->pold->data, d->x->data, d->y->data, d->slots, d->out);
        break;
    case SPS_FUSE_CG_ITER:
        if (f->cg_iter)
            return f->cg_iter(A, d->z->data, d->c, d->pold->data, d->x->data, d->y->data, d->cx->data, d->cr->data,
                              d->slots, d->k);
        break;
    case SPS_FUSE_CG_STEP_DOT: /* a preconditioner's */
        break;
    }
    *done = 0;
    return SPS_OK;
}

static sps_status mat_apply_fused(sps_operator op, const sps_fuse_desc *d, int *done)
{
    sps_matrix A = op->impl;
    const sps_launch_variant *old = mat_lv_push(A);
    return mat_lv_pop(A, old, mat_apply_fused_lv(A, d, done));
}

static const sps_operator_vtbl mat_vtbl = {.apply = mat_apply, .apply_fused = mat_apply_fused};

sps_status sps_operator_from_matrix(sps_matrix A, sps_operator *out)
{
    if (!A || !out) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_operator_from_matrix: NULL output") : SPS_ERR_ARG;
    /* n x m entries act on vectors of m * dim scalars (a quaternion matrix is a real
     * operator of 4n); a format's products only queue work on the context's stream:
     * capturable */
    return sps_op_new(A->ctx, sps_matrix_op_rows(A), sps_matrix_op_cols(A), A->t, &mat_vtbl, A, SPS_OPF_CAPTURABLE,
                      out);
}
