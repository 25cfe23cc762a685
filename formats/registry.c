/* The format registry: adding a format is one file pair plus one line here. */
#include "formats/format.h"

#include <string.h>

extern const sps_format_ops sps_format_csr, sps_format_coo;
extern const sps_format_ops sps_format_hyb, sps_format_jds, sps_format_dia; /* formats/hyb.c, jds.c, dia.c */
extern const sps_format_ops sps_format_ell, sps_format_sell, sps_format_rgcsr; /* formats/padded.h */
extern const sps_format_ops sps_format_hola; /* formats/hola.c */
extern const sps_format_ops sps_format_bcsr; /* formats/bcsr.c: compound entries */
extern const sps_format_ops sps_format_bell, sps_format_bsell; /* formats/bell.c: compound entries, padded */
extern const sps_format_ops sps_format_hisparse; /* formats/hisparse.c */

static const sps_format_ops *const registry[] = {
    &sps_format_csr,
    &sps_format_coo,
    &sps_format_hyb,
    &sps_format_jds,
    &sps_format_dia,
    &sps_format_ell,
    &sps_format_sell,
    &sps_format_rgcsr,
    &sps_format_hola,
    &sps_format_hisparse,
    &sps_format_bcsr,
    &sps_format_bell,
    &sps_format_bsell,
};
#define NREG ((int)(sizeof registry / sizeof registry[0]))

int sps_format_count(void) { return NREG; }
const sps_format_ops *sps_format_at(int i) { return (i >= 0 && i < NREG) ? registry[i] : NULL; }

const sps_format_ops *sps_format_lookup(sps_format id)
{
    for (int i = 0; i < NREG; i++)
        if (registry[i]->id == id) return registry[i];
    return NULL;
}

sps_status sps_format_by_name(const char *name, sps_format *fmt)
{
    if (!name || !fmt) return SPS_ERR_ARG;
    for (int i = 0; i < NREG; i++)
        if (strcmp(registry[i]->name, name) == 0) { *fmt = registry[i]->id; return SPS_OK; }
    return SPS_ERR_ARG;
}

const char *sps_format_name(sps_format fmt)
{
    const sps_format_ops *o = sps_format_lookup(fmt);
    return o ? o->name : "?";
}

/* Built on first use into a static buffer.  The build is a critical section:
 * two threads (one context each, as the API allows) calling this for the first
 * time at once would otherwise both append to the buffer ("csr, coocsr, coo"). */
const char *sps_format_list(void)
{
    static char buf[512];
#pragma omp critical(sps_format_list)
    {
        if (!buf[0]) {
            for (int i = 0; i < NREG; i++) {
                if (i) strncat(buf, ", ", sizeof buf - strlen(buf) - 1);
                strncat(buf, registry[i]->name, sizeof buf - strlen(buf) - 1);
            }
        }
    }
    return buf;
}

const sps_option_desc *sps_format_options_desc(sps_format fmt, int *n)
{
    const sps_format_ops *o = sps_format_lookup(fmt);
    if (n) *n = o ? o->noptions : 0;
    return o ? o->options : NULL;
}

sps_status sps_format_options_create(sps_format fmt, sps_options *opt)
{
    const sps_format_ops *o = sps_format_lookup(fmt);
    if (!o || !opt) return SPS_ERR_ARG;
    return sps_options_create_ruled(o->name, o->options, o->noptions, o->rules, opt);
}

int sps_format_compound(sps_format fmt)
{
    const sps_format_ops *o = sps_format_lookup(fmt);
    return o && o->compound;
}

int sps_format_reproducible(sps_format fmt)
{
    const sps_format_ops *o = sps_format_lookup(fmt);
    return o && !o->spmv_atomic;
}
