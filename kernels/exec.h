/* libspsolve — what a kernel gets from its caller: the execution struct.
 *
 * kernels/ is the bottom layer: it includes nothing from core/, formats/ or
 * solvers/.  Every kernel and every backend operation takes an sps_exec: the
 * backend table (memory, copies, kernel tables: kernels/backend.h), the
 * backend's private state (the CUDA stream, the preallocated workspace, the
 * memory pool, pinned staging), and an error sink.  core/'s context embeds one
 * and hands its address down (sps_ex(ctx)); a distributed or multi-stream
 * build can hand kernels another one without a context.
 *
 * Errors: a kernel that fails records "what" through the sink with its source
 * location (sps_kerror) and returns the status; the context stores it where
 * sps_context_error() finds it.  Nothing here prints, exits or aborts. */
#ifndef SPS_KERNELS_EXEC_H
#define SPS_KERNELS_EXEC_H

#include "spsolve/types.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct sps_backend_ops;

/** Where a failure goes: msg is formatted, file:line is the code that failed. */
typedef sps_status (*sps_error_sink_fn)(void *sink, sps_status st, const char *file, int line, const char *msg);

typedef struct sps_exec {
    const struct sps_backend_ops *be; /* this backend's operations and kernel tables */
    void *be_state;                   /* backend private (CUDA: sps_cuda_state, kernels/cuda/common.cuh) */
    void *stream;                     /* CUDA: the cudaStream_t all work is queued on; NULL on the CPU */
    int device;                       /* the device the backend was started on */
    sps_error_sink_fn error;          /* NULL: failures are returned but not described */
    void *sink;                       /* first argument of error (core: the context) */
    /* The launch variant of the product being run (kernels/launch.h; NULL or zero:
     * the defaults): set by formats/operator.c around a matrix's product. */
    const struct sps_launch_variant *lv;
    char device_name[256];
    /* What else tells two devices or software stacks apart, for keys of tuned
     * results (formats/tune_cache.c): CPU "cpu openmp-YYYYMM threads N", CUDA the
     * driver and runtime versions and the compute capability. */
    char device_version[128];
} sps_exec;

/** Record a failure through ex's sink (message formatted like printf) and return st. */
sps_status sps_exec_error_at(sps_exec *ex, sps_status st, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define sps_kerror(ex, st, ...) sps_exec_error_at((ex), (st), __FILE__, __LINE__, __VA_ARGS__)

/** Propagate a failure: return it from the enclosing function. */
#define SPS_CHECK(expr)                         \
    do {                                        \
        sps_status sps_check_st_ = (expr);      \
        if (sps_check_st_ != SPS_OK) return sps_check_st_; \
    } while (0)
/** Propagate a failure by jumping to a cleanup label with `st` set. */
#define SPS_CHECK_GOTO(st, expr, label)         \
    do {                                        \
        (st) = (expr);                          \
        if ((st) != SPS_OK) goto label;         \
    } while (0)

#ifdef __cplusplus
}
#endif
#endif
