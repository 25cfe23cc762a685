/* libspsolve — format-agnostic linear operators.
 *
 * Solvers see only operators: y <- alpha*op(A)*x + beta*y.  An operator wraps a
 * matrix (any format) or user callbacks (a "shell"). */
#ifndef SPSOLVE_OPERATOR_H
#define SPSOLVE_OPERATOR_H
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

/** Shell callback: y <- A x (or A^T x).  x and y belong to the operator's context;
 *  use sps_vector_data() for their backend pointers.  Return SPS_OK or a status. */
typedef sps_status (*sps_apply_fn)(void *user, sps_vector x, sps_vector y);

/** Wrap a matrix.  The matrix must outlive the operator. */
SPS_API sps_status sps_operator_from_matrix(sps_matrix A, sps_operator *op);
/** A matrix-free operator of n rows and m columns.  apply_t may be NULL (then
 *  SPS_OP_T is SPS_ERR_UNSUPPORTED). */
SPS_API sps_status sps_operator_shell(sps_context ctx, sps_index n, sps_index m, sps_scalar t,
                                      sps_apply_fn apply, sps_apply_fn apply_t, void *user, sps_operator *op);
/** y <- alpha*op(A)*x + beta*y.  alpha, beta point at one scalar of the operator's
 *  type (NULL means 1 for alpha and 0 for beta).  With beta = 0, y is not read
 *  (NaN in y does not propagate). */
SPS_API sps_status sps_operator_apply(sps_operator op, sps_op_mode mode, const void *alpha, sps_vector x,
                                      const void *beta, sps_vector y);
/** Rows and columns. */
SPS_API sps_status sps_operator_size(sps_operator op, sps_index *n, sps_index *m);
/** Scalar type. */
SPS_API sps_scalar sps_operator_scalar(sps_operator op);
/** Destroy.  NULL is ignored. */
SPS_API void sps_operator_destroy(sps_operator op);

#ifdef __cplusplus
}
#endif
#endif
