/* Helpers of the formats that hold or build from CSR arrays in backend memory
 * (CSR and Hola store them; HYB, JDS, DIA and the padded formats build from them):
 *   - sps_csr_stage / sps_csr_unstage: upload a canonical host CSR (of any entry
 *     type: sps_entry_values scalars a position) into an sps_csr_store (a
 *     format's own, or a temporary one, so from_csr (host) can run the same
 *     backend build as from_backend_csr) / free it;
 *   - sps_csr_fetch: download an sps_csr_store of matrix A into a host CSR;
 *   - sps_csr_bytes: the bytes of CSR arrays (n rows, nnz entries);
 *   - sps_csr_rowlen_hist: the row-length histogram, built by backend kernels
 *     (jds_rowlen_max, jds_rowlen_hist) and downloaded: maxlen + 1 integers,
 *     all the host needs to size a JDS or HYB layout. */
#ifndef SPS_FORMATS_CSR_BACKEND_H
#define SPS_FORMATS_CSR_BACKEND_H

#include "formats/format.h"

#include <stdlib.h>
#include <string.h>

static inline void sps_csr_unstage(sps_context ctx, sps_csr_store *s)
{
    sps_dfree(ctx, s->rowptr);
    sps_dfree(ctx, s->col);
    sps_dfree(ctx, s->val);
    memset(s, 0, sizeof *s);
}

static inline sps_status sps_csr_stage(sps_context ctx, const sps_csr_host *h, sps_csr_store *s)
{
    memset(s, 0, sizeof *s);
    sps_status st = sps_dupload(ctx, (void **)&s->rowptr, h->rowptr, ((size_t)h->n + 1) * sizeof(sps_index));
    if (st == SPS_OK) st = sps_dupload(ctx, (void **)&s->col, h->col, (size_t)h->nnz * sizeof(sps_index));
    if (st == SPS_OK)
        st = sps_dupload(ctx, &s->val, h->val, (size_t)h->nnz * (size_t)sps_entry_values(h->entry) * sps_scalar_size(h->t));
    if (st != SPS_OK) sps_csr_unstage(ctx, s);
    return st;
}

/** from_csr (host CSR) of a format that builds from backend CSR: h staged, build(B, staged, opt),
 *  the staging freed (in stream order: after the build's queued kernels have read it). */
static inline sps_status sps_csr_build_from_host(sps_matrix B, const sps_csr_host *h, sps_options opt,
                                                 sps_status (*build)(sps_matrix, const sps_csr_store *, sps_options))
{
    sps_csr_store src;
    SPS_CHECK(sps_csr_stage(B->ctx, h, &src));
    const sps_status st = build(B, &src, opt);
    sps_csr_unstage(B->ctx, &src);
    return st;
}

/** dst = a copy of src's arrays in backend memory (n rows, nnz entries of vb value bytes in
 *  all; from_backend_csr of the formats that store plain CSR arrays).  dst is freed whole
 *  by sps_csr_unstage, also after a failure. */
static inline sps_status sps_csr_copy_backend(sps_context ctx, const sps_csr_store *src, sps_index n, int64_t nnz,
                                              size_t vb, sps_csr_store *dst)
{
    memset(dst, 0, sizeof *dst);
    const size_t rb = ((size_t)n + 1) * sizeof(sps_index), cb = (size_t)nnz * sizeof(sps_index);
    SPS_CHECK(sps_dmalloc(ctx, (void **)&dst->rowptr, rb));
    SPS_CHECK(sps_dmalloc(ctx, (void **)&dst->col, cb));
    SPS_CHECK(sps_dmalloc(ctx, &dst->val, vb));
    SPS_CHECK(sps_dcopy(ctx, dst->rowptr, src->rowptr, rb, SPS_COPY_D2D));
    if (cb) SPS_CHECK(sps_dcopy(ctx, dst->col, src->col, cb, SPS_COPY_D2D));
    return vb ? sps_dcopy(ctx, dst->val, src->val, vb, SPS_COPY_D2D) : SPS_OK;
}

/** out = A's CSR arrays s, downloaded (to_csr of the formats that store plain CSR). */
static inline sps_status sps_csr_fetch(sps_matrix A, const sps_csr_store *s, sps_csr_host *out)
{
    out->n = A->n;
    out->m = A->m;
    out->nnz = A->nnz;
    out->t = A->t;
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&out->rowptr, s->rowptr, ((size_t)A->n + 1) * sizeof(sps_index),
                            "CSR row pointers"));
    SPS_CHECK(sps_ddownload(A->ctx, (void **)&out->col, s->col, (size_t)A->nnz * sizeof(sps_index), "CSR columns"));
    return sps_ddownload(A->ctx, &out->val, s->val, (size_t)A->nnz * sps_scalar_size(A->t), "CSR values");
}

static inline size_t sps_csr_bytes(sps_index n, int64_t nnz, sps_scalar t)
{
    return ((size_t)n + 1) * sizeof(sps_index) + (size_t)nnz * (sizeof(sps_index) + sps_scalar_size(t));
}

/** *maxlen = the longest row; *hist (host, malloc'd, maxlen + 1 entries) = rows of each length. */
static inline sps_status sps_csr_rowlen_hist(sps_context ctx, sps_index n, const sps_index *rowptr, sps_index *maxlen,
                                             sps_index **hist)
{
    *hist = NULL;
    *maxlen = 0;
    sps_index *d = NULL, *mx = NULL;
    SPS_CHECK(sps_dmalloc(ctx, (void **)&d, sizeof *d));
    sps_status st = sps_kidx(ctx)->jds_rowlen_max(sps_ex(ctx), n, rowptr, d);
    if (st == SPS_OK) st = sps_ddownload(ctx, (void **)&mx, d, sizeof *d, "the longest row length");
    sps_dfree(ctx, d);
    d = NULL;
    SPS_CHECK(st);
    *maxlen = *mx;
    free(mx);
    const size_t bytes = ((size_t)*maxlen + 1) * sizeof(sps_index);
    SPS_CHECK(sps_dmalloc(ctx, (void **)&d, bytes));
    st = sps_kidx(ctx)->jds_rowlen_hist(sps_ex(ctx), n, rowptr, *maxlen, d);
    if (st == SPS_OK) st = sps_ddownload(ctx, (void **)hist, d, bytes, "the row-length histogram");
    sps_dfree(ctx, d);
    return st;
}

#endif
