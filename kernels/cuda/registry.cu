/* libspsolve — the CUDA kernel tables, one per scalar type, filled from the
 * kernel list (kernels/kernels.h): a kernel without a CUDA definition fails to
 * link here instead of diverging silently. */
#include "kernels/cuda/common.cuh"

const sps_kernels sps_cuda_kernels[SPS_NUM_SCALARS] = {
    SPS_KERNEL_TABLE(sps_cuda, s), SPS_KERNEL_TABLE(sps_cuda, d),
    SPS_KERNEL_TABLE(sps_cuda, c), SPS_KERNEL_TABLE(sps_cuda, z)};
