/* libspsolve — CUDA: the exclusive prefix sums of counts that the builds share
 * (HYB's tail pointers, DIA's diagonal map: 32-bit; the padded formats' group
 * pointers: 64-bit).  cub::DeviceScan over integers: exact, the same result as
 * the CPU's serial sum.  out[0] = 0, out[i + 1] = in[0] + ... + in[i].  CUB's
 * scratch comes from the context's pool and goes back in stream order
 * (backend.cu): nothing here waits for the device. */
#include "kernels/cuda/common.cuh"

#include <cub/device/device_scan.cuh>

template <typename I>
static sps_status scan_impl(sps_exec *ex, const I *in, I *out, int64_t items, const char *what)
{
    cudaStream_t s = sps_custream(ex);
    if (items > INT32_MAX) return sps_kerror(ex, SPS_ERR_UNSUPPORTED, "%s: %lld items exceed the scan's range", what, (long long)items);
    SPS_CU(ex, cudaMemsetAsync(out, 0, sizeof *out, s));
    if (items <= 0) return SPS_OK;
    size_t tmp_bytes = 0;
    SPS_CU(ex, cub::DeviceScan::InclusiveSum((void *)NULL, tmp_bytes, in, out + 1, (int)items, s));
    void *tmp = NULL;
    SPS_CHECK(sps_exec_alloc(ex, &tmp, tmp_bytes));
    sps_status st = SPS_OK;
    const cudaError_t e = cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, in, out + 1, (int)items, s);
    if (e != cudaSuccess) st = sps_cuda_fail(ex, e, what, __FILE__, __LINE__);
    sps_exec_release(ex, tmp);
    return st;
}

sps_status sps_cu_scan_index(sps_exec *ex, const sps_index *in, sps_index *out, int64_t items, const char *what)
{
    return scan_impl(ex, in, out, items, what);
}

sps_status sps_cu_scan_i64(sps_exec *ex, const int64_t *in, int64_t *out, int64_t items, const char *what)
{
    return scan_impl(ex, in, out, items, what);
}
