/* CPU fused solver steps (kernels/solver_kernels.h) for f32, f64, c32, c64: one
 * generic source, solver.inc.  They are the reference the CUDA steps are tested
 * against. */
#include "kernels/cpu/common.h"

#include <math.h>

/* A slot coefficient is usable when both parts are finite (guarded steps). */
static inline int sps_cplx_finite(sps_cplx c) { return isfinite(c.re) && isfinite(c.im); }

#define SPS_TEMPLATE "kernels/cpu/solver.inc"
#include "kernels/cpu/instantiate.h"
