/* Preconditioners: the registry (name -> method) and the public API of
 * include/spsolve/precond.h.  Adding one is a new file filling an
 * sps_precond_method plus one entry in SPS_PRECONDS. */
#include "precond/precond_impl.h"

#include <stdlib.h>
#include <string.h>

/* The one table: X(name) per method, in display order; SEP between entries. */
#define SPS_PRECONDS(X, SEP) X(none) SEP X(jacobi)
#define SPS_PC_ENTRY_(n) &sps_precond_##n##_method
#define SPS_PC_NAME_(n) #n
#define SPS_PC_COMMA_ ,
#define SPS_PC_LISTSEP_ ", "

static const sps_precond_method *const methods[] = {SPS_PRECONDS(SPS_PC_ENTRY_, SPS_PC_COMMA_)};
static const char method_list[] = SPS_PRECONDS(SPS_PC_NAME_, SPS_PC_LISTSEP_);
#define NMETHODS ((int)(sizeof methods / sizeof methods[0]))

const char *sps_precond_list(void) { return method_list; }

static sps_status create(sps_matrix A, const sps_precond_method *m, sps_precond *out)
{
    sps_context ctx = A->ctx;
    if (A->n != A->m)
        return sps_error(ctx, SPS_ERR_ARG, "preconditioner %s: the matrix is %d x %d, not square", m->name, (int)A->n,
                         (int)A->m);
    sps_precond P;
    SPS_CHECK(sps_hcalloc(ctx, (void **)&P, sizeof *P, "a preconditioner handle"));
    P->ctx = ctx;
    P->n = A->n;
    P->t = A->t;
    P->m = m;
    sps_status st = m->setup ? m->setup(P, A) : SPS_OK;
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
    for (int i = 0; i < NMETHODS; i++)
        if (strcmp(methods[i]->name, name) == 0) return create(A, methods[i], P);
    return sps_error(A->ctx, SPS_ERR_ARG, "unknown preconditioner \"%s\" (available: %s)", name, method_list);
}

sps_status sps_precond_apply(sps_precond P, sps_vector x, sps_vector y)
{
    if (!P) return SPS_ERR_ARG;
    if (!x || !y) return sps_error(P->ctx, SPS_ERR_ARG, "sps_precond_apply: NULL vector");
    if (x->ctx != P->ctx || y->ctx != P->ctx)
        return sps_error(P->ctx, SPS_ERR_ARG, "sps_precond_apply: vectors belong to another context");
    if (x->t != P->t || y->t != P->t)
        return sps_error(P->ctx, SPS_ERR_ARG, "sps_precond_apply: vector types %s/%s, preconditioner type %s",
                         sps_scalar_name(x->t), sps_scalar_name(y->t), sps_scalar_name(P->t));
    if (x->n != P->n || y->n != P->n)
        return sps_error(P->ctx, SPS_ERR_ARG,
                         "sps_precond_apply: preconditioner of size %d, x has %d entries, y has %d", (int)P->n,
                         (int)x->n, (int)y->n);
    return sps_pc_apply(P, x, y);
}

const char *sps_precond_name(sps_precond P) { return P ? P->m->name : "?"; }

void sps_precond_destroy(sps_precond P)
{
    if (!P) return;
    if (P->m->destroy) P->m->destroy(P);
    free(P);
}

/* ---------------------------------------------------------------- none: M = I */
static sps_status none_apply(sps_precond P, sps_vector x, sps_vector y)
{
    if (x == y) return SPS_OK;
    return sps_kvec(P->ctx, P->t)->copy(sps_ex(P->ctx), P->n, x->data, y->data);
}

const sps_precond_method sps_precond_none_method = {SPS_PRECOND_NONE, "none", NULL, none_apply, NULL, 1};
