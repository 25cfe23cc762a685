# spsolve-spin (apps/dirac, issue 25): the bumpy sphere against the reference output, a
# mid-grey image, the assembly against its factors, malformed OBJ/TGA inputs, inputs the
# solves cannot take (rho 0 everywhere, vertices in no face), option values refused.  The data
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
# OUT.obj naming the mesh (another spelling of it) or --png naming OUT.obj: a usage error
# before anything is read or written
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/spin_clash.obj "v 0 0 0\n")
add_test(NAME e2e.spin.output_is_mesh COMMAND spin_cli spin_clash.obj no.tga ./spin_clash.obj)
set_tests_properties(e2e.spin.output_is_mesh PROPERTIES LABELS e2e WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
                     PASS_REGULAR_EXPRESSION "OUT.obj './spin_clash.obj' is the file MESH.obj reads")
add_test(NAME e2e.spin.outputs_clash COMMAND spin_cli spin_clash.obj no.tga spin_out.obj --png spin_out.obj)
set_tests_properties(e2e.spin.outputs_clash PROPERTIES LABELS e2e WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
                     PASS_REGULAR_EXPRESSION "OUT.obj 'spin_out.obj' and --png 'spin_out.obj' name one file")
# --help: the usage on stdout, exit status 0
# a usage error exits 1, as spsolve's (it was 2)
add_test(NAME e2e.spin.usage_status COMMAND sh -c "'$<TARGET_FILE:spin_cli>' 2>&1; echo status=$?")
set_tests_properties(e2e.spin.usage_status PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "usage: spsolve-spin.*status=1")
add_test(NAME e2e.spin.help COMMAND spin_cli --help)
set_tests_properties(e2e.spin.help PROPERTIES LABELS e2e)
# option values parsed whole and range-checked before any input is read: 4294967297 was taken
# as 1 (truncated to int), "" as 0, nan and inf as scales
foreach(bad "iterations;4294967297;not an integer in 1\\.\\.100" "subdivide;4294967297;not an integer in 0\\.\\.8"
            "subdivide;;not an integer in 0\\.\\.8" "scale;nan;not a finite number" "scale;inf;not a finite number"
            "scale;;not a finite number")
  list(GET bad 0 opt)
  list(GET bad 1 val)
  list(GET bad 2 want)
  set(name e2e.spin.bad_${opt}_${val})
  if(val STREQUAL "")
    set(name e2e.spin.bad_${opt}_empty)
  endif()
  add_test(NAME ${name} COMMAND spin_cli no-such-mesh.obj no.tga out.obj --${opt} "${val}")
  set_tests_properties(${name} PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "spsolve-spin: --${opt} '${val}': ${want}")
endforeach()
if(SPSOLVE_SPIN_DATA)
  # one open triangle: E is indefinite there, CG breaks down, and the program says which solvers
  # take it (and GMRES does)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/spin_one_tri.obj "v 0 0 0\nv 1 0 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 0 1\nf 1/1 2/2 3/3\n")
  add_test(NAME e2e.spin.open_cg COMMAND spin_cli ${CMAKE_CURRENT_BINARY_DIR}/spin_one_tri.obj
                                         ${SPSOLVE_SPIN_DATA}/bumpy.tga ${CMAKE_CURRENT_BINARY_DIR}/spin_one_tri_out.obj)
  set_tests_properties(e2e.spin.open_cg PROPERTIES LABELS e2e
                       PASS_REGULAR_EXPRESSION "E is not positive definite on this mesh.*--solver gmres or bicgstab")
  add_test(NAME e2e.spin.open_gmres COMMAND spin_cli ${CMAKE_CURRENT_BINARY_DIR}/spin_one_tri.obj
                                            ${SPSOLVE_SPIN_DATA}/bumpy.tga ${CMAKE_CURRENT_BINARY_DIR}/spin_one_tri_g.obj
                                            --solver gmres)
  set_tests_properties(e2e.spin.open_gmres PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "wrote .*spin_one_tri_g.obj")
  # its solves end above the tolerance (the iterate kept, as the reference): said, not silent
  add_test(NAME e2e.spin.unconverged_said COMMAND spin_cli ${CMAKE_CURRENT_BINARY_DIR}/spin_one_tri.obj
                                                  ${SPSOLVE_SPIN_DATA}/bumpy.tga ${CMAKE_CURRENT_BINARY_DIR}/spin_one_tri_u.obj
                                                  --solver gmres --json)
  set_tests_properties(e2e.spin.unconverged_said PROPERTIES LABELS e2e DEPENDS e2e.spin.open_gmres PASS_REGULAR_EXPRESSION
                       "warning: [1-9] of the solves ended above --rtol.*\"unconverged_solves\": [1-9]")
  # every inverse iteration reported, up to --iterations' bound of 100 (the report kept 16: the
  # JSON's arrays stopped there without a word); a tetrahedron, so that 20 rounds take no time
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/spin_tet.obj "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nvt 0.1 0.1\nvt 0.9 0.2\n"
             "vt 0.3 0.8\nvt 0.6 0.6\nf 1/1 3/3 2/2\nf 1/1 2/2 4/4\nf 1/1 4/4 3/3\nf 2/2 3/3 4/4\n")
  add_test(NAME e2e.spin.iterations COMMAND spin_cli ${CMAKE_CURRENT_BINARY_DIR}/spin_tet.obj ${SPSOLVE_SPIN_DATA}/bumpy.tga
                                             ${CMAKE_CURRENT_BINARY_DIR}/spin_tet_out.obj --iterations 20 --json)
  string(REPEAT "[0-9]+, " 19 ints) # 20 entries (CMake's regex has no {n})
  string(REPEAT "[-+.e0-9]+, " 19 nums)
  set_tests_properties(e2e.spin.iterations PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                       "\"eigen_iterations\": \\[${ints}[0-9]+\\], \"eigen_relative_residuals\": \\[${nums}[-+.e0-9]+\\].*\"eigen_solves\": \\[${nums}[-+.e0-9]+\\]")
  # 8 rounds of the sphere (524M faces) refused before the first round (the seven that fit took
  # 65M vertices before)
  add_test(NAME e2e.spin.subdivide_size COMMAND spin_cli ${SPSOLVE_SPIN_DATA}/sphere.obj ${SPSOLVE_SPIN_DATA}/bumpy.tga
                                                 ${CMAKE_CURRENT_BINARY_DIR}/spin_sub8.obj --subdivide 8)
  set_tests_properties(e2e.spin.subdivide_size PROPERTIES LABELS e2e TIMEOUT 60
                       PASS_REGULAR_EXPRESSION "subdivision: 8 rounds would make [0-9]+ vertices and [0-9]+ faces by round 8: too large")
  add_test(NAME e2e.spin.bumpy COMMAND spin_cli ${SPSOLVE_SPIN_DATA}/sphere.obj ${SPSOLVE_SPIN_DATA}/bumpy.tga
                                        ${CMAKE_CURRENT_BINARY_DIR}/spin_bumpy.obj --json)
  set_tests_properties(e2e.spin.bumpy PROPERTIES LABELS e2e TIMEOUT 600 FAIL_REGULAR_EXPRESSION "warning:"
                       PASS_REGULAR_EXPRESSION "\"vertices\": 4002, \"faces\": 8000, \"components\": 1, \"nnz_e\": 28002.*\"unconverged_solves\": 0,")
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
