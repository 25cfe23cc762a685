/* libspsolve — preconditioner internals shared by precond/ and solvers/.
 *
 * A preconditioner is an operator M ~ A^{-1}: struct sps_precond_s embeds an
 * sps_operator_s whose apply is y = alpha M x + beta y, so M goes wherever an
 * operator goes (sps_precond_operator gives that view), and the solvers apply M
 * through it.  Each method is one file that fills an sps_precond_method;
 * precond.c holds the registry (name -> method), the setup protocol and the
 * public API.
 *
 * Setup protocol (precond.c), for every method:
 *   sps_precond_new            -> EMPTY
 *   sps_precond_setup(op, A)   -> symbolic, then numeric -> READY
 *                                 (a failed numeric leaves SYMBOLIC, a failed symbolic EMPTY)
 *   sps_precond_update(op, A)  -> numeric only, on what symbolic made -> READY
 * The generic layer checks the arguments against the method's needs, sizes P
 * (n, t) and keeps the pattern it was set up for (rows, columns, nnz) to refuse
 * an update with another one.  Methods see only checked arguments. */
#ifndef SPS_PRECOND_IMPL_H
#define SPS_PRECOND_IMPL_H
#include "formats/format.h"

#include <stddef.h>

typedef struct sps_precond_method {
    sps_precond_type type;
    const char *name;
    /* SPS_PRECOND_*: what M always is (the shell's come from its creator instead);
     * IDENTITY: M = I, solvers skip the application (z aliases r) */
    unsigned flags;
    /* setup reads the matrix entries (not only the operator): A must be given */
    int needs_entries;
    /* the shape is fixed at creation (shell): setup and update only check it */
    int fixed_shape;
    /* Declared options (spsolve/options.h), set by sps_precond_set_option into
     * P->opts and read by the method with sps_opt_int / sps_opt_num. */
    const sps_option_desc *options;
    int noptions;
    /* Pattern step: allocate everything that depends only on the sizes and the
     * sparsity pattern (P->op.n, P->op.t are set).  op is never NULL (when only A
     * is given, setup wraps it); A is not NULL when needs_entries.  Both are the
     * caller's and valid during the call only.  NULL: nothing to do.  Runs once per
     * sps_precond_setup. */
    sps_status (*symbolic)(sps_precond P, sps_operator op, sps_matrix A);
    /* Values step: compute M from the current values into what symbolic made,
     * allocating nothing it can reuse.  Runs at every setup and update.  A failure
     * leaves P in SYMBOLIC (M unusable until a numeric step succeeds). */
    sps_status (*numeric)(sps_precond P, sps_operator op, sps_matrix A);
    /* y = op(M) x (mode N or T); P is READY, x and y are checked and may be the same
     * vector.  SPS_ERR_UNSUPPORTED for a mode it does not have. */
    sps_status (*apply)(sps_precond P, sps_op_mode mode, sps_vector x, sps_vector y);
    /* Optional: y = M x and slots[out] = x^H y in one pass (PCG's z = M r, rho = r^H z);
     * x and y differ.  NULL: apply, then a dot. */
    sps_status (*apply_dot)(sps_precond P, sps_vector x, sps_vector y, sps_cplx *slots, int out);
    /* Optional: M is diag(d); d (backend memory, n scalars, valid while P is READY), so
     * PCG's step and z = M r, r^H z run as one pass (cg_step_pmul).  NULL: M is not diagonal. */
    const void *(*diagonal)(sps_precond P);
    /* Release what symbolic and numeric made (P->data), leaving P->data NULL, so a
     * later setup starts afresh.  NULL: nothing to release. */
    void (*destroy)(sps_precond P);
} sps_precond_method;

typedef enum { SPS_PC_EMPTY = 0, SPS_PC_SYMBOLIC, SPS_PC_READY } sps_pc_state;

struct sps_precond_s {
    struct sps_operator_s op;   /* first: M as an operator (SPS_OPF_VIEW); op.ctx, op.n, op.t are P's */
    const sps_precond_method *m;
    unsigned flags;             /* SPS_PRECOND_* */
    sps_pc_state state;
    struct {                    /* what the last symbolic step was run for */
        sps_index n, m;
        int64_t nnz;            /* -1: set up from an operator only */
        sps_entry_desc entry;   /* the matrix's entry type (scalar when from an operator) */
    } pattern;
    int nsymbolic, nnumeric;    /* times each step ran to completion (tests read them) */
    void *data;                 /* method private (Jacobi: its store) */
    sps_options opts;           /* the method's options (m->options), defaults until set */
    /* what the last numeric step went on despite, "" when nothing (sps_precond_warning):
     * cleared before each numeric step, written by the method */
    char warning[256];
    sps_csr_host host;          /* sps_pc_host_expanded's copy, within one setup/update call */
    int have_host;
};

extern const sps_precond_method sps_precond_none_method;
extern const sps_precond_method sps_precond_jacobi_method;
extern const sps_precond_method sps_precond_bjacobi_method;
extern const sps_precond_method sps_precond_ilu0_method;
extern const sps_precond_method sps_precond_ic0_method;
extern const sps_precond_method sps_precond_cheby_method;
extern const sps_precond_method sps_precond_shell_method;

/** A's scalar expansion on the host (a scalar matrix: its host copy), for the
 *  methods that build from the entries on the host (bjacobi, ilu0, ic0): made on
 *  the first call of a setup or an update and kept in P until that call returns,
 *  so the symbolic and numeric steps of one setup share one download (and, for
 *  block entries, one expansion).  *h is P's: read it, do not free it. */
sps_status sps_pc_host_expanded(sps_precond P, sps_matrix A, const sps_csr_host **h);

/** A new preconditioner of method m in ctx with flags (SPS_PRECOND_*), EMPTY, 0 x 0
 *  (sps_precond_new, sps_precond_create_shell). */
sps_status sps_pc_alloc(sps_context ctx, const sps_precond_method *m, unsigned flags, sps_precond *out);
/** M as an operator (apply: y = a M x + b y). */
static inline sps_operator sps_pc_op(sps_precond P) { return &P->op; }
/** Nonzero when P is absent or the identity. */
static inline int sps_pc_is_identity(sps_precond P) { return !P || (P->flags & SPS_PRECOND_IDENTITY); }
#endif
