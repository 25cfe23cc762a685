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
 * opt->force, naming the projected size and suggesting sell or hyb.
 * Options: max_fill, force, index_bits (0 auto: 16-bit column offsets from the
 * smallest column when the largest exceeds it by at most 65534 -- ELL is one
 * group; 16; 32). */
#include "formats/padded.h"

static sps_status ell_params(sps_matrix B, const sps_format_options *opt, sps_pad_params *p)
{
    p->kind = SPS_PAD_ELL;
    p->h = 0;
    p->window = 0;
    p->force = opt->force;
    p->suggest = "use sell (rows padded per slice of 32, with sort_window to group equal lengths) or hyb "
                 "(the long rows' excess in a COO tail)";
    SPS_CHECK(sps_pad_index_bits(B->ctx, "ell", opt, &p->index_bits));
    return sps_pad_max_fill(B->ctx, "ell", opt, &p->max_fill);
}

static sps_status ell_from_backend_csr(sps_matrix B, const sps_csr_store *src, const sps_format_options *opt)
{
    sps_pad_params p;
    SPS_CHECK(ell_params(B, opt, &p));
    return sps_pad_build(B, src, &p);
}

static sps_status ell_from_csr(sps_matrix B, const sps_csr_host *h, const sps_format_options *opt)
{
    return sps_csr_build_from_host(B, h, opt, ell_from_backend_csr);
}

const sps_format_ops sps_format_ell = {SPS_FMT_ELL, "ell",
                                       "ELLPACK-R: column-major, rows padded to the longest, row lengths; "
                                       "for rows of near-equal length",
                                       ell_from_csr, sps_pad_to_csr, ell_from_backend_csr, sps_pad_spmv,
                                       sps_pad_footprint, sps_pad_destroy, NULL, NULL, NULL,
                                       sps_pad_index_bits_of};
