/* The autotuner (issue 20 item 6): the fastest storage of a matrix, timed on its
 * own backend.  README "Choosing a format" documents it for users; in short:
 *
 * Candidates.  A scalar matrix: the table below (format, options, launch
 * variant), data not code; rows flagged GPU differ from another row only in what
 * the CPU backend ignores (csr's kernel choice, launch variants) and are left out
 * there; rows flagged NONDET (hola: atomics) only compete when the caller allows
 * non-deterministic kernels.  The padded formats and DIA keep their option values at
 * auto (a value dictionary on the GPU where the matrix is large and has at most 256
 * values, formats/vdict.h): it won on every large matrix it applied to (H100, session 28,
 * bench/results/auto-model-*.md), so a plain twin of each would spend the budget twice.  A compound matrix: every format of the registry
 * flagged .compound, with its defaults and each combination of its enumerable
 * options (CHOICE words, INT options with a list of values; index-bits stays
 * auto), so a new compound format competes without a line here.  The first candidate, the reference, is
 * the format's defaults: csr (scalar) or the model's compound pick (bcsr).
 * On the GPU the compound winner is then refined: its launch shapes (threads a
 * block-row 1..32 x static / dynamic rows, kernels/launch.h cmp_*) are set on
 * the matrix already built and timed in turn (refine_variants), and so are those
 * of the best layout of each other compound format within REFINE_WITHIN of it
 * (one more build each): layouts cost a build, shapes none.
 *
 * Model (before anything is built).  Stored entries from the row lengths: ELL
 * n x the longest row, SELL-C and RgCSR-G the sum over groups of C (G) x the
 * group's longest row, DIA n x the number of occupied diagonals; a candidate
 * whose stored entries exceed max_fill x nnz (and nnz + SPS_PAD_FILL_FLOOR) is
 * skipped, and again after its build by its footprint.  The rest are timed in
 * this order: the reference, the pick of sps_matrix_auto_format's model, then by
 * the bytes a product streams (stored entries x (value + index bytes) + row
 * arrays) ascending, so the budget is spent on the likely winners first.
 *
 * Timing.  Per candidate: build (sps_matrix_convert_spec), `warmup` products,
 * then on the GPU 3 x `runs` products one at a time, each from a flushed L2
 * between two events, as spbench times them; on the CPU `runs` batches of
 * products (a batch as many as take ~1 ms, at least one) between
 * synchronisations, on a monotonic clock.  Its time is the median (time_spmv).  Products go through the matrix operator, as
 * a solver's do (so the launch variant applies).  Before each candidate after
 * the reference, and before its timed runs (projected from the warm-up), the
 * budget is checked; what does not fit is skipped as "over the budget".  The
 * fastest is kept; the tuning file (formats/tune_cache.c) remembers it.
 *
 * Fallback.  Budget 0, or a reference that cannot be timed: the model's pick,
 * untimed (res->from_model). */
#include "formats/tune.h"
#include "formats/padded.h"
#include "formats/vdict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default max_fill: a tuning file's entries of it keep the search word alone. */
#define TUNE_MAX_FILL 2.0

void sps_tune_options_default(sps_tune_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->budget = 2.0;
    o->runs = 7;
    o->warmup = 2;
    o->max_fill = TUNE_MAX_FILL;
    o->cache = NULL;
    o->allow_nondeterministic = 0;
}

/* ------------------------------------------------------------------ specs */
sps_status sps_matrix_convert_spec(sps_matrix A, const char *spec, sps_matrix *B)
{
    if (!A || !spec || !B) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_convert_spec: NULL argument") : SPS_ERR_ARG;
    *B = NULL;
    char buf[512];
    if (strlen(spec) >= sizeof buf) return sps_error(A->ctx, SPS_ERR_ARG, "format spec too long: '%.40s...'", spec);
    strcpy(buf, spec);
    char *save = NULL, *tok = strtok_r(buf, " \t", &save);
    sps_format fmt;
    if (!tok || sps_format_by_name(tok, &fmt) != SPS_OK || fmt == SPS_FMT_AUTO)
        return sps_error(A->ctx, SPS_ERR_ARG, "format spec '%s': unknown format '%s' (one of %s)", spec, tok ? tok : "",
                         sps_format_list());
    sps_options o = NULL;
    sps_launch_variant lv;
    memset(&lv, 0, sizeof lv);
    int has_lv = 0;
    sps_status st = sps_format_options_create(fmt, &o);
    if (st != SPS_OK) return sps_error(A->ctx, st, "format spec '%s': cannot make the options of %s", spec, tok);
    while (st == SPS_OK && (tok = strtok_r(NULL, " \t", &save))) {
        char why[256];
        char *eq = strchr(tok, '=');
        if (eq) *eq = '\0';
        /* a name given twice is refused: the last had been taken silently, and a second variant
           word dropped every field of the first */
        if (eq && (strcmp(tok, "variant") == 0 ? has_lv : sps_options_is_set(o, tok))) {
            st = sps_error(A->ctx, SPS_ERR_ARG, "format spec '%s': %s given twice", spec, tok);
        } else if (eq && strcmp(tok, "variant") == 0) {
            if (sps_launch_variant_parse(eq + 1, &lv, why, sizeof why) != 0)
                st = sps_error(A->ctx, SPS_ERR_ARG, "format spec '%s': %s", spec, why);
            has_lv = 1;
        } else if (!eq) {
            st = sps_error(A->ctx, SPS_ERR_ARG, "format spec '%s': expected option=value, got '%s'", spec, tok);
        } else {
            const sps_status so = sps_options_set(o, tok, eq + 1);
            if (so != SPS_OK) st = sps_error(A->ctx, so, "format spec '%s': %s", spec, sps_options_error(o));
        }
    }
    if (st == SPS_OK) st = sps_matrix_convert(A, fmt, o, B);
    sps_options_destroy(o);
    if (st == SPS_OK && has_lv && (st = sps_matrix_set_launch_variant(*B, &lv)) != SPS_OK) {
        sps_matrix_destroy(*B);
        *B = NULL;
    }
    return st;
}

/* ------------------------------------------------------------------ candidates */
enum { C_GPU = 1u, C_NONDET = 2u };
typedef enum { PM_NONE = 0, PM_ELL, PM_SELL, PM_RGCSR, PM_DIA } pad_model;

typedef struct {
    const char *spec;
    pad_model pad;
    int h;        /* PM_SELL, PM_RGCSR: rows a group */
    int ib, rb;   /* traffic model: index bytes a stored entry, bytes a row */
    unsigned flags;
} cand_desc;

/* The scalar candidates; the first is the reference (csr's defaults). */
static const cand_desc scalar_cands[] = {
    {"csr", PM_NONE, 0, 4, 4, 0},
    {"csr csr-kernel=rows", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=merge", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_lane_entries=1", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_lane_entries=2", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_lane_entries=4", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_unroll=2", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_unroll=4", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_stage_rows=1", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_stage_rows=2", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_minb=4", PM_NONE, 0, 4, 4, C_GPU},
    {"csr csr-kernel=rows variant=csr_minb=6", PM_NONE, 0, 4, 4, C_GPU},
    {"coo", PM_NONE, 0, 8, 0, 0},
    {"hyb", PM_NONE, 0, 4, 4, 0},
    {"jds", PM_NONE, 0, 4, 8, 0},
    {"dia", PM_DIA, 0, 0, 0, 0},
    {"ell", PM_ELL, 0, 4, 4, 0},
    {"ell variant=pad_unroll=8", PM_ELL, 0, 4, 4, C_GPU},
    {"ell variant=pad_split=2", PM_ELL, 0, 4, 4, C_GPU},
    {"ell variant=pad_ldg=1", PM_ELL, 0, 4, 4, C_GPU},
    {"ell variant=pad_lean=1", PM_ELL, 0, 4, 4, C_GPU},
    {"ell variant=pad_lean=2", PM_ELL, 0, 4, 4, C_GPU},
    {"sell slice-height=32", PM_SELL, 32, 4, 4, 0},
    {"sell slice-height=16", PM_SELL, 16, 4, 4, 0},
    {"sell slice-height=32 variant=pad_unroll=8", PM_SELL, 32, 4, 4, C_GPU},
    {"sell slice-height=32 variant=pad_split=2", PM_SELL, 32, 4, 4, C_GPU},
    {"sell slice-height=32 variant=pad_ldg=1", PM_SELL, 32, 4, 4, C_GPU},
    {"sell slice-height=16 variant=pad_unroll=8", PM_SELL, 16, 4, 4, C_GPU},
    {"rgcsr", PM_RGCSR, 128, 4, 4, 0},
    {"rgcsr variant=pad_unroll=8", PM_RGCSR, 128, 4, 4, C_GPU},
    {"hola", PM_NONE, 0, 4, 4, C_NONDET},
    {"hola variant=hola_early_mul=1", PM_NONE, 0, 4, 4, C_NONDET | C_GPU},
    {"hola variant=hola_minb=6", PM_NONE, 0, 4, 4, C_NONDET | C_GPU},
};
#define NSCALAR ((int)(sizeof scalar_cands / sizeof scalar_cands[0]))
/* Combinations of a compound format's options tried at most. */
#define MAX_COMBOS 16

typedef struct {
    char spec[SPS_TUNE_SPEC_LEN];
    sps_format fmt;
    double stored; /* model; < 0: unknown */
    double bytes;  /* model, for the order */
    const char *skip; /* static reason, or NULL */
    int order;
} cand;

/* Stored entries of a padded layout by the model (the file comment). */
static double model_stored(pad_model pm, int h, sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col)
{
    double s = 0;
    if (pm == PM_ELL || pm == PM_SELL || pm == PM_RGCSR) {
        s = (double)sps_group_slots(n, rowptr, pm == PM_ELL ? n : h);
    } else if (pm == PM_DIA) {
        const int64_t nd = sps_pattern_diagonals(n, m, rowptr, col, -1);
        if (nd < 0) return -1;
        s = (double)nd * n;
    } else {
        s = (double)(rowptr[n] - rowptr[0]);
    }
    return s;
}

/* Beyond the fill bound (the padded formats' own floor: tiny matrices pad anyway). */
static int over_fill(double stored, int64_t nnz, double max_fill)
{
    return stored > max_fill * (double)nnz && stored > (double)nnz + SPS_PAD_FILL_FLOOR;
}

static int add_cand(cand *c, int *nc, const char *spec, sps_format fmt)
{
    if (*nc >= SPS_TUNE_MAX_CANDIDATES) return 0;
    memset(&c[*nc], 0, sizeof c[*nc]);
    snprintf(c[*nc].spec, sizeof c[*nc].spec, "%s", spec);
    c[*nc].fmt = fmt;
    c[*nc].stored = -1;
    c[*nc].order = *nc;
    (*nc)++;
    return 1;
}

/* Number of values an option contributes to the combinations (0: not enumerated),
 * and its k-th value into buf. */
static int opt_values(const sps_option_desc *d, int k, char *buf, size_t len)
{
    if (!d->choices || (d->type != SPS_OPT_CHOICE && d->type != SPS_OPT_INT)) return 0;
    int n = 0;
    const char *p = d->choices;
    while (p) {
        const char *bar = strchr(p, '|');
        const size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (n == k && buf) snprintf(buf, len, "%.*s", (int)l, p);
        n++;
        p = bar ? bar + 1 : NULL;
    }
    return n;
}

/* A compound format's defaults, then each combination of its enumerable options
 * that differs from them. */
static void add_compound(cand *c, int *nc, const sps_format_ops *f)
{
    if (!add_cand(c, nc, f->name, f->id)) return;
    int nv[16] = {0}, nopt = f->noptions < 16 ? f->noptions : 16, combos = 1;
    for (int i = 0; i < nopt; i++) {
        /* index-bits is left to its auto (16 bits where they fit): 2 bytes a slot beside
         * 16 or more of values, and half its words build what auto builds anyway */
        nv[i] = strcmp(f->options[i].name, "index-bits") == 0 ? 0 : opt_values(&f->options[i], -1, NULL, 0);
        if (nv[i] > 1 && combos * nv[i] <= MAX_COMBOS) combos *= nv[i];
        else nv[i] = 0;
    }
    for (int k = 0; k < combos; k++) {
        char spec[SPS_TUNE_SPEC_LEN];
        int w = snprintf(spec, sizeof spec, "%s", f->name), rest = k, differs = 0;
        for (int i = 0; i < nopt; i++) {
            if (!nv[i]) continue;
            char v[64];
            opt_values(&f->options[i], rest % nv[i], v, sizeof v);
            rest /= nv[i];
            if (strcmp(v, f->options[i].def) == 0) continue;
            differs = 1;
            if (w > 0 && (size_t)w < sizeof spec) w += snprintf(spec + w, sizeof spec - w, " %s=%s", f->options[i].name, v);
        }
        if (differs && (size_t)w < sizeof spec) add_cand(c, nc, spec, f->id);
    }
}

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->skip != y->skip && (!x->skip || !y->skip)) return x->skip ? 1 : -1; /* skipped ones last */
    if (x->order < 2 || y->order < 2) return x->order - y->order;             /* reference, model pick */
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
    return x->order - y->order;
}

/* The candidates for A in the order they are timed. */
static int make_cands(sps_matrix A, const sps_host_pattern *p, const sps_tune_options *o, sps_format model, cand *c)
{
    int nc = 0;
    const int gpu = A->ctx->backend == SPS_BACKEND_CUDA;
    if (A->entry.kind != SPS_ENTRY_SCALAR) {
        const sps_format_ops *ref = sps_format_lookup(model);
        if (ref && ref->compound) add_compound(c, &nc, ref);
        for (int i = 0; i < sps_format_count(); i++) {
            const sps_format_ops *f = sps_format_at(i);
            if (f->compound && f != ref) add_compound(c, &nc, f);
        }
        /* the reference first; then every format's defaults, then the layouts one option
         * away from them, then two, ...; SoA vectors last (their products add the
         * conversion passes: the likeliest to lose, the first to go when the budget is
         * short).  Building a layout of a large matrix costs more than timing it: on
         * stencil27-b3-56 (H200, 4.6M blocks) the layouts' share of the 2 s budget built
         * three of them, and in the registry's order those were bcsr, bcsr soa and bell,
         * never bsell, the fastest (bench/results/compound.md). */
        for (int i = 0; i < nc; i++) {
            int tier = 0;
            for (const char *q = c[i].spec; (q = strchr(q, '=')) != NULL; q++) tier++;
            if (strstr(c[i].spec, "vector-layout=soa")) tier += MAX_COMBOS;
            c[i].order = i == 0 ? 0 : 2 + tier * SPS_TUNE_MAX_CANDIDATES + i;
        }
    } else {
        const double vb = (double)sps_scalar_size(A->t);
        int pick = -1;
        for (int i = 0; i < NSCALAR; i++) {
            const cand_desc *d = &scalar_cands[i];
            if ((d->flags & C_GPU) && !gpu) continue; /* the CPU runs the same kernel as another row */
            sps_format f;
            char name[16];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(d->spec, " "), d->spec);
            if (sps_format_by_name(name, &f) != SPS_OK) continue;
            if (!add_cand(c, &nc, d->spec, f)) break;
            cand *x = &c[nc - 1];
            if ((d->flags & C_NONDET) && !o->allow_nondeterministic)
                x->skip = "not bit-reproducible (allow non-deterministic kernels to try it)";
            x->stored = model_stored(d->pad, d->h, A->n, A->m, p->rowptr, p->col);
            x->bytes = x->stored * (vb + d->ib) + (double)A->n * d->rb;
            x->order = nc == 1 ? 0 : nc + 1;
            /* the model's pick, unless it is the reference's format (csr's defaults are
               what auto builds then; its other rows are kernels the model did not pick).
               The fill bound does not apply to it: auto builds it whatever its padding
               (rule 5's ELL of small matrices pads up to 10x; 1138_bus went to csr at
               1.55x auto's time when the bound skipped it) */
            if (pick < 0 && nc > 1 && f == model && f != c[0].fmt && !x->skip) {
                pick = nc - 1;
                x->order = 1;
            } else if (!x->skip && d->pad != PM_NONE && over_fill(x->stored, A->nnz, o->max_fill)) {
                x->skip = "padding: the row-length model's stored entries exceed max_fill x nnz";
            }
        }
    }
    qsort(c, (size_t)nc, sizeof *c, cand_cmp);
    return nc;
}

/* ------------------------------------------------------------------ timing */
static int dbl_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define MAX_RUNS 101
/* A candidate displaces the best so far only when faster by more than this
 * fraction: timing noise does not trade the model's pick (timed second, kept
 * unless csr, timed first, beats it by the margin) for a format that is no faster. */
#define TUNE_MARGIN 0.03
/* One product y = C x, queued (time_queued's callback). */
typedef struct {
    sps_operator op;
    sps_vector x, y;
} tune_product;
static sps_status queue_product(void *arg)
{
    const tune_product *p = (const tune_product *)arg;
    return sps_op_apply(p->op, SPS_OP_N, sps_cplx_make(1, 0), p->x, sps_cplx_make(0, 0), p->y);
}
/* Event-timed runs a candidate gets for each of o->runs: single products are
 * cheap to time this way, and their spread (a microsecond on small matrices) wants
 * more of them than batches did. */
#define EVENT_RUNS_PER_RUN 3
/* Median SpMV time of C in ms into *ms; *over: the runs would not fit in left seconds
 * (projected from the warm-up; not checked when left < 0).  With the backend's
 * time_queued (CUDA): each product alone, from a flushed L2, between events, as
 * spbench times them (kernels/backend.h).  Else (CPU): batches of products (as many
 * as take ~1 ms) between synchronisations on a monotonic clock, the median batch's
 * per-product time. */
static sps_status time_spmv(sps_matrix C, sps_vector x, sps_vector y, const sps_tune_options *o, double left,
                            double *ms, int *over)
{
    sps_context ctx = C->ctx;
    sps_exec *ex = sps_ex(ctx);
    sps_operator op = NULL;
    const sps_cplx one = {1, 0}, zero = {0, 0};
    double t[MAX_RUNS];
    *over = 0;
    sps_status st = sps_operator_from_matrix(C, &op);
    if (st == SPS_OK) st = sps_context_synchronize(ctx);
    double t0 = sps_wtime();
    for (int i = 0; i < o->warmup && st == SPS_OK; i++) st = sps_op_apply(op, SPS_OP_N, one, x, zero, y);
    if (st == SPS_OK) st = sps_context_synchronize(ctx);
    const double tw = (sps_wtime() - t0) / o->warmup;
    if (ex->be->time_queued) {
        const int reps = EVENT_RUNS_PER_RUN * o->runs;
        /* a run: the flush (~2x the L2 at DRAM speed, well under 1e-4 s), a product, a synchronisation */
        if (st == SPS_OK && left >= 0 && (tw + 1e-4) * reps > left) *over = 1;
        tune_product p = {op, x, y};
        if (st == SPS_OK && !*over) st = ex->be->time_queued(ex, queue_product, &p, reps, ms);
        sps_operator_destroy(op);
        return st;
    }
    long batch = tw > 0 ? (long)ceil(1e-3 / tw) : 1000;
    batch = batch < 1 ? 1 : batch > 100000 ? 100000 : batch;
    if (st == SPS_OK && left >= 0 && tw * batch * o->runs > left) *over = 1;
    for (int r = 0; r < o->runs && st == SPS_OK && !*over; r++) {
        t0 = sps_wtime();
        for (long k = 0; k < batch && st == SPS_OK; k++) st = sps_op_apply(op, SPS_OP_N, one, x, zero, y);
        if (st == SPS_OK) st = sps_context_synchronize(ctx);
        t[r] = (sps_wtime() - t0) / batch;
    }
    sps_operator_destroy(op);
    if (st == SPS_OK && !*over) {
        qsort(t, (size_t)o->runs, sizeof *t, dbl_cmp);
        *ms = 1e3 * t[o->runs / 2];
    }
    return st;
}

/* ------------------------------------------------------------------ the tuner */
/* rec skipped because: what, then detail (cut to fit). */
static void skip_rec(sps_tune_result *r, sps_tune_candidate *rec, const char *what, const char *detail)
{
    const size_t cap = sizeof rec->skipped - 1, a = strlen(what) < cap ? strlen(what) : cap;
    const size_t b = strlen(detail) < cap - a ? strlen(detail) : cap - a;
    memcpy(rec->skipped, what, a);
    memcpy(rec->skipped + a, detail, b);
    rec->skipped[a + b] = '\0';
    rec->ms = -1;
    r->skipped++;
}

/* The failure of a skipped candidate: its message, then the context forgets it. */
static const char *take_error(sps_context ctx, char *buf, size_t len)
{
    snprintf(buf, len, "%s", sps_context_error(ctx));
    sps_context_clear_error(ctx);
    return buf;
}

static sps_status model_fallback(sps_matrix A, sps_format model, sps_matrix *B, sps_tune_result *r)
{
    r->from_model = 1;
    snprintf(r->choice, sizeof r->choice, "%s", sps_format_name(model));
    r->chosen_ms = -1;
    return sps_matrix_convert(A, model, NULL, B);
}

static sps_status check_opts(sps_matrix A, const sps_tune_options *o)
{
    if (!(o->budget >= 0) || !isfinite(o->budget))
        return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_tune: budget %g s: expected a finite value >= 0", o->budget);
    if (o->runs < 5 || o->runs > MAX_RUNS)
        return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_tune: runs %d: expected 5..%d", o->runs, MAX_RUNS);
    if (o->warmup < 1 || o->warmup > 100)
        return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_tune: warmup %d: expected 1..100", o->warmup);
    if (!(o->max_fill >= 1) || !isfinite(o->max_fill))
        return sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_tune: max_fill %g: expected a finite value >= 1", o->max_fill);
    return SPS_OK;
}

/* x = 1 and y = 0 of the sizes the products of M read and write. */
static sps_status probe_vectors(sps_matrix M, sps_vector *x, sps_vector *y)
{
    sps_status st = sps_vector_create(M->ctx, sps_matrix_op_cols(M), M->t, x);
    if (st == SPS_OK) st = sps_vector_create(M->ctx, sps_matrix_op_rows(M), M->t, y);
    if (st == SPS_OK) st = sps_v_fill(*x, (sps_cplx){1, 0});
    if (st == SPS_OK) st = sps_v_fill(*y, (sps_cplx){0, 0});
    return st;
}

/* Time the candidates c[0..nc) and keep the fastest in *best (NULL when the
 * reference could not be timed).  share: the fraction of the budget they may use
 * (1; a compound matrix on the GPU leaves the rest to its launch shapes). */
static sps_status time_cands(sps_matrix A, const sps_tune_options *o, const cand *c, int nc, double t0, double share,
                             sps_tune_result *r, sps_matrix *best)
{
    sps_context ctx = A->ctx;
    sps_vector x = NULL, y = NULL;
    sps_status st = probe_vectors(A, &x, &y);
    double best_ms = HUGE_VAL;
    *best = NULL;
    for (int i = 0; i < nc && st == SPS_OK; i++) {
        sps_tune_candidate *rec = &r->candidates[r->ncandidates++];
        char why[512];
        snprintf(rec->spec, sizeof rec->spec, "%s", c[i].spec);
        rec->ms = -1;
        const double left = share * o->budget - (sps_wtime() - t0);
        if (c[i].skip) {
            skip_rec(r, rec, c[i].skip, "");
            continue;
        }
        if (i > 0 && left <= 0) {
            skip_rec(r, rec, share < 1 ? "over the layouts' share of the budget" : "over the budget", "");
            continue;
        }
        sps_matrix C = NULL;
        if (sps_matrix_convert_spec(A, c[i].spec, &C) != SPS_OK) {
            skip_rec(r, rec, "refused: ", take_error(ctx, why, sizeof why));
            if (i == 0) break;
            continue;
        }
        sps_matrix_info_t info;
        if (i > 0 && c[i].order != 1 && sps_matrix_info(C, &info) == SPS_OK && over_fill((double)info.stored_entries, A->nnz, o->max_fill)) {
            skip_rec(r, rec, "padding: its stored entries exceed max_fill x nnz", "");
            sps_matrix_destroy(C);
            continue;
        }
        double ms = 0;
        int over = 0;
        /* what is left of this stage's share (the shapes' part of a compound tune is not the layouts') */
        if (time_spmv(C, x, y, o, i > 0 ? share * o->budget - (sps_wtime() - t0) : -1, &ms, &over) != SPS_OK) {
            skip_rec(r, rec, "the product failed: ", take_error(ctx, why, sizeof why));
            sps_matrix_destroy(C);
            if (i == 0) break;
            continue;
        }
        if (over) {
            skip_rec(r, rec,
                     share < 1 ? "over the layouts' share of the budget (its timed runs would not fit)"
                               : "over the budget (its timed runs would not fit)",
                     "");
            sps_matrix_destroy(C);
            continue;
        }
        rec->ms = ms;
        r->timed++;
        if (i == 0) r->default_ms = ms;
        /* The model's pick (order 1; a compound matrix's reference, order 0, is timed first) is what --format auto
           builds: it displaces the reference unless the reference is faster by more than
           the margin, and what comes after must beat it by the margin. */
        const int incumbent = c[i].order == 1;
        if (incumbent ? ms < best_ms * (1 + TUNE_MARGIN) : ms < best_ms * (1 - TUNE_MARGIN)) {
            best_ms = ms;
            sps_matrix_destroy(*best);
            *best = C;
            snprintf(r->choice, sizeof r->choice, "%s", c[i].spec);
            r->chosen_ms = ms;
        } else {
            sps_matrix_destroy(C);
        }
    }
    if (r->default_ms < 0) { /* the reference was not timed */
        sps_matrix_destroy(*best);
        *best = NULL;
    }
    sps_vector_destroy(x);
    sps_vector_destroy(y);
    return st;
}

/* The launch shapes tried on the compound winners (GPU only: the CPU ignores
 * variants): threads a block-row x schedule, each set on a matrix already built
 * (no rebuild); the defaults were timed with the formats. */
static const int refine_tpr[] = {1, 2, 4, 8, 16, 32};
/* Formats whose best layout is within this factor of the winner's time are
 * refined too: a shape can turn the order round (on an H200 bsell with 4 lanes a
 * row beat bcsr's best by 4 % where bsell's default was 40 % behind). */
#define REFINE_WITHIN 1.5
/* The layouts' share of the budget when launch shapes follow: on an H200 with ~40M-nonzero
 * block matrices every tune used the whole 2 s and no choice carried a shape, though a
 * shape beat it by 5.8 % (bench/results/compound.md). */
#define REFINE_SHARE 0.6

/* Time the launch shapes of M (built from base_spec, base_ms with its defaults)
 * within the budget, recording each in r; leaves M at the fastest (by TUNE_MARGIN)
 * and its spec, extended by "variant=...", and time in spec / *ms. */
static sps_status refine_variants(sps_matrix M, const char *base_spec, double base_ms, const sps_tune_options *o,
                                  double t0, sps_tune_result *r, char spec[SPS_TUNE_SPEC_LEN], double *ms)
{
    sps_context ctx = M->ctx;
    sps_vector x = NULL, y = NULL;
    sps_status st = probe_vectors(M, &x, &y);
    const sps_launch_variant base = M->lv;
    sps_launch_variant keep = base;
    char bspec[SPS_TUNE_SPEC_LEN - 40], vspec[SPS_TUNE_SPEC_LEN];
    snprintf(spec, SPS_TUNE_SPEC_LEN, "%s", base_spec);
    *ms = base_ms;
    const size_t bl = strlen(base_spec);
    const int ntpr = (int)(sizeof refine_tpr / sizeof refine_tpr[0]);
    if (bl >= sizeof bspec) goto out; /* no room for the variant in a spec */
    memcpy(bspec, base_spec, bl + 1);
    for (int k = 0; k < 2 * ntpr && st == SPS_OK && r->ncandidates < SPS_TUNE_MAX_CANDIDATES; k++) {
        sps_launch_variant v = base;
        v.cmp_tpr = refine_tpr[k % ntpr];
        v.cmp_sched = k / ntpr;
        sps_tune_candidate *rec = &r->candidates[r->ncandidates++];
        snprintf(vspec, sizeof vspec, "%s variant=cmp_tpr=%d,cmp_sched=%d", bspec, v.cmp_tpr, v.cmp_sched);
        memcpy(rec->spec, vspec, sizeof vspec);
        if (o->budget - (sps_wtime() - t0) <= 0) {
            skip_rec(r, rec, "over the budget", "");
            continue;
        }
        char why[512];
        double t = 0;
        int over = 0;
        if (sps_matrix_set_launch_variant(M, &v) != SPS_OK ||
            time_spmv(M, x, y, o, o->budget - (sps_wtime() - t0), &t, &over) != SPS_OK) {
            skip_rec(r, rec, "the product failed: ", take_error(ctx, why, sizeof why));
            continue;
        }
        if (over) {
            skip_rec(r, rec, "over the budget (its timed runs would not fit)", "");
            continue;
        }
        rec->ms = t;
        r->timed++;
        if (t < *ms * (1 - TUNE_MARGIN)) {
            *ms = t;
            keep = v;
            memcpy(spec, vspec, sizeof vspec);
        }
    }
out:
    if (sps_matrix_set_launch_variant(M, &keep) != SPS_OK && st == SPS_OK) st = SPS_ERR_ARG;
    sps_vector_destroy(x);
    sps_vector_destroy(y);
    return st;
}

/* Refine the compound winner *B, then the best layout of each other compound format
 * within REFINE_WITHIN of it (one build each, among the nform candidates timed by
 * format); *B becomes the fastest of all, r->choice its spec. */
static sps_status refine_compound(sps_matrix A, const sps_tune_options *o, double t0, int nform, sps_tune_result *r,
                                  sps_matrix *B)
{
    char spec[SPS_TUNE_SPEC_LEN], cspec[SPS_TUNE_SPEC_LEN];
    double ms;
    memcpy(cspec, r->choice, sizeof cspec);
    SPS_CHECK(refine_variants(*B, cspec, r->chosen_ms, o, t0, r, spec, &ms));
    memcpy(r->choice, spec, sizeof spec);
    r->chosen_ms = ms;
    const sps_format won = (*B)->ops->id;
    for (int i = 0; i < sps_format_count(); i++) {
        const sps_format_ops *f = sps_format_at(i);
        if (!f->compound || f->id == won || o->budget - (sps_wtime() - t0) <= 0) continue;
        int bi = -1;
        const size_t fl = strlen(f->name);
        for (int k = 0; k < nform && k < r->ncandidates; k++) {
            const sps_tune_candidate *rec = &r->candidates[k];
            if (rec->ms >= 0 && strncmp(rec->spec, f->name, fl) == 0 && (rec->spec[fl] == ' ' || !rec->spec[fl]) &&
                (bi < 0 || rec->ms < r->candidates[bi].ms))
                bi = k;
        }
        if (bi < 0 || r->candidates[bi].ms > REFINE_WITHIN * r->chosen_ms) continue;
        memcpy(cspec, r->candidates[bi].spec, sizeof cspec);
        sps_matrix C = NULL;
        if (sps_matrix_convert_spec(A, cspec, &C) != SPS_OK) {
            sps_context_clear_error(A->ctx);
            continue;
        }
        const sps_status st = refine_variants(C, cspec, r->candidates[bi].ms, o, t0, r, spec, &ms);
        if (st == SPS_OK && ms < r->chosen_ms * (1 - TUNE_MARGIN)) {
            sps_matrix_destroy(*B);
            *B = C;
            r->chosen_ms = ms;
            memcpy(r->choice, spec, sizeof spec);
        } else {
            sps_matrix_destroy(C);
        }
        SPS_CHECK(st);
    }
    return SPS_OK;
}

/* Whether A's values would be kept as a table (formats/vdict.h), for the tuning file's key: on
 * the GPU values auto stores a large padded or DIA matrix as a byte a slot where its values
 * allow, and that changes which format is fastest (poisson3d-128 f64 DIA: 2.08x cuSPARSE with
 * a table, 1.35x without), so a choice tuned on a pattern with few values is no answer for
 * the same pattern with many.  The CPU keeps plain values: nothing to count there. */
static sps_status values_table(sps_matrix A, const sps_host_pattern *p, int *table)
{
    *table = 0;
    if (A->ctx->backend != SPS_BACKEND_CUDA || A->entry.kind != SPS_ENTRY_SCALAR || A->nnz == 0) return SPS_OK;
    const int vs = (int)sps_scalar_size(A->t);
    const sps_csr_store *s = A->ops->backend_csr ? A->ops->backend_csr(A) : NULL;
    if (s) return sps_vdict_fits(A->ctx, s->val, A->nnz, vs, table);
    void *d = NULL; /* another format: its host copy's values (sps_matrix_host_pattern), up for the count */
    SPS_CHECK(sps_dupload(A->ctx, &d, p->h.val, (size_t)A->nnz * vs));
    const sps_status st = sps_vdict_fits(A->ctx, d, A->nnz, vs, table);
    sps_dfree(A->ctx, d);
    return st;
}

sps_status sps_matrix_tune(sps_matrix A, const sps_tune_options *opt, sps_matrix *B, sps_tune_result *res)
{
    const double t0 = sps_wtime();
    if (!A || !B) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_tune: NULL output") : SPS_ERR_ARG;
    *B = NULL;
    sps_tune_options o;
    if (opt) o = *opt;
    else sps_tune_options_default(&o);
    SPS_CHECK(check_opts(A, &o));
    sps_tune_result *r = res ? res : malloc(sizeof *r);
    if (!r) return sps_error(A->ctx, SPS_ERR_ALLOC, "out of host memory: %zu bytes for a tuning result", sizeof *r);
    memset(r, 0, sizeof *r);
    r->chosen_ms = r->default_ms = -1;

    sps_format model;
    sps_status st;
    sps_host_pattern p;
    memset(&p, 0, sizeof p);
    cand *c = NULL;
    if (o.budget == 0) {
        if ((st = sps_matrix_auto_format(A, &model, NULL)) == SPS_OK) st = model_fallback(A, model, B, r);
        goto done;
    }
    /* one download of the pattern serves the model, the cache key and the padding model */
    if ((st = sps_matrix_host_pattern(A, 1, &p)) != SPS_OK) goto done;
    model = sps_format_auto_pick(A, p.rowptr, p.col, NULL);

    /* the tuning file */
    sps_tune_entry e;
    memset(&e, 0, sizeof e);
    int table = 0;
    if ((st = values_table(A, &p, &table)) != SPS_OK) goto done;
    sps_tune_key_of(A, p.rowptr, p.col, table, &e.key);
    /* max_fill rules candidates out as the kernels allowed do: a choice tuned under a looser bound
       (ELL padded 1.9x under the default 2) is no answer to a tune that allows less */
    const int w = snprintf(e.key.search, sizeof e.key.search, "%s", o.allow_nondeterministic ? "any" : "deterministic");
    if (o.max_fill != TUNE_MAX_FILL)
        snprintf(e.key.search + w, sizeof e.key.search - (size_t)w, " max_fill=%.15g", o.max_fill);
    int create_dir = 0;
    const char *path = sps_tune_cache_path(o.cache, r->cache_path, sizeof r->cache_path, &create_dir, r->warning,
                                           sizeof r->warning);
    if (!path) r->cache_path[0] = '\0';
    sps_tune_entry hit;
    if (path && sps_tune_cache_lookup(path, &e.key, &hit, r->warning, sizeof r->warning)) {
        char why[512];
        if (sps_matrix_convert_spec(A, hit.choice, B) == SPS_OK) {
            r->from_cache = 1;
            snprintf(r->choice, sizeof r->choice, "%s", hit.choice);
            r->chosen_ms = hit.chosen_ms;
            r->default_ms = hit.default_ms;
            goto done;
        }
        sps_tune_warn(r->warning, sizeof r->warning, "the tuning file's choice '%s' does not build (%s): tuned again",
                      hit.choice, take_error(A->ctx, why, sizeof why));
    }

    if (!(c = malloc(SPS_TUNE_MAX_CANDIDATES * sizeof *c))) {
        st = sps_error(A->ctx, SPS_ERR_ALLOC, "out of host memory for the tuner's candidates");
        goto done;
    }
    const int nc = make_cands(A, &p, &o, model, c);
    sps_host_pattern_free(&p);
    memset(&p, 0, sizeof p);
    /* a compound matrix on the GPU: the layouts get 60 % of the budget, its launch shapes the rest */
    const int shapes = A->entry.kind != SPS_ENTRY_SCALAR && A->ctx->backend == SPS_BACKEND_CUDA;
    if ((st = time_cands(A, &o, c, nc, t0, shapes ? REFINE_SHARE : 1.0, r, B)) != SPS_OK) goto done;
    if (!*B) { /* the reference could not be timed: the model, untimed */
        st = model_fallback(A, model, B, r);
        goto done;
    }
    if (shapes && (st = refine_compound(A, &o, t0, r->ncandidates, r, B)) != SPS_OK)
        goto done;
    if (path) {
        snprintf(e.choice, sizeof e.choice, "%s", r->choice);
        e.chosen_ms = r->chosen_ms;
        e.default_ms = r->default_ms;
        e.tune_s = sps_wtime() - t0;
        sps_tune_cache_store(path, create_dir, &e, r->warning, sizeof r->warning);
    }
done:
    free(c);
    sps_host_pattern_free(&p);
    if (st == SPS_OK && *B) r->format = (*B)->ops->id;
    if (st != SPS_OK) {
        sps_matrix_destroy(*B);
        *B = NULL;
    }
    r->time_s = sps_wtime() - t0;
    if (r != res) free(r);
    return st;
}
