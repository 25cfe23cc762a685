# Matrix Market reader/writer (io/mmio.c).
# argv[1]: tests/data (bad/*.mtx + bad/EXPECTED.tsv); argv[2]: the real-matrix
# corpus when configured (otherwise that part of the test prints "skipped").
set(_mmio_args "${SPS_TEST_DATA}")
if(SPS_MATRIX_DIR)
  list(APPEND _mmio_args "${SPS_MATRIX_DIR}")
endif()
sps_add_unit_test(NAME test_mmio
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_mmio.c
  ARGS ${_mmio_args}
  LABELS unit)
# the test writes gzip files itself
target_link_libraries(test_mmio PRIVATE ZLIB::ZLIB)
