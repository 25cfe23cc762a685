/* Value dictionaries for the formats whose product streams a value a stored slot:
 * the padded family (ell, sell, rgcsr) and DIA.  The option "values" says how a
 * build stores them:
 *   plain  one scalar a slot;
 *   dict   one byte a slot, an index into a sorted table of the matrix's distinct
 *          values (padding's zero among them); refused where there are more than
 *          SPS_VDICT_MAX (kernels/format_kernels_vdict.h has why and how);
 *   auto   dict on the GPU where the format stores at least SPS_VDICT_AUTO_SLOTS
 *          slots and the values allow, else plain.  The CPU keeps plain values
 *          (its products are measured faster with them only where bandwidth, not the
 *          lookup, bounds them: not measured, so not chosen).
 * The product reads a value as dict[idx[slot]] instead of val[slot]: the same
 * scalar, so a dict build's product is bit-identical to the plain build's. */
#ifndef SPS_FORMATS_VDICT_H
#define SPS_FORMATS_VDICT_H

#include "formats/format.h"
#include "kernels/format_kernels_vdict.h"

/* auto's smallest store: below it the product is a chain of latencies, and the
 * dictionary's lookup is one more (bench/results/auto-model-*.md, session 28). */
#define SPS_VDICT_AUTO_SLOTS ((int64_t)1 << 20)

typedef enum { SPS_VALUES_AUTO = 0, SPS_VALUES_PLAIN, SPS_VALUES_DICT } sps_values_mode;

#define SPS_FMT_OPT_VALUES                                                                                     \
    {.name = "values", .type = SPS_OPT_CHOICE, .def = "auto", .choices = "auto|plain|dict",                  \
     .help = "how the stored values are kept: plain (a scalar a slot), dict (a byte a slot indexing the at "   \
             "most 256 distinct values; refused beyond), auto (dict on the GPU for large matrices where it "   \
             "applies)"}

/** The dictionary of a store: ndict values of the matrix's scalar type in backend
 *  memory, sorted (sps_vdict_cmp); dict NULL: the values are plain. */
typedef struct {
    void *dict;
    int ndict;
} sps_vdict;

/** Store the count values at *val (backend memory, B's scalar type, B->ctx's backend)
 *  as indices into a dictionary where mode asks for it and the values allow: then *val
 *  becomes the count-byte index array (the plain one freed) and d->dict the dictionary.
 *  Otherwise *val and d are left as they are (d->dict NULL).  A dict that is refused
 *  (too many values) is SPS_ERR_ARG naming the format. */
sps_status sps_vdict_apply(sps_matrix B, sps_values_mode mode, void **val, int64_t count, sps_vdict *d);
/** *fits: whether the count values at val (backend memory, ctx's backend) hold fewer than
 *  SPS_VDICT_MAX distinct ones (0 for none), so that any store of them, padding's zero
 *  added, is kept as a table by values auto on the GPU, were it large enough.  One collect
 *  and a download of a few KB. */
sps_status sps_vdict_fits(sps_context ctx, const void *val, int64_t count, int vsize, int *fits);
/** The plain values of a dictionary store: out[k] = dict[idx[k]] (host memory, count
 *  values of vsize bytes). */
void sps_vdict_expand(const void *dict, const uint8_t *idx, int64_t count, int vsize, void *out);
/** The count values of a store to the host (*out, allocated; `what` names them in errors),
 *  a value a slot whether val holds them (d->dict NULL) or a dictionary's indices: the
 *  formats' way back to CSR. */
sps_status sps_vdict_download(sps_context ctx, const void *val, const sps_vdict *d, int64_t count, size_t vsize,
                              const char *what, void **out);
/** Bytes of a store's values: count slots of vsize bytes, or a byte each and the table. */
static inline size_t sps_vdict_store_bytes(const sps_vdict *d, int64_t count, size_t vsize)
{
    return d->dict ? (size_t)count + (size_t)d->ndict * vsize : (size_t)count * vsize;
}
/** The values option of opt. */
static inline sps_values_mode sps_vdict_mode(sps_options opt) { return (sps_values_mode)sps_opt_int(opt, "values"); }

#endif
