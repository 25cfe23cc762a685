# GPU tests (label gpu): the CUDA backend against the CPU reference.
#   test_gpu_kernels  every BLAS-1 and fused solver kernel of the CUDA table, OOM, backend
#   test_gpu_spmv     CSR/COO SpMV and SpMV^T on random, adversarial and SuiteSparse matrices
#   test_gpu_solvers  CG/BiCGSTAB/GMRES x none/Jacobi on CUDA vs CPU (once the solvers exist)
# They are built in every configuration; without CUDA (or without a device) they
# exit 77 and CTest reports them skipped.  SPS_GPU_TEST_SMALL=1 caps the sizes
# (tests/gpu_check.sh uses it under compute-sanitizer).
set(_sps_gpu_common ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c)
set(_sps_gpu_tests test_gpu_kernels test_gpu_spmv)
if(EXISTS ${CMAKE_SOURCE_DIR}/solvers/solver.c AND EXISTS ${CMAKE_SOURCE_DIR}/precond/precond.c)
  list(APPEND _sps_gpu_tests test_gpu_solvers)
endif()
foreach(_t ${_sps_gpu_tests})
  set(_args "")
  if(_t STREQUAL "test_gpu_spmv" AND SPS_MATRIX_DIR)
    list(APPEND _args "${SPS_MATRIX_DIR}")
  endif()
  sps_add_unit_test(NAME ${_t}
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${_t}.c ${_sps_gpu_common}
    ARGS ${_args}
    LABELS gpu)
  target_compile_options(${_t} PRIVATE -O2)
  if(SPS_HAVE_CUDA)
    target_compile_definitions(${_t} PRIVATE SPS_HAVE_CUDA)
  endif()
  set_tests_properties(${_t} PROPERTIES TIMEOUT 900)
endforeach()
# solver-level determinism on CUDA (issue 24 item 11): test_determinism.c with
# SPS_DET_GPU, every format x solver solved three times, bit for bit
if(EXISTS ${CMAKE_SOURCE_DIR}/solvers/solver.c)
  sps_add_unit_test(NAME test_gpu_determinism
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_determinism.c ${_sps_gpu_common}
    LABELS gpu)
  target_compile_definitions(test_gpu_determinism PRIVATE SPS_DET_GPU)
  if(SPS_HAVE_CUDA)
    target_compile_definitions(test_gpu_determinism PRIVATE SPS_HAVE_CUDA)
  endif()
  set_tests_properties(test_gpu_determinism PROPERTIES TIMEOUT 900)
endif()
# device allocation fault injection (issue 24 item 10): test_fault.c with SPS_FAULT_GPU,
# meaningful in a -DSPSOLVE_FAULT_INJECTION=ON CUDA build (tests/gpu_check.sh makes one)
if(EXISTS ${CMAKE_SOURCE_DIR}/solvers/solver.c)
  sps_add_unit_test(NAME test_gpu_fault
    SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_fault.c ${_sps_gpu_common}
    LABELS gpu)
  target_compile_definitions(test_gpu_fault PRIVATE SPS_FAULT_GPU)
  if(SPS_HAVE_CUDA)
    target_compile_definitions(test_gpu_fault PRIVATE SPS_HAVE_CUDA)
  endif()
  if(SPSOLVE_FAULT_INJECTION)
    target_compile_definitions(test_gpu_fault PRIVATE SPS_FAULT_INJECTION_BUILD)
  endif()
  set_tests_properties(test_gpu_fault PROPERTIES TIMEOUT 900)
endif()
