/* spsolve-fem (apps/fem, issue 22):
 *   - an element's blocks annihilate the six rigid-body modes (translations, rotations);
 *   - the unconstrained assembled matrix does too, ||K r|| <= 1e-12 ||K|| ||r||, and is
 *     symmetric (block (b, a) the transpose of (a, b));
 *   - the cantilever (L = 10, W = H = 1, E = 1000, nu = 0.3, P = 1): the tip deflection
 *     approaches Timoshenko's P L^3 / (3 E I) + P L / (kappa G A) = 4.0312 from below,
 *     monotonically, on 20x2x2, 40x4x4 and 80x8x8 cells (on the GPU 40x4x4, 80x8x8 and
 *     160x16x16), the finest within 8 %, and the
 *     true residual is the solver's;
 *   - on the GPU (where there is one) the same solve, and K assembled there equal to the
 *     host's bit for bit;
 *   - gravity alone against Timoshenko's line load (within 10 %, below);
 *   - the patch test: a linear field prescribed on a box's boundary is reproduced inside;
 *   - a manufactured field on the unit cube converges as h^2 in L2 (4^3, 8^3, 16^3 cells);
 *   - Gmsh 2.2 and 4.1 files of the beam (clamp and traction by physical group, node tags
 *     with gaps, line elements skipped) solve as the generated beam; malformed files are
 *     refused naming file:line (version, section order, missing section, a short node
 *     line, an unknown node, a degenerate and an inverted tetrahedron, 4.1 element blocks
 *     beyond or short of their count, a second $Entities, a count wrapping a size, a
 *     physical tag beyond an int, ntags overflowing);
 *   - the same beam with its elements in two groups each (2.2 repeating them, 4.1 naming
 *     both on a surface's line, over 4096 characters) and a node of no tetrahedron;
 *   - through a FIFO: a beam past 4096 nodes and tetrahedra reads as from a file; counts
 *     declaring more than the pipe holds are refused where it ends, not allocated first;
 *   - small meshes: an element of an unread type of 125 nodes skipped, a tetrahedron of
 *     70 tags refused; repeated elements dropped, names resolving only to groups of
 *     triangles, a node of no tetrahedron, names of 255 characters and FEM_MAX_GROUPS;
 *   - -o: the VTK XML grid's arrays have their sizes; a directory is not replaced;
 *   - a beam of no cells is refused with a message.
 * Ends "N passed, M failed". */
#define _POSIX_C_SOURCE 200809L
#define _XOPEN_SOURCE 700 /* M_PI */
#include "fem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_check.h"

/* rigid mode k at point p: translations, then rotations (-y, x, 0), (0, -z, y), (z, 0, -x) */
static void mode(int k, const double *p, double *r)
{
    static const double z3[3] = {0, 0, 0};
    memcpy(r, z3, sizeof z3);
    if (k < 3) r[k] = 1;
    else if (k == 3) r[0] = -p[1], r[1] = p[0];
    else if (k == 4) r[1] = -p[2], r[2] = p[1];
    else r[0] = p[2], r[2] = -p[0];
}

static void test_element(void)
{
    const double v[12] = {0.1, 0.2, 0.0, 1.3, 0.1, 0.2, 0.2, 1.1, 0.3, 0.4, 0.3, 0.9};
    const int t[4] = {0, 1, 2, 3};
    double k[144];
    CHECK(fem_tet_blocks(v, t, 577.0, 384.6, k) != 0, "a regular tetrahedron is not degenerate");
    double worst = 0, scale = 0;
    for (int i = 0; i < 144; i++) scale = fmax(scale, fabs(k[i]));
    for (int md = 0; md < 6; md++)
        for (int a = 0; a < 4; a++)
            for (int r = 0; r < 3; r++) {
                double s = 0;
                for (int b = 0; b < 4; b++) {
                    double u[3];
                    mode(md, v + 3 * b, u);
                    for (int c = 0; c < 3; c++) s += k[9 * (4 * a + b) + 3 * r + c] * u[c];
                }
                worst = fmax(worst, fabs(s));
            }
    CHECK(worst <= 1e-12 * scale, "element blocks times rigid modes: %.3g (scale %.3g)", worst, scale);
}

static void test_rigid_modes(sps_context ctx)
{
    fem_mesh m;
    char err[256];
    if (fem_beam(2, 1, 1, 4, 2, 2, &m, err, sizeof err)) {
        CHECK(0, "beam: %s", err);
        return;
    }
    const size_t nq = 16 * (size_t)m.nt;
    int *row = malloc(sizeof(int) * nq), *col = malloc(sizeof(int) * nq);
    double *val = malloc(sizeof(double) * 9 * nq);
    unsigned char *free_nodes = calloc((size_t)m.nv, 1); /* nothing clamped */
    fem_assemble(&m, free_nodes, 577.0, 384.6, row, col, val);
    sps_matrix K = NULL;
    CHECK(sps_matrix_from_coo_entries(ctx, m.nv, m.nv, (int64_t)nq, row, col, val, sps_entry_block(3), SPS_F64, &K) ==
              SPS_OK,
          "unconstrained K: %s", sps_context_error(ctx));
    const int N = 3 * m.nv;
    int *rp = malloc(sizeof(int) * (m.nv + 1)), *cc = malloc(sizeof(int) * nq);
    double *kv = malloc(sizeof(double) * 9 * nq), *x = malloc(sizeof(double) * N), *y = calloc((size_t)N, sizeof(double));
    if (K && sps_matrix_export_csr(K, rp, cc, kv) == SPS_OK) {
        double kmax = 0, asym = 0;
        for (int a = 0; a < m.nv; a++)
            for (int q = rp[a]; q < rp[a + 1]; q++) {
                for (int r = 0; r < 9; r++) kmax = fmax(kmax, fabs(kv[9 * q + r]));
                const int b = cc[q]; /* the block (b, a): the transpose of (a, b) */
                for (int p2 = rp[b]; p2 < rp[b + 1]; p2++)
                    if (cc[p2] == a)
                        for (int r = 0; r < 3; r++)
                            for (int c = 0; c < 3; c++)
                                asym = fmax(asym, fabs(kv[9 * q + 3 * r + c] - kv[9 * p2 + 3 * c + r]));
            }
        CHECK(asym <= 1e-13 * kmax, "K symmetric: off by %.3g (scale %.3g)", asym, kmax);
        for (int md = 0; md < 6; md++) {
            for (int i = 0; i < m.nv; i++) mode(md, m.v + 3 * i, x + 3 * i);
            double worst = 0, xn = 0;
            for (int i = 0; i < N; i++) xn = fmax(xn, fabs(x[i]));
            for (int a = 0; a < m.nv; a++)
                for (int r = 0; r < 3; r++) {
                    double s = 0;
                    for (int q = rp[a]; q < rp[a + 1]; q++)
                        for (int c = 0; c < 3; c++) s += kv[9 * q + 3 * r + c] * x[3 * cc[q] + c];
                    worst = fmax(worst, fabs(s));
                }
            CHECK(worst <= 1e-12 * kmax * xn * 30, "rigid mode %d in the kernel: |K r| = %.3g (|K| %.3g)", md, worst,
                  kmax);
        }
    } else {
        CHECK(0, "export: %s", sps_context_error(ctx));
    }
    sps_matrix_destroy(K);
    free(row), free(col), free(val), free(free_nodes), free(rp), free(cc), free(kv), free(x), free(y);
    fem_mesh_free(&m);
}

/* Three refinements of the beam, k x k/10 x k/10 cells for k = c, 2c, 4c. */
static void test_cantilever(sps_context ctx, const char *where, int c)
{
    const double E = 1000, nu = 0.3, P = 1, L = 10, G = E / (2 * (1 + nu));
    const double timo = P * L * L * L / (3 * E / 12.0) + P * L / (5.0 / 6.0 * G);
    fem_options o = {.E = E, .nu = nu, .tip_load = P, .rtol = 1e-9, .maxit = 100000, .precond = "bjacobi"};
    const int sizes[3][3] = {{c, c / 10, c / 10}, {2 * c, c / 5, c / 5}, {4 * c, 2 * c / 5, 2 * c / 5}};
    double d[3] = {0, 0, 0};
    for (int s = 0; s < 3; s++) {
        fem_mesh m;
        char err[256];
        if (fem_beam(L, 1, 1, sizes[s][0], sizes[s][1], sizes[s][2], &m, err, sizeof err)) {
            CHECK(0, "beam: %s", err);
            return;
        }
        double *u = malloc(sizeof(double) * 3 * (size_t)m.nv);
        fem_report rep;
        const sps_status st = fem_solve(ctx, &m, &o, u, &rep);
        CHECK(st == SPS_OK, "%s cantilever %dx%dx%d: %s %s", where, sizes[s][0], sizes[s][1], sizes[s][2], rep.err,
              sps_context_error(ctx));
        d[s] = -rep.tip_deflection;
        CHECK(rep.true_relative_residual <= 1e-8, "%s: true relative residual %.3g", where, rep.true_relative_residual);
        printf("%s cantilever %dx%dx%d: %d DOFs, %d CG iterations, tip %.6f (Timoshenko %.4f)\n", where, sizes[s][0],
               sizes[s][1], sizes[s][2], rep.dofs, rep.iterations, d[s], timo);
        free(u);
        fem_mesh_free(&m);
    }
    CHECK(0 < d[0] && d[0] < d[1] && d[1] < d[2] && d[2] < timo && d[2] - d[1] < d[1] - d[0],
          "%s: the tip deflection approaches %.4f from below, monotonically: %.4f %.4f %.4f", where, timo, d[0], d[1],
          d[2]);
    CHECK(fabs(d[2] - timo) <= 0.08 * timo, "%s: %dx%dx%d within 8 %% of Timoshenko: %.4f vs %.4f", where,
          sizes[2][0], sizes[2][1], sizes[2][2], d[2], timo);
}

/* Gravity alone (rho g = -1 in z, a line load q = 1): below Timoshenko's
 * q L^4 / (8 E I) + q L^2 / (2 kappa G A) = 15.156, within 10 % on 80x8x8. */
static void test_gravity(sps_context ctx)
{
    const double E = 1000, nu = 0.3, L = 10, G = E / (2 * (1 + nu));
    const double want = L * L * L * L / (8 * E / 12.0) + L * L / (2 * 5.0 / 6.0 * G);
    fem_options o = {.E = E, .nu = nu, .density = 1, .gravity = {0, 0, -1}, .rtol = 1e-9, .maxit = 100000};
    fem_mesh m;
    char err[256];
    if (fem_beam(L, 1, 1, 80, 8, 8, &m, err, sizeof err)) return;
    double *u = malloc(sizeof(double) * 3 * (size_t)m.nv);
    fem_report rep;
    CHECK(fem_solve(ctx, &m, &o, u, &rep) == SPS_OK, "gravity: %s", sps_context_error(ctx));
    const double d = -rep.tip_deflection;
    CHECK(d < want && d > 0.9 * want, "gravity: tip %.4f, Timoshenko %.4f (within 10 %%, below)", d, want);
    printf("gravity 80x8x8: tip %.4f (Timoshenko %.4f)\n", d, want);
    free(u);
    fem_mesh_free(&m);
}

/* The patch test (seed-methods §4.5): u = A x + c prescribed on the boundary of a box,
 * no load: the interior solution is exact (to the solver's tolerance). */
static void test_patch(sps_context ctx, const char *where)
{
    fem_mesh m;
    char err[256];
    if (fem_beam(1, 1.5, 2, 4, 3, 5, &m, err, sizeof err)) return;
    static const double A[3][3] = {{0.01, -0.02, 0.005}, {0.003, 0.015, -0.01}, {-0.007, 0.004, 0.02}};
    static const double c[3] = {0.1, -0.05, 0.02};
    unsigned char *bd = malloc((size_t)m.nv);
    double *g = malloc(sizeof(double) * 3 * m.nv), *u = malloc(sizeof(double) * 3 * m.nv);
    int interior = 0;
    for (int i = 0; i < m.nv; i++) {
        const double *p = m.v + 3 * i, box[3] = {1, 1.5, 2};
        bd[i] = 0;
        for (int k = 0; k < 3; k++) bd[i] |= fabs(p[k]) < 1e-12 || fabs(p[k] - box[k]) < 1e-12;
        interior += !bd[i];
        for (int r = 0; r < 3; r++) g[3 * i + r] = c[r] + A[r][0] * p[0] + A[r][1] * p[1] + A[r][2] * p[2];
    }
    fem_options o = {.E = 1000, .nu = 0.3, .rtol = 1e-13, .maxit = 100000, .clamp = bd, .prescribed = g};
    fem_report rep;
    CHECK(fem_solve(ctx, &m, &o, u, &rep) == SPS_OK, "%s patch test: %s", where, sps_context_error(ctx));
    double worst = 0;
    for (int i = 0; i < 3 * m.nv; i++) worst = fmax(worst, fabs(u[i] - g[i]));
    CHECK(interior == 3 * 2 * 4 && worst <= 1e-10, "%s patch test: %d interior nodes, max error %.3g", where, interior,
          worst);
    free(bd), free(g), free(u);
    fem_mesh_free(&m);
}

/* The beam's faces x = 0 (group 1) and x = L (group 2) as triangles (tri: 3 nodes, grp), and
 * its tetrahedra oriented positively (as Gmsh writes them) into tet; the triangle count. */
static int beam_faces(const fem_mesh *m, int *tri, int *grp, int *tet)
{
    static const int face[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    int ntri = 0;
    for (int e = 0; e < m->nt; e++) {
        const int *t = m->t + 4 * e;
        for (int k = 0; k < 4; k++) {
            int x0 = 1, xl = 1;
            for (int a = 0; a < 3; a++) {
                const double x = m->v[3 * t[face[k][a]]];
                x0 &= fabs(x) < 1e-12, xl &= fabs(x - m->L) < 1e-12;
            }
            if (!x0 && !xl) continue;
            for (int a = 0; a < 3; a++) tri[3 * ntri + a] = t[face[k][a]];
            grp[ntri++] = x0 ? 1 : 2;
        }
        memcpy(tet + 4 * e, t, 4 * sizeof *t);
        double d[3][3];
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) d[a][c] = m->v[3 * t[a + 1] + c] - m->v[3 * t[0] + c];
        const double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                           d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                           d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
        if (det < 0) tet[4 * e + 2] = t[3], tet[4 * e + 3] = t[2];
    }
    return ntri;
}

/* A Gmsh file of a beam, format 2.2 or 4.1: node tags with gaps (10 + 2 i), the faces as
 * groups "clamp" (1) and "load" (2), the tetrahedra in "beam" (3), and (2.2) two line
 * elements to be skipped.  two: the faces also in "fixed" (7) and "end" (8), the
 * tetrahedra also in "steel" (4), as Gmsh writes them: 2.2 lists each element once a group,
 * 4.1 lists the groups on the entity's line (the volume's line also naming 1200 bounding
 * surfaces: over 4096 characters); and in 2.2 a geometry point on a node of no
 * tetrahedron (tag 8, first in $Nodes). */
static void write_msh(const char *path, const fem_mesh *m, int v41, int two)
{
    FILE *f = fopen(path, "w");
    int *tri = malloc(sizeof(int) * 3 * 4 * m->nt), *grp = malloc(sizeof(int) * 4 * m->nt),
        *tet = malloc(sizeof(int) * 4 * m->nt);
    const int ntri = beam_faces(m, tri, grp, tet);
    if (!f) return;
    fprintf(f, "$MeshFormat\n%s 0 8\n$EndMeshFormat\n$PhysicalNames\n%d\n2 1 \"clamp\"\n2 2 \"load\"\n3 3 \"beam\"\n%s"
               "$EndPhysicalNames\n", v41 ? "4.1" : "2.2", two ? 6 : 3,
            two ? "2 7 \"fixed\"\n2 8 \"end\"\n3 4 \"steel\"\n" : "");
    if (v41) {
        if (two) {
            fprintf(f, "$Entities\n0 0 2 1\n1 0 0 0 0 1 1 2 1 7 0\n2 10 0 0 10 1 1 2 2 8 0\n1 0 0 0 10 1 1 2 3 4 1200");
            for (int k = 1; k <= 1200; k++) fprintf(f, " %d", k % 2 ? -k : k);
            fprintf(f, "\n$EndEntities\n");
        } else
            fprintf(f, "$Entities\n0 0 2 1\n1 0 0 0 0 1 1 1 1 0\n2 10 0 0 10 1 1 1 2 0\n1 0 0 0 10 1 1 1 3 0\n"
                       "$EndEntities\n");
        fprintf(f, "$Nodes\n1 %d 10 %d\n3 1 0 %d\n", m->nv, 10 + 2 * (m->nv - 1), m->nv);
        for (int i = 0; i < m->nv; i++) fprintf(f, "%d\n", 10 + 2 * i);
        for (int i = 0; i < m->nv; i++) fprintf(f, "%.17g %.17g %.17g\n", m->v[3 * i], m->v[3 * i + 1], m->v[3 * i + 2]);
        fprintf(f, "$EndNodes\n$Elements\n3 %d 1 %d\n", ntri + m->nt, ntri + m->nt);
        int id = 1;
        for (int g = 1; g <= 2; g++) {
            int cnt = 0;
            for (int k = 0; k < ntri; k++) cnt += grp[k] == g;
            fprintf(f, "2 %d 2 %d\n", g, cnt);
            for (int k = 0; k < ntri; k++)
                if (grp[k] == g) fprintf(f, "%d %d %d %d\n", id++, 10 + 2 * tri[3 * k], 10 + 2 * tri[3 * k + 1], 10 + 2 * tri[3 * k + 2]);
        }
        fprintf(f, "3 1 4 %d\n", m->nt);
        for (int e = 0; e < m->nt; e++)
            fprintf(f, "%d %d %d %d %d\n", id++, 10 + 2 * tet[4 * e], 10 + 2 * tet[4 * e + 1], 10 + 2 * tet[4 * e + 2],
                    10 + 2 * tet[4 * e + 3]);
    } else {
        fprintf(f, "$Nodes\n%d\n", m->nv + two);
        if (two) fprintf(f, "8 5 0.5 3\n");
        for (int i = 0; i < m->nv; i++) fprintf(f, "%d %.17g %.17g %.17g\n", 10 + 2 * i, m->v[3 * i], m->v[3 * i + 1], m->v[3 * i + 2]);
        fprintf(f, "$EndNodes\n$Elements\n%d\n1 1 2 0 1 10 12\n2 1 2 0 1 12 14\n", (1 + two) * (ntri + m->nt) + 2 + two);
        int id = 3;
        if (two) fprintf(f, "%d 15 2 0 1 8\n", id++);
        for (int c = 0; c <= two; c++)
            for (int k = 0; k < ntri; k++)
                fprintf(f, "%d 2 2 %d 7 %d %d %d\n", id++, grp[k] + 6 * c, 10 + 2 * tri[3 * k], 10 + 2 * tri[3 * k + 1],
                        10 + 2 * tri[3 * k + 2]);
        for (int c = 0; c <= two; c++)
            for (int e = 0; e < m->nt; e++)
                fprintf(f, "%d 4 2 %d 1 %d %d %d %d\n", id++, 3 + c, 10 + 2 * tet[4 * e], 10 + 2 * tet[4 * e + 1],
                        10 + 2 * tet[4 * e + 2], 10 + 2 * tet[4 * e + 3]);
    }
    fprintf(f, "$EndElements\n");
    fclose(f);
    free(tri), free(grp), free(tet);
}

/* Small meshes: the unit tetrahedron, its face z = 0 a triangle. */
#define MSH22 "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
#define NODES22 "$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n"
#define MSH41 "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
#define NODES41 "$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n0 1 0\n0 0 1\n$EndNodes\n"
#define TET41 "$Elements\n1 1 1 1\n3 1 4 1\n1 1 2 3 4\n$EndElements\n"

/* The same beam from a Gmsh file (clamp and traction by physical group) solves as the
 * generator's (tip load P = traction 1 on the unit end face), also with its elements in two
 * groups each (2.2: listed twice, the repeats dropped, K not doubled; 4.1: a surface's
 * second group holds its triangles too) and a node of no tetrahedron (2.2: dropped, no
 * singular block for block-Jacobi); malformed files refused with file:line. */
static void test_gmsh(sps_context ctx)
{
    fem_mesh b, g;
    char err[512], path[64];
    if (fem_beam(10, 1, 1, 20, 2, 2, &b, err, sizeof err)) return;
    snprintf(path, sizeof path, "/tmp/test_fem_%ld.msh", (long)getpid());
    for (int variant = 0; variant < 4; variant++) {
        const int v41 = variant & 1, two = variant >> 1;
        write_msh(path, &b, v41, two);
        const char *fmt = v41 ? two ? "4.1, two groups" : "4.1" : two ? "2.2, two groups" : "2.2";
        if (fem_gmsh_read(path, &g, err, sizeof err)) {
            CHECK(0, "gmsh %s: %s", fmt, err);
            continue;
        }
        CHECK(g.nv == b.nv, "gmsh %s: %d nodes, the beam's %d", fmt, g.nv, b.nv);
        if (g.nv != b.nv) {
            fem_mesh_free(&g);
            continue;
        }
        CHECK(g.nt == b.nt && g.ntri == (2 * 2 * 2 * 2 << two) && g.skipped == (v41 ? 0 : 2 + two) &&
                  g.duplicates == (two && !v41 ? b.nt : 0) && fem_group(&g, "clamp") == 1 &&
                  fem_group(&g, "load") == 2 && fem_group(&g, "2") == 2 && fem_group(&g, "nothing") == -1 &&
                  fem_group(&g, "beam") == -1 &&
                  (!two || (fem_group(&g, "fixed") == 7 && fem_group(&g, "end") == 8 && fem_group(&g, "steel") == -1)),
              "gmsh %s: %d tets, %d triangles, %d skipped, %d duplicates, groups", fmt, g.nt, g.ntri, g.skipped,
              g.duplicates);
        unsigned char *clamp = calloc((size_t)g.nv, 1);
        fem_clamp_group(&g, fem_group(&g, two ? "fixed" : "clamp"), clamp);
        fem_options og = {.E = 1000, .nu = 0.3, .rtol = 1e-11, .maxit = 100000, .clamp = clamp,
                          .traction_tag = fem_group(&g, two ? "end" : "load"), .traction = {0, 0, -1}};
        fem_options ob = {.E = 1000, .nu = 0.3, .tip_load = 1, .rtol = 1e-11, .maxit = 100000};
        double *ug = malloc(sizeof(double) * 3 * g.nv), *ub = malloc(sizeof(double) * 3 * b.nv);
        fem_report rg, rb;
        CHECK(fem_solve(ctx, &g, &og, ug, &rg) == SPS_OK && fem_solve(ctx, &b, &ob, ub, &rb) == SPS_OK,
              "gmsh %s / beam solves: %s", fmt, sps_context_error(ctx));
        double worst = 0, scale = 0;
        for (int i = 0; i < 3 * b.nv; i++) worst = fmax(worst, fabs(ug[i] - ub[i])), scale = fmax(scale, fabs(ub[i]));
        CHECK(worst <= 1e-8 * scale && scale > 0, "gmsh %s beam = generated beam: off by %.3g of %.3g", fmt, worst, scale);
        free(clamp), free(ug), free(ub);
        fem_mesh_free(&g);
    }
    remove(path);
    fem_mesh_free(&b);
    static const struct {
        const char *text, *want;
    } bad[] = {
        {"$MeshFormat\n4.0 0 8\n$EndMeshFormat\n", ":2: Gmsh format 4: this reader takes 2.2 and 4.1"},
        {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Elements\n0\n$EndElements\n", ":4: $Elements before $Nodes"},
        {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n1\n1 0 0 0\n$EndNodes\n", "no $Elements section"},
        {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n2 1 0\n", ":7: node 2: expected 3 finite"},
        {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n"
         "$Elements\n1\n7 4 2 0 1 1 2 3 9\n$EndElements\n", ":13: element 7: unknown node 9"},
        {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 2 2 0\n$EndNodes\n"
         "$Elements\n1\n7 4 2 0 1 1 2 3 4\n$EndElements\n", ":13: tetrahedron 7 is degenerate"},
        {"$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n$EndNodes\n"
         "$Elements\n1\n7 4 2 0 1 1 3 2 4\n$EndElements\n", ":13: tetrahedron 7 is inverted"},
        /* 4.1 element blocks beyond the header's count (the arrays' size), and short of it */
        {MSH41 NODES41 "$Elements\n1 1 1 3\n3 1 4 3\n1 1 2 3 4\n2 1 2 3 4\n3 1 2 3 4\n$EndElements\n",
         ":18: element block: expected 'dim entity type n' within the element count"},
        {MSH41 NODES41 "$Elements\n1 3 1 3\n3 1 4 1\n1 1 2 3 4\n$EndElements\n",
         ":19: $Elements: 1 elements in the blocks, 3 announced"},
        /* a second $Entities (counted on top of the first's arrays), a count that wraps the size */
        {MSH41 "$Entities\n0 0 1 0\n1 0 0 0 1 1 0 1 1 0\n$EndEntities\n$Entities\n0 0 2 0\n1 0 0 0 1 1 0 1 1 0\n"
               "2 0 0 0 1 1 0 1 2 0\n$EndEntities\n" NODES41 TET41,
         ":8: a second $Entities section"},
        {MSH41 "$Entities\n0 0 9223372036854775807 0\n1 0 0 0 1 1 0 1 1 0\n$EndEntities\n" NODES41 TET41,
         ":5: $Entities: expected 'points curves surfaces volumes', each 0..100000000"},
        /* a physical tag beyond an int; ntags that would overflow 3 + ntags */
        {MSH22 NODES22 "$Elements\n2\n1 2 2 4294967298 1 1 2 3\n2 4 2 3 1 1 2 3 4\n$EndElements\n",
         ":13: element 1: physical tag 4294967298 out of range"},
        {MSH22 NODES22 "$Elements\n1\n1 4 9223372036854775807 1 2 3 4\n$EndElements\n",
         ":13: element: expected 'tag type ntags tags... nodes'"},
        /* counts the file cannot hold, refused before arrays are sized from them */
        {MSH22 "$Nodes\n200000000\n1 0 0 0\n$EndNodes\n", ":5: 200000000 nodes cannot be in a file of"},
        /* a triangle of a repeated node, or of three collinear ones: it clamped two nodes */
        {MSH22 NODES22 "$Elements\n2\n1 2 2 1 1 1 1 2\n2 4 2 3 1 1 2 3 4\n$EndElements\n",
         ":13: triangle 1 is degenerate (area 0)"},
        {MSH22 NODES22 "$Elements\n400000000\n$EndElements\n", ":12: 400000000 elements cannot be in a file of"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        FILE *f = fopen(path, "w");
        if (!f) continue;
        fputs(bad[k].text, f);
        fclose(f);
        fem_mesh x;
        err[0] = 0;
        CHECK(fem_gmsh_read(path, &x, err, sizeof err) == -1 && strstr(err, bad[k].want),
              "malformed gmsh %zu: '%s' should name '%s'", k, err, bad[k].want);
        remove(path);
    }
}

/* text into a file, read back: fem_gmsh_read's result */
static int read_text(const char *text, fem_mesh *m, char *err, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/test_fem_%ld.msh", (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f) {
        memset(m, 0, sizeof *m);
        snprintf(err, len, "cannot write %s", path);
        return -1;
    }
    fputs(text, f);
    fclose(f);
    err[0] = 0;
    const int rc = fem_gmsh_read(path, m, err, len);
    remove(path);
    return rc;
}

/* A file's bytes (NULL where it cannot be read), *n of them. */
static char *file_bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    *n = 0;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        const long len = ftell(f);
        rewind(f);
        if (len >= 0 && (b = malloc((size_t)len + 1))) *n = fread(b, 1, (size_t)len, f);
    }
    if (f) fclose(f);
    return b;
}

/* n bytes of text through a FIFO (a pipe, of no size): fem_gmsh_read's result */
static int read_fifo(const char *text, size_t n, fem_mesh *m, char *err, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/test_fem_%ld.fifo", (long)getpid());
    const pid_t pid = app_fifo(path, text, n);
    if (pid < 0) {
        memset(m, 0, sizeof *m);
        snprintf(err, len, "cannot make the FIFO %s", path);
        return -1;
    }
    err[0] = 0;
    const int rc = fem_gmsh_read(path, m, err, len);
    app_fifo_done(pid, path);
    return rc;
}

/* Through a pipe no file size bounds a count, so no count sizes an array: the arrays grow as
 * the items arrive.  A beam past the first 4096 nodes and tetrahedra reads as from a regular
 * file, and a header declaring 2e8 nodes or 4e8 elements over one is refused where the file
 * ends, file:line (under ASan an array sized from the count would fail: app_check.h). */
static void test_gmsh_stream(void)
{
    fem_mesh b;
    char err[512], path[64];
    if (fem_beam(10, 1, 1, 60, 8, 8, &b, err, sizeof err)) {
        CHECK(0, "beam: %s", err);
        return;
    }
    snprintf(path, sizeof path, "/tmp/test_fem_%ld.msh", (long)getpid());
    for (int v41 = 0; v41 < 2; v41++) {
        write_msh(path, &b, v41, 0);
        size_t n = 0;
        char *text = file_bytes(path, &n);
        fem_mesh g, s;
        const int rg = fem_gmsh_read(path, &g, err, sizeof err);
        const int rs = rg || !text ? -1 : read_fifo(text, n, &s, err, sizeof err);
        CHECK(rs == 0 && s.nv == g.nv && s.nt == g.nt && s.ntri == g.ntri && s.nv > 4096 && s.nt > 4096 &&
                  !memcmp(s.v, g.v, sizeof(double) * 3 * (size_t)g.nv) &&
                  !memcmp(s.t, g.t, sizeof(int) * 4 * (size_t)g.nt) &&
                  !memcmp(s.tri, g.tri, sizeof(int) * 3 * (size_t)g.ntri) &&
                  !memcmp(s.tri_tag, g.tri_tag, sizeof(int) * (size_t)g.ntri),
              "gmsh %s through a FIFO: '%s', %d nodes, %d tets (the file's %d, %d)", v41 ? "4.1" : "2.2", err,
              rs ? -1 : s.nv, rs ? -1 : s.nt, g.nv, g.nt);
        if (rs == 0) fem_mesh_free(&s);
        if (rg == 0) fem_mesh_free(&g);
        free(text);
    }
    remove(path);
    fem_mesh_free(&b);
    static const struct {
        const char *text, *want;
    } cut[] = {
        {MSH22 "$Nodes\n200000000\n1 0 0 0\n", ":6: the file ends after 1 of 200000000 nodes"},
        {MSH22 NODES22 "$Elements\n400000000\n1 4 2 3 1 1 2 3 4\n", ":13: the file ends after 1 of 400000000 elements"},
        {MSH41 "$Nodes\n1 200000000 1 200000000\n3 1 0 200000000\n1\n", ":7: the file ends in a node block"},
        {MSH41 NODES41 "$Elements\n1 500000000 1 500000000\n3 1 4 500000000\n1 1 2 3 4\n",
         ":19: the file ends in an element block"},
    };
    for (size_t k = 0; k < sizeof cut / sizeof cut[0]; k++) {
        fem_mesh x;
        const int rc = read_fifo(cut[k].text, strlen(cut[k].text), &x, err, sizeof err);
        CHECK(rc == -1 && strstr(err, cut[k].want), "FIFO %zu declaring more than it holds: '%s' should name '%s'", k,
              err, cut[k].want);
        if (rc == 0) fem_mesh_free(&x);
    }
}

/* The reader's corner cases on small meshes: repeated elements dropped (the first kept; a
 * triangle repeats only with its tag), a name resolving only to a group of triangles, a node
 * of no tetrahedron dropped (and the mesh solving with block-Jacobi), names up to 255
 * characters and at most FEM_MAX_GROUPS of them, a read error named. */
static void test_gmsh_cases(sps_context ctx)
{
    fem_mesh m;
    char err[512];
    /* a triangle with no physical tag holds 0, which names no group: --clamp 0 had clamped it */
    if (read_text(MSH22 NODES22 "$Elements\n3\n1 2 0 1 2 3\n2 2 2 1 1 1 2 4\n3 4 2 3 1 1 2 3 4\n$EndElements\n", &m,
                  err, sizeof err)) {
        CHECK(0, "untagged triangle: %s", err);
    } else {
        CHECK(fem_group(&m, "0") == -1 && fem_group(&m, "-1") == -1 && fem_group(&m, "1") == 1,
              "group 0 or -1 names nothing (%d %d %d)", fem_group(&m, "0"), fem_group(&m, "-1"), fem_group(&m, "1"));
        fem_mesh_free(&m);
    }
    /* 2.2: the tetrahedron listed twice (groups 3 and 4; the second's corners rotated), its
     * face twice in group 1 (rotated) and once in group 2 */
    if (read_text(MSH22 "$PhysicalNames\n4\n2 1 \"a\"\n2 2 \"b\"\n3 3 \"v\"\n3 4 \"w\"\n$EndPhysicalNames\n" NODES22
                        "$Elements\n5\n1 2 2 1 1 1 2 3\n2 4 2 3 1 1 2 3 4\n3 2 2 1 1 2 3 1\n4 2 2 2 1 1 2 3\n"
                        "5 4 2 4 1 1 3 4 2\n$EndElements\n",
                  &m, err, sizeof err)) {
        CHECK(0, "repeats: %s", err);
    } else {
        CHECK(m.nt == 1 && m.ntri == 2 && m.duplicates == 2 && m.tri_tag[0] == 1 && m.tri_tag[1] == 2 &&
                  m.t[0] == 0 && m.t[1] == 1 && m.t[2] == 2 && m.t[3] == 3 && fem_group(&m, "a") == 1 &&
                  fem_group(&m, "b") == 2 && fem_group(&m, "v") == -1 && fem_group(&m, "w") == -1,
              "repeats dropped: %d tets, %d triangles, %d duplicates", m.nt, m.ntri, m.duplicates);
        fem_mesh_free(&m);
    }
    /* 4.1 without $Entities: the triangles have no group, so "a" names none */
    if (read_text(MSH41 "$PhysicalNames\n2\n2 1 \"a\"\n3 2 \"v\"\n$EndPhysicalNames\n" NODES41
                        "$Elements\n2 2 1 2\n2 1 2 1\n1 1 2 3\n3 1 4 1\n2 1 2 3 4\n$EndElements\n",
                  &m, err, sizeof err)) {
        CHECK(0, "4.1 without $Entities: %s", err);
    } else {
        CHECK(m.ntri == 1 && m.tri_tag[0] == 0 && fem_group(&m, "a") == -1 && fem_group(&m, "v") == -1 &&
                  fem_group(&m, "1") == -1,
              "4.1 without $Entities: no group resolves (%d %d)", fem_group(&m, "a"), fem_group(&m, "v"));
        fem_mesh_free(&m);
    }
    /* a geometry point (node 9, third in $Nodes) on no tetrahedron, and a triangle on it */
    if (read_text(MSH22 "$Nodes\n5\n1 0 0 0\n2 1 0 0\n9 5 5 5\n3 0 1 0\n4 0 0 1\n$EndNodes\n"
                        "$Elements\n4\n1 15 2 0 1 9\n2 2 2 1 1 1 2 9\n3 2 2 1 1 1 2 3\n4 4 2 3 1 1 2 3 4\n$EndElements\n",
                  &m, err, sizeof err)) {
        CHECK(0, "a node of no tetrahedron: %s", err);
    } else {
        static const double v[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
        CHECK(m.nv == 4 && m.ntri == 1 && m.skipped == 2 && !memcmp(m.v, v, sizeof v) && m.t[0] == 0 && m.t[1] == 1 &&
                  m.t[2] == 2 && m.t[3] == 3 && m.tri[0] == 0 && m.tri[1] == 1 && m.tri[2] == 2,
              "a node of no tetrahedron dropped: %d nodes, %d triangles, %d skipped", m.nv, m.ntri, m.skipped);
        unsigned char clamp[5] = {0};
        fem_clamp_group(&m, fem_group(&m, "1"), clamp);
        fem_options o = {.E = 1000, .nu = 0.3, .density = 1, .gravity = {0, 0, -1}, .rtol = 1e-10, .maxit = 100,
                         .precond = "bjacobi", .clamp = clamp};
        double u[15];
        fem_report rep;
        CHECK(fem_solve(ctx, &m, &o, u, &rep) == SPS_OK && u[3 * 3 + 2] < 0,
              "a node of no tetrahedron: block-Jacobi solves: %s", sps_context_error(ctx));
        fem_mesh_free(&m);
    }
    /* an element of a type not read (93, the 125-node hexahedron: 130 integers on a 2.2 line,
     * 126 on a 4.1 one) is skipped as the others are, beside a tetrahedron; a tetrahedron of
     * more integers than the reader holds (70 tags) is refused, naming it */
    static char text[70000];
    for (int v41 = 0; v41 < 2; v41++) {
        size_t at = (size_t)snprintf(text, sizeof text, v41 ? MSH41 NODES41 "$Elements\n2 2 1 2\n3 1 93 1\n1"
                                                              : MSH22 NODES22 "$Elements\n2\n1 93 2 0 1");
        for (int k = 0; k < 125; k++) at += (size_t)snprintf(text + at, sizeof text - at, " %d", 1 + k % 4);
        snprintf(text + at, sizeof text - at, "%s\n$EndElements\n", v41 ? "\n3 1 4 1\n2 1 2 3 4" : "\n2 4 2 3 1 1 2 3 4");
        const int rc = read_text(text, &m, err, sizeof err);
        CHECK(rc == 0 && m.nt == 1 && m.skipped == 1, "%s: a 125-node element skipped: %s, %d tets, %d skipped",
              v41 ? "4.1" : "2.2", rc ? err : "read", rc ? -1 : m.nt, rc ? -1 : m.skipped);
        if (rc == 0) fem_mesh_free(&m);
    }
    size_t at = (size_t)snprintf(text, sizeof text, MSH22 NODES22 "$Elements\n1\n7 4 70");
    for (int k = 0; k < 70; k++) at += (size_t)snprintf(text + at, sizeof text - at, " 1");
    snprintf(text + at, sizeof text - at, " 1 2 3 4\n$EndElements\n");
    CHECK(read_text(text, &m, err, sizeof err) == -1 && strstr(err, ":13: element 7 of type 4: 77 integers"),
          "a tetrahedron of 70 tags: '%s'", err);
    /* physical names: 255 characters taken, 256 refused; FEM_MAX_GROUPS taken, one more refused */
    for (int n = 255; n <= 256; n++) {
        char name[300];
        memset(name, 'n', (size_t)n);
        name[n] = 0;
        snprintf(text, sizeof text, MSH22 "$PhysicalNames\n1\n2 1 \"%s\"\n$EndPhysicalNames\n" NODES22
                 "$Elements\n2\n1 2 2 1 1 1 2 3\n2 4 2 3 1 1 2 3 4\n$EndElements\n", name);
        const int rc = read_text(text, &m, err, sizeof err);
        if (n == 255) CHECK(rc == 0 && fem_group(&m, name) == 1, "a name of 255 characters: %s", err);
        else CHECK(rc == -1 && strstr(err, ":6: physical name of 256 characters: at most 255"), "a name of 256: '%s'", err);
        fem_mesh_free(&m);
    }
    for (int n = FEM_MAX_GROUPS; n <= FEM_MAX_GROUPS + 1; n++) {
        size_t at = (size_t)snprintf(text, sizeof text, MSH22 "$PhysicalNames\n%d\n", n);
        for (int g = 0; g < n; g++) at += (size_t)snprintf(text + at, sizeof text - at, "2 %d \"g%d\"\n", g + 1, g + 1);
        snprintf(text + at, sizeof text - at, "$EndPhysicalNames\n" NODES22
                 "$Elements\n2\n1 2 2 %d 1 1 2 3\n2 4 2 3 1 1 2 3 4\n$EndElements\n", n);
        const int rc = read_text(text, &m, err, sizeof err);
        char last[16];
        snprintf(last, sizeof last, "g%d", n);
        if (n == FEM_MAX_GROUPS) CHECK(rc == 0 && fem_group(&m, last) == n, "%d names: %s", n, err);
        else CHECK(rc == -1 && strstr(err, ":5: 65 physical names: this reader takes at most 64"), "%d names: '%s'", n, err);
        fem_mesh_free(&m);
    }
    /* a read error (a directory) is one, not an end of the file */
    CHECK(fem_gmsh_read("/tmp", &m, err, sizeof err) == -1 && strstr(err, "cannot read"), "a directory: '%s'", err);
}

/* The manufactured field u = (phi, phi, phi), phi = sin(pi x) sin(pi y) sin(pi z), on the
 * unit cube with u = 0 on its boundary (seed-methods §4.5): f = -[mu lap u + (lambda + mu)
 * grad div u]; P1 converges in L2 as h^2. */
typedef struct {
    double lambda, mu;
} lame;
static void mf_u(const double *x, double *u, void *user)
{
    (void)user;
    const double p = sin(M_PI * x[0]) * sin(M_PI * x[1]) * sin(M_PI * x[2]);
    u[0] = u[1] = u[2] = p;
}
static void mf_f(const double *x, double *f, void *user)
{
    const lame *l = user;
    const double pi2 = M_PI * M_PI, sx = sin(M_PI * x[0]), sy = sin(M_PI * x[1]), sz = sin(M_PI * x[2]);
    const double cx = cos(M_PI * x[0]), cy = cos(M_PI * x[1]), cz = cos(M_PI * x[2]);
    const double phi = sx * sy * sz, pxy = pi2 * cx * cy * sz, pxz = pi2 * cx * sy * cz, pyz = pi2 * sx * cy * cz;
    const double gd[3] = {-pi2 * phi + pxy + pxz, pxy - pi2 * phi + pyz, pxz + pyz - pi2 * phi};
    for (int c = 0; c < 3; c++) f[c] = -(l->mu * (-3 * pi2 * phi) + (l->lambda + l->mu) * gd[c]);
}
static void test_manufactured(sps_context ctx)
{
    lame l;
    fem_lame(1.0, 0.3, &l.lambda, &l.mu);
    double e[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        const int n = 4 << k;
        fem_mesh m;
        char err[256];
        if (fem_beam(1, 1, 1, n, n, n, &m, err, sizeof err)) return;
        unsigned char *bd = malloc((size_t)m.nv);
        for (int i = 0; i < m.nv; i++) {
            bd[i] = 0;
            for (int c = 0; c < 3; c++) bd[i] |= fabs(m.v[3 * i + c]) < 1e-12 || fabs(m.v[3 * i + c] - 1) < 1e-12;
        }
        fem_options o = {.E = 1.0, .nu = 0.3, .rtol = 1e-12, .maxit = 100000, .clamp = bd, .body_force = mf_f, .user = &l};
        double *u = malloc(sizeof(double) * 3 * m.nv), nrm = 0;
        fem_report rep;
        CHECK(fem_solve(ctx, &m, &o, u, &rep) == SPS_OK, "manufactured %d^3: %s", n, sps_context_error(ctx));
        fem_l2_error(&m, u, mf_u, NULL, &e[k], &nrm);
        e[k] /= nrm;
        free(bd), free(u);
        fem_mesh_free(&m);
    }
    const double r1 = log2(e[0] / e[1]), r2 = log2(e[1] / e[2]);
    printf("manufactured field: relative L2 errors %.3e %.3e %.3e on 4^3, 8^3, 16^3 cells: rates %.2f %.2f\n", e[0], e[1],
           e[2], r1, r2);
    CHECK(r1 > 1.7 && r2 > 1.8 && e[2] < 0.05, "manufactured field: O(h^2) in L2 (rates %.2f %.2f, error %.3g)", r1, r2,
          e[2]);
}

/* -o out.vtu: a VTK XML grid whose arrays have their sizes; a directory refused. */
static void test_vtu(void)
{
    fem_mesh m;
    char err[256], path[64];
    if (fem_beam(2, 1, 1, 3, 2, 1, &m, err, sizeof err)) return;
    double *u = calloc(3 * (size_t)m.nv, sizeof(double)), *vm = malloc(sizeof(double) * m.nt);
    for (int i = 0; i < 3 * m.nv; i++) u[i] = 0.001 * (i % 7);
    fem_von_mises(&m, u, 577.0, 384.6, vm);
    snprintf(path, sizeof path, "/tmp/test_fem_%ld.vtu", (long)getpid());
    CHECK(fem_write_vtu(path, &m, u, vm, err, sizeof err) == 0, "vtu: %s", err);
    FILE *f = fopen(path, "r");
    static const char *names[6] = {"<Points>", "connectivity", "offsets", "types", "displacement", "von_mises"};
    const long want[6] = {3L * m.nv, 4L * m.nt, m.nt, m.nt, 3L * m.nv, m.nt};
    long count[6] = {0};
    int cur = -1, header = 0;
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        if (strstr(line, "NumberOfPoints=")) header = strstr(line, "NumberOfCells=") != NULL;
        if (line[0] == '<') {
            for (int k = 0; k < 6; k++)
                if (strstr(line, names[k])) cur = k;
            if (strstr(line, "</DataArray>")) cur = -1;
            if (cur == 0 && !strstr(line, "<DataArray")) continue;
            continue;
        }
        if (cur < 0) continue;
        for (char *p = strtok(line, " \n"); p; p = strtok(NULL, " \n")) count[cur]++;
    }
    if (f) fclose(f);
    int ok = header;
    for (int k = 0; k < 6; k++) ok = ok && count[k] == want[k];
    CHECK(ok, "vtu arrays: points %ld/%ld, connectivity %ld/%ld, offsets %ld, types %ld, displacement %ld, von_mises %ld",
          count[0], want[0], count[1], want[1], count[2], count[3], count[4], count[5]);
    remove(path);
    CHECK(fem_write_vtu("/tmp", &m, u, vm, err, sizeof err) == -1 && strstr(err, "is a directory"),
          "vtu onto a directory refused: '%s'", err);
    /* --png: a 64 x 64 RGB PNG of the deformed boundary */
    snprintf(path, sizeof path, "/tmp/test_fem_%ld.png", (long)getpid());
    CHECK(fem_render_png(path, &m, u, vm, 64, err, sizeof err) == 0, "png: %s", err);
    unsigned char hd[24] = {0};
    FILE *pf = fopen(path, "rb");
    const size_t got = pf ? fread(hd, 1, sizeof hd, pf) : 0;
    if (pf) fclose(pf);
    CHECK(got == 24 && !memcmp(hd, "\x89PNG\r\n\x1a\n", 8) && !memcmp(hd + 12, "IHDR", 4) && hd[19] == 64 && hd[23] == 64,
          "png: not a 64 x 64 PNG");
    remove(path);
    free(u), free(vm);
    fem_mesh_free(&m);
}

#ifdef FEM_HAVE_CUDA
/* K of mesh m assembled on the GPU and on the host: equal bit for bit. */
static void gpu_equals_host(sps_context gpu, sps_context cpu, const fem_mesh *m, const unsigned char *clamp,
                            const char *what)
{
    char err[256] = "";
    const size_t nq = 16 * (size_t)m->nt;
    int *row = malloc(sizeof(int) * nq), *col = malloc(sizeof(int) * nq);
    double *val = malloc(sizeof(double) * 9 * nq), tup = -1;
    fem_assemble(m, clamp, 577.0, 384.6, row, col, val);
    sps_matrix Kg = NULL, Kh = NULL;
    const sps_status sg = fem_assemble_cuda(gpu, m, clamp, 577.0, 384.6, SPS_F64, &Kg, &tup, err, sizeof err);
    const sps_status sh =
        sps_matrix_from_coo_entries(cpu, m->nv, m->nv, (int64_t)nq, row, col, val, sps_entry_block(3), SPS_F64, &Kh);
    CHECK(sg == SPS_OK && sh == SPS_OK && tup >= 0, "GPU assembly (%s): %s %s", what, err, sps_context_error(gpu));
    sps_matrix_info_t ig, ih;
    if (sg == SPS_OK && sh == SPS_OK && sps_matrix_info(Kg, &ig) == SPS_OK && sps_matrix_info(Kh, &ih) == SPS_OK) {
        const int64_t nnz = ih.nnz;
        int *rg = malloc(sizeof(int) * (m->nv + 1)), *rh = malloc(sizeof(int) * (m->nv + 1));
        int *cg = malloc(sizeof(int) * nnz), *ch = malloc(sizeof(int) * nnz);
        double *vg = malloc(sizeof(double) * 9 * nnz), *vh = malloc(sizeof(double) * 9 * nnz);
        CHECK(ig.nnz == nnz && sps_matrix_export_csr(Kg, rg, cg, vg) == SPS_OK &&
                  sps_matrix_export_csr(Kh, rh, ch, vh) == SPS_OK && !memcmp(rg, rh, sizeof(int) * (m->nv + 1)) &&
                  !memcmp(cg, ch, sizeof(int) * nnz) && !memcmp(vg, vh, sizeof(double) * 9 * nnz),
              "K assembled on the GPU equals the host's bit for bit (%s: %d nodes, %lld blocks)", what, m->nv,
              (long long)nnz);
        free(rg), free(rh), free(cg), free(ch), free(vg), free(vh);
    }
    sps_matrix_destroy(Kg);
    sps_matrix_destroy(Kh);
    /* f32: the GPU rounds its f64 sums once; the host's f64 K rounded entry by entry is the same */
    if (sh == SPS_OK) {
        sps_matrix Kf = NULL, Kd = NULL;
        const sps_status sf = fem_assemble_cuda(gpu, m, clamp, 577.0, 384.6, SPS_F32, &Kf, &tup, err, sizeof err);
        sps_matrix_info_t ih;
        const sps_status sd =
            sps_matrix_from_coo_entries(cpu, m->nv, m->nv, (int64_t)nq, row, col, val, sps_entry_block(3), SPS_F64, &Kd);
        int same = sf == SPS_OK && sd == SPS_OK && sps_matrix_info(Kd, &ih) == SPS_OK;
        if (same) {
            const int64_t nnz = ih.nnz;
            int *rp = malloc(sizeof(int) * (m->nv + 1)), *cp = malloc(sizeof(int) * nnz);
            double *vd = malloc(sizeof(double) * 9 * nnz);
            float *vf = malloc(sizeof(float) * 9 * nnz);
            int *rf = malloc(sizeof(int) * (m->nv + 1)), *cf = malloc(sizeof(int) * nnz);
            same = sps_matrix_export_csr(Kd, rp, cp, vd) == SPS_OK && sps_matrix_export_csr(Kf, rf, cf, vf) == SPS_OK &&
                   !memcmp(rp, rf, sizeof(int) * (m->nv + 1)) && !memcmp(cp, cf, sizeof(int) * nnz);
            for (int64_t k = 0; same && k < 9 * nnz; k++) same = vf[k] == (float)vd[k];
            free(rp), free(cp), free(vd), free(vf), free(rf), free(cf);
        }
        CHECK(same, "K in f32 from the GPU equals the host's f64 K rounded (%s): %s", what, err);
        sps_matrix_destroy(Kf);
        sps_matrix_destroy(Kd);
    }
    free(row), free(col), free(val);
}

static void test_gpu_assembly(sps_context gpu, sps_context cpu)
{
    fem_mesh m;
    char err[256];
    if (fem_beam(10, 1, 2, 30, 4, 6, &m, err, sizeof err)) return;
    unsigned char *clamp = malloc((size_t)m.nv);
    fem_clamp_x0(&m, clamp);
    gpu_equals_host(gpu, cpu, &m, clamp, "the beam");
    /* the same beam with its nodes renumbered at random, its elements shuffled and each element's
     * corners rotated: no order of the generator's is left for the GPU's incidence and row passes */
    unsigned long long r = 0x9e3779b97f4a7c15ULL;
#define NEXT_RAND() (r ^= r << 13, r ^= r >> 7, r ^= r << 17, r)
    int *perm = malloc(sizeof(int) * (size_t)m.nv);
    for (int i = 0; i < m.nv; i++) perm[i] = i;
    for (int i = m.nv - 1; i > 0; i--) {
        const int j = (int)(NEXT_RAND() % (unsigned long long)(i + 1)), x = perm[i];
        perm[i] = perm[j], perm[j] = x;
    }
    fem_mesh s = m;
    s.v = malloc(sizeof(double) * 3 * (size_t)m.nv);
    s.t = malloc(sizeof(int) * 4 * (size_t)m.nt);
    unsigned char *sclamp = malloc((size_t)m.nv);
    for (int i = 0; i < m.nv; i++) {
        memcpy(s.v + 3 * (size_t)perm[i], m.v + 3 * (size_t)i, 3 * sizeof(double));
        sclamp[perm[i]] = clamp[i];
    }
    for (int e = 0; e < m.nt; e++) {
        const int f = (int)(NEXT_RAND() % (unsigned long long)(e + 1)), rot = (int)(NEXT_RAND() % 4);
        /* inside-out shuffle: element e goes to slot f, slot f's to e */
        memcpy(s.t + 4 * (size_t)e, s.t + 4 * (size_t)f, 4 * sizeof(int));
        for (int k = 0; k < 4; k++) s.t[4 * (size_t)f + k] = perm[m.t[4 * (size_t)e + (k + rot) % 4]];
    }
#undef NEXT_RAND
    gpu_equals_host(gpu, cpu, &s, sclamp, "the beam renumbered and shuffled");
    free(s.v), free(s.t), free(sclamp), free(perm);
    free(clamp);
    fem_mesh_free(&m);
}
#endif

int main(void)
{
    test_element();
    char err[256] = "";
    fem_mesh m;
    CHECK(fem_beam(10, 1, 1, 0, 2, 2, &m, err, sizeof err) == -1 && strstr(err, "must be positive"),
          "a beam of no cells refused: '%s'", err);
    sps_context cpu = NULL, gpu = NULL;
    if (sps_context_create(&cpu, SPS_BACKEND_CPU, 0) != SPS_OK) return 1;
    test_rigid_modes(cpu);
    test_cantilever(cpu, "CPU", 20); /* 20x2x2, 40x4x4, 80x8x8: CI's two cores */
    test_gravity(cpu);
    test_patch(cpu, "CPU");
    test_manufactured(cpu);
    test_gmsh(cpu);
    test_gmsh_cases(cpu);
    test_gmsh_stream();
    test_vtu();
    if (sps_context_create(&gpu, SPS_BACKEND_CUDA, 0) == SPS_OK) {
        test_cantilever(gpu, "GPU", 40); /* the 40x4x4, 80x8x8, 160x16x16 */
        test_patch(gpu, "GPU");
#ifdef FEM_HAVE_CUDA
        test_gpu_assembly(gpu, cpu);
#endif
    } else {
        printf("GPU: skipped (%s)\n", *sps_cuda_unavailable_reason() ? sps_cuda_unavailable_reason() : "no CUDA");
    }
    sps_context_destroy(gpu);
    sps_context_destroy(cpu);
    printf("%d passed, %d failed\n", n_pass, n_fail);
    return n_fail ? 1 : 0;
}
