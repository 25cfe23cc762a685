/* libspsolve — internal definitions shared by core/, formats/, solvers/, precond/.
 * Not installed; applications use include/spsolve only. */
#ifndef SPS_CORE_INTERNAL_H
#define SPS_CORE_INTERNAL_H

#include "spsolve/spsolve.h"
#include "kernels/kernels.h"

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

/** Propagate a failure: return it from the enclosing function. */
#define SPS_CHECK(expr)                         \
    do {                                        \
        sps_status sps_check_st_ = (expr);      \
        if (sps_check_st_ != SPS_OK) return sps_check_st_; \
    } while (0)
/** Propagate a failure by jumping to a cleanup label with `st` set. */
#define SPS_CHECK_GOTO(st, expr, label)         \
    do {                                        \
        (st) = (expr);                          \
        if ((st) != SPS_OK) goto label;         \
    } while (0)

/* ------------------------------------------------------------------ backends */
typedef enum { SPS_COPY_H2D, SPS_COPY_D2H, SPS_COPY_D2D, SPS_COPY_H2H } sps_copy_kind;

/** What a backend provides besides its kernels: memory and synchronisation.
 *  Memory returned by alloc belongs to the backend (device memory on CUDA). */
typedef struct sps_backend_ops {
    const char *name;
    sps_status (*init)(sps_context ctx, int device);   /* fills ctx->be_state, ctx->device_name */
    void (*fini)(sps_context ctx);
    sps_status (*alloc)(sps_context ctx, void **p, size_t bytes);  /* SPS_ERR_ALLOC naming bytes */
    /* Stream-ordered: p may still be read by work queued before the call; the
     * memory is reused only after that work (callers need no synchronisation). */
    void (*release)(sps_context ctx, void *p);
    sps_status (*copy)(sps_context ctx, void *dst, const void *src, size_t bytes, sps_copy_kind kind);
    sps_status (*zero)(sps_context ctx, void *p, size_t bytes);
    sps_status (*synchronize)(sps_context ctx);
    const sps_kernels *kernels;                         /* indexed by sps_scalar */
    /* Optional (NULL where the backend's copies are synchronous anyway, the CPU):
     * fetch_begin queues a copy of `bytes` (<= SPS_FETCH_MAX_BYTES) of backend memory
     * into the backend's pinned staging after the work queued so far and returns at
     * once; fetch_wait waits for it and copies the staging to dst.  One fetch is
     * outstanding at a time.  This is how a solver learns its residual while the
     * next iteration is already queued. */
    sps_status (*fetch_begin)(sps_context ctx, const void *src, size_t bytes);
    sps_status (*fetch_wait)(sps_context ctx, void *dst, size_t bytes);
    /* Optional: record the work queued between capture_begin and capture_end as a
     * replayable graph (CUDA graphs) instead of running it; graph_launch queues one
     * replay.  Nothing may synchronise while capturing. */
    sps_status (*capture_begin)(sps_context ctx);
    sps_status (*capture_end)(sps_context ctx, void **graph);
    sps_status (*graph_launch)(sps_context ctx, void *graph);
    void (*graph_destroy)(sps_context ctx, void *graph);
    /* Optional: arm the fetch of `bytes` at src into staging buffer buf (0 or 1)
     * for the work queued next: reductions that end an iteration then write the
     * staging themselves, and fetch_begin of the same range costs no launch.  A
     * solver arms each iteration before queueing it (alternating buffers, so the
     * next one can run while the host reads this one's) and disarms (src NULL)
     * when it stops: src must stay valid while armed. */
    sps_status (*fetch_arm)(sps_context ctx, const void *src, size_t bytes, int buf);
} sps_backend_ops;
#define SPS_FETCH_MAX_BYTES 4096

extern const sps_backend_ops sps_cpu_backend;
#ifdef SPS_HAVE_CUDA
extern const sps_backend_ops sps_cuda_backend;
int sps_cuda_device_count(void);
#endif

struct sps_context_s {
    sps_backend backend;
    int device;
    const sps_backend_ops *be;
    void *be_state;               /* backend private (CUDA: handles, workspace) */
    void *stream;                 /* CUDA: the cudaStream_t all work is queued on; NULL on the CPU */
    sps_cplx *scratch;            /* one slot in backend memory for public reductions (lazy) */
    char device_name[256];
    sps_status last_status;
    char errmsg[2048];
    char err_origin[256];         /* "core/vector.c:42" of the last sps_error */
};

/** Kernel table of the context's backend for scalar type t. */
static inline const sps_kernels *sps_kern(sps_context ctx, sps_scalar t) { return &ctx->be->kernels[t]; }

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

/** Make a matrix of format fmt from canonical host CSR (ownership of csr stays with caller). */
sps_status sps_matrix_from_csr_host(sps_context ctx, const sps_csr_host *csr, sps_format fmt,
                                    const sps_format_options *opt, sps_symmetry sym, sps_matrix *A);

/* ------------------------------------------------------------------ operators */
typedef struct sps_operator_vtbl {
    sps_status (*apply)(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y);
    void (*destroy)(sps_operator op);
} sps_operator_vtbl;

/* sps_operator_s.flags */
enum {
    /* apply only queues backend work (no host synchronisation, no allocation): a
     * solver may record it in a CUDA graph.  Matrix operators; preconditioners that
     * say so (SPS_PRECOND_CAPTURABLE); never a shell operator. */
    SPS_OPF_CAPTURABLE = 1u << 0,
    /* embedded in the object that owns it (a preconditioner): sps_operator_destroy
     * ignores it, the owner releases op->tmp */
    SPS_OPF_VIEW = 1u << 1
};

struct sps_operator_s {
    sps_context ctx;
    sps_index n, m;
    sps_scalar t;
    unsigned flags;               /* SPS_OPF_* */
    const sps_operator_vtbl *vt;
    sps_matrix A;                 /* matrix operators */
    sps_apply_fn apply_fn, apply_t_fn;  /* shell operators */
    void *user;
    sps_vector tmp;               /* shell: holds op(A) x when alpha/beta are not (1, 0) */
};

/** Nonzero when op's apply may be recorded in a CUDA graph (SPS_OPF_CAPTURABLE). */
static inline int sps_op_capturable(sps_operator op) { return (op->flags & SPS_OPF_CAPTURABLE) != 0; }
/** t = op(A) x of an operator whose implementation computes only the plain product. */
typedef sps_status (*sps_op_plain_fn)(sps_operator op, sps_op_mode mode, sps_vector x, sps_vector y);
/** y = a t + b y with t = plain(op, mode, x): plain writes y itself when (a, b) = (1, 0),
 *  else it writes op->tmp (allocated on first use) and one axpby follows.  The vt->apply
 *  of operators that compute only op(A) x (shells, preconditioners). */
sps_status sps_op_apply_plain(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y,
                              sps_op_plain_fn plain);
/** Run a user callback fn(user, x, y).  A failure the callback recorded itself (a library
 *  call inside it failed) keeps its message; any other failure is recorded here as
 *  "<what> callback failed with <status>", so the context never shows an older,
 *  unrelated message for it. */
sps_status sps_call_user(sps_context ctx, sps_apply_fn fn, void *user, sps_vector x, sps_vector y, const char *what);
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
