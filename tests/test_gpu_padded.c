/* GPU tests of the padded formats (ELLPACK-R, SELL-C-sigma, RgCSR): the CUDA
 * backend against the CPU reference on the same inputs, every scalar type.
 *
 *   - build on the GPU (from device CSR, sps_matrix_convert; and from host CSR)
 *     gives a store bitwise equal to the CPU build: group pointers, row
 *     lengths, the row permutation (CUB radix sort vs the CPU merge sort),
 *     columns and values, padding included, the long-row list;
 *   - the GPU store exports back to the original CSR bitwise;
 *   - SpMV and SpMV^T on the GPU within rounding of the CPU (per-entry bound
 *     from sum |a_ij x_j|), outputs NaN-poisoned first, random (a, b) and
 *     b = 0 with y = NaN; SpMV run twice is bitwise identical (one thread per
 *     row, a block per long row); SpMV^T uses atomics
 *     and is only compared in tolerance; SpMV again with the lean kernel
 *     (one group of rows of at most 32 slots) forced off and forced on;
 *   - the blow-up refusal on the GPU carries the same message as on the CPU;
 *   - shapes: empty, 1x1, n x 1, 1 x n, empty rows across slice/group borders,
 *     a dense row, a power-law matrix of 30000 rows (multi-block grids, many
 *     sort windows, ELL width over several 1024-row chunks), columns too wide
 *     for 16 bits (per group, or only across the matrix: ELL), rows long
 *     enough on average for 2 and 4 threads a row, one sorted slice, 16- and 32-bit
 *     columns (index_bits 0 and 32) on every shape, poisson3d:20, and
 *     real matrices from SPS_MATRIX_DIR (argv[1]) up to 300k nonzeros.
 * Exit 77 (skipped) without a usable CUDA device.  Ends with "N passed, M failed". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "formats/format.h"
#include "formats/padded.h"
#include "testutil.h"
#include "test_gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context cpu, gpu;
static tu_rng rng;
static const sps_scalar all_types[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};

static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }
static int rnd(int k) { return k > 0 ? (int)(tu_rng_u64(&rng) % (uint64_t)k) : 0; }
/* ------------------------------------------------------------------ host CSR */
typedef struct {
    char name[352];
    int n, m;
    sps_index *rp, *ci;
} pattern;

static int cmp_idx(const void *a, const void *b)
{
    sps_index x = *(const sps_index *)a, y = *(const sps_index *)b;
    return (x > y) - (x < y);
}
static pattern pat_from_lengths(const char *name, int n, int m, const int *len)
{
    pattern p;
    snprintf(p.name, sizeof p.name, "%s", name);
    p.n = n;
    p.m = m;
    p.rp = tu_xcalloc((size_t)n + 1, sizeof(sps_index));
    for (int i = 0; i < n; i++) p.rp[i + 1] = p.rp[i] + len[i];
    p.ci = tu_xcalloc((size_t)p.rp[n], sizeof(sps_index));
    int *mark = tu_xcalloc((size_t)m, sizeof(int));
    for (int i = 0; i < n; i++) {
        sps_index *c = p.ci + p.rp[i];
        if (2 * len[i] > m) {
            int need = len[i], q = 0;
            for (int j = 0; j < m && need > 0; j++)
                if ((double)rnd(1 << 30) / (1 << 30) * (m - j) < need) { c[q++] = j; need--; }
        } else {
            for (int k = 0; k < len[i]; k++) {
                int j;
                do j = rnd(m); while (mark[j] == i + 1);
                mark[j] = i + 1;
                c[k] = j;
            }
            qsort(c, (size_t)len[i], sizeof *c, cmp_idx);
        }
    }
    free(mark);
    return p;
}
static void pat_free(pattern *p)
{
    free(p->rp);
    free(p->ci);
}

/* ------------------------------------------------------------------ comparisons */
typedef struct {
    int64_t *gp;
    sps_index *rl, *perm, *col, *lr, *cbase;
    uint16_t *col16;
    void *val; /* a value a slot: a dictionary's entries expanded */
    int ndict; /* the dictionary's values, 0 when plain */
    sps_pad_layout L;
} hstore;

static void fetch(sps_matrix B, hstore *h)
{
    const sps_pad_store *s = B->store;
    h->L = s->L;
    const size_t n = (size_t)s->L.n, sl = (size_t)s->L.slots, ng = (size_t)s->L.ngroups + 1;
    h->gp = tu_xcalloc(ng, 8);
    h->rl = tu_xcalloc(n, 4);
    h->perm = s->L.perm ? tu_xcalloc(n, 4) : NULL;
    h->col = s->L.col ? tu_xcalloc(sl, 4) : NULL;
    h->col16 = s->L.col16 ? tu_xcalloc(sl, 2) : NULL;
    h->cbase = s->L.cbase ? tu_xcalloc(ng, 4) : NULL;
    h->lr = tu_xcalloc((size_t)s->L.nlong, 4);
    h->val = tu_xcalloc(sl, ssz(B->t));
    sps_context c = B->ctx;
    const sps_copy_kind k = c->backend == SPS_BACKEND_CUDA ? SPS_COPY_D2H : SPS_COPY_H2H;
    sps_dcopy(c, h->gp, s->L.grp_ptr, ng * 8, k);
    sps_dcopy(c, h->rl, s->L.rl, n * 4, k);
    if (h->perm) sps_dcopy(c, h->perm, s->L.perm, n * 4, k);
    if (h->col) sps_dcopy(c, h->col, s->L.col, sl * 4, k);
    if (h->col16) sps_dcopy(c, h->col16, s->L.col16, sl * 2, k);
    if (h->cbase) sps_dcopy(c, h->cbase, s->L.cbase, (ng - 1) * 4, k);
    sps_dcopy(c, h->lr, s->L.long_rows, (size_t)s->L.nlong * 4, k);
    h->ndict = s->vd.dict ? s->vd.ndict : 0;
    if (s->vd.dict) {
        uint8_t *idx = tu_xcalloc(sl, 1);
        void *dict = tu_xcalloc((size_t)s->vd.ndict, ssz(B->t));
        sps_dcopy(c, idx, s->val, sl, k);
        sps_dcopy(c, dict, s->vd.dict, (size_t)s->vd.ndict * ssz(B->t), k);
        sps_vdict_expand(dict, idx, (int64_t)sl, (int)ssz(B->t), h->val);
        free(idx);
        free(dict);
    } else {
        sps_dcopy(c, h->val, s->val, sl * ssz(B->t), k);
    }
}
static void hstore_free(hstore *h)
{
    free(h->gp);
    free(h->rl);
    free(h->perm);
    free(h->col);
    free(h->col16);
    free(h->cbase);
    free(h->lr);
    free(h->val);
}
static int same_hstore(const hstore *a, const hstore *b, size_t ss, char *why, size_t wl)
{
    const sps_pad_layout *x = &a->L, *y = &b->L;
    if (x->n != y->n || x->h != y->h || x->nstored != y->nstored || x->ngroups != y->ngroups || x->slots != y->slots ||
        (a->perm == NULL) != (b->perm == NULL) || x->nlong != y->nlong || (a->col16 == NULL) != (b->col16 == NULL)) {
        snprintf(why, wl, "geometry (h %d/%d, groups %d/%d, slots %lld/%lld, column bits %d/%d)", (int)x->h, (int)y->h,
                 (int)x->ngroups, (int)y->ngroups, (long long)x->slots, (long long)y->slots, a->col16 ? 16 : 32,
                 b->col16 ? 16 : 32);
        return 0;
    }
    const size_t n = (size_t)x->n, sl = (size_t)x->slots;
    const char *bad = memcmp(a->gp, b->gp, ((size_t)x->ngroups + 1) * 8) ? "group pointers"
                      : memcmp(a->rl, b->rl, n * 4)                      ? "row lengths"
                      : a->perm && memcmp(a->perm, b->perm, n * 4)       ? "permutation"
                      : a->col && memcmp(a->col, b->col, sl * 4)         ? "columns"
                      : a->col16 && memcmp(a->col16, b->col16, sl * 2)   ? "16-bit columns"
                      : a->cbase && memcmp(a->cbase, b->cbase, (size_t)x->ngroups * 4) ? "group base columns"
                      : memcmp(a->lr, b->lr, (size_t)x->nlong * 4)       ? "long-row list"
                      : memcmp(a->val, b->val, sl * ss)                  ? "values"
                                                                         : NULL;
    if (bad) snprintf(why, wl, "%s", bad);
    return bad == NULL;
}

static int export_equal(sps_matrix B, const pattern *p, const void *val)
{
    const int64_t nnz = p->rp[p->n];
    sps_index *rp = tu_xcalloc((size_t)p->n + 1, sizeof *rp), *ci = tu_xcalloc((size_t)nnz, sizeof *ci);
    void *v = tu_xcalloc((size_t)nnz, ssz(B->t));
    int ok = sps_matrix_export_csr(B, rp, ci, v) == SPS_OK && memcmp(rp, p->rp, ((size_t)p->n + 1) * sizeof *rp) == 0 &&
             (nnz == 0 || (memcmp(ci, p->ci, (size_t)nnz * sizeof *ci) == 0 && memcmp(v, val, (size_t)nnz * ssz(B->t)) == 0));
    free(rp);
    free(ci);
    free(v);
    return ok;
}

/* Per-entry bound: 8 (count + 4) eps (|a| sum |a_ij x_j| + |b| |y0|): twice the
 * rounding bound of each side. */
static void bounds(sps_scalar t, const pattern *p, const void *val, int trans, sps_cplx a, const void *x, sps_cplx b,
                   const void *y0, double *bound)
{
    const int nout = trans ? p->m : p->n;
    double *sa = tu_xcalloc((size_t)nout, sizeof *sa);
    int *cnt = tu_xcalloc((size_t)nout, sizeof *cnt);
    for (int i = 0; i < p->n; i++)
        for (sps_index k = p->rp[i]; k < p->rp[i + 1]; k++) {
            const int o = trans ? p->ci[k] : i, in = trans ? i : p->ci[k];
            double vr, vi, xr, xi;
            tu_get(t, val, (size_t)k, &vr, &vi);
            tu_get(t, x, (size_t)in, &xr, &xi);
            sa[o] += (fabs(vr) + fabs(vi)) * (fabs(xr) + fabs(xi));
            cnt[o]++;
        }
    const int bz = b.re == 0.0 && b.im == 0.0;
    for (int o = 0; o < nout; o++) {
        double yr = 0, yi = 0;
        if (!bz) tu_get(t, y0, (size_t)o, &yr, &yi);
        bound[o] = 8.0 * (cnt[o] + 4) * tu_eps(t) * ((fabs(a.re) + fabs(a.im)) * sa[o] + (bz ? 0 : (fabs(b.re) + fabs(b.im)) * (fabs(yr) + fabs(yi)))) + 1e-300;
    }
    free(sa);
    free(cnt);
}

static int close_to(sps_scalar t, int nout, const void *g, const void *c, const double *bound, int *worst)
{
    for (int o = 0; o < nout; o++) {
        double gr, gi, cr, ci;
        tu_get(t, g, (size_t)o, &gr, &gi);
        tu_get(t, c, (size_t)o, &cr, &ci);
        if (!(fabs(gr - cr) + fabs(gi - ci) <= bound[o])) { *worst = o; return 0; }
    }
    return 1;
}


static void check_spmv(const char *what, sps_matrix Bc, sps_matrix Bg, const pattern *p, const void *val)
{
    const sps_scalar t = Bc->t;
    const size_t ss = ssz(t);
    for (int trans = 0; trans < 2; trans++) {
        const int nin = trans ? p->n : p->m, nout = trans ? p->m : p->n;
        void *xh = tu_xcalloc((size_t)nin, ss), *y0 = tu_xcalloc((size_t)nout, ss), *yc = tu_xcalloc((size_t)nout, ss),
             *yg = tu_xcalloc((size_t)nout, ss), *yg2 = tu_xcalloc((size_t)nout, ss);
        double *bound = tu_xcalloc((size_t)nout, sizeof *bound);
        tu_fill_random(&rng, t, (size_t)nin, xh);
        for (int c = 0; c < 2; c++) {
            const sps_cplx a = sps_cplx_make(tu_rng_range(&rng, -2, 2), tu_rng_range(&rng, -2, 2));
            const sps_cplx b = c == 1 ? sps_cplx_make(0, 0) : sps_cplx_make(tu_rng_range(&rng, -2, 2), tu_rng_range(&rng, -2, 2));
            if (c == 1) tu_fill_nan(t, (size_t)nout, y0);
            else tu_fill_random(&rng, t, (size_t)nout, y0);
            tu_fill_nan(t, (size_t)nout, yc); /* poison the host copies too */
            tu_fill_nan(t, (size_t)nout, yg);
            if (!TU_OK(cpu, gpu_run_spmv(Bc, trans, a, xh, nin, b, y0, nout, yc))) continue;
            if (!TU_OK(gpu, gpu_run_spmv(Bg, trans, a, xh, nin, b, y0, nout, yg))) continue;
            bounds(t, p, val, trans, a, xh, b, y0, bound);
            int worst = -1;
            TU_CHECK(close_to(t, nout, yg, yc, bound, &worst), "%s [%s]: GPU SpMV%s (case %d) entry %d differs from the CPU",
                     what, tn(t), trans ? "^T" : "", c, worst);
            if (!trans && TU_OK(gpu, gpu_run_spmv(Bg, trans, a, xh, nin, b, y0, nout, yg2)))
                TU_CHECK(nout == 0 || memcmp(yg, yg2, (size_t)nout * ss) == 0, "%s [%s]: GPU SpMV not reproducible", what, tn(t));
            /* both SpMV kernels wherever the lean one can run (one group of rows of at most 32
               slots; the default picks by a rule): never, and always */
            for (int lean = 1; lean <= 2 && !trans; lean++) {
                sps_launch_variant lv;
                memset(&lv, 0, sizeof lv);
                lv.pad_lean = lean;
                tu_fill_nan(t, (size_t)nout, yg2);
                if (TU_OK(gpu, sps_matrix_set_launch_variant(Bg, &lv)) &&
                    TU_OK(gpu, gpu_run_spmv(Bg, trans, a, xh, nin, b, y0, nout, yg2)))
                    TU_CHECK(close_to(t, nout, yg2, yc, bound, &worst),
                             "%s [%s]: GPU SpMV with pad_lean=%d (case %d) entry %d differs from the CPU", what, tn(t),
                             lean, c, worst);
                memset(&lv, 0, sizeof lv);
                TU_OK(gpu, sps_matrix_set_launch_variant(Bg, &lv));
            }
        }
        free(xh);
        free(y0);
        free(yc);
        free(yg);
        free(yg2);
        free(bound);
    }
}

/* ------------------------------------------------------------------ one case */
typedef struct {
    const char *name;
    sps_format fmt;
    int C, sigma, G, sort, bits; /* bits: index_bits */
    const char *values;          /* the option values, NULL: its default (auto) */
} config;

static void *make_values(sps_scalar t, int64_t nnz)
{
    void *v = tu_xcalloc((size_t)nnz, ssz(t));
    tu_fill_random(&rng, t, (size_t)nnz, v);
    /* explicit zeros of both signs */
    for (int64_t k = 0; k < nnz; k += 13) {
        const double z = (k / 13) % 2 ? -0.0 : 0.0;
        switch (t) {
        case SPS_F32: ((float *)v)[k] = (float)z; break;
        case SPS_F64: ((double *)v)[k] = z; break;
        case SPS_C32: ((float *)v)[2 * k] = (float)z; ((float *)v)[2 * k + 1] = (float)z; break;
        default: ((double *)v)[2 * k] = z; ((double *)v)[2 * k + 1] = z; break;
        }
    }
    return v;
}

static void check_case(const pattern *p, const config *cf, sps_scalar t, const void *val_in)
{
    char what[512];
    snprintf(what, sizeof what, "%s on %s", cf->name, p->name);
    const int few = cf->values && strcmp(cf->values, "dict") == 0;
    void *val = val_in ? (void *)val_in : few ? tu_pool_values(&rng, t, p->rp[p->n], 1 + rnd(60)) : make_values(t, p->rp[p->n]);
    sps_matrix Ac = NULL, Ag = NULL, Bc = NULL, Bg = NULL, Bh = NULL;
    /* the configuration's parameters (0: the default), those the format declares */
    sps_options o = tu_fopts(cf->fmt, "force", "true", NULL);
    char v[32];
    const struct { const char *name; int value; } set[] = {
        {"slice-height", cf->C}, {"sort-window", cf->sigma}, {"group-size", cf->G}, {"index-bits", cf->bits}};
    for (int k = 0; k < 4; k++) {
        snprintf(v, sizeof v, "%d", set[k].value);
        if (set[k].value && sps_options_get(o, set[k].name)) TU_CHECK(sps_options_set(o, set[k].name, v) == SPS_OK, "%s", v);
    }
    if (cf->sort && sps_options_get(o, "sort-rows")) sps_options_set(o, "sort-rows", "true");
    if (cf->values) TU_CHECK(sps_options_set(o, "values", cf->values) == SPS_OK, "values %s", cf->values);
    if (!TU_OK(cpu, sps_matrix_from_csr(cpu, p->n, p->m, p->rp, p->ci, val, t, &Ac)) ||
        !TU_OK(gpu, sps_matrix_from_csr(gpu, p->n, p->m, p->rp, p->ci, val, t, &Ag)))
        goto done;
    if (!TU_OK(cpu, sps_matrix_convert(Ac, cf->fmt, o, &Bc)) || !TU_OK(gpu, sps_matrix_convert(Ag, cf->fmt, o, &Bg)))
        goto done;
    int64_t auto_bytes = 0; /* values auto: the bytes the GPU's dictionary saves against the CPU's plain values */
    {
        hstore hc, hg;
        fetch(Bc, &hc);
        fetch(Bg, &hg);
        char why[160] = "";
        TU_CHECK(same_hstore(&hc, &hg, ssz(t), why, sizeof why), "%s [%s]: GPU build differs from the CPU build: %s", what,
                 tn(t), why);
        /* values dict: the same table on both backends; auto: a table on the GPU only for large stores */
        const int dict = cf->values && strcmp(cf->values, "dict") == 0 && hc.L.slots > 0;
        const int auto_gpu = !cf->values && hc.L.slots >= SPS_VDICT_AUTO_SLOTS && hg.ndict > 0;
        TU_CHECK(dict ? hc.ndict > 0 && hc.ndict == hg.ndict : hc.ndict == 0 && (hg.ndict == 0 || auto_gpu),
                 "%s [%s]: dictionaries of %d (CPU) and %d (GPU) values", what, tn(t), hc.ndict, hg.ndict);
        if (auto_gpu) auto_bytes = hc.L.slots * ((int64_t)ssz(t) - 1) - (int64_t)hg.ndict * (int64_t)ssz(t);
        hstore_free(&hg);
        /* the host-CSR path on the GPU */
        sps_csr_host h;
        memset(&h, 0, sizeof h);
        if (TU_OK(cpu, Ac->ops->to_csr(Ac, &h)) && TU_OK(gpu, sps_matrix_from_csr_host(gpu, &h, cf->fmt, o, SPS_SYM_GENERAL, &Bh))) {
            fetch(Bh, &hg);
            TU_CHECK(same_hstore(&hc, &hg, ssz(t), why, sizeof why), "%s [%s]: GPU host-path build differs: %s", what, tn(t), why);
            hstore_free(&hg);
        }
        sps_csr_host_free(&h);
        hstore_free(&hc);
    }
    TU_CHECK(export_equal(Bg, p, val), "%s [%s]: GPU CSR -> format -> CSR not bitwise exact", what, tn(t));
    {
        sps_matrix_info_t ic, ig;
        sps_matrix_info(Bc, &ic);
        sps_matrix_info(Bg, &ig);
        const int want_dict = auto_bytes != 0 || (few && ic.stored_entries > 0); /* few: values dict */
        TU_CHECK((int64_t)ic.bytes - auto_bytes == (int64_t)ig.bytes && ic.stored_entries == ig.stored_entries &&
                     ig.backend == SPS_BACKEND_CUDA && (ig.value_dict > 0) == want_dict,
                 "%s [%s]: GPU info differs (%zu bytes, CPU %zu; value_dict %d)", what, tn(t), ig.bytes, ic.bytes,
                 ig.value_dict);
    }
    check_spmv(what, Bc, Bg, p, val);
done:
    sps_options_destroy(o);
    sps_matrix_destroy(Bh);
    sps_matrix_destroy(Bc);
    sps_matrix_destroy(Bg);
    sps_matrix_destroy(Ac);
    sps_matrix_destroy(Ag);
    if (!val_in) free(val);
}

static const config configs[] = {
    {"ell", SPS_FMT_ELL, 0, 0, 0, 0, 0, NULL},
    {"sell C=32", SPS_FMT_SELL, 32, 0, 0, 0, 0, NULL},
    {"sell C=16", SPS_FMT_SELL, 16, 0, 0, 0, 0, NULL},
    {"sell C=32 sigma=64", SPS_FMT_SELL, 32, 64, 0, 0, 0, NULL},
    {"sell C=16 sigma=1024", SPS_FMT_SELL, 16, 1024, 0, 0, 0, NULL},
    {"sell C=32 sigma=2^30", SPS_FMT_SELL, 32, 1 << 30, 0, 0, 0, NULL},
    {"rgcsr G=128", SPS_FMT_RGCSR, 0, 0, 128, 0, 0, NULL},
    {"rgcsr G=32", SPS_FMT_RGCSR, 0, 0, 32, 0, 0, NULL},
    {"rgcsr G=100", SPS_FMT_RGCSR, 0, 0, 100, 0, 0, NULL},
    {"rgcsr G=256 sorted", SPS_FMT_RGCSR, 0, 0, 256, 1, 0, NULL},
    {"rgcsr G=128 sorted", SPS_FMT_RGCSR, 0, 0, 128, 1, 0, NULL},
    {"ell index_bits 32", SPS_FMT_ELL, 0, 0, 0, 0, 32, NULL},
    {"sell C=32 sigma=64 index_bits 32", SPS_FMT_SELL, 32, 64, 0, 0, 32, NULL},
    {"rgcsr G=100 index_bits 32", SPS_FMT_RGCSR, 0, 0, 100, 0, 32, NULL},
    {"ell values dict", SPS_FMT_ELL, 0, 0, 0, 0, 0, "dict"},
    {"sell C=32 sigma=64 values dict", SPS_FMT_SELL, 32, 64, 0, 0, 0, "dict"},
    {"sell C=16 index_bits 32 values dict", SPS_FMT_SELL, 16, 0, 0, 0, 32, "dict"},
    {"rgcsr G=128 sorted values dict", SPS_FMT_RGCSR, 0, 0, 128, 1, 0, "dict"},
};
#define NCONF ((int)(sizeof configs / sizeof configs[0]))

static pattern shape(int s)
{
    static const struct { const char *name; int n, m; } sh[] = {
        {"0x0", 0, 0},        {"no entries 50x40", 50, 40},      {"1x1", 1, 1},       {"77x1", 77, 1},
        {"1x300 dense", 1, 300}, {"empty runs 300x300", 300, 300}, {"dense row 200x200", 200, 200},
        {"all in column 7", 150, 40}, {"random 1000x700", 1000, 700}, {"power law 30000", 30000, 30000},
        {"random 300x200000", 300, 200000}, {"band of 3000x150000", 3000, 150000},
        {"rows of 24-56, 3000x3000", 3000, 3000}, {"rows of 100-200, 700x5000", 700, 5000},
        {"30 rows of 0-11", 30, 40},  {"rows of 9-16, 500x500", 500, 500}};
    const int n = sh[s].n, m = sh[s].m;
    int *len = tu_xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        switch (s) {
        case 0: case 1: len[i] = 0; break;
        case 2: len[i] = 1; break;
        case 3: len[i] = rnd(2); break;
        case 4: len[i] = m; break;
        case 5: len[i] = ((i >= 14 && i < 18) || (i >= 30 && i < 35) || (i >= 96 && i < 104) || (i >= 126 && i < 131) ||
                          (i >= 250 && i < 260) || i >= 293) ? 0 : 1 + rnd(8); break;
        case 6: len[i] = i == 77 ? m : rnd(4); break;
        case 7: len[i] = 1; break;
        case 8: len[i] = rnd(21); break;
        case 10: len[i] = rnd(9); break;
        case 11: len[i] = 1 + rnd(6); break;
        case 12: len[i] = 24 + rnd(33); break;  /* mean >= 32: 2 threads a row (pad_split) */
        case 13: len[i] = 100 + rnd(101); break; /* mean >= 128: 4 threads a row */
        case 14: len[i] = rnd(12); break;       /* one slice: SELL's lean product, with a sort window */
        case 15: len[i] = 9 + rnd(8); break;    /* the lean kernel's 16 slots */
        case 9: {
            const double u = 1.0 - tu_rng_uniform(&rng);
            const double k = 2.0 * pow(u, -1.0 / 1.5);
            len[i] = k > 3000 ? 3000 : (int)k;
        }
        }
    }
    pattern p = pat_from_lengths(sh[s].name, n, m, len);
    if (s == 7)
        for (int k = 0; k < p.rp[n]; k++) p.ci[k] = 7;
    /* 16-bit columns per SELL/RgCSR group, 32-bit in ELL (the matrix spans 150000 columns); shape 10 is 32-bit
     * everywhere (random columns of 200000) */
    if (s == 11)
        for (int i = 0; i < n; i++)
            for (sps_index k = p.rp[i]; k < p.rp[i + 1]; k++) p.ci[k] = 50 * i + 7 * (k - p.rp[i]);
    free(len);
    return p;
}
#define NSHAPES 16

static void test_refusal(void)
{
    const int n = 1500;
    int *len = tu_xcalloc(n, sizeof(int));
    for (int i = 0; i < n; i++) len[i] = i == 3 ? n : 1;
    pattern p = pat_from_lengths("dense row 1500", n, n, len);
    void *val = make_values(SPS_F64, p.rp[n]);
    sps_matrix Ac = NULL, Ag = NULL, Bc = NULL, Bg = NULL;
    if (TU_OK(cpu, sps_matrix_from_csr(cpu, n, n, p.rp, p.ci, val, SPS_F64, &Ac)) &&
        TU_OK(gpu, sps_matrix_from_csr(gpu, n, n, p.rp, p.ci, val, SPS_F64, &Ag))) {
        sps_status sc = sps_matrix_convert(Ac, SPS_FMT_ELL, NULL, &Bc), sg = sps_matrix_convert(Ag, SPS_FMT_ELL, NULL, &Bg);
        TU_CHECK(sc == SPS_ERR_ARG && sg == SPS_ERR_ARG && !Bc && !Bg &&
                     strcmp(sps_context_error(cpu), sps_context_error(gpu)) == 0 && strstr(sps_context_error(gpu), "bytes"),
                 "GPU refusal: %s '%s' (CPU '%s')", sps_status_name(sg), sps_context_error(gpu), sps_context_error(cpu));
    }
    sps_matrix_destroy(Ac);
    sps_matrix_destroy(Ag);
    free(val);
    free(len);
    pat_free(&p);
    sps_context_clear_error(cpu);
    sps_context_clear_error(gpu);
}

static void test_generated(void)
{
    for (int ti = 0; ti < 4; ti++) {
        sps_matrix A = NULL;
        if (!TU_OK(cpu, sps_matrix_generate(cpu, "poisson3d:20", all_types[ti], &A))) continue;
        pattern p;
        snprintf(p.name, sizeof p.name, "poisson3d:20");
        p.n = A->n;
        p.m = A->m;
        p.rp = tu_xcalloc((size_t)p.n + 1, sizeof(sps_index));
        p.ci = tu_xcalloc((size_t)A->nnz, sizeof(sps_index));
        void *val = tu_xcalloc((size_t)A->nnz, ssz(A->t));
        TU_OK(cpu, sps_matrix_export_csr(A, p.rp, p.ci, val));
        for (int c = 0; c < NCONF; c += 3) check_case(&p, &configs[c], all_types[ti], val);
        free(val);
        pat_free(&p);
        sps_matrix_destroy(A);
    }
}

/* The matrix's values as a pattern and an array (host). */
static void *pattern_of(sps_matrix A, pattern *p, const char *name)
{
    snprintf(p->name, sizeof p->name, "%s", name);
    p->n = A->n;
    p->m = A->m;
    p->rp = tu_xcalloc((size_t)p->n + 1, sizeof(sps_index));
    p->ci = tu_xcalloc((size_t)A->nnz, sizeof(sps_index));
    void *val = tu_xcalloc((size_t)A->nnz, ssz(A->t));
    TU_OK(A->ctx, sps_matrix_export_csr(A, p->rp, p->ci, val));
    return val;
}

/* values auto: a GPU store of SPS_VDICT_AUTO_SLOTS slots or more whose values allow takes a
 * dictionary, products as the CPU's plain store; the limit: 256 distinct values take one, 257
 * are refused, on both backends (200000 entries: the GPU's blocks meet in its global table). */
static void test_dict(void)
{
    for (int ti = 0; ti < 2; ti++) {
        sps_matrix A = NULL, B = NULL;
        if (!TU_OK(cpu, sps_matrix_generate(cpu, "poisson3d:64", all_types[ti], &A))) continue;
        pattern p;
        void *val = pattern_of(A, &p, "poisson3d:64");
        const config ell = {"ell (values auto)", SPS_FMT_ELL, 0, 0, 0, 0, 0, NULL};
        check_case(&p, &ell, all_types[ti], val);
        sps_matrix Ag = NULL;
        if (TU_OK(gpu, sps_matrix_from_csr(gpu, p.n, p.m, p.rp, p.ci, val, all_types[ti], &Ag)) &&
            TU_OK(gpu, sps_matrix_convert(Ag, SPS_FMT_ELL, NULL, &B))) {
            const sps_pad_store *st = B->store;
            TU_CHECK(st->L.slots >= SPS_VDICT_AUTO_SLOTS && st->vd.dict && st->vd.ndict == 3,
                     "poisson3d:64 [%s] ELL on the GPU: %lld slots, dictionary of %d values (want -1, 0, 6)",
                     tn(all_types[ti]), (long long)st->L.slots, st->vd.ndict);
        }
        sps_matrix_destroy(B);
        sps_matrix_destroy(Ag);
        sps_matrix_destroy(A);
        free(val);
        pat_free(&p);
    }
    const int n = 200000;
    int *len = tu_xcalloc(n, sizeof(int));
    for (int i = 0; i < n; i++) len[i] = 1;
    pattern p = pat_from_lengths("diagonal 200000", n, n, len);
    double *val = tu_xcalloc(n, sizeof *val);
    for (int k = 256; k <= 257; k++) {
        for (int i = 0; i < n; i++) {
            p.ci[i] = i;
            val[i] = 1.0 + (double)((i * 7919) % k); /* k distinct values, spread over the rows */
        }
        const config dict = {"ell values dict", SPS_FMT_ELL, 0, 0, 0, 0, 0, "dict"};
        if (k == 256) {
            check_case(&p, &dict, SPS_F64, val);
            continue;
        }
        sps_options o = tu_fopts(SPS_FMT_ELL, "values", "dict", NULL);
        const sps_context cs[2] = {cpu, gpu};
        for (int b = 0; b < 2; b++) {
            sps_matrix A = NULL, B = (sps_matrix)&rng;
            if (!TU_OK(cs[b], sps_matrix_from_csr(cs[b], n, n, p.rp, p.ci, val, SPS_F64, &A))) continue;
            const sps_status st = sps_matrix_convert(A, SPS_FMT_ELL, o, &B);
            TU_CHECK(st == SPS_ERR_ARG && B == NULL && strstr(sps_context_error(cs[b]), "more than 256 distinct"),
                     "257 values, values dict, %s: %s '%s'", b ? "GPU" : "CPU", sps_status_name(st),
                     sps_context_error(cs[b]));
            sps_context_clear_error(cs[b]);
            sps_matrix_destroy(A);
        }
        sps_options_destroy(o);
    }
    free(val);
    free(len);
    pat_free(&p);
}

static void test_corpus(const char *dir)
{
    char path[4096], line[8192];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    int files = 0;
    while (fgets(line, sizeof line, f)) {
        char name[256], group[64];
        long rows, cols, nnzf;
        if (sscanf(line, "%255[^\t]\t%63[^\t]\t%ld\t%ld\t%ld", name, group, &rows, &cols, &nnzf) != 5 || nnzf > 300000) continue;
        snprintf(path, sizeof path, "%s/%s/%s.mtx.gz", dir, group, name);
        const sps_scalar t = strcmp(group, "complex") == 0 ? SPS_C64 : SPS_F64;
        sps_matrix A = NULL;
        if (sps_matrix_read_mtx(cpu, path, t, &A) != SPS_OK) { sps_context_clear_error(cpu); continue; }
        if (A->nnz > 300000) { sps_matrix_destroy(A); continue; }
        pattern p;
        snprintf(p.name, sizeof p.name, "%s/%s", group, name);
        p.n = A->n;
        p.m = A->m;
        p.rp = tu_xcalloc((size_t)p.n + 1, sizeof(sps_index));
        p.ci = tu_xcalloc((size_t)A->nnz, sizeof(sps_index));
        void *val = tu_xcalloc((size_t)A->nnz, ssz(t));
        TU_OK(cpu, sps_matrix_export_csr(A, p.rp, p.ci, val));
        const config cs[] = {{"sell C=32 sigma=1024", SPS_FMT_SELL, 32, 1024, 0, 0, 0, NULL},
                             {"rgcsr G=128 sorted", SPS_FMT_RGCSR, 0, 0, 128, 1, 0, NULL}};
        for (int k = 0; k < 2; k++) check_case(&p, &cs[k], t, val);
        files++;
        free(val);
        pat_free(&p);
        sps_matrix_destroy(A);
    }
    fclose(f);
    printf("corpus: %d files compared GPU vs CPU\n", files);
}

int main(int argc, char **argv)
{
    const int rc = gpu_setup("test_gpu_padded");
    if (rc) return rc;
    cpu = g_cpu;
    gpu = g_gpu;
    tu_rng_seed(&rng, 77031);
    for (int s = 0; s < NSHAPES; s++) {
        pattern p = shape(s);
        for (int c = 0; c < NCONF; c++) {
            if (s == 9 && configs[c].fmt == SPS_FMT_ELL) continue; /* power law: 90M slots, ELL is for even rows */
            for (int ti = 0; ti < 4; ti++) check_case(&p, &configs[c], all_types[ti], NULL);
        }
        pat_free(&p);
    }
    test_generated();
    test_dict();
    test_refusal();
    const char *dir = tu_matrix_dir(argc, argv, 1);
    if (dir) test_corpus(dir);
    else printf("corpus: SPS_MATRIX_DIR not set, skipped\n");
    gpu_teardown();
    return tu_finish();
}
