/* libspsolve — basic types shared by every public header.
 *
 * Every function of the library returns an sps_status; on failure the context
 * keeps a message saying what failed and where (sps_context_error()).  Nothing
 * in the library prints, exits or aborts. */
#ifndef SPSOLVE_TYPES_H
#define SPSOLVE_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(SPSOLVE_SHARED_BUILD)
#define SPS_API __declspec(dllexport)
#elif defined(__GNUC__)
#define SPS_API __attribute__((visibility("default")))
#else
#define SPS_API
#endif

/** Status of every call.  SPS_OK is 0; everything else is a failure whose
 *  text is in sps_context_error(). */
typedef enum {
    SPS_OK = 0,
    SPS_ERR_ARG,           /**< invalid argument (NULL, size mismatch, bad option) */
    SPS_ERR_IO,            /**< file cannot be opened, read, written or renamed */
    SPS_ERR_PARSE,         /**< malformed input file; message is "file:line: what" */
    SPS_ERR_ALLOC,         /**< out of host or device memory; message names the bytes */
    SPS_ERR_DEVICE,        /**< CUDA failure, or no device */
    SPS_ERR_UNSUPPORTED,   /**< operation not provided by this format/backend/type */
    SPS_ERR_NOT_CONVERGED, /**< solver reached maxit */
    SPS_ERR_BREAKDOWN,     /**< solver breakdown (e.g. CG p'Ap <= 0, BiCGSTAB rho = 0) */
    SPS_ERR_NUMERIC        /**< NaN/Inf in data or iterates, zero pivot, ... */
} sps_status;

/** The field a matrix, vector or solve works in. */
typedef enum { SPS_F32 = 0, SPS_F64 = 1, SPS_C32 = 2, SPS_C64 = 3 } sps_scalar;
#define SPS_NUM_SCALARS 4

/** Kind of matrix entry (compound entries: the formats bcsr, bell, bsell). */
typedef enum { SPS_ENTRY_SCALAR = 0, SPS_ENTRY_QUATERNION, SPS_ENTRY_BLOCK } sps_entry;

/** The entry type of a matrix: a scalar, a dense b x b block (b = 2..8), or a
 *  quaternion w + xi + yj + zk (Hamilton product, the entry on the left).  A matrix
 *  of n x m entries acts on vectors of m * sps_entry_dim(e) scalars and is stored
 *  with sps_entry_values(e) scalars per entry (blocks row-major, quaternions
 *  w, x, y, z).  sps_entry_scalar() is the plain case. */
typedef struct {
    sps_entry kind;
    int block;             /**< b for SPS_ENTRY_BLOCK; ignored for the others (a zeroed descriptor is the scalar one) */
} sps_entry_desc;

/** Where data lives and kernels run. AUTO picks CUDA when a GPU is usable. */
typedef enum { SPS_BACKEND_CPU = 0, SPS_BACKEND_CUDA = 1, SPS_BACKEND_AUTO = 2 } sps_backend;

/** Storage formats.  Not every one is available in every build: see
 *  sps_format_by_name() / sps_format_list(). */
typedef enum {
    SPS_FMT_CSR = 0, SPS_FMT_COO, SPS_FMT_ELL, SPS_FMT_SELL, SPS_FMT_RGCSR, SPS_FMT_HYB,
    SPS_FMT_JDS, SPS_FMT_DIA, SPS_FMT_BCSR, SPS_FMT_HOLA, SPS_FMT_HISPARSE,
    SPS_FMT_BELL,  /**< ELLPACK-R of block or quaternion entries */
    SPS_FMT_BSELL, /**< sliced ELLPACK (slices of 16 or 32 rows) of block or quaternion entries */
    SPS_FMT_AUTO,  /**< picked from the matrix (sps_matrix_auto_format); always the last */
    SPS_FMT_BSR = SPS_FMT_BCSR /**< the former name of bcsr (CSR of block or quaternion entries) */
} sps_format;
#define SPS_NUM_FORMATS 14

/** Operator application mode: y = a*op(A)*x + b*y with op(A) = A or A^T.
 *  (SPS_OP_T is the plain transpose, not the conjugate transpose.  For a matrix of
 *  compound entries it is the transpose of the scalar expansion: each block
 *  transposed at (j,i); for quaternions, whose expansion of q is L(q) with
 *  L(q)^T = L(conj q), the quaternionic conjugate transpose.) */
typedef enum { SPS_OP_N = 0, SPS_OP_T = 1 } sps_op_mode;

/** Row/column indices are 32-bit; larger problems are refused with SPS_ERR_ARG. */
typedef int32_t sps_index;

typedef struct sps_context_s  *sps_context;
typedef struct sps_matrix_s   *sps_matrix;
typedef struct sps_vector_s   *sps_vector;
typedef struct sps_operator_s *sps_operator;
typedef struct sps_solver_s   *sps_solver;
typedef struct sps_precond_s  *sps_precond;

/** Short name of a status, e.g. "SPS_ERR_PARSE". Never NULL. */
SPS_API const char *sps_status_name(sps_status s);
/** Name of a scalar type: "f32", "f64", "c32", "c64". */
SPS_API const char *sps_scalar_name(sps_scalar s);
/** Parse "f32"/"f64"/"c32"/"c64"; SPS_ERR_ARG otherwise. */
SPS_API sps_status sps_scalar_from_name(const char *name, sps_scalar *out);
/** Size in bytes of one scalar of type s (4, 8, 8, 16). */
SPS_API size_t sps_scalar_size(sps_scalar s);
/** Nonzero for c32/c64. */
SPS_API int sps_scalar_is_complex(sps_scalar s);
/** The scalar entry type {SPS_ENTRY_SCALAR, 1}. */
SPS_API sps_entry_desc sps_entry_scalar(void);
/** A b x b block entry type (any b; sps_entry_valid says whether it is one the library takes). */
SPS_API sps_entry_desc sps_entry_block(int b);
/** The quaternion entry type {SPS_ENTRY_QUATERNION, 4}. */
SPS_API sps_entry_desc sps_entry_quaternion(void);
/** Nonzero for the scalar entry, blocks of b = 2..8 and the quaternion. */
SPS_API int sps_entry_valid(sps_entry_desc e);
/** Scalars of a vector per matrix row or column: 1, b, 4 (0 when not valid). */
SPS_API int sps_entry_dim(sps_entry_desc e);
/** Scalars stored per entry: 1, b*b, 4 (0 when not valid). */
SPS_API int sps_entry_values(sps_entry_desc e);
/** "scalar", "block3x3", "quaternion", or "?". */
SPS_API const char *sps_entry_name(sps_entry_desc e);

/** Library version string, e.g. "0.1.0". */
SPS_API const char *sps_version(void);

#ifdef __cplusplus
}
#endif
#endif
