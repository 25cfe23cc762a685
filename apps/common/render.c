/* The apps' --png (render.h). */
#define _POSIX_C_SOURCE 200809L
#include "render.h"

#include <spsolve/file.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* The view: a rotation of 30 degrees about y, then 20 about x (a three-quarter view). */
static void view(const double *p, double *o)
{
    const double cy = cos(0.5236), sy = sin(0.5236), cx = cos(0.3491), sx = sin(0.3491);
    const double x = cy * p[0] + sy * p[2], z = -sy * p[0] + cy * p[2];
    o[0] = x;
    o[1] = cx * p[1] - sx * z;
    o[2] = sx * p[1] + cx * z;
}

/* One mesh into columns [x0, x0 + size) of the RGB image (width w) with its depth buffer. */
static void draw(const render_mesh *m, unsigned char *rgb, float *zb, int w, int x0, int size)
{
    const double *pos = m->pos;
    double c[3] = {0, 0, 0}, r = 0;
    for (int i = 0; i < m->nv; i++)
        for (int k = 0; k < 3; k++) c[k] += pos[3 * i + k] / m->nv;
    for (int i = 0; i < m->nv; i++) {
        double d = 0;
        for (int k = 0; k < 3; k++) d += (pos[3 * i + k] - c[k]) * (pos[3 * i + k] - c[k]);
        r = d > r ? d : r;
    }
    r = sqrt(r) * 1.08;
    const double L[3] = {-0.4, 0.5, 0.77}; /* towards the light, about unit length */
    for (int f = 0; f < m->nf; f++) {
        double q[3][3];
        for (int k = 0; k < 3; k++) {
            double p[3];
            for (int d = 0; d < 3; d++) p[d] = (pos[3 * m->f[3 * f + k] + d] - c[d]) / r;
            view(p, q[k]);
        }
        const double ux = q[1][0] - q[0][0], uy = q[1][1] - q[0][1], uz = q[1][2] - q[0][2];
        const double vx = q[2][0] - q[0][0], vy = q[2][1] - q[0][1], vz = q[2][2] - q[0][2];
        double n[3] = {uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx};
        const double nn = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (!(nn > 0) || n[2] <= 0) continue; /* degenerate or facing away */
        const double lit = (n[0] * L[0] + n[1] * L[1] + n[2] * L[2]) / nn;
        const double shade = 0.25 + 0.75 * (lit > 0 ? lit : 0);
        double sx[3], sy[3];
        for (int k = 0; k < 3; k++) {
            sx[k] = x0 + (q[k][0] + 1) * 0.5 * size;
            sy[k] = (1 - q[k][1]) * 0.5 * size;
        }
        const int xa = (int)floor(fmin(sx[0], fmin(sx[1], sx[2]))), xb = (int)ceil(fmax(sx[0], fmax(sx[1], sx[2])));
        const int ya = (int)floor(fmin(sy[0], fmin(sy[1], sy[2]))), yb = (int)ceil(fmax(sy[0], fmax(sy[1], sy[2])));
        const double area = (sx[1] - sx[0]) * (sy[2] - sy[0]) - (sx[2] - sx[0]) * (sy[1] - sy[0]);
        if (area == 0) continue;
        for (int y = ya < 0 ? 0 : ya; y <= yb && y < size; y++)
            for (int x = xa < x0 ? x0 : xa; x <= xb && x < x0 + size; x++) {
                const double px = x + 0.5, py = y + 0.5;
                const double w0 = ((sx[1] - px) * (sy[2] - py) - (sx[2] - px) * (sy[1] - py)) / area;
                const double w1 = ((sx[2] - px) * (sy[0] - py) - (sx[0] - px) * (sy[2] - py)) / area;
                const double w2 = 1 - w0 - w1;
                if (w0 < 0 || w1 < 0 || w2 < 0) continue;
                const float z = (float)(w0 * q[0][2] + w1 * q[1][2] + w2 * q[2][2]);
                float *zp = zb + (size_t)y * w + x;
                if (z <= *zp) continue;
                *zp = z;
                unsigned char *o = rgb + 3 * ((size_t)y * w + x);
                static const float base[3] = {0.55f, 0.70f, 0.95f};
                const float *col = m->color ? m->color + 3 * (size_t)f : base;
                for (int k = 0; k < 3; k++) o[k] = (unsigned char)(255 * shade * col[k]);
            }
    }
}

static void be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24), p[1] = (unsigned char)(v >> 16), p[2] = (unsigned char)(v >> 8), p[3] = (unsigned char)v;
}

/* One PNG chunk: length, type, data, CRC of type and data. */
static int chunk(FILE *f, const char *type, const unsigned char *data, uint32_t len)
{
    unsigned char h[8];
    be32(h, len);
    memcpy(h + 4, type, 4);
    uLong crc = crc32(0L, (const Bytef *)type, 4);
    if (len) crc = crc32(crc, data, len);
    unsigned char t[4];
    be32(t, (uint32_t)crc);
    return fwrite(h, 1, 8, f) == 8 && (len == 0 || fwrite(data, 1, len, f) == len) && fwrite(t, 1, 4, f) == 4 ? 0 : -1;
}

int render_png(const char *path, const render_mesh *meshes, int n, int size, char *err, size_t errlen)
{
    const int w = n * size, h = size;
    unsigned char *rgb = malloc((size_t)w * h * 3), *raw = malloc((size_t)(3 * w + 1) * h);
    float *zb = malloc(sizeof(float) * (size_t)w * h);
    uLongf zlen = compressBound((uLong)((3 * w + 1) * h));
    unsigned char *z = malloc(zlen);
    int rc = -1;
    if (!rgb || !raw || !zb || !z) {
        snprintf(err, errlen, "%s: out of memory for a %d x %d image", path, w, h);
        goto done;
    }
    memset(rgb, 255, (size_t)w * h * 3);
    for (size_t i = 0; i < (size_t)w * h; i++) zb[i] = -1e30f;
    for (int k = 0; k < n; k++) draw(&meshes[k], rgb, zb, w, k * size, size);
    for (int y = 0; y < h; y++) { /* filter byte 0 (none) then the row */
        raw[(size_t)y * (3 * w + 1)] = 0;
        memcpy(raw + (size_t)y * (3 * w + 1) + 1, rgb + (size_t)y * 3 * w, (size_t)3 * w);
    }
    if (compress2(z, &zlen, raw, (uLong)((3 * w + 1) * h), 9) != Z_OK) {
        snprintf(err, errlen, "%s: zlib failed to compress the image", path);
        goto done;
    }
    /* written whole or not at all (sps_outfile: through a symbolic link, into a device,
       never replacing anything but a regular file) */
    sps_outfile o;
    FILE *f;
    if (sps_outfile_open(path, &o, &f, err, errlen) != SPS_OK) goto done;
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13];
    be32(ihdr, (uint32_t)w);
    be32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8, ihdr[9] = 2, ihdr[10] = 0, ihdr[11] = 0, ihdr[12] = 0; /* 8-bit RGB, no interlace */
    const int ok = fwrite(sig, 1, 8, f) == 8 && !chunk(f, "IHDR", ihdr, 13) && !chunk(f, "IDAT", z, (uint32_t)zlen) &&
                   !chunk(f, "IEND", NULL, 0);
    if (!ok) snprintf(err, errlen, "%s: write error", path);
    if (sps_outfile_close(o, ok, err, errlen) != SPS_OK) goto done;
    rc = 0;
done:
    free(rgb);
    free(raw);
    free(zb);
    free(z);
    return rc;
}
