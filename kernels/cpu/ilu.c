/* CPU ILU(0) / IC(0) apply (kernels/kernels.h ilu_apply), the reference of the
 * CUDA one: one generic source, ilu.inc, per scalar type. */
#include "kernels/cpu/common.h"

#include <string.h>

#define SPS_TEMPLATE "kernels/cpu/ilu.inc"
#include "kernels/cpu/instantiate.h"
