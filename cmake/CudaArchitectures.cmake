# Which GPUs configure can see (nvidia-smi), asked once: the architectures below, the planted
# bugs (tests/mutants) and the test binaries' build (tests/CMakeLists.txt) all depend on it.
# CUDA_EXAMPLES_VISIBLE_CAPS: their compute capabilities ("90;80"); CUDA_EXAMPLES_GPU_VISIBLE.
set(CUDA_EXAMPLES_VISIBLE_CAPS "")
find_program(CUDA_EXAMPLES_NVIDIA_SMI nvidia-smi)
if(CUDA_EXAMPLES_NVIDIA_SMI)
  execute_process(
    COMMAND "${CUDA_EXAMPLES_NVIDIA_SMI}" --query-gpu=compute_cap --format=csv,noheader
    OUTPUT_VARIABLE _caps RESULT_VARIABLE _rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE
    TIMEOUT 60)
  if(_rc EQUAL 0)
    string(REPLACE "\n" ";" _caps "${_caps}")
    foreach(_cap IN LISTS _caps)
      string(STRIP "${_cap}" _cap)
      if(_cap MATCHES "^([0-9]+)\\.([0-9]+)$")
        list(APPEND CUDA_EXAMPLES_VISIBLE_CAPS "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
      endif()
    endforeach()
    list(REMOVE_DUPLICATES CUDA_EXAMPLES_VISIBLE_CAPS)
  endif()
endif()
if(CUDA_EXAMPLES_VISIBLE_CAPS)
  set(CUDA_EXAMPLES_GPU_VISIBLE ON)
else()
  set(CUDA_EXAMPLES_GPU_VISIBLE OFF)
endif()

# Chooses CMAKE_CUDA_ARCHITECTURES before project() enables CUDA.
#  1. A value you pass (-DCMAKE_CUDA_ARCHITECTURES=... or the CUDAARCHS
#     environment variable) always wins.
#  2. Otherwise, the GPUs nvidia-smi can see at configure time (e.g. 90 for an
#     H100/H200): machine code plus PTX for exactly this machine.
#  3. With no GPU visible: sm_90 machine code (H100/H200) and PTX for
#     compute_75, the oldest architecture CUDA 13 supports, which the driver
#     can compile at start-up for any other GPU.
if(DEFINED CMAKE_CUDA_ARCHITECTURES AND DEFINED CUDA_EXAMPLES_AUTO_ARCHITECTURES
   AND "${CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${CUDA_EXAMPLES_AUTO_ARCHITECTURES}")
  message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES} (chosen automatically at the first configure)")
  return()
endif()
if(DEFINED CMAKE_CUDA_ARCHITECTURES)
  message(STATUS "CUDA architectures: given by you (${CMAKE_CUDA_ARCHITECTURES})")
  return()
elseif(DEFINED ENV{CUDAARCHS})
  message(STATUS "CUDA architectures: given by you (CUDAARCHS=$ENV{CUDAARCHS})")
  return()
endif()

set(_cuda_examples_archs "${CUDA_EXAMPLES_VISIBLE_CAPS}")

if(_cuda_examples_archs)
  set(_why "the GPU(s) visible now")
else()
  set(_cuda_examples_archs "90-real;75-virtual")
  set(_why "no GPU visible: sm_90 code + compute_75 PTX")
endif()
set(CMAKE_CUDA_ARCHITECTURES "${_cuda_examples_archs}" CACHE STRING "CUDA architectures to build for")
set(CUDA_EXAMPLES_AUTO_ARCHITECTURES "${_cuda_examples_archs}" CACHE INTERNAL "what we chose")
message(STATUS "CUDA architectures: ${CMAKE_CUDA_ARCHITECTURES} (${_why})")
