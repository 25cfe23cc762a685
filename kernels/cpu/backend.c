/* CPU backend: host memory, OpenMP threads, the reference kernels. */
#include "core/internal.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_status cpu_init(sps_context ctx, int device)
{
    (void)device;
    snprintf(ctx->device_name, sizeof ctx->device_name, "CPU (OpenMP, %d threads)", omp_get_max_threads());
    return SPS_OK;
}

static void cpu_fini(sps_context ctx) { (void)ctx; }

static sps_status cpu_alloc(sps_context ctx, void **p, size_t bytes)
{
    *p = malloc(bytes);
    if (!*p) return sps_error(ctx, SPS_ERR_ALLOC, "out of host memory: %zu bytes requested", bytes);
    return SPS_OK;
}

static void cpu_release(sps_context ctx, void *p)
{
    (void)ctx;
    free(p);
}

static sps_status cpu_copy(sps_context ctx, void *dst, const void *src, size_t bytes, sps_copy_kind kind)
{
    (void)ctx;
    (void)kind;
    memmove(dst, src, bytes);
    return SPS_OK;
}

static sps_status cpu_zero(sps_context ctx, void *p, size_t bytes)
{
    (void)ctx;
    memset(p, 0, bytes);
    return SPS_OK;
}

static sps_status cpu_sync(sps_context ctx)
{
    (void)ctx;
    return SPS_OK;
}

const sps_kernels sps_cpu_kernels[SPS_NUM_SCALARS] = {
    SPS_KERNEL_TABLE(sps_cpu, s), SPS_KERNEL_TABLE(sps_cpu, d),
    SPS_KERNEL_TABLE(sps_cpu, c), SPS_KERNEL_TABLE(sps_cpu, z)};

const sps_backend_ops sps_cpu_backend = {"cpu",    cpu_init, cpu_fini,  cpu_alloc,       cpu_release,
                                         cpu_copy, cpu_zero, cpu_sync, sps_cpu_kernels,
                                         NULL,     NULL,     NULL,     NULL,
                                         NULL,     NULL,     NULL};
