/* GPU tests of the CUDA SpMV kernels (csr_spmv, csr_spmv_dot, csr_spmv_xpay_dot, csr_spmvt, coo_spmv, coo_spmvt)
 * against the CPU kernels, for f32, f64, c32, c64, on
 *   - random matrices whose average row length walks the threads-per-row choices
 *     (1, 3, 5, 12, 40, 100 entries a row) and one of 1.2M rows (not with
 *     SPS_GPU_TEST_SMALL=1);
 *   - adversarial shapes: half the rows empty, one dense row of 200k entries
 *     among rows of 0..3 (two of 1M among 1M rows, past the merge path's one-launch
 *     fix-up, not with SPS_GPU_TEST_SMALL=1), 1x1, n x 1, 1 x n, all entries in one column, 0 x 5,
 *     no entries at all;
 *   - a few SuiteSparse matrices from argv[1] / SPS_MATRIX_DIR when present.
 * csr_spmv_merge (the merge-path schedule) runs on every matrix too: its plan
 * (csr_merge_plan) must equal the CPU's exactly, its carries are NaN-poisoned
 * before the first product, and power-law rows and long runs of empty rows
 * crossing tile borders are among the shapes.
 * Each op runs with b != 0 and with b == 0 on a NaN-poisoned y (y must not be
 * read).  Tolerance per entry: 2 (len + 4) eps(T) (|a| sum |a_ij x_j| + |b y_i|),
 * len the row (column) length.  csr_spmv and coo_spmv must be bit-identical
 * over two runs (csr_spmv with the same maxrow hint: a known longest row may widen
 * the lanes a row on few rows, which changes the order of the sums; without the
 * hint it must still be right); the public operator path (sps_matrix_from_csr on the CUDA
 * context, sps_matrix_convert to COO and to CSR with the explicit transpose,
 * sps_operator_apply N and T) is compared with the same on the CPU, and SpMV^T
 * through the explicit transpose is bit-identical over two runs.  Exit 77 (skipped) without a usable GPU. */
#include "test_gpu_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef SPS_HAVE_CUDA
typedef struct {
    char name[128];
    sps_index n, m;
    int64_t nnz;
    sps_index *rowptr, *col;
    double *val; /* nnz complex (re, im) pairs: converted to each type */
} hmat;

static void hm_free(hmat *A)
{
    free(A->rowptr);
    free(A->col);
    free(A->val);
    memset(A, 0, sizeof *A);
}

/* The longest row: the kernels' maxrow hint, as the CSR format passes it. */
static sps_index hm_maxrow(const hmat *A)
{
    sps_index longest = 0;
    for (sps_index i = 0; i < A->n; i++)
        if (A->rowptr[i + 1] - A->rowptr[i] > longest) longest = A->rowptr[i + 1] - A->rowptr[i];
    return longest;
}

static int cmp_idx(const void *a, const void *b)
{
    sps_index x = *(const sps_index *)a, y = *(const sps_index *)b;
    return (x > y) - (x < y);
}

/* Row i gets len(i) distinct sorted random columns (len <= m). */
typedef sps_index (*len_fn)(sps_index i, sps_index n, sps_index m, void *u);
static hmat hm_build(const char *name, sps_index n, sps_index m, len_fn len, void *u, int fixed_col)
{
    hmat A;
    memset(&A, 0, sizeof A);
    snprintf(A.name, sizeof A.name, "%s", name);
    A.n = n;
    A.m = m;
    A.rowptr = gb_xmalloc(((size_t)n + 1) * sizeof(sps_index));
    for (sps_index i = 0; i < n; i++) {
        sps_index l = len(i, n, m, u);
        if (l > m) l = m;
        A.rowptr[i + 1] = A.rowptr[i] + l;
    }
    A.nnz = A.rowptr[n];
    A.col = gb_xmalloc((size_t)(A.nnz ? A.nnz : 1) * sizeof(sps_index));
    A.val = gb_xmalloc((size_t)(A.nnz ? A.nnz : 1) * 2 * sizeof(double));
    char *mark = gb_xmalloc((size_t)m + 1);
    for (sps_index i = 0; i < n; i++) {
        const sps_index lo = A.rowptr[i], l = A.rowptr[i + 1] - lo;
        if (fixed_col >= 0 && l == 1) {
            A.col[lo] = fixed_col;
        } else if ((int64_t)l * 3 > m) { /* dense-ish: take a random subset in order */
            sps_index k = 0;
            for (sps_index j = 0; j < m && k < l; j++)
                if ((int64_t)(tu_rng_u64(&g_rng) % (uint64_t)(m - j)) < (int64_t)(l - k)) A.col[lo + k++] = j;
        } else {
            sps_index k = 0;
            while (k < l) {
                sps_index j = (sps_index)(tu_rng_u64(&g_rng) % (uint64_t)m);
                if (mark[j]) continue;
                mark[j] = 1;
                A.col[lo + k++] = j;
            }
            for (k = 0; k < l; k++) mark[A.col[lo + k]] = 0;
            qsort(A.col + lo, (size_t)l, sizeof(sps_index), cmp_idx);
        }
    }
    free(mark);
    for (int64_t k = 0; k < 2 * A.nnz; k++) A.val[k] = tu_rng_range(&g_rng, -1, 1);
    return A;
}

static sps_index len_avg(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)i; (void)n; (void)m;
    const int avg = *(int *)u;
    return (sps_index)(tu_rng_u64(&g_rng) % (uint64_t)(2 * avg + 1));
}
static sps_index len_halfempty(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)n; (void)m; (void)u;
    return (i % 2) ? 0 : 1 + (sps_index)(tu_rng_u64(&g_rng) % 10);
}
static sps_index len_denserow(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)n; (void)u;
    return i == 7 ? m : (sps_index)(tu_rng_u64(&g_rng) % 4);
}
/* two dense rows among rows of 0..3: with 10^6 rows the merge path has more tiles than
   its one-launch fix-up takes, and each dense row spans hundreds of them */
static sps_index len_denserows2(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)u;
    return i == 7 || i == n / 2 ? m : (sps_index)(tu_rng_u64(&g_rng) % 4);
}
static sps_index len_full(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)i; (void)n; (void)u;
    return m;
}
static sps_index len_one_or_none(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)n; (void)m; (void)u;
    return (i % 5 == 3) ? 0 : 1;
}
/* Pareto lengths (alpha 1.5, scale 2: mean about 6, rows up to m) */
static sps_index len_powerlaw(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)i; (void)n; (void)m; (void)u;
    const double v = 2.0 * pow(1.0 - tu_rng_range(&g_rng, 0, 1), -1.0 / 1.5);
    return v > (double)m ? m : (sps_index)v;
}
/* runs of 3000 empty rows between runs of 500 rows of 0..20 entries */
static sps_index len_emptyruns(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)n; (void)m; (void)u;
    return (i % 3500) < 3000 ? 0 : (sps_index)(tu_rng_u64(&g_rng) % 21);
}
static sps_index len_zero(sps_index i, sps_index n, sps_index m, void *u)
{
    (void)i; (void)n; (void)m; (void)u;
    return 0;
}

/* values of A as type t */
static void *vals_as(const hmat *A, sps_scalar t)
{
    void *v = gb_xmalloc((size_t)(A->nnz ? A->nnz : 1) * sps_scalar_size(t));
    for (int64_t k = 0; k < A->nnz; k++) {
        const double re = A->val[2 * k], im = A->val[2 * k + 1];
        switch (t) {
        case SPS_F32: ((float *)v)[k] = (float)re; break;
        case SPS_F64: ((double *)v)[k] = re; break;
        case SPS_C32: ((float *)v)[2 * k] = (float)re; ((float *)v)[2 * k + 1] = (float)im; break;
        default: ((double *)v)[2 * k] = re; ((double *)v)[2 * k + 1] = im; break;
        }
    }
    return v;
}

static double absat(sps_scalar t, const void *v, int64_t k)
{
    double re, im;
    tu_get(t, v, (size_t)k, &re, &im);
    return hypot(re, im);
}

/* csr_cg_iter (one CG iteration: the xpay_dot product, then cg_step) on the inputs of
 * the csr_spmv_xpay_dot check above, whose validated GPU results gpn, gq (and the CPU
 * oracle's hpn, hq with their tolerances ps, qs, dtol) it reuses:
 *   - p_new and q bit-identical to csr_spmv_xpay_dot's (the same rows, the same code);
 *   - pq within dtol of the CPU's; x, r, rr against the CPU's cg_step on its own p, q,
 *     pq, with the differences of alpha, p and q carried through (or, where pq <= 0,
 *     the guard's rr = -1, stop = 1 and x, r untouched on both);
 *   - the whole step bit-identical over two runs;
 *   - stopped on entry (slots[stop] = 1): x, r and rr untouched;
 *   - guard (rho <= 0): rr = -1, stop = 1, x and r untouched. */
enum { CI_PQ, CI_RR, CI_RHO, CI_RHO_OLD, CI_TOL2, CI_STOP, CI_N };
static void cg_iter_run(const hmat *A, sps_scalar t, const sps_index *drowptr, const sps_index *dcol, const void *dval,
                        sps_index maxrow, const gbuf *z, const gbuf *po, const sps_cplx *slots_in, const void *x0,
                        const void *r0,
                        void **pn, void **q, void **x, void **r, sps_cplx *slots)
{
    const sps_mat_kernels *G = &SPS_TEST_GPU_MAT[t];
    const size_t N = (size_t)A->n;
    gbuf gpn = gb_nan(t, N), gq = gb_nan(t, N), gx = gb_from(t, N, x0), gr = gb_from(t, N, r0);
    sps_cplx *dslot = gb_dalloc(CI_N * sizeof(sps_cplx));
    gb_upload(dslot, slots_in, CI_N * sizeof(sps_cplx));
    const sps_cg_slots ks = {CI_RHO, CI_PQ, CI_RR, CI_TOL2, CI_STOP};
    TU_OK(g_gpu, G->csr_cg_iter(sps_ex(g_gpu), A->n, A->nnz, drowptr, dcol, dval, maxrow, z->d,
                                (sps_scoef){1.0, CI_RHO, CI_RHO_OLD},
                                po->d, gpn.d, gq.d, gx.d, gr.d, dslot, ks));
    gb_download(slots, dslot, CI_N * sizeof(sps_cplx));
    *pn = gb_fetch(&gpn);
    *q = gb_fetch(&gq);
    *x = gb_fetch(&gx);
    *r = gb_fetch(&gr);
    gb_free(&gpn);
    gb_free(&gq);
    gb_free(&gx);
    gb_free(&gr);
    sps_dfree(g_gpu, dslot);
}

static void check_cg_iter(const hmat *A, sps_scalar t, const sps_index *drowptr, const sps_index *dcol,
                          const void *dval, const gbuf *z, const gbuf *po, const sps_cplx *coef, const void *xpn,
                          const void *hpn, const void *hq, const double *ps, const double *qs, double dtol)
{
    const sps_vec_kernels *C = &sps_cpu_vec_kernels[t];
    const size_t N = (size_t)A->n, S = sps_scalar_size(t);
    const double eps = tu_eps(t);
    char what[200];
    snprintf(what, sizeof what, "%s csr_cg_iter", A->name);
    void *x0 = gb_xmalloc(N * S + 1), *r0 = gb_xmalloc(N * S + 1);
    tu_fill_random(&g_rng, t, N, x0);
    tu_fill_random(&g_rng, t, N, r0);
    sps_cplx in[CI_N];
    for (int k = 0; k < CI_N; k++) in[k] = sps_cplx_make(NAN, NAN);
    in[CI_RHO] = coef[0]; /* beta = rho / rho_old as in the xpay_dot check (Re rho > 0) */
    in[CI_RHO_OLD] = coef[1];
    in[CI_TOL2] = sps_cplx_make(1e-30, 0);
    in[CI_STOP] = sps_cplx_make(0, 0);

    /* the CPU: cg_step on its own p, q, pq (the oracle of csr_cg_iter after xpay_dot) */
    sps_cplx hs[CI_N];
    memcpy(hs, in, sizeof hs);
    void *hx = gb_xmalloc(N * S + 1), *hr = gb_xmalloc(N * S + 1);
    memcpy(hx, x0, N * S);
    memcpy(hr, r0, N * S);
    TU_OK(g_cpu, C->dot(sps_ex(g_cpu), A->n, hpn, hq, hs, CI_PQ));
    const sps_cg_slots ks = {CI_RHO, CI_PQ, CI_RR, CI_TOL2, CI_STOP};
    TU_OK(g_cpu, C->cg_step(sps_ex(g_cpu), A->n, hs, ks, hpn, hq, hx, hr));

    void *gpn, *gq, *gx, *gr, *gpn2, *gq2, *gx2, *gr2;
    sps_cplx gs[CI_N], gs2[CI_N];
    /* with the true maxrow, then without (-1): the same bits */
    cg_iter_run(A, t, drowptr, dcol, dval, hm_maxrow(A), z, po, in, x0, r0, &gpn, &gq, &gx, &gr, gs);
    cg_iter_run(A, t, drowptr, dcol, dval, -1, z, po, in, x0, r0, &gpn2, &gq2, &gx2, &gr2, gs2);
    /* p_new is the same expression as csr_spmv_xpay_dot's; q's row groups may differ
     * (csr_cg_iter sizes them for latency), so q is checked against the CPU */
    TU_CHECK(N == 0 || memcmp(gpn, xpn, N * S) == 0, "%s: p_new bit-identical to csr_spmv_xpay_dot's", what);
    cmp_vec_s(what, t, N, gq, hq, 1, qs);
    TU_CHECK(memcmp(gs, gs2, sizeof gs) == 0 &&
                 (N == 0 || (memcmp(gx, gx2, N * S) == 0 && memcmp(gr, gr2, N * S) == 0)),
             "%s: bit-identical over two runs", what);
    cmp_slot(what, t, N, gs[CI_PQ], hs[CI_PQ], dtol);
    const double pq = hs[CI_PQ].re;
    if (pq > 4 * dtol) { /* a step on both */
        const double alpha = cabs_(in[CI_RHO]) / pq, ra = 2 * dtol / pq + 4 * eps; /* |alpha| and its relative error */
        double *sx = gb_xmalloc((N + 1) * sizeof(double)), *sr = gb_xmalloc((N + 1) * sizeof(double)), rrtol = 1e-300;
        for (size_t i = 0; i < N; i++) {
            const double pi = absat(t, hpn, (int64_t)i), qi = absat(t, hq, (int64_t)i);
            /* x_i + alpha p_i: rounding (8 ulps), alpha's error, p's error (ps: 8 ulps) */
            sx[i] = 8 * (absat(t, x0, (int64_t)i) + alpha * pi) + alpha * pi * ra / eps + alpha * 8 * ps[i] + 1e-300;
            sr[i] = 8 * (absat(t, r0, (int64_t)i) + alpha * qi) + alpha * qi * ra / eps + alpha * qs[i] + 1e-300;
            rrtol += 2 * absat(t, hr, (int64_t)i) * sr[i] * eps;
        }
        cmp_vec_s(what, t, N, gx, hx, 1, sx);
        cmp_vec_s(what, t, N, gr, hr, 1, sr);
        cmp_slot(what, t, N, gs[CI_RR], hs[CI_RR], rrtol + 1e-14 * hs[CI_RR].re);
        free(sx);
        free(sr);
    } else if (pq < -4 * dtol) { /* the guard on both */
        TU_CHECK(gs[CI_RR].re == -1.0 && gs[CI_STOP].re == 1.0 && hs[CI_RR].re == -1.0, "%s: pq %.3g <= 0 guard", what,
                 pq);
        TU_CHECK(N == 0 || (memcmp(gx, x0, N * S) == 0 && memcmp(gr, r0, N * S) == 0), "%s: guard: x, r untouched",
                 what);
    }
    free(gpn2); free(gq2); free(gx2); free(gr2);
    free(gpn); free(gq); free(gx); free(gr);

    /* stopped on entry: nothing of x, r, rr written */
    in[CI_STOP] = sps_cplx_make(1, 0);
    cg_iter_run(A, t, drowptr, dcol, dval, hm_maxrow(A), z, po, in, x0, r0, &gpn, &gq, &gx, &gr, gs);
    TU_CHECK(isnan(gs[CI_RR].re) && gs[CI_STOP].re == 1.0 &&
                 (N == 0 || (memcmp(gx, x0, N * S) == 0 && memcmp(gr, r0, N * S) == 0)),
             "%s: stopped on entry writes nothing (rr %g)", what, gs[CI_RR].re);
    free(gpn); free(gq); free(gx); free(gr);
    /* guard: rho <= 0 */
    in[CI_STOP] = sps_cplx_make(0, 0);
    in[CI_RHO] = sps_cplx_make(-1, 0);
    cg_iter_run(A, t, drowptr, dcol, dval, hm_maxrow(A), z, po, in, x0, r0, &gpn, &gq, &gx, &gr, gs);
    TU_CHECK(gs[CI_RR].re == -1.0 && gs[CI_STOP].re == 1.0 &&
                 (N == 0 || (memcmp(gx, x0, N * S) == 0 && memcmp(gr, r0, N * S) == 0)),
             "%s: rho <= 0 guard (rr %g, stop %g)", what, gs[CI_RR].re, gs[CI_STOP].re);
    free(gpn); free(gq); free(gx); free(gr);
    free(x0);
    free(r0);
    free(hx);
    free(hr);
}

/* One matrix, one type: the four kernels, both beta cases, determinism. */
static void run_matrix(const hmat *A, sps_scalar t, int check_bits)
{
    const sps_mat_kernels *G = &SPS_TEST_GPU_MAT[t], *C = &sps_cpu_mat_kernels[t];
    const size_t S = sps_scalar_size(t), nnz = (size_t)A->nnz;
    const sps_index maxrow = hm_maxrow(A); /* the hint the CSR format passes */
    void *val = vals_as(A, t);
    sps_index *row = gb_xmalloc((nnz ? nnz : 1) * sizeof(sps_index));
    for (sps_index i = 0; i < A->n; i++)
        for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) row[k] = i;
    sps_index *drowptr = gb_dalloc(((size_t)A->n + 1) * sizeof(sps_index));
    sps_index *dcol = gb_dalloc(nnz * sizeof(sps_index)), *drow = gb_dalloc(nnz * sizeof(sps_index));
    void *dval = gb_dalloc(nnz * S);
    gb_upload(drowptr, A->rowptr, ((size_t)A->n + 1) * sizeof(sps_index));
    gb_upload(dcol, A->col, nnz * sizeof(sps_index));
    gb_upload(drow, row, nnz * sizeof(sps_index));
    gb_upload(dval, val, nnz * S);

    /* row and column magnitudes for the tolerances */
    double *rsum = gb_xmalloc(((size_t)A->n + 1) * sizeof(double)),
           *csum = gb_xmalloc(((size_t)A->m + 1) * sizeof(double));
    double *rlen = gb_xmalloc(((size_t)A->n + 1) * sizeof(double)),
           *clen = gb_xmalloc(((size_t)A->m + 1) * sizeof(double));
    double *scale = gb_xmalloc(((size_t)(A->n > A->m ? A->n : A->m) + 1) * sizeof(double));

    /* the merge-path plan: the GPU's must be the CPU's; the carries after it NaN-poisoned */
    const size_t mbytes = sps_csr_merge_bytes(A->n, A->nnz, S), pbytes = sps_csr_merge_plan_bytes(A->n, A->nnz, S);
    void *dwork = gb_dalloc(mbytes), *hwork = gb_xmalloc(mbytes);
    {
        TU_OK(g_gpu, G->csr_merge_plan(sps_ex(g_gpu), A->n, A->nnz, drowptr, dwork));
        TU_OK(g_cpu, C->csr_merge_plan(sps_ex(g_cpu), A->n, A->nnz, A->rowptr, hwork));
        const size_t pn = (size_t)(2 * (sps_csr_merge_tiles(A->n, A->nnz, S) + 1)) * sizeof(sps_index);
        void *gp = gb_xmalloc(mbytes);
        gb_download(gp, dwork, pn);
        TU_CHECK(memcmp(gp, hwork, pn) == 0, "%s %s csr_merge_plan: the GPU's plan is the CPU's", A->name,
                 sps_scalar_name(t));
        free(gp);
        memset(hwork, 0xff, mbytes);
        gb_upload((unsigned char *)dwork + pbytes, hwork, mbytes - pbytes);
    }

    for (int trans = 0; trans < 2; trans++) {
        const sps_index nin = trans ? A->n : A->m, nout = trans ? A->m : A->n;
        for (int fmt = 0; fmt < 3; fmt++) {
            if (fmt == 2 && trans) continue; /* merge: op N only */
            for (int bz = 0; bz < 2; bz++) {
                char what[200];
                static const char *const kname[3] = {"csr_spmv", "coo_spmv", "csr_spmv_merge"};
                snprintf(what, sizeof what, "%s %s %s%s b%s", A->name, sps_scalar_name(t), kname[fmt],
                         trans ? "t" : "", bz ? "=0 (y poisoned)" : "!=0");
                const sps_cplx a = sps_cplx_make(tu_rng_range(&g_rng, 0.5, 2),
                                                 sps_scalar_is_complex(t) ? tu_rng_range(&g_rng, -1, 1) : 0);
                const sps_cplx b = bz ? sps_cplx_make(0, 0) : sps_cplx_make(tu_rng_range(&g_rng, -2, -0.5), 0.3);
                gbuf x = gb_rand(t, (size_t)nin), y = bz ? gb_nan(t, (size_t)nout) : gb_rand(t, (size_t)nout);
                /* scales */
                memset(rsum, 0, ((size_t)A->n + 1) * sizeof(double));
                memset(csum, 0, ((size_t)A->m + 1) * sizeof(double));
                memset(rlen, 0, ((size_t)A->n + 1) * sizeof(double));
                memset(clen, 0, ((size_t)A->m + 1) * sizeof(double));
                for (sps_index i = 0; i < A->n; i++)
                    for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                        const double v = absat(t, val, k);
                        if (trans) { csum[A->col[k]] += v * absat(t, x.h, i); clen[A->col[k]] += 1; }
                        else { rsum[i] += v * absat(t, x.h, A->col[k]); rlen[i] += 1; }
                    }
                for (sps_index i = 0; i < nout; i++) {
                    const double yi = bz ? 0 : absat(t, y.h, i);
                    const double len = trans ? clen[i] : rlen[i], sum = trans ? csum[i] : rsum[i];
                    scale[i] = 2 * (len + 4) * (cabs_(a) * sum + cabs_(b) * yi) + 1e-300;
                }
                sps_status st;
                if (!fmt) {
                    st = (trans ? G->csr_spmvt : G->csr_spmv)(sps_ex(g_gpu), A->n, A->m, A->nnz, drowptr, dcol, dval, maxrow,
                                                              a, x.d, b, y.d);
                    (trans ? C->csr_spmvt : C->csr_spmv)(sps_ex(g_cpu), A->n, A->m, A->nnz, A->rowptr, A->col, val, -1, a, x.h,
                                                         b, y.h);
                } else if (fmt == 1) {
                    st = (trans ? G->coo_spmvt : G->coo_spmv)(sps_ex(g_gpu), A->n, A->m, A->nnz, drow, dcol, dval, a, x.d, b,
                                                              y.d);
                    (trans ? C->coo_spmvt : C->coo_spmv)(sps_ex(g_cpu), A->n, A->m, A->nnz, row, A->col, val, a, x.h, b, y.h);
                } else {
                    st = G->csr_spmv_merge(sps_ex(g_gpu), A->n, A->m, A->nnz, drowptr, dcol, dval, dwork, a, x.d, b, y.d);
                    C->csr_spmv(sps_ex(g_cpu), A->n, A->m, A->nnz, A->rowptr, A->col, val, -1, a, x.h, b, y.h);
                }
                TU_OK(g_gpu, st);
                void *g = gb_fetch(&y);
                cmp_vec_s(what, t, (size_t)nout, g, y.h, 1, scale);
                /* a maxrow hint below the truth (0): the right product, the long rows through the
                   groups; no hint (-1): the right product, lanes a row not widened */
                for (int h = 0; h < 2 && fmt == 0 && bz; h++) {
                    gbuf y3 = gb_nan(t, (size_t)nout);
                    char w3[240];
                    snprintf(w3, sizeof w3, "%s, maxrow hint %d", what, h ? -1 : 0);
                    TU_OK(g_gpu, (trans ? G->csr_spmvt : G->csr_spmv)(sps_ex(g_gpu), A->n, A->m, A->nnz, drowptr, dcol, dval,
                                                                      h ? -1 : 0, a, x.d, b, y3.d));
                    void *g3 = gb_fetch(&y3);
                    cmp_vec_s(w3, t, (size_t)nout, g3, y.h, 1, scale);
                    free(g3);
                    gb_free(&y3);
                }
                /* bit-reproducibility of the deterministic kernels */
                if (check_bits && !trans && bz) {
                    gbuf y2 = gb_nan(t, (size_t)nout);
                    /* CSR: the same hint again (the hint may change the lanes a row, hence the bits) */
                    if (fmt == 0) st = G->csr_spmv(sps_ex(g_gpu), A->n, A->m, A->nnz, drowptr, dcol, dval, maxrow, a, x.d, b, y2.d);
                    else if (fmt == 1) st = G->coo_spmv(sps_ex(g_gpu), A->n, A->m, A->nnz, drow, dcol, dval, a, x.d, b, y2.d);
                    else st = G->csr_spmv_merge(sps_ex(g_gpu), A->n, A->m, A->nnz, drowptr, dcol, dval, dwork, a, x.d, b, y2.d);
                    TU_OK(g_gpu, st);
                    void *g2 = gb_fetch(&y2);
                    TU_CHECK(nout == 0 || memcmp(g, g2, (size_t)nout * S) == 0, "%s: bit-identical over two runs",
                             what);
                    free(g2);
                    gb_free(&y2);
                }
                free(g);
                gb_free(&x);
                gb_free(&y);
            }
        }
    }
    /* csr_spmv_dot (square): y = A x and x^H y in one pass, against the CPU oracle
     * (csr_spmv then dot); twice, for bit-reproducibility of y and of the dot */
    if (A->n == A->m) {
        char what[200];
        snprintf(what, sizeof what, "%s csr_spmv_dot", A->name);
        gbuf x = gb_rand(t, (size_t)A->n), y = gb_nan(t, (size_t)A->n), y2 = gb_nan(t, (size_t)A->n);
        sps_cplx *dslot = gb_dalloc(2 * sizeof(sps_cplx)), hslot[2], gslot[2];
        const sps_cplx nanc = sps_cplx_make(NAN, NAN), poison[2] = {nanc, nanc};
        gb_upload(dslot, poison, sizeof poison);
        TU_OK(g_gpu, G->csr_spmv_dot(sps_ex(g_gpu), A->n, A->nnz, drowptr, dcol, dval, maxrow, x.d, y.d, dslot, 0));
        TU_OK(g_gpu, G->csr_spmv_dot(sps_ex(g_gpu), A->n, A->nnz, drowptr, dcol, dval, -1, x.d, y2.d, dslot, 1)); /* no hint */
        TU_OK(g_cpu, C->csr_spmv_dot(sps_ex(g_cpu), A->n, A->nnz, A->rowptr, A->col, val, -1, x.h, y.h, hslot, 0));
        gb_download(gslot, dslot, sizeof gslot);
        double dtol = 1e-300, xy = 0;
        for (sps_index i = 0; i < A->n; i++) {
            double sum = 0, len = 0;
            for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++, len++) sum += absat(t, val, k) * absat(t, x.h, A->col[k]);
            scale[i] = 2 * (len + 4) * sum + 1e-300;
            dtol += absat(t, x.h, i) * scale[i] * tu_eps(t);
            xy += absat(t, x.h, i) * absat(t, y.h, i);
        }
        dtol += 4 * sqrt((double)A->n + 1) * 1.2e-16 * xy;
        void *g = gb_fetch(&y), *g2 = gb_fetch(&y2);
        cmp_vec_s(what, t, (size_t)A->n, g, y.h, 1, scale);
        const double dre = gslot[0].re - hslot[0].re, dim = gslot[0].im - hslot[0].im;
        TU_CHECK(sqrt(dre * dre + dim * dim) <= dtol, "%s: dot gpu (%.17g, %.17g) cpu (%.17g, %.17g) tol %.3g", what,
                 gslot[0].re, gslot[0].im, hslot[0].re, hslot[0].im, dtol);
        TU_CHECK(memcmp(&gslot[0], &gslot[1], sizeof gslot[0]) == 0 &&
                     (A->n == 0 || memcmp(g, g2, (size_t)A->n * S) == 0),
                 "%s: bit-identical over two runs", what);
        free(g);
        free(g2);
        gb_free(&x);
        gb_free(&y);
        gb_free(&y2);
        sps_dfree(g_gpu, dslot);
    }
    /* csr_spmv_xpay_dot (square): pnew = z + c pold (c = slots[2] / slots[3]), q = A pnew,
     * slots[0] = pnew^H q, against the CPU oracle (waxpy_s, then csr_spmv_dot) */
    if (A->n == A->m) {
        char what[200];
        snprintf(what, sizeof what, "%s csr_spmv_xpay_dot", A->name);
        const size_t N = (size_t)A->n;
        gbuf z = gb_rand(t, N), po = gb_rand(t, N), pn = gb_nan(t, N), q = gb_nan(t, N);
        void *hpn = gb_xmalloc(N * S + 1), *hq = gb_xmalloc(N * S + 1);
        sps_cplx hs[4], gs[4];
        const int cp = sps_scalar_is_complex(t);
        hs[0] = sps_cplx_make(NAN, NAN);
        hs[1] = sps_cplx_make(0, 0);
        hs[2] = sps_cplx_make(tu_rng_range(&g_rng, 0.5, 2), cp ? tu_rng_range(&g_rng, -1, 1) : 0);
        hs[3] = sps_cplx_make(tu_rng_range(&g_rng, 0.5, 2), cp ? tu_rng_range(&g_rng, -1, 1) : 0);
        sps_cplx *dslot = gb_dalloc(sizeof hs);
        gb_upload(dslot, hs, sizeof hs);
        const sps_scoef cf = {1.0, 2, 3};
        TU_OK(g_gpu, G->csr_spmv_xpay_dot(sps_ex(g_gpu), A->n, A->nnz, drowptr, dcol, dval, maxrow, z.d, cf, po.d, pn.d, q.d,
                                          dslot, 0));
        TU_OK(g_cpu, C->csr_spmv_xpay_dot(sps_ex(g_cpu), A->n, A->nnz, A->rowptr, A->col, val, -1, z.h, cf, po.h, hpn, hq, hs,
                                          0));
        gb_download(gs, dslot, sizeof gs);
        const double cm = sqrt((hs[2].re * hs[2].re + hs[2].im * hs[2].im) / (hs[3].re * hs[3].re + hs[3].im * hs[3].im));
        /* pnew_i: one multiply-add (the GPU may fuse it): 4 ulps of |z_i| + |c| |pold_i|; 8 for
         * complex (each component of c pold rounds two products, and c itself is rounded to T) */
        double *ps = gb_xmalloc((N + 1) * sizeof(double));
        for (size_t i = 0; i < N; i++) ps[i] = absat(t, z.h, (int64_t)i) + cm * absat(t, po.h, (int64_t)i) + 1e-300;
        void *gpn = gb_fetch(&pn), *gq = gb_fetch(&q);
        cmp_vec_s(what, t, N, gpn, hpn, cp ? 8 : 4, ps);
        /* q_i: the row sum over the GPU's pnew (which differs from the CPU's by the above) */
        double dtol = 1e-300, xy = 0;
        for (sps_index i = 0; i < A->n; i++) {
            double sum = 0, len = 0;
            for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++, len++) sum += absat(t, val, k) * ps[A->col[k]];
            scale[i] = 2 * (len + 4) * sum + 1e-300;
            dtol += ps[i] * scale[i] * tu_eps(t) + absat(t, hq, i) * (cp ? 8 : 4) * ps[i] * tu_eps(t);
            xy += ps[i] * absat(t, hq, i);
        }
        dtol += 4 * sqrt((double)A->n + 1) * 1.2e-16 * xy;
        cmp_vec_s(what, t, N, gq, hq, 1, scale);
        const double dre = gs[0].re - hs[0].re, dim = gs[0].im - hs[0].im;
        TU_CHECK(sqrt(dre * dre + dim * dim) <= dtol, "%s: dot gpu (%.17g, %.17g) cpu (%.17g, %.17g) tol %.3g", what,
                 gs[0].re, gs[0].im, hs[0].re, hs[0].im, dtol);
        check_cg_iter(A, t, drowptr, dcol, dval, &z, &po, hs + 2, gpn, hpn, hq, ps, scale, dtol);
        free(ps);
        free(gpn);
        free(gq);
        free(hpn);
        free(hq);
        gb_free(&z);
        gb_free(&po);
        gb_free(&pn);
        gb_free(&q);
        sps_dfree(g_gpu, dslot);
    }
    free(rsum);
    free(csum);
    free(rlen);
    free(clen);
    free(scale);
    sps_dfree(g_gpu, drowptr);
    sps_dfree(g_gpu, dcol);
    sps_dfree(g_gpu, drow);
    sps_dfree(g_gpu, dval);
    sps_dfree(g_gpu, dwork);
    free(hwork);
    free(val);
    free(row);
}

static void run_all_types(const hmat *A, int check_bits)
{
    const sps_scalar ts[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};
    for (int k = 0; k < 4; k++) run_matrix(A, ts[k], check_bits);
}

/* The public path: matrices made on each context, CSR and COO, operator apply N and T. */
static void test_public_path(const hmat *A)
{
    const sps_scalar t = SPS_F64;
    void *val = vals_as(A, t);
    sps_matrix Ac = NULL, Ag = NULL, Bc = NULL, Bg = NULL;
    TU_OK(g_cpu, sps_matrix_from_csr(g_cpu, A->n, A->m, A->rowptr, A->col, val, t, &Ac));
    TU_OK(g_gpu, sps_matrix_from_csr(g_gpu, A->n, A->m, A->rowptr, A->col, val, t, &Ag));
    TU_OK(g_cpu, sps_matrix_convert(Ac, SPS_FMT_COO, NULL, &Bc));
    TU_OK(g_gpu, sps_matrix_convert(Ag, SPS_FMT_COO, NULL, &Bg));
    /* CSR with the cached explicit transpose: SpMV^T by the row kernel, deterministic */
    sps_matrix Tc = NULL, Tg = NULL;
    sps_options topt = tu_fopts(SPS_FMT_CSR, "transpose", "explicit", NULL);
    TU_OK(g_cpu, sps_matrix_convert(Ac, SPS_FMT_CSR, topt, &Tc));
    TU_OK(g_gpu, sps_matrix_convert(Ag, SPS_FMT_CSR, topt, &Tg));
    sps_options_destroy(topt);
    /* CSR by the merge path (the CPU builds the plan and multiplies rows) */
    sps_matrix Mc = NULL, Mg = NULL;
    sps_options mopt = tu_fopts(SPS_FMT_CSR, "csr-kernel", "merge", NULL);
    TU_OK(g_cpu, sps_matrix_convert(Ac, SPS_FMT_CSR, mopt, &Mc));
    TU_OK(g_gpu, sps_matrix_convert(Ag, SPS_FMT_CSR, mopt, &Mg));
    {
        sps_matrix_info_t ic, ig;
        TU_OK(g_cpu, sps_matrix_info(Ac, &ic));
        TU_OK(g_gpu, sps_matrix_info(Mg, &ig));
        /* the merge plan and, on the GPU, Hola's row starts for SpMV^T */
#ifdef SPS_GPU_TEST_ON_CPU
        const size_t hola_rs = 0;
#else
        const size_t hola_rs = sps_hola_row_starts_bytes(A->nnz, sps_scalar_size(t));
#endif
        TU_CHECK(ig.bytes == ic.bytes + sps_csr_merge_bytes(A->n, A->nnz, sps_scalar_size(t)) + hola_rs,
                 "%s: the merge plan and Hola's row starts are in CSR's footprint (%zu vs %zu)", A->name, ig.bytes,
                 ic.bytes);
        /* auto: the merge path on the GPU exactly when the longest row is > 64 and > 16 x the average */
        const sps_index longest = hm_maxrow(A);
        const int irregular = longest > 64 && (double)longest > SPS_CSR_MERGE_RATIO * ((double)A->nnz / A->n);
        sps_matrix_info_t ia;
        TU_OK(g_gpu, sps_matrix_info(Ag, &ia));
        TU_CHECK(ia.bytes == (irregular ? ig.bytes : ic.bytes), "%s: auto %s the merge path (longest row %d)",
                 A->name, irregular ? "takes" : "does not take", (int)longest);
    }
    TU_CHECK(sps_options_set(mopt, "csr-kernel", "7") == SPS_ERR_ARG, "csr-kernel 7 refused with SPS_ERR_ARG");
    sps_options_destroy(mopt);
    sps_matrix mc[4] = {Ac, Bc, Tc, Mc}, mg[4] = {Ag, Bg, Tg, Mg};
    const char *fname[4] = {"csr", "coo", "csr+explicit A^T", "csr (merge path)"};
    for (int f = 0; f < 4; f++) {
        if (!mc[f] || !mg[f]) continue;
        sps_operator oc = NULL, og = NULL;
        TU_OK(g_cpu, sps_operator_from_matrix(mc[f], &oc));
        TU_OK(g_gpu, sps_operator_from_matrix(mg[f], &og));
        for (int tr = 0; tr < 2; tr++) {
            const sps_index nin = tr ? A->n : A->m, nout = tr ? A->m : A->n;
            double *xh = gb_xmalloc((size_t)nin * sizeof(double)), *yh = gb_xmalloc((size_t)nout * sizeof(double));
            double *yc = gb_xmalloc((size_t)nout * sizeof(double)), *yg = gb_xmalloc((size_t)nout * sizeof(double));
            tu_fill_random(&g_rng, t, (size_t)nin, xh);
            tu_fill_random(&g_rng, t, (size_t)nout, yh);
            sps_vector xc, yvc, xg, yvg;
            TU_OK(g_cpu, sps_vector_from_host(g_cpu, nin, t, xh, &xc));
            TU_OK(g_cpu, sps_vector_from_host(g_cpu, nout, t, yh, &yvc));
            TU_OK(g_gpu, sps_vector_from_host(g_gpu, nin, t, xh, &xg));
            TU_OK(g_gpu, sps_vector_from_host(g_gpu, nout, t, yh, &yvg));
            const double al = 1.25, be = -0.5;
            TU_OK(g_cpu, sps_operator_apply(oc, tr ? SPS_OP_T : SPS_OP_N, &al, xc, &be, yvc));
            TU_OK(g_gpu, sps_operator_apply(og, tr ? SPS_OP_T : SPS_OP_N, &al, xg, &be, yvg));
            TU_OK(g_cpu, sps_vector_get(yvc, yc));
            TU_OK(g_gpu, sps_vector_get(yvg, yg));
            char what[160];
            snprintf(what, sizeof what, "operator %s %s apply %s", A->name, fname[f], tr ? "T" : "N");
            cmp_vec(what, t, (size_t)nout, yg, yc, 64.0 * 1000, gb_maxabs(t, (size_t)nout, yc) + 1);
            if ((f == 2 && tr) || (f == 3 && !tr)) { /* deterministic: the same bits again */
                double *y2 = gb_xmalloc((size_t)nout * sizeof(double));
                TU_OK(g_gpu, sps_vector_set(yvg, yh));
                TU_OK(g_gpu, sps_operator_apply(og, tr ? SPS_OP_T : SPS_OP_N, &al, xg, &be, yvg));
                TU_OK(g_gpu, sps_vector_get(yvg, y2));
                TU_OK(g_gpu, sps_vector_set(yvg, yh));
                TU_OK(g_gpu, sps_operator_apply(og, tr ? SPS_OP_T : SPS_OP_N, &al, xg, &be, yvg));
                TU_OK(g_gpu, sps_vector_get(yvg, yg));
                TU_CHECK(memcmp(y2, yg, (size_t)nout * sizeof(double)) == 0, "%s: bit-identical over two runs", what);
                free(y2);
            }
            sps_vector_destroy(xc);
            sps_vector_destroy(yvc);
            sps_vector_destroy(xg);
            sps_vector_destroy(yvg);
            free(xh);
            free(yh);
            free(yc);
            free(yg);
        }
        sps_operator_destroy(oc);
        sps_operator_destroy(og);
    }
    sps_matrix_destroy(Ac);
    sps_matrix_destroy(Ag);
    sps_matrix_destroy(Bc);
    sps_matrix_destroy(Bg);
    sps_matrix_destroy(Tc);
    sps_matrix_destroy(Tg);
    sps_matrix_destroy(Mc);
    sps_matrix_destroy(Mg);
    free(val);
}

/* A few files of the SuiteSparse corpus (small ones, mixed groups). */
static void test_files(const char *dir)
{
    char manifest[1024];
    snprintf(manifest, sizeof manifest, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(manifest, "r");
    if (!f) {
        printf("test_gpu_spmv: no %s: files skipped\n", manifest);
        return;
    }
    char line[4096];
    int used = 0;
    while (used < 6 && fgets(line, sizeof line, f)) {
        char name[100], group[20], field[64];
        long rows, cols, nnzf;
        char sym[64];
        if (sscanf(line, "%99s %19s %ld %ld %ld %63s %63s", name, group, &rows, &cols, &nnzf, sym, field) != 7)
            continue;
        if (strcmp(name, "name") == 0 || nnzf > 400000) continue;
        char path[2048];
        const char *ext[2] = {".mtx.gz", ".mtx"};
        sps_matrix M = NULL;
        for (int e = 0; e < 2 && !M; e++) {
            snprintf(path, sizeof path, "%s/%s/%s%s", dir, group, name, ext[e]);
            FILE *probe = fopen(path, "rb");
            if (!probe) continue;
            fclose(probe);
            if (sps_matrix_read_mtx(g_cpu, path, SPS_C64, &M) != SPS_OK) {
                TU_CHECK(0, "read %s: %s", path, sps_context_error(g_cpu));
                M = NULL;
            }
        }
        if (!M) continue;
        sps_matrix_info_t info;
        TU_OK(g_cpu, sps_matrix_info(M, &info));
        hmat A;
        memset(&A, 0, sizeof A);
        snprintf(A.name, sizeof A.name, "%s/%s", group, name);
        A.n = info.rows;
        A.m = info.cols;
        A.nnz = info.nnz;
        A.rowptr = gb_xmalloc(((size_t)A.n + 1) * sizeof(sps_index));
        A.col = gb_xmalloc((size_t)(A.nnz ? A.nnz : 1) * sizeof(sps_index));
        A.val = gb_xmalloc((size_t)(A.nnz ? A.nnz : 1) * 2 * sizeof(double));
        TU_OK(g_cpu, sps_matrix_export_csr(M, A.rowptr, A.col, A.val));
        sps_matrix_destroy(M);
        printf("test_gpu_spmv: %s (%d x %d, %lld entries)\n", A.name, (int)A.n, (int)A.m, (long long)A.nnz);
        run_all_types(&A, used == 0);
        hm_free(&A);
        used++;
    }
    fclose(f);
    TU_CHECK(used > 0, "at least one matrix of %s read", dir);
}

int main(int argc, char **argv)
{
    int rc = gpu_setup("test_gpu_spmv");
    if (rc) return rc;
    const int avgs[6] = {1, 3, 5, 12, 40, 100};
    const sps_index dims[6][2] = {{1000, 1000}, {2000, 1500}, {5000, 5000}, {3000, 4000}, {1000, 1000}, {500, 800}};
    for (int k = 0; k < 6; k++) {
        char nm[64];
        snprintf(nm, sizeof nm, "random %dx%d avg %d", (int)dims[k][0], (int)dims[k][1], avgs[k]);
        int avg = avgs[k];
        hmat A = hm_build(nm, dims[k][0], dims[k][1], len_avg, &avg, -1);
        run_all_types(&A, k == 2);
        if (k == 2) test_public_path(&A);
        hm_free(&A);
    }
    if (!g_small) {
        int avg = 5;
        hmat A = hm_build("random 1.2M rows avg 5", 1200000, 1200000, len_avg, &avg, -1);
        run_all_types(&A, 1);
        hm_free(&A);
        hmat D = hm_build("two dense rows of 1M", 1000000, 1000000, len_denserows2, NULL, -1);
        run_all_types(&D, 1);
        hm_free(&D);
    }
    {
        hmat A = hm_build("power-law rows", 60000, 60000, len_powerlaw, NULL, -1);
        run_all_types(&A, 1);
        test_public_path(&A); /* auto picks the merge path on the GPU here */
        hm_free(&A);
        hmat B = hm_build("runs of empty rows", 40000, 40000, len_emptyruns, NULL, -1);
        run_all_types(&B, 1);
        hm_free(&B);
    }
    {
        hmat A = hm_build("half rows empty", 10000, 10000, len_halfempty, NULL, -1);
        run_all_types(&A, 0);
        hm_free(&A);
    }
    {
        const sps_index nd = g_small ? 20000 : 200000;
        hmat A = hm_build(g_small ? "dense row of 20k" : "dense row of 200k", nd, nd, len_denserow, NULL, -1);
        run_all_types(&A, 1);
        hm_free(&A);
    }
    {
        hmat A = hm_build("1x1", 1, 1, len_full, NULL, -1);
        run_all_types(&A, 0);
        hm_free(&A);
    }
    {
        hmat A = hm_build("1000x1", 1000, 1, len_one_or_none, NULL, -1);
        run_all_types(&A, 0);
        hm_free(&A);
    }
    {
        hmat A = hm_build("1x100000", 1, 100000, len_full, NULL, -1);
        run_all_types(&A, 1);
        hm_free(&A);
    }
    {
        hmat A = hm_build("one column", 50000, 1000, len_one_or_none, NULL, 3);
        run_all_types(&A, 1);
        hm_free(&A);
    }
    {
        hmat A = hm_build("0x5", 0, 5, len_zero, NULL, -1);
        run_all_types(&A, 0);
        hm_free(&A);
        hmat B = hm_build("10x10 empty", 10, 10, len_zero, NULL, -1);
        run_all_types(&B, 0);
        hm_free(&B);
    }
    const char *dir = tu_matrix_dir(argc, argv, 1);
    if (dir) test_files(dir);
    else printf("test_gpu_spmv: no matrix directory: files skipped\n");
    gpu_teardown();
    return tu_finish();
}
#else
int main(void)
{
    printf("test_gpu_spmv: libspsolve built without CUDA: skipped\n");
    return TU_SKIP;
}
#endif
