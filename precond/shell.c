/* Shell preconditioner: M x is the user's callback (PETSc's PCSHELL).
 *
 * Ready at creation with the size, type and flags its creator gives: there is
 * nothing to set up (setup and update only check the system's shape).  The
 * callback computes y = M x; alpha and beta of the operator view are applied
 * around it (sps_op_apply_plain).  A failing callback ends the solve with its
 * status, keeping its own message when a library call inside it failed
 * (sps_call_user).  Not capturable unless the creator says so: the callback may
 * synchronise or touch the host. */
#include "precond/precond_impl.h"

#include <stdlib.h>

typedef struct {
    sps_apply_fn fn;
    void *user;
} shell_store;

static sps_status shell_apply(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y)
{
    sps_context ctx = P->op.ctx;
    if (mode != SPS_OP_N)
        return sps_error(ctx, SPS_ERR_UNSUPPORTED, "shell preconditioner: no transpose (M^T x) callback");
    const shell_store *s = P->data;
    if (x != y) return sps_call_user(ctx, s->fn, s->user, x, y, "shell preconditioner");
    /* in place (sps_precond_apply allows it; the callback gets distinct vectors) */
    sps_operator op = sps_pc_op(P);
    if (!op->tmp) SPS_CHECK(sps_vector_create(ctx, op->n, op->t, &op->tmp));
    SPS_CHECK(sps_call_user(ctx, s->fn, s->user, x, op->tmp, "shell preconditioner"));
    return sps_vector_copy(op->tmp, y);
}

static void shell_destroy(sps_precond P)
{
    free(P->data);
    P->data = NULL;
}

const sps_precond_method sps_precond_shell_method = {
    .type = SPS_PRECOND_SHELL, .name = "shell",
    .fixed_shape = 1,
    .apply = shell_apply,
    .destroy = shell_destroy,
};

sps_status sps_precond_create_shell(sps_context ctx, sps_index n, sps_scalar t, sps_apply_fn apply, unsigned flags,
                                    void *user, sps_precond *out)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!out) return sps_error(ctx, SPS_ERR_ARG, "sps_precond_create_shell: NULL output");
    *out = NULL;
    if (!apply) return sps_error(ctx, SPS_ERR_ARG, "sps_precond_create_shell: NULL apply callback");
    if (n < 0) return sps_error(ctx, SPS_ERR_ARG, "sps_precond_create_shell: negative size %d", (int)n);
    if ((unsigned)t >= SPS_NUM_SCALARS)
        return sps_error(ctx, SPS_ERR_ARG, "sps_precond_create_shell: bad scalar type %d", (int)t);
    const unsigned known = SPS_PRECOND_CAPTURABLE | SPS_PRECOND_SYMMETRIC;
    if (flags & ~known)
        return sps_error(ctx, SPS_ERR_ARG,
                         "sps_precond_create_shell: unknown flags 0x%x (SPS_PRECOND_CAPTURABLE | "
                         "SPS_PRECOND_SYMMETRIC = 0x%x)",
                         flags & ~known, known);
    shell_store *s;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&s, sizeof *s, "a shell preconditioner"));
    s->fn = apply;
    s->user = user;
    sps_precond P;
    const sps_status st = sps_pc_alloc(ctx, &sps_precond_shell_method, flags, &P);
    if (st != SPS_OK) {
        free(s);
        return st;
    }
    P->data = s;
    P->op.n = P->op.m = n;
    P->op.t = t;
    P->state = SPS_PC_READY;
    *out = P;
    return SPS_OK;
}
