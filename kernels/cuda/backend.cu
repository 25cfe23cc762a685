/* libspsolve — CUDA backend: device memory, the context's stream, synchronisation.
 *
 * A CUDA context owns one non-blocking stream (every kernel, copy and memset of
 * the context is queued on it; see sps_context_cuda_stream) and one device
 * workspace of SPS_CU_WS_BYTES (reduction partials, COO carries, flags),
 * allocated once here so that no kernel call allocates.  Device-to-host copies
 * synchronise the stream before returning; everything else is asynchronous.
 *
 * Every CUDA call is checked (SPS_CU, common.cuh): a failure is reported as
 * SPS_ERR_DEVICE with "file:line: call: cudaErrorX (text)".  An allocation
 * failure is SPS_ERR_ALLOC naming the bytes requested and free, and leaves the
 * context usable (the runtime's non-sticky error is cleared).
 *
 * Limitation: the device is selected (cudaSetDevice) when the context is created
 * and on allocation; several contexts on different devices in one host thread
 * must not interleave kernel calls. */
#include "kernels/cuda/common.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" int sps_cuda_device_count(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* no driver / no device: not an error of anyone's */
        return 0;
    }
    return n;
}

static void cuda_fini(sps_context ctx);

static sps_status cuda_init(sps_context ctx, int device)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return sps_error(ctx, SPS_ERR_DEVICE, "CUDA backend requested, but no usable CUDA device: %s (%s)",
                         cudaGetErrorName(e), cudaGetErrorString(e));
    }
    if (count == 0) return sps_error(ctx, SPS_ERR_DEVICE, "CUDA backend requested, but no CUDA device is present");
    if (device < 0 || device >= count)
        return sps_error(ctx, SPS_ERR_DEVICE, "CUDA device %d does not exist (%d device%s: 0..%d)", device, count,
                         count == 1 ? "" : "s", count - 1);
    SPS_CU(ctx, cudaSetDevice(device));
    cudaDeviceProp prop;
    SPS_CU(ctx, cudaGetDeviceProperties(&prop, device));
    sps_cuda_state *st = (sps_cuda_state *)calloc(1, sizeof *st);
    if (!st)
        return sps_error(ctx, SPS_ERR_ALLOC, "out of host memory: %zu bytes for the CUDA backend state", sizeof *st);
    ctx->be_state = st;
    st->sms = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
    snprintf(ctx->device_name, sizeof ctx->device_name, "%s", prop.name);
    sps_status s = SPS_OK;
    cudaStream_t stream;
    e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        s = sps_cuda_fail(ctx, e, "cudaStreamCreateWithFlags", __FILE__, __LINE__);
        goto fail;
    }
    st->stream = stream;
    ctx->stream = (void *)stream;
    e = cudaMalloc((void **)&st->ws, SPS_CU_WS_BYTES);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        s = sps_error(ctx, e == cudaErrorMemoryAllocation ? SPS_ERR_ALLOC : SPS_ERR_DEVICE,
                      "CUDA backend: cannot allocate the %zu-byte device workspace: %s (%s)", (size_t)SPS_CU_WS_BYTES,
                      cudaGetErrorName(e), cudaGetErrorString(e));
        goto fail;
    }
    /* the flag area starts at zero (the reductions' last-block counter) */
    e = cudaMemsetAsync(st->ws, 0, SPS_CU_WS_BYTES, stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        s = sps_cuda_fail(ctx, e, "cudaMemsetAsync(workspace)", __FILE__, __LINE__);
        goto fail;
    }
    return SPS_OK;
fail:
    cuda_fini(ctx);
    return s;
}

static void cuda_fini(sps_context ctx)
{
    sps_cuda_state *st = sps_cust(ctx);
    if (!st) return;
    /* teardown cannot report: errors are recorded in the context, which is going away */
    if (st->stream) (void)cudaStreamSynchronize(st->stream);
    if (st->ws) (void)cudaFree(st->ws);
    if (st->stream) (void)cudaStreamDestroy(st->stream);
    (void)cudaGetLastError();
    free(st);
    ctx->be_state = NULL;
    ctx->stream = NULL;
}

static sps_status cuda_alloc(sps_context ctx, void **p, size_t bytes)
{
    *p = NULL;
    SPS_CU(ctx, cudaSetDevice(ctx->device));
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) return SPS_OK;
    *p = NULL;
    (void)cudaGetLastError(); /* cudaErrorMemoryAllocation is not sticky: clear it, the context stays usable */
    if (e == cudaErrorMemoryAllocation) {
        size_t freeb = 0, total = 0;
        if (cudaMemGetInfo(&freeb, &total) != cudaSuccess) (void)cudaGetLastError();
        return sps_error(ctx, SPS_ERR_ALLOC, "out of device memory: %zu bytes requested (%zu bytes free of %zu)", bytes,
                         freeb, total);
    }
    return sps_cuda_fail(ctx, e, "cudaMalloc", __FILE__, __LINE__);
}

static void cuda_release(sps_context ctx, void *p)
{
    if (!p) return;
    cudaError_t e = cudaFree(p);
    if (e != cudaSuccess) sps_cuda_fail(ctx, e, "cudaFree", __FILE__, __LINE__); /* recorded; nothing to return */
}

static sps_status cuda_copy(sps_context ctx, void *dst, const void *src, size_t bytes, sps_copy_kind kind)
{
    if (bytes == 0) return SPS_OK;
    cudaStream_t s = sps_custream(ctx);
    switch (kind) {
    case SPS_COPY_H2D: SPS_CU(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s)); break;
    case SPS_COPY_D2D: SPS_CU(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s)); break;
    case SPS_COPY_D2H:
        SPS_CU(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
        SPS_CU(ctx, cudaStreamSynchronize(s)); /* the host reads dst next */
        break;
    case SPS_COPY_H2H: memmove(dst, src, bytes); break;
    default: return sps_error(ctx, SPS_ERR_ARG, "CUDA copy: bad copy kind %d", (int)kind);
    }
    return SPS_OK;
}

static sps_status cuda_zero(sps_context ctx, void *p, size_t bytes)
{
    if (bytes == 0) return SPS_OK;
    SPS_CU(ctx, cudaMemsetAsync(p, 0, bytes, sps_custream(ctx)));
    return SPS_OK;
}

static sps_status cuda_sync(sps_context ctx)
{
    SPS_CU(ctx, cudaStreamSynchronize(sps_custream(ctx)));
    return SPS_OK;
}

const sps_backend_ops sps_cuda_backend = {"cuda",    cuda_init, cuda_fini, cuda_alloc,      cuda_release,
                                          cuda_copy, cuda_zero, cuda_sync, sps_cuda_kernels};
