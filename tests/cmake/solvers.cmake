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
sps_add_unit_test(NAME test_precond
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_precond.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
# ILU(0) / IC(0): the factors against a dense reference, sweeps, errors, CG
sps_add_unit_test(NAME test_ilu
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_ilu.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
# Chebyshev: p(A) against its formula, Hermitian, CG with it, refusal
sps_add_unit_test(NAME test_cheby
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_cheby.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
# block-Jacobi: its kernels, the blocks it finds, singular blocks, CG with it
sps_add_unit_test(NAME test_bjacobi
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_bjacobi.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
