# Matrix Market reader throughput: mmread_bench [-n entries] [-r reps] [files...]
add_executable(mmread_bench ${CMAKE_SOURCE_DIR}/bench/mmread_bench.c)
target_include_directories(mmread_bench PRIVATE ${CMAKE_SOURCE_DIR}) # io/mmio.h is internal
target_compile_options(mmread_bench PRIVATE ${SPS_WARN})
target_link_libraries(mmread_bench spsolve_static ZLIB::ZLIB)
