/* Helpers of the GPU tests (test_gpu_*.c): a CPU and a CUDA context, buffers
 * that exist both on the host and on the device, comparisons of a device result
 * with the CPU reference.
 *
 * Every GPU test starts with gpu_setup(): exit code 77 (CTest: skipped) when the
 * library has no CUDA backend or no device is usable.  SPS_GPU_TEST_SMALL=1 in
 * the environment caps the sizes (for compute-sanitizer runs). */
#ifndef SPS_TEST_GPU_UTIL_H
#define SPS_TEST_GPU_UTIL_H
#include "formats/format.h"
#include "testutil.h"

#include <stddef.h>

extern sps_context g_cpu, g_gpu;

/* The CUDA kernel tables (vector, matrix and index families); SPS_GPU_TEST_ON_CPU
 * (a development aid: checks the harness itself on a machine without a GPU)
 * substitutes the CPU tables and a second CPU context. */
#ifdef SPS_GPU_TEST_ON_CPU
#define SPS_TEST_GPU_VEC sps_cpu_vec_kernels
#define SPS_TEST_GPU_MAT sps_cpu_mat_kernels
#define SPS_TEST_GPU_IDX sps_cpu_idx_kernels
#else
#define SPS_TEST_GPU_VEC sps_cuda_vec_kernels
#define SPS_TEST_GPU_MAT sps_cuda_mat_kernels
#define SPS_TEST_GPU_IDX sps_cuda_idx_kernels
#endif
extern tu_rng g_rng;
extern int g_small; /* SPS_GPU_TEST_SMALL set: small sizes only */

/** Create both contexts; returns 0, or TU_SKIP when no CUDA device is usable
 *  (after printing why), or 1 when the CUDA context fails to start although a
 *  device is reported. */
int gpu_setup(const char *name);
void gpu_teardown(void);

/** A buffer of n scalars of type t, on the host (h) and on the device (d). */
typedef struct {
    sps_scalar t;
    size_t n;
    void *h, *d;
} gbuf;
gbuf gb_rand(sps_scalar t, size_t n);             /* uniform [-1, 1) per component, same on both */
gbuf gb_nan(sps_scalar t, size_t n);              /* NaN everywhere (poison) */
gbuf gb_from(sps_scalar t, size_t n, const void *host);
void gb_push(gbuf *b);                            /* host -> device */
void *gb_fetch(const gbuf *b);                    /* malloc'd copy of the device data */
void gb_free(gbuf *b);
void *gb_dalloc(size_t bytes);                    /* raw device memory (exits on failure) */
void gb_upload(void *d, const void *h, size_t bytes);
void gb_download(void *h, const void *d, size_t bytes);
void *gb_xmalloc(size_t bytes);

/** Normwise comparison: every |gpu_i - cpu_i| <= f * eps(t) * scale (NaN fails). */
void cmp_vec(const char *what, sps_scalar t, size_t n, const void *gpu, const void *cpu, double f, double scale);
/** Per-entry comparison: |gpu_i - cpu_i| <= f * eps(t) * scale[i]. */
void cmp_vec_s(const char *what, sps_scalar t, size_t n, const void *gpu, const void *cpu, double f, const double *scale);
/** Scalar comparison of two slots: |g - c| <= tol. */
void cmp_slot(const char *what, sps_scalar t, size_t n, sps_cplx g, sps_cplx c, double tol);
/** max_i |v_i| */
double gb_maxabs(sps_scalar t, size_t n, const void *v);
double cabs_(sps_cplx c);
/** y = a op(B) x + b y0 through an operator on B's context (x: nin host values,
 *  y0: nout); the result is copied to the host buffer yout. */
sps_status gpu_run_spmv(sps_matrix B, int trans, sps_cplx a, const void *xh, int nin, sps_cplx b, const void *y0,
                        int nout, void *yout);
#endif
