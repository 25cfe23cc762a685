/* spsolve-spin: the spin transformation of a surface (Crane, Pinkall, Schröder 2011),
 * step for step as the reference SpinXForm v0.1 (../shared/research/seed-methods.md §3),
 * on libspsolve's public API: E = (D - P_rho)^H M (D - P_rho) as a quaternion matrix,
 * inverse iteration by CG on it, the cotangent-Laplacian Poisson solve, normalisation. */
#ifndef SPIN_SPIN_H
#define SPIN_SPIN_H
#include "mesh.h"

#include <spsolve/spsolve.h>

#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double scale;      /* rho = 2 (mean - 0.5) scale; the reference's 5 */
    int iterations;    /* inverse iterations; the reference's 3 */
    double rtol;       /* CG's relative tolerance on each solve */
    int maxit;
    const char *write_matrix; /* non-NULL: write E there (quaternion Matrix Market extension) */
    int reorder;       /* renumber the vertices breadth-first for the computation (output in input order) */
    const char *solver; /* the E solves' Krylov method (sps_solver_create_by_name: cg, bicgstab, gmres); NULL: cg */
    int norm_inf;      /* every solve stops on max |r_i| <= rtol max |b_i| (the reference's rule, with rtol 1e-7;
                          solver option norm = inf: CG and BiCGSTAB); 0: the 2-norms */
} spin_options;

/* The most inverse iterations the program takes (--iterations 1..100); the report records
 * each of them (a caller asking for more gets the first SPIN_MAX_ITERATIONS). */
#define SPIN_MAX_ITERATIONS 100

typedef struct {
    int nnz_e;                  /* quaternion blocks of E */
    int its[SPIN_MAX_ITERATIONS]; /* CG iterations of each E solve */
    double relres[SPIN_MAX_ITERATIONS];
    int poisson_its[3];         /* CG iterations of the x, y, z Poisson solves */
    double poisson_relres[3];   /* their relative residuals (the solver's) */
    int components;             /* connected components of the mesh, each transformed on its own */
    int unconverged;            /* solves that ended above rtol (maxit, or stagnation), their iterate kept
                                   (as the reference does): the caller says so */
    double rayleigh;            /* x^H E x / x^H x after the iterations */
    double t_rho, t_assemble, t_eigen, t_poisson;
    double t_reorder;           /* the breadth-first renumbering (s; 0 without it) */
    double t_assemble_build;    /* of t_assemble: the pattern, the blocks and the matrix, mesh already in place (s) */
    double t_upload;            /* GPU: the mesh, texture coordinates and image copied to the device (s) */
    double t_assemble_parts[3]; /* GPU: of t_assemble_build, the stream's time of E's pattern, values and matrix (s) */
    double t_solve[SPIN_MAX_ITERATIONS]; /* each E solve (s) */
    int gpu_assembly;           /* E was assembled on the GPU */
    int rho_zero;               /* rho is 0 on every face (no texture coordinates, scale 0): no curvature
                                   change, so pos is the input normalised; E built (and written), nothing
                                   solved (b = 1 lies in E's null space then: the solves would break down) */
    char err[256];              /* what failed in the app's own code: its GPU calls, a vertex in no face
                                   ("" when nothing did) */
} spin_report;

/** rho per face (nf values) from the image, sampled bilinearly at each corner's texture
 *  coordinate (no v flip, no half-pixel shift), the mean of the 3 corners mapped by
 *  2 (mean - 0.5) scale.  Faces without texture coordinates get 0.  */
void spin_rho(const spin_mesh *m, const spin_image *im, double scale, double *rho);
/** E as a quaternion COO (row, col, 4 values each) into arrays of 9 nf entries. */
void spin_assemble(const spin_mesh *m, const double *rho, int *row, int *col, double *val);
/** The whole transformation: new positions (3 nv) into pos.  Returns SPS_OK or the
 *  failing status, with ctx's message (rep->err where the app's own code failed: a vertex
 *  in no face, SPS_ERR_ARG; spin_mesh_drop_unused removes those).  rho 0 on every face:
 *  the input normalised, rep->rho_zero set. */
sps_status spin_transform(sps_context ctx, const spin_mesh *m, const spin_image *im, const spin_options *o,
                          double *pos, spin_report *rep);
/** --png: positions a and b (3 nv each, faces of m) side by side in a 2 size x size image. */
int spin_render_png(const char *path, const spin_mesh *m, const double *a, const double *b, int size, char *err,
                    size_t errlen);
/** The Poisson step's inputs on the host (the oracle of spin_gpu_poisson): L's triplets
 *  (12 nf into lr, lc, lv: each corner's 4 in spin_corner_terms' order) and omega (4 nv,
 *  zeroed here) from the eigenvector lam (4 nv). */
void spin_laplacian_omega(const spin_mesh *m, const double *lam, int *lr, int *lc, double *lv, double *om);
#ifdef SPIN_HAVE_CUDA
/** The GPU's phases (spin_cuda.cu), on ctx's device: the mesh, texture coordinates and
 *  image uploaded once by spin_gpu_create; rho, E, L and omega computed there, each equal
 *  to the host's bit for bit.  A failure of the app's own CUDA calls is SPS_ERR_DEVICE (or
 *  SPS_ERR_ALLOC) with err (kept by the object) saying what. */
typedef struct spin_gpu spin_gpu;
sps_status spin_gpu_create(sps_context ctx, const spin_mesh *m, const spin_image *im, spin_gpu **g, char *err,
                           size_t len);
void spin_gpu_destroy(spin_gpu *g);
/** rho on the device (spin_rho's values); rho non-NULL: also copied there (nf). */
sps_status spin_gpu_rho(spin_gpu *g, double scale, double *rho);
/** E from the device's rho, row by row (the host assembly's sums in its order).  *t_build: seconds;
 *  parts non-NULL: the stream's time (CUDA events, s) of the pattern, the values and the matrix. */
sps_status spin_gpu_assemble(spin_gpu *g, sps_matrix *E, double *t_build, double *parts);
/** L (scalar csr, E's pattern) and omega's x, y, z into three new vectors of nv, from lam
 *  (4 nv reals in device memory, AoS).  om non-NULL: omega (4 nv) copied there. */
sps_status spin_gpu_poisson(spin_gpu *g, const double *lam, sps_matrix *L, sps_vector comp[3], double *om);
#endif
#ifdef __cplusplus
}
#endif
#endif
