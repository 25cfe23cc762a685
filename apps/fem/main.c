/* spsolve-fem (--beam L,W,H --cells NX,NY,NZ [--tip-load P] | --mesh FILE.msh --clamp TAG)
 *             [--traction TAG:FX,FY,FZ] [--E E] [--nu NU] [--density RHO] [--gravity GX,GY,GZ]
 *             [--rtol R] [--maxit N] [--precond bjacobi|jacobi|none] [--backend auto|cpu|cuda]
 *             [--precision f32|f64 (default f64; f32: rtol 1e-5 unless given)]
 *             [-o OUT.vtu] [--png OUT.png] [--write-matrix K.mtx] [--json]
 * A beam is clamped at x = 0 (--clamp TAG: the nodes of a physical group of triangles
 * instead, with a Gmsh mesh); TAG is a physical name or number.
 * P1 linear elasticity of a cantilever beam clamped at x = 0 (issue 22; fem.h): the
 * summary, or with --json one object (dofs, nnz, iterations, tip_deflection,
 * true_relative_residual, time.assembly, time.setup, time.solve; time.mesh_upload and
 * time.spmv, one product K x, so that the assembly reads as a count of SpMVs). */
#define _POSIX_C_SOURCE 200809L
#include "args.h"
#include "files.h"
#include "fem.h"
#include "json.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage_to(FILE *f, int rc)
{
    fprintf(f, "usage: spsolve-fem (--beam L,W,H --cells NX,NY,NZ [--tip-load P] | --mesh FILE.msh --clamp TAG)\n"
                    "                   [--traction TAG:FX,FY,FZ] [--E E] [--nu NU] [--density RHO] [--gravity GX,GY,GZ]\n"
                    "                   [--rtol R] [--maxit N] [--precond bjacobi|jacobi|none] [--backend auto|cpu|cuda]\n"
                    "                   [--precision f32|f64]\n"
                    "                   [-o OUT.vtu] [--png OUT.png] [--write-matrix K.mtx] [--json]\n");
    return rc;
}
/* exit statuses as spsolve's: 1 a usage or input error, 2 a solve that did not converge */
static int usage(void) { return usage_to(stderr, 1); }

/* A usage error naming the option, its value and what it takes (then the usage). */
static int bad(const char *opt, const char *val, const char *want)
{
    fprintf(stderr, "spsolve-fem: %s%s%s: %s\n", opt, val ? " " : "", val ? val : "", want);
    return usage();
}

/* "a,b,c" into three finite numbers; 0 when it is not that (inf or nan would solve to nan) */
static int three(const char *s, double *v)
{
    char *end = NULL;
    for (int i = 0; i < 3; i++) {
        v[i] = strtod(s, &end);
        if (end == s || (i < 2 ? *end != ',' : *end != 0) || !isfinite(v[i])) return 0;
        s = end + 1;
    }
    return 1;
}

int main(int argc, char **argv)
{
    double beam[3] = {0, 0, 0}, cells[3] = {0, 0, 0};
    fem_options o = {.E = 1000, .nu = 0.3, .tip_load = 1, .density = 1, .rtol = 1e-8, .maxit = 100000,
                     .precond = "bjacobi"};
    const char *vtu = NULL, *png = NULL, *mesh = NULL, *clamp_tag = NULL, *traction = NULL;
    sps_backend be = SPS_BACKEND_AUTO;
    int json = 0, have_beam = 0, have_cells = 0, have_rtol = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        double *x = NULL; /* a real to read from v (args_real: whole and finite) */
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage_to(stdout, 0);
        else if (!v) return bad(a, NULL, "needs a value, or is unknown");
        else if (!strcmp(a, "--beam")) {
            if (!(have_beam = three(v, beam))) return bad(a, v, "expected three finite numbers L,W,H");
            i++;
        } else if (!strcmp(a, "--cells")) {
            if (!(have_cells = three(v, cells))) return bad(a, v, "expected three counts NX,NY,NZ");
            i++;
        }
        else if (!strcmp(a, "--tip-load")) x = &o.tip_load, i++;
        else if (!strcmp(a, "--density")) x = &o.density, i++;
        else if (!strcmp(a, "--mesh")) mesh = v, i++;
        else if (!strcmp(a, "--clamp")) clamp_tag = v, i++;
        else if (!strcmp(a, "--traction")) traction = v, i++;
        else if (!strcmp(a, "--write-matrix")) o.write_matrix = v, i++;
        else if (!strcmp(a, "--gravity")) {
            if (!three(v, o.gravity)) return bad(a, v, "expected three finite numbers GX,GY,GZ");
            i++;
        } else if (!strcmp(a, "-o")) vtu = v, i++;
        else if (!strcmp(a, "--png")) png = v, i++;
        else if (!strcmp(a, "--E")) x = &o.E, i++;
        else if (!strcmp(a, "--nu")) x = &o.nu, i++;
        else if (!strcmp(a, "--rtol")) x = &o.rtol, have_rtol = 1, i++;
        else if (!strcmp(a, "--precision")) {
            if (strcmp(v, "f32") && strcmp(v, "f64")) return bad(a, v, "f32 or f64");
            o.single = !strcmp(v, "f32"), i++;
        }
        else if (!strcmp(a, "--maxit")) {
            if (!args_int(v, 1, INT_MAX, &o.maxit)) return bad(a, v, "an integer in 1..2147483647");
            i++;
        }
        else if (!strcmp(a, "--precond")) o.precond = v, i++;
        else if (!strcmp(a, "--backend")) {
            be = !strcmp(v, "cpu") ? SPS_BACKEND_CPU : !strcmp(v, "cuda") ? SPS_BACKEND_CUDA : SPS_BACKEND_AUTO;
            if (strcmp(v, "cpu") && strcmp(v, "cuda") && strcmp(v, "auto")) return bad(a, v, "auto, cpu or cuda");
            i++;
        } else return bad(a, NULL, "unknown option");
        if (x && !args_real(v, x)) return bad(a, v, "not a finite number");
    }
    if (o.single && !have_rtol) o.rtol = 1e-5; /* as spsolve: f32 reaches about 1e-6 */
    if (mesh ? have_beam || have_cells || !clamp_tag : !have_beam || !have_cells || clamp_tag)
        return bad(mesh ? "--mesh" : "--beam", NULL,
                   mesh ? "takes --clamp, and neither --beam nor --cells" : "takes --cells, and no --clamp");
    if (!(o.E > 0)) return bad("--E", NULL, "must be > 0");
    if (!(o.nu > -1 && o.nu < 0.5)) return bad("--nu", NULL, "must be in (-1, 0.5)");
    if (!(o.rtol > 0 && o.rtol < 1)) return bad("--rtol", NULL, "must be in (0, 1)");
    if (strcmp(o.precond, "bjacobi") && strcmp(o.precond, "jacobi") && strcmp(o.precond, "none"))
        return bad("--precond", o.precond, "bjacobi, jacobi or none");
    for (int k = 0; k < 3; k++) /* in range before the cast (fem_beam adds 1 to each) */
        if (!(fabs(cells[k]) < INT_MAX) || cells[k] != (int)cells[k])
            return bad("--cells", NULL, "three whole numbers of cells");
    {
        const char *const ins[] = {mesh}, *const inn[] = {"--mesh"};
        const char *const outs[] = {vtu, png, o.write_matrix}, *const outn[] = {"-o", "--png", "--write-matrix"};
        if (!files_outputs_ok("spsolve-fem", ins, inn, 1, outs, outn, 3, -1, -1)) return 1;
    }
    char err[512];
    fem_mesh m;
    if (mesh ? fem_gmsh_read(mesh, &m, err, sizeof err)
             : fem_beam(beam[0], beam[1], beam[2], (int)cells[0], (int)cells[1], (int)cells[2], &m, err, sizeof err)) {
        fprintf(stderr, "spsolve-fem: %s\n", err);
        return 1;
    }
    /* on stderr, and with --json too: a part of the domain left out must not go unsaid */
    if (mesh && m.skipped)
        fprintf(stderr, "spsolve-fem: %s: %d elements of other types (or triangles off the tetrahedra) skipped\n", mesh,
                m.skipped);
    if (mesh && m.duplicates)
        fprintf(stderr, "spsolve-fem: %s: %d duplicate elements (one per physical group in MSH2 files) dropped\n", mesh,
               m.duplicates);
    unsigned char *clamp = calloc((size_t)m.nv + 1, 1);
    if (clamp && clamp_tag) {
        const int tag = fem_group(&m, clamp_tag);
        if (tag < 0) {
            fprintf(stderr, "spsolve-fem: --clamp %s: no physical group of triangles of that name or number\n", clamp_tag);
            fem_mesh_free(&m);
            free(clamp);
            return 1;
        }
        fem_clamp_group(&m, tag, clamp);
        o.clamp = clamp;
        int first = -1;
        const int loose = fem_unheld(&m, clamp, &first);
        if (loose) {
            fprintf(stderr,
                    "spsolve-fem: %s: %d of the %d tetrahedra (one at node (%g, %g, %g)) are in a part of the mesh "
                    "that no node of --clamp %s holds: it could move freely, K is singular (a separate body, or a part "
                    "joined to the rest only through skipped elements?)\n",
                    mesh, loose, m.nt, m.v[3 * (size_t)first], m.v[3 * (size_t)first + 1], m.v[3 * (size_t)first + 2],
                    clamp_tag);
            fem_mesh_free(&m);
            free(clamp);
            return 1;
        }
    }
    o.traction_tag = -1;
    if (traction) {
        char name[256]; /* a physical name: at most 255 characters (fem.h) */
        const char *colon = strrchr(traction, ':');
        if (!colon || colon == traction || (size_t)(colon - traction) >= sizeof name || !three(colon + 1, o.traction)) {
            fem_mesh_free(&m);
            free(clamp);
            return bad("--traction", traction, "expected TAG:FX,FY,FZ");
        }
        snprintf(name, sizeof name, "%.*s", (int)(colon - traction), traction);
        if ((o.traction_tag = fem_group(&m, name)) < 0) {
            fprintf(stderr, "spsolve-fem: --traction %s: no physical group of triangles of that name or number\n", name);
            fem_mesh_free(&m);
            free(clamp);
            return 1;
        }
    }
    if (mesh) o.tip_load = 0; /* a beam's end face only */
    sps_context ctx = NULL;
    sps_status st = sps_context_create(&ctx, be, 0);
    double *u = malloc(sizeof(double) * 3 * (size_t)m.nv);
    fem_report rep;
    memset(&rep, 0, sizeof rep);
    if (st == SPS_OK && u) st = fem_solve(ctx, &m, &o, u, &rep);
    int rc = 0;
    if (st == SPS_OK && u && (vtu || png)) { /* von Mises per element, then the grid and the picture */
        double lambda, mu, *vm = malloc(sizeof(double) * ((size_t)m.nt + 1));
        fem_lame(o.E, o.nu, &lambda, &mu);
        if (!vm) snprintf(rep.err, sizeof rep.err, "out of memory for the stresses"), st = SPS_ERR_ALLOC;
        else {
            fem_von_mises(&m, u, lambda, mu, vm);
            if (vtu && fem_write_vtu(vtu, &m, u, vm, rep.err, sizeof rep.err)) st = SPS_ERR_IO;
            else if (png && fem_render_png(png, &m, u, vm, 640, rep.err, sizeof rep.err)) st = SPS_ERR_IO;
        }
        free(vm);
    }
    if (st != SPS_OK || !u) {
        fprintf(stderr, "spsolve-fem: %s\n",
                rep.err[0] ? rep.err : ctx && *sps_context_error(ctx) ? sps_context_error(ctx) : sps_status_name(st));
        rc = st == SPS_ERR_NOT_CONVERGED || st == SPS_ERR_BREAKDOWN ? 2 : 1;
    } else if (json) { /* the numbers through app_json_number: a non-finite one is null */
        printf("{\"dofs\": %d, \"nnz\": %lld, \"nnz_scalar\": %lld, \"iterations\": %d, \"tip_deflection\": ",
               rep.dofs, rep.nnz_blocks, 9 * rep.nnz_blocks, rep.iterations);
        app_json_number(stdout, 10, rep.tip_deflection);
        printf(", \"true_relative_residual\": ");
        app_json_number(stdout, 3, rep.true_relative_residual);
        printf(", \"backend\": \"%s\", \"precision\": \"%s\", \"assembly\": \"%s\", \"precond\": \"%s\", \"time\": {",
               sps_context_backend(ctx) == SPS_BACKEND_CUDA ? "cuda" : "cpu", o.single ? "f32" : "f64",
               rep.gpu_assembly ? "gpu" : "host", o.precond);
        const char *const tk[] = {"assembly", "setup", "solve", "mesh_upload", "spmv"};
        const double tv[] = {rep.t_assembly, rep.t_setup, rep.t_solve, rep.t_upload, rep.t_spmv};
        for (int k = 0; k < 5; k++) {
            printf("%s\"%s\": ", k ? ", " : "", tk[k]);
            app_json_number(stdout, 6, tv[k]);
        }
        printf("}}\n");
    } else {
        if (mesh) printf("spsolve-fem: %s: %d nodes, %d tetrahedra, %d DOFs, %lld 3x3 blocks\n", mesh, m.nv, m.nt, rep.dofs,
                         rep.nnz_blocks);
        else
            printf("spsolve-fem: beam %g x %g x %g, %d x %d x %d cells: %d nodes, %d tetrahedra, %d DOFs, %lld 3x3 "
                   "blocks\n", beam[0], beam[1], beam[2], (int)cells[0], (int)cells[1], (int)cells[2], m.nv, m.nt,
                   rep.dofs, rep.nnz_blocks);
        printf("  CG + %s: %d iterations, true relative residual %.3g\n", o.precond, rep.iterations,
               rep.true_relative_residual);
        if (!mesh) printf("  tip deflection (mean u_z on x = L): %.6g\n", rep.tip_deflection);
        printf("  time: assembly %.4f s (%s", rep.t_assembly, rep.gpu_assembly ? "GPU" : "host");
        if (rep.gpu_assembly) printf("; the mesh's upload %.4f s apart", rep.t_upload);
        printf("), setup %.4f s, solve %.4f s\n", rep.t_setup, rep.t_solve);
        if (rep.t_spmv > 0)
            printf("  one SpMV of K %.4f ms: the assembly took %.0f SpMVs\n", 1e3 * rep.t_spmv,
                   rep.t_assembly / rep.t_spmv);
        if (vtu) printf("  wrote %s (displacement, von_mises)\n", vtu);
        if (png) printf("  wrote %s (the deformed boundary coloured by von Mises stress)\n", png);
    }
    free(u);
    free(clamp);
    sps_context_destroy(ctx);
    fem_mesh_free(&m);
    return rc;
}
