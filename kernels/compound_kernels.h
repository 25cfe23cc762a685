/* libspsolve — the compound family: kernels of matrices whose entries are dense
 * b x b blocks (b = 2..8; f32, f64, c32, c64) or quaternions (q32, q64: 4 reals
 * of f32 / f64 per entry), declared once.
 *
 * SPS_CMP_KERNEL_LIST names each kernel with its argument list.  From it this
 * header generates, for a backend P, an entry variant E and a scalar suffix S,
 * the prototype sps_status P_<kernel>_<E>_<S>(args) and the field
 * sps_cmp_kernels.<kernel>.  Entry variants:
 *   bn  any block size b = 2..8, read from the descriptor at run time;
 *   b3, b4  the block sizes FEM codes use most, with b a compile-time constant
 *       (loops unrolled, accumulators in registers);
 *   q   the quaternion (real types only).
 * A backend holds one table per (entry type, scalar): sps_cmp_kernels_for
 * (kernels/backend.h) finds it, NULL where the backend has none (complex
 * quaternions).  SPS_CMP_DEFINE_TABLES(P) defines backend P's tables.
 * It is a family apart from the matrix family of kernels/kernels.h: its kernels
 * take the entry descriptor and the entry layout, and a compound matrix has none
 * of the scalar formats' kernels, so sharing sps_mat_kernels would leave most of
 * a table NULL instead of failing to link.
 *
 * Conventions (beside kernels/kernels.h's):
 *   - the outer layout is CSR (bcsr_*: n x m entries, rowptr n + 1, col nnz, nnz
 *     = rowptr[n], rowptr[0] = 0) or the padded layout of the scalar ELLPACK-R
 *     and SELL formats (pad_*: sps_pad_layout, its slots in place of CSR's nnz
 *     positions, padding never read); val holds an entry per position of nv =
 *     b*b (blocks, row-major) or 4 (quaternions: w, x, y, z) scalars, in layout
 *     lay (N = nnz, or the padded layout's slots):
 *       AoS: member p of entry k at val[k*nv + p] (an entry's members together);
 *       SoA: member p of entry k at val[p*N + k] (one array per member);
 *   - vectors in layout vlay: x has m*d scalars, y n*d (d = b, or 4); AoS: an
 *     entry's d scalars together (element c of block j at j*d + c: the layout of
 *     the operator, so of every solver's vectors), SoA: d arrays (at c*m + j);
 *     the formats' option vector-layout soa converts at the operator's boundary
 *     (formats/compound_apply.c, the index family's vec_relayout);
 *   - a block acts as the b x b matrix it is (complex: no conjugation); a
 *     quaternion q acts on the quaternion v of x as the Hamilton product q v
 *     (the entry on the LEFT), i.e. on its 4 reals as
 *         L(q) = [[w,-x,-y,-z],[x,w,-z,y],[y,z,w,-x],[z,-y,x,w]];
 *   - SpMV^T is the transpose of the scalar expansion: block (i,j) transposed at
 *     (j,i) (plain transpose for complex blocks, as SPS_OP_T is for complex
 *     scalars); for quaternions L(q)^T = L(conj q), so SPS_OP_T on the real 4n
 *     view is the quaternionic conjugate transpose: conj(A_ij) at (j,i);
 *   - y = a op(A) x + b y with a, b from sps_cplx (imaginary parts ignored for
 *     real types and quaternions); b == 0: y is not read. */
#ifndef SPS_COMPOUND_KERNELS_H
#define SPS_COMPOUND_KERNELS_H

#include "kernels/kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** How a compound matrix stores the members of its entries (a run-time property of
 *  the stored matrix: the bcsr option entry-layout). */
typedef enum { SPS_ENTRY_AOS = 0, SPS_ENTRY_SOA = 1 } sps_entry_layout;

/** The largest vector block a compound entry acts on (b = 8). */
#define SPS_CMP_MAX_DIM 8

/* X(P, E, S, name, args): P backend prefix, E entry variant, S scalar suffix. */
#define SPS_CMP_KERNEL_LIST(X, P, E, S)                                                                         \
    /* y = a A x + b y, A n x m entries of type e in CSR (y: n*d scalars, x: m*d) */                            \
    X(P, E, S, bcsr_spmv, (sps_exec *ex, sps_entry_desc e, sps_entry_layout lay, sps_entry_layout vlay,        \
                           sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr, const sps_index *col, \
                           const void *val, sps_cplx a, const void *x, sps_cplx b, void *y))                     \
    /* y = A x and slots[out] = x^H y in one pass (A n x n entries, AoS vectors: CG's q = A p, p^H q) */       \
    X(P, E, S, bcsr_spmv_dot, (sps_exec *ex, sps_entry_desc e, sps_entry_layout lay, sps_index n, int64_t nnz,  \
                               const sps_index *rowptr, const sps_index *col, const void *val, const void *x,  \
                               void *y, sps_cplx *slots, int out))                                             \
    /* out[(k d + r) d + c] = element (r, c) of the scalar expansion of block-row k's diagonal entry (0 where    \
     * the row has none), k < n: the diagonal blocks block-Jacobi inverts, without a host copy */               \
    X(P, E, S, bcsr_diag_blocks, (sps_exec *ex, sps_entry_desc e, sps_entry_layout lay, sps_index n,          \
                                  int64_t nnz, const sps_index *rowptr, const sps_index *col, const void *val,   \
                                  void *out))                                                                    \
    /* y = a A^T x + b y (y: m*d scalars, x: n*d), without forming A^T: deterministic on the CPU (the GPU's   \
       sums by atomics are not bit-reproducible) */                                                             \
    X(P, E, S, bcsr_spmvt, (sps_exec *ex, sps_entry_desc e, sps_entry_layout lay, sps_entry_layout vlay,       \
                            sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,                      \
                            const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b,        \
                            void *y))                                                                            \
    /* y = a A x + b y, A in the padded layout L (bell: ELLPACK-R, bsell: sliced ELLPACK;                      \
     * kernels/format_kernels_padded.h), slot s's entry in val: member p at s*nv + p (AoS) or                  \
     * p*L.slots + s (SoA); padding slots are never read */                                                     \
    X(P, E, S, pad_spmv, (sps_exec *ex, sps_entry_desc e, sps_entry_layout lay, sps_entry_layout vlay,         \
                          sps_pad_layout L, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y))    \
    /* y = a A^T x + b y in the padded layout: on the CPU deterministic, bcsr's bits (sorted rows too) */        \
    X(P, E, S, pad_spmvt, (sps_exec *ex, sps_entry_desc e, sps_entry_layout lay, sps_entry_layout vlay,        \
                           sps_pad_layout L, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y))

#define SPS_KCNAME(P, E, S, name) SPS_KCNAME_(P, name, E, S)
#define SPS_KCNAME_(P, name, E, S) P##_##name##_##E##_##S
#define SPS_KCFIELD_(P, E, S, name, args) sps_status (*name) args;
#define SPS_KCPROTO_(P, E, S, name, args) sps_status SPS_KCNAME(P, E, S, name) args;
#define SPS_KCINIT_(P, E, S, name, args) SPS_KCNAME(P, E, S, name),

typedef struct sps_cmp_kernels {
    SPS_CMP_KERNEL_LIST(SPS_KCFIELD_, _, _, _)
} sps_cmp_kernels;

/** Declare the compound kernels of backend P for entry variant E and suffix S. */
#define SPS_DECLARE_CMP_KERNELS(P, E, S) SPS_CMP_KERNEL_LIST(SPS_KCPROTO_, P, E, S)
/** Initializer of one compound table, in list order. */
#define SPS_CMP_TABLE(P, E, S) { SPS_CMP_KERNEL_LIST(SPS_KCINIT_, P, E, S) }
/** Declare a block variant for the four scalar types, the quaternion for the two real ones. */
#define SPS_DECLARE_CMP_BLOCK(P, E)                                                                             \
    SPS_DECLARE_CMP_KERNELS(P, E, s) SPS_DECLARE_CMP_KERNELS(P, E, d) SPS_DECLARE_CMP_KERNELS(P, E, c)         \
    SPS_DECLARE_CMP_KERNELS(P, E, z)
#define SPS_DECLARE_CMP_ALL(P)                                                                                  \
    SPS_DECLARE_CMP_BLOCK(P, bn) SPS_DECLARE_CMP_BLOCK(P, b3) SPS_DECLARE_CMP_BLOCK(P, b4)                     \
    SPS_DECLARE_CMP_KERNELS(P, q, s) SPS_DECLARE_CMP_KERNELS(P, q, d)

/** L(q) of q = w + xi + yj + zk, the Hamilton product q v on v's 4 reals:
 *  [[w,-x,-y,-z],[x,w,-z,y],[y,z,w,-x],[z,-y,x,w]] = sign(r,c) * q[idx(r,c)].  Shared
 *  by the CPU kernels and the scalar expansion of formats/csr_host.c. */
static const int sps_q_idx[4][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0}};
static const int sps_q_sign[4][4] = {{1, -1, -1, -1}, {1, 1, -1, 1}, {1, 1, 1, -1}, {1, -1, 1, 1}};

/** A backend's compound tables: an array of SPS_CMP_SLOTS * SPS_NUM_SCALARS pointers,
 *  [sps_cmp_slot(e) * SPS_NUM_SCALARS + t], NULL where absent. */
#define SPS_CMP_SLOTS 8 /* blocks b = 2..8, then the quaternion */
static inline int sps_cmp_slot(sps_entry_desc e)
{
    if (e.kind == SPS_ENTRY_BLOCK && e.block >= 2 && e.block <= SPS_CMP_MAX_DIM) return e.block - 2;
    return e.kind == SPS_ENTRY_QUATERNION ? SPS_CMP_SLOTS - 1 : -1;
}

/** Define backend P's compound tables, P_cmp_kernels: blocks of any b by the generic
 *  variant bn, b = 3 and 4 by their compile-time instantiations, quaternions in the
 *  real types only. */
#define SPS_CMP_BLOCK_TABLES_(P, E)                                                                            \
    static const sps_cmp_kernels P##_cmp_##E[SPS_NUM_SCALARS] = {                                             \
        SPS_CMP_TABLE(P, E, s), SPS_CMP_TABLE(P, E, d), SPS_CMP_TABLE(P, E, c), SPS_CMP_TABLE(P, E, z)};
#define SPS_CMP_ROW_(P, E) &P##_cmp_##E[SPS_F32], &P##_cmp_##E[SPS_F64], &P##_cmp_##E[SPS_C32], &P##_cmp_##E[SPS_C64]
#define SPS_CMP_DEFINE_TABLES(P)                                                                               \
    SPS_CMP_BLOCK_TABLES_(P, bn)                                                                               \
    SPS_CMP_BLOCK_TABLES_(P, b3)                                                                               \
    SPS_CMP_BLOCK_TABLES_(P, b4)                                                                               \
    static const sps_cmp_kernels P##_cmp_q[2] = {SPS_CMP_TABLE(P, q, s), SPS_CMP_TABLE(P, q, d)};             \
    const sps_cmp_kernels *const P##_cmp_kernels[SPS_CMP_SLOTS * SPS_NUM_SCALARS] = {                         \
        SPS_CMP_ROW_(P, bn), SPS_CMP_ROW_(P, b3), SPS_CMP_ROW_(P, b4), SPS_CMP_ROW_(P, bn),                   \
        SPS_CMP_ROW_(P, bn), SPS_CMP_ROW_(P, bn), SPS_CMP_ROW_(P, bn), /* b = 2..8 */                          \
        &P##_cmp_q[SPS_F32], &P##_cmp_q[SPS_F64], NULL, NULL,          /* q32, q64 */                          \
    };

SPS_DECLARE_CMP_ALL(sps_cpu)
extern const sps_cmp_kernels *const sps_cpu_cmp_kernels[SPS_CMP_SLOTS * SPS_NUM_SCALARS];
#ifdef SPS_HAVE_CUDA
SPS_DECLARE_CMP_ALL(sps_cuda)
extern const sps_cmp_kernels *const sps_cuda_cmp_kernels[SPS_CMP_SLOTS * SPS_NUM_SCALARS];
#endif

#ifdef __cplusplus
}
#endif
#endif
