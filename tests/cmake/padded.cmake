# Unit tests of the padded formats (ELLPACK-R, SELL-C-sigma, RgCSR) on the CPU
# backend, and their GPU comparison (label gpu; exit 77 = skipped without a GPU).
# test_padded takes the real-matrix corpus as argv[1] when configured
# (otherwise env SPS_MATRIX_DIR; that part is skipped when absent).
set(_padded_args "")
if(SPS_MATRIX_DIR)
  list(APPEND _padded_args "${SPS_MATRIX_DIR}")
endif()
sps_add_unit_test(NAME test_padded
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_padded.c
  ARGS ${_padded_args}
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
target_link_libraries(test_padded PRIVATE OpenMP::OpenMP_C)
# the long double reference loops dominate the run time: optimise the test code
target_compile_options(test_padded PRIVATE -O2)

sps_add_unit_test(NAME test_gpu_padded
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_padded.c ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c
  ARGS ${_padded_args}
  LABELS gpu)
target_compile_options(test_gpu_padded PRIVATE -O2)
