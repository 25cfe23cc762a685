/* spsolve-fem: a tetrahedron's stiffness blocks, shared by the host (fem.c) and the GPU
 * assembly (fem_cuda.cu, compiled without fused multiply-adds): the same arithmetic, so
 * the GPU's matrix equals the host's bit for bit. */
#ifndef FEM_MATH_H
#define FEM_MATH_H
#include <math.h>
#include <stddef.h>

#ifdef __CUDACC__
#define FEM_HD __host__ __device__
#else
#define FEM_HD
#endif

/* The gradients g[a] of the barycentric functions of tetrahedron t (nodes of v); returns
 * det J = 6 V signed (0: degenerate, g unset).  J = [p1-p0, p2-p0, p3-p0]: the rows of
 * J^-1, (e2 x e3, e3 x e1, e1 x e2) / det J, are the gradients of N1..N3; N0's is minus
 * their sum. */
static inline FEM_HD double fem_tet_grad(const double *v, const int *t, double g[4][3])
{
    const double *p0 = v + 3 * (size_t)t[0];
    double e[3][3], r[3][3];
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) e[a][c] = v[3 * (size_t)t[a + 1] + c] - p0[c];
    for (int a = 0; a < 3; a++) {
        const double *x = e[(a + 1) % 3], *y = e[(a + 2) % 3];
        r[a][0] = x[1] * y[2] - x[2] * y[1];
        r[a][1] = x[2] * y[0] - x[0] * y[2];
        r[a][2] = x[0] * y[1] - x[1] * y[0];
    }
    const double det = e[0][0] * r[0][0] + e[0][1] * r[0][1] + e[0][2] * r[0][2];
    if (det == 0) return 0;
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) g[a + 1][c] = r[a][c] / det;
    for (int c = 0; c < 3; c++) g[0][c] = -(g[1][c] + g[2][c] + g[3][c]);
    return det;
}

/* The area of triangle n (nodes of v): |(p1 - p0) x (p2 - p0)| / 2; *h, where not NULL, the
 * largest coordinate difference of its edges from p0 (the reader's degeneracy scale). */
static inline FEM_HD double fem_tri_area(const double *v, const int *n, double *h)
{
    double u[3], w[3], x[3], s = 0;
    for (int c = 0; c < 3; c++) {
        u[c] = v[3 * (size_t)n[1] + c] - v[3 * (size_t)n[0] + c];
        w[c] = v[3 * (size_t)n[2] + c] - v[3 * (size_t)n[0] + c];
        s = fmax(s, fmax(fabs(u[c]), fabs(w[c])));
    }
    x[0] = u[1] * w[2] - u[2] * w[1];
    x[1] = u[2] * w[0] - u[0] * w[2];
    x[2] = u[0] * w[1] - u[1] * w[0];
    if (h) *h = s;
    return 0.5 * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
}

/* Block (a, b) of the element stiffness, row-major into K:
 * V [lambda g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I] (seed-methods §4.2). */
static inline FEM_HD void fem_tet_block(const double g[4][3], double det, double lambda, double mu, int a, int b,
                                        double *K)
{
    const double V = fabs(det) / 6.0;
    const double dot = g[a][0] * g[b][0] + g[a][1] * g[b][1] + g[a][2] * g[b][2];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++)
            K[3 * r + c] = V * (lambda * g[a][r] * g[b][c] + mu * g[b][r] * g[a][c] + (r == c ? mu * dot : 0.0));
}

/* Symmetric elimination of clamped nodes in a block (fem.h fem_assemble): member r of
 * block (na, nb) as assembled. */
static inline FEM_HD double fem_clamped(double k, int fixed, int same, int r) { return !fixed || (same && r % 4 == 0) ? k : 0.0; }
#endif
