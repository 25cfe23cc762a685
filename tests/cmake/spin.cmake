# spsolve-spin (apps/dirac, issue 25): the bumpy sphere against the reference output, a
# mid-grey image, the assembly against its factors, malformed OBJ/TGA inputs.  The data
# (SPSOLVE_SPIN_DATA, default ../shared/data/spinxform) is optional: without it those
# checks print "skipped".
add_executable(test_spin ${CMAKE_CURRENT_SOURCE_DIR}/test_spin.c)
target_link_libraries(test_spin PRIVATE spin_core m)
target_compile_options(test_spin PRIVATE -Wall -Wextra)
add_test(NAME test_spin COMMAND test_spin "${SPSOLVE_SPIN_DATA}")
set_tests_properties(test_spin PROPERTIES LABELS unit TIMEOUT 600)
# the program itself: its usage line, a missing input named, and the bumpy sphere end to end
add_test(NAME e2e.spin.usage COMMAND spin_cli)
set_tests_properties(e2e.spin.usage PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "usage: spsolve-spin MESH.obj")
add_test(NAME e2e.spin.missing COMMAND spin_cli no-such-mesh.obj no.tga out.obj)
set_tests_properties(e2e.spin.missing PROPERTIES LABELS e2e
                     PASS_REGULAR_EXPRESSION "spsolve-spin: no-such-mesh.obj: cannot open: No such file")
if(SPSOLVE_SPIN_DATA)
  add_test(NAME e2e.spin.bumpy COMMAND spin_cli ${SPSOLVE_SPIN_DATA}/sphere.obj ${SPSOLVE_SPIN_DATA}/bumpy.tga
                                        ${CMAKE_CURRENT_BINARY_DIR}/spin_bumpy.obj --json)
  set_tests_properties(e2e.spin.bumpy PROPERTIES LABELS e2e TIMEOUT 600
                       PASS_REGULAR_EXPRESSION "\"vertices\": 4002, \"faces\": 8000, \"nnz_e\": 28002")
  # another Krylov method for the E solves
  add_test(NAME e2e.spin.bicgstab COMMAND spin_cli ${SPSOLVE_SPIN_DATA}/sphere.obj ${SPSOLVE_SPIN_DATA}/bumpy.tga
                                           ${CMAKE_CURRENT_BINARY_DIR}/spin_bumpy_bicgstab.obj --solver bicgstab --json)
  set_tests_properties(e2e.spin.bicgstab PROPERTIES LABELS e2e TIMEOUT 600
                       PASS_REGULAR_EXPRESSION "\"vertices\": 4002, \"faces\": 8000")
  # the reference's stopping rule (max-norm, 1e-7): its iteration counts, 31x / 2[89]x / 2[78]x
  add_test(NAME e2e.spin.norm_inf COMMAND spin_cli ${SPSOLVE_SPIN_DATA}/sphere.obj ${SPSOLVE_SPIN_DATA}/bumpy.tga
                                           ${CMAKE_CURRENT_BINARY_DIR}/spin_bumpy_inf.obj --norm inf --rtol 1e-7 --json)
  set_tests_properties(e2e.spin.norm_inf PROPERTIES LABELS e2e TIMEOUT 600
                       PASS_REGULAR_EXPRESSION "\"eigen_iterations\": \\[31[0-9], 2[89][0-9], 2[78][0-9]\\].*\"norm\": \"inf\"")
endif()
