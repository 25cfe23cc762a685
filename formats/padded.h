/* The padded family: ELLPACK-R (formats/ell.c), SELL-C-sigma (formats/sell.c)
 * and RgCSR (formats/rgcsr.c) are one outer layout with three parameter sets,
 * and bell and bsell (formats/bell.c) the first two for compound entries; this
 * header and formats/padded.c hold what they share: the store, the build on the
 * backend, the way back to CSR, SpMV dispatch (the matrix family for scalar
 * entries, the compound family for the others), footprint, and the blow-up
 * check.
 *
 * Layout (kernels/format_kernels_padded.h has the slot formula):
 *   sps_pad_layout  -- the INDEX part: group pointers (int64 slot offsets), row
 *                      lengths, the optional row permutation, the column index
 *                      of every slot (-1 for padding);
 *   val             -- the VALUES, a separate array addressed by slot, ew
 *                      scalars per slot (ew = 1 for the scalar formats).
 * A compound entry type reuses the layout untouched (bell, bsell): a quaternion
 * matrix keeps the same sps_pad_layout and stores ew = 4 reals per slot, a b x b
 * block matrix ew = b*b, AoS (an entry's ew scalars together) or SoA (ew arrays
 * of `slots` scalars: the option entry-layout); the build kernels (pad_rowlen,
 * pad_sort_rows, pad_widths, pad_scatter_col, pad_scatter_val with ew and the
 * entry layout) are shared, so only the SpMV kernels are per entry type.
 *
 * Build (sps_pad_build, the same code on both backends, from a CSR already in
 * backend memory):
 *   1. rl = row lengths (pad_rowlen); when sorting, perm = stable sort by
 *      decreasing length within windows (pad_sort_rows), then rl in storage
 *      order (pad_rowlen with perm);
 *   2. w = per-group maxima and column ranges (pad_widths; ELL: of 1024-row
 *      chunks); only their extremes come to the host: the widest chunk, the
 *      smallest and largest column, the widest group span (4 integers);
 *   3. group pointers on the backend (pad_group_ptr: an exclusive scan of
 *      width_g * stride_g; ELL: two pointers from the widest row), the slot
 *      total to the host; when the widest chunk exceeds the long-row length,
 *      rl comes to the host once and the long rows are listed;
 *   4. the column width: 16 bits when every group's columns span at most
 *      SPS_PAD_COL16_SPAN (the per-group smallest columns become cbase), else
 *      32; the fill check against max_fill x nnz (before the padded arrays are
 *      allocated); pad_scatter_col and pad_scatter_val write every slot once.
 * Host traffic is a few integers (O(n) when there are long rows); the O(n)
 * and O(nnz) work stays on the backend. */
#ifndef SPS_FORMATS_PADDED_H
#define SPS_FORMATS_PADDED_H

#include "formats/csr_backend.h"
#include "formats/vdict.h"

#include <limits.h>

/* Slots always allowed whatever max_fill says: on tiny matrices the 32-row
 * alignment alone exceeds max_fill x nnz (a 1 x 1 matrix is 32 ELL slots). */
#define SPS_PAD_FILL_FLOOR 4096
/* ELL's width is the maximum of per-chunk maxima of this many rows. */
#define SPS_PAD_ELL_CHUNK 1024
#define SPS_PAD_WARP 32

typedef enum { SPS_PAD_ELL = 0, SPS_PAD_SELL, SPS_PAD_RGCSR } sps_pad_kind;

/** What a padded format asks of the builder. */
typedef struct {
    sps_pad_kind kind;
    sps_index h;          /* rows per group: ELL ignored (ld), SELL C, RgCSR G */
    sps_index window;     /* sort window in rows; 0 = no sorting (perm not stored) */
    double max_fill;      /* > 0 */
    int force;
    int index_bits;       /* 0 auto, 16 or 32 (the option index-bits) */
    const char *suggest;  /* what to use instead, for the blow-up message */
    sps_entry_layout lay; /* compound entries: AoS or SoA (scalar entries: AoS, the same thing) */
    sps_entry_layout vlay; /* compound entries: the kernels' vector layout (sps_cmp_apply) */
    sps_values_mode values; /* scalar entries: the option values (formats/vdict.h); compound: plain */
} sps_pad_params;

/** The store of a padded matrix (everything in backend memory). */
typedef struct {
    sps_pad_layout L;     /* index part (owned: grp_ptr, rl, perm, col) */
    void *val;            /* L.slots * ew scalars; with a dictionary, L.slots indices (uint8_t) */
    sps_vdict vd;         /* the dictionary (L.vdict = vd.dict), or none */
    int ew;               /* scalars per entry: sps_entry_values (1 for scalar entries) */
    sps_entry_layout lay; /* how an entry's ew scalars are stored (compound entries) */
    sps_entry_layout vlay; /* the compound kernels' vector layout (option vector-layout) */
    sps_pad_kind kind;
    sps_index param;      /* ELL: ld, SELL: C, RgCSR: G */
    sps_index window;     /* 0 when rows are not permuted */
    sps_index width;      /* ELL: K (the longest row); SELL/RgCSR: the widest group */
} sps_pad_store;

/** Name of a padded kind for messages ("ELL", "SELL", "RgCSR"). */
const char *sps_pad_kind_name(sps_pad_kind k);

/** Build B->store from a CSR in backend memory (B's n, m, nnz, t, entry, ctx set;
 *  src->val holds sps_entry_values(B->entry) scalars a position). */
sps_status sps_pad_build(sps_matrix B, const sps_csr_store *src, const sps_pad_params *p);
/** Back to canonical host CSR (downloads and converts on the host). */
sps_status sps_pad_to_csr(sps_matrix A, sps_csr_host *out);
sps_status sps_pad_spmv(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y);
size_t sps_pad_footprint(sps_matrix A, int64_t *stored);
/** 16 or 32: the column index width the store was built with. */
int sps_pad_index_bits_of(sps_matrix A);
/** The values of the store's dictionary, 0 without one. */
int sps_pad_value_dict_of(sps_matrix A);
void sps_pad_destroy(sps_matrix A);

/** Bytes of a padded store: values (value_bytes a slot: ew scalars, or a dictionary's
 *  1-byte index), columns (col_bytes: 4, or 2 plus a base column a group), group
 *  pointers, row lengths, permutation, long-row list (a dictionary's own bytes apart). */
static inline size_t sps_pad_bytes(int64_t slots, size_t value_bytes, int col_bytes, sps_index ngroups, sps_index n,
                                   int permuted, sps_index nlong)
{
    return (size_t)slots * (value_bytes + (size_t)col_bytes) +
           ((size_t)ngroups + 1) * sizeof(int64_t) + (col_bytes == 2 ? (size_t)ngroups * sizeof(sps_index) : 0) +
           (size_t)n * sizeof(sps_index) * (permuted ? 2 : 1) + (size_t)nlong * sizeof(sps_index);
}

/** The options the padded formats share, after their own: max-fill, force,
 *  index-bits (formats/format.h has the first two, shared with DIA). */
#define SPS_PAD_OPTIONS                                                                                            \
    SPS_FMT_OPT_MAX_FILL, SPS_FMT_OPT_FORCE,                                                                       \
    {.name = "index-bits", .type = SPS_OPT_CHOICE, .def = "auto", .choices = "auto|16|32",                         \
     .help = "bits of a stored column index: auto (16 where the columns of every slice/group span at most "        \
             "65534, else 32), 16 (refused where they do not) or 32"}

/** slice-height: the option of the sliced formats (sell, bsell). */
#define SPS_PAD_OPT_SLICE_HEIGHT                                                                                   \
    {.name = "slice-height", .type = SPS_OPT_INT, .def = "32", .min = 16, .max = 32, .choices = "16|32",            \
     .help = "rows per slice (C), 16 or 32"}

/* Sorting rows by length within windows (sell, bsell): the option and its rule. */
#define SPS_PAD_OPT_SORT_WINDOW                                                                                    \
    {.name = "sort-window", .type = SPS_OPT_INT, .def = "0", .min = 0, .max = INT_MAX,                             \
     .help = "sort rows by decreasing length within windows of N rows (sigma); 0 or 1 = no sorting, else a "      \
             "multiple of the slice height"}
/** The rule of sort-window: 0 or 1 (no sorting) or a multiple of slice-height. */
const char *sps_pad_sort_rules(sps_options opt, char *why, size_t len);
/** p->window from sort-window (0 when it asks for no sorting). */
static inline int sps_pad_window(sps_options opt)
{
    const int sigma = sps_opt_int(opt, "sort-window");
    return sigma > 1 ? sigma : 0;
}

/** p->max_fill, force, index_bits and values (plain where the format has no such option) from
 *  the shared options, and p->suggest. */
void sps_pad_common(sps_options opt, const char *suggest, sps_pad_params *p);

/** from_csr of a padded format whose from_backend_csr is build: stage h, build, unstage. */
sps_status sps_pad_from_csr(sps_matrix B, const sps_csr_host *h, sps_options opt);

/* Every hook of a padded format but its build from backend CSR (P_from_backend_csr)
 * is the family's: the registry entries of ell, sell, rgcsr, bell and bsell. */
#define SPS_PAD_HOOKS(P)                                                                                       \
    .from_csr = sps_pad_from_csr, .to_csr = sps_pad_to_csr, .from_backend_csr = P##_from_backend_csr,          \
    .spmv = sps_pad_spmv, .index_bits = sps_pad_index_bits_of, .value_dict = sps_pad_value_dict_of,           \
    .footprint = sps_pad_footprint,                                                                            \
    .destroy = sps_pad_destroy

#endif
