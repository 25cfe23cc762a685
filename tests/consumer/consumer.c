/* Consumer of an installed libspsolve: solve the 2D Poisson problem
 * poisson2d:10 (100 unknowns) with CG through the public API, then check the
 * residual independently from the exported CSR (no libm: only the library
 * is linked).  EXPECT_VERSION is the version
 * the package metadata (CMake config or pkg-config) claims; the library must
 * agree.  Exit 0 on success. */
#include <spsolve/spsolve.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                      \
    do {                                               \
        fprintf(stderr, "consumer: " __VA_ARGS__);     \
        fputc('\n', stderr);                           \
        return 1;                                      \
    } while (0)
#define CHECK(expr)                                                                             \
    do {                                                                                        \
        sps_status st_ = (expr);                                                                \
        if (st_ != SPS_OK) FAIL("%s -> %s: %s", #expr, sps_status_name(st_), sps_context_error(ctx)); \
    } while (0)

int main(void)
{
#ifdef EXPECT_VERSION
    if (strcmp(sps_version(), EXPECT_VERSION) != 0)
        FAIL("library version %s, package metadata says %s", sps_version(), EXPECT_VERSION);
#endif
    sps_context ctx = NULL;
    sps_status cst = sps_context_create(&ctx, SPS_BACKEND_CPU, 0);
    if (cst != SPS_OK) FAIL("sps_context_create: %s", sps_status_name(cst));

    sps_matrix A;
    CHECK(sps_matrix_generate(ctx, "poisson2d:10", SPS_F64, &A));
    sps_matrix_info_t info;
    CHECK(sps_matrix_info(A, &info));
    int n = info.rows;
    if (n != 100 || info.cols != 100) FAIL("poisson2d:10 is %d x %d, expected 100 x 100", (int)info.rows, (int)info.cols);

    double *b = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    sps_index *rowptr = malloc(sizeof(sps_index) * (size_t)(n + 1));
    sps_index *col = malloc(sizeof(sps_index) * (size_t)info.nnz);
    double *val = malloc(sizeof(double) * (size_t)info.nnz);
    if (!b || !x || !rowptr || !col || !val) FAIL("out of memory");
    for (int i = 0; i < n; i++) b[i] = 1.0 + 0.01 * i;

    sps_operator op;
    sps_solver s;
    sps_vector vb, vx;
    CHECK(sps_operator_from_matrix(A, &op));
    CHECK(sps_solver_create(ctx, SPS_SOLVER_CG, &s));
    CHECK(sps_solver_set_operator(s, op));
    CHECK(sps_solver_set_tolerances(s, 1e-10, 0.0, 1000));
    CHECK(sps_vector_from_host(ctx, n, SPS_F64, b, &vb));
    CHECK(sps_vector_create(ctx, n, SPS_F64, &vx));
    sps_result res;
    CHECK(sps_solver_solve(s, vb, vx, &res));
    CHECK(sps_vector_get(vx, x));
    CHECK(sps_matrix_export_csr(A, rowptr, col, val));

    /* ||b - A x|| / ||b|| from the exported CSR, independent of the library's SpMV */
    double rr = 0.0, bb = 0.0;
    for (int i = 0; i < n; i++) {
        double ax = 0.0;
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++) ax += val[k] * x[col[k]];
        rr += (b[i] - ax) * (b[i] - ax);
        bb += b[i] * b[i];
    }
    /* squared, so that the program needs nothing beyond the library (no -lm) */
    double rel2 = rr / bb;
    printf("consumer: libspsolve %s, poisson2d:10 CG %d iterations, (||b-Ax||/||b||)^2 = %.3e (library: %.3e^2)\n",
           sps_version(), res.iterations, rel2, res.relative_residual);
    if (!(rel2 <= 1e-20 * 1.02)) FAIL("residual^2 %.3e above the tolerance (1e-10)^2", rel2);
    /* CG on an SPD system of 100 unknowns converges in at most ~100 steps */
    if (res.iterations <= 0 || res.iterations > 100) FAIL("implausible iteration count %d", res.iterations);

    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    free(b);
    free(x);
    free(rowptr);
    free(col);
    free(val);
    printf("consumer: OK\n");
    return 0;
}
