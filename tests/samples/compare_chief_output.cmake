# Runs PROGRAM as a parameter-server cluster under LAUNCHER (--workers 2
# --ps 1, plus the chief the launcher adds) and fails unless the chief's
# lines (its "[chief:0] " prefix removed) equal EXPECTED, the workers and the
# parameter server print nothing, and every task ended on its own (the
# launcher stopped none).
execute_process(COMMAND ${LAUNCHER} --workers 2 --ps 1 --timeout-seconds 100 -- ${PROGRAM}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 110)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "troupe-launch exited with ${rc}:\n${out}\n${err}")
endif()
file(READ ${EXPECTED} expected)
# Brackets would change how CMake splits the list: stand-ins while splitting.
string(REPLACE "[" "<lb>" escaped "${out}")
string(REPLACE "]" "<rb>" escaped "${escaped}")
string(REPLACE "\n" ";" lines "${escaped}")
set(actual "")
foreach(line IN LISTS lines)
  if(line MATCHES "^<lb>chief:0<rb> ?(.*)$")
    string(APPEND actual "${CMAKE_MATCH_1}\n")
  elseif(line MATCHES "^<lb>(worker|ps):")
    message(FATAL_ERROR "a worker or ps task printed (only the chief should):\n${out}")
  endif()
endforeach()
string(REPLACE "<lb>" "[" actual "${actual}")
string(REPLACE "<rb>" "]" actual "${actual}")
if(NOT actual STREQUAL expected)
  message(FATAL_ERROR "the chief's output differs from ${EXPECTED}:\n--- expected\n${expected}\n--- actual\n${actual}\n--- stderr\n${err}")
endif()
if(err MATCHES "stopping the tasks still running|was killed by troupe-launch")
  message(FATAL_ERROR "the launcher had to stop tasks that should have ended with the chief:\n${err}")
endif()
