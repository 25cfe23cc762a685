/* Unit tests of the padded formats on the CPU backend: ELLPACK-R (ell),
 * SELL-C-sigma (sell), RgCSR (rgcsr); formats/padded.[ch], formats/ell.c,
 * sell.c, rgcsr.c, kernels/cpu/padded.[c|inc].
 *
 * For every format configuration x scalar type x shape (random, empty rows in
 * runs across slice/group borders, one dense row, 1x1, n x 1, 1 x n, all
 * entries in one column, no entries, 0 x 0, row counts not a multiple of
 * C or G, long rows every 32nd row):
 *   - the build from backend CSR (sps_matrix_convert) and from host CSR give
 *     the same store, and export back to CSR bitwise (explicit +0/-0 kept);
 *   - the store follows the documented layout, checked against an
 *     independent computation (ELL slot k*ld + i; SELL slice_ptr + k*C + r%C;
 *     RgCSR groupPointers + k*Gg + r%G with the paper's shorter last group;
 *     the stable decreasing-length permutation; padding col -1, value +0;
 *     the list of long rows: longer than max(64, 4 x mean row length));
 *   - sps_matrix_info: stored entries, bytes (independent formula), fill %;
 *   - SpMV: bitwise equal to a same-order sum in T (what csr_spmv computes),
 *     and within rounding of a long double reference; SpMV^T within rounding
 *     and independent of the thread count; NaN-poisoned y with beta = 0.
 * Then the options (every documented value, the invalid ones), the blow-up
 * refusal (message contents) and force, the fill of poisson3d:32 and of a
 * power-law matrix (printed), and the real matrices of SPS_MATRIX_DIR (argv[1])
 * up to 300k nonzeros.  Ends with "N passed, M failed". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "formats/format.h"
#include "formats/padded.h"
#include "testutil.h"

#include <complex.h>
#ifndef CMPLX /* glibc defines CMPLX/CMPLXF only for GCC (__builtin_complex): clang's builds (fuzzing) */
#define CMPLX(x, y) ((double _Complex){(double)(x), (double)(y)})
#define CMPLXF(x, y) ((float _Complex){(float)(x), (float)(y)})
#endif
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

static sps_context ctx;
static tu_rng rng;

static int cplx(sps_scalar t) { return sps_scalar_is_complex(t); }
static size_t ssz(sps_scalar t) { return sps_scalar_size(t); }
static const char *tn(sps_scalar t) { return sps_scalar_name(t); }
static int contains(const char *hay, const char *needle) { return hay && needle && strstr(hay, needle) != NULL; }

static int rnd(int k) { return k > 0 ? (int)(tu_rng_u64(&rng) % (uint64_t)k) : 0; }
static double dyadic(void)
{
    double v = (double)(rnd(512) - 256) / 64.0;
    return v == 0.0 ? 0.5 : v;
}

/* ------------------------------------------------------------------ host CSR patterns */
typedef struct {
    const char *name;
    int n, m;
    sps_index *rp, *ci;
} pattern;

static int cmp_idx(const void *a, const void *b)
{
    sps_index x = *(const sps_index *)a, y = *(const sps_index *)b;
    return (x > y) - (x < y);
}

/* Random distinct sorted columns for rows of the given lengths. */
static pattern pat_from_lengths(const char *name, int n, int m, const int *len)
{
    pattern p = {name, n, m, tu_xcalloc((size_t)n + 1, sizeof(sps_index)), NULL};
    for (int i = 0; i < n; i++) p.rp[i + 1] = p.rp[i] + len[i];
    p.ci = tu_xcalloc((size_t)p.rp[n], sizeof(sps_index));
    int *mark = tu_xcalloc((size_t)m, sizeof(int));
    for (int i = 0; i < n; i++) {
        sps_index *c = p.ci + p.rp[i];
        if (2 * len[i] > m) { /* selection sampling (Knuth's algorithm S): in order */
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

enum { SH_RANDOM, SH_BORDERS, SH_DENSE_ROW, SH_1X1, SH_NX1, SH_1XN, SH_ONE_COL, SH_ZERO, SH_EMPTY, SH_N33, SH_N257,
       SH_LONG32, SH_WIDE, SH_BANDWIDE, SH_COUNT };
static const char *const shape_names[SH_COUNT] = {"random 1000x700", "empty runs at borders", "one dense row", "1x1",
                                                  "77x1", "1x500 dense", "all in one column", "no entries 50x40",
                                                  "0x0", "33x33", "257x100", "long row every 32nd",
                                                  "300x200000 random", "band of 3000x150000"};

static pattern make_shape(int s)
{
    int n, m;
    const int sizes[SH_COUNT][2] = {{1000, 700}, {300, 300}, {200, 200}, {1, 1}, {77, 1}, {1, 500},
                                    {150, 40},   {50, 40},   {0, 0},     {33, 33}, {257, 100}, {512, 300},
                                    {300, 200000}, {3000, 150000}};
    n = sizes[s][0];
    m = sizes[s][1];
    int *len = tu_xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        switch (s) {
        case SH_RANDOM: len[i] = rnd(21); break;
        case SH_BORDERS: {
            /* runs of empty rows across the 16/32/64/100/128/256 borders, and at the end */
            const int lo[] = {14, 30, 60, 96, 126, 250, 293};
            const int hi[] = {18, 35, 70, 104, 131, 260, 300};
            len[i] = 1 + rnd(8);
            for (int r = 0; r < 7; r++)
                if (i >= lo[r] && i < hi[r]) len[i] = 0;
            break;
        }
        case SH_DENSE_ROW: len[i] = i == 77 ? m : rnd(4); break;
        case SH_1X1: len[i] = 1; break;
        case SH_NX1: len[i] = rnd(2); break;
        case SH_1XN: len[i] = m; break;
        case SH_ONE_COL: len[i] = 1; break;
        case SH_ZERO: case SH_EMPTY: len[i] = 0; break;
        case SH_N33: len[i] = rnd(6); break;
        case SH_N257: len[i] = rnd(13); break;
        case SH_LONG32: len[i] = i % 32 == 5 ? 100 + rnd(50) : 1 + rnd(2); break;
        case SH_WIDE: len[i] = rnd(9); break;
        case SH_BANDWIDE: len[i] = 1 + rnd(6); break;
        }
    }
    pattern p = pat_from_lengths(shape_names[s], n, m, len);
    if (s == SH_ONE_COL)
        for (int k = 0; k < p.rp[n]; k++) p.ci[k] = 7;
    /* the columns of every group of up to 256 rows span < 65535 (16-bit columns in
     * SELL and RgCSR), those of the matrix do not (32-bit in ELL) */
    if (s == SH_BANDWIDE)
        for (int i = 0; i < n; i++)
            for (sps_index k = p.rp[i]; k < p.rp[i + 1]; k++) p.ci[k] = 50 * i + 7 * (k - p.rp[i]);
    free(len);
    return p;
}

/* Values: dyadic, with explicit +0 and -0 entries sprinkled in. */
static void *make_values(sps_scalar t, int64_t nnz)
{
    void *v = tu_xcalloc((size_t)nnz, ssz(t));
    for (int64_t k = 0; k < nnz; k++) {
        const int z = rnd(16);
        double re = z == 0 ? 0.0 : z == 1 ? -0.0 : dyadic(), im = cplx(t) ? (z == 2 ? -0.0 : dyadic()) : 0.0;
        tu_put(t, v, (size_t)k, re, im);
    }
    return v;
}

/* The bits of slot q's value: val[q], or its dictionary entry. */
static const void *slot_value(const sps_pad_store *s, int64_t q, size_t ss)
{
    if (s->vd.dict) return (const char *)s->vd.dict + (size_t)((const uint8_t *)s->val)[q] * ss;
    return (const char *)s->val + (size_t)q * ss;
}

/* ------------------------------------------------------------------ format configurations */
/* The parameters these tests vary, 0 meaning the default, and their keyed
 * options (spsolve/options.h) for format f: only the names f declares are set. */
typedef struct {
    int slice_height, sort_window, group_size, sort_rows;
    double max_fill;
    int force, index_bits;
    const char *values; /* the option values, or NULL */
} popts;

static char set_error[512]; /* why the last bag_of refused a value, else "" */

static int set_if(sps_options b, int given, const char *name, const char *fmt, double v)
{
    char s[64];
    if (!given || !sps_options_get(b, name)) return 1;
    if (strcmp(fmt, "%b") == 0) snprintf(s, sizeof s, "%s", v != 0 ? "true" : "false");
    else snprintf(s, sizeof s, fmt, v);
    if (sps_options_set(b, name, s) == SPS_OK) return 1;
    snprintf(set_error, sizeof set_error, "%s", sps_options_error(b));
    return 0;
}

/* *b: the options (NULL for o NULL); SPS_ERR_ARG when a value is refused (set_error). */
static sps_status bag_of(sps_format f, const popts *o, sps_options *b)
{
    set_error[0] = 0;
    *b = NULL;
    if (!o) return SPS_OK;
    if (!TU_CHECK(sps_format_options_create(f, b) == SPS_OK, "options of format %d", (int)f)) return SPS_ERR_ARG;
    if (set_if(*b, o->slice_height != 0, "slice-height", "%.0f", o->slice_height) &&
        set_if(*b, o->sort_window != 0, "sort-window", "%.0f", o->sort_window) &&
        set_if(*b, o->group_size != 0, "group-size", "%.0f", o->group_size) &&
        set_if(*b, o->sort_rows != 0, "sort-rows", "%b", o->sort_rows) &&
        set_if(*b, o->max_fill != 0, "max-fill", "%.17g", o->max_fill) &&
        set_if(*b, o->force != 0, "force", "%b", o->force) &&
        set_if(*b, o->index_bits != 0, "index-bits", "%.0f", o->index_bits) &&
        (!o->values || sps_options_set(*b, "values", o->values) == SPS_OK))
        return SPS_OK;
    if (!set_error[0]) snprintf(set_error, sizeof set_error, "%s", sps_options_error(*b));
    sps_options_destroy(*b);
    *b = NULL;
    return SPS_ERR_ARG;
}

/* sps_matrix_convert with the parameters o. */
static sps_status convert(sps_matrix A, sps_format f, const popts *o, sps_matrix *B)
{
    sps_options b;
    *B = NULL;
    SPS_CHECK(bag_of(f, o, &b));
    const sps_status s = sps_matrix_convert(A, f, b, B);
    sps_options_destroy(b);
    return s;
}

typedef struct {
    const char *name;
    sps_format fmt;
    popts o;
} config;

static config cfg(const char *name, sps_format f, int C, int sigma, int G, int sort)
{
    config c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.fmt = f;
    c.o.slice_height = C;
    c.o.sort_window = sigma;
    c.o.group_size = G;
    c.o.sort_rows = sort;
    return c;
}
static config cfg_bits(config c, int bits)
{
    c.o.index_bits = bits;
    return c;
}
static config cfg_values(config c, const char *values)
{
    c.o.values = values;
    return c;
}
static int wants_dict(const config *c) { return c->o.values && strcmp(c->o.values, "dict") == 0; }

/* ------------------------------------------------------------------ the expected layout */
typedef struct {
    int kind;          /* SPS_PAD_* */
    int n, h, nstored, ngroups, permuted;
    sps_index *perm;   /* storage row -> original row */
    sps_index *len;    /* storage order */
    int64_t *ptr;      /* ngroups + 1 */
    int64_t slots;
    int long_len, nlong; /* rows longer than long_len = max(64, 4 ceil(nnz / n)) */
    int narrow;        /* 16-bit columns: index_bits 16, or 0 and every group's span <= 65534 */
    sps_index *cbase;  /* ngroups: a group's smallest column (0 when it has none) */
} expected;

static const sps_index *g_len_for_sort;
static int cmp_desc_len(const void *a, const void *b)
{
    sps_index x = *(const sps_index *)a, y = *(const sps_index *)b;
    if (g_len_for_sort[x] != g_len_for_sort[y]) return g_len_for_sort[x] > g_len_for_sort[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* The layout each format documents, computed from scratch. */
static expected expect_layout(const pattern *p, const config *c)
{
    expected e;
    memset(&e, 0, sizeof e);
    const int n = p->n;
    e.n = n;
    sps_index *olen = tu_xcalloc((size_t)n, sizeof *olen);
    for (int i = 0; i < n; i++) olen[i] = p->rp[i + 1] - p->rp[i];
    int window = 0;
    if (c->fmt == SPS_FMT_ELL) {
        e.kind = SPS_PAD_ELL;
        e.nstored = (n + 31) / 32 * 32;
        e.h = e.nstored > 0 ? e.nstored : 32;
        e.ngroups = 1;
    } else if (c->fmt == SPS_FMT_SELL) {
        e.kind = SPS_PAD_SELL;
        e.h = c->o.slice_height ? c->o.slice_height : 32;
        e.ngroups = (n + e.h - 1) / e.h;
        e.nstored = e.ngroups * e.h;
        window = c->o.sort_window > 1 ? c->o.sort_window : 0;
    } else {
        e.kind = SPS_PAD_RGCSR;
        e.h = c->o.group_size ? c->o.group_size : 128;
        e.ngroups = (n + e.h - 1) / e.h;
        e.nstored = n;
        window = c->o.sort_rows ? (n > 0 ? n : 1) : 0;
    }
    e.permuted = window > 0;
    e.perm = tu_xcalloc((size_t)n, sizeof *e.perm);
    e.len = tu_xcalloc((size_t)n, sizeof *e.len);
    for (int i = 0; i < n; i++) e.perm[i] = i;
    if (window) {
        g_len_for_sort = olen;
        for (int lo = 0; lo < n; lo += window) {
            const int k = lo + window < n ? window : n - lo;
            qsort(e.perm + lo, (size_t)k, sizeof *e.perm, cmp_desc_len);
        }
    }
    for (int r = 0; r < n; r++) e.len[r] = olen[e.perm[r]];
    e.ptr = tu_xcalloc((size_t)e.ngroups + 1, sizeof *e.ptr);
    if (e.kind == SPS_PAD_ELL) {
        int K = 0;
        for (int r = 0; r < n; r++) K = e.len[r] > K ? e.len[r] : K;
        e.ptr[1] = (int64_t)K * e.nstored;
    } else {
        for (int g = 0; g < e.ngroups; g++) {
            int w = 0;
            for (int r = g * e.h; r < (g + 1) * e.h && r < n; r++) w = e.len[r] > w ? e.len[r] : w;
            /* SELL pads the last slice to C rows; RgCSR's last group is n mod G rows (the paper) */
            const int rows = e.kind == SPS_PAD_SELL ? e.h : ((g + 1) * e.h <= n ? e.h : n - g * e.h);
            e.ptr[g + 1] = e.ptr[g] + (int64_t)w * rows;
        }
    }
    e.slots = e.ptr[e.ngroups];
    const int64_t mean = n > 0 ? (p->rp[n] + n - 1) / n : 0;
    e.long_len = 4 * mean > 64 ? (int)(4 * mean) : 64;
    for (int r = 0; r < n; r++) e.nlong += e.len[r] > e.long_len;
    free(olen);
    /* column ranges: per group (ELL: the one group is the matrix) */
    e.cbase = tu_xcalloc((size_t)e.ngroups + 1, sizeof *e.cbase);
    int64_t span = -1;
    for (int g = 0; g < e.ngroups; g++) {
        sps_index lo = INT32_MAX, hi = -1;
        const int r1 = e.kind == SPS_PAD_ELL ? n : ((g + 1) * e.h < n ? (g + 1) * e.h : n);
        for (int r = e.kind == SPS_PAD_ELL ? 0 : g * e.h; r < r1; r++)
            for (sps_index k = p->rp[e.perm[r]]; k < p->rp[e.perm[r] + 1]; k++) {
                lo = p->ci[k] < lo ? p->ci[k] : lo;
                hi = p->ci[k] > hi ? p->ci[k] : hi;
            }
        e.cbase[g] = hi < 0 ? 0 : lo;
        if (hi >= 0 && hi - lo > span) span = hi - lo;
    }
    e.narrow = c->o.index_bits == 16 || (c->o.index_bits == 0 && span <= 65534);
    return e;
}
static void expected_free(expected *e)
{
    free(e->perm);
    free(e->len);
    free(e->ptr);
    free(e->cbase);
}
/* Slot of entry k of storage row r, as each format documents it. */
static int64_t expect_slot(const expected *e, int r, int k)
{
    if (e->kind == SPS_PAD_ELL) return (int64_t)k * e->nstored + r;
    const int g = r / e->h;
    const int stride = e->kind == SPS_PAD_SELL ? e->h : ((g + 1) * e->h <= e->n ? e->h : e->n - g * e->h);
    return e->ptr[g] + (int64_t)k * stride + r % e->h;
}

/* Compare the (host, CPU backend) store with the expected layout. */
static void check_layout(const char *what, sps_matrix B, const pattern *p, const void *val, const expected *e)
{
    const sps_pad_store *s = B->store;
    const sps_pad_layout *L = &s->L;
    const size_t ss = ssz(B->t);
    int ok = L->n == p->n && L->m == p->m && L->h == e->h && L->nstored == e->nstored && L->ngroups == e->ngroups &&
             L->slots == e->slots && (L->perm != NULL) == e->permuted && s->ew == 1;
    TU_CHECK(ok, "%s: geometry h %d nstored %d groups %d slots %lld perm %d, want %d %d %d %lld %d", what, (int)L->h,
             (int)L->nstored, (int)L->ngroups, (long long)L->slots, L->perm != NULL, e->h, e->nstored, e->ngroups,
             (long long)e->slots, e->permuted);
    if (!ok) return;
    ok = memcmp(L->grp_ptr, e->ptr, ((size_t)e->ngroups + 1) * sizeof(int64_t)) == 0 &&
         (p->n == 0 || memcmp(L->rl, e->len, (size_t)p->n * sizeof(sps_index)) == 0) &&
         (!e->permuted || p->n == 0 || memcmp(L->perm, e->perm, (size_t)p->n * sizeof(sps_index)) == 0);
    TU_CHECK(ok, "%s: group pointers, row lengths or permutation differ from the documented layout", what);
    if (!ok) return;
    /* the column width chosen and, with 16 bits, each group's base = its smallest column */
    ok = e->narrow ? L->col16 && L->cbase && !L->col &&
                         (e->ngroups == 0 || memcmp(L->cbase, e->cbase, (size_t)e->ngroups * sizeof(sps_index)) == 0)
                   : L->col && !L->col16 && !L->cbase;
    TU_CHECK(ok, "%s: %s columns expected (got %d-bit), or the group base columns differ", what,
             e->narrow ? "16-bit" : "32-bit", L->col16 ? 16 : 32);
    if (!ok) return;
    /* the long-row list: every storage row longer than long_len, increasing */
    ok = L->nlong == e->nlong && (e->nlong == 0) == (L->long_rows == NULL) && (e->nlong == 0 || L->long_len == e->long_len);
    for (int q = 0, r = 0; ok && r < p->n; r++)
        if (e->len[r] > e->long_len) ok = L->long_rows[q++] == r;
    TU_CHECK(ok, "%s: long-row list (%d rows) wrong, want %d", what, (int)L->nlong, e->nlong);
    unsigned char *seen = tu_xcalloc((size_t)e->slots, 1);
    long bad = 0;
    for (int r = 0; r < p->n; r++) {
        const int i = e->perm[r];
        for (int k = 0; k < e->len[r]; k++) {
            const int64_t q = expect_slot(e, r, k);
            if (q < 0 || q >= e->slots || seen[q]) { bad++; continue; }
            seen[q] = 1;
            const int64_t src = p->rp[i] + k;
            if (sps_pad_col_at(L, r / L->h, q) != p->ci[src] ||
                memcmp(slot_value(s, q, ss), (const char *)val + src * ss, ss) != 0)
                bad++;
        }
    }
    const unsigned char zero[16] = {0};
    long badpad = 0;
    for (int64_t q = 0; q < e->slots; q++) /* padding: column -1 (16-bit: the all-ones offset), value +0 */
        if (!seen[q] && ((L->col16 ? L->col16[q] != SPS_PAD_COL16_PAD : L->col[q] != -1) ||
                         memcmp(slot_value(s, q, ss), zero, ss) != 0))
            badpad++;
    TU_CHECK(bad == 0 && badpad == 0, "%s: %ld entries not at their documented slot, %ld padding slots not (-1, +0)", what,
             bad, badpad);
    free(seen);
}

/* Two stores hold the same bits. */
static int same_store(sps_matrix A, sps_matrix B)
{
    const sps_pad_store *a = A->store, *b = B->store;
    const sps_pad_layout *x = &a->L, *y = &b->L;
    if (x->n != y->n || x->h != y->h || x->nstored != y->nstored || x->ngroups != y->ngroups || x->slots != y->slots ||
        (x->perm == NULL) != (y->perm == NULL) || x->nlong != y->nlong ||
        (x->nlong && memcmp(x->long_rows, y->long_rows, (size_t)x->nlong * 4) != 0))
        return 0;
    const size_t n = (size_t)x->n, sl = (size_t)x->slots;
    if ((a->vd.dict == NULL) != (b->vd.dict == NULL) || a->vd.ndict != b->vd.ndict ||
        (a->vd.dict && memcmp(a->vd.dict, b->vd.dict, (size_t)a->vd.ndict * ssz(A->t)) != 0))
        return 0;
    const size_t vb = a->vd.dict ? 1 : ssz(A->t);
    return memcmp(x->grp_ptr, y->grp_ptr, ((size_t)x->ngroups + 1) * 8) == 0 &&
           (!n || memcmp(x->rl, y->rl, n * 4) == 0) && (!x->perm || !n || memcmp(x->perm, y->perm, n * 4) == 0) &&
           (x->col16 == NULL) == (y->col16 == NULL) &&
           (!x->col16 || !x->ngroups || memcmp(x->cbase, y->cbase, (size_t)x->ngroups * 4) == 0) &&
           (!sl || ((x->col16 ? memcmp(x->col16, y->col16, sl * 2) : memcmp(x->col, y->col, sl * 4)) == 0 &&
                    memcmp(a->val, b->val, sl * vb) == 0));
}

/* ------------------------------------------------------------------ SpMV references */
/* Same order and type as csr_spmv (kernels/cpu/spmv.inc): the padded SpMV must match bitwise. */
#define REF_N(T, NAME)                                                                                             \
    static void NAME(int n, const sps_index *rp, const sps_index *ci, const void *vv, T a, const void *xv, T b,    \
                     int bz, void *yv)                                                                             \
    {                                                                                                              \
        const T *v = vv, *x = xv;                                                                                  \
        T *y = yv;                                                                                                 \
        for (int i = 0; i < n; i++) {                                                                              \
            T s = 0;                                                                                               \
            for (sps_index k = rp[i]; k < rp[i + 1]; k++) s += v[k] * x[ci[k]];                                    \
            y[i] = bz ? a * s : a * s + b * y[i];                                                                  \
        }                                                                                                          \
    }
REF_N(float, ref_n_s)
REF_N(double, ref_n_d)
REF_N(float _Complex, ref_n_c)
REF_N(double _Complex, ref_n_z)

static void ref_same_order(sps_scalar t, const pattern *p, const void *val, sps_cplx a, const void *x, sps_cplx b, void *y)
{
    const int bz = b.re == 0.0 && b.im == 0.0;
    switch (t) {
    case SPS_F32: ref_n_s(p->n, p->rp, p->ci, val, (float)a.re, x, (float)b.re, bz, y); break;
    case SPS_F64: ref_n_d(p->n, p->rp, p->ci, val, a.re, x, b.re, bz, y); break;
    case SPS_C32: ref_n_c(p->n, p->rp, p->ci, val, CMPLXF((float)a.re, (float)a.im), x, CMPLXF((float)b.re, (float)b.im), bz, y); break;
    default: ref_n_z(p->n, p->rp, p->ci, val, CMPLX(a.re, a.im), x, CMPLX(b.re, b.im), bz, y); break;
    }
}

/* long double reference of y = a op(A) x + b y0 and the rounding bound of each entry. */
static void ref_ld(sps_scalar t, const pattern *p, const void *val, int trans, sps_cplx a, const void *x, sps_cplx b,
                   const void *y0, long double *yr, long double *yi, double *bound)
{
    const int nout = trans ? p->m : p->n;
    long double *sr = tu_xcalloc((size_t)nout, sizeof *sr), *si = tu_xcalloc((size_t)nout, sizeof *si), *sa = tu_xcalloc((size_t)nout, sizeof *sa);
    int *cnt = tu_xcalloc((size_t)nout, sizeof *cnt);
    const double ar = a.re, ai = cplx(t) ? a.im : 0.0, br = b.re, bi = cplx(t) ? b.im : 0.0;
    for (int i = 0; i < p->n; i++)
        for (sps_index k = p->rp[i]; k < p->rp[i + 1]; k++) {
            const int j = p->ci[k], o = trans ? j : i, in = trans ? i : j;
            double vr, vi, xr, xi;
            tu_get(t, val, (size_t)k, &vr, &vi);
            tu_get(t, x, (size_t)in, &xr, &xi);
            sr[o] += (long double)vr * xr - (long double)vi * xi;
            si[o] += (long double)vr * xi + (long double)vi * xr;
            sa[o] += (fabsl((long double)vr) + fabsl((long double)vi)) * (fabsl((long double)xr) + fabsl((long double)xi));
            cnt[o]++;
        }
    const int bz = br == 0.0 && bi == 0.0;
    for (int o = 0; o < nout; o++) {
        double y0r = 0, y0i = 0;
        if (!bz) tu_get(t, y0, (size_t)o, &y0r, &y0i);
        yr[o] = ar * sr[o] - ai * si[o] + (bz ? 0 : br * (long double)y0r - bi * (long double)y0i);
        yi[o] = ar * si[o] + ai * sr[o] + (bz ? 0 : br * (long double)y0i + bi * (long double)y0r);
        const double mag = (fabs(ar) + fabs(ai)) * (double)sa[o] + (bz ? 0 : (fabs(br) + fabs(bi)) * (fabs(y0r) + fabs(y0i)));
        bound[o] = 4.0 * (cnt[o] + 4) * tu_eps(t) * mag + 1e-300;
    }
    free(sr);
    free(si);
    free(sa);
    free(cnt);
}

/* Every entry of y within its bound of the long double reference (NaN fails). */
static int within(sps_scalar t, int nout, const void *y, const long double *yr, const long double *yi, const double *bound,
                  int *worst)
{
    for (int o = 0; o < nout; o++) {
        double re, im;
        tu_get(t, y, (size_t)o, &re, &im);
        const long double d = fabsl(re - yr[o]) + fabsl(im - yi[o]);
        if (!(d <= bound[o])) { *worst = o; return 0; }
    }
    return 1;
}

static sps_cplx rnd_coef(void) { return sps_cplx_make(dyadic(), dyadic()); }

/* y = a op(B) x + b y through the public operator API; a and b as scalars of type t. */
static sps_status apply(sps_operator op, sps_scalar t, int trans, sps_cplx a, sps_vector x, sps_cplx b, sps_vector y)
{
    unsigned char ab[16], bb[16];
    sps_cplx_store(t, a, ab);
    sps_cplx_store(t, b, bb);
    return sps_operator_apply(op, trans ? SPS_OP_T : SPS_OP_N, ab, x, bb, y);
}

/* SpMV and SpMV^T of B against the references (random a, b; b = 0 with y = NaN). */
static int g_spmv_cases = 3; /* 2 on the corpus: random (a, b) and b = 0 */
static void check_spmv(const char *what, sps_matrix B, const pattern *p, const void *val)
{
    const sps_scalar t = B->t;
    const size_t ss = ssz(t);
    sps_operator op;
    if (!TU_OK(ctx, sps_operator_from_matrix(B, &op))) return;
    for (int trans = 0; trans < 2; trans++) {
        const int nin = trans ? p->n : p->m, nout = trans ? p->m : p->n;
        void *xh = tu_xcalloc((size_t)nin, ss), *y0 = tu_xcalloc((size_t)nout, ss), *yh = tu_xcalloc((size_t)nout, ss),
             *yref = tu_xcalloc((size_t)nout, ss);
        long double *yr = tu_xcalloc((size_t)nout, sizeof *yr), *yi = tu_xcalloc((size_t)nout, sizeof *yi);
        double *bound = tu_xcalloc((size_t)nout, sizeof *bound);
        tu_fill_random(&rng, t, (size_t)nin, xh);
        for (int c = 0; c < g_spmv_cases; c++) {
            const sps_cplx a = c == 2 ? sps_cplx_make(1, 0) : rnd_coef();
            const sps_cplx b = c == 1 ? sps_cplx_make(0, 0) : c == 2 ? sps_cplx_make(1, 0) : rnd_coef();
            const int bz = c == 1;
            if (bz) tu_fill_nan(t, (size_t)nout, y0);
            else tu_fill_random(&rng, t, (size_t)nout, y0);
            sps_vector x = NULL, y = NULL;
            if (!TU_OK(ctx, sps_vector_from_host(ctx, nin, t, xh, &x)) || !TU_OK(ctx, sps_vector_from_host(ctx, nout, t, y0, &y))) {
                sps_vector_destroy(x);
                sps_vector_destroy(y);
                continue;
            }
            if (TU_OK(ctx, apply(op, t, trans, a, x, b, y)) && TU_OK(ctx, sps_vector_get(y, yh))) {
                ref_ld(t, p, val, trans, a, xh, b, y0, yr, yi, bound);
                int worst = -1;
                TU_CHECK(within(t, nout, yh, yr, yi, bound, &worst), "%s [%s]: SpMV%s (a, b case %d) entry %d off the long double reference",
                         what, tn(t), trans ? "^T" : "", c, worst);
                if (!trans) {
                    memcpy(yref, y0, (size_t)nout * ss);
                    ref_same_order(t, p, val, a, xh, b, yref);
                    TU_CHECK(nout == 0 || memcmp(yh, yref, (size_t)nout * ss) == 0,
                             "%s [%s]: SpMV (case %d) not bitwise equal to the row-order sum in T", what, tn(t), c);
                } else if (c == 0) {
                    /* SpMV^T does not depend on the thread count */
                    void *y1 = tu_xcalloc((size_t)nout, ss);
                    const int nt = omp_get_max_threads();
                    omp_set_num_threads(1);
                    if (TU_OK(ctx, sps_vector_set(y, y0)) && TU_OK(ctx, apply(op, t, 1, a, x, b, y)) && TU_OK(ctx, sps_vector_get(y, y1)))
                        TU_CHECK(nout == 0 || memcmp(y1, yh, (size_t)nout * ss) == 0,
                                 "%s [%s]: SpMV^T differs with 1 thread", what, tn(t));
                    omp_set_num_threads(nt);
                    free(y1);
                }
            }
            sps_vector_destroy(x);
            sps_vector_destroy(y);
        }
        free(xh);
        free(y0);
        free(yh);
        free(yref);
        free(yr);
        free(yi);
        free(bound);
    }
    sps_operator_destroy(op);
}

/* ------------------------------------------------------------------ one conversion, all checks */
static sps_matrix csr_of(const pattern *p, sps_scalar t, const void *val)
{
    sps_matrix A = NULL;
    if (!TU_OK(ctx, sps_matrix_from_csr(ctx, p->n, p->m, p->rp, p->ci, val, t, &A))) return NULL;
    return A;
}

static int export_equal(sps_matrix B, const pattern *p, const void *val)
{
    const int64_t nnz = p->rp[p->n];
    sps_index *rp = tu_xcalloc((size_t)p->n + 1, sizeof *rp), *ci = tu_xcalloc((size_t)nnz, sizeof *ci);
    void *v = tu_xcalloc((size_t)nnz, ssz(B->t));
    int ok = sps_matrix_export_csr(B, rp, ci, v) == SPS_OK &&
             memcmp(rp, p->rp, ((size_t)p->n + 1) * sizeof *rp) == 0 &&
             (nnz == 0 || (memcmp(ci, p->ci, (size_t)nnz * sizeof *ci) == 0 && memcmp(v, val, (size_t)nnz * ssz(B->t)) == 0));
    free(rp);
    free(ci);
    free(v);
    return ok;
}

static void check_one(const pattern *p, const config *c, sps_scalar t, int spmv)
{
    char what[256];
    snprintf(what, sizeof what, "%s on %s", c->name, p->name);
    const int dict = wants_dict(c);
    void *val = dict ? tu_pool_values(&rng, t, p->rp[p->n], 1 + rnd(40)) : make_values(t, p->rp[p->n]);
    sps_matrix A = csr_of(p, t, val), B = NULL, B2 = NULL;
    if (!A) { free(val); return; }
    popts o = c->o;
    o.force = 1;
    sps_options bo = NULL;
    if (TU_OK(ctx, convert(A, c->fmt, &o, &B)) && TU_OK(ctx, bag_of(c->fmt, &o, &bo))) {
        /* the host-CSR path builds the same store */
        sps_csr_host h;
        memset(&h, 0, sizeof h);
        if (TU_OK(ctx, A->ops->to_csr(A, &h)) && TU_OK(ctx, sps_matrix_from_csr_host(ctx, &h, c->fmt, bo, SPS_SYM_GENERAL, &B2)))
            TU_CHECK(same_store(B, B2), "%s [%s]: host-CSR build differs from the backend-CSR build", what, tn(t));
        sps_csr_host_free(&h);
        TU_CHECK(export_equal(B, p, val), "%s [%s]: CSR -> format -> CSR is not bitwise exact", what, tn(t));
        expected e = expect_layout(p, c);
        check_layout(what, B, p, val, &e);
        /* values dict: a sorted table of the distinct values (padding's +0 among them) and a byte a
           slot; else (the CPU's auto too) a value a slot */
        const sps_pad_store *st = B->store;
        const int has_dict = dict && e.slots > 0; /* no slots, no table */
        const int nd = has_dict ? tu_distinct_values(t, val, p->rp[p->n], e.slots > p->rp[p->n]) : 0;
        int sorted = 1;
        for (int q = 1; st->vd.dict && q < st->vd.ndict; q++)
            sorted &= sps_vdict_cmp((const char *)st->vd.dict + (size_t)(q - 1) * ssz(t),
                                    (const char *)st->vd.dict + (size_t)q * ssz(t), (int)ssz(t)) < 0;
        TU_CHECK(has_dict ? st->vd.dict && st->vd.ndict == nd && st->L.vdict == st->vd.dict && sorted
                      : !st->vd.dict && !st->L.vdict,
                 "%s [%s]: dictionary %s (%d values, want %d; sorted %d)", what, tn(t), st->vd.dict ? "built" : "absent",
                 st->vd.ndict, nd, sorted);
        sps_matrix_info_t info;
        if (TU_OK(ctx, sps_matrix_info(B, &info))) {
            const size_t want = (size_t)e.slots * ((e.narrow ? 2 : 4) + (has_dict ? 1 : ssz(t))) +
                                ((size_t)e.ngroups + 1) * 8 + (e.narrow ? (size_t)e.ngroups * 4 : 0) +
                                (size_t)p->n * 4 * (e.permuted ? 2 : 1) + (size_t)e.nlong * 4 + (size_t)nd * ssz(t);
            const int64_t nnz = p->rp[p->n];
            const double fill = nnz ? 100.0 * (double)(e.slots - nnz) / (double)nnz : 0.0;
            TU_CHECK(info.index_bits == (e.narrow ? 16 : 32), "%s [%s]: info.index_bits %d", what, tn(t), info.index_bits);
            TU_CHECK(info.format == c->fmt && info.stored_entries == e.slots && info.bytes == want && info.nnz == nnz &&
                         info.rows == p->n && info.cols == p->m && fabs(info.fill_percent - fill) <= 1e-9 * (1 + fill),
                     "%s [%s]: info stored %lld bytes %zu fill %g, want %lld %zu %g", what, tn(t),
                     (long long)info.stored_entries, info.bytes, info.fill_percent, (long long)e.slots, want, fill);
        }
        expected_free(&e);
        if (spmv) check_spmv(what, B, p, val);
    }
    sps_options_destroy(bo);
    sps_matrix_destroy(B);
    sps_matrix_destroy(B2);
    sps_matrix_destroy(A);
    free(val);
}

/* ------------------------------------------------------------------ options, refusal */
static sps_status try_convert(const pattern *p, sps_scalar t, sps_format f, const popts *o, sps_matrix *B)
{
    void *val = make_values(t, p->rp[p->n]);
    sps_matrix A = csr_of(p, t, val);
    *B = NULL;
    sps_status s = A ? convert(A, f, o, B) : SPS_ERR_ARG;
    sps_matrix_destroy(A);
    free(val);
    return s;
}

static void expect_refusal(const char *what, const pattern *p, sps_format f, const popts *o, const char *const *needles)
{
    sps_matrix B = (sps_matrix)&rng;
    sps_context_clear_error(ctx);
    sps_status s = try_convert(p, SPS_F64, f, o, &B);
    const char *msg = set_error[0] ? set_error : sps_context_error(ctx);
    int ok = s == SPS_ERR_ARG && B == NULL;
    for (int k = 0; needles[k]; k++) ok = ok && contains(msg, needles[k]);
    TU_CHECK(ok, "%s: %s, B %p, message '%s'", what, sps_status_name(s), (void *)B, msg);
    sps_matrix_destroy(B);
    sps_context_clear_error(ctx);
}

static void expect_ok(const char *what, const pattern *p, sps_scalar t, sps_format f, const popts *o,
                      int64_t want_slots)
{
    sps_matrix B;
    if (TU_OK(ctx, try_convert(p, t, f, o, &B))) {
        sps_matrix_info_t info;
        sps_matrix_info(B, &info);
        TU_CHECK(want_slots < 0 || info.stored_entries == want_slots, "%s: %lld stored entries, want %lld", what,
                 (long long)info.stored_entries, (long long)want_slots);
    } else {
        fprintf(stderr, "  (%s)\n", what);
    }
    sps_matrix_destroy(B);
}

static void test_options(void)
{
    pattern p = make_shape(SH_RANDOM);
    sps_matrix B;
    /* every documented value converts (all covered by the main loop too) */
    const int Cs[] = {0, 16, 32}, sig[] = {0, 1, 16, 32, 64, 96, 1024, 4096};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 8; b++) {
            const int C = Cs[a] ? Cs[a] : 32;
            popts o = {0};
            o.slice_height = Cs[a];
            o.sort_window = sig[b];
            const int valid = sig[b] <= 1 || sig[b] % C == 0;
            sps_context_clear_error(ctx);
            sps_status s = try_convert(&p, SPS_F32, SPS_FMT_SELL, &o, &B);
            TU_CHECK(valid ? s == SPS_OK : (s == SPS_ERR_ARG && contains(sps_context_error(ctx), "sell: sort-window")),
                     "sell C=%d sigma=%d: %s '%s'", Cs[a], sig[b], sps_status_name(s), sps_context_error(ctx));
            sps_matrix_destroy(B);
        }
    const int Gs[] = {0, 32, 33, 64, 100, 128, 200, 256};
    for (int a = 0; a < 8; a++)
        for (int srt = 0; srt < 2; srt++) {
            popts o = {0};
            o.group_size = Gs[a];
            o.sort_rows = srt;
            TU_OK(ctx, try_convert(&p, SPS_F32, SPS_FMT_RGCSR, &o, &B));
            sps_matrix_destroy(B);
        }
    /* invalid values: SPS_ERR_ARG naming the option */
    struct { sps_format f; int C, sigma, G; double mf; const char *needle; } bad[] = {
        {SPS_FMT_SELL, 8, 0, 0, 0, "slice-height"},   {SPS_FMT_SELL, 64, 0, 0, 0, "slice-height"},
        {SPS_FMT_SELL, -16, 0, 0, 0, "slice-height"}, {SPS_FMT_SELL, 16, 24, 0, 0, "sort-window"},
        {SPS_FMT_SELL, 32, 48, 0, 0, "sort-window"},  {SPS_FMT_SELL, 0, -1, 0, 0, "sort-window"},
        {SPS_FMT_RGCSR, 0, 0, 31, 0, "group-size"},   {SPS_FMT_RGCSR, 0, 0, 257, 0, "group-size"},
        {SPS_FMT_RGCSR, 0, 0, -128, 0, "group-size"}, {SPS_FMT_ELL, 0, 0, 0, -1, "max-fill"},
        {SPS_FMT_SELL, 0, 0, 0, NAN, "max-fill"},     {SPS_FMT_RGCSR, 0, 0, 0, -0.5, "max-fill"},
        {SPS_FMT_ELL, 0, 0, 0, 0.5, "max-fill"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        popts o = {0};
        o.slice_height = bad[k].C;
        o.sort_window = bad[k].sigma;
        o.group_size = bad[k].G;
        o.max_fill = bad[k].mf;
        const char *needles[] = {bad[k].needle, NULL};
        char what[64];
        snprintf(what, sizeof what, "invalid option %zu (%s)", k, bad[k].needle);
        expect_refusal(what, &p, bad[k].f, &o, needles);
    }
    /* index_bits: 0, 16, 32; anything else refused; 16 refused where a group's columns span > 65534 */
    {
        popts o = {0};
        o.index_bits = 8;
        const char *needles[] = {"index-bits: expected one of auto, 16, 32, got '8'", NULL};
        expect_refusal("index_bits 8", &p, SPS_FMT_SELL, &o, needles);
        o.index_bits = 64;
        const char *needles64[] = {"index-bits", "64", NULL};
        expect_refusal("index_bits 64", &p, SPS_FMT_ELL, &o, needles64);
        pattern wide = make_shape(SH_WIDE), band = make_shape(SH_BANDWIDE);
        o.index_bits = 16;
        const char *nw[] = {"sell:", "index-bits 16 refused", "group span", "index-bits 32", NULL};
        expect_refusal("sell index_bits 16, wide columns", &wide, SPS_FMT_SELL, &o, nw);
        const char *ne[] = {"ell:", "index-bits 16 refused", "matrix span", NULL};
        expect_refusal("ell index_bits 16, band of 150000 columns", &band, SPS_FMT_ELL, &o, ne);
        expect_ok("sell index_bits 16, band", &band, SPS_F32, SPS_FMT_SELL, &o, -1);
        expect_ok("rgcsr index_bits 16, band", &band, SPS_F32, SPS_FMT_RGCSR, &o, -1);
        pat_free(&wide);
        pat_free(&band);
    }
    /* values: a word of auto|plain|dict; dict refused past 256 distinct values (the random shape's
       dyadic values: hundreds), naming the format and the way out */
    {
        popts o = {0};
        o.values = "huffman";
        const char *nv[] = {"values", "huffman", "auto, plain, dict", NULL};
        expect_refusal("values huffman", &p, SPS_FMT_ELL, &o, nv);
        o.values = "dict";
        const char *nd[] = {"sell:", "values dict refused", "more than 256 distinct", "values plain or auto", NULL};
        expect_refusal("sell values dict, many values", &p, SPS_FMT_SELL, &o, nd);
        nd[0] = "rgcsr:";
        expect_refusal("rgcsr values dict, many values", &p, SPS_FMT_RGCSR, &o, nd);
    }
    /* the 16-bit limit exactly: a group (and the matrix) spanning 65534 columns is 16-bit, 65535 is not */
    for (int extra = -1; extra <= 2; extra++) {
        const int span = SPS_PAD_COL16_SPAN + extra, m = span + 11;
        int len2[40];
        for (int i = 0; i < 40; i++) len2[i] = 2;
        pattern q = pat_from_lengths("span", 40, m, len2);
        for (int i = 0; i < 40; i++) { /* row 5: columns 10 and 10 + span; the rest near 10 */
            q.ci[q.rp[i]] = 10 + (i == 5 ? 0 : i % 7);
            q.ci[q.rp[i] + 1] = i == 5 ? 10 + span : 20 + i;
        }
        const sps_format fs[] = {SPS_FMT_ELL, SPS_FMT_SELL, SPS_FMT_RGCSR};
        for (int f = 0; f < 3; f++) {
            popts o = {0};
            TU_OK(ctx, try_convert(&q, SPS_F64, fs[f], &o, &B));
            if (B) {
                const sps_pad_store *st = B->store;
                TU_CHECK((st->L.col16 != NULL) == (span <= SPS_PAD_COL16_SPAN),
                         "format %d, span %d: %d-bit columns", (int)fs[f], span, st->L.col16 ? 16 : 32);
            }
            sps_matrix_destroy(B);
            o.index_bits = 16;
            if (span <= SPS_PAD_COL16_SPAN) {
                config c = cfg("span limit, index_bits 16", fs[f], 0, 0, 0, 0);
                c.o.index_bits = 16;
                for (int ti = 0; ti < TU_NTYPES; ti++) check_one(&q, &c, tu_all_types[ti], 1);
            } else {
                const char *nd[] = {"index-bits 16 refused", NULL};
                expect_refusal("span over the limit, index_bits 16", &q, fs[f], &o, nd);
            }
        }
        pat_free(&q);
    }
    /* NULL options: defaults */
    TU_OK(ctx, try_convert(&p, SPS_F64, SPS_FMT_SELL, NULL, &B));
    if (B) {
        const sps_pad_store *s = B->store;
        TU_CHECK(s->L.h == 32 && !s->L.perm, "sell defaults: C %d, perm %p", (int)s->L.h, (const void *)s->L.perm);
    }
    sps_matrix_destroy(B);
    TU_OK(ctx, try_convert(&p, SPS_F64, SPS_FMT_RGCSR, NULL, &B));
    if (B) {
        const sps_pad_store *s = B->store;
        TU_CHECK(s->L.h == 128 && !s->L.perm, "rgcsr defaults: G %d", (int)s->L.h);
    }
    sps_matrix_destroy(B);
    /* names */
    sps_format f;
    TU_CHECK(sps_format_by_name("ell", &f) == SPS_OK && f == SPS_FMT_ELL && sps_format_by_name("sell", &f) == SPS_OK &&
                 f == SPS_FMT_SELL && sps_format_by_name("rgcsr", &f) == SPS_OK && f == SPS_FMT_RGCSR &&
                 contains(sps_format_list(), "ell") && contains(sps_format_list(), "sell") &&
                 contains(sps_format_list(), "rgcsr"),
             "format names: %s", sps_format_list());
    pat_free(&p);
}

static void test_refusal(void)
{
    /* ELL: one dense row of 1500 in a 1500 x 1500 matrix with one entry elsewhere per row */
    const int n = 1500;
    int *len = tu_xcalloc(n, sizeof(int));
    for (int i = 0; i < n; i++) len[i] = i == 3 ? n : 1;
    pattern p = pat_from_lengths("dense row 1500", n, n, len);
    const int64_t nnz = 2 * n - 1, slots = (int64_t)n * 1504;
    char ent[64], byt[64];
    snprintf(ent, sizeof ent, "%lld entries", (long long)slots);
    /* 16-bit columns (the matrix spans 1500 columns): 10 bytes a slot, one base column */
    snprintf(byt, sizeof byt, "%zu bytes", (size_t)slots * 10 + 16 + 4 + (size_t)n * 4 + 4 /* one long row */);
    {
        const char *needles[] = {"ELL", ent, byt, "fill factor", "max-fill 10", "longest row 1500", "sell", "hyb", "force", NULL};
        popts o = {0};
        expect_refusal("ell blow-up", &p, SPS_FMT_ELL, &o, needles);
        o.max_fill = 100;
        expect_refusal("ell blow-up, max_fill 100", &p, SPS_FMT_ELL, &o, needles + 1);
        o.max_fill = 1000; /* 2.256M slots < 1000 x 2999 */
        expect_ok("ell under max_fill 1000", &p, SPS_F32, SPS_FMT_ELL, &o, slots);
        o.max_fill = 0;
        o.force = 1;
        expect_ok("ell forced", &p, SPS_F32, SPS_FMT_ELL, &o, slots);
        (void)nnz;
    }
    pat_free(&p);
    /* SELL / RgCSR: 128 rows of 1000 entries, one every 32 rows, the rest 1 entry */
    const int n2 = 4096;
    len = realloc(len, n2 * sizeof(int));
    for (int i = 0; i < n2; i++) len[i] = i % 32 == 0 ? 1000 : 1;
    p = pat_from_lengths("long row every 32", n2, 1024, len);
    const int64_t nnz2 = 128 * 1000 + (n2 - 128);
    {
        popts o = {0};
        const char *sell_needles[] = {"SELL", "4096000 entries", "bytes", "fill factor", "sort-window", "hyb", "force", NULL};
        expect_refusal("sell unsorted blow-up", &p, SPS_FMT_SELL, &o, sell_needles);
        o.sort_window = 4096; /* sorted: the long rows fill 4 slices exactly: no padding */
        expect_ok("sell sigma 4096", &p, SPS_F64, SPS_FMT_SELL, &o, nnz2);
        o.sort_window = 0;
        o.force = 1;
        expect_ok("sell forced", &p, SPS_F64, SPS_FMT_SELL, &o, 4096000);
        memset(&o, 0, sizeof o);
        const char *rg_needles[] = {"RgCSR", "4096000 entries", "bytes", "fill factor", "sort-rows", "group-size", NULL};
        expect_refusal("rgcsr unsorted blow-up", &p, SPS_FMT_RGCSR, &o, rg_needles);
        o.sort_rows = 1;
        expect_ok("rgcsr sorted", &p, SPS_F64, SPS_FMT_RGCSR, &o, nnz2);
        o.sort_rows = 0;
        o.group_size = 32; /* still 1000 wide per group */
        expect_refusal("rgcsr G=32 blow-up", &p, SPS_FMT_RGCSR, &o, rg_needles);
        o.force = 1;
        expect_ok("rgcsr forced", &p, SPS_F32, SPS_FMT_RGCSR, &o, 4096000);
    }
    /* tiny matrices are never refused (the 32-row alignment alone exceeds 10 x nnz) */
    pattern one = make_shape(SH_1X1);
    expect_ok("ell 1x1 unforced", &one, SPS_F64, SPS_FMT_ELL, NULL, 32);
    pat_free(&one);
    pat_free(&p);
    free(len);
}

/* ------------------------------------------------------------------ fill report */
static pattern power_law(int n, double alpha, int kmin)
{
    int *len = tu_xcalloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++) {
        const double u = 1.0 - tu_rng_uniform(&rng); /* (0, 1] */
        double k = kmin * pow(u, -1.0 / (alpha - 1.0));
        len[i] = k > n ? n : (int)k;
    }
    pattern p = pat_from_lengths("power law", n, n, len);
    free(len);
    return p;
}

static void report_fill(const char *name, sps_matrix A)
{
    const config cs[] = {cfg("ell", SPS_FMT_ELL, 0, 0, 0, 0),          cfg("sell-32", SPS_FMT_SELL, 32, 0, 0, 0),
                         cfg("sell-16", SPS_FMT_SELL, 16, 0, 0, 0),     cfg("sell-32-1024", SPS_FMT_SELL, 32, 1024, 0, 0),
                         cfg("sell-32-n", SPS_FMT_SELL, 32, 1 << 30, 0, 0), cfg("rgcsr-32", SPS_FMT_RGCSR, 0, 0, 32, 0),
                         cfg("rgcsr-128", SPS_FMT_RGCSR, 0, 0, 128, 0), cfg("rgcsr-256", SPS_FMT_RGCSR, 0, 0, 256, 0),
                         cfg("rgcsr-128-sorted", SPS_FMT_RGCSR, 0, 0, 128, 1)};
    sps_matrix_info_t ai;
    sps_matrix_info(A, &ai);
    printf("fill report: %s, %d rows, %lld nonzeros, csr %zu bytes\n", name, (int)ai.rows, (long long)ai.nnz, ai.bytes);
    for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        /* not forced: a refused conversion prints its projection (forcing ELL on a
           power-law matrix would allocate gigabytes) */
        sps_matrix B = NULL;
        if (convert(A, cs[k].fmt, &cs[k].o, &B) == SPS_OK) {
            sps_matrix_info_t bi;
            sps_matrix_info(B, &bi);
            printf("  %-17s fill %9.2f %%  stored %10lld  bytes %11zu (%.2fx csr)\n", cs[k].name, bi.fill_percent,
                   (long long)bi.stored_entries, bi.bytes, (double)bi.bytes / (double)ai.bytes);
        } else {
            printf("  %-17s refused: %s\n", cs[k].name, sps_context_error(ctx));
            sps_context_clear_error(ctx);
        }
        sps_matrix_destroy(B);
    }
}

static void test_fill_report(void)
{
    sps_matrix A = NULL;
    if (TU_OK(ctx, sps_matrix_generate(ctx, "poisson3d:32", SPS_F64, &A))) report_fill("poisson3d:32 (f64)", A);
    sps_matrix_destroy(A);
    pattern p = power_law(100000, 2.5, 2);
    void *val = make_values(SPS_F64, p.rp[p.n]);
    A = csr_of(&p, SPS_F64, val);
    if (A) {
        int mx = 0;
        for (int i = 0; i < p.n; i++) mx = p.rp[i + 1] - p.rp[i] > mx ? p.rp[i + 1] - p.rp[i] : mx;
        char name[128];
        snprintf(name, sizeof name, "power law 100000 rows, P(len=k) ~ k^-2.5, k >= 2, longest %d (f64)", mx);
        report_fill(name, A);
        /* ELL refuses it by default */
        sps_matrix B = (sps_matrix)&rng;
        sps_status s = sps_matrix_convert(A, SPS_FMT_ELL, NULL, &B);
        TU_CHECK(s == SPS_ERR_ARG && !B && contains(sps_context_error(ctx), "sell"), "ell on the power-law matrix: %s",
                 sps_status_name(s));
        sps_context_clear_error(ctx);
        /* and the padded formats agree with CSR there */
        const config cs[] = {cfg("sell-32-1024 on power law", SPS_FMT_SELL, 32, 1024, 0, 0),
                             cfg("rgcsr-128-sorted on power law", SPS_FMT_RGCSR, 0, 0, 128, 1)};
        for (int k = 0; k < 2; k++) {
            sps_matrix C = NULL;
            if (TU_OK(ctx, convert(A, cs[k].fmt, &cs[k].o, &C))) {
                TU_CHECK(export_equal(C, &p, val), "%s: round trip", cs[k].name);
                check_spmv(cs[k].name, C, &p, val);
            }
            sps_matrix_destroy(C);
        }
    }
    sps_matrix_destroy(A);
    free(val);
    pat_free(&p);
}

/* ------------------------------------------------------------------ real matrices */
static void test_corpus(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    if (!f) return;
    char line[8192];
    int files = 0, skipped = 0;
    g_spmv_cases = 2;
    double tread = 0;
    const config cs[] = {cfg("ell", SPS_FMT_ELL, 0, 0, 0, 0), cfg("sell-32", SPS_FMT_SELL, 32, 0, 0, 0),
                         cfg("sell-16-64", SPS_FMT_SELL, 16, 64, 0, 0), cfg("rgcsr-128", SPS_FMT_RGCSR, 0, 0, 128, 0),
                         cfg("rgcsr-64-sorted", SPS_FMT_RGCSR, 0, 0, 64, 1)};
    while (fgets(line, sizeof line, f)) {
        char name[256], group[64];
        long rows, cols, nnzf;
        if (sscanf(line, "%255[^\t]\t%63[^\t]\t%ld\t%ld\t%ld", name, group, &rows, &cols, &nnzf) != 5) continue;
        if (nnzf > 300000) { skipped++; continue; }
        snprintf(path, sizeof path, "%s/%s/%s.mtx.gz", dir, group, name);
        const sps_scalar t = strcmp(group, "complex") == 0 ? SPS_C64 : SPS_F64;
        sps_matrix A = NULL;
        const double t0 = omp_get_wtime();
        const sps_status rs = sps_matrix_read_mtx(ctx, path, t, &A);
        tread += omp_get_wtime() - t0;
        if (rs != SPS_OK) { sps_context_clear_error(ctx); skipped++; continue; }
        if (A->nnz > 300000) { sps_matrix_destroy(A); skipped++; continue; }
        files++;
        /* host pattern + values for the references */
        pattern p = {name, A->n, A->m, tu_xcalloc((size_t)A->n + 1, sizeof(sps_index)), tu_xcalloc((size_t)A->nnz, sizeof(sps_index))};
        void *val = tu_xcalloc((size_t)A->nnz, ssz(t));
        TU_OK(ctx, sps_matrix_export_csr(A, p.rp, p.ci, val));
        for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
            char what[512];
            snprintf(what, sizeof what, "%s on %s/%s", cs[k].name, group, name);
            sps_matrix B = NULL;
            popts o = cs[k].o;
            sps_status s = convert(A, cs[k].fmt, &o, &B);
            if (s == SPS_ERR_ARG && contains(sps_context_error(ctx), "fill factor")) {
                /* refused: check the projection is a real blow-up (forcing is tested above) */
                expected e = expect_layout(&p, &cs[k]);
                TU_CHECK((double)e.slots > 10.0 * (double)A->nnz && e.slots > SPS_PAD_FILL_FLOOR,
                         "%s: refused with %lld slots for %lld nonzeros", what, (long long)e.slots, (long long)A->nnz);
                expected_free(&e);
                printf("corpus: %s refused (fill %.1fx)\n", what, (double)e.slots / (double)A->nnz);
                sps_context_clear_error(ctx);
                continue;
            }
            if (!TU_CHECK(s == SPS_OK, "%s: %s '%s'", what, sps_status_name(s), sps_context_error(ctx))) continue;
            TU_CHECK(export_equal(B, &p, val), "%s: round trip not exact", what);
            expected e = expect_layout(&p, &cs[k]);
            check_layout(what, B, &p, val, &e);
            expected_free(&e);
            if (k == 0 || k == 4) check_spmv(what, B, &p, val); /* the other layouts share the kernel */
            sps_matrix_destroy(B);
        }
        free(val);
        pat_free(&p);
        sps_matrix_destroy(A);
    }
    fclose(f);
    printf("corpus: %d files checked, %d skipped (over 300k nonzeros or unreadable), %.1f s reading\n", files, skipped, tread);
    g_spmv_cases = 3;
}

int main(int argc, char **argv)
{
    if (tu_cpu_context(&ctx)) return 1;
    tu_rng_seed(&rng, 20240611);
    const config configs[] = {
        cfg("ell", SPS_FMT_ELL, 0, 0, 0, 0),
        cfg("sell (defaults)", SPS_FMT_SELL, 0, 0, 0, 0),
        cfg("sell C=16", SPS_FMT_SELL, 16, 0, 0, 0),
        cfg("sell C=32 sigma=1", SPS_FMT_SELL, 32, 1, 0, 0),
        cfg("sell C=32 sigma=32", SPS_FMT_SELL, 32, 32, 0, 0),
        cfg("sell C=16 sigma=64", SPS_FMT_SELL, 16, 64, 0, 0),
        cfg("sell C=32 sigma=4096", SPS_FMT_SELL, 32, 4096, 0, 0),
        cfg("rgcsr (defaults)", SPS_FMT_RGCSR, 0, 0, 0, 0),
        cfg("rgcsr G=32", SPS_FMT_RGCSR, 0, 0, 32, 0),
        cfg("rgcsr G=100", SPS_FMT_RGCSR, 0, 0, 100, 0),
        cfg("rgcsr G=256", SPS_FMT_RGCSR, 0, 0, 256, 0),
        cfg("rgcsr G=64 sorted", SPS_FMT_RGCSR, 0, 0, 64, 1),
        cfg("rgcsr G=128 sorted", SPS_FMT_RGCSR, 0, 0, 128, 1),
        cfg_bits(cfg("ell index_bits 32", SPS_FMT_ELL, 0, 0, 0, 0), 32),
        cfg_bits(cfg("sell C=16 sigma=64 index_bits 32", SPS_FMT_SELL, 16, 64, 0, 0), 32),
        cfg_bits(cfg("rgcsr G=64 sorted index_bits 32", SPS_FMT_RGCSR, 0, 0, 64, 1), 32),
        cfg_bits(cfg("sell index_bits 16", SPS_FMT_SELL, 0, 0, 0, 0), 16),
        cfg_values(cfg("ell values dict", SPS_FMT_ELL, 0, 0, 0, 0), "dict"),
        cfg_values(cfg("sell C=32 sigma=32 values dict", SPS_FMT_SELL, 32, 32, 0, 0), "dict"),
        cfg_values(cfg_bits(cfg("sell C=16 index_bits 32 values dict", SPS_FMT_SELL, 16, 0, 0, 0), 32), "dict"),
        cfg_values(cfg("rgcsr G=64 sorted values dict", SPS_FMT_RGCSR, 0, 0, 64, 1), "dict"),
        cfg_values(cfg("sell values plain", SPS_FMT_SELL, 0, 0, 0, 0), "plain"),
    };
    double t0 = omp_get_wtime();
    for (int s = 0; s < SH_COUNT; s++) {
        pattern p = make_shape(s);
        for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++)
            if (!(configs[c].o.index_bits == 16 && s == SH_WIDE)) /* refused: test_options */
                for (int ti = 0; ti < TU_NTYPES; ti++) check_one(&p, &configs[c], tu_all_types[ti], 1);
        pat_free(&p);
    }
    printf("shapes x configurations x types: %.1f s\n", omp_get_wtime() - t0);
    t0 = omp_get_wtime();
    test_options();
    test_refusal();
    printf("options and refusals: %.1f s\n", omp_get_wtime() - t0);
    t0 = omp_get_wtime();
    test_fill_report();
    printf("fill report: %.1f s\n", omp_get_wtime() - t0);
    t0 = omp_get_wtime();
    const char *dir = tu_matrix_dir(argc, argv, 1);
    if (dir) test_corpus(dir);
    else printf("corpus: SPS_MATRIX_DIR not set, skipped\n");
    printf("corpus: %.1f s\n", omp_get_wtime() - t0);
    sps_context_destroy(ctx);
    return tu_finish();
}
