/* CPU kernels of assembly from triplets (kernels/index_kernels.h: coo_sort,
 * coo_compress, coo_sum), the oracle of kernels/cuda/assemble.cu and what
 * sps_matrix_from_coo_entries_device runs on the CPU backend.
 *
 * coo_sort: two stable counting sorts, by column, then by row (the host triplet
 *   builder's, formats/csr_host.c), so equal (row, column) pairs keep their
 *   order: the GPU's sort by (column, position) within each row gives the same
 *   permutation.
 * coo_compress: one pass over the sorted triplets, row by row.
 * coo_sum: each distinct pair's members summed in double in triplet order from
 *   the first term (not from 0.0: 0.0 + (-0.0) would lose the sign), then rounded;
 *   the same additions in the same order as the host builder, so the matrices are
 *   equal bit for bit.  Parallel over pairs (each pair's sum is one thread's). */
#include "kernels/cpu/common.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

sps_status sps_cpu_coo_sort(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *row,
                            const sps_index *col, sps_index *perm, sps_index *scol, sps_index *tstart, int64_t *bad)
{
    bad[0] = -1;
    for (int64_t k = 0; k < nnz; k++)
        if (row[k] < 0 || row[k] >= n || col[k] < 0 || col[k] >= m) {
            bad[0] = k;
            return SPS_OK;
        }
    const sps_index big = n > m ? n : m;
    int64_t *cnt = calloc((size_t)big + 1, sizeof *cnt);
    sps_index *bycol = malloc(((size_t)nnz + 1) * sizeof *bycol);
    if (!cnt || !bycol) {
        free(cnt);
        free(bycol);
        return sps_kerror(ex, SPS_ERR_ALLOC, "coo_sort: out of host memory for %lld triplets", (long long)nnz);
    }
    for (int64_t k = 0; k < nnz; k++) cnt[col[k] + 1]++;
    for (sps_index j = 0; j < m; j++) cnt[j + 1] += cnt[j];
    for (int64_t k = 0; k < nnz; k++) bycol[cnt[col[k]]++] = (sps_index)k;
    memset(cnt, 0, ((size_t)big + 1) * sizeof *cnt);
    for (int64_t k = 0; k < nnz; k++) cnt[row[k] + 1]++;
    for (sps_index i = 0; i < n; i++) cnt[i + 1] += cnt[i];
    for (sps_index i = 0; i <= n; i++) tstart[i] = (sps_index)cnt[i];
    for (int64_t k = 0; k < nnz; k++) {
        const sps_index p = bycol[k];
        perm[cnt[row[p]]++] = p;
    }
    for (int64_t p = 0; p < nnz; p++) scol[p] = col[perm[p]];
    free(cnt);
    free(bycol);
    return SPS_OK;
}

sps_status sps_cpu_coo_compress(sps_exec *ex, sps_index n, int64_t nnz, const sps_index *scol, const sps_index *tstart,
                                sps_index *seg, sps_index *ucol, sps_index *rowptr, sps_index *nu)
{
    (void)ex;
    sps_index u = 0;
    for (sps_index i = 0; i < n; i++) {
        rowptr[i] = u;
        for (sps_index p = tstart[i]; p < tstart[i + 1]; p++) {
            if (p > tstart[i] && scol[p] == scol[p - 1]) continue;
            seg[u] = p;
            ucol[u] = scol[p];
            u++;
        }
    }
    rowptr[n] = u;
    seg[u] = (sps_index)nnz;
    *nu = u;
    return SPS_OK;
}

static double coo_load(int rsize, const void *val, int64_t i)
{
    return rsize == 4 ? (double)((const float *)val)[i] : ((const double *)val)[i];
}

sps_status sps_cpu_coo_sum(sps_exec *ex, int rsize, int w, sps_index nu, const sps_index *perm, const sps_index *seg,
                           const void *val, void *out, int64_t *bad)
{
    (void)ex;
    int64_t bad_in = INT64_MAX, bad_sum = INT64_MAX;
#pragma omp parallel for schedule(static) reduction(min : bad_in, bad_sum) if (nu > SPS_OMP_MIN)
    for (sps_index u = 0; u < nu; u++)
        for (int q = 0; q < w; q++) {
            double s = 0;
            for (sps_index p = seg[u]; p < seg[u + 1]; p++) {
                const double v = coo_load(rsize, val, (int64_t)perm[p] * w + q);
                if (!isfinite(v) && perm[p] < bad_in) bad_in = perm[p];
                s = p == seg[u] ? v : s + v;
            }
            const int64_t o = (int64_t)u * w + q;
            const double r = rsize == 4 ? (double)(float)s : s;
            if (rsize == 4) ((float *)out)[o] = (float)s;
            else ((double *)out)[o] = s;
            if (!isfinite(r) && u < bad_sum) bad_sum = u; /* finite members: an overflow */
        }
    bad[0] = bad_in == INT64_MAX ? -1 : bad_in;
    bad[1] = bad_sum == INT64_MAX ? -1 : bad_sum;
    return SPS_OK;
}

/* csr_check: row by row, then the values (the oracle of kernels/cuda/assemble.cu's). */
sps_status sps_cpu_csr_check(sps_exec *ex, sps_index n, sps_index m, int64_t nnz, const sps_index *rowptr,
                             const sps_index *col, int rsize, int w, const void *val, int64_t *bad)
{
    (void)ex;
    int64_t bad_row = INT64_MAX, bad_val = INT64_MAX;
#pragma omp parallel for schedule(static) reduction(min : bad_row) if (n > SPS_OMP_MIN)
    for (sps_index i = 0; i < n; i++) {
        const sps_index p0 = rowptr[i], p1 = rowptr[i + 1];
        int ok = p0 >= 0 && p0 <= p1 && p1 <= nnz;
        for (sps_index p = p0; ok && p < p1; p++) ok = col[p] >= 0 && col[p] < m && (p == p0 || col[p] > col[p - 1]);
        if (!ok && i < bad_row) bad_row = i;
    }
    if (bad_row == INT64_MAX && n >= 0 && (rowptr[0] != 0 || rowptr[n] != nnz)) bad_row = n;
    if (bad_row == INT64_MAX) {
        const int64_t total = nnz * w;
#pragma omp parallel for schedule(static) reduction(min : bad_val) if (total > SPS_OMP_MIN)
        for (int64_t k = 0; k < total; k++)
            if (!isfinite(coo_load(rsize, val, k)) && k < bad_val) bad_val = k;
    }
    bad[0] = bad_row == INT64_MAX ? -1 : bad_row;
    bad[1] = bad_val == INT64_MAX ? -1 : bad_val;
    return SPS_OK;
}
