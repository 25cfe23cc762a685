/* CPU SpMV kernels (CSR, COO) for f32, f64, c32, c64: one generic source, spmv.inc. */
#include "kernels/cpu/common.h"

#include <stdlib.h>

#define SPS_TEMPLATE "kernels/cpu/spmv.inc"
#include "kernels/cpu/instantiate.h"
