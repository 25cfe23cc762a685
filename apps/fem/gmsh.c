/* spsolve-fem: Gmsh ASCII meshes, format 2.2 (fem.h fem_gmsh_read), and the physical
 * groups' boundary conditions (fem_group, fem_clamp_group, fem_traction).  Layout
 * (seed-methods §4.7): "$MeshFormat / 2.2 0 8", optional "$PhysicalNames / n / dim tag
 * "name"", "$Nodes / n / tag x y z", "$Elements / n / tag type ntags t1 .. node tags";
 * t1 is the physical group. */
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

static int read_nodes(reader *r, fem_mesh *m, tagged **tags)
{
    long n;
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
    long n;
    if (count_line(r, "element", 500000000L, &n)) return -1;
    m->t = malloc(sizeof(int) * 4 * ((size_t)n + 1));
    m->tri = malloc(sizeof(int) * 3 * ((size_t)n + 1));
    m->tri_tag = malloc(sizeof(int) * ((size_t)n + 1));
    if (!m->t || !m->tri || !m->tri_tag) return fail(r, "out of memory for %ld elements", n);
    for (long i = 0; i < n; i++) {
        char *p = r->buf, *end = NULL;
        long f[64];
        int k = 0;
        if (!next(r)) return fail(r, "the file ends after %ld of %ld elements", i, n);
        for (p = r->buf; k < 64; k++) {
            f[k] = strtol(p, &end, 10);
            if (end == p) break;
            p = end;
        }
        if (*p && strspn(p, " \t") != strlen(p)) return fail(r, "element: expected integers");
        if (k < 3 || f[2] < 0 || k < 3 + f[2]) return fail(r, "element: expected 'tag type ntags tags... nodes'");
        const long type = f[1], ntags = f[2], phys = ntags > 0 ? f[3] : 0;
        const int nn = type == 4 ? 4 : type == 2 ? 3 : 0;
        if (!nn) { /* another type: skipped (counted) */
            m->skipped++;
            continue;
        }
        if (k != 3 + ntags + nn) return fail(r, "element %ld of type %ld: expected %d node tags, got %ld", f[0], type, nn,
                                             k - 3 - ntags);
        int id[4];
        for (int a = 0; a < nn; a++)
            if ((id[a] = node_of(tags, m->nv, f[3 + ntags + a])) < 0)
                return fail(r, "element %ld: unknown node %ld", f[0], f[3 + ntags + a]);
        if (nn == 4) {
            double g[4][3];
            const double det = fem_tet_grad(m->v, id, g);
            double h = 0; /* the element's size, for the degeneracy test */
            for (int a = 1; a < 4; a++)
                for (int c = 0; c < 3; c++) h = fmax(h, fabs(m->v[3 * id[a] + c] - m->v[3 * id[0] + c]));
            if (!(fabs(det) > 1e-12 * h * h * h)) return fail(r, "tetrahedron %ld is degenerate (volume %.3g)", f[0], det / 6);
            if (det < 0) return fail(r, "tetrahedron %ld is inverted (its nodes in clockwise order)", f[0]);
            memcpy(m->t + 4 * (size_t)m->nt++, id, sizeof id);
        } else {
            memcpy(m->tri + 3 * (size_t)m->ntri, id, 3 * sizeof *id);
            m->tri_tag[m->ntri++] = (int)phys;
        }
    }
    return section_end(r, "Elements");
}

static int read_names(reader *r, fem_mesh *m)
{
    long n;
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
    reader r = {fopen(path, "r"), path, 0, {0}, err, len};
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
            else if (version != 2.2) rc = fail(&r, "Gmsh format %g: this reader takes 2.2 (gmsh -format msh22)", version);
            else if (type != 0) rc = fail(&r, "binary Gmsh file: this reader takes ASCII (file-type 0)");
            else rc = section_end(&r, "MeshFormat");
            have_format = 1;
        } else if (!have_format && r.buf[0]) {
            rc = fail(&r, "expected $MeshFormat first");
        } else if (!strcmp(r.buf, "$PhysicalNames")) {
            rc = read_names(&r, m);
        } else if (!strcmp(r.buf, "$Nodes")) {
            rc = have_nodes ? fail(&r, "a second $Nodes section") : read_nodes(&r, m, &tags);
            have_nodes = 1;
        } else if (!strcmp(r.buf, "$Elements")) {
            rc = !have_nodes ? fail(&r, "$Elements before $Nodes") : have_elements ? fail(&r, "a second $Elements section")
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

void fem_traction(const fem_mesh *m, const unsigned char *clamp, int tag, const double *t, double *b)
{
    for (int i = 0; i < m->ntri; i++) {
        if (m->tri_tag[i] != tag) continue;
        const int *n = m->tri + 3 * (size_t)i;
        double u[3], w[3], x[3];
        for (int c = 0; c < 3; c++) u[c] = m->v[3 * n[1] + c] - m->v[3 * n[0] + c], w[c] = m->v[3 * n[2] + c] - m->v[3 * n[0] + c];
        x[0] = u[1] * w[2] - u[2] * w[1], x[1] = u[2] * w[0] - u[0] * w[2], x[2] = u[0] * w[1] - u[1] * w[0];
        const double area = 0.5 * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        for (int a = 0; a < 3; a++)
            if (!clamp[n[a]])
                for (int c = 0; c < 3; c++) b[3 * (size_t)n[a] + c] += t[c] * area / 3.0;
    }
}
