/* CPU kernels of the Hola format (formats/hola.c, kernels/format_kernels_hola.h).
 *
 * The CPU is the oracle the GPU's Hola kernels are tested against, so the
 * products are the CSR kernels on the same arrays (csr_spmv: rows summed left
 * to right; csr_spmvt: chunked scatter buffers, deterministic); the row-starts
 * buffer is a GPU schedule and they neither need nor touch it.
 * hola_row_starts computes the buffer the GPU's first kernel writes (Hola
 * Algorithm 2, the scatter over rows), as the reference for that kernel. */
#include "kernels/cpu/common.h"

#define SPS_TEMPLATE "kernels/cpu/hola.inc"
#include "kernels/cpu/instantiate.h"
