# Compound entries (issue 20): b x b blocks and quaternions in bcsr on the CPU
# backend: every (entry, scalar, layout) product against the scalar expansion,
# construction, export, refusals, and CG / BiCGSTAB / GMRES on a quaternion
# Hermitian and a 3x3-block SPD system against their expansions.
sps_add_unit_test(NAME test_compound
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_compound.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
# the long double reference loops dominate the run time
target_compile_options(test_compound PRIVATE -O2)
# Matrix Market input and output of compound matrices: quaternion files, block
# reading, the scalar expansion, quaternion vectors.
sps_add_unit_test(NAME test_compound_io
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_compound_io.c
  LABELS unit)

# The padded outer layouts bell and bsell (16, 32) of the same entries: products
# against the expansion and bit for bit against bcsr, info, conversions, the
# max-fill refusal, CG as bcsr's (the references: tests/compound_ref.h).
sps_add_unit_test(NAME test_compound_padded
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_compound_padded.c
  LABELS unit
  ENV OMP_WAIT_POLICY=PASSIVE)
target_compile_options(test_compound_padded PRIVATE -O2)
