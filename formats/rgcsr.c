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
 * Options (rgcsr_options): group-size (G, 32..256, default 128), sort-rows,
 * max-fill, force, index-bits (auto: 16-bit column offsets per group where they fit; 16; 32). */
#include "formats/padded.h"

/* group-size: the paper finds G = 128 best (Table 4: occupancy vs artificial
 * zeros); 32, a warp, is the least that coalesces; 256 the most a block holds. */
static const sps_option_desc rgcsr_options[] = {
    {.name = "group-size", .type = SPS_OPT_INT, .def = "128", .min = 32, .max = 256, .help = "rows per group (G)"},
    {.name = "sort-rows", .type = SPS_OPT_BOOL, .def = "false", .min = 0, .max = 1,
     .help = "rows in descending-length order (fewer artificial zeros)"},
    SPS_PAD_OPTIONS,
    SPS_FMT_OPT_VALUES,
};

static sps_status rgcsr_from_backend_csr(sps_matrix B, const sps_csr_store *src, sps_options opt)
{
    const int sorted = sps_opt_int(opt, "sort-rows");
    sps_pad_params p = {.kind = SPS_PAD_RGCSR,
                        .h = sps_opt_int(opt, "group-size"),
                        .window = sorted ? (B->n > 0 ? B->n : 1) : 0}; /* one window: a global sort */
    sps_pad_common(opt,
                   sorted ? "use a smaller group-size, or sell, hyb or csr"
                          : "use sort-rows (descending row lengths), a smaller group-size, or sell, hyb or csr",
                   &p);
    return sps_pad_build(B, src, &p);
}

const sps_format_ops sps_format_rgcsr = {
    .id = SPS_FMT_RGCSR, .name = "rgcsr",
    .summary = "row-grouped CSR: groups of 32..256 rows interleaved, row lengths, optional descending-length order",
    SPS_FORMAT_OPTIONS(rgcsr_options),
    SPS_PAD_HOOKS(rgcsr),
};
