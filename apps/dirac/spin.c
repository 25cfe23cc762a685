/* spsolve-spin: the algorithm (spin.h). */
#define _POSIX_C_SOURCE 200809L
#include "spin.h"
#include "spin_math.h"
#include "render.h"

#include <math.h>
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

/* ---------------------------------------------------------------- rho */
void spin_rho(const spin_mesh *m, const spin_image *im, double scale, double *rho)
{
    for (int f = 0; f < m->nf; f++) rho[f] = spin_face_rho(m->ft, m->vt, im->pix, im->w, im->h, scale, f);
}

/* ---------------------------------------------------------------- E */
void spin_assemble(const spin_mesh *m, const double *rho, int *row, int *col, double *val)
{
    int64_t k = 0;
    for (int f = 0; f < m->nf; f++)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++, k++) {
                const quat q = spin_face_block(m->v, m->f + 3 * f, rho[f], i, j);
                row[k] = m->f[3 * f + i];
                col[k] = m->f[3 * f + j];
                val[4 * k] = q.w;
                val[4 * k + 1] = q.x;
                val[4 * k + 2] = q.y;
                val[4 * k + 3] = q.z;
            }
}

/* ---------------------------------------------------------------- L and omega */
void spin_laplacian_omega(const spin_mesh *m, const double *lam, int *lr, int *lc, double *lv, double *om)
{
    memset(om, 0, sizeof(double) * 4 * (size_t)m->nv);
    int64_t k = 0;
    for (int f = 0; f < m->nf; f++)
        for (int c = 0; c < 3; c++) {
            const spin_corner t = spin_corner_terms(m->v, lam, m->f + 3 * f, c);
            const int pr[4][2] = {{t.i1, t.i1}, {t.i2, t.i2}, {t.i1, t.i2}, {t.i2, t.i1}};
            const double pv[4] = {t.h, t.h, -t.h, -t.h};
            for (int q = 0; q < 4; q++, k++) lr[k] = pr[q][0], lc[k] = pr[q][1], lv[k] = pv[q];
            const double ww[4] = {t.et.w, t.et.x, t.et.y, t.et.z};
            for (int q = 0; q < 4; q++) {
                om[4 * (size_t)t.a + q] -= t.h * ww[q];
                om[4 * (size_t)t.b + q] += t.h * ww[q];
            }
        }
}

/* ---------------------------------------------------------------- components
 * A mesh of several connected surfaces: E and L are block diagonal over them, so each is
 * transformed on its own, as if alone; what couples them is only the scaling that the
 * reference applies to the whole vector.  Inverse iteration then shrinks every component but
 * the one of the smallest eigenvalue by the eigenvalues' ratio per step (the solves' tolerance,
 * global, leaves those parts inaccurate), omega's mean is compatible with L only per
 * component, and the Poisson solve fixes each one's position only up to its own
 * translation: two spheres came out overlaid at the origin, at swapped sizes.  So with more
 * than one component, each component's part is scaled to unit norm before every solve, omega
 * is made compatible per component, and each result is placed at its input's centroid with
 * its input's RMS radius before the usual normalisation.  One component: the reference's
 * steps exactly (none of this runs). */
typedef struct {
    const int *label; /* component of each vertex */
    int ncomp;
} spin_parts;

/* v (per values a vertex, on its backend): each component's part scaled to unit 2-norm
 * (a part of norm 0 left as it is) */
static sps_status parts_unit(sps_vector v, const spin_parts *p, int per)
{
    const size_t n = (size_t)sps_vector_size(v) / (size_t)per;
    double *h = malloc(sizeof(double) * ((size_t)per * n + 1)), *s = calloc((size_t)p->ncomp + 1, sizeof(double));
    sps_status st = h && s ? sps_vector_get(v, h) : SPS_ERR_ALLOC;
    for (size_t i = 0; st == SPS_OK && i < (size_t)per * n; i++) s[p->label[i / (size_t)per]] += h[i] * h[i];
    for (int c = 0; st == SPS_OK && c < p->ncomp; c++) s[c] = s[c] > 0 ? 1.0 / sqrt(s[c]) : 1.0;
    for (size_t i = 0; st == SPS_OK && i < (size_t)per * n; i++) h[i] *= s[p->label[i / (size_t)per]];
    if (st == SPS_OK) st = sps_vector_set(v, h);
    free(h), free(s);
    return st;
}

/* v (a value a vertex): each component's mean subtracted */
static sps_status parts_center(sps_vector v, const spin_parts *p, double *h)
{
    const size_t n = (size_t)sps_vector_size(v);
    double *s = calloc(2 * (size_t)p->ncomp + 1, sizeof(double)), *cnt = s + p->ncomp;
    sps_status st = s ? sps_vector_get(v, h) : SPS_ERR_ALLOC;
    for (size_t i = 0; st == SPS_OK && i < n; i++) s[p->label[i]] += h[i], cnt[p->label[i]] += 1;
    for (size_t i = 0; st == SPS_OK && i < n; i++) h[i] -= s[p->label[i]] / cnt[p->label[i]];
    if (st == SPS_OK) st = sps_vector_set(v, h);
    free(s);
    return st;
}

/* pos (3 n): each component moved and scaled so that its centroid and RMS radius about it are
 * its input's (in, 3 n); SPS_ERR_ALLOC or SPS_OK */
static sps_status parts_place(double *pos, const double *in, const spin_parts *p, int n)
{
    /* per component: count, input centroid (3), output centroid (3), input and output sums of squares */
    double *a = calloc(9 * (size_t)p->ncomp + 1, sizeof(double));
    if (!a) return SPS_ERR_ALLOC;
    for (int i = 0; i < n; i++) {
        double *c = a + 9 * (size_t)p->label[i];
        c[0] += 1;
        for (int q = 0; q < 3; q++) c[1 + q] += in[3 * (size_t)i + q], c[4 + q] += pos[3 * (size_t)i + q];
    }
    for (int k = 0; k < p->ncomp; k++)
        for (int q = 0; q < 6; q++) a[9 * (size_t)k + 1 + q] /= a[9 * (size_t)k];
    for (int i = 0; i < n; i++) {
        double *c = a + 9 * (size_t)p->label[i];
        for (int q = 0; q < 3; q++) {
            const double di = in[3 * (size_t)i + q] - c[1 + q], dp = pos[3 * (size_t)i + q] - c[4 + q];
            c[7] += di * di, c[8] += dp * dp;
        }
    }
    for (int i = 0; i < n; i++) {
        const double *c = a + 9 * (size_t)p->label[i], k = c[8] > 0 ? sqrt(c[7] / c[8]) : 1.0;
        for (int q = 0; q < 3; q++) pos[3 * (size_t)i + q] = c[1 + q] + (pos[3 * (size_t)i + q] - c[4 + q]) * k;
    }
    free(a);
    return SPS_OK;
}

/* ---------------------------------------------------------------- solves */
/* The three Poisson solves L x = omega_q - mean (q = x, y, z; L is singular, omega made
 * compatible), plain CG from x0 = 0 on ctx's backend; the solutions into pos (3 nv,
 * interleaved).  comp: omega's components, in place. */
static sps_status poisson_solves(sps_context ctx, sps_matrix L, sps_vector comp[3], const spin_options *o,
                                 const spin_parts *parts, double *pos, double *scratch, spin_report *rep)
{
    const sps_index n = sps_vector_size(comp[0]);
    const double one = 1.0, zero = 0.0;
    sps_operator op = NULL;
    sps_solver s = NULL;
    sps_vector ones = NULL, x = NULL;
    sps_status st = sps_operator_from_matrix(L, &op);
    if (st == SPS_OK) st = sps_solver_create(ctx, SPS_SOLVER_CG, &s);
    if (st == SPS_OK) st = sps_solver_set_operator(s, op);
    if (st == SPS_OK) st = sps_solver_set_tolerances(s, o->rtol, 0.0, o->maxit);
    if (st == SPS_OK && o->norm_inf) st = sps_solver_set_option(s, "norm", "inf");
    if (st == SPS_OK) st = sps_vector_create(ctx, n, SPS_F64, &ones);
    if (st == SPS_OK) st = sps_vector_fill(ones, &one);
    if (st == SPS_OK) st = sps_vector_create(ctx, n, SPS_F64, &x);
    for (int q = 0; q < 3 && st == SPS_OK; q++) {
        if (parts->ncomp > 1) {
            st = parts_center(comp[q], parts, scratch);
        } else {
            double sum[2] = {0, 0};
            st = sps_vector_dot(ones, comp[q], sum);
            const double minus_mean = n > 0 ? -sum[0] / n : 0.0;
            if (st == SPS_OK) st = sps_vector_axpby(&minus_mean, ones, &one, comp[q]);
        }
        if (st == SPS_OK) st = sps_vector_fill(x, &zero); /* x0 = 0, as the reference */
        sps_result res;
        memset(&res, 0, sizeof res);
        if (st == SPS_OK) st = sps_solver_solve(s, comp[q], x, &res);
        if (st == SPS_ERR_NOT_CONVERGED) st = SPS_OK, rep->unconverged++; /* the iterate at maxit, as the reference */
        rep->poisson_its[q] = res.iterations;
        rep->poisson_relres[q] = res.relative_residual;
        if (st == SPS_OK) st = sps_vector_get(x, scratch);
        for (sps_index i = 0; st == SPS_OK && i < n; i++) pos[3 * (size_t)i + q] = scratch[i];
    }
    sps_vector_destroy(ones);
    sps_vector_destroy(x);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    return st;
}

/* E from spin_assemble's triplets on the host (the CPU backend; the oracle of the GPU's). */
static sps_status assemble_host(sps_context ctx, const spin_mesh *m, const double *rho, sps_matrix *E, double *t_build)
{
    const double t0 = now();
    const size_t nt = 9 * (size_t)m->nf;
    int *row = malloc(sizeof(int) * (nt + 1)), *col = malloc(sizeof(int) * (nt + 1));
    double *val = malloc(sizeof(double) * 4 * (nt + 1));
    sps_status st = SPS_ERR_ALLOC;
    if (row && col && val) {
        spin_assemble(m, rho, row, col, val);
        st = sps_matrix_from_coo_entries(ctx, m->nv, m->nv, (int64_t)nt, row, col, val, sps_entry_quaternion(),
                                         SPS_F64, E);
    }
    free(row);
    free(col);
    free(val);
    *t_build = now() - t0;
    return st;
}

/* Inverse iteration on E from b = 1 (the real quaternion at every vertex), on the
 * context's backend throughout: b and x stay there, one solver serves every solve; the
 * final eigenvector stays there too (*eig, the caller's) and comes back into lam (4n
 * reals, also the start's scratch) only where fetch is set.  Each step: b = b / |b|,
 * x = 0, solve E x = b with Jacobi-preconditioned CG (o->solver: another method; the
 * reference's x0 = 0), b = x. */
static sps_status inverse_iteration(sps_context ctx, sps_matrix E, const spin_options *o, const spin_parts *parts,
                                    int n, double *lam, int fetch, sps_vector *eig, spin_report *rep)
{
    const sps_index N = 4 * (sps_index)n;
    sps_operator op = NULL;
    sps_solver s = NULL;
    sps_precond P = NULL;
    sps_vector b = NULL, x = NULL, y = NULL;
    const double zero = 0.0;
    double nrm = 0, r[2] = {0, 0};
    sps_status st = sps_operator_from_matrix(E, &op);
    if (st == SPS_OK) st = sps_precond_create(E, SPS_PRECOND_JACOBI, &P);
    if (st == SPS_OK) st = sps_solver_create_by_name(ctx, o->solver ? o->solver : "cg", &s);
    if (st == SPS_OK) st = sps_solver_set_operator(s, op);
    if (st == SPS_OK) st = sps_solver_set_precond(s, P);
    if (st == SPS_OK) st = sps_solver_set_tolerances(s, o->rtol, 0.0, o->maxit);
    if (st == SPS_OK && o->norm_inf) st = sps_solver_set_option(s, "norm", "inf");
    for (sps_index i = 0; i < N; i++) lam[i] = i % 4 == 0 ? 1.0 : 0.0;
    if (st == SPS_OK) st = sps_vector_from_host(ctx, N, SPS_F64, lam, &b);
    if (st == SPS_OK) st = sps_vector_create(ctx, N, SPS_F64, &x);
    for (int it = 0; it < o->iterations && st == SPS_OK; it++) {
        if (parts->ncomp > 1) {
            st = parts_unit(b, parts, 4);
        } else {
            st = sps_vector_nrm2(b, &nrm);
            if (st == SPS_OK) {
                const double inv = 1.0 / nrm;
                st = sps_vector_scale(&inv, b);
            }
        }
        if (st == SPS_OK) st = sps_vector_fill(x, &zero);
        if (st != SPS_OK) break;
        sps_result res;
        memset(&res, 0, sizeof res);
        const double t0 = now();
        st = sps_solver_solve(s, b, x, &res);
        if (st == SPS_ERR_NOT_CONVERGED) st = SPS_OK, rep->unconverged++; /* the iterate at maxit, as the reference */
        if (it < SPIN_MAX_ITERATIONS) {
            rep->its[it] = res.iterations;
            rep->relres[it] = res.relative_residual;
            rep->t_solve[it] = now() - t0;
        }
        if (st == SPS_OK) st = sps_vector_copy(x, b);
    }
    if (parts->ncomp > 1) {
        if (st == SPS_OK) st = parts_unit(b, parts, 4);
    } else {
        if (st == SPS_OK) st = sps_vector_nrm2(b, &nrm);
        if (st == SPS_OK) {
            const double inv = 1.0 / nrm;
            st = sps_vector_scale(&inv, b);
        }
    }
    /* the eigenvalue estimate x^H E x / x^H x (x of unit norm; with components, each part of
       unit norm: their mean) */
    if (st == SPS_OK) st = sps_vector_create(ctx, N, SPS_F64, &y);
    if (st == SPS_OK) st = sps_operator_apply(op, SPS_OP_N, NULL, b, NULL, y);
    if (st == SPS_OK) st = sps_vector_dot(b, y, r);
    rep->rayleigh = r[0] / parts->ncomp;
    if (st == SPS_OK && fetch) st = sps_vector_get(b, lam);
    if (st == SPS_OK) *eig = b, b = NULL;
    sps_vector_destroy(b);
    sps_vector_destroy(x);
    sps_vector_destroy(y);
    sps_solver_destroy(s);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    return st;
}

/* The vertices in breadth-first order from vertex 0 (each component from its lowest
 * vertex; neighbours in face order): perm[new] = old.  A vertex's neighbours then sit
 * close to it in every vector, so E's products gather x from a window of the L2
 * instead of from all of it: a subdivided mesh numbers each level's midpoints after
 * all coarser vertices, which scatters every row's columns over the whole vector.
 * Returns 0, or -1 out of memory. */
static int bfs_order(const spin_mesh *m, int *perm)
{
    const int n = m->nv;
    int *ptr = calloc((size_t)n + 1, sizeof *ptr), *adj = malloc(sizeof(int) * 6 * ((size_t)m->nf + 1)),
        *seen = calloc((size_t)n, sizeof *seen);
    if (!ptr || !adj || !seen) {
        free(ptr), free(adj), free(seen);
        return -1;
    }
    for (int f = 0; f < m->nf; f++)
        for (int c = 0; c < 3; c++) ptr[m->f[3 * f + c] + 1] += 2;
    for (int i = 0; i < n; i++) ptr[i + 1] += ptr[i];
    for (int f = 0; f < m->nf; f++) /* edges (a, b), (b, c), (c, a) both ways: ptr[] as the fill */
        for (int c = 0; c < 3; c++) {
            const int a = m->f[3 * f + c], b = m->f[3 * f + (c + 1) % 3];
            adj[ptr[a]++] = b;
            adj[ptr[b]++] = a;
        }
    for (int i = n; i > 0; i--) ptr[i] = ptr[i - 1]; /* back to starts */
    ptr[0] = 0;
    int head = 0, tail = 0;
    for (int root = 0; root < n; root++) {
        if (seen[root]) continue;
        seen[root] = 1;
        perm[tail++] = root;
        while (head < tail) {
            const int v = perm[head++];
            for (int k = ptr[v]; k < ptr[v + 1]; k++)
                if (!seen[adj[k]]) {
                    seen[adj[k]] = 1;
                    perm[tail++] = adj[k];
                }
        }
    }
    free(ptr), free(adj), free(seen);
    return 0;
}

static sps_status transform_core(sps_context ctx, const spin_mesh *m, const spin_image *im, const spin_options *o,
                                 double *pos, spin_report *rep);

sps_status spin_transform(sps_context ctx, const spin_mesh *m, const spin_image *im, const spin_options *o,
                          double *pos, spin_report *rep)
{
    memset(rep, 0, sizeof *rep);
    /* a vertex in no face has an empty row in E and in L: the solves would divide by its zero
     * diagonal (CG's NaN many iterations later), so it is named here instead */
    unsigned char *used = calloc((size_t)m->nv + 1, 1);
    if (!used) {
        snprintf(rep->err, sizeof rep->err, "out of memory for %d vertex flags", m->nv);
        return SPS_ERR_ALLOC;
    }
    for (size_t k = 0; k < 3 * (size_t)m->nf; k++) used[m->f[k]] = 1;
    int unused = -1;
    for (int i = 0; i < m->nv && unused < 0; i++)
        if (!used[i]) unused = i;
    free(used);
    if (unused >= 0) {
        snprintf(rep->err, sizeof rep->err, "vertex %d is in no face (spin_mesh_drop_unused drops such)", unused + 1);
        return SPS_ERR_ARG;
    }
    if (!o->reorder) return transform_core(ctx, m, im, o, pos, rep);
    /* the same computation on the mesh renumbered breadth-first, the positions back in
     * the input's order (faces keep their order, so rho and E's blocks are the same) */
    const double t0 = now();
    const size_t n = (size_t)m->nv;
    spin_mesh r = *m;
    int *perm = malloc(sizeof(int) * (n + 1)), *inv = malloc(sizeof(int) * (n + 1));
    r.v = malloc(sizeof(double) * 3 * (n + 1));
    r.f = malloc(sizeof(int) * 3 * ((size_t)m->nf + 1));
    double *rpos = malloc(sizeof(double) * 3 * (n + 1));
    sps_status st = SPS_ERR_ALLOC;
    if (perm && inv && r.v && r.f && rpos && bfs_order(m, perm) == 0) {
        for (size_t i = 0; i < n; i++) {
            inv[perm[i]] = (int)i;
            memcpy(r.v + 3 * i, m->v + 3 * (size_t)perm[i], 3 * sizeof(double));
        }
        for (size_t k = 0; k < 3 * (size_t)m->nf; k++) r.f[k] = inv[m->f[k]];
        const double t_reorder = now() - t0;
        st = transform_core(ctx, &r, im, o, rpos, rep);
        rep->t_reorder = t_reorder;
        if (st == SPS_OK)
            for (size_t i = 0; i < n; i++) memcpy(pos + 3 * (size_t)perm[i], rpos + 3 * i, 3 * sizeof(double));
    }
    free(perm), free(inv), free(r.v), free(r.f), free(rpos);
    return st;
}

/* The reference's normalisation of n positions: the unweighted mean subtracted, then the
 * largest norm scaled to 1. */
static void normalise(double *pos, int n)
{
    double c3[3] = {0, 0, 0}, rmax = 0;
    for (int i = 0; i < n; i++)
        for (int q = 0; q < 3; q++) c3[q] += pos[3 * (size_t)i + q];
    for (int q = 0; q < 3; q++) c3[q] /= n;
    for (int i = 0; i < n; i++) {
        double r2 = 0;
        for (int q = 0; q < 3; q++) {
            pos[3 * (size_t)i + q] -= c3[q];
            r2 += pos[3 * (size_t)i + q] * pos[3 * (size_t)i + q];
        }
        rmax = r2 > rmax ? r2 : rmax;
    }
    rmax = sqrt(rmax);
    for (size_t i = 0; i < 3 * (size_t)n; i++) pos[i] /= rmax;
}

static sps_status transform_core(sps_context ctx, const spin_mesh *m, const spin_image *im, const spin_options *o,
                                 double *pos, spin_report *rep)
{
    const int n = m->nv, nf = m->nf;
    sps_status st = SPS_ERR_ALLOC;
    double *rho = NULL, *lam = malloc(sizeof(double) * 4 * ((size_t)n + 1)), *scratch = malloc(sizeof(double) * ((size_t)n + 1));
    int *label = malloc(sizeof(int) * ((size_t)n + 1));
    double *om = NULL, *lv = NULL;
    int *lr = NULL, *lc = NULL;
    sps_matrix E = NULL, L = NULL;
    sps_vector eig = NULL, comp[3] = {NULL, NULL, NULL};
#ifdef SPIN_HAVE_CUDA
    spin_gpu *g = NULL;
    const int gpu = sps_context_backend(ctx) == SPS_BACKEND_CUDA;
#else
    const int gpu = 0;
#endif
    if (!lam || !scratch || !label) goto done;
    spin_parts parts = {label, spin_mesh_components(m, label)};
    if (parts.ncomp < 0) goto done;
    rep->components = parts.ncomp;
    double t0 = now();
    /* rho 0 on every face (no texture coordinates, scale 0) prescribes no change of curvature:
     * E = D^H M D then holds the constants in its null space, b = 1 among them, and the solves
     * break down; the transformation is the identity (lambda = 1), so the input, normalised,
     * once E is built (and written).  The first face of nonzero rho ends this scan, at once for
     * any real image. */
    int zero = 1;
    for (int f = 0; f < nf && zero; f++) zero = spin_face_rho(m->ft, m->vt, im->pix, im->w, im->h, o->scale, f) == 0.0;
    /* rho: on the GPU with the mesh and image uploaded once, or on the host */
#ifdef SPIN_HAVE_CUDA
    if (gpu) {
        if ((st = spin_gpu_create(ctx, m, im, &g, rep->err, sizeof rep->err)) != SPS_OK) goto done;
        rep->t_upload = now() - t0;
        t0 = now();
        if ((st = spin_gpu_rho(g, o->scale, NULL)) != SPS_OK) goto done;
    } else
#endif
    {
        if (!(rho = malloc(sizeof(double) * ((size_t)nf + 1)))) goto done;
        spin_rho(m, im, o->scale, rho);
    }
    rep->t_rho = now() - t0;

    /* E = (D - P_rho)^H M (D - P_rho) */
    t0 = now();
#ifdef SPIN_HAVE_CUDA
    if (gpu) {
        rep->gpu_assembly = 1;
        st = spin_gpu_assemble(g, &E, &rep->t_assemble_build, rep->t_assemble_parts);
    } else
#endif
        st = assemble_host(ctx, m, rho, &E, &rep->t_assemble_build);
    if (st != SPS_OK) goto done;
    sps_matrix_info_t info;
    if ((st = sps_matrix_info(E, &info)) != SPS_OK) goto done;
    rep->nnz_e = (int)info.nnz;
    rep->t_assemble = now() - t0;
    if (o->write_matrix && (st = sps_matrix_write_mtx(E, o->write_matrix)) != SPS_OK) goto done;
    if (zero) {
        memcpy(pos, m->v, sizeof(double) * 3 * (size_t)n);
        normalise(pos, n);
        rep->rho_zero = 1;
        goto done;
    }
    t0 = now();
    if ((st = inverse_iteration(ctx, E, o, &parts, n, lam, !gpu, &eig, rep)) != SPS_OK) goto done;
    rep->t_eigen = now() - t0;

    /* the cotangent Laplacian L of the original mesh and the divergence omega of the new edges,
     * its x, y, z as vectors on the context's backend */
    t0 = now();
#ifdef SPIN_HAVE_CUDA
    if (gpu) {
        if ((st = spin_gpu_poisson(g, (const double *)sps_vector_data(eig), &L, comp, NULL)) != SPS_OK) goto done;
    } else
#endif
    {
        st = SPS_ERR_ALLOC;
        const size_t k = 12 * (size_t)nf;
        if (!(om = malloc(sizeof(double) * 4 * ((size_t)n + 1))) || !(lr = malloc(sizeof(int) * (k + 1))) ||
            !(lc = malloc(sizeof(int) * (k + 1))) || !(lv = malloc(sizeof(double) * (k + 1))))
            goto done;
        spin_laplacian_omega(m, lam, lr, lc, lv, om);
        if ((st = sps_matrix_from_coo(ctx, n, n, (int64_t)k, lr, lc, lv, SPS_F64, &L)) != SPS_OK) goto done;
        for (int q = 0; q < 3; q++) { /* x, y, z: the real part is ~0 and not a position */
            for (int i = 0; i < n; i++) scratch[i] = om[4 * (size_t)i + 1 + q];
            if ((st = sps_vector_from_host(ctx, n, SPS_F64, scratch, &comp[q])) != SPS_OK) goto done;
        }
    }
    if ((st = poisson_solves(ctx, L, comp, o, &parts, pos, scratch, rep)) != SPS_OK) goto done;
    if (parts.ncomp > 1 && (st = parts_place(pos, m->v, &parts, n)) != SPS_OK) goto done;
    normalise(pos, n);
    rep->t_poisson = now() - t0;
done:
#ifdef SPIN_HAVE_CUDA
    spin_gpu_destroy(g);
#endif
    sps_matrix_destroy(E);
    sps_matrix_destroy(L);
    sps_vector_destroy(eig);
    for (int q = 0; q < 3; q++) sps_vector_destroy(comp[q]);
    free(rho), free(lam), free(scratch), free(om), free(lr), free(lc), free(lv), free(label);
    return st;
}

int spin_render_png(const char *path, const spin_mesh *m, const double *a, const double *b, int size, char *err,
                    size_t errlen)
{
    const render_mesh v[2] = {{m->nv, m->nf, a, m->f, NULL}, {m->nv, m->nf, b, m->f, NULL}};
    return render_png(path, v, 2, size, err, errlen);
}
