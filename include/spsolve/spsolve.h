/* libspsolve — sparse linear systems on NVIDIA GPUs and CPUs.
 *
 * Umbrella header: include this one. */
#ifndef SPSOLVE_H
#define SPSOLVE_H
#include "spsolve/types.h"
#include "spsolve/context.h"
#include "spsolve/vector.h"
#include "spsolve/options.h"
#include "spsolve/matrix.h"
#include "spsolve/tune.h"
#include "spsolve/operator.h"
#include "spsolve/precond.h"
#include "spsolve/solver.h"
#include "spsolve/cuda.h"
#include "spsolve/file.h"
#endif
