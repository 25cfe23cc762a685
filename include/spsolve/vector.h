/* libspsolve — dense vectors living on the context's backend. */
#ifndef SPSOLVE_VECTOR_H
#define SPSOLVE_VECTOR_H
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

/** Create a vector of n entries of type t, zero-filled, in the context's
 *  backend memory (host on the CPU backend, device memory on CUDA). */
SPS_API sps_status sps_vector_create(sps_context ctx, sps_index n, sps_scalar t, sps_vector *v);
/** Create a vector and copy n values from host memory (type t, complex interleaved re,im). */
SPS_API sps_status sps_vector_from_host(sps_context ctx, sps_index n, sps_scalar t, const void *vals, sps_vector *v);
/** Destroy a vector.  NULL is ignored. */
SPS_API void sps_vector_destroy(sps_vector v);
/** Number of entries. */
SPS_API sps_index sps_vector_size(sps_vector v);
/** Scalar type. */
SPS_API sps_scalar sps_vector_scalar(sps_vector v);
/** The context the vector belongs to. */
SPS_API sps_context sps_vector_context(sps_vector v);
/** Backend pointer to the entries (host pointer on the CPU backend, device
 *  pointer on CUDA); for shell operators.  Valid until the vector is destroyed. */
SPS_API void *sps_vector_data(sps_vector v);
/** Copy all entries in from host memory (sps_scalar_size(t) * n bytes). */
SPS_API sps_status sps_vector_set(sps_vector v, const void *host_vals);
/** Copy all entries out to host memory. */
SPS_API sps_status sps_vector_get(sps_vector v, void *host_vals);
/** Set every entry to *value (one scalar of the vector's type). */
SPS_API sps_status sps_vector_fill(sps_vector v, const void *value);
/** y <- x (same size and type). */
SPS_API sps_status sps_vector_copy(sps_vector x, sps_vector y);
/** y <- alpha*x + beta*y; alpha and beta point at one scalar of the vectors' type. */
SPS_API sps_status sps_vector_axpby(const void *alpha, sps_vector x, const void *beta, sps_vector y);
/** x <- alpha*x. */
SPS_API sps_status sps_vector_scale(const void *alpha, sps_vector x);
/** *result <- x^H y (conjugated in x for complex types); result is one scalar of the vectors' type. */
SPS_API sps_status sps_vector_dot(sps_vector x, sps_vector y, void *result);
/** *result <- ||x||_2 (always a double). */
SPS_API sps_status sps_vector_nrm2(sps_vector x, double *result);

/** Read a vector from a Matrix Market file (array or coordinate, n x 1 or 1 x n).
 *  A complex file gives a complex vector of t's precision.  A quaternion
 *  file (array or coordinate, README "Quaternion extension") of n entries gives a
 *  real vector of 4n scalars of t's precision, w, x, y, z of each entry together:
 *  the vector a quaternion matrix acts on (a complex t is SPS_ERR_ARG). */
SPS_API sps_status sps_vector_read_mtx(sps_context ctx, const char *path, sps_scalar t, sps_vector *v);
/** sps_vector_read_mtx of a vector that must hold n scalars (a quaternion file: n / 4
 *  entries; n = 0: any length): a file of another length, or not n x 1 or 1 x n, is refused
 *  at its size line (file:line), before anything is allocated -- a right-hand side for a
 *  system of n rows. */
SPS_API sps_status sps_vector_read_mtx_n(sps_context ctx, const char *path, sps_scalar t, sps_index n, sps_vector *v);
/** What reading v from a file went on despite, "" when nothing (and for a vector not read
 *  from a file): bytes after the gzip data that start no gzip member, as
 *  sps_matrix_warning.  Valid while v is. */
SPS_API const char *sps_vector_warning(sps_vector v);
/** Write a vector as a Matrix Market array file, round-trip precision,
 *  through a temporary file renamed over path. */
SPS_API sps_status sps_vector_write_mtx(sps_vector v, const char *path);

#ifdef __cplusplus
}
#endif
#endif
