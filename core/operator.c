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

/* The vectors of a fused product: y = A x (square A) and, for the direction update
 * x = z + c pold, z and pold of x's size, x distinct from both; for a CG step, the
 * iterate and residual of x's size. */
static sps_status check_fused(sps_operator op, const sps_fuse_desc *d)
{
    SPS_CHECK(check_apply(op, SPS_OP_N, d->x, d->y));
    if (d->kind == SPS_FUSE_DOT) return SPS_OK;
    if (d->kind == SPS_FUSE_CG_STEP_DOT) {
        if (!d->p || !d->q || !d->cx || d->p->n != d->x->n || d->q->n != d->x->n || d->cx->n != d->x->n ||
            d->x == d->y)
            return sps_error(op->ctx, SPS_ERR_ARG,
                             "preconditioned CG step: p, A p and x need %d entries (got %d, %d, %d) and z must differ "
                             "from r",
                             (int)d->x->n, d->p ? (int)d->p->n : -1, d->q ? (int)d->q->n : -1,
                             d->cx ? (int)d->cx->n : -1);
        return SPS_OK;
    }
    if (!d->z || !d->pold || d->z->n != d->x->n || d->pold->n != d->x->n || d->x == d->z || d->x == d->pold)
        return sps_error(op->ctx, SPS_ERR_ARG,
                         "operator apply (direction update): z, p_old and p_new need %d entries each (got %d, %d, %d) "
                         "and p_new must differ from z and p_old",
                         (int)d->x->n, d->z ? (int)d->z->n : -1, d->pold ? (int)d->pold->n : -1, (int)d->x->n);
    if (d->kind == SPS_FUSE_CG_ITER && (!d->cx || !d->cr || d->cx->n != d->x->n || d->cr->n != d->x->n))
        return sps_error(op->ctx, SPS_ERR_ARG, "operator CG iteration: x and r need %d entries (got %d, %d)",
                         (int)d->x->n, d->cx ? (int)d->cx->n : -1, d->cr ? (int)d->cr->n : -1);
    return SPS_OK;
}

/* d by its generic steps, each offered to the operator again (a format that fuses
 * the dot but not the direction update still saves a pass). */
static sps_status fused_generic(sps_operator op, const sps_fuse_desc *d)
{
    sps_fuse_desc in = *d;
    switch (d->kind) {
    case SPS_FUSE_DOT:
        /* y = A x;  slots[out] = x^H y */
        SPS_CHECK(op->vt->apply(op, SPS_OP_N, sps_cplx_make(1, 0), d->x, sps_cplx_make(0, 0), d->y));
        return sps_v_dot(d->x, d->y, d->slots, d->out);
    case SPS_FUSE_XPAY_DOT:
        /* x = z + c pold;  then y = A x, slots[out] = x^H y */
        SPS_CHECK(sps_v_waxpy_s(d->z, d->slots, d->c, d->pold, d->x));
        in.kind = SPS_FUSE_DOT;
        return sps_op_apply_fused(op, &in);
    case SPS_FUSE_CG_ITER:
        /* the direction update and product (out = pq), then x += alpha p, r -= alpha q, rr, stop */
        in.kind = SPS_FUSE_XPAY_DOT;
        in.out = d->k.pq;
        SPS_CHECK(sps_op_apply_fused(op, &in));
        return sps_v_cg_step(d->slots, d->k, d->x, d->y, d->cx, d->cr);
    case SPS_FUSE_CG_STEP_DOT:
        /* the CG step (x is its residual), then y = M x, slots[out] = x^H y */
        SPS_CHECK(sps_v_cg_step(d->slots, d->k, d->p, d->q, d->cx, d->x));
        in.kind = SPS_FUSE_DOT;
        return sps_op_apply_fused(op, &in);
    }
    return sps_error(op->ctx, SPS_ERR_ARG, "operator apply: unknown fused product %d", (int)d->kind);
}

sps_status sps_op_apply_fused(sps_operator op, const sps_fuse_desc *d)
{
    SPS_CHECK(check_fused(op, d));
    if (op->vt->apply_fused) {
        int done = 0;
        SPS_CHECK(op->vt->apply_fused(op, d, &done));
        if (done) return SPS_OK;
    }
    return fused_generic(op, d);
}

sps_status sps_op_new(sps_context ctx, sps_index n, sps_index m, sps_scalar t, const sps_operator_vtbl *vt, void *impl,
                      unsigned flags, sps_operator *out)
{
    sps_operator op;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&op, sizeof *op, "an operator handle"));
    *op = (struct sps_operator_s){.ctx = ctx, .n = n, .m = m, .t = t, .vt = vt, .impl = impl, .flags = flags};
    *out = op;
    return SPS_OK;
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
    if (!op || (op->flags & SPS_OPF_VIEW)) return; /* a view is released by its owner */
    if (op->vt->destroy) op->vt->destroy(op);
    sps_vector_destroy(op->tmp);
    free(op);
}

/* ---------------------------------------------------------------- shell operators */
sps_status sps_call_user(sps_context ctx, sps_apply_fn fn, void *user, sps_vector x, sps_vector y, const char *what)
{
    const sps_status prev = ctx->last_status;
    ctx->last_status = SPS_OK; /* to see whether the callback records a failure */
    const sps_status st = fn(user, x, y);
    if (st == SPS_OK) {
        if (ctx->last_status == SPS_OK) ctx->last_status = prev;
        return SPS_OK;
    }
    if (ctx->last_status == SPS_OK) return sps_error(ctx, st, "%s callback failed with %s", what, sps_status_name(st));
    return st;
}

sps_status sps_op_apply_plain(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y,
                              sps_op_plain_fn plain)
{
    const int unit = a.re == 1.0 && a.im == 0.0 && b.re == 0.0 && b.im == 0.0;
    if (unit) return plain(op, mode, x, y);
    const sps_index nout = mode == SPS_OP_N ? op->n : op->m;
    if (op->tmp && op->tmp->n != nout) {
        sps_vector_destroy(op->tmp);
        op->tmp = NULL;
    }
    if (!op->tmp) SPS_CHECK(sps_vector_create(op->ctx, nout, op->t, &op->tmp));
    SPS_CHECK(plain(op, mode, x, op->tmp));
    return sps_v_axpby(a, op->tmp, b, y);
}

/* The callback computes op(A) x; alpha and beta are applied by sps_op_apply_plain
 * so users write only the plain product. */
static sps_status shell_plain(sps_operator op, sps_op_mode mode, sps_vector x, sps_vector y)
{
    sps_apply_fn fn = mode == SPS_OP_N ? op->apply_fn : op->apply_t_fn;
    if (!fn) return sps_error(op->ctx, SPS_ERR_UNSUPPORTED, "shell operator has no transpose callback");
    return sps_call_user(op->ctx, fn, op->user, x, y, "shell operator");
}

static sps_status shell_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    return sps_op_apply_plain(op, mode, a, x, b, y, shell_plain);
}

static const sps_operator_vtbl shell_vtbl = {.apply = shell_apply};

sps_status sps_operator_shell(sps_context ctx, sps_index n, sps_index m, sps_scalar t, sps_apply_fn apply,
                              sps_apply_fn apply_t, void *user, sps_operator *out)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!out) return sps_error(ctx, SPS_ERR_ARG, "sps_operator_shell: NULL output operator");
    *out = NULL;
    if (!apply) return sps_error(ctx, SPS_ERR_ARG, "sps_operator_shell: NULL apply callback");
    if (n < 0 || m < 0) return sps_error(ctx, SPS_ERR_ARG, "sps_operator_shell: negative size");
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "sps_operator_shell: bad scalar type");
    sps_operator op;
    /* not capturable: the callback may synchronise with the host */
    SPS_CHECK(sps_op_new(ctx, n, m, t, &shell_vtbl, NULL, 0, &op));
    op->apply_fn = apply;
    op->apply_t_fn = apply_t;
    op->user = user;
    *out = op;
    return SPS_OK;
}
