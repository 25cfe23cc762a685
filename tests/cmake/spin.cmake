# spsolve-spin (apps/dirac, issue 25): the bumpy sphere against the reference output, a
# mid-grey image, the assembly against its factors, malformed OBJ/TGA inputs.  The data
# (SPSOLVE_SPIN_DATA, default ../shared/data/spinxform) is optional: without it those
# checks print "skipped".
add_executable(test_spin ${CMAKE_CURRENT_SOURCE_DIR}/test_spin.c)
target_link_libraries(test_spin PRIVATE spin_core m)
target_compile_options(test_spin PRIVATE -Wall -Wextra)
add_test(NAME test_spin COMMAND test_spin "${SPSOLVE_SPIN_DATA}")
set_tests_properties(test_spin PROPERTIES LABELS unit TIMEOUT 600)
