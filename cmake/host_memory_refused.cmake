# A size whose host buffers need more than the program's share of this machine's RAM must be
# refused up front (exit 2, "... GB of host memory ..."), before any GPU is looked for, rather
# than be killed by the OS half way through filling them. Chapter 3's programs allow half of
# the RAM (SHARE=1/2), chapter 4's 3/4 (SHARE=3/4: three matrices and nothing else).
#   cmake -DPROGRAM=path -DARGS="--n|2^31" -DNEEDED_MIB=24576 -DSHARE=1/2
#         [-DFAKE_HOST_LIB=libfake_small_host.so] -P cmake/host_memory_refused.cmake
# Whether a size is too large depends on the machine, so the RAM is read here, at test time;
# where it suffices the test says SKIPPED without running the program (which would then really
# start a run of that size: MM-CPU at Width 32768 takes a day). FAKE_HOST_LIB makes every
# machine look small, so the refusal is shown on a large one too.
if(NOT SHARE MATCHES "^([0-9]+)/([0-9]+)$")
  message(FATAL_ERROR "SHARE must be a fraction such as 1/2, not '${SHARE}'")
endif()
set(share_num ${CMAKE_MATCH_1})
set(share_den ${CMAKE_MATCH_2})
if(DEFINED FAKE_HOST_LIB)
  # fake_small_host.cpp, preloaded, answers sysconf with a RAM of a quarter of what is needed.
  math(EXPR ram_mib "${NEEDED_MIB} / 4")
  set(ENV{LD_PRELOAD} "${FAKE_HOST_LIB}")
  set(ENV{CUDA_EXAMPLES_FAKE_HOST_MB} "${ram_mib}")
else()
  cmake_host_system_information(RESULT ram_mib QUERY TOTAL_PHYSICAL_MEMORY)
endif()
math(EXPR limit_mib "${ram_mib} * ${share_num} / ${share_den}")
math(EXPR margin_mib "${limit_mib} + ${ram_mib} / 50")  # 2%: the program reads RAM its own way
if(NEEDED_MIB LESS_EQUAL margin_mib)
  message("SKIPPED: this machine has ${ram_mib} MiB of RAM, "
          "${SHARE} of it holds ${NEEDED_MIB} MiB of buffers")
  return()
endif()
string(REPLACE "|" ";" _args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
message("RAM ${ram_mib} MiB, buffers ${NEEDED_MIB} MiB; exit code ${rc}\n"
        "stdout:\n${out}\nstderr:\n${err}")
if(NOT "${rc}" STREQUAL "2")
  message(FATAL_ERROR "expected exit code 2, got ${rc}")
endif()
if(NOT "${out}${err}" MATCHES "GB of host memory")
  message(FATAL_ERROR "the message does not mention host memory")
endif()
