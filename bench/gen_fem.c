/* spbench's compound source fembeam:g=N: the stiffness matrix K of spsolve-fem's
 * cantilever (the beam 10 x 1 x 1 in 10N x N x N cells of 6 tetrahedra, E = 1000,
 * nu = 0.3, clamped at x = 0: `spsolve-fem --beam 10,1,1 --cells 10N,N,N`), assembled
 * on the host by the app's own code (apps/fem/fem.c) into 3x3 blocks.  So the
 * benchmark's K is the app's, at sizes (5M unknowns: N = 56) whose Matrix Market
 * expansion would take minutes to write and read. */
#include "gen.h"

#include "fem.h"

#include <stdlib.h>
#include <string.h>

const char *gen_fem_beam(gen_csr *A, int32_t g)
{
    memset(A, 0, sizeof *A);
    if (g < 1 || g > 200) return "fembeam: g must be 1..200";
    fem_mesh m;
    char err[256];
    if (fem_beam(10, 1, 1, 10 * g, g, g, &m, err, sizeof err)) return "fembeam: the beam could not be generated";
    const char *msg = NULL;
    const size_t nq = 16 * (size_t)m.nt;
    unsigned char *clamp = malloc((size_t)m.nv + 1);
    int *row = malloc(sizeof(int) * (nq + 1)), *col = malloc(sizeof(int) * (nq + 1));
    double *val = malloc(sizeof(double) * 9 * (nq + 1)), lambda, mu;
    sps_context ctx = NULL;
    sps_matrix K = NULL;
    sps_matrix_info_t in;
    if (!clamp || !row || !col || !val || sps_context_create(&ctx, SPS_BACKEND_CPU, 0) != SPS_OK) {
        msg = "fembeam: out of host memory";
        goto done;
    }
    fem_clamp_x0(&m, clamp);
    fem_lame(1000, 0.3, &lambda, &mu);
    fem_assemble(&m, clamp, lambda, mu, row, col, val);
    if (sps_matrix_from_coo_entries(ctx, m.nv, m.nv, (int64_t)nq, row, col, val, sps_entry_block(3), SPS_F64, &K) !=
            SPS_OK ||
        sps_matrix_info(K, &in) != SPS_OK) {
        msg = "fembeam: building K failed";
        goto done;
    }
    A->n = A->m = m.nv;
    A->nnz = in.nnz;
    A->nv = 9;
    A->rowptr = malloc(sizeof(int32_t) * ((size_t)m.nv + 1));
    A->col = malloc(sizeof(int32_t) * ((size_t)in.nnz + 1));
    A->val = malloc(sizeof(double) * 9 * ((size_t)in.nnz + 1));
    if (!A->rowptr || !A->col || !A->val || sps_matrix_export_csr(K, A->rowptr, A->col, A->val) != SPS_OK) {
        gen_csr_free(A);
        msg = "fembeam: out of host memory for K";
    }
done:
    sps_matrix_destroy(K);
    sps_context_destroy(ctx);
    free(clamp), free(row), free(col), free(val);
    fem_mesh_free(&m);
    return msg;
}
