/* Matrix Market input and output of compound matrices (issue 20 item 4), public API:
 *
 * - a quaternion hermitian file read as quaternion entries (bcsr, q64 and q32), the
 *   mirrored entries conjugated, duplicates summed, symmetry hermitian kept; a
 *   complex precision refused;
 * - sps_matrix_write_mtx of a quaternion matrix read back bit for bit; of a block
 *   matrix refused, pointing at sps_matrix_write_mtx_expanded;
 * - sps_matrix_write_mtx_expanded against the left-multiplication matrix written
 *   out here, and against the blocks' own elements;
 * - sps_matrix_read_mtx_blocks: a scalar file grouped into 3x3 blocks (explicit
 *   zeros, real and complex), the same operator as the scalar matrix; sizes that 3
 *   does not divide (at the size line, file:line) and quaternion files (at the banner)
 *   and bad block sizes refused with their reason;
 * - quaternion vectors (array and coordinate) read as 4n interleaved reals. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static sps_context ctx;
static char dir[512];

static const char *tmp_path(const char *name)
{
    static char p[4][600];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
}

/* A 3 x 3 quaternion hermitian matrix: the lower triangle, (3,1) listed twice. */
static const char *quat_herm = "%%MatrixMarket matrix coordinate quaternion hermitian\n"
                               "3 3 5\n"
                               "1 1 4 0 0 0\n"
                               "3 1 1 2 3 4\n"
                               "2 2 5 0 0 0\n"
                               "3 1 0.5 0 0 -1\n"
                               "3 3 6 0 0 0\n";

static void test_quaternion_read(void)
{
    const char *path = tmp_path("qh.mtx");
    put_file(path, quat_herm);
    sps_matrix A = NULL, A32 = NULL, C = NULL;
    if (!TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_F64, &A))) return;
    sps_matrix_info_t in;
    sps_matrix_info(A, &in);
    TU_CHECK(in.entry.kind == SPS_ENTRY_QUATERNION && in.rows == 3 && in.cols == 3 && in.nnz == 5 &&
                 in.symmetry == SPS_SYM_HERMITIAN && in.scalar == SPS_F64 && strcmp(in.format_name, "bcsr") == 0,
             "quaternion file: %s %dx%d nnz %lld %s %s", sps_entry_name(in.entry), (int)in.rows, (int)in.cols,
             (long long)in.nnz, sps_symmetry_name(in.symmetry), in.format_name);
    sps_index rp[4], col[5];
    double v[20];
    TU_OK(ctx, sps_matrix_export_csr(A, rp, col, v));
    /* rows: (0,0) (0,2) | (1,1) | (2,0) (2,2); (3,1) summed = 1.5 + 2i + 3j + 3k, (1,3) its conjugate */
    const sps_index wrp[4] = {0, 2, 3, 5}, wcol[5] = {0, 2, 1, 0, 2};
    const double wv[20] = {4, 0, 0, 0, 1.5, -2, -3, -3, 5, 0, 0, 0, 1.5, 2, 3, 3, 6, 0, 0, 0};
    TU_CHECK(memcmp(rp, wrp, sizeof rp) == 0 && memcmp(col, wcol, sizeof col) == 0 && memcmp(v, wv, sizeof v) == 0,
             "quaternion hermitian: expanded, conjugated, duplicates summed");
    if (TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_F32, &A32))) {
        sps_matrix_info(A32, &in);
        TU_CHECK(in.entry.kind == SPS_ENTRY_QUATERNION && in.scalar == SPS_F32, "q32 from t = f32");
    }
    TU_CHECK(sps_matrix_read_mtx(ctx, path, SPS_C64, &C) == SPS_ERR_ARG && !C &&
                 strstr(sps_context_error(ctx), "quaternions") && strstr(sps_context_error(ctx), "c64"),
             "quaternion file as c64: %s", sps_context_error(ctx));
    TU_CHECK(sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, 2, NULL, &C) == SPS_ERR_ARG && !C &&
                 strstr(sps_context_error(ctx), "qh.mtx:1: ") && strstr(sps_context_error(ctx), "scalar file"),
             "quaternion file as blocks: %s", sps_context_error(ctx));

    /* written back: coordinate quaternion general, the same entries bit for bit */
    const char *out = tmp_path("qw.mtx");
    sps_matrix B = NULL;
    if (TU_OK(ctx, sps_matrix_write_mtx(A, out)) && TU_OK(ctx, sps_matrix_read_mtx(ctx, out, SPS_F64, &B))) {
        sps_index rp2[4], col2[5];
        double v2[20];
        TU_OK(ctx, sps_matrix_export_csr(B, rp2, col2, v2));
        sps_matrix_info(B, &in);
        TU_CHECK(in.entry.kind == SPS_ENTRY_QUATERNION && in.symmetry == SPS_SYM_GENERAL &&
                     memcmp(rp, rp2, sizeof rp) == 0 && memcmp(col, col2, sizeof col) == 0 && memcmp(v, v2, sizeof v) == 0,
                 "quaternion write_mtx round trip");
        FILE *f = fopen(out, "r");
        char banner[128] = "";
        if (f && fgets(banner, sizeof banner, f)) fclose(f);
        TU_CHECK(strncmp(banner, "%%MatrixMarket matrix coordinate quaternion general", 51) == 0, "banner %s", banner);
    }

    /* the expansion: the 4x4 left-multiplication blocks, written out independently here */
    const char *ex = tmp_path("qx.mtx");
    sps_matrix X = NULL;
    if (TU_OK(ctx, sps_matrix_write_mtx_expanded(A, ex)) && TU_OK(ctx, sps_matrix_read_mtx(ctx, ex, SPS_F64, &X))) {
        sps_matrix_info(X, &in);
        double dense[12][12] = {{0}}, want[12][12] = {{0}};
        sps_index xr[13], xc[80];
        double xv[80];
        const int ok = in.rows == 12 && in.cols == 12 && in.nnz == 80 && in.entry.kind == SPS_ENTRY_SCALAR &&
                       TU_OK(ctx, sps_matrix_export_csr(X, xr, xc, xv));
        for (int i = 0; ok && i < 12; i++)
            for (sps_index k = xr[i]; k < xr[i + 1]; k++) dense[i][xc[k]] = xv[k];
        for (int i = 0; i < 3; i++)
            for (sps_index k = wrp[i]; k < wrp[i + 1]; k++) {
                const double *q = wv + 4 * k, a = q[0], b = q[1], c = q[2], d = q[3];
                const double L[4][4] = {{a, -b, -c, -d}, {b, a, -d, c}, {c, d, a, -b}, {d, -c, b, a}};
                for (int r = 0; r < 4; r++)
                    for (int s = 0; s < 4; s++) want[4 * i + r][4 * wcol[k] + s] = L[r][s];
            }
        TU_CHECK(ok && memcmp(dense, want, sizeof dense) == 0, "quaternion expansion: 12 x 12, nnz %lld",
                 (long long)in.nnz);
    }
    TU_DESTROY_MATRICES(A, A32, B, X);
}

/* A 6 x 6 scalar file: 3x3 blocks (0,0), (0,1), (1,1) touched, (1,0) not. */
static const char *scalar6 = "%%MatrixMarket matrix coordinate real general\n"
                             "6 6 6\n"
                             "1 1 1\n"
                             "2 3 2\n"
                             "3 5 3\n"
                             "5 5 4\n"
                             "6 4 5\n"
                             "2 3 0.5\n";

/* A block-row whose later scalar row touches lower block columns (block columns
 * 2, then 0 and 1): the columns come out sorted, and the block operator is the
 * scalar one for N and T with b != 0. */
static const char *scalar_unordered = "%%MatrixMarket matrix coordinate real general\n"
                                      "4 6 7\n"
                                      "1 5 1.5\n"
                                      "1 6 -2\n"
                                      "2 1 3\n"
                                      "2 3 0.25\n"
                                      "3 2 4\n"
                                      "4 6 -1\n"
                                      "4 1 2\n";

static void test_blocks_unordered(void)
{
    const char *path = tmp_path("u.mtx");
    put_file(path, scalar_unordered);
    sps_matrix A = NULL, S = NULL;
    if (TU_OK(ctx, sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, 2, NULL, &A)) &&
        TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_F64, &S))) {
        sps_index rp[3], col[6];
        double v[6 * 4];
        if (TU_OK(ctx, sps_matrix_export_csr(A, rp, col, v)))
            TU_CHECK(rp[1] == 3 && col[0] == 0 && col[1] == 1 && col[2] == 2 && rp[2] == 5 && col[3] == 0 &&
                         col[4] == 2,
                     "block columns sorted: %d %d %d | %d %d", (int)col[0], (int)col[1], (int)col[2], (int)col[3],
                     (int)col[4]);
        for (int tr = 0; tr < 2; tr++) {
            const sps_index nin = tr ? 4 : 6, nout = tr ? 6 : 4;
            const double x[6] = {1, -2, 3, 0.5, 7, -1}, y0[6] = {0.5, 1, -1, 2, 3, -4};
            double ya[6], ys[6];
            const double a = 1.5, b = 0.5;
            sps_vector vx = NULL, va = NULL, vs = NULL;
            sps_operator oa = NULL, os = NULL;
            const sps_op_mode mode = tr ? SPS_OP_T : SPS_OP_N;
            if (TU_OK(ctx, sps_vector_from_host(ctx, nin, SPS_F64, x, &vx)) &&
                TU_OK(ctx, sps_vector_from_host(ctx, nout, SPS_F64, y0, &va)) &&
                TU_OK(ctx, sps_vector_from_host(ctx, nout, SPS_F64, y0, &vs)) &&
                TU_OK(ctx, sps_operator_from_matrix(A, &oa)) && TU_OK(ctx, sps_operator_from_matrix(S, &os)) &&
                TU_OK(ctx, sps_operator_apply(oa, mode, &a, vx, &b, va)) &&
                TU_OK(ctx, sps_operator_apply(os, mode, &a, vx, &b, vs)) && TU_OK(ctx, sps_vector_get(va, ya)) &&
                TU_OK(ctx, sps_vector_get(vs, ys)))
                TU_CHECK(memcmp(ya, ys, (size_t)nout * sizeof *ya) == 0, "unordered blocks: op %s == scalar",
                         tr ? "T" : "N");
            sps_operator_destroy(oa);
            sps_operator_destroy(os);
            sps_vector_destroy(vx);
            sps_vector_destroy(va);
            sps_vector_destroy(vs);
        }
    }
    sps_matrix_destroy(A);
    sps_matrix_destroy(S);
    remove(path);
}

static void test_blocks(void)
{
    const char *path = tmp_path("s6.mtx");
    put_file(path, scalar6);
    sps_matrix A = NULL, S = NULL, Z = NULL, B2 = NULL, Y = NULL;
    if (!TU_OK(ctx, sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, 3, NULL, &A))) return;
    sps_matrix_info_t in;
    sps_matrix_info(A, &in);
    TU_CHECK(in.entry.kind == SPS_ENTRY_BLOCK && in.entry.block == 3 && in.rows == 2 && in.nnz == 3 &&
                 strcmp(in.format_name, "bcsr") == 0,
             "3x3 blocks: %s %dx%d nnz %lld", sps_entry_name(in.entry), (int)in.rows, (int)in.cols, (long long)in.nnz);
    sps_index rp[3], col[3];
    double v[27];
    TU_OK(ctx, sps_matrix_export_csr(A, rp, col, v));
    double want[27] = {0};
    want[0] = 1;                    /* (0,0) in block (0,0) */
    want[1 * 3 + 2] = 2.5;          /* (1,2) in block (0,0), duplicates summed */
    want[9 + 2 * 3 + 1] = 3;        /* (2,4) in block (0,1) at (2,1) */
    want[18 + 1 * 3 + 1] = 4;       /* (4,4) in block (1,1) at (1,1) */
    want[18 + 2 * 3 + 0] = 5;       /* (5,3) in block (1,1) at (2,0) */
    const sps_index wrp[3] = {0, 2, 3}, wcol[3] = {0, 1, 1};
    TU_CHECK(memcmp(rp, wrp, sizeof rp) == 0 && memcmp(col, wcol, sizeof col) == 0 && memcmp(v, want, sizeof v) == 0,
             "3x3 blocks: touched blocks whole, explicit zeros");
    /* the same operator as the scalar matrix; the expansion is the scalar matrix with the zeros */
    if (TU_OK(ctx, sps_matrix_read_mtx(ctx, path, SPS_F64, &S))) {
        const double x[6] = {1, -2, 3, 0.5, 7, -1};
        double ya[6], ys[6];
        sps_vector vx = NULL, va = NULL, vs = NULL;
        sps_operator oa = NULL, os = NULL;
        const double one = 1, zero = 0;
        if (TU_OK(ctx, sps_vector_from_host(ctx, 6, SPS_F64, x, &vx)) && TU_OK(ctx, sps_vector_create(ctx, 6, SPS_F64, &va)) &&
            TU_OK(ctx, sps_vector_create(ctx, 6, SPS_F64, &vs)) && TU_OK(ctx, sps_operator_from_matrix(A, &oa)) &&
            TU_OK(ctx, sps_operator_from_matrix(S, &os)) &&
            TU_OK(ctx, sps_operator_apply(oa, SPS_OP_N, &one, vx, &zero, va)) &&
            TU_OK(ctx, sps_operator_apply(os, SPS_OP_N, &one, vx, &zero, vs)) && TU_OK(ctx, sps_vector_get(va, ya)) &&
            TU_OK(ctx, sps_vector_get(vs, ys)))
            TU_CHECK(memcmp(ya, ys, sizeof ya) == 0, "block operator == scalar operator");
        sps_operator_destroy(oa);
        sps_operator_destroy(os);
        sps_vector_destroy(vx);
        sps_vector_destroy(va);
        sps_vector_destroy(vs);
    }
    const char *ex = tmp_path("s6x.mtx");
    if (TU_OK(ctx, sps_matrix_write_mtx_expanded(A, ex)) && TU_OK(ctx, sps_matrix_read_mtx(ctx, ex, SPS_F64, &Y))) {
        sps_matrix_info(Y, &in);
        TU_CHECK(in.rows == 6 && in.nnz == 27, "block expansion: %dx%d nnz %lld (3 blocks of 9)", (int)in.rows,
                 (int)in.cols, (long long)in.nnz);
    }
    TU_CHECK(sps_matrix_write_mtx(A, tmp_path("blk.mtx")) == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_context_error(ctx), "sps_matrix_write_mtx_expanded"),
             "block write_mtx refused: %s", sps_context_error(ctx));
    /* complex values group the same way */
    const char *cpath = tmp_path("c4.mtx");
    put_file(cpath, "%%MatrixMarket matrix coordinate complex general\n4 4 2\n1 2 1 -1\n4 3 2 0.5\n");
    if (TU_OK(ctx, sps_matrix_read_mtx_blocks(ctx, cpath, SPS_F64, 2, NULL, &B2))) {
        sps_matrix_info(B2, &in);
        double cv[16];
        sps_index crp[3], ccol[2];
        TU_OK(ctx, sps_matrix_export_csr(B2, crp, ccol, cv));
        const double cw[16] = {0, 0, 1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0.5, 0, 0};
        TU_CHECK(in.scalar == SPS_C64 && in.entry.block == 2 && in.nnz == 2 && memcmp(cv, cw, sizeof cv) == 0,
                 "complex 2x2 blocks");
    }
    /* refusals */
    TU_CHECK(sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, 4, NULL, &Z) == SPS_ERR_ARG && !Z &&
                 strstr(sps_context_error(ctx), "s6.mtx") && strstr(sps_context_error(ctx), "not a multiple of 4"),
             "6 x 6 in 4x4 blocks: %s", sps_context_error(ctx));
    /* refused at the size line, naming it, before the entries are read (here they are cut short) */
    char cut[600]; /* not tmp_path: its next buffer is path's */
    snprintf(cut, sizeof cut, "%s/cut.mtx", dir);
    put_file(cut, "%%MatrixMarket matrix coordinate real general\n6 6 1000000\n1 1 1\n");
    TU_CHECK(sps_matrix_read_mtx_blocks(ctx, cut, SPS_F64, 4, NULL, &Z) == SPS_ERR_ARG && !Z &&
                 strstr(sps_context_error(ctx), "cut.mtx:2: ") && strstr(sps_context_error(ctx), "not a multiple of 4"),
             "6 x 6 in 4x4 blocks, at the size line: %s", sps_context_error(ctx));
    TU_CHECK(sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, 9, NULL, &Z) == SPS_ERR_ARG && !Z,
             "block size 9: %s", sps_context_error(ctx));
    TU_CHECK(sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, 0, NULL, &Z) == SPS_ERR_ARG && !Z,
             "block size 0: %s", sps_context_error(ctx));
    if (TU_OK(ctx, sps_matrix_read_mtx_blocks(ctx, path, SPS_F64, 1, NULL, &Z))) {
        sps_matrix_info(Z, &in);
        TU_CHECK(in.entry.kind == SPS_ENTRY_SCALAR && in.nnz == 5, "block size 1: the scalar matrix");
    }
    TU_DESTROY_MATRICES(A, S, Z, B2, Y);
}

static void test_vectors(void)
{
    const char *arr = tmp_path("qa.mtx"), *coo = tmp_path("qc.mtx");
    put_file(arr, "%%MatrixMarket matrix array quaternion general\n2 1\n1 2 3 4\n-1 0.5 0 2\n");
    put_file(coo, "%%MatrixMarket matrix coordinate quaternion general\n3 1 3\n3 1 1 1 1 1\n1 1 0 0 0 9\n3 1 1 0 0 0\n");
    sps_vector a = NULL, c = NULL, z = NULL;
    if (TU_OK(ctx, sps_vector_read_mtx(ctx, arr, SPS_F64, &a))) {
        double v[8];
        sps_vector_get(a, v);
        const double w[8] = {1, 2, 3, 4, -1, 0.5, 0, 2};
        TU_CHECK(sps_vector_size(a) == 8 && sps_vector_scalar(a) == SPS_F64 && memcmp(v, w, sizeof v) == 0,
                 "quaternion array vector: 4n reals");
    }
    if (TU_OK(ctx, sps_vector_read_mtx(ctx, coo, SPS_F32, &c))) {
        float v[12];
        sps_vector_get(c, v);
        const float w[12] = {0, 0, 0, 9, 0, 0, 0, 0, 2, 1, 1, 1};
        TU_CHECK(sps_vector_size(c) == 12 && sps_vector_scalar(c) == SPS_F32 && memcmp(v, w, sizeof v) == 0,
                 "quaternion coordinate vector: 4n reals, duplicates summed");
    }
    TU_CHECK(sps_vector_read_mtx(ctx, arr, SPS_C64, &z) == SPS_ERR_ARG && !z &&
                 strstr(sps_context_error(ctx), "quaternions"),
             "quaternion vector as c64: %s", sps_context_error(ctx));
    sps_vector_destroy(a);
    sps_vector_destroy(c);
}

int main(void)
{
    if (tu_cpu_context(&ctx)) return 1;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/sps_test_compound_io_%ld", tmp && tmp[0] ? tmp : "/tmp", (long)getpid());
    if (mkdir(dir, 0700) != 0) {
        fprintf(stderr, "cannot create %s\n", dir);
        return 1;
    }
    test_quaternion_read();
    test_blocks();
    test_blocks_unordered();
    test_vectors();
    sps_context_destroy(ctx);
    const char *names[] = {"qh.mtx", "qw.mtx", "qx.mtx", "s6.mtx", "s6x.mtx", "c4.mtx", "qa.mtx", "qc.mtx", "cut.mtx"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) remove(tmp_path(names[i]));
    rmdir(dir);
    return tu_finish();
}
