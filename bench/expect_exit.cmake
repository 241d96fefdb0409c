# cmake -DPROGRAM=p "-DARGS=a;b" -DSTATUS=2 "-DOUTPUT=regex" [-DSECONDS=60] -P expect_exit.cmake
# Runs PROGRAM with ARGS and fails unless it exits with STATUS within SECONDS
# and its standard output or error matches OUTPUT: a benchmark's smoke run must
# both print its rows and exit 0, and an error path must both say what is
# wrong and end with the status that tells a script so.
if(NOT DEFINED SECONDS)
  set(SECONDS 60)
endif()
execute_process(COMMAND ${PROGRAM} ${ARGS}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc
                TIMEOUT ${SECONDS})
message("${out}${err}")
if(NOT rc STREQUAL STATUS)
  message(FATAL_ERROR "${PROGRAM} ${ARGS} exited with '${rc}', expected ${STATUS}")
endif()
if(NOT "${out}${err}" MATCHES "${OUTPUT}")
  message(FATAL_ERROR "the output of ${PROGRAM} ${ARGS} does not match '${OUTPUT}'")
endif()
