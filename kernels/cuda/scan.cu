/* libspsolve — CUDA: the exclusive prefix sum of index counts that the builds
 * share (HYB's tail pointers, DIA's diagonal map).  cub::DeviceScan over
 * integers: exact, the same result as the CPU's serial sum.  CUB's scratch is
 * allocated for the call and freed after a stream synchronisation (a build, not
 * a hot path; the caller reads the total on the host next anyway). */
#include "kernels/cuda/common.cuh"

#include <cub/device/device_scan.cuh>

sps_status sps_cu_scan_index(sps_context ctx, const sps_index *in, sps_index *out, int64_t items, const char *what)
{
    cudaStream_t s = sps_custream(ctx);
    if (items > INT32_MAX) return sps_error(ctx, SPS_ERR_UNSUPPORTED, "%s: %lld items exceed the scan's range", what, (long long)items);
    SPS_CU(ctx, cudaMemsetAsync(out, 0, sizeof *out, s));
    if (items <= 0) return SPS_OK;
    size_t tmp_bytes = 0;
    SPS_CU(ctx, cub::DeviceScan::InclusiveSum((void *)NULL, tmp_bytes, in, out + 1, (int)items, s));
    void *tmp = NULL;
    SPS_CHECK(sps_dmalloc(ctx, &tmp, tmp_bytes));
    sps_status st = SPS_OK;
    cudaError_t e = cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out + 1, (int)items, s);
    if (e != cudaSuccess) st = sps_cuda_fail(ctx, e, "cub::DeviceScan::InclusiveSum", __FILE__, __LINE__);
    e = cudaStreamSynchronize(s);
    if (e != cudaSuccess && st == SPS_OK) st = sps_cuda_fail(ctx, e, "cudaStreamSynchronize", __FILE__, __LINE__);
    sps_dfree(ctx, tmp);
    return st;
}
