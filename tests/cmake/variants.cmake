# test_gpu_variants (label gpu): every non-default launch variant compiled in
# (kernels/launch.h: CSR row groups, Hola, padded) against the CPU reference, and
# invalid variants refused with SPS_ERR_ARG.  Exit 77 (skipped) without a GPU.
sps_add_unit_test(NAME test_gpu_variants
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_variants.c ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c
  LABELS gpu)
target_compile_options(test_gpu_variants PRIVATE -O2)
set_tests_properties(test_gpu_variants PROPERTIES TIMEOUT 900)

# test_gpu_precond (label gpu): every preconditioner's application on the GPU
# against the CPU's, and solves with ic0 / ilu0 / bjacobi.  Exit 77 without a GPU.
sps_add_unit_test(NAME test_gpu_precond
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_precond.c ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c
  LABELS gpu)
set_tests_properties(test_gpu_precond PROPERTIES TIMEOUT 600)
