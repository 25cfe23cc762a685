/* Value dictionaries (formats/vdict.h): collect the distinct values on the
 * backend, sort them on the host (at most 256: a few kilobytes each way), encode
 * every slot on the backend. */
#include "formats/vdict.h"

#include <stdlib.h>
#include <string.h>

/* Sorted by sps_vdict_cmp, so the indices do not depend on the order the backend
 * found the values in. */
static void vdict_sort(char *d, int n, int vsize)
{
    uint32_t tmp[4]; /* a value of at most 16 bytes, aligned as sps_vdict_cmp reads it */
    for (int i = 1; i < n; i++) {
        memcpy(tmp, d + (size_t)i * vsize, (size_t)vsize);
        int j = i;
        for (; j > 0 && sps_vdict_cmp(d + (size_t)(j - 1) * vsize, tmp, vsize) > 0; j--)
            memcpy(d + (size_t)j * vsize, d + (size_t)(j - 1) * vsize, (size_t)vsize);
        memcpy(d + (size_t)j * vsize, tmp, (size_t)vsize);
    }
}

/* The distinct values of the count values at val (backend memory), at most SPS_VDICT_MAX, on
 * the host (*hd, allocated: SPS_VDICT_MAX values, then the count), and their number
 * (SPS_VDICT_MAX + 1: more). */
static sps_status collect(sps_context ctx, const void *val, int64_t count, int vsize, char **hd, int *nfound)
{
    /* the values found and their count after them: one download brings both (a few KB) */
    const size_t dbytes = (size_t)SPS_VDICT_MAX * vsize;
    char *found = NULL;
    *hd = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&found, dbytes + sizeof(int)), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->vdict_collect(sps_ex(ctx), val, count, vsize, found, (int *)(found + dbytes)),
                   done);
    SPS_CHECK_GOTO(st, sps_ddownload(ctx, (void **)hd, found, dbytes + sizeof(int), "the value dictionary"), done);
    memcpy(nfound, *hd + dbytes, sizeof *nfound);
done:
    sps_dfree(ctx, found);
    return st;
}

sps_status sps_vdict_fits(sps_context ctx, const void *val, int64_t count, int vsize, int *fits)
{
    *fits = 0;
    if (count <= 0) return SPS_OK;
    char *hd = NULL;
    int n = 0;
    const sps_status st = collect(ctx, val, count, vsize, &hd, &n);
    free(hd);
    *fits = st == SPS_OK && n >= 1 && n < SPS_VDICT_MAX; /* room for a padded store's zero */
    return st;
}

sps_status sps_vdict_apply(sps_matrix B, sps_values_mode mode, void **val, int64_t count, sps_vdict *d)
{
    d->dict = NULL;
    d->ndict = 0;
    if (mode == SPS_VALUES_PLAIN || B->entry.kind != SPS_ENTRY_SCALAR || count <= 0) return SPS_OK; /* no slots: no table */
    if (mode == SPS_VALUES_AUTO && (B->ctx->backend != SPS_BACKEND_CUDA || count < SPS_VDICT_AUTO_SLOTS))
        return SPS_OK;
    sps_context ctx = B->ctx;
    const int vsize = (int)sps_scalar_size(B->t);
    char *hd = NULL;
    void *sorted = NULL;
    uint8_t *idx = NULL;
    int nfound = 0;
    sps_status st;
    SPS_CHECK_GOTO(st, collect(ctx, *val, count, vsize, &hd, &nfound), done);
    if (nfound > SPS_VDICT_MAX || nfound < 1) {
        if (mode == SPS_VALUES_DICT)
            st = sps_error(ctx, SPS_ERR_ARG,
                           "%s: values dict refused: the %lld stored values hold more than %d distinct ones; use "
                           "values plain or auto",
                           B->ops->name, (long long)count, SPS_VDICT_MAX);
        goto done; /* auto: plain */
    }
    const int nd = nfound;
    vdict_sort(hd, nd, vsize);
    SPS_CHECK_GOTO(st, sps_dupload(ctx, &sorted, hd, (size_t)nd * vsize), done);
    SPS_CHECK_GOTO(st, sps_dmalloc(ctx, (void **)&idx, (size_t)count), done);
    SPS_CHECK_GOTO(st, sps_kidx(ctx)->vdict_encode(sps_ex(ctx), *val, count, vsize, sorted, nd, idx), done);
    sps_dfree(ctx, *val);
    *val = idx;
    idx = NULL;
    d->dict = sorted;
    d->ndict = nd;
    sorted = NULL;
done:
    sps_dfree(ctx, sorted);
    sps_dfree(ctx, idx);
    free(hd);
    return st;
}

sps_status sps_vdict_download(sps_context ctx, const void *val, const sps_vdict *d, int64_t count, size_t vsize,
                              const char *what, void **out)
{
    *out = NULL;
    if (!d->dict) return sps_ddownload(ctx, out, val, (size_t)count * vsize, what);
    uint8_t *idx = NULL;
    char *dict = NULL;
    sps_status st;
    SPS_CHECK_GOTO(st, sps_ddownload(ctx, (void **)&idx, val, (size_t)count, what), done);
    SPS_CHECK_GOTO(st, sps_ddownload(ctx, (void **)&dict, d->dict, (size_t)d->ndict * vsize, "the value dictionary"),
                   done);
    SPS_CHECK_GOTO(st, sps_hmalloc(ctx, out, count > 0 ? (size_t)count * vsize : 1, what), done);
    sps_vdict_expand(dict, idx, count, (int)vsize, *out);
done:
    free(idx);
    free(dict);
    return st;
}

void sps_vdict_expand(const void *dict, const uint8_t *idx, int64_t count, int vsize, void *out)
{
    for (int64_t k = 0; k < count; k++)
        memcpy((char *)out + (size_t)k * vsize, (const char *)dict + (size_t)idx[k] * vsize, (size_t)vsize);
}
