/* spsolve-fem: P1 (linear tetrahedral) linear elasticity with 3x3-block matrices
 * (issue 22; formulas: ../shared/research/seed-methods.md §4), on libspsolve's public
 * API: a Gmsh mesh or the built-in beam (6 tetrahedra a cell), assembly on the host and
 * on the GPU into the library's 3x3 block format, clamped nodes eliminated symmetrically,
 * tip load, tractions and body forces, CG with block-Jacobi (or Jacobi, or none), the tip
 * deflection, von Mises stresses, VTU and PNG output. */
#ifndef FEM_FEM_H
#define FEM_FEM_H
#include <spsolve/spsolve.h>

#include <stddef.h>
#ifdef __cplusplus
extern "C" {
#endif

#define FEM_MAX_GROUPS 64
typedef struct {
    int nv, nt;
    double *v;      /* 3 nv node coordinates */
    int *t;         /* 4 nt node indices a tetrahedron */
    double L, W, H; /* the beam's box (generator), else 0 */
    int ntri;       /* boundary triangles (a Gmsh file's type-2 elements) */
    int *tri;       /* 3 ntri node indices */
    int *tri_tag;   /* ntri physical tags (a triangle in k groups: k triangles, one a tag) */
    int ngroups;    /* physical names: group g is tag group_tag[g] of dimension group_dim[g], called group_name[g] */
    int group_tag[FEM_MAX_GROUPS];
    int group_dim[FEM_MAX_GROUPS];
    char group_name[FEM_MAX_GROUPS][256];
    int skipped;    /* elements of other types in the file (lines, quads, points, ...), and triangles on
                       nodes of no tetrahedron */
    int duplicates; /* elements dropped as repeats (MSH2 lists an element once per physical group) */
} fem_mesh;

/** A Gmsh ASCII mesh, format 4.1 or 2.2: $MeshFormat, $PhysicalNames (optional, at most
 *  FEM_MAX_GROUPS names of at most 255 characters), $Entities (4.1), $Nodes, $Elements;
 *  linear tetrahedra (type 4) are the mesh, triangles (type 2) keep their physical tags
 *  (each: a 4.1 surface in k groups gives its triangles k times) for --clamp / --traction,
 *  other element types are counted and skipped.  Repeated elements (a tetrahedron's node
 *  set, a triangle's node set and tag) are dropped and counted in duplicates; the nodes are
 *  renumbered to those the tetrahedra use (a triangle on another node is skipped).
 *  Node tags may have gaps.  Errors name file:line: a missing section, a malformed line,
 *  an unknown node, a degenerate or inverted tetrahedron.  Returns 0, or -1 with err. */
int fem_gmsh_read(const char *path, fem_mesh *m, char *err, size_t len);
/** A physical group of triangles' tag from its name (a group of dimension 2) or number; -1
 *  when no triangle carries it. */
int fem_group(const fem_mesh *m, const char *name);
/** Clamp the nodes of the triangles of physical tag `tag`. */
void fem_clamp_group(const fem_mesh *m, int tag, unsigned char *clamp);
/** How many tetrahedra lie in parts of the mesh (joined through shared nodes) without a
 *  clamped node, where K is singular; *first a node of the first of them (-1: none). */
int fem_unheld(const fem_mesh *m, const unsigned char *clamp, int *first);
/** b += t A_T / 3 on each node of the triangles of tag `tag` (t a traction, force per
 *  area), clamped nodes left out. */
void fem_traction(const fem_mesh *m, const unsigned char *clamp, int tag, const double *t, double *b);

/** The beam [0,L] x [0,W] x [0,H] in nx x ny x nz cells, 6 tetrahedra a cell (Kuhn's
 *  split along the cell's main diagonal: conforming across cells).  Returns 0, or -1
 *  with err set. */
int fem_beam(double L, double W, double H, int nx, int ny, int nz, fem_mesh *m, char *err, size_t len);
void fem_mesh_free(fem_mesh *m);

typedef struct {
    double E, nu;       /* Young's modulus, Poisson's ratio */
    double tip_load;    /* total force P in -z spread over the face x = L (consistent nodal loads) */
    double density;     /* rho of the body force rho g (gravity below) */
    double gravity[3];  /* g: a body force rho g, rho g V / 4 on each node of an element */
    double rtol;
    int maxit;
    int single;          /* K, b and u in f32 (assembled in f64, then rounded); 0: f64 */
    const char *precond; /* sps_precond_create_by_name: bjacobi (default), jacobi, none */
    const unsigned char *clamp; /* nv flags: the nodes whose displacement is prescribed; NULL: those on x = 0 */
    const double *prescribed;   /* 3 nv: their displacements (others ignored); NULL: zero */
    int traction_tag;           /* a traction on the triangles of this physical tag (fem_traction); -1: none */
    double traction[3];
    /* a body force f(x) per volume (besides gravity): its loads integral f N_a over each
     * element by a 4-point rule exact for quadratics; NULL: none */
    void (*body_force)(const double *x, double *f, void *user);
    void *user;
    const char *write_matrix; /* non-NULL: K (its scalar expansion) written there as Matrix Market */
} fem_options;

typedef struct {
    int dofs, iterations;
    long long nnz_blocks;
    double tip_deflection;          /* mean z-displacement of the nodes on x = L */
    double true_relative_residual;  /* ||b - K u|| / ||b||, recomputed */
    double t_upload;                /* GPU: the mesh copied to the device (not in t_assembly) */
    double t_assembly, t_setup, t_solve;
    double t_spmv;                  /* one product K x, the mean of repeated ones after the solve */
    int gpu_assembly;
    char err[256]; /* what failed in the app's own GPU code */
} fem_report;

/** The 16 3x3 blocks of tetrahedron e, block (a, b) at k[9 (4 a + b)] row-major:
 *  V [lambda g_a g_b^T + mu g_b g_a^T + mu (g_a . g_b) I] (seed-methods §4.2).
 *  Returns the signed 6 V (0: degenerate). */
double fem_tet_blocks(const double *v, const int *t, double lambda, double mu, double *k);
/** The triplets of K with the clamped nodes (clamp[a] != 0) eliminated symmetrically:
 *  blocks coupling a clamped node to another are zero (kept, so the pattern stays), a
 *  clamped node's diagonal block keeps its diagonal (the matrix's own scale).  16 nt
 *  triplets of 9 values. */
void fem_assemble(const fem_mesh *m, const unsigned char *clamp, double lambda, double mu, int *row, int *col,
                  double *val);
/** Nodes with x <= tol: clamped. */
void fem_clamp_x0(const fem_mesh *m, unsigned char *clamp);
/** The load vector (3 nv): a total force P in -z over the boundary face x = L (each of
 *  its triangles' area share, t A_T / 3 a node), zero on clamped nodes. */
void fem_tip_load(const fem_mesh *m, const unsigned char *clamp, double P, double *b);

/** The right-hand side of prescribed displacements g on the clamped nodes, after the
 *  symmetric elimination of fem_assemble: b_a -= K_ab g_b for a free, b clamped, and
 *  b_j = K_jj g_j (the kept diagonal) for a clamped j, so the solve returns g there. */
void fem_dirichlet_rhs(const fem_mesh *m, const unsigned char *clamp, const double *g, double lambda, double mu,
                       double *b);
/** b += rho g V / 4 on each node of every element (zero on clamped nodes). */
void fem_gravity_load(const fem_mesh *m, const unsigned char *clamp, double rho, const double *g, double *b);
/** b += the integral of f N_a over each element (4-point rule, degree 2; clamped nodes left out). */
void fem_body_force(const fem_mesh *m, const unsigned char *clamp, void (*f)(const double *, double *, void *),
                    void *user, double *b);
/** The L2 norm of u_h - u over the mesh (u_h linear in each element from the nodal u_h,
 *  u a function; a 4-point rule a element), and of u: the error and the scale. */
void fem_l2_error(const fem_mesh *m, const double *uh, void (*u)(const double *, double *, void *), void *user,
                  double *err, double *norm);
/** The von Mises stress of each element (nt values) from the displacements u (3 nv):
 *  sigma = lambda tr(eps) I + 2 mu eps, eps the element's constant strain. */
void fem_von_mises(const fem_mesh *m, const double *u, double lambda, double mu, double *vm);
/** The mesh, point data `displacement` (u) and cell data `von_mises` (vm) as a VTK XML
 *  unstructured grid (ASCII), written whole or not at all (sps_outfile, spsolve/file.h: a
 *  symbolic link is written through, a device written into, a directory refused).
 *  Returns 0, or -1 with err set. */
int fem_write_vtu(const char *path, const fem_mesh *m, const double *u, const double *vm, char *err, size_t len);
/** --png: the boundary of the mesh displaced by u (3 nv), each face in the colour of its
 *  element's von Mises stress vm (blue low, red high), flat-shaded into a size x size
 *  image at path (apps/common/render.h).  Returns 0, or -1 with err set. */
int fem_render_png(const char *path, const fem_mesh *m, const double *u, const double *vm, int size, char *err,
                   size_t len);
/** Lame's lambda and mu of E and nu. */
void fem_lame(double E, double nu, double *lambda, double *mu);

/** Assemble, solve, report; u (3 nv) the displacements. */
sps_status fem_solve(sps_context ctx, const fem_mesh *m, const fem_options *o, double *u, fem_report *rep);

#ifdef FEM_HAVE_CUDA
/** K assembled on ctx's GPU (fem_cuda.cu): the pattern from vertex adjacency and each block row
 *  summed by its node's thread, built by sps_matrix_from_csr_entries_device; equal to the host
 *  assembly bit for bit.  t = SPS_F32: the sums rounded to f32 at the end.  *t_upload: the seconds
 *  spent copying the mesh to the device. */
sps_status fem_assemble_cuda(sps_context ctx, const fem_mesh *m, const unsigned char *clamp, double lambda,
                             double mu, sps_scalar t, sps_matrix *K, double *t_upload, char *err, size_t len);
#endif
#ifdef __cplusplus
}
#endif
#endif
