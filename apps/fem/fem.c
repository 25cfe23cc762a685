/* spsolve-fem: the beam, P1 elasticity assembly, loads, the solve (fem.h). */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* realpath */
#include "fem.h"
#include "fem_math.h"
#include "timing.h"
#include "render.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- the beam */
int fem_beam(double L, double W, double H, int nx, int ny, int nz, fem_mesh *m, char *err, size_t len)
{
    memset(m, 0, sizeof *m);
    if (!(L > 0 && W > 0 && H > 0) || nx < 1 || ny < 1 || nz < 1 ||
        (double)(nx + 1) * (ny + 1) * (nz + 1) > 2e9 / 3 || 6.0 * nx * ny * nz > 2e9 / 16) {
        snprintf(err, len, "beam %g x %g x %g in %d x %d x %d cells: sizes must be positive and the mesh under 2^31 "
                           "entries", L, W, H, nx, ny, nz);
        return -1;
    }
    m->nv = (nx + 1) * (ny + 1) * (nz + 1);
    m->nt = 6 * nx * ny * nz;
    m->v = malloc(sizeof(double) * 3 * (size_t)m->nv);
    m->t = malloc(sizeof(int) * 4 * (size_t)m->nt);
    if (!m->v || !m->t) {
        fem_mesh_free(m);
        snprintf(err, len, "out of memory for a beam of %d x %d x %d cells", nx, ny, nz);
        return -1;
    }
    m->L = L, m->W = W, m->H = H;
#define NODE(i, j, k) (((k) * (ny + 1) + (j)) * (nx + 1) + (i))
    for (int k = 0; k <= nz; k++)
        for (int j = 0; j <= ny; j++)
            for (int i = 0; i <= nx; i++) {
                double *p = m->v + 3 * (size_t)NODE(i, j, k);
                p[0] = L * i / nx, p[1] = W * j / ny, p[2] = H * k / nz;
            }
    /* Kuhn's 6 tetrahedra of a cell: the paths from corner 000 to 111 along the axes in
     * each of the 6 orders; every cell splits its faces along the same diagonals */
    static const int order[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    int *t = m->t;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < ny; j++)
            for (int i = 0; i < nx; i++)
                for (int o = 0; o < 6; o++) {
                    int c[3] = {0, 0, 0};
                    *t++ = NODE(i, j, k);
                    for (int s = 0; s < 3; s++) {
                        c[order[o][s]] = 1;
                        *t++ = NODE(i + c[0], j + c[1], k + c[2]);
                    }
                }
#undef NODE
    return 0;
}

void fem_mesh_free(fem_mesh *m)
{
    free(m->v);
    free(m->t);
    free(m->tri);
    free(m->tri_tag);
    memset(m, 0, sizeof *m);
}

/* ---------------------------------------------------------------- elements */
double fem_tet_blocks(const double *v, const int *t, double lambda, double mu, double *k)
{
    double g[4][3];
    const double det = fem_tet_grad(v, t, g);
    if (det == 0) return 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) fem_tet_block(g, det, lambda, mu, a, b, k + 9 * (4 * a + b));
    return det;
}

void fem_assemble(const fem_mesh *m, const unsigned char *clamp, double lambda, double mu, int *row, int *col,
                  double *val)
{
    for (int e = 0; e < m->nt; e++) {
        double k[144];
        const int *t = m->t + 4 * (size_t)e;
        if (fem_tet_blocks(m->v, t, lambda, mu, k) == 0) memset(k, 0, sizeof k);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                const size_t q = 16 * (size_t)e + 4 * a + b;
                row[q] = t[a];
                col[q] = t[b];
                /* a clamped node: its couplings zero (kept: the block pattern stays), its own
                   diagonal kept, so K stays SPD at the matrix's scale (seed-methods §4.3) */
                const int fixed = clamp[t[a]] || clamp[t[b]];
                for (int r = 0; r < 9; r++) val[9 * q + r] = fem_clamped(k[9 * (4 * a + b) + r], fixed, t[a] == t[b], r);
            }
    }
}

void fem_clamp_x0(const fem_mesh *m, unsigned char *clamp)
{
    const double tol = 1e-12 * (m->L > 0 ? m->L : 1);
    for (int i = 0; i < m->nv; i++) clamp[i] = m->v[3 * (size_t)i] <= tol;
}

/* Whether node i lies on the face x = L. */
static int at_tip(const fem_mesh *m, int i) { return fabs(m->v[3 * (size_t)i] - m->L) <= 1e-12 * m->L; }

/* b += t A_T / 3 on each node of triangle n (a traction t, force per area), clamped nodes left out. */
static void face_traction(const fem_mesh *m, const unsigned char *clamp, const int *n, const double *t, double *b)
{
    const double area = fem_tri_area(m->v, n, NULL);
    for (int a = 0; a < 3; a++)
        if (!clamp[n[a]])
            for (int c = 0; c < 3; c++) b[3 * (size_t)n[a] + c] += t[c] * area / 3.0;
}

void fem_tip_load(const fem_mesh *m, const unsigned char *clamp, double P, double *b)
{
    memset(b, 0, sizeof(double) * 3 * (size_t)m->nv);
    if (P == 0 || !(m->L > 0 && m->W > 0 && m->H > 0)) return; /* a beam's end face only */
    const double t[3] = {0, 0, -P / (m->W * m->H)}; /* traction on the end face */
    static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    for (int e = 0; e < m->nt; e++)
        for (int f = 0; f < 4; f++) {
            const int *te = m->t + 4 * (size_t)e, n[3] = {te[face[f][0]], te[face[f][1]], te[face[f][2]]};
            if (at_tip(m, n[0]) && at_tip(m, n[1]) && at_tip(m, n[2])) /* a face on x = L is a boundary face */
                face_traction(m, clamp, n, t, b);
        }
}

void fem_traction(const fem_mesh *m, const unsigned char *clamp, int tag, const double *t, double *b)
{
    for (int i = 0; i < m->ntri; i++)
        if (m->tri_tag[i] == tag) face_traction(m, clamp, m->tri + 3 * (size_t)i, t, b);
}

void fem_gravity_load(const fem_mesh *m, const unsigned char *clamp, double rho, const double *g, double *b)
{
    if (rho == 0 || (g[0] == 0 && g[1] == 0 && g[2] == 0)) return;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->t + 4 * (size_t)e;
        double gr[4][3];
        const double V = fabs(fem_tet_grad(m->v, t, gr)) / 6.0;
        for (int a = 0; a < 4; a++)
            if (!clamp[t[a]])
                for (int c = 0; c < 3; c++) b[3 * (size_t)t[a] + c] += rho * g[c] * V / 4.0;
    }
}

void fem_dirichlet_rhs(const fem_mesh *m, const unsigned char *clamp, const double *g, double lambda, double mu,
                       double *b)
{
    for (int i = 0; i < m->nv; i++)
        if (clamp[i])
            for (int c = 0; c < 3; c++) b[3 * (size_t)i + c] = 0; /* K_jj g_j, summed below */
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->t + 4 * (size_t)e;
        double k[144];
        if (fem_tet_blocks(m->v, t, lambda, mu, k) == 0) continue;
        for (int a = 0; a < 4; a++)
            for (int bb = 0; bb < 4; bb++) {
                if (!clamp[t[bb]]) continue;
                const double *K = k + 9 * (4 * a + bb), *gb = g + 3 * (size_t)t[bb];
                double *ba = b + 3 * (size_t)t[a];
                if (!clamp[t[a]])
                    for (int r = 0; r < 3; r++) ba[r] -= K[3 * r] * gb[0] + K[3 * r + 1] * gb[1] + K[3 * r + 2] * gb[2];
                else if (t[a] == t[bb])
                    for (int r = 0; r < 3; r++) ba[r] += K[4 * r] * gb[r];
            }
    }
}

/* The 4-point rule on a tetrahedron, exact for quadratics: barycentric points (a, b, b, b)
 * and permutations, a = 0.5854101966249685, b = 0.1381966011250105, weights V / 4. */
static const double q_a = 0.5854101966249685, q_b = 0.1381966011250105;

/* visit(t, x, lam, w, arg) at every quadrature point of every element: t the element's
 * nodes, x the point, lam its barycentric weights, w its quadrature weight (V / 4). */
static void each_quad(const fem_mesh *m, void (*visit)(const int *, const double *, const double *, double, void *),
                      void *arg)
{
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->t + 4 * (size_t)e;
        double g[4][3];
        const double w = fabs(fem_tet_grad(m->v, t, g)) / 6.0 / 4.0;
        for (int q = 0; q < 4; q++) {
            double x[3], lam[4];
            for (int a = 0; a < 4; a++) lam[a] = a == q ? q_a : q_b;
            for (int c = 0; c < 3; c++) {
                x[c] = 0;
                for (int a = 0; a < 4; a++) x[c] += lam[a] * m->v[3 * (size_t)t[a] + c];
            }
            visit(t, x, lam, w, arg);
        }
    }
}

typedef struct {
    const unsigned char *clamp;
    void (*f)(const double *, double *, void *);
    void *user;
    double *b;
} body_arg;
static void body_visit(const int *t, const double *x, const double *lam, double w, void *arg)
{
    const body_arg *p = arg;
    double fx[3];
    p->f(x, fx, p->user);
    for (int a = 0; a < 4; a++)
        if (!p->clamp[t[a]])
            for (int c = 0; c < 3; c++) p->b[3 * (size_t)t[a] + c] += w * fx[c] * lam[a];
}

void fem_body_force(const fem_mesh *m, const unsigned char *clamp, void (*f)(const double *, double *, void *),
                    void *user, double *b)
{
    body_arg arg = {clamp, f, user, b};
    each_quad(m, body_visit, &arg);
}

typedef struct {
    const double *uh;
    void (*u)(const double *, double *, void *);
    void *user;
    double ee, nn;
} l2_arg;
static void l2_visit(const int *t, const double *x, const double *lam, double w, void *arg)
{
    l2_arg *p = arg;
    double ux[3];
    p->u(x, ux, p->user);
    for (int c = 0; c < 3; c++) {
        double h = 0;
        for (int a = 0; a < 4; a++) h += lam[a] * p->uh[3 * (size_t)t[a] + c];
        p->ee += w * (h - ux[c]) * (h - ux[c]);
        p->nn += w * ux[c] * ux[c];
    }
}

void fem_l2_error(const fem_mesh *m, const double *uh, void (*u)(const double *, double *, void *), void *user,
                  double *err, double *norm)
{
    l2_arg arg = {uh, u, user, 0, 0};
    each_quad(m, l2_visit, &arg);
    *err = sqrt(arg.ee);
    *norm = sqrt(arg.nn);
}

void fem_lame(double E, double nu, double *lambda, double *mu)
{
    *lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
    *mu = E / (2 * (1 + nu));
}

void fem_von_mises(const fem_mesh *m, const double *u, double lambda, double mu, double *vm)
{
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->t + 4 * (size_t)e;
        double g[4][3], du[3][3] = {{0}}; /* du[i][j] = d u_i / d x_j */
        if (fem_tet_grad(m->v, t, g) == 0) {
            vm[e] = 0;
            continue;
        }
        for (int a = 0; a < 4; a++)
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) du[i][j] += u[3 * (size_t)t[a] + i] * g[a][j];
        double s[3][3];
        const double tr = du[0][0] + du[1][1] + du[2][2];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) s[i][j] = mu * (du[i][j] + du[j][i]) + (i == j ? lambda * tr : 0.0);
        const double d01 = s[0][0] - s[1][1], d12 = s[1][1] - s[2][2], d20 = s[2][2] - s[0][0];
        vm[e] = sqrt(0.5 * (d01 * d01 + d12 * d12 + d20 * d20) +
                     3.0 * (s[0][1] * s[0][1] + s[1][2] * s[1][2] + s[2][0] * s[2][0]));
    }
}

/* The file is written whole or not at all (sps_outfile: through a symbolic link, into a
 * device, never replacing anything but a regular file). */
int fem_write_vtu(const char *path, const fem_mesh *m, const double *u, const double *vm, char *err, size_t len)
{
    sps_outfile o;
    FILE *f;
    if (sps_outfile_open(path, &o, &f, err, len) != SPS_OK) return -1;
    int ok = fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
                        "<UnstructuredGrid>\n<Piece NumberOfPoints=\"%d\" NumberOfCells=\"%d\">\n<Points>\n"
                        "<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n", m->nv, m->nt) >= 0;
    for (int i = 0; i < m->nv; i++) fprintf(f, "%.10g %.10g %.10g\n", m->v[3 * i], m->v[3 * i + 1], m->v[3 * i + 2]);
    fprintf(f, "</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
    for (int e = 0; e < m->nt; e++)
        fprintf(f, "%d %d %d %d\n", m->t[4 * e], m->t[4 * e + 1], m->t[4 * e + 2], m->t[4 * e + 3]);
    fprintf(f, "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n");
    for (int e = 0; e < m->nt; e++) fprintf(f, "%lld\n", 4LL * (e + 1));
    fprintf(f, "</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n");
    for (int e = 0; e < m->nt; e++) fputs("10\n", f); /* VTK_TETRA */
    fprintf(f, "</DataArray>\n</Cells>\n<PointData Vectors=\"displacement\">\n"
               "<DataArray type=\"Float64\" Name=\"displacement\" NumberOfComponents=\"3\" format=\"ascii\">\n");
    for (int i = 0; i < m->nv; i++) fprintf(f, "%.10g %.10g %.10g\n", u[3 * i], u[3 * i + 1], u[3 * i + 2]);
    fprintf(f, "</DataArray>\n</PointData>\n<CellData Scalars=\"von_mises\">\n"
               "<DataArray type=\"Float64\" Name=\"von_mises\" format=\"ascii\">\n");
    for (int e = 0; e < m->nt; e++) fprintf(f, "%.10g\n", vm[e]);
    fprintf(f, "</DataArray>\n</CellData>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n");
    ok = ok && !ferror(f);
    if (!ok) snprintf(err, len, "%s: write error", path);
    return sps_outfile_close(o, ok, err, len) == SPS_OK ? 0 : -1;
}

/* A face of a tetrahedron: its nodes sorted (the key), in outward order, its element. */
typedef struct {
    int key[3], node[3], elem;
} tet_face;
static int face_cmp(const void *a, const void *b)
{
    const int *x = ((const tet_face *)a)->key, *y = ((const tet_face *)b)->key;
    for (int k = 0; k < 3; k++)
        if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
    return 0;
}

/* blue - cyan - green - yellow - red over s in [0, 1] */
static void stress_colour(double s, float *c)
{
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    c[0] = (float)fmin(1, fmax(0, 4 * s - 2));
    c[1] = (float)fmin(1, fmax(0, s < 0.5 ? 4 * s : 4 - 4 * s));
    c[2] = (float)fmin(1, fmax(0, 2 - 4 * s));
    for (int k = 0; k < 3; k++) c[k] = 0.2f + 0.8f * c[k];
}

int fem_render_png(const char *path, const fem_mesh *m, const double *u, const double *vm, int size, char *err,
                   size_t len)
{
    static const int opp[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}}; /* face opposite node a, outward */
    const size_t nf = 4 * (size_t)m->nt;
    tet_face *faces = malloc(sizeof *faces * (nf + 1));
    double *pos = malloc(sizeof(double) * 3 * ((size_t)m->nv + 1));
    int *tri = malloc(sizeof(int) * 3 * (nf + 1));
    float *col = malloc(sizeof(float) * 3 * (nf + 1));
    int rc = -1;
    if (!faces || !pos || !tri || !col) {
        snprintf(err, len, "%s: out of memory for the rendering", path);
        goto done;
    }
    for (size_t i = 0; i < (size_t)m->nv; i++) { /* displaced, turned so that z is up on the picture: (x, z, -y) */
        const double *v = m->v + 3 * i, *d = u + 3 * i;
        pos[3 * i] = v[0] + d[0], pos[3 * i + 1] = v[2] + d[2], pos[3 * i + 2] = -(v[1] + d[1]);
    }
    double vmax = 0;
    for (int e = 0; e < m->nt; e++) {
        vmax = fmax(vmax, vm[e]);
        const int *t = m->t + 4 * (size_t)e;
        double g[4][3];
        const int flip = fem_tet_grad(m->v, t, g) < 0; /* a negatively oriented element: faces the other way */
        for (int a = 0; a < 4; a++) {
            tet_face *f = &faces[4 * (size_t)e + a];
            for (int k = 0; k < 3; k++) f->node[k] = t[opp[a][flip ? 2 - k : k]];
            memcpy(f->key, f->node, sizeof f->key);
            for (int i = 0; i < 2; i++) /* sort the key's 3 nodes */
                for (int j = 0; j < 2 - i; j++)
                    if (f->key[j] > f->key[j + 1]) {
                        const int x = f->key[j];
                        f->key[j] = f->key[j + 1], f->key[j + 1] = x;
                    }
            f->elem = e;
        }
    }
    qsort(faces, nf, sizeof *faces, face_cmp);
    int nb = 0; /* the boundary: faces that belong to one element */
    for (size_t i = 0; i < nf;) {
        size_t j = i + 1;
        while (j < nf && face_cmp(&faces[i], &faces[j]) == 0) j++;
        if (j == i + 1) {
            memcpy(tri + 3 * (size_t)nb, faces[i].node, 3 * sizeof(int));
            stress_colour(vmax > 0 ? vm[faces[i].elem] / vmax : 0, col + 3 * (size_t)nb);
            nb++;
        }
        i = j;
    }
    const render_mesh r = {m->nv, nb, pos, tri, col};
    rc = render_png(path, &r, 1, size, err, len);
done:
    free(faces), free(pos), free(tri), free(col);
    return rc;
}

/* ---------------------------------------------------------------- the solve */
/* *K (f64, 3x3 blocks) replaced by its values rounded to f32. */
static sps_status to_single(sps_context ctx, sps_matrix *K)
{
    sps_matrix_info_t in;
    sps_status st = sps_matrix_info(*K, &in);
    if (st != SPS_OK) return st;
    const size_t nnz = (size_t)in.nnz, n = (size_t)in.rows; /* block rows */
    int *rp = malloc(sizeof(int) * (n + 1)), *col = malloc(sizeof(int) * (nnz + 1));
    double *v = malloc(sizeof(double) * (9 * nnz + 1));
    float *f = malloc(sizeof(float) * (9 * nnz + 1));
    sps_matrix S = NULL;
    st = rp && col && v && f ? sps_matrix_export_csr(*K, rp, col, v) : SPS_ERR_ALLOC;
    if (st == SPS_OK) {
        for (size_t k = 0; k < 9 * nnz; k++) f[k] = (float)v[k];
        st = sps_matrix_from_csr_entries(ctx, (sps_index)n, (sps_index)n, rp, col, f, sps_entry_block(3), SPS_F32, &S);
    }
    if (st == SPS_OK) {
        sps_matrix_destroy(*K);
        *K = S;
    }
    free(rp), free(col), free(v), free(f);
    return st;
}

/* f32 (single): the triplets summed in f64, then rounded, as on the GPU: K is built in f64
 * and converted to f32 by the library's host builder, which sums in double (sps_matrix_from_coo_entries
 * with f32 values would round each element's block first). */
static sps_status assemble_host(sps_context ctx, const fem_mesh *m, const unsigned char *clamp, double lambda,
                                double mu, sps_scalar t, sps_matrix *K)
{
    const size_t nq = 16 * (size_t)m->nt;
    int *row = malloc(sizeof(int) * (nq + 1)), *col = malloc(sizeof(int) * (nq + 1));
    double *val = malloc(sizeof(double) * 9 * (nq + 1));
    sps_status st = SPS_ERR_ALLOC;
    if (row && col && val) {
        fem_assemble(m, clamp, lambda, mu, row, col, val);
        st = sps_matrix_from_coo_entries(ctx, m->nv, m->nv, (int64_t)nq, row, col, val, sps_entry_block(3), SPS_F64,
                                         K);
    }
    free(row), free(col), free(val);
    if (st == SPS_OK && t != SPS_F64) st = to_single(ctx, K);
    return st;
}

/* One product K x (apps/common/timing.h), so that the assembly can be read as a count of
 * SpMVs; 0 when it cannot be measured. */
typedef struct {
    sps_operator op;
    sps_vector x, y;
} fem_product;
static sps_status product_once(void *arg)
{
    const fem_product *p = arg;
    return sps_operator_apply(p->op, SPS_OP_N, NULL, p->x, NULL, p->y);
}

/* A vector of t from n doubles (f32: rounded through scratch, n doubles' room), and back. */
static sps_status vec_from_host(sps_context ctx, sps_index n, sps_scalar t, const double *x, double *scratch,
                                sps_vector *v)
{
    if (t == SPS_F64) return sps_vector_from_host(ctx, n, t, x, v);
    float *f = (float *)scratch;
    for (sps_index i = 0; i < n; i++) f[i] = (float)x[i];
    return sps_vector_from_host(ctx, n, t, f, v);
}
static sps_status vec_get(sps_vector v, sps_scalar t, double *x)
{
    if (t == SPS_F64) return sps_vector_get(v, x);
    const sps_status st = sps_vector_get(v, x); /* n floats into the first half, widened from the end down */
    const float *f = (const float *)x;
    for (sps_index i = sps_vector_size(v) - 1; st == SPS_OK && i >= 0; i--) x[i] = (double)f[i];
    return st;
}

sps_status fem_solve(sps_context ctx, const fem_mesh *m, const fem_options *o, double *u, fem_report *rep)
{
    memset(rep, 0, sizeof *rep);
    const sps_scalar t = o->single ? SPS_F32 : SPS_F64;
    double lambda, mu;
    fem_lame(o->E, o->nu, &lambda, &mu);
    const sps_index N = 3 * (sps_index)m->nv;
    unsigned char *clamp = malloc((size_t)m->nv + 1);
    double *b = malloc(sizeof(double) * ((size_t)N + 1)), *y = malloc(sizeof(double) * ((size_t)N + 1));
    sps_matrix K = NULL;
    sps_precond P = NULL;
    sps_operator op = NULL;
    sps_solver s = NULL;
    sps_vector vb = NULL, vx = NULL, vy = NULL;
    sps_status st = SPS_ERR_ALLOC;
    if (!clamp || !b || !y) goto done;
    if (o->clamp) memcpy(clamp, o->clamp, (size_t)m->nv);
    else fem_clamp_x0(m, clamp);
    fem_tip_load(m, clamp, o->tip_load, b);
    fem_gravity_load(m, clamp, o->density, o->gravity, b);
    if (o->traction_tag >= 0) fem_traction(m, clamp, o->traction_tag, o->traction, b);
    if (o->body_force) fem_body_force(m, clamp, o->body_force, o->user, b);
    if (o->prescribed) fem_dirichlet_rhs(m, clamp, o->prescribed, lambda, mu, b);
    double t0 = now();
#ifdef FEM_HAVE_CUDA
    if (sps_context_backend(ctx) == SPS_BACKEND_CUDA) {
        rep->gpu_assembly = 1;
        st = fem_assemble_cuda(ctx, m, clamp, lambda, mu, t, &K, &rep->t_upload, rep->err, sizeof rep->err);
    } else
#endif
        st = assemble_host(ctx, m, clamp, lambda, mu, t, &K);
    if (st != SPS_OK) goto done;
    rep->t_assembly = now() - t0 - rep->t_upload;
    if (o->write_matrix && (st = sps_matrix_write_mtx_expanded(K, o->write_matrix)) != SPS_OK) goto done;
    sps_matrix_info_t info;
    if ((st = sps_matrix_info(K, &info)) != SPS_OK) goto done;
    rep->dofs = N;
    rep->nnz_blocks = (long long)info.nnz;
    t0 = now();
    if (strcmp(o->precond ? o->precond : "bjacobi", "none") &&
        (st = sps_precond_create_by_name(K, o->precond ? o->precond : "bjacobi", &P)) != SPS_OK)
        goto done;
    rep->t_setup = now() - t0;
    if ((st = sps_operator_from_matrix(K, &op)) != SPS_OK || (st = sps_solver_create(ctx, SPS_SOLVER_CG, &s)) != SPS_OK ||
        (st = sps_solver_set_operator(s, op)) != SPS_OK || (P && (st = sps_solver_set_precond(s, P)) != SPS_OK) ||
        (st = sps_solver_set_tolerances(s, o->rtol, 0.0, o->maxit)) != SPS_OK ||
        (st = vec_from_host(ctx, N, t, b, y, &vb)) != SPS_OK || (st = sps_vector_create(ctx, N, t, &vx)) != SPS_OK ||
        (st = sps_vector_create(ctx, N, t, &vy)) != SPS_OK)
        goto done;
    sps_result res;
    memset(&res, 0, sizeof res);
    t0 = now();
    st = sps_solver_solve(s, vb, vx, &res);
    rep->t_solve = now() - t0;
    rep->iterations = res.iterations;
    if (st != SPS_OK) goto done;
    /* the true residual and the tip deflection, on the host */
    if ((st = sps_operator_apply(op, SPS_OP_N, NULL, vx, NULL, vy)) != SPS_OK || (st = vec_get(vx, t, u)) != SPS_OK ||
        (st = vec_get(vy, t, y)) != SPS_OK)
        goto done;
    rep->t_spmv = app_time_median(ctx, product_once, &(fem_product){op, vb, vy});
    /* the sums of squares scaled by the largest |b_i| and |b_i - y_i|: loads near 1e160 and
       above (b, K u) overflow the squares, which made the ratio inf/inf = NaN or r/inf = 0 */
    double scale = 0, rr = 0, bb = 0, tip = 0;
    int ntip = 0;
    for (sps_index i = 0; i < N; i++) scale = fmax(scale, fmax(fabs(b[i]), fabs(b[i] - y[i])));
    for (sps_index i = 0; scale > 0 && i < N; i++) {
        const double ri = (b[i] - y[i]) / scale, bi = b[i] / scale;
        rr += ri * ri, bb += bi * bi;
    }
    rep->true_relative_residual = bb > 0 ? sqrt(rr / bb) : scale * sqrt(rr);
    for (int i = 0; i < m->nv; i++)
        if (m->L > 0 && at_tip(m, i)) tip += u[3 * (size_t)i + 2], ntip++;
    rep->tip_deflection = ntip ? tip / ntip : 0;
done:
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_vector_destroy(vy);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_precond_destroy(P);
    sps_matrix_destroy(K);
    free(clamp), free(b), free(y);
    return st;
}
