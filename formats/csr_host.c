/* Canonical host CSR: the interchange every reader and format goes through. */
#include "formats/format.h"

#include <float.h>
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

sps_status sps_csr_host_transpose(sps_context ctx, const sps_csr_host *h, sps_csr_host *out)
{
    memset(out, 0, sizeof *out);
    const size_t es = sps_scalar_size(h->t);
    sps_index *next = NULL;
    sps_csr_host T = {.n = h->m, .m = h->n, .nnz = h->nnz, .t = h->t};
    sps_status st;
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, (void **)&T.rowptr, ((size_t)h->m + 1) * sizeof *T.rowptr, "A^T row pointers"),
                   done);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&T.col, ((size_t)h->nnz + 1) * sizeof *T.col, "A^T columns"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, &T.val, ((size_t)h->nnz + 1) * es, "A^T values"), done);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&next, ((size_t)h->m + 1) * sizeof *next, "A^T fill pointers"), done);
    for (int64_t k = 0; k < h->nnz; k++) T.rowptr[h->col[k] + 1]++;
    for (sps_index j = 0; j < h->m; j++) T.rowptr[j + 1] += T.rowptr[j];
    memcpy(next, T.rowptr, ((size_t)h->m + 1) * sizeof *next);
    for (sps_index i = 0; i < h->n; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) {
            const sps_index d = next[h->col[k]]++;
            T.col[d] = i;
            memcpy((unsigned char *)T.val + (size_t)d * es, (const unsigned char *)h->val + (size_t)k * es, es);
        }
    *out = T;
    T = (sps_csr_host){0};
done:
    sps_csr_host_free(&T);
    free(next);
    return st;
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
    return sps_csr_host_from_triplets_entries(ctx, n, m, nnz, row, col, val, src_complex, sps_entry_scalar(), t, 0,
                                              out);
}

sps_status sps_csr_host_from_triplets_entries(sps_context ctx, sps_index n, sps_index m, int64_t nnz,
                                              const sps_index *row, const sps_index *col, const double *val,
                                              int src_complex, sps_entry_desc e, sps_scalar t, int base,
                                              sps_csr_host *out)
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
                int finite = isfinite(re) && isfinite(im); /* the summands (a file may allow nan/inf) */
                for (sps_index d = a + 1; d < end; d++) {
                    const int64_t p = (int64_t)perm[d] * nv + q;
                    const double dr = src_complex ? val[2 * p] : val[p], di = src_complex ? val[2 * p + 1] : 0.0;
                    finite = finite && isfinite(dr) && isfinite(di);
                    re += dr;
                    im += di;
                }
                if (finite && !(isfinite(re) && isfinite(im))) { /* finite duplicates whose sum overflows */
                    st = sps_error(ctx, SPS_ERR_NUMERIC, "entry (%d, %d): its %d duplicates sum to %g%s (overflow)",
                                   (int)i + base, (int)c + base, (int)(end - a), isfinite(re) ? im : re,
                                   isfinite(re) ? " (imaginary part)" : "");
                    goto fail;
                }
                /* a finite value that rounds to Inf in single precision (FLT_MAX written with 9
                 * digits reads back a little above it and still rounds to FLT_MAX: not refused) */
                if ((t == SPS_F32 || t == SPS_C32) && ((isfinite(re) && isinf((float)re)) ||
                                                       (isfinite(im) && isinf((float)im)))) {
                    st = sps_error(ctx, SPS_ERR_NUMERIC,
                                   "entry (%d, %d) = %g%s overflows %s (largest %g): read it as f64",
                                   (int)i + base, (int)c + base, isinf((float)re) ? re : im,
                                   isinf((float)re) ? "" : " (imaginary part)", sps_scalar_name(t), (double)FLT_MAX);
                    goto fail;
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
    out->entry = sps_entry_stored(e);
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

/* ------------------------------------------------------------------ compound <-> scalar */

/* Element (r, c) of the scalar expansion of entry k of AoS values val into dst (one
 * scalar of type t): a block's own element (row-major; the scalar entry is the 1 x 1
 * case), a quaternion's sign(r,c) * q[idx(r,c)] of L(q) (kernels/compound_kernels.h). */
void sps_entry_elem(sps_entry_desc e, sps_scalar t, const void *val, int64_t k, int r, int c, void *dst)
{
    const size_t ss = sps_scalar_size(t);
    const int nv = sps_entry_values(e);
    const unsigned char *v = (const unsigned char *)val + (size_t)k * nv * ss;
    if (e.kind != SPS_ENTRY_QUATERNION) {
        memcpy(dst, v + ((size_t)r * sps_entry_dim(e) + c) * ss, ss);
        return;
    }
    const int p = sps_q_idx[r][c], s = sps_q_sign[r][c]; /* quaternions are real: f32 or f64 */
    if (t == SPS_F32) *(float *)dst = (float)s * ((const float *)v)[p];
    else *(double *)dst = (double)s * ((const double *)v)[p];
}

sps_status sps_csr_host_expand(sps_context ctx, const sps_csr_host *in, sps_csr_host *out)
{
    memset(out, 0, sizeof *out);
    const int d = sps_entry_dim(in->entry);
    const int64_t rows = (int64_t)in->n * d, cols = (int64_t)in->m * d, nnz = in->nnz * d * d;
    if (rows > INT32_MAX || cols > INT32_MAX || nnz > INT32_MAX)
        return sps_error(ctx, SPS_ERR_ARG, "the scalar expansion of %d x %d %s entries (nnz %lld) exceeds the 32-bit "
                         "index range", (int)in->n, (int)in->m, sps_entry_name(in->entry), (long long)in->nnz);
    const size_t ss = sps_scalar_size(in->t);
    sps_status st;
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&out->rowptr, ((size_t)rows + 1) * sizeof *out->rowptr,
                                   "expansion row pointers"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&out->col, (size_t)nnz * sizeof *out->col, "expansion columns"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, &out->val, (size_t)nnz * ss, "expansion values"), fail);
    int64_t w = 0;
    out->rowptr[0] = 0;
    for (sps_index i = 0; i < in->n; i++)
        for (int r = 0; r < d; r++) {
            for (sps_index k = in->rowptr[i]; k < in->rowptr[i + 1]; k++)
                for (int c = 0; c < d; c++, w++) {
                    out->col[w] = in->col[k] * d + c;
                    sps_entry_elem(in->entry, in->t, in->val, k, r, c, (unsigned char *)out->val + (size_t)w * ss);
                }
            out->rowptr[(int64_t)i * d + r + 1] = (sps_index)w;
        }
    out->n = (sps_index)rows;
    out->m = (sps_index)cols;
    out->nnz = nnz;
    out->t = in->t;
    return SPS_OK;
fail:
    sps_csr_host_free(out);
    return st;
}

static int cmp_index(const void *a, const void *b)
{
    const sps_index x = *(const sps_index *)a, y = *(const sps_index *)b;
    return (x > y) - (x < y);
}

sps_status sps_csr_host_group_blocks(sps_context ctx, const sps_csr_host *in, int b, const char *name,
                                     sps_csr_host *out)
{
    memset(out, 0, sizeof *out);
    if (in->entry.kind != SPS_ENTRY_SCALAR)
        return sps_error(ctx, SPS_ERR_ARG, "%s: reading as %dx%d blocks takes a scalar matrix, not %s entries", name,
                         b, b, sps_entry_name(in->entry));
    if (!sps_entry_valid(sps_entry_block(b)))
        return sps_error(ctx, SPS_ERR_ARG, "%s: block size %d (blocks are 2..8)", name, b);
    if (in->n % b || in->m % b)
        return sps_error(ctx, SPS_ERR_ARG, "%s: the matrix is %d x %d, which does not divide into %dx%d blocks (%s %d "
                         "is not a multiple of %d)", name, (int)in->n, (int)in->m, b, b,
                         in->n % b ? "rows" : "columns", in->n % b ? (int)in->n : (int)in->m, b);
    const sps_index n = in->n / b, m = in->m / b;
    const size_t ss = sps_scalar_size(in->t), bs = (size_t)b * b * ss;
    sps_index *slot = NULL, *touched = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&slot, ((size_t)m + 1) * sizeof *slot, "block slots"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&touched, ((size_t)m + 1) * sizeof *touched, "block columns"), fail);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&out->rowptr, ((size_t)n + 1) * sizeof *out->rowptr,
                                   "block row pointers"), fail);
    for (sps_index j = 0; j < m; j++) slot[j] = -1;
    /* pass 1: the blocks each block-row touches (slot[j] = the block-row that last touched j) */
    out->rowptr[0] = 0;
    for (sps_index I = 0; I < n; I++) {
        sps_index cnt = 0;
        for (sps_index k = in->rowptr[I * b]; k < in->rowptr[(I + 1) * b]; k++)
            if (slot[in->col[k] / b] != I) {
                slot[in->col[k] / b] = I;
                cnt++;
            }
        out->rowptr[I + 1] = out->rowptr[I] + cnt;
    }
    const int64_t nnz = out->rowptr[n];
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, (void **)&out->col, (size_t)nnz * sizeof *out->col, "block columns"), fail);
    SPS_CHECK_GOTO(st, sps_hcalloc(ctx, &out->val, (size_t)nnz * bs, "block values"), fail); /* explicit zeros */
    /* pass 2: the block columns of a block-row in ascending order (the rows' columns
       merge: mark, then walk the marks), each scalar into its block */
    for (sps_index j = 0; j < m; j++) slot[j] = -1;
    for (sps_index I = 0; I < n; I++) {
        sps_index cnt = 0;
        for (sps_index k = in->rowptr[I * b]; k < in->rowptr[(I + 1) * b]; k++) {
            const sps_index J = in->col[k] / b;
            if (slot[J] == -1) {
                slot[J] = 0;
                touched[cnt++] = J;
            }
        }
        /* the b scalar rows are each sorted, but a later one may touch lower block
           columns: sort the block columns (insertion sort was quadratic there) */
        qsort(touched, (size_t)cnt, sizeof *touched, cmp_index);
        for (sps_index a = 0; a < cnt; a++) {
            out->col[out->rowptr[I] + a] = touched[a];
            slot[touched[a]] = out->rowptr[I] + a;
        }
        for (int r = 0; r < b; r++)
            for (sps_index k = in->rowptr[I * b + r]; k < in->rowptr[I * b + r + 1]; k++) {
                const sps_index J = in->col[k] / b;
                const int c = (int)(in->col[k] % b);
                memcpy((unsigned char *)out->val + (size_t)slot[J] * bs + ((size_t)r * b + c) * ss,
                       (const unsigned char *)in->val + (size_t)k * ss, ss);
            }
        for (sps_index a = 0; a < cnt; a++) slot[touched[a]] = -1;
    }
    out->n = n;
    out->m = m;
    out->nnz = nnz;
    out->t = in->t;
    out->entry = sps_entry_block(b);
    free(slot);
    free(touched);
    return SPS_OK;
fail:
    free(slot);
    free(touched);
    sps_csr_host_free(out);
    return st;
}
