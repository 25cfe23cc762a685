/* PETSc validation: solve the same systems with libspsolve (CPU backend, f64)
 * and with PETSc KSP configured to follow the same rules, and compare outcome,
 * solution and iteration count.
 *
 *   petsc_compare --solver cg|bicgstab|gmres (--matrices DIR | --generated)
 *                 [--case NAME] [--pc none|jacobi|ilu0|ic0|factor|bjacobi|both|all] [--orth cgs2|mgs] [-v [-v]]
 *   petsc_compare --solver S --matrices DIR --file GROUP/NAME [--maxit N] [-v]
 *
 * --case runs one case of the table; --file any matrix of the folder (to
 * explore).  -v prints both residual histories (where they part) and solves
 * once more with PETSc on b perturbed by <= 1 ulp, to show how much of a
 * discrepancy is the problem's own sensitivity to rounding.
 *
 * Both libraries get the same A (read once by sps_matrix_read_mtx, exported as
 * CSR and copied into a PETSc MATSEQAIJ) and the same b = A*1, computed here
 * from the exported CSR with a plain loop (neither library's SpMV).
 *
 * PETSc settings, chosen so that both stop by the same rule:
 *  - KSPSetNormType(KSP_NORM_UNPRECONDITIONED): the 2-norm of b - A x.
 *  - CG: left preconditioning (standard PCG; PETSc's CG supports the
 *    unpreconditioned norm on the left).  BiCGSTAB (KSPBCGS) and GMRES: right
 *    preconditioning, the only side on which they support that norm.
 *  - Zero initial guess.  KSPConvergedDefault then takes rnorm0 = ||r_0|| =
 *    ||b|| and stops when ||r_k|| <= max(rtol*rnorm0, atol) -- exactly our rule
 *    ||b - A x|| <= max(rtol*||b||, atol).  atol = 0.
 *  - Divergence tolerance disabled (1e300): we have no "diverged" test, so a
 *    residual growing 1e4-fold must not stop PETSc early.
 *  - GMRES: restart 30; orthogonalisation classical Gram-Schmidt with
 *    refinement "always" (two passes, CGS2) by default, or PETSc's modified
 *    Gram-Schmidt with --orth mgs.  PETSc refines only classical GS, so
 *    "MGS + one re-orthogonalisation pass" has no exact PETSc twin; both
 *    variants are orthogonal to working precision on these problems.
 *  - PCNONE / PCJACOBI; ours: no preconditioner / sps_precond JACOBI.
 *  - The factorisations (--pc factor, or ilu0 / ic0): PCICC with CG, PCILU with
 *    BiCGSTAB and GMRES, level 0, natural ordering, shift type NONE (PETSc's ICC
 *    shifts by default); ours: ic0 / ilu0 with exact triangular solves.  Cases
 *    where PETSc does not converge are left out: a missing diagonal entry (both
 *    refuse: e05r0000, lns_131, rajat*, west*, ...), a zero pivot (gre_216a,
 *    gre_343: PETSc's PC fails, ours refuses), an indefinite IC(0) (LF10, LFAT5,
 *    bcsstk03/13/14/15/21, nos1, nos2: ours refuses the negative pivot at setup,
 *    PETSc's CG stops with DIVERGED_INDEFINITE_PC).  Left out though both
 *    converge: bloweybq cg (1 iteration each, solutions 1.6e-3 apart on a nearly
 *    singular matrix), nos7 cg (PETSc stops on its recurrence residual, as with
 *    no preconditioner), and with BiCGSTAB add20 (diff 1.8e-6), gre_185 (4.3e-6),
 *    utm300 (3.7e-6) and rdb1250 (125 / 100 iterations): BiCGSTAB's sensitivity.
 *    Everywhere else the iteration counts agree to the iteration or within 2.
 *  - Block-Jacobi (--pc bjacobi): ours with pc-block-size 3, PETSc's PCVPBJACOBI
 *    with MatSetVariableBlockSizes 3, 3, ..., the rest: the same iteration counts
 *    on every case here (orsirr_1 with BiCGSTAB, 1641 / 1044, left out: its
 *    sensitivity again).
 *
 * Per case: same outcome (converged or not); when both converged,
 * ||x_ours - x_petsc|| / ||x_petsc|| <= 1e-6 and |its_ours - its_petsc| <=
 * 0.10*its_petsc + 2 (the factorisations: 0.15*its_petsc + 3); ours' true residual is also recomputed here and must meet
 * the tolerance.  One line per case, then "N passed, M failed".
 * Exit 0 when none failed, 1 otherwise, 77 when nothing could run (no matrix
 * folder). */
#include "spsolve/spsolve.h"

#include <petscksp.h>
#ifndef PETSC_SUCCESS /* PETSc < 3.19 */
#define PETSC_SUCCESS 0
#endif

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define SKIP_CODE 77
#define RTOL 1e-8
#define XTOL 1e-6

/* Which (solver, preconditioner) pairs a case runs: one bit each. */
enum {
    CG_N = 1, CG_J = 2, BC_N = 4, BC_J = 8, GM_N = 16, GM_J = 32,
    /* the factorisations: IC(0) with CG (PETSc's icc), ILU(0) with BiCGSTAB and GMRES (ilu) */
    CG_F = 64, BC_F = 128, GM_F = 256, FAC = CG_F | BC_F | GM_F,
    /* block-Jacobi with blocks of 3 rows (PETSc's vpbjacobi with sizes 3, 3, ..., the rest) */
    CG_B = 512, BC_B = 1024, GM_B = 2048, BJ = CG_B | BC_B | GM_B,
    CG_ALL = CG_N | CG_J, BC_ALL = BC_N | BC_J, GM_ALL = GM_N | GM_J,
    ALL = CG_ALL | BC_ALL | GM_ALL, NONSYM = BC_ALL | GM_ALL
};

/* A case: a matrix (file "group/name" under the matrix folder, or "gen:...")
 * and the pairs it is compared on.  SPD matrices can take all six. */
typedef struct {
    const char *src;
    unsigned pairs;
    int maxit;
} case_t;

/* Matrix-folder cases, chosen by running both libraries over the whole corpus
 * (petsc_compare --file GROUP/NAME -v).  Every pair listed either converges in
 * both with margin on both criteria, or fails in both ("same outcome").
 *
 * The 1e-6 bound on ||x_ours - x_petsc|| / ||x_petsc|| holds only where the
 * problem does not amplify rounding: two iterates that both satisfy
 * ||b - A x|| <= 1e-8 ||b|| may differ by up to ~cond(A) * 1e-8.  Pairs left
 * out for that reason were checked with -v, which also solves with PETSc once
 * more with b perturbed by <= 1 ulp per entry: in each, PETSc differs from
 * itself about as much as from us, so the difference belongs to the problem
 * (and, for BiCGSTAB and restarted GMRES, to the method's sensitivity), not to
 * either implementation.  Measured (ours vs PETSc | PETSc vs PETSc(b+1ulp)):
 *   LF10     bicgstab none    its 151/117 diff 9.8e-4 | its 212/117 diff 1.9e-3
 *   nos4     bicgstab none    its  68/71  diff 1.0e-6 | its  70/71  diff 1.2e-7 (at the bound)
 *   mhdb416  bicgstab jacobi  its  21/21  diff 3.0e-3 | its  21/21  diff 4.8e-3
 *   bcsstk03 cg none          its 420/415 diff 5.4e-6 | its 414/415 diff 4.9e-6
 *   LFAT5    bicgstab none    its  23/24  diff 5.2e-2 | its  24/24  diff 6.2e-3
 *   nos5     bicgstab none    its 307/321 diff 2.5e-5 | its 333/321 diff 9.0e-6
 *   wathen100 bicgstab none   its 215/214 diff 2.6e-6 | its 216/214 diff 2.6e-6
 *   bcsstk15 gmres jacobi     its 1794/2058 diff 2.6e-4 | its 2573/2058 diff 2.7e-5
 *   sherman1 bicgstab none    its 334/350 diff 1.5e-5 | its 357/350 diff 8.8e-6
 *   steam3   bicgstab none    its 1221/940 diff 5.7e-2 | its 1476/940 diff 9.2e-2
 *   orsirr_1 bicgstab jacobi  its 697/402 diff 3.1e-9 | its 450/402 (iterations)
 *   1138_bus bicgstab jacobi  its 2861/2117          | its 1454/2117 (iterations)
 *   add20    bicgstab jacobi  its 511/1461 diff 1.2e-5 | its 657/1461 diff 1.2e-5
 * Other differences are by design:
 *   nos7 cg none: PETSc reports convergence on its recurrence residual while
 *     the true one is 4.3e-7 > 1e-8; we recompute b - A x before reporting
 *     convergence and stop with "stagnation" (tolerance below attainable accuracy).
 *   Zero diagonal entries (west0067, e05r0000, gre_343, lnsp_511): PETSc's
 *     PCJACOBI uses 1 there, and so does ours by default (with a warning;
 *     jacobi-zero-diagonal = error refuses them).  With GMRES(30) + Jacobi all four
 *     match PETSc (e05r0000 converges in 1117 / 1118 iterations, diff 1.7e-8; the
 *     other three reach maxit 3000 in both, left out for time); BiCGSTAB + Jacobi
 *     on e05r0000 converges in both (442 / 318, diff 3.5e-6: BiCGSTAB's
 *     sensitivity, as above), west0067 breaks down in both.
 * Pairs where both hit maxit after thousands of iterations are left out to
 * keep the run short (they would pass as "same outcome"). */
static const case_t file_cases[] = {
    /* SPD: all three solvers, both preconditioners (the 8 x 3 x 2 core) */
    {"spd/Trefethen_20", ALL | FAC, 3000},
    {"spd/fv1", ALL | FAC | CG_B, 3000},
    {"spd/shallow_water1", ALL | FAC, 3000},
    {"spd/minsurfo", ALL | FAC | CG_B, 3000},
    {"spd/jnlbrng1", ALL | FAC, 3000},
    {"spd/nasa2146", ALL | FAC | CG_B, 3000},
    {"spd/bcsstk16", ALL | FAC | CG_B, 3000},
    {"spd/gridgena", ALL, 300}, /* jacobi: neither converges in 300 (both reach maxit) */
    /* SPD, the pairs that are well conditioned enough */
    {"spd/nos4", CG_ALL | BC_J | GM_ALL | CG_F | CG_B, 3000},
    {"spd/LF10", CG_ALL | BC_J | GM_ALL, 3000},
    {"spd/mhdb416", CG_ALL | GM_J | CG_F, 3000},
    {"spd/1138_bus", CG_ALL | CG_F, 3000},
    {"spd/nos1", CG_ALL, 3000},
    {"spd/bcsstk14", CG_J | GM_J | CG_B, 3000},
    /* SPD with IC(0) (PETSc's icc, no shift) */
    {"spd/wathen100", CG_F, 3000},
    {"spd/nos5", CG_F, 3000},
    {"spd/s1rmq4m1", CG_F, 3000},
    {"spd/lund_b", CG_F, 3000},
    /* nonsymmetric: BiCGSTAB and GMRES */
    {"nonsym/pde900", NONSYM | BC_F | GM_F | BC_B | GM_B, 3000},
    {"nonsym/cage8", NONSYM | BC_F | GM_F, 3000},
    {"nonsym/cage10", NONSYM | BC_F | GM_F | BC_B | GM_B, 3000},
    {"nonsym/sherman4", NONSYM | BC_F | GM_F | BC_B | GM_B, 3000},
    {"nonsym/fs_541_1", NONSYM | BC_F | GM_F, 3000},
    {"nonsym/sherman1", GM_ALL | BC_F | GM_F, 3000},
    {"nonsym/orsirr_1", GM_J | BC_F | GM_F | GM_B, 3000},
    {"nonsym/orsirr_2", BC_J | GM_ALL | BC_F | GM_F, 3000},
    {"nonsym/add20", GM_ALL, 3000},
    {"nonsym/add32", BC_N | GM_ALL | BC_F | GM_F, 3000},
    {"nonsym/rdb1250", BC_ALL | GM_N | GM_F, 3000},
    {"nonsym/steam1", BC_J | GM_J | BC_F | GM_F, 3000},
    {"nonsym/steam3", GM_J | BC_F | GM_F, 3000},
    {"nonsym/hor_131", BC_J | GM_J | BC_F | GM_F, 3000},
    {"nonsym/watt_1", BC_J | GM_ALL | BC_F | GM_F, 3000},
    {"nonsym/jpwh_991", BC_ALL | GM_ALL, 3000}, /* BiCGSTAB breaks down at step 1 in both */
    {"nonsym/west0067", BC_ALL | GM_N, 3000},   /* neither converges: breakdown / maxit; zero diagonal */
    {"nonsym/e05r0000", GM_J, 3000},            /* zero diagonal: Jacobi takes 1, as PETSc */
    /* nonsymmetric with ILU(0) (PETSc's ilu, no shift) */
    {"nonsym/sherman2", BC_F | GM_F, 3000},
    {"nonsym/sherman3", BC_F | GM_F, 3000},
    {"nonsym/steam2", BC_F | GM_F, 3000},
};

/* Generated cases: poisson2d from the library's generator, and a nonsymmetric
 * upwind convection-diffusion operator assembled here. */
static const case_t gen_cases[] = {
    {"gen:poisson2d:12", ALL | FAC, 2000},
    {"gen:poisson2d:40", ALL | FAC | BJ, 2000},
    {"gen:convdiff2d:24", NONSYM | BC_F | GM_F, 2000},
};

/* ------------------------------------------------------------ host CSR */
typedef struct {
    int n, m;
    sps_index *rowptr, *col;
    double *val;
} csr_t;

static void csr_free(csr_t *A)
{
    free(A->rowptr);
    free(A->col);
    free(A->val);
    memset(A, 0, sizeof *A);
}

/* y = A x with a plain loop (the oracle for b and for residual checks). */
static void csr_mv(const csr_t *A, const double *x, double *y)
{
    for (int i = 0; i < A->n; i++) {
        double s = 0.0;
        for (sps_index k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) s += A->val[k] * x[A->col[k]];
        y[i] = s;
    }
}

static double nrm2(int n, const double *v)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

/* Upwind convection-diffusion on an N x N grid, Dirichlet boundary:
 * -Δu + c·∇u with c = (20, 10) and h = 1/(N+1); nonsymmetric, M-matrix. */
static sps_status build_convdiff(sps_context ctx, int N, sps_matrix *A)
{
    int n = N * N;
    double h = 1.0 / (N + 1), cx = 20.0, cy = 10.0;
    sps_index *rp = malloc(sizeof(sps_index) * (size_t)(n + 1));
    sps_index *ci = malloc(sizeof(sps_index) * (size_t)n * 5);
    double *v = malloc(sizeof(double) * (size_t)n * 5);
    if (!rp || !ci || !v) {
        free(rp);
        free(ci);
        free(v);
        return SPS_ERR_ALLOC;
    }
    int k = 0;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            int r = j * N + i;
            rp[r] = k;
            double west = -1.0 - cx * h, east = -1.0, south = -1.0 - cy * h, north = -1.0;
            double diag = 4.0 + cx * h + cy * h;
            if (j > 0) { ci[k] = r - N; v[k++] = south; }
            if (i > 0) { ci[k] = r - 1; v[k++] = west; }
            ci[k] = r;
            v[k++] = diag;
            if (i < N - 1) { ci[k] = r + 1; v[k++] = east; }
            if (j < N - 1) { ci[k] = r + N; v[k++] = north; }
        }
    rp[n] = k;
    sps_status st = sps_matrix_from_csr(ctx, n, n, rp, ci, v, SPS_F64, A);
    free(rp);
    free(ci);
    free(v);
    return st;
}

/* ------------------------------------------------------------ ours */
static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct {
    int converged, iterations;
    double seconds;   /* preconditioner setup + solve, wall clock (bench/cpu_petsc.sh reads it) */
    const char *what; /* reason name */
    double *x;
    double *hist; /* residual history (-v), hist_len entries, malloc'd */
    int hist_len;
} outcome_t;

/* pc: 0 none, 1 Jacobi, 2 IC(0) with CG, else ILU(0), 3 block-Jacobi with blocks of 3 */
static int solve_ours(sps_context ctx, sps_matrix A, int n, const double *b, sps_solver_type stype, int pc,
                      int maxit, outcome_t *out)
{
    sps_operator op = NULL;
    sps_precond P = NULL;
    sps_solver s = NULL;
    sps_vector vb = NULL, vx = NULL;
    sps_status st;
    out->converged = 0;
    out->iterations = -1;
    out->what = "error";
    const double t0 = wall();
    if ((st = sps_operator_from_matrix(A, &op)) != SPS_OK) goto fail;
    if (pc == 3) {
        if ((st = sps_precond_new(ctx, "bjacobi", &P)) != SPS_OK ||
            (st = sps_precond_set_option(P, "pc-block-size", "3")) != SPS_OK ||
            (st = sps_precond_setup(P, NULL, A)) != SPS_OK)
            goto fail;
    } else if (pc && (st = sps_precond_create(A,
                                              pc == 1                    ? SPS_PRECOND_JACOBI
                                              : stype == SPS_SOLVER_CG ? SPS_PRECOND_IC0
                                                                       : SPS_PRECOND_ILU0,
                                              &P)) != SPS_OK)
        goto fail;
    if ((st = sps_solver_create(ctx, stype, &s)) != SPS_OK) goto fail;
    if ((st = sps_solver_set_operator(s, op)) != SPS_OK) goto fail;
    if ((st = sps_solver_set_precond(s, P)) != SPS_OK) goto fail;
    if ((st = sps_solver_set_tolerances(s, RTOL, 0.0, maxit)) != SPS_OK) goto fail;
    if ((st = sps_solver_set_restart(s, 30)) != SPS_OK) goto fail;
    if ((st = sps_vector_from_host(ctx, n, SPS_F64, b, &vb)) != SPS_OK) goto fail;
    if ((st = sps_vector_create(ctx, n, SPS_F64, &vx)) != SPS_OK) goto fail; /* zero initial guess */
    sps_result res;
    memset(&res, 0, sizeof res);
    st = sps_solver_solve(s, vb, vx, &res);
    out->seconds = wall() - t0;
    if (st != SPS_OK && st != SPS_ERR_NOT_CONVERGED && st != SPS_ERR_BREAKDOWN && st != SPS_ERR_NUMERIC) goto fail;
    out->converged = st == SPS_OK;
    out->iterations = res.iterations;
    out->what = sps_reason_name(res.reason);
    free(out->hist);
    out->hist = NULL;
    out->hist_len = 0;
    if (res.history_len > 0 && (out->hist = malloc(sizeof(double) * (size_t)res.history_len))) {
        memcpy(out->hist, res.history, sizeof(double) * (size_t)res.history_len);
        out->hist_len = res.history_len;
    }
    if ((st = sps_vector_get(vx, out->x)) != SPS_OK) goto fail;
    st = SPS_OK;
fail:
    if (st != SPS_OK) fprintf(stderr, "  libspsolve: %s: %s\n", sps_status_name(st), sps_context_error(ctx));
    sps_vector_destroy(vb);
    sps_vector_destroy(vx);
    sps_solver_destroy(s);
    sps_precond_destroy(P);
    sps_operator_destroy(op);
    return st == SPS_OK;
}

/* ------------------------------------------------------------ PETSc */
static int gmres_cgs2 = 1;

static PetscErrorCode petsc_matrix(const csr_t *A, Mat *M)
{
    PetscInt *nnz = NULL, *cols = NULL, maxrow = 1;
    PetscFunctionBeginUser;
    PetscCall(PetscMalloc1(A->n, &nnz));
    for (int i = 0; i < A->n; i++) {
        nnz[i] = A->rowptr[i + 1] - A->rowptr[i];
        if (nnz[i] > maxrow) maxrow = nnz[i];
    }
    PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, A->n, A->m, 0, nnz, M));
    PetscCall(PetscFree(nnz));
    PetscCall(PetscMalloc1(maxrow, &cols));
    for (int i = 0; i < A->n; i++) {
        PetscInt row = i, cnt = A->rowptr[i + 1] - A->rowptr[i];
        for (PetscInt k = 0; k < cnt; k++) cols[k] = A->col[A->rowptr[i] + k];
        PetscCall(MatSetValues(*M, 1, &row, cnt, cols, A->val + A->rowptr[i], INSERT_VALUES));
    }
    PetscCall(PetscFree(cols));
    PetscCall(MatAssemblyBegin(*M, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*M, MAT_FINAL_ASSEMBLY));
    PetscFunctionReturn(PETSC_SUCCESS);
}

static PetscErrorCode solve_petsc(Mat M, int n, const double *b, sps_solver_type stype, int pcid, int maxit,
                                  outcome_t *out)
{
    KSP ksp;
    PC pc;
    Vec vb, vx;
    KSPConvergedReason reason;
    PetscInt its;
    PetscFunctionBeginUser;
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &vb));
    PetscCall(VecDuplicate(vb, &vx));
    {
        PetscScalar *p;
        PetscCall(VecGetArray(vb, &p));
        for (int i = 0; i < n; i++) p[i] = b[i];
        PetscCall(VecRestoreArray(vb, &p));
    }
    PetscCall(VecSet(vx, 0.0));
    PetscCall(KSPCreate(PETSC_COMM_SELF, &ksp));
    PetscCall(KSPSetOperators(ksp, M, M));
    switch (stype) {
    case SPS_SOLVER_CG:
        PetscCall(KSPSetType(ksp, KSPCG));
        PetscCall(KSPSetPCSide(ksp, PC_LEFT));
        break;
    case SPS_SOLVER_BICGSTAB:
        PetscCall(KSPSetType(ksp, KSPBCGS));
        PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
        break;
    case SPS_SOLVER_GMRES:
        PetscCall(KSPSetType(ksp, KSPGMRES));
        PetscCall(KSPSetPCSide(ksp, PC_RIGHT));
        PetscCall(KSPGMRESSetRestart(ksp, 30));
        if (gmres_cgs2) {
            PetscCall(KSPGMRESSetOrthogonalization(ksp, KSPGMRESClassicalGramSchmidtOrthogonalization));
            PetscCall(KSPGMRESSetCGSRefinementType(ksp, KSP_GMRES_CGS_REFINE_ALWAYS));
        } else {
            PetscCall(KSPGMRESSetOrthogonalization(ksp, KSPGMRESModifiedGramSchmidtOrthogonalization));
        }
        break;
    }
    PetscCall(KSPSetNormType(ksp, KSP_NORM_UNPRECONDITIONED));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, pcid == 0   ? PCNONE
                            : pcid == 1 ? PCJACOBI
                            : pcid == 3 ? PCVPBJACOBI
                            : stype == SPS_SOLVER_CG ? PCICC
                                                     : PCILU));
    if (pcid == 3) { /* blocks of 3 rows, the last one what is left */
        PetscInt nb = (n + 2) / 3, *sz;
        PetscCall(PetscMalloc1(nb, &sz));
        for (PetscInt k = 0; k < nb; k++) sz[k] = k + 1 < nb || n % 3 == 0 ? 3 : n % 3;
        PetscCall(MatSetVariableBlockSizes(M, nb, sz));
        PetscCall(PetscFree(sz));
    }
    if (pcid == 2) { /* level 0, natural ordering, no shift: the plain factorisation ours computes by default */
        PetscCall(PCFactorSetLevels(pc, 0));
        PetscCall(PCFactorSetMatOrderingType(pc, MATORDERINGNATURAL));
        PetscCall(PCFactorSetShiftType(pc, MAT_SHIFT_NONE));
    }
    PetscCall(KSPSetTolerances(ksp, RTOL, 0.0, 1e300, maxit));
    PetscCall(KSPSetInitialGuessNonzero(ksp, PETSC_FALSE));
    PetscCall(KSPSetErrorIfNotConverged(ksp, PETSC_FALSE));
    PetscCall(KSPSetResidualHistory(ksp, NULL, PETSC_DECIDE, PETSC_TRUE));
    const double t0 = wall();
    PetscCall(KSPSetUp(ksp));
    PetscCall(KSPSolve(ksp, vb, vx));
    out->seconds = wall() - t0;
    {
        const PetscReal *h;
        PetscInt hn;
        PetscCall(KSPGetResidualHistory(ksp, &h, &hn));
        free(out->hist);
        out->hist = NULL;
        out->hist_len = 0;
        if (hn > 0 && (out->hist = malloc(sizeof(double) * (size_t)hn))) {
            for (PetscInt i = 0; i < hn; i++) out->hist[i] = (double)h[i];
            out->hist_len = (int)hn;
        }
    }
    PetscCall(KSPGetConvergedReason(ksp, &reason));
    PetscCall(KSPGetIterationNumber(ksp, &its));
    out->converged = reason > 0;
    out->iterations = (int)its;
    out->what = KSPConvergedReasons[reason];
    {
        const PetscScalar *p;
        PetscCall(VecGetArrayRead(vx, &p));
        for (int i = 0; i < n; i++) out->x[i] = PetscRealPart(p[i]);
        PetscCall(VecRestoreArrayRead(vx, &p));
    }
    PetscCall(KSPDestroy(&ksp));
    PetscCall(VecDestroy(&vb));
    PetscCall(VecDestroy(&vx));
    PetscFunctionReturn(PETSC_SUCCESS);
}

/* ------------------------------------------------------------ driver */
static int n_pass = 0, n_fail = 0, n_skip = 0, verbose = 0;

/* the "none" bit of a solver; its "jacobi" bit is the next one */
static unsigned pair_bit(sps_solver_type t)
{
    return t == SPS_SOLVER_CG ? CG_N : t == SPS_SOLVER_BICGSTAB ? BC_N : GM_N;
}

/* the bit of (solver, pc): pc 0 none, 1 Jacobi, 2 the factorisation */
static unsigned pc_bit(sps_solver_type t, int pc)
{
    if (pc < 2) return pair_bit(t) << pc;
    if (pc == 3) return t == SPS_SOLVER_CG ? CG_B : t == SPS_SOLVER_BICGSTAB ? BC_B : GM_B;
    return t == SPS_SOLVER_CG ? CG_F : t == SPS_SOLVER_BICGSTAB ? BC_F : GM_F;
}

static const char *solver_name(sps_solver_type t)
{
    return t == SPS_SOLVER_CG ? "cg" : t == SPS_SOLVER_BICGSTAB ? "bicgstab" : "gmres";
}

/* Load a case's matrix: into our context (A) and as host CSR (h). */
static int load(sps_context ctx, const char *dir, const char *src, sps_matrix *A, csr_t *h)
{
    sps_status st;
    if (!strncmp(src, "gen:convdiff2d:", 15)) {
        st = build_convdiff(ctx, atoi(src + 15), A);
    } else if (!strncmp(src, "gen:", 4)) {
        st = sps_matrix_generate(ctx, src + 4, SPS_F64, A);
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.mtx.gz", dir, src);
        st = sps_matrix_read_mtx(ctx, path, SPS_F64, A);
    }
    if (st != SPS_OK) {
        printf("%s: cannot load: %s: %s\n", src, sps_status_name(st), sps_context_error(ctx));
        return 0;
    }
    sps_matrix_info_t info;
    if ((st = sps_matrix_info(*A, &info)) != SPS_OK) return 0;
    h->n = info.rows;
    h->m = info.cols;
    h->rowptr = malloc(sizeof(sps_index) * ((size_t)info.rows + 1));
    h->col = malloc(sizeof(sps_index) * (size_t)(info.nnz ? info.nnz : 1));
    h->val = malloc(sizeof(double) * (size_t)(info.nnz ? info.nnz : 1));
    if (!h->rowptr || !h->col || !h->val || sps_matrix_export_csr(*A, h->rowptr, h->col, h->val) != SPS_OK) {
        printf("%s: export failed: %s\n", src, sps_context_error(ctx));
        csr_free(h);
        sps_matrix_destroy(*A);
        *A = NULL;
        return 0;
    }
    return 1;
}

static const char *short_name(const char *src)
{
    if (!strncmp(src, "gen:", 4)) return src + 4;
    const char *s = strrchr(src, '/');
    return s ? s + 1 : src;
}

static void run_case(sps_context ctx, const char *dir, const case_t *c, sps_solver_type stype, const char *pcsel)
{
    sps_matrix A = NULL;
    csr_t h = {0};
    Mat M = NULL;
    if (!load(ctx, dir, c->src, &A, &h)) {
        n_fail++;
        return;
    }
    int n = h.n;
    double *ones = calloc((size_t)n, sizeof(double)), *b = calloc((size_t)n, sizeof(double));
    double *r = malloc(sizeof(double) * (size_t)n);
    outcome_t ours = {0}, pets = {0};
    ours.x = malloc(sizeof(double) * (size_t)n);
    pets.x = malloc(sizeof(double) * (size_t)n);
    if (!ones || !b || !r || !ours.x || !pets.x) {
        printf("%s: out of memory\n", c->src);
        n_fail++;
        goto done;
    }
    for (int i = 0; i < n; i++) ones[i] = 1.0;
    csr_mv(&h, ones, b); /* b = A*1, the same for both */
    double bnorm = nrm2(n, b);
    if (petsc_matrix(&h, &M) != PETSC_SUCCESS) {
        printf("%s: PETSc matrix assembly failed\n", c->src);
        n_fail++;
        goto done;
    }
    for (int pc = 0; pc < 4; pc++) {
        const char *pcname = pc == 0   ? "none"
                             : pc == 1 ? "jacobi"
                             : pc == 3 ? "bjacobi"
                             : stype == SPS_SOLVER_CG ? "ic0"
                                                      : "ilu0";
        if (strcmp(pcsel, "all") && !(pc < 2 && !strcmp(pcsel, "both")) && strcmp(pcsel, pcname) &&
            !(pc == 2 && !strcmp(pcsel, "factor")))
            continue;
        if (!(c->pairs & pc_bit(stype, pc))) continue;
        int ok_ours = solve_ours(ctx, A, n, b, stype, pc, c->maxit, &ours);
        PetscErrorCode perr = solve_petsc(M, n, b, stype, pc, c->maxit, &pets);
        char why[256] = "";
        int pass = 1;
        double rel = NAN, ours_res = NAN, pets_res = NAN, err1 = NAN;
        if (!ok_ours || perr != PETSC_SUCCESS) {
            pass = 0;
            snprintf(why, sizeof why, " (%s failed to run)", !ok_ours ? "libspsolve" : "PETSc");
        } else {
            /* independent residuals and distance of the two solutions */
            csr_mv(&h, ours.x, r);
            for (int i = 0; i < n; i++) r[i] = b[i] - r[i];
            ours_res = nrm2(n, r) / bnorm;
            csr_mv(&h, pets.x, r);
            for (int i = 0; i < n; i++) r[i] = b[i] - r[i];
            pets_res = nrm2(n, r) / bnorm;
            for (int i = 0; i < n; i++) r[i] = ours.x[i] - pets.x[i];
            rel = nrm2(n, r) / nrm2(n, pets.x);
            for (int i = 0; i < n; i++) r[i] = ours.x[i] - 1.0;
            err1 = nrm2(n, r) / sqrt((double)n);
            if (ours.converged != pets.converged) {
                pass = 0;
                snprintf(why, sizeof why, " (outcome differs)");
            } else if (ours.converged) {
                /* the factorisations: 15 % + 3 (issue 21), rounding in the factors moves them more */
                double slack = pc == 2 ? 0.15 * pets.iterations + 3.0 : 0.10 * pets.iterations + 2.0;
                if (!(rel <= XTOL)) {
                    pass = 0;
                    snprintf(why, sizeof why, " (solutions differ: %.2e > %.0e)", rel, XTOL);
                }
                if (fabs((double)ours.iterations - pets.iterations) > slack) {
                    pass = 0;
                    size_t l = strlen(why);
                    snprintf(why + l, sizeof why - l, " (iterations differ by more than %.1f)", slack);
                }
                /* ours claims the true residual meets rtol; allow rounding in
                 * the recomputation only */
                if (!(ours_res <= RTOL * (1.0 + 1e-3))) {
                    pass = 0;
                    size_t l = strlen(why);
                    snprintf(why + l, sizeof why - l, " (our residual %.3e above rtol)", ours_res);
                }
            }
        }
        if (verbose && perr == PETSC_SUCCESS) {
            /* How sensitive is the problem itself to rounding?  PETSc again,
             * with b perturbed by at most 1 ulp per entry: when PETSc differs
             * from itself as much as from us, the discrepancy belongs to the
             * problem and the method, not to either implementation. */
            outcome_t self = {0};
            double *bp = malloc(sizeof(double) * (size_t)n);
            self.x = malloc(sizeof(double) * (size_t)n);
            if (bp && self.x) {
                for (int i = 0; i < n; i++) bp[i] = b[i] * (1.0 + (double)((int)((unsigned)i * 2654435761u % 3u) - 1) * 2.220446049250313e-16);
                if (solve_petsc(M, n, bp, stype, pc, c->maxit, &self) == PETSC_SUCCESS) {
                    for (int i = 0; i < n; i++) r[i] = self.x[i] - pets.x[i];
                    printf("    petsc vs petsc(b + 1ulp): its %d/%d  reldiff %.2e  %s\n", self.iterations, pets.iterations,
                           nrm2(n, r) / nrm2(n, pets.x), self.what);
                }
            }
            free(bp);
            free(self.x);
            free(self.hist);
        }
        if (verbose) {
            /* residual histories side by side, and where they part */
            int common = ours.hist_len < pets.hist_len ? ours.hist_len : pets.hist_len, part = -1;
            for (int k = 0; k < common; k++) {
                double d = fabs(ours.hist[k] - pets.hist[k]) / fmax(pets.hist[k], 1e-300);
                if (part < 0 && d > 1e-6) part = k;
                if (verbose > 1 || k < 5 || (part >= 0 && k < part + 5) || k % 50 == 0)
                    printf("    k %5d  ours %.15e  petsc %.15e  rel %.1e\n", k, ours.hist[k], pets.hist[k], d);
            }
            printf("    histories: ours %d, petsc %d entries; first relative difference > 1e-6 at k = %d\n",
                   ours.hist_len, pets.hist_len, part);
        }
        printf("%-14s %-8s %-6s its %5d/%-5d reldiff %.2e  res %.1e/%.1e  |x-1| %.1e  %s/%s  ms %.3g/%.3g  %s%s\n",
               short_name(c->src), solver_name(stype), pcname, ours.iterations, pets.iterations, rel, ours_res,
               pets_res, err1, ours.what, pets.what, 1e3 * ours.seconds, 1e3 * pets.seconds, pass ? "PASS" : "FAIL",
               why);
        fflush(stdout);
        if (pass) n_pass++;
        else n_fail++;
    }
done:
    if (M) MatDestroy(&M);
    free(ones);
    free(b);
    free(r);
    free(ours.x);
    free(pets.x);
    free(ours.hist);
    free(pets.hist);
    csr_free(&h);
    sps_matrix_destroy(A);
}

static int usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s --solver cg|bicgstab|gmres (--matrices DIR | --generated) [--case NAME]\n"
            "          [--pc none|jacobi|ilu0|ic0|factor|bjacobi|both|all] [--orth cgs2|mgs] [-v [-v]] [--file GROUP/NAME [--maxit N]]\n",
            argv0);
    return 2;
}

int main(int argc, char **argv)
{
    const char *solver = NULL, *dir = NULL, *only = NULL, *pcsel = "all", *extra = NULL;
    int extra_maxit = 3000;
    int generated = 0, matrices = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--solver") && i + 1 < argc) solver = argv[++i];
        else if (!strcmp(argv[i], "--matrices") && i + 1 < argc) { matrices = 1; dir = argv[++i]; }
        else if (!strcmp(argv[i], "--matrices")) matrices = 1;
        else if (!strcmp(argv[i], "--generated")) generated = 1;
        else if (!strcmp(argv[i], "--case") && i + 1 < argc) only = argv[++i];
        else if (!strcmp(argv[i], "--file") && i + 1 < argc) extra = argv[++i];
        else if (!strcmp(argv[i], "--maxit") && i + 1 < argc) extra_maxit = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--pc") && i + 1 < argc) pcsel = argv[++i];
        else if (!strcmp(argv[i], "--orth") && i + 1 < argc) gmres_cgs2 = strcmp(argv[++i], "mgs") != 0;
        else if (!strcmp(argv[i], "-v")) verbose++;
        else return usage(argv[0]);
    }
    sps_solver_type stype;
    if (!solver) return usage(argv[0]);
    if (!strcmp(solver, "cg")) stype = SPS_SOLVER_CG;
    else if (!strcmp(solver, "bicgstab")) stype = SPS_SOLVER_BICGSTAB;
    else if (!strcmp(solver, "gmres")) stype = SPS_SOLVER_GMRES;
    else return usage(argv[0]);
    if (!generated && !matrices) return usage(argv[0]);
    const unsigned bits = pair_bit(stype) * 3 | pc_bit(stype, 2) | pc_bit(stype, 3); /* none | jacobi | factor | bj */

    if (matrices) {
        if (!dir || !dir[0]) dir = getenv("SPS_MATRIX_DIR");
        char path[4096];
        struct stat sb;
        if (dir && dir[0]) snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
        if (!dir || !dir[0] || stat(path, &sb) != 0) {
            printf("matrix folder not configured (SPS_MATRIX_DIR): file-based %s cases skipped\n", solver);
            if (!generated) return SKIP_CODE;
            matrices = 0;
        }
    }

    /* PETSc sees no command-line options of ours (argc 1). */
    int pargc = 1;
    char **pargv = argv;
    if (PetscInitialize(&pargc, &pargv, NULL, NULL) != PETSC_SUCCESS) {
        fprintf(stderr, "PetscInitialize failed\n");
        return 1;
    }
    if (verbose) printf("PETSc %d.%d.%d, libspsolve %s\n", PETSC_VERSION_MAJOR, PETSC_VERSION_MINOR,
                        PETSC_VERSION_SUBMINOR, sps_version());
    sps_context ctx = NULL;
    if (sps_context_create(&ctx, SPS_BACKEND_CPU, 0) != SPS_OK) {
        fprintf(stderr, "sps_context_create failed\n");
        return 1;
    }
    printf("%-14s %-8s %-6s its %5s/%-5s %s\n", "matrix", "solver", "pc", "ours", "petsc",
           "(reldiff = |x_ours-x_petsc|/|x_petsc|; res = |b-Ax|/|b| ours/petsc; |x-1| = rms error)");
    if (extra) { /* exploration: one file "group/name" under the folder, any solver */
        const case_t c = {extra, ALL | FAC | BJ, extra_maxit};
        run_case(ctx, dir, &c, stype, pcsel);
    } else if (matrices)
        for (size_t i = 0; i < sizeof file_cases / sizeof *file_cases; i++) {
            if (!(file_cases[i].pairs & bits)) continue;
            if (only && strcmp(only, short_name(file_cases[i].src))) continue;
            run_case(ctx, dir, &file_cases[i], stype, pcsel);
        }
    if (generated)
        for (size_t i = 0; i < sizeof gen_cases / sizeof *gen_cases; i++) {
            if (!(gen_cases[i].pairs & bits)) continue;
            if (only && strcmp(only, short_name(gen_cases[i].src))) continue;
            run_case(ctx, dir, &gen_cases[i], stype, pcsel);
        }
    sps_context_destroy(ctx);
    PetscFinalize();
    (void)n_skip;
    printf("%d passed, %d failed\n", n_pass, n_fail);
    if (n_pass + n_fail == 0) return SKIP_CODE;
    return n_fail ? 1 : 0;
}
