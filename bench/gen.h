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
 *                     fixed SPD 3x3 matrix, so A is symmetric positive definite. */
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
    double *val;      /* nnz */
} gen_csr;

/* Each returns NULL on success, or a static message (allocation failure, size
 * beyond 32-bit indices, bad argument); *A is then empty. */
const char *gen_banded(gen_csr *A, int32_t n, int per_row, double sigma, uint64_t seed);
const char *gen_powerlaw(gen_csr *A, int32_t n, double mean, int32_t cap, double alpha, uint64_t seed);
const char *gen_stencil27_b3(gen_csr *A, int32_t g);
void gen_csr_free(gen_csr *A);

/* Counter-based random numbers shared with the bench (fresh x vectors). */
uint64_t gen_hash64(uint64_t x);                      /* splitmix64 finaliser */
double gen_uniform(uint64_t seed, uint64_t counter);  /* in [0, 1) */

#ifdef __cplusplus
}
#endif
#endif
