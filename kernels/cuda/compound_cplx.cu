/* The compound kernels of the complex types (compound.cuh): blocks (no complex quaternions). */
#include "kernels/cuda/compound.cuh"

SPS_CU_CMP_BLOCKS(c, cx<float>)
SPS_CU_CMP_BLOCKS(z, cx<double>)
