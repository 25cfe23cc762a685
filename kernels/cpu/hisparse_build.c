/* The CPU build of a HiSparse tree (kernels/format_kernels_hisparse.h: the hs_* kernels of
 * the index family), the oracle of kernels/cuda/hisparse_build.cu: the same element steps
 * (sps_hs_size_at, sps_hs_fill_entry, ...) in loops (the level starts, sizes and schedule sums
 * as the one-pass sum's steps run in order: kernels/hisparse_small.h), the sort an LSD radix sort (keys are
 * distinct, so every sort gives the same order), the prefix sums serial.  The host's
 * recursive builder (formats/hisparse.c) is the oracle of both: tests/test_hisparse.c
 * checks the pools byte for byte. */
#include "kernels/cpu/common.h"
#include "kernels/hisparse_small.h"

#include <stdlib.h>
#include <string.h>

/* the keys with their positions as 64-bit values, sorted by hs_sort_pairs (one radix sort
 * for the build and the sum), then the positions narrowed */
sps_status sps_cpu_hs_keys(sps_exec *ex, sps_hs_geom g, sps_index n, int64_t nnz, const sps_index *rowptr,
                           const sps_index *col, uint64_t *key, sps_index *perm)
{
    if (nnz <= 0) return SPS_OK;
    uint64_t *pos = malloc((size_t)nnz * sizeof *pos);
    if (!pos) return sps_kerror(ex, SPS_ERR_ALLOC, "hs_keys: out of host memory for %lld keys", (long long)nnz);
    for (sps_index i = 0; i < n; i++)
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++)
            key[k] = sps_hs_key(g, (uint64_t)i, (uint64_t)col[k]), pos[k] = (uint64_t)k;
    const sps_status st = sps_cpu_hs_sort_pairs(ex, nnz, sps_hs_key_bits(g), key, pos, key, pos);
    if (st == SPS_OK)
        for (int64_t e = 0; e < nnz; e++) perm[e] = (sps_index)pos[e];
    free(pos);
    return st;
}

sps_status sps_cpu_hs_marks(sps_exec *ex, sps_hs_geom g, int64_t nnz, const uint64_t *key, uint8_t *mark,
                            sps_index *hist)
{
    (void)ex;
    for (int64_t e = 0; e < nnz; e++) hist[mark[e] = (uint8_t)sps_hs_mark(g, key, e)]++;
    return SPS_OK;
}

sps_status sps_cpu_hs_starts(sps_exec *ex, int64_t nnz, const uint8_t *mark, int l, sps_index *at, sps_index *start)
{
    (void)ex;
    sps_index *const s1[1] = {start};
    const sps_hs_geom none = {0};
    sps_hss_starts(nnz, none, NULL, mark, NULL, l, 1, at, s1, NULL, NULL, NULL); /* the marks given */
    return SPS_OK;
}

sps_status sps_cpu_hs_sizes(sps_exec *ex, int d, int leaf, size_t vbytes, sps_hs_level v, sps_hs_level c, int64_t *sz,
                            int64_t *stats)
{
    (void)ex;
    sps_hss_sizes(d, leaf, vbytes, v, c, sz, stats, NULL, NULL, NULL);
    return SPS_OK;
}

sps_status sps_cpu_hs_offsets(sps_exec *ex, sps_hs_level p, sps_hs_level c)
{
    (void)ex;
    for (int64_t j = 0; j < c.n; j++) sps_hs_offset_at(j, p, c);
    return SPS_OK;
}

sps_status sps_cpu_hs_fill_leaves(sps_exec *ex, sps_hs_geom g, size_t vsize, int64_t nnz, const uint64_t *key,
                                  const sps_index *perm, const void *val, sps_hs_level v, unsigned char *pool)
{
    (void)ex;
    for (int64_t e = 0; e < nnz; e++) sps_hs_fill_entry(e, g, vsize, key, perm, val, v, pool);
    return SPS_OK;
}

sps_status sps_cpu_hs_fill_inner(sps_exec *ex, sps_hs_geom g, int l, const uint64_t *key, sps_hs_level p,
                                 sps_hs_level c, unsigned char *pool)
{
    (void)ex;
    for (int64_t j = 0; j < c.n; j++) sps_hs_fill_child(j, g, l, key, p, c, pool);
    return SPS_OK;
}

sps_status sps_cpu_hs_sched_sums(sps_exec *ex, sps_hs_level v, int64_t *so, int64_t *sI, int64_t *dI)
{
    (void)ex;
    sps_hss_sched_sums(v, so, sI, dI, NULL);
    return SPS_OK;
}

sps_status sps_cpu_hs_sched(sps_exec *ex, sps_hs_geom g, const uint64_t *key, sps_hs_level v, const int64_t *so,
                            const int64_t *sI, const int64_t *dI, sps_hs_item *sparse, sps_hs_item *dense,
                            int64_t *warp_seg)
{
    (void)ex;
    for (int64_t i = 0; i < v.n; i++) sps_hs_sched_at(i, g, key, v, so, sI, dI, sparse, dense, warp_seg);
    return SPS_OK;
}

sps_status sps_cpu_hs_list(sps_exec *ex, sps_hs_sched X, size_t vsize, int trans, sps_hs_geom g, uint64_t tag,
                           uint64_t *key, uint64_t *src)
{
    (void)ex;
    const int64_t base = X.nwarps * SPS_HS_RUN, slots = X.ndense * (int64_t)X.d * X.d;
    for (int64_t i = 0; i < base; i++) sps_hs_list_entry(i, X, vsize, trans, g, tag, key, src);
    for (int64_t i = 0; i < slots; i++) sps_hs_list_slot(i, X, vsize, trans, g, tag, key + base, src + base);
    return SPS_OK;
}

/* in place too (kin == key, vin == val): the CPU build's keys and the one-pass sum sort so */
sps_status sps_cpu_hs_sort_pairs(sps_exec *ex, int64_t n, int bits, const uint64_t *kin, const uint64_t *vin,
                                 uint64_t *key, uint64_t *val)
{
    if (n <= 0) return SPS_OK;
    if (kin != key) memcpy(key, kin, (size_t)n * sizeof *key);
    if (vin != val) memcpy(val, vin, (size_t)n * sizeof *val);
    if (n == 1) return SPS_OK;
    uint64_t *k2 = malloc((size_t)n * sizeof *k2), *v2 = malloc((size_t)n * sizeof *v2);
    if (!k2 || !v2) {
        free(k2), free(v2);
        return sps_kerror(ex, SPS_ERR_ALLOC, "hs_sort_pairs: out of host memory for %lld pairs", (long long)n);
    }
    uint64_t *ka = key, *kb = k2, *va = val, *vb = v2;
    for (int sh = 0; sh < bits; sh += 8) { /* LSD, 8 bits a pass: stable */
        int64_t cnt[257] = {0};
        const uint64_t mask = bits - sh >= 8 ? 255u : ((uint64_t)1 << (bits - sh)) - 1;
        for (int64_t e = 0; e < n; e++) cnt[((ka[e] >> sh) & mask) + 1]++;
        for (int b = 0; b < 256; b++) cnt[b + 1] += cnt[b];
        for (int64_t e = 0; e < n; e++) {
            const int64_t to = cnt[(ka[e] >> sh) & mask]++;
            kb[to] = ka[e], vb[to] = va[e];
        }
        uint64_t *t = ka;
        ka = kb, kb = t, t = va, va = vb, vb = t;
    }
    if (ka != key) {
        memcpy(key, ka, (size_t)n * sizeof *key);
        memcpy(val, va, (size_t)n * sizeof *val);
    }
    free(k2), free(v2);
    return SPS_OK;
}

sps_status sps_cpu_hs_merge_pairs(sps_exec *ex, int64_t na, const uint64_t *ka, const uint64_t *va, int64_t nb,
                                  const uint64_t *kb, const uint64_t *vb, uint64_t *key, uint64_t *val)
{
    (void)ex;
    int64_t i = 0, j = 0, o = 0;
    while (i < na && j < nb) {
        if (kb[j] < ka[i]) key[o] = kb[j], val[o++] = vb[j++];
        else key[o] = ka[i], val[o++] = va[i++];
    }
    for (; i < na; i++) key[o] = ka[i], val[o++] = va[i];
    for (; j < nb; j++) key[o] = kb[j], val[o++] = vb[j];
    return SPS_OK;
}

sps_status sps_cpu_hs_ukeys(sps_exec *ex, sps_index nu, const sps_index *ustart, const uint64_t *key, uint64_t *ukey)
{
    (void)ex;
    for (sps_index u = 0; u < nu; u++) ukey[u] = key[ustart[u]];
    return SPS_OK;
}

sps_status sps_cpu_hs_small_fill(sps_exec *ex, const sps_hs_small *W)
{
    (void)ex;
    sps_hs_small_fill(W);
    return SPS_OK;
}
