/* Sparsity patterns for the Hola tests (test_hola.c on the CPU, test_gpu_hola.c
 * on the GPU): the adversarial shapes of the issue, placed against the Hola
 * block size NPB = 256 x 4 = 1024 non-zeros (npt 4; the GPU test also runs
 * every shape with npt 8, NPB 2048):
 *   empty matrices, 1x1, n x 1, 1 x n (one row spanning many blocks:
 *   single-row blocks), all entries in one column, one dense row, long and
 *   short rows mixed (rows spanning many blocks, warps with more than half of
 *   their threads inside one row: the warp reduction), runs of empty rows at
 *   block and thread boundaries and inside threads' ranges (flagged warps),
 *   blocks whose rows outnumber their non-zeros (COO decoding), bands, and
 *   with `large`, more than 300k non-zeros (npt 8 in the format).
 * A shape is (n, m, rowptr, col), columns sorted and distinct in each row. */
#ifndef SPS_TEST_HOLA_SHAPES_H
#define SPS_TEST_HOLA_SHAPES_H
#include "testutil.h"

#include <stdlib.h>

typedef struct {
    const char *name;
    int n, m;
    int64_t nnz;
    sps_index *rowptr, *col;
} hola_shape;

static inline int hs_cmp_idx(const void *a, const void *b)
{
    const sps_index x = *(const sps_index *)a, y = *(const sps_index *)b;
    return (x > y) - (x < y);
}

/* L distinct sorted random columns in [0, m) into c. */
static inline void hs_random_cols(tu_rng *rng, int m, int L, sps_index *c)
{
    if ((int64_t)L * 4 >= m) { /* selection sampling */
        int k = 0;
        for (int j = 0; j < m && k < L; j++)
            if (tu_rng_u64(rng) % (uint64_t)(m - j) < (uint64_t)(L - k)) c[k++] = j;
        return;
    }
    int k = 0;
    while (k < L) {
        for (int q = k; q < L; q++) c[q] = (sps_index)(tu_rng_u64(rng) % (uint64_t)m);
        qsort(c, (size_t)L, sizeof *c, hs_cmp_idx);
        k = 0;
        for (int q = 0; q < L; q++)
            if (q == 0 || c[q] != c[k - 1]) c[k++] = c[q];
    }
}

/* Rows of lengths len[0..n-1]; one_col >= 0: every entry in that column (len <= 1). */
static inline hola_shape hs_make(tu_rng *rng, const char *name, int n, int m, const int *len, int one_col)
{
    hola_shape s = {name, n, m, 0, tu_xcalloc((size_t)n + 1, sizeof(sps_index)), NULL};
    for (int i = 0; i < n; i++) s.rowptr[i + 1] = s.rowptr[i] + len[i];
    s.nnz = s.rowptr[n];
    s.col = tu_xcalloc((size_t)s.nnz, sizeof(sps_index));
    for (int i = 0; i < n; i++) {
        if (one_col >= 0) {
            if (len[i]) s.col[s.rowptr[i]] = one_col;
        } else {
            hs_random_cols(rng, m, len[i], s.col + s.rowptr[i]);
        }
    }
    return s;
}

static inline hola_shape hs_band(tu_rng *rng, const char *name, int n, int m, int lo, int hi, double p)
{
    hola_shape s = {name, n, m, 0, tu_xcalloc((size_t)n + 1, sizeof(sps_index)),
                    tu_xcalloc((size_t)n * (hi - lo + 1), sizeof(sps_index))};
    for (int i = 0; i < n; i++) {
        sps_index k = s.rowptr[i];
        for (int o = lo; o <= hi; o++)
            if (i + o >= 0 && i + o < m && tu_rng_uniform(rng) < p) s.col[k++] = i + o;
        s.rowptr[i + 1] = k;
    }
    s.nnz = s.rowptr[n];
    return s;
}

static inline void hs_free(hola_shape *s)
{
    free(s->rowptr);
    free(s->col);
    s->rowptr = s->col = NULL;
}

#define HS_MAX 40
/* Fills sh[] and returns how many; `large` adds the shapes beyond 300k non-zeros. */
static inline int hs_build(tu_rng *rng, hola_shape *sh, int large)
{
    int ns = 0;
    const int cap = 600000;
    int *len = tu_xcalloc((size_t)cap, sizeof *len);
    len[0] = 1;
    sh[ns++] = hs_make(rng, "1x1", 1, 1, len, -1);
    len[0] = 0;
    sh[ns++] = hs_make(rng, "1x1 no entry", 1, 1, len, -1);
    sh[ns++] = hs_make(rng, "0x0", 0, 0, len, -1);
    sh[ns++] = hs_make(rng, "0x7", 0, 7, len, -1);
    sh[ns++] = hs_make(rng, "7x0", 7, 0, len, -1);
    for (int i = 0; i < 25; i++) len[i] = 0;
    sh[ns++] = hs_make(rng, "25x25 no entries", 25, 25, len, -1);
    for (int i = 0; i < 200; i++) len[i] = (int)(tu_rng_u64(rng) % 2);
    sh[ns++] = hs_make(rng, "200x1, random 0/1 a row", 200, 1, len, -1);
    for (int i = 0; i < 5000; i++) len[i] = 1;
    sh[ns++] = hs_make(rng, "5000x1, full (4 rows a thread)", 5000, 1, len, -1);
    len[0] = 700;
    sh[ns++] = hs_make(rng, "1x1000 (700 entries: one partial single-row block)", 1, 1000, len, -1);
    len[0] = 9000;
    sh[ns++] = hs_make(rng, "1x12000 (one row over 9 blocks)", 1, 12000, len, -1);
    for (int i = 0; i < 3000; i++) len[i] = i % 5 != 2;
    sh[ns++] = hs_make(rng, "3000x50, all entries in column 17", 3000, 50, len, 17);
    for (int i = 0; i < 300; i++) len[i] = i == 150 ? 5000 : (int)(tu_rng_u64(rng) % 3);
    sh[ns++] = hs_make(rng, "300x5000, one dense row", 300, 5000, len, -1);
    for (int i = 0; i < 40; i++) len[i] = (int)(tu_rng_u64(rng) % 40);
    sh[ns++] = hs_make(rng, "40x40 random (one partial block)", 40, 40, len, -1);
    /* long and short rows mixed: rows spanning many blocks, and warps inside one row */
    for (int i = 0; i < 20000; i++)
        len[i] = i == 7000 ? 30000 : i == 7001 ? 2047 : i % 997 == 3 ? 1500 : i % 61 == 0 ? 200 : (int)(tu_rng_u64(rng) % 7);
    sh[ns++] = hs_make(rng, "20000x40000, lengths 0..6, 200, 1500, 2047, 30000", 20000, 40000, len, -1);
    /* runs of empty rows exactly at block boundaries (entry 1024 k), at thread boundaries
       (entry 4 k) and inside threads' ranges (entry 4 k + 2) */
    {
        int n = 0;
        int64_t pos = 0;
        while (pos < 12 * 1024) {
            const int atb = pos % 1024 == 0, att = pos % 4 == 0, mid = pos % 4 == 2 && pos % 3 == 0;
            const int run = atb ? 40 : att && pos % 7 == 0 ? 3 : mid ? 1 : 0;
            for (int r = 0; r < run; r++) len[n++] = 0;
            const int L = (pos / 1024) % 2 ? 2 : 4; /* even blocks: rows end at thread ends */
            len[n++] = L;
            pos += L;
        }
        for (int r = 0; r < 33; r++) len[n++] = 0; /* trailing empty rows */
        sh[ns++] = hs_make(rng, "empty-row runs at block/thread boundaries and inside threads", n, 300, len, -1);
    }
    /* COO decoding: blocks whose rows (empty ones included) outnumber their non-zeros */
    {
        const int n = 300000;
        for (int i = 0; i < n; i++) len[i] = i % 211 == 5 ? 1 + (int)(tu_rng_u64(rng) % 3) : 0;
        len[150001] = 700; /* a long row among them */
        sh[ns++] = hs_make(rng, "300000x1000, 1 row in 211 non-empty (COO decoding)", n, 1000, len, -1);
        for (int i = 0; i < 6000; i++) len[i] = i < 3000 ? (i % 3 == 0 ? 1 : 0) : 5; /* COO, then usual */
        sh[ns++] = hs_make(rng, "6000x800, sparse rows then rows of 5", 6000, 800, len, -1);
    }
    for (int i = 0; i < 30000; i++) len[i] = tu_rng_uniform(rng) < 0.3 ? 0 : (int)(tu_rng_u64(rng) % 4);
    sh[ns++] = hs_make(rng, "30000x30000, 30% empty rows, lengths 0..3", 30000, 30000, len, -1);
    sh[ns++] = hs_band(rng, "tridiagonal 1000x1000", 1000, 1000, -1, 1, 1.0);
    sh[ns++] = hs_band(rng, "band 3000x2000, offsets -5..3, 80% kept", 3000, 2000, -5, 3, 0.8);
    for (int i = 0; i < 4096; i++) len[i] = 256; /* every row a quarter block: rows end at block ends */
    sh[ns++] = hs_make(rng, "4096x3000, rows of 256", 4096, 3000, len, -1);
    if (large) {
        for (int i = 0; i < 100000; i++) len[i] = (int)(tu_rng_u64(rng) % 9) + (i % 4001 == 0 ? 3000 : 0);
        sh[ns++] = hs_make(rng, "100000x100000, lengths 0..8 and 3000 (npt 8)", 100000, 100000, len, -1);
        for (int i = 0; i < 600000; i++) len[i] = i % 2 ? 0 : 1 + (int)(tu_rng_u64(rng) % 2);
        sh[ns++] = hs_make(rng, "600000x70000, every other row empty", 600000, 70000, len, -1);
    }
    free(len);
    return ns;
}

#endif
