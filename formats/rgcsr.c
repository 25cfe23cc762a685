/* RgCSR, row-grouped CSR (Oberhuber, Suzuki, Vacata, "New Row-grouped CSR
 * format for storing the sparse matrices on GPU with implementation in CUDA",
 * Acta Technica 2011; ../shared/seeds/rgcsr-row-grouped-csr.txt): groups of G
 * consecutive rows; inside a group the first entries of all its rows are
 * stored, then the second entries, ... (§3.4, Figure 5), each row padded with
 * artificial zeros to the group's longest row.  Exactly as the paper's kernel,
 * entry k of row r of group g is at groupPointers[g] + k*Gg + (r mod G), where
 * Gg = G except for a last, shorter group whose stride is its own row count
 * (currentGroupSize = rowSize mod G): the last group is not padded with rows.
 * rowLengths[] lets each thread stop at its row's end (the difference to
 * sliced ELLPACK the paper points out).  With sort_rows the rows are put in
 * descending length order first (the paper's Table 7 "descending" ordering,
 * the one that removes the most artificial zeros); the permutation stays
 * inside the format.  sps_matrix_info's fill_percent is the paper's Table 4
 * "artificial zeros" (padding as % of nnz).  Storage: slots (values, and
 * 16-bit column offsets plus one base column a group where they fit, else
 * 32-bit columns), group pointers (int64), n row lengths, n permutation entries
 * with sort_rows (the shared padded layout, formats/padded.h).
 *
 * GPU: one thread per row, 2 or 4 for rows averaging 32 / 128+ entries (the
 * paper launches blockDim = G, one block per group; ours finds the group from
 * the row, any block size).  The paper finds
 * G = 128 best (occupancy vs artificial zeros); 32 satisfies coalescing.
 * Options: group_size (G, 32..256, default 128), sort_rows, max_fill, force,
 * index_bits (0 auto: 16-bit column offsets per group where they fit; 16; 32). */
#include "formats/padded.h"

#define RGCSR_DEFAULT_G 128 /* the paper's best group size (Table 4) */
#define RGCSR_MIN_G 32      /* a warp: the least that coalesces */
#define RGCSR_MAX_G 256

static sps_status rgcsr_params(sps_matrix B, const sps_format_options *opt, sps_pad_params *p)
{
    const int G = opt->group_size ? opt->group_size : RGCSR_DEFAULT_G;
    if (G < RGCSR_MIN_G || G > RGCSR_MAX_G)
        return sps_error(B->ctx, SPS_ERR_ARG, "rgcsr: group_size must be %d..%d (got %d)", RGCSR_MIN_G, RGCSR_MAX_G,
                         opt->group_size);
    p->kind = SPS_PAD_RGCSR;
    p->h = G;
    p->window = opt->sort_rows ? (B->n > 0 ? B->n : 1) : 0; /* one window: a global sort */
    p->force = opt->force;
    p->suggest = opt->sort_rows ? "use a smaller group_size, or sell, hyb or csr"
                                : "use sort_rows (descending row lengths), a smaller group_size, or sell, hyb or csr";
    SPS_CHECK(sps_pad_index_bits(B->ctx, "rgcsr", opt, &p->index_bits));
    return sps_pad_max_fill(B->ctx, "rgcsr", opt, &p->max_fill);
}

static sps_status rgcsr_from_backend_csr(sps_matrix B, const sps_csr_store *src, const sps_format_options *opt)
{
    sps_pad_params p;
    SPS_CHECK(rgcsr_params(B, opt, &p));
    return sps_pad_build(B, src, &p);
}

static sps_status rgcsr_from_csr(sps_matrix B, const sps_csr_host *h, const sps_format_options *opt)
{
    return sps_csr_build_from_host(B, h, opt, rgcsr_from_backend_csr);
}

const sps_format_ops sps_format_rgcsr = {SPS_FMT_RGCSR, "rgcsr",
                                         "row-grouped CSR: groups of 32..256 rows interleaved, row lengths, optional "
                                         "descending-length order",
                                         rgcsr_from_csr, sps_pad_to_csr, rgcsr_from_backend_csr, sps_pad_spmv,
                                         sps_pad_footprint, sps_pad_destroy, NULL, NULL, NULL,
                                         sps_pad_index_bits_of};
