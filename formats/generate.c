/* Built-in problems, generated straight into canonical host CSR.
 * poisson2d:N  5-point Laplacian on an N x N grid (Dirichlet), N^2 rows, SPD.
 * poisson3d:N  7-point Laplacian on an N x N x N grid, N^3 rows, SPD. */
#include "formats/format.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    int dims;
} generator;

static const generator generators[] = {{"poisson2d", 2}, {"poisson3d", 3}};
#define NGEN ((int)(sizeof generators / sizeof generators[0]))

const char *sps_matrix_generate_list(void) { return "poisson2d:N, poisson3d:N"; }

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

sps_status sps_matrix_generate(sps_context ctx, const char *spec, sps_scalar t, sps_matrix *A)
{
    if (!ctx || !A) return SPS_ERR_ARG;
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
        if (!colon || end == colon + 1 || *end != 0 || N < 1)
            return sps_error(ctx, SPS_ERR_ARG, "generator '%s': expected %s:N with N >= 1 (available: %s)", spec,
                             generators[g].name, sps_matrix_generate_list());
        if (errno == ERANGE)
            return sps_error(ctx, SPS_ERR_ARG, "generator '%s': N is out of range", spec);
        sps_csr_host h;
        sps_status st = laplacian(ctx, generators[g].dims, N, t, &h);
        if (st == SPS_OK) st = sps_matrix_from_csr_host(ctx, &h, SPS_FMT_CSR, NULL, SPS_SYM_SYMMETRIC, A);
        sps_csr_host_free(&h);
        return st;
    }
    return sps_error(ctx, SPS_ERR_ARG, "unknown generated problem '%s' (available: %s)", spec, sps_matrix_generate_list());
}
