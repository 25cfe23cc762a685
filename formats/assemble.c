/* sps_matrix_from_coo_entries_device: a matrix from triplets in the context's memory,
 * and sps_matrix_from_csr_entries_device from CSR arrays there (checked by the backend's
 * csr_check, then copied);
 * built by backend kernels (kernels/index_kernels.h coo_sort, coo_compress, coo_sum):
 * on the GPU the triplets never leave the device.  The same sums in the same order as
 * the host builder (sps_matrix_from_coo_entries, formats/csr_host.c), so both give the
 * same matrix bit for bit; the same errors, named the same way.
 *
 * Steps (backend memory; three small downloads: the index check, the number of
 * distinct pairs, the value check):
 *   1. coo_sort: range check, stable sort of (row, col) -> perm, sorted columns,
 *      the triplets' row pointers;
 *   2. coo_compress: the distinct pairs -> segment starts, columns, row pointers;
 *   3. coo_sum: each pair's members summed in triplet order -> values, and the
 *      first sum that overflowed the values' type;
 *   4. the CSR (scalar) or BCSR (compound) matrix from those arrays
 *      (sps_matrix_from_backend_csr, which copies them). */
#include "formats/format.h"

#include <stdint.h>
#include <string.h>

/* Triplet k's row and column, downloaded (for messages). */
static void triplet_at(sps_context ctx, const sps_index *row, const sps_index *col, int64_t k, sps_index *i,
                       sps_index *j)
{
    *i = *j = -1;
    if (sps_dcopy(ctx, i, row + k, sizeof *i, SPS_COPY_D2H) != SPS_OK ||
        sps_dcopy(ctx, j, col + k, sizeof *j, SPS_COPY_D2H) != SPS_OK)
        *i = *j = -1;
}

/* The checks both builders make before anything runs: sizes and entry type, nnz within
 * 32-bit offsets, the arrays given (null_array: one is missing). */
static sps_status device_build_args(sps_context ctx, const char *fn, sps_index n, sps_index m, int64_t nnz,
                                    sps_entry_desc e, sps_scalar t, int null_array)
{
    SPS_CHECK(sps_matrix_entry_args(ctx, fn, n, m, e, t));
    if (nnz < 0 || nnz >= INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "%s: %lld nonzeros (must be 0..%d: row offsets are 32-bit)", fn,
                         (long long)nnz, (int)INT32_MAX - 1);
    return null_array ? sps_error(ctx, SPS_ERR_ARG, "%s: NULL array", fn) : SPS_OK;
}

sps_status sps_matrix_from_coo_entries_device(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                              const sps_index *row, const sps_index *col, const void *val,
                                              sps_entry_desc e, sps_scalar t, sps_matrix *A)
{
    static const char fn[] = "sps_matrix_from_coo_entries_device";
    if (!ctx || !A) return SPS_ERR_ARG;
    *A = NULL;
    SPS_CHECK(device_build_args(ctx, fn, n, m, nnz, e, t, nnz > 0 && (!row || !col || !val)));
    sps_exec *ex = sps_ex(ctx);
    const sps_idx_kernels *ki = sps_kidx(ctx);
    const int cplx = sps_scalar_is_complex(t), rsize = (int)sps_scalar_size(t) / (cplx ? 2 : 1);
    const int w = sps_entry_values(e) * (cplx ? 2 : 1);
    sps_index *perm = NULL, *scol = NULL, *tstart = NULL, *seg = NULL, *ucol = NULL, *rowptr = NULL, *dnu = NULL;
    int64_t *dbad = NULL, bad[2] = {-1, -1};
    void *uval = NULL;
    sps_index nu = 0, i = -1, j = -1;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&perm, (size_t)nnz * sizeof *perm), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&scol, (size_t)nnz * sizeof *scol), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&tstart, ((size_t)n + 1) * sizeof *tstart), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&seg, ((size_t)nnz + 1) * sizeof *seg), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&ucol, (size_t)nnz * sizeof *ucol), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&rowptr, ((size_t)n + 1) * sizeof *rowptr), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&dnu, sizeof *dnu), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&dbad, 2 * sizeof *dbad), done);

    SPS_CHECK_GOTO(st, ki->coo_sort(ex, n, m, nnz, row, col, perm, scol, tstart, dbad), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, bad, dbad, sizeof *bad, SPS_COPY_D2H), done);
    if (bad[0] >= 0) {
        triplet_at(ctx, row, col, bad[0], &i, &j);
        st = i < 0 || i >= n ? sps_error(ctx, SPS_ERR_ARG, "%s: entry %lld: row index %d out of range 0..%d", fn,
                                         (long long)bad[0], (int)i, (int)n - 1)
                             : sps_error(ctx, SPS_ERR_ARG,
                                         "%s: entry %lld (row %d): column index %d out of range 0..%d", fn,
                                         (long long)bad[0], (int)i, (int)j, (int)m - 1);
        goto done;
    }
    SPS_CHECK_GOTO(st, ki->coo_compress(ex, n, nnz, scol, tstart, seg, ucol, rowptr, dnu), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, &nu, dnu, sizeof nu, SPS_COPY_D2H), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, &uval, (size_t)nu * (size_t)w * (size_t)rsize), done);
    SPS_CHECK_GOTO(st, ki->coo_sum(ex, rsize, w, nu, perm, seg, val, uval, dbad), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, bad, dbad, sizeof bad, SPS_COPY_D2H), done);
    if (bad[0] >= 0) {
        triplet_at(ctx, row, col, bad[0], &i, &j);
        st = sps_error(ctx, SPS_ERR_NUMERIC, "%s: value of entry %lld (row %d, column %d) is not finite", fn,
                       (long long)bad[0], (int)i, (int)j);
        goto done;
    }
    if (bad[1] >= 0) { /* the pair's first triplet names it */
        sps_index p = 0, k = 0;
        if (sps_dcopy(ctx, &p, seg + bad[1], sizeof p, SPS_COPY_D2H) == SPS_OK &&
            sps_dcopy(ctx, &k, perm + p, sizeof k, SPS_COPY_D2H) == SPS_OK)
            triplet_at(ctx, row, col, k, &i, &j);
        st = sps_error(ctx, SPS_ERR_NUMERIC, "%s: entry (%d, %d) overflows %s: its duplicates sum past its range%s",
                       fn, (int)i, (int)j, sps_scalar_name(t), rsize == 4 ? "; assemble it in double precision" : "");
        goto done;
    }
    {
        const sps_csr_store src = {rowptr, ucol, uval};
        st = sps_matrix_from_backend_csr(ctx, &src, n, m, nu, e, t,
                                         e.kind == SPS_ENTRY_SCALAR ? SPS_FMT_CSR : SPS_FMT_BCSR, A);
    }
done:
    sps_dfree(ctx, perm);
    sps_dfree(ctx, scol);
    sps_dfree(ctx, tstart);
    sps_dfree(ctx, seg);
    sps_dfree(ctx, ucol);
    sps_dfree(ctx, rowptr);
    sps_dfree(ctx, dnu);
    sps_dfree(ctx, dbad);
    sps_dfree(ctx, uval);
    return st;
}

sps_status sps_matrix_from_csr_entries_device(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                              const sps_index *rowptr, const sps_index *col, const void *val,
                                              sps_entry_desc e, sps_scalar t, sps_matrix *A)
{
    static const char fn[] = "sps_matrix_from_csr_entries_device";
    if (!ctx || !A) return SPS_ERR_ARG;
    *A = NULL;
    SPS_CHECK(device_build_args(ctx, fn, n, m, nnz, e, t, !rowptr || (nnz > 0 && (!col || !val))));
    const int cplx = sps_scalar_is_complex(t), rsize = (int)sps_scalar_size(t) / (cplx ? 2 : 1);
    const int w = sps_entry_values(e) * (cplx ? 2 : 1);
    int64_t *dbad = NULL, bad[2] = {-1, -1};
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&dbad, 2 * sizeof *dbad), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->csr_check(sps_ex(ctx), n, m, nnz, rowptr, col, rsize, w, val, dbad), done);
    SPS_CHECK_GOTO(st, sps_dcopy(ctx, bad, dbad, sizeof bad, SPS_COPY_D2H), done);
    if (bad[0] >= 0) {
        st = bad[0] == n ? sps_error(ctx, SPS_ERR_ARG, "%s: rowptr[0] must be 0 and rowptr[%d] = nnz = %lld", fn,
                                     (int)n, (long long)nnz)
                         : sps_error(ctx, SPS_ERR_ARG,
                                     "%s: row %lld: row pointers out of order or beyond nnz = %lld, a column "
                                     "outside 0..%d, or columns not strictly increasing",
                                     fn, (long long)bad[0], (long long)nnz, (int)m - 1);
        goto done;
    }
    if (bad[1] >= 0) {
        st = sps_error(ctx, SPS_ERR_NUMERIC, "%s: value of entry %lld (element %d) is not finite", fn,
                       (long long)(bad[1] / w), (int)(bad[1] % w));
        goto done;
    }
    {
        const sps_csr_store src = {(sps_index *)rowptr, (sps_index *)col, (void *)val};
        st = sps_matrix_from_backend_csr(ctx, &src, n, m, nnz, e, t,
                                         e.kind == SPS_ENTRY_SCALAR ? SPS_FMT_CSR : SPS_FMT_BCSR, A);
    }
done:
    sps_dfree(ctx, dbad);
    return st;
}
