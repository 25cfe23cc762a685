/* GPU test of the preconditioners (precond/): each one set up on the same matrix
 * in a CPU and a CUDA context, applied to the same random vector (the GPU's output
 * NaN-poisoned first, and once in place), the results compared normwise: jacobi,
 * bjacobi (auto on a matrix of 2- and 3-unknown nodes, pc-block-size 4), ilu0 and
 * ic0 (trisolve exact and sweeps:3), cheby (degree 3); f32, f64, c32, c64.  Then CG
 * with ic0 and BiCGSTAB with ilu0 on the GPU take the CPU's iterations (+-2) and
 * reach the tolerance.  Exit 77 (skipped) without a usable CUDA device.
 * Ends with "N passed, M failed". */
#include "formats/format.h"
#include "testutil.h"
#include "test_gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tu_rng rng;

/* n x n on a ring of nodes (node p: 2 or 3 unknowns, coupled to p +- 1 and p + 7),
 * every row of a node with the node's columns; diagonally dominant; symmetric
 * pattern and values when sym (real part mirrored; the imaginary part made
 * Hermitian). */
static sps_csr_host node_matrix(sps_scalar t, int nn, int sym)
{
    int *first = tu_xcalloc((size_t)nn + 1, sizeof *first);
    for (int p = 0; p < nn; p++) first[p + 1] = first[p] + (p % 3 == 1 ? 2 : 3);
    const int n = first[nn];
    double *dense = tu_xcalloc((size_t)n * n * 2, sizeof *dense);
    for (int p = 0; p < nn; p++) {
        const int nb[3] = {(p + 1) % nn, (p + nn - 1) % nn, (p + 7) % nn};
        for (int q = 0; q < 4; q++) {
            const int o = q < 3 ? nb[q] : p;
            for (int i = first[p]; i < first[p + 1]; i++)
                for (int j = first[o]; j < first[o + 1]; j++) {
                    const double re = tu_rng_range(&rng, -1, 1), im = tu_rng_range(&rng, -1, 1);
                    dense[2 * ((size_t)i * n + j)] += re;
                    dense[2 * ((size_t)i * n + j) + 1] += im;
                    if (sym) {
                        dense[2 * ((size_t)j * n + i)] += re;
                        dense[2 * ((size_t)j * n + i) + 1] -= im;
                    }
                }
        }
    }
    sps_index *row = tu_xcalloc((size_t)n * n, sizeof *row), *col = tu_xcalloc((size_t)n * n, sizeof *col);
    double *val = tu_xcalloc((size_t)n * n * 2, sizeof *val);
    int64_t nz = 0;
    for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < n; j++) s += hypot(dense[2 * ((size_t)i * n + j)], dense[2 * ((size_t)i * n + j) + 1]);
        dense[2 * ((size_t)i * n + i)] = 2 + s; /* dominant, real */
        dense[2 * ((size_t)i * n + i) + 1] = 0;
        for (int j = 0; j < n; j++)
            if (dense[2 * ((size_t)i * n + j)] != 0 || dense[2 * ((size_t)i * n + j) + 1] != 0) {
                row[nz] = i;
                col[nz] = j;
                val[2 * nz] = dense[2 * ((size_t)i * n + j)];
                val[2 * nz + 1] = dense[2 * ((size_t)i * n + j) + 1];
                nz++;
            }
    }
    sps_csr_host h;
    TU_OK(g_cpu, sps_csr_host_from_triplets(g_cpu, n, n, nz, row, col, val, 1, t, &h));
    free(first);
    free(dense);
    free(row);
    free(col);
    free(val);
    return h;
}

static sps_matrix on(sps_context c, const sps_csr_host *h)
{
    sps_matrix A = NULL;
    TU_OK(c, sps_matrix_from_csr(c, h->n, h->m, h->rowptr, h->col, h->val, h->t, &A));
    return A;
}

static sps_precond pc_on(sps_context c, sps_matrix A, const char *name, const char *opt, const char *value)
{
    sps_precond P = tu_precond_with(c, A, name, opt, value);
    TU_CHECK(P != NULL, "%s setup: %s", name, sps_context_error(c));
    return P;
}

/* M x on both contexts, out of place (GPU output poisoned) and in place. */
static void compare_apply(const sps_csr_host *h, const char *name, const char *opt, const char *value, double f)
{
    const sps_scalar t = h->t;
    const int n = h->n;
    sps_matrix Ac = on(g_cpu, h), Ag = on(g_gpu, h);
    sps_precond Pc = pc_on(g_cpu, Ac, name, opt, value), Pg = pc_on(g_gpu, Ag, name, opt, value);
    char what[128];
    snprintf(what, sizeof what, "%s %s%s%s [%s n=%d]", name, opt ? opt : "", opt ? "=" : "", opt ? value : "",
             sps_scalar_name(t), n);
    if (Pc && Pg) {
        gbuf x = gb_rand(t, (size_t)n), y = gb_nan(t, (size_t)n);
        void *yc = gb_xmalloc((size_t)n * sps_scalar_size(t));
        sps_vector vxc = NULL, vyc = NULL, vxg = NULL, vyg = NULL;
        TU_OK(g_cpu, sps_vector_from_host(g_cpu, n, t, x.h, &vxc));
        TU_OK(g_cpu, sps_vector_create(g_cpu, n, t, &vyc));
        TU_OK(g_gpu, sps_vector_from_host(g_gpu, n, t, x.h, &vxg));
        TU_OK(g_gpu, sps_vector_from_host(g_gpu, n, t, y.h, &vyg));
        TU_OK(g_cpu, sps_precond_apply(Pc, vxc, vyc));
        TU_OK(g_gpu, sps_precond_apply(Pg, vxg, vyg));
        TU_OK(g_cpu, sps_vector_get(vyc, yc));
        void *yg = gb_xmalloc((size_t)n * sps_scalar_size(t));
        TU_OK(g_gpu, sps_vector_get(vyg, yg));
        const double scale = gb_maxabs(t, (size_t)n, yc);
        cmp_vec(what, t, (size_t)n, yg, yc, f, scale > 0 ? scale : 1);
        TU_OK(g_gpu, sps_precond_apply(Pg, vxg, vxg)); /* in place */
        TU_OK(g_gpu, sps_vector_get(vxg, yg));
        cmp_vec(what, t, (size_t)n, yg, yc, f, scale > 0 ? scale : 1);
        free(yc);
        free(yg);
        gb_free(&x);
        gb_free(&y);
        sps_vector_destroy(vxc);
        sps_vector_destroy(vyc);
        sps_vector_destroy(vxg);
        sps_vector_destroy(vyg);
    } else {
        TU_CHECK(0, "%s: setup failed (cpu %s, gpu %s)", what, sps_context_error(g_cpu), sps_context_error(g_gpu));
    }
    sps_precond_destroy(Pc);
    sps_precond_destroy(Pg);
    TU_DESTROY_MATRICES(Ac, Ag);
}

/* The solver with the preconditioner on both backends: iterations within 2. */
static void compare_solve(const sps_csr_host *h, const char *solver, const char *pc)
{
    int its[2] = {-1, -1};
    for (int k = 0; k < 2; k++) {
        sps_context c = k ? g_gpu : g_cpu;
        sps_matrix A = on(c, h);
        sps_precond P = pc_on(c, A, pc, NULL, NULL);
        sps_solver s = NULL;
        sps_operator op = NULL;
        sps_vector vb = NULL, vx = NULL;
        sps_result res;
        memset(&res, 0, sizeof res);
        const double one[2] = {1, 0}, zero[2] = {0, 0};
        TU_OK(c, sps_solver_create_by_name(c, solver, &s));
        TU_OK(c, sps_operator_from_matrix(A, &op));
        TU_OK(c, sps_solver_set_operator(s, op));
        TU_OK(c, sps_solver_set_precond(s, P));
        TU_OK(c, sps_vector_create(c, h->n, h->t, &vb));
        TU_OK(c, sps_vector_create(c, h->n, h->t, &vx));
        TU_OK(c, sps_vector_fill(vb, one));
        TU_OK(c, sps_vector_fill(vx, zero));
        TU_CHECK(sps_solver_solve(s, vb, vx, &res) == SPS_OK, "%s + %s [%s] on %s: %s", solver, pc,
                 sps_scalar_name(h->t), k ? "cuda" : "cpu", sps_context_error(c));
        its[k] = res.iterations;
        sps_vector_destroy(vb);
        sps_vector_destroy(vx);
        sps_operator_destroy(op);
        sps_solver_destroy(s);
        sps_precond_destroy(P);
        sps_matrix_destroy(A);
    }
    TU_CHECK(abs(its[0] - its[1]) <= 2, "%s + %s [%s]: %d iterations on the CPU, %d on the GPU", solver, pc,
             sps_scalar_name(h->t), its[0], its[1]);
}

int main(void)
{
    const int rc = gpu_setup("test_gpu_precond");
    if (rc) return rc;
    tu_rng_seed(&rng, 5150);
    const int nn = g_small ? 60 : 3000;
    for (int ti = 0; ti < 4; ti++) {
        const sps_scalar t = tu_all_types[ti];
        sps_csr_host gen = node_matrix(t, nn, 0), sym = node_matrix(t, nn, 1);
        compare_apply(&gen, "jacobi", NULL, NULL, 8);
        compare_apply(&gen, "bjacobi", NULL, NULL, 256);
        compare_apply(&gen, "bjacobi", "pc-block-size", "4", 256);
        compare_apply(&gen, "ilu0", NULL, NULL, 256);
        compare_apply(&gen, "ilu0", "trisolve", "sweeps:3", 64);
        compare_apply(&sym, "ic0", NULL, NULL, 256);
        compare_apply(&sym, "ic0", "trisolve", "sweeps:3", 64);
        compare_apply(&sym, "cheby", NULL, NULL, 1024);
        if (t == SPS_F64 || t == SPS_C64) {
            compare_solve(&sym, "cg", "ic0");
            compare_solve(&gen, "bicgstab", "ilu0");
            compare_solve(&sym, "cg", "bjacobi");
        }
        sps_csr_host_free(&gen);
        sps_csr_host_free(&sym);
    }
    gpu_teardown();
    return tu_finish();
}
