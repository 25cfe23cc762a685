/* libspsolve — the CUDA kernel tables, one per scalar type, filled from the
 * kernel list (kernels/kernels.h): a kernel without a CUDA definition fails to
 * link here instead of diverging silently. */
#include "kernels/cuda/common.cuh"

const sps_vec_kernels sps_cuda_vec_kernels[SPS_NUM_SCALARS] = {
    SPS_VEC_TABLE(sps_cuda, s), SPS_VEC_TABLE(sps_cuda, d), SPS_VEC_TABLE(sps_cuda, c), SPS_VEC_TABLE(sps_cuda, z)};
const sps_mat_kernels sps_cuda_mat_kernels[SPS_NUM_SCALARS] = {
    SPS_MAT_TABLE(sps_cuda, s), SPS_MAT_TABLE(sps_cuda, d), SPS_MAT_TABLE(sps_cuda, c), SPS_MAT_TABLE(sps_cuda, z)};
const sps_idx_kernels sps_cuda_idx_kernels = SPS_IDX_TABLE(sps_cuda);
/* The compound family (kernels/compound_kernels.h; compound_real.cu, compound_cplx.cu). */
SPS_CMP_DEFINE_TABLES(sps_cuda)
