/* CPU backend: host memory, OpenMP threads, the reference kernels. */
#include "kernels/backend.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_status cpu_init(sps_exec *ex, int device)
{
    (void)device;
    snprintf(ex->device_name, sizeof ex->device_name, "CPU (OpenMP, %d threads)", omp_get_max_threads());
    snprintf(ex->device_version, sizeof ex->device_version, "cpu openmp-%d threads %d", (int)_OPENMP,
             omp_get_max_threads());
    return SPS_OK;
}

static void cpu_fini(sps_exec *ex) { (void)ex; }

static sps_status cpu_alloc(sps_exec *ex, void **p, size_t bytes)
{
    *p = malloc(bytes);
    if (!*p) return sps_kerror(ex, SPS_ERR_ALLOC, "out of host memory: %zu bytes requested", bytes);
    return SPS_OK;
}

static void cpu_release(sps_exec *ex, void *p)
{
    (void)ex;
    free(p);
}

static sps_status cpu_copy(sps_exec *ex, void *dst, const void *src, size_t bytes, sps_copy_kind kind)
{
    (void)ex;
    (void)kind;
    memmove(dst, src, bytes);
    return SPS_OK;
}

static sps_status cpu_zero(sps_exec *ex, void *p, size_t bytes)
{
    (void)ex;
    memset(p, 0, bytes);
    return SPS_OK;
}

static sps_status cpu_sync(sps_exec *ex)
{
    (void)ex;
    return SPS_OK;
}

const sps_vec_kernels sps_cpu_vec_kernels[SPS_NUM_SCALARS] = {
    SPS_VEC_TABLE(sps_cpu, s), SPS_VEC_TABLE(sps_cpu, d), SPS_VEC_TABLE(sps_cpu, c), SPS_VEC_TABLE(sps_cpu, z)};
const sps_mat_kernels sps_cpu_mat_kernels[SPS_NUM_SCALARS] = {
    SPS_MAT_TABLE(sps_cpu, s), SPS_MAT_TABLE(sps_cpu, d), SPS_MAT_TABLE(sps_cpu, c), SPS_MAT_TABLE(sps_cpu, z)};
const sps_idx_kernels sps_cpu_idx_kernels = SPS_IDX_TABLE(sps_cpu);

/* The compound family (kernels/compound_kernels.h). */
SPS_CMP_DEFINE_TABLES(sps_cpu)

/* No asynchronous fetch or graphs: the CPU's work is done when a call returns. */
const sps_backend_ops sps_cpu_backend = {
    .name = "cpu", .init = cpu_init, .fini = cpu_fini,
    .alloc = cpu_alloc, .release = cpu_release, .copy = cpu_copy, .zero = cpu_zero,
    .synchronize = cpu_sync,
    SPS_BACKEND_FAMILIES(sps_cpu), .cmp = sps_cpu_cmp_kernels,
};
