/* SELL-C-sigma (sliced ELLPACK, Monakov, Lokhmotov, Avetisyan 2010; sorting
 * window sigma from Kreutzer et al. 2014): the rows are cut into slices of C
 * rows (C = 16 or 32: half a warp or a warp), each slice padded to its own
 * longest row and stored column-major inside the slice (entry k of row r of
 * slice s at slice_ptr[s] + k*C + r mod C); the last slice is padded to C rows.
 * With sigma > 1 the rows are first sorted by decreasing length inside windows
 * of sigma consecutive rows (sigma a multiple of C), so rows of similar length
 * share a slice and padding shrinks; the permutation stays inside the format
 * (SpMV writes y in the original numbering).  Row lengths are kept as in
 * ELLPACK-R, so padding is never multiplied.  Storage: slots of every slice
 * (values, and 16-bit column offsets plus one base column a slice where the
 * slice's columns span at most 65534, else 32-bit columns), slice pointers
 * (int64), n row lengths, n permutation entries when sigma > 1 (the shared
 * padded layout, formats/padded.h).
 *
 * GPU: one thread per row (2 or 4 when rows average 32 / 128 entries or more,
 * kernels/cuda/padded.cu); with C = 32 a warp is exactly one slice, so at each
 * k it loads 32 consecutive slots (one 128-byte line of f32) and the warp's
 * trip count is its slice's width -- the padding it would have read in ELL is
 * simply not stored.  Best where row lengths vary (power-law graphs, mixed
 * meshes) with a sigma of a few slices to a few thousand rows; sigma = n sorts
 * globally (most padding removed, x access least local).
 * Options (sell_options): slice-height (C: 16 or 32, default 32), sort-window
 * (sigma: 0 or 1 = no sorting, else a positive multiple of C), max-fill, force,
 * index-bits (auto: each slice's columns as 16-bit offsets from its smallest where every
 * slice spans at most 65534 columns; 16; 32). */
#include "formats/padded.h"

#include <limits.h>
#include <stdio.h>

static const sps_option_desc sell_options[] = {SPS_PAD_OPT_SLICE_HEIGHT, SPS_PAD_OPT_SORT_WINDOW, SPS_PAD_OPTIONS,
                                               SPS_FMT_OPT_VALUES};

static sps_status sell_from_backend_csr(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    sps_pad_params p = {.kind = SPS_PAD_SELL, .h = sps_opt_int(opt, "slice-height"), .window = sps_pad_window(opt)};
    sps_pad_common(opt,
                   p.window ? "use a larger sort-window, or hyb or csr"
                            : "use sort-window (e.g. 1024) to sort rows by length, or hyb or csr",
                   &p);
    return sps_pad_build(B, src, &p);
}

const sps_format_ops sps_format_sell = {
    .id = SPS_FMT_SELL, .name = "sell",
    .summary = "SELL-C-sigma: slices of 16/32 rows padded per slice, optional sorting by row length; for varying "
               "row lengths",
    SPS_FORMAT_OPTIONS(sell_options), .rules = sps_pad_sort_rules,
    SPS_PAD_HOOKS(sell),
};
