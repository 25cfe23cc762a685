/* CPU kernels of value dictionaries (kernels/format_kernels_vdict.h): the
 * reference the GPU's are tested against.  Collect: one pass through an
 * open-addressing table of 4 x SPS_VDICT_MAX slots, stopping at the first
 * value past the limit; dict in the order of first appearance.  Encode: a
 * binary search of the sorted dictionary a value. */
#include "kernels/cpu/common.h"

#define VDICT_TABLE (4 * SPS_VDICT_MAX)

/* A value's bits folded to a slot of the table (vsize / 4 words). */
static unsigned vdict_hash(const uint32_t *w, int words)
{
    uint32_t h = 0x811c9dc5u;
    for (int i = 0; i < words; i++) h = (h ^ w[i]) * 0x9e3779b1u;
    return (unsigned)(h >> 22) & (VDICT_TABLE - 1);
}

sps_status sps_cpu_vdict_collect(sps_exec *ex, const void *val, int64_t count, int vsize, void *dict, int *cnt)
{
    (void)ex;
    short table[VDICT_TABLE]; /* position in dict + 1; 0: empty */
    memset(table, 0, sizeof table);
    const char *v = val;
    int nd = 0;
    for (int64_t k = 0; k < count; k++) {
        const void *e = v + (size_t)k * (size_t)vsize;
        unsigned h = vdict_hash(e, vsize / 4);
        while (table[h] && sps_vdict_cmp((const char *)dict + (size_t)(table[h] - 1) * (size_t)vsize, e, vsize))
            h = (h + 1) & (VDICT_TABLE - 1);
        if (table[h]) continue;
        if (nd == SPS_VDICT_MAX) {
            nd = SPS_VDICT_MAX + 1;
            break;
        }
        memcpy((char *)dict + (size_t)nd * (size_t)vsize, e, (size_t)vsize);
        table[h] = (short)++nd;
    }
    *cnt = nd;
    return SPS_OK;
}

sps_status sps_cpu_vdict_encode(sps_exec *ex, const void *val, int64_t count, int vsize, const void *dict, int ndict,
                                uint8_t *idx)
{
    (void)ex;
    const char *v = val, *d = dict;
#pragma omp parallel for schedule(static) if (count > SPS_OMP_MIN)
    for (int64_t k = 0; k < count; k++) {
        const void *e = v + (size_t)k * (size_t)vsize;
        int lo = 0, hi = ndict - 1; /* the value is there: the first position not below it */
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (sps_vdict_cmp(d + (size_t)mid * (size_t)vsize, e, vsize) < 0) lo = mid + 1;
            else hi = mid;
        }
        idx[k] = (uint8_t)lo;
    }
    return SPS_OK;
}
