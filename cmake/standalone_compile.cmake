# Proves that an example compiles on its own, with the one nvcc line written in
# its header comment and nothing but the CUDA toolkit: copies the example's
# folder and common/ side by side into WORKDIR, then runs that line there.
get_filename_component(_dir "${SOURCE}" DIRECTORY)
get_filename_component(_chapter "${_dir}" NAME)
get_filename_component(_file "${SOURCE}" NAME)
file(REMOVE_RECURSE "${WORKDIR}")
file(COPY "${_dir}" DESTINATION "${WORKDIR}")
file(COPY "${COMMON}" DESTINATION "${WORKDIR}")

file(STRINGS "${SOURCE}" _lines LIMIT_COUNT 40)
set(_line "")
foreach(l IN LISTS _lines)
  if(l MATCHES "^//[ ]+(nvcc .*)$" AND _line STREQUAL "")
    set(_line "${CMAKE_MATCH_1}")
  endif()
endforeach()
if(_line STREQUAL "")
  message(FATAL_ERROR "${_file}: no '//   nvcc ...' line in its header comment")
endif()
message("in ${_chapter}/: ${_line}")
separate_arguments(_cmd UNIX_COMMAND "${_line}")
list(POP_FRONT _cmd _nvcc_word)
execute_process(COMMAND "${NVCC}" ${_cmd} WORKING_DIRECTORY "${WORKDIR}/${_chapter}"
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the standalone line failed (exit ${rc})")
endif()
