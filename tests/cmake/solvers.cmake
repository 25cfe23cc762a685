# Unit tests of the Krylov solvers and their fused kernels (test_solvers) and of
# the preconditioners (test_precond).  The SuiteSparse corpus, when configured,
# is argv[1] (otherwise env SPS_MATRIX_DIR); that part is skipped when absent.
set(_solvers_args "")
if(SPS_MATRIX_DIR)
  list(APPEND _solvers_args "${SPS_MATRIX_DIR}")
endif()
# OMP_WAIT_POLICY=PASSIVE: idle OpenMP threads must not spin between the many
# small kernels of a solve on a small machine running other tests at once.
sps_add_unit_test(NAME test_solvers
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_solvers.c
  ARGS ${_solvers_args}
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
target_link_libraries(test_solvers PRIVATE OpenMP::OpenMP_C) # thread-count determinism of the fused reductions
# The preconditioners: test_precond (the protocol, Jacobi, the shell), test_ilu (the
# factors against a dense reference, sweeps, errors, CG), test_cheby (p(A) against
# its formula, Hermitian, CG, refusal), test_bjacobi (its kernels, the blocks it
# finds, singular blocks, CG); test_determinism (every format x solver, bit-identical across
# 1, 2, 3 threads).
foreach(t test_precond test_ilu test_cheby test_bjacobi test_determinism)
  sps_add_unit_test(NAME ${t}
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${t}.c
    LABELS unit
    ENV OMP_WAIT_POLICY=PASSIVE)
endforeach()
