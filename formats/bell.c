/* bell and bsell: ELLPACK-R and sliced ELLPACK of compound entries (dense b x b
 * blocks, b = 2..8, real or complex, and quaternions), the outer layouts of the
 * scalar ell (formats/ell.c) and sell (formats/sell.c) with an entry in every
 * slot.  One file for the two: they differ only in their parameters.
 *
 * The layout is the padded family's (formats/padded.h), index part untouched:
 *   bell   one group of ld = n rounded up to 32 rows, every row padded to the
 *          longest, slot k of row i at k*ld + i (column-major);
 *   bsell  slices of C = 16 or 32 rows (option slice-height), each padded to its
 *          own longest row and column-major inside the slice (slot k of row r of
 *          slice s at slice_ptr[s] + k*C + r mod C), the last slice padded to C;
 * with the row lengths (the "-R": padding is stored, never multiplied), 16- or
 * 32-bit columns (index-bits), and the blow-up check (max-fill, force).  The
 * values: ew = sps_entry_values scalars a slot (b*b, row-major, or w, x, y, z),
 * AoS (member p of slot s at s*ew + p) or SoA (at p*slots + s), the option
 * entry-layout as bcsr's; padding slots hold zeros.  Products: the compound
 * family's pad_spmv / pad_spmvt (kernels/compound_kernels.h), which sum a row in
 * bcsr's order: the same bits as bcsr.  bsell sorts rows by length within
 * windows as sell does (sort-window; the permutation stays inside the format).
 * Scalar entries are refused: they have ell and sell. */
#include "formats/padded.h"

static const sps_option_desc bell_options[] = {SPS_FMT_OPT_ENTRY_LAYOUT, SPS_FMT_OPT_VECTOR_LAYOUT, SPS_PAD_OPTIONS};
static const sps_option_desc bsell_options[] = {SPS_PAD_OPT_SLICE_HEIGHT, SPS_PAD_OPT_SORT_WINDOW,
                                                 SPS_FMT_OPT_ENTRY_LAYOUT, SPS_FMT_OPT_VECTOR_LAYOUT, SPS_PAD_OPTIONS};

/* The build of either: kind (and slice height h), the entry layout and the shared options. */
static sps_status bpad_build(sps_matrix B, const sps_csr_store *src, sps_options opt, sps_pad_kind kind, int h,
                             int window, const char *suggest)
{
    sps_pad_params p = {.kind = kind, .h = h, .window = window,
                        .lay = (sps_entry_layout)sps_opt_int(opt, "entry-layout"),
                        .vlay = (sps_entry_layout)sps_opt_int(opt, "vector-layout")};
    sps_pad_common(opt, suggest, &p);
    return sps_pad_build(B, src, &p);
}

static sps_status bell_from_backend_csr(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    return bpad_build(B, src, opt, SPS_PAD_ELL, 0, 0,
                      "use bsell (rows padded per slice of 16 or 32) or bcsr (no padding)");
}

static sps_status bsell_from_backend_csr(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    const int h = sps_opt_int(opt, "slice-height"), window = sps_pad_window(opt);
    return bpad_build(B, src, opt, SPS_PAD_SELL, h, window,
                      window ? (h > 16 ? "use slice-height 16, a larger sort-window or bcsr (no padding)"
                                       : "use a larger sort-window or bcsr (no padding)")
                             : (h > 16 ? "use slice-height 16, sort-window (e.g. 1024) or bcsr (no padding)"
                                       : "use sort-window (e.g. 1024) or bcsr (no padding)"));
}

const sps_format_ops sps_format_bell = {
    .id = SPS_FMT_BELL, .name = "bell",
    .summary = "ELLPACK-R of compound entries (b x b blocks, quaternions): rows padded to the longest, AoS or SoA",
    SPS_FORMAT_OPTIONS(bell_options), .compound = 1,
    SPS_PAD_HOOKS(bell),
};

const sps_format_ops sps_format_bsell = {
    .id = SPS_FMT_BSELL, .name = "bsell",
    .summary = "sliced ELLPACK of compound entries: slices of 16/32 rows padded per slice, AoS or SoA",
    SPS_FORMAT_OPTIONS(bsell_options), .rules = sps_pad_sort_rules, .compound = 1,
    SPS_PAD_HOOKS(bsell),
};
