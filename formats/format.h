/* libspsolve — what formats/ shares: the host CSR interchange, the format
 * table every format fills, the matrix object and the format registry.
 * Used by formats/, precond/ (preconditioners that read entries) and tests;
 * core/ and solvers/ see matrices only as operators. */
#ifndef SPS_FORMATS_FORMAT_H
#define SPS_FORMATS_FORMAT_H

#include "core/internal.h"
#include "kernels/launch.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ host CSR */
/** The interchange format: host memory, 0-based, columns sorted within rows, no
 *  duplicates, indices in range.  Values interleaved for complex; a compound entry
 *  is sps_entry_values(entry) consecutive scalars (blocks row-major). */
typedef struct {
    sps_index n, m;     /* in entries (a block matrix of n x m blocks acts on m b-vectors) */
    int64_t nnz;
    sps_scalar t;
    sps_entry_desc entry; /* zeroed: scalar */
    sps_index *rowptr;  /* n + 1 */
    sps_index *col;     /* nnz */
    void *val;          /* nnz * sps_entry_values(entry) scalars of type t */
} sps_csr_host;

void sps_csr_host_free(sps_csr_host *c);
/** out = h^T (scalar entries; allocated, free with sps_csr_host_free): a counting sort by
 *  column, rows ascending inside each column, so canonical input gives canonical output. */
sps_status sps_csr_host_transpose(sps_context ctx, const sps_csr_host *h, sps_csr_host *out);
/** Build canonical host CSR from 0-based triplets of doubles (complex interleaved
 *  when src_complex), converting to type t: sorts, sums duplicates, checks ranges. */
sps_status sps_csr_host_from_triplets(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                      const sps_index *row, const sps_index *col, const double *val,
                                      int src_complex, sps_scalar t, sps_csr_host *out);
/** The same with entries of type e: val holds sps_entry_values(e) values (doubles, or
 *  complex pairs) per triplet, summed member by member over duplicates.  base: how the
 *  messages number an entry's row and column (0 for the API's arrays, 1 for a file's). */
sps_status sps_csr_host_from_triplets_entries(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                              const sps_index *row, const sps_index *col, const double *val,
                                              int src_complex, sps_entry_desc e, sps_scalar t, int base,
                                              sps_csr_host *out);
/** The scalar expansion of in (n*d x m*d scalars, d = sps_entry_dim(in->entry)): each
 *  entry becomes its d x d block of scalars, explicit zeros kept (a block's elements;
 *  a quaternion's L(q) = [[w,-x,-y,-z],[x,w,-z,y],[y,z,w,-x],[z,-y,x,w]]).  A scalar in
 *  gives a copy.  Columns stay sorted within rows. */
sps_status sps_csr_host_expand(sps_context ctx, const sps_csr_host *in, sps_csr_host *out);
/** Group a scalar in into b x b blocks (b = 2..8): every block that holds an entry of
 *  in becomes an entry of out, its other elements explicit zeros.  Dimensions that b
 *  does not divide, or compound entries, are SPS_ERR_ARG naming `name` (a file). */
sps_status sps_csr_host_group_blocks(sps_context ctx, const sps_csr_host *in, int b, const char *name,
                                     sps_csr_host *out);

/* ------------------------------------------------------------------ matrices & formats */
/** CSR arrays in backend memory (the store of a CSR matrix). */
typedef struct sps_csr_store {
    sps_index *rowptr, *col;
    void *val;
} sps_csr_store;

/* The most stored entries (padding included) a padded or DIA build takes, forced or not: 2^52,
 * beyond any machine's memory, and low enough that their byte counts (up to 1028 bytes an entry,
 * an 8x8 block of c64 and its index) stay exact in a size_t instead of wrapping to a small
 * allocation. */
#define SPS_MAX_STORED ((int64_t)1 << 52)

/** The options every format with a padding limit declares (formats/dia.c and the
 *  padded family): entries of an sps_option_desc table. */
#define SPS_FMT_OPT_MAX_FILL                                                                                         \
    {.name = "max-fill", .type = SPS_OPT_REAL, .def = "10", .min = 1, .max = HUGE_VAL,                             \
     .help = "refuse the conversion when the stored entries (padding included) would exceed X * nnz"}
#define SPS_FMT_OPT_FORCE                                                                                            \
    {.name = "force", .type = SPS_OPT_BOOL, .def = "false", .min = 0, .max = 1, .help = "convert even beyond max-fill"}

/** The option of every format of compound entries (bcsr, bell, bsell): how an entry's
 *  members are stored; its words are in sps_entry_layout order. */
#define SPS_FMT_OPT_ENTRY_LAYOUT                                                                                     \
    {.name = "entry-layout", .type = SPS_OPT_CHOICE, .def = "aos", .choices = "aos|soa",                           \
     .help = "store a compound entry's members together (aos) or one array per member (soa)"}

/** The vector layout of the compound formats' kernels: aos, the operator's own (no
 *  conversion), or soa, converted at the operator's boundary (sps_cmp_apply). */
#define SPS_FMT_OPT_VECTOR_LAYOUT                                                                                    \
    {.name = "vector-layout", .type = SPS_OPT_CHOICE, .def = "aos", .choices = "aos|soa",                          \
     .help = "vectors the kernels read and write: aos (an entry's scalars together, the operator's layout) or "   \
             "soa (one array per member; x and y are converted at each product)"}

typedef struct sps_format_ops {
    sps_format id;
    const char *name;
    const char *summary;                /* one line for --help */
    /* The options the format reads (spsolve/options.h), and its rules between
     * them (NULL: none).  The hooks below get a set made for these declarations,
     * already checked, and read it with sps_opt_int / sps_opt_num. */
    const sps_option_desc *options;
    int noptions;
    sps_options_rule_fn rules;
    /* Optional: the format that builds a matrix of these options instead (CSR with
     * csr-kernel hola is the hola format); NULL or returning NULL: this one.  That
     * format's hooks get this format's options. */
    const struct sps_format_ops *(*resolve)(sps_options opt);
    /* Build B->store from canonical host CSR (B's ctx, t, n, m, nnz are set). */
    sps_status (*from_csr)(sps_matrix B, const sps_csr_host *csr, sps_options opt);
    /* Copy A back into canonical host CSR (allocates out). */
    sps_status (*to_csr)(sps_matrix A, sps_csr_host *out);
    /* Optional: canonical CSR straight into the caller's host arrays (sps_matrix_export_csr),
     * for a format that stores it: no host copy in between; NULL: to_csr, then a copy. */
    sps_status (*export_csr)(sps_matrix A, sps_index *rowptr, sps_index *col, void *val);
    /* Optional: build B->store from a CSR matrix already in backend memory, with
     * backend kernels (so a CUDA build never leaves the device; the same code runs
     * on the CPU backend).  sps_matrix_convert prefers it when the source has backend_csr. */
    sps_status (*from_backend_csr)(sps_matrix B, const struct sps_csr_store *src, sps_options opt);
    /* Optional: A's own arrays as CSR in backend memory with AoS entries (csr; bcsr with AoS
     * entries), else NULL: sps_matrix_convert then builds the target with its from_backend_csr
     * on the backend instead of through a host copy. */
    const struct sps_csr_store *(*backend_csr)(sps_matrix A);
    /* y = a op(A) x + b y on backend pointers. */
    sps_status (*spmv)(sps_matrix A, sps_op_mode mode, sps_cplx a, const void *x, sps_cplx b, void *y);
    /* Bytes of the stored format; *stored = entries stored including padding. */
    size_t (*footprint)(sps_matrix A, int64_t *stored);
    void (*destroy)(sps_matrix A);
    /* Optional: y = A x and slots[out] = x^H y in one pass (A square); NULL: spmv, then dot. */
    sps_status (*spmv_dot)(sps_matrix A, const void *x, void *y, sps_cplx *slots, int out);
    /* Optional: pnew = z + c pold, q = A pnew, slots[out] = pnew^H q in one pass; NULL:
     * waxpy_s, then spmv_dot (or spmv + dot). */
    sps_status (*spmv_xpay_dot)(sps_matrix A, const void *z, sps_scoef c, const void *pold, void *pnew, void *q,
                                sps_cplx *slots, int out);
    /* Optional: one CG iteration, spmv_xpay_dot (out = k.pq) then cg_step, fused; NULL:
     * the two calls. */
    sps_status (*cg_iter)(sps_matrix A, const void *z, sps_scoef c, const void *pold, void *pnew, void *q, void *x,
                          void *r, sps_cplx *slots, sps_cg_slots k);
    /* Nonzero: the format stores compound entries (blocks, quaternions: bcsr, bell,
     * bsell) and no scalar ones; zero: scalar entries only. */
    int compound;
    /* Nonzero: y = A x on the GPU sums with atomics, so its bits vary from run to run
     * (hola, hisparse); zero: bit-reproducible on every backend (sps_format_reproducible). */
    int spmv_atomic;
    /* Optional (compound formats): out (backend memory, n d d scalars) = the scalar expansion of
     * each block-row's diagonal entry, row-major, zeros where a row has none; NULL: the
     * callers go through a host copy. */
    sps_status (*diag_blocks)(sps_matrix A, void *out);
    /* Optional: bits of each stored entry's column index (sps_matrix_info_t.index_bits); NULL: 32. */
    int (*index_bits)(sps_matrix A);
    /* Optional: the values of its value dictionary (sps_matrix_info_t.value_dict, formats/vdict.h);
     * NULL or 0: plain values. */
    int (*value_dict)(sps_matrix A);
} sps_format_ops;

/** The format registry: one entry per format compiled in, in display order. */
const sps_format_ops *sps_format_lookup(sps_format id);
int sps_format_count(void);
const sps_format_ops *sps_format_at(int i);

struct sps_matrix_s {
    sps_context ctx;
    const sps_format_ops *ops;
    sps_scalar t;
    sps_entry_desc entry;         /* the entry type (kernels: sps_mat_kernels_for) */
    sps_index n, m;               /* in entries */
    int64_t nnz;
    sps_symmetry sym;
    void *store;                  /* format private */
    sps_launch_variant lv;        /* the kernels' launch variant (kernels/launch.h); zero: the defaults */
    char warning[256];            /* what reading it went on despite (sps_matrix_warning), "" when nothing */
};

/** The size of A as an operator: n * d x m * d scalars (d = sps_entry_dim: 1 for scalar entries). */
static inline sps_index sps_matrix_op_rows(const struct sps_matrix_s *A) { return A->n * (sps_index)sps_entry_dim(A->entry); }
static inline sps_index sps_matrix_op_cols(const struct sps_matrix_s *A) { return A->m * (sps_index)sps_entry_dim(A->entry); }

/** A compound matrix's product on the operator's AoS vectors, by call(A, mode, vlay, a,
 *  x, b, y), which runs A's kernels on vectors of layout vlay: with vlay AoS directly,
 *  with SoA on scratch vectors relaid out before (x, and y when b != 0) and after (y)
 *  (formats/compound_apply.c). */
typedef sps_status (*sps_cmp_call)(sps_matrix A, sps_op_mode mode, sps_entry_layout vlay, sps_cplx a, const void *x,
                                   sps_cplx b, void *y);
sps_status sps_cmp_apply(sps_matrix A, sps_op_mode mode, sps_entry_layout vlay, sps_cmp_call call, sps_cplx a,
                         const void *x, sps_cplx b, void *y);

/** Set A's launch variant (kernels/launch.h; NULL: the defaults), which its products
 *  hand to the kernels (formats/operator.c).  Internal: for the autotuner, tests and
 *  spbench, not the public API.  SPS_ERR_ARG for a field outside its documented
 *  values (A unchanged); whether a valid value is compiled in for A's scalar type
 *  and format is checked by the product, which fails with SPS_ERR_ARG if not. */
sps_status sps_matrix_set_launch_variant(sps_matrix A, const sps_launch_variant *v);

/** Host CSR copy of any matrix (allocates h; freed on failure). */
sps_status sps_matrix_to_host(sps_matrix A, sps_csr_host *h);
/** A matrix of format fmt (its default options) from CSR arrays in backend memory (copied;
 *  the caller keeps src): the format's from_backend_csr.  n x m entries of type e, nnz of
 *  them; sizes checked as every builder does. */
sps_status sps_matrix_from_backend_csr(sps_context ctx, const sps_csr_store *src, sps_index n, sps_index m,
                                      int64_t nnz, sps_entry_desc e, sps_scalar t, sps_format fmt, sps_matrix *out);
/** A matrix of format fmt (options opt, or NULL: the defaults) of n x m scalar entries of type
 *  t, nnz of them, whose store build(A, arg, options) makes: for a format's own builders that
 *  start from neither CSR (HiSparse's sum, formats/hisparse.c). */
sps_status sps_matrix_build(sps_context ctx, sps_format fmt, sps_options opt, sps_index n, sps_index m, int64_t nnz,
                            sps_scalar t, sps_status (*build)(sps_matrix A, void *arg, sps_options opt), void *arg,
                            sps_matrix *out);
/** The checks of every builder on sizes, entry type and scalar (fn: the public call, in messages). */
sps_status sps_matrix_entry_args(sps_context ctx, const char *fn, sps_index n, sps_index m, sps_entry_desc e,
                                 sps_scalar t);
/** Make a matrix of format fmt from canonical host CSR (ownership of csr stays with
 *  caller).  opt: a set of fmt's options (sps_format_options_create), or NULL for
 *  the defaults. */
sps_status sps_matrix_from_csr_host(sps_context ctx, const sps_csr_host *csr, sps_format fmt, sps_options opt,
                                    sps_symmetry sym, sps_matrix *A);
/** Number of entries of a static option table. */
#define SPS_NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* Registry entries (sps_format_ops initialisers): the options table a format
 * declares, and the hooks of a format that names them P_from_csr, P_to_csr,
 * P_build (from backend CSR), P_spmv, P_footprint and P_destroy. */
#define SPS_FORMAT_OPTIONS(a) .options = (a), .noptions = SPS_NOPTS(a)
#define SPS_FORMAT_HOOKS(P)                                                                                    \
    .from_csr = P##_from_csr, .to_csr = P##_to_csr, .from_backend_csr = P##_build, .spmv = P##_spmv,           \
    .footprint = P##_footprint, .destroy = P##_destroy

#ifdef __cplusplus
}
#endif
/* The pick of SPS_FMT_AUTO for a scalar matrix of n rows (m columns) with these row
 * pointers and columns on backend be (formats/auto.c; sps_matrix_auto_format for a
 * matrix).  col may be NULL: the rule that counts diagonals (dia) is then not tried. */
sps_format sps_format_auto_of(sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col, sps_backend be,
                              const char **why);
/* The same for matrix A from its host pattern (compound entries: bcsr). */
sps_format sps_format_auto_pick(sps_matrix A, const sps_index *rowptr, const sps_index *col, const char **why);

/* A's pattern on the host: of a CSR matrix only rowptr (and col when want_col)
 * cross to the host; of another format its host CSR copy (h, values included). */
typedef struct {
    sps_index *rowptr, *col;
    sps_csr_host h;
} sps_host_pattern;
sps_status sps_matrix_host_pattern(sps_matrix A, int want_col, sps_host_pattern *p);
void sps_host_pattern_free(sps_host_pattern *p);

/* Element (r, c) of the scalar expansion of entry k of AoS values val into dst (one
 * scalar of type t): a block's own element, a quaternion's entry of L(q). */
void sps_entry_elem(sps_entry_desc e, sps_scalar t, const void *val, int64_t k, int r, int c, void *dst);

/* Slots of a layout that pads each group of g consecutive rows to its longest row
 * (the last group counted whole): ELL with g = n, SELL-C and RgCSR with g = C. */
int64_t sps_group_slots(sps_index n, const sps_index *rowptr, sps_index g);
/* Occupied diagonals (column - row) of an n x m pattern, DIA's stored diagonals; counting
 * stops once past stop (stop < 0: all).  -1 when out of host memory. */
int64_t sps_pattern_diagonals(sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col, int64_t stop);

#endif
