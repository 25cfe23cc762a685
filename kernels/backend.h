/* libspsolve — a backend: memory, copies, synchronisation and its kernel tables.
 *
 * Declared here, beside the kernels, and implemented by kernels/cpu/backend.c
 * and kernels/cuda/backend.cu.  Every operation takes the execution struct
 * (kernels/exec.h); core/'s context holds one per context. */
#ifndef SPS_KERNELS_BACKEND_H
#define SPS_KERNELS_BACKEND_H

#include "kernels/exec.h"
#include "kernels/kernels.h"
#include "kernels/compound_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { SPS_COPY_H2D, SPS_COPY_D2H, SPS_COPY_D2D, SPS_COPY_H2H } sps_copy_kind;

/** What a backend provides besides its kernels: memory and synchronisation.
 *  Memory returned by alloc belongs to the backend (device memory on CUDA). */
typedef struct sps_backend_ops {
    const char *name;
    sps_status (*init)(sps_exec *ex, int device);   /* fills ex->be_state, ex->stream, ex->device_name */
    void (*fini)(sps_exec *ex);
    sps_status (*alloc)(sps_exec *ex, void **p, size_t bytes);  /* SPS_ERR_ALLOC naming bytes */
    /* Stream-ordered: p may still be read by work queued before the call; the
     * memory is reused only after that work (callers need no synchronisation). */
    void (*release)(sps_exec *ex, void *p);
    sps_status (*copy)(sps_exec *ex, void *dst, const void *src, size_t bytes, sps_copy_kind kind);
    sps_status (*zero)(sps_exec *ex, void *p, size_t bytes);
    sps_status (*synchronize)(sps_exec *ex);
    const sps_vec_kernels *vec;                         /* the vector family, indexed by sps_scalar */
    const sps_mat_kernels *mat;                         /* the matrix family of scalar entries, by sps_scalar */
    const sps_idx_kernels *idx;                         /* the index family */
    /* The compound family (kernels/compound_kernels.h): SPS_CMP_SLOTS * SPS_NUM_SCALARS
     * tables by sps_cmp_slot(e) and scalar, NULL where absent; NULL: none (CUDA, for now). */
    const sps_cmp_kernels *const *cmp;
    /* Optional (NULL where the backend's copies are synchronous anyway, the CPU):
     * fetch_begin queues a copy of `bytes` (<= SPS_FETCH_MAX_BYTES) of backend memory
     * into the backend's pinned staging after the work queued so far and returns at
     * once; fetch_wait waits for it and copies the staging to dst.  One fetch is
     * outstanding at a time.  This is how a solver learns its residual while the
     * next iteration is already queued. */
    sps_status (*fetch_begin)(sps_exec *ex, const void *src, size_t bytes);
    sps_status (*fetch_wait)(sps_exec *ex, void *dst, size_t bytes);
    /* Optional: record the work queued between capture_begin and capture_end as a
     * replayable graph (CUDA graphs) instead of running it; graph_launch queues one
     * replay.  Nothing may synchronise while capturing. */
    sps_status (*capture_begin)(sps_exec *ex);
    sps_status (*capture_end)(sps_exec *ex, void **graph);
    sps_status (*graph_launch)(sps_exec *ex, void *graph);
    void (*graph_destroy)(sps_exec *ex, void *graph);
    /* Optional: arm the fetch of `bytes` at src into staging buffer buf (0 or 1)
     * for the work queued next: reductions that end an iteration then write the
     * staging themselves, and fetch_begin of the same range costs no launch.  A
     * solver arms each iteration before queueing it (alternating buffers, so the
     * next one can run while the host reads this one's) and disarms (src NULL)
     * when it stops: src must stay valid while armed. */
    sps_status (*fetch_arm)(sps_exec *ex, const void *src, size_t bytes, int buf);
    /* Optional (NULL on the CPU, whose timings are wall-clock): `reps` times, flush the
     * device's last-level cache, then time the work run(arg) queues between two events;
     * the median in milliseconds into *ms.  The autotuner's timing (formats/tune.c),
     * done as spbench does it so that the two rank candidates alike. */
    sps_status (*time_queued)(sps_exec *ex, sps_status (*run)(void *arg), void *arg, int reps, double *ms);
} sps_backend_ops;
#define SPS_FETCH_MAX_BYTES 4096
/* The kernel families of backend P (sps_cpu, sps_cuda), in its sps_backend_ops. */
#define SPS_BACKEND_FAMILIES(P) .vec = P##_vec_kernels, .mat = P##_mat_kernels, .idx = &P##_idx_kernels

extern const sps_backend_ops sps_cpu_backend;
#ifdef SPS_HAVE_CUDA
extern const sps_backend_ops sps_cuda_backend;
int sps_cuda_device_count(void);
/** Usable CUDA devices, and why none when 0 (the runtime's message) into why. */
int sps_cuda_device_probe(char *why, size_t len);
#endif

/** Backend memory for a kernel's temporaries (the backend's allocator: on CUDA the
 *  context's stream-ordered pool); 0 bytes gives a valid, distinct pointer. */
static inline sps_status sps_exec_alloc(sps_exec *ex, void **p, size_t bytes)
{
    *p = NULL;
    return ex->be->alloc(ex, p, bytes ? bytes : 1);
}
static inline void sps_exec_release(sps_exec *ex, void *p)
{
    if (p) ex->be->release(ex, p);
}

/** The matrix family of entry type e and scalar t on backend be: scalar entries only
 *  (NULL for the others, whose kernels are the compound family below). */
static inline const sps_mat_kernels *sps_mat_kernels_for(const sps_backend_ops *be, sps_entry_desc e, sps_scalar t)
{
    if ((unsigned)t >= SPS_NUM_SCALARS) return NULL;
    return e.kind == SPS_ENTRY_SCALAR ? &be->mat[t] : NULL;
}

/** The compound family of entry type e (a block or the quaternion) and scalar t on
 *  backend be: NULL where be has no kernels for them (scalar entries, complex
 *  quaternions, and every compound entry on a backend without the family). */
static inline const sps_cmp_kernels *sps_cmp_kernels_for(const sps_backend_ops *be, sps_entry_desc e, sps_scalar t)
{
    const int slot = sps_cmp_slot(e);
    if ((unsigned)t >= SPS_NUM_SCALARS || slot < 0 || !be->cmp) return NULL;
    return be->cmp[slot * SPS_NUM_SCALARS + (int)t];
}

#ifdef __cplusplus
}
#endif
#endif
