/* The connected components of an apps' mesh: cells (triangles, tetrahedra) of k corners join
 * their vertices.  The spin app transforms each surface on its own, the FEM app refuses a part
 * no clamp holds; one union-find serves both. */
#ifndef APPS_COMMON_COMPONENTS_H
#define APPS_COMMON_COMPONENTS_H
#include <stddef.h>
#include <stdlib.h>

/* Union-find root of i (path halving). */
static inline int cell_root(int *up, int i)
{
    while (up[i] != i) i = up[i] = up[up[i]];
    return i;
}

/* label[i] (nv entries): the component of vertex i, numbered by each one's lowest vertex; the
 * ncell cells' corners (k each) join their vertices, a vertex in no cell is a component of its
 * own.  Returns their number, or -1 out of memory. */
static inline int cell_components(int nv, const int *corner, int ncell, int k, int *label)
{
    int *up = (int *)malloc(sizeof *up * ((size_t)nv + 1));
    if (!up) return -1;
    for (int i = 0; i < nv; i++) up[i] = i, label[i] = -1;
    for (int e = 0; e < ncell; e++)
        for (int c = 1; c < k; c++) {
            const int a = cell_root(up, corner[(size_t)k * e]), b = cell_root(up, corner[(size_t)k * e + c]);
            if (a != b) up[a] = b;
        }
    int n = 0; /* a root's label first, then every vertex's */
    for (int i = 0; i < nv; i++) {
        const int r = cell_root(up, i);
        if (label[r] < 0) label[r] = n++;
        label[i] = label[r];
    }
    free(up);
    return n;
}
#endif
