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
# A CPU test's source rebuilt for the GPU: sps_gpu_twin(NAME SOURCE DEFINE [more definitions])
function(sps_gpu_twin name source)
  sps_add_unit_test(NAME ${name} SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/${source} ${_sps_gpu_common} LABELS gpu)
  target_compile_definitions(${name} PRIVATE ${ARGN})
  if(SPS_HAVE_CUDA)
    target_compile_definitions(${name} PRIVATE SPS_HAVE_CUDA)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT 900)
endfunction()
if(EXISTS ${CMAKE_SOURCE_DIR}/solvers/solver.c)
  # solver-level determinism on CUDA (issue 24 item 11): every format x solver three times
  sps_gpu_twin(test_gpu_determinism test_determinism.c SPS_DET_GPU)
  # device allocation fault injection (issue 24 item 10), meaningful in a
  # -DSPSOLVE_FAULT_INJECTION=ON CUDA build (tests/gpu_check.sh makes one)
  if(SPSOLVE_FAULT_INJECTION)
    sps_gpu_twin(test_gpu_fault test_fault.c SPS_FAULT_GPU SPS_FAULT_INJECTION_BUILD)
  else()
    sps_gpu_twin(test_gpu_fault test_fault.c SPS_FAULT_GPU)
  endif()
endif()
