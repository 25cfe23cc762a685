# Unit tests of HYB, JDS and DIA (label unit) and their GPU comparison against
# the CPU backend (label gpu; exits 77 = skipped without a CUDA device).
# test_other_formats takes the real-matrix corpus as argv[1] when configured
# (otherwise env SPS_MATRIX_DIR; that part is skipped when absent).
set(_other_formats_args "")
if(SPS_MATRIX_DIR)
  list(APPEND _other_formats_args "${SPS_MATRIX_DIR}")
endif()
sps_add_unit_test(NAME test_other_formats
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_other_formats.c
  ARGS ${_other_formats_args}
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
# the long double reference loops dominate the run time: optimise the test code
target_compile_options(test_other_formats PRIVATE -O2)
sps_add_unit_test(NAME test_gpu_other_formats
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_other_formats.c
  LABELS gpu
  ENV OMP_WAIT_POLICY=PASSIVE)
target_compile_options(test_gpu_other_formats PRIVATE -O2)
