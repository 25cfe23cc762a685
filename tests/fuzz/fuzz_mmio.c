/* libFuzzer harness: the Matrix Market reader (io/mmio.c) on arbitrary bytes,
 * as a buffer and as a file (the streaming path, gzip when the input starts with
 * its magic), then, where it parses, the library's reader into a matrix on the CPU
 * backend (conversion to CSR, symmetry, compound entries).  Sizes are capped
 * (max_bytes, max_entries) as spsolve caps them, so a declared size cannot ask
 * the fuzzer for gigabytes; a crash, a sanitizer report or a leak is a finding.
 * Build: cmake -DSPSOLVE_FUZZ=ON with clang (tests/fuzz/README.md). */
#include "io/mmio.h"
#include "spsolve/spsolve.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sps_context ctx;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!ctx) {
        if (sps_context_create(&ctx, SPS_BACKEND_CPU, 0) != SPS_OK) abort();
        snprintf(path, sizeof path, "/tmp/fuzz_mmio.%ld.mtx", (long)getpid());
    }
    const sps_mm_options o = {.allow_nonfinite = size & 1, .allow_quaternion = 1, .max_entries = INT32_MAX,
                              .max_bytes = (int64_t)64 << 20};
    char err[512];
    sps_mm_data d;
    const sps_status sb = sps_mm_read_buffer((const char *)data, size, "fuzz", &o, &d, err, sizeof err);
    if (sb == SPS_OK) sps_mm_data_free(&d);
    else if (!err[0]) abort(); /* every failure says why */
    /* the same bytes as a file: the streaming reader (gzip when it has the magic) */
    FILE *f = fopen(path, "wb");
    if (f) {
        const size_t w = fwrite(data, 1, size, f);
        fclose(f);
        if (w == size) {
            const sps_status sf = sps_mm_read_file(path, &o, &d, err, sizeof err);
            if (sf == SPS_OK) sps_mm_data_free(&d);
            /* plain text reads the same from a buffer and a file */
            if (!(size >= 2 && data[0] == 0x1f && data[1] == 0x8b) && (sf == SPS_OK) != (sb == SPS_OK)) abort();
        }
    }
    if (sb == SPS_OK) {
        sps_read_options ro = {.allow_nonfinite = (int)(size & 1), .max_memory = (int64_t)64 << 20};
        sps_matrix A = NULL;
        const sps_scalar t = (size & 2) ? SPS_F32 : SPS_F64;
        if (sps_matrix_read_mtx_buffer(ctx, (const char *)data, size, "fuzz", t, &ro, &A) == SPS_OK) {
            sps_matrix_info_t info;
            if (sps_matrix_info(A, &info) != SPS_OK) abort();
            sps_matrix_destroy(A);
        } else if (!sps_context_error(ctx)[0]) {
            abort();
        }
        sps_context_clear_error(ctx);
    }
    return 0;
}
