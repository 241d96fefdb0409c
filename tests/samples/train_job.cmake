# Helpers of the train_fashion_mnist check scripts (included after they set
# PROGRAM and `common`, the flags every run of the script shares).

# Runs the job with `common` and ARGN; fails the test, with its output, unless it exits 0.
function(run_job out_var)
  execute_process(COMMAND ${PROGRAM} ${common} ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err
                  RESULT_VARIABLE rc TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "train_fashion_mnist ${common} ${ARGN} failed (${rc}):\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# The final weights' fingerprint the job printed in `text`.
function(fingerprint_of text out_var)
  string(REGEX MATCH "final weights fingerprint ([0-9a-f]+)" _ "${text}")
  if(NOT CMAKE_MATCH_1)
    message(FATAL_ERROR "no fingerprint in:\n${text}")
  endif()
  set(${out_var} "${CMAKE_MATCH_1}" PARENT_SCOPE)
endfunction()
