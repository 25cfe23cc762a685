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

/* What a face's blocks need (spin_face_prep): its edges and the coefficients
 * a = -1 / (4 A), b = rho / 6, c = A rho^2 / 9 of its area A and density rho. */
typedef struct {
    double e[3][3];
    double a, b, c;
} spin_face;
static inline SPIN_HD spin_face spin_face_prep(const double *v, const int *c, double rho)
{
    spin_face F;
    const double A = spin_face_edges(v, c, F.e);
    F.a = -1.0 / (4.0 * A), F.b = rho / 6.0, F.c = A * rho * rho / 9.0;
    return F;
}
/* Block (i, j) of a prepared face in E = (D - P_rho)^H M (D - P_rho), for corners i, j:
 * a e_i e_j + b (e_j - e_i) + c (seed-methods.md §3, the reference's assembly). */
static inline SPIN_HD quat spin_face_block_of(const spin_face *F, int i, int j)
{
    const quat ei = qimag(F->e[i]), ej = qimag(F->e[j]);
    quat r = qadd(qscale(F->a, qmul(ei, ej)), qscale(F->b, qadd(ej, qscale(-1.0, ei))));
    r.w += F->c;
    return r;
}
/* Block (i, j) of face c (density rho): the two above. */
static inline SPIN_HD quat spin_face_block(const double *v, const int *c, double rho, int i, int j)
{
    const spin_face F = spin_face_prep(v, c, rho);
    return spin_face_block_of(&F, i, j);
}

/* cot of the angle between u and v: (u.v) / |u x v| */
static inline SPIN_HD double spin_cot(const double *u, const double *v)
{
    double c[3];
    cross3(u, v, c);
    return dot3(u, v) / sqrt(dot3(c, c));
}

/* The image (w x h bytes, pixel (x, y) at pix[x + y w]) at integer (x, y) clamped to its
 * edges, in [0, 1]; and bilinearly at texture coordinate (u, v): (x, y) = (u w, v h), no
 * half-pixel shift, no v flip (seed-methods §3.3). */
static inline SPIN_HD double spin_pixel(const unsigned char *pix, int w, int h, int x, int y)
{
    x = x < 0 ? 0 : x >= w ? w - 1 : x;
    y = y < 0 ? 0 : y >= h ? h - 1 : y;
    return pix[(size_t)x + (size_t)y * (size_t)w] / 255.0;
}
/* x clamped to [-1, n] in double before any conversion to int ((int) of a value past INT_MAX
 * is undefined, as of NaN, which goes to -1): outside that range both neighbours clamp to
 * the same edge pixel anyway, so the sample is the edge's. */
static inline SPIN_HD double spin_clamp_coord(double x, int n) { return !(x >= -1.0) ? -1.0 : x > n ? (double)n : x; }
static inline SPIN_HD double spin_sample(const unsigned char *pix, int w, int h, double u, double v)
{
    const double x = spin_clamp_coord(u * w, w), y = spin_clamp_coord(v * h, h);
    const int x0 = (int)floor(x), y0 = (int)floor(y);
    const double s = x - x0, t = y - y0;
    return (1 - s) * (1 - t) * spin_pixel(pix, w, h, x0, y0) + s * (1 - t) * spin_pixel(pix, w, h, x0 + 1, y0) +
           (1 - s) * t * spin_pixel(pix, w, h, x0, y0 + 1) + s * t * spin_pixel(pix, w, h, x0 + 1, y0 + 1);
}
/* rho of face f: the mean of its 3 corners' samples mapped by 2 (mean - 0.5) scale; 0 when a
 * corner has no texture coordinate (ft < 0). */
static inline SPIN_HD double spin_face_rho(const int *ft, const double *vt, const unsigned char *pix, int w, int h,
                                           double scale, int f)
{
    double sum = 0;
    for (int c = 0; c < 3; c++) {
        const int t = ft[3 * (size_t)f + c];
        if (t < 0) return 0.0;
        sum += spin_sample(pix, w, h, vt[2 * (size_t)t], vt[2 * (size_t)t + 1]);
    }
    return 2.0 * (sum / 3.0 - 0.5) * scale;
}

/* Corner c of face vi (positions v, eigenvector lam: 4 reals a vertex) in the Poisson step
 * (seed-methods §3.1): the opposite edge (i1, i2) = (vi[c+1], vi[c+2]) gets the cotan weight
 * h = cot(angle at c) / 2, L's triplets (i1, i1, h), (i2, i2, h), (i1, i2, -h), (i2, i1, -h)
 * in that order, and the edge sorted by index (a < b), e = p_b - p_a, gives omega_a -= h et,
 * omega_b += h et with et = (1/3) la* e la + (1/6) la* e lb + (1/6) lb* e la + (1/3) lb* e lb. */
typedef struct {
    int i1, i2, a, b;
    double h;
    quat et;
} spin_corner;
static inline SPIN_HD spin_corner spin_corner_terms(const double *v, const double *lam, const int *vi, int c)
{
    spin_corner k;
    const int i0 = vi[c];
    k.i1 = vi[(c + 1) % 3], k.i2 = vi[(c + 2) % 3];
    double u[3], w[3], e[3];
    sub3(v + 3 * (size_t)k.i1, v + 3 * (size_t)i0, u);
    sub3(v + 3 * (size_t)k.i2, v + 3 * (size_t)i0, w);
    k.h = 0.5 * spin_cot(u, w);
    k.a = k.i1 < k.i2 ? k.i1 : k.i2, k.b = k.i1 < k.i2 ? k.i2 : k.i1;
    sub3(v + 3 * (size_t)k.b, v + 3 * (size_t)k.a, e);
    const double *pa = lam + 4 * (size_t)k.a, *pb = lam + 4 * (size_t)k.b;
    const quat E_ = qimag(e), la = qmake(pa[0], pa[1], pa[2], pa[3]), lb = qmake(pb[0], pb[1], pb[2], pb[3]);
    quat et = qscale(1.0 / 3.0, qmul(qmul(qconj(la), E_), la));
    et = qadd(et, qscale(1.0 / 6.0, qmul(qmul(qconj(la), E_), lb)));
    et = qadd(et, qscale(1.0 / 6.0, qmul(qmul(qconj(lb), E_), la)));
    k.et = qadd(et, qscale(1.0 / 3.0, qmul(qmul(qconj(lb), E_), lb)));
    return k;
}
#endif
