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

# The CUDA compound kernels (bcsr, bell, bsell; kernels/cuda/compound.cu) against
# the CPU on the same arrays, their launch variants, CG on the GPU (label gpu;
# exit 77 = skipped without a GPU).
sps_add_unit_test(NAME test_gpu_compound
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_compound.c ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c
  LABELS gpu
  ENV OMP_WAIT_POLICY=PASSIVE)
# the expansion and the bound scales on the host dominate the run time
target_compile_options(test_gpu_compound PRIVATE -O2)
set_tests_properties(test_gpu_compound PROPERTIES TIMEOUT 900)

# Assembly from triplets in the context's memory (sps_matrix_from_coo_entries_device):
# bit for bit the host builder's matrix, every entry type and scalar, and its errors;
# on the CPU backend here, on the GPU with the triplets in device memory (label gpu;
# exit 77 = skipped without a GPU).
sps_add_unit_test(NAME test_assemble
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_assemble.c
  LABELS unit)
sps_add_unit_test(NAME test_gpu_assemble
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/test_assemble.c ${CMAKE_CURRENT_SOURCE_DIR}/test_gpu_util.c
  LABELS gpu)
target_compile_definitions(test_gpu_assemble PRIVATE SPS_ASSEMBLE_GPU)
