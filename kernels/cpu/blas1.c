/* CPU BLAS-1 kernels for f32, f64, c32, c64: one generic source, blas1.inc. */
#include "kernels/cpu/common.h"

#define SPS_TEMPLATE "kernels/cpu/blas1.inc"
#include "kernels/cpu/instantiate.h"
