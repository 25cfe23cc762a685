/* libspsolve — internal definitions shared by core/, formats/, solvers/, precond/.
 * Not installed; applications use include/spsolve only. */
#ifndef SPS_CORE_INTERNAL_H
#define SPS_CORE_INTERNAL_H

#include "spsolve/spsolve.h"
#include "kernels/backend.h"

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ errors */
/** Record an error in ctx (message formatted like printf) and return st.
 *  The source location is kept beside the message (sps_context_error_origin). */
sps_status sps_error_at(sps_context ctx, sps_status st, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
#define sps_error(ctx, st, ...) sps_error_at((ctx), (st), __FILE__, __LINE__, __VA_ARGS__)
/** The sink every context installs in its sps_exec (sink = the context). */
sps_status sps_context_error_sink(void *sink, sps_status st, const char *file, int line, const char *msg);

/* ------------------------------------------------------------------ context */
struct sps_context_s {
    sps_exec ex;                  /* what kernels and the backend get: backend table, stream, state, error sink */
    sps_backend backend;
    sps_cplx *scratch;            /* one slot in backend memory for public reductions (lazy) */
    sps_status last_status;
    char errmsg[2048];
    char err_origin[256];         /* "core/vector.c:42" of the last sps_error */
};

/** The execution struct kernels and backend operations of ctx take. */
static inline sps_exec *sps_ex(sps_context ctx) { return &ctx->ex; }
/** Kernel table of the context's backend for scalar type t. */
static inline const sps_kernels *sps_kern(sps_context ctx, sps_scalar t) { return &ctx->ex.be->kernels[t]; }

/** Backend memory helpers (errors recorded in ctx). */
sps_status sps_dmalloc(sps_context ctx, void **p, size_t bytes);
void sps_dfree(sps_context ctx, void *p);
sps_status sps_dcopy(sps_context ctx, void *dst, const void *src, size_t bytes, sps_copy_kind kind);
/** Allocate backend memory and copy `bytes` from host src into it. */
sps_status sps_dupload(sps_context ctx, void **dst, const void *src, size_t bytes);
/** Allocate host memory (named `what` in errors) and copy `bytes` from backend src into it. */
sps_status sps_ddownload(sps_context ctx, void **dst, const void *src, size_t bytes, const char *what);
/** Host memory helpers: SPS_ERR_ALLOC naming bytes and purpose on failure. */
sps_status sps_hmalloc(sps_context ctx, void **p, size_t bytes, const char *what);
sps_status sps_hcalloc(sps_context ctx, void **p, size_t bytes, const char *what);

/* ------------------------------------------------------------------ vectors */
struct sps_vector_s {
    sps_context ctx;
    sps_index n;
    sps_scalar t;
    void *data;                   /* backend memory */
};

/** Check that vectors are non-NULL, share a context and type, and sizes match. */
sps_status sps_vector_check_pair(const char *fn, sps_vector x, sps_vector y);

/* ------------------------------------------------------------------ host CSR */
/** The interchange format: host memory, 0-based, columns sorted within rows, no
 *  duplicates, indices in range.  Values interleaved for complex. */
typedef struct {
    sps_index n, m;
    int64_t nnz;
    sps_scalar t;
    sps_index *rowptr;  /* n + 1 */
    sps_index *col;     /* nnz */
    void *val;          /* nnz scalars of type t */
} sps_csr_host;

void sps_csr_host_free(sps_csr_host *c);
/** Build canonical host CSR from 0-based triplets of doubles (complex interleaved
 *  when src_complex), converting to type t: sorts, sums duplicates, checks ranges. */
sps_status sps_csr_host_from_triplets(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                      const sps_index *row, const sps_index *col, const double *val,
                                      int src_complex, sps_scalar t, sps_csr_host *out);

/* ------------------------------------------------------------------ matrices & formats */
/** CSR arrays in backend memory (the store of a CSR matrix). */
typedef struct sps_csr_store {
    sps_index *rowptr, *col;
    void *val;
} sps_csr_store;

typedef struct sps_format_ops {
    sps_format id;
    const char *name;
    const char *summary;                /* one line for --help */
    /* Build B->store from canonical host CSR (B's ctx, t, n, m, nnz are set). */
    sps_status (*from_csr)(sps_matrix B, const sps_csr_host *csr, const sps_format_options *opt);
    /* Copy A back into canonical host CSR (allocates out). */
    sps_status (*to_csr)(sps_matrix A, sps_csr_host *out);
    /* Optional: build B->store from a CSR matrix already in backend memory, with
     * backend kernels (so a CUDA build never leaves the device; the same code runs
     * on the CPU backend).  sps_matrix_convert prefers it when the source is CSR. */
    sps_status (*from_backend_csr)(sps_matrix B, const struct sps_csr_store *src, const sps_format_options *opt);
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
    /* Optional: bits of each stored entry's column index (sps_matrix_info_t.index_bits); NULL: 32. */
    int (*index_bits)(sps_matrix A);
} sps_format_ops;

/** The format registry: one entry per format compiled in, in display order. */
const sps_format_ops *sps_format_lookup(sps_format id);
int sps_format_count(void);
const sps_format_ops *sps_format_at(int i);

struct sps_matrix_s {
    sps_context ctx;
    const sps_format_ops *ops;
    sps_scalar t;
    sps_index n, m;
    int64_t nnz;
    sps_symmetry sym;
    void *store;                  /* format private */
};

/** Host CSR copy of any matrix (allocates h; freed on failure). */
sps_status sps_matrix_to_host(sps_matrix A, sps_csr_host *h);
/** Make a matrix of format fmt from canonical host CSR (ownership of csr stays with caller). */
sps_status sps_matrix_from_csr_host(sps_context ctx, const sps_csr_host *csr, sps_format fmt,
                                    const sps_format_options *opt, sps_symmetry sym, sps_matrix *A);

/* ------------------------------------------------------------------ operators */
typedef struct sps_operator_vtbl {
    sps_status (*apply)(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y);
    void (*destroy)(sps_operator op);
} sps_operator_vtbl;

struct sps_operator_s {
    sps_context ctx;
    sps_index n, m;
    sps_scalar t;
    const sps_operator_vtbl *vt;
    sps_matrix A;                 /* matrix operators */
    sps_apply_fn apply_fn, apply_t_fn;  /* shell operators */
    void *user;
    sps_vector tmp;               /* shell: holds op(A) x when alpha/beta are not (1, 0) */
};

/** y = a op(A) x + b y with host coefficients. */
sps_status sps_op_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y);
/** y = A x and slots[out] = x^H y (A square): fused where the format has it, else apply + dot. */
sps_status sps_op_apply_dot(sps_operator op, sps_vector x, sps_vector y, sps_cplx *slots, int out);
/** pnew = z + c pold (c from slots), q = A pnew, slots[out] = pnew^H q: one pass where the
 *  format fuses them, else waxpy_s + sps_op_apply_dot. */
sps_status sps_op_apply_xpay_dot(sps_operator op, sps_vector z, sps_cplx *slots, sps_scoef c, sps_vector pold,
                                 sps_vector pnew, sps_vector q, int out);
/* One CG iteration on operator op: sps_op_apply_xpay_dot (out = k.pq), then cg_step
 * on (pnew, q, x, r); one fused pass where the format has one. */
sps_status sps_op_cg_iter(sps_operator op, sps_vector z, sps_cplx *slots, sps_scoef c, sps_vector pold,
                          sps_vector pnew, sps_vector q, sps_vector x, sps_vector r, sps_cg_slots k);

/* ------------------------------------------------------------------ scalars */
/** Read one scalar of type t at p as sps_cplx (NULL gives dflt). */
sps_cplx sps_cplx_load(sps_scalar t, const void *p, sps_cplx dflt);
/** Store c as one scalar of type t at p. */
void sps_cplx_store(sps_scalar t, sps_cplx c, void *p);

/** Wall clock in seconds (monotonic). */
double sps_wtime(void);

#ifdef __cplusplus
}
#endif
#endif
