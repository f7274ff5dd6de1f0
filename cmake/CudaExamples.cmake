# Functions every chapter's CMakeLists.txt uses, so that programs, their runs
# and their tests are registered the same way everywhere.
#
#   add_example(NAME SOURCE [LIBS lib...])
#       builds the program and a test that compiles its standalone nvcc line
#   add_example_run(NAME [TEST suffix] [ARGS arg...] [NO_SANITIZE] [CPU])
#       runs the program once at a small size (label gpu; exit 77 = skipped)
#       and, unless NO_SANITIZE, under each compute-sanitizer tool (label sanitize).
#       CPU: the program needs no GPU (MM-CPU): label cpu, no sanitizer runs
#   add_usage_test(NAME TEST EXIT CODE MATCH regex ARGS arg... [CHAPTER chNN])
#       runs the program with a bad command line; it must exit with CODE and
#       print something matching regex (label cpu; needs no GPU). Each program's
#       --help and a bad flag are registered from programs.json (tests/CMakeLists.txt)
#   add_gpu_test(NAME SOURCE [PROGRAM prog] [LIBS lib...])   GoogleTest binary, label gpu
#   add_cpu_test(NAME SOURCE [PROGRAM prog] [LIBS lib...])   GoogleTest binary, label cpu
#
# Every test is named <chapter>.<program>.<what>, so that a student or an
# instructor who filters by a program's name gets all of its tests:
#   ctest -R VA-GPU-NN            or, exactly,   ctest -R '^ch02\.VA-GPU-NN\.'
# A GoogleTest binary test_<program> gives <chapter>.<program>.<Suite>.<Test>
# (PROGRAM names the program when the binary's name does not), and the
# sanitizer runs are <chapter>.<program>.sanitize.<tool>.<run|gtest>.

set(CUDA_EXAMPLES_SANITIZER_TOOLS memcheck racecheck synccheck initcheck)

# "programs": every program and the tour's ceilings, without the tests. The tour
# builds this one target, so that make (and ninja) build the programs in parallel
# in the same folder as the tests: cmake --build --preset default --target programs
add_custom_target(programs)
function(_cuda_examples_programs_add_ceilings)
  if(TARGET ceilings)
    add_dependencies(programs ceilings)
  endif()
endfunction()
cmake_language(DEFER DIRECTORY "${PROJECT_SOURCE_DIR}" CALL _cuda_examples_programs_add_ceilings)
find_program(CUDA_EXAMPLES_SANITIZER compute-sanitizer HINTS "${CUDAToolkit_BIN_DIR}")

function(_cuda_examples_chapter out)
  get_filename_component(_dir "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  string(REGEX MATCH "^ch[0-9]+" _ch "${_dir}")
  if(NOT _ch)
    set(_ch "${_dir}")
  endif()
  set(${out} "${_ch}" PARENT_SCOPE)
endfunction()

function(add_example name source)
  cmake_parse_arguments(ARG "" "" "LIBS" ${ARGN})
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE cuda_examples_common ${ARG_LIBS})
  add_dependencies(programs ${name})
  _cuda_examples_chapter(ch)
  # Read by tests/CMakeLists.txt: every program built must be in programs.json.
  set_property(GLOBAL APPEND PROPERTY CUDA_EXAMPLES_PROGRAMS "${name}")
  if(CUDA_EXAMPLES_STANDALONE_TESTS AND BUILD_TESTING)
    add_test(NAME ${ch}.${name}.standalone
      COMMAND "${CMAKE_COMMAND}"
        "-DSOURCE=${CMAKE_CURRENT_SOURCE_DIR}/${source}"
        "-DCOMMON=${PROJECT_SOURCE_DIR}/common"
        "-DWORKDIR=${CMAKE_CURRENT_BINARY_DIR}/standalone/${name}"
        "-DNVCC=${CMAKE_CUDA_COMPILER}"
        -P "${PROJECT_SOURCE_DIR}/cmake/standalone_compile.cmake")
    # COST: a compile of 5 to 20 s; ctest starts the costliest tests first on a fresh clone.
    set_tests_properties(${ch}.${name}.standalone PROPERTIES LABELS "cpu;standalone" TIMEOUT 900
      COST 15)
  endif()
endfunction()

function(add_example_run name)
  cmake_parse_arguments(ARG "NO_SANITIZE;CPU" "TEST" "ARGS" ${ARGN})
  if(NOT BUILD_TESTING)
    return()
  endif()
  if(NOT ARG_TEST)
    set(ARG_TEST run)
  endif()
  _cuda_examples_chapter(ch)
  add_test(NAME ${ch}.${name}.${ARG_TEST} COMMAND ${name} ${ARG_ARGS})
  if(ARG_CPU)
    # A CPU program: it runs everywhere, so it is never skipped, and there is
    # no device code for the sanitizers to look at.
    set_tests_properties(${ch}.${name}.${ARG_TEST} PROPERTIES LABELS "cpu;run" TIMEOUT 600)
    return()
  endif()
  # These runs share the GPU with other tests (ctest -j): their lesson timings are printed
  # but cannot fail them (common/report.h); the lesson tests below run alone.
  set_tests_properties(${ch}.${name}.${ARG_TEST} PROPERTIES
    LABELS "gpu;run" SKIP_RETURN_CODE 77 TIMEOUT 600 ENVIRONMENT CUDA_EXAMPLES_LESSONS=report)
  if(CUDA_EXAMPLES_SANITIZER AND NOT ARG_NO_SANITIZE)
    foreach(tool IN LISTS CUDA_EXAMPLES_SANITIZER_TOOLS)
      set(_test ${ch}.${name}.sanitize.${tool}.${ARG_TEST})
      add_test(NAME ${_test}
        COMMAND "${CUDA_EXAMPLES_SANITIZER}" --tool ${tool} --error-exitcode 1
                $<TARGET_FILE:${name}> ${ARG_ARGS})
      set_tests_properties(${_test} PROPERTIES
        LABELS "gpu;sanitize" SKIP_RETURN_CODE 77 TIMEOUT 900
        FAIL_REGULAR_EXPRESSION "ERROR SUMMARY: [1-9]" ENVIRONMENT CUDA_EXAMPLES_LESSONS=report)
    endforeach()
  endif()
endfunction()

# add_lesson_run(NAME [TEST suffix] ARGS ...): one run at a size where the program's
# lesson shows (common/report.h: Report::lesson), test <ch>.<name>.lesson[.suffix],
# labels gpu and lesson: it fails when the effect the program teaches did not happen
# ("Lesson: MISSED", exit 1) or a rate is above the hardware's peak ("impossible
# measurement"). No sanitizer runs: they time nothing meaningful.
function(add_lesson_run name)
  cmake_parse_arguments(ARG "" "TEST" "ARGS" ${ARGN})
  if(NOT BUILD_TESTING)
    return()
  endif()
  _cuda_examples_chapter(ch)
  set(_test ${ch}.${name}.lesson)
  if(ARG_TEST)
    set(_test ${_test}.${ARG_TEST})
  endif()
  add_test(NAME ${_test} COMMAND ${name} ${ARG_ARGS})
  # A lesson is a timing: RUN_SERIAL gives the program the GPU to itself.
  set_tests_properties(${_test} PROPERTIES LABELS "gpu;lesson" SKIP_RETURN_CODE 77 TIMEOUT 600
    FAIL_REGULAR_EXPRESSION "Lesson: MISSED;impossible measurement" RUN_SERIAL TRUE)
endfunction()

function(add_usage_test name test)
  cmake_parse_arguments(ARG "" "EXIT;MATCH;CHAPTER" "ARGS" ${ARGN})
  if(NOT BUILD_TESTING)
    return()
  endif()
  _cuda_examples_chapter(ch)
  if(ARG_CHAPTER)
    set(ch ${ARG_CHAPTER})
  endif()
  string(REPLACE ";" "|" _args "${ARG_ARGS}")
  add_test(NAME ${ch}.${name}.usage.${test}
    COMMAND "${CMAKE_COMMAND}" "-DPROGRAM=$<TARGET_FILE:${name}>" "-DARGS=${_args}"
            "-DEXPECT_EXIT=${ARG_EXIT}" "-DEXPECT_MATCH=${ARG_MATCH}"
            -P "${PROJECT_SOURCE_DIR}/cmake/expect_exit.cmake")
  set_tests_properties(${ch}.${name}.usage.${test} PROPERTIES LABELS "cpu;usage" TIMEOUT 120)
endfunction()

function(_cuda_examples_gtest name source label)
  cmake_parse_arguments(ARG "NO_SANITIZE" "PROGRAM;SANITIZE_EXCLUDE;COST" "LIBS" ${ARGN})
  add_executable(${name} ${source})
  target_link_libraries(${name} PRIVATE cuda_examples_common cuda_examples_gtest_main ${ARG_LIBS})
  # Architectures chosen with no GPU visible ("90-real;75-virtual"): nothing here can run a
  # test, so its binary is only the compile check, made for the first architecture alone (a
  # quarter less work each on CI). The programs keep both: their compute_75 PTX is what proves
  # they still compile for older GPUs (.ci/run builds for sm_90 alone: there the standalone
  # tests, which use nvcc's default sm_75, prove it). A user's own CMAKE_CUDA_ARCHITECTURES
  # is kept as given.
  if(DEFINED CUDA_EXAMPLES_AUTO_ARCHITECTURES
     AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "90-real;75-virtual"
     AND "${CUDA_EXAMPLES_AUTO_ARCHITECTURES}" STREQUAL "90-real;75-virtual")
    set_property(TARGET ${name} PROPERTY CUDA_ARCHITECTURES 90-real)
  endif()
  target_compile_definitions(${name} PRIVATE CUDA_EXAMPLES_NO_MAIN)
  target_include_directories(${name} PRIVATE "${PROJECT_SOURCE_DIR}/tests")
  _cuda_examples_chapter(ch)
  # The program's name leads the test names: test_VA-GPU-NN -> ch02.VA-GPU-NN.<Suite>.<Test>.
  if(ARG_PROGRAM)
    set(program "${ARG_PROGRAM}")
  else()
    string(REGEX REPLACE "^test_" "" program "${name}")
  endif()
  # COST (optional): a binary with a test that takes a minute is started first on a fresh clone
  # (ctest orders by COST until it has timings of its own).
  set(_cost 1)
  if(ARG_COST)
    set(_cost ${ARG_COST})
  endif()
  if(label STREQUAL "gpu")
    # A GPU binary is one test, all its cases in one process: every process that uses the GPU
    # opens a context of its own, and the driver opens them about one at a time (on an idle
    # H200, 64 processes that only open one took 19.7 s one after another, 12.6 s 16 at a
    # time). The test binaries' 340 cases (but *Large*), one process each, 16 at a time, took
    # 49.8 s there; each binary whole, 12.6 s. scripts/test_summary.py counts every case
    # from the report the binary writes (build folder, gtest/<test>.xml), named
    # <ch>.<program>.<Suite>.<Test> as before; one case by hand:
    #   build/tests/ch02_vector_add/test_VA-GPU-NN --gtest_filter='*OddGrid*'
    set(_test ${ch}.${program}.gtest)
    if(TEST ${_test})  # a second binary for the same program (MM-GPU-SM-tile8)
      set(_test ${ch}.${program}.gtest.${name})
    endif()
    add_test(NAME ${_test} COMMAND ${name} --gtest_also_run_disabled_tests
      "--gtest_output=xml:${CMAKE_BINARY_DIR}/gtest/${_test}.xml")
    # COST: started in the first wave, beside the compiles (they need the GPU, not the CPU).
    if(_cost LESS 16)
      set(_cost 16)
    endif()
    set_tests_properties(${_test} PROPERTIES LABELS "gpu;gtest" TIMEOUT 600 COST ${_cost}
      SKIP_RETURN_CODE 77)
  else()
    gtest_discover_tests(${name} TEST_PREFIX "${ch}.${program}." DISCOVERY_MODE PRE_TEST
      PROPERTIES LABELS "${label}" TIMEOUT 600 COST ${_cost} SKIP_RETURN_CODE 77)
  endif()
  if(label STREQUAL "gpu" AND CUDA_EXAMPLES_SANITIZER AND NOT ARG_NO_SANITIZE)
    # Under the sanitizers, skip the tests named *Large* (they are slow there), and those
    # that SANITIZE_EXCLUDE names (a gtest pattern; the caller says why).
    set(_exclude "-*Large*")
    if(ARG_SANITIZE_EXCLUDE)
      string(APPEND _exclude ":${ARG_SANITIZE_EXCLUDE}")
    endif()
    foreach(tool IN LISTS CUDA_EXAMPLES_SANITIZER_TOOLS)
      set(_test ${ch}.${program}.sanitize.${tool}.gtest)
      if(TEST ${_test})  # a second binary for the same program (MM-GPU-SM-tile8)
        set(_test ${ch}.${program}.sanitize.${tool}.${name})
      endif()
      add_test(NAME ${_test}
        COMMAND "${CUDA_EXAMPLES_SANITIZER}" --tool ${tool} --error-exitcode 1
                $<TARGET_FILE:${name}> --gtest_filter=${_exclude})
      set_tests_properties(${_test} PROPERTIES LABELS "gpu;sanitize" TIMEOUT 1800
        FAIL_REGULAR_EXPRESSION "ERROR SUMMARY: [1-9]" SKIP_RETURN_CODE 77)
    endforeach()
  endif()
endfunction()

function(add_gpu_test name source)
  _cuda_examples_gtest(${name} ${source} gpu ${ARGN})
endfunction()

function(add_cpu_test name source)
  _cuda_examples_gtest(${name} ${source} cpu ${ARGN})
endfunction()
