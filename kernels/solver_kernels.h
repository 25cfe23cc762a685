/* libspsolve — fused solver steps (included by kernels/kernels.h).
 *
 * Each entry fuses vector updates with the reduction they feed so that a solver
 * iteration makes the fewest passes over memory (ARCHITECTURE §5).  Same
 * conventions as kernels.h.  Every entry must be implemented by every backend. */
#ifndef SPS_SOLVER_KERNELS_H
#define SPS_SOLVER_KERNELS_H

#define SPS_KERNEL_LIST_SOLVER(X, P, S)

#endif
