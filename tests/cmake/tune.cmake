# The autotuner (sps_matrix_tune, issue 20 item 6) on the CPU backend: the pick
# against the reference, the tuning file (round trip, corrupt file, other entries,
# off, the default path, symbolic links), budget 0, padding pruned by the model,
# compound candidates, sps_matrix_convert_spec.  argv[1]: its scratch directory.
sps_add_unit_test(NAME test_tune
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_tune.c
  ARGS ${CMAKE_CURRENT_BINARY_DIR}/test_tune.d
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
