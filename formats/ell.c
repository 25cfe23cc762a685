/* ELLPACK-R (Vazquez, Ortega, Fernandez, Garzon 2010): every row padded to the
 * longest row K, stored column-major with leading dimension ld = rows rounded
 * up to a multiple of 32 (a warp), so entry slot k of row i is at k*ld + i and
 * the 32 rows of a warp read 32 consecutive slots at every k; the row lengths
 * rl[i] let each thread stop at its own row end (the "-R"): padding is never
 * multiplied.  Storage: K*ld columns and values, n row lengths (and the two
 * group pointers {0, K*ld} of the shared padded layout, formats/padded.h).
 *
 * Best on matrices whose rows all have about the same length (stencils, FEM
 * meshes of one element type); one long row pads every row to its length, so
 * the build refuses when K*ld > max_fill x nnz (default 10) unless
 * force, naming the projected size and suggesting sell or hyb.
 * Options: max-fill, force, index-bits (auto: 16-bit column offsets from the
 * smallest column when the largest exceeds it by at most 65534 -- ELL is one
 * group; 16; 32). */
#include "formats/padded.h"

static const sps_option_desc ell_options[] = {SPS_PAD_OPTIONS, SPS_FMT_OPT_VALUES};

static sps_status ell_from_backend_csr(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    sps_pad_params p = {.kind = SPS_PAD_ELL};
    sps_pad_common(opt, "use sell (rows padded per slice of 32, with sort-window to group equal lengths) or hyb "
                        "(the long rows' excess in a COO tail)",
                   &p);
    return sps_pad_build(B, src, &p);
}

const sps_format_ops sps_format_ell = {
    .id = SPS_FMT_ELL, .name = "ell",
    .summary = "ELLPACK-R: column-major, rows padded to the longest, row lengths; for rows of near-equal length",
    SPS_FORMAT_OPTIONS(ell_options),
    SPS_PAD_HOOKS(ell),
};
