/* Kernels of the padded / row-grouped formats: ELLPACK-R, SELL-C-sigma, RgCSR. */
#ifndef SPS_FORMAT_KERNELS_PADDED_H
#define SPS_FORMAT_KERNELS_PADDED_H
#define SPS_KERNEL_LIST_PADDED(X, P, S)
#endif
