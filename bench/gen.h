/* spbench matrix generators: host CSR in double precision, 0-based, columns
 * sorted and unique within each row.  Every generator is deterministic: the
 * same arguments give the same matrix, whatever the number of OpenMP threads
 * (each row draws from its own counter-based random stream).
 *
 *   gen_banded        n x n, `per_row` draws per row at column i + round(N(0, sigma)),
 *                     clipped to [0, n-1], duplicates removed (so rows near the
 *                     edges, and rows where draws collide, hold fewer entries);
 *                     values uniform in [-1, 1].
 *   gen_powerlaw      n x n, row lengths Pareto(alpha) scaled so the mean length
 *                     is `mean`, capped at `cap`, at least 1; columns uniform in
 *                     [0, n-1], duplicates removed; values uniform in [-1, 1].
 *   gen_stencil27_b3  27-point stencil on a g x g x g grid with a dense 3x3 block
 *                     per coupling: 3 g^3 rows, unknowns interleaved per grid point
 *                     (row 3p + a).  A = (L + I) (x) S with L the 27-point graph
 *                     Laplacian (degree on the diagonal, -1 per neighbour) and S a
 *                     fixed SPD 3x3 matrix, so A is symmetric positive definite.
 *
 * Compound generators (gen_compound): a symmetric graph (diagonal included) whose
 * entries are dense b x b blocks (row-major) or quaternions (w, x, y, z), nv =
 * b*b or 4 doubles an entry in val (nnz * nv):
 *   GEN_STENCIL27_RANDOM  the 27-point stencil on g^3 points, every block uniform
 *                         random in [-1, 1] (not symmetric; b = 2..8).
 *   GEN_MESH27_SPD        an unstructured-mesh-like graph on g^3 points: a pair at
 *                         Chebyshev distance 1 is an edge with probability
 *                         0.3 + 0.65 w, at distance 2 with probability 0.13 w, w the
 *                         mean over the pair of a smooth density field in [0, 1], so
 *                         rows hold about 9 to 38 blocks; blocks B_pq random in [-1, 1]
 *                         with B_qp = B_pq^T, the diagonal block s_p I with s_p = 1 +
 *                         the largest off-diagonal absolute row sum of the block-row:
 *                         symmetric, strictly diagonally dominant, hence SPD.
 *   GEN_TRI2D_QLAPLACE    quaternion connection Laplacian of the triangulated g x g grid
 *                         (neighbours (+-1, 0), (0, +-1), (1, 1), (-1, -1)): off the
 *                         diagonal -u_pq with u_pq a random unit quaternion and u_qp =
 *                         conj(u_pq), the diagonal the real quaternion degree + 1, so A
 *                         is quaternion-Hermitian and positive definite (x* A x =
 *                         sum over edges |x_p - u_pq x_q|^2 + |x|^2).
 * Entry values are drawn per (row, column, member), so they do not depend on the
 * number of threads. */
#ifndef SPBENCH_GEN_H
#define SPBENCH_GEN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t n, m;     /* rows, columns */
    int64_t nnz;
    int32_t *rowptr;  /* n + 1 */
    int32_t *col;     /* nnz */
    double *val;      /* nnz * nv */
    int nv;           /* doubles an entry: 0 or 1 scalar (the scalar generators leave it 0), b*b, 4 */
} gen_csr;

typedef enum { GEN_STENCIL27_RANDOM, GEN_MESH27_SPD, GEN_TRI2D_QLAPLACE } gen_compound_kind;

/* Each returns NULL on success, or a static message (allocation failure, size
 * beyond 32-bit indices, bad argument); *A is then empty. */
const char *gen_banded(gen_csr *A, int32_t n, int per_row, double sigma, uint64_t seed);
const char *gen_powerlaw(gen_csr *A, int32_t n, double mean, int32_t cap, double alpha, uint64_t seed);
const char *gen_stencil27_b3(gen_csr *A, int32_t g);
/* A diagonal plus k dense rows and k dense columns, spread over the matrix (HiSparse's arrow case). */
const char *gen_arrow(gen_csr *A, int32_t n, int32_t k, uint64_t seed);
/* b: the block size (2..8) of the block kinds; ignored by GEN_TRI2D_QLAPLACE (nv = 4). */
const char *gen_compound(gen_csr *A, gen_compound_kind kind, int32_t g, int b, uint64_t seed);
/* The stiffness matrix of spsolve-fem's cantilever in 10g x g x g cells, 3x3 blocks (gen_fem.c). */
const char *gen_fem_beam(gen_csr *A, int32_t g);
void gen_csr_free(gen_csr *A);

/* Counter-based random numbers shared with the bench (fresh x vectors). */
uint64_t gen_hash64(uint64_t x);                      /* splitmix64 finaliser */
double gen_uniform(uint64_t seed, uint64_t counter);  /* in [0, 1) */

#ifdef __cplusplus
}
#endif
#endif
