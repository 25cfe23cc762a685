/* Value dictionaries: a format's value array stored as one byte a slot, an index
 * into a table of at most SPS_VDICT_MAX distinct values (the "values" option of
 * the padded formats and DIA, formats/vdict.c; CSR-VI, Kourtis, Goumas and
 * Koziris 2008).
 *
 * Why: the padded and DIA products are bound by the bytes they stream, and the
 * values are most of them (f64 SELL with 16-bit columns: 8 of 10 bytes a slot).
 * Matrices of a few distinct values are common: finite-difference stencils
 * with constant coefficients, graph adjacency and Laplacian matrices, FEM
 * matrices on uniform meshes.  Their slot drops to 1 + 2 bytes (SELL) or 1 byte
 * (DIA); the dictionary (at most 256 x 16 bytes) stays in the L1.
 *
 * The kernels compare values by their bits, never as numbers (-0.0 and 0.0 are
 * two entries; a NaN, which --allow-nonfinite lets into a matrix, equals the NaNs
 * of its own bits), so they are type-independent: the
 * index family of kernels/index_kernels.h, with vsize = 4, 8 or 16 bytes a
 * value.  The dictionary is sorted by sps_vdict_cmp (the value's 32-bit words
 * in memory order, each unsigned), so every backend builds the same indices. */
#ifndef SPS_FORMAT_KERNELS_VDICT_H
#define SPS_FORMAT_KERNELS_VDICT_H

#include <stdint.h>
#include <string.h>

/* Distinct values a dictionary holds: one byte an index. */
#define SPS_VDICT_MAX 256

#if defined(__CUDACC__)
#define SPS_VDICT_HD __host__ __device__
#else
#define SPS_VDICT_HD
#endif

/** Order of two values of vsize bytes (4-byte aligned): their 32-bit words in turn. */
static inline SPS_VDICT_HD int sps_vdict_cmp(const void *a, const void *b, int vsize)
{
    const uint32_t *x = (const uint32_t *)a, *y = (const uint32_t *)b;
    for (int w = 0; w < vsize / 4; w++)
        if (x[w] != y[w]) return x[w] < y[w] ? -1 : 1;
    return 0;
}

#endif
