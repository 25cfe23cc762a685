/* Kernels of HYB (ELL + COO tail), JDS and DIA. */
#ifndef SPS_FORMAT_KERNELS_OTHER_H
#define SPS_FORMAT_KERNELS_OTHER_H
#define SPS_KERNEL_LIST_OTHER(X, P, S)
#endif
