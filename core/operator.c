/* Operators: the format-agnostic handle solvers work on. */
#include "core/internal.h"

#include <stdlib.h>

static sps_status check_apply(sps_operator op, sps_op_mode mode, sps_vector x, sps_vector y)
{
    if (!x || !y) return sps_error(op->ctx, SPS_ERR_ARG, "operator apply: NULL vector");
    if (x->ctx != op->ctx || y->ctx != op->ctx)
        return sps_error(op->ctx, SPS_ERR_ARG, "operator apply: vectors belong to another context");
    if (x->t != op->t || y->t != op->t)
        return sps_error(op->ctx, SPS_ERR_ARG, "operator apply: vector type %s/%s, operator type %s",
                         sps_scalar_name(x->t), sps_scalar_name(y->t), sps_scalar_name(op->t));
    const sps_index nin = mode == SPS_OP_N ? op->m : op->n, nout = mode == SPS_OP_N ? op->n : op->m;
    if (x->n != nin || y->n != nout)
        return sps_error(op->ctx, SPS_ERR_ARG, "operator apply%s: %d x %d operator, x has %d entries, y has %d",
                         mode == SPS_OP_T ? " (transpose)" : "", (int)op->n, (int)op->m, (int)x->n, (int)y->n);
    if (x == y) return sps_error(op->ctx, SPS_ERR_ARG, "operator apply: x and y must be different vectors");
    return SPS_OK;
}

sps_status sps_op_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    SPS_CHECK(check_apply(op, mode, x, y));
    return op->vt->apply(op, mode, a, x, b, y);
}

sps_status sps_op_apply_dot(sps_operator op, sps_vector x, sps_vector y, sps_cplx *slots, int out)
{
    SPS_CHECK(check_apply(op, SPS_OP_N, x, y));
    if (op->A && op->A->ops->spmv_dot) return op->A->ops->spmv_dot(op->A, x->data, y->data, slots, out);
    SPS_CHECK(op->vt->apply(op, SPS_OP_N, sps_cplx_make(1, 0), x, sps_cplx_make(0, 0), y));
    return sps_kern(op->ctx, op->t)->dot(sps_ex(op->ctx), x->n, x->data, y->data, slots, out);
}

/* The vectors of the direction update pnew = z + c pold, q = A pnew. */
static sps_status check_xpay(sps_operator op, sps_vector z, sps_vector pold, sps_vector pnew, sps_vector q)
{
    SPS_CHECK(check_apply(op, SPS_OP_N, pnew, q));
    if (z->n != pnew->n || pold->n != pnew->n || pnew == z || pnew == pold)
        return sps_error(op->ctx, SPS_ERR_ARG,
                         "operator apply (direction update): z, p_old and p_new need %d entries each (got %d, %d, %d) "
                         "and p_new must differ from z and p_old",
                         (int)pnew->n, (int)z->n, (int)pold->n, (int)pnew->n);
    return SPS_OK;
}

sps_status sps_op_apply_xpay_dot(sps_operator op, sps_vector z, sps_cplx *slots, sps_scoef c, sps_vector pold,
                                 sps_vector pnew, sps_vector q, int out)
{
    SPS_CHECK(check_xpay(op, z, pold, pnew, q));
    if (op->A && op->A->ops->spmv_xpay_dot)
        return op->A->ops->spmv_xpay_dot(op->A, z->data, c, pold->data, pnew->data, q->data, slots, out);
    SPS_CHECK(sps_kern(op->ctx, op->t)->waxpy_s(sps_ex(op->ctx), z->n, z->data, slots, c, pold->data, pnew->data));
    return sps_op_apply_dot(op, pnew, q, slots, out);
}

sps_status sps_op_cg_iter(sps_operator op, sps_vector z, sps_cplx *slots, sps_scoef c, sps_vector pold,
                          sps_vector pnew, sps_vector q, sps_vector x, sps_vector r, sps_cg_slots k)
{
    if (x->n != pnew->n || r->n != pnew->n)
        return sps_error(op->ctx, SPS_ERR_ARG, "operator CG iteration: x and r need %d entries (got %d, %d)",
                         (int)pnew->n, (int)x->n, (int)r->n);
    SPS_CHECK(check_xpay(op, z, pold, pnew, q));
    if (op->A && op->A->ops->cg_iter)
        return op->A->ops->cg_iter(op->A, z->data, c, pold->data, pnew->data, q->data, x->data, r->data, slots, k);
    SPS_CHECK(sps_op_apply_xpay_dot(op, z, slots, c, pold, pnew, q, k.pq));
    return sps_kern(op->ctx, op->t)->cg_step(sps_ex(op->ctx), x->n, slots, k, pnew->data, q->data, x->data, r->data);
}

sps_status sps_operator_apply(sps_operator op, sps_op_mode mode, const void *alpha, sps_vector x, const void *beta,
                              sps_vector y)
{
    if (!op) return SPS_ERR_ARG;
    if (mode != SPS_OP_N && mode != SPS_OP_T) return sps_error(op->ctx, SPS_ERR_ARG, "operator apply: bad mode %d", (int)mode);
    return sps_op_apply(op, mode, sps_cplx_load(op->t, alpha, sps_cplx_make(1, 0)), x,
                        sps_cplx_load(op->t, beta, sps_cplx_make(0, 0)), y);
}

sps_status sps_operator_size(sps_operator op, sps_index *n, sps_index *m)
{
    if (!op) return SPS_ERR_ARG;
    if (n) *n = op->n;
    if (m) *m = op->m;
    return SPS_OK;
}

sps_scalar sps_operator_scalar(sps_operator op) { return op ? op->t : SPS_F64; }

void sps_operator_destroy(sps_operator op)
{
    if (!op) return;
    if (op->vt->destroy) op->vt->destroy(op);
    sps_vector_destroy(op->tmp);
    free(op);
}

/* ---------------------------------------------------------------- matrix operators */
static sps_status mat_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    return op->A->ops->spmv(op->A, mode, a, x->data, b, y->data);
}

static const sps_operator_vtbl mat_vtbl = {mat_apply, NULL};

sps_status sps_operator_from_matrix(sps_matrix A, sps_operator *out)
{
    if (!A || !out) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_operator_from_matrix: NULL output") : SPS_ERR_ARG;
    sps_operator op;
    SPS_CHECK(sps_hcalloc(A->ctx, (void **)&op, sizeof *op, "an operator handle"));
    op->ctx = A->ctx;
    op->n = A->n;
    op->m = A->m;
    op->t = A->t;
    op->vt = &mat_vtbl;
    op->A = A;
    *out = op;
    return SPS_OK;
}

/* ---------------------------------------------------------------- shell operators */
/* Run a shell callback.  A failure the callback recorded itself (a library call
 * inside it failed) keeps its message; any other failure is recorded here, so the
 * context never shows an older, unrelated message for it. */
static sps_status call_shell(sps_operator op, sps_apply_fn fn, sps_vector x, sps_vector y)
{
    sps_context ctx = op->ctx;
    const sps_status prev = ctx->last_status;
    ctx->last_status = SPS_OK; /* to see whether the callback records a failure */
    const sps_status st = fn(op->user, x, y);
    if (st == SPS_OK) {
        if (ctx->last_status == SPS_OK) ctx->last_status = prev;
        return SPS_OK;
    }
    if (ctx->last_status == SPS_OK)
        return sps_error(ctx, st, "shell operator callback failed with %s", sps_status_name(st));
    return st;
}

/* The callback computes t = op(A) x; alpha and beta are applied here (y = a t + b y)
 * so users write only the plain product. */
static sps_status shell_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    sps_apply_fn fn = mode == SPS_OP_N ? op->apply_fn : op->apply_t_fn;
    if (!fn) return sps_error(op->ctx, SPS_ERR_UNSUPPORTED, "shell operator has no transpose callback");
    const int plain = a.re == 1.0 && a.im == 0.0 && b.re == 0.0 && b.im == 0.0;
    if (plain) return call_shell(op, fn, x, y);
    const sps_index nout = mode == SPS_OP_N ? op->n : op->m;
    if (op->tmp && op->tmp->n != nout) {
        sps_vector_destroy(op->tmp);
        op->tmp = NULL;
    }
    if (!op->tmp) SPS_CHECK(sps_vector_create(op->ctx, nout, op->t, &op->tmp));
    SPS_CHECK(call_shell(op, fn, x, op->tmp));
    return sps_kern(op->ctx, op->t)->axpby(sps_ex(op->ctx), nout, a, op->tmp->data, b, y->data);
}

static const sps_operator_vtbl shell_vtbl = {shell_apply, NULL};

sps_status sps_operator_shell(sps_context ctx, sps_index n, sps_index m, sps_scalar t, sps_apply_fn apply,
                              sps_apply_fn apply_t, void *user, sps_operator *out)
{
    if (!ctx || !out) return SPS_ERR_ARG;
    *out = NULL;
    if (!apply) return sps_error(ctx, SPS_ERR_ARG, "sps_operator_shell: NULL apply callback");
    if (n < 0 || m < 0) return sps_error(ctx, SPS_ERR_ARG, "sps_operator_shell: negative size");
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "sps_operator_shell: bad scalar type");
    sps_operator op;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&op, sizeof *op, "an operator handle"));
    op->ctx = ctx;
    op->n = n;
    op->m = m;
    op->t = t;
    op->vt = &shell_vtbl;
    op->apply_fn = apply;
    op->apply_t_fn = apply_t;
    op->user = user;
    *out = op;
    return SPS_OK;
}
