/* libspsolve — sparse matrices.
 *
 * Host CSR is the interchange: readers produce it, every format converts from
 * it.  A matrix is built once in a context; on the CUDA backend its arrays live
 * in device memory. */
#ifndef SPSOLVE_MATRIX_H
#define SPSOLVE_MATRIX_H
#include "spsolve/types.h"
#include "spsolve/options.h"
#ifdef __cplusplus
extern "C" {
#endif

/** Symmetry declared by the source (a Matrix Market header, or the generator). */
typedef enum { SPS_SYM_GENERAL = 0, SPS_SYM_SYMMETRIC, SPS_SYM_SKEW, SPS_SYM_HERMITIAN } sps_symmetry;

/** How CSR's SpMV (op N) is scheduled on the GPU (the csr option csr-kernel, whose
 *  words auto|rows|merge|hola are in this order):
 *  rows: groups of lanes per row sized from the average row length (the default
 *  for regular rows); merge: the merge-path schedule, every thread the same number
 *  of row ends + entries (kernels/csr_merge.h; for irregular row lengths, at
 *  8 bytes a tile border + 2 scalars a tile of 1536 items); auto: merge when the
 *  longest row exceeds SPS_CSR_MERGE_RATIO times the average (and 64 entries), or
 *  when the matrix is small (up to 128 tiles) and its longest row is longer than
 *  the row kernel's medium-row threshold (8 lanes' worth).
 *  Both are deterministic.  The CPU backend multiplies rows either way.  With the
 *  merge path on the GPU, SpMV^T (without transpose_explicit) runs Hola's
 *  balanced SpMV^T (4 bytes more per 2048 non-zeros); it scatters with atomics,
 *  as the row kernel's SpMV^T does.  hola: the matrix is built as the hola format
 *  (Hola's nonzero-split SpMV, with atomics: not bit-reproducible). */
typedef enum {
    SPS_CSR_KERNEL_AUTO = 0, SPS_CSR_KERNEL_ROWS = 1, SPS_CSR_KERNEL_MERGE = 2, SPS_CSR_KERNEL_HOLA = 3
} sps_csr_kernel;
#define SPS_CSR_MERGE_RATIO 16

/** Description of a matrix (sps_matrix_info). */
typedef struct {
    sps_index rows, cols;
    int64_t nnz;           /**< stored nonzeros (after symmetric expansion, duplicates summed) */
    sps_scalar scalar;
    sps_format format;
    const char *format_name;
    sps_symmetry symmetry; /**< as declared by the source; the storage is always general */
    size_t bytes;          /**< memory footprint of the stored format, padding included */
    int64_t stored_entries;/**< entries stored including padding (== nnz for CSR/COO) */
    double fill_percent;   /**< padding as % of nnz */
    sps_backend backend;   /**< where the arrays live */
    int index_bits;        /**< bits of each stored entry's column index: 32, or 16 where ELL/SELL/RgCSR
                                (and bell/bsell) store offsets from a group's smallest column; 8 for HiSparse
                                (a byte within its node); 0 for DIA (none per entry) */
    sps_entry_desc entry;  /**< the entry type: rows, cols and nnz count entries; a vector the matrix acts on
                                has cols * sps_entry_dim(entry) scalars */
    int value_dict;        /**< the distinct values of a value dictionary (format option values: ELL, SELL,
                                RgCSR and DIA store one byte a stored entry, indexing at most 256 values);
                                0: a value a stored entry */
} sps_matrix_info_t;

/** Options for reading Matrix Market files. */
typedef struct {
    int allow_nonfinite;   /**< accept NaN/Inf values (rejected by default) */
    int require_square;    /**< refuse a non-square matrix at the size line, before reading entries */
    /** Refuse, at the size line, a file whose declared entries take more than this many
     *  bytes to read (SPS_ERR_PARSE saying how much): 0 = half the physical memory,
     *  negative = no limit.  The reader streams, so a file's own length costs nothing. */
    int64_t max_memory;
} sps_read_options;

/** The byte limit the readers apply for a max_memory value: itself when positive, half the
 *  physical memory for 0 (0 where the system does not say), 0 for negative; 0 means no limit.
 *  For a caller that bounds what it allocates after reading by the same limit (spsolve's
 *  vectors). */
SPS_API int64_t sps_read_memory_limit(int64_t max_memory);

/** Read a Matrix Market file (.mtx or .mtx.gz; coordinate or array; real, integer,
 *  pattern, complex or quaternion; general, symmetric, skew-symmetric or hermitian,
 *  expanded to general; duplicates summed).  t gives the precision; a complex file
 *  gives a complex matrix of that precision, a real file read as c32/c64 gets zero
 *  imaginary parts.  A quaternion file (libspsolve's extension, README "Quaternion
 *  extension") gives a matrix of quaternion entries (bcsr format, q32/q64 from t =
 *  SPS_F32/SPS_F64; a complex t is SPS_ERR_ARG); a hermitian one arrives expanded
 *  (the mirrored entries conjugated) with info.symmetry hermitian.  Malformed input:
 *  SPS_ERR_PARSE with "file:line: what".  The default read options
 *  (sps_matrix_read_mtx_opts with opt NULL). */
SPS_API sps_status sps_matrix_read_mtx(sps_context ctx, const char *path, sps_scalar t, sps_matrix *A);
/** What reading A from a file went on despite, "" when nothing (and for a matrix not
 *  read from a file): bytes after the gzip data that start no gzip member.  Valid
 *  while A is; conversions do not carry it. */
SPS_API const char *sps_matrix_warning(sps_matrix A);
/** sps_matrix_read_mtx with read options; opt may be NULL (the defaults: non-finite values
 *  refused, any shape, the memory limit half the physical memory). */
SPS_API sps_status sps_matrix_read_mtx_opts(sps_context ctx, const char *path, sps_scalar t,
                                            const sps_read_options *opt, sps_matrix *A);
/** Read a scalar Matrix Market file (real, integer, pattern or complex) as a matrix
 *  of b x b blocks (b = 2..8; b = 1 is sps_matrix_read_mtx_opts): scalar (i, j) goes
 *  to element (i mod b, j mod b) of block (i / b, j / b), and every block that holds
 *  an entry of the file is stored whole, its other elements explicit zeros.  The
 *  matrix is in the bcsr format with the file's declared symmetry, and the same
 *  operator as the scalar matrix.  Rows or columns that b does not divide, a
 *  quaternion file, or b outside 1..8: SPS_ERR_ARG naming the file. */
SPS_API sps_status sps_matrix_read_mtx_blocks(sps_context ctx, const char *path, sps_scalar t, int b,
                                              const sps_read_options *opt, sps_matrix *A);
/** Same as sps_matrix_read_mtx_opts from a memory buffer; name is used in error messages. */
SPS_API sps_status sps_matrix_read_mtx_buffer(sps_context ctx, const char *buf, size_t len, const char *name,
                                              sps_scalar t, const sps_read_options *opt, sps_matrix *A);
/** Write A as a Matrix Market coordinate general file with round-trip precision,
 *  through a temporary file renamed over path: real or complex for scalar entries,
 *  `coordinate quaternion general` for quaternion entries (sps_matrix_read_mtx reads
 *  it back).  Matrix Market has no form for b x b blocks: a block matrix is
 *  SPS_ERR_UNSUPPORTED (write its scalar expansion with sps_matrix_write_mtx_expanded). */
SPS_API sps_status sps_matrix_write_mtx(sps_matrix A, const char *path);
/** Write the scalar expansion of A as a real or complex coordinate general file:
 *  the n*d x m*d scalar matrix the operator of A is (d = sps_entry_dim), each entry
 *  its d x d block with explicit zeros (a b x b block's elements; a quaternion
 *  a + bi + cj + dk as [[a,-b,-c,-d],[b,a,-d,c],[c,d,a,-b],[d,-c,b,a]]).  For a
 *  scalar A the same file as sps_matrix_write_mtx. */
SPS_API sps_status sps_matrix_write_mtx_expanded(sps_matrix A, const char *path);

/** Build a CSR matrix from host arrays (0-based, copied).  Columns within a row may
 *  be unsorted and repeated: they are sorted and duplicates summed.  Out-of-range
 *  indices, a decreasing rowptr, or NaN/Inf values are SPS_ERR_ARG/SPS_ERR_NUMERIC
 *  naming the row.  val holds nnz = rowptr[n] scalars of type t. */
SPS_API sps_status sps_matrix_from_csr(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                                       const sps_index *col, const void *val, sps_scalar t, sps_matrix *A);
/** The same with compound entries: n x m entries of type e (spsolve/types.h), val
 *  holding sps_entry_values(e) scalars of type t per entry: a b x b block (b = 2..8)
 *  row-major, a quaternion w, x, y, z.  The scalar entry is sps_matrix_from_csr; a
 *  block or quaternion matrix is built in the bcsr format (AoS entries; convert with
 *  the option entry-layout soa for SoA, or to bell / bsell for the padded ELLPACK-R
 *  and sliced ELLPACK layouts).  Blocks take any t (complex blocks
 *  are complex b x b matrices); quaternions take t = SPS_F32 or SPS_F64 (q32, q64),
 *  a complex t is SPS_ERR_ARG.  Columns within a row may be unsorted and repeated
 *  (duplicates summed member by member).  The matrix is an operator of n*d x m*d
 *  scalars of type t (d = sps_entry_dim(e): b, or 4), acting on vectors of m
 *  d-vectors stored together (AoS): a block as the b x b matrix it is, a quaternion
 *  q on x's quaternion v as the Hamilton product q v (the entry on the left), i.e.
 *  on v's 4 reals as [[w,-x,-y,-z],[x,w,-z,y],[y,z,w,-x],[z,-y,x,w]].  SPS_OP_T is
 *  the transpose of that scalar expansion: block (i,j) transposed at (j,i) (no
 *  conjugation for complex blocks, as for complex scalars), and for quaternions
 *  the quaternionic conjugate transpose, conj(A_ij) at (j,i).  So CG, BiCGSTAB and
 *  GMRES solve block and quaternion systems unchanged, and a quaternion-Hermitian
 *  matrix (A_ji = conj(A_ij)) is an SPD operator when its expansion is.
 *  Errors: an invalid e (a block size outside 2..8), a complex quaternion, NULL
 *  arrays, a decreasing rowptr, out-of-range columns: SPS_ERR_ARG naming what; a
 *  non-finite value: SPS_ERR_NUMERIC; an entry type the backend has no kernels for:
 *  SPS_ERR_UNSUPPORTED naming the entry type and the backend. */
SPS_API sps_status sps_matrix_from_csr_entries(sps_context ctx, sps_index n, sps_index m, const sps_index *rowptr,
                                               const sps_index *col, const void *val, sps_entry_desc e,
                                               sps_scalar t, sps_matrix *A);
/** Build a CSR matrix from 0-based triplets (any order; duplicates summed). */
SPS_API sps_status sps_matrix_from_coo(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                       const sps_index *row, const sps_index *col, const void *val,
                                       sps_scalar t, sps_matrix *A);
/** The same with compound entries (see sps_matrix_from_csr_entries): nnz triplets
 *  (row[k], col[k], entry k), val holding sps_entry_values(e) scalars of type t per
 *  triplet; any order, duplicates summed member by member; a bcsr matrix. */
SPS_API sps_status sps_matrix_from_coo_entries(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                               const sps_index *row, const sps_index *col, const void *val,
                                               sps_entry_desc e, sps_scalar t, sps_matrix *A);
/** sps_matrix_from_coo_entries from arrays in the context's memory: device memory on the
 *  CUDA backend, where the whole build runs on the device (a stable radix sort of the
 *  (row, column) pairs, the duplicates summed member by member in triplet order, in
 *  double, then rounded): an application that computes its element contributions on the
 *  GPU gets its matrix without copying triplets or matrix through the host.  Host memory
 *  on the CPU backend.  The sums are the host builder's, in its order, so the matrix
 *  equals sps_matrix_from_coo_entries' bit for bit; so are the errors (an index out of
 *  range: SPS_ERR_ARG naming the triplet; a value that is not finite, or a sum of
 *  duplicates that overflows f64 or f32: SPS_ERR_NUMERIC).  The arrays stay the caller's
 *  and are not modified; nnz < 2^31 - 1.  Scalar entries give a csr matrix, compound ones
 *  bcsr. */
SPS_API sps_status sps_matrix_from_coo_entries_device(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                                      const sps_index *row, const sps_index *col, const void *val,
                                                      sps_entry_desc e, sps_scalar t, sps_matrix *A);
/** A matrix from CSR arrays in the context's memory (device memory on the CUDA backend,
 *  host memory on the CPU backend), for an application that assembles its matrix there
 *  (a finite-element code summing element contributions row by row): n + 1 row pointers
 *  (rowptr[0] = 0, rowptr[n] = nnz), nnz columns strictly increasing within each row (no
 *  duplicates: sps_matrix_from_coo_entries_device sums those), nnz entries of type e with
 *  sps_entry_values(e) scalars of type t each, laid out as in sps_matrix_from_csr_entries.
 *  Checked on the device before anything is built: a decreasing or out-of-range pointer, a
 *  column out of range, unsorted or repeated columns: SPS_ERR_ARG naming the row; a value
 *  that is not finite: SPS_ERR_NUMERIC naming the entry.  The arrays are copied (they stay
 *  the caller's); nnz < 2^31 - 1.  Scalar entries give a csr matrix, compound ones bcsr. */
SPS_API sps_status sps_matrix_from_csr_entries_device(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                                      const sps_index *rowptr, const sps_index *col, const void *val,
                                                      sps_entry_desc e, sps_scalar t, sps_matrix *A);
/** Built-in problems: "poisson2d:N" (5-point, N^2 rows), "poisson3d:N" (7-point, N^3
 *  rows), both SPD with Dirichlet boundary and scalar entries; "stencil27b3:N" (27-point
 *  stencil on N^3 points with a dense SPD 3x3 block per neighbour, 3N^3 rows, SPD, 3x3
 *  block entries).  See sps_matrix_generate_list(). */
SPS_API sps_status sps_matrix_generate(sps_context ctx, const char *spec, sps_scalar t, sps_matrix *A);
/** Comma-separated list of the generator names, e.g. "poisson2d:N, poisson3d:N". */
SPS_API const char *sps_matrix_generate_list(void);

/** Convert A to another storage format (a new matrix; A is unchanged).  opt: the
 *  format's options (sps_format_options_create(fmt, ...), spsolve/options.h), or
 *  NULL for their defaults; a set made for another format, or one that breaks a
 *  rule between options, is SPS_ERR_ARG.  csr with csr-kernel hola gives a matrix
 *  of the hola format. */
SPS_API sps_status sps_matrix_convert(sps_matrix A, sps_format fmt, sps_options opt, sps_matrix *B);
/** C = alpha op(A) + beta op(B) as a new HiSparse matrix (SPS_FMT_HISPARSE) in A's context:
 *  the union of the two patterns (an entry in both: alpha a + beta b; in one: its scaled
 *  value, explicit zeros kept).  alpha, beta: one scalar of the matrices' type each (host
 *  memory), NULL meaning 1.  op: SPS_OP_N or SPS_OP_T (the plain transpose: Aᵀ is a
 *  view, nothing is transposed first).  A and B: the same context and scalar type, scalar
 *  entries, op(A) and op(B) of one size (else SPS_ERR_ARG; compound entries
 *  SPS_ERR_UNSUPPORTED); any format (a matrix not in hisparse is converted to hisparse
 *  with opt first, on its backend).  opt: hisparse's options (node-size of C; small-sum:
 *  operands whose lists hold at most that many slots, default 4M, take the one-pass path,
 *  two launches and one host read, the same C), or NULL for the defaults; A, B and C may differ in
 *  node size.  Computed on the backend that holds A and B (on the GPU: the operands'
 *  entries listed with their keys, one sort, the tree built from the distinct keys;
 *  nothing comes to the host but a few counts), deterministic: the same C every run.
 *  SPS_ERR_NUMERIC, no C, for a non-finite alpha or beta, or an entry of C that overflows
 *  (finite operands whose alpha a + beta b is not), the message naming that entry (0-based). */
SPS_API sps_status sps_matrix_add(const void *alpha, sps_matrix A, sps_op_mode opA, const void *beta, sps_matrix B,
                                  sps_op_mode opB, sps_options opt, sps_matrix *C);
/** Copy A out as host CSR: rowptr has rows+1 entries, col nnz, val nnz entries of
 *  sps_entry_values(info.entry) scalars of A's type each (one for scalar matrices;
 *  compound entries as sps_matrix_from_csr_entries takes them, AoS whatever the
 *  stored layout), so compound matrices round-trip.  Columns sorted within each row. */
SPS_API sps_status sps_matrix_export_csr(sps_matrix A, sps_index *rowptr, sps_index *col, void *val);
/** Describe A. */
SPS_API sps_status sps_matrix_info(sps_matrix A, sps_matrix_info_t *info);
/** Copy the main diagonal into d (host memory, min(rows, cols) * sps_entry_dim(entry) scalars of
 *  A's type; zero where absent): for compound entries the diagonal of the scalar expansion
 *  (a block's diagonal; a quaternion's w four times), which is what Jacobi needs. */
SPS_API sps_status sps_matrix_diagonal(sps_matrix A, void *d);
/** Destroy a matrix.  NULL is ignored. */
SPS_API void sps_matrix_destroy(sps_matrix A);
/** The context the matrix belongs to. */
SPS_API sps_context sps_matrix_context(sps_matrix A);

/** The format sps_matrix_convert(A, SPS_FMT_AUTO, ...) builds, by a model of the
 *  SpMV times from A's row lengths (and diagonals) and its backend, without timing
 *  anything (README, "Choosing a format"): compound entries bcsr on either backend; a
 *  scalar matrix csr on the CPU, and on the GPU, in the README's rule order: dia for
 *  more than 50k rows in at most 16 occupied diagonals storing at most 1.1 nnz (rule
 *  0); csr for irregular rows (its merge path); for 8 or more entries a row sell
 *  (100k rows or more, near-uniform), ell (at most 50k near-uniform rows of at most
 *  16) or csr; ell for near-uniform short rows, or at most 50k rows of at most 32
 *  within ELL's padding limit; sell for short rows with little SELL-32 padding; csr
 *  otherwise.  *why (may be NULL) gets a short static reason.
 *  With SPS_FMT_AUTO, sps_matrix_convert applies its options only when they were
 *  made for the picked format. */
SPS_API sps_status sps_matrix_auto_format(sps_matrix A, sps_format *fmt, const char **why);
/** Look a format up by name ("csr", "coo", ...).  Unknown names give SPS_ERR_ARG. */
SPS_API sps_status sps_format_by_name(const char *name, sps_format *fmt);
/** Name of a format, or "?" */
SPS_API const char *sps_format_name(sps_format fmt);
/** Comma-separated names of the formats this build provides, e.g. "csr, coo". */
SPS_API const char *sps_format_list(void);
/** Nonzero when fmt stores block and quaternion entries (bcsr, bell, bsell), 0 for the
 *  scalar formats and unknown ones. */
SPS_API int sps_format_compound(sps_format fmt);
/** Nonzero when fmt's product y = A x gives the same bits from run to run on every
 *  backend, so a solve repeated on it is bit-identical: all formats but hola (its blocks'
 *  first and last rows meet by atomics) and hisparse (a row's leaves do), whose GPU
 *  products use atomics; 0 for unknown formats.  Ask with the matrix's own format
 *  (sps_matrix_info: csr with csr-kernel hola builds a hola matrix).  Transposed
 *  products on the GPU scatter with atomics in most formats (sps_matrix_spmv). */
SPS_API int sps_format_reproducible(sps_format fmt);
/** Name of a symmetry: "general", "symmetric", "skew-symmetric", "hermitian". */
SPS_API const char *sps_symmetry_name(sps_symmetry s);

#ifdef __cplusplus
}
#endif
#endif
