/* Allocation fault injection (issue 24 item 10; core/fault.h, built with
 * -DSPSOLVE_FAULT_INJECTION=ON, which .ci/run's sanitizer build sets): a scenario
 * that reads matrices (scalar, complex, quaternion), converts them to every scalar
 * format and to bcsr, sums two (sps_matrix_add), sets up each preconditioner and solves
 * with each solver, run
 * again and again with its k-th host allocation failing, for every k until a run
 * makes fewer than k allocations.  Each run must stop at the failure with
 * SPS_ERR_ALLOC and a message, clean up (LeakSanitizer checks at exit), and leave
 * the process able to run the whole scenario again.  Built with SPS_FAULT_GPU
 * (test_gpu_fault, label gpu) the scenario runs on the CUDA backend and its device
 * allocations fail in turn instead.  Ends "N passed, M failed". */
#include "testutil.h"
#include "core/fault.h"
#ifdef SPS_FAULT_GPU
#include "test_gpu_util.h"
#define FAULT_BACKEND SPS_BACKEND_CUDA
#define fault_set sps_fault_set_device
#define fault_hits sps_fault_device_hits
#define fault_count sps_fault_device_count
#define FAULT_WHAT "device"
#else
#define FAULT_BACKEND SPS_BACKEND_CPU
#define fault_set sps_fault_set
#define fault_hits sps_fault_hits
#define fault_count sps_fault_count
#define FAULT_WHAT "host"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const mtx_real =
    "%%MatrixMarket matrix coordinate real symmetric\n6 6 11\n1 1 4\n2 1 -1\n2 2 4\n3 2 -1\n3 3 4\n4 3 -1\n"
    "4 4 4\n5 4 -1\n5 5 4\n6 5 -1\n6 6 4\n";
static const char *const mtx_cplx =
    "%%MatrixMarket matrix coordinate complex general\n3 3 5\n1 1 4 1\n2 2 4 0\n3 3 5 -1\n1 2 1 1\n3 1 0 1\n";
static const char *const mtx_quat =
    "%%MatrixMarket matrix coordinate quaternion hermitian\n2 2 3\n1 1 4 0 0 0\n2 1 1 0.5 -0.5 0.25\n2 2 4 0 0 0\n";

typedef struct {
    sps_status st;   /* the first failure */
    char msg[256];   /* its message */
    char where[32];  /* the step */
} outcome;

/* Record the first failure of a step; returns nonzero when the scenario goes on. */
static int step(outcome *o, sps_context ctx, sps_status st, const char *where)
{
    if (st == SPS_OK) return 1;
    if (o->st == SPS_OK) {
        o->st = st;
        snprintf(o->where, sizeof o->where, "%s", where);
        snprintf(o->msg, sizeof o->msg, "%s", ctx ? sps_context_error(ctx) : "(no context)");
    }
    return 0;
}

/* Solve A x = A*1 with solver s and preconditioner pc (NULL: none). */
static int solve_one(outcome *o, sps_context ctx, sps_matrix A, const char *s, const char *pc)
{
    sps_matrix_info_t info;
    if (!step(o, ctx, sps_matrix_info(A, &info), "info")) return 0;
    const sps_index n = info.rows * sps_entry_dim(info.entry);
    sps_vector x = NULL, b = NULL, one = NULL;
    sps_operator op = NULL;
    sps_solver S = NULL;
    sps_precond P = NULL;
    int ok = step(o, ctx, sps_vector_create(ctx, n, info.scalar, &x), "vector") &&
             step(o, ctx, sps_vector_create(ctx, n, info.scalar, &b), "vector") &&
             step(o, ctx, sps_vector_create(ctx, n, info.scalar, &one), "vector");
    double onev[2] = {1.0, 0.0};
    float onef[2] = {1.0f, 0.0f};
    const void *unit = (info.scalar == SPS_F32 || info.scalar == SPS_C32) ? (const void *)onef : (const void *)onev;
    ok = ok && step(o, ctx, sps_vector_fill(one, unit), "fill") &&
         step(o, ctx, sps_operator_from_matrix(A, &op), "operator") &&
         step(o, ctx, sps_operator_apply(op, SPS_OP_N, NULL, one, NULL, b), "apply");
    if (ok && pc) ok = step(o, ctx, sps_precond_create_by_name(A, pc, &P), pc);
    ok = ok && step(o, ctx, sps_solver_create_by_name(ctx, s, &S), "solver") &&
         step(o, ctx, sps_solver_set_operator(S, op), "set operator") &&
         (!P || step(o, ctx, sps_solver_set_precond(S, P), "set precond"));
    if (ok) {
        sps_result res;
        const sps_status st = sps_solver_solve(S, b, x, &res);
        ok = step(o, ctx, st == SPS_ERR_NOT_CONVERGED ? SPS_OK : st, s);
    }
    sps_solver_destroy(S);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    sps_vector_destroy(x);
    sps_vector_destroy(b);
    sps_vector_destroy(one);
    return ok;
}

/* sell's options with values dict, made before any injection (options hold no context for a message) */
static sps_options g_dict;

/* The whole scenario; its first failure in *o (st SPS_OK: it ran to the end). */
static void scenario(outcome *o)
{
    memset(o, 0, sizeof *o);
    sps_context ctx = NULL;
    if (!step(o, NULL, sps_context_create(&ctx, FAULT_BACKEND, 0), "context")) return;
    sps_matrix A = NULL, C = NULL, Q = NULL;
    int ok = step(o, ctx, sps_matrix_read_mtx_buffer(ctx, mtx_real, strlen(mtx_real), "real", SPS_F64, NULL, &A), "read") &&
             step(o, ctx, sps_matrix_read_mtx_buffer(ctx, mtx_cplx, strlen(mtx_cplx), "cplx", SPS_C64, NULL, &C), "read") &&
             step(o, ctx, sps_matrix_read_mtx_buffer(ctx, mtx_quat, strlen(mtx_quat), "quat", SPS_F64, NULL, &Q), "read");
    /* every scalar format, each solved once */
    char *list = ok ? strdup(sps_format_list()) : NULL;
    if (ok && !list) ok = step(o, ctx, SPS_ERR_ALLOC, "strdup"); /* the test's own copy: not injected */
    char *save = NULL;
    for (char *f = list ? strtok_r(list, ", ", &save) : NULL; ok && f; f = strtok_r(NULL, ", ", &save)) {
        sps_format fmt;
        if (sps_format_by_name(f, &fmt) != SPS_OK || sps_format_compound(fmt)) continue;
        sps_matrix B = NULL;
        const sps_status cs = sps_matrix_convert(A, fmt, NULL, &B);
        if (cs == SPS_ERR_UNSUPPORTED) { /* a format without this backend's kernels (none today) */
            sps_context_clear_error(ctx);
            continue;
        }
        if (cs == SPS_ERR_ALLOC) /* the allocator names bytes; the conversion adds which format asked */
            TU_CHECK(strstr(sps_context_error(ctx), f) != NULL, "a failed conversion to %s names it: '%s'", f,
                     sps_context_error(ctx));
        ok = step(o, ctx, cs, f) && solve_one(o, ctx, B, "cg", NULL);
        sps_matrix_destroy(B);
    }
    free(list);
    /* a value dictionary (formats/vdict.h: its collect, the sorted table, the encode), solved once */
    if (ok) {
        sps_matrix B = NULL;
        ok = step(o, ctx, sps_matrix_convert(A, SPS_FMT_SELL, g_dict, &B), "sell values dict") &&
             solve_one(o, ctx, B, "cg", NULL);
        sps_matrix_destroy(B);
    }
    /* a sum of matrices (hisparse: the lists, the sort, the build from keys) */
    if (ok) {
        sps_matrix S = NULL;
        ok = step(o, ctx, sps_matrix_add(NULL, A, SPS_OP_N, NULL, A, SPS_OP_T, NULL, &S), "add") &&
             solve_one(o, ctx, S, "cg", NULL);
        sps_matrix_destroy(S);
    }
    static const char *const pcs[] = {"jacobi", "bjacobi", "ic0", "cheby"};
    for (int i = 0; ok && i < 4; i++) ok = solve_one(o, ctx, A, "cg", pcs[i]);
    ok = ok && solve_one(o, ctx, A, "bicgstab", "ilu0");
    ok = ok && solve_one(o, ctx, C, "gmres", "ilu0") && solve_one(o, ctx, C, "bicgstab", "jacobi") &&
         solve_one(o, ctx, Q, "cg", "bjacobi");
    if (ok) {
        sps_matrix B = NULL;
        ok = step(o, ctx, sps_matrix_convert(Q, SPS_FMT_BELL, NULL, &B), "bell") && solve_one(o, ctx, B, "gmres", NULL);
        sps_matrix_destroy(B);
    }
    sps_matrix_destroy(A);
    sps_matrix_destroy(C);
    sps_matrix_destroy(Q);
    sps_context_destroy(ctx);
}

#ifdef SPS_FAULT_INJECTION_BUILD
enum { FAULT_BUILT = 1 };
#else
enum { FAULT_BUILT = 0 };
#endif

int main(void)
{
    if (!FAULT_BUILT) {
        printf("test_fault: the library is not built with SPSOLVE_FAULT_INJECTION: skipped\n");
        return 77;
    }
#ifdef SPS_FAULT_GPU
    const int rc = gpu_setup("test_gpu_fault");
    if (rc) return rc;
    gpu_teardown(); /* only the check for a device: the scenario makes its own contexts */
#endif
    outcome o;
    fault_set(0);
    if (sps_format_options_create(SPS_FMT_SELL, &g_dict) != SPS_OK || sps_options_set(g_dict, "values", "dict") != SPS_OK)
        return 1;
    scenario(&o);
    TU_CHECK(o.st == SPS_OK, "the scenario without injection: %s at %s: %s", sps_status_name(o.st), o.where, o.msg);
    long k = 1, runs = 0, bad = 0;
    for (;; k++) {
        fault_set(k);
        scenario(&o);
        const long hits = fault_hits(), count = fault_count();
        fault_set(0);
        if (!hits) break; /* fewer than k allocations: every one has failed once */
        runs++;
        /* the context's own creation has no context to hold a message */
        const int good = o.st == SPS_ERR_ALLOC && (strstr(o.msg, "memory") || !strcmp(o.where, "context"));
        bad += !good;
        TU_CHECK(good, FAULT_WHAT " allocation %ld of %ld failed: the scenario %s (%s at %s: '%s')", k, count,
                 o.st == SPS_OK ? "ran on regardless" : "stopped otherwise", sps_status_name(o.st), o.where, o.msg);
        if (bad > 40) break; /* enough to go on */
    }
    TU_CHECK(runs >= 50, "only %ld " FAULT_WHAT " allocations in the scenario: is the injection built in?", runs);
    /* afterwards, the library works as before */
    scenario(&o);
    TU_CHECK(o.st == SPS_OK, "the scenario after the injections: %s at %s: %s", sps_status_name(o.st), o.where,
             o.msg);
    printf("test_fault: %ld " FAULT_WHAT " allocations failed in turn, one a run\n", runs);
    sps_options_destroy(g_dict);
    return tu_finish();
}
