/* libspsolve — preconditioner internals shared by precond/ and solvers/.
 *
 * A preconditioner is M ~ A^{-1} applied as y = M x on backend vectors.  Each
 * method is one file that fills an sps_precond_method; precond.c holds the
 * registry (name -> method) and the public API. */
#ifndef SPS_PRECOND_IMPL_H
#define SPS_PRECOND_IMPL_H
#include "formats/format.h"

typedef struct sps_precond_method {
    sps_precond_type type;
    const char *name;
    /* Build P->data from the square matrix A (P->ctx, n, t are set).  Errors recorded in ctx. */
    sps_status (*setup)(sps_precond P, sps_matrix A);
    /* y = M x; x and y are checked by the caller and may be the same vector. */
    sps_status (*apply)(sps_precond P, sps_vector x, sps_vector y);
    void (*destroy)(sps_precond P);
    /* nonzero when M = I: solvers then skip the application (z aliases r) */
    int identity;
} sps_precond_method;

struct sps_precond_s {
    sps_context ctx;
    sps_index n;
    sps_scalar t;
    const sps_precond_method *m;
    void *data;                 /* method private (Jacobi: 1/diag(A) in backend memory) */
};

extern const sps_precond_method sps_precond_none_method;
extern const sps_precond_method sps_precond_jacobi_method;

/** y = M x without argument checks (solvers call it on their work vectors). */
static inline sps_status sps_pc_apply(sps_precond P, sps_vector x, sps_vector y) { return P->m->apply(P, x, y); }
/** Nonzero when P is absent or the identity. */
static inline int sps_pc_is_identity(sps_precond P) { return !P || P->m->identity; }
#endif
