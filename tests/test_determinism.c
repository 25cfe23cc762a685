/* Solver-level determinism (issue 24 item 11): the same solve twice, and on the CPU
 * backend with 1, 2 and 3 OpenMP threads, gives bit-identical x and residual
 * history, for every scalar format of the registry and CG / BiCGSTAB / GMRES(10),
 * f64 and c64, with none and Jacobi.  Built with SPS_DET_GPU (test_gpu_determinism,
 * label gpu) it runs on the CUDA backend: every solve twice, bit for bit.  Matrices: 2D Poisson (SPD) for CG, a
 * nonsymmetric convection-diffusion-like matrix for BiCGSTAB and GMRES; sizes large
 * enough (> the kernels' threading thresholds) that the threaded paths run.
 * Ends with "N passed, M failed". */
#include "testutil.h"
#include "kernels/cpu/common.h" /* SPS_OMP_MIN: the grids are just above it */
#ifdef SPS_DET_GPU
#include "test_gpu_util.h"
#endif

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;

typedef struct {
    double *x, *hist;
    int len, its;
} run_out;

/* A nonsymmetric n x n: the 5-point Laplacian of a g x g grid plus an upwind term. */
static sps_matrix convdiff(int g, sps_scalar t)
{
    const int n = g * g;
    sps_index *r = tu_xcalloc((size_t)n * 5, sizeof *r), *c = tu_xcalloc((size_t)n * 5, sizeof *c);
    double *v = tu_xcalloc((size_t)n * 10, sizeof *v);
    int64_t k = 0;
    for (int i = 0; i < g; i++)
        for (int j = 0; j < g; j++) {
            const int p = i * g + j;
            const int nb[4][2] = {{i - 1, j}, {i + 1, j}, {i, j - 1}, {i, j + 1}};
            const double w[4] = {-1.3, -0.7, -1.1, -0.9};
            r[k] = p, c[k] = p, v[2 * k] = 4.2, v[2 * k + 1] = 0.1, k++;
            for (int q = 0; q < 4; q++)
                if (nb[q][0] >= 0 && nb[q][0] < g && nb[q][1] >= 0 && nb[q][1] < g)
                    r[k] = p, c[k] = nb[q][0] * g + nb[q][1], v[2 * k] = w[q], v[2 * k + 1] = 0.05 * q, k++;
        }
    sps_matrix A = NULL;
    /* values of type t: c64 interleaved (re, im), f64 the real parts */
    double *tv = tu_xcalloc((size_t)k * 2, sizeof *tv);
    for (int64_t e = 0; e < k; e++) {
        if (sps_scalar_is_complex(t)) tv[2 * e] = v[2 * e], tv[2 * e + 1] = v[2 * e + 1];
        else tv[e] = v[2 * e];
    }
    TU_OK(ctx, sps_matrix_from_coo(ctx, n, n, k, r, c, tv, t, &A));
    free(tv);
    free(r);
    free(c);
    free(v);
    return A;
}

static run_out solve(sps_matrix A, const char *solver, const char *pc, int threads)
{
    omp_set_num_threads(threads);
    run_out o = {0};
    sps_matrix_info_t info;
    TU_OK(ctx, sps_matrix_info(A, &info));
    const sps_index n = info.rows;
    const sps_scalar t = info.scalar;
    sps_solver s = NULL;
    sps_operator op = NULL;
    sps_precond P = NULL;
    sps_vector vb = NULL, vx = NULL;
    const double one[2] = {1, 0.5}, zero[2] = {0, 0};
    sps_result res;
    memset(&res, 0, sizeof res);
    TU_OK(ctx, sps_solver_create_by_name(ctx, solver, &s));
    TU_OK(ctx, sps_solver_set_option(s, "maxit", "25")); /* a fixed amount of work: no need to converge */
    if (!strcmp(solver, "gmres")) TU_OK(ctx, sps_solver_set_option(s, "restart", "10"));
    TU_OK(ctx, sps_operator_from_matrix(A, &op));
    TU_OK(ctx, sps_solver_set_operator(s, op));
    if (strcmp(pc, "none")) {
        TU_OK(ctx, sps_precond_create_by_name(A, pc, &P));
        TU_OK(ctx, sps_solver_set_precond(s, P));
    }
    TU_OK(ctx, sps_vector_create(ctx, n, t, &vb));
    TU_OK(ctx, sps_vector_create(ctx, n, t, &vx));
    TU_OK(ctx, sps_vector_fill(vb, one));
    TU_OK(ctx, sps_vector_fill(vx, zero));
    (void)sps_solver_solve(s, vb, vx, &res); /* maxit is an outcome here, not a failure */
    sps_context_clear_error(ctx);
    o.its = res.iterations;
    o.len = res.history_len;
    o.hist = tu_xcalloc((size_t)o.len + 1, sizeof *o.hist);
    if (o.len) memcpy(o.hist, res.history, (size_t)o.len * sizeof *o.hist);
    o.x = tu_xcalloc((size_t)n, sps_scalar_size(t));
    TU_OK(ctx, sps_vector_get(vx, o.x));
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    sps_solver_destroy(s);
    return o;
}

static void free_out(run_out *o)
{
    free(o->x);
    free(o->hist);
}

int main(void)
{
#ifdef SPS_DET_GPU
    const int rc = gpu_setup("test_gpu_determinism");
    if (rc) return rc;
    ctx = g_gpu;
    const int runs = 2; /* threads do not apply: the second run must repeat the first */
#else
    if (tu_cpu_context(&ctx)) return 1;
    const int runs = 3; /* 1, 2 and 3 threads */
#endif
    static const char *solvers[] = {"cg", "bicgstab", "gmres"};
    static const char *pcs[] = {"none", "jacobi"};
    static const sps_scalar types[] = {SPS_F64, SPS_C64};
    char *list = strdup(sps_format_list());
    for (int ti = 0; ti < 2; ti++) {
        const sps_scalar t = types[ti];
        /* g^2 rows just above the threshold, so every kernel takes its threaded path */
        const int g = (int)ceil(sqrt((double)SPS_OMP_MIN)) + 1;
        char spec[32];
        snprintf(spec, sizeof spec, "poisson2d:%d", g);
        sps_matrix spd = NULL, gen = convdiff(g, t);
        TU_OK(ctx, sps_matrix_generate(ctx, spec, t, &spd));
        char *save = NULL;
        char *names = strdup(list);
        for (char *f = strtok_r(names, ", ", &save); f; f = strtok_r(NULL, ", ", &save)) {
            sps_format fmt;
            if (sps_format_by_name(f, &fmt) != SPS_OK || sps_format_compound(fmt)) continue;
#ifdef SPS_DET_GPU
            /* hola's and hisparse's products sum with atomics: documented as not
             * bit-reproducible on CUDA (README "Reproducibility"); their solves here differ
             * run to run */
            if (!sps_format_reproducible(fmt)) continue;
#endif
            for (int si = 0; si < 3; si++) {
                sps_matrix src = si == 0 ? spd : gen, A = NULL;
                if (sps_matrix_convert(src, fmt, NULL, &A) != SPS_OK) { /* a padded format may refuse (max-fill) */
                    sps_context_clear_error(ctx);
                    continue;
                }
                sps_matrix_info_t info;
                TU_OK(ctx, sps_matrix_info(A, &info));
                const sps_index n = info.rows;
                for (int pi = 0; pi < 2; pi++) {
                    run_out ref = solve(A, solvers[si], pcs[pi], 1);
                    for (int th = 1; th <= runs; th++) {
                        run_out o = solve(A, solvers[si], pcs[pi], th);
                        TU_CHECK(o.its == ref.its && o.len == ref.len &&
                                     !memcmp(o.hist, ref.hist, (size_t)ref.len * sizeof *ref.hist) &&
                                     !memcmp(o.x, ref.x, (size_t)n * sps_scalar_size(t)),
                                 "%s %s + %s [%s], run %d (threads): not the bits of the first (%d / %d iterations)", f,
                                 solvers[si], pcs[pi], sps_scalar_name(t), th, o.its, ref.its);
                        free_out(&o);
                    }
                    free_out(&ref);
                }
                sps_matrix_destroy(A);
            }
        }
        free(names);
        TU_DESTROY_MATRICES(spd, gen);
    }
    free(list);
#ifdef SPS_DET_GPU
    gpu_teardown();
#else
    sps_context_destroy(ctx);
#endif
    return tu_finish();
}
