/* spsolve-spin MESH.obj IMAGE.tga OUT.obj [--scale S] [--iterations K] [--rtol R]
 *              [--backend auto|cpu|cuda] [--subdivide N] [--write-matrix E.mtx] [--png OUT.png] [--no-reorder]
 *              [--solver cg|bicgstab|gmres] [--norm 2|inf] [--json]
 * --norm inf stops every solve as the reference's PCG does, on max |r_i| <= rtol max |b_i|
 * (its rule: --norm inf --rtol 1e-7); the default, 2-norms to 1e-10, matches it as well.
 * The vertices are renumbered breadth-first for the computation (E's products then
 * gather from nearby memory); --no-reorder keeps the input's numbering.  --write-matrix
 * writes E as it is solved, in the numbering used (the input's with --no-reorder).  The
 * output mesh is in the input's order either way.
 * Vertices in no face are left out (the output lists the used ones); rho 0 on every face
 * gives the input back, normalised.  --help: the usage on stdout.
 * The spin transformation of a triangle mesh by the curvature change an image
 * prescribes (apps/dirac/spin.h), through libspsolve's public API. */
#include "args.h"
#include "files.h"
#include "json.h"
#include "spin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The usage line to out: stderr for a command line refused (exit status 2), stdout for --help (0). */
static int usage(FILE *out)
{
    fprintf(out, "usage: spsolve-spin MESH.obj IMAGE.tga OUT.obj [--scale S] [--iterations K] [--rtol R]\n"
                 "                    [--backend auto|cpu|cuda] [--subdivide N] [--write-matrix E.mtx] [--png OUT.png] [--no-reorder]\n"
                 "                    [--solver cg|bicgstab|gmres] [--norm 2|inf] [--json]\n");
    return out == stdout ? 0 : 1; /* a usage error: 1, as spsolve's */
}

/* An option's value refused: what it must be, then the usage line. */
static int bad_value(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "spsolve-spin: %s '%s': %s\n", opt, val, want);
    return usage(stderr);
}

int main(int argc, char **argv)
{
    const char *pos_args[3] = {NULL, NULL, NULL};
    int npos = 0, json = 0, subdivide = 0;
    const char *png = NULL;
    spin_options o = {.scale = 5.0, .iterations = 3, .rtol = 1e-10, .maxit = 20000, .reorder = 1};
    sps_backend be = SPS_BACKEND_AUTO;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(stdout);
        else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--no-reorder")) o.reorder = 0;
        else if (!strcmp(a, "--scale") && i + 1 < argc) {
            if (!args_real(argv[++i], &o.scale)) return bad_value(a, argv[i], "not a finite number");
        } else if (!strcmp(a, "--iterations") && i + 1 < argc) {
            if (!args_int(argv[++i], 1, SPIN_MAX_ITERATIONS, &o.iterations)) return bad_value(a, argv[i], "not an integer in 1..100");
        } else if (!strcmp(a, "--rtol") && i + 1 < argc) {
            if (!args_real(argv[++i], &o.rtol) || !(o.rtol > 0 && o.rtol < 1))
                return bad_value(a, argv[i], "not a number in (0, 1)");
        } else if (!strcmp(a, "--subdivide") && i + 1 < argc) {
            if (!args_int(argv[++i], 0, 8, &subdivide)) return bad_value(a, argv[i], "not an integer in 0..8");
        } else if (!strcmp(a, "--solver") && i + 1 < argc) {
            o.solver = argv[++i];
            if (strcmp(o.solver, "cg") && strcmp(o.solver, "bicgstab") && strcmp(o.solver, "gmres")) return usage(stderr);
        } else if (!strcmp(a, "--norm") && i + 1 < argc) {
            const char *nm = argv[++i];
            if (strcmp(nm, "2") && strcmp(nm, "inf")) return usage(stderr);
            o.norm_inf = !strcmp(nm, "inf");
        } else if (!strcmp(a, "--png") && i + 1 < argc) {
            png = argv[++i];
        } else if (!strcmp(a, "--write-matrix") && i + 1 < argc) {
            o.write_matrix = argv[++i];
        } else if (!strcmp(a, "--backend") && i + 1 < argc) {
            const char *b = argv[++i];
            be = !strcmp(b, "cpu") ? SPS_BACKEND_CPU : !strcmp(b, "cuda") ? SPS_BACKEND_CUDA : SPS_BACKEND_AUTO;
            if (strcmp(b, "cpu") && strcmp(b, "cuda") && strcmp(b, "auto")) return usage(stderr);
        } else if (a[0] == '-' && a[1]) {
            return usage(stderr);
        } else if (npos < 3) {
            pos_args[npos++] = a;
        } else {
            return usage(stderr);
        }
    }
    if (npos != 3) return usage(stderr);
    {
        const char *const ins[] = {pos_args[0], pos_args[1]}, *const inn[] = {"MESH.obj", "IMAGE.tga"};
        const char *const outs[] = {pos_args[2], png, o.write_matrix}, *const outn[] = {"OUT.obj", "--png",
                                                                                      "--write-matrix"};
        if (!files_outputs_ok("spsolve-spin", ins, inn, 2, outs, outn, 3, -1, -1)) return 1;
    }
    char err[1024];
    spin_mesh m;
    spin_image im;
    double t0 = now();
    if (spin_mesh_read(pos_args[0], &m, err, sizeof err)) {
        fprintf(stderr, "spsolve-spin: %s\n", err);
        return 1;
    }
    /* vertices in no face (stray ones are common in OBJ files) left out of the computation and
     * of the output, which lists the used ones renumbered */
    int first = 0;
    const int nv_in = m.nv, dropped = spin_mesh_drop_unused(&m, &first);
    if (dropped < 0) {
        fprintf(stderr, "spsolve-spin: out of memory\n");
        spin_mesh_free(&m);
        return 1;
    }
    if (dropped)
        fprintf(stderr,
                "spsolve-spin: note: %s: %d of its %d vertices in no face (the first: vertex %d) left out; %s lists "
                "the %d used, renumbered\n",
                pos_args[0], dropped, nv_in, first, pos_args[2], m.nv);
    if (m.polygons)
        fprintf(stderr,
                "spsolve-spin: note: %s: %d faces of more than 3 corners split into triangles (a fan from each "
                "one's first corner): %s is a triangle mesh\n",
                pos_args[0], m.polygons, pos_args[2]);
    if (subdivide && spin_mesh_subdivide(&m, subdivide, err, sizeof err)) {
        fprintf(stderr, "spsolve-spin: %s\n", err);
        spin_mesh_free(&m);
        return 1;
    }
    if (spin_image_read(pos_args[1], &im, err, sizeof err)) {
        fprintf(stderr, "spsolve-spin: %s\n", err);
        spin_mesh_free(&m);
        return 1;
    }
    const double t_read = now() - t0;
    sps_context ctx = NULL;
    sps_status st = sps_context_create(&ctx, be, 0);
    double *pos = malloc(sizeof(double) * 3 * (size_t)m.nv);
    spin_report rep;
    memset(&rep, 0, sizeof rep);
    if (st == SPS_OK && pos) st = spin_transform(ctx, &m, &im, &o, pos, &rep);
    int rc = 0;
    if (st == SPS_OK && pos && rep.rho_zero)
        fprintf(stderr, "spsolve-spin: note: rho is 0 on every face (%s): no change of curvature, so the output is "
                        "the input mesh, normalised\n",
                o.scale == 0 ? "--scale 0"
                             : "no face has texture coordinates at all 3 corners, or those that do sample the image "
                               "at 127.5");
    if (st == SPS_OK && pos && rep.unconverged)
        fprintf(stderr,
                "spsolve-spin: warning: %d of the solves ended above --rtol %g (at their limit of %d iterations, or "
                "stagnating) and their iterate was kept, as the reference does: the shape may be off (relative "
                "residuals: the E solves' in --json's eigen_relative_residuals, Poisson %.3g %.3g %.3g)\n",
                rep.unconverged, o.rtol, o.maxit, rep.poisson_relres[0], rep.poisson_relres[1], rep.poisson_relres[2]);
    if (st != SPS_OK || !pos) {
        fprintf(stderr, "spsolve-spin: %s\n",
                pos && rep.err[0] ? rep.err
                : ctx && *sps_context_error(ctx) ? sps_context_error(ctx)
                                                 : sps_status_name(st));
        /* E is positive definite on the closed meshes CG is the default for; an open surface (a
           single triangle, say) can make it indefinite, which GMRES and BiCGSTAB take */
        if (st == SPS_ERR_BREAKDOWN && (!o.solver || !strcmp(o.solver, "cg")))
            fprintf(stderr, "spsolve-spin: E is not positive definite on this mesh (an open or nearly degenerate "
                            "surface?): --solver gmres or bicgstab take indefinite systems\n");
        rc = 1;
    } else if ((t0 = now(), spin_mesh_write(pos_args[2], &m, pos, err, sizeof err))) {
        fprintf(stderr, "spsolve-spin: %s\n", err);
        rc = 1;
    } else if (png && spin_render_png(png, &m, m.v, pos, 512, err, sizeof err)) {
        fprintf(stderr, "spsolve-spin: %s\n", err);
        rc = 1;
    } else if (json) {
        const double t_write = now() - t0;
        printf("{\"vertices\": %d, \"faces\": %d, \"components\": %d, \"nnz_e\": %d, \"eigen_iterations\": [", m.nv,
               m.nf, rep.components, rep.nnz_e);
        for (int i = 0; i < o.iterations && i < SPIN_MAX_ITERATIONS; i++) printf("%s%d", i ? ", " : "", rep.its[i]);
        printf("], \"eigen_relative_residuals\": [");
        for (int i = 0; i < o.iterations && i < SPIN_MAX_ITERATIONS; i++) {
            if (i) printf(", ");
            app_json_number(stdout, 3, rep.relres[i]); /* JSON has no NaN: null */
        }
        printf("], \"poisson_iterations\": [%d, %d, %d], \"poisson_relative_residuals\": [", rep.poisson_its[0],
               rep.poisson_its[1], rep.poisson_its[2]);
        for (int q = 0; q < 3; q++) {
            if (q) printf(", ");
            app_json_number(stdout, 3, rep.poisson_relres[q]);
        }
        printf("], \"unconverged_solves\": %d, \"rayleigh\": ", rep.unconverged);
        app_json_number(stdout, 17, rep.rayleigh);
        printf(", \"backend\": \"%s\", "
               "\"norm\": \"%s\", \"assembly\": \"%s\", \"reordered\": %s, \"time\": {\"read\": %.6g, \"reorder\": %.6g, "
               "\"upload\": %.6g, \"rho\": %.6g, \"assemble\": %.6g, \"assemble_build\": %.6g, "
               "\"assemble_parts\": [%.6g, %.6g, %.6g], \"eigen\": %.6g, \"eigen_solves\": [",
               sps_context_backend(ctx) == SPS_BACKEND_CUDA ? "cuda" : "cpu", o.norm_inf ? "inf" : "2",
               rep.gpu_assembly ? "gpu" : "host",
               o.reorder ? "true" : "false", t_read, rep.t_reorder, rep.t_upload, rep.t_rho, rep.t_assemble,
               rep.t_assemble_build, rep.t_assemble_parts[0], rep.t_assemble_parts[1], rep.t_assemble_parts[2],
               rep.t_eigen);
        for (int i = 0; i < o.iterations && i < SPIN_MAX_ITERATIONS; i++) printf("%s%.6g", i ? ", " : "", rep.t_solve[i]);
        printf("], \"poisson\": %.6g, \"write\": %.6g}}\n", rep.t_poisson, t_write);
    } else {
        printf("spsolve-spin: %d vertices, %d faces%s, E %d quaternion blocks\n", m.nv, m.nf,
               rep.components > 1 ? " (several connected surfaces, each transformed on its own)" : "", rep.nnz_e);
        printf("  inverse iterations:");
        for (int i = 0; i < o.iterations && i < SPIN_MAX_ITERATIONS; i++) printf(" %d", rep.its[i]);
        printf(" %s iterations; x^H E x = %.6g\n", o.solver ? o.solver : "cg", rep.rayleigh);
        printf("  Poisson: %d %d %d CG iterations\n", rep.poisson_its[0], rep.poisson_its[1], rep.poisson_its[2]);
        printf("  time: read %.3f s, upload %.3f s, rho %.3f s, assemble %.3f s (%s; build %.4f s), eigen %.3f s (solves",
               t_read, rep.t_upload, rep.t_rho, rep.t_assemble, rep.gpu_assembly ? "GPU" : "host", rep.t_assemble_build, rep.t_eigen);
        for (int i = 0; i < o.iterations && i < SPIN_MAX_ITERATIONS; i++) printf(" %.3f", rep.t_solve[i]);
        printf(" s), poisson %.3f s, write %.3f s\n", rep.t_poisson, now() - t0);
        printf("  wrote %s\n", pos_args[2]);
    }
    free(pos);
    sps_context_destroy(ctx);
    spin_image_free(&im);
    spin_mesh_free(&m);
    return rc;
}
