/* libspsolve — CUDA interoperability.  Include after spsolve.h in code that
 * mixes its own CUDA work with the library's. */
#ifndef SPSOLVE_CUDA_H
#define SPSOLVE_CUDA_H
#include "spsolve/types.h"
#ifdef __cplusplus
extern "C" {
#endif

/** The cudaStream_t (as void*) on which the context queues all its work, so
 *  callers can order their kernels and events with the library's; NULL on the
 *  CPU backend.  The stream belongs to the context. */
SPS_API void *sps_context_cuda_stream(sps_context ctx);

#ifdef __cplusplus
}
#endif
#endif
