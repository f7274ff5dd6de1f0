# A size whose host buffers need more than half of this machine's RAM must be
# refused up front (exit 2, "... GB of host memory ..."), before any GPU is
# looked for, rather than be killed by the OS half way. Whether a given --n is
# too large depends on the machine running the test, so the RAM is read here,
# at test time: on a machine with enough RAM the test says SKIPPED.
#   cmake -DPROGRAM=path -DARGS="--n|2^31" -DNEEDED_MIB=24576 [-DFAKE_HOST_LIB=libfake_small_host.so] -P host_memory_refused.cmake
if(DEFINED FAKE_HOST_LIB)
  # The machine is made to look small (fake_small_host.cpp, preloaded, answers sysconf with a
  # RAM of a quarter of what is needed), so the refusal is shown on any machine, a large one too.
  math(EXPR ram_mib "${NEEDED_MIB} / 4")
  set(ENV{LD_PRELOAD} "${FAKE_HOST_LIB}")
  set(ENV{CUDA_EXAMPLES_FAKE_HOST_MB} "${ram_mib}")
else()
  cmake_host_system_information(RESULT ram_mib QUERY TOTAL_PHYSICAL_MEMORY)
endif()
math(EXPR half_mib "${ram_mib} / 2")
math(EXPR margin_mib "${half_mib} + ${half_mib} / 50")  # 2%: the program reads RAM its own way
if(NEEDED_MIB LESS_EQUAL margin_mib)
  message("SKIPPED: this machine has ${ram_mib} MiB of RAM, enough for ${NEEDED_MIB} MiB of buffers")
  return()
endif()
string(REPLACE "|" ";" _args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
message("RAM ${ram_mib} MiB, buffers ${NEEDED_MIB} MiB; exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT "${rc}" STREQUAL "2")
  message(FATAL_ERROR "expected exit code 2, got ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "GB of host memory")
  message(FATAL_ERROR "the message does not mention host memory")
endif()
