/* libspsolve — context: backend, device, error message.
 *
 * A context owns the backend (CPU or one CUDA device with its stream and
 * workspace) and the text of the last error.  Every matrix, vector, operator,
 * solver and preconditioner belongs to exactly one context.  Contexts are
 * independent: use one per thread.
 *
 * Device memory of a CUDA context comes from a stream-ordered memory pool of its
 * own: memory freed by destroying a matrix or vector stays with the context for
 * its next allocations (no cudaMalloc / cudaFree on the hot path) until the
 * context is destroyed; an allocation the pool cannot satisfy first returns the
 * cached memory to the device and retries.  Device pointers the library hands
 * out are valid on other streams once sps_context_synchronize has returned.
 * The environment variable SPSOLVE_CUDA_POOL=0 selects plain cudaMalloc /
 * cudaFree instead. */
#ifndef SPSOLVE_CONTEXT_H
#define SPSOLVE_CONTEXT_H
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

/** Create a context.  be = SPS_BACKEND_AUTO chooses CUDA when the library was
 *  built with CUDA and a device is usable, else the CPU.  device is the CUDA
 *  device ordinal (ignored on the CPU).  Errors: SPS_ERR_ARG (ctx NULL),
 *  SPS_ERR_DEVICE (CUDA requested but unavailable; *ctx is still created so the
 *  message can be read with sps_context_error, and must be destroyed),
 *  SPS_ERR_ALLOC. */
SPS_API sps_status sps_context_create(sps_context *ctx, sps_backend be, int device);
/** Destroy a context.  Objects created in it must be destroyed first.  NULL is ignored. */
SPS_API void sps_context_destroy(sps_context ctx);
/** Text of the last failure in this context: what failed and where, e.g.
 *  "A.mtx:17: column index 0 out of range 1..5".  Empty string when none; never NULL. */
SPS_API const char *sps_context_error(sps_context ctx);
/** Status of the last failure recorded in this context (SPS_OK if none). */
SPS_API sps_status sps_context_last_status(sps_context ctx);
/** Forget the last error. */
SPS_API void sps_context_clear_error(sps_context ctx);
/** The backend actually in use (never SPS_BACKEND_AUTO). */
SPS_API sps_backend sps_context_backend(sps_context ctx);
/** Human-readable name of the device ("CPU (OpenMP, 2 threads)", "NVIDIA H100 80GB HBM3"). */
SPS_API const char *sps_context_device_name(sps_context ctx);
/** Block until all work queued in the context has finished. */
SPS_API sps_status sps_context_synchronize(sps_context ctx);
/** Nonzero when this build of the library contains the CUDA backend. */
SPS_API int sps_cuda_compiled(void);
/** Nonzero when the CUDA backend is compiled in and at least one device is usable. */
SPS_API int sps_cuda_available(void);
/** Why SPS_BACKEND_AUTO would take the CPU: "" when a CUDA device is usable, else "this
 *  libspsolve was built without CUDA" or "no usable CUDA device: <the runtime's reason>".
 *  A static string, valid until the next call. */
SPS_API const char *sps_cuda_unavailable_reason(void);
/** Name of a backend: "cpu", "cuda", "auto". */
SPS_API const char *sps_backend_name(sps_backend be);
/** Parse "cpu" / "cuda" / "auto". */
SPS_API sps_status sps_backend_from_name(const char *name, sps_backend *out);

#ifdef __cplusplus
}
#endif
#endif
