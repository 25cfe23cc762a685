/* spsolve-spin: triangle meshes (OBJ) and grayscale images (TGA) in and out.
 * Readers report "file:line: what" (TGA: "file: byte offset: field") into err. */
#ifndef SPIN_MESH_H
#define SPIN_MESH_H
#include "components.h"

#include <stddef.h>

/* The most corners of a face the reader splits into triangles. */
#define SPIN_MAX_CORNERS 64

typedef struct {
    int nv, nvt, nf;
    double *v;    /* 3 nv positions */
    double *vt;   /* 2 nvt texture coordinates */
    int *f;       /* 3 nf vertex indices, 0-based, counterclockwise */
    int *ft;      /* 3 nf texture indices (per corner), 0-based; -1 where a face has none */
    int polygons; /* faces of the file with more than 3 corners, each split into triangles (a fan) */
} spin_mesh;

/** Read v, vt and f (v, v/vt, v/vt/vn, v//vn corners; negative indices count from the end;
 *  a face of k > 3 corners, up to SPIN_MAX_CORNERS, as the k - 2 triangles of a fan from its
 *  first corner, counted in polygons); other lines (vn, comments, o, g, s, usemtl) are skipped.
 *  Refused with file:line: a coordinate that is not a finite number or is followed by other
 *  characters (further numbers, v's w or colours, are allowed and ignored), an index out of
 *  range, a face with a repeated vertex or of area at most 1e-12 of its longest edge squared,
 *  a surface that is not oriented.
 *  Returns 0, or -1 with err set. */
int spin_mesh_read(const char *path, spin_mesh *m, char *err, size_t errlen);
/** The connected components of m's faces (cell_components): label[i] the component of vertex
 *  i (nv entries), numbered by each one's lowest vertex; their number, or -1 out of memory. */
static inline int spin_mesh_components(const spin_mesh *m, int *label)
{
    return cell_components(m->nv, m->f, m->nf, 3, label);
}
/** Write v and f (1-based "f a b c") with 6 significant digits, as the reference, to a
 *  temporary file renamed over path.  Returns 0, or -1 with err set. */
int spin_mesh_write(const char *path, const spin_mesh *m, const double *pos, char *err, size_t errlen);
void spin_mesh_free(spin_mesh *m);
/** Drop the vertices no face uses (real OBJ files carry stray ones; E's row of such a vertex
 *  is empty and its solves fail), renumbering the rest in their order and the faces with them.
 *  Returns how many were dropped, *first the 1-based input number of the first (0 if none);
 *  or -1 out of memory, m unchanged. */
int spin_mesh_drop_unused(spin_mesh *m, int *first);
/** rounds of midpoint subdivision: every triangle into 4 (orientation kept), a new vertex
 *  at each edge's midpoint and a new texture coordinate at each texture edge's midpoint
 *  (faces without texture coordinates keep none).  Returns 0, or -1 with err set (a result of
 *  over 1e8 vertices or 4e8 faces is refused before any round, m unchanged). */
int spin_mesh_subdivide(spin_mesh *m, int rounds, char *err, size_t errlen);

typedef struct {
    int w, h;
    unsigned char *pix; /* w h bytes: pixel (x, y) = pix[x + y w] */
} spin_image;

/** An uncompressed 8-bit grayscale TGA (data type 3), read as the reference does: the
 *  18-byte header field by field, then w h bytes after the image ID and colour map (skipped),
 *  rows bottom first (a top-left origin's, byte 17 bit 5, turned over).  Returns 0, or -1
 *  with err set. */
int spin_image_read(const char *path, spin_image *im, char *err, size_t errlen);
void spin_image_free(spin_image *im);
#endif
