# The layering test (issue 19, item 8; ../shared/ARCHITECTURE.md §3): every
# #include "dir/..." of a source file must name a layer its own layer may use.
# A second run over a small tree with a violation must fail, so the check
# itself is known to work.
add_test(NAME layering
  COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_SOURCE_DIR} -P ${CMAKE_CURRENT_SOURCE_DIR}/layering/check.cmake)
add_test(NAME layering.detects_violation
  COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_CURRENT_SOURCE_DIR}/layering/bad -P ${CMAKE_CURRENT_SOURCE_DIR}/layering/check.cmake)
set_tests_properties(layering layering.detects_violation PROPERTIES LABELS unit)
set_tests_properties(layering.detects_violation PROPERTIES WILL_FAIL TRUE)
