/* CUDA relayout of compound vectors (kernels/index_kernels.h vec_relayout): n blocks
 * of d elements between AoS (element c of block j at j d + c) and SoA (at c n + j).
 * One thread a destination element, so the writes are coalesced; the reads are d
 * (to SoA) or n (to AoS) elements apart, the lines shared by neighbouring threads
 * through the L1 / L2.  Elements move as 4-, 8- or 16-byte words, whatever the
 * scalar type (the formats' option vector-layout soa, formats/compound_apply.c). */
#include "kernels/cuda/common.cuh"

namespace {
template <typename W> struct relayout_op {
    const W *src;
    W *dst;
    sps_index n;
    int d, to_soa;
    __device__ void setup() {}
    __device__ void operator()(sps_index t)
    {
        if (to_soa) {
            const sps_index c = t / n, j = t - c * n;
            dst[t] = src[(int64_t)j * d + c];
        } else {
            const sps_index j = t / d, c = t - j * d;
            dst[t] = src[(int64_t)c * n + j];
        }
    }
};

template <typename W>
static sps_status relayout_impl(sps_exec *ex, int d, sps_index n, int to_soa, const void *src, void *dst)
{
    return sps_cuda_foreach(ex, (sps_index)((int64_t)n * d),
                            relayout_op<W>{(const W *)src, (W *)dst, n, d, to_soa});
}
} // namespace

extern "C" sps_status sps_cuda_vec_relayout(sps_exec *ex, size_t esize, int d, sps_index n, int to_soa, const void *src,
                                            void *dst)
{
    if (n <= 0 || d <= 0) return SPS_OK;
    if ((int64_t)n * d > INT32_MAX)
        return sps_kerror(ex, SPS_ERR_ARG, "vec_relayout: %lld elements exceed the index type",
                          (long long)n * d);
    switch (esize) {
    case 4: return relayout_impl<float>(ex, d, n, to_soa, src, dst);
    case 8: return relayout_impl<double>(ex, d, n, to_soa, src, dst);
    case 16: return relayout_impl<uint4>(ex, d, n, to_soa, src, dst);
    default: return sps_kerror(ex, SPS_ERR_ARG, "vec_relayout: elements of %zu bytes (4, 8 or 16)", esize);
    }
}
