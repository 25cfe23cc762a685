/* libspsolve — preconditioners.  Each is an operator M ~ A^{-1} with a setup step. */
#ifndef SPSOLVE_PRECOND_H
#define SPSOLVE_PRECOND_H
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SPS_PRECOND_NONE = 0, SPS_PRECOND_JACOBI = 1 } sps_precond_type;

/** Build preconditioner `type` for the square matrix A (setup happens here).
 *  Jacobi: M = diag(A)^{-1}; a zero or non-finite diagonal entry is SPS_ERR_NUMERIC
 *  naming the (1-based) row.  NONE gives the identity. */
SPS_API sps_status sps_precond_create(sps_matrix A, sps_precond_type type, sps_precond *P);
/** The same by name ("none", "jacobi"); an unknown name lists the available ones. */
SPS_API sps_status sps_precond_create_by_name(sps_matrix A, const char *name, sps_precond *P);
/** y <- M x. */
SPS_API sps_status sps_precond_apply(sps_precond P, sps_vector x, sps_vector y);
/** Name of the preconditioner ("jacobi"). */
SPS_API const char *sps_precond_name(sps_precond P);
/** Comma-separated names of the available preconditioners. */
SPS_API const char *sps_precond_list(void);
/** Destroy.  NULL is ignored. */
SPS_API void sps_precond_destroy(sps_precond P);

#ifdef __cplusplus
}
#endif
#endif
