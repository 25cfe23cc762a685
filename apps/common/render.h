/* The apps' --png: triangle meshes side by side, flat-shaded by a small software
 * rasteriser (z-buffer, one directional light, orthographic view from a fixed oblique
 * angle), each triangle in its own colour or the default, written as an 8-bit RGB PNG
 * through zlib (spsolve-spin: the input and output surfaces; spsolve-fem: the deformed
 * boundary coloured by stress).  Public API of nothing: a helper of the apps. */
#ifndef SPS_APP_RENDER_H
#define SPS_APP_RENDER_H
#include <stddef.h>

typedef struct {
    int nv, nf;
    const double *pos;  /* 3 nv positions */
    const int *f;       /* 3 nf vertex indices, counterclockwise seen from outside */
    const float *color; /* 3 nf RGB in [0, 1], or NULL: the default blue */
} render_mesh;

/** Render the meshes side by side into an (n size) x size image at path (written through
 *  a temporary file renamed over it).  Each mesh is centred and scaled to its own bounding
 *  sphere.  Returns 0, or -1 with err set. */
int render_png(const char *path, const render_mesh *meshes, int n, int size, char *err, size_t errlen);
#endif
