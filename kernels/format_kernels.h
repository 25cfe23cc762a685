/* libspsolve — kernels of the formats beyond CSR/COO (included by kernels/kernels.h).
 * Each format family keeps its own list in its own header so that the engineers
 * adding formats never edit the same lines; every entry must be implemented by
 * every backend (kernels/cpu/<fmt>.c and kernels/cuda/<fmt>.cu). */
#ifndef SPS_FORMAT_KERNELS_H
#define SPS_FORMAT_KERNELS_H

#include "kernels/format_kernels_padded.h" /* ELLPACK-R, SELL-C-sigma, RgCSR */
#include "kernels/format_kernels_other.h"  /* HYB, JDS, DIA */
#include "kernels/format_kernels_hola.h"   /* Hola (CSR by Hola-SpMV) */
#include "kernels/format_kernels_hisparse.h" /* HiSparse (the tree's product) */

#define SPS_KERNEL_LIST_FORMATS(X, P, S) \
    SPS_KERNEL_LIST_PADDED(X, P, S)      \
    SPS_KERNEL_LIST_OTHER(X, P, S)       \
    SPS_KERNEL_LIST_HOLA(X, P, S)        \
    SPS_KERNEL_LIST_HISPARSE(X, P, S)

#endif
