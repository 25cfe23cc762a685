/* HiSparse's footprint against CSR and COO (issue 23 item 4, the paper's Figure 2):
 *   hisparse_footprint [-d D,D,...] FILE.mtx[.gz] ...
 * For each matrix (read on the CPU backend, as real or complex) and each node size d, the
 * bytes per stored entry of HiSparse (its pool), CSR (32-bit row pointers and columns)
 * and COO (32-bit rows and columns), with f32 and f64 values (c32 and c64 for complex
 * files), as one markdown table on stdout; the last lines give the median ratio to CSR
 * per d and precision.  Host only: the structure is the GPU's, its size does not depend
 * on where it is built. */
#include "formats/hisparse.h"

#include <spsolve/spsolve.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int dcmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    int ds[8] = {64, 128, 256}, nd = 3, first = 1;
    if (argc > 2 && !strcmp(argv[1], "-d")) {
        nd = 0;
        for (char *p = strtok(argv[2], ","); p && nd < 8; p = strtok(NULL, ",")) ds[nd++] = atoi(p);
        first = 3;
    }
    const int nm = argc - first;
    if (nm < 1) {
        fprintf(stderr, "usage: hisparse_footprint [-d D,D,...] FILE.mtx[.gz] ...\n");
        return 2;
    }
    sps_context ctx = NULL;
    if (sps_context_create(&ctx, SPS_BACKEND_CPU, 0) != SPS_OK) return 1;
    double *ratio = calloc((size_t)nm * nd * 2, sizeof *ratio);
    int nr = 0;
    printf("| matrix | rows | nnz | precision | CSR B/nnz | COO B/nnz |");
    for (int k = 0; k < nd; k++) printf(" HiSparse d=%d B/nnz (x CSR) |", ds[k]);
    printf("\n|---|---:|---:|---|---:|---:|");
    for (int k = 0; k < nd; k++) printf("---:|");
    printf("\n");
    for (int f = first; f < argc; f++) {
        for (int prec = 0; prec < 2; prec++) {
            sps_matrix A = NULL;
            sps_status st = sps_matrix_read_mtx(ctx, argv[f], prec ? SPS_F64 : SPS_F32, &A);
            if (st == SPS_ERR_UNSUPPORTED || (st != SPS_OK && strstr(sps_context_error(ctx), "complex"))) {
                sps_context_clear_error(ctx);
                st = sps_matrix_read_mtx(ctx, argv[f], prec ? SPS_C64 : SPS_C32, &A);
            }
            sps_matrix_info_t in;
            if (st != SPS_OK || sps_matrix_info(A, &in) != SPS_OK) {
                fprintf(stderr, "%s: %s\n", argv[f], sps_context_error(ctx));
                sps_context_clear_error(ctx);
                sps_matrix_destroy(A);
                break;
            }
            const size_t vs = sps_scalar_size(in.scalar), nnz = (size_t)in.nnz;
            sps_index *rp = malloc(((size_t)in.rows + 1) * sizeof *rp), *col = malloc((nnz + 1) * sizeof *col);
            void *val = malloc((nnz + 1) * vs);
            if (!rp || !col || !val || sps_matrix_export_csr(A, rp, col, val) != SPS_OK) {
                fprintf(stderr, "%s: export failed\n", argv[f]);
                free(rp), free(col), free(val), sps_matrix_destroy(A);
                break;
            }
            const double csr = (double)(4 * ((size_t)in.rows + 1) + (4 + vs) * nnz) / (double)nnz,
                         coo = (double)(8 + vs) * 1.0;
            const char *base = strrchr(argv[f], '/');
            printf("| %s | %d | %zu | %s | %.2f | %.2f |", base ? base + 1 : argv[f], (int)in.rows, nnz,
                   sps_scalar_name(in.scalar), csr, coo);
            for (int k = 0; k < nd; k++) {
                sps_hisparse H;
                if (sps_hisparse_from_csr(ctx, in.rows, in.cols, rp, col, val, vs, ds[k], &H) != SPS_OK) {
                    printf(" %s |", sps_context_error(ctx));
                    sps_context_clear_error(ctx);
                    continue;
                }
                const double hs = (double)H.bytes / (double)nnz;
                printf(" %.2f (%.2f) |", hs, hs / csr);
                ratio[((size_t)k * 2 + prec) * nm + (f - first)] = hs / csr;
                sps_hisparse_free(&H);
            }
            printf("\n");
            nr += prec == 0;
            free(rp), free(col), free(val);
            sps_matrix_destroy(A);
        }
    }
    for (int k = 0; k < nd; k++)
        for (int prec = 0; prec < 2; prec++) {
            double *r = ratio + ((size_t)k * 2 + prec) * nm;
            qsort(r, (size_t)nm, sizeof *r, dcmp);
            int lo = 0;
            while (lo < nm && r[lo] == 0) lo++; /* matrices that failed */
            if (lo < nm)
                printf("\nmedian HiSparse / CSR, d = %d, %s: %.3f over %d matrices", ds[k], prec ? "f64/c64" : "f32/c32",
                       r[lo + (nm - lo) / 2], nm - lo);
        }
    printf("\n");
    (void)nr;
    free(ratio);
    sps_context_destroy(ctx);
    return 0;
}
