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

const sps_kernels sps_cpu_kernels[SPS_NUM_SCALARS] = {
    SPS_KERNEL_TABLE(sps_cpu, s), SPS_KERNEL_TABLE(sps_cpu, d),
    SPS_KERNEL_TABLE(sps_cpu, c), SPS_KERNEL_TABLE(sps_cpu, z)};

const sps_backend_ops sps_cpu_backend = {"cpu",    cpu_init, cpu_fini,  cpu_alloc,       cpu_release,
                                         cpu_copy, cpu_zero, cpu_sync, sps_cpu_kernels,
                                         NULL,     NULL,     NULL,     NULL,
                                         NULL,     NULL,     NULL};
