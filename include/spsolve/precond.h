/* libspsolve — preconditioners.
 *
 * A preconditioner M ~ A^{-1} is an operator: sps_precond_operator gives a view
 * of it that works wherever an sps_operator does (sps_operator_apply, a solver's
 * operator, inside a shell operator's callback).  Its setup has two steps: the
 * symbolic one (everything that depends only on the sparsity pattern: sizes,
 * allocations) and the numeric one (the values).  sps_precond_setup runs both;
 * sps_precond_update runs only the numeric one, for new values on the same
 * pattern (time stepping, Newton iterations).
 *
 *     sps_precond P;
 *     sps_precond_new(ctx, "jacobi", &P);
 *     sps_precond_setup(P, op, A);       // symbolic + numeric
 *     ...                                // new values in A2, same pattern
 *     sps_precond_update(P, NULL, A2);   // numeric only
 *
 * sps_precond_create(A, type, &P) is sps_precond_new + sps_precond_setup(P, NULL, A). */
#ifndef SPSOLVE_PRECOND_H
#define SPSOLVE_PRECOND_H
#include "spsolve/operator.h"
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    SPS_PRECOND_NONE = 0,
    SPS_PRECOND_JACOBI = 1,
    SPS_PRECOND_SHELL = 2, /* made by sps_precond_create_shell only */
    SPS_PRECOND_BJACOBI = 3,
    SPS_PRECOND_ILU0 = 4,
    SPS_PRECOND_IC0 = 5,
    SPS_PRECOND_CHEBY = 6
} sps_precond_type;

/** Properties of a preconditioner (sps_precond_flags; given to sps_precond_create_shell). */
enum {
    /** Its apply only queues work on the context's backend (no host synchronisation,
     *  no allocation, no host access to vector data), so a solver may record it in a
     *  CUDA graph.  Solvers capture their iterations only when the operator and the
     *  preconditioner both are. */
    SPS_PRECOND_CAPTURABLE = 1u << 0,
    /** M is symmetric positive definite (Hermitian positive definite for complex
     *  types) whenever A is.  CG accepts only preconditioners that are. */
    SPS_PRECOND_SYMMETRIC = 1u << 1,
    /** M = I ("none"): solvers skip applying it. */
    SPS_PRECOND_IDENTITY = 1u << 2,
    /** M is a diagonal matrix (Jacobi): CG then takes its step and z = M r, r^H z in
     *  one pass over the vectors. */
    SPS_PRECOND_DIAGONAL = 1u << 3
};

/** Nonzero when P is set up (sps_precond_setup, or the last sps_precond_update,
 *  succeeded) and can be applied. */
SPS_API int sps_precond_ready(sps_precond P);
/** A preconditioner of the method `name` ("none", "jacobi"; an unknown name lists the
 *  available ones), not set up yet: give it to sps_precond_setup. */
SPS_API sps_status sps_precond_new(sps_context ctx, const char *name, sps_precond *P);
/** Set P up for the square system of operator op, reading the matrix A where the
 *  method needs its entries (Jacobi does; none needs only the operator).  One of op
 *  and A may be NULL: the operator is then the one of A, or the method reads no
 *  entries.  When both are given they must agree in size and type; A need not be
 *  the matrix of op (it may be an approximation to precondition with).  Neither,
 *  or only an operator for a method that reads entries, is SPS_ERR_ARG.
 *  Runs the symbolic and the numeric step; may be called again to start over on
 *  another system.  Jacobi: M = diag(A)^{-1}; a zero diagonal entry is taken as 1,
 *  as PETSc's Jacobi does, with a warning (sps_precond_warning) giving their count
 *  and the first (1-based) row, or, with the option jacobi-zero-diagonal = error,
 *  is SPS_ERR_NUMERIC naming the row; a non-finite one is SPS_ERR_NUMERIC naming the row.  op and A are read here only: they
 *  need not outlive P.  A failed setup leaves P destroyable and ready for another
 *  setup (after a failed numeric step, sps_precond_update too). */
SPS_API sps_status sps_precond_setup(sps_precond P, sps_operator op, sps_matrix A);
/** New values, same pattern: re-run only the numeric step (Jacobi: read and invert
 *  the diagonal again into the buffer setup allocated).  Arguments as for
 *  sps_precond_setup; P must have been set up.  A matrix of other rows, columns,
 *  number of stored entries or scalar type than the one of the last setup is
 *  SPS_ERR_ARG, and P keeps its M.  Not detected: entries moved to other positions
 *  with the same counts; the method then reads the new values through the old
 *  pattern (harmless for Jacobi, which reads only the diagonal): call
 *  sps_precond_setup when the pattern may have changed. */
SPS_API sps_status sps_precond_update(sps_precond P, sps_operator op, sps_matrix A);
/** sps_precond_new + sps_precond_setup(P, NULL, A) by type.  On failure *P is NULL. */
SPS_API sps_status sps_precond_create(sps_matrix A, sps_precond_type type, sps_precond *P);
/** The same by name ("none", "jacobi"); an unknown name lists the available ones. */
SPS_API sps_status sps_precond_create_by_name(sps_matrix A, const char *name, sps_precond *P);
/** A preconditioner of n rows of type t whose M x is the callback apply(user, x, y):
 *  y <- M x (x and y are different vectors of the context; sps_vector_data gives
 *  their backend memory).  flags: SPS_PRECOND_* the callback guarantees, 0 for none
 *  (then it is not captured in a CUDA graph, and CG refuses it).  A status other
 *  than SPS_OK from the callback ends the solve with that status; the callback's
 *  own message is kept when a library call inside it failed.  Ready at once:
 *  sps_precond_setup and sps_precond_update only check the sizes they get.  No
 *  transpose (SPS_OP_T is SPS_ERR_UNSUPPORTED). */
SPS_API sps_status sps_precond_create_shell(sps_context ctx, sps_index n, sps_scalar t, sps_apply_fn apply,
                                            unsigned flags, void *user, sps_precond *P);
/** *op = P as an operator: apply is y <- alpha M x + beta y (SPS_OP_T: M^T, where the
 *  method has it; Jacobi's M^T = M).  The view is borrowed: it lives as long as P,
 *  follows its setups, and sps_operator_destroy ignores it. */
SPS_API sps_status sps_precond_operator(sps_precond P, sps_operator *op);
/** SPS_PRECOND_* of P; 0 for NULL.  none: CAPTURABLE | SYMMETRIC | IDENTITY; jacobi: CAPTURABLE |
 *  SYMMETRIC | DIAGONAL; ic0 and cheby: CAPTURABLE | SYMMETRIC; ilu0: CAPTURABLE; bjacobi:
 *  SYMMETRIC; a shell: the flags its creator gave. */
SPS_API unsigned sps_precond_flags(sps_precond P);
/** y <- M x; x may be y (in place). */
SPS_API sps_status sps_precond_apply(sps_precond P, sps_vector x, sps_vector y);
/** What the last setup or update of P went on despite ("" when nothing, or P NULL):
 *  "Jacobi: 3 zero diagonal entries taken as 1 (the first in row 17)".  The library
 *  never prints it; a caller may. */
SPS_API const char *sps_precond_warning(sps_precond P);
/** Name of the preconditioner ("jacobi", "shell"). */
SPS_API const char *sps_precond_name(sps_precond P);
/** Comma-separated names of the preconditioners sps_precond_new knows. */
SPS_API const char *sps_precond_list(void);
/** Destroy.  NULL is ignored. */
SPS_API void sps_precond_destroy(sps_precond P);

/** Set an option of P's method by name (spsolve/options.h; the declarations:
 *  sps_precond_options_desc).  Unknown name, bad value or out of range:
 *  SPS_ERR_ARG naming it.  jacobi declares jacobi-zero-diagonal; bjacobi pc-block-size;
 *  ilu0 and ic0 trisolve and pc-shift; cheby cheby-degree, cheby-ratio and cheby-lanczos;
 *  none and shell declare none. */
SPS_API sps_status sps_precond_set_option(sps_precond P, const char *name, const char *value);

#ifdef __cplusplus
}
#endif
#endif
