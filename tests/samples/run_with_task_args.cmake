# Runs PROGRAM with ARGS, then the arguments of this task: ARGS_worker_0,
# ARGS_worker_1, ... (troupe-launch sets TROUPE_TASK_NAME), so that a test can
# start one worker with other flags than the others. Fails when PROGRAM does.
string(REPLACE ":" "_" task "$ENV{TROUPE_TASK_NAME}")
if(task STREQUAL "")
  message(FATAL_ERROR "TROUPE_TASK_NAME is not set: run this script under troupe-launch")
endif()
execute_process(COMMAND ${PROGRAM} ${ARGS} ${ARGS_${task}} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}")
endif()
