/* libspsolve — every compute kernel, declared once.
 *
 * SPS_KERNEL_LIST names each kernel with its argument list.  From it this header
 * generates, for every backend (cpu, cuda) and scalar suffix (s, d, c, z):
 *   - the prototype   sps_status sps_<backend>_<kernel>_<sfx>(args);
 *   - the field       sps_kernels.<kernel>, a pointer to it,
 * and kernels/<backend>/registry.* fills one sps_kernels table per scalar type
 * from the prototypes, so a backend that forgets a kernel fails to link instead
 * of diverging silently (Ginkgo's GKO_DECLARE_* idea, as an X-macro).
 *
 * Conventions shared by all kernels:
 *   - vector/matrix arrays are backend pointers (host on cpu, device on cuda) of
 *     the table's scalar type; complex values are interleaved (re, im);
 *   - host-side coefficients are sps_cplx (imaginary part ignored for real types);
 *   - `slots` is a small array of sps_cplx in backend memory: the solver's
 *     scalar registers (rho, alpha, norms, ...), so a GPU solve never needs the
 *     host to hand scalars back and forth (ARCHITECTURE §5).  Reductions write
 *     into slots[out]; fused steps read their coefficients from slots.
 *   - the CPU implementation is the reference every other backend is tested
 *     against; reductions are deterministic (fixed order) on every backend.
 */
#ifndef SPS_KERNELS_H
#define SPS_KERNELS_H

#include "spsolve/types.h"
#include "kernels/exec.h"
#include "kernels/csr_merge.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The largest block of the block-Jacobi kernels (bj_invert, bj_apply). */
#define SPS_BJ_MAX 32

/** A triangular factor's off-diagonal part in SELL-32, for the ILU sweeps (ilu_sweeps):
 *  row i = 32 s + j of slice s holds len[i] entries, entry k at off[s] + 32 k + j
 *  (column-major within a slice, so a warp's lanes read consecutive addresses; a
 *  row's entries in its CSR order), val of the kernel's scalar type.  Backend memory. */
typedef struct {
    const int64_t *off;
    const sps_index *col, *len;
    const void *val;
} sps_ilu_sell;

/** A scalar as the host passes it, and the type of a solver slot. */
typedef struct { double re, im; } sps_cplx;

/* Functions both backends evaluate (the CPU oracle and CUDA kernels must agree bit for bit). */
#ifdef __CUDACC__
#define SPS_HD __host__ __device__
#else
#define SPS_HD
#endif

static inline SPS_HD sps_cplx sps_cplx_make(double re, double im) { sps_cplx c; c.re = re; c.im = im; return c; }

/** A coefficient computed from slots at kernel time:
 *      c = sign * (num >= 0 ? slots[num] : 1) / (den >= 0 ? slots[den] : 1)
 *  e.g. CG's alpha = rho / (p'q) is {+1, RHO, PQ}. */
typedef struct { double sign; int num, den; } sps_scoef;

/** Value of a slot coefficient, in double complex, on either backend. */
static inline SPS_HD sps_cplx sps_scoef_eval(sps_scoef c, const sps_cplx *slots)
{
    double nr = 1.0, ni = 0.0, dr = 1.0, di = 0.0;
    if (c.num >= 0) { nr = slots[c.num].re; ni = slots[c.num].im; }
    if (c.den >= 0) { dr = slots[c.den].re; di = slots[c.den].im; }
    double re, im;
    if (di == 0.0) {
        re = nr / dr;
        im = ni / dr;
    } else {
        const double d = dr * dr + di * di;
        re = (nr * dr + ni * di) / d;
        im = (ni * dr - nr * di) / d;
    }
    return sps_cplx_make(c.sign * re, c.sign * im);
}

/* ---------------------------------------------------------------- kernel list */
/* X(P, S, name, args): P backend prefix, S scalar suffix (forwarded untouched). */
#define SPS_KERNEL_LIST_BLAS1(X, P, S)                                                              \
    /* x[i] = a */                                                                                  \
    X(P, S, fill, (sps_exec *ex, sps_index n, sps_cplx a, void *x))                              \
    /* y = x */                                                                                     \
    X(P, S, copy, (sps_exec *ex, sps_index n, const void *x, void *y))                           \
    /* x = a x */                                                                                   \
    X(P, S, scale, (sps_exec *ex, sps_index n, sps_cplx a, void *x))                             \
    /* y = a x + b y  (b == 0: y is not read) */                                                    \
    X(P, S, axpby, (sps_exec *ex, sps_index n, sps_cplx a, const void *x, sps_cplx b, void *y))  \
    /* slots[out] = x^H y  (conjugate x for complex) */                                             \
    X(P, S, dot, (sps_exec *ex, sps_index n, const void *x, const void *y, sps_cplx *slots, int out)) \
    /* slots[out] = ||x||_2  (real part; imaginary 0) */                                            \
    X(P, S, nrm2, (sps_exec *ex, sps_index n, const void *x, sps_cplx *slots, int out))          \
    /* slots[out] = ||x||_inf = max_i |x_i| (complex: the modulus; NaN when an entry is NaN)       \
       (the solvers' max-norm stopping test, option norm = inf) */                                  \
    X(P, S, nrm_inf, (sps_exec *ex, sps_index n, const void *x, sps_cplx *slots, int out))       \
    /* y = d .* x  (pointwise; Jacobi) */                                                           \
    X(P, S, pmul, (sps_exec *ex, sps_index n, const void *d, const void *x, void *y))            \
    /* y = d .* x and slots[out] = x^H y in one pass (Jacobi inside PCG: z = M r, r^H z);         \
       x and y do not overlap */                                                                    \
    X(P, S, pmul_dot, (sps_exec *ex, sps_index n, const void *d, const void *x, void *y,        \
                       sps_cplx *slots, int out))                                                    \
    /* y = y + c x with c from slots */                                                             \
    X(P, S, axpy_s, (sps_exec *ex, sps_index n, const sps_cplx *slots, sps_scoef c, const void *x, void *y))            \
    /* y = x + c y with c from slots */                                                             \
    X(P, S, xpay_s, (sps_exec *ex, sps_index n, const void *x, const sps_cplx *slots, sps_scoef c, void *y))            \
    /* d[i] = 1 / d[i]; slots[out].re = index+1 of the first zero or non-finite entry or one of  */ \
    /* non-finite inverse (a subnormal), 0 if none (d then untouched)                             */ \
    X(P, S, invert, (sps_exec *ex, sps_index n, void *d, sps_cplx *slots, int out))                \
    /* Block-Jacobi (precond/bjacobi.c): nb diagonal blocks, block k the rows start[k] ..          */ \
    /* start[k+1] - 1 (sz_k <= SPS_BJ_MAX rows), its sz_k^2 values row-major at blk + off[k].       */ \
    /* Each block becomes its inverse (Gauss-Jordan, partial pivoting); *bad (backend memory) =    */ \
    /* 1 + the first row of the first singular block (a pivot of at most sz eps max|b_ij|, or a  */ \
    /* non-finite inverse),                                                                       */ \
    /* 0 if none; blocks then hold unspecified values                                             */ \
    X(P, S, bj_invert, (sps_exec *ex, sps_index nb, const sps_index *start, const int64_t *off,    \
                        void *blk, sps_index *bad))                                                 \
    /* y = blockdiag(inv) x over n rows, row i in block row_blk[i]; x may be y.  bsz > 0: every  */ \
    /* block has bsz rows (row_blk, start, off agree), which a backend may use instead of them   */ \
    X(P, S, bj_apply, (sps_exec *ex, sps_index n, int bsz, const sps_index *row_blk,               \
                       const sps_index *start, const int64_t *off, const void *inv, const void *x,  \
                       void *y))                                                                     \
    /* ILU(0) / IC(0) (precond/ilu.c): the factors in one CSR of A's pattern, n x n: L strictly   */ \
    /* below the diagonal (unit diagonal implied), U on and above it, U's diagonal at diag[i].   */ \
    /* ilu_apply: z = U^{-1} L^{-1} r by substitution (CUDA: level by level, the levels of L    */ \
    /* then of U: lvl_ptr[0 .. nl + nu], HOST memory (the launches' sizes), offsets into        */ \
    /* lvl_rows, backend memory, each level's rows).  work: n scalars; r may be z.               */ \
    /* ilu_sweeps: z ~ U^{-1} L^{-1} r by K >= 1 Jacobi sweeps on each factor, from the factors' */ \
    /* off-diagonal parts in SELL-32 (L strictly lower, U strictly upper) and dinv = 1 / u_ii:   */ \
    /* y = r - L y from y = r, then z = dinv .* (y - U z) from z = dinv .* y; each sweep reads   */ \
    /* the previous iterate only.  work: 2n scalars; r may be z.                                  */ \
    /* ilu_gather: out[k] = val[src[k]] (src[k] < 0: zero; invert: 1 / val[src[k]]), k < cnt:     */ \
    /* the sweeps' arrays from the factors after each factorisation                               */ \
    /* The factorisation of A + alpha diag(A) in place on val (A's values in, the factors out),   */ \
    /* the rows level by level (L's nl levels: lvl_ptr HOST, lvl_rows backend), each row in IKJ   */ \
    /* order.  A pivot |u_ii| <= 2.22e-14 sum_j |a_ij| (ic: or Re u_ii below it) is raised to it   */ \
    /* when shift_nonzero (ilu only), else *bad (backend memory) = 1 + its row (the smallest),     */ \
    /* 0 when none; ic: then U = D L^H from L (the pattern symmetric, checked by the caller)       */ \
    X(P, S, ilu_factor, (sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col,  \
                         void *val, const sps_index *diag, sps_index nl, const sps_index *lvl_ptr,   \
                         const sps_index *lvl_rows, double alpha, int shift_nonzero, int ic,          \
                         sps_index *bad))                                                             \
    X(P, S, ilu_apply, (sps_exec *ex, sps_index n, const sps_index *rowptr, const sps_index *col,  \
                        const void *val, const sps_index *diag, sps_index nl, sps_index nu,         \
                        const sps_index *lvl_ptr, const sps_index *lvl_rows, const void *r, void *z, \
                        void *work))                                                                 \
    X(P, S, ilu_sweeps, (sps_exec *ex, sps_index n, sps_ilu_sell L, sps_ilu_sell U, const void *dinv, \
                         int sweeps, const void *r, void *z, void *work))                              \
    X(P, S, ilu_gather, (sps_exec *ex, int64_t cnt, const sps_index *src, const void *val, int invert, \
                         void *out))

#define SPS_KERNEL_LIST_SPMV(X, P, S)                                                               \
    /* nnz = rowptr[n] - rowptr[0] (the CSR kernels below).  maxrow: the longest row's entry count */ \
    /* where the caller knows it, else -1.  A hint: the CUDA row kernels run a variant without     */ \
    /* their pass over long and medium rows when maxrow says there are none, and csr_spmv widens   */ \
    /* the lanes a row of few rows so that there are none (sps_csr_tpr_fit); the same hint gives   */ \
    /* the same bits, -1 or a wrong value the right product (rounding may differ), more slowly.   */ \
    /* The CPU ignores it.                                                                        */ \
    /* y = a A x + b y, A n x m in CSR; b == 0: y not read */                                       \
    X(P, S, csr_spmv, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr, \
                       const sps_index *col, const void *val, sps_index maxrow, sps_cplx a, const void *x, \
                       sps_cplx b, void *y))                                                        \
    /* y = A x and slots[out] = x^H y in one pass (A n x n in CSR, nnz = rowptr[n] - rowptr[0];   */ \
    /* CG's q = A p, p^H q)                                                                       */ \
    /* deterministic, as dot                                                                      */ \
    X(P, S, csr_spmv_dot, (sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, const sps_index *col, \
                           const void *val, sps_index maxrow, const void *x, void *y, sps_cplx *slots, int out)) \
    /* pnew = z + c pold (c from slots), q = A pnew and slots[out] = pnew^H q in one pass (A n x n */ \
    /* in CSR): CG's direction update fused into its product; pnew may alias neither z nor pold   */ \
    X(P, S, csr_spmv_xpay_dot, (sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,  \
                                const sps_index *col, const void *val, sps_index maxrow, const void *z, sps_scoef c, \
                                const void *pold, void *pnew, void *q, sps_cplx *slots, int out)) \
    /* One CG iteration (A n x n in CSR): csr_spmv_xpay_dot(z, c, pold -> pnew, q; out = k.pq),   */ \
    /* then cg_step(k, pnew, q, x, r), in one pass where the backend can (CUDA: one cooperative   */ \
    /* launch); the slots and vectors end as after the two calls                                 */ \
    X(P, S, csr_cg_iter, (sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr,       \
                          const sps_index *col, const void *val, sps_index maxrow, const void *z, sps_scoef c, \
                          const void *pold, void *pnew, void *q, void *x, void *r, sps_cplx *slots,  \
                          sps_cg_slots k))                                                          \
    /* The merge-path plan of csr_spmv_merge (kernels/csr_merge.h) into work, a buffer of          */ \
    /* sps_csr_merge_bytes(n, nnz, scalar size) bytes; rowptr[0] == 0                               */ \
    X(P, S, csr_merge_plan, (sps_exec *ex, sps_index n, int64_t nnz, const sps_index *rowptr, void *work)) \
    /* y = a A x + b y (b == 0: y not read) by the merge-path schedule of work's plan (the tiles'   */ \
    /* carries after it are rewritten); deterministic.  The CPU runs csr_spmv (no plan needed)     */ \
    X(P, S, csr_spmv_merge, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr, \
                             const sps_index *col, const void *val, void *work, sps_cplx a, const void *x, \
                             sps_cplx b, void *y))                                                  \
    /* y = a A^T x + b y (y has m entries), without forming A^T */                                  \
    X(P, S, csr_spmvt, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr, \
                        const sps_index *col, const void *val, sps_index maxrow, sps_cplx a, const void *x, \
                        sps_cplx b, void *y))                                                       \
    /* y = a A x + b y, A in COO sorted by row (then column) */                                     \
    X(P, S, coo_spmv, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row, \
                       const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)) \
    X(P, S, coo_spmvt, (sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row, \
                        const sps_index *col, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y))

/* Solver-specific fused steps live in kernels/solver_kernels.h, the formats'
   kernels in kernels/format_kernels.h */
#include "kernels/solver_kernels.h"
#include "kernels/format_kernels.h"

#include "kernels/index_kernels.h"

/* The three families.  A backend holds one table of each:
 *   vector family  (BLAS-1 and the fused solver steps)   one table per scalar type;
 *   matrix family  (SpMV and the formats' value kernels)  one table per scalar type
 *                  for each entry type (sps_entry_desc: scalar today; the compound
 *                  entries of issue 20 add their tables without touching these);
 *   index family   (kernels/index_kernels.h)               one table.
 * A quaternion matrix acting on a real vector of 4n entries takes its product from
 * the matrix family of (quaternion, f64) and its vector work from (f64). */
#define SPS_KERNEL_LIST_VEC(X, P, S) \
    SPS_KERNEL_LIST_BLAS1(X, P, S)   \
    SPS_KERNEL_LIST_SOLVER(X, P, S)
#define SPS_KERNEL_LIST_MAT(X, P, S) \
    SPS_KERNEL_LIST_SPMV(X, P, S)    \
    SPS_KERNEL_LIST_FORMATS(X, P, S)

/* ---------------------------------------------------------------- generated */
#define SPS_KNAME(P, S, name) SPS_KNAME_(P, name, S)
#define SPS_KNAME_(P, name, S) P##_##name##_##S

#define SPS_KFIELD_(P, S, name, args) sps_status (*name) args;
#define SPS_KIFIELD_(P, name, args) sps_status (*name) args;
typedef struct sps_vec_kernels {
    SPS_KERNEL_LIST_VEC(SPS_KFIELD_, _, _)
} sps_vec_kernels;
typedef struct sps_mat_kernels {
    SPS_KERNEL_LIST_MAT(SPS_KFIELD_, _, _)
} sps_mat_kernels;
typedef struct sps_idx_kernels {
    SPS_KERNEL_LIST_INDEX(SPS_KIFIELD_, _)
} sps_idx_kernels;

#define SPS_KPROTO_(P, S, name, args) sps_status SPS_KNAME(P, S, name) args;
#define SPS_KINIT_(P, S, name, args) SPS_KNAME(P, S, name),
#define SPS_KIPROTO_(P, name, args) sps_status P##_##name args;
#define SPS_KIINIT_(P, name, args) P##_##name,

/** Declare every kernel of backend P (e.g. sps_cpu) for suffix S (s, d, c, z). */
#define SPS_DECLARE_KERNELS(P, S) SPS_KERNEL_LIST_VEC(SPS_KPROTO_, P, S) SPS_KERNEL_LIST_MAT(SPS_KPROTO_, P, S)
/** Initializers of the vector and matrix tables, in list order, from backend P, suffix S. */
#define SPS_VEC_TABLE(P, S) { SPS_KERNEL_LIST_VEC(SPS_KINIT_, P, S) }
#define SPS_MAT_TABLE(P, S) { SPS_KERNEL_LIST_MAT(SPS_KINIT_, P, S) }
/** The index family of backend P: prototypes and table initializer. */
#define SPS_DECLARE_INDEX_KERNELS(P) SPS_KERNEL_LIST_INDEX(SPS_KIPROTO_, P)
#define SPS_IDX_TABLE(P) { SPS_KERNEL_LIST_INDEX(SPS_KIINIT_, P) }

SPS_DECLARE_KERNELS(sps_cpu, s)
SPS_DECLARE_KERNELS(sps_cpu, d)
SPS_DECLARE_KERNELS(sps_cpu, c)
SPS_DECLARE_KERNELS(sps_cpu, z)
SPS_DECLARE_INDEX_KERNELS(sps_cpu)
/** CPU tables: vector and (scalar-entry) matrix families indexed by sps_scalar, the index family. */
extern const sps_vec_kernels sps_cpu_vec_kernels[SPS_NUM_SCALARS];
extern const sps_mat_kernels sps_cpu_mat_kernels[SPS_NUM_SCALARS];
extern const sps_idx_kernels sps_cpu_idx_kernels;

#ifdef SPS_HAVE_CUDA
SPS_DECLARE_KERNELS(sps_cuda, s)
SPS_DECLARE_KERNELS(sps_cuda, d)
SPS_DECLARE_KERNELS(sps_cuda, c)
SPS_DECLARE_KERNELS(sps_cuda, z)
SPS_DECLARE_INDEX_KERNELS(sps_cuda)
extern const sps_vec_kernels sps_cuda_vec_kernels[SPS_NUM_SCALARS];
extern const sps_mat_kernels sps_cuda_mat_kernels[SPS_NUM_SCALARS];
extern const sps_idx_kernels sps_cuda_idx_kernels;
#endif

#ifdef __cplusplus
}
#endif
#endif
