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
 * A shape is a tu_shape of testutil.h (n, m, rowptr, col), columns sorted and
 * distinct in each row; free each with tu_shape_free. */
#ifndef SPS_TEST_HOLA_SHAPES_H
#define SPS_TEST_HOLA_SHAPES_H
#include "testutil.h"

#include <stdlib.h>

#define HS_MAX 40
/* Fills sh[] and returns how many; `large` adds the shapes beyond 300k non-zeros,
 * large > 1 also one of 1.2M rows (the GPU test: the row-starts kernel's widest form). */
static inline int hs_build(tu_rng *rng, tu_shape *sh, int large)
{
    int ns = 0;
    const int cap = 1300000;
    int *len = tu_xcalloc((size_t)cap, sizeof *len);
    len[0] = 1;
    sh[ns++] = tu_shape_make(rng, "1x1", 1, 1, len, -1);
    len[0] = 0;
    sh[ns++] = tu_shape_make(rng, "1x1 no entry", 1, 1, len, -1);
    sh[ns++] = tu_shape_make(rng, "0x0", 0, 0, len, -1);
    sh[ns++] = tu_shape_make(rng, "0x7", 0, 7, len, -1);
    sh[ns++] = tu_shape_make(rng, "7x0", 7, 0, len, -1);
    for (int i = 0; i < 25; i++) len[i] = 0;
    sh[ns++] = tu_shape_make(rng, "25x25 no entries", 25, 25, len, -1);
    for (int i = 0; i < 200; i++) len[i] = (int)(tu_rng_u64(rng) % 2);
    sh[ns++] = tu_shape_make(rng, "200x1, random 0/1 a row", 200, 1, len, -1);
    for (int i = 0; i < 5000; i++) len[i] = 1;
    sh[ns++] = tu_shape_make(rng, "5000x1, full", 5000, 1, len, -1);
    len[0] = 700;
    sh[ns++] = tu_shape_make(rng, "1x1000 (700 entries: one partial single-row block)", 1, 1000, len, -1);
    len[0] = 9000;
    sh[ns++] = tu_shape_make(rng, "1x12000 (one row over 9 blocks)", 1, 12000, len, -1);
    for (int i = 0; i < 3000; i++) len[i] = i % 5 != 2;
    sh[ns++] = tu_shape_make(rng, "3000x50, all entries in column 17", 3000, 50, len, 17);
    for (int i = 0; i < 300; i++) len[i] = i == 150 ? 5000 : (int)(tu_rng_u64(rng) % 3);
    sh[ns++] = tu_shape_make(rng, "300x5000, one dense row", 300, 5000, len, -1);
    for (int i = 0; i < 40; i++) len[i] = (int)(tu_rng_u64(rng) % 40);
    sh[ns++] = tu_shape_make(rng, "40x40 random (one partial block)", 40, 40, len, -1);
    /* long and short rows mixed: rows spanning many blocks, and warps inside one row */
    for (int i = 0; i < 20000; i++)
        len[i] = i == 7000 ? 30000 : i == 7001 ? 2047 : i % 997 == 3 ? 1500 : i % 61 == 0 ? 200 : (int)(tu_rng_u64(rng) % 7);
    sh[ns++] = tu_shape_make(rng, "20000x40000, lengths 0..6, 200, 1500, 2047, 30000", 20000, 40000, len, -1);
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
        sh[ns++] = tu_shape_make(rng, "empty-row runs at block/thread boundaries and inside threads", n, 300, len, -1);
    }
    /* COO decoding: blocks whose rows (empty ones included) outnumber their non-zeros */
    {
        const int n = 300000;
        for (int i = 0; i < n; i++) len[i] = i % 211 == 5 ? 1 + (int)(tu_rng_u64(rng) % 3) : 0;
        len[150001] = 700; /* a long row among them */
        sh[ns++] = tu_shape_make(rng, "300000x1000, 1 row in 211 non-empty (COO decoding)", n, 1000, len, -1);
        for (int i = 0; i < 6000; i++) len[i] = i < 3000 ? (i % 3 == 0 ? 1 : 0) : 5; /* COO, then usual */
        sh[ns++] = tu_shape_make(rng, "6000x800, sparse rows then rows of 5", 6000, 800, len, -1);
    }
    for (int i = 0; i < 30000; i++) len[i] = tu_rng_uniform(rng) < 0.3 ? 0 : (int)(tu_rng_u64(rng) % 4);
    sh[ns++] = tu_shape_make(rng, "30000x30000, 30% empty rows, lengths 0..3", 30000, 30000, len, -1);
    sh[ns++] = tu_shape_band(rng, "tridiagonal 1000x1000", 1000, 1000, -1, 1, 1.0);
    sh[ns++] = tu_shape_band(rng, "band 3000x2000, offsets -5..3, 80% kept", 3000, 2000, -5, 3, 0.8);
    for (int i = 0; i < 4096; i++) len[i] = 256; /* every row a quarter block: rows end at block ends */
    sh[ns++] = tu_shape_make(rng, "4096x3000, rows of 256", 4096, 3000, len, -1);
    if (large) {
        for (int i = 0; i < 100000; i++) len[i] = (int)(tu_rng_u64(rng) % 9) + (i % 4001 == 0 ? 3000 : 0);
        sh[ns++] = tu_shape_make(rng, "100000x100000, lengths 0..8 and 3000 (npt 8)", 100000, 100000, len, -1);
        /* 600002 rows: 4 rows a thread in the row-starts kernel on an H100 (132 SMs), with a
           scalar tail of 2 rows */
        for (int i = 0; i < 600002; i++) len[i] = i % 2 ? 0 : 1 + (int)(tu_rng_u64(rng) % 2);
        sh[ns++] = tu_shape_make(rng, "600002x70000, every other row empty (4 rows a thread, tail 2)", 600002, 70000,
                                 len, -1);
    }
    if (large > 1) {
        /* over a million rows: the row-starts kernel takes 8 rows a thread on an H100
           (4 on the 600000 rows above); n not a multiple of 8: the scalar tail */
        for (int i = 0; i < 1200003; i++) len[i] = i % 5 == 1 ? 0 : (int)(tu_rng_u64(rng) % 4);
        sh[ns++] = tu_shape_make(rng, "1200003x5000, lengths 0..3, two in five empty (8 rows a thread)", 1200003, 5000,
                                 len, -1);
        /* 1081351 rows: just at the 8-rows-a-thread threshold on an H100 (n / 8 = 132 x 1024),
           tail 7; runs of empty rows over whole 8-row groups */
        for (int i = 0; i < 1081351; i++) len[i] = (i / 8) % 13 == 4 ? 0 : (int)(tu_rng_u64(rng) % 3);
        sh[ns++] = tu_shape_make(rng, "1081351x3000, lengths 0..2, empty 8-row groups (8 rows a thread, tail 7)",
                                 1081351, 3000, len, -1);
    }
    free(len);
    return ns;
}

#endif
