/* CPU block-Jacobi kernels (kernels/kernels.h bj_invert, bj_apply), the reference
 * of the CUDA ones: one generic source, bjacobi.inc, per scalar type. */
#include "kernels/cpu/common.h"

#include <float.h>
#include <string.h>

#define SPS_TEMPLATE "kernels/cpu/bjacobi.inc"
#include "kernels/cpu/instantiate.h"
