# HiSparse (issue 23, first part): the host structure's exact round trip to CSR and its CPU
# products (y = A x, A^T x) against CSR, every scalar type, node sizes 2..256, the
# adversarial shapes of the issue, node kinds, refusals.
sps_add_unit_test(NAME test_hisparse
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_hisparse.c
  LABELS unit)
