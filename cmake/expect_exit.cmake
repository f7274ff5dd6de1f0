# Runs PROGRAM with ARGS ('|'-separated) and checks its exit code and output.
# Used by add_usage_test(): bad command lines must get exit code EXPECT_EXIT and
# a message matching EXPECT_MATCH, and must never need a GPU to say so.
string(REPLACE "|" ";" _args "${ARGS}")
execute_process(COMMAND "${PROGRAM}" ${_args}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 100)
message("exit code ${rc}\nstdout:\n${out}\nstderr:\n${err}")
if(NOT "${rc}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "expected exit code ${EXPECT_EXIT}, got ${rc}")
endif()
if(NOT "${EXPECT_MATCH}" STREQUAL "" AND NOT "${out}${err}" MATCHES "${EXPECT_MATCH}")
  message(FATAL_ERROR "output does not match '${EXPECT_MATCH}'")
endif()
