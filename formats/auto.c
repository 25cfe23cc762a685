/* --format auto without timing: which format's SpMV a matrix gets, from its row
 * lengths and the backend (a model, documented in README "Choosing a format").
 *
 * Fit on the H200, spbench 2026-11-26 (every format timed on 78 matrices: 72 of
 * ../shared/matrices and the 6 generated ones; bench/results/auto-model-nvidia-h200-
 * 2026-11-26.md at commit 39a0876), rule 5's small matrices refit on the H100 after
 * ELL's lean kernel (bench/results/auto-model-nvidia-h100-2026-11-27.md): the pick's
 * SpMV time against the best cuSPARSE kernel, geometric mean 1.088x over 156 matrix x
 * precision rows (csr alone 0.952x).  Rules, in order (GPU; the CPU backend
 * multiplies CSR rows):
 *   0. more than 50k rows in at most 16 occupied diagonals storing at most 1.1 nnz: dia;
 *   1. compound entries: bcsr;
 *   2. irregular rows (the longest over 16x the average and 64): csr (merge path);
 *   3. 8 or more entries a row: sell for 100k rows or more with the longest row at
 *      most 1.5x the average + 2; ell for at most 50k near-uniform rows (longest x
 *      rows <= 1.3 nnz) of at most 16; else csr (the row groups spread few rows);
 *   4. shorter rows, near-uniform (longest x rows <= 1.3 nnz): ell;
 *   5. other short rows: ell where the matrix has at most 50k rows and no row over 32
 *      entries (ELL's lean kernel), else sell where SELL-32's padding is at most half
 *      of nnz; else csr. */
#include "formats/format.h"
#include "formats/padded.h"

#include <stdlib.h>
#include <string.h>

/* Rule 5's small matrices: up to this many rows a product is a chain of dependent
 * loads (latency, not bandwidth).  ELL of rows of at most 32 slots runs the padded
 * family's lean kernel (kernels/cuda/padded.cu), whose chain is two loads long (the
 * row's slots, x) where SELL's and CSR's are three (slice offset or row pointers,
 * entries, x); padding costs little there.  H100, flushed L2, spbench 2026-11-26
 * (bench/results/auto-model-nvidia-h100-2026-11-27.md), the matrices of
 * ../shared/matrices with < 50k rows, < 8 entries a row and no row over 32: ELL's
 * time at most CSR's and SELL's on nearly all, 0.4-3 us less (west0479 f32 5.9
 * against 9.2 for CSR and 7.2 for SELL). */
#define AUTO_SMALL_ROWS 50000
#define AUTO_SMALL_LONGEST 32
/* Rule 3's exception: few near-uniform rows of 8 to 16 entries take ELL's lean
 * kernel too; past 16 slots a row the row groups' wider lanes win (steam2, 600 rows
 * of 23-28: ELL 6.4-6.6 us, CSR 5.9-6.0).  H100, spbench 2026-11-26: fv1 (9604 rows
 * of 9) f32 CSR 6.9-7.0 us, ELL 5.9, cuSPARSE SELL 5.8 (the one corpus matrix of this
 * shape). */
#define AUTO_SMALL_UNIFORM 16
/* ELL's build refuses more than max-fill (default 10) x nnz slots past its floor: the
 * rule keeps within that, so that the pick builds with the default options. */
#define AUTO_ELL_FILL 10.0

/* Rule 0: DIA where the matrix is a few full diagonals (a finite-difference stencil):
 * at most this many occupied diagonals, storing at most AUTO_DIA_FILL x nnz.  No
 * column index a product, and since DIA's loads stopped waiting on its mask (H100,
 * spbench 2026-11-27, bench/results/auto-model-nvidia-h100-2026-11-27.md) poisson3d-128
 * (7 diagonals) runs f64 56.7 us against ELL's 70 and cuSPARSE SELL's 77 (f32 38.0,
 * 46.9), poisson3d-48 f64 8.1 against 8.4 and 8.9; stencil27b3-40 (81 diagonals of
 * 3x3 blocks) loses to SELL (67.4 against 60.8 us): hence the bound.  Small matrices
 * (AUTO_SMALL_ROWS) keep ELL's lean kernel, a shorter chain of loads than DIA's per
 * diagonal chunk: fv1 (9 diagonals) f32 DIA 7.1 us against ELL 6.0, jnlbrng1 (5) 6.2
 * against 5.7, pde900 f64 5.7 against 5.5 (same run). */
#define AUTO_DIA_DIAGS 16
#define AUTO_DIA_FILL 1.1

/* The model's inputs: row lengths from rowptr, occupied diagonals from col. */
typedef struct {
    sps_index n;
    int64_t nnz, longest, sell_slots; /* SELL-32 slots: 32 x the longest row of each slice */
    int64_t ndiag;                    /* occupied diagonals; -1: not counted */
} row_stats;

static row_stats stats_of(sps_index n, const sps_index *rowptr)
{
    row_stats s = {n, rowptr[n] - rowptr[0], 0, sps_group_slots(n, rowptr, 32), -1};
    for (sps_index i = 0; i < n; i++)
        if (rowptr[i + 1] - rowptr[i] > s.longest) s.longest = rowptr[i + 1] - rowptr[i];
    return s;
}

/* Whether rule 0 may apply, so that the diagonals are worth counting (and the columns
 * worth bringing to the host): a GPU matrix of more than AUTO_SMALL_ROWS rows of at most
 * AUTO_DIA_DIAGS entries. */
static int dia_candidate(const row_stats *s, sps_backend be)
{
    return be == SPS_BACKEND_CUDA && s->n > AUTO_SMALL_ROWS && s->nnz > 0 && s->longest <= AUTO_DIA_DIAGS;
}

static sps_format pick(const row_stats *s, sps_backend be, const char **why)
{
    if (be != SPS_BACKEND_CUDA) return *why = "the CPU multiplies CSR rows", SPS_FMT_CSR;
    if (s->n == 0 || s->nnz == 0) return *why = "no entries", SPS_FMT_CSR;
    if (s->n > AUTO_SMALL_ROWS && s->ndiag > 0 && s->ndiag <= AUTO_DIA_DIAGS &&
        (double)s->ndiag * s->n <= AUTO_DIA_FILL * (double)s->nnz)
        return *why = "a few full diagonals: DIA, no column indices", SPS_FMT_DIA;
    const double avg = (double)s->nnz / s->n;
    if (s->longest > 64 && s->longest > SPS_CSR_MERGE_RATIO * avg) /* CSR's own rule (formats/csr.c) */
        return *why = "irregular rows: CSR's merge path", SPS_FMT_CSR;
    if (avg >= 8) {
        if (s->n >= 100000 && s->longest <= 1.5 * avg + 2) return *why = "many regular rows", SPS_FMT_SELL;
        if (s->n <= AUTO_SMALL_ROWS && s->longest <= AUTO_SMALL_UNIFORM && (double)s->longest * s->n <= 1.3 * (double)s->nnz)
            return *why = "few near-uniform rows of at most 16: ELL's lean product", SPS_FMT_ELL;
        return *why = "long rows: CSR row groups", SPS_FMT_CSR;
    }
    if ((double)s->longest * s->n <= 1.3 * (double)s->nnz) return *why = "near-uniform short rows", SPS_FMT_ELL;
    const double ell_slots = (double)s->longest * (double)(((int64_t)s->n + 31) / 32 * 32);
    if (s->n <= AUTO_SMALL_ROWS && s->longest <= AUTO_SMALL_LONGEST &&
        (ell_slots <= AUTO_ELL_FILL * (double)s->nnz || ell_slots <= SPS_PAD_FILL_FLOOR))
        return *why = "few short rows: ELL's lean product is the shortest chain of loads", SPS_FMT_ELL;
    if ((double)(s->sell_slots - s->nnz) <= 0.5 * (double)s->nnz)
        return *why = "short rows, little padding", SPS_FMT_SELL;
    return *why = "short rows of varying length", SPS_FMT_CSR;
}

int64_t sps_pattern_diagonals(sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col, int64_t stop)
{
    unsigned char *seen = calloc((size_t)n + (size_t)m + 1, 1);
    if (!seen) return -1;
    int64_t nd = 0;
    for (sps_index i = 0; i < n && (stop < 0 || nd <= stop); i++)
        for (sps_index k = rowptr[i]; k < rowptr[i + 1]; k++) {
            unsigned char *d = &seen[(size_t)((int64_t)col[k] - i + n)];
            nd += !*d;
            *d = 1;
        }
    free(seen);
    return nd;
}

int64_t sps_group_slots(sps_index n, const sps_index *rowptr, sps_index g)
{
    int64_t slots = 0;
    if (g < 1) g = 1;
    for (sps_index r0 = 0; r0 < n; r0 += g) {
        int64_t w = 0;
        const sps_index r1 = r0 + g < n ? r0 + g : n;
        for (sps_index i = r0; i < r1; i++)
            if (rowptr[i + 1] - rowptr[i] > w) w = rowptr[i + 1] - rowptr[i];
        slots += (int64_t)g * w;
    }
    return slots;
}

sps_status sps_matrix_host_pattern(sps_matrix A, int want_col, sps_host_pattern *p)
{
    memset(p, 0, sizeof *p);
    /* csr and bcsr (AoS) hold CSR arrays: the pattern alone comes down, not the values (a
     * 26.8M-block bcsr matrix spent most of a 2 s tuning budget bringing its 1.9 GB of
     * values to the host) */
    const sps_csr_store *s = A->ops->backend_csr ? A->ops->backend_csr(A) : NULL;
    if (s) {
        SPS_CHECK(sps_ddownload(A->ctx, (void **)&p->rowptr, s->rowptr, ((size_t)A->n + 1) * sizeof(sps_index),
                                "row pointers"));
        const sps_status st =
            want_col ? sps_ddownload(A->ctx, (void **)&p->col, s->col, (size_t)A->nnz * sizeof(sps_index), "columns")
                     : SPS_OK;
        if (st != SPS_OK) sps_host_pattern_free(p);
        return st;
    }
    SPS_CHECK(sps_matrix_to_host(A, &p->h));
    p->rowptr = p->h.rowptr;
    p->col = p->h.col;
    return SPS_OK;
}

void sps_host_pattern_free(sps_host_pattern *p)
{
    if (p->h.rowptr) {
        sps_csr_host_free(&p->h);
    } else {
        free(p->rowptr);
        free(p->col);
    }
    memset(p, 0, sizeof *p);
}

sps_format sps_format_auto_pick(sps_matrix A, const sps_index *rowptr, const sps_index *col, const char **why)
{
    if (A->entry.kind != SPS_ENTRY_SCALAR) {
        if (why) *why = "compound entries";
        return SPS_FMT_BCSR;
    }
    return sps_format_auto_of(A->n, A->m, rowptr, col, A->ctx->backend, why);
}

/* The pick from the row statistics s of an n x m pattern, the diagonals counted where rule 0
 * may apply and the columns are at hand (col NULL: rule 0 is skipped). */
static sps_format decide(row_stats s, sps_index m, const sps_index *rowptr, const sps_index *col, sps_backend be,
                         const char **why)
{
    if (col && dia_candidate(&s, be)) s.ndiag = sps_pattern_diagonals(s.n, m, rowptr, col, AUTO_DIA_DIAGS);
    const char *w = NULL;
    const sps_format f = pick(&s, be, &w);
    if (why) *why = w;
    return f;
}

sps_format sps_format_auto_of(sps_index n, sps_index m, const sps_index *rowptr, const sps_index *col, sps_backend be,
                              const char **why)
{
    return decide(stats_of(n, rowptr), m, rowptr, col, be, why);
}

sps_status sps_matrix_auto_format(sps_matrix A, sps_format *fmt, const char **why)
{
    if (!A || !fmt) return A ? sps_error(A->ctx, SPS_ERR_ARG, "sps_matrix_auto_format: NULL output") : SPS_ERR_ARG;
    if (A->entry.kind != SPS_ENTRY_SCALAR) { /* the pick does not look at compound rows */
        *fmt = sps_format_auto_pick(A, NULL, NULL, why);
        return SPS_OK;
    }
    sps_host_pattern p;
    SPS_CHECK(sps_matrix_host_pattern(A, 0, &p));
    const row_stats s = stats_of(A->n, p.rowptr);
    sps_status st = SPS_OK;
    /* the columns where rule 0 may apply: a CSR store sent its row pointers alone, another
       format's host copy has them */
    if (!p.col && dia_candidate(&s, A->ctx->backend))
        st = sps_ddownload(A->ctx, (void **)&p.col, A->ops->backend_csr(A)->col, (size_t)A->nnz * sizeof(sps_index),
                           "columns");
    if (st == SPS_OK) *fmt = decide(s, A->m, p.rowptr, p.col, A->ctx->backend, why);
    sps_host_pattern_free(&p);
    return st;
}
