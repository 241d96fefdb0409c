# Runs PROGRAM as 2 workers of a real cluster under LAUNCHER ("real") and as
# a simulated cluster in one process ("simulate"): every worker's line must be
# the same in both (the same bits), and the seeds with faults must pass.
execute_process(COMMAND ${LAUNCHER} --workers 2 --timeout-seconds 100 -- ${PROGRAM} real
                OUTPUT_VARIABLE real_out ERROR_VARIABLE real_err RESULT_VARIABLE real_rc TIMEOUT 110)
if(NOT real_rc EQUAL 0)
  message(FATAL_ERROR "the real cluster exited with ${real_rc}:\n${real_out}\n${real_err}")
endif()
execute_process(COMMAND ${PROGRAM} simulate --workers 2 --seeds 1-${SEEDS}
                OUTPUT_VARIABLE sim_out ERROR_VARIABLE sim_err RESULT_VARIABLE sim_rc TIMEOUT 110)
if(NOT sim_rc EQUAL 0)
  message(FATAL_ERROR "the simulation exited with ${sim_rc}:\n${sim_out}\n${sim_err}")
endif()
foreach(worker 0 1)
  foreach(run real sim)
    set(${run}_line "")
    string(REPLACE "\n" ";" lines "${${run}_out}")
    foreach(line IN LISTS lines)
      if(line MATCHES "^\\[worker:${worker}\\] (worker:${worker} steps .*)$")
        set(${run}_line "${CMAKE_MATCH_1}")
      endif()
    endforeach()
  endforeach()
  if(real_line STREQUAL "" OR NOT real_line STREQUAL sim_line)
    message(FATAL_ERROR "worker:${worker} differs:\n  real:      ${real_line}\n  simulated: ${sim_line}\n"
                        "--- real\n${real_out}\n--- simulated\n${sim_out}")
  endif()
endforeach()
if(NOT sim_out MATCHES "faults: seeds 1-${SEEDS}: all ${SEEDS} passed")
  message(FATAL_ERROR "the seeds with faults did not all pass:\n${sim_out}")
endif()
message(STATUS "${real_out}${sim_out}")
