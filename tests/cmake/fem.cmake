# spsolve-fem (apps/fem, issue 22): element and assembled rigid-body modes, symmetry, the
# cantilever against Timoshenko on three refinements (CPU; on the GPU too where there is
# one, with the GPU assembly equal to the host's bit for bit), a refused beam.
add_executable(test_fem ${CMAKE_CURRENT_SOURCE_DIR}/test_fem.c)
target_link_libraries(test_fem PRIVATE fem_core m)
target_compile_options(test_fem PRIVATE -Wall -Wextra)
add_test(NAME test_fem COMMAND test_fem)
set_tests_properties(test_fem PROPERTIES LABELS unit TIMEOUT 600)
# the program: JSON keys of the issue, and a usage error
add_test(NAME e2e.fem.json COMMAND fem_cli --beam 10,1,1 --cells 10,1,1 --json)
set_tests_properties(e2e.fem.json PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                     "\"dofs\": 132, \"nnz\": 334.*\"iterations\": [0-9]+, \"tip_deflection\": -0\\.88.*\"true_relative_residual\".*\"time\": \\{\"assembly\"")
# a load near 1e300: the residual's sums of squares scaled (they overflowed, and the JSON said
# "true_relative_residual": -nan, which no JSON reader takes)
add_test(NAME e2e.fem.json_huge_load COMMAND fem_cli --beam 10,1,1 --cells 4,1,1 --tip-load 1e300 --json)
set_tests_properties(e2e.fem.json_huge_load PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                     "\"tip_deflection\": -3\\.958[0-9]*e\\+299, \"true_relative_residual\": [1-9][.0-9]*e-(0[89]|1[0-9]), ")
add_test(NAME e2e.fem.usage COMMAND fem_cli --beam 10,1 --cells 10,1,1)
set_tests_properties(e2e.fem.usage PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "usage: spsolve-fem \\(--beam")
# exit statuses as spsolve's: 1 a usage error, 2 a solve that did not converge (it was 2 and 1)
add_test(NAME e2e.fem.exit_status COMMAND sh -c "'$<TARGET_FILE:fem_cli>' --beam 10,1 --cells 10,1,1 2>&1; echo usage=$?; \
'$<TARGET_FILE:fem_cli>' --beam 10,1,1 --cells 10,1,1 --maxit 2 2>&1; echo maxit=$?")
set_tests_properties(e2e.fem.exit_status PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                     "usage=1.*CG did not converge in 2 iterations.*maxit=2")
# -o: the VTK XML grid, and refused onto a directory
add_test(NAME e2e.fem.vtu COMMAND fem_cli --beam 10,1,1 --cells 4,1,1 -o ${CMAKE_CURRENT_BINARY_DIR}/fem_beam.vtu)
set_tests_properties(e2e.fem.vtu PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "wrote .*fem_beam.vtu \\(displacement, von_mises\\)")
add_test(NAME e2e.fem.vtu_dir COMMAND fem_cli --beam 10,1,1 --cells 4,1,1 -o ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(e2e.fem.vtu_dir PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "is a directory: not replaced")
# a Gmsh file's missing group named
add_test(NAME e2e.fem.no_mesh COMMAND fem_cli --mesh no-such.msh --clamp 1)
set_tests_properties(e2e.fem.no_mesh PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "no-such.msh: cannot open")
# a Gmsh file through the program: a unit cube of 6 tetrahedra clamped at "bottom", pulled at "top"
add_test(NAME e2e.fem.gmsh COMMAND fem_cli --mesh ${CMAKE_CURRENT_SOURCE_DIR}/data/cube.msh --clamp bottom
                                           --traction top:0,0,-1 --json)
set_tests_properties(e2e.fem.gmsh PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "\"dofs\": 24, \"nnz\": 46")
add_test(NAME e2e.fem.gmsh_group COMMAND fem_cli --mesh ${CMAKE_CURRENT_SOURCE_DIR}/data/cube.msh --clamp sides)
set_tests_properties(e2e.fem.gmsh_group PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "--clamp sides: no physical group")
add_test(NAME e2e.fem.png COMMAND fem_cli --beam 10,1,1 --cells 8,2,2 --png ${CMAKE_CURRENT_BINARY_DIR}/fem_beam.png)
set_tests_properties(e2e.fem.png PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "wrote .*fem_beam.png \\(the deformed boundary")
# --precision f32: K rounded from its f64 sums, the solve in f32 (a stubby block, which f32 solves to
# ~1e-4; slender beams stop far above that: 0.10 relative on 40x4x4, and the solver says so)
add_test(NAME e2e.fem.f32 COMMAND fem_cli --beam 2,1,1 --cells 8,4,4 --precision f32 --rtol 1e-3 --json)
set_tests_properties(e2e.fem.f32 PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                     "\"dofs\": 675, \"nnz\": 2529.*\"tip_deflection\": -0\\.0297.*\"precision\": \"f32\"")
# the cube with its volume in two physical groups, so Gmsh's MSH2 writer lists each tetrahedron
# twice: the repeats dropped and said; a volume's group is not one of triangles to clamp
add_test(NAME e2e.fem.gmsh_duplicates COMMAND fem_cli --mesh ${CMAKE_CURRENT_SOURCE_DIR}/data/cube_twophys.msh
                                                --clamp bottom --traction top:0,0,-1)
set_tests_properties(e2e.fem.gmsh_duplicates PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                     "6 duplicate elements \\(one per physical group in MSH2 files\\) dropped.*8 nodes, 6 tetrahedra, 24 DOFs, 46 3x3 blocks")
add_test(NAME e2e.fem.gmsh_volume_group COMMAND fem_cli --mesh ${CMAKE_CURRENT_SOURCE_DIR}/data/cube.msh --clamp cube)
set_tests_properties(e2e.fem.gmsh_volume_group PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                     "--clamp cube: no physical group of triangles")
# numbers checked, not truncated (--maxit 2^32 + 1 is not 1) nor taken infinite or out of range: usage
foreach(bad "maxit;4294967297" "rtol;1" "E;inf" "density;inf" "tip-load;nan" "gravity;0,0,inf"
            "beam;10,1,inf" "cells;2147483647,1,1")
  list(GET bad 0 opt)
  list(GET bad 1 val)
  add_test(NAME e2e.fem.usage_${opt} COMMAND fem_cli --beam 10,1,1 --cells 4,1,1 --${opt} ${val})
  # the option named, then the usage
  set_tests_properties(e2e.fem.usage_${opt} PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                       "spsolve-fem: --${opt}[^\n]*: [^\n]+\nusage: spsolve-fem \\(--beam")
endforeach()
# --help: the usage on stdout, exit 0 (it exited 2)
add_test(NAME e2e.fem.help COMMAND fem_cli --help)
set_tests_properties(e2e.fem.help PROPERTIES LABELS e2e)
add_test(NAME e2e.fem.usage_traction COMMAND fem_cli --mesh ${CMAKE_CURRENT_SOURCE_DIR}/data/cube.msh --clamp bottom
                                                --traction top:0,0,inf)
set_tests_properties(e2e.fem.usage_traction PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "usage: spsolve-fem \\(--beam")
# no output replaces the mesh or another output (two spellings of one new file included): a
# usage error before anything is read or written
add_test(NAME e2e.fem.outputs_clash COMMAND fem_cli --beam 10,1,1 --cells 4,1,1 -o fem_clash.vtu
                                                    --write-matrix ./fem_clash.vtu)
set_tests_properties(e2e.fem.outputs_clash PROPERTIES LABELS e2e WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
                     PASS_REGULAR_EXPRESSION "-o 'fem_clash.vtu' and --write-matrix './fem_clash.vtu' name one file")
file(COPY ${CMAKE_CURRENT_SOURCE_DIR}/data/cube.msh DESTINATION ${CMAKE_CURRENT_BINARY_DIR}/fem_clash)
add_test(NAME e2e.fem.output_is_mesh COMMAND fem_cli --mesh ${CMAKE_CURRENT_BINARY_DIR}/fem_clash/cube.msh
                                                     --clamp bottom --write-matrix fem_clash/./cube.msh)
set_tests_properties(e2e.fem.output_is_mesh PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(e2e.fem.output_is_mesh PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION
                     "--write-matrix '.*cube.msh' is the file --mesh reads")
# a Gmsh file written here, read by spsolve-fem with the arguments after REGEX, its output matched
function(fem_msh_test name text regex)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${name}.msh "${text}")
  add_test(NAME e2e.fem.${name} COMMAND fem_cli --mesh ${CMAKE_CURRENT_BINARY_DIR}/${name}.msh ${ARGN})
  set_tests_properties(e2e.fem.${name} PROPERTIES LABELS e2e PASS_REGULAR_EXPRESSION "${regex}")
endfunction()
# two tetrahedra that share no node, one clamped: the other is free to move, K is singular, and
# CG had broken down as "not positive definite"; refused before the solve, saying why
fem_msh_test(gmsh_unheld
  "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$PhysicalNames\n1\n2 1 \"base\"\n$EndPhysicalNames\n$Nodes\n8\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 3 0 0\n6 4 0 0\n7 3 1 0\n8 3 0 1\n$EndNodes\n$Elements\n3\n1 2 2 1 1 1 3 2\n2 4 2 0 1 1 2 3 4\n3 4 2 0 1 5 6 7 8\n$EndElements\n"
  "1 of the 2 tetrahedra \\(one at node \\(3, 0, 0\\)\\) are in a part of the mesh that no node of --clamp base holds"
  --clamp base --gravity 0,0,-1 --json)
# a mesh of second-order (10-node) tetrahedra only: said so, not only "no tetrahedra"
fem_msh_test(gmsh_order2
  "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n10\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n5 .5 0 0\n6 .5 .5 0\n7 0 .5 0\n8 0 0 .5\n9 0 .5 .5\n10 .5 0 .5\n$EndNodes\n$Elements\n1\n1 11 2 0 1 1 2 3 4 5 6 7 8 9 10\n$EndElements\n"
  "no linear tetrahedra \\(element type 4\\): 1 elements of other types skipped, e.g. a second-order"
  --clamp 1)
