/* spsolve-spin: OBJ and TGA readers, OBJ writer (mesh.h). */
#define _POSIX_C_SOURCE 200809L
#include "mesh.h"
#include "compact.h"
#include "spin_math.h"

#include <spsolve/file.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Append one item of sz bytes to *arr (count *n, capacity *cap). */
static int push(void **arr, int *n, int *cap, const void *item, size_t sz)
{
    if (*n == *cap) {
        const int nc = *cap ? 2 * *cap : 1024;
        void *p = realloc(*arr, (size_t)nc * sz);
        if (!p) return -1;
        *arr = p;
        *cap = nc;
    }
    memcpy((char *)*arr + (size_t)*n * sz, item, sz);
    (*n)++;
    return 0;
}

/* The end of a line's items: its end or a trailing comment. */
static int line_end(char c) { return c == '\n' || c == '\r' || c == '\0' || c == '#'; }

/* The numbers of a v or vt line from e: the first k into x, any further ones (v's optional w
 * or vertex colours, vt's w) only checked.  Each must be finite and end at a blank or the
 * line's end: strtod alone takes "0abc" as 0, and a nan or inf coordinate would reach the
 * solves as a NaN far from its line.  Returns 0; -1: fewer than k numbers; -2: a number not
 * finite; -3: other characters (*at: where, in both). */
static int read_reals(char *e, int k, double *x, char **at)
{
    for (int got = 0;; got++) {
        while (*e == ' ' || *e == '\t') e++;
        if (line_end(*e)) return got < k ? -1 : 0;
        char *q;
        const double y = strtod(e, &q);
        *at = q;
        if (q == e || (*q != ' ' && *q != '\t' && !line_end(*q))) return -3;
        *at = e;
        if (!isfinite(y)) return -2;
        if (got < k) x[got] = y;
        e = q;
    }
}

/* Whether c ends an OBJ keyword (a blank or the line's end), and whether it starts an index
 * (strtol would also skip blanks before one). */
static int obj_word_end(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\0'; }
static int obj_num_start(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+'; }

/* One index of a face corner: 1-based, or negative (relative to the end).  Compared as a
 * long before any conversion to int: strtol saturates at LONG_MIN, whose negation overflows,
 * and a value past INT_MAX would wrap. */
static int obj_index(long v, int count, int *out)
{
    if (v > 0 && v <= (long)count) *out = (int)(v - 1);
    else if (v < 0 && v >= -(long)count) *out = (int)(count + v);
    else return -1;
    return 0;
}

/* A face's corners are 3 distinct vertices spanning a triangle of area above 1e-12 of its
 * longest edge squared: at that ratio the corners are collinear to rounding and E's blocks
 * of the face, -e_i e_j / (4 A), are noise or a division by 0.  Slivers above it are taken,
 * though E's blocks outgrow their neighbours' by the inverse ratio and the solves may then
 * fail (a relative area of 1.6e-10 broke CG down; 4.7e-10 converged in 5x the iterations):
 * refusing a real mesh on that guess would be worse.  Returns 0, or -1 with err set. */
static int check_face(const char *path, long lineno, const double *v, const int *vi, char *err, size_t errlen)
{
    for (int c = 0; c < 3; c++)
        if (vi[c] == vi[(c + 1) % 3])
            return fail(err, errlen, "%s:%ld: a face with vertex %d twice (a degenerate triangle)", path, lineno,
                        vi[c] + 1);
    double e[3][3], l2 = 0;
    const double A = spin_face_edges(v, vi, e);
    for (int c = 0; c < 3; c++) l2 = dot3(e[c], e[c]) > l2 ? dot3(e[c], e[c]) : l2;
    if (!isfinite(A) || !isfinite(l2))
        return fail(err, errlen, "%s:%ld: the face's area overflows (coordinates too large)", path, lineno);
    /* its edges' products underflow, collinear or not: the area comes from squared lengths
       squared again (|e|^4), gone below |e| ~ 1e-77 */
    if (!(A > 0) && sqrt(l2) < 1e-75)
        return fail(err, errlen, "%s:%ld: a face too small for double precision (longest edge %.3g: its area is 0)",
                    path, lineno, sqrt(l2));
    /* collinear to rounding: its cotangents are noise or infinite.  Slivers above this are
       taken: a relative area of 5e-10 still solved (in 5x the iterations), 1.6e-10 broke CG
       down, and a real mesh is better tried than refused on a guess */
    if (!(A > 1e-12 * l2))
        return fail(err, errlen,
                    "%s:%ld: a degenerate face (area %.3g, longest edge %.3g: its corners coincide or are collinear;"
                    " an area of at most 1e-12 of the longest edge squared is refused)",
                    path, lineno, A, sqrt(l2));
    return 0;
}

/* An edge (a, b) as one key, a * 2^31 + b (vertex numbers are ints): sorted tables of them
 * find the oriented-surface repeats below and the subdivision's edges. */
typedef struct { long long key; int id; } edge_slot;
static long long edge_key(int a, int b) { return (long long)a * 2147483648LL + b; }
static int edge_cmp(const void *a, const void *b)
{
    const long long x = ((const edge_slot *)a)->key, y = ((const edge_slot *)b)->key;
    return x < y ? -1 : x > y;
}

/* An oriented surface uses each directed edge at most once: a face written the other way
 * round, a face listed twice, or a third face on an edge repeats one.  The operator needs a
 * consistent orientation, and such a mesh had solved to a meaningless result (a flipped face
 * of a tetrahedron: x^H E x 0.527 against 0.046).  The directed edges, each with its face. */
static int check_orientation(const char *path, const spin_mesh *m, const long *fline, char *err, size_t errlen)
{
    edge_slot *e = malloc(sizeof *e * 3 * (size_t)m->nf);
    if (!e) return fail(err, errlen, "out of memory");
    for (int t = 0; t < m->nf; t++)
        for (int c = 0; c < 3; c++)
            e[3 * t + c] = (edge_slot){edge_key(m->f[3 * t + c], m->f[3 * t + (c + 1) % 3]), t};
    qsort(e, 3 * (size_t)m->nf, sizeof *e, edge_cmp);
    int rc = 0;
    for (size_t k = 1; k < 3 * (size_t)m->nf && !rc; k++)
        if (e[k].key == e[k - 1].key) {
            const int a = e[k - 1].id, b = e[k].id, f1 = a < b ? a : b, f2 = a < b ? b : a; /* qsort: ties unordered */
            rc = fail(err, errlen,
                      "%s:%ld: edge %lld-%lld is used in the same direction as by the face of line %ld (a face "
                      "flipped, listed twice, or a third face on that edge: the surface must be oriented)",
                      path, fline[f2], e[k].key / 2147483648LL + 1, e[k].key % 2147483648LL + 1, fline[f1]);
        }
    free(e);
    return rc;
}

int spin_mesh_read(const char *path, spin_mesh *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "r");
    if (!f) return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    int capv = 0, capt = 0, capf = 0, capft = 0, nf3 = 0, nft3 = 0, nvd = 0, ntd = 0; /* doubles, ints held */
    int nvn = 0;        /* vn lines: normals are not used, but a face's normal index must name one */
    long *fline = NULL; /* each face's line, for the orientation check's message */
    int nfl = 0, capfl = 0;
    char *line = NULL;
    size_t lcap = 0;
    long lineno = 0;
    int rc = 0;
    while (getline(&line, &lcap, f) >= 0) {
        lineno++;
        char *p = line;
        while (*p == ' ' || *p == '\t') p++;
        /* a keyword ends at a blank or the line's end: a bare "v" is a vertex line short of its
           coordinates (an error), not a line to skip (which shifted every later vertex number) */
        const int is_v = p[0] == 'v' && obj_word_end(p[1]);
        if (is_v || (p[0] == 'v' && p[1] == 't' && obj_word_end(p[2]))) {
            /* v x y z, or vt u v: k numbers appended to their array */
            const int k = is_v ? 3 : 2;
            double x[3];
            char *at = p;
            const int r = read_reals(is_v ? p + 1 : p + 2, k, x, &at);
            if (r) {
                if (r == -1)
                    rc = fail(err, errlen, is_v ? "%s:%ld: vertex needs 3 coordinates"
                                                : "%s:%ld: texture coordinate needs u and v", path, lineno);
                else if (r == -2)
                    rc = fail(err, errlen, "%s:%ld: column %ld: a number that is not finite", path, lineno,
                              (long)(at - line) + 1);
                else
                    rc = fail(err, errlen, "%s:%ld: column %ld: unexpected '%c'", path, lineno, (long)(at - line) + 1,
                              *at);
                break;
            }
            for (int c = 0; c < k && rc == 0; c++)
                if (is_v ? push((void **)&m->v, &nvd, &capv, &x[c], sizeof(double))
                         : push((void **)&m->vt, &ntd, &capt, &x[c], sizeof(double)))
                    rc = fail(err, errlen, "out of memory");
            if (rc == 0) *(is_v ? &m->nv : &m->nvt) += 1;
        } else if (p[0] == 'v' && p[1] == 'n' && obj_word_end(p[2])) {
            nvn++;
        } else if (p[0] == 'f' && obj_word_end(p[1])) {
            int vi[SPIN_MAX_CORNERS], ti[SPIN_MAX_CORNERS], k = 0;
            char *e = p + 1;
            for (;;) {
                while (*e == ' ' || *e == '\t') e++;
                if (line_end(*e)) break; /* a trailing comment too, as on v lines */
                if (k == SPIN_MAX_CORNERS) {
                    rc = fail(err, errlen, "%s:%ld: a face of more than %d corners", path, lineno, SPIN_MAX_CORNERS);
                    break;
                }
                char *q;
                long a = strtol(e, &q, 10);
                if (q == e || obj_index(a, m->nv, &vi[k])) {
                    rc = fail(err, errlen, "%s:%ld: face corner %d: vertex index out of 1..%d", path, lineno, k + 1,
                              m->nv);
                    break;
                }
                e = q;
                ti[k] = -1;
                if (*e == '/') {
                    e++;
                    if (*e != '/') {
                        /* strtol would skip blanks: "1/ 2" read 2 as corner 1's texture index */
                        if (!obj_num_start(*e)) {
                            rc = fail(err, errlen, "%s:%ld: face corner %d: no texture index after '/'", path, lineno,
                                      k + 1);
                            break;
                        }
                        long b = strtol(e, &q, 10);
                        if (q == e || obj_index(b, m->nvt, &ti[k])) {
                            rc = fail(err, errlen, "%s:%ld: face corner %d: texture index out of 1..%d", path, lineno,
                                      k + 1, m->nvt);
                            break;
                        }
                        e = q;
                    }
                    /* the normal: a number, or nothing before a blank.  Not used, but checked as
                       the other indices are: a file naming a normal it lacks is malformed */
                    if (*e == '/') {
                        e++;
                        if (obj_num_start(*e)) {
                            int ni;
                            const long c = strtol(e, &q, 10);
                            if (q == e || obj_index(c, nvn, &ni)) {
                                rc = fail(err, errlen, "%s:%ld: face corner %d: normal index out of 1..%d", path,
                                          lineno, k + 1, nvn);
                                break;
                            }
                            e = q;
                        }
                    }
                }
                if (*e != ' ' && *e != '\t' && !line_end(*e)) {
                    rc = fail(err, errlen, "%s:%ld: face corner %d: unexpected '%c'", path, lineno, k + 1, *e);
                    break;
                }
                k++;
            }
            if (rc == 0 && k < 3) rc = fail(err, errlen, "%s:%ld: a face of %d corners", path, lineno, k);
            /* a polygon: the triangles (0, j, j + 1) of a fan, each checked and listed at the line
               (a non-convex or non-planar one may give a degenerate or flipped triangle: refused so) */
            if (rc == 0 && k > 3) m->polygons++;
            for (int j = 1; rc == 0 && j + 1 < k; j++) {
                const int tv[3] = {vi[0], vi[j], vi[j + 1]}, tt[3] = {ti[0], ti[j], ti[j + 1]};
                rc = check_face(path, lineno, m->v, tv, err, errlen);
                for (int c = 0; c < 3 && rc == 0; c++)
                    if (push((void **)&m->f, &nf3, &capf, &tv[c], sizeof(int)) ||
                        push((void **)&m->ft, &nft3, &capft, &tt[c], sizeof(int)))
                        rc = fail(err, errlen, "out of memory");
                if (rc == 0 && push((void **)&fline, &nfl, &capfl, &lineno, sizeof lineno))
                    rc = fail(err, errlen, "out of memory");
                if (rc == 0) m->nf++;
            }
        }
        if (rc) break;
    }
    free(line);
    if (rc == 0 && ferror(f)) rc = fail(err, errlen, "%s: read error: %s", path, strerror(errno));
    fclose(f);
    if (rc == 0 && (m->nv == 0 || m->nf == 0))
        rc = fail(err, errlen, "%s: no %s (an OBJ mesh of v and f lines)", path, m->nv ? "faces" : "vertices");
    if (rc == 0) rc = check_orientation(path, m, fline, err, errlen);
    free(fline);
    if (rc) spin_mesh_free(m);
    return rc;
}

/* Written whole or not at all (sps_outfile: through a symbolic link, into a device, never
 * replacing anything but a regular file). */
int spin_mesh_write(const char *path, const spin_mesh *m, const double *pos, char *err, size_t errlen)
{
    sps_outfile o;
    FILE *f;
    if (sps_outfile_open(path, &o, &f, err, errlen) != SPS_OK) return -1;
    for (int i = 0; i < m->nv; i++) fprintf(f, "v %.6g %.6g %.6g\n", pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    for (int t = 0; t < m->nf; t++) fprintf(f, "f %d %d %d\n", m->f[3 * t] + 1, m->f[3 * t + 1] + 1, m->f[3 * t + 2] + 1);
    const int ok = !ferror(f);
    if (!ok) snprintf(err, errlen, "%s: write error", path);
    return sps_outfile_close(o, ok, err, errlen) == SPS_OK ? 0 : -1;
}

int spin_mesh_drop_unused(spin_mesh *m, int *first)
{
    int *map = malloc(sizeof *map * ((size_t)m->nv + 1));
    if (!map) return -1;
    const int n = compact_vertices(m->v, m->nv, m->f, 3 * (size_t)m->nf, map), dropped = m->nv - n;
    *first = 0;
    for (int i = 0; i < m->nv && !*first; i++)
        if (map[i] < 0) *first = i + 1;
    m->nv = n;
    free(map);
    return dropped;
}

void spin_mesh_free(spin_mesh *m)
{
    free(m->v);
    free(m->vt);
    free(m->f);
    free(m->ft);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- subdivision */
/* The midpoint index of edge (a, b) in the sorted table (size n). */
static int edge_find(const edge_slot *t, long n, int a, int b)
{
    const long long key = edge_key(a < b ? a : b, a < b ? b : a);
    long lo = 0, hi = n - 1;
    while (lo <= hi) {
        const long mid = (lo + hi) / 2;
        if (t[mid].key < key) lo = mid + 1;
        else if (t[mid].key > key) hi = mid - 1;
        else return t[mid].id;
    }
    return -1;
}

/* Unique edges of the 3 nf index triples idx (skipping faces with idx < 0), numbered from
 * first: a sorted table of n entries, or NULL when out of memory. */
static edge_slot *edge_table(const int *idx, int nf, int first, long *n)
{
    edge_slot *t = malloc(sizeof *t * 3 * (size_t)(nf ? nf : 1));
    if (!t) return NULL;
    long k = 0;
    for (int f = 0; f < nf; f++)
        for (int c = 0; c < 3; c++) {
            const int a = idx[3 * f + c], b = idx[3 * f + (c + 1) % 3];
            if (a < 0 || b < 0) continue;
            t[k].key = edge_key(a < b ? a : b, a < b ? b : a);
            t[k++].id = 0;
        }
    qsort(t, (size_t)k, sizeof *t, edge_cmp);
    long u = 0;
    for (long j = 0; j < k; j++)
        if (u == 0 || t[j].key != t[u - 1].key) t[u++] = t[j];
    for (long j = 0; j < u; j++) t[j].id = first + (int)j;
    *n = u;
    return t;
}

int spin_mesh_subdivide(spin_mesh *m, int rounds, char *err, size_t errlen)
{
    /* The final size before anything is allocated: a round adds a vertex an edge, splits each
     * edge in two and adds 3 inside each face (E' = 2 E + 3 F), and makes 4 faces of each, so
     * a request too large is refused at once rather than after the rounds that fit. */
    if (rounds > 0) {
        long ne = 0;
        edge_slot *ev = edge_table(m->f, m->nf, 0, &ne);
        if (!ev) return fail(err, errlen, "subdivision: out of memory");
        free(ev);
        long nv = m->nv, nf = m->nf;
        for (int r = 0; r < rounds; r++) {
            nv += ne;
            ne = 2 * ne + 3 * nf;
            nf *= 4;
            if (nv > 100000000 || nf > 400000000)
                return fail(err, errlen,
                            "subdivision: %d rounds would make %ld vertices and %ld faces by round %d: too large "
                            "(at most 100000000 vertices and 400000000 faces)",
                            rounds, nv, nf, r + 1);
        }
    }
    for (int r = 0; r < rounds; r++) {
        long ne = 0, nte = 0;
        edge_slot *ev = edge_table(m->f, m->nf, m->nv, &ne), *et = edge_table(m->ft, m->nf, m->nvt, &nte);
        const long nv = m->nv + ne, nvt = m->nvt + nte, nf = 4L * m->nf;
        if (nv > 100000000 || nf > 400000000) {
            free(ev);
            free(et);
            return fail(err, errlen, "subdivision round %d: %ld vertices, %ld faces: too large", r + 1, nv, nf);
        }
        double *v = realloc(m->v, sizeof(double) * 3 * (size_t)nv), *vt = NULL;
        if (v) m->v = v;
        if (nvt) {
            vt = realloc(m->vt, sizeof(double) * 2 * (size_t)nvt);
            if (vt) m->vt = vt;
        }
        int *f = malloc(sizeof(int) * 3 * (size_t)nf), *ft = malloc(sizeof(int) * 3 * (size_t)nf);
        if (!ev || !et || !v || (nvt && !vt) || !f || !ft) {
            free(ev);
            free(et);
            free(f);
            free(ft);
            return fail(err, errlen, "subdivision round %d: out of memory", r + 1);
        }
        for (long j = 0; j < ne; j++) { /* midpoints */
            const int a = (int)(ev[j].key / 2147483648LL), b = (int)(ev[j].key % 2147483648LL);
            for (int q = 0; q < 3; q++) m->v[3 * (size_t)ev[j].id + q] = 0.5 * (m->v[3 * a + q] + m->v[3 * b + q]);
        }
        for (long j = 0; j < nte; j++) {
            const int a = (int)(et[j].key / 2147483648LL), b = (int)(et[j].key % 2147483648LL);
            for (int q = 0; q < 2; q++) m->vt[2 * (size_t)et[j].id + q] = 0.5 * (m->vt[2 * a + q] + m->vt[2 * b + q]);
        }
        for (int t = 0; t < m->nf; t++) {
            const int *a = m->f + 3 * t, *ta = m->ft + 3 * t;
            int mid[3], tmid[3];
            for (int c = 0; c < 3; c++) {
                mid[c] = edge_find(ev, ne, a[c], a[(c + 1) % 3]);
                tmid[c] = ta[c] < 0 || ta[(c + 1) % 3] < 0 ? -1 : edge_find(et, nte, ta[c], ta[(c + 1) % 3]);
            }
            /* corners c, mid(c, c+1), mid(c+2, c); then the middle triangle */
            for (int c = 0; c < 3; c++) {
                int *o = f + 3 * (4 * (size_t)t + c), *to = ft + 3 * (4 * (size_t)t + c);
                o[0] = a[c], o[1] = mid[c], o[2] = mid[(c + 2) % 3];
                to[0] = ta[c], to[1] = tmid[c], to[2] = tmid[(c + 2) % 3];
                if (ta[c] < 0) to[0] = to[1] = to[2] = -1;
            }
            int *o = f + 3 * (4 * (size_t)t + 3), *to = ft + 3 * (4 * (size_t)t + 3);
            o[0] = mid[0], o[1] = mid[1], o[2] = mid[2];
            to[0] = tmid[0], to[1] = tmid[1], to[2] = tmid[2];
        }
        free(ev);
        free(et);
        free(m->f);
        free(m->ft);
        m->f = f;
        m->ft = ft;
        m->nv = (int)nv;
        m->nvt = (int)nvt;
        m->nf = (int)nf;
    }
    return 0;
}

/* little-endian field of the TGA header */
static int le16(const unsigned char *b) { return b[0] | (b[1] << 8); }

int spin_image_read(const char *path, spin_image *im, char *err, size_t errlen)
{
    memset(im, 0, sizeof *im);
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
    unsigned char h[18];
    const size_t got = fread(h, 1, sizeof h, f);
    int rc = 0;
    if (got < sizeof h && ferror(f)) /* a directory opens, and fails here with EISDIR */
        rc = fail(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    else if (got < sizeof h) rc = fail(err, errlen, "%s: byte %zu: the 18-byte TGA header ends early", path, got);
    else if (h[2] != 3)
        rc = fail(err, errlen, "%s: byte 2: data type %d (only 3, uncompressed grayscale, is read)", path, h[2]);
    else if (h[16] != 8)
        rc = fail(err, errlen, "%s: byte 16: %d bits per pixel (only 8 is read)", path, h[16]);
    if (rc == 0) {
        im->w = le16(h + 12);
        im->h = le16(h + 14);
        if (im->w <= 0 || im->h <= 0)
            rc = fail(err, errlen, "%s: byte 12: image of %d x %d pixels", path, im->w, im->h);
    }
    /* The image ID (byte 0: its length) and a colour map (byte 1: present; bytes 5-7: its
       length and entry size) lie between the header and the pixels: read as pixels they had
       shifted the whole image by their length (an ID of 40 bytes changed x^H E x from 0.25 to
       2.7), silently.  The reference's file has neither, so it reads the same. */
    const long skip = rc == 0 ? h[0] + (h[1] ? (long)le16(h + 5) * ((h[7] + 7) / 8) : 0) : 0;
    for (long k = 0; rc == 0 && k < skip; k++)
        if (fgetc(f) == EOF)
            rc = fail(err, errlen, "%s: byte %ld: the image ID or colour map (%ld bytes) ends early", path, 18 + k, skip);
    /* The pixels must be in the file before they are allocated (65535^2 from 18 bytes): a
       regular file's size says so at once; a pipe's is unknown, so its pixels are read into a
       buffer that doubles as they arrive, from 1 MiB. */
    struct stat sb;
    const int regular = rc == 0 && fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode);
    if (regular && (long long)sb.st_size - 18 - skip < (long long)im->w * im->h)
        rc = fail(err, errlen, "%s: a %d x %d image needs %lld bytes after the header; the file has %lld", path, im->w,
                  im->h, (long long)im->w * im->h, (long long)sb.st_size - 18 - skip);
    if (rc == 0) {
        const size_t n = (size_t)im->w * (size_t)im->h;
        size_t got_px = 0, cap = regular || n < ((size_t)1 << 20) ? n : (size_t)1 << 20;
        for (;;) {
            unsigned char *p = realloc(im->pix, cap);
            if (!p) {
                rc = fail(err, errlen, "out of memory for %zu pixels", cap);
                break;
            }
            im->pix = p;
            got_px += fread(im->pix + got_px, 1, cap - got_px, f);
            if (got_px < cap || cap == n) break;
            cap = cap < n / 2 ? 2 * cap : n;
        }
        if (rc == 0 && got_px < n)
            rc = fail(err, errlen, "%s: byte %zu: the pixels end early (%d x %d needs %zu bytes after the header)", path,
                      18 + (size_t)skip + got_px, im->w, im->h, n);
        /* rows stored top first (byte 17, bit 5: the origin at the top left): turned so that row
           0 is the bottom one, as in a file of the default bottom-left origin (v = 0 at the
           bottom); read as stored, the image came out upside down */
        for (int y = 0; rc == 0 && (h[17] & 0x20) && y < im->h / 2; y++) {
            unsigned char *a = im->pix + (size_t)y * im->w, *b = im->pix + (size_t)(im->h - 1 - y) * im->w;
            for (int x = 0; x < im->w; x++) {
                const unsigned char c = a[x];
                a[x] = b[x], b[x] = c;
            }
        }
    }
    fclose(f);
    if (rc) spin_image_free(im);
    return rc;
}

void spin_image_free(spin_image *im)
{
    free(im->pix);
    memset(im, 0, sizeof *im);
}
