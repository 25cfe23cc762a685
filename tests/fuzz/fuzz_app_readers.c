/* libFuzzer harness: the apps' own readers on arbitrary bytes -- spsolve-fem's Gmsh reader
 * (apps/fem/gmsh.c, formats 2.2 and 4.1, physical groups), spsolve-spin's OBJ reader and its
 * TGA reader (apps/dirac/mesh.c) -- which read user files as the Matrix Market reader does
 * and are reviewed less.  The first byte picks the reader, the rest is the file.  A crash, a
 * sanitizer report, a leak, more than the rss limit (a declared count the file cannot hold
 * must be refused before arrays are sized from it) or a failure without a message is a
 * finding.  Build: cmake -DSPSOLVE_FUZZ=ON with clang (tests/fuzz/README.md). */
#include "fem.h"
#include "mesh.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[3][64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const ext[3] = {"msh", "obj", "tga"};
    if (!path[0][0])
        for (int k = 0; k < 3; k++) snprintf(path[k], sizeof path[k], "/tmp/fuzz_app.%ld.%s", (long)getpid(), ext[k]);
    if (size < 1) return 0;
    const int k = data[0] % 3;
    FILE *f = fopen(path[k], "wb");
    if (!f) return 0;
    const size_t w = fwrite(data + 1, 1, size - 1, f);
    fclose(f);
    if (w != size - 1) return 0;
    char err[512] = "";
    if (k == 0) {
        fem_mesh m;
        if (fem_gmsh_read(path[k], &m, err, sizeof err) == 0) {
            /* the groups as --clamp / --traction look them up */
            (void)fem_group(&m, "1");
            (void)fem_group(&m, "top");
            fem_mesh_free(&m);
        } else if (!err[0]) {
            abort(); /* every failure says why */
        }
    } else if (k == 1) {
        spin_mesh m;
        if (spin_mesh_read(path[k], &m, err, sizeof err) == 0) {
            int first = 0;
            (void)spin_mesh_drop_unused(&m, &first);
            spin_mesh_free(&m);
        } else if (!err[0]) {
            abort();
        }
    } else {
        spin_image im;
        if (spin_image_read(path[k], &im, err, sizeof err) == 0) spin_image_free(&im);
        else if (!err[0]) abort();
    }
    return 0;
}
