/* Canonical host CSR: the interchange every reader and format goes through. */
#include "formats/format.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sps_csr_host_free(sps_csr_host *c)
{
    if (!c) return;
    free(c->rowptr);
    free(c->col);
    free(c->val);
    memset(c, 0, sizeof *c);
}

static void store_val(sps_scalar t, void *val, int64_t k, double re, double im)
{
    switch (t) {
    case SPS_F32: ((float *)val)[k] = (float)re; break;
    case SPS_F64: ((double *)val)[k] = re; break;
    case SPS_C32: ((float *)val)[2 * k] = (float)re; ((float *)val)[2 * k + 1] = (float)im; break;
    case SPS_C64: ((double *)val)[2 * k] = re; ((double *)val)[2 * k + 1] = im; break;
    }
}

/* Two stable counting sorts (by column, then by row: an LSD radix sort) give the
 * entries row by row with columns ascending and duplicates in file order:
 * O(nnz + n + m) whatever the row lengths. */
sps_status sps_csr_host_from_triplets(sps_context ctx, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                                      const sps_index *col, const double *val, int src_complex, sps_scalar t,
                                      sps_csr_host *out)
{
    return sps_csr_host_from_triplets_entries(ctx, n, m, nnz, row, col, val, src_complex, sps_entry_scalar(), t, out);
}

sps_status sps_csr_host_from_triplets_entries(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                              const sps_index *row, const sps_index *col, const double *val,
                                              int src_complex, sps_entry_desc e, sps_scalar t, sps_csr_host *out)
{
    memset(out, 0, sizeof *out);
    if (n < 0 || m < 0) return sps_error(ctx, SPS_ERR_ARG, "matrix size %d x %d is negative", (int)n, (int)m);
    if (nnz < 0 || nnz > INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "%lld nonzeros exceed the 32-bit index range", (long long)nnz);
    for (int64_t k = 0; k < nnz; k++) {
        if (row[k] < 0 || row[k] >= n)
            return sps_error(ctx, SPS_ERR_ARG, "entry %lld: row index %d out of range 0..%d", (long long)k,
                             (int)row[k], (int)n - 1);
        if (col[k] < 0 || col[k] >= m)
            return sps_error(ctx, SPS_ERR_ARG, "entry %lld (row %d): column index %d out of range 0..%d", (long long)k,
                             (int)row[k], (int)col[k], (int)m - 1);
    }
    sps_status st;
    sps_index *ptr = NULL, *perm = NULL, *bycol = NULL;
    int64_t *cnt = NULL;
    const sps_index big = n > m ? n : m;
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, (void **)&ptr, ((size_t)n + 1) * sizeof *ptr, "CSR row pointers"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&perm, (size_t)nnz * sizeof *perm, "CSR build permutation"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&bycol, (size_t)nnz * sizeof *bycol, "CSR build permutation"), fail);
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, (void **)&cnt, ((size_t)big + 1) * sizeof *cnt, "CSR build counters"), fail);
    /* pass 1: stable sort by column */
    for (int64_t k = 0; k < nnz; k++) cnt[col[k] + 1]++;
    for (sps_index j = 0; j < m; j++) cnt[j + 1] += cnt[j];
    for (int64_t k = 0; k < nnz; k++) bycol[cnt[col[k]]++] = (sps_index)k;
    /* pass 2: stable sort by row */
    for (int64_t k = 0; k < nnz; k++) ptr[row[k] + 1]++;
    for (sps_index i = 0; i < n; i++) ptr[i + 1] += ptr[i];
    for (sps_index i = 0; i < n; i++) cnt[i] = ptr[i];
    for (int64_t k = 0; k < nnz; k++) {
        const sps_index p = bycol[k];
        perm[cnt[row[p]]++] = p;
    }
    /* merge duplicates (summed member by member, in file order) */
    const size_t ss = sps_scalar_size(t);
    const int nv = sps_entry_values(e);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&out->col, (size_t)nnz * sizeof *out->col, "CSR column indices"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, &out->val, (size_t)nnz * nv * ss, "CSR values"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&out->rowptr, ((size_t)n + 1) * sizeof *out->rowptr, "CSR row pointers"), fail);
    int64_t w = 0;
    out->rowptr[0] = 0;
    for (sps_index i = 0; i < n; i++) {
        for (sps_index a = ptr[i]; a < ptr[i + 1];) {
            const sps_index c = col[perm[a]];
            sps_index end = a + 1;
            while (end < ptr[i + 1] && col[perm[end]] == c) end++;
            for (int q = 0; q < nv; q++) {
                /* start from the first value, not from 0.0: 0.0 + (-0.0) would lose the sign */
                const int64_t p0 = (int64_t)perm[a] * nv + q;
                double re = src_complex ? val[2 * p0] : val[p0];
                double im = src_complex ? val[2 * p0 + 1] : 0.0;
                for (sps_index d = a + 1; d < end; d++) {
                    const int64_t p = (int64_t)perm[d] * nv + q;
                    re += src_complex ? val[2 * p] : val[p];
                    im += src_complex ? val[2 * p + 1] : 0.0;
                }
                store_val(t, out->val, w * nv + q, re, im);
            }
            out->col[w] = c;
            w++;
            a = end;
        }
        out->rowptr[i + 1] = (sps_index)w;
    }
    out->n = n;
    out->m = m;
    out->nnz = w;
    out->t = t;
    if (e.kind != SPS_ENTRY_SCALAR) out->entry = e; /* scalar: the zeroed descriptor, as every reader leaves it */
    free(ptr);
    free(perm);
    free(bycol);
    free(cnt);
    return SPS_OK;
fail:
    free(ptr);
    free(perm);
    free(bycol);
    free(cnt);
    sps_csr_host_free(out);
    return st;
}
