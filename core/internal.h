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

/* ------------------------------------------------------------------ options */
/** An owner's rules between its options: NULL when they hold, else the name of
 *  the option that breaks one, with why ("expected 0 or 1 ... got 100"). */
typedef const char *(*sps_options_rule_fn)(sps_options o, char *why, size_t len);
struct sps_options_s {
    const char *owner;            /* "sell", "gmres": for messages */
    const sps_option_desc *desc;  /* the owner's declarations (static) */
    int n;
    sps_options_rule_fn rules;    /* NULL: none */
    double *val;                  /* n parsed values: the set one, else the default */
    char **given;                 /* n copies of the values set; NULL: default */
    char err[512];
};
/** A macro's value as a string literal (a declared default from the constant the code uses). */
#define SPS_STR_(x) #x
#define SPS_STR(x) SPS_STR_(x)
/** sps_options_create with the owner's rules (sps_options_check runs them). */
sps_status sps_options_create_ruled(const char *owner, const sps_option_desc *desc, int n, sps_options_rule_fn rules,
                                    sps_options *o);
/** What implementations read: the parsed value of a declared option (set, else
 *  its default).  INT, BOOL (0/1) and CHOICE (index of the word) by sps_opt_int,
 *  REAL by sps_opt_num.  A name o does not declare reads 0 / NaN (tests walk
 *  every table, so that is a bug caught there). */
int sps_opt_int(sps_options o, const char *name);
double sps_opt_num(sps_options o, const char *name);

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
/** The context's kernel tables (kernels/kernels.h): the vector family of type t, the
 *  matrix family of scalar entries of type t, the index family. */
static inline const sps_vec_kernels *sps_kvec(sps_context ctx, sps_scalar t) { return &ctx->ex.be->vec[t]; }
static inline const sps_mat_kernels *sps_kmat(sps_context ctx, sps_scalar t) { return &ctx->ex.be->mat[t]; }
static inline const sps_idx_kernels *sps_kidx(sps_context ctx) { return ctx->ex.be->idx; }
/** The compound family of entry type e and scalar t (NULL where the backend has none). */
static inline const sps_cmp_kernels *sps_kcmp(sps_context ctx, sps_entry_desc e, sps_scalar t)
{
    return sps_cmp_kernels_for(ctx->ex.be, e, t);
}

/** The descriptor a matrix keeps for entry type e (valid): the scalar one zeroed, as every
 *  reader leaves it, the quaternion's block 4 whatever the caller's (types.h: ignored), so
 *  sps_matrix_info reports one descriptor a type. */
static inline sps_entry_desc sps_entry_stored(sps_entry_desc e)
{
    return e.kind == SPS_ENTRY_SCALAR ? (sps_entry_desc){0} : e.kind == SPS_ENTRY_QUATERNION ? sps_entry_quaternion() : e;
}

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
    char warning[256];            /* what reading it from a file went on despite (sps_vector_warning), "" when
                                     nothing: as a matrix's */
};

/** Check that vectors are non-NULL, share a context and type, and sizes match. */
sps_status sps_vector_check_pair(const char *fn, sps_vector x, sps_vector y);

/* ------------------------------------------------------------------ vector layer */
/* What solvers and preconditioners do with vectors, on sps_vector handles (the
 * kernels' backend pointers stay below this line).  This layer is where a
 * distributed build adds its reductions: every op that reduces writes a local
 * sum into slots[out] and, where it also decides something from that sum (the
 * stop flag of cg_step, the guard slots), names the decision's slots separately
 * (sps_cg_slots.rr / .stop): a single-device build fuses the two into one kernel,
 * a distributed one would reduce, allreduce the slot, then decide.  Vectors are
 * those of one context and type; sizes are the callers' to check. */
sps_status sps_v_fill(sps_vector x, sps_cplx a);                            /* x = a */
sps_status sps_v_copy(sps_vector x, sps_vector y);                          /* y = x */
sps_status sps_v_axpby(sps_cplx a, sps_vector x, sps_cplx b, sps_vector y); /* y = a x + b y */
sps_status sps_v_pmul(sps_vector d, sps_vector x, sps_vector y);            /* y = d .* x */
sps_status sps_v_dot(sps_vector x, sps_vector y, sps_cplx *slots, int out); /* slots[out] = x^H y */
sps_status sps_v_nrm2(sps_vector x, sps_cplx *slots, int out);              /* slots[out] = ||x|| */
sps_status sps_v_nrm_inf(sps_vector x, sps_cplx *slots, int out);           /* slots[out] = max |x_i| */
/* slots[xy] = x^H y, slots[xx] = x^H x */
sps_status sps_v_dot2(sps_vector x, sps_vector y, sps_cplx *slots, int xy, int xx);
/* y += c x;  x = c x;  w = x + c y  (c from slots) */
sps_status sps_v_axpy_s(const sps_cplx *slots, sps_scoef c, sps_vector x, sps_vector y);
sps_status sps_v_scale_s(const sps_cplx *slots, sps_scoef c, sps_vector x);
sps_status sps_v_waxpy_s(sps_vector x, const sps_cplx *slots, sps_scoef c, sps_vector y, sps_vector w);
/* y += c x, then slots[out] = z^H y */
sps_status sps_v_axpy_dot_s(sps_cplx *slots, sps_scoef c, sps_vector x, sps_vector y, sps_vector z, int out);
/* The fused solver steps of kernels/solver_kernels.h on vectors. */
sps_status sps_v_cg_step(sps_cplx *slots, sps_cg_slots k, sps_vector p, sps_vector q, sps_vector x, sps_vector r);
sps_status sps_v_bicgstab_p(const sps_cplx *slots, sps_bicgstab_slots k, sps_vector r, sps_vector v, sps_vector p);
sps_status sps_v_bicgstab_xr(sps_cplx *slots, sps_bicgstab_slots k, sps_vector rhat, sps_vector ph, sps_vector sh,
                             sps_vector s, sps_vector t, sps_vector x, sps_vector r);

/* ------------------------------------------------------------------ the context's queue */
/* The backend's asynchronous machinery as solvers use it (each a no-op or
 * "absent" where the backend has none: the CPU). */
sps_status sps_dzero(sps_context ctx, void *p, size_t bytes);
/** Nonzero where the backend records and replays graphs (CUDA). */
int sps_q_graphs(sps_context ctx);
sps_status sps_q_capture_begin(sps_context ctx);
sps_status sps_q_capture_end(sps_context ctx, void **graph);
sps_status sps_q_graph_launch(sps_context ctx, void *graph);
void sps_q_graph_destroy(sps_context ctx, void *graph);
/** Nonzero where slots can be fetched asynchronously (fetch_begin / fetch_wait). */
int sps_q_async_fetch(sps_context ctx);
/** Arm (src) or disarm (NULL) the fetch of the next reductions; SPS_OK where the backend cannot. */
sps_status sps_q_fetch_arm(sps_context ctx, const void *src, size_t bytes, int buf);
sps_status sps_q_fetch_begin(sps_context ctx, const void *src, size_t bytes);
sps_status sps_q_fetch_wait(sps_context ctx, void *dst, size_t bytes);

/* ------------------------------------------------------------------ operators */
/** A fused product: the work around y = A x that an operator may do in the same
 *  pass over A (or decline: then sps_op_apply_fused runs the generic steps). */
typedef enum {
    SPS_FUSE_DOT,      /* y = A x;  slots[out] = x^H y */
    SPS_FUSE_XPAY_DOT, /* x = z + c pold;  y = A x;  slots[out] = x^H y  (x aliases neither z nor pold) */
    SPS_FUSE_CG_ITER,  /* SPS_FUSE_XPAY_DOT with out = k.pq, then cg_step(k, x, y, cx, cr) */
    /* offered to a preconditioner M (PCG): cg_step(k, p, q, cx, x), then y = M x;  slots[out] = x^H y
     * (x the residual; when the step is not taken, y and slots[out] may be left unwritten) */
    SPS_FUSE_CG_STEP_DOT
} sps_fuse_kind;

typedef struct sps_fuse_desc {
    sps_fuse_kind kind;
    sps_vector x, y;        /* the product's input (written first by XPAY_DOT / CG_ITER) and output */
    sps_vector z, pold;     /* XPAY_DOT, CG_ITER */
    sps_scoef c;            /* XPAY_DOT, CG_ITER: coefficient of pold, from slots */
    sps_cplx *slots;
    int out;                /* DOT, XPAY_DOT: the slot of x^H y */
    sps_vector cx, cr;      /* CG_ITER: the CG step's iterate and residual; CG_STEP_DOT: cx */
    sps_cg_slots k;         /* CG_ITER, CG_STEP_DOT */
    sps_vector p, q;        /* CG_STEP_DOT: the step's direction and A p */
} sps_fuse_desc;

/** Operator flags (sps_operator_s.flags). */
enum {
    /* apply and apply_fused only queue backend work (no host synchronisation, no
     * allocation): iterations may be recorded as graphs.  Matrix operators;
     * preconditioners that say so (SPS_PRECOND_CAPTURABLE); never a shell operator. */
    SPS_OPF_CAPTURABLE = 1u << 0,
    /* embedded in the object that owns it (a preconditioner): sps_operator_destroy
     * ignores it, the owner releases op->tmp */
    SPS_OPF_VIEW = 1u << 1
};

typedef struct sps_operator_vtbl {
    sps_status (*apply)(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y);
    /* Optional: do d in fewer passes; *done = 0 (and nothing written) declines. */
    sps_status (*apply_fused)(sps_operator op, const sps_fuse_desc *d, int *done);
    void (*destroy)(sps_operator op);
} sps_operator_vtbl;

struct sps_operator_s {
    sps_context ctx;
    sps_index n, m;
    sps_scalar t;
    unsigned flags;               /* SPS_OPF_* */
    const sps_operator_vtbl *vt;
    void *impl;                   /* the implementation's object (a matrix operator's sps_matrix) */
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
/** A new operator handle of n x m, type t, with vtable vt and implementation impl. */
sps_status sps_op_new(sps_context ctx, sps_index n, sps_index m, sps_scalar t, const sps_operator_vtbl *vt, void *impl,
                      unsigned flags, sps_operator *out);
/** y = a op(A) x + b y with host coefficients. */
sps_status sps_op_apply(sps_operator op, sps_op_mode mode, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y);
/** Do d: in one pass where the operator fuses it, else by the generic steps (XPAY_DOT:
 *  waxpy_s, then DOT; DOT: apply, then dot; CG_ITER: XPAY_DOT, then cg_step), each
 *  again offered to the operator first. */
sps_status sps_op_apply_fused(sps_operator op, const sps_fuse_desc *d);

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
