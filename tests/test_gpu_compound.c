/* GPU test of the compound-entry kernels (kernels/cuda/compound.cu): b x b blocks
 * (b = 2..8; f32, f64, c32, c64) and quaternions (q32, q64) in bcsr, bell and bsell
 * (slice height 16, 32, and 32 with a sort window), AoS and SoA entries, against the
 * CPU kernels (the oracle) on bcsr AoS built from the same host arrays (the CPU's
 * layouts give the same bits as its bcsr: test_compound_padded).
 *
 * - SpMV and SpMV^T, alpha and beta random, and beta = 0 with y NaN, on fresh random
 *   matrices: 0x0, no entries, 1x1, tall, wide, rows of very different lengths with a
 *   few long rows (longer than the padded layouts' long-row length, so bell and bsell
 *   list them), one of 20000 block rows to fill the GPU.  Every output within
 *   2 eps 4 (terms + 4) (|alpha| sum |a||x| + |beta y0|) of the CPU's (tu_spmv_scales
 *   of the scalar expansion); every layout agrees with the first one checked (bcsr
 *   AoS) on the GPU to the same bound; the GPU store exports back to the arrays it
 *   was built from (up to 1M stored scalars);
 * - launch variants (kernels/launch.h, cmp_*): every cmp_sched x cmp_tpr, cmp_warps
 *   and cmp_bpsm alone, sched 1 with bpsm 1, on b = 3, 4 and quaternions (f32, f64,
 *   c64), bcsr and bsell32, AoS and SoA, the same way; values out of a field's range
 *   refused by sps_matrix_set_launch_variant, the matrix's variant unchanged;
 * - CG on the quaternion Laplacian (q64) and the 3x3-block SPD system (f64) on the
 *   GPU in bcsr and bsell32: converges, within one iteration of the CPU's, x within
 *   1e3 rtol of the CPU's.
 * SPS_GPU_TEST_SMALL=1 (compute-sanitizer, whose time goes by launches): smaller
 * shapes, b = 2, 3, 4, 5, 8, a quarter of the layouts a matrix and each variant on one
 * layout (in turns that cover them all), half the (op, alpha/beta) cases, one solve a
 * system.  A backend without compound kernels fails with one message.  Exit 77
 * (skipped) without a usable CUDA device.  Ends with "N passed, M failed". */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "compound_ref.h"
#include "formats/format.h"
#include "formats/padded.h"
#include "test_gpu_util.h"

#include <stdio.h>
#include <time.h>

static int rnd(int k) { return k > 0 ? (int)(tu_rng_u64(&g_rng) % (uint64_t)k) : 0; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ------------------------------------------------------------------ layouts */
/* An outer layout: format and its options besides entry-layout (name, value, ...,
 * NULL).  force: the long rows' padding would be refused (max-fill). */
typedef struct {
    const char *name;
    sps_format f;
    const char *opt[7];
} outer;
static const outer outers[] = {
    {"bcsr", SPS_FMT_BCSR, {NULL}},
    {"bell", SPS_FMT_BELL, {"force", "true", NULL}},
    {"bsell16", SPS_FMT_BSELL, {"slice-height", "16", "force", "true", NULL}},
    {"bsell32", SPS_FMT_BSELL, {"slice-height", "32", "force", "true", NULL}},
    {"bsell32 sort-window 128", SPS_FMT_BSELL, {"slice-height", "32", "sort-window", "128", "force", "true", NULL}},
    /* the kernels on SoA vectors, relaid out at the operator's boundary (formats/compound_apply.c) */
    {"bcsr vector-layout soa", SPS_FMT_BCSR, {"vector-layout", "soa", NULL}},
    {"bsell32 vector-layout soa", SPS_FMT_BSELL, {"slice-height", "32", "vector-layout", "soa", "force", "true", NULL}},
};
enum { O_BCSR = 0, O_BSELL32 = 3, NOUTER = (int)(sizeof outers / sizeof outers[0]) };

/* B (a compound matrix) in layout o with entries AoS or SoA, on B's context; NULL when refused. */
static sps_matrix to_outer(sps_matrix B, const outer *o, int soa)
{
    sps_options opt = tu_fopts(o->f, "entry-layout", soa ? "soa" : "aos", NULL);
    for (int k = 0; opt && o->opt[k]; k += 2)
        TU_CHECK(sps_options_set(opt, o->opt[k], o->opt[k + 1]) == SPS_OK, "%s: %s", o->name, sps_options_error(opt));
    sps_matrix A = NULL;
    if (!opt || !TU_OK(B->ctx, sps_matrix_convert(B, o->f, opt, &A))) A = NULL;
    sps_options_destroy(opt);
    return A;
}

/* ------------------------------------------------------------------ shapes and entries */
/* n x m entries; row lengths minlen + a skewed draw up to maxlen (half the rows up to a
 * quarter of the span, a tenth up to all of it); every `empty`-th row empty; nlong long
 * rows.  SPS_GPU_TEST_SMALL divides n and m by small_div. */
typedef struct {
    const char *name;
    int n, m, minlen, maxlen, empty, nlong, small_div;
} shape_spec;

/* The length of the long rows: longer than the padded layouts' long-row length
 * max(SPS_PAD_LONG_MIN, SPS_PAD_LONG_FACTOR x mean) with themselves in the mean
 * (kernels/format_kernels_padded.h), and than 64 + 4 x mean, by a margin. */
static int long_len(int64_t nnz_short, int n, int nlong)
{
    int L = SPS_PAD_LONG_MIN;
    for (int it = 0; it < 16; it++) { /* a fixed point: nlong is far below n / 4 */
        const int64_t mean = (nnz_short + (int64_t)nlong * L + n - 1) / n;
        const int64_t lim = SPS_PAD_LONG_FACTOR * mean > SPS_PAD_LONG_MIN ? SPS_PAD_LONG_FACTOR * mean : SPS_PAD_LONG_MIN;
        L = (int)(lim > 64 + 4 * mean ? lim : 64 + 4 * mean) + 32;
    }
    return L;
}

static tu_shape make_shape(const shape_spec *sp)
{
    const int div = g_small ? sp->small_div : 1, n = sp->n / div, m = sp->m / div, span = sp->maxlen - sp->minlen;
    int *len = tu_xcalloc((size_t)n, sizeof *len);
    int64_t nnz = 0;
    for (int i = 0; i < n; i++) {
        const int u = rnd(10);
        len[i] = sp->minlen + rnd((u < 5 ? span / 4 : u < 9 ? span / 2 : span) + 1);
        if (sp->empty && i % sp->empty == 1) len[i] = 0;
        if (len[i] > m) len[i] = m;
        nnz += len[i];
    }
    if (sp->nlong) {
        for (int k = 0; k < sp->nlong; k++) nnz -= len[(k + 1) * n / (sp->nlong + 1)];
        const int L = long_len(nnz, n, sp->nlong);
        TU_CHECK(L <= m, "shape %s: long rows of %d entries in %d columns", sp->name, L, m);
        for (int k = 0; k < sp->nlong; k++) len[(k + 1) * n / (sp->nlong + 1)] = L < m ? L : m;
    }
    tu_shape s = tu_shape_make(&g_rng, sp->name, n, m, len, -1);
    free(len);
    return s;
}

typedef struct {
    sps_entry_desc e;
    sps_scalar t;
} etype;
enum { MAX_ETYPES = 7 * TU_NTYPES + 2 };

/* The entry types: blocks of every b = 2..8 (small: 2, 3, 4, 5, 8) and scalar type,
 * quaternions of the real ones. */
static int entry_types(etype *out)
{
    int n = 0;
    for (int b = 2; b <= 8; b++) {
        if (g_small && (b == 6 || b == 7)) continue;
        for (int ti = 0; ti < TU_NTYPES; ti++) out[n++] = (etype){sps_entry_block(b), tu_all_types[ti]};
    }
    out[n++] = (etype){sps_entry_quaternion(), SPS_F32};
    out[n++] = (etype){sps_entry_quaternion(), SPS_F64};
    return n;
}

/* ------------------------------------------------------------------ products */
/* One product y = alpha op(A) x + beta y0: its inputs and its outputs' bound scales. */
typedef struct {
    sps_op_mode mode;
    int ab; /* TU_AB_RANDOM, or TU_AB_BETA0 with y0 NaN (y must not be read) */
    int nin, nout;
    void *x, *y0;
    tu_coefs c;
    double *scale;
} pcase;
enum { NCASE = 4, ALL_CASES = 0xf };

/* The cases of the matrix whose scalar expansion is h: SpMV and SpMV^T, each with
 * random alpha, beta and y0, and with beta = 0 and y0 NaN; x random, never zero. */
static void make_cases(const tu_csr *h, pcase *pc)
{
    const sps_scalar t = h->info.scalar;
    for (int k = 0; k < NCASE; k++) {
        pcase *p = &pc[k];
        p->mode = k < 2 ? SPS_OP_N : SPS_OP_T;
        p->ab = k % 2 ? TU_AB_BETA0 : TU_AB_RANDOM;
        p->nin = p->mode == SPS_OP_N ? h->info.cols : h->info.rows;
        p->nout = p->mode == SPS_OP_N ? h->info.rows : h->info.cols;
        p->x = tu_xcalloc((size_t)p->nin, sps_scalar_size(t));
        p->y0 = tu_xcalloc((size_t)p->nout, sps_scalar_size(t));
        tu_fill_random(&g_rng, t, (size_t)p->nin, p->x);
        if (p->ab == TU_AB_BETA0) tu_fill_nan(t, (size_t)p->nout, p->y0);
        else tu_fill_random(&g_rng, t, (size_t)p->nout, p->y0);
        tu_draw_coefs(&g_rng, t, p->ab, &p->c);
        p->scale = tu_spmv_scales(h, p->mode, p->x, &p->c, p->y0);
    }
}

static void free_cases(pcase *pc)
{
    for (int k = 0; k < NCASE; k++) {
        free(pc[k].x);
        free(pc[k].y0);
        free(pc[k].scale);
    }
}

/* Under SPS_GPU_TEST_SMALL half the cases, alternating with `turn`, so that
 * successive layouts or variants cover every (op, alpha/beta) between them. */
static unsigned case_mask(int turn) { return !g_small ? ALL_CASES : turn % 2 ? 0x6u : 0x9u; }

/* The outputs of A (any context) for the cases in mask (NULL elsewhere; NaN where the product failed). */
static void outputs(sps_matrix A, const pcase *pc, unsigned mask, void **y)
{
    for (int k = 0; k < NCASE; k++)
        y[k] = mask >> k & 1u ? tu_apply(A->ctx, A, pc[k].mode, A->t, pc[k].nin, pc[k].nout, pc[k].x, pc[k].y0,
                                         pc[k].c.alpha, pc[k].c.beta, NULL)
                              : NULL;
}

static void free_outputs(void **y)
{
    for (int k = 0; k < NCASE; k++) {
        free(y[k]);
        y[k] = NULL;
    }
}

/* Ag (on the GPU) against the CPU outputs yc, and against ref (the layout refname on
 * the GPU) where given, for the cases in mask.  Ag's outputs go to keep when given. */
static void check_cases(const char *what, sps_matrix Ag, const pcase *pc, unsigned mask, void *const *yc,
                        void *const *ref, const char *refname, void **keep)
{
    void *yg[NCASE];
    outputs(Ag, pc, mask, yg); /* a failed product: NaN, which the comparison reports */
    for (int k = 0; k < NCASE; k++) {
        if (!yg[k]) continue;
        char w[320];
        snprintf(w, sizeof w, "%s: %s, %s", what, pc[k].mode ? "SpMV^T" : "SpMV", tu_ab_name[pc[k].ab]);
        cmp_vec_s(w, Ag->t, (size_t)pc[k].nout, yg[k], yc[k], 2.0, pc[k].scale);
        if (ref && ref[k]) {
            snprintf(w + strlen(w), sizeof w - strlen(w), ", against %s on the GPU", refname);
            cmp_vec_s(w, Ag->t, (size_t)pc[k].nout, yg[k], ref[k], 2.0, pc[k].scale);
        }
    }
    if (keep)
        for (int k = 0; k < NCASE; k++) keep[k] = yg[k];
    else
        free_outputs(yg);
}

/* A random matrix of entry type et on shape s, built on both contexts from the same
 * arrays (bcsr AoS): Bc, Bg, its expansion, its cases and the CPU's outputs, the
 * reference of every layout (the CPU's bcsr, bell and bsell give the same bits:
 * test_compound_padded).  0 when either build failed. */
typedef struct {
    sps_matrix Bc, Bg;
    void *val;
    size_t vbytes;
    tu_csr h;
    pcase pc[NCASE];
    void *yc[NCASE];
} pair;

static int make_pair(const tu_shape *s, etype et, pair *p)
{
    memset(p, 0, sizeof *p);
    const size_t nval = (size_t)s->nnz * sps_entry_values(et.e);
    p->vbytes = nval * sps_scalar_size(et.t);
    p->val = tu_xcalloc(nval, sps_scalar_size(et.t));
    tu_fill_random(&g_rng, et.t, nval, p->val);
    if (!TU_OK(g_cpu, sps_matrix_from_csr_entries(g_cpu, s->n, s->m, s->rowptr, s->col, p->val, et.e, et.t, &p->Bc)) ||
        !TU_OK(g_gpu, sps_matrix_from_csr_entries(g_gpu, s->n, s->m, s->rowptr, s->col, p->val, et.e, et.t, &p->Bg)))
        return 0;
    p->h = cr_expand(et.e, et.t, s->n, s->m, s->rowptr, s->col, p->val);
    make_cases(&p->h, p->pc);
    outputs(p->Bc, p->pc, ALL_CASES, p->yc);
    return 1;
}

static void free_pair(pair *p)
{
    if (p->h.rowptr) {
        free_outputs(p->yc);
        free_cases(p->pc);
        tu_csr_free(&p->h);
    }
    TU_DESTROY_MATRICES(p->Bc, p->Bg);
    free(p->val);
}

/* The export round trip (a download and a conversion on the host) up to this many
 * stored scalars: the large shape's bigger entries would spend seconds there, on
 * the build kernels that the smaller ones run. */
enum { EXPORT_MAX = 1 << 20 };

/* Every outer and entry layout of one random matrix on shape s (nlong long rows);
 * under SPS_GPU_TEST_SMALL a quarter of them, by turn (compute-sanitizer's time goes
 * by launches), so that successive turns cover every layout. */
static void check_layouts(const tu_shape *s, int nlong, etype et, int turn)
{
    pair p;
    if (make_pair(s, et, &p)) {
        void *ref[NCASE] = {NULL};
        char refname[64] = "";
        for (int li = 0; li < 2 * NOUTER; li++) {
            if (g_small && (li + turn) % 4) continue;
            const int soa = li / NOUTER;
            const outer *o = &outers[li % NOUTER];
            char what[256];
            snprintf(what, sizeof what, "%s %dx%d %s %s, %s %s", s->name, s->n, s->m, sps_entry_name(et.e),
                     sps_scalar_name(et.t), o->name, soa ? "soa" : "aos");
            sps_matrix Ag = to_outer(p.Bg, o, soa);
            if (Ag) {
                if (s->nnz * sps_entry_values(et.e) <= EXPORT_MAX)
                    TU_CHECK(cr_export_equal(Ag, s->n, s->nnz, s->rowptr, s->col, p.val, p.vbytes),
                             "%s: the GPU store does not export back to its arrays", what);
                if (o->f != SPS_FMT_BCSR)
                    TU_CHECK(((const sps_pad_store *)Ag->store)->L.nlong == nlong, "%s: %d long rows listed, want %d",
                             what, (int)((const sps_pad_store *)Ag->store)->L.nlong, nlong);
                /* the first layout's outputs: the others' reference on the GPU */
                const int first = !*refname;
                check_cases(what, Ag, p.pc, case_mask(li), p.yc, first ? NULL : ref, refname, first ? ref : NULL);
                if (first) snprintf(refname, sizeof refname, "%s %s", o->name, soa ? "soa" : "aos");
            }
            sps_matrix_destroy(Ag);
        }
        free_outputs(ref);
    }
    free_pair(&p);
}

static void test_layouts(void)
{
    static const shape_spec shapes[] = {
        {"0x0", 0, 0, 0, 0, 0, 0, 1},
        {"no entries", 50, 40, 0, 0, 0, 0, 1},
        {"1x1", 1, 1, 1, 1, 0, 0, 1},
        {"tall", 700, 90, 0, 14, 3, 0, 2},
        {"wide", 60, 2000, 0, 40, 4, 0, 1},
        {"long rows", 400, 300, 0, 8, 5, 3, 1},
        /* 8 entries at most: bell pads every row to the longest */
        {"large", 20000, 19000, 0, 8, 7, 0, 10},
    };
    etype types[MAX_ETYPES];
    const int nt = entry_types(types);
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const double t0 = now_s();
        for (int ti = 0; ti < nt; ti++) {
            tu_shape s = make_shape(&shapes[si]); /* a fresh pattern for every matrix */
            check_layouts(&s, shapes[si].nlong, types[ti], (int)si + ti);
            tu_shape_free(&s);
        }
        printf("layouts, shape %s: %.1f s\n", shapes[si].name, now_s() - t0);
    }
}

/* ------------------------------------------------------------------ launch variants */
/* The values kernels/launch.h lists for field f, 0 (the default) first; their number. */
static int field_values(const char *f, int *vals)
{
#define GC_VALUES_(name, ...)                                                                                  \
    if (!strcmp(f, #name)) {                                                                                   \
        const int v_[] = {0, __VA_ARGS__};                                                                     \
        memcpy(vals, v_, sizeof v_);                                                                           \
        return (int)(sizeof v_ / sizeof v_[0]);                                                                \
    }
    SPS_LAUNCH_FIELDS(GC_VALUES_)
#undef GC_VALUES_
    return 0;
}

static int *field_of(sps_launch_variant *v, const char *f)
{
#define GC_FIELD_(name, ...)                                                                                   \
    if (!strcmp(f, #name)) return &v->name;
    SPS_LAUNCH_FIELDS(GC_FIELD_)
#undef GC_FIELD_
    return NULL;
}

enum { MAX_VALUES = 16, MAX_VARIANTS = 64 };
typedef struct {
    char spec[64];
    sps_launch_variant v;
} variant;

/* Every cmp_sched x cmp_tpr; cmp_warps and cmp_bpsm each alone; sched 1 with bpsm 1. */
static int compound_variants(variant *out)
{
    int sched[MAX_VALUES], tpr[MAX_VALUES], vals[MAX_VALUES], n = 0;
    const int ns = field_values("cmp_sched", sched), nt = field_values("cmp_tpr", tpr);
    for (int a = 0; a < ns; a++)
        for (int b = 0; b < nt; b++) snprintf(out[n++].spec, sizeof out->spec, "cmp_sched=%d,cmp_tpr=%d", sched[a], tpr[b]);
    static const char *const alone[2] = {"cmp_warps", "cmp_bpsm"};
    for (int f = 0; f < 2; f++) {
        const int nv = field_values(alone[f], vals);
        for (int k = 1; k < nv; k++) snprintf(out[n++].spec, sizeof out->spec, "%s=%d", alone[f], vals[k]);
    }
    snprintf(out[n++].spec, sizeof out->spec, "cmp_sched=1,cmp_bpsm=1");
    for (int k = 0; k < n; k++) {
        char why[160];
        TU_CHECK(sps_launch_variant_parse(out[k].spec, &out[k].v, why, sizeof why) == 0, "%s", why);
    }
    return n;
}

/* Values out of each cmp_ field's range refused by the setter, naming the field,
 * Ag's variant (set: good) unchanged. */
static void check_refusals(const char *what, sps_matrix Ag, const sps_launch_variant *good)
{
    static const char *const fields[] = {"cmp_sched", "cmp_tpr", "cmp_warps", "cmp_bpsm"};
    for (int f = 0; f < 4; f++) {
        int vals[MAX_VALUES];
        const int nv = field_values(fields[f], vals);
        int gap = 1; /* the smallest positive value not listed */
        for (int k = 0; k < nv; k++)
            if (vals[k] == gap) gap++, k = -1;
        const int bad[3] = {-1, vals[nv - 1] + 1, gap};
        for (int k = 0; k < 3; k++) {
            sps_launch_variant v = *good;
            *field_of(&v, fields[f]) = bad[k];
            const sps_status st = sps_matrix_set_launch_variant(Ag, &v);
            TU_CHECK(st == SPS_ERR_ARG && strstr(sps_context_error(g_gpu), fields[f]) &&
                         !memcmp(&Ag->lv, good, sizeof *good),
                     "%s: %s = %d: %s (%s), the variant %s", what, fields[f], bad[k], sps_status_name(st),
                     sps_context_error(g_gpu), memcmp(&Ag->lv, good, sizeof *good) ? "changed" : "kept");
            sps_context_clear_error(g_gpu);
        }
    }
}

/* Every variant on one random matrix of type et in bcsr and bsell32, AoS and SoA
 * (SPS_GPU_TEST_SMALL: each variant on one of the four, by turn). */
static void sweep_variants(const tu_shape *s, etype et, const variant *vs, int nv, int turn)
{
    pair p;
    if (make_pair(s, et, &p)) {
        static const int sweep_outers[2] = {O_BCSR, O_BSELL32};
        for (int li = 0; li < 4; li++) {
            const int soa = li / 2;
            const outer *o = &outers[sweep_outers[li % 2]];
            char what[256], w[384];
            snprintf(what, sizeof what, "variants %dx%d %s %s, %s %s", s->n, s->m, sps_entry_name(et.e),
                     sps_scalar_name(et.t), o->name, soa ? "soa" : "aos");
            sps_matrix Ag = to_outer(p.Bg, o, soa);
            if (Ag) {
                for (int vi = 0; vi < nv; vi++) {
                    if (g_small && (vi + turn) % 4 != li) continue;
                    snprintf(w, sizeof w, "%s, %.63s", what, vs[vi].spec);
                    if (TU_OK(g_gpu, sps_matrix_set_launch_variant(Ag, &vs[vi].v)))
                        check_cases(w, Ag, p.pc, case_mask(vi + li), p.yc, NULL, NULL, NULL);
                }
                const variant *good = &vs[nv - 1];
                TU_OK(g_gpu, sps_matrix_set_launch_variant(Ag, &good->v));
                check_refusals(what, Ag, &good->v);
                snprintf(w, sizeof w, "%s, %s after the refusals", what, good->spec);
                check_cases(w, Ag, p.pc, case_mask(li), p.yc, NULL, NULL, NULL);
            }
            sps_matrix_destroy(Ag);
        }
    }
    free_pair(&p);
}

static void test_variants(void)
{
    const double t0 = now_s();
    variant vs[MAX_VARIANTS];
    const int nv = compound_variants(vs);
    static const shape_spec sh = {"sweep", 3000, 2800, 0, 30, 6, 3, 5};
    const etype types[] = {
        {sps_entry_block(3), SPS_F32}, {sps_entry_block(3), SPS_F64},     {sps_entry_block(3), SPS_C64},
        {sps_entry_block(4), SPS_F32}, {sps_entry_block(4), SPS_F64},     {sps_entry_block(4), SPS_C64},
        {sps_entry_quaternion(), SPS_F32}, {sps_entry_quaternion(), SPS_F64},
    };
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        tu_shape s = make_shape(&sh);
        sweep_variants(&s, types[ti], vs, nv, (int)ti);
        tu_shape_free(&s);
    }
    printf("launch variants (%d): %.1f s\n", nv, now_s() - t0);
}

/* ------------------------------------------------------------------ solves */
/* CG on system c (entries e, type t) on the GPU in bcsr and bsell32, AoS and SoA
 * (SPS_GPU_TEST_SMALL: the one of them numbered small_li), against the CPU's bcsr
 * solve: both converge, iterations within one, x within 1e3 rtol (both stop at rtol;
 * these systems' condition numbers keep the two x that close). */
static void solve_on_gpu(const char *name, cr_coo *c, sps_entry_desc e, sps_scalar t, double rtol, int small_li)
{
    const int N = c->n * sps_entry_dim(e);
    const size_t ss = sps_scalar_size(t);
    void *tv = cr_to_type(t, c->val, (size_t)c->nnz * sps_entry_values(e));
    void *b = tu_xcalloc((size_t)N, ss), *xc = tu_xcalloc((size_t)N, ss), *xg = tu_xcalloc((size_t)N, ss);
    tu_fill_random(&g_rng, t, (size_t)N, b);
    sps_matrix Bc = NULL, Bg = NULL;
    int ic = -1;
    if (TU_OK(g_cpu, sps_matrix_from_coo_entries(g_cpu, c->n, c->n, c->nnz, c->row, c->col, tv, e, t, &Bc)) &&
        TU_OK(g_gpu, sps_matrix_from_coo_entries(g_gpu, c->n, c->n, c->nnz, c->row, c->col, tv, e, t, &Bg)) &&
        TU_CHECK(cr_solve(g_cpu, Bc, SPS_SOLVER_CG, 0, t, N, b, xc, rtol, &ic), "%s: CG on the CPU: %d iterations",
                 name, ic))
        for (int li = 0; li < 4; li++) {
            const int soa = li / 2;
            const outer *o = &outers[li % 2 ? O_BSELL32 : O_BCSR];
            if (g_small && li != small_li) continue;
            sps_matrix Ag = to_outer(Bg, o, soa);
            int ig = -1;
            const int cg = Ag && cr_solve(g_gpu, Ag, SPS_SOLVER_CG, 0, t, N, b, xg, rtol, &ig);
            const double err = tu_relerr(t, (size_t)N, xg, xc);
            TU_CHECK(cg && abs(ig - ic) <= 1 && err <= 1e3 * rtol,
                     "%s, %s %s: CG on the GPU %d iterations (converged %d), CPU %d; x %.3g from the CPU's", name,
                     o->name, soa ? "soa" : "aos", ig, cg, ic, err);
            sps_matrix_destroy(Ag);
        }
    TU_DESTROY_MATRICES(Bc, Bg);
    free(tv);
    free(b);
    free(xc);
    free(xg);
}

static void test_solves(void)
{
    const double t0 = now_s();
    const int gq = g_small ? 12 : 32, gk = g_small ? 10 : 24;
    char name[96];
    cr_coo q = cr_quat_laplacian(&g_rng, gq, 0.05), k = cr_block_spd(&g_rng, gk, 0.02);
    snprintf(name, sizeof name, "quaternion Laplacian %dx%d q64", gq, gq);
    solve_on_gpu(name, &q, sps_entry_quaternion(), SPS_F64, 1e-10, 0); /* small: bcsr aos */
    snprintf(name, sizeof name, "3x3-block SPD %dx%d grid f64", gk, gk);
    solve_on_gpu(name, &k, sps_entry_block(3), SPS_F64, 1e-10, 3); /* small: bsell32 soa */
    cr_coo_free(&q);
    cr_coo_free(&k);
    printf("solves: %.1f s\n", now_s() - t0);
}

/* One compound matrix on the GPU context, or a single failure saying why (a backend
 * without compound kernels refuses them, naming the entry type and the backend). */
static int gpu_has_compound(void)
{
    static const sps_index rowptr[2] = {0, 1}, col[1] = {0};
    static const double val[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    sps_matrix A = NULL;
    const sps_status st = sps_matrix_from_csr_entries(g_gpu, 1, 1, rowptr, col, val, sps_entry_block(3), SPS_F64, &A);
    TU_CHECK(st == SPS_OK, "a block3x3 f64 matrix on the %s context: %s (%s); no compound kernels in this backend?",
             sps_backend_name(sps_context_backend(g_gpu)), sps_status_name(st), sps_context_error(g_gpu));
    sps_matrix_destroy(A);
    return st == SPS_OK;
}

/* bcsr_diag_blocks (block-Jacobi's diagonal blocks) of entry type et on the GPU, AoS and
 * SoA entries, against the CPU's, bit for bit: rows k - 1, k (even k only: odd rows have
 * no diagonal entry, whose block is zero) and k + 2, random values.  Then the matrix's
 * sps_matrix_diagonal on both backends. */
static void check_diag_blocks(etype et)
{
    const int n = g_small ? 101 : 1001, nv = sps_entry_values(et.e), d = sps_entry_dim(et.e);
    const size_t ss = sps_scalar_size(et.t);
    sps_index *rp = tu_xcalloc((size_t)n + 1, sizeof *rp), *col = tu_xcalloc(3 * (size_t)n, sizeof *col);
    for (int k = 0; k < n; k++) {
        rp[k + 1] = rp[k];
        if (k > 0) col[rp[k + 1]++] = k - 1;
        if (k % 2 == 0) col[rp[k + 1]++] = k;
        if (k + 2 < n) col[rp[k + 1]++] = k + 2;
    }
    const int64_t nnz = rp[n];
    void *val = tu_xcalloc((size_t)nnz * nv + 1, ss), *soa = tu_xcalloc((size_t)nnz * nv + 1, ss);
    tu_fill_random(&g_rng, et.t, (size_t)nnz * nv, val);
    for (int64_t k = 0; k < nnz; k++)
        for (int q = 0; q < nv; q++)
            memcpy((char *)soa + ((size_t)q * nnz + k) * ss, (char *)val + ((size_t)k * nv + q) * ss, ss);
    const size_t nd = (size_t)n * d * d;
    void *dc = tu_xcalloc(nd + 1, ss), *hg = tu_xcalloc(nd + 1, ss);
    const sps_cmp_kernels *kc = sps_kcmp(g_cpu, et.e, et.t), *kg = sps_kcmp(g_gpu, et.e, et.t);
    TU_OK(g_cpu, kc->bcsr_diag_blocks(sps_ex(g_cpu), et.e, SPS_ENTRY_AOS, n, nnz, rp, col, val, dc));
    sps_index *drp = gb_dalloc(((size_t)n + 1) * sizeof *drp), *dcol = gb_dalloc((size_t)nnz * sizeof *dcol);
    void *dval = gb_dalloc((size_t)nnz * nv * ss), *dg = gb_dalloc(nd * ss);
    gb_upload(drp, rp, ((size_t)n + 1) * sizeof *drp);
    gb_upload(dcol, col, (size_t)nnz * sizeof *dcol);
    for (int lay = 0; lay < 2; lay++) {
        gb_upload(dval, lay ? soa : val, (size_t)nnz * nv * ss);
        memset(hg, 0x7f, nd * ss);
        gb_upload(dg, hg, nd * ss); /* poisoned */
        TU_OK(g_gpu, kg->bcsr_diag_blocks(sps_ex(g_gpu), et.e, lay ? SPS_ENTRY_SOA : SPS_ENTRY_AOS, n, nnz, drp, dcol,
                                          dval, dg));
        gb_download(hg, dg, nd * ss);
        size_t nonzero = 0;
        for (size_t k = 0; k < nd * ss; k++) nonzero += ((unsigned char *)dc)[k] != 0;
        TU_CHECK(nonzero > nd * ss / 8 && !memcmp(hg, dc, nd * ss), "bcsr_diag_blocks %s %s %s: GPU differs from CPU",
                 sps_entry_name(et.e), sps_scalar_name(et.t), lay ? "soa" : "aos");
    }
    /* sps_matrix_diagonal of the matrix (through diag_blocks on each backend): the diagonals of
     * the CPU kernel's blocks, on the GPU as on the CPU, the output poisoned first */
    sps_matrix Ac = NULL, Ag = NULL;
    const size_t ndiag = (size_t)n * d;
    void *want = tu_xcalloc(ndiag + 1, ss), *gotc = tu_xcalloc(ndiag + 1, ss), *gotg = tu_xcalloc(ndiag + 1, ss);
    for (size_t i = 0; i < (size_t)n; i++)
        for (int r = 0; r < d; r++)
            memcpy((char *)want + (i * d + r) * ss, (char *)dc + (i * d * d + (size_t)r * (d + 1)) * ss, ss);
    memset(gotc, 0x7f, ndiag * ss);
    memset(gotg, 0x7f, ndiag * ss);
    if (TU_OK(g_cpu, sps_matrix_from_csr_entries(g_cpu, n, n, rp, col, val, et.e, et.t, &Ac)) &&
        TU_OK(g_gpu, sps_matrix_from_csr_entries(g_gpu, n, n, rp, col, val, et.e, et.t, &Ag)) &&
        TU_OK(g_cpu, sps_matrix_diagonal(Ac, gotc)) && TU_OK(g_gpu, sps_matrix_diagonal(Ag, gotg)))
        TU_CHECK(!memcmp(gotc, want, ndiag * ss) && !memcmp(gotg, want, ndiag * ss),
                 "sps_matrix_diagonal %s %s: CPU %s, GPU %s the blocks' diagonals", sps_entry_name(et.e),
                 sps_scalar_name(et.t), memcmp(gotc, want, ndiag * ss) ? "differs from" : "equals",
                 memcmp(gotg, want, ndiag * ss) ? "differs from" : "equals");
    sps_matrix_destroy(Ac);
    sps_matrix_destroy(Ag);
    free(want), free(gotc), free(gotg);
    sps_dfree(g_gpu, drp);
    sps_dfree(g_gpu, dcol);
    sps_dfree(g_gpu, dval);
    sps_dfree(g_gpu, dg);
    free(rp), free(col), free(val), free(soa), free(dc), free(hg);
}

/* ------------------------------------------------------------------ fused product and dot */
/* bcsr_spmv_dot (CG's q = A p, p^H q) on the GPU against the CPU's, square matrices of
 * every entry type, AoS and SoA entries, static rows at every tpr: y within the product's
 * bound of the CPU's, x^H y within the reduction's, the output poisoned first; and
 * bcsr_diag_blocks (block-Jacobi's diagonal blocks) equal to the CPU's bit for bit. */
static void test_spmv_dot(void)
{
    static const shape_spec sq = {"square", 3000, 3000, 1, 16, 9, 0, 4};
    static const int tprs[4] = {0, 1, 4, 32};
    etype types[MAX_ETYPES];
    const int nt = entry_types(types);
    for (int ti = 0; ti < nt; ti++) {
        const etype et = types[ti];
        tu_shape sh = make_shape(&sq);
        const size_t nval = (size_t)sh.nnz * sps_entry_values(et.e), ss = sps_scalar_size(et.t);
        const int d = sps_entry_dim(et.e);
        const size_t N = (size_t)sh.n * d;
        void *val = tu_xcalloc(nval + 1, ss);
        tu_fill_random(&g_rng, et.t, nval, val);
        gbuf x = gb_rand(et.t, N);
        for (int soa = 0; soa < 2; soa++) {
            const sps_cmp_kernels *kc = sps_kcmp(g_cpu, et.e, et.t), *kg = sps_kcmp(g_gpu, et.e, et.t);
            if (!kc || !kg) continue;
            /* the CPU's product and dot (AoS entries; its layouts give the same bits) */
            void *yc = tu_xcalloc(N + 1, ss);
            sps_cplx cs[4];
            for (int k = 0; k < 4; k++) cs[k] = sps_cplx_make(NAN, NAN);
            TU_OK(g_cpu, kc->bcsr_spmv_dot(sps_ex(g_cpu), et.e, SPS_ENTRY_AOS, sh.n, sh.nnz, sh.rowptr, sh.col, val,
                                           x.h, yc, cs, 2));
            /* the GPU's arrays in entry layout soa / aos */
            void *gval = gb_xmalloc(nval * ss + 1);
            if (soa)
                for (int64_t k = 0; k < sh.nnz; k++)
                    for (int q = 0; q < sps_entry_values(et.e); q++)
                        memcpy((char *)gval + ((size_t)q * sh.nnz + k) * ss,
                               (char *)val + ((size_t)k * sps_entry_values(et.e) + q) * ss, ss);
            else
                memcpy(gval, val, nval * ss);
            sps_index *drp = gb_dalloc(((size_t)sh.n + 1) * sizeof *drp), *dcol = gb_dalloc((size_t)sh.nnz * 4 + 4);
            void *dval = gb_dalloc(nval * ss + 1);
            gb_upload(drp, sh.rowptr, ((size_t)sh.n + 1) * sizeof *drp);
            gb_upload(dcol, sh.col, (size_t)sh.nnz * sizeof *dcol);
            gb_upload(dval, gval, nval * ss);
            double S = 0; /* the dot's scale: sum |x_i| |y_i| */
            for (size_t k = 0; k < N; k++) {
                double xr, xi, yr, yi;
                tu_get(et.t, x.h, k, &xr, &xi);
                tu_get(et.t, yc, k, &yr, &yi);
                S += hypot(xr, xi) * hypot(yr, yi);
            }
            sps_cplx *ds = gb_dalloc(4 * sizeof *ds), hs[4];
            for (int vi = 0; vi < 4; vi++) {
                sps_launch_variant lv;
                memset(&lv, 0, sizeof lv);
                lv.cmp_tpr = tprs[vi];
                sps_exec *ex = sps_ex(g_gpu);
                const sps_launch_variant *old = ex->lv;
                ex->lv = &lv;
                gbuf y = gb_nan(et.t, N);
                for (int k = 0; k < 4; k++) hs[k] = sps_cplx_make(NAN, NAN);
                gb_upload(ds, hs, sizeof hs);
                TU_OK(g_gpu, kg->bcsr_spmv_dot(ex, et.e, soa ? SPS_ENTRY_SOA : SPS_ENTRY_AOS, sh.n, sh.nnz, drp, dcol,
                                               dval, x.d, y.d, ds, 2));
                ex->lv = old;
                gb_download(hs, ds, sizeof hs);
                void *yg = gb_fetch(&y);
                char what[160];
                snprintf(what, sizeof what, "bcsr_spmv_dot %s %s %s tpr %d", sps_entry_name(et.e),
                         sps_scalar_name(et.t), soa ? "soa" : "aos", tprs[vi]);
                cmp_vec(what, et.t, N, yg, yc, 8.0 * (sq.maxlen + 4) * d, 2.0 * sq.maxlen);
                cmp_slot(what, et.t, N, hs[2], cs[2], 16.0 * d * tu_eps(et.t) * S + 1e-300);
                TU_CHECK(isnan(hs[1].re) && isnan(hs[3].re), "%s: wrote other slots", what);
                free(yg);
                gb_free(&y);
            }
            sps_dfree(g_gpu, ds);
            sps_dfree(g_gpu, drp);
            sps_dfree(g_gpu, dcol);
            sps_dfree(g_gpu, dval);
            free(gval);
            free(yc);
        }
        gb_free(&x);
        free(val);
        tu_shape_free(&sh);
        check_diag_blocks(et);
    }
}

int main(void)
{
    const int rc = gpu_setup("test_gpu_compound");
    if (rc) return rc;
    if (gpu_has_compound()) {
        test_layouts();
        test_variants();
        test_spmv_dot();
        test_solves();
    }
    gpu_teardown();
    return tu_finish();
}
