# The training job as 2 workers under troupe-launch where worker 1 was started
# with another --batch: both workers stop before training, each naming the
# flag and both values (check_same_across_workers), and the launcher fails.
# Inputs: PROGRAM, LAUNCHER, WRAPPER (run_with_task_args.cmake), WORK.
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${LAUNCHER} --workers 2 --timeout-seconds 100 --
                        ${CMAKE_COMMAND} -DPROGRAM=${PROGRAM}
                        "-DARGS=--replicas;1;--epochs;1;--limit;512;--quiet;--out;${WORK}/out"
                        "-DARGS_worker_0=--batch;128" "-DARGS_worker_1=--batch;64" -P ${WRAPPER}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 110)
if(rc EQUAL 0)
  message(FATAL_ERROR "troupe-launch exited 0 although the workers' --batch differ:\n${out}\n${err}")
endif()
set(named "check_same_across_workers: the workers differ: \"--batch\" is 128 on worker:0, but 64 on worker:1")
foreach(worker 0 1)
  string(FIND "${err}" "[worker:${worker}] train_fashion_mnist: ${named}" found)
  if(found EQUAL -1)
    message(FATAL_ERROR "worker:${worker} did not fail naming --batch and both values:\n${out}\n${err}")
  endif()
endforeach()
if(out MATCHES "epoch 1/1")
  message(FATAL_ERROR "a worker trained although the workers' --batch differ:\n${out}")
endif()
file(REMOVE_RECURSE ${WORK})
