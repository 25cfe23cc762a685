/* The compound kernels of the real types (compound.cuh): blocks and quaternions. */
#include "kernels/cuda/compound.cuh"

SPS_CU_CMP_BLOCKS(s, float)
SPS_CU_CMP_BLOCKS(d, double)
SPS_CU_CMP_ENTRIES(q, cmp_quat, s, float)
SPS_CU_CMP_ENTRIES(q, cmp_quat, d, double)
