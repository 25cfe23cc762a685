/* CPU kernels of the compound family (kernels/compound_kernels.h): dense b x b
 * blocks and quaternions in CSR, AoS or SoA entries.  The reference every other
 * backend's compound kernels are tested against.
 *
 * One generic source, instantiated per scalar type (instantiate.h: compound.inc)
 * and inside it per entry variant (compound_entry.inc): bn (b at run time), b3
 * and b4 (b a compile-time constant), q (real types only).  An entry acts through
 * AV(v, r, c), element (r, c) of its scalar expansion: v[(r b + c) ms] for a
 * block, sign(r, c) * v[idx(r, c) ms] for a quaternion (the left-multiplication
 * matrix L(q) below), so blocks and quaternions share every loop.
 *
 * SpMV: one block-row per iteration, d accumulators, rows scheduled dynamically,
 * each row summed left to right: deterministic.  SpMV^T: the chunked scatter
 * buffers of tscatter.inc over m*d scalars: deterministic, whatever the number
 * of threads.
 * Traffic per product: nnz (4 + nv s) + (n + 1) 4 bytes of matrix, x gathered
 * per entry (d s bytes), y written once (d s bytes a row), s the scalar size. */
#include "kernels/cpu/common.h"

#include <stdlib.h>

/* Below this many outputs the scatter's reduction runs on the calling thread. */
#define SPS_OT_PAR_MIN 4096
/* Block-rows a thread claims at a time (a 3x3 block-row of 27 entries is ~250 flops). */
#define SPS_CMP_ROW_CHUNK 64

/* L(q): sps_q_idx, sps_q_sign (kernels/compound_kernels.h). */
#define SPS_TEMPLATE "kernels/cpu/compound.inc"
#include "kernels/cpu/instantiate.h"
