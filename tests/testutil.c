#include "testutil.h"
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int tu_passed = 0, tu_failed = 0;

int tu_vcheck(int ok, const char *file, int line, const char *fmt, va_list ap)
{
    if (ok) {
        tu_passed++;
        return 1;
    }
    tu_failed++;
    fprintf(stderr, "FAIL %s:%d: ", file, line);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    return 0;
}

int tu_check(int ok, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int r = tu_vcheck(ok, file, line, fmt, ap);
    va_end(ap);
    return r;
}

int tu_check_ok(sps_context ctx, sps_status st, const char *expr, const char *file, int line)
{
    return tu_check(st == SPS_OK, file, line, "%s -> %s: %s", expr, sps_status_name(st),
                    ctx ? sps_context_error(ctx) : "");
}

int tu_finish(void)
{
    printf("%d passed, %d failed\n", tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

void tu_rng_seed(tu_rng *r, uint64_t seed) { r->s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull; if (!r->s) r->s = 1; }

uint64_t tu_rng_u64(tu_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

double tu_rng_uniform(tu_rng *r) { return (double)(tu_rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }
double tu_rng_range(tu_rng *r, double lo, double hi) { return lo + (hi - lo) * tu_rng_uniform(r); }

static size_t reals_per(sps_scalar t) { return sps_scalar_is_complex(t) ? 2 : 1; }
static int is_single(sps_scalar t) { return t == SPS_F32 || t == SPS_C32; }

void tu_fill_random(tu_rng *r, sps_scalar t, size_t n, void *v)
{
    size_t k = n * reals_per(t);
    for (size_t i = 0; i < k; i++) {
        double x = tu_rng_range(r, -1.0, 1.0);
        if (is_single(t)) ((float *)v)[i] = (float)x;
        else ((double *)v)[i] = x;
    }
}

void tu_fill_nan(sps_scalar t, size_t n, void *v)
{
    size_t k = n * reals_per(t);
    for (size_t i = 0; i < k; i++) {
        if (is_single(t)) ((float *)v)[i] = NAN;
        else ((double *)v)[i] = NAN;
    }
}

void *tu_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

void tu_put(sps_scalar t, void *v, size_t i, double re, double im)
{
    switch (t) {
    case SPS_F32: ((float *)v)[i] = (float)re; break;
    case SPS_F64: ((double *)v)[i] = re; break;
    case SPS_C32:
        ((float *)v)[2 * i] = (float)re;
        ((float *)v)[2 * i + 1] = (float)im;
        break;
    default:
        ((double *)v)[2 * i] = re;
        ((double *)v)[2 * i + 1] = im;
        break;
    }
}

void tu_get(sps_scalar t, const void *v, size_t i, double *re, double *im)
{
    size_t k = reals_per(t);
    if (is_single(t)) {
        *re = ((const float *)v)[i * k];
        *im = k == 2 ? ((const float *)v)[i * k + 1] : 0.0;
    } else {
        *re = ((const double *)v)[i * k];
        *im = k == 2 ? ((const double *)v)[i * k + 1] : 0.0;
    }
}

double tu_relerr(sps_scalar t, size_t n, const void *a, const void *b)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        double ar, ai, br, bi;
        tu_get(t, a, i, &ar, &ai);
        tu_get(t, b, i, &br, &bi);
        double d = hypot(ar - br, ai - bi);
        if (!(d <= num)) num = d; /* NaN propagates as failure */
        double m = hypot(br, bi);
        if (m > den) den = m;
    }
    if (isnan(num)) return INFINITY;
    return num / (den > 1e-300 ? den : 1e-300);
}

double tu_eps(sps_scalar t) { return is_single(t) ? 5.96e-8 : 1.11e-16; }

int tu_export_csr(sps_context c, sps_matrix A, tu_csr *h)
{
    memset(h, 0, sizeof *h);
    if (sps_matrix_info(A, &h->info) != SPS_OK) return 0;
    h->rowptr = tu_xcalloc((size_t)h->info.rows + 1, sizeof(sps_index));
    h->col = tu_xcalloc((size_t)h->info.nnz, sizeof(sps_index));
    /* sps_entry_values scalars an entry: 1, or b*b / 4 for block and quaternion matrices */
    h->val = tu_xcalloc((size_t)h->info.nnz * sps_entry_values(h->info.entry), sps_scalar_size(h->info.scalar));
    if (sps_matrix_export_csr(A, h->rowptr, h->col, h->val) == SPS_OK) return 1;
    if (c) fprintf(stderr, "export: %s\n", sps_context_error(c));
    return 0;
}

void tu_csr_free(tu_csr *h)
{
    free(h->rowptr);
    free(h->col);
    free(h->val);
}

int tu_same_csr(const tu_csr *a, const tu_csr *b)
{
    if (a->info.rows != b->info.rows || a->info.cols != b->info.cols || a->info.nnz != b->info.nnz ||
        a->info.scalar != b->info.scalar || sps_entry_values(a->info.entry) != sps_entry_values(b->info.entry))
        return 0;
    const size_t nnz = (size_t)a->info.nnz, nv = (size_t)sps_entry_values(a->info.entry);
    return memcmp(a->rowptr, b->rowptr, ((size_t)a->info.rows + 1) * sizeof(sps_index)) == 0 &&
           (nnz == 0 || (memcmp(a->col, b->col, nnz * sizeof(sps_index)) == 0 &&
                         memcmp(a->val, b->val, nnz * nv * sps_scalar_size(a->info.scalar)) == 0));
}

int tu_check_export(sps_context c, sps_matrix B, const tu_csr *want, const char *file, int line, const char *fmt, ...)
{
    tu_csr h;
    if (!tu_export_csr(c, B, &h)) {
        tu_csr_free(&h);
        return 0;
    }
    va_list ap;
    va_start(ap, fmt);
    const int r = tu_vcheck(tu_same_csr(want, &h), file, line, fmt, ap);
    va_end(ap);
    tu_csr_free(&h);
    return r;
}

void tu_destroy_matrices(size_t n, const sps_matrix *m)
{
    for (size_t i = 0; i < n; i++) sps_matrix_destroy(m[i]);
}

const char *tu_matrix_dir(int argc, char **argv, int argi)
{
    const char *d = NULL;
    if (argi < argc && argv[argi][0]) d = argv[argi];
    if (!d) d = getenv("SPS_MATRIX_DIR");
    if (!d || !d[0]) return NULL;
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", d);
    struct stat st;
    if (stat(path, &st) != 0) return NULL;
    return d;
}

const sps_scalar tu_all_types[TU_NTYPES] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};

/* ------------------------------------------------------------------ sparsity patterns */
static int cmp_index(const void *a, const void *b)
{
    const sps_index x = *(const sps_index *)a, y = *(const sps_index *)b;
    return (x > y) - (x < y);
}

void tu_random_cols(tu_rng *r, int m, int L, sps_index *c)
{
    if ((int64_t)L * 4 >= m) { /* selection sampling */
        int k = 0;
        for (int j = 0; j < m && k < L; j++)
            if (tu_rng_u64(r) % (uint64_t)(m - j) < (uint64_t)(L - k)) c[k++] = j;
        return;
    }
    int k = 0;
    while (k < L) {
        for (int q = k; q < L; q++) c[q] = (sps_index)(tu_rng_u64(r) % (uint64_t)m);
        qsort(c, (size_t)L, sizeof *c, cmp_index);
        k = 0;
        for (int q = 0; q < L; q++)
            if (q == 0 || c[q] != c[k - 1]) c[k++] = c[q];
    }
}

tu_shape tu_shape_make(tu_rng *r, const char *name, int n, int m, const int *len, int one_col)
{
    tu_shape s = {name, n, m, 0, tu_xcalloc((size_t)n + 1, sizeof(sps_index)), NULL};
    for (int i = 0; i < n; i++) s.rowptr[i + 1] = s.rowptr[i] + len[i];
    s.nnz = s.rowptr[n];
    s.col = tu_xcalloc((size_t)s.nnz, sizeof(sps_index));
    for (int i = 0; i < n; i++) {
        if (one_col >= 0) {
            if (len[i]) s.col[s.rowptr[i]] = one_col;
        } else {
            tu_random_cols(r, m, len[i], s.col + s.rowptr[i]);
        }
    }
    return s;
}

tu_shape tu_shape_band(tu_rng *r, const char *name, int n, int m, int lo, int hi, double p)
{
    tu_shape s = {name, n, m, 0, tu_xcalloc((size_t)n + 1, sizeof(sps_index)),
                  tu_xcalloc((size_t)n * (hi - lo + 1), sizeof(sps_index))};
    for (int i = 0; i < n; i++) {
        sps_index k = s.rowptr[i];
        for (int o = lo; o <= hi; o++)
            if (i + o >= 0 && i + o < m && tu_rng_uniform(r) < p) s.col[k++] = i + o;
        s.rowptr[i + 1] = k;
    }
    s.nnz = s.rowptr[n];
    return s;
}

void tu_shape_free(tu_shape *s)
{
    free(s->rowptr);
    free(s->col);
    s->rowptr = s->col = NULL;
}

void *tu_shape_values(tu_rng *r, sps_scalar t, int64_t nnz, int zeros)
{
    void *v = tu_xcalloc((size_t)nnz, sps_scalar_size(t));
    tu_fill_random(r, t, (size_t)nnz, v);
    for (int64_t k = 0; k < nnz; k++) {
        if (zeros && k % 7 == 3) tu_put(t, v, (size_t)k, 0.0, 0.0);
        if (k % 11 == 5) tu_put(t, v, (size_t)k, -0.0, sps_scalar_is_complex(t) ? -0.0 : 0.0);
    }
    return v;
}

tu_csr tu_shape_csr(const tu_shape *s, sps_scalar t, void *val)
{
    tu_csr h;
    memset(&h, 0, sizeof h);
    h.info.rows = s->n;
    h.info.cols = s->m;
    h.info.nnz = s->nnz;
    h.info.scalar = t;
    h.rowptr = s->rowptr;
    h.col = s->col;
    h.val = val;
    return h;
}

/* ------------------------------------------------------------------ SpMV references */
const char *const tu_ab_name[TU_AB_COUNT] = {"alpha=1 beta=0 (NULL)", "random alpha, beta",
                                             "random alpha, beta=0, y NaN"};

void tu_draw_coefs(tu_rng *r, sps_scalar t, int ab, tu_coefs *c)
{
    const int cx = sps_scalar_is_complex(t);
    c->ar = 1;
    c->ai = c->br = c->bi = 0;
    if (ab != TU_AB_DEFAULT) {
        c->ar = tu_rng_range(r, -2, 2);
        c->ai = cx ? tu_rng_range(r, -2, 2) : 0;
    }
    if (ab == TU_AB_RANDOM) {
        c->br = tu_rng_range(r, -2, 2);
        c->bi = cx ? tu_rng_range(r, -2, 2) : 0;
    }
    tu_put(t, c->alpha, 0, c->ar, c->ai);
    tu_put(t, c->beta, 0, c->br, c->bi);
    tu_get(t, c->alpha, 0, &c->ar, &c->ai); /* the values as rounded to t */
    tu_get(t, c->beta, 0, &c->br, &c->bi);
}

void tu_spmv_ref_compute(const tu_csr *h, sps_op_mode mode, const void *x, tu_spmv_ref *ref)
{
    const sps_scalar t = h->info.scalar;
    const int n = h->info.rows;
    const int nout = mode == SPS_OP_N ? h->info.rows : h->info.cols;
    ref->nout = nout;
    ref->re = tu_xcalloc((size_t)nout, sizeof(long double));
    ref->im = tu_xcalloc((size_t)nout, sizeof(long double));
    ref->abs = tu_xcalloc((size_t)nout, sizeof(long double));
    ref->cnt = tu_xcalloc((size_t)nout, sizeof(int));
    for (int i = 0; i < n; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) {
            const int j = h->col[k], o = mode == SPS_OP_N ? i : j, in = mode == SPS_OP_N ? j : i;
            double vr, vi, xr, xi;
            tu_get(t, h->val, (size_t)k, &vr, &vi);
            tu_get(t, x, (size_t)in, &xr, &xi);
            ref->re[o] += (long double)vr * xr - (long double)vi * xi;
            ref->im[o] += (long double)vr * xi + (long double)vi * xr;
            ref->abs[o] += (fabsl(vr) + fabsl(vi)) * (fabsl(xr) + fabsl(xi));
            ref->cnt[o]++;
        }
}

void tu_spmv_ref_free(tu_spmv_ref *ref)
{
    free(ref->re);
    free(ref->im);
    free(ref->abs);
    free(ref->cnt);
    ref->re = ref->im = ref->abs = NULL;
    ref->cnt = NULL;
}

double *tu_spmv_scales(const tu_csr *h, sps_op_mode mode, const void *x, const tu_coefs *c, const void *y0)
{
    const sps_scalar t = h->info.scalar;
    const int nout = mode == SPS_OP_N ? h->info.rows : h->info.cols;
    double *sc = tu_xcalloc((size_t)nout, sizeof *sc);
    int *cnt = tu_xcalloc((size_t)nout, sizeof *cnt);
    const double aa = fabs(c->ar) + fabs(c->ai), ba = fabs(c->br) + fabs(c->bi);
    for (int i = 0; i < h->info.rows; i++)
        for (sps_index k = h->rowptr[i]; k < h->rowptr[i + 1]; k++) {
            const int o = mode == SPS_OP_N ? i : h->col[k], in = mode == SPS_OP_N ? h->col[k] : i;
            double vr, vi, xr, xi;
            tu_get(t, h->val, (size_t)k, &vr, &vi);
            tu_get(t, x, (size_t)in, &xr, &xi);
            sc[o] += aa * (fabs(vr) + fabs(vi)) * (fabs(xr) + fabs(xi));
            cnt[o]++;
        }
    for (int o = 0; o < nout; o++) {
        double yr = 0, yi = 0;
        if (ba != 0) tu_get(t, y0, (size_t)o, &yr, &yi);
        sc[o] = 4.0 * (cnt[o] + 4) * (sc[o] + ba * (fabs(yr) + fabs(yi)));
    }
    free(cnt);
    return sc;
}

void *tu_apply(sps_context c, sps_matrix A, sps_op_mode mode, sps_scalar t, int nin, int nout, const void *x,
               const void *y0, const void *alpha, const void *beta, int *ok)
{
    sps_vector vx = NULL, vy = NULL;
    sps_operator op = NULL;
    void *y = tu_xcalloc((size_t)nout, sps_scalar_size(t));
    const int good = sps_vector_from_host(c, nin, t, x, &vx) == SPS_OK &&
                     sps_vector_from_host(c, nout, t, y0, &vy) == SPS_OK && sps_operator_from_matrix(A, &op) == SPS_OK &&
                     sps_operator_apply(op, mode, alpha, vx, beta, vy) == SPS_OK && sps_vector_get(vy, y) == SPS_OK;
    if (!good) {
        fprintf(stderr, "apply on %s: %s\n", sps_backend_name(sps_context_backend(c)), sps_context_error(c));
        tu_fill_nan(t, (size_t)nout, y);
    }
    if (ok) *ok = good;
    sps_operator_destroy(op);
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    return y;
}

int tu_spmv_check(sps_context c, const tu_csr *h, sps_matrix A, sps_op_mode mode, int ab, uint64_t seed,
                  double *worst, void **yout)
{
    const sps_scalar t = h->info.scalar;
    const size_t s = sps_scalar_size(t);
    const int n = h->info.rows, m = h->info.cols;
    const int nin = mode == SPS_OP_N ? m : n, nout = mode == SPS_OP_N ? n : m;
    tu_rng r;
    tu_rng_seed(&r, seed);
    void *x = tu_xcalloc((size_t)nin, s), *y0 = tu_xcalloc((size_t)nout, s);
    tu_fill_random(&r, t, (size_t)nin, x);
    if (ab == TU_AB_RANDOM) tu_fill_random(&r, t, (size_t)nout, y0);
    else tu_fill_nan(t, (size_t)nout, y0);
    tu_coefs k;
    tu_draw_coefs(&r, t, ab, &k);
    tu_spmv_ref ref;
    tu_spmv_ref_compute(h, mode, x, &ref);
    int ok;
    void *y = tu_apply(c, A, mode, t, nin, nout, x, y0, ab == TU_AB_DEFAULT ? NULL : k.alpha,
                       ab == TU_AB_DEFAULT ? NULL : k.beta, &ok);
    const long double ar = k.ar, ai = k.ai, br = k.br, bi = k.bi;
    *worst = 0;
    for (int o = 0; ok && o < nout; o++) {
        double yr, yi, y0r = 0, y0i = 0;
        tu_get(t, y, (size_t)o, &yr, &yi);
        if (ab == TU_AB_RANDOM) tu_get(t, y0, (size_t)o, &y0r, &y0i);
        const long double wr = ar * ref.re[o] - ai * ref.im[o] + br * (long double)y0r - bi * (long double)y0i;
        const long double wi = ar * ref.im[o] + ai * ref.re[o] + br * (long double)y0i + bi * (long double)y0r;
        const long double scale =
            (fabsl(ar) + fabsl(ai)) * ref.abs[o] + (fabsl(br) + fabsl(bi)) * (fabsl(y0r) + fabsl(y0i));
        const long double d = hypotl(yr - wr, yi - wi);
        const long double tol = 4 * (ref.cnt[o] + 4) * tu_eps(t) * scale;
        if (!(d <= tol)) ok = 0;
        if (scale > 0 && d / scale > *worst) *worst = (double)(d / scale);
        if (isnan((double)d)) *worst = NAN;
    }
    tu_spmv_ref_free(&ref);
    free(x);
    free(y0);
    if (yout) *yout = y;
    else free(y);
    return ok;
}

sps_options tu_fopts(sps_format f, ...)
{
    sps_options o = NULL;
    if (!TU_CHECK(sps_format_options_create(f, &o) == SPS_OK, "options of format %s", sps_format_name(f))) return NULL;
    va_list ap;
    va_start(ap, f);
    for (const char *name; (name = va_arg(ap, const char *)) != NULL;) {
        const char *value = va_arg(ap, const char *);
        TU_CHECK(sps_options_set(o, name, value) == SPS_OK, "%s: %s = %s: %s", sps_format_name(f), name, value,
                 sps_options_error(o));
    }
    va_end(ap);
    return o;
}

int tu_cpu_context(sps_context *ctx)
{
    if (sps_context_create(ctx, SPS_BACKEND_CPU, 0) == SPS_OK) return 0;
    fprintf(stderr, "cannot create a CPU context\n");
    return 1;
}

void *tu_precond_apply_host(sps_context ctx, sps_precond P, sps_scalar t, sps_index n, const void *x)
{
    sps_vector vx = NULL, vy = NULL;
    void *y = tu_xcalloc((size_t)n, sps_scalar_size(t));
    TU_OK(ctx, sps_vector_from_host(ctx, n, t, x, &vx));
    TU_OK(ctx, sps_vector_create(ctx, n, t, &vy));
    TU_OK(ctx, sps_precond_apply(P, vx, vy));
    TU_OK(ctx, sps_vector_get(vy, y));
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    return y;
}

int tu_solve_ones(sps_matrix A, const char *solver, sps_precond P)
{
    sps_context ctx = sps_matrix_context(A);
    sps_matrix_info_t info;
    sps_solver s = NULL;
    sps_operator op = NULL;
    sps_vector vb = NULL, vx = NULL;
    const double one[2] = {1, 0}, zero[2] = {0, 0}; /* the real part is read for real types */
    sps_result res;
    memset(&res, 0, sizeof res);
    int ok = TU_OK(ctx, sps_matrix_info(A, &info));
    const sps_index n = info.rows * (sps_index)sps_entry_dim(info.entry);
    ok = ok && TU_OK(ctx, sps_solver_create_by_name(ctx, solver, &s)) &&
         TU_OK(ctx, sps_operator_from_matrix(A, &op)) && TU_OK(ctx, sps_solver_set_operator(s, op)) &&
         (!P || TU_OK(ctx, sps_solver_set_precond(s, P))) &&
         TU_OK(ctx, sps_vector_create(ctx, n, info.scalar, &vb)) &&
         TU_OK(ctx, sps_vector_create(ctx, n, info.scalar, &vx)) && TU_OK(ctx, sps_vector_fill(vb, one)) &&
         TU_OK(ctx, sps_vector_fill(vx, zero)) && TU_OK(ctx, sps_solver_solve(s, vb, vx, &res));
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_operator_destroy(op);
    sps_solver_destroy(s);
    return ok ? res.iterations : -1;
}

void *tu_pool_values(tu_rng *r, sps_scalar t, int64_t nnz, int np)
{
    const size_t ss = sps_scalar_size(t);
    char *pool = tu_xcalloc((size_t)np, ss), *v = tu_xcalloc(nnz > 0 ? (size_t)nnz : 1, ss);
    tu_fill_random(r, t, (size_t)np, pool);
    memset(pool, 0, ss);
    if (np > 1) tu_put(t, pool, 1, -0.0, -0.0);
    for (int64_t k = 0; k < nnz; k++) memcpy(v + (size_t)k * ss, pool + (tu_rng_u64(r) % (uint64_t)np) * ss, ss);
    free(pool);
    return v;
}

int tu_distinct_values(sps_scalar t, const void *v, int64_t nnz, int zero_too)
{
    const size_t ss = sps_scalar_size(t);
    char *seen = tu_xcalloc((size_t)nnz + 1, ss), zero[16] = {0};
    int nd = 0;
    for (int64_t k = 0; k < nnz + (zero_too != 0); k++) {
        const char *e = k < nnz ? (const char *)v + (size_t)k * ss : zero;
        int q = 0;
        while (q < nd && memcmp(seen + (size_t)q * ss, e, ss) != 0) q++;
        if (q == nd) memcpy(seen + (size_t)nd++ * ss, e, ss);
    }
    free(seen);
    return nd;
}

sps_matrix tu_read_nonfinite(sps_context ctx, const char *mtx)
{
    sps_read_options ro = {.allow_nonfinite = 1};
    sps_matrix A = NULL;
    if (!TU_OK(ctx, sps_matrix_read_mtx_buffer(ctx, mtx, strlen(mtx), "nonfinite.mtx", SPS_F64, &ro, &A))) return NULL;
    sps_context_clear_error(ctx);
    return A;
}

sps_precond tu_precond_with(sps_context ctx, sps_matrix A, const char *name, const char *opt, const char *value)
{
    sps_precond P = NULL;
    if (!TU_OK(ctx, sps_precond_new(ctx, name, &P))) return NULL;
    if (opt) TU_OK(ctx, sps_precond_set_option(P, opt, value));
    if (sps_precond_setup(P, NULL, A) != SPS_OK) {
        sps_precond_destroy(P);
        return NULL;
    }
    return P;
}
