/* HiSparse (issue 23; Derler, Zayer, Seidel, Steinberger, ICS 2017; seed-methods §2): the
 * hierarchical format's structure, built and read on the host: the structure, its exact
 * round trip to CSR, the host product over the tree (the oracle of the schedule's) and the
 * sum of two trees.  The registered format (SPS_FMT_HISPARSE, sps_matrix_add) is at the end
 * of formats/hisparse.c.
 *
 * The matrix is a tree of d x d nodes (d = 2^lg, 2..256), depth levels: a node at level l
 * covers d^(depth - l) rows and columns, a leaf (level depth - 1) d x d entries.  Every
 * node lives in one pool, 16-byte aligned; a reference is the node's offset in units of
 * 16 bytes, shifted left by 2, with the node type in the low 2 bits (a 32-bit reference
 * addresses 16 GiB); the pool's first 16 bytes are a header, so reference 0 means "no
 * node".  Node types and layouts (leaf values of vsize bytes, inner "values" 32-bit child
 * references):
 *   COO1 / COO2 / COO4  (1, 2, >= 3 entries: the entries a thread loads at once on the
 *        GPU) uint32 count; count rounded up to 1 / 2 / 4 pairs of uint8 local (row, col),
 *        row-major; padding to the values' alignment (what a thread loads at once, at most
 *        16 bytes); as many values (the padding's: zero, at (0, 0), beyond count so never
 *        read as entries).
 *   dense  d x d slots row-major: an inner node's references (0: empty child); a leaf's
 *        values after a bitmask of the d^2 slots that hold an entry (d^2 / 8 bytes, padded
 *        to 16), so stored zeros survive the round trip (the paper's dense leaf has none).
 * A node is dense where that is smaller than its sparse form.  Empty children are left
 * out.  Entries within a node, and children within an inner node, are in row-major order:
 * a walk of the tree meets each row's entries in increasing column order. */
#ifndef SPS_FORMATS_HISPARSE_H
#define SPS_FORMATS_HISPARSE_H

#include "formats/format.h"
#include "kernels/format_kernels_hisparse.h" /* the layout: sps_hisparse, references, node types */

/** From host CSR arrays (columns sorted and distinct within each row, as the library's
 *  CSR keeps them), values of vsize bytes each (1, 2, 4, 8 or 16), node size d (a power of two,
 *  2..256).  SPS_ERR_ARG for a bad d, unsorted columns or a pool beyond 16 GiB;
 *  SPS_ERR_ALLOC. */
sps_status sps_hisparse_from_csr(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                                 const sps_index *col, const void *val, size_t vsize, int d, sps_hisparse *H);
/** Back to CSR: rowptr (n + 1), col and val (nnz each) allocated by the caller; exactly the
 *  arrays it was built from.  trans: the CSR of A^T instead (m + 1 row pointers), sorted
 *  columns too (the walk meets a column's entries in increasing row order). */
void sps_hisparse_to_csr(const sps_hisparse *H, int trans, sps_index *rowptr, sps_index *col, void *val);
/** y += op(A) x, values of type t (kernels/cpu/hisparse.inc). */
void sps_hisparse_spmv(sps_scalar t, sps_hisparse_view A, const void *x, void *y);
/** C = op(A) + op(B) (each view's scale and transpose) into a new tree of node size d: the
 *  union of the patterns (an entry in both: alpha a + beta b in t's arithmetic); on the
 *  host, by the paper's dual traversal where A, B and C share d (the oracle of
 *  sps_matrix_add's backend sum), else through CSR.  SPS_ERR_ARG for sizes or value sizes that differ. */
sps_status sps_hisparse_add(sps_context ctx, sps_scalar t, sps_hisparse_view A, sps_hisparse_view B, int d,
                            sps_hisparse *C);
/** The same through CSR (both walked to CSR, merged row by row, the sum built as a tree):
 *  the dual traversal's oracle, the same pool byte for byte. */
sps_status sps_hisparse_add_csr(sps_context ctx, sps_scalar t, sps_hisparse_view A, sps_hisparse_view B, int d,
                                sps_hisparse *C);
void sps_hisparse_free(sps_hisparse *H);

/** A registered HiSparse matrix (SPS_FMT_HISPARSE) as the host sees it: its tree (the pool
 *  downloaded) and its product's schedule (kernels/format_kernels_hisparse.h), for the tests
 *  that hold the backend build to the host builder.  SPS_ERR_ARG for another format. */
typedef struct {
    sps_hisparse H;
    int trans; /* the matrix is H's transpose (a sum of transposed operands: sps_matrix_add) */
    sps_hs_item *sparse, *dense;
    int64_t *warp_seg; /* nwarps + 1 (NULL without sparse items) */
    int64_t nsparse, ndense, nwarps;
} sps_hisparse_copy;
sps_status sps_hisparse_download(sps_matrix A, sps_hisparse_copy *out);
void sps_hisparse_copy_free(sps_hisparse_copy *c);

#endif
