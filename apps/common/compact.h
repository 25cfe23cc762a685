/* The apps' meshes without the vertices no cell uses (a Gmsh geometry's points, an OBJ
 * file's stray vertices): their rows of K or E would be empty, the solves singular. */
#ifndef APPS_COMMON_COMPACT_H
#define APPS_COMMON_COMPACT_H
#include <stddef.h>
#include <string.h>

/* Keep the vertices (3 coordinates each in v, nv of them) that the ncorner cell corners
 * reference, in their order: v compacted in place, the corners renumbered, map[i] the new
 * index of vertex i or -1 where it was dropped (map: nv ints).  Returns how many are kept. */
static inline int compact_vertices(double *v, int nv, int *corner, size_t ncorner, int *map)
{
    for (int i = 0; i < nv; i++) map[i] = -1;
    for (size_t k = 0; k < ncorner; k++) map[corner[k]] = 0;
    int n = 0;
    for (int i = 0; i < nv; i++)
        if (!map[i]) {
            memmove(v + 3 * (size_t)n, v + 3 * (size_t)i, 3 * sizeof(double));
            map[i] = n++;
        }
    for (size_t k = 0; k < ncorner; k++) corner[k] = map[corner[k]];
    return n;
}
#endif
