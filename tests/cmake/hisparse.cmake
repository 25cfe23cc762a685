# HiSparse (issue 23): the host structure's exact round trip to CSR and its CPU
# products (y = A x, A^T x) against CSR, every scalar type, node sizes 2..256, the
# adversarial shapes of the issue, node kinds, refusals.
sps_add_unit_test(NAME test_hisparse
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hisparse.c
  LABELS unit)
# The registered format on the GPU (label gpu; exit 77 = skipped without a GPU): export,
# footprint and SpMV / SpMV^T against the reference and the CPU backend's product.
sps_add_unit_test(NAME test_gpu_hisparse
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_hisparse.c ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c
  LABELS gpu)
target_compile_options(test_gpu_hisparse PRIVATE -O2)
