/* Helpers of the formats built from a CSR matrix in backend memory
 * (from_backend_csr; HYB, JDS and DIA use them):
 *   - sps_csr_stage: upload a canonical host CSR into a temporary sps_csr_store,
 *     so from_csr (host) can run the same backend build as from_backend_csr;
 *   - sps_csr_rowlen_hist: the row-length histogram, built by backend kernels
 *     (jds_rowlen_max, jds_rowlen_hist) and downloaded: maxlen + 1 integers,
 *     all the host needs to size a JDS or HYB layout. */
#ifndef SPS_FORMATS_CSR_BACKEND_H
#define SPS_FORMATS_CSR_BACKEND_H

#include "core/internal.h"

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
    if (st == SPS_OK) st = sps_dupload(ctx, &s->val, h->val, (size_t)h->nnz * sps_scalar_size(h->t));
    if (st != SPS_OK) sps_csr_unstage(ctx, s);
    return st;
}

/** *maxlen = the longest row; *hist (host, malloc'd, maxlen + 1 entries) = rows of each length. */
static inline sps_status sps_csr_rowlen_hist(sps_context ctx, sps_scalar t, sps_index n, const sps_index *rowptr,
                                             sps_index *maxlen, sps_index **hist)
{
    const sps_kernels *k = sps_kern(ctx, t);
    *hist = NULL;
    *maxlen = 0;
    sps_index *d = NULL, *mx = NULL;
    SPS_CHECK(sps_dmalloc(ctx, (void **)&d, sizeof *d));
    sps_status st = k->jds_rowlen_max(ctx, n, rowptr, d);
    if (st == SPS_OK) st = sps_ddownload(ctx, (void **)&mx, d, sizeof *d, "the longest row length");
    sps_dfree(ctx, d);
    d = NULL;
    SPS_CHECK(st);
    *maxlen = *mx;
    free(mx);
    const size_t bytes = ((size_t)*maxlen + 1) * sizeof(sps_index);
    SPS_CHECK(sps_dmalloc(ctx, (void **)&d, bytes));
    st = k->jds_rowlen_hist(ctx, n, rowptr, *maxlen, d);
    if (st == SPS_OK) st = sps_ddownload(ctx, (void **)hist, d, bytes, "the row-length histogram");
    sps_dfree(ctx, d);
    return st;
}

#endif
