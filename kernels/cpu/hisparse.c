/* The CPU products over a HiSparse tree (kernels/format_kernels_hisparse.h; the format: formats/hisparse.h), one per scalar type. */
#include "kernels/cpu/common.h"
#include "kernels/format_kernels_hisparse.h"
#include "kernels/hisparse_small.h"

#include <string.h>

#define SPS_TEMPLATE "kernels/cpu/hisparse.inc"
#include "kernels/cpu/instantiate.h"
