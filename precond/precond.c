/* Preconditioners: the registry (name -> method), the setup protocol of
 * precond_impl.h, M as an operator, and the public API of
 * include/spsolve/precond.h.  Adding one is a new file filling an
 * sps_precond_method plus one entry in SPS_PRECONDS. */
#include "precond/precond_impl.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one table: X(name) per method, in display order; SEP between entries.
 * The shell is not in it: only sps_precond_create_shell makes one. */
#define SPS_PRECONDS(X, SEP) X(none) SEP X(jacobi) SEP X(bjacobi) SEP X(ilu0) SEP X(ic0) SEP X(cheby)
#define SPS_PC_ENTRY_(n) &sps_precond_##n##_method
#define SPS_PC_NAME_(n) #n
#define SPS_PC_COMMA_ ,
#define SPS_PC_LISTSEP_ ", "

static const sps_precond_method *const methods[] = {SPS_PRECONDS(SPS_PC_ENTRY_, SPS_PC_COMMA_)};
static const char method_list[] = SPS_PRECONDS(SPS_PC_NAME_, SPS_PC_LISTSEP_);
#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))

const char *sps_precond_list(void) { return method_list; }

static const sps_precond_method *find_name(const char *name)
{
    for (int i = 0; i < NMETHODS; i++)
        if (strcmp(methods[i]->name, name) == 0) return methods[i];
    return NULL;
}

static sps_status unknown_name(sps_context ctx, const char *name)
{
    return sps_error(ctx, SPS_ERR_ARG, "unknown preconditioner \"%s\" (available: %s)", name, method_list);
}

/* ---------------------------------------------------------------- M as an operator */
static sps_status not_ready(sps_precond P, const char *fn)
{
    return sps_error(P->op.ctx, SPS_ERR_ARG, "%s: preconditioner %s is not set up (%s)", fn, P->m->name,
                     P->state == SPS_PC_SYMBOLIC ? "its last numeric step failed: sps_precond_update or "
                                                   "sps_precond_setup with valid values"
                                                 : "sps_precond_setup");
}

/* t = op(M) x: the method's apply, once P is READY */
static sps_status pc_plain(sps_operator op, sps_op_mode mode, sps_vector x, sps_vector y)
{
    sps_precond P = (sps_precond)op; /* op is P's first member */
    if (P->state != SPS_PC_READY) return not_ready(P, "preconditioner apply");
    return P->m->apply(P, mode, x, y);
}

static sps_status pc_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    return sps_op_apply_plain(op, mode, a, x, b, y, pc_plain);
}

/* z = M r with r^H z (SPS_FUSE_DOT: PCG's rho) in one pass where the method has it
 * (Jacobi: pmul_dot), and PCG's step with them (SPS_FUSE_CG_STEP_DOT) where M is
 * diagonal (cg_step_pmul); else the generic steps. */
static sps_status pc_apply_fused(sps_operator op, const sps_fuse_desc *d, int *done)
{
    sps_precond P = (sps_precond)op;
    *done = 0;
    if (d->x == d->y) return SPS_OK;
    if (d->kind == SPS_FUSE_DOT && P->m->apply_dot) {
        if (P->state != SPS_PC_READY) return not_ready(P, "preconditioner apply");
        SPS_CHECK(P->m->apply_dot(P, d->x, d->y, d->slots, d->out));
        *done = 1;
    } else if (d->kind == SPS_FUSE_CG_STEP_DOT && P->m->diagonal) {
        if (P->state != SPS_PC_READY) return not_ready(P, "preconditioner apply");
        SPS_CHECK(sps_kvec(op->ctx, op->t)
                      ->cg_step_pmul(sps_ex(op->ctx), op->n, d->slots, d->k, d->p->data, d->q->data, d->cx->data,
                                     d->x->data, P->m->diagonal(P), d->y->data, d->out));
        *done = 1;
    }
    return SPS_OK;
}

static const sps_operator_vtbl pc_vtbl = {.apply = pc_apply, .apply_fused = pc_apply_fused};

sps_status sps_pc_alloc(sps_context ctx, const sps_precond_method *m, unsigned flags, sps_precond *out)
{
    sps_precond P;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&P, sizeof *P, "a preconditioner handle"));
    P->op.ctx = ctx;
    P->op.t = SPS_F64; /* n = 0 and the type are set by setup (or the shell's creator) */
    P->op.flags = SPS_OPF_VIEW | ((flags & SPS_PRECOND_CAPTURABLE) ? SPS_OPF_CAPTURABLE : 0);
    P->op.vt = &pc_vtbl;
    P->m = m;
    P->flags = flags;
    if (sps_options_create(m->name, m->options, m->noptions, &P->opts) != SPS_OK) {
        free(P);
        return sps_error(ctx, SPS_ERR_ALLOC, "%s: out of host memory for its options", m->name);
    }
    *out = P;
    return SPS_OK;
}

const sps_option_desc *sps_precond_options_desc(const char *name, int *n)
{
    const sps_precond_method *m = name ? find_name(name) : NULL;
    if (n) *n = m ? m->noptions : 0;
    return m ? m->options : NULL;
}

sps_status sps_precond_set_option(sps_precond P, const char *name, const char *value)
{
    if (!P) return SPS_ERR_ARG;
    const sps_status st = sps_options_set(P->opts, name, value);
    if (st != SPS_OK) return sps_error(P->op.ctx, st, "sps_precond_set_option: %s", sps_options_error(P->opts));
    return SPS_OK;
}

/* ---------------------------------------------------------------- setup protocol */
/* The system given to setup or update (fn), checked against P's method; *n and *t
 * its size and scalar type. */
static sps_status check_system(sps_precond P, const char *fn, sps_operator op, sps_matrix A, sps_index *n,
                               sps_scalar *t)
{
    sps_context ctx = P->op.ctx;
    const char *name = P->m->name;
    if (!op && !A)
        return sps_error(ctx, SPS_ERR_ARG, "%s: preconditioner %s needs an operator or a matrix (both are NULL)", fn,
                         name);
    if (!A && P->m->needs_entries)
        return sps_error(ctx, SPS_ERR_ARG, "preconditioner %s needs the matrix entries: pass the matrix to %s", name,
                         fn);
    if ((op && op->ctx != ctx) || (A && A->ctx != ctx))
        return sps_error(ctx, SPS_ERR_ARG, "%s: the %s belongs to another context than the preconditioner", fn,
                         op && op->ctx != ctx ? "operator" : "matrix");
    /* a matrix as the operator it is: n*d x m*d scalars for compound entries */
    const sps_index an = A ? sps_matrix_op_rows(A) : 0, am = A ? sps_matrix_op_cols(A) : 0;
    const sps_index rows = op ? op->n : an, cols = op ? op->m : am;
    *t = op ? op->t : A->t;
    if (rows != cols)
        return sps_error(ctx, SPS_ERR_ARG, "preconditioner %s: the %s is %d x %d, not square", name,
                         op ? "operator" : "matrix", (int)rows, (int)cols);
    if (op && A && (an != op->n || am != op->m || A->t != op->t))
        return sps_error(ctx, SPS_ERR_ARG, "%s: the matrix (%d x %d, %s) and the operator (%d x %d, %s) differ", fn,
                         (int)an, (int)am, sps_scalar_name(A->t), (int)op->n, (int)op->m, sps_scalar_name(op->t));
    if (P->m->fixed_shape && (rows != P->op.n || *t != P->op.t))
        return sps_error(ctx, SPS_ERR_ARG, "%s: preconditioner %s is %d x %d (%s), the system %d x %d (%s)", fn, name,
                         (int)P->op.n, (int)P->op.n, sps_scalar_name(P->op.t), (int)rows, (int)rows,
                         sps_scalar_name(*t));
    *n = rows;
    return SPS_OK;
}

/* Back to EMPTY: what the method made is released. */
static void release(sps_precond P)
{
    if (P->m->destroy) P->m->destroy(P);
    P->data = NULL;
    P->state = SPS_PC_EMPTY;
}

/* One step of the method (NULL: nothing to do) with the operator given, or a
 * wrapper of A made for the call. */
static sps_status run_step(sps_precond P, sps_status (*step)(sps_precond, sps_operator, sps_matrix), sps_operator op,
                           sps_matrix A)
{
    if (!step) return SPS_OK;
    sps_operator wrap = NULL;
    if (!op) SPS_CHECK(sps_operator_from_matrix(A, &wrap));
    const sps_status st = step(P, op ? op : wrap, A);
    sps_operator_destroy(wrap);
    return st;
}

/* The end of a setup or update call: the host copy is not kept beyond it (it
 * would double the matrix's memory for the preconditioner's lifetime). */
static sps_status drop_host(sps_precond P, sps_status st)
{
    if (P->have_host) sps_csr_host_free(&P->host);
    P->have_host = 0;
    return st;
}

static sps_status run_numeric(sps_precond P, sps_operator op, sps_matrix A)
{
    P->warning[0] = '\0';
    const sps_status st = run_step(P, P->m->numeric, op, A);
    if (st != SPS_OK) {
        P->state = SPS_PC_SYMBOLIC; /* M is not usable; an update with valid values is */
        return st;
    }
    P->nnumeric++;
    P->state = SPS_PC_READY;
    return SPS_OK;
}

sps_status sps_precond_setup(sps_precond P, sps_operator op, sps_matrix A)
{
    if (!P) return SPS_ERR_ARG;
    sps_index n = 0;
    sps_scalar t = SPS_F64;
    SPS_CHECK(check_system(P, "sps_precond_setup", op, A, &n, &t));
    if (P->m->fixed_shape) return SPS_OK;
    release(P);
    P->op.n = P->op.m = n;
    P->op.t = t;
    const sps_status st = run_step(P, P->m->symbolic, op, A);
    if (st != SPS_OK) {
        release(P);
        return drop_host(P, st);
    }
    P->nsymbolic++;
    P->pattern.n = P->pattern.m = n;
    P->pattern.nnz = A ? A->nnz : -1;
    P->pattern.entry = A ? A->entry : sps_entry_scalar();
    P->state = SPS_PC_SYMBOLIC;
    return drop_host(P, run_numeric(P, op, A));
}

/* "16 x 16 with 64 stored entries (f64)" */
static void describe(char *buf, size_t len, sps_index n, sps_index m, int64_t nnz, sps_scalar t)
{
    if (nnz < 0)
        snprintf(buf, len, "%d x %d (%s)", (int)n, (int)m, sps_scalar_name(t));
    else
        snprintf(buf, len, "%d x %d with %" PRId64 " stored entries (%s)", (int)n, (int)m, nnz, sps_scalar_name(t));
}

sps_status sps_precond_update(sps_precond P, sps_operator op, sps_matrix A)
{
    static const char fn[] = "sps_precond_update";
    if (!P) return SPS_ERR_ARG;
    sps_index n = 0;
    sps_scalar t = SPS_F64;
    SPS_CHECK(check_system(P, fn, op, A, &n, &t));
    if (P->m->fixed_shape) return SPS_OK;
    if (P->state == SPS_PC_EMPTY)
        return sps_error(P->op.ctx, SPS_ERR_ARG, "%s: preconditioner %s is not set up: call sps_precond_setup first",
                         fn, P->m->name);
    /* the pattern the symbolic step was run for; nnz only where both steps saw a matrix */
    const int64_t nnz = A && P->pattern.nnz >= 0 ? A->nnz : P->pattern.nnz;
    /* the entry type too: 4 quaternions and 4 scalars fill the same 12 x 12... counts, not arrays */
    if (A && P->pattern.nnz >= 0 &&
        (A->entry.kind != P->pattern.entry.kind ||
         (A->entry.kind == SPS_ENTRY_BLOCK && A->entry.block != P->pattern.entry.block)))
        return sps_error(P->op.ctx, SPS_ERR_ARG,
                         "%s: preconditioner %s was set up for a matrix of %s entries, this one has %s entries: "
                         "call sps_precond_setup",
                         fn, P->m->name, sps_entry_name(P->pattern.entry), sps_entry_name(A->entry));
    if (n != P->pattern.n || t != P->op.t || nnz != P->pattern.nnz) {
        char was[96], now[96];
        describe(was, sizeof was, P->pattern.n, P->pattern.m, P->pattern.nnz, P->op.t);
        describe(now, sizeof now, n, n, nnz, t);
        return sps_error(P->op.ctx, SPS_ERR_ARG,
                         "%s: preconditioner %s was set up for a system %s, this one is %s: the pattern changed, "
                         "call sps_precond_setup",
                         fn, P->m->name, was, now);
    }
    return drop_host(P, run_numeric(P, op, A));
}

/* ---------------------------------------------------------------- creation */
sps_status sps_precond_new(sps_context ctx, const char *name, sps_precond *P)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!P || !name) return sps_error(ctx, SPS_ERR_ARG, "sps_precond_new: NULL %s", P ? "name" : "output");
    *P = NULL;
    const sps_precond_method *m = find_name(name);
    if (!m) return unknown_name(ctx, name);
    return sps_pc_alloc(ctx, m, m->flags, P);
}

/* new + setup(NULL, A); *out stays NULL on failure */
static sps_status create(sps_matrix A, const sps_precond_method *m, sps_precond *out)
{
    sps_precond P;
    SPS_CHECK(sps_pc_alloc(A->ctx, m, m->flags, &P));
    const sps_status st = sps_precond_setup(P, NULL, A);
    if (st != SPS_OK) {
        sps_precond_destroy(P);
        return st;
    }
    *out = P;
    return SPS_OK;
}

sps_status sps_precond_create(sps_matrix A, sps_precond_type type, sps_precond *P)
{
    if (!A) return SPS_ERR_ARG;
    if (!P) return sps_error(A->ctx, SPS_ERR_ARG, "sps_precond_create: NULL output");
    *P = NULL;
    for (int i = 0; i < NMETHODS; i++)
        if (methods[i]->type == type) return create(A, methods[i], P);
    return sps_error(A->ctx, SPS_ERR_ARG, "sps_precond_create: unknown preconditioner type %d (available: %s)",
                     (int)type, method_list);
}

sps_status sps_precond_create_by_name(sps_matrix A, const char *name, sps_precond *P)
{
    if (!A) return SPS_ERR_ARG;
    if (!P || !name)
        return sps_error(A->ctx, SPS_ERR_ARG, "sps_precond_create_by_name: NULL %s", P ? "name" : "output");
    *P = NULL;
    const sps_precond_method *m = find_name(name);
    return m ? create(A, m, P) : unknown_name(A->ctx, name);
}

/* ---------------------------------------------------------------- use */
sps_status sps_precond_apply(sps_precond P, sps_vector x, sps_vector y)
{
    if (!P) return SPS_ERR_ARG;
    sps_context ctx = P->op.ctx;
    if (!x || !y) return sps_error(ctx, SPS_ERR_ARG, "sps_precond_apply: NULL vector");
    if (P->state != SPS_PC_READY) return not_ready(P, "sps_precond_apply");
    if (x->ctx != ctx || y->ctx != ctx)
        return sps_error(ctx, SPS_ERR_ARG, "sps_precond_apply: vectors belong to another context");
    if (x->t != P->op.t || y->t != P->op.t)
        return sps_error(ctx, SPS_ERR_ARG, "sps_precond_apply: vector types %s/%s, preconditioner type %s",
                         sps_scalar_name(x->t), sps_scalar_name(y->t), sps_scalar_name(P->op.t));
    if (x->n != P->op.n || y->n != P->op.n)
        return sps_error(ctx, SPS_ERR_ARG,
                         "sps_precond_apply: preconditioner of size %d, x has %d entries, y has %d", (int)P->op.n,
                         (int)x->n, (int)y->n);
    return P->m->apply(P, SPS_OP_N, x, y);
}

sps_status sps_precond_operator(sps_precond P, sps_operator *op)
{
    if (!P) return SPS_ERR_ARG;
    if (!op) return sps_error(P->op.ctx, SPS_ERR_ARG, "sps_precond_operator: NULL output");
    *op = sps_pc_op(P);
    return SPS_OK;
}

unsigned sps_precond_flags(sps_precond P) { return P ? P->flags : 0u; }

int sps_precond_ready(sps_precond P) { return P && P->state == SPS_PC_READY; }

sps_status sps_pc_host_expanded(sps_precond P, sps_matrix A, const sps_csr_host **h)
{
    *h = NULL;
    if (!P->have_host) {
        sps_csr_host c;
        SPS_CHECK(sps_matrix_to_host(A, &c));
        if (A->entry.kind == SPS_ENTRY_SCALAR) {
            P->host = c;
        } else {
            const sps_status st = sps_csr_host_expand(A->ctx, &c, &P->host);
            sps_csr_host_free(&c);
            SPS_CHECK(st);
        }
        P->have_host = 1;
    }
    *h = &P->host;
    return SPS_OK;
}



const char *sps_precond_warning(sps_precond P) { return P ? P->warning : ""; }

const char *sps_precond_name(sps_precond P) { return P ? P->m->name : "?"; }

void sps_precond_destroy(sps_precond P)
{
    if (!P) return;
    release(P);
    sps_options_destroy(P->opts);
    sps_vector_destroy(P->op.tmp);
    free(P);
}

/* ---------------------------------------------------------------- none: M = I */
static sps_status none_apply(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y)
{
    (void)P;
    (void)mode; /* I^T = I */
    if (x == y) return SPS_OK;
    return sps_v_copy(x, y);
}

const sps_precond_method sps_precond_none_method = {
    .type = SPS_PRECOND_NONE, .name = "none",
    .flags = SPS_PRECOND_CAPTURABLE | SPS_PRECOND_SYMMETRIC | SPS_PRECOND_IDENTITY,
    .apply = none_apply,
};
