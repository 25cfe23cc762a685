/* spsolve-spin: the arithmetic shared by the host (spin.c) and the GPU assembly
 * (spin_cuda.cu): quaternions (w, x, y, z), 3-vectors, and the 9 quaternion blocks a
 * face contributes to E.  One source for both, so that the GPU's E equals the host's
 * bit for bit (spin_cuda.cu is compiled without contracting a * b + c into fused
 * multiply-adds, which the host's x86-64 code has none of). */
#ifndef SPIN_MATH_H
#define SPIN_MATH_H
#include <math.h>

#ifdef __CUDACC__
#define SPIN_HD __host__ __device__
#else
#define SPIN_HD
#endif

typedef struct {
    double w, x, y, z;
} quat;

static inline SPIN_HD quat qmake(double w, double x, double y, double z)
{
    quat q;
    q.w = w;
    q.x = x;
    q.y = y;
    q.z = z;
    return q;
}
static inline SPIN_HD quat qmul(quat a, quat b)
{
    return qmake(a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                 a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w);
}
static inline SPIN_HD quat qconj(quat a) { return qmake(a.w, -a.x, -a.y, -a.z); }
static inline SPIN_HD quat qadd(quat a, quat b) { return qmake(a.w + b.w, a.x + b.x, a.y + b.y, a.z + b.z); }
static inline SPIN_HD quat qscale(double s, quat a) { return qmake(s * a.w, s * a.x, s * a.y, s * a.z); }
static inline SPIN_HD quat qimag(const double *p) { return qmake(0.0, p[0], p[1], p[2]); }

static inline SPIN_HD void sub3(const double *a, const double *b, double *o)
{
    o[0] = a[0] - b[0];
    o[1] = a[1] - b[1];
    o[2] = a[2] - b[2];
}
static inline SPIN_HD double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline SPIN_HD void cross3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1];
    o[1] = a[2] * b[0] - a[0] * b[2];
    o[2] = a[0] * b[1] - a[1] * b[0];
}

/* Face (corners c0, c1, c2 of positions v): its area, and its edges e_i = p_{i+2} - p_{i+1}
 * (opposite corner i). */
static inline SPIN_HD double spin_face_edges(const double *v, const int *c, double e[3][3])
{
    const double *p[3] = {v + 3 * (long)c[0], v + 3 * (long)c[1], v + 3 * (long)c[2]};
    for (int i = 0; i < 3; i++) sub3(p[(i + 2) % 3], p[(i + 1) % 3], e[i]);
    double x[3];
    cross3(e[1], e[2], x); /* e1 x e2 = (p0 - p2) x (p1 - p0): twice the area in length */
    return 0.5 * sqrt(dot3(x, x));
}

/* Block (i, j) of face c (density rho) in E = (D - P_rho)^H M (D - P_rho), for corners i,
 * j: a e_i e_j + b (e_j - e_i) + c with a = -1 / (4 A), b = rho / 6, c = A rho^2 / 9
 * (seed-methods.md §3, the reference's assembly). */
static inline SPIN_HD quat spin_face_block(const double *v, const int *c, double rho, int i, int j)
{
    double e[3][3];
    const double A = spin_face_edges(v, c, e), a = -1.0 / (4.0 * A), b = rho / 6.0, cc = A * rho * rho / 9.0;
    const quat ei = qimag(e[i]), ej = qimag(e[j]);
    quat r = qadd(qscale(a, qmul(ei, ej)), qscale(b, qadd(ej, qscale(-1.0, ei))));
    r.w += cc;
    return r;
}
#endif
