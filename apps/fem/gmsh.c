/* spsolve-fem: Gmsh ASCII meshes, formats 2.2 and 4.1 (fem.h fem_gmsh_read), and the
 * physical groups' boundary conditions (fem_group, fem_clamp_group, fem_traction).
 * Layout (seed-methods §4.7), 2.2: "$MeshFormat / 2.2 0 8", optional "$PhysicalNames /
 * n / dim tag "name"", "$Nodes / n / tag x y z", "$Elements / n / tag type ntags t1 ..
 * node tags" (t1 the physical group).  4.1: "$Entities" (a surface's physical group is
 * on its line there), "$Nodes / blocks n min max", each block "dim entity parametric n",
 * n tag lines, then n coordinate lines; "$Elements / blocks n min max", each block
 * "dim entity type n", then n lines "tag nodes...".  4.0 (another block layout) is
 * refused. */
#define _POSIX_C_SOURCE 200809L
#include "fem.h"
#include "fem_math.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    FILE *f;
    const char *path;
    long line;
    char buf[4096];
    char *err;
    size_t len;
    int v41;               /* format 4.1 */
    int nsurf;             /* 4.1: surface entities and their first physical tag (0: none) */
    long *surf_tag, *surf_phys;
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

/* The next line (without its newline) into r->buf; 0 at the end of the file. */
static int next(reader *r)
{
    if (!fgets(r->buf, sizeof r->buf, r->f)) return 0;
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

/* Up to max integers of the current line into f; their number (the rest of the line
 * must be blank). -1: something else on it. */
static int ints(reader *r, long *f, int max)
{
    char *p = r->buf, *end = NULL;
    int k = 0;
    for (; k < max; k++) {
        f[k] = strtol(p, &end, 10);
        if (end == p) break;
        p = end;
    }
    return *p && strspn(p, " \t") != strlen(p) ? -1 : k;
}

/* 4.1: the surfaces' physical tags (the others' lines skipped). */
static int read_entities(reader *r)
{
    long cnt[4];
    if (!next(r) || ints(r, cnt, 4) != 4 || cnt[0] < 0 || cnt[1] < 0 || cnt[2] < 0 || cnt[3] < 0)
        return fail(r, "$Entities: expected 'points curves surfaces volumes'");
    r->surf_tag = malloc(sizeof(long) * ((size_t)cnt[2] + 1));
    r->surf_phys = malloc(sizeof(long) * ((size_t)cnt[2] + 1));
    if (!r->surf_tag || !r->surf_phys) return fail(r, "out of memory for %ld surfaces", cnt[2]);
    for (int d = 0; d < 4; d++)
        for (long i = 0; i < cnt[d]; i++) {
            if (!next(r)) return fail(r, "the file ends in $Entities");
            if (d != 2) continue;
            char *p = r->buf, *end = NULL;
            const long tag = strtol(p, &end, 10);
            for (int c = 0; c < 6 && end != p; c++) p = end, strtod(p, &end); /* the bounding box */
            p = end;
            const long nphys = strtol(p, &end, 10);
            if (end == p || nphys < 0) return fail(r, "surface entity: expected 'tag box(6) nphys phys...'");
            p = end;
            const long phys = nphys > 0 ? strtol(p, &end, 10) : 0;
            r->surf_tag[r->nsurf] = tag, r->surf_phys[r->nsurf++] = phys;
        }
    return section_end(r, "Entities");
}

static long surface_phys(const reader *r, long entity)
{
    for (int i = 0; i < r->nsurf; i++)
        if (r->surf_tag[i] == entity) return r->surf_phys[i];
    return 0;
}

/* 4.1 nodes: blocks of n tags, then n coordinate lines. */
static int read_nodes41(reader *r, fem_mesh *m, tagged **tags)
{
    long h[4];
    if (!next(r) || ints(r, h, 4) != 4 || h[0] < 0 || h[1] < 0 || h[1] > 200000000L)
        return fail(r, "$Nodes: expected 'blocks nodes min-tag max-tag'");
    m->v = malloc(sizeof(double) * 3 * ((size_t)h[1] + 1));
    *tags = malloc(sizeof(tagged) * ((size_t)h[1] + 1));
    if (!m->v || !*tags) return fail(r, "out of memory for %ld nodes", h[1]);
    long done = 0;
    for (long b = 0; b < h[0]; b++) {
        long bh[4];
        if (!next(r) || ints(r, bh, 4) != 4 || bh[3] < 0 || bh[3] > h[1] - done)
            return fail(r, "node block: expected 'dim entity parametric n' within the node count");
        for (long i = 0; i < bh[3]; i++) {
            long t;
            if (!next(r) || ints(r, &t, 1) != 1) return fail(r, "node block: expected a node tag");
            (*tags)[done + i] = (tagged){t, (int)(done + i)};
        }
        for (long i = 0; i < bh[3]; i++) {
            char *p = r->buf, *end = NULL;
            if (!next(r)) return fail(r, "the file ends in a node block");
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

/* One element (tag, type, nn node tags in f, physical tag phys) into m; -1 on an error. */
static int add_element(reader *r, fem_mesh *m, const tagged *tags, long tag, long type, const long *nodes, long phys)
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
        memcpy(m->tri + 3 * (size_t)m->ntri, id, 3 * sizeof *id);
        m->tri_tag[m->ntri++] = (int)phys;
        return 0;
    }
    double g[4][3];
    const double det = fem_tet_grad(m->v, id, g);
    double h = 0; /* the element's size, for the degeneracy test */
    for (int a = 1; a < 4; a++)
        for (int c = 0; c < 3; c++) h = fmax(h, fabs(m->v[3 * id[a] + c] - m->v[3 * id[0] + c]));
    if (!(fabs(det) > 1e-12 * h * h * h)) return fail(r, "tetrahedron %ld is degenerate (volume %.3g)", tag, det / 6);
    if (det < 0) return fail(r, "tetrahedron %ld is inverted (its nodes in clockwise order)", tag);
    memcpy(m->t + 4 * (size_t)m->nt++, id, sizeof id);
    return 0;
}

static int element_arrays(reader *r, fem_mesh *m, long n)
{
    m->t = malloc(sizeof(int) * 4 * ((size_t)n + 1));
    m->tri = malloc(sizeof(int) * 3 * ((size_t)n + 1));
    m->tri_tag = malloc(sizeof(int) * ((size_t)n + 1));
    return !m->t || !m->tri || !m->tri_tag ? fail(r, "out of memory for %ld elements", n) : 0;
}

/* 4.1 elements: blocks "dim entity type n", then n lines "tag nodes". */
static int read_elements41(reader *r, fem_mesh *m, const tagged *tags)
{
    long h[4];
    if (!next(r) || ints(r, h, 4) != 4 || h[0] < 0 || h[1] < 0 || h[1] > 500000000L)
        return fail(r, "$Elements: expected 'blocks elements min-tag max-tag'");
    if (element_arrays(r, m, h[1])) return -1;
    for (long b = 0; b < h[0]; b++) {
        long bh[4];
        if (!next(r) || ints(r, bh, 4) != 4 || bh[3] < 0) return fail(r, "element block: expected 'dim entity type n'");
        const long phys = bh[0] == 2 ? surface_phys(r, bh[1]) : 0;
        for (long i = 0; i < bh[3]; i++) {
            long f[64];
            if (!next(r)) return fail(r, "the file ends in an element block");
            const int k = ints(r, f, 64), nn = bh[2] == 4 ? 4 : bh[2] == 2 ? 3 : -1;
            if (k < 1 || (nn > 0 && k != 1 + nn))
                return fail(r, "element of type %ld: expected 'tag' and %d node tags", bh[2], nn);
            if (add_element(r, m, tags, f[0], bh[2], f + 1, phys)) return -1;
        }
    }
    return section_end(r, "Elements");
}

static int read_nodes(reader *r, fem_mesh *m, tagged **tags)
{
    long n = 0;
    if (count_line(r, "node", 200000000L, &n)) return -1;
    m->nv = (int)n;
    m->v = malloc(sizeof(double) * 3 * ((size_t)n + 1));
    *tags = malloc(sizeof(tagged) * ((size_t)n + 1));
    if (!m->v || !*tags) return fail(r, "out of memory for %ld nodes", n);
    for (long i = 0; i < n; i++) {
        char *p = r->buf, *end = NULL;
        if (!next(r)) return fail(r, "the file ends after %ld of %ld nodes", i, n);
        const long tag = strtol(p, &end, 10);
        if (end == p) return fail(r, "node: expected 'tag x y z'");
        for (int c = 0; c < 3; c++) {
            p = end;
            m->v[3 * i + c] = strtod(p, &end);
            if (end == p || !isfinite(m->v[3 * i + c])) return fail(r, "node %ld: expected 3 finite coordinates", tag);
        }
        (*tags)[i] = (tagged){tag, (int)i};
    }
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
        long f[64];
        if (!next(r)) return fail(r, "the file ends after %ld of %ld elements", i, n);
        const int k = ints(r, f, 64);
        if (k < 0) return fail(r, "element: expected integers");
        if (k < 3 || f[2] < 0 || k < 3 + f[2]) return fail(r, "element: expected 'tag type ntags tags... nodes'");
        const long type = f[1], ntags = f[2], nn = type == 4 ? 4 : type == 2 ? 3 : -1;
        if (nn > 0 && k != 3 + ntags + nn)
            return fail(r, "element %ld of type %ld: expected %ld node tags, got %ld", f[0], type, nn, k - 3 - ntags);
        if (add_element(r, m, tags, f[0], type, f + 3 + ntags, ntags > 0 ? f[3] : 0)) return -1;
    }
    return section_end(r, "Elements");
}

static int read_names(reader *r, fem_mesh *m)
{
    long n = 0;
    if (count_line(r, "physical name", 100000, &n)) return -1;
    for (long i = 0; i < n; i++) {
        int dim, tag, used = 0;
        char name[64];
        if (!next(r)) return fail(r, "the file ends in $PhysicalNames");
        if (sscanf(r->buf, "%d %d \"%63[^\"]\"%n", &dim, &tag, name, &used) != 3 || !used)
            return fail(r, "physical name: expected 'dim tag \"name\"'");
        if (m->ngroups < FEM_MAX_GROUPS) {
            m->group_tag[m->ngroups] = tag;
            snprintf(m->group_name[m->ngroups++], sizeof m->group_name[0], "%s", name);
        }
    }
    return section_end(r, "PhysicalNames");
}

int fem_gmsh_read(const char *path, fem_mesh *m, char *err, size_t len)
{
    memset(m, 0, sizeof *m);
    reader r = {fopen(path, "r"), path, 0, {0}, err, len, 0, 0, NULL, NULL};
    if (!r.f) {
        snprintf(err, len, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    tagged *tags = NULL;
    int rc = 0, have_format = 0, have_nodes = 0, have_elements = 0;
    while (rc == 0 && next(&r)) {
        if (!strcmp(r.buf, "$MeshFormat")) {
            double version;
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
    if (rc == 0 && (!have_nodes || !have_elements || m->nt == 0)) {
        r.line++;
        rc = fail(&r, "%s", !have_nodes ? "no $Nodes section" : !have_elements ? "no $Elements section" : "no tetrahedra");
    }
    fclose(r.f);
    free(tags);
    free(r.surf_tag);
    free(r.surf_phys);
    if (rc) fem_mesh_free(m);
    return rc;
}

int fem_group(const fem_mesh *m, const char *name)
{
    for (int g = 0; g < m->ngroups; g++)
        if (!strcmp(m->group_name[g], name)) return m->group_tag[g];
    char *end = NULL;
    const long t = strtol(name, &end, 10);
    if (end == name || *end) return -1;
    for (int i = 0; i < m->ntri; i++)
        if (m->tri_tag[i] == t) return (int)t;
    return -1;
}

void fem_clamp_group(const fem_mesh *m, int tag, unsigned char *clamp)
{
    for (int i = 0; i < m->ntri; i++)
        if (m->tri_tag[i] == tag)
            for (int a = 0; a < 3; a++) clamp[m->tri[3 * (size_t)i + a]] = 1;
}
