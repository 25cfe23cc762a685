/* spsolve-fem: Gmsh ASCII meshes, formats 2.2 and 4.1 (fem.h fem_gmsh_read), and the
 * physical groups' boundary conditions (fem_group, fem_clamp_group, fem_traction).
 * Layout (seed-methods §4.7), 2.2: "$MeshFormat / 2.2 0 8", optional "$PhysicalNames /
 * n / dim tag "name"", "$Nodes / n / tag x y z", "$Elements / n / tag type ntags t1 ..
 * node tags" (t1 the physical group).  4.1: "$Entities" (a surface's physical group is
 * on its line there), "$Nodes / blocks n min max", each block "dim entity parametric n",
 * n tag lines, then n coordinate lines; "$Elements / blocks n min max", each block
 * "dim entity type n", then n lines "tag nodes...".  4.0 (another block layout) is
 * refused.  After reading: repeated elements dropped (MSH2 lists an element once per
 * physical group) and the nodes renumbered to those the tetrahedra use. */
#define _POSIX_C_SOURCE 200809L
#include "fem.h"
#include "fem_math.h"
#include "compact.h"
#include "components.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    FILE *f;
    const char *path;
    long line;
    /* the current line, getline's and grown as needed: a 4.1 $Entities line lists an
     * entity's bounding entities, thousands of them on a large model */
    char *buf;
    size_t cap;
    int read_errno;        /* getline's errno when it failed before the end of the file */
    char *err;
    size_t len;
    long long bytes;       /* the file's size (a regular file; else LLONG_MAX): what a count can ask for */
    int v41;               /* format 4.1 */
    int have_entities;
    /* 4.1: surface entity i is tag surf_tag[i], in the physical groups
     * surf_phys[surf_first[i] .. surf_first[i + 1]) (all of them: its triangles are in each) */
    long nsurf, nphys, phys_cap, surf_cap;
    long *surf_tag, *surf_first, *surf_phys;
    /* room (items) in m->v and the node tags, in m->t, and in m->tri and m->tri_tag (a 4.1
     * triangle is stored once a group): see capacity */
    long node_cap, tet_cap, tri_cap;
    long elements;         /* the $Elements count declared */
} reader;

static int fail(reader *r, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->len, "%s:%ld: %s", r->path, r->line, msg);
    return -1;
}

/* The next line (without its newline) into r->buf; 0 at the end of the file or on a read
 * error (read_errno set, reported over the caller's message at the end).  r->buf may move:
 * pointers into it are taken after the call. */
static int next(reader *r)
{
    errno = 0;
    if (getline(&r->buf, &r->cap, r->f) < 0) {
        if (!feof(r->f)) r->read_errno = errno ? errno : EIO;
        return 0;
    }
    r->line++;
    r->buf[strcspn(r->buf, "\r\n")] = 0;
    return 1;
}

/* Lines up to "$End<name>" (the section's end). */
static int section_end(reader *r, const char *name)
{
    char want[64];
    snprintf(want, sizeof want, "$End%s", name);
    if (!next(r) || strcmp(r->buf, want)) return fail(r, "expected %s", want);
    return 0;
}

/* A declared count of items each taking at least `per` bytes of the file, before arrays are
 * sized from it: 30 bytes declaring 2e8 nodes would otherwise ask for gigabytes. */
static int fits(reader *r, const char *what, long n, int per)
{
    if (n > r->bytes / per)
        return fail(r, "%ld %s cannot be in a file of %lld bytes", n, what, r->bytes);
    return 0;
}

/* Arrays are sized from the items read, not from a declared count alone.  A regular file's
 * size bounds a count (fits), so its items are allocated at once; a pipe's header can declare
 * 2e8 nodes and send none, so there the arrays start at 4096 items and double as the items
 * arrive.  The capacity from cap (0: none yet) that holds `need` items of the `declared`
 * count (need where the file declares none: doubling from 1). */
static long capacity(const reader *r, long cap, long need, long declared)
{
    long c = cap ? 2 * cap : r->bytes != LLONG_MAX ? declared : 4096;
    if (c > declared && need <= declared) c = declared;
    return c > need ? c : need;
}

/* *pa (pa the address of an array's pointer, of any item type) resized to c items of sz
 * bytes; 0 when out of memory (*pa kept).  The pointer is copied in and out, not read through
 * a void ** (another type's object: strict aliasing). */
static int resize(void *pa, long c, size_t sz)
{
    void *p;
    memcpy(&p, pa, sizeof p);
    if (!(p = realloc(p, sz * (size_t)c))) return 0;
    memcpy(pa, &p, sizeof p);
    return 1;
}

/* Room for `need` items in the arrays *a (items of asz bytes) and *b (bsz; b may be NULL),
 * which share the capacity *cap. */
static int room(reader *r, long *cap, long need, long declared, const char *what, void *a, size_t asz, void *b,
                size_t bsz)
{
    if (need <= *cap) return 0;
    const long c = capacity(r, *cap, need, declared);
    if (!resize(a, c, asz) || (b && !resize(b, c, bsz))) return fail(r, "out of memory for %ld %s", c, what);
    *cap = c;
    return 0;
}

/* A count line: a non-negative integer, at most max. */
static int count_line(reader *r, const char *what, long max, long *n)
{
    char *end = NULL;
    if (!next(r)) return fail(r, "the file ends before the %s count", what);
    *n = strtol(r->buf, &end, 10);
    if (end == r->buf || *end || *n < 0 || *n > max) return fail(r, "%s count: expected 0..%ld, got '%s'", what, max, r->buf);
    return 0;
}

/* Node tag -> index by binary search over the sorted tags (ids: the tags in file order). */
typedef struct {
    long tag;
    int id;
} tagged;
static int tag_cmp(const void *a, const void *b)
{
    const long x = ((const tagged *)a)->tag, y = ((const tagged *)b)->tag;
    return x < y ? -1 : x > y;
}
static int node_of(const tagged *t, int n, long tag)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        const int mid = (lo + hi) / 2;
        if (t[mid].tag == tag) return t[mid].id;
        if (t[mid].tag < tag) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int node_room(reader *r, fem_mesh *m, tagged **tags, long need, long declared)
{
    return room(r, &r->node_cap, need, declared, "nodes", &m->v, 3 * sizeof(double), tags, sizeof(tagged));
}

/* The number of integers on the current line, the first max of them into f: an element of a
 * type not read may list hundreds of nodes (Gmsh's high-order types), counted and skipped.
 * -1: something else on the line. */
static long ints(reader *r, long *f, int max)
{
    char *p = r->buf, *end = NULL;
    long k = 0;
    for (;; k++) {
        const long v = strtol(p, &end, 10);
        if (end == p) break;
        if (k < max) f[k] = v;
        p = end;
    }
    return *p && strspn(p, " \t") != strlen(p) ? -1 : k;
}

/* How many integers of an element's line are kept: a 2.2 triangle or tetrahedron needs 3 + its
 * tags + its nodes (Gmsh writes 2 tags, more with mesh partitions). */
enum { ELEMENT_INTS = 64 };

/* 4.1: the surfaces' physical tags, all of them (the others' lines skipped).  One section:
 * a second would be counted on top of the first's arrays.  The counts are capped before the
 * arrays are sized from them (2^63 - 1 surfaces would wrap the size). */
static int read_entities(reader *r)
{
    long cnt[4];
    if (r->have_entities) return fail(r, "a second $Entities section");
    r->have_entities = 1;
    if (!next(r) || ints(r, cnt, 4) != 4) return fail(r, "$Entities: expected 'points curves surfaces volumes'");
    for (int d = 0; d < 4; d++)
        if (cnt[d] < 0 || cnt[d] > 100000000L)
            return fail(r, "$Entities: expected 'points curves surfaces volumes', each 0..100000000");
    if (fits(r, "entities", cnt[0] + cnt[1] + cnt[2] + cnt[3], 4)) return -1;
    /* surf_first holds one more than the surfaces: need nsurf + 2 of cnt[2] + 1 */
    if (room(r, &r->surf_cap, 1, cnt[2] + 1, "surfaces", &r->surf_tag, sizeof(long), &r->surf_first,
             sizeof(long)))
        return -1;
    for (int d = 0; d < 4; d++)
        for (long i = 0; i < cnt[d]; i++) {
            if (!next(r)) return fail(r, "the file ends in $Entities");
            if (d != 2) continue;
            if (room(r, &r->surf_cap, r->nsurf + 2, cnt[2] + 1, "surfaces", &r->surf_tag, sizeof(long),
                     &r->surf_first, sizeof(long)))
                return -1;
            char *p = r->buf, *end = NULL;
            const long tag = strtol(p, &end, 10);
            for (int c = 0; c < 6 && end != p; c++) p = end, strtod(p, &end); /* the bounding box */
            p = end;
            const long nphys = strtol(p, &end, 10);
            if (end == p || nphys < 0) return fail(r, "surface entity: expected 'tag box(6) nphys phys...'");
            r->surf_first[r->nsurf] = r->nphys;
            for (long k = 0; k < nphys; k++) { /* each one a number on the line: nphys bounded by its length */
                p = end;
                const long phys = strtol(p, &end, 10);
                if (end == p) return fail(r, "surface entity %ld: expected %ld physical tags", tag, nphys);
                if (room(r, &r->phys_cap, r->nphys + 1, r->nphys + 1, "physical tags", &r->surf_phys,
                         sizeof(long), NULL, 0))
                    return -1;
                r->surf_phys[r->nphys++] = phys;
            }
            r->surf_tag[r->nsurf++] = tag;
        }
    r->surf_first[r->nsurf] = r->nphys;
    return section_end(r, "Entities");
}

/* Surface `entity`'s physical tags, *n of them (0: none, or not in $Entities). */
static const long *surface_phys(const reader *r, long entity, long *n)
{
    for (long i = 0; i < r->nsurf; i++)
        if (r->surf_tag[i] == entity) {
            *n = r->surf_first[i + 1] - r->surf_first[i];
            return *n ? r->surf_phys + r->surf_first[i] : NULL; /* no tags anywhere: surf_phys is NULL */
        }
    *n = 0;
    return NULL;
}

/* 4.1 nodes: blocks of n tags, then n coordinate lines. */
static int read_nodes41(reader *r, fem_mesh *m, tagged **tags)
{
    long h[4];
    if (!next(r) || ints(r, h, 4) != 4 || h[0] < 0 || h[1] < 0 || h[1] > 200000000L)
        return fail(r, "$Nodes: expected 'blocks nodes min-tag max-tag'");
    /* a tag line and a coordinate line: "1", "0 0 0" */
    if (fits(r, "nodes", h[1], 8) || node_room(r, m, tags, 1, h[1])) return -1;
    long done = 0;
    for (long b = 0; b < h[0]; b++) {
        long bh[4];
        if (!next(r) || ints(r, bh, 4) != 4 || bh[3] < 0 || bh[3] > h[1] - done)
            return fail(r, "node block: expected 'dim entity parametric n' within the node count");
        for (long i = 0; i < bh[3]; i++) {
            long t;
            if (!next(r)) return fail(r, "the file ends in a node block");
            if (ints(r, &t, 1) != 1) return fail(r, "node block: expected a node tag");
            if (node_room(r, m, tags, done + i + 1, h[1])) return -1;
            (*tags)[done + i] = (tagged){t, (int)(done + i)};
        }
        for (long i = 0; i < bh[3]; i++) {
            if (!next(r)) return fail(r, "the file ends in a node block");
            char *p = r->buf, *end = NULL;
            for (int c = 0; c < 3; c++) {
                m->v[3 * (done + i) + c] = strtod(p, &end);
                if (end == p || !isfinite(m->v[3 * (done + i) + c]))
                    return fail(r, "node %ld: expected 3 finite coordinates", (*tags)[done + i].tag);
                p = end;
            }
        }
        done += bh[3];
    }
    if (done != h[1]) return fail(r, "$Nodes: %ld nodes in the blocks, %ld announced", done, h[1]);
    m->nv = (int)done;
    qsort(*tags, (size_t)done, sizeof **tags, tag_cmp);
    for (long i = 1; i < done; i++)
        if ((*tags)[i].tag == (*tags)[i - 1].tag) return fail(r, "node tag %ld appears twice", (*tags)[i].tag);
    return section_end(r, "Nodes");
}

/* One element (tag, type, nn node tags in nodes, NULL for a type not read, physical tags
 * phys[0 .. nphys)) into m; a triangle once for each of its tags (a clamp or a traction
 * names one); -1 on an error. */
static int add_element(reader *r, fem_mesh *m, const tagged *tags, long tag, long type, const long *nodes,
                       const long *phys, long nphys)
{
    const int nn = type == 4 ? 4 : type == 2 ? 3 : 0;
    if (!nn) { /* another type: skipped (counted) */
        m->skipped++;
        return 0;
    }
    int id[4];
    for (int a = 0; a < nn; a++)
        if ((id[a] = node_of(tags, m->nv, nodes[a])) < 0) return fail(r, "element %ld: unknown node %ld", tag, nodes[a]);
    if (nn == 3) {
        /* a triangle of no area clamps or loads less than it says (two nodes, or none), far
           from any line: refused here, as a tetrahedron's is */
        double h = 0;
        const double area = fem_tri_area(m->v, id, &h);
        if (id[0] == id[1] || id[1] == id[2] || id[0] == id[2] || !(area > 1e-12 * h * h))
            return fail(r, "triangle %ld is degenerate (area %.3g)", tag, area);
        if (nphys > INT_MAX - m->ntri) return fail(r, "element %ld: more than %d triangles", tag, INT_MAX);
        if (room(r, &r->tri_cap, m->ntri + nphys, r->elements, "triangles", &m->tri, 3 * sizeof(int),
                 &m->tri_tag, sizeof(int)))
            return -1;
        for (long k = 0; k < nphys; k++) {
            if (phys[k] < INT_MIN || phys[k] > INT_MAX) /* the tags are ints from here on */
                return fail(r, "element %ld: physical tag %ld out of range (at most %d)", tag, phys[k], INT_MAX);
            memcpy(m->tri + 3 * (size_t)m->ntri, id, 3 * sizeof *id);
            m->tri_tag[m->ntri++] = (int)phys[k];
        }
        return 0;
    }
    double g[4][3];
    const double det = fem_tet_grad(m->v, id, g);
    double h = 0; /* the element's size, for the degeneracy test */
    for (int a = 1; a < 4; a++)
        for (int c = 0; c < 3; c++) h = fmax(h, fabs(m->v[3 * id[a] + c] - m->v[3 * id[0] + c]));
    if (!(fabs(det) > 1e-12 * h * h * h)) return fail(r, "tetrahedron %ld is degenerate (volume %.3g)", tag, det / 6);
    if (det < 0) return fail(r, "tetrahedron %ld is inverted (its nodes in clockwise order)", tag);
    if (room(r, &r->tet_cap, m->nt + 1L, r->elements, "tetrahedra", &m->t, 4 * sizeof(int), NULL, 0))
        return -1;
    memcpy(m->t + 4 * (size_t)m->nt++, id, sizeof id);
    return 0;
}

static int element_arrays(reader *r, fem_mesh *m, long n)
{
    if (fits(r, "elements", n, 4)) return -1; /* "1 15" and a node: a point, the shortest line */
    r->elements = n;
    return room(r, &r->tet_cap, 1, n, "tetrahedra", &m->t, 4 * sizeof(int), NULL, 0) ||
           room(r, &r->tri_cap, 1, n, "triangles", &m->tri, 3 * sizeof(int), &m->tri_tag, sizeof(int));
}

/* 4.1 elements: blocks "dim entity type n", then n lines "tag nodes".  The blocks may not hold
 * more than the header's count (as the nodes'). */
static int read_elements41(reader *r, fem_mesh *m, const tagged *tags)
{
    long h[4];
    if (!next(r) || ints(r, h, 4) != 4 || h[0] < 0 || h[1] < 0 || h[1] > 500000000L)
        return fail(r, "$Elements: expected 'blocks elements min-tag max-tag'");
    if (element_arrays(r, m, h[1])) return -1;
    long done = 0;
    for (long b = 0; b < h[0]; b++) {
        long bh[4];
        if (!next(r) || ints(r, bh, 4) != 4 || bh[3] < 0 || bh[3] > h[1] - done)
            return fail(r, "element block: expected 'dim entity type n' within the element count");
        static const long untagged = 0;
        long nphys = 0;
        const long *phys = bh[0] == 2 ? surface_phys(r, bh[1], &nphys) : NULL;
        if (!nphys) phys = &untagged, nphys = 1;
        for (long i = 0; i < bh[3]; i++) {
            long f[ELEMENT_INTS];
            if (!next(r)) return fail(r, "the file ends in an element block");
            const long k = ints(r, f, ELEMENT_INTS);
            const int nn = bh[2] == 4 ? 4 : bh[2] == 2 ? 3 : -1;
            if (k < 1 || (nn > 0 && k != 1 + nn))
                return fail(r, "element of type %ld: expected 'tag' and %d node tags", bh[2], nn);
            if (add_element(r, m, tags, f[0], bh[2], f + 1, phys, nphys)) return -1;
        }
        done += bh[3];
    }
    if (done != h[1]) return fail(r, "$Elements: %ld elements in the blocks, %ld announced", done, h[1]);
    return section_end(r, "Elements");
}

static int read_nodes(reader *r, fem_mesh *m, tagged **tags)
{
    long n = 0;
    if (count_line(r, "node", 200000000L, &n) || fits(r, "nodes", n, 8) /* "1 0 0 0" */ ||
        node_room(r, m, tags, 1, n))
        return -1;
    for (long i = 0; i < n; i++) {
        if (!next(r)) return fail(r, "the file ends after %ld of %ld nodes", i, n);
        if (node_room(r, m, tags, i + 1, n)) return -1;
        char *p = r->buf, *end = NULL;
        const long tag = strtol(p, &end, 10);
        if (end == p) return fail(r, "node: expected 'tag x y z'");
        for (int c = 0; c < 3; c++) {
            p = end;
            m->v[3 * i + c] = strtod(p, &end);
            if (end == p || !isfinite(m->v[3 * i + c])) return fail(r, "node %ld: expected 3 finite coordinates", tag);
        }
        (*tags)[i] = (tagged){tag, (int)i};
    }
    m->nv = (int)n;
    qsort(*tags, (size_t)n, sizeof **tags, tag_cmp);
    for (long i = 1; i < n; i++)
        if ((*tags)[i].tag == (*tags)[i - 1].tag) return fail(r, "node tag %ld appears twice", (*tags)[i].tag);
    return section_end(r, "Nodes");
}

static int read_elements(reader *r, fem_mesh *m, const tagged *tags)
{
    long n = 0;
    if (count_line(r, "element", 500000000L, &n) || element_arrays(r, m, n)) return -1;
    for (long i = 0; i < n; i++) {
        long f[ELEMENT_INTS];
        if (!next(r)) return fail(r, "the file ends after %ld of %ld elements", i, n);
        const long k = ints(r, f, ELEMENT_INTS);
        if (k < 0) return fail(r, "element: expected integers");
        if (k < 3 || f[2] < 0 || f[2] > k - 3) /* as k - 3, not 3 + f[2], which could overflow */
            return fail(r, "element: expected 'tag type ntags tags... nodes'");
        const long type = f[1], ntags = f[2], nn = type == 4 ? 4 : type == 2 ? 3 : -1;
        if (nn > 0 && k != 3 + ntags + nn)
            return fail(r, "element %ld of type %ld: expected %ld node tags, got %ld", f[0], type, nn, k - 3 - ntags);
        if (nn > 0 && k > ELEMENT_INTS) /* its nodes would lie past f */
            return fail(r, "element %ld of type %ld: %ld integers (%ld tags): at most %d are read", f[0], type, k,
                        ntags, ELEMENT_INTS);
        const long phys = ntags > 0 ? f[3] : 0; /* k >= 4 */
        /* a type not read is only counted: its nodes, past f maybe, are not passed */
        if (add_element(r, m, tags, f[0], type, nn > 0 ? f + 3 + ntags : NULL, &phys, 1)) return -1;
    }
    return section_end(r, "Elements");
}

/* $PhysicalNames: at most FEM_MAX_GROUPS, names of at most 255 characters (refused beyond,
 * not dropped or cut: --clamp or --traction would then miss the group). */
static int read_names(reader *r, fem_mesh *m)
{
    long n = 0;
    if (count_line(r, "physical name", 100000, &n)) return -1;
    if (n > FEM_MAX_GROUPS - m->ngroups)
        return fail(r, "%ld physical names: this reader takes at most %d", m->ngroups + n, FEM_MAX_GROUPS);
    for (long i = 0; i < n; i++) {
        if (!next(r)) return fail(r, "the file ends in $PhysicalNames");
        long dt[2];
        char *p = r->buf, *end = NULL;
        int k = 0;
        for (; k < 2; k++) {
            dt[k] = strtol(p, &end, 10);
            if (end == p) break;
            p = end;
        }
        p += strspn(p, " \t");
        const char *close = *p == '"' ? strchr(p + 1, '"') : NULL;
        if (k < 2 || dt[0] < 0 || dt[0] > 3 || dt[1] < INT_MIN || dt[1] > INT_MAX || !close || close == p + 1)
            return fail(r, "physical name: expected 'dim tag \"name\"'");
        const size_t len = (size_t)(close - p - 1);
        if (len >= sizeof m->group_name[0])
            return fail(r, "physical name of %zu characters: at most %zu", len, sizeof m->group_name[0] - 1);
        m->group_dim[m->ngroups] = (int)dt[0];
        m->group_tag[m->ngroups] = (int)dt[1];
        memcpy(m->group_name[m->ngroups], p + 1, len);
        m->group_name[m->ngroups++][len] = 0;
    }
    return section_end(r, "PhysicalNames");
}

/* Element e's key: its sorted nodes, then (a triangle) its physical tag; pos its place. */
typedef struct {
    int key[5];
    int pos;
} elem_key;
static int key_cmp(const void *a, const void *b)
{
    const elem_key *x = a, *y = b;
    for (int k = 0; k < 5; k++)
        if (x->key[k] != y->key[k]) return x->key[k] < y->key[k] ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The n elements of nn nodes e (tags tag, or NULL) without the repeats of an earlier one's
 * nodes (and tag), in their order; their number.  keys and dup: room for n. */
static int drop_repeats(int *e, int nn, int *tag, int n, elem_key *keys, unsigned char *dup)
{
    if (n <= 0) return 0;
    for (int i = 0; i < n; i++) {
        elem_key *k = keys + i;
        memset(k, 0, sizeof *k);
        for (int a = 0; a < nn; a++) { /* insertion sort of the nodes */
            int b = a;
            for (; b > 0 && k->key[b - 1] > e[nn * (size_t)i + a]; b--) k->key[b] = k->key[b - 1];
            k->key[b] = e[nn * (size_t)i + a];
        }
        if (tag) k->key[nn] = tag[i];
        k->pos = i;
    }
    qsort(keys, (size_t)n, sizeof *keys, key_cmp);
    memset(dup, 0, (size_t)n);
    for (int i = 1; i < n; i++) /* in a run of equal keys the first is the earliest */
        dup[keys[i].pos] = !memcmp(keys[i].key, keys[i - 1].key, sizeof keys[i].key);
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (!dup[i]) {
            memmove(e + nn * (size_t)kept, e + nn * (size_t)i, sizeof(int) * (size_t)nn);
            if (tag) tag[kept] = tag[i];
            kept++;
        }
    return kept;
}

/* The mesh tidied after reading.  Nodes no tetrahedron uses (a geometry's points) would be
 * zero rows of K, singular blocks for block-Jacobi: the nodes are renumbered to those the
 * tetrahedra use, in their order, and a triangle on another node is dropped (skipped).
 * Gmsh's MSH2 writer gives an element once per physical group it is in, so a volume in two
 * groups would give each tetrahedron twice (K doubled): a tetrahedron repeating an earlier
 * one's node set is dropped, and a triangle repeating one's node set and physical tag (a
 * triangle stays once a tag: a clamp or a traction names one group), counted in duplicates.
 * Sorted keys: n log n. */
static int tidy(reader *r, fem_mesh *m)
{
    const size_t most = (size_t)(m->nt > m->ntri ? m->nt : m->ntri) + 1;
    int *map = malloc(sizeof(int) * ((size_t)m->nv + 1));
    elem_key *keys = malloc(sizeof(elem_key) * most);
    unsigned char *dup = malloc(most);
    if (!map || !keys || !dup) {
        free(map), free(keys), free(dup);
        return fail(r, "out of memory for %d nodes", m->nv);
    }
    m->nv = compact_vertices(m->v, m->nv, m->t, 4 * (size_t)m->nt, map);
    int ntri = 0;
    for (int i = 0; i < m->ntri; i++) {
        const int *s = m->tri + 3 * (size_t)i, a = map[s[0]], b = map[s[1]], c = map[s[2]];
        if (a < 0 || b < 0 || c < 0) {
            m->skipped++;
            continue;
        }
        int *d = m->tri + 3 * (size_t)ntri; /* ntri <= i: s read before d written */
        d[0] = a, d[1] = b, d[2] = c;
        m->tri_tag[ntri++] = m->tri_tag[i];
    }
    m->ntri = ntri;
    const int nt = drop_repeats(m->t, 4, NULL, m->nt, keys, dup);
    ntri = drop_repeats(m->tri, 3, m->tri_tag, m->ntri, keys, dup);
    m->duplicates = m->nt - nt + m->ntri - ntri;
    m->nt = nt, m->ntri = ntri;
    free(map), free(keys), free(dup);
    return 0;
}

int fem_gmsh_read(const char *path, fem_mesh *m, char *err, size_t len)
{
    memset(m, 0, sizeof *m);
    reader r = {.f = fopen(path, "r"), .path = path, .err = err, .len = len, .bytes = LLONG_MAX};
    if (!r.f) {
        snprintf(err, len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat sb;
    if (fstat(fileno(r.f), &sb) == 0 && S_ISREG(sb.st_mode)) r.bytes = (long long)sb.st_size;
    tagged *tags = NULL;
    int rc = 0, have_format = 0, have_nodes = 0, have_elements = 0;
    while (rc == 0 && next(&r)) {
        if (!strcmp(r.buf, "$MeshFormat")) {
            double version = 0; /* read below; 0 (no format) where the line fails */
            int type, size;
            if (!next(&r) || sscanf(r.buf, "%lf %d %d", &version, &type, &size) != 3) rc = fail(&r, "expected 'version file-type data-size'");
            else if (version != 2.2 && version != 4.1)
                rc = fail(&r, "Gmsh format %g: this reader takes 2.2 and 4.1 (gmsh -format msh22 or msh41)", version);
            else if (type != 0) rc = fail(&r, "binary Gmsh file: this reader takes ASCII (file-type 0)");
            else rc = section_end(&r, "MeshFormat");
            r.v41 = version == 4.1;
            have_format = 1;
        } else if (!have_format && r.buf[0]) {
            rc = fail(&r, "expected $MeshFormat first");
        } else if (!strcmp(r.buf, "$PhysicalNames")) {
            rc = read_names(&r, m);
        } else if (!strcmp(r.buf, "$Entities") && r.v41) {
            rc = read_entities(&r);
        } else if (!strcmp(r.buf, "$Nodes")) {
            rc = have_nodes ? fail(&r, "a second $Nodes section") : r.v41 ? read_nodes41(&r, m, &tags) : read_nodes(&r, m, &tags);
            have_nodes = 1;
        } else if (!strcmp(r.buf, "$Elements")) {
            rc = !have_nodes ? fail(&r, "$Elements before $Nodes") : have_elements ? fail(&r, "a second $Elements section")
                                                                                  : r.v41 ? read_elements41(&r, m, tags)
                                                                                          : read_elements(&r, m, tags);
            have_elements = 1;
        } else if (r.buf[0] == '$' && strncmp(r.buf, "$End", 4)) { /* another section: skipped to its end */
            char want[80];
            snprintf(want, sizeof want, "$End%.70s", r.buf + 1);
            while (next(&r) && strcmp(r.buf, want)) {
            }
        }
    }
    if (r.read_errno) { /* over the message of the section it cut short */
        r.line++;
        rc = fail(&r, "cannot read: %s", strerror(r.read_errno));
    } else if (rc == 0 && (!have_nodes || !have_elements || m->nt == 0)) {
        r.line++;
        if (!have_nodes || !have_elements)
            rc = fail(&r, "%s", !have_nodes ? "no $Nodes section" : "no $Elements section");
        else /* a second-order mesh has tetrahedra of 10 nodes (type 11), all skipped */
            rc = fail(&r, "no linear tetrahedra (element type 4)%s%d elements of other types skipped%s",
                      m->skipped ? ": " : " (", m->skipped,
                      m->skipped ? ", e.g. a second-order mesh's 10-node tetrahedra: mesh with order 1" : ")");
    }
    if (rc == 0) rc = tidy(&r, m);
    fclose(r.f);
    free(r.buf);
    free(tags);
    free(r.surf_tag);
    free(r.surf_first);
    free(r.surf_phys);
    if (rc) fem_mesh_free(m);
    return rc;
}

static int has_triangles(const fem_mesh *m, long tag)
{
    for (int i = 0; i < m->ntri; i++)
        if (m->tri_tag[i] == tag) return 1;
    return 0;
}

/* A name resolves only to a surface group (dimension 2) that some triangle carries: a
 * volume's group, or a surface's whose triangles have no tag (a 4.1 file without
 * $Entities), would clamp or load nothing, silently. */
int fem_group(const fem_mesh *m, const char *name)
{
    for (int g = 0; g < m->ngroups; g++)
        if (m->group_dim[g] == 2 && !strcmp(m->group_name[g], name) && has_triangles(m, m->group_tag[g]))
            return m->group_tag[g];
    char *end = NULL;
    const long t = strtol(name, &end, 10);
    /* physical tags are positive; 0 is what a triangle without one holds, no group */
    if (end == name || *end || t <= 0 || t > INT_MAX) return -1;
    return has_triangles(m, t) ? (int)t : -1;
}

void fem_clamp_group(const fem_mesh *m, int tag, unsigned char *clamp)
{
    for (int i = 0; i < m->ntri; i++)
        if (m->tri_tag[i] == tag)
            for (int a = 0; a < 3; a++) clamp[m->tri[3 * (size_t)i + a]] = 1;
}

/* The tetrahedra in parts of the mesh (sets joined through shared nodes) with no clamped
 * node: such a part can move as a rigid body, K is singular on it, and CG broke down after
 * hundreds of iterations as "not positive definite" (a second body, or a part joined to the
 * clamped one only through hexahedra or prisms, which are skipped).  Their number, and *first
 * a node of the first such tetrahedron (-1: none). */
int fem_unheld(const fem_mesh *m, const unsigned char *clamp, int *first)
{
    *first = -1;
    int *label = malloc(sizeof *label * ((size_t)m->nv + 1));
    unsigned char *held = calloc((size_t)m->nv + 1, 1);
    const int ncomp = label && held ? cell_components(m->nv, m->t, m->nt, 4, label) : -1;
    int n = 0;
    if (ncomp > 0) { /* out of memory: not checked, the solve says what it finds */
        for (int i = 0; i < m->nv; i++)
            if (clamp[i]) held[label[i]] = 1;
        for (int e = 0; e < m->nt; e++)
            if (!held[label[m->t[4 * (size_t)e]]]) {
                if (*first < 0) *first = m->t[4 * (size_t)e];
                n++;
            }
    }
    free(label), free(held);
    return n;
}
