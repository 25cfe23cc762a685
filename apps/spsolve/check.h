/* spsolve CLI: the independent check of a solve, on the host in extended
 * precision, from the matrix exported as CSR (public API only).  An f32 solve
 * is thus judged by an f64-or-better residual, not by its own arithmetic. */
#ifndef SPSOLVE_CLI_CHECK_H
#define SPSOLVE_CLI_CHECK_H

#include "spsolve/spsolve.h"

/* A host copy of a matrix in CSR, values of type t (complex interleaved). */
typedef struct {
    sps_index rows, cols;
    int64_t nnz;
    sps_scalar t;
    sps_index *rowptr, *col;
    void *val;
    sps_index max_row_nnz;
} cli_csr;

/** Export A (any format, any backend) to host CSR; a block or quaternion matrix as
 *  its scalar expansion (rows * dim scalar rows, the operator the solver sees).  On
 *  failure the context holds the message (SPS_ERR_ALLOC, or SPS_ERR_ARG for an
 *  expansion beyond 32-bit indices, set here without one). */
sps_status cli_csr_export(sps_matrix A, cli_csr *h);
void cli_csr_free(cli_csr *h);

/** b <- A*1, summed in long double and rounded once to A's type; b holds rows
 *  scalars. */
void cli_csr_times_ones(const cli_csr *A, void *b);

/** ||b - A x||_2 and ||b||_2 in long double (inf: the max norms, as the solver's option
 *  norm = inf; scale then max_i (|b| + |A||x|)_i); x and b are host arrays of A's
 *  type.  scale = || |b| + |A||x| ||_2, the size of what a residual computed in
 *  floating point rounds (Higham, Accuracy and Stability, 2nd ed., sec. 3.5):
 *  in unit roundoff u a computed residual is off by at most about
 *  (max_row_nnz + 1) * u * scale. */
void cli_residual(const cli_csr *A, const void *x, const void *b, int inf, double *rnorm, double *bnorm,
                  double *scale);

/** Nonzero when every stored value of A has a zero imaginary part (always for
 *  real types): a symmetric matrix is then also hermitian. */
int cli_csr_is_real(const cli_csr *A);

/** ||x - 1||_2 / ||1||_2 for n scalars of type t. */
double cli_error_vs_ones(sps_scalar t, sps_index n, const void *x);

#endif
