/* sps_matrix_from_coo_entries_device (formats/assemble.c; kernels coo_sort,
 * coo_compress, coo_sum): the matrix built from triplets in the context's memory
 * equals, bit for bit, the one the host builder (sps_matrix_from_coo_entries)
 * makes of the same triplets on the CPU context, for every entry type and scalar:
 * scalar f32/f64/c32/c64, blocks b = 2, 3, 4, 8 in all four, quaternions q32/q64.
 * Triplets: random, in random order, with many duplicates (each pair up to 6
 * times), empty rows and columns, -0.0 values (the sum starts from the first term,
 * so a lone -0.0 stays -0.0), sizes 0 x 0, 1 x 1, tall, wide, and one of 300k
 * triplets; on the GPU the sums also match the CPU's exactly.  The errors: a row or
 * column out of range (SPS_ERR_ARG naming the triplet), a NaN / Inf value
 * (SPS_ERR_NUMERIC naming it), an f32 or f64 sum that overflows, a negative nnz, NULL
 * arrays; the build leaves nothing behind (the caller's arrays unchanged).
 *
 * sps_matrix_from_csr_entries_device: the host builder's CSR arrays, put in the
 * context's memory, give the same matrix bit for bit (every entry type and scalar);
 * bad arrays are refused naming the row (decreasing or out-of-range pointers, a
 * column out of range, unsorted or repeated columns) or the entry (a NaN).
 *
 * Built twice: test_assemble (label unit) runs it on the CPU backend, where the
 * "device" is the host; test_gpu_assemble (label gpu, SPS_ASSEMBLE_GPU) on the
 * CUDA backend with the triplets in device memory, and exits 77 (skipped) without
 * a usable GPU.  Ends with "N passed, M failed". */
#include "formats/format.h"
#include "testutil.h"
#ifdef SPS_ASSEMBLE_GPU
#include "test_gpu_util.h"
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context g_ref, g_dev; /* the host builder's context (CPU), the one under test */
static tu_rng r_rng;

static int rnd(int k) { return k > 0 ? (int)(tu_rng_u64(&r_rng) % (uint64_t)k) : 0; }

/* Copies of host arrays in g_dev's memory (device memory on the GPU). */
static void *to_dev(const void *h, size_t bytes)
{
#ifdef SPS_ASSEMBLE_GPU
    void *d = gb_dalloc(bytes ? bytes : 1);
    if (bytes) gb_upload(d, h, bytes);
    return d;
#else
    void *d = tu_xcalloc(bytes ? bytes : 1, 1);
    if (bytes) memcpy(d, h, bytes);
    return d;
#endif
}
static void dev_free(void *d)
{
#ifdef SPS_ASSEMBLE_GPU
    sps_dfree(g_dev, d);
#else
    free(d);
#endif
}

typedef struct {
    int64_t nnz;
    sps_index *row, *col;
    void *val; /* nnz entries of sps_entry_values(e) scalars of t */
} triplets;

/* nnz triplets over n x m: distinct pairs drawn first, each repeated 1..6 times, all shuffled;
 * some values -0.0 (for scalars and complex parts alike). */
static triplets make_triplets(int n, int m, int64_t nnz, sps_entry_desc e, sps_scalar t)
{
    triplets T = {nnz, tu_xcalloc((size_t)nnz + 1, sizeof(sps_index)), tu_xcalloc((size_t)nnz + 1, sizeof(sps_index)),
                  NULL};
    const size_t per = (size_t)sps_entry_values(e);
    T.val = tu_xcalloc((size_t)nnz * per + 1, sps_scalar_size(t));
    tu_fill_random(&r_rng, t, (size_t)nnz * per, T.val);
    for (int64_t k = 0; k < nnz;) {
        const sps_index i = (sps_index)rnd(n), j = (sps_index)rnd(m);
        for (int d = 1 + rnd(6); d > 0 && k < nnz; d--, k++) {
            T.row[k] = i;
            T.col[k] = j;
        }
    }
    for (int64_t k = nnz - 1; k > 0; k--) { /* shuffle the triplets (values stay where they were drawn) */
        const int64_t o = (int64_t)(tu_rng_u64(&r_rng) % (uint64_t)(k + 1));
        const sps_index ri = T.row[k], ci = T.col[k];
        T.row[k] = T.row[o], T.col[k] = T.col[o];
        T.row[o] = ri, T.col[o] = ci;
    }
    for (int64_t k = 0; k < nnz; k += 1 + rnd(7)) tu_put(t, T.val, (size_t)k * per, -0.0, -0.0);
    return T;
}
static void free_triplets(triplets *T)
{
    free(T->row);
    free(T->col);
    free(T->val);
}

/* Build from T on g_dev (arrays copied to its memory) into *A; the host builder's on g_ref into *R. */
static sps_status build_both(int n, int m, const triplets *T, sps_entry_desc e, sps_scalar t, sps_matrix *A,
                             sps_matrix *R, sps_status *rst)
{
    const size_t vb = (size_t)T->nnz * sps_entry_values(e) * sps_scalar_size(t);
    sps_index *dr = to_dev(T->row, (size_t)T->nnz * sizeof(sps_index)),
              *dc = to_dev(T->col, (size_t)T->nnz * sizeof(sps_index));
    void *dv = to_dev(T->val, vb);
    *A = *R = NULL;
    const sps_status st = sps_matrix_from_coo_entries_device(g_dev, n, m, T->nnz, dr, dc, dv, e, t, A);
    *rst = sps_matrix_from_coo_entries(g_ref, n, m, T->nnz, T->row, T->col, T->val, e, t, R);
    dev_free(dr);
    dev_free(dc);
    dev_free(dv);
    return st;
}

static void check_equal(int n, int m, int64_t nnz, sps_entry_desc e, sps_scalar t)
{
    char what[128];
    snprintf(what, sizeof what, "%s %s, %d x %d, %lld triplets", sps_entry_name(e), sps_scalar_name(t), n, m,
             (long long)nnz);
    triplets T = make_triplets(n, m, nnz, e, t);
    sps_matrix A, R;
    sps_status rst;
    const sps_status st = build_both(n, m, &T, e, t, &A, &R, &rst);
    if (TU_OK(g_dev, st) && TU_OK(g_ref, rst)) {
        sps_matrix_info_t ia, ir;
        TU_CHECK(sps_matrix_info(A, &ia) == SPS_OK && sps_matrix_info(R, &ir) == SPS_OK &&
                     ia.format == (e.kind == SPS_ENTRY_SCALAR ? SPS_FMT_CSR : SPS_FMT_BCSR) && ia.nnz == ir.nnz &&
                     ia.rows == ir.rows && ia.cols == ir.cols,
                 "%s: format and sizes", what);
        tu_csr want;
        if (tu_export_csr(g_ref, R, &want)) {
            TU_CHECK_EXPORT(g_dev, A, &want, "%s: equals the host builder's bit for bit", what);
            /* the same CSR arrays handed over in the context's memory */
            sps_matrix C = NULL;
            const size_t vb = (size_t)ir.nnz * sps_entry_values(e) * sps_scalar_size(t);
            sps_index *drp = to_dev(want.rowptr, ((size_t)n + 1) * sizeof(sps_index)),
                      *dcol = to_dev(want.col, (size_t)ir.nnz * sizeof(sps_index));
            void *dval = to_dev(want.val, vb);
            if (TU_OK(g_dev, sps_matrix_from_csr_entries_device(g_dev, n, m, ir.nnz, drp, dcol, dval, e, t, &C)))
                TU_CHECK_EXPORT(g_dev, C, &want, "%s: from its CSR arrays in the context's memory, bit for bit", what);
            sps_matrix_destroy(C);
            dev_free(drp);
            dev_free(dcol);
            dev_free(dval);
            tu_csr_free(&want);
        }
    }
    TU_DESTROY_MATRICES(A, R);
    free_triplets(&T);
}

/* One bad triplet at position k: the status and a message naming it. */
static void check_refused(const char *what, triplets *T, int n, int m, sps_entry_desc e, sps_scalar t, sps_status want,
                          const char *needle)
{
    sps_matrix A, R;
    sps_status rst;
    const sps_status st = build_both(n, m, T, e, t, &A, &R, &rst);
    const char *msg = sps_context_error(g_dev);
    TU_CHECK(st == want && rst == want && !A && msg && strstr(msg, needle),
             "%s: %s (want %s), message '%s' names '%s'", what, sps_status_name(st), sps_status_name(want),
             msg ? msg : "", needle);
    sps_context_clear_error(g_dev);
    sps_context_clear_error(g_ref);
    TU_DESTROY_MATRICES(A, R);
}

/* sps_matrix_from_csr_entries_device on host arrays rp/col/val (copied to the context's memory):
 * the status and a message naming the row or entry. */
static void check_csr_refused(const char *what, int n, int m, int nnz, const sps_index *rp, const sps_index *col,
                              const double *val, sps_status want, const char *needle)
{
    sps_index *drp = to_dev(rp, ((size_t)n + 1) * sizeof *rp), *dcol = to_dev(col, (size_t)nnz * sizeof *col);
    double *dval = to_dev(val, (size_t)nnz * 9 * sizeof *val);
    sps_matrix A = (sps_matrix)1;
    const sps_status st =
        sps_matrix_from_csr_entries_device(g_dev, n, m, nnz, drp, dcol, dval, sps_entry_block(3), SPS_F64, &A);
    const char *msg = sps_context_error(g_dev);
    TU_CHECK(st == want && !A && msg && strstr(msg, needle), "CSR arrays, %s: %s (want %s), message '%s' names '%s'",
             what, sps_status_name(st), sps_status_name(want), msg ? msg : "", needle);
    sps_context_clear_error(g_dev);
    sps_matrix_destroy(A == (sps_matrix)1 ? NULL : A);
    dev_free(drp);
    dev_free(dcol);
    dev_free(dval);
}

static void check_csr_errors(void)
{
    /* 4 rows of 3x3 blocks: rows 0..3 hold 2, 0, 3, 1 blocks */
    sps_index rp[5] = {0, 2, 2, 5, 6}, col[6] = {0, 3, 0, 1, 2, 3};
    double val[54];
    for (int k = 0; k < 54; k++) val[k] = 1.0 + k;
    check_csr_refused("a column out of range", 4, 4, 6, rp, (sps_index[]){0, 3, 0, 1, 4, 3}, val, SPS_ERR_ARG,
                      "row 2:");
    check_csr_refused("unsorted columns", 4, 4, 6, rp, (sps_index[]){0, 3, 0, 2, 1, 3}, val, SPS_ERR_ARG, "row 2:");
    check_csr_refused("a repeated column", 4, 4, 6, rp, (sps_index[]){3, 3, 0, 1, 2, 3}, val, SPS_ERR_ARG, "row 0:");
    check_csr_refused("decreasing pointers", 4, 4, 6, (sps_index[]){0, 2, 1, 5, 6}, col, val, SPS_ERR_ARG, "row 1:");
    check_csr_refused("a pointer beyond nnz", 4, 4, 6, (sps_index[]){0, 2, 2, 7, 6}, col, val, SPS_ERR_ARG, "row 2:");
    check_csr_refused("rowptr[n] != nnz", 4, 4, 6, (sps_index[]){0, 2, 2, 5, 5}, col, val, SPS_ERR_ARG, "rowptr[4]");
    val[9 * 4 + 7] = INFINITY;
    check_csr_refused("an infinite value", 4, 4, 6, rp, col, val, SPS_ERR_NUMERIC, "entry 4 (element 7)");
    sps_matrix A = (sps_matrix)1;
    TU_CHECK(sps_matrix_from_csr_entries_device(g_dev, 3, 3, 2, NULL, NULL, NULL, sps_entry_scalar(), SPS_F64, &A) ==
                     SPS_ERR_ARG && !A,
             "CSR arrays: NULL arrays refused");
    sps_context_clear_error(g_dev);
}

static void check_errors(void)
{
    const sps_entry_desc q = sps_entry_quaternion(), s = sps_entry_scalar();
    triplets T = make_triplets(50, 40, 300, q, SPS_F64);
    T.row[123] = 50;
    check_refused("row out of range", &T, 50, 40, q, SPS_F64, SPS_ERR_ARG, "entry 123: row index 50");
    T.row[123] = 3;
    T.col[77] = -1;
    check_refused("column out of range", &T, 50, 40, q, SPS_F64, SPS_ERR_ARG, "entry 77 (row");
    T.col[77] = 2;
    ((double *)T.val)[4 * 200 + 2] = NAN;
    check_refused("NaN", &T, 50, 40, q, SPS_F64, SPS_ERR_NUMERIC, "entry 200");
    free_triplets(&T);

    /* two triplets of one pair whose f32 sum overflows: 3e38 + 3e38 */
    sps_index r2[2] = {1, 1}, c2[2] = {2, 2};
    float v2[2] = {3e38f, 3e38f};
    triplets O = {2, r2, c2, v2};
    check_refused("f32 overflow", &O, 3, 3, s, SPS_F32, SPS_ERR_NUMERIC, "overflows");
    /* an f64 sum that overflows (a quaternion's j part: 1e308 + 1e308) is refused as the host builder refuses it */
    double q2[8] = {1, 0, 1e308, 0, 1, 0, 1e308, 0};
    triplets Q = {2, r2, c2, q2};
    check_refused("f64 overflow", &Q, 3, 3, q, SPS_F64, SPS_ERR_NUMERIC, "overflow");
    double z2[4] = {0, 1e308, 0, 1e308}; /* c64: the imaginary parts */
    triplets Z = {2, r2, c2, z2};
    check_refused("c64 overflow", &Z, 3, 3, s, SPS_C64, SPS_ERR_NUMERIC, "overflow");

    sps_matrix A = (sps_matrix)1;
    TU_CHECK(sps_matrix_from_coo_entries_device(g_dev, 3, 3, -1, NULL, NULL, NULL, s, SPS_F64, &A) == SPS_ERR_ARG &&
                 !A,
             "negative nnz refused");
    sps_context_clear_error(g_dev);
    TU_CHECK(sps_matrix_from_coo_entries_device(g_dev, 3, 3, 2, NULL, NULL, NULL, s, SPS_F64, &A) == SPS_ERR_ARG,
             "NULL arrays refused");
    sps_context_clear_error(g_dev);
    TU_CHECK(sps_matrix_from_coo_entries_device(g_dev, 3, 3, 0, NULL, NULL, NULL, sps_entry_block(9), SPS_F64, &A) ==
                 SPS_ERR_ARG,
             "a 9 x 9 block refused");
    sps_context_clear_error(g_dev);
}

int main(void)
{
    tu_rng_seed(&r_rng, 0x5eed5eedULL);
#ifdef SPS_ASSEMBLE_GPU
    const int su = gpu_setup("test_gpu_assemble");
    if (su) return su;
    g_ref = g_cpu;
    g_dev = g_gpu;
#else
    if (tu_cpu_context(&g_ref)) return 1;
    g_dev = g_ref;
#endif
    static const sps_scalar all[4] = {SPS_F32, SPS_F64, SPS_C32, SPS_C64};
    static const struct {
        int n, m;
        int64_t nnz;
    } shapes[] = {{0, 0, 0}, {1, 1, 5}, {7, 7, 0}, {200, 30, 900}, {30, 200, 900}, {500, 500, 4000}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        for (int ti = 0; ti < 4; ti++) {
            check_equal(shapes[k].n, shapes[k].m, shapes[k].nnz, sps_entry_scalar(), all[ti]);
            static const int bs[4] = {2, 3, 4, 8};
            for (int b = 0; b < 4; b++) check_equal(shapes[k].n, shapes[k].m, shapes[k].nnz, sps_entry_block(bs[b]), all[ti]);
            if (ti < 2) check_equal(shapes[k].n, shapes[k].m, shapes[k].nnz, sps_entry_quaternion(), all[ti]);
        }
    /* large enough for many blocks of every kernel and a multi-pass sort */
    check_equal(60000, 50000, 300000, sps_entry_quaternion(), SPS_F64);
    check_equal(60000, 60000, 300000, sps_entry_scalar(), SPS_F32);
    check_errors();
    check_csr_errors();
#ifdef SPS_ASSEMBLE_GPU
    gpu_teardown();
#else
    sps_context_destroy(g_ref);
#endif
    return tu_finish();
}
