/* HiSparse's footprint against CSR and COO (issue 23 item 4, the paper's Figure 2):
 *   hisparse_footprint [-d D,D,...] [--generated] [FILE.mtx[.gz] ...]
 * --generated: also spbench's generated set (poisson3d 48 and 128, banded 1M with sigma 1e3
 * and 1e5, powerlaw 2M, stencil27b3 40: bench/gen.c and the library's generators).
 * For each matrix (read on the CPU backend, as real or complex) and each node size d, the
 * bytes per stored entry of HiSparse (its pool), CSR (32-bit row pointers and columns)
 * and COO (32-bit rows and columns), with f32 and f64 values (c32 and c64 for complex
 * files), as one markdown table on stdout; the last lines give the median ratio to CSR
 * per d and precision.  Host only: the structure is the GPU's, its size does not depend
 * on where it is built. */
#include "formats/hisparse.h"
#include "gen.h"

#include <spsolve/spsolve.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dcmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One matrix (host CSR of values of type t) at every node size: a table row, ratios kept */
typedef struct {
    const int *ds;
    int nd, nm, at;
    double *ratio; /* [d][precision][matrix] */
} hs_runs;

static void measure(sps_context ctx, hs_runs *R, int prec, const char *name, sps_index n, sps_index m,
                    const sps_index *rp, const sps_index *col, const void *val, sps_scalar t)
{
    const size_t vs = sps_scalar_size(t), nnz = (size_t)rp[n];
    const double csr = (double)(4 * ((size_t)n + 1) + (4 + vs) * nnz) / (double)nnz, coo = (double)(8 + vs);
    printf("| %s | %d | %zu | %s | %.2f | %.2f |", name, (int)n, nnz, sps_scalar_name(t), csr, coo);
    for (int k = 0; k < R->nd; k++) {
        sps_hisparse H;
        if (sps_hisparse_from_csr(ctx, n, m, rp, col, val, vs, R->ds[k], &H) != SPS_OK) {
            printf(" %s |", sps_context_error(ctx));
            sps_context_clear_error(ctx);
            continue;
        }
        const double hs = (double)H.bytes / (double)nnz;
        printf(" %.2f (%.2f) |", hs, hs / csr);
        R->ratio[((size_t)k * 2 + prec) * R->nm + R->at] = hs / csr;
        sps_hisparse_free(&H);
    }
    printf("\n");
}

/* A library matrix exported to host CSR, measured */
static void measure_matrix(sps_context ctx, hs_runs *R, int prec, const char *name, sps_matrix A)
{
    sps_matrix_info_t in;
    if (sps_matrix_info(A, &in) != SPS_OK) return;
    const size_t vs = sps_scalar_size(in.scalar), nnz = (size_t)in.nnz;
    sps_index *rp = malloc(((size_t)in.rows + 1) * sizeof *rp), *col = malloc((nnz + 1) * sizeof *col);
    void *val = malloc((nnz + 1) * vs);
    if (rp && col && val && sps_matrix_export_csr(A, rp, col, val) == SPS_OK)
        measure(ctx, R, prec, name, in.rows, in.cols, rp, col, val, in.scalar);
    else
        fprintf(stderr, "%s: export failed\n", name);
    free(rp), free(col), free(val);
}

/* spbench's generated set (builtin_sources, not --quick) */
static const char *const kLibGen[] = {"poisson3d:48", "poisson3d:128"};
enum { N_GEN = 4 };
static const char *gen_one(int i, gen_csr *A, const char **name)
{
    static const char *const names[N_GEN] = {"banded-s1e3-1M", "banded-s1e5-1M", "powerlaw-2M", "stencil27b3-40"};
    *name = names[i];
    switch (i) {
    case 0: return gen_banded(A, 1000000, 22, 1e3, 1);
    case 1: return gen_banded(A, 1000000, 22, 1e5, 2);
    case 2: return gen_powerlaw(A, 2000000, 20.0, 10000, 1.5, 3);
    default: return gen_stencil27_b3(A, 40);
    }
}

int main(int argc, char **argv)
{
    int ds[8] = {64, 128, 256}, nd = 3, first = 1, generated = 0;
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--generated")) generated = 1;
        else if (!strcmp(argv[first], "-d") && first + 1 < argc) {
            nd = 0;
            for (char *p = strtok(argv[++first], ","); p && nd < 8; p = strtok(NULL, ",")) ds[nd++] = atoi(p);
        } else break;
    }
    const int nfiles = argc - first, ngen = generated ? 2 + N_GEN : 0, nm = nfiles + ngen;
    if (nm < 1 || nd < 1) {
        fprintf(stderr, "usage: hisparse_footprint [-d D,D,...] [--generated] [FILE.mtx[.gz] ...]\n");
        return 2;
    }
    sps_context ctx = NULL;
    if (sps_context_create(&ctx, SPS_BACKEND_CPU, 0) != SPS_OK) return 1;
    hs_runs R = {.ds = ds, .nd = nd, .nm = nm, .at = 0, .ratio = calloc((size_t)nm * nd * 2, sizeof(double))};
    printf("| matrix | rows | nnz | precision | CSR B/nnz | COO B/nnz |");
    for (int k = 0; k < nd; k++) printf(" HiSparse d=%d B/nnz (x CSR) |", ds[k]);
    printf("\n|---|---:|---:|---|---:|---:|");
    for (int k = 0; k < nd; k++) printf("---:|");
    printf("\n");
    for (int f = first; f < argc; f++, R.at++) {
        const char *base = strrchr(argv[f], '/');
        for (int prec = 0; prec < 2; prec++) {
            sps_matrix A = NULL;
            sps_status st = sps_matrix_read_mtx(ctx, argv[f], prec ? SPS_F64 : SPS_F32, &A);
            if (st != SPS_OK && strstr(sps_context_error(ctx), "complex")) {
                sps_context_clear_error(ctx);
                st = sps_matrix_read_mtx(ctx, argv[f], prec ? SPS_C64 : SPS_C32, &A);
            }
            if (st != SPS_OK) {
                fprintf(stderr, "%s: %s\n", argv[f], sps_context_error(ctx));
                sps_context_clear_error(ctx);
                break;
            }
            measure_matrix(ctx, &R, prec, base ? base + 1 : argv[f], A);
            sps_matrix_destroy(A);
        }
    }
    for (int i = 0; i < ngen; i++, R.at++)
        for (int prec = 0; prec < 2; prec++) {
            const sps_scalar t = prec ? SPS_F64 : SPS_F32;
            if (i < 2) {
                sps_matrix A = NULL;
                if (sps_matrix_generate(ctx, kLibGen[i], t, &A) == SPS_OK) measure_matrix(ctx, &R, prec, kLibGen[i], A);
                sps_matrix_destroy(A);
                continue;
            }
            gen_csr g;
            const char *name = "?", *msg = gen_one(i - 2, &g, &name);
            if (msg) {
                fprintf(stderr, "%s: %s\n", name, msg);
                continue;
            }
            void *val = malloc(((size_t)g.nnz + 1) * sps_scalar_size(t));
            for (int64_t k = 0; val && k < g.nnz; k++) {
                const double v = g.val ? g.val[k] : 1.0;
                if (prec) ((double *)val)[k] = v;
                else ((float *)val)[k] = (float)v;
            }
            if (val) measure(ctx, &R, prec, name, g.n, g.m, g.rowptr, g.col, val, t);
            free(val);
            gen_csr_free(&g);
        }
    for (int k = 0; k < nd; k++)
        for (int prec = 0; prec < 2; prec++) {
            double *r = R.ratio + ((size_t)k * 2 + prec) * nm;
            qsort(r, (size_t)nm, sizeof *r, dcmp);
            int lo = 0;
            while (lo < nm && r[lo] == 0) lo++; /* matrices that failed */
            if (lo < nm)
                printf("\nmedian HiSparse / CSR, d = %d, %s: %.3f over %d matrices", ds[k], prec ? "f64/c64" : "f32/c32",
                       r[lo + (nm - lo) / 2], nm - lo);
        }
    printf("\n");
    free(R.ratio);
    sps_context_destroy(ctx);
    return 0;
}
