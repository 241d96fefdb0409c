# The main job as 2 workers x 1 replica under troupe-launch, each worker with
# its own --checkpoint folder (nothing shared, as on two machines):
# 1. a run stopped after epoch 1 leaves a checkpoint in worker 0's folder
#    only (only the chief writes it);
# 2. resumed, with worker 1's folder still empty, both workers resume after
#    epoch 1 from the same state and end with the weights of an uninterrupted
#    2-epoch run (worker 1 gets the chief's state; it must not start afresh).
# Inputs: PROGRAM, LAUNCHER, WRAPPER (run_with_task_args.cmake), WORK (scratch).
set(common --replicas 1 --epochs 2 --limit 1024 --batch 128 --quiet --seed 3)

function(launch out_var)
  execute_process(COMMAND ${LAUNCHER} --workers 2 --timeout-seconds 100 -- ${ARGN}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 110)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "troupe-launch ${ARGN} exited with ${rc}:\n${out}\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# Launches PROGRAM with `common`, then ARGN, each worker with --checkpoint
# ${WORK}/ckpt/<its index>.
function(launch_with_own_checkpoints out_var)
  # launch() hands its arguments on as one list: "\;" keeps each -D list whole.
  string(REPLACE ";" "\\;" args "${common};${ARGN}")
  launch(out ${CMAKE_COMMAND} -DPROGRAM=${PROGRAM} "-DARGS=${args}" "-DARGS_worker_0=--checkpoint\\;${WORK}/ckpt/0"
         "-DARGS_worker_1=--checkpoint\\;${WORK}/ckpt/1" -P ${WRAPPER})
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

# Sets <prefix>_0 and <prefix>_1 to each worker's value of `pattern`'s group.
function(per_worker text pattern prefix)
  foreach(worker 0 1)
    string(REGEX MATCH "\\[worker:${worker}\\] ${pattern}" found "${text}")
    if(NOT found)
      message(FATAL_ERROR "worker:${worker} printed no \"${pattern}\":\n${text}")
    endif()
    set(${prefix}_${worker} "${CMAKE_MATCH_1}" PARENT_SCOPE)
  endforeach()
endfunction()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/ckpt/0 ${WORK}/ckpt/1)

launch(whole ${PROGRAM} ${common} --out ${WORK}/whole)
per_worker("${whole}" "final weights fingerprint ([0-9a-f]+)" whole)
if(NOT whole_0 STREQUAL whole_1)
  message(FATAL_ERROR "the uninterrupted run's workers disagree (${whole_0} vs ${whole_1}):\n${whole}")
endif()

launch_with_own_checkpoints(first --stop-after 1 --out ${WORK}/first)
if(NOT EXISTS ${WORK}/ckpt/0/model.ckpt)
  message(FATAL_ERROR "the chief wrote no checkpoint in its folder:\n${first}")
endif()
file(GLOB worker1_files ${WORK}/ckpt/1/*)
if(worker1_files)
  message(FATAL_ERROR "worker 1 wrote into its checkpoint folder (only the chief may): ${worker1_files}")
endif()

launch_with_own_checkpoints(resumed --out ${WORK}/resumed)
per_worker("${resumed}" "resumed from [^\n]* after epoch ([0-9]+), state fingerprint [0-9a-f]+" epoch)
per_worker("${resumed}" "resumed from [^\n]* after epoch [0-9]+, state fingerprint ([0-9a-f]+)" state)
per_worker("${resumed}" "final weights fingerprint ([0-9a-f]+)" final)
foreach(worker 0 1)
  if(NOT epoch_${worker} STREQUAL "1")
    message(FATAL_ERROR "worker:${worker} resumed after epoch ${epoch_${worker}}, not 1:\n${resumed}")
  endif()
  if(NOT final_${worker} STREQUAL whole_0)
    message(FATAL_ERROR "worker:${worker} of the resumed run ended with weights ${final_${worker}}, "
                        "not the uninterrupted run's ${whole_0}:\n${resumed}")
  endif()
endforeach()
if(NOT state_0 STREQUAL state_1)
  message(FATAL_ERROR "the workers resumed from different states (${state_0} vs ${state_1}):\n${resumed}")
endif()
file(REMOVE_RECURSE ${WORK})
