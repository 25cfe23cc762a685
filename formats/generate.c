/* Built-in problems, generated straight into canonical host CSR.
 * poisson2d:N    5-point Laplacian on an N x N grid (Dirichlet), N^2 rows, SPD.
 * poisson3d:N    7-point Laplacian on an N x N x N grid, N^3 rows, SPD.
 * stencil27b3:N  27-point stencil on an N^3 grid with a dense 3x3 block per
 *                neighbour (3 unknowns a point, as in 3D elasticity): 3N^3 rows,
 *                SPD, stored as 3x3 block entries (bcsr).  The block problem the
 *                benchmarks and the block preconditioners are measured on. */
#include "formats/format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef sps_status (*generate_fn)(sps_context ctx, int dims, int64_t N, sps_scalar t, sps_csr_host *h);

typedef struct {
    const char *name;
    int dims;        /* grid dimensions */
    int block;       /* 1: scalar entries; b: grouped into b x b block entries */
    generate_fn gen; /* into scalar host CSR */
} generator;

static sps_status laplacian(sps_context ctx, int dims, int64_t N, sps_scalar t, sps_csr_host *h);
static sps_status stencil27_b3(sps_context ctx, int dims, int64_t N, sps_scalar t, sps_csr_host *h);

static const generator generators[] = {
    {"poisson2d", 2, 1, laplacian}, {"poisson3d", 3, 1, laplacian}, {"stencil27b3", 3, 3, stencil27_b3}};
#define NGEN ((int)(sizeof generators / sizeof generators[0]))

const char *sps_matrix_generate_list(void) { return "poisson2d:N, poisson3d:N, stencil27b3:N"; }

static void store(sps_scalar t, void *val, int64_t k, double v)
{
    sps_cplx_store(t, sps_cplx_make(v, 0.0), (char *)val + (size_t)k * sps_scalar_size(t));
}

/* The d-dimensional (2d+1)-point Laplacian: 2d on the diagonal, -1 to each grid
 * neighbour; columns come out sorted because neighbours are visited in index order. */
static sps_status laplacian(sps_context ctx, int dims, int64_t N, sps_scalar t, sps_csr_host *h)
{
    memset(h, 0, sizeof *h);
    /* N^dims and the entry count must fit 32-bit indices; check before multiplying
       (a huge N would overflow int64 itself) */
    int64_t n = 1;
    for (int d = 0; d < dims; d++) {
        if (n > INT32_MAX / N)
            return sps_error(ctx, SPS_ERR_ARG, "generated problem of %lld^%d rows exceeds the 32-bit index range",
                             (long long)N, dims);
        n *= N;
    }
    const int64_t nnz_max = n * (2 * dims + 1);
    if (nnz_max > INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "generated problem of %lld rows exceeds the 32-bit index range", (long long)n);
    h->n = h->m = (sps_index)n;
    h->t = t;
    SPS_CHECK(sps_hmalloc(ctx, (void **)&h->rowptr, ((size_t)n + 1) * sizeof(sps_index), "generated row pointers"));
    SPS_CHECK(sps_hmalloc(ctx, (void **)&h->col, (size_t)nnz_max * sizeof(sps_index), "generated columns"));
    SPS_CHECK(sps_hmalloc(ctx, &h->val, (size_t)nnz_max * sps_scalar_size(t), "generated values"));
    int64_t stride[3] = {1, N, N * N};
    int64_t k = 0;
    h->rowptr[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c[3] = {i % N, (i / N) % N, (dims == 3) ? i / (N * N) : 0};
        /* neighbours below i in decreasing stride order, then i, then above */
        for (int d = dims - 1; d >= 0; d--)
            if (c[d] > 0) { h->col[k] = (sps_index)(i - stride[d]); store(t, h->val, k++, -1.0); }
        h->col[k] = (sps_index)i;
        store(t, h->val, k++, 2.0 * dims);
        for (int d = 0; d < dims; d++)
            if (c[d] < N - 1) { h->col[k] = (sps_index)(i + stride[d]); store(t, h->val, k++, -1.0); }
        h->rowptr[i + 1] = (sps_index)k;
    }
    h->nnz = k;
    return SPS_OK;
}

/* Neighbour points of grid coordinate i along one axis of N, itself included. */
static int64_t axis_count(int64_t i, int64_t N) { return 1 + (i > 0) + (i < N - 1); }

/* S: symmetric, strictly diagonally dominant with a positive diagonal, hence SPD;
 * A = L (x) S with L the 27-point Dirichlet Laplacian (26 on the diagonal, -1 to
 * each neighbour in the grid: weakly dominant inside, strictly at the boundary,
 * irreducible, hence SPD), so A is SPD as a Kronecker product of SPD matrices and
 * conditioned like Poisson (O(N^2)).  Its diagonal blocks 26 S are dense, which is
 * what block Jacobi is for.  (With degree-counting diagonals, L + I, A*1 = 1 (x) S1
 * would make CG on the default right-hand side converge in 3 steps.) */
static const double stencil_S[3][3] = {{4.0, 1.0, 0.5}, {1.0, 3.0, 0.25}, {0.5, 0.25, 2.0}};

static sps_status stencil27_b3(sps_context ctx, int dims, int64_t N, sps_scalar t, sps_csr_host *h)
{
    (void)dims;
    memset(h, 0, sizeof *h);
    if (N > 1290) /* 3 N^3 rows within 32-bit indices, checked before cubing */
        return sps_error(ctx, SPS_ERR_ARG, "generated problem stencil27b3:%lld exceeds the 32-bit index range",
                         (long long)N);
    const int64_t pts = N * N * N, n = 3 * pts;
    int64_t s1 = 0; /* sum over one axis of the neighbour counts: nnz = 9 s1^3 */
    for (int64_t i = 0; i < N; i++) s1 += axis_count(i, N);
    const int64_t nnz = 9 * s1 * s1 * s1;
    if (n > INT32_MAX || nnz > INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "generated problem stencil27b3:%lld (%lld entries) exceeds the 32-bit index "
                         "range", (long long)N, (long long)nnz);
    h->n = h->m = (sps_index)n;
    h->t = t;
    SPS_CHECK(sps_hmalloc(ctx, (void **)&h->rowptr, ((size_t)n + 1) * sizeof(sps_index), "generated row pointers"));
    SPS_CHECK(sps_hmalloc(ctx, (void **)&h->col, (size_t)nnz * sizeof(sps_index), "generated columns"));
    SPS_CHECK(sps_hmalloc(ctx, &h->val, (size_t)nnz * sps_scalar_size(t), "generated values"));
    int64_t k = 0;
    h->rowptr[0] = 0;
    for (int64_t p = 0; p < pts; p++) {
        const int64_t x = p % N, y = (p / N) % N, z = p / (N * N);
        for (int a = 0; a < 3; a++) {
            /* neighbours in increasing grid index (z, then y, then x): sorted columns */
            for (int64_t dz = -1; dz <= 1; dz++)
                for (int64_t dy = -1; dy <= 1; dy++)
                    for (int64_t dx = -1; dx <= 1; dx++) {
                        if (x + dx < 0 || x + dx >= N || y + dy < 0 || y + dy >= N || z + dz < 0 || z + dz >= N)
                            continue;
                        const int64_t q = p + dx + N * dy + N * N * dz;
                        const double coef = q == p ? 26.0 : -1.0;
                        for (int b = 0; b < 3; b++) {
                            h->col[k] = (sps_index)(3 * q + b);
                            store(t, h->val, k++, coef * stencil_S[a][b]);
                        }
                    }
            h->rowptr[3 * p + a + 1] = (sps_index)k;
        }
    }
    h->nnz = k;
    return SPS_OK;
}

sps_status sps_matrix_generate(sps_context ctx, const char *spec, sps_scalar t, sps_matrix *A)
{
    if (!ctx) return SPS_ERR_ARG;
    if (!A) return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_generate: NULL output matrix");
    *A = NULL;
    if (!spec) return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_generate: NULL spec");
    if ((unsigned)t >= SPS_NUM_SCALARS) return sps_error(ctx, SPS_ERR_ARG, "sps_matrix_generate: bad scalar type");
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int g = 0; g < NGEN; g++) {
        if (strlen(generators[g].name) != len || strncmp(spec, generators[g].name, len) != 0) continue;
        char *end = NULL;
        errno = 0;
        long long N = colon ? strtoll(colon + 1, &end, 10) : 0;
        /* digits only: strtoll also took " 4" and "+4", which no generator name spells */
        if (!colon || colon[1] < '0' || colon[1] > '9' || end == colon + 1 || *end != 0 || N < 1)
            return sps_error(ctx, SPS_ERR_ARG, "generator '%s': expected %s:N with N >= 1 (available: %s)", spec,
                             generators[g].name, sps_matrix_generate_list());
        if (errno == ERANGE)
            return sps_error(ctx, SPS_ERR_ARG, "generator '%s': N is out of range", spec);
        const generator *G = &generators[g];
        sps_csr_host h, blk;
        sps_status st = G->gen(ctx, G->dims, N, t, &h);
        if (st == SPS_OK && G->block > 1) {
            st = sps_csr_host_group_blocks(ctx, &h, G->block, spec, &blk);
            sps_csr_host_free(&h);
            if (st != SPS_OK) return st;
            h = blk;
        }
        if (st == SPS_OK)
            st = sps_matrix_from_csr_host(ctx, &h, G->block > 1 ? SPS_FMT_BCSR : SPS_FMT_CSR, NULL, SPS_SYM_SYMMETRIC,
                                          A);
        sps_csr_host_free(&h);
        return st;
    }
    return sps_error(ctx, SPS_ERR_ARG, "unknown generated problem '%s' (available: %s)", spec, sps_matrix_generate_list());
}
