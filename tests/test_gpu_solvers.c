/* GPU tests of the solvers on the CUDA backend against the CPU backend, through
 * the public API only: CG, BiCGSTAB, GMRES x no preconditioner / Jacobi, on
 *   - poisson2d:64 (SPD, 4096 rows; sps_matrix_generate), all three methods;
 *   - a nonsymmetric 2-D convection-diffusion matrix (upwind, 48 x 48 grid,
 *     built here), BiCGSTAB and GMRES;
 * in f64 and c64 (rtol 1e-8) and f32 (rtol 1e-4).  Same right-hand side and
 * zero initial guess on both backends.  Checks: same status and reason, same
 * iteration count +- 1 (BiCGSTAB: its residual is not monotone and rounding
 * moves the crossing of the tolerance: +- max(twice the spread of two CPU solves
 * with every entry of b moved by 1 ulp, + 2; 1/4 of the count)), residual histories that part
 * from the CPU's (1e-3 relative) no earlier than half as far as that 1-ulp
 * perturbation's do, solutions equal to rounding amplified by the iteration
 * (relative 1e-6 in double, 1e-2 in single), the true residual the GPU
 * reports under the tolerance, and the GPU's reported residual recomputed here.
 * CG and BiCGSTAB (f64, both problems they apply to) also run on the GPU with
 * CUDA graphs off: the same iterations, history and x bit for bit as with graphs
 * (the armed slot fetch and the fetch kernel must hand the host the same slots).
 * And with a shell preconditioner doing Jacobi on the host (sps_vector_get/set:
 * it synchronises, so the solver must not capture it in a graph although graphs
 * are on): the built-in Jacobi's iterations, history and x bit for bit (BiCGSTAB;
 * CG's Jacobi joins the CG step's pass, cg_step_pmul, whose sums take another tree:
 * there the same iterations +- 1 and x to 1e-9).
 * Exit 77 (skipped) without a usable GPU. */
#include "test_gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef SPS_HAVE_CUDA
/* Upwind convection-diffusion: -lap u + c . grad u on an N x N grid, c = (20, 10). */
static void convdiff(int N, sps_index **rowptr, sps_index **col, double **val, sps_index *n_out)
{
    const sps_index n = N * N;
    *rowptr = gb_xmalloc(((size_t)n + 1) * sizeof(sps_index));
    *col = gb_xmalloc((size_t)n * 5 * sizeof(sps_index));
    *val = gb_xmalloc((size_t)n * 5 * sizeof(double));
    const double h = 1.0 / (N + 1), cx = 20, cy = 10;
    sps_index k = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            const sps_index r = j * N + i;
            (*rowptr)[r] = k;
            if (j > 0) { (*col)[k] = r - N; (*val)[k++] = -1.0 - cy * h; }
            if (i > 0) { (*col)[k] = r - 1; (*val)[k++] = -1.0 - cx * h; }
            (*col)[k] = r;
            (*val)[k++] = 4.0 + (cx + cy) * h;
            if (i < N - 1) { (*col)[k] = r + 1; (*val)[k++] = -1.0; }
            if (j < N - 1) { (*col)[k] = r + N; (*val)[k++] = -1.0; }
        }
    (*rowptr)[n] = k;
    *n_out = n;
}

static sps_matrix make_problem(sps_context ctx, int which, sps_scalar t)
{
    sps_matrix A = NULL;
    if (which == 0) {
        if (sps_matrix_generate(ctx, "poisson2d:64", t, &A) != SPS_OK) {
            TU_CHECK(0, "generate poisson2d:64: %s", sps_context_error(ctx));
            return NULL;
        }
        return A;
    }
    sps_index *rp, *ci, n;
    double *v;
    convdiff(48, &rp, &ci, &v, &n);
    const size_t nnz = (size_t)rp[n];
    void *vt = gb_xmalloc(nnz * sps_scalar_size(t));
    for (size_t k = 0; k < nnz; k++) {
        switch (t) {
        case SPS_F32: ((float *)vt)[k] = (float)v[k]; break;
        case SPS_F64: ((double *)vt)[k] = v[k]; break;
        case SPS_C32: ((float *)vt)[2 * k] = (float)v[k]; ((float *)vt)[2 * k + 1] = 0; break;
        default: ((double *)vt)[2 * k] = v[k]; ((double *)vt)[2 * k + 1] = 0; break;
        }
    }
    if (sps_matrix_from_csr(ctx, n, n, rp, ci, vt, t, &A) != SPS_OK) {
        TU_CHECK(0, "convdiff matrix: %s", sps_context_error(ctx));
        A = NULL;
    }
    free(rp);
    free(ci);
    free(v);
    free(vt);
    return A;
}

typedef struct {
    sps_status st;
    sps_result res;
    void *x;
    double *hist; /* copy of res.history (res.history_len entries) */
} outcome;

static int g_graphs = 1; /* sps_solver_set_graphs of the next solves */

/* The shell preconditioner of solve_on (SPS_PRECOND_SHELL, f64): Jacobi on the host. */
typedef struct {
    sps_index n;
    double *dinv, *v;
} host_jacobi;

static sps_status host_jacobi_apply(void *user, sps_vector x, sps_vector y)
{
    host_jacobi *h = user;
    SPS_CHECK(sps_vector_get(x, h->v));
    for (sps_index i = 0; i < h->n; i++) h->v[i] = h->dinv[i] * h->v[i];
    return sps_vector_set(y, h->v);
}

static outcome solve_on(sps_context ctx, int which, sps_scalar t, sps_solver_type ty, sps_precond_type pt,
                        const void *bh, double rtol)
{
    outcome o;
    memset(&o, 0, sizeof o);
    o.st = SPS_ERR_ARG;
    sps_matrix A = make_problem(ctx, which, t);
    if (!A) return o;
    sps_matrix_info_t info;
    sps_matrix_info(A, &info);
    const sps_index n = info.rows;
    o.x = gb_xmalloc((size_t)n * sps_scalar_size(t));
    sps_operator op = NULL;
    sps_precond P = NULL;
    sps_solver s = NULL;
    sps_vector b = NULL, x = NULL;
    host_jacobi hj = {n, NULL, NULL};
    if (!TU_OK(ctx, sps_operator_from_matrix(A, &op))) goto done;
    if (pt == SPS_PRECOND_SHELL) { /* f64 only */
        hj.dinv = gb_xmalloc((size_t)n * sizeof(double));
        hj.v = gb_xmalloc((size_t)n * sizeof(double));
        if (!TU_OK(ctx, sps_matrix_diagonal(A, hj.dinv))) goto done;
        for (sps_index i = 0; i < n; i++) hj.dinv[i] = 1.0 / hj.dinv[i];
        if (!TU_OK(ctx, sps_precond_create_shell(ctx, n, t, host_jacobi_apply, SPS_PRECOND_SYMMETRIC, &hj, &P)))
            goto done;
    } else if (pt != SPS_PRECOND_NONE && !TU_OK(ctx, sps_precond_create(A, pt, &P)))
        goto done;
    if (!TU_OK(ctx, sps_solver_create(ctx, ty, &s))) goto done;
    TU_OK(ctx, sps_solver_set_operator(s, op));
    if (P) TU_OK(ctx, sps_solver_set_precond(s, P));
    TU_OK(ctx, sps_solver_set_tolerances(s, rtol, 0.0, 3000));
    TU_OK(ctx, sps_solver_set_restart(s, 30));
    TU_OK(ctx, sps_solver_set_graphs(s, g_graphs));
    if (!TU_OK(ctx, sps_vector_from_host(ctx, n, t, bh, &b))) goto done;
    if (!TU_OK(ctx, sps_vector_create(ctx, n, t, &x))) goto done;
    o.st = sps_solver_solve(s, b, x, &o.res);
    if (o.st != SPS_OK)
        printf("  %s: %s (%s)\n", sps_context_device_name(ctx), sps_status_name(o.st), sps_context_error(ctx));
    TU_OK(ctx, sps_vector_get(x, o.x));
    /* keep the residual history beyond the solver's life */
    if (o.res.history && o.res.history_len > 0) {
        o.hist = gb_xmalloc((size_t)o.res.history_len * sizeof(double));
        memcpy(o.hist, o.res.history, (size_t)o.res.history_len * sizeof(double));
    }
    o.res.history = NULL;
done:
    sps_vector_destroy(b);
    sps_vector_destroy(x);
    sps_solver_destroy(s);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    free(hj.dinv);
    free(hj.v);
    return o;
}

/* First k where the residual histories differ by more than 1e-3 relative, -1 if never. */
static int history_part(const outcome *a, const outcome *b)
{
    const int hl = a->res.history_len < b->res.history_len ? a->res.history_len : b->res.history_len;
    for (int k = 0; k < hl && a->hist && b->hist; k++)
        if (!(fabs(a->hist[k] - b->hist[k]) <= 1e-3 * a->hist[k])) return k;
    return -1;
}

/* Move every entry of v (type t, n entries; both parts when complex) by one unit
 * in the last place, up or down at random: a rounding-sized change of the input. */
static void perturb_ulp(sps_scalar t, void *v, size_t n)
{
    const size_t k = n * (sps_scalar_is_complex(t) ? 2 : 1);
    for (size_t i = 0; i < k; i++) {
        const int up = tu_rng_uniform(&g_rng) < 0.5;
        if (t == SPS_F32 || t == SPS_C32) ((float *)v)[i] = nextafterf(((float *)v)[i], up ? INFINITY : -INFINITY);
        else ((double *)v)[i] = nextafter(((double *)v)[i], up ? INFINITY : -INFINITY);
    }
}

static void compare(int which, sps_scalar t, sps_solver_type ty, sps_precond_type pt)
{
    const char *pname = which == 0 ? "poisson2d:64" : "convdiff 48x48";
    const char *sname = ty == SPS_SOLVER_CG ? "cg" : ty == SPS_SOLVER_BICGSTAB ? "bicgstab" : "gmres";
    const char *qname = pt == SPS_PRECOND_NONE ? "none" : "jacobi";
    const int single = t == SPS_F32 || t == SPS_C32;
    const double rtol = single ? 1e-4 : 1e-8;
    const sps_index n = which == 0 ? 64 * 64 : 48 * 48;
    void *bh = gb_xmalloc((size_t)n * sps_scalar_size(t));
    tu_fill_random(&g_rng, t, (size_t)n, bh);
    outcome c = solve_on(g_cpu, which, t, ty, pt, bh, rtol);
    outcome g = solve_on(g_gpu, which, t, ty, pt, bh, rtol);
    printf("%-16s %-8s %-6s %s: cpu %s %d it (%s, rel %.3g)  gpu %s %d it (%s, rel %.3g)\n", pname, sname, qname,
           sps_scalar_name(t), sps_status_name(c.st), c.res.iterations, sps_reason_name(c.res.reason),
           c.res.relative_residual, sps_status_name(g.st), g.res.iterations, sps_reason_name(g.res.reason),
           g.res.relative_residual);
    TU_CHECK(c.st == g.st && c.res.reason == g.res.reason, "%s %s/%s %s: status cpu %s gpu %s, reason cpu %s gpu %s",
             pname, sname, qname, sps_scalar_name(t), sps_status_name(c.st), sps_status_name(g.st),
             sps_reason_name(c.res.reason), sps_reason_name(g.res.reason));
    TU_CHECK(c.st == SPS_OK, "%s %s/%s %s: converges on the CPU", pname, sname, qname, sps_scalar_name(t));
    /* The yardstick: the same CPU solve with every entry of b moved by one unit
     * in the last place.  A kernel computing the same iteration up to rounding
     * (FMA contraction, other summation trees) departs from the CPU no faster
     * than that perturbation does; a wrong kernel departs at once. */
    int part_q = -2, dq = 0;
    for (int rep = 0; rep < 2; rep++) { /* two perturbations: the spread they give */
        void *bq = gb_xmalloc((size_t)n * sps_scalar_size(t));
        memcpy(bq, bh, (size_t)n * sps_scalar_size(t));
        perturb_ulp(t, bq, (size_t)n);
        outcome q = solve_on(g_cpu, which, t, ty, pt, bq, rtol);
        const int pq = history_part(&c, &q);
        if (part_q == -2 || (pq >= 0 && (part_q < 0 || pq < part_q))) part_q = pq;
        if (abs(q.res.iterations - c.res.iterations) > dq) dq = abs(q.res.iterations - c.res.iterations);
        free(q.x);
        free(q.hist);
        free(bq);
    }
    const int part_g = history_part(&c, &g);
    printf("  histories part from the cpu's at iteration %d (gpu), %d (cpu, b moved by 1 ulp; iterations moved by up "
           "to %d)\n",
           part_g, part_q, dq);
    /* CG and GMRES: the same count +- 1 (as asked of the backend).  BiCGSTAB's
     * residual is not monotone: rounding moves the first iterate under the
     * tolerance by several steps (H100: GPU vs CPU 4 to 15 of ~140 in f64 and
     * 10 of 56 in f32; a 1-ulp change of b on the CPU alone moved f32 counts by
     * up to 16 of 95), so there +- max(2 (spread of the 1-ulp perturbations) + 2,
     * iterations / 4); the history check is what catches a wrong kernel. */
    const int slack =
        ty == SPS_SOLVER_BICGSTAB ? (2 * dq + 2 > c.res.iterations / 4 ? 2 * dq + 2 : c.res.iterations / 4) : 1;
    TU_CHECK(abs(c.res.iterations - g.res.iterations) <= slack, "%s %s/%s %s: iterations cpu %d gpu %d (slack %d)",
             pname, sname, qname, sps_scalar_name(t), c.res.iterations, g.res.iterations, slack);
    const int ref = part_q < 0 ? c.res.iterations : part_q;
    TU_CHECK(part_g < 0 || part_g >= ref / 2,
             "%s %s/%s %s: gpu history parts at iteration %d, a 1-ulp change of b's at %d", pname, sname, qname,
             sps_scalar_name(t), part_g, part_q);
    TU_CHECK(g.res.relative_residual <= rtol * 1.0001, "%s %s/%s %s: gpu true residual %.3g <= rtol %.1g", pname, sname,
             qname, sps_scalar_name(t), g.res.relative_residual, rtol);
    if (c.x && g.x) {
        const double scale = gb_maxabs(t, (size_t)n, c.x);
        /* rounding amplified by the iteration: in units of eps(t) */
        cmp_vec("solution", t, (size_t)n, g.x, c.x, single ? 1e-2 / tu_eps(t) : 1e-6 / tu_eps(t), scale);
    }
    free(c.x);
    free(g.x);
    free(c.hist);
    free(g.hist);
    free(bh);
}

/* Graphs on and off: the same bits. */
/* Two GPU solves (f64, same b) that must agree bit for bit: preconditioner pa with graphs
 * ga against pb with gb (label says which); bits 0: to rounding only (the same iterations
 * +- 1; x to 1e-9 of its largest entry when they agree, else each under the tolerance), where the two
 * sum their reductions differently. */
static void same_solves(const char *label, int which, sps_solver_type ty, sps_precond_type pa, int ga,
                        sps_precond_type pb, int gb, int bits)
{
    const sps_scalar t = SPS_F64;
    sps_matrix A = make_problem(g_cpu, which, t);
    sps_matrix_info_t info;
    TU_OK(g_cpu, sps_matrix_info(A, &info));
    sps_matrix_destroy(A);
    const sps_index n = info.rows;
    double *bh = gb_xmalloc((size_t)n * sizeof(double));
    tu_fill_random(&g_rng, t, (size_t)n, bh);
    g_graphs = ga;
    outcome on = solve_on(g_gpu, which, t, ty, pa, bh, 1e-8);
    g_graphs = gb;
    outcome off = solve_on(g_gpu, which, t, ty, pb, bh, 1e-8);
    g_graphs = 1;
    const char *name = ty == SPS_SOLVER_CG ? "cg" : "bicgstab";
    TU_CHECK(on.st == SPS_OK && off.st == SPS_OK, "%s problem %d: both solves succeed", name, which);
    if (bits) {
        TU_CHECK(on.res.iterations == off.res.iterations && on.res.history_len == off.res.history_len,
                 "%s problem %d: %s: %d / %d iterations", name, which, label, on.res.iterations, off.res.iterations);
        TU_CHECK(on.hist && off.hist && on.res.history_len == off.res.history_len &&
                     memcmp(on.hist, off.hist, (size_t)on.res.history_len * sizeof(double)) == 0,
                 "%s problem %d: %s: the same residual history bit for bit", name, which, label);
        TU_CHECK(memcmp(on.x, off.x, (size_t)n * sizeof(double)) == 0, "%s problem %d: %s: the same x", name, which,
                 label);
    } else {
        /* the same iterations: x to 1e-9 of its largest entry; one more or fewer (the sums' rounding moved
           the crossing of the tolerance): each x meets the tolerance, as its true residual says */
        TU_CHECK(abs(on.res.iterations - off.res.iterations) <= 1, "%s problem %d: %s: %d / %d iterations", name,
                 which, label, on.res.iterations, off.res.iterations);
        if (on.res.iterations == off.res.iterations && on.x && off.x)
            cmp_vec(label, t, (size_t)n, on.x, off.x, 1e-9 / tu_eps(t), gb_maxabs(t, (size_t)n, off.x));
        else
            TU_CHECK(on.res.relative_residual <= 1e-8 * 1.0001 && off.res.relative_residual <= 1e-8 * 1.0001,
                     "%s problem %d: %s: true residuals %.3g, %.3g <= 1e-8", name, which, label,
                     on.res.relative_residual, off.res.relative_residual);
    }
    printf("  %s, %s problem %d: %d / %d iterations\n", label, name, which, on.res.iterations, off.res.iterations);
    free(on.x);
    free(off.x);
    free(on.hist);
    free(off.hist);
    free(bh);
}

static void graphs_same(int which, sps_solver_type ty)
{
    same_solves("graphs on/off", which, ty, SPS_PRECOND_NONE, 1, SPS_PRECOND_NONE, 0, 1);
}

/* graphs on: the shell must run uncaptured, with Jacobi's arithmetic (CG's Jacobi joins the
 * step's pass, cg_step_pmul, whose sums take another tree: the same to rounding) */
static void shell_same(int which, sps_solver_type ty)
{
    same_solves("jacobi/shell", which, ty, SPS_PRECOND_JACOBI, 1, SPS_PRECOND_SHELL, 1, ty != SPS_SOLVER_CG);
}

int main(void)
{
    int rc = gpu_setup("test_gpu_solvers");
    if (rc) return rc;
    const sps_scalar ts[3] = {SPS_F64, SPS_C64, SPS_F32};
    const sps_solver_type ty[3] = {SPS_SOLVER_CG, SPS_SOLVER_BICGSTAB, SPS_SOLVER_GMRES};
    const sps_precond_type pt[2] = {SPS_PRECOND_NONE, SPS_PRECOND_JACOBI};
    for (int k = 0; k < 3; k++)
        for (int which = 0; which < 2; which++)
            for (int s = 0; s < 3; s++) {
                if (which == 1 && ty[s] == SPS_SOLVER_CG) continue; /* CG needs SPD */
                for (int p = 0; p < 2; p++) compare(which, ts[k], ty[s], pt[p]);
            }
    graphs_same(0, SPS_SOLVER_CG);
    graphs_same(0, SPS_SOLVER_BICGSTAB);
    graphs_same(1, SPS_SOLVER_BICGSTAB);
    shell_same(0, SPS_SOLVER_CG);
    shell_same(1, SPS_SOLVER_BICGSTAB);
    gpu_teardown();
    return tu_finish();
}
#else
int main(void)
{
    printf("test_gpu_solvers: libspsolve built without CUDA: skipped\n");
    return TU_SKIP;
}
#endif
