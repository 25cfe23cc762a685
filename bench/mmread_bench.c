/* Matrix Market reader throughput.
 *
 *   mmread_bench                 generate a random coordinate file in /tmp
 *                                (default 5M entries, mixed value formats),
 *                                plus a gzip copy, and time both
 *   mmread_bench [-n N] [-r R]   N entries, best of R runs (default 3)
 *   mmread_bench FILE...         time reading the given files
 *
 * MB/s counts bytes of Matrix Market text (after gunzip), 1 MB = 1e6 bytes.
 * "file" times sps_mm_read_file (read + gunzip + parse), "parse" times
 * sps_mm_read_buffer on the text already in memory. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include "io/mmio.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}
static double urand(void) { return (double)(rng() >> 11) * (1.0 / 9007199254740992.0); }

/* Values in the shapes real files use: shortest round-trip (17 digits),
 * HB-style %.13e, short fixed, integers, 1.1E1-style. */
static int gen(const char *path, long long n)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 20);
    const int32_t rows = 1000000, cols = 1000000;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% mmread_bench random matrix\n");
    fprintf(f, "%d %d %lld\n", rows, cols, n);
    for (long long k = 0; k < n; k++) {
        int i = (int)(rng() % (uint64_t)rows) + 1, j = (int)(rng() % (uint64_t)cols) + 1;
        double v = (urand() - 0.5) * 1e3;
        switch (rng() % 5) {
        case 0: fprintf(f, "%d %d %.17g\n", i, j, v); break;
        case 1: fprintf(f, "%d %d %.13e\n", i, j, v); break;
        case 2: fprintf(f, "%d %d %.6f\n", i, j, v); break;
        case 3: fprintf(f, "%d %d %d\n", i, j, (int)v); break;
        default: fprintf(f, "%d %d %.4E\n", i, j, v); break;
        }
    }
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    return 0;
}

static int gzip_copy(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb");
    gzFile out = gzopen(dst, "wb6");
    if (!in || !out) {
        fprintf(stderr, "cannot create %s\n", dst);
        if (in) fclose(in);
        if (out) gzclose(out);
        return 1;
    }
    static char buf[1 << 16];
    size_t r;
    while ((r = fread(buf, 1, sizeof buf, in)) > 0) gzwrite(out, buf, (unsigned)r);
    fclose(in);
    return gzclose(out) == Z_OK ? 0 : 1;
}

/* Text (decompressed) of a file; gzread passes plain files through. */
static char *load_text(const char *path, size_t *len)
{
    gzFile g = gzopen(path, "rb");
    if (!g) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *b = malloc(cap);
    int r;
    while (b && (r = gzread(g, b + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)r;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    gzclose(g);
    *len = n;
    return b;
}

static int bench(const char *path, int reps)
{
    size_t len = 0;
    char *text = load_text(path, &len);
    if (!text) {
        fprintf(stderr, "cannot read %s\n", path);
        return 1;
    }
    char err[512];
    sps_mm_data d;
    double best_file = 1e30, best_parse = 1e30;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        sps_status st = sps_mm_read_file(path, NULL, &d, err, sizeof err);
        double t1 = now();
        if (st != SPS_OK) {
            fprintf(stderr, "%s\n", err);
            free(text);
            return 1;
        }
        if (r == reps - 1)
            printf("%s: %d x %d, %lld entries in file, %lld after expansion, %.1f MB of text\n", path, d.rows,
                   d.cols, (long long)d.nnz_file, (long long)d.nnz, (double)len / 1e6);
        sps_mm_data_free(&d);
        if (t1 - t0 < best_file) best_file = t1 - t0;

        t0 = now();
        st = sps_mm_read_buffer(text, len, path, NULL, &d, err, sizeof err);
        t1 = now();
        sps_mm_data_free(&d);
        if (st != SPS_OK) {
            fprintf(stderr, "%s\n", err);
            free(text);
            return 1;
        }
        if (t1 - t0 < best_parse) best_parse = t1 - t0;
    }
    printf("  sps_mm_read_file   %8.3f s  %7.1f MB/s (best of %d)\n", best_file, (double)len / 1e6 / best_file,
           reps);
    printf("  sps_mm_read_buffer %8.3f s  %7.1f MB/s (best of %d)\n", best_parse, (double)len / 1e6 / best_parse,
           reps);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    long long n = 5000000;
    int reps = 3, nfiles = 0, rc = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) n = atoll(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: %s [-n entries] [-r reps] [file.mtx[.gz] ...]\n", argv[0]);
            return 0;
        }
    }
    if (reps < 1) reps = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") || !strcmp(argv[i], "-r")) {
            i++;
            continue;
        }
        nfiles++;
        rc |= bench(argv[i], reps);
    }
    if (nfiles) return rc;

    char path[256], gzpath[300];
    snprintf(path, sizeof path, "/tmp/mmread_bench_%ld.mtx", (long)getpid());
    snprintf(gzpath, sizeof gzpath, "%s.gz", path);
    printf("generating %lld random entries in %s ...\n", n, path);
    rc = gen(path, n);
    if (!rc) rc = gzip_copy(path, gzpath);
    if (!rc) rc = bench(path, reps);
    if (!rc) rc = bench(gzpath, reps);
    remove(path);
    remove(gzpath);
    return rc;
}
