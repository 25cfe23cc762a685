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
 * Options: slice_height (C: 16 or 32, default 32), sort_window (sigma: 0 or 1 =
 * no sorting, else a positive multiple of C), max_fill, force, index_bits (0
 * auto: each slice's columns as 16-bit offsets from its smallest where every
 * slice spans at most 65534 columns; 16; 32). */
#include "formats/padded.h"

#define SELL_DEFAULT_C 32

static sps_status sell_params(sps_matrix B, const sps_format_options *opt, sps_pad_params *p)
{
    const int C = opt->slice_height ? opt->slice_height : SELL_DEFAULT_C;
    if (C != 16 && C != 32)
        return sps_error(B->ctx, SPS_ERR_ARG, "sell: slice_height must be 16 or 32 (got %d)", opt->slice_height);
    const int sigma = opt->sort_window;
    if (sigma < 0 || (sigma > 1 && sigma % C != 0))
        return sps_error(B->ctx, SPS_ERR_ARG,
                         "sell: sort_window must be 0 or 1 (no sorting) or a positive multiple of slice_height %d (got %d)",
                         C, sigma);
    p->kind = SPS_PAD_SELL;
    p->h = C;
    p->window = sigma > 1 ? sigma : 0;
    p->force = opt->force;
    p->suggest = sigma > 1 ? "use a larger sort_window, or hyb or csr"
                           : "use sort_window (e.g. 1024) to sort rows by length, or hyb or csr";
    SPS_CHECK(sps_pad_index_bits(B->ctx, "sell", opt, &p->index_bits));
    return sps_pad_max_fill(B->ctx, "sell", opt, &p->max_fill);
}

static sps_status sell_from_backend_csr(sps_matrix B, const sps_csr_store *src, const sps_format_options *opt)
{
    sps_pad_params p;
    SPS_CHECK(sell_params(B, opt, &p));
    return sps_pad_build(B, src, &p);
}

static sps_status sell_from_csr(sps_matrix B, const sps_csr_host *h, const sps_format_options *opt)
{
    return sps_csr_build_from_host(B, h, opt, sell_from_backend_csr);
}

const sps_format_ops sps_format_sell = {SPS_FMT_SELL, "sell",
                                        "SELL-C-sigma: slices of 16/32 rows padded per slice, optional sorting by "
                                        "row length; for varying row lengths",
                                        sell_from_csr, sps_pad_to_csr, sell_from_backend_csr, sps_pad_spmv,
                                        sps_pad_footprint, sps_pad_destroy, NULL, NULL, NULL,
                                        sps_pad_index_bits_of};
