/* spsolve-spin --png: the input and output meshes side by side, flat-shaded by a small
 * software rasteriser (z-buffer, one directional light, orthographic view from a fixed
 * oblique angle), written as an 8-bit RGB PNG through zlib. */
#ifndef SPIN_RENDER_H
#define SPIN_RENDER_H
#include "mesh.h"

/** Render positions a and b (3 nv each, faces of m) into a 2 size x size image at path
 *  (written through a temporary file renamed over it).  Each mesh is centred and scaled
 *  to its own bounding sphere.  Returns 0, or -1 with err set. */
int spin_render_png(const char *path, const spin_mesh *m, const double *a, const double *b, int size, char *err,
                    size_t errlen);
#endif
