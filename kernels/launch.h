/* libspsolve — run-time launch variants: the tuning knobs an autotuner searches.
 *
 * A matrix carries one sps_launch_variant (formats/format.h, set by the internal
 * sps_matrix_set_launch_variant); its products hand it to the kernels through
 * sps_exec.lv for the duration of the call (formats/operator.c).  Every field 0
 * means "the default": a zero-initialised variant (or lv NULL) launches exactly the
 * kernels of the build without variants, the same template instantiations, so the
 * same code and speed.  Other values select other instantiations from a SMALL set
 * compiled in (the ones that were measured: bench/results/knobs.md); a value, or a
 * combination, that is not compiled in for the matrix's scalar type makes the
 * product return SPS_ERR_ARG through the exec's error sink, naming what is there.
 * Knobs whose alternatives were measured and lost everywhere are no longer knobs:
 * plain constants in the kernels, with the file that holds the measurement.
 * The CPU backend ignores the variant (its kernels are the oracle). */
#ifndef SPS_KERNELS_LAUNCH_H
#define SPS_KERNELS_LAUNCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_launch_variant {
    /* CSR row groups, csr_spmv (op N; the fused solver products, SpMV^T and the
     * merge path keep their defaults).  Compiled in: the default shape and each of
     * these four changed alone (kernels/cuda/csr.cu csr_variants). */
    int csr_lane_entries; /* entries a lane the lanes-a-row rule aims at (TPR = pow2 <= avg / e):
                             0 default (4 for 4-byte values, 2 for 8-byte, 1 for 16-byte),
                             else 1, 2 or 4: the default's or its neighbour (4 -> 2, 2 -> 1, 1 -> 2) */
    int csr_unroll;       /* entries a lane keeps in flight: 0 default (4 for 4-byte values, 2 for
                             larger), else 2 or 4 */
    int csr_stage_rows;   /* rows a group takes a staged pass (pass = rows x 256/TPR): 0 default (1
                             for 4-byte values, 2 for larger), else 1 or 2 */
    int csr_minb;         /* resident blocks an SM (__launch_bounds__): 0 default (8 for 4-byte
                             values, 6 for larger), else the default or 6 (4-byte) / 4 (larger) */
    /* Hola (hola_spmv; SpMV^T keeps its default).  Compiled in: the default and
     * the combinations of bench/results/hola-variants-* and hola-minblocks-*. */
    int hola_early_mul; /* 0 default (products where first needed), 1 right after the gathers */
    int hola_minb;      /* resident blocks an SM: 0 default (5 f32, 4 f64, 2 complex), else 5 or 6 */
    int hola_out_div;   /* the output buffer holds 256 npt / out_div rows: 0 default (1), 1 or 2 */
    int hola_ldg;       /* 0 default (matrix streams past the L1, ld.global.nc.L1::no_allocate),
                           1 ordinary read-only loads (__ldg) */
    /* Padded formats (ELL, SELL, RgCSR: pad_spmv).  Compiled in: the default and
     * each changed alone; pad_split needs no other instantiation. */
    int pad_unroll; /* entries a thread keeps in flight: 0 default (4), else 4 or 8 */
    int pad_minb;   /* resident blocks an SM: 0 default (the compiler's choice), 4 */
    int pad_ldg;    /* 0 default (no_allocate loads), 1 ordinary read-only loads */
    int pad_split;  /* threads a row: 0 by the mean row length (1, 2 from 32, 4 from 128), 1, 2 or 4 */
    int pad_lean;   /* one group of rows of at most 32 slots (ELL): 0 the lean kernel by its rule
                       (small, or near-uniform rows; never with another pad_ knob set), 1 never,
                       2 always */
    /* Compound entries (bcsr, bell, bsell: kernels/cuda/compound.cu), SpMV and SpMV^T.
     * All run-time parameters of one instantiation per (scalar, entry, outer layout,
     * entry layout): any combination runs. */
    int cmp_sched; /* 0 static (block-row groups take rows g, g + G, ... of a grid), 1 dynamic
                      (groups claim rows from an atomic counter) */
    int cmp_tpr;   /* threads a block-row: 0 by the mean entries a block-row, else 1, 2, 4, 8, 16, 32 */
    int cmp_warps; /* warps a thread block: 0 default (8: 256 threads), else 2, 4, 8, 16 */
    int cmp_bpsm;  /* blocks an SM: 0 default (static: a group a block-row; dynamic: as many as are
                      resident), else 1, 2, 4 or 8 (static: a grid-stride loop over that grid) */
    /* HiSparse (hs_kernel, kernels/cuda/hisparse.cu), SpMV and SpMV^T. */
    int hs_windows; /* 32-entry windows a warp: 0 by the rule (1 while they fit one wave of warps,
                       else 2), 1 or 2 */
} sps_launch_variant;

/* The fields, in declaration order, with the values a field may take besides 0 (the
 * default; which of them are compiled in for a type is the product's check):
 * X(field, value, ...).  By name for specs such as "hola_early_mul=1,hola_minb=5"
 * (spbench's --variant, the tests, the tuner) and for the setter's range check. */
#define SPS_LAUNCH_FIELDS(X)                                                                                   \
    X(csr_lane_entries, 1, 2, 4) X(csr_unroll, 2, 4) X(csr_stage_rows, 1, 2) X(csr_minb, 4, 6, 8)              \
    X(hola_early_mul, 1) X(hola_minb, 2, 4, 5, 6) X(hola_out_div, 1, 2) X(hola_ldg, 1)                          \
    X(pad_unroll, 4, 8) X(pad_minb, 4) X(pad_ldg, 1) X(pad_split, 1, 2, 4) X(pad_lean, 1, 2)                    \
    X(cmp_sched, 1) X(cmp_tpr, 1, 2, 4, 8, 16, 32) X(cmp_warps, 2, 4, 8, 16) X(cmp_bpsm, 1, 2, 4, 8)          \
    X(hs_windows, 1, 2)

/* v from a comma-separated list of field=value (values 0..64; fields not named
 * stay 0, the default; "" is the default variant).  Returns 0, or -1 with why
 * naming the bad item.  Whether the values are compiled in is checked where the
 * variant is set (sps_matrix_set_launch_variant) and launched. */
int sps_launch_variant_parse(const char *spec, sps_launch_variant *v, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
