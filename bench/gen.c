/* spbench matrix generators (see gen.h for what each one builds). */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ random numbers */
uint64_t gen_hash64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

double gen_uniform(uint64_t seed, uint64_t counter)
{
    return (double)(gen_hash64(seed ^ gen_hash64(counter)) >> 11) * (1.0 / 9007199254740992.0);
}

/* One stream per row: the row's key, then a counter. */
typedef struct {
    uint64_t key, ctr;
} stream;

static stream row_stream(uint64_t seed, int64_t row)
{
    stream s = {gen_hash64(seed ^ gen_hash64((uint64_t)row * 0xD1B54A32D192ED03ull)), 0};
    return s;
}
static double next_uniform(stream *s) { return gen_uniform(s->key, s->ctr++); }
static double next_normal(stream *s) /* Box-Muller; 1 - u lies in (0, 1] */
{
    const double u1 = 1.0 - next_uniform(s), u2 = next_uniform(s);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ------------------------------------------------------------------ helpers */
void gen_csr_free(gen_csr *A)
{
    if (!A) return;
    free(A->rowptr);
    free(A->col);
    free(A->val);
    memset(A, 0, sizeof *A);
}

static int cmp_i32(const void *a, const void *b)
{
    const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Sort c[0..len) and drop repeats; returns the new length. */
static int64_t sort_unique(int32_t *c, int64_t len)
{
    if (len <= 32) {
        for (int64_t i = 1; i < len; i++) {
            const int32_t v = c[i];
            int64_t j = i;
            for (; j > 0 && c[j - 1] > v; j--) c[j] = c[j - 1];
            c[j] = v;
        }
    } else {
        qsort(c, (size_t)len, sizeof *c, cmp_i32);
    }
    int64_t k = 0;
    for (int64_t i = 0; i < len; i++)
        if (k == 0 || c[i] != c[k - 1]) c[k++] = c[i];
    return k;
}

/* Rows were filled at slot[i] with len[i] entries (len[i] <= the room left for
 * them); move them together, set rowptr and shrink the arrays. */
static const char *compact(gen_csr *A, const int64_t *slot, const int64_t *len)
{
    int64_t k = 0;
    A->rowptr[0] = 0;
    for (int32_t i = 0; i < A->n; i++) {
        if (slot[i] != k) { /* slot[i] >= k: moving left never overwrites a later row */
            memmove(A->col + k, A->col + slot[i], (size_t)len[i] * sizeof *A->col);
            memmove(A->val + k, A->val + slot[i], (size_t)len[i] * sizeof *A->val);
        }
        k += len[i];
        A->rowptr[i + 1] = (int32_t)k;
    }
    A->nnz = k;
    if (k > 0) { /* shrinking realloc; keep the old block if it refuses */
        int32_t *c = realloc(A->col, (size_t)k * sizeof *c);
        double *v = realloc(A->val, (size_t)k * sizeof *v);
        if (c) A->col = c;
        if (v) A->val = v;
    }
    return NULL;
}

static const char *alloc_csr(gen_csr *A, int32_t n, int32_t m, int64_t room)
{
    memset(A, 0, sizeof *A);
    A->n = n;
    A->m = m;
    A->rowptr = malloc(((size_t)n + 1) * sizeof *A->rowptr);
    A->col = malloc((size_t)(room > 0 ? room : 1) * sizeof *A->col);
    A->val = malloc((size_t)(room > 0 ? room : 1) * sizeof *A->val);
    if (!A->rowptr || !A->col || !A->val) {
        gen_csr_free(A);
        return "out of host memory for the generated matrix";
    }
    return NULL;
}

/* ------------------------------------------------------------------ banded random rows */
const char *gen_banded(gen_csr *A, int32_t n, int per_row, double sigma, uint64_t seed)
{
    memset(A, 0, sizeof *A);
    if (n < 1 || per_row < 1 || !(sigma >= 0)) return "gen_banded: need n >= 1, per_row >= 1, sigma >= 0";
    const int64_t room = (int64_t)n * per_row;
    if (room > INT32_MAX) return "gen_banded: n * per_row exceeds 32-bit indices";
    const char *err = alloc_csr(A, n, n, room);
    if (err) return err;
    int64_t *slot = malloc((size_t)n * sizeof *slot), *len = malloc((size_t)n * sizeof *len);
    if (!slot || !len) {
        free(slot);
        free(len);
        gen_csr_free(A);
        return "out of host memory for the generated matrix";
    }
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) {
        stream s = row_stream(seed, i);
        int32_t *c = A->col + (int64_t)i * per_row;
        for (int k = 0; k < per_row; k++) {
            double j = (double)i + nearbyint(sigma * next_normal(&s));
            c[k] = (int32_t)(j < 0 ? 0 : j > n - 1 ? n - 1 : j);
        }
        slot[i] = (int64_t)i * per_row;
        len[i] = sort_unique(c, per_row);
        for (int64_t k = 0; k < len[i]; k++) A->val[slot[i] + k] = 2.0 * next_uniform(&s) - 1.0;
    }
    err = compact(A, slot, len);
    free(slot);
    free(len);
    return err;
}

/* ------------------------------------------------------------------ power-law row lengths */
static int64_t capped_length(double s, double p, int32_t cap)
{
    double l = floor(s * p + 0.5);
    return l < 1 ? 1 : l > cap ? cap : (int64_t)l;
}

static int64_t total_length(const double *p, int32_t n, double s, int32_t cap)
{
    int64_t t = 0;
#pragma omp parallel for reduction(+ : t) schedule(static)
    for (int32_t i = 0; i < n; i++) t += capped_length(s, p[i], cap);
    return t;
}

const char *gen_powerlaw(gen_csr *A, int32_t n, double mean, int32_t cap, double alpha, uint64_t seed)
{
    memset(A, 0, sizeof *A);
    if (n < 1 || !(mean >= 1) || cap < 1 || cap > n || !(alpha > 1))
        return "gen_powerlaw: need n >= 1, mean >= 1, 1 <= cap <= n, alpha > 1";
    const int64_t target = (int64_t)llround(mean * n);
    if ((int64_t)cap * n < target) return "gen_powerlaw: cap * n is below the requested mean";
    double *p = malloc((size_t)n * sizeof *p);
    if (!p) return "out of host memory for the generated matrix";
    /* raw Pareto draws p >= 1 (counter 0 of each row's stream) */
#pragma omp parallel for schedule(static)
    for (int32_t i = 0; i < n; i++) {
        stream s = row_stream(seed, i);
        p[i] = pow(1.0 - next_uniform(&s), -1.0 / alpha);
    }
    /* scale s with sum of capped lengths = target: the sum grows with s, so bisect */
    double lo = 0.0, hi = mean;
    while (total_length(p, n, hi, cap) < target) hi *= 2.0;
    for (int it = 0; it < 60 && hi - lo > 1e-12 * hi; it++) {
        const double mid = 0.5 * (lo + hi);
        if (total_length(p, n, mid, cap) < target) lo = mid; else hi = mid;
    }
    const int64_t room = total_length(p, n, hi, cap);
    if (room > INT32_MAX) {
        free(p);
        return "gen_powerlaw: nnz exceeds 32-bit indices";
    }
    int64_t *slot = malloc((size_t)n * sizeof *slot), *len = malloc((size_t)n * sizeof *len);
    const char *err = (slot && len) ? alloc_csr(A, n, n, room) : "out of host memory for the generated matrix";
    if (err) {
        free(p);
        free(slot);
        free(len);
        return err;
    }
    slot[0] = 0;
    for (int32_t i = 1; i < n; i++) slot[i] = slot[i - 1] + capped_length(hi, p[i - 1], cap);
#pragma omp parallel for schedule(dynamic, 256)
    for (int32_t i = 0; i < n; i++) {
        stream s = row_stream(seed, i);
        s.ctr = 1; /* counter 0 gave the length */
        const int64_t want = capped_length(hi, p[i], cap);
        int32_t *c = A->col + slot[i];
        for (int64_t k = 0; k < want; k++) {
            int64_t j = (int64_t)(next_uniform(&s) * n);
            c[k] = (int32_t)(j < n ? j : n - 1);
        }
        len[i] = sort_unique(c, want);
        for (int64_t k = 0; k < len[i]; k++) A->val[slot[i] + k] = 2.0 * next_uniform(&s) - 1.0;
    }
    err = compact(A, slot, len);
    free(p);
    free(slot);
    free(len);
    return err;
}

/* ------------------------------------------------------------------ 27-point stencil, 3x3 blocks */
/* S: symmetric, strictly diagonally dominant with a positive diagonal, hence SPD. */
static const double stencil_S[3][3] = {{4.0, 1.0, 0.5}, {1.0, 3.0, 0.25}, {0.5, 0.25, 2.0}};

static int axis_count(int32_t i, int32_t g) { return 1 + (i > 0) + (i < g - 1); }

const char *gen_stencil27_b3(gen_csr *A, int32_t g)
{
    memset(A, 0, sizeof *A);
    if (g < 1) return "gen_stencil27_b3: need g >= 1";
    const int64_t pts = (int64_t)g * g * g, n = 3 * pts;
    int64_t s1 = 0; /* sum over one axis of the neighbour counts: nnz = 9 s1^3 */
    for (int32_t i = 0; i < g; i++) s1 += axis_count(i, g);
    const int64_t nnz = 9 * s1 * s1 * s1;
    if (n > INT32_MAX || nnz > INT32_MAX) return "gen_stencil27_b3: size exceeds 32-bit indices";
    const char *err = alloc_csr(A, (int32_t)n, (int32_t)n, nnz);
    if (err) return err;
    A->rowptr[0] = 0;
    for (int64_t p = 0; p < pts; p++) {
        const int32_t x = (int32_t)(p % g), y = (int32_t)((p / g) % g), z = (int32_t)(p / ((int64_t)g * g));
        const int32_t deg = axis_count(x, g) * axis_count(y, g) * axis_count(z, g);
        for (int a = 0; a < 3; a++) A->rowptr[3 * p + a + 1] = A->rowptr[3 * p + a] + 3 * deg;
    }
    A->nnz = nnz;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < pts; p++) {
        const int32_t x = (int32_t)(p % g), y = (int32_t)((p / g) % g), z = (int32_t)(p / ((int64_t)g * g));
        const int32_t deg = axis_count(x, g) * axis_count(y, g) * axis_count(z, g);
        for (int a = 0; a < 3; a++) {
            int64_t k = A->rowptr[3 * p + a];
            /* neighbours in increasing grid index (z, then y, then x), so columns come out sorted */
            for (int dz = -1; dz <= 1; dz++)
                for (int dy = -1; dy <= 1; dy++)
                    for (int dx = -1; dx <= 1; dx++) {
                        if (x + dx < 0 || x + dx >= g || y + dy < 0 || y + dy >= g || z + dz < 0 || z + dz >= g)
                            continue;
                        const int64_t q = p + dx + (int64_t)g * dy + (int64_t)g * g * dz;
                        const double coef = (q == p) ? (double)deg : -1.0; /* (L + I)_pq */
                        for (int b = 0; b < 3; b++) {
                            A->col[k] = (int32_t)(3 * q + b);
                            A->val[k++] = coef * stencil_S[a][b];
                        }
                    }
        }
    }
    return NULL;
}

/* ------------------------------------------------------------------ arrow: a diagonal and k dense rows and columns */
/* The dense lines at rows and columns (2t + 1) n / (2k), t < k (spread, so a product's work
 * is not all at one end); entry (i, j) is stored when i == j or i or j is a dense line;
 * values uniform in [-1, 1), 2 k + 1 added on the diagonal (not SPD: spbench's solver mode
 * leaves it out).  HiSparse's
 * case (issue 23): cuSPARSE's transposed CSR product scatters each dense row's n entries. */
const char *gen_arrow(gen_csr *A, int32_t n, int32_t k, uint64_t seed)
{
    memset(A, 0, sizeof *A);
    if (n < 1 || k < 0 || k > n) return "gen_arrow: need n >= 1, 0 <= k <= n";
    int32_t *line = malloc((size_t)(k > 0 ? k : 1) * sizeof *line);
    unsigned char *dense = calloc((size_t)n, 1);
    if (!line || !dense) {
        free(line);
        free(dense);
        return "out of host memory for the generated matrix";
    }
    for (int32_t t = 0; t < k; t++) line[t] = (int32_t)(((2 * (int64_t)t + 1) * n) / (2 * (int64_t)k));
    for (int32_t t = 0; t < k; t++) dense[line[t]] = 1;
    /* a dense row: n entries; any other row: its diagonal and the k dense columns (none of
       them its own: a dense column's row is dense) */
    int64_t nnz = 0;
    for (int32_t i = 0; i < n; i++) nnz += dense[i] ? n : 1 + k;
    if (nnz > INT32_MAX) {
        free(line);
        free(dense);
        return "gen_arrow: nnz exceeds 32-bit indices";
    }
    const char *err = alloc_csr(A, n, n, nnz);
    if (err) {
        free(line);
        free(dense);
        return err;
    }
    A->rowptr[0] = 0;
    for (int32_t i = 0; i < n; i++) A->rowptr[i + 1] = A->rowptr[i] + (int32_t)(dense[i] ? n : 1 + k);
    A->nnz = nnz;
#pragma omp parallel for schedule(dynamic, 1024)
    for (int32_t i = 0; i < n; i++) {
        stream s = row_stream(seed, i);
        int64_t q = A->rowptr[i];
        if (dense[i]) {
            for (int32_t j = 0; j < n; j++) A->col[q + j] = j;
        } else { /* the diagonal merged into the sorted dense columns */
            int32_t t = 0;
            for (; t < k && line[t] < i; t++) A->col[q++] = line[t];
            A->col[q++] = i;
            for (; t < k; t++) A->col[q++] = line[t];
        }
        for (int64_t e = A->rowptr[i]; e < A->rowptr[i + 1]; e++)
            A->val[e] = (2.0 * next_uniform(&s) - 1.0) + (A->col[e] == i ? 2.0 * k + 1.0 : 0.0);
    }
    free(line);
    free(dense);
    return NULL;
}

/* ------------------------------------------------------------------ compound entries on symmetric graphs */
typedef struct {
    gen_compound_kind kind;
    int32_t gx, gy, gz; /* grid points along each axis */
    int radius;         /* neighbours within this Chebyshev distance are candidates */
    uint64_t seed;
} graph_spec;

/* Density field of GEN_MESH27_SPD, smooth over the grid, in [0, 1]. */
static double mesh_density(const graph_spec *s, int64_t p)
{
    const double t = 6.283185307179586 / s->gx;
    const double x = (double)(p % s->gx), y = (double)((p / s->gx) % s->gy), z = (double)(p / ((int64_t)s->gx * s->gy));
    return 0.5 + 0.5 * sin(1.3 * t * x + 0.7) * cos(0.9 * t * y) * sin(1.1 * t * z + 0.3);
}

/* One uniform draw per unordered pair {p, q}, whoever asks. */
static double pair_uniform(uint64_t seed, int64_t p, int64_t q)
{
    const int64_t lo = p < q ? p : q, hi = p < q ? q : p;
    return gen_uniform(row_stream(seed, lo).key, (uint64_t)hi);
}

/* Whether q = p + (dx, dy, dz) is a neighbour of p (both in the grid, p != q). */
static int graph_edge(const graph_spec *s, int64_t p, int64_t q, int dx, int dy, int dz)
{
    const int d = abs(dx) > abs(dy) ? (abs(dx) > abs(dz) ? abs(dx) : abs(dz)) : (abs(dy) > abs(dz) ? abs(dy) : abs(dz));
    switch (s->kind) {
    case GEN_STENCIL27_RANDOM:
        return 1;
    case GEN_MESH27_SPD: {
        const double w = 0.5 * (mesh_density(s, p) + mesh_density(s, q));
        return pair_uniform(s->seed ^ 0x5EEDull, p, q) < (d == 1 ? 0.3 + 0.65 * w : 0.13 * w);
    }
    case GEN_TRI2D_QLAPLACE:
        return !(dx * dy == -1); /* the triangles' diagonals run one way */
    }
    return 0;
}

/* Columns of the graph's row p in increasing order (z, then y, then x offsets);
 * writes them when c != NULL; returns how many. */
static int64_t graph_row(const graph_spec *s, int64_t p, int32_t *c)
{
    const int32_t x = (int32_t)(p % s->gx), y = (int32_t)((p / s->gx) % s->gy),
                  z = (int32_t)(p / ((int64_t)s->gx * s->gy));
    const int r = s->radius;
    int64_t k = 0;
    for (int dz = -r; dz <= r; dz++)
        for (int dy = -r; dy <= r; dy++)
            for (int dx = -r; dx <= r; dx++) {
                if (x + dx < 0 || x + dx >= s->gx || y + dy < 0 || y + dy >= s->gy || z + dz < 0 || z + dz >= s->gz)
                    continue;
                const int64_t q = p + dx + (int64_t)s->gx * (dy + (int64_t)s->gy * dz);
                if (q != p && !graph_edge(s, p, q, dx, dy, dz)) continue;
                if (c) c[k] = (int32_t)q;
                k++;
            }
    return k;
}

/* A random unit quaternion of the pair (lo, hi), lo < hi. */
static void pair_unit_quaternion(uint64_t seed, int64_t lo, int64_t hi, double u[4])
{
    stream s = {row_stream(seed, lo).key, (uint64_t)hi << 3};
    double n2 = 0;
    for (int t = 0; t < 4; t++) u[t] = next_normal(&s), n2 += u[t] * u[t];
    if (!(n2 > 0)) { /* four zero draws: practically never */
        u[0] = 1, u[1] = u[2] = u[3] = 0;
        return;
    }
    for (int t = 0; t < 4; t++) u[t] /= sqrt(n2);
}

/* Member t of the random block of the pair (lo, hi): the same whichever row asks. */
static double pair_member(uint64_t seed, int64_t lo, int64_t hi, int nv, int t)
{
    return 2.0 * gen_uniform(row_stream(seed, lo).key, (uint64_t)hi * nv + t) - 1.0;
}

/* The entries of row p (columns c[0..len), the diagonal among them) into v (len * nv). */
static void compound_row(const graph_spec *s, int b, int64_t p, const int32_t *c, int64_t len, double *v)
{
    const int nv = s->kind == GEN_TRI2D_QLAPLACE ? 4 : b * b;
    int64_t diag = -1;
    double rowsum[8] = {0};
    for (int64_t k = 0; k < len; k++) {
        const int64_t q = c[k], lo = p < q ? p : q, hi = p < q ? q : p;
        double *e = v + k * nv;
        if (s->kind == GEN_STENCIL27_RANDOM) { /* every entry its own draws, the diagonal too */
            for (int t = 0; t < nv; t++) e[t] = pair_member(s->seed, p, q, nv, t);
        } else if (q == p) {
            diag = k;
        } else if (s->kind == GEN_MESH27_SPD) { /* B_pq drawn for p < q; B_qp = B_pq^T */
            for (int r = 0; r < b; r++)
                for (int j = 0; j < b; j++) {
                    const double x = pair_member(s->seed, lo, hi, nv, p < q ? r * b + j : j * b + r);
                    e[r * b + j] = x;
                    rowsum[r] += fabs(x);
                }
        } else { /* GEN_TRI2D_QLAPLACE: -u_pq, and -conj(u_pq) at (q, p) */
            double u[4];
            pair_unit_quaternion(s->seed, lo, hi, u);
            e[0] = -u[0];
            for (int t = 1; t < 4; t++) e[t] = p < q ? -u[t] : u[t];
        }
    }
    if (diag < 0) return; /* GEN_STENCIL27_RANDOM */
    double *e = v + diag * nv;
    if (s->kind == GEN_MESH27_SPD) { /* (1 + the largest off-diagonal absolute row sum) I */
        double m = 0;
        for (int r = 0; r < b; r++) m = rowsum[r] > m ? rowsum[r] : m;
        for (int t = 0; t < nv; t++) e[t] = t % (b + 1) == 0 ? 1.0 + m : 0.0;
    } else { /* the real quaternion degree + 1 */
        e[0] = (double)(len - 1) + 1.0, e[1] = e[2] = e[3] = 0.0;
    }
}

const char *gen_compound(gen_csr *A, gen_compound_kind kind, int32_t g, int b, uint64_t seed)
{
    memset(A, 0, sizeof *A);
    graph_spec s = {kind, g, g, g, 1, seed};
    if (kind == GEN_MESH27_SPD) s.radius = 2;
    if (kind == GEN_TRI2D_QLAPLACE) s.gz = 1, b = 2; /* nv = 4 */
    else if (b < 2 || b > 8) return "gen_compound: need a block size 2..8";
    if (g < 1 || (kind != GEN_STENCIL27_RANDOM && kind != GEN_MESH27_SPD && kind != GEN_TRI2D_QLAPLACE))
        return "gen_compound: need g >= 1 and a known kind";
    const int nv = b * b;
    const int64_t pts = (int64_t)s.gx * s.gy * s.gz;
    if (pts > INT32_MAX) return "gen_compound: size exceeds 32-bit indices";
    int64_t *len = malloc((size_t)pts * sizeof *len);
    if (!len) return "out of host memory for the generated matrix";
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < pts; p++) len[p] = graph_row(&s, p, NULL);
    int64_t nnz = 0;
    for (int64_t p = 0; p < pts; p++) nnz += len[p];
    const char *err = nnz > INT32_MAX ? "gen_compound: entries exceed 32-bit indices"
                                      : alloc_csr(A, (int32_t)pts, (int32_t)pts, nnz);
    double *val = err ? NULL : malloc((size_t)(nnz > 0 ? nnz : 1) * nv * sizeof *val);
    if (!err && !val) err = "out of host memory for the generated matrix";
    if (err) {
        free(len);
        gen_csr_free(A);
        return err;
    }
    free(A->val);
    A->val = val;
    A->nv = nv;
    A->nnz = nnz;
    A->rowptr[0] = 0;
    for (int64_t p = 0; p < pts; p++) A->rowptr[p + 1] = A->rowptr[p] + (int32_t)len[p];
    free(len);
#pragma omp parallel for schedule(dynamic, 256)
    for (int64_t p = 0; p < pts; p++) {
        int32_t *c = A->col + A->rowptr[p];
        const int64_t n = graph_row(&s, p, c);
        compound_row(&s, b, p, c, n, A->val + (int64_t)A->rowptr[p] * nv);
    }
    return NULL;
}
